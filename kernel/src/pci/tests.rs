//! Host tests: enumeration, sizing, capability decoding, malformed lists, logging and
//! programming, against a fake machine with realistic functions (Q35 chipset functions, an NVMe
//! drive behind a root port, an H100 behind a second root complex at bus 0x80).

use std::string::String;
use std::vec::Vec;

use super::fake::{FakeConfig, FakeFunction};
use super::*;

fn addr(bus: u8, device: u8, function: u8) -> PciAddress {
    PciAddress::new(0, bus, device, function)
}

const HOST: (u8, u8, u8) = (0x00, 0x00, 0);
const VGA: (u8, u8, u8) = (0x00, 0x01, 0);
const CAP_LOOP: (u8, u8, u8) = (0x00, 0x05, 0);
const CAP_IN_HEADER: (u8, u8, u8) = (0x00, 0x06, 0);
const CAP_PAST_END: (u8, u8, u8) = (0x00, 0x07, 0);
const ECAP_BAD: (u8, u8, u8) = (0x00, 0x08, 0);
const ECAP_ALIAS: (u8, u8, u8) = (0x00, 0x09, 0);
const UNKNOWN_HEADER: (u8, u8, u8) = (0x00, 0x0a, 0);
const ROOT_PORT: (u8, u8, u8) = (0x00, 0x1c, 0);
const ROOT_PORT_UNUSED: (u8, u8, u8) = (0x00, 0x1c, 1);
const LPC: (u8, u8, u8) = (0x00, 0x1f, 0);
const SATA: (u8, u8, u8) = (0x00, 0x1f, 2);
const SMBUS: (u8, u8, u8) = (0x00, 0x1f, 3);
const NVME: (u8, u8, u8) = (0x01, 0x00, 0);
const SOCKET1_HOST: (u8, u8, u8) = (0x80, 0x00, 0);
const SOCKET1_PORT: (u8, u8, u8) = (0x80, 0x01, 0);
const GPU: (u8, u8, u8) = (0x81, 0x00, 0);

fn at(location: (u8, u8, u8)) -> PciAddress {
    addr(location.0, location.1, location.2)
}

/// The machine: a Q35-like bus 0 with a root port to an NVMe drive on bus 1, malformed
/// functions, and a second root complex at bus 0x80 (nothing on bus 0 leads there) with an
/// H100 behind its root port on bus 0x81.
fn machine(extended: bool) -> FakeConfig {
    let m = FakeConfig::new(extended);

    // Host bridge (82G33 DRAM controller): decode must not be touched.
    let mut f = FakeFunction::new(0x8086, 0x29c0, 0x060000, 0x02, 0);
    f.command(0x0006).subsystem(0x1af4, 0x1100);
    m.add(at(HOST), f);

    // Standard VGA, single function. Functions 1..7 alias function 0 as some real devices do;
    // they must never be probed.
    let mut f = FakeFunction::new(0x1234, 0x1111, 0x030000, 0x02, 0);
    f.command(0x0003)
        .subsystem(0x1af4, 0x1100)
        .mem32_bar(0, 0xfd00_0000, 0x100_0000, true)
        .mem32_bar(2, 0xfebd_4000, 0x1000, false)
        .rom(0x30, 0xfebc_0000, 0x1_0000, false);
    for function in 1..8 {
        m.add(addr(0, 1, function), f.clone());
    }
    m.add(at(VGA), f);

    // Capability loop 0x40 -> 0x50 -> 0x40, reserved BAR type, 64-bit BAR in slot 5, and an
    // extended list looping 0x100 -> 0x140 -> 0x100.
    let mut f = FakeFunction::new(0x1af4, 0x1041, 0x020000, 0x01, 0);
    f.command(0x0002)
        .set32(0x10, 0x0000_0006)
        .mem32_bar(1, 0xfeb0_0000, 0x1000, false)
        .set32(0x24, 0x0000_0004)
        .cap_pointer(0x40)
        .pcie(0x40, 0x80, 0, Some((1, 1, 1, 1)))
        .cap(0x80, 0x09, 0x40, 0)
        .ecap(0x100, 0x0001, 2, 0x140)
        .ecap(0x140, 0x000b, 1, 0x100);
    m.add(at(CAP_LOOP), f);

    // The second capability's next pointer points into the header.
    let mut f = FakeFunction::new(0x1af4, 0x1042, 0x010000, 0x01, 0);
    f.cap_pointer(0x40).pm(0x40, 0x48, 0x0003, 0).cap(0x48, 0x09, 0x10, 0);
    m.add(at(CAP_IN_HEADER), f);

    // Pointer with reserved low bits set (0x43 means 0x40), then an MSI-X capability at 0xf8
    // whose 12 bytes run past 0xff.
    let mut f = FakeFunction::new(0x1af4, 0x1043, 0x078000, 0x01, 0);
    f.cap_pointer(0x43).cap(0x40, 0x09, 0xf8, 0).msix(0xf8, 0, 4, (1, 0), (1, 0x800));
    m.add(at(CAP_PAST_END), f);

    // Extended pointer below 0x100; MSI-X table in a BAR that does not exist.
    let mut f = FakeFunction::new(0x1af4, 0x1044, 0x0c0330, 0x01, 0);
    f.mem32_bar(0, 0xfeb1_0000, 0x4000, false)
        .cap_pointer(0x40)
        .pcie(0x40, 0x80, 0, Some((2, 1, 2, 1)))
        .msix(0x80, 0, 8, (2, 0), (0, 0x2000))
        .ecap(0x100, 0x0003, 1, 0x0f0);
    m.add(at(ECAP_BAD), f);

    // Extended space aliases conventional space (0x100 reads what 0x000 reads).
    let mut f = FakeFunction::new(0x1af4, 0x1045, 0x00ff00, 0x01, 0);
    f.cap_pointer(0x40).pcie(0x40, 0, 9, None);
    let id = f.get32(0);
    f.set32(0x100, id);
    m.add(at(ECAP_ALIAS), f);

    // Header type 0x03: identity only, nothing written.
    let mut f = FakeFunction::new(0x1af4, 0x1046, 0xff0000, 0x00, 0x03);
    f.command(0x0003).set32(0x10, 0xfe00_0000);
    m.add(at(UNKNOWN_HEADER), f);

    // ICH9 root port 1: type 1, multi-function, one BAR; bus 0 -> 1; I/O and memory windows
    // open, prefetchable window closed (base > limit).
    let mut f = FakeFunction::new(0x8086, 0x2940, 0x060400, 0x02, 1);
    f.multi_function()
        .command(0x0007)
        .mem32_bar(0, 0xfea0_0000, 0x1000, false)
        .buses(0x00, 0x01, 0x01)
        .set8(0x1c, 0xe0)
        .set8(0x1d, 0xe0)
        .set32(0x20, 0xfe70_fe60)
        .set32(0x24, 0x0001_fff1)
        .interrupt(10, 1)
        .cap_pointer(0x40)
        .pcie(0x40, 0x80, 4, Some((3, 4, 3, 4)))
        .msi(0x80, 0x90, false, false, 0)
        .cap(0x90, 0x0d, 0xa0, 0)
        .set32(0x94, 0x0000_8086)
        .pm(0xa0, 0, 0x0602, 0)
        .ecap(0x100, 0x0001, 1, 0x140)
        .ecap(0x140, 0x000d, 1, 0);
    m.add(at(ROOT_PORT), f);

    // Root port 2: present, never configured by firmware (bus numbers zero).
    let mut f = FakeFunction::new(0x8086, 0x2942, 0x060400, 0x02, 1);
    f.cap_pointer(0x40).pcie(0x40, 0, 4, Some((3, 1, 1, 0)));
    m.add(at(ROOT_PORT_UNUSED), f);

    // ICH9 LPC (function 0, multi-function), AHCI, SMBus.
    let mut f = FakeFunction::new(0x8086, 0x2918, 0x060100, 0x02, 0);
    f.multi_function().command(0x0007).subsystem(0x1af4, 0x1100);
    m.add(at(LPC), f);

    let mut f = FakeFunction::new(0x8086, 0x2922, 0x010601, 0x02, 0);
    f.multi_function()
        .command(0x0007)
        .subsystem(0x1af4, 0x1100)
        .io_bar(4, 0xc040, 0x20)
        .mem32_bar(5, 0xfebd_5000, 0x1000, false)
        .interrupt(10, 1)
        .cap_pointer(0x80)
        .msi(0x80, 0xa8, true, false, 0)
        .cap(0xa8, 0x12, 0, 0x0010);
    m.add(at(SATA), f);

    let mut f = FakeFunction::new(0x8086, 0x2930, 0x0c0500, 0x02, 0);
    f.multi_function().command(0x0001).io16_bar(4, 0x0700, 0x40).interrupt(10, 1);
    m.add(at(SMBUS), f);

    // NVMe drive (Samsung PM9A1) on bus 1: mem64 BAR0, PM, MSI (64-bit, maskable, 32 vectors),
    // PCIe endpoint Gen3 x4, MSI-X 33 entries in BAR0; AER, DSN, power budget, secondary PCIe,
    // LTR, L1 PM substates.
    let mut f = FakeFunction::new(0x144d, 0xa808, 0x010802, 0x00, 0);
    f.command(0x0006)
        .subsystem(0x144d, 0xa801)
        .mem64_bar(0, 0xfe60_0000, 0x4000, false)
        .interrupt(11, 1)
        .cap_pointer(0x40)
        .pm(0x40, 0x50, 0x0003, 0x0008)
        .msi(0x50, 0x70, true, true, 5)
        .pcie(0x70, 0xb0, 0, Some((3, 4, 3, 4)))
        .msix(0xb0, 0, 33, (0, 0x3000), (0, 0x2000))
        .ecap(0x100, 0x0001, 2, 0x148)
        .ecap(0x148, 0x0003, 1, 0x158)
        .ecap(0x158, 0x0004, 1, 0x168)
        .ecap(0x168, 0x0019, 1, 0x188)
        .ecap(0x188, 0x0018, 1, 0x190)
        .ecap(0x190, 0x001e, 1, 0);
    m.add(at(NVME), f);

    // Socket 1: a host bridge function that is not class 06/00 (decode is toggled) and a
    // Gen4 x16 root port forwarding bus 0x81 and the GPU's windows.
    let mut f = FakeFunction::new(0x8086, 0x09a2, 0x088000, 0x04, 0);
    f.command(0x0000);
    m.add(at(SOCKET1_HOST), f);

    let mut f = FakeFunction::new(0x8086, 0x347a, 0x060400, 0x04, 1);
    f.command(0x0007)
        .buses(0x80, 0x81, 0x81)
        .set8(0x1c, 0xf0)
        .set8(0x1d, 0x00)
        .set32(0x20, 0xfb00_fa00)
        .set32(0x24, 0x01f1_0001)
        .set32(0x28, 0x0000_2000)
        .set32(0x2c, 0x0000_2010)
        .cap_pointer(0x40)
        .pcie(0x40, 0, 4, Some((4, 16, 4, 16)));
    m.add(at(SOCKET1_PORT), f);

    // H100 SXM5: BAR0 16 MiB registers, BAR1 64 GiB prefetchable (larger than 4 GiB: the
    // low dword sizes to zero), BAR3 32 MiB prefetchable, 512 KiB ROM.
    let mut f = FakeFunction::new(0x10de, 0x2330, 0x030200, 0xa1, 0);
    f.command(0x0002)
        .subsystem(0x10de, 0x16c1)
        .mem32_bar(0, 0xfa00_0000, 0x100_0000, false)
        .mem64_bar(1, 0x2000_0000_0000, 0x10_0000_0000, true)
        .mem64_bar(3, 0x2010_0000_0000, 0x200_0000, true)
        .rom(0x30, 0xfb00_0000, 0x8_0000, false)
        .interrupt(0xff, 1)
        .cap_pointer(0x60)
        .pm(0x60, 0x68, 0x0003, 0x0008)
        .msi(0x68, 0x78, true, true, 4)
        .pcie(0x78, 0xb4, 0, Some((5, 16, 5, 16)))
        .cap(0xb4, 0x09, 0xc8, 0x0014)
        .msix(0xc8, 0, 9, (0, 0xb9_0000), (0, 0xba_0000))
        .ecap(0x100, 0x0002, 1, 0x258)
        .ecap(0x258, 0x001e, 1, 0x128)
        .ecap(0x128, 0x0004, 1, 0x420)
        .ecap(0x420, 0x0001, 2, 0x600)
        .ecap(0x600, 0x000b, 1, 0x900)
        .ecap(0x900, 0x0019, 1, 0xbb0)
        .ecap(0xbb0, 0x0015, 1, 0xc1c)
        .ecap(0xc1c, 0x0026, 1, 0xd00)
        .ecap(0xd00, 0x002a, 1, 0);
    m.add(at(GPU), f);

    m
}

fn find(functions: &[PciFunction], location: (u8, u8, u8)) -> &PciFunction {
    let wanted = at(location);
    functions.iter().find(|f| f.address == wanted).unwrap_or_else(|| panic!("{wanted} not enumerated"))
}

fn ecam() -> (FakeConfig, Vec<PciFunction>) {
    let m = machine(true);
    let functions = enumerate(&m, &[RootRange::new(0, 0, 0xff)]);
    (m, functions)
}

#[test]
fn pci_enumerates_every_bus_in_scan_order() {
    let (_, functions) = ecam();
    let found: Vec<PciAddress> = functions.iter().map(|f| f.address).collect();
    let expected: Vec<PciAddress> = [
        HOST,
        VGA,
        CAP_LOOP,
        CAP_IN_HEADER,
        CAP_PAST_END,
        ECAP_BAD,
        ECAP_ALIAS,
        UNKNOWN_HEADER,
        ROOT_PORT,
        ROOT_PORT_UNUSED,
        LPC,
        SATA,
        SMBUS,
        NVME,
        SOCKET1_HOST,
        SOCKET1_PORT,
        GPU,
    ]
    .into_iter()
    .map(at)
    .collect();
    assert_eq!(found, expected);
}

#[test]
fn pci_single_function_device_functions_1_to_7_never_probed() {
    let (m, functions) = ecam();
    let touched = m.touched.borrow();
    for function in 1..8 {
        assert!(!touched.contains(&addr(0, 1, function)), "00:01.{function} was read");
        assert!(functions.iter().all(|f| f.address != addr(0, 1, function)));
    }
    assert!(!find(&functions, VGA).multi_function);
    assert!(find(&functions, LPC).multi_function);
    // Functions 1, 4..7 of the multi-function ICH9 device were looked at and found absent.
    assert!(touched.contains(&addr(0, 0x1f, 7)));
}

#[test]
fn pci_second_root_complex_found_and_topology_linked() {
    let (_, functions) = ecam();
    assert_eq!(find(&functions, NVME).parent, Some(at(ROOT_PORT)));
    assert_eq!(find(&functions, GPU).parent, Some(at(SOCKET1_PORT)));
    assert_eq!(find(&functions, SOCKET1_PORT).parent, None);
    assert_eq!(find(&functions, SOCKET1_HOST).parent, None);
    assert_eq!(find(&functions, ROOT_PORT).parent, None);

    let port = find(&functions, SOCKET1_PORT).bridge.expect("type 1 header");
    assert_eq!((port.primary_bus, port.secondary_bus, port.subordinate_bus), (0x80, 0x81, 0x81));
    assert!(port.forwards(0x81) && !port.forwards(0x82));
    assert_eq!(port.io_window, None, "closed: base 0xf000 > limit 0x0fff");
    assert_eq!(port.memory_window, Some(Window { base: 0xfa00_0000, limit: 0xfb0f_ffff }));
    assert!(port.prefetchable_64bit);
    assert_eq!(port.prefetchable_window, Some(Window { base: 0x2000_0000_0000, limit: 0x2010_01ff_ffff }));

    let port = find(&functions, ROOT_PORT).bridge.expect("type 1 header");
    assert_eq!(port.io_window, Some(Window { base: 0xe000, limit: 0xefff }));
    assert_eq!(port.memory_window, Some(Window { base: 0xfe60_0000, limit: 0xfe7f_ffff }));
    assert_eq!(port.prefetchable_window, None);
    assert!(find(&functions, ROOT_PORT).warnings.is_empty());
    assert!(find(&functions, ROOT_PORT_UNUSED).warnings.is_empty());
}

#[test]
fn pci_split_and_overlapping_ranges_scan_each_bus_once() {
    let (_, whole) = ecam();
    let m = machine(true);
    let roots = [RootRange::new(0, 0x80, 0xff), RootRange::new(0, 0x00, 0x7f), RootRange::new(0, 0x70, 0x90)];
    let split = enumerate(&m, &roots);
    let mut split: Vec<PciAddress> = split.iter().map(|f| f.address).collect();
    split.sort();
    let whole: Vec<PciAddress> = whole.iter().map(|f| f.address).collect();
    assert_eq!(split, whole);

    // An MCFG range that stops at bus 0 leaves what is behind the root port unseen: say so.
    let m = machine(true);
    let functions = enumerate(&m, &[RootRange::new(0, 0, 0)]);
    assert!(functions.iter().all(|f| f.address.bus() == 0));
    assert_eq!(find(&functions, ROOT_PORT).warnings, vec![Warning::BridgeOutsideRoots { secondary: 1 }]);
    // Another segment's range reaches nothing here.
    assert!(enumerate(&machine(true), &[RootRange::new(1, 0, 0xff)]).is_empty());
}

#[test]
fn pci_identity_and_interrupt_fields() {
    let (_, functions) = ecam();
    let sata = find(&functions, SATA);
    assert_eq!((sata.vendor_id, sata.device_id), (0x8086, 0x2922));
    assert_eq!((sata.class, sata.subclass, sata.prog_if, sata.revision), (0x01, 0x06, 0x01, 0x02));
    assert_eq!(sata.class_code(), 0x010601);
    assert_eq!(sata.header_type, HeaderType::Endpoint);
    assert_eq!(sata.subsystem, Some(Subsystem { vendor_id: 0x1af4, device_id: 0x1100 }));
    assert_eq!((sata.interrupt_line, sata.interrupt_pin), (10, 1));

    let port = find(&functions, ROOT_PORT);
    assert_eq!(port.header_type, HeaderType::PciPciBridge);
    // A bridge's subsystem IDs come from capability 0x0D.
    assert_eq!(port.subsystem, Some(Subsystem { vendor_id: 0x8086, device_id: 0 }));

    let gpu = find(&functions, GPU);
    assert_eq!((gpu.vendor_id, gpu.device_id, gpu.class_code(), gpu.revision), (0x10de, 0x2330, 0x030200, 0xa1));
    assert_eq!(gpu.subsystem, Some(Subsystem { vendor_id: 0x10de, device_id: 0x16c1 }));
}

#[test]
fn memory_bars_are_numbered_as_nvidia_numbers_them() {
    let (_, functions) = ecam();
    let gpu = find(&functions, GPU);
    let slots: Vec<(u8, BarKind, bool, u64)> =
        (0..4).filter_map(|n| gpu.memory_bar(n)).map(|b| (b.index, b.kind, b.prefetchable, b.size)).collect();
    // BAR0 registers, BAR1 VRAM aperture (slots 1-2), BAR2 (NVIDIA's name; PCI slots 3-4).
    assert_eq!(
        slots,
        [
            (0, BarKind::Mem32, false, 0x100_0000),
            (1, BarKind::Mem64, true, 0x10_0000_0000),
            (3, BarKind::Mem64, true, 0x200_0000),
        ]
    );
    // I/O BARs are not counted: the SATA controller's only memory BAR is in slot 5.
    let sata = find(&functions, SATA);
    assert_eq!(sata.memory_bar(0).map(|b| b.index), Some(5));
    assert_eq!(sata.memory_bar(1), None);
}

#[test]
fn pci_bars_of_every_kind_are_sized() {
    let (_, functions) = ecam();
    let bar = |io: bool, kind, index, prefetchable, address, size| {
        let _ = io;
        Some(Bar { index, kind, prefetchable, address, size })
    };

    let sata = find(&functions, SATA);
    assert_eq!(sata.bars[4], bar(true, BarKind::Io, 4, false, 0xc040, 0x20));
    assert_eq!(sata.bars[5], bar(false, BarKind::Mem32, 5, false, 0xfebd_5000, 0x1000));
    assert_eq!(sata.bars[..4], [None; 4]);

    // 16-bit I/O decoder: upper half of the read-back is zero.
    assert_eq!(find(&functions, SMBUS).bars[4], bar(true, BarKind::Io, 4, false, 0x700, 0x40));

    let vga = find(&functions, VGA);
    assert_eq!(vga.bars[0], bar(false, BarKind::Mem32, 0, true, 0xfd00_0000, 0x100_0000));
    assert_eq!(vga.bars[2], bar(false, BarKind::Mem32, 2, false, 0xfebd_4000, 0x1000));
    assert_eq!(vga.rom, Some(RomBar { address: 0xfebc_0000, size: 0x1_0000, enabled: false }));

    let nvme = find(&functions, NVME);
    assert_eq!(nvme.bars[0], bar(false, BarKind::Mem64, 0, false, 0xfe60_0000, 0x4000));
    assert_eq!(nvme.bars[1], None, "upper half of a 64-bit BAR");

    let gpu = find(&functions, GPU);
    assert_eq!(gpu.bars[0], bar(false, BarKind::Mem32, 0, false, 0xfa00_0000, 0x100_0000));
    assert_eq!(gpu.bars[1], bar(false, BarKind::Mem64, 1, true, 0x2000_0000_0000, 0x10_0000_0000));
    assert_eq!(gpu.bars[2], None);
    assert_eq!(gpu.bars[3], bar(false, BarKind::Mem64, 3, true, 0x2010_0000_0000, 0x200_0000));
    assert_eq!(gpu.rom, Some(RomBar { address: 0xfb00_0000, size: 0x8_0000, enabled: false }));

    // Type 1: two BAR slots; the bus-number dword at 0x18 is not a BAR.
    let port = find(&functions, ROOT_PORT);
    assert_eq!(port.bars[0], bar(false, BarKind::Mem32, 0, false, 0xfea0_0000, 0x1000));
    assert!(port.bars[1..].iter().all(Option::is_none));
}

#[test]
fn pci_sizing_disables_decode_and_leaves_config_space_as_found() {
    let m = machine(true);
    let before = m.snapshot();
    let functions = enumerate(&m, &[RootRange::new(0, 0, 0xff)]);
    assert!(!functions.is_empty());
    assert_eq!(*m.violations.borrow(), Vec::<String>::new(), "BAR written with decode on");
    assert_eq!(m.snapshot(), before, "enumeration changed config space");

    // AHCI had I/O + memory + bus master on: cleared to bus master only, then restored.
    let commands: Vec<u32> = m.writes_to(at(SATA)).into_iter().filter(|w| w.0 == 0x04).map(|w| w.1).collect();
    assert_eq!(commands, vec![0x0004, 0x0007]);
    // Host bridge: decode never touched.
    assert!(m.writes_to(at(HOST)).iter().all(|w| w.0 != 0x04));
    // Bridges: nothing written at or past 0x18 (bus numbers, windows).
    assert!(m.writes_to(at(ROOT_PORT)).iter().all(|w| w.0 < 0x18 || w.0 == 0x38 || w.0 == 0x04));
    // Unknown header type and reserved BAR type: not written at all / not at that BAR.
    assert!(m.writes_to(at(UNKNOWN_HEADER)).is_empty());
    assert!(m.writes_to(at(CAP_LOOP)).iter().all(|w| w.0 != 0x10 && w.0 != 0x24));
}

#[test]
fn pci_capabilities_decoded() {
    let (_, functions) = ecam();
    let nvme = find(&functions, NVME);
    let ids: Vec<(u8, u8, &str)> = nvme.capabilities.iter().map(|c| (c.id, c.offset, c.name)).collect();
    assert_eq!(ids, vec![(0x01, 0x40, "pm"), (0x05, 0x50, "msi"), (0x10, 0x70, "pcie"), (0x11, 0xb0, "msi-x")]);

    let msi = nvme.msi.expect("msi");
    assert!(msi.is_64bit && msi.per_vector_masking && !msi.enabled);
    assert_eq!((msi.vectors_capable(), msi.vectors_enabled()), (32, 1));
    assert_eq!((msi.data_offset(), msi.mask_offset(), msi.pending_offset()), (0x5c, Some(0x60), Some(0x64)));

    let msix = nvme.msix.expect("msi-x");
    assert_eq!(
        msix,
        Msix {
            offset: 0xb0,
            table_size: 33,
            table_bir: 0,
            table_offset: 0x3000,
            pba_bir: 0,
            pba_offset: 0x2000,
            enabled: false,
            function_mask: false,
        }
    );

    let pcie = nvme.pcie.expect("pcie");
    assert_eq!((pcie.version, pcie.device_type, pcie.slot_implemented), (2, PcieDeviceType::Endpoint, false));
    assert_eq!(pcie.link, Some(PcieLink { max_speed: LinkSpeed::Gt8, max_width: 4, speed: LinkSpeed::Gt8, width: 4 }));

    let pm = nvme.power.expect("pm");
    assert_eq!((pm.version, pm.d1, pm.d2, pm.state, pm.no_soft_reset), (3, false, false, PowerState::D0, true));

    // 32-bit MSI on the root port: data at cap + 8, no mask register.
    let port = find(&functions, ROOT_PORT);
    let msi = port.msi.expect("msi");
    assert!(!msi.is_64bit && !msi.per_vector_masking);
    assert_eq!((msi.address_high_offset(), msi.data_offset(), msi.mask_offset()), (None, 0x88, None));
    assert_eq!(port.pcie.map(|p| (p.device_type, p.slot_implemented)), Some((PcieDeviceType::RootPort, true)));
    let pm = port.power.expect("pm");
    assert!(pm.d1 && pm.d2 && pm.supports(PowerState::D2));

    // Root-complex-integrated endpoint: no link.
    assert_eq!(
        find(&functions, ECAP_ALIAS).pcie.map(|p| (p.device_type, p.link)),
        Some((PcieDeviceType::RootComplexIntegratedEndpoint, None))
    );

    let gpu = find(&functions, GPU);
    assert_eq!(gpu.pcie.and_then(|p| p.link).map(|l| (l.speed, l.width)), Some((LinkSpeed::Gt32, 16)));
    assert_eq!(gpu.msi.map(|m| m.vectors_capable()), Some(16));
    assert_eq!(gpu.msix.map(|m| (m.table_size, m.table_offset, m.pba_offset)), Some((9, 0xb9_0000, 0xba_0000)));
    assert!(gpu.warnings.is_empty(), "{:?}", gpu.warnings);
}

#[test]
fn pci_extended_capabilities_only_where_reachable() {
    let (_, functions) = ecam();
    let nvme = find(&functions, NVME);
    let ecaps: Vec<(u16, u8, u16, &str)> =
        nvme.extended_capabilities.iter().map(|c| (c.id, c.version, c.offset, c.name)).collect();
    assert_eq!(
        ecaps,
        vec![
            (0x0001, 2, 0x100, "aer"),
            (0x0003, 1, 0x148, "dsn"),
            (0x0004, 1, 0x158, "power-budget"),
            (0x0019, 1, 0x168, "secondary-pcie"),
            (0x0018, 1, 0x188, "ltr"),
            (0x001e, 1, 0x190, "l1pm"),
        ]
    );
    assert_eq!(find(&functions, GPU).extended_capabilities.len(), 9);
    assert!(find(&functions, GPU).extended_capability(0x0015).is_some());
    // Conventional functions and aliasing functions: none.
    assert!(find(&functions, SATA).extended_capabilities.is_empty());
    assert!(find(&functions, ECAP_ALIAS).extended_capabilities.is_empty());
    assert!(find(&functions, ECAP_ALIAS).warnings.is_empty());

    // Ports 0xCF8/0xCFC: extended space is never read, and nothing else changes.
    let m = machine(false);
    let ported = enumerate(&m, &[RootRange::legacy_ports()]);
    assert_eq!(*m.extended_reads.borrow(), 0);
    assert!(ported.iter().all(|f| f.extended_capabilities.is_empty()));
    assert_eq!(ported.len(), functions.len());
    assert_eq!(find(&ported, GPU).bars, find(&functions, GPU).bars);
    assert_eq!(find(&ported, NVME).msix, find(&functions, NVME).msix);
}

#[test]
fn pci_malformed_lists_are_bounded_and_reported() {
    let (_, functions) = ecam();

    let looped = find(&functions, CAP_LOOP);
    assert_eq!(looped.capabilities.iter().map(|c| c.offset).collect::<Vec<_>>(), vec![0x40, 0x80]);
    assert!(looped.pcie.is_some());
    assert_eq!(looped.extended_capabilities.iter().map(|c| c.offset).collect::<Vec<_>>(), vec![0x100, 0x140]);
    assert_eq!(
        looped.warnings,
        vec![
            Warning::ReservedBarType { index: 0, raw: 0x6 },
            Warning::Bar64InLastSlot { index: 5 },
            Warning::CapabilityLoop { at: 0x81, pointer: 0x40 },
            Warning::ExtendedCapabilityLoop { at: 0x140, pointer: 0x100 },
        ]
    );
    assert_eq!(looped.bars[1].map(|b| b.size), Some(0x1000), "sizing went on past the bad BAR");

    let header = find(&functions, CAP_IN_HEADER);
    assert_eq!(header.capabilities.len(), 2);
    assert!(header.power.is_some());
    assert_eq!(header.warnings, vec![Warning::CapabilityPointerInHeader { at: 0x49, pointer: 0x10 }]);

    let past = find(&functions, CAP_PAST_END);
    assert_eq!(past.capabilities.iter().map(|c| c.offset).collect::<Vec<_>>(), vec![0x40, 0xf8]);
    assert_eq!(past.msix, None);
    assert_eq!(past.warnings, vec![Warning::CapabilityPastEnd { id: 0x11, offset: 0xf8, len: 12 }]);

    let ecap = find(&functions, ECAP_BAD);
    assert_eq!(ecap.extended_capabilities.len(), 1);
    assert_eq!(
        ecap.warnings,
        vec![
            Warning::ExtendedPointerInvalid { at: 0x100, pointer: 0x0f0 },
            Warning::MsixOutsideBar { what: MsixStructure::Table, bir: 2, offset: 0 },
        ]
    );

    let unknown = find(&functions, UNKNOWN_HEADER);
    assert_eq!(unknown.warnings, vec![Warning::UnknownHeaderType(0x03)]);
    assert!(unknown.bars.iter().all(Option::is_none) && unknown.capabilities.is_empty());
}

#[test]
fn pci_cap_pointer_into_header_at_0x34() {
    let m = FakeConfig::new(true);
    let mut f = FakeFunction::new(0x1af4, 0x1000, 0x020000, 0, 0);
    f.cap_pointer(0x20);
    m.add(addr(0, 3, 0), f);
    let functions = enumerate(&m, &[RootRange::new(0, 0, 0)]);
    assert_eq!(functions[0].warnings, vec![Warning::CapabilityPointerInHeader { at: 0x34, pointer: 0x20 }]);
    assert!(functions[0].capabilities.is_empty());
}

#[test]
fn pci_a_list_that_is_one_capability_pointing_at_itself() {
    let m = FakeConfig::new(true);
    let mut f = FakeFunction::new(0x1af4, 0x1000, 0x020000, 0, 0);
    f.cap_pointer(0xfc).cap(0xfc, 0x09, 0xff, 0).set32(0x100, 0x1000_0001);
    m.add(addr(0, 3, 0), f);
    let functions = enumerate(&m, &[RootRange::new(0, 0, 0)]);
    assert_eq!(functions[0].capabilities.len(), 1);
    assert_eq!(functions[0].warnings, vec![Warning::CapabilityLoop { at: 0xfd, pointer: 0xff }]);
}

/// Random config spaces: enumeration terminates, never panics, never reads unaligned or past
/// 4 KiB (the fake asserts both).
#[test]
fn pci_random_config_spaces_never_hang_or_panic() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..300 {
        let m = FakeConfig::new(round % 2 == 0);
        for device in 0..4u8 {
            let mut f = FakeFunction::new(0x1af4, 0x1000, 0, 0, 0);
            for i in 1..1024 {
                f.regs[i] = next() as u32;
                f.wmask[i] = next() as u32;
            }
            // Bias toward structure: known header types, pointers into the capability area,
            // PCIe present.
            f.set8(0x0e, (round % 3) as u8 | (next() as u8 & 0x80));
            if round % 3 == 0 {
                f.cap_pointer(0x40 + (next() % 0xc0) as u8).pcie(0x40, (next() % 256) as u8, 0, None);
            }
            m.add(addr(0, device, 0), f);
        }
        let functions = enumerate(&m, &[RootRange::new(0, 0, 0)]);
        for f in &functions {
            let _ = describe(f);
            assert!(f.capabilities.len() <= 48);
            assert!(f.extended_capabilities.len() <= 960);
        }
    }
}

#[test]
fn pci_log_lines_exact() {
    let (_, functions) = ecam();
    let lines: Vec<String> = functions.iter().flat_map(describe).collect();
    let expected = "\
pci 0000:00:00.0 [8086:29c0] class 060000
pci 0000:00:01.0 [1234:1111] class 030000
  bar0 mem32 pref 0xfd000000 size 0x1000000
  bar2 mem32 0xfebd4000 size 0x1000
  rom 0xfebc0000 size 0x10000 disabled
pci 0000:00:05.0 [1af4:1041] class 020000
  bar1 mem32 0xfeb00000 size 0x1000
  cap 0x10 pcie @0x40 v2 endpoint link 2.5GT/s x1 max 2.5GT/s x1
  cap 0x09 vendor @0x80
  ecap 0x0001 aer v2 @0x100
  ecap 0x000b vsec v1 @0x140
  warning bar0 reserved memory type (0x00000006)
  warning bar5 64-bit with no upper half
  warning capability loop: pointer 0x40 at 0x81
  warning extended capability loop: pointer 0x100 at 0x140
pci 0000:00:06.0 [1af4:1042] class 010000
  cap 0x01 pm @0x40 v3 states D0 D3hot current D0
  cap 0x09 vendor @0x48
  warning capability pointer 0x10 at 0x49 points into header
pci 0000:00:07.0 [1af4:1043] class 078000
  cap 0x09 vendor @0x40
  cap 0x11 msi-x @0xf8
  warning capability 0x11 at 0xf8 (12 bytes) runs past 0xff
pci 0000:00:08.0 [1af4:1044] class 0c0330
  bar0 mem32 0xfeb10000 size 0x4000
  cap 0x10 pcie @0x40 v2 endpoint link 5GT/s x1 max 5GT/s x1
  cap 0x11 msi-x @0x80 table bar2+0x0 entries 8
  ecap 0x0003 dsn v1 @0x100
  warning extended capability pointer 0x0f0 at 0x100 below 0x100
  warning msi-x table bar2+0x0 outside an implemented memory bar
pci 0000:00:09.0 [1af4:1045] class 00ff00
  cap 0x10 pcie @0x40 v2 rc-endpoint
pci 0000:00:0a.0 [1af4:1046] class ff0000
  warning unknown header type 0x03
pci 0000:00:1c.0 [8086:2940] class 060400
  bar0 mem32 0xfea00000 size 0x1000
  bus primary 00 secondary 01 subordinate 01
  window io 0xe000-0xefff
  window mem 0xfe600000-0xfe7fffff
  cap 0x10 pcie @0x40 v2 root-port link 8GT/s x4 max 8GT/s x4
  cap 0x05 msi @0x80 32bit vectors 1
  cap 0x0d bridge-subsys @0x90
  cap 0x01 pm @0xa0 v2 states D0 D1 D2 D3hot current D0
  ecap 0x0001 aer v1 @0x100
  ecap 0x000d acs v1 @0x140
pci 0000:00:1c.1 [8086:2942] class 060400
  bus primary 00 secondary 00 subordinate 00
  cap 0x10 pcie @0x40 v2 root-port link 2.5GT/s x0 max 8GT/s x1
pci 0000:00:1f.0 [8086:2918] class 060100
pci 0000:00:1f.2 [8086:2922] class 010601
  bar4 io 0xc040 size 0x20
  bar5 mem32 0xfebd5000 size 0x1000
  cap 0x05 msi @0x80 64bit vectors 1
  cap 0x12 sata @0xa8
pci 0000:00:1f.3 [8086:2930] class 0c0500
  bar4 io 0x700 size 0x40
pci 0000:01:00.0 [144d:a808] class 010802
  bar0 mem64 0xfe600000 size 0x4000
  parent 0000:00:1c.0
  cap 0x01 pm @0x40 v3 states D0 D3hot current D0
  cap 0x05 msi @0x50 64bit maskable vectors 32
  cap 0x10 pcie @0x70 v2 endpoint link 8GT/s x4 max 8GT/s x4
  cap 0x11 msi-x @0xb0 table bar0+0x3000 entries 33
  ecap 0x0001 aer v2 @0x100
  ecap 0x0003 dsn v1 @0x148
  ecap 0x0004 power-budget v1 @0x158
  ecap 0x0019 secondary-pcie v1 @0x168
  ecap 0x0018 ltr v1 @0x188
  ecap 0x001e l1pm v1 @0x190
pci 0000:80:00.0 [8086:09a2] class 088000
pci 0000:80:01.0 [8086:347a] class 060400
  bus primary 80 secondary 81 subordinate 81
  window mem 0xfa000000-0xfb0fffff
  window mem64 pref 0x200000000000-0x201001ffffff
  cap 0x10 pcie @0x40 v2 root-port link 16GT/s x16 max 16GT/s x16
pci 0000:81:00.0 [10de:2330] class 030200
  bar0 mem32 0xfa000000 size 0x1000000
  bar1 mem64 pref 0x200000000000 size 0x1000000000
  bar3 mem64 pref 0x201000000000 size 0x2000000
  rom 0xfb000000 size 0x80000 disabled
  parent 0000:80:01.0
  cap 0x01 pm @0x60 v3 states D0 D3hot current D0
  cap 0x05 msi @0x68 64bit maskable vectors 16
  cap 0x10 pcie @0x78 v2 endpoint link 32GT/s x16 max 32GT/s x16
  cap 0x09 vendor @0xb4
  cap 0x11 msi-x @0xc8 table bar0+0xb90000 entries 9
  ecap 0x0002 vc v1 @0x100
  ecap 0x001e l1pm v1 @0x258
  ecap 0x0004 power-budget v1 @0x128
  ecap 0x0001 aer v2 @0x420
  ecap 0x000b vsec v1 @0x600
  ecap 0x0019 secondary-pcie v1 @0x900
  ecap 0x0015 rebar v1 @0xbb0
  ecap 0x0026 pl-16gt v1 @0xc1c
  ecap 0x002a pl-32gt v1 @0xd00";
    let expected: Vec<&str> = expected.lines().collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    assert_eq!(lines, expected);
}

/// The examples from the log format's specification, each reproduced from a device of the kind
/// it came from (they come from three different devices).
#[test]
fn pci_log_lines_match_the_documented_examples() {
    let m = FakeConfig::new(true);
    // A PCIe function with a 64-bit prefetchable BAR 0 and AER.
    let mut f = FakeFunction::new(0x1b36, 0x0010, 0x010802, 0x02, 0);
    f.mem64_bar(0, 0xfe00_0000, 0x4000, true)
        .cap_pointer(0x40)
        .pcie(0x40, 0, 0, Some((4, 16, 3, 8)))
        .ecap(0x100, 0x0001, 1, 0);
    m.add(addr(0, 0x02, 0), f);
    // virtio-net: BAR0 I/O, BAR1 holds the MSI-X table and PBA.
    let mut f = FakeFunction::new(0x1af4, 0x1000, 0x020000, 0x00, 0);
    f.command(0x0003).io_bar(0, 0xc060, 0x20).mem32_bar(1, 0xfebd_1000, 0x1000, false).cap_pointer(0x98).msix(
        0x98,
        0,
        4,
        (1, 0),
        (1, 0x800),
    );
    m.add(addr(0, 0x03, 0), f);
    // ICH9 AHCI at 00:1f.2 behind a multi-function function 0.
    let mut f = FakeFunction::new(0x8086, 0x2922, 0x010601, 0x02, 0);
    f.command(0x0007).io_bar(4, 0xc000, 0x20);
    m.add(addr(0, 0x1f, 2), f);
    let mut f = FakeFunction::new(0x8086, 0x2918, 0x060100, 0x02, 0);
    f.multi_function();
    m.add(addr(0, 0x1f, 0), f);

    let functions = enumerate(&m, &[RootRange::new(0, 0, 0)]);
    let lines: Vec<Vec<String>> = functions.iter().map(describe).collect();
    assert_eq!(
        lines,
        vec![
            vec![
                "pci 0000:00:02.0 [1b36:0010] class 010802",
                "  bar0 mem64 pref 0xfe000000 size 0x4000",
                "  cap 0x10 pcie @0x40 v2 endpoint link 8GT/s x8 max 16GT/s x16",
                "  ecap 0x0001 aer v1 @0x100",
            ],
            vec![
                "pci 0000:00:03.0 [1af4:1000] class 020000",
                "  bar0 io 0xc060 size 0x20",
                "  bar1 mem32 0xfebd1000 size 0x1000",
                "  cap 0x11 msi-x @0x98 table bar1+0x0 entries 4",
            ],
            vec!["pci 0000:00:1f.0 [8086:2918] class 060100"],
            vec!["pci 0000:00:1f.2 [8086:2922] class 010601", "  bar4 io 0xc000 size 0x20"],
        ]
    );
}

#[test]
fn pci_enable_sets_decode_and_keeps_status_errors() {
    let (m, _) = ecam();
    // Received Master Abort (status bit 13) latched: a command write must not clear it.
    m.functions.borrow_mut().get_mut(&at(NVME)).expect("nvme").status(0x2010).command(0x0000);
    let command = enable(&m, at(NVME), Decode { memory: true, io: false, bus_master: true }).expect("enable");
    assert_eq!(command, CommandRegister::MEMORY_ENABLE | CommandRegister::BUS_MASTER_ENABLE);
    assert_eq!(m.get32(at(NVME), 0x04), 0x2010_0006);

    // Other bits are left as found.
    m.functions.borrow_mut().get_mut(&at(NVME)).expect("nvme").command(0x0400);
    let command = enable(&m, at(NVME), Decode { memory: true, ..Decode::default() }).expect("enable");
    assert_eq!(command.bits(), 0x0402);

    // I/O decode on a function whose I/O enable is hardwired to 0.
    m.functions.borrow_mut().get_mut(&at(NVME)).expect("nvme").wmask[1] &= !1;
    assert_eq!(
        enable(&m, at(NVME), Decode { io: true, ..Decode::default() }),
        Err(PciError::CommandNotAccepted { function: at(NVME), wanted: 0x0001, got: 0x0402 })
    );
    assert_eq!(
        enable(&m, addr(0, 0x1e, 0), Decode::default()),
        Err(PciError::DeviceGone { function: addr(0, 0x1e, 0) })
    );
}

#[test]
fn pci_power_state_through_pmcsr() {
    let (m, functions) = ecam();
    let gpu = find(&functions, GPU);
    // PME_En set and PME_Status latched (bit 15, write-one-to-clear).
    m.functions.borrow_mut().get_mut(&at(GPU)).expect("gpu").set32(0x64, 0x0000_8108);

    let down = set_power_state(&m, gpu, PowerState::D3Hot).expect("D0 -> D3hot");
    assert_eq!(
        down,
        PowerTransition { from: PowerState::D0, to: PowerState::D3Hot, settle_us: 10_000, state_lost: false }
    );
    // PMCSR bits 1:0 = 11b; PME_En kept; PME_Status written as 0 so it stays latched.
    assert_eq!(m.get32(at(GPU), 0x64), 0x0000_810b);
    assert_eq!(m.writes_to(at(GPU)).last(), Some(&(0x64, 0x0000_010b)));
    assert_eq!(power_state(&m, gpu), Ok(PowerState::D3Hot));

    let up = set_power_state(&m, gpu, PowerState::D0).expect("D3hot -> D0");
    assert_eq!(
        up,
        PowerTransition { from: PowerState::D3Hot, to: PowerState::D0, settle_us: 10_000, state_lost: false }
    );
    assert_eq!(m.get32(at(GPU), 0x64) & 0b11, 0);
    let same = set_power_state(&m, gpu, PowerState::D0).expect("D0 -> D0");
    assert_eq!(same.settle_us, 0);

    // Without No_Soft_Reset, D3hot -> D0 resets the function.
    let port = find(&functions, ROOT_PORT);
    set_power_state(&m, port, PowerState::D3Hot).expect("D0 -> D3hot");
    assert_eq!(
        set_power_state(&m, port, PowerState::D2),
        Err(PciError::InvalidPowerTransition { function: at(ROOT_PORT), from: PowerState::D3Hot, to: PowerState::D2 })
    );
    assert!(set_power_state(&m, port, PowerState::D0).expect("D3hot -> D0").state_lost);
    assert_eq!(set_power_state(&m, port, PowerState::D2).map(|t| t.settle_us), Ok(200));

    assert_eq!(
        set_power_state(&m, gpu, PowerState::D1),
        Err(PciError::PowerStateNotSupported { function: at(GPU), state: PowerState::D1 })
    );
    assert_eq!(
        set_power_state(&m, find(&functions, SATA), PowerState::D3Hot),
        Err(PciError::NoCapability { function: at(SATA), capability: "pm" })
    );
}

#[test]
fn pci_msi_programming_writes_the_spec_registers() {
    let (m, functions) = ecam();
    let nvme = find(&functions, NVME);
    m.clear_log();
    msi_configure(&m, nvme, 0xfee0_1000, 0x0040, 4).expect("msi");

    // 64-bit, per-vector masking, capability at 0x50 (PCI LB 3.0 §6.8.1):
    // address low 0x54, address high 0x58, data 0x5c, mask 0x60.
    let cap = m.get32(at(NVME), 0x50);
    let control = cap >> 16;
    assert_eq!(control & 1, 1, "MSI Enable, control bit 0");
    assert_eq!((control >> 4) & 0b111, 2, "Multiple Message Enable, bits 6:4 = log2(4)");
    assert_eq!(control & 0x180, 0x180, "64-bit and per-vector masking bits untouched");
    assert_eq!(m.get32(at(NVME), 0x54), 0xfee0_1000);
    assert_eq!(m.get32(at(NVME), 0x58), 0);
    assert_eq!(m.get32(at(NVME), 0x5c), 0x40);
    assert_eq!(m.get32(at(NVME), 0x60), 0xffff_fff0, "vectors 0..3 unmasked");
    assert_eq!(m.get32(at(NVME), 0x04) & (1 << 10), 1 << 10, "INTx disabled");

    // Order: disable first, enable last, after address and data.
    let writes = m.writes_to(at(NVME));
    let offsets: Vec<u16> = writes.iter().map(|w| w.0).collect();
    assert_eq!(offsets, vec![0x50, 0x54, 0x58, 0x5c, 0x60, 0x50, 0x04]);
    assert_eq!(writes[0].1 >> 16 & 1, 0);
    assert_eq!(writes[5].1 & 0xffff, m.get32(at(NVME), 0x50) & 0xffff, "ID/next written back unchanged");

    // 32-bit capability without masking (root port, cap 0x80): data at cap + 8.
    let port = find(&functions, ROOT_PORT);
    msi_configure(&m, port, 0xfee0_0000, 0x0031, 1).expect("msi");
    assert_eq!(m.get32(at(ROOT_PORT), 0x84), 0xfee0_0000);
    assert_eq!(m.get32(at(ROOT_PORT), 0x88), 0x31);
    assert_eq!(m.get32(at(ROOT_PORT), 0x80) >> 16 & 0x71, 0x01);

    msi_disable(&m, nvme).expect("disable");
    assert_eq!(m.get32(at(NVME), 0x50) >> 16 & 1, 0);
    assert_eq!(m.get32(at(NVME), 0x04) & (1 << 10), 0, "INTx allowed again");
}

#[test]
fn pci_msi_rejects_what_the_spec_forbids() {
    let (m, functions) = ecam();
    let nvme = find(&functions, NVME);
    let port = find(&functions, ROOT_PORT);
    let f = at(NVME);
    assert_eq!(
        msi_configure(&m, nvme, 0xfee0_0000, 0x40, 3),
        Err(PciError::InvalidVectorCount { function: f, requested: 3, capable: 32 })
    );
    assert_eq!(
        msi_configure(&m, nvme, 0xfee0_0000, 0x40, 64),
        Err(PciError::InvalidVectorCount { function: f, requested: 64, capable: 32 })
    );
    assert_eq!(
        msi_configure(&m, port, 0xfee0_0000, 0x40, 2),
        Err(PciError::InvalidVectorCount { function: at(ROOT_PORT), requested: 2, capable: 1 })
    );
    assert_eq!(
        msi_configure(&m, nvme, 0xfee0_0002, 0x40, 1),
        Err(PciError::MessageAddressMisaligned { function: f, message_address: 0xfee0_0002 })
    );
    assert_eq!(
        msi_configure(&m, port, 0x1_0000_0000, 0x40, 1),
        Err(PciError::MessageAddressAbove4GiB { function: at(ROOT_PORT), message_address: 0x1_0000_0000 })
    );
    assert_eq!(
        msi_configure(&m, nvme, 0xfee0_0000, 0x41, 4),
        Err(PciError::MessageDataNotAligned { function: f, data: 0x41, vectors: 4 })
    );
    assert_eq!(
        msi_configure(&m, nvme, 0xfee0_0000, 0x1_0000, 1),
        Err(PciError::MessageDataTooWide { function: f, data: 0x1_0000 })
    );
    assert_eq!(
        msi_configure(&m, find(&functions, VGA), 0xfee0_0000, 0, 1),
        Err(PciError::NoCapability { function: at(VGA), capability: "msi" })
    );

    // Never both: MSI-X on blocks MSI, and the other way round.
    msix_set_control(&m, nvme, MsixControl { enable: true, function_mask: true }).expect("msi-x");
    m.clear_log();
    assert_eq!(
        msi_configure(&m, nvme, 0xfee0_0000, 0x40, 1),
        Err(PciError::OtherInterruptModeEnabled { function: f, enabled: "msi-x" })
    );
    assert!(m.writes_to(f).is_empty(), "a refused request writes nothing");
    msix_set_control(&m, nvme, MsixControl::default()).expect("msi-x off");
    msi_configure(&m, nvme, 0xfee0_0000, 0x40, 1).expect("msi");
    assert_eq!(
        msix_set_control(&m, nvme, MsixControl { enable: true, function_mask: false }),
        Err(PciError::OtherInterruptModeEnabled { function: f, enabled: "msi" })
    );
}

#[test]
fn pci_msix_table_location_and_entries() {
    let (m, functions) = ecam();
    let gpu = find(&functions, GPU);
    let layout = msix_layout(gpu).expect("layout");
    assert_eq!(layout.entries, 9);
    assert_eq!(layout.table, BarRegion { bar: 0, offset: 0xb9_0000, len: 9 * 16, address: 0xfab9_0000 });
    assert_eq!(layout.pba, BarRegion { bar: 0, offset: 0xba_0000, len: 8, address: 0xfaba_0000 });

    let nvme_layout = msix_layout(find(&functions, NVME)).expect("layout");
    assert_eq!(nvme_layout.table.address, 0xfe60_3000);
    assert_eq!(nvme_layout.pba.len, 8, "33 entries: one qword of pending bits");

    // Entry layout (PCI LB 3.0 §6.8.2.6-9): address low, address high, data, vector control.
    let (offset, entry) = layout.entry(2, 0x1_fee0_0000, 0x0041, false).expect("entry");
    assert_eq!(offset, 0xb9_0020);
    assert_eq!(entry.to_dwords(), [0xfee0_0000, 0x1, 0x41, 0]);
    assert_eq!(entry.to_bytes(), [0x00, 0x00, 0xe0, 0xfe, 0x01, 0, 0, 0, 0x41, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(MsixTableEntry { masked: true, ..entry }.to_dwords()[3], 1, "mask is bit 0");
    assert_eq!(MsixTableEntry::vector_control(0xabcd_0000, true), 0xabcd_0001);
    assert_eq!(MsixTableEntry::vector_control(0xabcd_0001, false), 0xabcd_0000);
    assert_eq!(
        layout.entry(9, 0xfee0_0000, 0, false),
        Err(PciError::MsixEntryOutOfRange { function: at(GPU), index: 9, entries: 9 })
    );
    assert_eq!(
        layout.entry(0, 0xfee0_0001, 0, false),
        Err(PciError::MessageAddressMisaligned { function: at(GPU), message_address: 0xfee0_0001 })
    );
    assert_eq!(
        msix_layout(find(&functions, ECAP_BAD)),
        Err(PciError::MsixOutsideBar { function: at(ECAP_BAD), what: MsixStructure::Table, bir: 2, offset: 0 })
    );

    // Message Control bit 15 enable, bit 14 function mask (dword bits 31, 30); table size
    // (bits 10:0 = 8) untouched.
    msix_set_control(&m, gpu, MsixControl { enable: true, function_mask: true }).expect("enable");
    assert_eq!(m.get32(at(GPU), 0xc8) >> 16, 0xc008);
    assert_eq!(m.get32(at(GPU), 0x04) & (1 << 10), 1 << 10, "INTx disabled");
    msix_set_control(&m, gpu, MsixControl { enable: true, function_mask: false }).expect("unmask");
    assert_eq!(m.get32(at(GPU), 0xc8) >> 16, 0x8008);
    assert_eq!(m.get32(at(GPU), 0xc8) & 0xffff, 0x0011, "ID and next pointer unchanged");
}

#[test]
fn pci_pci_types_adapter_reads_through() {
    let (m, _) = ecam();
    let header = pci_types::PciHeader::new(at(GPU));
    assert_eq!(header.id(PciTypesAccess(&m)), (0x10de, 0x2330));
    assert_eq!(header.header_type(PciTypesAccess(&m)), HeaderType::Endpoint);
}
