//! GPU page-table formats: the level layout (which VA bits each level indexes, entry and table
//! sizes) and the PDE/PTE encodings of MMU format version 2 (Pascal to Ada) and version 3
//! (Hopper, Blackwell).
//!
//! Layouts follow RM's `kgmmuFmtInitLevels_GP10X`/`_GA10X`/`_GH10X`
//! (`src/nvidia/src/kernel/gpu/mmu/arch/*/kern_gmmu_fmt_*.c`) and UVM's `uvm_pascal_mmu.c`,
//! `uvm_ampere_mmu.c` and `uvm_hopper_mmu.c` (index bits, 256-byte 64K page tables, 4 KiB-aligned
//! directories). Encodings use only the fields of [`crate::hw::mmu`], which the conformance test
//! checks against `dev_mmu.h`; which values go in them (volatile PDEs, the "unmapped" big PTE,
//! the v3 PCF choice) follows UVM's `make_pde_*`/`make_pte_*`.

use core::fmt;

use crate::hal::{Family, MmuVersion};
use crate::hw::mmu::{ver2 as v2, ver3 as v3, EntryField};

/// Sizes of the pages a PTE maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PageSize {
    /// 4 KiB: a PTE in a small page table.
    Size4K,
    /// 64 KiB ("big page"): a PTE in a big page table.
    Size64K,
    /// 2 MiB: a PTE in place of a dual PDE at PD0.
    Size2M,
    /// 512 MiB: a PTE in place of a PDE at PD1 (Ampere and later).
    Size512M,
}

impl PageSize {
    /// Every size, smallest first.
    pub const ALL: [PageSize; 4] = [PageSize::Size4K, PageSize::Size64K, PageSize::Size2M, PageSize::Size512M];

    /// log2 of the size in bytes.
    pub const fn shift(self) -> u32 {
        match self {
            PageSize::Size4K => 12,
            PageSize::Size64K => 16,
            PageSize::Size2M => 21,
            PageSize::Size512M => 29,
        }
    }

    /// Size in bytes.
    pub const fn bytes(self) -> u64 {
        1 << self.shift()
    }
}

impl fmt::Display for PageSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PageSize::Size4K => "4K",
            PageSize::Size64K => "64K",
            PageSize::Size2M => "2M",
            PageSize::Size512M => "512M",
        })
    }
}

/// Where a PTE points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aperture {
    /// This GPU's video memory (VRAM).
    Video,
    /// System memory, snooped by the CPU's caches.
    SystemCoherent,
    /// System memory, not snooped.
    SystemNonCoherent,
    /// Another GPU's video memory over NVLink/PCIe, by peer id (0..=7).
    Peer(u8),
}

/// Where a page table is (PDEs cannot point at peer memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableAperture {
    Video,
    SystemCoherent,
    SystemNonCoherent,
}

/// A page table's (or a page directory's) location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableAddress {
    pub aperture: TableAperture,
    pub address: u64,
}

impl TableAddress {
    /// The address `bytes` further on in the same aperture, if it does not overflow.
    pub fn offset(self, bytes: u64) -> Option<TableAddress> {
        Some(TableAddress { aperture: self.aperture, address: self.address.checked_add(bytes)? })
    }
}

impl fmt::Display for TableAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} {:#x}", self.aperture, self.address)
    }
}

/// A PTE's permissions and memory attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PteAttrs {
    /// Writes fault (`READ_ONLY`; v3: the `RO` PCFs).
    pub read_only: bool,
    /// Atomics fault (`ATOMIC_DISABLE`; v3: the `NO_ATOMIC` PCFs).
    pub atomic_disable: bool,
    /// Only privileged engines may access (`PRIVILEGE`; v3: the `PRIVILEGE` PCFs).
    pub privileged: bool,
    /// Not cached in the GPU's L2 (`VOL`; v3: the `UNCACHED` PCFs). UVM maps uncached unless
    /// told otherwise.
    pub volatile: bool,
    /// Access counters ignore this page (v3 only: the `ACD` PCFs; version 2 has no such bit).
    pub access_counting_disabled: bool,
    /// Memory kind (`KIND`: 8 bits in v2, 4 bits in v3); see [`Kind`].
    pub kind: u8,
}

/// The kinds the driver maps plain memory with.
pub struct Kind;

impl Kind {
    /// `NV_MMU_PTE_KIND_PITCH` (Pascal, Volta).
    pub const PITCH: u8 = v2::NV_MMU_PTE_KIND_PITCH;
    /// `NV_MMU_PTE_KIND_GENERIC_MEMORY` (Turing to Ada; `PITCH` no longer exists there).
    pub const GENERIC_MEMORY_TU102: u8 = v2::tu102::NV_MMU_PTE_KIND_GENERIC_MEMORY;
    /// `NV_MMU_PTE_KIND_GENERIC_MEMORY` (Hopper and later).
    pub const GENERIC_MEMORY_GH100: u8 = v3::NV_MMU_PTE_KIND_GENERIC_MEMORY;
}

/// A valid PTE: what it maps and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pte {
    pub aperture: Aperture,
    /// Physical address of the page (at least 4 KiB aligned).
    pub address: u64,
    pub attrs: PteAttrs,
}

/// What a PTE-sized entry says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PteState {
    /// Not valid: an access faults (for a big PTE: the 4K PTEs beneath are consulted).
    Invalid,
    /// Not valid and sparse: reads return zero, writes are dropped (v2: VALID=0 with VOL=1; v3:
    /// PCF `SPARSE`).
    Sparse,
    /// A big PTE that hides the 4K PTEs beneath it (v2: VALID=0, PRIVILEGE=1; v3: PCF
    /// `NO_VALID_4KB_PAGE`), UVM's "unmapped" big PTE.
    UnmappedBig,
    /// v3 only: PCF `MAPPING_NOWHERE`.
    MappingNowhere,
    Valid(Pte),
}

/// The two halves of a dual PDE (PD0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct DualPde {
    /// The 64K page table.
    pub big: Option<TableAddress>,
    /// The 4K page table.
    pub small: Option<TableAddress>,
}

/// An entry could not be encoded or decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatError {
    /// The address is not aligned to what the field stores (`>> shift`).
    AddressMisaligned { field: &'static str, address: u64, alignment: u64 },
    /// The address needs more bits than the field has.
    AddressTooWide { field: &'static str, address: u64 },
    /// Peer ids are 0..=7.
    PeerIdOutOfRange { peer: u8 },
    /// The kind needs more bits than this format's KIND field has.
    KindTooWide { kind: u8, max: u8 },
    /// An attribute this format cannot express.
    AttributeNotInFormat { attribute: &'static str, version: MmuVersion },
    /// A field holds a value its header does not define (decoding memory).
    UndefinedValue { field: &'static str, value: u64 },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FormatError::AddressMisaligned { field, address, alignment } => {
                write!(f, "{field}: address {address:#x} is not {alignment:#x}-aligned")
            }
            FormatError::AddressTooWide { field, address } => {
                write!(f, "{field}: address {address:#x} does not fit")
            }
            FormatError::PeerIdOutOfRange { peer } => write!(f, "peer id {peer} is not in 0..=7"),
            FormatError::KindTooWide { kind, max } => write!(f, "kind {kind:#x} exceeds {max:#x}"),
            FormatError::AttributeNotInFormat { attribute, version } => {
                write!(f, "MMU format {version:?} cannot express {attribute}")
            }
            FormatError::UndefinedValue { field, value } => {
                write!(f, "{field} holds {value:#x}, a value its header does not define")
            }
        }
    }
}

/// What a level's table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LevelKind {
    /// 8-byte PDEs (PD4..PD1); at PD1 of formats with 512M pages, an entry may be a PTE.
    Directory,
    /// 16-byte dual PDEs (PD0): a big and a small page table, or a 2M PTE.
    DualDirectory,
    /// 64K PTEs.
    BigPageTable,
    /// 4K PTEs.
    SmallPageTable,
}

/// One level of the page-table tree, as RM's `MMU_FMT_LEVEL` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Level {
    /// RM's name (`PD3`..`PD0`, `PT_BIG`, `PT_SMALL`).
    pub name: &'static str,
    /// Highest VA bit this level indexes.
    pub va_bit_hi: u32,
    /// Lowest VA bit this level indexes: an entry covers `1 << va_bit_lo` bytes of VA.
    pub va_bit_lo: u32,
    /// Bytes per entry.
    pub entry_size: u32,
    pub kind: LevelKind,
}

impl Level {
    /// Entries in one table of this level.
    pub const fn entries(&self) -> u64 {
        1 << (self.va_bit_hi - self.va_bit_lo + 1)
    }

    /// Bytes of one table of this level.
    pub const fn table_bytes(&self) -> u64 {
        self.entries() * self.entry_size as u64
    }

    /// The index of `va`'s entry in a table of this level.
    pub const fn index(&self, va: u64) -> u64 {
        (va >> self.va_bit_lo) & (self.entries() - 1)
    }

    /// VA bytes one entry covers.
    pub const fn entry_coverage(&self) -> u64 {
        1 << self.va_bit_lo
    }

    /// 64-bit words per entry.
    pub const fn words_per_entry(&self) -> usize {
        (self.entry_size / 8) as usize
    }
}

const fn level(name: &'static str, va_bit_hi: u32, va_bit_lo: u32, entry_size: u32, kind: LevelKind) -> Level {
    Level { name, va_bit_hi, va_bit_lo, entry_size, kind }
}

/// Version 2: PD3 [48:47], PD2 [46:38], PD1 [37:29], PD0 [28:21], PT_BIG [20:16], PT_SMALL [20:12].
const V2_LEVELS: [Level; 6] = [
    level("PD3", 48, 47, v2::NV_MMU_VER2_PDE__SIZE, LevelKind::Directory),
    level("PD2", 46, 38, v2::NV_MMU_VER2_PDE__SIZE, LevelKind::Directory),
    level("PD1", 37, 29, v2::NV_MMU_VER2_PDE__SIZE, LevelKind::Directory),
    level("PD0", 28, 21, v2::NV_MMU_VER2_DUAL_PDE__SIZE, LevelKind::DualDirectory),
    level("PT_BIG", 20, 16, v2::NV_MMU_VER2_PTE__SIZE, LevelKind::BigPageTable),
    level("PT_SMALL", 20, 12, v2::NV_MMU_VER2_PTE__SIZE, LevelKind::SmallPageTable),
];

/// Version 3: PD4 [56:56], PD3 [55:47], PD2 [46:38], PD1 [37:29], PD0 [28:21], PT_BIG [20:16],
/// PT_SMALL [20:12].
const V3_LEVELS: [Level; 7] = [
    level("PD4", 56, 56, v3::NV_MMU_VER3_PDE__SIZE, LevelKind::Directory),
    level("PD3", 55, 47, v3::NV_MMU_VER3_PDE__SIZE, LevelKind::Directory),
    level("PD2", 46, 38, v3::NV_MMU_VER3_PDE__SIZE, LevelKind::Directory),
    level("PD1", 37, 29, v3::NV_MMU_VER3_PDE__SIZE, LevelKind::Directory),
    level("PD0", 28, 21, v3::NV_MMU_VER3_DUAL_PDE__SIZE, LevelKind::DualDirectory),
    level("PT_BIG", 20, 16, v3::NV_MMU_VER3_PTE__SIZE, LevelKind::BigPageTable),
    level("PT_SMALL", 20, 12, v3::NV_MMU_VER3_PTE__SIZE, LevelKind::SmallPageTable),
];

/// One chip's page-table format: the version and whether PD1 may hold 512M PTEs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MmuFormat {
    pub version: MmuVersion,
    /// PD1 entries may be 512M PTEs (`kgmmuFmtInitLevels_GA10X`: Ampere and later).
    pub pages_512m: bool,
}

// Field handles, named as the header names them.
const fn f(range: crate::hw::UnitRange) -> EntryField {
    EntryField::of(range)
}

/// (privileged, read-only, atomics disabled, uncached, access counting disabled).
type PcfFlags = (bool, bool, bool, bool, bool);

/// The v3 PTE PCF for each combination of attributes, named as `dev_mmu.h` names it.
const V3_PTE_PCF: [(PcfFlags, u32); 32] = {
    use v3::*;
    const F: bool = false;
    const T: bool = true;
    [
        ((F, F, F, F, F), NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_CACHED_ACE),
        ((F, F, F, T, F), NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_UNCACHED_ACE),
        ((T, F, F, F, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_CACHED_ACE),
        ((T, F, F, T, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_UNCACHED_ACE),
        ((F, T, F, F, F), NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_CACHED_ACE),
        ((F, T, F, T, F), NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_UNCACHED_ACE),
        ((T, T, F, F, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_CACHED_ACE),
        ((T, T, F, T, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_UNCACHED_ACE),
        ((F, F, T, F, F), NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_CACHED_ACE),
        ((F, F, T, T, F), NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_UNCACHED_ACE),
        ((T, F, T, F, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_CACHED_ACE),
        ((T, F, T, T, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_UNCACHED_ACE),
        ((F, T, T, F, F), NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_CACHED_ACE),
        ((F, T, T, T, F), NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_UNCACHED_ACE),
        ((T, T, T, F, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_CACHED_ACE),
        ((T, T, T, T, F), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_UNCACHED_ACE),
        ((F, F, F, F, T), NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_CACHED_ACD),
        ((F, F, F, T, T), NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_UNCACHED_ACD),
        ((T, F, F, F, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_CACHED_ACD),
        ((T, F, F, T, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_UNCACHED_ACD),
        ((F, T, F, F, T), NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_CACHED_ACD),
        ((F, T, F, T, T), NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_UNCACHED_ACD),
        ((T, T, F, F, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_CACHED_ACD),
        ((T, T, F, T, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_UNCACHED_ACD),
        ((F, F, T, F, T), NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_CACHED_ACD),
        ((F, F, T, T, T), NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_UNCACHED_ACD),
        ((T, F, T, F, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_CACHED_ACD),
        ((T, F, T, T, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_UNCACHED_ACD),
        ((F, T, T, F, T), NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_CACHED_ACD),
        ((F, T, T, T, T), NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_UNCACHED_ACD),
        ((T, T, T, F, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_CACHED_ACD),
        ((T, T, T, T, T), NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_UNCACHED_ACD),
    ]
};

/// Encodes `address` into `field`, which stores it `>> shift`.
fn set_address(
    entry: &mut [u64],
    field: EntryField,
    name: &'static str,
    address: u64,
    shift: u32,
) -> Result<(), FormatError> {
    let alignment = 1u64 << shift;
    if address & (alignment - 1) != 0 {
        return Err(FormatError::AddressMisaligned { field: name, address, alignment });
    }
    let value = address >> shift;
    if !field.fits(value) {
        return Err(FormatError::AddressTooWide { field: name, address });
    }
    field.set(entry, value);
    Ok(())
}

/// Decodes an address field that stores the address `>> shift`.
fn get_address(entry: &[u64], field: EntryField, shift: u32) -> u64 {
    // Every address field ends at or below bit 53 of its word (checked in tests), so shifting
    // back up by at most 12 bits cannot overflow.
    field.get(entry) << shift
}

impl MmuFormat {
    /// Pascal to Turing: version 2, no 512M pages.
    pub const VER2: MmuFormat = MmuFormat { version: MmuVersion::V2, pages_512m: false };
    /// Ampere and Ada: version 2 with 512M pages at PD1.
    pub const VER2_512M: MmuFormat = MmuFormat { version: MmuVersion::V2, pages_512m: true };
    /// Hopper and Blackwell: version 3 (512M pages at PD1).
    pub const VER3: MmuFormat = MmuFormat { version: MmuVersion::V3, pages_512m: true };

    /// The format a family's GPUs use.
    pub const fn for_family(family: Family) -> MmuFormat {
        crate::hal::for_family(family).mmu_format
    }

    /// Bits of virtual address (49 for v2, 57 for v3).
    pub const fn va_bits(&self) -> u32 {
        match self.version {
            MmuVersion::V2 => 49,
            MmuVersion::V3 => 57,
        }
    }

    /// Every level, root first; the last two are the big and the small page table.
    pub fn levels(&self) -> &'static [Level] {
        match self.version {
            MmuVersion::V2 => &V2_LEVELS,
            MmuVersion::V3 => &V3_LEVELS,
        }
    }

    /// Index in [`Self::levels`] of the level that holds PTEs of `size`.
    pub fn pte_level(&self, size: PageSize) -> Option<usize> {
        let n = self.levels().len();
        match size {
            PageSize::Size4K => Some(n - 1),
            PageSize::Size64K => Some(n - 2),
            PageSize::Size2M => Some(n - 3),
            PageSize::Size512M => self.pages_512m.then_some(n - 4),
        }
    }

    /// The page size of a PTE at level `index`, if that level may hold PTEs.
    pub fn level_page_size(&self, index: usize) -> Option<PageSize> {
        PageSize::ALL.into_iter().find(|&size| self.pte_level(size) == Some(index))
    }

    /// Page sizes this format maps, largest first.
    pub fn page_sizes(&self) -> impl Iterator<Item = PageSize> + '_ {
        PageSize::ALL.into_iter().rev().filter(|&size| self.pte_level(size).is_some())
    }

    /// Alignment a table of level `index` needs: what its parent's address field stores (`>> 8`
    /// for big page tables, `>> 12` for everything else, the root included since the instance
    /// block's PDB is in 4 KiB units).
    pub fn table_alignment(&self, index: usize) -> u64 {
        match self.levels().get(index).map(|l| l.kind) {
            Some(LevelKind::BigPageTable) => 1 << self.big_table_shift(),
            _ => 1 << self.pde_shift(),
        }
    }

    fn pde_shift(&self) -> u32 {
        match self.version {
            MmuVersion::V2 => v2::NV_MMU_VER2_PDE_ADDRESS_SHIFT,
            MmuVersion::V3 => v3::NV_MMU_VER3_PDE_ADDRESS_SHIFT,
        }
    }

    fn big_table_shift(&self) -> u32 {
        match self.version {
            MmuVersion::V2 => v2::NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SHIFT,
            MmuVersion::V3 => v3::NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG_SHIFT,
        }
    }

    /// The largest kind this format's KIND field holds.
    pub fn max_kind(&self) -> u8 {
        let field = match self.version {
            MmuVersion::V2 => f(v2::NV_MMU_VER2_PTE_KIND),
            MmuVersion::V3 => f(v3::NV_MMU_VER3_PTE_KIND),
        };
        field.max_value().min(u8::MAX as u64) as u8
    }

    /// Whether `raw` (a PTE, or the first word of an entry at a level that may hold PTEs) has
    /// VALID (`IS_PTE`) set.
    pub fn is_pte(&self, raw: u64) -> bool {
        let field = match self.version {
            MmuVersion::V2 => f(v2::NV_MMU_VER2_PTE_VALID),
            MmuVersion::V3 => f(v3::NV_MMU_VER3_PTE_VALID),
        };
        field.get(&[raw]) != 0
    }

    // -----------------------------------------------------------------------------------------
    // PTEs.

    /// Encodes a valid PTE (UVM's `make_pte_pascal`/`_turing`/`_hopper`, with the attributes
    /// given rather than chosen).
    pub fn encode_pte(&self, pte: &Pte) -> Result<u64, FormatError> {
        if pte.attrs.kind > self.max_kind() {
            return Err(FormatError::KindTooWide { kind: pte.attrs.kind, max: self.max_kind() });
        }
        if let Aperture::Peer(peer) = pte.aperture {
            if peer > 7 {
                return Err(FormatError::PeerIdOutOfRange { peer });
            }
        }
        match self.version {
            MmuVersion::V2 => self.encode_pte_v2(pte),
            MmuVersion::V3 => self.encode_pte_v3(pte),
        }
    }

    fn encode_pte_v2(&self, pte: &Pte) -> Result<u64, FormatError> {
        use v2::*;
        let a = &pte.attrs;
        if a.access_counting_disabled {
            return Err(FormatError::AttributeNotInFormat {
                attribute: "access counting disabled (a VER3 PCF)",
                version: MmuVersion::V2,
            });
        }
        let mut e = [0u64];
        f(NV_MMU_VER2_PTE_VALID).set(&mut e, 1);
        f(NV_MMU_VER2_PTE_VOL).set(&mut e, a.volatile as u64);
        f(NV_MMU_VER2_PTE_PRIVILEGE).set(&mut e, a.privileged as u64);
        f(NV_MMU_VER2_PTE_READ_ONLY).set(&mut e, a.read_only as u64);
        f(NV_MMU_VER2_PTE_ATOMIC_DISABLE).set(&mut e, a.atomic_disable as u64);
        f(NV_MMU_VER2_PTE_KIND).set(&mut e, a.kind as u64);
        let shift = NV_MMU_VER2_PTE_ADDRESS_SHIFT;
        let (aperture, field, name) = match pte.aperture {
            Aperture::Video => {
                (NV_MMU_VER2_PTE_APERTURE_VIDEO_MEMORY, f(NV_MMU_VER2_PTE_ADDRESS_VID), "NV_MMU_VER2_PTE_ADDRESS_VID")
            }
            Aperture::Peer(peer) => {
                f(NV_MMU_VER2_PTE_ADDRESS_VID_PEER).set(&mut e, peer as u64);
                (NV_MMU_VER2_PTE_APERTURE_PEER_MEMORY, f(NV_MMU_VER2_PTE_ADDRESS_VID), "NV_MMU_VER2_PTE_ADDRESS_VID")
            }
            Aperture::SystemCoherent => (
                NV_MMU_VER2_PTE_APERTURE_SYSTEM_COHERENT_MEMORY,
                f(NV_MMU_VER2_PTE_ADDRESS_SYS),
                "NV_MMU_VER2_PTE_ADDRESS_SYS",
            ),
            Aperture::SystemNonCoherent => (
                NV_MMU_VER2_PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY,
                f(NV_MMU_VER2_PTE_ADDRESS_SYS),
                "NV_MMU_VER2_PTE_ADDRESS_SYS",
            ),
        };
        f(NV_MMU_VER2_PTE_APERTURE).set(&mut e, aperture as u64);
        set_address(&mut e, field, name, pte.address, shift)?;
        Ok(e[0])
    }

    fn encode_pte_v3(&self, pte: &Pte) -> Result<u64, FormatError> {
        use v3::*;
        let a = &pte.attrs;
        let flags = (a.privileged, a.read_only, a.atomic_disable, a.volatile, a.access_counting_disabled);
        let pcf = V3_PTE_PCF.iter().find(|(k, _)| *k == flags).map_or(NV_MMU_VER3_PTE_PCF_INVALID, |(_, v)| *v);
        let mut e = [0u64];
        f(NV_MMU_VER3_PTE_VALID).set(&mut e, 1);
        f(NV_MMU_VER3_PTE_PCF).set(&mut e, pcf as u64);
        f(NV_MMU_VER3_PTE_KIND).set(&mut e, a.kind as u64);
        let shift = NV_MMU_VER3_PTE_ADDRESS_SHIFT;
        let aperture = match pte.aperture {
            Aperture::Video => {
                set_address(&mut e, f(NV_MMU_VER3_PTE_ADDRESS_VID), "NV_MMU_VER3_PTE_ADDRESS_VID", pte.address, shift)?;
                NV_MMU_VER3_PTE_APERTURE_VIDEO_MEMORY
            }
            Aperture::Peer(peer) => {
                set_address(
                    &mut e,
                    f(NV_MMU_VER3_PTE_ADDRESS_PEER),
                    "NV_MMU_VER3_PTE_ADDRESS_PEER",
                    pte.address,
                    shift,
                )?;
                f(NV_MMU_VER3_PTE_PEER_ID).set(&mut e, peer as u64);
                NV_MMU_VER3_PTE_APERTURE_PEER_MEMORY
            }
            Aperture::SystemCoherent | Aperture::SystemNonCoherent => {
                set_address(&mut e, f(NV_MMU_VER3_PTE_ADDRESS_SYS), "NV_MMU_VER3_PTE_ADDRESS_SYS", pte.address, shift)?;
                if pte.aperture == Aperture::SystemCoherent {
                    NV_MMU_VER3_PTE_APERTURE_SYSTEM_COHERENT_MEMORY
                } else {
                    NV_MMU_VER3_PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY
                }
            }
        };
        f(NV_MMU_VER3_PTE_APERTURE).set(&mut e, aperture as u64);
        Ok(e[0])
    }

    /// A sparse PTE (UVM's `make_sparse_pte_*`).
    pub fn sparse_pte(&self) -> u64 {
        let mut e = [0u64];
        match self.version {
            MmuVersion::V2 => f(v2::NV_MMU_VER2_PTE_VOL).set(&mut e, 1),
            MmuVersion::V3 => f(v3::NV_MMU_VER3_PTE_PCF).set(&mut e, v3::NV_MMU_VER3_PTE_PCF_SPARSE as u64),
        }
        e[0]
    }

    /// A big PTE that makes the MMU ignore the 4K PTEs beneath it (UVM's `unmapped_pte_*`).
    pub fn unmapped_big_pte(&self) -> u64 {
        let mut e = [0u64];
        match self.version {
            MmuVersion::V2 => f(v2::NV_MMU_VER2_PTE_PRIVILEGE).set(&mut e, 1),
            MmuVersion::V3 => f(v3::NV_MMU_VER3_PTE_PCF).set(&mut e, v3::NV_MMU_VER3_PTE_PCF_NO_VALID_4KB_PAGE as u64),
        }
        e[0]
    }

    /// Decodes a PTE read from memory.
    pub fn decode_pte(&self, raw: u64) -> Result<PteState, FormatError> {
        match self.version {
            MmuVersion::V2 => Ok(self.decode_pte_v2(raw)),
            MmuVersion::V3 => self.decode_pte_v3(raw),
        }
    }

    fn decode_pte_v2(&self, raw: u64) -> PteState {
        use v2::*;
        let e = [raw];
        let volatile = f(NV_MMU_VER2_PTE_VOL).get(&e) != 0;
        let privileged = f(NV_MMU_VER2_PTE_PRIVILEGE).get(&e) != 0;
        if f(NV_MMU_VER2_PTE_VALID).get(&e) == 0 {
            // The MMU reads VOL and PRIVILEGE even in an invalid PTE (`unmapped_pte_pascal`).
            return match (volatile, privileged) {
                (true, _) => PteState::Sparse,
                (false, true) => PteState::UnmappedBig,
                (false, false) => PteState::Invalid,
            };
        }
        let aperture_raw = f(NV_MMU_VER2_PTE_APERTURE).get(&e) as u32;
        let shift = NV_MMU_VER2_PTE_ADDRESS_SHIFT;
        let (aperture, address) = match aperture_raw {
            NV_MMU_VER2_PTE_APERTURE_VIDEO_MEMORY => {
                (Aperture::Video, get_address(&e, f(NV_MMU_VER2_PTE_ADDRESS_VID), shift))
            }
            NV_MMU_VER2_PTE_APERTURE_PEER_MEMORY => (
                Aperture::Peer(f(NV_MMU_VER2_PTE_ADDRESS_VID_PEER).get(&e) as u8),
                get_address(&e, f(NV_MMU_VER2_PTE_ADDRESS_VID), shift),
            ),
            NV_MMU_VER2_PTE_APERTURE_SYSTEM_COHERENT_MEMORY => {
                (Aperture::SystemCoherent, get_address(&e, f(NV_MMU_VER2_PTE_ADDRESS_SYS), shift))
            }
            // The field is two bits and all four values are defined.
            _ => (Aperture::SystemNonCoherent, get_address(&e, f(NV_MMU_VER2_PTE_ADDRESS_SYS), shift)),
        };
        PteState::Valid(Pte {
            aperture,
            address,
            attrs: PteAttrs {
                read_only: f(NV_MMU_VER2_PTE_READ_ONLY).get(&e) != 0,
                atomic_disable: f(NV_MMU_VER2_PTE_ATOMIC_DISABLE).get(&e) != 0,
                privileged,
                volatile,
                access_counting_disabled: false,
                kind: f(NV_MMU_VER2_PTE_KIND).get(&e) as u8,
            },
        })
    }

    fn decode_pte_v3(&self, raw: u64) -> Result<PteState, FormatError> {
        use v3::*;
        let e = [raw];
        let pcf = f(NV_MMU_VER3_PTE_PCF).get(&e) as u32;
        if f(NV_MMU_VER3_PTE_VALID).get(&e) == 0 {
            return match pcf {
                NV_MMU_VER3_PTE_PCF_INVALID => Ok(PteState::Invalid),
                NV_MMU_VER3_PTE_PCF_SPARSE => Ok(PteState::Sparse),
                NV_MMU_VER3_PTE_PCF_MAPPING_NOWHERE => Ok(PteState::MappingNowhere),
                NV_MMU_VER3_PTE_PCF_NO_VALID_4KB_PAGE => Ok(PteState::UnmappedBig),
                other => Err(FormatError::UndefinedValue { field: "NV_MMU_VER3_PTE_PCF", value: other as u64 }),
            };
        }
        let Some(&((privileged, read_only, atomic_disable, volatile, access_counting_disabled), _)) =
            V3_PTE_PCF.iter().find(|(_, v)| *v == pcf)
        else {
            return Err(FormatError::UndefinedValue { field: "NV_MMU_VER3_PTE_PCF", value: pcf as u64 });
        };
        let shift = NV_MMU_VER3_PTE_ADDRESS_SHIFT;
        let (aperture, address) = match f(NV_MMU_VER3_PTE_APERTURE).get(&e) as u32 {
            NV_MMU_VER3_PTE_APERTURE_VIDEO_MEMORY => {
                (Aperture::Video, get_address(&e, f(NV_MMU_VER3_PTE_ADDRESS_VID), shift))
            }
            NV_MMU_VER3_PTE_APERTURE_PEER_MEMORY => (
                Aperture::Peer(f(NV_MMU_VER3_PTE_PEER_ID).get(&e) as u8),
                get_address(&e, f(NV_MMU_VER3_PTE_ADDRESS_PEER), shift),
            ),
            NV_MMU_VER3_PTE_APERTURE_SYSTEM_COHERENT_MEMORY => {
                (Aperture::SystemCoherent, get_address(&e, f(NV_MMU_VER3_PTE_ADDRESS_SYS), shift))
            }
            _ => (Aperture::SystemNonCoherent, get_address(&e, f(NV_MMU_VER3_PTE_ADDRESS_SYS), shift)),
        };
        Ok(PteState::Valid(Pte {
            aperture,
            address,
            attrs: PteAttrs {
                read_only,
                atomic_disable,
                privileged,
                volatile,
                access_counting_disabled,
                kind: f(NV_MMU_VER3_PTE_KIND).get(&e) as u8,
            },
        }))
    }

    // -----------------------------------------------------------------------------------------
    // PDEs.

    /// Encodes an 8-byte PDE pointing at `next` (or an empty one). PDEs are volatile (v3: the
    /// `VALID_UNCACHED_ATS_ALLOWED` PCF), as UVM writes them on systems without ATS.
    pub fn encode_pde(&self, next: Option<TableAddress>) -> Result<u64, FormatError> {
        let mut e = [0u64];
        let Some(next) = next else { return Ok(0) };
        match self.version {
            MmuVersion::V2 => {
                use v2::*;
                f(NV_MMU_VER2_PDE_VOL).set(&mut e, 1);
                let (aperture, field, name) = match next.aperture {
                    TableAperture::Video => (
                        NV_MMU_VER2_PDE_APERTURE_VIDEO_MEMORY,
                        f(NV_MMU_VER2_PDE_ADDRESS_VID),
                        "NV_MMU_VER2_PDE_ADDRESS_VID",
                    ),
                    TableAperture::SystemCoherent => (
                        NV_MMU_VER2_PDE_APERTURE_SYSTEM_COHERENT_MEMORY,
                        f(NV_MMU_VER2_PDE_ADDRESS_SYS),
                        "NV_MMU_VER2_PDE_ADDRESS_SYS",
                    ),
                    TableAperture::SystemNonCoherent => (
                        NV_MMU_VER2_PDE_APERTURE_SYSTEM_NON_COHERENT_MEMORY,
                        f(NV_MMU_VER2_PDE_ADDRESS_SYS),
                        "NV_MMU_VER2_PDE_ADDRESS_SYS",
                    ),
                };
                f(NV_MMU_VER2_PDE_APERTURE).set(&mut e, aperture as u64);
                set_address(&mut e, field, name, next.address, NV_MMU_VER2_PDE_ADDRESS_SHIFT)?;
            }
            MmuVersion::V3 => {
                use v3::*;
                let aperture = match next.aperture {
                    TableAperture::Video => NV_MMU_VER3_PDE_APERTURE_VIDEO_MEMORY,
                    TableAperture::SystemCoherent => NV_MMU_VER3_PDE_APERTURE_SYSTEM_COHERENT_MEMORY,
                    TableAperture::SystemNonCoherent => NV_MMU_VER3_PDE_APERTURE_SYSTEM_NON_COHERENT_MEMORY,
                };
                f(NV_MMU_VER3_PDE_APERTURE).set(&mut e, aperture as u64);
                f(NV_MMU_VER3_PDE_PCF).set(&mut e, NV_MMU_VER3_PDE_PCF_VALID_UNCACHED_ATS_ALLOWED as u64);
                set_address(
                    &mut e,
                    f(NV_MMU_VER3_PDE_ADDRESS),
                    "NV_MMU_VER3_PDE_ADDRESS",
                    next.address,
                    NV_MMU_VER3_PDE_ADDRESS_SHIFT,
                )?;
            }
        }
        Ok(e[0])
    }

    /// Decodes an 8-byte PDE: the next level, or `None` when the aperture is `INVALID`.
    pub fn decode_pde(&self, raw: u64) -> Result<Option<TableAddress>, FormatError> {
        let e = [raw];
        match self.version {
            MmuVersion::V2 => {
                use v2::*;
                Ok(decode_table_pointer_v2(
                    &e,
                    f(NV_MMU_VER2_PDE_APERTURE),
                    f(NV_MMU_VER2_PDE_ADDRESS_VID),
                    f(NV_MMU_VER2_PDE_ADDRESS_SYS),
                    NV_MMU_VER2_PDE_ADDRESS_SHIFT,
                ))
            }
            MmuVersion::V3 => {
                use v3::*;
                decode_table_pointer_v3(
                    &e,
                    f(NV_MMU_VER3_PDE_APERTURE),
                    f(NV_MMU_VER3_PDE_PCF),
                    "NV_MMU_VER3_PDE_PCF",
                    f(NV_MMU_VER3_PDE_ADDRESS),
                    NV_MMU_VER3_PDE_ADDRESS_SHIFT,
                )
            }
        }
    }

    /// Encodes a dual PDE (PD0): `[low word, high word]`, the big half in the low word.
    pub fn encode_dual_pde(&self, pde: DualPde) -> Result<[u64; 2], FormatError> {
        let mut e = [0u64; 2];
        match self.version {
            MmuVersion::V2 => {
                use v2::*;
                if let Some(big) = pde.big {
                    f(NV_MMU_VER2_DUAL_PDE_VOL_BIG).set(&mut e, 1);
                    let (aperture, field, name) = match big.aperture {
                        TableAperture::Video => (
                            NV_MMU_VER2_DUAL_PDE_APERTURE_BIG_VIDEO_MEMORY,
                            f(NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_VID),
                            "NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_VID",
                        ),
                        TableAperture::SystemCoherent => (
                            NV_MMU_VER2_DUAL_PDE_APERTURE_BIG_SYSTEM_COHERENT_MEMORY,
                            f(NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS),
                            "NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS",
                        ),
                        TableAperture::SystemNonCoherent => (
                            NV_MMU_VER2_DUAL_PDE_APERTURE_BIG_SYSTEM_NON_COHERENT_MEMORY,
                            f(NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS),
                            "NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS",
                        ),
                    };
                    f(NV_MMU_VER2_DUAL_PDE_APERTURE_BIG).set(&mut e, aperture as u64);
                    set_address(&mut e, field, name, big.address, NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SHIFT)?;
                }
                if let Some(small) = pde.small {
                    f(NV_MMU_VER2_DUAL_PDE_VOL_SMALL).set(&mut e, 1);
                    let (aperture, field, name) = match small.aperture {
                        TableAperture::Video => (
                            NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL_VIDEO_MEMORY,
                            f(NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_VID),
                            "NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_VID",
                        ),
                        TableAperture::SystemCoherent => (
                            NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL_SYSTEM_COHERENT_MEMORY,
                            f(NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_SYS),
                            "NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_SYS",
                        ),
                        TableAperture::SystemNonCoherent => (
                            NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL_SYSTEM_NON_COHERENT_MEMORY,
                            f(NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_SYS),
                            "NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_SYS",
                        ),
                    };
                    f(NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL).set(&mut e, aperture as u64);
                    set_address(&mut e, field, name, small.address, NV_MMU_VER2_DUAL_PDE_ADDRESS_SHIFT)?;
                }
            }
            MmuVersion::V3 => {
                use v3::*;
                let aperture_of = |t: TableAddress, video: u32, coherent: u32, non_coherent: u32| match t.aperture {
                    TableAperture::Video => video,
                    TableAperture::SystemCoherent => coherent,
                    TableAperture::SystemNonCoherent => non_coherent,
                };
                if let Some(big) = pde.big {
                    let aperture = aperture_of(
                        big,
                        NV_MMU_VER3_DUAL_PDE_APERTURE_BIG_VIDEO_MEMORY,
                        NV_MMU_VER3_DUAL_PDE_APERTURE_BIG_SYSTEM_COHERENT_MEMORY,
                        NV_MMU_VER3_DUAL_PDE_APERTURE_BIG_SYSTEM_NON_COHERENT_MEMORY,
                    );
                    f(NV_MMU_VER3_DUAL_PDE_APERTURE_BIG).set(&mut e, aperture as u64);
                    f(NV_MMU_VER3_DUAL_PDE_PCF_BIG)
                        .set(&mut e, NV_MMU_VER3_DUAL_PDE_PCF_BIG_VALID_UNCACHED_ATS_ALLOWED as u64);
                    set_address(
                        &mut e,
                        f(NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG),
                        "NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG",
                        big.address,
                        NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG_SHIFT,
                    )?;
                }
                if let Some(small) = pde.small {
                    let aperture = aperture_of(
                        small,
                        NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL_VIDEO_MEMORY,
                        NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL_SYSTEM_COHERENT_MEMORY,
                        NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL_SYSTEM_NON_COHERENT_MEMORY,
                    );
                    f(NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL).set(&mut e, aperture as u64);
                    f(NV_MMU_VER3_DUAL_PDE_PCF_SMALL)
                        .set(&mut e, NV_MMU_VER3_DUAL_PDE_PCF_SMALL_VALID_UNCACHED_ATS_ALLOWED as u64);
                    set_address(
                        &mut e,
                        f(NV_MMU_VER3_DUAL_PDE_ADDRESS_SMALL),
                        "NV_MMU_VER3_DUAL_PDE_ADDRESS_SMALL",
                        small.address,
                        NV_MMU_VER3_DUAL_PDE_ADDRESS_SHIFT,
                    )?;
                }
            }
        }
        Ok(e)
    }

    /// Decodes a dual PDE whose low word is not a PTE (see [`Self::is_pte`]).
    pub fn decode_dual_pde(&self, raw: [u64; 2]) -> Result<DualPde, FormatError> {
        match self.version {
            MmuVersion::V2 => {
                use v2::*;
                Ok(DualPde {
                    big: decode_table_pointer_v2(
                        &raw,
                        f(NV_MMU_VER2_DUAL_PDE_APERTURE_BIG),
                        f(NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_VID),
                        f(NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS),
                        NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SHIFT,
                    ),
                    small: decode_table_pointer_v2(
                        &raw,
                        f(NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL),
                        f(NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_VID),
                        f(NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_SYS),
                        NV_MMU_VER2_DUAL_PDE_ADDRESS_SHIFT,
                    ),
                })
            }
            MmuVersion::V3 => {
                use v3::*;
                Ok(DualPde {
                    big: decode_table_pointer_v3(
                        &raw,
                        f(NV_MMU_VER3_DUAL_PDE_APERTURE_BIG),
                        f(NV_MMU_VER3_DUAL_PDE_PCF_BIG),
                        "NV_MMU_VER3_DUAL_PDE_PCF_BIG",
                        f(NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG),
                        NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG_SHIFT,
                    )?,
                    small: decode_table_pointer_v3(
                        &raw,
                        f(NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL),
                        f(NV_MMU_VER3_DUAL_PDE_PCF_SMALL),
                        "NV_MMU_VER3_DUAL_PDE_PCF_SMALL",
                        f(NV_MMU_VER3_DUAL_PDE_ADDRESS_SMALL),
                        NV_MMU_VER3_DUAL_PDE_ADDRESS_SHIFT,
                    )?,
                })
            }
        }
    }
}

/// A v2 table pointer: the aperture picks the address field (`gmmuFmtPdePhysAddrFld`).
fn decode_table_pointer_v2(
    e: &[u64],
    aperture: EntryField,
    vid: EntryField,
    sys: EntryField,
    shift: u32,
) -> Option<TableAddress> {
    // PDE, DUAL_PDE_BIG and DUAL_PDE_SMALL aperture values are the same numbers (checked by the
    // conformance test against each name).
    let (aperture, field) = match aperture.get(e) as u32 {
        v2::NV_MMU_VER2_PDE_APERTURE_INVALID => return None,
        v2::NV_MMU_VER2_PDE_APERTURE_VIDEO_MEMORY => (TableAperture::Video, vid),
        v2::NV_MMU_VER2_PDE_APERTURE_SYSTEM_COHERENT_MEMORY => (TableAperture::SystemCoherent, sys),
        _ => (TableAperture::SystemNonCoherent, sys),
    };
    Some(TableAddress { aperture, address: get_address(e, field, shift) })
}

/// A v3 table pointer: one address field for every aperture; the PCF must be a defined value.
fn decode_table_pointer_v3(
    e: &[u64],
    aperture: EntryField,
    pcf: EntryField,
    pcf_name: &'static str,
    address: EntryField,
    shift: u32,
) -> Result<Option<TableAddress>, FormatError> {
    // PDE PCFs 0..=3 are the (in)valid/cached/ATS combinations; 4..=7 are undefined.
    let pcf_value = pcf.get(e);
    if pcf_value > 3 {
        return Err(FormatError::UndefinedValue { field: pcf_name, value: pcf_value });
    }
    let aperture = match aperture.get(e) as u32 {
        v3::NV_MMU_VER3_PDE_APERTURE_INVALID => return Ok(None),
        v3::NV_MMU_VER3_PDE_APERTURE_VIDEO_MEMORY => TableAperture::Video,
        v3::NV_MMU_VER3_PDE_APERTURE_SYSTEM_COHERENT_MEMORY => TableAperture::SystemCoherent,
        _ => TableAperture::SystemNonCoherent,
    };
    Ok(Some(TableAddress { aperture, address: get_address(e, address, shift) }))
}

/// The v3 PTE PCF table, for tests that check it against the header's names.
pub fn ver3_pte_pcf_table() -> impl Iterator<Item = (PteAttrs, u32)> {
    V3_PTE_PCF.iter().map(|&((privileged, read_only, atomic_disable, volatile, access_counting_disabled), value)| {
        (PteAttrs { read_only, atomic_disable, privileged, volatile, access_counting_disabled, kind: 0 }, value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcf_table_is_a_bijection() {
        let mut seen = [false; 32];
        for (_, value) in ver3_pte_pcf_table() {
            assert!(!seen[value as usize], "PCF {value:#x} twice");
            seen[value as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn level_tables_cover_the_va_space() {
        for format in [MmuFormat::VER2, MmuFormat::VER3] {
            let levels = format.levels();
            assert_eq!(levels[0].va_bit_hi + 1, format.va_bits());
            for pair in levels[..levels.len() - 2].windows(2) {
                assert_eq!(pair[0].va_bit_lo, pair[1].va_bit_hi + 1, "{:?}", pair);
            }
        }
    }

    #[test]
    fn decoding_never_panics_on_arbitrary_words() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for format in [MmuFormat::VER2, MmuFormat::VER3] {
                let _ = format.decode_pte(x);
                let _ = format.decode_pde(x);
                let _ = format.decode_dual_pde([x, x.rotate_left(17)]);
            }
        }
    }
}
