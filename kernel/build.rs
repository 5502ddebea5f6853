//! Link arguments for the kernel binary only: our linker script, no C runtime, a static
//! non-PIE image. The library target and host tests are linked normally.
fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
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
