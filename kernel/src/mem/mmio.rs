//! Device registers: one type for every uncached MMIO region the kernel maps (GPU BAR0, the ECAM
//! windows, the HPET, devices under test). [`Mmio::map`] is the only way to get one, so every
//! access goes through a mapping this module made, with its bounds and alignment checked.

use super::paging::{self, CacheType, MapError};

/// `len` bytes of device memory mapped uncached at `virt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mmio {
    virt: u64,
    len: u64,
}

impl Mmio {
    /// Maps `len` bytes of device memory at `phys` uncached (a permanent mapping).
    pub fn map(phys: u64, len: u64) -> Result<Mmio, MapError> {
        let virt = paging::map_mmio(phys, len, CacheType::Uncached)?;
        Ok(Mmio { virt, len })
    }

    /// The address of `offset` when an access of `size` bytes there is inside and aligned.
    fn at(&self, offset: u64, size: u64) -> Option<u64> {
        (offset.is_multiple_of(size) && offset.checked_add(size)? <= self.len).then(|| self.virt + offset)
    }

    /// The 32-bit register at `offset`; `None` outside the region or misaligned.
    pub fn read32(&self, offset: u64) -> Option<u32> {
        let p = self.at(offset, 4)?;
        // SAFETY: `map` mapped `len` bytes uncached at `virt` for ever; `at` checked the access
        // is inside and 4-byte aligned. Volatile: the device changes its registers.
        Some(unsafe { core::ptr::read_volatile(p as *const u32) })
    }

    /// Writes the 32-bit register at `offset`; `false` (nothing written) outside or misaligned.
    pub fn write32(&self, offset: u64, value: u32) -> bool {
        let Some(p) = self.at(offset, 4) else { return false };
        // SAFETY: as in `read32`.
        unsafe { core::ptr::write_volatile(p as *mut u32, value) };
        true
    }

    /// The 64-bit register at `offset`; `None` outside the region or misaligned.
    pub fn read64(&self, offset: u64) -> Option<u64> {
        let p = self.at(offset, 8)?;
        // SAFETY: as in `read32`, 8-byte aligned.
        Some(unsafe { core::ptr::read_volatile(p as *const u64) })
    }

    /// Writes the 64-bit register at `offset`; `false` (nothing written) outside or misaligned.
    pub fn write64(&self, offset: u64, value: u64) -> bool {
        let Some(p) = self.at(offset, 8) else { return false };
        // SAFETY: as in `read64`.
        unsafe { core::ptr::write_volatile(p as *mut u64, value) };
        true
    }
}
