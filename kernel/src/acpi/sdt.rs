//! The System Description Table header shared by every ACPI table, and loading one table from
//! physical memory with its length and checksum checked (ACPI 6.5 §5.2.6 "System Description
//! Table Header").

use core::fmt;

use super::bytes::{checksum, AsciiField, LeBytes};
use super::{map_exact, AcpiError, MapTarget, PhysMapper};

/// A table's 4-byte signature, as the firmware wrote it (not necessarily ASCII).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Signature(pub [u8; 4]);

impl Signature {
    /// Root System Description Table, 32-bit entries (ACPI 6.5 §5.2.7).
    pub const RSDT: Signature = Signature(*b"RSDT");
    /// Extended System Description Table, 64-bit entries (ACPI 6.5 §5.2.8).
    pub const XSDT: Signature = Signature(*b"XSDT");
    /// Multiple APIC Description Table (ACPI 6.5 §5.2.12); its signature is "APIC".
    pub const MADT: Signature = Signature(*b"APIC");
    /// PCI Express memory-mapped configuration (PCI Firmware Specification 3.x §4.1.2).
    pub const MCFG: Signature = Signature(*b"MCFG");
    /// IA-PC HPET description table (IA-PC HPET Specification 1.0a §3.2.4).
    pub const HPET: Signature = Signature(*b"HPET");
    /// Intel VT-d DMA remapping (VT-d Architecture Specification §8.1).
    pub const DMAR: Signature = Signature(*b"DMAR");
    /// AMD I/O virtualization (AMD IOMMU Specification 48882, §5.2).
    pub const IVRS: Signature = Signature(*b"IVRS");
    /// Fixed ACPI Description Table (ACPI 6.5 §5.2.9); its signature is "FACP".
    pub const FADT: Signature = Signature(*b"FACP");
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &byte in &self.0 {
            let shown = if byte.is_ascii_graphic() || byte == b' ' { byte as char } else { '?' };
            fmt::Write::write_char(f, shown)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

/// Bytes in the System Description Table header (ACPI 6.5 §5.2.6).
pub const SDT_HEADER_LEN: usize = 36;

/// Largest table this parser will map. A table header is input: a corrupt length must not make
/// us checksum gigabytes of whatever lies behind it. The tables read here are far smaller (an
/// MADT for 4096 CPUs in x2APIC entries is 64 KiB).
pub const MAX_TABLE_LEN: u32 = 1 << 20;

// The `acpi` crate declares the same header; its layout must agree with our offsets.
const _: () = assert!(core::mem::size_of::<acpi::sdt::SdtHeader>() == SDT_HEADER_LEN);
const _: () = assert!(core::mem::offset_of!(acpi::sdt::SdtHeader, length) == 4);
const _: () = assert!(core::mem::offset_of!(acpi::sdt::SdtHeader, oem_revision) == 24);

/// The System Description Table header (ACPI 6.5 §5.2.6), decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdtHeader {
    pub signature: Signature,
    /// Length of the whole table, header included.
    pub length: u32,
    pub revision: u8,
    pub checksum: u8,
    pub oem_id: [u8; 6],
    pub oem_table_id: [u8; 8],
    pub oem_revision: u32,
    pub creator_id: [u8; 4],
    pub creator_revision: u32,
}

impl SdtHeader {
    /// Decodes the first 36 bytes of `bytes`; `None` when there are fewer.
    pub fn parse(bytes: &[u8]) -> Option<SdtHeader> {
        Some(SdtHeader {
            signature: Signature(bytes.array_at(0)?),
            length: bytes.u32_at(4)?,
            revision: bytes.u8_at(8)?,
            checksum: bytes.u8_at(9)?,
            oem_id: bytes.array_at(10)?,
            oem_table_id: bytes.array_at(16)?,
            oem_revision: bytes.u32_at(24)?,
            creator_id: bytes.array_at(28)?,
            creator_revision: bytes.u32_at(32)?,
        })
    }
}

/// One table, checked: the header's length covers the bytes, they sum to zero, and the length
/// is at least what the table's fixed part needs. Borrowed from the mapper's memory.
#[derive(Clone, Copy, Debug)]
pub struct Table<'a> {
    /// Physical address of the table's first byte (for error messages).
    pub phys: u64,
    pub header: SdtHeader,
    /// The whole table, header included; `bytes.len() == header.length`.
    pub bytes: &'a [u8],
}

impl<'a> Table<'a> {
    /// Checks an in-memory table: header present, `min_len <= length <= MAX_TABLE_LEN`, the
    /// slice holds `length` bytes (bytes after them are not part of the table) and those bytes
    /// sum to zero.
    pub fn from_bytes(phys: u64, bytes: &'a [u8], min_len: usize) -> Result<Table<'a>, AcpiError> {
        let Some(header) = SdtHeader::parse(bytes) else {
            return Err(AcpiError::Truncated {
                signature: Signature(bytes.array_at(0).unwrap_or(*b"????")),
                phys,
                length: SDT_HEADER_LEN as u32,
                available: bytes.len(),
            });
        };
        check_length(&header, phys, min_len)?;
        let Some(bytes) = bytes.get(..header.length as usize) else {
            return Err(AcpiError::Truncated {
                signature: header.signature,
                phys,
                length: header.length,
                available: bytes.len(),
            });
        };
        let sum = checksum(bytes);
        if sum != 0 {
            return Err(AcpiError::BadChecksum { signature: header.signature, phys, sum });
        }
        Ok(Table { phys, header, bytes })
    }
}

fn check_length(header: &SdtHeader, phys: u64, min_len: usize) -> Result<(), AcpiError> {
    let min = min_len.max(SDT_HEADER_LEN) as u32;
    if header.length < min || header.length > MAX_TABLE_LEN {
        return Err(AcpiError::BadLength {
            signature: header.signature,
            phys,
            length: header.length,
            min,
            max: MAX_TABLE_LEN,
        });
    }
    Ok(())
}

/// Reads just the header of the table at `phys`.
pub fn read_header<M: PhysMapper + ?Sized>(mapper: &M, phys: u64) -> Result<SdtHeader, AcpiError> {
    let bytes = map_exact(mapper, phys, SDT_HEADER_LEN).ok_or(AcpiError::Unmapped {
        target: MapTarget::TableHeader,
        phys,
        len: SDT_HEADER_LEN as u64,
    })?;
    SdtHeader::parse(bytes).ok_or(AcpiError::Unmapped {
        target: MapTarget::TableHeader,
        phys,
        len: SDT_HEADER_LEN as u64,
    })
}

/// Maps and checks the table at `phys`: its signature must be `expected` and its length at
/// least `min_len` (the table's fixed part); then the whole table is mapped and checksummed.
pub fn load_table<'m, M: PhysMapper + ?Sized>(
    mapper: &'m M,
    phys: u64,
    expected: Signature,
    min_len: usize,
) -> Result<Table<'m>, AcpiError> {
    let header = read_header(mapper, phys)?;
    if header.signature != expected {
        return Err(AcpiError::BadSignature { phys, expected, found: header.signature });
    }
    check_length(&header, phys, min_len)?;
    let bytes = map_exact(mapper, phys, header.length as usize).ok_or(AcpiError::Unmapped {
        target: MapTarget::Table(header.signature),
        phys,
        len: u64::from(header.length),
    })?;
    Table::from_bytes(phys, bytes, min_len)
}

/// OEM identification from a table header, shown as "OEMID TABLEID rev N".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Oem {
    pub id: [u8; 6],
    pub table_id: [u8; 8],
    pub revision: u32,
}

impl Oem {
    pub fn from_header(header: &SdtHeader) -> Oem {
        Oem { id: header.oem_id, table_id: header.oem_table_id, revision: header.oem_revision }
    }
}

impl fmt::Display for Oem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} rev {:#x}", AsciiField(&self.id), AsciiField(&self.table_id), self.revision)
    }
}
