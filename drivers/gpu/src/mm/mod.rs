//! GPU memory management: page-table formats, a driver-owned page-table builder, and the VRAM
//! allocator.
//!
//! - [`format`]: the MMU's level layout and PDE/PTE encodings, version 2 (Pascal to Ada: 5 levels,
//!   49-bit VA) and version 3 (Hopper, Blackwell: 6 levels, 57-bit VA), from `hw::mmu`'s fields.
//! - [`page_table`]: map/unmap/change protection over any [`page_table::PageTableMemory`], TLB
//!   invalidation through [`page_table::TlbInvalidator`], and a software walk of the tables in
//!   memory ([`page_table::walk`]).
//! - [`vram`]: 2 MiB root chunks split into 64 KiB and 4 KiB pieces over the framebuffer GSP-RM
//!   reports.
//! - [`bar1`]: CPU access to VRAM through BAR1, below the root page directory GSP-RM owns.
//! - [`pramin`], [`dma_tables`]: page-table memory in VRAM (through the PRAMIN window) and in
//!   DMA system memory; [`tlb`]: TLB invalidation through BAR0 registers.

pub mod bar1;
pub mod dma_tables;
pub mod format;
pub mod page_table;
pub mod pramin;
pub mod tlb;
pub mod va;
pub mod vram;

pub use bar1::{Bar1, Bar1Access, Bar1AccessError, Bar1Error, Bar1Mapping};
pub use dma_tables::DmaTableMemory;
pub use format::{
    Aperture, DualPde, FormatError, Kind, Level, LevelKind, MmuFormat, PageSize, Pte, PteAttrs, PteState, TableAddress,
    TableAperture,
};
pub use page_table::{
    walk, MappedPage, PageTableError, PageTableMemory, PageTables, TableMemoryError, TlbChange, TlbError,
    TlbInvalidate, TlbInvalidator, Translation,
};
pub use pramin::{Pramin, PraminError, VramTableMemory};
pub use tlb::RegisterTlbInvalidator;
pub use va::{VaAllocator, VaError};
pub use vram::{VramAllocation, VramAllocator, VramError, VramStats};
