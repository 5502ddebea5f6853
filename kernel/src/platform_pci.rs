//! PCI in the kernel: configuration access by ECAM (the MCFG windows, mapped uncached) or by
//! the legacy ports 0xCF8/0xCFC (PCI Local Bus spec 3.0, section 3.2.2.3.2: CONFIG_ADDRESS =
//! enable bit 31 | bus 23:16 | device 15:11 | function 10:8 | register 7:2), the scan of every
//! root range, and the one-line-per-function log that scripts compare with QEMU and lspci.

use crate::arch::port;
use crate::mem::mmio::Mmio;
use crate::mem::paging::MapError;
use crate::mem::wc::WcWindow;
use alloc::string::String;
use alloc::vec::Vec;
use kernel::pci::{self, Bar, ConfigAccess, Decode, PciAddress, PciError, PciFunction, RootRange};
use spin::{Mutex, Once};

const CONFIG_ADDRESS: u16 = 0xCF8;
const CONFIG_DATA: u16 = 0xCFC;

/// Ports 0xCF8/0xCFC: 256 bytes per function, segment 0 only.
pub struct PortAccess {
    lock: Mutex<()>,
}

impl ConfigAccess for PortAccess {
    fn read32(&self, a: PciAddress, offset: u16) -> u32 {
        if a.segment() != 0 || offset >= 256 {
            return 0xFFFF_FFFF;
        }
        let _g = self.lock.lock();
        port::outl(CONFIG_ADDRESS, port_address(a, offset));
        port::inl(CONFIG_DATA)
    }
    fn write32(&self, a: PciAddress, offset: u16, value: u32) {
        if a.segment() != 0 || offset >= 256 {
            return;
        }
        let _g = self.lock.lock();
        port::outl(CONFIG_ADDRESS, port_address(a, offset));
        port::outl(CONFIG_DATA, value);
    }
    fn extended_space(&self, _a: PciAddress) -> bool {
        false
    }
}

fn port_address(a: PciAddress, offset: u16) -> u32 {
    1 << 31 | (a.bus() as u32) << 16 | (a.device() as u32) << 11 | (a.function() as u32) << 8 | (offset as u32 & 0xFC)
}

/// ECAM (PCI Firmware spec 3.2, section 4.1.2 / PCIe base spec 7.2.2): function config space at
/// base + (bus - bus_start) << 20 | device << 15 | function << 12, 4 KiB each.
pub struct EcamAccess {
    windows: Vec<(RootRange, Mmio)>,
}

impl EcamAccess {
    /// The window holding `a`'s configuration space and the offset of its dword `offset`.
    fn locate(&self, a: PciAddress, offset: u16) -> Option<(&Mmio, u64)> {
        if offset >= 4096 {
            return None;
        }
        let (range, window) = self.windows.iter().find(|(r, _)| r.contains(a.segment(), a.bus()))?;
        let off = ((a.bus() - range.bus_start) as u64) << 20
            | (a.device() as u64) << 15
            | (a.function() as u64) << 12
            | (offset as u64 & 0xFFC);
        Some((window, off))
    }
}

impl ConfigAccess for EcamAccess {
    fn read32(&self, a: PciAddress, offset: u16) -> u32 {
        self.locate(a, offset).and_then(|(window, off)| window.read32(off)).unwrap_or(0xFFFF_FFFF)
    }
    fn write32(&self, a: PciAddress, offset: u16, value: u32) {
        if let Some((window, off)) = self.locate(a, offset) {
            window.write32(off, value);
        }
    }
    fn extended_space(&self, a: PciAddress) -> bool {
        self.locate(a, 0).is_some()
    }
}

pub enum Access {
    Ecam(EcamAccess),
    Ports(PortAccess),
}

impl Access {
    pub fn get(&self) -> &dyn ConfigAccess {
        match self {
            Access::Ecam(e) => e,
            Access::Ports(p) => p,
        }
    }
}

static ACCESS: Once<Access> = Once::new();
static FUNCTIONS: Once<Vec<PciFunction>> = Once::new();

pub fn access() -> Option<&'static dyn ConfigAccess> {
    ACCESS.get().map(|a| a.get())
}

pub fn functions() -> &'static [PciFunction] {
    FUNCTIONS.get().map(|v| v.as_slice()).unwrap_or(&[])
}

/// Why a BAR could not be taken.
#[derive(Debug)]
pub enum BarError {
    /// No PCI configuration access was set up.
    NoConfigAccess,
    /// The function lacks the BAR.
    Missing { function: PciAddress, what: &'static str },
    /// An I/O BAR where memory was wanted.
    IoBar { function: PciAddress, bar: u8 },
    /// Not prefetchable: write-combining would merge or repeat accesses with side effects.
    NotPrefetchable { function: PciAddress, bar: u8 },
    /// No address assigned.
    Unassigned { function: PciAddress, bar: u8 },
    /// Smaller than asked for (or an empty length asked).
    TooSmall { function: PciAddress, bar: u8, size: u64, wanted: u64 },
    /// Turning on decode (and bus mastering) was refused.
    Enable { function: PciAddress, error: PciError },
    /// The mapping failed.
    Map { function: PciAddress, bar: u8, error: MapError },
}

impl core::fmt::Display for BarError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            BarError::NoConfigAccess => f.write_str("no PCI configuration access"),
            BarError::Missing { function, what } => write!(f, "{function}: {what}"),
            BarError::IoBar { function, bar } => write!(f, "{function} BAR{bar} is an I/O BAR"),
            BarError::NotPrefetchable { function, bar } => {
                write!(f, "{function} BAR{bar} is not prefetchable: it may not be mapped write-combined")
            }
            BarError::Unassigned { function, bar } => write!(f, "{function} BAR{bar} has no address assigned"),
            BarError::TooSmall { function, bar, size, wanted } => {
                write!(f, "{function} BAR{bar} is {size:#x} bytes; {wanted:#x} asked for")
            }
            BarError::Enable { function, error } => write!(f, "{function}: enabling decode: {error:?}"),
            BarError::Map { function, bar, error } => write!(f, "{function} BAR{bar}: mapping: {error}"),
        }
    }
}

/// For the in-kernel tests, whose failures are messages.
impl From<BarError> for String {
    fn from(e: BarError) -> String {
        alloc::format!("{e}")
    }
}

/// Turns on memory decode for `f` (and bus mastering if asked; other command bits stay) and maps
/// `len` bytes of its prefetchable memory BAR `bar` write-combined. Refuses a BAR that is not
/// memory, not prefetchable (WC would merge or repeat accesses with side effects; PCI Local Bus
/// Specification 3.0, §6.2.5.1), unassigned, or smaller than `len`.
pub fn map_prefetchable_bar(f: &PciFunction, bar: &Bar, len: u64, bus_master: bool) -> Result<WcWindow, BarError> {
    let (function, index) = (f.address, bar.index);
    if !bar.is_memory() {
        return Err(BarError::IoBar { function, bar: index });
    }
    if !bar.prefetchable {
        return Err(BarError::NotPrefetchable { function, bar: index });
    }
    if bar.address == 0 {
        return Err(BarError::Unassigned { function, bar: index });
    }
    if len == 0 || len > bar.size {
        return Err(BarError::TooSmall { function, bar: index, size: bar.size, wanted: len });
    }
    let access = access().ok_or(BarError::NoConfigAccess)?;
    pci::enable(access, function, Decode { memory: true, io: false, bus_master })
        .map_err(|error| BarError::Enable { function, error })?;
    WcWindow::map(bar.address, len).map_err(|error| BarError::Map { function, bar: index, error })
}

fn make_access(d: &crate::platform_acpi::Discovered) -> (Access, Vec<RootRange>) {
    let mut windows = Vec::new();
    for s in d.mcfg() {
        let range = RootRange::new(s.segment, s.bus_start, s.bus_end);
        // The MCFG base is the address of bus 0; the window starts at bus_start.
        let base = s.base_address + ((s.bus_start as u64) << 20);
        let len = ((s.bus_end as u64 - s.bus_start as u64) + 1) << 20;
        match Mmio::map(base, len) {
            Ok(window) => windows.push((range, window)),
            Err(e) => {
                log::warn!(target: "pci", "cannot map ECAM window {base:#x}+{len:#x}: {e}; skipping segment {}", s.segment)
            }
        }
    }
    if windows.is_empty() {
        log::info!(target: "pci", "configuration access: ports 0xCF8/0xCFC");
        (Access::Ports(PortAccess { lock: Mutex::new(()) }), alloc::vec![RootRange::legacy_ports()])
    } else {
        let roots = windows.iter().map(|(r, _)| *r).collect();
        log::info!(target: "pci", "configuration access: ECAM, {} window(s)", windows.len());
        (Access::Ecam(EcamAccess { windows }), roots)
    }
}

pub fn scan(d: &crate::platform_acpi::Discovered, handshake: bool) {
    let (access, roots) = make_access(d);
    let access = ACCESS.call_once(|| access);
    let functions = pci::enumerate(access.get(), &roots);
    for f in &functions {
        for line in pci::describe(f) {
            log::info!(target: "pci", "{line}");
        }
    }
    let n = functions.len();
    FUNCTIONS.call_once(|| functions);
    if handshake {
        log::info!(target: "pci", "pci: scan complete, {n} functions; waiting for host");
        let deadline = crate::time::Deadline::after_ms(60_000);
        loop {
            if crate::serial::try_read().is_some() {
                log::info!(target: "pci", "host acknowledged the scan");
                break;
            }
            if deadline.expired() {
                log::warn!(target: "pci", "timed out after 60 s waiting for the host's acknowledgement of the PCI scan");
                break;
            }
            core::hint::spin_loop();
        }
    } else {
        log::info!(target: "pci", "scan complete, {n} functions");
    }
}
