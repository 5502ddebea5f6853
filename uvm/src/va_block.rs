//! The va_block: up to 2 MiB of one managed va_range, 2 MiB-aligned and never crossing a 2 MiB
//! boundary (`uvm_va_block_t`, `kernel-open/nvidia-uvm/uvm_va_block.h` and `uvm_va_block.c`,
//! 535.261.03).
//!
//! Per processor the block keeps which 4 KiB pages are resident there and where (the physical
//! address of each resident page), and which pages that processor has mapped with which
//! permission (`pte_bits[READ, WRITE, ATOMIC]`, each level implying the ones below). Per GPU it
//! also keeps the page size its mappings use: one 2 MiB PTE, 64 KiB big PTEs, or 4 KiB PTEs,
//! chosen as `block_gpu_compute_new_pte_state` does (largest possible, merged eagerly), plus the
//! sticky `force_4k_ptes` a fatal fault sets.
//!
//! Page indices are relative to the 2 MiB-aligned window the block sits in, so page 0 is
//! always 2 MiB-aligned and every 64 KiB big page starts at a multiple of 16; a block that
//! covers less than 2 MiB (at either end of its range) uses the pages of [`VaBlock::region`]
//! only. (UVM indexes from the block's start and shifts for big-page alignment; the window
//! index makes the shift unnecessary.)

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use nvgpu::mm::format::PageSize;

use crate::page_mask::{
    PageIndex, PageMask, PageRegion, BIG_PAGES_PER_BLOCK, PAGES_PER_BIG_PAGE, PAGES_PER_BLOCK, PAGE_SIZE, VA_BLOCK_SIZE,
};
use crate::processor::{ProcessorId, ProcessorMask, MAX_GPUS};

/// A mapping's permission (`uvm_prot_t`): each level includes the ones below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Prot {
    None,
    ReadOnly,
    ReadWrite,
    ReadWriteAtomic,
}

impl Prot {
    const LEVELS: [Prot; 3] = [Prot::ReadOnly, Prot::ReadWrite, Prot::ReadWriteAtomic];

    fn level(self) -> Option<usize> {
        match self {
            Prot::None => None,
            Prot::ReadOnly => Some(0),
            Prot::ReadWrite => Some(1),
            Prot::ReadWriteAtomic => Some(2),
        }
    }
}

/// What an access needs, ranked as UVM ranks fault access types
/// (`uvm_fault_access_type_t`: PREFETCH < READ < WRITE < ATOMIC_WEAK < ATOMIC_STRONG).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessType {
    Prefetch,
    Read,
    Write,
    AtomicWeak,
    AtomicStrong,
}

impl AccessType {
    /// The least permission that satisfies the access (`uvm_fault_access_type_to_prot`).
    pub const fn required_prot(self) -> Prot {
        match self {
            AccessType::Prefetch | AccessType::Read => Prot::ReadOnly,
            AccessType::Write => Prot::ReadWrite,
            AccessType::AtomicWeak | AccessType::AtomicStrong => Prot::ReadWriteAtomic,
        }
    }
}

/// No physical page recorded.
const NO_PAGE: u64 = u64::MAX;

/// What one processor holds of a block.
#[derive(Clone, PartialEq, Eq)]
pub struct ProcessorState {
    /// Pages resident in this processor's memory.
    pub resident: PageMask,
    /// `pte_bits`: pages this processor maps with at least READ, WRITE, ATOMIC.
    mapped: [PageMask; 3],
    /// Physical address of each resident page ([`NO_PAGE`] where none).
    phys: Box<[u64; PAGES_PER_BLOCK]>,
}

impl Default for ProcessorState {
    fn default() -> Self {
        ProcessorState {
            resident: PageMask::new(),
            mapped: [PageMask::new(); 3],
            phys: Box::new([NO_PAGE; PAGES_PER_BLOCK]),
        }
    }
}

impl ProcessorState {
    /// Physical address of resident page `page`.
    pub fn phys(&self, page: PageIndex) -> Option<u64> {
        match self.phys.get(page) {
            Some(&pa) if pa != NO_PAGE && self.resident.test(page) => Some(pa),
            _ => None,
        }
    }

    /// Pages mapped with at least `prot` (`Prot::None`: every page).
    pub fn mapped_with(&self, prot: Prot) -> PageMask {
        match prot.level() {
            Some(l) => self.mapped.get(l).copied().unwrap_or_default(),
            None => PageMask::from_region(PageRegion::full()),
        }
    }

    /// The permission page `page` is mapped with.
    pub fn prot(&self, page: PageIndex) -> Prot {
        let mut prot = Prot::None;
        for (l, level) in Prot::LEVELS.iter().enumerate() {
            if self.mapped.get(l).is_some_and(|m| m.test(page)) {
                prot = *level;
            }
        }
        prot
    }

    /// Pages mapped at all.
    pub fn mapped_any(&self) -> PageMask {
        self.mapped[0]
    }
}

/// How a GPU's mappings of a block are laid out in its page tables.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct PteLayout {
    /// One 2 MiB PTE maps the whole block.
    pub is_2m: bool,
    /// Big pages mapped by one 64 KiB PTE each (bit n: big page n).
    pub big: u32,
    /// Pages mapped by 4 KiB PTEs.
    pub small: PageMask,
}

impl PteLayout {
    /// The PTE size that maps page `page`, if mapped.
    pub fn page_size_of(&self, page: PageIndex) -> Option<PageSize> {
        if self.is_2m {
            Some(PageSize::Size2M)
        } else if self.big & (1 << (page / PAGES_PER_BIG_PAGE)) != 0 {
            Some(PageSize::Size64K)
        } else if self.small.test(page) {
            Some(PageSize::Size4K)
        } else {
            None
        }
    }

    /// The mappings as (region, page size), in address order.
    pub fn extents(&self) -> Vec<(PageRegion, PageSize)> {
        let mut out = Vec::with_capacity(if self.is_2m { 1 } else { self.pte_count() });
        if self.is_2m {
            out.push((PageRegion::full(), PageSize::Size2M));
            return out;
        }
        let mut page = 0;
        while page < PAGES_PER_BLOCK {
            let big = page / PAGES_PER_BIG_PAGE;
            if self.big & (1 << big) != 0 {
                out.push((PageRegion::big_page(big), PageSize::Size64K));
                page = (big + 1) * PAGES_PER_BIG_PAGE;
                continue;
            }
            let region_end = (big + 1) * PAGES_PER_BIG_PAGE;
            for r in self.small.regions_in(PageRegion::new(page, region_end)) {
                out.push((r, PageSize::Size4K));
            }
            page = region_end;
        }
        out
    }

    /// PTEs this layout writes (one per 2M, 64K or 4K mapping).
    pub fn pte_count(&self) -> usize {
        if self.is_2m {
            1
        } else {
            self.big.count_ones() as usize + self.small.count()
        }
    }
}

impl fmt::Debug for PteLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_2m {
            return write!(f, "PteLayout(2M)");
        }
        write!(f, "PteLayout(big {:#010x}, 4K {:?})", self.big, self.small)
    }
}

/// Where a GPU's mapping of a page points: the memory of `target` at `phys`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappingTarget {
    pub target: ProcessorId,
    pub phys: u64,
}

/// What a GPU holds of a block beyond [`ProcessorState`].
#[derive(Clone)]
pub struct GpuBlockState {
    pub state: ProcessorState,
    /// Pages evicted from this GPU to the CPU (`evicted` mask).
    pub evicted: PageMask,
    /// The page-table layout written for this GPU's mappings.
    pub pte_layout: PteLayout,
    /// Set after a fatal fault in the block: 4 KiB PTEs only, so cancels are precise.
    pub force_4k_ptes: bool,
    /// Where each mapped page points, by page index.
    targets: Box<[Option<MappingTarget>; PAGES_PER_BLOCK]>,
}

impl Default for GpuBlockState {
    fn default() -> Self {
        GpuBlockState {
            state: ProcessorState::default(),
            evicted: PageMask::new(),
            pte_layout: PteLayout::default(),
            force_4k_ptes: false,
            targets: Box::new([None; PAGES_PER_BLOCK]),
        }
    }
}

impl GpuBlockState {
    /// Where the GPU's mapping of `page` points.
    pub fn target(&self, page: PageIndex) -> Option<MappingTarget> {
        self.targets.get(page).copied().flatten()
    }

    fn set_target(&mut self, page: PageIndex, target: Option<MappingTarget>) {
        if let Some(slot) = self.targets.get_mut(page) {
            *slot = target;
        }
    }
}

/// A block operation refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VaBlockError {
    /// The address is not inside the block.
    OutOfBlock { va: u64, start: u64, end: u64 },
    /// The pages are not all inside the block.
    RegionOutOfBlock { region: PageRegion, block: PageRegion },
    /// GPU index beyond [`MAX_GPUS`].
    BadGpu { gpu: u8 },
    /// Mapping a page that is resident nowhere.
    NotResident { page: PageIndex },
    /// A start/end that is not a valid block (misaligned, empty, or crossing 2 MiB).
    BadBounds { start: u64, end: u64 },
}

impl fmt::Display for VaBlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VaBlockError::OutOfBlock { va, start, end } => {
                write!(f, "address {va:#x} is outside va_block [{start:#x}, {end:#x})")
            }
            VaBlockError::RegionOutOfBlock { region, block } => {
                write!(f, "{region:?} is outside the va_block's {block:?}")
            }
            VaBlockError::BadGpu { gpu } => write!(f, "GPU index {gpu} is beyond {MAX_GPUS}"),
            VaBlockError::NotResident { page } => write!(f, "page {page} is resident nowhere"),
            VaBlockError::BadBounds { start, end } => write!(
                f,
                "[{start:#x}, {end:#x}) is not a va_block (4 KiB-aligned, non-empty, inside one 2 MiB window)"
            ),
        }
    }
}

/// One va_block.
#[derive(Clone)]
pub struct VaBlock {
    start: u64,
    end: u64,
    cpu: ProcessorState,
    gpus: Vec<Option<Box<GpuBlockState>>>,
    /// Pages with copies on several processors (read duplication).
    pub read_duplicated: PageMask,
}

impl fmt::Debug for VaBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "va_block [{:#x}, {:#x}) resident on {:?}", self.start, self.end, self.resident_processors())
    }
}

impl VaBlock {
    /// A block over `[start, end)`: 4 KiB-aligned, non-empty, inside one 2 MiB window.
    pub fn new(start: u64, end: u64) -> Result<Self, VaBlockError> {
        let bad = VaBlockError::BadBounds { start, end };
        if !start.is_multiple_of(PAGE_SIZE) || !end.is_multiple_of(PAGE_SIZE) || end <= start {
            return Err(bad);
        }
        let base = start & !(VA_BLOCK_SIZE - 1);
        if end - base > VA_BLOCK_SIZE {
            return Err(bad);
        }
        Ok(VaBlock { start, end, cpu: ProcessorState::default(), gpus: Vec::new(), read_duplicated: PageMask::new() })
    }

    pub fn start(&self) -> u64 {
        self.start
    }

    pub fn end(&self) -> u64 {
        self.end
    }

    /// The 2 MiB-aligned address of page 0.
    pub fn window_base(&self) -> u64 {
        self.start & !(VA_BLOCK_SIZE - 1)
    }

    /// The pages this block covers.
    pub fn region(&self) -> PageRegion {
        let base = self.window_base();
        PageRegion::new(((self.start - base) / PAGE_SIZE) as usize, ((self.end - base) / PAGE_SIZE) as usize)
    }

    /// Whether the block is a whole 2 MiB window.
    pub fn is_full_window(&self) -> bool {
        self.region() == PageRegion::full()
    }

    /// The page holding `va`.
    pub fn page_index(&self, va: u64) -> Result<PageIndex, VaBlockError> {
        if va < self.start || va >= self.end {
            return Err(VaBlockError::OutOfBlock { va, start: self.start, end: self.end });
        }
        Ok(((va - self.window_base()) / PAGE_SIZE) as usize)
    }

    /// The address of page `page`.
    pub fn page_address(&self, page: PageIndex) -> u64 {
        self.window_base() + page as u64 * PAGE_SIZE
    }

    /// The pages of `[va, va + size)` inside this block.
    pub fn region_of(&self, va: u64, size: u64) -> PageRegion {
        let lo = va.max(self.start);
        let hi = va.saturating_add(size).min(self.end);
        if hi <= lo {
            return PageRegion::new(0, 0);
        }
        let base = self.window_base();
        PageRegion::new(((lo - base) / PAGE_SIZE) as usize, (hi - base).div_ceil(PAGE_SIZE) as usize)
    }

    fn check_mask(&self, pages: &PageMask) -> Result<(), VaBlockError> {
        let outside = pages.andnot(&PageMask::from_region(self.region()));
        match outside.first() {
            None => Ok(()),
            Some(p) => Err(VaBlockError::RegionOutOfBlock { region: PageRegion::page(p), block: self.region() }),
        }
    }

    /// The state of processor `p` (`None` for a GPU that never touched the block).
    pub fn state(&self, p: ProcessorId) -> Option<&ProcessorState> {
        match p {
            ProcessorId::Cpu => Some(&self.cpu),
            ProcessorId::Gpu(g) => self.gpus.get(g as usize).and_then(|s| s.as_deref()).map(|s| &s.state),
        }
    }

    fn state_mut(&mut self, p: ProcessorId) -> Result<&mut ProcessorState, VaBlockError> {
        match p {
            ProcessorId::Cpu => Ok(&mut self.cpu),
            ProcessorId::Gpu(g) => Ok(&mut self.gpu_mut(g)?.state),
        }
    }

    /// The GPU's block state, if the GPU ever touched the block.
    pub fn gpu(&self, gpu: u8) -> Option<&GpuBlockState> {
        self.gpus.get(gpu as usize).and_then(|s| s.as_deref())
    }

    /// The GPU's block state, created on first use.
    pub fn gpu_mut(&mut self, gpu: u8) -> Result<&mut GpuBlockState, VaBlockError> {
        let i = gpu as usize;
        if i >= MAX_GPUS {
            return Err(VaBlockError::BadGpu { gpu });
        }
        if self.gpus.len() <= i {
            self.gpus.resize_with(i + 1, || None);
        }
        match self.gpus.get_mut(i) {
            Some(slot) => Ok(slot.get_or_insert_with(Default::default)),
            None => Err(VaBlockError::BadGpu { gpu }),
        }
    }

    /// GPUs with state in this block.
    pub fn gpus(&self) -> impl Iterator<Item = (u8, &GpuBlockState)> {
        self.gpus.iter().enumerate().filter_map(|(i, s)| s.as_deref().map(|s| (i as u8, s)))
    }

    /// Pages resident on `p`.
    pub fn resident(&self, p: ProcessorId) -> PageMask {
        self.state(p).map(|s| s.resident).unwrap_or_default()
    }

    /// Processors holding a copy of `page`.
    pub fn residency_of(&self, page: PageIndex) -> ProcessorMask {
        let mut m = ProcessorMask::empty();
        if self.cpu.resident.test(page) {
            m.set(ProcessorId::Cpu);
        }
        for (g, s) in self.gpus() {
            if s.state.resident.test(page) {
                m.set(ProcessorId::Gpu(g));
            }
        }
        m
    }

    /// Processors holding any page of the block (the block's `resident` processor mask).
    pub fn resident_processors(&self) -> ProcessorMask {
        let mut m = ProcessorMask::empty();
        if !self.cpu.resident.is_empty() {
            m.set(ProcessorId::Cpu);
        }
        for (g, s) in self.gpus() {
            if !s.state.resident.is_empty() {
                m.set(ProcessorId::Gpu(g));
            }
        }
        m
    }

    /// Pages resident on some processor.
    pub fn resident_anywhere(&self) -> PageMask {
        self.gpus().fold(self.cpu.resident, |m, (_, s)| m.or(&s.state.resident))
    }

    /// Records `pages` resident on `p`, page `i` at `phys(i)`.
    pub fn set_resident(
        &mut self,
        p: ProcessorId,
        pages: &PageMask,
        phys: impl Fn(PageIndex) -> u64,
    ) -> Result<(), VaBlockError> {
        self.check_mask(pages)?;
        let state = self.state_mut(p)?;
        state.resident = state.resident.or(pages);
        for page in pages.iter() {
            if let Some(slot) = state.phys.get_mut(page) {
                *slot = phys(page);
            }
        }
        if let ProcessorId::Gpu(g) = p {
            let gpu = self.gpu_mut(g)?;
            gpu.evicted = gpu.evicted.andnot(pages);
        }
        Ok(())
    }

    /// Drops `pages` from `p`'s residency.
    pub fn clear_resident(&mut self, p: ProcessorId, pages: &PageMask) -> Result<(), VaBlockError> {
        self.check_mask(pages)?;
        let state = self.state_mut(p)?;
        state.resident = state.resident.andnot(pages);
        for page in pages.iter() {
            if let Some(slot) = state.phys.get_mut(page) {
                *slot = NO_PAGE;
            }
        }
        Ok(())
    }

    /// Sets `p`'s mapping of `pages` to exactly `prot` (`Prot::None` unmaps); a GPU mapping
    /// records where each page points (`target`, asked for each page in ascending order).
    pub fn set_mapping(
        &mut self,
        p: ProcessorId,
        pages: &PageMask,
        prot: Prot,
        mut target: impl FnMut(PageIndex) -> Option<MappingTarget>,
    ) -> Result<(), VaBlockError> {
        self.check_mask(pages)?;
        let state = self.state_mut(p)?;
        let level = prot.level();
        for (l, m) in state.mapped.iter_mut().enumerate() {
            if level.is_some_and(|lv| l <= lv) {
                *m = m.or(pages);
            } else {
                *m = m.andnot(pages);
            }
        }
        if let ProcessorId::Gpu(g) = p {
            let gpu = self.gpu_mut(g)?;
            for page in pages.iter() {
                gpu.set_target(page, if prot == Prot::None { None } else { target(page) });
            }
        }
        Ok(())
    }

    /// Pages `p` maps with at least `prot`.
    pub fn mapped(&self, p: ProcessorId, prot: Prot) -> PageMask {
        match self.state(p) {
            Some(s) if prot != Prot::None => s.mapped_with(prot),
            Some(_) => PageMask::from_region(self.region()),
            None if prot == Prot::None => PageMask::from_region(self.region()),
            None => PageMask::new(),
        }
    }

    /// The permission `p` maps `page` with.
    pub fn prot(&self, p: ProcessorId, page: PageIndex) -> Prot {
        self.state(p).map_or(Prot::None, |s| s.prot(page))
    }

    /// Whose memory `p`'s mapping of `page` points at (the CPU maps only its own copies).
    pub fn mapping_target(&self, p: ProcessorId, page: PageIndex) -> Option<ProcessorId> {
        match p {
            ProcessorId::Cpu => self.cpu.mapped_any().test(page).then_some(ProcessorId::Cpu),
            ProcessorId::Gpu(g) => self.gpu(g).and_then(|s| s.target(page)).map(|t| t.target),
        }
    }

    /// Processors mapping any page of the block.
    pub fn mapped_processors(&self) -> ProcessorMask {
        let mut m = ProcessorMask::empty();
        if !self.cpu.mapped_any().is_empty() {
            m.set(ProcessorId::Cpu);
        }
        for (g, s) in self.gpus() {
            if !s.state.mapped_any().is_empty() {
                m.set(ProcessorId::Gpu(g));
            }
        }
        m
    }

    /// The largest PTEs that map GPU `gpu`'s current mappings (`block_gpu_compute_new_pte_state`):
    /// one 2 MiB PTE when the block is a whole window, every page is mapped with one permission
    /// to one target's memory that is physically contiguous and 2 MiB-aligned, and 4 KiB PTEs
    /// are not forced; else a 64 KiB PTE for each big page that meets the same conditions over
    /// 64 KiB; else 4 KiB PTEs.
    pub fn compute_pte_layout(&self, gpu: u8) -> PteLayout {
        let Some(g) = self.gpu(gpu) else { return PteLayout::default() };
        let mapped = g.state.mapped_any();
        let uniform = |region: PageRegion, align: u64| -> bool {
            if !mapped.region_full(region) || region.is_empty() {
                return false;
            }
            let first = region.first;
            let (Some(t0), prot0) = (g.target(first), g.state.prot(first)) else { return false };
            if t0.phys % align != 0 {
                return false;
            }
            region.pages().all(|p| {
                g.state.prot(p) == prot0
                    && g.target(p)
                        .is_some_and(|t| t.target == t0.target && t.phys == t0.phys + (p - first) as u64 * PAGE_SIZE)
            })
        };
        if !g.force_4k_ptes && self.is_full_window() && uniform(PageRegion::full(), VA_BLOCK_SIZE) {
            return PteLayout { is_2m: true, big: 0, small: PageMask::new() };
        }
        let mut layout = PteLayout { is_2m: false, big: 0, small: mapped };
        if !g.force_4k_ptes {
            for big in 0..BIG_PAGES_PER_BLOCK {
                let r = PageRegion::big_page(big);
                // Only a fully mapped big page can take a 64 KiB PTE.
                if mapped.big_page_bits(big) == u16::MAX
                    && self.region().covers(&r)
                    && uniform(r, crate::page_mask::BIG_PAGE_SIZE)
                {
                    layout.big |= 1 << big;
                    layout.small.clear_region(r);
                }
            }
        }
        layout
    }

    /// Splits the block at `va` (page-aligned, strictly inside): this block keeps `[start, va)`,
    /// the returned one gets `[va, end)` with the state of its pages.
    pub fn split(&mut self, va: u64) -> Result<VaBlock, VaBlockError> {
        if !va.is_multiple_of(PAGE_SIZE) || va <= self.start || va >= self.end {
            return Err(VaBlockError::OutOfBlock { va, start: self.start, end: self.end });
        }
        let mut upper = self.clone();
        upper.start = va;
        self.end = va;
        let keep_lower = PageMask::from_region(self.region());
        let keep_upper = PageMask::from_region(upper.region());
        restrict(&mut self.cpu, &keep_lower);
        restrict(&mut upper.cpu, &keep_upper);
        self.read_duplicated = self.read_duplicated.and(&keep_lower);
        upper.read_duplicated = upper.read_duplicated.and(&keep_upper);
        for (block, keep) in [(&mut *self, keep_lower), (&mut upper, keep_upper)] {
            for g in block.gpus.iter_mut().flatten() {
                restrict(&mut g.state, &keep);
                g.evicted = g.evicted.and(&keep);
                for (page, slot) in g.targets.iter_mut().enumerate() {
                    if !keep.test(page) {
                        *slot = None;
                    }
                }
            }
            let gpus: Vec<u8> = block.gpus().map(|(i, _)| i).collect();
            for i in gpus {
                let layout = block.compute_pte_layout(i);
                if let Ok(g) = block.gpu_mut(i) {
                    g.pte_layout = layout;
                }
            }
        }
        Ok(upper)
    }
}

fn restrict(state: &mut ProcessorState, keep: &PageMask) {
    let drop = PageMask::from_region(PageRegion::full()).andnot(keep);
    state.resident = state.resident.and(keep);
    for m in state.mapped.iter_mut() {
        *m = m.and(keep);
    }
    for page in drop.iter() {
        if let Some(slot) = state.phys.get_mut(page) {
            *slot = NO_PAGE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB2: u64 = VA_BLOCK_SIZE;

    fn map_gpu_contiguous(b: &mut VaBlock, gpu: u8, pages: &PageMask, base_pa: u64, prot: Prot) {
        b.set_resident(ProcessorId::Gpu(gpu), pages, |p| base_pa + p as u64 * PAGE_SIZE).unwrap();
        b.set_mapping(ProcessorId::Gpu(gpu), pages, prot, |p| {
            Some(MappingTarget { target: ProcessorId::Gpu(gpu), phys: base_pa + p as u64 * PAGE_SIZE })
        })
        .unwrap();
    }

    #[test]
    fn bounds_and_page_indices() {
        assert!(VaBlock::new(MB2, 2 * MB2).is_ok());
        assert!(VaBlock::new(MB2 + 4096, 2 * MB2 + 4096).is_err(), "crosses a 2 MiB boundary");
        assert!(VaBlock::new(MB2, MB2).is_err());
        assert!(VaBlock::new(MB2 + 1, 2 * MB2).is_err());
        let b = VaBlock::new(MB2 + 0x3000, MB2 + 0x10_0000).unwrap();
        assert_eq!(b.region(), PageRegion::new(3, 256));
        assert_eq!(b.page_index(MB2 + 0x3fff), Ok(3));
        assert!(b.page_index(MB2 + 0x2fff).is_err());
        assert!(b.page_index(MB2 + 0x10_0000).is_err());
        assert_eq!(b.page_address(3), MB2 + 0x3000);
        assert_eq!(b.region_of(0, u64::MAX), b.region());
        assert_eq!(b.region_of(MB2 + 0x4800, 0x1000), PageRegion::new(4, 6));
        assert!(!b.is_full_window());
    }

    #[test]
    fn residency_and_mapping_masks() {
        let mut b = VaBlock::new(0, MB2).unwrap();
        let low = PageMask::from_region(PageRegion::new(0, 10));
        b.set_resident(ProcessorId::Cpu, &low, |p| 0x1000_0000 + p as u64 * 4096).unwrap();
        b.set_resident(ProcessorId::Gpu(1), &PageMask::from_region(PageRegion::new(5, 20)), |p| p as u64 * 4096)
            .unwrap();
        assert_eq!(b.residency_of(7), [ProcessorId::Cpu, ProcessorId::Gpu(1)].into_iter().collect());
        assert_eq!(b.residency_of(15), ProcessorMask::of(ProcessorId::Gpu(1)));
        assert_eq!(b.state(ProcessorId::Cpu).unwrap().phys(3), Some(0x1000_3000));
        assert_eq!(b.state(ProcessorId::Cpu).unwrap().phys(30), None);
        assert_eq!(b.resident_anywhere().count(), 20);
        b.set_mapping(ProcessorId::Cpu, &low, Prot::ReadWrite, |_| None).unwrap();
        assert_eq!(b.prot(ProcessorId::Cpu, 3), Prot::ReadWrite);
        assert_eq!(b.mapped(ProcessorId::Cpu, Prot::ReadOnly).count(), 10);
        assert_eq!(b.mapped(ProcessorId::Cpu, Prot::ReadWriteAtomic).count(), 0);
        b.set_mapping(ProcessorId::Cpu, &PageMask::from_region(PageRegion::new(0, 5)), Prot::ReadOnly, |_| None)
            .unwrap();
        assert_eq!(b.mapped(ProcessorId::Cpu, Prot::ReadWrite).count(), 5, "downgrade to read-only");
        b.set_mapping(ProcessorId::Cpu, &low, Prot::None, |_| None).unwrap();
        assert!(b.mapped_processors().is_empty());
        b.clear_resident(ProcessorId::Gpu(1), &PageMask::from_region(PageRegion::new(5, 20))).unwrap();
        assert_eq!(b.resident_processors(), ProcessorMask::of(ProcessorId::Cpu));
        assert_eq!(b.gpu_mut(40).err(), Some(VaBlockError::BadGpu { gpu: 40 }));
        let small = VaBlock::new(0, 0x4000).unwrap();
        let mut small2 = small.clone();
        assert!(small2.set_resident(ProcessorId::Cpu, &PageMask::from_region(PageRegion::new(2, 6)), |_| 0).is_err());
    }

    #[test]
    fn pte_layout_2m_when_whole_block_contiguous() {
        let mut b = VaBlock::new(4 * MB2, 5 * MB2).unwrap();
        map_gpu_contiguous(&mut b, 0, &PageMask::from_region(PageRegion::full()), 6 * MB2, Prot::ReadWriteAtomic);
        let l = b.compute_pte_layout(0);
        assert!(l.is_2m);
        assert_eq!(l.pte_count(), 1);
        assert_eq!(l.extents(), [(PageRegion::full(), PageSize::Size2M)]);
        // Not 2 MiB-aligned physically: 32 big pages.
        let mut b = VaBlock::new(4 * MB2, 5 * MB2).unwrap();
        map_gpu_contiguous(&mut b, 0, &PageMask::from_region(PageRegion::full()), 6 * MB2 + 0x10000, Prot::ReadWrite);
        let l = b.compute_pte_layout(0);
        assert!(!l.is_2m);
        assert_eq!(l.big, u32::MAX);
        assert_eq!(l.pte_count(), 32);
        // One page with a different permission: that big page falls to 4K.
        b.set_mapping(ProcessorId::Gpu(0), &PageMask::from_region(PageRegion::page(20)), Prot::ReadOnly, |p| {
            Some(MappingTarget { target: ProcessorId::Gpu(0), phys: 6 * MB2 + 0x10000 + p as u64 * PAGE_SIZE })
        })
        .unwrap();
        let l = b.compute_pte_layout(0);
        assert_eq!(l.big, !(1 << 1));
        assert_eq!(l.small.count(), 16);
        assert_eq!(l.page_size_of(20), Some(PageSize::Size4K));
        assert_eq!(l.page_size_of(0), Some(PageSize::Size64K));
        assert_eq!(l.pte_count(), 31 + 16);
        // force_4k_ptes: every page by a 4K PTE.
        b.gpu_mut(0).unwrap().force_4k_ptes = true;
        assert_eq!(b.compute_pte_layout(0).pte_count(), 512);
    }

    #[test]
    fn pte_layout_partial_and_scattered() {
        let mut b = VaBlock::new(0, MB2).unwrap();
        // Pages 16..48 contiguous (two big pages), page 50 alone, 64..80 scattered.
        map_gpu_contiguous(&mut b, 2, &PageMask::from_region(PageRegion::new(16, 48)), 0x100_0000, Prot::ReadWrite);
        map_gpu_contiguous(&mut b, 2, &PageMask::from_region(PageRegion::page(50)), 0x200_0000, Prot::ReadWrite);
        let scattered = PageMask::from_region(PageRegion::new(64, 80));
        b.set_resident(ProcessorId::Gpu(2), &scattered, |p| 0x300_0000 + (80 - p as u64) * 0x2000).unwrap();
        b.set_mapping(ProcessorId::Gpu(2), &scattered, Prot::ReadWrite, |p| {
            Some(MappingTarget { target: ProcessorId::Gpu(2), phys: 0x300_0000 + (80 - p as u64) * 0x2000 })
        })
        .unwrap();
        let l = b.compute_pte_layout(2);
        assert_eq!(l.big, 0b110);
        assert_eq!(l.small.count(), 17);
        let ext = l.extents();
        assert_eq!(ext[0], (PageRegion::big_page(1), PageSize::Size64K));
        assert_eq!(ext[1], (PageRegion::big_page(2), PageSize::Size64K));
        assert_eq!(ext[2], (PageRegion::page(50), PageSize::Size4K));
        assert_eq!(ext[3], (PageRegion::new(64, 80), PageSize::Size4K));
        // Mapping CPU memory (sysmem) contiguously also gets a big PTE; mixing targets does not.
        let mut b = VaBlock::new(0, MB2).unwrap();
        let r = PageMask::from_region(PageRegion::big_page(3));
        b.set_resident(ProcessorId::Cpu, &r, |p| 0x4000_0000 + p as u64 * 4096).unwrap();
        b.set_mapping(ProcessorId::Gpu(0), &r, Prot::ReadWrite, |p| {
            Some(MappingTarget {
                target: if p == 50 { ProcessorId::Gpu(1) } else { ProcessorId::Cpu },
                phys: 0x4000_0000 + p as u64 * 4096,
            })
        })
        .unwrap();
        assert_eq!(b.compute_pte_layout(0).big, 0, "mixed targets");
        b.set_mapping(ProcessorId::Gpu(0), &r, Prot::ReadWrite, |p| {
            Some(MappingTarget { target: ProcessorId::Cpu, phys: 0x4000_0000 + p as u64 * 4096 })
        })
        .unwrap();
        assert_eq!(b.compute_pte_layout(0).big, 1 << 3);
        // A block that is not a whole window never gets a 2M PTE, and big pages only where covered.
        let mut b = VaBlock::new(0x8000, MB2).unwrap();
        let all = PageMask::from_region(b.region());
        map_gpu_contiguous(&mut b, 0, &all, 0, Prot::ReadWrite);
        let l = b.compute_pte_layout(0);
        assert!(!l.is_2m);
        assert_eq!(l.big, !1u32);
        assert_eq!(l.small, PageMask::from_region(PageRegion::new(8, 16)));
    }

    #[test]
    fn split_keeps_each_sides_state() {
        let mut b = VaBlock::new(0, MB2).unwrap();
        map_gpu_contiguous(&mut b, 0, &PageMask::from_region(PageRegion::full()), 0, Prot::ReadWrite);
        b.gpu_mut(0).unwrap().pte_layout = b.compute_pte_layout(0);
        let upper = b.split(0x11_0000).unwrap();
        assert_eq!(b.region(), PageRegion::new(0, 0x110));
        assert_eq!(upper.region(), PageRegion::new(0x110, 512));
        assert_eq!(b.resident(ProcessorId::Gpu(0)).count(), 0x110);
        assert_eq!(upper.resident(ProcessorId::Gpu(0)).count(), 512 - 0x110);
        assert!(!b.gpu(0).unwrap().pte_layout.is_2m);
        assert_eq!(upper.gpu(0).unwrap().target(0x10f), None);
        assert_eq!(upper.gpu(0).unwrap().target(0x110).map(|t| t.phys), Some(0x110_000));
        assert!(b.split(0x11_0000).is_err(), "outside the lower half now");
        assert!(b.split(0x1234).is_err(), "not page-aligned");
    }
}
