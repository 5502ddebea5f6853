//! Firmware files of the GSP boot: the GSP-RM image (an ELF container, [`GspFirmware`]), the
//! SEC2 booter ucodes ([`BooterFirmware`]) and the GSP RISC-V bootloader
//! ([`BootloaderFirmware`]), and the [`FirmwareBundle`] that finds a chip's files by name.
//!
//! Each parser checks a file the way NVIDIA's 535.261.03 driver checks the same firmware
//! (`src/nvidia/src/kernel/gpu/gsp/kernel_gsp.c`, `kernel_gsp_booter.c`), in the file layouts
//! NVIDIA's `nouveau/extract-firmware-nouveau.py` writes; each file says which source it
//! follows. Firmware is input: anything truncated, corrupt or of another release is a
//! [`FirmwareError`], never a panic. Parsed firmware borrows the file's bytes.
//!
//! Two boot inputs come as plain files only from the project's extractor (`cargo xtask
//! extract-firmware`, which reads RM's compiled-in arrays of the pinned release): NVIDIA's generic
//! falcon bootloader ([`GenericBootloaderFirmware`], Turing and GA100) and Hopper's FSP-side FMC
//! (`GspRmFmcGfw`: image, hash, signature, public key; [`FirmwareBundle::fmc_images`]).
//! Not here: the scrubber ucode.

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod bin_hdr;
mod booter;
mod bootloader;
mod bundle;
mod error;
mod generic_bootloader;
mod gsp;

#[cfg(test)]
mod tests;

use crate::hw::fw::rmflcnbl::RM_FLCN_BL_DESC_SIZE;
pub use bin_hdr::{BinHeader, NVFW_BIN_HDR_SIZE, NVFW_BIN_MAGIC, NVFW_BIN_VERSION};
pub use booter::{
    BooterFirmware, HsHeaderV2, HsLoadHeaderV2, HsPatchMeta, HS_PATCH_META_SIZE, NVFW_HS_HEADER_V2_SIZE,
    NVFW_HS_LOAD_HEADER_V2_SIZE,
};
pub use bootloader::{
    BootloaderFirmware, RiscvUcodeDesc, RM_RISCV_UCODE_DESC_MAX_VERSION, RM_RISCV_UCODE_DESC_SHORT_SIZE,
    RM_RISCV_UCODE_DESC_SIZE,
};
pub use bundle::{
    boot_image_chip, boot_module_name, extra_image_chip, extra_module_name, module_name_for_path, BootImage,
    ExtraImage, FirmwareBundle, FirmwareSourceExt, PINNED_BOOT_FIRMWARE_DIR,
};
pub use error::{FirmwareError, Result};
pub use generic_bootloader::GenericBootloaderFirmware;
pub use gsp::{
    GspElf, GspFirmware, GspSection, GspSignature, GSP_CC_SIGNATURE_SECTION_PREFIX, GSP_IMAGE_SECTION,
    GSP_SIGNATURE_SECTION_PREFIX, GSP_VERSION_SECTION,
};

/// What kind of firmware file some bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirmwareKind {
    /// An ELF file: the GSP-RM container (whether it is a usable one is [`GspElf::parse`]'s call).
    GspElf,
    /// An `nvfw_bin_hdr` file with HS headers: booter_load / booter_unload.
    Booter,
    /// An `nvfw_bin_hdr` file with an `RM_RISCV_UCODE_DESC`: the GSP bootloader.
    Bootloader,
    /// An `nvfw_bin_hdr` file with an `RM_FLCN_BL_DESC`: NVIDIA's generic falcon bootloader.
    GenericBootloader,
}

impl FirmwareKind {
    /// Tells the kind from the bytes. `nvfw_bin_hdr` has no type tag: a header region exactly the
    /// size of an `RM_RISCV_UCODE_DESC` (76 or 84 bytes) is a bootloader, one of an
    /// `RM_FLCN_BL_DESC` (24 bytes) the generic falcon bootloader; an HS header region is
    /// at least 36 + 4 + 4 + 12 + 4 + 36 bytes plus the signatures, so anything else is taken for
    /// an HS ucode (and checked as one).
    pub fn detect(bytes: &[u8]) -> Result<Self> {
        if bytes.is_empty() {
            return Err(FirmwareError::Empty);
        }
        if bytes.starts_with(b"\x7fELF") {
            return Ok(Self::GspElf);
        }
        let mut first = [0u8; 4];
        for (dest, byte) in first.iter_mut().zip(bytes) {
            *dest = *byte;
        }
        let first_word = u32::from_le_bytes(first);
        if first_word != NVFW_BIN_MAGIC {
            return Err(FirmwareError::UnknownFormat { first_word });
        }
        let header = BinHeader::parse(bytes)?;
        let region = header.header_region_size() as usize;
        if region == RM_RISCV_UCODE_DESC_SIZE || region == RM_RISCV_UCODE_DESC_SHORT_SIZE {
            Ok(Self::Bootloader)
        } else if region == RM_FLCN_BL_DESC_SIZE {
            Ok(Self::GenericBootloader)
        } else {
            Ok(Self::Booter)
        }
    }

    /// A short name for tools.
    pub const fn name(self) -> &'static str {
        match self {
            Self::GspElf => "GSP-RM firmware (ELF)",
            Self::Booter => "HS booter ucode (nvfw_bin_hdr + nvfw_hs_header_v2)",
            Self::Bootloader => "GSP bootloader (nvfw_bin_hdr + RM_RISCV_UCODE_DESC)",
            Self::GenericBootloader => "generic falcon bootloader (nvfw_bin_hdr + RM_FLCN_BL_DESC)",
        }
    }
}
