//! The NVIDIA source files the GSP boot structures follow (open-gpu-kernel-modules 535.261.03).
//!
//! Structure and constant headers are compiled by `tests/tests/gsp_layout.rs`; the `.c` and
//! generated files are the RM code whose arithmetic [`super::wpr`], [`super::radix3`] and
//! [`super::msgq`] follow, and are cited in doc comments.

use crate::hw::headers::OGKM_PINNED;
use crate::hw::Header;

macro_rules! headers {
    ($($(#[$meta:meta])* $name:ident = $path:literal;)*) => {
        $( $(#[$meta])* pub const $name: Header = Header { release: OGKM_PINNED, path: $path }; )*
        /// Every file cited by `gsp`.
        pub const ALL: &[Header] = &[$($name),*];
    };
}

headers! {
    /// `GspFwWprMeta`, `GSP_FW_WPR_META_*`, `GSP_FW_FLAGS_*`.
    GSP_FW_WPR_META = "src/nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h";
    /// `LibosMemoryRegionInitArgument`, `LibosMemoryRegionKind`, `LibosMemoryRegionLoc`.
    LIBOS_INIT_ARGS = "src/common/uproc/os/common/include/libos_init_args.h";
    /// `GSP_ARGUMENTS_CACHED`, `MESSAGE_QUEUE_INIT_ARGUMENTS`, `GSP_SR_INIT_ARGUMENTS`.
    GSP_INIT_ARGS = "src/nvidia/inc/kernel/gpu/gsp/gsp_init_args.h";
    /// `msgqTxHeader`, `msgqRxHeader`, `MSGQ_VERSION`.
    MSGQ_PRIV = "src/common/shared/msgq/inc/msgq/msgq_priv.h";
    /// `MSGQ_FLAGS_SWAP_RX`, `MSGQ_MSG_SIZE_MIN`, `MSGQ_META_*_ALIGN`.
    MSGQ = "src/common/shared/msgq/inc/msgq/msgq.h";
    /// `msgqTxCreate`, `msgqRxLink`: how queue headers are filled and checked.
    MSGQ_C = "src/common/shared/msgq/msgq.c";
    /// `GSP_MSG_QUEUE_ELEMENT`, `GSP_MSG_QUEUE_*`, `_checkSum32`.
    MESSAGE_QUEUE_PRIV = "src/nvidia/inc/kernel/gpu/gsp/message_queue_priv.h";
    /// `_getMsgQueueParams`, `GspMsgQueuesInit`, `GspMsgQueueSendCommand`, `GspMsgQueueReceiveStatus`.
    MESSAGE_QUEUE_CPU = "src/nvidia/src/kernel/gpu/gsp/message_queue_cpu.c";
    /// `rpc_message_header_v` (generated from `rpc-message-header.def`).
    RPC_MESSAGE_HEADER = "src/nvidia/generated/g_rpc-message-header.h";
    /// `rpc_generic_union`, the payload union whose alignment `rpc_message_header_v` inherits.
    RPC_STRUCTURES = "src/nvidia/generated/g_rpc-structures.h";
    /// `NV_VGPU_MSG_SIGNATURE_VALID`, `NV_VGPU_MSG_HEADER_VERSION_*`, `NV_VGPU_MSG_RESULT_*`.
    RPC_HEADERS = "src/nvidia/kernel/inc/vgpu/rpc_headers.h";
    /// `NV_VGPU_MSG_FUNCTION_*` and `NV_VGPU_MSG_EVENT_*`.
    RPC_GLOBAL_ENUMS = "src/nvidia/kernel/inc/vgpu/rpc_global_enums.h";
    /// `rpcWriteCommonHeader`: how an RPC header is filled.
    RPC_COMMON = "src/nvidia/src/kernel/rmapi/rpc_common.c";
    /// `GSP_FW_HEAP_PARAM_*`: the GSP-RM heap sizing constants.
    GSP_FW_HEAP = "src/nvidia/inc/kernel/gpu/gsp/gsp_fw_heap.h";
    /// `kgspCreateRadix3`, `kgspGetFwHeapSize`, `_kgspCalculateFwHeapSize`, `kgspGetWprEndMargin`,
    /// `_kgspGenerateInitArgId`, `kgspSetupLibosInitArgs`, `kgspPopulateGspRmInitArgs`,
    /// `_kgspInitLibosLoggingStructures`.
    KERNEL_GSP_C = "src/nvidia/src/kernel/gpu/gsp/kernel_gsp.c";
    /// `kgspCalculateFbLayout_TU102`.
    KERNEL_GSP_TU102_C = "src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_tu102.c";
    /// `kgspGetFrtsSize_TU102`.
    KERNEL_GSP_FRTS_TU102_C = "src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_frts_tu102.c";
    /// `kgspCalculateFbLayout_GH100`.
    KERNEL_GSP_GH100_C = "src/nvidia/src/kernel/gpu/gsp/arch/hopper/kernel_gsp_gh100.c";
    /// The per-chip HAL choices of `KernelGsp` (heap parameters, layout function).
    KERNEL_GSP_NVOC_C = "src/nvidia/generated/g_kernel_gsp_nvoc.c";
    /// The HAL variants' bodies and `LIBOS_INIT_ARGUMENTS_SIZE`.
    KERNEL_GSP_NVOC_H = "src/nvidia/generated/g_kernel_gsp_nvoc.h";
    /// `NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K`.
    TU102_DEV_GC6_ISLAND_ADDENDUM = "src/common/inc/swref/published/turing/tu102/dev_gc6_island_addendum.h";
    /// `RM_PAGE_SIZE`.
    RM_PAGE_SIZE = "src/nvidia/inc/kernel/gpu/mem_mgr/rm_page_size.h";
    /// `NV_PRAMIN` (whose size is the default VGA workspace).
    TU102_DEV_RAM = "src/common/inc/swref/published/turing/tu102/dev_ram.h";
}
