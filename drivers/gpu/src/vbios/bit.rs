//! The BIOS Information Table (BIT): a header found by signature, then a list of tokens, each
//! pointing at a block of data in the ROM.
//!
//! Layouts (`BIT_HEADER_V1_00`, `BIT_TOKEN_V1_00`, the checksum rule) follow
//! `src/nvidia/src/kernel/gpu/gsp/kernel_gsp_fwsec.c`; the BIOSDATA layout follows
//! `BIT_DATA_BIOSDATA_V1/V2` in `src/common/nvswitch/kernel/inc/rom_nvswitch.h`. Token data
//! pointers are ROM offsets.

use alloc::vec::Vec;
use core::fmt;
use core::mem::offset_of;

use zerocopy::byteorder::little_endian::U32;

use super::error::{Result, VbiosError};
use super::source::{check_range, slice, struct_at};
use crate::hw::vbios::{
    BitDataBiosdataBinver, BitHeaderV1, BitTokenV1, BIT_DATA_BIOSDATA_BINVER_SIZE_5, BIT_HEADER_ID,
    BIT_HEADER_SIGNATURE, BIT_HEADER_SIZE_OFFSET, BIT_HEADER_V1_00_SIZE, BIT_TOKEN_BIOSDATA, BIT_TOKEN_FALCON_DATA,
    BIT_TOKEN_V1_00_SIZE_6, BIT_TOKEN_V1_00_SIZE_8,
};

/// The 6 bytes that start every BIT header: [`BIT_HEADER_ID`] then [`BIT_HEADER_SIGNATURE`],
/// little-endian.
const BIT_MAGIC: [u8; 6] = {
    let [i0, i1] = BIT_HEADER_ID.to_le_bytes();
    let [s0, s1, s2, s3] = BIT_HEADER_SIGNATURE.to_le_bytes();
    [i0, i1, s0, s1, s2, s3]
};

/// One BIT token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitToken {
    /// ROM offset of the token itself.
    pub offset: u32,
    /// Token id (an ASCII letter by convention).
    pub id: u8,
    /// Version of the data block's layout.
    pub data_version: u8,
    /// Size of the data block in bytes.
    pub data_size: u16,
    /// ROM offset of the data block.
    pub data_offset: u32,
}

impl BitToken {
    /// NVIDIA's (or, where NVIDIA publishes none, nouveau's) name for this token id.
    pub fn name(&self) -> Option<&'static str> {
        token_name(self.id)
    }
}

/// Names of the token ids whose meaning is published.
pub fn token_name(id: u8) -> Option<&'static str> {
    Some(match id {
        // kernel_gsp_fwsec.c (both), rom_nvswitch.h ('B')
        BIT_TOKEN_BIOSDATA => "BIOSDATA",
        BIT_TOKEN_FALCON_DATA => "FALCON_DATA",
        // src/common/nvswitch/kernel/inc/rom_nvswitch.h: NVSWITCH_BIT_TOKEN_*
        0x43 => "CLOCK_PTRS",
        0x49 => "NVINIT_PTRS",
        0x4E => "NOP",
        0x50 => "PERF_PTRS",
        0x52 => "BRIDGE_FW_DATA",
        0x6E => "DCB_PTRS",
        // NVIDIA's Tegra nvgpu driver, common/vbios/bios.c: TOKEN_ID_MEMORY_PTRS, _VIRT_PTRS
        0x4D => "MEMORY_PTRS",
        0x56 => "VIRT_PTRS",
        // nouveau nvkm/subdev/bios: disp.c ('U'), dp.c ('d'), mxm.c ('x'), base.c ('i', whose
        // data nouveau reads its version from)
        0x55 => "DISPLAY_PTRS",
        0x64 => "DP_PTRS",
        0x78 => "MXM",
        0x69 => "INTERNAL_USE",
        _ => return None,
    })
}

/// The BIT header and its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitTable {
    /// ROM offset of the header (its 0xFF 0xB8 bytes).
    pub offset: u32,
    /// BIT version in BCD (0x0100 = 1.00).
    pub bcd_version: u16,
    /// Header size in bytes.
    pub header_size: u8,
    /// Size of each token in bytes.
    pub token_size: u8,
    /// The tokens in table order.
    pub tokens: Vec<BitToken>,
}

impl BitTable {
    /// Finds the BIT header in `rom` and reads its tokens.
    ///
    /// The first "\xFF\xB8BIT\0" whose `HeaderSize` bytes sum to 0 mod 256 wins, as in
    /// `s_vbiosFindBitHeader`; candidates that fail the checksum (or run off the end) are skipped.
    pub fn find(rom: &[u8]) -> Result<Self> {
        let offset = find_header(rom).ok_or(VbiosError::NoBitHeader)?;
        let raw: BitHeaderV1 = struct_at(rom, "BIT header", offset)?;
        if raw.header_size < BIT_HEADER_V1_00_SIZE || raw.token_size < BIT_TOKEN_V1_00_SIZE_6 {
            return Err(VbiosError::BadBitHeader { offset, header_size: raw.header_size, token_size: raw.token_size });
        }
        let first = offset.saturating_add(u32::from(raw.header_size));
        // At most 255 × 255 bytes: the product never saturates.
        let table_len = u32::from(raw.token_size).saturating_mul(u32::from(raw.token_entries));
        let size = u32::try_from(rom.len()).unwrap_or(u32::MAX);
        check_range("BIT token table", first, table_len, size)?;

        let mut tokens = Vec::with_capacity(usize::from(raw.token_entries));
        for index in 0..u32::from(raw.token_entries) {
            // Inside the table checked above, so nothing saturates; were it to, the read below
            // would fail its bounds check.
            let at = first.saturating_add(index.saturating_mul(u32::from(raw.token_size)));
            // The 6-byte token's fields; an 8-byte one widens only the data pointer.
            let token: BitTokenV1 = struct_at(rom, "BIT token", at)?;
            let pointer_at = at.saturating_add(offset_of!(BitTokenV1, data_ptr) as u32);
            let data_offset = if raw.token_size >= BIT_TOKEN_V1_00_SIZE_8 {
                struct_at::<U32>(rom, "BIT token", pointer_at)?.get()
            } else {
                u32::from(token.data_ptr.get())
            };
            tokens.push(BitToken {
                offset: at,
                id: token.id,
                data_version: token.data_version,
                data_size: token.data_size.get(),
                data_offset,
            });
        }
        Ok(Self {
            offset,
            bcd_version: raw.bcd_version.get(),
            header_size: raw.header_size,
            token_size: raw.token_size,
            tokens,
        })
    }

    /// The first token with `id`.
    pub fn token(&self, id: u8) -> Option<&BitToken> {
        self.tokens.iter().find(|t| t.id == id)
    }
}

fn find_header(rom: &[u8]) -> Option<u32> {
    // Every position of the magic, in order; the first whose checksum holds wins. A candidate
    // too far in for its size byte (or a u32 offset) rules out every later one too.
    rom.windows(BIT_MAGIC.len()).enumerate().filter(|(_, w)| *w == BIT_MAGIC).find_map(|(at, _)| {
        let offset = u32::try_from(at).ok()?;
        let header_size = *rom.get(at.checked_add(BIT_HEADER_SIZE_OFFSET as usize)?)?;
        let bytes = slice(rom, "BIT header", offset, u32::from(header_size)).ok()?;
        // The checksum is a byte sum mod 256.
        let sum = bytes.iter().fold(0u8, |acc, b| acc.wrapping_add(*b));
        (header_size > 0 && sum == 0).then_some(offset)
    })
}

/// The VBIOS version from the BIOSDATA token: `Version` 0x95063440 with `OemVersion` 0x38 reads
/// "95.06.34.40.38", as NVIDIA's tools print it (the byte order of `rom_nvswitch.h`'s example
/// "5.40.00.01.12 = 0x05400001").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BiosVersion {
    /// `BIT_DATA_BIOSDATA.Version`.
    pub version: u32,
    /// `BIT_DATA_BIOSDATA.OemVersion`.
    pub oem: u8,
}

impl BiosVersion {
    /// Reads the version from the BIOSDATA token: data version 1 or 2 and more than 5 bytes, as
    /// `s_vbiosParseFwsecUcodeDescFromBit` (535.261.03) accepts it. `None` when the BIT has no
    /// such token.
    pub fn from_bit(rom: &[u8], bit: &BitTable) -> Result<Option<Self>> {
        let Some(token) = bit.tokens.iter().find(|t| {
            t.id == BIT_TOKEN_BIOSDATA
                && matches!(t.data_version, 1 | 2)
                && t.data_size > BIT_DATA_BIOSDATA_BINVER_SIZE_5
        }) else {
            return Ok(None);
        };
        let binver: BitDataBiosdataBinver = struct_at(rom, "BIOSDATA", token.data_offset)?;
        Ok(Some(Self { version: binver.version.get(), oem: binver.oem_version }))
    }
}

impl fmt::Display for BiosVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [b0, b1, b2, b3] = self.version.to_le_bytes();
        write!(f, "{b3:02X}.{b2:02X}.{b1:02X}.{b0:02X}.{:02X}", self.oem)
    }
}
