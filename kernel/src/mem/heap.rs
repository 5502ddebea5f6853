//! The kernel heap: `linked_list_allocator` over a virtual window that grows page by page from
//! the frame allocator when an allocation does not fit.

use super::paging::{self, HEAP_BASE};
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::alloc::{GlobalAlloc, Layout};
use core::cell::RefCell;
use core::ptr::NonNull;
use linked_list_allocator::Heap;
use spin::Mutex;

const INITIAL_SIZE: u64 = 4 * 1024 * 1024;
const GROW_STEP: u64 = 4 * 1024 * 1024;
/// The heap window is 1 TiB of virtual space; physical memory runs out long before.
const HEAP_LIMIT: u64 = 1 << 40;

struct KernelHeap {
    heap: Mutex<Heap>,
}

#[global_allocator]
static ALLOCATOR: KernelHeap = KernelHeap { heap: Mutex::new(Heap::empty()) };

pub fn init() -> Result<(), paging::MapError> {
    paging::map_fresh(HEAP_BASE, INITIAL_SIZE)?;
    // SAFETY: the window was just mapped to fresh frames and is used by nothing else.
    unsafe { ALLOCATOR.heap.lock().init(HEAP_BASE as *mut u8, INITIAL_SIZE as usize) };
    Ok(())
}

#[derive(Debug, Clone, Copy)]
pub struct HeapStats {
    pub size: usize,
    pub used: usize,
}

pub fn stats() -> HeapStats {
    crate::arch::without_interrupts(|| {
        let h = ALLOCATOR.heap.lock();
        HeapStats { size: h.size(), used: h.used() }
    })
}

// SAFETY: allocation and deallocation go through `linked_list_allocator::Heap` under a lock;
// growth maps fresh frames directly after the current end before extending the heap.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        crate::arch::without_interrupts(|| {
            let mut heap = self.heap.lock();
            if let Ok(p) = heap.allocate_first_fit(layout) {
                return p.as_ptr();
            }
            let need = (layout.size() + layout.align()) as u64;
            let grow = need.div_ceil(GROW_STEP) * GROW_STEP;
            let top = heap.top() as u64;
            if top + grow > HEAP_BASE + HEAP_LIMIT {
                log::error!(
                    "heap: window exhausted ({} MiB in use) allocating {} bytes",
                    heap.used() >> 20,
                    layout.size()
                );
                return core::ptr::null_mut();
            }
            if let Err(e) = paging::map_fresh(top, grow) {
                let f = super::frames::stats();
                log::error!(
                    "heap: cannot grow by {} KiB for a {}-byte allocation: {e} ({} of {} frames in use, heap {} MiB)",
                    grow >> 10,
                    layout.size(),
                    f.allocated_frames,
                    f.total_frames,
                    heap.size() >> 20
                );
                return core::ptr::null_mut();
            }
            // SAFETY: [top, top+grow) was just mapped and directly follows the heap.
            unsafe { heap.extend(grow as usize) };
            heap.allocate_first_fit(layout).map(|p| p.as_ptr()).unwrap_or(core::ptr::null_mut())
        })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // SAFETY: `ptr` came from `alloc` with this layout (GlobalAlloc's contract).
            crate::arch::without_interrupts(|| unsafe { self.heap.lock().deallocate(p, layout) });
        }
    }
}

/// Byte buffers kept until the arena is dropped: [`Arena::keep`] takes one over and lends it
/// for as long as the arena is borrowed (an append-only arena: what `keep` returned stays valid
/// while further buffers arrive). The firmware-table mapper keeps its copies in one.
#[derive(Default)]
pub struct Arena {
    /// Each a `Box<[u8]>` turned into its raw pointer, so that no `Box` is moved (and retagged
    /// as unique) while a lent reference into it lives.
    kept: RefCell<Vec<NonNull<[u8]>>>,
}

impl Arena {
    /// Keeps `bytes` for the arena's lifetime and lends them out.
    pub fn keep(&self, bytes: Box<[u8]>) -> &[u8] {
        let raw = NonNull::from(Box::leak(bytes));
        self.kept.borrow_mut().push(raw);
        // SAFETY: `raw` is the allocation of a `Box` leaked just now, recorded in `kept`; it is
        // never written, moved or freed until `Arena::drop`, which cannot run while the
        // returned reference (bound to `&self`) lives.
        unsafe { raw.as_ref() }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for raw in self.kept.get_mut().drain(..) {
            // SAFETY: each pointer came from `Box::leak` in `keep` and is freed once, here; no
            // reference lent by `keep` outlives `&self`, which `&mut self` ends.
            drop(unsafe { Box::from_raw(raw.as_ptr()) });
        }
    }
}
