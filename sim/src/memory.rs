//! System memory as the model's engines see it: bus addresses, nothing else.
//!
//! A falcon DMA (and later the GSP queues, the MMU, the copy engine) reaches system memory only
//! through [`SystemMemory`], the device side of the same boundary the driver's
//! `nvgpu::platform::DmaAllocator` is the CPU side of. The kernel implements it over its live
//! DMA allocations (`kernel::mem::dma`); host tests use [`DmaArena`], which is both: the driver
//! allocates from it, the model reads and writes the same bytes by bus address.

// The device side of the DMA boundary on the host: `DmaArena` allocates the memory it lends out
// as `DmaBuffer`s and reaches it by raw pointer, as the kernel's physical memory is reached.
#![allow(unsafe_code)]

use alloc::alloc::{alloc_zeroed, dealloc, Layout};
use alloc::sync::Arc;
use alloc::vec::Vec;

use nvgpu::platform::{DmaAllocator, DmaBuffer, DmaError};
use spin::Mutex;

/// Memory a device reaches by bus address.
pub trait SystemMemory {
    /// Fills `buf` from bus address `bus`; `false` (and `buf` unspecified) when any byte of the
    /// range is not memory the device may reach.
    fn read(&self, bus: u64, buf: &mut [u8]) -> bool;
    /// Writes `data` at bus address `bus`; `false` (and nothing written) when any byte of the
    /// range is not memory the device may reach.
    fn write(&self, bus: u64, data: &[u8]) -> bool;
}

impl<T: SystemMemory + ?Sized> SystemMemory for &T {
    fn read(&self, bus: u64, buf: &mut [u8]) -> bool {
        (**self).read(bus, buf)
    }
    fn write(&self, bus: u64, data: &[u8]) -> bool {
        (**self).write(bus, data)
    }
}

impl<T: SystemMemory + ?Sized> SystemMemory for Arc<T> {
    fn read(&self, bus: u64, buf: &mut [u8]) -> bool {
        (**self).read(bus, buf)
    }
    fn write(&self, bus: u64, data: &[u8]) -> bool {
        (**self).write(bus, data)
    }
}

/// First bus address [`DmaArena`] hands out: above 4 GiB, so a driver that truncates bus
/// addresses to 32 bits (or forgets `DMATRFBASE1`) reads the wrong memory and fails.
pub const ARENA_FIRST_BUS_ADDRESS: u64 = 0x1_0000_0000;
/// Alignment (and granule) of arena allocations, the 4 KiB `DmaAllocator` promises.
pub const ARENA_ALIGNMENT: usize = 4096;

struct Region {
    bus: u64,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Region's memory is owned by the arena (allocated in `alloc`, freed in `free` or on
// drop); the pointer is only dereferenced under the arena's lock.
unsafe impl Send for Region {}

struct ArenaInner {
    regions: Vec<Region>,
    next_bus: u64,
}

impl Drop for ArenaInner {
    fn drop(&mut self) {
        for region in self.regions.drain(..) {
            free_region(&region);
        }
    }
}

fn layout_for(len: usize) -> Option<Layout> {
    Layout::from_size_align(len.max(1), ARENA_ALIGNMENT).ok()
}

fn free_region(region: &Region) {
    if let Some(layout) = layout_for(region.len) {
        // SAFETY: `ptr` came from `alloc_zeroed` with this same layout and is freed once (the
        // region is removed from the arena's list before or as this runs).
        unsafe { dealloc(region.ptr, layout) };
    }
}

/// DMA memory for host tests (and the kernel's model path): the driver allocates from it
/// through [`DmaAllocator`], the model reaches the same bytes through [`SystemMemory`].
///
/// Clones share one arena. Bus addresses start at [`ARENA_FIRST_BUS_ADDRESS`], are aligned to
/// 4 KiB and never reused, so a stale bus address after `free` faults instead of aliasing.
/// Accesses that straddle two allocations fault too, as they would cross pages the IOMMU maps
/// separately.
#[derive(Clone)]
pub struct DmaArena {
    inner: Arc<Mutex<ArenaInner>>,
}

impl Default for DmaArena {
    fn default() -> Self {
        Self::new()
    }
}

impl DmaArena {
    /// An empty arena.
    pub fn new() -> Self {
        Self { inner: Arc::new(Mutex::new(ArenaInner { regions: Vec::new(), next_bus: ARENA_FIRST_BUS_ADDRESS })) }
    }

    /// Bytes currently allocated.
    pub fn allocated(&self) -> usize {
        self.inner.lock().regions.iter().map(|r| r.len).sum()
    }

    fn with_range<R>(&self, bus: u64, len: usize, f: impl FnOnce(*mut u8) -> R) -> Option<R> {
        let inner = self.inner.lock();
        let region = inner.regions.iter().find(|r| bus >= r.bus && bus - r.bus < r.len as u64)?;
        let offset = (bus - region.bus) as usize;
        if len > region.len - offset {
            return None;
        }
        // SAFETY: `offset + len <= region.len`, checked above; the region stays allocated while
        // the lock is held.
        Some(f(unsafe { region.ptr.add(offset) }))
    }
}

impl SystemMemory for DmaArena {
    fn read(&self, bus: u64, buf: &mut [u8]) -> bool {
        self.with_range(bus, buf.len(), |src| {
            // SAFETY: `src` is valid for `buf.len()` bytes (see `with_range`); `buf` is a
            // distinct Rust slice, so the ranges do not overlap.
            unsafe { core::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), buf.len()) }
        })
        .is_some()
    }

    fn write(&self, bus: u64, data: &[u8]) -> bool {
        self.with_range(bus, data.len(), |dst| {
            // SAFETY: as in `read`, with the roles swapped.
            unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) }
        })
        .is_some()
    }
}

impl DmaAllocator for DmaArena {
    fn alloc(&self, len: usize) -> Result<DmaBuffer, DmaError> {
        let error = DmaError { requested: len };
        let layout = layout_for(len).ok_or(error)?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(error);
        }
        let mut inner = self.inner.lock();
        let bus = inner.next_bus;
        let span = (len.max(1) as u64).div_ceil(ARENA_ALIGNMENT as u64) * ARENA_ALIGNMENT as u64;
        // A guard page between allocations keeps straddling accesses from landing in a neighbour.
        inner.next_bus = bus + span + ARENA_ALIGNMENT as u64;
        inner.regions.push(Region { bus, ptr, len });
        // SAFETY: `ptr` is valid for `len` bytes until `free` (or the arena's drop), is owned by
        // this allocation alone, and the model sees the same bytes at `bus`.
        Ok(unsafe { DmaBuffer::new(ptr, bus, len) })
    }

    fn free(&self, buffer: DmaBuffer) {
        let mut inner = self.inner.lock();
        if let Some(index) = inner.regions.iter().position(|r| r.bus == buffer.bus_address()) {
            let region = inner.regions.swap_remove(index);
            free_region(&region);
        } else {
            log::warn!("DmaArena: free of unknown buffer at bus {:#x}", buffer.bus_address());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_sees_what_the_driver_wrote() {
        let arena = DmaArena::new();
        let mut buffer = arena.alloc(8192).unwrap();
        assert!(buffer.bus_address() >= ARENA_FIRST_BUS_ADDRESS);
        assert_eq!(buffer.bus_address() % ARENA_ALIGNMENT as u64, 0);
        buffer.write(100, &[1, 2, 3, 4]).unwrap();
        let mut seen = [0u8; 4];
        assert!(arena.read(buffer.bus_address() + 100, &mut seen));
        assert_eq!(seen, [1, 2, 3, 4]);
        assert!(arena.write(buffer.bus_address(), &[9, 9]));
        assert_eq!(buffer.read_vec(0, 2).unwrap(), [9, 9]);
    }

    #[test]
    fn out_of_range_and_freed_addresses_fault() {
        let arena = DmaArena::new();
        let buffer = arena.alloc(256).unwrap();
        let bus = buffer.bus_address();
        let mut byte = [0u8; 1];
        assert!(!arena.read(bus + 256, &mut byte));
        assert!(!arena.read(bus + 200, &mut [0u8; 100]));
        assert!(!arena.read(0x1000, &mut byte));
        arena.free(buffer);
        assert!(!arena.read(bus, &mut byte));
        assert_eq!(arena.allocated(), 0);
        let again = arena.alloc(256).unwrap();
        assert_ne!(again.bus_address(), bus, "bus addresses are never reused");
    }
}
