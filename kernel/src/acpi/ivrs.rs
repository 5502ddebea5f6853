//! The IVRS table: AMD-Vi IOMMUs (AMD I/O Virtualization Technology (IOMMU) Specification,
//! pub. 48882 rev 3.08, §5.2 "I/O Virtualization Reporting Structure (IVRS)"):
//! - the header's IVinfo (virtual address size, physical address size, EFR support, ...);
//! - I/O virtualization definition blocks, each type (u8), flags (u8), length (u16) first:
//!   - IVHD types 10h, 11h and 40h (§5.2.2): one IOMMU, its PCI function, capability offset,
//!     register base, segment, IOMMU info, feature reporting (and for 11h/40h an image of the
//!     extended feature register), then device entries (§5.2.2.2): 4-byte types below 40h,
//!     8-byte types 40h..7Fh (alias, extended select, special IOAPIC/HPET), and the
//!     variable-length ACPI HID entry F0h;
//!   - IVMD types 20h, 21h, 22h (§5.2.3): memory a device or range keeps using.
//!
//! Read from bounds-checked bytes: a block or device entry whose length is short or runs past
//! its container is an error naming where, never a panic.

use alloc::vec::Vec;
use core::fmt;

use super::bytes::LeBytes;
use super::sdt::{Table, SDT_HEADER_LEN};

/// Header, IVinfo, 8 reserved bytes.
pub const IVRS_FIXED_LEN: usize = SDT_HEADER_LEN + 12;

/// What an 8-byte or variable device entry carries beyond type, device id and data setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryExtra {
    /// 4-byte entries (select, range start/end, all, ...).
    None,
    /// Alias select / alias range start (42h, 43h): the device id requests appear under.
    Alias { source: u16 },
    /// Extended select / extended range start (46h, 47h).
    Extended { data: u32 },
    /// Special device (48h): an IOAPIC (variety 1) or HPET (variety 2) by handle.
    Special { handle: u8, source: u16, variety: u8 },
    /// ACPI HID device (F0h).
    AcpiHid { hid: [u8; 8], cid: [u8; 8], uid: Vec<u8> },
    /// An 8-byte type this parser does not decode further: its four extra bytes.
    Raw([u8; 4]),
}

/// One IVHD device entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceEntry {
    pub kind: u8,
    /// Requester id: bus << 8 | device << 3 | function.
    pub device_id: u16,
    pub data: u8,
    pub extra: EntryExtra,
}

/// One IOMMU (an IVHD block).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HardwareBlock {
    /// 10h, 11h or 40h.
    pub kind: u8,
    pub flags: u8,
    /// The IOMMU's own PCI function.
    pub device_id: u16,
    pub capability_offset: u16,
    /// Physical address of its registers.
    pub base_address: u64,
    pub segment: u16,
    pub info: u16,
    /// IOMMU feature reporting (10h) or attributes (11h, 40h).
    pub features: u32,
    /// The extended feature register's image (11h, 40h).
    pub efr: Option<u64>,
    pub entries: Vec<DeviceEntry>,
}

/// Memory a device keeps using (an IVMD block).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBlock {
    /// 20h (all devices), 21h (one device), 22h (a range from `device_id` to `aux`).
    pub kind: u8,
    pub flags: u8,
    pub device_id: u16,
    pub aux: u16,
    pub start: u64,
    pub length: u64,
}

/// A decoded IVRS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ivrs {
    pub info: u32,
    pub hardware: Vec<HardwareBlock>,
    pub memory: Vec<MemoryBlock>,
    /// Blocks of other types: (type, length), in order.
    pub other: Vec<(u8, u16)>,
}

/// Why an IVRS could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IvrsError {
    Short {
        length: usize,
    },
    /// A block at `offset` whose length is below its fixed part or runs past the table.
    BadBlock {
        offset: usize,
        kind: u8,
        length: u16,
    },
    /// A device entry at `offset` that runs past its block.
    BadEntry {
        offset: usize,
        kind: u8,
    },
}

impl fmt::Display for IvrsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IvrsError::Short { length } => {
                write!(f, "IVRS: {length} bytes, shorter than its {IVRS_FIXED_LEN}-byte fixed part")
            }
            IvrsError::BadBlock { offset, kind, length } => {
                write!(
                    f,
                    "IVRS: block type {kind:#04x} at {offset:#x} has length {length}, short or past the table's end"
                )
            }
            IvrsError::BadEntry { offset, kind } => {
                write!(f, "IVRS: device entry type {kind:#04x} at {offset:#x} runs past its block")
            }
        }
    }
}

fn hardware_fixed_len(kind: u8) -> usize {
    if kind == 0x10 {
        24
    } else {
        40
    }
}

/// Device entries of an IVHD: `s` is the block, entries from `from`; `base` its table offset.
fn entries(s: &[u8], from: usize, base: usize) -> Result<Vec<DeviceEntry>, IvrsError> {
    let mut out = Vec::new();
    let mut at = from;
    while at < s.len() {
        let kind = s.u8_at(at).unwrap_or(0);
        let bad = IvrsError::BadEntry { offset: base.saturating_add(at), kind };
        let size = match kind {
            0x00..=0x3f => 4,
            0x40..=0x7f => 8,
            // ACPI HID: 4 + HID 8 + CID 8 + UID format 1 + UID length 1 + UID.
            0xf0 => 22usize.saturating_add(usize::from(s.u8_at(at.saturating_add(21)).ok_or(bad.clone())?)),
            _ => return Err(bad),
        };
        let end = at.saturating_add(size);
        let e = s.get(at..end).ok_or(bad)?;
        let extra = match kind {
            0x00..=0x3f => EntryExtra::None,
            0x42 | 0x43 => EntryExtra::Alias { source: e.u16_at(5).unwrap_or(0) },
            0x46 | 0x47 => EntryExtra::Extended { data: e.u32_at(4).unwrap_or(0) },
            0x48 => EntryExtra::Special {
                handle: e.u8_at(4).unwrap_or(0),
                source: e.u16_at(5).unwrap_or(0),
                variety: e.u8_at(7).unwrap_or(0),
            },
            0xf0 => EntryExtra::AcpiHid {
                hid: e.array_at(4).unwrap_or([0; 8]),
                cid: e.array_at(12).unwrap_or([0; 8]),
                uid: e.get(22..).unwrap_or(&[]).to_vec(),
            },
            _ => EntryExtra::Raw(e.array_at(4).unwrap_or([0; 4])),
        };
        out.push(DeviceEntry { kind, device_id: e.u16_at(1).unwrap_or(0), data: e.u8_at(3).unwrap_or(0), extra });
        at = end;
    }
    Ok(out)
}

/// Decodes a checked IVRS (see [`Table::from_bytes`]).
pub fn parse_ivrs(table: &Table<'_>) -> Result<Ivrs, IvrsError> {
    let bytes = table.bytes;
    if bytes.len() < IVRS_FIXED_LEN {
        return Err(IvrsError::Short { length: bytes.len() });
    }
    let mut ivrs = Ivrs {
        info: bytes.u32_at(SDT_HEADER_LEN).unwrap_or(0),
        hardware: Vec::new(),
        memory: Vec::new(),
        other: Vec::new(),
    };
    let mut at = IVRS_FIXED_LEN;
    while at < bytes.len() {
        let kind = bytes.u8_at(at).unwrap_or(0);
        let length = bytes.u16_at(at.saturating_add(2)).unwrap_or(0);
        let end = at.saturating_add(usize::from(length));
        let bad = IvrsError::BadBlock { offset: at, kind, length };
        let min = match kind {
            0x10 | 0x11 | 0x40 => hardware_fixed_len(kind),
            0x20..=0x22 => 32,
            _ => 4,
        };
        if usize::from(length) < min || end > bytes.len() {
            return Err(bad);
        }
        let s = bytes.get(at..end).ok_or(bad)?;
        match kind {
            0x10 | 0x11 | 0x40 => ivrs.hardware.push(HardwareBlock {
                kind,
                flags: s.u8_at(1).unwrap_or(0),
                device_id: s.u16_at(4).unwrap_or(0),
                capability_offset: s.u16_at(6).unwrap_or(0),
                base_address: s.u64_at(8).unwrap_or(0),
                segment: s.u16_at(16).unwrap_or(0),
                info: s.u16_at(18).unwrap_or(0),
                features: s.u32_at(20).unwrap_or(0),
                efr: (kind != 0x10).then(|| s.u64_at(24).unwrap_or(0)),
                entries: entries(s, hardware_fixed_len(kind), at)?,
            }),
            0x20..=0x22 => ivrs.memory.push(MemoryBlock {
                kind,
                flags: s.u8_at(1).unwrap_or(0),
                device_id: s.u16_at(4).unwrap_or(0),
                aux: s.u16_at(6).unwrap_or(0),
                start: s.u64_at(16).unwrap_or(0),
                length: s.u64_at(24).unwrap_or(0),
            }),
            _ => ivrs.other.push((kind, length)),
        }
        at = end;
    }
    Ok(ivrs)
}

impl fmt::Display for Ivrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "IVRS: {} IVHD block(s) (IOMMU registers at {}), {} device entries, {} memory definition(s)",
            self.hardware.len(),
            self.hardware.iter().map(|h| alloc::format!("{:#x}", h.base_address)).collect::<Vec<_>>().join(", "),
            self.hardware.iter().map(|h| h.entries.len()).sum::<usize>(),
            self.memory.len()
        )
    }
}
