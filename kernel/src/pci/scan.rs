//! Bus scan: every bus of every root range, every device, the functions the multi-function bit
//! allows; then bridge topology.
//!
//! PCI Local Bus Specification 3.0 §6.1 (Vendor ID 0xFFFF: no function; header type bit 7:
//! multi-function device, valid in function 0) and PCI-to-PCI Bridge Architecture 1.2 §3.2.5
//! (bus numbers, I/O, memory and prefetchable windows).

use alloc::vec::Vec;

use pci_types::{HeaderType, PciAddress};

use super::access::{read8, ConfigAccess, RootRange};
use super::bar::{size_all, BarLayout, COMMAND};
use super::caps::{scan_capabilities, scan_extended};
use super::function::{BridgeInfo, MsixStructure, PciFunction, Subsystem, Warning, Window};

const VENDOR_NONE: u16 = 0xffff;
/// Status register (upper half of the dword at 0x04) bit 4: capability list present.
const STATUS_CAPABILITY_LIST: u32 = 1 << (16 + 4);
const HEADER_MULTI_FUNCTION: u32 = 1 << 23;
const CLASS_BRIDGE: u8 = 0x06;
const SUBCLASS_HOST_BRIDGE: u8 = 0x00;

/// Finds every function in `roots` and reads it fully (identity, sized BARs, capabilities,
/// bridge windows, parent bridge). Ranges may overlap; each bus is scanned once. Never panics
/// and always terminates on malformed config space; what is wrong ends up in each function's
/// `warnings`. Functions come out in (segment, bus, device, function) scan order.
pub fn enumerate<A: ConfigAccess + ?Sized>(access: &A, roots: &[RootRange]) -> Vec<PciFunction> {
    let mut functions = Vec::new();
    let mut scanned: Vec<(u16, [u64; 4])> = Vec::new();
    for root in roots {
        for bus in root.bus_start..=root.bus_end {
            if mark_scanned(&mut scanned, root.segment, bus) {
                scan_bus(access, root.segment, bus, &mut functions);
            }
        }
    }
    link_topology(&mut functions, roots);
    functions
}

/// Records `bus` as scanned; false if it already was.
fn mark_scanned(scanned: &mut Vec<(u16, [u64; 4])>, segment: u16, bus: u8) -> bool {
    let index = match scanned.iter().position(|(s, _)| *s == segment) {
        Some(index) => index,
        None => {
            scanned.push((segment, [0; 4]));
            scanned.len() - 1
        }
    };
    let Some((_, bits)) = scanned.get_mut(index) else {
        return false;
    };
    let Some(word) = bits.get_mut(bus as usize / 64) else {
        return false;
    };
    let bit = 1u64 << (bus % 64);
    let fresh = *word & bit == 0;
    *word |= bit;
    fresh
}

fn scan_bus<A: ConfigAccess + ?Sized>(access: &A, segment: u16, bus: u8, out: &mut Vec<PciFunction>) {
    for device in 0..32 {
        let function0 = PciAddress::new(segment, bus, device, 0);
        if !present(access, function0) {
            // A device must implement function 0 (PCI LB 3.0 §6.2.1); without it there is none.
            continue;
        }
        // Single-function devices may decode functions 1..7 as aliases of function 0: only look
        // there when function 0 says the device is multi-function.
        let multi = access.read32(function0, 0x0c) & HEADER_MULTI_FUNCTION != 0;
        let functions = if multi { 8 } else { 1 };
        for function in 0..functions {
            let address = PciAddress::new(segment, bus, device, function);
            if function == 0 || present(access, address) {
                out.push(probe_function(access, address));
            }
        }
    }
}

/// Vendor 0xFFFF is a master abort: nothing there. Vendor 0x0000 is never assigned and some
/// chipsets return it for empty slots; Linux treats both as absent, so do we.
fn present<A: ConfigAccess + ?Sized>(access: &A, address: PciAddress) -> bool {
    let vendor = access.read32(address, 0) as u16;
    vendor != VENDOR_NONE && vendor != 0
}

/// Reads everything about one present function.
pub(crate) fn probe_function<A: ConfigAccess + ?Sized>(access: &A, address: PciAddress) -> PciFunction {
    let id = access.read32(address, 0x00);
    let command_status = access.read32(address, COMMAND);
    let class = access.read32(address, 0x08);
    let header = access.read32(address, 0x0c);
    let interrupt = access.read32(address, 0x3c);
    let raw_type = ((header >> 16) & 0x7f) as u8;
    let header_type = match raw_type {
        0 => HeaderType::Endpoint,
        1 => HeaderType::PciPciBridge,
        2 => HeaderType::CardBusBridge,
        other => HeaderType::Unknown(other),
    };

    let mut function = PciFunction {
        address,
        vendor_id: id as u16,
        device_id: (id >> 16) as u16,
        class: (class >> 24) as u8,
        subclass: (class >> 16) as u8,
        prog_if: (class >> 8) as u8,
        revision: class as u8,
        header_type,
        multi_function: header & HEADER_MULTI_FUNCTION != 0,
        subsystem: None,
        interrupt_line: interrupt as u8,
        interrupt_pin: (interrupt >> 8) as u8,
        bars: [None; 6],
        rom: None,
        bridge: None,
        parent: None,
        capabilities: Vec::new(),
        extended_capabilities: Vec::new(),
        msi: None,
        msix: None,
        pcie: None,
        power: None,
        warnings: Vec::new(),
    };

    // Per header type: BAR slots, ROM BAR, capability pointer, subsystem IDs.
    let (slots, rom, capability_pointer, subsystem_at) = match header_type {
        HeaderType::Endpoint => (6, Some(0x30), 0x34, Some(0x2c)),
        HeaderType::PciPciBridge => (2, Some(0x38), 0x34, None),
        HeaderType::CardBusBridge => (1, None, 0x14, Some(0x40)),
        _ => {
            // Unknown layout: writing anywhere past 0x10 could hit anything. Identity only.
            function.warnings.push(Warning::UnknownHeaderType(raw_type));
            return function;
        }
    };

    let keep_decode = function.class == CLASS_BRIDGE && function.subclass == SUBCLASS_HOST_BRIDGE;
    let layout = BarLayout { slots, rom, keep_decode };
    let (bars, rom) = size_all(access, address, &layout, &mut function.warnings);
    function.bars = bars;
    function.rom = rom;

    if let Some(offset) = subsystem_at {
        let ids = access.read32(address, offset);
        function.subsystem = Some(Subsystem { vendor_id: ids as u16, device_id: (ids >> 16) as u16 });
    }
    if header_type == HeaderType::PciPciBridge {
        function.bridge = Some(read_bridge(access, address));
    }

    if command_status & STATUS_CAPABILITY_LIST != 0 {
        let scan = scan_capabilities(access, address, capability_pointer, &mut function.warnings);
        function.capabilities = scan.list;
        function.msi = scan.msi;
        function.msix = scan.msix;
        function.pcie = scan.pcie;
        function.power = scan.power;
        if function.subsystem.is_none() {
            function.subsystem = scan.bridge_subsystem;
        }
    }

    if has_extended_space(access, &function) {
        function.extended_capabilities = scan_extended(access, address, &mut function.warnings);
    }
    check_msix_placement(&mut function);
    function
}

/// Extended space exists only if the mechanism reaches it, the function is PCI Express (a
/// conventional function behind ECAM decodes nothing there), and 0x100 is not an alias of 0x00
/// (some devices ignore address bits 11:8; Linux checks the same).
fn has_extended_space<A: ConfigAccess + ?Sized>(access: &A, function: &PciFunction) -> bool {
    if !access.extended_space(function.address) || function.pcie.is_none() {
        return false;
    }
    let head = access.read32(function.address, 0x100);
    head != u32::MAX && head != access.read32(function.address, 0x00)
}

fn read_bridge<A: ConfigAccess + ?Sized>(access: &A, address: PciAddress) -> BridgeInfo {
    let buses = access.read32(address, 0x18);

    // I/O base/limit (0x1C/0x1D): bits 7:4 are address bits 15:12; bits 3:0 = 1 means 32-bit,
    // upper halves at 0x30/0x32. Granularity 4 KiB.
    let io_base = read8(access, address, 0x1c);
    let io_limit = read8(access, address, 0x1d);
    let io_upper = access.read32(address, 0x30);
    let io_window = if io_base == 0 && io_limit == 0 {
        // Unimplemented windows read zero; a real 0..0xFFF window is never assigned.
        None
    } else {
        let (base_upper, limit_upper) =
            if io_base & 0xf == 1 { ((io_upper & 0xffff) as u64, (io_upper >> 16) as u64) } else { (0, 0) };
        window(
            base_upper << 16 | ((io_base as u64 & 0xf0) << 8),
            limit_upper << 16 | ((io_limit as u64 & 0xf0) << 8) | 0xfff,
        )
    };

    // Memory base/limit (0x20/0x22): bits 15:4 are address bits 31:20. Granularity 1 MiB.
    let memory = access.read32(address, 0x20);
    let memory_window = if memory & 0xfff0_fff0 == 0 {
        None
    } else {
        window(((memory & 0xfff0) as u64) << 16, ((memory >> 16) as u64 & 0xfff0) << 16 | 0xf_ffff)
    };

    // Prefetchable base/limit (0x24/0x26), bits 3:0 = 1: 64-bit, upper dwords at 0x28/0x2C.
    let prefetchable = access.read32(address, 0x24);
    let prefetchable_64bit = prefetchable & 0xf == 1;
    let (base_upper, limit_upper) = if prefetchable_64bit {
        (access.read32(address, 0x28) as u64, access.read32(address, 0x2c) as u64)
    } else {
        (0, 0)
    };
    let prefetchable_window = if prefetchable & 0xfff0_fff0 == 0 && base_upper == 0 && limit_upper == 0 {
        None
    } else {
        window(
            base_upper << 32 | ((prefetchable & 0xfff0) as u64) << 16,
            limit_upper << 32 | ((prefetchable >> 16) as u64 & 0xfff0) << 16 | 0xf_ffff,
        )
    };

    BridgeInfo {
        primary_bus: buses as u8,
        secondary_bus: (buses >> 8) as u8,
        subordinate_bus: (buses >> 16) as u8,
        io_window,
        memory_window,
        prefetchable_window,
        prefetchable_64bit,
    }
}

/// A window is open when limit >= base; firmware closes unused ones with base > limit.
fn window(base: u64, limit: u64) -> Option<Window> {
    (limit >= base).then_some(Window { base, limit })
}

/// The MSI-X table and PBA must lie inside an implemented memory BAR (PCIe Base §7.7.2.4).
fn check_msix_placement(function: &mut PciFunction) {
    let Some(msix) = function.msix else { return };
    let table_len = msix.table_size as u64 * 16;
    let pba_len = (msix.table_size as u64).div_ceil(64) * 8;
    let structures = [
        (MsixStructure::Table, msix.table_bir, msix.table_offset, table_len),
        (MsixStructure::PendingBitArray, msix.pba_bir, msix.pba_offset, pba_len),
    ];
    for (what, bir, offset, len) in structures {
        let inside = function.bar(bir).is_some_and(|bar| bar.is_memory() && offset as u64 + len <= bar.size);
        if !inside {
            function.warnings.push(Warning::MsixOutsideBar { what, bir, offset });
        }
    }
}

/// Sets each function's parent (the bridge whose secondary bus it sits on) and checks bridges'
/// bus numbers against each other and the scanned ranges.
fn link_topology(functions: &mut [PciFunction], roots: &[RootRange]) {
    let bridges: Vec<(PciAddress, BridgeInfo)> =
        functions.iter().filter_map(|f| f.bridge.map(|b| (f.address, b))).collect();

    for function in functions.iter_mut() {
        let segment = function.address.segment();
        let bus = function.address.bus();
        let mut claimants = bridges
            .iter()
            .filter(|(bridge, info)| bridge.segment() == segment && info.secondary_bus == bus && bridge.bus() != bus);
        if let Some((parent, _)) = claimants.next() {
            function.parent = Some(*parent);
            if let Some((other, _)) = claimants.next() {
                function.warnings.push(Warning::DuplicateSecondaryBus { other: *other });
            }
        }

        let Some(info) = function.bridge else {
            continue;
        };
        if info.secondary_bus == 0 && info.subordinate_bus == 0 {
            // Not configured by firmware; nothing behind it was numbered, nothing to check.
            continue;
        }
        if info.secondary_bus <= bus || info.secondary_bus > info.subordinate_bus {
            function.warnings.push(Warning::BridgeBusNumbers {
                primary: info.primary_bus,
                secondary: info.secondary_bus,
                subordinate: info.subordinate_bus,
            });
        } else if !roots.iter().any(|root| root.contains(segment, info.secondary_bus)) {
            function.warnings.push(Warning::BridgeOutsideRoots { secondary: info.secondary_bus });
        }
    }
}
