//! The CPU's path into VRAM through PRAMIN, BAR0's 1 MiB window (`hw::pramin`), and page-table
//! memory in VRAM written through it.
//!
//! [`Pramin`] moves the window as needed, the way RM's `kbusSetBAR0WindowVidOffset_GM107`/`_GH100`
//! do (64 KiB-aligned base, video memory target), and puts back the window it found when it is
//! dropped. It is slow (one 32-bit register access per word): meant for page tables, instance
//! blocks and bring-up, not bulk data. [`VramTableMemory`] is a `PageTableMemory` whose tables are
//! carved from a [`VramAllocator`] and written through the window.

use alloc::collections::BTreeMap;
use core::cell::Cell;
use core::fmt;

use super::format::{TableAddress, TableAperture};
use super::page_table::{PageTableMemory, TableMemoryError};
use super::vram::{VramAllocation, VramAllocator};
use crate::hal::Family;
use crate::hw::pramin::{
    Bar0WindowTarget, WindowRegister, NV_PBUS_BAR0_WINDOW, NV_PBUS_BAR0_WINDOW_BASE_SHIFT, NV_PRAMIN,
    NV_XAL_EP_BAR0_WINDOW, NV_XAL_EP_BAR0_WINDOW_BASE_SHIFT, PRAMIN_WINDOW_BYTES,
};
use crate::hw::RegisterIo;

/// A PRAMIN access could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PraminError {
    /// No window register is known for this family.
    Unsupported { family: Family },
    /// The address is beyond what the window's base field reaches.
    OutOfReach { address: u64 },
}

impl fmt::Display for PraminError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PraminError::Unsupported { family } => write!(f, "no PRAMIN window register known for {family:?}"),
            PraminError::OutOfReach { address } => write!(f, "VRAM {address:#x} is beyond the PRAMIN window's reach"),
        }
    }
}

const BASE_SHIFT: u32 = NV_PBUS_BAR0_WINDOW_BASE_SHIFT;
const _: () = assert!(NV_PBUS_BAR0_WINDOW_BASE_SHIFT == NV_XAL_EP_BAR0_WINDOW_BASE_SHIFT);

/// BAR0's window into VRAM. Restores the window it found when dropped.
pub struct Pramin<'a, R: RegisterIo + ?Sized> {
    io: &'a R,
    register: WindowRegister,
    found: u32,
    /// The base this value set, in bytes (`None` until it moves the window).
    base: Cell<Option<u64>>,
    moves: Cell<u64>,
}

impl<'a, R: RegisterIo + ?Sized> Pramin<'a, R> {
    /// The window of a GPU of `family` behind `io`.
    pub fn new(io: &'a R, family: Family) -> Result<Self, PraminError> {
        let register = crate::hal::for_family(family).pramin_window.ok_or(PraminError::Unsupported { family })?;
        let found = io.read32(register.offset());
        Ok(Pramin { io, register, found, base: Cell::new(None), moves: Cell::new(0) })
    }

    /// Times the window was moved.
    pub fn window_moves(&self) -> u64 {
        self.moves.get()
    }

    /// The BAR0 offset that shows VRAM byte `address` (4-byte aligned), moving the window if
    /// it does not show `address..address + 4` now.
    fn place(&self, address: u64) -> Result<u32, PraminError> {
        if let Some(base) = self.base.get() {
            if address >= base && address + 4 <= base + PRAMIN_WINDOW_BYTES {
                return Ok(NV_PRAMIN.first + (address - base) as u32);
            }
        }
        let units = address >> BASE_SHIFT;
        if units > u64::from(self.register.max_base()) {
            return Err(PraminError::OutOfReach { address });
        }
        let value = match self.register {
            WindowRegister::Pbus => NV_PBUS_BAR0_WINDOW::default()
                .with(NV_PBUS_BAR0_WINDOW::BASE, units as u32)
                .with(NV_PBUS_BAR0_WINDOW::TARGET, Bar0WindowTarget::VidMem)
                .raw(),
            WindowRegister::XalEp => {
                NV_XAL_EP_BAR0_WINDOW::default().with(NV_XAL_EP_BAR0_WINDOW::BASE, units as u32).raw()
            }
        };
        self.io.write32(self.register.offset(), value);
        let base = units << BASE_SHIFT;
        self.base.set(Some(base));
        self.moves.set(self.moves.get() + 1);
        Ok(NV_PRAMIN.first + (address - base) as u32)
    }

    /// Reads the 32-bit word at VRAM `address` (rounded down to 4 bytes).
    pub fn read_u32(&self, address: u64) -> Result<u32, PraminError> {
        Ok(self.io.read32(self.place(address & !3)?))
    }

    /// Writes the 32-bit word at VRAM `address` (rounded down to 4 bytes).
    pub fn write_u32(&self, address: u64, value: u32) -> Result<(), PraminError> {
        self.io.write32(self.place(address & !3)?, value);
        Ok(())
    }

    /// Reads a 64-bit entry (two words, low first).
    pub fn read_u64(&self, address: u64) -> Result<u64, PraminError> {
        let low = self.read_u32(address)?;
        let high = self.read_u32(address + 4)?;
        Ok(u64::from(low) | (u64::from(high) << 32))
    }

    /// Writes a 64-bit entry in two words, ordered so that a concurrent walker never sees a
    /// valid half-written entry: the valid/aperture bits live in the low word, so it goes last
    /// when the entry becomes non-zero and first when it is cleared.
    pub fn write_u64(&self, address: u64, value: u64) -> Result<(), PraminError> {
        let (low, high) = (value as u32, (value >> 32) as u32);
        if low == 0 {
            self.write_u32(address, low)?;
            self.write_u32(address + 4, high)
        } else {
            self.write_u32(address + 4, high)?;
            self.write_u32(address, low)
        }
    }

    /// Reads `buf.len()` bytes of VRAM from `address`.
    pub fn read_bytes(&self, address: u64, buf: &mut [u8]) -> Result<(), PraminError> {
        let mut done = 0usize;
        while done < buf.len() {
            let at = address + done as u64;
            let skip = (at & 3) as usize;
            let word = self.read_u32(at)?.to_le_bytes();
            let n = (4 - skip).min(buf.len() - done);
            buf[done..done + n].copy_from_slice(&word[skip..skip + n]);
            done += n;
        }
        Ok(())
    }

    /// Writes `data` to VRAM at `address` (partial words are read, changed and written back).
    pub fn write_bytes(&self, address: u64, data: &[u8]) -> Result<(), PraminError> {
        let mut done = 0usize;
        while done < data.len() {
            let at = address + done as u64;
            let skip = (at & 3) as usize;
            let n = (4 - skip).min(data.len() - done);
            let mut word = if n == 4 { [0; 4] } else { self.read_u32(at)?.to_le_bytes() };
            word[skip..skip + n].copy_from_slice(&data[done..done + n]);
            self.write_u32(at, u32::from_le_bytes(word))?;
            done += n;
        }
        Ok(())
    }
}

impl<R: RegisterIo + ?Sized> Drop for Pramin<'_, R> {
    fn drop(&mut self) {
        if self.base.get().is_some() {
            self.io.write32(self.register.offset(), self.found);
        }
    }
}

/// Page tables in VRAM: table memory from a [`VramAllocator`], entries through [`Pramin`].
pub struct VramTableMemory<'a, R: RegisterIo + ?Sized> {
    pramin: Pramin<'a, R>,
    allocator: VramAllocator,
    tables: BTreeMap<u64, VramAllocation>,
    /// Tables owned by someone else (GSP-RM's BAR1 root), base -> bytes: read and written,
    /// never allocated or freed here.
    adopted: BTreeMap<u64, u64>,
    /// 64-bit entries written (zeroing new tables not counted).
    pub entry_writes: u64,
}

impl<'a, R: RegisterIo + ?Sized> VramTableMemory<'a, R> {
    /// Tables carved from `allocator`, written through the PRAMIN window of `io`.
    pub fn new(io: &'a R, family: Family, allocator: VramAllocator) -> Result<Self, PraminError> {
        Ok(VramTableMemory {
            pramin: Pramin::new(io, family)?,
            allocator,
            tables: BTreeMap::new(),
            adopted: BTreeMap::new(),
            entry_writes: 0,
        })
    }

    /// The window, for other VRAM accesses.
    pub fn pramin(&self) -> &Pramin<'a, R> {
        &self.pramin
    }

    /// Gives the allocator back (tables still held stay allocated in it) and restores the
    /// PRAMIN window.
    pub fn into_allocator(self) -> VramAllocator {
        self.allocator
    }

    /// The allocator tables come from.
    pub fn allocator_mut(&mut self) -> &mut VramAllocator {
        &mut self.allocator
    }

    /// Lets entries of the `bytes`-byte VRAM table at `table`, which someone else allocated and
    /// keeps, be read and written through this memory (the BAR1 root GSP-RM reports). Refused
    /// when it is not an aligned VRAM address or overlaps a table held here.
    pub fn adopt_table(&mut self, table: TableAddress, bytes: u64) -> Result<(), TableMemoryError> {
        let bad = TableMemoryError::BadAddress { at: table };
        let end = table.address.checked_add(bytes).ok_or(bad)?;
        if table.aperture != TableAperture::Video || !table.address.is_multiple_of(8) || bytes == 0 {
            return Err(bad);
        }
        let overlaps_own = self.tables.values().any(|t| t.base() < end && table.address < t.base() + t.size());
        let overlaps_adopted = self.adopted.iter().any(|(&base, &size)| base < end && table.address < base + size);
        if overlaps_own || overlaps_adopted {
            return Err(bad);
        }
        self.adopted.insert(table.address, bytes);
        Ok(())
    }

    fn check(&self, at: TableAddress) -> Result<u64, TableMemoryError> {
        let bad = TableMemoryError::BadAddress { at };
        if at.aperture != TableAperture::Video || !at.address.is_multiple_of(8) {
            return Err(bad);
        }
        let end = at.address.checked_add(8).ok_or(bad)?;
        let own = self.tables.range(..=at.address).next_back().map(|(_, t)| (t.base(), t.size()));
        let adopted = self.adopted.range(..=at.address).next_back().map(|(&base, &size)| (base, size));
        [own, adopted].into_iter().flatten().any(|(base, size)| end <= base + size).then_some(at.address).ok_or(bad)
    }
}

impl<R: RegisterIo + ?Sized> PageTableMemory for VramTableMemory<'_, R> {
    fn alloc_table(&mut self, bytes: u64, align: u64) -> Result<TableAddress, TableMemoryError> {
        let oom = TableMemoryError::OutOfMemory { bytes };
        let allocation = self.allocator.alloc(bytes, align).map_err(|_| oom)?;
        let base = allocation.base();
        let zeroed = (0..bytes.div_ceil(4)).try_for_each(|i| self.pramin.write_u32(base + i * 4, 0));
        if zeroed.is_err() {
            let _ = self.allocator.free(allocation);
            return Err(oom);
        }
        self.tables.insert(base, allocation);
        Ok(TableAddress { aperture: TableAperture::Video, address: base })
    }

    fn free_table(&mut self, table: TableAddress, _bytes: u64) {
        if let Some(allocation) = self.tables.remove(&table.address) {
            let _ = self.allocator.free(allocation);
        } else {
            // An adopted table goes back to its owner untouched.
            self.adopted.remove(&table.address);
        }
    }

    fn read_u64(&self, at: TableAddress) -> Result<u64, TableMemoryError> {
        let address = self.check(at)?;
        self.pramin.read_u64(address).map_err(|_| TableMemoryError::BadAddress { at })
    }

    fn write_u64(&mut self, at: TableAddress, value: u64) -> Result<(), TableMemoryError> {
        let address = self.check(at)?;
        self.entry_writes += 1;
        self.pramin.write_u64(address, value).map_err(|_| TableMemoryError::BadAddress { at })
    }
}
