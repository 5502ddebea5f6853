//! RPC payload layouts the GSP-RM model reads and writes, byte for byte as open-gpu-kernel-modules
//! 535.261.03 lays them out.
//!
//! The structures both sides use are the driver's (`nvgpu::gsp::commands`, `nvgpu::rm`, checked
//! against NVIDIA's headers by `tests/tests/gsp_rpc_layout.rs`), and the controls the model
//! answers, with their list sizes and values, are `nvgpu::hw::rm`'s (checked by
//! `tests/tests/header_conformance.rs`); all are re-exported here: one definition of each fact.
//! The parameter sizes below are derived from them.

pub use nvgpu::hw::rm::{
    NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE, NV2080_CTRL_CMD_GPU_GET_INFO_V2,
    NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6, NV2080_CTRL_FB_INFO_RAM_TYPE_HBM2,
    NV2080_CTRL_GPU_INFO_INDEX_4K_PAGE_ISOLATION_REQUIRED, NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED,
    NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE, NV2080_CTRL_GPU_INFO_INDEX_MINOR_REVISION_EXT,
    NV2080_CTRL_GPU_INFO_INDEX_MOBILE_CONFIG_ENABLED, NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS,
    NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE, NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY, RM_SHA1_GID_SIZE,
};

pub use nvgpu::gsp::commands::{
    rm_engine_type, FbRegionInfo, GidInfo, GspStaticConfigInfo, GspSystemInfo, Nvos00ParametersV03_00,
    PackedRegistryEntry, PackedRegistryTable, RpcFreeV03_00, RpcGspRmAllocV03_00, RpcGspRmControlV03_00,
    RpcRunCpuSequencerV17_00, RpcUnloadingGuestDriverV1F07, GSP_SEQ_BUF_REG_SAVE_SIZE,
    NV2080_GPU_MAX_NAME_STRING_LENGTH, REGISTRY_TABLE_ENTRY_TYPE_BINARY, REGISTRY_TABLE_ENTRY_TYPE_DWORD,
    REGISTRY_TABLE_ENTRY_TYPE_STRING, RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR, RMAPI_RPC_FLAGS_SERIALIZED,
};
pub use nvgpu::gsp::sequencer::{SeqDelayUs, SeqOpcode, SeqRegModify, SeqRegPoll, SeqRegWrite};
pub use nvgpu::rm::{
    Nv0000AllocParameters, Nv0080AllocParameters, Nv2080AllocParameters, NV01_DEVICE_0, NV01_ROOT, NV20_SUBDEVICE_0,
};

/// `sizeof(GspSystemInfo)`.
pub const GSP_SYSTEM_INFO_SIZE: usize = core::mem::size_of::<GspSystemInfo>();
/// `sizeof(GspStaticConfigInfo)`.
pub const GSP_STATIC_CONFIG_INFO_SIZE: usize = core::mem::size_of::<GspStaticConfigInfo>();

// ---------------------------------------------------------------------------------------------
// Controls.

/// `sizeof(NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS)`: numClasses, classList[160].
pub const NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS_SIZE: u32 = 4 + 4 * NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE as u32;
/// `sizeof(NV2080_CTRL_GPU_GET_INFO_V2_PARAMS)`: gpuInfoListSize, {index, data}[64].
pub const NV2080_CTRL_GPU_GET_INFO_V2_PARAMS_SIZE: u32 = 4 + 8 * NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE as u32;
