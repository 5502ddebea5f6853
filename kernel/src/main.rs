//! The unikernel binary: loader entry, platform bring-up, then GPUs and the payload.
//! Boot flow and layout: ../shared/DESIGN.md ("One boot, as data flows").
#![no_std]
#![no_main]

extern crate alloc;

mod app_runner;
mod arch;
mod boot_timeline;
mod gpu;
mod gpu_model;
mod gpu_types;
mod gsp;
mod ktest;
mod ktests;
mod managed;
mod mem;
mod platform;
mod platform_acpi;
mod platform_pci;
mod probe;
mod rt;
mod serial;
mod time;

use bootloader_api::BootInfo;
// The boot trampoline (32-bit entry, page tables, long mode): assembly, unsafe by nature.
#[allow(unsafe_code)]
mod trampoline {
    core::arch::global_asm!(include_str!("../../boot/src/entry.S"), options(att_syntax));
}

static EXTRAS: spin::Once<&'static boot::BootExtras> = spin::Once::new();

/// The loader information BootInfo has no field for: command line, modules by name.
pub fn boot_extras() -> &'static boot::BootExtras {
    // Set in `_boot_entry64` before `kernel_main`, which is where every caller runs from.
    EXTRAS.get().copied().expect("boot extras are recorded at entry, before kernel_main")
}

/// Called by the trampoline in `entry.S` in long mode on the boot stack (an exported symbol:
/// `unsafe_code` flags `no_mangle`).
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
extern "C" fn _boot_entry64(protocol: u32, magic: u32, info: u32) -> ! {
    time::mark_entry();
    serial::init();
    match arch::handoff::handoff(protocol, magic, info) {
        Ok((boot_info, extras)) => {
            EXTRAS.call_once(|| extras);
            kernel_main(boot_info)
        }
        Err(e) => {
            println!("boot: cannot use the loader's information: {e}");
            arch::exit_qemu(arch::QemuExit::Failure)
        }
    }
}

fn kernel_main(boot_info: &'static mut BootInfo) -> ! {
    let outcome = platform::bring_up(boot_info);
    let extras = boot_extras();
    let cmdline = kernel::cmdline::CmdLine::parse(extras.cmdline());
    if outcome.is_ok() && cmdline.flag("probe") {
        // A read-only dump for bug reports: no GPU is brought up, nothing is written.
        let ok = probe::run(&cmdline);
        arch::exit_qemu(if ok { arch::QemuExit::Success } else { arch::QemuExit::Failure });
    }
    if outcome.is_ok() {
        gpu::bring_up(&cmdline);
        boot_timeline::mark("boot done");
        boot_timeline::report("boot");
    }
    // Deliberate faults, for the harness to check the exception report end to end.
    match cmdline.value("fault") {
        Some("pagefault") => {
            let v = arch::read_unmapped_for_the_fault_report();
            log::error!(target: "kernel", "read of an unmapped address returned {v:#x}");
        }
        Some("panic") => panic!("panic requested on the command line"),
        _ => {}
    }
    if cmdline.flag("test") {
        let (passed, failed) = ktest::run_all(cmdline.value("ktest").unwrap_or(""));
        // GPUs are handed back in order before the machine goes away: a failed unload fails
        // the run.
        let unload_failures = gsp::unload_all();
        let ok = failed == 0 && passed > 0 && outcome.is_ok() && unload_failures == 0;
        arch::exit_qemu(if ok { arch::QemuExit::Success } else { arch::QemuExit::Failure });
    }
    if let Err(e) = outcome {
        log::error!(target: "kernel", "platform bring-up failed: {e}");
        arch::exit_qemu(arch::QemuExit::Failure);
    }
    if cmdline.flag("app") {
        let ok = app_runner::run();
        let unload_failures = gsp::unload_all();
        arch::exit_qemu(if ok && unload_failures == 0 { arch::QemuExit::Success } else { arch::QemuExit::Failure });
    }
    log::info!(target: "kernel", "no payload configured; shutting down");
    let unload_failures = gsp::unload_all();
    arch::exit_qemu(if unload_failures == 0 { arch::QemuExit::Success } else { arch::QemuExit::Failure })
}
