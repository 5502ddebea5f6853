//! Model GPUs inside the kernel: the same `sim` model the host tests use, reaching system
//! memory as a DMA device does: the DMA memory `FrameDma` hands out (bus address = physical
//! address), through [`crate::mem::dma`], which refuses anything that is not a live DMA
//! allocation. So the driver's DMA goes through the same boundary as on real hardware, and the
//! model cannot touch the kernel's own memory.

use crate::mem::dma;
use alloc::boxed::Box;
use alloc::string::String;
use nvgpu::chip::Chipset;
use sim::{ModelGpu, SystemMemory};

/// System memory as the model's DMA engine sees it: live DMA allocations.
struct KernelMemory;

impl SystemMemory for KernelMemory {
    fn read(&self, bus: u64, buf: &mut [u8]) -> bool {
        dma::device_read(bus, buf)
    }
    fn write(&self, bus: u64, buf: &[u8]) -> bool {
        dma::device_write(bus, buf)
    }
}

/// `gh100` -> `Chipset::GH100` (case-insensitive).
pub fn chipset_by_name(name: &str) -> Option<Chipset> {
    Chipset::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(name))
}

/// A model chip name that names no chip.
#[derive(Debug)]
pub struct UnknownChip(pub String);

impl core::fmt::Display for UnknownChip {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "unknown model chip '{}' (known:", self.0)?;
        for (i, c) in Chipset::ALL.iter().enumerate() {
            write!(f, "{}{}", if i == 0 { " " } else { ", " }, c.name().to_ascii_lowercase())?;
        }
        f.write_str(")")
    }
}

/// Creates the model for `chip` (e.g. "gh100"): its BAR0 and its PCI device id.
pub fn create(chip: &str) -> Result<(Box<ModelGpu>, u16), UnknownChip> {
    let chipset = chipset_by_name(chip).ok_or_else(|| UnknownChip(String::from(chip)))?;
    let model = ModelGpu::for_chipset(chipset);
    model.set_system_memory(Box::new(KernelMemory));
    let device_id = model.config().pci.device_id;
    Ok((Box::new(model), device_id))
}
