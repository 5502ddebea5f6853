//! RM's side of the GSP ABI that neither a register header nor a structure layout covers: the
//! error word GSP-RM posts in `NV_PGSP_MAILBOX(0)` (`gsp_error.h`), and the RM controls, their
//! list sizes and the values the GSP-RM model answers them with (`ctrl0080gpu.h`,
//! `ctrl2080gpu.h`, `ctrl2080fb.h`, `gpu_uuid.h`). The driver decodes the error word with these
//! declarations and the model builds it with them; the structures the RPCs carry are in
//! `crate::gsp::commands` and `crate::rm` (checked by `tests/tests/gsp_rpc_layout.rs`).

use super::headers;
use crate::{constants, registers};

registers! {
    /// Facts of the GSP error word.
    pub const ERROR_FACTS;

    /// What `kgspHealthCheck_TU102` (`kernel_gsp_tu102.c`) reads from `NV_PGSP_MAILBOX(0)` once
    /// GSP-RM has failed: the tag, then the task, reason and code it reports.
    pub NV_GSP_ERROR(view) in headers::GSP_ERROR {
        /// The error code.
        7:0 CODE => code: u8,
        /// Why.
        15:8 REASON => reason: u8,
        /// Which GSP-RM task.
        23:16 TASK => task: u8,
        /// Further errors GSP-RM could not report.
        27:24 SKIPPED => skipped: u8,
        /// [`NV_GSP_ERROR_TAG_VAL`] when the word is an error report.
        31:28 TAG => tag: u8,
    }
}

constants! {
    /// Facts of the RM values of this module.
    pub const FACTS;

    /// The tag of an error report in `NV_PGSP_MAILBOX(0)`.
    pub NV_GSP_ERROR_TAG_VAL: u32 = 0xE in headers::GSP_ERROR;

    /// The device control that lists the classes the GPU supports.
    pub NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2: u32 = 0x00800292 in headers::CTRL0080GPU;
    /// Entries of its class list.
    pub NV0080_CTRL_GPU_CLASSLIST_MAX_SIZE: usize = 160 in headers::CTRL0080GPU;
    /// The subdevice control that reads GPU information by index.
    pub NV2080_CTRL_CMD_GPU_GET_INFO_V2: u32 = 0x20800102 in headers::CTRL2080GPU;
    /// Entries of its list.
    pub NV2080_CTRL_GPU_INFO_MAX_LIST_SIZE: usize = 0x40 in headers::CTRL2080GPU;
    /// Index: the minor revision extension.
    pub NV2080_CTRL_GPU_INFO_INDEX_MINOR_REVISION_EXT: u32 = 0x04 in headers::CTRL2080GPU;
    /// Index: system memory access (`_YES` = 1).
    pub NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS: u32 = 0x1f in headers::CTRL2080GPU;
    /// Index: SMC (MIG) mode (`_UNSUPPORTED` = 0).
    pub NV2080_CTRL_GPU_INFO_INDEX_GPU_SMC_MODE: u32 = 0x2a in headers::CTRL2080GPU;
    /// Index: whether 4K page isolation is required (`_NO` = 0).
    pub NV2080_CTRL_GPU_INFO_INDEX_4K_PAGE_ISOLATION_REQUIRED: u32 = 0x33 in headers::CTRL2080GPU;
    /// Index: whether display is enabled.
    pub NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED: u32 = 0x34 in headers::CTRL2080GPU;
    /// Index: mobile configuration (`_NO` = 0).
    pub NV2080_CTRL_GPU_INFO_INDEX_MOBILE_CONFIG_ENABLED: u32 = 0x35 in headers::CTRL2080GPU;
    /// `NV2080_CTRL_CMD_GPU_GET_GID_INFO` flags 1:0: the binary format (type SHA-1, 2:2 = 0).
    pub NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY: u32 = 2 in headers::CTRL2080GPU;
    /// Bytes of a binary GPU UUID.
    pub RM_SHA1_GID_SIZE: u32 = 16 in headers::GPU_UUID;
    /// RAM type: HBM2.
    pub NV2080_CTRL_FB_INFO_RAM_TYPE_HBM2: u32 = 0x0F in headers::CTRL2080FB;
    /// RAM type: GDDR6.
    pub NV2080_CTRL_FB_INFO_RAM_TYPE_GDDR6: u32 = 0x11 in headers::CTRL2080FB;
}
