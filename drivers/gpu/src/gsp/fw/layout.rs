//! Layout tables of every GSP boot structure and constant, under NVIDIA's names, for
//! `tests/tests/gsp_layout.rs` to compare with what the C compiler makes of NVIDIA's headers.
//! The table types are `crate::hw::layout`'s.

use core::mem::{align_of, offset_of, size_of};

use super::init_args::{GspArgumentsCached, GspSrInitArguments, MessageQueueInitArguments};
use super::libos::{self, LibosMemoryRegionInitArgument, LibosMemoryRegionKind, LibosMemoryRegionLoc};
use super::msgq::{self, GspMsgQueueElement, MsgqRxHeader, MsgqTxHeader};
use super::rpc::{self, RpcEvent, RpcFunction, RpcMessageHeader};
use super::wpr::{self, GspFwWprMeta, WprMetaCrashCat, WprMetaHeapFreeList, WprMetaPartitionRpc, WprMetaSignature};
use crate::hw::headers;
use crate::hw::layout::field_size;
use crate::hw::layout::{ConstantFact, FieldLayout, StructLayout};

/// A field of `$ty` at Rust path `$($f).+`, named `$c` in C.
macro_rules! field {
    ($ty:ty, $c:literal => $($f:ident).+) => {
        FieldLayout { c_name: $c, offset: offset_of!($ty, $($f).+), size: field_size(|s: &$ty| &s.$($f).+) }
    };
    // A member of a union's other view: the Rust field `$u` of `$ty` seen as `$view`.
    ($ty:ty, $c:literal => $u:ident as $view:ty => $f:ident) => {
        FieldLayout {
            c_name: $c,
            offset: offset_of!($ty, $u) + offset_of!($view, $f),
            size: field_size(|s: &$view| &s.$f),
        }
    };
}

macro_rules! layout {
    ($c:literal = $ty:ident in $header:expr, [$($entry:expr),* $(,)?]) => {
        StructLayout {
            c_name: $c,
            rust_name: stringify!($ty),
            header: $header,
            size: size_of::<$ty>(),
            align: align_of::<$ty>(),
            fields: &[$($entry),*],
        }
    };
}

/// Every structure of [`super`], for the header comparison.
pub const STRUCT_LAYOUTS: &[StructLayout] = &[
    layout!("GspFwWprMeta" = GspFwWprMeta in headers::GSP_FW_WPR_META, [
        field!(GspFwWprMeta, "magic" => magic),
        field!(GspFwWprMeta, "revision" => revision),
        field!(GspFwWprMeta, "sysmemAddrOfRadix3Elf" => sysmem_addr_of_radix3_elf),
        field!(GspFwWprMeta, "sizeOfRadix3Elf" => size_of_radix3_elf),
        field!(GspFwWprMeta, "sysmemAddrOfBootloader" => sysmem_addr_of_bootloader),
        field!(GspFwWprMeta, "sizeOfBootloader" => size_of_bootloader),
        field!(GspFwWprMeta, "bootloaderCodeOffset" => bootloader_code_offset),
        field!(GspFwWprMeta, "bootloaderDataOffset" => bootloader_data_offset),
        field!(GspFwWprMeta, "bootloaderManifestOffset" => bootloader_manifest_offset),
        field!(GspFwWprMeta, "sysmemAddrOfSignature" => signature.sysmem_addr_of_signature),
        field!(GspFwWprMeta, "sizeOfSignature" => signature.size_of_signature),
        field!(GspFwWprMeta, "gspFwHeapFreeListWprOffset" => signature as WprMetaHeapFreeList => gsp_fw_heap_free_list_wpr_offset),
        field!(GspFwWprMeta, "unused0" => signature as WprMetaHeapFreeList => unused0),
        field!(GspFwWprMeta, "unused1" => signature as WprMetaHeapFreeList => unused1),
        field!(GspFwWprMeta, "gspFwRsvdStart" => gsp_fw_rsvd_start),
        field!(GspFwWprMeta, "nonWprHeapOffset" => non_wpr_heap_offset),
        field!(GspFwWprMeta, "nonWprHeapSize" => non_wpr_heap_size),
        field!(GspFwWprMeta, "gspFwWprStart" => gsp_fw_wpr_start),
        field!(GspFwWprMeta, "gspFwHeapOffset" => gsp_fw_heap_offset),
        field!(GspFwWprMeta, "gspFwHeapSize" => gsp_fw_heap_size),
        field!(GspFwWprMeta, "gspFwOffset" => gsp_fw_offset),
        field!(GspFwWprMeta, "bootBinOffset" => boot_bin_offset),
        field!(GspFwWprMeta, "frtsOffset" => frts_offset),
        field!(GspFwWprMeta, "frtsSize" => frts_size),
        field!(GspFwWprMeta, "gspFwWprEnd" => gsp_fw_wpr_end),
        field!(GspFwWprMeta, "fbSize" => fb_size),
        field!(GspFwWprMeta, "vgaWorkspaceOffset" => vga_workspace_offset),
        field!(GspFwWprMeta, "vgaWorkspaceSize" => vga_workspace_size),
        field!(GspFwWprMeta, "bootCount" => boot_count),
        field!(GspFwWprMeta, "partitionRpcAddr" => crash_cat as WprMetaPartitionRpc => partition_rpc_addr),
        field!(GspFwWprMeta, "partitionRpcRequestOffset" => crash_cat as WprMetaPartitionRpc => partition_rpc_request_offset),
        field!(GspFwWprMeta, "partitionRpcReplyOffset" => crash_cat as WprMetaPartitionRpc => partition_rpc_reply_offset),
        field!(GspFwWprMeta, "elfCodeOffset" => crash_cat as WprMetaPartitionRpc => elf_code_offset),
        field!(GspFwWprMeta, "elfDataOffset" => crash_cat as WprMetaPartitionRpc => elf_data_offset),
        field!(GspFwWprMeta, "elfCodeSize" => crash_cat as WprMetaPartitionRpc => elf_code_size),
        field!(GspFwWprMeta, "elfDataSize" => crash_cat as WprMetaPartitionRpc => elf_data_size),
        field!(GspFwWprMeta, "lsUcodeVersion" => crash_cat as WprMetaPartitionRpc => ls_ucode_version),
        field!(GspFwWprMeta, "partitionRpcPadding" => crash_cat.partition_rpc_padding),
        field!(GspFwWprMeta, "sysmemAddrOfCrashReportQueue" => crash_cat.sysmem_addr_of_crash_report_queue),
        field!(GspFwWprMeta, "sizeOfCrashReportQueue" => crash_cat.size_of_crash_report_queue),
        field!(GspFwWprMeta, "lsUcodeVersionPadding" => crash_cat.ls_ucode_version_padding),
        field!(GspFwWprMeta, "gspFwHeapVfPartitionCount" => gsp_fw_heap_vf_partition_count),
        field!(GspFwWprMeta, "flags" => flags),
        field!(GspFwWprMeta, "padding" => padding),
        field!(GspFwWprMeta, "verified" => verified),
    ]),
    layout!("LibosMemoryRegionInitArgument" = LibosMemoryRegionInitArgument in headers::LIBOS_INIT_ARGS, [
        field!(LibosMemoryRegionInitArgument, "id8" => id8),
        field!(LibosMemoryRegionInitArgument, "pa" => pa),
        field!(LibosMemoryRegionInitArgument, "size" => size),
        field!(LibosMemoryRegionInitArgument, "kind" => kind),
        field!(LibosMemoryRegionInitArgument, "loc" => loc),
    ]),
    layout!("MESSAGE_QUEUE_INIT_ARGUMENTS" = MessageQueueInitArguments in headers::GSP_INIT_ARGS, [
        field!(MessageQueueInitArguments, "sharedMemPhysAddr" => shared_mem_phys_addr),
        field!(MessageQueueInitArguments, "pageTableEntryCount" => page_table_entry_count),
        field!(MessageQueueInitArguments, "cmdQueueOffset" => cmd_queue_offset),
        field!(MessageQueueInitArguments, "statQueueOffset" => stat_queue_offset),
        field!(MessageQueueInitArguments, "locklessCmdQueueOffset" => lockless_cmd_queue_offset),
        field!(MessageQueueInitArguments, "locklessStatQueueOffset" => lockless_stat_queue_offset),
    ]),
    layout!("GSP_SR_INIT_ARGUMENTS" = GspSrInitArguments in headers::GSP_INIT_ARGS, [
        field!(GspSrInitArguments, "oldLevel" => old_level),
        field!(GspSrInitArguments, "flags" => flags),
        field!(GspSrInitArguments, "bInPMTransition" => b_in_pm_transition),
    ]),
    layout!("GSP_ARGUMENTS_CACHED" = GspArgumentsCached in headers::GSP_INIT_ARGS, [
        field!(GspArgumentsCached, "messageQueueInitArguments" => message_queue_init_arguments),
        field!(GspArgumentsCached, "srInitArguments" => sr_init_arguments),
        field!(GspArgumentsCached, "gpuInstance" => gpu_instance),
        field!(GspArgumentsCached, "profilerArgs" => profiler_args),
        field!(GspArgumentsCached, "profilerArgs.pa" => profiler_args.pa),
        field!(GspArgumentsCached, "profilerArgs.size" => profiler_args.size),
    ]),
    layout!("msgqTxHeader" = MsgqTxHeader in headers::MSGQ_PRIV, [
        field!(MsgqTxHeader, "version" => version),
        field!(MsgqTxHeader, "size" => size),
        field!(MsgqTxHeader, "msgSize" => msg_size),
        field!(MsgqTxHeader, "msgCount" => msg_count),
        field!(MsgqTxHeader, "writePtr" => write_ptr),
        field!(MsgqTxHeader, "flags" => flags),
        field!(MsgqTxHeader, "rxHdrOff" => rx_hdr_off),
        field!(MsgqTxHeader, "entryOff" => entry_off),
    ]),
    layout!("msgqRxHeader" = MsgqRxHeader in headers::MSGQ_PRIV, [
        field!(MsgqRxHeader, "readPtr" => read_ptr),
    ]),
    layout!("GSP_MSG_QUEUE_ELEMENT" = GspMsgQueueElement in headers::MESSAGE_QUEUE_PRIV, [
        field!(GspMsgQueueElement, "authTagBuffer" => auth_tag_buffer),
        field!(GspMsgQueueElement, "aadBuffer" => aad_buffer),
        field!(GspMsgQueueElement, "checkSum" => check_sum),
        field!(GspMsgQueueElement, "seqNum" => seq_num),
        field!(GspMsgQueueElement, "elemCount" => elem_count),
        field!(GspMsgQueueElement, "rpc" => rpc),
        field!(GspMsgQueueElement, "rpc.length" => rpc.length),
        field!(GspMsgQueueElement, "rpc.function" => rpc.function),
    ]),
    layout!("rpc_message_header_v" = RpcMessageHeader in headers::RPC_MESSAGE_HEADER, [
        field!(RpcMessageHeader, "header_version" => header_version),
        field!(RpcMessageHeader, "signature" => signature),
        field!(RpcMessageHeader, "length" => length),
        field!(RpcMessageHeader, "function" => function),
        field!(RpcMessageHeader, "rpc_result" => rpc_result),
        field!(RpcMessageHeader, "rpc_result_private" => rpc_result_private),
        field!(RpcMessageHeader, "sequence" => sequence),
        field!(RpcMessageHeader, "u" => u),
        field!(RpcMessageHeader, "u.spare" => u),
        field!(RpcMessageHeader, "u.cpuRmGfid" => u),
        FieldLayout { c_name: "rpc_message_data", offset: size_of::<RpcMessageHeader>(), size: 0 },
    ]),
];

// The union views must stay the size of the storage they reinterpret.
const _: () = assert!(size_of::<WprMetaSignature>() == size_of::<WprMetaHeapFreeList>());
const _: () = assert!(size_of::<WprMetaCrashCat>() == size_of::<WprMetaPartitionRpc>());

macro_rules! constants {
    ($($c:ident in $header:ident = $value:expr;)*) => {
        &[$(ConstantFact { c_name: stringify!($c), header: headers::$header, value: $value as u64 }),*]
    };
}

/// Every scalar constant of [`super`] (the RPC numbers are in [`RpcFunction::ALL`] and
/// [`RpcEvent::ALL`]; [`all_constants`] chains them all).
pub const CONSTANTS: &[ConstantFact] = constants! {
    GSP_FW_WPR_META_MAGIC in GSP_FW_WPR_META = wpr::GSP_FW_WPR_META_MAGIC;
    GSP_FW_WPR_META_REVISION in GSP_FW_WPR_META = wpr::GSP_FW_WPR_META_REVISION;
    GSP_FW_WPR_META_VERIFIED in GSP_FW_WPR_META = wpr::GSP_FW_WPR_META_VERIFIED;
    GSP_FW_WPR_HEAP_FREE_REGION_COUNT in GSP_FW_WPR_META = wpr::GSP_FW_WPR_HEAP_FREE_REGION_COUNT;
    GSP_FW_HEAP_FREE_LIST_MAGIC in GSP_FW_WPR_META = wpr::GSP_FW_HEAP_FREE_LIST_MAGIC;
    GSP_FW_FLAGS_CLOCK_BOOST in GSP_FW_WPR_META = wpr::GSP_FW_FLAGS_CLOCK_BOOST;
    GSP_FW_FLAGS_RECOVERY_MARGIN_PRESENT in GSP_FW_WPR_META = wpr::GSP_FW_FLAGS_RECOVERY_MARGIN_PRESENT;
    GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB in GSP_FW_HEAP = wpr::GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB;
    GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE in GSP_FW_HEAP = wpr::GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE;
    GSP_FW_HEAP_PARAM_BASE_RM_SIZE_TU10X in GSP_FW_HEAP = wpr::GSP_FW_HEAP_PARAM_BASE_RM_SIZE_TU10X;
    GSP_FW_HEAP_PARAM_BASE_RM_SIZE_GH100 in GSP_FW_HEAP = wpr::GSP_FW_HEAP_PARAM_BASE_RM_SIZE_GH100;
    GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS2 in GSP_FW_HEAP = wpr::GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS2;
    GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS3 in GSP_FW_HEAP = wpr::GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS3;
    LIBOS_MEMORY_REGION_INIT_ARGUMENTS_MAX in LIBOS_INIT_ARGS = libos::LIBOS_MEMORY_REGION_INIT_ARGUMENTS_MAX;
    LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE in LIBOS_INIT_ARGS = libos::LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE;
    LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2 in LIBOS_INIT_ARGS = libos::LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2;
    LIBOS_MEMORY_REGION_NONE in LIBOS_INIT_ARGS = LibosMemoryRegionKind::None;
    LIBOS_MEMORY_REGION_CONTIGUOUS in LIBOS_INIT_ARGS = LibosMemoryRegionKind::Contiguous;
    LIBOS_MEMORY_REGION_RADIX3 in LIBOS_INIT_ARGS = LibosMemoryRegionKind::Radix3;
    LIBOS_MEMORY_REGION_LOC_NONE in LIBOS_INIT_ARGS = LibosMemoryRegionLoc::None;
    LIBOS_MEMORY_REGION_LOC_SYSMEM in LIBOS_INIT_ARGS = LibosMemoryRegionLoc::Sysmem;
    LIBOS_MEMORY_REGION_LOC_FB in LIBOS_INIT_ARGS = LibosMemoryRegionLoc::Fb;
    LIBOS_INIT_ARGUMENTS_SIZE in KERNEL_GSP_NVOC_H = libos::LIBOS_INIT_ARGUMENTS_SIZE;
    MSGQ_VERSION in MSGQ_PRIV = msgq::MSGQ_VERSION;
    MSGQ_FLAGS_SWAP_RX in MSGQ = msgq::MSGQ_FLAGS_SWAP_RX;
    MSGQ_MSG_SIZE_MIN in MSGQ = msgq::MSGQ_MSG_SIZE_MIN;
    MSGQ_META_MIN_ALIGN in MSGQ = msgq::MSGQ_META_MIN_ALIGN;
    MSGQ_META_MAX_ALIGN in MSGQ = msgq::MSGQ_META_MAX_ALIGN;
    RM_PAGE_SIZE in RM_PAGE_SIZE = msgq::RM_PAGE_SIZE;
    GSP_MSG_QUEUE_ELEMENT_SIZE_MIN in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_ELEMENT_SIZE_MIN;
    GSP_MSG_QUEUE_ELEMENT_SIZE_MAX in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_ELEMENT_SIZE_MAX;
    GSP_MSG_QUEUE_ELEMENT_HDR_SIZE in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_ELEMENT_HDR_SIZE;
    GSP_MSG_QUEUE_RPC_SIZE_MAX in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_RPC_SIZE_MAX;
    GSP_MSG_QUEUE_ALIGN in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_ALIGN;
    GSP_MSG_QUEUE_ELEMENT_ALIGN in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_ELEMENT_ALIGN;
    GSP_MSG_QUEUE_HEADER_SIZE in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_HEADER_SIZE;
    GSP_MSG_QUEUE_HEADER_ALIGN in MESSAGE_QUEUE_PRIV = msgq::GSP_MSG_QUEUE_HEADER_ALIGN;
    NV_VGPU_MSG_SIGNATURE_VALID in RPC_HEADERS = rpc::NV_VGPU_MSG_SIGNATURE_VALID;
    NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT in RPC_HEADERS = rpc::NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT;
    NV_VGPU_MSG_HEADER_VERSION_MINOR_TOT in RPC_HEADERS = rpc::NV_VGPU_MSG_HEADER_VERSION_MINOR_TOT;
    NV_VGPU_MSG_RESULT_SUCCESS in RPC_HEADERS = rpc::NV_VGPU_MSG_RESULT_SUCCESS;
    NV_VGPU_MSG_RESULT_RPC_PENDING in RPC_HEADERS = rpc::NV_VGPU_MSG_RESULT_RPC_PENDING;
    NV_VGPU_MSG_UNION_INIT in RPC_HEADERS = rpc::NV_VGPU_MSG_UNION_INIT;
    NV_VGPU_MSG_FUNCTION_NUM_FUNCTIONS in RPC_GLOBAL_ENUMS = rpc::NV_VGPU_MSG_FUNCTION_NUM_FUNCTIONS;
    NV_VGPU_MSG_EVENT_FIRST_EVENT in RPC_GLOBAL_ENUMS = rpc::NV_VGPU_MSG_EVENT_FIRST_EVENT;
    NV_VGPU_MSG_EVENT_NUM_EVENTS in RPC_GLOBAL_ENUMS = rpc::NV_VGPU_MSG_EVENT_NUM_EVENTS;
    NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K in TU102_DEV_GC6_ISLAND_ADDENDUM =
        crate::hw::gc6::NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K;
};

/// Every constant: [`CONSTANTS`], then the declared RPC function and event numbers.
pub fn all_constants() -> impl Iterator<Item = ConstantFact> {
    let functions = RpcFunction::ALL.iter().map(|f| ConstantFact {
        c_name: f.nvidia_name(),
        header: headers::RPC_GLOBAL_ENUMS,
        value: f.raw() as u64,
    });
    let events = RpcEvent::ALL.iter().map(|e| ConstantFact {
        c_name: e.nvidia_name(),
        header: headers::RPC_GLOBAL_ENUMS,
        value: e.raw() as u64,
    });
    CONSTANTS.iter().copied().chain(functions).chain(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What can be checked without NVIDIA's headers: fields lie inside their struct, names are
    /// unique, and the sizes written in the structures' documentation hold.
    #[test]
    fn tables_are_self_consistent() {
        for s in STRUCT_LAYOUTS {
            for (i, f) in s.fields.iter().enumerate() {
                assert!(f.offset + f.size <= s.size, "{}.{} leaves the struct", s.c_name, f.c_name);
                assert!(s.fields[..i].iter().all(|g| g.c_name != f.c_name), "{}.{} twice", s.c_name, f.c_name);
            }
        }
        let size = |name: &str| STRUCT_LAYOUTS.iter().find(|s| s.c_name == name).map(|s| s.size);
        assert_eq!(size("GspFwWprMeta"), Some(256));
        assert_eq!(size("LibosMemoryRegionInitArgument"), Some(32));
        assert_eq!(size("MESSAGE_QUEUE_INIT_ARGUMENTS"), Some(48));
        assert_eq!(size("GSP_SR_INIT_ARGUMENTS"), Some(12));
        assert_eq!(size("GSP_ARGUMENTS_CACHED"), Some(80));
        assert_eq!(size("msgqTxHeader"), Some(32));
        assert_eq!(size("msgqRxHeader"), Some(4));
        assert_eq!(size("GSP_MSG_QUEUE_ELEMENT"), Some(80));
        assert_eq!(size("rpc_message_header_v"), Some(32));
        let names: alloc::vec::Vec<_> = all_constants().map(|c| c.c_name).collect();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
        }
    }
}
