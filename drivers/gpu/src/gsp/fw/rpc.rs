//! The RPC header every GSP message starts with (`rpc_message_header_v`,
//! `src/nvidia/generated/g_rpc-message-header.h`), its constants (`rpc_headers.h`) and the RPC
//! function and event numbers (`src/nvidia/kernel/inc/vgpu/rpc_global_enums.h`), 535.261.03.
//!
//! Function numbers are positions in the `X(UNIT, RPC)` list of `rpc_global_enums.h` (the
//! enumerators `NV_VGPU_MSG_FUNCTION_<RPC>`); event numbers start at
//! `NV_VGPU_MSG_EVENT_FIRST_EVENT = 0x1000`. Only the numbers this driver has a use for are
//! declared; [`RpcFunction::from_raw`] and [`RpcEvent::from_raw`] return `None` for the others,
//! which is how a message from GSP-RM with a number we do not know is recognised.

use core::fmt;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `NV_VGPU_MSG_SIGNATURE_VALID`: "VRPC" read as a little-endian `u32`.
pub const NV_VGPU_MSG_SIGNATURE_VALID: u32 = 0x4350_5256;
/// `NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT`.
pub const NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT: u32 = 0x3;
/// `NV_VGPU_MSG_HEADER_VERSION_MINOR_TOT`.
pub const NV_VGPU_MSG_HEADER_VERSION_MINOR_TOT: u32 = 0x0;
/// `header_version` as `rpcWriteCommonHeader` (`rpc_common.c`) writes it: major in bits 31:24
/// (`NV_VGPU_MSG_HEADER_VERSION_MAJOR`), minor in bits 23:16.
pub const RPC_HEADER_VERSION: u32 =
    (NV_VGPU_MSG_HEADER_VERSION_MAJOR_TOT << 24) | (NV_VGPU_MSG_HEADER_VERSION_MINOR_TOT << 16);
/// `NV_VGPU_MSG_RESULT_SUCCESS` (`NV_OK`).
pub const NV_VGPU_MSG_RESULT_SUCCESS: u32 = 0;
/// `NV_VGPU_MSG_RESULT_RPC_PENDING`: what a request carries in `rpc_result` until answered.
pub const NV_VGPU_MSG_RESULT_RPC_PENDING: u32 = 0xffff_ffff;
/// `NV_VGPU_MSG_UNION_INIT`: the value of the `u` member on bare metal.
pub const NV_VGPU_MSG_UNION_INIT: u32 = 0;
/// `NV_VGPU_MSG_FUNCTION_NUM_FUNCTIONS`: one past the last function number.
pub const NV_VGPU_MSG_FUNCTION_NUM_FUNCTIONS: u32 = 203;
/// `NV_VGPU_MSG_EVENT_FIRST_EVENT`: events are numbered from here.
pub const NV_VGPU_MSG_EVENT_FIRST_EVENT: u32 = 0x1000;
/// `NV_VGPU_MSG_EVENT_NUM_EVENTS`: one past the last event number.
pub const NV_VGPU_MSG_EVENT_NUM_EVENTS: u32 = 0x101f;

/// `rpc_message_header_v` (`rpc_message_header_v03_00`): the header of every RPC, in both
/// directions; the RPC's parameters follow it (`rpc_message_data[]`). 32 bytes, aligned to 8
/// because the flexible payload union `rpc_generic_union` (`g_rpc-structures.h`) holds 64-bit
/// members.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C, align(8))]
pub struct RpcMessageHeader {
    /// `header_version`: [`RPC_HEADER_VERSION`].
    pub header_version: u32,
    /// `signature`: [`NV_VGPU_MSG_SIGNATURE_VALID`].
    pub signature: u32,
    /// `length`: bytes of header and parameters together.
    pub length: u32,
    /// `function`: an [`RpcFunction`] or, from GSP-RM, an [`RpcEvent`].
    pub function: u32,
    /// `rpc_result`: an `NV_STATUS` in replies; [`NV_VGPU_MSG_RESULT_RPC_PENDING`] in requests.
    pub rpc_result: u32,
    /// `rpc_result_private`: same, for RM-internal status.
    pub rpc_result_private: u32,
    /// `sequence`: request sequence number.
    pub sequence: u32,
    /// `u` (`rpc_message_rpc_union_field_v`: `spare` or `cpuRmGfid`, both `NvU32`);
    /// [`NV_VGPU_MSG_UNION_INIT`] on bare metal.
    pub u: u32,
}

/// Size of [`RpcMessageHeader`]: where an RPC's parameters start.
pub const RPC_MESSAGE_HEADER_SIZE: u32 = core::mem::size_of::<RpcMessageHeader>() as u32;

impl RpcMessageHeader {
    /// A request header for `function` with `param_len` bytes of parameters, filled the way
    /// `rpcWriteCommonHeader` (`rpc_common.c`) fills one on bare metal; `None` when the length
    /// overflows. `sequence` is left 0 for the sender to set.
    pub const fn request(function: u32, param_len: u32) -> Option<Self> {
        let Some(length) = RPC_MESSAGE_HEADER_SIZE.checked_add(param_len) else {
            return None;
        };
        Some(Self {
            header_version: RPC_HEADER_VERSION,
            signature: NV_VGPU_MSG_SIGNATURE_VALID,
            length,
            function,
            rpc_result: NV_VGPU_MSG_RESULT_RPC_PENDING,
            rpc_result_private: NV_VGPU_MSG_RESULT_RPC_PENDING,
            sequence: 0,
            u: NV_VGPU_MSG_UNION_INIT,
        })
    }

    /// Checks what can be checked of a header read back from shared memory: signature, version
    /// and that `length` covers at least the header.
    pub fn check(&self) -> Result<(), RpcHeaderError> {
        if self.signature != NV_VGPU_MSG_SIGNATURE_VALID {
            return Err(RpcHeaderError::BadSignature { found: self.signature });
        }
        if self.header_version != RPC_HEADER_VERSION {
            return Err(RpcHeaderError::BadVersion { found: self.header_version });
        }
        if self.length < RPC_MESSAGE_HEADER_SIZE {
            return Err(RpcHeaderError::ShortLength { length: self.length });
        }
        Ok(())
    }

    /// The function number decoded, when it is one this driver declares.
    pub const fn rpc_function(&self) -> Option<RpcFunction> {
        RpcFunction::from_raw(self.function)
    }

    /// The event number decoded, when it is one this driver declares.
    pub const fn rpc_event(&self) -> Option<RpcEvent> {
        RpcEvent::from_raw(self.function)
    }
}

/// Why an RPC header read from shared memory was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpcHeaderError {
    /// `signature` is not `NV_VGPU_MSG_SIGNATURE_VALID`.
    BadSignature { found: u32 },
    /// `header_version` is not 3.0.
    BadVersion { found: u32 },
    /// `length` is shorter than the header itself.
    ShortLength { length: u32 },
}

impl fmt::Display for RpcHeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RpcHeaderError::BadSignature { found } => write!(
                f,
                "RPC header signature {found:#010x}, expected NV_VGPU_MSG_SIGNATURE_VALID ({NV_VGPU_MSG_SIGNATURE_VALID:#010x})"
            ),
            RpcHeaderError::BadVersion { found } => {
                write!(f, "RPC header version {found:#010x}, expected {RPC_HEADER_VERSION:#010x} (3.0)")
            }
            RpcHeaderError::ShortLength { length } => {
                write!(f, "RPC length {length} is shorter than the {RPC_MESSAGE_HEADER_SIZE}-byte header")
            }
        }
    }
}

macro_rules! rpc_numbers {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $prefix:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $cname:ident, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $value, )*
        }

        impl $name {
            /// Every number declared.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// Decodes a number; `None` when it is not declared here.
            pub const fn from_raw(raw: u32) -> Option<Self> {
                match raw {
                    $( $value => Some($name::$variant), )*
                    _ => None,
                }
            }

            /// The number.
            pub const fn raw(self) -> u32 {
                self as u32
            }

            /// NVIDIA's enumerator name.
            pub const fn nvidia_name(self) -> &'static str {
                match self {
                    $( $name::$variant => concat!($prefix, stringify!($cname)), )*
                }
            }
        }
    };
}

rpc_numbers! {
    /// RPC functions the CPU sends (`NV_VGPU_MSG_FUNCTION_*`); a reply carries the request's number.
    pub enum RpcFunction: "NV_VGPU_MSG_FUNCTION_" {
        Nop = 0 => NOP,
        /// Guest/system information; sent first at boot.
        SetGuestSystemInfo = 1 => SET_GUEST_SYSTEM_INFO,
        AllocRoot = 2 => ALLOC_ROOT,
        AllocMemory = 4 => ALLOC_MEMORY,
        AllocCtxDma = 5 => ALLOC_CTX_DMA,
        AllocChannelDma = 6 => ALLOC_CHANNEL_DMA,
        MapMemory = 7 => MAP_MEMORY,
        AllocObject = 9 => ALLOC_OBJECT,
        /// Frees an RM object.
        Free = 10 => FREE,
        Log = 11 => LOG,
        UnmapMemory = 13 => UNMAP_MEMORY,
        MapMemoryDma = 14 => MAP_MEMORY_DMA,
        UnmapMemoryDma = 15 => UNMAP_MEMORY_DMA,
        AllocSubdevice = 19 => ALLOC_SUBDEVICE,
        DupObject = 21 => DUP_OBJECT,
        IdleChannels = 22 => IDLE_CHANNELS,
        AllocEvent = 23 => ALLOC_EVENT,
        /// Tells GSP-RM the driver is going away (before unload or suspend).
        UnloadingGuestDriver = 47 => UNLOADING_GUEST_DRIVER,
        GetStaticInfo = 51 => GET_STATIC_INFO,
        UpdatePde2 = 53 => UPDATE_PDE_2,
        SetPageDirectory = 54 => SET_PAGE_DIRECTORY,
        /// Reads GSP-RM's static GPU information after INIT_DONE.
        GetGspStaticInfo = 65 => GET_GSP_STATIC_INFO,
        UpdateBarPde = 70 => UPDATE_BAR_PDE,
        /// Continuation of a message larger than one queue record.
        ContinuationRecord = 71 => CONTINUATION_RECORD,
        /// System information (PCI ids, BAR addresses, ...); sent before GSP-RM boots.
        GspSetSystemInfo = 72 => GSP_SET_SYSTEM_INFO,
        /// Registry keys; sent before GSP-RM boots.
        SetRegistry = 73 => SET_REGISTRY,
        GspInitPostObjgpu = 74 => GSP_INIT_POST_OBJGPU,
        /// An RM control call on an object.
        GspRmControl = 76 => GSP_RM_CONTROL,
        GetStaticInfo2 = 77 => GET_STATIC_INFO2,
        DumpProtobufComponent = 78 => DUMP_PROTOBUF_COMPONENT,
        UnsetPageDirectory = 79 => UNSET_PAGE_DIRECTORY,
        GetConsolidatedStaticInfo = 80 => GET_CONSOLIDATED_STATIC_INFO,
        /// Allocates an RM object.
        GspRmAlloc = 103 => GSP_RM_ALLOC,
        InvalidateTlb = 200 => INVALIDATE_TLB,
        EccNotifierWriteAck = 202 => ECC_NOTIFIER_WRITE_ACK,
    }
}

rpc_numbers! {
    /// Events GSP-RM sends unasked (`NV_VGPU_MSG_EVENT_*`), all of 535.261.03's.
    pub enum RpcEvent: "NV_VGPU_MSG_EVENT_" {
        /// GSP-RM finished initialising.
        GspInitDone = 0x1001 => GSP_INIT_DONE,
        /// GSP-RM asks the CPU to run a register sequence (e.g. around GC6 / resume).
        GspRunCpuSequencer = 0x1002 => GSP_RUN_CPU_SEQUENCER,
        PostEvent = 0x1003 => POST_EVENT,
        RcTriggered = 0x1004 => RC_TRIGGERED,
        /// A replayable or non-replayable MMU fault was queued.
        MmuFaultQueued = 0x1005 => MMU_FAULT_QUEUED,
        /// An Xid-style error report.
        OsErrorLog = 0x1006 => OS_ERROR_LOG,
        RgLineIntr = 0x1007 => RG_LINE_INTR,
        GpuacctPerfmonUtilSamples = 0x1008 => GPUACCT_PERFMON_UTIL_SAMPLES,
        SimRead = 0x1009 => SIM_READ,
        SimWrite = 0x100a => SIM_WRITE,
        SemaphoreScheduleCallback = 0x100b => SEMAPHORE_SCHEDULE_CALLBACK,
        /// A LIBOS print from the firmware.
        UcodeLibosPrint = 0x100c => UCODE_LIBOS_PRINT,
        VgpuGspPluginTriggered = 0x100d => VGPU_GSP_PLUGIN_TRIGGERED,
        PerfGpuBoostSyncLimitsCallback = 0x100e => PERF_GPU_BOOST_SYNC_LIMITS_CALLBACK,
        PerfBridgelessInfoUpdate = 0x100f => PERF_BRIDGELESS_INFO_UPDATE,
        VgpuConfig = 0x1010 => VGPU_CONFIG,
        DisplayModeset = 0x1011 => DISPLAY_MODESET,
        ExtdevIntrService = 0x1012 => EXTDEV_INTR_SERVICE,
        NvlinkInbandReceivedData256 = 0x1013 => NVLINK_INBAND_RECEIVED_DATA_256,
        NvlinkInbandReceivedData512 = 0x1014 => NVLINK_INBAND_RECEIVED_DATA_512,
        NvlinkInbandReceivedData1024 = 0x1015 => NVLINK_INBAND_RECEIVED_DATA_1024,
        NvlinkInbandReceivedData2048 = 0x1016 => NVLINK_INBAND_RECEIVED_DATA_2048,
        NvlinkInbandReceivedData4096 = 0x1017 => NVLINK_INBAND_RECEIVED_DATA_4096,
        TimedSemaphoreRelease = 0x1018 => TIMED_SEMAPHORE_RELEASE,
        NvlinkIsGpuDegraded = 0x1019 => NVLINK_IS_GPU_DEGRADED,
        PfmReqHndlrStateSyncCallback = 0x101a => PFM_REQ_HNDLR_STATE_SYNC_CALLBACK,
        GspSendUserSharedData = 0x101b => GSP_SEND_USER_SHARED_DATA,
        NvlinkFaultUp = 0x101c => NVLINK_FAULT_UP,
        GspLockdownNotice = 0x101d => GSP_LOCKDOWN_NOTICE,
        MigCiConfigUpdate = 0x101e => MIG_CI_CONFIG_UPDATE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_bytes() {
        let header = RpcMessageHeader::request(RpcFunction::GspSetSystemInfo.raw(), 0x100).unwrap();
        let bytes = header.as_bytes();
        assert_eq!(bytes.len(), 32);
        assert_eq!(&bytes[0..4], &0x0300_0000u32.to_le_bytes());
        assert_eq!(&bytes[4..8], b"VRPC");
        assert_eq!(&bytes[8..12], &0x120u32.to_le_bytes());
        assert_eq!(&bytes[12..16], &72u32.to_le_bytes());
        assert_eq!(&bytes[16..24], &[0xff; 8]);
        assert_eq!(header.check(), Ok(()));
        assert_eq!(RpcMessageHeader::read_from_bytes(bytes).unwrap(), header);
        assert_eq!(RpcMessageHeader::request(1, u32::MAX), None);
    }

    #[test]
    fn check_refuses_foreign_headers() {
        let mut header = RpcMessageHeader::request(RpcFunction::Nop.raw(), 0).unwrap();
        header.signature = 0;
        assert_eq!(header.check(), Err(RpcHeaderError::BadSignature { found: 0 }));
        header.signature = NV_VGPU_MSG_SIGNATURE_VALID;
        header.header_version = 0x0200_0000;
        assert!(matches!(header.check(), Err(RpcHeaderError::BadVersion { .. })));
        header.header_version = RPC_HEADER_VERSION;
        header.length = 31;
        assert!(matches!(header.check(), Err(RpcHeaderError::ShortLength { length: 31 })));
    }

    #[test]
    fn numbers_decode_and_name() {
        assert_eq!(RpcFunction::from_raw(103), Some(RpcFunction::GspRmAlloc));
        assert_eq!(RpcFunction::from_raw(3), None, "ALLOC_DEVICE is not declared");
        assert_eq!(RpcEvent::from_raw(0x1001), Some(RpcEvent::GspInitDone));
        assert_eq!(RpcEvent::from_raw(0x1000), None, "FIRST_EVENT is not an event");
        assert_eq!(RpcEvent::from_raw(NV_VGPU_MSG_EVENT_NUM_EVENTS), None);
        assert_eq!(RpcFunction::GspRmControl.nvidia_name(), "NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL");
        assert_eq!(RpcEvent::OsErrorLog.nvidia_name(), "NV_VGPU_MSG_EVENT_OS_ERROR_LOG");
        for f in RpcFunction::ALL {
            assert!(f.raw() < NV_VGPU_MSG_FUNCTION_NUM_FUNCTIONS);
            assert_eq!(RpcFunction::from_raw(f.raw()), Some(*f));
        }
        // The events are contiguous from FIRST_EVENT + 1 to NUM_EVENTS - 1: all of them declared.
        assert_eq!(RpcEvent::ALL.len() as u32, NV_VGPU_MSG_EVENT_NUM_EVENTS - NV_VGPU_MSG_EVENT_FIRST_EVENT - 1);
    }
}
