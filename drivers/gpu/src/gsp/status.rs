//! `NV_STATUS`: the status codes RM returns, from
//! `src/common/sdk/nvidia/inc/nvstatuscodes.h` (open-gpu-kernel-modules 535.261.03), under NVIDIA's
//! names so that a code in a log can be looked up in the header.
//!
//! GSP-RM reports these in `rpc_message_header_v.rpc_result` and in the `status` fields of RPC
//! parameters (`rpc_gsp_rm_alloc_v03_00.status`, ...). They come from firmware, so any 32-bit
//! value can appear: [`NvStatus::from_raw`] maps the codes the header defines to their variants
//! and keeps any other value as [`NvStatus::Unknown`].
//! `tests/tests/gsp_rpc_layout.rs` checks every value and description against the header.

use core::fmt;

/// A status code that `nvstatuscodes.h` does not define, as the raw value read.
///
/// Only [`NvStatus::from_raw`] makes one, so a value that has a name never hides in here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnknownStatus(u32);

impl UnknownStatus {
    /// The raw value.
    pub const fn raw(self) -> u32 {
        self.0
    }
}

macro_rules! nv_status_codes {
    ($($name:ident = $value:literal => $description:literal,)*) => {
        /// An `NV_STATUS` value: one of the codes of `nvstatuscodes.h` under its NVIDIA name, or
        /// a value the header does not define.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum NvStatus {
            $(
                #[doc = $description]
                $name,
            )*
            /// A value `nvstatuscodes.h` does not define.
            Unknown(UnknownStatus),
        }

        impl NvStatus {
            /// Every code the header defines, in the header's order.
            pub const ALL_KNOWN: &'static [NvStatus] = &[$(NvStatus::$name),*];

            /// Decodes a raw status; values the header does not define become [`NvStatus::Unknown`].
            pub const fn from_raw(raw: u32) -> Self {
                match raw {
                    $( $value => NvStatus::$name, )*
                    other => NvStatus::Unknown(UnknownStatus(other)),
                }
            }

            /// The raw 32-bit value.
            pub const fn raw(self) -> u32 {
                match self {
                    $( NvStatus::$name => $value, )*
                    NvStatus::Unknown(u) => u.0,
                }
            }

            /// NVIDIA's name (`NV_ERR_INVALID_ARGUMENT`), or `None` for an unknown value.
            pub const fn name(self) -> Option<&'static str> {
                match self {
                    $( NvStatus::$name => Some(stringify!($name)), )*
                    NvStatus::Unknown(_) => None,
                }
            }

            /// The header's description (the string `nvstatusToString` returns), or `None` for
            /// an unknown value.
            pub const fn description(self) -> Option<&'static str> {
                match self {
                    $( NvStatus::$name => Some($description), )*
                    NvStatus::Unknown(_) => None,
                }
            }
        }
    };
}

nv_status_codes! {
        NV_OK = 0x00000000 => "Success",
        NV_ERR_GENERIC = 0x0000ffff => "Failure: Generic Error",
        NV_ERR_BROKEN_FB = 0x00000001 => "Frame-Buffer broken",
        NV_ERR_BUFFER_TOO_SMALL = 0x00000002 => "Buffer passed in is too small",
        NV_ERR_BUSY_RETRY = 0x00000003 => "System is busy, retry later",
        NV_ERR_CALLBACK_NOT_SCHEDULED = 0x00000004 => "The requested callback API not scheduled",
        NV_ERR_CARD_NOT_PRESENT = 0x00000005 => "Card not detected",
        NV_ERR_CYCLE_DETECTED = 0x00000006 => "Call cycle detected",
        NV_ERR_DMA_IN_USE = 0x00000007 => "Requested DMA is in use",
        NV_ERR_DMA_MEM_NOT_LOCKED = 0x00000008 => "Requested DMA memory is not locked",
        NV_ERR_DMA_MEM_NOT_UNLOCKED = 0x00000009 => "Requested DMA memory is not unlocked",
        NV_ERR_DUAL_LINK_INUSE = 0x0000000a => "Dual-Link is in use",
        NV_ERR_ECC_ERROR = 0x0000000b => "Generic ECC error",
        NV_ERR_FIFO_BAD_ACCESS = 0x0000000c => "FIFO: Invalid access",
        NV_ERR_FREQ_NOT_SUPPORTED = 0x0000000d => "Requested frequency is not supported",
        NV_ERR_GPU_DMA_NOT_INITIALIZED = 0x0000000e => "Requested DMA not initialized",
        NV_ERR_GPU_IS_LOST = 0x0000000f => "GPU lost from the bus",
        NV_ERR_GPU_IN_FULLCHIP_RESET = 0x00000010 => "GPU currently in full-chip reset",
        NV_ERR_GPU_NOT_FULL_POWER = 0x00000011 => "GPU not in full power",
        NV_ERR_GPU_UUID_NOT_FOUND = 0x00000012 => "GPU UUID not found",
        NV_ERR_HOT_SWITCH = 0x00000013 => "System in hot switch",
        NV_ERR_I2C_ERROR = 0x00000014 => "I2C Error",
        NV_ERR_I2C_SPEED_TOO_HIGH = 0x00000015 => "I2C Error: Speed too high",
        NV_ERR_ILLEGAL_ACTION = 0x00000016 => "Current action is not allowed",
        NV_ERR_IN_USE = 0x00000017 => "Generic busy error",
        NV_ERR_INFLATE_COMPRESSED_DATA_FAILED = 0x00000018 => "Failed to inflate compressed data",
        NV_ERR_INSERT_DUPLICATE_NAME = 0x00000019 => "Found a duplicate entry in the requested btree",
        NV_ERR_INSUFFICIENT_RESOURCES = 0x0000001a => "Ran out of a critical resource, other than memory",
        NV_ERR_INSUFFICIENT_PERMISSIONS = 0x0000001b => "The requester does not have sufficient permissions",
        NV_ERR_INSUFFICIENT_POWER = 0x0000001c => "Generic Error: Low power",
        NV_ERR_INVALID_ACCESS_TYPE = 0x0000001d => "This type of access is not allowed",
        NV_ERR_INVALID_ADDRESS = 0x0000001e => "Address not valid",
        NV_ERR_INVALID_ARGUMENT = 0x0000001f => "Invalid argument to call",
        NV_ERR_INVALID_BASE = 0x00000020 => "Invalid base",
        NV_ERR_INVALID_CHANNEL = 0x00000021 => "Given channel-id not valid",
        NV_ERR_INVALID_CLASS = 0x00000022 => "Given class-id not valid",
        NV_ERR_INVALID_CLIENT = 0x00000023 => "Given client not valid",
        NV_ERR_INVALID_COMMAND = 0x00000024 => "Command passed is not valid",
        NV_ERR_INVALID_DATA = 0x00000025 => "Invalid data passed",
        NV_ERR_INVALID_DEVICE = 0x00000026 => "Current device is not valid",
        NV_ERR_INVALID_DMA_SPECIFIER = 0x00000027 => "The requested DMA specifier is not valid",
        NV_ERR_INVALID_EVENT = 0x00000028 => "Invalid event occurred",
        NV_ERR_INVALID_FLAGS = 0x00000029 => "Invalid flags passed",
        NV_ERR_INVALID_FUNCTION = 0x0000002a => "Called function is not valid",
        NV_ERR_INVALID_HEAP = 0x0000002b => "Heap corrupted",
        NV_ERR_INVALID_INDEX = 0x0000002c => "Index invalid",
        NV_ERR_INVALID_IRQ_LEVEL = 0x0000002d => "Requested IRQ level is not valid",
        NV_ERR_INVALID_LIMIT = 0x0000002e => "Generic Error: Invalid limit",
        NV_ERR_INVALID_LOCK_STATE = 0x0000002f => "Requested lock state not valid",
        NV_ERR_INVALID_METHOD = 0x00000030 => "Requested method not valid",
        NV_ERR_INVALID_OBJECT = 0x00000031 => "Object not valid",
        NV_ERR_INVALID_OBJECT_BUFFER = 0x00000032 => "Object buffer passed is not valid",
        NV_ERR_INVALID_OBJECT_HANDLE = 0x00000033 => "Object handle is not valid",
        NV_ERR_INVALID_OBJECT_NEW = 0x00000034 => "New object is not valid",
        NV_ERR_INVALID_OBJECT_OLD = 0x00000035 => "Old object is not valid",
        NV_ERR_INVALID_OBJECT_PARENT = 0x00000036 => "Object parent is not valid",
        NV_ERR_INVALID_OFFSET = 0x00000037 => "The offset passed is not valid",
        NV_ERR_INVALID_OPERATION = 0x00000038 => "Requested operation is not valid",
        NV_ERR_INVALID_OWNER = 0x00000039 => "Owner not valid",
        NV_ERR_INVALID_PARAM_STRUCT = 0x0000003a => "Invalid structure parameter",
        NV_ERR_INVALID_PARAMETER = 0x0000003b => "At least one of the parameters passed is not valid",
        NV_ERR_INVALID_PATH = 0x0000003c => "The requested path is not valid",
        NV_ERR_INVALID_POINTER = 0x0000003d => "Pointer not valid",
        NV_ERR_INVALID_REGISTRY_KEY = 0x0000003e => "Found an invalid registry key",
        NV_ERR_INVALID_REQUEST = 0x0000003f => "Generic Error: Invalid request",
        NV_ERR_INVALID_STATE = 0x00000040 => "Generic Error: Invalid state",
        NV_ERR_INVALID_STRING_LENGTH = 0x00000041 => "The string length is not valid",
        NV_ERR_INVALID_READ = 0x00000042 => "The requested read operation is not valid",
        NV_ERR_INVALID_WRITE = 0x00000043 => "The requested write operation is not valid",
        NV_ERR_INVALID_XLATE = 0x00000044 => "The requested translate operation is not valid",
        NV_ERR_IRQ_NOT_FIRING = 0x00000045 => "Requested IRQ is not firing",
        NV_ERR_IRQ_EDGE_TRIGGERED = 0x00000046 => "IRQ is edge triggered",
        NV_ERR_MEMORY_TRAINING_FAILED = 0x00000047 => "Failed memory training sequence",
        NV_ERR_MISMATCHED_SLAVE = 0x00000048 => "Slave mismatch",
        NV_ERR_MISMATCHED_TARGET = 0x00000049 => "Target mismatch",
        NV_ERR_MISSING_TABLE_ENTRY = 0x0000004a => "Requested entry missing not found in the table",
        NV_ERR_MODULE_LOAD_FAILED = 0x0000004b => "Failed to load the requested module",
        NV_ERR_MORE_DATA_AVAILABLE = 0x0000004c => "There is more data available",
        NV_ERR_MORE_PROCESSING_REQUIRED = 0x0000004d => "More processing required for the given call",
        NV_ERR_MULTIPLE_MEMORY_TYPES = 0x0000004e => "Multiple memory types found",
        NV_ERR_NO_FREE_FIFOS = 0x0000004f => "No more free FIFOs found",
        NV_ERR_NO_INTR_PENDING = 0x00000050 => "No interrupt pending",
        NV_ERR_NO_MEMORY = 0x00000051 => "Out of memory",
        NV_ERR_NO_SUCH_DOMAIN = 0x00000052 => "Requested domain does not exist",
        NV_ERR_NO_VALID_PATH = 0x00000053 => "Caller did not specify a valid path",
        NV_ERR_NOT_COMPATIBLE = 0x00000054 => "Generic Error: Incompatible types",
        NV_ERR_NOT_READY = 0x00000055 => "Generic Error: Not ready",
        NV_ERR_NOT_SUPPORTED = 0x00000056 => "Call not supported",
        NV_ERR_OBJECT_NOT_FOUND = 0x00000057 => "Requested object not found",
        NV_ERR_OBJECT_TYPE_MISMATCH = 0x00000058 => "Specified objects do not match",
        NV_ERR_OPERATING_SYSTEM = 0x00000059 => "Generic operating system error",
        NV_ERR_OTHER_DEVICE_FOUND = 0x0000005a => "Found other device instead of the requested one",
        NV_ERR_OUT_OF_RANGE = 0x0000005b => "The specified value is out of bounds",
        NV_ERR_OVERLAPPING_UVM_COMMIT = 0x0000005c => "Overlapping unified virtual memory commit",
        NV_ERR_PAGE_TABLE_NOT_AVAIL = 0x0000005d => "Requested page table not available",
        NV_ERR_PID_NOT_FOUND = 0x0000005e => "Process-Id not found",
        NV_ERR_PROTECTION_FAULT = 0x0000005f => "Protection fault",
        NV_ERR_RC_ERROR = 0x00000060 => "Generic RC error",
        NV_ERR_REJECTED_VBIOS = 0x00000061 => "Given Video BIOS rejected/invalid",
        NV_ERR_RESET_REQUIRED = 0x00000062 => "Reset required",
        NV_ERR_STATE_IN_USE = 0x00000063 => "State in use",
        NV_ERR_SIGNAL_PENDING = 0x00000064 => "Signal pending",
        NV_ERR_TIMEOUT = 0x00000065 => "Call timed out",
        NV_ERR_TIMEOUT_RETRY = 0x00000066 => "Call timed out, please retry later",
        NV_ERR_TOO_MANY_PRIMARIES = 0x00000067 => "Too many primaries",
        NV_ERR_UVM_ADDRESS_IN_USE = 0x00000068 => "Unified virtual memory requested address already in use",
        NV_ERR_MAX_SESSION_LIMIT_REACHED = 0x00000069 => "Maximum number of sessions reached",
        NV_ERR_LIB_RM_VERSION_MISMATCH = 0x0000006a => "Library version doesn't match driver version",
        NV_ERR_PRIV_SEC_VIOLATION = 0x0000006b => "Priv security violation",
        NV_ERR_GPU_IN_DEBUG_MODE = 0x0000006c => "GPU currently in debug mode",
        NV_ERR_FEATURE_NOT_ENABLED = 0x0000006d => "Requested Feature functionality is not enabled",
        NV_ERR_RESOURCE_LOST = 0x0000006e => "Requested resource has been destroyed",
        NV_ERR_PMU_NOT_READY = 0x0000006f => "PMU is not ready or has not yet been initialized",
        NV_ERR_FLCN_ERROR = 0x00000070 => "Generic falcon assert or halt",
        NV_ERR_FATAL_ERROR = 0x00000071 => "Fatal/unrecoverable error",
        NV_ERR_MEMORY_ERROR = 0x00000072 => "Generic memory error",
        NV_ERR_INVALID_LICENSE = 0x00000073 => "License provided is rejected or invalid",
        NV_ERR_NVLINK_INIT_ERROR = 0x00000074 => "Nvlink Init Error",
        NV_ERR_NVLINK_MINION_ERROR = 0x00000075 => "Nvlink Minion Error",
        NV_ERR_NVLINK_CLOCK_ERROR = 0x00000076 => "Nvlink Clock Error",
        NV_ERR_NVLINK_TRAINING_ERROR = 0x00000077 => "Nvlink Training Error",
        NV_ERR_NVLINK_CONFIGURATION_ERROR = 0x00000078 => "Nvlink Configuration Error",
        NV_ERR_RISCV_ERROR = 0x00000079 => "Generic RISC-V assert or halt",
        NV_ERR_FABRIC_MANAGER_NOT_PRESENT = 0x0000007a => "Fabric Manager is not loaded",
        NV_ERR_ALREADY_SIGNALLED = 0x0000007b => "Semaphore Surface value already >= requested wait value",
        NV_WARN_HOT_SWITCH = 0x00010001 => "WARNING Hot switch",
        NV_WARN_INCORRECT_PERFMON_DATA = 0x00010002 => "WARNING Incorrect performance monitor data",
        NV_WARN_MISMATCHED_SLAVE = 0x00010003 => "WARNING Slave mismatch",
        NV_WARN_MISMATCHED_TARGET = 0x00010004 => "WARNING Target mismatch",
        NV_WARN_MORE_PROCESSING_REQUIRED = 0x00010005 => "WARNING More processing required for the call",
        NV_WARN_NOTHING_TO_DO = 0x00010006 => "WARNING Nothing to do",
        NV_WARN_NULL_OBJECT = 0x00010007 => "WARNING NULL object found",
        NV_WARN_OUT_OF_RANGE = 0x00010008 => "WARNING value out of range",
}

impl NvStatus {
    /// `NV_OK`.
    pub const fn is_ok(self) -> bool {
        matches!(self, NvStatus::NV_OK)
    }

    /// One of the `NV_WARN_*` codes (0x0001xxxx): the call did its work, with a remark.
    pub const fn is_warning(self) -> bool {
        self.raw() & 0xffff_0000 == 0x0001_0000
    }

    /// `Ok(())` for `NV_OK`, the status itself otherwise.
    pub const fn ok(self) -> Result<(), NvStatus> {
        if self.is_ok() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl From<u32> for NvStatus {
    fn from(raw: u32) -> Self {
        NvStatus::from_raw(raw)
    }
}

impl fmt::Display for NvStatus {
    /// `NV_ERR_INVALID_ARGUMENT (0x0000001f: Invalid argument to call)`, or
    /// `unknown NV_STATUS 0x12345678`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.name(), self.description()) {
            (Some(name), Some(description)) => {
                write!(f, "{name} ({:#010x}: {description})", self.raw())
            }
            _ => write!(f, "unknown NV_STATUS {:#010x}", self.raw()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn known_codes_round_trip_and_print_their_names() {
        for status in NvStatus::ALL_KNOWN {
            assert_eq!(NvStatus::from_raw(status.raw()), *status);
            assert!(status.name().unwrap().starts_with("NV_"));
        }
        assert_eq!(NvStatus::from_raw(0), NvStatus::NV_OK);
        assert!(NvStatus::NV_OK.is_ok());
        assert_eq!(NvStatus::from_raw(0x1f), NvStatus::NV_ERR_INVALID_ARGUMENT);
        assert_eq!(
            NvStatus::NV_ERR_INVALID_ARGUMENT.to_string(),
            "NV_ERR_INVALID_ARGUMENT (0x0000001f: Invalid argument to call)"
        );
        assert_eq!(NvStatus::from_raw(0xffff), NvStatus::NV_ERR_GENERIC);
        assert!(NvStatus::NV_WARN_NOTHING_TO_DO.is_warning());
        assert!(!NvStatus::NV_ERR_GENERIC.is_warning());
        assert_eq!(NvStatus::NV_ERR_TIMEOUT.ok(), Err(NvStatus::NV_ERR_TIMEOUT));
    }

    #[test]
    fn unknown_codes_keep_their_value() {
        let status = NvStatus::from_raw(0x1234_5678);
        assert!(matches!(status, NvStatus::Unknown(u) if u.raw() == 0x1234_5678));
        assert_eq!(status.raw(), 0x1234_5678);
        assert_eq!(status.name(), None);
        assert_eq!(status.to_string(), "unknown NV_STATUS 0x12345678");
        assert!(!status.is_ok());
    }
}
