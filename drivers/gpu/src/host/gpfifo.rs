//! GPFIFO entries: where a pushbuffer segment is and how long it is (`NVC46F_GP_ENTRY0/1_*`).

use core::fmt;

use crate::hw::host::{GpFetch, GpLevel, GpOpcode, GpSync, NVC46F_GP_ENTRY0, NVC46F_GP_ENTRY1, NVC46F_GP_ENTRY__SIZE};
use crate::hw::InvalidFieldValue;

/// Bytes per entry.
pub const GP_ENTRY_SIZE: u32 = NVC46F_GP_ENTRY__SIZE;
/// Bits of a pushbuffer segment address: `GET` (31:2) and `GET_HI` (7:0 of entry 1).
pub const GP_ADDRESS_BITS: u32 = 32 + NVC46F_GP_ENTRY1::GET_HI.bits.width();
/// The longest segment one entry describes, in dwords (`LENGTH`, 21 bits).
pub const GP_MAX_LENGTH_DWORDS: u32 = NVC46F_GP_ENTRY1::LENGTH.bits.mask() >> NVC46F_GP_ENTRY1::LENGTH.bits.lo;

/// Options of an entry; [`GpEntryFlags::default`] is what a driver pushes normally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpEntryFlags {
    /// `FETCH`: unconditional (default) or conditional.
    pub fetch: GpFetch,
    /// `LEVEL`: main (default) or subroutine.
    pub level: GpLevel,
    /// `SYNC`: proceed (default) or wait for the previous segment's methods to complete.
    pub sync: GpSync,
}

impl Default for GpEntryFlags {
    fn default() -> Self {
        Self { fetch: GpFetch::Unconditional, level: GpLevel::Main, sync: GpSync::Proceed }
    }
}

/// Why an entry could not be built or read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpEntryError {
    /// The segment address is not 4-byte aligned.
    Misaligned { address: u64 },
    /// The segment address needs more than [`GP_ADDRESS_BITS`] bits.
    AddressOutOfRange { address: u64 },
    /// A segment of 0 dwords (LENGTH 0 is a control entry: use [`GpEntry::control`]).
    EmptySegment,
    /// The length does not fit `LENGTH` ([`GP_MAX_LENGTH_DWORDS`]).
    LengthOutOfRange { length: u32 },
    /// A field held a value the header does not define.
    InvalidField(InvalidFieldValue),
}

impl fmt::Display for GpEntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Misaligned { address } => write!(f, "pushbuffer segment {address:#x} is not 4-byte aligned"),
            Self::AddressOutOfRange { address } => {
                write!(f, "pushbuffer segment {address:#x} is beyond {GP_ADDRESS_BITS} bits")
            }
            Self::EmptySegment => write!(f, "a GPFIFO entry needs a segment of at least one dword"),
            Self::LengthOutOfRange { length } => {
                write!(f, "segment of {length} dwords exceeds {GP_MAX_LENGTH_DWORDS}")
            }
            Self::InvalidField(e) => e.fmt(f),
        }
    }
}

impl From<InvalidFieldValue> for GpEntryError {
    fn from(e: InvalidFieldValue) -> Self {
        Self::InvalidField(e)
    }
}

/// One GPFIFO entry: two little-endian words, entry 0 first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct GpEntry {
    pub entry0: NVC46F_GP_ENTRY0,
    pub entry1: NVC46F_GP_ENTRY1,
}

/// What a decoded entry says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpEntryKind {
    /// A pushbuffer segment.
    Segment { address: u64, length_dwords: u32, flags: GpEntryFlags },
    /// A control entry (LENGTH 0) with its operation and operand.
    Control { opcode: GpOpcode, operand: u32, sync: GpSync },
}

impl GpEntry {
    /// An entry for the segment of `length_dwords` dwords at GPU virtual address
    /// `pushbuffer_gpu_va`.
    pub fn new(pushbuffer_gpu_va: u64, length_dwords: u32, flags: GpEntryFlags) -> Result<Self, GpEntryError> {
        let address = pushbuffer_gpu_va;
        if !address.is_multiple_of(4) {
            return Err(GpEntryError::Misaligned { address });
        }
        if address >> GP_ADDRESS_BITS != 0 {
            return Err(GpEntryError::AddressOutOfRange { address });
        }
        if length_dwords == 0 {
            return Err(GpEntryError::EmptySegment);
        }
        if length_dwords > GP_MAX_LENGTH_DWORDS {
            return Err(GpEntryError::LengthOutOfRange { length: length_dwords });
        }
        let entry0 = NVC46F_GP_ENTRY0::default()
            .with(NVC46F_GP_ENTRY0::FETCH, flags.fetch)
            .with(NVC46F_GP_ENTRY0::GET, (address as u32) >> 2);
        let entry1 = NVC46F_GP_ENTRY1::default()
            .with(NVC46F_GP_ENTRY1::GET_HI, (address >> 32) as u8)
            .with(NVC46F_GP_ENTRY1::LEVEL, flags.level)
            .with(NVC46F_GP_ENTRY1::LENGTH, length_dwords)
            .with(NVC46F_GP_ENTRY1::SYNC, flags.sync);
        Ok(Self { entry0, entry1 })
    }

    /// A control entry (LENGTH 0): `opcode` with `operand` in entry 0.
    pub fn control(opcode: GpOpcode, operand: u32, sync: GpSync) -> Self {
        Self {
            entry0: NVC46F_GP_ENTRY0::default().with(NVC46F_GP_ENTRY0::OPERAND, operand),
            entry1: NVC46F_GP_ENTRY1::default()
                .with(NVC46F_GP_ENTRY1::OPCODE, opcode)
                .with(NVC46F_GP_ENTRY1::SYNC, sync),
        }
    }

    /// The entry's two words, as stored in the GPFIFO ring.
    pub const fn to_words(self) -> [u32; 2] {
        [self.entry0.0, self.entry1.0]
    }

    /// The entry as one little-endian 64-bit word.
    pub const fn to_u64(self) -> u64 {
        self.entry0.0 as u64 | (self.entry1.0 as u64) << 32
    }

    /// The entry held in `words`.
    pub const fn from_words(words: [u32; 2]) -> Self {
        Self { entry0: NVC46F_GP_ENTRY0(words[0]), entry1: NVC46F_GP_ENTRY1(words[1]) }
    }

    /// Reads the entry back; entries come from memory, so undefined values are errors.
    pub fn decode(self) -> Result<GpEntryKind, GpEntryError> {
        let length_dwords = self.entry1.length();
        let sync = self.entry1.sync()?;
        if length_dwords == 0 {
            return Ok(GpEntryKind::Control { opcode: self.entry1.opcode()?, operand: self.entry0.operand(), sync });
        }
        let address = ((self.entry1.get_hi() as u64) << 32) | ((self.entry0.get_lo() as u64) << 2);
        let flags = GpEntryFlags { fetch: self.entry0.fetch()?, level: self.entry1.level()?, sync };
        Ok(GpEntryKind::Segment { address, length_dwords, flags })
    }
}
