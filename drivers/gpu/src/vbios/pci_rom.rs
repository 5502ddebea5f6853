//! The PCI expansion ROM chain of an NVIDIA VBIOS, and the NVGI (IFR) header that may precede it.
//!
//! Layout facts: PCI Firmware Specification 3.x (ROM header signature 0xAA55, pointer to the PCI
//! data structure at 0x18, "PCIR" fields, image length in 512-byte units, last-image bit, code
//! types) and NVIDIA's `src/nvidia/inc/kernel/platform/pci_exp_table.h` (NVIDIA's alternative
//! signatures, the "NPDE" PCI data extension). The walk follows `s_locateExpansionRoms` and the IFR
//! handling follows `s_romImgFindPciHeader_TU102`, both in
//! `src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_vbios_tu102.c`; IFR register fields come
//! from `src/common/inc/swref/published/turing/tu102/dev_bus.h`.

use alloc::vec::Vec;
use core::fmt;

use super::error::{Result, VbiosError};
use super::source::{read_struct, read_u16, read_u32, RomSource, PROM_WINDOW_SIZE};
use crate::hw::vbios::{
    NvPciDataExtStruct, PciDataStruct, NV_PBUS_IFR_FMT_FIXED0, NV_PBUS_IFR_FMT_FIXED0_SIGNATURE_VALUE,
    NV_PBUS_IFR_FMT_FIXED1, NV_PBUS_IFR_FMT_FIXED1_FIXED_DATA_SIZE, NV_PBUS_IFR_FMT_FIXED1_VERSIONSW,
    NV_PBUS_IFR_FMT_FIXED2, NV_PBUS_IFR_FMT_FIXED2_TOTAL_DATA_SIZE, NV_PCI_DATA_EXT_REV_10, NV_PCI_DATA_EXT_REV_11,
    NV_PCI_DATA_EXT_SIG, NV_ROM_DIRECTORY_IDENTIFIER, OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE,
    OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR, PCI_DATA_STRUCT_SIGNATURE, PCI_DATA_STRUCT_SIGNATURE_NV,
    PCI_DATA_STRUCT_SIGNATURE_NV2, PCI_EXP_ROM_SIGNATURE, PCI_EXP_ROM_SIGNATURE_NV, PCI_EXP_ROM_SIGNATURE_NV2,
    PCI_LAST_IMAGE, PCI_ROM_IMAGE_BLOCK_SIZE, PCI_VENDOR_ID_NVIDIA,
};

/// IFR v3: the ROM directory follows the 4 KiB flash status block (a literal in
/// `s_romImgFindPciHeader_TU102`, no define).
const IFR_V3_FLASH_STATUS_SIZE: u32 = 4096;
/// IFR v1/v2: the PCI ROM offset is the word 4 bytes into the extended section; IFR v3: 8 bytes
/// into the ROM directory (literals in `s_romImgFindPciHeader_TU102`, no defines).
const IFR_V12_ROM_OFFSET_AT: u32 = 4;
const IFR_V3_ROM_OFFSET_AT: u32 = 8;

/// No board ships more images than this; the bound makes the walk finite whatever the lengths say.
pub const MAX_IMAGES: usize = 32;

/// What an image's code is for (the PCIR code type byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeType {
    /// 0x00: Intel x86 PC-AT compatible (the legacy VGA BIOS). PCI Firmware Spec.
    X86PcAt,
    /// 0x01: Open Firmware (IEEE 1275). PCI Firmware Spec.
    OpenFirmware,
    /// 0x02: HP PA-RISC. PCI Firmware Spec.
    PaRisc,
    /// 0x03: EFI (the UEFI GOP driver). PCI Firmware Spec.
    Efi,
    /// 0x70: NVIDIA NBSI data ("holds NBSI_OBJ_CODE_TYPE (0x70)", `pci_exp_table.h`).
    NvidiaNbsi,
    /// 0xE0: NVIDIA VBIOS extension, the falcon ucodes including FWSEC
    /// (`NV_BCRT_HASH_INFO_BASE_CODE_TYPE_VBIOS_EXT` in `kernel_gsp_vbios_tu102.c`).
    NvidiaFwsec,
    /// Any other value.
    Other(u8),
}

impl CodeType {
    /// Decodes the PCIR code type byte.
    pub const fn from_raw(raw: u8) -> Self {
        match raw {
            0x00 => Self::X86PcAt,
            0x01 => Self::OpenFirmware,
            0x02 => Self::PaRisc,
            0x03 => Self::Efi,
            0x70 => Self::NvidiaNbsi,
            0xE0 => Self::NvidiaFwsec,
            other => Self::Other(other),
        }
    }

    /// The PCIR code type byte.
    pub const fn raw(self) -> u8 {
        match self {
            Self::X86PcAt => 0x00,
            Self::OpenFirmware => 0x01,
            Self::PaRisc => 0x02,
            Self::Efi => 0x03,
            Self::NvidiaNbsi => 0x70,
            Self::NvidiaFwsec => 0xE0,
            Self::Other(raw) => raw,
        }
    }

    /// A short human name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::X86PcAt => "x86 PC-AT",
            Self::OpenFirmware => "Open Firmware",
            Self::PaRisc => "PA-RISC",
            Self::Efi => "EFI",
            Self::NvidiaNbsi => "NVIDIA NBSI",
            Self::NvidiaFwsec => "NVIDIA falcon ucode (FWSEC)",
            Self::Other(_) => "unknown",
        }
    }
}

impl fmt::Display for CodeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:#04x})", self.name(), self.raw())
    }
}

/// NVIDIA's PCI data extension of one image, as found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Npde {
    /// ROM offset of the extension.
    pub offset: u32,
    /// Revision (0x100 = 1.0, 0x101 = 1.1).
    pub revision: u16,
    /// Length of the extension in bytes.
    pub length: u16,
    /// Sub-image length in 512-byte units.
    pub subimage_length: u16,
    /// Private last-image indicator, when the extension is long enough to carry it.
    pub private_last_image: Option<u8>,
    /// Flags byte.
    pub flags: u8,
}

/// One image of the PCI expansion ROM chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RomImage {
    /// ROM offset of the image (its ROM signature).
    pub offset: u32,
    /// Size of the image in bytes: the NPDE sub-image length when NVIDIA's extension gives one,
    /// else the PCIR image length, times 512. The next image starts right after it.
    pub size: u32,
    /// The ROM signature word (0xAA55, or NVIDIA's 0x4E56 / 0xBB77).
    pub rom_signature: u16,
    /// ROM offset of the PCI data structure.
    pub pcir_offset: u32,
    /// Its signature ("PCIR", or NVIDIA's "NPDS" / "RGIS"), as the 4 bytes read.
    pub pcir_signature: [u8; 4],
    /// PCI vendor id.
    pub vendor_id: u16,
    /// PCI device id.
    pub device_id: u16,
    /// PCI data structure revision.
    pub pcir_revision: u8,
    /// PCI class code (programming interface, subclass, base class).
    pub class_code: [u8; 3],
    /// PCIR image length in 512-byte units.
    pub pcir_image_length: u16,
    /// Vendor ROM revision.
    pub vendor_rom_revision: u16,
    /// Code type.
    pub code_type: CodeType,
    /// The PCIR last-image indicator byte.
    pub pcir_last_image: u8,
    /// NVIDIA's extension, if present with a known signature.
    pub npde: Option<Npde>,
    /// Whether the walk ended at this image (NPDE's indicator wins over PCIR's, as in NVIDIA's
    /// driver).
    pub last: bool,
}

/// The NVGI (IFR) header some dumps of the flash begin with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IfrHeader {
    /// `NV_PBUS_IFR_FMT_FIXED1_VERSIONSW`.
    pub version: u8,
    /// Where the PCI ROM starts in the source.
    pub rom_offset: u32,
}

/// Where the chain is and what it holds.
#[derive(Debug, Clone)]
pub(crate) struct RomLayout {
    /// Source offset of the first image (0 unless an IFR header precedes it).
    pub rom_offset: u32,
    pub ifr: Option<IfrHeader>,
    pub images: Vec<RomImage>,
    /// Bytes from the first image's start to the last image's end.
    pub rom_size: u32,
    /// The offset the falcon ucode table pointers are relative to (see `expansion_rom_offset`).
    pub expansion_rom_offset: u32,
}

const fn is_rom_signature(sig: u16) -> bool {
    matches!(sig, PCI_EXP_ROM_SIGNATURE | PCI_EXP_ROM_SIGNATURE_NV | PCI_EXP_ROM_SIGNATURE_NV2)
}

const fn is_pcir_signature(sig: u32) -> bool {
    matches!(sig, PCI_DATA_STRUCT_SIGNATURE | PCI_DATA_STRUCT_SIGNATURE_NV | PCI_DATA_STRUCT_SIGNATURE_NV2)
}

/// Finds the PCI ROM in `src` (behind an IFR header if there is one) and walks its image chain.
pub(crate) fn locate<S: RomSource + ?Sized>(src: &mut S) -> Result<RomLayout> {
    let first = read_u16(src, "ROM signature", 0)?;
    let (rom_offset, ifr) = if is_rom_signature(first) {
        (0, None)
    } else {
        match find_rom_behind_ifr(src)? {
            Some(ifr) => (ifr.rom_offset, Some(ifr)),
            None => return Err(VbiosError::NoRomSignature { found: first }),
        }
    };
    let signature = read_u16(src, "ROM signature", rom_offset)?;
    if !is_rom_signature(signature) {
        return Err(VbiosError::BadImageSignature { image: rom_offset, found: signature });
    }
    let (images, rom_size) = walk_chain(src, rom_offset)?;
    Ok(RomLayout { rom_offset, ifr, expansion_rom_offset: expansion_rom_offset(&images), images, rom_size })
}

/// Reads the IFR header at offset 0, if there is one, and returns where it says the PCI ROM is.
fn find_rom_behind_ifr<S: RomSource + ?Sized>(src: &mut S) -> Result<Option<IfrHeader>> {
    let fixed0 = read_u32(src, "IFR header", NV_PBUS_IFR_FMT_FIXED0)?;
    if fixed0 != NV_PBUS_IFR_FMT_FIXED0_SIGNATURE_VALUE {
        return Ok(None);
    }
    let fixed1 = read_u32(src, "IFR header", NV_PBUS_IFR_FMT_FIXED1)?;
    let fixed2 = read_u32(src, "IFR header", NV_PBUS_IFR_FMT_FIXED2)?;
    // An 8-bit field: the cast keeps every bit.
    let version = NV_PBUS_IFR_FMT_FIXED1_VERSIONSW.extract(fixed1) as u8;
    let rom_offset = match version {
        1 | 2 => {
            let extended = NV_PBUS_IFR_FMT_FIXED1_FIXED_DATA_SIZE.extract(fixed1);
            let at = extended.saturating_add(IFR_V12_ROM_OFFSET_AT);
            read_u32(src, "IFR extended section", at)?
        }
        3 => {
            let total_data_size = NV_PBUS_IFR_FMT_FIXED2_TOTAL_DATA_SIZE.extract(fixed2);
            let flash_status = read_u32(src, "IFR flash status offset", total_data_size)?;
            let directory = flash_status.saturating_add(IFR_V3_FLASH_STATUS_SIZE);
            let found = read_u32(src, "ROM directory", directory)?;
            if found != NV_ROM_DIRECTORY_IDENTIFIER {
                return Err(VbiosError::NoRomDirectory { offset: directory, found });
            }
            read_u32(src, "ROM directory", directory.saturating_add(IFR_V3_ROM_OFFSET_AT))?
        }
        other => return Err(VbiosError::UnsupportedIfrVersion { version: other }),
    };
    if !rom_offset.is_multiple_of(4) {
        return Err(VbiosError::MisalignedRomOffset { offset: rom_offset });
    }
    Ok(Some(IfrHeader { version, rom_offset }))
}

/// Walks the chain starting at source offset `base`; returned offsets are relative to `base`.
/// Returns the images and where the last one ends.
fn walk_chain<S: RomSource + ?Sized>(src: &mut S, base: u32) -> Result<(Vec<RomImage>, u32)> {
    let mut images = Vec::new();
    let mut offset: u32 = 0;
    loop {
        if images.len() == MAX_IMAGES {
            return Err(VbiosError::TooManyImages { limit: MAX_IMAGES });
        }
        let image = read_image(src, base, offset)?;
        // NVIDIA's driver does not look at the vendor; refusing a foreign first image here gives
        // "not NVIDIA" instead of a confusing error further on.
        if images.is_empty() && image.vendor_id != PCI_VENDOR_ID_NVIDIA {
            return Err(VbiosError::NotNvidia { vendor: image.vendor_id, device: image.device_id });
        }
        // Two u32s: the sum fits in a u64.
        let end = u64::from(offset).saturating_add(u64::from(image.size));
        if end > u64::from(PROM_WINDOW_SIZE) {
            return Err(VbiosError::RomTooLarge { size: end, limit: PROM_WINDOW_SIZE });
        }
        let available = src.size().saturating_sub(base);
        if end > u64::from(available) {
            return Err(VbiosError::Truncated {
                what: "ROM image",
                offset: image.offset,
                len: image.size,
                size: available,
            });
        }
        let last = image.last;
        offset = u32::try_from(end).unwrap_or(u32::MAX); // <= PROM_WINDOW_SIZE, checked above
        images.push(image);
        if last {
            return Ok((images, offset));
        }
    }
}

/// Reads the image whose ROM header is at `offset` (relative to `base`).
fn read_image<S: RomSource + ?Sized>(src: &mut S, base: u32, offset: u32) -> Result<RomImage> {
    let abs = |rel: u32| base.saturating_add(rel);
    let rom_signature = read_u16(src, "ROM header", abs(offset))?;
    if !is_rom_signature(rom_signature) {
        return Err(VbiosError::BadImageSignature { image: offset, found: rom_signature });
    }
    let pcir_ptr = read_u16(src, "ROM header", abs(offset.saturating_add(OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR)))?;
    let pcir_offset = offset.saturating_add(u32::from(pcir_ptr));
    let pcir: PciDataStruct = read_struct(src, "PCI data structure", abs(pcir_offset))?;
    if !is_pcir_signature(pcir.signature.get()) {
        return Err(VbiosError::BadPcirSignature { image: offset, pcir: pcir_offset, found: pcir.signature.get() });
    }

    let mut length = pcir.image_length.get();
    let mut last = pcir.last_image & PCI_LAST_IMAGE != 0;

    // NVIDIA's extension sits at the end of the PCI data structure, rounded up to 16 bytes of the
    // PROM address; when present with a known revision its sub-image length and private
    // last-image indicator replace the PCIR ones (`s_locateExpansionRoms`).
    let npde_abs = abs(pcir_offset)
        .checked_add(u32::from(pcir.length.get()))
        .and_then(|end| end.checked_add(0xF))
        .map(|end| end & !0xF);
    let mut npde = None;
    if let Some(npde_abs) = npde_abs {
        let ext: NvPciDataExtStruct = read_struct(src, "NPDE", npde_abs)?;
        if ext.signature.get() == NV_PCI_DATA_EXT_SIG
            && matches!(ext.revision.get(), NV_PCI_DATA_EXT_REV_10 | NV_PCI_DATA_EXT_REV_11)
        {
            let has_last = ext.length.get() > OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE;
            length = ext.subimage_length.get();
            if has_last {
                last = ext.private_last_image & PCI_LAST_IMAGE != 0;
            } else if length < pcir.image_length.get() {
                last = false;
            }
            npde = Some(Npde {
                offset: npde_abs.saturating_sub(base),
                revision: ext.revision.get(),
                length: ext.length.get(),
                subimage_length: ext.subimage_length.get(),
                private_last_image: has_last.then_some(ext.private_last_image),
                flags: ext.flags,
            });
        }
    }

    if length == 0 {
        return Err(VbiosError::EmptyImage { image: offset });
    }
    Ok(RomImage {
        offset,
        // A u16 count of 512-byte blocks: under 32 MiB, never saturates.
        size: u32::from(length).saturating_mul(PCI_ROM_IMAGE_BLOCK_SIZE),
        rom_signature,
        pcir_offset,
        pcir_signature: pcir.signature.get().to_le_bytes(),
        vendor_id: pcir.vendor_id.get(),
        device_id: pcir.device_id.get(),
        pcir_revision: pcir.revision,
        class_code: pcir.class_code,
        pcir_image_length: pcir.image_length.get(),
        vendor_rom_revision: pcir.vendor_rom_revision.get(),
        code_type: CodeType::from_raw(pcir.code_type),
        pcir_last_image: pcir.last_image,
        npde,
        last,
    })
}

/// The base the falcon ucode table pointers count from.
///
/// The pointers are laid out as if the first 0xE0 image followed the x86 image directly; the EFI
/// image in between is not counted. So the base is the first 0xE0 image's offset less the x86
/// image's size, or 0 when either image is missing (`s_locateExpansionRoms`,
/// `NV_BCRT_HASH_INFO_BASE_CODE_TYPE_VBIOS_BASE/_EXT`).
fn expansion_rom_offset(images: &[RomImage]) -> u32 {
    let ext = images.iter().find(|i| i.code_type == CodeType::NvidiaFwsec).map(|i| i.offset);
    let base = images.iter().find(|i| i.code_type == CodeType::X86PcAt).map(|i| i.size);
    match (ext, base) {
        // NVIDIA subtracts unchecked; an 0xE0 image before the end of the x86 one is malformed and
        // gets base 0, so the table lookups fail their bounds checks instead of wrapping.
        (Some(ext), Some(base)) if ext > 0 && base > 0 => ext.saturating_sub(base),
        _ => 0,
    }
}
