//! The copy engine, driver side: memcopy, memset and semaphore releases written as DMA copy class
//! methods into a pushbuffer.
//!
//! Facts come from [`crate::hw::ce`] (checked against `clc5b5.h` .. `clcab5.h`). How the methods
//! are combined follows what NVIDIA's UVM driver does with the same classes (535.261.03,
//! `kernel-open/nvidia-uvm/uvm_volta_ce.c`, `uvm_ampere_ce.c`, `uvm_hopper_ce.c`):
//!
//! - a transfer is `OFFSET_IN/OUT`, `LINE_LENGTH_IN`, then `LAUNCH_DMA` with pitch layouts on both
//!   sides; physical sides first set `SET_SRC/DST_PHYS_MODE` and launch with `*_TYPE_PHYSICAL`;
//! - `LINE_LENGTH_IN` is 32 bits. UVM loops over 4 GiB - 1 pieces; here a transfer above that is
//!   one multi-line launch of 2 GiB lines (`PITCH_IN = PITCH_OUT = LINE_LENGTH_IN`, contiguous)
//!   plus one launch for the remainder, so any size takes at most two launches;
//! - memset is a remapped transfer with no source: `SET_REMAP_CONST_B` and one component for 1- and
//!   4-byte patterns, `CONST_A`/`CONST_B` as two 4-byte components for 8-byte ones; with remapping
//!   `LINE_LENGTH_IN` counts elements, not bytes. UVM only issues 4-byte components at 4-byte
//!   aligned addresses and sizes; so does this encoder: an unaligned head, and a tail shorter than
//!   a component, are written with 1-byte components;
//! - the first launch of an operation is pipelined or not as the caller says; later pieces of the
//!   same operation are independent of each other and are always `PIPELINED`. A pipelined
//!   transfer may overlap the previous one; `NON_PIPELINED` waits until the previous transfer
//!   completed (use it when this transfer reads what the previous one wrote);
//! - transfers do not flush; a semaphore release launches no transfer (`DATA_TRANSFER_TYPE_NONE`)
//!   and flushes first (`FLUSH_ENABLE_TRUE`, `FLUSH_TYPE_SYS`), so when the payload is visible the
//!   copies before it are too;
//! - from AMPERE_DMA_COPY_B on, launches set `DISABLE_PLC_TRUE` (`uvm_hal_ampere_ce_plc_mode_c7b5`).
//!
//! Every operation is written whole or not at all: it is encoded into scratch first, and only
//! written when the pushbuffer has room for all of it.

use alloc::vec::Vec;
use core::fmt;

use crate::hal::Hal;
use crate::host::{PushBuffer, PushError, PushStorage};
use crate::hw::ce::{
    self, method, AddressType, ComponentCount, ComponentSize, DataTransferType, FlushType, InterruptType, MemoryLayout,
    PhysModeTarget, RemapSource, SemaphoreType, NVC5B5_LAUNCH_DMA, NVC5B5_OFFSET_IN_UPPER, NVC5B5_SET_REMAP_COMPONENTS,
    NVC5B5_SET_SEMAPHORE_A, NVC5B5_SET_SRC_PHYS_MODE,
};
use crate::hw::{classes, UnitRange};

/// The DMA copy class of a chip family (the class RM lists for the chip; see
/// [`crate::hal::EngineClasses::copy`], checked against `g_gpu_class_list.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CeClass {
    /// TURING_DMA_COPY_A (`0xc5b5`), Turing.
    TuringA,
    /// AMPERE_DMA_COPY_A (`0xc6b5`), GA100.
    AmpereA,
    /// AMPERE_DMA_COPY_B (`0xc7b5`), GA10x and Ada.
    AmpereB,
    /// HOPPER_DMA_COPY_A (`0xc8b5`), GH100.
    HopperA,
    /// BLACKWELL_DMA_COPY_A (`0xc9b5`), GB10x.
    BlackwellA,
    /// BLACKWELL_DMA_COPY_B (`0xcab5`), GB20x.
    BlackwellB,
}

const fn width(range: UnitRange) -> u32 {
    range.last - range.first + 1
}

impl CeClass {
    /// Every class, oldest first.
    pub const ALL: &'static [CeClass] =
        &[Self::TuringA, Self::AmpereA, Self::AmpereB, Self::HopperA, Self::BlackwellA, Self::BlackwellB];

    /// The class number.
    pub const fn class_number(self) -> u32 {
        match self {
            Self::TuringA => classes::TURING_DMA_COPY_A,
            Self::AmpereA => classes::AMPERE_DMA_COPY_A,
            Self::AmpereB => classes::AMPERE_DMA_COPY_B,
            Self::HopperA => classes::HOPPER_DMA_COPY_A,
            Self::BlackwellA => classes::BLACKWELL_DMA_COPY_A,
            Self::BlackwellB => classes::BLACKWELL_DMA_COPY_B,
        }
    }

    /// The class with number `number`, if it is a copy class this driver knows.
    pub const fn from_class_number(number: u32) -> Option<Self> {
        let mut i = 0;
        while i < Self::ALL.len() {
            if Self::ALL[i].class_number() == number {
                return Some(Self::ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// The copy class of the chips `hal` drives.
    pub const fn for_hal(hal: &Hal) -> Option<Self> {
        Self::from_class_number(hal.classes.copy)
    }

    /// Bits of a transfer address: 32 plus the width of `OFFSET_IN_UPPER_UPPER` (49 before
    /// Hopper, 57 from Hopper on).
    pub const fn address_bits(self) -> u32 {
        32 + match self {
            Self::TuringA | Self::AmpereA | Self::AmpereB => NVC5B5_OFFSET_IN_UPPER::UPPER.bits.width(),
            Self::HopperA => width(ce::hopper::NVC8B5_OFFSET_IN_UPPER_UPPER),
            Self::BlackwellA => width(ce::blackwell_a::NVC9B5_OFFSET_IN_UPPER_UPPER),
            Self::BlackwellB => width(ce::blackwell_b::NVCAB5_OFFSET_IN_UPPER_UPPER),
        }
    }

    /// Bits of a semaphore address: 32 plus the width of `SET_SEMAPHORE_A_UPPER`.
    pub const fn semaphore_address_bits(self) -> u32 {
        32 + match self {
            Self::TuringA | Self::AmpereA | Self::AmpereB => NVC5B5_SET_SEMAPHORE_A::UPPER.bits.width(),
            Self::HopperA => width(ce::hopper::NVC8B5_SET_SEMAPHORE_A_UPPER),
            Self::BlackwellA => width(ce::blackwell_a::NVC9B5_SET_SEMAPHORE_A_UPPER),
            Self::BlackwellB => width(ce::blackwell_b::NVCAB5_SET_SEMAPHORE_A_UPPER),
        }
    }

    /// Whether `SET_*_PHYS_MODE_TARGET_PEERMEM` exists (AMPERE_DMA_COPY_A on).
    pub const fn has_peer_aperture(self) -> bool {
        !matches!(self, Self::TuringA)
    }

    /// Whether semaphores take 64-bit payloads (`SET_SEMAPHORE_PAYLOAD_UPPER`,
    /// `LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE`; AMPERE_DMA_COPY_B on).
    pub const fn has_payload_upper(self) -> bool {
        !matches!(self, Self::TuringA | Self::AmpereA)
    }

    /// Whether `LAUNCH_DMA_SRC/DST_BYPASS_L2` exist (TURING_DMA_COPY_A only).
    pub const fn has_bypass_l2(self) -> bool {
        matches!(self, Self::TuringA)
    }

    /// Whether `LAUNCH_DMA_COPY_TYPE` and `MEMORY_SCRUB_ENABLE` exist (HOPPER_DMA_COPY_A on).
    pub const fn has_copy_type(self) -> bool {
        matches!(self, Self::HopperA | Self::BlackwellA | Self::BlackwellB)
    }

    /// Whether `LAUNCH_DMA_FORCE_RMWDISABLE` exists (not in the Blackwell classes).
    pub const fn has_force_rmwdisable(self) -> bool {
        !matches!(self, Self::BlackwellA | Self::BlackwellB)
    }

    /// Whether launches disable post-L2 compression, as UVM does from AMPERE_DMA_COPY_B on.
    pub const fn disables_plc(self) -> bool {
        self.has_payload_upper()
    }

    /// `LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE` (bit 27 in every class that has it).
    pub const fn semaphore_payload_size_field(self) -> Option<UnitRange> {
        match self {
            Self::TuringA | Self::AmpereA => None,
            Self::AmpereB => Some(ce::ampere_b::NVC7B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
            Self::HopperA => Some(ce::hopper::NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
            Self::BlackwellA => Some(ce::blackwell_a::NVC9B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
            Self::BlackwellB => Some(ce::blackwell_b::NVCAB5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
        }
    }
}

/// `value` placed in `range` of `raw` (bits beyond the range's width dropped).
pub const fn set_range(raw: u32, range: UnitRange, value: u32) -> u32 {
    let w = width(range);
    let ones = if w >= 32 { u32::MAX } else { (1u32 << w) - 1 };
    (raw & !(ones << range.first)) | ((value & ones) << range.first)
}

/// `range` of `raw`, shifted down.
pub const fn get_range(raw: u32, range: UnitRange) -> u32 {
    let w = width(range);
    let ones = if w >= 32 { u32::MAX } else { (1u32 << w) - 1 };
    (raw >> range.first) & ones
}

/// Where a physical address points, as `SET_*_PHYS_MODE_TARGET` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CeAperture {
    LocalFb,
    CoherentSysmem,
    NoncoherentSysmem,
    /// A peer GPU's framebuffer, by peer id (`PEER_ID`, 3 bits; AMPERE_DMA_COPY_A on).
    Peer(u8),
}

/// One side of a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CeAddress {
    /// A GPU virtual address in the channel's VA space.
    Virtual(u64),
    /// A physical address in an aperture.
    Physical { aperture: CeAperture, addr: u64 },
}

impl CeAddress {
    /// The address, whatever its kind.
    pub const fn addr(self) -> u64 {
        match self {
            Self::Virtual(va) => va,
            Self::Physical { addr, .. } => addr,
        }
    }

    fn with_addr(self, addr: u64) -> Self {
        match self {
            Self::Virtual(_) => Self::Virtual(addr),
            Self::Physical { aperture, .. } => Self::Physical { aperture, addr },
        }
    }

    const fn address_type(self) -> AddressType {
        match self {
            Self::Virtual(_) => AddressType::Virtual,
            Self::Physical { .. } => AddressType::Physical,
        }
    }
}

/// Whether the first launch of an operation may overlap the previous transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pipelining {
    /// `DATA_TRANSFER_TYPE_PIPELINED`: may start before the previous transfer completed.
    Pipelined,
    /// `DATA_TRANSFER_TYPE_NON_PIPELINED`: waits for the previous transfer to complete.
    NonPipelined,
}

impl Pipelining {
    const fn transfer_type(self) -> DataTransferType {
        match self {
            Self::Pipelined => DataTransferType::Pipelined,
            Self::NonPipelined => DataTransferType::NonPipelined,
        }
    }
}

/// The value a memset writes, repeated from the first destination byte on (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemsetPattern {
    U8(u8),
    U32(u32),
    U64(u64),
}

impl MemsetPattern {
    /// The pattern's bytes (the first `len` of the array).
    pub fn bytes(self) -> ([u8; 8], usize) {
        let mut b = [0u8; 8];
        match self {
            Self::U8(v) => {
                b[0] = v;
                (b, 1)
            }
            Self::U32(v) => {
                b[..4].copy_from_slice(&v.to_le_bytes());
                (b, 4)
            }
            Self::U64(v) => (v.to_le_bytes(), 8),
        }
    }
}

/// A semaphore release by the copy engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SemaphoreRelease {
    /// GPU virtual address (4-byte aligned; 8 for 64-bit payloads; 16 with a timestamp).
    pub va: u64,
    pub payload: u64,
    /// Write 64 bits of payload (`SEMAPHORE_PAYLOAD_SIZE_TWO_WORD`; AMPERE_DMA_COPY_B on).
    pub payload_64: bool,
    /// Write the 16-byte report with a timestamp (`RELEASE_FOUR_WORD_SEMAPHORE`).
    pub timestamp: bool,
    /// Flush before releasing, and to where; `None` releases without a flush.
    pub flush: Option<FlushType>,
    /// Raise the copy engine's interrupt when done.
    pub interrupt: InterruptType,
}

/// Why an operation could not be encoded. Nothing was written to the pushbuffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeEncodeError {
    /// The pushbuffer refused a method (typically: full).
    Push(PushError),
    /// `[addr, addr + bytes)` does not fit the class's `bits`-bit addresses.
    AddressOutOfRange { addr: u64, bytes: u64, bits: u32 },
    /// The class has no peer aperture (TURING_DMA_COPY_A).
    PeerNotSupported { class: CeClass },
    /// The peer id does not fit `PEER_ID`.
    PeerIdOutOfRange { peer: u8 },
    /// Source and destination overlap; the engine's copy order is unspecified.
    Overlap { src: CeAddress, dst: CeAddress, bytes: u64 },
    /// A semaphore address not aligned to what the release writes.
    SemaphoreMisaligned { va: u64, alignment: u64 },
    /// A 64-bit payload on a class without `SET_SEMAPHORE_PAYLOAD_UPPER`.
    Payload64NotSupported { class: CeClass },
    /// A 32-bit release with a payload above 32 bits.
    PayloadTooLarge { payload: u64 },
}

impl From<PushError> for CeEncodeError {
    fn from(e: PushError) -> Self {
        Self::Push(e)
    }
}

impl fmt::Display for CeEncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Push(e) => write!(f, "copy engine methods: {e}"),
            Self::AddressOutOfRange { addr, bytes, bits } => {
                write!(f, "copy engine range {addr:#x}+{bytes:#x} is beyond {bits}-bit addresses")
            }
            Self::PeerNotSupported { class } => write!(f, "{class:?} has no peer aperture"),
            Self::PeerIdOutOfRange { peer } => write!(f, "peer id {peer} does not fit PEER_ID"),
            Self::Overlap { src, dst, bytes } => write!(f, "copy of {bytes:#x} bytes from {src:?} to {dst:?} overlaps"),
            Self::SemaphoreMisaligned { va, alignment } => {
                write!(f, "semaphore {va:#x} is not {alignment}-byte aligned")
            }
            Self::Payload64NotSupported { class } => write!(f, "{class:?} has no 64-bit semaphore payload"),
            Self::PayloadTooLarge { payload } => write!(f, "payload {payload:#x} does not fit 32 bits"),
        }
    }
}

/// Longest line of one launch (`LINE_LENGTH_IN_VALUE`, 32 bits).
pub const MAX_LINE_LENGTH: u64 = NVC5B5_LAUNCH_DMA_LINE_MAX;
const NVC5B5_LAUNCH_DMA_LINE_MAX: u64 =
    (ce::NVC5B5_LINE_LENGTH_IN::VALUE.bits.mask() >> ce::NVC5B5_LINE_LENGTH_IN::VALUE.bits.lo) as u64;
/// Bytes per line of a multi-line transfer, and its pitch: 2 GiB, so lines of 1-, 4- and 8-byte
/// elements all fit `LINE_LENGTH_IN` and the pitch fits `PITCH_IN/OUT` (32 bits).
pub const MULTI_LINE_BYTES: u64 = 1 << 31;

// The state methods a launch reads are consecutive, so one incrementing method sets them.
const _: () = {
    assert!(method::NVC5B5_OFFSET_IN_LOWER == method::NVC5B5_OFFSET_IN_UPPER + 4);
    assert!(method::NVC5B5_OFFSET_OUT_UPPER == method::NVC5B5_OFFSET_IN_UPPER + 8);
    assert!(method::NVC5B5_OFFSET_OUT_LOWER == method::NVC5B5_OFFSET_IN_UPPER + 12);
    assert!(method::NVC5B5_PITCH_IN == method::NVC5B5_OFFSET_IN_UPPER + 16);
    assert!(method::NVC5B5_PITCH_OUT == method::NVC5B5_OFFSET_IN_UPPER + 20);
    assert!(method::NVC5B5_LINE_LENGTH_IN == method::NVC5B5_OFFSET_IN_UPPER + 24);
    assert!(method::NVC5B5_LINE_COUNT == method::NVC5B5_OFFSET_IN_UPPER + 28);
    assert!(method::NVC5B5_SET_SEMAPHORE_B == method::NVC5B5_SET_SEMAPHORE_A + 4);
    assert!(method::NVC5B5_SET_SEMAPHORE_PAYLOAD == method::NVC5B5_SET_SEMAPHORE_A + 8);
    assert!(ce::ampere_b::NVC7B5_SET_SEMAPHORE_PAYLOAD_UPPER == method::NVC5B5_SET_SEMAPHORE_A + 12);
    assert!(method::NVC5B5_SET_DST_PHYS_MODE == method::NVC5B5_SET_SRC_PHYS_MODE + 4);
    assert!(method::NVC5B5_SET_REMAP_CONST_B == method::NVC5B5_SET_REMAP_CONST_A + 4);
    assert!(method::NVC5B5_SET_REMAP_COMPONENTS == method::NVC5B5_SET_REMAP_CONST_A + 8);
    assert!(MULTI_LINE_BYTES <= NVC5B5_LAUNCH_DMA_LINE_MAX);
};

/// One launch's geometry: a single line, or `count` contiguous lines.
#[derive(Clone, Copy)]
struct Lines {
    /// Line length: bytes, or elements with remapping.
    length: u32,
    /// Number of lines (1: single-line launch).
    count: u32,
    /// Bytes between line starts (multi-line only).
    pitch: u32,
}

/// Splits `units` units of `unit_bytes` bytes into at most two launches: one multi-line launch
/// of 2 GiB lines, and the remainder on one line.
fn split(units: u64, unit_bytes: u64) -> impl Iterator<Item = (u64, Lines)> {
    let mut out: [Option<(u64, Lines)>; 2] = [None, None];
    if units <= MAX_LINE_LENGTH {
        if units > 0 {
            out[0] = Some((0, Lines { length: units as u32, count: 1, pitch: 0 }));
        }
    } else {
        let per_line = MULTI_LINE_BYTES / unit_bytes;
        let lines = units / per_line;
        let rest = units % per_line;
        // `units` fits 57 address bits, so `lines` fits LINE_COUNT's 32.
        out[0] = Some((0, Lines { length: per_line as u32, count: lines as u32, pitch: MULTI_LINE_BYTES as u32 }));
        if rest > 0 {
            out[1] = Some((lines * MULTI_LINE_BYTES, Lines { length: rest as u32, count: 1, pitch: 0 }));
        }
    }
    out.into_iter().flatten()
}

/// Writes copy engine operations for one class on one subchannel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CeEncoder {
    pub class: CeClass,
    /// The subchannel the class is bound to (`SET_OBJECT`; UVM uses 0).
    pub subchannel: u8,
}

impl CeEncoder {
    pub const fn new(class: CeClass, subchannel: u8) -> Self {
        Self { class, subchannel }
    }

    /// `SET_OBJECT`: binds the class to the subchannel.
    pub fn set_object<S: PushStorage>(&self, pb: &mut PushBuffer<S>) -> Result<(), CeEncodeError> {
        self.whole(pb, |e, p| Ok(p.set_object(e.subchannel, e.class.class_number() as u16)?))
    }

    /// Copies `bytes` bytes from `src` to `dst`; any size and alignment. Zero bytes write nothing.
    pub fn copy<S: PushStorage>(
        &self,
        pb: &mut PushBuffer<S>,
        src: CeAddress,
        dst: CeAddress,
        bytes: u64,
        pipelining: Pipelining,
    ) -> Result<(), CeEncodeError> {
        if bytes == 0 {
            return Ok(());
        }
        self.check_range(src, bytes)?;
        self.check_range(dst, bytes)?;
        let same_space = match (src, dst) {
            (CeAddress::Virtual(_), CeAddress::Virtual(_)) => true,
            (CeAddress::Physical { aperture: a, .. }, CeAddress::Physical { aperture: b, .. }) => a == b,
            _ => false,
        };
        if same_space && src.addr() < dst.addr() + bytes && dst.addr() < src.addr() + bytes {
            return Err(CeEncodeError::Overlap { src, dst, bytes });
        }
        self.whole(pb, |e, p| {
            e.phys_modes(p, Some(src), dst)?;
            let mut transfer = pipelining.transfer_type();
            for (offset, lines) in split(bytes, 1) {
                let s = src.addr() + offset;
                let d = dst.addr() + offset;
                let mut state = [
                    (s >> 32) as u32,
                    s as u32,
                    (d >> 32) as u32,
                    d as u32,
                    lines.pitch,
                    lines.pitch,
                    lines.length,
                    lines.count,
                ];
                let n = if lines.count > 1 { 8 } else { 4 };
                p.incr(e.subchannel, method::NVC5B5_OFFSET_IN_UPPER, &state[..n])?;
                if lines.count == 1 {
                    state[0] = lines.length;
                    p.incr(e.subchannel, method::NVC5B5_LINE_LENGTH_IN, &state[..1])?;
                }
                let launch = e.launch(transfer, Some(src.address_type()), dst.address_type(), lines.count > 1, false);
                p.incr(e.subchannel, method::NVC5B5_LAUNCH_DMA, &[launch.raw()])?;
                transfer = DataTransferType::Pipelined;
            }
            Ok(())
        })
    }

    /// Fills `bytes` bytes at `dst` with `pattern`, repeated from `dst` on; any size and
    /// alignment. Zero bytes write nothing.
    pub fn memset<S: PushStorage>(
        &self,
        pb: &mut PushBuffer<S>,
        dst: CeAddress,
        pattern: MemsetPattern,
        bytes: u64,
        pipelining: Pipelining,
    ) -> Result<(), CeEncodeError> {
        if bytes == 0 {
            return Ok(());
        }
        self.check_range(dst, bytes)?;
        self.whole(pb, |e, p| {
            e.phys_modes(p, None, dst)?;
            let mut transfer = pipelining.transfer_type();
            let (pat, n) = pattern.bytes();
            if pat[..n].iter().all(|&b| b == pat[0]) {
                // One byte repeated: 1-byte components at any alignment.
                e.remap(p, ComponentSize::One, &[(RemapSource::ConstB, pat[0] as u32)])?;
                e.remap_launches(p, dst, bytes, 1, &mut transfer)?;
                return Ok(());
            }
            // Head up to 4-byte alignment, byte by byte.
            let head = ((4 - dst.addr() % 4) % 4).min(bytes);
            for i in 0..head {
                e.byte_piece(p, dst.with_addr(dst.addr() + i), pat[i as usize], &mut transfer)?;
            }
            // The pattern as seen from the aligned body's first byte.
            let mut rot = [0u8; 8];
            for (i, r) in rot[..n].iter_mut().enumerate() {
                *r = pat[(i + head as usize) % n];
            }
            let word = |i: usize| u32::from_le_bytes([rot[i], rot[i + 1], rot[i + 2], rot[i + 3]]);
            let body_start = dst.addr() + head;
            let elements = (bytes - head) / n as u64;
            if elements > 0 {
                if n == 4 {
                    e.remap(p, ComponentSize::Four, &[(RemapSource::ConstB, word(0))])?;
                } else {
                    e.remap(p, ComponentSize::Four, &[(RemapSource::ConstA, word(0)), (RemapSource::ConstB, word(4))])?;
                }
                e.remap_launches(p, dst.with_addr(body_start), elements, n as u64, &mut transfer)?;
            }
            // Tail: a 4-byte aligned word, then bytes.
            let mut at = body_start + elements * n as u64;
            let tail = (bytes - head) % n as u64;
            let mut i = 0usize;
            if tail >= 4 {
                e.remap(p, ComponentSize::Four, &[(RemapSource::ConstB, word(0))])?;
                e.remap_launches(p, dst.with_addr(at), 1, 4, &mut transfer)?;
                at += 4;
                i = 4;
            }
            while (i as u64) < tail {
                e.byte_piece(p, dst.with_addr(at), rot[i], &mut transfer)?;
                at += 1;
                i += 1;
            }
            Ok(())
        })
    }

    /// Releases a 32-bit semaphore after a flush to system scope (UVM's CE semaphore release).
    pub fn release_semaphore<S: PushStorage>(
        &self,
        pb: &mut PushBuffer<S>,
        va: u64,
        payload: u32,
    ) -> Result<(), CeEncodeError> {
        self.release(
            pb,
            &SemaphoreRelease {
                va,
                payload: payload as u64,
                payload_64: false,
                timestamp: false,
                flush: Some(FlushType::Sys),
                interrupt: InterruptType::None,
            },
        )
    }

    /// Releases a 64-bit semaphore after a flush (AMPERE_DMA_COPY_B on).
    pub fn release_semaphore_64<S: PushStorage>(
        &self,
        pb: &mut PushBuffer<S>,
        va: u64,
        payload: u64,
    ) -> Result<(), CeEncodeError> {
        self.release(
            pb,
            &SemaphoreRelease {
                va,
                payload,
                payload_64: true,
                timestamp: false,
                flush: Some(FlushType::Sys),
                interrupt: InterruptType::None,
            },
        )
    }

    /// Any semaphore release: `SET_SEMAPHORE_A/B/PAYLOAD[_UPPER]`, then a `LAUNCH_DMA` with no
    /// transfer.
    pub fn release<S: PushStorage>(&self, pb: &mut PushBuffer<S>, r: &SemaphoreRelease) -> Result<(), CeEncodeError> {
        let alignment = if r.timestamp {
            16
        } else if r.payload_64 {
            8
        } else {
            4
        };
        if !r.va.is_multiple_of(alignment) {
            return Err(CeEncodeError::SemaphoreMisaligned { va: r.va, alignment });
        }
        let bits = self.class.semaphore_address_bits();
        let size = if r.timestamp { 16 } else { alignment };
        if r.va >> bits != 0 || (r.va + size - 1) >> bits != 0 {
            return Err(CeEncodeError::AddressOutOfRange { addr: r.va, bytes: size, bits });
        }
        let payload_size = self.class.semaphore_payload_size_field();
        if r.payload_64 && payload_size.is_none() {
            return Err(CeEncodeError::Payload64NotSupported { class: self.class });
        }
        if !r.payload_64 && r.payload >> 32 != 0 {
            return Err(CeEncodeError::PayloadTooLarge { payload: r.payload });
        }
        self.whole(pb, |e, p| {
            let words = [(r.va >> 32) as u32, r.va as u32, r.payload as u32, (r.payload >> 32) as u32];
            let n = if r.payload_64 { 4 } else { 3 };
            p.incr(e.subchannel, method::NVC5B5_SET_SEMAPHORE_A, &words[..n])?;
            let semaphore = if r.timestamp { SemaphoreType::ReleaseFourWord } else { SemaphoreType::ReleaseOneWord };
            let mut launch = NVC5B5_LAUNCH_DMA::default()
                .with(NVC5B5_LAUNCH_DMA::DATA_TRANSFER_TYPE, DataTransferType::None)
                .with(NVC5B5_LAUNCH_DMA::FLUSH_ENABLE, r.flush.is_some())
                .with(NVC5B5_LAUNCH_DMA::SEMAPHORE_TYPE, semaphore)
                .with(NVC5B5_LAUNCH_DMA::INTERRUPT_TYPE, r.interrupt)
                .with(NVC5B5_LAUNCH_DMA::DISABLE_PLC, e.class.disables_plc());
            if let Some(flush) = r.flush {
                launch = launch.with(NVC5B5_LAUNCH_DMA::FLUSH_TYPE, flush);
            }
            let mut raw = launch.raw();
            if let Some(field) = payload_size {
                // ONE_WORD = 0, TWO_WORD = 1 (checked in `tests/tests/ce_headers.rs`).
                raw = set_range(raw, field, r.payload_64 as u32);
            }
            p.incr(e.subchannel, method::NVC5B5_LAUNCH_DMA, &[raw])?;
            Ok(())
        })
    }

    // -----------------------------------------------------------------------------------------

    /// Encodes `f` into scratch first; writes it to `pb` only if all of it fits.
    fn whole<S: PushStorage>(
        &self,
        pb: &mut PushBuffer<S>,
        f: impl Fn(&Self, &mut dyn MethodSink) -> Result<(), CeEncodeError>,
    ) -> Result<(), CeEncodeError> {
        let mut scratch = PushBuffer::with_storage(Vec::new(), pb.class());
        f(self, &mut scratch)?;
        let needed = scratch.len();
        let available = pb.available();
        if needed > available {
            return Err(CeEncodeError::Push(PushError::Full { needed, available }));
        }
        f(self, pb)
    }

    fn check_range(&self, a: CeAddress, bytes: u64) -> Result<(), CeEncodeError> {
        let bits = self.class.address_bits();
        let out = CeEncodeError::AddressOutOfRange { addr: a.addr(), bytes, bits };
        let last = a.addr().checked_add(bytes - 1).ok_or(out)?;
        if last >> bits != 0 {
            return Err(out);
        }
        if let CeAddress::Physical { aperture: CeAperture::Peer(peer), .. } = a {
            if !self.class.has_peer_aperture() {
                return Err(CeEncodeError::PeerNotSupported { class: self.class });
            }
            if peer as u32 > get_range(u32::MAX, ce::ampere_a::NVC6B5_SET_SRC_PHYS_MODE_PEER_ID) {
                return Err(CeEncodeError::PeerIdOutOfRange { peer });
            }
        }
        Ok(())
    }

    fn phys_mode(&self, aperture: CeAperture) -> u32 {
        let target = NVC5B5_SET_SRC_PHYS_MODE::TARGET.bits;
        let raw = |t: PhysModeTarget| {
            NVC5B5_SET_SRC_PHYS_MODE::default().with(NVC5B5_SET_SRC_PHYS_MODE::TARGET, t as u8).raw()
        };
        match aperture {
            CeAperture::LocalFb => raw(PhysModeTarget::LocalFb),
            CeAperture::CoherentSysmem => raw(PhysModeTarget::CoherentSysmem),
            CeAperture::NoncoherentSysmem => raw(PhysModeTarget::NoncoherentSysmem),
            CeAperture::Peer(peer) => {
                // PEERMEM, PEER_ID and FLA (0: not a fabric linear address) from `clc6b5.h`;
                // the same positions in every later class (checked in `ce_headers`).
                let v = target.insert(0, ce::ampere_a::NVC6B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM);
                let v = set_range(v, ce::ampere_a::NVC6B5_SET_SRC_PHYS_MODE_PEER_ID, peer as u32);
                set_range(v, ce::ampere_a::NVC6B5_SET_SRC_PHYS_MODE_FLA, 0)
            }
        }
    }

    /// `SET_SRC_PHYS_MODE` / `SET_DST_PHYS_MODE` for the physical sides.
    fn phys_modes(&self, p: &mut dyn MethodSink, src: Option<CeAddress>, dst: CeAddress) -> Result<(), CeEncodeError> {
        let src_mode = match src {
            Some(CeAddress::Physical { aperture, .. }) => Some(self.phys_mode(aperture)),
            _ => None,
        };
        let dst_mode = match dst {
            CeAddress::Physical { aperture, .. } => Some(self.phys_mode(aperture)),
            CeAddress::Virtual(_) => None,
        };
        match (src_mode, dst_mode) {
            (Some(s), Some(d)) => p.incr(self.subchannel, method::NVC5B5_SET_SRC_PHYS_MODE, &[s, d])?,
            (Some(s), None) => p.incr(self.subchannel, method::NVC5B5_SET_SRC_PHYS_MODE, &[s])?,
            (None, Some(d)) => p.incr(self.subchannel, method::NVC5B5_SET_DST_PHYS_MODE, &[d])?,
            (None, None) => {}
        }
        Ok(())
    }

    fn launch(
        &self,
        transfer: DataTransferType,
        src: Option<AddressType>,
        dst: AddressType,
        multi_line: bool,
        remap: bool,
    ) -> NVC5B5_LAUNCH_DMA {
        NVC5B5_LAUNCH_DMA::default()
            .with(NVC5B5_LAUNCH_DMA::DATA_TRANSFER_TYPE, transfer)
            .with(NVC5B5_LAUNCH_DMA::FLUSH_ENABLE, false)
            .with(NVC5B5_LAUNCH_DMA::SEMAPHORE_TYPE, SemaphoreType::None)
            .with(NVC5B5_LAUNCH_DMA::INTERRUPT_TYPE, InterruptType::None)
            .with(NVC5B5_LAUNCH_DMA::SRC_MEMORY_LAYOUT, MemoryLayout::Pitch)
            .with(NVC5B5_LAUNCH_DMA::DST_MEMORY_LAYOUT, MemoryLayout::Pitch)
            .with(NVC5B5_LAUNCH_DMA::MULTI_LINE_ENABLE, multi_line)
            .with(NVC5B5_LAUNCH_DMA::REMAP_ENABLE, remap)
            .with(NVC5B5_LAUNCH_DMA::SRC_TYPE, src.unwrap_or(AddressType::Virtual))
            .with(NVC5B5_LAUNCH_DMA::DST_TYPE, dst)
            .with(NVC5B5_LAUNCH_DMA::DISABLE_PLC, self.class.disables_plc())
    }

    /// `SET_REMAP_CONST_A/B` and `SET_REMAP_COMPONENTS`: destination components taken from the
    /// constants, in order X, Y.
    fn remap(
        &self,
        p: &mut dyn MethodSink,
        size: ComponentSize,
        components: &[(RemapSource, u32)],
    ) -> Result<(), CeEncodeError> {
        let (mut a, mut b) = (0, 0);
        let mut c = NVC5B5_SET_REMAP_COMPONENTS::default()
            .with(NVC5B5_SET_REMAP_COMPONENTS::COMPONENT_SIZE, size)
            .with(NVC5B5_SET_REMAP_COMPONENTS::NUM_SRC_COMPONENTS, ComponentCount::One);
        let fields = [NVC5B5_SET_REMAP_COMPONENTS::DST_X, NVC5B5_SET_REMAP_COMPONENTS::DST_Y];
        for (&(source, value), field) in components.iter().zip(fields) {
            c = c.with(field, source);
            match source {
                RemapSource::ConstA => a = value,
                _ => b = value,
            }
        }
        let count = if components.len() == 2 { ComponentCount::Two } else { ComponentCount::One };
        c = c.with(NVC5B5_SET_REMAP_COMPONENTS::NUM_DST_COMPONENTS, count);
        p.incr(self.subchannel, method::NVC5B5_SET_REMAP_CONST_A, &[a, b, c.raw()])?;
        Ok(())
    }

    /// Launches of `elements` remapped elements of `element_bytes` bytes from `dst` on.
    fn remap_launches(
        &self,
        p: &mut dyn MethodSink,
        dst: CeAddress,
        elements: u64,
        element_bytes: u64,
        transfer: &mut DataTransferType,
    ) -> Result<(), CeEncodeError> {
        for (offset, lines) in split(elements, element_bytes) {
            let d = dst.addr() + offset;
            if lines.count > 1 {
                p.incr(
                    self.subchannel,
                    method::NVC5B5_OFFSET_OUT_UPPER,
                    &[(d >> 32) as u32, d as u32, lines.pitch, lines.pitch],
                )?;
                p.incr(self.subchannel, method::NVC5B5_LINE_LENGTH_IN, &[lines.length, lines.count])?;
            } else {
                p.incr(self.subchannel, method::NVC5B5_OFFSET_OUT_UPPER, &[(d >> 32) as u32, d as u32])?;
                p.incr(self.subchannel, method::NVC5B5_LINE_LENGTH_IN, &[lines.length])?;
            }
            let launch = self.launch(*transfer, None, dst.address_type(), lines.count > 1, true);
            p.incr(self.subchannel, method::NVC5B5_LAUNCH_DMA, &[launch.raw()])?;
            *transfer = DataTransferType::Pipelined;
        }
        Ok(())
    }

    fn byte_piece(
        &self,
        p: &mut dyn MethodSink,
        at: CeAddress,
        byte: u8,
        transfer: &mut DataTransferType,
    ) -> Result<(), CeEncodeError> {
        self.remap(p, ComponentSize::One, &[(RemapSource::ConstB, byte as u32)])?;
        self.remap_launches(p, at, 1, 1, transfer)
    }
}

/// What the encoder writes methods into: a pushbuffer of any storage.
trait MethodSink {
    fn incr(&mut self, subchannel: u8, method: u32, data: &[u32]) -> Result<(), PushError>;
    fn set_object(&mut self, subchannel: u8, nvclass: u16) -> Result<(), PushError>;
}

impl<S: PushStorage> MethodSink for PushBuffer<S> {
    fn incr(&mut self, subchannel: u8, method: u32, data: &[u32]) -> Result<(), PushError> {
        PushBuffer::incr(self, subchannel, method, data)
    }
    fn set_object(&mut self, subchannel: u8, nvclass: u16) -> Result<(), PushError> {
        PushBuffer::set_object(self, subchannel, nvclass)
    }
}

#[cfg(test)]
mod tests;
