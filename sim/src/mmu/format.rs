//! The model's own reading of the GMMU page-table formats of `dev_mmu.h`: version 2 (Turing to
//! Ada, `NV_MMU_VER2_*`) and version 3 (Hopper on, `NV_MMU_VER3_*`), their level geometry, and
//! the decoding of PDEs, dual PDEs and PTEs.
//!
//! Only the bit positions and values are imported (`nvgpu::hw::mmu`, each checked against the
//! header by the conformance test); how an entry is read is written here, apart from the
//! driver's encoders, so that a mistake in either is a disagreement the tests see.
//!
//! It is stricter than the driver's decoders where the format leaves no doubt that an entry is
//! malformed: an undefined PCF (v3 PDEs and PTEs), address bits beyond what the aperture's field
//! holds (a video-memory address with bits above the video field set), and a PTE at a level that
//! cannot hold one are [`EntryError`]s, which the walk turns into `BadPageTable` faults.

use core::fmt;

use nvgpu::hw::mmu::{ver2 as v2, ver3 as v3};
use nvgpu::hw::UnitRange;

use crate::engine_mem::{PhysAddr, PhysAperture};

/// Which page-table format a chip's MMU reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GmmuFormat {
    /// Version 2, PD3..PD0 and two page tables; no 512M pages (Turing).
    Ver2,
    /// Version 2 with 512M PTEs allowed at PD1 (Ampere, Ada).
    Ver2Pages512M,
    /// Version 3, PD4..PD0 and two page tables, 512M PTEs at PD1 (Hopper on).
    Ver3,
}

/// Sizes of the pages a PTE maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PageSize {
    Size4K,
    Size64K,
    Size2M,
    Size512M,
}

impl PageSize {
    pub const fn bytes(self) -> u64 {
        match self {
            PageSize::Size4K => 1 << 12,
            PageSize::Size64K => 1 << 16,
            PageSize::Size2M => 1 << 21,
            PageSize::Size512M => 1 << 29,
        }
    }
}

/// Where a page directory or page table is: PDEs cannot point at peer memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableAperture {
    Video,
    SystemCoherent,
    SystemNonCoherent,
}

/// A page directory's (or page table's) location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableAddress {
    pub aperture: TableAperture,
    pub address: u64,
}

impl TableAddress {
    /// The table in VRAM at `address`.
    pub const fn video(address: u64) -> Self {
        TableAddress { aperture: TableAperture::Video, address }
    }

    pub(crate) fn offset(self, bytes: u64) -> Option<TableAddress> {
        Some(TableAddress { aperture: self.aperture, address: self.address.checked_add(bytes)? })
    }

    /// The table's place as a physical address.
    pub const fn phys(self) -> PhysAddr {
        let aperture = match self.aperture {
            TableAperture::Video => PhysAperture::Video,
            TableAperture::SystemCoherent => PhysAperture::SystemCoherent,
            TableAperture::SystemNonCoherent => PhysAperture::SystemNonCoherent,
        };
        PhysAddr { aperture, addr: self.address }
    }
}

/// The driver hands the model page directories under its own name for a table's place (the
/// root of its page tables, BAR1's PDB): the boundary between the two, nothing decoded.
impl From<nvgpu::mm::TableAddress> for TableAddress {
    fn from(t: nvgpu::mm::TableAddress) -> Self {
        let aperture = match t.aperture {
            nvgpu::mm::TableAperture::Video => TableAperture::Video,
            nvgpu::mm::TableAperture::SystemCoherent => TableAperture::SystemCoherent,
            nvgpu::mm::TableAperture::SystemNonCoherent => TableAperture::SystemNonCoherent,
        };
        TableAddress { aperture, address: t.address }
    }
}

/// What a valid PTE grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PteAttrs {
    pub read_only: bool,
    pub atomic_disable: bool,
    pub privileged: bool,
    /// Not cached in L2 (v2 `VOL`, v3 the `UNCACHED` PCFs).
    pub volatile: bool,
    /// v3 only: the `ACD` PCFs.
    pub access_counting_disabled: bool,
    pub kind: u8,
}

/// A valid PTE: the page's physical address and its attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pte {
    pub page: PhysAddr,
    pub attrs: PteAttrs,
}

/// What a PTE-sized entry says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PteState {
    /// An access faults; for a big PTE, the 4K PTE beneath decides.
    Invalid,
    /// Reads return zero, writes are dropped (v2: `VALID` 0 with `VOL` 1; v3: PCF `SPARSE`).
    Sparse,
    /// A big PTE that hides the 4K PTEs beneath it (v2: `VALID` 0 with `PRIVILEGE` 1; v3: PCF
    /// `NO_VALID_4KB_PAGE`).
    UnmappedBig,
    /// v3: PCF `MAPPING_NOWHERE`.
    MappingNowhere,
    Valid(Pte),
}

/// What an 8-byte PDE says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pde {
    /// `IS_PTE` is set: the entry is a PTE (legal only at levels that hold large pages).
    IsPte,
    /// Aperture `INVALID`.
    Invalid,
    /// The next level.
    Table(TableAddress),
}

/// The halves of a dual PDE whose low word is not a PTE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DualPde {
    pub big: Option<TableAddress>,
    pub small: Option<TableAddress>,
}

/// An entry the MMU cannot use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryError {
    /// A field holds a value the header does not define.
    Undefined { field: &'static str, value: u64 },
    /// A video-memory address with bits set above the video field (the system-memory field is
    /// wider: this is a system address, or garbage, under the video aperture).
    BeyondVideoField { field: &'static str, raw: u64 },
}

impl fmt::Display for EntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryError::Undefined { field, value } => write!(f, "{field} = {value:#x} is not defined"),
            EntryError::BeyondVideoField { field, raw } => {
                write!(f, "entry {raw:#018x}: video-memory address wider than {field}")
            }
        }
    }
}

/// One level of the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// VA bits `hi:lo` index this level.
    pub va_hi: u32,
    pub va_lo: u32,
    /// Bytes per entry.
    pub entry_bytes: u64,
    /// The page an entry maps when it is a PTE (`None`: it must be a PDE).
    pub pte: Option<PageSize>,
}

impl Level {
    const fn new(va_hi: u32, va_lo: u32, entry_bytes: u32, pte: Option<PageSize>) -> Self {
        Level { va_hi, va_lo, entry_bytes: entry_bytes as u64, pte }
    }

    /// Byte offset of `va`'s entry in a table of this level.
    pub const fn entry_offset(&self, va: u64) -> u64 {
        let entries = 1u64 << (self.va_hi - self.va_lo + 1);
        ((va >> self.va_lo) & (entries - 1)) * self.entry_bytes
    }

    /// Bytes of one table of this level.
    pub const fn table_bytes(&self) -> u64 {
        (1u64 << (self.va_hi - self.va_lo + 1)) * self.entry_bytes
    }
}

// The geometry of the `dev_mmu.h` formats: 9 VA bits per directory level (one or two at the
// root), PD0 indexing 28:21 with 16-byte dual entries, the big (64K) table 20:16 and the small
// (4K) table 20:12 beneath it.
const PD1_V2: Level = Level::new(37, 29, v2::NV_MMU_VER2_PDE__SIZE, None);
const PD1_V2_512M: Level = Level::new(37, 29, v2::NV_MMU_VER2_PDE__SIZE, Some(PageSize::Size512M));
const V2_UPPER: [Level; 2] =
    [Level::new(48, 47, v2::NV_MMU_VER2_PDE__SIZE, None), Level::new(46, 38, v2::NV_MMU_VER2_PDE__SIZE, None)];
const V3_DIRECTORIES: [Level; 4] = [
    Level::new(56, 56, v3::NV_MMU_VER3_PDE__SIZE, None),
    Level::new(55, 47, v3::NV_MMU_VER3_PDE__SIZE, None),
    Level::new(46, 38, v3::NV_MMU_VER3_PDE__SIZE, None),
    Level::new(37, 29, v3::NV_MMU_VER3_PDE__SIZE, Some(PageSize::Size512M)),
];
const V2_DIRECTORIES: [Level; 3] = [V2_UPPER[0], V2_UPPER[1], PD1_V2];
const V2_DIRECTORIES_512M: [Level; 3] = [V2_UPPER[0], V2_UPPER[1], PD1_V2_512M];

/// The dual level and the two page tables (the same VA bits in both versions; entry sizes from
/// each header).
const fn lower(dual: u32, pte: u32) -> [Level; 3] {
    [Level::new(28, 21, dual, Some(PageSize::Size2M)), Level::new(20, 16, pte, None), Level::new(20, 12, pte, None)]
}
const V2_LOWER: [Level; 3] = lower(v2::NV_MMU_VER2_DUAL_PDE__SIZE, v2::NV_MMU_VER2_PTE__SIZE);
const V3_LOWER: [Level; 3] = lower(v3::NV_MMU_VER3_DUAL_PDE__SIZE, v3::NV_MMU_VER3_PTE__SIZE);

/// Bits of `words` (the entry's 64-bit words, bit 64 being bit 0 of the second) in `range`.
fn field(words: &[u64], range: UnitRange) -> u64 {
    let word = (range.first / 64) as usize;
    let lo = range.first % 64;
    let width = range.last - range.first + 1;
    let Some(&w) = words.get(word) else { return 0 };
    let ones = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    (w >> lo) & ones
}

/// The bits of `wide` (the system-memory address field) above `narrow` (the video one).
fn above_video(words: &[u64], wide: UnitRange, narrow: UnitRange) -> u64 {
    field(words, UnitRange { first: narrow.last + 1, last: wide.last })
}

impl GmmuFormat {
    /// VA bits the root covers.
    pub const fn va_bits(self) -> u32 {
        match self {
            GmmuFormat::Ver2 | GmmuFormat::Ver2Pages512M => 49,
            GmmuFormat::Ver3 => 57,
        }
    }

    /// The 8-byte directory levels, root first (PD3..PD1 or PD4..PD1).
    pub fn directories(self) -> &'static [Level] {
        match self {
            GmmuFormat::Ver2 => &V2_DIRECTORIES,
            GmmuFormat::Ver2Pages512M => &V2_DIRECTORIES_512M,
            GmmuFormat::Ver3 => &V3_DIRECTORIES,
        }
    }

    /// PD0 (dual PDEs), the big page table and the small page table.
    pub fn lower_levels(self) -> &'static [Level; 3] {
        match self {
            GmmuFormat::Ver2 | GmmuFormat::Ver2Pages512M => &V2_LOWER,
            GmmuFormat::Ver3 => &V3_LOWER,
        }
    }

    /// Bytes of the root directory.
    pub fn root_table_bytes(self) -> u64 {
        self.directories().first().map_or(0, |l| l.table_bytes())
    }

    /// Whether the first word of an entry at a level that may hold PTEs is one (`IS_PTE`).
    pub fn is_pte(self, raw: u64) -> bool {
        let bit = match self {
            GmmuFormat::Ver2 | GmmuFormat::Ver2Pages512M => v2::NV_MMU_VER2_PDE_IS_PTE,
            GmmuFormat::Ver3 => v3::NV_MMU_VER3_PDE_IS_PTE,
        };
        field(&[raw], bit) != 0
    }

    /// Reads an 8-byte PDE.
    pub fn pde(self, raw: u64) -> Result<Pde, EntryError> {
        if self.is_pte(raw) {
            return Ok(Pde::IsPte);
        }
        let e = [raw];
        let table = match self {
            GmmuFormat::Ver2 | GmmuFormat::Ver2Pages512M => {
                use v2::*;
                table_v2(
                    &e,
                    [NV_MMU_VER2_PDE_APERTURE, NV_MMU_VER2_PDE_ADDRESS_VID, NV_MMU_VER2_PDE_ADDRESS_SYS],
                    NV_MMU_VER2_PDE_ADDRESS_SHIFT,
                    "NV_MMU_VER2_PDE_ADDRESS_VID",
                )?
            }
            GmmuFormat::Ver3 => {
                use v3::*;
                table_v3(
                    &e,
                    [NV_MMU_VER3_PDE_APERTURE, NV_MMU_VER3_PDE_PCF, NV_MMU_VER3_PDE_ADDRESS],
                    NV_MMU_VER3_PDE_ADDRESS_SHIFT,
                    "NV_MMU_VER3_PDE_PCF",
                )?
            }
        };
        Ok(table.map_or(Pde::Invalid, Pde::Table))
    }

    /// Reads a dual PDE whose low word is not a PTE: the big (64K) table in the low word, the
    /// small (4K) table in the high word.
    pub fn dual_pde(self, raw: [u64; 2]) -> Result<DualPde, EntryError> {
        match self {
            GmmuFormat::Ver2 | GmmuFormat::Ver2Pages512M => {
                use v2::*;
                Ok(DualPde {
                    big: table_v2(
                        &raw,
                        [
                            NV_MMU_VER2_DUAL_PDE_APERTURE_BIG,
                            NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_VID,
                            NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS,
                        ],
                        NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SHIFT,
                        "NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_VID",
                    )?,
                    small: table_v2(
                        &raw,
                        [
                            NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL,
                            NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_VID,
                            NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_SYS,
                        ],
                        NV_MMU_VER2_DUAL_PDE_ADDRESS_SHIFT,
                        "NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_VID",
                    )?,
                })
            }
            GmmuFormat::Ver3 => {
                use v3::*;
                Ok(DualPde {
                    big: table_v3(
                        &raw,
                        [
                            NV_MMU_VER3_DUAL_PDE_APERTURE_BIG,
                            NV_MMU_VER3_DUAL_PDE_PCF_BIG,
                            NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG,
                        ],
                        NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG_SHIFT,
                        "NV_MMU_VER3_DUAL_PDE_PCF_BIG",
                    )?,
                    small: table_v3(
                        &raw,
                        [
                            NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL,
                            NV_MMU_VER3_DUAL_PDE_PCF_SMALL,
                            NV_MMU_VER3_DUAL_PDE_ADDRESS_SMALL,
                        ],
                        NV_MMU_VER3_DUAL_PDE_ADDRESS_SHIFT,
                        "NV_MMU_VER3_DUAL_PDE_PCF_SMALL",
                    )?,
                })
            }
        }
    }

    /// Reads a PTE.
    pub fn pte(self, raw: u64) -> Result<PteState, EntryError> {
        match self {
            GmmuFormat::Ver2 | GmmuFormat::Ver2Pages512M => pte_v2(raw),
            GmmuFormat::Ver3 => pte_v3(raw),
        }
    }
}

/// A v2 table pointer: `[aperture, video address, system address]` fields. The aperture values
/// of `PDE`, `DUAL_PDE_BIG` and `DUAL_PDE_SMALL` are the same numbers (the conformance test
/// checks each name).
fn table_v2(
    e: &[u64],
    [aperture, vid, sys]: [UnitRange; 3],
    shift: u32,
    vid_name: &'static str,
) -> Result<Option<TableAddress>, EntryError> {
    use v2::*;
    let (aperture, address) = match field(e, aperture) as u32 {
        NV_MMU_VER2_PDE_APERTURE_INVALID => return Ok(None),
        NV_MMU_VER2_PDE_APERTURE_VIDEO_MEMORY => {
            if above_video(e, sys, vid) != 0 {
                return Err(EntryError::BeyondVideoField { field: vid_name, raw: e.first().copied().unwrap_or(0) });
            }
            (TableAperture::Video, field(e, vid))
        }
        NV_MMU_VER2_PDE_APERTURE_SYSTEM_COHERENT_MEMORY => (TableAperture::SystemCoherent, field(e, sys)),
        NV_MMU_VER2_PDE_APERTURE_SYSTEM_NON_COHERENT_MEMORY => (TableAperture::SystemNonCoherent, field(e, sys)),
        other => return Err(EntryError::Undefined { field: "NV_MMU_VER2_PDE_APERTURE", value: other.into() }),
    };
    Ok(Some(TableAddress { aperture, address: address << shift }))
}

/// A v3 table pointer: `[aperture, PCF, address]` fields, one address field for every aperture.
fn table_v3(
    e: &[u64],
    [aperture, pcf, address]: [UnitRange; 3],
    shift: u32,
    pcf_name: &'static str,
) -> Result<Option<TableAddress>, EntryError> {
    use v3::*;
    // The PDE PCFs are four: (in)valid or sparse, cached or not, ATS allowed or not. The three
    // bits hold eight.
    let pcf_value = field(e, pcf);
    if pcf_value > 3 {
        return Err(EntryError::Undefined { field: pcf_name, value: pcf_value });
    }
    let aperture = match field(e, aperture) as u32 {
        NV_MMU_VER3_PDE_APERTURE_INVALID => return Ok(None),
        NV_MMU_VER3_PDE_APERTURE_VIDEO_MEMORY => TableAperture::Video,
        NV_MMU_VER3_PDE_APERTURE_SYSTEM_COHERENT_MEMORY => TableAperture::SystemCoherent,
        NV_MMU_VER3_PDE_APERTURE_SYSTEM_NON_COHERENT_MEMORY => TableAperture::SystemNonCoherent,
        other => return Err(EntryError::Undefined { field: "NV_MMU_VER3_PDE_APERTURE", value: other.into() }),
    };
    Ok(Some(TableAddress { aperture, address: field(e, address) << shift }))
}

fn pte_v2(raw: u64) -> Result<PteState, EntryError> {
    use v2::*;
    let e = [raw];
    let bit = |r| field(&e, r) != 0;
    let volatile = bit(NV_MMU_VER2_PTE_VOL);
    let privileged = bit(NV_MMU_VER2_PTE_PRIVILEGE);
    if !bit(NV_MMU_VER2_PTE_VALID) {
        // An invalid PTE still says something through VOL (sparse) and PRIVILEGE (a big PTE
        // that hides the small ones).
        return Ok(match (volatile, privileged) {
            (true, _) => PteState::Sparse,
            (false, true) => PteState::UnmappedBig,
            (false, false) => PteState::Invalid,
        });
    }
    let shift = NV_MMU_VER2_PTE_ADDRESS_SHIFT;
    let vid = || field(&e, NV_MMU_VER2_PTE_ADDRESS_VID) << shift;
    let sys = || field(&e, NV_MMU_VER2_PTE_ADDRESS_SYS) << shift;
    let page = match field(&e, NV_MMU_VER2_PTE_APERTURE) as u32 {
        NV_MMU_VER2_PTE_APERTURE_VIDEO_MEMORY => PhysAddr { aperture: PhysAperture::Video, addr: vid() },
        NV_MMU_VER2_PTE_APERTURE_PEER_MEMORY => {
            PhysAddr { aperture: PhysAperture::Peer(field(&e, NV_MMU_VER2_PTE_ADDRESS_VID_PEER) as u8), addr: vid() }
        }
        NV_MMU_VER2_PTE_APERTURE_SYSTEM_COHERENT_MEMORY => {
            PhysAddr { aperture: PhysAperture::SystemCoherent, addr: sys() }
        }
        NV_MMU_VER2_PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY => {
            PhysAddr { aperture: PhysAperture::SystemNonCoherent, addr: sys() }
        }
        other => return Err(EntryError::Undefined { field: "NV_MMU_VER2_PTE_APERTURE", value: other.into() }),
    };
    Ok(PteState::Valid(Pte {
        page,
        attrs: PteAttrs {
            read_only: bit(NV_MMU_VER2_PTE_READ_ONLY),
            atomic_disable: bit(NV_MMU_VER2_PTE_ATOMIC_DISABLE),
            privileged,
            volatile,
            access_counting_disabled: false,
            kind: field(&e, NV_MMU_VER2_PTE_KIND) as u8,
        },
    }))
}

/// A valid v3 PTE's PCF, read bit by bit: the 32 `NV_MMU_VER3_PTE_PCF_*` values of a valid PTE
/// are every combination of five attributes, bit 0 uncached, bit 1 privileged, bit 2 read-only,
/// bit 3 no atomics and bit 4 access counting disabled (the test checks all 32 names).
pub fn v3_valid_pcf(pcf: u32) -> Option<PteAttrs> {
    (pcf < 32).then_some(PteAttrs {
        volatile: pcf & 1 != 0,
        privileged: pcf & 2 != 0,
        read_only: pcf & 4 != 0,
        atomic_disable: pcf & 8 != 0,
        access_counting_disabled: pcf & 16 != 0,
        kind: 0,
    })
}

fn pte_v3(raw: u64) -> Result<PteState, EntryError> {
    use v3::*;
    let e = [raw];
    let pcf = field(&e, NV_MMU_VER3_PTE_PCF) as u32;
    if field(&e, NV_MMU_VER3_PTE_VALID) == 0 {
        return match pcf {
            NV_MMU_VER3_PTE_PCF_INVALID => Ok(PteState::Invalid),
            NV_MMU_VER3_PTE_PCF_SPARSE => Ok(PteState::Sparse),
            NV_MMU_VER3_PTE_PCF_MAPPING_NOWHERE => Ok(PteState::MappingNowhere),
            NV_MMU_VER3_PTE_PCF_NO_VALID_4KB_PAGE => Ok(PteState::UnmappedBig),
            other => Err(EntryError::Undefined { field: "NV_MMU_VER3_PTE_PCF (invalid PTE)", value: other.into() }),
        };
    }
    let attrs = v3_valid_pcf(pcf).ok_or(EntryError::Undefined { field: "NV_MMU_VER3_PTE_PCF", value: pcf.into() })?;
    let shift = NV_MMU_VER3_PTE_ADDRESS_SHIFT;
    let page = match field(&e, NV_MMU_VER3_PTE_APERTURE) as u32 {
        NV_MMU_VER3_PTE_APERTURE_VIDEO_MEMORY => {
            if above_video(&e, NV_MMU_VER3_PTE_ADDRESS_SYS, NV_MMU_VER3_PTE_ADDRESS_VID) != 0 {
                return Err(EntryError::BeyondVideoField { field: "NV_MMU_VER3_PTE_ADDRESS_VID", raw });
            }
            PhysAddr { aperture: PhysAperture::Video, addr: field(&e, NV_MMU_VER3_PTE_ADDRESS_VID) << shift }
        }
        NV_MMU_VER3_PTE_APERTURE_PEER_MEMORY => PhysAddr {
            aperture: PhysAperture::Peer(field(&e, NV_MMU_VER3_PTE_PEER_ID) as u8),
            addr: field(&e, NV_MMU_VER3_PTE_ADDRESS_PEER) << shift,
        },
        NV_MMU_VER3_PTE_APERTURE_SYSTEM_COHERENT_MEMORY => {
            PhysAddr { aperture: PhysAperture::SystemCoherent, addr: field(&e, NV_MMU_VER3_PTE_ADDRESS_SYS) << shift }
        }
        NV_MMU_VER3_PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY => PhysAddr {
            aperture: PhysAperture::SystemNonCoherent,
            addr: field(&e, NV_MMU_VER3_PTE_ADDRESS_SYS) << shift,
        },
        other => return Err(EntryError::Undefined { field: "NV_MMU_VER3_PTE_APERTURE", value: other.into() }),
    };
    Ok(PteState::Valid(Pte { page, attrs: PteAttrs { kind: field(&e, NV_MMU_VER3_PTE_KIND) as u8, ..attrs } }))
}

#[cfg(test)]
mod tests {
    //! The model's decoders against the driver's encoders (`nvgpu::mm`), against raw entries
    //! written by hand from `dev_mmu.h`, and against encodings a driver could get wrong.
    use super::*;
    use nvgpu::hw::FactValue;
    use nvgpu::mm::{self as driver, MmuFormat};

    const FORMATS: [(MmuFormat, GmmuFormat); 3] = [
        (MmuFormat::VER2, GmmuFormat::Ver2),
        (MmuFormat::VER2_512M, GmmuFormat::Ver2Pages512M),
        (MmuFormat::VER3, GmmuFormat::Ver3),
    ];

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn bit(&mut self) -> bool {
            self.next() & 1 != 0
        }
    }

    fn model_table(t: driver::TableAddress) -> TableAddress {
        t.into()
    }

    fn model_page(aperture: driver::Aperture, addr: u64) -> PhysAddr {
        let aperture = match aperture {
            driver::Aperture::Video => PhysAperture::Video,
            driver::Aperture::SystemCoherent => PhysAperture::SystemCoherent,
            driver::Aperture::SystemNonCoherent => PhysAperture::SystemNonCoherent,
            driver::Aperture::Peer(p) => PhysAperture::Peer(p),
        };
        PhysAddr { aperture, addr }
    }

    #[test]
    fn the_model_reads_what_the_driver_wrote() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for (driver_format, model) in FORMATS {
            let v3 = model == GmmuFormat::Ver3;
            let mut checked = 0;
            for _ in 0..4000 {
                let aperture = match rng.next() % 4 {
                    0 => driver::Aperture::Video,
                    1 => driver::Aperture::SystemCoherent,
                    2 => driver::Aperture::SystemNonCoherent,
                    _ => driver::Aperture::Peer((rng.next() % 8) as u8),
                };
                let address_bits = if aperture == driver::Aperture::Video { 36 } else { 47 };
                let address = (rng.next() & ((1u64 << address_bits) - 1)) & !0xfff;
                let attrs = driver::PteAttrs {
                    read_only: rng.bit(),
                    atomic_disable: rng.bit(),
                    privileged: rng.bit(),
                    volatile: rng.bit(),
                    access_counting_disabled: v3 && rng.bit(),
                    kind: (rng.next() % 16) as u8,
                };
                let Ok(raw) = driver_format.encode_pte(&driver::Pte { aperture, address, attrs }) else { continue };
                let expected = Pte {
                    page: model_page(aperture, address),
                    attrs: PteAttrs {
                        read_only: attrs.read_only,
                        atomic_disable: attrs.atomic_disable,
                        privileged: attrs.privileged,
                        volatile: attrs.volatile,
                        access_counting_disabled: attrs.access_counting_disabled,
                        kind: attrs.kind,
                    },
                };
                assert_eq!(model.pte(raw), Ok(PteState::Valid(expected)), "{model:?} PTE {raw:#x}");
                assert!(model.is_pte(raw));
                checked += 1;

                let table = |rng: &mut Rng, align: u64| {
                    let aperture = match rng.next() % 3 {
                        0 => driver::TableAperture::Video,
                        1 => driver::TableAperture::SystemCoherent,
                        _ => driver::TableAperture::SystemNonCoherent,
                    };
                    let bits = if aperture == driver::TableAperture::Video { 36 } else { 47 };
                    driver::TableAddress { aperture, address: (rng.next() & ((1u64 << bits) - 1)) & !(align - 1) }
                };
                let next = table(&mut rng, 4096);
                let pde = driver_format.encode_pde(Some(next)).unwrap();
                assert_eq!(model.pde(pde), Ok(Pde::Table(model_table(next))), "{model:?} PDE {pde:#x}");
                let dual = driver::DualPde {
                    big: rng.bit().then(|| table(&mut rng, 256)),
                    small: rng.bit().then(|| table(&mut rng, 4096)),
                };
                let raw = driver_format.encode_dual_pde(dual).unwrap();
                assert!(!model.is_pte(raw[0]));
                assert_eq!(
                    model.dual_pde(raw),
                    Ok(DualPde { big: dual.big.map(model_table), small: dual.small.map(model_table) }),
                    "{model:?} dual PDE {raw:x?}"
                );
            }
            assert!(checked > 1000, "{model:?}: {checked} PTEs");
            assert_eq!(model.pde(driver_format.encode_pde(None).unwrap()), Ok(Pde::Invalid));
            assert_eq!(model.pte(driver_format.sparse_pte()), Ok(PteState::Sparse));
            assert_eq!(model.pte(driver_format.unmapped_big_pte()), Ok(PteState::UnmappedBig));
            assert_eq!(model.pte(0), Ok(PteState::Invalid));
        }
    }

    #[test]
    fn the_geometry_is_the_drivers() {
        for (driver_format, model) in FORMATS {
            let levels = driver_format.levels();
            let ours: alloc::vec::Vec<&Level> = model.directories().iter().chain(model.lower_levels()).collect();
            assert_eq!(levels.len(), ours.len(), "{model:?}");
            for (index, (d, m)) in levels.iter().zip(ours).enumerate() {
                assert_eq!((d.va_bit_hi, d.va_bit_lo, u64::from(d.entry_size)), (m.va_hi, m.va_lo, m.entry_bytes));
                let size = driver_format.level_page_size(index).filter(|_| index < levels.len() - 2);
                let ours = m.pte.map(PageSize::bytes);
                assert_eq!(size.map(|s| s.bytes()), ours, "{model:?} level {}", d.name);
            }
            assert_eq!(model.va_bits(), driver_format.va_bits());
        }
    }

    /// Raw entries composed by hand from `dev_mmu.h`'s field positions and values.
    #[test]
    fn hand_written_entries_from_the_header() {
        let drv = |f: MmuFormat, raw| f.decode_pte(raw).unwrap();
        // v2: VALID, APERTURE=SYSTEM_COHERENT (2) at 2:1, VOL (3), READ_ONLY (6), frame 0x12345
        // in ADDRESS_SYS (53:8), KIND 0x06 at 63:56.
        let raw = 1 | 2 << 1 | 1 << 3 | 1 << 6 | 0x12345 << 8 | 0x06 << 56;
        let want = Pte {
            page: PhysAddr { aperture: PhysAperture::SystemCoherent, addr: 0x1234_5000 },
            attrs: PteAttrs { read_only: true, volatile: true, kind: 6, ..Default::default() },
        };
        assert_eq!(GmmuFormat::Ver2.pte(raw), Ok(PteState::Valid(want)));
        let driver::PteState::Valid(d) = drv(MmuFormat::VER2, raw) else { panic!("driver disagrees") };
        assert_eq!(
            (d.aperture, d.address, d.attrs.read_only, d.attrs.volatile),
            (driver::Aperture::SystemCoherent, 0x1234_5000, true, true)
        );
        // v2 peer 5: APERTURE=PEER (1), peer id at 35:33, frame in ADDRESS_VID (32:8).
        let raw = 1 | 1 << 1 | 5 << 33 | 0x100 << 8;
        let want = PhysAddr { aperture: PhysAperture::Peer(5), addr: 0x10_0000 };
        assert!(matches!(GmmuFormat::Ver2.pte(raw), Ok(PteState::Valid(p)) if p.page == want));
        assert!(
            matches!(drv(MmuFormat::VER2, raw), driver::PteState::Valid(p) if p.aperture == driver::Aperture::Peer(5))
        );
        // v3: VALID, APERTURE=VIDEO (0), PCF 0x0d = REGULAR_RO_NO_ATOMIC_UNCACHED_ACE at 7:3,
        // KIND 6 at 11:8, address 0x40_0000 in place (39:12).
        let raw = 1 | 0x0d << 3 | 6 << 8 | 0x40_0000;
        let want = Pte {
            page: PhysAddr { aperture: PhysAperture::Video, addr: 0x40_0000 },
            attrs: PteAttrs { read_only: true, atomic_disable: true, volatile: true, kind: 6, ..Default::default() },
        };
        assert_eq!(GmmuFormat::Ver3.pte(raw), Ok(PteState::Valid(want)));
        let driver::PteState::Valid(d) = drv(MmuFormat::VER3, raw) else { panic!("driver disagrees") };
        assert_eq!(
            (d.address, d.attrs.read_only, d.attrs.atomic_disable, d.attrs.volatile),
            (0x40_0000, true, true, true)
        );
        // v2 PDE: APERTURE=VIDEO (1), VOL, frame 0x2 in ADDRESS_VID.
        let raw = 1 << 1 | 1 << 3 | 0x2 << 8;
        assert_eq!(GmmuFormat::Ver2.pde(raw), Ok(Pde::Table(TableAddress::video(0x2000))));
        assert_eq!(MmuFormat::VER2.decode_pde(raw).unwrap().map(|t| t.address), Some(0x2000));
        // v2 dual PDE: big in VRAM at 0x6000 (ADDRESS_BIG_VID 32:4, >> 8), small in coherent
        // system memory at 0x5000 (APERTURE_SMALL 66:65 = 2, ADDRESS_SMALL_SYS 117:72, >> 12).
        let raw = [1 << 1 | 0x60 << 4, 2 << 1 | 0x5 << 8];
        let want = DualPde {
            big: Some(TableAddress::video(0x6000)),
            small: Some(TableAddress { aperture: TableAperture::SystemCoherent, address: 0x5000 }),
        };
        assert_eq!(GmmuFormat::Ver2.dual_pde(raw), Ok(want));
        let d = MmuFormat::VER2.decode_dual_pde(raw).unwrap();
        assert_eq!((d.big.map(|t| t.address), d.small.map(|t| t.address)), (Some(0x6000), Some(0x5000)));
        // v3 dual PDE: small at 0x7000 in VRAM: APERTURE_SMALL (66:65) = 1, PCF_SMALL (69:67) = 1,
        // ADDRESS_SMALL 115:76, i.e. bits 51:12 of the high word in place.
        let raw = [0, 1 << 1 | 1 << 3 | 0x7000];
        assert_eq!(GmmuFormat::Ver3.dual_pde(raw), Ok(DualPde { big: None, small: Some(TableAddress::video(0x7000)) }));
    }

    /// Every `NV_MMU_VER3_PTE_PCF_*` name of a valid PTE says which attributes it grants; the
    /// model's bitwise reading gives each one exactly those.
    #[test]
    fn every_v3_pcf_name_reads_as_it_says() {
        let mut seen = 0u32;
        for fact in v3::FACTS.iter().flat_map(|g| g.iter()).flat_map(|f| f.iter()) {
            let Some(rest) = fact.name.strip_prefix("NV_MMU_VER3_PTE_PCF_") else { continue };
            if !(rest.ends_with("_ACE") || rest.ends_with("_ACD")) {
                continue;
            }
            let FactValue::Number(value) = fact.value else { panic!("{}", fact.name) };
            let want = PteAttrs {
                privileged: rest.starts_with("PRIVILEGE_"),
                read_only: rest.contains("_RO_"),
                atomic_disable: rest.contains("_NO_ATOMIC_"),
                volatile: rest.contains("_UNCACHED_"),
                access_counting_disabled: rest.ends_with("_ACD"),
                kind: 0,
            };
            assert_eq!(v3_valid_pcf(value as u32), Some(want), "{}", fact.name);
            seen |= 1 << value;
        }
        assert_eq!(seen, u32::MAX, "all 32 valid-PTE PCFs are named");
        assert_eq!(v3_valid_pcf(32), None);
    }

    /// Encodings a driver could get wrong, and what the model makes of them.
    #[test]
    fn wrong_encodings_are_caught() {
        // The aperture one field too high (bits 4:3 instead of 2:1): the PDE reads INVALID.
        let right = MmuFormat::VER2
            .encode_pde(Some(driver::TableAddress { aperture: driver::TableAperture::Video, address: 0x2000 }))
            .unwrap();
        let aperture = right >> 1 & 3;
        let wrong = (right & !0b110) | aperture << 3;
        assert_eq!(GmmuFormat::Ver2.pde(right), Ok(Pde::Table(TableAddress::video(0x2000))));
        assert_eq!(GmmuFormat::Ver2.pde(wrong), Ok(Pde::Invalid));
        // A video PDE whose address went into the system-memory field's upper bits.
        let wide = (1 << 1) | (1u64 << 40);
        assert!(matches!(GmmuFormat::Ver2.pde(wide), Err(EntryError::BeyondVideoField { .. })));
        // A v3 video PTE with a system address's high bits: refused.
        let raw = 1 | (1u64 << 45);
        assert!(matches!(GmmuFormat::Ver3.pte(raw), Err(EntryError::BeyondVideoField { .. })));
        // A v3 invalid PTE with a PCF the header gives no meaning without VALID.
        assert!(matches!(GmmuFormat::Ver3.pte(0x4 << 3), Err(EntryError::Undefined { .. })));
        // A v3 PDE PCF of 4..7.
        let raw = 1 << 1 | 5 << 3 | 0x1000;
        assert!(matches!(GmmuFormat::Ver3.pde(raw), Err(EntryError::Undefined { .. })));
        // A v2-encoded PTE given to a v3 reader (a driver using the wrong format for the chip):
        // VOL and PRIVILEGE land in the PCF, the frame number is shifted; the page differs.
        let v2 = MmuFormat::VER2
            .encode_pte(&driver::Pte {
                aperture: driver::Aperture::SystemCoherent,
                address: 0x8000_0000,
                attrs: driver::PteAttrs::default(),
            })
            .unwrap();
        assert!(!matches!(GmmuFormat::Ver3.pte(v2), Ok(PteState::Valid(p)) if p.page.addr == 0x8000_0000));
    }

    #[test]
    fn decoding_never_panics() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let x = rng.next();
            for (_, model) in FORMATS {
                let _ = model.pte(x);
                let _ = model.pde(x);
                let _ = model.dual_pde([x, x.rotate_left(17)]);
            }
        }
    }
}
