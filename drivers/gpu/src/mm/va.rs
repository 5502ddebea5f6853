//! GPU virtual address ranges of one VA space: first fit over free ranges, aligned on request,
//! merged again when freed. What gets mapped there is the page tables' business; this only
//! keeps ranges from overlapping.

use alloc::collections::BTreeMap;
use core::fmt;

/// A VA range could not be handed out or returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VaError {
    /// No free range of `size` bytes at alignment `align`.
    Exhausted { size: u64, align: u64 },
    /// Size zero, alignment not a power of two, or a range that overflows.
    BadRequest { size: u64, align: u64 },
    /// `free` of a range that is not allocated as a whole.
    NotAllocated { va: u64, size: u64 },
}

impl fmt::Display for VaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VaError::Exhausted { size, align } => {
                write!(f, "no free GPU VA range of {size:#x} bytes aligned to {align:#x}")
            }
            VaError::BadRequest { size, align } => write!(f, "bad VA request: size {size:#x}, alignment {align:#x}"),
            VaError::NotAllocated { va, size } => write!(f, "VA range {va:#x}+{size:#x} is not allocated"),
        }
    }
}

/// The free and allocated ranges of `[start, end)`.
#[derive(Clone, Debug)]
pub struct VaAllocator {
    /// Free ranges: start -> end (exclusive), never adjacent (merged).
    free: BTreeMap<u64, u64>,
    /// Allocated ranges: start -> size.
    used: BTreeMap<u64, u64>,
}

impl VaAllocator {
    /// All of `[start, end)` free.
    pub fn new(start: u64, end: u64) -> Self {
        let mut free = BTreeMap::new();
        if end > start {
            free.insert(start, end);
        }
        VaAllocator { free, used: BTreeMap::new() }
    }

    /// A range of `size` bytes whose start is a multiple of `align`.
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<u64, VaError> {
        if size == 0 || !align.is_power_of_two() {
            return Err(VaError::BadRequest { size, align });
        }
        let found = self.free.iter().find_map(|(&start, &end)| {
            let at = start.checked_add(align - 1)? & !(align - 1);
            (at.checked_add(size)? <= end).then_some((start, end, at))
        });
        let (start, end, at) = found.ok_or(VaError::Exhausted { size, align })?;
        self.free.remove(&start);
        if at > start {
            self.free.insert(start, at);
        }
        if at + size < end {
            self.free.insert(at + size, end);
        }
        self.used.insert(at, size);
        Ok(at)
    }

    /// Returns a range `alloc` handed out.
    pub fn free(&mut self, va: u64, size: u64) -> Result<(), VaError> {
        if self.used.get(&va) != Some(&size) {
            return Err(VaError::NotAllocated { va, size });
        }
        self.used.remove(&va);
        let mut start = va;
        let mut end = va + size;
        if let Some((&prev_start, &prev_end)) = self.free.range(..va).next_back() {
            if prev_end == va {
                start = prev_start;
                self.free.remove(&prev_start);
            }
        }
        if let Some(next_end) = self.free.remove(&end) {
            end = next_end;
        }
        self.free.insert(start, end);
        Ok(())
    }

    /// Bytes free.
    pub fn free_bytes(&self) -> u64 {
        self.free.iter().map(|(s, e)| e - s).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_with_alignment_and_merging() {
        let mut va = VaAllocator::new(0x1000, 0x100_0000);
        let a = va.alloc(0x1000, 0x1000).unwrap();
        assert_eq!(a, 0x1000);
        let b = va.alloc(0x20_0000, 0x20_0000).unwrap();
        assert_eq!(b, 0x20_0000);
        let c = va.alloc(0x1000, 0x1000).unwrap();
        assert_eq!(c, 0x2000, "first fit reuses the gap before the aligned range");
        assert_eq!(va.free(b, 0x1000), Err(VaError::NotAllocated { va: b, size: 0x1000 }));
        va.free(b, 0x20_0000).unwrap();
        va.free(a, 0x1000).unwrap();
        va.free(c, 0x1000).unwrap();
        assert_eq!(va.free_bytes(), 0x100_0000 - 0x1000);
        assert_eq!(va.free.len(), 1, "everything merged back");
        assert!(matches!(va.alloc(0x200_0000, 0x1000), Err(VaError::Exhausted { .. })));
        assert!(matches!(va.alloc(0, 0x1000), Err(VaError::BadRequest { .. })));
        assert!(matches!(va.alloc(0x1000, 3), Err(VaError::BadRequest { .. })));
    }
}
