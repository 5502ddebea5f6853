//! PCI tests: enumeration sanity, and a real device interrupt over MSI (QEMU's e1000e, the
//! default NIC on q35), and MSI-X table programming through the BAR mapping.

use crate::arch::{apic, idt};
use crate::mem::paging::{self, CacheType};
use crate::platform_pci;
use crate::{kassert, ktest};
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::pci::{self, Decode, MsixControl, MsixTableEntry, PciFunction};

/// Intel 82574 (e1000e) registers, from the 82574 GbE Controller datasheet, section 10.2.2:
/// ICR (interrupt cause read) 0xC0, ICS (cause set) 0xC8, IMS (mask set) 0xD0, IMC (mask
/// clear) 0xD8; cause bit 2 is LSC (link status change).
const E1000E_ICR: u64 = 0xC0;
const E1000E_ICS: u64 = 0xC8;
const E1000E_IMS: u64 = 0xD0;
const E1000E_IMC: u64 = 0xD8;
const CAUSE_LSC: u32 = 1 << 2;

fn e1000e() -> Option<&'static PciFunction> {
    platform_pci::functions().iter().find(|f| f.vendor_id == 0x8086 && f.device_id == 0x10d3)
}

ktest!(pci_scan_found_a_host_bridge_and_unique_functions, || {
    let fs = platform_pci::functions();
    kassert!(!fs.is_empty(), "no PCI functions found");
    kassert!(fs.iter().any(|f| f.class == 0x06 && f.subclass == 0x00), "no host bridge (class 0600)");
    for (i, a) in fs.iter().enumerate() {
        kassert!(!fs[i + 1..].iter().any(|b| b.address == a.address), "{} listed twice", a.address);
    }
    Ok(())
});

static MSI_HITS: AtomicUsize = AtomicUsize::new(0);

ktest!(e1000e_interrupt_arrives_by_msi, || {
    let Some(f) = e1000e() else { return Err("SKIP: no e1000e on this machine".into()) };
    let access = platform_pci::access().ok_or("no config access")?;
    let bar0 = f.bars[0].ok_or("e1000e has no BAR0")?;
    pci::enable(access, f.address, Decode { memory: true, io: false, bus_master: true }).map_err(|e| alloc::format!("{e:?}"))?;
    let regs = paging::map_mmio(bar0.address, 0x20000, CacheType::Uncached).map_err(|e| alloc::format!("{e}"))?;
    let w = |off: u64, v: u32| {
        // SAFETY: BAR0 of the e1000e is mapped UC above; these are its 32-bit registers.
        unsafe { core::ptr::write_volatile((regs + off) as *mut u32, v) }
    };
    // SAFETY: as above.
    let r = |off: u64| unsafe { core::ptr::read_volatile((regs + off) as *const u32) };
    let vector = apic::alloc_vectors(1).map_err(|_| "no vector")?;
    idt::set_handler(vector, |_| {
        MSI_HITS.fetch_add(1, Ordering::SeqCst);
    });
    let (addr, data) = apic::msi_message(vector, apic::id());
    pci::msi_configure(access, f, addr, data, 1).map_err(|e| alloc::format!("{e:?}"))?;
    w(E1000E_IMC, 0xFFFF_FFFF);
    let _ = r(E1000E_ICR);
    w(E1000E_IMS, CAUSE_LSC);
    w(E1000E_ICS, CAUSE_LSC);
    let d = crate::time::Deadline::after_ms(1000);
    while MSI_HITS.load(Ordering::SeqCst) == 0 && !d.expired() {
        crate::arch::halt();
    }
    w(E1000E_IMC, 0xFFFF_FFFF);
    let _ = r(E1000E_ICR);
    let _ = pci::msi_disable(access, f);
    idt::clear_handler(vector);
    apic::free_vectors(vector, 1);
    kassert!(MSI_HITS.load(Ordering::SeqCst) >= 1, "timed out waiting for the e1000e MSI on vector {vector:#x}");
    Ok(())
});

ktest!(msix_table_entries_program_through_the_bar, || {
    let Some(f) = e1000e() else { return Err("SKIP: no e1000e on this machine".into()) };
    let access = platform_pci::access().ok_or("no config access")?;
    let layout = pci::msix_layout(f).map_err(|e| alloc::format!("{e:?}"))?;
    let bar = f.bars.iter().flatten().find(|b| b.index == layout.table.bar).ok_or("MSI-X table BAR missing")?;
    let table = paging::map_mmio(bar.address + layout.table.offset, layout.entries as u64 * MsixTableEntry::SIZE, CacheType::Uncached)
        .map_err(|e| alloc::format!("{e}"))?;
    pci::msix_set_control(access, f, MsixControl { enable: true, function_mask: true }).map_err(|e| alloc::format!("{e:?}"))?;
    let vector = apic::alloc_vectors(1).map_err(|_| "no vector")?;
    let (addr, data) = apic::msi_message(vector, apic::id());
    let entry = MsixTableEntry { address: addr, data, masked: true };
    for (i, dw) in entry.to_dwords().iter().enumerate() {
        // SAFETY: entry 0 of the table mapped above; dword stores as the spec requires.
        unsafe { core::ptr::write_volatile((table + 4 * i as u64) as *mut u32, *dw) };
    }
    // SAFETY: as above.
    let back: [u32; 4] = core::array::from_fn(|i| unsafe { core::ptr::read_volatile((table + 4 * i as u64) as *const u32) });
    pci::msix_set_control(access, f, MsixControl { enable: false, function_mask: false }).map_err(|e| alloc::format!("{e:?}"))?;
    apic::free_vectors(vector, 1);
    kassert!(back[0] == addr as u32 && back[2] == data && back[3] & 1 == 1, "table entry reads back {back:x?}");
    Ok(())
});
