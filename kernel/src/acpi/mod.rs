//! ACPI platform tables: from the RSDP to what the kernel needs before PCI and SMP: the CPUs and
//! interrupt controllers (MADT), the PCIe ECAM windows (MCFG) and the HPET. Follows the ACPI
//! Specification 6.5, chapter 5.2 "ACPI System Description Tables"; MCFG follows the PCI
//! Firmware Specification 3.x and HPET the IA-PC HPET Specification 1.0a.
//!
//! Every byte here is input. Tables are read through [`PhysMapper`], which can say "not mapped";
//! every length is bounded and every read checked, so a corrupt table gives an [`AcpiError`] or
//! a warning line, never a panic or a hang. A missing or rejected MADT/MCFG/HPET is not fatal:
//! [`parse_platform`] leaves it out and says so in `warnings`, and the kernel falls back to one
//! CPU, port I/O config space or the PIT.
//!
//! Why not the `acpi` crate's walkers: with default features off (its `allocator_api` feature
//! needs nightly), 5.2 still offers `AcpiTables::from_rsdp`, `find_table`, `Madt::entries`,
//! `Mcfg::entries` and `HpetInfo::new`, but they map memory through `AcpiHandler`, which cannot
//! fail, and trust lengths (see the notes in `madt.rs`, `mcfg.rs`, `hpet.rs`). So the tables are
//! decoded here from bytes, and the crate's declarations of the same structures are used as a
//! compile-time cross-check of our offsets.

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

mod bytes;
pub mod dmar;
pub mod hpet;
pub mod ivrs;
pub mod madt;
pub mod mcfg;
pub mod rsdp;
pub mod sdt;

#[cfg(test)]
mod real_tables_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

pub use hpet::{HpetInfo, PageProtection};
pub use madt::{
    Cpu, InterruptOverride, IoApic, LocalApicNmi, LocalInterrupt, MadtInfo, NmiProcessor, NmiSource, Polarity,
    TriggerMode,
};
pub use mcfg::McfgSegment;
pub use rsdp::{find_rsdp_in_bios_areas, parse_rsdp, RootTable, Rsdp};
pub use sdt::{Oem, SdtHeader, Signature, Table};

/// Read access to physical memory, for firmware tables.
///
/// The kernel implements it over its physical-memory offset mapping; host tests over buffers.
/// The `unsafe` of turning a mapping into a slice lives in the implementation, e.g.:
/// ```text
/// impl PhysMapper for OffsetMapping {
///     fn map(&self, phys: u64, len: usize) -> Option<&[u8]> {
///         let end = phys.checked_add(len as u64)?;
///         if !self.is_firmware_or_ram(phys, end) {
///             return None;
///         }
///         // SAFETY: [phys, end) is RAM or ACPI memory, mapped at `self.offset` for the kernel's
///         // lifetime, and nothing writes it while the slice is borrowed.
///         Some(unsafe { core::slice::from_raw_parts((self.offset + phys) as *const u8, len) })
///     }
/// }
/// ```
pub trait PhysMapper {
    /// The `len` bytes of physical memory starting at `phys`, readable for as long as `self` is
    /// borrowed; `None` when any of them is not memory this mapper can read (past the end of
    /// RAM, or MMIO that reading could disturb). Must return exactly `len` bytes.
    fn map(&self, phys: u64, len: usize) -> Option<&[u8]>;
}

impl<T: PhysMapper + ?Sized> PhysMapper for &T {
    fn map(&self, phys: u64, len: usize) -> Option<&[u8]> {
        (**self).map(phys, len)
    }
}

/// Calls `mapper.map` and holds it to its contract of exactly `len` bytes.
pub(crate) fn map_exact<M: PhysMapper + ?Sized>(mapper: &M, phys: u64, len: usize) -> Option<&[u8]> {
    mapper.map(phys, len)?.get(..len)
}

/// What a failed mapping was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapTarget {
    Rsdp,
    /// The 36-byte header of a table whose signature is not known yet.
    TableHeader,
    /// A whole table, after its header was read.
    Table(Signature),
    /// The BIOS read-only area 0xE0000..0xFFFFF.
    BiosArea,
}

impl fmt::Display for MapTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapTarget::Rsdp => f.write_str("RSDP"),
            MapTarget::TableHeader => f.write_str("table header"),
            MapTarget::Table(signature) => write!(f, "{signature} table"),
            MapTarget::BiosArea => f.write_str("BIOS area"),
        }
    }
}

/// Why a table (or the whole walk) was rejected. Each carries where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AcpiError {
    /// No valid RSDP in the EBDA or 0xE0000..0xFFFFF.
    RsdpNotFound,
    /// The DMAR's remapping structures do not decode.
    Dmar(dmar::DmarError),
    /// The IVRS's blocks do not decode.
    Ivrs(ivrs::IvrsError),
    /// The mapper cannot read `len` bytes at `phys`: the pointer or a length is wrong.
    Unmapped {
        target: MapTarget,
        phys: u64,
        len: u64,
    },
    RsdpBadSignature {
        phys: u64,
    },
    /// The first 20 bytes do not sum to zero (`sum` is what they sum to).
    RsdpBadChecksum {
        phys: u64,
        sum: u8,
    },
    /// Revision >= 2 and the `Length` bytes do not sum to zero.
    RsdpBadExtendedChecksum {
        phys: u64,
        sum: u8,
    },
    /// Revision >= 2 with a `Length` field below 36 or implausibly large.
    RsdpBadLength {
        phys: u64,
        length: u32,
    },
    /// The RSDP has neither an XSDT nor an RSDT address.
    NoRootTable {
        rsdp_phys: u64,
    },
    /// A table pointer leads to a table with another signature.
    BadSignature {
        phys: u64,
        expected: Signature,
        found: Signature,
    },
    /// The header's `Length` is below the table's fixed part or above [`sdt::MAX_TABLE_LEN`].
    BadLength {
        signature: Signature,
        phys: u64,
        length: u32,
        min: u32,
        max: u32,
    },
    /// Fewer bytes than the header's `Length` (for tables given as byte slices).
    Truncated {
        signature: Signature,
        phys: u64,
        length: u32,
        available: usize,
    },
    /// The table's bytes sum to `sum`, not zero.
    BadChecksum {
        signature: Signature,
        phys: u64,
        sum: u8,
    },
    /// An MADT entry shorter than its type's structure (length 0 or 1 included).
    MadtEntryTooShort {
        phys: u64,
        offset: usize,
        entry_type: u8,
        length: u8,
        min: u8,
    },
    /// An MADT entry running past the table's end.
    MadtEntryOverrun {
        phys: u64,
        offset: usize,
        entry_type: u8,
        length: u8,
        remaining: usize,
    },
    /// The HPET block is not in system memory (Generic Address Structure space `address_space`).
    HpetNotInMemory {
        phys: u64,
        address_space: u8,
    },
    HpetNoBaseAddress {
        phys: u64,
    },
}

impl fmt::Display for AcpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AcpiError::Dmar(e) => write!(f, "{e}"),
            AcpiError::Ivrs(e) => write!(f, "{e}"),
            AcpiError::RsdpNotFound => {
                f.write_str("no RSDP with a valid checksum in the EBDA or 0xE0000..0xFFFFF")
            }
            AcpiError::Unmapped { target, phys, len } => {
                write!(f, "{target} at {phys:#x} ({len} bytes) is not in readable memory")
            }
            AcpiError::RsdpBadSignature { phys } => write!(f, "RSDP at {phys:#x}: signature is not \"RSD PTR \""),
            AcpiError::RsdpBadChecksum { phys, sum } => {
                write!(f, "RSDP at {phys:#x}: checksum of the first 20 bytes is {sum:#04x}, not 0")
            }
            AcpiError::RsdpBadExtendedChecksum { phys, sum } => {
                write!(f, "RSDP at {phys:#x}: extended checksum is {sum:#04x}, not 0")
            }
            AcpiError::RsdpBadLength { phys, length } => {
                write!(f, "RSDP at {phys:#x}: length {length} is not a valid ACPI 2.0+ RSDP length")
            }
            AcpiError::NoRootTable { rsdp_phys } => {
                write!(f, "RSDP at {rsdp_phys:#x} has neither an XSDT nor an RSDT address")
            }
            AcpiError::BadSignature { phys, expected, found } => {
                write!(f, "table at {phys:#x}: signature {found}, expected {expected}")
            }
            AcpiError::BadLength { signature, phys, length, min, max } => {
                write!(f, "{signature} at {phys:#x}: length {length} outside {min}..={max}")
            }
            AcpiError::Truncated { signature, phys, length, available } => {
                write!(f, "{signature} at {phys:#x}: length {length} but only {available} bytes present")
            }
            AcpiError::BadChecksum { signature, phys, sum } => {
                write!(f, "{signature} at {phys:#x}: checksum is {sum:#04x}, not 0")
            }
            AcpiError::MadtEntryTooShort { phys, offset, entry_type, length, min } => write!(
                f,
                "MADT at {phys:#x}: entry at offset {offset:#x} (type {entry_type:#04x}) has length {length}, needs {min}"
            ),
            AcpiError::MadtEntryOverrun { phys, offset, entry_type, length, remaining } => write!(
                f,
                "MADT at {phys:#x}: entry at offset {offset:#x} (type {entry_type:#04x}, length {length}) runs past the table end ({remaining} bytes left)"
            ),
            AcpiError::HpetNotInMemory { phys, address_space } => {
                write!(f, "HPET at {phys:#x}: timer block is in address space {address_space}, not system memory")
            }
            AcpiError::HpetNoBaseAddress { phys } => write!(f, "HPET at {phys:#x}: timer block address is 0"),
        }
    }
}

/// One table the root table lists, by its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableRef {
    pub signature: Signature,
    pub phys: u64,
    pub length: u32,
    pub revision: u8,
}

/// What the kernel takes from ACPI before PCI and SMP bring-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlatformTables {
    pub rsdp: Rsdp,
    /// The root table actually walked (XSDT, or RSDT on ACPI 1.0 or when the XSDT was bad).
    pub root: RootTable,
    /// OEM of the root table's header.
    pub oem: Oem,
    /// Every table the root lists whose header could be read, in root-table order.
    pub tables: Vec<TableRef>,
    /// `None` when absent or rejected: boot the BSP only, with the 8259 PIC.
    pub madt: Option<MadtInfo>,
    /// Empty when absent or rejected: use configuration ports 0xCF8/0xCFC.
    pub mcfg: Vec<McfgSegment>,
    /// `None` when absent or rejected: time with the PIT.
    pub hpet: Option<HpetInfo>,
    /// Intel VT-d's DMA remapping units (DMAR); `None` when absent or rejected: no IOMMU.
    pub dmar: Option<dmar::Dmar>,
    /// AMD-Vi's IOMMUs (IVRS); `None` when absent or rejected.
    pub ivrs: Option<ivrs::Ivrs>,
    /// Tables found but not used, and why.
    pub rejected: Vec<AcpiError>,
    /// One line each, for the boot log: everything skipped, rejected, missing or odd.
    pub warnings: Vec<String>,
}

impl fmt::Display for PlatformTables {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, phys) = match self.root {
            RootTable::Xsdt(phys) => ("XSDT", phys),
            RootTable::Rsdt(phys) => ("RSDT", u64::from(phys)),
        };
        write!(
            f,
            "ACPI: RSDP rev {} at {:#x}, {kind} at {phys:#x}, OEM {}, {} tables:",
            self.rsdp.revision,
            self.rsdp.phys,
            self.oem,
            self.tables.len()
        )?;
        for table in &self.tables {
            write!(f, " {}", table.signature)?;
        }
        Ok(())
    }
}

/// Walks the ACPI tables from the RSDP at `rsdp_phys` and decodes the MADT, MCFG and HPET.
///
/// Errors only when nothing can be found: a bad RSDP or an unreadable root table. Problems
/// with single tables drop that table into `rejected` and `warnings`.
pub fn parse_platform<M: PhysMapper + ?Sized>(mapper: &M, rsdp_phys: u64) -> Result<PlatformTables, AcpiError> {
    let rsdp = parse_rsdp(mapper, rsdp_phys)?;
    let mut warnings = Vec::new();
    let mut rejected = Vec::new();

    if rsdp.revision >= 2 && rsdp.xsdt_address == Some(0) {
        warnings.push(format!("RSDP revision {} has no XSDT; using the RSDT", rsdp.revision));
    }
    let root = rsdp.root_table().ok_or(AcpiError::NoRootTable { rsdp_phys })?;
    // Firmware that fills both keeps them in step; a broken XSDT is worth one more try.
    let (root, root_table) = match load_root(mapper, root) {
        Ok(table) => (root, table),
        Err(xsdt_error) => match root {
            RootTable::Xsdt(_) if rsdp.rsdt_address != 0 => {
                let rsdt = RootTable::Rsdt(rsdp.rsdt_address);
                let table = load_root(mapper, rsdt).map_err(|_| xsdt_error.clone())?;
                warnings.push(format!("{xsdt_error}; using the RSDT"));
                rejected.push(xsdt_error);
                (rsdt, table)
            }
            _ => return Err(xsdt_error),
        },
    };

    let mut platform = PlatformTables {
        rsdp,
        root,
        oem: Oem::from_header(&root_table.header),
        tables: Vec::new(),
        madt: None,
        mcfg: Vec::new(),
        hpet: None,
        dmar: None,
        ivrs: None,
        rejected,
        warnings,
    };

    let (entry_len, root_name) = match root {
        RootTable::Xsdt(_) => (8, "XSDT"),
        RootTable::Rsdt(_) => (4, "RSDT"),
    };
    let entries = root_table.bytes.get(sdt::SDT_HEADER_LEN..).unwrap_or(&[]);
    let trailing = entries.chunks_exact(entry_len).remainder().len();
    if trailing != 0 {
        platform.warnings.push(format!("{root_name}: {trailing} trailing bytes after the last whole entry; ignored"));
    }
    let mut mcfg_seen = false;
    for (index, entry) in entries.chunks_exact(entry_len).enumerate() {
        // A 4- or 8-byte little-endian pointer, widened to 64 bits.
        let mut pointer = [0u8; 8];
        pointer.iter_mut().zip(entry).for_each(|(to, from)| *to = *from);
        let phys = u64::from_le_bytes(pointer);
        if phys == 0 {
            platform.warnings.push(format!("{root_name} entry {index} is a null pointer; skipped"));
            continue;
        }
        let header = match sdt::read_header(mapper, phys) {
            Ok(header) => header,
            Err(error) => {
                platform.warnings.push(format!("{root_name} entry {index}: {error}; skipped"));
                platform.rejected.push(error);
                continue;
            }
        };
        platform.tables.push(TableRef {
            signature: header.signature,
            phys,
            length: header.length,
            revision: header.revision,
        });
        match header.signature {
            Signature::MADT => {
                if platform.madt.is_some() {
                    platform.warnings.push(format!("second MADT at {phys:#x} ignored"));
                    continue;
                }
                let parsed = sdt::load_table(mapper, phys, Signature::MADT, madt::MADT_FIXED_LEN)
                    .and_then(|table| MadtInfo::parse(&table, &mut platform.warnings));
                match parsed {
                    Ok(madt) => platform.madt = Some(madt),
                    Err(error) => platform.reject(error),
                }
            }
            Signature::MCFG => {
                if mcfg_seen {
                    platform.warnings.push(format!("second MCFG at {phys:#x} ignored"));
                    continue;
                }
                mcfg_seen = true;
                match sdt::load_table(mapper, phys, Signature::MCFG, mcfg::MCFG_FIXED_LEN) {
                    Ok(table) => platform.mcfg = mcfg::parse_mcfg(&table, &mut platform.warnings),
                    Err(error) => platform.reject(error),
                }
            }
            Signature::HPET => {
                // A machine may have several HPET blocks, one table each; the kernel needs one.
                if let Some(first) = &platform.hpet {
                    let first = first.hpet_number;
                    platform.warnings.push(format!("HPET table at {phys:#x} after HPET {first}; ignored"));
                    continue;
                }
                let parsed = sdt::load_table(mapper, phys, Signature::HPET, hpet::HPET_TABLE_LEN)
                    .and_then(|table| HpetInfo::parse(&table));
                match parsed {
                    Ok(hpet) => platform.hpet = Some(hpet),
                    Err(error) => platform.reject(error),
                }
            }
            Signature::DMAR => {
                if platform.dmar.is_some() {
                    platform.warnings.push(format!("second DMAR at {phys:#x} ignored"));
                    continue;
                }
                let parsed = sdt::load_table(mapper, phys, Signature::DMAR, dmar::DMAR_FIXED_LEN)
                    .and_then(|table| dmar::parse_dmar(&table).map_err(AcpiError::Dmar));
                match parsed {
                    Ok(d) => platform.dmar = Some(d),
                    Err(error) => platform.reject(error),
                }
            }
            Signature::IVRS => {
                if platform.ivrs.is_some() {
                    platform.warnings.push(format!("second IVRS at {phys:#x} ignored"));
                    continue;
                }
                let parsed = sdt::load_table(mapper, phys, Signature::IVRS, ivrs::IVRS_FIXED_LEN)
                    .and_then(|table| ivrs::parse_ivrs(&table).map_err(AcpiError::Ivrs));
                match parsed {
                    Ok(v) => platform.ivrs = Some(v),
                    Err(error) => platform.reject(error),
                }
            }
            _ => {}
        }
    }

    if platform.madt.is_none() {
        platform.warnings.push(String::from("no usable MADT: only the boot CPU, interrupts through the 8259 PIC"));
    }
    if platform.mcfg.is_empty() {
        platform.warnings.push(String::from("no usable MCFG: PCI configuration through ports 0xCF8/0xCFC"));
    }
    if platform.hpet.is_none() {
        platform.warnings.push(String::from("no usable HPET: timing falls back to the PIT"));
    }
    Ok(platform)
}

impl PlatformTables {
    fn reject(&mut self, error: AcpiError) {
        self.warnings.push(format!("{error}; table not used"));
        self.rejected.push(error);
    }
}

fn load_root<M: PhysMapper + ?Sized>(mapper: &M, root: RootTable) -> Result<Table<'_>, AcpiError> {
    match root {
        RootTable::Xsdt(phys) => sdt::load_table(mapper, phys, Signature::XSDT, sdt::SDT_HEADER_LEN),
        RootTable::Rsdt(phys) => sdt::load_table(mapper, u64::from(phys), Signature::RSDT, sdt::SDT_HEADER_LEN),
    }
}
