//! nvgpu: the NVIDIA GPU driver core. no_std + alloc; the same code runs in the kernel against
//! real hardware and in host tests against the GPU model in `sim/`.
#![cfg_attr(not(test), no_std)]
extern crate alloc;

pub mod vbios;
pub mod hw;
pub mod chip;
pub mod hal;
pub mod platform;
pub mod device;
pub mod gsp;
pub mod firmware;
pub mod falcon;
pub mod mm;
pub mod host;
pub mod channel;
pub mod intr;
pub mod ce;
pub mod compute;
pub mod payload;
pub mod runtime;
