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
//! Hopper boots without a booter (the FSP's chain of trust); its `bootloader` slot is the
//! GSP-FMC (`kgspGetBinArchiveGspRmBoot_GH100`), which Debian does not ship as a file.

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::booter::BooterFirmware;
use super::bootloader::BootloaderFirmware;
use super::error::{FirmwareError, Result};
use super::gsp::GspFirmware;
use crate::chip::{Chipset, FirmwareFamily};
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

/// The chip whose `image` ucode `chip` runs (lowercase, as in the firmware directories), or
/// `None` when `chip` takes no such file (Hopper has no booter; Blackwell has no GSP-RM in the
/// pinned release).
pub const fn boot_image_chip(chip: Chipset, image: BootImage) -> Option<&'static str> {
    let booter = !matches!(image, BootImage::Bootloader);
    match chip.firmware_family() {
        // TU116/TU117 have their own booters but run TU102's bootloader.
        FirmwareFamily::Tu10x => Some("tu102"),
        FirmwareFamily::Tu11x => Some(if booter { "tu116" } else { "tu102" }),
        FirmwareFamily::Ga100 => Some("ga100"),
        FirmwareFamily::Ga10x => Some("ga102"),
        FirmwareFamily::Ad10x => Some("ad102"),
        FirmwareFamily::Gh100 => {
            if booter {
                None
            } else {
                Some("gh100")
            }
        }
        FirmwareFamily::Gb10x | FirmwareFamily::Gb20x => None,
    }
}

/// The flat module name of `chip`'s `image` (`ga102-booter_load.bin`), if it takes one.
pub fn boot_module_name(chip: Chipset, image: BootImage) -> Option<String> {
    boot_image_chip(chip, image).map(|ucode_chip| format!("{ucode_chip}-{}.bin", image.stem()))
}

/// The flat module name for a firmware file given by its distribution path:
/// `…/nvidia/<chip>/gsp/<image>-<version>.bin` becomes `<chip>-<image>.bin`, and
/// `…/nvidia/<version>/gsp_<family>.bin` keeps its file name. `None` for anything else.
pub fn module_name_for_path(path: &str) -> Option<String> {
    let mut parts = path.rsplit('/');
    let file = parts.next()?;
    if file.starts_with("gsp_") && file.ends_with(".bin") {
        return Some(file.to_string());
    }
    let dir = parts.next()?;
    let chip = parts.next()?;
    if dir != "gsp"
        || chip.is_empty()
        || !chip
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    {
        return None;
    }
    let stem_and_version = file.strip_suffix(".bin")?;
    let (stem, version) = stem_and_version.split_once('-')?;
    if version.is_empty() {
        return None;
    }
    let image = BootImage::from_stem(stem)?;
    Some(format!("{chip}-{}.bin", image.stem()))
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
    source.get(name).ok_or_else(|| FirmwareError::MissingFile {
        name: name.to_string(),
        chip,
        what,
    })
}

fn in_file<T>(name: &str, result: Result<T>) -> Result<T> {
    result.map_err(|error| FirmwareError::InFile {
        name: name.to_string(),
        error: Box::new(error),
    })
}

impl<'a> FirmwareBundle<'a> {
    /// The module names `chip` needs, GSP-RM first (what an image builder must pack).
    pub fn module_names(chip: Chipset) -> Result<Vec<String>> {
        let gsp = chip
            .gsp_firmware_file()
            .ok_or(FirmwareError::NoGspFirmware { chip })?;
        let mut names = Vec::from([gsp.to_string()]);
        names.extend(
            BootImage::ALL
                .into_iter()
                .filter_map(|image| boot_module_name(chip, image)),
        );
        Ok(names)
    }

    /// Finds and parses every file `chip` needs. The first missing or unusable file is the
    /// error, named.
    pub fn load<S: FirmwareSource + ?Sized>(source: &'a S, chip: Chipset) -> Result<Self> {
        let gsp_name = chip
            .gsp_firmware_file()
            .ok_or(FirmwareError::NoGspFirmware { chip })?;
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

        let name = boot_module_name(chip, BootImage::Bootloader)
            .ok_or(FirmwareError::NoGspFirmware { chip })?;
        let bytes = fetch(source, chip, &name, BootImage::Bootloader.description())?;
        let bootloader = in_file(&name, BootloaderFirmware::parse(bytes))?;

        Ok(FirmwareBundle {
            chip,
            gsp,
            booter_load,
            booter_unload,
            bootloader,
        })
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
