//! Errors of the VBIOS parser.
//!
//! A ROM is input: every way it can be short, corrupt or foreign is one of these variants, never a
//! panic. Offsets in errors are ROM offsets (see [`super::Vbios`]) unless the variant says
//! otherwise; each message fits on one line so a tool can print it as the reason.

use core::fmt;

/// Why a VBIOS could not be parsed, or why a structure in it could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VbiosError {
    /// The input holds no bytes at all.
    Empty,
    /// The input is larger than any offset the ROM structures can express (4 GiB).
    InputTooLarge { size: u64 },
    /// A structure runs past the end of the input (or of the region it must lie in).
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where it starts (saturated at `u32::MAX` when the arithmetic itself overflowed).
        offset: u32,
        /// How many bytes it needs.
        len: u32,
        /// How many bytes there are.
        size: u32,
    },
    /// Offset 0 holds neither a PCI expansion ROM signature nor an NVGI (IFR) header.
    NoRomSignature { found: u16 },
    /// An NVGI (IFR) header of a version NVIDIA's driver does not handle either.
    UnsupportedIfrVersion { version: u8 },
    /// An IFR v3 header whose ROM directory ("RFRD") is missing.
    NoRomDirectory { offset: u32, found: u32 },
    /// The IFR header points at a PCI ROM that is not 4-byte aligned.
    MisalignedRomOffset { offset: u32 },
    /// An image of the chain does not start with a ROM signature.
    BadImageSignature { image: u32, found: u16 },
    /// An image's PCI data structure pointer leads to something that is not PCIR/NPDS.
    BadPcirSignature { image: u32, pcir: u32, found: u32 },
    /// The first image is a PCI ROM, but not NVIDIA's.
    NotNvidia { vendor: u16, device: u16 },
    /// An image declares a length of zero (the chain would never advance).
    EmptyImage { image: u32 },
    /// The chain has more images than any real board ships.
    TooManyImages { limit: usize },
    /// The chain ends further from its start than the PROM window can hold.
    RomTooLarge { size: u64, limit: u32 },
    /// No BIT header ("\xFF\xB8BIT\0" with a valid checksum) in the ROM.
    NoBitHeader,
    /// A BIT header whose sizes cannot describe BIT v1.00 tokens.
    BadBitHeader { offset: u32, header_size: u8, token_size: u8 },
    /// No usable falcon data token ('p', data version 2) in the BIT.
    NoFalconData,
    /// The falcon ucode table header is of an unknown version or too small.
    BadFalconUcodeTable { offset: u32, version: u8, header_size: u8, entry_size: u8 },
    /// The falcon ucode table has no entry for the requested FWSEC application.
    NoFwsec { application_id: u8 },
    /// The FWSEC entry's descriptor header says no version is available (a v1 descriptor).
    FwsecDescVersionUnavailable { offset: u32 },
    /// The FWSEC descriptor is of a version (or too small for the version) not handled here.
    UnsupportedFwsecDesc { version: u8, size: u16 },
    /// The FWSEC descriptor's sizes or offsets do not fit the ucode image they describe.
    FwsecLayout { what: &'static str },
    /// The FWSEC application interface table in DMEM is unusable.
    BadInterfaceTable { what: &'static str },
    /// The application interface table has no DMEM mapper entry.
    NoDmemMapper,
    /// The DMEM mapper entry points at something without the "DMAP" signature.
    BadDmemMapper { offset: u32, found: u32 },
}

impl fmt::Display for VbiosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "empty input: no ROM bytes"),
            Self::InputTooLarge { size } => write!(f, "input of {size} bytes is too large for a VBIOS"),
            Self::Truncated { what, offset, len, size } => {
                write!(f, "truncated: {what} at {offset:#x} needs {len:#x} bytes but only {size:#x} are available")
            }
            Self::NoRomSignature { found } => {
                write!(f, "not a PCI expansion ROM: offset 0 holds {found:#06x}, not 0xaa55 or an NVGI header")
            }
            Self::UnsupportedIfrVersion { version } => {
                write!(f, "NVGI (IFR) header version {version:#x} is not supported")
            }
            Self::NoRomDirectory { offset, found } => {
                write!(f, "NVGI (IFR) v3 header: no ROM directory (\"RFRD\") at {offset:#x}, found {found:#010x}")
            }
            Self::MisalignedRomOffset { offset } => {
                write!(f, "NVGI (IFR) header points at misaligned PCI ROM offset {offset:#x}")
            }
            Self::BadImageSignature { image, found } => {
                write!(f, "image at {image:#x}: bad ROM signature {found:#06x}")
            }
            Self::BadPcirSignature { image, pcir, found } => {
                write!(f, "image at {image:#x}: no PCI data structure at {pcir:#x} (signature {found:#010x})")
            }
            Self::NotNvidia { vendor, device } => {
                write!(f, "not an NVIDIA VBIOS: PCI ROM for vendor {vendor:#06x} device {device:#06x}")
            }
            Self::EmptyImage { image } => write!(f, "image at {image:#x} declares a length of zero"),
            Self::TooManyImages { limit } => write!(f, "ROM chain has more than {limit} images"),
            Self::RomTooLarge { size, limit } => {
                write!(f, "ROM chain of {size:#x} bytes exceeds the {limit:#x}-byte PROM window")
            }
            Self::NoBitHeader => write!(f, "no BIT header (\\xff\\xb8BIT with a valid checksum) in the ROM"),
            Self::BadBitHeader { offset, header_size, token_size } => {
                write!(f, "BIT header at {offset:#x}: header size {header_size} / token size {token_size} too small")
            }
            Self::NoFalconData => write!(f, "no falcon data token ('p', version 2) in the BIT"),
            Self::BadFalconUcodeTable { offset, version, header_size, entry_size } => write!(
                f,
                "falcon ucode table at {offset:#x}: version {version}, header size {header_size}, \
                 entry size {entry_size} not supported"
            ),
            Self::NoFwsec { application_id } => {
                write!(f, "no FWSEC (application id {application_id:#04x}) in the falcon ucode table")
            }
            Self::FwsecDescVersionUnavailable { offset } => {
                write!(f, "FWSEC descriptor at {offset:#x} carries no version (v1 descriptor)")
            }
            Self::UnsupportedFwsecDesc { version, size } => {
                write!(f, "FWSEC descriptor version {version} of size {size:#x} is not supported")
            }
            Self::FwsecLayout { what } => write!(f, "FWSEC image layout: {what}"),
            Self::BadInterfaceTable { what } => write!(f, "FWSEC application interface table: {what}"),
            Self::NoDmemMapper => write!(f, "FWSEC has no DMEM mapper interface entry"),
            Self::BadDmemMapper { offset, found } => {
                write!(f, "FWSEC DMEM mapper at DMEM {offset:#x}: signature {found:#010x} is not \"DMAP\"")
            }
        }
    }
}

impl core::error::Error for VbiosError {}

/// Shorthand for results of this module.
pub type Result<T> = core::result::Result<T, VbiosError>;
