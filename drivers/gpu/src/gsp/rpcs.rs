//! GSP-RM RPCs as types, and the client that sends them and waits for their replies while
//! serving GSP-RM's events (open-gpu-kernel-modules 535.261.03).
//!
//! - [`Rpc`]: one RPC function, its parameter encoding and its reply type. The RPCs the driver
//!   sends: [`GspSetSystemInfo`], [`SetRegistry`], [`GetGspStaticInfo`], [`GspRmAlloc`],
//!   [`GspRmControl`], [`Free`], [`UnloadingGuestDriver`].
//! - [`GspRpc`]: send-and-wait over [`GspMessageQueues`], like RM's `_issueRpcAndWait` /
//!   `_kgspRpcRecvPoll`: every other message that arrives while waiting (events such as
//!   `GSP_RUN_CPU_SEQUENCER`, `OS_ERROR_LOG`, `POST_EVENT`, or replies to RPCs nobody waits
//!   for) goes to a caller-supplied [`EventHandler`]. Every exchange is recorded in an
//!   [`RpcHistory`] that errors carry.
//! - Payload layouts, byte for byte as NVIDIA's headers define them (checked by
//!   `tests/tests/gsp_rpc_layout.rs` against the C compiler): `rpc_gsp_rm_alloc_v03_00`,
//!   `rpc_gsp_rm_control_v03_00`, `rpc_free_v03_00`, `rpc_unloading_guest_driver_v1F_07`,
//!   `rpc_run_cpu_sequencer_v17_00`, `rpc_os_error_log_v17_00`, `rpc_post_event_v17_00`
//!   (`g_rpc-structures.h`, `g_sdk-structures.h`), `GspSystemInfo` and `GspStaticConfigInfo`
//!   (`gsp_static_config.h`), `PACKED_REGISTRY_TABLE` (`g_os_nvoc.h`), the sequencer payloads
//!   (`rmgspseq.h`). The GPU model reuses these definitions for its side of the protocol.
//! - The CPU sequencer: `GSP_RUN_CPU_SEQUENCER` buffers decoded into [`SeqCommand`]s and an
//!   executor over [`RegisterIo`] and a [`SequencerCore`] (`kgspExecuteSequencerBuffer`).
//!
//! Everything decoded here comes from firmware: lengths are checked before anything is read,
//! and a short or inconsistent payload is an [`RpcError`], never a panic.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::mem::{offset_of, size_of};

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

use super::history::{Direction, EntryId, HistorySnapshot, RpcHistory, RpcHistoryEntry, RpcName, RpcOutcome};
use super::layout::{ConstantFact, FieldLayout, StructLayout};
use super::queue::{GspDoorbell, GspMessage, GspMessageQueues, TransportError, RECORD_PAYLOAD_MAX};
use super::rpc::{RpcEvent, RpcFunction, RpcMessageHeader};
use super::status::NvStatus;
use crate::chip::Chipset;
use crate::hw::headers;
use crate::hw::RegisterIo;
use crate::platform::{wait_for, Clock, Timeout};
use crate::rm::NV01_NULL_OBJECT;

// ---------------------------------------------------------------------------------------------
// Errors.

/// What went wrong with an RPC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RpcErrorKind {
    /// The queues failed while sending `during` or waiting for its reply.
    Transport { during: RpcName, error: TransportError },
    /// The queues failed while [`GspRpc::poll`] read the status queue, no RPC outstanding.
    Polling(TransportError),
    /// No reply (or event) within the timeout. `reply`: waiting for the reply to function
    /// `waiting_for`, else for event `waiting_for`.
    Timeout { waiting_for: RpcName, reply: bool, after_ms: u64 },
    /// GSP-RM answered with a non-`NV_OK` `rpc_result`.
    Failed { function: RpcName, status: NvStatus },
    /// A reply's parameters could not be decoded.
    BadReply { function: RpcName, reason: &'static str, len: usize },
    /// An event's parameters could not be decoded.
    BadEvent { event: RpcName, reason: &'static str, len: usize },
    /// Parameters could not be encoded (too large for their length fields).
    TooLarge { function: RpcName, len: usize },
    /// A `GSP_RUN_CPU_SEQUENCER` buffer was malformed or failed to execute.
    Sequencer(SequencerError),
    /// An event handler refused a message.
    Handler { event: RpcName, reason: &'static str },
}

/// An RPC failure, with the RPC history at the time it happened when the failure came from the
/// exchange with GSP-RM (so that a timeout says what was sent before it), and the GPU when the
/// client was told which one it talks to ([`GspRpc::set_gpu`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// What went wrong.
    pub kind: RpcErrorKind,
    /// The last RPCs, oldest first.
    pub history: Option<Box<HistorySnapshot>>,
    /// The GPU whose GSP-RM this was.
    pub gpu: Option<Chipset>,
}

impl RpcError {
    /// An error without history or GPU (the client adds them).
    pub const fn new(kind: RpcErrorKind) -> Self {
        RpcError { kind, history: None, gpu: None }
    }

    /// Writes `; last RPCs (oldest first): ...` when the error carries the history (for callers
    /// that print [`Self::kind`] in their own words, such as the boot's errors).
    pub fn fmt_history(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.history {
            Some(h) => write!(f, "; last RPCs (oldest first): {h}"),
            None => Ok(()),
        }
    }

    /// A reply to `function` that cannot be decoded.
    pub fn bad_reply(function: RpcFunction, reason: &'static str, len: usize) -> Self {
        Self::new(RpcErrorKind::BadReply { function: function.into(), reason, len })
    }

    /// An event of number `event` that cannot be decoded.
    pub fn bad_event(event: u32, reason: &'static str, len: usize) -> Self {
        Self::new(RpcErrorKind::BadEvent { event: RpcName(event), reason, len })
    }

    /// This error with `snapshot` attached (unless it already carries one).
    pub fn with_history(mut self, snapshot: HistorySnapshot) -> Self {
        if self.history.is_none() {
            self.history = Some(Box::new(snapshot));
        }
        self
    }

    /// The `NV_STATUS` GSP-RM answered with, for [`RpcErrorKind::Failed`].
    pub fn status(&self) -> Option<NvStatus> {
        match self.kind {
            RpcErrorKind::Failed { status, .. } => Some(status),
            _ => None,
        }
    }
}

impl From<SequencerError> for RpcError {
    fn from(e: SequencerError) -> Self {
        RpcError::new(RpcErrorKind::Sequencer(e))
    }
}

impl fmt::Display for RpcErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RpcErrorKind::Transport { during, error } => write!(f, "{during}: {error}"),
            RpcErrorKind::Polling(error) => write!(f, "polling the status queue: {error}"),
            RpcErrorKind::Timeout { waiting_for, reply: true, after_ms } => {
                write!(f, "timeout waiting for the reply to {waiting_for} after {after_ms} ms")
            }
            RpcErrorKind::Timeout { waiting_for, reply: false, after_ms } => {
                write!(f, "timeout waiting for {waiting_for} after {after_ms} ms")
            }
            RpcErrorKind::Failed { function, status } => {
                write!(f, "GSP-RM answered {function} with {status}")
            }
            RpcErrorKind::BadReply { function, reason, len } => {
                write!(f, "reply to {function} ({len} bytes): {reason}")
            }
            RpcErrorKind::BadEvent { event, reason, len } => {
                write!(f, "{event} ({len} bytes): {reason}")
            }
            RpcErrorKind::TooLarge { function, len } => {
                write!(f, "{function}: {len} bytes of parameters is too many")
            }
            RpcErrorKind::Sequencer(e) => write!(f, "GSP CPU sequencer: {e}"),
            RpcErrorKind::Handler { event, reason } => write!(f, "handling {event}: {reason}"),
        }
    }
}

impl fmt::Display for RpcError {
    /// One line: the GPU (when known), what went wrong, the history.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(gpu) = self.gpu {
            write!(f, "{gpu:?} GSP RPC: ")?;
        }
        self.kind.fmt(f)?;
        self.fmt_history(f)
    }
}

// ---------------------------------------------------------------------------------------------
// RPCs as types, and the client.

/// One GSP-RM RPC: its function number, how its parameters are written, and what its reply
/// decodes to.
pub trait Rpc {
    /// The `NV_VGPU_MSG_FUNCTION_*` number; the reply carries the same.
    const FUNCTION: RpcFunction;
    /// What the reply decodes to.
    type Reply;
    /// Appends the parameters (what follows `rpc_message_header_v`) to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Decodes the reply's parameters (`rpc_result` was `NV_OK`).
    fn decode_reply(payload: &[u8]) -> Result<Self::Reply, RpcError>;
    /// Parameter bytes the reply has in all, when it may be longer than one record and come
    /// with continuation records (RM's bidirectional `_issueRpcLarge`); `None`: one record.
    fn reply_len(&self) -> Option<usize> {
        None
    }
    /// Two words that identify this call in the history (RM's `RpcHistoryEntry.data`).
    fn history_data(&self) -> [u32; 2] {
        [0, 0]
    }
}

/// Receives every message that arrives while [`GspRpc`] waits and is not what it waits for:
/// GSP-RM's events, and replies to RPCs that were posted without waiting. Returning an error
/// ends the wait with that error.
pub trait EventHandler {
    /// One message, already checked and consumed from the queue.
    fn on_message(&mut self, message: &GspMessage) -> Result<(), RpcError>;
}

impl<F: FnMut(&GspMessage) -> Result<(), RpcError>> EventHandler for F {
    fn on_message(&mut self, message: &GspMessage) -> Result<(), RpcError> {
        self(message)
    }
}

/// The default handler: logs events (`OS_ERROR_LOG` as a warning) and otherwise ignores them,
/// like RM's `_kgspProcessRpcEvent` does for events it has no use for. It cannot run a CPU
/// sequencer; the boot installs a handler that does while GSP-RM may ask for one.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogEvents;

impl EventHandler for LogEvents {
    fn on_message(&mut self, message: &GspMessage) -> Result<(), RpcError> {
        match GspEvent::decode(message) {
            Ok(GspEvent::OsErrorLog(e)) => log::warn!(
                "GSP-RM error log: Xid {} (runlist {}, chid {:#x}): {}",
                e.except_type(),
                e.runlist_id(),
                e.chid(),
                e.text()
            ),
            Ok(GspEvent::RunCpuSequencer(seq)) => log::error!(
                "GSP-RM asked for a CPU sequencer run of {} commands; no sequencer handler installed",
                seq.commands.len()
            ),
            Ok(GspEvent::Reply(function)) => {
                log::debug!("GSP-RM: unawaited reply to {function}: {}", message.rpc_result())
            }
            Ok(_) => log::debug!("GSP-RM event {}", message.name()),
            Err(e) => log::warn!("GSP-RM event: {e}"),
        }
        Ok(())
    }
}

/// RM's default timeout for a graphics-mode GPU (`osGetTimeoutParams`: 4 s).
pub const RM_DEFAULT_TIMEOUT_MS: u64 = 4000;

/// How long a reply is waited for: 1.5 times RM's default timeout, as `_kgspRpcRecvPoll` does.
pub const RPC_REPLY_TIMEOUT_MS: u64 = RM_DEFAULT_TIMEOUT_MS + RM_DEFAULT_TIMEOUT_MS / 2;

/// Something that performs RPCs: [`GspRpc`], or a stand-in in tests of layers above.
pub trait RpcChannel {
    /// Sends `rpc` and waits for its reply.
    fn call<R: Rpc>(&mut self, rpc: &R) -> Result<R::Reply, RpcError>;
}

/// What a wait waits for.
#[derive(Clone, Copy)]
enum Awaited {
    Reply { function: u32, reply_len: Option<usize>, entry: EntryId },
    Event(RpcEvent),
}

/// Sends RPCs and waits for replies over the queues; serves other messages through an
/// [`EventHandler`]; keeps the [`RpcHistory`]. Owns the queues and the clock.
///
/// One RPC is outstanding at a time (RM refuses recursive polling, `_kgspRpcRecvPoll`): a
/// handler that needs an RPC of its own must defer it until the wait returns.
pub struct GspRpc<D: GspDoorbell, C: Clock> {
    queues: GspMessageQueues<D>,
    clock: C,
    history: RpcHistory,
    timeout_ms: u64,
    events: Box<dyn EventHandler + Send>,
    gpu: Option<Chipset>,
}

impl<D: GspDoorbell, C: Clock> GspRpc<D, C> {
    /// A client over `queues`, timing waits with `clock`; replies are waited for
    /// [`RPC_REPLY_TIMEOUT_MS`]; events go to [`LogEvents`] unless a call names a handler.
    pub fn new(queues: GspMessageQueues<D>, clock: C) -> Self {
        GspRpc {
            queues,
            clock,
            history: RpcHistory::new(),
            timeout_ms: RPC_REPLY_TIMEOUT_MS,
            events: Box::new(LogEvents),
            gpu: None,
        }
    }

    /// Names the GPU this client talks to; its errors carry it.
    pub fn set_gpu(&mut self, gpu: Chipset) {
        self.gpu = Some(gpu);
    }

    /// The GPU named with [`Self::set_gpu`].
    pub const fn gpu(&self) -> Option<Chipset> {
        self.gpu
    }

    /// `error` as it leaves the client: with the history now and the GPU.
    fn failed(&self, error: RpcError) -> RpcError {
        let mut error = error.with_history(self.snapshot());
        if error.gpu.is_none() {
            error.gpu = self.gpu;
        }
        error
    }

    /// Sets how long replies are waited for.
    pub fn set_timeout_ms(&mut self, timeout_ms: u64) {
        self.timeout_ms = timeout_ms;
    }

    /// The handler for [`Self::call`] and [`RpcChannel::call`].
    pub fn set_event_handler(&mut self, handler: Box<dyn EventHandler + Send>) {
        self.events = handler;
    }

    /// The queues.
    pub fn queues(&mut self) -> &mut GspMessageQueues<D> {
        &mut self.queues
    }

    /// The clock.
    pub fn clock(&self) -> &C {
        &self.clock
    }

    /// The history of the last RPCs.
    pub fn history(&self) -> &RpcHistory {
        &self.history
    }

    /// A snapshot of the history, now.
    pub fn snapshot(&self) -> HistorySnapshot {
        self.history.snapshot(self.clock.now_ns())
    }

    /// Gives back the queues and the clock.
    pub fn into_parts(self) -> (GspMessageQueues<D>, C) {
        (self.queues, self.clock)
    }

    fn encode<R: Rpc>(rpc: &R) -> Result<Vec<u8>, RpcError> {
        let mut payload = Vec::new();
        rpc.encode(&mut payload);
        if u32::try_from(payload.len()).is_err() {
            return Err(RpcError::new(RpcErrorKind::TooLarge { function: R::FUNCTION.into(), len: payload.len() }));
        }
        Ok(payload)
    }

    fn send(
        &mut self,
        function: RpcFunction,
        payload: &[u8],
        data: [u32; 2],
        posted: bool,
    ) -> Result<EntryId, RpcError> {
        let start_ns = self.clock.now_ns();
        let seq_num = self.queues.next_command_seq();
        let sent = self.queues.send(&self.clock, function.raw(), payload);
        let (records, outcome) = match &sent {
            Ok(r) => (r.records, if posted { RpcOutcome::Posted } else { RpcOutcome::Pending }),
            Err(_) => (0, RpcOutcome::Failed),
        };
        let entry = self.history.push(RpcHistoryEntry {
            direction: Direction::Command,
            function: function.into(),
            seq_num,
            records,
            data,
            start_ns,
            end_ns: (posted || sent.is_err()).then(|| self.clock.now_ns()),
            outcome,
        });
        match sent {
            Ok(_) => Ok(entry),
            Err(error) => Err(self.failed(RpcError::new(RpcErrorKind::Transport { during: function.into(), error }))),
        }
    }

    /// Sends `rpc` without waiting for a reply (RM's `_issueRpcAsync`: `GSP_SET_SYSTEM_INFO`
    /// and `SET_REGISTRY` are queued before GSP-RM even runs). A reply that comes later goes to
    /// the event handler of whatever wait is running then.
    pub fn post<R: Rpc>(&mut self, rpc: &R) -> Result<(), RpcError> {
        let payload = Self::encode(rpc).map_err(|e| self.failed(e))?;
        self.send(R::FUNCTION, &payload, rpc.history_data(), true).map(|_| ())
    }

    /// Sends `rpc` and waits for its reply, giving other messages to the installed handler.
    pub fn call<R: Rpc>(&mut self, rpc: &R) -> Result<R::Reply, RpcError> {
        let mut events = core::mem::replace(&mut self.events, Box::new(LogEvents));
        let result = self.call_with(rpc, &mut *events);
        self.events = events;
        result
    }

    /// Sends `rpc` and waits for its reply, giving other messages to `events`.
    pub fn call_with<R: Rpc, H: EventHandler + ?Sized>(
        &mut self,
        rpc: &R,
        events: &mut H,
    ) -> Result<R::Reply, RpcError> {
        let payload = Self::encode(rpc).map_err(|e| self.failed(e))?;
        let entry = self.send(R::FUNCTION, &payload, rpc.history_data(), false)?;
        let awaited = Awaited::Reply { function: R::FUNCTION.raw(), reply_len: rpc.reply_len(), entry };
        let reply = self.wait(awaited, self.timeout_ms, events)?;
        let status = reply.rpc_result();
        if !status.is_ok() {
            return Err(self.failed(RpcError::new(RpcErrorKind::Failed { function: R::FUNCTION.into(), status })));
        }
        R::decode_reply(&reply.payload).map_err(|e| self.failed(e))
    }

    /// Waits (bounded) for GSP-RM to send `event` (e.g. `GSP_INIT_DONE`), giving other messages
    /// to `events`.
    pub fn wait_for_event<H: EventHandler + ?Sized>(
        &mut self,
        event: RpcEvent,
        timeout_ms: u64,
        events: &mut H,
    ) -> Result<GspMessage, RpcError> {
        self.wait(Awaited::Event(event), timeout_ms, events)
    }

    /// Hands every message waiting in the status queue to `events`, without waiting; returns
    /// how many there were (for an interrupt service routine or a poll loop).
    pub fn poll<H: EventHandler + ?Sized>(&mut self, events: &mut H) -> Result<usize, RpcError> {
        let mut handled = 0;
        loop {
            let received = self.queues.try_receive_message(&self.clock, self.timeout_ms, &|_| None);
            match received {
                Ok(Some(message)) => {
                    self.note_incoming(&message);
                    events.on_message(&message).map_err(|e| self.failed(e))?;
                    handled += 1;
                }
                Ok(None) => return Ok(handled),
                Err(error) => return Err(self.failed(RpcError::new(RpcErrorKind::Polling(error)))),
            }
        }
    }

    fn note_incoming(&mut self, message: &GspMessage) {
        let now = self.clock.now_ns();
        self.history.push(RpcHistoryEntry {
            direction: Direction::Incoming,
            function: message.name(),
            seq_num: message.seq_num,
            records: message.records,
            data: [0, 0],
            start_ns: now,
            end_ns: Some(now),
            outcome: RpcOutcome::Received(message.rpc_result()),
        });
    }

    /// The receive loop of `_kgspRpcRecvPoll`: drain messages until the awaited one arrives,
    /// serving the others, bounded by `timeout_ms`.
    fn wait<H: EventHandler + ?Sized>(
        &mut self,
        awaited: Awaited,
        timeout_ms: u64,
        events: &mut H,
    ) -> Result<GspMessage, RpcError> {
        let (target, during) = match awaited {
            Awaited::Reply { function, .. } => (function, RpcName(function)),
            Awaited::Event(e) => (e.raw(), e.into()),
        };
        let reply_len = match awaited {
            Awaited::Reply { reply_len, .. } => reply_len,
            Awaited::Event(_) => None,
        };
        let full_len = move |h: &RpcMessageHeader| {
            if h.function == target {
                reply_len
            } else {
                None
            }
        };
        let clock = &self.clock;
        let queues = &mut self.queues;
        let history = &mut self.history;
        let outcome = wait_for(clock, timeout_ms, "a message from GSP-RM", || loop {
            match queues.try_receive_message(clock, timeout_ms, &full_len) {
                Ok(Some(message)) if message.function() == target => return Some(Ok(message)),
                Ok(Some(message)) => {
                    let now = clock.now_ns();
                    history.push(RpcHistoryEntry {
                        direction: Direction::Incoming,
                        function: message.name(),
                        seq_num: message.seq_num,
                        records: message.records,
                        data: [0, 0],
                        start_ns: now,
                        end_ns: Some(now),
                        outcome: RpcOutcome::Received(message.rpc_result()),
                    });
                    if let Err(e) = events.on_message(&message) {
                        return Some(Err(e));
                    }
                }
                Ok(None) => return None,
                Err(error) => return Some(Err(RpcError::new(RpcErrorKind::Transport { during, error }))),
            }
        });
        let now = self.clock.now_ns();
        let entry = match awaited {
            Awaited::Reply { entry, .. } => Some(entry),
            Awaited::Event(_) => None,
        };
        match outcome {
            Ok(Ok(message)) => {
                match entry {
                    Some(entry) => self.history.complete(entry, now, RpcOutcome::Replied(message.rpc_result())),
                    None => self.note_incoming(&message),
                }
                Ok(message)
            }
            Ok(Err(e)) => {
                if let Some(entry) = entry {
                    self.history.complete(entry, now, RpcOutcome::Failed);
                }
                Err(self.failed(e))
            }
            Err(Timeout { after_ms, .. }) => {
                if let Some(entry) = entry {
                    self.history.complete(entry, now, RpcOutcome::TimedOut);
                }
                Err(self.failed(RpcError::new(RpcErrorKind::Timeout {
                    waiting_for: during,
                    reply: entry.is_some(),
                    after_ms,
                })))
            }
        }
    }
}

impl<D: GspDoorbell, C: Clock> RpcChannel for GspRpc<D, C> {
    fn call<R: Rpc>(&mut self, rpc: &R) -> Result<R::Reply, RpcError> {
        GspRpc::call(self, rpc)
    }
}

/// Reads a `T` from the start of `bytes`, or names the problem.
fn read_prefix<T: FromBytes + KnownLayout + Immutable>(bytes: &[u8]) -> Option<T> {
    T::read_from_prefix(bytes).ok().map(|(v, _)| v)
}

// ---------------------------------------------------------------------------------------------
// GSP_SET_SYSTEM_INFO.

/// `BUSINFO` (`g_chipset_nvoc.h`): PCI identity of a bridge or chipset. 10 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct BusInfo {
    /// `deviceID`.
    pub device_id: u16,
    /// `vendorID`.
    pub vendor_id: u16,
    /// `subdeviceID`.
    pub subdevice_id: u16,
    /// `subvendorID`.
    pub subvendor_id: u16,
    /// `revisionID`.
    pub revision_id: u8,
    /// Trailing padding of the C struct.
    pub _padding: u8,
}

/// `GSP_VF_INFO` (`gsp_static_config.h`): SR-IOV virtual functions. 40 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspVfInfo {
    /// `totalVFs`.
    pub total_vfs: u32,
    /// `firstVFOffset`.
    pub first_vf_offset: u32,
    /// `FirstVFBar0Address`.
    pub first_vf_bar0_address: u64,
    /// `FirstVFBar1Address`.
    pub first_vf_bar1_address: u64,
    /// `FirstVFBar2Address`.
    pub first_vf_bar2_address: u64,
    /// `b64bitBar0`.
    pub b_64bit_bar0: u8,
    /// `b64bitBar1`.
    pub b_64bit_bar1: u8,
    /// `b64bitBar2`.
    pub b_64bit_bar2: u8,
    /// Trailing padding.
    pub _padding: [u8; 5],
}

/// Bytes of `ACPI_METHOD_DATA` (`gpu/gpu_acpi_data.h`), which this driver sends zeroed (no
/// ACPI method results: every `bValid` false).
pub const ACPI_METHOD_DATA_SIZE: usize = 484;

/// `GspSystemInfo` (`gsp_static_config.h`): what the CPU tells GSP-RM about the system before
/// it boots; the parameters of `GSP_SET_SYSTEM_INFO` (RM writes it over
/// `rpc_gsp_set_system_info_v17_00.data`, `rpcGspSetSystemInfo_v17_00`). 672 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspSystemInfo {
    /// `gpuPhysAddr`: bus address of BAR0.
    pub gpu_phys_addr: u64,
    /// `gpuPhysFbAddr`: bus address of BAR1.
    pub gpu_phys_fb_addr: u64,
    /// `gpuPhysInstAddr`: bus address of BAR2 (BAR3 on 64-bit BAR layouts).
    pub gpu_phys_inst_addr: u64,
    /// `nvDomainBusDeviceFunc`: PCI domain, bus, device and function.
    pub nv_domain_bus_device_func: u64,
    /// `simAccessBufPhysAddr`: 0 on silicon.
    pub sim_access_buf_phys_addr: u64,
    /// `pcieAtomicsOpMask`.
    pub pcie_atomics_op_mask: u64,
    /// `consoleMemSize`: framebuffer reserved for the console.
    pub console_mem_size: u64,
    /// `maxUserVa`.
    pub max_user_va: u64,
    /// `pciConfigMirrorBase`: BAR0 offset of the PCI config space mirror.
    pub pci_config_mirror_base: u32,
    /// `pciConfigMirrorSize`.
    pub pci_config_mirror_size: u32,
    /// `oorArch`.
    pub oor_arch: u8,
    /// Padding before `clPdbProperties`.
    pub _padding0: [u8; 7],
    /// `clPdbProperties`: chipset properties (`clSyncWithGsp`).
    pub cl_pdb_properties: u64,
    /// `Chipset`: RM's chipset id.
    pub chipset: u32,
    /// `bGpuBehindBridge`.
    pub b_gpu_behind_bridge: u8,
    /// `bMnocAvailable`.
    pub b_mnoc_available: u8,
    /// `bUpstreamL0sUnsupported`.
    pub b_upstream_l0s_unsupported: u8,
    /// `bUpstreamL1Unsupported`.
    pub b_upstream_l1_unsupported: u8,
    /// `bUpstreamL1PorSupported`.
    pub b_upstream_l1_por_supported: u8,
    /// `bUpstreamL1PorMobileOnly`.
    pub b_upstream_l1_por_mobile_only: u8,
    /// `upstreamAddressValid`.
    pub upstream_address_valid: u8,
    /// Padding before `FHBBusInfo`.
    pub _padding1: u8,
    /// `FHBBusInfo`: the host bridge.
    pub fhb_bus_info: BusInfo,
    /// `chipsetIDInfo`.
    pub chipset_id_info: BusInfo,
    /// `acpiMethodData` (`ACPI_METHOD_DATA`), opaque here.
    pub acpi_method_data: [u8; ACPI_METHOD_DATA_SIZE],
    /// `hypervisorType`.
    pub hypervisor_type: u32,
    /// `virtualConfigBits`.
    pub virtual_config_bits: u16,
    /// `bIsPassthru`.
    pub b_is_passthru: u8,
    /// Padding before `sysTimerOffsetNs`.
    pub _padding2: [u8; 5],
    /// `sysTimerOffsetNs`.
    pub sys_timer_offset_ns: u64,
    /// `gspVFInfo`.
    pub gsp_vf_info: GspVfInfo,
    /// `bTdrEventSupported`.
    pub b_tdr_event_supported: u8,
    /// Trailing padding.
    pub _padding3: [u8; 7],
}

impl GspSystemInfo {
    /// All zero: no chipset data, no ACPI data, no SR-IOV; the caller fills in the BARs, the
    /// PCI location and the config mirror.
    pub fn zeroed() -> Self {
        Self::new_zeroed()
    }
}

/// `GSP_SET_SYSTEM_INFO`: the system information, queued before GSP-RM boots and not answered
/// (`rpcGspSetSystemInfo_v17_00` issues it with `_issueRpcAsync`; use [`GspRpc::post`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GspSetSystemInfo(pub GspSystemInfo);

impl Rpc for GspSetSystemInfo {
    const FUNCTION: RpcFunction = RpcFunction::GspSetSystemInfo;
    type Reply = ();
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
    fn decode_reply(_: &[u8]) -> Result<(), RpcError> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// SET_REGISTRY.

/// `REGISTRY_TABLE_ENTRY_TYPE_DWORD`.
pub const REGISTRY_TABLE_ENTRY_TYPE_DWORD: u8 = 1;
/// `REGISTRY_TABLE_ENTRY_TYPE_BINARY`.
pub const REGISTRY_TABLE_ENTRY_TYPE_BINARY: u8 = 2;
/// `REGISTRY_TABLE_ENTRY_TYPE_STRING`.
pub const REGISTRY_TABLE_ENTRY_TYPE_STRING: u8 = 3;

/// `PACKED_REGISTRY_ENTRY` (`g_os_nvoc.h`). 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PackedRegistryEntry {
    /// `nameOffset`: offset of the NUL-terminated name from the table start.
    pub name_offset: u32,
    /// `type`: `REGISTRY_TABLE_ENTRY_TYPE_*`.
    pub type_: u8,
    /// Padding before `data`.
    pub _padding: [u8; 3],
    /// `data`: the value of a DWORD; the offset of the bytes of a BINARY or STRING.
    pub data: u32,
    /// `length`: 4 for a DWORD; bytes of a BINARY or STRING.
    pub length: u32,
}

/// `PACKED_REGISTRY_TABLE` (`g_os_nvoc.h`) without its `entries[]`. 8 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PackedRegistryTable {
    /// `size`: bytes of the whole table, names and data included.
    pub size: u32,
    /// `numEntries`.
    pub num_entries: u32,
}

/// A registry value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryValue {
    /// `REGISTRY_TABLE_ENTRY_TYPE_DWORD`.
    Dword(u32),
    /// `REGISTRY_TABLE_ENTRY_TYPE_BINARY`.
    Binary(Vec<u8>),
    /// `REGISTRY_TABLE_ENTRY_TYPE_STRING`: the bytes as sent (with their terminating NUL).
    String(Vec<u8>),
}

/// Registry keys for GSP-RM, packed as `RmPackageRegistry` / `regCopyEntriesToPackedBuffer`
/// (`registry.c`) pack them: the table header, every entry, then each entry's NUL-terminated
/// name followed by its BINARY or STRING bytes, in entry order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistryTable {
    /// The entries, in order.
    pub entries: Vec<(String, RegistryValue)>,
}

impl RegistryTable {
    /// An empty table.
    pub const fn new() -> Self {
        RegistryTable { entries: Vec::new() }
    }

    /// Adds a DWORD key.
    pub fn dword(mut self, name: &str, value: u32) -> Self {
        self.entries.push((name.into(), RegistryValue::Dword(value)));
        self
    }

    /// Adds a STRING key (a terminating NUL is added).
    pub fn string(mut self, name: &str, value: &str) -> Self {
        let mut bytes = Vec::from(value.as_bytes());
        bytes.push(0);
        self.entries.push((name.into(), RegistryValue::String(bytes)));
        self
    }

    /// Adds a BINARY key.
    pub fn binary(mut self, name: &str, value: &[u8]) -> Self {
        self.entries.push((name.into(), RegistryValue::Binary(value.into())));
        self
    }

    /// The packed table.
    pub fn pack(&self) -> Vec<u8> {
        let header = size_of::<PackedRegistryTable>();
        let entries = size_of::<PackedRegistryEntry>() * self.entries.len();
        let mut data = Vec::new();
        let mut packed = Vec::new();
        for (name, value) in &self.entries {
            let name_offset = (header + entries + data.len()) as u32;
            data.extend_from_slice(name.as_bytes());
            data.push(0);
            let (type_, value_word, length) = match value {
                RegistryValue::Dword(v) => (REGISTRY_TABLE_ENTRY_TYPE_DWORD, *v, 4),
                RegistryValue::Binary(b) | RegistryValue::String(b) => {
                    let at = (header + entries + data.len()) as u32;
                    data.extend_from_slice(b);
                    let t = if matches!(value, RegistryValue::Binary(_)) {
                        REGISTRY_TABLE_ENTRY_TYPE_BINARY
                    } else {
                        REGISTRY_TABLE_ENTRY_TYPE_STRING
                    };
                    (t, at, b.len() as u32)
                }
            };
            packed.push(PackedRegistryEntry { name_offset, type_, _padding: [0; 3], data: value_word, length });
        }
        let mut out = Vec::with_capacity(header + entries + data.len());
        out.extend_from_slice(
            PackedRegistryTable {
                size: (header + entries + data.len()) as u32,
                num_entries: self.entries.len() as u32,
            }
            .as_bytes(),
        );
        for e in &packed {
            out.extend_from_slice(e.as_bytes());
        }
        out.extend_from_slice(&data);
        out
    }

    /// Reads a packed table back (what GSP-RM does with it; for the model), checking every
    /// offset and length against the bytes.
    pub fn unpack(bytes: &[u8]) -> Result<Self, RpcError> {
        let bad = |reason| RpcError::bad_reply(RpcFunction::SetRegistry, reason, bytes.len());
        let header: PackedRegistryTable = read_prefix(bytes).ok_or(bad("shorter than PACKED_REGISTRY_TABLE"))?;
        if header.size as usize != bytes.len() {
            return Err(bad("size does not match the table's length"));
        }
        let mut table = RegistryTable::new();
        for i in 0..header.num_entries as usize {
            let at = size_of::<PackedRegistryTable>() + i * size_of::<PackedRegistryEntry>();
            let e: PackedRegistryEntry =
                read_prefix(bytes.get(at..).unwrap_or(&[])).ok_or(bad("entry beyond the table"))?;
            let name_bytes = bytes.get(e.name_offset as usize..).ok_or(bad("name beyond the table"))?;
            let end = name_bytes.iter().position(|&b| b == 0).ok_or(bad("name without NUL"))?;
            let name = core::str::from_utf8(&name_bytes[..end]).map_err(|_| bad("name is not UTF-8"))?;
            let blob = |offset: u32, len: u32| {
                let start = offset as usize;
                bytes.get(start..start.checked_add(len as usize)?).map(Vec::from)
            };
            let value = match e.type_ {
                REGISTRY_TABLE_ENTRY_TYPE_DWORD => RegistryValue::Dword(e.data),
                REGISTRY_TABLE_ENTRY_TYPE_BINARY => {
                    RegistryValue::Binary(blob(e.data, e.length).ok_or(bad("value beyond the table"))?)
                }
                REGISTRY_TABLE_ENTRY_TYPE_STRING => {
                    RegistryValue::String(blob(e.data, e.length).ok_or(bad("value beyond the table"))?)
                }
                _ => return Err(bad("unknown entry type")),
            };
            table.entries.push((name.into(), value));
        }
        Ok(table)
    }
}

/// `SET_REGISTRY`: registry keys, queued before GSP-RM boots and not answered
/// (`rpcSetRegistry_v17_00`, async; use [`GspRpc::post`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetRegistry(pub RegistryTable);

impl Rpc for SetRegistry {
    const FUNCTION: RpcFunction = RpcFunction::SetRegistry;
    type Reply = ();
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.pack());
    }
    fn decode_reply(_: &[u8]) -> Result<(), RpcError> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// GET_GSP_STATIC_INFO.

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
fn c_string(bytes: &[u8]) -> String {
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

// ---------------------------------------------------------------------------------------------
// GSP_RM_ALLOC, GSP_RM_CONTROL, FREE.

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
fn decode_rm_call<T: FromBytes + KnownLayout + Immutable>(
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

fn decode_params(function: RpcFunction, payload: &[u8], fixed: usize, size: u32) -> Result<Vec<u8>, RpcError> {
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

// ---------------------------------------------------------------------------------------------
// UNLOADING_GUEST_DRIVER.

/// `rpc_unloading_guest_driver_v1F_07`. 8 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcUnloadingGuestDriverV1F07 {
    /// `bInPMTransition`: suspending rather than unloading.
    pub b_in_pm_transition: u8,
    /// `bGc6Entering`.
    pub b_gc6_entering: u8,
    /// Padding before `newLevel`.
    pub _padding: [u8; 2],
    /// `newLevel`: the power level being entered.
    pub new_level: u32,
}

/// `UNLOADING_GUEST_DRIVER`: GSP-RM is about to be shut down or suspended
/// (`rpcUnloadingGuestDriver_v1F_07`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnloadingGuestDriver {
    /// Suspending (power-management transition) rather than unloading.
    pub in_pm_transition: bool,
    /// Entering GC6.
    pub gc6_entering: bool,
    /// The power level being entered.
    pub new_level: u32,
}

impl Rpc for UnloadingGuestDriver {
    const FUNCTION: RpcFunction = RpcFunction::UnloadingGuestDriver;
    type Reply = ();
    fn encode(&self, out: &mut Vec<u8>) {
        let params = RpcUnloadingGuestDriverV1F07 {
            b_in_pm_transition: self.in_pm_transition as u8,
            b_gc6_entering: self.gc6_entering as u8,
            _padding: [0; 2],
            new_level: self.new_level,
        };
        out.extend_from_slice(params.as_bytes());
    }
    fn decode_reply(_: &[u8]) -> Result<(), RpcError> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Events.

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
            return Ok(if function > super::rpc::NV_VGPU_MSG_EVENT_FIRST_EVENT {
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

// ---------------------------------------------------------------------------------------------
// The CPU sequencer.

/// `GSP_SEQ_BUF_OPCODE` (`rmgspseq.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum SeqOpcode {
    /// `GSP_SEQ_BUF_OPCODE_REG_WRITE`.
    RegWrite = 0,
    /// `GSP_SEQ_BUF_OPCODE_REG_MODIFY`.
    RegModify = 1,
    /// `GSP_SEQ_BUF_OPCODE_REG_POLL`.
    RegPoll = 2,
    /// `GSP_SEQ_BUF_OPCODE_DELAY_US`.
    DelayUs = 3,
    /// `GSP_SEQ_BUF_OPCODE_REG_STORE`.
    RegStore = 4,
    /// `GSP_SEQ_BUF_OPCODE_CORE_RESET`.
    CoreReset = 5,
    /// `GSP_SEQ_BUF_OPCODE_CORE_START`.
    CoreStart = 6,
    /// `GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT`.
    CoreWaitForHalt = 7,
    /// `GSP_SEQ_BUF_OPCODE_CORE_RESUME`.
    CoreResume = 8,
}

impl SeqOpcode {
    /// Every opcode.
    pub const ALL: [SeqOpcode; 9] = [
        SeqOpcode::RegWrite,
        SeqOpcode::RegModify,
        SeqOpcode::RegPoll,
        SeqOpcode::DelayUs,
        SeqOpcode::RegStore,
        SeqOpcode::CoreReset,
        SeqOpcode::CoreStart,
        SeqOpcode::CoreWaitForHalt,
        SeqOpcode::CoreResume,
    ];

    /// Decodes an opcode word.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        if (raw as usize) < Self::ALL.len() {
            Some(Self::ALL[raw as usize])
        } else {
            None
        }
    }

    /// NVIDIA's name.
    pub const fn nvidia_name(self) -> &'static str {
        match self {
            SeqOpcode::RegWrite => "GSP_SEQ_BUF_OPCODE_REG_WRITE",
            SeqOpcode::RegModify => "GSP_SEQ_BUF_OPCODE_REG_MODIFY",
            SeqOpcode::RegPoll => "GSP_SEQ_BUF_OPCODE_REG_POLL",
            SeqOpcode::DelayUs => "GSP_SEQ_BUF_OPCODE_DELAY_US",
            SeqOpcode::RegStore => "GSP_SEQ_BUF_OPCODE_REG_STORE",
            SeqOpcode::CoreReset => "GSP_SEQ_BUF_OPCODE_CORE_RESET",
            SeqOpcode::CoreStart => "GSP_SEQ_BUF_OPCODE_CORE_START",
            SeqOpcode::CoreWaitForHalt => "GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT",
            SeqOpcode::CoreResume => "GSP_SEQ_BUF_OPCODE_CORE_RESUME",
        }
    }

    /// Argument words after the opcode (`GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS`).
    pub const fn payload_dwords(self) -> usize {
        match self {
            SeqOpcode::RegWrite => size_of::<SeqRegWrite>() / 4,
            SeqOpcode::RegModify => size_of::<SeqRegModify>() / 4,
            SeqOpcode::RegPoll => size_of::<SeqRegPoll>() / 4,
            SeqOpcode::DelayUs => size_of::<SeqDelayUs>() / 4,
            SeqOpcode::RegStore => size_of::<SeqRegStore>() / 4,
            SeqOpcode::CoreReset | SeqOpcode::CoreStart | SeqOpcode::CoreWaitForHalt | SeqOpcode::CoreResume => 0,
        }
    }
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_WRITE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegWrite {
    /// `addr`: BAR0 offset.
    pub addr: u32,
    /// `val`.
    pub val: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_MODIFY`: `reg = (reg & !mask) | val`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegModify {
    /// `addr`.
    pub addr: u32,
    /// `mask`.
    pub mask: u32,
    /// `val`, already shifted into the mask.
    pub val: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_POLL`: wait until `reg & mask == val`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegPoll {
    /// `addr`.
    pub addr: u32,
    /// `mask`.
    pub mask: u32,
    /// `val`.
    pub val: u32,
    /// `timeout`: the header says milliseconds, but RM passes it to `gpuSetTimeout`, which
    /// takes microseconds; this driver does as RM does. 0 (`GPU_TIMEOUT_DEFAULT`) means RM's
    /// default timeout.
    pub timeout: u32,
    /// `error`: a `GSP_SEQUENCER_BUFFER_ERR` code naming the GSP-RM code that asked.
    pub error: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_DELAY_US`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqDelayUs {
    /// `val`: microseconds.
    pub val: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_STORE`: save a register in `regSaveArea[index]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegStore {
    /// `addr`.
    pub addr: u32,
    /// `index`: below `GSP_SEQ_BUF_REG_SAVE_SIZE`.
    pub index: u32,
}

/// One sequencer command, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqCommand {
    /// `REG_WRITE`.
    RegWrite(SeqRegWrite),
    /// `REG_MODIFY`.
    RegModify(SeqRegModify),
    /// `REG_POLL`.
    RegPoll(SeqRegPoll),
    /// `DELAY_US`.
    DelayUs(SeqDelayUs),
    /// `REG_STORE` (its index checked at decode time).
    RegStore(SeqRegStore),
    /// `CORE_RESET`: reset the GSP falcon (`kflcnReset`, `kflcnDisableCtxReq`).
    CoreReset,
    /// `CORE_START`: start its CPU (`kflcnStartCpu`).
    CoreStart,
    /// `CORE_WAIT_FOR_HALT`: wait for it to halt (`kflcnWaitForHalt`).
    CoreWaitForHalt,
    /// `CORE_RESUME`: resume GSP-RM (Turing..Ada: reset, boot arguments, SEC2 reload;
    /// `kgspExecuteSequencerCommand_TU102`).
    CoreResume,
}

impl SeqCommand {
    /// The opcode.
    pub const fn opcode(&self) -> SeqOpcode {
        match self {
            SeqCommand::RegWrite(_) => SeqOpcode::RegWrite,
            SeqCommand::RegModify(_) => SeqOpcode::RegModify,
            SeqCommand::RegPoll(_) => SeqOpcode::RegPoll,
            SeqCommand::DelayUs(_) => SeqOpcode::DelayUs,
            SeqCommand::RegStore(_) => SeqOpcode::RegStore,
            SeqCommand::CoreReset => SeqOpcode::CoreReset,
            SeqCommand::CoreStart => SeqOpcode::CoreStart,
            SeqCommand::CoreWaitForHalt => SeqOpcode::CoreWaitForHalt,
            SeqCommand::CoreResume => SeqOpcode::CoreResume,
        }
    }

    /// Appends the command's words (opcode, then arguments) to `out`: how GSP-RM's
    /// `gspAppendToSequencerBuffer` writes it (for the model and tests).
    pub fn encode(&self, out: &mut Vec<u32>) {
        out.push(self.opcode() as u32);
        let args: &[u8] = match self {
            SeqCommand::RegWrite(p) => p.as_bytes(),
            SeqCommand::RegModify(p) => p.as_bytes(),
            SeqCommand::RegPoll(p) => p.as_bytes(),
            SeqCommand::DelayUs(p) => p.as_bytes(),
            SeqCommand::RegStore(p) => p.as_bytes(),
            _ => &[],
        };
        out.extend(args.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
    }
}

/// Why a sequencer buffer was refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequencerError {
    /// Shorter than `rpc_run_cpu_sequencer_v17_00`.
    Truncated { len: usize },
    /// `bufferSizeDWord` is 0 (RM: `NV_ERR_INVALID_STATE`).
    EmptyBuffer,
    /// `cmdIndex` not below `bufferSizeDWord` (RM: `NV_ERR_INVALID_DATA`), or beyond the words
    /// the message carries.
    BadCommandIndex { cmd_index: u32, buffer_size_dword: u32, words_present: usize },
    /// An opcode RM does not know (the arch HAL would answer `NV_ERR_INVALID_ARGUMENT`).
    UnknownOpcode { opcode: u32, at: usize },
    /// A command's arguments run past `cmdIndex` (RM: `NV_ERR_INVALID_DATA`).
    ArgumentsPastEnd { opcode: SeqOpcode, at: usize },
    /// `REG_STORE` to an index at or beyond `GSP_SEQ_BUF_REG_SAVE_SIZE`.
    SaveIndex { index: u32, at: usize },
    /// `REG_POLL` did not see the value in time.
    PollTimeout { addr: u32, mask: u32, val: u32, last: u32, error_code: u32, after_ms: u64 },
    /// A core operation failed.
    Core { opcode: SeqOpcode, error: CoreOpError },
}

impl fmt::Display for SequencerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SequencerError::Truncated { len } => {
                write!(f, "{len} bytes is shorter than rpc_run_cpu_sequencer_v17_00")
            }
            SequencerError::EmptyBuffer => f.write_str("bufferSizeDWord is 0"),
            SequencerError::BadCommandIndex { cmd_index, buffer_size_dword, words_present } => write!(
                f,
                "cmdIndex {cmd_index} with bufferSizeDWord {buffer_size_dword} and {words_present} command words present"
            ),
            SequencerError::UnknownOpcode { opcode, at } => {
                write!(f, "unknown opcode {opcode} at word {at}")
            }
            SequencerError::ArgumentsPastEnd { opcode, at } => {
                write!(f, "{} at word {at}: arguments run past cmdIndex", opcode.nvidia_name())
            }
            SequencerError::SaveIndex { index, at } => write!(
                f,
                "GSP_SEQ_BUF_OPCODE_REG_STORE at word {at}: index {index} is not below GSP_SEQ_BUF_REG_SAVE_SIZE"
            ),
            SequencerError::PollTimeout { addr, mask, val, last, error_code, after_ms } => write!(
                f,
                "timeout waiting for register {addr:#x} & {mask:#x} == {val:#x} after {after_ms} ms (last {last:#x}, GSP error code {error_code})"
            ),
            SequencerError::Core { opcode, error } => write!(f, "{}: {error}", opcode.nvidia_name()),
        }
    }
}

/// Why a core operation of the sequencer failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreOpError {
    /// A bounded wait ran out.
    Timeout(Timeout),
    /// The core did not do what was asked.
    Failed(&'static str),
    /// This core cannot do the operation (e.g. `CORE_RESUME` where no resume path exists).
    Unsupported,
}

impl fmt::Display for CoreOpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreOpError::Timeout(t) => t.fmt(f),
            CoreOpError::Failed(why) => f.write_str(why),
            CoreOpError::Unsupported => f.write_str("not supported by this core"),
        }
    }
}

/// The GSP core operations a sequencer may ask for; the boot implements them over its falcon.
pub trait SequencerCore {
    /// `CORE_RESET`: reset the GSP falcon and disable context requests.
    fn reset(&mut self) -> Result<(), CoreOpError>;
    /// `CORE_START`: start its CPU.
    fn start(&mut self) -> Result<(), CoreOpError>;
    /// `CORE_WAIT_FOR_HALT`: wait (bounded) until it halts.
    fn wait_for_halt(&mut self) -> Result<(), CoreOpError>;
    /// `CORE_RESUME`: bring GSP-RM back (Turing..Ada: secure reset, boot arguments, SEC2
    /// reload, check that the RISC-V core runs).
    fn resume(&mut self) -> Result<(), CoreOpError>;
}

/// A `GSP_RUN_CPU_SEQUENCER` message, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequencerBuffer {
    /// `bufferSizeDWord`.
    pub buffer_size_dword: u32,
    /// `regSaveArea`: as sent, then as `REG_STORE`s left it after [`run_sequencer`].
    pub reg_save_area: [u32; GSP_SEQ_BUF_REG_SAVE_SIZE],
    /// The commands, in order.
    pub commands: Vec<SeqCommand>,
}

impl SequencerBuffer {
    /// Decodes the parameters of `GSP_RUN_CPU_SEQUENCER`, checking what
    /// `kgspExecuteSequencerBuffer` checks before it executes anything, and more: the command
    /// words must be in the message, every opcode known, every `REG_STORE` index in range.
    pub fn decode(payload: &[u8]) -> Result<Self, SequencerError> {
        let header: RpcRunCpuSequencerV17_00 =
            read_prefix(payload).ok_or(SequencerError::Truncated { len: payload.len() })?;
        if header.buffer_size_dword == 0 {
            return Err(SequencerError::EmptyBuffer);
        }
        let words: Vec<u32> = payload[size_of::<RpcRunCpuSequencerV17_00>()..]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let end = header.cmd_index as usize;
        if header.cmd_index >= header.buffer_size_dword || end > words.len() {
            return Err(SequencerError::BadCommandIndex {
                cmd_index: header.cmd_index,
                buffer_size_dword: header.buffer_size_dword,
                words_present: words.len(),
            });
        }
        let words = &words[..end];
        let mut commands = Vec::new();
        let mut at = 0;
        while at < end {
            let raw = words[at];
            let opcode = SeqOpcode::from_raw(raw).ok_or(SequencerError::UnknownOpcode { opcode: raw, at })?;
            let args_at = at + 1;
            let n = opcode.payload_dwords();
            let args = words.get(args_at..args_at + n).ok_or(SequencerError::ArgumentsPastEnd { opcode, at })?;
            let bytes: Vec<u8> = args.iter().flat_map(|w| w.to_le_bytes()).collect();
            let command = match opcode {
                SeqOpcode::RegWrite => read_prefix(&bytes).map(SeqCommand::RegWrite),
                SeqOpcode::RegModify => read_prefix(&bytes).map(SeqCommand::RegModify),
                SeqOpcode::RegPoll => read_prefix(&bytes).map(SeqCommand::RegPoll),
                SeqOpcode::DelayUs => read_prefix(&bytes).map(SeqCommand::DelayUs),
                SeqOpcode::RegStore => read_prefix::<SeqRegStore>(&bytes).map(SeqCommand::RegStore),
                SeqOpcode::CoreReset => Some(SeqCommand::CoreReset),
                SeqOpcode::CoreStart => Some(SeqCommand::CoreStart),
                SeqOpcode::CoreWaitForHalt => Some(SeqCommand::CoreWaitForHalt),
                SeqOpcode::CoreResume => Some(SeqCommand::CoreResume),
            }
            .ok_or(SequencerError::ArgumentsPastEnd { opcode, at })?;
            if let SeqCommand::RegStore(s) = command {
                if s.index as usize >= GSP_SEQ_BUF_REG_SAVE_SIZE {
                    return Err(SequencerError::SaveIndex { index: s.index, at });
                }
            }
            commands.push(command);
            at = args_at + n;
        }
        Ok(SequencerBuffer {
            buffer_size_dword: header.buffer_size_dword,
            reg_save_area: header.reg_save_area,
            commands,
        })
    }

    /// The parameters of a `GSP_RUN_CPU_SEQUENCER` carrying `commands` (what GSP-RM sends; for
    /// the model and tests).
    pub fn encode(buffer_size_dword: u32, commands: &[SeqCommand]) -> Vec<u8> {
        let mut words = Vec::new();
        for c in commands {
            c.encode(&mut words);
        }
        let header = RpcRunCpuSequencerV17_00 {
            buffer_size_dword,
            cmd_index: words.len() as u32,
            reg_save_area: [0; GSP_SEQ_BUF_REG_SAVE_SIZE],
        };
        let mut out = Vec::from(header.as_bytes());
        out.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        out
    }
}

/// Executes a decoded sequencer buffer, in order, as `kgspExecuteSequencerBuffer` does:
/// register commands over `io`, waits bounded by `clock`, core commands through `core`.
/// `REG_STORE`s land in `buffer.reg_save_area`.
pub fn run_sequencer<R, C, K>(
    buffer: &mut SequencerBuffer,
    io: &R,
    clock: &C,
    core: &mut K,
) -> Result<(), SequencerError>
where
    R: RegisterIo + ?Sized,
    C: Clock + ?Sized,
    K: SequencerCore + ?Sized,
{
    for command in buffer.commands.iter() {
        match *command {
            SeqCommand::RegWrite(w) => io.write32(w.addr, w.val),
            SeqCommand::RegModify(m) => {
                let value = (io.read32(m.addr) & !m.mask) | m.val;
                io.write32(m.addr, value);
            }
            SeqCommand::RegPoll(p) => {
                let timeout_ms = if p.timeout == 0 { RM_DEFAULT_TIMEOUT_MS } else { (p.timeout as u64).div_ceil(1000) };
                let mut last = 0;
                wait_for(clock, timeout_ms, "a register value a GSP sequencer REG_POLL asked for", || {
                    last = io.read32(p.addr);
                    (last & p.mask == p.val).then_some(())
                })
                .map_err(|t| SequencerError::PollTimeout {
                    addr: p.addr,
                    mask: p.mask,
                    val: p.val,
                    last,
                    error_code: p.error,
                    after_ms: t.after_ms,
                })?;
            }
            SeqCommand::DelayUs(d) => {
                let until = clock.now_ns().saturating_add(d.val as u64 * 1000);
                // Bounded one millisecond beyond the delay itself: it ends by the clock.
                let _ = wait_for(clock, (d.val as u64).div_ceil(1000) + 1, "a GSP sequencer DELAY_US", || {
                    (clock.now_ns() >= until).then_some(())
                });
            }
            SeqCommand::RegStore(s) => {
                let value = io.read32(s.addr);
                if let Some(slot) = buffer.reg_save_area.get_mut(s.index as usize) {
                    *slot = value;
                }
            }
            SeqCommand::CoreReset => {
                core.reset().map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreReset, error })?
            }
            SeqCommand::CoreStart => {
                core.start().map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreStart, error })?
            }
            SeqCommand::CoreWaitForHalt => core
                .wait_for_halt()
                .map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreWaitForHalt, error })?,
            SeqCommand::CoreResume => {
                core.resume().map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreResume, error })?
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Layout tables for tests/tests/gsp_rpc_layout.rs.

const fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
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
        RPC_HISTORY_DEPTH = super::history::RPC_HISTORY_DEPTH / 2,
    ],
    headers::GPU_TIMEOUT_H => [
        GPU_TIMEOUT_DEFAULT = 0,
    ],
    headers::MESSAGE_QUEUE_H => [
        RPC_TASK_RM_QUEUE_IDX = super::queue::RPC_TASK_RM_QUEUE_IDX,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gsp::msgq::ElementError;
    use crate::gsp::queue::fake::*;
    use crate::gsp::queue::{GspMessageQueues, TransportError};
    use alloc::rc::Rc;
    use alloc::string::ToString;
    use alloc::vec;
    use core::cell::{Cell, RefCell};

    type Client = GspRpc<FakeDoorbell, FakeClock>;

    fn client(responder: Responder) -> (Client, Rc<RefCell<FakeGsp>>, TestMemory) {
        let Setup { gsp, queues, clock, mem } = setup(responder, true);
        (GspRpc::new(queues, clock), gsp, mem)
    }

    /// Answers GSP_RM_ALLOC and GSP_RM_CONTROL as RM would on success: the same parameters
    /// back, status NV_OK, the control parameters with every byte incremented.
    fn rm_like() -> Responder {
        Box::new(|m: &FakeMessage| {
            let mut payload = m.payload.clone();
            if m.function == RpcFunction::GspRmControl.raw() {
                for b in &mut payload[size_of::<RpcGspRmControlV03_00>()..] {
                    *b = b.wrapping_add(1);
                }
            }
            vec![Outgoing::reply(m.function, payload)]
        })
    }

    fn alloc(class: u32, params: &[u8]) -> GspRmAlloc<'_> {
        GspRmAlloc { h_client: 0xc1d0_0000, h_parent: 0xc1d0_0000, h_object: 0xcaf0_0001, h_class: class, params }
    }

    #[test]
    fn call_returns_the_typed_reply() {
        let (mut rpc, gsp, _mem) = client(rm_like());
        let reply = rpc.call(&alloc(0x80, &[7; 56])).unwrap();
        assert_eq!(reply, RmCallReply { status: NvStatus::NV_OK, params: vec![7; 56] });
        let mut params = [1u8, 2, 3, 4];
        let call = GspRmControl { h_client: 1, h_object: 2, cmd: 0x2080_0101, flags: 0, params: &params };
        let reply = rpc.call(&call).unwrap();
        assert_eq!(reply.params, vec![2, 3, 4, 5]);
        params.copy_from_slice(&reply.params);

        let sent = &gsp.borrow().received;
        assert_eq!(sent.len(), 2);
        let fixed = RpcGspRmAllocV03_00::read_from_prefix(&sent[0].payload).unwrap().0;
        assert_eq!(
            fixed,
            RpcGspRmAllocV03_00 {
                h_client: 0xc1d0_0000,
                h_parent: 0xc1d0_0000,
                h_object: 0xcaf0_0001,
                h_class: 0x80,
                status: 0,
                params_size: 56,
                flags: 0,
                reserved: [0; 4]
            }
        );
        assert_eq!(sent[0].payload.len(), 32 + 56);
        let entries: Vec<_> = rpc.history().entries().copied().collect();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].function, RpcFunction::GspRmAlloc.into());
        assert_eq!(entries[0].data, [0x80, 0xcaf0_0001]);
        assert_eq!(entries[0].outcome, RpcOutcome::Replied(NvStatus::NV_OK));
        assert_eq!(entries[1].data, [0x2080_0101, 2]);
        assert_eq!(entries[1].seq_num, 1);
    }

    #[test]
    fn events_are_served_while_waiting() {
        let seq = SequencerBuffer::encode(64, &[SeqCommand::RegWrite(SeqRegWrite { addr: 0x100, val: 1 })]);
        let mut log = RpcOsErrorLogV17_00::new_zeroed();
        log.except_type = 31;
        log.err_string[..5].copy_from_slice(b"fault");
        let log_bytes = log.as_bytes().to_vec();
        let (mut rpc, _gsp, _mem) = client(Box::new(move |m: &FakeMessage| {
            vec![
                Outgoing::reply(RpcEvent::OsErrorLog.raw(), log_bytes.clone()),
                Outgoing::reply(RpcEvent::GspRunCpuSequencer.raw(), seq.clone()),
                Outgoing::reply(m.function, m.payload.clone()),
            ]
        }));
        let mut seen = Vec::new();
        let mut handler = |m: &GspMessage| -> Result<(), RpcError> {
            match GspEvent::decode(m)? {
                GspEvent::OsErrorLog(e) => seen.push(alloc::format!("xid {} {}", e.except_type(), e.text())),
                GspEvent::RunCpuSequencer(s) => seen.push(alloc::format!("seq {:?}", s.commands)),
                other => seen.push(alloc::format!("{other:?}")),
            }
            Ok(())
        };
        rpc.call_with(&Free { h_client: 1, h_object: 2 }, &mut handler).unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0], "xid 31 fault");
        assert!(seen[1].starts_with("seq [RegWrite(SeqRegWrite { addr: 256, val: 1 })]"), "{}", seen[1]);
        let text = rpc.snapshot().to_string();
        assert!(text.contains("<- NV_VGPU_MSG_EVENT_OS_ERROR_LOG seq 0"), "{text}");
        assert!(text.contains("<- NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER seq 1"), "{text}");
        assert!(text.contains("-> NV_VGPU_MSG_FUNCTION_FREE seq 0"), "{text}");
    }

    #[test]
    fn a_handler_error_ends_the_wait() {
        let (mut rpc, _gsp, _mem) = client(Box::new(|m: &FakeMessage| {
            vec![
                Outgoing::reply(RpcEvent::GspRunCpuSequencer.raw(), vec![0; 8]),
                Outgoing::reply(m.function, m.payload.clone()),
            ]
        }));
        let err = rpc
            .call_with(&Free { h_client: 1, h_object: 2 }, &mut |m: &GspMessage| GspEvent::decode(m).map(|_| ()))
            .unwrap_err();
        assert_eq!(err.kind, RpcErrorKind::Sequencer(SequencerError::Truncated { len: 8 }));
        assert!(err.to_string().contains("last RPCs"), "{err}");
    }

    #[test]
    fn a_missing_reply_times_out_naming_the_rpc_with_history() {
        let (mut rpc, _gsp, _mem) = client(Box::new(|m: &FakeMessage| {
            if m.function == RpcFunction::GspRmControl.raw() {
                Vec::new()
            } else {
                vec![Outgoing::reply(m.function, m.payload.clone())]
            }
        }));
        rpc.call(&alloc(0x80, &[0; 56])).unwrap();
        let start = rpc.clock().now_ns();
        let err = rpc
            .call(&GspRmControl { h_client: 1, h_object: 2, cmd: 0x2080_1320, flags: 0, params: &[0; 16] })
            .unwrap_err();
        assert!(matches!(err.kind, RpcErrorKind::Timeout { reply: true, after_ms: RPC_REPLY_TIMEOUT_MS, .. }));
        assert!(rpc.clock().now_ns() - start >= RPC_REPLY_TIMEOUT_MS * 1_000_000);
        let text = err.to_string();
        assert!(
            text.starts_with("timeout waiting for the reply to NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL after 6000 ms"),
            "{text}"
        );
        assert!(text.contains("-> NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC seq 0 (1 record) data 0x80 0xcaf00001"), "{text}");
        assert!(text.contains("replied NV_OK"), "{text}");
        assert!(text.contains("-> NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL seq 1 (1 record) data 0x20801320 0x2"), "{text}");
        assert!(text.contains("timed out"), "{text}");
        let history = err.history.as_ref().unwrap();
        assert_eq!(history.last().unwrap().outcome, RpcOutcome::TimedOut);
    }

    #[test]
    fn a_failing_rpc_result_is_a_named_status() {
        let (mut rpc, _gsp, _mem) = client(Box::new(|m: &FakeMessage| {
            vec![Outgoing { function: m.function, rpc_result: 0x22, payload: m.payload.clone() }]
        }));
        let err = rpc.call(&alloc(0x1234, &[])).unwrap_err();
        assert_eq!(err.status(), Some(NvStatus::NV_ERR_INVALID_CLASS));
        assert!(
            err.to_string()
                .starts_with("GSP-RM answered NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC with NV_ERR_INVALID_CLASS (0x00000022"),
            "{err}"
        );
    }

    #[test]
    fn errors_name_the_gpu_and_carry_the_history_on_one_line() {
        let (mut rpc, _gsp, _mem) = client(Box::new(|m: &FakeMessage| {
            vec![Outgoing { function: m.function, rpc_result: 0x22, payload: m.payload.clone() }]
        }));
        rpc.set_gpu(Chipset::GA102);
        let err = rpc.call(&alloc(0x1234, &[])).unwrap_err();
        assert_eq!(err.gpu, Some(Chipset::GA102));
        assert_eq!(
            err.history.as_ref().unwrap().last().unwrap().outcome,
            RpcOutcome::Replied(NvStatus::NV_ERR_INVALID_CLASS)
        );
        let text = err.to_string();
        assert!(
            text.starts_with(
                "GA102 GSP RPC: GSP-RM answered NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC with NV_ERR_INVALID_CLASS"
            ),
            "{text}"
        );
        assert!(text.contains("; last RPCs (oldest first): -> NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC seq 0"), "{text}");
        assert!(!text.contains('\n'), "{text}");
    }

    #[test]
    fn posted_rpcs_and_their_late_replies() {
        let (mut rpc, gsp, _mem) = client(Box::new(|m: &FakeMessage| {
            let mut out = vec![Outgoing::reply(m.function, Vec::new())];
            if m.function == RpcFunction::SetRegistry.raw() {
                out.push(Outgoing::reply(RpcEvent::GspInitDone.raw(), vec![0; 4]));
            }
            out
        }));
        gsp.borrow_mut().booted = false;
        let mut info = GspSystemInfo::zeroed();
        info.gpu_phys_addr = 0xfb00_0000;
        rpc.post(&GspSetSystemInfo(info)).unwrap();
        rpc.post(&SetRegistry(RegistryTable::new().dword("RMForcePcieConfigSave", 1))).unwrap();
        gsp.borrow_mut().boot();
        let mut late = Vec::new();
        let done = rpc
            .wait_for_event(RpcEvent::GspInitDone, 100, &mut |m: &GspMessage| {
                late.push(GspEvent::decode(m).map(|e| alloc::format!("{e:?}")));
                Ok(())
            })
            .unwrap();
        assert_eq!(done.event(), Some(RpcEvent::GspInitDone));
        assert_eq!(late.len(), 2);
        assert_eq!(late[0].as_deref(), Ok("Reply(RpcName(72))"));
        let received = &gsp.borrow().received;
        assert_eq!(received[0].payload.len(), size_of::<GspSystemInfo>());
        assert_eq!(&received[0].payload[..8], &0xfb00_0000u64.to_le_bytes());
        let table = RegistryTable::unpack(&received[1].payload).unwrap();
        assert_eq!(table.entries, vec![("RMForcePcieConfigSave".into(), RegistryValue::Dword(1))]);
        let outcomes: Vec<_> = rpc.history().entries().map(|e| e.outcome).collect();
        assert_eq!(outcomes[0], RpcOutcome::Posted);
        assert_eq!(outcomes[1], RpcOutcome::Posted);
    }

    #[test]
    fn wait_for_event_times_out_naming_the_event() {
        let (mut rpc, _gsp, _mem) = client(Box::new(|_: &FakeMessage| Vec::new()));
        let err = rpc.wait_for_event(RpcEvent::GspInitDone, 50, &mut LogEvents).unwrap_err();
        assert!(
            err.to_string().starts_with("timeout waiting for NV_VGPU_MSG_EVENT_GSP_INIT_DONE after 50 ms; last RPCs"),
            "{err}"
        );
    }

    #[test]
    fn large_controls_use_continuation_records_both_ways() {
        let (mut rpc, gsp, _mem) = client(rm_like());
        let params: Vec<u8> = (0..RECORD_PAYLOAD_MAX + 5000).map(|i| i as u8).collect();
        let call = GspRmControl { h_client: 1, h_object: 2, cmd: 3, flags: 0, params: &params };
        let reply = rpc.call(&call).unwrap();
        let expected: Vec<u8> = params.iter().map(|b| b.wrapping_add(1)).collect();
        assert_eq!(reply.params, expected);
        assert_eq!(gsp.borrow().received[0].records, 2);
        let entry = *rpc.history().entries().next().unwrap();
        assert_eq!(entry.records, 2);
        assert_eq!(rpc.queues().next_status_seq(), 2, "two status records for one reply");
    }

    #[test]
    fn a_corrupted_reply_is_a_typed_error_with_history() {
        let (mut rpc, gsp, _mem) = client(rm_like());
        gsp.borrow_mut().corrupt_next = true;
        let err = rpc.call(&alloc(0x80, &[0; 56])).unwrap_err();
        match &err.kind {
            RpcErrorKind::Transport { during, error: TransportError::Element(ElementError::BadChecksum { .. }) } => {
                assert_eq!(*during, RpcFunction::GspRmAlloc.into())
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(err.history.as_ref().unwrap().last().unwrap().outcome, RpcOutcome::Failed);
    }

    #[test]
    fn poll_hands_over_waiting_messages() {
        let (mut rpc, gsp, _mem) = client(Box::new(|_: &FakeMessage| Vec::new()));
        for _ in 0..3 {
            gsp.borrow_mut().queue_outgoing(Outgoing::reply(RpcEvent::MmuFaultQueued.raw(), Vec::new()));
        }
        gsp.borrow_mut().flush();
        let count = Cell::new(0);
        assert_eq!(
            rpc.poll(&mut |_: &GspMessage| {
                count.set(count.get() + 1);
                Ok(())
            }),
            Ok(3)
        );
        assert_eq!(count.get(), 3);
        assert_eq!(rpc.poll(&mut LogEvents), Ok(0));
    }

    #[test]
    fn encodings_are_byte_exact() {
        let mut out = Vec::new();
        Free { h_client: 0xc1d0_0000, h_object: 0xcaf0_0002 }.encode(&mut out);
        assert_eq!(out, [0xc1d0_0000u32, 0, 0xcaf0_0002, 0].iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<_>>());
        out.clear();
        UnloadingGuestDriver { in_pm_transition: true, gc6_entering: false, new_level: 3 }.encode(&mut out);
        assert_eq!(out, [1, 0, 0, 0, 3, 0, 0, 0]);
        out.clear();
        GspRmControl { h_client: 1, h_object: 2, cmd: 3, flags: RMAPI_RPC_FLAGS_COPYOUT_ON_ERROR, params: &[9, 9] }
            .encode(&mut out);
        assert_eq!(out.len(), 26);
        assert_eq!(&out[16..24], &[2, 0, 0, 0, 1, 0, 0, 0]);
        out.clear();
        GetGspStaticInfo.encode(&mut out);
        assert_eq!(out.len(), 2168);
        assert!(out.iter().all(|&b| b == 0));
        assert_eq!(size_of::<GspSystemInfo>(), 672);
    }

    #[test]
    fn replies_are_checked_before_use() {
        assert!(GspRmAlloc::decode_reply(&[0; 31]).is_err());
        let mut short = vec![0u8; 32];
        short[20..24].copy_from_slice(&10u32.to_le_bytes());
        let err = GspRmAlloc::decode_reply(&short).unwrap_err();
        assert!(err.to_string().contains("paramsSize reaches past the reply"), "{err}");
        assert!(GspRmControl::decode_reply(&[0; 23]).is_err());
        assert!(Free::decode_reply(&[0; 15]).is_err());
        assert!(GetGspStaticInfo::decode_reply(&[0; 2167]).is_err());
    }

    #[test]
    fn static_info_parts_decode() {
        let mut info = GspStaticConfigInfo::zeroed();
        info.fb_length = 80 << 30;
        info.fb_region_info_params.num_fb_regions = 2;
        info.fb_region_info_params.fb_region[0] =
            FbRegionInfo { base: 0, limit: (1 << 30) - 1, performance: 1000, ..Default::default() };
        info.fb_region_info_params.fb_region[1] =
            FbRegionInfo { base: 1 << 30, limit: (2 << 30) - 1, b_protected: 1, ..Default::default() };
        info.engine_caps = [1 << 1 | 1 << 9 | 1 << 10 | 1 << 18, 0];
        info.gpu_name_string[..9].copy_from_slice(b"NVIDIA H1");
        info.gid_info.length = 16;
        info.gid_info.data[0] = 0xab;
        let mut bytes = info.as_bytes().to_vec();
        bytes.extend_from_slice(&[0xee; 8]);
        let decoded = GetGspStaticInfo::decode_reply(&bytes).unwrap();
        assert_eq!(*decoded, info);
        assert_eq!(decoded.fb_regions().len(), 2);
        assert_eq!(decoded.fb_regions()[1].size(), 1 << 30);
        assert_eq!(decoded.gr_engines().collect::<Vec<_>>(), vec![0]);
        assert_eq!(decoded.copy_engines().collect::<Vec<_>>(), vec![0, 1, 9]);
        assert!(!decoded.has_engine(rm_engine_type::RM_ENGINE_TYPE_NVDEC0));
        assert!(!decoded.has_engine(u32::MAX));
        assert_eq!(decoded.gpu_name(), "NVIDIA H1");
        assert_eq!(decoded.gid_info.id().len(), 16);
        // numFBRegions beyond the array is bounded, not trusted.
        let mut wild = info;
        wild.fb_region_info_params.num_fb_regions = 1000;
        assert_eq!(wild.fb_regions().len(), 16);
        wild.gid_info.length = u32::MAX;
        assert_eq!(wild.gid_info.id().len(), 256);
    }

    #[test]
    fn registry_packs_like_rm() {
        let table = RegistryTable::new().dword("A", 7).binary("BB", &[1, 2, 3]).string("C", "x");
        let bytes = table.pack();
        // Header 8 + 3 entries * 16 = 56; then "A\0", "BB\0", [1,2,3], "C\0", "x\0".
        assert_eq!(bytes.len(), 56 + 2 + 3 + 3 + 2 + 2);
        assert_eq!(&bytes[0..8], &[68, 0, 0, 0, 3, 0, 0, 0]);
        let e0 = PackedRegistryEntry::read_from_bytes(&bytes[8..24]).unwrap();
        assert_eq!(e0, PackedRegistryEntry { name_offset: 56, type_: 1, _padding: [0; 3], data: 7, length: 4 });
        let e1 = PackedRegistryEntry::read_from_bytes(&bytes[24..40]).unwrap();
        assert_eq!(e1, PackedRegistryEntry { name_offset: 58, type_: 2, _padding: [0; 3], data: 61, length: 3 });
        let e2 = PackedRegistryEntry::read_from_bytes(&bytes[40..56]).unwrap();
        assert_eq!(e2, PackedRegistryEntry { name_offset: 64, type_: 3, _padding: [0; 3], data: 66, length: 2 });
        assert_eq!(&bytes[56..], b"A\0BB\0\x01\x02\x03C\0x\0");
        assert_eq!(RegistryTable::unpack(&bytes).unwrap(), table);
        // Offsets out of the table are refused.
        let mut bad = bytes.clone();
        bad[8..12].copy_from_slice(&1000u32.to_le_bytes());
        assert!(RegistryTable::unpack(&bad).is_err());
        assert!(RegistryTable::unpack(&bytes[..60]).is_err());
    }

    #[test]
    fn events_decode_and_refuse_short_payloads() {
        let mut post = RpcPostEventV17_00 { h_client: 1, h_event: 2, event_data_size: 3, ..Default::default() }
            .as_bytes()
            .to_vec();
        post.truncate(POST_EVENT_DATA_OFFSET);
        post.extend_from_slice(&[0xa, 0xb, 0xc]);
        let message = |function: u32, payload: Vec<u8>| GspMessage {
            header: RpcMessageHeader::request(function, payload.len() as u32).unwrap(),
            seq_num: 0,
            records: 1,
            payload,
        };
        let m = message(RpcEvent::PostEvent.raw(), post.clone());
        match GspEvent::decode(&m).unwrap() {
            GspEvent::PostEvent(p) => {
                assert_eq!(p.data, &[0xa, 0xb, 0xc]);
                assert_eq!(p.params.h_event, 2);
            }
            other => panic!("{other:?}"),
        }
        post[24] = 4;
        assert!(GspEvent::decode(&message(RpcEvent::PostEvent.raw(), post)).is_err());
        assert!(GspEvent::decode(&message(RpcEvent::OsErrorLog.raw(), vec![0; 267])).is_err());
        assert_eq!(GspEvent::decode(&message(RpcEvent::GspInitDone.raw(), vec![])), Ok(GspEvent::InitDone));
        assert!(matches!(GspEvent::decode(&message(0x1fff, vec![1])), Ok(GspEvent::Unknown(0x1fff, _))));
        assert!(matches!(
            GspEvent::decode(&message(RpcEvent::RcTriggered.raw(), vec![])),
            Ok(GspEvent::Other(RpcEvent::RcTriggered, _))
        ));
    }

    fn all_commands() -> Vec<SeqCommand> {
        vec![
            SeqCommand::RegWrite(SeqRegWrite { addr: 0x10, val: 0xaa }),
            SeqCommand::RegModify(SeqRegModify { addr: 0x14, mask: 0xf0, val: 0x50 }),
            SeqCommand::RegPoll(SeqRegPoll { addr: 0x18, mask: 0x1, val: 0x1, timeout: 2000, error: 1 }),
            SeqCommand::DelayUs(SeqDelayUs { val: 250 }),
            SeqCommand::RegStore(SeqRegStore { addr: 0x10, index: 7 }),
            SeqCommand::CoreReset,
            SeqCommand::CoreStart,
            SeqCommand::CoreWaitForHalt,
            SeqCommand::CoreResume,
        ]
    }

    #[test]
    fn sequencer_buffers_decode_every_opcode() {
        let commands = all_commands();
        let payload = SequencerBuffer::encode(0x100, &commands);
        // 1 + 2, 1 + 3, 1 + 5, 1 + 1, 1 + 2, then four bare opcodes: 22 words.
        assert_eq!(payload.len(), 40 + 22 * 4);
        let decoded = SequencerBuffer::decode(&payload).unwrap();
        assert_eq!(decoded.commands, commands);
        assert_eq!(decoded.buffer_size_dword, 0x100);
        for (op, c) in SeqOpcode::ALL.iter().zip(&commands) {
            assert_eq!(c.opcode(), *op);
            assert_eq!(SeqOpcode::from_raw(*op as u32), Some(*op));
        }
        assert_eq!(SeqOpcode::from_raw(9), None);
    }

    #[test]
    fn malformed_sequencer_buffers_are_refused() {
        let ok = SequencerBuffer::encode(0x100, &all_commands());
        assert_eq!(SequencerBuffer::decode(&ok[..39]), Err(SequencerError::Truncated { len: 39 }));
        let mut empty = ok.clone();
        empty[0..4].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(SequencerBuffer::decode(&empty), Err(SequencerError::EmptyBuffer));
        let mut small = ok.clone();
        small[0..4].copy_from_slice(&22u32.to_le_bytes());
        assert!(matches!(SequencerBuffer::decode(&small), Err(SequencerError::BadCommandIndex { cmd_index: 22, .. })));
        assert!(matches!(SequencerBuffer::decode(&ok[..ok.len() - 4]), Err(SequencerError::BadCommandIndex { .. })));
        let mut unknown = ok.clone();
        unknown[40..44].copy_from_slice(&99u32.to_le_bytes());
        assert_eq!(SequencerBuffer::decode(&unknown), Err(SequencerError::UnknownOpcode { opcode: 99, at: 0 }));
        let cut = SequencerBuffer::encode(0x100, &[SeqCommand::RegPoll(SeqRegPoll::default())]);
        let mut cut = cut;
        cut[4..8].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(
            SequencerBuffer::decode(&cut),
            Err(SequencerError::ArgumentsPastEnd { opcode: SeqOpcode::RegPoll, at: 0 })
        );
        let store = SequencerBuffer::encode(0x100, &[SeqCommand::RegStore(SeqRegStore { addr: 0, index: 8 })]);
        assert_eq!(SequencerBuffer::decode(&store), Err(SequencerError::SaveIndex { index: 8, at: 0 }));
    }

    struct Regs {
        values: RefCell<alloc::collections::BTreeMap<u32, u32>>,
        writes: RefCell<Vec<(u32, u32)>>,
        /// Reads of this address before it shows bit 0.
        poll_after: Cell<u32>,
    }

    impl RegisterIo for Regs {
        fn read32(&self, offset: u32) -> u32 {
            if offset == 0x18 {
                let left = self.poll_after.get();
                self.poll_after.set(left.saturating_sub(1));
                return if left == 0 { 1 } else { 0 };
            }
            *self.values.borrow().get(&offset).unwrap_or(&0)
        }
        fn write32(&self, offset: u32, value: u32) {
            self.writes.borrow_mut().push((offset, value));
            self.values.borrow_mut().insert(offset, value);
        }
    }

    #[derive(Default)]
    struct Core(Vec<&'static str>, bool);

    impl SequencerCore for Core {
        fn reset(&mut self) -> Result<(), CoreOpError> {
            self.0.push("reset");
            Ok(())
        }
        fn start(&mut self) -> Result<(), CoreOpError> {
            self.0.push("start");
            Ok(())
        }
        fn wait_for_halt(&mut self) -> Result<(), CoreOpError> {
            self.0.push("halt");
            Ok(())
        }
        fn resume(&mut self) -> Result<(), CoreOpError> {
            self.0.push("resume");
            if self.1 {
                Err(CoreOpError::Failed("RISC-V core not running"))
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn the_sequencer_executes_in_order() {
        let regs = Regs {
            values: RefCell::new([(0x14, 0xff0f)].into_iter().collect()),
            writes: RefCell::default(),
            poll_after: Cell::new(3),
        };
        let clock = FakeClock::new(None);
        let mut core = Core::default();
        let mut buffer = SequencerBuffer::decode(&SequencerBuffer::encode(0x100, &all_commands())).unwrap();
        run_sequencer(&mut buffer, &regs, &clock, &mut core).unwrap();
        assert_eq!(*regs.writes.borrow(), vec![(0x10, 0xaa), (0x14, 0xff5f)]);
        assert_eq!(buffer.reg_save_area[7], 0xaa);
        assert_eq!(core.0, vec!["reset", "start", "halt", "resume"]);
        assert!(clock.now.get() >= 250_000 + 300_000, "polled three times and delayed 250 us");

        let mut failing = Core(Vec::new(), true);
        let err = run_sequencer(&mut buffer, &regs, &clock, &mut failing).unwrap_err();
        assert_eq!(
            err,
            SequencerError::Core {
                opcode: SeqOpcode::CoreResume,
                error: CoreOpError::Failed("RISC-V core not running")
            }
        );
        assert_eq!(err.to_string(), "GSP_SEQ_BUF_OPCODE_CORE_RESUME: RISC-V core not running");
    }

    #[test]
    fn a_sequencer_poll_times_out_with_its_error_code() {
        let regs = Regs { values: RefCell::default(), writes: RefCell::default(), poll_after: Cell::new(u32::MAX) };
        let clock = FakeClock::new(None);
        let mut buffer = SequencerBuffer::decode(&SequencerBuffer::encode(
            0x100,
            &[SeqCommand::RegPoll(SeqRegPoll { addr: 0x18, mask: 1, val: 1, timeout: 1500, error: 3 })],
        ))
        .unwrap();
        let err = run_sequencer(&mut buffer, &regs, &clock, &mut Core::default()).unwrap_err();
        assert_eq!(
            err,
            SequencerError::PollTimeout { addr: 0x18, mask: 1, val: 1, last: 0, error_code: 3, after_ms: 2 }
        );
        assert!(err.to_string().contains("GSP error code 3"));
    }

    #[test]
    fn tables_match_the_types() {
        for s in STRUCT_LAYOUTS {
            for f in s.fields {
                assert!(f.offset + f.size <= s.size, "{}.{}", s.c_name, f.c_name);
            }
        }
        assert_eq!(size_of::<GspStaticConfigInfo>(), 2168);
        assert_eq!(offset_of!(GspStaticConfigInfo, fb_region_info_params), 840);
        assert_eq!(offset_of!(GspStaticConfigInfo, fb_length), 1752);
        assert_eq!(offset_of!(GspStaticConfigInfo, bar1_pde_base), 2088);
        assert_eq!(POST_EVENT_DATA_OFFSET, 29);
        let _unused: Option<GspMessageQueues<FakeDoorbell>> = None;
    }
}
