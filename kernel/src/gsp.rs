//! GSP-RM in the kernel: boots each GPU's resource manager with `nvgpu::gsp::boot` (firmware
//! from boot modules, DMA memory from frames), then creates the RM objects every later stage
//! needs (client, device, subdevice). Runs on models and on real GPUs alike; GPUs whose boot
//! flow the kernel cannot complete are reported with the typed reason.
//!
//! A booted GSP keeps using the DMA memory its boot laid out, so each session lives for the
//! kernel's lifetime (`SESSIONS`): nothing here is ever freed while GSP-RM runs.

use crate::arch::boot_cpu::BootCpuLock;
use crate::gpu_types::{Bar0, BootModules, FrameDma, KernelClock};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use nvgpu::chip::Chipset;
use nvgpu::firmware::FirmwareBundle;
use nvgpu::gsp::boot::{BootConfig, BootInputs, BootReport, GspBoot};
use nvgpu::gsp::cmdq::QueueHeadDoorbell;
use nvgpu::rm::RmClient;
use nvgpu::vbios::Vbios;
use spin::Mutex;

static CLOCK: KernelClock = KernelClock;
static DMA: FrameDma = FrameDma;

type Session = GspBoot<'static, Bar0, KernelClock, FrameDma, QueueHeadDoorbell<&'static Bar0>>;

/// A booted GSP and its RM objects. `boot` owns the DMA memory GSP-RM runs on: it is held,
/// never dropped, for as long as GSP-RM runs.
struct Live {
    chipset: Chipset,
    bar0: &'static Bar0,
    boot: Session,
    client: RmClient,
    subdevice: nvgpu::rm::Handle<nvgpu::rm::Subdevice>,
    /// Where a real GPU sits on PCI (power state changes around suspend); `None` for models.
    pci: Option<kernel::pci::PciAddress>,
    /// Where the GPU sits (a model's from its board), as GSP_SET_SYSTEM_INFO told GSP-RM.
    placement: nvgpu::gsp::boot::PciPlacement,
}

/// Every live GSP session. The sessions, and the model GPUs with interior mutability behind
/// them, are touched by the boot CPU's kernel flow alone (see [`BootCpuLock`]).
static SESSIONS: BootCpuLock<Vec<Live>> = BootCpuLock::new(Vec::new());

/// What the boot log and the tests see of one GPU's GSP.
#[derive(Clone)]
pub struct GspSummary {
    pub gpu: String,
    pub report: BootReport,
    pub gpu_name: String,
    pub fb_regions: usize,
    pub fb_bytes: u64,
    pub rm_objects: usize,
    pub commands_sent: u32,
}

static SUMMARIES: Mutex<Vec<GspSummary>> = Mutex::new(Vec::new());

pub fn summaries() -> Vec<GspSummary> {
    SUMMARIES.lock().clone()
}

#[derive(Debug)]
pub enum GspBringUpError {
    Firmware(nvgpu::firmware::FirmwareError),
    Boot(nvgpu::gsp::boot::BootError),
    /// An RM object call failed; with the GPU and the RPC history at that moment.
    Rm(nvgpu::rm::RmError, String),
    NotBooted,
}

impl core::fmt::Display for GspBringUpError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            GspBringUpError::Firmware(e) => write!(f, "firmware: {e}"),
            GspBringUpError::Boot(e) => write!(f, "{e}"),
            GspBringUpError::Rm(e, history) => write!(f, "RM objects: {e}; {history}"),
            GspBringUpError::NotBooted => write!(f, "GSP-RM did not come up"),
        }
    }
}

/// Boots GSP-RM on `bar0` and creates the RM client, device and subdevice.
pub fn bring_up(
    name: &str,
    chipset: Chipset,
    bar0: &'static Bar0,
    vbios: &'static Vbios,
    pci: Option<kernel::pci::PciAddress>,
    placement: nvgpu::gsp::boot::PciPlacement,
) -> Result<GspSummary, GspBringUpError> {
    let bundle: &'static FirmwareBundle<'static> =
        Box::leak(Box::new(FirmwareBundle::load(&BootModules, chipset).map_err(GspBringUpError::Firmware)?));
    // Turing's FWSEC runs through NVIDIA's generic falcon bootloader; Hopper boots through the
    // FSP with the GSP-FMC and its credentials. Both travel as boot modules when present.
    let generic_bootloader =
        FirmwareBundle::generic_bootloader(&BootModules, chipset).map_err(GspBringUpError::Firmware)?;
    let fmc = FirmwareBundle::fmc_images(&BootModules, chipset).map_err(GspBringUpError::Firmware)?;
    let inputs = BootInputs {
        io: bar0,
        clock: &CLOCK,
        dma: &DMA,
        chipset,
        firmware: bundle,
        vbios: Some(vbios),
        generic_bootloader,
        fmc,
    };
    let config = BootConfig { pci: placement, ..BootConfig::default() };
    let mut boot = GspBoot::new(inputs, config, QueueHeadDoorbell(bar0));
    // Model GPUs come with the model's logging file, so their LIBOS logs print decoded; real
    // firmware needs NVIDIA's gsp_log_*.bin, which Debian does not ship (logs print raw).
    if let Bar0::Model(_) = bar0 {
        let file: &'static [u8] = sim::gsp_rm::log::model_log_firmware().leak();
        match nvgpu::gsp::logs::LogMetadata::from_log_firmware(file) {
            Ok(meta) => {
                let meta: &'static nvgpu::gsp::logs::LogMetadata<'static> = Box::leak(Box::new(meta));
                boot.set_log_metadata(Some(meta));
            }
            Err(e) => log::warn!(target: "gsp", "{name}: the model's logging file is unusable: {e}"),
        }
    }
    let report = boot.run().map_err(GspBringUpError::Boot)?;
    for line in alloc::format!("{report}").lines() {
        log::info!(target: "gsp", "{name}: {line}");
    }
    let (gpu_name, fb_regions, fb_bytes) = {
        let info = boot.static_info().ok_or(GspBringUpError::NotBooted)?;
        let regions = info.fb_regions();
        let bytes = info.fb_bytes();
        (info.gpu_name(), regions.len(), bytes)
    };
    log::info!(target: "gsp", "{name}: static info: \"{gpu_name}\", {fb_regions} FB regions, {} MiB", fb_bytes >> 20);
    if let Some(info) = boot.static_info() {
        let gr: Vec<u32> = info.gr_engines().collect();
        let ce: Vec<u32> = info.copy_engines().collect();
        log::info!(target: "gsp", "{name}: engines: graphics/compute {gr:?}, copy {ce:?}");
    }
    for r in boot.static_info().map(|i| i.fb_regions()).unwrap_or(&[]) {
        log::info!(target: "gsp", "{name}:   FB region {:#x}..{:#x} reserved {:#x} perf {}", r.base, r.limit, r.reserved, r.performance);
    }

    let rpc = boot.rpc().ok_or(GspBringUpError::NotBooted)?;
    let rm_error = |rpc: &mut Rpc, e| GspBringUpError::Rm(e, alloc::format!("{chipset}: {}", rpc.snapshot()));
    let mut client = RmClient::new(rpc, 0).map_err(|e| rm_error(rpc, e))?;
    let device = client.alloc_device(rpc, &Default::default()).map_err(|e| rm_error(rpc, e))?;
    let subdevice = client.alloc_subdevice(rpc, device, &Default::default()).map_err(|e| rm_error(rpc, e))?;
    log::info!(target: "gsp", "{name}: RM client {:#x}, device {:#x}, subdevice {:#x}", client.handle().raw(), device.raw(), subdevice.raw());
    let commands_sent = rpc.queues().next_command_seq();
    log::info!(target: "gsp", "{name}: {commands_sent} RPCs sent to GSP-RM so far");

    let summary = GspSummary { gpu: name.into(), report, gpu_name, fb_regions, fb_bytes, rm_objects: 3, commands_sent };
    SESSIONS.lock().push(Live { chipset, bar0, boot, client, subdevice, pci, placement });
    SUMMARIES.lock().push(summary.clone());
    Ok(summary)
}

/// Number of live GSP sessions.
pub fn live_sessions() -> usize {
    SESSIONS.lock().len()
}

pub type Rpc =
    nvgpu::gsp::commands::GspRpc<QueueHeadDoorbell<&'static Bar0>, nvgpu::gsp::boot::ClockRef<'static, KernelClock>>;

/// Runs `f` with the RM client and RPC channel of session `index`.
pub fn with_session<R>(index: usize, f: impl FnOnce(&mut RmClient, &mut Rpc) -> R) -> Option<R> {
    let mut s = SESSIONS.lock();
    let live = s.get_mut(index)?;
    let rpc = live.boot.rpc()?;
    Some(f(&mut live.client, rpc))
}

/// Runs `f` with session `index`'s RPC channel alone (the application API's calls, one at a
/// time).
pub fn with_rpc<R>(index: usize, f: impl FnOnce(&mut Rpc) -> R) -> Option<R> {
    let mut s = SESSIONS.lock();
    let rpc = s.get_mut(index)?.boot.rpc()?;
    Some(f(rpc))
}

/// What the application API opens session `index` with: chip, BAR0, static information and
/// the GPU's PCI placement.
pub fn device_of(
    index: usize,
) -> Option<(Chipset, &'static Bar0, nvgpu::gsp::commands::GspStaticConfigInfo, nvgpu::gsp::boot::PciPlacement)> {
    let s = SESSIONS.lock();
    let live = s.get(index)?;
    Some((live.chipset, live.bar0, *live.boot.static_info()?, live.placement))
}

/// Unloads every live GSP-RM (UNLOADING_GUEST_DRIVER, then booter_unload: WPR2 comes down), as
/// the kernel does before it exits; returns how many unloads failed.
pub fn unload_all() -> usize {
    let mut sessions = SESSIONS.lock();
    let mut failed = 0;
    let summaries = SUMMARIES.lock();
    for (live, summary) in sessions.iter_mut().zip(summaries.iter()) {
        match live.boot.unload() {
            Ok(report) => {
                let ms = report.steps.iter().map(|s| s.elapsed_ns).sum::<u64>() / 1_000_000;
                log::info!(target: "gsp", "{}: GSP-RM unloaded in {ms} ms", summary.gpu);
            }
            Err(e) => {
                failed += 1;
                log::error!(target: "gsp", "{}: GSP-RM unload failed: {e}", summary.gpu);
            }
        }
    }
    failed
}

#[derive(Debug)]
pub enum SuspendResumeError {
    NoSession,
    Boot(nvgpu::gsp::boot::BootError),
    Pci(kernel::pci::PciError),
}

impl core::fmt::Display for SuspendResumeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SuspendResumeError::NoSession => write!(f, "no such GSP session"),
            SuspendResumeError::Boot(e) => write!(f, "{e}"),
            SuspendResumeError::Pci(e) => write!(f, "PCI power state: {e:?}"),
        }
    }
}

fn set_power(pci: Option<kernel::pci::PciAddress>, state: kernel::pci::PowerState) -> Result<(), SuspendResumeError> {
    let Some(address) = pci else { return Ok(()) };
    let access = crate::platform_pci::access().ok_or(SuspendResumeError::NoSession)?;
    let Some(f) = crate::platform_pci::functions().iter().find(|f| f.address == address) else { return Ok(()) };
    if f.power.is_none() {
        return Ok(());
    }
    let t = kernel::pci::set_power_state(access, f, state).map_err(SuspendResumeError::Pci)?;
    crate::time::sleep_ms(u64::from(t.settle_us).div_ceil(1000));
    Ok(())
}

/// Suspends session `index` (standby: GSP-RM saves its state, WPR2 comes down, a real GPU goes
/// to D3hot), then resumes it (D0, booter_load with the SR meta, INIT_DONE again).
pub fn suspend_and_resume(index: usize) -> Result<(u64, u64), SuspendResumeError> {
    let mut s = SESSIONS.lock();
    let live = s.get_mut(index).ok_or(SuspendResumeError::NoSession)?;
    let t0 = crate::time::nanos_since_entry();
    live.boot.suspend(nvgpu::gsp::boot::suspend::PmTransition::Standby).map_err(SuspendResumeError::Boot)?;
    set_power(live.pci, kernel::pci::PowerState::D3Hot)?;
    let t1 = crate::time::nanos_since_entry();
    set_power(live.pci, kernel::pci::PowerState::D0)?;
    live.boot.resume().map_err(SuspendResumeError::Boot)?;
    let t2 = crate::time::nanos_since_entry();
    Ok(((t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000))
}

/// The chip and subdevice of session `index`.
pub fn session_subdevice(index: usize) -> Option<(Chipset, nvgpu::rm::Handle<nvgpu::rm::Subdevice>)> {
    let s = SESSIONS.lock();
    let live = s.get(index)?;
    Some((live.chipset, live.subdevice))
}
