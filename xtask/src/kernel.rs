//! Building the kernel (and the fake kernel xtask tests its own plumbing with).

use std::path::PathBuf;
use std::process::Command;

use crate::util::{cargo, display_path, error, run_status, target_dir, workspace_root, xtask_dir, Context, Result};

/// `cargo build -p kernel --release --features image`; the ELF it leaves.
pub fn build() -> Result<PathBuf> {
    run_status(cargo().args(["build", "-p", "kernel", "--release", "--features", "image"]))?;
    let elf = target_dir().join("release").join("kernel");
    if !elf.is_file() {
        return Err(error(format!("the kernel build succeeded but {} is missing", display_path(&elf))));
    }
    Ok(elf)
}

/// The kernel to boot: `--kernel PATH` if given, the built one otherwise (`--no-build` skips
/// the build and takes whatever `target/release/kernel` holds).
pub fn resolve(explicit: Option<String>, no_build: bool) -> Result<PathBuf> {
    if let Some(path) = explicit {
        let path = PathBuf::from(path);
        let path = if path.is_absolute() { path } else { std::env::current_dir()?.join(path) };
        if !path.is_file() {
            return Err(error(format!("--kernel {}: no such file", path.display())));
        }
        return Ok(path);
    }
    if no_build {
        let elf = target_dir().join("release").join("kernel");
        if !elf.is_file() {
            return Err(error(format!("--no-build: {} does not exist yet", display_path(&elf))));
        }
        return Ok(elf);
    }
    build()
}

/// Assembles `xtask/fake-kernel/fake.S` into a kernel that speaks the kernel's serial contract
/// (PVH and Multiboot2), for `cargo xtask selftest`.
pub fn build_fake() -> Result<PathBuf> {
    let source_dir = workspace_root().join("xtask").join("fake-kernel");
    let out_dir = xtask_dir()?.join("fake-kernel");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let out = out_dir.join("fake-kernel");
    let mut cmd = Command::new("cc");
    cmd.args(["-nostdlib", "-static", "-no-pie"])
        .arg(format!("-Wl,-T,{}", source_dir.join("fake.ld").display()))
        .args(["-Wl,--build-id=none", "-Wl,-z,max-page-size=0x1000", "-Wl,--no-warn-rwx-segments"])
        .arg("-o")
        .arg(&out)
        .arg(source_dir.join("fake.S"));
    run_status(&mut cmd).context("building the fake kernel (needs a C toolchain: cc)")?;
    Ok(out)
}
