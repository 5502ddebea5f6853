//! Resumable launches ([`start_launch`], [`LaunchState`]): replayable MMU faults stall the
//! faulting threads with no effect of the access, the driver maps the page, and the next `run`
//! (the replay) re-executes the access and goes on.

use alloc::string::String;
use alloc::vec::Vec;

use super::*;
use crate::engine_mem::{AccessType, FaultKind, MmuFault, VirtualMemory};

const HEAD: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

/// Memory whose pages (of `page` bytes) fault until mapped. Its `write` is as weak as
/// [`VirtualMemory::write`] allows: byte by byte, so a fault leaves the bytes before the faulting
/// page written; `probe_write` is exact. Counts the accesses and probes that faulted.
struct PagedMemory {
    base: u64,
    page: u64,
    bytes: Vec<u8>,
    mapped: Vec<bool>,
    faults: u32,
}

impl PagedMemory {
    fn new(base: u64, len: usize, page: u64) -> Self {
        let pages = (len as u64).div_ceil(page) as usize;
        PagedMemory { base, page, bytes: alloc::vec![0; len], mapped: alloc::vec![true; pages], faults: 0 }
    }
    fn set(&mut self, va: u64, len: u64, on: bool) {
        for a in (va..va + len).step_by(self.page as usize) {
            let p = ((a - self.base) / self.page) as usize;
            self.mapped[p] = on;
        }
    }
    fn unmap(&mut self, va: u64, len: u64) {
        self.set(va, len, false);
    }
    fn map(&mut self, va: u64, len: u64) {
        self.set(va, len, true);
    }
    /// The first byte of `[va, va + len)` that would fault.
    fn check(&self, va: u64, len: usize, access: AccessType) -> Result<(), MmuFault> {
        for a in va..va + len as u64 {
            if !self.ok(a) {
                return Err(MmuFault { va: a, access, kind: FaultKind::InvalidPte });
            }
        }
        Ok(())
    }
    fn ok(&self, a: u64) -> bool {
        a >= self.base
            && ((a - self.base) as usize) < self.bytes.len()
            && self.mapped[((a - self.base) / self.page) as usize]
    }
    fn put_u32s(&mut self, va: u64, vals: &[u32]) {
        for (i, v) in vals.iter().enumerate() {
            let at = (va - self.base) as usize + 4 * i;
            self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    /// Reads the backing store directly (mapped or not).
    fn u32s(&self, va: u64, n: usize) -> Vec<u32> {
        let at = (va - self.base) as usize;
        self.bytes[at..at + 4 * n].chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
}

impl VirtualMemory for PagedMemory {
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MmuFault> {
        if let Err(f) = self.check(va, buf.len(), AccessType::Read) {
            self.faults += 1;
            return Err(f);
        }
        let at = (va - self.base) as usize;
        buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
        Ok(())
    }
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MmuFault> {
        for (i, b) in data.iter().enumerate() {
            let a = va + i as u64;
            if !self.ok(a) {
                self.faults += 1;
                return Err(MmuFault { va: a, access: AccessType::Write, kind: FaultKind::InvalidPte });
            }
            self.bytes[(a - self.base) as usize] = *b;
        }
        Ok(())
    }
    fn probe_write(&mut self, va: u64, len: usize) -> Result<(), MmuFault> {
        self.check(va, len, AccessType::Write).inspect_err(|_| self.faults += 1)
    }
}

fn module(body: &str) -> (Module, String) {
    let text = alloc::format!("{HEAD}{body}");
    let m = Module::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (m, text)
}

/// 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> u32 {
    text.lines().position(|l| l.contains(needle)).expect(needle) as u32 + 1
}

fn params(m: &Module, kernel: &str, args: &[u64]) -> Vec<u8> {
    let bytes: Vec<[u8; 8]> = args.iter().map(|a| a.to_le_bytes()).collect();
    let k = m.kernel(kernel).unwrap();
    let refs: Vec<&[u8]> = bytes.iter().zip(k.params()).map(|(b, p)| &b[..p.size as usize]).collect();
    k.pack_params(&refs).unwrap()
}

fn stalled(r: Result<RunOutcome, PtxError>) -> Vec<StalledAccess> {
    match r {
        Ok(RunOutcome::Stalled { faults }) => faults,
        other => panic!("expected a stall, got {other:?}"),
    }
}

fn completed(r: Result<RunOutcome, PtxError>) -> LaunchStats {
    match r {
        Ok(RunOutcome::Completed(s)) => s,
        other => panic!("expected completion, got {other:?}"),
    }
}

const VADD: &str = ".visible .entry vadd(\n\t.param .u64 pa,\n\t.param .u64 pb,\n\t.param .u64 pc\n)\n{\n\
\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\
\tld.param.u64 %rd1, [pa];\n\tld.param.u64 %rd2, [pb];\n\tld.param.u64 %rd3, [pc];\n\
\tmov.u32 %r1, %ctaid.x;\n\tmov.u32 %r2, %ntid.x;\n\tmov.u32 %r3, %tid.x;\n\tmad.lo.s32 %r4, %r1, %r2, %r3;\n\
\tmul.wide.u32 %rd4, %r4, 4;\n\tadd.s64 %rd5, %rd1, %rd4;\n\tadd.s64 %rd6, %rd2, %rd4;\n\tadd.s64 %rd7, %rd3, %rd4;\n\
\tld.global.u32 %r5, [%rd5];\n\tld.global.u32 %r6, [%rd6];\n\tadd.s32 %r7, %r5, %r6;\n\
\tst.global.u32 [%rd7], %r7;\n\tret;\n}\n";

const A: u64 = 0x10000;
const B: u64 = 0x11000;
const C: u64 = 0x12000;

/// Memory for VADD over `n` elements: a[i] = 3i + 1, b[i] = 1000 i.
fn vadd_memory(n: usize) -> PagedMemory {
    let mut mem = PagedMemory::new(A, 0x3000, 0x1000);
    mem.put_u32s(A, &(0..n as u32).map(|i| 3 * i + 1).collect::<Vec<_>>());
    mem.put_u32s(B, &(0..n as u32).map(|i| 1000 * i).collect::<Vec<_>>());
    mem
}

#[test]
fn vector_add_stalls_on_its_unmapped_output_then_completes_after_the_replay() {
    let (m, text) = module(VADD);
    let p = params(&m, "vadd", &[A, B, C]);
    let cfg = LaunchConfig::linear(1, 64);
    // The same launch with every page mapped, for the instruction count.
    let mut reference = vadd_memory(64);
    let want = launch(&m, "vadd", &cfg, &p, &mut reference, &Limits::default()).unwrap();

    let mut mem = vadd_memory(64);
    mem.unmap(C, 0x1000);
    let mut l = start_launch(&m, "vadd", &cfg, &p, &Limits::default()).unwrap();
    let faults = stalled(l.run(&m, &mut mem));
    assert_eq!(faults.len(), 64);
    let st_line = line_of(&text, "st.global.u32");
    for (t, s) in faults.iter().enumerate() {
        let t = t as u32;
        assert_eq!(s.fault, MmuFault { va: C + 4 * t as u64, access: AccessType::Write, kind: FaultKind::InvalidPte });
        assert_eq!((s.cta, s.tid, s.thread, s.warp), ([0; 3], [t, 0, 0], t, t / 32));
        assert_eq!(s.line, st_line);
    }
    assert_eq!(mem.u32s(C, 64), alloc::vec![0; 64], "nothing written");
    assert!(!l.is_finished());

    // A replay without mapping stalls again with the same faults.
    assert_eq!(stalled(l.run(&m, &mut mem)), faults);
    assert_eq!(mem.u32s(C, 64), alloc::vec![0; 64]);

    mem.map(C, 0x1000);
    let stats = completed(l.run(&m, &mut mem));
    assert_eq!(mem.u32s(C, 64), (0..64u32).map(|i| 3 * i + 1 + 1000 * i).collect::<Vec<_>>());
    assert_eq!(stats, want, "faulted accesses are not counted, their replays are");
    assert_eq!((stats.ctas, stats.threads), (1, 64));
    // Finished: running again answers the same and touches nothing.
    assert!(l.is_finished());
    assert_eq!(completed(l.run(&m, &mut mem)), want);
}

#[test]
fn plain_launch_still_fails_with_the_first_fault() {
    let (m, text) = module(VADD);
    let p = params(&m, "vadd", &[A, B, C]);
    let mut mem = vadd_memory(64);
    mem.unmap(C, 0x1000);
    match launch(&m, "vadd", &LaunchConfig::linear(1, 64), &p, &mut mem, &Limits::default()).unwrap_err() {
        PtxError::Exec { error: ExecError::Fault(f), line, instruction, cta, tid } => {
            assert_eq!(f, MmuFault { va: C, access: AccessType::Write, kind: FaultKind::InvalidPte });
            assert_eq!((line, instruction.as_str()), (line_of(&text, "st.global.u32"), "st.global.u32"));
            assert_eq!((cta, tid), ([0; 3], [0; 3]));
        }
        other => panic!("{other:?}"),
    }
    // The first fault ended the launch: no other thread tried its store.
    assert_eq!(mem.faults, 1);
}

#[test]
fn cancel_ends_the_launch_with_the_fault() {
    let (m, text) = module(VADD);
    let p = params(&m, "vadd", &[A, B, C]);
    let mut mem = vadd_memory(64);
    mem.unmap(C, 0x1000);
    let mut l = start_launch(&m, "vadd", &LaunchConfig::linear(1, 64), &p, &Limits::default()).unwrap();
    assert_eq!(stalled(l.run(&m, &mut mem)).len(), 64);
    // Nothing is stalled on another page: no effect.
    assert!(!l.cancel(B, 0x1000, |_| true));
    // The stalled accesses are writes: a cancel of reads only leaves them stalled.
    assert!(!l.cancel(C + 0x10, 0x1000, |a| a == AccessType::Read));
    assert!(!l.is_finished());
    assert!(l.cancel(C + 0x10, 0x1000, |a| a == AccessType::Write));
    mem.map(C, 0x1000);
    let want = PtxError::Exec {
        error: ExecError::Fault(MmuFault { va: C, access: AccessType::Write, kind: FaultKind::InvalidPte }),
        line: line_of(&text, "st.global.u32"),
        instruction: "st.global.u32".into(),
        cta: [0; 3],
        tid: [0; 3],
    };
    assert_eq!(l.run(&m, &mut mem).unwrap_err(), want);
    assert!(l.is_finished());
    // The kernel was killed: no replay happens, even with the page now mapped.
    assert_eq!(l.run(&m, &mut mem).unwrap_err(), want);
    assert_eq!(mem.u32s(C, 64), alloc::vec![0; 64]);
}

const SUM: &str = ".visible .entry sum(\n\t.param .u64 pin,\n\t.param .u64 pout,\n\t.param .u32 pn\n)\n{\n\
\t.reg .pred %p<2>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<8>;\n\
\tld.param.u64 %rd1, [pin];\n\tld.param.u64 %rd2, [pout];\n\tld.param.u32 %r1, [pn];\n\
\tmov.u32 %r2, %tid.x;\n\tadd.s32 %r3, %r2, 1;\n\tmov.u32 %r4, 0;\n\tmov.u32 %r5, 0;\n\tmov.u64 %rd3, %rd1;\n\
$L_loop:\n\tld.global.u32 %r6, [%rd3];\n\tmad.lo.s32 %r7, %r6, %r3, %r5;\n\tmad.lo.s32 %r4, %r4, 3, %r7;\n\
\tadd.s64 %rd3, %rd3, 4;\n\tadd.s32 %r5, %r5, 1;\n\tsetp.lt.u32 %p1, %r5, %r1;\n\t@%p1 bra $L_loop;\n\
\tmul.wide.u32 %rd4, %r2, 4;\n\tadd.s64 %rd5, %rd2, %rd4;\n\tst.global.u32 [%rd5], %r4;\n\tret;\n}\n";

#[test]
fn a_loop_that_faults_midway_keeps_its_registers_across_replays() {
    let (m, text) = module(SUM);
    const IN: u64 = 0x20000;
    const OUT: u64 = 0x23000;
    let n = 3 * 1024u32; // three pages of input
    let mut mem = PagedMemory::new(IN, 0x4000, 0x1000);
    let input: Vec<u32> = (0..n).map(|j| j.wrapping_mul(7) + 1).collect();
    mem.put_u32s(IN, &input);
    mem.unmap(IN + 0x1000, 0x2000);
    let p = params(&m, "sum", &[IN, OUT, n as u64]);
    let mut l = start_launch(&m, "sum", &LaunchConfig::linear(1, 4), &p, &Limits::default()).unwrap();
    let ld_line = line_of(&text, "ld.global.u32");
    // Each of the 4 threads stops at element 1024, then (page 2 mapped) at 2048.
    for page in [1u64, 2] {
        let faults = stalled(l.run(&m, &mut mem));
        assert_eq!(faults.len(), 4);
        for (t, s) in faults.iter().enumerate() {
            assert_eq!(
                s.fault,
                MmuFault { va: IN + page * 0x1000, access: AccessType::Read, kind: FaultKind::InvalidPte }
            );
            assert_eq!((s.thread, s.line), (t as u32, ld_line));
        }
        assert_eq!(mem.u32s(OUT, 4), [0; 4]);
        mem.map(IN + page * 0x1000, 0x1000);
    }
    completed(l.run(&m, &mut mem));
    let want: Vec<u32> = (1..=4u32)
        .map(|f| {
            (0..n).fold(0u32, |acc, j| {
                acc.wrapping_mul(3).wrapping_add(input[j as usize].wrapping_mul(f).wrapping_add(j))
            })
        })
        .collect();
    assert_eq!(mem.u32s(OUT, 4), want);
}

const BAR: &str = ".visible .entry bar(\n\t.param .u64 pin,\n\t.param .u64 pout\n)\n{\n\
\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<12>;\n\t.shared .align 4 .b8 sh[256];\n\
\tld.param.u64 %rd1, [pin];\n\tld.param.u64 %rd2, [pout];\n\
\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n\tld.global.u32 %r2, [%rd4];\n\
\tmov.u64 %rd5, sh;\n\tadd.s64 %rd6, %rd5, %rd3;\n\tst.shared.u32 [%rd6], %r2;\n\tbar.sync 0;\n\
\tadd.s32 %r3, %r1, 1;\n\trem.u32 %r3, %r3, 64;\n\tmul.wide.u32 %rd7, %r3, 4;\n\tadd.s64 %rd8, %rd5, %rd7;\n\
\tld.shared.u32 %r4, [%rd8];\n\tadd.s32 %r5, %r4, %r2;\n\tadd.s64 %rd9, %rd2, %rd3;\n\tst.global.u32 [%rd9], %r5;\n\tret;\n}\n";

#[test]
fn a_barrier_waiting_on_stalled_threads_stalls_the_cta_instead_of_deadlocking() {
    let (m, _) = module(BAR);
    // in[0..32] ends page 0x30000, in[32..64] starts page 0x31000 (unmapped).
    const IN: u64 = 0x31000 - 128;
    const OUT: u64 = 0x32000;
    let mut mem = PagedMemory::new(0x30000, 0x3000, 0x1000);
    let input: Vec<u32> = (0..64u32).map(|t| 1000 + 3 * t).collect();
    mem.put_u32s(IN, &input);
    mem.unmap(0x31000, 0x1000);
    let p = params(&m, "bar", &[IN, OUT]);
    let mut l = start_launch(&m, "bar", &LaunchConfig::linear(1, 64), &p, &Limits::default()).unwrap();
    let faults = stalled(l.run(&m, &mut mem));
    // Only warp 1 faults; warp 0 waits at the barrier.
    assert_eq!(faults.iter().map(|s| s.thread).collect::<Vec<_>>(), (32..64).collect::<Vec<u32>>());
    for s in &faults {
        assert_eq!(s.fault.va, IN + 4 * s.thread as u64);
        assert_eq!((s.fault.access, s.warp), (AccessType::Read, 1));
    }
    assert_eq!(mem.u32s(OUT, 64), alloc::vec![0; 64]);
    assert_eq!(stalled(l.run(&m, &mut mem)), faults);
    mem.map(0x31000, 0x1000);
    let stats = completed(l.run(&m, &mut mem));
    assert_eq!(stats.ctas, 1);
    let want: Vec<u32> = (0..64).map(|t| input[(t + 1) % 64] + input[t]).collect();
    assert_eq!(mem.u32s(OUT, 64), want);
}

const V4: &str = ".visible .entry v4(\n\t.param .u64 pin,\n\t.param .u64 pout\n)\n{\n\
\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<4>;\n\
\tld.param.u64 %rd1, [pin];\n\tld.param.u64 %rd2, [pout];\n\
\tmov.u32 %r1, 10;\n\tmov.u32 %r2, 20;\n\tmov.u32 %r3, 30;\n\tmov.u32 %r4, 40;\n\
\tmov.u32 %r5, 1;\n\tmov.u32 %r6, 2;\n\tmov.u32 %r7, 3;\n\tmov.u32 %r8, 4;\n\
\tld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n\
\tadd.s32 %r5, %r5, %r1;\n\tadd.s32 %r6, %r6, %r2;\n\tadd.s32 %r7, %r7, %r3;\n\tadd.s32 %r8, %r8, %r4;\n\
\tst.global.v4.u32 [%rd2], {%r5, %r6, %r7, %r8};\n\tret;\n}\n";

#[test]
fn vector_accesses_straddling_into_an_unmapped_page_have_no_partial_effect() {
    let (m, text) = module(V4);
    // 8-byte pages, so a 16-byte vector access spans two.
    const IN: u64 = 0x40000;
    const OUT: u64 = 0x40010;
    let mut mem = PagedMemory::new(IN, 0x20, 8);
    mem.put_u32s(IN, &[100, 200, 300, 400]);
    // The test memory's own write is partial on a fault (as the trait allows):
    mem.unmap(OUT + 8, 8);
    assert!(mem.write(OUT, &[0xAA; 16]).is_err());
    assert_eq!(mem.u32s(OUT, 4), [0xAAAA_AAAA, 0xAAAA_AAAA, 0, 0]);
    mem.put_u32s(OUT, &[0, 0]);
    mem.unmap(IN + 8, 8);
    let p = params(&m, "v4", &[IN, OUT]);
    let mut l = start_launch(&m, "v4", &LaunchConfig::linear(1, 1), &p, &Limits::default()).unwrap();
    let s = stalled(l.run(&m, &mut mem));
    assert_eq!(s.len(), 1);
    assert_eq!(
        (s[0].fault.va, s[0].fault.access, s[0].line),
        (IN + 8, AccessType::Read, line_of(&text, "ld.global.v4"))
    );
    mem.map(IN + 8, 8);
    let s = stalled(l.run(&m, &mut mem));
    assert_eq!(
        (s[0].fault.va, s[0].fault.access, s[0].line),
        (OUT + 8, AccessType::Write, line_of(&text, "st.global.v4"))
    );
    assert_eq!(mem.u32s(OUT, 4), [0; 4], "the half in the mapped page is not written either");
    mem.map(OUT + 8, 8);
    completed(l.run(&m, &mut mem));
    // The load wrote its four destinations once, from the whole vector, on its replay.
    assert_eq!(mem.u32s(OUT, 4), [101, 202, 303, 404]);
}

const ATOM: &str = ".visible .entry at(\n\t.param .u64 pctr,\n\t.param .u64 pout,\n\t.param .u64 pred\n)\n{\n\
\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n\
\tld.param.u64 %rd1, [pctr];\n\tld.param.u64 %rd2, [pout];\n\tld.param.u64 %rd3, [pred];\n\
\tmov.u32 %r1, %tid.x;\n\tatom.global.add.u32 %r2, [%rd1], 1;\n\tred.global.add.u32 [%rd3], 2;\n\
\tmul.wide.u32 %rd4, %r1, 4;\n\tadd.s64 %rd5, %rd2, %rd4;\n\tst.global.u32 [%rd5], %r2;\n\tret;\n}\n";

#[test]
fn atomics_on_unmapped_pages_apply_exactly_once_after_the_replay() {
    let (m, _) = module(ATOM);
    const CTR: u64 = 0x50000;
    const RED: u64 = 0x51000;
    const OUT: u64 = 0x52000;
    let mut mem = PagedMemory::new(CTR, 0x3000, 0x1000);
    mem.put_u32s(CTR, &[100]);
    mem.put_u32s(RED, &[7]);
    mem.unmap(CTR, 0x2000);
    let p = params(&m, "at", &[CTR, OUT, RED]);
    let mut l = start_launch(&m, "at", &LaunchConfig::linear(1, 64), &p, &Limits::default()).unwrap();
    let faults = stalled(l.run(&m, &mut mem));
    assert_eq!(faults.len(), 64);
    assert!(faults
        .iter()
        .all(|s| s.fault == MmuFault { va: CTR, access: AccessType::Atomic, kind: FaultKind::InvalidPte }));
    assert_eq!((mem.u32s(CTR, 1), mem.u32s(RED, 1)), (alloc::vec![100], alloc::vec![7]));
    // The counter's page mapped: every atom applies, then every red stalls.
    mem.map(CTR, 0x1000);
    let faults = stalled(l.run(&m, &mut mem));
    assert_eq!(faults.len(), 64);
    assert!(faults
        .iter()
        .all(|s| s.fault == MmuFault { va: RED, access: AccessType::Atomic, kind: FaultKind::InvalidPte }));
    assert_eq!((mem.u32s(CTR, 1), mem.u32s(RED, 1)), (alloc::vec![164], alloc::vec![7]));
    // Again, unmapped still: nothing applies twice.
    assert_eq!(stalled(l.run(&m, &mut mem)), faults);
    assert_eq!((mem.u32s(CTR, 1), mem.u32s(RED, 1)), (alloc::vec![164], alloc::vec![7]));
    mem.map(RED, 0x1000);
    completed(l.run(&m, &mut mem));
    assert_eq!((mem.u32s(CTR, 1), mem.u32s(RED, 1)), (alloc::vec![164], alloc::vec![7 + 128]));
    // Each thread got a distinct old value: each atom ran exactly once.
    let mut olds = mem.u32s(OUT, 64);
    olds.sort_unstable();
    assert_eq!(olds, (100..164).collect::<Vec<u32>>());
}

const GRID: &str = ".visible .entry grid(\n\t.param .u64 pcount,\n\t.param .u64 pout\n)\n{\n\
\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<10>;\n\
\tld.param.u64 %rd1, [pcount];\n\tld.param.u64 %rd2, [pout];\n\
\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tsetp.eq.u32 %p1, %r1, 0;\n\
\tmul.wide.u32 %rd3, %r2, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n\t@%p1 atom.global.add.u32 %r3, [%rd4], 1;\n\
\tmul.wide.u32 %rd5, %r2, 4096;\n\tmul.wide.u32 %rd6, %r1, 4;\n\tadd.s64 %rd7, %rd2, %rd5;\n\tadd.s64 %rd8, %rd7, %rd6;\n\
\tadd.s32 %r4, %r2, 100;\n\tst.global.u32 [%rd8], %r4;\n\tret;\n}\n";

#[test]
fn a_stalled_cta_holds_back_later_ctas_and_earlier_ones_never_rerun() {
    let (m, _) = module(GRID);
    const COUNT: u64 = 0x60000;
    const OUT: u64 = 0x61000; // CTA i writes page OUT + i * 0x1000
    let mut mem = PagedMemory::new(COUNT, 0x7000, 0x1000);
    mem.unmap(OUT + 2 * 0x1000, 0x1000);
    let p = params(&m, "grid", &[COUNT, OUT]);
    let mut l = start_launch(&m, "grid", &LaunchConfig::linear(5, 32), &p, &Limits::default()).unwrap();
    let faults = stalled(l.run(&m, &mut mem));
    assert_eq!(faults.len(), 32);
    assert!(faults.iter().all(|s| s.cta == [2, 0, 0] && s.fault.access == AccessType::Write));
    assert_eq!(faults[5].fault.va, OUT + 0x2000 + 20);
    assert_eq!(mem.u32s(COUNT, 5), [1, 1, 1, 0, 0]);
    assert_eq!(l.ctas_done(), 2);
    assert_eq!(mem.u32s(OUT + 0x3000, 32), alloc::vec![0; 32], "CTA 3 has not started");
    assert_eq!(stalled(l.run(&m, &mut mem)), faults);
    assert_eq!(mem.u32s(COUNT, 5), [1, 1, 1, 0, 0]);
    mem.map(OUT + 2 * 0x1000, 0x1000);
    let stats = completed(l.run(&m, &mut mem));
    assert_eq!((stats.ctas, stats.threads), (5, 160));
    assert_eq!(mem.u32s(COUNT, 5), [1; 5], "every CTA ran exactly once");
    for c in 0..5u64 {
        assert_eq!(mem.u32s(OUT + c * 0x1000, 32), alloc::vec![100 + c as u32; 32]);
    }
}

const SHFL: &str = ".visible .entry sh(\n\t.param .u64 pin,\n\t.param .u64 pout\n)\n{\n\
\t.reg .pred %p<2>;\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<6>;\n\
\tld.param.u64 %rd1, [pin];\n\tld.param.u64 %rd2, [pout];\n\
\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, 0;\n\tsetp.ne.u32 %p1, %r1, 5;\n\t@%p1 bra $L_skip;\n\
\tld.global.u32 %r2, [%rd1];\n$L_skip:\n\tshfl.sync.idx.b32 %r3, %r2, 5, 31, -1;\n\
\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.global.u32 [%rd4], %r3;\n\tret;\n}\n";

#[test]
fn a_shuffle_waits_for_a_lane_stalled_on_a_fault() {
    let (m, _) = module(SHFL);
    const IN: u64 = 0x70000;
    const OUT: u64 = 0x71000;
    let mut mem = PagedMemory::new(IN, 0x2000, 0x1000);
    mem.put_u32s(IN, &[0xBEEF]);
    mem.unmap(IN, 0x1000);
    let p = params(&m, "sh", &[IN, OUT]);
    let mut l = start_launch(&m, "sh", &LaunchConfig::linear(1, 32), &p, &Limits::default()).unwrap();
    let faults = stalled(l.run(&m, &mut mem));
    assert_eq!(faults.iter().map(|s| (s.thread, s.fault.va)).collect::<Vec<_>>(), [(5, IN)]);
    assert_eq!(mem.u32s(OUT, 32), alloc::vec![0; 32]);
    mem.map(IN, 0x1000);
    completed(l.run(&m, &mut mem));
    assert_eq!(mem.u32s(OUT, 32), alloc::vec![0xBEEF; 32]);
}

#[test]
fn the_budget_covers_all_runs_together() {
    let (m, _) = module(VADD);
    let p = params(&m, "vadd", &[A, B, C]);
    let cfg = LaunchConfig::linear(1, 64);
    let mut reference = vadd_memory(64);
    let full = launch(&m, "vadd", &cfg, &p, &mut reference, &Limits::default()).unwrap().instructions;
    let mut mem = vadd_memory(64);
    mem.unmap(C, 0x1000);
    let limits = Limits { instruction_budget: full - 1, ..Limits::default() };
    let mut l = start_launch(&m, "vadd", &cfg, &p, &limits).unwrap();
    stalled(l.run(&m, &mut mem));
    mem.map(C, 0x1000);
    match l.run(&m, &mut mem) {
        Err(PtxError::Exec { error: ExecError::BudgetExhausted { executed }, .. }) => assert_eq!(executed, full - 1),
        other => panic!("{other:?}"),
    }
    assert!(l.is_finished());
}
