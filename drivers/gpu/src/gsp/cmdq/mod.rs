//! The command queue: the driver's side of the GSP-RM message queues: records into the command queue, records out
//! of the status queue, over the shared memory [`MessageQueueLayout`] describes. This follows
//! RM's CPU side in 535.261.03: `GspMsgQueuesInit`, `GspMsgQueueSendCommand`,
//! `GspMsgQueueReceiveStatus`, `GspStatusQueueInit` (`message_queue_cpu.c`) over the ring
//! functions of `msgq.c` (`msgqTxCreate`, `msgqRxLink`, `msgqTxGetWriteBuffer`,
//! `msgqTxSubmitBuffers`, `msgqRxGetReadBuffer`, `msgqRxMarkConsumed`), and the record splitting
//! of `_issueRpcLarge` (`src/nvidia/kernel/vgpu/nv/rpc.c`).
//!
//! # Ring ownership
//!
//! The shared block holds the page table, then the command queue, then the status queue; each
//! queue is a 4 KiB header page (`msgqTxHeader` at 0, a `msgqRxHeader` at `rxHdrOff`) and 4 KiB
//! entries. Both queues are created with `MSGQ_FLAGS_SWAP_RX`, so each reader's read pointer
//! lives in the header page of the queue the reader itself writes. Who writes what:
//!
//! | location                                   | written by | read by |
//! |--------------------------------------------|------------|---------|
//! | command queue `msgqTxHeader` (`writePtr`)  | CPU        | GSP     |
//! | command queue entries                      | CPU        | GSP     |
//! | command queue `msgqRxHeader.readPtr`       | CPU: its read pointer of the *status* queue | GSP |
//! | status queue `msgqTxHeader` (`writePtr`)   | GSP        | CPU     |
//! | status queue entries                       | GSP        | CPU     |
//! | status queue `msgqRxHeader.readPtr`        | GSP: its read pointer of the *command* queue | CPU |
//!
//! Invariants this module keeps, and checks of the other side:
//! - A writer owns the entries from its `writePtr` up to, not including, the reader's `readPtr`
//!   minus one (one entry always stays empty, so equal pointers mean "empty"); the reader owns
//!   `readPtr..writePtr`. Indices wrap at `msgCount`; a record of several entries may wrap.
//! - A writer fills entries first, then (after a store fence) advances `writePtr`; a reader
//!   copies entries out first, then advances `readPtr`. So a pointer never covers bytes that
//!   are not there yet, and the CPU reads a record only once `writePtr` has passed all of it.
//! - Every record carries the queue's running `seqNum` (both directions start at 0) and a
//!   checksum over the record; a record is consumed only after both are checked.
//! - Pointers and headers read back from the other side are input: a pointer at or beyond
//!   `msgCount`, a header that disagrees with the layout, a bad record are typed errors.
//! - Before GSP-RM creates its status queue (it boots after the driver has queued
//!   `GSP_SET_SYSTEM_INFO` and `SET_REGISTRY`), the command queue is written assuming GSP has
//!   read nothing, as RM's cached free count does.
//!
//! After each record the driver rings the doorbell ([`GspDoorbell`]): RM writes 0 to
//! `NV_PGSP_QUEUE_HEAD(0)` (`kgspSetCmdQueueHead_TU102`, used by every chip in 535).
//!
//! The structures and the element format the transport moves are [`crate::gsp::fw::msgq`]'s and
//! [`crate::gsp::fw::rpc`]'s; the RPCs it carries are [`crate::gsp::commands`]'. The unit tests
//! (`tests.rs`) run the transport against `fake`, a GSP-RM written from `msgq.c`'s rules on its
//! own.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{fence, Ordering};

use zerocopy::{FromBytes, IntoBytes};

use super::fw::init_args::MessageQueueInitArguments;
use super::fw::msgq::{
    verify_element, ElementError, GspMsgQueueElement, MessageQueueLayout, MsgqTxHeader, QueueError,
    GSP_MSG_QUEUE_ELEMENT_HDR_SIZE, GSP_MSG_QUEUE_ELEMENT_SIZE_MAX, GSP_MSG_QUEUE_ELEMENT_SIZE_MIN,
    GSP_MSG_QUEUE_RPC_SIZE_MAX, RM_PAGE_SIZE,
};
use super::fw::rpc::{RpcEvent, RpcFunction, RpcHeaderError, RpcMessageHeader, RPC_MESSAGE_HEADER_SIZE};
use super::history::RpcName;
use super::status::NvStatus;
use crate::hw::engine::NV_PGSP_QUEUE_HEAD;
use crate::hw::RegisterIo;
use crate::platform::{wait_for, Clock, DmaBuffer, Timeout};

/// `RPC_TASK_RM_QUEUE_IDX`: the index of RM's queue pair, and the `NV_PGSP_QUEUE_HEAD` index
/// the doorbell writes.
pub const RPC_TASK_RM_QUEUE_IDX: u32 = 0;

/// Parameter bytes one record carries at most: `GSP_MSG_QUEUE_RPC_SIZE_MAX` less the RPC header
/// (RM's `maxRpcSize - sizeof(rpc_message_header_v)`). Larger messages are split into a first
/// record of this many bytes and `CONTINUATION_RECORD`s.
pub const RECORD_PAYLOAD_MAX: usize = (GSP_MSG_QUEUE_RPC_SIZE_MAX - RPC_MESSAGE_HEADER_SIZE) as usize;

/// How long a record waits for room in the command queue: RM's `gpuSetTimeout(1000000)` in
/// `GspMsgQueueSendCommand`.
pub const SEND_SPACE_TIMEOUT_MS: u64 = 1000;

/// How long [`GspMessageQueues::wait_for_status_queue`] waits by default for GSP-RM to create
/// the status queue: `GspStatusQueueInit`'s 4 s.
pub const STATUS_QUEUE_LINK_TIMEOUT_MS: u64 = 4000;

/// Reads of one record before a bad checksum is final (`nMaxRetries` of
/// `GspMsgQueueReceiveStatus`: the data may still have been in flight).
const RECEIVE_ATTEMPTS: u32 = 3;

const ELEMENT: usize = GSP_MSG_QUEUE_ELEMENT_SIZE_MIN as usize;
const ELEMENT_HDR: usize = GSP_MSG_QUEUE_ELEMENT_HDR_SIZE as usize;
const RPC_HDR: usize = RPC_MESSAGE_HEADER_SIZE as usize;
const MAX_ELEMENTS_PER_RECORD: u32 = GSP_MSG_QUEUE_ELEMENT_SIZE_MAX / GSP_MSG_QUEUE_ELEMENT_SIZE_MIN;

const TX_WRITE_PTR: usize = core::mem::offset_of!(MsgqTxHeader, write_ptr);
const ELEM_COUNT_AT: usize = core::mem::offset_of!(GspMsgQueueElement, elem_count);

/// Tells GSP-RM that the command queue has new records.
///
/// The kernel implements it with a register write ([`QueueHeadDoorbell`]); the GPU model runs
/// its GSP-RM on it; unit tests answer from a fake.
pub trait GspDoorbell {
    /// Signals queue `queue_index` ([`RPC_TASK_RM_QUEUE_IDX`]).
    fn ring(&mut self, queue_index: u32);
}

impl<T: GspDoorbell + ?Sized> GspDoorbell for &mut T {
    fn ring(&mut self, queue_index: u32) {
        (**self).ring(queue_index)
    }
}

/// The doorbell RM uses: write 0 to `NV_PGSP_QUEUE_HEAD(queue_index)` (`kgspSetCmdQueueHead`).
pub struct QueueHeadDoorbell<R: RegisterIo>(pub R);

impl<R: RegisterIo> GspDoorbell for QueueHeadDoorbell<R> {
    fn ring(&mut self, queue_index: u32) {
        NV_PGSP_QUEUE_HEAD::from_raw(0).write(&self.0, queue_index);
    }
}

/// Why the queue transport failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportError {
    /// The DMA buffer is smaller than the layout's shared block.
    BufferTooSmall { needed: u64, len: usize },
    /// The DMA buffer's bus address is not 4 KiB aligned.
    UnalignedBuffer { bus: u64 },
    /// The layout is not one `MessageQueueLayout::new` produces.
    BadLayout,
    /// A queue header was refused: ours could not be made, or GSP-RM's status queue header
    /// disagrees with the layout (`msgqRxLink`'s checks).
    Header(QueueError),
    /// A ring pointer GSP-RM wrote is outside the ring.
    BadPeerPointer { pointer: &'static str, value: u32, msg_count: u32 },
    /// A record read from the status queue was refused (length, element count, checksum).
    Element(ElementError),
    /// A record's RPC header was refused (signature, version).
    RpcHeader(RpcHeaderError),
    /// A record's `seqNum` is not the next one.
    SequenceMismatch { expected: u32, found: u32 },
    /// A record spans more entries than the queue can ever hold at once.
    RecordTooLarge { elements: u32, msg_count: u32 },
    /// A message needs more records than its length field can describe.
    MessageTooLarge { len: usize },
    /// A record other than `CONTINUATION_RECORD` arrived while a message was incomplete.
    ExpectedContinuation { function: RpcName, found: RpcName },
    /// Continuation records carried more bytes than the message's length.
    ContinuationOverrun { expected: usize, received: usize },
    /// An offset computed from the layout or a peer header falls outside the buffer.
    OutOfBounds { offset: usize, len: usize },
    /// A bounded wait ran out (space in the command queue, the status queue header, a record).
    Timeout(Timeout),
}

impl From<Timeout> for TransportError {
    fn from(t: Timeout) -> Self {
        TransportError::Timeout(t)
    }
}

impl From<ElementError> for TransportError {
    fn from(e: ElementError) -> Self {
        TransportError::Element(e)
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TransportError::BufferTooSmall { needed, len } => write!(
                f,
                "GSP message queue buffer of {len} bytes is smaller than the {needed}-byte layout"
            ),
            TransportError::UnalignedBuffer { bus } => {
                write!(f, "GSP message queue buffer at bus address {bus:#x} is not 4 KiB aligned")
            }
            TransportError::BadLayout => {
                f.write_str("GSP message queue layout is not one _getMsgQueueParams would make")
            }
            TransportError::Header(e) => write!(f, "GSP message queue header: {e}"),
            TransportError::BadPeerPointer { pointer, value, msg_count } => write!(
                f,
                "GSP-RM wrote {pointer} = {value}, outside a ring of {msg_count} entries"
            ),
            TransportError::Element(e) => write!(f, "GSP status queue: {e}"),
            TransportError::RpcHeader(e) => write!(f, "GSP status queue: {e}"),
            TransportError::SequenceMismatch { expected, found } => write!(
                f,
                "GSP status queue record has seqNum {found}, expected {expected}"
            ),
            TransportError::RecordTooLarge { elements, msg_count } => write!(
                f,
                "a record of {elements} entries never fits a queue of {msg_count} entries"
            ),
            TransportError::MessageTooLarge { len } => {
                write!(f, "RPC message of {len} bytes is too large to send")
            }
            TransportError::ExpectedContinuation { function, found } => write!(
                f,
                "{function} was incomplete, but the next record was {found}, not NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD"
            ),
            TransportError::ContinuationOverrun { expected, received } => write!(
                f,
                "continuation records carried {received} bytes for a {expected}-byte message"
            ),
            TransportError::OutOfBounds { offset, len } => {
                write!(f, "GSP message queue access at {offset:#x}+{len} leaves the buffer")
            }
            TransportError::Timeout(t) => t.fmt(f),
        }
    }
}

/// What [`GspMessageQueues::send`] put in the command queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendReceipt {
    /// `seqNum` of the first record.
    pub seq_num: u32,
    /// Records written (1, plus the continuation records).
    pub records: u32,
    /// Queue entries written in all.
    pub elements: u32,
}

/// A message read from the status queue: one record, or a first record and its continuation
/// records put back together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GspMessage {
    /// The RPC header of the first record (its `length` covers that record only).
    pub header: RpcMessageHeader,
    /// `seqNum` of the first record.
    pub seq_num: u32,
    /// Records the message took.
    pub records: u32,
    /// The parameters (everything after the RPC header), reassembled.
    pub payload: Vec<u8>,
}

impl GspMessage {
    /// The function or event number.
    pub const fn function(&self) -> u32 {
        self.header.function
    }

    /// The function or event, for printing.
    pub const fn name(&self) -> RpcName {
        RpcName(self.header.function)
    }

    /// The event, when the message is one GSP-RM sends unasked.
    pub const fn event(&self) -> Option<RpcEvent> {
        RpcEvent::from_raw(self.header.function)
    }

    /// `rpc_result`.
    pub const fn rpc_result(&self) -> NvStatus {
        NvStatus::from_raw(self.header.rpc_result)
    }
}

/// The shared block, read and written with volatile accesses: the other side changes it at
/// any time, so nothing here holds a Rust reference into it.
struct Shared(DmaBuffer);

impl Shared {
    fn read_u32(&self, offset: usize) -> Result<u32, TransportError> {
        self.0.read_volatile_u32(offset).ok_or(TransportError::OutOfBounds { offset, len: 4 })
    }

    fn write_u32(&mut self, offset: usize, value: u32) -> Result<(), TransportError> {
        self.0.write_volatile_u32(offset, value).then_some(()).ok_or(TransportError::OutOfBounds { offset, len: 4 })
    }

    fn read_bytes(&self, offset: usize, out: &mut [u8]) -> Result<(), TransportError> {
        let len = out.len();
        self.0.read_volatile_bytes(offset, out).then_some(()).ok_or(TransportError::OutOfBounds { offset, len })
    }

    fn write_bytes(&mut self, offset: usize, data: &[u8]) -> Result<(), TransportError> {
        let len = data.len();
        self.0.write_volatile_bytes(offset, data).then_some(()).ok_or(TransportError::OutOfBounds { offset, len })
    }

    fn fill(&mut self, offset: usize, len: usize, value: u8) -> Result<(), TransportError> {
        self.0.fill_volatile(offset, len, value).then_some(()).ok_or(TransportError::OutOfBounds { offset, len })
    }
}

/// The command queue: ours to write.
#[derive(Clone, Copy, Debug)]
struct CommandRing {
    /// Offset of the queue in the shared block.
    base: usize,
    /// Offset of entry 0 from `base`.
    entry_off: usize,
    /// Offset of this page's `msgqRxHeader` from `base`: where our status-queue read pointer is.
    rx_hdr_off: usize,
    msg_count: u32,
    /// Our `writePtr` (the copy in shared memory is only ever written from here).
    write_ptr: u32,
    /// `seqNum` of the next record (`txSeqNum`).
    seq_num: u32,
}

/// The status queue, once GSP-RM has created it: ours to read.
#[derive(Clone, Copy, Debug)]
struct StatusRing {
    base: usize,
    entry_off: usize,
    /// Offset of this page's `msgqRxHeader` from `base`: GSP-RM's command-queue read pointer.
    rx_hdr_off: usize,
    msg_count: u32,
    /// Our `readPtr` (the copy in shared memory is only ever written from here).
    read_ptr: u32,
    /// `seqNum` expected of the next record (`rxSeqNum`).
    seq_num: u32,
}

/// RM's queue pair over one shared DMA block, driver side. Owns the block and the doorbell.
pub struct GspMessageQueues<D: GspDoorbell> {
    shared: Shared,
    layout: MessageQueueLayout,
    doorbell: D,
    cmd: CommandRing,
    stat: Option<StatusRing>,
    /// One record's worth of staging (RM's `pCmdQueueElement` work area).
    staging: Vec<u8>,
}

impl<D: GspDoorbell> GspMessageQueues<D> {
    /// Takes `shared` (physically contiguous, as [`crate::platform::DmaAllocator`] provides) for
    /// queues laid out as `layout`, the way `GspMsgQueuesInit` prepares them: zeroes it, writes
    /// the page table (every page's bus address), and creates the command queue
    /// (`msgqTxCreate`). The status queue is linked once GSP-RM has created it
    /// ([`Self::try_link_status_queue`]).
    pub fn new(shared: DmaBuffer, layout: MessageQueueLayout, doorbell: D) -> Result<Self, TransportError> {
        if MessageQueueLayout::new(layout.command_queue_size, layout.status_queue_size) != Ok(layout) {
            return Err(TransportError::BadLayout);
        }
        if (shared.len() as u64) < layout.shared_size() {
            return Err(TransportError::BufferTooSmall { needed: layout.shared_size(), len: shared.len() });
        }
        if !shared.bus_address().is_multiple_of(RM_PAGE_SIZE) || !shared.cpu_address().is_multiple_of(ELEMENT) {
            return Err(TransportError::UnalignedBuffer { bus: shared.bus_address() });
        }
        let mut shared = Shared(shared);
        let total = layout.shared_size() as usize;
        shared.fill(0, total, 0)?;

        let bus = shared.0.bus_address();
        let mut table = vec![0u8; layout.page_table_size as usize];
        let pages: Vec<u64> = (0..layout.page_count()).map(|i| bus + i * RM_PAGE_SIZE).collect();
        layout.write_page_table(&pages, &mut table).map_err(TransportError::Header)?;
        shared.write_bytes(0, &table)?;

        let tx = MsgqTxHeader::gsp_queue(layout.command_queue_size as u32).map_err(TransportError::Header)?;
        let base = layout.cmd_queue_offset() as usize;
        shared.write_bytes(base, tx.as_bytes())?;
        fence(Ordering::SeqCst);

        Ok(Self {
            shared,
            layout,
            doorbell,
            cmd: CommandRing {
                base,
                entry_off: tx.entry_off as usize,
                rx_hdr_off: tx.rx_hdr_off as usize,
                msg_count: tx.msg_count,
                write_ptr: 0,
                seq_num: 0,
            },
            stat: None,
            staging: vec![0u8; GSP_MSG_QUEUE_ELEMENT_SIZE_MAX as usize],
        })
    }

    /// The layout.
    pub const fn layout(&self) -> &MessageQueueLayout {
        &self.layout
    }

    /// Bus address of the shared block (`sharedMemPhysAddr`: its first page holds the table).
    pub fn bus_address(&self) -> u64 {
        self.shared.0.bus_address()
    }

    /// The `MESSAGE_QUEUE_INIT_ARGUMENTS` that tell GSP-RM where these queues are.
    pub fn init_arguments(&self) -> MessageQueueInitArguments {
        MessageQueueInitArguments::new(self.bus_address(), &self.layout)
    }

    /// The doorbell (for a model or test to inspect).
    pub fn doorbell_mut(&mut self) -> &mut D {
        &mut self.doorbell
    }

    /// Gives back the shared block and the doorbell.
    pub fn into_parts(self) -> (DmaBuffer, D) {
        (self.shared.0, self.doorbell)
    }

    /// `seqNum` the next command record will carry.
    pub const fn next_command_seq(&self) -> u32 {
        self.cmd.seq_num
    }

    /// `seqNum` the next status record must carry.
    pub fn next_status_seq(&self) -> u32 {
        self.stat.map_or(0, |s| s.seq_num)
    }

    /// Whether GSP-RM's status queue has been linked.
    pub const fn is_status_queue_linked(&self) -> bool {
        self.stat.is_some()
    }

    /// Links the status queue if GSP-RM has created it (`msgqRxLink`): checks its header
    /// against the layout and starts reading at entry 0. `Ok(false)` while GSP-RM has not
    /// written the header yet (its `size` still 0); an error for a header that is there but
    /// wrong.
    pub fn try_link_status_queue(&mut self) -> Result<bool, TransportError> {
        if self.stat.is_some() {
            return Ok(true);
        }
        fence(Ordering::SeqCst);
        let base = self.layout.stat_queue_offset() as usize;
        let mut raw = [0u8; core::mem::size_of::<MsgqTxHeader>()];
        self.shared.read_bytes(base, &mut raw)?;
        let Ok(tx) = MsgqTxHeader::read_from_bytes(&raw) else {
            return Err(TransportError::OutOfBounds { offset: base, len: raw.len() });
        };
        if tx.size == 0 {
            return Ok(false);
        }
        tx.check_peer(self.layout.status_queue_size as u32, GSP_MSG_QUEUE_ELEMENT_SIZE_MIN)
            .map_err(TransportError::Header)?;
        // The read pointer is read as a word and entries are copied as whole elements.
        if tx.rx_hdr_off % 4 != 0 || tx.entry_off % 8 != 0 {
            return Err(TransportError::Header(QueueError::PeerOffsets {
                rx_hdr_off: tx.rx_hdr_off,
                entry_off: tx.entry_off,
            }));
        }
        if tx.flags & super::fw::msgq::MSGQ_FLAGS_SWAP_RX == 0 {
            return Err(TransportError::Header(QueueError::PeerMismatch {
                field: "flags",
                expected: super::fw::msgq::MSGQ_FLAGS_SWAP_RX,
                found: tx.flags,
            }));
        }
        // Our read pointer of the status queue starts at 0 (`msgqRxLink` writes it).
        self.shared.write_u32(self.cmd.base + self.cmd.rx_hdr_off, 0)?;
        fence(Ordering::SeqCst);
        self.stat = Some(StatusRing {
            base,
            entry_off: tx.entry_off as usize,
            rx_hdr_off: tx.rx_hdr_off as usize,
            msg_count: tx.msg_count,
            read_ptr: 0,
            seq_num: 0,
        });
        Ok(true)
    }

    /// Waits (bounded) for GSP-RM to create the status queue, then links it
    /// (`GspStatusQueueInit`). Like RM, a header that does not check out yet is retried (it may
    /// be half written); if time runs out with such a header there, the error says what was
    /// wrong with it rather than only that time ran out.
    pub fn wait_for_status_queue<C: Clock + ?Sized>(
        &mut self,
        clock: &C,
        timeout_ms: u64,
    ) -> Result<(), TransportError> {
        let mut last_error = None;
        let linked = wait_for(clock, timeout_ms, "GSP-RM to create its status queue (msgqRxLink)", || {
            match self.try_link_status_queue() {
                Ok(true) => Some(()),
                Ok(false) => None,
                Err(e) => {
                    last_error = Some(e);
                    None
                }
            }
        });
        match (linked, last_error) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(e)) => Err(e),
            (Err(t), None) => Err(t.into()),
        }
    }

    /// Links the status queue if it is there and checks out; on the send and receive paths a
    /// header not (yet) acceptable just means "not linked yet".
    fn link_if_ready(&mut self) -> bool {
        matches!(self.try_link_status_queue(), Ok(true))
    }

    /// GSP-RM's read pointer of the command queue; 0 before it has linked (nothing read yet).
    fn gsp_read_ptr(&self) -> Result<u32, TransportError> {
        let Some(stat) = self.stat else { return Ok(0) };
        let value = self.shared.read_u32(stat.base + stat.rx_hdr_off)?;
        if value >= self.cmd.msg_count {
            return Err(TransportError::BadPeerPointer {
                pointer: "the command queue readPtr",
                value,
                msg_count: self.cmd.msg_count,
            });
        }
        Ok(value)
    }

    /// Free entries in the command queue (`msgqTxGetFreeSpace`).
    pub fn command_free_elements(&mut self) -> Result<u32, TransportError> {
        self.link_if_ready();
        let read = self.gsp_read_ptr()?;
        let count = self.cmd.msg_count;
        Ok((read + count - self.cmd.write_ptr - 1) % count)
    }

    /// Sends one message: `function` with `payload` as its parameters. A payload larger than
    /// [`RECORD_PAYLOAD_MAX`] goes as a first record of that size and
    /// `NV_VGPU_MSG_FUNCTION_CONTINUATION_RECORD` records with the rest (`_issueRpcLarge`).
    /// Each record waits (bounded by `clock`) for room, is written, published, and announced
    /// through the doorbell.
    pub fn send<C: Clock + ?Sized>(
        &mut self,
        clock: &C,
        function: u32,
        payload: &[u8],
    ) -> Result<SendReceipt, TransportError> {
        if u32::try_from(payload.len()).is_err() {
            return Err(TransportError::MessageTooLarge { len: payload.len() });
        }
        let seq_num = self.cmd.seq_num;
        let first = payload.len().min(RECORD_PAYLOAD_MAX);
        let mut elements = self.send_record(clock, function, &payload[..first])?;
        let mut records = 1;
        for chunk in payload[first..].chunks(RECORD_PAYLOAD_MAX) {
            elements += self.send_record(clock, RpcFunction::ContinuationRecord.raw(), chunk)?;
            records += 1;
        }
        Ok(SendReceipt { seq_num, records, elements })
    }

    /// One record (`GspMsgQueueSendCommand`, then the doorbell of `_kgspRpcSendMessage`).
    fn send_record<C: Clock + ?Sized>(
        &mut self,
        clock: &C,
        function: u32,
        params: &[u8],
    ) -> Result<u32, TransportError> {
        let len = params.len();
        let Some(rpc) = RpcMessageHeader::request(function, len as u32) else {
            return Err(TransportError::MessageTooLarge { len });
        };
        let size = ELEMENT_HDR + RPC_HDR + len;
        let span = size.div_ceil(ELEMENT) * ELEMENT;
        let record = self.staging.get_mut(..span).ok_or(TransportError::MessageTooLarge { len })?;
        record.fill(0);
        record[ELEMENT_HDR..ELEMENT_HDR + RPC_HDR].copy_from_slice(rpc.as_bytes());
        record[ELEMENT_HDR + RPC_HDR..size].copy_from_slice(params);
        let elements = super::fw::msgq::seal_element(record, self.cmd.seq_num)?;
        if elements >= self.cmd.msg_count {
            return Err(TransportError::RecordTooLarge { elements, msg_count: self.cmd.msg_count });
        }

        wait_for(clock, SEND_SPACE_TIMEOUT_MS, "space in the GSP command queue", || {
            match self.command_free_elements() {
                Ok(free) if free >= elements => Some(Ok(())),
                Ok(_) => None,
                Err(e) => Some(Err(e)),
            }
        })??;

        let cmd = self.cmd;
        for i in 0..elements {
            let slot = ((cmd.write_ptr + i) % cmd.msg_count) as usize;
            let at = cmd.base + cmd.entry_off + slot * ELEMENT;
            let from = i as usize * ELEMENT;
            self.shared.write_bytes(at, &self.staging[from..from + ELEMENT])?;
        }
        // The entries must be visible before the pointer that hands them over
        // (`portAtomicMemoryFenceStore` in `GspMsgQueueSendCommand`).
        fence(Ordering::Release);
        let write_ptr = (cmd.write_ptr + elements) % cmd.msg_count;
        self.shared.write_u32(cmd.base + TX_WRITE_PTR, write_ptr)?;
        self.cmd.write_ptr = write_ptr;
        self.cmd.seq_num = cmd.seq_num.wrapping_add(1);
        fence(Ordering::SeqCst);
        self.doorbell.ring(RPC_TASK_RM_QUEUE_IDX);
        Ok(elements)
    }

    /// Reads one record if one is there (`GspMsgQueueReceiveStatus`): `Ok(None)` when the
    /// status queue is empty, not linked yet, or a record's entries are not all published yet.
    /// The record is checked (element count, length, checksum with RM's retries, RPC header,
    /// `seqNum`) and only then consumed; a refused record stays in the queue.
    pub fn try_receive_record(&mut self) -> Result<Option<GspMessage>, TransportError> {
        if !self.link_if_ready() {
            return Ok(None);
        }
        let Some(stat) = self.stat else {
            return Ok(None);
        };
        // See GSP-RM's latest writes (`_kgspRpcDrainOneEvent`'s full fence).
        fence(Ordering::SeqCst);
        let write_ptr = self.shared.read_u32(stat.base + TX_WRITE_PTR)?;
        if write_ptr >= stat.msg_count {
            return Err(TransportError::BadPeerPointer {
                pointer: "the status queue writePtr",
                value: write_ptr,
                msg_count: stat.msg_count,
            });
        }
        let available = (write_ptr + stat.msg_count - stat.read_ptr) % stat.msg_count;
        if available == 0 {
            return Ok(None);
        }
        fence(Ordering::Acquire);

        let entry = |i: u32| stat.base + stat.entry_off + ((stat.read_ptr + i) % stat.msg_count) as usize * ELEMENT;
        let mut attempt = 0;
        let elements = loop {
            attempt += 1;
            self.shared.read_bytes(entry(0), &mut self.staging[..ELEMENT])?;
            let elements = u32::from_le_bytes([
                self.staging[ELEM_COUNT_AT],
                self.staging[ELEM_COUNT_AT + 1],
                self.staging[ELEM_COUNT_AT + 2],
                self.staging[ELEM_COUNT_AT + 3],
            ]);
            if elements == 0 || elements > MAX_ELEMENTS_PER_RECORD {
                return Err(ElementError::BadElementCount { elem_count: elements }.into());
            }
            if elements >= stat.msg_count {
                return Err(TransportError::RecordTooLarge { elements, msg_count: stat.msg_count });
            }
            if elements > available {
                // GSP-RM publishes whole records, so this is a record still being written.
                return Ok(None);
            }
            for i in 1..elements {
                let at = i as usize * ELEMENT;
                self.shared.read_bytes(entry(i), &mut self.staging[at..at + ELEMENT])?;
            }
            match verify_element(&self.staging[..elements as usize * ELEMENT]) {
                Ok(_) => break elements,
                Err(ElementError::BadChecksum { .. }) if attempt < RECEIVE_ATTEMPTS => continue,
                Err(e) => return Err(e.into()),
            }
        };
        let record = verify_element(&self.staging[..elements as usize * ELEMENT])?;
        record.element.rpc.check().map_err(TransportError::RpcHeader)?;
        if record.element.seq_num != stat.seq_num {
            return Err(TransportError::SequenceMismatch { expected: stat.seq_num, found: record.element.seq_num });
        }
        let message = GspMessage {
            header: record.element.rpc,
            seq_num: record.element.seq_num,
            records: 1,
            payload: record.params.to_vec(),
        };

        // Copied out and checked: hand the entries back (`msgqRxMarkConsumed`).
        fence(Ordering::SeqCst);
        let read_ptr = (stat.read_ptr + elements) % stat.msg_count;
        self.shared.write_u32(self.cmd.base + self.cmd.rx_hdr_off, read_ptr)?;
        fence(Ordering::SeqCst);
        if let Some(s) = self.stat.as_mut() {
            s.read_ptr = read_ptr;
            s.seq_num = s.seq_num.wrapping_add(1);
        }
        Ok(Some(message))
    }

    /// Reads one message if one is there: a record, plus its continuation records when
    /// `full_len` says the message is longer. `full_len(header)` gives the parameter bytes a
    /// message starting with `header` has in all, or `None` for "this record is the whole
    /// message"; continuation records are gathered only after a first record of
    /// [`RECORD_PAYLOAD_MAX`] bytes, until that many bytes are there (RM's bidirectional
    /// `_issueRpcLarge`). Waits for them at most `continuation_timeout_ms`.
    pub fn try_receive_message<C: Clock + ?Sized>(
        &mut self,
        clock: &C,
        continuation_timeout_ms: u64,
        full_len: &dyn Fn(&RpcMessageHeader) -> Option<usize>,
    ) -> Result<Option<GspMessage>, TransportError> {
        let Some(mut message) = self.try_receive_record()? else {
            return Ok(None);
        };
        let Some(expected) = full_len(&message.header) else {
            return Ok(Some(message));
        };
        if message.payload.len() != RECORD_PAYLOAD_MAX {
            return Ok(Some(message));
        }
        while message.payload.len() < expected {
            let next = wait_for(clock, continuation_timeout_ms, "a continuation record from GSP-RM", || {
                self.try_receive_record().transpose()
            })??;
            if next.header.function != RpcFunction::ContinuationRecord.raw() {
                return Err(TransportError::ExpectedContinuation { function: message.name(), found: next.name() });
            }
            message.payload.extend_from_slice(&next.payload);
            message.records += 1;
        }
        if message.payload.len() > expected {
            return Err(TransportError::ContinuationOverrun { expected, received: message.payload.len() });
        }
        Ok(Some(message))
    }

    /// Waits (bounded by `clock`, naming `what`) for the next message; see
    /// [`Self::try_receive_message`].
    pub fn receive_message<C: Clock + ?Sized>(
        &mut self,
        clock: &C,
        timeout_ms: u64,
        what: &'static str,
        full_len: &dyn Fn(&RpcMessageHeader) -> Option<usize>,
    ) -> Result<GspMessage, TransportError> {
        wait_for(clock, timeout_ms, what, || self.try_receive_message(clock, timeout_ms, full_len).transpose())?
    }
}

#[cfg(test)]
pub(crate) mod fake;

#[cfg(test)]
mod tests;
