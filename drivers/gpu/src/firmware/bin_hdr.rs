//! `nvfw_bin_hdr`: the 24-byte header in front of the booter and GSP bootloader files.
//!
//! NVIDIA's driver carries these ucodes compiled in (`src/nvidia/generated/g_bindata_kgspGetBinArchive*`),
//! not as files; the file form is the one NVIDIA's own `nouveau/extract-firmware-nouveau.py`
//! (535.261.03) writes for Linux distributions, and `nouveau/nouveau_firmware_layout.ods` in the
//! same tree names its fields. Each file is: this header at offset 0, a type-specific header at
//! `header_offset`, and the ucode image (`data_size` bytes at `data_offset`). All fields are
//! little-endian 32-bit words; the header carries no type tag.

use core::mem::size_of;

use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::error::{slice, struct_at, FirmwareError, Result};

/// `nvfw_bin_hdr.bin_magic` (`extract-firmware-nouveau.py`: `struct.pack("<6L", 0x10de, 1, ...)`).
pub const NVFW_BIN_MAGIC: u32 = 0x10de;
/// `nvfw_bin_hdr.bin_ver`: the only version the extraction script writes.
pub const NVFW_BIN_VERSION: u32 = 1;
/// `sizeof(nvfw_bin_hdr)`: six 32-bit words.
pub const NVFW_BIN_HDR_SIZE: usize = 24;

#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct BinHdrRaw {
    bin_magic: U32,
    bin_ver: U32,
    bin_size: U32,
    header_offset: U32,
    data_offset: U32,
    data_size: U32,
}

const _: () = assert!(size_of::<BinHdrRaw>() == NVFW_BIN_HDR_SIZE);

/// A checked `nvfw_bin_hdr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinHeader {
    /// `bin_magic`: [`NVFW_BIN_MAGIC`].
    pub magic: u32,
    /// `bin_ver`: [`NVFW_BIN_VERSION`].
    pub version: u32,
    /// `bin_size`: the whole image size rounded up to 256 bytes. The extraction script does not
    /// pad the file to it, so real files are up to 255 bytes shorter; nothing reads past the image.
    pub bin_size: u32,
    /// `header_offset`: where the type-specific header starts.
    pub header_offset: u32,
    /// `data_offset`: where the ucode image starts.
    pub data_offset: u32,
    /// `data_size`: the ucode image's size.
    pub data_size: u32,
}

impl BinHeader {
    /// Reads and checks the header at offset 0 of `file`: magic, version, a header region that
    /// starts after this header and ends where the image starts, and an image inside the file.
    pub fn parse(file: &[u8]) -> Result<Self> {
        if file.is_empty() {
            return Err(FirmwareError::Empty);
        }
        // The magic first, so a foreign file shorter than the header is called foreign.
        if let Some(word) = file.first_chunk::<4>() {
            let magic = u32::from_le_bytes(*word);
            if magic != NVFW_BIN_MAGIC {
                return Err(FirmwareError::BadBinMagic { found: magic });
            }
        }
        let raw: BinHdrRaw = struct_at(file, "nvfw_bin_hdr", 0)?;
        let header = BinHeader {
            magic: raw.bin_magic.get(),
            version: raw.bin_ver.get(),
            bin_size: raw.bin_size.get(),
            header_offset: raw.header_offset.get(),
            data_offset: raw.data_offset.get(),
            data_size: raw.data_size.get(),
        };
        if header.magic != NVFW_BIN_MAGIC {
            return Err(FirmwareError::BadBinMagic { found: header.magic });
        }
        if header.version != NVFW_BIN_VERSION {
            return Err(FirmwareError::UnsupportedBinVersion { version: header.version });
        }
        if (header.header_offset as usize) < NVFW_BIN_HDR_SIZE {
            return Err(FirmwareError::BadField {
                structure: "nvfw_bin_hdr",
                field: "header_offset",
                value: header.header_offset.into(),
                expected: "an offset after the 24-byte nvfw_bin_hdr",
            });
        }
        if header.data_offset < header.header_offset {
            return Err(FirmwareError::BadField {
                structure: "nvfw_bin_hdr",
                field: "data_offset",
                value: header.data_offset.into(),
                expected: "an offset after header_offset (the headers precede the image)",
            });
        }
        if header.data_size == 0 {
            return Err(FirmwareError::BadField {
                structure: "nvfw_bin_hdr",
                field: "data_size",
                value: 0,
                expected: "a non-empty ucode image",
            });
        }
        header.image(file)?;
        Ok(header)
    }

    /// The ucode image: `data_size` bytes at `data_offset`.
    pub fn image<'a>(&self, file: &'a [u8]) -> Result<&'a [u8]> {
        slice(file, "ucode image", self.data_offset.into(), self.data_size.into())
    }

    /// The bytes between `header_offset` and `data_offset`: the type-specific headers.
    pub fn header_region<'a>(&self, file: &'a [u8]) -> Result<&'a [u8]> {
        slice(
            file,
            "headers",
            self.header_offset.into(),
            u64::from(self.data_offset.saturating_sub(self.header_offset)),
        )
    }

    /// Size of the header region.
    pub const fn header_region_size(&self) -> u32 {
        self.data_offset.saturating_sub(self.header_offset)
    }
}
