//! The `.ktests` linker section: where [`ktest!`](crate::ktest!) places the in-kernel tests and
//! where [`crate::ktest::run_all`] finds them (no nightly test frameworks). The linker script
//! brackets the section with `__ktests_start` and `__ktests_end`.
//!
//! Only `ktest!` puts anything there: placing a static in a named section takes
//! `#[unsafe(link_section)]`, which the workspace's `unsafe_code` lint refuses outside the
//! modules allowed it (and the source scan in `tests/tests/unsafe_placement.rs` keeps that list
//! short), so every entry is a `KTest`.

use alloc::string::String;

/// One in-kernel test: its name and its body (`Err("SKIP: why")` when the machine lacks what
/// it needs).
#[repr(C)]
pub struct KTest {
    pub name: &'static str,
    pub run: fn() -> Result<(), String>,
}

/// `ktest!(name, || -> Result<(), String> { ... })` registers a test in the `.ktests` section.
#[macro_export]
macro_rules! ktest {
    ($name:ident, $body:expr) => {
        const _: () = {
            // `unsafe_code` flags `link_section`; the section holds `KTest`s only (see
            // `arch::ktest_section`).
            #[allow(unsafe_code)]
            #[unsafe(link_section = ".ktests")]
            #[used]
            static TEST: $crate::arch::ktest_section::KTest =
                $crate::arch::ktest_section::KTest { name: stringify!($name), run: $body };
        };
    };
}

unsafe extern "C" {
    // Linker-script symbols: only their addresses matter.
    static __ktests_start: u8;
    static __ktests_end: u8;
}

/// Every registered test, in link order.
pub fn all() -> &'static [KTest] {
    // SAFETY: the linker script brackets the `.ktests` section with these symbols, and that
    // section holds only `KTest` statics placed by `ktest!` (same type, same alignment, see the
    // module notes), which live for the kernel's lifetime and are never written.
    unsafe {
        let start = core::ptr::addr_of!(__ktests_start) as *const KTest;
        let end = core::ptr::addr_of!(__ktests_end) as *const KTest;
        let n = (end as usize - start as usize) / core::mem::size_of::<KTest>();
        core::slice::from_raw_parts(start, n)
    }
}
