//! The MCFG table: where each PCI segment's Enhanced Configuration Access Mechanism (ECAM)
//! window is (PCI Firmware Specification 3.x §4.1.2 "MCFG Table Description"; the ECAM address
//! layout is PCI Express Base Specification §7.2.2).
//!
//! The `acpi` crate's `Mcfg::entries()` is not used: it computes `length - 44` without checking,
//! which underflows on a short table, and its `PciConfigRegions` needs the nightly-only
//! `allocator_api` feature.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::bytes::LeBytes;
use super::sdt::{Table, SDT_HEADER_LEN};

/// Header plus 8 reserved bytes (PCI Firmware Spec §4.1.2, "MCFG Table Fields").
pub const MCFG_FIXED_LEN: usize = SDT_HEADER_LEN + 8;
/// One "Configuration Space Base Address Allocation Structure": base u64, segment u16,
/// start bus u8, end bus u8, 4 reserved bytes.
pub const MCFG_ENTRY_LEN: usize = 16;

// The `acpi` crate declares the same structures; their layouts must agree with our offsets.
const _: () = assert!(core::mem::size_of::<acpi::mcfg::Mcfg>() == MCFG_FIXED_LEN);
const _: () = assert!(core::mem::size_of::<acpi::mcfg::McfgEntry>() == MCFG_ENTRY_LEN);
const _: () = assert!(core::mem::offset_of!(acpi::mcfg::McfgEntry, bus_number_end) == 11);

/// One PCI segment group's ECAM window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McfgSegment {
    /// Physical address of the ECAM window as the MCFG gives it: the configuration space of
    /// bus 0 of this segment, even when `bus_start` is not 0 (how Linux's `pci_mmcfg` code
    /// reads it too), so bus `b` is at `base_address + (b << 20)`.
    pub base_address: u64,
    pub segment: u16,
    pub bus_start: u8,
    pub bus_end: u8,
}

impl McfgSegment {
    /// Physical address of the 4 KiB configuration space of `bus:device.function`, or `None`
    /// outside this segment's buses or for device > 31 / function > 7 (PCIe Base §7.2.2:
    /// address bits 27:20 bus, 19:15 device, 14:12 function).
    pub fn function_address(&self, bus: u8, device: u8, function: u8) -> Option<u64> {
        if !(self.bus_start..=self.bus_end).contains(&bus) || device > 31 || function > 7 {
            return None;
        }
        let offset = (u64::from(bus) << 20) | (u64::from(device) << 15) | (u64::from(function) << 12);
        self.base_address.checked_add(offset)
    }
}

impl fmt::Display for McfgSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PCIe ECAM segment {} buses {:02x}..{:02x} at {:#x}",
            self.segment, self.bus_start, self.bus_end, self.base_address
        )
    }
}

/// Decodes a checked MCFG (see [`Table::from_bytes`], with `min_len` = [`MCFG_FIXED_LEN`]).
/// Entries with an inverted bus range or a zero base are skipped with a warning, as are
/// trailing bytes that do not make a whole entry.
pub fn parse_mcfg(table: &Table<'_>, warnings: &mut Vec<String>) -> Vec<McfgSegment> {
    let entries = table.bytes.get(MCFG_FIXED_LEN..).unwrap_or(&[]);
    let trailing = entries.len() % MCFG_ENTRY_LEN;
    if trailing != 0 {
        warnings.push(format!("MCFG: {trailing} trailing bytes after the last whole entry; ignored"));
    }
    let mut segments = Vec::new();
    for (index, entry) in entries.chunks_exact(MCFG_ENTRY_LEN).enumerate() {
        let segment = McfgSegment {
            base_address: entry.u64_at(0).unwrap_or(0),
            segment: entry.u16_at(8).unwrap_or(0),
            bus_start: entry.u8_at(10).unwrap_or(0),
            bus_end: entry.u8_at(11).unwrap_or(0),
        };
        if segment.bus_start > segment.bus_end || segment.base_address == 0 {
            warnings.push(format!("MCFG entry {index} is not usable ({segment}); skipped"));
            continue;
        }
        segments.push(segment);
    }
    if segments.is_empty() {
        warnings.push(String::from("MCFG has no usable entry"));
    }
    segments
}
