//! Compiling the project's CUDA payloads (`payloads/*.cu`) to PTX with Debian's clang-19 at
//! test time (REAL_DATA.md, "PTX from a real compiler"). Generated PTX is never committed: it is
//! cached under `target/ptx-cache/`, keyed by a hash of the sources, the flags and the compiler's
//! version, so a changed kernel or compiler recompiles.
//!
//! A missing clang-19 is a failure, never a skip: run `scripts/install-deps.sh cuda`.
//! `CLANG_CUDA` overrides the compiler.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The GPU architectures the payloads are compiled for (sm_80..sm_90: PTX ISA 7.8; sm_90a: 8.0).
pub const ARCHES: &[&str] = &["sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"];

/// `payloads/` of the workspace.
pub fn payload_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../payloads")
}

fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ptx-cache")
}

fn clang() -> String {
    std::env::var("CLANG_CUDA").unwrap_or_else(|_| "clang-19".into())
}

/// FNV-1a 64: a stable cache key (std's hashers promise no stability across releases).
fn fnv1a(data: &[u8], mut h: u64) -> u64 {
    for b in data {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The compiler's `--version` text, or a failure that says how to install it.
fn compiler_version() -> String {
    let cc = clang();
    match Command::new(&cc).arg("--version").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        Ok(out) => panic!("`{cc} --version` failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!(
            "cannot run {cc} ({e}): the PTX tests compile the payloads with Debian's clang-19. \
             Run `sudo scripts/install-deps.sh cuda` from the workspace root (CI={}).",
            std::env::var("CI").unwrap_or_else(|_| "unset".into())
        ),
    }
}

/// The flags of REAL_DATA.md: device-only CUDA without NVIDIA's headers or libdevice; `+ptx78`
/// for the warp-sync builtins.
fn flags(arch: &str) -> Vec<String> {
    [
        "-x",
        "cuda",
        "--cuda-device-only",
        "-nocudainc",
        "-nocudalib",
        &format!("--cuda-gpu-arch={arch}"),
        "-Xclang",
        "-target-feature",
        "-Xclang",
        "+ptx78",
        "-O2",
        "-S",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// PTX text of `payloads/<name>.cu` for `arch`, compiled now or taken from the cache.
/// The SM a model GPU of `chip` is (the newest PTX target it runs), for tests that compile for
/// the chip itself rather than for the family's oldest SM as the application does.
pub fn native_arch(chip: nvgpu::chip::Chipset) -> &'static str {
    use nvgpu::chip::Chipset;
    match chip {
        Chipset::GA100 => "sm_80",
        Chipset::GA102 => "sm_86",
        Chipset::AD102 => "sm_89",
        Chipset::TU102 => "sm_75",
        _ => "sm_90",
    }
}

pub fn ptx(name: &str, arch: &str) -> String {
    ptx_with(name, arch, &[])
}

/// As [`ptx`], with extra compiler flags (e.g. `-fgpu-flush-denormals-to-zero`).
pub fn ptx_with(name: &str, arch: &str, extra: &[&str]) -> String {
    let mut all_flags = flags(arch);
    all_flags.extend(extra.iter().map(|s| s.to_string()));
    let dir = payload_dir();
    let source = dir.join(format!("{name}.cu"));
    let text = std::fs::read(&source).unwrap_or_else(|e| panic!("cannot read {}: {e}", source.display()));
    let shim =
        std::fs::read(dir.join("cuda_shim.h")).unwrap_or_else(|e| panic!("cannot read payloads/cuda_shim.h: {e}"));
    let version = compiler_version();
    let mut h = 0xcbf2_9ce4_8422_2325;
    for part in [text.as_slice(), shim.as_slice(), version.as_bytes(), all_flags.join(" ").as_bytes()] {
        h = fnv1a(part, h);
        h = fnv1a(&[0xff], h);
    }
    let cache = cache_dir();
    std::fs::create_dir_all(&cache).unwrap_or_else(|e| panic!("cannot create {}: {e}", cache.display()));
    let out = cache.join(format!("{name}.{arch}.{h:016x}.ptx"));
    if let Ok(ptx) = std::fs::read_to_string(&out) {
        return ptx;
    }
    // Compile to a private name, then rename: parallel tests never read a half-written file.
    // Private per process and per call: tests of one binary run on threads of one process.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = cache.join(format!("{name}.{arch}.{h:016x}.{}.{call}.tmp", std::process::id()));
    let result = Command::new(clang())
        .args(&all_flags)
        .arg(&source)
        .arg("-o")
        .arg(&tmp)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; run `sudo scripts/install-deps.sh cuda`", clang()));
    assert!(
        result.status.success(),
        "{} failed on {} for {arch}:\n{}",
        clang(),
        source.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    std::fs::rename(&tmp, &out).unwrap_or_else(|e| panic!("cannot rename {}: {e}", tmp.display()));
    std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("cannot read {}: {e}", out.display()))
}
