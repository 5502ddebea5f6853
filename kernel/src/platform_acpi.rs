//! ACPI in the kernel: the physical-memory mapper the parser reads through, and the use of
//! what it found (time source, I/O APICs, CPUs). Parsing itself is `kernel::acpi` (host-tested
//! against real server tables).

use crate::arch::{apic, ioapic};
use crate::mem::firmware;
use crate::mem::heap::Arena;
use bootloader_api::BootInfo;
use kernel::acpi::{self, PhysMapper, PlatformTables, Polarity, TriggerMode};

/// Reads firmware tables as copies ([`firmware::read`]: through the RAM mapping when the range
/// is there, otherwise through a fresh write-back mapping, as SeaBIOS keeps its tables in
/// E820-reserved memory; never the kernel's own RAM), kept until the mapper is dropped.
#[derive(Default)]
pub struct KernelMapper {
    copies: Arena,
}

impl PhysMapper for KernelMapper {
    fn map(&self, phys: u64, len: usize) -> Option<&[u8]> {
        Some(self.copies.keep(firmware::read(phys, len)?))
    }
}

/// What the platform steps need from ACPI, with the fallbacks applied.
pub struct Discovered {
    pub tables: Option<PlatformTables>,
}

impl Discovered {
    pub fn local_apic_address(&self) -> Option<u64> {
        self.tables.as_ref()?.madt.as_ref().map(|m| m.local_apic_address)
    }
    pub fn mcfg(&self) -> &[acpi::McfgSegment] {
        self.tables.as_ref().map(|t| t.mcfg.as_slice()).unwrap_or(&[])
    }
    pub fn madt(&self) -> Option<&acpi::MadtInfo> {
        self.tables.as_ref()?.madt.as_ref()
    }
    pub fn hpet(&self) -> Option<&acpi::HpetInfo> {
        self.tables.as_ref()?.hpet.as_ref()
    }
    pub fn dmar(&self) -> Option<&acpi::dmar::Dmar> {
        self.tables.as_ref()?.dmar.as_ref()
    }
    pub fn ivrs(&self) -> Option<&acpi::ivrs::Ivrs> {
        self.tables.as_ref()?.ivrs.as_ref()
    }
}

pub fn discover(boot_info: &BootInfo) -> Discovered {
    let mapper = KernelMapper::default();
    let rsdp = match boot_info.rsdp_addr.into_option() {
        Some(a) => Some(a),
        None => match acpi::find_rsdp_in_bios_areas(&mapper) {
            Ok(a) => {
                log::info!(target: "acpi", "RSDP found at {a:#x} by scanning the BIOS areas");
                Some(a)
            }
            Err(e) => {
                log::warn!(target: "acpi", "no RSDP from the loader and none in the BIOS areas ({e}): booting without ACPI");
                None
            }
        },
    };
    let tables = rsdp.and_then(|r| match acpi::parse_platform(&mapper, r) {
        Ok(t) => Some(t),
        Err(e) => {
            log::warn!(target: "acpi", "ACPI tables unusable ({e}): booting without ACPI");
            None
        }
    });
    if let Some(t) = &tables {
        log::info!(target: "acpi", "{t}");
        for w in &t.warnings {
            log::warn!(target: "acpi", "{w}");
        }
        match &t.madt {
            Some(m) => {
                let usable = m.cpus.iter().filter(|c| c.usable()).count();
                log::info!(
                    target: "acpi",
                    "MADT: {} CPUs ({} usable, {} x2APIC entries), {} I/O APICs, {} overrides, local APIC at {:#x}",
                    m.cpus.len(),
                    usable,
                    m.cpus.iter().filter(|c| c.x2apic).count(),
                    m.io_apics.len(),
                    m.overrides.len(),
                    m.local_apic_address
                );
            }
            None => log::warn!(target: "acpi", "no usable MADT: running on the boot CPU only"),
        }
        for s in &t.mcfg {
            log::info!(target: "acpi", "MCFG: segment {} buses {:#04x}..{:#04x} at {:#x}", s.segment, s.bus_start, s.bus_end, s.base_address);
        }
        match &t.hpet {
            Some(h) => {
                log::info!(target: "acpi", "HPET at {:#x}, {} comparators, {}-bit", h.base_address, h.comparators, if h.counter_64bit { 64 } else { 32 })
            }
            None => log::warn!(target: "acpi", "no HPET table: calibrating time with the PIT"),
        }
        match &t.dmar {
            Some(d) => {
                log::info!(target: "acpi", "{d}");
                for u in &d.units {
                    log::info!(
                        target: "acpi",
                        "DMAR: remapping unit at {:#x}, segment {}, {}{} device scope(s)",
                        u.register_base,
                        u.segment,
                        if u.includes_all() { "every device not listed elsewhere, " } else { "" },
                        u.scopes.len()
                    );
                }
            }
            None => log::info!(target: "acpi", "no DMAR table: no Intel IOMMU"),
        }
        if let Some(v) = &t.ivrs {
            log::info!(target: "acpi", "{v}");
        }
    }
    Discovered { tables }
}

static DISCOVERED: spin::Once<Discovered> = spin::Once::new();

/// Keeps what ACPI said for later users (drivers, tests).
pub fn keep(d: Discovered) {
    DISCOVERED.call_once(|| d);
}

pub fn discovered() -> Option<&'static Discovered> {
    DISCOVERED.get()
}

pub fn bring_up_time(d: &Discovered) {
    if let Some(h) = d.hpet() {
        match crate::time::calibrate_with_hpet(h.base_address) {
            Ok(()) => {
                log::info!(target: "time", "TSC calibrated against the HPET: {} kHz", crate::time::tsc_per_ms());
                return;
            }
            Err(e) => log::warn!(target: "time", "HPET unusable ({e}); falling back to the PIT"),
        }
    }
    crate::time::calibrate_with_pit();
    log::info!(target: "time", "TSC calibrated against the PIT: {} kHz", crate::time::tsc_per_ms());
}

pub fn bring_up_ioapics(d: &Discovered) {
    let Some(madt) = d.madt() else { return };
    for io in &madt.io_apics {
        if let Err(e) = ioapic::add(io.id, io.address as u64, io.gsi_base) {
            log::warn!(target: "apic", "I/O APIC {} at {:#x} unusable: {e}", io.id, io.address);
        }
    }
}

/// The GSI, polarity (active low?) and trigger (level?) of ISA IRQ `irq` after MADT overrides
/// (ACPI 6.5, section 5.2.12.5; ISA default: identity mapped, active high, edge).
pub fn isa_irq_route(d: &Discovered, irq: u8) -> (u32, bool, bool) {
    let o = d.madt().and_then(|m| m.overrides.iter().find(|o| o.bus == 0 && o.source_irq == irq));
    match o {
        Some(o) => (o.gsi, o.polarity == Polarity::ActiveLow, o.trigger == TriggerMode::Level),
        None => (irq as u32, false, false),
    }
}

/// Routes ISA IRQ `irq` to a freshly allocated vector on this CPU.
pub fn route_isa_irq(d: &Discovered, irq: u8) -> Option<u8> {
    let vector = apic::alloc_vectors(1).ok()?;
    let (gsi, low, level) = isa_irq_route(d, irq);
    ioapic::route(gsi, vector, apic::id(), low, level).ok()?;
    Some(vector)
}
