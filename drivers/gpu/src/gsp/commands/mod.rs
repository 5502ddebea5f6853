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
//! - One file per RPC group: `system_info`, `registry`, `static_info`, `rm_api`, `unload`,
//!   `events`; `layout` holds their layout tables. The CPU sequencer that
//!   `GSP_RUN_CPU_SEQUENCER` carries is [`crate::gsp::sequencer`].
//!
//! Everything decoded here comes from firmware: lengths are checked before anything is read,
//! and a short or inconsistent payload is an [`RpcError`], never a panic.

mod events;
mod layout;
mod registry;
mod rm_api;
mod static_info;
mod system_info;
mod unload;

pub use events::*;
pub use layout::*;
pub use registry::*;
pub use rm_api::*;
pub use static_info::*;
pub use system_info::*;
pub use unload::*;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::mem::{offset_of, size_of};

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

use super::cmdq::{GspDoorbell, GspMessage, GspMessageQueues, TransportError, RECORD_PAYLOAD_MAX};
use super::fw::rpc::{RpcEvent, RpcFunction, RpcMessageHeader};
use super::history::{Direction, EntryId, HistorySnapshot, RpcHistory, RpcHistoryEntry, RpcName, RpcOutcome};
use super::status::NvStatus;
use crate::chip::Chipset;
use crate::hw::headers;
use crate::hw::layout::{ConstantFact, FieldLayout, StructLayout};
use crate::platform::{wait_for, Clock, Timeout};
use crate::rm::NV01_NULL_OBJECT;

use super::sequencer::*;

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
        self.history.push(incoming_entry(message, self.clock.now_ns()));
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
                    history.push(incoming_entry(&message, clock.now_ns()));
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
pub(crate) fn read_prefix<T: FromBytes + KnownLayout + Immutable>(bytes: &[u8]) -> Option<T> {
    T::read_from_prefix(bytes).ok().map(|(v, _)| v)
}

/// The history entry of a message GSP-RM sent unasked or out of turn, received at `now` ns.
fn incoming_entry(message: &GspMessage, now: u64) -> RpcHistoryEntry {
    RpcHistoryEntry {
        direction: Direction::Incoming,
        function: message.name(),
        seq_num: message.seq_num,
        records: message.records,
        data: [0, 0],
        start_ns: now,
        end_ns: Some(now),
        outcome: RpcOutcome::Received(message.rpc_result()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gsp::cmdq::fake::*;
    use crate::gsp::cmdq::{GspMessageQueues, TransportError};
    use crate::gsp::fw::msgq::ElementError;
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
