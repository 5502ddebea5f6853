//! The application side uses the application API (`nvrt`) alone: the example application and
//! `nvtool run` name no driver internals (the driver, the model, unified memory's own crate, RPC
//! channels, BARs, DMA allocators, clock types), and the example application depends on nothing
//! else that reaches the GPU.

use std::path::Path;

const INTERNALS: &[&str] = &[
    "nvgpu::",
    "sim::",
    "uvm::",
    "RpcChannel",
    "Bar0",
    "DmaAllocator",
    "RegisterIo",
    "GpuConfig",
    "dyn Clock",
    "GspRpc",
];

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn check(rel: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for word in INTERNALS {
            if line.contains(word) {
                found.push(format!("{rel}:{}: `{word}` in: {}", n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn the_example_application_and_nvtool_run_use_only_the_application_api() {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root().join("app/src")).expect("app/src") {
        let path = entry.expect("entry").path();
        let rel = path.strip_prefix(root()).expect("under the root").display().to_string();
        found.extend(check(&rel));
    }
    found.extend(check("tools/nvtool/src/run.rs"));
    assert!(found.is_empty(), "driver internals on the application side:\n{}", found.join("\n"));
}

#[test]
fn the_example_application_depends_on_the_api_and_nothing_that_reaches_the_gpu() {
    let manifest = std::fs::read_to_string(root().join("app/Cargo.toml")).expect("app/Cargo.toml");
    let deps = manifest.split("[dependencies]").nth(1).expect("a [dependencies] table");
    let deps = &deps[..deps.find("\n[").unwrap_or(deps.len())];
    let names: Vec<&str> = deps
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
        .filter(|k| !k.is_empty() && !k.starts_with('#'))
        .collect();
    assert_eq!(names, ["nvrt", "log.workspace", "libm"]);
}
