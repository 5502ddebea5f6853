//! Model GPUs inside the kernel: the same `sim` model the host tests use, reaching system
//! memory through the kernel's RAM mapping (bus address = physical address, as `FrameDma`
//! hands out), so the driver's DMA goes through the same boundary as on real hardware.

// unsafe here: the model reads and writes system memory through the RAM mapping.
#![allow(unsafe_code)]

use crate::mem::paging;
use crate::mem::PHYS_OFFSET;
use alloc::boxed::Box;
use alloc::string::String;
use nvgpu::chip::Chipset;
use sim::{ModelGpu, SystemMemory};

/// System memory as the model's DMA engine sees it: RAM the kernel maps at PHYS_OFFSET.
struct KernelMemory;

fn ram_range(bus: u64, len: usize) -> Option<u64> {
    let end = bus.checked_add(len as u64)?;
    let mut page = bus & !0xfff;
    while page < end {
        let (p, _, _) = paging::translate(PHYS_OFFSET.checked_add(page)?)?;
        if p != page {
            return None;
        }
        page += 0x1000;
    }
    Some(PHYS_OFFSET + bus)
}

impl SystemMemory for KernelMemory {
    fn read(&self, bus: u64, buf: &mut [u8]) -> bool {
        let Some(virt) = ram_range(bus, buf.len()) else { return false };
        // SAFETY: the range is RAM mapped at PHYS_OFFSET (checked page by page above). The
        // driver owns the DMA buffers it points the model at, as it would with a real device.
        unsafe { core::ptr::copy_nonoverlapping(virt as *const u8, buf.as_mut_ptr(), buf.len()) };
        true
    }
    fn write(&self, bus: u64, buf: &[u8]) -> bool {
        let Some(virt) = ram_range(bus, buf.len()) else { return false };
        // SAFETY: as in read.
        unsafe { core::ptr::copy_nonoverlapping(buf.as_ptr(), virt as *mut u8, buf.len()) };
        true
    }
}

/// `gh100` -> `Chipset::GH100` (case-insensitive).
pub fn chipset_by_name(name: &str) -> Option<Chipset> {
    Chipset::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(name))
}

/// Creates the model for `chip` (e.g. "gh100"): its BAR0 and its PCI device id.
pub fn create(chip: &str) -> Result<(Box<ModelGpu>, u16), String> {
    let chipset = chipset_by_name(chip).ok_or_else(|| {
        let known: alloc::vec::Vec<String> = Chipset::ALL.iter().map(|c| c.name().to_ascii_lowercase()).collect();
        alloc::format!("unknown model chip '{chip}' (known: {})", known.join(", "))
    })?;
    let model = ModelGpu::for_chipset(chipset);
    model.set_system_memory(Box::new(KernelMemory));
    let device_id = model.config().pci.device_id;
    Ok((Box::new(model), device_id))
}
