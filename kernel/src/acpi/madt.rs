//! The Multiple APIC Description Table: CPUs (local APIC / x2APIC ids), I/O APICs, ISA IRQ
//! overrides and NMI wiring (ACPI 6.5 §5.2.12 "Multiple APIC Description Table (MADT)").
//!
//! The `acpi` crate's `Madt::entries()` is not used: its entry iterator trusts each entry's
//! length byte, so an entry of length 0 repeats forever and one running past the table reads
//! beyond it; and its interrupt-model parser (`parse_interrupt_model_in`) needs the crate's
//! `allocator_api` feature, i.e. nightly. Here every entry is bounds-checked against the table
//! and a malformed one is a typed error.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::bytes::LeBytes;
use super::sdt::{Table, SDT_HEADER_LEN};
use super::AcpiError;

/// Fixed part of the MADT: header, Local Interrupt Controller Address, Flags (§5.2.12, MADT format).
pub const MADT_FIXED_LEN: usize = SDT_HEADER_LEN + 8;
/// Flags bit 0, PCAT_COMPAT: the machine also has dual 8259 PICs, which must be masked before
/// using the APICs (§5.2.12, "Multiple APIC Flags").
const MADT_FLAG_PCAT_COMPAT: u32 = 1 << 0;

/// Interrupt Controller Structure types used on x86 (§5.2.12, "Interrupt Controller Structure Types") with the least
/// length each must have for the fields read here.
mod entry {
    /// §5.2.12.2 Processor Local APIC Structure, 8 bytes.
    pub const LOCAL_APIC: u8 = 0x00;
    /// §5.2.12.3 I/O APIC Structure, 12 bytes.
    pub const IO_APIC: u8 = 0x01;
    /// §5.2.12.5 Interrupt Source Override Structure, 10 bytes.
    pub const INTERRUPT_SOURCE_OVERRIDE: u8 = 0x02;
    /// §5.2.12.6 Non-Maskable Interrupt (NMI) Source Structure, 8 bytes.
    pub const NMI_SOURCE: u8 = 0x03;
    /// §5.2.12.7 Local APIC NMI Structure, 6 bytes.
    pub const LOCAL_APIC_NMI: u8 = 0x04;
    /// §5.2.12.8 Local APIC Address Override Structure, 12 bytes.
    pub const LOCAL_APIC_ADDRESS_OVERRIDE: u8 = 0x05;
    /// §5.2.12.12 Processor Local x2APIC Structure, 16 bytes.
    pub const LOCAL_X2APIC: u8 = 0x09;
    /// §5.2.12.13 Local x2APIC NMI Structure, 12 bytes.
    pub const LOCAL_X2APIC_NMI: u8 = 0x0A;
    /// §5.2.12.19 Multiprocessor Wakeup Structure, 16 bytes.
    pub const MULTIPROCESSOR_WAKEUP: u8 = 0x10;

    /// Least length of an entry of `entry_type` for the fields read here; `None` for types
    /// this parser does not read (only their header is needed to skip them).
    pub const fn min_len(entry_type: u8) -> Option<u8> {
        match entry_type {
            LOCAL_APIC => Some(8),
            IO_APIC => Some(12),
            INTERRUPT_SOURCE_OVERRIDE => Some(10),
            NMI_SOURCE => Some(8),
            LOCAL_APIC_NMI => Some(6),
            LOCAL_APIC_ADDRESS_OVERRIDE => Some(12),
            LOCAL_X2APIC => Some(16),
            LOCAL_X2APIC_NMI => Some(12),
            MULTIPROCESSOR_WAKEUP => Some(16),
            _ => None,
        }
    }

    /// The specification's names for the types this parser skips.
    pub const fn skipped_name(entry_type: u8) -> Option<&'static str> {
        match entry_type {
            0x06 => Some("I/O SAPIC"),
            0x07 => Some("Local SAPIC"),
            0x08 => Some("Platform Interrupt Sources"),
            0x0B => Some("GICC"),
            0x0C => Some("GICD"),
            0x0D => Some("GIC MSI Frame"),
            0x0E => Some("GICR"),
            0x0F => Some("GIC ITS"),
            0x11..=0x17 => Some("LoongArch interrupt controller"),
            _ => None,
        }
    }
}

// The `acpi` crate declares the same structures; their layouts must agree with our offsets.
const _: () = {
    use acpi::madt as c;
    use core::mem::{offset_of, size_of};
    assert!(size_of::<c::Madt>() == MADT_FIXED_LEN);
    assert!(size_of::<c::LocalApicEntry>() == 8 && offset_of!(c::LocalApicEntry, flags) == 4);
    assert!(size_of::<c::IoApicEntry>() == 12 && offset_of!(c::IoApicEntry, io_apic_address) == 4);
    assert!(size_of::<c::InterruptSourceOverrideEntry>() == 10);
    assert!(offset_of!(c::InterruptSourceOverrideEntry, global_system_interrupt) == 4);
    assert!(offset_of!(c::InterruptSourceOverrideEntry, flags) == 8);
    assert!(size_of::<c::NmiSourceEntry>() == 8 && offset_of!(c::NmiSourceEntry, global_system_interrupt) == 4);
    assert!(size_of::<c::LocalApicNmiEntry>() == 6 && offset_of!(c::LocalApicNmiEntry, nmi_line) == 5);
    assert!(size_of::<c::LocalApicAddressOverrideEntry>() == 12);
    assert!(offset_of!(c::LocalApicAddressOverrideEntry, local_apic_address) == 4);
    assert!(size_of::<c::LocalX2ApicEntry>() == 16 && offset_of!(c::LocalX2ApicEntry, processor_uid) == 12);
    assert!(size_of::<c::X2ApicNmiEntry>() == 12 && offset_of!(c::X2ApicNmiEntry, nmi_line) == 8);
    assert!(size_of::<c::MultiprocessorWakeupEntry>() == 16);
    assert!(offset_of!(c::MultiprocessorWakeupEntry, mailbox_address) == 8);
};

/// Local APIC Flags bit 0, Enabled (§5.2.12.2 "Local APIC Flags"; x2APIC entries share them).
const LAPIC_FLAG_ENABLED: u32 = 1 << 0;
/// Local APIC Flags bit 1, Online Capable (added in ACPI 6.3, MADT revision 5; reserved before).
const LAPIC_FLAG_ONLINE_CAPABLE: u32 = 1 << 1;
/// First MADT revision in which the Online Capable bit means anything (Linux checks the same).
const MADT_REVISION_ONLINE_CAPABLE: u8 = 5;
/// "All processors" in a Local APIC NMI (§5.2.12.7) and a Local x2APIC NMI (§5.2.12.13).
const ALL_PROCESSORS_UID8: u8 = 0xFF;
const ALL_PROCESSORS_UID32: u32 = 0xFFFF_FFFF;

/// One logical processor, from a Processor Local APIC or Processor Local x2APIC entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// ACPI Processor UID (matches the processor object's `_UID` in the namespace).
    pub processor_uid: u32,
    /// The local APIC id (8 bits from a Local APIC entry, 32 from an x2APIC entry).
    pub apic_id: u32,
    /// Ready for use now.
    pub enabled: bool,
    /// Not enabled, but the platform can bring it online at runtime (MADT revision >= 5).
    pub online_capable: bool,
    /// Described by a Processor Local x2APIC entry.
    pub x2apic: bool,
}

impl Cpu {
    /// Neither enabled nor online capable: OSPM must ignore the entry (§5.2.12.2 "Local APIC Flags").
    pub fn usable(&self) -> bool {
        self.enabled || self.online_capable
    }
}

impl fmt::Display for Cpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.x2apic { "x2APIC" } else { "APIC" };
        let state = match (self.enabled, self.online_capable) {
            (true, _) => "enabled",
            (false, true) => "online-capable",
            (false, false) => "disabled",
        };
        write!(f, "CPU uid {} {kind} id {:#x} {state}", self.processor_uid, self.apic_id)
    }
}

/// One I/O APIC (§5.2.12.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoApic {
    pub id: u8,
    /// Physical address of its register window.
    pub address: u32,
    /// Global System Interrupt number of its first input.
    pub gsi_base: u32,
}

impl fmt::Display for IoApic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "I/O APIC id {} at {:#x}, GSI base {}", self.id, self.address, self.gsi_base)
    }
}

/// Input polarity from MPS INTI flags bits 1:0 (§5.2.12.5 "MPS INTI Flags").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Polarity {
    /// 00: as the bus specifies (ISA: active high).
    ConformsToBus,
    /// 01
    ActiveHigh,
    /// 11 (10 is reserved and rejected)
    ActiveLow,
}

/// Trigger mode from MPS INTI flags bits 3:2 (§5.2.12.5 "MPS INTI Flags").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerMode {
    /// 00: as the bus specifies (ISA: edge).
    ConformsToBus,
    /// 01
    Edge,
    /// 11 (10 is reserved and rejected)
    Level,
}

impl fmt::Display for Polarity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Polarity::ConformsToBus => "bus-polarity",
            Polarity::ActiveHigh => "active-high",
            Polarity::ActiveLow => "active-low",
        })
    }
}

impl fmt::Display for TriggerMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TriggerMode::ConformsToBus => "bus-trigger",
            TriggerMode::Edge => "edge",
            TriggerMode::Level => "level",
        })
    }
}

/// Decodes MPS INTI flags (§5.2.12.5); `None` when either field holds the reserved value 10.
pub fn decode_mps_inti_flags(flags: u16) -> Option<(Polarity, TriggerMode)> {
    let polarity = match flags & 0b11 {
        0b00 => Polarity::ConformsToBus,
        0b01 => Polarity::ActiveHigh,
        0b11 => Polarity::ActiveLow,
        _ => return None,
    };
    let trigger = match (flags >> 2) & 0b11 {
        0b00 => TriggerMode::ConformsToBus,
        0b01 => TriggerMode::Edge,
        0b11 => TriggerMode::Level,
        _ => return None,
    };
    Some((polarity, trigger))
}

/// An ISA IRQ wired to a different GSI or with non-ISA polarity/trigger (§5.2.12.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InterruptOverride {
    /// Always 0 (ISA) per the specification; kept as the firmware wrote it.
    pub bus: u8,
    /// The bus-relative (ISA) IRQ.
    pub source_irq: u8,
    pub gsi: u32,
    pub polarity: Polarity,
    pub trigger: TriggerMode,
}

impl fmt::Display for InterruptOverride {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IRQ {} -> GSI {} {} {}", self.source_irq, self.gsi, self.polarity, self.trigger)?;
        if self.bus != 0 {
            write!(f, " (bus {})", self.bus)?;
        }
        Ok(())
    }
}

/// A GSI wired as an NMI rather than an ordinary interrupt (§5.2.12.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NmiSource {
    pub gsi: u32,
    pub polarity: Polarity,
    pub trigger: TriggerMode,
}

impl fmt::Display for NmiSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NMI source GSI {} {} {}", self.gsi, self.polarity, self.trigger)
    }
}

/// Which processors a local APIC NMI entry applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NmiProcessor {
    All,
    /// One processor by ACPI Processor UID.
    Uid(u32),
}

/// Local APIC interrupt input pin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalInterrupt {
    Lint0,
    Lint1,
}

/// Which LINT pin of which processors' local APIC carries NMI (§5.2.12.7 and §5.2.12.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalApicNmi {
    pub processor: NmiProcessor,
    pub lint: LocalInterrupt,
    pub polarity: Polarity,
    pub trigger: TriggerMode,
    /// From a Local x2APIC NMI entry (32-bit UID) rather than a Local APIC NMI entry.
    pub x2apic: bool,
}

impl fmt::Display for LocalApicNmi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lint = match self.lint {
            LocalInterrupt::Lint0 => "LINT0",
            LocalInterrupt::Lint1 => "LINT1",
        };
        match self.processor {
            NmiProcessor::All => write!(f, "NMI on {lint} of all CPUs")?,
            NmiProcessor::Uid(uid) => write!(f, "NMI on {lint} of CPU uid {uid}")?,
        }
        write!(f, " {} {}", self.polarity, self.trigger)
    }
}

/// What the MADT says about interrupt controllers and processors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MadtInfo {
    pub revision: u8,
    /// Physical address of the local APIC registers: the 32-bit header field, or the 64-bit
    /// Local APIC Address Override entry's address when there is one (§5.2.12.8).
    pub local_apic_address: u64,
    /// The machine also has dual 8259 PICs that must be masked (PCAT_COMPAT).
    pub pcat_compat: bool,
    /// Every processor entry in table order; firmware lists the boot processor first
    /// (§5.2.12.1). Includes disabled ones: filter with [`Cpu::usable`].
    pub cpus: Vec<Cpu>,
    pub io_apics: Vec<IoApic>,
    pub overrides: Vec<InterruptOverride>,
    pub nmi_sources: Vec<NmiSource>,
    pub local_apic_nmis: Vec<LocalApicNmi>,
    /// Mailbox of the Multiprocessor Wakeup structure (§5.2.12.19), used instead of INIT-SIPI
    /// on confidential-computing guests.
    pub mp_wakeup_mailbox: Option<u64>,
}

impl MadtInfo {
    /// Decodes a checked MADT (see [`Table::from_bytes`]). A malformed entry (shorter than its
    /// type needs, or running past the table's end) rejects the table; entries that are merely
    /// odd (unknown type, reserved flag values) are skipped with a line in `warnings`.
    pub fn parse(table: &Table<'_>, warnings: &mut Vec<String>) -> Result<MadtInfo, AcpiError> {
        let bytes = table.bytes;
        let too_short = || AcpiError::BadLength {
            signature: table.header.signature,
            phys: table.phys,
            length: bytes.len() as u32,
            min: MADT_FIXED_LEN as u32,
            max: super::sdt::MAX_TABLE_LEN,
        };
        let header_address = bytes.u32_at(SDT_HEADER_LEN).ok_or_else(too_short)?;
        let flags = bytes.u32_at(SDT_HEADER_LEN + 4).ok_or_else(too_short)?;
        let revision = table.header.revision;

        let mut madt = MadtInfo {
            revision,
            local_apic_address: u64::from(header_address),
            pcat_compat: flags & MADT_FLAG_PCAT_COMPAT != 0,
            cpus: Vec::new(),
            io_apics: Vec::new(),
            overrides: Vec::new(),
            nmi_sources: Vec::new(),
            local_apic_nmis: Vec::new(),
            mp_wakeup_mailbox: None,
        };
        // Every entry starts with Type and Length bytes (§5.2.12, "Interrupt Controller
        // Structure[n]"); each step advances by at least 2 bytes, so this ends.
        let mut offset = MADT_FIXED_LEN;
        while offset < bytes.len() {
            let (entry_type, entry, end) = entry_at(table, offset)?;
            if let Some(warning) = madt.add_entry(entry_type, entry) {
                warnings.push(format!("MADT entry at {offset:#x}: {warning}"));
            }
            offset = end;
        }

        madt.check_consistency(warnings);
        Ok(madt)
    }

    /// Warnings for tables that parse but describe an odd machine.
    fn check_consistency(&self, warnings: &mut Vec<String>) {
        if !self.cpus.iter().any(Cpu::usable) {
            warnings.push(String::from("MADT lists no usable processor"));
        }
        if self.io_apics.is_empty() {
            warnings.push(String::from("MADT lists no I/O APIC"));
        }
        let mut ids: Vec<u32> = self.cpus.iter().filter(|cpu| cpu.usable()).map(|cpu| cpu.apic_id).collect();
        ids.sort_unstable();
        let duplicate = ids.windows(2).find_map(|pair| match *pair {
            [a, b] if a == b => Some(a),
            _ => None,
        });
        if let Some(id) = duplicate {
            warnings.push(format!("MADT lists APIC id {id:#x} for more than one usable processor"));
        }
    }

    /// Processors that are enabled now (what the kernel may start).
    pub fn enabled_cpus(&self) -> impl Iterator<Item = &Cpu> {
        self.cpus.iter().filter(|cpu| cpu.enabled)
    }

    /// The override for ISA `irq`, if the firmware gave one.
    pub fn override_for_isa_irq(&self, irq: u8) -> Option<&InterruptOverride> {
        self.overrides.iter().find(|o| o.bus == 0 && o.source_irq == irq)
    }
}

/// The entry at `offset`, checked to hold at least its type's structure and to end inside the
/// table. Returns its type, its bytes and the offset where it ends.
fn entry_at<'t>(table: &Table<'t>, offset: usize) -> Result<(u8, &'t [u8], usize), AcpiError> {
    let bytes = table.bytes;
    let remaining = bytes.len().saturating_sub(offset);
    let entry_type = bytes.u8_at(offset).unwrap_or(0);
    let Some(length) = offset.checked_add(1).and_then(|at| bytes.u8_at(at)) else {
        return Err(AcpiError::MadtEntryOverrun { phys: table.phys, offset, entry_type, length: 2, remaining });
    };
    let min = entry::min_len(entry_type).unwrap_or(2);
    if length < min {
        return Err(AcpiError::MadtEntryTooShort { phys: table.phys, offset, entry_type, length, min });
    }
    let end = offset.checked_add(usize::from(length));
    match end.and_then(|end| Some((bytes.get(offset..end)?, end))) {
        Some((entry, end)) => Ok((entry_type, entry, end)),
        None => Err(AcpiError::MadtEntryOverrun { phys: table.phys, offset, entry_type, length, remaining }),
    }
}

impl MadtInfo {
    /// Records one entry whose length `entry_at` checked against its type, so the field reads
    /// below cannot fail (their fallbacks only keep the code free of panics). Returns a warning
    /// for an entry that is skipped.
    fn add_entry(&mut self, entry_type: u8, e: &[u8]) -> Option<String> {
        match entry_type {
            entry::LOCAL_APIC => {
                let uid = u32::from(e.u8_at(2).unwrap_or(0));
                let apic_id = u32::from(e.u8_at(3).unwrap_or(0));
                let cpu = self.cpu(uid, apic_id, e.u32_at(4).unwrap_or(0), false);
                self.cpus.push(cpu);
            }
            entry::LOCAL_X2APIC => {
                let apic_id = e.u32_at(4).unwrap_or(0);
                let uid = e.u32_at(12).unwrap_or(0);
                let cpu = self.cpu(uid, apic_id, e.u32_at(8).unwrap_or(0), true);
                self.cpus.push(cpu);
            }
            entry::IO_APIC => self.io_apics.push(IoApic {
                id: e.u8_at(2).unwrap_or(0),
                address: e.u32_at(4).unwrap_or(0),
                gsi_base: e.u32_at(8).unwrap_or(0),
            }),
            entry::INTERRUPT_SOURCE_OVERRIDE => {
                let bus = e.u8_at(2).unwrap_or(0);
                let source_irq = e.u8_at(3).unwrap_or(0);
                let gsi = e.u32_at(4).unwrap_or(0);
                let flags = e.u16_at(8).unwrap_or(0);
                let Some((polarity, trigger)) = decode_mps_inti_flags(flags) else {
                    return Some(format!("override of IRQ {source_irq} has reserved flags {flags:#06x}; ignored"));
                };
                self.overrides.push(InterruptOverride { bus, source_irq, gsi, polarity, trigger });
                if bus != 0 {
                    return Some(format!("override of IRQ {source_irq} names bus {bus}, not ISA (0)"));
                }
            }
            entry::NMI_SOURCE => {
                let flags = e.u16_at(2).unwrap_or(0);
                let gsi = e.u32_at(4).unwrap_or(0);
                let Some((polarity, trigger)) = decode_mps_inti_flags(flags) else {
                    return Some(format!("NMI source GSI {gsi} has reserved flags {flags:#06x}; ignored"));
                };
                self.nmi_sources.push(NmiSource { gsi, polarity, trigger });
            }
            entry::LOCAL_APIC_NMI | entry::LOCAL_X2APIC_NMI => {
                let x2apic = entry_type == entry::LOCAL_X2APIC_NMI;
                let (processor, flags, lint) = if x2apic {
                    let uid = e.u32_at(4).unwrap_or(0);
                    let processor =
                        if uid == ALL_PROCESSORS_UID32 { NmiProcessor::All } else { NmiProcessor::Uid(uid) };
                    (processor, e.u16_at(2).unwrap_or(0), e.u8_at(8).unwrap_or(0))
                } else {
                    let uid = e.u8_at(2).unwrap_or(0);
                    let processor =
                        if uid == ALL_PROCESSORS_UID8 { NmiProcessor::All } else { NmiProcessor::Uid(u32::from(uid)) };
                    (processor, e.u16_at(3).unwrap_or(0), e.u8_at(5).unwrap_or(0))
                };
                let line = match lint {
                    0 => LocalInterrupt::Lint0,
                    1 => LocalInterrupt::Lint1,
                    _ => return Some(format!("local APIC NMI on LINT {lint}, which does not exist; ignored")),
                };
                let Some((polarity, trigger)) = decode_mps_inti_flags(flags) else {
                    return Some(format!("local APIC NMI has reserved flags {flags:#06x}; ignored"));
                };
                self.local_apic_nmis.push(LocalApicNmi { processor, lint: line, polarity, trigger, x2apic });
            }
            entry::LOCAL_APIC_ADDRESS_OVERRIDE => {
                self.local_apic_address = e.u64_at(4).unwrap_or(self.local_apic_address);
            }
            entry::MULTIPROCESSOR_WAKEUP => self.mp_wakeup_mailbox = e.u64_at(8),
            other => {
                return Some(match entry::skipped_name(other) {
                    Some(name) => {
                        format!("{name} (type {other:#04x}) does not belong on x86; skipped")
                    }
                    None => format!("unknown type {other:#04x} (length {}); skipped", e.len()),
                })
            }
        }
        None
    }

    /// A processor from a Local APIC or x2APIC entry's Local APIC Flags (§5.2.12.2).
    fn cpu(&self, processor_uid: u32, apic_id: u32, flags: u32, x2apic: bool) -> Cpu {
        let enabled = flags & LAPIC_FLAG_ENABLED != 0;
        // Online Capable is defined only for disabled processors, from MADT revision 5 on.
        let online_capable =
            self.revision >= MADT_REVISION_ONLINE_CAPABLE && !enabled && flags & LAPIC_FLAG_ONLINE_CAPABLE != 0;
        Cpu { processor_uid, apic_id, enabled, online_capable, x2apic }
    }
}

impl fmt::Display for MadtInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let enabled = self.cpus.iter().filter(|cpu| cpu.enabled).count();
        let online_capable = self.cpus.iter().filter(|cpu| !cpu.enabled && cpu.online_capable).count();
        let disabled = self.cpus.iter().filter(|cpu| !cpu.enabled && !cpu.online_capable).count();
        write!(
            f,
            "MADT rev {}: {} CPUs ({enabled} enabled, {online_capable} online-capable, {disabled} disabled)",
            self.revision,
            self.cpus.len()
        )?;
        if let Some(bsp) = self.cpus.first() {
            write!(f, ", first APIC id {:#x}", bsp.apic_id)?;
        }
        write!(
            f,
            ", local APIC at {:#x}, {} I/O APICs, {} IRQ overrides, {} NMI sources, {} local NMIs{}",
            self.local_apic_address,
            self.io_apics.len(),
            self.overrides.len(),
            self.nmi_sources.len(),
            self.local_apic_nmis.len(),
            if self.pcat_compat { ", 8259 PICs present" } else { "" }
        )
    }
}
