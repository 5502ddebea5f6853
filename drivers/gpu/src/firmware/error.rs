//! Errors of the firmware file parsers and of the firmware bundle.
//!
//! Firmware files are input: every way one can be short, corrupt, foreign or of the wrong release
//! is one of these variants, never a panic. Offsets are file offsets unless the variant says
//! otherwise; each message fits on one line so a tool can print it as the reason.

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

use crate::chip::Chipset;

/// Why a firmware file could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirmwareError {
    /// The file holds no bytes at all.
    Empty,
    /// Neither an ELF file nor an `nvfw_bin_hdr` image.
    UnknownFormat { first_word: u32 },
    /// The ELF container itself is malformed (the reason is the ELF reader's).
    Elf { reason: String },
    /// An ELF file, but not one for the GSP's RISC-V core.
    NotRiscv { machine: u16 },
    /// An ELF section name that is not UTF-8.
    BadSectionName { index: usize },
    /// A section the file must have is not there.
    MissingSection { name: String },
    /// A section the file must have once is there more than once.
    DuplicateSection { name: String },
    /// A section the driver uses is empty.
    EmptySection { name: String },
    /// `.fwversion` names a release other than the one the driver is bound to.
    VersionMismatch { found: String, expected: &'static str },
    /// `.fwversion` is not a short NUL-terminated string.
    MalformedVersion { size: u64 },
    /// The `nvfw_bin_hdr` magic is not 0x10de.
    BadBinMagic { found: u32 },
    /// An `nvfw_bin_hdr` version other than 1.
    UnsupportedBinVersion { version: u32 },
    /// A structure or region runs past the end of the file.
    Truncated {
        /// What was being read.
        what: &'static str,
        offset: u64,
        /// How many bytes it needs.
        len: u64,
        /// How many bytes the file has.
        size: u64,
    },
    /// A region runs past the end of the region it must lie in (e.g. the ucode image).
    OutOfRange { what: &'static str, offset: u64, len: u64, within: &'static str, limit: u64 },
    /// A header field holds a value the driver (or NVIDIA's) cannot use.
    BadField {
        /// The structure, as NVIDIA names it.
        structure: &'static str,
        field: &'static str,
        value: u64,
        /// What it should be, in words.
        expected: &'static str,
    },
    /// The booter carries no signature for the fuse version the chip reports.
    NoSignatureForFuseVersion { fuse_version: u32, signatures: u32 },
    /// The chip has no GSP-RM firmware in the pinned release (Blackwell in 535.261.03).
    NoGspFirmware { chip: Chipset },
    /// The firmware source has no file of this name.
    MissingFile { name: String, chip: Chipset, what: &'static str },
    /// A file of the bundle was found but could not be used.
    InFile { name: String, error: Box<FirmwareError> },
}

impl fmt::Display for FirmwareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "empty file: no firmware bytes"),
            Self::UnknownFormat { first_word } => write!(
                f,
                "not a firmware file this driver knows: first word {first_word:#010x} is neither \
                 an ELF magic nor the nvfw_bin_hdr magic 0x10de"
            ),
            Self::Elf { reason } => write!(f, "malformed ELF file: {reason}"),
            Self::NotRiscv { machine } => {
                write!(f, "ELF file for machine {machine} is not GSP firmware (GSP-RM images are RISC-V, machine 243)")
            }
            Self::BadSectionName { index } => {
                write!(f, "ELF section {index} has a name that is not UTF-8")
            }
            Self::MissingSection { name } => write!(f, "ELF section {name} is missing"),
            Self::DuplicateSection { name } => write!(f, "ELF section {name} appears more than once"),
            Self::EmptySection { name } => write!(f, "ELF section {name} is empty"),
            Self::VersionMismatch { found, expected } => {
                write!(f, "GSP firmware version mismatch: the file is {found}, the driver is bound to {expected}")
            }
            Self::MalformedVersion { size } => write!(
                f,
                "GSP firmware version unknown: .fwversion ({size} bytes) is not a NUL-terminated version string"
            ),
            Self::BadBinMagic { found } => {
                write!(f, "nvfw_bin_hdr magic is {found:#x}, not 0x10de")
            }
            Self::UnsupportedBinVersion { version } => {
                write!(f, "nvfw_bin_hdr version {version} is not supported (only 1)")
            }
            Self::Truncated { what, offset, len, size } => {
                write!(f, "truncated: {what} at {offset:#x} needs {len:#x} bytes but the file has only {size:#x}")
            }
            Self::OutOfRange { what, offset, len, within, limit } => {
                write!(f, "{what} ({len:#x} bytes at {offset:#x}) runs past the end of the {within} ({limit:#x} bytes)")
            }
            Self::BadField { structure, field, value, expected } => {
                write!(f, "{structure}.{field} is {value:#x}, expected {expected}")
            }
            Self::NoSignatureForFuseVersion { fuse_version, signatures } => {
                write!(f, "no booter signature for fuse version {fuse_version} (the file has {signatures})")
            }
            Self::NoGspFirmware { chip } => {
                write!(f, "{chip:?} has no GSP-RM firmware in release {}", crate::chip::GSP_FIRMWARE_VERSION)
            }
            Self::MissingFile { name, chip, what } => {
                write!(f, "firmware file {name} ({what} for {chip:?}) is missing")
            }
            Self::InFile { name, error } => write!(f, "{name}: {error}"),
        }
    }
}

impl core::error::Error for FirmwareError {}

/// Shorthand for results of this module.
pub type Result<T> = core::result::Result<T, FirmwareError>;

/// `len` bytes at `offset` of `data`, or [`FirmwareError::Truncated`] naming `what`.
pub(crate) fn slice<'a>(data: &'a [u8], what: &'static str, offset: u64, len: u64) -> Result<&'a [u8]> {
    let truncated = || FirmwareError::Truncated { what, offset, len, size: data.len() as u64 };
    let start = usize::try_from(offset).map_err(|_| truncated())?;
    let count = usize::try_from(len).map_err(|_| truncated())?;
    let end = start.checked_add(count).ok_or_else(truncated)?;
    data.get(start..end).ok_or_else(truncated)
}

/// Reads a plain-bytes structure at `offset` of `data`.
pub(crate) fn struct_at<T: zerocopy::FromBytes>(data: &[u8], what: &'static str, offset: u64) -> Result<T> {
    let len = core::mem::size_of::<T>() as u64;
    let bytes = slice(data, what, offset, len)?;
    T::read_from_bytes(bytes).map_err(|_| FirmwareError::Truncated { what, offset, len, size: data.len() as u64 })
}

/// Checks that `len` bytes at `offset` lie inside a region of `limit` bytes.
pub(crate) fn check_within(
    what: &'static str,
    offset: u32,
    len: u32,
    within: &'static str,
    limit: usize,
) -> Result<()> {
    // Two u32s: the sum fits in a u64.
    let end = u64::from(offset).saturating_add(u64::from(len));
    if end > limit as u64 {
        return Err(FirmwareError::OutOfRange {
            what,
            offset: offset.into(),
            len: len.into(),
            within,
            limit: limit as u64,
        });
    }
    Ok(())
}
