//! Frame-pointer backtraces (every crate is built with `-C force-frame-pointers=yes`), with
//! symbol names when the image carries a symbol map: the boot module `kernel.sym`, the output
//! of `nm --numeric-sort --demangle` over the kernel ELF, which `cargo xtask` packs next to the
//! kernel (a map cannot live inside the image it describes without a second link).

use core::sync::atomic::{AtomicUsize, Ordering};

static SYMBOLS: AtomicUsize = AtomicUsize::new(0);
static SYMBOLS_LEN: AtomicUsize = AtomicUsize::new(0);

pub fn set_symbol_map(map: &'static [u8]) {
    SYMBOLS.store(map.as_ptr() as usize, Ordering::Relaxed);
    SYMBOLS_LEN.store(map.len(), Ordering::Relaxed);
}

fn symbol_map() -> &'static str {
    let (p, n) = (SYMBOLS.load(Ordering::Relaxed), SYMBOLS_LEN.load(Ordering::Relaxed));
    if p == 0 {
        return "";
    }
    // SAFETY: `set_symbol_map` stored a 'static slice's pointer and length.
    let bytes = unsafe { core::slice::from_raw_parts(p as *const u8, n) };
    core::str::from_utf8(bytes).unwrap_or("")
}

/// The function containing `addr` and the offset into it, from a sorted `nm` listing.
pub fn lookup(map: &str, addr: u64) -> Option<(&str, u64)> {
    let mut best: Option<(&str, u64)> = None;
    for line in map.lines() {
        let mut parts = line.splitn(3, ' ');
        let (Some(a), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next()) else { continue };
        if !matches!(kind, "T" | "t" | "W" | "w") {
            continue;
        }
        let Ok(a) = u64::from_str_radix(a, 16) else { continue };
        if a > addr {
            break;
        }
        best = Some((name, addr - a));
    }
    best
}

pub fn print(rip: u64, rbp: u64) {
    let map = symbol_map();
    crate::serial::panic_print(format_args!("backtrace:\n"));
    let line = |i: usize, addr: u64| match lookup(map, addr) {
        Some((name, off)) => crate::serial::panic_print(format_args!("  {i:2}: {addr:#018x} {name}+{off:#x}\n")),
        None => crate::serial::panic_print(format_args!("  {i:2}: {addr:#018x}\n")),
    };
    line(0, rip);
    let mut frame = rbp;
    for i in 1..64 {
        // A frame pointer must be aligned and mapped; stop at the chain's end (0, set by the
        // trampoline) or at anything that does not look like one.
        if frame == 0
            || !frame.is_multiple_of(8)
            || crate::mem::paging::translate(frame).is_none()
            || crate::mem::paging::translate(frame + 8).is_none()
        {
            break;
        }
        // SAFETY: both words were just checked to be mapped.
        let (next, ret) = unsafe {
            (core::ptr::read_volatile(frame as *const u64), core::ptr::read_volatile((frame + 8) as *const u64))
        };
        if ret == 0 {
            break;
        }
        line(i, ret);
        if next <= frame {
            break;
        }
        frame = next;
    }
    if map.is_empty() {
        crate::serial::panic_print(format_args!(
            "  (no kernel.sym module: resolve with addr2line -e target/release/kernel)\n"
        ));
    }
}

#[inline(never)]
pub fn print_from_here() {
    let (rip, rbp): (u64, u64);
    // SAFETY: reads the instruction and frame pointers.
    unsafe {
        core::arch::asm!("lea {}, [rip]", "mov {}, rbp", out(reg) rip, out(reg) rbp, options(nomem, nostack, preserves_flags))
    };
    print(rip, rbp);
}
