//! In-kernel tests, registered in the `.ktests` linker section (no nightly test frameworks):
//! `ktest!(name, || -> Result<(), String> { ... })` places a `KTest` there (both are
//! [`crate::arch::ktest_section`]'s, which owns the section); `run_all` walks the section,
//! reports each test on serial, and the caller exits through isa-debug-exit.
//! A test that needs hardware the machine lacks returns `Err("SKIP: why")`: reported as
//! skipped, never as passed.

use crate::arch::ktest_section;

/// Fails a test with a formatted message unless `cond` holds.
#[macro_export]
macro_rules! kassert {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(alloc::format!($($fmt)*));
        }
    };
}

/// Runs the tests whose name contains `filter` (all when empty); returns (passed, failed).
pub fn run_all(filter: &str) -> (usize, usize) {
    let tests = ktest_section::all();
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
