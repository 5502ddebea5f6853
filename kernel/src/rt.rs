//! The pieces of a runtime a freestanding binary for the host target needs: the memory
//! functions the compiler emits calls to (compiler_builtins leaves them out on linux-gnu), the
//! unwinding personality the precompiled `core` references, and the panic handler.

// unsafe here: the freestanding runtime: the memory functions the compiler calls, the panic handler.
#![allow(unsafe_code)]

use core::arch::asm;

// SAFETY (for the four functions below): callers (compiler-generated code and `core`) uphold
// the C contracts: valid, non-null pointers for `n` bytes. `rep movs/stos` never call back
// into these functions, so there is no recursion.

/// # Safety
/// `dest` and `src` are valid for `n` bytes and do not overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // Eight bytes a step, then the tail a byte at a time: under QEMU's TCG each `rep movs`
    // step costs about the same whatever its width, so `movsq` copies 8x faster than `movsb`
    // (x86 allows unaligned quadword moves; the flags are untouched, DF is clear by the ABI).
    // SAFETY: see above; the two moves together cover exactly `n` bytes.
    unsafe {
        asm!(
            "rep movsq",
            "mov rcx, {tail}",
            "rep movsb",
            tail = in(reg) n % 8,
            inout("rcx") n / 8 => _,
            inout("rdi") dest => _,
            inout("rsi") src => _,
            options(nostack, preserves_flags)
        );
    }
    dest
}

/// # Safety
/// `dest` and `src` are valid for `n` bytes; they may overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dest as usize) <= (src as usize) || (dest as usize) >= (src as usize).wrapping_add(n) {
        // SAFETY: forward copy is correct when dest is below src or the ranges do not overlap.
        unsafe { memcpy(dest, src, n) }
    } else {
        // SAFETY: copy backwards with the direction flag set, restored before returning.
        unsafe {
            asm!(
                "std", "rep movsb", "cld",
                inout("rcx") n => _,
                inout("rdi") dest.add(n - 1) => _,
                inout("rsi") src.add(n - 1) => _,
                options(nostack)
            );
        }
        dest
    }
}

/// # Safety
/// `dest` is valid for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memset(dest: *mut u8, c: i32, n: usize) -> *mut u8 {
    // Eight bytes a step (the byte repeated across RAX), then the tail, as in `memcpy`.
    let pattern = u64::from(c as u8).wrapping_mul(0x0101_0101_0101_0101);
    // SAFETY: see above; the two stores together cover exactly `n` bytes.
    unsafe {
        asm!(
            "rep stosq",
            "mov rcx, {tail}",
            "rep stosb",
            tail = in(reg) n % 8,
            inout("rcx") n / 8 => _,
            inout("rdi") dest => _,
            in("rax") pattern,
            options(nostack, preserves_flags)
        );
    }
    dest
}

/// # Safety
/// `a` and `b` are valid for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: i < n, both valid for n bytes. Volatile reads keep the compiler from turning
        // this loop back into a call to memcmp.
        let (x, y) = unsafe { (core::ptr::read_volatile(a.add(i)), core::ptr::read_volatile(b.add(i))) };
        if x != y {
            return x as i32 - y as i32;
        }
        i += 1;
    }
    0
}

/// # Safety
/// `a` and `b` are valid for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: same contract as memcmp.
    unsafe { memcmp(a, b, n) }
}

/// The precompiled `core` carries unwind tables that name this symbol; with `panic = "abort"`
/// it is never called.
#[unsafe(no_mangle)]
pub extern "C" fn rust_eh_personality() {}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::serial::panic_print(format_args!("\nKERNEL PANIC: {info}\n"));
    crate::arch::backtrace::print_from_here();
    crate::arch::exit_qemu(crate::arch::QemuExit::Failure)
}

/// The precompiled `alloc` references this from landing pads that `panic = "abort"` never
/// reaches; if anything ever calls it, stop loudly.
#[unsafe(no_mangle)]
pub extern "C" fn _Unwind_Resume() -> ! {
    crate::serial::panic_print(format_args!("\nKERNEL PANIC: _Unwind_Resume called (unwinding is not supported)\n"));
    crate::arch::exit_qemu(crate::arch::QemuExit::Failure)
}
