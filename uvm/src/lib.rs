//! Unified memory in the vocabulary of NVIDIA's UVM (`kernel-open/nvidia-uvm/`, 535.261.03):
//! a [`va_space`] per application context holds managed va_ranges, cut into va_blocks of at
//! most 2 MiB that never cross a 2 MiB boundary. Each block tracks, per processor (the CPU and
//! each GPU), which 4 KiB pages are resident and which are mapped with which permissions.
//!
//! The crate is `no_std + alloc` and knows no hardware directly: GPU memory comes through the
//! [`pmm`] (root chunks from the driver's VRAM allocator), faults through [`fault`] (the
//! replayable fault buffer, class `MMU_FAULT_BUFFER`), and the heuristics that decide how much
//! to move live in [`perf`] (prefetch and thrashing).
#![cfg_attr(not(test), no_std)]
extern crate alloc;

pub mod fault;
pub mod gpu_faults;
pub mod gpu_mapping;
pub mod gpu_memory;
pub mod page_mask;
pub mod perf;
pub mod pmm;
pub mod policy;
pub mod processor;
pub mod replayable;
pub mod runtime;
pub mod service;
#[cfg(test)]
mod service_tests;
pub mod va_block;
pub mod va_space;
