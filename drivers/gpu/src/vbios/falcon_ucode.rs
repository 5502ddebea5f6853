//! The falcon ucode table (NVIDIA: "PMU lookup table"), reached from the BIT falcon data token.
//!
//! Layouts and the rules for accepting them (`BIT_DATA_FALCON_DATA_V2`,
//! `FALCON_UCODE_TABLE_HDR_V1`, `FALCON_UCODE_TABLE_ENTRY_V1`, application ids) follow
//! `src/nvidia/src/kernel/gpu/gsp/kernel_gsp_fwsec.c`, `s_vbiosParseFwsecUcodeDescFromBit`.
//! The table pointer and the descriptor pointers count from the expansion ROM offset (see
//! [`super::Vbios::expansion_rom_offset`]), not from the start of the ROM.

use alloc::vec::Vec;

use super::bit::BitTable;
use super::error::{Result, VbiosError};
use super::source::{check_range, struct_at};
use crate::hw::vbios::{
    BitDataFalconDataV2, FalconUcodeTableEntryV1, FalconUcodeTableHdrV1, BIT_DATA_FALCON_DATA_V2_SIZE_4,
    BIT_DATA_FALCON_DATA_VERSION_2, BIT_TOKEN_FALCON_DATA, FALCON_UCODE_ENTRY_APPID_FIRMWARE_SEC_LIC,
    FALCON_UCODE_ENTRY_APPID_FWSEC_DBG, FALCON_UCODE_ENTRY_APPID_FWSEC_PROD, FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6,
    FALCON_UCODE_TABLE_HDR_V1_SIZE_6, FALCON_UCODE_TABLE_HDR_V1_VERSION,
};

/// One entry of the falcon ucode table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FalconUcodeEntry {
    /// Position in the table.
    pub index: u8,
    /// Which application the ucode is (see [`FALCON_UCODE_ENTRY_APPID_FWSEC_PROD`] and friends); 0 marks an
    /// unused slot.
    pub application_id: u8,
    /// Which falcon it runs on (a VBIOS-internal numbering, kept raw).
    pub target_id: u8,
    /// The descriptor pointer as stored (relative to the expansion ROM offset).
    pub desc_ptr: u32,
    /// ROM offset of the descriptor; `None` when the pointer overflows.
    pub desc_offset: Option<u32>,
}

impl FalconUcodeEntry {
    /// NVIDIA's name for the application id, where `kernel_gsp_fwsec.c` gives one.
    pub fn application_name(&self) -> Option<&'static str> {
        match self.application_id {
            FALCON_UCODE_ENTRY_APPID_FIRMWARE_SEC_LIC => Some("FIRMWARE_SEC_LIC"),
            FALCON_UCODE_ENTRY_APPID_FWSEC_DBG => Some("FWSEC_DBG"),
            FALCON_UCODE_ENTRY_APPID_FWSEC_PROD => Some("FWSEC_PROD"),
            _ => None,
        }
    }
}

/// The falcon ucode table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FalconUcodeTable {
    /// ROM offset of the falcon data token's data (which holds the table pointer).
    pub falcon_data_offset: u32,
    /// The table pointer as stored (relative to the expansion ROM offset).
    pub table_ptr: u32,
    /// ROM offset of the table header.
    pub offset: u32,
    /// Header version (1).
    pub version: u8,
    /// Header size in bytes.
    pub header_size: u8,
    /// Entry size in bytes.
    pub entry_size: u8,
    /// Descriptor version the header announces (informational; each descriptor says its own).
    pub desc_version: u8,
    /// Descriptor size the header announces (informational).
    pub desc_size: u8,
    /// The entries in table order.
    pub entries: Vec<FalconUcodeEntry>,
}

impl FalconUcodeTable {
    /// Reads the table through the BIT falcon data token: the first 'p' token of data version 2
    /// and at least 4 bytes whose table has a version-1 header, as NVIDIA's driver picks it.
    pub fn find(rom: &[u8], bit: &BitTable, expansion_rom_offset: u32) -> Result<Self> {
        let mut last_error = VbiosError::NoFalconData;
        for token in bit.tokens.iter().filter(|t| {
            t.id == BIT_TOKEN_FALCON_DATA
                && t.data_version == BIT_DATA_FALCON_DATA_VERSION_2
                && t.data_size >= BIT_DATA_FALCON_DATA_V2_SIZE_4
        }) {
            match Self::read(rom, token.data_offset, expansion_rom_offset) {
                Ok(table) => return Ok(table),
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    fn read(rom: &[u8], falcon_data_offset: u32, expansion_rom_offset: u32) -> Result<Self> {
        let size = u32::try_from(rom.len()).unwrap_or(u32::MAX);
        let falcon_data: BitDataFalconDataV2 = struct_at(rom, "falcon data", falcon_data_offset)?;
        let table_ptr = falcon_data.falcon_ucode_table_ptr.get();
        let offset = table_ptr.checked_add(expansion_rom_offset).ok_or(VbiosError::Truncated {
            what: "falcon ucode table",
            offset: u32::MAX,
            len: 0,
            size,
        })?;
        let header: FalconUcodeTableHdrV1 = struct_at(rom, "falcon ucode table header", offset)?;
        if header.version != FALCON_UCODE_TABLE_HDR_V1_VERSION
            || header.header_size < FALCON_UCODE_TABLE_HDR_V1_SIZE_6
            || header.entry_size < FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6
        {
            return Err(VbiosError::BadFalconUcodeTable {
                offset,
                version: header.version,
                header_size: header.header_size,
                entry_size: header.entry_size,
            });
        }
        let first = offset.saturating_add(u32::from(header.header_size));
        // At most 255 × 255 bytes: the product never saturates.
        let table_len = u32::from(header.entry_size).saturating_mul(u32::from(header.entry_count));
        check_range("falcon ucode table", first, table_len, size)?;

        let mut entries = Vec::with_capacity(usize::from(header.entry_count));
        for index in 0..header.entry_count {
            // Inside the range checked above, so nothing saturates; were it to, the read below
            // would fail its bounds check.
            let at = first.saturating_add(u32::from(index).saturating_mul(u32::from(header.entry_size)));
            let raw: FalconUcodeTableEntryV1 = struct_at(rom, "falcon ucode table entry", at)?;
            let desc_ptr = raw.desc_ptr.get();
            entries.push(FalconUcodeEntry {
                index,
                application_id: raw.application_id,
                target_id: raw.target_id,
                desc_ptr,
                desc_offset: desc_ptr.checked_add(expansion_rom_offset),
            });
        }
        Ok(Self {
            falcon_data_offset,
            table_ptr,
            offset,
            version: header.version,
            header_size: header.header_size,
            entry_size: header.entry_size,
            desc_version: header.desc_version,
            desc_size: header.desc_size,
            entries,
        })
    }
}
