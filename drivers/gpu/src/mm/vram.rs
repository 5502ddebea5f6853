//! The VRAM allocator: the free framebuffer GSP-RM reports, carved into 2 MiB root chunks that
//! split into 64 KiB and 4 KiB pieces, as UVM's PMM does (`kernel-open/nvidia-uvm/uvm_pmm_gpu.c`:
//! 2M root chunks, split lazily, merged eagerly).
//!
//! Each root chunk keeps one bit per 4 KiB page. A 64 KiB piece is whole while its 16 pages are
//! free, a root chunk while its 512 are; so merging is never forgotten, it is what the bitmap
//! says. Allocations are contiguous runs of pages. The search prefers space that is already
//! split: small requests go to split 64 KiB pieces first, then to split root chunks, and only
//! then break a whole root chunk; requests of 64 KiB and more start on 64 KiB (or 2 MiB)
//! boundaries when they can. The last resort is a scan of every free run, so an allocation
//! fails only when no aligned run of free pages large enough exists anywhere: fragmentation
//! inside a chunk's pieces never makes it fail.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec::Vec;
use core::fmt;

use crate::gsp::commands::FbRegionInfo;

/// Bytes in a page, the allocation granule.
pub const PAGE_SIZE: u64 = 4 << 10;
/// Bytes in a big piece.
pub const PIECE_SIZE: u64 = 64 << 10;
/// Bytes in a root chunk.
pub const ROOT_CHUNK_SIZE: u64 = 2 << 20;

const PAGES_PER_PIECE: usize = (PIECE_SIZE / PAGE_SIZE) as usize;
const PAGES_PER_CHUNK: usize = (ROOT_CHUNK_SIZE / PAGE_SIZE) as usize;
const WORDS_PER_CHUNK: usize = PAGES_PER_CHUNK / 64;
const PIECES_PER_CHUNK: usize = PAGES_PER_CHUNK / PAGES_PER_PIECE;
const _: () = assert!(PAGES_PER_PIECE == 16 && 64 % PAGES_PER_PIECE == 0);

/// The most VRAM one region may span. No GPU comes near it; it keeps a corrupt region size from
/// making the allocator's own bookkeeping exhaust memory.
pub const MAX_REGION_SIZE: u64 = 4 << 40;

/// A VRAM allocation failed, or the allocator could not be set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VramError {
    /// No aligned run of free pages of this size exists.
    OutOfMemory { size: u64, align: u64, free_bytes: u64, largest_free_run: u64 },
    /// A zero-byte request.
    ZeroSize,
    /// The alignment is not a power of two.
    BadAlignment { align: u64 },
    /// `free` of something this allocator did not hand out (or already took back).
    NotAllocated { base: u64, size: u64 },
    /// A region whose end overflows or that spans more than [`MAX_REGION_SIZE`].
    BadRegion { base: u64, size: u64 },
}

impl fmt::Display for VramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            VramError::OutOfMemory { size, align, free_bytes, largest_free_run } => write!(
                f,
                "out of VRAM: no {align:#x}-aligned run of {size:#x} bytes ({free_bytes:#x} bytes free, \
                 largest free run {largest_free_run:#x})"
            ),
            VramError::ZeroSize => f.write_str("zero-byte VRAM allocation"),
            VramError::BadAlignment { align } => write!(f, "alignment {align:#x} is not a power of two"),
            VramError::NotAllocated { base, size } => {
                write!(f, "VRAM {base:#x}+{size:#x} is not an allocation of this allocator")
            }
            VramError::BadRegion { base, size } => write!(f, "bad VRAM region {base:#x}+{size:#x}"),
        }
    }
}

/// One allocation: contiguous VRAM at `base`. Give it back with [`VramAllocator::free`]; it is
/// neither `Copy` nor `Clone`, so it cannot be freed twice.
#[derive(Debug, PartialEq, Eq)]
pub struct VramAllocation {
    base: u64,
    size: u64,
}

impl VramAllocation {
    /// Physical VRAM address of the first byte.
    pub fn base(&self) -> u64 {
        self.base
    }
    /// Bytes allocated (the request rounded up to 4 KiB).
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// A snapshot of the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct VramStats {
    /// Usable VRAM: the regions minus the reserved ranges, in whole pages.
    pub total_bytes: u64,
    pub free_bytes: u64,
    pub allocated_bytes: u64,
    /// Live allocations.
    pub allocations: usize,
    /// Root chunks holding any usable page.
    pub root_chunks: usize,
    /// Root chunks entirely free (never split, or merged back).
    pub free_root_chunks: usize,
    /// Root chunks partly used or partly reserved.
    pub split_root_chunks: usize,
    /// Whole free 64 KiB pieces inside split root chunks.
    pub free_pieces_in_split_chunks: usize,
    /// The longest run of free bytes (contiguous across adjacent chunks).
    pub largest_free_run: u64,
}

/// One 2 MiB root chunk: a bit per page, set when the page is free.
#[derive(Clone, Debug)]
struct RootChunk {
    base: u64,
    free: [u64; WORDS_PER_CHUNK],
    free_pages: usize,
    usable_pages: usize,
}

/// First page in `[from, hi)` whose bit equals `want`, or `hi`.
fn find_bit(bits: &[u64; WORDS_PER_CHUNK], from: usize, hi: usize, want: bool) -> usize {
    let mut i = from;
    while i < hi {
        let w = i / 64;
        let Some(&word) = bits.get(w) else { return hi };
        let word = if want { word } else { !word };
        let masked = word & (u64::MAX << (i % 64));
        if masked != 0 {
            return (w * 64 + masked.trailing_zeros() as usize).min(hi);
        }
        i = (w + 1) * 64;
    }
    hi
}

impl RootChunk {
    fn new(base: u64) -> Self {
        Self { base, free: [0; WORDS_PER_CHUNK], free_pages: 0, usable_pages: 0 }
    }

    fn end(&self) -> u64 {
        self.base + ROOT_CHUNK_SIZE
    }

    fn is_free(&self, page: usize) -> bool {
        self.free.get(page / 64).is_some_and(|w| w >> (page % 64) & 1 == 1)
    }

    /// Marks pages `[lo, hi)` free or used, a bitmap word at a time (an H200's 141 GiB are
    /// 72,192 chunks: a bit at a time, building the allocator took 0.6 s under TCG).
    fn set(&mut self, lo: usize, hi: usize, free: bool) {
        let hi = hi.min(PAGES_PER_CHUNK);
        let mut page = lo;
        while page < hi {
            let bit = page % 64;
            let n = (hi - page).min(64 - bit);
            let mask = if n == 64 { u64::MAX } else { ((1u64 << n) - 1) << bit };
            if let Some(word) = self.free.get_mut(page / 64) {
                let were_free = (*word & mask).count_ones() as usize;
                if free {
                    *word |= mask;
                    self.free_pages += n - were_free;
                } else {
                    *word &= !mask;
                    self.free_pages -= were_free;
                }
            }
            page += n;
        }
    }

    fn is_whole(&self) -> bool {
        self.free_pages == PAGES_PER_CHUNK
    }

    fn is_split(&self) -> bool {
        self.free_pages > 0 && self.free_pages < PAGES_PER_CHUNK
    }

    fn piece_free_pages(&self, piece: usize) -> usize {
        // A piece is 16 bits of one 64-bit word.
        let lo = piece * PAGES_PER_PIECE;
        self.free.get(lo / 64).map_or(0, |w| ((w >> (lo % 64)) & 0xffff).count_ones() as usize)
    }

    /// Maximal runs of free pages in `[lo, hi)`, as byte ranges.
    fn runs(&self, lo: usize, hi: usize) -> impl Iterator<Item = (u64, u64)> + '_ {
        let mut at = lo;
        core::iter::from_fn(move || {
            let start = find_bit(&self.free, at, hi, true);
            if start >= hi {
                return None;
            }
            let end = find_bit(&self.free, start, hi, false);
            at = end;
            Some((self.base + start as u64 * PAGE_SIZE, self.base + end as u64 * PAGE_SIZE))
        })
    }
}

/// The first `align`-aligned `size` bytes inside `[start, end)`.
fn fit(start: u64, end: u64, size: u64, align: u64) -> Option<u64> {
    let aligned = start.checked_add(align - 1)? & !(align - 1);
    (aligned.checked_add(size)? <= end).then_some(aligned)
}

/// Allocates VRAM for the driver: page tables, channels, buffers.
pub struct VramAllocator {
    /// Sorted by base, each with at least one usable page.
    chunks: Vec<RootChunk>,
    /// Indices of split chunks (partly used or partly reserved).
    split: BTreeSet<usize>,
    /// Live allocations: base to size.
    live: BTreeMap<u64, u64>,
    total_bytes: u64,
    free_bytes: u64,
}

impl VramAllocator {
    /// An allocator over `regions` (`(base, size)` pairs, as GSP-RM's static info reports the
    /// framebuffer) minus `reserved` (`(base, size)` pairs: what RM, the firmware or the display
    /// keep). Only whole 4 KiB pages inside a region and outside every reserved range are used.
    pub fn new(regions: &[(u64, u64)], reserved: &[(u64, u64)]) -> Result<Self, VramError> {
        // Chunks go straight into a vector sorted by base (an H200 has 72,192 of them): regions
        // in base order append, and only overlapping ones look a chunk up.
        let mut sorted = regions.to_vec();
        sorted.sort_unstable();
        let mut estimate = 0usize;
        for &(base, size) in &sorted {
            if base.checked_add(size).is_none() || size > MAX_REGION_SIZE {
                return Err(VramError::BadRegion { base, size });
            }
            estimate = estimate.saturating_add((size / ROOT_CHUNK_SIZE) as usize + 2);
        }
        let mut chunks: Vec<RootChunk> = Vec::with_capacity(estimate);
        for &(base, size) in &sorted {
            let end = base + size;
            let first = base.div_ceil(PAGE_SIZE) * PAGE_SIZE;
            let last = end / PAGE_SIZE * PAGE_SIZE;
            let mut chunk_base = first / ROOT_CHUNK_SIZE * ROOT_CHUNK_SIZE;
            while chunk_base < last {
                let index = match chunks.last() {
                    Some(c) if c.base < chunk_base => chunks.len(),
                    None => 0,
                    Some(_) => match chunks.binary_search_by_key(&chunk_base, |c| c.base) {
                        Ok(i) => i,
                        Err(i) => i,
                    },
                };
                if chunks.get(index).is_none_or(|c| c.base != chunk_base) {
                    chunks.insert(index, RootChunk::new(chunk_base));
                }
                let lo = first.max(chunk_base);
                let hi = last.min(chunk_base + ROOT_CHUNK_SIZE);
                if let Some(chunk) = chunks.get_mut(index) {
                    chunk.set(((lo - chunk_base) / PAGE_SIZE) as usize, ((hi - chunk_base) / PAGE_SIZE) as usize, true);
                }
                chunk_base += ROOT_CHUNK_SIZE;
            }
        }
        for &(base, size) in reserved {
            let Some(end) = base.checked_add(size) else {
                return Err(VramError::BadRegion { base, size });
            };
            // Any page the reserved range touches is out.
            let first = base / PAGE_SIZE * PAGE_SIZE;
            let last = end.div_ceil(PAGE_SIZE).saturating_mul(PAGE_SIZE);
            let from = chunks.partition_point(|c| c.base < first / ROOT_CHUNK_SIZE * ROOT_CHUNK_SIZE);
            for chunk in chunks.iter_mut().skip(from).take_while(|c| c.base < last) {
                let lo = first.max(chunk.base);
                let hi = last.min(chunk.end());
                if lo < hi {
                    chunk.set(
                        ((lo - chunk.base) / PAGE_SIZE) as usize,
                        ((hi - chunk.base) / PAGE_SIZE) as usize,
                        false,
                    );
                }
            }
        }
        chunks.retain(|c| c.free_pages > 0);
        for c in &mut chunks {
            c.usable_pages = c.free_pages;
        }
        let split = chunks.iter().enumerate().filter(|(_, c)| c.is_split()).map(|(i, _)| i).collect();
        let total_bytes = chunks.iter().map(|c| c.usable_pages as u64 * PAGE_SIZE).sum();
        Ok(Self { chunks, split, live: BTreeMap::new(), total_bytes, free_bytes: total_bytes })
    }

    /// An allocator over the regions of `NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO` (`base..=limit`;
    /// protected regions are skipped) minus `reserved`. Each region's `reserved` byte count is
    /// not subtracted here, as RM does not say where in the region those bytes are: pass them
    /// in `reserved` once known.
    pub fn from_fb_regions(regions: &[FbRegionInfo], reserved: &[(u64, u64)]) -> Result<Self, VramError> {
        let usable: Vec<(u64, u64)> =
            regions.iter().filter(|r| r.b_protected == 0 && r.size() > 0).map(|r| (r.base, r.size())).collect();
        Self::new(&usable, reserved)
    }

    /// Allocates `size` bytes (rounded up to 4 KiB) of contiguous VRAM aligned to `align` (a
    /// power of two; anything below 4 KiB means 4 KiB).
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<VramAllocation, VramError> {
        if size == 0 {
            return Err(VramError::ZeroSize);
        }
        if align != 0 && !align.is_power_of_two() {
            return Err(VramError::BadAlignment { align });
        }
        let align = align.max(PAGE_SIZE);
        let Some(bytes) = size.checked_next_multiple_of(PAGE_SIZE) else {
            return Err(self.out_of_memory(size, align));
        };
        let pages = bytes / PAGE_SIZE;
        let found = if pages < PAGES_PER_PIECE as u64 {
            self.find_in_split_pieces(bytes, align)
                .or_else(|| self.find_in_split_chunks(bytes, align, true))
                .or_else(|| self.find_anywhere(bytes, align))
        } else if pages < PAGES_PER_CHUNK as u64 {
            let piece_align = align.max(PIECE_SIZE);
            self.find_in_split_chunks(bytes, piece_align, false)
                .or_else(|| self.find_in_split_chunks(bytes, align, false))
                .or_else(|| self.find_anywhere(bytes, piece_align))
                .or_else(|| self.find_anywhere(bytes, align))
        } else {
            self.find_anywhere(bytes, align.max(ROOT_CHUNK_SIZE)).or_else(|| self.find_anywhere(bytes, align))
        };
        let Some(base) = found else {
            return Err(self.out_of_memory(size, align));
        };
        self.mark(base, bytes, false);
        self.live.insert(base, bytes);
        self.free_bytes -= bytes;
        Ok(VramAllocation { base, size: bytes })
    }

    /// Gives an allocation back; its pages merge back into whole pieces and chunks as they free.
    pub fn free(&mut self, allocation: VramAllocation) -> Result<(), VramError> {
        let VramAllocation { base, size } = allocation;
        match self.live.get(&base) {
            Some(&live) if live == size => {}
            _ => return Err(VramError::NotAllocated { base, size }),
        }
        self.live.remove(&base);
        self.mark(base, size, true);
        self.free_bytes += size;
        Ok(())
    }

    /// Counts of what is free, used and split.
    pub fn stats(&self) -> VramStats {
        let split: Vec<&RootChunk> = self.chunks.iter().filter(|c| c.is_split()).collect();
        VramStats {
            total_bytes: self.total_bytes,
            free_bytes: self.free_bytes,
            allocated_bytes: self.total_bytes - self.free_bytes,
            allocations: self.live.len(),
            root_chunks: self.chunks.len(),
            free_root_chunks: self.chunks.iter().filter(|c| c.is_whole()).count(),
            split_root_chunks: split.len(),
            free_pieces_in_split_chunks: split
                .iter()
                .map(|c| (0..PIECES_PER_CHUNK).filter(|&p| c.piece_free_pages(p) == PAGES_PER_PIECE).count())
                .sum(),
            largest_free_run: self.free_runs().map(|(s, e)| e - s).max().unwrap_or(0),
        }
    }

    /// Whether the page at `address` is free (for tests and diagnostics).
    pub fn is_free(&self, address: u64) -> bool {
        self.chunk_index(address)
            .and_then(|i| self.chunks.get(i))
            .is_some_and(|c| c.is_free(((address - c.base) / PAGE_SIZE) as usize))
    }

    fn out_of_memory(&self, size: u64, align: u64) -> VramError {
        VramError::OutOfMemory {
            size,
            align,
            free_bytes: self.free_bytes,
            largest_free_run: self.free_runs().map(|(s, e)| e - s).max().unwrap_or(0),
        }
    }

    fn chunk_index(&self, address: u64) -> Option<usize> {
        let base = address / ROOT_CHUNK_SIZE * ROOT_CHUNK_SIZE;
        self.chunks.binary_search_by_key(&base, |c| c.base).ok()
    }

    /// Marks `[base, base + bytes)` free or used, across chunks, and keeps `split` current.
    fn mark(&mut self, base: u64, bytes: u64, free: bool) {
        let end = base + bytes;
        let mut at = base;
        while at < end {
            let Some(index) = self.chunk_index(at) else {
                return;
            };
            let Some(chunk) = self.chunks.get_mut(index) else {
                return;
            };
            let hi = end.min(chunk.end());
            chunk.set(((at - chunk.base) / PAGE_SIZE) as usize, ((hi - chunk.base) / PAGE_SIZE) as usize, free);
            if chunk.is_split() {
                self.split.insert(index);
            } else {
                self.split.remove(&index);
            }
            at = hi;
        }
    }

    /// Small requests: inside one already-split 64 KiB piece.
    fn find_in_split_pieces(&self, bytes: u64, align: u64) -> Option<u64> {
        self.split.iter().filter_map(|&i| self.chunks.get(i)).find_map(|chunk| {
            (0..PIECES_PER_CHUNK).filter(|&p| (1..PAGES_PER_PIECE).contains(&chunk.piece_free_pages(p))).find_map(|p| {
                let lo = p * PAGES_PER_PIECE;
                chunk.runs(lo, lo + PAGES_PER_PIECE).find_map(|(s, e)| fit(s, e, bytes, align))
            })
        })
    }

    /// Inside one already-split root chunk; `within_piece` keeps small requests from straddling
    /// two 64 KiB pieces.
    fn find_in_split_chunks(&self, bytes: u64, align: u64, within_piece: bool) -> Option<u64> {
        self.split.iter().filter_map(|&i| self.chunks.get(i)).find_map(|chunk| {
            if within_piece {
                (0..PIECES_PER_CHUNK).find_map(|p| {
                    let lo = p * PAGES_PER_PIECE;
                    chunk.runs(lo, lo + PAGES_PER_PIECE).find_map(|(s, e)| fit(s, e, bytes, align))
                })
            } else {
                chunk.runs(0, PAGES_PER_CHUNK).find_map(|(s, e)| fit(s, e, bytes, align))
            }
        })
    }

    /// Any aligned run, across adjacent chunks: complete, so it fails only when nothing fits.
    fn find_anywhere(&self, bytes: u64, align: u64) -> Option<u64> {
        // Whole chunks first, so a request that fits in one breaks as few chunks as possible.
        if bytes <= ROOT_CHUNK_SIZE {
            if let Some(base) =
                self.chunks.iter().filter(|c| c.is_whole()).find_map(|c| fit(c.base, c.end(), bytes, align))
            {
                return Some(base);
            }
        }
        self.free_runs().find_map(|(s, e)| fit(s, e, bytes, align))
    }

    /// Maximal free runs in address order, joined across physically adjacent chunks.
    fn free_runs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let mut pending: Option<(u64, u64)> = None;
        let mut chunks = self.chunks.iter();
        let mut current: Option<alloc::vec::IntoIter<(u64, u64)>> = None;
        core::iter::from_fn(move || loop {
            let next = match current.as_mut().and_then(Iterator::next) {
                Some(run) => Some(run),
                None => match chunks.next() {
                    Some(chunk) => {
                        current = Some(
                            if chunk.is_whole() {
                                alloc::vec![(chunk.base, chunk.end())]
                            } else {
                                chunk.runs(0, PAGES_PER_CHUNK).collect::<Vec<_>>()
                            }
                            .into_iter(),
                        );
                        continue;
                    }
                    None => None,
                },
            };
            match (pending, next) {
                (Some((s, e)), Some((ns, ne))) if e == ns => pending = Some((s, ne)),
                (Some(done), Some(run)) => {
                    pending = Some(run);
                    return Some(done);
                }
                (None, Some(run)) => pending = Some(run),
                (done, None) => {
                    pending = None;
                    return done;
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_chunk_marks_page_ranges_across_word_boundaries_and_counts_each_page_once() {
        let mut c = RootChunk::new(0);
        c.set(3, 200, true);
        assert_eq!(c.free_pages, 197);
        assert!(!c.is_free(2) && c.is_free(3) && c.is_free(63) && c.is_free(64) && c.is_free(199) && !c.is_free(200));
        c.set(0, PAGES_PER_CHUNK + 7, true);
        assert_eq!(c.free_pages, PAGES_PER_CHUNK);
        c.set(60, 70, false);
        c.set(60, 70, false);
        assert_eq!(c.free_pages, PAGES_PER_CHUNK - 10);
        assert!(c.is_free(59) && !c.is_free(60) && !c.is_free(69) && c.is_free(70));
        c.set(64, 128, false);
        assert_eq!(c.free_pages, PAGES_PER_CHUNK - 10 - 58);
        c.set(5, 5, false);
        assert_eq!(c.free_pages, PAGES_PER_CHUNK - 68);
        for page in 0..PAGES_PER_CHUNK {
            assert_eq!(c.is_free(page), !(60..128).contains(&page), "page {page}");
        }
    }

    #[test]
    fn unsorted_and_overlapping_regions_are_their_union() {
        let vram = VramAllocator::new(&[(8 * MIB, 4 * MIB), (0, 2 * MIB), (9 * MIB + 0x800, 4 * MIB)], &[]).unwrap();
        let stats = vram.stats();
        // 0..2 MiB, and 8 MiB up to the last whole page below 13 MiB + 2 KiB.
        assert_eq!(stats.total_bytes, 2 * MIB + 5 * MIB);
        assert_eq!(stats.root_chunks, 1 + 3);
        assert_eq!(stats.free_root_chunks, 3, "0, 8 and 10 MiB are whole; 12 MiB holds 1 MiB");
        let mut bases: Vec<u64> = vram.chunks.iter().map(|c| c.base).collect();
        let sorted = bases.clone();
        bases.sort_unstable();
        assert_eq!(bases, sorted, "chunks are kept in base order");
    }

    #[test]
    fn regions_minus_reserved_become_pages() {
        // 5 MiB at 1 MiB (unaligned to chunks), with 8 KiB reserved in the middle.
        let vram = VramAllocator::new(&[(MIB, 5 * MIB)], &[(3 * MIB + 0x800, 0x1000)]).unwrap();
        let stats = vram.stats();
        assert_eq!(stats.total_bytes, 5 * MIB - 0x2000);
        assert_eq!(stats.root_chunks, 3);
        assert_eq!(stats.free_root_chunks, 1, "[0, 2M) is half outside, [2M, 4M) has a hole");
        assert!(!vram.is_free(3 * MIB));
        assert!(!vram.is_free(3 * MIB + 0x1000));
        assert!(vram.is_free(3 * MIB + 0x2000));
        assert!(!vram.is_free(0));
    }

    #[test]
    fn small_allocations_share_a_split_piece() {
        let mut vram = VramAllocator::new(&[(0, 8 * MIB)], &[]).unwrap();
        let a = vram.alloc(0x1000, 0).unwrap();
        let b = vram.alloc(0x3000, 0).unwrap();
        assert_eq!((a.base(), b.base()), (0, 0x1000));
        let big = vram.alloc(64 << 10, 0).unwrap();
        assert_eq!(big.base() % PIECE_SIZE, 0);
        assert_eq!(vram.stats().free_root_chunks, 3);
        for x in [a, b, big] {
            vram.free(x).unwrap();
        }
        assert_eq!(vram.stats().free_root_chunks, 4, "everything merged back");
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(
            VramAllocator::new(&[(u64::MAX, 2)], &[]).err(),
            Some(VramError::BadRegion { base: u64::MAX, size: 2 })
        );
        let mut vram = VramAllocator::new(&[(0, 2 * MIB)], &[]).unwrap();
        assert_eq!(vram.alloc(0, 0).err(), Some(VramError::ZeroSize));
        assert_eq!(vram.alloc(1, 3).err(), Some(VramError::BadAlignment { align: 3 }));
        assert!(matches!(vram.alloc(u64::MAX, 0), Err(VramError::OutOfMemory { .. })));
        assert!(
            matches!(vram.alloc(4 * MIB, 0), Err(VramError::OutOfMemory { free_bytes, .. }) if free_bytes == 2 * MIB)
        );
        assert_eq!(
            vram.free(VramAllocation { base: 0x1000, size: 0x1000 }),
            Err(VramError::NotAllocated { base: 0x1000, size: 0x1000 })
        );
    }
}
