//! Platform tests: memory, paging and PAT, heap growth, exceptions, interrupts, timers.

use crate::arch::{self, apic, idt};
use crate::mem::frames::{self, Frame};
use crate::mem::paging::{self, CacheType};
use crate::mem::{heap, managed_window, PHYS_OFFSET};
use crate::{kassert, ktest};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

ktest!(frame_allocator_hands_out_distinct_zeroed_frames, || {
    let before = frames::stats().allocated_frames;
    let a = Frame::alloc().ok_or("no frame")?;
    let b = Frame::alloc().ok_or("no frame")?;
    let (pa, pb) = (a.phys(), b.phys());
    kassert!(pa != pb && pa % 4096 == 0 && pb % 4096 == 0, "frames {pa:#x} {pb:#x}");
    kassert!(a.read_u64(8) == Some(0), "frame not zeroed");
    drop(a);
    drop(b);
    kassert!(frames::stats().allocated_frames == before, "allocation count not restored");
    let c = Frame::alloc().ok_or("no frame")?;
    kassert!(c.phys() == pb, "freed frame not reused first ({:#x} vs {pb:#x})", c.phys());
    Ok(())
});

ktest!(pat_is_programmed_and_mmio_gets_its_cache_type, || {
    kassert!(paging::pat_msr() == paging::EXPECTED_PAT, "PAT {:#x}", paging::pat_msr());
    // The HPET/xAPIC page: map it twice with different types and check the PTEs.
    let uc = paging::map_mmio(0xFEE0_0000, 0x1000, CacheType::Uncached).map_err(|e| alloc::format!("{e}"))?;
    let wc = paging::map_mmio(0xFEE0_0000, 0x1000, CacheType::WriteCombining).map_err(|e| alloc::format!("{e}"))?;
    let (p1, t1, _) = paging::translate(uc).ok_or("UC mapping missing")?;
    let (p2, t2, _) = paging::translate(wc).ok_or("WC mapping missing")?;
    kassert!(p1 == 0xFEE0_0000 && p2 == 0xFEE0_0000, "wrong physical addresses {p1:#x} {p2:#x}");
    kassert!(t1 == CacheType::Uncached && t2 == CacheType::WriteCombining, "types {t1:?} {t2:?}");
    // A 4 MiB mapping uses 2 MiB pages.
    let big = paging::map_mmio(0xC000_0000, 4 << 20, CacheType::WriteCombining).map_err(|e| alloc::format!("{e}"))?;
    let (_, _, size) = paging::translate(big).ok_or("large mapping missing")?;
    kassert!(size == 2 << 20, "large MMIO mapping uses {size:#x} pages");
    Ok(())
});

/// Architectural bit positions, spelled here independently of `paging` so that a mistake there
/// is not repeated here (Intel SDM vol. 3A, section 4.5, tables 4-17 and 4-19).
const PTE_PWT: u64 = 1 << 3;
const PTE_PCD: u64 = 1 << 4;
/// PAT bit of a 4 KiB PTE; in a 2 MiB PDE this bit is PS (page size).
const PTE_PAT_4K: u64 = 1 << 7;
const PDE_PS: u64 = 1 << 7;
/// PAT bit of a 2 MiB PDE.
const PDE_PAT_2M: u64 = 1 << 12;

ktest!(pat_entry_one_is_write_combining_and_wc_ptes_select_it, || {
    kassert!(paging::pat_supported(), "CPUID.01H:EDX.PAT is clear");
    kassert!(paging::pat_programmed(), "IA32_PAT not programmed");
    let pat = paging::pat_msr();
    // IA32_PAT: PA<i> in bits 8i+2..8i (SDM vol. 3A, section 11.12.2); WC is 01h (table 11-10).
    let entry = |i: u32| (pat >> (8 * i)) & 0xff;
    kassert!(
        entry(1) == 0x01 && entry(5) == 0x01,
        "PA1/PA5 are {:#x}/{:#x}, not WC (01h); PAT {pat:#018x}",
        entry(1),
        entry(5)
    );
    // The entries the UC and WB mappings use keep their power-on values (table 11-12):
    // PA0 WB 06h, PA2 UC- 07h, PA3 UC 00h, and the same in PA4, PA6, PA7.
    for (i, want) in [(0, 0x06), (2, 0x07), (3, 0x00), (4, 0x06), (6, 0x07), (7, 0x00)] {
        kassert!(entry(i) == want, "PA{i} is {:#x}, power-on value {want:#x}; PAT {pat:#018x}", entry(i));
    }

    // A 4 KiB WC mapping: PWT=1 PCD=0 PAT(bit 7)=0 selects PA1.
    let small = paging::map_mmio(0xFEE0_0000, 0x1000, CacheType::WriteCombining).map_err(|e| alloc::format!("{e}"))?;
    let leaf = paging::leaf(small).ok_or("4 KiB WC mapping missing")?;
    kassert!(leaf.page_size == 4096, "4 KiB WC mapping uses {:#x} pages", leaf.page_size);
    let bits = leaf.entry & (PTE_PWT | PTE_PCD | PTE_PAT_4K);
    kassert!(bits == PTE_PWT, "4 KiB WC PTE {:#x}: PWT/PCD/PAT bits {bits:#x}, want PWT only", leaf.entry);

    // A 2 MiB WC mapping: PS=1, PWT=1 PCD=0 PAT(bit 12)=0 selects PA1; bit 12 is not address.
    let big = paging::map_mmio(0xC000_0000, 4 << 20, CacheType::WriteCombining).map_err(|e| alloc::format!("{e}"))?;
    let leaf = paging::leaf(big).ok_or("2 MiB WC mapping missing")?;
    kassert!(
        leaf.page_size == 2 << 20 && leaf.entry & PDE_PS != 0,
        "2 MiB WC mapping: entry {:#x} size {:#x}",
        leaf.entry,
        leaf.page_size
    );
    let bits = leaf.entry & (PTE_PWT | PTE_PCD | PDE_PAT_2M);
    kassert!(bits == PTE_PWT, "2 MiB WC PDE {:#x}: PWT/PCD/PAT bits {bits:#x}, want PWT only", leaf.entry);
    kassert!(
        leaf.phys(big + 0x1234) == 0xC000_1234,
        "2 MiB WC PDE {:#x} maps to {:#x}",
        leaf.entry,
        leaf.phys(big + 0x1234)
    );

    // UC stays PCD|PWT (PA3), at both sizes.
    let uc = paging::map_mmio(0xFEE0_0000, 0x1000, CacheType::Uncached).map_err(|e| alloc::format!("{e}"))?;
    let leaf = paging::leaf(uc).ok_or("UC mapping missing")?;
    kassert!(leaf.entry & (PTE_PWT | PTE_PCD | PTE_PAT_4K) == PTE_PWT | PTE_PCD, "4 KiB UC PTE {:#x}", leaf.entry);

    // The encoder puts the PAT bit where each page size keeps it (table 11-11: index =
    // PAT*4 + PCD*2 + PWT), and the decoder reads it back from there.
    for index in 0..8u8 {
        let want = |pat_bit: u64| {
            (if index & 1 != 0 { PTE_PWT } else { 0 })
                | (if index & 2 != 0 { PTE_PCD } else { 0 })
                | (if index & 4 != 0 { pat_bit } else { 0 })
        };
        kassert!(
            paging::cache_bits(index, 4096) == want(PTE_PAT_4K),
            "index {index} at 4 KiB: {:#x}",
            paging::cache_bits(index, 4096)
        );
        kassert!(
            paging::cache_bits(index, 2 << 20) == want(PDE_PAT_2M),
            "index {index} at 2 MiB: {:#x}",
            paging::cache_bits(index, 2 << 20)
        );
        kassert!(paging::pat_index(want(PTE_PAT_4K), 4096) == index, "4 KiB decode of index {index}");
        kassert!(paging::pat_index(want(PDE_PAT_2M) | PDE_PS, 2 << 20) == index, "2 MiB decode of index {index}");
    }
    Ok(())
});

ktest!(all_ram_is_mapped_at_the_offset, || {
    let info = crate::arch::handoff::layout();
    let (p, t, _) = paging::translate(PHYS_OFFSET + info.kernel_start).ok_or("kernel not at offset")?;
    kassert!(p == info.kernel_start && t == CacheType::WriteBack, "kernel maps to {p:#x} {t:?}");
    Ok(())
});

ktest!(heap_grows_from_the_frame_allocator, || {
    let before = heap::stats();
    let big: Vec<u8> = alloc::vec![0xA5; 24 << 20];
    let after = heap::stats();
    kassert!(after.size > before.size, "heap did not grow ({} -> {})", before.size, after.size);
    kassert!(big.iter().step_by(4096).all(|&b| b == 0xA5), "heap memory lost its contents");
    drop(big);
    Ok(())
});

static BREAKPOINTS: AtomicUsize = AtomicUsize::new(0);

ktest!(breakpoint_exception_returns_with_registers_and_sse_intact, || {
    idt::set_handler(3, |_| {
        BREAKPOINTS.fetch_add(1, Ordering::SeqCst);
    });
    let x = core::hint::black_box(1.5f64);
    let before = BREAKPOINTS.load(Ordering::SeqCst);
    let r = idt::breakpoint_keeping_r12(0x1234);
    idt::clear_handler(3);
    kassert!(BREAKPOINTS.load(Ordering::SeqCst) == before + 1, "handler not called");
    kassert!(idt::count(3) >= 1, "vector 3 not counted");
    kassert!(r == 0x1234, "r12 clobbered: {r:#x}");
    kassert!(core::hint::black_box(x) * 2.0 == 3.0, "SSE state lost");
    Ok(())
});

static IPIS: AtomicUsize = AtomicUsize::new(0);

ktest!(self_ipi_reaches_its_vector_through_the_local_apic, || {
    let v = apic::alloc_vectors(1).map_err(|_| "no vector")?;
    idt::set_handler(v, |_| {
        IPIS.fetch_add(1, Ordering::SeqCst);
    });
    for _ in 0..3 {
        apic::self_ipi(v);
    }
    let d = crate::time::Deadline::after_ms(1000);
    while IPIS.load(Ordering::SeqCst) < 3 && !d.expired() {
        // Not `hlt`: if the interrupt never comes, nothing would wake the CPU to see the
        // deadline pass.
        core::hint::spin_loop();
    }
    idt::clear_handler(v);
    apic::free_vectors(v, 1);
    kassert!(
        IPIS.load(Ordering::SeqCst) == 3,
        "timed out waiting for 3 self-IPIs, got {}",
        IPIS.load(Ordering::SeqCst)
    );
    Ok(())
});

static TICKS: AtomicUsize = AtomicUsize::new(0);

ktest!(local_apic_timer_ticks_periodically, || {
    let v = apic::alloc_vectors(1).map_err(|_| "no vector")?;
    idt::set_handler(v, |_| {
        TICKS.fetch_add(1, Ordering::SeqCst);
    });
    apic::timer_start(v, 100_000, true);
    let c0 = apic::timer_current();
    kassert!(c0 > 0 && c0 <= 100_000, "timer current count {c0} after start");
    let d = crate::time::Deadline::after_ms(2000);
    while TICKS.load(Ordering::SeqCst) < 5 && !d.expired() {
        // Not `hlt`: if the interrupt never comes, nothing would wake the CPU to see the
        // deadline pass.
        core::hint::spin_loop();
    }
    apic::timer_stop();
    idt::clear_handler(v);
    apic::free_vectors(v, 1);
    kassert!(
        TICKS.load(Ordering::SeqCst) >= 5,
        "timed out waiting for 5 timer ticks, got {}",
        TICKS.load(Ordering::SeqCst)
    );
    Ok(())
});

ktest!(msi_vectors_are_aligned_blocks, || {
    let a = apic::alloc_vectors(4).map_err(|_| "no vectors")?;
    let b = apic::alloc_vectors(8).map_err(|_| "no vectors")?;
    kassert!(a % 4 == 0 && b % 8 == 0, "unaligned blocks {a:#x} {b:#x}");
    kassert!(b >= a + 4 || b + 8 <= a, "blocks overlap");
    kassert!(apic::alloc_vectors(3).is_err(), "a non-power-of-two block was granted");
    let (addr, data) = apic::msi_message(a, apic::id());
    kassert!(addr & 0xFFF0_0000 == 0xFEE0_0000 && data == a as u32, "message {addr:#x}/{data:#x}");
    apic::free_vectors(a, 4);
    apic::free_vectors(b, 8);
    Ok(())
});

ktest!(clock_is_calibrated_and_monotonic, || {
    kassert!(crate::time::source().is_some(), "TSC never calibrated");
    let a = crate::time::nanos_since_entry();
    crate::time::sleep_ms(5);
    let b = crate::time::nanos_since_entry();
    kassert!(b > a, "clock went backwards");
    if let Some(h0) = crate::time::hpet_nanos() {
        crate::time::sleep_ms(5);
        let h1 = crate::time::hpet_nanos().unwrap_or(0);
        kassert!(h1 > h0, "HPET counter not running");
    }
    Ok(())
});

static PIT_IRQS: AtomicUsize = AtomicUsize::new(0);

ktest!(pit_irq0_arrives_through_the_io_apic_with_madt_overrides, || {
    let Some(d) = crate::platform_acpi::discovered() else {
        return Err("SKIP: booted without ACPI".into());
    };
    if d.madt().is_none() || crate::arch::ioapic::count() == 0 {
        return Err("SKIP: no MADT/I/O APIC on this machine (the boot falls back to one CPU, no legacy IRQs)".into());
    }
    let (gsi, _, _) = crate::platform_acpi::isa_irq_route(d, 0);
    let vector = crate::platform_acpi::route_isa_irq(d, 0).ok_or("cannot route ISA IRQ 0")?;
    idt::set_handler(vector, |_| {
        PIT_IRQS.fetch_add(1, Ordering::SeqCst);
    });
    // PIT channel 0, lobyte/hibyte, mode 2 (rate generator), ~1 kHz (Intel 8254 datasheet).
    let divisor: u16 = 1193;
    arch::port::outb(0x43, 0b0011_0100);
    arch::port::outb(0x40, divisor as u8);
    arch::port::outb(0x40, (divisor >> 8) as u8);
    let d2 = crate::time::Deadline::after_ms(2000);
    while PIT_IRQS.load(Ordering::SeqCst) < 10 && !d2.expired() {
        // Not `hlt`: if the interrupt never comes, nothing would wake the CPU to see the
        // deadline pass.
        core::hint::spin_loop();
    }
    let _ = crate::arch::ioapic::mask(gsi);
    idt::clear_handler(vector);
    apic::free_vectors(vector, 1);
    let n = PIT_IRQS.load(Ordering::SeqCst);
    kassert!(n >= 10, "timed out waiting for 10 PIT interrupts on GSI {gsi}, got {n}");
    Ok(())
});

static FAULT_ADDR: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

ktest!(page_fault_reports_cr2_and_a_handler_can_recover, || {
    idt::set_handler(14, |frame| {
        FAULT_ADDR.store(arch::read_cr2(), Ordering::SeqCst);
        frame.skip_probe_load();
    });
    let unmapped: u64 = 0xffff_9000_dead_0000;
    // The load faults; the handler above skips it.
    let probed = idt::probe_load(unmapped);
    idt::clear_handler(14);
    kassert!(probed == Some(0), "the probe of {unmapped:#x} returned {probed:?}");
    let cr2 = FAULT_ADDR.load(Ordering::SeqCst);
    kassert!(cr2 == unmapped, "CR2 {cr2:#x}, expected {unmapped:#x}");
    Ok(())
});

ktest!(every_vector_has_an_ist_stack, || {
    for v in 0..=255u8 {
        let ist = crate::arch::idt::gate_ist(v);
        kassert!((1..=7).contains(&ist), "vector {v} has IST {ist}");
    }
    Ok(())
});

// The harness states the machine's shape on the command line (`expect-cpus=N`,
// `expect-mem-mib=N`); these tests check that ACPI and the memory map agree with it.
ktest!(madt_cpu_count_matches_the_machine, || {
    let cmd = kernel::cmdline::CmdLine::parse(crate::boot_extras().cmdline());
    let Some(expected) = cmd.value("expect-cpus") else {
        return Err("SKIP: no expect-cpus= on the command line".into());
    };
    let expected: usize = expected.parse().map_err(|_| "expect-cpus is not a number")?;
    let d = crate::platform_acpi::discovered().ok_or("no ACPI information kept")?;
    let madt = d.madt().ok_or("no MADT")?;
    let usable = madt.cpus.iter().filter(|c| c.usable()).count();
    kassert!(usable == expected, "MADT lists {usable} usable CPUs, the machine has {expected}");
    Ok(())
});

ktest!(usable_memory_matches_the_machine, || {
    let cmd = kernel::cmdline::CmdLine::parse(crate::boot_extras().cmdline());
    let Some(expected) = cmd.value("expect-mem-mib") else {
        return Err("SKIP: no expect-mem-mib= on the command line".into());
    };
    let expected: u64 = expected.parse().map_err(|_| "expect-mem-mib is not a number")?;
    let total_mib = (frames::stats().total_frames * 4096) >> 20;
    // Firmware keeps a little (BIOS areas, ACPI, the loader); 90% of RAM must be usable.
    kassert!(
        total_mib <= expected && total_mib * 10 >= expected * 9,
        "{total_mib} MiB usable on a {expected} MiB machine"
    );
    Ok(())
});

/// `VER_REG` of a VT-d remapping unit: offset 0, major version in bits 7:4, minor in 3:0
/// (Intel VT-d Architecture Specification rev. 4.1, §11.4.1).
const VTD_VER_REG: u64 = 0x0;
/// The AMD IOMMU's extended feature register, MMIO offset 0x30.
const AMDVI_EFR: u64 = 0x30;

ktest!(acpi_names_the_machines_iommu_and_its_registers_answer, || {
    let cmd = kernel::cmdline::CmdLine::parse(crate::boot_extras().cmdline());
    let Some(expected) = cmd.value("expect-iommu") else {
        return Err("SKIP: no expect-iommu= on the command line".into());
    };
    let (kind, address) = expected.split_once('@').ok_or("expect-iommu takes vtd@0xADDRESS or amdvi@0xADDRESS")?;
    let base = u64::from_str_radix(address.trim_start_matches("0x"), 16).map_err(|_| "expect-iommu: bad address")?;
    let discovered = crate::platform_acpi::discovered().ok_or("no ACPI tables")?;
    if kind == "amdvi" {
        let ivrs = discovered.ivrs().ok_or("no IVRS was decoded")?;
        kassert!(ivrs.hardware.iter().any(|h| h.base_address == base), "no IVHD at {base:#x}: {ivrs}");
        // The IOMMU is there: its extended feature register (MMIO offset 0x30, AMD IOMMU
        // Specification 48882 §3.4.1 "MMIO Offset 0030h IOMMU Extended Feature Register")
        // reads a feature set, neither 0 nor all ones.
        let regs = crate::mem::mmio::Mmio::map(base, 0x4000).map_err(|e| alloc::format!("mapping the IOMMU: {e:?}"))?;
        let efr = u64::from(regs.read32(AMDVI_EFR).ok_or("EFR unreadable")?)
            | (u64::from(regs.read32(AMDVI_EFR + 4).ok_or("EFR unreadable")?) << 32);
        kassert!(efr != 0 && efr != u64::MAX, "EFR {efr:#x}");
        return Ok(());
    }
    kassert!(kind == "vtd", "expect-iommu: unknown kind {kind}");
    let dmar = discovered.dmar().ok_or("no DMAR was decoded")?;
    kassert!(dmar.units.iter().any(|u| u.register_base == base), "no remapping unit at {base:#x}: {dmar}");
    kassert!(dmar.address_bits() >= 39, "{}-bit DMA addresses", dmar.address_bits());
    // The unit is there: its version register reads a real version (1.0 or later).
    let regs = crate::mem::mmio::Mmio::map(base, 4096).map_err(|e| alloc::format!("mapping the unit: {e:?}"))?;
    let ver = regs.read32(VTD_VER_REG).ok_or("VER_REG unreadable")?;
    kassert!((ver >> 4) & 0xf >= 1 && ver != u32::MAX, "VER_REG {ver:#x}");
    Ok(())
});

ktest!(clock_source_is_the_one_the_machine_offers, || {
    let cmd = kernel::cmdline::CmdLine::parse(crate::boot_extras().cmdline());
    let Some(expected) = cmd.value("expect-clock") else {
        return Err("SKIP: no expect-clock= on the command line".into());
    };
    let got = match crate::time::source() {
        Some(crate::time::Calibration::Hpet) => "hpet",
        Some(crate::time::Calibration::Pit) => "pit",
        None => "none",
    };
    kassert!(got == expected, "TSC calibrated against {got}, expected {expected}");
    // Whatever the source, 100 ms of PIT-or-HPET time must be 100 ms of TSC time within 10%:
    // cross-check against the other clock when there is one.
    if let Some(h0) = crate::time::hpet_nanos() {
        let t0 = crate::time::nanos_since_entry();
        crate::time::sleep_ms(50);
        let (h1, t1) = (crate::time::hpet_nanos().unwrap_or(0), crate::time::nanos_since_entry());
        let (dh, dt) = (h1.saturating_sub(h0), t1.saturating_sub(t0));
        kassert!(dh * 10 >= dt * 9 && dh * 10 <= dt * 11, "TSC says {dt} ns, HPET says {dh} ns");
    }
    Ok(())
});

ktest!(apic_mode_is_the_one_the_cpu_offers, || {
    let cmd = kernel::cmdline::CmdLine::parse(crate::boot_extras().cmdline());
    let Some(expected) = cmd.value("expect-apic") else {
        return Err("SKIP: no expect-apic= on the command line".into());
    };
    let got = match apic::mode() {
        Some(apic::ApicMode::X2Apic) => "x2apic",
        Some(apic::ApicMode::XApic) => "xapic",
        None => "none",
    };
    kassert!(got == expected, "local APIC in {got} mode, expected {expected}");
    Ok(())
});

ktest!(managed_memory_pages_arrive_through_the_page_fault_handler, || {
    const MB2: u64 = 2 << 20;
    let va = crate::managed::alloc(MB2 + 3 * 4096)?;
    let before = crate::managed::stats().map_or(0, |s| s.cpu_faults);
    let pages_before = crate::managed::cpu_resident_pages();
    // Both words are inside the managed range just allocated; each first touch page-faults and
    // the managed-memory service maps a zeroed page before the access resumes.
    let (a, b) = (va, va + MB2 + 8);
    let word = |va: u64| managed_window::read_u64(va).map_err(|e| alloc::format!("{e}"));
    let (first_a, first_b) = (word(a)?, word(b)?);
    kassert!(first_a == 0 && first_b == 0, "first touches read {first_a:#x} {first_b:#x}, not zero-filled pages");
    managed_window::write_u64(a, 0x1234_5678_9abc_def0).map_err(|e| alloc::format!("{e}"))?;
    managed_window::write_u64(b, !0x1234).map_err(|e| alloc::format!("{e}"))?;
    let (ra, rb) = (word(a)?, word(b)?);
    kassert!(ra == 0x1234_5678_9abc_def0 && rb == !0x1234, "read back {ra:#x} {rb:#x}");
    let faults = crate::managed::stats().map_or(0, |s| s.cpu_faults) - before;
    kassert!(faults == 2, "{faults} CPU faults for two pages (one each, then mapped read-write)");
    let pages = crate::managed::cpu_resident_pages() - pages_before;
    kassert!(pages == 2, "{pages} managed pages resident on the CPU, expected 2");
    // A fault past the range is not the service's: it still reaches an installed handler.
    idt::set_handler(14, |frame| {
        FAULT_ADDR.store(arch::read_cr2(), Ordering::SeqCst);
        frame.skip_probe_load();
    });
    let past = va + MB2 + 3 * 4096 + 4096 * 1024;
    // The load faults (no managed range there); the handler above skips it.
    let probed = idt::probe_load(past);
    idt::clear_handler(14);
    kassert!(probed == Some(0), "the probe of {past:#x} returned {probed:?}");
    kassert!(FAULT_ADDR.load(Ordering::SeqCst) == past, "the fault past the range reached the handler");
    Ok(())
});
