//! The GPU model (see ../shared/DESIGN.md, "The GPU model"). no_std + alloc.
//!
//! A software stand-in for NVIDIA GPUs of every supported family, strict where hardware is
//! strict: [`ModelGpu`] implements the driver's `nvgpu::hw::RegisterIo` for BAR0, shows a VBIOS
//! built in NVIDIA's documented format through the PROM window, and has the falcons the chip's
//! HAL lists (GSP, SEC2, FSP), which run the model's own ucode format ([`ucode`]): the model FWSEC
//! that sets up WPR2 for FRTS, and the booters ([`booter`]: NVIDIA's, recognised by fingerprint,
//! or the model's) that put GSP-RM into WPR2 and start it. GSP-RM itself ([`gsp_rm`]) answers the
//! CPU's RPCs through the shared message queues. What the model rejects is recorded
//! ([`ModelGpu::errors`]) and logged; faults can be injected ([`ModelGpu::inject`]).
//!
//! Every hardware fact comes from `nvgpu::hw`, `nvgpu::chip`, `nvgpu::hal` and `nvgpu::vbios`,
//! where it is declared once and checked against NVIDIA's headers; the model declares none of
//! its own (`tests/tests/header_conformance.rs` fails on a `Header` or `HeaderFact` built here).
#![cfg_attr(not(test), no_std)]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod board;
pub mod booter;
pub mod ce;
pub mod compute;
pub mod engine_mem;
pub mod engines;
pub mod error;
pub mod falcon;
pub mod fault_buffer;
pub mod fwsec;
pub mod generic_bl;
pub mod gpu;
pub mod gsp_rm;
pub mod host;
#[cfg(feature = "std")]
pub mod host_boot;
pub mod intr;
pub mod memory;
pub mod mmu;
pub mod ptx;
pub mod silicon;
pub mod ucode;
pub mod vbios_builder;
pub mod vram;

pub use board::{boot_placement, BarSizes, ModelConfig, PciIdentity, PciPlacement};
pub use error::{AccessKind, DmaError, FalconError, FalconMemory, ModelError, UnmodelledAccess, POISON};
/// The byte-layout crate of the model's (and `nvgpu::gsp`'s) structures, for tests that build
/// them as bytes without depending on it themselves.
pub use zerocopy;

pub use booter::{BooterError, BooterKind};
pub use gpu::ModelGpu;
pub use gsp_rm::{BootSequencer, GspFault, GspRmError, GspRmStatus, RegistryEntry, RegistryValue, RmObject};
pub use memory::{DmaArena, SystemMemory};
pub use ucode::HaltCode;
