//! The native reference for the PTX model's speed (issue 16): the payloads' straight-line
//! kernels (`vector_add.cu`, `mandelbrot.cu`) compiled for this host by clang-19 from the same
//! source, through `payloads/cuda_host_shim.h` and `tests/native/driver.cpp`, every thread of
//! the grid run in turn, best of 5 runs. `tests/tests/ptx_model.rs` runs the same launches on
//! the model, checks the outputs agree and prints the ratio; `cargo xtask bench` shows it.
//!
//! A missing clang-19 is a failure, as for the PTX builds: `scripts/install-deps.sh cuda`.

use std::path::Path;
use std::process::Command;

/// One kernel's native run: the best time and the FNV-1a 64 of its output bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NativeRun {
    pub ns: u64,
    pub checksum: u64,
}

/// The two kernels' native runs.
#[derive(Clone, Copy, Debug)]
pub struct Native {
    pub vector_add_f32: NativeRun,
    pub mandelbrot: NativeRun,
}

/// FNV-1a 64, as the driver computes it.
pub fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The flags of the host build: optimised as a release build of a host program would be, with
/// the floating-point contraction clang's CUDA mode uses (`-ffp-contract=fast`) and FMA, so
/// that the same source computes as close to the PTX as the host allows.
pub const FLAGS: &[&str] = &["-x", "c++", "-O2", "-ffp-contract=fast", "-mfma"];

/// Compiles the driver and runs `vector_add_f32` over `n` elements (a[i] = i / 2, b[i] =
/// 1000 - i) and `mandelbrot` over `w` x `h` pixels of [-2, 0.5) x [-1.25, 1.25) with
/// `max_iter` iterations (16 x 16 blocks).
pub fn run(n: u32, w: u32, h: u32, max_iter: u32) -> Native {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out_dir = root.join("target/native-ref");
    std::fs::create_dir_all(&out_dir).expect("target/native-ref");
    let exe = out_dir.join("driver");
    let clang = std::env::var("CLANG_CUDA").unwrap_or_else(|_| "clang-19".into());
    let status = Command::new(&clang)
        .args(FLAGS)
        .arg("-I")
        .arg(root.join("payloads"))
        .arg("-o")
        .arg(&exe)
        .arg(root.join("tests/native/driver.cpp"))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {clang} ({e}): run `sudo scripts/install-deps.sh cuda`"));
    assert!(status.success(), "{clang} failed to build the native reference");
    let out = Command::new(&exe)
        .args([n.to_string(), w.to_string(), h.to_string(), max_iter.to_string()])
        .output()
        .expect("the native reference runs");
    assert!(out.status.success(), "native reference: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let kernel = |name: &str| -> NativeRun {
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("native {name}: ")))
            .unwrap_or_else(|| panic!("no line for {name} in {text:?}"));
        let (ns, checksum) = line.split_once(" ns, checksum ").unwrap_or_else(|| panic!("bad line {line:?}"));
        NativeRun {
            ns: ns.parse().unwrap_or_else(|_| panic!("bad time in {line:?}")),
            checksum: u64::from_str_radix(checksum.trim(), 16).unwrap_or_else(|_| panic!("bad checksum in {line:?}")),
        }
    };
    Native { vector_add_f32: kernel("vector_add_f32"), mandelbrot: kernel("mandelbrot") }
}
