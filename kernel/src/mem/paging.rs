//! 4-level paging (Intel SDM vol. 3A, section 4.5 "4-Level Paging"): the kernel's own page
//! tables, all RAM mapped at [`PHYS_OFFSET`], and an API that maps MMIO with the right memory
//! type through the PAT (section 11.12 "Page Attribute Table (PAT)"; AMD APM vol. 2, section 7.8
//! "Page-Attribute Table Mechanism"). Section and table numbers are those of SDM editions up to
//! 2022 (order number 253668); later editions moved chapter 11 "Memory Cache Control" to 13.
//!
//! # PAT layout
//! IA32_PAT is MSR 0x277 (section 11.12.2 "IA32_PAT MSR"; SDM vol. 4, table 2-2). Memory type
//! encodings are those of table 11-10: UC 00h, WC 01h, WT 04h, WP 05h, WB 06h, UC- 07h.
//! Power-on/reset value (table 11-12): PA0 WB, PA1 WT, PA2 UC-, PA3 UC, PA4..PA7 the same again
//! (0x0007_0406_0007_0406). The kernel programs:
//!
//! | entry | PAT:PCD:PWT | power-on | here | used for |
//! |-------|-------------|----------|------|----------|
//! | PA0   | 0 0 0       | WB  06h  | WB   | RAM, the boot identity map (unchanged) |
//! | PA1   | 0 0 1       | WT  04h  | **WC 01h** | prefetchable BARs ([`CacheType::WriteCombining`]) |
//! | PA2   | 0 1 0       | UC- 07h  | UC-  | unchanged |
//! | PA3   | 0 1 1       | UC  00h  | UC   | device registers ([`CacheType::Uncached`]) (unchanged) |
//! | PA4-7 | 1 x x       | as PA0-3 | as PA0-3 | never selected by the kernel |
//!
//! so the value is 0x0007_0106_0007_0106: only PA1 (and its copy PA5) differ from power-on.
//! No mapping uses PA1/PA5 when it changes (the boot identity map selects PA0 only: its PDEs
//! are `0x83`, PWT = PCD = PAT = 0), so no cached line or TLB entry has the old meaning and the
//! cache-flush procedure of section 11.12.4 "Programming the PAT" has nothing to flush.
//! WC sits in PA1 rather than PA4..PA7 so that it needs no PAT bit, whose position differs
//! between 4 KiB PTEs (bit 7) and 2 MiB/1 GiB entries (bit 12, where bit 7 is the page-size
//! bit) (section 4.5, tables 4-15, 4-17 and 4-19; table 11-11 "Selection of PAT Entries with
//! PAT, PCD, and PWT Flags"); [`cache_bits`] and [`pat_index`] still place and read that bit
//! by page size, so the encoding stays right if the layout ever uses PA4..PA7.
//!
//! PAT support is CPUID.01H:EDX bit 16 (section 11.12.1 "Detecting Support for the PAT
//! Feature"). Without it the MSR is not written and write-combined mappings are refused
//! ([`MapError::NoWriteCombining`]) rather than silently made something else.

use super::{frames, LARGE_PAGE_SIZE, PAGE_SIZE, PHYS_OFFSET};
use bootloader_api::info::{MemoryRegion, MemoryRegionKind};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Mutex;

const PRESENT: u64 = 1 << 0;
const WRITABLE: u64 = 1 << 1;
/// Page-level write-through: bit 0 of the PAT index.
const PWT: u64 = 1 << 3;
/// Page-level cache disable: bit 1 of the PAT index.
const PCD: u64 = 1 << 4;
/// Page size (in a PDPTE/PDE), and in a 4 KiB PTE the PAT bit (bit 2 of the PAT index).
const HUGE: u64 = 1 << 7;
const PAT_4K: u64 = 1 << 7;
/// The PAT bit in a PDE mapping a 2 MiB page or a PDPTE mapping a 1 GiB page.
const PAT_LARGE: u64 = 1 << 12;
const GLOBAL: u64 = 1 << 8;
const NO_EXECUTE: u64 = 1 << 63;
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

const IA32_PAT: u32 = 0x277;
/// CPUID.01H:EDX.PAT.
const CPUID_1_EDX_PAT: u32 = 1 << 16;

/// IA32_PAT memory type encodings (SDM vol. 3A, table 11-10).
pub mod pat_type {
    pub const UC: u8 = 0x00;
    pub const WC: u8 = 0x01;
    pub const WT: u8 = 0x04;
    pub const WB: u8 = 0x06;
    pub const UC_MINUS: u8 = 0x07;
}
use pat_type::{UC, UC_MINUS, WB, WC, WT};

/// PA0..PA7 after power-up or reset (SDM vol. 3A, table 11-12).
pub const POWER_ON_PAT: [u8; 8] = [WB, WT, UC_MINUS, UC, WB, WT, UC_MINUS, UC];
/// PA0..PA7 as the kernel programs them: the table at the top of this file.
pub const PAT_LAYOUT: [u8; 8] = [WB, WC, UC_MINUS, UC, WB, WC, UC_MINUS, UC];

/// IA32_PAT holding `entries`: PA<i> in byte i (section 11.12.2, figure 11-9).
pub const fn pat_value(entries: [u8; 8]) -> u64 {
    let mut value = 0;
    let mut i = 0;
    while i < 8 {
        value |= (entries[i] as u64) << (8 * i);
        i += 1;
    }
    value
}

const PAT_VALUE: u64 = pat_value(PAT_LAYOUT);
const _: () = assert!(PAT_VALUE == 0x0007_0106_0007_0106 && pat_value(POWER_ON_PAT) == 0x0007_0406_0007_0406);
// Each CacheType's PAT entry holds that type.
const _: () = {
    assert!(PAT_LAYOUT[CacheType::WriteBack.pat_index() as usize] == WB);
    assert!(PAT_LAYOUT[CacheType::WriteCombining.pat_index() as usize] == WC);
    assert!(PAT_LAYOUT[CacheType::UncachedMinus.pat_index() as usize] == UC_MINUS);
    assert!(PAT_LAYOUT[CacheType::Uncached.pat_index() as usize] == UC);
};

/// Virtual window for MMIO and other on-demand mappings (PML4 slot 384).
/// The window where managed (unified) memory lives on the CPU side: pages come and go as
/// `uvm` migrates them ([`map_managed`], [`unmap_managed`]); a touch of an absent page is a
/// page fault that the managed-memory service resolves.
pub const MANAGED_BASE: u64 = 0xffff_b000_0000_0000;
pub const MANAGED_LIMIT: u64 = 0xffff_b100_0000_0000;
const _: () = assert!(
    MANAGED_LIMIT <= MMIO_BASE && MANAGED_BASE >= HEAP_BASE + (1 << 44),
    "managed window overlaps the heap or MMIO"
);
const MMIO_BASE: u64 = 0xffff_c000_0000_0000;
const MMIO_LIMIT: u64 = 0xffff_d000_0000_0000;
/// Virtual window for the heap (PML4 slot 320).
pub const HEAP_BASE: u64 = 0xffff_a000_0000_0000;

static OFFSET: AtomicU64 = AtomicU64::new(0);
static ROOT: AtomicU64 = AtomicU64::new(0);
static MMIO_NEXT: Mutex<u64> = Mutex::new(MMIO_BASE);
static MAP_LOCK: Mutex<()> = Mutex::new(());
/// Whether IA32_PAT holds [`PAT_VALUE`] (the CPU has a PAT and `init` programmed it).
static PAT_PROGRAMMED: AtomicBool = AtomicBool::new(false);

/// The physical ranges of RAM the kernel owns (usable RAM, which the frame allocator hands out,
/// and the loader's memory: the kernel image, its stack, the boot information), as `init`
/// found them in the memory map. Rust objects live there, so device and firmware views
/// ([`map_mmio`], [`super::firmware`]) refuse these ranges.
struct KernelRam {
    ranges: [(u64, u64); MAX_KERNEL_RAM_RANGES],
    count: usize,
    /// More ranges than fit: every range is then treated as the kernel's.
    overflow: bool,
}
const MAX_KERNEL_RAM_RANGES: usize = 256;
static KERNEL_RAM: Mutex<KernelRam> =
    Mutex::new(KernelRam { ranges: [(0, 0); MAX_KERNEL_RAM_RANGES], count: 0, overflow: false });

fn record_kernel_ram(regions: &[MemoryRegion]) {
    let mut ram = KERNEL_RAM.lock();
    let owned = |k: MemoryRegionKind| matches!(k, MemoryRegionKind::Usable | MemoryRegionKind::Bootloader);
    for r in regions.iter().filter(|r| owned(r.kind) && r.end > r.start) {
        let n = ram.count;
        if n > 0 && ram.ranges[n - 1].1 == r.start {
            ram.ranges[n - 1].1 = r.end;
        } else if n == MAX_KERNEL_RAM_RANGES {
            ram.overflow = true;
        } else {
            ram.ranges[n] = (r.start, r.end);
            ram.count += 1;
        }
    }
    if ram.overflow {
        log::error!(target: "mem", "more than {MAX_KERNEL_RAM_RANGES} kernel RAM ranges: no MMIO or firmware mapping will be made");
    }
}

/// Whether `[start, end)` overlaps RAM the kernel owns (see [`KernelRam`]): what a device view
/// must never cover.
pub fn overlaps_kernel_ram(start: u64, end: u64) -> bool {
    let ram = KERNEL_RAM.lock();
    ram.overflow || ram.ranges[..ram.count].iter().any(|&(s, e)| start < e && s < end)
}

/// Whether `[start, end)` may hold memory the kernel writes as Rust objects: the RAM the frame
/// allocator hands out (frames, page tables, the heap, DMA memory) and the kernel image with its
/// boot stack. What a read of firmware tables must never cover. The rest of the loader's memory
/// (its information structures, where Multiboot2 keeps a copy of the RSDP, and the modules) is
/// only ever read, and the real-mode area below 1 MiB is the firmware's.
pub fn overlaps_kernel_objects(start: u64, end: u64) -> bool {
    let image = crate::arch::handoff::layout();
    let overlaps = |s: u64, e: u64| start < e && s < end;
    overlaps(image.kernel_start, image.kernel_end)
        || overlaps(image.stack_bottom, image.stack_top)
        || frames::overlaps_allocatable(start, end)
}

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
    /// The PAT entry that holds this type in the layout programmed here.
    pub const fn pat_index(self) -> u8 {
        match self {
            CacheType::WriteBack => 0,
            CacheType::WriteCombining => 1,
            CacheType::UncachedMinus => 2,
            CacheType::Uncached => 3,
        }
    }
    /// The type PAT entry `index` (0..7) holds in the layout programmed here.
    pub const fn from_pat_index(index: u8) -> Self {
        match index & 3 {
            0 => CacheType::WriteBack,
            1 => CacheType::WriteCombining,
            2 => CacheType::UncachedMinus,
            _ => CacheType::Uncached,
        }
    }
}

/// The PWT/PCD/PAT bits of a leaf entry mapping a page of `page_size` bytes that selects PAT
/// entry `index` (SDM vol. 3A, table 11-11: index = PAT*4 + PCD*2 + PWT).
pub const fn cache_bits(index: u8, page_size: u64) -> u64 {
    let pat = if page_size == PAGE_SIZE { PAT_4K } else { PAT_LARGE };
    (if index & 1 != 0 { PWT } else { 0 })
        | (if index & 2 != 0 { PCD } else { 0 })
        | (if index & 4 != 0 { pat } else { 0 })
}

/// The PAT entry a leaf entry of a `page_size` page selects (inverse of [`cache_bits`]).
pub const fn pat_index(entry: u64, page_size: u64) -> u8 {
    let pat = if page_size == PAGE_SIZE { PAT_4K } else { PAT_LARGE };
    (entry & PWT != 0) as u8 | ((entry & PCD != 0) as u8) << 1 | ((entry & pat != 0) as u8) << 2
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapError {
    OutOfFrames,
    OutOfVirtualSpace {
        size: u64,
    },
    AlreadyMapped {
        virt: u64,
    },
    /// Write-combining was asked for on a CPU without a PAT.
    NoWriteCombining,
    /// A device mapping of RAM the kernel owns (usable or loader memory) was asked for.
    KernelRam {
        phys: u64,
        len: u64,
    },
}

impl core::fmt::Display for MapError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            MapError::OutOfFrames => write!(f, "out of physical frames for page tables"),
            MapError::OutOfVirtualSpace { size } => write!(f, "MMIO window exhausted mapping {size:#x} bytes"),
            MapError::AlreadyMapped { virt } => write!(f, "{virt:#x} is already mapped"),
            MapError::NoWriteCombining => write!(f, "write-combining needs a PAT, and CPUID.01H:EDX.PAT is clear"),
            MapError::KernelRam { phys, len } => {
                write!(f, "{len:#x} bytes at {phys:#x} are the kernel's RAM, not device memory")
            }
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

/// Maps one page (4 KiB, or 2 MiB when `large`) in the table rooted at `root`, selecting PAT
/// entry `pat` with the bits where that page size keeps them.
fn map_page(root: u64, virt: u64, phys: u64, large: bool, flags: u64, pat: u8) -> Result<(), MapError> {
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
            entry.write_volatile(phys | flags | cache_bits(pat, LARGE_PAGE_SIZE) | HUGE | PRESENT);
        } else {
            let pt = next_table(pd, i2).map_err(|e| match e {
                MapError::AlreadyMapped { .. } => MapError::AlreadyMapped { virt },
                e => e,
            })?;
            let entry = table(pt).add(i1);
            if entry.read_volatile() & PRESENT != 0 {
                return Err(MapError::AlreadyMapped { virt });
            }
            entry.write_volatile(phys | flags | cache_bits(pat, PAGE_SIZE) | PRESENT);
        }
    }
    Ok(())
}

/// Maps `[phys, phys+len)` at `virt` with 2 MiB pages where both addresses allow it.
fn map_range(root: u64, virt: u64, phys: u64, len: u64, flags: u64, cache: CacheType) -> Result<(), MapError> {
    let mut off = 0;
    while off < len {
        let (v, p) = (virt + off, phys + off);
        let large = v % LARGE_PAGE_SIZE == 0 && p % LARGE_PAGE_SIZE == 0 && len - off >= LARGE_PAGE_SIZE;
        map_page(root, v, p, large, flags, cache.pat_index())?;
        off += if large { LARGE_PAGE_SIZE } else { PAGE_SIZE };
    }
    Ok(())
}

fn is_ram_like(kind: MemoryRegionKind) -> bool {
    // E820 type 3 (ACPI reclaimable) and 4 (ACPI NVS) hold tables we read.
    matches!(
        kind,
        MemoryRegionKind::Usable
            | MemoryRegionKind::Bootloader
            | MemoryRegionKind::UnknownBios(3)
            | MemoryRegionKind::UnknownBios(4)
    )
}

/// Builds the kernel's page tables and switches to them. RAM-like regions are mapped at
/// [`PHYS_OFFSET`] and, below 4 GiB, also at their physical address (the kernel image, its
/// stack and the loader's structures stay where the boot identity map had them).
pub fn init(regions: &[MemoryRegion]) -> Result<(), MapError> {
    record_kernel_ram(regions);
    if pat_supported() {
        // SAFETY: IA32_PAT exists (CPUID.01H:EDX.PAT); the value holds only defined encodings
        // (reserved ones #GP); it changes only PA1/PA5, which no mapping selects (see the
        // layout at the top of this file).
        unsafe { crate::arch::wrmsr(IA32_PAT, PAT_VALUE) };
        PAT_PROGRAMMED.store(crate::arch::rdmsr(IA32_PAT) == PAT_VALUE, Ordering::Relaxed);
    }
    let _guard = MAP_LOCK.lock();
    let root = frames::alloc().ok_or(MapError::OutOfFrames)?;
    let map_both = |start: u64, end: u64| -> Result<(), MapError> {
        let start = start & !(PAGE_SIZE - 1);
        let end = (end + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
        map_range(root, PHYS_OFFSET + start, start, end - start, WRITABLE | NO_EXECUTE | GLOBAL, CacheType::WriteBack)?;
        if start < (4 << 30) {
            let end = end.min(4 << 30);
            // Executable: the kernel image is in here.
            map_range(root, start, start, end - start, WRITABLE | GLOBAL, CacheType::WriteBack)?;
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
/// A write-combined request fails with [`MapError::NoWriteCombining`] when the PAT does not
/// hold the kernel's layout; a range that touches RAM the kernel owns fails with
/// [`MapError::KernelRam`] (a device view of it would alias Rust objects).
pub fn map_mmio(phys: u64, len: u64, cache: CacheType) -> Result<u64, MapError> {
    if cache == CacheType::WriteCombining && !PAT_PROGRAMMED.load(Ordering::Relaxed) {
        return Err(MapError::NoWriteCombining);
    }
    let offset = phys & (PAGE_SIZE - 1);
    let start = phys - offset;
    let size = (offset + len.max(1) + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
    let end = start.checked_add(size).ok_or(MapError::OutOfVirtualSpace { size })?;
    if overlaps_kernel_ram(start, end) {
        return Err(MapError::KernelRam { phys, len });
    }
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
    map_range(root, virt, start, size, WRITABLE | NO_EXECUTE, cache)?;
    Ok(virt + offset)
}

/// Maps fresh zeroed frames at `[virt, virt+len)` (the heap uses this to grow).
pub fn map_fresh(virt: u64, len: u64) -> Result<(), MapError> {
    let _guard = MAP_LOCK.lock();
    let root = ROOT.load(Ordering::Relaxed);
    let mut off = 0;
    while off < len {
        let frame = frames::alloc().ok_or(MapError::OutOfFrames)?;
        map_page(root, virt + off, frame, false, WRITABLE | NO_EXECUTE, CacheType::WriteBack.pat_index())?;
        invlpg(virt + off);
        off += PAGE_SIZE;
    }
    Ok(())
}

/// Maps the 4 KiB frame `phys` at `virt` in the managed window (write-back, not executable,
/// read-only unless `writable`).
pub fn map_managed(virt: u64, phys: u64, writable: bool) -> Result<(), MapError> {
    if !(MANAGED_BASE..MANAGED_LIMIT).contains(&virt)
        || !virt.is_multiple_of(PAGE_SIZE)
        || !phys.is_multiple_of(PAGE_SIZE)
    {
        return Err(MapError::OutOfVirtualSpace { size: PAGE_SIZE });
    }
    let _guard = MAP_LOCK.lock();
    let root = ROOT.load(Ordering::Relaxed);
    let flags = NO_EXECUTE | if writable { WRITABLE } else { 0 };
    map_page(root, virt, phys, false, flags, CacheType::WriteBack.pat_index())?;
    // A not-present entry is never cached, but a read-only one that was just upgraded may be.
    invlpg(virt);
    Ok(())
}

/// Removes the managed page at `virt` and invalidates this CPU's TLB entry for it; returns the
/// frame it mapped. (With one CPU running, no shootdown is needed; SMP will add one.)
pub fn unmap_managed(virt: u64) -> Option<u64> {
    if !(MANAGED_BASE..MANAGED_LIMIT).contains(&virt) {
        return None;
    }
    let _guard = MAP_LOCK.lock();
    let root = ROOT.load(Ordering::Relaxed);
    let [i4, i3, i2, i1] = indices(virt);
    // SAFETY: walks and edits page-table frames, which are ours and mapped; MAP_LOCK serialises
    // their updates; only a 4 KiB leaf in the managed window is cleared.
    let phys = unsafe {
        let mut t = root;
        for i in [i4, i3, i2] {
            let e = table(t).add(i).read_volatile();
            if e & PRESENT == 0 || e & HUGE != 0 {
                return None;
            }
            t = e & ADDR_MASK;
        }
        let entry = table(t).add(i1);
        let e = entry.read_volatile();
        if e & PRESENT == 0 {
            return None;
        }
        entry.write_volatile(0);
        e & ADDR_MASK
    };
    invlpg(virt);
    Some(phys)
}

/// Copies one 4 KiB frame to another through the physical-memory map.
pub fn copy_frame(dst: u64, src: u64) {
    let (d, s) = (phys_to_virt(dst & !(PAGE_SIZE - 1)), phys_to_virt(src & !(PAGE_SIZE - 1)));
    if d == s {
        return;
    }
    // SAFETY: both are whole frames of RAM, mapped at PHYS_OFFSET, distinct (checked), and
    // owned by the caller (managed-memory pages held by uvm).
    unsafe { core::ptr::copy_nonoverlapping(s as *const u8, d as *mut u8, PAGE_SIZE as usize) };
}

/// Zero-fills one 4 KiB frame.
pub fn zero_frame(frame: u64) {
    // SAFETY: a whole frame of RAM, mapped at PHYS_OFFSET, owned by the caller.
    unsafe { core::ptr::write_bytes(phys_to_virt(frame & !(PAGE_SIZE - 1)) as *mut u8, 0, PAGE_SIZE as usize) };
}

/// The leaf entry that maps a virtual address, as the page tables hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaf {
    /// The raw entry (PTE, or PDE/PDPTE with the page-size bit).
    pub entry: u64,
    /// Bytes the entry maps: 4 KiB, 2 MiB or 1 GiB.
    pub page_size: u64,
}

impl Leaf {
    pub fn pat_index(&self) -> u8 {
        pat_index(self.entry, self.page_size)
    }
    pub fn cache_type(&self) -> CacheType {
        CacheType::from_pat_index(self.pat_index())
    }
    /// The physical address of `virt`, which this entry maps.
    pub fn phys(&self, virt: u64) -> u64 {
        let mask = self.page_size - 1;
        // In large entries bit 12 is the PAT bit, not address.
        (self.entry & ADDR_MASK & !mask) | (virt & mask)
    }
}

/// Walks the page tables for `virt` to the entry that maps it.
pub fn leaf(virt: u64) -> Option<Leaf> {
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
            return Some(Leaf { entry: e3, page_size: 1 << 30 });
        }
        let e2 = table(e3 & ADDR_MASK).add(i2).read_volatile();
        if e2 & PRESENT == 0 {
            return None;
        }
        if e2 & HUGE != 0 {
            return Some(Leaf { entry: e2, page_size: LARGE_PAGE_SIZE });
        }
        let e1 = table(e2 & ADDR_MASK).add(i1).read_volatile();
        if e1 & PRESENT == 0 {
            return None;
        }
        Some(Leaf { entry: e1, page_size: PAGE_SIZE })
    }
}

/// Walks the page tables for `virt`: (physical address, cache type, page size).
pub fn translate(virt: u64) -> Option<(u64, CacheType, u64)> {
    let l = leaf(virt)?;
    Some((l.phys(virt), l.cache_type(), l.page_size))
}

/// Whether the CPU has a PAT (CPUID.01H:EDX bit 16).
pub fn pat_supported() -> bool {
    crate::arch::cpuid(1, 0).edx & CPUID_1_EDX_PAT != 0
}

/// Whether IA32_PAT holds the kernel's layout (read back after `init` wrote it).
pub fn pat_programmed() -> bool {
    PAT_PROGRAMMED.load(Ordering::Relaxed)
}

/// IA32_PAT as read now. Only meaningful where [`pat_supported`].
pub fn pat_msr() -> u64 {
    crate::arch::rdmsr(IA32_PAT)
}

pub const EXPECTED_PAT: u64 = PAT_VALUE;
