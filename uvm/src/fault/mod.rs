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
    FaultBufferError, FaultBufferMemory, FaultBufferRegisters, FaultBufferStats, FetchConfig, FetchedFaults, FlushMode,
    MalformedEntry, ReplayableFaultBuffer,
};
pub use entry::{
    is_fatal, AccessTypeMask, Aperture, FaultAccess, FaultEntry, FaultEntryError, InstancePtr, RawFaultEntry,
};

#[cfg(test)]
mod tests {
    use super::buffer::tests::{buffer, Access};
    use super::*;
    use nvgpu::hw::fault::{FaultAccessType, NVC369_BUF_ENTRY_GPC_ID};

    #[test]
    fn one_bottom_half_fetch_coalesce_sort_flush() {
        let mut b = buffer(8);
        // Three faults on one page from uTLB 0 (read, write, read), one on the next 2 MiB block
        // from uTLB 1.
        let faults = [
            (0x20_0000, FaultAccessType::VirtRead, 0),
            (0x20_0000, FaultAccessType::VirtWrite, 0),
            (0x20_0000, FaultAccessType::VirtRead, 0),
            (0x40_0000, FaultAccessType::VirtRead, 1),
        ];
        for (i, (va, access, utlb)) in faults.into_iter().enumerate() {
            b.memory().write(i as u32, va, access);
            NVC369_BUF_ENTRY_GPC_ID.set(&mut b.memory().entries.borrow_mut()[i], utlb);
        }
        b.registers().put.set(4);
        let config = ServiceConfig::for_buffer(b.max_faults());
        assert_eq!(config.batch_size, 8);

        let fetched = b.fetch_batch(config.batch_size).unwrap();
        let batch = FaultBatch::coalesce(&fetched.entries, config.coalesce, 64, |e| u16::from(e.gpc));
        assert_eq!((batch.num_cached_faults(), batch.num_coalesced_faults()), (4, 2));
        let order = batch.preprocess(|_, _| Some(7u8));
        let blocks = order.blocks(&batch);
        assert_eq!(blocks.iter().map(|blk| blk.block_start).collect::<alloc::vec::Vec<_>>(), [0x20_0000, 0x40_0000]);
        let rep = &batch.faults()[order.order[0].index];
        assert_eq!(rep.entry.access, FaultAccess::Write);
        assert_eq!(rep.num_instances, 3);
        assert_eq!(order.num_duplicates, 2);
        b.record_duplicates(u64::from(order.num_duplicates));

        // 2 * 100 > 4 * 50 does not hold: flush up to the cached PUT, no PUT read.
        let mode = batch_flush_mode(order.num_duplicates, batch.num_cached_faults(), config.replay_update_put_ratio);
        assert_eq!(mode, FlushMode::CachedPut);
        assert_eq!(b.flush(mode), Ok(0));
        assert_eq!(*b.registers().log.borrow(), [Access::ReadGet, Access::ReadPut, Access::WriteGet(4)]);
        let stats = *b.stats();
        assert_eq!((stats.faults_fetched, stats.batches, stats.duplicates, stats.flushed), (4, 1, 2, 0));

        let mut progress = ServiceProgress::default();
        progress.finish_batch(false, 1);
        assert!(progress.may_fetch_another(&config));
        assert!(!progress.needs_final_replay(config.replay_policy));
    }
}
