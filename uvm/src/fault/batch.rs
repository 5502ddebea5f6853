//! A fetched batch of replayable faults and the decisions UVM takes on it
//! (`uvm_gpu_replayable_faults.c`, `uvm_gpu_replayable_faults.h`, 535.261.03): coalescing of
//! duplicates at fetch time, sorting by instance and then by (va_space, address, access type),
//! grouping by 2 MiB va_block, the flush mode of the BATCH_FLUSH replay policy, the prefetch
//! fault throttle, and the per-service limits.

use alloc::vec::Vec;
use core::ops::Range;

use nvgpu::hw::vm::PrfFilter;

use super::buffer::FlushMode;
use super::entry::{AccessTypeMask, FaultAccess, FaultEntry, InstancePtr};
use crate::page_mask::VA_BLOCK_SIZE;

/// Faults fetched per batch (`UVM_PERF_FAULT_BATCH_COUNT_DEFAULT`), capped at the buffer size.
pub const DEFAULT_BATCH_SIZE: usize = 256;
/// The smallest batch (`UVM_PERF_FAULT_BATCH_COUNT_MIN`).
pub const MIN_BATCH_SIZE: usize = 1;
/// Batches one bottom half services at most (`UVM_PERF_FAULT_MAX_BATCHES_PER_SERVICE_DEFAULT`).
pub const DEFAULT_MAX_BATCHES_PER_SERVICE: u32 = 20;
/// Batches with throttled faults one bottom half allows (`..._MAX_THROTTLE_PER_SERVICE_DEFAULT`).
pub const DEFAULT_MAX_THROTTLE_PER_SERVICE: u32 = 5;
/// Percent of duplicates above which BATCH_FLUSH re-reads PUT (`..._REPLAY_UPDATE_PUT_RATIO_DEFAULT`).
pub const DEFAULT_REPLAY_UPDATE_PUT_RATIO: u32 = 50;
/// How long prefetch faults stay off once disabled (`..._REENABLE_PREFETCH_FAULTS_LAPSE_MSEC_DEFAULT`).
pub const DEFAULT_REENABLE_PREFETCH_FAULTS_LAPSE_MS: u64 = 1000;
/// Subcontexts (VEIDs) a graphics engine may fault from (`MAX_SUBCONTEXTS`).
pub const MAX_SUBCONTEXTS: u16 = 64;

/// When replays are issued (`uvm_perf_fault_replay_policy_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ReplayPolicy {
    /// After each va_block is serviced.
    Block = 0,
    /// After each batch.
    Batch = 1,
    /// After each batch, flushing the buffer first (UVM's default).
    #[default]
    BatchFlush = 2,
    /// Once, after every batch of the bottom half.
    Once = 3,
}

impl ReplayPolicy {
    /// The policy for the `uvm_perf_fault_replay_policy` number.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(ReplayPolicy::Block),
            1 => Some(ReplayPolicy::Batch),
            2 => Some(ReplayPolicy::BatchFlush),
            3 => Some(ReplayPolicy::Once),
            _ => None,
        }
    }
}

/// The servicing parameters, UVM's module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceConfig {
    pub batch_size: usize,
    pub replay_policy: ReplayPolicy,
    pub replay_update_put_ratio: u32,
    pub max_batches_per_service: u32,
    pub max_throttle_per_service: u32,
    /// Coalesce duplicates at fetch time (`uvm_perf_fault_coalesce`).
    pub coalesce: bool,
    pub reenable_prefetch_faults_lapse_ms: u64,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            batch_size: DEFAULT_BATCH_SIZE,
            replay_policy: ReplayPolicy::BatchFlush,
            replay_update_put_ratio: DEFAULT_REPLAY_UPDATE_PUT_RATIO,
            max_batches_per_service: DEFAULT_MAX_BATCHES_PER_SERVICE,
            max_throttle_per_service: DEFAULT_MAX_THROTTLE_PER_SERVICE,
            coalesce: true,
            reenable_prefetch_faults_lapse_ms: DEFAULT_REENABLE_PREFETCH_FAULTS_LAPSE_MS,
        }
    }
}

impl ServiceConfig {
    /// The defaults with the batch capped at a buffer of `max_faults` entries.
    pub fn for_buffer(max_faults: u32) -> Self {
        let mut config = ServiceConfig::default();
        config.batch_size = config.batch_size.min(max_faults as usize).max(MIN_BATCH_SIZE);
        config
    }
}

/// The subcontext (VEID) of a fault: only graphics engines have several; for them the engine id
/// is `graphics_engine_base + veid` (`NV_PFAULT_MMU_ENG_ID_GRAPHICS`: 64 Volta to Ada, 384 on
/// Hopper and Blackwell, `nvgpu::hw::fault::{tu102, gh100}`).
pub const fn ve_id(engine_id: u16, graphics_engine_base: u16) -> u8 {
    if engine_id >= graphics_engine_base && engine_id - graphics_engine_base < MAX_SUBCONTEXTS {
        (engine_id - graphics_engine_base) as u8
    } else {
        0
    }
}

/// One fault of a batch, with what coalescing found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchFault {
    pub entry: FaultEntry,
    pub ve_id: u8,
    /// The uTLB the fault came from (the caller's numbering; UVM's `fault_source.utlb_id`).
    pub utlb_id: u16,
    pub is_fatal: bool,
    /// Merged into another fault (its representative), which gets serviced instead.
    pub filtered: bool,
    /// For a representative: the faults it stands for, itself included.
    pub num_instances: u32,
    /// For a representative: every access kind among them.
    pub access_type_mask: AccessTypeMask,
}

impl BatchFault {
    fn instance_key(&self) -> (InstancePtr, u8) {
        (self.entry.instance, self.ve_id)
    }
}

#[derive(Clone, Copy)]
struct UtlbState {
    num_pending_faults: u32,
    last_fault: usize,
    /// What coalescing compares of `last_fault`.
    last_key: FaultKey,
}

/// What coalescing compares of a fault: its instance and VEID, page and access.
#[derive(Clone, Copy)]
struct FaultKey {
    instance: InstancePtr,
    ve_id: u8,
    va: u64,
    access: FaultAccess,
}

impl FaultKey {
    fn same_instance(&self, other: &FaultKey) -> bool {
        self.instance == other.instance && self.ve_id == other.ve_id
    }
}

/// A fetched batch after coalescing (`uvm_fault_service_batch_context_t`'s fault cache).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultBatch {
    faults: Vec<BatchFault>,
    num_coalesced: usize,
    is_single_instance: bool,
}

impl FaultBatch {
    /// Builds the batch from fetched entries in buffer order, coalescing (when `coalesce`) each
    /// non-fatal fault with the same {instance, VEID, 4 KiB page} as the last fault of its uTLB,
    /// or as the batch's last fault when it is no more intrusive than that one. The most
    /// intrusive access becomes the representative; the others are flagged `filtered` and their
    /// kinds OR'd into its `access_type_mask`.
    ///
    /// Unlike UVM, when a uTLB's new fault supersedes a representative that is also the batch's
    /// last fault, the batch's last fault follows it, so later faults never merge into a
    /// filtered one.
    pub fn coalesce(
        entries: &[FaultEntry],
        coalesce: bool,
        graphics_engine_base: u16,
        utlb_of: impl Fn(&FaultEntry) -> u16,
    ) -> FaultBatch {
        let mut faults: Vec<BatchFault> = Vec::with_capacity(entries.len());
        // uTLBs in the order first seen (a batch sees few of them).
        let mut utlbs: Vec<(u16, UtlbState)> = Vec::new();
        // The batch's last fault: its index and what coalescing compares of it.
        let mut last: Option<(usize, FaultKey)> = None;
        let mut num_coalesced = 0;
        let mut is_single_instance = true;

        for entry in entries {
            let utlb_id = utlb_of(entry);
            let is_fatal = entry.is_fatal();
            let key = FaultKey {
                instance: entry.instance,
                ve_id: ve_id(entry.engine_id, graphics_engine_base),
                va: entry.va,
                access: entry.access,
            };
            let index = faults.len();
            faults.push(BatchFault {
                entry: *entry,
                ve_id: key.ve_id,
                utlb_id,
                is_fatal,
                filtered: false,
                num_instances: 1,
                access_type_mask: AccessTypeMask::of(entry.access),
            });
            let u = utlbs.iter().position(|&(id, _)| id == utlb_id).unwrap_or_else(|| {
                // No pending fault yet: `last_key` is not looked at.
                utlbs.push((utlb_id, UtlbState { num_pending_faults: 0, last_fault: 0, last_key: key }));
                utlbs.len() - 1
            });
            let Some((_, utlb)) = utlbs.get_mut(u) else { continue };

            let same_instance = last.is_none_or(|(_, l)| key.same_instance(&l));
            if let (Some((l, lk)), true, false) = (last, coalesce, is_fatal) {
                let tlb_target = (utlb.num_pending_faults > 0)
                    .then_some(utlb.last_fault)
                    .filter(|_| key.same_instance(&utlb.last_key) && key.va == utlb.last_key.va);
                let global_target = (same_instance && key.va == lk.va && key.access <= lk.access).then_some(l);
                if let Some(target) = tlb_target.or(global_target) {
                    let promoted = merge(&mut faults, index, target);
                    if promoted {
                        if tlb_target.is_some() {
                            utlb.last_fault = index;
                            utlb.last_key = key;
                        }
                        if l == target {
                            last = Some((index, key));
                        }
                    }
                    continue;
                }
            }

            is_single_instance &= same_instance;
            utlb.num_pending_faults += 1;
            utlb.last_fault = index;
            utlb.last_key = key;
            last = Some((index, key));
            num_coalesced += 1;
        }
        FaultBatch { faults, num_coalesced, is_single_instance }
    }

    /// Every fetched fault, in buffer order (representatives and filtered ones).
    pub fn faults(&self) -> &[BatchFault] {
        &self.faults
    }

    /// The faults to service: every one not filtered.
    pub fn representatives(&self) -> impl Iterator<Item = (usize, &BatchFault)> {
        self.faults.iter().enumerate().filter(|(_, f)| !f.filtered)
    }

    /// Faults fetched (`num_cached_faults`).
    pub fn num_cached_faults(&self) -> usize {
        self.faults.len()
    }

    /// Faults left after coalescing (`num_coalesced_faults`).
    pub fn num_coalesced_faults(&self) -> usize {
        self.num_coalesced
    }

    /// Faults coalescing removed.
    pub fn num_filtered_faults(&self) -> usize {
        self.faults.len() - self.num_coalesced
    }

    /// Whether every representative names the same instance and VEID.
    pub fn is_single_instance(&self) -> bool {
        self.is_single_instance
    }

    /// Sorts the representatives by (instance, VEID), resolves each distinct pair once with
    /// `va_space_of`, then sorts by (va_space, address, access type most intrusive first).
    /// Faults whose instance resolves to nothing are listed in `unresolved` (fatal for the
    /// caller: no va_space owns them).
    pub fn preprocess<V: Ord + Copy>(
        &self,
        mut va_space_of: impl FnMut(InstancePtr, u8) -> Option<V>,
    ) -> ServiceOrder<V> {
        let mut order = Vec::with_capacity(self.num_coalesced);
        let mut unresolved = Vec::new();
        if self.is_single_instance {
            // One instance (the usual batch): resolved once, already in index order.
            let mut reps = self.representatives();
            if let Some((first, f)) = reps.next() {
                let key = f.instance_key();
                match va_space_of(key.0, key.1) {
                    Some(va_space) => {
                        order.push(ServiceFault { va_space, index: first });
                        order.extend(reps.map(|(index, _)| ServiceFault { va_space, index }));
                    }
                    None => {
                        unresolved.push(first);
                        unresolved.extend(reps.map(|(i, _)| i));
                    }
                }
            }
        } else {
            // Sorted on keys taken out once; the index breaks ties, so the unstable sort orders
            // as a stable one would.
            let mut by_instance: Vec<((InstancePtr, u8), usize)> = Vec::with_capacity(self.num_coalesced);
            by_instance.extend(self.representatives().map(|(i, f)| (f.instance_key(), i)));
            by_instance.sort_unstable();
            let mut cached: Option<((InstancePtr, u8), Option<V>)> = None;
            for (key, i) in by_instance {
                let va_space = match cached {
                    Some((k, v)) if k == key => v,
                    _ => {
                        let v = va_space_of(key.0, key.1);
                        cached = Some((key, v));
                        v
                    }
                };
                match va_space {
                    Some(va_space) => order.push(ServiceFault { va_space, index: i }),
                    None => unresolved.push(i),
                }
            }
        }
        // By va_space, address, most intrusive access first; ties keep the instance order.
        let single_va_space = self.is_single_instance || order.windows(2).all(|w| w[0].va_space == w[1].va_space);
        let pages_only = order.iter().all(|f| self.faults[f.index].entry.va & 0xfff == 0);
        let order: Vec<ServiceFault<V>> = if single_va_space && pages_only && order.len() <= 1 << 9 {
            // One va_space (the usual batch): the rest of the key packed in one word. Fault
            // addresses are 4 KiB pages, so their low 12 bits hold the access (most intrusive
            // first, 3 bits) above the position (9 bits).
            let mut keys: Vec<u64> = order
                .iter()
                .enumerate()
                .map(|(pos, f)| {
                    let e = &self.faults[f.index].entry;
                    let less_intrusive = u64::from(FaultAccess::AtomicStrong as u8 - e.access as u8);
                    (e.va & !0xfff) | (less_intrusive << 9) | pos as u64
                })
                .collect();
            // Built in position order: a stable sort on the bits above the position orders as
            // the whole key would.
            radix_sort_above(&mut keys, 9);
            let mut sorted = Vec::with_capacity(keys.len());
            sorted.extend(keys.iter().filter_map(|&k| order.get((k & 0x1ff) as usize).copied()));
            sorted
        } else {
            let mut keyed: Vec<(OrderKey<V>, ServiceFault<V>)> = order
                .iter()
                .enumerate()
                .map(|(pos, f)| {
                    let e = &self.faults[f.index].entry;
                    ((f.va_space, e.va, core::cmp::Reverse(e.access), pos), *f)
                })
                .collect();
            keyed.sort_unstable_by_key(|&(key, _)| key);
            keyed.into_iter().map(|(_, f)| f).collect()
        };

        // Duplicates as UVM counts them while servicing: the instances a representative stands
        // for beyond itself, and every instance of a representative at the page of the one
        // before it (same page from another uTLB or instance).
        let mut num_duplicates = 0;
        let mut previous: Option<(V, u64)> = None;
        for f in &order {
            let fault = &self.faults[f.index];
            let page = (f.va_space, fault.entry.va);
            num_duplicates += if previous == Some(page) { fault.num_instances } else { fault.num_instances - 1 };
            previous = Some(page);
        }
        ServiceOrder { order, unresolved, num_duplicates }
    }
}

/// Sorts `keys` stably by their bits from `from_bit` up: least significant byte first, over the
/// bytes that differ among them (a batch's packed keys differ in a few bytes of page address).
/// Counts are u16: more than 65,535 keys go to the library's stable sort.
fn radix_sort_above(keys: &mut Vec<u64>, from_bit: u32) {
    if keys.len() > usize::from(u16::MAX) {
        keys.sort_by_key(|&k| k.checked_shr(from_bit).unwrap_or(0));
        return;
    }
    if keys.len() < 2 || from_bit >= 64 {
        return;
    }
    let (all, any) = keys.iter().fold((u64::MAX, 0u64), |(a, o), &k| (a & k, o | k));
    let varying = (all ^ any) >> from_bit;
    let mut from = keys.clone();
    let mut to = keys.clone();
    let mut digit = 0;
    while digit < 64 - from_bit {
        if (varying >> digit) & 0xff == 0 {
            digit += 8;
            continue;
        }
        // Digits start at a varying bit, so fewer passes cover the bits that differ.
        digit += (varying >> digit).trailing_zeros();
        let shift = from_bit + digit;
        let mut counts = [0u16; 256];
        for &k in &from {
            counts[((k >> shift) & 0xff) as usize] += 1;
        }
        let mut at = 0u16;
        for c in counts.iter_mut() {
            let n = *c;
            *c = at;
            at += n;
        }
        for &k in &from {
            let d = ((k >> shift) & 0xff) as usize;
            if let Some(slot) = to.get_mut(usize::from(counts[d])) {
                *slot = k;
            }
            counts[d] += 1;
        }
        core::mem::swap(&mut from, &mut to);
        digit += 8;
    }
    *keys = from;
}

/// A representative's place in the service order: va_space, address, the access (most
/// intrusive first), then its place in the instance order.
type OrderKey<V> = (V, u64, core::cmp::Reverse<FaultAccess>, usize);

/// Merges fault `index` into `target`; returns whether `index` became the representative.
fn merge(faults: &mut [BatchFault], index: usize, target: usize) -> bool {
    let current_access = faults[index].entry.access;
    let (access, mask, instances) = {
        let t = &mut faults[target];
        t.num_instances += 1;
        t.access_type_mask.set(current_access);
        (t.entry.access, t.access_type_mask, t.num_instances)
    };
    if current_access > access {
        faults[index].access_type_mask = mask;
        faults[index].num_instances = instances;
        faults[target].filtered = true;
        true
    } else {
        faults[index].filtered = true;
        false
    }
}

/// One representative in service order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceFault<V> {
    pub va_space: V,
    /// Index into [`FaultBatch::faults`].
    pub index: usize,
}

/// The representatives of a batch in the order UVM services them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceOrder<V> {
    pub order: Vec<ServiceFault<V>>,
    /// Indices of faults whose instance has no va_space.
    pub unresolved: Vec<usize>,
    /// Duplicates counted as UVM's servicing counts them (`num_duplicate_faults`).
    pub num_duplicates: u32,
}

/// Consecutive faults of [`ServiceOrder::order`] in one va_space and one 2 MiB va_block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockFaults<V> {
    pub va_space: V,
    /// The 2 MiB-aligned start of the block.
    pub block_start: u64,
    /// Positions in [`ServiceOrder::order`].
    pub range: Range<usize>,
}

impl<V: Ord + Copy> ServiceOrder<V> {
    /// Splits the order into runs of one va_space and one 2 MiB va_block.
    pub fn blocks(&self, batch: &FaultBatch) -> Vec<BlockFaults<V>> {
        let mut blocks: Vec<BlockFaults<V>> = Vec::new();
        for (pos, f) in self.order.iter().enumerate() {
            let block_start = batch.faults[f.index].entry.va & !(VA_BLOCK_SIZE - 1);
            match blocks.last_mut() {
                Some(b) if b.va_space == f.va_space && b.block_start == block_start => b.range.end = pos + 1,
                _ => blocks.push(BlockFaults { va_space: f.va_space, block_start, range: pos..pos + 1 }),
            }
        }
        blocks
    }
}

/// The flush before a BATCH_FLUSH replay: re-read PUT when duplicates exceed `ratio` percent
/// of the batch (`num_duplicate_faults * 100 > num_cached_faults * ratio`).
pub fn batch_flush_mode(num_duplicates: u32, num_cached: usize, ratio: u32) -> FlushMode {
    if u64::from(num_duplicates) * 100 > num_cached as u64 * u64::from(ratio) {
        FlushMode::UpdatePut
    } else {
        FlushMode::CachedPut
    }
}

/// Whether invalid prefetch faults are more than two thirds of the batch size.
pub fn too_many_invalid_prefetch_faults(num_invalid_prefetch: u32, max_batch_size: usize) -> bool {
    u64::from(num_invalid_prefetch) * 3 > max_batch_size as u64 * 2
}

/// Turns prefetch faults off when a batch is mostly invalid prefetches, and back on after a
/// lapse (`enable_disable_prefetch_faults`). The answers are `PAGE_FAULT_CTRL_PRF_FILTER`
/// values to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefetchFaultControl {
    enabled: bool,
    disabled_at_ms: u64,
    lapse_ms: u64,
}

impl PrefetchFaultControl {
    /// Prefetch faults start enabled; a `lapse_ms` of 0 never disables them.
    pub const fn new(lapse_ms: u64) -> Self {
        PrefetchFaultControl { enabled: true, disabled_at_ms: 0, lapse_ms }
    }

    pub const fn enabled(&self) -> bool {
        self.enabled
    }

    /// After a batch: the filter to program, if it changes.
    pub fn update(&mut self, num_invalid_prefetch: u32, max_batch_size: usize, now_ms: u64) -> Option<PrfFilter> {
        if self.enabled {
            if self.lapse_ms > 0 && too_many_invalid_prefetch_faults(num_invalid_prefetch, max_batch_size) {
                self.enabled = false;
                self.disabled_at_ms = now_ms;
                return Some(PrfFilter::SendNone);
            }
        } else if now_ms.saturating_sub(self.disabled_at_ms) > self.lapse_ms {
            self.enabled = true;
            return Some(PrfFilter::SendAll);
        }
        None
    }
}

/// Progress of one bottom half against the service limits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServiceProgress {
    pub batches: u32,
    pub throttled_batches: u32,
    pub replays: u32,
}

impl ServiceProgress {
    /// Whether another batch may be fetched.
    pub fn may_fetch_another(&self, config: &ServiceConfig) -> bool {
        self.throttled_batches < config.max_throttle_per_service && self.batches < config.max_batches_per_service
    }

    /// Records a serviced batch.
    pub fn finish_batch(&mut self, had_throttled_faults: bool, replays: u32) {
        self.batches += 1;
        self.replays += replays;
        if had_throttled_faults {
            self.throttled_batches += 1;
        }
    }

    /// Whether a final replay is due: always under ONCE, and whenever none was issued (faults
    /// that never reached the buffer would otherwise stay stalled).
    pub fn needs_final_replay(&self, policy: ReplayPolicy) -> bool {
        policy == ReplayPolicy::Once || self.replays == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::entry::tests::packet;
    use crate::fault::entry::{Aperture, FaultAccess, FaultEntry};
    use nvgpu::hw::fault::{FaultAccessType, FaultType, NVC369_BUF_ENTRY_ENGINE_ID, NVC369_BUF_ENTRY_GPC_ID};

    const GRAPHICS: u16 = 64;

    fn fault(instance: u64, va: u64, access: FaultAccessType, utlb: u8) -> FaultEntry {
        fault_typed(instance, va, access, utlb, FaultType::Pte)
    }

    fn fault_typed(instance: u64, va: u64, access: FaultAccessType, utlb: u8, ty: FaultType) -> FaultEntry {
        let mut e = packet(instance, va, access, ty);
        NVC369_BUF_ENTRY_GPC_ID.set(&mut e, u64::from(utlb));
        NVC369_BUF_ENTRY_ENGINE_ID.set(&mut e, u64::from(GRAPHICS));
        FaultEntry::decode(&e).unwrap()
    }

    fn by_gpc(e: &FaultEntry) -> u16 {
        u16::from(e.gpc)
    }

    use FaultAccessType::{VirtAtomicStrong as ATOMIC, VirtPrefetch as PREFETCH, VirtRead as READ, VirtWrite as WRITE};

    #[test]
    fn defaults_are_uvms() {
        let c = ServiceConfig::default();
        assert_eq!(
            (
                c.batch_size,
                c.replay_policy,
                c.replay_update_put_ratio,
                c.max_batches_per_service,
                c.max_throttle_per_service
            ),
            (256, ReplayPolicy::BatchFlush, 50, 20, 5)
        );
        assert!(c.coalesce);
        assert_eq!(c.reenable_prefetch_faults_lapse_ms, 1000);
        assert_eq!(ServiceConfig::for_buffer(64).batch_size, 64);
        assert_eq!(ServiceConfig::for_buffer(8192).batch_size, 256);
        assert_eq!(ReplayPolicy::from_raw(0), Some(ReplayPolicy::Block));
        assert_eq!(ReplayPolicy::from_raw(3), Some(ReplayPolicy::Once));
        assert_eq!(ReplayPolicy::from_raw(4), None);
        assert_eq!(ReplayPolicy::BatchFlush as u32, 2);
    }

    #[test]
    fn ve_ids_come_from_graphics_engine_ids_only() {
        assert_eq!(ve_id(64 + 5, 64), 5);
        assert_eq!(ve_id(384 + 63, 384), 63);
        assert_eq!(ve_id(15, 64), 0);
        assert_eq!(ve_id(64 + 64, 64), 0);
    }

    #[test]
    fn read_then_write_of_a_page_become_one_write_representative() {
        let entries = [fault(0x1000, 0x20_0000, READ, 0), fault(0x1000, 0x20_0000, WRITE, 0)];
        let batch = FaultBatch::coalesce(&entries, true, GRAPHICS, by_gpc);
        assert_eq!((batch.num_cached_faults(), batch.num_coalesced_faults(), batch.num_filtered_faults()), (2, 1, 1));
        let reps: Vec<_> = batch.representatives().collect();
        assert_eq!(reps.len(), 1);
        let (i, rep) = reps[0];
        assert_eq!(i, 1);
        assert_eq!(rep.entry.access, FaultAccess::Write);
        assert_eq!(rep.num_instances, 2);
        assert_eq!(rep.access_type_mask, [FaultAccess::Read, FaultAccess::Write].into_iter().collect());
        assert!(batch.faults()[0].filtered);
    }

    #[test]
    fn coalescing_across_utlbs_only_keeps_the_more_intrusive_first() {
        // Same page from another uTLB: merged into the batch's last fault only if no more
        // intrusive.
        let entries = [
            fault(0x1000, 0x20_0000, WRITE, 0),
            fault(0x1000, 0x20_0000, READ, 1),
            fault(0x1000, 0x20_0000, ATOMIC, 2),
        ];
        let batch = FaultBatch::coalesce(&entries, true, GRAPHICS, by_gpc);
        assert_eq!(batch.num_coalesced_faults(), 2);
        let f = batch.faults();
        assert!(!f[0].filtered && f[1].filtered && !f[2].filtered);
        assert_eq!(f[0].num_instances, 2);
        assert_eq!(f[0].access_type_mask, [FaultAccess::Read, FaultAccess::Write].into_iter().collect());
        assert_eq!((f[2].num_instances, f[2].access_type_mask), (1, AccessTypeMask::of(FaultAccess::AtomicStrong)));
    }

    #[test]
    fn a_utlbs_last_fault_merges_even_after_other_faults() {
        let entries = [
            fault(0x1000, 0x20_0000, READ, 0),
            fault(0x1000, 0x40_0000, READ, 1),
            fault(0x1000, 0x20_0000, PREFETCH, 0),
            fault(0x1000, 0x20_0000, ATOMIC, 0),
        ];
        let batch = FaultBatch::coalesce(&entries, true, GRAPHICS, by_gpc);
        assert_eq!(batch.num_coalesced_faults(), 2);
        let f = batch.faults();
        assert!(f[0].filtered && !f[1].filtered && f[2].filtered && !f[3].filtered);
        assert_eq!(f[3].num_instances, 3);
        assert_eq!(
            f[3].access_type_mask,
            [FaultAccess::Prefetch, FaultAccess::Read, FaultAccess::AtomicStrong].into_iter().collect()
        );
    }

    #[test]
    fn different_instances_veids_or_pages_and_fatal_faults_do_not_merge() {
        let mut other_veid = fault(0x1000, 0x20_0000, READ, 0);
        other_veid.engine_id = GRAPHICS + 1;
        let entries = [
            fault(0x1000, 0x20_0000, READ, 0),
            fault(0x2000, 0x20_0000, READ, 0),
            other_veid,
            fault(0x1000, 0x20_1000, READ, 0),
            fault_typed(0x1000, 0x20_1000, READ, 0, FaultType::PrivViolation),
        ];
        let batch = FaultBatch::coalesce(&entries, true, GRAPHICS, by_gpc);
        assert_eq!(batch.num_coalesced_faults(), 5);
        assert!(!batch.is_single_instance());
        assert!(batch.faults()[4].is_fatal);
        assert_eq!(batch.faults()[2].ve_id, 1);
        // Coalescing off: nothing merges.
        let same = [fault(0x1000, 0x20_0000, READ, 0), fault(0x1000, 0x20_0000, READ, 0)];
        assert_eq!(FaultBatch::coalesce(&same, false, GRAPHICS, by_gpc).num_coalesced_faults(), 2);
        let merged = FaultBatch::coalesce(&same, true, GRAPHICS, by_gpc);
        assert_eq!(merged.num_coalesced_faults(), 1);
        assert!(merged.is_single_instance());
    }

    #[test]
    fn the_radix_sort_orders_as_the_library_stable_sort_does() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let cases = [
            (0, u64::MAX, 9),
            (1, u64::MAX, 9),
            (2, 0x600, 9),
            (256, u64::MAX, 0),
            (256, u64::MAX, 9),
            (256, 0x7f_f1ff, 9),
            (300, 0xff_ffff, 13),
            (300, 0xff, 0),
            (512, 0, 9),
            (100, u64::MAX, 63),
            (100, u64::MAX, 64),
        ];
        for (n, mask, from_bit) in cases {
            let mut keys: Vec<u64> = (0..n).map(|_| next() & mask).collect();
            let mut want = keys.clone();
            want.sort_by_key(|&k| k.checked_shr(from_bit).unwrap_or(0));
            radix_sort_above(&mut keys, from_bit);
            assert_eq!(keys, want, "{n} keys under {mask:#x} from bit {from_bit}");
        }
    }

    #[test]
    fn sorting_resolves_each_instance_once_then_orders_by_va_space_address_and_access() {
        let entries = [
            fault(0x3000, 0x40_0000, READ, 0),
            fault(0x1000, 0x60_0000, READ, 1),
            fault(0x2000, 0x40_0000, ATOMIC, 2),
            fault(0x1000, 0x20_0000, WRITE, 3),
            fault(0x3000, 0x40_0000, WRITE, 4),
            fault(0x9000, 0x40_0000, WRITE, 5),
        ];
        let batch = FaultBatch::coalesce(&entries, true, GRAPHICS, by_gpc);
        // 0x3000's WRITE at 0x40_0000 (uTLB 4) is more intrusive than its READ (uTLB 0): no merge.
        assert_eq!(batch.num_coalesced_faults(), 6);
        let mut lookups = Vec::new();
        let order = batch.preprocess(|inst, ve| {
            lookups.push((inst.address, ve));
            match inst.address {
                0x1000 => Some(20u32),
                0x2000 | 0x3000 => Some(10u32),
                _ => None,
            }
        });
        assert_eq!(lookups, [(0x1000, 0), (0x2000, 0), (0x3000, 0), (0x9000, 0)]);
        let got: Vec<_> = order.order.iter().map(|f| (f.va_space, f.index)).collect();
        // va_space 10: 0x40_0000 ATOMIC (2), WRITE (4), READ (0); va_space 20: 0x20_0000 (3), 0x60_0000 (1).
        assert_eq!(got, [(10, 2), (10, 4), (10, 0), (20, 3), (20, 1)]);
        assert_eq!(order.unresolved, [5]);
        // Two more faults at 0x40_0000 of va_space 10 after the first: 2 duplicates.
        assert_eq!(order.num_duplicates, 2);
        assert_eq!(batch.faults()[0].entry.instance.aperture, Aperture::VidMem);
    }

    #[test]
    fn one_va_space_orders_by_address_then_most_intrusive_access_then_arrival() {
        // Uncoalesced, one instance: the packed-key path; the reference is a stable sort.
        let accesses = [READ, WRITE, ATOMIC, READ, WRITE];
        let entries: Vec<FaultEntry> = (0..200u64)
            .map(|i| fault(0x1000, ((i * 37) % 23) * 0x1000 + 0x40_0000, accesses[(i % 5) as usize], (i % 7) as u8))
            .collect();
        let batch = FaultBatch::coalesce(&entries, false, GRAPHICS, by_gpc);
        let order = batch.preprocess(|_, _| Some(1u8));
        let mut reference: Vec<usize> = batch.representatives().map(|(i, _)| i).collect();
        reference.sort_by_key(|&i| {
            let e = &batch.faults()[i].entry;
            (e.va, core::cmp::Reverse(e.access))
        });
        let got: Vec<usize> = order.order.iter().map(|f| f.index).collect();
        assert_eq!(got, reference);
    }

    #[test]
    fn duplicates_count_coalesced_instances_too() {
        let entries = [
            fault(0x1000, 0x20_0000, READ, 0),
            fault(0x1000, 0x20_0000, READ, 0),
            fault(0x1000, 0x20_0000, READ, 0),
            fault(0x1000, 0x30_0000, READ, 0),
        ];
        let batch = FaultBatch::coalesce(&entries, true, GRAPHICS, by_gpc);
        let order = batch.preprocess(|_, _| Some(()));
        assert_eq!(order.num_duplicates, 2);
        // 2 * 100 > 4 * 50 is false: CACHED_PUT; one more duplicate tips it.
        assert_eq!(batch_flush_mode(order.num_duplicates, batch.num_cached_faults(), 50), FlushMode::CachedPut);
        assert_eq!(batch_flush_mode(3, 4, 50), FlushMode::UpdatePut);
        assert_eq!(batch_flush_mode(0, 0, 50), FlushMode::CachedPut);
        assert_eq!(batch_flush_mode(129, 256, 50), FlushMode::UpdatePut);
        assert_eq!(batch_flush_mode(128, 256, 50), FlushMode::CachedPut);
    }

    #[test]
    fn blocks_split_at_2mib_boundaries_and_va_spaces() {
        let entries = [
            fault(0x1000, 0x1f_f000, READ, 0),
            fault(0x1000, 0x20_0000, READ, 1),
            fault(0x1000, 0x3f_f000, READ, 2),
            fault(0x1000, 0x40_0000, READ, 3),
            fault(0x2000, 0x20_1000, READ, 4),
        ];
        let batch = FaultBatch::coalesce(&entries, true, GRAPHICS, by_gpc);
        let order = batch.preprocess(|inst, _| Some(inst.address));
        let blocks = order.blocks(&batch);
        let got: Vec<_> = blocks.iter().map(|b| (b.va_space, b.block_start, b.range.clone())).collect();
        assert_eq!(
            got,
            [
                (0x1000, 0x00_0000, 0..1),
                (0x1000, 0x20_0000, 1..3),
                (0x1000, 0x40_0000, 3..4),
                (0x2000, 0x20_0000, 4..5),
            ]
        );
    }

    #[test]
    fn prefetch_faults_turn_off_above_two_thirds_and_back_on_after_the_lapse() {
        assert!(!too_many_invalid_prefetch_faults(170, 256));
        assert!(too_many_invalid_prefetch_faults(171, 256));
        let mut c = PrefetchFaultControl::new(1000);
        assert_eq!(c.update(170, 256, 0), None);
        assert_eq!(c.update(171, 256, 5), Some(PrfFilter::SendNone));
        assert!(!c.enabled());
        assert_eq!(c.update(0, 256, 1005), None);
        assert_eq!(c.update(0, 256, 1006), Some(PrfFilter::SendAll));
        assert!(c.enabled());
        let mut never = PrefetchFaultControl::new(0);
        assert_eq!(never.update(256, 256, 0), None);
    }

    #[test]
    fn service_limits_stop_at_20_batches_or_5_throttled() {
        let config = ServiceConfig::default();
        let mut p = ServiceProgress::default();
        assert!(p.needs_final_replay(ReplayPolicy::BatchFlush));
        for _ in 0..19 {
            p.finish_batch(false, 1);
        }
        assert!(p.may_fetch_another(&config));
        p.finish_batch(false, 1);
        assert!(!p.may_fetch_another(&config));
        assert!(!p.needs_final_replay(ReplayPolicy::BatchFlush));
        assert!(p.needs_final_replay(ReplayPolicy::Once));

        let mut t = ServiceProgress::default();
        for _ in 0..4 {
            t.finish_batch(true, 0);
        }
        assert!(t.may_fetch_another(&config));
        t.finish_batch(true, 0);
        assert!(!t.may_fetch_another(&config));
        assert!(t.needs_final_replay(ReplayPolicy::Batch));
    }
}
