//! BAR1: the CPU's window onto VRAM, translated by the GPU MMU through the BAR1 VA space.
//!
//! GSP-RM 535.261.03 allocates the BAR1 root page directory in its own reserved VRAM, binds it
//! to BAR1, and reports its address in `GspStaticConfigInfo.bar1PdeBase`
//! (`gsp_static_config.h`). The CPU-side driver owns everything below that root: RM's
//! `kbusPatchBar1Pdb_GSPCLIENT` (`src/nvidia/src/kernel/gpu/bus/kern_bus.c`) describes
//! `bar1PdeBase` as an `ADDR_FBMEM` memory descriptor and installs it as the root level instance
//! of CPU-RM's own BAR1 page-table walker (`mmuWalkModifyLevelInstance` on the format's root
//! level, copying CPU-RM's entries into it), then invalidates the TLB for that PDB. So here:
//!
//! - the root is adopted, never allocated or freed ([`PageTables::adopt_root`]); it must hold
//!   no entries when adopted (the driver would not know what they map);
//! - every lower-level table comes from the [`VramAllocator`] the caller gives (VRAM the FB
//!   regions hand to the client, never RM's reserved memory), written through PRAMIN;
//! - BAR1 offsets are VAs of that space, from 0 to the BAR1 size (the PCI BAR's size);
//! - each change is followed by a TLB invalidate of the BAR1 PDB (any [`TlbInvalidator`],
//!   normally [`super::RegisterTlbInvalidator`]).
//!
//! # Write-combining
//! The kernel maps BAR1 write-combined (it is a prefetchable BAR). CPU stores to it may be
//! merged, reordered among themselves and held in the CPU's write-combining buffers, and PCIe
//! posts them. Before the GPU uses data written through BAR1, [`Bar1::flush_writes`] drains the
//! CPU's buffers ([`Bar1Access::flush_writes`], `mfence` on x86: unlike `sfence` it also orders the read-back after the buffered writes) and reads back from the mapping:
//! a PCIe read completion cannot pass the posted writes before it, so once the read returns
//! the writes have reached the GPU.

use alloc::collections::BTreeMap;
use core::fmt;

use super::format::{Aperture, MmuFormat, PageSize, PteAttrs, TableAddress, TableAperture};
use super::page_table::{PageTableError, PageTables, TableMemoryError, TlbInvalidator};
use super::pramin::{PraminError, VramTableMemory};
use super::va::{VaAllocator, VaError};
use super::vram::VramAllocator;
use crate::hal::Family;
use crate::hw::RegisterIo;

/// Alignment of `bar1PdeBase`: RM describes it with `RM_PAGE_SIZE` (4 KiB) alignment
/// (`memdescCreate(..., RM_PAGE_SIZE, ...)` in `kbusPatchBar1Pdb_GSPCLIENT`).
pub const BAR1_PDB_ALIGNMENT: u64 = 4096;

/// Byte access to BAR1 at an offset: the kernel implements it over the physical BAR (mapped
/// write-combined), the model over its BAR1 aperture.
pub trait Bar1Access {
    /// Reads `buf.len()` bytes at BAR1 offset `offset`.
    fn bar1_read(&self, offset: u64, buf: &mut [u8]) -> Result<(), Bar1AccessError>;
    /// Writes `data` at BAR1 offset `offset`. On a write-combined mapping the bytes may still
    /// be in flight when this returns (see [`Self::flush_writes`]).
    fn bar1_write(&self, offset: u64, data: &[u8]) -> Result<(), Bar1AccessError>;
    /// Drains the CPU's write-combining buffers (`mfence` on x86, which also orders later loads). Nothing to do where writes
    /// are not buffered (the model).
    fn flush_writes(&self) {}
}

/// A BAR1 access did not complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bar1AccessError {
    pub offset: u64,
    pub len: u64,
    pub write: bool,
}

impl fmt::Display for Bar1AccessError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.write { "write" } else { "read" };
        write!(f, "BAR1 {what} of {:#x} bytes at {:#x} failed", self.len, self.offset)
    }
}

/// A range of VRAM visible through BAR1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bar1Mapping {
    /// Where the range starts in BAR1.
    pub bar1_offset: u64,
    /// Bytes mapped.
    pub size: u64,
    /// The VRAM address the mapping starts at.
    pub vram: u64,
}

/// BAR1 could not be set up or changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bar1Error {
    /// GSP-RM reported no BAR1 page directory (`bar1PdeBase` 0).
    NoPageDirectory,
    /// `bar1PdeBase` is not 4 KiB aligned.
    MisalignedPageDirectory { address: u64 },
    /// `bar1PdeBase` lies in VRAM the table allocator could hand out: it would be overwritten.
    PageDirectoryInAllocator { address: u64 },
    /// The BAR1 size is zero or beyond the MMU format's VA space.
    BadSize { size: u64, va_bits: u32 },
    /// The PRAMIN window is not available.
    Pramin(PraminError),
    /// The root could not be adopted by the table memory.
    Table(TableMemoryError),
    /// The page-table operation failed.
    PageTables(PageTableError),
    /// No free BAR1 range.
    Va(VaError),
    /// The mapping is not one this BAR1 made.
    NotMapped { bar1_offset: u64, size: u64 },
    /// Reading back through BAR1 failed.
    Access(Bar1AccessError),
}

impl fmt::Display for Bar1Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bar1Error::NoPageDirectory => f.write_str("GSP-RM reported no BAR1 page directory (bar1PdeBase 0)"),
            Bar1Error::MisalignedPageDirectory { address } => {
                write!(f, "BAR1 page directory {address:#x} is not 4 KiB aligned")
            }
            Bar1Error::PageDirectoryInAllocator { address } => {
                write!(f, "BAR1 page directory {address:#x} lies in VRAM the table allocator hands out")
            }
            Bar1Error::BadSize { size, va_bits } => {
                write!(f, "BAR1 size {size:#x} does not fit a {va_bits}-bit VA space")
            }
            Bar1Error::Pramin(e) => write!(f, "BAR1 page tables: {e}"),
            Bar1Error::Table(e) => write!(f, "BAR1 root: {e}"),
            Bar1Error::PageTables(e) => write!(f, "BAR1 page tables: {e}"),
            Bar1Error::Va(e) => write!(f, "BAR1 space: {e}"),
            Bar1Error::NotMapped { bar1_offset, size } => write!(f, "BAR1 {bar1_offset:#x}+{size:#x} is not a mapping"),
            Bar1Error::Access(e) => write!(f, "{e}"),
        }
    }
}

impl From<PageTableError> for Bar1Error {
    fn from(e: PageTableError) -> Self {
        Bar1Error::PageTables(e)
    }
}

impl From<VaError> for Bar1Error {
    fn from(e: VaError) -> Self {
        Bar1Error::Va(e)
    }
}

/// The BAR1 VA space: RM's root, the driver's tables below it, and the mappings made.
pub struct Bar1<'a, R: RegisterIo + ?Sized> {
    tables: PageTables<VramTableMemory<'a, R>>,
    space: VaAllocator,
    size: u64,
    kind: u8,
    /// bar1_offset -> mapping.
    mappings: BTreeMap<u64, Bar1Mapping>,
}

impl<'a, R: RegisterIo + ?Sized> Bar1<'a, R> {
    /// BAR1 of a GPU of `family` behind `io`, over the root GSP-RM reported in `bar1_pde_base`
    /// (`GspStaticConfigInfo.bar1PdeBase`), `bar1_size` bytes long (the PCI BAR's size), with
    /// lower-level tables from `tables_from`.
    pub fn new(
        io: &'a R,
        family: Family,
        bar1_pde_base: u64,
        bar1_size: u64,
        tables_from: VramAllocator,
    ) -> Result<Self, Bar1Error> {
        let format = MmuFormat::for_family(family);
        if bar1_pde_base == 0 {
            return Err(Bar1Error::NoPageDirectory);
        }
        if !bar1_pde_base.is_multiple_of(BAR1_PDB_ALIGNMENT) {
            return Err(Bar1Error::MisalignedPageDirectory { address: bar1_pde_base });
        }
        if tables_from.is_free(bar1_pde_base) {
            return Err(Bar1Error::PageDirectoryInAllocator { address: bar1_pde_base });
        }
        let va_bits = format.va_bits();
        if bar1_size == 0 || bar1_size > 1u64 << va_bits {
            return Err(Bar1Error::BadSize { size: bar1_size, va_bits });
        }
        let root = TableAddress { aperture: TableAperture::Video, address: bar1_pde_base };
        let root_bytes = format.levels().first().map_or(0, |l| l.table_bytes());
        let mut mem = VramTableMemory::new(io, family, tables_from).map_err(Bar1Error::Pramin)?;
        mem.adopt_table(root, root_bytes).map_err(Bar1Error::Table)?;
        let tables = PageTables::adopt_root(format, mem, root)?;
        let kind = crate::hal::for_family(family).generic_memory_kind;
        Ok(Bar1 { tables, space: VaAllocator::new(0, bar1_size), size: bar1_size, kind, mappings: BTreeMap::new() })
    }

    /// The BAR1 root (GSP-RM's page directory): the PDB TLB invalidates name.
    pub fn pdb(&self) -> TableAddress {
        self.tables.pdb()
    }

    /// Bytes of BAR1.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The page tables (for inspection: which page sizes a mapping got).
    pub fn tables(&self) -> &PageTables<VramTableMemory<'a, R>> {
        &self.tables
    }

    /// The mappings made, by BAR1 offset.
    pub fn mappings(&self) -> impl Iterator<Item = &Bar1Mapping> {
        self.mappings.values()
    }

    /// Maps `size` bytes of VRAM at `vram` (4 KiB aligned) into BAR1 with the largest pages
    /// that fit: the BAR1 offset is aligned like `vram` up to 2 MiB, so 2 MiB pages are used
    /// wherever the range allows, then 64 KiB, then 4 KiB.
    pub fn map(&mut self, vram: u64, size: u64, tlb: &mut impl TlbInvalidator) -> Result<Bar1Mapping, Bar1Error> {
        let align = [PageSize::Size2M, PageSize::Size64K, PageSize::Size4K]
            .into_iter()
            .map(PageSize::bytes)
            .find(|&p| vram.is_multiple_of(p) && size >= p)
            .unwrap_or(PageSize::Size4K.bytes());
        self.map_inner(vram, size, align, None, tlb)
    }

    /// Maps with one page size throughout (`vram` and `size` aligned to it).
    pub fn map_with_page_size(
        &mut self,
        vram: u64,
        size: u64,
        page_size: PageSize,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<Bar1Mapping, Bar1Error> {
        self.map_inner(vram, size, page_size.bytes(), Some(page_size), tlb)
    }

    fn map_inner(
        &mut self,
        vram: u64,
        size: u64,
        align: u64,
        page_size: Option<PageSize>,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<Bar1Mapping, Bar1Error> {
        let bar1_offset = self.space.alloc(size, align)?;
        let attrs = PteAttrs { kind: self.kind, ..PteAttrs::default() };
        let mapped = match page_size {
            Some(p) => self.tables.map_with_page_size(bar1_offset, vram, size, p, Aperture::Video, attrs, tlb),
            None => self.tables.map(bar1_offset, vram, size, Aperture::Video, attrs, tlb),
        };
        if let Err(e) = mapped {
            // `map` either wrote nothing or rolled back; the range is free again.
            let _ = self.space.free(bar1_offset, size);
            return Err(e.into());
        }
        let mapping = Bar1Mapping { bar1_offset, size, vram };
        self.mappings.insert(bar1_offset, mapping);
        Ok(mapping)
    }

    /// Removes `mapping` (invalidating the TLB before its BAR1 range or emptied tables are
    /// reused).
    pub fn unmap(&mut self, mapping: Bar1Mapping, tlb: &mut impl TlbInvalidator) -> Result<(), Bar1Error> {
        let not_mapped = Bar1Error::NotMapped { bar1_offset: mapping.bar1_offset, size: mapping.size };
        if self.mappings.get(&mapping.bar1_offset) != Some(&mapping) {
            return Err(not_mapped);
        }
        self.tables.unmap(mapping.bar1_offset, mapping.size, tlb)?;
        self.mappings.remove(&mapping.bar1_offset);
        self.space.free(mapping.bar1_offset, mapping.size)?;
        Ok(())
    }

    /// Makes writes through `mapping` visible to the GPU: drains the CPU's write-combining
    /// buffers, then reads 4 bytes back from the mapping (a PCIe read cannot pass posted writes).
    pub fn flush_writes(&self, access: &impl Bar1Access, mapping: &Bar1Mapping) -> Result<(), Bar1Error> {
        access.flush_writes();
        let mut word = [0u8; 4];
        let len = mapping.size.min(4) as usize;
        access.bar1_read(mapping.bar1_offset, &mut word[..len]).map_err(Bar1Error::Access)
    }

    /// Unmaps everything, frees the driver's tables (the root stays GSP-RM's) and gives the
    /// table allocator back.
    pub fn release(mut self, tlb: &mut impl TlbInvalidator) -> Result<VramAllocator, Bar1Error> {
        let mappings: alloc::vec::Vec<Bar1Mapping> = self.mappings.values().copied().collect();
        for mapping in mappings {
            self.unmap(mapping, tlb)?;
        }
        Ok(self.tables.release().into_allocator())
    }
}
