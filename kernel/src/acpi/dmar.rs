//! The DMAR table: Intel VT-d DMA remapping hardware (Intel Virtualization Technology for
//! Directed I/O, Architecture Specification rev. 4.1, chapter 8 "BIOS Considerations"):
//! - the header's host address width (N: the platform addresses N + 1 bits) and flags
//!   (`INTR_REMAP` bit 0, `X2APIC_OPT_OUT` bit 1, `DMA_CTRL_PLATFORM_OPT_IN_FLAG` bit 2);
//! - remapping structures, each type (u16) and length (u16) first (§8.2):
//!   - DRHD (0, §8.3): one remapping unit, its register base and the devices it covers
//!     (`INCLUDE_PCI_ALL` in flags bit 0: every device of the segment not under another unit);
//!   - RMRR (1, §8.4): reserved memory a device keeps using (identity-mapped);
//!   - ATSR (2, §8.5): root ports that support Address Translation Services;
//!   - RHSA (3, §8.6): a unit's NUMA proximity domain;
//!   - ANDD (4, §8.7): an ACPI namespace device; SATC (5, §8.8) and SIDP (6, §8.9) are
//!     listed by type and length.
//! - device scopes (§8.3.1): type, length, enumeration id, start bus, then (device, function)
//!   pairs walking bridges from that bus.
//!
//! Everything is read from bounds-checked bytes: a structure whose length is short, odd or
//! runs past the table is an error naming where, never a panic.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::bytes::{AsciiField, LeBytes};
use super::sdt::{Table, SDT_HEADER_LEN};

/// Header, host address width, flags, 10 reserved bytes (§8.1).
pub const DMAR_FIXED_LEN: usize = SDT_HEADER_LEN + 12;

// The VT-d specification's DMAR fixed part (§8.1): the 36-byte header and 12 bytes.
const _: () = assert!(DMAR_FIXED_LEN == 48);

/// `INCLUDE_PCI_ALL` in a DRHD's flags.
pub const DRHD_INCLUDE_PCI_ALL: u8 = 1 << 0;

/// What a device scope names (§8.3.1, "Type").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    PciEndpoint,
    PciBridge,
    IoApic,
    MsiCapableHpet,
    AcpiNamespaceDevice,
    Other(u8),
}

impl ScopeKind {
    fn from_raw(raw: u8) -> Self {
        match raw {
            1 => ScopeKind::PciEndpoint,
            2 => ScopeKind::PciBridge,
            3 => ScopeKind::IoApic,
            4 => ScopeKind::MsiCapableHpet,
            5 => ScopeKind::AcpiNamespaceDevice,
            other => ScopeKind::Other(other),
        }
    }
    /// The raw type byte.
    pub fn raw(self) -> u8 {
        match self {
            ScopeKind::PciEndpoint => 1,
            ScopeKind::PciBridge => 2,
            ScopeKind::IoApic => 3,
            ScopeKind::MsiCapableHpet => 4,
            ScopeKind::AcpiNamespaceDevice => 5,
            ScopeKind::Other(raw) => raw,
        }
    }
}

/// One device scope entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceScope {
    pub kind: ScopeKind,
    /// The I/O APIC id, HPET number or ACPI device number for those kinds; 0 otherwise.
    pub enumeration_id: u8,
    pub start_bus: u8,
    /// (device, function) hops from `start_bus`, the last naming the device itself.
    pub path: Vec<(u8, u8)>,
}

/// A remapping hardware unit (DRHD).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemappingUnit {
    pub flags: u8,
    pub segment: u16,
    /// Physical address of its registers (4 KiB aligned).
    pub register_base: u64,
    pub scopes: Vec<DeviceScope>,
}

impl RemappingUnit {
    /// Covers every device of its segment that no other unit lists.
    pub fn includes_all(&self) -> bool {
        self.flags & DRHD_INCLUDE_PCI_ALL != 0
    }
}

/// A reserved memory region (RMRR): inclusive `[base, limit]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReservedRegion {
    pub segment: u16,
    pub base: u64,
    pub limit: u64,
    pub scopes: Vec<DeviceScope>,
}

/// Root ports with ATS (ATSR).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AtsRootPorts {
    /// `ALL_PORTS` in bit 0.
    pub flags: u8,
    pub segment: u16,
    pub scopes: Vec<DeviceScope>,
}

/// A unit's proximity domain (RHSA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitAffinity {
    pub register_base: u64,
    pub proximity_domain: u32,
}

/// An ACPI namespace device (ANDD).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamespaceDevice {
    pub device_number: u8,
    pub object_name: String,
}

/// A decoded DMAR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dmar {
    /// The raw field: the platform's DMA addresses have `host_address_width + 1` bits.
    pub host_address_width: u8,
    pub flags: u8,
    pub units: Vec<RemappingUnit>,
    pub reserved: Vec<ReservedRegion>,
    pub ats: Vec<AtsRootPorts>,
    pub affinity: Vec<UnitAffinity>,
    pub namespace_devices: Vec<NamespaceDevice>,
    /// Structures of other types (SATC, SIDP, future ones): (type, length), in order.
    pub other: Vec<(u16, u16)>,
}

impl Dmar {
    /// DMA address bits the platform supports.
    pub fn address_bits(&self) -> u32 {
        u32::from(self.host_address_width) + 1
    }
    /// Interrupt remapping is supported (`INTR_REMAP`).
    pub fn interrupt_remapping(&self) -> bool {
        self.flags & 1 != 0
    }
}

/// Why a DMAR could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DmarError {
    /// Shorter than the fixed part.
    Short { length: usize },
    /// A remapping structure at `offset` whose length is below its fixed part or runs past the
    /// table.
    BadStructure { offset: usize, kind: u16, length: u16 },
    /// A device scope at `offset` whose length is below 6, odd, or runs past its structure.
    BadScope { offset: usize, length: u8 },
}

impl fmt::Display for DmarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DmarError::Short { length } => write!(f, "DMAR: {length} bytes, shorter than its {DMAR_FIXED_LEN}-byte fixed part"),
            DmarError::BadStructure { offset, kind, length } => write!(
                f,
                "DMAR: remapping structure type {kind} at {offset:#x} has length {length}, short or past the table's end"
            ),
            DmarError::BadScope { offset, length } => {
                write!(f, "DMAR: device scope at {offset:#x} has length {length}, short, odd or past its structure")
            }
        }
    }
}

/// Fixed bytes of each structure before its device scopes.
fn fixed_len(kind: u16) -> usize {
    match kind {
        0 => 16, // type, length, flags, size/reserved, segment, register base
        1 => 24, // type, length, reserved, segment, base, limit
        2 => 8,  // type, length, flags, reserved, segment
        3 => 20, // type, length, reserved, register base, proximity domain
        4 => 8,  // type, length, 3 reserved, device number, object name...
        _ => 4,
    }
}

/// The device scopes in `bytes[from..]` (`base` is `bytes`' offset in the table, for errors).
fn scopes(bytes: &[u8], from: usize, base: usize) -> Result<Vec<DeviceScope>, DmarError> {
    let mut out = Vec::new();
    let mut at = from;
    while at < bytes.len() {
        let length = bytes.u8_at(at.saturating_add(1)).unwrap_or(0);
        let end = at.saturating_add(usize::from(length));
        if length < 6 || length & 1 != 0 || end > bytes.len() {
            return Err(DmarError::BadScope { offset: base.saturating_add(at), length });
        }
        let path = bytes
            .get(at.saturating_add(6)..end)
            .unwrap_or(&[])
            .chunks_exact(2)
            .map(|pair| (pair.first().copied().unwrap_or(0), pair.get(1).copied().unwrap_or(0)))
            .collect();
        out.push(DeviceScope {
            kind: ScopeKind::from_raw(bytes.u8_at(at).unwrap_or(0)),
            enumeration_id: bytes.u8_at(at.saturating_add(4)).unwrap_or(0),
            start_bus: bytes.u8_at(at.saturating_add(5)).unwrap_or(0),
            path,
        });
        at = end;
    }
    Ok(out)
}

/// Decodes a checked DMAR (see [`Table::from_bytes`]).
pub fn parse_dmar(table: &Table<'_>) -> Result<Dmar, DmarError> {
    let bytes = table.bytes;
    if bytes.len() < DMAR_FIXED_LEN {
        return Err(DmarError::Short { length: bytes.len() });
    }
    let mut dmar = Dmar {
        host_address_width: bytes.u8_at(SDT_HEADER_LEN).unwrap_or(0),
        flags: bytes.u8_at(SDT_HEADER_LEN.saturating_add(1)).unwrap_or(0),
        units: Vec::new(),
        reserved: Vec::new(),
        ats: Vec::new(),
        affinity: Vec::new(),
        namespace_devices: Vec::new(),
        other: Vec::new(),
    };
    let mut at = DMAR_FIXED_LEN;
    while at < bytes.len() {
        let kind = bytes.u16_at(at).unwrap_or(0);
        let length = bytes.u16_at(at.saturating_add(2)).unwrap_or(0);
        let end = at.saturating_add(usize::from(length));
        let bad = DmarError::BadStructure { offset: at, kind, length };
        if usize::from(length) < fixed_len(kind).max(4) || end > bytes.len() {
            return Err(bad);
        }
        let s = bytes.get(at..end).ok_or(bad)?;
        match kind {
            0 => dmar.units.push(RemappingUnit {
                flags: s.u8_at(4).unwrap_or(0),
                segment: s.u16_at(6).unwrap_or(0),
                register_base: s.u64_at(8).unwrap_or(0),
                scopes: scopes(s, 16, at)?,
            }),
            1 => dmar.reserved.push(ReservedRegion {
                segment: s.u16_at(6).unwrap_or(0),
                base: s.u64_at(8).unwrap_or(0),
                limit: s.u64_at(16).unwrap_or(0),
                scopes: scopes(s, 24, at)?,
            }),
            2 => dmar.ats.push(AtsRootPorts {
                flags: s.u8_at(4).unwrap_or(0),
                segment: s.u16_at(6).unwrap_or(0),
                scopes: scopes(s, 8, at)?,
            }),
            3 => dmar.affinity.push(UnitAffinity {
                register_base: s.u64_at(8).unwrap_or(0),
                proximity_domain: s.u32_at(16).unwrap_or(0),
            }),
            4 => dmar.namespace_devices.push(NamespaceDevice {
                device_number: s.u8_at(7).unwrap_or(0),
                object_name: alloc::format!("{}", AsciiField(s.get(8..).unwrap_or(&[]))),
            }),
            _ => dmar.other.push((kind, length)),
        }
        at = end;
    }
    Ok(dmar)
}

impl fmt::Display for Dmar {
    /// One line for the boot log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DMAR: {}-bit DMA addresses, interrupt remapping {}, {} remapping unit(s) ({} covering all devices), {} reserved region(s), {} ATS root-port set(s)",
            self.address_bits(),
            if self.interrupt_remapping() { "supported" } else { "not supported" },
            self.units.len(),
            self.units.iter().filter(|u| u.includes_all()).count(),
            self.reserved.len(),
            self.ats.len()
        )
    }
}
