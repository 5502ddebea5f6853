//! Where `unsafe` may live: a scan of every Rust source file of the repository (the workspace,
//! the fuzz crate and the tools), against the list README.md's "Where `unsafe` lives" gives.
//!
//! The workspace lints deny `unsafe_code`, so `unsafe` needs an `allow(unsafe_code)`; this test
//! keeps those allowances (and the word `unsafe` in code at all) inside the places listed here,
//! each with its reason, and fails when a file outside them says either. It also fails when a
//! listed place no longer allows `unsafe` (drop it from the list, and from the README), when a
//! member crate stops inheriting the workspace lints, and when the README's section does not
//! name a listed place.

use std::fs;
use std::path::{Path, PathBuf};

/// The places allowed `unsafe`, as paths from the repository root (a trailing `/` is a
/// directory and everything under it), with the reason. The README lists the same.
const ALLOWED: &[(&str, &str)] = &[
    ("kernel/src/arch/", "x86_64 machine access: ports, MSRs, control registers, descriptor tables, interrupt entry, the .ktests section"),
    ("kernel/src/mem/", "physical memory: frames, DMA memory, page tables, MMIO and write-combined windows, firmware copies, the managed window, the heap"),
    ("kernel/src/rt.rs", "the freestanding runtime: the memory functions the compiler calls, the panic handler"),
    ("kernel/src/main.rs", "the entry: the boot trampoline's assembly and the symbol it calls"),
    ("kernel/src/pci/access.rs", "pci_types declares its config-access trait methods `unsafe fn`; the implementation does nothing unsafe"),
    ("boot/src/lib.rs", "bootloader_api's FrameBuffer::new is an `unsafe fn`"),
    ("drivers/gpu/src/platform.rs", "the DMA boundary: DmaBuffer reaches device-visible memory by raw pointer"),
    ("drivers/gpu/src/gsp/cmdq/fake.rs", "test-only: page-aligned host memory standing in for DMA memory"),
    ("sim/src/memory.rs", "the model's DmaArena: host memory lent as DmaBuffers and reached by bus address"),
    ("xtask/src/qemu.rs", "two libc calls std does not wrap (prctl, kill)"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the repository root").to_path_buf()
}

/// Every `.rs` file under `dir`, skipping build output and VCS directories.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name == "target" || name.starts_with('.') {
                continue;
            }
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

fn is_allowed(rel: &str) -> bool {
    ALLOWED.iter().any(|(place, _)| if place.ends_with('/') { rel.starts_with(place) } else { rel == *place })
}

/// Whether `word` occurs in `line` as a whole identifier.
fn has_word(line: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(word).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The code lines of `text` (comment lines left out) that say `unsafe` or `unsafe_code`.
fn unsafe_lines(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| has_word(l, "unsafe") || has_word(l, "unsafe_code"))
        .map(|(i, l)| (i + 1, l.trim().to_string()))
        .collect()
}

fn sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&root(), &mut files);
    files.sort();
    assert!(files.len() > 100, "found only {} Rust files under {}", files.len(), root().display());
    files
}

/// The spelling of the lint allowance, put together so this file does not contain it.
fn allowance() -> String {
    format!("allow({}_code)", "unsafe")
}

#[test]
fn unsafe_appears_only_in_the_listed_places() {
    let mut outside = Vec::new();
    for file in sources() {
        let rel = relative(&file);
        if is_allowed(&rel) || rel == "tests/tests/unsafe_placement.rs" {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap_or_default();
        for (line, code) in unsafe_lines(&text) {
            outside.push(format!("{rel}:{line}: {code}"));
        }
    }
    assert!(
        outside.is_empty(),
        "`unsafe` outside the places allowed it (move it behind an abstraction in one of them, or \
         add the place with its reason to ALLOWED and to README's \"Where `unsafe` lives\"):\n{}",
        outside.join("\n")
    );
}

#[test]
fn every_listed_place_still_allows_unsafe() {
    let files = sources();
    let needle = allowance();
    for (place, why) in ALLOWED {
        let says = files.iter().filter(|f| {
            let rel = relative(f);
            let inside = if place.ends_with('/') { rel.starts_with(place) } else { rel == *place };
            inside && fs::read_to_string(f).unwrap_or_default().contains(&needle)
        });
        assert!(
            says.count() > 0,
            "{place} ({why}) is listed as allowed `unsafe` but no file there says {needle}: drop it from the list and the README"
        );
    }
}

#[test]
fn every_crate_inherits_the_workspace_lints() {
    let workspace = fs::read_to_string(root().join("Cargo.toml")).expect("workspace Cargo.toml");
    assert!(workspace.contains("unsafe_code = \"deny\""), "the workspace no longer denies unsafe_code");
    assert!(
        workspace.contains("undocumented_unsafe_blocks = \"deny\""),
        "the workspace no longer denies clippy::undocumented_unsafe_blocks"
    );
    let members = workspace
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("a members list in the workspace Cargo.toml");
    for member in members.split(',').map(|m| m.trim().trim_matches('"')).filter(|m| !m.is_empty()) {
        let manifest = fs::read_to_string(root().join(member).join("Cargo.toml")).expect(member);
        assert!(
            manifest.contains("[lints]\nworkspace = true"),
            "{member}/Cargo.toml does not inherit the workspace lints ([lints] workspace = true)"
        );
    }
}

#[test]
fn the_readme_names_every_listed_place() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let section = readme
        .split("## Where `unsafe` lives")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README.md has a section \"Where `unsafe` lives\"");
    for (place, _) in ALLOWED {
        assert!(section.contains(place), "README's \"Where `unsafe` lives\" does not name {place}");
    }
}
