//! A fake PCI configuration space for host tests, modelled the way QEMU models real functions:
//! every dword has a value, a writable mask and a write-one-to-clear mask, so BAR sizing,
//! RW1C status bits and read-only fields behave as silicon does. It also watches what the code
//! under test does: which functions it read, every write, and any BAR/ROM write made while the
//! function still decoded memory or I/O.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::string::String;
use std::vec::Vec;

use pci_types::PciAddress;

use super::access::ConfigAccess;

const DWORDS: usize = 1024;

/// One function's 4 KiB of config space.
#[derive(Clone)]
pub struct FakeFunction {
    pub regs: Vec<u32>,
    pub wmask: Vec<u32>,
    pub w1c: Vec<u32>,
}

impl FakeFunction {
    /// A function with identity registers filled and a command register whose I/O, memory,
    /// bus master, parity, SERR and interrupt-disable bits are writable; status error bits are
    /// write-one-to-clear.
    pub fn new(vendor: u16, device: u16, class_code: u32, revision: u8, header_type: u8) -> FakeFunction {
        let mut f = FakeFunction { regs: vec![0; DWORDS], wmask: vec![0; DWORDS], w1c: vec![0; DWORDS] };
        f.set32(0x00, (device as u32) << 16 | vendor as u32);
        f.set32(0x08, class_code << 8 | revision as u32);
        f.set8(0x0e, header_type);
        f.wmask[1] = 0x0000_0547;
        f.w1c[1] = 0xf900_0000;
        // Interrupt line is writable.
        f.wmask[0x3c / 4] = 0xff;
        f
    }

    pub fn get32(&self, offset: u16) -> u32 {
        self.regs[offset as usize / 4]
    }

    pub fn set32(&mut self, offset: u16, value: u32) -> &mut Self {
        self.regs[offset as usize / 4] = value;
        self
    }

    pub fn set16(&mut self, offset: u16, value: u16) -> &mut Self {
        let shift = (offset & 2) * 8;
        let reg = &mut self.regs[offset as usize / 4];
        *reg = (*reg & !(0xffff << shift)) | (value as u32) << shift;
        self
    }

    pub fn set8(&mut self, offset: u16, value: u8) -> &mut Self {
        let shift = (offset & 3) * 8;
        let reg = &mut self.regs[offset as usize / 4];
        *reg = (*reg & !(0xff << shift)) | (value as u32) << shift;
        self
    }

    pub fn command(&mut self, command: u16) -> &mut Self {
        self.set16(0x04, command)
    }

    pub fn status(&mut self, status: u16) -> &mut Self {
        self.set16(0x06, status)
    }

    pub fn multi_function(&mut self) -> &mut Self {
        let header = (self.get32(0x0c) >> 16) as u8;
        self.set8(0x0e, header | 0x80)
    }

    pub fn subsystem(&mut self, vendor: u16, device: u16) -> &mut Self {
        self.set32(0x2c, (device as u32) << 16 | vendor as u32)
    }

    pub fn interrupt(&mut self, line: u8, pin: u8) -> &mut Self {
        self.set8(0x3c, line).set8(0x3d, pin)
    }

    pub fn io_bar(&mut self, slot: u16, port: u32, size: u32) -> &mut Self {
        let offset = 0x10 + 4 * slot;
        self.set32(offset, port | 1);
        self.wmask[offset as usize / 4] = !(size - 1) & !0x3;
        self
    }

    /// An I/O BAR whose decoder is 16 bits wide: the upper half is hardwired to zero.
    pub fn io16_bar(&mut self, slot: u16, port: u32, size: u32) -> &mut Self {
        self.io_bar(slot, port, size);
        self.wmask[(0x10 + 4 * slot) as usize / 4] &= 0xffff;
        self
    }

    pub fn mem32_bar(&mut self, slot: u16, address: u32, size: u32, prefetchable: bool) -> &mut Self {
        let offset = 0x10 + 4 * slot;
        self.set32(offset, address | if prefetchable { 0x8 } else { 0 });
        self.wmask[offset as usize / 4] = !(size - 1) & !0xf;
        self
    }

    pub fn mem64_bar(&mut self, slot: u16, address: u64, size: u64, prefetchable: bool) -> &mut Self {
        let offset = 0x10 + 4 * slot;
        let mask = !(size - 1) & !0xf;
        self.set32(offset, address as u32 | 0x4 | if prefetchable { 0x8 } else { 0 });
        self.set32(offset + 4, (address >> 32) as u32);
        self.wmask[offset as usize / 4] = mask as u32;
        self.wmask[offset as usize / 4 + 1] = (mask >> 32) as u32;
        self
    }

    pub fn rom(&mut self, offset: u16, address: u32, size: u32, enabled: bool) -> &mut Self {
        self.set32(offset, address | enabled as u32);
        self.wmask[offset as usize / 4] = (!(size - 1) & 0xffff_f800) | 1;
        self
    }

    /// Type 1 bus numbers (writable, as on real bridges).
    pub fn buses(&mut self, primary: u8, secondary: u8, subordinate: u8) -> &mut Self {
        self.set32(0x18, (subordinate as u32) << 16 | (secondary as u32) << 8 | primary as u32);
        self.wmask[0x18 / 4] = 0x00ff_ffff;
        self
    }

    /// Sets the capability list pointer and the status bit that says there is one.
    pub fn cap_pointer(&mut self, pointer: u8) -> &mut Self {
        let status = (self.get32(0x04) >> 16) as u16;
        self.set16(0x06, status | 0x10).set8(0x34, pointer)
    }

    pub fn cap(&mut self, offset: u16, id: u8, next: u8, control: u16) -> &mut Self {
        self.set32(offset, (control as u32) << 16 | (next as u32) << 8 | id as u32)
    }

    /// MSI: Enable and Multiple Message Enable writable; address, data and mask registers too.
    pub fn msi(&mut self, offset: u16, next: u8, is_64bit: bool, maskable: bool, log2_vectors: u16) -> &mut Self {
        let control = (maskable as u16) << 8 | (is_64bit as u16) << 7 | log2_vectors << 1;
        self.cap(offset, 0x05, next, control);
        let dw = offset as usize / 4;
        self.wmask[dw] = 0x0071_0000;
        self.wmask[dw + 1] = 0xffff_fffc;
        if is_64bit {
            self.wmask[dw + 2] = 0xffff_ffff;
        }
        let data = dw + if is_64bit { 3 } else { 2 };
        self.wmask[data] = 0xffff;
        if maskable {
            self.wmask[data + 1] = if log2_vectors >= 5 { u32::MAX } else { (1 << (1 << log2_vectors)) - 1 };
        }
        self
    }

    pub fn msix(&mut self, offset: u16, next: u8, entries: u16, table: (u32, u32), pba: (u32, u32)) -> &mut Self {
        self.cap(offset, 0x11, next, entries - 1);
        self.wmask[offset as usize / 4] = 0xc000_0000;
        self.set32(offset + 4, table.1 | table.0);
        self.set32(offset + 8, pba.1 | pba.0)
    }

    pub fn pcie(&mut self, offset: u16, next: u8, device_type: u16, link: Option<(u8, u8, u8, u8)>) -> &mut Self {
        // Version 2, slot implemented on root ports.
        let slot = if device_type == 4 { 1 << 8 } else { 0 };
        self.cap(offset, 0x10, next, 2 | device_type << 4 | slot);
        if let Some((max_speed, max_width, speed, width)) = link {
            self.set32(offset + 0xc, (max_width as u32) << 4 | max_speed as u32);
            self.set16(offset + 0x12, (width as u16) << 4 | speed as u16);
        }
        self
    }

    /// PM: PMCSR power state and PME_En writable, PME_Status write-one-to-clear.
    pub fn pm(&mut self, offset: u16, next: u8, pmc: u16, pmcsr: u32) -> &mut Self {
        self.cap(offset, 0x01, next, pmc);
        self.set32(offset + 4, pmcsr);
        self.wmask[offset as usize / 4 + 1] = 0x0000_0103;
        self.w1c[offset as usize / 4 + 1] = 0x0000_8000;
        self
    }

    pub fn ecap(&mut self, offset: u16, id: u16, version: u8, next: u16) -> &mut Self {
        self.set32(offset, (next as u32) << 20 | (version as u32) << 16 | id as u32)
    }

    fn header_type(&self) -> u8 {
        ((self.get32(0x0c) >> 16) & 0x7f) as u8
    }

    /// Offsets a sizing routine writes all ones to.
    fn is_bar_or_rom(&self, offset: u16) -> bool {
        match self.header_type() {
            0 => (0x10..0x28).contains(&offset) || offset == 0x30,
            1 => (0x10..0x18).contains(&offset) || offset == 0x38,
            _ => false,
        }
    }
}

/// A whole machine's config space.
pub struct FakeConfig {
    pub functions: RefCell<BTreeMap<PciAddress, FakeFunction>>,
    /// ECAM (true) or ports 0xCF8/0xCFC (false).
    pub extended: bool,
    /// Every function address read.
    pub touched: RefCell<BTreeSet<PciAddress>>,
    /// Reads at offsets >= 0x100.
    pub extended_reads: RefCell<usize>,
    /// Every write, in order.
    pub writes: RefCell<Vec<(PciAddress, u16, u32)>>,
    /// BAR/ROM writes made while memory or I/O decode was on, and other rule breaks.
    pub violations: RefCell<Vec<String>>,
}

impl FakeConfig {
    pub fn new(extended: bool) -> FakeConfig {
        FakeConfig {
            functions: RefCell::new(BTreeMap::new()),
            extended,
            touched: RefCell::new(BTreeSet::new()),
            extended_reads: RefCell::new(0),
            writes: RefCell::new(Vec::new()),
            violations: RefCell::new(Vec::new()),
        }
    }

    pub fn add(&self, address: PciAddress, function: FakeFunction) {
        self.functions.borrow_mut().insert(address, function);
    }

    pub fn get32(&self, address: PciAddress, offset: u16) -> u32 {
        self.functions.borrow().get(&address).map_or(u32::MAX, |f| f.get32(offset))
    }

    pub fn snapshot(&self) -> BTreeMap<PciAddress, Vec<u32>> {
        self.functions.borrow().iter().map(|(a, f)| (*a, f.regs.clone())).collect()
    }

    pub fn writes_to(&self, address: PciAddress) -> Vec<(u16, u32)> {
        self.writes.borrow().iter().filter(|w| w.0 == address).map(|w| (w.1, w.2)).collect()
    }

    pub fn clear_log(&self) {
        self.writes.borrow_mut().clear();
        self.touched.borrow_mut().clear();
        *self.extended_reads.borrow_mut() = 0;
    }
}

impl ConfigAccess for FakeConfig {
    fn read32(&self, address: PciAddress, offset: u16) -> u32 {
        assert_eq!(offset % 4, 0, "unaligned config read at {offset:#x}");
        self.touched.borrow_mut().insert(address);
        if offset >= 0x100 {
            *self.extended_reads.borrow_mut() += 1;
            if !self.extended {
                return u32::MAX;
            }
        }
        assert!(offset < 0x1000, "config read past 4 KiB at {offset:#x}");
        self.get32(address, offset)
    }

    fn write32(&self, address: PciAddress, offset: u16, value: u32) {
        assert_eq!(offset % 4, 0, "unaligned config write at {offset:#x}");
        self.writes.borrow_mut().push((address, offset, value));
        if offset >= 0x100 && !self.extended {
            return;
        }
        let mut functions = self.functions.borrow_mut();
        let Some(f) = functions.get_mut(&address) else {
            return;
        };
        // Host bridges (class 06/00) are sized with decode on, as Linux does: turning their
        // decode off can cut the CPU off from memory.
        let host_bridge = f.get32(0x08) >> 16 == 0x0600;
        if f.is_bar_or_rom(offset) && f.get32(0x04) & 0x3 != 0 && !host_bridge {
            self.violations.borrow_mut().push(format!("{address}: write {value:#x} to {offset:#x} with decode on"));
        }
        let i = offset as usize / 4;
        let kept = f.regs[i] & !f.wmask[i];
        let cleared = value & f.w1c[i];
        f.regs[i] = (kept | (value & f.wmask[i])) & !cleared;
    }

    fn extended_space(&self, _address: PciAddress) -> bool {
        self.extended
    }
}
