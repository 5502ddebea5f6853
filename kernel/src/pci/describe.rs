//! The boot log's view of a function, in a fixed format that people and scripts compare with
//! `lspci -nn -v`:
//!
//! ```text
//! pci 0000:00:1f.2 [8086:2922] class 010601
//!   bar4 io 0xc000 size 0x20
//!   bar5 mem32 0xfebd1000 size 0x1000
//!   bar0 mem64 pref 0xfe000000 size 0x4000
//!   rom 0xfeb40000 size 0x40000 disabled
//!   bus primary 00 secondary 01 subordinate 01
//!   window mem 0xfe600000-0xfe7fffff
//!   window mem64 pref 0x380000000000-0x3807ffffffff
//!   parent 0000:00:1c.0
//!   cap 0x01 pm @0x40 v3 states D0 D3hot current D0
//!   cap 0x05 msi @0x50 64bit maskable vectors 32
//!   cap 0x10 pcie @0x70 v2 endpoint link 8GT/s x4 max 8GT/s x4
//!   cap 0x11 msi-x @0x98 table bar1+0x0 entries 4
//!   ecap 0x0001 aer v1 @0x100
//!   warning capability loop: pointer 0x40 at 0x51
//! ```
//!
//! Line order: identity, BARs, ROM, bridge buses and windows, parent, capabilities, extended
//! capabilities, warnings. Hex is lower case; the address is segment:bus:device.function.
//! MSI lines end in ` enabled N` and MSI-X lines in ` enabled` / ` masked` when those bits were
//! set at enumeration.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::caps::{Capability, CAP_ID_MSI, CAP_ID_MSIX, CAP_ID_PCIE, CAP_ID_PM};
use super::function::{BarKind, PciFunction, Window};

/// The log lines for one function: the first unindented, the rest indented by two spaces.
pub fn describe(function: &PciFunction) -> Vec<String> {
    let mut lines = Vec::new();
    lines.push(format!(
        "pci {} [{:04x}:{:04x}] class {:06x}",
        function.address,
        function.vendor_id,
        function.device_id,
        function.class_code()
    ));

    for bar in function.bars.iter().flatten() {
        let kind = match bar.kind {
            BarKind::Io => "io",
            BarKind::Mem32 => "mem32",
            BarKind::Mem64 => "mem64",
        };
        let pref = if bar.prefetchable { " pref" } else { "" };
        lines.push(format!("  bar{} {kind}{pref} 0x{:x} size 0x{:x}", bar.index, bar.address, bar.size));
    }
    if let Some(rom) = function.rom {
        let disabled = if rom.enabled { "" } else { " disabled" };
        lines.push(format!("  rom 0x{:x} size 0x{:x}{disabled}", rom.address, rom.size));
    }

    if let Some(bridge) = function.bridge {
        lines.push(format!(
            "  bus primary {:02x} secondary {:02x} subordinate {:02x}",
            bridge.primary_bus, bridge.secondary_bus, bridge.subordinate_bus
        ));
        let window = |kind: &str, w: Window| format!("  window {kind} 0x{:x}-0x{:x}", w.base, w.limit);
        if let Some(w) = bridge.io_window {
            lines.push(window("io", w));
        }
        if let Some(w) = bridge.memory_window {
            lines.push(window("mem", w));
        }
        if let Some(w) = bridge.prefetchable_window {
            lines.push(window(if bridge.prefetchable_64bit { "mem64 pref" } else { "mem pref" }, w));
        }
    }
    if let Some(parent) = function.parent {
        lines.push(format!("  parent {parent}"));
    }

    for cap in &function.capabilities {
        lines.push(capability_line(function, cap));
    }
    for ecap in &function.extended_capabilities {
        lines.push(format!("  ecap 0x{:04x} {} v{} @0x{:x}", ecap.id, ecap.name, ecap.version, ecap.offset));
    }
    for warning in &function.warnings {
        lines.push(format!("  warning {warning}"));
    }
    lines
}

fn capability_line(function: &PciFunction, cap: &Capability) -> String {
    let mut line = format!("  cap 0x{:02x} {} @0x{:x}", cap.id, cap.name, cap.offset);
    // Details only for the instance that was decoded; a duplicate prints bare.
    let decoded = |offset: u8| offset == cap.offset;
    match cap.id {
        CAP_ID_PM => {
            if let Some(pm) = function.power.filter(|pm| decoded(pm.offset)) {
                line.push_str(&format!(" v{} states D0", pm.version));
                if pm.d1 {
                    line.push_str(" D1");
                }
                if pm.d2 {
                    line.push_str(" D2");
                }
                line.push_str(&format!(" D3hot current {}", pm.state.name()));
            }
        }
        CAP_ID_MSI => {
            if let Some(msi) = function.msi.filter(|msi| decoded(msi.offset)) {
                let width = if msi.is_64bit { "64bit" } else { "32bit" };
                let maskable = if msi.per_vector_masking { " maskable" } else { "" };
                line.push_str(&format!(" {width}{maskable} vectors {}", msi.vectors_capable()));
                if msi.enabled {
                    line.push_str(&format!(" enabled {}", msi.vectors_enabled()));
                }
            }
        }
        CAP_ID_MSIX => {
            if let Some(msix) = function.msix.filter(|msix| decoded(msix.offset)) {
                line.push_str(&format!(
                    " table bar{}+0x{:x} entries {}",
                    msix.table_bir, msix.table_offset, msix.table_size
                ));
                if msix.enabled {
                    line.push_str(" enabled");
                }
                if msix.function_mask {
                    line.push_str(" masked");
                }
            }
        }
        CAP_ID_PCIE => {
            if let Some(pcie) = function.pcie.filter(|pcie| decoded(pcie.offset)) {
                line.push_str(&format!(" v{} {}", pcie.version, pcie.device_type.name()));
                if let Some(link) = pcie.link {
                    line.push_str(&format!(
                        " link {} x{} max {} x{}",
                        link.speed.name(),
                        link.width,
                        link.max_speed.name(),
                        link.max_width
                    ));
                }
            }
        }
        _ => {}
    }
    line
}
