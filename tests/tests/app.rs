//! The example application (`app`) on model GPUs of every family, booted with the real
//! 535.261.03 firmware, through the application API on the host (`nvrt::model`): vector add,
//! SAXPY, tiled matmul, reduction, histogram and Mandelbrot, compiled to PTX by clang-19 at
//! test time from `payloads/`, and the managed-memory example, each checked against the CPU
//! references the application computes itself. The same code runs inside the unikernel
//! (`run-qemu.sh`).

use sim::ModelConfig;
use tests::ptx_build;

/// The payload modules the kernel would get, by the same names.
fn modules(chip: nvgpu::chip::Chipset, files: &[&str]) -> Vec<(String, Vec<u8>)> {
    let sm = chip.sm_version();
    files
        .iter()
        .map(|f| (nvrt::payload_module_name(f, sm), ptx_build::ptx(f, nvrt::payload_arch(sm)).into_bytes()))
        .collect()
}

fn run(config: ModelConfig) {
    let chip = config.chipset;
    let files = modules(chip, app::EXAMPLES);
    let (reports, _) = nvrt::model::run(config, &files, "", |sys| {
        let ctx = sys.open(0).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        let stream = ctx.new_stream().expect("stream");
        let mut printed = Vec::new();
        let reports = app::run(&ctx, &stream, &mut |r| printed.push(format!("{r:?}")))
            .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        for line in &printed {
            eprintln!("{chip:?}: {line}");
        }
        drop(stream);
        ctx.close().expect("close");
        reports
    })
    .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
    assert_eq!(reports.len(), app::EXAMPLES.len());
    for r in &reports {
        assert!(r.passed(), "{chip:?} {}: {:?}", r.name, r.mismatch);
        // Events bracket each kernel: the GPU's timestamps say it took time, within the whole.
        assert!(r.kernel_ns > 0 && r.kernel_ns <= r.elapsed_ns, "{chip:?} {}: {r:?}", r.name);
    }
}

/// The managed-memory example (`app::managed`), CPU passes through the runtime: exact results,
/// and the statistics of a buffer twice the context's VRAM stepped twice by a kernel.
fn run_managed(config: ModelConfig) {
    let chip = config.chipset;
    let files = modules(chip, &["managed"]);
    let (out, _) = nvrt::model::run(config, &files, "", |sys| {
        let ctx = sys.open(0).expect("open");
        let stream = ctx.new_stream().expect("stream");
        app::managed::run(&ctx, &stream).unwrap_or_else(|e| panic!("{chip:?}: {e}"))
    })
    .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
    assert!(out.report.passed(), "{chip:?}: {:?}", out.report.mismatch);
    let s = out.stats.uvm;
    let bytes = u64::from(app::managed::ELEMENTS) * 4;
    assert!(bytes > 2 * app::managed::VRAM_BYTES - 4096, "the buffer is twice the VRAM");
    // Two kernels each take the whole buffer to the GPU; it does not fit, so root chunks
    // are evicted; the second and third CPU passes bring every page back.
    assert!(s.gpu_faults > 0 && s.replays > 0, "{chip:?}: {s:?}");
    assert!(s.migrated_to_gpu_bytes >= 2 * bytes.next_multiple_of(4096), "{chip:?}: {s:?}");
    assert!(s.evictions >= 2, "{chip:?}: {s:?}");
    assert!(s.migrated_to_cpu_bytes >= 2 * bytes.next_multiple_of(4096), "{chip:?}: {s:?}");
    assert_eq!(s.cancels, 0, "{chip:?}: {s:?}");
}

/// `app::main`, the application as the unikernel runs it: every result right, the
/// milestones of the boot timeline in order.
#[test]
fn the_application_main_passes_and_marks_its_milestones_in_order() {
    let config = ModelConfig::h200();
    let mut names: Vec<&str> = app::EXAMPLES.to_vec();
    names.push("managed");
    let files = modules(config.chipset, &names);
    let (ok, report) = nvrt::model::run(config, &files, "app", app::main).expect("model run");
    assert!(ok.expect("the application runs"), "every result matches its CPU reference");
    assert_eq!(
        report.milestones,
        ["GPU opened", "compute stream created", "first result", "examples done", "managed example done"]
    );
}

#[test]
fn every_family_runs_the_managed_memory_example() {
    for config in [
        ModelConfig::rtx2080ti(),
        ModelConfig::for_chipset(nvgpu::chip::Chipset::GA100),
        ModelConfig::rtx3090(),
        ModelConfig::rtx4090(),
        ModelConfig::h200(),
    ] {
        run_managed(config);
    }
}

#[test]
fn tu102_runs_the_example_application() {
    run(ModelConfig::rtx2080ti());
}

#[test]
fn ga100_runs_the_example_application() {
    run(ModelConfig::for_chipset(nvgpu::chip::Chipset::GA100));
}

#[test]
fn ga102_runs_the_example_application() {
    run(ModelConfig::rtx3090());
}

#[test]
fn ad102_runs_the_example_application() {
    run(ModelConfig::rtx4090());
}

#[test]
fn gh100_runs_the_example_application() {
    run(ModelConfig::h200());
}
