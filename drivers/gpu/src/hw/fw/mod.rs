//! Firmware-ABI structures: what the driver and the firmware (and the model standing in for it)
//! exchange in memory, declared once here under NVIDIA's names. The driver fills them and the
//! model reads them from the same declarations; the values in them are checked by the model
//! against the header-checked constants, not against the driver's.
//!
//! The FWSEC structures are all defined in RM's `kernel_gsp_frts_tu102.c` itself (535.261.03), not in a
//! header: [`KERNEL_GSP_FRTS_TU102`]. [`LAYOUTS`] lists each one's size and fields, and
//! `tests/tests/fw_layout.rs` compiles that file's definitions with the C compiler and compares.
//!
//! - The falcon application interface FWSEC's DMEM starts with: `FALCON_APPLICATION_INTERFACE_*`,
//!   read at any DMEM offset (unaligned, little-endian fields).
//! - Which firmware a chip takes: `NV_FIRMWARE_CHIP_FAMILY_*` ([`CHIP_FAMILY_FACTS`], from
//!   `nv-firmware.h`).
//! - The generic falcon bootloader's descriptors ([`rmflcnbl`], from `rmflcnbl.h`).
//! - The FWSEC FRTS command: `FWSECLIC_*`, and the values RM fills it with ([`FACTS`], checked
//!   against that file by the header conformance test).

use core::mem::{align_of, offset_of, size_of};

use crate::constants;
use crate::hw::headers;
pub use crate::hw::headers::KERNEL_GSP_FRTS_TU102;
use crate::hw::layout::{FieldLayout, StructLayout};
use zerocopy::byteorder::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

pub mod fsp;
pub mod rmflcnbl;

/// `FALCON_APPLICATION_INTERFACE_HEADER_V1`.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[repr(C)]
pub struct AppInterfaceHeaderV1 {
    pub version: u8,
    pub header_size: u8,
    pub entry_size: u8,
    pub entry_count: u8,
}

/// `FALCON_APPLICATION_INTERFACE_ENTRY_V1`.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[repr(C)]
pub struct AppInterfaceEntryV1 {
    pub id: U32,
    pub dmem_offset: U32,
}

/// `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3`.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[repr(C)]
pub struct DmemMapperV3 {
    pub signature: U32,
    pub version: U16,
    pub size: U16,
    pub cmd_in_buffer_offset: U32,
    pub cmd_in_buffer_size: U32,
    pub cmd_out_buffer_offset: U32,
    pub cmd_out_buffer_size: U32,
    pub nvf_img_data_buffer_offset: U32,
    pub nvf_img_data_buffer_size: U32,
    pub printf_buffer_hdr: U32,
    pub ucode_build_time_stamp: U32,
    pub ucode_signature: U32,
    pub init_cmd: U32,
    pub ucode_feature: U32,
    pub ucode_cmd_mask0: U32,
    pub ucode_cmd_mask1: U32,
    pub multi_tgt_tbl: U32,
}

/// `FWSECLIC_READ_VBIOS_DESC`: 24 bytes, 8-byte aligned (it holds a `NvU64`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct FwseclicReadVbiosDesc {
    /// `version`.
    pub version: u32,
    /// `size`: `sizeof(FWSECLIC_READ_VBIOS_DESC)`.
    pub size: u32,
    /// `gfwImageOffset`: 0 (FWSEC reads the VBIOS itself).
    pub gfw_image_offset: u64,
    /// `gfwImageSize`: 0.
    pub gfw_image_size: u32,
    /// `flags`: `FWSECLIC_READ_VBIOS_STRUCT_FLAGS`.
    pub flags: u32,
}

/// `FWSECLIC_FRTS_REGION_DESC`: 20 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct FwseclicFrtsRegionDesc {
    /// `version`.
    pub version: u32,
    /// `size`: `sizeof(FWSECLIC_FRTS_REGION_DESC)`.
    pub size: u32,
    /// `frtsRegionOffset4K`: the region's framebuffer offset in 4 KiB units.
    pub frts_region_offset_4k: u32,
    /// `frtsRegionSize`: in 4 KiB units (`FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K`).
    pub frts_region_size: u32,
    /// `frtsRegionMediaType`: `FWSECLIC_FRTS_REGION_MEDIA_FB`.
    pub frts_region_media_type: u32,
}

/// `FWSECLIC_FRTS_CMD`: both descriptors, then the 4 bytes of tail padding the C struct has
/// (its alignment is 8). RM copies `sizeof(FWSECLIC_FRTS_CMD)` = 48 bytes into the command
/// buffer; the padding is written as zeros here. FWSEC reads the fields' 44 bytes
/// ([`FWSECLIC_FRTS_CMD_FIELDS_SIZE`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct FwseclicFrtsCmd {
    /// `readVbiosDesc`.
    pub read_vbios_desc: FwseclicReadVbiosDesc,
    /// `frtsRegionDesc`.
    pub frts_region_desc: FwseclicFrtsRegionDesc,
    /// Tail padding of the C struct.
    pub _padding: u32,
}

const _: () = {
    assert!(size_of::<FwseclicReadVbiosDesc>() == 24);
    assert!(size_of::<FwseclicFrtsRegionDesc>() == 20);
    assert!(size_of::<FwseclicFrtsCmd>() == 48);
    assert!(core::mem::offset_of!(FwseclicFrtsCmd, frts_region_desc) == 24);
};

constants! {
    /// Facts of the values RM puts in the FWSEC command.
    pub const FACTS;

    /// `FWSECLIC_READ_VBIOS_DESC.flags`.
    pub FWSECLIC_READ_VBIOS_STRUCT_FLAGS: u32 = 2 in headers::KERNEL_GSP_FRTS_TU102;
    /// `FWSECLIC_FRTS_REGION_DESC.frtsRegionMediaType`: the FRTS region is in the framebuffer.
    pub FWSECLIC_FRTS_REGION_MEDIA_FB: u32 = 2 in headers::KERNEL_GSP_FRTS_TU102;
    /// `FWSECLIC_FRTS_REGION_DESC.frtsRegionSize`: 1 MiB in 4 KiB units, the only size RM asks
    /// for.
    pub FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K: u32 = 0x100 in headers::KERNEL_GSP_FRTS_TU102;
    /// `FALCON_APPLICATION_INTERFACE_ENTRY_V1.id` of the DMEM mapper, the interface the FRTS
    /// command goes through.
    pub FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER: u32 = 0x4 in headers::KERNEL_GSP_FRTS_TU102;
    /// `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3.init_cmd`: the command that sets up FRTS.
    pub FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS: u32 = 0x15 in headers::KERNEL_GSP_FRTS_TU102;
    /// `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3.init_cmd`: the secure-boot command RM runs
    /// where FRTS is not wanted.
    pub FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB: u32 = 0x19 in headers::KERNEL_GSP_FRTS_TU102;
}

constants! {
    /// Facts of the firmware families (`nv_firmware_chip_family_t`, `nv-firmware.h`): which GSP
    /// firmware image and signature a chip takes (`crate::chip::FirmwareFamily`).
    pub const CHIP_FAMILY_FACTS;

    pub NV_FIRMWARE_CHIP_FAMILY_TU10X: u32 = 1 in headers::NV_FIRMWARE;
    pub NV_FIRMWARE_CHIP_FAMILY_TU11X: u32 = 2 in headers::NV_FIRMWARE;
    pub NV_FIRMWARE_CHIP_FAMILY_GA100: u32 = 3 in headers::NV_FIRMWARE;
    pub NV_FIRMWARE_CHIP_FAMILY_GA10X: u32 = 4 in headers::NV_FIRMWARE;
    pub NV_FIRMWARE_CHIP_FAMILY_AD10X: u32 = 5 in headers::NV_FIRMWARE;
    pub NV_FIRMWARE_CHIP_FAMILY_GH100: u32 = 6 in headers::NV_FIRMWARE;
    pub NV_FIRMWARE_CHIP_FAMILY_GB10X: u32 = 8 in headers::NV_FIRMWARE_570;
    pub NV_FIRMWARE_CHIP_FAMILY_GB20X: u32 = 9 in headers::NV_FIRMWARE_570;
}

/// `FWSECLIC_READ_VBIOS_DESC.version` as `s_executeFwsec_TU102` fills it (a literal in RM's
/// code, not a define).
pub const FWSECLIC_READ_VBIOS_DESC_VERSION: u32 = 1;
/// `FWSECLIC_FRTS_REGION_DESC.version` as `s_executeFwsec_TU102` fills it (a literal, as
/// [`FWSECLIC_READ_VBIOS_DESC_VERSION`]).
pub const FWSECLIC_FRTS_REGION_DESC_VERSION: u32 = 1;
/// `sizeof(FWSECLIC_READ_VBIOS_DESC)`, what its `size` field holds.
pub const FWSECLIC_READ_VBIOS_DESC_SIZE: u32 = size_of::<FwseclicReadVbiosDesc>() as u32;
/// `sizeof(FWSECLIC_FRTS_REGION_DESC)`, what its `size` field holds.
pub const FWSECLIC_FRTS_REGION_DESC_SIZE: u32 = size_of::<FwseclicFrtsRegionDesc>() as u32;
/// `sizeof(FALCON_APPLICATION_INTERFACE_HEADER_V1)`, what its `headerSize` holds in every ROM.
pub const FALCON_APPLICATION_INTERFACE_HEADER_V1_SIZE: u8 = size_of::<AppInterfaceHeaderV1>() as u8;
/// `sizeof(FALCON_APPLICATION_INTERFACE_ENTRY_V1)`, what the header's `entrySize` holds.
pub const FALCON_APPLICATION_INTERFACE_ENTRY_V1_SIZE: u8 = size_of::<AppInterfaceEntryV1>() as u8;
/// `sizeof(FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3)`, what its `size` holds.
pub const FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIZE: u16 = size_of::<DmemMapperV3>() as u16;
/// `FALCON_APPLICATION_INTERFACE_HEADER_V1.version` of every sample ROM. No NVIDIA file defines
/// it (the structure's name carries it), so it cannot be header-checked.
pub const FALCON_APPLICATION_INTERFACE_HEADER_V1_VERSION: u8 = 1;
/// `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3.version` of every sample ROM (the name says V3;
/// not header-checked, as [`FALCON_APPLICATION_INTERFACE_HEADER_V1_VERSION`]).
pub const FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_VERSION: u16 = 3;
/// `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3.signature`: "DMAP" as a little-endian word, what
/// the first word of the mapper holds in all three sample ROMs (`tests/tests/vbios_real.rs`).
/// NVIDIA's source does not name it, so it cannot be header-checked; checking it catches a wrong
/// interface entry before the driver patches DMEM.
pub const FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIGNATURE: u32 = 0x5041_4D44;
/// Bytes of [`FwseclicFrtsCmd`] that carry fields, the two descriptors: what FWSEC reads (the
/// C struct's tail padding it does not).
pub const FWSECLIC_FRTS_CMD_FIELDS_SIZE: usize =
    size_of::<FwseclicReadVbiosDesc>() + size_of::<FwseclicFrtsRegionDesc>();

/// One field's layout: its C name, and the Rust field's offset and size.
macro_rules! fields {
    ($ty:ty { $($c:literal => $field:ident: $fty:ty),* $(,)? }) => {
        &[$(FieldLayout { c_name: $c, offset: offset_of!($ty, $field), size: size_of::<$fty>() }),*]
    };
}

/// One struct's layout under its C name.
macro_rules! layout {
    ($c:literal, $ty:ty, $fields:expr) => {
        StructLayout {
            c_name: $c,
            rust_name: stringify!($ty),
            header: KERNEL_GSP_FRTS_TU102,
            size: size_of::<$ty>(),
            align: align_of::<$ty>(),
            fields: $fields,
        }
    };
}

/// The layout of every structure here, under NVIDIA's names (for `tests/tests/fw_layout.rs`).
/// The unaligned little-endian types have alignment 1 where C's has 4; the test compares sizes
/// and offsets, and alignment only for the naturally aligned FWSECLIC structures.
pub const LAYOUTS: &[StructLayout] = &[
    layout!(
        "FALCON_APPLICATION_INTERFACE_HEADER_V1",
        AppInterfaceHeaderV1,
        fields!(AppInterfaceHeaderV1 {
            "version" => version: u8,
            "headerSize" => header_size: u8,
            "entrySize" => entry_size: u8,
            "entryCount" => entry_count: u8,
        })
    ),
    layout!(
        "FALCON_APPLICATION_INTERFACE_ENTRY_V1",
        AppInterfaceEntryV1,
        fields!(AppInterfaceEntryV1 { "id" => id: U32, "dmemOffset" => dmem_offset: U32 })
    ),
    layout!(
        "FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3",
        DmemMapperV3,
        fields!(DmemMapperV3 {
            "signature" => signature: U32,
            "version" => version: U16,
            "size" => size: U16,
            "cmd_in_buffer_offset" => cmd_in_buffer_offset: U32,
            "cmd_in_buffer_size" => cmd_in_buffer_size: U32,
            "cmd_out_buffer_offset" => cmd_out_buffer_offset: U32,
            "cmd_out_buffer_size" => cmd_out_buffer_size: U32,
            "nvf_img_data_buffer_offset" => nvf_img_data_buffer_offset: U32,
            "nvf_img_data_buffer_size" => nvf_img_data_buffer_size: U32,
            "printfBufferHdr" => printf_buffer_hdr: U32,
            "ucode_build_time_stamp" => ucode_build_time_stamp: U32,
            "ucode_signature" => ucode_signature: U32,
            "init_cmd" => init_cmd: U32,
            "ucode_feature" => ucode_feature: U32,
            "ucode_cmd_mask0" => ucode_cmd_mask0: U32,
            "ucode_cmd_mask1" => ucode_cmd_mask1: U32,
            "multiTgtTbl" => multi_tgt_tbl: U32,
        })
    ),
    layout!(
        "FWSECLIC_READ_VBIOS_DESC",
        FwseclicReadVbiosDesc,
        fields!(FwseclicReadVbiosDesc {
            "version" => version: u32,
            "size" => size: u32,
            "gfwImageOffset" => gfw_image_offset: u64,
            "gfwImageSize" => gfw_image_size: u32,
            "flags" => flags: u32,
        })
    ),
    layout!(
        "FWSECLIC_FRTS_REGION_DESC",
        FwseclicFrtsRegionDesc,
        fields!(FwseclicFrtsRegionDesc {
            "version" => version: u32,
            "size" => size: u32,
            "frtsRegionOffset4K" => frts_region_offset_4k: u32,
            "frtsRegionSize" => frts_region_size: u32,
            "frtsRegionMediaType" => frts_region_media_type: u32,
        })
    ),
    layout!(
        "FWSECLIC_FRTS_CMD",
        FwseclicFrtsCmd,
        fields!(FwseclicFrtsCmd {
            "readVbiosDesc" => read_vbios_desc: FwseclicReadVbiosDesc,
            "frtsRegionDesc" => frts_region_desc: FwseclicFrtsRegionDesc,
        })
    ),
];
