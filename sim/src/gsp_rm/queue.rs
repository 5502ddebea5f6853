//! GSP-RM's side of the shared message queues (`nvgpu::gsp::fw::msgq`): the command queue it reads
//! and the status queue it writes, through the page table at the start of the shared block.
//!
//! Follows `msgq.c` (`msgqRxLink`, `msgqTxCreate`, the ring arithmetic) and
//! `message_queue_cpu.c` (records, checksums, sequence numbers), both 535.261.03, from the GSP
//! side. With `MSGQ_FLAGS_SWAP_RX` GSP-RM keeps its read pointer of the command queue in the
//! status queue's header page, and reads the CPU's read pointer of the status queue from the
//! command queue's header page.
//!
//! The model reads the queue headers and records with its own reading of those files ([`record`]
//! and [`gsp_queue_header`]), not with the driver's `nvgpu::gsp::fw::msgq` code: the two are
//! compared in this module's tests, so a mistake in one shows as a disagreement.

use alloc::vec;
use alloc::vec::Vec;

use nvgpu::gsp::fw::init_args::MessageQueueInitArguments;
use nvgpu::gsp::fw::msgq::{
    MsgqTxHeader, GSP_MSG_QUEUE_ELEMENT_SIZE_MAX, GSP_MSG_QUEUE_ELEMENT_SIZE_MIN, MSGQ_FLAGS_SWAP_RX, MSGQ_VERSION,
    RM_PAGE_SIZE,
};
use nvgpu::gsp::fw::rpc::{RpcMessageHeader, NV_VGPU_MSG_SIGNATURE_VALID, RPC_HEADER_VERSION};

use super::error::GspRmError;
use crate::memory::SystemMemory;

/// Bytes of one queue entry (`GSP_MSG_QUEUE_ELEMENT_SIZE_MIN`, one RM page).
const ENTRY: u64 = GSP_MSG_QUEUE_ELEMENT_SIZE_MIN as u64;

/// `msgqTxHeader` as `msgq.h` lays it out: eight `NvU32`, in this order.
mod tx {
    pub const VERSION: usize = 0;
    pub const SIZE: usize = 4;
    pub const MSG_SIZE: usize = 8;
    pub const MSG_COUNT: usize = 12;
    pub const WRITE_PTR: usize = 16;
    pub const FLAGS: usize = 20;
    pub const RX_HDR_OFF: usize = 24;
    pub const ENTRY_OFF: usize = 28;
    pub const BYTES: usize = 32;
    /// `msgqRxHeader`: one `NvU32 readPtr`.
    pub const RX_BYTES: u32 = 4;
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn put_u32(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// A `msgqTxHeader` read from its 32 bytes.
fn decode_tx_header(raw: &[u8; tx::BYTES]) -> MsgqTxHeader {
    MsgqTxHeader {
        version: u32_at(raw, tx::VERSION),
        size: u32_at(raw, tx::SIZE),
        msg_size: u32_at(raw, tx::MSG_SIZE),
        msg_count: u32_at(raw, tx::MSG_COUNT),
        write_ptr: u32_at(raw, tx::WRITE_PTR),
        flags: u32_at(raw, tx::FLAGS),
        rx_hdr_off: u32_at(raw, tx::RX_HDR_OFF),
        entry_off: u32_at(raw, tx::ENTRY_OFF),
    }
}

fn encode_tx_header(h: &MsgqTxHeader) -> [u8; tx::BYTES] {
    let mut raw = [0u8; tx::BYTES];
    for (at, v) in [
        (tx::VERSION, h.version),
        (tx::SIZE, h.size),
        (tx::MSG_SIZE, h.msg_size),
        (tx::MSG_COUNT, h.msg_count),
        (tx::WRITE_PTR, h.write_ptr),
        (tx::FLAGS, h.flags),
        (tx::RX_HDR_OFF, h.rx_hdr_off),
        (tx::ENTRY_OFF, h.entry_off),
    ] {
        put_u32(&mut raw, at, v);
    }
    raw
}

/// The producer header of a GSP queue of `size` bytes, as the model reads `msgqTxCreate`
/// (`msgq.c`) called by `_gspMsgQueueInit` (`message_queue_cpu.c`): the receive header follows
/// the 32-byte transmit header at the next 16-byte boundary (32), entries start at the first
/// 4 KiB boundary after the 4-byte receive header (4096), each entry one 4 KiB page, and as many
/// entries as fit; read pointers swapped into the other queue (`MSGQ_FLAGS_SWAP_RX`). `None` when
/// not one entry fits.
pub(crate) fn gsp_queue_header(size: u32) -> Option<MsgqTxHeader> {
    let entry = GSP_MSG_QUEUE_ELEMENT_SIZE_MIN;
    let rx_hdr_off = (tx::BYTES as u32).next_multiple_of(16);
    let entry_off = (rx_hdr_off + tx::RX_BYTES).next_multiple_of(4096);
    let msg_count = size.checked_sub(entry_off)? / entry;
    (msg_count > 0).then_some(MsgqTxHeader {
        version: MSGQ_VERSION,
        size,
        msg_size: entry,
        msg_count,
        write_ptr: 0,
        flags: MSGQ_FLAGS_SWAP_RX,
        rx_hdr_off,
        entry_off,
    })
}

/// Queue records (`GSP_MSG_QUEUE_ELEMENT`, `message_queue_priv.h`) as the model reads them: 16
/// bytes `authTagBuffer`, 16 bytes `aadBuffer`, then `checkSum`, `seqNum`, `elemCount` (`NvU32`
/// each), 4 bytes of padding, and the `rpc_message_header_v` at byte 48: `header_version`,
/// `signature`, `length`, `function`, `rpc_result`, `rpc_result_private`, `sequence`, `u`. A
/// record spans `elemCount` 4 KiB entries; its checksum is the XOR of its bytes (up to
/// `rpc.length` past the RPC header's start, rounded up to 8) as 64-bit little-endian words,
/// folded to 32 bits, and a sealed record folds to zero (`_checkSum32`).
pub(crate) mod record {
    use super::{put_u32, u32_at, GspRmError, RpcMessageHeader, ENTRY, GSP_MSG_QUEUE_ELEMENT_SIZE_MAX};

    pub const CHECK_SUM: usize = 32;
    pub const SEQ_NUM: usize = 36;
    pub const ELEM_COUNT: usize = 40;
    /// Where the RPC header starts.
    pub const RPC: usize = 48;
    /// Bytes of the RPC header: where the parameters start, after `RPC`.
    pub const RPC_BYTES: usize = 32;
    /// Most entries one record spans.
    pub const MAX_ENTRIES: u32 = GSP_MSG_QUEUE_ELEMENT_SIZE_MAX / ENTRY as u32;

    /// The 64-bit XOR fold of `bytes` (a multiple of 8 long).
    pub fn fold(bytes: &[u8]) -> u32 {
        let x = bytes.chunks(8).fold(0u64, |acc, w| {
            let mut word = [0u8; 8];
            word[..w.len()].copy_from_slice(w);
            acc ^ u64::from_le_bytes(word)
        });
        (x as u32) ^ ((x >> 32) as u32)
    }

    fn header_at(bytes: &[u8]) -> RpcMessageHeader {
        let w = |i: usize| u32_at(bytes, RPC + 4 * i);
        RpcMessageHeader {
            header_version: w(0),
            signature: w(1),
            length: w(2),
            function: w(3),
            rpc_result: w(4),
            rpc_result_private: w(5),
            sequence: w(6),
            u: w(7),
        }
    }

    /// Bytes the checksum covers for an RPC of `length` bytes; `None` when the RPC does not fit a
    /// record or is shorter than its header.
    fn covered(length: u32) -> Option<usize> {
        let size = RPC.checked_add(usize::try_from(length).ok()?)?;
        (length as usize >= RPC_BYTES && size <= GSP_MSG_QUEUE_ELEMENT_SIZE_MAX as usize)
            .then_some(size.next_multiple_of(8))
    }

    /// Entries a record of `elem_count` read from its first entry spans, checked.
    pub fn entries(first: &[u8]) -> Result<u32, GspRmError> {
        let n = u32_at(first, ELEM_COUNT);
        if n == 0 || n > MAX_ENTRIES {
            return Err(GspRmError::BadRecord { what: "elemCount not 1..=16", value: n });
        }
        Ok(n)
    }

    /// A whole record (its `elemCount` entries) checked: length within the entries, checksum.
    /// Returns the sequence number, the RPC header and the parameters.
    pub fn open(bytes: &[u8]) -> Result<(u32, RpcMessageHeader, &[u8]), GspRmError> {
        let n = entries(bytes)?;
        let span = n as usize * ENTRY as usize;
        if bytes.len() < span {
            return Err(GspRmError::BadRecord { what: "truncated", value: span as u32 });
        }
        let header = header_at(bytes);
        let Some(end) = covered(header.length) else {
            return Err(GspRmError::BadRecord { what: "rpc.length out of range", value: header.length });
        };
        if end > span {
            return Err(GspRmError::BadRecord { what: "rpc.length beyond elemCount entries", value: header.length });
        }
        let residue = fold(&bytes[..end]);
        if residue != 0 {
            return Err(GspRmError::BadRecord { what: "bad checksum (residue)", value: residue });
        }
        let params = &bytes[RPC + RPC_BYTES..RPC + header.length as usize];
        Ok((u32_at(bytes, SEQ_NUM), header, params))
    }

    /// A record for `header` (its `length` covering `params`) and `params`, sealed with `seq`:
    /// whole entries, zero past the RPC.
    pub fn seal(header: &RpcMessageHeader, params: &[u8], seq: u32) -> alloc::vec::Vec<u8> {
        let size = RPC + RPC_BYTES + params.len();
        let n = size.div_ceil(ENTRY as usize);
        let mut bytes = alloc::vec![0u8; n * ENTRY as usize];
        let words = [
            header.header_version,
            header.signature,
            header.length,
            header.function,
            header.rpc_result,
            header.rpc_result_private,
            header.sequence,
            header.u,
        ];
        for (i, w) in words.into_iter().enumerate() {
            put_u32(&mut bytes, RPC + 4 * i, w);
        }
        bytes[RPC + RPC_BYTES..size].copy_from_slice(params);
        put_u32(&mut bytes, SEQ_NUM, seq);
        put_u32(&mut bytes, ELEM_COUNT, n as u32);
        let sum = fold(&bytes[..size.next_multiple_of(8)]);
        put_u32(&mut bytes, CHECK_SUM, sum);
        bytes
    }
}

/// The shared block as GSP-RM maps it: its pages, by bus address, in block order.
#[derive(Clone, Debug)]
pub(crate) struct SharedBlock {
    pages: Vec<u64>,
}

impl SharedBlock {
    /// Reads the page table the CPU wrote at `args.sharedMemPhysAddr` (`pageTableEntryCount`
    /// entries, each the bus address of one page of the block, the table's own pages first).
    pub fn map(args: &MessageQueueInitArguments, memory: &dyn SystemMemory) -> Result<Self, GspRmError> {
        let count = args.page_table_entry_count;
        let root = args.shared_mem_phys_addr;
        if root == 0 || !root.is_multiple_of(RM_PAGE_SIZE) {
            return Err(GspRmError::RmArgs { what: "sharedMemPhysAddr not a 4 KiB-aligned page", value: root });
        }
        if count < 3 {
            return Err(GspRmError::RmArgs { what: "pageTableEntryCount below 3", value: count.into() });
        }
        let mut pages: Vec<u64> = Vec::with_capacity(count as usize);
        for index in 0..count {
            let at = u64::from(index) * 8;
            // The entry lives in table page `at / 4096`, whose address is an earlier entry (page 0
            // is sharedMemPhysAddr itself).
            let table_page = if at < RM_PAGE_SIZE {
                root
            } else {
                let p = (at / RM_PAGE_SIZE) as usize;
                *pages.get(p).ok_or(GspRmError::PageTable { what: "table page not yet mapped", index, value: at })?
            };
            let mut raw = [0u8; 8];
            if !memory.read(table_page + at % RM_PAGE_SIZE, &mut raw) {
                return Err(GspRmError::PageTable { what: "entry unreadable", index, value: table_page });
            }
            let entry = u64::from_le_bytes(raw);
            if entry == 0 || !entry.is_multiple_of(RM_PAGE_SIZE) {
                return Err(GspRmError::PageTable { what: "not a 4 KiB-aligned page", index, value: entry });
            }
            if index == 0 && entry != root {
                return Err(GspRmError::PageTable { what: "entry 0 is not sharedMemPhysAddr", index, value: entry });
            }
            pages.push(entry);
        }
        Ok(Self { pages })
    }

    /// Bytes of the block.
    pub fn len(&self) -> u64 {
        self.pages.len() as u64 * RM_PAGE_SIZE
    }

    fn access(
        &self,
        offset: u64,
        len: usize,
        mut f: impl FnMut(u64, core::ops::Range<usize>) -> bool,
    ) -> Result<(), GspRmError> {
        let mut done = 0usize;
        while done < len {
            let at = offset + done as u64;
            let page = *self.pages.get((at / RM_PAGE_SIZE) as usize).ok_or(GspRmError::QueueMemory { offset: at })?;
            let within = at % RM_PAGE_SIZE;
            let take = ((RM_PAGE_SIZE - within) as usize).min(len - done);
            if !f(page + within, done..done + take) {
                return Err(GspRmError::QueueMemory { offset: at });
            }
            done += take;
        }
        Ok(())
    }

    pub fn read(&self, memory: &dyn SystemMemory, offset: u64, buf: &mut [u8]) -> Result<(), GspRmError> {
        let len = buf.len();
        self.access(offset, len, |bus, range| memory.read(bus, &mut buf[range]))
    }

    pub fn write(&self, memory: &dyn SystemMemory, offset: u64, data: &[u8]) -> Result<(), GspRmError> {
        self.access(offset, data.len(), |bus, range| memory.write(bus, &data[range]))
    }

    pub fn read_u32(&self, memory: &dyn SystemMemory, offset: u64) -> Result<u32, GspRmError> {
        let mut raw = [0u8; 4];
        self.read(memory, offset, &mut raw)?;
        Ok(u32::from_le_bytes(raw))
    }

    pub fn write_u32(&self, memory: &dyn SystemMemory, offset: u64, value: u32) -> Result<(), GspRmError> {
        self.write(memory, offset, &value.to_le_bytes())
    }
}

/// Where one queue lies in the block, and its ring shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ring {
    /// Offset of the queue (its `msgqTxHeader`) in the block.
    pub offset: u64,
    pub header: MsgqTxHeader,
}

impl Ring {
    fn entry(&self, index: u32) -> u64 {
        self.offset + u64::from(self.header.entry_off) + u64::from(index) * ENTRY
    }

    fn rx_header(&self) -> u64 {
        self.offset + u64::from(self.header.rx_hdr_off)
    }
}

/// Both queues, linked.
#[derive(Clone, Debug)]
pub(crate) struct Queues {
    pub block: SharedBlock,
    /// The CPU's command queue (its header as the CPU created it).
    pub cmd: Ring,
    /// GSP-RM's status queue.
    pub stat: Ring,
    /// GSP-RM's read pointer of the command queue.
    pub cmd_read: u32,
    /// The next command `seqNum` expected.
    pub cmd_seq: u32,
    /// GSP-RM's write pointer of the status queue.
    pub stat_write: u32,
    /// The next status `seqNum`.
    pub stat_seq: u32,
}

/// A command record taken off the queue and checked.
#[derive(Clone, Debug)]
pub(crate) struct Command {
    pub header: RpcMessageHeader,
    pub params: Vec<u8>,
}

impl Queues {
    /// Links the queues as GSP-RM does at boot: maps the block, checks the command queue the CPU
    /// created (`msgqRxLink`'s checks and the exact header `msgqTxCreate` computes for its size),
    /// creates the status queue (`msgqTxCreate` with the GSP parameters) and zeroes GSP-RM's read
    /// pointer of the command queue (`msgqRxLink` on the GSP side).
    pub fn link(args: &MessageQueueInitArguments, memory: &dyn SystemMemory) -> Result<Self, GspRmError> {
        let rm = |what, value: u64| GspRmError::RmArgs { what, value };
        if args.lockless_cmd_queue_offset != 0 || args.lockless_stat_queue_offset != 0 {
            return Err(rm("task-ISR (lockless) queues are not used in 535", args.lockless_cmd_queue_offset));
        }
        let block = SharedBlock::map(args, memory)?;
        let table_bytes = (u64::from(args.page_table_entry_count) * 8).next_multiple_of(RM_PAGE_SIZE);
        if args.cmd_queue_offset != table_bytes {
            return Err(rm("cmdQueueOffset is not the page table's size", args.cmd_queue_offset));
        }
        let stat_offset = args.stat_queue_offset;
        if !stat_offset.is_multiple_of(RM_PAGE_SIZE)
            || stat_offset <= args.cmd_queue_offset
            || stat_offset >= block.len()
        {
            return Err(rm("statQueueOffset not a page inside the block after the command queue", stat_offset));
        }
        let cmd_size = stat_offset - args.cmd_queue_offset;
        let stat_size = block.len() - stat_offset;
        let (cmd_size, stat_size) = match (u32::try_from(cmd_size), u32::try_from(stat_size)) {
            (Ok(c), Ok(s)) => (c, s),
            _ => return Err(rm("queue larger than 4 GiB", cmd_size.max(stat_size))),
        };

        let mut raw = [0u8; tx::BYTES];
        block.read(memory, args.cmd_queue_offset, &mut raw)?;
        let found = decode_tx_header(&raw);
        let expected =
            gsp_queue_header(cmd_size).ok_or_else(|| rm("command queue too small for one entry", cmd_size.into()))?;
        let fields = [
            ("version", expected.version, found.version),
            ("size", expected.size, found.size),
            ("msgSize", expected.msg_size, found.msg_size),
            ("msgCount", expected.msg_count, found.msg_count),
            ("flags", MSGQ_FLAGS_SWAP_RX, found.flags),
            ("rxHdrOff", expected.rx_hdr_off, found.rx_hdr_off),
            ("entryOff", expected.entry_off, found.entry_off),
        ];
        if let Some(&(field, expected, found)) = fields.iter().find(|(_, e, f)| e != f) {
            return Err(GspRmError::CommandQueueHeader { field, expected, found });
        }
        if found.write_ptr >= found.msg_count {
            return Err(GspRmError::QueuePointer {
                which: "command queue writePtr",
                value: found.write_ptr,
                count: found.msg_count,
            });
        }
        let stat_header =
            gsp_queue_header(stat_size).ok_or_else(|| rm("status queue too small for one entry", stat_size.into()))?;
        let queues = Self {
            block,
            cmd: Ring { offset: args.cmd_queue_offset, header: found },
            stat: Ring { offset: stat_offset, header: stat_header },
            cmd_read: 0,
            cmd_seq: 0,
            stat_write: 0,
            stat_seq: 0,
        };
        queues.block.write(memory, stat_offset, &encode_tx_header(&stat_header))?;
        queues.block.write_u32(memory, queues.stat.rx_header(), 0)?;
        Ok(queues)
    }

    /// The CPU's write pointer of the command queue.
    fn cmd_write_ptr(&self, memory: &dyn SystemMemory) -> Result<u32, GspRmError> {
        let value = self.block.read_u32(memory, self.cmd.offset + tx::WRITE_PTR as u64)?;
        let count = self.cmd.header.msg_count;
        if value >= count {
            return Err(GspRmError::QueuePointer { which: "command queue writePtr", value, count });
        }
        Ok(value)
    }

    /// The CPU's read pointer of the status queue (kept in the command queue's header page).
    pub fn stat_read_ptr(&self, memory: &dyn SystemMemory) -> Result<u32, GspRmError> {
        let value = self.block.read_u32(memory, self.cmd.rx_header())?;
        let count = self.stat.header.msg_count;
        if value >= count {
            return Err(GspRmError::QueuePointer { which: "status queue readPtr", value, count });
        }
        Ok(value)
    }

    /// The next command record, checked (`verify_element`, sequence number, RPC header), and
    /// consumed; `None` when the command queue is empty.
    pub fn next_command(&mut self, memory: &dyn SystemMemory) -> Result<Option<Command>, GspRmError> {
        let write = self.cmd_write_ptr(memory)?;
        let count = self.cmd.header.msg_count;
        let available = (write + count - self.cmd_read) % count;
        if available == 0 {
            return Ok(None);
        }
        let mut record = vec![0u8; ENTRY as usize];
        self.block.read(memory, self.cmd.entry(self.cmd_read), &mut record)?;
        let elem_count = record::entries(&record)?;
        if elem_count > available {
            return Err(GspRmError::BadRecord {
                what: "elemCount beyond the entries the CPU submitted",
                value: elem_count,
            });
        }
        record.resize((elem_count as u64 * ENTRY) as usize, 0);
        for i in 1..elem_count {
            let index = (self.cmd_read + i) % count;
            let at = (u64::from(i) * ENTRY) as usize;
            self.block.read(memory, self.cmd.entry(index), &mut record[at..at + ENTRY as usize])?;
        }
        let (seq, header, params) = record::open(&record)?;
        if seq != self.cmd_seq {
            return Err(GspRmError::SequenceNumber { expected: self.cmd_seq, found: seq });
        }
        if header.signature != NV_VGPU_MSG_SIGNATURE_VALID {
            let found = header.signature;
            return Err(GspRmError::RequestHeader {
                what: "signature is not NV_VGPU_MSG_SIGNATURE_VALID",
                value: found,
            });
        }
        if header.header_version != RPC_HEADER_VERSION {
            let found = header.header_version;
            return Err(GspRmError::RequestHeader { what: "header_version is not 3.0", value: found });
        }
        let params = params.to_vec();
        self.cmd_seq = self.cmd_seq.wrapping_add(1);
        self.cmd_read = (self.cmd_read + elem_count) % count;
        self.block.write_u32(memory, self.stat.rx_header(), self.cmd_read)?;
        Ok(Some(Command { header, params }))
    }

    /// Posts one sealed record (`elem_count` entries of bytes); `Ok(false)` when the status queue
    /// has no room for it yet (the CPU has not read enough).
    pub fn post(&mut self, memory: &dyn SystemMemory, record: &[u8]) -> Result<bool, GspRmError> {
        let elements = (record.len() as u64 / ENTRY) as u32;
        let count = self.stat.header.msg_count;
        let read = self.stat_read_ptr(memory)?;
        let free = (read + count - self.stat_write - 1) % count;
        if elements > free {
            return Ok(false);
        }
        for i in 0..elements {
            let index = (self.stat_write + i) % count;
            let at = (u64::from(i) * ENTRY) as usize;
            self.block.write(memory, self.stat.entry(index), &record[at..at + ENTRY as usize])?;
        }
        self.stat_write = (self.stat_write + elements) % count;
        self.block.write_u32(memory, self.stat.offset + tx::WRITE_PTR as u64, self.stat_write)?;
        Ok(true)
    }

    /// Builds the records of one message (`header` with its `length` set per record, then
    /// `payload`), split into continuation records where it exceeds one record
    /// (`_issueRpcAndWaitLarge`'s layout, GSP to CPU), each sealed with the next status `seqNum`.
    pub fn seal_message(&mut self, header: RpcMessageHeader, payload: &[u8]) -> Vec<Vec<u8>> {
        let first_max = GSP_MSG_QUEUE_ELEMENT_SIZE_MAX as usize - record::RPC - record::RPC_BYTES;
        let mut records = Vec::new();
        let mut rest = payload;
        let mut header = header;
        loop {
            let take = rest.len().min(first_max);
            let (chunk, tail) = rest.split_at(take);
            header.length = (record::RPC_BYTES + take) as u32;
            records.push(record::seal(&header, chunk, self.stat_seq));
            self.stat_seq = self.stat_seq.wrapping_add(1);
            rest = tail;
            if rest.is_empty() {
                break;
            }
            header.function = nvgpu::gsp::fw::rpc::RpcFunction::ContinuationRecord.raw();
        }
        records
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvgpu::gsp::fw::msgq::{seal_element, verify_element, GSP_MSG_QUEUE_ELEMENT_HDR_SIZE};
    use zerocopy::IntoBytes;

    /// The model's reading of `msgqTxCreate` and the driver's agree on every queue size.
    #[test]
    fn queue_headers_agree_with_the_driver() {
        for size in [0u32, 4096, 8191, 8192, 12288, 256 << 10, (256 << 10) + 100, 1 << 20] {
            let driver = MsgqTxHeader::gsp_queue(size).ok();
            assert_eq!(gsp_queue_header(size), driver, "queue of {size} bytes");
            if let Some(h) = driver {
                assert_eq!(&encode_tx_header(&h)[..], h.as_bytes());
                assert_eq!(decode_tx_header(&encode_tx_header(&h)), h);
            }
        }
        let h = gsp_queue_header(256 << 10).unwrap();
        assert_eq!((h.rx_hdr_off, h.entry_off, h.msg_count), (32, 4096, 63));
    }

    fn header(length: u32) -> RpcMessageHeader {
        RpcMessageHeader {
            header_version: RPC_HEADER_VERSION,
            signature: NV_VGPU_MSG_SIGNATURE_VALID,
            length,
            function: 72,
            rpc_result: 0xffff_ffff,
            rpc_result_private: 0xffff_ffff,
            sequence: 9,
            u: 0,
        }
    }

    /// Records the model seals open with the driver's checks, and records the driver seals open
    /// with the model's, for short, entry-crossing and largest parameters.
    #[test]
    fn records_cross_between_the_model_and_the_driver() {
        for len in [0usize, 1, 7, 100, 4096 - 80, 4096, 10_000, GSP_MSG_QUEUE_ELEMENT_SIZE_MAX as usize - 80] {
            let params: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let h = header((record::RPC_BYTES + len) as u32);
            let sealed = record::seal(&h, &params, 41);
            let theirs = verify_element(&sealed).unwrap();
            assert_eq!((theirs.element.seq_num, theirs.element.rpc, theirs.params), (41, h, &params[..]));

            let size = GSP_MSG_QUEUE_ELEMENT_HDR_SIZE as usize + h.length as usize;
            let mut driver = vec![0u8; size.div_ceil(ENTRY as usize) * ENTRY as usize];
            driver[record::RPC..record::RPC + record::RPC_BYTES].copy_from_slice(h.as_bytes());
            driver[record::RPC + record::RPC_BYTES..size].copy_from_slice(&params);
            seal_element(&mut driver, 41).unwrap();
            assert_eq!(driver, sealed, "{len} bytes of parameters");
            let (seq, ours, p) = record::open(&driver).unwrap();
            assert_eq!((seq, ours, p), (41, h, &params[..]));
        }
    }

    #[test]
    fn damaged_records_are_refused() {
        let h = header(record::RPC_BYTES as u32 + 16);
        let good = record::seal(&h, &[5; 16], 0);
        let mut flipped = good.clone();
        flipped[record::RPC + record::RPC_BYTES + 3] ^= 0x10;
        assert!(matches!(record::open(&flipped), Err(GspRmError::BadRecord { what: "bad checksum (residue)", .. })));
        let mut count = good.clone();
        count[record::ELEM_COUNT] = 17;
        assert!(matches!(record::open(&count), Err(GspRmError::BadRecord { what: "elemCount not 1..=16", .. })));
        let long = record::seal(&header(5000), &[0; 5000 - 32], 0);
        assert!(matches!(record::open(&long[..4096]), Err(GspRmError::BadRecord { what: "truncated", .. })));
        let mut beyond = good.clone();
        beyond[record::RPC + 8..record::RPC + 12].copy_from_slice(&5000u32.to_le_bytes());
        assert!(matches!(
            record::open(&beyond),
            Err(GspRmError::BadRecord { what: "rpc.length beyond elemCount entries", .. })
        ));
        let mut short = good;
        short[record::RPC + 8..record::RPC + 12].copy_from_slice(&8u32.to_le_bytes());
        assert!(matches!(record::open(&short), Err(GspRmError::BadRecord { what: "rpc.length out of range", .. })));
    }
}
