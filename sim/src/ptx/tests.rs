//! Unit tests of the parser's errors and the interpreter's execution model on small hand-written
//! PTX. Kernels compiled by clang-19 are tested in `tests/tests/ptx_model.rs`.

use alloc::string::String;
use alloc::vec::Vec;

use super::*;
use crate::engine_mem::{FaultKind, FlatMemory, VirtualMemory};

const HEAD: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

fn module(body: &str) -> Module {
    let text = alloc::format!("{HEAD}{body}");
    Module::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn parse_err(body: &str) -> (u32, ParseError) {
    match Module::parse(&alloc::format!("{HEAD}{body}")) {
        Err(PtxError::Parse { line, error }) => (line, error),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

/// A kernel `k(.param .u64 out)` with `body` as its instructions.
fn kernel(regs: &str, body: &str) -> String {
    alloc::format!(
        ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n\t.reg .pred %p<8>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<16>;\n\t.reg .f32 %f<8>;\n{regs}\n\tld.param.u64 %rd1, [k_param_0];\n{body}\n}}\n"
    )
}

fn run(
    m: &Module,
    grid: u32,
    block: u32,
    mem: &mut FlatMemory,
    out: u64,
    limits: &Limits,
) -> Result<LaunchStats, PtxError> {
    launch(m, "k", &LaunchConfig::linear(grid, block), &out.to_le_bytes(), mem, limits)
}

fn u32s(mem: &mut FlatMemory, va: u64, n: usize) -> Vec<u32> {
    let mut b = alloc::vec![0u8; 4 * n];
    mem.read(va, &mut b).unwrap();
    b.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

// ---------------------------------------------------------------------------------------------
// Parser errors.

#[test]
fn unknown_instruction_is_named_with_its_line() {
    let (line, e) = parse_err(&kernel("", "\tfrobnicate.u32 %r1, %r2;\n\tret;"));
    assert_eq!(e, ParseError::UnknownInstruction("frobnicate.u32".into()));
    // HEAD is 3 lines, the kernel text puts the body on its 11th line.
    assert_eq!(line, 14);
}

#[test]
fn unsupported_instruction_is_not_called_unknown() {
    let (_, e) = parse_err(&kernel("", "\tcall.uni foo, ();\n\tret;"));
    assert_eq!(e, ParseError::UndefinedSymbol { instruction: "call".into(), symbol: "foo".into() });
    let (_, e) = parse_err(&kernel("", "\ttex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [t, {%r1}];\n\tret;"));
    assert_eq!(e, ParseError::Unsupported("tex.1d.v4.f32.s32".into()));
    let (_, e) = parse_err(&kernel("", "\tadd.rn.f16 %r1, %r2, %r3;\n\tret;"));
    assert_eq!(e, ParseError::Unsupported("add.rn.f16".into()));
    let (_, e) = parse_err(&kernel("", "\tmul.lo.weird.u32 %r1, %r2, %r3;\n\tret;"));
    assert_eq!(e, ParseError::Unsupported("mul.lo.weird.u32".into()));
}

#[test]
fn truncated_text_is_an_error() {
    let full = kernel("", "\tmov.u32 %r1, 1;\n\tret;");
    // Cut inside the body, inside a statement, and inside a comment.
    let cut = &full[..full.find("ret").unwrap()];
    assert!(matches!(parse_err(cut).1, ParseError::Truncated(_)));
    let cut = &full[..full.find("1;").unwrap()];
    assert!(matches!(parse_err(cut).1, ParseError::Truncated(_)));
    assert!(matches!(parse_err("/* never closed").1, ParseError::Truncated(_)));
    // Every prefix of a valid module parses or fails with a typed error, never panics.
    let text = alloc::format!("{HEAD}{full}");
    for n in 0..text.len() {
        let _ = Module::parse(&text[..n]);
    }
}

#[test]
fn undefined_label_register_and_symbol() {
    let (line, e) = parse_err(&kernel("", "\tbra.uni $L__nowhere;\n\tret;"));
    assert_eq!(e, ParseError::UndefinedLabel { instruction: "bra.uni".into(), label: "$L__nowhere".into() });
    assert_eq!(line, 14);
    let (_, e) = parse_err(&kernel("", "\tadd.s32 %r1, %r99, 1;\n\tret;"));
    assert_eq!(e, ParseError::UndefinedRegister { instruction: "add.s32".into(), register: "%r99".into() });
    let (_, e) = parse_err(&kernel("", "\tadd.s32 %r1, %q1, 1;\n\tret;"));
    assert_eq!(e, ParseError::UndefinedRegister { instruction: "add.s32".into(), register: "%q1".into() });
    let (_, e) = parse_err(&kernel("", "\tmov.u64 %rd2, no_such_var;\n\tret;"));
    assert_eq!(e, ParseError::UndefinedSymbol { instruction: "mov.u64".into(), symbol: "no_such_var".into() });
    let (_, e) = parse_err(&kernel("", "\tadd.s32 %r1, %r2;\n\tret;"));
    assert!(matches!(e, ParseError::BadOperand { .. }));
    let (_, e) = parse_err(&kernel("", "$L1:\n$L1:\n\tret;"));
    assert_eq!(e, ParseError::DuplicateLabel("$L1".into()));
    assert!(matches!(Module::parse(".target sm_90\n"), Err(PtxError::Parse { error: ParseError::MissingVersion, .. })));
    assert!(matches!(
        Module::parse(".version 1.4\n"),
        Err(PtxError::Parse { error: ParseError::UnsupportedVersion(_), .. })
    ));
}

#[test]
fn params_are_laid_out_with_natural_and_declared_alignment() {
    let m = module(".visible .entry p(\n.param .u32 a,\n.param .u64 .ptr .global .align 8 b,\n.param .align 16 .b8 c[20],\n.param .u8 d\n)\n{\nret;\n}\n");
    let k = m.kernel("p").unwrap();
    let layout: Vec<(u32, u32, u32)> = k.params().iter().map(|p| (p.size, p.align, p.offset)).collect();
    assert_eq!(layout, [(4, 4, 0), (8, 8, 8), (20, 16, 16), (1, 1, 36)]);
    assert_eq!(k.param_size(), 37);
    assert_eq!(k.pack_params(&[&[1, 0, 0, 0], &[2; 8], &[3; 20], &[4]]).unwrap()[36], 4);
    assert!(k.pack_params(&[&[1; 5], &[2; 8], &[3; 20], &[4]]).is_err());
}

// ---------------------------------------------------------------------------------------------
// Execution model.

#[test]
fn budget_exhaustion_stops_an_infinite_loop() {
    let m = module(&kernel("", "$L_loop:\n\tadd.s32 %r1, %r1, 1;\n\tbra.uni $L_loop;"));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    let e = run(&m, 1, 32, &mut mem, 0x1000, &Limits { instruction_budget: 10_000, ..Limits::default() }).unwrap_err();
    match e {
        PtxError::Exec { error: ExecError::BudgetExhausted { executed }, instruction, .. } => {
            assert_eq!(executed, 10_000);
            assert!(instruction == "add.s32" || instruction == "bra.uni");
        }
        other => panic!("{other:?}"),
    }
    assert!(alloc::format!(
        "{}",
        run(&m, 1, 1, &mut mem, 0x1000, &Limits { instruction_budget: 5, ..Limits::default() }).unwrap_err()
    )
    .contains("instruction budget exhausted"));
}

#[test]
fn barrier_deadlock_is_detected() {
    // Half the threads wait at barrier 1 for 64 threads; the other half exit.
    let body =
        "\tmov.u32 %r1, %tid.x;\n\tsetp.ge.u32 %p1, %r1, 16;\n\t@%p1 bra $L_out;\n\tbar.sync 1, 64;\n$L_out:\n\tret;";
    let m = module(&kernel("", body));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    match run(&m, 1, 32, &mut mem, 0x1000, &Limits::default()).unwrap_err() {
        PtxError::Exec { error: ExecError::BarrierDeadlock { waiting, live }, instruction, .. } => {
            assert_eq!((waiting, live), (16, 16));
            assert_eq!(instruction, "bar.sync");
        }
        other => panic!("{other:?}"),
    }
    // Threads waiting at two different full-CTA barriers can never both release.
    let body = "\tmov.u32 %r1, %tid.x;\n\tsetp.ge.u32 %p1, %r1, 40;\n\t@%p1 bra $L_b;\n\tbar.sync 0;\n\tret;\n$L_b:\n\tbar.sync 2;\n\tret;";
    let m = module(&kernel("", body));
    assert!(matches!(
        run(&m, 1, 64, &mut mem, 0x1000, &Limits::default()),
        Err(PtxError::Exec { error: ExecError::BarrierDeadlock { .. }, .. })
    ));
}

#[test]
fn barrier_orders_shared_memory_and_exited_threads_count_as_arrived() {
    // Each thread writes tid to shared[tid], syncs, and reads its neighbour's slot (tid+1 mod n).
    // Threads >= 40 exit before the barrier.
    let body = "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ntid.x;\n\tsetp.ge.u32 %p2, %r1, 40;\n\t@%p2 bra $L_end;\n\
                \tmov.u64 %rd2, sh;\n\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n\tst.shared.u32 [%rd4], %r1;\n\
                \tbar.sync 0;\n\tadd.s32 %r3, %r1, 1;\n\trem.u32 %r3, %r3, 40;\n\tmul.wide.u32 %rd5, %r3, 4;\n\tadd.s64 %rd6, %rd2, %rd5;\n\
                \tld.shared.u32 %r4, [%rd6];\n\tadd.s64 %rd7, %rd1, %rd3;\n\tst.global.u32 [%rd7], %r4;\n$L_end:\n\tret;";
    let m = module(&kernel("\t.shared .align 4 .b8 sh[256];", body));
    let mut mem = FlatMemory::new(0x1000, 0x200);
    run(&m, 1, 64, &mut mem, 0x1000, &Limits::default()).unwrap();
    let got = u32s(&mut mem, 0x1000, 40);
    assert_eq!(got, (0..40).map(|t| (t + 1) % 40).collect::<Vec<u32>>());
}

#[test]
fn mmu_fault_surfaces_with_instruction_and_line() {
    let m = module(&kernel("", "\tmov.u32 %r1, 7;\n\tst.global.u32 [%rd1+0x100], %r1;\n\tret;"));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    match run(&m, 1, 1, &mut mem, 0x1000, &Limits::default()).unwrap_err() {
        PtxError::Exec { error: ExecError::Fault(f), line, instruction, cta, tid } => {
            assert_eq!(f.va, 0x1100);
            assert_eq!(f.kind, FaultKind::InvalidPte);
            assert_eq!(instruction, "st.global.u32");
            assert_eq!(line, 15);
            assert_eq!((cta, tid), ([0; 3], [0; 3]));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn misaligned_and_out_of_range_accesses_are_errors() {
    let m = module(&kernel("", "\tld.global.u32 %r1, [%rd1+2];\n\tret;"));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    assert!(matches!(
        run(&m, 1, 1, &mut mem, 0x1000, &Limits::default()),
        Err(PtxError::Exec { error: ExecError::Misaligned { .. }, .. })
    ));
    let m = module(&kernel("\t.shared .align 4 .b8 sh[16];", "\tst.shared.u32 [sh+16], %r1;\n\tret;"));
    assert!(matches!(
        run(&m, 1, 1, &mut mem, 0x1000, &Limits::default()),
        Err(PtxError::Exec { error: ExecError::OutOfRange { space: inst::Space::Shared, .. }, .. })
    ));
}

#[test]
fn generic_addresses_reach_shared_local_and_global() {
    // Store through generic pointers made by cvta from shared and local addresses, read back
    // through the state-space forms, and write the sum to global through a generic address.
    let body = "\tmov.u64 %rd2, sh;\n\tcvta.shared.u64 %rd3, %rd2;\n\tmov.u32 %r1, 40;\n\tst.u32 [%rd3+4], %r1;\n\
                \tmov.u64 %rd4, loc;\n\tcvta.local.u64 %rd5, %rd4;\n\tmov.u32 %r2, 2;\n\tst.u32 [%rd5+8], %r2;\n\
                \tld.shared.u32 %r3, [sh+4];\n\tld.local.u32 %r4, [loc+8];\n\tadd.s32 %r5, %r3, %r4;\n\
                \tcvta.to.shared.u64 %rd6, %rd3;\n\tld.shared.u32 %r6, [%rd6+4];\n\tadd.s32 %r5, %r5, %r6;\n\
                \tst.u32 [%rd1], %r5;\n\tret;";
    let m = module(&kernel("\t.shared .align 4 .b8 sh[16];\n\t.local .align 8 .b8 loc[16];", body));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    run(&m, 1, 1, &mut mem, 0x1000, &Limits::default()).unwrap();
    assert_eq!(u32s(&mut mem, 0x1000, 1), [82]);
}

#[test]
fn const_bank_and_global_variables() {
    let text = ".const .align 4 .u32 table[4] = {10, 20, 30, 40};\n.global .align 4 .u32 counter;\n\
                .visible .entry k(.param .u64 k_param_0)\n{\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
                ld.param.u64 %rd1, [k_param_0];\nld.const.u32 %r1, [table+8];\nmov.u64 %rd2, counter;\n\
                ld.global.u32 %r2, [%rd2];\nadd.s32 %r3, %r1, %r2;\nst.global.u32 [%rd1], %r3;\nret;\n}\n";
    let m = module(text);
    assert_eq!(m.const_image().len(), 16);
    assert_eq!(m.globals()[0].name, "counter");
    let mut mem = FlatMemory::new(0x1000, 0x100);
    mem.write(0x1080, &5u32.to_le_bytes()).unwrap();
    let params = 0x1000u64.to_le_bytes();
    let unbound = launch(&m, "k", &LaunchConfig::linear(1, 1), &params, &mut mem, &Limits::default());
    assert_eq!(unbound.unwrap_err(), PtxError::Launch(LaunchError::UnboundGlobal("counter".into())));
    let globals = [("counter", 0x1080u64)];
    let cfg = LaunchConfig {
        grid: [1, 1, 1],
        block: [1, 1, 1],
        dynamic_shared: 0,
        const_bank: None,
        globals: &globals,
        windows: Default::default(),
    };
    launch(&m, "k", &cfg, &params, &mut mem, &Limits::default()).unwrap();
    assert_eq!(u32s(&mut mem, 0x1000, 1), [35]);
}

#[test]
fn divergent_shuffle_is_an_error() {
    // Lanes 0..15 shuffle with a full mask while lanes 16..31 wait at a barrier.
    let body = "\tmov.u32 %r1, %tid.x;\n\tsetp.ge.u32 %p1, %r1, 16;\n\t@%p1 bra $L_x;\n\
                \tshfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\n$L_x:\n\tbar.sync 0;\n\tret;";
    let m = module(&kernel("", body));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    match run(&m, 1, 32, &mut mem, 0x1000, &Limits::default()).unwrap_err() {
        PtxError::Exec { error: ExecError::WarpDivergence { lane, mask }, instruction, .. } => {
            assert_eq!((lane, mask), (16, u32::MAX));
            assert_eq!(instruction, "shfl.sync.bfly.b32");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn shuffle_predicate_output_and_vote_on_a_converged_subset() {
    // Lanes 0..7 take a branch and ballot/shuffle among themselves with the mask activemask gives.
    let body = "\tmov.u32 %r1, %laneid;\n\tsetp.ge.u32 %p1, %r1, 8;\n\t@%p1 bra $L_x;\n\tactivemask.b32 %r2;\n\
                \tsetp.lt.u32 %p2, %r1, 3;\n\tvote.sync.ballot.b32 %r3, %p2, %r2;\n\
                \tshfl.sync.down.b32 %r4|%p3, %r1, 6, 31, %r2;\n\tselp.u32 %r5, 1, 0, %p3;\n\
                \tmul.wide.u32 %rd2, %r1, 16;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.v4.u32 [%rd3], {%r2, %r3, %r4, %r5};\n\
                $L_x:\n\tret;";
    let m = module(&kernel("", body));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    run(&m, 1, 32, &mut mem, 0x1000, &Limits::default()).unwrap();
    let got = u32s(&mut mem, 0x1000, 32);
    for lane in 0..8u32 {
        let o = &got[4 * lane as usize..4 * lane as usize + 4];
        // down 6 from lanes 0, 1 reaches lanes 6, 7; from lanes 2..7 it reads lanes 8..13, which
        // are in range (<= 31, p = 1) but inactive: the reader keeps its own value.
        let want_val = if lane + 6 < 8 { lane + 6 } else { lane };
        assert_eq!(o, [0xFF, 0b111, want_val, 1], "lane {lane}");
    }
}

#[test]
fn special_registers_and_grid_shape() {
    // out[linear] = (ctaid.y << 24) | (tid.y << 16) | (ctaid.x << 8) | tid.x over a 2-D grid.
    let body = "\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %tid.y;\n\tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ctaid.y;\n\
                \tmov.u32 %r5, %ntid.x;\n\tmov.u32 %r6, %ntid.y;\n\tmov.u32 %r7, %nctaid.x;\n\
                \tmad.lo.s32 %r8, %r4, %r6, %r2;\n\tmul.lo.s32 %r9, %r7, %r5;\n\tmad.lo.s32 %r10, %r3, %r5, %r1;\n\tmad.lo.s32 %r11, %r8, %r9, %r10;\n\
                \tshl.b32 %r12, %r4, 24;\n\tshl.b32 %r13, %r2, 16;\n\tshl.b32 %r14, %r3, 8;\n\tor.b32 %r15, %r12, %r13;\n\tor.b32 %r15, %r15, %r14;\n\tor.b32 %r15, %r15, %r1;\n\
                \tmul.wide.u32 %rd2, %r11, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r15;\n\tret;";
    let m = module(&kernel("", body));
    let mut mem = FlatMemory::new(0x1000, 0x1000);
    let stats = launch(
        &m,
        "k",
        &LaunchConfig::new([3, 2, 1], [5, 3, 1]),
        &0x1000u64.to_le_bytes(),
        &mut mem,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!((stats.ctas, stats.threads), (6, 90));
    assert_eq!(stats.instructions, 90 * 22);
    let got = u32s(&mut mem, 0x1000, 90);
    for (i, v) in got.iter().enumerate() {
        let (x, y) = (i as u32 % 15, i as u32 / 15);
        assert_eq!(*v, ((y / 3) << 24) | ((y % 3) << 16) | ((x / 5) << 8) | (x % 5));
    }
}

#[test]
fn bad_launches_are_rejected() {
    let m = module(&kernel("", "\tret;"));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    let p = 0x1000u64.to_le_bytes();
    let l = Limits::default();
    assert!(matches!(
        launch(&m, "nope", &LaunchConfig::linear(1, 1), &p, &mut mem, &l),
        Err(PtxError::Launch(LaunchError::NoSuchKernel(_)))
    ));
    assert!(matches!(
        launch(&m, "k", &LaunchConfig::linear(1, 1025), &p, &mut mem, &l),
        Err(PtxError::Launch(LaunchError::BadShape { .. }))
    ));
    assert!(matches!(
        launch(&m, "k", &LaunchConfig::linear(0, 32), &p, &mut mem, &l),
        Err(PtxError::Launch(LaunchError::BadShape { .. }))
    ));
    assert!(matches!(
        launch(&m, "k", &LaunchConfig::linear(1, 1), &p[..4], &mut mem, &l),
        Err(PtxError::Launch(LaunchError::ParamBufferTooSmall { .. }))
    ));
    // Declared sizes are input: a huge local array is refused, not allocated.
    let m = module(&kernel("\t.local .align 4 .b8 big[1000000000];", "\tret;"));
    assert!(matches!(
        launch(&m, "k", &LaunchConfig::linear(1, 1024), &p, &mut mem, &l),
        Err(PtxError::Launch(LaunchError::TooMuchMemory { .. }))
    ));
    let mut cfg = LaunchConfig::linear(1, 32);
    cfg.dynamic_shared = u32::MAX;
    let m = module(&kernel("", "\tret;"));
    assert!(matches!(
        launch(&m, "k", &cfg, &p, &mut mem, &l),
        Err(PtxError::Launch(LaunchError::TooMuchMemory { .. }))
    ));
}

// ---------------------------------------------------------------------------------------------
// Calls.

/// `twice(x) = x + x` and `quad(x) = twice(twice(x))`, called from the kernel; the kernel stores
/// quad(tid) + 1 for each thread.
const CALLS: &str = ".visible .func (.param .b32 twice_ret) twice(.param .b32 twice_x)\n{\n.reg .b32 %r<3>;\n\
    ld.param.u32 %r1, [twice_x];\nadd.s32 %r2, %r1, %r1;\nst.param.b32 [twice_ret+0], %r2;\nret;\n}\n\
    .visible .func (.param .b32 quad_ret) quad(.param .b32 quad_x)\n{\n.reg .b32 %r<4>;\n\
    ld.param.u32 %r1, [quad_x];\n{\n.param .b32 param0;\nst.param.b32 [param0+0], %r1;\n.param .b32 retval0;\n\
    call.uni (retval0), twice, (param0);\nld.param.b32 %r2, [retval0+0];\n}\n\
    {\n.param .b32 param0;\nst.param.b32 [param0+0], %r2;\n.param .b32 retval0;\ncall.uni (retval0), twice, (param0);\n\
    ld.param.b32 %r3, [retval0+0];\n}\nst.param.b32 [quad_ret+0], %r3;\nret;\n}\n";

#[test]
fn calls_pass_arguments_and_return_values() {
    let body =
        "\tmov.u32 %r1, %tid.x;\n\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n\t.param .b32 retval0;\n\
                \tcall.uni (retval0), quad, (param0);\n\tld.param.b32 %r2, [retval0+0];\n\t}\n\tadd.s32 %r2, %r2, 1;\n\
                \tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r2;\n\tret;";
    let m = module(&alloc::format!("{CALLS}{}", kernel("", body)));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    run(&m, 1, 40, &mut mem, 0x1000, &Limits::default()).unwrap();
    assert_eq!(u32s(&mut mem, 0x1000, 40), (0..40).map(|t| 4 * t + 1).collect::<Vec<u32>>());
}

#[test]
fn recursion_and_bad_calls_are_errors() {
    let rec = ".visible .func f(.param .b32 f_x)\n{\n.reg .b32 %r<2>;\nld.param.u32 %r1, [f_x];\n\
               {\n.param .b32 param0;\nst.param.b32 [param0+0], %r1;\ncall.uni f, (param0);\n}\nret;\n}\n";
    let body = "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], 1;\n\tcall.uni f, (param0);\n\t}\n\tret;";
    let m = module(&alloc::format!("{rec}{}", kernel("", body)));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    assert!(matches!(
        run(&m, 1, 1, &mut mem, 0x1000, &Limits::default()),
        Err(PtxError::Exec { error: ExecError::RecursiveCall, .. })
    ));
    // Wrong argument count.
    let body = "\t{\n\t.param .b32 param0;\n\t.param .b32 param1;\n\tcall.uni f, (param0, param1);\n\t}\n\tret;";
    let (_, e) = parse_err(&alloc::format!("{rec}{}", kernel("", body)));
    assert!(matches!(e, ParseError::BadOperand { .. }), "{e:?}");
    // An argument that is not a call parameter.
    let body = "\tcall.uni f, (%r1);\n\tret;";
    let (_, e) = parse_err(&alloc::format!("{rec}{}", kernel("", body)));
    assert!(matches!(e, ParseError::BadOperand { .. }), "{e:?}");
}

#[test]
fn oversized_declarations_are_errors_not_overflows() {
    let (_, e) = parse_err(&kernel("\t.local .b8 a[4000000000];\n\t.local .b8 b[4000000000];", "\tret;"));
    assert!(matches!(e, ParseError::BadDirective(_)), "{e:?}");
    let (_, e) = parse_err(".const .align 4 .b8 table[70000];\n");
    assert!(matches!(e, ParseError::BadDirective(_)), "{e:?}");
    let (_, e) = parse_err(".visible .entry k(.param .b8 a[4294967295], .param .u32 b)\n{\nret;\n}\n");
    assert!(matches!(e, ParseError::BadDirective(_)), "{e:?}");
    let (_, e) = parse_err(&kernel("\t.reg .b32 %x<4000000000>;", "\tret;"));
    assert!(matches!(e, ParseError::BadDirective(_)), "{e:?}");
}

#[test]
fn copysign_bfe_bfi_and_predicate_logic() {
    // copysign(-2.0 -> 3.0) = -3.0; bfe.s32 of 0xF0 at 4, len 4 = -1; bfi of 0b101 into 0 at 8;
    // not/xor on predicates; set.lt writing all ones.
    let body = "\tmov.f32 %f1, 0fC0000000;\n\tmov.f32 %f2, 0f40400000;\n\tcopysign.f32 %f3, %f1, %f2;\n\tmov.b32 %r1, %f3;\n\
                \tmov.u32 %r2, 0xF0;\n\tbfe.s32 %r3, %r2, 4, 4;\n\tbfi.b32 %r4, 5, 0, 8, 3;\n\
                \tsetp.lt.s32 %p1, %r3, 0;\n\tnot.pred %p2, %p1;\n\txor.pred %p3, %p1, %p2;\n\tselp.u32 %r5, 7, 9, %p3;\n\
                \tset.lt.u32.s32 %r6, %r3, 0;\n\tst.global.v4.u32 [%rd1], {%r1, %r3, %r4, %r5};\n\tst.global.u32 [%rd1+16], %r6;\n\tret;";
    let m = module(&kernel("", body));
    let mut mem = FlatMemory::new(0x1000, 0x100);
    run(&m, 1, 1, &mut mem, 0x1000, &Limits::default()).unwrap();
    assert_eq!(u32s(&mut mem, 0x1000, 5), [(-3.0f32).to_bits(), u32::MAX, 0x500, 7, u32::MAX]);
}
