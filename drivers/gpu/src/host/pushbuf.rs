//! The pushbuffer encoder: method headers and their data (`NVC46F_DMA_*`), and the host
//! semaphore methods (`NVC46F_SEM_*`).
//!
//! A method is written whole or not at all: every check (subchannel, method address, count,
//! immediate data, room in the storage) happens before the first word is stored.

use alloc::vec::Vec;
use core::fmt;

use super::HostClass;
use crate::hw::host::{
    method, DmaSecOp, SemOperation, NVC46F_DMA, NVC46F_DMA_NOP, NVC46F_NUMBER_OF_SUBCHANNELS, NVC46F_SEM_ADDR_HI,
    NVC46F_SEM_ADDR_LO, NVC46F_SEM_EXECUTE, NVC46F_SET_OBJECT,
};

/// Method byte offsets are below this: `METHOD_ADDRESS` holds 12 bits of dword address.
pub const METHOD_ADDRESS_LIMIT: u32 =
    (NVC46F_DMA::METHOD_ADDRESS.bits.mask() >> NVC46F_DMA::METHOD_ADDRESS.bits.lo) * 4 + 4;
/// The most data words one method header carries (`METHOD_COUNT`, 13 bits).
pub const MAX_METHOD_COUNT: u32 = NVC46F_DMA::METHOD_COUNT.bits.mask() >> NVC46F_DMA::METHOD_COUNT.bits.lo;
/// The largest immediate datum (`IMMD_DATA`, 13 bits).
pub const MAX_IMMEDIATE: u32 = NVC46F_DMA::IMMD_DATA.bits.mask() >> NVC46F_DMA::IMMD_DATA.bits.lo;

/// Why a method was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushError {
    /// Subchannels are `0..NVC46F_NUMBER_OF_SUBCHANNELS`.
    SubchannelOutOfRange { subchannel: u8 },
    /// Method offsets are byte offsets of 32-bit methods.
    MethodMisaligned { method: u32 },
    /// The method offset is at or beyond [`METHOD_ADDRESS_LIMIT`].
    MethodOutOfRange { method: u32 },
    /// A method header with no data to carry.
    EmptyData,
    /// More data words than [`MAX_METHOD_COUNT`].
    TooManyData { count: usize },
    /// Immediate data beyond [`MAX_IMMEDIATE`].
    ImmediateTooLarge { data: u32 },
    /// The storage has room for `available` more words, the method needs `needed`.
    Full { needed: usize, available: usize },
    /// Semaphores are 4-byte aligned.
    SemaphoreMisaligned { address: u64 },
    /// The semaphore address needs more bits than the class gives it.
    SemaphoreOutOfRange { address: u64, bits: u32 },
}

impl fmt::Display for PushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SubchannelOutOfRange { subchannel } => write!(f, "subchannel {subchannel} is not below 8"),
            Self::MethodMisaligned { method } => write!(f, "method {method:#x} is not 4-byte aligned"),
            Self::MethodOutOfRange { method } => {
                write!(f, "method {method:#x} is not below {METHOD_ADDRESS_LIMIT:#x}")
            }
            Self::EmptyData => write!(f, "a method needs at least one data word"),
            Self::TooManyData { count } => write!(f, "{count} data words exceed {MAX_METHOD_COUNT}"),
            Self::ImmediateTooLarge { data } => write!(f, "immediate {data:#x} exceeds {MAX_IMMEDIATE:#x}"),
            Self::Full { needed, available } => {
                write!(f, "pushbuffer full: {needed} words needed, {available} left")
            }
            Self::SemaphoreMisaligned { address } => write!(f, "semaphore {address:#x} is not 4-byte aligned"),
            Self::SemaphoreOutOfRange { address, bits } => {
                write!(f, "semaphore {address:#x} is beyond {bits} bits")
            }
        }
    }
}

/// Where pushbuffer words go.
pub trait PushStorage {
    /// Words that can still be appended (`usize::MAX` when unbounded).
    fn available(&self) -> usize;
    /// Appends `words`; callers check [`Self::available`] first.
    fn append(&mut self, words: &[u32]);
    /// The words written so far.
    fn words(&self) -> &[u32];
}

impl PushStorage for Vec<u32> {
    fn available(&self) -> usize {
        usize::MAX
    }
    fn append(&mut self, words: &[u32]) {
        self.extend_from_slice(words);
    }
    fn words(&self) -> &[u32] {
        self
    }
}

/// A caller's slice (a mapped pushbuffer segment, say) filled from the start.
#[derive(Debug)]
pub struct SliceStorage<'a> {
    buf: &'a mut [u32],
    len: usize,
}

impl<'a> SliceStorage<'a> {
    /// Empty storage over `buf`.
    pub fn new(buf: &'a mut [u32]) -> Self {
        Self { buf, len: 0 }
    }
}

impl PushStorage for SliceStorage<'_> {
    fn available(&self) -> usize {
        self.buf.len() - self.len
    }
    fn append(&mut self, words: &[u32]) {
        self.buf[self.len..self.len + words.len()].copy_from_slice(words);
        self.len += words.len();
    }
    fn words(&self) -> &[u32] {
        &self.buf[..self.len]
    }
}

/// A pushbuffer being written, for one GPFIFO channel class.
#[derive(Debug)]
pub struct PushBuffer<S: PushStorage = Vec<u32>> {
    storage: S,
    class: HostClass,
}

impl PushBuffer<Vec<u32>> {
    /// An empty, growable pushbuffer (Turing layout; see [`PushBuffer::with_storage`]).
    pub fn new() -> Self {
        Self { storage: Vec::new(), class: HostClass::TuringA }
    }
}

impl Default for PushBuffer<Vec<u32>> {
    fn default() -> Self {
        Self::new()
    }
}

impl<'a> PushBuffer<SliceStorage<'a>> {
    /// A pushbuffer filling `buf` from its start.
    pub fn over_slice(buf: &'a mut [u32], class: HostClass) -> Self {
        Self { storage: SliceStorage::new(buf), class }
    }
}

fn header(sec_op: DmaSecOp, subchannel: u8, method: u32, count_or_data: u16) -> u32 {
    NVC46F_DMA::default()
        .with(NVC46F_DMA::METHOD_ADDRESS, (method >> 2) as u16)
        .with(NVC46F_DMA::METHOD_SUBCHANNEL, subchannel)
        .with(NVC46F_DMA::METHOD_COUNT, count_or_data)
        .with(NVC46F_DMA::SEC_OP, sec_op)
        .raw()
}

fn check_method(subchannel: u8, method: u32) -> Result<(), PushError> {
    if subchannel as u32 >= NVC46F_NUMBER_OF_SUBCHANNELS {
        return Err(PushError::SubchannelOutOfRange { subchannel });
    }
    if !method.is_multiple_of(4) {
        return Err(PushError::MethodMisaligned { method });
    }
    if method >= METHOD_ADDRESS_LIMIT {
        return Err(PushError::MethodOutOfRange { method });
    }
    Ok(())
}

fn check_count(data: &[u32]) -> Result<u16, PushError> {
    if data.is_empty() {
        return Err(PushError::EmptyData);
    }
    if data.len() > MAX_METHOD_COUNT as usize {
        return Err(PushError::TooManyData { count: data.len() });
    }
    Ok(data.len() as u16)
}

impl<S: PushStorage> PushBuffer<S> {
    /// A pushbuffer for `class` writing into `storage`.
    pub fn with_storage(storage: S, class: HostClass) -> Self {
        Self { storage, class }
    }

    /// The class this pushbuffer is written for.
    pub fn class(&self) -> HostClass {
        self.class
    }

    /// The words written so far.
    pub fn words(&self) -> &[u32] {
        self.storage.words()
    }

    /// Number of words written.
    pub fn len(&self) -> usize {
        self.words().len()
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.words().is_empty()
    }

    /// Words that can still be written (`usize::MAX` when the storage grows).
    pub fn available(&self) -> usize {
        self.storage.available()
    }

    /// Gives the storage back.
    pub fn into_storage(self) -> S {
        self.storage
    }

    fn reserve(&self, needed: usize) -> Result<(), PushError> {
        let available = self.storage.available();
        if needed > available {
            return Err(PushError::Full { needed, available });
        }
        Ok(())
    }

    fn method(&mut self, op: DmaSecOp, subchannel: u8, method: u32, data: &[u32]) -> Result<(), PushError> {
        check_method(subchannel, method)?;
        let count = check_count(data)?;
        self.reserve(1 + data.len())?;
        self.storage.append(&[header(op, subchannel, method, count)]);
        self.storage.append(data);
        Ok(())
    }

    /// Incrementing method: `data[i]` goes to `method + 4*i`.
    pub fn incr(&mut self, subchannel: u8, method: u32, data: &[u32]) -> Result<(), PushError> {
        self.method(DmaSecOp::IncMethod, subchannel, method, data)
    }

    /// Non-incrementing method: every word of `data` goes to `method`.
    pub fn non_incr(&mut self, subchannel: u8, method: u32, data: &[u32]) -> Result<(), PushError> {
        self.method(DmaSecOp::NonIncMethod, subchannel, method, data)
    }

    /// Increment-once method: `data[0]` goes to `method`, the rest to `method + 4`.
    pub fn one_incr(&mut self, subchannel: u8, method: u32, data: &[u32]) -> Result<(), PushError> {
        self.method(DmaSecOp::OneInc, subchannel, method, data)
    }

    /// Immediate method: `data` (at most [`MAX_IMMEDIATE`]) travels in the header itself.
    pub fn immediate(&mut self, subchannel: u8, method: u32, data: u32) -> Result<(), PushError> {
        check_method(subchannel, method)?;
        if data > MAX_IMMEDIATE {
            return Err(PushError::ImmediateTooLarge { data });
        }
        self.reserve(1)?;
        self.storage.append(&[header(DmaSecOp::ImmdDataMethod, subchannel, method, data as u16)]);
        Ok(())
    }

    /// `n` no-operation words (`NVC46F_DMA_NOP`), e.g. to pad a segment.
    pub fn nops(&mut self, n: usize) -> Result<(), PushError> {
        self.reserve(n)?;
        for _ in 0..n {
            self.storage.append(&[NVC46F_DMA_NOP]);
        }
        Ok(())
    }

    /// `SET_OBJECT`: binds class `nvclass` to `subchannel`.
    pub fn set_object(&mut self, subchannel: u8, nvclass: u16) -> Result<(), PushError> {
        let data = NVC46F_SET_OBJECT::default().with(NVC46F_SET_OBJECT::NVCLASS, nvclass).raw();
        self.incr(subchannel, method::NVC46F_SET_OBJECT, &[data])
    }

    fn semaphore_address(&self, address: u64) -> Result<[u32; 2], PushError> {
        if !address.is_multiple_of(4) {
            return Err(PushError::SemaphoreMisaligned { address });
        }
        let bits = self.class.semaphore_address_bits();
        if address >> bits != 0 {
            return Err(PushError::SemaphoreOutOfRange { address, bits });
        }
        let lo = NVC46F_SEM_ADDR_LO::default().with(NVC46F_SEM_ADDR_LO::OFFSET, (address as u32) >> 2).raw();
        // ADDR_HI's OFFSET starts at bit 0 in every class; its width was checked above.
        let hi = (address >> 32) as u32;
        debug_assert_eq!(NVC46F_SEM_ADDR_HI::OFFSET.bits.lo, 0);
        Ok([lo, hi])
    }

    /// One incrementing method writing SEM_ADDR_LO, SEM_ADDR_HI, SEM_PAYLOAD_LO, SEM_PAYLOAD_HI
    /// and SEM_EXECUTE (they are consecutive), on subchannel 0.
    fn semaphore(&mut self, address: u64, payload: u64, execute: NVC46F_SEM_EXECUTE) -> Result<(), PushError> {
        let [lo, hi] = self.semaphore_address(address)?;
        self.incr(0, method::NVC46F_SEM_ADDR_LO, &[lo, hi, payload as u32, (payload >> 32) as u32, execute.raw()])
    }

    /// Writes the 32-bit `payload` to the semaphore at `address` once the previous methods ran;
    /// with `wfi`, once the engine is also idle (`RELEASE_WFI_EN`). No timestamp.
    pub fn semaphore_release(&mut self, address: u64, payload: u32, wfi: bool) -> Result<(), PushError> {
        let execute = NVC46F_SEM_EXECUTE::default()
            .with(NVC46F_SEM_EXECUTE::OPERATION, SemOperation::Release)
            .with(NVC46F_SEM_EXECUTE::RELEASE_WFI, wfi)
            .with(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, false)
            .with(NVC46F_SEM_EXECUTE::RELEASE_TIMESTAMP, false);
        self.semaphore(address, payload as u64, execute)
    }

    /// Writes the 16-byte semaphore report at `address` (16-byte aligned) once the previous
    /// methods ran and the engine is idle: the 32-bit `payload`, then the GPU's 64-bit
    /// nanosecond timestamp at byte 8 (`RELEASE_TIMESTAMP_EN`, the four-word release).
    pub fn semaphore_release_timestamp(&mut self, address: u64, payload: u32) -> Result<(), PushError> {
        if !address.is_multiple_of(16) {
            return Err(PushError::SemaphoreMisaligned { address });
        }
        let execute = NVC46F_SEM_EXECUTE::default()
            .with(NVC46F_SEM_EXECUTE::OPERATION, SemOperation::Release)
            .with(NVC46F_SEM_EXECUTE::RELEASE_WFI, true)
            .with(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, false)
            .with(NVC46F_SEM_EXECUTE::RELEASE_TIMESTAMP, true);
        self.semaphore(address, payload as u64, execute)
    }

    /// [`Self::semaphore_release`] with a 64-bit payload (`PAYLOAD_SIZE_64BIT`).
    pub fn semaphore_release_64(&mut self, address: u64, payload: u64, wfi: bool) -> Result<(), PushError> {
        let execute = NVC46F_SEM_EXECUTE::default()
            .with(NVC46F_SEM_EXECUTE::OPERATION, SemOperation::Release)
            .with(NVC46F_SEM_EXECUTE::RELEASE_WFI, wfi)
            .with(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, true);
        self.semaphore(address, payload, execute)
    }

    /// Stalls the channel until the 32-bit semaphore at `address` equals `payload`
    /// (`OPERATION_ACQUIRE`), letting the scheduler run another TSG meanwhile
    /// (`ACQUIRE_SWITCH_TSG_EN`).
    pub fn semaphore_acquire(&mut self, address: u64, payload: u32) -> Result<(), PushError> {
        self.semaphore_acquire_op(address, payload, SemOperation::Acquire)
    }

    /// Like [`Self::semaphore_acquire`], with another acquire operation (`ACQ_CIRC_GEQ`, ...).
    pub fn semaphore_acquire_op(
        &mut self,
        address: u64,
        payload: u32,
        operation: SemOperation,
    ) -> Result<(), PushError> {
        let execute = NVC46F_SEM_EXECUTE::default()
            .with(NVC46F_SEM_EXECUTE::OPERATION, operation)
            .with(NVC46F_SEM_EXECUTE::ACQUIRE_SWITCH_TSG, true)
            .with(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, false);
        self.semaphore(address, payload as u64, execute)
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding (for tests and the GPU model).

/// How a decoded method's data applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MethodKind {
    Incr,
    NonIncr,
    OneIncr,
    /// The datum was in the header.
    Immediate(u32),
}

/// One method read back from a pushbuffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PushMethod<'a> {
    pub subchannel: u8,
    /// Byte offset.
    pub method: u32,
    pub kind: MethodKind,
    /// The data words (empty for immediates).
    pub data: &'a [u32],
}

impl PushMethod<'_> {
    /// The method each data word goes to, with the word: `(method, value)`.
    pub fn writes(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let kind = self.kind;
        let method = self.method;
        let immediate = match kind {
            MethodKind::Immediate(v) => Some((method, v)),
            _ => None,
        };
        immediate.into_iter().chain(self.data.iter().enumerate().map(move |(i, &v)| {
            let m = match kind {
                MethodKind::Incr => method + 4 * i as u32,
                MethodKind::OneIncr => method + if i == 0 { 0 } else { 4 },
                _ => method,
            };
            (m, v)
        }))
    }
}

/// Why a pushbuffer could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// A header kind this decoder does not handle (sub-device masks, END_PB_SEGMENT, reserved).
    Unsupported { at: usize, word: u32 },
    /// The header announces more data words than remain.
    Truncated { at: usize, count: u32 },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported { at, word } => write!(f, "word {at}: unsupported method header {word:#010x}"),
            Self::Truncated { at, count } => write!(f, "word {at}: header announces {count} words past the end"),
        }
    }
}

/// Reads the methods of `words`, skipping NOPs; stops at the first error.
pub fn decode(words: &[u32]) -> impl Iterator<Item = Result<PushMethod<'_>, DecodeError>> + '_ {
    let mut at = 0usize;
    let mut failed = false;
    core::iter::from_fn(move || loop {
        if failed || at >= words.len() {
            return None;
        }
        let word = words[at];
        if word == NVC46F_DMA_NOP {
            at += 1;
            continue;
        }
        let h = NVC46F_DMA(word);
        let subchannel = h.method_subchannel();
        let method = (h.method_address() as u32) << 2;
        let kind = match h.sec_op() {
            Ok(DmaSecOp::IncMethod) => MethodKind::Incr,
            Ok(DmaSecOp::NonIncMethod) => MethodKind::NonIncr,
            Ok(DmaSecOp::OneInc) => MethodKind::OneIncr,
            Ok(DmaSecOp::ImmdDataMethod) => MethodKind::Immediate(h.immd_data() as u32),
            _ => {
                failed = true;
                return Some(Err(DecodeError::Unsupported { at, word }));
            }
        };
        let count = match kind {
            MethodKind::Immediate(_) => 0,
            _ => h.method_count() as usize,
        };
        if at + 1 + count > words.len() {
            failed = true;
            return Some(Err(DecodeError::Truncated { at, count: count as u32 }));
        }
        let data = &words[at + 1..at + 1 + count];
        at += 1 + count;
        return Some(Ok(PushMethod { subchannel, method, kind, data }));
    })
}
