//! Errors of the falcon driver: each names the engine (where there is one) and the step, so a
//! caller can tell "GSP falcon memory scrubbing timed out" from "SEC2 IMEM load too large".

use core::fmt;

use crate::hw::engine::FalconEngine;
use crate::platform::Timeout;

/// NVIDIA's short name for a falcon-based engine, as used in messages.
pub const fn engine_name(engine: FalconEngine) -> &'static str {
    match engine {
        FalconEngine::Gsp => "GSP",
        FalconEngine::Sec2 => "SEC2",
        FalconEngine::Fsp => "FSP",
    }
}

/// Why a falcon step failed.
///
/// Argument errors (alignment, size) are detected before any register is written; hardware that
/// does not answer in time is a [`FalconError::Timeout`] naming what was awaited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FalconError {
    /// The chip's HAL lists no such falcon (e.g. SEC2 on Hopper, the FSP before Hopper).
    NotPresent { engine: FalconEngine },
    /// This engine or chip has no such step (no FBIF to DMA through, no RISC-V boot registers,
    /// an engine the driver must not reset).
    Unsupported { engine: FalconEngine, what: &'static str },
    /// A bounded wait ran out.
    Timeout { engine: FalconEngine, what: &'static str, after_ms: u64 },
    /// A length is not a multiple of what the transfer needs.
    SizeNotAligned { engine: FalconEngine, what: &'static str, size: u64, alignment: u32 },
    /// An address or offset is not aligned as the transfer needs.
    AddressNotAligned { engine: FalconEngine, what: &'static str, address: u64, alignment: u32 },
    /// Something does not fit: a load past the end of IMEM, an offset wider than its register
    /// field, a range past the end of a DMA buffer. `size` is how far it reaches, `max` the limit.
    TooLarge { engine: FalconEngine, what: &'static str, size: u64, max: u64 },
    /// The falcon was expected to be halted (its mailboxes read as results) but is running.
    NotHalted { engine: FalconEngine },
    /// EMEM's access register did not advance by the words transferred: auto-increment failed.
    EmemOffsetMismatch { engine: FalconEngine, expected_words: u32, found_words: u32 },
    /// A ucode image is too small for what is to be patched into it.
    ImageTooSmall { what: &'static str, offset: u64, len: u64, image_len: u64 },
    /// A ucode's layout values are inconsistent (e.g. its signature lies before its data).
    BadUcodeLayout { what: &'static str },
    /// No signature in the image matches the chip's fuse version.
    NoSignatureForFuseVersion { fuse_version: u32, available: u32 },
}

impl FalconError {
    /// A [`Timeout`] from `platform::wait_for`, attributed to `engine`.
    pub(crate) fn timeout(engine: FalconEngine) -> impl Fn(Timeout) -> FalconError {
        move |t| FalconError::Timeout { engine, what: t.what, after_ms: t.after_ms }
    }

    /// The engine the error is about, when it is about one.
    pub fn engine(&self) -> Option<FalconEngine> {
        match *self {
            Self::NotPresent { engine }
            | Self::Unsupported { engine, .. }
            | Self::Timeout { engine, .. }
            | Self::SizeNotAligned { engine, .. }
            | Self::AddressNotAligned { engine, .. }
            | Self::TooLarge { engine, .. }
            | Self::NotHalted { engine }
            | Self::EmemOffsetMismatch { engine, .. } => Some(engine),
            Self::ImageTooSmall { .. } | Self::BadUcodeLayout { .. } | Self::NoSignatureForFuseVersion { .. } => None,
        }
    }
}

impl fmt::Display for FalconError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NotPresent { engine } => write!(f, "this chip has no {} falcon", engine_name(engine)),
            Self::Unsupported { engine, what } => {
                write!(f, "{} falcon: {what} is not available on this engine or chip", engine_name(engine))
            }
            Self::Timeout { engine, what, after_ms } => {
                write!(f, "timeout waiting for {} falcon {what} after {after_ms} ms", engine_name(engine))
            }
            Self::SizeNotAligned { engine, what, size, alignment } => {
                write!(f, "{} falcon: {what} size {size:#x} is not a multiple of {alignment}", engine_name(engine))
            }
            Self::AddressNotAligned { engine, what, address, alignment } => {
                write!(f, "{} falcon: {what} {address:#x} is not aligned to {alignment} bytes", engine_name(engine))
            }
            Self::TooLarge { engine, what, size, max } => {
                write!(f, "{} falcon: {what} reaches {size:#x}, beyond the limit {max:#x}", engine_name(engine))
            }
            Self::NotHalted { engine } => write!(f, "{} falcon is running, expected it halted", engine_name(engine)),
            Self::EmemOffsetMismatch { engine, expected_words, found_words } => write!(
                f,
                "{} EMEM access ended at word {found_words:#x}, expected {expected_words:#x} (auto-increment failed)",
                engine_name(engine)
            ),
            Self::ImageTooSmall { what, offset, len, image_len } => {
                write!(f, "ucode image of {image_len:#x} bytes cannot hold {what} ({len:#x} bytes at {offset:#x})")
            }
            Self::BadUcodeLayout { what } => write!(f, "inconsistent ucode layout: {what}"),
            Self::NoSignatureForFuseVersion { fuse_version, available } => {
                write!(f, "no ucode signature for fuse version {fuse_version} (signatures available: {available:#x})")
            }
        }
    }
}

/// Results of the falcon driver.
pub type Result<T> = core::result::Result<T, FalconError>;
