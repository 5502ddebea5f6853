//! Base Address Register and expansion ROM sizing.
//!
//! PCI Local Bus Specification 3.0 §6.2.5.1 (BAR layout and sizing: write all ones, read back,
//! the lowest writable address bit is the size) and §6.2.5.2 (expansion ROM BAR: bit 0 enable,
//! bits 31:11 address).
//!
//! Why not `pci_types::EndpointHeader::bar`: it panics on the reserved memory type (hardware
//! input must not panic the kernel), sizes with decode still enabled (a BAR at all ones can alias
//! RAM or another device for the duration), and covers neither bridges' two slots nor the ROM.

use alloc::vec::Vec;

use pci_types::{CommandRegister, PciAddress};

use super::access::ConfigAccess;
use super::function::{Bar, BarKind, RomBar, Warning};

/// Offset of BAR 0 in every header type.
const BAR0: u16 = 0x10;
/// Command register offset; the upper 16 bits of its dword are the status register.
pub(crate) const COMMAND: u16 = 0x04;

const BAR_IO: u32 = 1 << 0;
const BAR_MEM_TYPE_SHIFT: u32 = 1;
const BAR_MEM_PREFETCHABLE: u32 = 1 << 3;
const BAR_IO_ADDRESS_MASK: u32 = !0x3;
const BAR_MEM_ADDRESS_MASK: u32 = !0xf;
const ROM_ADDRESS_MASK: u32 = 0xffff_f800;
const ROM_ENABLE: u32 = 1 << 0;

/// Where the sizing routine finds a header type's BARs.
pub(crate) struct BarLayout {
    /// Number of BAR slots starting at 0x10: 6 for type 0, 2 for type 1, 1 for CardBus.
    pub slots: u8,
    /// Expansion ROM BAR offset, if the header type has one.
    pub rom: Option<u16>,
    /// Leave memory/I/O decode on while sizing. Host bridges: turning their decode off can take
    /// away the path to RAM or to config space itself (Linux marks them `mmio_always_on`).
    pub keep_decode: bool,
}

/// Sizes every BAR and the ROM BAR with memory and I/O decode disabled, then restores the
/// command register exactly as found.
pub(crate) fn size_all<A: ConfigAccess + ?Sized>(
    access: &A,
    address: PciAddress,
    layout: &BarLayout,
    warnings: &mut Vec<Warning>,
) -> ([Option<Bar>; 6], Option<RomBar>) {
    let command = access.read32(address, COMMAND) & 0xffff;
    let decode = (CommandRegister::IO_ENABLE | CommandRegister::MEMORY_ENABLE).bits() as u32;
    let disable = !layout.keep_decode && command & decode != 0;
    if disable {
        // Zero in the status half: its error bits are write-one-to-clear.
        access.write32(address, COMMAND, command & !decode);
    }

    let mut bars = [None; 6];
    let mut slot = 0u8;
    while slot < layout.slots.min(6) {
        let (bar, used) = size_bar(access, address, slot, layout.slots, warnings);
        if let Some(entry) = bars.get_mut(slot as usize) {
            *entry = bar;
        }
        slot += used;
    }
    let rom = layout.rom.and_then(|offset| size_rom(access, address, offset));

    if disable {
        access.write32(address, COMMAND, command);
    }
    (bars, rom)
}

/// Sizes the BAR in `slot`; returns it and how many slots it used (2 for 64-bit).
fn size_bar<A: ConfigAccess + ?Sized>(
    access: &A,
    address: PciAddress,
    slot: u8,
    slots: u8,
    warnings: &mut Vec<Warning>,
) -> (Option<Bar>, u8) {
    let offset = BAR0 + 4 * slot as u16;
    let original = access.read32(address, offset);
    if original == u32::MAX {
        // Master abort: the function went away. Nothing to size, nothing to write.
        return (None, 1);
    }

    if original & BAR_IO != 0 {
        let Some(mask) = probe(access, address, offset, u32::MAX) else {
            return (None, 1);
        };
        let mut mask = mask & BAR_IO_ADDRESS_MASK;
        if mask == 0 {
            return (None, 1);
        }
        // A 16-bit I/O decoder may hardwire the upper half to zero (PCI LB 3.0 §6.2.5.1).
        if mask & 0xffff_0000 == 0 {
            mask |= 0xffff_0000;
        }
        let bar = Bar {
            index: slot,
            kind: BarKind::Io,
            prefetchable: false,
            address: (original & BAR_IO_ADDRESS_MASK) as u64,
            size: lowest_set_bit(mask as u64),
        };
        return (Some(bar), 1);
    }

    let prefetchable = original & BAR_MEM_PREFETCHABLE != 0;
    match (original >> BAR_MEM_TYPE_SHIFT) & 0b11 {
        0b10 => {
            if slot + 1 >= slots {
                warnings.push(Warning::Bar64InLastSlot { index: slot });
                return (None, 1);
            }
            let original_high = access.read32(address, offset + 4);
            access.write32(address, offset, u32::MAX);
            access.write32(address, offset + 4, u32::MAX);
            let low = access.read32(address, offset);
            let high = access.read32(address, offset + 4);
            access.write32(address, offset, original);
            access.write32(address, offset + 4, original_high);
            let mask = ((high as u64) << 32 | low as u64) & !0xf;
            if mask == 0 {
                return (None, 2);
            }
            let bar = Bar {
                index: slot,
                kind: BarKind::Mem64,
                prefetchable,
                address: (original_high as u64) << 32 | (original & BAR_MEM_ADDRESS_MASK) as u64,
                size: lowest_set_bit(mask),
            };
            (Some(bar), 2)
        }
        0b11 => {
            warnings.push(Warning::ReservedBarType { index: slot, raw: original });
            (None, 1)
        }
        memory_type => {
            let Some(mask) = probe(access, address, offset, u32::MAX) else {
                return (None, 1);
            };
            let mask = mask & BAR_MEM_ADDRESS_MASK;
            if mask == 0 {
                return (None, 1);
            }
            if memory_type == 0b01 {
                warnings.push(Warning::LegacyBelow1MiBBar { index: slot });
            }
            let bar = Bar {
                index: slot,
                kind: BarKind::Mem32,
                prefetchable,
                address: (original & BAR_MEM_ADDRESS_MASK) as u64,
                size: lowest_set_bit(mask as u64),
            };
            (Some(bar), 1)
        }
    }
}

fn size_rom<A: ConfigAccess + ?Sized>(access: &A, address: PciAddress, offset: u16) -> Option<RomBar> {
    let original = access.read32(address, offset);
    if original == u32::MAX {
        return None;
    }
    // Enable stays 0 while sizing, so the ROM never decodes at the all-ones address.
    let mask = probe(access, address, offset, ROM_ADDRESS_MASK)? & ROM_ADDRESS_MASK;
    if mask == 0 {
        return None;
    }
    Some(RomBar {
        address: original & ROM_ADDRESS_MASK,
        size: lowest_set_bit(mask as u64) as u32,
        enabled: original & ROM_ENABLE != 0,
    })
}

/// Writes `pattern`, reads back, restores the original value. `None` if the read-back is all
/// ones (a master abort, not a decoder).
fn probe<A: ConfigAccess + ?Sized>(access: &A, address: PciAddress, offset: u16, pattern: u32) -> Option<u32> {
    let original = access.read32(address, offset);
    access.write32(address, offset, pattern);
    let readback = access.read32(address, offset);
    access.write32(address, offset, original);
    (readback != u32::MAX).then_some(readback)
}

fn lowest_set_bit(mask: u64) -> u64 {
    mask & mask.wrapping_neg()
}
