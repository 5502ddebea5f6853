//! Facts of the VBIOS formats: the images of the PCI expansion ROM (`pci_exp_table.h`), the NVGI
//! (IFR) header some flash dumps begin with (`dev_bus.h`) and the ROM directory behind a v3 one
//! (`kernel_gsp_vbios_tu102.c`), the BIT, the falcon ucode table and the FWSEC descriptors
//! (`kernel_gsp_fwsec.c`), the BIOSDATA block and NVIDIA's vendor id (`rom_nvswitch.h`), all
//! 535.261.03. The driver's parser (`crate::vbios`, `crate::fwsec`) reads them and the model's
//! VBIOS builder (`sim::vbios_builder`) writes them, both from these declarations.
//!
//! The constants are checked against their files by the header conformance test. The structures
//! are checked by `tests/tests/fw_layout.rs`: the PCI ones ([`PCI_LAYOUTS`]), which NVIDIA
//! declares packed, with the C compiler; the BIT's, BIOSDATA's and the falcon ucode table's
//! ([`PACKED_LAYOUTS`]), which NVIDIA declares as naturally aligned C structs and reads packed by
//! a format string (`BIT_HEADER_V1_00_FMT` is `"1w1d1w4b"`), against that string and the
//! struct's member order.
//!
//! A few format facts are in no NVIDIA file (the UEFI specification's, sizes only a format string
//! gives, numbers RM writes as literals in its code); each says so where it is declared.

use core::mem::{offset_of, size_of};

use zerocopy::byteorder::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::headers;
use super::layout::{c_struct, StructLayout};
use crate::constants;

// ---------------------------------------------------------------------------------------------
// The PCI expansion ROM.

constants! {
    /// Facts of the PCI expansion ROM's images.
    pub const PCI_EXP_TABLE_FACTS;

    /// ROM header signature 0xAA55 (bytes 55 AA), as the PCI Firmware Specification has it.
    pub PCI_EXP_ROM_SIGNATURE: u16 = 0xAA55 in headers::PCI_EXP_TABLE;
    /// NVIDIA's alternative ROM signature "NV" (bytes 56 4E), which the images after the EFI one
    /// carry.
    pub PCI_EXP_ROM_SIGNATURE_NV: u16 = 0x4E56 in headers::PCI_EXP_TABLE;
    /// A second alternative ROM signature of NVIDIA's.
    pub PCI_EXP_ROM_SIGNATURE_NV2: u16 = 0xBB77 in headers::PCI_EXP_TABLE;
    /// Where the ROM header keeps the 16-bit pointer to the PCI data structure (PCI Firmware
    /// Specification).
    pub OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR: u32 = 0x18 in headers::PCI_EXP_TABLE;
    /// "PCIR" (PCI Firmware Specification).
    pub PCI_DATA_STRUCT_SIGNATURE: u32 = 0x5249_4350 in headers::PCI_EXP_TABLE;
    /// "NPDS", NVIDIA's alternative PCI data structure signature.
    pub PCI_DATA_STRUCT_SIGNATURE_NV: u32 = 0x5344_504E in headers::PCI_EXP_TABLE;
    /// "RGIS", a second alternative.
    pub PCI_DATA_STRUCT_SIGNATURE_NV2: u32 = 0x5349_4752 in headers::PCI_EXP_TABLE;
    /// Bit 7 of the last-image indicator (PCI Firmware Specification; `NVBIT(7)`).
    pub PCI_LAST_IMAGE: u8 = 0x80 in headers::PCI_EXP_TABLE;
    /// Image lengths count blocks of this many bytes.
    pub PCI_ROM_IMAGE_BLOCK_SIZE: u32 = 512 in headers::PCI_EXP_TABLE;
    /// "NPDE", NVIDIA's PCI data extension; it sits at the PCI data structure's end rounded up to
    /// 16 bytes (`s_locateExpansionRoms`).
    pub NV_PCI_DATA_EXT_SIG: u32 = 0x4544_504E in headers::PCI_EXP_TABLE;
    /// NPDE revision 1.0, one of the two whose sub-image length RM uses.
    pub NV_PCI_DATA_EXT_REV_10: u16 = 0x100 in headers::PCI_EXP_TABLE;
    /// NPDE revision 1.1; see [`NV_PCI_DATA_EXT_REV_10`].
    pub NV_PCI_DATA_EXT_REV_11: u16 = 0x101 in headers::PCI_EXP_TABLE;
    /// Where the NPDE keeps its private last-image byte: an extension no longer than this has
    /// none.
    pub OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE: u16 = 0x0A in headers::PCI_EXP_TABLE;
}

/// `PCI_DATA_STRUCT` (packed; the PCI Firmware Specification's "PCIR" structure): the 24 bytes
/// every revision has.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct PciDataStruct {
    /// [`PCI_DATA_STRUCT_SIGNATURE`] or one of NVIDIA's alternatives.
    pub signature: U32,
    pub vendor_id: U16,
    pub device_id: U16,
    pub device_list_ptr: U16,
    /// Length of this structure in bytes; the NPDE follows it.
    pub length: U16,
    pub revision: u8,
    /// Programming interface, subclass, base class.
    pub class_code: [u8; 3],
    /// In [`PCI_ROM_IMAGE_BLOCK_SIZE`] blocks.
    pub image_length: U16,
    pub vendor_rom_revision: U16,
    pub code_type: u8,
    /// [`PCI_LAST_IMAGE`] set on the last image of the chain.
    pub last_image: u8,
    pub max_runtime_image_length: U16,
}

/// `NV_PCI_DATA_EXT_STRUCT` (packed): NVIDIA's "NPDE" extension of the PCI data structure.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct NvPciDataExtStruct {
    /// [`NV_PCI_DATA_EXT_SIG`].
    pub signature: U32,
    pub revision: U16,
    pub length: U16,
    /// In [`PCI_ROM_IMAGE_BLOCK_SIZE`] blocks; replaces the PCIR image length.
    pub subimage_length: U16,
    /// [`PCI_LAST_IMAGE`] set on the last image; replaces the PCIR indicator.
    pub private_last_image: u8,
    pub flags: u8,
}

const _: () =
    assert!(offset_of!(NvPciDataExtStruct, private_last_image) == OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE as usize);

/// The PCI structures, for the comparison with `pci_exp_table.h` by the C compiler.
pub const PCI_LAYOUTS: &[StructLayout] = &[
    c_struct!("PCI_DATA_STRUCT", PciDataStruct, headers::PCI_EXP_TABLE, [
        "sig" => signature, "vendorID" => vendor_id, "deviceID" => device_id,
        "deviceListPtr" => device_list_ptr, "pciDataStructLen" => length, "pciDataStructRev" => revision,
        "classCode" => class_code, "imageLen" => image_length, "vendorRomRev" => vendor_rom_revision,
        "codeType" => code_type, "lastImage" => last_image, "maxRunTimeImageLen" => max_runtime_image_length,
    ]),
    c_struct!("NV_PCI_DATA_EXT_STRUCT", NvPciDataExtStruct, headers::PCI_EXP_TABLE, [
        "signature" => signature, "nvPciDataExtRev" => revision, "nvPciDataExtLen" => length,
        "subimageLen" => subimage_length, "privLastImage" => private_last_image, "flags" => flags,
    ]),
];

constants! {
    /// Facts of NVIDIA's vendor id.
    pub const VENDOR_FACTS;

    /// NVIDIA's PCI vendor id (a PCI-SIG assignment).
    pub PCI_VENDOR_ID_NVIDIA: u16 = 0x10DE in headers::ROM_NVSWITCH;
}

// ---------------------------------------------------------------------------------------------
// The NVGI (IFR) header and the ROM directory.

constants! {
    /// Facts of the IFR header and of the ROM directory it may lead to.
    pub const IFR_FACTS;

    /// Offset of the IFR header's first word, which holds the signature.
    pub NV_PBUS_IFR_FMT_FIXED0: u32 = 0x00000000 in headers::TU102_DEV_BUS;
    /// "NVGI" as a little-endian word: an IFR header precedes the PCI ROM.
    pub NV_PBUS_IFR_FMT_FIXED0_SIGNATURE_VALUE: u32 = 0x4947564E in headers::TU102_DEV_BUS;
    /// Offset of the word with the header's version and the size of its fixed part.
    pub NV_PBUS_IFR_FMT_FIXED1: u32 = 0x00000004 in headers::TU102_DEV_BUS;
    /// The IFR version, which decides where the PCI ROM offset is found.
    pub NV_PBUS_IFR_FMT_FIXED1_VERSIONSW: Range = 15:8 in headers::TU102_DEV_BUS;
    /// v1 and v2: where the extended section starts.
    pub NV_PBUS_IFR_FMT_FIXED1_FIXED_DATA_SIZE: Range = 30:16 in headers::TU102_DEV_BUS;
    /// Offset of the word with the size of all IFR data.
    pub NV_PBUS_IFR_FMT_FIXED2: u32 = 0x00000008 in headers::TU102_DEV_BUS;
    /// v3: where the flash status offset is kept.
    pub NV_PBUS_IFR_FMT_FIXED2_TOTAL_DATA_SIZE: Range = 19:0 in headers::TU102_DEV_BUS;
    /// "RFRD": the ROM directory an IFR v3 header leads to.
    pub NV_ROM_DIRECTORY_IDENTIFIER: u32 = 0x44524652 in headers::KERNEL_GSP_VBIOS_TU102;
}

// ---------------------------------------------------------------------------------------------
// The BIT and the falcon ucode table.

constants! {
    /// Facts of the BIT and of the falcon ucode table.
    pub const BIT_FACTS;

    /// The BIT header starts with this word (bytes FF B8), then [`BIT_HEADER_SIGNATURE`].
    pub BIT_HEADER_ID: u16 = 0xB8FF in headers::KERNEL_GSP_FWSEC;
    /// "BIT\0" as a little-endian word.
    pub BIT_HEADER_SIGNATURE: u32 = 0x0054_4942 in headers::KERNEL_GSP_FWSEC;
    /// Where the BIT header keeps its size, which its checksum covers.
    pub BIT_HEADER_SIZE_OFFSET: u32 = 8 in headers::KERNEL_GSP_FWSEC;
    /// Token 'B': BIOSDATA, which starts with the VBIOS version.
    pub BIT_TOKEN_BIOSDATA: u8 = 0x42 in headers::KERNEL_GSP_FWSEC;
    /// The size of BIOSDATA's version part ([`BitDataBiosdataBinver`]), which the token's data
    /// size must exceed.
    pub BIT_DATA_BIOSDATA_BINVER_SIZE_5: u16 = 5 in headers::KERNEL_GSP_FWSEC;
    /// Token 'p': falcon data, which points at the falcon ucode table.
    pub BIT_TOKEN_FALCON_DATA: u8 = 0x70 in headers::KERNEL_GSP_FWSEC;
    /// The least data size of a falcon data token ([`BitDataFalconDataV2`]).
    pub BIT_DATA_FALCON_DATA_V2_SIZE_4: u16 = 4 in headers::KERNEL_GSP_FWSEC;
    /// The falcon ucode table header version RM reads.
    pub FALCON_UCODE_TABLE_HDR_V1_VERSION: u8 = 1 in headers::KERNEL_GSP_FWSEC;
    /// The least header size of that version.
    pub FALCON_UCODE_TABLE_HDR_V1_SIZE_6: u8 = 6 in headers::KERNEL_GSP_FWSEC;
    /// The least entry size of that version.
    pub FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6: u8 = 6 in headers::KERNEL_GSP_FWSEC;
    /// An application id RM accepts as FWSEC whatever the chip's fuses.
    pub FALCON_UCODE_ENTRY_APPID_FIRMWARE_SEC_LIC: u8 = 0x05 in headers::KERNEL_GSP_FWSEC;
    /// FWSEC signed for debug-fused chips.
    pub FALCON_UCODE_ENTRY_APPID_FWSEC_DBG: u8 = 0x45 in headers::KERNEL_GSP_FWSEC;
    /// FWSEC signed for production chips.
    pub FALCON_UCODE_ENTRY_APPID_FWSEC_PROD: u8 = 0x85 in headers::KERNEL_GSP_FWSEC;
}

/// The falcon data token's data version RM requires. RM writes it as a literal
/// (`bitToken.DataVersion != 2` in `s_vbiosParseFwsecUcodeDescFromBit`): no define to check it
/// against.
pub const BIT_DATA_FALCON_DATA_VERSION_2: u8 = 2;
/// The 8-byte token (`BIT_TOKEN_V1_00` with a 32-bit data pointer, format "2b1w1d"), which
/// NVIDIA's releases after 535 accept besides the 6-byte [`BitTokenV1`] (they name it
/// `BIT_TOKEN_V1_00_SIZE_8`); none of the sample ROMs uses it. 535.261.03, the release facts
/// cite, has no such define, so this is not header-checked.
pub const BIT_TOKEN_V1_00_SIZE_8: u8 = 8;

/// `BIT_HEADER_V1_00` (format `BIT_HEADER_V1_00_FMT`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BitHeaderV1 {
    /// [`BIT_HEADER_ID`].
    pub id: U16,
    /// [`BIT_HEADER_SIGNATURE`].
    pub signature: U32,
    /// 0x0100 for 1.00.
    pub bcd_version: U16,
    pub header_size: u8,
    pub token_size: u8,
    pub token_entries: u8,
    /// Makes the header's bytes sum to 0 mod 256.
    pub header_checksum: u8,
}

/// `BIT_TOKEN_V1_00` as 535.261.03 reads it (format `BIT_TOKEN_V1_00_FMT`, 16-bit data pointer).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BitTokenV1 {
    pub id: u8,
    pub data_version: u8,
    pub data_size: U16,
    /// ROM offset of the token's data.
    pub data_ptr: U16,
}

/// `BIT_DATA_BIOSDATA_BINVER` (format `BIT_DATA_BIOSDATA_BINVER_FMT`): the version that both
/// BIOSDATA layouts start with.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BitDataBiosdataBinver {
    /// The VBIOS version, 5.40.00.01 as 0x05400001.
    pub version: U32,
    /// The version's fifth part.
    pub oem_version: u8,
}

/// `BIT_DATA_BIOSDATA_V2` (format `BIT_DATA_BIOSDATA_V2_FMT`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BitDataBiosdataV2 {
    pub version: U32,
    pub oem_version: u8,
    pub checksum: u8,
    pub int15_callbacks_post: U16,
    pub int15_callbacks_system: U16,
    pub frame_count: U16,
    pub reserved1: U32,
    pub reserved2: U32,
    pub max_heads_at_post: u8,
    pub memory_size_report: u8,
    pub horizontal_scale_factor: u8,
    pub vertical_scale_factor: u8,
    pub data_table_ptr: U16,
    pub rom_pack_ptr: U16,
    pub applied_rom_packs_ptr: U16,
    pub applied_rom_pack_max: u8,
    pub applied_rom_pack_count: u8,
    pub module_map_external: u8,
    pub compression_info_ptr: U32,
}

/// `BIT_DATA_FALCON_DATA_V2` (format `BIT_DATA_FALCON_DATA_V2_4_FMT`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BitDataFalconDataV2 {
    /// Where the falcon ucode table is, counted from the expansion ROM offset.
    pub falcon_ucode_table_ptr: U32,
}

/// `FALCON_UCODE_TABLE_HDR_V1` (format `FALCON_UCODE_TABLE_HDR_V1_6_FMT`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FalconUcodeTableHdrV1 {
    /// [`FALCON_UCODE_TABLE_HDR_V1_VERSION`].
    pub version: u8,
    pub header_size: u8,
    pub entry_size: u8,
    pub entry_count: u8,
    /// The descriptor version the entries point at (each descriptor also says its own).
    pub desc_version: u8,
    pub desc_size: u8,
}

/// `FALCON_UCODE_TABLE_ENTRY_V1` (format `FALCON_UCODE_TABLE_ENTRY_V1_6_FMT`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FalconUcodeTableEntryV1 {
    /// `FALCON_UCODE_ENTRY_APPID_*`; 0 marks an unused slot.
    pub application_id: u8,
    /// Which falcon the ucode is for, in the VBIOS's own numbering.
    pub target_id: u8,
    /// Where the descriptor is, counted from the expansion ROM offset.
    pub desc_ptr: U32,
}

/// The size of [`BitHeaderV1`] (12 bytes). NVIDIA gives it only as the format string
/// `BIT_HEADER_V1_00_FMT`, which `tests/tests/fw_layout.rs` checks the structure against.
pub const BIT_HEADER_V1_00_SIZE: u8 = size_of::<BitHeaderV1>() as u8;
/// The size of [`BitTokenV1`] (6 bytes), the token RM 535.261.03 reads; checked like
/// [`BIT_HEADER_V1_00_SIZE`], through `BIT_TOKEN_V1_00_FMT`.
pub const BIT_TOKEN_V1_00_SIZE_6: u8 = size_of::<BitTokenV1>() as u8;
/// The size of [`BitDataBiosdataV2`] (37 bytes); checked through `BIT_DATA_BIOSDATA_V2_FMT`.
pub const BIT_DATA_BIOSDATA_V2_SIZE: u16 = size_of::<BitDataBiosdataV2>() as u16;

const _: () = {
    assert!(offset_of!(BitHeaderV1, header_size) == BIT_HEADER_SIZE_OFFSET as usize);
    assert!(size_of::<BitDataBiosdataBinver>() == BIT_DATA_BIOSDATA_BINVER_SIZE_5 as usize);
    assert!(size_of::<BitDataFalconDataV2>() == BIT_DATA_FALCON_DATA_V2_SIZE_4 as usize);
    assert!(size_of::<FalconUcodeTableHdrV1>() == FALCON_UCODE_TABLE_HDR_V1_SIZE_6 as usize);
    assert!(size_of::<FalconUcodeTableEntryV1>() == FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6 as usize);
};

// ---------------------------------------------------------------------------------------------
// The FWSEC descriptors.

constants! {
    /// Facts of the falcon ucode descriptors.
    pub const FALCON_UCODE_DESC_FACTS;

    /// The descriptor header's flag that says whether its version field is valid.
    pub NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION: Range = 0:0 in headers::KERNEL_GSP_FWSEC;
    /// The value of [`NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION`] that says it is.
    pub NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE: u32 = 0x01 in headers::KERNEL_GSP_FWSEC;
    /// The descriptor's version.
    pub NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION: Range = 15:8 in headers::KERNEL_GSP_FWSEC;
    /// The descriptor's size in bytes (for v3: with the signatures after its fixed part).
    pub NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE: Range = 31:16 in headers::KERNEL_GSP_FWSEC;
    /// A [`FalconUcodeDescV2Raw`] follows (Turing, GA100).
    pub NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2: u8 = 0x02 in headers::KERNEL_GSP_FWSEC;
    /// A [`FalconUcodeDescV3Raw`] follows (GA10x and later).
    pub NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3: u8 = 0x03 in headers::KERNEL_GSP_FWSEC;
    /// The size of [`FalconUcodeDescV2Raw`].
    pub FALCON_UCODE_DESC_V2_SIZE_60: u16 = 60 in headers::KERNEL_GSP_FWSEC;
    /// The size of [`FalconUcodeDescV3Raw`], the fixed part: the signatures follow it, up to the
    /// size the header gives.
    pub FALCON_UCODE_DESC_V3_SIZE_44: u16 = 44 in headers::KERNEL_GSP_FWSEC;
    /// One RSA-3072 signature, as a v3 descriptor carries them.
    pub BCRT30_RSA3K_SIG_SIZE: u32 = 384 in headers::KERNEL_GSP_FWSEC;
}

/// `FALCON_UCODE_DESC_HEADER` (format `FALCON_UCODE_DESC_HEADER_FORMAT`): the word every
/// descriptor starts with.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FalconUcodeDescHeader {
    /// Flags, [`NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION`] and
    /// [`NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE`].
    pub vdesc: U32,
}

/// `FALCON_UCODE_DESC_V2` (format `FALCON_UCODE_DESC_V2_60_FMT`), as the VBIOS holds it: IMEM
/// and DMEM at their own offsets of the image, no signatures in the descriptor.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FalconUcodeDescV2Raw {
    /// `Hdr`: the [`FalconUcodeDescHeader`] word.
    pub vdesc: U32,
    pub stored_size: U32,
    pub uncompressed_size: U32,
    pub virtual_entry: U32,
    /// DMEM offset of the application interface table.
    pub interface_offset: U32,
    pub imem_phys_base: U32,
    pub imem_load_size: U32,
    pub imem_virt_base: U32,
    pub imem_sec_base: U32,
    pub imem_sec_size: U32,
    /// Offset of DMEM in the image.
    pub dmem_offset: U32,
    pub dmem_phys_base: U32,
    pub dmem_load_size: U32,
    pub alt_imem_load_size: U32,
    pub alt_dmem_load_size: U32,
}

/// `FALCON_UCODE_DESC_V3` (format `FALCON_UCODE_DESC_V3_44_FMT`), as the VBIOS holds it: DMEM
/// follows IMEM in the image, and `signature_count` signatures of [`BCRT30_RSA3K_SIG_SIZE`]
/// bytes follow the descriptor.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FalconUcodeDescV3Raw {
    /// `Hdr`: the [`FalconUcodeDescHeader`] word.
    pub vdesc: U32,
    pub stored_size: U32,
    /// DMEM offset where the chosen signature is patched in.
    pub pkc_data_offset: U32,
    /// DMEM offset of the application interface table.
    pub interface_offset: U32,
    pub imem_phys_base: U32,
    pub imem_load_size: U32,
    pub imem_virt_base: U32,
    pub dmem_phys_base: U32,
    pub dmem_load_size: U32,
    pub engine_id_mask: U16,
    /// Which ucode fuse version register decides the signature.
    pub ucode_id: u8,
    pub signature_count: u8,
    /// Bit n set: a signature for fuse version n is present.
    pub signature_versions: U16,
    pub reserved: U16,
}

const _: () = {
    assert!(size_of::<FalconUcodeDescV2Raw>() == FALCON_UCODE_DESC_V2_SIZE_60 as usize);
    assert!(size_of::<FalconUcodeDescV3Raw>() == FALCON_UCODE_DESC_V3_SIZE_44 as usize);
};

/// A structure NVIDIA declares as a naturally aligned C struct and RM reads from the VBIOS
/// packed, by a format string: `layout` (packed, as Rust declares it) and the name of that
/// string's define, in the same file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedLayout {
    /// The structure, with NVIDIA's member names in declaration order.
    pub layout: StructLayout,
    /// NVIDIA's format define, e.g. `BIT_HEADER_V1_00_FMT`: a count and a letter per run of
    /// members (`b` one byte, `w` two, `d` four).
    pub format: &'static str,
}

/// The BIT's, BIOSDATA's, the falcon ucode table's and the descriptors' structures, for the
/// comparison with NVIDIA's format strings.
pub const PACKED_LAYOUTS: &[PackedLayout] = &[
    PackedLayout {
        layout: c_struct!("BIT_HEADER_V1_00", BitHeaderV1, headers::KERNEL_GSP_FWSEC, [
            "Id" => id, "Signature" => signature, "BCD_Version" => bcd_version, "HeaderSize" => header_size,
            "TokenSize" => token_size, "TokenEntries" => token_entries, "HeaderChksum" => header_checksum,
        ]),
        format: "BIT_HEADER_V1_00_FMT",
    },
    PackedLayout {
        layout: c_struct!("BIT_TOKEN_V1_00", BitTokenV1, headers::KERNEL_GSP_FWSEC, [
            "TokenId" => id, "DataVersion" => data_version, "DataSize" => data_size, "DataPtr" => data_ptr,
        ]),
        format: "BIT_TOKEN_V1_00_FMT",
    },
    PackedLayout {
        layout: c_struct!("BIT_DATA_BIOSDATA_BINVER", BitDataBiosdataBinver, headers::KERNEL_GSP_FWSEC, [
            "Version" => version, "OemVersion" => oem_version,
        ]),
        format: "BIT_DATA_BIOSDATA_BINVER_FMT",
    },
    PackedLayout {
        layout: c_struct!("BIT_DATA_BIOSDATA_V2", BitDataBiosdataV2, headers::ROM_NVSWITCH, [
            "Version" => version, "OemVersion" => oem_version, "Checksum" => checksum,
            "Int15CallbacksPost" => int15_callbacks_post, "Int15CallbacksSystem" => int15_callbacks_system,
            "FrameCount" => frame_count, "Reserved1" => reserved1, "Reserved2" => reserved2,
            "MaxHeadsAtPost" => max_heads_at_post, "MemorySizeReport" => memory_size_report,
            "HorizontalScaleFactor" => horizontal_scale_factor, "VerticalScaleFactor" => vertical_scale_factor,
            "DataTablePtr" => data_table_ptr, "RomPackPtr" => rom_pack_ptr,
            "AppliedRomPacksPtr" => applied_rom_packs_ptr, "AppliedRomPackMax" => applied_rom_pack_max,
            "AppliedRomPackCount" => applied_rom_pack_count, "ModuleMapExternal" => module_map_external,
            "CompressionInfoPtr" => compression_info_ptr,
        ]),
        format: "BIT_DATA_BIOSDATA_V2_FMT",
    },
    PackedLayout {
        layout: c_struct!("BIT_DATA_FALCON_DATA_V2", BitDataFalconDataV2, headers::KERNEL_GSP_FWSEC, [
            "FalconUcodeTablePtr" => falcon_ucode_table_ptr,
        ]),
        format: "BIT_DATA_FALCON_DATA_V2_4_FMT",
    },
    PackedLayout {
        layout: c_struct!("FALCON_UCODE_TABLE_HDR_V1", FalconUcodeTableHdrV1, headers::KERNEL_GSP_FWSEC, [
            "Version" => version, "HeaderSize" => header_size, "EntrySize" => entry_size,
            "EntryCount" => entry_count, "DescVersion" => desc_version, "DescSize" => desc_size,
        ]),
        format: "FALCON_UCODE_TABLE_HDR_V1_6_FMT",
    },
    PackedLayout {
        layout: c_struct!("FALCON_UCODE_TABLE_ENTRY_V1", FalconUcodeTableEntryV1, headers::KERNEL_GSP_FWSEC, [
            "ApplicationID" => application_id, "TargetID" => target_id, "DescPtr" => desc_ptr,
        ]),
        format: "FALCON_UCODE_TABLE_ENTRY_V1_6_FMT",
    },
    PackedLayout {
        layout: c_struct!("FALCON_UCODE_DESC_HEADER", FalconUcodeDescHeader, headers::KERNEL_GSP_FWSEC, [
            "vDesc" => vdesc,
        ]),
        format: "FALCON_UCODE_DESC_HEADER_FORMAT",
    },
    PackedLayout {
        layout: c_struct!("FALCON_UCODE_DESC_V2", FalconUcodeDescV2Raw, headers::KERNEL_GSP_FWSEC, [
            "Hdr" => vdesc, "StoredSize" => stored_size, "UncompressedSize" => uncompressed_size,
            "VirtualEntry" => virtual_entry, "InterfaceOffset" => interface_offset,
            "IMEMPhysBase" => imem_phys_base, "IMEMLoadSize" => imem_load_size, "IMEMVirtBase" => imem_virt_base,
            "IMEMSecBase" => imem_sec_base, "IMEMSecSize" => imem_sec_size, "DMEMOffset" => dmem_offset,
            "DMEMPhysBase" => dmem_phys_base, "DMEMLoadSize" => dmem_load_size,
            "altIMEMLoadSize" => alt_imem_load_size, "altDMEMLoadSize" => alt_dmem_load_size,
        ]),
        format: "FALCON_UCODE_DESC_V2_60_FMT",
    },
    PackedLayout {
        layout: c_struct!("FALCON_UCODE_DESC_V3", FalconUcodeDescV3Raw, headers::KERNEL_GSP_FWSEC, [
            "Hdr" => vdesc, "StoredSize" => stored_size, "PKCDataOffset" => pkc_data_offset,
            "InterfaceOffset" => interface_offset, "IMEMPhysBase" => imem_phys_base,
            "IMEMLoadSize" => imem_load_size, "IMEMVirtBase" => imem_virt_base, "DMEMPhysBase" => dmem_phys_base,
            "DMEMLoadSize" => dmem_load_size, "EngineIdMask" => engine_id_mask, "UcodeId" => ucode_id,
            "SignatureCount" => signature_count, "SignatureVersions" => signature_versions, "Reserved" => reserved,
        ]),
        format: "FALCON_UCODE_DESC_V3_44_FMT",
    },
];

// ---------------------------------------------------------------------------------------------
// The EFI image: UEFI facts, in no NVIDIA file.

/// `EFISignature` of the EFI PCI expansion ROM header (offset 4 of an EFI image): 0x0EF1. UEFI
/// Specification, "PCI Option ROMs" (`EFI_PCI_EXPANSION_ROM_HEADER`); no NVIDIA file states it,
/// so it cannot be checked against NVIDIA's headers.
pub const EFI_PCI_EXPANSION_ROM_HEADER_EFISIGNATURE: u32 = 0x0EF1;
/// `EFI_IMAGE_MACHINE_X64`: the PE/COFF machine type (AMD64) of x86-64 EFI drivers. UEFI
/// Specification; not header-checked.
pub const EFI_IMAGE_MACHINE_X64: u16 = 0x8664;
/// `EFI_IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER`: PE/COFF subsystem 11. UEFI Specification; not
/// header-checked.
pub const EFI_IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER: u16 = 11;
