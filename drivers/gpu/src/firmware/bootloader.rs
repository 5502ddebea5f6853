//! The GSP RISC-V bootloader file (`bootloader-<version>.bin`): the boot ucode the GSP's RISC-V
//! core runs first, which then loads GSP-RM from the radix3-described `.fwimage`. On Hopper the
//! same slot holds the GSP-FMC.
//!
//! File layout (`nouveau/extract-firmware-nouveau.py`, `bootloader()`, 535.261.03): the
//! `nvfw_bin_hdr`, then `RM_RISCV_UCODE_DESC` at `header_offset`, then the image at
//! `data_offset`. The descriptor is
//! `src/nvidia/arch/nvalloc/common/inc/rmRiscvUcode.h` (535.261.03): 21 words, 84 bytes.
//! Older builds of it stop after `swbromDataSize` (19 words, 76 bytes, no `fbReservedSize` and
//! `bSignedAsCode`): NVIDIA's 535.261.03 archive itself carries such 76-byte version-4
//! descriptors for TU102 and GA100 (`src/nvidia/generated/g_bindata_kgspGetBinArchiveGspRmBoot_TU102.c`,
//! `DATA SIZE (bytes): 76`), and so do the Debian files. The descriptor's size is the gap
//! between `header_offset` and `data_offset`.
//!
//! The driver uses `appVersion` (written to `NV_PFALCON_FALCON_OS`, `kernel_gsp_ga102.c`) and
//! the monitor code, data and manifest offsets (copied into `GspFwWprMeta`,
//! `kgspCalculateFbLayout_TU102` in `kernel_gsp_tu102.c`).

use core::mem::{offset_of, size_of};

use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::bin_hdr::BinHeader;
use super::error::{check_within, FirmwareError, Result};

#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RiscvUcodeDescRaw {
    version: U32,
    bootloader_offset: U32,
    bootloader_size: U32,
    bootloader_param_offset: U32,
    bootloader_param_size: U32,
    riscv_elf_offset: U32,
    riscv_elf_size: U32,
    app_version: U32,
    manifest_offset: U32,
    manifest_size: U32,
    monitor_data_offset: U32,
    monitor_data_size: U32,
    monitor_code_offset: U32,
    monitor_code_size: U32,
    is_monitor_enabled: U32,
    swbrom_code_offset: U32,
    swbrom_code_size: U32,
    swbrom_data_offset: U32,
    swbrom_data_size: U32,
    fb_reserved_size: U32,
    signed_as_code: U32,
}

/// `sizeof(RM_RISCV_UCODE_DESC)` in `rmRiscvUcode.h` (535.261.03).
pub const RM_RISCV_UCODE_DESC_SIZE: usize = 84;
/// The older descriptor that ends after `swbromDataSize` (see the module note).
pub const RM_RISCV_UCODE_DESC_SHORT_SIZE: usize = 76;
/// The highest descriptor version `rmRiscvUcode.h` documents (5: the whole RISC-V image may be
/// signed as code).
pub const RM_RISCV_UCODE_DESC_MAX_VERSION: u32 = 5;

const _: () = assert!(size_of::<RiscvUcodeDescRaw>() == RM_RISCV_UCODE_DESC_SIZE);
const _: () = assert!(offset_of!(RiscvUcodeDescRaw, fb_reserved_size) == RM_RISCV_UCODE_DESC_SHORT_SIZE);

/// `RM_RISCV_UCODE_DESC`: where the pieces of the RISC-V boot image lie (offsets relative to the
/// image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RiscvUcodeDesc {
    /// `version`: 1..=5.
    pub version: u32,
    pub bootloader_offset: u32,
    pub bootloader_size: u32,
    pub bootloader_param_offset: u32,
    pub bootloader_param_size: u32,
    pub riscv_elf_offset: u32,
    pub riscv_elf_size: u32,
    /// `appVersion`: the changelist number; the driver writes it to `NV_PFALCON_FALCON_OS`.
    pub app_version: u32,
    /// `manifestOffset`/`Size`: the monitor's manifest, input to the boot ROM.
    pub manifest_offset: u32,
    pub manifest_size: u32,
    pub monitor_data_offset: u32,
    pub monitor_data_size: u32,
    pub monitor_code_offset: u32,
    pub monitor_code_size: u32,
    /// `bIsMonitorEnabled`.
    pub monitor_enabled: bool,
    pub swbrom_code_offset: u32,
    pub swbrom_code_size: u32,
    pub swbrom_data_offset: u32,
    pub swbrom_data_size: u32,
    /// `fbReservedSize`: the FB carve-out for the image; `None` in a 76-byte descriptor.
    pub fb_reserved_size: Option<u32>,
    /// `bSignedAsCode`; `None` in a 76-byte descriptor.
    pub signed_as_code: Option<bool>,
}

/// A parsed and checked GSP bootloader file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootloaderFirmware<'a> {
    pub bin: BinHeader,
    pub desc: RiscvUcodeDesc,
    /// The descriptor's size in the file: [`RM_RISCV_UCODE_DESC_SIZE`] or
    /// [`RM_RISCV_UCODE_DESC_SHORT_SIZE`].
    pub desc_size: u32,
    image: &'a [u8],
}

impl<'a> BootloaderFirmware<'a> {
    /// Parses a GSP bootloader file: the descriptor must be one of the two known sizes and of a
    /// documented version, and every region it names must lie inside the image.
    pub fn parse(file: &'a [u8]) -> Result<Self> {
        let bin = BinHeader::parse(file)?;
        let region = bin.header_region(file)?;
        let desc_size = region.len();
        if desc_size != RM_RISCV_UCODE_DESC_SIZE && desc_size != RM_RISCV_UCODE_DESC_SHORT_SIZE {
            return Err(FirmwareError::BadField {
                structure: "nvfw_bin_hdr",
                field: "data_offset - header_offset",
                value: desc_size as u64,
                expected: "the size of RM_RISCV_UCODE_DESC (76 or 84 bytes)",
            });
        }
        // Short descriptors are read into a zeroed full one; the two tail fields stay `None`.
        let mut full = [0u8; RM_RISCV_UCODE_DESC_SIZE];
        // `region` is no longer than `full` (one of the two sizes checked above).
        full.iter_mut().zip(region).for_each(|(to, from)| *to = *from);
        let raw = RiscvUcodeDescRaw::read_from_bytes(&full[..]).map_err(|_| FirmwareError::Truncated {
            what: "RM_RISCV_UCODE_DESC",
            offset: bin.header_offset.into(),
            len: RM_RISCV_UCODE_DESC_SIZE as u64,
            size: file.len() as u64,
        })?;
        let long = desc_size == RM_RISCV_UCODE_DESC_SIZE;
        let desc = RiscvUcodeDesc {
            version: raw.version.get(),
            bootloader_offset: raw.bootloader_offset.get(),
            bootloader_size: raw.bootloader_size.get(),
            bootloader_param_offset: raw.bootloader_param_offset.get(),
            bootloader_param_size: raw.bootloader_param_size.get(),
            riscv_elf_offset: raw.riscv_elf_offset.get(),
            riscv_elf_size: raw.riscv_elf_size.get(),
            app_version: raw.app_version.get(),
            manifest_offset: raw.manifest_offset.get(),
            manifest_size: raw.manifest_size.get(),
            monitor_data_offset: raw.monitor_data_offset.get(),
            monitor_data_size: raw.monitor_data_size.get(),
            monitor_code_offset: raw.monitor_code_offset.get(),
            monitor_code_size: raw.monitor_code_size.get(),
            monitor_enabled: raw.is_monitor_enabled.get() != 0,
            swbrom_code_offset: raw.swbrom_code_offset.get(),
            swbrom_code_size: raw.swbrom_code_size.get(),
            swbrom_data_offset: raw.swbrom_data_offset.get(),
            swbrom_data_size: raw.swbrom_data_size.get(),
            fb_reserved_size: long.then(|| raw.fb_reserved_size.get()),
            signed_as_code: long.then(|| raw.signed_as_code.get() != 0),
        };
        if desc.version == 0 || desc.version > RM_RISCV_UCODE_DESC_MAX_VERSION {
            return Err(FirmwareError::BadField {
                structure: "RM_RISCV_UCODE_DESC",
                field: "version",
                value: desc.version.into(),
                expected: "1..=5 (rmRiscvUcode.h)",
            });
        }
        // Hopper's boot binary (`kgspGetBinArchiveGspRmBoot_GH100`) has no bootloader part at
        // all: the GSP-FMC runs its monitor (RM hands the FMC only the monitor and manifest
        // offsets, `kgspCalculateFbLayout_GH100`).
        let monitor_only = desc.bootloader_offset == 0
            && desc.bootloader_param_size == 0
            && desc.monitor_enabled
            && desc.monitor_code_size != 0;
        if desc.bootloader_size == 0 && !monitor_only {
            return Err(FirmwareError::BadField {
                structure: "RM_RISCV_UCODE_DESC",
                field: "bootloaderSize",
                value: 0,
                expected: "a non-empty bootloader (or none at all, with an enabled monitor: Hopper)",
            });
        }
        let image = bin.image(file)?;
        let limit = image.len();
        // An empty region's offset means nothing (version 4 descriptors leave them zero).
        for (what, offset, size) in desc.regions() {
            if size != 0 {
                check_within(what, offset, size, "bootloader image", limit)?;
            }
        }
        Ok(BootloaderFirmware { bin, desc, desc_size: desc_size as u32, image })
    }

    /// The boot image (bootloader, monitor, manifest, ... at the descriptor's offsets).
    pub fn image(&self) -> &'a [u8] {
        self.image
    }
}

impl RiscvUcodeDesc {
    /// Every (name, offset, size) region the descriptor places in the image.
    pub fn regions(&self) -> [(&'static str, u32, u32); 8] {
        [
            ("bootloader", self.bootloader_offset, self.bootloader_size),
            ("bootloader parameters", self.bootloader_param_offset, self.bootloader_param_size),
            ("RISC-V ELF", self.riscv_elf_offset, self.riscv_elf_size),
            ("manifest", self.manifest_offset, self.manifest_size),
            ("monitor data", self.monitor_data_offset, self.monitor_data_size),
            ("monitor code", self.monitor_code_offset, self.monitor_code_size),
            ("SW-BROM code", self.swbrom_code_offset, self.swbrom_code_size),
            ("SW-BROM data", self.swbrom_data_offset, self.swbrom_data_size),
        ]
    }
}
