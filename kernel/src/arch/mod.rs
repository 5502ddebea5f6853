//! x86_64 machine access. All of the kernel's `unsafe` that touches the CPU lives under
//! `arch/` and `mem/`; each use says why it is sound.

// unsafe here: x86_64 machine access: ports, MSRs, control registers, descriptor tables, interrupt entry.
#![allow(unsafe_code)]

pub mod apic;
pub mod backtrace;
pub mod boot_cpu;
pub mod gdt;
pub mod handoff;
pub mod idt;
pub mod ioapic;
pub mod ktest_section;

use core::arch::asm;

/// Port I/O. The caller names a port that belongs to the device it drives.
pub mod port {
    use core::arch::asm;
    pub fn outb(port: u16, v: u8) {
        // SAFETY: port writes have no memory effects visible to Rust.
        unsafe { asm!("out dx, al", in("dx") port, in("al") v, options(nomem, nostack, preserves_flags)) }
    }
    pub fn inb(port: u16) -> u8 {
        let v: u8;
        // SAFETY: as above.
        unsafe { asm!("in al, dx", in("dx") port, out("al") v, options(nomem, nostack, preserves_flags)) }
        v
    }
    pub fn outl(port: u16, v: u32) {
        // SAFETY: as above.
        unsafe { asm!("out dx, eax", in("dx") port, in("eax") v, options(nomem, nostack, preserves_flags)) }
    }
    pub fn inl(port: u16) -> u32 {
        let v: u32;
        // SAFETY: as above.
        unsafe { asm!("in eax, dx", in("dx") port, out("eax") v, options(nomem, nostack, preserves_flags)) }
        v
    }
}

/// COM1, the 16550 UART of the serial console.
pub mod uart {
    /// COM1's I/O base (the PC/AT standard address; QEMU's `-serial` is COM1).
    pub const COM1: u16 = 0x3F8;

    /// A handle to COM1's UART. More than one may exist (the panic path makes its own rather
    /// than wait for a lock): port I/O has no memory effects, so at worst characters interleave.
    pub fn com1() -> uart_16550::SerialPort {
        // SAFETY: `SerialPort::new` trusts that the eight ports from its base are a 16550; 0x3F8
        // is COM1 on every PC platform the kernel boots on (QEMU pc/q35, servers with a BMC
        // serial-over-LAN), and nothing else in the kernel uses those ports.
        unsafe { uart_16550::SerialPort::new(COM1) }
    }
}

pub fn rdmsr(msr: u32) -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: callers read architectural MSRs whose presence they checked (CPUID) or that
    // every x86_64 CPU has.
    unsafe { asm!("rdmsr", in("ecx") msr, out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags)) }
    (hi as u64) << 32 | lo as u64
}

/// # Safety
/// Writing an MSR changes machine state; the caller knows the MSR and the value are right.
pub unsafe fn wrmsr(msr: u32, value: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!("wrmsr", in("ecx") msr, in("eax") value as u32, in("edx") (value >> 32) as u32, options(nostack, preserves_flags))
    }
}

pub fn cpuid(leaf: u32, subleaf: u32) -> core::arch::x86_64::CpuidResult {
    core::arch::x86_64::__cpuid_count(leaf, subleaf)
}

pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

pub fn interrupts_enabled() -> bool {
    let flags: u64;
    // SAFETY: reads RFLAGS.
    unsafe { asm!("pushfq", "pop {}", out(reg) flags, options(nomem, preserves_flags)) }
    flags & (1 << 9) != 0
}

pub fn enable_interrupts() {
    // SAFETY: the IDT is loaded before anyone calls this (see main).
    unsafe { asm!("sti", options(nomem, nostack)) }
}

pub fn disable_interrupts() {
    // SAFETY: clearing IF is always sound.
    unsafe { asm!("cli", options(nomem, nostack)) }
}

pub fn without_interrupts<R>(f: impl FnOnce() -> R) -> R {
    let was = interrupts_enabled();
    if was {
        disable_interrupts();
    }
    let r = f();
    if was {
        enable_interrupts();
    }
    r
}

pub fn halt() {
    // SAFETY: waits for the next interrupt.
    unsafe { asm!("hlt", options(nomem, nostack, preserves_flags)) }
}

pub fn read_cr2() -> u64 {
    let v: u64;
    // SAFETY: reading CR2 has no side effects.
    unsafe { asm!("mov {}, cr2", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

pub fn read_cr3() -> u64 {
    let v: u64;
    // SAFETY: reading CR3 has no side effects.
    unsafe { asm!("mov {}, cr3", out(reg) v, options(nomem, nostack, preserves_flags)) }
    v
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QemuExit {
    /// QEMU exits with (0x10 << 1) | 1 = 33.
    Success = 0x10,
    /// QEMU exits with (0x11 << 1) | 1 = 35.
    Failure = 0x11,
}

/// Port of QEMU's `isa-debug-exit` device as the harness configures it (`iobase=0xf4`).
const DEBUG_EXIT_PORT: u16 = 0xf4;

/// Leaves QEMU through isa-debug-exit; on a machine without it (bare metal), halts forever.
pub fn exit_qemu(code: QemuExit) -> ! {
    port::outl(DEBUG_EXIT_PORT, code as u32);
    // Still here: not under QEMU with isa-debug-exit. Reset is not wanted on a server console;
    // halt so the last words stay on the screen.
    loop {
        disable_interrupts();
        halt();
    }
}

/// Reads `0xffff_9000_0bad_f000`, which nothing maps: the page fault the harness's
/// `pvh-q35-fault-report` case checks the exception report with. Does not return normally (the
/// report ends the run); returns the value if something did map it.
pub fn read_unmapped_for_the_fault_report() -> u64 {
    // SAFETY: none needed for soundness: the address is unmapped, so the load faults and the
    // exception handler ends the run before any value is used.
    unsafe { core::ptr::read_volatile(0xffff_9000_0bad_f000 as *const u64) }
}
