//! What enumeration records about one PCI function.
//!
//! Header layouts follow the PCI Local Bus Specification 3.0 §6.1 (type 0), the PCI-to-PCI
//! Bridge Architecture Specification 1.2 §3.2 (type 1) and the PC Card Standard's CardBus bridge
//! header (type 2).

use alloc::vec::Vec;
use core::fmt;

use pci_types::{HeaderType, PciAddress};

use super::caps::{Capability, ExtendedCapability, Msi, Msix, PciExpress, PowerManagement};

/// One enumerated function: identity, resources, topology and capabilities, as read at boot.
/// Owns only data; live state (enable bits, power state) must be re-read from config space.
#[derive(Clone, Debug)]
pub struct PciFunction {
    pub address: PciAddress,
    pub vendor_id: u16,
    pub device_id: u16,
    pub class: u8,
    pub subclass: u8,
    pub prog_if: u8,
    pub revision: u8,
    pub header_type: HeaderType,
    /// Bit 7 of the header type register (read from this function, meaningful on function 0).
    pub multi_function: bool,
    /// Type 0 and CardBus headers carry it in the header; bridges in capability 0x0D.
    pub subsystem: Option<Subsystem>,
    pub interrupt_line: u8,
    /// 0 = none, 1..4 = INTA#..INTD#.
    pub interrupt_pin: u8,
    /// Indexed by BAR slot; the upper slot of a 64-bit BAR is `None`.
    pub bars: [Option<Bar>; 6],
    pub rom: Option<RomBar>,
    /// Type 1 (PCI-to-PCI bridge) headers only.
    pub bridge: Option<BridgeInfo>,
    /// The bridge whose secondary bus this function sits on; `None` on a root bus.
    pub parent: Option<PciAddress>,
    /// The standard capability list (offsets 0x40..0xFF), in list order.
    pub capabilities: Vec<Capability>,
    /// The extended capability list (offsets 0x100..0xFFF), in list order; empty when extended
    /// space is unreachable or the function is not PCI Express.
    pub extended_capabilities: Vec<ExtendedCapability>,
    pub msi: Option<Msi>,
    pub msix: Option<Msix>,
    pub pcie: Option<PciExpress>,
    pub power: Option<PowerManagement>,
    /// Everything malformed met while reading this function.
    pub warnings: Vec<Warning>,
}

impl PciFunction {
    /// The 24-bit class code as `lspci -n` prints it: base, sub-class, programming interface.
    pub fn class_code(&self) -> u32 {
        (self.class as u32) << 16 | (self.subclass as u32) << 8 | self.prog_if as u32
    }

    pub fn is_bridge(&self) -> bool {
        self.bridge.is_some()
    }

    pub fn bar(&self, index: u8) -> Option<&Bar> {
        self.bars.get(index as usize).and_then(Option::as_ref)
    }

    /// The `n`th memory BAR (0-based) in slot order, a 64-bit BAR counting once: the numbering
    /// NVIDIA's driver gives a GPU's BARs (`nv->bars[j]` in `nv_pci_probe`,
    /// `kernel-open/nvidia/nv-pci.c`, open-gpu-kernel-modules 535.261.03), where BAR1, the VRAM
    /// aperture, is `memory_bar(1)` wherever its PCI slot is.
    pub fn memory_bar(&self, n: usize) -> Option<&Bar> {
        self.bars.iter().flatten().filter(|b| b.is_memory()).nth(n)
    }

    pub fn capability(&self, id: u8) -> Option<&Capability> {
        self.capabilities.iter().find(|c| c.id == id)
    }

    pub fn extended_capability(&self, id: u16) -> Option<&ExtendedCapability> {
        self.extended_capabilities.iter().find(|c| c.id == id)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subsystem {
    pub vendor_id: u16,
    pub device_id: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarKind {
    /// I/O space (bit 0 = 1).
    Io,
    /// Memory, 32-bit decoder (type 00b). Type 01b ("below 1 MiB", PCI 2.x) also lands here,
    /// with a warning.
    Mem32,
    /// Memory, 64-bit decoder (type 10b); occupies this slot and the next.
    Mem64,
}

/// One implemented Base Address Register, sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bar {
    /// Slot number (0..5); for a 64-bit BAR, the lower slot.
    pub index: u8,
    pub kind: BarKind,
    pub prefetchable: bool,
    /// The address firmware assigned (0 if none).
    pub address: u64,
    /// Bytes decoded: a power of two.
    pub size: u64,
}

impl Bar {
    pub fn is_memory(&self) -> bool {
        self.kind != BarKind::Io
    }
}

/// The expansion ROM BAR (type 0 offset 0x30, type 1 offset 0x38).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RomBar {
    pub address: u32,
    pub size: u32,
    /// Bit 0: ROM address decode enabled.
    pub enabled: bool,
}

/// Type 1 header fields: where the bridge sits and what it forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BridgeInfo {
    pub primary_bus: u8,
    pub secondary_bus: u8,
    /// Highest bus number behind the bridge (inclusive).
    pub subordinate_bus: u8,
    pub io_window: Option<Window>,
    pub memory_window: Option<Window>,
    pub prefetchable_window: Option<Window>,
    /// The prefetchable window decodes 64-bit addresses.
    pub prefetchable_64bit: bool,
}

impl BridgeInfo {
    /// Whether `bus` lies behind this bridge.
    pub fn forwards(&self, bus: u8) -> bool {
        self.secondary_bus != 0 && (self.secondary_bus..=self.subordinate_bus).contains(&bus)
    }
}

/// An address window a bridge forwards, both ends inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub base: u64,
    pub limit: u64,
}

/// A malformed or surprising piece of configuration space, recorded instead of trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warning {
    /// Header type other than 0, 1, 2: nothing past offset 0x10 was interpreted.
    UnknownHeaderType(u8),
    /// BAR memory type 11b is reserved (PCI LB 3.0 §6.2.5.1); the BAR was left alone.
    ReservedBarType { index: u8, raw: u32 },
    /// BAR memory type 01b (PCI 2.x "below 1 MiB"); sized as a 32-bit BAR.
    LegacyBelow1MiBBar { index: u8 },
    /// A 64-bit BAR in the last slot of the header has no upper half.
    Bar64InLastSlot { index: u8 },
    /// A capability pointer (read at offset `at`) points into the header (< 0x40).
    CapabilityPointerInHeader { at: u16, pointer: u8 },
    /// A capability pointer revisits a capability already walked.
    CapabilityLoop { at: u16, pointer: u8 },
    /// Capability `id` at `offset` needs `len` bytes, which run past offset 0xFF.
    CapabilityPastEnd { id: u8, offset: u8, len: u8 },
    /// A second capability of a kind decoded once (MSI, MSI-X, PCIe, PM); the first is used.
    DuplicateCapability { id: u8, offset: u8 },
    /// An extended capability's next pointer (read at `at`) is below 0x100.
    ExtendedPointerInvalid { at: u16, pointer: u16 },
    /// An extended capability's next pointer revisits one already walked.
    ExtendedCapabilityLoop { at: u16, pointer: u16 },
    /// An extended capability header read all ones mid-list (function gone or broken).
    ExtendedHeaderAllOnes { offset: u16 },
    /// The MSI-X table or PBA does not lie inside an implemented memory BAR.
    MsixOutsideBar { what: MsixStructure, bir: u8, offset: u32 },
    /// A bridge's bus numbers make no sense (secondary not above primary, or above subordinate).
    BridgeBusNumbers { primary: u8, secondary: u8, subordinate: u8 },
    /// A bridge's secondary bus lies outside every scanned range: what is behind it was not seen.
    BridgeOutsideRoots { secondary: u8 },
    /// Two bridges claim the same secondary bus; the other one is recorded as parent.
    DuplicateSecondaryBus { other: PciAddress },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsixStructure {
    Table,
    PendingBitArray,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Warning::UnknownHeaderType(t) => write!(f, "unknown header type 0x{t:02x}"),
            Warning::ReservedBarType { index, raw } => {
                write!(f, "bar{index} reserved memory type (0x{raw:08x})")
            }
            Warning::LegacyBelow1MiBBar { index } => {
                write!(f, "bar{index} below-1MiB memory type, sized as mem32")
            }
            Warning::Bar64InLastSlot { index } => {
                write!(f, "bar{index} 64-bit with no upper half")
            }
            Warning::CapabilityPointerInHeader { at, pointer } => {
                write!(f, "capability pointer 0x{pointer:02x} at 0x{at:02x} points into header")
            }
            Warning::CapabilityLoop { at, pointer } => {
                write!(f, "capability loop: pointer 0x{pointer:02x} at 0x{at:02x}")
            }
            Warning::CapabilityPastEnd { id, offset, len } => write!(
                f,
                "capability 0x{id:02x} at 0x{offset:02x} ({len} bytes) runs past 0xff"
            ),
            Warning::DuplicateCapability { id, offset } => {
                write!(f, "duplicate capability 0x{id:02x} at 0x{offset:02x} ignored")
            }
            Warning::ExtendedPointerInvalid { at, pointer } => write!(
                f,
                "extended capability pointer 0x{pointer:03x} at 0x{at:03x} below 0x100"
            ),
            Warning::ExtendedCapabilityLoop { at, pointer } => {
                write!(f, "extended capability loop: pointer 0x{pointer:03x} at 0x{at:03x}")
            }
            Warning::ExtendedHeaderAllOnes { offset } => {
                write!(f, "extended capability header at 0x{offset:03x} reads all ones")
            }
            Warning::MsixOutsideBar { what, bir, offset } => {
                let what = match what {
                    MsixStructure::Table => "table",
                    MsixStructure::PendingBitArray => "pba",
                };
                write!(f, "msi-x {what} bar{bir}+0x{offset:x} outside an implemented memory bar")
            }
            Warning::BridgeBusNumbers { primary, secondary, subordinate } => write!(
                f,
                "bridge bus numbers primary {primary:02x} secondary {secondary:02x} subordinate {subordinate:02x} inconsistent"
            ),
            Warning::BridgeOutsideRoots { secondary } => {
                write!(f, "bridge secondary bus {secondary:02x} outside scanned ranges")
            }
            Warning::DuplicateSecondaryBus { other } => {
                write!(f, "secondary bus also claimed by {other}")
            }
        }
    }
}
