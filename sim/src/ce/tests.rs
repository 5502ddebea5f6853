//! Model copy engine: strictness, semaphores, remapping, and a throughput benchmark.

use super::*;
use crate::engine_mem::{AccessType, FaultKind, FlatMemory};

fn class(number: u32) -> &'static CopyClass {
    CopyClass::from_number(number).expect("a copy class the model implements")
}

const LAUNCH_DMA: u32 = method::NVC5B5_LAUNCH_DMA;
/// PIPELINED, SRC/DST pitch.
const COPY: u32 = 1 | 1 << 7 | 1 << 8;

fn run(ce: &mut CopyEngine, mem: &mut FlatMemory, methods: &[(u32, u32)]) -> Result<Option<LaunchOutcome>, CeError> {
    let mut phys = NoPhysicalMemory;
    let mut bus = CeBus { virt: mem, phys: &mut phys, timestamp_ns: 0x1234_5678_9abc };
    let mut last = None;
    for &(m, v) in methods {
        last = ce.method(m, v, &mut bus)?;
    }
    Ok(last)
}

fn copy_methods(src: u64, dst: u64, len: u32) -> [(u32, u32); 6] {
    [
        (0x400, (src >> 32) as u32),
        (0x404, src as u32),
        (0x408, (dst >> 32) as u32),
        (0x40c, dst as u32),
        (0x418, len),
        (LAUNCH_DMA, COPY),
    ]
}

#[test]
fn copies_one_line_and_reports_bytes() {
    let mut mem = FlatMemory::new(0, 0x4000);
    for (i, b) in mem.bytes[..0x100].iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::TURING_DMA_COPY_A));
    let out = run(&mut ce, &mut mem, &copy_methods(0x10, 0x2001, 0x80)).unwrap().unwrap();
    assert_eq!(out, LaunchOutcome { bytes_written: 0x80, semaphore: None, interrupt: None });
    assert_eq!(mem.bytes[0x2001..0x2081], (0x10..0x90).map(|i| i as u8).collect::<Vec<_>>()[..]);
    assert_eq!(mem.bytes[0x2000], 0);
    assert_eq!(mem.bytes[0x2081], 0);
}

#[test]
fn multi_line_uses_pitches() {
    let mut mem = FlatMemory::new(0, 0x1000);
    for (i, b) in mem.bytes[..0x100].iter_mut().enumerate() {
        *b = (i as u8).wrapping_add(1);
    }
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::AMPERE_DMA_COPY_B));
    // 3 lines of 4 bytes: source pitch 16, destination pitch 8.
    let m = [
        (0x400, 0),
        (0x404, 0),
        (0x408, 0),
        (0x40c, 0x800),
        (0x410, 16),
        (0x414, 8),
        (0x418, 4),
        (0x41c, 3),
        (LAUNCH_DMA, COPY | 1 << 9),
    ];
    assert_eq!(run(&mut ce, &mut mem, &m).unwrap().unwrap().bytes_written, 12);
    assert_eq!(
        &mem.bytes[0x800..0x818],
        &[1, 2, 3, 4, 0, 0, 0, 0, 17, 18, 19, 20, 0, 0, 0, 0, 33, 34, 35, 36, 0, 0, 0, 0]
    );
}

#[test]
fn remap_swizzles_and_keeps_no_write_components() {
    let mut mem = FlatMemory::new(0, 0x1000);
    mem.bytes[..8].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    mem.bytes[0x100..0x108].fill(0xee);
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::TURING_DMA_COPY_A));
    // 2-byte components, 2 source and 2 destination components: X <- SRC_Y, Y <- NO_WRITE.
    let components = 1 | 6 << 4 | 1 << 16 | 1 << 20 | 1 << 24;
    let m = [
        (0x708, components),
        (0x400, 0),
        (0x404, 0),
        (0x408, 0),
        (0x40c, 0x100),
        (0x418, 2),
        (LAUNCH_DMA, COPY | 1 << 10),
    ];
    run(&mut ce, &mut mem, &m).unwrap();
    assert_eq!(&mem.bytes[0x100..0x108], &[3, 4, 0xee, 0xee, 7, 8, 0xee, 0xee]);
}

#[test]
fn semaphores_one_word_two_word_and_timestamped() {
    let mut mem = FlatMemory::new(0, 0x1000);
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::HOPPER_DMA_COPY_A));
    let sem = [(0x240, 0), (0x244, 0x100), (0x248, 0xaabb_ccdd), (0x24c, 0x1122_3344)];
    let mut m = sem.to_vec();
    m.push((LAUNCH_DMA, 1 << 2 | 1 << 3 | 2 << 5));
    let out = run(&mut ce, &mut mem, &m).unwrap().unwrap();
    assert_eq!(
        out,
        LaunchOutcome { bytes_written: 0, semaphore: Some(0x100), interrupt: Some(InterruptType::NonBlocking) }
    );
    assert_eq!(&mem.bytes[0x100..0x108], &[0xdd, 0xcc, 0xbb, 0xaa, 0, 0, 0, 0]);
    run(&mut ce, &mut mem, &[(LAUNCH_DMA, 1 << 3 | 1 << 27)]).unwrap();
    assert_eq!(&mem.bytes[0x100..0x108], &[0xdd, 0xcc, 0xbb, 0xaa, 0x44, 0x33, 0x22, 0x11]);
    run(&mut ce, &mut mem, &[(0x244, 0x200), (LAUNCH_DMA, 2 << 3)]).unwrap();
    assert_eq!(&mem.bytes[0x200..0x208], &[0xdd, 0xcc, 0xbb, 0xaa, 0, 0, 0, 0]);
    assert_eq!(u64::from_le_bytes(mem.bytes[0x208..0x210].try_into().unwrap()), 0x1234_5678_9abc);
    assert_eq!(
        run(&mut ce, &mut mem, &[(0x244, 0x208), (LAUNCH_DMA, 2 << 3)]),
        Err(CeError::SemaphoreMisaligned { va: 0x208, alignment: 16 })
    );
}

#[test]
fn semaphore_reductions() {
    let mut mem = FlatMemory::new(0, 0x1000);
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::TURING_DMA_COPY_A));
    // INC (6 << 14), UNSIGNED (1 << 18), ENABLE (1 << 19), one word: wraps at the payload.
    let inc = 1 << 3 | 6 << 14 | 1 << 18 | 1 << 19;
    run(&mut ce, &mut mem, &[(0x244, 0x10), (0x248, 2)]).unwrap();
    for expect in [1u32, 2, 0, 1] {
        run(&mut ce, &mut mem, &[(LAUNCH_DMA, inc)]).unwrap();
        assert_eq!(u32::from_le_bytes(mem.bytes[0x10..0x14].try_into().unwrap()), expect);
    }
    // Signed IMIN of -1 against 1.
    run(&mut ce, &mut mem, &[(0x248, u32::MAX), (LAUNCH_DMA, 1 << 3 | 1 << 19)]).unwrap();
    assert_eq!(u32::from_le_bytes(mem.bytes[0x10..0x14].try_into().unwrap()), u32::MAX);
    // FADD is refused.
    assert!(matches!(
        run(&mut ce, &mut mem, &[(LAUNCH_DMA, 1 << 3 | 0xA << 14 | 1 << 19)]),
        Err(CeError::Unsupported { .. })
    ));
}

#[test]
fn strict_about_methods_and_fields() {
    let mut mem = FlatMemory::new(0, 0x1000);
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::TURING_DMA_COPY_A));
    let err = |ce: &mut CopyEngine, mem: &mut FlatMemory, m: (u32, u32)| run(ce, mem, &[m]).unwrap_err();
    assert_eq!(
        err(&mut ce, &mut mem, (0x70c, 0)),
        CeError::UnknownMethod { class: "TURING_DMA_COPY_A", method: 0x70c, value: 0 }
    );
    // Turing has no SET_SEMAPHORE_PAYLOAD_UPPER and no PEERMEM.
    assert!(matches!(err(&mut ce, &mut mem, (0x24c, 0)), CeError::UnknownMethod { .. }));
    assert!(matches!(err(&mut ce, &mut mem, (0x260, 3)), CeError::InvalidField { field: "TARGET", value: 3, .. }));
    // OFFSET_IN_UPPER is 17 bits before Hopper.
    assert!(matches!(err(&mut ce, &mut mem, (0x400, 1 << 17)), CeError::InvalidField { .. }));
    assert!(CopyEngine::new(class(nvgpu::hw::classes::HOPPER_DMA_COPY_A))
        .method(0x400, 1 << 17, &mut CeBus { virt: &mut mem, phys: &mut NoPhysicalMemory, timestamp_ns: 0 })
        .is_ok());
    // DATA_TRANSFER_TYPE 3, INTERRUPT_TYPE 3, reserved START_OF_COPY, PAYLOAD_SIZE on Turing.
    for launch in [3, 3 << 5, 1 << 24, 1 << 27, 1 << 28] {
        assert!(matches!(err(&mut ce, &mut mem, (LAUNCH_DMA, launch)), CeError::InvalidField { .. }), "{launch:#x}");
    }
    // Block-linear, VPR, conditional-interrupt semaphores: defined but not modelled.
    for launch in [1 | 1 << 8, COPY | 1 << 22, 3 << 3] {
        assert!(matches!(err(&mut ce, &mut mem, (LAUNCH_DMA, launch)), CeError::Unsupported { .. }), "{launch:#x}");
    }
    // Ampere A: bits 20/21 are undefined; Hopper: COPY_TYPE SECURE is not modelled.
    let mut ampere = CopyEngine::new(class(nvgpu::hw::classes::AMPERE_DMA_COPY_A));
    assert!(matches!(err(&mut ampere, &mut mem, (LAUNCH_DMA, COPY | 1 << 20)), CeError::InvalidField { .. }));
    let mut hopper = CopyEngine::new(class(nvgpu::hw::classes::HOPPER_DMA_COPY_A));
    assert!(matches!(err(&mut hopper, &mut mem, (LAUNCH_DMA, COPY | 1 << 20)), CeError::Unsupported { .. }));
    assert!(matches!(err(&mut ce, &mut mem, (0x708, 7)), CeError::InvalidField { .. }));
    assert_eq!(ce.launches, 0);
}

#[test]
fn faults_stop_the_copy() {
    let mut mem = FlatMemory::new(0, 0x1000);
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::TURING_DMA_COPY_A));
    let e = run(&mut ce, &mut mem, &copy_methods(0, 0xf00, 0x200)).unwrap_err();
    assert_eq!(e, CeError::Fault(MmuFault { va: 0x1000, access: AccessType::Write, kind: FaultKind::InvalidPte }));
    let e = run(&mut ce, &mut mem, &copy_methods(0x2000, 0, 0x10)).unwrap_err();
    assert!(matches!(e, CeError::Fault(MmuFault { access: AccessType::Read, .. })));
    // A physical side with no memory behind it.
    let m = [(0x264, 1), (0x400, 0), (0x404, 0), (0x408, 0), (0x40c, 0), (0x418, 4), (LAUNCH_DMA, COPY | 1 << 13)];
    assert!(matches!(run(&mut ce, &mut mem, &m), Err(CeError::PhysicalUnbacked { len: 4, .. })));
}

/// MB/s of a 64 MiB copy through the model against `copy_from_slice` (`cargo test -p sim
/// --release --lib ce::tests::throughput -- --nocapture` for the figure); as a test it checks
/// the copies.
#[test]
fn throughput() {
    const SIZE: usize = 64 << 20;
    let mut mem = FlatMemory::new(0, 2 * SIZE);
    for (i, b) in mem.bytes[..SIZE].iter_mut().enumerate() {
        *b = (i * 7) as u8;
    }
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::AMPERE_DMA_COPY_B));
    let rounds = 8;
    let t = std::time::Instant::now();
    for _ in 0..rounds {
        run(&mut ce, &mut mem, &copy_methods(0, SIZE as u64, SIZE as u32)).unwrap();
    }
    let model = t.elapsed();
    assert_eq!(mem.bytes[..SIZE], mem.bytes[SIZE..]);
    let (a, b) = mem.bytes.split_at_mut(SIZE);
    let t = std::time::Instant::now();
    for _ in 0..rounds {
        b.copy_from_slice(a);
        std::hint::black_box(&mut *b);
    }
    let plain = t.elapsed();
    let mbs = |d: std::time::Duration| (rounds * SIZE) as f64 / d.as_secs_f64() / 1e6;
    println!(
        "64 MiB copy: model {:.0} MB/s, copy_from_slice {:.0} MB/s, ratio {:.2}",
        mbs(model),
        mbs(plain),
        mbs(model) / mbs(plain)
    );
}

/// Found by the `pushbuffer` fuzz target: 4 Gi lines of pitch 0 into memory that is there kept
/// the model in one doorbell for minutes. One launch is bounded by MAX_LAUNCH_BYTES.
#[test]
fn a_launch_beyond_the_models_limit_is_refused_not_run() {
    let mut mem = FlatMemory::new(0, 0x1000);
    let mut ce = CopyEngine::new(class(nvgpu::hw::classes::AMPERE_DMA_COPY_B));
    // Pitches 0, 0x800 bytes a line, 0xffff_ffff lines: 8 TiB over the same 2 KiB.
    let m = [(0x410, 0), (0x414, 0), (0x418, 0x800), (0x41c, u32::MAX), (LAUNCH_DMA, COPY | 1 << 9)];
    assert_eq!(run(&mut ce, &mut mem, &m), Err(CeError::LaunchTooLarge { bytes: 0x800 * u128::from(u32::MAX) }));
    // At the limit it still runs: 128 Ki lines of 2 KiB.
    let m = [(0x41c, (MAX_LAUNCH_BYTES / 0x800) as u32), (LAUNCH_DMA, COPY | 1 << 9)];
    assert_eq!(run(&mut ce, &mut mem, &m).unwrap().unwrap().bytes_written, MAX_LAUNCH_BYTES);
    // Also found by the fuzzer: 4 Gi lines of length 0 move nothing, and take no time.
    let m = [(0x418, 0), (0x41c, u32::MAX), (LAUNCH_DMA, COPY | 1 << 9)];
    assert_eq!(run(&mut ce, &mut mem, &m).unwrap().unwrap().bytes_written, 0);
}
