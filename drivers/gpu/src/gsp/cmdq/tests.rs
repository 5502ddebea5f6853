//! The transport's unit tests, against the fake GSP-RM of [`super::fake`].

use super::fake::*;
use super::*;
use alloc::boxed::Box;
use alloc::string::ToString;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

fn none(_: &RpcMessageHeader) -> Option<usize> {
    None
}

#[test]
fn new_lays_out_page_table_and_command_queue() {
    let s = setup(echo(), false);
    let bytes = s.mem.peek(0, 0x2000);
    for i in 0..129u64 {
        let at = i as usize * 8;
        assert_eq!(u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()), 0x8000_0000 + i * 4096);
    }
    let tx = MsgqTxHeader::read_from_bytes(&bytes[0x1000..0x1020]).unwrap();
    assert_eq!(tx, MsgqTxHeader::gsp_queue(0x40000).unwrap());
    assert_eq!(s.queues.init_arguments().shared_mem_phys_addr, 0x8000_0000);
    assert_eq!(s.queues.init_arguments().stat_queue_offset, 0x41000);
    assert!(!s.queues.is_status_queue_linked());
}

#[test]
fn new_refuses_bad_buffers() {
    let layout = MessageQueueLayout::rm_default();
    let mem = TestMemory::new(0x1000 * 10);
    let gsp = alloc::rc::Rc::new(core::cell::RefCell::new(FakeGsp::new(&mem, layout, echo())));
    let err = GspMessageQueues::new(mem.dma(0), layout, FakeDoorbell(gsp.clone())).err();
    assert!(matches!(err, Some(TransportError::BufferTooSmall { .. })));
    let big = TestMemory::new(layout.shared_size() as usize);
    let err = GspMessageQueues::new(big.dma(0x800), layout, FakeDoorbell(gsp.clone())).err();
    assert_eq!(err, Some(TransportError::UnalignedBuffer { bus: 0x800 }));
    let bad = MessageQueueLayout { page_table_size: 0, ..layout };
    let err = GspMessageQueues::new(big.dma(0), bad, FakeDoorbell(gsp)).err();
    assert_eq!(err, Some(TransportError::BadLayout));
}

#[test]
fn records_before_boot_wait_for_the_status_queue() {
    let mut s = setup(echo(), false);
    // RM queues GSP_SET_SYSTEM_INFO and SET_REGISTRY before GSP-RM runs.
    s.queues.send(&s.clock, RpcFunction::GspSetSystemInfo.raw(), &[1; 672]).unwrap();
    s.queues.send(&s.clock, RpcFunction::SetRegistry.raw(), &[2; 100]).unwrap();
    assert_eq!(s.queues.try_receive_record(), Ok(None));
    let err = s.queues.wait_for_status_queue(&s.clock, 5).unwrap_err();
    assert!(err.to_string().contains("GSP-RM to create its status queue"), "{err}");
    s.gsp.borrow_mut().boot();
    s.queues.wait_for_status_queue(&s.clock, 5).unwrap();
    let m = s.queues.receive_message(&s.clock, 10, "echo", &none).unwrap();
    assert_eq!(m.function(), RpcFunction::GspSetSystemInfo.raw());
    assert_eq!(m.payload, vec![1; 672]);
    assert_eq!(m.seq_num, 0);
    let m = s.queues.receive_message(&s.clock, 10, "echo", &none).unwrap();
    assert_eq!((m.function(), m.seq_num, m.payload.len()), (RpcFunction::SetRegistry.raw(), 1, 100));
    assert_eq!(s.gsp.borrow().records_received, 2);
}

#[test]
fn both_rings_wrap_around() {
    let mut s = setup(echo(), true);
    // 63 entries per ring; records of 1, 2 and 3 entries so that some straddle the end.
    for round in 0..120u32 {
        let len = [100, 5000, 9000][round as usize % 3];
        let payload = pattern(len, round as u8);
        let receipt = s.queues.send(&s.clock, RpcFunction::GspRmControl.raw(), &payload).unwrap();
        assert_eq!(receipt.seq_num, round);
        let m = s.queues.receive_message(&s.clock, 100, "echo", &none).unwrap();
        assert_eq!(m.seq_num, round);
        assert_eq!(m.payload, payload, "round {round}");
    }
    assert_eq!(s.queues.next_command_seq(), 120);
    assert_eq!(s.queues.next_status_seq(), 120);
    // 40 * (1 + 2 + 3) = 240 entries went through each 63-entry ring.
    assert_eq!(s.gsp.borrow().doorbells, 120);
}

#[test]
fn sender_waits_for_space_and_times_out_naming_it() {
    let mut s = setup(Box::new(|_: &FakeMessage| Vec::new()), false);
    // Not booted: nothing is consumed, so the 63-entry ring fills after 62 entries.
    for _ in 0..31 {
        s.queues.send(&s.clock, RpcFunction::Nop.raw(), &[0; 5000]).unwrap();
    }
    assert_eq!(s.queues.command_free_elements(), Ok(0));
    let err = s.queues.send(&s.clock, RpcFunction::Nop.raw(), &[0; 8]).unwrap_err();
    assert_eq!(
        err,
        TransportError::Timeout(Timeout { what: "space in the GSP command queue", after_ms: SEND_SPACE_TIMEOUT_MS })
    );
    // Once GSP-RM reads, there is room again.
    s.gsp.borrow_mut().boot();
    s.queues.send(&s.clock, RpcFunction::Nop.raw(), &[0; 8]).unwrap();
}

#[test]
fn large_messages_use_continuation_records_both_ways() {
    let mut s = setup(echo(), true);
    let payload = pattern(RECORD_PAYLOAD_MAX * 2 + 1234, 7);
    let receipt = s.queues.send(&s.clock, RpcFunction::GspRmControl.raw(), &payload).unwrap();
    assert_eq!(receipt.records, 3);
    assert_eq!(receipt.elements, 16 + 16 + 1);
    {
        let gsp = s.gsp.borrow();
        let got = gsp.received.last().unwrap();
        assert_eq!((got.function, got.records, got.seq_num), (RpcFunction::GspRmControl.raw(), 3, 0));
        assert_eq!(got.payload, payload);
    }
    // The echo comes back as three records; reassembled when the caller expects the size.
    let want = payload.len();
    let m = s
        .queues
        .receive_message(&s.clock, 100, "echo", &|h| (h.function == RpcFunction::GspRmControl.raw()).then_some(want))
        .unwrap();
    assert_eq!((m.records, m.seq_num), (3, 0));
    assert_eq!(m.payload, payload);
    assert_eq!(s.queues.next_status_seq(), 3);
}

#[test]
fn continuation_must_follow_an_incomplete_message() {
    let mut s = setup(Box::new(|_: &FakeMessage| Vec::new()), true);
    s.gsp.borrow_mut().queue_outgoing(Outgoing::reply(RpcFunction::GspRmControl.raw(), vec![0; RECORD_PAYLOAD_MAX]));
    s.gsp.borrow_mut().queue_outgoing(Outgoing::reply(RpcFunction::Free.raw(), vec![0; 16]));
    s.gsp.borrow_mut().flush();
    let err = s.queues.receive_message(&s.clock, 100, "x", &|_| Some(RECORD_PAYLOAD_MAX + 10)).unwrap_err();
    assert!(matches!(err, TransportError::ExpectedContinuation { .. }), "{err}");
}

#[test]
fn corrupted_record_is_a_typed_error_and_stays_unconsumed() {
    let mut s = setup(echo(), true);
    s.gsp.borrow_mut().corrupt_next = true;
    s.queues.send(&s.clock, RpcFunction::GspRmControl.raw(), &[5; 64]).unwrap();
    let err = s.queues.try_receive_record().unwrap_err();
    assert!(matches!(err, TransportError::Element(ElementError::BadChecksum { seq_num: 0, .. })), "{err}");
    assert!(err.to_string().contains("bad checksum"), "{err}");
    assert_eq!(s.queues.next_status_seq(), 0, "not consumed");
    assert!(s.queues.try_receive_record().is_err(), "still there");
}

#[test]
fn out_of_order_record_is_refused() {
    let mut s = setup(echo(), true);
    s.gsp.borrow_mut().wrong_seq_next = Some(5);
    s.queues.send(&s.clock, RpcFunction::GspRmControl.raw(), &[5; 64]).unwrap();
    assert_eq!(s.queues.try_receive_record(), Err(TransportError::SequenceMismatch { expected: 0, found: 5 }));
}

#[test]
fn bad_peer_pointers_and_headers_are_errors() {
    let mut s = setup(echo(), true);
    let stat = s.queues.layout().stat_queue_offset() as usize;
    s.mem.poke_u32(stat + 16, 99);
    assert!(matches!(s.queues.try_receive_record(), Err(TransportError::BadPeerPointer { value: 99, .. })));
    s.mem.poke_u32(stat + 16, 0);
    s.mem.poke_u32(stat + 32, 64);
    assert!(matches!(
        s.queues.command_free_elements(),
        Err(TransportError::BadPeerPointer { pointer: "the command queue readPtr", .. })
    ));

    // A status queue header of the wrong size is refused at link time.
    let mut t = setup(echo(), true);
    let stat = t.queues.layout().stat_queue_offset() as usize;
    t.mem.poke_u32(stat + 4, 0x20000);
    assert!(matches!(
        t.queues.try_link_status_queue(),
        Err(TransportError::Header(QueueError::PeerMismatch { field: "size", .. }))
    ));
    let err = t.queues.wait_for_status_queue(&t.clock, 2).unwrap_err();
    assert!(matches!(err, TransportError::Header(QueueError::PeerMismatch { field: "size", .. })), "{err}");
    assert_eq!(t.queues.try_receive_record(), Ok(None), "not linked: nothing to read");
}

#[test]
fn garbage_element_counts_do_not_panic() {
    let mut s = setup(Box::new(|_: &FakeMessage| Vec::new()), true);
    s.gsp.borrow_mut().queue_outgoing(Outgoing::reply(1, vec![0; 8]));
    s.gsp.borrow_mut().flush();
    let entry = (s.queues.layout().stat_queue_offset() + 4096) as usize;
    for bad in [0u32, 17, 2, u32::MAX] {
        s.mem.poke_u32(entry + 40, bad);
        let r = s.queues.try_receive_record();
        match bad {
            // Two entries claimed, one published: still being written.
            2 => assert_eq!(r, Ok(None)),
            _ => assert!(matches!(r, Err(TransportError::Element(ElementError::BadElementCount { .. })))),
        }
    }
}

#[test]
fn queue_head_doorbell_writes_nv_pgsp_queue_head() {
    struct Regs(core::cell::RefCell<Vec<(u32, u32)>>);
    impl RegisterIo for Regs {
        fn read32(&self, _: u32) -> u32 {
            0
        }
        fn write32(&self, offset: u32, value: u32) {
            self.0.borrow_mut().push((offset, value));
        }
    }
    let regs = Regs(Default::default());
    let mut bell = QueueHeadDoorbell(&regs);
    bell.ring(RPC_TASK_RM_QUEUE_IDX);
    assert_eq!(*regs.0.borrow(), vec![(0x0011_0c00, 0)]);
}
