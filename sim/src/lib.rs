//! The GPU model (see ../shared/DESIGN.md, "The GPU model"). no_std + alloc.
//!
//! A software stand-in for NVIDIA GPUs of every supported family, strict where hardware is
//! strict: [`ModelGpu`] implements the driver's `nvgpu::hw::RegisterIo` for BAR0, shows a VBIOS
//! built in NVIDIA's documented format through the PROM window, and has the falcons the chip's
//! HAL lists (GSP, SEC2, FSP), which run the model's own ucode format ([`ucode`]): today the
//! model FWSEC that sets up WPR2 for FRTS. What the model rejects is recorded
//! ([`ModelGpu::errors`]) and logged.
//!
//! Every hardware fact comes from `nvgpu::hw`, `nvgpu::chip`, `nvgpu::hal` and `nvgpu::vbios`;
//! the few those lack are in [`facts_pending`], with their sources, until they move there.
#![cfg_attr(not(test), no_std)]
extern crate alloc;

pub mod board;
pub mod error;
pub mod facts_pending;
pub mod falcon;
pub mod fwsec;
pub mod gpu;
pub mod memory;
pub mod ucode;
pub mod vbios_builder;

pub use board::{BarSizes, ModelConfig, PciIdentity};
pub use error::{AccessKind, DmaError, FalconError, FalconMemory, ModelError, UnmodelledAccess, POISON};
pub use gpu::ModelGpu;
pub use memory::{DmaArena, SystemMemory};
pub use ucode::HaltCode;
