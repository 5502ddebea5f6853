//! `probe`: a read-only dump of one GPU's BAR0 state for bug reports (the kernel's `probe`
//! command-line word). It reads, and never writes:
//! - the chip (`NV_PMC_BOOT_0`, `NV_PMC_BOOT_42`) and `NV_PMC_ENABLE`;
//! - the VBIOS header in the PROM window (signature, PCI data structure, images, version);
//! - each falcon of the family's HAL (GSP, SEC2 or FSP): `CPUCTL`, the mailboxes, `OS`, and
//!   whether its RISC-V core runs; the FSP's boot status where the chip has one;
//! - WPR2 (`NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI`) and the GFW boot state
//!   (`NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT`).
//!
//! Every register access goes through [`ReadOnly`], which forwards reads and swallows writes,
//! counting them: the report ends with that count, which must be 0 (a model GPU confirms it
//! with its own count of the writes that reached it).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::Cell;

use crate::chip;
use crate::device::PromReader;
use crate::hw::falcon::{
    NV_PFALCON_FALCON_CPUCTL, NV_PFALCON_FALCON_MAILBOX0, NV_PFALCON_FALCON_MAILBOX1, NV_PFALCON_FALCON_OS,
};
use crate::hw::fb::{NV_PFB_PRI_MMU_WPR2_ADDR_HI, NV_PFB_PRI_MMU_WPR2_ADDR_LO};
use crate::hw::gc6::{gfw_boot_completed, NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT};
use crate::hw::pmc::{NV_PMC_BOOT_0, NV_PMC_BOOT_42, NV_PMC_ENABLE};
use crate::hw::vbios::OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR;
use crate::hw::RegisterIo;
use crate::vbios::{Bar0Read, Vbios, NV_PROM_DATA_BASE};

/// Register I/O that reads and never writes: a write is counted and dropped.
pub struct ReadOnly<'a, R: RegisterIo + ?Sized> {
    io: &'a R,
    writes: Cell<u32>,
}

impl<'a, R: RegisterIo + ?Sized> ReadOnly<'a, R> {
    pub fn new(io: &'a R) -> Self {
        ReadOnly { io, writes: Cell::new(0) }
    }
    /// Writes attempted (and dropped) so far.
    pub fn writes(&self) -> u32 {
        self.writes.get()
    }
}

impl<R: RegisterIo + ?Sized> RegisterIo for ReadOnly<'_, R> {
    fn read32(&self, offset: u32) -> u32 {
        self.io.read32(offset)
    }
    fn write32(&self, _offset: u32, _value: u32) {
        self.writes.set(self.writes.get().saturating_add(1));
    }
}

/// What `probe` read of one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeReport {
    /// One line per fact, in reading order.
    pub lines: Vec<String>,
    /// Register writes the probe attempted (always 0; each would have been dropped).
    pub attempted_writes: u32,
}

/// Reads one GPU's state through `io` (BAR0), writing nothing.
pub fn probe<R: RegisterIo + ?Sized>(io: &R) -> ProbeReport {
    let ro = ReadOnly::new(io);
    let mut lines = Vec::new();
    let boot0 = NV_PMC_BOOT_0::read(&ro).raw();
    let boot42 = NV_PMC_BOOT_42::read(&ro).raw();
    let identity = chip::identify(boot0, boot42);
    match &identity {
        Ok(id) => lines.push(format!("BOOT0 {boot0:#010x}, BOOT42 {boot42:#010x}: {id}")),
        Err(e) => lines.push(format!("BOOT0 {boot0:#010x}, BOOT42 {boot42:#010x}: not identified: {e}")),
    }
    lines.push(format!("PMC_ENABLE {:#010x}", NV_PMC_ENABLE::read(&ro).raw()));
    vbios_lines(&ro, &mut lines);
    if let Ok(id) = identity {
        let hal = id.chipset.hal();
        for unit in hal.falcons {
            let b = unit.base;
            let cpuctl = NV_PFALCON_FALCON_CPUCTL::read(&ro, b);
            let mut line = format!(
                "{:?} falcon at {b:#08x}: CPUCTL {:#010x} (halted {}), MAILBOX0 {:#010x}, MAILBOX1 {:#010x}, OS {:#010x}",
                unit.engine,
                cpuctl.raw(),
                cpuctl.halted(),
                NV_PFALCON_FALCON_MAILBOX0::read(&ro, b).raw(),
                NV_PFALCON_FALCON_MAILBOX1::read(&ro, b).raw(),
                NV_PFALCON_FALCON_OS::read(&ro, b).raw(),
            );
            if let Some(riscv) = unit.riscv_base {
                line.push_str(&format!(", RISC-V at {riscv:#08x} active {}", (hal.riscv_active)(&ro, riscv)));
            }
            lines.push(line);
        }
        if let Some(status) = hal.fsp_boot_status {
            lines.push(format!("FSP boot status ({status:#08x}): {:#010x}", ro.read32(status)));
        }
    }
    let lo = NV_PFB_PRI_MMU_WPR2_ADDR_LO::read(&ro);
    let hi = NV_PFB_PRI_MMU_WPR2_ADDR_HI::read(&ro);
    match hi.last_unit_address() {
        Some(end) => lines.push(format!("WPR2 {:#x}..={:#x}", lo.start_address(), end + 0xfff)),
        None => lines.push(format!("WPR2 not set up (ADDR_LO {:#010x}, ADDR_HI {:#010x})", lo.raw(), hi.raw())),
    }
    let gfw = NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::read(&ro);
    lines.push(format!(
        "GFW boot: {:#010x} ({})",
        gfw.raw(),
        if gfw_boot_completed(&ro) { "completed" } else { "not completed" }
    ));
    ProbeReport { lines, attempted_writes: ro.writes() }
}

fn vbios_lines<R: RegisterIo + ?Sized>(ro: &ReadOnly<'_, R>, lines: &mut Vec<String>) {
    let prom = PromReader(ro);
    let word0 = prom.read_u32(NV_PROM_DATA_BASE);
    let pcir_word = prom.read_u32(NV_PROM_DATA_BASE + OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR);
    lines.push(format!(
        "VBIOS header: signature {:#06x}, PCI data structure at {:#06x}",
        word0 & 0xffff,
        pcir_word & 0xffff
    ));
    match Vbios::from_prom(&prom) {
        Ok(v) => {
            let version = v.version().map_or_else(|| String::from("unknown"), |v| format!("{v}"));
            lines.push(format!("VBIOS: {} ROM images, version {version}", v.images().len()));
        }
        Err(e) => lines.push(format!("VBIOS: not readable: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Recorder(Cell<u32>);
    impl RegisterIo for Recorder {
        fn read32(&self, offset: u32) -> u32 {
            offset
        }
        fn write32(&self, _: u32, _: u32) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn read_only_io_forwards_reads_and_drops_and_counts_writes() {
        let inner = Recorder(Cell::new(0));
        let ro = ReadOnly::new(&inner);
        assert_eq!(ro.read32(0x1234), 0x1234);
        ro.write32(0x10, 1);
        ro.write32(0x14, 2);
        assert_eq!((ro.writes(), inner.0.get()), (2, 0));
    }

    #[test]
    fn garbage_registers_give_a_report_not_a_panic() {
        let inner = Recorder(Cell::new(0));
        let report = probe(&inner);
        assert_eq!(report.attempted_writes, 0);
        assert_eq!(inner.0.get(), 0);
        assert!(report.lines[0].starts_with("BOOT0 0x00000000, BOOT42 0x00000a00"), "{:?}", report.lines);
        assert!(report.lines.iter().any(|l| l.starts_with("VBIOS")), "{:?}", report.lines);
    }
}
