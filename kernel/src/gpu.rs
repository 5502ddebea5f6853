//! GPUs in the kernel: BAR1 as a write-combined window, the claim of NVIDIA display/3D
//! functions found on PCI, and, when there are none, model GPUs from `sim/` chosen on the
//! command line (`gpu=model:gh100,model:ad102`; default one GH100; `gpu=none`). The driver's
//! boundaries for this machine (BAR0, DMA, clock, firmware) are [`crate::gpu_types`].

use crate::arch::boot_cpu::BootCpuLock;
use crate::gpu_types::{Bar0, BootModules, MmioBar0};
use crate::mem::mmio::Mmio;
use crate::mem::wc::WcWindow;
use crate::platform_pci::{self, BarError};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::pci::{self, Decode, PciFunction};
use nvgpu::device::{self, Foundation};
use nvgpu::gsp::boot::PciPlacement;
use nvgpu::mm::{Bar1Access, Bar1AccessError};
use nvgpu::platform::FirmwareSource;

/// NVIDIA's PCI vendor id.
pub(crate) const NVIDIA: u16 = 0x10de;
/// BAR0 (the register space) of every NVIDIA GPU since Tesla is 16 MiB.
pub(crate) const BAR0_SIZE: u64 = 16 << 20;

/// NVIDIA's BAR1 (the VRAM aperture) is the GPU's second memory BAR, counting a 64-bit BAR once
/// (`NV_GPU_BAR_INDEX_FB` = 1 in `kernel-open/common/inc/nv.h`, an index into the memory BARs
/// `nv_pci_probe` collects; open-gpu-kernel-modules 535.261.03). On the GPUs this runtime
/// targets it is a 64-bit prefetchable BAR in PCI slots 1-2 (config offsets 0x14/0x18), after
/// the 32-bit non-prefetchable BAR0.
const BAR1_MEMORY_BAR: usize = 1;

/// BAR1 of a real GPU, mapped write-combined in full (a prefetchable BAR; see
/// [`crate::mem::wc`]). Offsets are BAR1 offsets, i.e. VAs of the BAR1 VA space that
/// [`nvgpu::mm::Bar1`] manages.
pub struct MmioBar1 {
    window: WcWindow,
    /// Offset of the last byte written and not yet flushed, or `NO_WRITE`: where `flush_writes`
    /// reads back. That byte's BAR1 page was mapped when it was written (the caller wrote
    /// through a mapping), so the read goes to VRAM, not to an unmapped page that would fault
    /// in the GPU MMU.
    last_write: AtomicU64,
}

const NO_WRITE: u64 = u64::MAX;

impl MmioBar1 {
    /// BAR1 access over `window`, a write-combined mapping of the whole BAR.
    pub fn over(window: WcWindow) -> Self {
        MmioBar1 { window, last_write: AtomicU64::new(NO_WRITE) }
    }
    pub fn size(&self) -> u64 {
        self.window.len()
    }
    pub fn phys(&self) -> u64 {
        self.window.phys()
    }
}

fn bar1_error(offset: u64, len: usize, write: bool) -> Bar1AccessError {
    Bar1AccessError { offset, len: len as u64, write }
}

impl Bar1Access for MmioBar1 {
    fn bar1_read(&self, offset: u64, buf: &mut [u8]) -> Result<(), Bar1AccessError> {
        self.window.read(offset, buf).map_err(|_| bar1_error(offset, buf.len(), false))
    }
    fn bar1_write(&self, offset: u64, data: &[u8]) -> Result<(), Bar1AccessError> {
        self.window.write(offset, data).map_err(|_| bar1_error(offset, data.len(), true))?;
        if let Some(last) = (data.len() as u64).checked_sub(1) {
            self.last_write.store(offset + last, Ordering::Relaxed);
        }
        Ok(())
    }
    /// MFENCE (an SFENCE is not ordered with the read that follows), then a read of the last
    /// byte written: a PCIe read cannot pass the posted writes before it, so when it returns
    /// they are in VRAM. See [`crate::mem::wc`] for the sources. [`nvgpu::mm::Bar1::flush_writes`]
    /// also reads back at the mapping it flushes; the second read is cheap and keeps this
    /// method complete for callers that use the trait alone.
    fn flush_writes(&self) {
        let last = self.last_write.swap(NO_WRITE, Ordering::Relaxed);
        let read_back = (last != NO_WRITE).then_some(last);
        // The offset was inside the window when written, so this cannot be out of range; if it
        // were, the fence has still run and nothing else can be done.
        let _ = self.window.flush(read_back);
    }
}

/// BAR1 access for any GPU: the write-combined window of a real one, or the model's aperture.
pub enum Bar1Port<'a> {
    Mmio(&'a MmioBar1),
    Model(&'a sim::ModelGpu),
}

impl Bar1Access for Bar1Port<'_> {
    fn bar1_read(&self, offset: u64, buf: &mut [u8]) -> Result<(), Bar1AccessError> {
        match self {
            Bar1Port::Mmio(m) => m.bar1_read(offset, buf),
            Bar1Port::Model(m) => Bar1Access::bar1_read(*m, offset, buf),
        }
    }
    fn bar1_write(&self, offset: u64, data: &[u8]) -> Result<(), Bar1AccessError> {
        match self {
            Bar1Port::Mmio(m) => m.bar1_write(offset, data),
            Bar1Port::Model(m) => Bar1Access::bar1_write(*m, offset, data),
        }
    }
    fn flush_writes(&self) {
        match self {
            Bar1Port::Mmio(m) => m.flush_writes(),
            Bar1Port::Model(m) => Bar1Access::flush_writes(*m),
        }
    }
}

/// A GPU the kernel brought up. GPUs are never removed: their foundation and register window
/// live as long as the kernel (GSP-RM keeps references to both).
pub struct Gpu {
    pub name: String,
    pub foundation: &'static Foundation,
    pub bar0: &'static Bar0,
    /// A real GPU's BAR1, if it could be mapped (None for model GPUs: see [`Gpu::bar1`]).
    pub bar1: Option<&'static MmioBar1>,
}

impl Gpu {
    /// The model behind this GPU, if it is one (for its strictness log).
    pub fn model(&self) -> Option<&sim::ModelGpu> {
        match self.bar0 {
            Bar0::Model(m) => Some(m),
            Bar0::Mmio(_) => None,
        }
    }

    /// BAR1 access: the write-combined mapping of a real GPU, the model's BAR1 for a model GPU.
    #[allow(dead_code)] // No caller yet: the kernel's GPU path does not set up nvgpu::mm::Bar1.
    pub fn bar1(&self) -> Option<Bar1Port<'_>> {
        match (self.bar0, self.bar1) {
            (Bar0::Model(m), _) => Some(Bar1Port::Model(m)),
            (Bar0::Mmio(_), Some(b)) => Some(Bar1Port::Mmio(b)),
            (Bar0::Mmio(_), None) => None,
        }
    }
}

/// The GPUs, model GPUs with interior mutability among them: the boot CPU's kernel flow alone
/// touches them (see [`BootCpuLock`]).
static GPUS: BootCpuLock<Vec<Gpu>> = BootCpuLock::new(Vec::new());

pub fn with_gpus<R>(f: impl FnOnce(&[Gpu]) -> R) -> R {
    f(&GPUS.lock())
}

pub(crate) fn is_nvidia_gpu(f: &PciFunction) -> bool {
    // Display controller (class 0x03): VGA-compatible 0x00 or 3D controller 0x02.
    f.vendor_id == NVIDIA && f.class == 0x03 && (f.subclass == 0x00 || f.subclass == 0x02)
}

/// Maps BAR1 write-combined, in full, with the same code the VGA framebuffer ktest exercises.
fn map_bar1(f: &PciFunction) -> Result<MmioBar1, BarError> {
    let bar1 = f
        .memory_bar(BAR1_MEMORY_BAR)
        .ok_or(BarError::Missing { function: f.address, what: "no second memory BAR (BAR1)" })?;
    let window = platform_pci::map_prefetchable_bar(f, bar1, bar1.size, true)?;
    Ok(MmioBar1::over(window))
}

fn claim(f: &PciFunction) -> Result<MmioBar0, BarError> {
    let function = f.address;
    let access = platform_pci::access().ok_or(BarError::NoConfigAccess)?;
    let bar0 = f.bars[0]
        .filter(|b| b.is_memory() && b.address != 0)
        .ok_or(BarError::Missing { function, what: "BAR0 is not an assigned memory BAR" })?;
    if bar0.size < BAR0_SIZE {
        return Err(BarError::TooSmall { function, bar: 0, size: bar0.size, wanted: BAR0_SIZE });
    }
    if f.power.is_some() {
        match pci::set_power_state(access, f, pci::PowerState::D0) {
            Ok(t) if t.settle_us > 0 => crate::time::sleep_ms(t.settle_us.div_ceil(1000) as u64),
            Ok(_) => {}
            Err(e) => log::warn!(target: "gpu", "{}: cannot put the GPU in D0: {e:?}", f.address),
        }
    }
    pci::enable(access, function, Decode { memory: true, io: false, bus_master: true })
        .map_err(|error| BarError::Enable { function, error })?;
    let bar = Mmio::map(bar0.address, BAR0_SIZE).map_err(|error| BarError::Map { function, bar: 0, error })?;
    Ok(MmioBar0::over(bar))
}

/// Where a GPU found on PCI sits, for `GSP_SET_SYSTEM_INFO`: its BARs' bus addresses (NVIDIA's
/// numbering: memory BARs 0, 1 and 2) and its address.
fn placement_of(f: &PciFunction) -> PciPlacement {
    let bar = |n: usize| f.memory_bar(n).map_or(0, |b| b.address);
    let a = f.address;
    PciPlacement {
        bar0: bar(0),
        bar1: bar(BAR1_MEMORY_BAR),
        bar_inst: bar(2),
        domain_bus_device_function: PciPlacement::encode(a.segment().into(), a.bus(), a.device(), a.function()),
    }
}

fn bring_up_one(
    name: String,
    bar0: Bar0,
    bar1: Option<MmioBar1>,
    device_id: u16,
    gsp: bool,
    pci: Option<kernel::pci::PciAddress>,
    placement: PciPlacement,
) {
    let bar1: Option<&'static MmioBar1> = bar1.map(|b| &*Box::leak(Box::new(b)));
    let index = GPUS.lock().len();
    let t0 = crate::time::millis_since_entry();
    let bar0: &'static Bar0 = Box::leak(Box::new(bar0));
    match device::bring_up(bar0, device_id) {
        Ok(foundation) => {
            crate::boot_timeline::mark_gpu("GPU foundation", index);
            log::info!(target: "gpu", "{name}: {foundation} ({} ms)", crate::time::millis_since_entry() - t0);
            log::info!(
                target: "gpu",
                "{name}: HAL {:?}: boot flow {:?}, MMU {:?}",
                foundation.hal.family,
                foundation.hal.boot_flow,
                foundation.hal.mmu_version
            );
            let foundation: &'static Foundation = Box::leak(Box::new(foundation));
            let gpu = Gpu { name, foundation, bar0, bar1 };
            if gsp {
                let t1 = crate::time::millis_since_entry();
                match crate::gsp::bring_up(
                    &gpu.name,
                    foundation.identity.chipset,
                    bar0,
                    &foundation.vbios,
                    pci,
                    placement,
                ) {
                    Ok(s) => {
                        crate::boot_timeline::mark_gpu("GSP-RM up", index);
                        log::info!(
                            target: "gsp",
                            "{}: GSP-RM up in {} ms (\"{}\"), {} RPCs",
                            gpu.name,
                            crate::time::millis_since_entry() - t1,
                            s.gpu_name,
                            s.commands_sent
                        )
                    }
                    Err(e) => log::error!(target: "gsp", "{}: GSP-RM boot failed: {e}", gpu.name),
                }
            }
            if let Some(model) = gpu.model() {
                for e in model.errors() {
                    log::error!(target: "gpu", "{}: the model rejected an access: {e}", gpu.name);
                }
            }
            GPUS.lock().push(gpu);
        }
        Err(e) => log::error!(target: "gpu", "{name}: {e}"),
    }
}

pub fn bring_up(cmdline: &kernel::cmdline::CmdLine<'_>) {
    // GSP-RM needs its firmware among the boot modules (`cargo xtask run --firmware`); without
    // it the foundation is all a GPU gets, and the log says why.
    let gsp = match cmdline.value("gsp") {
        Some("off") => false,
        _ if BootModules.get("gsp_ga10x.bin").is_some() || BootModules.get("gsp_tu10x.bin").is_some() => true,
        _ => {
            log::info!(target: "gsp", "no GSP-RM firmware among the boot modules: GPUs stop after the foundation");
            false
        }
    };
    let real: Vec<&PciFunction> = platform_pci::functions().iter().filter(|f| is_nvidia_gpu(f)).collect();
    for f in &real {
        let name = alloc::format!("gpu {}", f.address);
        match claim(f) {
            Ok(bar0) => {
                let bar1 = match map_bar1(f) {
                    Ok(b) => {
                        log::info!(target: "gpu", "{name}: BAR1 {:#x} bytes at {:#x}, mapped write-combined", b.size(), b.phys());
                        Some(b)
                    }
                    Err(e) => {
                        log::error!(target: "gpu", "{name}: BAR1 not mapped: {e}");
                        None
                    }
                };
                bring_up_one(name, Bar0::Mmio(bar0), bar1, f.device_id, gsp, Some(f.address), placement_of(f))
            }
            Err(e) => log::error!(target: "gpu", "{name}: cannot claim [{:04x}:{:04x}]: {e}", f.vendor_id, f.device_id),
        }
    }
    if !real.is_empty() {
        return;
    }
    let spec = cmdline.value("gpu").unwrap_or("model:gh100");
    if spec == "none" {
        log::info!(target: "gpu", "no NVIDIA GPU on PCI and gpu=none: no GPUs");
        return;
    }
    for (i, item) in spec.split(',').enumerate() {
        let Some(chip) = item.strip_prefix("model:") else {
            log::error!(target: "gpu", "gpu={spec}: '{item}' is not model:<chip> (e.g. model:gh100)");
            continue;
        };
        match crate::gpu_model::create(chip) {
            Ok((model, device_id)) => {
                // A model is on no bus: its board says where it would be, and its GSP-RM checks it.
                let placement = sim::boot_placement(model.config());
                bring_up_one(
                    alloc::format!("model gpu{i} ({chip})"),
                    Bar0::Model(model),
                    None,
                    device_id,
                    gsp,
                    None,
                    placement,
                )
            }
            Err(e) => log::error!(target: "gpu", "gpu={spec}: {e}"),
        }
    }
}
