//! 4-level paging (Intel SDM vol. 3A, section 4.5 "4-Level Paging"): the kernel's own page
//! tables, all RAM mapped at [`PHYS_OFFSET`], and an API that maps MMIO with the right memory
//! type through the PAT (section 11.12 "Page Attribute Table").
//!
//! PAT layout programmed here (IA32_PAT, MSR 0x277; type encodings from table 11-10):
//! PA0 WB (06), PA1 WC (01), PA2 UC- (07), PA3 UC (00), PA4..PA7 repeat PA0..PA3.
//! A PTE selects PAT entry PAT:PCD:PWT, so WB = none, WC = PWT, UC- = PCD, UC = PCD|PWT.

use super::{frames, LARGE_PAGE_SIZE, PAGE_SIZE, PHYS_OFFSET};
use bootloader_api::info::{MemoryRegion, MemoryRegionKind};
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;

const PRESENT: u64 = 1 << 0;
const WRITABLE: u64 = 1 << 1;
const PWT: u64 = 1 << 3;
const PCD: u64 = 1 << 4;
const HUGE: u64 = 1 << 7;
const GLOBAL: u64 = 1 << 8;
const NO_EXECUTE: u64 = 1 << 63;
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

const IA32_PAT: u32 = 0x277;
const PAT_VALUE: u64 = 0x0007_0106_0007_0106;

/// Virtual window for MMIO and other on-demand mappings (PML4 slot 384).
const MMIO_BASE: u64 = 0xffff_c000_0000_0000;
const MMIO_LIMIT: u64 = 0xffff_d000_0000_0000;
/// Virtual window for the heap (PML4 slot 320).
pub const HEAP_BASE: u64 = 0xffff_a000_0000_0000;

static OFFSET: AtomicU64 = AtomicU64::new(0);
static ROOT: AtomicU64 = AtomicU64::new(0);
static MMIO_NEXT: Mutex<u64> = Mutex::new(MMIO_BASE);
static MAP_LOCK: Mutex<()> = Mutex::new(());

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheType {
    WriteBack,
    WriteCombining,
    /// UC-: uncached, but an MTRR may make it WC.
    UncachedMinus,
    /// Strong uncached: device registers.
    Uncached,
}

impl CacheType {
    const fn pte_bits(self) -> u64 {
        match self {
            CacheType::WriteBack => 0,
            CacheType::WriteCombining => PWT,
            CacheType::UncachedMinus => PCD,
            CacheType::Uncached => PCD | PWT,
        }
    }
    fn from_pte(pte: u64) -> Self {
        match (pte & PCD != 0, pte & PWT != 0) {
            (false, false) => CacheType::WriteBack,
            (false, true) => CacheType::WriteCombining,
            (true, false) => CacheType::UncachedMinus,
            (true, true) => CacheType::Uncached,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    OutOfFrames,
    OutOfVirtualSpace { size: u64 },
    AlreadyMapped { virt: u64 },
}

impl core::fmt::Display for MapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MapError::OutOfFrames => write!(f, "out of physical frames for page tables"),
            MapError::OutOfVirtualSpace { size } => write!(f, "MMIO window exhausted mapping {size:#x} bytes"),
            MapError::AlreadyMapped { virt } => write!(f, "{virt:#x} is already mapped"),
        }
    }
}

pub fn phys_to_virt(phys: u64) -> u64 {
    phys + OFFSET.load(Ordering::Relaxed)
}

fn table(phys: u64) -> *mut u64 {
    phys_to_virt(phys) as *mut u64
}

/// Returns the next-level table for `entry_index` in `table_phys`, creating it if absent.
fn next_table(table_phys: u64, index: usize) -> Result<u64, MapError> {
    // SAFETY: page-table frames are ours and mapped; MAP_LOCK serialises their updates.
    unsafe {
        let entry = table(table_phys).add(index);
        let value = entry.read_volatile();
        if value & PRESENT != 0 {
            if value & HUGE != 0 {
                return Err(MapError::AlreadyMapped { virt: 0 });
            }
            return Ok(value & ADDR_MASK);
        }
        let frame = frames::alloc().ok_or(MapError::OutOfFrames)?;
        entry.write_volatile(frame | PRESENT | WRITABLE);
        Ok(frame)
    }
}

fn indices(virt: u64) -> [usize; 4] {
    [(virt >> 39) as usize & 511, (virt >> 30) as usize & 511, (virt >> 21) as usize & 511, (virt >> 12) as usize & 511]
}

/// Maps one page (4 KiB, or 2 MiB when `large`) in the table rooted at `root`.
fn map_page(root: u64, virt: u64, phys: u64, large: bool, flags: u64) -> Result<(), MapError> {
    let [i4, i3, i2, i1] = indices(virt);
    let pdpt = next_table(root, i4)?;
    let pd = next_table(pdpt, i3)?;
    // SAFETY: as in next_table.
    unsafe {
        if large {
            let entry = table(pd).add(i2);
            if entry.read_volatile() & PRESENT != 0 {
                return Err(MapError::AlreadyMapped { virt });
            }
            // For 2 MiB pages the PAT bit is bit 12; we never set it (PAT entries 0..3).
            entry.write_volatile(phys | flags | HUGE | PRESENT);
        } else {
            let pt = next_table(pd, i2).map_err(|e| match e {
                MapError::AlreadyMapped { .. } => MapError::AlreadyMapped { virt },
                e => e,
            })?;
            let entry = table(pt).add(i1);
            if entry.read_volatile() & PRESENT != 0 {
                return Err(MapError::AlreadyMapped { virt });
            }
            entry.write_volatile(phys | flags | PRESENT);
        }
    }
    Ok(())
}

/// Maps `[phys, phys+len)` at `virt` with 2 MiB pages where both addresses allow it.
fn map_range(root: u64, virt: u64, phys: u64, len: u64, flags: u64) -> Result<(), MapError> {
    let mut off = 0;
    while off < len {
        let (v, p) = (virt + off, phys + off);
        let large = v % LARGE_PAGE_SIZE == 0 && p % LARGE_PAGE_SIZE == 0 && len - off >= LARGE_PAGE_SIZE;
        map_page(root, v, p, large, flags)?;
        off += if large { LARGE_PAGE_SIZE } else { PAGE_SIZE };
    }
    Ok(())
}

fn is_ram_like(kind: MemoryRegionKind) -> bool {
    // E820 type 3 (ACPI reclaimable) and 4 (ACPI NVS) hold tables we read.
    matches!(kind, MemoryRegionKind::Usable | MemoryRegionKind::Bootloader | MemoryRegionKind::UnknownBios(3) | MemoryRegionKind::UnknownBios(4))
}

/// Builds the kernel's page tables and switches to them. RAM-like regions are mapped at
/// [`PHYS_OFFSET`] and, below 4 GiB, also at their physical address (the kernel image, its
/// stack and the loader's structures stay where the boot identity map had them).
pub fn init(regions: &[MemoryRegion]) -> Result<(), MapError> {
    // SAFETY: programs the PAT with the layout documented at the top of this file; the boot
    // identity map uses PAT entry 0 (WB), which keeps its meaning.
    unsafe { crate::arch::wrmsr(IA32_PAT, PAT_VALUE) };
    let _guard = MAP_LOCK.lock();
    let root = frames::alloc().ok_or(MapError::OutOfFrames)?;
    let map_both = |start: u64, end: u64| -> Result<(), MapError> {
        let start = start & !(PAGE_SIZE - 1);
        let end = (end + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
        map_range(root, PHYS_OFFSET + start, start, end - start, WRITABLE | NO_EXECUTE | GLOBAL)?;
        if start < (4 << 30) {
            let end = end.min(4 << 30);
            // Executable: the kernel image is in here.
            map_range(root, start, start, end - start, WRITABLE | GLOBAL)?;
        }
        Ok(())
    };
    // The real-mode area (BIOS data, EBDA, option ROMs where the RSDP may be).
    map_both(0, 0x10_0000)?;
    for r in regions.iter().filter(|r| is_ram_like(r.kind) && r.end > 0x10_0000) {
        map_both(r.start.max(0x10_0000), r.end)?;
    }
    // SAFETY: the new tables map everything the kernel currently uses (its image, stack,
    // statics, the loader structures and all frames) at the same addresses.
    unsafe { core::arch::asm!("mov cr3, {}", in(reg) root, options(nostack, preserves_flags)) };
    ROOT.store(root, Ordering::Relaxed);
    OFFSET.store(PHYS_OFFSET, Ordering::Relaxed);
    Ok(())
}

fn invlpg(virt: u64) {
    // SAFETY: invalidating a TLB entry is always sound.
    unsafe { core::arch::asm!("invlpg [{}]", in(reg) virt, options(nostack, preserves_flags)) };
}

/// Maps `len` bytes of device memory at `phys` with `cache`, returning the virtual address of
/// `phys` (which need not be page-aligned). Mappings are permanent.
pub fn map_mmio(phys: u64, len: u64, cache: CacheType) -> Result<u64, MapError> {
    let offset = phys & (PAGE_SIZE - 1);
    let start = phys - offset;
    let size = (offset + len.max(1) + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
    // Large mappings are placed 2 MiB-aligned (virtually and physically congruent) so they
    // use 2 MiB pages.
    let align = if size >= LARGE_PAGE_SIZE { LARGE_PAGE_SIZE } else { PAGE_SIZE };
    let virt = {
        let mut next = MMIO_NEXT.lock();
        let mut v = (*next + align - 1) & !(align - 1);
        if align == LARGE_PAGE_SIZE {
            v += start % LARGE_PAGE_SIZE;
        }
        let end = v.checked_add(size).filter(|e| *e <= MMIO_LIMIT).ok_or(MapError::OutOfVirtualSpace { size })?;
        *next = end;
        v
    };
    let _guard = MAP_LOCK.lock();
    let root = ROOT.load(Ordering::Relaxed);
    map_range(root, virt, start, size, WRITABLE | NO_EXECUTE | cache.pte_bits())?;
    Ok(virt + offset)
}

/// Maps fresh zeroed frames at `[virt, virt+len)` (the heap uses this to grow).
pub fn map_fresh(virt: u64, len: u64) -> Result<(), MapError> {
    let _guard = MAP_LOCK.lock();
    let root = ROOT.load(Ordering::Relaxed);
    let mut off = 0;
    while off < len {
        let frame = frames::alloc().ok_or(MapError::OutOfFrames)?;
        map_page(root, virt + off, frame, false, WRITABLE | NO_EXECUTE)?;
        invlpg(virt + off);
        off += PAGE_SIZE;
    }
    Ok(())
}

/// Walks the page tables for `virt`: (physical address, cache type, page size).
pub fn translate(virt: u64) -> Option<(u64, CacheType, u64)> {
    let root = ROOT.load(Ordering::Relaxed);
    let [i4, i3, i2, i1] = indices(virt);
    // SAFETY: reads page-table frames, which are ours and mapped.
    unsafe {
        let e4 = table(root).add(i4).read_volatile();
        if e4 & PRESENT == 0 {
            return None;
        }
        let e3 = table(e4 & ADDR_MASK).add(i3).read_volatile();
        if e3 & PRESENT == 0 {
            return None;
        }
        if e3 & HUGE != 0 {
            return Some(((e3 & ADDR_MASK & !0x3fff_ffff) | (virt & 0x3fff_ffff), CacheType::from_pte(e3), 1 << 30));
        }
        let e2 = table(e3 & ADDR_MASK).add(i2).read_volatile();
        if e2 & PRESENT == 0 {
            return None;
        }
        if e2 & HUGE != 0 {
            return Some(((e2 & ADDR_MASK & !0x1f_ffff) | (virt & 0x1f_ffff), CacheType::from_pte(e2), LARGE_PAGE_SIZE));
        }
        let e1 = table(e2 & ADDR_MASK).add(i1).read_volatile();
        if e1 & PRESENT == 0 {
            return None;
        }
        Some(((e1 & ADDR_MASK) | (virt & 0xfff), CacheType::from_pte(e1), PAGE_SIZE))
    }
}

pub fn pat_msr() -> u64 {
    crate::arch::rdmsr(IA32_PAT)
}

pub const EXPECTED_PAT: u64 = PAT_VALUE;
