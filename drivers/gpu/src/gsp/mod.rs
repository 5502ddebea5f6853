//! GSP-RM: the data the CPU lays out for it (and what it writes back), byte for byte as NVIDIA's
//! open-gpu-kernel-modules 535.261.03 defines it, the queues and commands it speaks, and its boot.
//! In the order the data flows:
//!
//! - the firmware-interface structures, below;
//! - [`queue`]: the command and status queues over [`msgq`]'s layout (send, receive, records);
//! - [`commands`]: the RPCs as types, one file per group, and the client that sends them;
//! - [`sequencer`]: the CPU sequencer GSP-RM drives through `GSP_RUN_CPU_SEQUENCER`, with the
//!   falcon operations its scripts ask for;
//! - [`boot`]: the boot flows (FWSEC and booter, or FSP and FMC), suspend and resume;
//! - [`logs`], [`history`]: what GSP-RM logged, and the RPCs exchanged, for error reports.
//!
//! The RM objects over these RPCs are [`crate::rm`], beside this module. The structures:
//!
//! - [`wpr`]: `GspFwWprMeta`, the WPR2 metadata Booter (or, on Hopper, the FSP chain) reads, and
//!   the framebuffer layout RM computes for it (`kgspCalculateFbLayout_TU102/_GH100`).
//! - [`libos`]: `LibosMemoryRegionInitArgument`, the memory regions handed to LIBOS at boot.
//! - [`init_args`]: `GSP_ARGUMENTS_CACHED` (the "RMARGS" region) with its message-queue and
//!   suspend/resume arguments.
//! - [`msgq`]: the shared message queues: `msgqTxHeader`, `msgqRxHeader`, `GSP_MSG_QUEUE_ELEMENT`,
//!   its checksum, and the shared-memory layout RM uses.
//! - [`rpc`]: `rpc_message_header_v` and the RPC function and event numbers.
//! - [`radix3`]: the three-level page table through which GSP finds the firmware ELF in sysmem.
//! - [`layout`]: every structure's size, alignment and field offsets, and every constant, as
//!   tables under NVIDIA's names; `tests/tests/gsp_layout.rs` compiles NVIDIA's headers with the
//!   system C compiler and compares entry by entry.
//!
//! The structures are `#[repr(C)]` with explicit padding so that `zerocopy` can view them as
//! bytes both ways. Everything read back from shared memory (queue headers, queue elements, RPC
//! headers written by GSP-RM) is input: the readers here check bounds and return errors.
//!
//! Facts come from the 535.261.03 sources only (see [`crate::hw::headers`]); the firmware interface is not
//! compatible across releases, so nothing here is meant to work with another GSP-RM version.

pub mod boot;
pub mod commands;
pub mod fwsec_frts;
pub mod history;
pub mod init_args;
pub mod layout;
pub mod libos;
pub mod logs;
pub mod msgq;
pub mod queue;
pub mod radix3;
pub mod rpc;
pub mod sequencer;
pub mod sr_meta;
pub mod status;
pub mod wpr;

pub use init_args::{GspArgumentsCached, GspSrInitArguments, MessageQueueInitArguments, ProfilerArgs};
pub use layout::{ConstantFact, FieldLayout, StructLayout, CONSTANTS, STRUCT_LAYOUTS};
pub use libos::{init_arg_id, LibosMemoryRegionInitArgument, LibosMemoryRegionKind, LibosMemoryRegionLoc};
pub use msgq::{
    checksum32, ElementError, GspMsgQueueElement, MessageQueueLayout, MsgqRxHeader, MsgqTxHeader, QueueError,
};
pub use radix3::{build_radix3, Radix3Error, Radix3Layout};
pub use rpc::{RpcEvent, RpcFunction, RpcMessageHeader};
pub use wpr::{
    FbLayoutFlavor, FirmwareImages, GspFwWprMeta, LayoutError, MmuLock, SysmemRegion, WprChipParams, WprLayoutInputs,
};

// The structures use native integers for little-endian shared memory; the only target is x86_64.
const _: () = assert!(cfg!(target_endian = "little"));

/// Rounds `value` down to a multiple of `align` (a power of two), like RM's `NV_ALIGN_DOWN64`.
pub(crate) const fn align_down(value: u64, align: u64) -> u64 {
    value & !(align - 1)
}

/// Rounds `value` up to a multiple of `align` (a power of two), like RM's `NV_ALIGN_UP64`;
/// `None` on overflow.
pub(crate) const fn align_up(value: u64, align: u64) -> Option<u64> {
    match value.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}
