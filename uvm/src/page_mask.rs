//! Pages of one va_block: the 4 KiB page index, regions of pages, and the 512-bit page mask
//! (`uvm_page_index_t`, `uvm_va_block_region_t`, `uvm_page_mask_t` in `uvm_va_block_types.h`).
//!
//! A va_block covers at most 2 MiB (`UVM_VA_BLOCK_BITS` = 21) and never crosses a 2 MiB
//! boundary, so 512 pages of 4 KiB index every block; the 64 KiB big page gives at most 32 big
//! pages a block.

use core::fmt;

/// The CPU and GPU small page: 4 KiB.
pub const PAGE_SIZE: u64 = 4096;
/// The GPU big page this crate maps with (64 KiB, the big page size UVM uses from Pascal on).
pub const BIG_PAGE_SIZE: u64 = 64 * 1024;
/// log2 of the largest block, `UVM_VA_BLOCK_BITS`.
pub const VA_BLOCK_BITS: u32 = 21;
/// The largest va_block and its alignment: 2 MiB.
pub const VA_BLOCK_SIZE: u64 = 1 << VA_BLOCK_BITS;
/// 4 KiB pages in a full block.
pub const PAGES_PER_BLOCK: usize = (VA_BLOCK_SIZE / PAGE_SIZE) as usize;
/// 4 KiB pages in one big page.
pub const PAGES_PER_BIG_PAGE: usize = (BIG_PAGE_SIZE / PAGE_SIZE) as usize;
/// Big pages in a full block.
pub const BIG_PAGES_PER_BLOCK: usize = (VA_BLOCK_SIZE / BIG_PAGE_SIZE) as usize;

const WORDS: usize = PAGES_PER_BLOCK / 64;

/// A 4 KiB page within a block, `0..PAGES_PER_BLOCK`.
pub type PageIndex = usize;

/// Pages `first..outer` of a block (`uvm_va_block_region_t`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PageRegion {
    pub first: PageIndex,
    pub outer: PageIndex,
}

impl PageRegion {
    /// The region `first..outer`, clamped to a block's 512 pages.
    pub const fn new(first: PageIndex, outer: PageIndex) -> Self {
        let outer = if outer > PAGES_PER_BLOCK { PAGES_PER_BLOCK } else { outer };
        let first = if first > outer { outer } else { first };
        PageRegion { first, outer }
    }

    /// The one page `page`.
    pub const fn page(page: PageIndex) -> Self {
        PageRegion::new(page, page + 1)
    }

    /// Every page of a full block.
    pub const fn full() -> Self {
        PageRegion::new(0, PAGES_PER_BLOCK)
    }

    /// The `n`-th big (64 KiB) page of a block.
    pub const fn big_page(n: usize) -> Self {
        PageRegion::new(n * PAGES_PER_BIG_PAGE, (n + 1) * PAGES_PER_BIG_PAGE)
    }

    pub const fn len(&self) -> usize {
        self.outer - self.first
    }

    pub const fn is_empty(&self) -> bool {
        self.outer == self.first
    }

    pub const fn contains(&self, page: PageIndex) -> bool {
        page >= self.first && page < self.outer
    }

    /// Whether `other` lies wholly inside this region.
    pub const fn covers(&self, other: &PageRegion) -> bool {
        other.is_empty() || (other.first >= self.first && other.outer <= self.outer)
    }

    pub fn pages(&self) -> core::ops::Range<PageIndex> {
        self.first..self.outer
    }

    /// Byte offset of the region's first page from the block's start.
    pub const fn offset(&self) -> u64 {
        self.first as u64 * PAGE_SIZE
    }

    /// Bytes the region covers.
    pub const fn size(&self) -> u64 {
        self.len() as u64 * PAGE_SIZE
    }
}

impl fmt::Debug for PageRegion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pages[{}..{})", self.first, self.outer)
    }
}

/// One bit per 4 KiB page of a block (`uvm_page_mask_t`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PageMask {
    words: [u64; WORDS],
}

impl PageMask {
    pub const fn new() -> Self {
        PageMask { words: [0; WORDS] }
    }

    /// A mask with every page of `region` set.
    pub fn from_region(region: PageRegion) -> Self {
        let mut m = PageMask::new();
        m.set_region(region);
        m
    }

    /// Whether `page` is set; pages beyond the block read as clear.
    pub fn test(&self, page: PageIndex) -> bool {
        self.words.get(page / 64).is_some_and(|w| w & (1 << (page % 64)) != 0)
    }

    /// Sets `page`; returns whether it was clear before. Pages beyond the block are ignored.
    pub fn set(&mut self, page: PageIndex) -> bool {
        match self.words.get_mut(page / 64) {
            Some(w) => {
                let bit = 1u64 << (page % 64);
                let was_clear = *w & bit == 0;
                *w |= bit;
                was_clear
            }
            None => false,
        }
    }

    /// Clears `page`; returns whether it was set before.
    pub fn clear(&mut self, page: PageIndex) -> bool {
        match self.words.get_mut(page / 64) {
            Some(w) => {
                let bit = 1u64 << (page % 64);
                let was_set = *w & bit != 0;
                *w &= !bit;
                was_set
            }
            None => false,
        }
    }

    fn region_word_masks(region: PageRegion) -> impl Iterator<Item = (usize, u64)> {
        let (first, outer) = (region.first, region.outer);
        (first / 64..outer.div_ceil(64)).map(move |i| {
            let lo = first.max(i * 64) - i * 64;
            let hi = outer.min(i * 64 + 64) - i * 64;
            let mask = if hi - lo == 64 { u64::MAX } else { ((1u64 << (hi - lo)) - 1) << lo };
            (i, mask)
        })
    }

    pub fn set_region(&mut self, region: PageRegion) {
        for (i, m) in Self::region_word_masks(region) {
            if let Some(w) = self.words.get_mut(i) {
                *w |= m;
            }
        }
    }

    pub fn clear_region(&mut self, region: PageRegion) {
        for (i, m) in Self::region_word_masks(region) {
            if let Some(w) = self.words.get_mut(i) {
                *w &= !m;
            }
        }
    }

    /// The big (64 KiB) pages with a set page: bit n for big page n.
    pub fn big_pages_touched(&self) -> u32 {
        const PER_WORD: usize = 64 / PAGES_PER_BIG_PAGE;
        const BIG: u64 = (1 << PAGES_PER_BIG_PAGE) - 1;
        let mut bits = 0u32;
        for (i, &w) in self.words.iter().enumerate() {
            for k in 0..PER_WORD {
                if (w >> (k * PAGES_PER_BIG_PAGE)) & BIG != 0 {
                    bits |= 1 << (i * PER_WORD + k);
                }
            }
        }
        bits
    }

    /// The pages of big (64 KiB) page `big`, bit k for its page k (0 beyond the block).
    pub fn big_page_bits(&self, big: usize) -> u16 {
        const PER_WORD: usize = 64 / PAGES_PER_BIG_PAGE;
        let word = self.words.get(big / PER_WORD).copied().unwrap_or(0);
        (word >> ((big % PER_WORD) * PAGES_PER_BIG_PAGE)) as u16
    }

    /// Set pages inside `region`.
    pub fn count_in(&self, region: PageRegion) -> usize {
        Self::region_word_masks(region)
            .map(|(i, m)| self.words.get(i).map_or(0, |w| (w & m).count_ones() as usize))
            .sum()
    }

    /// Whether every page of `region` is set (true for an empty region).
    pub fn region_full(&self, region: PageRegion) -> bool {
        self.count_in(region) == region.len()
    }

    /// Whether no page of `region` is set.
    pub fn region_empty(&self, region: PageRegion) -> bool {
        self.count_in(region) == 0
    }

    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    pub fn and(&self, other: &PageMask) -> PageMask {
        let mut r = *self;
        r.words.iter_mut().zip(other.words.iter()).for_each(|(a, b)| *a &= b);
        r
    }

    pub fn or(&self, other: &PageMask) -> PageMask {
        let mut r = *self;
        r.words.iter_mut().zip(other.words.iter()).for_each(|(a, b)| *a |= b);
        r
    }

    /// Pages set here and clear in `other`.
    pub fn andnot(&self, other: &PageMask) -> PageMask {
        let mut r = *self;
        r.words.iter_mut().zip(other.words.iter()).for_each(|(a, b)| *a &= !b);
        r
    }

    /// This mask limited to `region`.
    pub fn within(&self, region: PageRegion) -> PageMask {
        self.and(&PageMask::from_region(region))
    }

    pub fn intersects(&self, other: &PageMask) -> bool {
        self.words.iter().zip(other.words.iter()).any(|(a, b)| a & b != 0)
    }

    /// Whether every page set here is set in `other`.
    pub fn is_subset_of(&self, other: &PageMask) -> bool {
        self.andnot(other).is_empty()
    }

    /// The set pages in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = PageIndex> + '_ {
        SetPages { words: &self.words, word: 0, bits: self.words[0] }
    }

    /// The first set page, if any.
    pub fn first(&self) -> Option<PageIndex> {
        self.iter().next()
    }

    /// Runs of consecutive set pages, in ascending order.
    pub fn regions(&self) -> impl Iterator<Item = PageRegion> + '_ {
        self.regions_in(PageRegion::full())
    }

    /// Runs of consecutive set pages inside `within`, in ascending order.
    pub fn regions_in(&self, within: PageRegion) -> impl Iterator<Item = PageRegion> + '_ {
        let mut page = within.first;
        let end = within.outer;
        core::iter::from_fn(move || {
            // Skip clear pages a word at a time.
            loop {
                if page >= end {
                    return None;
                }
                let word = self.words.get(page / 64).copied().unwrap_or(0) >> (page % 64);
                if word == 0 {
                    page = (page / 64 + 1) * 64;
                    continue;
                }
                page += word.trailing_zeros() as usize;
                break;
            }
            if page >= end {
                return None;
            }
            let first = page;
            loop {
                let word = !(self.words.get(page / 64).copied().unwrap_or(0) >> (page % 64));
                // Set pages from `page` to the end of its word, at most.
                let run = if word == 0 { 64 - page % 64 } else { (word.trailing_zeros() as usize).min(64 - page % 64) };
                page += run;
                if run == 0 || page >= end || !page.is_multiple_of(64) {
                    break;
                }
            }
            Some(PageRegion::new(first, page.min(end)))
        })
    }
}

/// The set pages of a mask, in ascending order: word `word`'s pages not yet returned are
/// `bits`.
struct SetPages<'a> {
    words: &'a [u64; WORDS],
    word: usize,
    bits: u64,
}

impl Iterator for SetPages<'_> {
    type Item = PageIndex;

    fn next(&mut self) -> Option<PageIndex> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.word * 64 + bit)
    }
}

impl FromIterator<PageIndex> for PageMask {
    fn from_iter<I: IntoIterator<Item = PageIndex>>(iter: I) -> Self {
        let mut m = PageMask::new();
        iter.into_iter().for_each(|p| {
            m.set(p);
        });
        m
    }
}

impl fmt::Debug for PageMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.regions()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iter_lists_the_set_pages_in_order() {
        let empty = PageMask::new();
        assert_eq!(empty.iter().next(), None);
        assert_eq!(empty.first(), None);
        let pages = [0usize, 1, 63, 64, 127, 200, 448, 510, 511];
        let mut m = PageMask::new();
        for p in pages {
            m.set(p);
        }
        assert_eq!(m.iter().collect::<alloc::vec::Vec<_>>(), pages);
        let want: alloc::vec::Vec<usize> = (0..PAGES_PER_BLOCK).filter(|&p| m.test(p)).collect();
        assert_eq!(m.iter().collect::<alloc::vec::Vec<_>>(), want);
        let mut last_only = PageMask::new();
        last_only.set(511);
        assert_eq!(last_only.first(), Some(511));
        let mut it = last_only.iter();
        assert_eq!((it.next(), it.next(), it.next()), (Some(511), None, None));
    }

    #[test]
    fn big_page_bits_are_the_pages_of_each_big_page() {
        let mut m = PageMask::new();
        for page in [0, 15, 17, 63, 64, 100, 300, 496, 511] {
            m.set(page);
        }
        for big in 0..BIG_PAGES_PER_BLOCK {
            let bits = m.big_page_bits(big);
            for k in 0..PAGES_PER_BIG_PAGE {
                assert_eq!(bits & (1 << k) != 0, m.test(big * PAGES_PER_BIG_PAGE + k), "big page {big}, page {k}");
            }
        }
        assert_eq!(m.big_page_bits(0), 1 | 1 << 15);
        assert_eq!(m.big_page_bits(31), 1 | 1 << 15);
        assert_eq!(m.big_page_bits(BIG_PAGES_PER_BLOCK), 0, "beyond the block");
    }

    #[test]
    fn big_pages_touched_names_each_big_page_with_a_set_page() {
        let mut m = PageMask::new();
        assert_eq!(m.big_pages_touched(), 0);
        for page in [0, 15, 16, 100, 511] {
            m.set(page);
        }
        // Pages 0 and 15: big page 0; 16: 1; 100: 6; 511: 31.
        assert_eq!(m.big_pages_touched(), 1 | 1 << 1 | 1 << 6 | 1 << 31);
        assert_eq!(PageMask::from_region(PageRegion::full()).big_pages_touched(), u32::MAX);
        let by_region = (0..BIG_PAGES_PER_BLOCK)
            .filter(|&b| m.count_in(PageRegion::big_page(b)) > 0)
            .fold(0u32, |bits, b| bits | 1 << b);
        assert_eq!(m.big_pages_touched(), by_region);
    }

    #[test]
    fn geometry_matches_uvm() {
        assert_eq!(PAGES_PER_BLOCK, 512);
        assert_eq!(BIG_PAGES_PER_BLOCK, 32);
        assert_eq!(PAGES_PER_BIG_PAGE, 16);
    }

    #[test]
    fn regions_across_word_boundaries() {
        for (first, outer) in [(0, 512), (0, 1), (63, 65), (5, 130), (511, 512), (64, 128), (100, 100)] {
            let r = PageRegion::new(first, outer);
            let m = PageMask::from_region(r);
            assert_eq!(m.count(), outer - first);
            assert!(m.region_full(r));
            assert_eq!(m.iter().collect::<alloc::vec::Vec<_>>(), (first..outer).collect::<alloc::vec::Vec<_>>());
            if !r.is_empty() {
                assert_eq!(m.regions().collect::<alloc::vec::Vec<_>>(), alloc::vec![r]);
            }
            let mut c = m;
            c.clear_region(r);
            assert!(c.is_empty());
        }
    }

    #[test]
    fn runs_match_a_page_by_page_scan() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let mut m = PageMask::new();
            for _ in 0..(rng % 40) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let first = (rng % 512) as usize;
                let len = ((rng >> 20) % 100) as usize;
                m.set_region(PageRegion::new(first, first + len));
            }
            let within = PageRegion::new((rng >> 30) as usize % 512, 512 - (rng >> 40) as usize % 200);
            let mut expect = alloc::vec::Vec::new();
            let mut p = within.first;
            while p < within.outer {
                if m.test(p) {
                    let f = p;
                    while p < within.outer && m.test(p) {
                        p += 1;
                    }
                    expect.push(PageRegion::new(f, p));
                } else {
                    p += 1;
                }
            }
            assert_eq!(m.regions_in(within).collect::<alloc::vec::Vec<_>>(), expect, "{m:?} within {within:?}");
        }
    }

    #[test]
    fn set_operations() {
        let a = PageMask::from_region(PageRegion::new(0, 100));
        let b = PageMask::from_region(PageRegion::new(50, 200));
        assert_eq!(a.and(&b).count(), 50);
        assert_eq!(a.or(&b).count(), 200);
        assert_eq!(a.andnot(&b).count(), 50);
        assert!(a.and(&b).is_subset_of(&a));
        assert!(!a.is_subset_of(&b));
        let mut m = PageMask::new();
        assert!(m.set(7));
        assert!(!m.set(7));
        assert!(!m.set(600), "pages beyond the block are ignored");
        assert!(!m.test(600));
        assert!(m.clear(7));
        assert!(!m.clear(7));
        assert!(PageRegion::new(10, 5).is_empty(), "inverted regions are empty");
        assert_eq!(PageRegion::new(0, 9999).outer, 512);
    }
}
