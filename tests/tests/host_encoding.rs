//! `nvgpu::host`: pushbuffer method headers, semaphore methods and GPFIFO entries, bit-exact
//! against values worked out by hand from `clc46f.h`'s field positions:
//!
//! - method header: `SEC_OP` 31:29, `METHOD_COUNT`/`IMMD_DATA` 28:16, `METHOD_SUBCHANNEL` 15:13,
//!   `METHOD_ADDRESS` 11:0 (dwords); SEC_OP INC 1, NON_INC 3, IMMD 4, ONE_INC 5;
//! - semaphores: `SEM_ADDR_LO` 0x5c .. `SEM_EXECUTE` 0x6c; EXECUTE `OPERATION` 2:0 (ACQUIRE 0,
//!   RELEASE 1), `ACQUIRE_SWITCH_TSG` 12, `RELEASE_WFI` 20, `PAYLOAD_SIZE` 24, `RELEASE_TIMESTAMP` 25;
//! - GPFIFO entry: ENTRY0 `FETCH` 0:0, `GET` 31:2; ENTRY1 `GET_HI` 7:0, `LEVEL` 9, `LENGTH`
//!   30:10, `SYNC` 31, `OPCODE` 7:0.
//!
//! The facts themselves are checked against the headers by `header_conformance`.

use nvgpu::host::gpfifo::{GpEntryKind, GP_MAX_LENGTH_DWORDS};
use nvgpu::host::pushbuf::{MAX_IMMEDIATE, MAX_METHOD_COUNT, METHOD_ADDRESS_LIMIT};
use nvgpu::host::*;
use nvgpu::hw::host::{GpFetch, GpLevel, GpOpcode, GpSync, SemOperation};

fn pb() -> PushBuffer {
    PushBuffer::new()
}

#[test]
fn limits_follow_the_field_widths() {
    assert_eq!(METHOD_ADDRESS_LIMIT, 0x4000); // 12 bits of dword address
    assert_eq!(MAX_METHOD_COUNT, 8191); // 13 bits
    assert_eq!(MAX_IMMEDIATE, 0x1fff); // 13 bits
    assert_eq!(GP_MAX_LENGTH_DWORDS, 0x1f_ffff); // 21 bits
    assert_eq!(HostClass::TuringA.semaphore_address_bits(), 40);
    assert_eq!(HostClass::AmpereA.semaphore_address_bits(), 40);
    assert_eq!(HostClass::HopperA.semaphore_address_bits(), 57);
    assert_eq!(HostClass::HopperA.class_number(), 0xc86f);
}

#[test]
fn incrementing_method() {
    let mut p = pb();
    p.incr(1, 0x200, &[0xdead, 0xbeef]).unwrap();
    // 1<<29 | 2<<16 | 1<<13 | 0x200>>2
    assert_eq!(p.words(), &[0x2002_2080, 0xdead, 0xbeef]);
}

#[test]
fn non_incrementing_method_at_the_top_of_the_range() {
    let mut p = pb();
    p.non_incr(7, 0x3ffc, &[1, 2, 3]).unwrap();
    // 3<<29 | 3<<16 | 7<<13 | 0xfff
    assert_eq!(p.words(), &[0x6003_efff, 1, 2, 3]);
}

#[test]
fn immediate_and_one_incr() {
    let mut p = pb();
    p.immediate(2, 0x100, 0x1fff).unwrap();
    p.one_incr(0, 0x8, &[0xa, 0xb, 0xc]).unwrap();
    // 4<<29 | 0x1fff<<16 | 2<<13 | 0x40 ; 5<<29 | 3<<16 | 0 | 2
    assert_eq!(p.words(), &[0x9fff_4040, 0xa003_0002, 0xa, 0xb, 0xc]);
}

#[test]
fn set_object_binds_a_class() {
    let mut p = pb();
    p.set_object(3, 0xc7b5).unwrap();
    // 1<<29 | 1<<16 | 3<<13 | 0
    assert_eq!(p.words(), &[0x2001_6000, 0xc7b5]);
}

#[test]
fn semaphore_release_with_wfi() {
    let mut p = pb();
    p.semaphore_release(0x12_3456_7890, 0xcafe, true).unwrap();
    // One INC method of 5 words at SEM_ADDR_LO (0x5c>>2 = 0x17), subchannel 0.
    // EXECUTE: RELEASE (1) | RELEASE_WFI (1<<20), 32-bit payload, no timestamp.
    assert_eq!(p.words(), &[0x2005_0017, 0x3456_7890, 0x12, 0xcafe, 0, 0x0010_0001]);
}

#[test]
fn semaphore_release_64_and_acquire() {
    let mut p = pb();
    p.semaphore_release_64(0x1000, 0x1_0000_0002, false).unwrap();
    p.semaphore_acquire(0x2000, 7).unwrap();
    p.semaphore_acquire_op(0x2000, 9, SemOperation::AcqCircGeq).unwrap();
    assert_eq!(
        p.words(),
        &[
            0x2005_0017,
            0x1000,
            0,
            2,
            1,
            0x0100_0001, // RELEASE | PAYLOAD_SIZE_64BIT (1<<24)
            0x2005_0017,
            0x2000,
            0,
            7,
            0,
            0x0000_1000, // ACQUIRE (0) | ACQUIRE_SWITCH_TSG (1<<12)
            0x2005_0017,
            0x2000,
            0,
            9,
            0,
            0x0000_1003, // ACQ_CIRC_GEQ (3) | ACQUIRE_SWITCH_TSG
        ]
    );
}

#[test]
fn semaphore_address_width_depends_on_the_class() {
    let mut turing = pb();
    assert_eq!(
        turing.semaphore_release(1 << 40, 1, false),
        Err(PushError::SemaphoreOutOfRange { address: 1 << 40, bits: 40 })
    );
    assert_eq!(turing.semaphore_acquire(0x1002, 1), Err(PushError::SemaphoreMisaligned { address: 0x1002 }));
    assert!(turing.is_empty());

    let mut hopper = PushBuffer::with_storage(Vec::new(), HostClass::HopperA);
    hopper.semaphore_release(0x0100_0000_0000_1000, 5, false).unwrap();
    assert_eq!(hopper.words(), &[0x2005_0017, 0x1000, 0x0100_0000, 5, 0, 1]);
    assert!(matches!(
        hopper.semaphore_release(1 << 57, 1, false),
        Err(PushError::SemaphoreOutOfRange { bits: 57, .. })
    ));
}

#[test]
fn refused_methods_write_nothing() {
    let mut p = pb();
    assert_eq!(p.incr(8, 0, &[1]), Err(PushError::SubchannelOutOfRange { subchannel: 8 }));
    assert_eq!(p.incr(0, 0x102, &[1]), Err(PushError::MethodMisaligned { method: 0x102 }));
    assert_eq!(p.non_incr(0, 0x4000, &[1]), Err(PushError::MethodOutOfRange { method: 0x4000 }));
    assert_eq!(p.one_incr(0, 0x100, &[]), Err(PushError::EmptyData));
    let big = vec![0u32; 8192];
    assert_eq!(p.incr(0, 0x100, &big), Err(PushError::TooManyData { count: 8192 }));
    assert_eq!(p.immediate(0, 0x100, 0x2000), Err(PushError::ImmediateTooLarge { data: 0x2000 }));
    assert_eq!(p.immediate(0, 0x4000, 1), Err(PushError::MethodOutOfRange { method: 0x4000 }));
    assert!(p.is_empty());
    // The largest count is accepted.
    p.non_incr(0, 0x100, &big[..8191]).unwrap();
    assert_eq!(p.words()[0], 0x7fff_0040 /* 3<<29 | 8191<<16 | 0x40 */);
}

#[test]
fn slice_storage_refuses_a_method_that_does_not_fit_whole() {
    let mut buf = [0xffff_ffffu32; 4];
    let mut p = PushBuffer::over_slice(&mut buf, HostClass::AmpereA);
    p.incr(0, 0x100, &[1, 2]).unwrap();
    assert_eq!(p.incr(0, 0x100, &[3]), Err(PushError::Full { needed: 2, available: 1 }));
    p.immediate(0, 0x104, 4).unwrap();
    assert_eq!(p.immediate(0, 0x104, 4), Err(PushError::Full { needed: 1, available: 0 }));
    assert_eq!(p.len(), 4);
    assert_eq!(buf, [0x2002_0040, 1, 2, 0x8004_0041]);
}

#[test]
fn decode_round_trips_every_kind() {
    let mut p = pb();
    p.incr(1, 0x200, &[10, 11, 12]).unwrap();
    p.nops(2).unwrap();
    p.non_incr(2, 0x300, &[20, 21]).unwrap();
    p.one_incr(3, 0x400, &[30, 31, 32]).unwrap();
    p.immediate(4, 0x500, 0x123).unwrap();
    p.semaphore_release(0x40_0000_1000, 0x77, true).unwrap();

    let methods: Vec<_> = decode(p.words()).collect::<Result<_, _>>().unwrap();
    assert_eq!(methods.len(), 5);
    let writes: Vec<(u8, u32, u32)> =
        methods.iter().flat_map(|m| m.writes().map(move |(a, v)| (m.subchannel, a, v))).collect();
    assert_eq!(
        writes,
        vec![
            (1, 0x200, 10),
            (1, 0x204, 11),
            (1, 0x208, 12),
            (2, 0x300, 20),
            (2, 0x300, 21),
            (3, 0x400, 30),
            (3, 0x404, 31),
            (3, 0x404, 32),
            (4, 0x500, 0x123),
            (0, 0x5c, 0x1000),
            (0, 0x60, 0x40),
            (0, 0x64, 0x77),
            (0, 0x68, 0),
            (0, 0x6c, 0x0010_0001),
        ]
    );
    assert_eq!(methods[3].kind, MethodKind::Immediate(0x123));
    assert!(methods[3].data.is_empty());
}

#[test]
fn decode_errors() {
    // Header announcing 2 words with only 1 present.
    let words = [0x2002_0040, 1];
    let r: Vec<_> = decode(&words).collect();
    assert_eq!(r, vec![Err(DecodeError::Truncated { at: 0, count: 2 })]);
    // END_PB_SEGMENT (7<<29) is not a method.
    let words = [0x8001_0040, 0xe000_0000, 0x8001_0040];
    let r: Vec<_> = decode(&words).collect();
    assert_eq!(r.len(), 2);
    assert!(r[0].is_ok());
    assert_eq!(r[1], Err(DecodeError::Unsupported { at: 1, word: 0xe000_0000 }));
}

#[test]
fn gp_entry_encoding() {
    let e = GpEntry::new(0x12_3456_7890, 0x100, GpEntryFlags::default()).unwrap();
    // ENTRY0: GET = va[31:2] at 31:2, FETCH 0. ENTRY1: GET_HI 0x12 | LENGTH 0x100<<10.
    assert_eq!(e.to_words(), [0x3456_7890, 0x0004_0012]);
    assert_eq!(e.to_u64(), 0x0004_0012_3456_7890);

    let flags = GpEntryFlags { fetch: GpFetch::Conditional, level: GpLevel::Subroutine, sync: GpSync::Wait };
    let e = GpEntry::new(0x12_3456_7890, 0x100, flags).unwrap();
    // + FETCH 1, LEVEL 1<<9, SYNC 1<<31
    assert_eq!(e.to_words(), [0x3456_7891, 0x8004_0212]);
    assert_eq!(
        GpEntry::from_words(e.to_words()).decode(),
        Ok(GpEntryKind::Segment { address: 0x12_3456_7890, length_dwords: 0x100, flags })
    );

    let e = GpEntry::new(0xff_ffff_fffc, GP_MAX_LENGTH_DWORDS, GpEntryFlags::default()).unwrap();
    assert_eq!(e.to_words(), [0xffff_fffc, 0x7fff_fcff]);
    assert_eq!(
        e.decode(),
        Ok(GpEntryKind::Segment {
            address: 0xff_ffff_fffc,
            length_dwords: GP_MAX_LENGTH_DWORDS,
            flags: GpEntryFlags::default()
        })
    );
}

#[test]
fn gp_entry_errors() {
    let f = GpEntryFlags::default();
    assert_eq!(GpEntry::new(0x1002, 1, f), Err(GpEntryError::Misaligned { address: 0x1002 }));
    assert_eq!(GpEntry::new(1 << 40, 1, f), Err(GpEntryError::AddressOutOfRange { address: 1 << 40 }));
    assert_eq!(GpEntry::new(0x1000, 0, f), Err(GpEntryError::EmptySegment));
    assert_eq!(GpEntry::new(0x1000, 0x20_0000, f), Err(GpEntryError::LengthOutOfRange { length: 0x20_0000 }));
}

#[test]
fn gp_control_entries() {
    assert_eq!(GpEntry::control(GpOpcode::Nop, 0, GpSync::Proceed).to_words(), [0, 0]);
    let e = GpEntry::control(GpOpcode::GpCrc, 0x1234, GpSync::Wait);
    assert_eq!(e.to_words(), [0x1234, 0x8000_0002]);
    assert_eq!(e.decode(), Ok(GpEntryKind::Control { opcode: GpOpcode::GpCrc, operand: 0x1234, sync: GpSync::Wait }));
    // An opcode the header does not define is an error, not a panic.
    assert!(matches!(GpEntry::from_words([0, 0x0000_0009]).decode(), Err(GpEntryError::InvalidField(_))));
}

#[test]
fn host_facts_are_in_the_conformance_tables() {
    let names: std::collections::BTreeSet<_> = nvgpu::hw::all_facts().map(|f| f.name).collect();
    for name in [
        "NVC46F_DMA_SEC_OP_INC_METHOD",
        "NVC46F_DMA_METHOD_COUNT",
        "NVC46F_GP_ENTRY1_LENGTH",
        "NVC46F_SEM_EXECUTE_RELEASE_WFI",
        "NVC46F_SEM_EXECUTE",
        "NVC56F_GP_ENTRY0_GET",
        "NVC86F_SEM_ADDR_HI_OFFSET",
    ] {
        assert!(names.contains(name), "{name}");
    }
    let host_facts = nvgpu::hw::host::FACT_TABLES
        .iter()
        .flat_map(|t| t.iter())
        .flat_map(|g| g.iter())
        .flat_map(|f| f.iter())
        .count();
    eprintln!("{host_facts} host facts");
    assert!(host_facts >= 138, "{host_facts}");
}
