//! The example application (`app`) on model GPUs of every family, booted with the real
//! 535.261.03 firmware: vector add, SAXPY, tiled matmul, reduction, histogram and Mandelbrot,
//! compiled to PTX by clang-19 at test time from `payloads/`, run through `nvgpu::runtime`
//! (device buffers, copies, a compute stream, launches) and checked against the CPU references
//! the application computes itself. The same code runs inside the unikernel (`run-qemu.sh`).

use std::collections::HashMap;

use nvgpu::runtime::{Gpu, GpuConfig, StreamKind};
use sim::ModelConfig;
use tests::model_boot::with_booted;
use tests::ptx_build;

fn run(config: ModelConfig) {
    let chip = config.chipset;
    // The payload modules the kernel would get, by the same names.
    let mut files: HashMap<String, Vec<u8>> = HashMap::new();
    for file in ["vector_add", "saxpy", "matmul", "reduce", "histogram", "mandelbrot"] {
        let name = app::payload_name(file, chip);
        files.insert(name, ptx_build::ptx(file, app::payload_arch(chip)).into_bytes());
    }
    with_booted(config, |model, arena, clock, boot| {
        let static_info = *boot.static_info().expect("static info");
        let rpc = boot.rpc().expect("rpc");
        let mut gpu = Gpu::new(
            rpc,
            model,
            arena,
            clock,
            &static_info,
            chip,
            GpuConfig { runs_ptx: true, timeout_ms: 60_000, ..GpuConfig::default() },
        )
        .unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        let stream = gpu.create_stream(rpc, StreamKind::Compute).expect("compute stream");
        let lookup = |name: &str| files.get(name).map(Vec::as_slice);
        let mut printed = Vec::new();
        let reports = app::run(&mut gpu, stream, &lookup, &mut |r| printed.push(format!("{r:?}")))
            .unwrap_or_else(|e| panic!("{chip:?}: {e}\nmodel: {:?}", model.errors()));
        for line in &printed {
            eprintln!("{chip:?}: {line}");
        }
        assert_eq!(reports.len(), app::EXAMPLES.len());
        for r in &reports {
            assert!(r.passed(), "{chip:?} {}: {:?}", r.name, r.mismatch);
        }
        gpu.destroy_stream(rpc, stream).expect("destroy stream");
        gpu.destroy(rpc).expect("destroy");
        assert_eq!(model.take_errors(), vec![], "{chip:?}");
    });
}

/// The managed-memory example (`app::managed`), CPU passes through the runtime: exact results,
/// and the statistics of a buffer twice the context's VRAM stepped twice by a kernel.
fn run_managed(config: ModelConfig) {
    let chip = config.chipset;
    let name = app::payload_name("managed", chip);
    let text = ptx_build::ptx("managed", app::payload_arch(chip)).into_bytes();
    with_booted(config, |model, arena, clock, boot| {
        let static_info = *boot.static_info().expect("static info");
        let rpc = boot.rpc().expect("rpc");
        let cfg = GpuConfig { runs_ptx: true, page_faulting: true, timeout_ms: 60_000, ..GpuConfig::default() };
        let mut gpu = Gpu::new(rpc, model, arena, clock, &static_info, chip, cfg).unwrap_or_else(|e| panic!("{e}"));
        let stream = gpu.create_stream(rpc, StreamKind::Compute).expect("compute stream");
        let lookup = |n: &str| (n == name).then_some(text.as_slice());
        let internal = nvgpu::rm::InternalSubdevice::from_static_info(&static_info);
        let out = app::managed::run(&mut gpu, rpc, internal, stream, &lookup, &mut app::managed::ThroughRuntime)
            .unwrap_or_else(|e| panic!("{chip:?}: {e}\nmodel: {:?}", model.errors()));
        assert!(out.report.passed(), "{chip:?}: {:?}", out.report.mismatch);
        let s = out.stats;
        let bytes = u64::from(app::managed::ELEMENTS) * 4;
        assert!(bytes > 2 * app::managed::VRAM_BYTES - 4096, "the buffer is twice the VRAM");
        // Two kernels each take the whole buffer to the GPU; it does not fit, so root chunks
        // are evicted; the second and third CPU passes bring every page back.
        assert!(s.gpu_faults > 0 && s.replays > 0, "{chip:?}: {s:?}");
        assert!(s.migrated_to_gpu_bytes >= 2 * bytes.next_multiple_of(4096), "{chip:?}: {s:?}");
        assert!(s.evictions >= 2, "{chip:?}: {s:?}");
        assert!(s.migrated_to_cpu_bytes >= 2 * bytes.next_multiple_of(4096), "{chip:?}: {s:?}");
        assert_eq!(s.cancels, 0, "{chip:?}: {s:?}");
        gpu.destroy_stream(rpc, stream).expect("destroy stream");
        gpu.destroy(rpc).expect("destroy");
        assert_eq!(model.take_errors(), vec![], "{chip:?}");
    });
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
