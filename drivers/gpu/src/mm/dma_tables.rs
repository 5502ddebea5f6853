//! Page tables in coherent system memory: each table one [`DmaBuffer`] from a
//! [`DmaAllocator`], addressed by its bus address (PDE aperture `SYSTEM_COHERENT_MEMORY`).

use alloc::collections::BTreeMap;

use super::format::{TableAddress, TableAperture};
use super::page_table::{PageTableMemory, TableMemoryError};
use crate::platform::{DmaAllocator, DmaBuffer};

/// Alignment `DmaAllocator` promises.
const DMA_ALIGNMENT: u64 = 4096;

/// Page-table memory in DMA buffers. Tables not freed when this is dropped stay allocated
/// (the GPU may still walk them), as with `PageTables`' own drop.
pub struct DmaTableMemory<A: DmaAllocator> {
    allocator: A,
    tables: BTreeMap<u64, DmaBuffer>,
    /// 64-bit entries written.
    pub entry_writes: u64,
}

impl<A: DmaAllocator> DmaTableMemory<A> {
    pub fn new(allocator: A) -> Self {
        DmaTableMemory { allocator, tables: BTreeMap::new(), entry_writes: 0 }
    }

    /// Buffer and offset of the word at `at`.
    fn locate(&self, at: TableAddress) -> Option<(u64, usize)> {
        if at.aperture != TableAperture::SystemCoherent || !at.address.is_multiple_of(8) {
            return None;
        }
        let (&bus, buffer) = self.tables.range(..=at.address).next_back()?;
        let offset = usize::try_from(at.address - bus).ok()?;
        (offset + 8 <= buffer.len()).then_some((bus, offset))
    }
}

impl<A: DmaAllocator> PageTableMemory for DmaTableMemory<A> {
    fn alloc_table(&mut self, bytes: u64, align: u64) -> Result<TableAddress, TableMemoryError> {
        let oom = TableMemoryError::OutOfMemory { bytes };
        if align > DMA_ALIGNMENT {
            return Err(oom);
        }
        let len = usize::try_from(bytes).map_err(|_| oom)?;
        let mut buffer = self.allocator.alloc(len).map_err(|_| oom)?;
        if buffer.bus_address() % align.max(1) != 0 {
            self.allocator.free(buffer);
            return Err(oom);
        }
        if buffer.fill(0, len, 0).is_err() {
            self.allocator.free(buffer);
            return Err(oom);
        }
        let address = buffer.bus_address();
        self.tables.insert(address, buffer);
        Ok(TableAddress { aperture: TableAperture::SystemCoherent, address })
    }

    fn free_table(&mut self, table: TableAddress, _bytes: u64) {
        if let Some(buffer) = self.tables.remove(&table.address) {
            self.allocator.free(buffer);
        }
    }

    fn read_u64(&self, at: TableAddress) -> Result<u64, TableMemoryError> {
        let (bus, offset) = self.locate(at).ok_or(TableMemoryError::BadAddress { at })?;
        // Volatile: an entry is one 8-byte access, as the GPU's MMU walks the tables while they
        // change.
        self.tables.get(&bus).and_then(|b| b.read_volatile_u64(offset)).ok_or(TableMemoryError::BadAddress { at })
    }

    fn write_u64(&mut self, at: TableAddress, value: u64) -> Result<(), TableMemoryError> {
        let (bus, offset) = self.locate(at).ok_or(TableMemoryError::BadAddress { at })?;
        let written = self.tables.get_mut(&bus).is_some_and(|b| b.write_volatile_u64(offset, value));
        if !written {
            return Err(TableMemoryError::BadAddress { at });
        }
        self.entry_writes += 1;
        Ok(())
    }
}
