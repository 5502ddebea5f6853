//! The application on the GPUs whose GSP-RM came up, through the application API (`nvrt`):
//! the kernel is its [`Platform`]. Devices are the live GSP-RM sessions, in bring-up order;
//! each context opened is an RM client of its own over the session's RPC channel (taken for
//! one call at a time); managed memory is reached through the kernel's page tables and
//! page-fault handler ([`crate::managed::PageFaults`]); boot modules, the command line and the
//! TSC clock are the loader's and the kernel's; milestones go on the boot timeline.
//!
//! Which application runs is the `app` crate's `main` the image was built with: the example
//! application of this repository, or a user's own crate (`cargo xtask run --app-crate DIR`).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::Cell;

use crate::gpu_types::{Bar0, BootModules, FrameDma, KernelClock};
use nvgpu::platform::FirmwareSource;
use nvgpu::runtime::GpuConfig;
use nvrt::platform::{BackendConfig, DeviceOps, GpuBackend, Platform, RpcSource};
use nvrt::{DeviceProperties, Error, PciAddress, System};

static CLOCK: KernelClock = KernelClock;
static DMA: FrameDma = FrameDma;

/// Milestone names the application marked, each kept once (the timeline holds `&'static str`).
static MILESTONES: spin::Mutex<Vec<&'static str>> = spin::Mutex::new(Vec::new());

/// Session `index`'s RPC channel, one call at a time.
struct SessionRpc(usize);

impl RpcSource for SessionRpc {
    type Channel = crate::gsp::Rpc;
    fn with<T>(&mut self, f: impl FnOnce(&mut crate::gsp::Rpc) -> T) -> Option<T> {
        crate::gsp::with_rpc(self.0, f)
    }
}

struct KernelPlatform {
    cmdline: &'static str,
    devices: Vec<DeviceProperties>,
    /// RM client indices: 0 is the kernel's own client (`crate::gsp`).
    next_client: Cell<u32>,
}

fn properties(ordinal: usize) -> Option<DeviceProperties> {
    let (chipset, bar0, info, placement) = crate::gsp::device_of(ordinal)?;
    Some(DeviceProperties {
        ordinal,
        name: info.gpu_name().to_string(),
        chip: format!("{chipset}"),
        sm_version: chipset.sm_version(),
        memory_bytes: info.fb_bytes(),
        pci: Some({
            let (domain, bus, device, function) = placement.decode();
            PciAddress { domain, bus, device, function }
        }),
        runs_ptx: matches!(bar0, Bar0::Model(_)),
    })
}

impl Platform for KernelPlatform {
    fn device_count(&self) -> usize {
        self.devices.len()
    }
    fn properties(&self, ordinal: usize) -> Option<DeviceProperties> {
        self.devices.get(ordinal).cloned()
    }
    fn open(&self, ordinal: usize) -> Result<Box<dyn DeviceOps + '_>, Error> {
        let (chipset, bar0, info, _) = crate::gsp::device_of(ordinal).ok_or(Error::SessionGone { ordinal })?;
        let client_index = self.next_client.get();
        self.next_client.set(client_index + 1);
        let config = BackendConfig {
            gpu: GpuConfig {
                runs_ptx: matches!(bar0, Bar0::Model(_)),
                client_index,
                page_faulting: true,
                timeout_ms: 120_000,
                ..GpuConfig::default()
            },
            ordinal,
        };
        let cpu = crate::managed::PageFaults::default();
        let backend = GpuBackend::open(SessionRpc(ordinal), bar0, &DMA, &CLOCK, &info, chipset, config, cpu)?;
        Ok(Box::new(backend))
    }
    fn cmdline(&self) -> &str {
        self.cmdline
    }
    fn module(&self, name: &str) -> Option<&[u8]> {
        BootModules.get(name)
    }
    fn module_names(&self) -> Vec<String> {
        crate::boot_extras().modules().map(|m| m.name.to_string()).collect()
    }
    fn now_ns(&self) -> u64 {
        crate::time::nanos_since_entry()
    }
    fn milestone(&self, name: &str) {
        let stage = {
            let mut known = MILESTONES.lock();
            match known.iter().find(|k| **k == name) {
                Some(k) => *k,
                None => {
                    let k: &'static str = Box::leak(name.to_string().into_boxed_str());
                    known.push(k);
                    k
                }
            }
        };
        crate::boot_timeline::mark(stage);
    }
}

/// Runs the application; `true` when it reported success and the model (if any) rejected no
/// access.
pub fn run() -> bool {
    let sessions = crate::gsp::live_sessions();
    if sessions == 0 {
        log::error!(target: "app", "no GPU with a running GSP-RM: nothing to run the application on");
        return false;
    }
    let t0 = crate::time::nanos_since_entry();
    let platform = KernelPlatform {
        cmdline: crate::boot_extras().cmdline(),
        devices: (0..sessions).filter_map(properties).collect(),
        next_client: Cell::new(1),
    };
    let ok = match nvrt::Termination::report(app::main(&System::new(&platform))) {
        Ok(()) => true,
        Err(why) => {
            log::error!(target: "app", "{why}");
            false
        }
    };
    let (base, top) = crate::arch::gdt::ist_stack_bounds(crate::arch::gdt::IST_PAGE_FAULT);
    log::info!(
        target: "app",
        "the page-fault stack held at most {} of {} bytes",
        crate::arch::gdt::ist_stack_high_water(crate::arch::gdt::IST_PAGE_FAULT),
        top - base
    );
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
    ok && rejections == 0
}
