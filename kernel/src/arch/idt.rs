//! The IDT, the 256 entry stubs and the dispatcher.
//!
//! Each stub pushes a dummy error code where the CPU pushes none (Intel SDM vol. 3A, table 6-1:
//! vectors 8, 10-14, 17, 21, 29 and 30 push one), then its vector, and jumps to a common path
//! that saves all general registers and the FPU/SSE state (`fxsave64`) before calling Rust,
//! and restores them before `iretq`. Every gate names an IST stack (see `gdt.rs`).

use super::gdt;
use core::arch::global_asm;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};

global_asm!(
    r#"
    .altmacro
    .macro isr_stub n
    .global isr_stub_\n
isr_stub_\n:
    .if (\n == 8) || (\n == 10) || (\n == 11) || (\n == 12) || (\n == 13) || (\n == 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
    .else
    push 0
    .endif
    push \n
    jmp isr_common
    .endm

    .macro isr_addr n
    .quad isr_stub_\n
    .endm

    .section .text.isr, "ax"
    .set i, 0
    .rept 256
    isr_stub %i
    .set i, i + 1
    .endr

isr_common:
    push rax
    push rbx
    push rcx
    push rdx
    push rsi
    push rdi
    push rbp
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    mov rbx, rsp
    sub rsp, 512
    and rsp, ~0xf
    fxsave64 [rsp]
    mov rdi, rbx
    cld
    call {dispatch}
    fxrstor64 [rsp]
    mov rsp, rbx
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rbp
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rbx
    pop rax
    add rsp, 16
    iretq

    .section .rodata.isr, "a"
    .balign 8
    .global isr_stub_table
isr_stub_table:
    .set i, 0
    .rept 256
    isr_addr %i
    .set i, i + 1
    .endr
    .noaltmacro
    "#,
    dispatch = sym interrupt_dispatch,
);

unsafe extern "C" {
    static isr_stub_table: [u64; 256];
    fn arch_probe_load(addr: u64) -> u64;
}

// The probe: one 3-byte load (`mov rax, [rdi]`: 48 8b 07) at the function's first byte, so a
// page fault it raises has that address in rip, and resuming 3 bytes later reaches the `ret`.
global_asm!(
    r#"
    .section .text.probe_load, "ax"
    .global arch_probe_load
arch_probe_load:
    mov rax, [rdi]
    ret
    "#
);
const PROBE_LOAD_LEN: u64 = 3;

/// Loads the 8 bytes at `addr` with one instruction whose page fault a vector-14 handler may
/// skip ([`TrapFrame::skip_probe_load`]), for tests of the fault path. Only addresses that no
/// Rust object can occupy are probed: unmapped ones, and the managed window (which holds none,
/// see [`crate::mem::managed_window`]); `None` for any other, without touching it. A fault no
/// handler skips goes to the page-fault service, or ends the run in the exception report.
pub fn probe_load(addr: u64) -> Option<u64> {
    let managed = (crate::mem::paging::MANAGED_BASE..crate::mem::paging::MANAGED_LIMIT).contains(&addr);
    if !managed && crate::mem::paging::translate(addr).is_some() {
        return None;
    }
    // SAFETY: `arch_probe_load` (above) reads 8 bytes at `addr` and returns them, touching
    // nothing else; `addr` is unmapped (the load faults: skipped by a handler, served, or
    // fatal) or in the managed window, where no Rust object lives.
    Some(unsafe { arch_probe_load(addr) })
}

/// Executes `int3` with r12 holding `value` and returns what r12 holds after the #BP handler
/// returned: `value`, when the entry path saved and restored the registers (for tests). Without
/// an installed vector-3 handler the breakpoint is fatal.
pub fn breakpoint_keeping_r12(value: u64) -> u64 {
    let r: u64;
    // SAFETY: int3 traps into vector 3; an installed handler returns to the next instruction
    // (handlers cannot move rip or change registers, see `TrapFrame`), and without one the run
    // ends in the exception report. r12 is declared clobbered, so nothing of the compiler's
    // lives in it.
    unsafe {
        core::arch::asm!("mov r12, {v}", "int3", "mov {r}, r12", v = in(reg) value, r = out(reg) r, out("r12") _)
    };
    r
}

/// The registers as the entry path saved them, lowest address first. Handlers see it only
/// through [`TrapFrame::skip_probe_load`]: the interrupted code resumes with the registers it
/// had, where it was (a handler that could move `rip` or change registers could make any
/// code do anything).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TrapFrame {
    r15: u64,
    r14: u64,
    r13: u64,
    r12: u64,
    r11: u64,
    r10: u64,
    r9: u64,
    r8: u64,
    rbp: u64,
    rdi: u64,
    rsi: u64,
    rdx: u64,
    rcx: u64,
    rbx: u64,
    rax: u64,
    vector: u64,
    error_code: u64,
    rip: u64,
    cs: u64,
    rflags: u64,
    rsp: u64,
    ss: u64,
}

impl TrapFrame {
    /// When the exception was raised by [`probe_load`]'s load, resumes after it (the probe
    /// then returns 0) and returns `true`; otherwise changes nothing and returns `false`.
    pub fn skip_probe_load(&mut self) -> bool {
        let load = arch_probe_load as unsafe extern "C" fn(u64) -> u64 as usize as u64;
        if self.rip != load {
            return false;
        }
        self.rip += PROBE_LOAD_LEN;
        self.rax = 0;
        true
    }
}

/// An interrupt gate descriptor (Intel SDM vol. 3A, figure 6-8 "64-Bit IDT Gate Descriptors").
#[repr(C)]
#[derive(Clone, Copy)]
struct Gate {
    offset_low: u16,
    selector: u16,
    ist: u8,
    type_attr: u8,
    offset_mid: u16,
    offset_high: u32,
    reserved: u32,
}

#[repr(C, align(16))]
struct Idt([Gate; 256]);

static mut IDT: Idt =
    Idt([Gate { offset_low: 0, selector: 0, ist: 0, type_attr: 0, offset_mid: 0, offset_high: 0, reserved: 0 }; 256]);

/// Handlers for device and IPI vectors. A handler returns; the dispatcher sends the EOI.
pub type Handler = fn(&mut TrapFrame);
static HANDLERS: [AtomicUsize; 256] = [const { AtomicUsize::new(0) }; 256];
/// Exception handlers a test or subsystem installed (e.g. #BP for the breakpoint test).
/// Returning from one resumes the interrupted code.
static COUNTS: [AtomicUsize; 256] = [const { AtomicUsize::new(0) }; 256];

pub const EXCEPTION_NAMES: [&str; 32] = [
    "#DE divide error",
    "#DB debug",
    "NMI",
    "#BP breakpoint",
    "#OF overflow",
    "#BR bound range",
    "#UD invalid opcode",
    "#NM device not available",
    "#DF double fault",
    "coprocessor segment overrun",
    "#TS invalid TSS",
    "#NP segment not present",
    "#SS stack fault",
    "#GP general protection",
    "#PF page fault",
    "reserved 15",
    "#MF x87 FP error",
    "#AC alignment check",
    "#MC machine check",
    "#XM SIMD FP exception",
    "#VE virtualization",
    "#CP control protection",
    "reserved 22",
    "reserved 23",
    "reserved 24",
    "reserved 25",
    "reserved 26",
    "reserved 27",
    "#HV hypervisor injection",
    "#VC VMM communication",
    "#SX security",
    "reserved 31",
];

fn ist_for(vector: usize) -> u16 {
    match vector {
        1 | 3 => gdt::IST_DEBUG,
        2 => gdt::IST_NMI,
        8 => gdt::IST_DOUBLE_FAULT,
        14 => gdt::IST_PAGE_FAULT,
        18 => gdt::IST_MACHINE_CHECK,
        0..=31 => gdt::IST_EXCEPTION,
        _ => gdt::IST_IRQ,
    }
}

pub fn init() {
    let cs: u16;
    // SAFETY: reads the code segment selector.
    unsafe { core::arch::asm!("mov {0:x}, cs", out(reg) cs, options(nomem, nostack, preserves_flags)) };
    // SAFETY: runs once on the boot CPU before interrupts are enabled; nothing else holds a
    // reference to IDT. The stub table is defined by the global_asm above.
    unsafe {
        let idt = &mut *core::ptr::addr_of_mut!(IDT);
        let stubs = &*core::ptr::addr_of!(isr_stub_table);
        for (v, gate) in idt.0.iter_mut().enumerate() {
            let addr = stubs[v];
            *gate = Gate {
                offset_low: addr as u16,
                selector: cs,
                ist: ist_for(v) as u8,
                // present, DPL 0, 64-bit interrupt gate (type 0xE): IF is cleared on entry.
                type_attr: 0x8E,
                offset_mid: (addr >> 16) as u16,
                offset_high: (addr >> 32) as u32,
                reserved: 0,
            };
        }
        let ptr = x86_64::structures::DescriptorTablePointer {
            limit: (core::mem::size_of::<Idt>() - 1) as u16,
            base: x86_64::VirtAddr::new(idt as *const Idt as u64),
        };
        x86_64::instructions::tables::lidt(&ptr);
    }
}

/// Page-fault error code bits (Intel SDM vol. 3A, section 4.7 "Page-Fault Exceptions",
/// figure 4-12): P (protection violation, else not present), W/R (write), RSVD, I/D (fetch).
pub const PF_ERROR_PRESENT: u64 = 1 << 0;
pub const PF_ERROR_WRITE: u64 = 1 << 1;
pub const PF_ERROR_RESERVED: u64 = 1 << 3;
pub const PF_ERROR_FETCH: u64 = 1 << 4;

/// A page-fault service: given the fault address (CR2) and the error code, returns `true`
/// when it made the access possible (the instruction is then re-executed).
pub type PageFaultService = fn(u64, u64) -> bool;

static PAGE_FAULT_SERVICE: AtomicUsize = AtomicUsize::new(0);

/// Installs the service that resolves page faults before they are reported as fatal (the
/// managed-memory window's). A handler installed with [`set_handler`] for vector 14 wins.
pub fn set_page_fault_service(service: PageFaultService) {
    PAGE_FAULT_SERVICE.store(service as usize, Ordering::Release);
}

/// Installs `handler` for `vector`. Exceptions with a handler resume after it returns.
pub fn set_handler(vector: u8, handler: Handler) {
    HANDLERS[vector as usize].store(handler as usize, Ordering::Release);
}

pub fn clear_handler(vector: u8) {
    HANDLERS[vector as usize].store(0, Ordering::Release);
}

/// How many times `vector` was taken since boot.
pub fn count(vector: u8) -> usize {
    COUNTS[vector as usize].load(Ordering::Relaxed)
}

/// How many interrupt or exception handlers are running (nested ones count again).
static HANDLER_DEPTH: AtomicUsize = AtomicUsize::new(0);

/// Whether the CPU is inside an interrupt or exception handler (the dispatcher and anything it
/// calls: installed handlers, the page-fault service).
pub fn in_handler() -> bool {
    HANDLER_DEPTH.load(Ordering::Relaxed) != 0
}

extern "C" fn interrupt_dispatch(frame: &mut TrapFrame) {
    HANDLER_DEPTH.fetch_add(1, Ordering::Relaxed);
    dispatch(frame);
    HANDLER_DEPTH.fetch_sub(1, Ordering::Relaxed);
}

fn dispatch(frame: &mut TrapFrame) {
    let vector = (frame.vector & 0xff) as usize;
    COUNTS[vector].fetch_add(1, Ordering::Relaxed);
    let handler = HANDLERS[vector].load(Ordering::Acquire);
    if handler != 0 {
        // SAFETY: only `set_handler` stores non-zero values, and it stores `Handler`s.
        let f: Handler = unsafe { core::mem::transmute::<usize, Handler>(handler) };
        f(frame);
        if vector >= 32 && vector != super::apic::SPURIOUS_VECTOR as usize {
            super::apic::eoi();
        }
        return;
    }
    if vector == 14 {
        let service = PAGE_FAULT_SERVICE.load(Ordering::Acquire);
        if service != 0 {
            // SAFETY: only `set_page_fault_service` stores non-zero values, and it stores
            // `PageFaultService`s.
            let f: PageFaultService = unsafe { core::mem::transmute::<usize, PageFaultService>(service) };
            if f(super::read_cr2(), frame.error_code) {
                return;
            }
        }
    }
    if vector < 32 {
        fatal_exception(frame);
    }
    if vector == super::apic::SPURIOUS_VECTOR as usize {
        return;
    }
    log::warn!(target: "irq", "unexpected interrupt on vector {vector:#x}");
    super::apic::eoi();
}

struct Report<'a>(&'a TrapFrame);

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        let v = t.vector as usize;
        let name = EXCEPTION_NAMES.get(v).copied().unwrap_or("interrupt");
        writeln!(f, "\nEXCEPTION vector {v} ({name}) error code {:#x}", t.error_code)?;
        writeln!(
            f,
            "  rip {:#018x}  cs {:#x}  rflags {:#x}  rsp {:#018x}  ss {:#x}",
            t.rip, t.cs, t.rflags, t.rsp, t.ss
        )?;
        if v == 14 {
            let e = t.error_code;
            writeln!(
                f,
                "  cr2 {:#018x} ({} {} {}{})",
                super::read_cr2(),
                if e & PF_ERROR_PRESENT != 0 { "protection violation" } else { "page not present" },
                if e & PF_ERROR_WRITE != 0 { "on write" } else { "on read" },
                if e & PF_ERROR_FETCH != 0 { "instruction fetch" } else { "data access" },
                if e & PF_ERROR_RESERVED != 0 { ", reserved bit set" } else { "" }
            )?;
        }
        writeln!(f, "  rax {:#018x} rbx {:#018x} rcx {:#018x} rdx {:#018x}", t.rax, t.rbx, t.rcx, t.rdx)?;
        writeln!(f, "  rsi {:#018x} rdi {:#018x} rbp {:#018x} r8  {:#018x}", t.rsi, t.rdi, t.rbp, t.r8)?;
        writeln!(f, "  r9  {:#018x} r10 {:#018x} r11 {:#018x} r12 {:#018x}", t.r9, t.r10, t.r11, t.r12)?;
        writeln!(f, "  r13 {:#018x} r14 {:#018x} r15 {:#018x} cr3 {:#018x}", t.r13, t.r14, t.r15, super::read_cr3())
    }
}

fn fatal_exception(frame: &TrapFrame) -> ! {
    crate::serial::panic_print(format_args!("{}", Report(frame)));
    super::backtrace::print(frame.rip, frame.rbp);
    super::exit_qemu(super::QemuExit::Failure)
}

/// The IST index the gate for `vector` names (for tests).
pub fn gate_ist(vector: u8) -> u8 {
    // SAFETY: reads one byte of a gate written once in `init`.
    unsafe { (*core::ptr::addr_of!(IDT)).0[vector as usize].ist }
}
