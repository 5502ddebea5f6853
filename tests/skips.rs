//! Skips that the test command's summary lists. A test that cannot check what it exists for
//! (its data is not there) calls [`record`]: the test prints `SKIPPED name: why` and writes the
//! line to `target/test-skips/<name>.txt`. `cargo xtask test` empties that folder before `cargo
//! test --workspace` and lists every file in it in its summary, so a skip is never a silent pass.

use std::path::PathBuf;

/// Where skips are recorded (`target/test-skips`, or `$CARGO_TARGET_DIR/test-skips`).
pub fn dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("test-skips")
}

/// Records that `test` did not check what it exists for, and why.
pub fn record(test: &str, why: &str) {
    let line = format!("{test}: {why}");
    eprintln!("SKIPPED {line}");
    let dir = dir();
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join(format!("{test}.txt")), &line));
    if let Err(e) = written {
        // The summary would miss this skip: fail rather than pass silently.
        panic!("cannot record the skip of {test} in {}: {e}", dir.display());
    }
}
