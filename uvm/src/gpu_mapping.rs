//! GPU mappings of managed memory through the driver's page-table code
//! (`nvgpu::mm::page_table::PageTables`): the [`UvmBackend`](crate::service::UvmBackend) map and
//! unmap calls for one GPU become PTE writes at the page size the block chose, with the TLB
//! invalidated by the driver's invalidator before an unmap returns.
//!
//! Where a mapping points decides the aperture: the GPU's own memory is `VIDEO`, CPU memory
//! coherent system memory, another GPU's memory a peer aperture with that GPU's peer id
//! (UVM: `uvm_gpu_peer_memory_address`, `uvm_mmu_page_table_*`). Permissions become PTE bits:
//! read-only sets `READ_ONLY`, read-write without atomics sets `ATOMIC_DISABLE`.

use core::fmt;

use nvgpu::mm::format::{Aperture, PageSize, PteAttrs};
use nvgpu::mm::page_table::{PageTableError, PageTableMemory, PageTables, TlbInvalidator};

use crate::processor::ProcessorId;
use crate::va_block::{MappingTarget, Prot};

/// A GPU mapping could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuMappingError {
    /// No peer aperture reaches `target` from this GPU.
    NoPeer {
        target: ProcessorId,
    },
    /// `Prot::None` is not a mapping.
    NoPermission,
    Tables(PageTableError),
}

impl fmt::Display for GpuMappingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuMappingError::NoPeer { target } => write!(f, "no peer aperture reaches {target}'s memory"),
            GpuMappingError::NoPermission => write!(f, "a mapping needs at least read permission"),
            GpuMappingError::Tables(e) => write!(f, "page tables: {e}"),
        }
    }
}

impl From<PageTableError> for GpuMappingError {
    fn from(e: PageTableError) -> Self {
        GpuMappingError::Tables(e)
    }
}

/// One GPU's view: its index, its page tables, the PTE kind for plain memory and its peers.
pub struct GpuMapper<'a, M: PageTableMemory, T: TlbInvalidator> {
    pub gpu: u8,
    pub tables: &'a mut PageTables<M>,
    pub tlb: &'a mut T,
    /// `NV_MMU_PTE_KIND_*` for plain memory in this GPU's MMU format.
    pub kind: u8,
    /// The peer id under which this GPU reaches GPU `n`'s memory, if it does.
    pub peer_id: &'a dyn Fn(u8) -> Option<u8>,
}

impl<M: PageTableMemory, T: TlbInvalidator> GpuMapper<'_, M, T> {
    fn aperture(&self, target: ProcessorId) -> Result<Aperture, GpuMappingError> {
        match target {
            ProcessorId::Cpu => Ok(Aperture::SystemCoherent),
            ProcessorId::Gpu(g) if g == self.gpu => Ok(Aperture::Video),
            ProcessorId::Gpu(g) => (self.peer_id)(g).map(Aperture::Peer).ok_or(GpuMappingError::NoPeer { target }),
        }
    }

    /// The PTE attributes for `prot` (UVM maps managed memory uncached in the GPU's L2 only
    /// for sysmem and peers; vidmem is cached).
    pub fn attrs(&self, prot: Prot, target: ProcessorId) -> Result<PteAttrs, GpuMappingError> {
        if prot == Prot::None {
            return Err(GpuMappingError::NoPermission);
        }
        Ok(PteAttrs {
            read_only: prot == Prot::ReadOnly,
            atomic_disable: prot < Prot::ReadWriteAtomic,
            privileged: false,
            volatile: target != ProcessorId::Gpu(self.gpu),
            access_counting_disabled: false,
            kind: self.kind,
        })
    }

    /// Maps `[va, va + size)` to `target` with PTEs of `page_size`.
    pub fn map(
        &mut self,
        va: u64,
        size: u64,
        page_size: PageSize,
        target: MappingTarget,
        prot: Prot,
    ) -> Result<(), GpuMappingError> {
        let aperture = self.aperture(target.target)?;
        let attrs = self.attrs(prot, target.target)?;
        self.tables.map_with_page_size(va, target.phys, size, page_size, aperture, attrs, self.tlb)?;
        Ok(())
    }

    /// Unmaps `[va, va + size)` (the TLB is invalidated before this returns).
    pub fn unmap(&mut self, va: u64, size: u64) -> Result<(), GpuMappingError> {
        self.tables.unmap(va, size, self.tlb)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use alloc::vec;
    use alloc::vec::Vec;
    use nvgpu::mm::format::{Kind, MmuFormat, TableAddress, TableAperture};
    use nvgpu::mm::page_table::{TableMemoryError, TlbError, TlbInvalidate};

    #[derive(Default)]
    struct Tables {
        next: u64,
        tables: BTreeMap<u64, Vec<u64>>,
    }
    impl PageTableMemory for Tables {
        fn alloc_table(&mut self, bytes: u64, align: u64) -> Result<TableAddress, TableMemoryError> {
            let base = (self.next.max(0x10_0000)).next_multiple_of(align);
            self.next = base + bytes.max(8);
            self.tables.insert(base, vec![0; (bytes / 8).max(1) as usize]);
            Ok(TableAddress { aperture: TableAperture::Video, address: base })
        }
        fn free_table(&mut self, table: TableAddress, _bytes: u64) {
            self.tables.remove(&table.address);
        }
        fn read_u64(&self, at: TableAddress) -> Result<u64, TableMemoryError> {
            let (base, words) =
                self.tables.range(..=at.address).next_back().ok_or(TableMemoryError::BadAddress { at })?;
            words.get(((at.address - base) / 8) as usize).copied().ok_or(TableMemoryError::BadAddress { at })
        }
        fn write_u64(&mut self, at: TableAddress, value: u64) -> Result<(), TableMemoryError> {
            let (base, words) =
                self.tables.range_mut(..=at.address).next_back().ok_or(TableMemoryError::BadAddress { at })?;
            let slot = words.get_mut(((at.address - *base) / 8) as usize).ok_or(TableMemoryError::BadAddress { at })?;
            *slot = value;
            Ok(())
        }
    }
    #[derive(Default)]
    struct CountingTlb(usize);
    impl TlbInvalidator for CountingTlb {
        fn invalidate(&mut self, _: &TlbInvalidate) -> Result<(), TlbError> {
            self.0 += 1;
            Ok(())
        }
    }

    #[test]
    fn mappings_reach_the_driver_tables_with_apertures_and_permissions() {
        for (format, kind) in
            [(MmuFormat::VER2, Kind::GENERIC_MEMORY_TU102), (MmuFormat::VER3, Kind::GENERIC_MEMORY_GH100)]
        {
            let mut tables = PageTables::new(format, Tables::default()).unwrap();
            let mut tlb = CountingTlb::default();
            let peers = |g: u8| (g == 1).then_some(3u8);
            let mut m = GpuMapper { gpu: 0, tables: &mut tables, tlb: &mut tlb, kind, peer_id: &peers };
            let mb2 = 2 << 20;
            m.map(
                4 * mb2,
                mb2,
                PageSize::Size2M,
                MappingTarget { target: ProcessorId::Gpu(0), phys: 6 * mb2 },
                Prot::ReadWriteAtomic,
            )
            .unwrap();
            m.map(
                8 * mb2,
                0x10000,
                PageSize::Size64K,
                MappingTarget { target: ProcessorId::Cpu, phys: 0x8000_0000 },
                Prot::ReadOnly,
            )
            .unwrap();
            m.map(
                8 * mb2 + 0x10000,
                0x1000,
                PageSize::Size4K,
                MappingTarget { target: ProcessorId::Gpu(1), phys: 0x5000 },
                Prot::ReadWrite,
            )
            .unwrap();
            assert_eq!(
                m.map(
                    9 * mb2,
                    0x1000,
                    PageSize::Size4K,
                    MappingTarget { target: ProcessorId::Gpu(2), phys: 0 },
                    Prot::ReadWrite
                ),
                Err(GpuMappingError::NoPeer { target: ProcessorId::Gpu(2) })
            );
            let t = tables.translate(4 * mb2 + 0x12345).unwrap().unwrap();
            assert_eq!((t.pa, t.aperture, t.page_size), (6 * mb2 + 0x12345, Aperture::Video, PageSize::Size2M));
            assert!(!t.attrs.read_only && !t.attrs.atomic_disable);
            let t = tables.translate(8 * mb2 + 0x4000).unwrap().unwrap();
            assert_eq!((t.pa, t.aperture, t.page_size), (0x8000_4000, Aperture::SystemCoherent, PageSize::Size64K));
            assert!(t.attrs.read_only);
            let t = tables.translate(8 * mb2 + 0x10000).unwrap().unwrap();
            assert_eq!((t.aperture, t.page_size), (Aperture::Peer(3), PageSize::Size4K));
            assert!(t.attrs.atomic_disable && !t.attrs.read_only);
            let before = tlb.0;
            let mut m = GpuMapper { gpu: 0, tables: &mut tables, tlb: &mut tlb, kind, peer_id: &peers };
            m.unmap(4 * mb2, mb2).unwrap();
            assert!(tables.translate(4 * mb2).unwrap().is_none());
            assert!(tlb.0 > before, "unmap invalidated the TLB");
        }
    }
}
