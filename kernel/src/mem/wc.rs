//! Write-combined windows onto device memory: prefetchable PCI BARs (a framebuffer, an NVIDIA
//! GPU's BAR1), mapped with PAT entry 1 (WC, see the layout in [`super::paging`]).
//!
//! Why WC fits only prefetchable BARs: a BAR marked prefetchable promises that reads have no
//! side effects and that writes may be merged (PCI Local Bus Specification 3.0, §6.2.5.1), which
//! is exactly what the WC memory type does to it (Intel SDM vol. 3A, section 11.3 "Methods of
//! Caching Available": WC is uncached, reads may be speculative, writes are combined in WC
//! buffers and may be delayed and reordered among themselves). Callers check the BAR.
//!
//! # Making writes reach the device ([`WcWindow::flush`])
//! 1. A fence drains the WC buffers. SFENCE would do for ordering later *stores*, but it "is
//!    not ordered with respect to memory loads" (SDM vol. 2B, SFENCE), so a read issued after
//!    it could still go out before the buffered writes. MFENCE makes every earlier load and
//!    store globally visible before any later load or store (SDM vol. 2B, MFENCE; vol. 3A,
//!    section 8.2.5 "Strengthening or Weakening the Memory-Ordering Model"), which for WC stores
//!    means they have left the WC buffers for the bus. So the fence here is MFENCE, which
//!    includes what SFENCE does.
//! 2. Leaving the CPU is not arriving: PCIe writes are posted. A read from the same window is a
//!    non-posted request, which may not pass posted writes on the way to the device (PCI Express
//!    Base Specification, section 2.4.1 "Transaction Ordering Rules"); its completion therefore
//!    returns only after the writes have reached the device. The read must go to an address
//!    the device answers (for BAR1: a mapped BAR1 page), so the caller names it.

use super::paging::{self, CacheType, MapError};

/// `[phys, phys + len)` of device memory, mapped write-combined for good (mappings are never
/// torn down). Owns nothing but the mapping; the device behind it belongs to whoever maps it.
#[derive(Debug)]
pub struct WcWindow {
    virt: u64,
    phys: u64,
    len: u64,
}

/// An access that does not fit in the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfWindow {
    pub offset: u64,
    pub len: u64,
    pub window: u64,
}

impl core::fmt::Display for OutOfWindow {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:#x} bytes at {:#x} do not fit a {:#x}-byte window", self.len, self.offset, self.window)
    }
}

impl WcWindow {
    /// Maps `len` bytes of device memory at `phys` write-combined. `phys` must be the start of
    /// memory that tolerates WC (a prefetchable BAR or part of one).
    pub fn map(phys: u64, len: u64) -> Result<Self, MapError> {
        let virt = paging::map_mmio(phys, len, CacheType::WriteCombining)?;
        Ok(WcWindow { virt, phys, len })
    }

    pub fn virt(&self) -> u64 {
        self.virt
    }

    pub fn phys(&self) -> u64 {
        self.phys
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    fn check(&self, offset: u64, len: usize) -> Result<u64, OutOfWindow> {
        let err = OutOfWindow { offset, len: len as u64, window: self.len };
        let end = offset.checked_add(len as u64).ok_or(err)?;
        if end > self.len {
            return Err(err);
        }
        Ok(self.virt + offset)
    }

    /// Writes `data` at `offset`: bytes up to 8-byte alignment, then 8-byte stores. On return
    /// the stores may still sit in WC buffers or be posted; see [`Self::flush`].
    pub fn write(&self, offset: u64, data: &[u8]) -> Result<(), OutOfWindow> {
        let mut addr = self.check(offset, data.len())?;
        let mut rest = data;
        while !rest.is_empty() && (addr % 8 != 0 || rest.len() < 8) {
            // SAFETY: `addr` is inside the window (checked above), which stays mapped WC for
            // good; a byte store to prefetchable device memory has no side effects beyond it.
            unsafe { core::ptr::write_volatile(addr as *mut u8, rest[0]) };
            addr += 1;
            rest = &rest[1..];
        }
        let mut words = rest.chunks_exact(8);
        for w in &mut words {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(w);
            // SAFETY: as above; `addr` is 8-byte aligned and 8 bytes lie before the window end.
            unsafe { core::ptr::write_volatile(addr as *mut u64, u64::from_le_bytes(bytes)) };
            addr += 8;
        }
        for &b in words.remainder() {
            // SAFETY: as above.
            unsafe { core::ptr::write_volatile(addr as *mut u8, b) };
            addr += 1;
        }
        Ok(())
    }

    /// Reads `buf.len()` bytes at `offset` (byte loads up to 8-byte alignment, then 8-byte loads).
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> Result<(), OutOfWindow> {
        let mut addr = self.check(offset, buf.len())?;
        let mut i = 0;
        while i < buf.len() && (addr % 8 != 0 || buf.len() - i < 8) {
            // SAFETY: inside the window, which stays mapped; reads of prefetchable memory have
            // no side effects.
            buf[i] = unsafe { core::ptr::read_volatile(addr as *const u8) };
            addr += 1;
            i += 1;
        }
        while buf.len() - i >= 8 {
            // SAFETY: as above; aligned, and 8 bytes lie before the window end.
            let w = unsafe { core::ptr::read_volatile(addr as *const u64) };
            buf[i..i + 8].copy_from_slice(&w.to_le_bytes());
            addr += 8;
            i += 8;
        }
        while i < buf.len() {
            // SAFETY: as above.
            buf[i] = unsafe { core::ptr::read_volatile(addr as *const u8) };
            addr += 1;
            i += 1;
        }
        Ok(())
    }

    /// Drains the CPU's WC buffers and, when `read_back` names an offset, reads the aligned
    /// dword holding it so that the device has received every earlier write when this returns
    /// (see the module notes). Returns the dword read.
    pub fn flush(&self, read_back: Option<u64>) -> Result<Option<u32>, OutOfWindow> {
        let probe = match read_back {
            Some(offset) => Some(self.check(offset & !3, 4)?),
            None => None,
        };
        // SAFETY: MFENCE only orders memory accesses.
        unsafe { core::arch::asm!("mfence", options(nostack, preserves_flags)) };
        // SAFETY: inside the window (checked above), dword aligned; reads have no side effects.
        Ok(probe.map(|addr| unsafe { core::ptr::read_volatile(addr as *const u32) }))
    }
}
