//! Thrashing detection and mitigation for one va_block, after
//! `kernel-open/nvidia-uvm/uvm_perf_thrashing.c` (535.261.03).
//!
//! A page thrashes when processors keep taking it from each other: each migration (or
//! permission revocation) of the page within one *lapse* of the previous one counts an event,
//! and `threshold` consecutive events mark the page as thrashing. Faults on a thrashing page
//! then get a [`ThrashingHint`] from [`BlockThrashing::get_hint`]:
//!
//! * **Throttle**: in each throttling period (one *nap*) one processor, the
//!   `do_not_throttle` one, may service faults on the page; the others are told to wait until
//!   the period ends (a GPU's faults are dropped and replayed, the CPU sleeps).
//! * **Pin**: the page stays where it is (or moves to the preferred location) and the
//!   thrashing processors map it remotely. Pinning happens at once when every thrashing
//!   processor can reach the location cheaply, else after `pin_threshold` throttles. A pinned
//!   page is unpinned after the *pin* time ([`BlockThrashing::unpin_expired`]).
//!
//! After a quiet *epoch* the block forgets everything, at most `max_resets` times.
//!
//! The per-page table is allocated only once two different processors touch the block within
//! one lapse, as in UVM. Time comes from the caller (`now_ns`, nanoseconds of a monotonic
//! clock); page time stamps keep 64 ns resolution as UVM's 58-bit fields do, and a stamp of 0
//! means "never", so a clock must not start below 64 ns. A clock that goes backwards reads as
//! "long ago", like UVM's unsigned subtraction. Processors beyond [`MAX_GPUS`] are ignored.
//!
//! Not modelled: UVM's tools events and procfs files (the counters are kept in
//! [`ThrashingStats`] instead), and the delayed work that unpins: the caller calls
//! [`BlockThrashing::unpin_expired`] when [`BlockThrashing::next_unpin_deadline`] passes
//! (`UvmContext` does so before every block service and in its own `unpin_expired`).

use alloc::vec;
use alloc::vec::Vec;

use super::ConfigError;
use crate::page_mask::{PageIndex, PageMask, PageRegion, PAGES_PER_BLOCK};
use crate::processor::{ProcessorId, ProcessorMask, MAX_GPUS};

/// Consecutive thrashing events that mark a page as thrashing
/// (`UVM_PERF_THRASHING_THRESHOLD_DEFAULT`, `uvm_perf_thrashing.c`).
pub const THRESHOLD_DEFAULT: u32 = 3;
/// The per-page event counter has 3 bits (`PAGE_THRASHING_NUM_EVENTS_BITS`,
/// `UVM_PERF_THRASHING_THRESHOLD_MAX`, `uvm_perf_thrashing.c`).
pub const THRESHOLD_MAX: u32 = 7;
/// Throttles before a page is pinned (`UVM_PERF_THRASHING_PIN_THRESHOLD_DEFAULT`,
/// `uvm_perf_thrashing.c`).
pub const PIN_THRESHOLD_DEFAULT: u32 = 10;
/// The per-page throttle counter has 8 bits (`UVM_PERF_THRASHING_PIN_THRESHOLD_MAX`,
/// `uvm_perf_thrashing.c`).
pub const PIN_THRESHOLD_MAX: u32 = 255;
/// Events further apart than this are not thrashing (`UVM_PERF_THRASHING_LAPSE_USEC_DEFAULT`,
/// `uvm_perf_thrashing.c`).
pub const LAPSE_USEC_DEFAULT: u32 = 500;
/// Throttling period in lapses (`UVM_PERF_THRASHING_NAP_DEFAULT`, `uvm_perf_thrashing.c`).
pub const NAP_DEFAULT: u32 = 1;
/// `UVM_PERF_THRASHING_NAP_MAX`, `uvm_perf_thrashing.c`.
pub const NAP_MAX: u32 = 100;
/// Quiet time, in lapses, after which a block's thrashing state is dropped
/// (`UVM_PERF_THRASHING_EPOCH_DEFAULT`, `uvm_perf_thrashing.c`).
pub const EPOCH_DEFAULT: u32 = 2000;
/// Time a page stays pinned, in lapses; 0 pins forever (`UVM_PERF_THRASHING_PIN_DEFAULT`,
/// `uvm_perf_thrashing.c`).
pub const PIN_DEFAULT: u32 = 300;
/// Epoch resets a block may have (`UVM_PERF_THRASHING_MAX_RESETS_DEFAULT`,
/// `uvm_perf_thrashing.c`).
pub const MAX_RESETS_DEFAULT: u32 = 4;
/// The unpin worker also takes pages whose deadline is this close (`TIMER_GRANULARITY_NS`,
/// `uvm_perf_thrashing.c`).
pub const UNPIN_GRANULARITY_NS: u64 = 20_000;
/// Page time stamps drop their low 6 bits (58-bit fields, `PAGE_THRASHING_LAST_TIME_STAMP_BITS`).
const STAMP_SHIFT: u32 = 6;

/// UVM's module parameters for thrashing (`uvm_perf_thrashing_*`), in their units: the lapse
/// in microseconds, nap, epoch and pin as multiples of the lapse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrashingTunables {
    pub enable: bool,
    pub threshold: u32,
    pub pin_threshold: u32,
    pub lapse_usec: u32,
    pub nap: u32,
    pub epoch: u32,
    pub pin: u32,
    pub max_resets: u32,
}

impl Default for ThrashingTunables {
    fn default() -> Self {
        ThrashingTunables {
            enable: true,
            threshold: THRESHOLD_DEFAULT,
            pin_threshold: PIN_THRESHOLD_DEFAULT,
            lapse_usec: LAPSE_USEC_DEFAULT,
            nap: NAP_DEFAULT,
            epoch: EPOCH_DEFAULT,
            pin: PIN_DEFAULT,
            max_resets: MAX_RESETS_DEFAULT,
        }
    }
}

/// The thrashing policy of a va_space, in nanoseconds (`va_space_thrashing_info_t::params`).
/// Fields are public for reading and tests; any value is safe (nothing here panics), but
/// [`ThrashingConfig::new`] is the way to build one from outside input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThrashingConfig {
    pub enabled: bool,
    pub threshold: u8,
    pub pin_threshold: u8,
    pub lapse_ns: u64,
    pub nap_ns: u64,
    pub epoch_ns: u64,
    /// 0 pins forever.
    pub pin_ns: u64,
    pub max_resets: u32,
}

impl Default for ThrashingConfig {
    fn default() -> Self {
        let lapse_ns = u64::from(LAPSE_USEC_DEFAULT) * 1000;
        ThrashingConfig {
            enabled: true,
            threshold: THRESHOLD_DEFAULT as u8,
            pin_threshold: PIN_THRESHOLD_DEFAULT as u8,
            lapse_ns,
            nap_ns: lapse_ns * u64::from(NAP_DEFAULT),
            epoch_ns: lapse_ns * u64::from(EPOCH_DEFAULT),
            pin_ns: lapse_ns * u64::from(PIN_DEFAULT),
            max_resets: MAX_RESETS_DEFAULT,
        }
    }
}

impl ThrashingConfig {
    /// Checks the ranges `uvm_perf_thrashing_init` checks: threshold `1..=7`, pin_threshold
    /// `1..=255`, lapse, nap and epoch nonzero, nap at most 100 lapses.
    pub fn new(t: &ThrashingTunables) -> Result<Self, ConfigError> {
        const U32_MAX: u64 = u32::MAX as u64;
        ConfigError::check("uvm_perf_thrashing_threshold", t.threshold.into(), 1, THRESHOLD_MAX.into())?;
        ConfigError::check("uvm_perf_thrashing_pin_threshold", t.pin_threshold.into(), 1, PIN_THRESHOLD_MAX.into())?;
        ConfigError::check("uvm_perf_thrashing_lapse_usec", t.lapse_usec.into(), 1, U32_MAX)?;
        ConfigError::check("uvm_perf_thrashing_nap", t.nap.into(), 1, NAP_MAX.into())?;
        ConfigError::check("uvm_perf_thrashing_epoch", t.epoch.into(), 1, U32_MAX)?;
        let lapse_ns = u64::from(t.lapse_usec) * 1000;
        Ok(ThrashingConfig {
            enabled: t.enable,
            threshold: t.threshold as u8,
            pin_threshold: t.pin_threshold as u8,
            lapse_ns,
            nap_ns: lapse_ns.saturating_mul(t.nap.into()),
            epoch_ns: lapse_ns.saturating_mul(t.epoch.into()),
            pin_ns: lapse_ns.saturating_mul(t.pin.into()),
            max_resets: t.max_resets,
        })
    }
}

/// Why pages migrated (`uvm_make_resident_cause_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrationCause {
    ReplayableFault,
    NonReplayableFault,
    AccessCounter,
    Prefetch,
    Eviction,
    ApiTools,
    ApiMigrate,
    ApiSetRangeGroup,
    ApiHint,
}

impl MigrationCause {
    /// Causes the heuristics act on; the rest are the user's or the driver's decisions, which
    /// override them.
    pub const fn counts_for_thrashing(self) -> bool {
        matches!(self, MigrationCause::ReplayableFault | MigrationCause::AccessCounter | MigrationCause::Prefetch)
    }
}

/// Whether a migration leaves the source copy (`uvm_va_block_transfer_mode_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransferMode {
    Move,
    Copy,
}

/// A perf event on some pages of the block (`UVM_PERF_EVENT_MIGRATION`,
/// `UVM_PERF_EVENT_REVOCATION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrashingEvent {
    /// The pages became resident on the event's processor (the final destination, not a
    /// staging copy).
    Migration { cause: MigrationCause, mode: TransferMode, read_duplication: bool },
    /// The event's processor lost access permissions to the pages.
    Revocation,
}

/// What to do about a fault on a page (`uvm_perf_thrashing_hint_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThrashingHint {
    None,
    /// Do not service the fault before `end_ns`.
    Throttle {
        end_ns: u64,
    },
    /// Keep the page on `residency` and map `processors` to it remotely, until `end_ns`
    /// (`u64::MAX` when pins do not expire).
    Pin {
        residency: ProcessorId,
        processors: ProcessorMask,
        end_ns: u64,
    },
}

/// Counters for statistics (UVM's per-processor `thrashing_stats` procfs file, kept here per
/// block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThrashingStats {
    /// Times a page reached the threshold.
    pub thrashing_detected: u64,
    /// Throttle hints given.
    pub throttles: u64,
    /// Pin hints to the requester itself.
    pub pins_local: u64,
    /// Pin hints to another processor.
    pub pins_remote: u64,
}

/// How the va_space's processors reach each other's memory, in the mask form thrashing asks
/// for (`va_space->can_access`, `accessible_from`, `has_nvlink`, `has_native_atomics`). Every
/// [`crate::policy::ProcessorTopology`] has this view; there is one source of the facts.
pub trait TopologyMasks {
    /// Processors that can map memory resident on `location`.
    fn accessible_from(&self, location: ProcessorId) -> ProcessorMask;
    /// Locations whose memory `processor` can map.
    fn can_access(&self, processor: ProcessorId) -> ProcessorMask;
    /// Processors with an NVLink connection to `location`.
    fn has_nvlink(&self, location: ProcessorId) -> ProcessorMask;
    /// Processors with native atomics on `location`'s memory.
    fn has_native_atomics(&self, location: ProcessorId) -> ProcessorMask;
    /// Whether `processor` has memory to hold pages (`uvm_va_space_processor_has_memory`).
    fn has_memory(&self, processor: ProcessorId) -> bool;

    /// The candidate closest to `to`: itself, then NVLink peers (GPUs before the CPU), then
    /// locations it can access (GPUs first), then the first candidate
    /// (`uvm_processor_mask_find_closest_id`, without indirect peers).
    fn closest(&self, candidates: ProcessorMask, to: ProcessorId) -> Option<ProcessorId> {
        if !is_valid(to) {
            return candidates.first();
        }
        if candidates.test(to) {
            return Some(to);
        }
        let gpu_first = |m: ProcessorMask| m.iter().find(|p| !p.is_cpu()).or(Some(ProcessorId::Cpu));
        let linked = candidates.and(self.has_nvlink(to));
        if !linked.is_empty() {
            return gpu_first(linked);
        }
        let reachable = candidates.and(self.can_access(to));
        if !reachable.is_empty() {
            return gpu_first(reachable);
        }
        candidates.first()
    }
}

const PROCESSORS: usize = MAX_GPUS + 1;

/// A [`crate::policy::ProcessorTopology`] written out as tables, for callers without a va_space of their own
/// and for tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessTable {
    can_access: [ProcessorMask; PROCESSORS],
    nvlink: [ProcessorMask; PROCESSORS],
    native_atomics: [ProcessorMask; PROCESSORS],
    with_memory: ProcessorMask,
}

impl Default for AccessTable {
    fn default() -> Self {
        AccessTable::new()
    }
}

impl AccessTable {
    /// Nobody reaches anybody; only the CPU has memory.
    pub fn new() -> Self {
        AccessTable {
            can_access: [ProcessorMask::empty(); PROCESSORS],
            nvlink: [ProcessorMask::empty(); PROCESSORS],
            native_atomics: [ProcessorMask::empty(); PROCESSORS],
            with_memory: ProcessorMask::of(ProcessorId::Cpu),
        }
    }

    /// Lets `from` map memory on `to`.
    pub fn allow_access(&mut self, from: ProcessorId, to: ProcessorId) -> &mut Self {
        if let (Some(row), true) = (self.can_access.get_mut(from.index()), is_valid(to)) {
            row.set(to);
        }
        self
    }

    /// An NVLink connection between `a` and `b`, both ways.
    pub fn link_nvlink(&mut self, a: ProcessorId, b: ProcessorId) -> &mut Self {
        if is_valid(a) && is_valid(b) {
            self.nvlink[a.index()].set(b);
            self.nvlink[b.index()].set(a);
        }
        self
    }

    /// Native atomics from `from` on `to`'s memory.
    pub fn allow_native_atomics(&mut self, from: ProcessorId, to: ProcessorId) -> &mut Self {
        if let (Some(row), true) = (self.native_atomics.get_mut(to.index()), is_valid(from)) {
            row.set(from);
        }
        self
    }

    pub fn set_has_memory(&mut self, processor: ProcessorId, has_memory: bool) -> &mut Self {
        if has_memory {
            self.with_memory.set(processor);
        } else if is_valid(processor) {
            self.with_memory.clear(processor);
        }
        self
    }
}

impl crate::policy::ProcessorTopology for AccessTable {
    fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool {
        self.can_access.get(from.index()).is_some_and(|row| row.test(to))
    }

    fn has_memory(&self, processor: ProcessorId) -> bool {
        is_valid(processor) && self.with_memory.test(processor)
    }

    fn has_nvlink(&self, a: ProcessorId, b: ProcessorId) -> bool {
        self.nvlink.get(b.index()).is_some_and(|row| row.test(a))
    }

    fn has_native_atomics(&self, from: ProcessorId, to: ProcessorId) -> bool {
        self.native_atomics.get(to.index()).is_some_and(|row| row.test(from))
    }
}

/// Every processor id a mask can hold.
fn all_processors() -> impl Iterator<Item = ProcessorId> {
    (0..PROCESSORS).filter_map(ProcessorId::from_index)
}

impl<T: crate::policy::ProcessorTopology + ?Sized> TopologyMasks for T {
    fn accessible_from(&self, location: ProcessorId) -> ProcessorMask {
        if !is_valid(location) {
            return ProcessorMask::empty();
        }
        all_processors().filter(|&p| crate::policy::ProcessorTopology::can_access(self, p, location)).collect()
    }

    fn can_access(&self, processor: ProcessorId) -> ProcessorMask {
        all_processors().filter(|&l| crate::policy::ProcessorTopology::can_access(self, processor, l)).collect()
    }

    fn has_nvlink(&self, location: ProcessorId) -> ProcessorMask {
        all_processors().filter(|&p| crate::policy::ProcessorTopology::has_nvlink(self, p, location)).collect()
    }

    fn has_native_atomics(&self, location: ProcessorId) -> ProcessorMask {
        all_processors().filter(|&p| crate::policy::ProcessorTopology::has_native_atomics(self, p, location)).collect()
    }

    fn has_memory(&self, processor: ProcessorId) -> bool {
        crate::policy::ProcessorTopology::has_memory(self, processor)
    }
}

/// What [`BlockThrashing::get_hint`] needs to know about the block and the va_space.
#[derive(Clone, Copy)]
pub struct HintContext<'a> {
    /// The preferred location of the page's policy.
    pub preferred_location: Option<ProcessorId>,
    /// Processors holding a copy of the page now.
    pub resident_on: ProcessorMask,
    pub topology: &'a dyn TopologyMasks,
}

/// Thrashing state of one page (`page_thrashing_info_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageThrashing {
    /// Last event, in 64 ns units; 0 when none.
    last_stamp: u64,
    has_migration_events: bool,
    has_revocation_events: bool,
    /// Consecutive events within a lapse, saturating at 7.
    events: u8,
    pinned: bool,
    /// End of the current throttling period, in 64 ns units.
    throttling_end_stamp: u64,
    /// Throttles since the page was last pinned, saturating at 255.
    throttling_count: u8,
    processors: ProcessorMask,
    throttled: ProcessorMask,
    pinned_residency: Option<ProcessorId>,
    do_not_throttle: Option<ProcessorId>,
    /// When the pin expires (UVM's `pinned_page_t::deadline`); `None` when pinned forever.
    unpin_deadline_ns: Option<u64>,
}

impl PageThrashing {
    /// The last event's time, at 64 ns resolution; 0 when none.
    pub fn last_event_ns(&self) -> u64 {
        self.last_stamp << STAMP_SHIFT
    }
    fn set_last_event(&mut self, now_ns: u64) {
        self.last_stamp = now_ns >> STAMP_SHIFT;
    }
    /// The end of the throttling period, at 64 ns resolution; 0 when none.
    pub fn throttling_end_ns(&self) -> u64 {
        self.throttling_end_stamp << STAMP_SHIFT
    }
    fn set_throttling_end(&mut self, ns: u64) {
        self.throttling_end_stamp = ns >> STAMP_SHIFT;
    }
    pub fn events(&self) -> u8 {
        self.events
    }
    pub fn has_migration_events(&self) -> bool {
        self.has_migration_events
    }
    pub fn has_revocation_events(&self) -> bool {
        self.has_revocation_events
    }
    pub fn pinned(&self) -> bool {
        self.pinned
    }
    pub fn pinned_residency(&self) -> Option<ProcessorId> {
        self.pinned_residency
    }
    pub fn throttling_count(&self) -> u8 {
        self.throttling_count
    }
    /// Processors that took part in the thrashing.
    pub fn processors(&self) -> ProcessorMask {
        self.processors
    }
    /// Processors throttled in the current period.
    pub fn throttled(&self) -> ProcessorMask {
        self.throttled
    }
    pub fn do_not_throttle(&self) -> Option<ProcessorId> {
        self.do_not_throttle
    }
    pub fn unpin_deadline_ns(&self) -> Option<u64> {
        self.unpin_deadline_ns
    }

    /// Stops throttling everybody (`thrashing_throttling_reset_page`).
    fn end_all_throttling(&mut self) {
        self.throttled = ProcessorMask::empty();
        self.set_throttling_end(0);
    }

    /// `thrashing_throttle_end_processor`.
    fn end_throttling(&mut self, processor: ProcessorId) {
        self.throttled.clear(processor);
        if self.throttled.is_empty() {
            self.set_throttling_end(0);
        }
    }

    /// Starts a new throttling period if the last one is over, picking who may run in it
    /// (`thrashing_throttle_update`). The same processor is not picked twice in a row.
    fn update_throttling(&mut self, config: &ThrashingConfig, requester: ProcessorId, now_ns: u64) {
        if now_ns > self.throttling_end_ns() {
            self.set_throttling_end(now_ns.saturating_add(config.nap_ns));
            self.do_not_throttle = if self.do_not_throttle == Some(requester) { None } else { Some(requester) };
        } else if self.do_not_throttle.is_none() {
            self.do_not_throttle = Some(requester);
        }
    }

    /// Whether every thrashing processor can map memory on `to`.
    fn all_can_access(&self, topology: &dyn TopologyMasks, to: Option<ProcessorId>) -> bool {
        to.is_some_and(|to| self.processors.andnot(topology.accessible_from(to)).is_empty())
    }

    /// Whether every thrashing processor reaches `to` over NVLink with native atomics.
    fn all_have_fast_access(&self, topology: &dyn TopologyMasks, to: Option<ProcessorId>) -> bool {
        to.is_some_and(|to| {
            let fast = topology.has_nvlink(to).and(topology.has_native_atomics(to)).or(ProcessorMask::of(to));
            self.processors.andnot(fast).is_empty()
        })
    }
}

/// A hint before its bookkeeping is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    None,
    Throttle,
    Pin(ProcessorId),
}

/// Block-wide marks kept next to the page table, split out so both can be borrowed at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct BlockMarks {
    thrashing_pages: PageMask,
    num_thrashing_pages: u16,
    pinned_pages: PageMask,
    /// Pins ever made in the block. UVM's `pinned_pages.count` is only ever incremented, so a
    /// block that pinned once is never epoch-reset; kept that way.
    pins: u32,
    /// New throttles (a processor entering the throttled set).
    throttling_count: u32,
    stats: ThrashingStats,
}

impl BlockMarks {
    /// `thrashing_unpin_page`.
    fn unpin(&mut self, entry: &mut PageThrashing, page: PageIndex) {
        entry.pinned_residency = None;
        entry.pinned = false;
        entry.unpin_deadline_ns = None;
        self.pinned_pages.clear(page);
    }

    /// Forgets a page's thrashing (`thrashing_reset_page`). Its throttle count and
    /// do_not_throttle processor survive, as in UVM.
    fn reset_page(&mut self, entry: &mut PageThrashing, page: PageIndex) {
        entry.end_all_throttling();
        if entry.pinned {
            self.unpin(entry, page);
        }
        entry.last_stamp = 0;
        entry.has_migration_events = false;
        entry.has_revocation_events = false;
        entry.events = 0;
        entry.processors = ProcessorMask::empty();
        if self.thrashing_pages.clear(page) {
            self.num_thrashing_pages = self.num_thrashing_pages.saturating_sub(1);
        }
    }

    /// `thrashing_throttle_processor`.
    fn throttle(&mut self, entry: &mut PageThrashing, processor: ProcessorId) {
        if !entry.throttled.test(processor) {
            entry.throttled.set(processor);
            if !entry.pinned {
                entry.throttling_count = entry.throttling_count.saturating_add(1);
            }
            self.throttling_count = self.throttling_count.saturating_add(1);
        }
    }

    /// `thrashing_pin_page`.
    fn pin(
        &mut self,
        config: &ThrashingConfig,
        entry: &mut PageThrashing,
        page: PageIndex,
        residency: ProcessorId,
        resident_on: ProcessorMask,
        now_ns: u64,
    ) {
        if !entry.pinned || !resident_on.test(residency) {
            entry.end_all_throttling();
        }
        if !entry.pinned {
            entry.unpin_deadline_ns = (config.pin_ns > 0).then(|| now_ns.saturating_add(config.pin_ns));
            entry.throttling_count = 0;
            entry.pinned = true;
            self.pins = self.pins.saturating_add(1);
            self.pinned_pages.set(page);
        }
        entry.pinned_residency = Some(residency);
    }
}

/// Thrashing state of one va_block (`block_thrashing_info_t`). Start with
/// [`BlockThrashing::new`]; drop it (or start a new one) when the block is destroyed, split or
/// thrashing is turned off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockThrashing {
    /// Per-page state, one entry per page of the 2 MiB frame, once potential thrashing is seen.
    pages: Option<Vec<PageThrashing>>,
    marks: BlockMarks,
    reset_count: u32,
    last_processor: Option<ProcessorId>,
    last_time_ns: u64,
    last_thrashing_time_ns: u64,
}

fn is_valid(processor: ProcessorId) -> bool {
    processor.index() <= MAX_GPUS
}

/// Time from `then` to `now`; a clock that went backwards reads as "very long".
fn elapsed(now_ns: u64, then_ns: u64) -> u64 {
    now_ns.checked_sub(then_ns).unwrap_or(u64::MAX)
}

impl BlockThrashing {
    pub fn new() -> Self {
        BlockThrashing::default()
    }

    /// Whether the per-page table exists (two processors touched the block within a lapse).
    pub fn tracks_pages(&self) -> bool {
        self.pages.is_some()
    }

    /// One page's state, once the per-page table exists.
    pub fn page(&self, page: PageIndex) -> Option<&PageThrashing> {
        self.pages.as_ref()?.get(page)
    }

    /// Pages detected as thrashing (`uvm_perf_thrashing_get_thrashing_pages`); prefetch leaves
    /// them out.
    pub fn thrashing_pages(&self) -> PageMask {
        self.marks.thrashing_pages
    }

    pub fn pinned_pages(&self) -> PageMask {
        self.marks.pinned_pages
    }

    /// Processors thrashing on `page` (`uvm_perf_thrashing_get_thrashing_processors`).
    pub fn thrashing_processors(&self, page: PageIndex) -> ProcessorMask {
        self.page(page).map_or(ProcessorMask::empty(), |p| p.processors)
    }

    pub fn stats(&self) -> ThrashingStats {
        self.marks.stats
    }

    /// Processors that entered a throttled set, over the block's life.
    pub fn throttling_count(&self) -> u32 {
        self.marks.throttling_count
    }

    /// Epoch resets so far.
    pub fn reset_count(&self) -> u32 {
        self.reset_count
    }

    /// Records a migration to, or a revocation from, `processor` of the pages in `region`
    /// (`thrashing_event_cb`). Migrations for causes the heuristics do not own, copies and
    /// read-duplicated ranges clear the region's thrashing state instead; evictions are
    /// ignored.
    pub fn record_event(
        &mut self,
        config: &ThrashingConfig,
        region: PageRegion,
        processor: ProcessorId,
        event: ThrashingEvent,
        now_ns: u64,
    ) {
        if !config.enabled || !is_valid(processor) {
            return;
        }
        let region = PageRegion::new(region.first, region.outer);

        let is_migration = match event {
            ThrashingEvent::Migration { cause: MigrationCause::Eviction, .. } => return,
            ThrashingEvent::Migration { cause, mode, read_duplication } => {
                if !cause.counts_for_thrashing() || mode != TransferMode::Move || read_duplication {
                    self.reset_region(region);
                    return;
                }
                // Migrating pinned pages to their pinned residency is the pin itself.
                let fault_driven = matches!(cause, MigrationCause::ReplayableFault | MigrationCause::AccessCounter);
                if fault_driven && self.pages.is_some() && self.marks.pinned_pages.region_full(region) {
                    return;
                }
                true
            }
            ThrashingEvent::Revocation => false,
        };

        self.apply_events(config, region.pages(), processor, is_migration, now_ns);
    }

    /// [`Self::record_event`] for each page of `pages` on its own, in one pass: the same
    /// state as one call per page with the same processor and time (a pinned page is left
    /// alone page by page, as a one-page region is), without a call per page.
    pub fn record_page_events(
        &mut self,
        config: &ThrashingConfig,
        pages: &PageMask,
        processor: ProcessorId,
        event: ThrashingEvent,
        now_ns: u64,
    ) {
        if !config.enabled || !is_valid(processor) || pages.is_empty() {
            return;
        }
        let is_migration = match event {
            ThrashingEvent::Migration { cause: MigrationCause::Eviction, .. } => return,
            ThrashingEvent::Migration { cause, mode, read_duplication } => {
                if !cause.counts_for_thrashing() || mode != TransferMode::Move || read_duplication {
                    for r in pages.regions() {
                        self.reset_region(r);
                    }
                    return;
                }
                true
            }
            ThrashingEvent::Revocation => false,
        };
        let fault_driven = matches!(
            event,
            ThrashingEvent::Migration { cause: MigrationCause::ReplayableFault | MigrationCause::AccessCounter, .. }
        );
        let pages = if is_migration && fault_driven && self.pages.is_some() {
            pages.andnot(&self.marks.pinned_pages)
        } else {
            *pages
        };
        if pages.is_empty() {
            return;
        }
        self.apply_events(config, pages.iter(), processor, is_migration, now_ns);
    }

    /// The events of one migration or revocation to `processor` on `pages`: the block's page
    /// tracking starts when a second processor touches it within the lapse; each page counts
    /// the event, becomes thrashing at the threshold, or is forgotten after a quiet lapse.
    fn apply_events(
        &mut self,
        config: &ThrashingConfig,
        pages: impl Iterator<Item = PageIndex>,
        processor: ProcessorId,
        is_migration: bool,
        now_ns: u64,
    ) {
        if self.pages.is_none() {
            let second_processor_within_lapse = self.last_time_ns != 0
                && self.last_processor != Some(processor)
                && elapsed(now_ns, self.last_time_ns) <= config.lapse_ns;
            if second_processor_within_lapse {
                self.pages = Some(vec![PageThrashing::default(); PAGES_PER_BLOCK]);
            }
        }

        if let Some(state) = self.pages.as_mut() {
            for page in pages {
                let Some(entry) = state.get_mut(page) else { continue };
                let last = entry.last_event_ns();
                entry.processors.set(processor);
                entry.set_last_event(now_ns);
                if last == 0 {
                    continue;
                }
                if elapsed(now_ns, last) <= config.lapse_ns {
                    entry.events = entry.events.saturating_add(1).min(THRESHOLD_MAX as u8);
                    if entry.events == config.threshold {
                        if self.marks.thrashing_pages.set(page) {
                            self.marks.num_thrashing_pages = self.marks.num_thrashing_pages.saturating_add(1);
                        }
                        self.marks.stats.thrashing_detected = self.marks.stats.thrashing_detected.saturating_add(1);
                    }
                    if entry.events >= config.threshold {
                        self.last_thrashing_time_ns = now_ns;
                    }
                    if is_migration {
                        entry.has_migration_events = true;
                    } else {
                        entry.has_revocation_events = true;
                    }
                } else if entry.events >= config.threshold && !entry.pinned {
                    self.marks.reset_page(entry, page);
                }
            }
        }

        self.last_time_ns = now_ns;
        self.last_processor = Some(processor);
    }

    /// Clears the thrashing state of the thrashing pages in `region`
    /// (`thrashing_reset_pages_in_region`, used on munmap and on migrations the heuristics do
    /// not own). Remote mappings of pinned pages are the caller's to remove first.
    pub fn reset_region(&mut self, region: PageRegion) {
        let Some(pages) = self.pages.as_mut() else { return };
        let region = PageRegion::new(region.first, region.outer);
        for page in self.marks.thrashing_pages.within(region).iter() {
            if let Some(entry) = pages.get_mut(page) {
                self.marks.reset_page(entry, page);
            }
        }
    }

    /// The earliest unpin deadline of a pinned page, for the caller's timer.
    pub fn next_unpin_deadline(&self) -> Option<u64> {
        let pages = self.pages.as_ref()?;
        self.marks.pinned_pages.iter().filter_map(|p| pages.get(p)?.unpin_deadline_ns).min()
    }

    /// Unpins and forgets the pages whose pin expired by `now_ns` (within
    /// [`UNPIN_GRANULARITY_NS`]), as UVM's unpin worker does (`thrashing_unpin_pages` resets
    /// the page), and returns them. Mappings are not this module's: UVM leaves them as they
    /// are, and the page's next fault is judged as a first one.
    pub fn unpin_expired(&mut self, now_ns: u64) -> PageMask {
        let mut unpinned = PageMask::new();
        let Some(pages) = self.pages.as_mut() else { return unpinned };
        let horizon = now_ns.saturating_add(UNPIN_GRANULARITY_NS);
        let pinned = self.marks.pinned_pages;
        for page in pinned.iter() {
            let Some(entry) = pages.get_mut(page) else { continue };
            if entry.unpin_deadline_ns.is_some_and(|deadline| deadline <= horizon) {
                self.marks.reset_page(entry, page);
                unpinned.set(page);
            }
        }
        unpinned
    }

    /// What to do about a fault by `requester` on `page` (`uvm_perf_thrashing_get_hint`).
    /// Updates the throttling and pinning state as UVM does: a throttled requester stays
    /// throttled until its nap ends, the first requester of a throttling period runs, the
    /// others are throttled, and the one that runs is pinned after `pin_threshold` throttles.
    pub fn get_hint(
        &mut self,
        config: &ThrashingConfig,
        page: PageIndex,
        requester: ProcessorId,
        now_ns: u64,
        ctx: &HintContext<'_>,
    ) -> ThrashingHint {
        if !config.enabled || !is_valid(requester) {
            return ThrashingHint::None;
        }
        if self.pages.is_none() {
            return ThrashingHint::None;
        }

        if self.last_thrashing_time_ns != 0
            && elapsed(now_ns, self.last_thrashing_time_ns) > config.epoch_ns
            && self.marks.pins == 0
            && self.reset_count < config.max_resets
        {
            self.epoch_reset();
            return ThrashingHint::None;
        }

        let Some(entry) = self.pages.as_mut().and_then(|pages| pages.get_mut(page)) else {
            return ThrashingHint::None;
        };
        if entry.events < config.threshold {
            return ThrashingHint::None;
        }

        let decision = 'decide: {
            if entry.throttled.test(requester) {
                if now_ns < entry.throttling_end_ns() && entry.do_not_throttle != Some(requester) {
                    break 'decide Decision::Throttle;
                }
                entry.end_throttling(requester);
            }

            if elapsed(now_ns, entry.last_event_ns()) > config.lapse_ns && !entry.pinned {
                return ThrashingHint::None;
            }

            entry.processors.set(requester);
            entry.update_throttling(config, requester, now_ns);

            if entry.pinned && entry.has_revocation_events && entry.do_not_throttle != Some(requester) {
                // Revocation thrashing (system-wide atomics) on a pinned page: nothing left to
                // move, only throttling helps.
                Decision::Throttle
            } else {
                migration_decision(config, entry, requester, ctx)
            }
        };

        let marks = &mut self.marks;
        match decision {
            Decision::None => ThrashingHint::None,
            Decision::Throttle => {
                marks.throttle(entry, requester);
                marks.stats.throttles = marks.stats.throttles.saturating_add(1);
                ThrashingHint::Throttle { end_ns: entry.throttling_end_ns() }
            }
            Decision::Pin(residency) => {
                marks.pin(config, entry, page, residency, ctx.resident_on, now_ns);
                if residency == requester {
                    marks.stats.pins_local = marks.stats.pins_local.saturating_add(1);
                } else {
                    marks.stats.pins_remote = marks.stats.pins_remote.saturating_add(1);
                }
                ThrashingHint::Pin {
                    residency,
                    processors: entry.processors,
                    end_ns: entry.unpin_deadline_ns.unwrap_or(u64::MAX),
                }
            }
        }
    }

    /// Drops the per-page table after a quiet epoch.
    fn epoch_reset(&mut self) {
        self.reset_count = self.reset_count.saturating_add(1);
        self.pages = None;
        self.marks.num_thrashing_pages = 0;
        self.marks.thrashing_pages = PageMask::new();
        self.last_processor = None;
        self.last_time_ns = 0;
        self.last_thrashing_time_ns = 0;
    }
}

/// The hint for a page thrashing through migrations (`get_hint_for_migration_thrashing`).
fn migration_decision(
    config: &ThrashingConfig,
    entry: &PageThrashing,
    requester: ProcessorId,
    ctx: &HintContext<'_>,
) -> Decision {
    let topology = ctx.topology;
    let preferred = ctx.preferred_location.filter(|&p| is_valid(p));
    let closest_resident = topology.closest(ctx.resident_on, requester).filter(|&p| is_valid(p));
    let preferred_is_thrashing = preferred.is_some_and(|p| entry.processors.test(p));
    let do_not_throttle = entry.do_not_throttle;
    let pinned_enough = entry.throttling_count >= config.pin_threshold;

    let decision = if let Some(preferred) = preferred.filter(|&p| entry.all_can_access(topology, Some(p))) {
        // Every thrashing processor can map the preferred location: settle there.
        Decision::Pin(preferred)
    } else if !preferred_is_thrashing && entry.all_have_fast_access(topology, closest_resident) {
        match closest_resident {
            // GPUs map CPU memory poorly; the CPU may cache GPU memory instead.
            Some(ProcessorId::Cpu) if requester.is_cpu() => Decision::None,
            Some(ProcessorId::Cpu) => Decision::Pin(requester),
            Some(location) => Decision::Pin(location),
            None => Decision::None,
        }
    } else if Some(requester) == preferred {
        if entry.pinned {
            if preferred == entry.pinned_residency || preferred == do_not_throttle {
                Decision::Pin(requester)
            } else {
                Decision::Throttle
            }
        } else if preferred != do_not_throttle {
            Decision::Throttle
        } else if pinned_enough {
            Decision::Pin(requester)
        } else {
            Decision::None
        }
    } else if entry.pinned {
        if Some(requester) == do_not_throttle {
            if entry.all_can_access(topology, Some(requester)) {
                Decision::Pin(requester)
            } else {
                let common =
                    entry.processors.iter().map(|p| topology.can_access(p)).reduce(|a, b| a.and(b)).unwrap_or_default();
                Decision::Pin(topology.closest(common, requester).filter(|&p| is_valid(p)).unwrap_or(requester))
            }
        } else {
            match entry.pinned_residency {
                Some(residency) if topology.accessible_from(residency).test(requester) => Decision::Pin(residency),
                _ => Decision::Throttle,
            }
        }
    } else if Some(requester) != do_not_throttle {
        Decision::Throttle
    } else if pinned_enough {
        Decision::Pin(requester)
    } else {
        Decision::None
    };

    match decision {
        Decision::Pin(residency) if !topology.has_memory(residency) => Decision::Pin(ProcessorId::Cpu),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    const T0: u64 = 1_000 * MS;
    const GPU0: ProcessorId = ProcessorId::Gpu(0);
    const GPU1: ProcessorId = ProcessorId::Gpu(1);
    const CPU: ProcessorId = ProcessorId::Cpu;
    const PAGE: PageIndex = 7;

    const FAULT: ThrashingEvent = ThrashingEvent::Migration {
        cause: MigrationCause::ReplayableFault,
        mode: TransferMode::Move,
        read_duplication: false,
    };

    fn stamp(ns: u64) -> u64 {
        ns & !63
    }

    fn migrate(b: &mut BlockThrashing, to: ProcessorId, now: u64) {
        b.record_event(&ThrashingConfig::default(), PageRegion::page(PAGE), to, FAULT, now);
    }

    /// `count` migrations of PAGE alternating GPU0, CPU, GPU0, ... `gap` apart from `start`;
    /// returns the time of the last.
    fn ping_pong(b: &mut BlockThrashing, count: u64, start: u64, gap: u64) -> u64 {
        for i in 0..count {
            migrate(b, if i % 2 == 0 { GPU0 } else { CPU }, start + i * gap);
        }
        start + (count - 1) * gap
    }

    /// A PCIe system: GPU0 maps CPU memory, the CPU cannot map GPU memory.
    fn pcie() -> AccessTable {
        let mut t = AccessTable::new();
        t.allow_access(CPU, CPU).allow_access(GPU0, GPU0).allow_access(GPU0, CPU).set_has_memory(GPU0, true);
        t
    }

    fn ctx<'a>(topology: &'a AccessTable, preferred: Option<ProcessorId>, resident: ProcessorId) -> HintContext<'a> {
        HintContext { preferred_location: preferred, resident_on: ProcessorMask::of(resident), topology }
    }

    fn hint(b: &mut BlockThrashing, requester: ProcessorId, now: u64, ctx: &HintContext<'_>) -> ThrashingHint {
        b.get_hint(&ThrashingConfig::default(), PAGE, requester, now, ctx)
    }

    #[test]
    fn defaults_and_ranges() {
        let c = ThrashingConfig::default();
        assert_eq!((c.threshold, c.pin_threshold, c.max_resets, c.enabled), (3, 10, 4, true));
        assert_eq!((c.lapse_ns, c.nap_ns, c.epoch_ns, c.pin_ns), (500 * US, 500 * US, 1_000 * MS, 150 * MS));
        assert_eq!(ThrashingConfig::new(&ThrashingTunables::default()), Ok(c));
        let bad = |f: fn(&mut ThrashingTunables)| {
            let mut t = ThrashingTunables::default();
            f(&mut t);
            ThrashingConfig::new(&t).map_err(|e| (e.parameter, e.value))
        };
        assert_eq!(bad(|t| t.threshold = 8), Err(("uvm_perf_thrashing_threshold", 8)));
        assert_eq!(bad(|t| t.threshold = 0), Err(("uvm_perf_thrashing_threshold", 0)));
        assert_eq!(bad(|t| t.pin_threshold = 256), Err(("uvm_perf_thrashing_pin_threshold", 256)));
        assert_eq!(bad(|t| t.lapse_usec = 0), Err(("uvm_perf_thrashing_lapse_usec", 0)));
        assert_eq!(bad(|t| t.nap = 101), Err(("uvm_perf_thrashing_nap", 101)));
        assert_eq!(bad(|t| t.epoch = 0), Err(("uvm_perf_thrashing_epoch", 0)));
        let forever =
            ThrashingConfig::new(&ThrashingTunables { pin: 0, threshold: 7, nap: 100, ..Default::default() }).unwrap();
        assert_eq!((forever.pin_ns, forever.threshold, forever.nap_ns), (0, 7, 50 * MS));
    }

    #[test]
    fn fast_ping_pong_is_detected_on_the_fifth_migration() {
        let mut b = BlockThrashing::new();
        migrate(&mut b, GPU0, T0);
        assert!(!b.tracks_pages(), "one processor alone creates no per-page state");
        migrate(&mut b, CPU, T0 + 100 * US);
        assert!(b.tracks_pages(), "a second processor within a lapse does");
        assert_eq!(b.page(PAGE).map(|p| p.events()), Some(0));
        migrate(&mut b, GPU0, T0 + 200 * US);
        migrate(&mut b, CPU, T0 + 300 * US);
        assert_eq!(b.page(PAGE).map(|p| p.events()), Some(2));
        assert!(b.thrashing_pages().is_empty());
        assert_eq!(b.stats().thrashing_detected, 0);
        migrate(&mut b, GPU0, T0 + 400 * US);
        let p = *b.page(PAGE).unwrap();
        assert_eq!(p.events(), 3);
        assert!(p.has_migration_events() && !p.has_revocation_events());
        assert_eq!(p.last_event_ns(), stamp(T0 + 400 * US));
        assert_eq!(b.thrashing_pages().iter().collect::<Vec<_>>(), [PAGE]);
        assert_eq!(b.thrashing_processors(PAGE), [CPU, GPU0].into_iter().collect());
        assert_eq!(b.stats().thrashing_detected, 1);
        // Further events saturate the 3-bit counter without detecting again.
        ping_pong(&mut b, 10, T0 + 500 * US, 100 * US);
        assert_eq!(b.page(PAGE).map(|p| p.events()), Some(7));
        assert_eq!(b.stats().thrashing_detected, 1);
    }

    #[test]
    fn slow_ping_pong_is_not_thrashing() {
        let mut b = BlockThrashing::new();
        ping_pong(&mut b, 20, T0, 501 * US);
        assert!(!b.tracks_pages());
        assert!(b.thrashing_pages().is_empty());
        // Even with the table in place, events more than a lapse apart never count.
        migrate(&mut b, GPU0, T0 + 100 * MS);
        migrate(&mut b, CPU, T0 + 100 * MS + 100 * US);
        assert!(b.tracks_pages());
        let last = ping_pong(&mut b, 20, T0 + 101 * MS, 600 * US);
        assert_eq!(b.page(PAGE).map(|p| p.events()), Some(0));
        let table = pcie();
        assert_eq!(hint(&mut b, GPU0, last + US, &ctx(&table, Some(CPU), CPU)), ThrashingHint::None);
        assert_eq!(b.stats(), ThrashingStats::default());
    }

    #[test]
    fn thrashing_stops_after_a_lapse_and_resets_on_the_next_event() {
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        assert_eq!(b.thrashing_pages().count(), 1);
        let table = pcie();
        assert_eq!(hint(&mut b, GPU0, last + 501 * US, &ctx(&table, None, GPU0)), ThrashingHint::None);
        assert_eq!(b.thrashing_pages().count(), 1, "a quiet lapse alone does not forget");
        migrate(&mut b, CPU, last + 600 * US);
        assert!(b.thrashing_pages().is_empty());
        assert_eq!(b.page(PAGE).map(|p| (p.events(), p.last_event_ns())), Some((0, 0)));
    }

    #[test]
    fn throttle_until_the_nap_ends() {
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        let table = pcie();
        let c = ctx(&table, None, GPU0);
        // The first requester of a period runs; it becomes the do_not_throttle processor.
        assert_eq!(hint(&mut b, GPU0, last + 10 * US, &c), ThrashingHint::None);
        assert_eq!(b.page(PAGE).unwrap().do_not_throttle(), Some(GPU0));
        let end_ns = stamp(last + 10 * US + 500 * US);
        assert_eq!(hint(&mut b, CPU, last + 20 * US, &c), ThrashingHint::Throttle { end_ns });
        assert_eq!(hint(&mut b, CPU, last + 30 * US, &c), ThrashingHint::Throttle { end_ns });
        assert_eq!(b.stats().throttles, 2);
        assert_eq!(b.throttling_count(), 1, "re-throttling the same processor is not a new throttle");
        assert_eq!(b.page(PAGE).unwrap().throttled(), ProcessorMask::of(CPU));
        assert_eq!(b.page(PAGE).unwrap().throttling_count(), 1);
        // After the nap, with no migration for over a lapse, the page is no longer thrashing.
        assert_eq!(hint(&mut b, CPU, end_ns + 64, &c), ThrashingHint::None);
        assert!(b.page(PAGE).unwrap().throttled().is_empty());
    }

    #[test]
    fn throttles_then_pin_after_ten_throttles() {
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        let table = pcie();
        let mut hints = Vec::new();
        // Each step the page moves to one processor and the other faults on it.
        for step in 0..37u64 {
            let now = last + 450 * US + step * 450 * US;
            let (to, requester) = if step % 2 == 0 { (GPU0, CPU) } else { (CPU, GPU0) };
            migrate(&mut b, to, now);
            hints.push(hint(&mut b, requester, now + 10 * US, &ctx(&table, None, to)));
        }
        let kinds: Vec<char> = hints
            .iter()
            .map(|h| match h {
                ThrashingHint::None => '.',
                ThrashingHint::Throttle { .. } => 'T',
                ThrashingHint::Pin { .. } => 'P',
            })
            .collect();
        let expected: Vec<char> = ".TTT".chars().chain(".TTT".repeat(8).chars()).chain("P".chars()).collect();
        assert_eq!(kinds, expected);
        let pin_time = last + 450 * US + 36 * 450 * US + 10 * US;
        assert_eq!(
            hints[36],
            ThrashingHint::Pin {
                residency: CPU,
                processors: [CPU, GPU0].into_iter().collect(),
                end_ns: pin_time + 150 * MS
            }
        );
        assert_eq!(b.throttling_count(), 10);
        assert_eq!(b.stats(), ThrashingStats { thrashing_detected: 1, throttles: 27, pins_local: 1, pins_remote: 0 });
        let p = b.page(PAGE).unwrap();
        assert!(p.pinned() && p.throttled().is_empty());
        assert_eq!((p.pinned_residency(), p.throttling_count()), (Some(CPU), 0));
        assert_eq!(b.pinned_pages().iter().collect::<Vec<_>>(), [PAGE]);

        // The GPU, which cannot host a page the CPU can map, maps the CPU copy remotely.
        let h = hint(&mut b, GPU0, pin_time + 100 * US, &ctx(&table, None, CPU));
        assert!(matches!(h, ThrashingHint::Pin { residency: CPU, end_ns, .. } if end_ns == pin_time + 150 * MS));
        assert_eq!(b.stats().pins_remote, 1);
    }

    #[test]
    fn pin_to_an_accessible_preferred_location_and_expire() {
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        let table = pcie();
        let now = last + 10 * US;
        let h = hint(&mut b, GPU0, now, &ctx(&table, Some(CPU), GPU0));
        assert_eq!(
            h,
            ThrashingHint::Pin {
                residency: CPU,
                processors: [CPU, GPU0].into_iter().collect(),
                end_ns: now + 150 * MS
            }
        );
        assert_eq!(b.stats().pins_remote, 1);
        assert_eq!(b.next_unpin_deadline(), Some(now + 150 * MS));
        // Pinned pages stay thrashing past the lapse.
        let later = hint(&mut b, CPU, now + 100 * MS, &ctx(&table, Some(CPU), CPU));
        assert!(matches!(later, ThrashingHint::Pin { residency: CPU, .. }));
        assert_eq!(b.stats().pins_local, 1);

        assert!(b.unpin_expired(now + 149 * MS).is_empty());
        assert!(b.unpin_expired(now + 150 * MS - UNPIN_GRANULARITY_NS - 1).is_empty());
        assert_eq!(b.unpin_expired(now + 150 * MS - UNPIN_GRANULARITY_NS).iter().collect::<Vec<_>>(), [PAGE]);
        assert!(b.pinned_pages().is_empty() && b.thrashing_pages().is_empty());
        let p = b.page(PAGE).unwrap();
        assert!(!p.pinned() && p.pinned_residency().is_none() && p.events() == 0);
        assert_eq!(b.next_unpin_deadline(), None);
        assert_eq!(hint(&mut b, GPU0, now + 151 * MS, &ctx(&table, Some(CPU), CPU)), ThrashingHint::None);
    }

    #[test]
    fn pins_forever_when_the_pin_time_is_zero() {
        let config = ThrashingConfig { pin_ns: 0, ..ThrashingConfig::default() };
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        let table = pcie();
        let h = b.get_hint(&config, PAGE, GPU0, last, &ctx(&table, Some(CPU), GPU0));
        assert!(matches!(h, ThrashingHint::Pin { end_ns: u64::MAX, .. }));
        assert_eq!(b.next_unpin_deadline(), None);
        assert!(b.unpin_expired(u64::MAX).is_empty());
        assert_eq!(b.pinned_pages().count(), 1);
    }

    #[test]
    fn nvlink_with_native_atomics_pins_where_the_page_is() {
        let mut table = AccessTable::new();
        table
            .allow_access(GPU0, GPU1)
            .allow_access(GPU1, GPU0)
            .link_nvlink(GPU0, GPU1)
            .allow_native_atomics(GPU0, GPU1)
            .allow_native_atomics(GPU1, GPU0)
            .set_has_memory(GPU0, true)
            .set_has_memory(GPU1, true);
        let mut b = BlockThrashing::new();
        for i in 0..5 {
            migrate(&mut b, if i % 2 == 0 { GPU0 } else { GPU1 }, T0 + i * 100 * US);
        }
        let h = hint(&mut b, GPU0, T0 + 410 * US, &ctx(&table, None, GPU1));
        assert!(matches!(h, ThrashingHint::Pin { residency: GPU1, .. }), "{h:?}");
        assert_eq!(b.stats().pins_remote, 1);

        // Without native atomics it is the ordinary throttling path.
        let mut slow = table.clone();
        slow.native_atomics = [ProcessorMask::empty(); PROCESSORS];
        let mut b = BlockThrashing::new();
        for i in 0..5 {
            migrate(&mut b, if i % 2 == 0 { GPU0 } else { GPU1 }, T0 + i * 100 * US);
        }
        assert_eq!(hint(&mut b, GPU0, T0 + 410 * US, &ctx(&slow, None, GPU1)), ThrashingHint::None);
    }

    #[test]
    fn coherent_cpu_copy_pins_the_gpu_requester_locally() {
        let mut table = AccessTable::new();
        table
            .allow_access(CPU, GPU0)
            .allow_access(GPU0, CPU)
            .link_nvlink(CPU, GPU0)
            .allow_native_atomics(GPU0, CPU)
            .set_has_memory(GPU0, true);
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        assert_eq!(hint(&mut b, CPU, last + 10 * US, &ctx(&table, None, CPU)), ThrashingHint::None);
        let h = hint(&mut b, GPU0, last + 20 * US, &ctx(&table, None, CPU));
        assert!(matches!(h, ThrashingHint::Pin { residency: GPU0, .. }), "{h:?}");
        assert_eq!(b.stats().pins_local, 1);
    }

    #[test]
    fn pin_falls_back_to_the_cpu_without_memory() {
        let mut table = pcie();
        table.allow_access(CPU, GPU1).allow_access(GPU0, GPU1); // GPU1 reachable but without memory
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        let h = hint(&mut b, GPU0, last, &ctx(&table, Some(GPU1), GPU0));
        assert!(matches!(h, ThrashingHint::Pin { residency: CPU, .. }), "{h:?}");
    }

    #[test]
    fn revocation_thrashing_on_a_pinned_page_throttles() {
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        let table = pcie();
        let c = ctx(&table, Some(CPU), CPU);
        assert!(matches!(hint(&mut b, GPU0, last + 10 * US, &c), ThrashingHint::Pin { .. }));
        let config = ThrashingConfig::default();
        b.record_event(&config, PageRegion::page(PAGE), GPU0, ThrashingEvent::Revocation, last + 20 * US);
        assert!(b.page(PAGE).unwrap().has_revocation_events());
        // Pinning ended the first period; GPU0, which ran in it, starts the next one as a
        // throttled processor (the same processor never runs two periods in a row), although
        // the page is pinned. The CPU then runs and keeps its pin.
        assert_eq!(b.page(PAGE).unwrap().do_not_throttle(), Some(GPU0));
        let end_ns = stamp(last + 30 * US + 500 * US);
        assert_eq!(hint(&mut b, GPU0, last + 30 * US, &c), ThrashingHint::Throttle { end_ns });
        assert_eq!(b.page(PAGE).unwrap().do_not_throttle(), None);
        assert!(matches!(hint(&mut b, CPU, last + 40 * US, &c), ThrashingHint::Pin { residency: CPU, .. }));
        assert_eq!(b.page(PAGE).unwrap().do_not_throttle(), Some(CPU));
        assert_eq!(hint(&mut b, GPU0, last + 50 * US, &c), ThrashingHint::Throttle { end_ns });
        assert_eq!(b.page(PAGE).unwrap().throttling_count(), 0, "pinned pages do not count throttles");
        assert_eq!(b.throttling_count(), 1);
    }

    #[test]
    fn epoch_reset_happens_at_most_four_times() {
        let table = pcie();
        let mut b = BlockThrashing::new();
        let mut start = T0;
        for round in 0..5u32 {
            let last = ping_pong(&mut b, 5, start, 100 * US);
            assert_eq!(b.thrashing_pages().count(), 1, "round {round}");
            // Exactly one epoch of quiet is not enough.
            assert_eq!(hint(&mut b, GPU0, last + 1_000 * MS, &ctx(&table, None, GPU0)), ThrashingHint::None);
            assert!(b.tracks_pages());
            assert_eq!(hint(&mut b, GPU0, last + 1_000 * MS + 1, &ctx(&table, None, GPU0)), ThrashingHint::None);
            if round < 4 {
                assert!(!b.tracks_pages() && b.thrashing_pages().is_empty(), "round {round}");
            } else {
                assert!(b.tracks_pages() && b.thrashing_pages().count() == 1, "no fifth reset");
            }
            assert_eq!(b.reset_count(), (round + 1).min(4));
            start = last + 2_000 * MS;
        }
    }

    #[test]
    fn a_block_that_pinned_is_never_epoch_reset() {
        let table = pcie();
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        assert!(matches!(hint(&mut b, GPU0, last, &ctx(&table, Some(CPU), GPU0)), ThrashingHint::Pin { .. }));
        assert_eq!(b.unpin_expired(last + 200 * MS).count(), 1);
        let last = ping_pong(&mut b, 5, last + 300 * MS, 100 * US);
        assert_eq!(b.thrashing_pages().count(), 1);
        hint(&mut b, GPU0, last + 2_000 * MS, &ctx(&table, None, GPU0));
        assert_eq!(b.reset_count(), 0);
        assert!(b.tracks_pages());
    }

    #[test]
    fn other_causes_reset_and_evictions_are_ignored() {
        let config = ThrashingConfig::default();
        let resets = [
            ThrashingEvent::Migration {
                cause: MigrationCause::ApiMigrate,
                mode: TransferMode::Move,
                read_duplication: false,
            },
            ThrashingEvent::Migration {
                cause: MigrationCause::NonReplayableFault,
                mode: TransferMode::Move,
                read_duplication: false,
            },
            ThrashingEvent::Migration {
                cause: MigrationCause::ReplayableFault,
                mode: TransferMode::Copy,
                read_duplication: false,
            },
            ThrashingEvent::Migration {
                cause: MigrationCause::Prefetch,
                mode: TransferMode::Move,
                read_duplication: true,
            },
        ];
        for event in resets {
            let mut b = BlockThrashing::new();
            let last = ping_pong(&mut b, 5, T0, 100 * US);
            assert_eq!(b.thrashing_pages().count(), 1);
            b.record_event(&config, PageRegion::new(0, 16), GPU0, event, last + 10 * US);
            assert!(b.thrashing_pages().is_empty(), "{event:?}");
            let p = b.page(PAGE).unwrap();
            assert_eq!((p.events(), p.processors()), (0, ProcessorMask::empty()), "{event:?}");
        }

        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 5, T0, 100 * US);
        let evict = ThrashingEvent::Migration {
            cause: MigrationCause::Eviction,
            mode: TransferMode::Move,
            read_duplication: false,
        };
        b.record_event(&config, PageRegion::page(PAGE), CPU, evict, last + 10 * US);
        assert_eq!(b.page(PAGE).map(|p| (p.events(), p.last_event_ns())), Some((3, stamp(last))));

        // Pages not yet thrashing keep their count through a reset, as in UVM.
        let mut b = BlockThrashing::new();
        let last = ping_pong(&mut b, 4, T0, 100 * US);
        b.record_event(&config, PageRegion::page(PAGE), GPU0, resets[0], last + 10 * US);
        assert_eq!(b.page(PAGE).map(|p| p.events()), Some(2));
        migrate(&mut b, GPU0, last + 100 * US);
        assert_eq!(b.thrashing_pages().count(), 1);
    }

    #[test]
    fn prefetch_migrations_count_and_disabled_does_nothing() {
        let prefetch = ThrashingEvent::Migration {
            cause: MigrationCause::Prefetch,
            mode: TransferMode::Move,
            read_duplication: false,
        };
        let config = ThrashingConfig::default();
        let mut b = BlockThrashing::new();
        for i in 0..5u64 {
            b.record_event(
                &config,
                PageRegion::new(32, 48),
                if i % 2 == 0 { GPU0 } else { CPU },
                prefetch,
                T0 + i * 100 * US,
            );
        }
        assert_eq!(b.thrashing_pages(), PageMask::from_region(PageRegion::new(32, 48)));
        assert_eq!(b.stats().thrashing_detected, 16);

        let off = ThrashingConfig { enabled: false, ..config };
        let mut b = BlockThrashing::new();
        for i in 0..5u64 {
            b.record_event(&off, PageRegion::page(PAGE), if i % 2 == 0 { GPU0 } else { CPU }, FAULT, T0 + i * 100 * US);
        }
        assert_eq!(b, BlockThrashing::new());
        let table = pcie();
        assert_eq!(b.get_hint(&off, PAGE, GPU0, T0, &ctx(&table, None, CPU)), ThrashingHint::None);
    }

    #[test]
    fn random_inputs_never_panic() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let processors = [CPU, GPU0, GPU1, ProcessorId::Gpu(31), ProcessorId::Gpu(32), ProcessorId::Gpu(200)];
        let causes = [
            MigrationCause::ReplayableFault,
            MigrationCause::AccessCounter,
            MigrationCause::Prefetch,
            MigrationCause::Eviction,
            MigrationCause::ApiHint,
        ];
        let mut table = pcie();
        table.link_nvlink(GPU0, GPU1).allow_native_atomics(GPU0, GPU1).allow_access(GPU0, ProcessorId::Gpu(200));
        for config in [
            ThrashingConfig::default(),
            ThrashingConfig {
                threshold: 0,
                pin_threshold: 0,
                lapse_ns: u64::MAX,
                nap_ns: u64::MAX,
                ..ThrashingConfig::default()
            },
        ] {
            let mut b = BlockThrashing::new();
            let mut now = T0;
            for _ in 0..20_000 {
                now = match next() % 20 {
                    0 => next(),
                    1 => now.wrapping_sub(next() % MS),
                    2 => u64::MAX,
                    _ => now.saturating_add(next() % (700 * US)),
                };
                let page = (next() % 8) as usize * if next() % 50 == 0 { 100 } else { 1 };
                let p = processors[(next() % processors.len() as u64) as usize];
                match next() % 4 {
                    0 | 1 => {
                        let event = if next() % 5 == 0 {
                            ThrashingEvent::Revocation
                        } else {
                            let cause = causes[(next() % causes.len() as u64) as usize];
                            let mode = if next() % 10 == 0 { TransferMode::Copy } else { TransferMode::Move };
                            ThrashingEvent::Migration { cause, mode, read_duplication: next() % 20 == 0 }
                        };
                        let outer =
                            if next() % 10 == 0 { (next() % 600) as usize } else { page + (next() % 3) as usize };
                        let region = PageRegion { first: page, outer };
                        b.record_event(&config, region, p, event, now);
                    }
                    2 => {
                        let resident: ProcessorMask = processors.iter().copied().filter(|_| next() % 2 == 0).collect();
                        let preferred = if next() % 2 == 0 { Some(processors[(next() % 6) as usize]) } else { None };
                        let c = HintContext { preferred_location: preferred, resident_on: resident, topology: &table };
                        b.get_hint(&config, page, p, now, &c);
                    }
                    _ => {
                        b.unpin_expired(now);
                    }
                }
                assert!(b.pinned_pages().is_subset_of(&b.thrashing_pages()) || config.threshold == 0);
                if let Some(entry) = b.page(page) {
                    assert!(entry.throttled().andnot(entry.processors()).is_empty() || config.threshold == 0);
                }
            }
        }
    }
}
