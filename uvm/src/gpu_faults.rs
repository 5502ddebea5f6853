//! Servicing one batch of replayable GPU faults (`service_fault_batch` in
//! `kernel-open/nvidia-uvm/uvm_gpu_replayable_faults.c`, 535.261.03): the batch arrives
//! fetched, coalesced and sorted by address ([`crate::fault`]); faults on the same va_block are
//! serviced together in one block service; an address outside every managed range is fatal and
//! is cancelled precisely, never retried. What the hardware does afterwards (replay or cancel)
//! is the caller's: this module only says which.

use alloc::vec::Vec;
use core::fmt;

use crate::page_mask::{PAGE_SIZE, VA_BLOCK_SIZE};
use crate::processor::ProcessorId;
use crate::service::{PageAccess, PrefetchPolicy, ServiceError, UvmBackend, UvmContext};
use crate::va_block::AccessType;

/// One fault of a batch, after coalescing: the page, the strongest access asked for it, and
/// whether the hardware's fault type is one UVM cannot service (fatal whatever the address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingFault {
    pub va: u64,
    pub access: AccessType,
    /// `Some(why)` for fault types UVM does not service (e.g. `"PRIV_VIOLATION"`).
    pub unserviceable: Option<&'static str>,
}

/// Why a fault was fatal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FatalReason {
    /// The address is in no managed range (`UVM_FAULT_CANCEL_VA_MODE_ALL`).
    NoRange,
    /// The hardware fault type is not serviceable.
    FaultType(&'static str),
    /// Servicing the block failed (a global error: out of memory after eviction, copy error).
    ServiceFailed(ServiceError),
}

impl fmt::Display for FatalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FatalReason::NoRange => write!(f, "address outside every managed range"),
            FatalReason::FaultType(t) => write!(f, "fault type {t}"),
            FatalReason::ServiceFailed(e) => write!(f, "service failed: {e}"),
        }
    }
}

/// A fault that must be cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatalFault {
    /// Its position in the list it came from (the faults given to [`service_fault_batch`]).
    pub index: usize,
    pub va: u64,
    pub access: AccessType,
    pub reason: FatalReason,
}

/// What servicing a batch did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Faults whose pages are now mapped for the access.
    pub serviced: usize,
    /// Block services run (one per va_block with faults).
    pub blocks: usize,
    /// Faults to cancel.
    pub fatal: Vec<FatalFault>,
    /// Prefetch faults on addresses outside every managed range: not the program's error, so
    /// dropped (the replay discards prefetch faults) and counted, as UVM's
    /// `num_invalid_prefetch_faults`.
    pub invalid_prefetch: u32,
}

/// Services `faults` (sorted by address, as the fault batch sorts them) for GPU `gpu`.
pub fn service_fault_batch(
    ctx: &mut UvmContext,
    gpu: u8,
    faults: &[PendingFault],
    prefetch: &mut impl PrefetchPolicy,
    backend: &mut impl UvmBackend,
) -> BatchOutcome {
    let mut out = BatchOutcome::default();
    ctx.stats.fault_batches += 1;
    ctx.stats.gpu_faults += faults.len() as u64;
    let mut i = 0;
    // One block's pages and their places in `faults`, reused block after block.
    let mut pages: Vec<PageAccess> = Vec::with_capacity(faults.len());
    let mut indices: Vec<usize> = Vec::with_capacity(faults.len());
    while i < faults.len() {
        let Some(&first) = faults.get(i) else { break };
        // The faults of one block: same 2 MiB window and the same va_range (a window can hold
        // two ranges' blocks).
        let range = ctx.va_space.range(first.va).map(|r| (r.start(), r.end()));
        let window = first.va & !(VA_BLOCK_SIZE - 1);
        let mut j = i;
        pages.clear();
        indices.clear();
        while let Some(&f) = faults.get(j) {
            let same_block = f.va & !(VA_BLOCK_SIZE - 1) == window && range.is_some_and(|(s, e)| f.va >= s && f.va < e);
            if j > i && !same_block {
                break;
            }
            let index = j;
            j += 1;
            if let Some(why) = f.unserviceable {
                out.fatal.push(FatalFault { index, va: f.va, access: f.access, reason: FatalReason::FaultType(why) });
                continue;
            }
            if range.is_none() {
                if f.access == AccessType::Prefetch {
                    out.invalid_prefetch += 1;
                } else {
                    out.fatal.push(FatalFault { index, va: f.va, access: f.access, reason: FatalReason::NoRange });
                }
                continue;
            }
            pages.push(PageAccess { page: ((f.va - window) / PAGE_SIZE) as usize, access: f.access });
            indices.push(index);
        }
        if !pages.is_empty() {
            out.blocks += 1;
            match ctx.service_block(ProcessorId::Gpu(gpu), first.va, &pages, prefetch, backend) {
                Ok(_) => out.serviced += pages.len(),
                Err(e) => {
                    for (p, &index) in pages.iter().zip(&indices) {
                        out.fatal.push(FatalFault {
                            index,
                            va: window + p.page as u64 * PAGE_SIZE,
                            access: p.access,
                            reason: FatalReason::ServiceFailed(e),
                        });
                    }
                }
            }
        }
        i = j;
    }
    ctx.stats.cancels += out.fatal.len() as u64;
    out
}
