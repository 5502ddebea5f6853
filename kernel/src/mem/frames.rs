//! The physical frame allocator: usable regions from the boot memory map, handed out in
//! ascending address order (page tables built before the switch to the kernel's own map must
//! lie below 4 GiB, where the boot identity map reaches), with freed frames kept on a list
//! threaded through the frames themselves.

use super::{paging, PAGE_SIZE};
use bootloader_api::info::{MemoryRegion, MemoryRegionKind};
use spin::Mutex;

const MAX_RANGES: usize = 128;

struct Allocator {
    ranges: [(u64, u64); MAX_RANGES],
    count: usize,
    /// Index of the range being bumped through, and the next frame in it.
    current: usize,
    next: u64,
    /// Head of the free list (physical address; 0 = empty).
    free_head: u64,
    free_frames: u64,
    total_frames: u64,
    allocated_frames: u64,
}

static ALLOCATOR: Mutex<Allocator> = Mutex::new(Allocator {
    ranges: [(0, 0); MAX_RANGES],
    count: 0,
    current: 0,
    next: 0,
    free_head: 0,
    free_frames: 0,
    total_frames: 0,
    allocated_frames: 0,
});

#[derive(Debug, Clone, Copy)]
pub struct FrameStats {
    pub total_frames: u64,
    pub allocated_frames: u64,
}

pub fn init(regions: &[MemoryRegion]) {
    let mut a = ALLOCATOR.lock();
    for r in regions.iter().filter(|r| r.kind == MemoryRegionKind::Usable) {
        if a.count == MAX_RANGES {
            log::warn!("frames: more than {MAX_RANGES} usable regions; ignoring {:#x}..{:#x}", r.start, r.end);
            continue;
        }
        let i = a.count;
        a.ranges[i] = (r.start, r.end);
        a.count += 1;
        a.total_frames += (r.end - r.start) / PAGE_SIZE;
    }
    a.current = 0;
    a.next = a.ranges[0].0;
}

/// Allocates one 4 KiB frame (zeroed), or `None` when memory is exhausted.
pub fn alloc() -> Option<u64> {
    let frame = {
        let mut a = ALLOCATOR.lock();
        let frame = if a.free_head != 0 {
            let frame = a.free_head;
            // SAFETY: frames on the free list are ours and mapped (see `free`).
            a.free_head = unsafe { core::ptr::read_volatile(paging::phys_to_virt(frame) as *const u64) };
            a.free_frames -= 1;
            Some(frame)
        } else {
            loop {
                if a.current >= a.count {
                    break None;
                }
                let (_, end) = a.ranges[a.current];
                if a.next + PAGE_SIZE <= end {
                    let f = a.next;
                    a.next += PAGE_SIZE;
                    break Some(f);
                }
                a.current += 1;
                if a.current < a.count {
                    a.next = a.ranges[a.current].0;
                }
            }
        };
        if frame.is_some() {
            a.allocated_frames += 1;
        }
        frame
    };
    if let Some(f) = frame {
        // SAFETY: the frame was just taken from the free pool; nobody else refers to it.
        unsafe { core::ptr::write_bytes(paging::phys_to_virt(f) as *mut u8, 0, PAGE_SIZE as usize) };
    }
    frame
}

/// Allocates `count` physically contiguous frames (for DMA buffers), from the bump area only.
pub fn alloc_contiguous(count: u64) -> Option<u64> {
    let mut a = ALLOCATOR.lock();
    let bytes = count.checked_mul(PAGE_SIZE)?;
    while a.current < a.count {
        let (_, end) = a.ranges[a.current];
        if a.next.checked_add(bytes)? <= end {
            let f = a.next;
            a.next += bytes;
            a.allocated_frames += count;
            drop(a);
            // SAFETY: fresh frames, ours alone.
            unsafe { core::ptr::write_bytes(paging::phys_to_virt(f) as *mut u8, 0, bytes as usize) };
            return Some(f);
        }
        a.current += 1;
        if a.current < a.count {
            a.next = a.ranges[a.current].0;
        }
    }
    None
}

/// Returns a frame. The caller no longer uses it.
pub fn free(frame: u64) {
    let mut a = ALLOCATOR.lock();
    // SAFETY: the frame is ours (the caller's contract) and mapped through the RAM mapping.
    unsafe { core::ptr::write_volatile(paging::phys_to_virt(frame) as *mut u64, a.free_head) };
    a.free_head = frame;
    a.free_frames += 1;
    a.allocated_frames -= 1;
}

/// Whether `[start, end)` overlaps a range the allocator hands frames out of (usable RAM it
/// took from the memory map; ranges it ignored are never handed out).
pub fn overlaps_allocatable(start: u64, end: u64) -> bool {
    let a = ALLOCATOR.lock();
    a.ranges[..a.count].iter().any(|&(s, e)| start < e && s < end)
}

pub fn stats() -> FrameStats {
    let a = ALLOCATOR.lock();
    FrameStats { total_frames: a.total_frames, allocated_frames: a.allocated_frames }
}

/// One frame, owned: allocated zeroed by [`Frame::alloc`], returned to the allocator on drop.
pub struct Frame {
    phys: u64,
}

impl Frame {
    pub fn alloc() -> Option<Frame> {
        alloc().map(|phys| Frame { phys })
    }

    pub fn phys(&self) -> u64 {
        self.phys
    }

    /// The 8-byte word at `offset` (8-byte aligned, inside the frame).
    pub fn read_u64(&self, offset: u64) -> Option<u64> {
        if !offset.is_multiple_of(8) || offset >= PAGE_SIZE {
            return None;
        }
        let p = (paging::phys_to_virt(self.phys) + offset) as *const u64;
        // SAFETY: the frame is this `Frame`'s alone (taken from the allocator, returned only by
        // `drop`) and mapped through the RAM mapping; the word is inside it and aligned.
        Some(unsafe { core::ptr::read_volatile(p) })
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        free(self.phys);
    }
}
