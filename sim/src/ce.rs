//! The model's copy engine: a DMA copy class (TURING_DMA_COPY_A .. BLACKWELL_DMA_COPY_B) that
//! takes methods one at a time, keeps the state methods, and on `LAUNCH_DMA` runs the transfer
//! and the semaphore release they describe.
//!
//! Every method offset, field and value comes from `nvgpu::hw::ce` (checked against NVIDIA's class
//! headers); the per-class differences are the model's own reading of each class header
//! ([`CopyClass`], not the driver's `nvgpu::ce::CeClass`). What it models:
//!
//! - pitch transfers, one line or `LINE_COUNT` lines `PITCH_IN`/`PITCH_OUT` apart; virtual sides
//!   go through a [`VirtualMemory`] (the MMU), physical ones through a [`PhysicalMemory`] in the
//!   aperture `SET_*_PHYS_MODE` names;
//! - remapping (`SET_REMAP_COMPONENTS`): elements of 1..4 components of 1..4 bytes, each
//!   destination component from a source component, `CONST_A`/`CONST_B`, or left alone
//!   (`NO_WRITE`); `LINE_LENGTH_IN` then counts elements;
//! - semaphore releases: one word (four bytes, or eight with `SEMAPHORE_PAYLOAD_SIZE_TWO_WORD`), or
//!   the four-word report (payload, then the timestamp the caller passes in [`CeBus`] at byte 8),
//!   and the integer reductions;
//! - the interrupt a launch requests, reported to the caller.
//!
//! It is strict: a method the class does not have (or the model does not implement), a field value
//! the header does not define, reserved bits, and combinations the model does not implement
//! (block-linear layouts, VPR, secure copies, scrubbing, conditional-interrupt semaphores, float
//! reductions) are a typed [`CeError`] naming method and value: the channel turns it into a
//! channel error. A fault during a transfer stops it with [`CeError::Fault`]; bytes before the
//! faulting chunk are written, as on hardware. Method data is input: nothing here panics on it.
//!
//! Data moves in chunks of [`CHUNK_BYTES`] through one buffer the engine keeps between launches.
//! Flushes (`FLUSH_ENABLE`) have nothing to do: the model's memory has no caches.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use nvgpu::hw::ce::{
    self as hw, method, AddressType, DataTransferType, InterruptType, MemoryLayout, PhysModeTarget, ReductionSign,
    RemapSource, SemaphoreReduction, SemaphoreType, NVC5B5_LAUNCH_DMA, NVC5B5_OFFSET_IN_UPPER,
    NVC5B5_SET_REMAP_COMPONENTS, NVC5B5_SET_SEMAPHORE_A, NVC5B5_SET_SRC_PHYS_MODE,
};
use nvgpu::hw::{InvalidFieldValue, UnitRange};

mod class;
use class::field as get_range;
pub use class::{CopyClass, CLASSES};

use crate::engine_mem::{MmuFault, PhysAddr, PhysAperture, PhysicalMemory, VirtualMemory};

/// Bytes moved per memory access.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// What the engine reaches memory through, and the time a timestamped release records.
pub struct CeBus<'a> {
    pub virt: &'a mut dyn VirtualMemory,
    pub phys: &'a mut dyn PhysicalMemory,
    /// The model clock (ns) written by four-word semaphore releases.
    pub timestamp_ns: u64,
}

/// Physical memory with nothing behind it (for engines used with virtual addresses only).
pub struct NoPhysicalMemory;

impl PhysicalMemory for NoPhysicalMemory {
    fn read_phys(&mut self, _at: PhysAddr, _buf: &mut [u8]) -> bool {
        false
    }
    fn write_phys(&mut self, _at: PhysAddr, _data: &[u8]) -> bool {
        false
    }
}

/// Why the engine refused a method or stopped a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CeError {
    /// A method offset the class does not have, or one the model does not implement.
    UnknownMethod { class: &'static str, method: u32, value: u32 },
    /// A field holds a value the class's header does not define, or reserved bits are set.
    InvalidField { method: &'static str, field: &'static str, value: u32 },
    /// A defined value the model does not implement.
    Unsupported { method: &'static str, field: &'static str, value: u32 },
    /// A transfer or semaphore access faulted in the MMU.
    Fault(MmuFault),
    /// A physical access outside backed memory.
    PhysicalUnbacked { at: PhysAddr, len: usize },
    /// Line addresses (`OFFSET + (LINE_COUNT - 1) * PITCH + length`) beyond 64 bits.
    AddressOverflow { offset: u64, pitch: u32, lines: u32 },
    /// The semaphore address is not aligned to what the release writes.
    SemaphoreMisaligned { va: u64, alignment: u64 },
    /// One launch would move more than [`MAX_LAUNCH_BYTES`]: hardware would do it (lines of
    /// pitch 0 rewrite the same bytes), the model refuses rather than spend minutes in a doorbell.
    LaunchTooLarge { bytes: u128 },
}

/// Most bytes one `LAUNCH_DMA` may write in the model (all lines together). No driver path moves
/// more than a 2 MiB block per launch; the largest test copies 64 MiB.
pub const MAX_LAUNCH_BYTES: u64 = 256 << 20;

/// Refuses a launch of `lines` lines of `line_bytes` bytes beyond [`MAX_LAUNCH_BYTES`]. `false`:
/// the launch moves nothing (lines of length 0), and the caller skips its lines.
fn check_launch_size(lines: u32, line_bytes: u64) -> Result<bool, CeError> {
    let bytes = u128::from(lines) * u128::from(line_bytes);
    if bytes > u128::from(MAX_LAUNCH_BYTES) {
        return Err(CeError::LaunchTooLarge { bytes });
    }
    Ok(bytes > 0)
}

impl fmt::Display for CeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownMethod { class, method, value } => {
                write!(f, "{class}: unknown method {method:#x} (data {value:#x})")
            }
            Self::InvalidField { method, field, value } => write!(f, "{method}: {field} = {value:#x} is not defined"),
            Self::Unsupported { method, field, value } => {
                write!(f, "{method}: {field} = {value:#x} is not modelled")
            }
            Self::Fault(fault) => write!(f, "copy engine: {fault}"),
            Self::PhysicalUnbacked { at, len } => {
                write!(f, "copy engine: {len} bytes at {:?} {:#x} are not backed", at.aperture, at.addr)
            }
            Self::AddressOverflow { offset, pitch, lines } => {
                write!(f, "copy engine: {lines} lines of pitch {pitch:#x} from {offset:#x} overflow")
            }
            Self::SemaphoreMisaligned { va, alignment } => {
                write!(f, "copy engine: semaphore {va:#x} is not {alignment}-byte aligned")
            }
            Self::LaunchTooLarge { bytes } => write!(
                f,
                "copy engine: one launch of {bytes} bytes is more than the model's {MAX_LAUNCH_BYTES} bytes per launch"
            ),
        }
    }
}

impl From<MmuFault> for CeError {
    fn from(f: MmuFault) -> Self {
        Self::Fault(f)
    }
}

const LAUNCH: &str = "NVC5B5_LAUNCH_DMA";

fn invalid(method: &'static str) -> impl Fn(InvalidFieldValue) -> CeError {
    move |e| CeError::InvalidField { method, field: e.field, value: e.value }
}

/// What a `LAUNCH_DMA` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LaunchOutcome {
    /// Bytes written by the transfer.
    pub bytes_written: u64,
    /// The semaphore address released, if any.
    pub semaphore: Option<u64>,
    /// The interrupt the launch asked for (`INTERRUPT_TYPE`).
    pub interrupt: Option<InterruptType>,
}

/// One side of a transfer, resolved.
#[derive(Clone, Copy, Debug)]
enum Side {
    Virtual,
    Physical(PhysAperture),
}

fn read(bus: &mut CeBus<'_>, side: Side, addr: u64, buf: &mut [u8]) -> Result<(), CeError> {
    match side {
        Side::Virtual => Ok(bus.virt.read(addr, buf)?),
        Side::Physical(aperture) => {
            let at = PhysAddr { aperture, addr };
            if bus.phys.read_phys(at, buf) {
                Ok(())
            } else {
                Err(CeError::PhysicalUnbacked { at, len: buf.len() })
            }
        }
    }
}

fn write(bus: &mut CeBus<'_>, side: Side, addr: u64, data: &[u8]) -> Result<(), CeError> {
    match side {
        Side::Virtual => Ok(bus.virt.write(addr, data)?),
        Side::Physical(aperture) => {
            let at = PhysAddr { aperture, addr };
            if bus.phys.write_phys(at, data) {
                Ok(())
            } else {
                Err(CeError::PhysicalUnbacked { at, len: data.len() })
            }
        }
    }
}

/// The copy engine of one channel's subchannel.
#[derive(Debug)]
pub struct CopyEngine {
    class: &'static CopyClass,
    semaphore_a: u32,
    semaphore_b: u32,
    payload: u32,
    payload_upper: u32,
    src_phys_mode: u32,
    dst_phys_mode: u32,
    offset_in: [u32; 2],
    offset_out: [u32; 2],
    pitch_in: u32,
    pitch_out: u32,
    line_length: u32,
    line_count: u32,
    remap_const: [u32; 2],
    remap_components: u32,
    /// Chunk buffers, kept between launches.
    buf: Vec<u8>,
    src_buf: Vec<u8>,
    /// Launches run so far.
    pub launches: u64,
}

/// The part of a range's field mask as bits in place.
const fn mask(range: UnitRange) -> u32 {
    let w = range.last - range.first + 1;
    let ones = if w >= 32 { u32::MAX } else { (1u32 << w) - 1 };
    ones << range.first
}

impl CopyEngine {
    /// An engine of `class` in its reset state (all state methods zero).
    pub fn new(class: &'static CopyClass) -> Self {
        CopyEngine {
            class,
            semaphore_a: 0,
            semaphore_b: 0,
            payload: 0,
            payload_upper: 0,
            src_phys_mode: 0,
            dst_phys_mode: 0,
            offset_in: [0; 2],
            offset_out: [0; 2],
            pitch_in: 0,
            pitch_out: 0,
            line_length: 0,
            line_count: 0,
            remap_const: [0; 2],
            remap_components: 0,
            buf: vec![0; CHUNK_BYTES],
            src_buf: vec![0; CHUNK_BYTES],
            launches: 0,
        }
    }

    /// The class this engine implements.
    pub fn class(&self) -> &'static CopyClass {
        self.class
    }

    /// Width of the `*_UPPER` address fields of this class.
    fn upper_bits(&self) -> u32 {
        self.class.offset_upper_bits
    }

    fn check_upper(&self, name: &'static str, field: &'static str, value: u32, bits: u32) -> Result<u32, CeError> {
        if bits < 32 && value >> bits != 0 {
            return Err(CeError::InvalidField { method: name, field, value });
        }
        Ok(value)
    }

    /// Executes one method with data `value`: stores state, or runs a launch. `Ok(Some(..))` for
    /// a `LAUNCH_DMA`.
    pub fn method(&mut self, offset: u32, value: u32, bus: &mut CeBus<'_>) -> Result<Option<LaunchOutcome>, CeError> {
        let upper = self.upper_bits();
        match offset {
            method::NVC5B5_NOP => {}
            method::NVC5B5_SET_SEMAPHORE_A => {
                let bits = self.class.semaphore_upper_bits;
                self.semaphore_a =
                    self.check_upper("NVC5B5_SET_SEMAPHORE_A", NVC5B5_SET_SEMAPHORE_A::UPPER.name, value, bits)?;
            }
            method::NVC5B5_SET_SEMAPHORE_B => self.semaphore_b = value,
            method::NVC5B5_SET_SEMAPHORE_PAYLOAD => self.payload = value,
            hw::ampere_b::NVC7B5_SET_SEMAPHORE_PAYLOAD_UPPER if self.class.payload_size.is_some() => {
                self.payload_upper = value
            }
            method::NVC5B5_SET_SRC_PHYS_MODE => {
                self.phys_side("NVC5B5_SET_SRC_PHYS_MODE", value)?;
                self.src_phys_mode = value;
            }
            method::NVC5B5_SET_DST_PHYS_MODE => {
                self.phys_side("NVC5B5_SET_DST_PHYS_MODE", value)?;
                self.dst_phys_mode = value;
            }
            method::NVC5B5_OFFSET_IN_UPPER => {
                self.offset_in[0] =
                    self.check_upper("NVC5B5_OFFSET_IN_UPPER", NVC5B5_OFFSET_IN_UPPER::UPPER.name, value, upper)?
            }
            method::NVC5B5_OFFSET_IN_LOWER => self.offset_in[1] = value,
            method::NVC5B5_OFFSET_OUT_UPPER => {
                self.offset_out[0] =
                    self.check_upper("NVC5B5_OFFSET_OUT_UPPER", "NVC5B5_OFFSET_OUT_UPPER_UPPER", value, upper)?
            }
            method::NVC5B5_OFFSET_OUT_LOWER => self.offset_out[1] = value,
            method::NVC5B5_PITCH_IN => self.pitch_in = value,
            method::NVC5B5_PITCH_OUT => self.pitch_out = value,
            method::NVC5B5_LINE_LENGTH_IN => self.line_length = value,
            method::NVC5B5_LINE_COUNT => self.line_count = value,
            method::NVC5B5_SET_REMAP_CONST_A => self.remap_const[0] = value,
            method::NVC5B5_SET_REMAP_CONST_B => self.remap_const[1] = value,
            method::NVC5B5_SET_REMAP_COMPONENTS => {
                let c = NVC5B5_SET_REMAP_COMPONENTS(value);
                let m = "NVC5B5_SET_REMAP_COMPONENTS";
                c.dst_x().map_err(invalid(m))?;
                c.dst_y().map_err(invalid(m))?;
                c.dst_z().map_err(invalid(m))?;
                c.dst_w().map_err(invalid(m))?;
                let defined = [
                    NVC5B5_SET_REMAP_COMPONENTS::DST_X.bits,
                    NVC5B5_SET_REMAP_COMPONENTS::DST_Y.bits,
                    NVC5B5_SET_REMAP_COMPONENTS::DST_Z.bits,
                    NVC5B5_SET_REMAP_COMPONENTS::DST_W.bits,
                    NVC5B5_SET_REMAP_COMPONENTS::COMPONENT_SIZE.bits,
                    NVC5B5_SET_REMAP_COMPONENTS::NUM_SRC_COMPONENTS.bits,
                    NVC5B5_SET_REMAP_COMPONENTS::NUM_DST_COMPONENTS.bits,
                ]
                .iter()
                .fold(0, |m, b| m | b.mask());
                if value & !defined != 0 {
                    return Err(CeError::InvalidField { method: m, field: "reserved bits", value: value & !defined });
                }
                self.remap_components = value;
            }
            method::NVC5B5_LAUNCH_DMA => return self.launch(value, bus).map(Some),
            _ => return Err(CeError::UnknownMethod { class: self.class.name, method: offset, value }),
        }
        Ok(None)
    }

    /// Validates a `SET_*_PHYS_MODE` word and resolves its aperture.
    fn phys_side(&self, name: &'static str, value: u32) -> Result<PhysAperture, CeError> {
        let mode = NVC5B5_SET_SRC_PHYS_MODE(value);
        let target_bits = NVC5B5_SET_SRC_PHYS_MODE::TARGET.bits;
        let mut defined = target_bits.mask() | NVC5B5_SET_SRC_PHYS_MODE::BASIC_KIND.bits.mask();
        let fla = hw::ampere_a::NVC6B5_SET_SRC_PHYS_MODE_FLA;
        if let Some(peer_id) = self.class.peer_id {
            defined |= mask(peer_id) | mask(fla);
        }
        if value & !defined != 0 {
            return Err(CeError::InvalidField { method: name, field: "reserved bits", value: value & !defined });
        }
        if mode.basic_kind() != 0 {
            return Err(CeError::Unsupported {
                method: name,
                field: NVC5B5_SET_SRC_PHYS_MODE::BASIC_KIND.name,
                value: mode.basic_kind() as u32,
            });
        }
        let target = mode.target() as u32;
        let aperture = match PhysModeTarget::from_raw(target) {
            Some(PhysModeTarget::LocalFb) => PhysAperture::Video,
            Some(PhysModeTarget::CoherentSysmem) => PhysAperture::SystemCoherent,
            Some(PhysModeTarget::NoncoherentSysmem) => PhysAperture::SystemNonCoherent,
            None if self.class.peer_id.is_some() && target == hw::ampere_a::NVC6B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM => {
                if get_range(value, fla) != 0 {
                    return Err(CeError::Unsupported { method: name, field: "FLA", value: 1 });
                }
                let peer_id = self.class.peer_id.map_or(0, |range| get_range(value, range));
                PhysAperture::Peer(peer_id as u8)
            }
            None => return Err(CeError::InvalidField { method: name, field: "TARGET", value: target }),
        };
        Ok(aperture)
    }

    /// Bits of `LAUNCH_DMA` that must be zero in this class.
    fn launch_reserved(&self) -> u32 {
        let l =
            NVC5B5_LAUNCH_DMA::RESERVED_START_OF_COPY.bits.mask() | NVC5B5_LAUNCH_DMA::RESERVED_ERR_CODE.bits.mask();
        let bypass = NVC5B5_LAUNCH_DMA::SRC_BYPASS_L2.bits.mask() | NVC5B5_LAUNCH_DMA::DST_BYPASS_L2.bits.mask();
        let payload_size = mask(hw::ampere_b::NVC7B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE);
        let mut reserved = l;
        if self.class.payload_size.is_none() {
            reserved |= payload_size;
        }
        if !self.class.bypass_l2 && self.class.copy_type.is_none() {
            reserved |= bypass;
        }
        if !self.class.force_rmwdisable {
            reserved |= NVC5B5_LAUNCH_DMA::FORCE_RMWDISABLE.bits.mask();
        }
        reserved
    }

    fn launch(&mut self, value: u32, bus: &mut CeBus<'_>) -> Result<LaunchOutcome, CeError> {
        let l = NVC5B5_LAUNCH_DMA(value);
        let reserved = value & self.launch_reserved();
        if reserved != 0 {
            return Err(CeError::InvalidField { method: LAUNCH, field: "reserved bits", value: reserved });
        }
        let unsupported = |field: &'static str, v: u32| CeError::Unsupported { method: LAUNCH, field, value: v };
        if let Some(copy_type_field) = self.class.copy_type {
            let copy_type = get_range(value, copy_type_field);
            if copy_type != hw::hopper::NVC8B5_LAUNCH_DMA_COPY_TYPE_DEFAULT {
                return Err(unsupported("NVC8B5_LAUNCH_DMA_COPY_TYPE", copy_type));
            }
            let vpr = get_range(value, hw::hopper::NVC8B5_LAUNCH_DMA_VPRMODE);
            if vpr != 0 {
                return Err(unsupported("NVC8B5_LAUNCH_DMA_VPRMODE", vpr));
            }
            let scrub = get_range(value, hw::hopper::NVC8B5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE);
            if scrub != 0 {
                return Err(unsupported("NVC8B5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE", scrub));
            }
        } else if l.vprmode() as u32 != hw::NVC5B5_LAUNCH_DMA_VPRMODE_VPR_NONE {
            return Err(unsupported(NVC5B5_LAUNCH_DMA::VPRMODE.name, l.vprmode() as u32));
        }
        let transfer = match l.data_transfer_type() {
            Ok(t) => t,
            Err(e) if self.class.prefetch_transfer == Some(e.value) => {
                return Err(unsupported(e.field, e.value));
            }
            Err(e) => return Err(invalid(LAUNCH)(e)),
        };
        let semaphore = l.semaphore_type().map_err(invalid(LAUNCH))?;
        let interrupt = l.interrupt_type().map_err(invalid(LAUNCH))?;
        let reduction = if l.semaphore_reduction_enable() {
            let raw = NVC5B5_LAUNCH_DMA::SEMAPHORE_REDUCTION.bits.extract(value);
            match SemaphoreReduction::from_raw(raw) {
                Some(SemaphoreReduction::Fadd) => {
                    return Err(unsupported(NVC5B5_LAUNCH_DMA::SEMAPHORE_REDUCTION.name, raw))
                }
                Some(r) => Some((r, l.semaphore_reduction_sign().map_err(invalid(LAUNCH))?)),
                // FMIN/FMAX (AMPERE_DMA_COPY_B on) are float reductions, not modelled either.
                None if self.class.payload_size.is_some()
                    && (raw == hw::ampere_b::NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMIN
                        || raw == hw::ampere_b::NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMAX) =>
                {
                    return Err(unsupported(NVC5B5_LAUNCH_DMA::SEMAPHORE_REDUCTION.name, raw));
                }
                None => {
                    return Err(CeError::InvalidField {
                        method: LAUNCH,
                        field: NVC5B5_LAUNCH_DMA::SEMAPHORE_REDUCTION.name,
                        value: raw,
                    })
                }
            }
        } else {
            None
        };
        if semaphore == SemaphoreType::ReleaseConditionalIntr {
            return Err(unsupported(NVC5B5_LAUNCH_DMA::SEMAPHORE_TYPE.name, semaphore as u32));
        }
        let payload_64 = match self.class.payload_size {
            Some(field) => get_range(value, field) == hw::ampere_b::NVC7B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD,
            None => false,
        };

        let mut outcome = LaunchOutcome::default();
        if transfer != DataTransferType::None {
            outcome.bytes_written = self.transfer(l, bus)?;
        }
        if semaphore != SemaphoreType::None {
            outcome.semaphore = Some(self.release(semaphore, payload_64, reduction, bus)?);
        }
        if interrupt != InterruptType::None {
            outcome.interrupt = Some(interrupt);
        }
        self.launches += 1;
        Ok(outcome)
    }

    fn side(&self, name: &'static str, ty: Result<AddressType, InvalidFieldValue>, mode: u32) -> Result<Side, CeError> {
        Ok(match ty.map_err(invalid(LAUNCH))? {
            AddressType::Virtual => Side::Virtual,
            AddressType::Physical => Side::Physical(self.phys_side(name, mode)?),
        })
    }

    /// Runs the transfer of `LAUNCH_DMA` `l`; returns the bytes written.
    fn transfer(&mut self, l: NVC5B5_LAUNCH_DMA, bus: &mut CeBus<'_>) -> Result<u64, CeError> {
        for layout in [l.src_memory_layout(), l.dst_memory_layout()] {
            if layout.map_err(invalid(LAUNCH))? == MemoryLayout::BlockLinear {
                return Err(CeError::Unsupported {
                    method: LAUNCH,
                    field: "MEMORY_LAYOUT",
                    value: MemoryLayout::BlockLinear as u32,
                });
            }
        }
        let dst = self.side("NVC5B5_SET_DST_PHYS_MODE", l.dst_type(), self.dst_phys_mode)?;
        let src_addr = ((self.offset_in[0] as u64) << 32) | self.offset_in[1] as u64;
        let dst_addr = ((self.offset_out[0] as u64) << 32) | self.offset_out[1] as u64;
        let lines = if l.multi_line_enable() { self.line_count } else { 1 };
        if l.remap_enable() {
            return self.remap_transfer(l, src_addr, dst_addr, lines, dst, bus);
        }
        let src = self.side("NVC5B5_SET_SRC_PHYS_MODE", l.src_type(), self.src_phys_mode)?;
        let len = self.line_length as u64;
        if !check_launch_size(lines, len)? {
            return Ok(0);
        }
        let mut written = 0;
        for line in 0..lines as u64 {
            let s = line_start(src_addr, line, self.pitch_in, lines, len)?;
            let d = line_start(dst_addr, line, self.pitch_out, lines, len)?;
            let mut done = 0u64;
            while done < len {
                let n = (len - done).min(CHUNK_BYTES as u64) as usize;
                let buf = &mut self.buf[..n];
                read(bus, src, s + done, buf)?;
                write(bus, dst, d + done, buf)?;
                done += n as u64;
                written += n as u64;
            }
        }
        Ok(written)
    }

    fn remap_transfer(
        &mut self,
        l: NVC5B5_LAUNCH_DMA,
        src_addr: u64,
        dst_addr: u64,
        lines: u32,
        dst: Side,
        bus: &mut CeBus<'_>,
    ) -> Result<u64, CeError> {
        let c = NVC5B5_SET_REMAP_COMPONENTS(self.remap_components);
        let m = "NVC5B5_SET_REMAP_COMPONENTS";
        let size = c.component_size().map_err(invalid(m))?.bytes() as usize;
        let n_src = c.num_src_components().map_err(invalid(m))?.count() as usize;
        let n_dst = c.num_dst_components().map_err(invalid(m))?.count() as usize;
        let mut sources = [RemapSource::NoWrite; 4];
        for (i, s) in [c.dst_x(), c.dst_y(), c.dst_z(), c.dst_w()].into_iter().take(n_dst).enumerate() {
            let s = s.map_err(invalid(m))?;
            let index = match s {
                RemapSource::SrcX => Some(0),
                RemapSource::SrcY => Some(1),
                RemapSource::SrcZ => Some(2),
                RemapSource::SrcW => Some(3),
                _ => None,
            };
            if index.is_some_and(|x| x >= n_src) {
                return Err(CeError::InvalidField {
                    method: m,
                    field: "DST component beyond NUM_SRC_COMPONENTS",
                    value: s as u32,
                });
            }
            sources[i] = s;
        }
        let sources = &sources[..n_dst];
        let reads_src = sources
            .iter()
            .any(|s| matches!(s, RemapSource::SrcX | RemapSource::SrcY | RemapSource::SrcZ | RemapSource::SrcW));
        let keeps_dst = sources.contains(&RemapSource::NoWrite);
        let src = if reads_src {
            Some(self.side("NVC5B5_SET_SRC_PHYS_MODE", l.src_type(), self.src_phys_mode)?)
        } else {
            None
        };
        let dst_elem = size * n_dst;
        let src_elem = size * n_src;
        let per_chunk = CHUNK_BYTES / dst_elem.max(src_elem);
        let elements = self.line_length as u64;
        if !check_launch_size(lines, elements * dst_elem.max(src_elem) as u64)? {
            return Ok(0);
        }
        let consts = [self.remap_const[0].to_le_bytes(), self.remap_const[1].to_le_bytes()];
        let component = |s: RemapSource, src_el: &[u8], out: &mut [u8]| match s {
            RemapSource::SrcX | RemapSource::SrcY | RemapSource::SrcZ | RemapSource::SrcW => {
                let k = s as usize * size;
                out.copy_from_slice(&src_el[k..k + size]);
            }
            RemapSource::ConstA => out.copy_from_slice(&consts[0][..size]),
            RemapSource::ConstB => out.copy_from_slice(&consts[1][..size]),
            RemapSource::NoWrite => {}
        };
        // Constant-only elements: fill the buffer once, then write it out.
        let fill_once = !reads_src && !keeps_dst;
        if fill_once {
            let fill = per_chunk * dst_elem;
            for el in self.buf[..fill].chunks_exact_mut(dst_elem) {
                for (i, &s) in sources.iter().enumerate() {
                    component(s, &[], &mut el[i * size..(i + 1) * size]);
                }
            }
        }
        let mut written = 0;
        for line in 0..lines as u64 {
            let d = line_start(dst_addr, line, self.pitch_out, lines, elements * dst_elem as u64)?;
            let s = if reads_src {
                line_start(src_addr, line, self.pitch_in, lines, elements * src_elem as u64)?
            } else {
                0
            };
            let mut done = 0u64;
            while done < elements {
                let n = (elements - done).min(per_chunk as u64) as usize;
                let out_len = n * dst_elem;
                let at = d + done * dst_elem as u64;
                if !fill_once {
                    if let Some(src) = src {
                        read(bus, src, s + done * src_elem as u64, &mut self.src_buf[..n * src_elem])?;
                    }
                    if keeps_dst {
                        read(bus, dst, at, &mut self.buf[..out_len])?;
                    }
                    let src_chunk = &self.src_buf[..n * src_elem];
                    for (e, el) in self.buf[..out_len].chunks_exact_mut(dst_elem).enumerate() {
                        let src_el = if reads_src { &src_chunk[e * src_elem..(e + 1) * src_elem] } else { &[][..] };
                        for (i, &s) in sources.iter().enumerate() {
                            component(s, src_el, &mut el[i * size..(i + 1) * size]);
                        }
                    }
                }
                write(bus, dst, at, &self.buf[..out_len])?;
                done += n as u64;
                written += out_len as u64;
            }
        }
        Ok(written)
    }

    /// The semaphore release of a launch; returns its address.
    fn release(
        &mut self,
        semaphore: SemaphoreType,
        payload_64: bool,
        reduction: Option<(SemaphoreReduction, ReductionSign)>,
        bus: &mut CeBus<'_>,
    ) -> Result<u64, CeError> {
        let va = ((self.semaphore_a as u64) << 32) | self.semaphore_b as u64;
        let payload =
            if payload_64 { ((self.payload_upper as u64) << 32) | self.payload as u64 } else { self.payload as u64 };
        let alignment = match semaphore {
            SemaphoreType::ReleaseFourWord => 16,
            _ if payload_64 => 8,
            _ => 4,
        };
        if !va.is_multiple_of(alignment) {
            return Err(CeError::SemaphoreMisaligned { va, alignment });
        }
        match (semaphore, reduction) {
            (SemaphoreType::ReleaseOneWord, None) => {
                let bytes = payload.to_le_bytes();
                bus.virt.write(va, &bytes[..if payload_64 { 8 } else { 4 }])?;
            }
            (SemaphoreType::ReleaseOneWord, Some((op, sign))) => {
                let width = if payload_64 { 8 } else { 4 };
                let mut old = [0u8; 8];
                bus.virt.atomic(va, &mut old[..width], &mut |o: &[u8], n: &mut [u8]| {
                    let mut b = [0u8; 8];
                    b[..o.len()].copy_from_slice(o);
                    let new = reduce(op, sign, u64::from_le_bytes(b), payload, payload_64);
                    n.copy_from_slice(&new.to_le_bytes()[..n.len()]);
                })?;
            }
            (SemaphoreType::ReleaseFourWord, None) => {
                let mut report = [0u8; 16];
                report[..8].copy_from_slice(&payload.to_le_bytes());
                report[8..].copy_from_slice(&bus.timestamp_ns.to_le_bytes());
                bus.virt.write(va, &report)?;
            }
            (SemaphoreType::ReleaseFourWord, Some(_)) => {
                return Err(CeError::Unsupported {
                    method: LAUNCH,
                    field: "SEMAPHORE_REDUCTION_ENABLE with RELEASE_FOUR_WORD_SEMAPHORE",
                    value: 1,
                });
            }
            (SemaphoreType::None | SemaphoreType::ReleaseConditionalIntr, _) => {}
        }
        Ok(va)
    }
}

/// Start of line `line` of `lines` lines `pitch` apart, checking the last byte of the last line.
fn line_start(base: u64, line: u64, pitch: u32, lines: u32, len: u64) -> Result<u64, CeError> {
    let overflow = CeError::AddressOverflow { offset: base, pitch, lines };
    let last = (lines as u64)
        .saturating_sub(1)
        .checked_mul(pitch as u64)
        .and_then(|x| x.checked_add(base))
        .and_then(|x| x.checked_add(len));
    last.ok_or(overflow)?;
    Ok(base + line * pitch as u64)
}

/// The value a reduction stores, for 32-bit (`wide` false: low 32 bits used) or 64-bit payloads.
fn reduce(op: SemaphoreReduction, sign: ReductionSign, old: u64, payload: u64, wide: bool) -> u64 {
    let (old, payload, bits) = if wide { (old, payload, 64) } else { (old & 0xffff_ffff, payload & 0xffff_ffff, 32) };
    let signed = |v: u64| if bits == 32 { v as u32 as i32 as i64 } else { v as i64 };
    let new = match op {
        SemaphoreReduction::Imin => match sign {
            ReductionSign::Signed if signed(payload) < signed(old) => payload,
            ReductionSign::Unsigned if payload < old => payload,
            _ => old,
        },
        SemaphoreReduction::Imax => match sign {
            ReductionSign::Signed if signed(payload) > signed(old) => payload,
            ReductionSign::Unsigned if payload > old => payload,
            _ => old,
        },
        SemaphoreReduction::Ixor => old ^ payload,
        SemaphoreReduction::Iand => old & payload,
        SemaphoreReduction::Ior => old | payload,
        SemaphoreReduction::Iadd => old.wrapping_add(payload),
        SemaphoreReduction::Inc => {
            if old >= payload {
                0
            } else {
                old + 1
            }
        }
        SemaphoreReduction::Dec => {
            if old == 0 || old > payload {
                payload
            } else {
                old - 1
            }
        }
        // Refused before a release runs.
        SemaphoreReduction::Fadd => old,
    };
    if bits == 32 {
        new & 0xffff_ffff
    } else {
        new
    }
}

#[cfg(test)]
mod tests;
