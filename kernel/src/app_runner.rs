//! The example application (`app`) on the first GPU whose GSP-RM came up: its own RM client
//! through `nvgpu::runtime`, a compute stream, the kernels from the boot modules
//! (`payload-NAME-ARCH.ptx`, compiled by clang-19 when the image was built), each result
//! checked against the CPU reference and reported on the serial port with its time; then the
//! managed-memory example (`app::managed`), its CPU passes running over the managed buffer page
//! by page, the pages reached through the kernel's page tables and page-fault handler
//! ([`crate::managed::PageFaults`]), its UVM statistics reported as one JSON line.

use crate::gpu_types::{Bar0, BootModules, FrameDma, KernelClock};
use nvgpu::platform::FirmwareSource;
use nvgpu::runtime::{Gpu, GpuConfig, StreamKind};

static CLOCK: KernelClock = KernelClock;
static DMA: FrameDma = FrameDma;

/// Runs every example; `true` when all matched their CPU reference.
pub fn run() -> bool {
    if crate::gsp::live_sessions() == 0 {
        log::error!(target: "app", "no GPU with a running GSP-RM: nothing to run the application on");
        return false;
    }
    let t0 = crate::time::nanos_since_entry();
    let outcome = crate::gsp::with_boot(0, |chipset, bar0, info, rpc| {
        // Client index 0 is the kernel's own RM client (`crate::gsp`).
        let config = GpuConfig {
            runs_ptx: matches!(bar0, Bar0::Model(_)),
            client_index: 1,
            page_faulting: true,
            timeout_ms: 120_000,
            ..GpuConfig::default()
        };
        let mut gpu = match Gpu::new(rpc, bar0, &DMA, &CLOCK, &info, chipset, config) {
            Ok(gpu) => {
                crate::boot_timeline::mark("GPU opened");
                gpu
            }
            Err(e) => {
                log::error!(target: "app", "{chipset}: cannot open the GPU: {e}");
                return false;
            }
        };
        let stream = match gpu.create_stream(rpc, StreamKind::Compute) {
            Ok(s) => {
                crate::boot_timeline::mark("compute stream created");
                s
            }
            Err(e) => {
                log::error!(target: "app", "{chipset}: compute stream: {e}");
                return false;
            }
        };
        log::info!(target: "app", "{chipset}: running {} examples", app::EXAMPLES.len());
        let lookup = |name: &str| BootModules.get(name);
        let mut first = true;
        let result = app::run(&mut gpu, stream, &lookup, &mut |r| {
            if core::mem::take(&mut first) {
                crate::boot_timeline::mark("first result");
            }
            let us = r.elapsed_ns / 1_000;
            match &r.mismatch {
                None => log::info!(target: "app", "{}: ok, {} ({us} us)", r.name, r.work),
                Some(why) => log::error!(target: "app", "{}: WRONG RESULT, {}: {why}", r.name, r.work),
            }
        });
        crate::boot_timeline::mark("examples done");
        let ok = match result {
            Ok(reports) => {
                let failed = reports.iter().filter(|r| !r.passed()).count();
                log::info!(target: "app", "{} passed, {failed} failed", reports.len() - failed);
                failed == 0
            }
            Err(e) => {
                log::error!(target: "app", "{e}");
                false
            }
        };
        let internal = nvgpu::rm::InternalSubdevice::from_static_info(&info);
        let mut cpu = crate::managed::PageFaults::default();
        let modules = |name: &str| BootModules.get(name);
        let managed_ok = match app::managed::run(&mut gpu, rpc, internal, stream, &modules, &mut cpu) {
            Ok(out) => {
                let r = &out.report;
                let us = r.elapsed_ns / 1_000;
                match &r.mismatch {
                    None => log::info!(target: "app", "managed: ok, {} ({us} us)", r.work),
                    Some(why) => log::error!(target: "app", "managed: WRONG RESULT, {}: {why}", r.work),
                }
                log::info!(
                    target: "app",
                    "managed: {} CPU page faults served through uvm, {} bytes migrated back from the GPU by them",
                    cpu.faults,
                    cpu.migrated_back
                );
                let (base, top) = crate::arch::gdt::ist_stack_bounds(crate::arch::gdt::IST_PAGE_FAULT);
                log::info!(
                    target: "app",
                    "managed: the page-fault stack held at most {} of {} bytes",
                    crate::arch::gdt::ist_stack_high_water(crate::arch::gdt::IST_PAGE_FAULT),
                    top - base
                );
                log::info!(target: "app", "managed stats: {}", out.stats.to_json());
                r.passed()
            }
            Err(e) => {
                log::error!(target: "app", "{e}");
                false
            }
        };
        crate::boot_timeline::mark("managed example done");
        let ok = ok && managed_ok;
        let closed = gpu.destroy_stream(rpc, stream).and_then(|()| gpu.destroy(rpc));
        if let Err(e) = &closed {
            log::error!(target: "app", "closing the GPU: {e}");
        }
        ok && closed.is_ok()
    });
    let ms = (crate::time::nanos_since_entry() - t0) / 1_000_000;
    crate::boot_timeline::mark("application finished");
    log::info!(target: "app", "application finished in {ms} ms");
    crate::boot_timeline::report("application");
    // Whatever the results, an access the model refused is something real hardware would
    // have refused too: the run fails.
    let rejections = crate::gpu::with_gpus(|gpus| {
        let mut n = 0;
        for gpu in gpus {
            for e in gpu.model().map(|m| m.errors()).unwrap_or_default() {
                log::error!(target: "app", "{}: the model rejected an access: {e}", gpu.name);
                n += 1;
            }
        }
        n
    });
    if rejections > 0 {
        log::error!(target: "app", "{rejections} model rejection(s): the application run fails");
    }
    outcome.unwrap_or(false) && rejections == 0
}
