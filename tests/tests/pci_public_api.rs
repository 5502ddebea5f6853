//! PCI enumeration through the public API only, with a config-space model written outside the
//! crate (as the kernel binary's ECAM and port implementations are): a two-socket machine where
//! the GPU's root complex (bus 0x80) is reachable only by scanning the MCFG range, never by
//! following bridges from bus 0.

use std::cell::RefCell;
use std::collections::BTreeMap;

use kernel::pci::{
    describe, enable, enumerate, msix_layout, set_power_state, ConfigAccess, Decode, PciAddress, PowerState, RootRange,
};

/// Flat 4 KiB per function; BARs answer sizing through a per-dword writable mask.
struct Ecam {
    /// Per function: its configuration dwords and their writable masks.
    functions: RefCell<BTreeMap<PciAddress, FunctionSpace>>,
}

type FunctionSpace = (Vec<u32>, Vec<u32>);

impl Ecam {
    fn function(&self, address: PciAddress, regs: &[(u16, u32, u32)]) {
        let mut values = vec![0u32; 1024];
        let mut writable = vec![0u32; 1024];
        for &(offset, value, mask) in regs {
            values[offset as usize / 4] = value;
            writable[offset as usize / 4] = mask;
        }
        self.functions.borrow_mut().insert(address, (values, writable));
    }
}

impl ConfigAccess for Ecam {
    fn read32(&self, address: PciAddress, offset: u16) -> u32 {
        self.functions.borrow().get(&address).map_or(u32::MAX, |f| f.0[offset as usize / 4])
    }
    fn write32(&self, address: PciAddress, offset: u16, value: u32) {
        if let Some((values, writable)) = self.functions.borrow_mut().get_mut(&address) {
            let i = offset as usize / 4;
            values[i] = (values[i] & !writable[i]) | (value & writable[i]);
        }
    }
    fn extended_space(&self, _address: PciAddress) -> bool {
        true
    }
}

#[test]
fn pci_gpu_on_second_root_complex() {
    let ecam = Ecam { functions: RefCell::new(BTreeMap::new()) };
    // Socket 0 host bridge.
    ecam.function(PciAddress::new(0, 0, 0, 0), &[(0x00, 0x09a2_8086, 0), (0x08, 0x0600_0004, 0)]);
    // Socket 1 root port 80:01.0 -> bus 0x81.
    ecam.function(
        PciAddress::new(0, 0x80, 1, 0),
        &[
            (0x00, 0x347a_8086, 0),
            (0x04, 0x0010_0007, 0x0000_0547),
            (0x08, 0x0604_0004, 0),
            (0x0c, 0x0001_0000, 0),
            (0x18, 0x0081_8180, 0x00ff_ffff),
            (0x34, 0x40, 0),
            (0x40, 0x0042_0010, 0),
            (0x4c, 0x0000_0104, 0),
            (0x50, 0x0104_0000, 0),
        ],
    );
    // H100 at 81:00.0: BAR0 16 MiB, BAR1 64 GiB prefetchable 64-bit, PM, PCIe, MSI-X.
    ecam.function(
        PciAddress::new(0, 0x81, 0, 0),
        &[
            (0x00, 0x2330_10de, 0),
            (0x04, 0x0010_0000, 0x0000_0547),
            (0x08, 0x0302_00a1, 0),
            (0x10, 0xfa00_0000, 0xff00_0000),
            (0x14, 0x0000_000c, 0x0000_0000),
            (0x18, 0x0000_2000, 0xffff_fff0),
            (0x34, 0x60, 0),
            (0x60, 0x0003_7801, 0),
            (0x64, 0x0000_0008, 0x0000_0103),
            (0x78, 0x0002_c810, 0),
            (0x84, 0x0000_0105, 0),
            (0x88, 0x0105_0000, 0),
            (0xc8, 0x0008_0011, 0xc000_0000),
            (0xcc, 0x00b9_0000, 0),
            (0xd0, 0x00ba_0000, 0),
            (0x100, 0x0000_0001 | 2 << 16, 0),
        ],
    );

    let functions = enumerate(&ecam, &[RootRange::new(0, 0, 0xff)]);
    let lines: Vec<String> = functions.iter().flat_map(describe).collect();
    assert_eq!(
        lines,
        [
            "pci 0000:00:00.0 [8086:09a2] class 060000",
            "pci 0000:80:01.0 [8086:347a] class 060400",
            "  bus primary 80 secondary 81 subordinate 81",
            "  cap 0x10 pcie @0x40 v2 root-port link 16GT/s x16 max 16GT/s x16",
            "pci 0000:81:00.0 [10de:2330] class 030200",
            "  bar0 mem32 0xfa000000 size 0x1000000",
            "  bar1 mem64 pref 0x200000000000 size 0x1000000000",
            "  parent 0000:80:01.0",
            "  cap 0x01 pm @0x60 v3 states D0 D3hot current D0",
            "  cap 0x10 pcie @0x78 v2 endpoint link 32GT/s x16 max 32GT/s x16",
            "  cap 0x11 msi-x @0xc8 table bar0+0xb90000 entries 9",
            "  ecap 0x0001 aer v2 @0x100",
        ]
    );

    // The driver picks NVIDIA display/3D functions and claims them.
    let gpu = functions.iter().find(|f| f.vendor_id == 0x10de && f.class == 0x03).expect("the GPU is found");
    let command = enable(&ecam, gpu.address, Decode { memory: true, io: false, bus_master: true })
        .expect("memory decode and bus mastering");
    assert_eq!(command.bits() & 0x7, 0x6);
    assert_eq!(msix_layout(gpu).map(|l| l.table.address), Ok(0xfab9_0000));
    let transition = set_power_state(&ecam, gpu, PowerState::D3Hot).expect("D3hot");
    assert_eq!(transition.settle_us, 10_000);
    assert_eq!(ecam.read32(gpu.address, 0x64) & 0b11, 0b11);
}
