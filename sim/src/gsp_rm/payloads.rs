//! RPC payload layouts the GSP-RM model reads and writes, byte for byte as open-gpu-kernel-modules
//! 535.261.03 lays them out.
//!
//! The structures both sides use are the driver's (`nvgpu::gsp::rpcs`, `nvgpu::gsp::rm`, checked
//! against NVIDIA's headers by `tests/tests/gsp_rpc_layout.rs`), re-exported here: one definition
//! of each fact. What only the model needs follows, with its source:
//! `src/common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080gpu.h` and `ctrl/ctrl2080/ctrl2080gpu.h`
//! (the controls the model answers), `ctrl/ctrl2080/ctrl2080fb.h` (RAM types); [`FACTS`] lists
//! them for the header conformance check.

use nvgpu::hw::headers::OGKM_PINNED;
use nvgpu::hw::{FactValue, Header, HeaderFact};

pub use nvgpu::gsp::rm::{
    Nv0000AllocParameters, Nv0080AllocParameters, Nv2080AllocParameters, NV01_DEVICE_0, NV01_ROOT, NV20_SUBDEVICE_0,
};
pub use nvgpu::gsp::rpcs::{
    rm_engine_type, FbRegionInfo, GidInfo, GspStaticConfigInfo, GspSystemInfo, Nvos00ParametersV03_00,
    PackedRegistryEntry, PackedRegistryTable, RpcFreeV03_00, RpcGspRmAllocV03_00, RpcGspRmControlV03_00,
    RpcRunCpuSequencerV17_00, RpcUnloadingGuestDriverV1F07, SeqDelayUs, SeqOpcode, SeqRegModify, SeqRegPoll,
    SeqRegWrite, GSP_SEQ_BUF_REG_SAVE_SIZE, NV2080_GPU_MAX_NAME_STRING_LENGTH, REGISTRY_TABLE_ENTRY_TYPE_BINARY,
    REGISTRY_TABLE_ENTRY_TYPE_DWORD, REGISTRY_TABLE_ENTRY_TYPE_STRING, RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR,
    RMAPI_RPC_FLAGS_SERIALIZED,
};

/// `sizeof(GspSystemInfo)`.
pub const GSP_SYSTEM_INFO_SIZE: usize = core::mem::size_of::<GspSystemInfo>();
/// `sizeof(GspStaticConfigInfo)`.
pub const GSP_STATIC_CONFIG_INFO_SIZE: usize = core::mem::size_of::<GspStaticConfigInfo>();

/// `NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY` (flags 1:0), type SHA-1 (2:2 = 0).
pub const NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY: u32 = 2;
/// Bytes of a binary GPU UUID (`RM_SHA1_GID_SIZE`).
pub const RM_SHA1_GID_SIZE: u32 = 16;
/// `NV2080_CTRL_FB_INFO_RAM_TYPE_HBM2`.
pub const NV2080_CTRL_FB_INFO_RAM_TYPE_HBM2: u32 = 0x0F;
/// `NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6`.
pub const NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6: u32 = 0x11;

// ---------------------------------------------------------------------------------------------
// Controls.

/// `NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2`.
pub const NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2: u32 = 0x0080_0292;
/// `NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE`.
pub const NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE: usize = 160;
/// `sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS)`: numClasses, classList[160].
pub const NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS_SIZE: u32 = 4 + 4 * NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE as u32;
/// `NV2080_CTRL_CMD_GPU_GET_INFO_V2`.
pub const NV2080_CTRL_CMD_GPU_GET_INFO_V2: u32 = 0x2080_0102;
/// `NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE`.
pub const NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE: usize = 0x40;
/// `sizeof(NV2080_CTRL_GPU_GET_INFO_V2_PARAMS)`: gpuInfoListSize, {index, data}[64].
pub const NV2080_CTRL_GPU_GET_INFO_V2_PARAMS_SIZE: u32 = 4 + 8 * NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE as u32;
/// `NV2080_CTRL_GPU_INFO_INDEX_MINOR_REVISION_EXT`.
pub const NV2080_CTRL_GPU_INFO_INDEX_MINOR_REVISION_EXT: u32 = 0x04;
/// `NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS` (`_YES` = 1).
pub const NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS: u32 = 0x1f;
/// `NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE` (`_UNSUPPORTED` = 0).
pub const NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE: u32 = 0x2a;
/// `NV2080_CTRL_GPU_INFO_INDEX_4K_PAGE_ISOLATION_REQUIRED` (`_NO` = 0).
pub const NV2080_CTRL_GPU_INFO_INDEX_4K_PAGE_ISOLATION_REQUIRED: u32 = 0x33;
/// `NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED`.
pub const NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED: u32 = 0x34;
/// `NV2080_CTRL_GPU_INFO_INDEX_MOBILE_CONFIG_ENABLED` (`_NO` = 0).
pub const NV2080_CTRL_GPU_INFO_INDEX_MOBILE_CONFIG_ENABLED: u32 = 0x35;

/// The model-only facts above, in `nvgpu::hw::HeaderFact` form (see [`super::FACTS`]).
pub const FACTS: &[HeaderFact] = &[
    fact("NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2", CTRL0080GPU, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2 as u64),
    fact("NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE", CTRL0080GPU, NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE as u64),
    fact("NV2080_CTRL_CMD_GPU_GET_INFO_V2", CTRL2080GPU, NV2080_CTRL_CMD_GPU_GET_INFO_V2 as u64),
    fact("NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE", CTRL2080GPU, NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE as u64),
    fact(
        "NV2080_CTRL_GPU_INFO_INDEX_MINOR_REVISION_EXT",
        CTRL2080GPU,
        NV2080_CTRL_GPU_INFO_INDEX_MINOR_REVISION_EXT as u64,
    ),
    fact("NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS", CTRL2080GPU, NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS as u64),
    fact("NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE", CTRL2080GPU, NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE as u64),
    fact(
        "NV2080_CTRL_GPU_INFO_INDEX_4K_PAGE_ISOLATION_REQUIRED",
        CTRL2080GPU,
        NV2080_CTRL_GPU_INFO_INDEX_4K_PAGE_ISOLATION_REQUIRED as u64,
    ),
    fact("NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED", CTRL2080GPU, NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED as u64),
    fact(
        "NV2080_CTRL_GPU_INFO_INDEX_MOBILE_CONFIG_ENABLED",
        CTRL2080GPU,
        NV2080_CTRL_GPU_INFO_INDEX_MOBILE_CONFIG_ENABLED as u64,
    ),
    fact(
        "NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY",
        CTRL2080GPU,
        NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY as u64,
    ),
    fact("NV2080_CTRL_FB_INFO_RAM_TYPE_HBM2", CTRL2080FB, NV2080_CTRL_FB_INFO_RAM_TYPE_HBM2 as u64),
    fact("NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6", CTRL2080FB, NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6 as u64),
];

const fn pinned(path: &'static str) -> Header {
    Header { release: OGKM_PINNED, path }
}

const CTRL0080GPU: Header = pinned("src/common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080gpu.h");
const CTRL2080GPU: Header = pinned("src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h");
const CTRL2080FB: Header = pinned("src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080fb.h");

pub(crate) const fn fact(name: &'static str, header: Header, value: u64) -> HeaderFact {
    HeaderFact { name, header, value: FactValue::Number(value) }
}
