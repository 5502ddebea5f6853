//! The fatbin container: the `.nv_fatbin` section of a CUDA host object, or a standalone
//! `.fatbin` file, as NVIDIA's fatbin writers (`fatbinary`, libnvfatbin) lay it out.
//!
//! Sources. `fatbinary_section.h` (CUDA 12.9, in the PyPI wheel `nvidia-cuda-nvcc-cu12`
//! 12.9.86) names the data section (`FATBIN_DATA_SECTION_NAME` ".nv_fatbin") and the host
//! wrapper's magic (`FATBINC_MAGIC` 0x466243B1); NVIDIA publishes no header for the container
//! itself. Its layout below is what libnvfatbin 12.9 (`nvidia-nvfatbin-cu12` 12.9.82) writes and
//! what `cuobjdump` 13.4 reads back; `tests/tests/payload_real.rs` builds fatbins with
//! libnvfatbin at test time and checks every field decoded here against the inputs and
//! against cuobjdump's listing.
//!
//! ```text
//! container header, 16 bytes:  u32 magic 0xBA55ED50 | u16 version (1) | u16 header size (16)
//!                              | u64 size of the entries that follow
//! entry header (>= 64 bytes):  0x00 u16 kind (1 PTX, 2 ELF) | 0x02 u16 entry format (0x0101)
//!                              0x04 u32 header size (entry start to payload)
//!                              0x08 u64 payload size (padded to 8)
//!                              0x10 u32 compressed size (0 when not compressed)
//!                              0x14 u32 PTX: offset of the JIT options descriptor, else 0
//!                              0x18 u16 minor | 0x1a u16 major: PTX ISA version, or for ELF
//!                                       the cubin's ELF ABI version (1.7, 1.8)
//!                              0x1c u32 SM (90 for sm_90)
//!                              0x20 u32 name offset | 0x24 u32 name length (from entry start)
//!                              0x28 u64 flags (see [`EntryFlags`])
//!                              0x30 u64 reserved (0)
//!                              0x38 u64 uncompressed size (when compressed)
//! ```
//! Entries follow each other inside the container; several containers may follow each other in
//! one section (each starts at an 8-byte boundary, zero padding between them).
//!
//! Compression: with `-compress-all` (the default mode) payloads are one LZ4 block (flag
//! 0x2000), decoded here with `lz4_flex` into exactly the declared uncompressed size;
//! `-compress-mode=size` uses Zstandard (flag 0x8000, frames begin 28 B5 2F FD), which this
//! parser reports as [`Error::UnsupportedCompression`] rather than guessing.

use alloc::borrow::Cow;
use alloc::vec;
use alloc::vec::Vec;

use super::{read_u16, read_u32, read_u64, Error};

/// `FATBIN_DATA_SECTION_NAME` of `fatbinary_section.h`: the host object's section holding the
/// container.
pub const FATBIN_DATA_SECTION_NAME: &str = ".nv_fatbin";
/// `FATBINC_MAGIC` of `fatbinary_section.h`: the host-side wrapper (`__fatBinC_Wrapper_t`) that
/// points at the container, not the container itself.
pub const FATBINC_MAGIC: u32 = 0x4662_43B1;
/// The container's magic.
pub const FATBIN_MAGIC: u32 = 0xBA55_ED50;
/// The container version libnvfatbin writes.
pub const FATBIN_VERSION: u16 = 1;
/// Size of the container header.
pub const FATBIN_HEADER_SIZE: usize = 16;
/// Smallest entry header: every field above, up to the uncompressed size.
pub const ENTRY_HEADER_MIN_SIZE: usize = 0x40;

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// PTX text (NUL-terminated).
    Ptx,
    /// A cubin (ELF, EM_CUDA).
    Elf,
    /// A kind this parser does not know (kept, never an error: LTO-IR and index entries exist).
    Other(u16),
}

impl EntryKind {
    /// The kind field's value for PTX.
    pub const PTX: u16 = 1;
    /// The kind field's value for ELF.
    pub const ELF: u16 = 2;

    fn from_raw(raw: u16) -> Self {
        match raw {
            Self::PTX => EntryKind::Ptx,
            Self::ELF => EntryKind::Elf,
            other => EntryKind::Other(other),
        }
    }
}

/// An entry's flags word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryFlags(pub u64);

impl EntryFlags {
    /// The image is for 64-bit addressing (libnvfatbin option `-64`).
    pub const ADDRESS_64: u64 = 0x1;
    /// Host OS is Linux (libnvfatbin option `-host=linux`, the default there).
    pub const HOST_LINUX: u64 = 0x10;
    /// The payload is one LZ4 block (`-compress-all`, mode default/speed/balance).
    pub const COMPRESSED_LZ4: u64 = 0x2000;
    /// The payload is a Zstandard frame (`-compress-all -compress-mode=size`).
    pub const COMPRESSED_ZSTD: u64 = 0x8000;

    /// Whether every bit of `mask` is set.
    pub const fn contains(self, mask: u64) -> bool {
        self.0 & mask == mask
    }
}

/// How an entry's payload is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Lz4,
    Zstd,
}

/// One image in a fatbin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Position in the file (entries numbered across containers), for errors.
    pub index: usize,
    pub kind: EntryKind,
    /// SM the image is for (`75`, `90`, `100`...).
    pub sm: u32,
    /// PTX ISA version (PTX) or ELF ABI version (ELF), as (major, minor).
    pub version: (u16, u16),
    pub flags: EntryFlags,
    /// The identifier the writer was given (a file name), without its NUL.
    pub name: &'a [u8],
    pub compression: Compression,
    /// The stored payload (compressed when [`Entry::compression`] says so), padding included.
    pub stored: &'a [u8],
    /// Size of the payload once uncompressed (the stored size when not compressed).
    pub uncompressed_size: u64,
}

impl<'a> Entry<'a> {
    /// The payload, uncompressed. LZ4 is decoded into exactly `uncompressed_size` bytes;
    /// anything else is an error.
    pub fn payload(&self) -> Result<Cow<'a, [u8]>, Error> {
        match self.compression {
            Compression::None => Ok(Cow::Borrowed(self.stored)),
            Compression::Zstd => Err(Error::UnsupportedCompression { entry: self.index, codec: "zstd" }),
            Compression::Lz4 => {
                let size = usize::try_from(self.uncompressed_size).map_err(|_| Error::Corrupt {
                    what: "fatbin entry",
                    detail: "uncompressed size does not fit in memory",
                })?;
                // A bound against absurd sizes in corrupt headers: LZ4 expands at most ~255x.
                // (A slice is shorter than `isize::MAX`: the add never saturates.)
                if size / 255 > self.stored.len().saturating_add(1) {
                    return Err(Error::Corrupt {
                        what: "fatbin entry",
                        detail: "uncompressed size beyond what LZ4 can expand to",
                    });
                }
                let mut out = vec![0u8; size];
                match lz4_flex::block::decompress_into(self.stored, &mut out) {
                    Ok(n) if n == size => Ok(Cow::Owned(out)),
                    Ok(_) => {
                        Err(Error::Decompress { entry: self.index, detail: "LZ4 block shorter than the declared size" })
                    }
                    Err(_) => Err(Error::Decompress { entry: self.index, detail: "corrupt LZ4 block" }),
                }
            }
        }
    }

    /// The PTX text of a PTX entry, up to its terminating NUL.
    pub fn ptx_text(&self) -> Result<Vec<u8>, Error> {
        if self.kind != EntryKind::Ptx {
            return Err(Error::Corrupt { what: "fatbin entry", detail: "not a PTX entry" });
        }
        let payload = self.payload()?;
        Ok(super::until_nul(&payload).to_vec())
    }
}

/// A parsed fatbin: every entry of every container in the input, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatbin<'a> {
    pub entries: Vec<Entry<'a>>,
}

impl<'a> Fatbin<'a> {
    /// Parses one or more consecutive containers (a `.nv_fatbin` section or a `.fatbin` file).
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        let mut entries = Vec::new();
        // `pos` stays inside `data` in the loop (each container's end is checked against it),
        // so the saturating adds to it below never saturate; were they to, the read would fail.
        let mut pos = 0usize;
        let mut any_container = false;
        while let Some(rest) = data.get(pos..).filter(|rest| !rest.is_empty()) {
            // Zero padding between (or after) containers.
            if rest.iter().all(|&b| b == 0) && any_container {
                break;
            }
            let magic = read_u32(data, pos, "fatbin header")?;
            if magic != FATBIN_MAGIC {
                return Err(if magic == FATBINC_MAGIC {
                    Error::Corrupt {
                        what: "fatbin header",
                        detail:
                            "this is the host wrapper (__fatBinC_Wrapper_t, FATBINC_MAGIC), not the .nv_fatbin data",
                    }
                } else {
                    Error::BadMagic { what: "fatbin header", offset: pos, found: magic }
                });
            }
            let version = read_u16(data, pos.saturating_add(4), "fatbin header")?;
            if version != FATBIN_VERSION {
                return Err(Error::UnsupportedVersion { what: "fatbin container", version: version.into() });
            }
            let header_size = usize::from(read_u16(data, pos.saturating_add(6), "fatbin header")?);
            if header_size < FATBIN_HEADER_SIZE {
                return Err(Error::Corrupt { what: "fatbin header", detail: "header size below 16" });
            }
            let body_size = read_u64(data, pos.saturating_add(8), "fatbin header")?;
            let body_start = pos
                .checked_add(header_size)
                .ok_or(Error::Corrupt { what: "fatbin header", detail: "size overflows" })?;
            let body_end = usize::try_from(body_size)
                .ok()
                .and_then(|s| body_start.checked_add(s))
                .ok_or(Error::Corrupt { what: "fatbin header", detail: "size overflows" })?;
            if body_end > data.len() {
                return Err(Error::Truncated {
                    what: "fatbin container",
                    offset: pos,
                    need: body_end.saturating_sub(pos),
                    have: data.len().saturating_sub(pos),
                });
            }
            let mut at = body_start;
            while at < body_end {
                let entry = parse_entry(data, at, body_end, entries.len())?;
                at = entry.1;
                entries.push(entry.0);
            }
            any_container = true;
            // The next container starts at an 8-byte boundary.
            pos = body_end
                .checked_next_multiple_of(8)
                .ok_or(Error::Corrupt { what: "fatbin header", detail: "size overflows" })?;
        }
        if !any_container {
            return Err(Error::Truncated {
                what: "fatbin header",
                offset: 0,
                need: FATBIN_HEADER_SIZE,
                have: data.len(),
            });
        }
        Ok(Fatbin { entries })
    }
}

/// Parses the entry at `at` (inside a container ending at `end`); returns it and where the next
/// one starts.
fn parse_entry(data: &[u8], at: usize, end: usize, index: usize) -> Result<(Entry<'_>, usize), Error> {
    let what = "fatbin entry header";
    // The caller checked the container's end against the input.
    let body = data.get(..end).ok_or(Error::Truncated {
        what: "fatbin container",
        offset: at,
        need: end.saturating_sub(at),
        have: data.len().saturating_sub(at),
    })?;
    // `at` is below `end`; a saturated field offset fails its read like any other past the end.
    let field = |offset: usize| at.saturating_add(offset);
    let kind = EntryKind::from_raw(read_u16(body, at, what)?);
    let header_size = read_u32(body, field(0x04), what)? as usize;
    if header_size < ENTRY_HEADER_MIN_SIZE {
        return Err(Error::Corrupt { what, detail: "entry header smaller than 64 bytes" });
    }
    let payload_size = read_u64(body, field(0x08), what)?;
    let compressed_size = read_u32(body, field(0x10), what)?;
    let minor = read_u16(body, field(0x18), what)?;
    let major = read_u16(body, field(0x1a), what)?;
    let sm = read_u32(body, field(0x1c), what)?;
    let name_offset = read_u32(body, field(0x20), what)? as usize;
    let name_len = read_u32(body, field(0x24), what)? as usize;
    let flags = EntryFlags(read_u64(body, field(0x28), what)?);
    let uncompressed = read_u64(body, field(0x38), what)?;

    let overflow = Error::Corrupt { what, detail: "sizes overflow" };
    let payload_start = at.checked_add(header_size).ok_or(overflow.clone())?;
    let payload_end =
        usize::try_from(payload_size).ok().and_then(|s| payload_start.checked_add(s)).ok_or(overflow.clone())?;
    let truncated = Error::Truncated {
        what: "fatbin entry payload",
        offset: at,
        need: payload_end.saturating_sub(at),
        have: end.saturating_sub(at),
    };
    if payload_end > end {
        return Err(truncated);
    }
    let payload = body.get(payload_start..payload_end).ok_or(truncated)?;
    let name = if name_len == 0 {
        &[][..]
    } else {
        let start = at.checked_add(name_offset).ok_or(overflow.clone())?;
        let stop = start.checked_add(name_len).ok_or(overflow)?;
        let outside = Error::Corrupt { what, detail: "name outside the entry header" };
        if name_offset < ENTRY_HEADER_MIN_SIZE || stop > payload_start {
            return Err(outside);
        }
        data.get(start..stop).ok_or(outside)?
    };
    let compression = match (flags.contains(EntryFlags::COMPRESSED_LZ4), flags.contains(EntryFlags::COMPRESSED_ZSTD)) {
        (false, false) => Compression::None,
        (true, false) => Compression::Lz4,
        (false, true) => Compression::Zstd,
        (true, true) => return Err(Error::Corrupt { what, detail: "both LZ4 and Zstandard flags set" }),
    };
    let (stored, uncompressed_size) = match compression {
        Compression::None => (payload, payload_size),
        _ => {
            let stored = payload
                .get(..compressed_size as usize)
                .ok_or(Error::Corrupt { what, detail: "compressed size larger than the payload" })?;
            (stored, uncompressed)
        }
    };
    let entry = Entry { index, kind, sm, version: (major, minor), flags, name, compression, stored, uncompressed_size };
    Ok((entry, payload_end))
}
