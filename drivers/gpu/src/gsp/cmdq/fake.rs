//! Test support: owned page-aligned memory for DMA buffers, and a fake GSP-RM that speaks the
//! queue protocol from the other side (written from `msgq.c`'s rules, independently of the
//! driver code in [`super`]).

// Test memory standing in for DMA memory: allocated and reached by raw pointer, as the kernel's
// DMA allocator would.
#![allow(unsafe_code)]

use super::*;
use crate::gsp::fw::msgq::seal_element;
use alloc::boxed::Box;
use alloc::rc::Rc;
use core::cell::{Cell, RefCell};
use std::alloc::{alloc_zeroed, dealloc, Layout};

/// Zeroed, 4 KiB aligned memory that outlives the DMA buffers made from it.
pub struct TestMemory {
    ptr: *mut u8,
    layout: Layout,
}

impl TestMemory {
    pub fn new(len: usize) -> Self {
        let layout = Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: the layout has a nonzero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        TestMemory { ptr, layout }
    }
    pub fn dma(&self, bus: u64) -> DmaBuffer {
        // SAFETY: the memory lives as long as `self`, which each test keeps alive longer
        // than the queues; the fake GSP accesses it only while the driver is not.
        unsafe { DmaBuffer::new(self.ptr, bus, self.layout.size()) }
    }
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
    /// Writes a word as the other side would (volatile, no reference held).
    pub fn poke_u32(&self, offset: usize, value: u32) {
        assert!(offset + 4 <= self.layout.size());
        // SAFETY: in bounds (checked); 4-aligned offsets only, in a 4 KiB aligned block.
        unsafe { core::ptr::write_volatile(self.ptr.add(offset) as *mut u32, value.to_le()) }
    }
    /// Reads `len` bytes at `offset` (volatile, no reference held).
    pub fn peek(&self, offset: usize, len: usize) -> Vec<u8> {
        assert!(offset + len <= self.layout.size());
        // SAFETY: in bounds (checked).
        (0..len).map(|i| unsafe { core::ptr::read_volatile(self.ptr.add(offset + i)) }).collect()
    }
}

impl Drop for TestMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// A message the fake received (records reassembled).
#[derive(Clone, Debug)]
pub struct FakeMessage {
    pub function: u32,
    pub seq_num: u32,
    pub records: u32,
    pub payload: Vec<u8>,
}

/// A message for the fake to send.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub function: u32,
    pub rpc_result: u32,
    pub payload: Vec<u8>,
}

impl Outgoing {
    pub fn reply(function: u32, payload: Vec<u8>) -> Self {
        Outgoing { function, rpc_result: 0, payload }
    }
}

pub type Responder = Box<dyn FnMut(&FakeMessage) -> Vec<Outgoing>>;

/// GSP-RM's side of the queues.
pub struct FakeGsp {
    mem: *mut u8,
    len: usize,
    layout: MessageQueueLayout,
    pub booted: bool,
    cmd_read_ptr: u32,
    cmd_seq: u32,
    stat_write_ptr: u32,
    stat_seq: u32,
    /// Records waiting for room in the status queue.
    backlog: alloc::collections::VecDeque<Vec<u8>>,
    /// A first record whose continuation records have not all arrived.
    partial: Option<FakeMessage>,
    pub received: Vec<FakeMessage>,
    pub records_received: u32,
    pub doorbells: u32,
    /// Flip a payload byte of the next record sent, after sealing it.
    pub corrupt_next: bool,
    /// Send the next record with this `seqNum` instead.
    pub wrong_seq_next: Option<u32>,
    pub responder: Responder,
}

impl FakeGsp {
    pub fn new(mem: &TestMemory, layout: MessageQueueLayout, responder: Responder) -> Self {
        FakeGsp {
            mem: mem.ptr(),
            len: mem.layout.size(),
            layout,
            booted: false,
            cmd_read_ptr: 0,
            cmd_seq: 0,
            stat_write_ptr: 0,
            stat_seq: 0,
            backlog: Default::default(),
            partial: None,
            received: Vec::new(),
            records_received: 0,
            doorbells: 0,
            corrupt_next: false,
            wrong_seq_next: None,
            responder,
        }
    }

    #[allow(clippy::mut_from_ref)]
    fn bytes(&self) -> &mut [u8] {
        // SAFETY: see `TestMemory::dma`: the driver is not inside a queue access while the
        // fake runs (the fake runs from the doorbell or the clock).
        unsafe { core::slice::from_raw_parts_mut(self.mem, self.len) }
    }

    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.bytes()[at..at + 4].try_into().unwrap())
    }

    fn set_u32(&self, at: usize, v: u32) {
        self.bytes()[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    fn cmd_base(&self) -> usize {
        self.layout.cmd_queue_offset() as usize
    }

    fn stat_base(&self) -> usize {
        self.layout.stat_queue_offset() as usize
    }

    /// GSP-RM comes up: creates the status queue and links the command queue.
    pub fn boot(&mut self) {
        let tx = MsgqTxHeader::gsp_queue(self.layout.status_queue_size as u32).unwrap();
        let base = self.stat_base();
        self.bytes()[base..base + 32].copy_from_slice(tx.as_bytes());
        // Our read pointer of the command queue, in our own header page (SWAP_RX).
        self.set_u32(base + tx.rx_hdr_off as usize, 0);
        let cmd = MsgqTxHeader::read_from_bytes(&self.bytes()[self.cmd_base()..self.cmd_base() + 32]).unwrap();
        cmd.check_peer(self.layout.command_queue_size as u32, 4096).unwrap();
        self.booted = true;
    }

    fn msg_count(&self, size: u64) -> u32 {
        ((size - 4096) / 4096) as u32
    }

    /// Reads every command record published, then answers and flushes what fits.
    pub fn pump(&mut self) {
        if !self.booted {
            return;
        }
        let base = self.cmd_base();
        let count = self.msg_count(self.layout.command_queue_size);
        loop {
            let write_ptr = self.u32_at(base + 16);
            assert!(write_ptr < count, "driver wrote writePtr {write_ptr}");
            if write_ptr == self.cmd_read_ptr {
                break;
            }
            let first = base + 4096 + self.cmd_read_ptr as usize * 4096;
            let elements = self.u32_at(first + 40);
            let mut record = Vec::new();
            for i in 0..elements {
                let slot = ((self.cmd_read_ptr + i) % count) as usize;
                let at = base + 4096 + slot * 4096;
                record.extend_from_slice(&self.bytes()[at..at + 4096]);
            }
            let checked = verify_element(&record).expect("driver record verifies");
            assert_eq!(checked.element.seq_num, self.cmd_seq, "driver seqNum");
            checked.element.rpc.check().expect("driver RPC header");
            let rpc = checked.element.rpc;
            let params = checked.params.to_vec();
            self.cmd_seq += 1;
            self.records_received += 1;
            self.cmd_read_ptr = (self.cmd_read_ptr + elements) % count;
            let rx = self.stat_base() + 32;
            self.set_u32(rx, self.cmd_read_ptr);
            self.take_record(rpc, checked.element.seq_num, params);
        }
        self.flush();
    }

    fn take_record(&mut self, rpc: RpcMessageHeader, seq_num: u32, params: Vec<u8>) {
        if rpc.function == RpcFunction::ContinuationRecord.raw() {
            let partial = self.partial.as_mut().expect("continuation without a first record");
            partial.payload.extend_from_slice(&params);
            partial.records += 1;
            if params.len() < RECORD_PAYLOAD_MAX {
                let done = self.partial.take().unwrap();
                self.complete(done);
            }
            return;
        }
        assert!(self.partial.is_none(), "new message while one is incomplete");
        let message = FakeMessage { function: rpc.function, seq_num, records: 1, payload: params };
        if message.payload.len() == RECORD_PAYLOAD_MAX {
            self.partial = Some(message);
        } else {
            self.complete(message);
        }
    }

    fn complete(&mut self, message: FakeMessage) {
        let out = (self.responder)(&message);
        self.received.push(message);
        for o in out {
            self.queue_outgoing(o);
        }
    }

    /// Splits a message into records like RM's `_issueRpcLarge` and queues them.
    pub fn queue_outgoing(&mut self, o: Outgoing) {
        let mut chunks: Vec<(u32, &[u8])> = Vec::new();
        let first = o.payload.len().min(RECORD_PAYLOAD_MAX);
        chunks.push((o.function, &o.payload[..first]));
        for c in o.payload[first..].chunks(RECORD_PAYLOAD_MAX) {
            chunks.push((RpcFunction::ContinuationRecord.raw(), c));
        }
        let mut records = Vec::new();
        for (function, params) in chunks {
            let mut rpc = RpcMessageHeader::request(function, params.len() as u32).unwrap();
            rpc.rpc_result = o.rpc_result;
            rpc.rpc_result_private = o.rpc_result;
            let size = 48 + 32 + params.len();
            let mut record = vec![0u8; size.div_ceil(4096) * 4096];
            record[48..80].copy_from_slice(rpc.as_bytes());
            record[80..size].copy_from_slice(params);
            records.push(record);
        }
        self.backlog.extend(records);
    }

    /// Writes backlog records while the status queue has room.
    pub fn flush(&mut self) {
        if !self.booted {
            return;
        }
        let base = self.stat_base();
        let count = self.msg_count(self.layout.status_queue_size);
        while let Some(mut record) = self.backlog.pop_front() {
            let driver_read = self.u32_at(self.cmd_base() + 32);
            assert!(driver_read < count);
            let free = (driver_read + count - self.stat_write_ptr - 1) % count;
            let seq = self.wrong_seq_next.take().unwrap_or(self.stat_seq);
            let elements = seal_element(&mut record, seq).unwrap();
            if elements > free {
                self.backlog.push_front(record);
                break;
            }
            if core::mem::take(&mut self.corrupt_next) {
                record[90] ^= 0x40;
            }
            for i in 0..elements {
                let slot = ((self.stat_write_ptr + i) % count) as usize;
                let at = base + 4096 + slot * 4096;
                let from = i as usize * 4096;
                self.bytes()[at..at + 4096].copy_from_slice(&record[from..from + 4096]);
            }
            self.stat_seq += 1;
            self.stat_write_ptr = (self.stat_write_ptr + elements) % count;
            self.set_u32(base + 16, self.stat_write_ptr);
        }
    }
}

/// The doorbell: runs the fake, as the model runs GSP-RM on the register write.
#[derive(Clone)]
pub struct FakeDoorbell(pub Rc<RefCell<FakeGsp>>);

impl GspDoorbell for FakeDoorbell {
    fn ring(&mut self, queue_index: u32) {
        assert_eq!(queue_index, RPC_TASK_RM_QUEUE_IDX);
        let mut gsp = self.0.borrow_mut();
        gsp.doorbells += 1;
        gsp.pump();
    }
}

/// Virtual time: each poll advances 100 us and lets the fake flush its backlog.
pub struct FakeClock {
    pub now: Cell<u64>,
    pub gsp: Option<Rc<RefCell<FakeGsp>>>,
}

impl FakeClock {
    pub fn new(gsp: Option<Rc<RefCell<FakeGsp>>>) -> Self {
        FakeClock { now: Cell::new(0), gsp }
    }
}

impl Clock for FakeClock {
    fn now_ns(&self) -> u64 {
        self.now.get()
    }
    fn relax(&self) {
        self.now.set(self.now.get() + 100_000);
        if let Some(gsp) = &self.gsp {
            gsp.borrow_mut().pump();
        }
    }
}

/// A booted fake with the default layout, the memory, the queues and a clock.
pub struct Setup {
    pub gsp: Rc<RefCell<FakeGsp>>,
    pub queues: GspMessageQueues<FakeDoorbell>,
    pub clock: FakeClock,
    pub mem: TestMemory,
}

pub fn setup(responder: Responder, boot: bool) -> Setup {
    let layout = MessageQueueLayout::rm_default();
    let mem = TestMemory::new(layout.shared_size() as usize);
    let gsp = Rc::new(RefCell::new(FakeGsp::new(&mem, layout, responder)));
    let queues = GspMessageQueues::new(mem.dma(0x8000_0000), layout, FakeDoorbell(gsp.clone())).unwrap();
    if boot {
        gsp.borrow_mut().boot();
    }
    let clock = FakeClock::new(Some(gsp.clone()));
    Setup { gsp, queues, clock, mem }
}

/// A responder that echoes every message back with the same function and payload.
pub fn echo() -> Responder {
    Box::new(|m: &FakeMessage| vec![Outgoing::reply(m.function, m.payload.clone())])
}
