//! The FSP's message ABI (Hopper, Blackwell): the MCTP transport and message headers RM's EMEM
//! packets start with (`fsp_mctp_format.h`), the NVDM message types (`fsp_nvdm_format.h`), the
//! FSP's return codes (`kern_fsp_retval.h`), the chain-of-trust payload (`NVDM_PAYLOAD_COT`,
//! `g_kern_fsp_nvoc.h`, packed), the command response (`nvdm_payload_cmd_response.h`, packed) and
//! the GSP-FMC's boot parameters (`gspifpub.h`), and the FRTS copies the command asks for
//! (`kern_fsp_gh100.c`, [`FRTS_FACTS`]), all 535.261.03. The driver
//! (`crate::gsp::boot::fsp`) and the model's FSP (`sim::gsp_rm::fsp`) use these declarations;
//! [`FACTS`] is checked by the header conformance test, [`LAYOUTS`] by `tests/tests/fw_layout.rs`
//! with the C compiler, and `NVDM_PAYLOAD_COT`'s field order by `tests/tests/gsp_boot.rs` (its
//! header is NVOC-generated and does not compile on its own).

use core::mem::size_of;

use zerocopy::byteorder::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::constants;
use crate::hw::headers;
use crate::hw::layout::{c_struct, StructLayout};

constants! {
    /// Facts of the FSP's MCTP/NVDM protocol.
    pub const FACTS;

    /// `FSP_EMEM_CHANNEL_RM`: RM's EMEM port and queue index.
    pub FSP_EMEM_CHANNEL_RM: u32 = 0x0 in headers::FSP_EMEM_CHANNELS;
    /// `MCTP_HEADER_SEID`: the source endpoint of a transport header.
    pub MCTP_HEADER_SEID: Range = 23:16 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_HEADER_TAG`.
    pub MCTP_HEADER_TAG: Range = 26:24 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_HEADER_SEQ`: the packet's sequence number, modulo 4.
    pub MCTP_HEADER_SEQ: Range = 29:28 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_HEADER_EOM`: the message's last packet.
    pub MCTP_HEADER_EOM: Range = 30:30 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_HEADER_SOM`: the message's first packet (it carries the message header).
    pub MCTP_HEADER_SOM: Range = 31:31 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_MSG_HEADER_TYPE`.
    pub MCTP_MSG_HEADER_TYPE: Range = 6:0 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_MSG_HEADER_VENDOR_ID`.
    pub MCTP_MSG_HEADER_VENDOR_ID: Range = 23:8 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_MSG_HEADER_NVDM_TYPE`.
    pub MCTP_MSG_HEADER_NVDM_TYPE: Range = 31:24 in headers::FSP_MCTP_FORMAT;
    /// `MCTP_MSG_HEADER_TYPE_VENDOR_PCI`.
    pub MCTP_MSG_HEADER_TYPE_VENDOR_PCI: u32 = 0x7e in headers::FSP_MCTP_FORMAT;
    /// `MCTP_MSG_HEADER_VENDOR_ID_NV`.
    pub MCTP_MSG_HEADER_VENDOR_ID_NV: u32 = 0x10de in headers::FSP_MCTP_FORMAT;
    /// `NVDM_TYPE_COT`: the chain-of-trust command.
    pub NVDM_TYPE_COT: u8 = 0x14 in headers::FSP_NVDM_FORMAT;
    /// `NVDM_TYPE_FSP_RESPONSE`: the FSP's reply to a command.
    pub NVDM_TYPE_FSP_RESPONSE: u8 = 0x15 in headers::FSP_NVDM_FORMAT;
    /// `NVDM_TYPE_INFOROM`: the one type that travels with SEID 1 (`kfspNvdmToSeid_GH100`).
    pub NVDM_TYPE_INFOROM: u8 = 0x17 in headers::FSP_NVDM_FORMAT;
    /// `NVDM_TYPE_SMBPBI`: also answered with a command response.
    pub NVDM_TYPE_SMBPBI: u8 = 0x18 in headers::FSP_NVDM_FORMAT;
    /// `FSP_OK`.
    pub FSP_OK: u32 = 0x00 in headers::KERN_FSP_RETVAL;
    /// `FSP_ERR_IFS_ERR_INVALID_STATE`.
    pub FSP_ERR_IFS_ERR_INVALID_STATE: u32 = 0x9e in headers::KERN_FSP_RETVAL;
    /// `FSP_ERR_IFR_FILE_NOT_FOUND`.
    pub FSP_ERR_IFR_FILE_NOT_FOUND: u32 = 0x9f in headers::KERN_FSP_RETVAL;
    /// `FSP_ERR_IFS_ERR_NOT_SUPPORTED`.
    pub FSP_ERR_IFS_ERR_NOT_SUPPORTED: u32 = 0xa0 in headers::KERN_FSP_RETVAL;
    /// `FSP_ERR_IFS_ERR_INVALID_DATA`.
    pub FSP_ERR_IFS_ERR_INVALID_DATA: u32 = 0xa1 in headers::KERN_FSP_RETVAL;
}

constants! {
    /// Facts of the FRTS copies the chain-of-trust command asks for.
    pub const FRTS_FACTS;

    /// How much of the end of FB RM reserves above the FRTS copy in video memory, estimated
    /// because RM's own reservations there are not known yet when it sends the command.
    pub ESTIMATED_RESERVE_FB: u64 = 0x200000 in headers::KERN_FSP_GH100;
}

/// The FRTS copies' size in bytes, in system memory and in video memory alike:
/// `NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K << 12`, as
/// `kfspSendBootCommands_GH100` computes it.
pub const FRTS_SIZE: u32 =
    crate::hw::gc6::gh100::NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K << 12;

/// `frtsVidmemOffset`: where the FRTS copy in video memory goes, counted down from the end of FB.
/// RM adds a boot-retry margin to [`ESTIMATED_RESERVE_FB`] that is 0 on a first boot, the only
/// boot this driver makes.
pub const FRTS_VIDMEM_OFFSET_FROM_END: u64 = ESTIMATED_RESERVE_FB;

/// `sizeof(MCTP_HEADER)` (packed: transport header, message type, vendor id): the NVDM type
/// byte of a first packet follows it.
pub const MCTP_HEADER_SIZE: usize = 7;

/// `NVDM_PAYLOAD_COT.version` as `kfspSendBootCommands_GH100` fills it (a literal in RM's code).
pub const NVDM_PAYLOAD_COT_VERSION: u16 = 1;

/// `NVDM_PAYLOAD_COT` (packed, 860 bytes): what the FSP needs to verify and start the GSP-FMC.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[repr(C)]
pub struct NvdmPayloadCot {
    /// `version`: [`NVDM_PAYLOAD_COT_VERSION`].
    pub version: U16,
    /// `size`: `sizeof(NVDM_PAYLOAD_COT)`.
    pub size: U16,
    /// `gspFmcSysmemOffset`: bus address of the GSP-FMC image, or all ones for none.
    pub gsp_fmc_sysmem_offset: U64,
    /// `frtsSysmemOffset`: bus address of a system-memory buffer for an FRTS copy.
    pub frts_sysmem_offset: U64,
    /// `frtsSysmemSize`.
    pub frts_sysmem_size: U32,
    /// `frtsVidmemOffset`: offset of the FRTS copy from the end of FB.
    pub frts_vidmem_offset: U64,
    /// `frtsVidmemSize`.
    pub frts_vidmem_size: U32,
    /// `hash384`: the GSP-FMC's SHA-384.
    pub hash384: [U32; 12],
    /// `publicKey`.
    pub public_key: [U32; 96],
    /// `signature`.
    pub signature: [U32; 96],
    /// `gspBootArgsSysmemOffset`: bus address of the `GSP_FMC_BOOT_PARAMS`.
    pub gsp_boot_args_sysmem_offset: U64,
}

/// `sizeof(NVDM_PAYLOAD_COT)`.
pub const NVDM_PAYLOAD_COT_SIZE: usize = size_of::<NvdmPayloadCot>();
const _: () = assert!(NVDM_PAYLOAD_COT_SIZE == 860);

/// `NVDM_PAYLOAD_COMMAND_RESPONSE` (packed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout, Unaligned)]
#[repr(C)]
pub struct NvdmPayloadCommandResponse {
    /// `taskId`.
    pub task_id: U32,
    /// `commandNvdmType`: the NVDM type of the command answered.
    pub command_nvdm_type: U32,
    /// `errorCode`: [`FSP_OK`] or an `FSP_ERR_*`.
    pub error_code: U32,
}

/// `GSP_DMA_TARGET`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum GspDmaTarget {
    LocalFb = 0,
    CoherentSystem = 1,
    NoncoherentSystem = 2,
}

/// `GSP_ACR_BOOT_GSP_RM_PARAMS`: where the WPR metadata is. 32 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspAcrBootGspRmParams {
    /// `target` (`GSP_DMA_TARGET`).
    pub target: u32,
    /// `gspRmDescSize`: `sizeof(GspFwWprMeta)`.
    pub gsp_rm_desc_size: u32,
    /// `gspRmDescOffset`: bus address of the WPR metadata.
    pub gsp_rm_desc_offset: u64,
    /// `wprCarveoutOffset` (0: the FMC chooses).
    pub wpr_carveout_offset: u64,
    /// `wprCarveoutSize`.
    pub wpr_carveout_size: u32,
    /// `bIsGspRmBoot` (`NvBool`).
    pub b_is_gsp_rm_boot: u8,
    pub _padding: [u8; 3],
}

/// `GSP_RM_PARAMS`: where the LIBOS arguments are. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspRmParams {
    /// `target` (`GSP_DMA_TARGET`).
    pub target: u32,
    pub _padding: u32,
    /// `bootArgsOffset`: bus address of the LIBOS arguments.
    pub boot_args_offset: u64,
}

/// `GSP_FMC_BOOT_PARAMS`: what the GSP-FMC is started with. 56 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspFmcBootParams {
    /// `initParams.regkeys` (confidential computing only; 0).
    pub init_params_regkeys: u32,
    pub _padding: u32,
    /// `bootGspRmParams`.
    pub boot_gsp_rm_params: GspAcrBootGspRmParams,
    /// `gspRmParams`.
    pub gsp_rm_params: GspRmParams,
}

/// The layout of the structures whose headers compile on their own, under NVIDIA's names.
pub const LAYOUTS: &[StructLayout] = &[
    c_struct!("NVDM_PAYLOAD_COMMAND_RESPONSE", NvdmPayloadCommandResponse, headers::NVDM_PAYLOAD_CMD_RESPONSE, [
        "taskId" => task_id,
        "commandNvdmType" => command_nvdm_type,
        "errorCode" => error_code,
    ]),
    c_struct!("GSP_ACR_BOOT_GSP_RM_PARAMS", GspAcrBootGspRmParams, headers::GSPIFPUB, [
        "target" => target,
        "gspRmDescSize" => gsp_rm_desc_size,
        "gspRmDescOffset" => gsp_rm_desc_offset,
        "wprCarveoutOffset" => wpr_carveout_offset,
        "wprCarveoutSize" => wpr_carveout_size,
        "bIsGspRmBoot" => b_is_gsp_rm_boot,
    ]),
    c_struct!("GSP_RM_PARAMS", GspRmParams, headers::GSPIFPUB, [
        "target" => target,
        "bootArgsOffset" => boot_args_offset,
    ]),
    c_struct!("GSP_FMC_BOOT_PARAMS", GspFmcBootParams, headers::GSPIFPUB, [
        "initParams.regkeys" => init_params_regkeys,
        "bootGspRmParams" => boot_gsp_rm_params,
        "gspRmParams" => gsp_rm_params,
    ]),
];
