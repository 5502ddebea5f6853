//! Physical frames, DMA memory over them, page tables, the MMIO mapping API (uncached and
//! write-combined), copies of firmware tables, the CPU's access to the managed window and the
//! heap.

// unsafe here: physical frames, DMA memory, page tables, the MMIO mapping API, firmware table
// copies, managed-window accesses and the heap.
#![allow(unsafe_code)]

pub mod dma;
pub mod firmware;
pub mod frames;
pub mod heap;
pub mod managed_window;
pub mod mmio;
pub mod paging;
pub mod wc;

/// Where all RAM is mapped (PML4 slot 256, the start of the upper half).
pub const PHYS_OFFSET: u64 = 0xffff_8000_0000_0000;

pub const PAGE_SIZE: u64 = 4096;
pub const LARGE_PAGE_SIZE: u64 = 2 * 1024 * 1024;
