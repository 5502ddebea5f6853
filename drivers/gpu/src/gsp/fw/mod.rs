//! The GSP firmware interface: the structures GSP-RM and the driver exchange in memory, byte for
//! byte as NVIDIA's open-gpu-kernel-modules 535.261.03 defines them, with the constants that go in
//! them and their layout tables.
//!
//! - [`wpr`]: `GspFwWprMeta`, the WPR2 metadata Booter (or, on Hopper, the FSP chain) reads, and
//!   the heap-size parameters of `gsp_fw_heap.h`; where the regions go is
//!   [`crate::gsp::fb_layout`]'s.
//! - [`libos`]: `LibosMemoryRegionInitArgument`, the memory regions handed to LIBOS at boot.
//! - [`init_args`]: `GSP_ARGUMENTS_CACHED` (the "RMARGS" region) with its message-queue and
//!   suspend/resume arguments.
//! - [`msgq`]: the shared message queues' format: `msgqTxHeader`, `msgqRxHeader`,
//!   `GSP_MSG_QUEUE_ELEMENT`, its checksum and framing, and the shared-memory layout RM uses. The
//!   transport over them is [`crate::gsp::cmdq`].
//! - [`rpc`]: `rpc_message_header_v` and the RPC function and event numbers.
//! - [`radix3`]: the three-level page table through which GSP finds the firmware ELF in sysmem.
//! - [`sr_meta`]: `GspFwSRMeta`, the suspend/resume metadata of a GSP-RM image saved to sysmem.
//! - [`layout`]: every structure's size, alignment and field offsets, and every constant, as
//!   tables under NVIDIA's names; `tests/tests/gsp_layout.rs` compiles NVIDIA's headers with the
//!   system C compiler and compares entry by entry. [`layout::StructLayout`] and
//!   [`layout::FieldLayout`] are also the table types of [`crate::hw::fw`].
//!
//! The structures are `#[repr(C)]` with explicit padding so that `zerocopy` can view them as
//! bytes both ways. Everything read back from shared memory (queue headers, queue elements, RPC
//! headers written by GSP-RM) is input: the readers here check bounds and return errors.
//!
//! # One release
//!
//! The firmware interface is not compatible across GSP-RM releases: RPC numbers, structure
//! layouts, boot arguments, the WPR metadata and the LIBOS arguments all move. Everything in this
//! module is 535.261.03's, and nothing outside it should depend on a structure's exact shape
//! beyond what these modules export. A second release would sit beside this one (this module's
//! files become one release's, e.g. `fw::r535`, next to `fw::r570`, each with its own `layout`
//! table checked against its own headers), with the driver choosing by the firmware it loads;
//! the logic that fills the structures ([`crate::gsp::fb_layout`], [`crate::gsp::boot`],
//! [`crate::gsp::cmdq`]) stays outside this module for that reason.

pub mod init_args;
pub mod layout;
pub mod libos;
pub mod msgq;
pub mod radix3;
pub mod rpc;
pub mod sr_meta;
pub mod wpr;
