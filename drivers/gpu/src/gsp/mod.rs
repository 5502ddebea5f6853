//! GSP-RM: the data the CPU lays out for it (and what it writes back), byte for byte as NVIDIA's
//! open-gpu-kernel-modules 535.261.03 defines it, the queues and commands it speaks, and its boot.
//! In the order the data flows:
//!
//! - [`fw`]: the firmware-interface structures (WPR metadata, LIBOS arguments, init arguments,
//!   the message-queue format, the RPC header, radix3, suspend/resume metadata) and their layout
//!   tables;
//! - [`fb_layout`]: where GSP-RM's regions go in the framebuffer (`kgspCalculateFbLayout_*`),
//!   filling [`fw::wpr::GspFwWprMeta`];
//! - [`cmdq`]: the command queue, the transport over the shared message queues of [`fw::msgq`]'s
//!   format: records into the command queue, records out of the status queue, who owns which
//!   part of each ring;
//! - [`commands`]: the RPCs as types, one file per group, and the client that sends them;
//! - [`sequencer`]: the CPU sequencer GSP-RM drives through `GSP_RUN_CPU_SEQUENCER`, with the
//!   falcon operations its scripts ask for;
//! - [`boot`]: the boot flows (FWSEC and booter, or FSP and FMC), suspend and resume;
//! - [`logs`], [`history`]: what GSP-RM logged, and the RPCs exchanged, for error reports.
//!
//! The RM objects over these RPCs are [`crate::rm`], beside this module.
//!
//! Facts come from the 535.261.03 sources only (see [`crate::hw::headers`]); the firmware interface is not
//! compatible across releases, so nothing here is meant to work with another GSP-RM version.

pub mod boot;
pub mod cmdq;
pub mod commands;
pub mod fb_layout;
pub mod fw;
pub mod history;
pub mod logs;
pub mod sequencer;
pub mod status;

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
