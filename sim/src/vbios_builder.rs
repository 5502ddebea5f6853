//! The model's VBIOS image, built in the documented format so the driver's parser
//! (`nvgpu::vbios`) and NVIDIA's rules accept it, and read by the driver through `NV_PROM_DATA`.
//! The structures and constants it writes are `nvgpu::hw::vbios`'s, the same declarations the
//! parser reads with, checked against NVIDIA's files; where each thing goes and what it holds is
//! the builder's own.
//!
//! # Layout (ROM offsets)
//! ```text
//! 0x0000  image 0: x86 PC-AT (code type 0x00), 0xAA55, 0x1000 bytes        PCI Firmware Spec
//!         +0x40 PCIR (length 0x18, revision 0), +0x60 NPDE 1.1             pci_exp_table.h
//!         +0x80 BIT header (v1.00, 6-byte tokens): 'B' BIOSDATA, 'p' FALCON_DATA
//!         +0xA0 BIT_DATA_BIOSDATA_V2 (version per family, see bios_version)  rom_nvswitch.h
//!         +0xD0 BIT_DATA_FALCON_DATA_V2 -> falcon ucode table                kernel_gsp_fwsec.c
//!         +0x100 an ASCII note saying what this ROM is
//! 0x1000  image 1: EFI (code type 0x03), 0xAA55, 0x400 bytes: a header-only stub with no EFI
//!         driver; PCIR (length 0x1C, revision 3) marks it last for system firmware, its NPDE
//!         1.0 private last-image byte says more follow (as on real boards)
//! 0x1400  image 2: NVIDIA falcon ucodes (code type 0xE0), "NV" 0x4E56 + "NPDS", last
//!         +0x40 NPDE 1.1 (private last-image bit set)
//!         +0x60 falcon ucode table v1: FWSEC_PROD (0x85), FWSEC_DBG (0x45), target 0x07
//!         +0x100 FWSEC_PROD descriptor (v3, or v2 on Turing/GA100), its signatures, its image
//!         then FWSEC_DBG's, the same way
//! ```
//! Pointers in the falcon data token and the ucode table count from the expansion ROM offset
//! (image 2's offset less image 0's size, `s_locateExpansionRoms`), so they skip the EFI image.
//!
//! # The FWSEC images
//! IMEM ([`FWSEC_IMEM_SIZE`]) is a model ucode ([`crate::ucode`]): application FWSEC, interface at
//! [`FWSEC_INTERFACE_OFFSET`]; heavy-secure; PKC-signed on GA10x and later. DMEM
//! ([`FWSEC_DMEM_SIZE`]):
//! ```text
//! 0x01C  FALCON_APPLICATION_INTERFACE_HEADER_V1 {1, 4, 8, 2}
//! 0x020  entries: {DMEMMAPPER (4), 0x100}, {5, 0x140}   (id 5 is unnamed in NVIDIA's source;
//!                                                          every sample ROM has it; unused here)
//! 0x100  FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3 "DMAP" v3, size 0x40,
//!        command-in buffer 0x200 (0x40 bytes), command-out buffer 0x240 (0x40 bytes), init_cmd 0
//! 0x400  signature patch location (v3 PKCDataOffset; 384 zero bytes until the driver patches)
//! ```
//! v3 descriptors carry [`FWSEC_SIGNATURE_COUNT`] signatures for the fuse versions in
//! [`FWSEC_SIGNATURE_VERSIONS`] (0, 2, 3: the default fuse selects version 2, the *second*
//! signature, so a driver indexing by version instead of counting bits picks the wrong one).
//! Sizes and values not fixed by NVIDIA's format are the model's choices, mirroring the sample
//! ROMs in `../shared/testdata/vbios/` where that helps (DMAP version 3 and size 0x40, interface
//! header {1, 4, 8, 2}, ucode id 9, engine mask 0x400, target id 7).

use alloc::vec;
use alloc::vec::Vec;
use core::mem::size_of;

use nvgpu::chip::Chipset;
use nvgpu::hw::fw::{
    FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIGNATURE, FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER,
};
use nvgpu::hw::fw::{
    FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIZE, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_VERSION,
    FALCON_APPLICATION_INTERFACE_ENTRY_V1_SIZE, FALCON_APPLICATION_INTERFACE_HEADER_V1_SIZE,
    FALCON_APPLICATION_INTERFACE_HEADER_V1_VERSION,
};
use nvgpu::hw::vbios::{
    BitDataBiosdataV2, BitDataFalconDataV2, BitHeaderV1, BitTokenV1, FalconUcodeDescV2Raw, FalconUcodeDescV3Raw,
    FalconUcodeTableEntryV1, FalconUcodeTableHdrV1, NvPciDataExtStruct, PciDataStruct,
};
use nvgpu::hw::vbios::{
    BIT_DATA_BIOSDATA_V2_SIZE, BIT_DATA_FALCON_DATA_V2_SIZE_4, BIT_DATA_FALCON_DATA_VERSION_2, BIT_HEADER_ID,
    BIT_HEADER_SIGNATURE, BIT_HEADER_V1_00_SIZE, BIT_TOKEN_BIOSDATA, BIT_TOKEN_FALCON_DATA, BIT_TOKEN_V1_00_SIZE_6,
    EFI_IMAGE_MACHINE_X64, EFI_IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER, EFI_PCI_EXPANSION_ROM_HEADER_EFISIGNATURE,
    FALCON_UCODE_DESC_V2_SIZE_60, FALCON_UCODE_DESC_V3_SIZE_44, FALCON_UCODE_ENTRY_APPID_FWSEC_DBG,
    FALCON_UCODE_ENTRY_APPID_FWSEC_PROD, FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6, FALCON_UCODE_TABLE_HDR_V1_SIZE_6,
    FALCON_UCODE_TABLE_HDR_V1_VERSION, NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE,
    NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE, NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION,
    NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2, NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3,
    NV_PCI_DATA_EXT_REV_10, NV_PCI_DATA_EXT_REV_11, NV_PCI_DATA_EXT_SIG, OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR,
    PCI_DATA_STRUCT_SIGNATURE, PCI_DATA_STRUCT_SIGNATURE_NV, PCI_EXP_ROM_SIGNATURE, PCI_EXP_ROM_SIGNATURE_NV,
    PCI_LAST_IMAGE, PCI_ROM_IMAGE_BLOCK_SIZE,
};
use nvgpu::vbios::CodeType;
use zerocopy::byteorder::little_endian::{U16, U32};
use zerocopy::{Immutable, IntoBytes};

use crate::board::ModelConfig;
use crate::fwsec::{AppInterfaceEntryV1, AppInterfaceHeaderV1, DmemMapperV3};
use crate::ucode::{self, UcodeSpec, APPLICATION_FWSEC, FLAG_DEBUG_SIGNED, FLAG_HS, FLAG_PKC, SIGNATURE_SIZE};

/// Bytes of the x86 image.
pub const X86_IMAGE_SIZE: u32 = 0x1000;
/// Bytes of the EFI stub image.
pub const EFI_IMAGE_SIZE: u32 = 0x400;
/// ROM offset of the falcon ucode image.
pub const FWSEC_ROM_IMAGE_OFFSET: u32 = X86_IMAGE_SIZE + EFI_IMAGE_SIZE;
/// The base the falcon data pointers count from.
pub const EXPANSION_ROM_OFFSET: u32 = FWSEC_ROM_IMAGE_OFFSET - X86_IMAGE_SIZE;

const PCIR_AT: u32 = 0x40;
const X86_NPDE_AT: u32 = 0x60;
const BIT_AT: u32 = 0x80;
const BIOSDATA_AT: u32 = 0xA0;
const FALCON_DATA_AT: u32 = 0xD0;
const NOTE_AT: u32 = 0x100;
const EFI_PCIR_AT: u32 = 0x20;
const E0_PCIR_AT: u32 = 0x20;
const TABLE_AT: u32 = 0x60;
const FIRST_DESC_AT: u32 = 0x100;

/// Bytes of FWSEC's IMEM image.
pub const FWSEC_IMEM_SIZE: u32 = 0x400;
/// Bytes of FWSEC's DMEM image.
pub const FWSEC_DMEM_SIZE: u32 = 0x800;
/// DMEM offset of the application interface table.
pub const FWSEC_INTERFACE_OFFSET: u32 = 0x1C;
/// DMEM offset of the DMEM mapper.
pub const FWSEC_DMAP_OFFSET: u32 = 0x100;
/// DMEM offset of the second (unused) interface entry's structure.
pub const FWSEC_ENTRY5_OFFSET: u32 = 0x140;
/// Id of the second interface entry (as in every sample ROM).
pub const FWSEC_ENTRY5_ID: u32 = 5;
/// DMEM offset and size of the command-in buffer.
pub const FWSEC_CMD_IN_OFFSET: u32 = 0x200;
/// See [`FWSEC_CMD_IN_OFFSET`].
pub const FWSEC_CMD_IN_SIZE: u32 = 0x40;
/// DMEM offset and size of the command-out buffer.
pub const FWSEC_CMD_OUT_OFFSET: u32 = 0x240;
/// See [`FWSEC_CMD_OUT_OFFSET`].
pub const FWSEC_CMD_OUT_SIZE: u32 = 0x40;
/// DMEM offset where the driver patches the chosen signature (v3 `PKCDataOffset`).
pub const FWSEC_PKC_DATA_OFFSET: u32 = 0x400;
/// The fuse ucode id of the model FWSEC (`UcodeId`; 9 as in the sample GA104 ROM).
pub const FWSEC_UCODE_ID: u8 = 9;
/// `EngineIdMask` of the model FWSEC (0x400 as in the sample GA104 ROM).
pub const FWSEC_ENGINE_ID_MASK: u16 = 0x400;
/// Fuse versions with a signature: bits 0, 2, 3.
pub const FWSEC_SIGNATURE_VERSIONS: u16 = 0b1101;
/// One signature per bit of [`FWSEC_SIGNATURE_VERSIONS`].
pub const FWSEC_SIGNATURE_COUNT: u8 = FWSEC_SIGNATURE_VERSIONS.count_ones() as u8;
/// Falcon ucode table target id of FWSEC (as in the sample ROMs).
pub const FWSEC_TARGET_ID: u8 = 0x07;
/// Falcon ucode table header version/size as the model writes it.
const TABLE_ENTRY_COUNT: u8 = 2;

// The PCIR length the builder writes for the x86 and FWSEC images is the structure's own size.
const _: () = assert!(size_of::<PciDataStruct>() == 0x18);

/// Which FWSEC descriptor a chip's VBIOS carries: v2 where FWSEC runs through the generic
/// bootloader (Turing, GA100), v3 elsewhere (GA10x, Ada, Hopper, Blackwell).
pub const fn fwsec_descriptor_version(chipset: Chipset) -> u8 {
    match crate::silicon::of(chipset.family()).fwsec_descriptor {
        crate::silicon::FwsecDescriptor::V2 => NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2,
        crate::silicon::FwsecDescriptor::V3 => NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3,
    }
}

/// The BIOSDATA `Version` of the model VBIOS: NVIDIA's per-family major byte (0x90 Turing,
/// 0x92 GA100, 0x94 GA10x, 0x95 Ada, 0x96 Hopper, as the sample ROMs and public dumps show; 0x97
/// GB10x and 0x98 GB20x by the same pattern), then the chip id, e.g. GA102 "94.01.72.00".
pub const fn bios_version(chipset: Chipset) -> u32 {
    let major = crate::silicon::of(chipset.family()).bios_major as u32;
    (major << 24) | ((chipset.chip_id() as u32) << 8)
}

/// BIOSDATA `OemVersion` of every model VBIOS.
pub const BIOS_OEM_VERSION: u8 = 0x5E;

/// Where one FWSEC ended up in the ROM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FwsecPlacement {
    /// Falcon ucode table application id (`FALCON_UCODE_ENTRY_APPID_FWSEC_PROD` / `FALCON_UCODE_ENTRY_APPID_FWSEC_DBG`).
    pub application_id: u8,
    /// ROM offset of the descriptor.
    pub desc_offset: u32,
    /// Descriptor size (v3: with signatures).
    pub desc_size: u32,
    /// ROM offset of IMEM (the ucode image).
    pub imem_offset: u32,
    /// ROM offset of DMEM.
    pub dmem_offset: u32,
    /// Checksum in the IMEM image's model ucode header.
    pub image_checksum: u32,
}

/// The built ROM and where its parts are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuiltVbios {
    pub rom: Vec<u8>,
    /// (ROM offset, size, code type) of each image.
    pub images: Vec<(u32, u32, CodeType)>,
    pub bit_offset: u32,
    pub falcon_table_offset: u32,
    /// FWSEC_PROD, then FWSEC_DBG.
    pub fwsec: [FwsecPlacement; 2],
    /// 2 or 3.
    pub descriptor_version: u8,
}

fn put<T: IntoBytes + Immutable>(rom: &mut [u8], at: u32, value: &T) {
    let bytes = value.as_bytes();
    // Offsets are the builder's own constants and computed sizes, checked by the layout tests.
    if let Some(dst) = rom.get_mut(at as usize..at as usize + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

fn put_bytes(rom: &mut [u8], at: u32, bytes: &[u8]) {
    if let Some(dst) = rom.get_mut(at as usize..at as usize + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

fn class_code(config: &ModelConfig) -> [u8; 3] {
    // Programming interface, sub-class, base class (PCIR byte order).
    [config.pci.prog_if, (config.pci.class & 0xFF) as u8, (config.pci.class >> 8) as u8]
}

#[allow(clippy::too_many_arguments)]
fn put_pci_headers(
    rom: &mut [u8],
    image_at: u32,
    rom_signature: u16,
    pcir_at: u32,
    pcir_signature: u32,
    pcir_length: u16,
    pcir_revision: u8,
    config: &ModelConfig,
    image_size: u32,
    code_type: CodeType,
    pcir_last: bool,
    npde: (u16, u16, bool),
) {
    let blocks = (image_size / PCI_ROM_IMAGE_BLOCK_SIZE) as u16;
    put(rom, image_at, &U16::new(rom_signature));
    put(rom, image_at + OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR, &U16::new(pcir_at as u16));
    let pcir = PciDataStruct {
        signature: U32::new(pcir_signature),
        vendor_id: U16::new(config.pci.vendor_id),
        device_id: U16::new(config.pci.device_id),
        device_list_ptr: U16::new(0),
        length: U16::new(pcir_length),
        revision: pcir_revision,
        class_code: class_code(config),
        image_length: U16::new(blocks),
        vendor_rom_revision: U16::new(1),
        code_type: code_type.raw(),
        last_image: if pcir_last { PCI_LAST_IMAGE } else { 0 },
        max_runtime_image_length: U16::new(0),
    };
    put(rom, image_at + pcir_at, &pcir);
    // The NPDE sits at the PCIR's end rounded up to 16 bytes (`s_locateExpansionRoms`).
    let (revision, length, last) = npde;
    let npde_at = (image_at + pcir_at + u32::from(pcir_length) + 0xF) & !0xF;
    let ext = NvPciDataExtStruct {
        signature: U32::new(NV_PCI_DATA_EXT_SIG),
        revision: U16::new(revision),
        length: U16::new(length),
        subimage_length: U16::new(blocks),
        private_last_image: if last { PCI_LAST_IMAGE } else { 0 },
        flags: 0,
    };
    put(rom, npde_at, &ext);
}

/// The FWSEC DMEM image (before the driver patches it).
pub fn fwsec_dmem() -> Vec<u8> {
    let mut dmem = vec![0u8; FWSEC_DMEM_SIZE as usize];
    let header = AppInterfaceHeaderV1 {
        version: FALCON_APPLICATION_INTERFACE_HEADER_V1_VERSION,
        header_size: FALCON_APPLICATION_INTERFACE_HEADER_V1_SIZE,
        entry_size: FALCON_APPLICATION_INTERFACE_ENTRY_V1_SIZE,
        entry_count: 2,
    };
    put(&mut dmem, FWSEC_INTERFACE_OFFSET, &header);
    let entries_at = FWSEC_INTERFACE_OFFSET + u32::from(FALCON_APPLICATION_INTERFACE_HEADER_V1_SIZE);
    let mapper_entry = AppInterfaceEntryV1 {
        id: U32::new(FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER),
        dmem_offset: U32::new(FWSEC_DMAP_OFFSET),
    };
    let other_entry = AppInterfaceEntryV1 { id: U32::new(FWSEC_ENTRY5_ID), dmem_offset: U32::new(FWSEC_ENTRY5_OFFSET) };
    put(&mut dmem, entries_at, &mapper_entry);
    put(&mut dmem, entries_at + u32::from(FALCON_APPLICATION_INTERFACE_ENTRY_V1_SIZE), &other_entry);
    let mapper = DmemMapperV3 {
        signature: U32::new(FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIGNATURE),
        version: U16::new(FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_VERSION),
        size: U16::new(FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIZE),
        cmd_in_buffer_offset: U32::new(FWSEC_CMD_IN_OFFSET),
        cmd_in_buffer_size: U32::new(FWSEC_CMD_IN_SIZE),
        cmd_out_buffer_offset: U32::new(FWSEC_CMD_OUT_OFFSET),
        cmd_out_buffer_size: U32::new(FWSEC_CMD_OUT_SIZE),
        nvf_img_data_buffer_offset: U32::new(0),
        nvf_img_data_buffer_size: U32::new(0),
        printf_buffer_hdr: U32::new(0),
        ucode_build_time_stamp: U32::new(0),
        ucode_signature: U32::new(0),
        init_cmd: U32::new(0),
        ucode_feature: U32::new(0),
        ucode_cmd_mask0: U32::new(0),
        ucode_cmd_mask1: U32::new(0),
        multi_tgt_tbl: U32::new(0),
    };
    put(&mut dmem, FWSEC_DMAP_OFFSET, &mapper);
    dmem
}

/// The FWSEC IMEM image (a model ucode) for `chipset`, production or debug signed.
pub fn fwsec_imem(chipset: Chipset, debug: bool) -> Vec<u8> {
    let pkc = fwsec_descriptor_version(chipset) == NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3;
    let mut flags = FLAG_HS;
    if pkc {
        flags |= FLAG_PKC;
    }
    if debug {
        flags |= FLAG_DEBUG_SIGNED;
    }
    ucode::build_image(&UcodeSpec {
        application_id: APPLICATION_FWSEC,
        interface_offset: FWSEC_INTERFACE_OFFSET,
        image_size: FWSEC_IMEM_SIZE,
        flags,
        ucode_id: if pkc { u32::from(FWSEC_UCODE_ID) } else { 0 },
        engine_id_mask: if pkc { u32::from(FWSEC_ENGINE_ID_MASK) } else { 0 },
    })
}

/// Writes one FWSEC (descriptor, signatures, IMEM, DMEM) at ROM offset `at`; returns where it
/// put things and the first free offset after it.
fn put_fwsec(rom: &mut Vec<u8>, at: u32, chipset: Chipset, application_id: u8) -> (FwsecPlacement, u32) {
    let debug = application_id == FALCON_UCODE_ENTRY_APPID_FWSEC_DBG;
    let imem = fwsec_imem(chipset, debug);
    let dmem = fwsec_dmem();
    let checksum = ucode::parse_header(&imem).map(|h| h.checksum.get()).unwrap_or(0);
    let image_size = FWSEC_IMEM_SIZE + FWSEC_DMEM_SIZE;
    let version = fwsec_descriptor_version(chipset);
    let vdesc = |size: u32| {
        NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE
            | (u32::from(version) << NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION.first)
            | (size << NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE.first)
    };
    let desc_size = if version == NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3 {
        u32::from(FALCON_UCODE_DESC_V3_SIZE_44) + u32::from(FWSEC_SIGNATURE_COUNT) * SIGNATURE_SIZE as u32
    } else {
        u32::from(FALCON_UCODE_DESC_V2_SIZE_60)
    };
    let imem_at = at + desc_size;
    let dmem_at = imem_at + FWSEC_IMEM_SIZE;
    let end = dmem_at + FWSEC_DMEM_SIZE;
    if rom.len() < end as usize {
        rom.resize(end as usize, 0);
    }
    if version == NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3 {
        let desc = FalconUcodeDescV3Raw {
            vdesc: U32::new(vdesc(desc_size)),
            stored_size: U32::new(image_size),
            pkc_data_offset: U32::new(FWSEC_PKC_DATA_OFFSET),
            interface_offset: U32::new(FWSEC_INTERFACE_OFFSET),
            imem_phys_base: U32::new(0),
            imem_load_size: U32::new(FWSEC_IMEM_SIZE),
            imem_virt_base: U32::new(0),
            dmem_phys_base: U32::new(0),
            dmem_load_size: U32::new(FWSEC_DMEM_SIZE),
            engine_id_mask: U16::new(FWSEC_ENGINE_ID_MASK),
            ucode_id: FWSEC_UCODE_ID,
            signature_count: FWSEC_SIGNATURE_COUNT,
            signature_versions: U16::new(FWSEC_SIGNATURE_VERSIONS),
            reserved: U16::new(0),
        };
        put(rom, at, &desc);
        let mut sig_at = at + u32::from(FALCON_UCODE_DESC_V3_SIZE_44);
        for fuse_version in (0..16).filter(|v| FWSEC_SIGNATURE_VERSIONS & (1 << v) != 0) {
            put_bytes(rom, sig_at, &ucode::model_signature(checksum, fuse_version, debug));
            sig_at += SIGNATURE_SIZE as u32;
        }
    } else {
        let desc = FalconUcodeDescV2Raw {
            vdesc: U32::new(vdesc(desc_size)),
            stored_size: U32::new(image_size),
            uncompressed_size: U32::new(image_size),
            virtual_entry: U32::new(0),
            interface_offset: U32::new(FWSEC_INTERFACE_OFFSET),
            imem_phys_base: U32::new(0),
            imem_load_size: U32::new(FWSEC_IMEM_SIZE),
            imem_virt_base: U32::new(0),
            // All of IMEM is the secure part (the model ucode is heavy-secure throughout).
            imem_sec_base: U32::new(0),
            imem_sec_size: U32::new(FWSEC_IMEM_SIZE),
            dmem_offset: U32::new(FWSEC_IMEM_SIZE),
            dmem_phys_base: U32::new(0),
            dmem_load_size: U32::new(FWSEC_DMEM_SIZE),
            alt_imem_load_size: U32::new(FWSEC_IMEM_SIZE),
            alt_dmem_load_size: U32::new(FWSEC_DMEM_SIZE),
        };
        put(rom, at, &desc);
    }
    put_bytes(rom, imem_at, &imem);
    put_bytes(rom, dmem_at, &dmem);
    let placement = FwsecPlacement {
        application_id,
        desc_offset: at,
        desc_size,
        imem_offset: imem_at,
        dmem_offset: dmem_at,
        image_checksum: checksum,
    };
    (placement, end)
}

const NOTE: &[u8] = b"NVIDIA GPU model VBIOS, built by sim/src/vbios_builder.rs. Not NVIDIA's.\0";

/// Builds the VBIOS of the model GPU `config`.
pub fn build(config: &ModelConfig) -> BuiltVbios {
    let chipset = config.chipset;
    let mut rom = vec![0u8; FWSEC_ROM_IMAGE_OFFSET as usize];

    // Image 0: x86. Byte 2 is the legacy initialization size (512-byte units), byte 3 a RETF so
    // that a legacy BIOS calling this ROM's entry returns at once.
    put_pci_headers(
        &mut rom,
        0,
        PCI_EXP_ROM_SIGNATURE,
        PCIR_AT,
        PCI_DATA_STRUCT_SIGNATURE,
        0x18,
        0,
        config,
        X86_IMAGE_SIZE,
        CodeType::X86PcAt,
        false,
        (NV_PCI_DATA_EXT_REV_11, 0x14, false),
    );
    debug_assert_eq!((PCIR_AT + 0x18 + 0xF) & !0xF, X86_NPDE_AT);
    rom[2] = (X86_IMAGE_SIZE / PCI_ROM_IMAGE_BLOCK_SIZE) as u8;
    rom[3] = 0xCB;
    put_bytes(&mut rom, NOTE_AT, NOTE);

    // BIT, BIOSDATA, FALCON_DATA.
    let tokens = [
        BitTokenV1 {
            id: BIT_TOKEN_BIOSDATA,
            data_version: 2,
            data_size: U16::new(BIT_DATA_BIOSDATA_V2_SIZE),
            data_ptr: U16::new(BIOSDATA_AT as u16),
        },
        BitTokenV1 {
            id: BIT_TOKEN_FALCON_DATA,
            data_version: BIT_DATA_FALCON_DATA_VERSION_2,
            data_size: U16::new(BIT_DATA_FALCON_DATA_V2_SIZE_4),
            data_ptr: U16::new(FALCON_DATA_AT as u16),
        },
    ];
    let mut header = BitHeaderV1 {
        id: U16::new(BIT_HEADER_ID),
        signature: U32::new(BIT_HEADER_SIGNATURE),
        bcd_version: U16::new(0x0100),
        header_size: BIT_HEADER_V1_00_SIZE,
        token_size: BIT_TOKEN_V1_00_SIZE_6,
        token_entries: tokens.len() as u8,
        header_checksum: 0,
    };
    // The header's bytes sum to 0 mod 256 (`s_vbiosFindBitHeader`).
    let sum = header.as_bytes().iter().fold(0u8, |a, b| a.wrapping_add(*b));
    header.header_checksum = 0u8.wrapping_sub(sum);
    put(&mut rom, BIT_AT, &header);
    for (index, token) in tokens.iter().enumerate() {
        put(
            &mut rom,
            BIT_AT + u32::from(BIT_HEADER_V1_00_SIZE) + index as u32 * u32::from(BIT_TOKEN_V1_00_SIZE_6),
            token,
        );
    }
    let biosdata = BitDataBiosdataV2 {
        version: U32::new(bios_version(chipset)),
        oem_version: BIOS_OEM_VERSION,
        checksum: 0,
        int15_callbacks_post: U16::new(0),
        int15_callbacks_system: U16::new(0),
        frame_count: U16::new(0),
        reserved1: U32::new(0),
        reserved2: U32::new(0),
        max_heads_at_post: 0,
        memory_size_report: 0,
        horizontal_scale_factor: 0,
        vertical_scale_factor: 0,
        data_table_ptr: U16::new(0),
        rom_pack_ptr: U16::new(0),
        applied_rom_packs_ptr: U16::new(0),
        applied_rom_pack_max: 0,
        applied_rom_pack_count: 0,
        module_map_external: 0,
        compression_info_ptr: U32::new(0),
    };
    put(&mut rom, BIOSDATA_AT, &biosdata);
    let table_offset = FWSEC_ROM_IMAGE_OFFSET + TABLE_AT;
    let falcon_data = BitDataFalconDataV2 { falcon_ucode_table_ptr: U32::new(table_offset - EXPANSION_ROM_OFFSET) };
    put(&mut rom, FALCON_DATA_AT, &falcon_data);

    // Image 1: EFI stub. EFI PCI expansion ROM header: initialization size at 2, signature 0x0EF1
    // at 4, subsystem at 8, machine type at 0xA, compression 0 at 0xC, image offset 0 at 0x16
    // (no EFI driver in the model's ROM).
    let efi = X86_IMAGE_SIZE;
    put_pci_headers(
        &mut rom,
        efi,
        PCI_EXP_ROM_SIGNATURE,
        EFI_PCIR_AT,
        PCI_DATA_STRUCT_SIGNATURE,
        0x1C,
        3,
        config,
        EFI_IMAGE_SIZE,
        CodeType::Efi,
        true,
        (NV_PCI_DATA_EXT_REV_10, 0x10, false),
    );
    put(&mut rom, efi + 2, &U16::new((EFI_IMAGE_SIZE / PCI_ROM_IMAGE_BLOCK_SIZE) as u16));
    put(&mut rom, efi + 4, &U32::new(EFI_PCI_EXPANSION_ROM_HEADER_EFISIGNATURE));
    put(&mut rom, efi + 8, &U16::new(EFI_IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER));
    put(&mut rom, efi + 0xA, &U16::new(EFI_IMAGE_MACHINE_X64));

    // Image 2: falcon ucodes.
    let e0 = FWSEC_ROM_IMAGE_OFFSET;
    let (prod, after_prod) = put_fwsec(&mut rom, e0 + FIRST_DESC_AT, chipset, FALCON_UCODE_ENTRY_APPID_FWSEC_PROD);
    let dbg_at = after_prod.div_ceil(0x100) * 0x100;
    let (dbg, after_dbg) = put_fwsec(&mut rom, dbg_at, chipset, FALCON_UCODE_ENTRY_APPID_FWSEC_DBG);
    let e0_size = (after_dbg - e0).div_ceil(PCI_ROM_IMAGE_BLOCK_SIZE) * PCI_ROM_IMAGE_BLOCK_SIZE;
    rom.resize((e0 + e0_size) as usize, 0);
    put_pci_headers(
        &mut rom,
        e0,
        PCI_EXP_ROM_SIGNATURE_NV,
        E0_PCIR_AT,
        PCI_DATA_STRUCT_SIGNATURE_NV,
        0x18,
        0,
        config,
        e0_size,
        CodeType::NvidiaFwsec,
        true,
        (NV_PCI_DATA_EXT_REV_11, 0x14, true),
    );
    let version = fwsec_descriptor_version(chipset);
    let table = FalconUcodeTableHdrV1 {
        version: FALCON_UCODE_TABLE_HDR_V1_VERSION,
        header_size: FALCON_UCODE_TABLE_HDR_V1_SIZE_6,
        entry_size: FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6,
        entry_count: TABLE_ENTRY_COUNT,
        desc_version: version,
        desc_size: if version == NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3 {
            FALCON_UCODE_DESC_V3_SIZE_44 as u8
        } else {
            FALCON_UCODE_DESC_V2_SIZE_60 as u8
        },
    };
    put(&mut rom, table_offset, &table);
    for (index, placement) in [prod, dbg].iter().enumerate() {
        let entry = FalconUcodeTableEntryV1 {
            application_id: placement.application_id,
            target_id: FWSEC_TARGET_ID,
            desc_ptr: U32::new(placement.desc_offset - EXPANSION_ROM_OFFSET),
        };
        let at = table_offset
            + u32::from(FALCON_UCODE_TABLE_HDR_V1_SIZE_6)
            + index as u32 * u32::from(FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6);
        put(&mut rom, at, &entry);
    }

    BuiltVbios {
        rom,
        images: vec![
            (0, X86_IMAGE_SIZE, CodeType::X86PcAt),
            (efi, EFI_IMAGE_SIZE, CodeType::Efi),
            (e0, e0_size, CodeType::NvidiaFwsec),
        ],
        bit_offset: BIT_AT,
        falcon_table_offset: table_offset,
        fwsec: [prod, dbg],
        descriptor_version: version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvgpu::fwsec::{FwsecDescriptor, FwsecKind};
    use nvgpu::vbios::Vbios;

    #[test]
    fn every_chip_parses_from_bytes() {
        for &chip in Chipset::ALL {
            let built = build(&ModelConfig::for_chipset(chip));
            let vbios = Vbios::from_bytes(&built.rom).unwrap_or_else(|e| panic!("{chip}: {e}"));
            assert_eq!(vbios.images().len(), 3, "{chip}");
            assert_eq!(vbios.expansion_rom_offset(), EXPANSION_ROM_OFFSET);
            assert_eq!(vbios.version().map(|v| v.version), Some(bios_version(chip)));
            for (kind, placement) in [(FwsecKind::Prod, built.fwsec[0]), (FwsecKind::Debug, built.fwsec[1])] {
                let fwsec = vbios.fwsec(kind).unwrap_or_else(|e| panic!("{chip} {kind:?}: {e}"));
                assert_eq!(fwsec.desc_offset, placement.desc_offset);
                assert_eq!(fwsec.imem_offset, placement.imem_offset);
                assert_eq!(fwsec.dmem_mapper.dmem_offset, FWSEC_DMAP_OFFSET);
                assert_eq!(fwsec.dmem_mapper.cmd_in_buffer_offset, FWSEC_CMD_IN_OFFSET);
                match fwsec.descriptor {
                    FwsecDescriptor::V3(d) => {
                        assert_eq!(built.descriptor_version, 3);
                        assert_eq!(d.signature_count, FWSEC_SIGNATURE_COUNT);
                        assert_eq!(fwsec.signature_count(), 3);
                    }
                    FwsecDescriptor::V2(_) => {
                        assert_eq!(built.descriptor_version, 2);
                        assert!(chip.needs_fwsec_bootloader());
                    }
                }
            }
        }
    }
}
