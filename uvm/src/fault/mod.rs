//! Replayable GPU faults: the fault packet ([`entry`]), the buffer protocol over GET/PUT and
//! the in-memory VALID bits ([`buffer`]), and the batch a bottom half services ([`batch`]), after
//! NVIDIA's `uvm_gpu_replayable_faults.c` and `uvm_volta_fault_buffer.c` (535.261.03).
//!
//! A bottom half, in UVM's order: [`ReplayableFaultBuffer::fetch_batch`], then
//! [`FaultBatch::coalesce`] and [`FaultBatch::preprocess`] (the caller maps instance pointers
//! to va_spaces), service each [`BlockFaults`] run, then for the BATCH_FLUSH policy
//! [`ReplayableFaultBuffer::flush`] with [`batch_flush_mode`] and push the replay with
//! `nvgpu::host::PushBuffer::replay_faults`. Fatal faults are cancelled with
//! `nvgpu::host::PushBuffer::cancel_faults_va`.

pub mod batch;
pub mod buffer;
pub mod entry;

pub use batch::{
    batch_flush_mode, too_many_invalid_prefetch_faults, ve_id, BatchFault, BlockFaults, FaultBatch,
    PrefetchFaultControl, ReplayPolicy, ServiceConfig, ServiceFault, ServiceOrder, ServiceProgress,
};
pub use buffer::{
    FaultBufferError, FaultBufferMemory, FaultBufferRegisters, FaultBufferStats, FetchConfig, FetchedFaults,
    FlushMode, MalformedEntry, ReplayableFaultBuffer,
};
pub use entry::{is_fatal, AccessTypeMask, Aperture, FaultAccess, FaultEntry, FaultEntryError, InstancePtr, RawFaultEntry};
