//! Family choices have one home each: the driver's in `nvgpu::hal` (and the chip table of
//! `nvgpu::chip`), the model's in `sim::silicon`. Anywhere else, code asks those tables instead
//! of naming a family; a `Family::Hopper` test in a driver module is a HAL entry that was not
//! made. This test reads the workspace's sources and fails on every family named outside those
//! homes, in code that is not a test.

use std::path::{Path, PathBuf};

const FAMILIES: [&str; 7] = ["Turing", "Ga100", "Ga10x", "Ada", "Hopper", "BlackwellGb10x", "BlackwellGb20x"];

/// Where family choices live.
const HOMES: [&str; 3] = ["drivers/gpu/src/hal/", "drivers/gpu/src/chip.rs", "sim/src/silicon.rs"];

/// The source trees of code that runs (the test crate and the tools' tests are not scanned).
const TREES: [&str; 8] =
    ["drivers/gpu/src", "sim/src", "uvm/src", "nvlink/src", "app/src", "kernel/src", "boot/src", "tools"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "tests" || n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") && path.file_name().is_some_and(|n| n != "tests.rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` before its test module.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().take_while(|(_, l)| l.trim() != "#[cfg(test)]").map(|(i, l)| (i + 1, l))
}

fn named_family(line: &str) -> Option<&'static str> {
    let code = line.split("//").next().unwrap_or("");
    FAMILIES.into_iter().find(|f| {
        let needle = format!("Family::{f}");
        code.match_indices(&needle)
            .any(|(at, _)| !code[at + needle.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

#[test]
fn no_family_is_named_outside_the_hal_the_chip_table_and_the_models_silicon() {
    let root = root();
    let mut files = Vec::new();
    for tree in TREES {
        rust_files(&root.join(tree), &mut files);
    }
    assert!(files.len() > 100, "found only {} source files under {}", files.len(), root.display());
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        if HOMES.iter().any(|h| rel.starts_with(h)) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in code_lines(&text) {
            if let Some(family) = named_family(line) {
                found.push(format!("{rel}:{n}: Family::{family}: {}", line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "family choices outside nvgpu::hal, nvgpu::chip and sim::silicon (make them a HAL or silicon entry):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_finds_a_family_where_there_is_one() {
    assert_eq!(named_family("    if family == Family::Turing {"), Some("Turing"));
    assert_eq!(named_family("matches!(f, Family::Ga100 | Family::Hopper)"), Some("Ga100"));
    assert_eq!(named_family("Family::BlackwellGb20x => 3,"), Some("BlackwellGb20x"));
    assert_eq!(named_family("// Family::Turing in a comment"), None);
    assert_eq!(named_family("Family::Adapter"), None);
    let text = "fn a() {}\nlet x = Family::Ada;\n#[cfg(test)]\nmod tests { Family::Hopper }\n";
    let hits: Vec<_> = code_lines(text).filter(|(_, l)| named_family(l).is_some()).map(|(n, _)| n).collect();
    assert_eq!(hits, vec![2]);
}
