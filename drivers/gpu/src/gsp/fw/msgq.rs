//! The CPU/GSP message queues: queue headers (`msgqTxHeader`, `msgqRxHeader`,
//! `src/common/shared/msgq/inc/msgq/msgq_priv.h`), queue elements (`GSP_MSG_QUEUE_ELEMENT`,
//! `src/nvidia/inc/kernel/gpu/gsp/message_queue_priv.h`) with their checksum, and the shared
//! memory layout RM uses (`message_queue_cpu.c`), 535.261.03.
//!
//! Shared memory, one block of 4 KiB pages allocated together (`GspMsgQueuesInit`):
//!
//! ```text
//! page 0..      page table: bus address of every page of the block, 8 bytes each
//! cmdQueueOffset   RM command queue (CPU writes, GSP reads): msgqTxHeader, msgqRxHeader, entries
//! statQueueOffset  RM status queue (GSP writes, CPU reads): same shape
//! ```
//!
//! Each queue starts with the writer's `msgqTxHeader`; the reader's `msgqRxHeader` (its read
//! pointer) lives in the *other* queue's header page (`MSGQ_FLAGS_SWAP_RX`: the CPU's read pointer
//! for the status queue is in the command queue's header page and vice versa). Entries are 4 KiB
//! from `entryOff`. A record is one or more consecutive entries: a 48-byte element header, then
//! the RPC ([`super::rpc::RpcMessageHeader`] and parameters).
//!
//! Everything read from this memory is written by GSP-RM and is input: [`MsgqTxHeader::check_peer`]
//! and [`verify_element`] check it before anything is indexed with it.

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use core::fmt;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::rpc::RpcMessageHeader;

/// `MSGQ_VERSION`: the queue header version both sides must agree on.
pub const MSGQ_VERSION: u32 = 0;
/// `MSGQ_FLAGS_SWAP_RX`: read pointers live in the other queue's header page.
pub const MSGQ_FLAGS_SWAP_RX: u32 = 1;
/// `MSGQ_MSG_SIZE_MIN`: smallest entry size.
pub const MSGQ_MSG_SIZE_MIN: u32 = 16;
/// `MSGQ_META_MIN_ALIGN`: smallest header/entry alignment, as a power of two (8 bytes).
pub const MSGQ_META_MIN_ALIGN: u32 = 3;
/// `MSGQ_META_MAX_ALIGN`: largest header/entry alignment, as a power of two (4096 bytes).
pub const MSGQ_META_MAX_ALIGN: u32 = 12;

/// `RM_PAGE_SIZE`: the 4 KiB page of all these layouts.
pub const RM_PAGE_SIZE: u64 = 4096;
/// `GSP_MSG_QUEUE_ELEMENT_SIZE_MIN` (`RM_PAGE_SIZE`): one queue entry.
pub const GSP_MSG_QUEUE_ELEMENT_SIZE_MIN: u32 = 4096;
/// `GSP_MSG_QUEUE_ELEMENT_SIZE_MAX`: the largest record, 16 entries.
pub const GSP_MSG_QUEUE_ELEMENT_SIZE_MAX: u32 = GSP_MSG_QUEUE_ELEMENT_SIZE_MIN * 16;
/// `GSP_MSG_QUEUE_ELEMENT_HDR_SIZE`: offset of the RPC in an element.
pub const GSP_MSG_QUEUE_ELEMENT_HDR_SIZE: u32 = core::mem::offset_of!(GspMsgQueueElement, rpc) as u32;
/// `GSP_MSG_QUEUE_RPC_SIZE_MAX`: the largest RPC (header and parameters) in one record.
pub const GSP_MSG_QUEUE_RPC_SIZE_MAX: u32 = GSP_MSG_QUEUE_ELEMENT_SIZE_MAX - GSP_MSG_QUEUE_ELEMENT_HDR_SIZE;
/// `GSP_MSG_QUEUE_ALIGN`: queue alignment, as a power of two.
pub const GSP_MSG_QUEUE_ALIGN: u32 = 12;
/// `GSP_MSG_QUEUE_ELEMENT_ALIGN`: entry alignment, as a power of two.
pub const GSP_MSG_QUEUE_ELEMENT_ALIGN: u32 = 12;
/// `GSP_MSG_QUEUE_HEADER_SIZE`: bytes reserved for a queue's headers.
pub const GSP_MSG_QUEUE_HEADER_SIZE: u32 = 4096;
/// `GSP_MSG_QUEUE_HEADER_ALIGN`: header alignment, as a power of two (16 bytes).
pub const GSP_MSG_QUEUE_HEADER_ALIGN: u32 = 4;

/// `msgqTxHeader`: written by a queue's producer at the start of the queue. 32 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct MsgqTxHeader {
    /// `version`: [`MSGQ_VERSION`].
    pub version: u32,
    /// `size`: bytes of the queue, headers included.
    pub size: u32,
    /// `msgSize`: bytes per entry.
    pub msg_size: u32,
    /// `msgCount`: entries in the queue.
    pub msg_count: u32,
    /// `writePtr`: index of the next entry the producer will write.
    pub write_ptr: u32,
    /// `flags`: [`MSGQ_FLAGS_SWAP_RX`].
    pub flags: u32,
    /// `rxHdrOff`: offset of the `msgqRxHeader` from the queue start.
    pub rx_hdr_off: u32,
    /// `entryOff`: offset of entry 0 from the queue start.
    pub entry_off: u32,
}

/// `msgqRxHeader`: written by a queue's consumer. 4 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct MsgqRxHeader {
    /// `readPtr`: index of the next entry the consumer will read.
    pub read_ptr: u32,
}

const TX_HEADER_SIZE: u32 = core::mem::size_of::<MsgqTxHeader>() as u32;
const RX_HEADER_SIZE: u32 = core::mem::size_of::<MsgqRxHeader>() as u32;

impl MsgqTxHeader {
    /// The header a producer writes for a queue of `size` bytes with `msg_size`-byte entries,
    /// headers aligned to `1 << hdr_align` and entries to `1 << entry_align`, computed the way
    /// `msgqTxCreate` (`msgq.c`) computes it, with the same refusals.
    pub fn new(size: u32, msg_size: u32, hdr_align: u32, entry_align: u32, flags: u32) -> Result<Self, QueueError> {
        if msg_size < MSGQ_MSG_SIZE_MIN || msg_size > size {
            return Err(QueueError::BadEntrySize { msg_size, size });
        }
        for align in [hdr_align, entry_align] {
            if !(MSGQ_META_MIN_ALIGN..=MSGQ_META_MAX_ALIGN).contains(&align) {
                return Err(QueueError::BadAlignment { log2: align });
            }
        }
        let rx_hdr_off = align_up32(TX_HEADER_SIZE, 1 << hdr_align).ok_or(QueueError::TooSmall { size })?;
        let entry_off = rx_hdr_off
            .checked_add(RX_HEADER_SIZE)
            .and_then(|rx_end| align_up32(rx_end, 1 << entry_align))
            .ok_or(QueueError::TooSmall { size })?;
        match entry_off.checked_add(msg_size) {
            Some(end) if end <= size => {}
            _ => return Err(QueueError::TooSmall { size }),
        }
        // entryOff + msgSize <= size and msgSize >= MSGQ_MSG_SIZE_MIN, both checked above.
        let msg_count = size
            .checked_sub(entry_off)
            .and_then(|entries| entries.checked_div(msg_size))
            .ok_or(QueueError::TooSmall { size })?;
        Ok(Self { version: MSGQ_VERSION, size, msg_size, msg_count, write_ptr: 0, flags, rx_hdr_off, entry_off })
    }

    /// The header of a GSP message queue of `size` bytes, as `_gspMsgQueueInit`
    /// (`message_queue_cpu.c`) creates it: 4 KiB entries, 16-byte header alignment, 4 KiB entry
    /// alignment, `MSGQ_FLAGS_SWAP_RX`. For the 256 KiB RM queues: `rxHdrOff` 32, `entryOff`
    /// 4096, 63 entries.
    pub fn gsp_queue(size: u32) -> Result<Self, QueueError> {
        Self::new(
            size,
            GSP_MSG_QUEUE_ELEMENT_SIZE_MIN,
            GSP_MSG_QUEUE_HEADER_ALIGN,
            GSP_MSG_QUEUE_ELEMENT_ALIGN,
            MSGQ_FLAGS_SWAP_RX,
        )
    }

    /// Checks the producer header of a queue the other side owns (read from shared memory)
    /// against the `size` and `msg_size` we expect, the way `msgqRxLink` (`msgq.c`) does, plus
    /// the bounds that make its offsets safe to use: `rxHdrOff` and the entries inside the queue.
    pub fn check_peer(&self, size: u32, msg_size: u32) -> Result<(), QueueError> {
        let mismatch = |field, expected, found| Err(QueueError::PeerMismatch { field, expected, found });
        if self.version != MSGQ_VERSION {
            return mismatch("version", MSGQ_VERSION, self.version);
        }
        if self.size != size {
            return mismatch("size", size, self.size);
        }
        if self.msg_size != msg_size {
            return mismatch("msgSize", msg_size, self.msg_size);
        }
        if msg_size < MSGQ_MSG_SIZE_MIN {
            return Err(QueueError::BadEntrySize { msg_size, size });
        }
        if self.rx_hdr_off < TX_HEADER_SIZE {
            return Err(QueueError::PeerOffsets { rx_hdr_off: self.rx_hdr_off, entry_off: self.entry_off });
        }
        let rx_end = self.rx_hdr_off.checked_add(RX_HEADER_SIZE);
        match (rx_end, self.entry_off.checked_add(msg_size)) {
            (Some(rx_end), Some(first_entry_end)) if self.entry_off >= rx_end && first_entry_end <= size => {}
            _ => return Err(QueueError::PeerOffsets { rx_hdr_off: self.rx_hdr_off, entry_off: self.entry_off }),
        }
        // entryOff + msgSize <= size and msgSize >= MSGQ_MSG_SIZE_MIN, both checked above.
        let expected_count = size
            .checked_sub(self.entry_off)
            .and_then(|entries| entries.checked_div(msg_size))
            .ok_or(QueueError::PeerOffsets { rx_hdr_off: self.rx_hdr_off, entry_off: self.entry_off })?;
        if self.msg_count != expected_count {
            return mismatch("msgCount", expected_count, self.msg_count);
        }
        Ok(())
    }
}

fn align_up32(value: u32, align: u32) -> Option<u32> {
    let mask = align.checked_sub(1)?;
    Some(value.checked_add(mask)? & !mask)
}

/// `GSP_MSG_QUEUE_ELEMENT`: the header of a queue record, followed directly by the RPC.
/// 80 bytes with the RPC header; aligned to 8 (`NV_DECLARE_ALIGNED(rpc, 8)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C, align(8))]
pub struct GspMsgQueueElement {
    /// `authTagBuffer`: confidential-computing tag (unused here).
    pub auth_tag_buffer: [u8; 16],
    /// `aadBuffer`: confidential-computing additional data (unused here).
    pub aad_buffer: [u8; 16],
    /// `checkSum`: chosen so that [`checksum32`] of the record is zero.
    pub check_sum: u32,
    /// `seqNum`: the queue's running sequence number.
    pub seq_num: u32,
    /// `elemCount`: entries this record spans.
    pub elem_count: u32,
    /// Padding before `rpc` (C alignment).
    pub _padding0: u32,
    /// `rpc` (`rpc_message_header_v`).
    pub rpc: RpcMessageHeader,
}

/// The XOR-fold RM checks records with (`_checkSum32`, `message_queue_priv.h`): XOR of the
/// record as little-endian 64-bit words, then the two halves of the result XORed together.
///
/// RM reads whole words, so for a length that is not a multiple of 8 it reads up to 7 bytes past
/// the end, which the sender has zeroed (`GspMsgQueueSendCommand`); this function pads the last
/// word with zeros, which agrees whenever the sender did. Callers checking a record pass the
/// bytes rounded up to 8, as [`verify_element`] does.
pub fn checksum32(bytes: &[u8]) -> u32 {
    let mut acc = 0u64;
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        acc ^= u64::from_le_bytes(w);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let mut w = [0u8; 8];
        w.iter_mut().zip(tail).for_each(|(to, from)| *to = *from);
        acc ^= u64::from_le_bytes(w);
    }
    ((acc >> 32) as u32) ^ (acc as u32)
}

/// Entries a record of `bytes` bytes spans (`GSP_MSG_QUEUE_BYTES_TO_ELEMENTS`).
pub const fn bytes_to_elements(bytes: u32) -> u32 {
    bytes.div_ceil(GSP_MSG_QUEUE_ELEMENT_SIZE_MIN)
}

/// Offset of `rpc.length` in a record.
const RPC_LENGTH_AT: usize = GSP_MSG_QUEUE_ELEMENT_HDR_SIZE as usize + core::mem::offset_of!(RpcMessageHeader, length);
const ELEMENT_SIZE: u32 = core::mem::size_of::<GspMsgQueueElement>() as u32;

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

fn write_u32(bytes: &mut [u8], at: usize, value: u32) {
    if let Some(b) = at.checked_add(4).and_then(|end| bytes.get_mut(at..end)) {
        b.copy_from_slice(&value.to_le_bytes());
    }
}

/// Record size (element header and RPC) from `rpc.length`, checked against the limits RM
/// applies (`sizeof(GSP_MSG_QUEUE_ELEMENT)` to `GSP_MSG_QUEUE_ELEMENT_SIZE_MAX`).
fn record_size(rpc_length: u32) -> Result<u32, ElementError> {
    match GSP_MSG_QUEUE_ELEMENT_HDR_SIZE.checked_add(rpc_length) {
        Some(size) if (ELEMENT_SIZE..=GSP_MSG_QUEUE_ELEMENT_SIZE_MAX).contains(&size) => Ok(size),
        _ => Err(ElementError::BadLength { rpc_length }),
    }
}

/// Finishes a record the caller has written into `record` (element header space, then the RPC
/// header with its `length`, then the parameters) for sending, as `GspMsgQueueSendCommand`
/// (`message_queue_cpu.c`) does without confidential computing: zero the bytes up to the next
/// 8-byte boundary, set `seqNum` and `elemCount`, zero `checkSum`, then store the
/// [`checksum32`] of the record in it. Returns the number of 4 KiB entries to copy.
pub fn seal_element(record: &mut [u8], seq_num: u32) -> Result<u32, ElementError> {
    let rpc_length = read_u32(record, RPC_LENGTH_AT).ok_or(ElementError::TooShort { len: record.len() })?;
    let size = record_size(rpc_length)?;
    let padded = size.next_multiple_of(8) as usize;
    let Some(tail) = record.get_mut(size as usize..padded) else {
        return Err(ElementError::Truncated { needed: padded, len: record.len() });
    };
    tail.fill(0);
    let elem_count = bytes_to_elements(size);
    write_u32(record, core::mem::offset_of!(GspMsgQueueElement, seq_num), seq_num);
    write_u32(record, core::mem::offset_of!(GspMsgQueueElement, elem_count), elem_count);
    write_u32(record, core::mem::offset_of!(GspMsgQueueElement, check_sum), 0);
    // In bounds: the tail up to `padded` was found above.
    let sum = checksum32(record.get(..padded).unwrap_or(&[]));
    write_u32(record, core::mem::offset_of!(GspMsgQueueElement, check_sum), sum);
    Ok(elem_count)
}

/// A record read from a queue and checked by [`verify_element`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceivedRecord<'a> {
    /// The element header and RPC header, copied out.
    pub element: GspMsgQueueElement,
    /// The RPC's parameters (`rpc.length` minus the RPC header).
    pub params: &'a [u8],
}

/// Checks a record copied out of a queue (its `elemCount` entries, contiguous), following
/// `GspMsgQueueReceiveStatus` (`message_queue_cpu.c`) without confidential computing, but
/// checking `elemCount` and `rpc.length` against the bytes at hand *before* computing the
/// checksum over them (RM trusts both). The sequence number is the caller's to compare.
pub fn verify_element(record: &[u8]) -> Result<ReceivedRecord<'_>, ElementError> {
    let (element, _) =
        GspMsgQueueElement::read_from_prefix(record).map_err(|_| ElementError::TooShort { len: record.len() })?;
    let max_elements = GSP_MSG_QUEUE_ELEMENT_SIZE_MAX / GSP_MSG_QUEUE_ELEMENT_SIZE_MIN;
    if element.elem_count == 0 || element.elem_count > max_elements {
        return Err(ElementError::BadElementCount { elem_count: element.elem_count });
    }
    // At most 16 entries of 4 KiB, checked above.
    let span = element
        .elem_count
        .checked_mul(GSP_MSG_QUEUE_ELEMENT_SIZE_MIN)
        .ok_or(ElementError::BadElementCount { elem_count: element.elem_count })? as usize;
    if record.len() < span {
        return Err(ElementError::Truncated { needed: span, len: record.len() });
    }
    let size = record_size(element.rpc.length)?;
    if size as usize > span {
        return Err(ElementError::LengthBeyondElements {
            rpc_length: element.rpc.length,
            elem_count: element.elem_count,
        });
    }
    // `span` is a multiple of 8 no smaller than `size`, so the rounded length is in bounds.
    let padded = size.next_multiple_of(8) as usize;
    let residue = checksum32(record.get(..padded).unwrap_or(&[]));
    if residue != 0 {
        return Err(ElementError::BadChecksum { residue, seq_num: element.seq_num });
    }
    let params = record.get(ELEMENT_SIZE as usize..size as usize).unwrap_or(&[]);
    Ok(ReceivedRecord { element, params })
}

/// Why a queue record was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementError {
    /// Fewer bytes than an element header and RPC header.
    TooShort { len: usize },
    /// `rpc.length` makes a record smaller than `GSP_MSG_QUEUE_ELEMENT` or larger than
    /// `GSP_MSG_QUEUE_ELEMENT_SIZE_MAX`.
    BadLength { rpc_length: u32 },
    /// `elemCount` is 0 or more than 16.
    BadElementCount { elem_count: u32 },
    /// The record needs more bytes than were given.
    Truncated { needed: usize, len: usize },
    /// `rpc.length` reaches past the entries `elemCount` says the record spans.
    LengthBeyondElements { rpc_length: u32, elem_count: u32 },
    /// The checksum of the record is not zero.
    BadChecksum { residue: u32, seq_num: u32 },
}

impl fmt::Display for ElementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ElementError::TooShort { len } => {
                write!(f, "message queue record of {len} bytes is shorter than its {ELEMENT_SIZE}-byte header")
            }
            ElementError::BadLength { rpc_length } => write!(
                f,
                "message queue record with rpc.length {rpc_length}: record must be {ELEMENT_SIZE}..={GSP_MSG_QUEUE_ELEMENT_SIZE_MAX} bytes"
            ),
            ElementError::BadElementCount { elem_count } => {
                write!(f, "message queue record spans {elem_count} entries (1..=16 allowed)")
            }
            ElementError::Truncated { needed, len } => {
                write!(f, "message queue record needs {needed} bytes, {len} available")
            }
            ElementError::LengthBeyondElements { rpc_length, elem_count } => write!(
                f,
                "message queue record rpc.length {rpc_length} does not fit in its {elem_count} entries"
            ),
            ElementError::BadChecksum { residue, seq_num } => {
                write!(f, "message queue record seqNum {seq_num}: bad checksum (residue {residue:#010x})")
            }
        }
    }
}

/// The shared queue memory RM allocates, as `_getMsgQueueParams` (`message_queue_cpu.c`)
/// sizes it on silicon without registry overrides and without the task-ISR queue (which 535
/// never enables: `bIsTaskIsrQueueRequired` is false in `g_kernel_gsp_nvoc.c`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageQueueLayout {
    /// `commandQueueSize`: bytes of the RM command queue.
    pub command_queue_size: u64,
    /// `statusQueueSize`: bytes of the RM status queue.
    pub status_queue_size: u64,
    /// `pageTableEntryCount`: the queue pages plus the pages needed to hold their entries.
    pub page_table_entry_count: u32,
    /// `pageTableSize`: the entries' bytes rounded up to a page; the command queue starts here.
    pub page_table_size: u64,
}

/// RM's default queue size (`defaultCommandQueueSize`, `defaultStatusQueueSize`): 256 KiB.
pub const GSP_DEFAULT_QUEUE_SIZE: u64 = 0x40000;

impl MessageQueueLayout {
    /// RM's default: 256 KiB each way, so 128 queue pages, 129 page-table entries in one page.
    pub const fn rm_default() -> Self {
        // 0x80000 bytes of queues = 128 pages; their 8-byte entries need one more page.
        Self {
            command_queue_size: GSP_DEFAULT_QUEUE_SIZE,
            status_queue_size: GSP_DEFAULT_QUEUE_SIZE,
            page_table_entry_count: 129,
            page_table_size: 0x1000,
        }
    }

    /// The layout for queues of the given sizes, each a whole number of pages (RM asserts this)
    /// and at least one entry plus headers.
    pub fn new(command_queue_size: u64, status_queue_size: u64) -> Result<Self, QueueError> {
        for size in [command_queue_size, status_queue_size] {
            if size % RM_PAGE_SIZE != 0 || size < 2 * RM_PAGE_SIZE || size > u32::MAX as u64 {
                return Err(QueueError::BadQueueSize { size });
            }
        }
        // Both sizes are below 4 GiB, checked above, so none of this overflows.
        let too_large = QueueError::BadQueueSize { size: command_queue_size };
        let queue_pages = command_queue_size.checked_add(status_queue_size).ok_or(too_large)? / RM_PAGE_SIZE;
        let table_pages = queue_pages.checked_mul(8).ok_or(too_large)?.div_ceil(RM_PAGE_SIZE);
        let entries = queue_pages.checked_add(table_pages).ok_or(too_large)?;
        let page_table_entry_count = u32::try_from(entries).map_err(|_| too_large)?;
        let page_table_size =
            entries.checked_mul(8).and_then(|bytes| bytes.checked_next_multiple_of(RM_PAGE_SIZE)).ok_or(too_large)?;
        Ok(Self { command_queue_size, status_queue_size, page_table_entry_count, page_table_size })
    }

    /// `cmdQueueOffset`: where the command queue starts.
    pub const fn cmd_queue_offset(&self) -> u64 {
        self.page_table_size
    }

    /// `statQueueOffset`: where the status queue starts.
    ///
    /// Saturates rather than wraps for a layout whose public fields were set out of range; one
    /// from [`Self::new`] or [`Self::rm_default`] is far below that.
    pub const fn stat_queue_offset(&self) -> u64 {
        self.page_table_size.saturating_add(self.command_queue_size)
    }

    /// Bytes of the whole shared block (`sharedBufSize`).
    ///
    /// Saturates like [`Self::stat_queue_offset`].
    pub const fn shared_size(&self) -> u64 {
        self.stat_queue_offset().saturating_add(self.status_queue_size)
    }

    /// Pages of the whole shared block.
    pub const fn page_count(&self) -> u64 {
        self.shared_size() / RM_PAGE_SIZE
    }

    /// Fills the page table at the start of the block: `page_addrs` are the bus addresses of
    /// the block's pages in order (`page_count()` of them, each 4 KiB aligned); the first
    /// `page_table_entry_count` go into `table` (the first `page_table_size` bytes of the block)
    /// as little-endian `u64`s, the rest of `table` is zeroed. The first address is
    /// `sharedMemPhysAddr`.
    pub fn write_page_table(&self, page_addrs: &[u64], table: &mut [u8]) -> Result<(), QueueError> {
        if page_addrs.len() as u64 != self.page_count() {
            return Err(QueueError::PageCount { expected: self.page_count(), found: page_addrs.len() as u64 });
        }
        if table.len() as u64 != self.page_table_size {
            return Err(QueueError::TableSize { expected: self.page_table_size, found: table.len() as u64 });
        }
        if let Some((index, &addr)) = page_addrs.iter().enumerate().find(|(_, a)| *a % RM_PAGE_SIZE != 0) {
            return Err(QueueError::UnalignedPage { index, addr });
        }
        table.fill(0);
        for (slot, addr) in table.chunks_exact_mut(8).zip(page_addrs.iter().take(self.page_table_entry_count as usize))
        {
            slot.copy_from_slice(&addr.to_le_bytes());
        }
        Ok(())
    }
}

/// Why a queue header or queue layout was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// Entry size below `MSGQ_MSG_SIZE_MIN` or above the queue size.
    BadEntrySize { msg_size: u32, size: u32 },
    /// Alignment outside `MSGQ_META_MIN_ALIGN..=MSGQ_META_MAX_ALIGN`.
    BadAlignment { log2: u32 },
    /// The queue cannot hold its headers and one entry.
    TooSmall { size: u32 },
    /// The other side's header disagrees with what we expect.
    PeerMismatch { field: &'static str, expected: u32, found: u32 },
    /// The other side's header offsets overlap or leave the queue.
    PeerOffsets { rx_hdr_off: u32, entry_off: u32 },
    /// A queue size that is not a whole number of pages (at least two) below 4 GiB.
    BadQueueSize { size: u64 },
    /// Wrong number of page addresses for the shared block.
    PageCount { expected: u64, found: u64 },
    /// Wrong page-table buffer size.
    TableSize { expected: u64, found: u64 },
    /// A page address that is not 4 KiB aligned.
    UnalignedPage { index: usize, addr: u64 },
}

impl fmt::Display for QueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            QueueError::BadEntrySize { msg_size, size } => {
                write!(f, "message queue entry size {msg_size} invalid for a {size}-byte queue")
            }
            QueueError::BadAlignment { log2 } => {
                write!(f, "message queue alignment 2^{log2} out of range 2^3..2^12")
            }
            QueueError::TooSmall { size } => {
                write!(f, "message queue of {size} bytes cannot hold headers and an entry")
            }
            QueueError::PeerMismatch { field, expected, found } => {
                write!(f, "GSP message queue header: {field} is {found}, expected {expected}")
            }
            QueueError::PeerOffsets { rx_hdr_off, entry_off } => {
                write!(f, "GSP message queue header: rxHdrOff {rx_hdr_off:#x} / entryOff {entry_off:#x} overlap or leave the queue")
            }
            QueueError::BadQueueSize { size } => {
                write!(f, "message queue size {size:#x} is not a whole number of pages")
            }
            QueueError::PageCount { expected, found } => {
                write!(f, "message queue block needs {expected} page addresses, got {found}")
            }
            QueueError::TableSize { expected, found } => {
                write!(f, "message queue page table needs {expected} bytes, got {found}")
            }
            QueueError::UnalignedPage { index, addr } => {
                write!(f, "message queue page {index} at {addr:#x} is not 4 KiB aligned")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    // Tests index and compute offsets on purpose, over inputs they build themselves.
    #![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use super::*;
    use crate::gsp::fw::rpc::{RpcFunction, RPC_MESSAGE_HEADER_SIZE};
    use alloc::vec;

    #[test]
    fn checksum_folds_words_and_halves() {
        // One word: 0x11223344_55667788 folds to 0x11223344 ^ 0x55667788 = 0x444444cc.
        assert_eq!(checksum32(&0x1122_3344_5566_7788u64.to_le_bytes()), 0x4444_44cc);
        // Two equal words cancel.
        let mut two = [0u8; 16];
        two[..8].copy_from_slice(&7u64.to_le_bytes());
        two[8..].copy_from_slice(&7u64.to_le_bytes());
        assert_eq!(checksum32(&two), 0);
        // A partial last word is zero-padded: [1, 2, 3] reads as 0x030201.
        assert_eq!(checksum32(&[1, 2, 3]), 0x0003_0201);
        assert_eq!(checksum32(&[]), 0);
    }

    /// A known element: GSP_SET_SYSTEM_INFO request with 4 parameter bytes 0xdeadbeef, seqNum 5.
    /// Words (little-endian u64) of the 84 bytes, padded to 88:
    ///  0..32  auth tag and AAD: zero
    ///  32     checkSum | seqNum << 32          = 0x00000005_<sum>
    ///  40     elemCount | padding << 32        = 0x00000000_00000001
    ///  48     header_version | signature << 32 = 0x43505256_03000000
    ///  56     length | function << 32          = 0x00000048_00000024  (36 bytes, function 72)
    ///  64     rpc_result | rpc_result_private  = 0xffffffff_ffffffff
    ///  72     sequence | u << 32               = 0
    ///  80     params, zero-padded              = 0x00000000_deadbeef
    /// With checkSum 0, XOR of the high halves: 5 ^ 0x43505256 ^ 0x48 ^ 0xffffffff = 0xbcafade4;
    /// of the low halves: 1 ^ 0x03000000 ^ 0x24 ^ 0xffffffff ^ 0xdeadbeef = 0x22524135;
    /// folded: 0xbcafade4 ^ 0x22524135 = 0x9efdecd1. Storing that in checkSum (a low half)
    /// makes the record's checksum zero.
    #[test]
    fn checksum_of_a_known_element() {
        let mut record = vec![0u8; 4096];
        let rpc = RpcMessageHeader::request(RpcFunction::GspSetSystemInfo.raw(), 4).unwrap();
        record[48..80].copy_from_slice(rpc.as_bytes());
        record[80..84].copy_from_slice(&0xdead_beefu32.to_le_bytes());
        record[84..88].copy_from_slice(&[0xaa; 4]); // stale bytes the seal must clear
        let elements = seal_element(&mut record, 5).unwrap();
        assert_eq!(elements, 1);
        assert_eq!(&record[84..88], &[0; 4]);
        assert_eq!(read_u32(&record, 32), Some(0x9efd_ecd1));
        assert_eq!(checksum32(&record[..88]), 0);
        let received = verify_element(&record).unwrap();
        assert_eq!(received.element.seq_num, 5);
        assert_eq!(received.element.elem_count, 1);
        assert_eq!(received.element.rpc, RpcMessageHeader { sequence: 0, ..rpc });
        assert_eq!(received.params, &0xdead_beefu32.to_le_bytes());
    }

    #[test]
    fn verify_refuses_corrupt_records() {
        let mut record = vec![0u8; 8192];
        let rpc = RpcMessageHeader::request(RpcFunction::SetRegistry.raw(), 5000).unwrap();
        record[48..80].copy_from_slice(rpc.as_bytes());
        assert_eq!(seal_element(&mut record, 9).unwrap(), 2, "48 + 32 + 5000 bytes span two entries");
        assert!(verify_element(&record).is_ok());
        // Only the first entry at hand.
        assert_eq!(verify_element(&record[..4096]), Err(ElementError::Truncated { needed: 8192, len: 4096 }));
        // A flipped payload bit.
        let mut bad = record.clone();
        bad[1000] ^= 0x10;
        assert!(matches!(verify_element(&bad), Err(ElementError::BadChecksum { seq_num: 9, .. })));
        // Lengths out of range, element counts out of range, short input: errors, no panics.
        let mut bad = record.clone();
        bad[RPC_LENGTH_AT..RPC_LENGTH_AT + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(verify_element(&bad), Err(ElementError::BadLength { rpc_length: u32::MAX }));
        let mut bad = record.clone();
        bad[RPC_LENGTH_AT..RPC_LENGTH_AT + 4].copy_from_slice(&9000u32.to_le_bytes());
        assert!(matches!(verify_element(&bad), Err(ElementError::LengthBeyondElements { .. })));
        let mut bad = record.clone();
        bad[40..44].copy_from_slice(&17u32.to_le_bytes());
        assert_eq!(verify_element(&bad), Err(ElementError::BadElementCount { elem_count: 17 }));
        assert_eq!(verify_element(&record[..79]), Err(ElementError::TooShort { len: 79 }));
        assert!(seal_element(&mut [0u8; 10], 0).is_err());
        let mut short_rpc = vec![0u8; 4096];
        short_rpc[RPC_LENGTH_AT..RPC_LENGTH_AT + 4].copy_from_slice(&(RPC_MESSAGE_HEADER_SIZE - 1).to_le_bytes());
        assert!(matches!(seal_element(&mut short_rpc, 0), Err(ElementError::BadLength { .. })));
    }

    #[test]
    fn element_round_trips_through_bytes() {
        let element = GspMsgQueueElement {
            check_sum: 0x1234_5678,
            seq_num: 3,
            elem_count: 1,
            rpc: RpcMessageHeader::request(RpcFunction::Free.raw(), 16).unwrap(),
            ..Default::default()
        };
        let bytes = element.as_bytes();
        assert_eq!(bytes.len(), 80);
        assert_eq!(&bytes[32..36], &0x1234_5678u32.to_le_bytes());
        assert_eq!(&bytes[52..56], b"VRPC");
        assert_eq!(GspMsgQueueElement::read_from_bytes(bytes).unwrap(), element);
        assert_eq!(GSP_MSG_QUEUE_ELEMENT_HDR_SIZE, 48);
    }

    #[test]
    fn gsp_queue_header_matches_msgq_tx_create() {
        let tx = MsgqTxHeader::gsp_queue(0x40000).unwrap();
        // rxHdrOff = align_up(32, 16) = 32; entryOff = align_up(32 + 4, 4096) = 4096;
        // msgCount = (0x40000 - 0x1000) / 0x1000 = 63.
        assert_eq!(
            tx,
            MsgqTxHeader {
                version: 0,
                size: 0x40000,
                msg_size: 4096,
                msg_count: 63,
                write_ptr: 0,
                flags: 1,
                rx_hdr_off: 32,
                entry_off: 4096
            }
        );
        assert_eq!(tx.check_peer(0x40000, 4096), Ok(()));
        assert_eq!(MsgqTxHeader::read_from_bytes(tx.as_bytes()).unwrap(), tx);
        assert_eq!(MsgqTxHeader::gsp_queue(4096), Err(QueueError::TooSmall { size: 4096 }));
        assert!(MsgqTxHeader::new(0x40000, 8, 4, 12, 0).is_err());
        assert!(MsgqTxHeader::new(0x40000, 4096, 2, 12, 0).is_err());
        assert!(MsgqTxHeader::new(0x40000, 4096, 4, 13, 0).is_err());
    }

    #[test]
    fn peer_header_checks() {
        let good = MsgqTxHeader::gsp_queue(0x40000).unwrap();
        assert!(matches!(good.check_peer(0x80000, 4096), Err(QueueError::PeerMismatch { field: "size", .. })));
        let mut bad = good;
        bad.version = 1;
        assert!(matches!(bad.check_peer(0x40000, 4096), Err(QueueError::PeerMismatch { field: "version", .. })));
        let mut bad = good;
        bad.entry_off = u32::MAX;
        assert!(matches!(bad.check_peer(0x40000, 4096), Err(QueueError::PeerOffsets { .. })));
        let mut bad = good;
        bad.rx_hdr_off = 4094;
        assert!(matches!(bad.check_peer(0x40000, 4096), Err(QueueError::PeerOffsets { .. })));
        let mut bad = good;
        bad.msg_count = 64;
        assert!(matches!(bad.check_peer(0x40000, 4096), Err(QueueError::PeerMismatch { field: "msgCount", .. })));
        let mut bad = good;
        bad.msg_size = 0;
        assert!(bad.check_peer(0x40000, 0).is_err());
    }

    #[test]
    fn queue_layout_follows_get_msg_queue_params() {
        assert_eq!(MessageQueueLayout::new(0x40000, 0x40000), Ok(MessageQueueLayout::rm_default()));
        let layout = MessageQueueLayout::rm_default();
        assert_eq!(layout.cmd_queue_offset(), 0x1000);
        assert_eq!(layout.stat_queue_offset(), 0x41000);
        assert_eq!(layout.page_count(), 129);
        // 2 MiB each way: 1024 queue pages, 1024 * 8 / 4096 = 2 table pages -> 1026 entries,
        // 8208 bytes -> three pages of table (RM's count stays 1026).
        let big = MessageQueueLayout::new(0x20_0000, 0x20_0000).unwrap();
        assert_eq!(big.page_table_entry_count, 1026);
        assert_eq!(big.page_table_size, 0x3000);
        assert!(MessageQueueLayout::new(0x40001, 0x40000).is_err());

        let pages: alloc::vec::Vec<u64> = (0..129).map(|i| 0x10_0000 + i * 0x1000).collect();
        let mut table = vec![0xffu8; 0x1000];
        layout.write_page_table(&pages, &mut table).unwrap();
        assert_eq!(&table[0..8], &0x10_0000u64.to_le_bytes());
        assert_eq!(&table[128 * 8..129 * 8], &(0x10_0000u64 + 128 * 0x1000).to_le_bytes());
        assert!(table[129 * 8..].iter().all(|&b| b == 0));
        assert!(matches!(layout.write_page_table(&pages[..5], &mut table), Err(QueueError::PageCount { .. })));
        let mut odd = pages.clone();
        odd[7] += 8;
        assert_eq!(
            layout.write_page_table(&odd, &mut table),
            Err(QueueError::UnalignedPage { index: 7, addr: odd[7] })
        );
    }
}
