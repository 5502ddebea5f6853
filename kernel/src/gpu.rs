//! GPUs in the kernel: the driver's boundaries implemented for this machine (BAR0 as volatile
//! MMIO, frames as DMA memory, the TSC clock, boot modules as firmware), the claim of NVIDIA
//! display/3D functions found on PCI, and, when there are none, model GPUs from `sim/` chosen
//! on the command line (`gpu=model:gh100,model:ad102`; default one GH100; `gpu=none`).

use crate::mem::paging::{self, CacheType};
use crate::mem::{frames, PHYS_OFFSET};
use crate::platform_pci;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use kernel::pci::{self, Decode, PciFunction};
use nvgpu::device::{self, Foundation};
use nvgpu::hw::RegisterIo;
use nvgpu::platform::{Clock, DmaAllocator, DmaBuffer, DmaError, FirmwareSource};
use spin::Mutex;

/// NVIDIA's PCI vendor id.
const NVIDIA: u16 = 0x10de;
/// BAR0 (the register space) of every NVIDIA GPU since Tesla is 16 MiB.
const BAR0_SIZE: u64 = 16 << 20;

/// BAR0 mapped uncached.
pub struct MmioBar0 {
    virt: u64,
    len: u64,
}

impl RegisterIo for MmioBar0 {
    fn read32(&self, offset: u32) -> u32 {
        if offset as u64 + 4 > self.len || offset % 4 != 0 {
            return 0xFFFF_FFFF;
        }
        // SAFETY: BAR0 is mapped UC for `len` bytes at `virt`; the offset is in range and aligned.
        unsafe { core::ptr::read_volatile((self.virt + offset as u64) as *const u32) }
    }
    fn write32(&self, offset: u32, value: u32) {
        if offset as u64 + 4 > self.len || offset % 4 != 0 {
            return;
        }
        // SAFETY: as in read32.
        unsafe { core::ptr::write_volatile((self.virt + offset as u64) as *mut u32, value) }
    }
}

/// The TSC clock.
pub struct KernelClock;

impl Clock for KernelClock {
    fn now_ns(&self) -> u64 {
        crate::time::nanos_since_entry()
    }
}

/// DMA memory from the frame allocator: physically contiguous, identity bus addresses (no
/// IOMMU is programmed), reached by the CPU through the RAM mapping.
pub struct FrameDma;

impl DmaAllocator for FrameDma {
    fn alloc(&self, len: usize) -> Result<DmaBuffer, DmaError> {
        let pages = (len as u64).div_ceil(4096).max(1);
        let phys = frames::alloc_contiguous(pages).ok_or(DmaError { requested: len })?;
        // SAFETY: the frames were just allocated for this buffer alone and are mapped at
        // PHYS_OFFSET; the device sees them at their physical address.
        Ok(unsafe { DmaBuffer::new((PHYS_OFFSET + phys) as *mut u8, phys, len) })
    }
    fn free(&self, buffer: DmaBuffer) {
        let pages = (buffer.len() as u64).div_ceil(4096).max(1);
        for i in 0..pages {
            frames::free(buffer.bus_address() + i * 4096);
        }
    }
}

/// Firmware from boot modules, by name.
pub struct BootModules;

/// Copies of modules that were not 8-byte aligned (cpio "newc" aligns file data to 4 bytes
/// only; ELF parsing wants the alignment of the ELF64 header).
static ALIGNED: Mutex<Vec<(String, &'static [u8])>> = Mutex::new(Vec::new());

impl FirmwareSource for BootModules {
    fn get(&self, name: &str) -> Option<&[u8]> {
        let data = crate::boot_extras().module(name)?.data;
        if data.as_ptr() as usize % 8 == 0 {
            return Some(data);
        }
        let mut cache = ALIGNED.lock();
        if let Some((_, copy)) = cache.iter().find(|(n, _)| n == name) {
            return Some(copy);
        }
        let words: Vec<u64> = alloc::vec![0; data.len().div_ceil(8)];
        let bytes: &'static mut [u64] = words.leak();
        // SAFETY: a u64 slice viewed as bytes, within its length; it is leaked, so 'static.
        let view: &'static mut [u8] = unsafe { core::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut u8, data.len()) };
        view.copy_from_slice(data);
        cache.push((String::from(name), view));
        Some(view)
    }
}

/// How a GPU's registers are reached: a real BAR0, or the GPU model.
pub enum Bar0 {
    Mmio(MmioBar0),
    Model(Box<sim::ModelGpu>),
}

impl RegisterIo for Bar0 {
    fn read32(&self, offset: u32) -> u32 {
        match self {
            Bar0::Mmio(m) => m.read32(offset),
            Bar0::Model(m) => m.read32(offset),
        }
    }
    fn write32(&self, offset: u32, value: u32) {
        match self {
            Bar0::Mmio(m) => m.write32(offset, value),
            Bar0::Model(m) => m.write32(offset, value),
        }
    }
}

/// A GPU the kernel brought up. GPUs are never removed: their foundation and register window
/// live as long as the kernel (GSP-RM keeps references to both).
pub struct Gpu {
    pub name: String,
    pub foundation: &'static Foundation,
    pub bar0: &'static Bar0,
}

impl Gpu {
    /// The model behind this GPU, if it is one (for its strictness log).
    pub fn model(&self) -> Option<&sim::ModelGpu> {
        match self.bar0 {
            Bar0::Model(m) => Some(m),
            Bar0::Mmio(_) => None,
        }
    }
}

struct Gpus(Vec<Gpu>);

// SAFETY: the kernel runs on the boot CPU only (no application processor is started), so the
// GPUs, including model GPUs with interior mutability, are only touched from that CPU.
unsafe impl Send for Gpus {}

static GPUS: Mutex<Gpus> = Mutex::new(Gpus(Vec::new()));

pub fn with_gpus<R>(f: impl FnOnce(&[Gpu]) -> R) -> R {
    f(&GPUS.lock().0)
}

fn is_nvidia_gpu(f: &PciFunction) -> bool {
    // Display controller (class 0x03): VGA-compatible 0x00 or 3D controller 0x02.
    f.vendor_id == NVIDIA && f.class == 0x03 && (f.subclass == 0x00 || f.subclass == 0x02)
}

fn claim(f: &PciFunction) -> Result<MmioBar0, String> {
    let access = platform_pci::access().ok_or("no PCI configuration access")?;
    let bar0 = f.bars[0].filter(|b| b.is_memory() && b.address != 0).ok_or("BAR0 is not an assigned memory BAR")?;
    if bar0.size < BAR0_SIZE {
        return Err(alloc::format!("BAR0 is {:#x} bytes, expected {:#x}", bar0.size, BAR0_SIZE));
    }
    if f.power.is_some() {
        match pci::set_power_state(access, f, pci::PowerState::D0) {
            Ok(t) if t.settle_us > 0 => crate::time::sleep_ms(t.settle_us.div_ceil(1000) as u64),
            Ok(_) => {}
            Err(e) => log::warn!(target: "gpu", "{}: cannot put the GPU in D0: {e:?}", f.address),
        }
    }
    pci::enable(access, f.address, Decode { memory: true, io: false, bus_master: true }).map_err(|e| alloc::format!("enabling decode: {e:?}"))?;
    let virt = paging::map_mmio(bar0.address, BAR0_SIZE, CacheType::Uncached).map_err(|e| alloc::format!("mapping BAR0: {e}"))?;
    Ok(MmioBar0 { virt, len: BAR0_SIZE })
}

fn bring_up_one(name: String, bar0: Bar0, device_id: u16, gsp: bool, pci: Option<kernel::pci::PciAddress>) {
    let t0 = crate::time::millis_since_entry();
    let bar0: &'static Bar0 = Box::leak(Box::new(bar0));
    match device::bring_up(bar0, device_id) {
        Ok(foundation) => {
            log::info!(target: "gpu", "{name}: {foundation} ({} ms)", crate::time::millis_since_entry() - t0);
            log::info!(
                target: "gpu",
                "{name}: HAL {:?}: boot flow {:?}, MMU {:?}",
                foundation.hal.family,
                foundation.hal.boot_flow,
                foundation.hal.mmu_version
            );
            let foundation: &'static Foundation = Box::leak(Box::new(foundation));
            let gpu = Gpu { name, foundation, bar0 };
            if gsp {
                let t1 = crate::time::millis_since_entry();
                match crate::gsp::bring_up(&gpu.name, foundation.identity.chipset, bar0, &foundation.vbios, pci) {
                    Ok(s) => log::info!(
                        target: "gsp",
                        "{}: GSP-RM up in {} ms (\"{}\"), {} RPCs",
                        gpu.name,
                        crate::time::millis_since_entry() - t1,
                        s.gpu_name,
                        s.commands_sent
                    ),
                    Err(e) => log::error!(target: "gsp", "{}: GSP-RM boot failed: {e}", gpu.name),
                }
            }
            if let Some(model) = gpu.model() {
                for e in model.errors() {
                    log::error!(target: "gpu", "{}: the model rejected an access: {e}", gpu.name);
                }
            }
            GPUS.lock().0.push(gpu);
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
            Ok(bar0) => bring_up_one(name, Bar0::Mmio(bar0), f.device_id, gsp, Some(f.address)),
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
            Ok((model, device_id)) => bring_up_one(alloc::format!("model gpu{i} ({chip})"), Bar0::Model(model), device_id, gsp, None),
            Err(e) => log::error!(target: "gpu", "gpu={spec}: {e}"),
        }
    }
}
