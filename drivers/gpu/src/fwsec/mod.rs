//! FWSEC, the falcon ucode in the VBIOS that, run on the GSP falcon, carves out the FRTS region
//! (Turing..Ada) before GSP-RM boots: the driver's FWSEC code, in one place.
//!
//! - This module: finding the FWSEC image through the VBIOS's falcon ucode table
//!   ([`Vbios::fwsec`]) and reading it: its descriptor, code, data and signatures, the
//!   application interface table in its DMEM and the DMEM mapper the command goes through.
//! - [`frts`]: the command (`FWSECLIC_FRTS_CMD`) patched into that DMEM, running the image on the
//!   GSP falcon, and the check that WPR2 is there afterwards.
//!
//! The descriptors (`FALCON_UCODE_DESC_HEADER` and its bit fields, `FALCON_UCODE_DESC_V2`,
//! `FALCON_UCODE_DESC_V3`, `BCRT30_RSA3K_SIG_SIZE`) are declared in [`crate::hw::vbios`] and
//! checked against `src/nvidia/src/kernel/gpu/gsp/kernel_gsp_fwsec.c`; the image layout and sanity
//! checks here follow that file (`s_vbiosFillFlcnUcodeFromDescV2/V3`). The
//! application interface table and the DMEM mapper follow
//! `src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_frts_tu102.c`
//! (`s_vbiosPatchInterfaceData`). Their structures (`FALCON_APPLICATION_INTERFACE_*`,
//! `FWSECLIC_*`) and the interface and command ids are firmware ABI, declared once in
//! [`crate::hw::fw`] and checked against that file; this module only reads and fills them.

// Parses bytes from outside (the VBIOS image): no indexing that can panic, no arithmetic that can
// overflow, as in `crate::vbios`.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use alloc::vec::Vec;
use core::mem::{offset_of, size_of};

use crate::hw::fw::{
    AppInterfaceEntryV1, AppInterfaceHeaderV1, DmemMapperV3, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIGNATURE,
    FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER,
};
use crate::hw::vbios::{
    FalconUcodeDescHeader, FalconUcodeDescV2Raw, FalconUcodeDescV3Raw, BCRT30_RSA3K_SIG_SIZE,
    FALCON_UCODE_DESC_V2_SIZE_60, FALCON_UCODE_DESC_V3_SIZE_44, FALCON_UCODE_ENTRY_APPID_FIRMWARE_SEC_LIC,
    FALCON_UCODE_ENTRY_APPID_FWSEC_DBG, FALCON_UCODE_ENTRY_APPID_FWSEC_PROD,
    NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION, NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE,
    NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE, NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION,
    NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2, NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3,
};
use crate::vbios::source::{slice, struct_at};
use crate::vbios::{FalconUcodeEntry, FalconUcodeTable, Result, Vbios, VbiosError};

pub mod frts;

/// Falcon memories are loaded in 256-byte blocks (`NV_ALIGN_UP(..., 256)` in
/// `kernel_gsp_fwsec.c`).
const FALCON_BLOCK: u32 = 256;

/// `s_vbiosPatchInterfaceData` refuses tables with fewer entries.
const APPIF_MIN_ENTRIES: u8 = 2;

impl Vbios {
    /// The FWSEC ucode of `kind`, with its code, data, signatures and DMEM mapper.
    pub fn fwsec(&self, kind: FwsecKind) -> Result<Fwsec<'_>> {
        let table = self.falcon_ucode_table()?;
        Fwsec::find(self.rom(), &table, kind)
    }
}

/// Which FWSEC signing the chip needs (production or debug fuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwsecKind {
    /// `FALCON_UCODE_ENTRY_APPID_FWSEC_PROD`.
    Prod,
    /// `FALCON_UCODE_ENTRY_APPID_FWSEC_DBG`.
    Debug,
}

impl FwsecKind {
    /// The falcon ucode table application id of this kind.
    pub const fn application_id(self) -> u8 {
        match self {
            Self::Prod => FALCON_UCODE_ENTRY_APPID_FWSEC_PROD,
            Self::Debug => FALCON_UCODE_ENTRY_APPID_FWSEC_DBG,
        }
    }
}

/// `FALCON_UCODE_DESC_V2` (Turing): IMEM and DMEM at their own offsets of the image, loaded by
/// the falcon's boot loader; no signatures in the descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FalconUcodeDescV2 {
    pub stored_size: u32,
    pub uncompressed_size: u32,
    pub virtual_entry: u32,
    pub interface_offset: u32,
    pub imem_phys_base: u32,
    pub imem_load_size: u32,
    pub imem_virt_base: u32,
    pub imem_sec_base: u32,
    pub imem_sec_size: u32,
    /// Offset of DMEM in the image.
    pub dmem_offset: u32,
    pub dmem_phys_base: u32,
    pub dmem_load_size: u32,
    pub alt_imem_load_size: u32,
    pub alt_dmem_load_size: u32,
}

/// `FALCON_UCODE_DESC_V3` (Ampere, Ada): DMEM follows IMEM in the image; the descriptor is
/// followed by `signature_count` RSA-3072 signatures, one per fuse version set in
/// `signature_versions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FalconUcodeDescV3 {
    pub stored_size: u32,
    /// DMEM offset where the chosen signature is patched in (`hsSigDmemAddr`).
    pub pkc_data_offset: u32,
    pub interface_offset: u32,
    pub imem_phys_base: u32,
    pub imem_load_size: u32,
    pub imem_virt_base: u32,
    pub dmem_phys_base: u32,
    pub dmem_load_size: u32,
    pub engine_id_mask: u16,
    /// Which ucode fuse version register to read when choosing the signature.
    pub ucode_id: u8,
    pub signature_count: u8,
    /// Bit n set: a signature for fuse version n is present.
    pub signature_versions: u16,
    pub reserved: u16,
}

/// The FWSEC descriptor in one of the versions Turing..Ada use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FwsecDescriptor {
    V2(FalconUcodeDescV2),
    V3(FalconUcodeDescV3),
}

impl FwsecDescriptor {
    /// Descriptor version (2 or 3).
    pub const fn version(&self) -> u8 {
        match self {
            Self::V2(_) => NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2,
            Self::V3(_) => NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3,
        }
    }
    /// Size of the code to load into IMEM.
    pub const fn imem_load_size(&self) -> u32 {
        match self {
            Self::V2(d) => d.imem_load_size,
            Self::V3(d) => d.imem_load_size,
        }
    }
    /// IMEM physical address to load the code at.
    pub const fn imem_phys_base(&self) -> u32 {
        match self {
            Self::V2(d) => d.imem_phys_base,
            Self::V3(d) => d.imem_phys_base,
        }
    }
    /// IMEM virtual address of the code.
    pub const fn imem_virt_base(&self) -> u32 {
        match self {
            Self::V2(d) => d.imem_virt_base,
            Self::V3(d) => d.imem_virt_base,
        }
    }
    /// Size of the data to load into DMEM.
    pub const fn dmem_load_size(&self) -> u32 {
        match self {
            Self::V2(d) => d.dmem_load_size,
            Self::V3(d) => d.dmem_load_size,
        }
    }
    /// DMEM physical address to load the data at.
    pub const fn dmem_phys_base(&self) -> u32 {
        match self {
            Self::V2(d) => d.dmem_phys_base,
            Self::V3(d) => d.dmem_phys_base,
        }
    }
    /// Offset in DMEM of the application interface table.
    pub const fn interface_offset(&self) -> u32 {
        match self {
            Self::V2(d) => d.interface_offset,
            Self::V3(d) => d.interface_offset,
        }
    }
    /// Offset of DMEM in the ucode image.
    pub const fn dmem_image_offset(&self) -> u32 {
        match self {
            Self::V2(d) => d.dmem_offset,
            Self::V3(d) => d.imem_load_size,
        }
    }
}

/// One entry of the application interface table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppInterfaceEntry {
    /// Interface id ([`FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER`] is the one FRTS needs).
    pub id: u32,
    /// Where the interface's structure is in DMEM.
    pub dmem_offset: u32,
}

/// The application interface table in FWSEC's DMEM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppInterfaceTable {
    /// DMEM offset of the table header.
    pub dmem_offset: u32,
    pub version: u8,
    pub header_size: u8,
    pub entry_size: u8,
    pub entries: Vec<AppInterfaceEntry>,
}

/// The DMEM mapper ("DMAP"): where the driver writes the command FWSEC runs (`init_cmd`) and its
/// arguments (the command-in buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmemMapper {
    /// DMEM offset of the mapper.
    pub dmem_offset: u32,
    pub version: u16,
    pub size: u16,
    pub cmd_in_buffer_offset: u32,
    pub cmd_in_buffer_size: u32,
    pub cmd_out_buffer_offset: u32,
    pub cmd_out_buffer_size: u32,
    pub nvf_img_data_buffer_offset: u32,
    pub nvf_img_data_buffer_size: u32,
    pub printf_buffer_hdr: u32,
    pub ucode_build_time_stamp: u32,
    pub ucode_signature: u32,
    pub init_cmd: u32,
    pub ucode_feature: u32,
    pub ucode_cmd_mask0: u32,
    pub ucode_cmd_mask1: u32,
    pub multi_tgt_tbl: u32,
}

impl DmemMapper {
    /// DMEM offset of the `init_cmd` word the driver sets to [`FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS`].
    ///
    /// The whole mapper was read from inside DMEM, so this never saturates.
    pub const fn init_cmd_dmem_offset(&self) -> u32 {
        self.dmem_offset.saturating_add(offset_of!(DmemMapperV3, init_cmd) as u32)
    }
}

/// The FWSEC ucode as the VBIOS holds it: descriptor, code, data, signatures and the interface
/// the driver patches. Slices borrow from the [`Vbios`] image.
#[derive(Debug, Clone)]
pub struct Fwsec<'a> {
    /// The falcon ucode table entry it was found through.
    pub entry: FalconUcodeEntry,
    /// ROM offset of the descriptor.
    pub desc_offset: u32,
    /// Descriptor size from its header (for v3: fixed part plus signatures).
    pub desc_size: u16,
    /// Flag bits of the descriptor header (bit 0: version available; bit 2: encrypted).
    pub desc_flags: u8,
    /// The descriptor.
    pub descriptor: FwsecDescriptor,
    /// ROM offset of the ucode image (right after the descriptor).
    pub image_offset: u32,
    /// ROM offset of the IMEM contents.
    pub imem_offset: u32,
    /// ROM offset of the DMEM contents.
    pub dmem_offset: u32,
    /// The application interface table in DMEM.
    pub interface: AppInterfaceTable,
    /// The DMEM mapper.
    pub dmem_mapper: DmemMapper,
    imem: &'a [u8],
    dmem: &'a [u8],
    signatures: &'a [u8],
    signature_count: u32,
}

impl<'a> Fwsec<'a> {
    /// Finds the FWSEC of `kind` in the falcon ucode table and parses it.
    ///
    /// Like `s_vbiosParseFwsecUcodeDescFromBit`, the first entry with the kind's application id
    /// (or `FIRMWARE_SEC_LIC`) whose descriptor is v2 or v3 wins.
    pub fn find(rom: &'a [u8], table: &FalconUcodeTable, kind: FwsecKind) -> Result<Self> {
        let wanted = kind.application_id();
        let mut last_error = VbiosError::NoFwsec { application_id: wanted };
        for entry in table
            .entries
            .iter()
            .filter(|e| e.application_id == wanted || e.application_id == FALCON_UCODE_ENTRY_APPID_FIRMWARE_SEC_LIC)
        {
            match Self::parse(rom, *entry) {
                Ok(fwsec) => return Ok(fwsec),
                Err(e) => last_error = e,
            }
        }
        Err(last_error)
    }

    /// Parses the FWSEC whose descriptor `entry` points at.
    pub fn parse(rom: &'a [u8], entry: FalconUcodeEntry) -> Result<Self> {
        let rom_size = u32::try_from(rom.len()).unwrap_or(u32::MAX);
        let desc_offset = entry.desc_offset.ok_or(VbiosError::Truncated {
            what: "FWSEC descriptor",
            offset: u32::MAX,
            len: 4,
            size: rom_size,
        })?;
        let header: FalconUcodeDescHeader = struct_at(rom, "FWSEC descriptor header", desc_offset)?;
        let vdesc = header.vdesc.get();
        if NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION.extract(vdesc)
            != NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE
        {
            return Err(VbiosError::FwsecDescVersionUnavailable { offset: desc_offset });
        }
        // 8- and 16-bit fields: the casts keep every bit.
        let version = NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION.extract(vdesc) as u8;
        let desc_size = NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE.extract(vdesc) as u16;
        let desc_flags = (vdesc & 0xFF) as u8;

        let descriptor = match version {
            NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2 if desc_size >= FALCON_UCODE_DESC_V2_SIZE_60 => {
                let raw: FalconUcodeDescV2Raw = struct_at(rom, "FWSEC descriptor v2", desc_offset)?;
                FwsecDescriptor::V2(FalconUcodeDescV2 {
                    stored_size: raw.stored_size.get(),
                    uncompressed_size: raw.uncompressed_size.get(),
                    virtual_entry: raw.virtual_entry.get(),
                    interface_offset: raw.interface_offset.get(),
                    imem_phys_base: raw.imem_phys_base.get(),
                    imem_load_size: raw.imem_load_size.get(),
                    imem_virt_base: raw.imem_virt_base.get(),
                    imem_sec_base: raw.imem_sec_base.get(),
                    imem_sec_size: raw.imem_sec_size.get(),
                    dmem_offset: raw.dmem_offset.get(),
                    dmem_phys_base: raw.dmem_phys_base.get(),
                    dmem_load_size: raw.dmem_load_size.get(),
                    alt_imem_load_size: raw.alt_imem_load_size.get(),
                    alt_dmem_load_size: raw.alt_dmem_load_size.get(),
                })
            }
            NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3 if desc_size >= FALCON_UCODE_DESC_V3_SIZE_44 => {
                let raw: FalconUcodeDescV3Raw = struct_at(rom, "FWSEC descriptor v3", desc_offset)?;
                FwsecDescriptor::V3(FalconUcodeDescV3 {
                    stored_size: raw.stored_size.get(),
                    pkc_data_offset: raw.pkc_data_offset.get(),
                    interface_offset: raw.interface_offset.get(),
                    imem_phys_base: raw.imem_phys_base.get(),
                    imem_load_size: raw.imem_load_size.get(),
                    imem_virt_base: raw.imem_virt_base.get(),
                    dmem_phys_base: raw.dmem_phys_base.get(),
                    dmem_load_size: raw.dmem_load_size.get(),
                    engine_id_mask: raw.engine_id_mask.get(),
                    ucode_id: raw.ucode_id,
                    signature_count: raw.signature_count,
                    signature_versions: raw.signature_versions.get(),
                    reserved: raw.reserved.get(),
                })
            }
            _ => return Err(VbiosError::UnsupportedFwsecDesc { version, size: desc_size }),
        };

        let layout = |what| VbiosError::FwsecLayout { what };
        let image_offset = desc_offset
            .checked_add(u32::from(desc_size))
            .filter(|&o| o < rom_size)
            .ok_or(layout("ucode image starts past the end of the ROM"))?;

        let (imem_offset, dmem_offset, signatures, signature_count) = match &descriptor {
            FwsecDescriptor::V2(d) => {
                check_v2(d)?;
                let dmem_offset = image_offset
                    .checked_add(d.dmem_offset)
                    .filter(|&o| o < rom_size)
                    .ok_or(layout("DMEM starts past the end of the ROM"))?;
                (image_offset, dmem_offset, &[][..], 0)
            }
            FwsecDescriptor::V3(d) => {
                let image_size = align_up(d.stored_size).ok_or(layout("stored size overflows"))?;
                slice(rom, "FWSEC ucode image", image_offset, image_size)?;
                check_v3(d, image_size)?;
                // Inside the image, checked above, so this cannot fail.
                let dmem_offset =
                    image_offset.checked_add(d.imem_load_size).ok_or(layout("DMEM starts past the end of the ROM"))?;
                // The match above took v3 only with `desc_size >= FALCON_UCODE_DESC_V3_SIZE_44`.
                let signature_bytes = u32::from(
                    desc_size
                        .checked_sub(FALCON_UCODE_DESC_V3_SIZE_44)
                        .ok_or(VbiosError::UnsupportedFwsecDesc { version, size: desc_size })?,
                );
                let count = u32::from(d.signature_count);
                if count.checked_mul(BCRT30_RSA3K_SIG_SIZE).is_none_or(|bytes| bytes > signature_bytes) {
                    return Err(layout("more signatures than the descriptor holds"));
                }
                // Before `image_offset`, which did not overflow.
                let signatures_at = desc_offset
                    .checked_add(u32::from(FALCON_UCODE_DESC_V3_SIZE_44))
                    .ok_or(layout("ucode image starts past the end of the ROM"))?;
                let signatures = slice(rom, "FWSEC signatures", signatures_at, signature_bytes)?;
                (image_offset, dmem_offset, signatures, count)
            }
        };
        let imem = slice(rom, "FWSEC IMEM", imem_offset, descriptor.imem_load_size())?;
        let dmem = slice(rom, "FWSEC DMEM", dmem_offset, descriptor.dmem_load_size())?;
        let interface = read_interface_table(dmem, descriptor.interface_offset())?;
        let dmem_mapper = read_dmem_mapper(dmem, &interface)?;

        Ok(Self {
            entry,
            desc_offset,
            desc_size,
            desc_flags,
            descriptor,
            image_offset,
            imem_offset,
            dmem_offset,
            interface,
            dmem_mapper,
            imem,
            dmem,
            signatures,
            signature_count,
        })
    }

    /// The code to load into IMEM (`imem_load_size` bytes).
    pub fn imem(&self) -> &'a [u8] {
        self.imem
    }

    /// The data to load into DMEM (`dmem_load_size` bytes), before any patching.
    pub fn dmem(&self) -> &'a [u8] {
        self.dmem
    }

    /// Number of signatures the descriptor carries (0 for v2).
    pub fn signature_count(&self) -> u32 {
        self.signature_count
    }

    /// Size of one signature (RSA-3072: 384 bytes).
    pub fn signature_size(&self) -> u32 {
        BCRT30_RSA3K_SIG_SIZE
    }

    /// All signature bytes after the v3 descriptor's fixed part (empty for v2).
    pub fn signatures(&self) -> &'a [u8] {
        self.signatures
    }

    /// The `index`th signature.
    pub fn signature(&self, index: u32) -> Option<&'a [u8]> {
        if index >= self.signature_count {
            return None;
        }
        self.signatures.chunks_exact(BCRT30_RSA3K_SIG_SIZE as usize).nth(index as usize)
    }

    /// The signature to patch in for a chip whose ucode fuse version is `fuse_version`: the one
    /// whose bit in `signature_versions` is `fuse_version`, counting only the bits set below it
    /// (the selection in `s_executeFwsec_TU102`). `None` for v2 or when no signature matches.
    pub fn signature_for_fuse_version(&self, fuse_version: u32) -> Option<&'a [u8]> {
        let FwsecDescriptor::V3(d) = &self.descriptor else {
            return None;
        };
        let versions = u32::from(d.signature_versions);
        let bit = 1u32.checked_shl(fuse_version)?;
        if versions & bit == 0 {
            return None;
        }
        // `bit` is a power of two, so `bit - 1` is the mask of the versions below it.
        self.signature((versions & bit.checked_sub(1)?).count_ones())
    }

    /// ROM offset of the DMEM mapper.
    ///
    /// The mapper was read from inside DMEM, itself inside the ROM, so this never saturates.
    pub fn dmem_mapper_rom_offset(&self) -> u32 {
        self.dmem_offset.saturating_add(self.dmem_mapper.dmem_offset)
    }
}

const fn align_up(value: u32) -> Option<u32> {
    match value.checked_add(FALCON_BLOCK - 1) {
        Some(v) => Some(v & !(FALCON_BLOCK - 1)),
        None => None,
    }
}

/// The checks `s_vbiosFillFlcnUcodeFromDescV2` makes on where code and data land in the falcon
/// memories (the ROM bounds are checked when slicing).
fn check_v2(d: &FalconUcodeDescV2) -> Result<()> {
    let layout = |what| Err(VbiosError::FwsecLayout { what });
    let (Some(code_aligned), Some(data_aligned)) = (align_up(d.imem_load_size), align_up(d.dmem_load_size)) else {
        return layout("load sizes overflow");
    };
    if d.imem_phys_base >= code_aligned
        || d.imem_phys_base.checked_add(d.imem_load_size).is_none_or(|end| end > code_aligned)
    {
        return layout("IMEM physical base outside the code block");
    }
    if d.dmem_phys_base >= data_aligned
        || d.dmem_phys_base.checked_add(d.dmem_load_size).is_none_or(|end| end > data_aligned)
    {
        return layout("DMEM physical base outside the data block");
    }
    Ok(())
}

/// The checks `s_vbiosFillFlcnUcodeFromDescV3` makes inside the `image_size`-byte ucode image.
fn check_v3(d: &FalconUcodeDescV3, image_size: u32) -> Result<()> {
    let layout = |what| Err(VbiosError::FwsecLayout { what });
    if d.imem_load_size > image_size {
        return layout("IMEM larger than the ucode image");
    }
    let data_offset = d.imem_load_size;
    if data_offset >= image_size {
        return layout("DMEM starts past the ucode image");
    }
    if data_offset.checked_add(d.dmem_load_size).is_none_or(|end| end > image_size) {
        return layout("DMEM runs past the ucode image");
    }
    let Some(sig_at) = data_offset.checked_add(d.pkc_data_offset).filter(|&o| o < image_size) else {
        return layout("signature patch location past the ucode image");
    };
    if sig_at.checked_add(BCRT30_RSA3K_SIG_SIZE).is_none_or(|end| end > image_size) {
        return layout("signature patch location runs past the ucode image");
    }
    Ok(())
}

fn read_interface_table(dmem: &[u8], interface_offset: u32) -> Result<AppInterfaceTable> {
    let bad = |what| VbiosError::BadInterfaceTable { what };
    let header: AppInterfaceHeaderV1 = struct_at(dmem, "FWSEC application interface header", interface_offset)
        .map_err(|_| bad("header outside DMEM"))?;
    if usize::from(header.header_size) < size_of::<AppInterfaceHeaderV1>()
        || usize::from(header.entry_size) < size_of::<AppInterfaceEntryV1>()
    {
        return Err(bad("header or entry size too small"));
    }
    if header.entry_count < APPIF_MIN_ENTRIES {
        return Err(bad("fewer than two entries"));
    }
    let first = interface_offset.saturating_add(u32::from(header.header_size));
    let mut entries = Vec::with_capacity(usize::from(header.entry_count));
    for index in 0..u32::from(header.entry_count) {
        // Saturates only past any DMEM, where the read below fails.
        let at = first.saturating_add(index.saturating_mul(u32::from(header.entry_size)));
        let raw: AppInterfaceEntryV1 =
            struct_at(dmem, "FWSEC application interface entry", at).map_err(|_| bad("entry outside DMEM"))?;
        entries.push(AppInterfaceEntry { id: raw.id.get(), dmem_offset: raw.dmem_offset.get() });
    }
    Ok(AppInterfaceTable {
        dmem_offset: interface_offset,
        version: header.version,
        header_size: header.header_size,
        entry_size: header.entry_size,
        entries,
    })
}

fn read_dmem_mapper(dmem: &[u8], interface: &AppInterfaceTable) -> Result<DmemMapper> {
    let entry = interface
        .entries
        .iter()
        .find(|e| e.id == FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER)
        .ok_or(VbiosError::NoDmemMapper)?;
    let at = entry.dmem_offset;
    let raw: DmemMapperV3 = struct_at(dmem, "FWSEC DMEM mapper", at)
        .map_err(|_| VbiosError::FwsecLayout { what: "DMEM mapper outside DMEM" })?;
    if raw.signature.get() != FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIGNATURE {
        return Err(VbiosError::BadDmemMapper { offset: at, found: raw.signature.get() });
    }
    let mapper = DmemMapper {
        dmem_offset: at,
        version: raw.version.get(),
        size: raw.size.get(),
        cmd_in_buffer_offset: raw.cmd_in_buffer_offset.get(),
        cmd_in_buffer_size: raw.cmd_in_buffer_size.get(),
        cmd_out_buffer_offset: raw.cmd_out_buffer_offset.get(),
        cmd_out_buffer_size: raw.cmd_out_buffer_size.get(),
        nvf_img_data_buffer_offset: raw.nvf_img_data_buffer_offset.get(),
        nvf_img_data_buffer_size: raw.nvf_img_data_buffer_size.get(),
        printf_buffer_hdr: raw.printf_buffer_hdr.get(),
        ucode_build_time_stamp: raw.ucode_build_time_stamp.get(),
        ucode_signature: raw.ucode_signature.get(),
        init_cmd: raw.init_cmd.get(),
        ucode_feature: raw.ucode_feature.get(),
        ucode_cmd_mask0: raw.ucode_cmd_mask0.get(),
        ucode_cmd_mask1: raw.ucode_cmd_mask1.get(),
        multi_tgt_tbl: raw.multi_tgt_tbl.get(),
    };
    let dmem_size = u32::try_from(dmem.len()).unwrap_or(u32::MAX);
    if mapper.cmd_in_buffer_offset.checked_add(mapper.cmd_in_buffer_size).is_none_or(|end| end > dmem_size) {
        return Err(VbiosError::FwsecLayout { what: "DMEM mapper command-in buffer outside DMEM" });
    }
    Ok(mapper)
}
