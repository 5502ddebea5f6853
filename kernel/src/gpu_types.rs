//! The boundary types the GPU modules share: how a GPU's registers are reached ([`Bar0`]: a
//! real BAR0 as uncached MMIO, or the GPU model), and the driver's platform boundaries
//! implemented for this machine (the TSC clock, frames as DMA memory, boot modules as
//! firmware). [`crate::gpu`] claims GPUs and brings them up; [`crate::gsp`] boots their
//! GSP-RM and the application runtime opens them; both use these, neither imports the other's
//! internals.

use crate::mem::dma;
use crate::mem::mmio::Mmio;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use nvgpu::hw::RegisterIo;
use nvgpu::platform::{Clock, DmaAllocator, DmaBuffer, DmaError, FirmwareSource};
use spin::Mutex;
use zerocopy::IntoBytes;

/// BAR0 mapped uncached. Outside the BAR (or misaligned) a read returns all ones, as a PCI
/// master abort would, and a write is dropped.
pub struct MmioBar0(Mmio);

impl MmioBar0 {
    /// BAR0 over `bar`, its uncached mapping.
    pub fn over(bar: Mmio) -> Self {
        MmioBar0(bar)
    }
}

impl RegisterIo for MmioBar0 {
    fn read32(&self, offset: u32) -> u32 {
        self.0.read32(u64::from(offset)).unwrap_or(0xFFFF_FFFF)
    }
    fn write32(&self, offset: u32, value: u32) {
        self.0.write32(u64::from(offset), value);
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

/// The TSC clock.
pub struct KernelClock;

impl Clock for KernelClock {
    fn now_ns(&self) -> u64 {
        crate::time::nanos_since_entry()
    }
}

/// DMA memory from the frame allocator ([`crate::mem::dma`]): physically contiguous, identity
/// bus addresses (no IOMMU is programmed), reached by the CPU through the RAM mapping.
pub struct FrameDma;

impl DmaAllocator for FrameDma {
    fn alloc(&self, len: usize) -> Result<DmaBuffer, DmaError> {
        dma::alloc(len).ok_or(DmaError { requested: len })
    }
    fn free(&self, buffer: DmaBuffer) {
        if let Err(e) = dma::free(buffer) {
            log::error!(target: "gpu", "DMA free refused: {e}");
        }
    }
    fn share_read_only(&self, bytes: &[u8]) -> Option<u64> {
        dma::share_module_read_only(bytes)
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
        if (data.as_ptr() as usize).is_multiple_of(8) {
            return Some(data);
        }
        let mut cache = ALIGNED.lock();
        if let Some((_, copy)) = cache.iter().find(|(n, _)| n == name) {
            return Some(copy);
        }
        // Modules from xtask's cpio and from GRUB are page-aligned; one that is not costs a
        // copy (0.4 s under TCG for the GSP-RM image), and the log says so.
        log::warn!(
            target: "boot",
            "module {name:?} at {:#x} is not 8-byte aligned: using a copy of its {} bytes",
            data.as_ptr() as usize,
            data.len()
        );
        // u64s for the alignment, leaked for 'static, seen as bytes through zerocopy.
        let words: &'static mut [u64] = alloc::vec![0u64; data.len().div_ceil(8)].leak();
        let view: &'static mut [u8] = &mut words.as_mut_bytes()[..data.len()];
        view.copy_from_slice(data);
        cache.push((String::from(name), view));
        Some(view)
    }
}
