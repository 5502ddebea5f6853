//! A driver-owned GPU page-table tree for one address space: map, unmap, change protection, and
//! a software walk of the tables in memory.
//!
//! Tables live wherever a [`PageTableMemory`] puts them (VRAM through BAR1/BAR2 windows or the
//! PRAMIN window, or coherent sysmem); the builder keeps a shadow of each table (its entries and
//! children) so that it never has to trust what it reads back, and writes every change through
//! to memory. [`PageTables::translate`] does the opposite: it walks the tables in memory only,
//! decoding each entry the way the MMU would, so tests can use it as the reference for what the
//! GPU will see.
//!
//! Order of writes, so that a GPU walking the tables concurrently never sees a PDE pointing at
//! uninitialised memory or at freed memory: a new table is zeroed (by the allocator) before the
//! PDE that points at it is written; a table is unlinked, the TLB invalidated, and only then is
//! its memory returned. Page sizes and the dual-PDE rules follow UVM's page tree
//! (`kernel-open/nvidia-uvm/uvm_page_tree.c`): a 2M PTE replaces the dual PDE at PD0, a 512M PTE
//! the PDE at PD1; 64K and 4K PTEs sit in the big and small tables a dual PDE points at, and a
//! big PTE that is plainly invalid lets the MMU fall through to the 4K PTEs beneath it.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use super::format::{
    Aperture, DualPde, FormatError, LevelKind, MmuFormat, PageSize, Pte, PteAttrs, PteState, TableAddress,
};
use crate::platform::Timeout;

/// Memory for page tables: allocates zeroed tables and reads and writes their 64-bit entries.
///
/// The kernel implements it over VRAM (through a BAR window) or coherent sysmem; host tests
/// implement it over a `Vec`. Entries are little-endian 64-bit words, as the GPU reads them.
pub trait PageTableMemory {
    /// A zeroed table of `bytes` bytes aligned to `align` (a power of two, at least 256).
    fn alloc_table(&mut self, bytes: u64, align: u64) -> Result<TableAddress, TableMemoryError>;
    /// Returns a table allocated by [`Self::alloc_table`] with `bytes`. Called only once the
    /// table is unlinked and the TLB invalidated.
    fn free_table(&mut self, table: TableAddress, bytes: u64);
    /// Reads the 64-bit word at `at`, which must lie in a table this memory holds.
    fn read_u64(&self, at: TableAddress) -> Result<u64, TableMemoryError>;
    /// Writes the 64-bit word at `at`.
    fn write_u64(&mut self, at: TableAddress, value: u64) -> Result<(), TableMemoryError>;
}

/// Page-table memory failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableMemoryError {
    /// No memory for a table of `bytes`.
    OutOfMemory { bytes: u64 },
    /// `at` is not in any table this memory holds.
    BadAddress { at: TableAddress },
}

impl fmt::Display for TableMemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableMemoryError::OutOfMemory { bytes } => {
                write!(f, "no memory for a {bytes}-byte page table")
            }
            TableMemoryError::BadAddress { at } => write!(f, "{at} is not in page-table memory"),
        }
    }
}

/// Whether an invalidate follows a change that removed or reduced access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlbChange {
    /// Only new mappings: nothing the GPU could still use was taken away.
    Upgrade,
    /// Mappings were removed or their permissions reduced: the invalidate must be ordered
    /// after the GPU's outstanding accesses (RM sets `SYS_MEMBAR` and `ACK_GLOBALLY`; UVM uses a
    /// GPU or system membar, `uvm_hal_downgrade_membar_type`).
    Downgrade,
}

/// One TLB invalidation the page-table builder needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TlbInvalidate {
    /// The address space's root (its PDB).
    pub pdb: TableAddress,
    /// First byte of VA whose translation changed.
    pub va: u64,
    /// Bytes of VA whose translation changed.
    pub size: u64,
    /// Whether PDEs changed too (tables were added or unlinked), so cached PDEs must go: RM's
    /// `PAGE_TABLE_LEVEL_ALL` rather than `PTE_ONLY`.
    pub directories_changed: bool,
    pub change: TlbChange,
}

/// Flushes the GPU's cached translations.
///
/// Not implemented here: RM does it with `NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB` (VF+0x30A0)
/// and `_UPPER_PDB` (VF+0x30A4), then `NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE` (VF+0x30B0) with
/// `TRIGGER`, polling until `TRIGGER` clears (`kgmmuCommitTlbInvalidate_TU102`,
/// `turing/tu102/dev_vm.h`); UVM pushes host methods `MEM_OP_A..D` with
/// `MMU_TLB_INVALIDATE(_TARGETED)` on a channel (`uvm_hal_volta_host_tlb_invalidate_va`), which
/// Ampere and later can restrict to a VA range.
pub trait TlbInvalidator {
    /// Invalidates the translations `request` describes, and waits until that is done.
    fn invalidate(&mut self, request: &TlbInvalidate) -> Result<(), TlbError>;
}

/// A TLB invalidation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlbError {
    /// The invalidate did not complete in time.
    Timeout(Timeout),
    /// The invalidate could not be issued (no channel, GPU lost, ...).
    Failed { what: &'static str },
}

impl fmt::Display for TlbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TlbError::Timeout(t) => write!(f, "TLB invalidate: {t}"),
            TlbError::Failed { what } => write!(f, "TLB invalidate failed: {what}"),
        }
    }
}

/// A page-table operation failed. Every variant except [`Self::Memory`] and [`Self::Tlb`] is
/// detected before anything is written, so the tables are unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageTableError {
    /// `what` (`"va"`, `"pa"`, `"size"`) is not aligned to `alignment`.
    Misaligned { what: &'static str, value: u64, alignment: u64 },
    /// A zero-byte request.
    EmptyRange,
    /// The range does not fit this format's VA space.
    OutsideVaSpace { va: u64, size: u64, va_bits: u32 },
    /// Mapping over an existing mapping (`va` is the existing page's base).
    AlreadyMapped { va: u64, page_size: PageSize },
    /// Part of the range is not mapped.
    NotMapped { va: u64 },
    /// The range covers only part of a page (`va` is that page's base).
    SplitsPage { va: u64, page_size: PageSize },
    /// This format has no such page size.
    PageSizeNotInFormat { page_size: PageSize },
    /// An entry could not be encoded.
    Format(FormatError),
    /// Page-table memory failed. A `map` that fails this way has been rolled back.
    Memory(TableMemoryError),
    /// The TLB invalidation failed; the tables hold the new state.
    Tlb(TlbError),
    /// The software walk found an entry it cannot decode, at `at`.
    Corrupt { at: TableAddress, error: FormatError },
    /// The software walk found a PTE at a level that cannot hold one.
    UnexpectedPte { at: TableAddress, level: &'static str },
    /// A root directory handed over by its owner already holds an entry (at `at`): the builder
    /// would not know what it maps, so it refuses to adopt the root.
    RootInUse { at: TableAddress, value: u64 },
}

impl From<FormatError> for PageTableError {
    fn from(e: FormatError) -> Self {
        PageTableError::Format(e)
    }
}

impl From<TableMemoryError> for PageTableError {
    fn from(e: TableMemoryError) -> Self {
        PageTableError::Memory(e)
    }
}

impl fmt::Display for PageTableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageTableError::Misaligned { what, value, alignment } => {
                write!(f, "{what} {value:#x} is not {alignment:#x}-aligned")
            }
            PageTableError::EmptyRange => f.write_str("empty range"),
            PageTableError::OutsideVaSpace { va, size, va_bits } => {
                write!(f, "range {va:#x}+{size:#x} is outside the {va_bits}-bit VA space")
            }
            PageTableError::AlreadyMapped { va, page_size } => {
                write!(f, "{va:#x} is already mapped by a {page_size} page")
            }
            PageTableError::NotMapped { va } => write!(f, "{va:#x} is not mapped"),
            PageTableError::SplitsPage { va, page_size } => {
                write!(f, "the range covers part of the {page_size} page at {va:#x}")
            }
            PageTableError::PageSizeNotInFormat { page_size } => {
                write!(f, "this MMU format has no {page_size} pages")
            }
            PageTableError::Format(e) => write!(f, "{e}"),
            PageTableError::Memory(e) => write!(f, "{e}"),
            PageTableError::Tlb(e) => write!(f, "{e}"),
            PageTableError::Corrupt { at, error } => write!(f, "page-table entry at {at}: {error}"),
            PageTableError::UnexpectedPte { at, level } => {
                write!(f, "PTE at {at} in {level}, which holds no PTEs")
            }
            PageTableError::RootInUse { at, value } => {
                write!(f, "the root directory to adopt already holds {value:#x} at {at}")
            }
        }
    }
}

/// What a VA translates to, per the tables in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// The physical address `va` reaches.
    pub pa: u64,
    pub aperture: Aperture,
    /// VA of the page's first byte.
    pub page_va: u64,
    pub page_size: PageSize,
    pub attrs: PteAttrs,
}

/// A valid PTE as the builder knows it: one page of one mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedPage {
    pub va: u64,
    pub page_size: PageSize,
    pub pte: Pte,
}

/// One table: where it is, its entries as last written, and its children.
struct Table {
    addr: TableAddress,
    /// Index into the format's levels.
    level: usize,
    /// The table's 64-bit words, as written to memory.
    words: Vec<u64>,
    /// Directories: one slot per entry (two per dual entry: big, small). Page tables: none.
    children: Vec<Option<Box<Table>>>,
    /// Valid PTEs plus present children.
    used: u32,
}

/// The page-table tree of one GPU address space.
///
/// Owns its table memory `M`; [`Self::release`] frees every table and gives `M` back. Dropping
/// it instead leaks the tables on purpose: a GPU may still walk them. VAs are plain offsets in
/// the format's VA space (no sign extension).
pub struct PageTables<M: PageTableMemory> {
    format: MmuFormat,
    mem: M,
    root: Table,
    /// Tables unlinked by the operation in progress, freed after its TLB invalidate.
    unlinked: Vec<(TableAddress, u64)>,
}

/// A step of a map: one page.
#[derive(Clone, Copy)]
struct PagePlan {
    va: u64,
    pa: u64,
    size: PageSize,
}

fn check_aligned(what: &'static str, value: u64, alignment: u64) -> Result<(), PageTableError> {
    if value & (alignment - 1) == 0 {
        Ok(())
    } else {
        Err(PageTableError::Misaligned { what, value, alignment })
    }
}

impl<M: PageTableMemory> PageTables<M> {
    /// An empty address space: allocates the root directory (its address is the PDB the
    /// instance block points at).
    pub fn new(format: MmuFormat, mut mem: M) -> Result<Self, PageTableError> {
        let root = Self::new_table(&format, &mut mem, 0)?;
        Ok(Self { format, mem, root, unlinked: Vec::new() })
    }

    /// An empty address space over a root directory someone else allocated and keeps (GSP-RM's
    /// BAR1 page directory): every level below it is allocated from `mem`. The root must hold
    /// no entries; it is registered in `mem` by the caller and is handed back to
    /// `mem.free_table` by [`Self::release`] like any other table.
    pub fn adopt_root(format: MmuFormat, mem: M, root: TableAddress) -> Result<Self, PageTableError> {
        let desc =
            format.levels().first().ok_or(PageTableError::PageSizeNotInFormat { page_size: PageSize::Size4K })?;
        let entries = desc.entries() as usize;
        let words = entries * desc.words_per_entry();
        for i in 0..words as u64 {
            let at = root.offset(i * 8).ok_or(TableMemoryError::BadAddress { at: root })?;
            let value = mem.read_u64(at)?;
            if value != 0 {
                return Err(PageTableError::RootInUse { at, value });
            }
        }
        let slots = match desc.kind {
            LevelKind::DualDirectory => entries * 2,
            _ => entries,
        };
        let mut children = Vec::new();
        children.resize_with(slots, || None);
        let root = Table { addr: root, level: 0, words: vec![0; words], children, used: 0 };
        Ok(Self { format, mem, root, unlinked: Vec::new() })
    }

    /// The format the tables use.
    pub fn format(&self) -> MmuFormat {
        self.format
    }

    /// The root directory (the PDB).
    pub fn pdb(&self) -> TableAddress {
        self.root.addr
    }

    /// The table memory.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// Frees every table (the address space must no longer be bound to any channel) and gives
    /// the table memory back.
    pub fn release(self) -> M {
        fn free_all<M: PageTableMemory>(table: Table, format: &MmuFormat, mem: &mut M) {
            let bytes = format.levels().get(table.level).map_or(0, |l| l.table_bytes());
            for child in table.children.into_iter().flatten() {
                free_all(*child, format, mem);
            }
            mem.free_table(table.addr, bytes);
        }
        let PageTables { format, mut mem, root, unlinked } = self;
        for (table, bytes) in unlinked {
            mem.free_table(table, bytes);
        }
        free_all(root, &format, &mut mem);
        mem
    }

    fn new_table(format: &MmuFormat, mem: &mut M, level: usize) -> Result<Table, PageTableError> {
        let Some(desc) = format.levels().get(level) else {
            // Levels come from the format's own tables; a bad index is a bug here, not input.
            return Err(PageTableError::PageSizeNotInFormat { page_size: PageSize::Size4K });
        };
        let bytes = desc.table_bytes();
        let addr = mem.alloc_table(bytes, format.table_alignment(level))?;
        let entries = desc.entries() as usize;
        let slots = match desc.kind {
            LevelKind::Directory => entries,
            LevelKind::DualDirectory => entries * 2,
            LevelKind::BigPageTable | LevelKind::SmallPageTable => 0,
        };
        let mut children = Vec::new();
        children.resize_with(slots, || None);
        Ok(Table { addr, level, words: vec![0; entries * desc.words_per_entry()], children, used: 0 })
    }

    // -----------------------------------------------------------------------------------------
    // Validation.

    fn check_range(&self, va: u64, size: u64) -> Result<u64, PageTableError> {
        if size == 0 {
            return Err(PageTableError::EmptyRange);
        }
        let va_bits = self.format.va_bits();
        let end = va.checked_add(size).filter(|&end| end <= 1u64 << va_bits);
        end.ok_or(PageTableError::OutsideVaSpace { va, size, va_bits })
    }

    /// The page sizes `map` picks from: 2M whenever VA, PA and the remaining size allow, then
    /// 64K, else 4K (512M pages are only used when asked for).
    fn plan(&self, va: u64, pa: u64, size: u64, forced: Option<PageSize>) -> Result<Vec<PagePlan>, PageTableError> {
        let end = self.check_range(va, size)?;
        let min = forced.map_or(PageSize::Size4K.bytes(), |p| p.bytes());
        check_aligned("va", va, min)?;
        check_aligned("pa", pa, min)?;
        check_aligned("size", size, min)?;
        if pa.checked_add(size).is_none() {
            return Err(PageTableError::Misaligned { what: "pa", value: pa, alignment: min });
        }
        if let Some(page_size) = forced {
            if self.format.pte_level(page_size).is_none() {
                return Err(PageTableError::PageSizeNotInFormat { page_size });
            }
        }
        let mut plan = Vec::new();
        let (mut v, mut p) = (va, pa);
        while v < end {
            let remaining = end - v;
            let size = match forced {
                Some(size) => size,
                None => [PageSize::Size2M, PageSize::Size64K, PageSize::Size4K]
                    .into_iter()
                    .find(|s| v % s.bytes() == 0 && p % s.bytes() == 0 && remaining >= s.bytes())
                    .unwrap_or(PageSize::Size4K),
            };
            plan.push(PagePlan { va: v, pa: p, size });
            v += size.bytes();
            p += size.bytes();
        }
        Ok(plan)
    }

    /// Existing PTEs that overlap the page `(va, size)`, as `(va, size)` of one of them.
    fn overlap(&self, va: u64, size: PageSize) -> Option<(u64, PageSize)> {
        let levels = self.format.levels();
        let target = self.format.pte_level(size)?;
        let dual = levels.len() - 3;
        let mut table = &self.root;
        loop {
            let desc = levels.get(table.level)?;
            let index = desc.index(va) as usize;
            let words = desc.words_per_entry();
            let first = *table.words.get(index * words)?;
            if table.level == target {
                return match desc.kind {
                    LevelKind::BigPageTable | LevelKind::SmallPageTable => {
                        self.format.is_pte(first).then_some((va, size))
                    }
                    // A large page's slot must hold neither a PTE nor any table.
                    _ => {
                        let base = va & !(desc.entry_coverage() - 1);
                        if self.format.is_pte(first) {
                            Some((base, size))
                        } else {
                            let ways = if desc.kind == LevelKind::DualDirectory { 2 } else { 1 };
                            (0..ways)
                                .filter_map(|w| table.children.get(index * ways + w)?.as_deref())
                                .find_map(|child| self.first_pte_in(child, base))
                        }
                    }
                };
            }
            if self.format.is_pte(first) {
                return Some((va & !(desc.entry_coverage() - 1), self.format.level_page_size(table.level)?));
            }
            if table.level == dual {
                // 4K and 64K PTEs of the same VA live in sibling tables.
                let (own, sibling) = if target == levels.len() - 1 { (1, 0) } else { (0, 1) };
                if let Some(other) = table.children.get(index * 2 + sibling).and_then(|c| c.as_deref()) {
                    let other_desc = levels.get(other.level)?;
                    let own_bytes = size.bytes();
                    let other_bytes = other_desc.entry_coverage();
                    // The sibling entries covering [va, va + own_bytes).
                    let start = va & !(other_bytes - 1);
                    let mut at = start;
                    while at < va + own_bytes {
                        let i = other_desc.index(at) as usize;
                        if other.words.get(i).is_some_and(|&w| self.format.is_pte(w)) {
                            let size = self.format.level_page_size(other.level)?;
                            return Some((at, size));
                        }
                        at += other_bytes;
                    }
                }
                table = table.children.get(index * 2 + own)?.as_deref()?;
            } else {
                table = table.children.get(index)?.as_deref()?;
            }
        }
    }

    /// The first valid PTE anywhere under `table` (which covers VA from `base`).
    fn first_pte_in(&self, table: &Table, base: u64) -> Option<(u64, PageSize)> {
        let desc = self.format.levels().get(table.level)?;
        let words = desc.words_per_entry();
        for index in 0..desc.entries() as usize {
            let va = base + index as u64 * desc.entry_coverage();
            if table.words.get(index * words).is_some_and(|&w| self.format.is_pte(w)) {
                return Some((va, self.format.level_page_size(table.level)?));
            }
            let ways = table.children.len() / desc.entries() as usize;
            for w in 0..ways {
                if let Some(child) = table.children.get(index * ways + w).and_then(|c| c.as_deref()) {
                    if let Some(found) = self.first_pte_in(child, va) {
                        return Some(found);
                    }
                }
            }
        }
        None
    }

    /// Every valid PTE that overlaps `[va, end)`, in VA order.
    pub fn mapped_pages(&self, va: u64, size: u64) -> Vec<MappedPage> {
        let mut out = Vec::new();
        let end = va.saturating_add(size);
        self.collect(&self.root, 0, va, end, &mut out);
        out
    }

    fn collect(&self, table: &Table, base: u64, va: u64, end: u64, out: &mut Vec<MappedPage>) {
        let Some(desc) = self.format.levels().get(table.level) else {
            return;
        };
        let coverage = desc.entry_coverage();
        let table_end = base.saturating_add(coverage.saturating_mul(desc.entries()));
        let (lo, hi) = (va.max(base), end.min(table_end));
        if lo >= hi {
            return;
        }
        let first = ((lo - base) / coverage) as usize;
        let last = ((hi - 1 - base) / coverage) as usize;
        let words = desc.words_per_entry();
        let ways = if desc.entries() > 0 { table.children.len() / desc.entries() as usize } else { 0 };
        for index in first..=last {
            let entry_va = base + index as u64 * coverage;
            let Some(&word) = table.words.get(index * words) else {
                continue;
            };
            if self.format.is_pte(word) {
                if let (Some(page_size), Ok(PteState::Valid(pte))) =
                    (self.format.level_page_size(table.level), self.format.decode_pte(word))
                {
                    out.push(MappedPage { va: entry_va, page_size, pte });
                }
                continue;
            }
            // Dual entries: collect both halves, then sort the (few) results of this entry.
            let start = out.len();
            for w in 0..ways {
                if let Some(child) = table.children.get(index * ways + w).and_then(|c| c.as_deref()) {
                    self.collect(child, entry_va, va, end, out);
                }
            }
            if ways > 1 {
                out[start..].sort_by_key(|p| p.va);
            }
        }
    }

    /// The pages covering `[va, va + size)` exactly: every byte mapped, no page cut.
    fn covering_pages(&self, va: u64, size: u64) -> Result<Vec<MappedPage>, PageTableError> {
        let end = self.check_range(va, size)?;
        check_aligned("va", va, PageSize::Size4K.bytes())?;
        check_aligned("size", size, PageSize::Size4K.bytes())?;
        let pages = self.mapped_pages(va, size);
        let mut expect = va;
        for page in &pages {
            let page_end = page.va + page.page_size.bytes();
            if page.va < va || page_end > end {
                return Err(PageTableError::SplitsPage { va: page.va, page_size: page.page_size });
            }
            if page.va != expect {
                return Err(PageTableError::NotMapped { va: expect });
            }
            expect = page_end;
        }
        if expect != end {
            return Err(PageTableError::NotMapped { va: expect });
        }
        Ok(pages)
    }

    // -----------------------------------------------------------------------------------------
    // Operations.

    /// Maps `[va, va + size)` to `[pa, pa + size)` in `aperture`, choosing the page size per
    /// page: 2 MiB wherever VA, PA and the remaining size are 2 MiB-aligned, then 64 KiB, else
    /// 4 KiB. Fails without changing anything if any page is already mapped.
    pub fn map(
        &mut self,
        va: u64,
        pa: u64,
        size: u64,
        aperture: Aperture,
        attrs: PteAttrs,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<(), PageTableError> {
        let plan = self.plan(va, pa, size, None)?;
        self.apply_map(va, size, &plan, aperture, attrs, tlb)
    }

    /// Maps with one page size for the whole range (`va`, `pa` and `size` aligned to it).
    #[allow(clippy::too_many_arguments)]
    pub fn map_with_page_size(
        &mut self,
        va: u64,
        pa: u64,
        size: u64,
        page_size: PageSize,
        aperture: Aperture,
        attrs: PteAttrs,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<(), PageTableError> {
        let plan = self.plan(va, pa, size, Some(page_size))?;
        self.apply_map(va, size, &plan, aperture, attrs, tlb)
    }

    fn apply_map(
        &mut self,
        va: u64,
        size: u64,
        plan: &[PagePlan],
        aperture: Aperture,
        attrs: PteAttrs,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<(), PageTableError> {
        // Encode everything and check for overlaps before writing anything.
        let mut ptes = Vec::with_capacity(plan.len());
        for page in plan {
            if let Some((va, page_size)) = self.overlap(page.va, page.size) {
                return Err(PageTableError::AlreadyMapped { va, page_size });
            }
            let pte = Pte { aperture, address: page.pa, attrs };
            ptes.push(self.format.encode_pte(&pte)?);
        }
        let mut directories_changed = false;
        for (done, (page, &raw)) in plan.iter().zip(&ptes).enumerate() {
            match self.write_pte(page.va, page.size, raw) {
                Ok(added_tables) => directories_changed |= added_tables,
                Err(e) => {
                    // Undo the pages already written; they were unmapped before.
                    for undo in plan.iter().take(done) {
                        let _ = self.clear_pte(undo.va, undo.size);
                    }
                    let _ = self.clear_pte(page.va, page.size);
                    self.flush(va, size, true, TlbChange::Downgrade, tlb)?;
                    return Err(e);
                }
            }
        }
        self.flush(va, size, directories_changed, TlbChange::Upgrade, tlb)
    }

    /// Unmaps `[va, va + size)`, which must be mapped throughout and must not cut a page; frees
    /// page tables that become empty (after the TLB invalidate).
    pub fn unmap(&mut self, va: u64, size: u64, tlb: &mut impl TlbInvalidator) -> Result<(), PageTableError> {
        let pages = self.covering_pages(va, size)?;
        let mut first_error = None;
        for page in &pages {
            if let Err(e) = self.clear_pte(page.va, page.page_size) {
                first_error.get_or_insert(e);
            }
        }
        let flushed = self.flush(va, size, !self.unlinked.is_empty(), TlbChange::Downgrade, tlb);
        match first_error {
            Some(e) => Err(e),
            None => flushed,
        }
    }

    /// Rewrites the attributes of every page in `[va, va + size)` (mapped throughout, no page
    /// cut), keeping each page's aperture and address.
    pub fn change_protection(
        &mut self,
        va: u64,
        size: u64,
        attrs: PteAttrs,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<(), PageTableError> {
        let pages = self.covering_pages(va, size)?;
        let mut encoded = Vec::with_capacity(pages.len());
        for page in &pages {
            let pte = Pte { attrs, ..page.pte };
            encoded.push(self.format.encode_pte(&pte)?);
        }
        for (page, raw) in pages.iter().zip(encoded) {
            self.write_pte(page.va, page.page_size, raw)?;
        }
        self.flush(va, size, false, TlbChange::Downgrade, tlb)
    }

    /// Invalidates, then frees the tables unlinked since the last flush.
    fn flush(
        &mut self,
        va: u64,
        size: u64,
        directories_changed: bool,
        change: TlbChange,
        tlb: &mut impl TlbInvalidator,
    ) -> Result<(), PageTableError> {
        let request = TlbInvalidate { pdb: self.root.addr, va, size, directories_changed, change };
        let result = tlb.invalidate(&request).map_err(PageTableError::Tlb);
        if result.is_ok() {
            for (table, bytes) in self.unlinked.drain(..) {
                self.mem.free_table(table, bytes);
            }
        }
        // If the invalidate failed the unlinked tables are kept (leaked to the next successful
        // flush): the GPU may still hold PDEs that point at them.
        result
    }

    /// Writes the PTE of page `(va, size)`, creating tables on the way. Returns whether tables
    /// were added.
    fn write_pte(&mut self, va: u64, size: PageSize, raw: u64) -> Result<bool, PageTableError> {
        let format = self.format;
        let target = format.pte_level(size).ok_or(PageTableError::PageSizeNotInFormat { page_size: size })?;
        let Self { mem, root, .. } = self;
        write_pte_in(&format, mem, root, target, va, raw)
    }

    /// Clears the PTE of page `(va, size)` and unlinks tables left empty.
    fn clear_pte(&mut self, va: u64, size: PageSize) -> Result<(), PageTableError> {
        let format = self.format;
        let target = format.pte_level(size).ok_or(PageTableError::PageSizeNotInFormat { page_size: size })?;
        let Self { mem, root, unlinked, .. } = self;
        clear_pte_in(&format, mem, root, target, va, unlinked).map(|_| ())
    }

    // -----------------------------------------------------------------------------------------
    // The software walk.

    /// Translates `va` by walking the tables in memory as the MMU does. `Ok(None)`: the access
    /// would fault (or hit a sparse page).
    pub fn translate(&self, va: u64) -> Result<Option<Translation>, PageTableError> {
        walk(&self.format, &self.mem, self.root.addr, va)
    }
}

/// Translates `va` in the address space rooted at `pdb`, reading only `mem`: what the GPU's MMU
/// would resolve. Usable on tables this module did not build (the model, a dump).
pub fn walk(
    format: &MmuFormat,
    mem: &impl PageTableMemory,
    pdb: TableAddress,
    va: u64,
) -> Result<Option<Translation>, PageTableError> {
    let va_bits = format.va_bits();
    if va >> va_bits != 0 {
        return Err(PageTableError::OutsideVaSpace { va, size: 1, va_bits });
    }
    let levels = format.levels();
    let read = |table: TableAddress, offset: u64| -> Result<u64, PageTableError> {
        let at = table.offset(offset).ok_or(TableMemoryError::BadAddress { at: table })?;
        Ok(mem.read_u64(at)?)
    };
    let leaf = |state: PteState, size: PageSize| -> Option<Translation> {
        match state {
            PteState::Valid(pte) => {
                let offset = va & (size.bytes() - 1);
                Some(Translation {
                    pa: pte.address.wrapping_add(offset),
                    aperture: pte.aperture,
                    page_va: va - offset,
                    page_size: size,
                    attrs: pte.attrs,
                })
            }
            _ => None,
        }
    };
    let corrupt = |table: TableAddress, offset: u64, error: FormatError| PageTableError::Corrupt {
        at: table.offset(offset).unwrap_or(table),
        error,
    };
    let mut table = pdb;
    for (index, desc) in levels.iter().enumerate() {
        let offset = desc.index(va) * desc.entry_size as u64;
        match desc.kind {
            LevelKind::Directory => {
                let raw = read(table, offset)?;
                if format.is_pte(raw) {
                    let Some(size) = format.level_page_size(index) else {
                        return Err(PageTableError::UnexpectedPte {
                            at: table.offset(offset).unwrap_or(table),
                            level: desc.name,
                        });
                    };
                    let state = format.decode_pte(raw).map_err(|e| corrupt(table, offset, e))?;
                    return Ok(leaf(state, size));
                }
                match format.decode_pde(raw).map_err(|e| corrupt(table, offset, e))? {
                    Some(next) => table = next,
                    None => return Ok(None),
                }
            }
            LevelKind::DualDirectory => {
                let low = read(table, offset)?;
                if format.is_pte(low) {
                    let state = format.decode_pte(low).map_err(|e| corrupt(table, offset, e))?;
                    return Ok(leaf(state, PageSize::Size2M));
                }
                let high = read(table, offset + 8)?;
                let dual = format.decode_dual_pde([low, high]).map_err(|e| corrupt(table, offset, e))?;
                return walk_dual(
                    format,
                    dual,
                    va,
                    &read,
                    &leaf,
                    &corrupt,
                    levels.get(index + 1),
                    levels.get(index + 2),
                );
            }
            // Page tables are reached only through the dual PDE.
            LevelKind::BigPageTable | LevelKind::SmallPageTable => return Ok(None),
        }
    }
    Ok(None)
}

/// The last step: a big PTE that is valid wins; an "unmapped" or sparse big PTE stops the walk;
/// a plainly invalid (or absent) one falls through to the 4K PTE ("if the big PTE is allocated,
/// it will be invalid so the 4k PTEs are active", `uvm_va_block.h`).
#[allow(clippy::too_many_arguments)]
fn walk_dual(
    format: &MmuFormat,
    dual: DualPde,
    va: u64,
    read: &impl Fn(TableAddress, u64) -> Result<u64, PageTableError>,
    leaf: &impl Fn(PteState, PageSize) -> Option<Translation>,
    corrupt: &impl Fn(TableAddress, u64, FormatError) -> PageTableError,
    big_level: Option<&super::format::Level>,
    small_level: Option<&super::format::Level>,
) -> Result<Option<Translation>, PageTableError> {
    if let (Some(big), Some(desc)) = (dual.big, big_level) {
        let offset = desc.index(va) * desc.entry_size as u64;
        let state = format.decode_pte(read(big, offset)?).map_err(|e| corrupt(big, offset, e))?;
        match state {
            PteState::Invalid => {}
            other => return Ok(leaf(other, PageSize::Size64K)),
        }
    }
    if let (Some(small), Some(desc)) = (dual.small, small_level) {
        let offset = desc.index(va) * desc.entry_size as u64;
        let state = format.decode_pte(read(small, offset)?).map_err(|e| corrupt(small, offset, e))?;
        return Ok(leaf(state, PageSize::Size4K));
    }
    Ok(None)
}

/// Writes `words` of entry `index` of `table` to memory and to its shadow.
fn store<M: PageTableMemory>(
    mem: &mut M,
    table: &mut Table,
    words_per_entry: usize,
    index: usize,
    words: &[u64],
) -> Result<(), PageTableError> {
    // High word first: for a dual PDE the low word holds IS_PTE, which decides how the MMU reads
    // the high one.
    for (w, &value) in words.iter().enumerate().rev() {
        let slot = index * words_per_entry + w;
        let at = table.addr.offset(slot as u64 * 8).ok_or(TableMemoryError::BadAddress { at: table.addr })?;
        mem.write_u64(at, value)?;
        if let Some(shadow) = table.words.get_mut(slot) {
            *shadow = value;
        }
    }
    Ok(())
}

/// Re-encodes the PDE of entry `index` of directory `table` from its children.
fn store_pde<M: PageTableMemory>(
    format: &MmuFormat,
    mem: &mut M,
    table: &mut Table,
    index: usize,
) -> Result<(), PageTableError> {
    let Some(desc) = format.levels().get(table.level) else {
        return Ok(());
    };
    let child_addr = |slot: usize| table.children.get(slot).and_then(|c| c.as_ref()).map(|c| c.addr);
    match desc.kind {
        LevelKind::DualDirectory => {
            let pde = DualPde { big: child_addr(index * 2), small: child_addr(index * 2 + 1) };
            let words = format.encode_dual_pde(pde)?;
            store(mem, table, 2, index, &words)
        }
        _ => {
            let word = format.encode_pde(child_addr(index))?;
            store(mem, table, 1, index, &[word])
        }
    }
}

fn write_pte_in<M: PageTableMemory>(
    format: &MmuFormat,
    mem: &mut M,
    table: &mut Table,
    target: usize,
    va: u64,
    raw: u64,
) -> Result<bool, PageTableError> {
    let levels = format.levels();
    let Some(desc) = levels.get(table.level).copied() else {
        return Ok(false);
    };
    let index = desc.index(va) as usize;
    let words = desc.words_per_entry();
    if table.level == target {
        let was_pte = table.words.get(index * words).is_some_and(|&w| format.is_pte(w));
        let mut entry = [0u64; 2];
        entry[0] = raw;
        store(mem, table, words, index, &entry[..words])?;
        if !was_pte {
            table.used += 1;
        }
        return Ok(false);
    }
    // The child on the way to `target`: small and big tables hang off the dual PDE's halves.
    let dual = desc.kind == LevelKind::DualDirectory;
    let child_level = if dual { target } else { table.level + 1 };
    let slot = if dual { index * 2 + usize::from(target == levels.len() - 1) } else { index };
    let mut added = false;
    if table.children.get(slot).is_some_and(|c| c.is_none()) {
        let child = PageTables::<M>::new_table(format, mem, child_level)?;
        if let Some(entry) = table.children.get_mut(slot) {
            *entry = Some(Box::new(child));
        }
        table.used += 1;
        if let Err(e) = store_pde(format, mem, table, index) {
            // Take the new (empty, never linked) table back out.
            if let Some(child) = table.children.get_mut(slot).and_then(Option::take) {
                table.used -= 1;
                mem.free_table(child.addr, levels.get(child_level).map_or(0, |l| l.table_bytes()));
            }
            return Err(e);
        }
        added = true;
    }
    match table.children.get_mut(slot).and_then(|c| c.as_deref_mut()) {
        Some(child) => Ok(write_pte_in(format, mem, child, target, va, raw)? | added),
        None => Ok(added),
    }
}

/// Returns whether `table` is now empty.
fn clear_pte_in<M: PageTableMemory>(
    format: &MmuFormat,
    mem: &mut M,
    table: &mut Table,
    target: usize,
    va: u64,
    unlinked: &mut Vec<(TableAddress, u64)>,
) -> Result<bool, PageTableError> {
    let levels = format.levels();
    let Some(desc) = levels.get(table.level).copied() else {
        return Ok(false);
    };
    let index = desc.index(va) as usize;
    let words = desc.words_per_entry();
    if table.level == target {
        if table.words.get(index * words).is_some_and(|&w| format.is_pte(w)) {
            store(mem, table, words, index, &[0u64; 2][..words])?;
            table.used = table.used.saturating_sub(1);
        }
        return Ok(table.used == 0);
    }
    let dual = desc.kind == LevelKind::DualDirectory;
    let slot = if dual { index * 2 + usize::from(target == levels.len() - 1) } else { index };
    let Some(child) = table.children.get_mut(slot).and_then(|c| c.as_deref_mut()) else {
        return Ok(table.used == 0);
    };
    if clear_pte_in(format, mem, child, target, va, unlinked)? {
        if let Some(child) = table.children.get_mut(slot).and_then(Option::take) {
            table.used = table.used.saturating_sub(1);
            unlinked.push((child.addr, levels.get(child.level).map_or(0, |l| l.table_bytes())));
        }
        store_pde(format, mem, table, index)?;
    }
    // The root stays even when empty: it is the PDB.
    Ok(table.used == 0 && table.level != 0)
}
