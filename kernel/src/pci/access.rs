//! Configuration-space access: the one boundary between PCI logic and the machine.
//!
//! Follows the PCI Local Bus Specification 3.0 §3.2.2.3 (configuration mechanism #1, ports
//! 0xCF8/0xCFC, 256 bytes per function) and the PCI Express Base Specification §7.2.2 (ECAM,
//! 4 KiB per function, windows described by the ACPI MCFG table).
//!
//! Why not `pci_types::ConfigRegionAccess` directly: its `read`/`write` are `unsafe fn` whose
//! contract ("address and offset must be valid") only the implementation can check, because only
//! it knows which ECAM windows are mapped. Every caller would carry an `unsafe` block with a proof
//! it cannot give. Here the implementation owns that proof (the kernel creates it through an
//! `unsafe` constructor once it has mapped the MCFG windows), and reports the one fact the
//! enumerator needs that `ConfigRegionAccess` cannot express: whether offsets `0x100..0x1000`
//! are reachable. [`PciTypesAccess`] adapts any [`ConfigAccess`] back to `pci_types` for code
//! that wants that crate's header helpers.

use pci_types::{ConfigRegionAccess, PciAddress};

/// Size of the conventional configuration space every mechanism reaches.
pub const CONVENTIONAL_SPACE_LEN: u16 = 0x100;
/// Size of the configuration space ECAM reaches (PCIe Base Spec §7.2.2).
pub const EXTENDED_SPACE_LEN: u16 = 0x1000;

/// Dword-granular access to PCI configuration space.
///
/// Contract for implementations:
/// - `offset` is dword aligned; the enumerator never passes anything else.
/// - A read of a function, bus or offset the mechanism cannot reach returns `0xFFFF_FFFF`
///   (what a master abort returns on real hardware); a write there is dropped. Implementations
///   must never fault on an address they were not given a mapping for.
/// - [`ConfigAccess::extended_space`] is true only if offsets `0x100..0x1000` of that function
///   are reachable (ECAM: yes; ports 0xCF8/0xCFC: no).
///
/// Config writes can move BARs and enable DMA; the kernel controls that by creating its
/// implementation in exactly one place (an `unsafe` constructor over the mapped ECAM windows or
/// the port pair) and handing it only to the enumerator and to drivers that claimed a function.
pub trait ConfigAccess {
    /// Reads the dword at `offset` (dword aligned) of function `address`.
    fn read32(&self, address: PciAddress, offset: u16) -> u32;
    /// Writes the dword at `offset` (dword aligned) of function `address`.
    fn write32(&self, address: PciAddress, offset: u16, value: u32);
    /// Whether offsets `0x100..0x1000` (extended configuration space) of `address` are
    /// reachable through this mechanism.
    fn extended_space(&self, address: PciAddress) -> bool;
}

impl<T: ConfigAccess + ?Sized> ConfigAccess for &T {
    fn read32(&self, address: PciAddress, offset: u16) -> u32 {
        (**self).read32(address, offset)
    }
    fn write32(&self, address: PciAddress, offset: u16, value: u32) {
        (**self).write32(address, offset, value)
    }
    fn extended_space(&self, address: PciAddress) -> bool {
        (**self).extended_space(address)
    }
}

/// Reads the byte at any `offset`, through the dword that holds it.
pub(crate) fn read8<A: ConfigAccess + ?Sized>(access: &A, address: PciAddress, offset: u16) -> u8 {
    (access.read32(address, offset & !3) >> ((offset & 3) * 8)) as u8
}

/// Reads the 16-bit word at an even `offset`, through the dword that holds it.
pub(crate) fn read16<A: ConfigAccess + ?Sized>(access: &A, address: PciAddress, offset: u16) -> u16 {
    (access.read32(address, offset & !3) >> ((offset & 2) * 8)) as u16
}

/// Adapts a [`ConfigAccess`] to `pci_types::ConfigRegionAccess`, so `pci_types::PciHeader` and
/// friends can be used on top of the same mechanism.
pub struct PciTypesAccess<'a, A: ConfigAccess + ?Sized>(pub &'a A);

// `pci_types` declares `read`/`write` as `unsafe fn`; this implementation does nothing unsafe
// (the `ConfigAccess` underneath is safe to call).
#[allow(unsafe_code)]
impl<A: ConfigAccess + ?Sized> ConfigRegionAccess for PciTypesAccess<'_, A> {
    unsafe fn read(&self, address: PciAddress, offset: u16) -> u32 {
        self.0.read32(address, offset & !3)
    }
    unsafe fn write(&self, address: PciAddress, offset: u16, value: u32) {
        self.0.write32(address, offset & !3, value)
    }
}

/// A range of bus numbers in one PCI segment to scan: one MCFG allocation (segment group,
/// start bus, end bus), or every bus of segment 0 when the ports are the only mechanism.
///
/// Scanning the whole range rather than recursing from bus 0 is deliberate: multi-socket servers
/// have one host bridge per root complex (buses 0x00, 0x80, ...), and nothing on bus 0 points at
/// the others; only ACPI's `_BBN`/MCFG knows them, and MCFG gives the bus range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootRange {
    pub segment: u16,
    pub bus_start: u8,
    /// Inclusive.
    pub bus_end: u8,
}

impl RootRange {
    pub const fn new(segment: u16, bus_start: u8, bus_end: u8) -> RootRange {
        RootRange { segment, bus_start, bus_end }
    }

    /// All 256 buses of segment 0: what ports 0xCF8/0xCFC reach when there is no MCFG.
    pub const fn legacy_ports() -> RootRange {
        RootRange { segment: 0, bus_start: 0, bus_end: 0xff }
    }

    pub fn contains(&self, segment: u16, bus: u8) -> bool {
        self.segment == segment && (self.bus_start..=self.bus_end).contains(&bus)
    }
}
