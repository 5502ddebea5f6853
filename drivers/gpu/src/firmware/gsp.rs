//! The GSP-RM firmware file (`gsp_tu10x.bin`, `gsp_ga10x.bin`): an ELF64 container (type REL,
//! machine RISC-V) whose sections carry the firmware image, its version and one signature per
//! chip family.
//!
//! Section names: `GSP_IMAGE_SECTION_NAME` (`.fwimage`), `GSP_VERSION_SECTION_NAME`
//! (`.fwversion`), `GSP_SIGNATURE_SECTION_NAME_PREFIX` (`.fwsignature_`) and
//! `GSP_CC_SIGNATURE_SECTION_NAME_PREFIX` (`.fwsignature_cc_`) in
//! `src/nvidia/generated/g_kernel_gsp_nvoc.h` (535.261.03). How they are used follows
//! `src/nvidia/src/kernel/gpu/gsp/kernel_gsp.c`: `_kgspFwContainerVerifyVersion` requires
//! `.fwversion` to be exactly the driver's version string plus its NUL; `_kgspPrepareGspRmBinaryImage`
//! takes `.fwimage` as the image the radix3 page tables describe (`kgspCreateRadix3`) and the
//! signature section `.fwsignature_<chip family>` (`_kgspGetSectionNameForPrefix`).
//!
//! The container is read with the `object` crate (no_std, read-only).

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use object::elf::EM_RISCV;
use object::read::elf::{ElfFile64, FileHeader};
use object::{LittleEndian, Object, ObjectSection};

use super::error::{FirmwareError, Result};
use crate::chip::{Chipset, GSP_FIRMWARE_VERSION};

/// `GSP_IMAGE_SECTION_NAME`.
pub const GSP_IMAGE_SECTION: &str = ".fwimage";
/// `GSP_VERSION_SECTION_NAME`.
pub const GSP_VERSION_SECTION: &str = ".fwversion";
/// `GSP_SIGNATURE_SECTION_NAME_PREFIX`.
pub const GSP_SIGNATURE_SECTION_PREFIX: &str = ".fwsignature_";
/// `GSP_CC_SIGNATURE_SECTION_NAME_PREFIX`: signatures for confidential-computing mode.
pub const GSP_CC_SIGNATURE_SECTION_PREFIX: &str = ".fwsignature_cc_";

/// `_kgspFwContainerVerifyVersion` prints a `.fwversion` only when it is shorter than this.
const MAX_PRINTABLE_VERSION: usize = 64;

/// The four ELF magic bytes.
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// One section of the container, as listed in its section header table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GspSection<'a> {
    /// Index in the section header table.
    pub index: usize,
    pub name: &'a str,
    /// Offset of its bytes in the file (`None` for sections without file bytes).
    pub offset: Option<u64>,
    pub size: u64,
}

/// One `.fwsignature_*` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GspSignature<'a> {
    /// The full section name, e.g. `.fwsignature_ga10x`.
    pub section: &'a str,
    pub data: &'a [u8],
}

impl<'a> GspSignature<'a> {
    /// What follows the prefix: the chip family (`ga10x`), or `cc_` and the family for
    /// confidential computing (`cc_gh100`).
    pub fn family(&self) -> &'a str {
        self.section.strip_prefix(GSP_SIGNATURE_SECTION_PREFIX).unwrap_or(self.section)
    }

    /// Whether this signature is for confidential-computing mode.
    pub fn is_confidential_computing(&self) -> bool {
        self.section.starts_with(GSP_CC_SIGNATURE_SECTION_PREFIX)
    }

    /// The supported chips whose signature section this is (in normal mode, or in
    /// confidential-computing mode for a `cc_` section).
    pub fn chips(&self) -> Vec<Chipset> {
        let family = self.family();
        let family = family.strip_prefix("cc_").unwrap_or(family);
        Chipset::ALL
            .iter()
            .copied()
            .filter(|chip| {
                chip.gsp_signature_section().and_then(|s| s.strip_prefix(GSP_SIGNATURE_SECTION_PREFIX)) == Some(family)
            })
            .collect()
    }
}

/// The GSP-RM ELF container, checked as a container but not yet bound to a chip or to the
/// driver's version: what a tool shows. [`GspFirmware`] is what the driver boots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GspElf<'a> {
    sections: Vec<GspSection<'a>>,
    version: &'a [u8],
    image: &'a [u8],
    image_offset: u64,
    signatures: Vec<GspSignature<'a>>,
}

fn elf_error(error: object::Error) -> FirmwareError {
    FirmwareError::Elf { reason: error.to_string() }
}

impl<'a> GspElf<'a> {
    /// Reads the container: ELF64 little-endian for RISC-V, UTF-8 section names, exactly one
    /// `.fwimage` (non-empty) and one `.fwversion`, each signature section at most once, and the
    /// bytes of all of them inside the file.
    pub fn parse(bytes: &'a [u8]) -> Result<Self> {
        if bytes.is_empty() {
            return Err(FirmwareError::Empty);
        }
        if !bytes.starts_with(ELF_MAGIC) {
            return Err(FirmwareError::Elf { reason: "no ELF magic (\\x7fELF) at offset 0".to_string() });
        }
        let elf = ElfFile64::<LittleEndian>::parse(bytes).map_err(elf_error)?;
        let machine = elf.elf_header().e_machine(elf.endian());
        if machine != EM_RISCV {
            return Err(FirmwareError::NotRiscv { machine });
        }

        let mut sections = Vec::new();
        let mut image = None;
        let mut version = None;
        let mut signatures: Vec<GspSignature<'a>> = Vec::new();
        for section in elf.sections() {
            let index = section.index().0;
            let name = section.name_bytes().map_err(elf_error)?;
            let name = core::str::from_utf8(name).map_err(|_| FirmwareError::BadSectionName { index })?;
            sections.push(GspSection {
                index,
                name,
                offset: section.file_range().map(|(offset, _)| offset),
                size: section.size(),
            });
            let duplicate = || FirmwareError::DuplicateSection { name: name.to_string() };
            if name == GSP_IMAGE_SECTION {
                if image.is_some() {
                    return Err(duplicate());
                }
                let data = section.data().map_err(elf_error)?;
                image = Some((data, section.file_range().map_or(0, |(offset, _)| offset)));
            } else if name == GSP_VERSION_SECTION {
                if version.is_some() {
                    return Err(duplicate());
                }
                version = Some(section.data().map_err(elf_error)?);
            } else if name.starts_with(GSP_SIGNATURE_SECTION_PREFIX) {
                if signatures.iter().any(|s| s.section == name) {
                    return Err(duplicate());
                }
                let data = section.data().map_err(elf_error)?;
                signatures.push(GspSignature { section: name, data });
            }
        }
        let missing = |name: &str| FirmwareError::MissingSection { name: name.to_string() };
        let (image, image_offset) = image.ok_or_else(|| missing(GSP_IMAGE_SECTION))?;
        if image.is_empty() {
            return Err(FirmwareError::EmptySection { name: GSP_IMAGE_SECTION.to_string() });
        }
        let version = version.ok_or_else(|| missing(GSP_VERSION_SECTION))?;
        Ok(GspElf { sections, version, image, image_offset, signatures })
    }

    /// Every section of the file, in section header table order (the null section at index 0
    /// left out).
    pub fn sections(&self) -> &[GspSection<'a>] {
        &self.sections
    }

    /// The raw bytes of `.fwversion`.
    pub fn version_bytes(&self) -> &'a [u8] {
        self.version
    }

    /// `.fwversion` as text, when it is a short NUL-terminated printable string (the condition
    /// under which `_kgspFwContainerVerifyVersion` prints it).
    pub fn version_string(&self) -> Option<&'a str> {
        let (last, text) = self.version.split_last()?;
        if *last != 0 || self.version.len() >= MAX_PRINTABLE_VERSION {
            return None;
        }
        if !text.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
            return None;
        }
        core::str::from_utf8(text).ok()
    }

    /// The version, if it is exactly [`GSP_FIRMWARE_VERSION`] followed by one NUL; otherwise
    /// [`FirmwareError::VersionMismatch`] (or [`FirmwareError::MalformedVersion`] when it is not
    /// printable).
    pub fn checked_version(&self) -> Result<&'a str> {
        let expected = GSP_FIRMWARE_VERSION;
        match self.version_string() {
            Some(found) if found == expected => Ok(found),
            Some(found) => Err(FirmwareError::VersionMismatch { found: String::from(found), expected }),
            None => Err(FirmwareError::MalformedVersion { size: self.version.len() as u64 }),
        }
    }

    /// `.fwimage`: the firmware image the radix3 page tables will describe.
    pub fn image(&self) -> &'a [u8] {
        self.image
    }

    /// File offset of `.fwimage`.
    pub fn image_offset(&self) -> u64 {
        self.image_offset
    }

    /// Every `.fwsignature_*` section, in file order.
    pub fn signatures(&self) -> &[GspSignature<'a>] {
        &self.signatures
    }

    /// The signature section named `section`.
    pub fn signature(&self, section: &str) -> Option<&GspSignature<'a>> {
        self.signatures.iter().find(|s| s.section == section)
    }
}

/// GSP-RM firmware ready to boot one chip: the container checked, its version the driver's
/// ([`GSP_FIRMWARE_VERSION`]), and the chip's signature picked. Borrows the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GspFirmware<'a> {
    elf: GspElf<'a>,
    version: &'a str,
    signature: GspSignature<'a>,
}

impl<'a> GspFirmware<'a> {
    /// Parses the file, refuses any version but [`GSP_FIRMWARE_VERSION`], and picks the
    /// signature section `signature_section` (from [`Chipset::gsp_signature_section`], or its
    /// `.fwsignature_cc_` form in confidential-computing mode).
    pub fn parse(bytes: &'a [u8], signature_section: &str) -> Result<Self> {
        let elf = GspElf::parse(bytes)?;
        let version = elf.checked_version()?;
        let signature = *elf
            .signature(signature_section)
            .ok_or_else(|| FirmwareError::MissingSection { name: signature_section.to_string() })?;
        if signature.data.is_empty() {
            return Err(FirmwareError::EmptySection { name: signature_section.to_string() });
        }
        Ok(GspFirmware { elf, version, signature })
    }

    /// [`GspFirmware::parse`] with `chip`'s signature section (normal mode).
    pub fn for_chip(bytes: &'a [u8], chip: Chipset) -> Result<Self> {
        let section = chip.gsp_signature_section().ok_or(FirmwareError::NoGspFirmware { chip })?;
        Self::parse(bytes, section)
    }

    /// The version string (always [`GSP_FIRMWARE_VERSION`]).
    pub fn version(&self) -> &'a str {
        self.version
    }

    /// `.fwimage`.
    pub fn image(&self) -> &'a [u8] {
        self.elf.image()
    }

    /// Size of `.fwimage` in bytes (`GSP_FIRMWARE.imageSize`).
    pub fn image_size(&self) -> u64 {
        self.elf.image().len() as u64
    }

    /// The chosen signature's bytes.
    pub fn signature(&self) -> &'a [u8] {
        self.signature.data
    }

    /// The chosen signature's section name.
    pub fn signature_section(&self) -> &'a str {
        self.signature.section
    }

    /// The container, with every section and signature.
    pub fn elf(&self) -> &GspElf<'a> {
        &self.elf
    }
}
