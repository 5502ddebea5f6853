//! The GSP-RM arguments page ("RMARGS"): `GSP_ARGUMENTS_CACHED` with its
//! `MESSAGE_QUEUE_INIT_ARGUMENTS` and `GSP_SR_INIT_ARGUMENTS`
//! (`src/nvidia/inc/kernel/gpu/gsp/gsp_init_args.h`, 535.261.03).
//!
//! RM fills it in `kgspPopulateGspRmInitArgs` (`kernel_gsp.c`) and points the "RMARGS" LIBOS
//! region at it ([`super::libos::RMARGS_ID`]); GSP-RM reads it once at boot to find the message
//! queues.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::msgq::MessageQueueLayout;

/// `MESSAGE_QUEUE_INIT_ARGUMENTS`: where the shared queue memory is. 48 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct MessageQueueInitArguments {
    /// `sharedMemPhysAddr` (`RmPhysAddr`): bus address of the first page of the shared queue
    /// memory, which holds the page table of the whole area.
    pub shared_mem_phys_addr: u64,
    /// `pageTableEntryCount`: entries in that page table.
    pub page_table_entry_count: u32,
    /// Padding before the next `NvLength` (C alignment).
    pub _padding0: u32,
    /// `cmdQueueOffset` (`NvLength`): offset of the RM command queue (CPU to GSP).
    pub cmd_queue_offset: u64,
    /// `statQueueOffset`: offset of the RM status queue (GSP to CPU).
    pub stat_queue_offset: u64,
    /// `locklessCmdQueueOffset`: the task-ISR command queue, 0 when not used (never in 535).
    pub lockless_cmd_queue_offset: u64,
    /// `locklessStatQueueOffset`: the task-ISR status queue, 0 when not used.
    pub lockless_stat_queue_offset: u64,
}

impl MessageQueueInitArguments {
    /// The arguments for a queue area laid out as `layout`, whose first page is at bus address
    /// `shared_mem_phys_addr` (`kgspPopulateGspRmInitArgs`, without a task-ISR queue).
    pub const fn new(shared_mem_phys_addr: u64, layout: &MessageQueueLayout) -> Self {
        Self {
            shared_mem_phys_addr,
            page_table_entry_count: layout.page_table_entry_count,
            _padding0: 0,
            cmd_queue_offset: layout.cmd_queue_offset(),
            stat_queue_offset: layout.stat_queue_offset(),
            lockless_cmd_queue_offset: 0,
            lockless_stat_queue_offset: 0,
        }
    }
}

/// `GSP_SR_INIT_ARGUMENTS`: suspend/resume state at boot. 12 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspSrInitArguments {
    /// `oldLevel`: the power level being resumed from.
    pub old_level: u32,
    /// `flags`.
    pub flags: u32,
    /// `bInPMTransition` (`NvBool`, one byte): nonzero when booting to resume.
    pub b_in_pm_transition: u8,
    /// Trailing padding of the C struct.
    pub _padding: [u8; 3],
}

/// The anonymous `profilerArgs` member of `GSP_ARGUMENTS_CACHED`. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ProfilerArgs {
    /// `pa`: bus address of the profiler sample buffer, or 0.
    pub pa: u64,
    /// `size`: its size in bytes, or 0.
    pub size: u64,
}

/// `GSP_ARGUMENTS_CACHED`: the page LIBOS region "RMARGS" points at. 80 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspArgumentsCached {
    /// `messageQueueInitArguments`.
    pub message_queue_init_arguments: MessageQueueInitArguments,
    /// `srInitArguments`.
    pub sr_init_arguments: GspSrInitArguments,
    /// `gpuInstance`: RM's index of this GPU.
    pub gpu_instance: u32,
    /// `profilerArgs`.
    pub profiler_args: ProfilerArgs,
}

impl GspArgumentsCached {
    /// The arguments for a cold boot (not a resume, no profiler buffer), as
    /// `kgspPopulateGspRmInitArgs` writes them when called without suspend/resume arguments.
    pub const fn cold_boot(message_queue_init_arguments: MessageQueueInitArguments, gpu_instance: u32) -> Self {
        Self {
            message_queue_init_arguments,
            sr_init_arguments: GspSrInitArguments { old_level: 0, flags: 0, b_in_pm_transition: 0, _padding: [0; 3] },
            gpu_instance,
            profiler_args: ProfilerArgs { pa: 0, size: 0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_boot_arguments_round_trip() {
        let layout = MessageQueueLayout::rm_default();
        let args = GspArgumentsCached::cold_boot(MessageQueueInitArguments::new(0xabc_d000, &layout), 2);
        let bytes = args.as_bytes();
        assert_eq!(bytes.len(), 80);
        // sharedMemPhysAddr at 0, pageTableEntryCount at 8: 2 queues x 256 KiB = 128 pages, plus
        // one page for 128 8-byte entries: 129.
        assert_eq!(&bytes[0..8], &0xabc_d000u64.to_le_bytes());
        assert_eq!(&bytes[8..12], &129u32.to_le_bytes());
        // cmdQueueOffset at 16 is the page-table size (one page); statQueueOffset at 24 is
        // 0x1000 + 0x40000.
        assert_eq!(&bytes[16..24], &0x1000u64.to_le_bytes());
        assert_eq!(&bytes[24..32], &0x41000u64.to_le_bytes());
        // gpuInstance at 60, after the 12-byte GSP_SR_INIT_ARGUMENTS at 48.
        assert_eq!(&bytes[60..64], &2u32.to_le_bytes());
        let back = GspArgumentsCached::read_from_bytes(bytes).unwrap();
        assert_eq!(back, args);
    }
}
