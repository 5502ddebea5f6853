//! Mapping 1 GiB with 2 MiB pages against 4 KiB pages: entry writes and CPU time.
//!
//! criterion is not in this workspace and could not be fetched here (no registry access), so
//! this is a plain `harness = false` bench timed with `std::time::Instant` (best of a few
//! runs). `tests/tests/model_mmu.rs` asserts the exact write counts. Run:
//! `cargo bench -p nvgpu --bench map_1gib`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use nvgpu::mm::{
    Aperture, MmuFormat, PageSize, PageTableMemory, PageTables, PteAttrs, TableAddress, TableAperture,
    TableMemoryError, TlbError, TlbInvalidate, TlbInvalidator,
};

/// Tables in host memory, counting entry writes.
#[derive(Default)]
struct HostTables {
    tables: BTreeMap<u64, Vec<u64>>,
    next: u64,
    writes: u64,
}

impl PageTableMemory for HostTables {
    fn alloc_table(&mut self, bytes: u64, align: u64) -> Result<TableAddress, TableMemoryError> {
        let address = self.next.div_ceil(align) * align;
        self.next = address + bytes.max(8);
        self.tables.insert(address, vec![0; (bytes / 8) as usize]);
        Ok(TableAddress { aperture: TableAperture::Video, address })
    }
    fn free_table(&mut self, table: TableAddress, _: u64) {
        self.tables.remove(&table.address);
    }
    fn read_u64(&self, at: TableAddress) -> Result<u64, TableMemoryError> {
        let (base, t) = self.tables.range(..=at.address).next_back().ok_or(TableMemoryError::BadAddress { at })?;
        t.get(((at.address - base) / 8) as usize).copied().ok_or(TableMemoryError::BadAddress { at })
    }
    fn write_u64(&mut self, at: TableAddress, value: u64) -> Result<(), TableMemoryError> {
        let (base, t) = self.tables.range_mut(..=at.address).next_back().ok_or(TableMemoryError::BadAddress { at })?;
        let slot = t.get_mut(((at.address - *base) / 8) as usize).ok_or(TableMemoryError::BadAddress { at })?;
        *slot = value;
        self.writes += 1;
        Ok(())
    }
}

struct NoTlb;
impl TlbInvalidator for NoTlb {
    fn invalidate(&mut self, _: &TlbInvalidate) -> Result<(), TlbError> {
        Ok(())
    }
}

fn map_once(page: PageSize) -> (Duration, u64, usize) {
    let mut tables = PageTables::new(MmuFormat::VER2, HostTables::default()).expect("root");
    let start = Instant::now();
    tables.map_with_page_size(0, 0, 1 << 30, page, Aperture::Video, PteAttrs::default(), &mut NoTlb).expect("map");
    let elapsed = start.elapsed();
    let ptes = tables.mapped_pages(0, 1 << 30).len();
    (elapsed, tables.memory().writes, ptes)
}

fn main() {
    for page in [PageSize::Size2M, PageSize::Size4K] {
        let runs = 5;
        let mut best = Duration::MAX;
        let mut total = Duration::ZERO;
        let mut figures = (0, 0);
        for _ in 0..runs {
            let (t, writes, ptes) = map_once(page);
            best = best.min(t);
            total += t;
            figures = (writes, ptes);
        }
        println!(
            "map 1 GiB with {page:>3} pages: {:>6} PTEs, {:>6} 64-bit entry writes, best {:?}, mean {:?}",
            figures.1,
            figures.0,
            best,
            total / runs
        );
    }
}
