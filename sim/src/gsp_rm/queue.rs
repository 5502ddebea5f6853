//! GSP-RM's side of the shared message queues (`nvgpu::gsp::msgq`): the command queue it reads
//! and the status queue it writes, through the page table at the start of the shared block.
//!
//! Follows `msgq.c` (`msgqRxLink`, `msgqTxCreate`, the ring arithmetic) and
//! `message_queue_cpu.c` (records, checksums, sequence numbers), both 535.261.03, from the GSP
//! side. With `MSGQ_FLAGS_SWAP_RX` GSP-RM keeps its read pointer of the command queue in the
//! status queue's header page, and reads the CPU's read pointer of the status queue from the
//! command queue's header page.

use alloc::vec;
use alloc::vec::Vec;

use nvgpu::gsp::msgq::{
    bytes_to_elements, seal_element, verify_element, ElementError, MsgqTxHeader, GSP_MSG_QUEUE_ELEMENT_HDR_SIZE,
    GSP_MSG_QUEUE_ELEMENT_SIZE_MAX, GSP_MSG_QUEUE_ELEMENT_SIZE_MIN, MSGQ_FLAGS_SWAP_RX, RM_PAGE_SIZE,
};
use nvgpu::gsp::rpc::{RpcMessageHeader, RPC_MESSAGE_HEADER_SIZE};
use nvgpu::gsp::MessageQueueInitArguments;
use zerocopy::{FromBytes, IntoBytes};

use super::error::GspRmError;
use crate::memory::SystemMemory;

/// Offset of `writePtr` in `msgqTxHeader`.
const WRITE_PTR_AT: u64 = 16;
/// Bytes of one queue entry.
const ENTRY: u64 = GSP_MSG_QUEUE_ELEMENT_SIZE_MIN as u64;

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

fn element_error(e: ElementError) -> GspRmError {
    match e {
        ElementError::TooShort { len } => GspRmError::BadRecord { what: "shorter than its header", value: len as u32 },
        ElementError::BadLength { rpc_length } => {
            GspRmError::BadRecord { what: "rpc.length out of range", value: rpc_length }
        }
        ElementError::BadElementCount { elem_count } => {
            GspRmError::BadRecord { what: "elemCount not 1..=16", value: elem_count }
        }
        ElementError::Truncated { needed, .. } => GspRmError::BadRecord { what: "truncated", value: needed as u32 },
        ElementError::LengthBeyondElements { rpc_length, .. } => {
            GspRmError::BadRecord { what: "rpc.length beyond elemCount entries", value: rpc_length }
        }
        ElementError::BadChecksum { residue, .. } => {
            GspRmError::BadRecord { what: "bad checksum (residue)", value: residue }
        }
    }
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

        let mut raw = [0u8; 32];
        block.read(memory, args.cmd_queue_offset, &mut raw)?;
        let found = MsgqTxHeader::read_from_bytes(&raw).unwrap_or_default();
        let expected = MsgqTxHeader::gsp_queue(cmd_size)
            .map_err(|_| rm("command queue too small for one entry", cmd_size.into()))?;
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
        let stat_header = MsgqTxHeader::gsp_queue(stat_size)
            .map_err(|_| rm("status queue too small for one entry", stat_size.into()))?;
        let queues = Self {
            block,
            cmd: Ring { offset: args.cmd_queue_offset, header: found },
            stat: Ring { offset: stat_offset, header: stat_header },
            cmd_read: 0,
            cmd_seq: 0,
            stat_write: 0,
            stat_seq: 0,
        };
        queues.block.write(memory, stat_offset, stat_header.as_bytes())?;
        queues.block.write_u32(memory, queues.stat.rx_header(), 0)?;
        Ok(queues)
    }

    /// The CPU's write pointer of the command queue.
    fn cmd_write_ptr(&self, memory: &dyn SystemMemory) -> Result<u32, GspRmError> {
        let value = self.block.read_u32(memory, self.cmd.offset + WRITE_PTR_AT)?;
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
        let elem_count = u32::from_le_bytes([record[40], record[41], record[42], record[43]]);
        let max = GSP_MSG_QUEUE_ELEMENT_SIZE_MAX / GSP_MSG_QUEUE_ELEMENT_SIZE_MIN;
        if elem_count == 0 || elem_count > max {
            return Err(GspRmError::BadRecord { what: "elemCount not 1..=16", value: elem_count });
        }
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
        let received = verify_element(&record).map_err(element_error)?;
        let seq = received.element.seq_num;
        if seq != self.cmd_seq {
            return Err(GspRmError::SequenceNumber { expected: self.cmd_seq, found: seq });
        }
        let header = received.element.rpc;
        header.check().map_err(|e| match e {
            nvgpu::gsp::rpc::RpcHeaderError::BadSignature { found } => {
                GspRmError::RequestHeader { what: "signature is not NV_VGPU_MSG_SIGNATURE_VALID", value: found }
            }
            nvgpu::gsp::rpc::RpcHeaderError::BadVersion { found } => {
                GspRmError::RequestHeader { what: "header_version is not 3.0", value: found }
            }
            nvgpu::gsp::rpc::RpcHeaderError::ShortLength { length } => {
                GspRmError::RequestHeader { what: "length shorter than the header", value: length }
            }
        })?;
        let params = received.params.to_vec();
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
        self.block.write_u32(memory, self.stat.offset + WRITE_PTR_AT, self.stat_write)?;
        Ok(true)
    }

    /// Builds the records of one message (`header` with its `length` set per record, then
    /// `payload`), split into continuation records where it exceeds one record
    /// (`_issueRpcAndWaitLarge`'s layout, GSP to CPU), each sealed with the next status `seqNum`.
    pub fn seal_message(&mut self, header: RpcMessageHeader, payload: &[u8]) -> Vec<Vec<u8>> {
        let first_max =
            (GSP_MSG_QUEUE_ELEMENT_SIZE_MAX - GSP_MSG_QUEUE_ELEMENT_HDR_SIZE - RPC_MESSAGE_HEADER_SIZE) as usize;
        let mut records = Vec::new();
        let mut rest = payload;
        let mut header = header;
        loop {
            let take = rest.len().min(first_max);
            let (chunk, tail) = rest.split_at(take);
            header.length = RPC_MESSAGE_HEADER_SIZE + take as u32;
            let size = GSP_MSG_QUEUE_ELEMENT_HDR_SIZE + header.length;
            let mut record = vec![0u8; (bytes_to_elements(size) as u64 * ENTRY) as usize];
            let rpc_at = GSP_MSG_QUEUE_ELEMENT_HDR_SIZE as usize;
            record[rpc_at..rpc_at + RPC_MESSAGE_HEADER_SIZE as usize].copy_from_slice(header.as_bytes());
            let params_at = rpc_at + RPC_MESSAGE_HEADER_SIZE as usize;
            record[params_at..params_at + chunk.len()].copy_from_slice(chunk);
            // The record is sized for its entries, so sealing cannot fail.
            let _ = seal_element(&mut record, self.stat_seq);
            self.stat_seq = self.stat_seq.wrapping_add(1);
            records.push(record);
            rest = tail;
            if rest.is_empty() {
                break;
            }
            header.function = nvgpu::gsp::rpc::RpcFunction::ContinuationRecord.raw();
        }
        records
    }
}
