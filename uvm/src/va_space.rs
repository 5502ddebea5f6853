//! The va_space of one application context: its managed va_ranges, each cut lazily into
//! va_blocks, and the GPUs registered with it (`uvm_va_space_t` and `uvm_va_range_t`,
//! `kernel-open/nvidia-uvm/uvm_va_space.h`, `uvm_va_range.h`, 535.261.03).
//!
//! A managed range is created with a policy ([`VaPolicy`]); advice on part of a range splits
//! it at the advice's bounds (and the va_block there), as `uvm_va_range_split` does, so every
//! range has one policy throughout. Blocks are created on first use: a range keeps one slot per
//! 2 MiB window it touches.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::fmt;

use crate::page_mask::{PAGE_SIZE, VA_BLOCK_SIZE};
use crate::policy::{Advice, VaPolicy};
use crate::processor::{ProcessorId, ProcessorMask, MAX_GPUS};
use crate::va_block::{VaBlock, VaBlockError};

/// A va_space operation refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VaSpaceError {
    /// Start or size not 4 KiB-aligned, empty, or wrapping the address space.
    BadRange {
        start: u64,
        size: u64,
    },
    /// The new range overlaps the managed range at `existing`.
    Overlap {
        start: u64,
        existing: u64,
    },
    /// No managed range holds `va`.
    NoRange {
        va: u64,
    },
    /// Advice over addresses some of which are not managed.
    NotManaged {
        va: u64,
    },
    /// The GPU is not registered with the va_space.
    UnknownGpu {
        gpu: u8,
    },
    /// A GPU index beyond [`MAX_GPUS`].
    TooManyGpus {
        gpu: u8,
    },
    Block(VaBlockError),
}

impl From<VaBlockError> for VaSpaceError {
    fn from(e: VaBlockError) -> Self {
        VaSpaceError::Block(e)
    }
}

impl fmt::Display for VaSpaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VaSpaceError::BadRange { start, size } => {
                write!(f, "[{start:#x}, +{size:#x}) is not a 4 KiB-aligned, non-empty range")
            }
            VaSpaceError::Overlap { start, existing } => {
                write!(f, "range at {start:#x} overlaps the managed range at {existing:#x}")
            }
            VaSpaceError::NoRange { va } => write!(f, "no managed range holds {va:#x}"),
            VaSpaceError::NotManaged { va } => write!(f, "{va:#x} is not managed memory"),
            VaSpaceError::UnknownGpu { gpu } => write!(f, "GPU{gpu} is not registered with the va_space"),
            VaSpaceError::TooManyGpus { gpu } => write!(f, "GPU index {gpu} is beyond {MAX_GPUS}"),
            VaSpaceError::Block(e) => write!(f, "{e}"),
        }
    }
}

/// One managed va_range: `[start, end)` with one policy, its blocks by 2 MiB window.
#[derive(Clone, Debug)]
pub struct VaRange {
    start: u64,
    end: u64,
    pub policy: VaPolicy,
    /// Blocks by window base; created on first use.
    blocks: BTreeMap<u64, VaBlock>,
}

impl VaRange {
    pub fn start(&self) -> u64 {
        self.start
    }

    pub fn end(&self) -> u64 {
        self.end
    }

    pub fn size(&self) -> u64 {
        self.end - self.start
    }

    /// The bounds of the block holding `va` (`uvm_va_range_block_index` and the block's clamp).
    pub fn block_bounds(&self, va: u64) -> (u64, u64) {
        let base = va & !(VA_BLOCK_SIZE - 1);
        (base.max(self.start), base.saturating_add(VA_BLOCK_SIZE).min(self.end))
    }

    /// The block holding `va`, if created.
    pub fn block(&self, va: u64) -> Option<&VaBlock> {
        self.blocks.get(&(va & !(VA_BLOCK_SIZE - 1)))
    }

    /// The block holding `va` (inside the range), created on first use.
    pub fn block_mut(&mut self, va: u64) -> Result<&mut VaBlock, VaSpaceError> {
        if va < self.start || va >= self.end {
            return Err(VaSpaceError::NoRange { va });
        }
        let base = va & !(VA_BLOCK_SIZE - 1);
        let (s, e) = self.block_bounds(va);
        match self.blocks.entry(base) {
            alloc::collections::btree_map::Entry::Occupied(b) => Ok(b.into_mut()),
            alloc::collections::btree_map::Entry::Vacant(slot) => Ok(slot.insert(VaBlock::new(s, e)?)),
        }
    }

    /// Blocks created so far, in address order.
    pub fn blocks(&self) -> impl Iterator<Item = &VaBlock> {
        self.blocks.values()
    }

    pub fn blocks_mut(&mut self) -> impl Iterator<Item = &mut VaBlock> {
        self.blocks.values_mut()
    }

    /// Window bases of every block the range spans (created or not).
    pub fn block_windows(&self) -> impl Iterator<Item = u64> {
        let first = self.start & !(VA_BLOCK_SIZE - 1);
        let end = self.end;
        (0..).map(move |i: u64| first + i * VA_BLOCK_SIZE).take_while(move |&b| b < end)
    }

    /// Splits at `va` (page-aligned, strictly inside): this range keeps `[start, va)`.
    fn split(&mut self, va: u64) -> Result<VaRange, VaSpaceError> {
        let base = va & !(VA_BLOCK_SIZE - 1);
        let mut upper_blocks = self.blocks.split_off(&base);
        if va != base {
            if let Some(straddling) = upper_blocks.get_mut(&base) {
                let upper_half = straddling.split(va)?;
                let lower_half = core::mem::replace(straddling, upper_half);
                self.blocks.insert(base, lower_half);
            }
        }
        let upper = VaRange { start: va, end: self.end, policy: self.policy, blocks: upper_blocks };
        self.end = va;
        Ok(upper)
    }
}

/// The managed memory of one application context.
#[derive(Clone, Debug, Default)]
pub struct VaSpace {
    ranges: BTreeMap<u64, VaRange>,
    gpus: ProcessorMask,
}

impl VaSpace {
    pub fn new() -> Self {
        VaSpace::default()
    }

    /// Registers GPU `gpu` (`uvm_va_space_register_gpu`).
    pub fn register_gpu(&mut self, gpu: u8) -> Result<(), VaSpaceError> {
        if gpu as usize >= MAX_GPUS {
            return Err(VaSpaceError::TooManyGpus { gpu });
        }
        self.gpus.set(ProcessorId::Gpu(gpu));
        Ok(())
    }

    /// The registered GPUs (the CPU is always part of a va_space).
    pub fn registered_gpus(&self) -> ProcessorMask {
        self.gpus
    }

    /// Checks that `p` may be named in a policy or a prefetch.
    pub fn check_processor(&self, p: ProcessorId) -> Result<(), VaSpaceError> {
        match p {
            ProcessorId::Cpu => Ok(()),
            ProcessorId::Gpu(_) if self.gpus.test(p) => Ok(()),
            ProcessorId::Gpu(gpu) => Err(VaSpaceError::UnknownGpu { gpu }),
        }
    }

    /// Creates the managed range `[start, start + size)` (`uvm_va_range_create_mmap`).
    pub fn create_managed_range(
        &mut self,
        start: u64,
        size: u64,
        policy: VaPolicy,
    ) -> Result<&mut VaRange, VaSpaceError> {
        let bad = VaSpaceError::BadRange { start, size };
        let end = start.checked_add(size).ok_or(bad)?;
        if size == 0 || !start.is_multiple_of(PAGE_SIZE) || !size.is_multiple_of(PAGE_SIZE) {
            return Err(bad);
        }
        if let Some(p) = policy.preferred_location {
            self.check_processor(p)?;
        }
        for p in policy.accessed_by.iter() {
            self.check_processor(p)?;
        }
        if let Some((&s, r)) = self.ranges.range(..end).next_back() {
            if r.end > start {
                return Err(VaSpaceError::Overlap { start, existing: s });
            }
        }
        self.ranges.insert(start, VaRange { start, end, policy, blocks: BTreeMap::new() });
        self.ranges.get_mut(&start).ok_or(bad)
    }

    /// Removes every managed range inside `[start, start + size)` and returns them (the caller
    /// frees their memory and mappings).
    pub fn destroy_ranges(&mut self, start: u64, size: u64) -> Vec<VaRange> {
        let end = start.saturating_add(size);
        let keys: Vec<u64> = self.ranges.range(start..end).filter(|(_, r)| r.end <= end).map(|(&k, _)| k).collect();
        keys.into_iter().filter_map(|k| self.ranges.remove(&k)).collect()
    }

    /// The managed range holding `va`.
    pub fn range(&self, va: u64) -> Option<&VaRange> {
        self.ranges.range(..=va).next_back().map(|(_, r)| r).filter(|r| va < r.end)
    }

    pub fn range_mut(&mut self, va: u64) -> Option<&mut VaRange> {
        self.ranges.range_mut(..=va).next_back().map(|(_, r)| r).filter(|r| va < r.end)
    }

    /// Ranges in address order.
    pub fn ranges(&self) -> impl Iterator<Item = &VaRange> {
        self.ranges.values()
    }

    pub fn ranges_mut(&mut self) -> impl Iterator<Item = &mut VaRange> {
        self.ranges.values_mut()
    }

    /// The block holding `va`, created on first use; `NoRange` outside every managed range
    /// (for a GPU fault: fatal).
    pub fn block_mut(&mut self, va: u64) -> Result<&mut VaBlock, VaSpaceError> {
        self.range_mut(va).ok_or(VaSpaceError::NoRange { va })?.block_mut(va)
    }

    /// The policy in force at `va`.
    pub fn policy(&self, va: u64) -> Option<VaPolicy> {
        self.range(va).map(|r| r.policy)
    }

    /// Splits the range holding `va` so that a range starts at `va`.
    fn split_at(&mut self, va: u64) -> Result<(), VaSpaceError> {
        let Some(r) = self.range_mut(va) else { return Ok(()) };
        if r.start == va {
            return Ok(());
        }
        let upper = r.split(va)?;
        self.ranges.insert(va, upper);
        Ok(())
    }

    /// Applies `advice` to `[start, start + size)`, which must be managed throughout
    /// (`uvm_api_set_preferred_location` and friends); splits ranges at the bounds.
    pub fn advise(&mut self, start: u64, size: u64, advice: Advice) -> Result<(), VaSpaceError> {
        let bad = VaSpaceError::BadRange { start, size };
        let end = start.checked_add(size).ok_or(bad)?;
        if size == 0 || !start.is_multiple_of(PAGE_SIZE) || !size.is_multiple_of(PAGE_SIZE) {
            return Err(bad);
        }
        match advice {
            Advice::SetPreferredLocation(p) | Advice::SetAccessedBy(p) | Advice::UnsetAccessedBy(p) => {
                self.check_processor(p)?
            }
            _ => {}
        }
        // Managed throughout?
        let mut at = start;
        while at < end {
            let r = self.range(at).ok_or(VaSpaceError::NotManaged { va: at })?;
            at = r.end;
        }
        self.split_at(start)?;
        self.split_at(end)?;
        for (_, r) in self.ranges.range_mut(start..end) {
            r.policy = r.policy.advised(advice);
        }
        Ok(())
    }

    /// Merges neighbouring ranges with equal policies back together (after advice is undone).
    pub fn coalesce(&mut self) {
        let keys: Vec<u64> = self.ranges.keys().copied().collect();
        let mut prev: Option<u64> = None;
        for k in keys {
            if let Some(p) = prev {
                let mergeable = match (self.ranges.get(&p), self.ranges.get(&k)) {
                    (Some(a), Some(b)) => a.end == b.start && a.policy == b.policy && !straddles(a, b),
                    _ => false,
                };
                if mergeable {
                    if let Some(b) = self.ranges.remove(&k) {
                        if let Some(a) = self.ranges.get_mut(&p) {
                            a.end = b.end;
                            a.blocks.extend(b.blocks);
                        }
                    }
                    continue;
                }
            }
            prev = Some(k);
        }
    }
}

/// Whether the boundary between two adjacent ranges splits one 2 MiB window (their blocks
/// would have to merge: ranges stay apart then).
fn straddles(_a: &VaRange, b: &VaRange) -> bool {
    !b.start.is_multiple_of(VA_BLOCK_SIZE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_mask::{PageMask, PageRegion};

    const MB2: u64 = VA_BLOCK_SIZE;

    #[test]
    fn ranges_are_checked_and_found() {
        let mut s = VaSpace::new();
        s.create_managed_range(MB2, 3 * MB2 + 0x5000, VaPolicy::default()).unwrap();
        assert_eq!(
            s.create_managed_range(0, MB2 + 0x1000, VaPolicy::default()).err(),
            Some(VaSpaceError::Overlap { start: 0, existing: MB2 })
        );
        assert!(s.create_managed_range(0x1001, 0x1000, VaPolicy::default()).is_err());
        assert!(s.create_managed_range(u64::MAX - 0xfff, 0x2000, VaPolicy::default()).is_err());
        assert_eq!(
            s.create_managed_range(
                0,
                0x1000,
                VaPolicy { preferred_location: Some(ProcessorId::Gpu(0)), ..Default::default() }
            )
            .err(),
            Some(VaSpaceError::UnknownGpu { gpu: 0 })
        );
        s.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
        assert_eq!(s.range(MB2 - 1).map(|r| r.start()), Some(0));
        assert_eq!(s.range(4 * MB2 + 0x4fff).map(|r| r.start()), Some(MB2));
        assert!(s.range(4 * MB2 + 0x5000).is_none());
        // The last block is 0x5000 bytes; blocks never cross 2 MiB.
        let b = s.block_mut(4 * MB2 + 0x1234).unwrap();
        assert_eq!((b.start(), b.end()), (4 * MB2, 4 * MB2 + 0x5000));
        assert_eq!(s.block_mut(5 * MB2).err(), Some(VaSpaceError::NoRange { va: 5 * MB2 }));
        assert_eq!(s.range(MB2).unwrap().block_windows().count(), 4);
        assert_eq!(s.destroy_ranges(0, 8 * MB2).len(), 2);
        assert!(s.range(0).is_none());
    }

    #[test]
    fn advice_splits_ranges_and_blocks() {
        let mut s = VaSpace::new();
        s.register_gpu(0).unwrap();
        s.create_managed_range(0, 4 * MB2, VaPolicy::default()).unwrap();
        // Make the block at MB2 resident on the CPU so the split has state to divide.
        let b = s.block_mut(MB2).unwrap();
        b.set_resident(ProcessorId::Cpu, &PageMask::from_region(PageRegion::full()), |p| p as u64 * 4096).unwrap();
        s.advise(MB2 + 0x10_0000, MB2, Advice::SetPreferredLocation(ProcessorId::Gpu(0))).unwrap();
        let starts: Vec<u64> = s.ranges().map(|r| r.start()).collect();
        assert_eq!(starts, [0, MB2 + 0x10_0000, 2 * MB2 + 0x10_0000]);
        assert_eq!(s.policy(MB2 + 0xf_ffff).unwrap().preferred_location, None);
        assert_eq!(s.policy(MB2 + 0x10_0000).unwrap().preferred_location, Some(ProcessorId::Gpu(0)));
        assert_eq!(s.policy(2 * MB2 + 0x10_0000).unwrap().preferred_location, None);
        let lower = s.range(MB2).unwrap().block(MB2).unwrap();
        assert_eq!(lower.resident(ProcessorId::Cpu).count(), 256);
        let upper = s.range(MB2 + 0x10_0000).unwrap().block(MB2 + 0x10_0000).unwrap();
        assert_eq!((upper.start(), upper.end()), (MB2 + 0x10_0000, 2 * MB2));
        assert_eq!(upper.resident(ProcessorId::Cpu).count(), 256);
        assert_eq!(
            s.advise(3 * MB2, 2 * MB2, Advice::SetReadMostly).err(),
            Some(VaSpaceError::NotManaged { va: 4 * MB2 })
        );
        assert_eq!(
            s.advise(0, 0x1000, Advice::SetAccessedBy(ProcessorId::Gpu(5))).err(),
            Some(VaSpaceError::UnknownGpu { gpu: 5 })
        );
        // Undo: ranges with equal policies on 2 MiB bounds merge; those splitting a window stay apart.
        s.advise(MB2 + 0x10_0000, MB2, Advice::UnsetPreferredLocation).unwrap();
        s.coalesce();
        assert_eq!(s.ranges().count(), 3);
        s.advise(0, 2 * MB2, Advice::SetReadMostly).unwrap();
        s.advise(0, 2 * MB2, Advice::UnsetReadMostly).unwrap();
        s.coalesce();
        let starts: Vec<u64> = s.ranges().map(|r| r.start()).collect();
        assert_eq!(starts, [0, MB2 + 0x10_0000, 2 * MB2 + 0x10_0000]);
    }
}
