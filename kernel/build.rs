//! Link arguments for the kernel binary only: our linker script, no C runtime, a static
//! non-PIE image. The library target and host tests are linked normally.
fn main() {
    // A user's application crate is built into the kernel from a manifest xtask generates
    // outside this directory (`cargo xtask run --app-crate`); it says where the sources are.
    println!("cargo:rerun-if-env-changed=NVGPU_KERNEL_DIR");
    let manifest = std::env::var("NVGPU_KERNEL_DIR")
        .or_else(|_| std::env::var("CARGO_MANIFEST_DIR"))
        .expect("cargo sets CARGO_MANIFEST_DIR");
    let script = format!("{manifest}/../boot/linker.ld");
    println!("cargo:rerun-if-changed={script}");
    println!("cargo:rerun-if-changed={manifest}/../boot/src/entry.S");
    for arg in [
        format!("-T{script}"),
        "-nostartfiles".into(),
        "-nostdlib".into(),
        "-static".into(),
        "-no-pie".into(),
        "-Wl,--build-id=none".into(),
        "-Wl,-z,max-page-size=0x1000".into(),
        "-Wl,--gc-sections".into(),
    ] {
        println!("cargo:rustc-link-arg-bins={arg}");
    }
}
