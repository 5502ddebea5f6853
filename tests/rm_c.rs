//! Compiling small C programs against NVIDIA's open-gpu-kernel-modules headers, the way RM
//! compiles itself, to check Rust layouts and constants against the C compiler.
//!
//! Shared by the layout tests (`gsp_layout.rs`, `gsp_rpc_layout.rs`, `gsp_logs.rs`,
//! `gsp_suspend.rs`). Missing data is a failure, never a skip: run `scripts/fetch-real-data.sh`
//! (as root) first. `NVGPU_REAL_DATA` overrides the data directory; `CC` the compiler.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use nvgpu::hw::headers::OGKM_PINNED;

// ---------------------------------------------------------------------------------------------
// Where the data is.

/// `target/real-data/` of the workspace, or `NVGPU_REAL_DATA`.
pub fn data_root() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

/// The unpacked open-gpu-kernel-modules tree of the pinned release (`OGKM_PINNED`), or a
/// failure that says how to get it.
pub fn require_tree() -> PathBuf {
    let dir = data_root().join(format!("open-gpu-kernel-modules-{OGKM_PINNED}"));
    assert!(
        dir.join("src/nvidia/Makefile").is_file(),
        "missing real data: {} (NVIDIA open-gpu-kernel-modules {OGKM_PINNED}).\n\
         This test never passes without NVIDIA's sources: run `sudo scripts/fetch-real-data.sh` \
         from the workspace root (CI={}).",
        dir.display(),
        std::env::var("CI").unwrap_or_else(|_| "unset".into())
    );
    dir
}

/// A text file of the tree, or a failure that says how to restore it.
pub fn read_source(tree: &Path, path: &str) -> String {
    let file = tree.join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}); run `sudo scripts/fetch-real-data.sh` to restore the tree", file.display())
    })
}

// ---------------------------------------------------------------------------------------------
// How RM compiles (src/nvidia/Makefile, 535.261.03).

/// `-I` directories of `src/nvidia/Makefile`, relative to `src/`.
pub const INCLUDE_DIRS: &[&str] = &[
    "nvidia/kernel/inc",
    "nvidia/interface",
    "common/sdk/nvidia/inc",
    "common/sdk/nvidia/inc/hw",
    "nvidia/arch/nvalloc/common/inc",
    "nvidia/arch/nvalloc/common/inc/gsp",
    "nvidia/arch/nvalloc/common/inc/deprecated",
    "nvidia/arch/nvalloc/unix/include",
    "nvidia/inc",
    "nvidia/inc/os",
    "common/shared/inc",
    "common/shared/msgq/inc",
    "common/inc",
    "common/uproc/os/libos-v2.0.0/include",
    "common/uproc/os/common/include",
    "common/uproc/os/libos-v2.0.0/debug",
    "common/inc/swref",
    "common/inc/swref/published",
    "nvidia/generated",
    "common/nvswitch/kernel/inc",
    "common/nvswitch/interface",
    "common/nvswitch/common/inc/",
    "common/inc/displayport",
    "common/nvlink/interface/",
    "common/nvlink/inband/interface",
    "nvidia/src/mm/uvm/interface",
    "nvidia/inc/libraries",
    "nvidia/src/libraries",
    "nvidia/inc/kernel",
];

/// `-D` flags of `src/nvidia/Makefile`.
pub const DEFINES: &[&str] = &[
    "_LANGUAGE_C",
    "__NO_CTYPE",
    "NVRM",
    "LOCK_VAL_ENABLED=0",
    "PORT_ATOMIC_64_BIT_SUPPORTED=1",
    "PORT_IS_KERNEL_BUILD=1",
    "PORT_IS_CHECKED_BUILD=1",
    "PORT_MODULE_atomic=1",
    "PORT_MODULE_core=1",
    "PORT_MODULE_cpu=1",
    "PORT_MODULE_crypto=1",
    "PORT_MODULE_debug=1",
    "PORT_MODULE_memory=1",
    "PORT_MODULE_safe=1",
    "PORT_MODULE_string=1",
    "PORT_MODULE_sync=1",
    "PORT_MODULE_thread=1",
    "PORT_MODULE_util=1",
    "PORT_MODULE_example=0",
    "PORT_MODULE_mmio=0",
    "PORT_MODULE_time=0",
    "RS_STANDALONE=0",
    "RS_STANDALONE_TEST=0",
    "RS_COMPATABILITY_MODE=1",
    "RS_PROVIDES_API_STATE=0",
    "NV_CONTAINERS_NO_TEMPLATES",
    "INCLUDE_NVLINK_LIB",
    "INCLUDE_NVSWITCH_LIB",
    "NV_PRINTF_STRINGS_ALLOWED=1",
    "NV_ASSERT_FAILED_USES_STRINGS=1",
    "PORT_ASSERT_FAILED_USES_STRINGS=1",
];

/// C definitions of RM's assertion hooks, for programs that include `core/core.h` and use code
/// with `NV_ASSERT_CHECKED` (such as `_checkSum32`): a failed assertion stops the program (the
/// test then fails); RM's debugger hooks do nothing.
pub const ASSERT_HOOKS: &str = r#"
/* RM's assertion hooks, which _checkSum32's NV_ASSERT_CHECKED refers to: a failed assertion
 * stops the program (the test then fails); RM's debugger hooks do nothing. */
void nvAssertFailedNoLog(NV_ASSERT_FAILED_FUNC_TYPE) { __builtin_trap(); }
NvBool nvDbgBreakpointEnabled(void) { return NV_FALSE; }
void NV_API_CALL os_dbg_breakpoint(void) { }
"#;

/// The `src/` directory of `tree`.
fn src(tree: &Path) -> PathBuf {
    tree.join("src")
}

/// The compiler flags RM's `src/nvidia/Makefile` compiles with: `-std=gnu11 -w`, the forced
/// `cpuopsys.h`, [`DEFINES`] and [`INCLUDE_DIRS`] under `tree/src`.
pub fn rm_flags(tree: &Path) -> Vec<OsString> {
    let src = src(tree);
    let mut flags: Vec<OsString> = vec!["-std=gnu11".into(), "-w".into(), "-include".into()];
    flags.push(src.join("common/sdk/nvidia/inc/cpuopsys.h").into());
    for d in DEFINES {
        flags.push(format!("-D{d}").into());
    }
    for i in INCLUDE_DIRS {
        flags.push("-I".into());
        flags.push(src.join(i).into());
    }
    flags
}

// ---------------------------------------------------------------------------------------------
// Compiling and running.

/// `target/tmp/` of the workspace (or of `CARGO_TARGET_DIR`).
fn tmp_root() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("tmp"),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp"),
    }
}

/// Writes `source` as `<name>.c` into a fresh directory `target/tmp/<name>-<pid>/`, compiles it
/// with `$CC` (default `cc`) and `flags`, runs it and returns its standard output.
///
/// The directory is removed once the program has run successfully, and kept for reading when
/// anything failed; the error says what failed and where.
pub fn try_compile_and_run(name: &str, source: &str, flags: &[OsString]) -> Result<String, String> {
    let dir = tmp_root().join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let source_file = dir.join(format!("{name}.c"));
    let binary = dir.join(name);
    std::fs::write(&source_file, source).map_err(|e| format!("cannot write {}: {e}", source_file.display()))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(flags)
        .arg("-o")
        .arg(&binary)
        .arg(&source_file)
        .output()
        .map_err(|e| format!("cannot run the C compiler `{cc}` ({e}); install gcc"))?;
    if !out.status.success() {
        return Err(format!(
            "compiling {} against NVIDIA's headers failed:\n{}",
            source_file.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let out = Command::new(&binary).output().map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    if !out.status.success() {
        return Err(format!("{} exited with {}", binary.display(), out.status));
    }
    let stdout =
        String::from_utf8(out.stdout).map_err(|e| format!("non-UTF-8 output from {}: {e}", binary.display()))?;
    // Kept for reading when anything above failed; removed once it has answered.
    let _ = std::fs::remove_dir_all(&dir);
    Ok(stdout)
}

/// [`try_compile_and_run`], failing the test with its error.
pub fn compile_and_run(name: &str, source: &str, flags: &[OsString]) -> String {
    try_compile_and_run(name, source, flags).unwrap_or_else(|e| panic!("{e}"))
}

// Source text helpers: checking that RM's code still says what the driver relied on.

/// Whitespace collapsed to single spaces, so source snippets match across line breaks.
pub fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The body of C function `name` in `text`: from the start of the line that defines it (a line
/// with no indentation, the name followed by a `{` before any `;`) to the next lone `}` line.
pub fn function_body<'a>(text: &'a str, name: &str) -> &'a str {
    let definition = text.match_indices(name).map(|(at, _)| at).find(|&at| {
        let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let after = &text[at + name.len()..];
        let starts_plain = !text[line_start..].starts_with([' ', '\t', '/', '*', '#']);
        let next_char_ok = after.starts_with(['(', '\n', ' ']);
        let prev_char_ok = !text[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
        let brace_first = match (after.find('{'), after.find(';')) {
            (Some(b), Some(s)) => b < s,
            (Some(_), None) => true,
            _ => false,
        };
        starts_plain && prev_char_ok && next_char_ok && brace_first
    });
    let Some(at) = definition else { panic!("definition of {name} not found") };
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let rest = &text[line_start..];
    let end = rest.find("\n}\n").map(|e| e + 3).unwrap_or(rest.len());
    &rest[..end]
}
