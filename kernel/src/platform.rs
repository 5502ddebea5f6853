//! Platform bring-up, one step a paragraph: memory, CPU tables, ACPI, time, interrupts, PCI.
//! Each step logs what it found; a missing or bad firmware table logs a clear line and falls
//! back (no MCFG -> port I/O, no HPET -> PIT calibration, no MADT -> one CPU).

use crate::arch::{self, apic, gdt, idt};
use crate::mem::{frames, heap, paging};
use bootloader_api::info::MemoryRegionKind;
use bootloader_api::BootInfo;
use core::fmt;

#[derive(Debug)]
pub enum PlatformError {
    Paging(paging::MapError),
    Heap(paging::MapError),
    Apic(paging::MapError),
}

impl fmt::Display for PlatformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlatformError::Paging(e) => write!(f, "building the kernel page tables: {e}"),
            PlatformError::Heap(e) => write!(f, "setting up the heap: {e}"),
            PlatformError::Apic(e) => write!(f, "mapping the local APIC: {e}"),
        }
    }
}

pub fn bring_up(boot_info: &'static mut BootInfo) -> Result<(), PlatformError> {
    let extras = crate::boot_extras();
    let cmdline = kernel::cmdline::CmdLine::parse(extras.cmdline());
    if let Some(level) = cmdline.value("log") {
        crate::serial::set_level(match level {
            "trace" => log::LevelFilter::Trace,
            "debug" => log::LevelFilter::Debug,
            "warn" => log::LevelFilter::Warn,
            _ => log::LevelFilter::Info,
        });
    }
    log::info!(target: "boot", "booted by {} ({:?}); command line \"{}\"", extras.loader_name(), extras.protocol, cmdline.as_str());
    for m in extras.modules() {
        log::info!(target: "boot", "module \"{}\" at {:#x}, {} bytes", m.name, m.phys, m.data.len());
    }
    if let Some(sym) = extras.module("kernel.sym") {
        arch::backtrace::set_symbol_map(sym.data);
    }

    // CPU tables: every vector gets an IST stack before anything can fault.
    gdt::init();
    idt::init();

    // Memory: frames from the memory map, our own page tables, then the heap.
    let regions = &boot_info.memory_regions;
    let usable: u64 = regions.iter().filter(|r| r.kind == MemoryRegionKind::Usable).map(|r| r.end - r.start).sum();
    log::info!(target: "mem", "{} regions, {} MiB usable", regions.len(), usable >> 20);
    for r in regions.iter() {
        log::debug!(target: "mem", "  {:#014x}..{:#014x} {:?}", r.start, r.end, r.kind);
    }
    frames::init(regions);
    paging::init(regions).map_err(PlatformError::Paging)?;
    boot_info.physical_memory_offset = bootloader_api::info::Optional::Some(crate::mem::PHYS_OFFSET);
    heap::init().map_err(PlatformError::Heap)?;
    if paging::pat_programmed() {
        log::info!(target: "mem", "paging on (RAM at {:#x}, PAT {:#018x}: PA1 write-combining), heap ready", crate::mem::PHYS_OFFSET, paging::pat_msr());
    } else {
        log::warn!(
            target: "mem",
            "paging on (RAM at {:#x}), heap ready; IA32_PAT does not hold the kernel's layout (CPUID.01H:EDX.PAT {}): no write-combined mappings",
            crate::mem::PHYS_OFFSET,
            if paging::pat_supported() { "set, but the value did not read back" } else { "clear" }
        );
    }

    // ACPI tables, then time and interrupts from what they say.
    if let Some(fb) = boot_info.framebuffer.as_ref() {
        let i = fb.info();
        log::info!(target: "boot", "framebuffer {}x{} {:?}, {} bytes per pixel, stride {}", i.width, i.height, i.pixel_format, i.bytes_per_pixel, i.stride);
    }
    let tables = crate::platform_acpi::discover(boot_info);
    crate::platform_acpi::bring_up_time(&tables);
    let mode = apic::init(tables.local_apic_address(), !cmdline.flag("nox2apic")).map_err(PlatformError::Apic)?;
    log::info!(target: "apic", "local APIC {:?}, id {}, version {:#x}", mode, apic::id(), apic::version());
    crate::platform_acpi::bring_up_ioapics(&tables);
    if crate::arch::ioapic::count() == 0 {
        log::warn!(target: "apic", "no I/O APIC: legacy device interrupts are unavailable (MSI still works)");
    }
    arch::enable_interrupts();

    // PCI: every function on every root bus.
    crate::platform_pci::scan(&tables, cmdline.flag("pci-handshake"));
    crate::platform_acpi::keep(tables);

    let h = heap::stats();
    let f = frames::stats();
    log::info!(target: "mem", "heap {} KiB used of {} KiB; {} of {} frames allocated", h.used >> 10, h.size >> 10, f.allocated_frames, f.total_frames);
    crate::boot_timeline::mark("platform ready");
    log::info!(target: "kernel", "platform ready in {} ms", crate::time::millis_since_entry());
    Ok(())
}
