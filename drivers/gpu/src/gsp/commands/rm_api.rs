//! `GSP_RM_ALLOC`, `GSP_RM_CONTROL` and `FREE`: the RM API calls, carried to GSP-RM.

use super::*;

/// `RMAPI_RPC_FLAGS_NONE` (`rmapi.h`).
pub const RMAPI_RPC_FLAGS_NONE: u32 = 0;
/// `RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR`: return the parameters even when the call failed.
pub const RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR: u32 = 1 << 0;
/// `RMAPI_RPC_FLAGS_SERIALIZED`: the parameters are FINN-serialized.
pub const RMAPI_RPC_FLAGS_SERIALIZED: u32 = 1 << 1;

/// `rpc_gsp_rm_alloc_v03_00` without its `params[]`. 32 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcGspRmAllocV03_00 {
    /// `hClient`.
    pub h_client: u32,
    /// `hParent`.
    pub h_parent: u32,
    /// `hObject`: the handle the new object gets.
    pub h_object: u32,
    /// `hClass`: its class number.
    pub h_class: u32,
    /// `status`: the allocation's `NV_STATUS`, in the reply.
    pub status: u32,
    /// `paramsSize`: bytes of `params`.
    pub params_size: u32,
    /// `flags`: `RMAPI_RPC_FLAGS_*`.
    pub flags: u32,
    /// `reserved`.
    pub reserved: [u8; 4],
}

/// `rpc_gsp_rm_control_v03_00` without its `params[]`. 24 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcGspRmControlV03_00 {
    /// `hClient`.
    pub h_client: u32,
    /// `hObject`: the object the control is on.
    pub h_object: u32,
    /// `cmd`: the control command (`NV2080_CTRL_CMD_*`, ...).
    pub cmd: u32,
    /// `status`: the control's `NV_STATUS`, in the reply.
    pub status: u32,
    /// `paramsSize`.
    pub params_size: u32,
    /// `flags`: `RMAPI_RPC_FLAGS_*`.
    pub flags: u32,
}

/// `NVOS00_PARAMETERS_v03_00` (`g_sdk-structures.h`): the parameters of a free. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nvos00ParametersV03_00 {
    /// `hRoot`: the client.
    pub h_root: u32,
    /// `hObjectParent`: `NV01_NULL_OBJECT` from `rpcRmApiFree_GSP`.
    pub h_object_parent: u32,
    /// `hObjectOld`: the object to free.
    pub h_object_old: u32,
    /// `status`, in the reply.
    pub status: u32,
}

/// `rpc_free_v03_00`. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcFreeV03_00 {
    /// `params`.
    pub params: Nvos00ParametersV03_00,
}

/// What GSP-RM returned for an allocation or control: the call's own status and the
/// parameters as it left them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RmCallReply {
    /// The `status` field of the reply.
    pub status: NvStatus,
    /// The parameters GSP-RM wrote back (`paramsSize` bytes).
    pub params: Vec<u8>,
}

/// `GSP_RM_ALLOC`: allocate an RM object (`rpcRmApiAlloc_GSP`).
///
/// One difference from RM: `rpcRmApiAlloc_GSP` writes an RPC header `length` that stops at the
/// fixed part (`sizeof(rpc_gsp_rm_alloc_v03_00)`), so the parameters travel in the queue entry
/// but outside the checksummed length, and GSP-RM finds them by `paramsSize`. Here `length`
/// covers the parameters, so the checksum covers them too (the Linux nouveau driver sends the
/// same with 535 firmware). RM never splits an allocation into continuation records; keep
/// `params` within one record ([`RECORD_PAYLOAD_MAX`] less the 32-byte fixed part).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GspRmAlloc<'a> {
    /// `hClient`.
    pub h_client: u32,
    /// `hParent`.
    pub h_parent: u32,
    /// `hObject`.
    pub h_object: u32,
    /// `hClass`.
    pub h_class: u32,
    /// The class's allocation parameters (`NV0080_ALLOC_PARAMETERS`, ...), possibly empty.
    pub params: &'a [u8],
}

/// The reply to an RM call (alloc or control): the fixed struct `T` (`shorter` is the error
/// reason when the reply does not hold it), its status and the parameters after it,
/// `paramsSize` bytes long.
pub(super) fn decode_rm_call<T: FromBytes + KnownLayout + Immutable>(
    function: RpcFunction,
    payload: &[u8],
    shorter: &'static str,
    status_and_size: impl Fn(&T) -> (u32, u32),
) -> Result<RmCallReply, RpcError> {
    let fixed: T = read_prefix(payload).ok_or(RpcError::bad_reply(function, shorter, payload.len()))?;
    let (status, params_size) = status_and_size(&fixed);
    let params = decode_params(function, payload, size_of::<T>(), params_size)?;
    Ok(RmCallReply { status: NvStatus::from_raw(status), params })
}

pub(super) fn decode_params(
    function: RpcFunction,
    payload: &[u8],
    fixed: usize,
    size: u32,
) -> Result<Vec<u8>, RpcError> {
    payload.get(fixed..).and_then(|rest| rest.get(..size as usize)).map(Vec::from).ok_or(RpcError::bad_reply(
        function,
        "paramsSize reaches past the reply",
        payload.len(),
    ))
}

impl Rpc for GspRmAlloc<'_> {
    const FUNCTION: RpcFunction = RpcFunction::GspRmAlloc;
    type Reply = RmCallReply;
    fn encode(&self, out: &mut Vec<u8>) {
        let fixed = RpcGspRmAllocV03_00 {
            h_client: self.h_client,
            h_parent: self.h_parent,
            h_object: self.h_object,
            h_class: self.h_class,
            status: 0,
            params_size: self.params.len() as u32,
            flags: RMAPI_RPC_FLAGS_NONE,
            reserved: [0; 4],
        };
        out.extend_from_slice(fixed.as_bytes());
        out.extend_from_slice(self.params);
    }
    fn decode_reply(payload: &[u8]) -> Result<RmCallReply, RpcError> {
        decode_rm_call::<RpcGspRmAllocV03_00>(Self::FUNCTION, payload, "shorter than rpc_gsp_rm_alloc_v03_00", |f| {
            (f.status, f.params_size)
        })
    }
    fn reply_len(&self) -> Option<usize> {
        Some(size_of::<RpcGspRmAllocV03_00>() + self.params.len())
    }
    fn history_data(&self) -> [u32; 2] {
        [self.h_class, self.h_object]
    }
}

/// `GSP_RM_CONTROL`: an RM control call on an object (`rpcRmApiControl_GSP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GspRmControl<'a> {
    /// `hClient`.
    pub h_client: u32,
    /// `hObject`.
    pub h_object: u32,
    /// `cmd`.
    pub cmd: u32,
    /// `flags`: `RMAPI_RPC_FLAGS_*`.
    pub flags: u32,
    /// The control's parameters, which GSP-RM returns updated.
    pub params: &'a [u8],
}

impl Rpc for GspRmControl<'_> {
    const FUNCTION: RpcFunction = RpcFunction::GspRmControl;
    type Reply = RmCallReply;
    fn encode(&self, out: &mut Vec<u8>) {
        let fixed = RpcGspRmControlV03_00 {
            h_client: self.h_client,
            h_object: self.h_object,
            cmd: self.cmd,
            status: 0,
            params_size: self.params.len() as u32,
            flags: self.flags,
        };
        out.extend_from_slice(fixed.as_bytes());
        out.extend_from_slice(self.params);
    }
    fn decode_reply(payload: &[u8]) -> Result<RmCallReply, RpcError> {
        decode_rm_call::<RpcGspRmControlV03_00>(
            Self::FUNCTION,
            payload,
            "shorter than rpc_gsp_rm_control_v03_00",
            |f| (f.status, f.params_size),
        )
    }
    fn reply_len(&self) -> Option<usize> {
        Some(size_of::<RpcGspRmControlV03_00>() + self.params.len())
    }
    fn history_data(&self) -> [u32; 2] {
        [self.cmd, self.h_object]
    }
}

/// `FREE`: free an RM object (`rpcRmApiFree_GSP`). RM frees a parent's children with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Free {
    /// The client.
    pub h_client: u32,
    /// The object.
    pub h_object: u32,
}

impl Rpc for Free {
    const FUNCTION: RpcFunction = RpcFunction::Free;
    /// The `status` of the reply's `NVOS00_PARAMETERS`.
    type Reply = NvStatus;
    fn encode(&self, out: &mut Vec<u8>) {
        let params = RpcFreeV03_00 {
            params: Nvos00ParametersV03_00 {
                h_root: self.h_client,
                h_object_parent: NV01_NULL_OBJECT,
                h_object_old: self.h_object,
                status: 0,
            },
        };
        out.extend_from_slice(params.as_bytes());
    }
    fn decode_reply(payload: &[u8]) -> Result<NvStatus, RpcError> {
        let reply: RpcFreeV03_00 = read_prefix(payload).ok_or(RpcError::bad_reply(
            Self::FUNCTION,
            "shorter than rpc_free_v03_00",
            payload.len(),
        ))?;
        Ok(NvStatus::from_raw(reply.params.status))
    }
    fn history_data(&self) -> [u32; 2] {
        [self.h_object, 0]
    }
}
