//! `probe` (kernel command-line word): every GPU, real or model, dumped read-only for bug
//! reports, then the machine exits. Per GPU: the PCI configuration space (the model's own for
//! a model GPU), the BARs, and what `nvgpu::probe` reads through BAR0 (BOOT0/BOOT42, PMC
//! enable, the VBIOS header, the GSP/FSP/SEC2 falcons, WPR2, the GFW boot state). Nothing is
//! written: not a register, not the PCI command register (a real GPU whose firmware left its
//! memory decode off gets its config space dumped and no register read). The last line is
//! `probe: N register writes`; N is the writes the probe attempted, which it drops, plus, on a
//! model, the writes the model saw arrive, so 0 is confirmed by the device itself.

use alloc::format;
use alloc::string::String;

use crate::gpu_types::MmioBar0;
use crate::mem::mmio::Mmio;
use kernel::pci::PciFunction;

use crate::gpu::{is_nvidia_gpu, BAR0_SIZE};
use kernel::pci::CommandRegister;

fn config_lines(name: &str, read: &dyn Fn(u16) -> u32) {
    for row in (0u16..256).step_by(16) {
        let words: [u32; 4] = core::array::from_fn(|i| read(row + 4 * i as u16));
        log::info!(
            target: "probe",
            "{name}: config {row:#04x}: {:08x} {:08x} {:08x} {:08x}",
            words[0],
            words[1],
            words[2],
            words[3]
        );
    }
}

fn report(name: &str, report: &nvgpu::probe::ProbeReport) {
    for line in &report.lines {
        log::info!(target: "probe", "{name}: {line}");
    }
}

fn probe_real(f: &PciFunction) -> u64 {
    let name = format!("gpu {}", f.address);
    log::info!(target: "probe", "{name}: [{:04x}:{:04x}] class {:02x}{:02x}{:02x} rev {:#04x}", f.vendor_id, f.device_id, f.class, f.subclass, f.prog_if, f.revision);
    let Some(access) = crate::platform_pci::access() else {
        log::error!(target: "probe", "{name}: no PCI configuration access");
        return 0;
    };
    config_lines(&name, &|off| access.read32(f.address, off));
    for bar in f.bars.iter().flatten() {
        log::info!(
            target: "probe",
            "{name}: BAR{} {:?}{} at {:#x}, {:#x} bytes",
            bar.index,
            bar.kind,
            if bar.prefetchable { " prefetchable" } else { "" },
            bar.address,
            bar.size
        );
    }
    let memory_decode =
        kernel::pci::command(access, f.address).is_ok_and(|c| c.contains(CommandRegister::MEMORY_ENABLE));
    let bar0 = f.bars[0].filter(|b| b.is_memory() && b.address != 0 && b.size >= BAR0_SIZE);
    match bar0 {
        Some(b) if memory_decode => match Mmio::map(b.address, BAR0_SIZE) {
            Ok(mmio) => {
                let bar0 = MmioBar0::over(mmio);
                let r = nvgpu::probe::probe(&bar0);
                report(&name, &r);
                u64::from(r.attempted_writes)
            }
            Err(e) => {
                log::error!(target: "probe", "{name}: BAR0 not mapped: {e:?}");
                0
            }
        },
        Some(_) => {
            log::info!(target: "probe", "{name}: memory decode is off: no register read (the probe does not turn it on)");
            0
        }
        None => {
            log::error!(target: "probe", "{name}: BAR0 is not an assigned 16 MiB memory BAR: no register read");
            0
        }
    }
}

fn probe_model(i: usize, chip: &str) -> Result<u64, String> {
    let (model, _) = crate::gpu_model::create(chip).map_err(|e| format!("{e}"))?;
    let name = format!("model gpu{i} ({chip})");
    let p = model.config().placement;
    log::info!(
        target: "probe",
        "{name}: on no bus; its board sits at {:04x}:{:02x}:{:02x}.{} (BAR0 {:#x}, BAR1 {:#x}, BAR2 {:#x})",
        p.segment,
        p.bus,
        p.device,
        p.function,
        p.bar0,
        p.bar1,
        p.bar2
    );
    config_lines(&name, &|off| model.pci_config_read32(off));
    let before = model.register_writes();
    let r = nvgpu::probe::probe(&*model);
    report(&name, &r);
    let seen = model.register_writes() - before;
    log::info!(target: "probe", "{name}: the model saw {seen} register writes");
    for e in model.errors() {
        log::error!(target: "probe", "{name}: the model rejected an access: {e}");
    }
    Ok(u64::from(r.attempted_writes) + seen)
}

/// Dumps every GPU; `true` when every one was read and nothing was written.
pub fn run(cmdline: &kernel::cmdline::CmdLine<'_>) -> bool {
    let mut writes = 0u64;
    let mut ok = true;
    let real: alloc::vec::Vec<&PciFunction> =
        crate::platform_pci::functions().iter().filter(|f| is_nvidia_gpu(f)).collect();
    for f in &real {
        writes += probe_real(f);
    }
    if real.is_empty() {
        let spec = cmdline.value("gpu").unwrap_or("model:gh100");
        for (i, item) in spec.split(',').filter(|s| *s != "none").enumerate() {
            match item
                .strip_prefix("model:")
                .ok_or_else(|| format!("'{item}' is not model:<chip>"))
                .and_then(|c| probe_model(i, c))
            {
                Ok(n) => writes += n,
                Err(e) => {
                    log::error!(target: "probe", "gpu={spec}: {e}");
                    ok = false;
                }
            }
        }
    }
    log::info!(target: "probe", "{writes} register writes");
    ok && writes == 0
}
