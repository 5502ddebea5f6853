//! The HPET description table: where the High Precision Event Timer block is and what it can do
//! (IA-PC HPET Specification 1.0a §3.2.4 "The ACPI 2.0 HPET Description Table (HPET)"; the Event
//! Timer Block ID field copies the timer's General Capabilities and ID register, §2.3.4).
//!
//! The `acpi` crate's `HpetInfo::new` is not used: it `assert!`s that the block is in system
//! memory, i.e. panics on a table that says otherwise, which is input and must be an error.

use core::fmt;

use super::bytes::LeBytes;
use super::sdt::{Table, SDT_HEADER_LEN};
use super::AcpiError;

/// The whole HPET table: header, Event Timer Block ID (4), Base Address as a Generic Address
/// Structure (12), HPET Number (1), Main Counter Minimum Clock Tick (2), Page Protection (1).
pub const HPET_TABLE_LEN: usize = SDT_HEADER_LEN + 20;
const OFFSET_BLOCK_ID: usize = SDT_HEADER_LEN;
/// Generic Address Structure (ACPI 6.5 §5.2.3.2): Address Space ID at +0, Address at +4.
const OFFSET_BASE_GAS: usize = SDT_HEADER_LEN + 4;
const OFFSET_HPET_NUMBER: usize = SDT_HEADER_LEN + 16;
const OFFSET_MIN_TICK: usize = SDT_HEADER_LEN + 17;
const OFFSET_PAGE_PROTECTION: usize = SDT_HEADER_LEN + 19;
/// Generic Address Structure Address Space ID 0: system memory (ACPI 6.5 §5.2.3.2).
const ADDRESS_SPACE_SYSTEM_MEMORY: u8 = 0;

// The `acpi` crate declares the same table; its size must agree with ours.
const _: () = assert!(core::mem::size_of::<acpi::hpet::HpetTable>() == HPET_TABLE_LEN);

/// Page protection the firmware guarantees around the timer block (HPET spec §3.2.4, bits 3:0
/// of the Page Protection and OEM Attribute field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageProtection {
    None,
    /// No other device in the rest of the 4 KiB page.
    Protected4K,
    /// No other device in the rest of the 64 KiB.
    Protected64K,
    /// A value the specification reserves.
    Reserved(u8),
}

/// The first (or only) HPET block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HpetInfo {
    /// Physical address of the register block (system memory).
    pub base_address: u64,
    /// REV_ID, General Capabilities bits 7:0.
    pub hardware_rev: u8,
    /// Number of comparators (timers): NUM_TIM_CAP (bits 12:8, the last timer's index) + 1.
    pub comparators: u8,
    /// COUNT_SIZE_CAP, bit 13: the main counter is 64 bits wide.
    pub counter_64bit: bool,
    /// LEG_RT_CAP, bit 15: can take over IRQ0/IRQ8 (legacy replacement routing).
    pub legacy_replacement: bool,
    /// VENDOR_ID, bits 31:16.
    pub pci_vendor_id: u16,
    /// Which HPET block this table describes (0 for the first).
    pub hpet_number: u8,
    /// Main Counter Minimum Clock Tick: the least periodic-mode period, in counter ticks,
    /// that does not lose interrupts.
    pub min_tick: u16,
    pub page_protection: PageProtection,
    /// The raw Event Timer Block ID, for logs and cross-checks.
    pub event_timer_block_id: u32,
}

/// Decodes the General Capabilities and ID register's low 32 bits (HPET spec §2.3.4):
/// (hardware_rev, comparators, counter_64bit, legacy_replacement, pci_vendor_id).
pub fn decode_block_id(id: u32) -> (u8, u8, bool, bool, u16) {
    let hardware_rev = (id & 0xFF) as u8;
    // NUM_TIM_CAP (bits 12:8) is the number of the last comparator: at most 31 + 1, so the add
    // never saturates.
    let comparators = (((id >> 8) & 0x1F) as u8).saturating_add(1);
    let counter_64bit = id & (1 << 13) != 0;
    let legacy_replacement = id & (1 << 15) != 0;
    let pci_vendor_id = (id >> 16) as u16;
    (hardware_rev, comparators, counter_64bit, legacy_replacement, pci_vendor_id)
}

impl HpetInfo {
    /// Decodes a checked HPET table (see [`Table::from_bytes`], with `min_len` =
    /// [`HPET_TABLE_LEN`]). A block outside system memory or at address 0 is an error: the
    /// kernel reaches the HPET by MMIO only.
    pub fn parse(table: &Table<'_>) -> Result<HpetInfo, AcpiError> {
        let bytes = table.bytes;
        let short = || AcpiError::BadLength {
            signature: table.header.signature,
            phys: table.phys,
            length: bytes.len() as u32,
            min: HPET_TABLE_LEN as u32,
            max: super::sdt::MAX_TABLE_LEN,
        };
        let event_timer_block_id = bytes.u32_at(OFFSET_BLOCK_ID).ok_or_else(short)?;
        let address_space = bytes.u8_at(OFFSET_BASE_GAS).ok_or_else(short)?;
        let base_address = bytes.u64_at(OFFSET_BASE_GAS + 4).ok_or_else(short)?;
        let hpet_number = bytes.u8_at(OFFSET_HPET_NUMBER).ok_or_else(short)?;
        let min_tick = bytes.u16_at(OFFSET_MIN_TICK).ok_or_else(short)?;
        let protection = bytes.u8_at(OFFSET_PAGE_PROTECTION).ok_or_else(short)? & 0x0F;

        if address_space != ADDRESS_SPACE_SYSTEM_MEMORY {
            return Err(AcpiError::HpetNotInMemory { phys: table.phys, address_space });
        }
        if base_address == 0 {
            return Err(AcpiError::HpetNoBaseAddress { phys: table.phys });
        }
        let (hardware_rev, comparators, counter_64bit, legacy_replacement, pci_vendor_id) =
            decode_block_id(event_timer_block_id);
        Ok(HpetInfo {
            base_address,
            hardware_rev,
            comparators,
            counter_64bit,
            legacy_replacement,
            pci_vendor_id,
            hpet_number,
            min_tick,
            page_protection: match protection {
                0 => PageProtection::None,
                1 => PageProtection::Protected4K,
                2 => PageProtection::Protected64K,
                other => PageProtection::Reserved(other),
            },
            event_timer_block_id,
        })
    }
}

impl fmt::Display for HpetInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "HPET {} at {:#x}: {} comparators, {}-bit counter, {}vendor {:#06x} rev {}, min tick {}",
            self.hpet_number,
            self.base_address,
            self.comparators,
            if self.counter_64bit { 64 } else { 32 },
            if self.legacy_replacement { "legacy replacement, " } else { "" },
            self.pci_vendor_id,
            self.hardware_rev,
            self.min_tick
        )
    }
}
