//! The replayable-fault bottom half (`uvm_gpu_service_replayable_faults`,
//! `kernel-open/nvidia-uvm/uvm_gpu_replayable_faults.c`, 535.261.03), from the fault buffer to
//! the replay: fetch a batch (256 by default), coalesce duplicates, sort by instance and
//! address, service per va_block ([`crate::gpu_faults`]), cancel fatal faults precisely, flush
//! the buffer and replay (policy BATCH_FLUSH), up to UVM's limits of batches and throttled
//! batches per bottom half; at least one replay always goes out.
//!
//! Replays and cancels are host methods on a channel (`MEM_OP_A..D`, `nvgpu::host::mem_op`);
//! the caller provides the channel as a [`ReplayChannel`].

use alloc::vec::Vec;
use core::fmt;

use nvgpu::host::mem_op::{CancelVa, CancelVaMode, PdbAperture, ReplayType};

use crate::fault::batch::{batch_flush_mode, FaultBatch, PrefetchFaultControl, ServiceConfig, ServiceProgress};
use crate::fault::buffer::{FaultBufferError, FaultBufferMemory, FaultBufferRegisters, ReplayableFaultBuffer};
use crate::fault::entry::{Aperture, FaultAccess, FaultEntry, InstancePtr};
use crate::gpu_faults::{service_fault_batch, FatalFault, FatalReason, PendingFault};
use crate::service::{PrefetchPolicy, UvmBackend, UvmContext};
use crate::va_block::AccessType;
use nvgpu::hw::vm::PrfFilter;

/// Where replays and cancels are pushed (a channel of the GPU's host class), and waited for.
pub trait ReplayChannel {
    /// Pushes a replay and waits until the GPU has taken it.
    fn replay(&mut self, replay: ReplayType) -> Result<(), ReplayChannelError>;
    /// Pushes a precise cancel and waits until the GPU has taken it.
    fn cancel_va(&mut self, cancel: &CancelVa) -> Result<(), ReplayChannelError>;
}

/// The replay channel failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayChannelError {
    pub what: &'static str,
}

/// The bottom half could not go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BottomHalfError {
    Buffer(FaultBufferError),
    Channel(ReplayChannelError),
}

impl fmt::Display for BottomHalfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BottomHalfError::Buffer(e) => write!(f, "replayable fault buffer: {e}"),
            BottomHalfError::Channel(e) => write!(f, "fault replay channel: {}", e.what),
        }
    }
}

impl From<FaultBufferError> for BottomHalfError {
    fn from(e: FaultBufferError) -> Self {
        BottomHalfError::Buffer(e)
    }
}

impl From<ReplayChannelError> for BottomHalfError {
    fn from(e: ReplayChannelError) -> Self {
        BottomHalfError::Channel(e)
    }
}

/// A cancelled fault, as the application learns of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CancelledFault {
    pub instance: InstancePtr,
    pub engine_id: u16,
    pub fault: FatalFault,
}

/// What one bottom half did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BottomHalfReport {
    pub batches: u32,
    /// Entries fetched (duplicates included).
    pub fetched: usize,
    /// Representatives serviced.
    pub serviced: usize,
    pub replays: u32,
    pub cancelled: Vec<CancelledFault>,
    /// Entries the buffer held that did not decode (skipped, counted).
    pub malformed: usize,
    /// Prefetch faults on addresses outside managed memory: dropped, never cancelled.
    pub invalid_prefetch: u32,
    /// A new `PAGE_FAULT_CTRL_PRF_FILTER` for the caller to write: prefetch faults off after a
    /// batch of mostly invalid prefetches, back on after UVM's lapse.
    pub prefetch_filter: Option<PrfFilter>,
}

/// What a GPU's bottom halves keep from one run to the next.
#[derive(Clone, Copy, Debug)]
pub struct BottomHalfState {
    pub prefetch_faults: PrefetchFaultControl,
}

impl BottomHalfState {
    pub fn new(config: &ServiceConfig) -> Self {
        BottomHalfState { prefetch_faults: PrefetchFaultControl::new(config.reenable_prefetch_faults_lapse_ms) }
    }
}

/// The GPU's identity as the bottom half needs it.
#[derive(Clone, Copy, Debug)]
pub struct FaultingGpu {
    /// The GPU's index in the va_space.
    pub gpu: u8,
    /// `NV_PFAULT_MMU_ENG_ID_GRAPHICS` of the family (the VEID base).
    pub graphics_engine_base: u16,
}

/// UVM's access kind for the service.
pub fn access_of(a: FaultAccess) -> AccessType {
    match a {
        FaultAccess::Prefetch => AccessType::Prefetch,
        FaultAccess::Read => AccessType::Read,
        FaultAccess::Write => AccessType::Write,
        FaultAccess::AtomicWeak => AccessType::AtomicWeak,
        FaultAccess::AtomicStrong => AccessType::AtomicStrong,
    }
}

/// The uTLB a fault came from, as far as the entry tells: GPC clients by (GPC, client), hub
/// clients by client. (UVM derives the uTLB from client-id tables per architecture; two
/// clients of one uTLB count as two here, which only makes coalescing more conservative.)
fn utlb_of(e: &FaultEntry) -> u16 {
    (u16::from(e.gpc) << 8) | u16::from(e.client) | (u16::from(e.client_type as u8) << 15)
}

/// Services the replayable faults waiting in `buffer` for the va_space of `ctx` (whose
/// contexts are the instances `owns` accepts).
#[allow(clippy::too_many_arguments)]
pub fn service_replayable_faults<M: FaultBufferMemory, R: FaultBufferRegisters>(
    buffer: &mut ReplayableFaultBuffer<M, R>,
    ctx: &mut UvmContext,
    gpu: FaultingGpu,
    owns: impl Fn(InstancePtr) -> bool,
    config: &ServiceConfig,
    state: &mut BottomHalfState,
    prefetch: &mut impl PrefetchPolicy,
    backend: &mut impl UvmBackend,
    channel: &mut impl ReplayChannel,
) -> Result<BottomHalfReport, BottomHalfError> {
    let mut report = BottomHalfReport::default();
    let mut progress = ServiceProgress::default();
    while progress.may_fetch_another(config) {
        let fetched = buffer.fetch_batch(config.batch_size)?;
        report.malformed += fetched.malformed.len();
        if fetched.entries.is_empty() {
            if fetched.malformed.is_empty() {
                break;
            }
            progress.finish_batch(false, 0);
            continue;
        }
        report.fetched += fetched.entries.len();
        let batch = FaultBatch::coalesce(&fetched.entries, config.coalesce, gpu.graphics_engine_base, utlb_of);
        let order = batch.preprocess(|instance, _ve| owns(instance).then_some(0u8));
        buffer.record_duplicates(u64::from(order.num_duplicates));

        // Faults in service order, then cancels for the fatal ones.
        let faults = batch.faults();
        let mut pending: Vec<PendingFault> = Vec::with_capacity(order.order.len());
        pending.extend(order.order.iter().filter_map(|f| faults.get(f.index)).map(|f| PendingFault {
            va: f.entry.va,
            access: access_of(f.access_type_mask.highest().unwrap_or(f.entry.access)),
            unserviceable: f.is_fatal.then_some(f.entry.fault_type.nvidia_name()),
        }));
        let before_throttled = ctx.throttled_faults;
        let out = service_fault_batch(ctx, gpu.gpu, &pending, prefetch, backend);
        report.serviced += out.serviced;
        for fatal in out.fatal {
            // The fault's own entry names its instance and engine.
            let Some(src) = order.order.get(fatal.index).and_then(|f| faults.get(f.index)) else {
                continue;
            };
            cancel(channel, &src.entry)?;
            report.cancelled.push(CancelledFault {
                instance: src.entry.instance,
                engine_id: src.entry.engine_id,
                fault: fatal,
            });
        }
        report.invalid_prefetch += out.invalid_prefetch;
        if let Some(filter) =
            state.prefetch_faults.update(out.invalid_prefetch, config.batch_size, backend.now_ns() / 1_000_000)
        {
            report.prefetch_filter = Some(filter);
        }
        for &index in &order.unresolved {
            if let Some(f) = faults.get(index) {
                let fatal = FatalFault {
                    index,
                    va: f.entry.va,
                    access: access_of(f.entry.access),
                    reason: FatalReason::NoRange,
                };
                cancel(channel, &f.entry)?;
                ctx.stats.cancels += 1;
                report.cancelled.push(CancelledFault {
                    instance: f.entry.instance,
                    engine_id: f.entry.engine_id,
                    fault: fatal,
                });
            }
        }
        // BATCH_FLUSH: drop what the buffer still holds of this batch's duplicates, then replay.
        buffer.flush(batch_flush_mode(
            order.num_duplicates,
            batch.num_cached_faults(),
            config.replay_update_put_ratio,
        ))?;
        channel.replay(ReplayType::Start)?;
        ctx.stats.replays += 1;
        report.replays += 1;
        report.batches += 1;
        progress.finish_batch(ctx.throttled_faults != before_throttled, 1);
    }
    if progress.needs_final_replay(config.replay_policy) {
        channel.replay(ReplayType::Start)?;
        ctx.stats.replays += 1;
        report.replays += 1;
    }
    Ok(report)
}

/// A precise cancel of every access to the fault's page (`CANCEL_VA_GLOBAL`, `VIRT_ALL`).
fn cancel(channel: &mut impl ReplayChannel, entry: &FaultEntry) -> Result<(), ReplayChannelError> {
    let pdb_aperture = match entry.instance.aperture {
        Aperture::VidMem => PdbAperture::VidMem,
        Aperture::SysMemCoherent | Aperture::SysMemNoncoherent => PdbAperture::SysMemCoherent,
    };
    channel.cancel_va(&CancelVa {
        pdb: entry.instance.address,
        pdb_aperture,
        va: entry.va,
        mmu_engine_id: entry.engine_id,
        mode: CancelVaMode::All,
    })
}
