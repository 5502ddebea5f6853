//! NVIDIA's generic falcon bootloader as a file: the loader Turing and GA100 run FWSEC (v2
//! descriptor) through ([`GenericBootloader`], `crate::fwsec::frts`).
//!
//! RM carries it compiled in, never as a file: `ksec2GetBinArchiveBlUcode_TU102`
//! (`src/nvidia/generated/g_bindata_ksec2GetBinArchiveBlUcode_TU102.c`, 535.261.03) holds the
//! image (`ucode_image`, from `g_sec2_bl_gp10x.h`) and its `RM_FLCN_BL_DESC` (`ucode_desc`), and
//! `s_prepareHsFalconWithLoader` (`kernel_gsp_falcon_tu102.c`) loads the first
//! `NV_ALIGN_UP(blCodeSize, 256)` bytes of the image at the top of IMEM, tagged from
//! `blStartTag`. Neither Debian nor nouveau writes it out, so the project's extractor
//! (`cargo xtask extract-firmware`) does, in the same `nvfw_bin_hdr` container as the booters and
//! the GSP bootloader, with `RM_FLCN_BL_DESC` as the type-specific header:
//! ```text
//! 0x00  nvfw_bin_hdr       magic 0x10de, version 1, bin_size (whole file rounded up to 256),
//!                          header_offset 0x18, data_offset 0x30, data_size (image bytes)
//! 0x18  RM_FLCN_BL_DESC    six little-endian words (rmflcnbl.h): blStartTag, blDmemDescLoadOff,
//!                          blImgHeader { blCodeOffset, blCodeSize, blDataOffset, blDataSize }
//! 0x30  image              768 bytes in 535.261.03: 0x200 of code, then 0x100 of data
//! ```
//! A header region of exactly 24 bytes tells this file from the other `nvfw_bin_hdr` kinds (an
//! `RM_RISCV_UCODE_DESC` is 76 or 84 bytes; HS headers are longer still).

use zerocopy::FromBytes;

use super::bin_hdr::BinHeader;
use super::error::{check_within, FirmwareError, Result};
use crate::fwsec::frts::GenericBootloader;
use crate::hw::fw::rmflcnbl::{RmFlcnBlDesc, RM_FLCN_BL_DESC_SIZE};

/// Falcon memory block: the loader's code is loaded in whole 256-byte blocks.
const FALCON_BLOCK: u32 = 256;

/// A parsed and checked generic bootloader file. Borrows the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenericBootloaderFirmware<'a> {
    pub bin: BinHeader,
    pub desc: RmFlcnBlDesc,
    image: &'a [u8],
}

fn bad(field: &'static str, value: u32, expected: &'static str) -> FirmwareError {
    FirmwareError::BadField { structure: "RM_FLCN_BL_DESC", field, value: value.into(), expected }
}

impl<'a> GenericBootloaderFirmware<'a> {
    /// Parses a generic bootloader file: a 24-byte `RM_FLCN_BL_DESC` header region, a non-empty
    /// code part, both parts inside the image, and the whole blocks RM loads inside it too.
    pub fn parse(file: &'a [u8]) -> Result<Self> {
        let bin = BinHeader::parse(file)?;
        let region = bin.header_region(file)?;
        if region.len() != RM_FLCN_BL_DESC_SIZE {
            return Err(FirmwareError::BadField {
                structure: "nvfw_bin_hdr",
                field: "data_offset - header_offset",
                value: region.len() as u64,
                expected: "the size of RM_FLCN_BL_DESC (24 bytes)",
            });
        }
        let desc = RmFlcnBlDesc::read_from_bytes(region).map_err(|_| FirmwareError::Truncated {
            what: "RM_FLCN_BL_DESC",
            offset: bin.header_offset.into(),
            len: RM_FLCN_BL_DESC_SIZE as u64,
            size: file.len() as u64,
        })?;
        let header = desc.bl_img_header;
        if header.bl_code_size == 0 {
            return Err(bad("blImgHeader.blCodeSize", 0, "a non-empty loader"));
        }
        // IMEM tags are 16 bits wide; the loader's blocks follow its start tag.
        if desc.bl_start_tag > 0xffff {
            return Err(bad("blStartTag", desc.bl_start_tag, "an IMEM tag (16 bits)"));
        }
        let image = bin.image(file)?;
        check_within(
            "loader code",
            header.bl_code_offset,
            header.bl_code_size,
            "generic bootloader image",
            image.len(),
        )?;
        check_within(
            "loader data",
            header.bl_data_offset,
            header.bl_data_size,
            "generic bootloader image",
            image.len(),
        )?;
        // RM copies whole blocks from the image's start (`s_prepareHsFalconWithLoader`).
        let loaded = header.bl_code_size.checked_next_multiple_of(FALCON_BLOCK).ok_or(bad(
            "blImgHeader.blCodeSize",
            header.bl_code_size,
            "a size below 4 GiB",
        ))?;
        check_within("loader code blocks", 0, loaded, "generic bootloader image", image.len())?;
        Ok(Self { bin, desc, image })
    }

    /// The image (code, then data).
    pub fn image(&self) -> &'a [u8] {
        self.image
    }

    /// The loader as the FWSEC step takes it.
    pub fn loader(&self) -> GenericBootloader<'a> {
        GenericBootloader { desc: self.desc, image: self.image }
    }
}

#[cfg(test)]
mod tests {
    // Tests index and compute offsets on purpose, over inputs they build themselves.
    #![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use alloc::vec::Vec;

    use super::*;
    use crate::firmware::{module_name_for_path, FirmwareKind, NVFW_BIN_MAGIC};

    /// A file in the extractor's layout: `nvfw_bin_hdr`, the six descriptor words, the image.
    fn file(desc: [u32; 6], image_len: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let total = (48 + image_len as u32).next_multiple_of(256);
        for word in [NVFW_BIN_MAGIC, 1, total, 24, 48, image_len as u32].into_iter().chain(desc) {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.extend((0..image_len).map(|i| i as u8));
        out
    }

    const RM_535: [u32; 6] = [0xfd, 0, 0, 0x200, 0x200, 0x100];

    #[test]
    fn parses_the_extractors_layout() {
        let bytes = file(RM_535, 0x300);
        assert_eq!(FirmwareKind::detect(&bytes), Ok(FirmwareKind::GenericBootloader));
        let parsed = GenericBootloaderFirmware::parse(&bytes).unwrap();
        assert_eq!(parsed.desc, RmFlcnBlDesc::RM_535_SEC2_GP10X);
        assert_eq!(parsed.image().len(), 0x300);
        assert_eq!(parsed.loader().image.first(), Some(&0));
    }

    #[test]
    fn refuses_what_rm_could_not_load() {
        // Code past the image.
        let err = GenericBootloaderFirmware::parse(&file([0xfd, 0, 0, 0x400, 0, 0], 0x300)).unwrap_err();
        assert!(matches!(err, FirmwareError::OutOfRange { what: "loader code", .. }), "{err:?}");
        // Whole blocks of code past the image (0x201 bytes load as 0x300).
        let err = GenericBootloaderFirmware::parse(&file([0xfd, 0, 0, 0x201, 0, 0], 0x280)).unwrap_err();
        assert!(matches!(err, FirmwareError::OutOfRange { what: "loader code blocks", .. }), "{err:?}");
        let err = GenericBootloaderFirmware::parse(&file([0xfd, 0, 0, 0, 0, 0], 0x300)).unwrap_err();
        assert!(matches!(err, FirmwareError::BadField { field: "blImgHeader.blCodeSize", .. }), "{err:?}");
        let err = GenericBootloaderFirmware::parse(&file([0x1_0000, 0, 0, 0x200, 0, 0], 0x300)).unwrap_err();
        assert!(matches!(err, FirmwareError::BadField { field: "blStartTag", .. }), "{err:?}");
        // Another nvfw_bin_hdr kind (a header region of another size).
        let mut other = file(RM_535, 0x300);
        other[16..20].copy_from_slice(&52u32.to_le_bytes());
        other[20..24].copy_from_slice(&0x2fcu32.to_le_bytes());
        let err = GenericBootloaderFirmware::parse(&other).unwrap_err();
        assert!(
            matches!(err, FirmwareError::BadField { field: "data_offset - header_offset", value: 28, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn extracted_paths_have_flat_module_names() {
        for (path, name) in [
            (
                "extracted-535.261.03/nvidia/tu102/gsp/generic_bootloader-535.261.03.bin",
                Some("tu102-generic_bootloader.bin"),
            ),
            ("nvidia/gh100/gsp/fmc_image-535.261.03.bin", Some("gh100-fmc_image.bin")),
            ("nvidia/gh100/gsp/fmc_pkey-535.261.03.bin", Some("gh100-fmc_pkey.bin")),
            ("nvidia/gh100/gsp/bootloader-535.261.03.bin", Some("gh100-bootloader.bin")),
            ("nvidia/ga102/gsp/booter_load-535.261.03.bin", Some("ga102-booter_load.bin")),
            ("nvidia/gh100/gsp/fmc-535.261.03.bin", None),
        ] {
            assert_eq!(module_name_for_path(path).as_deref(), name, "{path}");
        }
    }
}
