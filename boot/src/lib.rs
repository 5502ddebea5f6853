//! Loader entry and the BootInfo handoff.
//!
//! The kernel image carries a PVH ELF note and a Multiboot2 header (`entry.S`, included into
//! the kernel binary by `global_asm!`; linker script `boot/linker.ld`). Whichever loader
//! started us, the trampoline reaches long mode and the kernel calls [`handoff`], which parses
//! that loader's information into the same [`bootloader_api::BootInfo`] the rust-osdev loader
//! would give, plus [`BootExtras`] for what BootInfo has no field for: the command line and the
//! boot modules by name.
#![cfg_attr(not(test), no_std)]

pub mod cpio;
pub mod memory;
pub mod multiboot2;
mod phys;
pub mod pvh;

use bootloader_api::info::{FrameBuffer, FrameBufferInfo, MemoryRegionKind, Optional, PixelFormat};
use bootloader_api::BootInfo;
use core::fmt;
pub use memory::{MemoryMapError, RegionList};
pub use phys::PhysMemory;

/// The protocol numbers `entry.S` passes to `_boot_entry64`.
pub const PROTOCOL_PVH: u32 = 1;
pub const PROTOCOL_MULTIBOOT2: u32 = 2;

/// Most boot modules (including files inside cpio modules) we keep by name.
pub const MAX_MODULES: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Pvh,
    Multiboot2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BootError {
    UnknownProtocol(u32),
    BadMagic { protocol: &'static str, found: u32 },
    Unreadable(&'static str),
    Malformed(&'static str),
    NoMemoryMap(&'static str),
    MemoryMap(MemoryMapError),
    TooManyModules,
    AlreadyHandedOff,
}

impl fmt::Display for BootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BootError::UnknownProtocol(p) => write!(f, "unknown boot protocol {p}"),
            BootError::BadMagic { protocol, found } => write!(f, "{protocol}: bad magic {found:#x}"),
            BootError::Unreadable(what) => write!(f, "cannot read {what} (outside the first 4 GiB or truncated)"),
            BootError::Malformed(what) => write!(f, "malformed {what}"),
            BootError::NoMemoryMap(why) => write!(f, "no memory map: {why}"),
            BootError::MemoryMap(e) => write!(f, "memory map: {e:?}"),
            BootError::TooManyModules => write!(f, "more than {MAX_MODULES} boot modules"),
            BootError::AlreadyHandedOff => write!(f, "handoff called twice"),
        }
    }
}

/// A boot module (or a file inside a cpio boot module), reachable by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Module<'m> {
    /// First word of the module's command line, or the file name inside a cpio module.
    pub name: &'m str,
    /// The module's whole command line (empty for cpio files).
    pub args: &'m str,
    pub phys: u64,
    pub data: &'m [u8],
}

/// The framebuffer as a loader describes it (direct RGB only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramebufferDesc {
    pub phys: u64,
    pub pitch: u32,
    pub width: u32,
    pub height: u32,
    pub bpp: u8,
    pub red_position: u8,
    pub green_position: u8,
    pub blue_position: u8,
}

/// Everything parsed from a loader, before it becomes a BootInfo.
pub struct LoaderData<'m> {
    pub regions: RegionList,
    pub cmdline: &'m str,
    pub loader_name: &'m str,
    pub rsdp: Option<u64>,
    pub framebuffer: Option<FramebufferDesc>,
    modules: [Option<Module<'m>>; MAX_MODULES],
    module_count: usize,
}

impl<'m> LoaderData<'m> {
    pub const fn new() -> Self {
        LoaderData {
            regions: RegionList::new(),
            cmdline: "",
            loader_name: "",
            rsdp: None,
            framebuffer: None,
            modules: [None; MAX_MODULES],
            module_count: 0,
        }
    }

    /// Marks memory the loader's structures occupy so the frame allocator leaves it alone.
    pub fn reserve_loader_area(&mut self, phys: u64, len: u64) -> Result<(), BootError> {
        self.regions.reserve(phys, phys.saturating_add(len), MemoryRegionKind::Bootloader).map_err(BootError::MemoryMap)
    }

    /// Adds a module; a cpio "newc" module also contributes each of its files by name.
    pub fn add_module(&mut self, module: Module<'m>) -> Result<(), BootError> {
        self.reserve_loader_area(module.phys, module.data.len() as u64)?;
        self.push_module(module)?;
        if cpio::is_cpio(module.data) {
            for entry in cpio::entries(module.data) {
                // A damaged archive keeps the files before the damage; the module itself
                // stays reachable under its own name.
                let Ok(entry) = entry else { break };
                self.push_module(Module {
                    name: entry.name,
                    args: "",
                    phys: module.phys + entry.offset as u64,
                    data: entry.data,
                })?;
            }
        }
        Ok(())
    }

    fn push_module(&mut self, module: Module<'m>) -> Result<(), BootError> {
        let slot = self.modules.get_mut(self.module_count).ok_or(BootError::TooManyModules)?;
        *slot = Some(module);
        self.module_count += 1;
        Ok(())
    }

    pub fn modules(&self) -> impl Iterator<Item = &Module<'m>> {
        self.modules[..self.module_count].iter().flatten()
    }

    pub fn module(&self, name: &str) -> Option<&Module<'m>> {
        self.modules().find(|m| m.name == name)
    }
}

impl Default for LoaderData<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// What the kernel gets besides the BootInfo: the parts no BootInfo field holds.
pub struct BootExtras {
    pub protocol: Protocol,
    pub data: LoaderData<'static>,
}

impl BootExtras {
    pub fn cmdline(&self) -> &'static str {
        self.data.cmdline
    }
    pub fn loader_name(&self) -> &'static str {
        self.data.loader_name
    }
    pub fn module(&self, name: &str) -> Option<&Module<'static>> {
        self.data.module(name)
    }
    pub fn modules(&self) -> impl Iterator<Item = &Module<'static>> {
        self.data.modules()
    }
}

/// Where the kernel image and the boot stack lie (from linker symbols).
#[derive(Debug, Clone, Copy)]
pub struct ImageLayout {
    pub kernel_start: u64,
    pub kernel_end: u64,
    pub stack_bottom: u64,
    pub stack_top: u64,
}

/// Parses the loader's information (shared by the kernel's handoff and by host tests).
pub fn parse_loader<'m>(
    mem: &dyn PhysMemory<'m>,
    protocol: u32,
    magic: u32,
    info_phys: u64,
    layout: ImageLayout,
    out: &mut LoaderData<'m>,
) -> Result<Protocol, BootError> {
    let proto = match protocol {
        PROTOCOL_PVH => {
            pvh::parse(mem, info_phys, out)?;
            Protocol::Pvh
        }
        PROTOCOL_MULTIBOOT2 => {
            multiboot2::parse(mem, magic, info_phys, out)?;
            Protocol::Multiboot2
        }
        other => return Err(BootError::UnknownProtocol(other)),
    };
    // The real-mode area (IVT, BDA, EBDA, option ROMs) is never handed out as frames.
    out.regions.reserve(0, 0x10_0000, MemoryRegionKind::Bootloader).map_err(BootError::MemoryMap)?;
    out.regions
        .reserve(layout.kernel_start, layout.kernel_end, MemoryRegionKind::Bootloader)
        .map_err(BootError::MemoryMap)?;
    Ok(proto)
}

/// Fills a BootInfo from parsed loader data; `regions` must be the storage the BootInfo's
/// memory map will point at.
// `bootloader_api::info::FrameBuffer::new` is an `unsafe fn` (it records an address the kernel will
// map); the only unsafe of the boot crate outside its assembly trampoline.
#[allow(unsafe_code)]
pub fn fill_boot_info(info: &mut BootInfo, data: &LoaderData<'_>, layout: ImageLayout) {
    info.rsdp_addr = data.rsdp.into();
    info.kernel_addr = layout.kernel_start;
    info.kernel_len = layout.kernel_end - layout.kernel_start;
    info.kernel_image_offset = 0;
    info.kernel_stack_bottom = layout.stack_bottom;
    info.kernel_stack_len = layout.stack_top - layout.stack_bottom;
    if let Some(first) = data.modules().next() {
        info.ramdisk_addr = Optional::Some(first.phys);
        info.ramdisk_len = first.data.len() as u64;
    }
    if let Some(fb) = data.framebuffer {
        let bytes_per_pixel = (fb.bpp as usize).div_ceil(8);
        let pixel_format = match (fb.red_position, fb.green_position, fb.blue_position) {
            (0, 8, 16) => PixelFormat::Rgb,
            (16, 8, 0) => PixelFormat::Bgr,
            (r, g, b) => PixelFormat::Unknown { red_position: r, green_position: g, blue_position: b },
        };
        let fb_info = FrameBufferInfo {
            byte_len: fb.pitch as usize * fb.height as usize,
            width: fb.width as usize,
            height: fb.height as usize,
            pixel_format,
            bytes_per_pixel,
            stride: (fb.pitch as usize).checked_div(bytes_per_pixel).unwrap_or(0),
        };
        // SAFETY: the loader described this framebuffer; `FrameBuffer::new` only records the
        // address, and the kernel maps it (write-combining) before touching it.
        info.framebuffer = Optional::Some(unsafe { FrameBuffer::new(fb.phys, fb_info) });
    }
}

#[cfg(test)]
mod tests;
