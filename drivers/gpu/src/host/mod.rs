//! Host (PBDMA) encodings: pushbuffer methods and GPFIFO entries, as the GPFIFO channel classes
//! (TURING_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A, HOPPER_CHANNEL_GPFIFO_A) define them.
//!
//! Every bit position comes from [`crate::hw::host`], whose facts the conformance test checks
//! against `clc46f.h`, `clc56f.h` and `clc86f.h`.

pub mod gpfifo;
pub mod mem_op;
pub mod pushbuf;

pub use gpfifo::{GpEntry, GpEntryError, GpEntryFlags};
pub use mem_op::{CancelVa, CancelVaMode, MemOpError, PdbAperture, ReplayType};
pub use pushbuf::{decode, DecodeError, MethodKind, PushBuffer, PushError, PushMethod, PushStorage, SliceStorage};

use crate::hw::{classes, host::hopper, host::NVC46F_SEM_ADDR_HI};

/// The GPFIFO channel class a pushbuffer is written for; the formats agree except for how wide a
/// semaphore address may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostClass {
    /// TURING_CHANNEL_GPFIFO_A (`0xc46f`).
    TuringA,
    /// AMPERE_CHANNEL_GPFIFO_A (`0xc56f`).
    AmpereA,
    /// HOPPER_CHANNEL_GPFIFO_A (`0xc86f`).
    HopperA,
}

impl HostClass {
    /// The GPFIFO class of `class_number`, if this encoder writes for it.
    pub const fn from_class_number(class_number: u32) -> Option<HostClass> {
        match class_number {
            classes::TURING_CHANNEL_GPFIFO_A => Some(HostClass::TuringA),
            classes::AMPERE_CHANNEL_GPFIFO_A => Some(HostClass::AmpereA),
            classes::HOPPER_CHANNEL_GPFIFO_A => Some(HostClass::HopperA),
            _ => None,
        }
    }

    /// The class number.
    pub const fn class_number(self) -> u32 {
        match self {
            HostClass::TuringA => classes::TURING_CHANNEL_GPFIFO_A,
            HostClass::AmpereA => classes::AMPERE_CHANNEL_GPFIFO_A,
            HostClass::HopperA => classes::HOPPER_CHANNEL_GPFIFO_A,
        }
    }

    /// Bits of a semaphore address: 32 plus the width of `SEM_ADDR_HI_OFFSET` (40 before Hopper,
    /// 57 on Hopper).
    pub const fn semaphore_address_bits(self) -> u32 {
        match self {
            HostClass::TuringA | HostClass::AmpereA => 32 + NVC46F_SEM_ADDR_HI::OFFSET.bits.width(),
            HostClass::HopperA => {
                32 + (hopper::NVC86F_SEM_ADDR_HI_OFFSET.last - hopper::NVC86F_SEM_ADDR_HI_OFFSET.first + 1)
            }
        }
    }
}
