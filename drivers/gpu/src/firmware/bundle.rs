//! The firmware a chip's GSP boot needs, found by name in a [`FirmwareSource`].
//!
//! # Module names
//! Boot modules (Multiboot2 module strings, initrd entries) are flat names; the driver asks for:
//! - the GSP-RM image by its NVIDIA file name, `gsp_tu10x.bin` or `gsp_ga10x.bin`
//!   ([`Chipset::gsp_firmware_file`]; `lib/firmware/nvidia/535.261.03/<name>` in Debian);
//! - the boot ucodes as `<ucode chip>-<image>.bin`, e.g. `ga102-booter_load.bin`, where
//!   `<image>` is `booter_load`, `booter_unload` or `bootloader`, and `<ucode chip>` is the
//!   chip whose ucode NVIDIA's driver runs on this chip, which is also the directory that holds
//!   the real file in the distribution layout: `nvidia/ga102/gsp/booter_load-535.113.01.bin`
//!   becomes `ga102-booter_load.bin` ([`module_name_for_path`]). GA104 uses GA102's images, so
//!   one set of modules serves a family (Debian's `ga104/gsp` is a link to `ga102/gsp`).
//!
//! The version is not part of a module name: an image holds one driver's firmware, and the
//! GSP-RM version is checked inside the file (`.fwversion`).
//!
//! Which chip's ucode each chip runs follows the HAL selection of
//! `kgspGetBinArchiveBooterLoadUcode`, `kgspGetBinArchiveBooterUnloadUcode` and
//! `kgspGetBinArchiveGspRmBoot` in `src/nvidia/generated/g_kernel_gsp_nvoc.c` (535.261.03).
//! Hopper boots without a booter (the FSP's chain of trust); its `bootloader` slot is RM's boot
//! binary (`kgspGetBinArchiveGspRmBoot_GH100`), which Debian does not ship as a file.
//!
//! # Extra images ([`ExtraImage`])
//! Two boot inputs exist in no distribution, only in RM's compiled-in arrays, and come as files
//! from the project's extractor (`cargo xtask extract-firmware`): NVIDIA's generic falcon
//! bootloader, `tu102-generic_bootloader.bin` (`ksec2GetBinArchiveBlUcode_TU102`: Turing and
//! GA100 run their v2 FWSEC through it), and Hopper's FSP-side GSP-FMC as four raw files,
//! `gh100-fmc_image.bin`, `gh100-fmc_hash.bin` (SHA-384, 48 bytes), `gh100-fmc_sig.bin` and
//! `gh100-fmc_pkey.bin` (RSA-3K, 384 bytes each), named after the entries of
//! `kgspGetBinArchiveGspRmFmcGfwProdSigned_GH100`. They are not part of
//! [`FirmwareBundle::module_names`] (which stays what every chip must have); a boot that needs one
//! loads it with [`FirmwareBundle::generic_bootloader`] or [`FirmwareBundle::fmc_images`].
//!
//! # Which release
//! Module names carry no version, so whoever packs the modules picks the files: the pinned
//! release first. The extractor writes the 535.261.03 boot ucodes (the GSP-RM release,
//! [`crate::chip::GSP_FIRMWARE_VERSION`]) in the distribution layout,
//! `extracted-535.261.03/nvidia/<chip>/gsp/<image>-535.261.03.bin`, so [`module_name_for_path`]
//! names them exactly as it names Debian's 535.113.01 files; packers look in the extracted tree
//! first and fall back to Debian's files ([`PINNED_BOOT_FIRMWARE_DIR`]).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::booter::BooterFirmware;
use super::bootloader::BootloaderFirmware;
use super::error::{FirmwareError, Result};
use super::generic_bootloader::GenericBootloaderFirmware;
use super::gsp::GspFirmware;
use crate::chip::Chipset;
use crate::fwsec::frts::GenericBootloader;
use crate::gsp::boot::fsp::FmcImages;
use crate::platform::FirmwareSource;

/// A boot ucode file besides the GSP-RM image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BootImage {
    /// SEC2 ucode that loads GSP-RM into WPR2 and starts it.
    BooterLoad,
    /// SEC2 ucode that tears WPR2 down again on unload.
    BooterUnload,
    /// The GSP's RISC-V boot image (`RM_RISCV_UCODE_DESC`); the GSP-FMC on Hopper.
    Bootloader,
}

impl BootImage {
    /// All boot images.
    pub const ALL: [BootImage; 3] = [Self::BooterLoad, Self::BooterUnload, Self::Bootloader];

    /// The file name stem: `booter_load`, `booter_unload`, `bootloader`.
    pub const fn stem(self) -> &'static str {
        match self {
            Self::BooterLoad => "booter_load",
            Self::BooterUnload => "booter_unload",
            Self::Bootloader => "bootloader",
        }
    }

    /// What it is, for messages.
    pub const fn description(self) -> &'static str {
        match self {
            Self::BooterLoad => "booter load ucode",
            Self::BooterUnload => "booter unload ucode",
            Self::Bootloader => "GSP bootloader",
        }
    }

    fn from_stem(stem: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|image| image.stem() == stem)
    }
}

/// The folder (under the real-data root) where the extractor writes the pinned release's boot
/// ucodes in the distribution layout (`nvidia/<chip>/gsp/<image>-535.261.03.bin`); packers take
/// modules from it before Debian's older files.
pub const PINNED_BOOT_FIRMWARE_DIR: &str = "extracted-535.261.03";

/// A boot input that only the extractor writes as a file (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtraImage {
    /// NVIDIA's generic falcon bootloader (`nvfw_bin_hdr` + `RM_FLCN_BL_DESC`).
    GenericBootloader,
    /// The GSP-FMC image the FSP verifies and starts (Hopper), raw.
    FmcImage,
    /// Its SHA-384 hash, 48 raw bytes.
    FmcHash,
    /// Its RSA-3K signature, 384 raw bytes.
    FmcSignature,
    /// The RSA-3K public key, 384 raw bytes.
    FmcPublicKey,
}

impl ExtraImage {
    /// All extra images.
    pub const ALL: [ExtraImage; 5] =
        [Self::GenericBootloader, Self::FmcImage, Self::FmcHash, Self::FmcSignature, Self::FmcPublicKey];

    /// The file name stem.
    pub const fn stem(self) -> &'static str {
        match self {
            Self::GenericBootloader => "generic_bootloader",
            Self::FmcImage => "fmc_image",
            Self::FmcHash => "fmc_hash",
            Self::FmcSignature => "fmc_sig",
            Self::FmcPublicKey => "fmc_pkey",
        }
    }

    /// What it is, for messages.
    pub const fn description(self) -> &'static str {
        match self {
            Self::GenericBootloader => "generic falcon bootloader",
            Self::FmcImage => "GSP-FMC image",
            Self::FmcHash => "GSP-FMC SHA-384 hash",
            Self::FmcSignature => "GSP-FMC signature",
            Self::FmcPublicKey => "GSP-FMC public key",
        }
    }

    fn from_stem(stem: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|image| image.stem() == stem)
    }
}

/// The chip whose extra `image` `chip` uses, or `None` when its boot takes none: the generic
/// bootloader on the chips whose FWSEC has a v2 descriptor (Turing, GA100; RM's HAL
/// `ksec2GetBinArchiveBlUcode_TU102` also covers GA10x, whose v3 FWSEC boots from HS without
/// it), the FMC on Hopper.
pub const fn extra_image_chip(chip: Chipset, image: ExtraImage) -> Option<&'static str> {
    match image {
        ExtraImage::GenericBootloader => chip.firmware_family().generic_bootloader_chip(),
        _ => chip.firmware_family().fmc_chip(),
    }
}

/// The flat module name of `chip`'s extra `image` (`tu102-generic_bootloader.bin`), if it uses one.
pub fn extra_module_name(chip: Chipset, image: ExtraImage) -> Option<String> {
    extra_image_chip(chip, image).map(|owner| format!("{owner}-{}.bin", image.stem()))
}

/// The chip whose `image` ucode `chip` runs (lowercase, as in the firmware directories), or
/// `None` when `chip` takes no such file (Hopper has no booter; Blackwell has no GSP-RM in the
/// pinned release).
pub const fn boot_image_chip(chip: Chipset, image: BootImage) -> Option<&'static str> {
    match image {
        BootImage::Bootloader => chip.firmware_family().bootloader_chip(),
        _ => chip.firmware_family().booter_chip(),
    }
}

/// The flat module name of `chip`'s `image` (`ga102-booter_load.bin`), if it takes one.
pub fn boot_module_name(chip: Chipset, image: BootImage) -> Option<String> {
    boot_image_chip(chip, image).map(|ucode_chip| format!("{ucode_chip}-{}.bin", image.stem()))
}

/// The flat module name for a firmware file given by its distribution path:
/// `…/nvidia/<chip>/gsp/<image>-<version>.bin` becomes `<chip>-<image>.bin` (`<image>` a
/// [`BootImage`] or [`ExtraImage`] stem), and
/// `…/nvidia/<version>/gsp_<family>.bin` keeps its file name. `None` for anything else.
pub fn module_name_for_path(path: &str) -> Option<String> {
    let mut parts = path.rsplit('/');
    let file = parts.next()?;
    if file.starts_with("gsp_") && file.ends_with(".bin") {
        return Some(file.to_string());
    }
    let dir = parts.next()?;
    let chip = parts.next()?;
    if dir != "gsp" || chip.is_empty() || !chip.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        return None;
    }
    let stem_and_version = file.strip_suffix(".bin")?;
    let (stem, version) = stem_and_version.split_once('-')?;
    if version.is_empty() {
        return None;
    }
    let stem = match BootImage::from_stem(stem) {
        Some(image) => image.stem(),
        None => ExtraImage::from_stem(stem)?.stem(),
    };
    Some(format!("{chip}-{stem}.bin"))
}

/// Everything the GSP boot of one chip reads from firmware files, parsed and checked.
/// Borrows the firmware source's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirmwareBundle<'a> {
    pub chip: Chipset,
    /// GSP-RM, version-checked, with this chip's signature.
    pub gsp: GspFirmware<'a>,
    /// `None` where the chip boots without a booter (Hopper).
    pub booter_load: Option<BooterFirmware<'a>>,
    pub booter_unload: Option<BooterFirmware<'a>>,
    pub bootloader: BootloaderFirmware<'a>,
}

fn fetch<'a, S: FirmwareSource + ?Sized>(
    source: &'a S,
    chip: Chipset,
    name: &str,
    what: &'static str,
) -> Result<&'a [u8]> {
    source.get(name).ok_or_else(|| FirmwareError::MissingFile { name: name.to_string(), chip, what })
}

fn in_file<T>(name: &str, result: Result<T>) -> Result<T> {
    result.map_err(|error| FirmwareError::InFile { name: name.to_string(), error: Box::new(error) })
}

impl<'a> FirmwareBundle<'a> {
    /// The module names `chip` needs, GSP-RM first (what an image builder must pack).
    pub fn module_names(chip: Chipset) -> Result<Vec<String>> {
        let gsp = chip.gsp_firmware_file().ok_or(FirmwareError::NoGspFirmware { chip })?;
        let mut names = Vec::from([gsp.to_string()]);
        names.extend(BootImage::ALL.into_iter().filter_map(|image| boot_module_name(chip, image)));
        Ok(names)
    }

    /// Finds and parses every file `chip` needs. The first missing or unusable file is the
    /// error, named.
    pub fn load<S: FirmwareSource + ?Sized>(source: &'a S, chip: Chipset) -> Result<Self> {
        let gsp_name = chip.gsp_firmware_file().ok_or(FirmwareError::NoGspFirmware { chip })?;
        let gsp_bytes = fetch(source, chip, gsp_name, "GSP-RM firmware")?;
        let gsp = in_file(gsp_name, GspFirmware::for_chip(gsp_bytes, chip))?;

        let booter = |image: BootImage| -> Result<Option<BooterFirmware<'a>>> {
            let Some(name) = boot_module_name(chip, image) else {
                return Ok(None);
            };
            let bytes = fetch(source, chip, &name, image.description())?;
            in_file(&name, BooterFirmware::parse(bytes)).map(Some)
        };
        let booter_load = booter(BootImage::BooterLoad)?;
        let booter_unload = booter(BootImage::BooterUnload)?;

        let name = boot_module_name(chip, BootImage::Bootloader).ok_or(FirmwareError::NoGspFirmware { chip })?;
        let bytes = fetch(source, chip, &name, BootImage::Bootloader.description())?;
        let bootloader = in_file(&name, BootloaderFirmware::parse(bytes))?;

        Ok(FirmwareBundle { chip, gsp, booter_load, booter_unload, bootloader })
    }

    /// The extra module names `chip`'s boot uses besides [`Self::module_names`] (the generic
    /// bootloader on Turing and GA100, the FMC files on Hopper).
    pub fn extra_module_names(chip: Chipset) -> Vec<String> {
        ExtraImage::ALL.into_iter().filter_map(|image| extra_module_name(chip, image)).collect()
    }

    /// NVIDIA's generic falcon bootloader for `chip`'s FWSEC, parsed: `Ok(None)` where the chip
    /// runs FWSEC without it, [`FirmwareError::MissingFile`] where it needs it and the source
    /// has none.
    pub fn generic_bootloader<S: FirmwareSource + ?Sized>(
        source: &'a S,
        chip: Chipset,
    ) -> Result<Option<GenericBootloader<'a>>> {
        let image = ExtraImage::GenericBootloader;
        let Some(name) = extra_module_name(chip, image) else {
            return Ok(None);
        };
        let bytes = fetch(source, chip, &name, image.description())?;
        let firmware = in_file(&name, GenericBootloaderFirmware::parse(bytes))?;
        Ok(Some(firmware.loader()))
    }

    /// Hopper's GSP-FMC and its credentials for the FSP's chain of trust: `Ok(None)` where the
    /// chip boots without them, [`FirmwareError::MissingFile`] for the first one missing, and a
    /// [`FirmwareError::BadField`] for a hash, signature or key of the wrong size.
    pub fn fmc_images<S: FirmwareSource + ?Sized>(source: &'a S, chip: Chipset) -> Result<Option<FmcImages<'a>>> {
        let mut parts: [&'a [u8]; 4] = [&[]; 4];
        let wanted = [ExtraImage::FmcImage, ExtraImage::FmcHash, ExtraImage::FmcSignature, ExtraImage::FmcPublicKey];
        for (slot, image) in parts.iter_mut().zip(wanted) {
            let Some(name) = extra_module_name(chip, image) else {
                return Ok(None);
            };
            *slot = fetch(source, chip, &name, image.description())?;
        }
        let [image, hash, signature, public_key] = parts;
        let sized = |image: ExtraImage, bytes: &'a [u8], expected: &'static str| -> Result<Option<FmcImages<'a>>> {
            let name = extra_module_name(chip, image).unwrap_or_default();
            in_file(
                &name,
                Err(FirmwareError::BadField {
                    structure: "GSP-FMC file",
                    field: image.stem(),
                    value: bytes.len() as u64,
                    expected,
                }),
            )
        };
        if image.is_empty() {
            return sized(ExtraImage::FmcImage, image, "a non-empty image");
        }
        let Ok(hash384) = <&[u8; 48]>::try_from(hash) else {
            return sized(ExtraImage::FmcHash, hash, "48 bytes (SHA-384)");
        };
        let Ok(signature) = <&[u8; 384]>::try_from(signature) else {
            return sized(ExtraImage::FmcSignature, signature, "384 bytes (RSA-3K)");
        };
        let Ok(public_key) = <&[u8; 384]>::try_from(public_key) else {
            return sized(ExtraImage::FmcPublicKey, public_key, "384 bytes (RSA-3K)");
        };
        Ok(Some(FmcImages { image, hash384, public_key, signature }))
    }
}

/// [`FirmwareBundle::load`] as a method of every firmware source.
pub trait FirmwareSourceExt: FirmwareSource {
    /// The parsed firmware bundle for `chip`.
    fn firmware_bundle(&self, chip: Chipset) -> Result<FirmwareBundle<'_>> {
        FirmwareBundle::load(self, chip)
    }
}

impl<T: FirmwareSource + ?Sized> FirmwareSourceExt for T {}
