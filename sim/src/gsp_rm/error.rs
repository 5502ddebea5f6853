//! What the GSP-RM model refuses, and the error word it posts for the CPU.
//!
//! GSP-RM reports a fatal error the way `kgspHealthCheck_TU102` (`kernel_gsp_tu102.c`) reads it:
//! `NV_PGSP_MAILBOX(0)` holds `NV_GSP_ERROR_TAG` = 0xE in bits 31:28, the task in 23:16, the
//! reason in 15:8 and the code in 7:0 (`gsp_error.h`), and `NV_PGSP_MAILBOX(1)` a detail word. The
//! model's tasks, reasons and codes are its own ([`GspRmError::error_word`]); NVIDIA documents no
//! values.

use core::fmt;

use nvgpu::hw::rm::{NV_GSP_ERROR, NV_GSP_ERROR_TAG_VAL};

/// `LIBOS_INTERRUPT_PROCESSOR_SUSPENDED`: what GSP leaves in `NV_PGSP_FALCON_MAILBOX0` once it
/// has stopped after `UNLOADING_GUEST_DRIVER` (`_kgspIsProcessorSuspended`, `kernel_gsp_tu102.c`).
pub const LIBOS_INTERRUPT_PROCESSOR_SUSPENDED: u32 = 0x8000_0000;

/// The model's task numbers in the error word.
pub const TASK_INIT: u32 = 1;
/// The RM task (RPC server).
pub const TASK_RM: u32 = 2;

/// One thing the GSP-RM model refused (each is fatal to GSP-RM unless noted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GspRmError {
    /// The LIBOS init argument table (`NV_PGSP_FALCON_MAILBOX0/1`) is unusable.
    LibosArgs { what: &'static str, value: u64 },
    /// A region of the LIBOS table is wrong (`id8` names it).
    LibosRegion { id8: u64, what: &'static str, value: u64 },
    /// `GSP_ARGUMENTS_CACHED` or its `MESSAGE_QUEUE_INIT_ARGUMENTS` is unusable.
    RmArgs { what: &'static str, value: u64 },
    /// The shared queue memory's page table is wrong.
    PageTable { what: &'static str, index: u32, value: u64 },
    /// The CPU's command-queue header (`msgqTxHeader`) is not what `msgqTxCreate` writes.
    CommandQueueHeader { field: &'static str, expected: u32, found: u32 },
    /// A read pointer or write pointer the CPU wrote is out of range.
    QueuePointer { which: &'static str, value: u32, count: u32 },
    /// Shared queue memory at this block offset is not reachable.
    QueueMemory { offset: u64 },
    /// A command record failed the record checks (`what`, with the value at fault).
    BadRecord { what: &'static str, value: u32 },
    /// A command record's `seqNum` is not the next one.
    SequenceNumber { expected: u32, found: u32 },
    /// A command's RPC header is malformed (`what`).
    RequestHeader { what: &'static str, value: u32 },
    /// A continuation record arrived without a message to continue, or another record
    /// interrupted one.
    Continuation { what: &'static str, function: u32 },
    /// A command arrived out of the boot order (`function`, `what` was expected).
    OutOfOrder { function: u32, what: &'static str },
    /// A command's parameters are malformed (not fatal: answered with an error status, or, for
    /// boot-time RPCs, reported through `GSP_INIT_DONE`'s status).
    BadParams { function: u32, what: &'static str, value: u64 },
    /// The CPU sequencer script was not executed as sent (`what`).
    Sequencer { what: &'static str, value: u32 },
    /// The RISC-V core was reset while GSP-RM ran, outside a `CORE_RESUME`.
    ResetWhileRunning,
    /// A resume (SEC2 start during `CORE_RESUME`) found GSP not ready: `what`.
    Resume { what: &'static str, value: u64 },
    /// An injected `GspFault::StopRiscv`.
    InjectedStop,
    /// The FSP refused a packet or a command (Hopper; not fatal: GSP-RM was not running).
    Fsp(super::fsp::FspRefusal),
    /// The GSP-FMC refused to boot GSP-RM (Hopper); its error is in `NV_PGSP_FALCON_MAILBOX0`.
    Fmc(crate::booter::BooterError),
}

impl GspRmError {
    /// Whether GSP-RM stops on this error (everything but malformed parameters).
    pub const fn is_fatal(&self) -> bool {
        !matches!(
            self,
            GspRmError::BadParams { .. } | GspRmError::OutOfOrder { .. } | GspRmError::Fsp(_) | GspRmError::Fmc(_)
        )
    }

    /// The word GSP-RM leaves in `NV_PGSP_MAILBOX(0)`.
    pub const fn error_word(&self) -> u32 {
        let (task, reason, code) = match self {
            GspRmError::LibosArgs { .. } => (TASK_INIT, 1, 0x01),
            GspRmError::LibosRegion { .. } => (TASK_INIT, 1, 0x02),
            GspRmError::RmArgs { .. } => (TASK_INIT, 1, 0x03),
            GspRmError::PageTable { .. } => (TASK_INIT, 2, 0x04),
            GspRmError::CommandQueueHeader { .. } => (TASK_INIT, 2, 0x05),
            GspRmError::QueuePointer { .. } => (TASK_RM, 2, 0x06),
            GspRmError::QueueMemory { .. } => (TASK_RM, 2, 0x07),
            GspRmError::BadRecord { .. } => (TASK_RM, 3, 0x08),
            GspRmError::SequenceNumber { .. } => (TASK_RM, 3, 0x09),
            GspRmError::RequestHeader { .. } => (TASK_RM, 3, 0x0A),
            GspRmError::Continuation { .. } => (TASK_RM, 3, 0x0B),
            GspRmError::OutOfOrder { .. } => (TASK_RM, 4, 0x0C),
            GspRmError::BadParams { .. } => (TASK_RM, 4, 0x0D),
            GspRmError::Sequencer { .. } => (TASK_INIT, 5, 0x0E),
            GspRmError::ResetWhileRunning => (TASK_RM, 6, 0x0F),
            GspRmError::Resume { .. } => (TASK_INIT, 6, 0x10),
            GspRmError::InjectedStop => (TASK_RM, 7, 0x11),
            GspRmError::Fsp(_) => (TASK_INIT, 8, 0x12),
            GspRmError::Fmc(_) => (TASK_INIT, 8, 0x13),
        };
        (NV_GSP_ERROR_TAG_VAL << NV_GSP_ERROR::TAG.bits.lo)
            | (task << NV_GSP_ERROR::TASK.bits.lo)
            | (reason << NV_GSP_ERROR::REASON.bits.lo)
            | (code << NV_GSP_ERROR::CODE.bits.lo)
    }
}

impl fmt::Display for GspRmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GspRmError::LibosArgs { what, value } => write!(f, "LIBOS init arguments: {what} ({value:#x})"),
            GspRmError::LibosRegion { id8, what, value } => {
                let name: alloc::vec::Vec<u8> = id8.to_be_bytes().into_iter().filter(|&b| b != 0).collect();
                write!(f, "LIBOS region {:?}: {what} ({value:#x})", core::str::from_utf8(&name).unwrap_or("?"))
            }
            GspRmError::RmArgs { what, value } => write!(f, "GSP_ARGUMENTS_CACHED: {what} ({value:#x})"),
            GspRmError::PageTable { what, index, value } => {
                write!(f, "message queue page table entry {index}: {what} ({value:#x})")
            }
            GspRmError::CommandQueueHeader { field, expected, found } => {
                write!(f, "command queue msgqTxHeader.{field} is {found:#x}, expected {expected:#x}")
            }
            GspRmError::QueuePointer { which, value, count } => {
                write!(f, "{which} {value} out of range (queue of {count} entries)")
            }
            GspRmError::QueueMemory { offset } => {
                write!(f, "shared queue memory at block offset {offset:#x} unreachable")
            }
            GspRmError::BadRecord { what, value } => write!(f, "command record refused: {what} ({value:#x})"),
            GspRmError::SequenceNumber { expected, found } => {
                write!(f, "command record seqNum {found}, expected {expected}")
            }
            GspRmError::RequestHeader { what, value } => write!(f, "command RPC header: {what} ({value:#x})"),
            GspRmError::Continuation { what, function } => {
                write!(f, "continuation record (function {function}): {what}")
            }
            GspRmError::OutOfOrder { function, what } => {
                write!(f, "RPC function {function} out of boot order: expected {what}")
            }
            GspRmError::BadParams { function, what, value } => {
                write!(f, "RPC function {function} parameters: {what} ({value:#x})")
            }
            GspRmError::Sequencer { what, value } => write!(f, "CPU sequencer: {what} ({value:#x})"),
            GspRmError::ResetWhileRunning => write!(f, "GSP reset while GSP-RM ran (outside CORE_RESUME)"),
            GspRmError::Resume { what, value } => write!(f, "resume via SEC2: {what} ({value:#x})"),
            GspRmError::InjectedStop => write!(f, "injected fault: GSP-RM stopped"),
            GspRmError::Fsp(refusal) => write!(
                f,
                "FSP refused: {} ({:#x}), answered error code {:#x}",
                refusal.what, refusal.value, refusal.error_code
            ),
            GspRmError::Fmc(error) => write!(f, "GSP-FMC refused to boot GSP-RM: {error}"),
        }
    }
}
