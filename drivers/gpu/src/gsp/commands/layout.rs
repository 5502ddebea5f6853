//! Layout tables of the RPC structures, for `tests/tests/gsp_rpc_layout.rs` (checked against
//! NVIDIA's headers by the C compiler).

use super::*;

pub(super) const fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

macro_rules! field {
    ($ty:ty, $c:literal => $($f:ident).+) => {
        FieldLayout { c_name: $c, offset: offset_of!($ty, $($f).+), size: field_size(|s: &$ty| &s.$($f).+) }
    };
}

/// A flexible array member `$c` at `$offset` (size 0: the test compares the offset only).
macro_rules! flexible {
    ($c:literal at $offset:expr) => {
        FieldLayout { c_name: $c, offset: $offset, size: 0 }
    };
}

macro_rules! layout {
    ($c:literal, $ty:ty, $header:expr, [$($field:expr),* $(,)?]) => {
        StructLayout {
            c_name: $c,
            rust_name: stringify!($ty),
            header: $header,
            size: size_of::<$ty>(),
            align: core::mem::align_of::<$ty>(),
            fields: &[$($field),*],
        }
    };
}

/// Every payload structure of this module, for the header conformance test. Flexible array
/// members have size 0 and are compared by offset.
pub const STRUCT_LAYOUTS: &[StructLayout] = &[
    layout!(
        "rpc_gsp_rm_alloc_v03_00",
        RpcGspRmAllocV03_00,
        headers::RPC_STRUCTURES,
        [
            field!(RpcGspRmAllocV03_00, "hClient" => h_client),
            field!(RpcGspRmAllocV03_00, "hParent" => h_parent),
            field!(RpcGspRmAllocV03_00, "hObject" => h_object),
            field!(RpcGspRmAllocV03_00, "hClass" => h_class),
            field!(RpcGspRmAllocV03_00, "status" => status),
            field!(RpcGspRmAllocV03_00, "paramsSize" => params_size),
            field!(RpcGspRmAllocV03_00, "flags" => flags),
            field!(RpcGspRmAllocV03_00, "reserved" => reserved),
            flexible!("params" at size_of::<RpcGspRmAllocV03_00>()),
        ]
    ),
    layout!(
        "rpc_gsp_rm_control_v03_00",
        RpcGspRmControlV03_00,
        headers::RPC_STRUCTURES,
        [
            field!(RpcGspRmControlV03_00, "hClient" => h_client),
            field!(RpcGspRmControlV03_00, "hObject" => h_object),
            field!(RpcGspRmControlV03_00, "cmd" => cmd),
            field!(RpcGspRmControlV03_00, "status" => status),
            field!(RpcGspRmControlV03_00, "paramsSize" => params_size),
            field!(RpcGspRmControlV03_00, "flags" => flags),
            flexible!("params" at size_of::<RpcGspRmControlV03_00>()),
        ]
    ),
    layout!(
        "NVOS00_PARAMETERS_v03_00",
        Nvos00ParametersV03_00,
        headers::G_SDK_STRUCTURES,
        [
            field!(Nvos00ParametersV03_00, "hRoot" => h_root),
            field!(Nvos00ParametersV03_00, "hObjectParent" => h_object_parent),
            field!(Nvos00ParametersV03_00, "hObjectOld" => h_object_old),
            field!(Nvos00ParametersV03_00, "status" => status),
        ]
    ),
    layout!(
        "rpc_free_v03_00",
        RpcFreeV03_00,
        headers::RPC_STRUCTURES,
        [
            field!(RpcFreeV03_00, "params" => params),
            field!(RpcFreeV03_00, "params.hRoot" => params.h_root),
            field!(RpcFreeV03_00, "params.hObjectOld" => params.h_object_old),
            field!(RpcFreeV03_00, "params.status" => params.status),
        ]
    ),
    layout!(
        "rpc_unloading_guest_driver_v1F_07",
        RpcUnloadingGuestDriverV1F07,
        headers::RPC_STRUCTURES,
        [
            field!(RpcUnloadingGuestDriverV1F07, "bInPMTransition" => b_in_pm_transition),
            field!(RpcUnloadingGuestDriverV1F07, "bGc6Entering" => b_gc6_entering),
            field!(RpcUnloadingGuestDriverV1F07, "newLevel" => new_level),
        ]
    ),
    layout!(
        "rpc_run_cpu_sequencer_v17_00",
        RpcRunCpuSequencerV17_00,
        headers::RPC_STRUCTURES,
        [
            field!(RpcRunCpuSequencerV17_00, "bufferSizeDWord" => buffer_size_dword),
            field!(RpcRunCpuSequencerV17_00, "cmdIndex" => cmd_index),
            field!(RpcRunCpuSequencerV17_00, "regSaveArea" => reg_save_area),
            flexible!("commandBuffer" at size_of::<RpcRunCpuSequencerV17_00>()),
        ]
    ),
    layout!(
        "rpc_os_error_log_v17_00",
        RpcOsErrorLogV17_00,
        headers::RPC_STRUCTURES,
        [
            field!(RpcOsErrorLogV17_00, "exceptType" => except_type),
            field!(RpcOsErrorLogV17_00, "runlistId" => runlist_id),
            field!(RpcOsErrorLogV17_00, "chid" => chid),
            field!(RpcOsErrorLogV17_00, "errString" => err_string),
        ]
    ),
    layout!(
        "rpc_post_event_v17_00",
        RpcPostEventV17_00,
        headers::RPC_STRUCTURES,
        [
            field!(RpcPostEventV17_00, "hClient" => h_client),
            field!(RpcPostEventV17_00, "hEvent" => h_event),
            field!(RpcPostEventV17_00, "notifyIndex" => notify_index),
            field!(RpcPostEventV17_00, "data" => data),
            field!(RpcPostEventV17_00, "info16" => info16),
            field!(RpcPostEventV17_00, "status" => status),
            field!(RpcPostEventV17_00, "eventDataSize" => event_data_size),
            field!(RpcPostEventV17_00, "bNotifyList" => b_notify_list),
            flexible!("eventData" at POST_EVENT_DATA_OFFSET),
        ]
    ),
    layout!(
        "BUSINFO",
        BusInfo,
        headers::G_CHIPSET_NVOC,
        [
            field!(BusInfo, "deviceID" => device_id),
            field!(BusInfo, "vendorID" => vendor_id),
            field!(BusInfo, "subdeviceID" => subdevice_id),
            field!(BusInfo, "subvendorID" => subvendor_id),
            field!(BusInfo, "revisionID" => revision_id),
        ]
    ),
    layout!(
        "GSP_VF_INFO",
        GspVfInfo,
        headers::GSP_STATIC_CONFIG,
        [
            field!(GspVfInfo, "totalVFs" => total_vfs),
            field!(GspVfInfo, "firstVFOffset" => first_vf_offset),
            field!(GspVfInfo, "FirstVFBar0Address" => first_vf_bar0_address),
            field!(GspVfInfo, "FirstVFBar1Address" => first_vf_bar1_address),
            field!(GspVfInfo, "FirstVFBar2Address" => first_vf_bar2_address),
            field!(GspVfInfo, "b64bitBar0" => b_64bit_bar0),
            field!(GspVfInfo, "b64bitBar1" => b_64bit_bar1),
            field!(GspVfInfo, "b64bitBar2" => b_64bit_bar2),
        ]
    ),
    layout!(
        "GspSystemInfo",
        GspSystemInfo,
        headers::GSP_STATIC_CONFIG,
        [
            field!(GspSystemInfo, "gpuPhysAddr" => gpu_phys_addr),
            field!(GspSystemInfo, "gpuPhysFbAddr" => gpu_phys_fb_addr),
            field!(GspSystemInfo, "gpuPhysInstAddr" => gpu_phys_inst_addr),
            field!(GspSystemInfo, "nvDomainBusDeviceFunc" => nv_domain_bus_device_func),
            field!(GspSystemInfo, "simAccessBufPhysAddr" => sim_access_buf_phys_addr),
            field!(GspSystemInfo, "pcieAtomicsOpMask" => pcie_atomics_op_mask),
            field!(GspSystemInfo, "consoleMemSize" => console_mem_size),
            field!(GspSystemInfo, "maxUserVa" => max_user_va),
            field!(GspSystemInfo, "pciConfigMirrorBase" => pci_config_mirror_base),
            field!(GspSystemInfo, "pciConfigMirrorSize" => pci_config_mirror_size),
            field!(GspSystemInfo, "oorArch" => oor_arch),
            field!(GspSystemInfo, "clPdbProperties" => cl_pdb_properties),
            field!(GspSystemInfo, "Chipset" => chipset),
            field!(GspSystemInfo, "bGpuBehindBridge" => b_gpu_behind_bridge),
            field!(GspSystemInfo, "bMnocAvailable" => b_mnoc_available),
            field!(GspSystemInfo, "bUpstreamL0sUnsupported" => b_upstream_l0s_unsupported),
            field!(GspSystemInfo, "bUpstreamL1Unsupported" => b_upstream_l1_unsupported),
            field!(GspSystemInfo, "bUpstreamL1PorSupported" => b_upstream_l1_por_supported),
            field!(GspSystemInfo, "bUpstreamL1PorMobileOnly" => b_upstream_l1_por_mobile_only),
            field!(GspSystemInfo, "upstreamAddressValid" => upstream_address_valid),
            field!(GspSystemInfo, "FHBBusInfo" => fhb_bus_info),
            field!(GspSystemInfo, "chipsetIDInfo" => chipset_id_info),
            field!(GspSystemInfo, "acpiMethodData" => acpi_method_data),
            field!(GspSystemInfo, "hypervisorType" => hypervisor_type),
            field!(GspSystemInfo, "virtualConfigBits" => virtual_config_bits),
            field!(GspSystemInfo, "bIsPassthru" => b_is_passthru),
            field!(GspSystemInfo, "sysTimerOffsetNs" => sys_timer_offset_ns),
            field!(GspSystemInfo, "gspVFInfo" => gsp_vf_info),
            field!(GspSystemInfo, "bTdrEventSupported" => b_tdr_event_supported),
        ]
    ),
    layout!(
        "PACKED_REGISTRY_ENTRY",
        PackedRegistryEntry,
        headers::G_OS_NVOC,
        [
            field!(PackedRegistryEntry, "nameOffset" => name_offset),
            field!(PackedRegistryEntry, "type" => type_),
            field!(PackedRegistryEntry, "data" => data),
            field!(PackedRegistryEntry, "length" => length),
        ]
    ),
    layout!(
        "PACKED_REGISTRY_TABLE",
        PackedRegistryTable,
        headers::G_OS_NVOC,
        [
            field!(PackedRegistryTable, "size" => size),
            field!(PackedRegistryTable, "numEntries" => num_entries),
            flexible!("entries" at size_of::<PackedRegistryTable>()),
        ]
    ),
    layout!(
        "NV2080_CTRL_GPU_GET_GID_INFO_PARAMS",
        GidInfo,
        headers::CTRL2080GPU,
        [
            field!(GidInfo, "index" => index),
            field!(GidInfo, "flags" => flags),
            field!(GidInfo, "length" => length),
            field!(GidInfo, "data" => data),
        ]
    ),
    layout!(
        "NV2080_CTRL_GPU_GET_FERMI_GPC_INFO_PARAMS",
        GpcInfo,
        headers::CTRL2080GPU,
        [field!(GpcInfo, "gpcMask" => gpc_mask),]
    ),
    layout!(
        "NV2080_CTRL_GPU_GET_FERMI_TPC_INFO_PARAMS",
        TpcInfo,
        headers::CTRL2080GPU,
        [field!(TpcInfo, "gpcId" => gpc_id), field!(TpcInfo, "tpcMask" => tpc_mask),]
    ),
    layout!(
        "NV2080_CTRL_GPU_GET_FERMI_ZCULL_INFO_PARAMS",
        ZcullInfo,
        headers::CTRL2080GPU,
        [field!(ZcullInfo, "gpcId" => gpc_id), field!(ZcullInfo, "zcullMask" => zcull_mask),]
    ),
    layout!(
        "NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS",
        SkuInfo,
        headers::CTRL2080BIOS,
        [
            field!(SkuInfo, "BoardID" => board_id),
            field!(SkuInfo, "chipSKU" => chip_sku),
            field!(SkuInfo, "chipSKUMod" => chip_sku_mod),
            field!(SkuInfo, "project" => project),
            field!(SkuInfo, "projectSKU" => project_sku),
            field!(SkuInfo, "CDP" => cdp),
            field!(SkuInfo, "projectSKUMod" => project_sku_mod),
            field!(SkuInfo, "businessCycle" => business_cycle),
        ]
    ),
    layout!(
        "NV2080_CTRL_CMD_FB_GET_FB_REGION_FB_REGION_INFO",
        FbRegionInfo,
        headers::CTRL2080FB,
        [
            field!(FbRegionInfo, "base" => base),
            field!(FbRegionInfo, "limit" => limit),
            field!(FbRegionInfo, "reserved" => reserved),
            field!(FbRegionInfo, "performance" => performance),
            field!(FbRegionInfo, "supportCompressed" => support_compressed),
            field!(FbRegionInfo, "supportISO" => support_iso),
            field!(FbRegionInfo, "bProtected" => b_protected),
            field!(FbRegionInfo, "blackList" => black_list),
        ]
    ),
    layout!(
        "NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS",
        FbRegionInfoParams,
        headers::CTRL2080FB,
        [
            field!(FbRegionInfoParams, "numFBRegions" => num_fb_regions),
            field!(FbRegionInfoParams, "fbRegion" => fb_region),
        ]
    ),
    layout!(
        "GspSMInfo",
        GspSmInfo,
        headers::GSP_STATIC_CONFIG,
        [
            field!(GspSmInfo, "version" => version),
            field!(GspSmInfo, "regBankCount" => reg_bank_count),
            field!(GspSmInfo, "regBankRegCount" => reg_bank_reg_count),
            field!(GspSmInfo, "maxWarpsPerSM" => max_warps_per_sm),
            field!(GspSmInfo, "maxThreadsPerWarp" => max_threads_per_warp),
            field!(GspSmInfo, "geomGsObufEntries" => geom_gs_obuf_entries),
            field!(GspSmInfo, "geomXbufEntries" => geom_xbuf_entries),
            field!(GspSmInfo, "maxSPPerSM" => max_sp_per_sm),
            field!(GspSmInfo, "rtCoreCount" => rt_core_count),
        ]
    ),
    layout!(
        "VIRTUAL_DISPLAY_GET_NUM_HEADS_PARAMS",
        VirtualDisplayNumHeads,
        headers::RPC_HEADERS,
        [
            field!(VirtualDisplayNumHeads, "numHeads" => num_heads),
            field!(VirtualDisplayNumHeads, "maxNumHeads" => max_num_heads),
        ]
    ),
    layout!(
        "VIRTUAL_DISPLAY_GET_MAX_RESOLUTION_PARAMS",
        VirtualDisplayMaxResolution,
        headers::RPC_HEADERS,
        [
            field!(VirtualDisplayMaxResolution, "headIndex" => head_index),
            field!(VirtualDisplayMaxResolution, "maxHResolution" => max_h_resolution),
            field!(VirtualDisplayMaxResolution, "maxVResolution" => max_v_resolution),
        ]
    ),
    layout!(
        "GspStaticConfigInfo",
        GspStaticConfigInfo,
        headers::GSP_STATIC_CONFIG,
        [
            field!(GspStaticConfigInfo, "grCapsBits" => gr_caps_bits),
            field!(GspStaticConfigInfo, "gidInfo" => gid_info),
            field!(GspStaticConfigInfo, "gpcInfo" => gpc_info),
            field!(GspStaticConfigInfo, "tpcInfo" => tpc_info),
            field!(GspStaticConfigInfo, "zcullInfo" => zcull_info),
            field!(GspStaticConfigInfo, "SKUInfo" => sku_info),
            field!(GspStaticConfigInfo, "fbRegionInfoParams" => fb_region_info_params),
            field!(GspStaticConfigInfo, "fbRegionInfoParams.numFBRegions" => fb_region_info_params.num_fb_regions),
            field!(GspStaticConfigInfo, "fbRegionInfoParams.fbRegion" => fb_region_info_params.fb_region),
            field!(GspStaticConfigInfo, "computeBranding" => compute_branding),
            field!(GspStaticConfigInfo, "sriovCaps" => sriov_caps),
            field!(GspStaticConfigInfo, "sriovMaxGfid" => sriov_max_gfid),
            field!(GspStaticConfigInfo, "engineCaps" => engine_caps),
            field!(GspStaticConfigInfo, "SM_info" => sm_info),
            field!(GspStaticConfigInfo, "poisonFuseEnabled" => poison_fuse_enabled),
            field!(GspStaticConfigInfo, "fb_length" => fb_length),
            field!(GspStaticConfigInfo, "fbio_mask" => fbio_mask),
            field!(GspStaticConfigInfo, "fb_bus_width" => fb_bus_width),
            field!(GspStaticConfigInfo, "fb_ram_type" => fb_ram_type),
            field!(GspStaticConfigInfo, "fbp_mask" => fbp_mask),
            field!(GspStaticConfigInfo, "l2_cache_size" => l2_cache_size),
            field!(GspStaticConfigInfo, "gfxpBufferSize" => gfxp_buffer_size),
            field!(GspStaticConfigInfo, "gfxpBufferAlignment" => gfxp_buffer_alignment),
            field!(GspStaticConfigInfo, "gpuNameString" => gpu_name_string),
            field!(GspStaticConfigInfo, "gpuShortNameString" => gpu_short_name_string),
            field!(GspStaticConfigInfo, "gpuNameString_Unicode" => gpu_name_string_unicode),
            field!(GspStaticConfigInfo, "bGpuInternalSku" => b_gpu_internal_sku),
            field!(GspStaticConfigInfo, "bIsQuadroGeneric" => b_is_quadro_generic),
            field!(GspStaticConfigInfo, "bIsQuadroAd" => b_is_quadro_ad),
            field!(GspStaticConfigInfo, "bIsNvidiaNvs" => b_is_nvidia_nvs),
            field!(GspStaticConfigInfo, "bIsVgx" => b_is_vgx),
            field!(GspStaticConfigInfo, "bGeforceSmb" => b_geforce_smb),
            field!(GspStaticConfigInfo, "bIsTitan" => b_is_titan),
            field!(GspStaticConfigInfo, "bIsTesla" => b_is_tesla),
            field!(GspStaticConfigInfo, "bIsMobile" => b_is_mobile),
            field!(GspStaticConfigInfo, "bIsGc6Rtd3Allowed" => b_is_gc6_rtd3_allowed),
            field!(GspStaticConfigInfo, "bIsGcOffRtd3Allowed" => b_is_gc_off_rtd3_allowed),
            field!(GspStaticConfigInfo, "bIsGcoffLegacyAllowed" => b_is_gcoff_legacy_allowed),
            field!(GspStaticConfigInfo, "bar1PdeBase" => bar1_pde_base),
            field!(GspStaticConfigInfo, "bar2PdeBase" => bar2_pde_base),
            field!(GspStaticConfigInfo, "bVbiosValid" => b_vbios_valid),
            field!(GspStaticConfigInfo, "vbiosSubVendor" => vbios_sub_vendor),
            field!(GspStaticConfigInfo, "vbiosSubDevice" => vbios_sub_device),
            field!(GspStaticConfigInfo, "bPageRetirementSupported" => b_page_retirement_supported),
            field!(GspStaticConfigInfo, "bSplitVasBetweenServerClientRm" => b_split_vas_between_server_client_rm),
            field!(GspStaticConfigInfo, "bClRootportNeedsNosnoopWAR" => b_cl_rootport_needs_nosnoop_war),
            field!(GspStaticConfigInfo, "displaylessMaxHeads" => displayless_max_heads),
            field!(GspStaticConfigInfo, "displaylessMaxResolution" => displayless_max_resolution),
            field!(GspStaticConfigInfo, "displaylessMaxPixels" => displayless_max_pixels),
            field!(GspStaticConfigInfo, "hInternalClient" => h_internal_client),
            field!(GspStaticConfigInfo, "hInternalDevice" => h_internal_device),
            field!(GspStaticConfigInfo, "hInternalSubdevice" => h_internal_subdevice),
            field!(GspStaticConfigInfo, "bSelfHostedMode" => b_self_hosted_mode),
            field!(GspStaticConfigInfo, "bAtsSupported" => b_ats_supported),
            field!(GspStaticConfigInfo, "bIsGpuUefi" => b_is_gpu_uefi),
        ]
    ),
    layout!(
        "GSP_SEQ_BUF_PAYLOAD_REG_WRITE",
        SeqRegWrite,
        headers::RMGSPSEQ,
        [field!(SeqRegWrite, "addr" => addr), field!(SeqRegWrite, "val" => val),]
    ),
    layout!(
        "GSP_SEQ_BUF_PAYLOAD_REG_MODIFY",
        SeqRegModify,
        headers::RMGSPSEQ,
        [
            field!(SeqRegModify, "addr" => addr),
            field!(SeqRegModify, "mask" => mask),
            field!(SeqRegModify, "val" => val),
        ]
    ),
    layout!(
        "GSP_SEQ_BUF_PAYLOAD_REG_POLL",
        SeqRegPoll,
        headers::RMGSPSEQ,
        [
            field!(SeqRegPoll, "addr" => addr),
            field!(SeqRegPoll, "mask" => mask),
            field!(SeqRegPoll, "val" => val),
            field!(SeqRegPoll, "timeout" => timeout),
            field!(SeqRegPoll, "error" => error),
        ]
    ),
    layout!("GSP_SEQ_BUF_PAYLOAD_DELAY_US", SeqDelayUs, headers::RMGSPSEQ, [field!(SeqDelayUs, "val" => val),]),
    layout!(
        "GSP_SEQ_BUF_PAYLOAD_REG_STORE",
        SeqRegStore,
        headers::RMGSPSEQ,
        [field!(SeqRegStore, "addr" => addr), field!(SeqRegStore, "index" => index),]
    ),
];

macro_rules! constants {
    ($($header:expr => [$($name:ident = $value:expr),* $(,)?]),* $(,)?) => {
        &[$($(ConstantFact { c_name: stringify!($name), header: $header, value: $value as u64 }),*),*]
    };
}

/// Every constant of this module, under NVIDIA's names.
pub const CONSTANTS: &[ConstantFact] = constants![
    headers::G_OS_NVOC => [
        REGISTRY_TABLE_ENTRY_TYPE_DWORD = REGISTRY_TABLE_ENTRY_TYPE_DWORD,
        REGISTRY_TABLE_ENTRY_TYPE_BINARY = REGISTRY_TABLE_ENTRY_TYPE_BINARY,
        REGISTRY_TABLE_ENTRY_TYPE_STRING = REGISTRY_TABLE_ENTRY_TYPE_STRING,
    ],
    headers::RMGSPSEQ => [
        GSP_SEQ_BUF_OPCODE_REG_WRITE = SeqOpcode::RegWrite,
        GSP_SEQ_BUF_OPCODE_REG_MODIFY = SeqOpcode::RegModify,
        GSP_SEQ_BUF_OPCODE_REG_POLL = SeqOpcode::RegPoll,
        GSP_SEQ_BUF_OPCODE_DELAY_US = SeqOpcode::DelayUs,
        GSP_SEQ_BUF_OPCODE_REG_STORE = SeqOpcode::RegStore,
        GSP_SEQ_BUF_OPCODE_CORE_RESET = SeqOpcode::CoreReset,
        GSP_SEQ_BUF_OPCODE_CORE_START = SeqOpcode::CoreStart,
        GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT = SeqOpcode::CoreWaitForHalt,
        GSP_SEQ_BUF_OPCODE_CORE_RESUME = SeqOpcode::CoreResume,
        GSP_SEQ_BUF_REG_SAVE_SIZE = GSP_SEQ_BUF_REG_SAVE_SIZE,
    ],
    headers::RMAPI_H => [
        RMAPI_RPC_FLAGS_NONE = RMAPI_RPC_FLAGS_NONE,
        RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR = RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR,
        RMAPI_RPC_FLAGS_SERIALIZED = RMAPI_RPC_FLAGS_SERIALIZED,
    ],
    headers::RPC_HEADERS => [
        MAX_GPC_COUNT = MAX_GPC_COUNT,
    ],
    headers::CTRL0080GR => [
        NV0080_CTRL_GR_CAPS_TBL_SIZE = NV0080_CTRL_GR_CAPS_TBL_SIZE,
    ],
    headers::CTRL2080GPU => [
        NV2080_GPU_MAX_GID_LENGTH = NV2080_GPU_MAX_GID_LENGTH,
        NV2080_GPU_MAX_NAME_STRING_LENGTH = NV2080_GPU_MAX_NAME_STRING_LENGTH,
    ],
    headers::CTRL2080FB => [
        NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MAX_ENTRIES = NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MAX_ENTRIES,
        NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MEM_TYPES = NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_MEM_TYPES,
    ],
    headers::CTRL2080GR => [
        NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND_BUFFERS_CONTEXT_POOL = NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND_BUFFERS_CONTEXT_POOL,
    ],
    headers::NVBITMASK => [
        NVGPU_ENGINE_CAPS_MASK_BITS = NVGPU_ENGINE_CAPS_MASK_BITS,
        NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX = NVGPU_ENGINE_CAPS_MASK_ARRAY_MAX,
    ],
    headers::G_GPU_NVOC => [
        COMPUTE_BRANDING_TYPE_TESLA = COMPUTE_BRANDING_TYPE_TESLA,
    ],
    headers::GPU_ENGINE_TYPE => [
        RM_ENGINE_TYPE_GR0 = rm_engine_type::RM_ENGINE_TYPE_GR0,
        RM_ENGINE_TYPE_GR_SIZE = rm_engine_type::RM_ENGINE_TYPE_GR_SIZE,
        RM_ENGINE_TYPE_COPY0 = rm_engine_type::RM_ENGINE_TYPE_COPY0,
        RM_ENGINE_TYPE_COPY_SIZE = rm_engine_type::RM_ENGINE_TYPE_COPY_SIZE,
        RM_ENGINE_TYPE_NVDEC0 = rm_engine_type::RM_ENGINE_TYPE_NVDEC0,
        RM_ENGINE_TYPE_NVENC0 = rm_engine_type::RM_ENGINE_TYPE_NVENC0,
        RM_ENGINE_TYPE_SEC2 = rm_engine_type::RM_ENGINE_TYPE_SEC2,
        RM_ENGINE_TYPE_NVJPEG0 = rm_engine_type::RM_ENGINE_TYPE_NVJPEG0,
        RM_ENGINE_TYPE_OFA = rm_engine_type::RM_ENGINE_TYPE_OFA,
        RM_ENGINE_TYPE_LAST = rm_engine_type::RM_ENGINE_TYPE_LAST,
    ],
    headers::OBJRPC_H => [
        RPC_HISTORY_DEPTH = crate::gsp::history::RPC_HISTORY_DEPTH / 2,
    ],
    headers::GPU_TIMEOUT_H => [
        GPU_TIMEOUT_DEFAULT = 0,
    ],
    headers::MESSAGE_QUEUE_H => [
        RPC_TASK_RM_QUEUE_IDX = crate::gsp::cmdq::RPC_TASK_RM_QUEUE_IDX,
    ],
];

/// C expressions whose values this module relies on, with the value it uses.
pub fn expression_checks() -> Vec<(&'static str, u64)> {
    let mut checks = alloc::vec![
        ("(NvU64)(GSP_MSG_QUEUE_RPC_SIZE_MAX - sizeof(rpc_message_header_v))", RECORD_PAYLOAD_MAX as u64,),
        ("(NvU64)offsetof(rpc_gsp_set_system_info_v17_00, data)", 0),
        ("(NvU64)offsetof(rpc_get_gsp_static_info_v14_00, data)", 0),
        ("(NvU64)(sizeof(rpc_message_header_v) + sizeof(GspStaticConfigInfo) <= GSP_MSG_QUEUE_RPC_SIZE_MAX)", 1,),
        ("(NvU64)sizeof(ACPI_METHOD_DATA)", ACPI_METHOD_DATA_SIZE as u64),
        ("(NvU64)sizeof(NV0080_CTRL_GPU_GET_SRIOV_CAPS_PARAMS)", SRIOV_CAPS_SIZE as u64),
        ("(NvU64)sizeof(COMPUTE_BRANDING_TYPE)", 4),
        ("(NvU64)sizeof(GSP_SEQ_BUF_OPCODE)", 4),
    ];
    for op in SeqOpcode::ALL {
        let expr: &'static str = match op {
            SeqOpcode::RegWrite => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_REG_WRITE)",
            SeqOpcode::RegModify => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_REG_MODIFY)",
            SeqOpcode::RegPoll => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_REG_POLL)",
            SeqOpcode::DelayUs => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_DELAY_US)",
            SeqOpcode::RegStore => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_REG_STORE)",
            SeqOpcode::CoreReset => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_CORE_RESET)",
            SeqOpcode::CoreStart => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_CORE_START)",
            SeqOpcode::CoreWaitForHalt => {
                "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT)"
            }
            SeqOpcode::CoreResume => "(NvU64)GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS(GSP_SEQ_BUF_OPCODE_CORE_RESUME)",
        };
        checks.push((expr, op.payload_dwords() as u64));
    }
    checks
}
