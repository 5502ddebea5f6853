//! In-kernel tests, registered in the `.ktests` linker section (no nightly test frameworks):
//! `ktest!(name, || -> Result<(), String> { ... })` places a `KTest` there; `run_all` walks the
//! section, reports each test on serial, and the caller exits through isa-debug-exit.
//! A test that needs hardware the machine lacks returns `Err("SKIP: why")`: reported as
//! skipped, never as passed.

// unsafe here: the bounds of the `.ktests` linker section.
#![allow(unsafe_code)]

use alloc::string::String;

#[repr(C)]
pub struct KTest {
    pub name: &'static str,
    pub run: fn() -> Result<(), String>,
}

#[macro_export]
macro_rules! ktest {
    ($name:ident, $body:expr) => {
        const _: () = {
            // The `.ktests` section is walked by `run_all`; `unsafe_code` flags `link_section`.
            #[allow(unsafe_code)]
            #[unsafe(link_section = ".ktests")]
            #[used]
            static TEST: $crate::ktest::KTest = $crate::ktest::KTest { name: stringify!($name), run: $body };
        };
    };
}

/// Fails a test with a formatted message unless `cond` holds.
#[macro_export]
macro_rules! kassert {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(alloc::format!($($fmt)*));
        }
    };
}

unsafe extern "C" {
    // Linker-script symbols: only their addresses matter.
    static __ktests_start: u8;
    static __ktests_end: u8;
}

fn all() -> &'static [KTest] {
    // SAFETY: the linker script brackets the `.ktests` section with these symbols, and that
    // section holds only `KTest` statics placed by `ktest!` (same type, same alignment).
    unsafe {
        let start = core::ptr::addr_of!(__ktests_start) as *const KTest;
        let end = core::ptr::addr_of!(__ktests_end) as *const KTest;
        let n = (end as usize - start as usize) / core::mem::size_of::<KTest>();
        core::slice::from_raw_parts(start, n)
    }
}

/// Runs the tests whose name contains `filter` (all when empty); returns (passed, failed).
pub fn run_all(filter: &str) -> (usize, usize) {
    let tests = all();
    let selected = tests.iter().filter(|t| t.name.contains(filter)).count();
    crate::println!("ktest: running {selected} tests");
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for t in tests.iter().filter(|t| t.name.contains(filter)) {
        let start = crate::time::millis_since_entry();
        match (t.run)() {
            Ok(()) => {
                passed += 1;
                crate::println!("ktest {} ... ok ({} ms)", t.name, crate::time::millis_since_entry() - start);
            }
            Err(e) if e.starts_with("SKIP: ") => {
                skipped += 1;
                crate::println!("ktest {} ... skipped: {}", t.name, &e[6..]);
            }
            Err(e) => {
                failed += 1;
                crate::println!("ktest {} ... FAILED: {}", t.name, e);
            }
        }
    }
    crate::println!("ktest result: {passed} passed, {failed} failed, {skipped} skipped");
    (passed, failed)
}
