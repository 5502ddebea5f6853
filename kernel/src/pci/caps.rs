//! Capability lists: bounded walks and the decoded capabilities drivers use.
//!
//! - Standard list: PCI Local Bus Specification 3.0 §6.7 (pointer at 0x34, entries in
//!   0x40..0xFF, low two pointer bits reserved and masked by software).
//! - Extended list: PCI Express Base Specification §7.6 (starts at 0x100; header bits 15:0 ID,
//!   19:16 version, 31:20 next offset; an all-zero header at 0x100 means an empty list).
//! - Layouts: MSI (PCI LB 3.0 §6.8.1), MSI-X (PCI LB 3.0 §6.8.2, PCIe Base §7.7.2), PCI Express
//!   (PCIe Base §7.5.3), Power Management (PCI Bus Power Management Interface Spec 1.2 §3.2).
//! - IDs and names: PCI Code and ID Assignment Specification §2 and §3.
//!
//! Why not `pci_types::capability`: its iterator follows next pointers with no bound (a looped
//! list hangs the boot) and without masking or range checks; its MSI helper places the mask
//! register only for 64-bit capabilities; its types cannot be built from a bounded walk of ours
//! (constructors are crate-private).

use alloc::vec::Vec;

use pci_types::PciAddress;

use super::access::{read16, read8, ConfigAccess};
use super::function::{Subsystem, Warning};

/// Standard capabilities live in 0x40..=0xFF (PCI LB 3.0 §6.7).
const CAP_FIRST: u16 = 0x40;
const CAP_END: u16 = 0x100;
const EXT_FIRST: u16 = 0x100;
const EXT_END: u16 = 0x1000;

pub const CAP_ID_PM: u8 = 0x01;
pub const CAP_ID_MSI: u8 = 0x05;
pub const CAP_ID_BRIDGE_SUBSYSTEM: u8 = 0x0d;
pub const CAP_ID_PCIE: u8 = 0x10;
pub const CAP_ID_MSIX: u8 = 0x11;

/// One entry of the standard capability list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capability {
    pub id: u8,
    pub offset: u8,
    pub name: &'static str,
}

/// One entry of the extended capability list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtendedCapability {
    pub id: u16,
    pub version: u8,
    pub offset: u16,
    pub name: &'static str,
}

/// The MSI capability (ID 0x05), decoded from its Message Control register (PCI LB 3.0
/// §6.8.1.3): bit 0 enable, 3:1 multiple message capable, 6:4 multiple message enable,
/// 7 64-bit address capable, 8 per-vector masking capable; PCIe Base §7.7.1.2 adds
/// bit 9 extended message data capable, 10 extended message data enable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msi {
    pub offset: u8,
    pub enabled: bool,
    /// log2 of the vectors the function can send (0..=5).
    pub multiple_message_capable: u8,
    /// log2 of the vectors software allowed (0..=5).
    pub multiple_message_enable: u8,
    pub is_64bit: bool,
    pub per_vector_masking: bool,
    pub extended_data_capable: bool,
}

pub(crate) const MSI_CONTROL_ENABLE: u16 = 1 << 0;
pub(crate) const MSI_CONTROL_MMC_SHIFT: u16 = 1;
pub(crate) const MSI_CONTROL_MME_SHIFT: u16 = 4;
pub(crate) const MSI_CONTROL_MME_MASK: u16 = 0b111 << MSI_CONTROL_MME_SHIFT;
pub(crate) const MSI_CONTROL_64BIT: u16 = 1 << 7;
pub(crate) const MSI_CONTROL_PER_VECTOR_MASK: u16 = 1 << 8;
pub(crate) const MSI_CONTROL_EXT_DATA_CAPABLE: u16 = 1 << 9;
pub(crate) const MSI_CONTROL_EXT_DATA_ENABLE: u16 = 1 << 10;

impl Msi {
    fn decode(offset: u8, control: u16) -> Msi {
        let log2 = |field: u16| {
            // 110b and 111b are reserved: trust the function with one vector only.
            let value = (field & 0b111) as u8;
            if value > 5 {
                0
            } else {
                value
            }
        };
        Msi {
            offset,
            enabled: control & MSI_CONTROL_ENABLE != 0,
            multiple_message_capable: log2(control >> MSI_CONTROL_MMC_SHIFT),
            multiple_message_enable: log2(control >> MSI_CONTROL_MME_SHIFT),
            is_64bit: control & MSI_CONTROL_64BIT != 0,
            per_vector_masking: control & MSI_CONTROL_PER_VECTOR_MASK != 0,
            extended_data_capable: control & MSI_CONTROL_EXT_DATA_CAPABLE != 0,
        }
    }

    pub fn vectors_capable(&self) -> u8 {
        1 << self.multiple_message_capable
    }

    pub fn vectors_enabled(&self) -> u8 {
        1 << self.multiple_message_enable
    }

    /// Message Address (low dword): cap + 4.
    pub fn address_offset(&self) -> u16 {
        self.offset as u16 + 0x4
    }

    /// Message Upper Address: cap + 8, 64-bit capabilities only.
    pub fn address_high_offset(&self) -> Option<u16> {
        self.is_64bit.then_some(self.offset as u16 + 0x8)
    }

    /// Message Data: cap + 8 (32-bit) or cap + 0xC (64-bit).
    pub fn data_offset(&self) -> u16 {
        self.offset as u16 + if self.is_64bit { 0xc } else { 0x8 }
    }

    /// Mask Bits: cap + 0xC (32-bit) or cap + 0x10 (64-bit), per-vector masking only.
    pub fn mask_offset(&self) -> Option<u16> {
        self.per_vector_masking.then_some(self.offset as u16 + if self.is_64bit { 0x10 } else { 0xc })
    }

    /// Pending Bits: the dword after Mask Bits.
    pub fn pending_offset(&self) -> Option<u16> {
        self.mask_offset().map(|mask| mask + 4)
    }

    /// Bytes the capability occupies (PCI LB 3.0 Figure 6-9): 0xA, 0xE, 0x14 or 0x18.
    pub fn structure_len(&self) -> u8 {
        match (self.is_64bit, self.per_vector_masking) {
            (false, false) => 0x0a,
            (true, false) => 0x0e,
            (false, true) => 0x14,
            (true, true) => 0x18,
        }
    }
}

/// The MSI-X capability (ID 0x11): Message Control bits 10:0 table size − 1, 14 function mask,
/// 15 enable; Table Offset/BIR and PBA Offset/BIR dwords at cap + 4 and cap + 8, BIR in bits
/// 2:0, offset in bits 31:3 (a multiple of 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msix {
    pub offset: u8,
    /// Number of table entries (1..=2048).
    pub table_size: u16,
    pub table_bir: u8,
    pub table_offset: u32,
    pub pba_bir: u8,
    pub pba_offset: u32,
    pub enabled: bool,
    pub function_mask: bool,
}

pub(crate) const MSIX_CONTROL_TABLE_SIZE_MASK: u16 = 0x7ff;
pub(crate) const MSIX_CONTROL_FUNCTION_MASK: u16 = 1 << 14;
pub(crate) const MSIX_CONTROL_ENABLE: u16 = 1 << 15;
const MSIX_BIR_MASK: u32 = 0b111;

impl Msix {
    const LEN: u8 = 12;
}

/// PCI Express Capabilities register bits 7:4 (PCIe Base §7.5.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PcieDeviceType {
    Endpoint,
    LegacyEndpoint,
    RootPort,
    UpstreamSwitchPort,
    DownstreamSwitchPort,
    PcieToPciBridge,
    PciToPcieBridge,
    RootComplexIntegratedEndpoint,
    RootComplexEventCollector,
    Reserved(u8),
}

impl PcieDeviceType {
    fn from_field(value: u8) -> PcieDeviceType {
        match value {
            0x0 => PcieDeviceType::Endpoint,
            0x1 => PcieDeviceType::LegacyEndpoint,
            0x4 => PcieDeviceType::RootPort,
            0x5 => PcieDeviceType::UpstreamSwitchPort,
            0x6 => PcieDeviceType::DownstreamSwitchPort,
            0x7 => PcieDeviceType::PcieToPciBridge,
            0x8 => PcieDeviceType::PciToPcieBridge,
            0x9 => PcieDeviceType::RootComplexIntegratedEndpoint,
            0xa => PcieDeviceType::RootComplexEventCollector,
            other => PcieDeviceType::Reserved(other),
        }
    }

    /// Root-complex-integrated functions have no link; their link registers are reserved.
    pub fn has_link(&self) -> bool {
        !matches!(self, PcieDeviceType::RootComplexIntegratedEndpoint | PcieDeviceType::RootComplexEventCollector)
    }

    pub fn name(&self) -> &'static str {
        match self {
            PcieDeviceType::Endpoint => "endpoint",
            PcieDeviceType::LegacyEndpoint => "legacy-endpoint",
            PcieDeviceType::RootPort => "root-port",
            PcieDeviceType::UpstreamSwitchPort => "upstream-port",
            PcieDeviceType::DownstreamSwitchPort => "downstream-port",
            PcieDeviceType::PcieToPciBridge => "pcie-to-pci-bridge",
            PcieDeviceType::PciToPcieBridge => "pci-to-pcie-bridge",
            PcieDeviceType::RootComplexIntegratedEndpoint => "rc-endpoint",
            PcieDeviceType::RootComplexEventCollector => "rc-event-collector",
            PcieDeviceType::Reserved(_) => "reserved-type",
        }
    }
}

/// A link speed field (Link Capabilities bits 3:0, Link Status bits 3:0). Formally an index
/// into the Supported Link Speeds Vector; every shipping device maps index n to generation n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkSpeed {
    Gt2_5,
    Gt5,
    Gt8,
    Gt16,
    Gt32,
    Gt64,
    Unknown(u8),
}

impl LinkSpeed {
    fn from_field(value: u8) -> LinkSpeed {
        match value {
            1 => LinkSpeed::Gt2_5,
            2 => LinkSpeed::Gt5,
            3 => LinkSpeed::Gt8,
            4 => LinkSpeed::Gt16,
            5 => LinkSpeed::Gt32,
            6 => LinkSpeed::Gt64,
            other => LinkSpeed::Unknown(other),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            LinkSpeed::Gt2_5 => "2.5GT/s",
            LinkSpeed::Gt5 => "5GT/s",
            LinkSpeed::Gt8 => "8GT/s",
            LinkSpeed::Gt16 => "16GT/s",
            LinkSpeed::Gt32 => "32GT/s",
            LinkSpeed::Gt64 => "64GT/s",
            LinkSpeed::Unknown(_) => "unknown",
        }
    }
}

/// Link Capabilities (cap + 0xC) and Link Status (cap + 0x12): bits 3:0 speed, 9:4 width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcieLink {
    pub max_speed: LinkSpeed,
    pub max_width: u8,
    pub speed: LinkSpeed,
    pub width: u8,
}

/// The PCI Express capability (ID 0x10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciExpress {
    pub offset: u8,
    /// Capability version, PCI Express Capabilities bits 3:0.
    pub version: u8,
    pub device_type: PcieDeviceType,
    /// Bit 8: the port is connected to a slot.
    pub slot_implemented: bool,
    pub link: Option<PcieLink>,
}

impl PciExpress {
    /// The registers read here end with Link Status (cap + 0x12..0x14).
    const LEN_READ: u8 = 0x14;
}

/// Device power states, PMCSR bits 1:0 (PCI PM 1.2 §3.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PowerState {
    D0,
    D1,
    D2,
    D3Hot,
}

impl PowerState {
    pub(crate) fn from_field(value: u32) -> PowerState {
        match value & 0b11 {
            0 => PowerState::D0,
            1 => PowerState::D1,
            2 => PowerState::D2,
            _ => PowerState::D3Hot,
        }
    }

    pub(crate) fn field(self) -> u32 {
        self as u32
    }

    pub fn name(&self) -> &'static str {
        match self {
            PowerState::D0 => "D0",
            PowerState::D1 => "D1",
            PowerState::D2 => "D2",
            PowerState::D3Hot => "D3hot",
        }
    }
}

/// The Power Management capability (ID 0x01): PMC at cap + 2 (bits 2:0 version, 9 D1 support,
/// 10 D2 support, 15:11 PME support), PMCSR at cap + 4 (bits 1:0 power state, 3 No_Soft_Reset,
/// 8 PME_En, 15 PME_Status write-one-to-clear).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PowerManagement {
    pub offset: u8,
    pub version: u8,
    pub d1: bool,
    pub d2: bool,
    /// PMC bits 15:11: the states from which PME# can be signalled (D0, D1, D2, D3hot, D3cold).
    pub pme_support: u8,
    /// The state at enumeration.
    pub state: PowerState,
    /// Set: going D3hot -> D0 keeps the configuration (no internal reset).
    pub no_soft_reset: bool,
}

pub(crate) const PMCSR_STATE_MASK: u32 = 0b11;
pub(crate) const PMCSR_NO_SOFT_RESET: u32 = 1 << 3;
pub(crate) const PMCSR_PME_STATUS: u32 = 1 << 15;

impl PowerManagement {
    const LEN: u8 = 8;

    pub fn supports(&self, state: PowerState) -> bool {
        match state {
            PowerState::D0 | PowerState::D3Hot => true,
            PowerState::D1 => self.d1,
            PowerState::D2 => self.d2,
        }
    }

    pub(crate) fn pmcsr_offset(&self) -> u16 {
        self.offset as u16 + 4
    }
}

/// Everything the standard list yields.
#[derive(Default)]
pub(crate) struct CapabilityScan {
    pub list: Vec<Capability>,
    pub msi: Option<Msi>,
    pub msix: Option<Msix>,
    pub pcie: Option<PciExpress>,
    pub power: Option<PowerManagement>,
    pub bridge_subsystem: Option<Subsystem>,
}

/// Walks the standard list starting from the pointer at `pointer_register` (0x34, or 0x14 for
/// CardBus), then decodes the capabilities drivers need. Bounded: every dword is visited at most
/// once, so at most 48 steps.
pub(crate) fn scan_capabilities<A: ConfigAccess + ?Sized>(
    access: &A,
    address: PciAddress,
    pointer_register: u16,
    warnings: &mut Vec<Warning>,
) -> CapabilityScan {
    let mut scan = CapabilityScan::default();
    let mut visited: u64 = 0;
    let mut at = pointer_register;
    let mut pointer = read8(access, address, at);
    loop {
        let offset = (pointer & !0b11) as u16;
        if offset == 0 {
            break;
        }
        if offset < CAP_FIRST {
            warnings.push(Warning::CapabilityPointerInHeader { at, pointer });
            break;
        }
        let bit = 1u64 << ((offset - CAP_FIRST) / 4);
        if visited & bit != 0 {
            warnings.push(Warning::CapabilityLoop { at, pointer });
            break;
        }
        visited |= bit;

        let header = access.read32(address, offset);
        if header == u32::MAX {
            // Master abort: the function is gone; nothing further is real.
            break;
        }
        let id = header as u8;
        let entry = Capability { id, offset: offset as u8, name: capability_name(id) };
        scan.list.push(entry);
        decode(access, address, entry, (header >> 16) as u16, &mut scan, warnings);

        at = offset + 1;
        pointer = (header >> 8) as u8;
    }
    scan
}

fn decode<A: ConfigAccess + ?Sized>(
    access: &A,
    address: PciAddress,
    cap: Capability,
    control: u16,
    scan: &mut CapabilityScan,
    warnings: &mut Vec<Warning>,
) {
    let offset = cap.offset as u16;
    let fits = |len: u8, warnings: &mut Vec<Warning>| {
        let fits = offset + len as u16 <= CAP_END;
        if !fits {
            warnings.push(Warning::CapabilityPastEnd { id: cap.id, offset: cap.offset, len });
        }
        fits
    };
    let already = |present: bool, warnings: &mut Vec<Warning>| {
        if present {
            warnings.push(Warning::DuplicateCapability { id: cap.id, offset: cap.offset });
        }
        present
    };

    match cap.id {
        CAP_ID_PM => {
            if already(scan.power.is_some(), warnings) || !fits(PowerManagement::LEN, warnings) {
                return;
            }
            let pmcsr = access.read32(address, offset + 4);
            scan.power = Some(PowerManagement {
                offset: cap.offset,
                version: (control & 0b111) as u8,
                d1: control & (1 << 9) != 0,
                d2: control & (1 << 10) != 0,
                pme_support: (control >> 11) as u8,
                state: PowerState::from_field(pmcsr & PMCSR_STATE_MASK),
                no_soft_reset: pmcsr & PMCSR_NO_SOFT_RESET != 0,
            });
        }
        CAP_ID_MSI => {
            let msi = Msi::decode(cap.offset, control);
            if already(scan.msi.is_some(), warnings) || !fits(msi.structure_len(), warnings) {
                return;
            }
            scan.msi = Some(msi);
        }
        CAP_ID_MSIX => {
            if already(scan.msix.is_some(), warnings) || !fits(Msix::LEN, warnings) {
                return;
            }
            let table = access.read32(address, offset + 4);
            let pba = access.read32(address, offset + 8);
            scan.msix = Some(Msix {
                offset: cap.offset,
                table_size: (control & MSIX_CONTROL_TABLE_SIZE_MASK) + 1,
                table_bir: (table & MSIX_BIR_MASK) as u8,
                table_offset: table & !MSIX_BIR_MASK,
                pba_bir: (pba & MSIX_BIR_MASK) as u8,
                pba_offset: pba & !MSIX_BIR_MASK,
                enabled: control & MSIX_CONTROL_ENABLE != 0,
                function_mask: control & MSIX_CONTROL_FUNCTION_MASK != 0,
            });
        }
        CAP_ID_PCIE => {
            if already(scan.pcie.is_some(), warnings) || !fits(PciExpress::LEN_READ, warnings) {
                return;
            }
            let device_type = PcieDeviceType::from_field(((control >> 4) & 0xf) as u8);
            let link = device_type.has_link().then(|| {
                let capabilities = access.read32(address, offset + 0xc);
                let status = read16(access, address, offset + 0x12);
                PcieLink {
                    max_speed: LinkSpeed::from_field((capabilities & 0xf) as u8),
                    max_width: ((capabilities >> 4) & 0x3f) as u8,
                    speed: LinkSpeed::from_field((status & 0xf) as u8),
                    width: ((status >> 4) & 0x3f) as u8,
                }
            });
            scan.pcie = Some(PciExpress {
                offset: cap.offset,
                version: (control & 0xf) as u8,
                device_type,
                slot_implemented: control & (1 << 8) != 0,
                link,
            });
        }
        CAP_ID_BRIDGE_SUBSYSTEM => {
            // Bridge Subsystem Vendor ID capability: SSVID at cap + 4, SSID at cap + 6.
            if scan.bridge_subsystem.is_some() || !fits(8, warnings) {
                return;
            }
            let ids = access.read32(address, offset + 4);
            scan.bridge_subsystem = Some(Subsystem { vendor_id: ids as u16, device_id: (ids >> 16) as u16 });
        }
        _ => {}
    }
}

/// Walks the extended list from 0x100. The caller has established that extended space is
/// reachable and not an alias of conventional space. Bounded: each of the 960 dwords is
/// visited at most once.
pub(crate) fn scan_extended<A: ConfigAccess + ?Sized>(
    access: &A,
    address: PciAddress,
    warnings: &mut Vec<Warning>,
) -> Vec<ExtendedCapability> {
    let mut list = Vec::new();
    // One bit per dword of 0x100..0x1000; the head counts as visited, so a list pointing back
    // at it is a loop.
    let mut visited = [0u64; ((EXT_END - EXT_FIRST) / 4 / 64) as usize];
    visited[0] = 1;
    let mut offset = EXT_FIRST;
    loop {
        let header = access.read32(address, offset);
        if header == u32::MAX {
            if offset != EXT_FIRST {
                warnings.push(Warning::ExtendedHeaderAllOnes { offset });
            }
            break;
        }
        if header == 0 {
            // PCIe Base §7.6.3: ID 0, version 0, next 0 at 0x100 means "no extended capabilities";
            // elsewhere it ends a list that pointed at nothing.
            break;
        }
        let id = header as u16;
        list.push(ExtendedCapability {
            id,
            version: ((header >> 16) & 0xf) as u8,
            offset,
            name: extended_capability_name(id),
        });

        // Bits 31:20; the low two bits are reserved (§7.6.3) and masked.
        let next = ((header >> 20) as u16) & !0b11;
        if next == 0 {
            break;
        }
        if next < EXT_FIRST {
            warnings.push(Warning::ExtendedPointerInvalid { at: offset, pointer: next });
            break;
        }
        let index = ((next - EXT_FIRST) / 4) as usize;
        let Some(word) = visited.get_mut(index / 64) else {
            break;
        };
        let bit = 1u64 << (index % 64);
        if *word & bit != 0 {
            warnings.push(Warning::ExtendedCapabilityLoop { at: offset, pointer: next });
            break;
        }
        *word |= bit;
        offset = next;
    }
    list
}

pub(crate) fn capability_name(id: u8) -> &'static str {
    match id {
        0x00 => "null",
        0x01 => "pm",
        0x02 => "agp",
        0x03 => "vpd",
        0x04 => "slot-id",
        0x05 => "msi",
        0x06 => "hotswap",
        0x07 => "pci-x",
        0x08 => "hypertransport",
        0x09 => "vendor",
        0x0a => "debug-port",
        0x0b => "cpci-rc",
        0x0c => "hotplug",
        0x0d => "bridge-subsys",
        0x0e => "agp8x",
        0x0f => "secure",
        0x10 => "pcie",
        0x11 => "msi-x",
        0x12 => "sata",
        0x13 => "af",
        0x14 => "ea",
        0x15 => "fpb",
        _ => "unknown",
    }
}

pub(crate) fn extended_capability_name(id: u16) -> &'static str {
    match id {
        0x0000 => "null",
        0x0001 => "aer",
        0x0002 => "vc",
        0x0003 => "dsn",
        0x0004 => "power-budget",
        0x0005 => "rc-link",
        0x0006 => "rc-internal-link",
        0x0007 => "rcec-assoc",
        0x0008 => "mfvc",
        0x0009 => "vc9",
        0x000a => "rcrb",
        0x000b => "vsec",
        0x000c => "cac",
        0x000d => "acs",
        0x000e => "ari",
        0x000f => "ats",
        0x0010 => "sr-iov",
        0x0011 => "mr-iov",
        0x0012 => "multicast",
        0x0013 => "pri",
        0x0015 => "rebar",
        0x0016 => "dpa",
        0x0017 => "tph",
        0x0018 => "ltr",
        0x0019 => "secondary-pcie",
        0x001a => "pmux",
        0x001b => "pasid",
        0x001c => "lnr",
        0x001d => "dpc",
        0x001e => "l1pm",
        0x001f => "ptm",
        0x0020 => "m-pcie",
        0x0021 => "frs",
        0x0022 => "rtr",
        0x0023 => "dvsec",
        0x0024 => "vf-rebar",
        0x0025 => "dlf",
        0x0026 => "pl-16gt",
        0x0027 => "lmr",
        0x0028 => "hierarchy-id",
        0x0029 => "npem",
        0x002a => "pl-32gt",
        0x002b => "alt-protocol",
        0x002c => "sfi",
        0x002d => "shadow",
        0x002e => "doe",
        0x002f => "device-3",
        0x0030 => "ide",
        0x0031 => "pl-64gt",
        _ => "unknown",
    }
}
