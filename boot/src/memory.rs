//! The physical memory map handed to the kernel: firmware regions (E820 types, as both PVH and
//! Multiboot2 report them) with the areas the loader and the boot protocol occupy carved out.
//!
//! Works in a fixed-capacity list: this runs before the kernel has a heap.

use bootloader_api::info::{MemoryRegion, MemoryRegionKind};

/// E820 address range types (ACPI 6.5, section 15.3 "E820 Address Range Types"). PVH's
/// `hvm_memmap_table_entry.type` and Multiboot2's memory map entry type use the same numbers.
pub const E820_RAM: u32 = 1;

/// Capacity of the region list: far above what firmware reports (QEMU: ~10, servers: ~100).
pub const MAX_REGIONS: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryMapError {
    /// More regions than `MAX_REGIONS` after carving.
    TooManyRegions,
}

/// A fixed-capacity, sorted, non-overlapping list of memory regions.
pub struct RegionList<const N: usize = MAX_REGIONS> {
    regions: [MemoryRegion; N],
    len: usize,
}

const EMPTY: MemoryRegion = MemoryRegion { start: 0, end: 0, kind: MemoryRegionKind::Bootloader };
const PAGE: u64 = 4096;

impl<const N: usize> RegionList<N> {
    pub const fn new() -> Self {
        RegionList { regions: [EMPTY; N], len: 0 }
    }

    pub fn as_slice(&self) -> &[MemoryRegion] {
        &self.regions[..self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [MemoryRegion] {
        &mut self.regions[..self.len]
    }

    fn push(&mut self, region: MemoryRegion) -> Result<(), MemoryMapError> {
        let slot = self.regions.get_mut(self.len).ok_or(MemoryMapError::TooManyRegions)?;
        *slot = region;
        self.len += 1;
        Ok(())
    }

    /// Adds a firmware region. Usable RAM is shrunk to whole pages; empty regions are dropped.
    /// Overlaps between firmware regions are resolved in favour of the non-usable kind.
    pub fn add_firmware_region(&mut self, start: u64, len: u64, e820_type: u32) -> Result<(), MemoryMapError> {
        let end = start.saturating_add(len);
        if e820_type == E820_RAM {
            let start = start.saturating_add(PAGE - 1) & !(PAGE - 1);
            let end = end & !(PAGE - 1);
            if end > start {
                // Usable RAM never overrides a reserved region already listed.
                self.push(MemoryRegion { start, end, kind: MemoryRegionKind::Usable })?;
                self.normalize()?;
            }
        } else if end > start {
            self.reserve(start, end, MemoryRegionKind::UnknownBios(e820_type))?;
        }
        Ok(())
    }

    /// Marks `[start, end)` as `kind`, splitting usable regions it overlaps. Reserved areas are
    /// widened to whole pages so the frame allocator never hands out a partly used page.
    pub fn reserve(&mut self, start: u64, end: u64, kind: MemoryRegionKind) -> Result<(), MemoryMapError> {
        let start = start & !(PAGE - 1);
        let end = end.saturating_add(PAGE - 1) & !(PAGE - 1);
        if end <= start {
            return Ok(());
        }
        let mut out = RegionList::<N>::new();
        for r in self.as_slice() {
            if r.kind != MemoryRegionKind::Usable || r.end <= start || r.start >= end {
                out.push(*r)?;
                continue;
            }
            if r.start < start {
                out.push(MemoryRegion { start: r.start, end: start, kind: r.kind })?;
            }
            if r.end > end {
                out.push(MemoryRegion { start: end, end: r.end, kind: r.kind })?;
            }
        }
        out.push(MemoryRegion { start, end, kind })?;
        *self = out;
        self.normalize()
    }

    /// Sorts by start, removes usable parts that overlap reserved ones, merges adjacent
    /// regions of the same kind.
    fn normalize(&mut self) -> Result<(), MemoryMapError> {
        // Insertion sort: no allocation, and the list is short and mostly sorted.
        let slice = self.as_mut_slice();
        for i in 1..slice.len() {
            let mut j = i;
            while j > 0 && slice[j - 1].start > slice[j].start {
                slice.swap(j - 1, j);
                j -= 1;
            }
        }
        // Trim usable regions that overlap any non-usable region.
        let mut out = RegionList::<N>::new();
        for i in 0..self.len {
            let r = self.regions[i];
            if r.kind != MemoryRegionKind::Usable {
                out.push(r)?;
                continue;
            }
            // Cut r by every reserved region (lists are short).
            let mut pieces = RegionList::<64>::new();
            pieces.push(r)?;
            for other in self.as_slice().iter().filter(|o| o.kind != MemoryRegionKind::Usable) {
                let mut next = RegionList::<64>::new();
                for p in pieces.as_slice() {
                    if other.end <= p.start || other.start >= p.end {
                        next.push(*p)?;
                        continue;
                    }
                    if p.start < other.start {
                        next.push(MemoryRegion { start: p.start, end: other.start & !(PAGE - 1), kind: p.kind })?;
                    }
                    if p.end > other.end {
                        let s = other.end.saturating_add(PAGE - 1) & !(PAGE - 1);
                        next.push(MemoryRegion { start: s, end: p.end, kind: p.kind })?;
                    }
                }
                pieces = next;
            }
            for p in pieces.as_slice() {
                if p.end > p.start {
                    out.push(*p)?;
                }
            }
        }
        // Sort again (trimming keeps order per region, but pieces may interleave) and merge.
        let slice = out.as_mut_slice();
        for i in 1..slice.len() {
            let mut j = i;
            while j > 0 && slice[j - 1].start > slice[j].start {
                slice.swap(j - 1, j);
                j -= 1;
            }
        }
        let mut merged = RegionList::<N>::new();
        for r in out.as_slice() {
            if let Some(last) = merged.len.checked_sub(1).and_then(|i| merged.regions.get_mut(i)) {
                if last.kind == r.kind && last.end >= r.start {
                    last.end = last.end.max(r.end);
                    continue;
                }
                if last.kind == MemoryRegionKind::Usable && r.kind == MemoryRegionKind::Usable && last.end > r.start {
                    last.end = last.end.max(r.end);
                    continue;
                }
            }
            merged.push(*r)?;
        }
        *self = merged;
        Ok(())
    }

    /// Total bytes of usable memory.
    pub fn usable_bytes(&self) -> u64 {
        self.as_slice().iter().filter(|r| r.kind == MemoryRegionKind::Usable).map(|r| r.end - r.start).sum()
    }
}

impl<const N: usize> Default for RegionList<N> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(l: &RegionList) -> std::vec::Vec<(u64, u64, MemoryRegionKind)> {
        l.as_slice().iter().map(|r| (r.start, r.end, r.kind)).collect()
    }

    #[test]
    fn usable_ram_is_page_aligned_and_reserved_areas_split_it() {
        let mut l: RegionList = RegionList::new();
        l.add_firmware_region(0, 0x9fc00, 1).unwrap();
        l.add_firmware_region(0x9fc00, 0x400, 2).unwrap();
        l.add_firmware_region(0x100000, 0x7ee0000, 1).unwrap();
        l.reserve(0x200000, 0x2345678, MemoryRegionKind::Bootloader).unwrap();
        assert_eq!(
            kinds(&l),
            vec![
                (0, 0x9f000, MemoryRegionKind::Usable),
                (0x9f000, 0xa0000, MemoryRegionKind::UnknownBios(2)),
                (0x100000, 0x200000, MemoryRegionKind::Usable),
                (0x200000, 0x2346000, MemoryRegionKind::Bootloader),
                (0x2346000, 0x7fe0000, MemoryRegionKind::Usable),
            ]
        );
    }

    #[test]
    fn reserved_firmware_region_wins_over_overlapping_ram() {
        let mut l: RegionList = RegionList::new();
        l.add_firmware_region(0x100000, 0x1000000, 1).unwrap();
        l.add_firmware_region(0x800000, 0x1000, 4).unwrap();
        // RAM reported after the reserved region must not swallow it either.
        l.add_firmware_region(0x800000, 0x2000, 1).unwrap();
        let v = kinds(&l);
        assert!(v.contains(&(0x800000, 0x801000, MemoryRegionKind::UnknownBios(4))));
        for (s, e, k) in &v {
            if *k == MemoryRegionKind::Usable {
                assert!(*e <= 0x800000 || *s >= 0x801000, "usable {s:#x}..{e:#x} overlaps NVS");
            }
        }
        assert_eq!(l.usable_bytes(), 0x1000000 - 0x1000);
    }

    #[test]
    fn too_many_regions_is_an_error_not_a_panic() {
        let mut l: RegionList = RegionList::new();
        let mut err = None;
        for i in 0..(MAX_REGIONS as u64 + 10) {
            if let Err(e) = l.add_firmware_region(i * 0x3000, 0x1000, 2) {
                err = Some(e);
                break;
            }
        }
        assert_eq!(err, Some(MemoryMapError::TooManyRegions));
    }
}
