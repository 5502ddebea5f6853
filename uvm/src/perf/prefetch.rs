//! Page prefetch for one va_block, after `kernel-open/nvidia-uvm/uvm_perf_prefetch.c`
//! (535.261.03), with the counter-tree geometry of `uvm_perf_utils.h`.
//!
//! When faults move pages of a block to one processor, UVM moves more than was asked for:
//!
//! 1. every 64 KiB big page holding a faulted page (and no thrashing page) is taken whole, so
//!    the GPU can map it with a big PTE;
//! 2. a binary tree over the block's pages counts, per aligned power-of-two subregion, the pages
//!    that are already at the destination or about to be; walking from each faulted page to the
//!    root, the largest subregion more than `threshold`% full is taken whole;
//! 3. a first touch to the preferred location takes the whole block.
//!
//! Faulted pages (already being moved) and thrashing pages (see [`super::thrashing`]) are
//! removed from the result, and so, for a CPU destination, are pages the CPU already maps.
//! The hint is issued only once `min_faults` faults have gone to the same destination.
//!
//! Everything here is a pure function of its inputs, apart from [`PrefetchState`], the
//! per-block counter the caller owns and passes in.
//!
//! Two differences from UVM, both on purpose: range groups are not modelled (UVM drops the
//! prefetch pages of range groups without faulted pages), and a tree node that starts in the
//! alignment padding before an unaligned block is clamped to the block's first page, where
//! UVM's clamp (`compute_prefetch_region`) lands on page `offset` and so skips the block's
//! first `offset` pages.

use super::ConfigError;
use crate::page_mask::{PageIndex, PageMask, PageRegion, PAGES_PER_BIG_PAGE, PAGES_PER_BLOCK};
use crate::processor::{ProcessorId, ProcessorMask};

/// Default share, in percent, of a subregion that must be present before the rest of it is
/// prefetched (`UVM_PREFETCH_THRESHOLD_DEFAULT`, `uvm_perf_prefetch.c`).
pub const THRESHOLD_DEFAULT: u32 = 51;
/// Largest threshold `uvm_perf_prefetch_init` accepts (`uvm_perf_prefetch.c`).
pub const THRESHOLD_MAX: u32 = 100;
/// Default faults to one destination before prefetching starts
/// (`UVM_PREFETCH_MIN_FAULTS_DEFAULT`, `uvm_perf_prefetch.c`).
pub const MIN_FAULTS_DEFAULT: u32 = 1;
/// `UVM_PREFETCH_MIN_FAULTS_MIN`, `uvm_perf_prefetch.c`.
pub const MIN_FAULTS_MIN: u32 = 1;
/// `UVM_PREFETCH_MIN_FAULTS_MAX`, `uvm_perf_prefetch.c`.
pub const MIN_FAULTS_MAX: u32 = 20;

/// The prefetch tunables (`uvm_perf_prefetch_enable`, `uvm_perf_prefetch_threshold`,
/// `uvm_perf_prefetch_min_faults`). The fields are public for reading and for tests; a value
/// out of range never panics (a threshold above 100 simply never triggers), but
/// [`PrefetchConfig::new`] is the way to build one from outside input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefetchConfig {
    /// Percent of a subregion that must be present: a node qualifies when
    /// `present × 100 > pages × threshold`.
    pub threshold: u32,
    /// Faults that must have gone to the current destination before a hint is given.
    pub min_faults: u32,
    /// `uvm_perf_prefetch_enable` (default on, `uvm_perf_prefetch.c`).
    pub enabled: bool,
}

impl Default for PrefetchConfig {
    fn default() -> Self {
        PrefetchConfig { threshold: THRESHOLD_DEFAULT, min_faults: MIN_FAULTS_DEFAULT, enabled: true }
    }
}

impl PrefetchConfig {
    /// Checks the ranges `uvm_perf_prefetch_init` checks: threshold `0..=100`, min_faults
    /// `1..=20`.
    pub fn new(threshold: u32, min_faults: u32, enabled: bool) -> Result<Self, ConfigError> {
        ConfigError::check("uvm_perf_prefetch_threshold", threshold.into(), 0, THRESHOLD_MAX.into())?;
        ConfigError::check(
            "uvm_perf_prefetch_min_faults",
            min_faults.into(),
            MIN_FAULTS_MIN.into(),
            MIN_FAULTS_MAX.into(),
        )?;
        Ok(PrefetchConfig { threshold, min_faults, enabled })
    }

    /// Whether a subregion of `pages` pages with `present` of them set is prefetched whole.
    pub fn node_qualifies(&self, present: usize, pages: usize) -> bool {
        let present = present as u64;
        let pages = pages as u64;
        present.saturating_mul(100) > pages.saturating_mul(self.threshold.into())
    }
}

/// Levels of a counter tree over `leaf_count` leaves: `log2(roundup_pow2(leaves)) + 1`
/// (`leaves_to_levels`, `uvm_perf_utils.c`); 0 for no leaves.
pub const fn tree_levels(leaf_count: usize) -> u8 {
    if leaf_count == 0 {
        0
    } else {
        leaf_count.next_power_of_two().trailing_zeros() as u8 + 1
    }
}

/// One node of a [`BitmapTree`] branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeNode {
    /// 0 is the root, `level_count - 1` the leaves.
    pub level: u8,
    /// The leaves beneath the node, clipped to the tree's leaf count.
    pub leaves: PageRegion,
    /// Set leaves beneath the node.
    pub count: usize,
}

/// A binary counter tree whose leaves are the bits of a page mask
/// (`uvm_perf_prefetch_bitmap_tree_t`). Nothing is stored per inner node: a node at level `L`
/// covers the `2^(levels-1-L)` aligned leaves around a leaf, and its counter is the popcount
/// of those leaves. When the leaf count is not a power of two the last node of each level is
/// short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitmapTree {
    leaves: PageMask,
    leaf_count: usize,
    level_count: u8,
}

impl BitmapTree {
    /// A tree over leaves `0..leaf_count` (at most 512); bits of `leaves` beyond are dropped.
    pub fn new(leaves: PageMask, leaf_count: usize) -> Self {
        let leaf_count = leaf_count.min(PAGES_PER_BLOCK);
        BitmapTree {
            leaves: leaves.within(PageRegion::new(0, leaf_count)),
            leaf_count,
            level_count: tree_levels(leaf_count),
        }
    }

    pub fn leaf_count(&self) -> usize {
        self.leaf_count
    }

    pub fn level_count(&self) -> u8 {
        self.level_count
    }

    pub fn leaves(&self) -> &PageMask {
        &self.leaves
    }

    /// Leaves one node of `level` spans before clipping.
    fn span(&self, level: u8) -> Option<usize> {
        let depth = self.level_count.checked_sub(1)?.checked_sub(level)?;
        1usize.checked_shl(depth.into())
    }

    /// Nodes in `level` (`uvm_perf_tree_level_node_count`).
    pub fn level_width(&self, level: u8) -> usize {
        self.span(level).map_or(0, |span| self.leaf_count.div_ceil(span))
    }

    /// Nodes in the whole tree, leaves included (`leaves_to_nodes`).
    pub fn node_total(&self) -> usize {
        (0..self.level_count).map(|l| self.level_width(l)).sum()
    }

    /// The node of `level` above `leaf`, if both exist.
    pub fn node(&self, level: u8, leaf: usize) -> Option<TreeNode> {
        if leaf >= self.leaf_count {
            return None;
        }
        let span = self.span(level)?;
        let first = leaf - leaf % span;
        let leaves = PageRegion::new(first, first.saturating_add(span).min(self.leaf_count));
        Some(TreeNode { level, leaves, count: self.leaves.count_in(leaves) })
    }

    /// The nodes from `leaf` up to the root, leaf first (`uvm_perf_prefetch_bitmap_tree_traverse_counters`).
    pub fn branch(&self, leaf: usize) -> impl Iterator<Item = TreeNode> + '_ {
        (0..self.level_count).rev().filter_map(move |level| self.node(level, leaf))
    }
}

/// The block's 64 KiB-aligned big pages: `align_up(first)..align_down(outer)`, or `None` when
/// no big page fits (`uvm_va_block_big_page_region_subset`).
pub fn big_page_region(block: PageRegion) -> Option<PageRegion> {
    let first = block.first.div_ceil(PAGES_PER_BIG_PAGE) * PAGES_PER_BIG_PAGE;
    let outer = block.outer - block.outer % PAGES_PER_BIG_PAGE;
    (outer > first).then(|| PageRegion::new(first, outer))
}

/// How the tree's leaves sit over a block's pages. When the block holds a big page but does
/// not start on one, the leaves start at the big-page boundary below the block (UVM's
/// `bitmap_tree->offset`), so tree nodes of 16 leaves and up line up with big pages; the
/// padding leaves before the block are never set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeLayout {
    block: PageRegion,
    base: PageIndex,
    leaf_count: usize,
}

impl TreeLayout {
    pub fn for_block(block: PageRegion) -> Self {
        let block = PageRegion::new(block.first, block.outer);
        let offset = match big_page_region(block) {
            Some(big) if big.first > block.first => block.first % PAGES_PER_BIG_PAGE,
            _ => 0,
        };
        let base = block.first - offset;
        TreeLayout { block, base, leaf_count: block.outer - base }
    }

    pub fn block(&self) -> PageRegion {
        self.block
    }

    /// The page of leaf 0 (before the block's first page when the tree is padded).
    pub fn base(&self) -> PageIndex {
        self.base
    }

    pub fn leaf_count(&self) -> usize {
        self.leaf_count
    }

    /// Leaves padding the tree before the block's first page.
    pub fn offset(&self) -> usize {
        self.block.first - self.base
    }

    fn leaf_of(&self, page: PageIndex) -> Option<usize> {
        self.block.contains(page).then(|| page - self.base)
    }

    /// The block's pages under a range of leaves.
    fn pages_of(&self, leaves: PageRegion) -> PageRegion {
        let first = leaves.first.saturating_add(self.base).max(self.block.first);
        let outer = leaves.outer.saturating_add(self.base).min(self.block.outer);
        PageRegion::new(first, outer)
    }

    fn leaves_of(&self, pages: &PageMask) -> PageMask {
        let mut leaves = PageMask::new();
        pages.within(self.block).iter().for_each(|p| {
            leaves.set(p - self.base);
        });
        leaves
    }
}

/// The tree UVM builds for one fault batch: leaves are the pages resident at the destination
/// or faulted, then each big page (and the unaligned prefix and suffix of the block, or the
/// whole block when it holds no big page) that has a faulted page and no thrashing page is
/// filled (`init_bitmap_tree_from_region`, `update_bitmap_tree_from_va_block`,
/// `grow_fault_granularity`).
pub fn build_tree(
    layout: &TreeLayout,
    faulted: &PageMask,
    resident_at_destination: &PageMask,
    thrashing: &PageMask,
) -> BitmapTree {
    let block = layout.block;
    let mut present = resident_at_destination.or(faulted).within(block);

    let mut grow = |region: PageRegion| {
        if !faulted.region_empty(region) && thrashing.region_empty(region) {
            present.set_region(region);
        }
    };
    match big_page_region(block) {
        None => grow(block),
        Some(big) => {
            grow(PageRegion::new(block.first, big.first));
            big.pages().step_by(PAGES_PER_BIG_PAGE).for_each(|p| grow(PageRegion::new(p, p + PAGES_PER_BIG_PAGE)));
            grow(PageRegion::new(big.outer, block.outer));
        }
    }

    BitmapTree::new(layout.leaves_of(&present), layout.leaf_count)
}

/// The pages to prefetch for a fault on `page`: the largest node on its branch that passes the
/// threshold, as block pages; empty when none does (`compute_prefetch_region`).
pub fn prefetch_region_for(
    config: &PrefetchConfig,
    tree: &BitmapTree,
    layout: &TreeLayout,
    page: PageIndex,
) -> PageRegion {
    let Some(leaf) = layout.leaf_of(page) else {
        return PageRegion::default();
    };
    tree.branch(leaf)
        .filter(|node| config.node_qualifies(node.count, node.leaves.len()))
        .last()
        .map_or(PageRegion::default(), |node| layout.pages_of(node.leaves))
}

/// What a fault batch on one block asks of prefetch.
#[derive(Clone, Copy, Debug)]
pub struct PrefetchRequest<'a> {
    /// The block's pages (the whole 2 MiB, or less for a short block).
    pub block: PageRegion,
    /// The new residency of each faulted page; prefetch happens only when this is exactly one
    /// processor (`uvm_va_block_get_prefetch_hint`).
    pub destinations: ProcessorMask,
    /// The pages being migrated because of faults.
    pub faulted: &'a PageMask,
    /// Pages already resident at the destination.
    pub resident_at_destination: &'a PageMask,
    /// Pages thrashing reports ([`super::thrashing::BlockThrashing::thrashing_pages`]).
    pub thrashing: &'a PageMask,
    /// No processor holds any page of the block yet.
    pub resident_nowhere: bool,
    /// The block's preferred location, if set.
    pub preferred_location: Option<ProcessorId>,
    /// Pages the CPU maps (readable); used only for a CPU destination.
    pub cpu_mapped: &'a PageMask,
}

/// Pages to migrate along with the faulted ones, and where (`uvm_perf_prefetch_hint_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefetchHint {
    pub pages: PageMask,
    pub destination: ProcessorId,
}

/// Per-block prefetch bookkeeping (`va_block->prefetch_info`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrefetchState {
    /// The destination of the last faults that were eligible for prefetch.
    pub last_destination: Option<ProcessorId>,
    /// Faulted pages migrated to `last_destination` since it last changed.
    pub fault_migrations_to_last_proc: u32,
}

/// The candidate prefetch pages for faults going to `destination`, before the `min_faults`
/// gate (`uvm_perf_prefetch_prenotify_fault_migrations`, without its bookkeeping).
pub fn prefetch_pages(config: &PrefetchConfig, req: &PrefetchRequest<'_>, destination: ProcessorId) -> PageMask {
    let block = PageRegion::new(req.block.first, req.block.outer);
    let faulted = req.faulted.within(block);
    let mut pages = PageMask::new();

    if req.resident_nowhere && req.preferred_location == Some(destination) {
        pages.set_region(block);
    } else if !block.is_empty() {
        let layout = TreeLayout::for_block(block);
        let tree = build_tree(&layout, &faulted, req.resident_at_destination, req.thrashing);
        for page in faulted.andnot(req.thrashing).iter() {
            let region = prefetch_region_for(config, &tree, &layout, page);
            pages.set_region(region);
            if !region.is_empty() && region.outer == block.outer {
                break;
            }
        }
    }

    pages = pages.andnot(&faulted);
    if destination.is_cpu() {
        pages = pages.andnot(&req.resident_at_destination.and(req.cpu_mapped));
    }
    pages.andnot(req.thrashing).within(block)
}

/// The prefetch hint for one fault batch on a block, updating the block's [`PrefetchState`]
/// (`uvm_perf_prefetch_get_hint_va_block`). `None` when prefetch is off, the faults go to more
/// than one processor, fewer than `min_faults` faults went to this destination, or nothing is
/// left to prefetch.
pub fn compute_prefetch_hint(
    config: &PrefetchConfig,
    state: &mut PrefetchState,
    req: &PrefetchRequest<'_>,
) -> Option<PrefetchHint> {
    if !config.enabled || req.destinations.count() != 1 {
        return None;
    }
    let destination = req.destinations.first()?;

    if state.last_destination != Some(destination) {
        state.last_destination = Some(destination);
        state.fault_migrations_to_last_proc = 0;
    }

    let pages = prefetch_pages(config, req, destination);

    let block = PageRegion::new(req.block.first, req.block.outer);
    let faults = u32::try_from(req.faulted.count_in(block)).unwrap_or(u32::MAX);
    state.fault_migrations_to_last_proc = state.fault_migrations_to_last_proc.saturating_add(faults);

    (state.fault_migrations_to_last_proc >= config.min_faults && !pages.is_empty())
        .then_some(PrefetchHint { pages, destination })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    const GPU0: ProcessorId = ProcessorId::Gpu(0);

    fn mask(regions: &[(usize, usize)]) -> PageMask {
        let mut m = PageMask::new();
        regions.iter().for_each(|&(f, o)| m.set_region(PageRegion::new(f, o)));
        m
    }

    fn pages(list: &[usize]) -> PageMask {
        let mut m = PageMask::new();
        list.iter().for_each(|&p| {
            m.set(p);
        });
        m
    }

    /// One fault batch with everything but the faulted, resident and thrashing pages defaulted.
    struct Batch {
        block: PageRegion,
        dest: ProcessorId,
        faulted: PageMask,
        resident: PageMask,
        thrashing: PageMask,
        cpu_mapped: PageMask,
        resident_nowhere: bool,
        preferred: Option<ProcessorId>,
    }

    impl Batch {
        fn new(faulted: PageMask) -> Self {
            Batch {
                block: PageRegion::full(),
                dest: GPU0,
                faulted,
                resident: PageMask::new(),
                thrashing: PageMask::new(),
                cpu_mapped: PageMask::new(),
                resident_nowhere: false,
                preferred: None,
            }
        }

        fn request(&self) -> PrefetchRequest<'_> {
            PrefetchRequest {
                block: self.block,
                destinations: ProcessorMask::of(self.dest),
                faulted: &self.faulted,
                resident_at_destination: &self.resident,
                thrashing: &self.thrashing,
                resident_nowhere: self.resident_nowhere,
                preferred_location: self.preferred,
                cpu_mapped: &self.cpu_mapped,
            }
        }

        fn hint_with(&self, config: &PrefetchConfig) -> Option<PageMask> {
            let mut state = PrefetchState::default();
            compute_prefetch_hint(config, &mut state, &self.request()).map(|h| {
                assert_eq!(h.destination, self.dest);
                h.pages
            })
        }

        fn hint(&self) -> Option<PageMask> {
            self.hint_with(&PrefetchConfig::default())
        }
    }

    #[test]
    fn level_counts() {
        for (leaves, levels) in [
            (0, 0),
            (1, 1),
            (2, 2),
            (3, 3),
            (7, 4),
            (8, 4),
            (9, 5),
            (13, 5),
            (15, 5),
            (16, 5),
            (300, 10),
            (305, 10),
            (512, 10),
        ] {
            assert_eq!(tree_levels(leaves), levels, "{leaves} leaves");
            assert_eq!(BitmapTree::new(PageMask::new(), leaves).level_count(), levels);
        }
    }

    #[test]
    fn node_counts_match_uvm_perf_utils() {
        // The node counts NVIDIA's uvm_perf_utils_test checks for its array-based trees.
        for (leaves, nodes) in
            [(8, 15), (7, 7 + 4 + 2 + 1), (9, 9 + 5 + 3 + 2 + 1), (13, 13 + 7 + 4 + 2 + 1), (15, 15 + 8 + 4 + 2 + 1)]
        {
            assert_eq!(BitmapTree::new(PageMask::new(), leaves).node_total(), nodes, "{leaves} leaves");
        }
        let tree = BitmapTree::new(PageMask::new(), 9);
        assert_eq!((0..5).map(|l| tree.level_width(l)).collect::<Vec<_>>(), [1, 2, 3, 5, 9]);
        assert_eq!(tree.level_width(5), 0);
        assert_eq!(BitmapTree::new(PageMask::new(), 512).node_total(), 1023);
    }

    #[test]
    fn branch_counts_power_of_two() {
        let tree = BitmapTree::new(pages(&[3, 6]), 8);
        let branch: Vec<_> = tree.branch(3).map(|n| (n.level, n.leaves.first, n.leaves.outer, n.count)).collect();
        assert_eq!(branch, [(3, 3, 4, 1), (2, 2, 4, 1), (1, 0, 4, 1), (0, 0, 8, 2)]);
        let branch: Vec<_> = tree.branch(7).map(|n| (n.level, n.leaves.first, n.leaves.outer, n.count)).collect();
        assert_eq!(branch, [(3, 7, 8, 0), (2, 6, 8, 1), (1, 4, 8, 1), (0, 0, 8, 2)]);
        assert_eq!(tree.branch(8).count(), 0, "leaf beyond the tree");
    }

    #[test]
    fn branch_counts_non_power_of_two() {
        // uvm_perf_utils_test's 9-leaf tree after touching leaves 6, 2 and 8.
        let tree = BitmapTree::new(pages(&[2, 6, 8]), 9);
        let counts = |level: u8| {
            (0..tree.level_width(level))
                .map(|i| {
                    let span = 1 << (tree.level_count() - 1 - level);
                    tree.node(level, i * span).map_or(usize::MAX, |n| n.count)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(4), [0, 0, 1, 0, 0, 0, 1, 0, 1]);
        assert_eq!(counts(3), [0, 1, 0, 1, 1]);
        assert_eq!(counts(2), [1, 1, 1]);
        assert_eq!(counts(1), [2, 1]);
        assert_eq!(counts(0), [3]);
        let last: Vec<_> = tree.branch(8).map(|n| (n.leaves.first, n.leaves.outer)).collect();
        assert_eq!(last, [(8, 9), (8, 9), (8, 9), (8, 9), (0, 9)], "short nodes are clipped to the leaves");
    }

    #[test]
    fn traversal_covers_every_node_once_per_level() {
        for leaves in [1, 2, 3, 7, 8, 9, 13, 15, 16, 17, 300, 305, 511, 512] {
            let tree = BitmapTree::new(PageMask::from_region(PageRegion::new(0, leaves)), leaves);
            for level in 0..tree.level_count() {
                let mut nodes: Vec<PageRegion> =
                    (0..leaves).filter_map(|l| tree.node(level, l)).map(|n| n.leaves).collect();
                nodes.dedup();
                assert_eq!(nodes.len(), tree.level_width(level), "{leaves} leaves, level {level}");
                assert_eq!(nodes.first().map(|n| n.first), Some(0));
                assert_eq!(nodes.last().map(|n| n.outer), Some(leaves));
                assert!(nodes.windows(2).all(|w| w[0].outer == w[1].first), "level {level} partitions the leaves");
            }
            for leaf in 0..leaves {
                let branch: Vec<_> = tree.branch(leaf).collect();
                assert_eq!(branch.len(), usize::from(tree.level_count()));
                assert_eq!(branch[0].leaves, PageRegion::page(leaf));
                assert_eq!(branch[branch.len() - 1].leaves, PageRegion::new(0, leaves));
                assert!(branch.windows(2).all(|w| w[1].leaves.covers(&w[0].leaves) && w[1].level + 1 == w[0].level));
                assert!(branch.iter().all(|n| n.count == n.leaves.len()));
            }
        }
    }

    #[test]
    fn config_ranges() {
        assert_eq!(PrefetchConfig::default(), PrefetchConfig { threshold: 51, min_faults: 1, enabled: true });
        assert!(PrefetchConfig::new(100, 20, true).is_ok());
        assert!(PrefetchConfig::new(0, 1, true).is_ok());
        let e = PrefetchConfig::new(101, 1, true).unwrap_err();
        assert_eq!((e.parameter, e.value, e.max), ("uvm_perf_prefetch_threshold", 101, 100));
        assert_eq!(PrefetchConfig::new(51, 0, true).unwrap_err().parameter, "uvm_perf_prefetch_min_faults");
        assert_eq!(PrefetchConfig::new(51, 21, true).unwrap_err().value, 21);
        assert_eq!(
            alloc::format!("{}", PrefetchConfig::new(51, 21, true).unwrap_err()),
            "uvm_perf_prefetch_min_faults = 21 is outside 1..=20"
        );
    }

    #[test]
    fn single_fault_fills_its_big_page_only() {
        let h = Batch::new(pages(&[40])).hint().expect("the rest of the big page");
        assert_eq!(h, mask(&[(32, 40), (41, 48)]));
        assert_eq!(h.count(), 15);
    }

    #[test]
    fn threshold_boundary_at_32_and_64_pages() {
        // [32,64): 16 of 32 present is 50%: not enough.
        let mut b = Batch::new(pages(&[40]));
        assert_eq!(b.hint().map(|h| h.count()), Some(15));
        // 17 of 32 (53%) takes the 32-page node.
        b.resident = pages(&[48]);
        assert_eq!(b.hint(), Some(mask(&[(32, 40), (41, 64)])));
        // [0,64) with 32 of 64 present is 50%: still the 32-page node.
        b.resident = mask(&[(48, 64)]);
        assert_eq!(b.hint().map(|h| h.count()), Some(31));
        // 33 of 64 takes the 64-page node.
        b.resident = mask(&[(48, 64)]).or(&pages(&[0]));
        let h = b.hint().unwrap();
        assert_eq!(h, mask(&[(0, 40), (41, 64)]));
        assert_eq!(h.count(), 63);
    }

    #[test]
    fn threshold_boundary_at_16_pages_without_growth() {
        // A thrashing page in the big page stops the growth, so residency alone must fill it.
        let mut b = Batch::new(pages(&[40]));
        b.thrashing = pages(&[47]);
        b.resident = mask(&[(32, 39)]); // 7 + the fault = 8 of 16: 50%
        assert_eq!(b.hint(), None);
        b.resident = mask(&[(32, 40)]); // 9 of 16
        let h = b.hint().unwrap();
        assert_eq!(h, mask(&[(32, 40), (41, 47)]));
        assert_eq!(h.count(), 14);
    }

    #[test]
    fn threshold_boundary_at_the_root() {
        // 51% of 512 is 261.12: 261 present pages are not enough, 262 are.
        let mut b = Batch::new(pages(&[40]));
        b.resident = mask(&[(256, 256 + 245)]); // 245 + 16 grown = 261
        assert_eq!(b.hint().map(|h| h.count()), Some(15));
        b.resident = mask(&[(256, 256 + 246)]); // 262
        let h = b.hint().unwrap();
        assert_eq!(h.count(), 511);
        assert!(!h.test(40));
        // A threshold of 50 takes the root at exactly 257 (> 256) and not at 256.
        let fifty = PrefetchConfig::new(50, 1, true).unwrap();
        b.resident = mask(&[(256, 256 + 240)]); // 256
        assert_eq!(b.hint_with(&fifty).map(|h| h.count()), Some(15));
        b.resident = mask(&[(256, 256 + 241)]); // 257
        assert_eq!(b.hint_with(&fifty).map(|h| h.count()), Some(511));
    }

    #[test]
    fn first_touch_to_the_preferred_location_takes_the_whole_block() {
        let mut b = Batch::new(pages(&[40, 300]));
        b.resident_nowhere = true;
        b.preferred = Some(GPU0);
        let h = b.hint().unwrap();
        assert_eq!(h.count(), 510);
        assert!(!h.test(40) && !h.test(300) && h.test(0) && h.test(511));
        // Thrashing pages are still left out.
        b.thrashing = pages(&[7]);
        assert_eq!(b.hint().map(|h| h.count()), Some(509));
        // Not the preferred location: the ordinary tree.
        b.thrashing = PageMask::new();
        b.preferred = Some(ProcessorId::Cpu);
        assert_eq!(b.hint(), Some(mask(&[(32, 40), (41, 48), (288, 300), (301, 304)])));
        // Something already resident: not a first touch.
        b.preferred = Some(GPU0);
        b.resident_nowhere = false;
        assert_eq!(b.hint().map(|h| h.count()), Some(30));
    }

    #[test]
    fn thrashing_pages_are_excluded_and_stop_growth() {
        // A thrashing page in the faulted big page: no growth, nothing to prefetch.
        let mut b = Batch::new(pages(&[40]));
        b.thrashing = pages(&[45]);
        assert_eq!(b.hint(), None);
        // A faulted page that is itself thrashing does not drive the tree walk.
        b.thrashing = pages(&[40]);
        assert_eq!(b.hint(), None);
        // Elsewhere in a winning node, a thrashing page is just removed.
        b.thrashing = pages(&[50]);
        b.resident = pages(&[48]);
        let h = b.hint().unwrap();
        assert_eq!(h.count(), 30);
        assert!(!h.test(50) && h.test(49) && h.test(63));
    }

    #[test]
    fn min_faults_gate_and_destination_change() {
        let config = PrefetchConfig::new(51, 3, true).unwrap();
        let mut state = PrefetchState::default();
        let b = Batch::new(pages(&[40]));
        assert_eq!(compute_prefetch_hint(&config, &mut state, &b.request()), None);
        assert_eq!(state.fault_migrations_to_last_proc, 1);
        assert_eq!(compute_prefetch_hint(&config, &mut state, &b.request()), None);
        assert_eq!(compute_prefetch_hint(&config, &mut state, &b.request()).map(|h| h.pages.count()), Some(15));
        assert_eq!(state, PrefetchState { last_destination: Some(GPU0), fault_migrations_to_last_proc: 3 });

        // Faults to another processor start the count again.
        let mut cpu = Batch::new(pages(&[40]));
        cpu.dest = ProcessorId::Cpu;
        assert_eq!(compute_prefetch_hint(&config, &mut state, &cpu.request()), None);
        assert_eq!(state, PrefetchState { last_destination: Some(ProcessorId::Cpu), fault_migrations_to_last_proc: 1 });

        // Two faulted pages count twice.
        let two = Batch::new(pages(&[40, 41]));
        assert_eq!(compute_prefetch_hint(&config, &mut state, &two.request()), None);
        assert_eq!(compute_prefetch_hint(&config, &mut state, &two.request()).map(|h| h.pages.count()), Some(14));
        assert_eq!(state.fault_migrations_to_last_proc, 4);
    }

    #[test]
    fn several_destinations_or_disabled_give_nothing() {
        let b = Batch::new(pages(&[40]));
        let mut state = PrefetchState::default();
        let mut req = b.request();
        req.destinations = [GPU0, ProcessorId::Cpu].into_iter().collect();
        assert_eq!(compute_prefetch_hint(&PrefetchConfig::default(), &mut state, &req), None);
        req.destinations = ProcessorMask::empty();
        assert_eq!(compute_prefetch_hint(&PrefetchConfig::default(), &mut state, &req), None);
        assert_eq!(state, PrefetchState::default(), "ineligible batches leave the state alone");
        let off = PrefetchConfig { enabled: false, ..PrefetchConfig::default() };
        assert_eq!(compute_prefetch_hint(&off, &mut state, &b.request()), None);
        assert_eq!(state, PrefetchState::default());
    }

    #[test]
    fn cpu_destination_skips_pages_the_cpu_maps() {
        let mut b = Batch::new(pages(&[40]));
        b.dest = ProcessorId::Cpu;
        b.resident = pages(&[33, 34]);
        b.cpu_mapped = pages(&[33, 100]);
        let h = b.hint().unwrap();
        assert_eq!(h.count(), 14);
        assert!(!h.test(33) && h.test(34));
        // For a GPU destination the CPU mappings do not matter.
        b.dest = GPU0;
        assert_eq!(b.hint().map(|h| h.count()), Some(15));
    }

    #[test]
    fn short_unaligned_block_stays_inside_its_region() {
        let block = PageRegion::new(5, 305); // 300 pages, not on a 64 KiB boundary
        let layout = TreeLayout::for_block(block);
        assert_eq!((layout.base(), layout.offset(), layout.leaf_count()), (0, 5, 305));
        assert_eq!(tree_levels(layout.leaf_count()), 10);
        assert_eq!(big_page_region(block), Some(PageRegion::new(16, 304)));

        let mut b = Batch::new(pages(&[6]));
        b.block = block;
        // The 11-page prefix fills 11 of its 16 leaves.
        assert_eq!(b.hint(), Some(mask(&[(5, 6), (7, 16)])));
        // The one-page suffix is all the fault can grow into.
        b.faulted = pages(&[304]);
        assert_eq!(b.hint(), None);
        // 165 of 305 leaves (> 51%) take the whole block, and nothing outside it.
        b.faulted = pages(&[6]);
        b.resident = mask(&[(16, 170), (400, 512)]);
        let h = b.hint().unwrap();
        assert_eq!(h, mask(&[(5, 6), (7, 305)]));
        assert_eq!(h.count(), 299);
        // 155 of 305 do not; 155 of the first 256 leaves do.
        b.resident = mask(&[(16, 160)]);
        assert_eq!(b.hint(), Some(mask(&[(5, 6), (7, 256)])));
        // Faulted pages outside the block are ignored.
        b.faulted = pages(&[2, 400]);
        assert_eq!(b.hint(), None);
    }

    #[test]
    fn block_without_a_big_page_is_taken_whole() {
        let mut b = Batch::new(pages(&[5]));
        b.block = PageRegion::new(3, 12);
        assert_eq!(TreeLayout::for_block(b.block).base(), 3);
        assert_eq!(b.hint(), Some(mask(&[(3, 5), (6, 12)])));
        b.block = PageRegion::new(20, 40); // crosses a 64 KiB boundary but holds no big page
        b.faulted = pages(&[21]);
        assert_eq!(big_page_region(b.block), None);
        assert_eq!(b.hint().map(|h| h.count()), Some(19));
        b.thrashing = pages(&[39]);
        assert_eq!(b.hint(), None);
    }

    #[test]
    fn sequential_stream_doubles_the_prefetch_region() {
        let config = PrefetchConfig::default();
        let mut state = PrefetchState::default();
        let mut resident = PageMask::new();
        let mut grown = Vec::new();
        while let Some(next) = PageMask::from_region(PageRegion::full()).andnot(&resident).first() {
            let mut b = Batch::new(pages(&[next]));
            b.resident = resident;
            let hint = compute_prefetch_hint(&config, &mut state, &b.request()).expect("a stream always prefetches");
            grown.push((next, hint.pages.count(), hint.pages.andnot(&resident).count()));
            resident = resident.or(&hint.pages).or(&b.faulted);
        }
        // (faulted page, hint pages, pages newly brought in besides the fault)
        assert_eq!(grown, [(0, 15, 15), (16, 31, 15), (32, 63, 31), (64, 127, 63), (128, 255, 127), (256, 511, 255)]);
        assert_eq!(state.fault_migrations_to_last_proc, 6);
    }

    #[test]
    fn random_inputs_never_escape_the_block() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let random_mask = |density: u64, next: &mut dyn FnMut() -> u64| {
            let mut m = PageMask::new();
            (0..PAGES_PER_BLOCK).filter(|_| next() % 100 < density).for_each(|p| {
                m.set(p);
            });
            m
        };
        let mut state = PrefetchState::default();
        for round in 0..300 {
            let a = (next() % 600) as usize;
            let c = (next() % 600) as usize;
            let mut b = Batch::new(random_mask(next() % 6, &mut next));
            // Regions built by hand may be inverted or run past the block.
            b.block =
                if round % 5 == 0 { PageRegion { first: a, outer: c } } else { PageRegion::new(a.min(c), a.max(c)) };
            b.resident = random_mask(next() % 60, &mut next);
            b.thrashing = random_mask(next() % 3, &mut next);
            b.cpu_mapped = random_mask(50, &mut next);
            b.resident_nowhere = next() % 4 == 0;
            b.preferred = [None, Some(GPU0), Some(ProcessorId::Cpu)][(next() % 3) as usize];
            b.dest = if next() % 2 == 0 { GPU0 } else { ProcessorId::Cpu };
            let threshold = (next() % 120) as u32;
            let config = PrefetchConfig { threshold, min_faults: (next() % 25) as u32, enabled: true };
            if let Some(h) = compute_prefetch_hint(&config, &mut state, &b.request()) {
                let block = PageRegion::new(b.block.first, b.block.outer);
                assert!(h.pages.is_subset_of(&PageMask::from_region(block)), "round {round}");
                assert!(!h.pages.intersects(&b.faulted) && !h.pages.intersects(&b.thrashing), "round {round}");
            }
        }
    }
}
