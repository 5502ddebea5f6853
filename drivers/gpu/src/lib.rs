//! nvgpu: the NVIDIA GPU driver core. no_std + alloc; the same code runs in the kernel against
//! real hardware and in host tests against the GPU model in `sim/`.
#![cfg_attr(not(test), no_std)]
extern crate alloc;

pub mod ce;
pub mod channel;
pub mod chip;
pub mod compute;
pub mod device;
pub mod display;
pub mod falcon;
pub mod firmware;
pub mod fwsec;
pub mod gsp;
pub mod hal;
pub mod host;
pub mod hw;
pub mod intr;
pub mod mm;
pub mod payload;
pub mod platform;
pub mod probe;
pub mod rm;
pub mod runtime;
pub mod vbios;
