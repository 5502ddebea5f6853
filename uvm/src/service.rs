//! Servicing: what happens to a va_block when a processor touches pages it cannot use — the
//! service context of `uvm_va_block_service_locked` (`kernel-open/nvidia-uvm/uvm_va_block.c`,
//! 535.261.03) — and the explicit migrations built on it (prefetch to a processor,
//! `uvm_migrate.c`).
//!
//! For each faulted page the block asks where the page should live ([`select_residency`]),
//! adds the prefetch region when every page goes to one place, allocates memory at the
//! destination, copies the pages there on the copy engine in one batch per block (zero-filling
//! pages resident nowhere, as UVM does for first touch), drops the old copies unless the range
//! read-duplicates, revokes the mappings that pointed at them, and maps the faulting processor
//! (and the range's accessed-by processors) with the permission the access needs — promoted to
//! read-write-atomic when no other copy exists. GPU page tables are rewritten per 64 KiB granule
//! the service touched, with the largest PTE the block's state allows
//! ([`VaBlock::compute_pte_layout`]).
//!
//! The machine is behind [`UvmBackend`]: the kernel implements it with the copy engine, the
//! driver's page tables and the CPU page tables; host tests with plain memory.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::vec::Vec;
use core::fmt;

use nvgpu::mm::format::PageSize;

use crate::page_mask::{
    PageIndex, PageMask, PageRegion, BIG_PAGES_PER_BLOCK, BIG_PAGE_SIZE, PAGES_PER_BIG_PAGE, PAGES_PER_BLOCK,
    PAGE_SIZE, VA_BLOCK_SIZE,
};
use crate::perf::thrashing::{
    self, BlockThrashing, HintContext, MigrationCause, ThrashingConfig, ThrashingEvent, ThrashingHint, TransferMode,
};
use crate::policy::{select_residency, ProcessorTopology};
use crate::processor::ProcessorId;
use crate::va_block::{AccessType, MappingTarget, Prot, PteLayout, VaBlock};
use crate::va_space::{VaSpace, VaSpaceError};

/// Memory of one processor at a physical address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub processor: ProcessorId,
    pub phys: u64,
}

/// One copy of a migration batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageCopy {
    pub dst: Location,
    pub src: Location,
    pub bytes: u64,
}

/// Why the backend failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendError {
    /// The processor's memory is exhausted (GPU: the PMM evicts and retries).
    NoMemory { processor: ProcessorId },
    /// The copy engine failed (the channel's error, by its code).
    CopyFailed { code: u32 },
    /// Page tables could not be written.
    MappingFailed { processor: ProcessorId, va: u64 },
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendError::NoMemory { processor } => write!(f, "{processor} is out of memory"),
            BackendError::CopyFailed { code } => write!(f, "copy-engine migration failed (error {code:#x})"),
            BackendError::MappingFailed { processor, va } => {
                write!(f, "could not update {processor}'s page tables at {va:#x}")
            }
        }
    }
}

/// What the service needs from the machine.
pub trait UvmBackend: ProcessorTopology {
    /// `size` bytes (4 KiB, 64 KiB or 2 MiB), aligned to `size`, of `processor`'s memory for
    /// the block at `window`.
    fn alloc(&mut self, processor: ProcessorId, size: u64, window: u64) -> Result<u64, BackendError>;
    /// Returns memory from [`Self::alloc`].
    fn free(&mut self, processor: ProcessorId, phys: u64, size: u64);
    /// Runs the block's copies (one copy-engine batch) and waits for them.
    fn copy(&mut self, copies: &[PageCopy]) -> Result<(), BackendError>;
    /// Zero-fills memory (first touch).
    fn zero(&mut self, dst: Location, bytes: u64) -> Result<(), BackendError>;
    /// Maps `[va, va + size)` on `processor` to `target` with one PTE size (GPUs; the CPU always
    /// gets 4 KiB pages here).
    fn map(
        &mut self,
        processor: ProcessorId,
        va: u64,
        size: u64,
        page_size: PageSize,
        target: MappingTarget,
        prot: Prot,
    ) -> Result<(), BackendError>;
    /// Unmaps `[va, va + size)` on `processor`, invalidating its TLB (and, for the CPU, other
    /// CPUs' TLBs) before returning.
    fn unmap(&mut self, processor: ProcessorId, va: u64, size: u64) -> Result<(), BackendError>;
    /// The machine's monotonic time in nanoseconds (thrashing detection's clock).
    fn now_ns(&self) -> u64;
    /// When GPU `gpu` is out of memory: the windows whose chunks to evict, in order (a PMM
    /// names the owners of its least recently used root chunk). Empty: let the context choose
    /// its least recently used window.
    fn eviction_victims(&mut self, gpu: u8) -> Vec<u64> {
        let _ = gpu;
        Vec::new()
    }
}

/// UVM statistics of one context (the counters `nvtool run --stats` prints).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UvmStats {
    pub gpu_faults: u64,
    pub fault_batches: u64,
    pub replays: u64,
    pub migrated_to_gpu_bytes: u64,
    pub migrated_to_cpu_bytes: u64,
    pub prefetched_pages: u64,
    pub evictions: u64,
    pub thrashing_events: u64,
    pub cancels: u64,
    pub cpu_faults: u64,
}

impl UvmStats {
    /// The statistics as one JSON object: the keys `nvtool run --stats` prints (`gpu_faults`,
    /// `fault_batches`, `replays`, `migrated_to_gpu_bytes`, `migrated_to_cpu_bytes`,
    /// `prefetched_pages`, `evictions`, `thrashing_events`, `cancels`), then `cpu_faults`.
    pub fn to_json(&self) -> alloc::string::String {
        alloc::format!(
            "{{\"gpu_faults\":{},\"fault_batches\":{},\"replays\":{},\"migrated_to_gpu_bytes\":{},\
             \"migrated_to_cpu_bytes\":{},\"prefetched_pages\":{},\"evictions\":{},\"thrashing_events\":{},\
             \"cancels\":{},\"cpu_faults\":{}}}",
            self.gpu_faults,
            self.fault_batches,
            self.replays,
            self.migrated_to_gpu_bytes,
            self.migrated_to_cpu_bytes,
            self.prefetched_pages,
            self.evictions,
            self.thrashing_events,
            self.cancels,
            self.cpu_faults
        )
    }
}

/// Servicing failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceError {
    /// The address is in no managed range: a fatal fault.
    NoRange {
        va: u64,
    },
    VaSpace(VaSpaceError),
    Backend(BackendError),
}

impl From<VaSpaceError> for ServiceError {
    fn from(e: VaSpaceError) -> Self {
        match e {
            VaSpaceError::NoRange { va } => ServiceError::NoRange { va },
            e => ServiceError::VaSpace(e),
        }
    }
}

impl From<BackendError> for ServiceError {
    fn from(e: BackendError) -> Self {
        ServiceError::Backend(e)
    }
}

impl From<crate::va_block::VaBlockError> for ServiceError {
    fn from(e: crate::va_block::VaBlockError) -> Self {
        ServiceError::VaSpace(VaSpaceError::Block(e))
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceError::NoRange { va } => write!(f, "{va:#x} is not managed memory"),
            ServiceError::VaSpace(e) => write!(f, "{e}"),
            ServiceError::Backend(e) => write!(f, "{e}"),
        }
    }
}

/// GPU memory a block holds on one GPU: one 2 MiB chunk, or per 64 KiB granule either a
/// 64 KiB chunk or 4 KiB chunks (granules the block covers only in part).
#[derive(Clone, Debug, Default)]
struct GpuChunks {
    whole: Option<u64>,
    granule: [Option<u64>; BIG_PAGES_PER_BLOCK],
    small: BTreeMap<PageIndex, u64>,
}

impl GpuChunks {
    fn phys(&self, page: PageIndex) -> Option<u64> {
        let off = (page as u64) * PAGE_SIZE;
        if let Some(base) = self.whole {
            return Some(base + off);
        }
        let g = page / PAGES_PER_BIG_PAGE;
        if let Some(Some(base)) = self.granule.get(g) {
            return Some(base + (off % BIG_PAGE_SIZE));
        }
        self.small.get(&page).copied()
    }

    fn is_empty(&self) -> bool {
        self.whole.is_none() && self.granule.iter().all(Option::is_none) && self.small.is_empty()
    }
}

/// One faulted (or requested) page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageAccess {
    pub page: PageIndex,
    pub access: AccessType,
}

/// What one block service did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockServiceResult {
    /// Pages made resident somewhere new.
    pub migrated_pages: usize,
    /// Of those, pages the prefetch hint added.
    pub prefetched_pages: usize,
    /// Pages already usable (duplicates of an earlier service).
    pub already_mapped: usize,
    /// Pages skipped because thrashing throttles the faulting processor.
    pub throttled: usize,
}

/// Access types by rank (`AccessType as usize`).
const ACCESS_TYPES: [AccessType; 5] =
    [AccessType::Prefetch, AccessType::Read, AccessType::Write, AccessType::AtomicWeak, AccessType::AtomicStrong];

/// The strongest access asked of each page of a block: per page (its rank plus one, 0 for
/// none), and as one mask per access type (a page is in at most one of them).
#[derive(Clone)]
struct PageAccesses {
    /// Indexed by `AccessType as usize` (PREFETCH < READ < WRITE < ATOMIC_WEAK < ATOMIC_STRONG).
    masks: [PageMask; 5],
    any: PageMask,
    ranks: [u8; PAGES_PER_BLOCK],
}

impl Default for PageAccesses {
    fn default() -> Self {
        PageAccesses { masks: [PageMask::new(); 5], any: PageMask::new(), ranks: [0; PAGES_PER_BLOCK] }
    }
}

impl PageAccesses {
    /// Records `access` on `page`, keeping the stronger of it and what the page had.
    fn insert(&mut self, page: PageIndex, access: AccessType) {
        let Some(rank) = self.ranks.get_mut(page) else { return };
        let a = access as usize;
        let had = usize::from(*rank);
        if had > a {
            return;
        }
        if let Some(weaker) = had.checked_sub(1).and_then(|w| self.masks.get_mut(w)) {
            weaker.clear(page);
        }
        *rank = a as u8 + 1;
        self.any.set(page);
        self.masks[a].set(page);
    }

    fn get(&self, page: PageIndex) -> Option<AccessType> {
        let rank = usize::from(*self.ranks.get(page)?);
        ACCESS_TYPES.get(rank.checked_sub(1)?).copied()
    }

    /// The pages in order, each with its access.
    fn iter(&self) -> impl Iterator<Item = (PageIndex, AccessType)> + '_ {
        self.any.iter().filter_map(|p| Some((p, self.get(p)?)))
    }

    /// Whether no page asks for more than `access`.
    fn all_at_most(&self, access: AccessType) -> bool {
        self.masks.iter().skip(access as usize + 1).all(PageMask::is_empty)
    }
}

/// Decides which extra pages move with a fault (the prefetch heuristic plugs in here).
pub trait PrefetchPolicy {
    /// Extra pages of `block` to migrate to `destination` along with `faulted`; `thrashing`
    /// are the block's pages thrashing detection has marked, which never move as a prefetch
    /// (UVM hands `uvm_perf_thrashing_get_thrashing_pages` to the prefetcher).
    fn hint(
        &mut self,
        block: &VaBlock,
        destination: ProcessorId,
        faulted: &PageMask,
        thrashing: &PageMask,
        preferred_location: Option<ProcessorId>,
    ) -> PageMask;
}

/// No prefetching.
pub struct NoPrefetch;

impl PrefetchPolicy for NoPrefetch {
    fn hint(&mut self, _: &VaBlock, _: ProcessorId, _: &PageMask, _: &PageMask, _: Option<ProcessorId>) -> PageMask {
        PageMask::new()
    }
}

/// UVM's prefetcher ([`crate::perf::prefetch`]) with its per-block state.
#[derive(Default)]
pub struct Prefetcher {
    pub config: crate::perf::prefetch::PrefetchConfig,
    states: BTreeMap<u64, crate::perf::prefetch::PrefetchState>,
}

impl Prefetcher {
    pub fn new(config: crate::perf::prefetch::PrefetchConfig) -> Self {
        Prefetcher { config, states: BTreeMap::new() }
    }
}

impl PrefetchPolicy for Prefetcher {
    fn hint(
        &mut self,
        block: &VaBlock,
        destination: ProcessorId,
        faulted: &PageMask,
        thrashing: &PageMask,
        preferred_location: Option<ProcessorId>,
    ) -> PageMask {
        use crate::perf::prefetch::{compute_prefetch_hint, PrefetchRequest};
        let state = self.states.entry(block.start()).or_default();
        let resident = block.resident(destination);
        let cpu_mapped = block.mapped(ProcessorId::Cpu, Prot::ReadOnly);
        let req = PrefetchRequest {
            block: block.region(),
            destinations: crate::processor::ProcessorMask::of(destination),
            faulted,
            resident_at_destination: &resident,
            thrashing,
            resident_nowhere: block.resident_processors().is_empty(),
            preferred_location,
            cpu_mapped: &cpu_mapped,
        };
        compute_prefetch_hint(&self.config, state, &req).map(|h| h.pages).unwrap_or_default()
    }
}

/// The unified-memory state of one application context: its va_space, the GPU memory its
/// blocks hold, and its statistics.
pub struct UvmContext {
    pub va_space: VaSpace,
    pub stats: UvmStats,
    chunks: BTreeMap<(u64, u8), GpuChunks>,
    /// Per GPU, windows holding its memory, least recently used first.
    lru: BTreeMap<u8, VecDeque<u64>>,
    /// Thrashing detection's parameters and per-block state (by block start).
    pub thrashing_config: ThrashingConfig,
    thrashing: BTreeMap<u64, BlockThrashing>,
    /// Faults skipped because thrashing throttled their processor.
    pub throttled_faults: u64,
    /// Pinned pages whose pin expired (UVM's `uvm_perf_thrashing_pin` time, 150 ms).
    pub unpinned_pages: u64,
    /// Scratch for a migration: the new address of each page of the block (by page index).
    placed: Vec<u64>,
}

impl Default for UvmContext {
    fn default() -> Self {
        UvmContext::new()
    }
}

impl UvmContext {
    pub fn new() -> Self {
        UvmContext {
            va_space: VaSpace::new(),
            stats: UvmStats::default(),
            chunks: BTreeMap::new(),
            lru: BTreeMap::new(),
            thrashing_config: ThrashingConfig::default(),
            thrashing: BTreeMap::new(),
            throttled_faults: 0,
            unpinned_pages: 0,
            placed: alloc::vec![u64::MAX; PAGES_PER_BLOCK],
        }
    }

    /// Unpins every page whose pin expired by `now_ns`, in every block, as UVM's delayed unpin
    /// work does (`thrashing_unpin_pages`): the pages' thrashing state is forgotten, so their
    /// next fault is serviced afresh (it may migrate them). Their mappings stay as they are.
    /// Returns how many pages were unpinned.
    pub fn unpin_expired(&mut self, now_ns: u64) -> u64 {
        let horizon = now_ns.saturating_add(thrashing::UNPIN_GRANULARITY_NS);
        let mut unpinned = 0;
        for bt in self.thrashing.values_mut() {
            if bt.next_unpin_deadline().is_some_and(|d| d <= horizon) {
                unpinned += bt.unpin_expired(now_ns).count() as u64;
            }
        }
        self.unpinned_pages += unpinned;
        unpinned
    }

    /// The earliest time a pinned page's pin expires, for the caller's timer.
    pub fn next_unpin_deadline(&self) -> Option<u64> {
        self.thrashing.values().filter_map(BlockThrashing::next_unpin_deadline).min()
    }

    /// The pages of the block at `block_start` that thrashing detection keeps pinned.
    pub fn pinned_pages(&self, block_start: u64) -> PageMask {
        self.thrashing.get(&block_start).map(BlockThrashing::pinned_pages).unwrap_or_default()
    }

    /// Services `pages` of the block holding `va` for `processor`
    /// (`uvm_va_block_service_locked`).
    pub fn service_block(
        &mut self,
        processor: ProcessorId,
        va: u64,
        pages: &[PageAccess],
        prefetch: &mut impl PrefetchPolicy,
        backend: &mut impl UvmBackend,
    ) -> Result<BlockServiceResult, ServiceError> {
        let range = self.va_space.range_mut(va).ok_or(ServiceError::NoRange { va })?;
        let policy = range.policy;
        let block = range.block_mut(va)?;
        let start = block.start();
        let region = block.region();
        let mut result = BlockServiceResult::default();

        // Pages per destination, with the strongest access asked for each page.
        let mut wanted = PageAccesses::default();
        for pa in pages {
            if !region.contains(pa.page) {
                return Err(ServiceError::NoRange { va: block.page_address(pa.page) });
            }
            wanted.insert(pa.page, pa.access);
        }
        let now = backend.now_ns();
        let cfg = self.thrashing_config;
        let bt = self.thrashing.entry(start).or_default();
        // Pins that expired are dropped before the faults are judged (UVM's unpin worker runs
        // on its own timer; here the caller's calls to `unpin_expired` and every service do).
        if bt.next_unpin_deadline().is_some_and(|d| d <= now.saturating_add(thrashing::UNPIN_GRANULARITY_NS)) {
            self.unpinned_pages += bt.unpin_expired(now).count() as u64;
        }
        let topology: &dyn thrashing::TopologyMasks = &*backend;
        // Few destinations (usually one): a list, in processor order once filled.
        let mut by_dest: Vec<(ProcessorId, (PageMask, PageAccesses))> = Vec::new();
        for (page, access) in wanted.iter() {
            if block.prot(processor, page) >= access.required_prot() && access != AccessType::Prefetch {
                result.already_mapped += 1;
                continue;
            }
            let resident_on = block.residency_of(page);
            let ctx = HintContext { preferred_location: policy.preferred_location, resident_on, topology };
            let pin = match bt.get_hint(&cfg, page, processor, now, &ctx) {
                ThrashingHint::None => None,
                ThrashingHint::Throttle { .. } => {
                    // Skipped: the processor faults again after the replay (the CPU retries).
                    result.throttled += 1;
                    continue;
                }
                ThrashingHint::Pin { residency, .. } => Some(residency),
            };
            let dest = select_residency(&policy, processor, access, resident_on, pin, backend);
            let i = by_dest.iter().position(|(d, _)| *d == dest).unwrap_or_else(|| {
                by_dest.push((dest, Default::default()));
                by_dest.len() - 1
            });
            if let Some((_, (mask, accesses))) = by_dest.get_mut(i) {
                mask.set(page);
                accesses.insert(page, access);
            }
        }
        by_dest.sort_unstable_by_key(|&(d, _)| d);
        if by_dest.is_empty() {
            // Every page was already mapped or throttled: nothing to move, but the throttles
            // count (the bottom half limits its throttled batches by them).
            self.throttled_faults += result.throttled as u64;
            return Ok(result);
        }
        // Prefetch only when everything goes to one place; the prefetcher leaves thrashing pages
        // out of its regions.
        if by_dest.len() == 1 {
            if let Some((dest, (mask, accesses))) = by_dest.first_mut() {
                let dest = *dest;
                let thrashing_pages = bt.thrashing_pages();
                let extra = prefetch
                    .hint(block, dest, mask, &thrashing_pages, policy.preferred_location)
                    .and(&PageMask::from_region(region))
                    .andnot(mask)
                    .andnot(&block.resident(dest));
                result.prefetched_pages = extra.count();
                for p in extra.iter() {
                    mask.set(p);
                    accesses.insert(p, AccessType::Prefetch);
                }
            }
        }

        for (dest, (mask, accesses)) in by_dest {
            let duplicate = policy.read_duplication && accesses.all_at_most(AccessType::Read);
            let before = self.block_at(start)?.resident(dest);
            let moved = self.migrate_block_pages(start, dest, &mask, duplicate, backend)?;
            result.migrated_pages += moved;
            self.record_migrations(start, dest, &mask.andnot(&before), &accesses, duplicate, now);
            // Map the faulting processor at the destination, then the accessed-by processors.
            // Pages with copies elsewhere map read-only unless the access needs more; the rest
            // read-write-atomic.
            let block = self.block_at(start)?;
            let reads = accesses.masks[AccessType::Prefetch as usize].or(&accesses.masks[AccessType::Read as usize]);
            let map_ro = pages_with_copies(block).and(&reads);
            let map_rw = accesses.any.andnot(&map_ro);
            if processor == dest || backend.can_access(processor, dest) {
                self.map_pages(start, processor, &map_ro, Prot::ReadOnly, backend)?;
                self.map_pages(start, processor, &map_rw, Prot::ReadWriteAtomic, backend)?;
            }
            for p in policy.accessed_by.iter() {
                if p != processor && backend.can_access(p, dest) {
                    self.map_pages(start, p, &map_ro, Prot::ReadOnly, backend)?;
                    self.map_pages(start, p, &map_rw, Prot::ReadWriteAtomic, backend)?;
                }
            }
        }
        self.stats.prefetched_pages += result.prefetched_pages as u64;
        self.throttled_faults += result.throttled as u64;
        Ok(result)
    }

    /// Tells thrashing detection which pages just became resident on `dest`, and why.
    fn record_migrations(
        &mut self,
        start: u64,
        dest: ProcessorId,
        moved: &PageMask,
        accesses: &PageAccesses,
        duplicate: bool,
        now: u64,
    ) {
        let cfg = self.thrashing_config;
        let bt = self.thrashing.entry(start).or_default();
        let before = bt.stats().thrashing_detected;
        // Each page on its own, as UVM's per-page detection sees it; prefetched pages have
        // their own cause.
        let prefetched = moved.and(&accesses.masks[AccessType::Prefetch as usize]);
        for (pages, cause) in
            [(moved.andnot(&prefetched), MigrationCause::ReplayableFault), (prefetched, MigrationCause::Prefetch)]
        {
            let event = ThrashingEvent::Migration { cause, mode: TransferMode::Move, read_duplication: duplicate };
            bt.record_page_events(&cfg, &pages, dest, event, now);
        }
        self.stats.thrashing_events += bt.stats().thrashing_detected - before;
    }

    /// The block starting at `start`.
    fn block_at(&mut self, start: u64) -> Result<&mut VaBlock, ServiceError> {
        Ok(self.va_space.block_mut(start)?)
    }

    /// Pages of the 2 MiB window at `window` resident on `p`, over every block in it (a window
    /// holds two blocks when advice split a range inside it; chunks belong to the window).
    fn window_resident(&self, window: u64, p: ProcessorId) -> PageMask {
        let mut m = PageMask::new();
        let mut at = window;
        while at < window + VA_BLOCK_SIZE {
            match self.va_space.range(at) {
                Some(r) => {
                    if let Some(b) = r.block(at) {
                        m = m.or(&b.resident(p));
                    }
                    at = r.end().min(window + VA_BLOCK_SIZE);
                }
                None => {
                    // Next range start inside the window, if any.
                    match self.va_space.ranges().map(|r| r.start()).find(|&s| s > at && s < window + VA_BLOCK_SIZE) {
                        Some(s) => at = s,
                        None => break,
                    }
                }
            }
        }
        m
    }

    /// Makes `pages` of the block starting at `start` resident on `dest`: memory there, one
    /// copy batch (zero-fill for pages resident nowhere), then either the old copies dropped
    /// with every mapping that pointed at them revoked, or (`duplicate`, read duplication) the
    /// other copies kept and every mapping of the pages downgraded to read-only. Returns how
    /// many pages got a new copy.
    pub fn migrate_block_pages(
        &mut self,
        start: u64,
        dest: ProcessorId,
        pages: &PageMask,
        duplicate: bool,
        backend: &mut impl UvmBackend,
    ) -> Result<usize, ServiceError> {
        let block = self.block_at(start)?;
        let pages = pages.and(&PageMask::from_region(block.region()));
        let to_move = pages.andnot(&block.resident(dest));
        // Memory at the destination, each page's address in the context's scratch array
        // (taken out while in use; an eviction on the way brings its own).
        let mut placed = core::mem::take(&mut self.placed);
        let moved = self.move_block_pages(start, dest, &pages, &to_move, duplicate, &mut placed, backend);
        self.placed = placed;
        moved
    }

    /// [`Self::migrate_block_pages`] with `placed` as its scratch array.
    #[allow(clippy::too_many_arguments)]
    fn move_block_pages(
        &mut self,
        start: u64,
        dest: ProcessorId,
        pages: &PageMask,
        to_move: &PageMask,
        duplicate: bool,
        placed: &mut Vec<u64>,
        backend: &mut impl UvmBackend,
    ) -> Result<usize, ServiceError> {
        let window = self.block_at(start)?.window_base();
        self.alloc_pages(start, dest, to_move, placed, backend)?;
        let phys = |page: PageIndex| placed.get(page).copied().unwrap_or(u64::MAX);
        let block = self.block_at(start)?;
        // Sources: each page's copy on the first processor (in id order) holding it; pages
        // resident nowhere are zero-filled.
        let mut copies: Vec<PageCopy> = Vec::with_capacity(to_move.count());
        let mut unsourced = *to_move;
        for holder in block.resident_processors().iter() {
            let Some(state) = block.state(holder) else { continue };
            let from_here = unsourced.and(&state.resident);
            if from_here.is_empty() {
                continue;
            }
            unsourced = unsourced.andnot(&from_here);
            for page in from_here.iter() {
                if let Some(pa) = state.phys(page) {
                    let dst = Location { processor: dest, phys: phys(page) };
                    push_copy(
                        &mut copies,
                        PageCopy { dst, src: Location { processor: holder, phys: pa }, bytes: PAGE_SIZE },
                    );
                } else {
                    // No address recorded here: still unsourced.
                    unsourced.set(page);
                }
            }
        }
        let zero: Vec<Location> = unsourced.iter().map(|page| Location { processor: dest, phys: phys(page) }).collect();
        backend.copy(&copies)?;
        for (dst, bytes) in zero_runs(&zero) {
            backend.zero(dst, bytes)?;
        }
        for c in &copies {
            if c.dst.processor.is_cpu() {
                self.stats.migrated_to_cpu_bytes += c.bytes;
            } else {
                self.stats.migrated_to_gpu_bytes += c.bytes;
            }
        }
        let block = self.block_at(start)?;
        block.set_resident(dest, to_move, phys)?;

        let mappers = block.mapped_processors();
        if duplicate {
            let dup = pages.and(&pages_with_copies(block));
            block.read_duplicated = block.read_duplicated.or(&dup);
            // Every copy becomes read-only: a write must collapse the duplicates first.
            for m in mappers.iter() {
                let block = self.block_at(start)?;
                let writable = block.mapped(m, Prot::ReadWrite).and(&dup);
                if !writable.is_empty() {
                    self.map_pages(start, m, &writable, Prot::ReadOnly, backend)?;
                }
            }
            return Ok(to_move.count());
        }
        // Revoke mappings of copies that go away, then drop those copies.
        for m in mappers.iter() {
            let block = self.block_at(start)?;
            let mapped = block.mapped(m, Prot::ReadOnly).and(pages);
            let stale = match m {
                // The CPU maps only its own copies.
                ProcessorId::Cpu if dest == ProcessorId::Cpu => PageMask::new(),
                ProcessorId::Cpu => mapped,
                ProcessorId::Gpu(_) => mapped.iter().filter(|&pg| block.mapping_target(m, pg) != Some(dest)).collect(),
            };
            if !stale.is_empty() {
                self.unmap_pages(start, m, &stale, backend)?;
            }
        }
        let block = self.block_at(start)?;
        for h in block.resident_processors().iter().filter(|&p| p != dest) {
            let block = self.block_at(start)?;
            let drop = block.resident(h).and(pages);
            if drop.is_empty() {
                continue;
            }
            let mut freed: Vec<u64> = Vec::with_capacity(drop.count());
            if let Some(s) = block.state(h) {
                freed.extend(drop.iter().filter_map(|pg| s.phys(pg)));
            }
            block.clear_resident(h, &drop)?;
            block.read_duplicated = block.read_duplicated.andnot(&drop);
            self.free_pages(window, h, &freed, backend);
        }
        Ok(to_move.count())
    }

    /// Memory on `dest` for `pages` of the block starting at `start`; writes where each page is
    /// to `placed` (indexed by page; entries of other pages are left as they were). GPU memory
    /// comes in chunks owned by the block's 2 MiB window: one 2 MiB chunk when the whole window
    /// moves at once, else a 64 KiB chunk per big page (4 KiB chunks where the block covers a
    /// big page only in part).
    fn alloc_pages(
        &mut self,
        start: u64,
        dest: ProcessorId,
        pages: &PageMask,
        placed: &mut Vec<u64>,
        backend: &mut impl UvmBackend,
    ) -> Result<(), ServiceError> {
        let block = self.block_at(start)?;
        let region = block.region();
        let window = block.window_base();
        placed.resize(PAGES_PER_BLOCK, u64::MAX);
        match dest {
            ProcessorId::Cpu => {
                for page in pages.iter() {
                    match backend.alloc(dest, PAGE_SIZE, window) {
                        Ok(pa) => {
                            if let Some(slot) = placed.get_mut(page) {
                                *slot = pa;
                            }
                        }
                        Err(e) => {
                            // The pages before this one got memory: give it back.
                            for done in pages.iter().take_while(|&p| p != page) {
                                if let Some(&pa) = placed.get(done) {
                                    backend.free(dest, pa, PAGE_SIZE);
                                }
                            }
                            return Err(e.into());
                        }
                    }
                }
            }
            ProcessorId::Gpu(g) => {
                self.touch_window(g, window);
                // The window's chunks, out of the map while they are filled (one lookup): an
                // eviction on the way never picks this window.
                let mut chunks = self.chunks.remove(&(window, g)).unwrap_or_default();
                let filled = self.fill_gpu_chunks(&mut chunks, g, window, region, pages, backend);
                for page in pages.iter() {
                    if let Some(slot) = placed.get_mut(page) {
                        *slot = chunks.phys(page).unwrap_or(u64::MAX);
                    }
                }
                if !chunks.is_empty() {
                    self.chunks.insert((window, g), chunks);
                }
                filled?;
            }
        }
        Ok(())
    }

    /// GPU `g`'s chunks for `pages` of the window at `window` (see [`Self::alloc_pages`]).
    fn fill_gpu_chunks(
        &mut self,
        chunks: &mut GpuChunks,
        g: u8,
        window: u64,
        region: PageRegion,
        pages: &PageMask,
        backend: &mut impl UvmBackend,
    ) -> Result<(), ServiceError> {
        if chunks.is_empty() && region == PageRegion::full() && *pages == PageMask::from_region(PageRegion::full()) {
            if let Ok(base) = self.alloc_gpu(g, VA_BLOCK_SIZE, window, backend) {
                chunks.whole = Some(base);
            }
        }
        for page in pages.iter() {
            if chunks.phys(page).is_some() {
                continue;
            }
            let granule = page / PAGES_PER_BIG_PAGE;
            if region.covers(&PageRegion::big_page(granule)) {
                let base = self.alloc_gpu(g, BIG_PAGE_SIZE, window, backend)?;
                if let Some(slot) = chunks.granule.get_mut(granule) {
                    *slot = Some(base);
                }
            } else {
                let base = self.alloc_gpu(g, PAGE_SIZE, window, backend)?;
                chunks.small.insert(page, base);
            }
        }
        Ok(())
    }

    /// Marks the window as just used on GPU `g` (the eviction LRU's tail).
    fn touch_window(&mut self, g: u8, window: u64) {
        let lru = self.lru.entry(g).or_default();
        if lru.back() != Some(&window) {
            lru.retain(|&w| w != window);
            lru.push_back(window);
        }
    }

    /// GPU memory, evicting when the GPU is out of it (`block_alloc_gpu_chunk` and the PMM's
    /// NO_MEMORY -> evict -> retry loop): the backend names the victims (its PMM's root-chunk
    /// LRU) or, when it has no opinion, the least recently used window of this context that is
    /// not `for_window` is evicted. Fails with NoMemory only when nothing is left to evict.
    fn alloc_gpu(
        &mut self,
        g: u8,
        size: u64,
        for_window: u64,
        backend: &mut impl UvmBackend,
    ) -> Result<u64, ServiceError> {
        let gpu = ProcessorId::Gpu(g);
        loop {
            match backend.alloc(gpu, size, for_window) {
                Ok(pa) => return Ok(pa),
                Err(BackendError::NoMemory { .. }) => {}
                Err(e) => return Err(e.into()),
            }
            let mut victims = backend.eviction_victims(g);
            victims.retain(|&w| w != for_window && self.chunks.contains_key(&(w, g)));
            if victims.is_empty() {
                let lru = self.lru.entry(g).or_default();
                if let Some(w) = lru.iter().copied().find(|&w| w != for_window && self.chunks.contains_key(&(w, g))) {
                    victims.push(w);
                }
            }
            if victims.is_empty() {
                return Err(BackendError::NoMemory { processor: gpu }.into());
            }
            for w in victims {
                self.evict_window(g, w, backend)?;
            }
        }
    }

    /// Evicts every page of the window at `window` from GPU `g` to the CPU
    /// (`uvm_va_block_evict_chunks`): copied out, GPU mappings revoked, chunks freed, the
    /// `evicted` mask set.
    pub fn evict_window(&mut self, g: u8, window: u64, backend: &mut impl UvmBackend) -> Result<(), ServiceError> {
        let gpu = ProcessorId::Gpu(g);
        let blocks: Vec<(u64, PageMask)> = self
            .va_space
            .ranges()
            .filter(|r| r.start() < window + VA_BLOCK_SIZE && r.end() > window)
            .filter_map(|r| r.block(window.max(r.start())))
            .map(|b| (b.start(), b.resident(gpu)))
            .collect();
        for (start, pages) in blocks {
            if pages.is_empty() {
                continue;
            }
            self.migrate_block_pages(start, ProcessorId::Cpu, &pages, false, backend)?;
            let block = self.block_at(start)?;
            let state = block.gpu_mut(g)?;
            state.evicted = state.evicted.or(&pages);
        }
        if let Some(lru) = self.lru.get_mut(&g) {
            lru.retain(|&w| w != window);
        }
        // Chunks of pages that were resident nowhere else go with the migration; any left
        // (allocated but never filled) go now.
        if let Some(chunks) = self.chunks.remove(&(window, g)) {
            if let Some(base) = chunks.whole {
                backend.free(gpu, base, VA_BLOCK_SIZE);
            }
            for base in chunks.granule.iter().flatten() {
                backend.free(gpu, *base, BIG_PAGE_SIZE);
            }
            for base in chunks.small.values() {
                backend.free(gpu, *base, PAGE_SIZE);
            }
        }
        self.stats.evictions += 1;
        Ok(())
    }

    /// Returns memory no longer resident on `p`: the CPU pages `freed`, or the GPU chunks of
    /// the window at `window` that no longer hold a resident page.
    fn free_pages(&mut self, window: u64, p: ProcessorId, freed: &[u64], backend: &mut impl UvmBackend) {
        match p {
            ProcessorId::Cpu => {
                for &pa in freed {
                    backend.free(p, pa, PAGE_SIZE);
                }
            }
            ProcessorId::Gpu(g) => {
                let resident = self.window_resident(window, p);
                let Some(chunks) = self.chunks.get_mut(&(window, g)) else { return };
                if let Some(base) = chunks.whole {
                    if resident.is_empty() {
                        backend.free(p, base, VA_BLOCK_SIZE);
                        chunks.whole = None;
                    }
                } else {
                    for (granule, slot) in chunks.granule.iter_mut().enumerate() {
                        if let Some(base) = *slot {
                            if resident.region_empty(PageRegion::big_page(granule)) {
                                backend.free(p, base, BIG_PAGE_SIZE);
                                *slot = None;
                            }
                        }
                    }
                    let gone: Vec<PageIndex> = chunks.small.keys().copied().filter(|&pg| !resident.test(pg)).collect();
                    for pg in gone {
                        if let Some(base) = chunks.small.remove(&pg) {
                            backend.free(p, base, PAGE_SIZE);
                        }
                    }
                }
                if chunks.is_empty() {
                    self.chunks.remove(&(window, g));
                }
            }
        }
    }

    /// Maps `pages` on `p` with `prot` to wherever each is resident (the closest copy: `p`'s
    /// own, else the first holder `p` can reach).
    fn map_pages(
        &mut self,
        start: u64,
        p: ProcessorId,
        pages: &PageMask,
        prot: Prot,
        backend: &mut impl UvmBackend,
    ) -> Result<(), ServiceError> {
        if pages.is_empty() {
            return Ok(());
        }
        let block = self.block_at(start)?;
        let target_of = |page: PageIndex| -> Option<MappingTarget> {
            let holders = block.residency_of(page);
            let t = if holders.test(p) { Some(p) } else { holders.iter().find(|&h| backend.can_access(p, h)) }?;
            block.state(t).and_then(|s| s.phys(page)).map(|phys| MappingTarget { target: t, phys })
        };
        // Pages resident on `p` map its own copy; the others look for the closest holder.
        let own = pages.and(&block.resident(p));
        let own_state = block.state(p);
        let mut targets: Vec<(PageIndex, MappingTarget)> = Vec::with_capacity(pages.count());
        let mut mappable = PageMask::new();
        for pg in pages.iter() {
            let t = match own_state {
                Some(st) if own.test(pg) => st.phys(pg).map(|phys| MappingTarget { target: p, phys }),
                _ => target_of(pg),
            };
            if let Some(t) = t {
                targets.push((pg, t));
                mappable.set(pg);
            }
        }
        match p {
            ProcessorId::Cpu => {
                // CPU mappings are 4 KiB; remap changed pages.
                let block = self.block_at(start)?;
                let was_mapped = block.mapped(p, Prot::ReadOnly).and(&mappable);
                for r in was_mapped.regions() {
                    backend.unmap(p, block.page_address(r.first), r.size())?;
                }
                block.set_mapping(p, &mappable, prot, in_order(&targets))?;
                for &(pg, t) in &targets {
                    backend.map(p, block.page_address(pg), PAGE_SIZE, PageSize::Size4K, t, prot)?;
                }
            }
            ProcessorId::Gpu(g) => {
                let block = self.block_at(start)?;
                let old = block.gpu(g).map(|s| s.pte_layout).unwrap_or_default();
                block.set_mapping(p, &mappable, prot, in_order(&targets))?;
                let new = block.compute_pte_layout(g);
                rewrite_gpu_ptes(block, g, &old, &new, &mappable, backend)?;
                block.gpu_mut(g)?.pte_layout = new;
            }
        }
        Ok(())
    }

    /// Unmaps `pages` on `p`.
    fn unmap_pages(
        &mut self,
        start: u64,
        p: ProcessorId,
        pages: &PageMask,
        backend: &mut impl UvmBackend,
    ) -> Result<(), ServiceError> {
        let block = self.block_at(start)?;
        match p {
            ProcessorId::Cpu => {
                for r in pages.and(&block.mapped(p, Prot::ReadOnly)).regions() {
                    backend.unmap(p, block.page_address(r.first), r.size())?;
                }
                block.set_mapping(p, pages, Prot::None, |_| None)?;
            }
            ProcessorId::Gpu(g) => {
                let old = block.gpu(g).map(|s| s.pte_layout).unwrap_or_default();
                block.set_mapping(p, pages, Prot::None, |_| None)?;
                let new = block.compute_pte_layout(g);
                rewrite_gpu_ptes(block, g, &old, &new, pages, backend)?;
                block.gpu_mut(g)?.pte_layout = new;
            }
        }
        Ok(())
    }
}

/// The target of each page in `targets` (ascending by page, as built from a mask), for pages
/// asked in ascending order: one pass over the list.
fn in_order(targets: &[(PageIndex, MappingTarget)]) -> impl FnMut(PageIndex) -> Option<MappingTarget> + '_ {
    let mut rest = targets;
    move |page| {
        while let Some((&(p, t), tail)) = rest.split_first() {
            if p > page {
                return None;
            }
            rest = tail;
            if p == page {
                return Some(t);
            }
        }
        None
    }
}

/// Pages of `block` held by more than one processor.
fn pages_with_copies(block: &VaBlock) -> PageMask {
    let mut seen = block.resident(ProcessorId::Cpu);
    let mut copies = PageMask::new();
    for (_, g) in block.gpus() {
        copies = copies.or(&seen.and(&g.state.resident));
        seen = seen.or(&g.state.resident);
    }
    copies.and(&PageMask::from_region(block.region()))
}

/// Adds a copy, merging it into the previous one when both sides continue it.
fn push_copy(copies: &mut Vec<PageCopy>, c: PageCopy) {
    if let Some(last) = copies.last_mut() {
        if last.dst.processor == c.dst.processor
            && last.src.processor == c.src.processor
            && last.dst.phys + last.bytes == c.dst.phys
            && last.src.phys + last.bytes == c.src.phys
        {
            last.bytes += c.bytes;
            return;
        }
    }
    copies.push(c);
}

/// Contiguous runs of zero-fill destinations.
fn zero_runs(dsts: &[Location]) -> Vec<(Location, u64)> {
    let mut out: Vec<(Location, u64)> = Vec::new();
    for d in dsts {
        if let Some(last) = out.last_mut() {
            if last.0.processor == d.processor && last.0.phys + last.1 == d.phys {
                last.1 += PAGE_SIZE;
                continue;
            }
        }
        out.push((*d, PAGE_SIZE));
    }
    out
}

/// Rewrites GPU `g`'s PTEs for the 64 KiB granules `changed` touches (the whole block when
/// either layout uses the 2 MiB PTE): old extents there are unmapped, new ones mapped.
fn rewrite_gpu_ptes(
    block: &VaBlock,
    g: u8,
    old: &PteLayout,
    new: &PteLayout,
    changed: &PageMask,
    backend: &mut impl UvmBackend,
) -> Result<(), BackendError> {
    let p = ProcessorId::Gpu(g);
    // The touched granules, one bit per 64 KiB big page.
    let granules: u32 = if old.is_2m || new.is_2m { u32::MAX } else { changed.big_pages_touched() };
    if old.is_2m {
        backend.unmap(p, block.page_address(0), VA_BLOCK_SIZE)?;
    } else {
        for_each_extent(old, granules, |r, _| backend.unmap(p, block.page_address(r.first), r.size()))?;
    }
    let Some(state) = block.gpu(g) else { return Ok(()) };
    if new.is_2m {
        return map_extent(block, state, p, PageRegion::full(), PageSize::Size2M, backend);
    }
    let mut bits = granules;
    while bits != 0 {
        let big = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        if new.big & (1 << big) != 0 {
            map_extent(block, state, p, PageRegion::big_page(big), PageSize::Size64K, backend)?;
        } else {
            let base = big * PAGES_PER_BIG_PAGE;
            for_each_run(new.small.big_page_bits(big), |first, outer| {
                map_extent(block, state, p, PageRegion::new(base + first, base + outer), PageSize::Size4K, backend)
            })?;
        }
    }
    Ok(())
}

/// Maps the extent `r` of one PTE size: one backend call per run with a contiguous target and
/// one permission.
#[inline(always)]
fn map_extent(
    block: &VaBlock,
    state: &crate::va_block::GpuBlockState,
    p: ProcessorId,
    r: PageRegion,
    size: PageSize,
    backend: &mut impl UvmBackend,
) -> Result<(), BackendError> {
    let step = match size {
        PageSize::Size2M => PAGES_PER_BLOCK,
        PageSize::Size64K => PAGES_PER_BIG_PAGE,
        _ => 1,
    };
    let mut run_start = r.first;
    while run_start < r.outer {
        let Some(t0) = state.target(run_start) else {
            run_start += 1;
            continue;
        };
        let prot = state.state.prot(run_start);
        let mut end = run_start + step;
        while end < r.outer
            && state.state.prot(end) == prot
            && state
                .target(end)
                .is_some_and(|t| t.target == t0.target && t.phys == t0.phys + (end - run_start) as u64 * PAGE_SIZE)
        {
            end += step;
        }
        let end = end.min(r.outer);
        let va = block.page_address(run_start);
        backend
            .map(p, va, (end - run_start) as u64 * PAGE_SIZE, size, t0, prot)
            .map_err(|_| BackendError::MappingFailed { processor: p, va })?;
        run_start = end;
    }
    Ok(())
}

/// Calls `f(first, outer)` for each run of set bits of a big page's `bits`, in order.
#[inline(always)]
fn for_each_run(
    bits: u16,
    mut f: impl FnMut(PageIndex, PageIndex) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    let mut rest = u32::from(bits);
    while rest != 0 {
        let first = rest.trailing_zeros();
        let len = (!(rest >> first)).trailing_zeros();
        f(first as PageIndex, (first + len) as PageIndex)?;
        rest &= !(((1u32 << len) - 1) << first);
    }
    Ok(())
}

/// Calls `f` with each extent of `layout` (not a 2 MiB one) in the big pages `granules` names,
/// in address order: a 64 KiB PTE's big page, or a run of 4 KiB PTEs inside one big page.
fn for_each_extent(
    layout: &PteLayout,
    granules: u32,
    mut f: impl FnMut(PageRegion, PageSize) -> Result<(), BackendError>,
) -> Result<(), BackendError> {
    let mut bits = granules;
    while bits != 0 {
        let big = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        if layout.big & (1 << big) != 0 {
            f(PageRegion::big_page(big), PageSize::Size64K)?;
        } else {
            let base = big * PAGES_PER_BIG_PAGE;
            for_each_run(layout.small.big_page_bits(big), |first, outer| {
                f(PageRegion::new(base + first, base + outer), PageSize::Size4K)
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod stats_json_tests {
    use super::UvmStats;

    #[test]
    fn the_statistics_print_as_one_json_object_with_the_documented_keys() {
        let s = UvmStats {
            gpu_faults: 1,
            fault_batches: 2,
            replays: 3,
            migrated_to_gpu_bytes: 4,
            migrated_to_cpu_bytes: 5,
            prefetched_pages: 6,
            evictions: 7,
            thrashing_events: 8,
            cancels: 9,
            cpu_faults: 10,
        };
        assert_eq!(
            s.to_json(),
            "{\"gpu_faults\":1,\"fault_batches\":2,\"replays\":3,\"migrated_to_gpu_bytes\":4,\
             \"migrated_to_cpu_bytes\":5,\"prefetched_pages\":6,\"evictions\":7,\"thrashing_events\":8,\
             \"cancels\":9,\"cpu_faults\":10}"
        );
    }
}
