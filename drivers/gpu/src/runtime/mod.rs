//! The driver's runtime: what the application API (`nvrt`) is built on.
//!
//! - [`Gpu`]: one device, built from a booted GSP-RM session's pieces: an RM client, device and
//!   subdevice, one VA space with driver-owned page tables in DMA memory, a VRAM allocator over
//!   GSP-RM's FB regions, a DMA staging buffer and the default stream (a copy-engine channel).
//! - [`DeviceBuffer`]: typed VRAM mapped into the VA space; host/device, device/device copies
//!   and memsets on [`Gpu`] (synchronous, on the default stream) or on a [`Stream`]
//!   (asynchronous device-side work).
//! - [`Stream`] = a GPFIFO channel, [`Event`] = a fence on it; [`Gpu::synchronize`] waits for
//!   every stream.
//! - [`Module`]: a fatbin, cubin or PTX loaded with [`crate::payload::Module`], its image for
//!   the chip uploaded to GPU memory; [`Function`] exposes a kernel's parameter layout and packs
//!   typed [`Args`].
//!
//! There is no global context in no_std: everything that touches the GPU takes the [`Gpu`]
//! explicitly, and what holds GPU resources is given back with an explicit `free`/`destroy`.
//! Dropping a buffer, module or stream without it leaks the VRAM or channel until
//! [`Gpu::destroy`] (which frees every RM object of the client).
//!
//! Applications use the API built on this one, `nvrt` (typed buffers and RAII, events with
//! timestamps, managed memory, no driver types in its signatures).

mod buffer;
mod gpu;
mod launch;
mod module;
pub mod params;

use alloc::string::String;
use core::fmt;

use zerocopy::{FromBytes, Immutable, IntoBytes};

use crate::ce::CeEncodeError;
use crate::channel::ChannelError;
use crate::mm::{VaError, VramError};
use crate::platform::DmaError;
use crate::rm::RmError;

pub use buffer::DeviceBuffer;
pub use gpu::{Event, Gpu, GpuConfig, ProgressFn, Stream, StreamKind, PROGRESS_MIN_BYTES};
pub use module::{Function, ImageKind, LaunchConfig, Module};
pub use params::{Args, ArgsError, ParamLayout, PtxSignatureError};

/// Plain data that may be copied to and from the device byte for byte.
pub trait Pod: FromBytes + IntoBytes + Immutable {}
impl<T: FromBytes + IntoBytes + Immutable> Pod for T {}

/// What went wrong in the application API.
#[derive(Debug)]
pub enum RuntimeError {
    Channel(ChannelError),
    Rm(RmError),
    Vram(VramError),
    Va(VaError),
    Dma(DmaError),
    CopyEngine(CeEncodeError),
    Payload(crate::payload::Error),
    PtxSignature(PtxSignatureError),
    Args(ArgsError),
    /// The compute context's memory configuration (local memory, windows, shared memory).
    Memory(crate::compute::memory::MemoryConfigError),
    /// Host and device sides of a copy differ in length (elements).
    LengthMismatch {
        what: &'static str,
        device: usize,
        host: usize,
    },
    /// A size that must be a multiple of `multiple` bytes is not.
    Misaligned {
        what: &'static str,
        bytes: usize,
        multiple: usize,
    },
    /// `len` elements of `elem` bytes overflow the address space.
    TooLarge {
        len: usize,
        elem: usize,
    },
    /// A stream handle this GPU does not have (destroyed, or another GPU's).
    NoSuchStream {
        index: u32,
    },
    /// A stream cannot do this: copy-engine work on a compute stream, or destroying the default.
    WrongStream {
        what: &'static str,
        kind: StreamKind,
    },
    /// No kernel of this name in the module.
    NoSuchFunction {
        name: String,
    },
    /// A launch shape that cannot run.
    BadLaunch {
        what: &'static str,
    },
    /// Something this runtime does not do yet, named.
    Unsupported {
        what: &'static str,
    },
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Channel(e) => write!(f, "channel: {e}"),
            Self::Rm(e) => write!(f, "RM: {e}"),
            Self::Vram(e) => write!(f, "{e}"),
            Self::Va(e) => write!(f, "{e}"),
            Self::Dma(e) => write!(f, "{e}"),
            Self::CopyEngine(e) => write!(f, "{e}"),
            Self::Payload(e) => write!(f, "module: {e}"),
            Self::PtxSignature(e) => write!(f, "module: {e}"),
            Self::Args(e) => write!(f, "{e}"),
            Self::Memory(e) => write!(f, "compute memory: {e}"),
            Self::LengthMismatch { what, device, host } => {
                write!(f, "{what}: the device side has {device} elements, the host side {host}")
            }
            Self::Misaligned { what, bytes, multiple } => {
                write!(f, "{what}: {bytes} bytes is not a multiple of {multiple}")
            }
            Self::TooLarge { len, elem } => write!(f, "{len} elements of {elem} bytes overflow"),
            Self::NoSuchStream { index } => write!(f, "stream {index} does not exist on this GPU"),
            Self::WrongStream { what, kind } => write!(f, "a {kind:?} stream cannot {what}"),
            Self::NoSuchFunction { name } => write!(f, "no kernel named `{name}` in the module"),
            Self::BadLaunch { what } => write!(f, "bad launch configuration: {what}"),
            Self::Unsupported { what } => write!(f, "not supported yet: {what}"),
        }
    }
}

macro_rules! from_error {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        $(impl From<$ty> for RuntimeError {
            fn from(e: $ty) -> Self {
                RuntimeError::$variant(e)
            }
        })*
    };
}

from_error!(
    Channel(ChannelError),
    Rm(RmError),
    Vram(VramError),
    Va(VaError),
    Dma(DmaError),
    CopyEngine(CeEncodeError),
    Payload(crate::payload::Error),
    PtxSignature(PtxSignatureError),
    Args(ArgsError),
    Memory(crate::compute::memory::MemoryConfigError),
);
