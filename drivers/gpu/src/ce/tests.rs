//! Encoder tests: decode the pushbuffer and check each method and value against numbers worked
//! out from `clc5b5.h`/`clc7b5.h`/`clc8b5.h` (offsets: SET_SEMAPHORE_A 0x240, SET_SRC_PHYS_MODE
//! 0x260, LAUNCH_DMA 0x300, OFFSET_IN_UPPER 0x400 .. LINE_COUNT 0x41c, SET_REMAP_CONST_A 0x700;
//! LAUNCH_DMA bits: DATA_TRANSFER_TYPE 1:0, FLUSH_ENABLE 2, SEMAPHORE_TYPE 4:3, SRC/DST_MEMORY_LAYOUT
//! 7/8, MULTI_LINE 9, REMAP 10, SRC/DST_TYPE 12/13, FLUSH_TYPE 25, DISABLE_PLC 26,
//! SEMAPHORE_PAYLOAD_SIZE 27).

use super::*;
use crate::host::{decode, HostClass, MethodKind};
use alloc::vec::Vec;

fn writes(pb: &PushBuffer) -> Vec<(u32, u32)> {
    decode(pb.words())
        .flat_map(|m| {
            let m = m.unwrap();
            assert_eq!(m.kind, MethodKind::Incr);
            assert_eq!(m.subchannel, 4);
            m.writes().collect::<Vec<_>>()
        })
        .collect()
}

const PITCH_BOTH: u32 = 1 << 7 | 1 << 8;

#[test]
fn classes_and_address_widths() {
    assert_eq!(CeClass::TuringA.class_number(), 0xc5b5);
    assert_eq!(CeClass::from_class_number(0xc8b5), Some(CeClass::HopperA));
    assert_eq!(CeClass::from_class_number(0xc86f), None);
    assert_eq!(CeClass::TuringA.address_bits(), 49);
    assert_eq!(CeClass::AmpereB.address_bits(), 49);
    assert_eq!(CeClass::HopperA.address_bits(), 57);
    assert_eq!(CeClass::BlackwellB.semaphore_address_bits(), 57);
    for hal in crate::hal::ALL {
        assert_eq!(CeClass::for_hal(hal).map(CeClass::class_number), Some(hal.classes.copy));
    }
    assert_eq!(CeClass::for_hal(&crate::hal::ADA), Some(CeClass::AmpereB));
    assert_eq!(CeClass::for_hal(&crate::hal::GA100), Some(CeClass::AmpereA));
}

#[test]
fn small_virtual_copy_is_one_line() {
    let mut pb = PushBuffer::new();
    let e = CeEncoder::new(CeClass::TuringA, 4);
    e.copy(&mut pb, CeAddress::Virtual(0x1_2345_6000), CeAddress::Virtual(0x2000), 4096, Pipelining::NonPipelined)
        .unwrap();
    assert_eq!(
        writes(&pb),
        [(0x400, 0x1), (0x404, 0x2345_6000), (0x408, 0), (0x40c, 0x2000), (0x418, 4096), (0x300, 2 | PITCH_BOTH)]
    );
}

#[test]
fn ampere_b_disables_plc_and_pipelines_later_pieces() {
    let mut pb = PushBuffer::new();
    let e = CeEncoder::new(CeClass::AmpereB, 4);
    let bytes = 5 * (1u64 << 30) + 3; // 5 GiB + 3: two 2 GiB lines, then 1 GiB + 3
    e.copy(&mut pb, CeAddress::Virtual(0), CeAddress::Virtual(1 << 40), bytes, Pipelining::Pipelined).unwrap();
    let plc = 1 << 26;
    assert_eq!(
        writes(&pb),
        [
            (0x400, 0),
            (0x404, 0),
            (0x408, 0x100),
            (0x40c, 0),
            (0x410, 1 << 31),
            (0x414, 1 << 31),
            (0x418, 1 << 31),
            (0x41c, 2),
            (0x300, 1 | PITCH_BOTH | 1 << 9 | plc),
            (0x400, 1),
            (0x404, 0),
            (0x408, 0x101),
            (0x40c, 0),
            (0x418, (1 << 30) + 3),
            (0x300, 1 | PITCH_BOTH | plc),
        ]
    );
}

#[test]
fn four_gib_minus_one_is_one_line_and_four_gib_is_two_launches() {
    let e = CeEncoder::new(CeClass::HopperA, 4);
    let launches = |bytes| {
        let mut pb = PushBuffer::new();
        e.copy(&mut pb, CeAddress::Virtual(0), CeAddress::Virtual(1 << 56), bytes, Pipelining::Pipelined).unwrap();
        writes(&pb).iter().filter(|w| w.0 == 0x300).count()
    };
    assert_eq!(launches(u32::MAX as u64), 1);
    assert_eq!(launches(1 << 32), 1); // exactly two 2 GiB lines
    assert_eq!(launches((1 << 32) + 1), 2);
    assert_eq!(launches(1 << 55), 1); // 2^24 lines
}

#[test]
fn physical_sides_set_their_modes() {
    let mut pb = PushBuffer::new();
    let e = CeEncoder::new(CeClass::AmpereA, 4);
    let src = CeAddress::Physical { aperture: CeAperture::CoherentSysmem, addr: 0x1000 };
    let dst = CeAddress::Physical { aperture: CeAperture::Peer(5), addr: 0x1000 };
    e.copy(&mut pb, src, dst, 16, Pipelining::NonPipelined).unwrap();
    let w = writes(&pb);
    // PEERMEM 3 | PEER_ID 5 << 6.
    assert_eq!(&w[..2], &[(0x260, 1), (0x264, 3 | 5 << 6)]);
    assert_eq!(w.last(), Some(&(0x300, 2 | PITCH_BOTH | 1 << 12 | 1 << 13)));
    let err = CeEncoder::new(CeClass::TuringA, 4).copy(&mut PushBuffer::new(), src, dst, 16, Pipelining::Pipelined);
    assert_eq!(err, Err(CeEncodeError::PeerNotSupported { class: CeClass::TuringA }));
}

#[test]
fn memset_u32_aligned_is_one_remapped_launch() {
    let mut pb = PushBuffer::new();
    let e = CeEncoder::new(CeClass::TuringA, 4);
    e.memset(&mut pb, CeAddress::Virtual(0x1000), MemsetPattern::U32(0xdead_beef), 64, Pipelining::NonPipelined)
        .unwrap();
    // DST_X CONST_B (5), COMPONENT_SIZE FOUR (3 << 16), NUM_DST_COMPONENTS ONE.
    assert_eq!(
        writes(&pb),
        [
            (0x700, 0),
            (0x704, 0xdead_beef),
            (0x708, 5 | 3 << 16),
            (0x408, 0),
            (0x40c, 0x1000),
            (0x418, 16),
            (0x300, 2 | PITCH_BOTH | 1 << 10)
        ]
    );
}

#[test]
fn memset_u64_uses_two_components() {
    let mut pb = PushBuffer::new();
    let e = CeEncoder::new(CeClass::TuringA, 4);
    e.memset(&mut pb, CeAddress::Virtual(0x1000), MemsetPattern::U64(0x1122_3344_5566_7788), 80, Pipelining::Pipelined)
        .unwrap();
    let w = writes(&pb);
    // DST_X CONST_A (4), DST_Y CONST_B (5 << 4), FOUR, NUM_DST_COMPONENTS TWO (1 << 24).
    assert_eq!(&w[..3], &[(0x700, 0x5566_7788), (0x704, 0x1122_3344), (0x708, 4 | 5 << 4 | 3 << 16 | 1 << 24)]);
    assert_eq!(w[5], (0x418, 10));
}

#[test]
fn unaligned_memset_writes_bytes_around_aligned_words() {
    let mut pb = PushBuffer::new();
    let e = CeEncoder::new(CeClass::TuringA, 4);
    // 0x1003: one head byte, then 2 words, then a 2-byte tail.
    e.memset(&mut pb, CeAddress::Virtual(0x1003), MemsetPattern::U32(0x4433_2211), 11, Pipelining::Pipelined).unwrap();
    let w = writes(&pb);
    let remaps: Vec<_> = w.iter().filter(|x| x.0 == 0x704).map(|x| x.1).collect();
    let sizes: Vec<_> = w.iter().filter(|x| x.0 == 0x708).map(|x| x.1 >> 16 & 3).collect();
    let outs: Vec<_> = w.iter().filter(|x| x.0 == 0x40c).map(|x| x.1).collect();
    let lens: Vec<_> = w.iter().filter(|x| x.0 == 0x418).map(|x| x.1).collect();
    // The tail starts 9 bytes in: pattern bytes 1 and 2.
    assert_eq!(remaps, [0x11, 0x1144_3322, 0x22, 0x33]);
    assert_eq!(sizes, [0, 3, 0, 0]);
    assert_eq!(outs, [0x1003, 0x1004, 0x100c, 0x100d]);
    assert_eq!(lens, [1, 2, 1, 1]);
}

#[test]
fn uniform_patterns_are_byte_memsets() {
    let mut pb = PushBuffer::new();
    let e = CeEncoder::new(CeClass::TuringA, 4);
    e.memset(&mut pb, CeAddress::Virtual(0x1001), MemsetPattern::U64(0), 7, Pipelining::Pipelined).unwrap();
    let w = writes(&pb);
    assert_eq!(&w[..3], &[(0x700, 0), (0x704, 0), (0x708, 5)]);
    assert_eq!(w[5], (0x418, 7));
    assert_eq!(w.iter().filter(|x| x.0 == 0x300).count(), 1);
}

#[test]
fn semaphore_releases() {
    let mut pb = PushBuffer::new();
    CeEncoder::new(CeClass::TuringA, 4).release_semaphore(&mut pb, 0x1_0000_0010, 7).unwrap();
    // DATA_TRANSFER_TYPE NONE, FLUSH_ENABLE, ONE_WORD (1 << 3), FLUSH_TYPE SYS (0).
    assert_eq!(writes(&pb), [(0x240, 1), (0x244, 0x10), (0x248, 7), (0x300, 1 << 2 | 1 << 3)]);

    let mut pb = PushBuffer::new();
    CeEncoder::new(CeClass::HopperA, 4).release_semaphore_64(&mut pb, 0x100_0000_0000_0008, 0x1_0000_0002).unwrap();
    assert_eq!(
        writes(&pb),
        [(0x240, 0x100_0000), (0x244, 8), (0x248, 2), (0x24c, 1), (0x300, 1 << 2 | 1 << 3 | 1 << 26 | 1 << 27)]
    );

    let e = CeEncoder::new(CeClass::AmpereA, 4);
    assert_eq!(
        e.release_semaphore_64(&mut PushBuffer::new(), 8, 1),
        Err(CeEncodeError::Payload64NotSupported { class: CeClass::AmpereA })
    );
    assert_eq!(
        e.release_semaphore(&mut PushBuffer::new(), 6, 1),
        Err(CeEncodeError::SemaphoreMisaligned { va: 6, alignment: 4 })
    );
    assert!(matches!(
        e.release_semaphore(&mut PushBuffer::new(), 1 << 49, 1),
        Err(CeEncodeError::AddressOutOfRange { .. })
    ));

    let mut pb = PushBuffer::new();
    let r = SemaphoreRelease {
        va: 0x40,
        payload: 9,
        payload_64: false,
        timestamp: true,
        flush: Some(FlushType::Gl),
        interrupt: InterruptType::NonBlocking,
    };
    CeEncoder::new(CeClass::AmpereB, 4).release(&mut pb, &r).unwrap();
    // FOUR_WORD (2 << 3), NON_BLOCKING (2 << 5), FLUSH_TYPE GL (1 << 25), PLC.
    assert_eq!(writes(&pb).last(), Some(&(0x300, 1 << 2 | 2 << 3 | 2 << 5 | 1 << 25 | 1 << 26)));
}

#[test]
fn refused_operations_write_nothing() {
    let e = CeEncoder::new(CeClass::TuringA, 4);
    let mut words = [0u32; 6];
    let mut pb = PushBuffer::over_slice(&mut words, HostClass::TuringA);
    // Needs 5 + 2 + 2 words.
    let r = e.copy(&mut pb, CeAddress::Virtual(0), CeAddress::Virtual(0x1000), 16, Pipelining::Pipelined);
    assert!(matches!(r, Err(CeEncodeError::Push(PushError::Full { needed: 9, available: 6 }))));
    assert!(pb.is_empty());
    let r = e.copy(&mut pb, CeAddress::Virtual(0), CeAddress::Virtual(8), 16, Pipelining::Pipelined);
    assert!(matches!(r, Err(CeEncodeError::Overlap { .. })));
    let r = e.copy(&mut pb, CeAddress::Virtual((1 << 49) - 8), CeAddress::Virtual(0), 16, Pipelining::Pipelined);
    assert!(matches!(r, Err(CeEncodeError::AddressOutOfRange { bits: 49, .. })));
    let r = e.copy(&mut pb, CeAddress::Virtual(u64::MAX), CeAddress::Virtual(0), 2, Pipelining::Pipelined);
    assert!(matches!(r, Err(CeEncodeError::AddressOutOfRange { .. })));
    assert!(pb.is_empty());
    assert_eq!(e.copy(&mut pb, CeAddress::Virtual(0), CeAddress::Virtual(0), 0, Pipelining::Pipelined), Ok(()));
    assert!(pb.is_empty());
}
