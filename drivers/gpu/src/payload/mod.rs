//! GPU payloads: what an application hands the driver to run. A [`Module`] is loaded from a
//! fatbin (the `.nv_fatbin` section or a `.fatbin` file, see [`fatbin`]), a bare cubin
//! ([`cubin`]) or PTX text; [`Module::select`] picks the image for a chip: SASS built for the
//! chip's SM if there is one, else PTX (which the GPU model interprets; real chips would need
//! a JIT this driver does not have), else a typed [`Error::WrongArchitecture`].
//!
//! Everything here is input parsing: truncated, corrupt or foreign data gives an [`Error`],
//! never a panic (the unit tests run truncation and byte-flip loops over every format).

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod cubin;
pub mod fatbin;
pub mod nvinfo;

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::chip::Chipset;
pub use cubin::{Cubin, Kernel};
pub use fatbin::{Entry, EntryKind, Fatbin};

/// Why a payload could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The input ends before `need` bytes at `offset` (of `what`).
    Truncated { what: &'static str, offset: usize, need: usize, have: usize },
    /// A magic number is wrong.
    BadMagic { what: &'static str, offset: usize, found: u32 },
    /// A version this parser does not know.
    UnsupportedVersion { what: &'static str, version: u32 },
    /// A field contradicts the format.
    Corrupt { what: &'static str, detail: &'static str },
    /// A compressed fatbin entry in a codec this parser does not decode.
    UnsupportedCompression { entry: usize, codec: &'static str },
    /// A compressed fatbin entry does not decode.
    Decompress { entry: usize, detail: &'static str },
    /// The ELF layer refused the cubin.
    Elf { context: &'static str },
    /// An ELF file, but not for a CUDA GPU.
    NotCuda { machine: u16 },
    /// A relocation type the loader cannot apply.
    UnsupportedRelocation { section: String, r_type: u32 },
    /// A relocation's symbol is in a section with no load address.
    UnresolvedSymbol { symbol: String },
    /// Nothing in the module runs on the chip.
    WrongArchitecture { chip: Chipset, sm: u32, sass: Vec<u32>, ptx: Vec<u32> },
    /// No kernel of that name.
    NoSuchKernel { name: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated { what, offset, need, have } => {
                write!(f, "{what} truncated at offset {offset:#x}: needs {need} bytes, {have} left")
            }
            Error::BadMagic { what, offset, found } => {
                write!(f, "{what}: bad magic {found:#010x} at offset {offset:#x}")
            }
            Error::UnsupportedVersion { what, version } => write!(f, "{what}: unsupported version {version}"),
            Error::Corrupt { what, detail } => write!(f, "{what}: {detail}"),
            Error::UnsupportedCompression { entry, codec } => {
                write!(f, "fatbin entry {entry}: compressed entry not supported ({codec}); rebuild without -compress-mode=size")
            }
            Error::Decompress { entry, detail } => write!(f, "fatbin entry {entry}: {detail}"),
            Error::Elf { context } => write!(f, "cubin: malformed ELF ({context})"),
            Error::NotCuda { machine } => write!(f, "ELF machine {machine}, not EM_CUDA (190): not a cubin"),
            Error::UnsupportedRelocation { section, r_type } => {
                write!(f, "relocation type {r_type} in {section} is not supported by this loader")
            }
            Error::UnresolvedSymbol { symbol } => {
                write!(f, "relocation against {symbol}: its section has no load address")
            }
            Error::WrongArchitecture { chip, sm, sass, ptx } => {
                write!(f, "no image for {chip} (sm_{sm}): the module has SASS for {sass:?} and PTX for {ptx:?}")
            }
            Error::NoSuchKernel { name } => write!(f, "no kernel named {name}"),
        }
    }
}

/// A PTX image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxImage {
    /// The SM the fatbin entry was tagged with (`.target` of the text).
    pub sm: u32,
    pub text: Vec<u8>,
}

/// A loaded module: every cubin and every PTX text it carries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Module {
    pub cubins: Vec<Cubin>,
    pub ptx: Vec<PtxImage>,
}

/// What runs on a chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Image<'a> {
    Sass(&'a Cubin),
    Ptx(&'a PtxImage),
}

impl Module {
    /// Loads a fatbin, a cubin (ELF) or PTX text, told apart by their first bytes.
    pub fn load(data: &[u8]) -> Result<Module, Error> {
        if data.starts_with(b"\x7fELF") {
            return Ok(Module { cubins: alloc::vec![Cubin::parse(data)?], ptx: Vec::new() });
        }
        if read_u32(data, 0, "payload").ok() == Some(fatbin::FATBIN_MAGIC) {
            return Module::from_fatbin(&Fatbin::parse(data)?);
        }
        if let Some(sm) = ptx_target(data) {
            return Ok(Module {
                cubins: Vec::new(),
                ptx: alloc::vec![PtxImage { sm, text: until_nul(data).to_owned() }],
            });
        }
        Err(Error::BadMagic {
            what: "payload (neither fatbin, cubin nor PTX)",
            offset: 0,
            found: read_u32(data, 0, "payload").unwrap_or(0),
        })
    }

    /// The images of a fatbin. Entries of unknown kinds are skipped.
    pub fn from_fatbin(fatbin: &Fatbin<'_>) -> Result<Module, Error> {
        let mut module = Module::default();
        for entry in &fatbin.entries {
            match entry.kind {
                EntryKind::Elf => module.cubins.push(Cubin::parse(&entry.payload()?)?),
                EntryKind::Ptx => module.ptx.push(PtxImage { sm: entry.sm, text: entry.ptx_text()? }),
                EntryKind::Other(_) => {}
            }
        }
        Ok(module)
    }

    /// The image to run on `chip`: a cubin for exactly its SM (SASS is not forward compatible
    /// across major versions, and this loader does not rely on minor-version compatibility),
    /// else the PTX with the highest target not above the chip's SM.
    /// The newest PTX image `chip` can run (PTX for an SM at or below the chip's), ignoring
    /// SASS: what a GPU that executes PTX (the GPU model) takes.
    pub fn select_ptx(&self, chip: Chipset) -> Result<Image<'_>, Error> {
        let sm = chip.sm_version();
        match self.ptx.iter().filter(|p| p.sm <= sm).max_by_key(|p| p.sm) {
            Some(ptx) => Ok(Image::Ptx(ptx)),
            None => Err(Error::WrongArchitecture {
                chip,
                sm,
                sass: self.cubins.iter().map(|c| c.sm).collect(),
                ptx: self.ptx.iter().map(|p| p.sm).collect(),
            }),
        }
    }

    pub fn select(&self, chip: Chipset) -> Result<Image<'_>, Error> {
        let sm = chip.sm_version();
        if let Some(cubin) = self.cubins.iter().find(|c| c.sm == sm) {
            return Ok(Image::Sass(cubin));
        }
        if let Some(ptx) = self.ptx.iter().filter(|p| p.sm <= sm).max_by_key(|p| p.sm) {
            return Ok(Image::Ptx(ptx));
        }
        Err(Error::WrongArchitecture {
            chip,
            sm,
            sass: self.cubins.iter().map(|c| c.sm).collect(),
            ptx: self.ptx.iter().map(|p| p.sm).collect(),
        })
    }
}

/// The SM of a PTX text's `.target sm_NN` directive, if it is PTX.
pub fn ptx_target(text: &[u8]) -> Option<u32> {
    let text = core::str::from_utf8(until_nul(text)).ok()?;
    let line = text.lines().map(str::trim).find(|l| l.starts_with(".target"))?;
    let arch = line.strip_prefix(".target")?.trim().split([',', ' ']).next()?;
    let digits: String = arch.strip_prefix("sm_")?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// The bytes before the first NUL (all of them if there is none).
pub(crate) fn until_nul(bytes: &[u8]) -> &[u8] {
    // `split` yields at least one piece, even for an empty slice.
    bytes.split(|&b| b == 0).next().unwrap_or(bytes)
}

/// The `N` bytes at `offset`, or a truncation error naming `what`.
fn array_at<const N: usize>(data: &[u8], offset: usize, what: &'static str) -> Result<[u8; N], Error> {
    offset
        .checked_add(N)
        .and_then(|end| data.get(offset..end))
        .and_then(|b| b.try_into().ok())
        .ok_or(Error::Truncated { what, offset, need: N, have: data.len().saturating_sub(offset) })
}

pub(crate) fn read_u16(data: &[u8], offset: usize, what: &'static str) -> Result<u16, Error> {
    array_at(data, offset, what).map(u16::from_le_bytes)
}

pub(crate) fn read_u32(data: &[u8], offset: usize, what: &'static str) -> Result<u32, Error> {
    array_at(data, offset, what).map(u32::from_le_bytes)
}

pub(crate) fn read_u64(data: &[u8], offset: usize, what: &'static str) -> Result<u64, Error> {
    array_at(data, offset, what).map(u64::from_le_bytes)
}

#[cfg(test)]
mod tests;
