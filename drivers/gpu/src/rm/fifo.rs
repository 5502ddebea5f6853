//! The RM classes and controls that give a client GPU memory and channels: VA spaces
//! (`FERMI_VASPACE_A`), channel groups (`KEPLER_CHANNEL_GROUP_A`), GPFIFO channels, engine
//! objects (copy and compute classes), the usermode doorbell region, and their controls.
//!
//! Layouts and numbers are 535.261.03's (`src/common/sdk/nvidia/inc/`: `nvos.h`,
//! `alloc/alloc_channel.h`, `class/cl90f1.h`, `class/cla06c.h`, `class/clb0b5sw.h`,
//! `class/clc361.h`, `ctrl/ctrl0080/ctrl0080dma.h`, `ctrl/ctrla06f/ctrla06fgpfifo.h`,
//! `ctrl/ctrlc36f.h`, `class/cl2080_notification.h`, `nvgputypes.h`, `nverror.h`; and
//! `src/common/inc/swref/published/turing/tu102/dev_ctrl.h` for the doorbell token), checked by
//! `tests/tests/gsp_rpc_layout.rs` with NVIDIA's headers and the C compiler.
//!
//! How the driver uses them (the way NVIDIA's UVM builds its channels, `nv_gpu_ops.c`, and
//! nouveau's GSP path): the driver owns the page tables of a VA space and binds their root with
//! `NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY`; it owns each channel's instance block, USERD, GPFIFO
//! ring and error notifier and hands RM their physical locations (`NV_MEMORY_DESC_PARAMS`) in
//! `NV_CHANNEL_ALLOC_PARAMS`, as a CPU-side RM does for GSP-RM.

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

use super::ObjectKind;
use crate::hw::headers;
use crate::hw::layout::{c_constant, c_struct, ConstantFact, StructLayout};

// ---------------------------------------------------------------------------------------------
// Numbers.

/// `FERMI_VASPACE_A`.
pub const FERMI_VASPACE_A: u32 = 0x90f1;
/// `KEPLER_CHANNEL_GROUP_A`.
pub const KEPLER_CHANNEL_GROUP_A: u32 = 0xa06c;
/// `NV_MAX_SUBDEVICES`.
pub const NV_MAX_SUBDEVICES: usize = 8;
/// `CC_CHAN_ALLOC_IV_SIZE_DWORD`.
pub const CC_CHAN_ALLOC_IV_SIZE_DWORD: usize = 3;
/// `CC_CHAN_ALLOC_NONCE_SIZE_DWORD`.
pub const CC_CHAN_ALLOC_NONCE_SIZE_DWORD: usize = 8;

/// `NV_VASPACE_ALLOCATION_INDEX_GPU_NEW`: a new VA space.
pub const NV_VASPACE_ALLOCATION_INDEX_GPU_NEW: u32 = 0;
/// `NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED` (`BIT(3)`): the client owns the page
/// directory.
pub const NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED: u32 = 1 << 3;
/// `NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING` (`BIT(6)`): the VA space's contexts take
/// replayable faults (UVM's VA spaces).
pub const NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING: u32 = 1 << 6;
/// `NV_VASPACE_BIG_PAGE_SIZE_64K`.
pub const NV_VASPACE_BIG_PAGE_SIZE_64K: u32 = 64 * 1024;

/// `ADDR_SYSMEM`: system memory (`NV_ADDRESS_SPACE`).
pub const ADDR_SYSMEM: u32 = 1;
/// `ADDR_FBMEM`: video memory.
pub const ADDR_FBMEM: u32 = 2;

/// `NV2080_ENGINE_TYPE_GRAPHICS` (= `NV2080_ENGINE_TYPE_GR0`).
pub const NV2080_ENGINE_TYPE_GRAPHICS: u32 = 0x1;
/// `NV2080_ENGINE_TYPE_COPY0`; copy engine `n` is `COPY0 + n` (`NV2080_ENGINE_TYPE_COPY(i)`).
pub const NV2080_ENGINE_TYPE_COPY0: u32 = 0x9;

/// `NVB0B5_ALLOCATION_PARAMETERS_VERSION_1`: `engineType` is an `NV2080_ENGINE_TYPE`.
pub const NVB0B5_ALLOCATION_PARAMETERS_VERSION_1: u32 = 1;

/// `NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY`.
pub const NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY: u32 = 0x0080_1813;
/// `NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS_APERTURE_VIDMEM` (field `1:0`).
pub const SET_PAGE_DIRECTORY_APERTURE_VIDMEM: u32 = 0;
/// `NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS_APERTURE_SYSMEM_COH`.
pub const SET_PAGE_DIRECTORY_APERTURE_SYSMEM_COH: u32 = 1;
/// `NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS_APERTURE_SYSMEM_NONCOH`.
pub const SET_PAGE_DIRECTORY_APERTURE_SYSMEM_NONCOH: u32 = 2;
/// `NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS_ALL_CHANNELS_TRUE` in field `3:3`.
pub const SET_PAGE_DIRECTORY_ALL_CHANNELS: u32 = 1 << 3;

/// `NVA06F_CTRL_CMD_GPFIFO_SCHEDULE`.
pub const NVA06F_CTRL_CMD_GPFIFO_SCHEDULE: u32 = 0xa06f_0103;
/// `NVA06F_CTRL_CMD_BIND`.
pub const NVA06F_CTRL_CMD_BIND: u32 = 0xa06f_0104;
/// `NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN`.
pub const NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN: u32 = 0xc36f_0108;

/// BAR0 offset of the usermode region (`NVC361`, `0x0081ffff:0x00810000` in `clc361.h`).
pub const NVC361_BASE: u32 = 0x0081_0000;
/// `NVC361_NOTIFY_CHANNEL_PENDING`: the doorbell, written with a work-submit token.
pub const NVC361_NOTIFY_CHANNEL_PENDING: u32 = 0x90;
/// `NVC361_NV_USERMODE__SIZE`: bytes of the usermode region.
pub const NVC361_NV_USERMODE_SIZE: u32 = 65536;
/// `NVC361_TIME_0` / `NVC361_TIME_1`: the GPU timer in ns, low and high words.
pub const NVC361_TIME_0: u32 = 0x80;
pub const NVC361_TIME_1: u32 = 0x84;

/// The status RM writes to a channel's error notifier when it stops the channel
/// (`krcErrorSetNotifier_IMPL`, `src/nvidia/src/kernel/gpu/rc/kernel_rc_notification.c`: the
/// `0xffff /* notifierStatus */` it passes on); `info32` is the Xid and `info16` the
/// `NV2080_ENGINE_TYPE` of the engine (`_krcErrorWriteNotifierCpuMemHelper`).
pub const RC_NOTIFIER_STATUS: u16 = 0xffff;

/// `NV_CTRL_VF_DOORBELL_VECTOR` (`11:0`): the channel id in a work-submit token.
pub const NV_CTRL_VF_DOORBELL_VECTOR_MASK: u32 = 0xfff;
/// `NV_CTRL_VF_DOORBELL_RUNLIST_ID` (`22:16`).
pub const NV_CTRL_VF_DOORBELL_RUNLIST_ID_SHIFT: u32 = 16;
/// Width mask of `NV_CTRL_VF_DOORBELL_RUNLIST_ID`.
pub const NV_CTRL_VF_DOORBELL_RUNLIST_ID_MASK: u32 = 0x7f;

/// `ROBUST_CHANNEL_GR_EXCEPTION` (Xid 13).
pub const ROBUST_CHANNEL_GR_EXCEPTION: u32 = 13;
/// `ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT` (Xid 31).
pub const ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT: u32 = 31;
/// `ROBUST_CHANNEL_PBDMA_ERROR` (Xid 32).
pub const ROBUST_CHANNEL_PBDMA_ERROR: u32 = 32;
/// `ROBUST_CHANNEL_CE0_ERROR` (Xid 39); copy engine `n` is `CE0 + n` up to CE2, then others.
pub const ROBUST_CHANNEL_CE0_ERROR: u32 = 39;
/// `ROBUST_CHANNEL_PREEMPTIVE_REMOVAL` (Xid 45).
pub const ROBUST_CHANNEL_PREEMPTIVE_REMOVAL: u32 = 45;

/// What a channel error was, from RM's `exceptType` (`nverror.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobustChannelError {
    /// An engine exception on the graphics/compute engine.
    GrException,
    /// An MMU fault by the channel.
    MmuFault,
    /// The host (PBDMA) refused the pushbuffer: bad method, bad GPFIFO entry.
    PbdmaError,
    /// A copy engine error (the engine's index from CE0).
    CopyEngineError(u32),
    /// The channel was removed because another channel of its group failed.
    PreemptiveRemoval,
    /// Any other Xid.
    Other(u32),
}

impl RobustChannelError {
    pub const fn from_xid(xid: u32) -> Self {
        match xid {
            ROBUST_CHANNEL_GR_EXCEPTION => Self::GrException,
            ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT => Self::MmuFault,
            ROBUST_CHANNEL_PBDMA_ERROR => Self::PbdmaError,
            39..=41 => Self::CopyEngineError(xid - ROBUST_CHANNEL_CE0_ERROR),
            ROBUST_CHANNEL_PREEMPTIVE_REMOVAL => Self::PreemptiveRemoval,
            other => Self::Other(other),
        }
    }

    pub const fn xid(self) -> u32 {
        match self {
            Self::GrException => ROBUST_CHANNEL_GR_EXCEPTION,
            Self::MmuFault => ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT,
            Self::PbdmaError => ROBUST_CHANNEL_PBDMA_ERROR,
            Self::CopyEngineError(n) => ROBUST_CHANNEL_CE0_ERROR + n,
            Self::PreemptiveRemoval => ROBUST_CHANNEL_PREEMPTIVE_REMOVAL,
            Self::Other(x) => x,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Object kinds.

/// A VA space (`FERMI_VASPACE_A`).
#[derive(Debug)]
pub enum VaSpaceObject {}
/// A channel group / TSG (`KEPLER_CHANNEL_GROUP_A`).
#[derive(Debug)]
pub enum ChannelGroupObject {}
/// A GPFIFO channel.
#[derive(Debug)]
pub enum ChannelObject {}
/// An engine object on a channel (copy, compute).
#[derive(Debug)]
pub enum EngineObject {}
/// The usermode region object.
#[derive(Debug)]
pub enum UsermodeObject {}

impl ObjectKind for VaSpaceObject {
    const NAME: &'static str = "VA space";
}
impl ObjectKind for ChannelGroupObject {
    const NAME: &'static str = "channel group";
}
impl ObjectKind for ChannelObject {
    const NAME: &'static str = "channel";
}
impl ObjectKind for EngineObject {
    const NAME: &'static str = "engine object";
}
impl ObjectKind for UsermodeObject {
    const NAME: &'static str = "usermode";
}

// ---------------------------------------------------------------------------------------------
// Structures.

/// `NV_VASPACE_ALLOCATION_PARAMETERS`. 48 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvVaspaceAllocationParameters {
    /// `index`: `NV_VASPACE_ALLOCATION_INDEX_*`.
    pub index: u32,
    /// `flags`: `NV_VASPACE_ALLOCATION_FLAGS_*`.
    pub flags: u32,
    /// `vaSize`: 0 for the default.
    pub va_size: u64,
    /// `vaStartInternal`.
    pub va_start_internal: u64,
    /// `vaLimitInternal`.
    pub va_limit_internal: u64,
    /// `bigPageSize`: 0 for the default.
    pub big_page_size: u32,
    pub _padding0: u32,
    /// `vaBase`.
    pub va_base: u64,
}

/// `NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS`. 20 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvChannelGroupAllocationParameters {
    /// `hObjectError`.
    pub h_object_error: u32,
    /// `hObjectEccError`.
    pub h_object_ecc_error: u32,
    /// `hVASpace`.
    pub h_va_space: u32,
    /// `engineType`: `NV2080_ENGINE_TYPE_*`.
    pub engine_type: u32,
    /// `bIsCallingContextVgpuPlugin` (an `NvBool`) and padding.
    pub b_is_calling_context_vgpu_plugin: u8,
    pub _padding0: [u8; 3],
}

/// `NV_MEMORY_DESC_PARAMS`: where a piece of memory the client owns is. 24 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvMemoryDescParams {
    /// `base`: physical (bus) address.
    pub base: u64,
    /// `size` in bytes.
    pub size: u64,
    /// `addressSpace`: [`ADDR_SYSMEM`] or [`ADDR_FBMEM`].
    pub address_space: u32,
    /// `cacheAttrib`: `NV_MEMORY_CACHED`/`UNCACHED`/`WRITECOMBINED`.
    pub cache_attrib: u32,
}

/// `NV_CHANNEL_ALLOC_PARAMS` (= `NV_CHANNELGPFIFO_ALLOCATION_PARAMETERS`). 344 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvChannelAllocParams {
    /// `hObjectError`.
    pub h_object_error: u32,
    /// `hObjectBuffer` (no longer used).
    pub h_object_buffer: u32,
    /// `gpFifoOffset`: GPU virtual address of the GPFIFO ring in the channel's VA space.
    pub gp_fifo_offset: u64,
    /// `gpFifoEntries`.
    pub gp_fifo_entries: u32,
    /// `flags`: `NVOS04_FLAGS_*`.
    pub flags: u32,
    /// `hContextShare`.
    pub h_context_share: u32,
    /// `hVASpace`.
    pub h_va_space: u32,
    /// `hUserdMemory[NV_MAX_SUBDEVICES]`.
    pub h_userd_memory: [u32; NV_MAX_SUBDEVICES],
    /// `userdOffset[NV_MAX_SUBDEVICES]`.
    pub userd_offset: [u64; NV_MAX_SUBDEVICES],
    /// `engineType`.
    pub engine_type: u32,
    /// `cid`.
    pub cid: u32,
    /// `subDeviceId`.
    pub sub_device_id: u32,
    /// `hObjectEccError`.
    pub h_object_ecc_error: u32,
    /// `instanceMem`.
    pub instance_mem: NvMemoryDescParams,
    /// `userdMem`.
    pub userd_mem: NvMemoryDescParams,
    /// `ramfcMem`.
    pub ramfc_mem: NvMemoryDescParams,
    /// `mthdbufMem`.
    pub mthdbuf_mem: NvMemoryDescParams,
    /// `hPhysChannelGroup`.
    pub h_phys_channel_group: u32,
    /// `internalFlags`.
    pub internal_flags: u32,
    /// `errorNotifierMem`.
    pub error_notifier_mem: NvMemoryDescParams,
    /// `eccErrorNotifierMem`.
    pub ecc_error_notifier_mem: NvMemoryDescParams,
    /// `ProcessID`.
    pub process_id: u32,
    /// `SubProcessID`.
    pub sub_process_id: u32,
    /// `encryptIv`.
    pub encrypt_iv: [u32; CC_CHAN_ALLOC_IV_SIZE_DWORD],
    /// `decryptIv`.
    pub decrypt_iv: [u32; CC_CHAN_ALLOC_IV_SIZE_DWORD],
    /// `hmacNonce`.
    pub hmac_nonce: [u32; CC_CHAN_ALLOC_NONCE_SIZE_DWORD],
}

impl Default for NvChannelAllocParams {
    fn default() -> Self {
        Self::new_zeroed()
    }
}

/// `NVB0B5_ALLOCATION_PARAMETERS`: a copy engine object. 8 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvB0b5AllocationParameters {
    /// `version`: [`NVB0B5_ALLOCATION_PARAMETERS_VERSION_1`].
    pub version: u32,
    /// `engineType`.
    pub engine_type: u32,
}

/// `NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_PARAMS`. 32 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv0080CtrlDmaSetPageDirectoryParams {
    /// `physAddress` of the root page directory.
    pub phys_address: u64,
    /// `numEntries` in the root directory.
    pub num_entries: u32,
    /// `flags`: aperture and `ALL_CHANNELS`.
    pub flags: u32,
    /// `hVASpace`.
    pub h_va_space: u32,
    /// `chId`.
    pub ch_id: u32,
    /// `subDeviceId`: subdevice instance + 1 (unicast).
    pub sub_device_id: u32,
    /// `pasid`.
    pub pasid: u32,
}

/// `NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS`. 2 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvA06fCtrlGpfifoScheduleParams {
    /// `bEnable`.
    pub b_enable: u8,
    /// `bSkipSubmit`.
    pub b_skip_submit: u8,
}

/// `NVA06F_CTRL_BIND_PARAMS`. 4 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvA06fCtrlBindParams {
    /// `engineType`.
    pub engine_type: u32,
}

/// `NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS`. 4 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvC36fCtrlGetWorkSubmitTokenParams {
    /// `workSubmitToken`.
    pub work_submit_token: u32,
}

/// `NvGpuSemaphore`: the four-word report a semaphore release with `RELEASE_TIMESTAMP` (or a
/// copy engine's `RELEASE_FOUR_WORD_SEMAPHORE`) writes: the payload, then the GPU's time in
/// nanoseconds. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvGpuSemaphore {
    /// `data[2]`: the payload (the second word only with a 64-bit payload).
    pub data: [u32; 2],
    /// `timeStamp.nanoseconds[2]`: low word first.
    pub time_stamp: [u32; 2],
}

impl NvGpuSemaphore {
    /// The timestamp as one number.
    pub fn nanoseconds(&self) -> u64 {
        u64::from(self.time_stamp[0]) | (u64::from(self.time_stamp[1]) << 32)
    }
}

/// `NvNotification`: what RM writes to a channel's error notifier. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct NvNotification {
    /// `timeStamp.nanoseconds[2]`.
    pub time_stamp: [u32; 2],
    /// `info32`: for an error notifier, the Xid (`ROBUST_CHANNEL_*`).
    pub info32: u32,
    /// `info16`.
    pub info16: u16,
    /// `status`: [`RC_NOTIFIER_STATUS`] when RM posts an error.
    pub status: u16,
}

use crate::hw::host::UserdControl;
#[cfg(test)]
use crate::hw::host::{USERD_GP_GET, USERD_GP_PUT, USERD_SIZE};

/// Work-submit token: runlist and channel id (`NV_CTRL_VF_DOORBELL`).
pub const fn work_submit_token(runlist: u32, chid: u32) -> u32 {
    ((runlist & NV_CTRL_VF_DOORBELL_RUNLIST_ID_MASK) << NV_CTRL_VF_DOORBELL_RUNLIST_ID_SHIFT)
        | (chid & NV_CTRL_VF_DOORBELL_VECTOR_MASK)
}

/// The channel id in a work-submit token.
pub const fn token_chid(token: u32) -> u32 {
    token & NV_CTRL_VF_DOORBELL_VECTOR_MASK
}

// ---------------------------------------------------------------------------------------------
// Layout tables for tests/tests/gsp_rpc_layout.rs.

/// The structures of this module.
pub const STRUCT_LAYOUTS: &[StructLayout] = &[
    c_struct!("NV_VASPACE_ALLOCATION_PARAMETERS", NvVaspaceAllocationParameters, headers::NVOS, [
        "index" => index, "flags" => flags, "vaSize" => va_size, "vaStartInternal" => va_start_internal,
        "vaLimitInternal" => va_limit_internal, "bigPageSize" => big_page_size, "vaBase" => va_base,
    ]),
    c_struct!("NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS", NvChannelGroupAllocationParameters, headers::NVOS, [
        "hObjectError" => h_object_error, "hObjectEccError" => h_object_ecc_error, "hVASpace" => h_va_space,
        "engineType" => engine_type, "bIsCallingContextVgpuPlugin" => b_is_calling_context_vgpu_plugin,
    ]),
    c_struct!("NV_MEMORY_DESC_PARAMS", NvMemoryDescParams, headers::ALLOC_CHANNEL, [
        "base" => base, "size" => size, "addressSpace" => address_space, "cacheAttrib" => cache_attrib,
    ]),
    c_struct!("NV_CHANNEL_ALLOC_PARAMS", NvChannelAllocParams, headers::ALLOC_CHANNEL, [
        "hObjectError" => h_object_error, "hObjectBuffer" => h_object_buffer, "gpFifoOffset" => gp_fifo_offset,
        "gpFifoEntries" => gp_fifo_entries, "flags" => flags, "hContextShare" => h_context_share,
        "hVASpace" => h_va_space, "hUserdMemory" => h_userd_memory, "userdOffset" => userd_offset,
        "engineType" => engine_type, "cid" => cid, "subDeviceId" => sub_device_id,
        "hObjectEccError" => h_object_ecc_error, "instanceMem" => instance_mem, "userdMem" => userd_mem,
        "ramfcMem" => ramfc_mem, "mthdbufMem" => mthdbuf_mem, "hPhysChannelGroup" => h_phys_channel_group,
        "internalFlags" => internal_flags, "errorNotifierMem" => error_notifier_mem,
        "eccErrorNotifierMem" => ecc_error_notifier_mem, "ProcessID" => process_id,
        "SubProcessID" => sub_process_id, "encryptIv" => encrypt_iv, "decryptIv" => decrypt_iv,
        "hmacNonce" => hmac_nonce,
    ]),
    c_struct!("NVB0B5_ALLOCATION_PARAMETERS", NvB0b5AllocationParameters, headers::CLB0B5SW, [
        "version" => version, "engineType" => engine_type,
    ]),
    c_struct!("NV0080_CTRL_DMA_SET_PAGE_DIRECTORY_PARAMS", Nv0080CtrlDmaSetPageDirectoryParams, headers::CTRL0080DMA, [
        "physAddress" => phys_address, "numEntries" => num_entries, "flags" => flags, "hVASpace" => h_va_space,
        "chId" => ch_id, "subDeviceId" => sub_device_id, "pasid" => pasid,
    ]),
    c_struct!("NVA06F_CTRL_GPFIFO_SCHEDULE_PARAMS", NvA06fCtrlGpfifoScheduleParams, headers::CTRLA06FGPFIFO, [
        "bEnable" => b_enable, "bSkipSubmit" => b_skip_submit,
    ]),
    c_struct!("NVA06F_CTRL_BIND_PARAMS", NvA06fCtrlBindParams, headers::CTRLA06FGPFIFO, [
        "engineType" => engine_type,
    ]),
    c_struct!("NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS", NvC36fCtrlGetWorkSubmitTokenParams, headers::CTRLC36F, [
        "workSubmitToken" => work_submit_token,
    ]),
    c_struct!("TuringAControlGPFifo", UserdControl, headers::CLC46F, [
        "Put" => put, "Get" => get, "Reference" => reference, "PutHi" => put_hi, "TopLevelGet" => top_level_get,
        "TopLevelGetHi" => top_level_get_hi, "GetHi" => get_hi, "GPGet" => gp_get, "GPPut" => gp_put,
    ]),
    c_struct!("NvGpuSemaphore", NvGpuSemaphore, headers::NVGPUTYPES, [
        "data" => data, "timeStamp" => time_stamp,
    ]),
    c_struct!("NvNotification", NvNotification, headers::NVGPUTYPES, [
        "timeStamp" => time_stamp, "info32" => info32, "info16" => info16, "status" => status,
    ]),
];

/// The constants of this module, under NVIDIA's names (expressions where NVIDIA spells a field).
pub const CONSTANTS: &[ConstantFact] = &[
    c_constant!("FERMI_VASPACE_A", headers::CL90F1, FERMI_VASPACE_A),
    c_constant!("KEPLER_CHANNEL_GROUP_A", headers::CLA06C, KEPLER_CHANNEL_GROUP_A),
    c_constant!("NV_MAX_SUBDEVICES", headers::NVLIMITS, NV_MAX_SUBDEVICES),
    c_constant!("CC_CHAN_ALLOC_IV_SIZE_DWORD", headers::ALLOC_CHANNEL, CC_CHAN_ALLOC_IV_SIZE_DWORD),
    c_constant!("CC_CHAN_ALLOC_NONCE_SIZE_DWORD", headers::ALLOC_CHANNEL, CC_CHAN_ALLOC_NONCE_SIZE_DWORD),
    c_constant!("NV_VASPACE_ALLOCATION_INDEX_GPU_NEW", headers::NVOS, NV_VASPACE_ALLOCATION_INDEX_GPU_NEW),
    c_constant!(
        "NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED",
        headers::NVOS,
        NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED
    ),
    c_constant!(
        "NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING",
        headers::NVOS,
        NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING
    ),
    c_constant!("NV_VASPACE_BIG_PAGE_SIZE_64K", headers::NVOS, NV_VASPACE_BIG_PAGE_SIZE_64K),
    c_constant!("ADDR_SYSMEM", headers::MEM_DESC, ADDR_SYSMEM),
    c_constant!("ADDR_FBMEM", headers::MEM_DESC, ADDR_FBMEM),
    c_constant!("NV2080_ENGINE_TYPE_GRAPHICS", headers::CL2080_NOTIFICATION, NV2080_ENGINE_TYPE_GRAPHICS),
    c_constant!("NV2080_ENGINE_TYPE_COPY0", headers::CL2080_NOTIFICATION, NV2080_ENGINE_TYPE_COPY0),
    c_constant!("NVB0B5_ALLOCATION_PARAMETERS_VERSION_1", headers::CLB0B5SW, NVB0B5_ALLOCATION_PARAMETERS_VERSION_1),
    c_constant!("NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY", headers::CTRL0080DMA, NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY),
    c_constant!("NVA06F_CTRL_CMD_GPFIFO_SCHEDULE", headers::CTRLA06FGPFIFO, NVA06F_CTRL_CMD_GPFIFO_SCHEDULE),
    c_constant!("NVA06F_CTRL_CMD_BIND", headers::CTRLA06FGPFIFO, NVA06F_CTRL_CMD_BIND),
    c_constant!(
        "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN",
        headers::CTRLC36F,
        NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN
    ),
    c_constant!("NVC361_NOTIFY_CHANNEL_PENDING", headers::CLC361, NVC361_NOTIFY_CHANNEL_PENDING),
    c_constant!("NVC361_NV_USERMODE__SIZE", headers::CLC361, NVC361_NV_USERMODE_SIZE),
    c_constant!("NVC361_TIME_0", headers::CLC361, NVC361_TIME_0),
    c_constant!("NVC361_TIME_1", headers::CLC361, NVC361_TIME_1),
    c_constant!("ROBUST_CHANNEL_GR_EXCEPTION", headers::NVERROR, ROBUST_CHANNEL_GR_EXCEPTION),
    c_constant!("ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", headers::NVERROR, ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT),
    c_constant!("ROBUST_CHANNEL_PBDMA_ERROR", headers::NVERROR, ROBUST_CHANNEL_PBDMA_ERROR),
    c_constant!("ROBUST_CHANNEL_CE0_ERROR", headers::NVERROR, ROBUST_CHANNEL_CE0_ERROR),
    c_constant!("ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", headers::NVERROR, ROBUST_CHANNEL_PREEMPTIVE_REMOVAL),
];

/// Values NVIDIA spells as fields rather than names: C expressions and what they evaluate to.
pub fn expression_checks() -> [(&'static str, u64); 8] {
    [
        (
            "DRF_DEF(0080, _CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS, _APERTURE, _VIDMEM)",
            SET_PAGE_DIRECTORY_APERTURE_VIDMEM as u64,
        ),
        (
            "DRF_DEF(0080, _CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS, _APERTURE, _SYSMEM_COH)",
            SET_PAGE_DIRECTORY_APERTURE_SYSMEM_COH as u64,
        ),
        (
            "DRF_DEF(0080, _CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS, _APERTURE, _SYSMEM_NONCOH)",
            SET_PAGE_DIRECTORY_APERTURE_SYSMEM_NONCOH as u64,
        ),
        (
            "DRF_DEF(0080, _CTRL_DMA_SET_PAGE_DIRECTORY_FLAGS, _ALL_CHANNELS, _TRUE)",
            SET_PAGE_DIRECTORY_ALL_CHANNELS as u64,
        ),
        ("DRF_BASE(NVC361)", NVC361_BASE as u64),
        ("DRF_SHIFTMASK(NV_CTRL_VF_DOORBELL_VECTOR)", NV_CTRL_VF_DOORBELL_VECTOR_MASK as u64),
        ("DRF_SHIFT(NV_CTRL_VF_DOORBELL_RUNLIST_ID)", NV_CTRL_VF_DOORBELL_RUNLIST_ID_SHIFT as u64),
        ("DRF_MASK(NV_CTRL_VF_DOORBELL_RUNLIST_ID)", NV_CTRL_VF_DOORBELL_RUNLIST_ID_MASK as u64),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_c_layouts() {
        assert_eq!(core::mem::size_of::<NvVaspaceAllocationParameters>(), 48);
        assert_eq!(core::mem::size_of::<NvChannelGroupAllocationParameters>(), 20);
        assert_eq!(core::mem::size_of::<NvMemoryDescParams>(), 24);
        assert_eq!(core::mem::size_of::<Nv0080CtrlDmaSetPageDirectoryParams>(), 32);
        assert_eq!(core::mem::size_of::<NvNotification>(), 16);
        assert_eq!((USERD_GP_GET, USERD_GP_PUT, USERD_SIZE), (0x88, 0x8c, 0x200));
    }

    #[test]
    fn tokens_round_trip() {
        let t = work_submit_token(3, 0x45);
        assert_eq!(t, 0x0003_0045);
        assert_eq!(token_chid(t), 0x45);
        assert_eq!(RobustChannelError::from_xid(31), RobustChannelError::MmuFault);
        assert_eq!(RobustChannelError::from_xid(40), RobustChannelError::CopyEngineError(1));
        for xid in [13, 31, 32, 39, 41, 45, 79] {
            assert_eq!(RobustChannelError::from_xid(xid).xid(), xid);
        }
    }
}
