//! DMA memory over frames: physically contiguous runs from the frame allocator, handed out as
//! [`DmaBuffer`]s (the driver's one accessor of device-visible memory). Bus addresses are
//! physical addresses (no IOMMU is programmed); the CPU reaches the frames through the RAM
//! mapping.
//!
//! This module keeps the list of live allocations, so that
//! - [`free`] returns frames only for a buffer [`alloc`] handed out (anything else is refused
//!   and nothing is freed), and
//! - a device modelled in software (the in-kernel GPU model, [`crate::gpu_model`]) reaches system
//!   memory through [`device_read`] and [`device_write`] only inside live allocations, as a
//!   device behind an IOMMU would: never the kernel's own memory;
//! - boot-module memory shared read-only ([`share_module_read_only`]: the GSP-RM image used in
//!   place) is readable by a device and never writable.

use super::{frames, paging, PAGE_SIZE};
use alloc::collections::BTreeMap;
use nvgpu::platform::DmaBuffer;
use spin::Mutex;

/// One live allocation, keyed by its first frame: how many frames, and the length its
/// `DmaBuffer` was made with.
struct Allocation {
    pages: u64,
    len: usize,
}

static LIVE: Mutex<BTreeMap<u64, Allocation>> = Mutex::new(BTreeMap::new());

/// Boot-module ranges shared read-only with devices: first byte's bus address to length, in
/// whole pages. Modules live as long as the kernel, so a share is never withdrawn.
static SHARED: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());

/// The bus address of `bytes` where they lie, shared read-only with devices, when they start on
/// a page inside one boot module and the whole pages covering them are that module's: `None`
/// otherwise (memory that is not a module, such as an aligned copy of a misaligned one, or a
/// range whose last page would reach past the module), and the caller copies.
pub fn share_module_read_only(bytes: &[u8]) -> Option<u64> {
    let start = bytes.as_ptr() as usize;
    let len = bytes.len();
    let pages_len = (len as u64).div_ceil(PAGE_SIZE).checked_mul(PAGE_SIZE)?;
    let module = crate::boot_extras().modules().find(|m| {
        let base = m.data.as_ptr() as usize;
        start >= base && start - base <= m.data.len() && (start - base) as u64 + pages_len <= m.data.len() as u64
    })?;
    let bus = module.phys + (start - module.data.as_ptr() as usize) as u64;
    if !bus.is_multiple_of(PAGE_SIZE) || pages_len == 0 {
        return None;
    }
    SHARED.lock().insert(bus, pages_len);
    Some(bus)
}

/// Whether `[bus, bus + len)` lies inside one read-only share.
fn is_shared(bus: u64, len: usize) -> bool {
    let Some(end) = bus.checked_add(len as u64) else { return false };
    SHARED.lock().range(..=bus).next_back().is_some_and(|(&start, &size)| end <= start + size)
}

/// `len` bytes (at least one frame) of zeroed, physically contiguous DMA memory; `None` when
/// the frame allocator has no run that long.
pub fn alloc(len: usize) -> Option<DmaBuffer> {
    let pages = (len as u64).div_ceil(PAGE_SIZE).max(1);
    let phys = frames::alloc_contiguous(pages)?;
    LIVE.lock().insert(phys, Allocation { pages, len });
    let cpu = paging::phys_to_virt(phys) as *mut u8;
    // SAFETY: the frames were just taken from the allocator (zeroed) and are recorded as this
    // buffer's alone; they are RAM, mapped at `cpu` for the kernel's lifetime, and stay
    // allocated until `free` takes this very buffer back. The device sees them at their
    // physical address (no IOMMU), which is `phys`.
    Some(unsafe { DmaBuffer::new(cpu, phys, len) })
}

/// A buffer [`free`] did not hand out (or not with this length); it was dropped, nothing freed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotOurs {
    pub bus: u64,
    pub len: usize,
}

impl core::fmt::Display for NotOurs {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} bytes at bus address {:#x} are not a live DMA allocation", self.len, self.bus)
    }
}

/// Returns the frames of a buffer [`alloc`] handed out. The buffer is identified by its bus
/// address, length and CPU address together: only the `DmaBuffer` made in `alloc` has the
/// CPU address of those frames (`DmaBuffer`'s constructors require exclusive memory).
pub fn free(buffer: DmaBuffer) -> Result<(), NotOurs> {
    let (bus, len) = (buffer.bus_address(), buffer.len());
    let cpu = buffer.cpu_address() as u64;
    let pages = {
        let mut live = LIVE.lock();
        match live.get(&bus) {
            Some(a) if a.len == len && cpu == paging::phys_to_virt(bus) => {
                let pages = a.pages;
                live.remove(&bus);
                pages
            }
            _ => return Err(NotOurs { bus, len }),
        }
    };
    // `buffer` was the only CPU accessor of the frames, and it is consumed here.
    for i in 0..pages {
        frames::free(bus + i * PAGE_SIZE);
    }
    Ok(())
}

/// Whether `[bus, bus + len)` lies in live allocations (adjacent ones may share an access).
fn is_live(live: &BTreeMap<u64, Allocation>, bus: u64, len: usize) -> bool {
    let Some(end) = bus.checked_add(len as u64) else { return false };
    let mut at = bus;
    while at < end {
        let Some((&start, a)) = live.range(..=at).next_back() else { return false };
        let alloc_end = start + a.pages * PAGE_SIZE;
        if at >= alloc_end {
            return false;
        }
        at = alloc_end;
    }
    true
}

/// A device's read of `buf.len()` bytes at `bus`: `false` (nothing read) unless they lie in
/// live DMA allocations or in one read-only share.
pub fn device_read(bus: u64, buf: &mut [u8]) -> bool {
    let live = LIVE.lock();
    if !is_live(&live, bus, buf.len()) {
        if !is_shared(bus, buf.len()) {
            return false;
        }
        let src = paging::phys_to_virt(bus) as *const u8;
        // SAFETY: the range lies inside one boot module (checked by `share_module_read_only`
        // when the share was made), RAM mapped at `src` for the kernel's lifetime, which
        // nothing writes: modules are read-only input.
        unsafe { core::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), buf.len()) };
        return true;
    }
    let src = paging::phys_to_virt(bus) as *const u8;
    // SAFETY: the range is frames of live DMA allocations (checked under the lock, which is
    // held for the copy, so none is freed meanwhile), RAM mapped at `src`. The CPU side reaches
    // them through their `DmaBuffer`s, whose accessors copy in and out through raw pointers;
    // `copy` allows overlap, should `buf` be such a copy. (The driver's `as_slice` views are
    // taken between device accesses, not held across the register access that runs the model.)
    unsafe { core::ptr::copy(src, buf.as_mut_ptr(), buf.len()) };
    true
}

/// A device's write of `data` at `bus`: `false` (nothing written) unless it lies in live DMA
/// allocations.
pub fn device_write(bus: u64, data: &[u8]) -> bool {
    let live = LIVE.lock();
    if !is_live(&live, bus, data.len()) {
        return false;
    }
    let dst = paging::phys_to_virt(bus) as *mut u8;
    // SAFETY: as in `device_read`: frames of live DMA allocations, mapped at `dst`, which the
    // CPU side reaches through raw pointers only; the device writes them as DMA does.
    unsafe { core::ptr::copy(data.as_ptr(), dst, data.len()) };
    true
}
