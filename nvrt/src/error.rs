//! What went wrong, typed.

use alloc::string::String;
use core::fmt;

use nvgpu::runtime::RuntimeError;
use uvm::runtime::ManagedError;

/// Every way an application call can fail.
#[derive(Debug)]
pub enum Error {
    /// No device of this ordinal (`count` devices exist).
    NoSuchDevice { ordinal: usize, count: usize },
    /// The platform could not open the device.
    Open { ordinal: usize, reason: String },
    /// The GPU runtime (RM, channels, copies, modules, launches).
    Runtime(RuntimeError),
    /// Unified memory (a fatal GPU fault, servicing, the fault buffer).
    Managed(ManagedError),
    /// No boot module of this name (a payload for this GPU's architecture, or an input file).
    MissingModule { name: String },
    /// Host and device sides of a copy differ in length (elements).
    LengthMismatch { what: &'static str, device: usize, host: usize },
    /// A buffer, stream or event of another context, or one already given back.
    ForeignHandle { what: &'static str },
    /// An argument a kernel cannot take from this type, or arguments that do not fit its
    /// parameter table (the table is checked before anything reaches the GPU).
    Arguments { function: String, reason: String },
    /// Managed memory was configured after its first buffer existed.
    ManagedAlreadyStarted,
    /// The GSP-RM session of the device is gone (the platform unloaded it).
    SessionGone { ordinal: usize },
    /// The context was called from inside one of its own managed CPU passes.
    Busy,
    /// An element type whose size does not divide the platform's access pieces.
    ElementSize { size: usize },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoSuchDevice { ordinal, count } => write!(f, "no device {ordinal}: this system has {count}"),
            Error::Open { ordinal, reason } => write!(f, "cannot open device {ordinal}: {reason}"),
            Error::Runtime(e) => write!(f, "{e}"),
            Error::Managed(e) => write!(f, "managed memory: {e}"),
            Error::MissingModule { name } => write!(f, "no boot module named {name}"),
            Error::LengthMismatch { what, device, host } => {
                write!(f, "{what}: the device side has {device} elements, the host side {host}")
            }
            Error::ForeignHandle { what } => write!(f, "this {what} belongs to another context or was given back"),
            Error::Arguments { function, reason } => write!(f, "arguments of {function}: {reason}"),
            Error::ManagedAlreadyStarted => {
                write!(f, "managed memory is configured before its first buffer, not after")
            }
            Error::SessionGone { ordinal } => write!(f, "device {ordinal}: its GSP-RM session is gone"),
            Error::Busy => write!(f, "the context was called from inside its own managed CPU pass"),
            Error::ElementSize { size } => {
                write!(f, "elements of {size} bytes do not divide 4 KiB pages: CPU passes cannot split them")
            }
        }
    }
}

impl From<RuntimeError> for Error {
    fn from(e: RuntimeError) -> Self {
        Error::Runtime(e)
    }
}

impl From<ManagedError> for Error {
    fn from(e: ManagedError) -> Self {
        match e {
            ManagedError::Runtime(e) => Error::Runtime(e),
            e => Error::Managed(e),
        }
    }
}
