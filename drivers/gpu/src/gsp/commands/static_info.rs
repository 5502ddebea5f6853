//! `GET_GSP_STATIC_INFO`: what GSP-RM tells about the GPU once it runs (`GspStaticConfigInfo`).

use super::*;

/// `MAX_GPC_COUNT` (`rpc_headers.h`).
pub const MAX_GPC_COUNT: usize = 32;
/// `NV0080_CTRL_GR_CAPS_TBL_SIZE`.
pub const NV0080_CTRL_GR_CAPS_TBL_SIZE: usize = 23;
/// `NV2080_GPU_MAX_GID_LENGTH`.
pub const NV2080_GPU_MAX_GID_LENGTH: usize = 256;
/// `NV2080_GPU_MAX_NAME_STRING_LENGTH`.
pub const NV2080_GPU_MAX_NAME_STRING_LENGTH: usize = 64;
/// `NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MAX_ENTRIES`.
pub const NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MAX_ENTRIES: usize = 16;
/// `NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MEM_TYPES`.
pub const NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MEM_TYPES: usize = 17;
/// `NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND_BUFFERS_CONTEXT_POOL`: entries of the GfxP buffer
/// arrays.
pub const NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND_BUFFERS_CONTEXT_POOL: usize = 5;
/// `NVGPU_ENGINE_CAPS_MASK_BITS`.
pub const NVGPU_ENGINE_CAPS_MASK_BITS: u32 = 32;
/// `NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX`.
pub const NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX: usize = 2;
/// `COMPUTE_BRANDING_TYPE_TESLA`.
pub const COMPUTE_BRANDING_TYPE_TESLA: u32 = 1;
/// Bytes of `NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS` (VF BARs; opaque here).
pub const SRIOV_CAPS_SIZE: usize = 72;

/// `NV2080_CTRL_GPU_GET_GID_INFO_PARAMS`: the GPU's unique id. 268 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GidInfo {
    /// `index`.
    pub index: u32,
    /// `flags`: `NV2080_GPU_CMD_GPU_GET_GID_FLAGS_*` (ASCII or binary, SHA-1 or SHA-256).
    pub flags: u32,
    /// `length`: bytes of `data` used.
    pub length: u32,
    /// `data`.
    pub data: [u8; NV2080_GPU_MAX_GID_LENGTH],
}

impl GidInfo {
    /// The used bytes of the id (at most `data`'s size, whatever `length` says).
    pub fn id(&self) -> &[u8] {
        &self.data[..(self.length as usize).min(NV2080_GPU_MAX_GID_LENGTH)]
    }
}

/// `NV2080_CTRL_GPU_GET_FERMI_GPC_INFO_PARAMS`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GpcInfo {
    /// `gpcMask`: GPCs present.
    pub gpc_mask: u32,
}

/// `NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TpcInfo {
    /// `gpcId`.
    pub gpc_id: u32,
    /// `tpcMask`: TPCs present in that GPC.
    pub tpc_mask: u32,
}

/// `NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ZcullInfo {
    /// `gpcId`.
    pub gpc_id: u32,
    /// `zcullMask`.
    pub zcull_mask: u32,
}

/// `NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS`. 32 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SkuInfo {
    /// `BoardID`.
    pub board_id: u32,
    /// `chipSKU`, ASCII.
    pub chip_sku: [u8; 4],
    /// `chipSKUMod`.
    pub chip_sku_mod: [u8; 2],
    /// `project`.
    pub project: [u8; 5],
    /// `projectSKU`.
    pub project_sku: [u8; 5],
    /// `CDP`.
    pub cdp: [u8; 6],
    /// `projectSKUMod`.
    pub project_sku_mod: [u8; 2],
    /// `businessCycle`.
    pub business_cycle: u32,
}

/// `NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO`: one framebuffer region. 48 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct FbRegionInfo {
    /// `base`: first byte.
    pub base: u64,
    /// `limit`: last byte (inclusive).
    pub limit: u64,
    /// `reserved`: bytes reserved for RM.
    pub reserved: u64,
    /// `performance`: relative speed; the highest is preferred.
    pub performance: u32,
    /// `supportCompressed`.
    pub support_compressed: u8,
    /// `supportISO`: display surfaces allowed.
    pub support_iso: u8,
    /// `bProtected`: only protected allocations.
    pub b_protected: u8,
    /// `blackList`: per `NVOS32_TYPE_*`, not allowed (deprecated).
    pub black_list: [u8; NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MEM_TYPES],
}

impl FbRegionInfo {
    /// Bytes in the region (`limit - base + 1`); 0 for an inverted region.
    pub const fn size(&self) -> u64 {
        if self.limit < self.base {
            0
        } else {
            (self.limit - self.base).saturating_add(1)
        }
    }
}

/// `NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS`. 776 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct FbRegionInfoParams {
    /// `numFBRegions`.
    pub num_fb_regions: u32,
    /// Padding before `fbRegion` (8-byte aligned).
    pub _padding: u32,
    /// `fbRegion`.
    pub fb_region: [FbRegionInfo; NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MAX_ENTRIES],
}

impl FbRegionInfoParams {
    /// The regions GSP-RM reported, bounded by the array whatever `numFBRegions` says.
    pub fn regions(&self) -> &[FbRegionInfo] {
        let n = (self.num_fb_regions as usize).min(NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MAX_ENTRIES);
        &self.fb_region[..n]
    }
}

/// `GspSMInfo` (`gsp_static_config.h`). 36 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspSmInfo {
    /// `version`.
    pub version: u32,
    /// `regBankCount`.
    pub reg_bank_count: u32,
    /// `regBankRegCount`.
    pub reg_bank_reg_count: u32,
    /// `maxWarpsPerSM`.
    pub max_warps_per_sm: u32,
    /// `maxThreadsPerWarp`.
    pub max_threads_per_warp: u32,
    /// `geomGsObufEntries`.
    pub geom_gs_obuf_entries: u32,
    /// `geomXbufEntries`.
    pub geom_xbuf_entries: u32,
    /// `maxSPPerSM`.
    pub max_sp_per_sm: u32,
    /// `rtCoreCount`.
    pub rt_core_count: u32,
}

/// `VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS` (`rpc_headers.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct VirtualDisplayNumHeads {
    /// `numHeads`.
    pub num_heads: u32,
    /// `maxNumHeads`.
    pub max_num_heads: u32,
}

/// `VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS` (`rpc_headers.h`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct VirtualDisplayMaxResolution {
    /// `headIndex`.
    pub head_index: u32,
    /// `maxHResolution`.
    pub max_h_resolution: u32,
    /// `maxVResolution`.
    pub max_v_resolution: u32,
}

/// `GspStaticConfigInfo` (`gsp_static_config.h`): what GSP-RM reports about the GPU after
/// INIT_DONE, the reply to `GET_GSP_STATIC_INFO`. 2168 bytes. The parts this driver has no use
/// for (`sriovCaps`) are kept as bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspStaticConfigInfo {
    /// `grCapsBits`.
    pub gr_caps_bits: [u8; NV0080_CTRL_GR_CAPS_TBL_SIZE],
    /// Padding before `gidInfo`.
    pub _padding0: u8,
    /// `gidInfo`: the GPU UUID.
    pub gid_info: GidInfo,
    /// `gpcInfo`.
    pub gpc_info: GpcInfo,
    /// `tpcInfo`, per GPC.
    pub tpc_info: [TpcInfo; MAX_GPC_COUNT],
    /// `zcullInfo`, per GPC.
    pub zcull_info: [ZcullInfo; MAX_GPC_COUNT],
    /// `SKUInfo`.
    pub sku_info: SkuInfo,
    /// `fbRegionInfoParams`: the framebuffer regions RM may allocate from.
    pub fb_region_info_params: FbRegionInfoParams,
    /// `computeBranding` (`COMPUTE_BRANDING_TYPE`).
    pub compute_branding: u32,
    /// Padding before `sriovCaps`.
    pub _padding1: u32,
    /// `sriovCaps` (`NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS`), opaque.
    pub sriov_caps: [u8; SRIOV_CAPS_SIZE],
    /// `sriovMaxGfid`.
    pub sriov_max_gfid: u32,
    /// `engineCaps`: bit `RM_ENGINE_TYPE_*` set for each engine present.
    pub engine_caps: [u32; NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX],
    /// `SM_info`.
    pub sm_info: GspSmInfo,
    /// `poisonFuseEnabled`.
    pub poison_fuse_enabled: u8,
    /// Padding before `fb_length`.
    pub _padding2: [u8; 7],
    /// `fb_length`: bytes of framebuffer memory.
    pub fb_length: u64,
    /// `fbio_mask`.
    pub fbio_mask: u32,
    /// `fb_bus_width`.
    pub fb_bus_width: u32,
    /// `fb_ram_type`.
    pub fb_ram_type: u32,
    /// `fbp_mask`.
    pub fbp_mask: u32,
    /// `l2_cache_size`.
    pub l2_cache_size: u32,
    /// `gfxpBufferSize`.
    pub gfxp_buffer_size: [u32; NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND_BUFFERS_CONTEXT_POOL],
    /// `gfxpBufferAlignment`.
    pub gfxp_buffer_alignment: [u32; NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND_BUFFERS_CONTEXT_POOL],
    /// `gpuNameString`: NUL-terminated ASCII.
    pub gpu_name_string: [u8; NV2080_GPU_MAX_NAME_STRING_LENGTH],
    /// `gpuShortNameString`.
    pub gpu_short_name_string: [u8; NV2080_GPU_MAX_NAME_STRING_LENGTH],
    /// `gpuNameString_Unicode`.
    pub gpu_name_string_unicode: [u16; NV2080_GPU_MAX_NAME_STRING_LENGTH],
    /// `bGpuInternalSku`.
    pub b_gpu_internal_sku: u8,
    /// `bIsQuadroGeneric`.
    pub b_is_quadro_generic: u8,
    /// `bIsQuadroAd`.
    pub b_is_quadro_ad: u8,
    /// `bIsNvidiaNvs`.
    pub b_is_nvidia_nvs: u8,
    /// `bIsVgx`.
    pub b_is_vgx: u8,
    /// `bGeforceSmb`.
    pub b_geforce_smb: u8,
    /// `bIsTitan`.
    pub b_is_titan: u8,
    /// `bIsTesla`.
    pub b_is_tesla: u8,
    /// `bIsMobile`.
    pub b_is_mobile: u8,
    /// `bIsGc6Rtd3Allowed`.
    pub b_is_gc6_rtd3_allowed: u8,
    /// `bIsGcOffRtd3Allowed`.
    pub b_is_gc_off_rtd3_allowed: u8,
    /// `bIsGcoffLegacyAllowed`.
    pub b_is_gcoff_legacy_allowed: u8,
    /// `bar1PdeBase`.
    pub bar1_pde_base: u64,
    /// `bar2PdeBase`.
    pub bar2_pde_base: u64,
    /// `bVbiosValid`.
    pub b_vbios_valid: u8,
    /// Padding before `vbiosSubVendor`.
    pub _padding3: [u8; 3],
    /// `vbiosSubVendor`.
    pub vbios_sub_vendor: u32,
    /// `vbiosSubDevice`.
    pub vbios_sub_device: u32,
    /// `bPageRetirementSupported`.
    pub b_page_retirement_supported: u8,
    /// `bSplitVasBetweenServerClientRm`.
    pub b_split_vas_between_server_client_rm: u8,
    /// `bClRootportNeedsNosnoopWAR`.
    pub b_cl_rootport_needs_nosnoop_war: u8,
    /// Padding before `displaylessMaxHeads`.
    pub _padding4: u8,
    /// `displaylessMaxHeads`.
    pub displayless_max_heads: VirtualDisplayNumHeads,
    /// `displaylessMaxResolution`.
    pub displayless_max_resolution: VirtualDisplayMaxResolution,
    /// Padding before `displaylessMaxPixels`.
    pub _padding5: u32,
    /// `displaylessMaxPixels`.
    pub displayless_max_pixels: u64,
    /// `hInternalClient`: GSP-RM's own client, for internal controls.
    pub h_internal_client: u32,
    /// `hInternalDevice`.
    pub h_internal_device: u32,
    /// `hInternalSubdevice`.
    pub h_internal_subdevice: u32,
    /// `bSelfHostedMode`.
    pub b_self_hosted_mode: u8,
    /// `bAtsSupported`.
    pub b_ats_supported: u8,
    /// `bIsGpuUefi`.
    pub b_is_gpu_uefi: u8,
    /// Trailing padding.
    pub _padding6: u8,
}

/// `RM_ENGINE_TYPE_*` values (`gpu_engine_type.h`) the driver looks for in `engineCaps`.
pub mod rm_engine_type {
    /// `RM_ENGINE_TYPE_GR0` (`RM_ENGINE_TYPE_GRAPHICS`).
    pub const RM_ENGINE_TYPE_GR0: u32 = 0x01;
    /// `RM_ENGINE_TYPE_GR_SIZE`.
    pub const RM_ENGINE_TYPE_GR_SIZE: u32 = 8;
    /// `RM_ENGINE_TYPE_COPY0`.
    pub const RM_ENGINE_TYPE_COPY0: u32 = 0x09;
    /// `RM_ENGINE_TYPE_COPY_SIZE`.
    pub const RM_ENGINE_TYPE_COPY_SIZE: u32 = 10;
    /// `RM_ENGINE_TYPE_NVDEC0`.
    pub const RM_ENGINE_TYPE_NVDEC0: u32 = 0x1d;
    /// `RM_ENGINE_TYPE_NVENC0`.
    pub const RM_ENGINE_TYPE_NVENC0: u32 = 0x25;
    /// `RM_ENGINE_TYPE_SEC2`.
    pub const RM_ENGINE_TYPE_SEC2: u32 = 0x30;
    /// `RM_ENGINE_TYPE_NVJPEG0`.
    pub const RM_ENGINE_TYPE_NVJPEG0: u32 = 0x35;
    /// `RM_ENGINE_TYPE_OFA`.
    pub const RM_ENGINE_TYPE_OFA: u32 = 0x3d;
    /// `RM_ENGINE_TYPE_LAST`: one past the last.
    pub const RM_ENGINE_TYPE_LAST: u32 = 0x3e;
}

impl GspStaticConfigInfo {
    /// All zero: the request `GET_GSP_STATIC_INFO` sends (RM sends the struct's size of zeroes
    /// for GSP-RM to fill).
    pub fn zeroed() -> Self {
        Self::new_zeroed()
    }

    /// Whether engine `rm_engine_type` (`RM_ENGINE_TYPE_*`) is present
    /// (`NVGPU_GET_ENGINE_CAPS_MASK`).
    pub fn has_engine(&self, rm_engine_type: u32) -> bool {
        let word = (rm_engine_type / NVGPU_ENGINE_CAPS_MASK_BITS) as usize;
        let bit = rm_engine_type % NVGPU_ENGINE_CAPS_MASK_BITS;
        self.engine_caps.get(word).is_some_and(|w| w & (1 << bit) != 0)
    }

    /// The copy engines present, as indices 0..`RM_ENGINE_TYPE_COPY_SIZE`.
    pub fn copy_engines(&self) -> impl Iterator<Item = u32> + '_ {
        use rm_engine_type::*;
        (0..RM_ENGINE_TYPE_COPY_SIZE).filter(move |i| self.has_engine(RM_ENGINE_TYPE_COPY0 + i))
    }

    /// The graphics/compute engines present, as indices 0..`RM_ENGINE_TYPE_GR_SIZE`.
    pub fn gr_engines(&self) -> impl Iterator<Item = u32> + '_ {
        use rm_engine_type::*;
        (0..RM_ENGINE_TYPE_GR_SIZE).filter(move |i| self.has_engine(RM_ENGINE_TYPE_GR0 + i))
    }

    /// The framebuffer regions.
    pub fn fb_regions(&self) -> &[FbRegionInfo] {
        self.fb_region_info_params.regions()
    }

    /// Bytes of framebuffer in all regions (each `limit` is inclusive).
    pub fn fb_bytes(&self) -> u64 {
        self.fb_regions().iter().map(|r| r.limit.saturating_sub(r.base).saturating_add(1)).sum()
    }

    /// The marketing name, up to its NUL (ASCII; other bytes replaced by `?`).
    pub fn gpu_name(&self) -> String {
        c_string(&self.gpu_name_string)
    }

    /// The short name (`gpuShortNameString`).
    pub fn gpu_short_name(&self) -> String {
        c_string(&self.gpu_short_name_string)
    }
}

/// A NUL-terminated byte string from firmware, as printable text.
pub(super) fn c_string(bytes: &[u8]) -> String {
    bytes
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '?' })
        .collect()
}

/// `GET_GSP_STATIC_INFO`: GSP-RM's static configuration (`rpcGetGspStaticInfo_v14_00`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GetGspStaticInfo;

impl Rpc for GetGspStaticInfo {
    const FUNCTION: RpcFunction = RpcFunction::GetGspStaticInfo;
    type Reply = Box<GspStaticConfigInfo>;
    fn encode(&self, out: &mut Vec<u8>) {
        out.resize(out.len() + size_of::<GspStaticConfigInfo>(), 0);
    }
    fn decode_reply(payload: &[u8]) -> Result<Self::Reply, RpcError> {
        read_prefix::<GspStaticConfigInfo>(payload).map(Box::new).ok_or(RpcError::bad_reply(
            Self::FUNCTION,
            "shorter than GspStaticConfigInfo",
            payload.len(),
        ))
    }
    fn reply_len(&self) -> Option<usize> {
        Some(size_of::<GspStaticConfigInfo>())
    }
}
