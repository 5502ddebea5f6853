//! PCI tests: enumeration sanity, and a real device interrupt over MSI (QEMU's e1000e, the
//! default NIC on q35), and MSI-X table programming through the BAR mapping.

use crate::arch::{apic, idt};
use crate::mem::mmio::Mmio;
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
    pci::enable(access, f.address, Decode { memory: true, io: false, bus_master: true })
        .map_err(|e| alloc::format!("{e:?}"))?;
    let regs = Mmio::map(bar0.address, 0x20000).map_err(|e| alloc::format!("{e}"))?;
    let w = |off: u64, v: u32| {
        regs.write32(off, v);
    };
    let r = |off: u64| regs.read32(off).unwrap_or(0xFFFF_FFFF);
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
        // Not `hlt`: if the interrupt never comes, nothing would wake the CPU to see the
        // deadline pass.
        core::hint::spin_loop();
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
    let table = Mmio::map(bar.address + layout.table.offset, layout.entries as u64 * MsixTableEntry::SIZE)
        .map_err(|e| alloc::format!("{e}"))?;
    pci::msix_set_control(access, f, MsixControl { enable: true, function_mask: true })
        .map_err(|e| alloc::format!("{e:?}"))?;
    let vector = apic::alloc_vectors(1).map_err(|_| "no vector")?;
    let (addr, data) = apic::msi_message(vector, apic::id());
    let entry = MsixTableEntry { address: addr, data, masked: true };
    // Entry 0, in dword stores as the spec requires.
    for (i, dw) in entry.to_dwords().iter().enumerate() {
        table.write32(4 * i as u64, *dw);
    }
    let back: [u32; 4] = core::array::from_fn(|i| table.read32(4 * i as u64).unwrap_or(0xFFFF_FFFF));
    pci::msix_set_control(access, f, MsixControl { enable: false, function_mask: false })
        .map_err(|e| alloc::format!("{e:?}"))?;
    apic::free_vectors(vector, 1);
    kassert!(back[0] == addr as u32 && back[2] == data && back[3] & 1 == 1, "table entry reads back {back:x?}");
    Ok(())
});

/// QEMU's standard VGA (`-device VGA`, the default display of the pc and q35 machines): PCI id
/// 1234:1111, BAR0 a 32-bit prefetchable memory BAR over the video RAM, 16 MiB by default
/// (QEMU `hw/display/vga-pci.c`, property `vgamem_mb`).
fn std_vga() -> Option<&'static PciFunction> {
    platform_pci::functions().iter().find(|f| f.vendor_id == 0x1234 && f.device_id == 0x1111 && f.class == 0x03)
}

/// A word no two pages share, so that a mapping that lands on the wrong page shows.
fn pattern(offset: u64) -> u64 {
    0x5743_0000_0000_0000 ^ offset.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

ktest!(std_vga_framebuffer_maps_write_combined_and_round_trips, || {
    let Some(f) = std_vga() else { return Err("SKIP: no QEMU standard VGA (1234:1111) on this machine".into()) };
    let bar = f.bar(0).ok_or("std VGA has no BAR0")?;
    kassert!(bar.prefetchable && bar.size >= 2 << 20, "std VGA BAR0 {bar:?}: expected a prefetchable framebuffer");
    // The same mapping code BAR1 of a real GPU goes through (crate::gpu::map_bar1).
    let fb = platform_pci::map_prefetchable_bar(f, bar, bar.size, false)?;
    let leaf = paging::leaf(fb.virt()).ok_or("framebuffer mapping missing")?;
    kassert!(
        leaf.cache_type() == CacheType::WriteCombining,
        "framebuffer mapped {:?} (entry {:#x})",
        leaf.cache_type(),
        leaf.entry
    );
    kassert!(
        leaf.phys(fb.virt()) == bar.address,
        "framebuffer maps to {:#x}, BAR0 is at {:#x}",
        leaf.phys(fb.virt()),
        bar.address
    );
    let large = bar.address % (2 << 20) == 0;
    kassert!(!large || leaf.page_size == 2 << 20, "2 MiB-aligned BAR mapped with {:#x} pages", leaf.page_size);

    // One word in every 4 KiB page of the BAR, then a stretch with an unaligned start and end
    // (byte and 8-byte stores), then the fence and read-back.
    for page in (0..bar.size).step_by(4096) {
        fb.write(page + 8, &pattern(page).to_le_bytes()).map_err(|e| alloc::format!("{e}"))?;
    }
    let stretch: alloc::vec::Vec<u8> = (0..20_000u32).map(|i| (i * 7 + 3) as u8).collect();
    let stretch_at = 3 * 4096 + 1000 + 3;
    fb.write(stretch_at, &stretch).map_err(|e| alloc::format!("{e}"))?;
    fb.flush(Some(stretch_at + stretch.len() as u64 - 1)).map_err(|e| alloc::format!("{e}"))?;

    let mut word = [0u8; 8];
    for page in (0..bar.size).step_by(4096) {
        if (stretch_at..stretch_at + stretch.len() as u64).contains(&(page + 8)) {
            continue;
        }
        fb.read(page + 8, &mut word).map_err(|e| alloc::format!("{e}"))?;
        let got = u64::from_le_bytes(word);
        kassert!(got == pattern(page), "framebuffer page {page:#x}: read {got:#x}, wrote {:#x}", pattern(page));
    }
    let mut back = alloc::vec![0u8; stretch.len()];
    fb.read(stretch_at, &mut back).map_err(|e| alloc::format!("{e}"))?;
    if let Some(i) = back.iter().zip(&stretch).position(|(a, b)| a != b) {
        return Err(alloc::format!(
            "framebuffer byte {:#x}: read {:#x}, wrote {:#x}",
            stretch_at + i as u64,
            back[i],
            stretch[i]
        ));
    }

    // A second, small WC window over the BAR's first pages uses 4 KiB pages and sees the same
    // memory.
    let small = platform_pci::map_prefetchable_bar(f, bar, 3 * 4096, false)?;
    let leaf = paging::leaf(small.virt()).ok_or("small mapping missing")?;
    kassert!(
        leaf.page_size == 4096 && leaf.cache_type() == CacheType::WriteCombining,
        "small window: {:#x} pages, {:?}",
        leaf.page_size,
        leaf.cache_type()
    );
    for page in [0u64, 4096, 2 * 4096] {
        small.read(page + 8, &mut word).map_err(|e| alloc::format!("{e}"))?;
        kassert!(
            u64::from_le_bytes(word) == pattern(page),
            "small window page {page:#x} reads {:#x}",
            u64::from_le_bytes(word)
        );
    }
    // Out of the window is refused, not performed.
    kassert!(small.read(3 * 4096 - 4, &mut word).is_err(), "read past the window's end accepted");
    Ok(())
});

ktest!(bar1_access_over_a_write_combined_window_round_trips, || {
    use nvgpu::mm::Bar1Access;
    // The kernel's BAR1 implementation for real GPUs, over the std VGA framebuffer standing in
    // for a GPU's BAR1 (both are prefetchable memory BARs mapped by map_prefetchable_bar).
    let Some(f) = std_vga() else { return Err("SKIP: no QEMU standard VGA (1234:1111) on this machine".into()) };
    let bar = f.bar(0).ok_or("std VGA has no BAR0")?;
    let len = bar.size.min(4 << 20);
    let bar1 = crate::gpu::MmioBar1::over(platform_pci::map_prefetchable_bar(f, bar, len, false)?);
    let port = crate::gpu::Bar1Port::Mmio(&bar1);
    let data: alloc::vec::Vec<u8> = (0..4099u32).map(|i| (i ^ (i >> 8)) as u8 ^ 0xA5).collect();
    let at = len - 8192 + 5;
    port.bar1_write(at, &data).map_err(|e| alloc::format!("{e}"))?;
    port.flush_writes();
    let mut back = alloc::vec![0u8; data.len()];
    port.bar1_read(at, &mut back).map_err(|e| alloc::format!("{e}"))?;
    kassert!(back == data, "BAR1 port read back differs from what it wrote");
    let past = port.bar1_write(len - 2, &[0; 4]);
    kassert!(
        past == Err(nvgpu::mm::Bar1AccessError { offset: len - 2, len: 4, write: true }),
        "write past the end: {past:?}"
    );
    let mut four = [0u8; 4];
    kassert!(port.bar1_read(u64::MAX - 1, &mut four).is_err(), "read at an overflowing offset accepted");
    Ok(())
});
