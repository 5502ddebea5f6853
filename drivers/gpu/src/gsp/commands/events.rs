//! What GSP-RM sends unasked: `OS_ERROR_LOG`, `POST_EVENT`, `GSP_RUN_CPU_SEQUENCER` and the rest.

use super::*;

/// `rpc_os_error_log_v17_00`: an Xid GSP-RM reports. 268 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcOsErrorLogV17_00 {
    /// `exceptType`: the Xid.
    pub except_type: u32,
    /// `runlistId`.
    pub runlist_id: u32,
    /// `chid`: the channel, or `INVALID_CHID`.
    pub chid: u32,
    /// `errString`: NUL-terminated text.
    pub err_string: [u8; 0x100],
}

impl RpcOsErrorLogV17_00 {
    /// The Xid.
    pub const fn except_type(&self) -> u32 {
        self.except_type
    }
    /// The runlist.
    pub const fn runlist_id(&self) -> u32 {
        self.runlist_id
    }
    /// The channel.
    pub const fn chid(&self) -> u32 {
        self.chid
    }
    /// The message, printable.
    pub fn text(&self) -> String {
        c_string(&self.err_string)
    }
}

/// `rpc_post_event_v17_00` without its `eventData[]` (which starts at byte 29, inside this
/// struct's trailing padding: [`POST_EVENT_DATA_OFFSET`]). 32 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcPostEventV17_00 {
    /// `hClient`.
    pub h_client: u32,
    /// `hEvent`.
    pub h_event: u32,
    /// `notifyIndex`.
    pub notify_index: u32,
    /// `data`.
    pub data: u32,
    /// `info16`.
    pub info16: u16,
    /// Padding before `status`.
    pub _padding0: [u8; 2],
    /// `status`.
    pub status: u32,
    /// `eventDataSize`.
    pub event_data_size: u32,
    /// `bNotifyList`.
    pub b_notify_list: u8,
    /// Trailing padding, where `eventData` starts.
    pub _padding1: [u8; 3],
}

/// `offsetof(rpc_post_event_v17_00, eventData)`: the flexible array follows `bNotifyList`
/// directly.
pub const POST_EVENT_DATA_OFFSET: usize = offset_of!(RpcPostEventV17_00, b_notify_list) + 1;

/// A `POST_EVENT`: an RM event notification for a client's event object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostEvent<'a> {
    /// The fixed part.
    pub params: RpcPostEventV17_00,
    /// `eventData`, `eventDataSize` bytes.
    pub data: &'a [u8],
}

/// `GSP_SEQ_BUF_REG_SAVE_SIZE`: registers a sequencer can save.
pub const GSP_SEQ_BUF_REG_SAVE_SIZE: usize = 8;

/// `rpc_run_cpu_sequencer_v17_00` without its `commandBuffer[]`. 40 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcRunCpuSequencerV17_00 {
    /// `bufferSizeDWord`: size of GSP-RM's sequencer buffer in words.
    pub buffer_size_dword: u32,
    /// `cmdIndex`: words of commands in `commandBuffer`.
    pub cmd_index: u32,
    /// `regSaveArea`: where `REG_STORE` saves registers.
    pub reg_save_area: [u32; GSP_SEQ_BUF_REG_SAVE_SIZE],
}

/// An event (or unawaited reply) decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GspEvent<'a> {
    /// `GSP_INIT_DONE`: GSP-RM finished booting.
    InitDone,
    /// `GSP_RUN_CPU_SEQUENCER`: registers to program for GSP-RM.
    RunCpuSequencer(SequencerBuffer),
    /// `OS_ERROR_LOG`: an Xid.
    OsErrorLog(Box<RpcOsErrorLogV17_00>),
    /// `POST_EVENT`.
    PostEvent(PostEvent<'a>),
    /// Another declared event, parameters not decoded here.
    Other(RpcEvent, &'a [u8]),
    /// An event number not declared in 535.
    Unknown(u32, &'a [u8]),
    /// Not an event: a reply to a function nobody waited for.
    Reply(RpcName),
}

impl<'a> GspEvent<'a> {
    /// Decodes `message`'s parameters by its event number.
    pub fn decode(message: &'a GspMessage) -> Result<Self, RpcError> {
        let payload = &message.payload[..];
        let function = message.function();
        let Some(event) = message.event() else {
            return Ok(if function > crate::gsp::fw::rpc::NV_VGPU_MSG_EVENT_FIRST_EVENT {
                GspEvent::Unknown(function, payload)
            } else {
                GspEvent::Reply(RpcName(function))
            });
        };
        Ok(match event {
            RpcEvent::GspInitDone => GspEvent::InitDone,
            RpcEvent::GspRunCpuSequencer => GspEvent::RunCpuSequencer(SequencerBuffer::decode(payload)?),
            RpcEvent::OsErrorLog => GspEvent::OsErrorLog(Box::new(read_prefix(payload).ok_or(RpcError::bad_event(
                function,
                "shorter than rpc_os_error_log_v17_00",
                payload.len(),
            ))?)),
            RpcEvent::PostEvent => {
                let params: RpcPostEventV17_00 = read_prefix(payload).ok_or(RpcError::bad_event(
                    function,
                    "shorter than rpc_post_event_v17_00",
                    payload.len(),
                ))?;
                let data = payload
                    .get(POST_EVENT_DATA_OFFSET..)
                    .and_then(|d| d.get(..params.event_data_size as usize))
                    .ok_or(RpcError::bad_event(function, "eventDataSize reaches past the message", payload.len()))?;
                GspEvent::PostEvent(PostEvent { params, data })
            }
            other => GspEvent::Other(other, payload),
        })
    }
}
