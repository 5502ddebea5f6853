//! The Root System Description Pointer and the BIOS-area scan that finds it (ACPI 6.5 §5.2.5
//! "Root System Description Pointer (RSDP)", §5.2.5.1 "Finding the RSDP on IA-PC Systems",
//! §5.2.5.3 "Root System Description Pointer (RSDP) Structure").
//!
//! UEFI machines and PVH/Multiboot2 loaders hand the kernel the RSDP's address; only legacy
//! BIOS boots without one need the scan.

use core::fmt;

use super::bytes::{checksum, AsciiField, LeBytes};
use super::{map_exact, AcpiError, MapTarget, PhysMapper};

/// "RSD PTR " (with the trailing space), ACPI 6.5 §5.2.5.3.
pub const RSDP_SIGNATURE: [u8; 8] = *b"RSD PTR ";
/// Bytes covered by the first checksum: the ACPI 1.0 structure (§5.2.5.3, "Checksum").
pub const RSDP_V1_LEN: usize = 20;
/// Size of the ACPI 2.0+ structure, which the "Length" field must cover.
pub const RSDP_V2_LEN: usize = 36;
/// A sane upper bound for the RSDP "Length" field; the structure has been 36 bytes since ACPI
/// 2.0, and the extended checksum must not make us read far past it.
const RSDP_MAX_LEN: u32 = 4096;

// The `acpi` crate declares the same structure; its layout must agree with our offsets.
const _: () = assert!(core::mem::size_of::<acpi::rsdp::Rsdp>() == RSDP_V2_LEN);

/// Physical address of the BIOS Data Area word holding the EBDA's real-mode segment
/// (ACPI 6.5 §5.2.5.1: "the two-byte location 40:0Eh").
pub const EBDA_SEGMENT_POINTER: u64 = 0x40E;
/// How much of the EBDA is searched (§5.2.5.1: "the first 1 KB").
pub const EBDA_SEARCH_LEN: usize = 1024;
/// The BIOS read-only area searched second (§5.2.5.1: "0E0000h to 0FFFFFh").
pub const BIOS_AREA_START: u64 = 0xE_0000;
pub const BIOS_AREA_END_EXCLUSIVE: u64 = 0x10_0000;
/// The RSDP sits on a 16-byte boundary in either area (§5.2.5.1).
pub const RSDP_ALIGN: usize = 16;
/// Conventional memory ends at 640 KiB; an EBDA segment pointing elsewhere is garbage.
const CONVENTIONAL_MEMORY_END: u64 = 0xA_0000;

/// Where the RSDP says the root table is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootTable {
    /// ACPI 1.0 Root System Description Table, 32-bit entries.
    Rsdt(u32),
    /// ACPI 2.0+ Extended System Description Table, 64-bit entries.
    Xsdt(u64),
}

/// A checked RSDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rsdp {
    pub phys: u64,
    pub oem_id: [u8; 6],
    /// 0 for ACPI 1.0; 2 for ACPI 2.0 and later (§5.2.5.3, "Revision").
    pub revision: u8,
    pub rsdt_address: u32,
    /// Present for revision >= 2; may still be zero on firmware that only fills the RSDT.
    pub xsdt_address: Option<u64>,
}

impl Rsdp {
    /// The root table to use: the XSDT when the RSDP has a non-zero one, else the RSDT
    /// (ACPI 6.5 §5.2.8: "An ACPI-compatible OS must use the XSDT if present").
    pub fn root_table(&self) -> Option<RootTable> {
        match (self.xsdt_address, self.rsdt_address) {
            (Some(xsdt), _) if xsdt != 0 => Some(RootTable::Xsdt(xsdt)),
            (_, rsdt) if rsdt != 0 => Some(RootTable::Rsdt(rsdt)),
            _ => None,
        }
    }
}

impl fmt::Display for Rsdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RSDP at {:#x}: revision {}, OEM {}", self.phys, self.revision, AsciiField(&self.oem_id))?;
        match self.root_table() {
            Some(RootTable::Xsdt(xsdt)) => write!(f, ", XSDT at {xsdt:#x}"),
            Some(RootTable::Rsdt(rsdt)) => write!(f, ", RSDT at {rsdt:#x}"),
            None => write!(f, ", no root table"),
        }
    }
}

/// Reads and checks the RSDP at `phys`: signature, the ACPI 1.0 checksum over the first 20
/// bytes, and for revision >= 2 the "Length" field and the extended checksum over that many bytes.
pub fn parse_rsdp<M: PhysMapper + ?Sized>(mapper: &M, phys: u64) -> Result<Rsdp, AcpiError> {
    let unmapped = |len: usize| AcpiError::Unmapped { target: MapTarget::Rsdp, phys, len: len as u64 };
    let v1 = map_exact(mapper, phys, RSDP_V1_LEN).ok_or(unmapped(RSDP_V1_LEN))?;
    if v1.array_at::<8>(0) != Some(RSDP_SIGNATURE) {
        return Err(AcpiError::RsdpBadSignature { phys });
    }
    let sum = checksum(v1);
    if sum != 0 {
        return Err(AcpiError::RsdpBadChecksum { phys, sum });
    }
    let oem_id = v1.array_at(9).ok_or(unmapped(RSDP_V1_LEN))?;
    let revision = v1.u8_at(15).ok_or(unmapped(RSDP_V1_LEN))?;
    let rsdt_address = v1.u32_at(16).ok_or(unmapped(RSDP_V1_LEN))?;
    // Revision 1 was never defined; ACPI 2.0 introduced revision 2 and the extended fields.
    if revision < 2 {
        return Ok(Rsdp { phys, oem_id, revision, rsdt_address, xsdt_address: None });
    }

    let v2 = map_exact(mapper, phys, RSDP_V2_LEN).ok_or(unmapped(RSDP_V2_LEN))?;
    let length = v2.u32_at(20).ok_or(unmapped(RSDP_V2_LEN))?;
    if !(RSDP_V2_LEN as u32..=RSDP_MAX_LEN).contains(&length) {
        return Err(AcpiError::RsdpBadLength { phys, length });
    }
    let whole = map_exact(mapper, phys, length as usize).ok_or(unmapped(length as usize))?;
    let sum = checksum(whole);
    if sum != 0 {
        return Err(AcpiError::RsdpBadExtendedChecksum { phys, sum });
    }
    let xsdt_address = v2.u64_at(24).ok_or(unmapped(RSDP_V2_LEN))?;
    Ok(Rsdp { phys, oem_id, revision, rsdt_address, xsdt_address: Some(xsdt_address) })
}

/// Finds the RSDP on a legacy BIOS machine (ACPI 6.5 §5.2.5.1): first the first KiB of the
/// Extended BIOS Data Area, whose real-mode segment is the word at 0x40E, then 0xE0000..0xFFFFF,
/// each on 16-byte boundaries. A candidate counts only with a valid checksum (and extended
/// checksum for revision >= 2); the scan goes on past bad ones. Returns the RSDP's physical
/// address.
///
/// On UEFI the RSDP comes from the EFI configuration table instead and may be anywhere.
pub fn find_rsdp_in_bios_areas<M: PhysMapper + ?Sized>(mapper: &M) -> Result<u64, AcpiError> {
    // An unreadable or implausible EBDA pointer only skips the EBDA; the BIOS area may still
    // hold the RSDP (QEMU's SeaBIOS puts it there).
    let ebda = map_exact(mapper, EBDA_SEGMENT_POINTER, 2)
        .and_then(|word| word.u16_at(0))
        .map(|segment| u64::from(segment) << 4)
        .filter(|&base| {
            base > 0x400 && base.checked_add(EBDA_SEARCH_LEN as u64).is_some_and(|end| end <= CONVENTIONAL_MEMORY_END)
        });
    if let Some(base) = ebda {
        if let Some(found) = scan_area(mapper, base, EBDA_SEARCH_LEN) {
            return Ok(found);
        }
    }

    let bios_len = (BIOS_AREA_END_EXCLUSIVE - BIOS_AREA_START) as usize;
    if map_exact(mapper, BIOS_AREA_START, bios_len).is_none() {
        return Err(AcpiError::Unmapped { target: MapTarget::BiosArea, phys: BIOS_AREA_START, len: bios_len as u64 });
    }
    scan_area(mapper, BIOS_AREA_START, bios_len).ok_or(AcpiError::RsdpNotFound)
}

/// The first 16-byte-aligned address in `[start, start + len)` holding a valid RSDP.
fn scan_area<M: PhysMapper + ?Sized>(mapper: &M, start: u64, len: usize) -> Option<u64> {
    let area = map_exact(mapper, start, len)?;
    // Align relative to physical address 0, not to the area's start.
    let aligned = start.checked_next_multiple_of(RSDP_ALIGN as u64)?;
    let first = usize::try_from(aligned.checked_sub(start)?).ok()?;
    (first..len)
        .step_by(RSDP_ALIGN)
        .filter(|&offset| area.array_at::<8>(offset) == Some(RSDP_SIGNATURE))
        // Inside the mapped area, so the address does not overflow.
        .filter_map(|offset| start.checked_add(offset as u64))
        // A candidate may run past the area's end; parse_rsdp maps what it needs itself.
        .find(|&phys| parse_rsdp(mapper, phys).is_ok())
}
