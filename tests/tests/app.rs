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
        let arch = ["sm_75", "sm_80", "sm_90"].into_iter().find(|a| name.contains(a)).expect("arch");
        files.insert(name, ptx_build::ptx(file, arch).into_bytes());
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
