//! Every QMD field position in `nvgpu::hw::qmd` against two readings of NVIDIA's QMD headers:
//! name, `MW(hi:lo)` and the stride of `(i)` for array fields.
//!
//! - PyPI's tinygrad 0.14.0 (`headers::TINYGRAD_NV_570`, unpacked by
//!   `scripts/fetch-real-data.sh` on any machine): bindings generated from NVIDIA's `clc6c0qmd.h`
//!   and `clcec0qmd.h`. A QMD layout is one per version whatever the class prefix, so it checks
//!   Turing's V02_03 (as NVC6C0_QMDV02_03), Ampere's and Ada's V03_00 and Blackwell's V05_00 (as
//!   NVCEC0_QMDV05_00). It has no V04_00: Hopper's QMD is in open-gpu-doc only.
//! - NVIDIA's open-gpu-doc (`classes/compute/cl*qmd.h`), which no package carries:
//!   `scripts/fetch-real-data.sh` unpacks it from a local clone (OPEN_GPU_DOC_GIT). With it every
//!   layout is checked under its own class prefix.
//!
//! A layout that neither source present covers is recorded as a skip naming its version
//! ([`tests::skips::record`]); `cargo xtask test` lists it. `NVGPU_REAL_DATA` overrides the data
//! directory.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use nvgpu::hw::qmd::{self, QmdLayout};
use nvgpu::hw::{headers, Header};

fn data_root() -> PathBuf {
    std::env::var_os("NVGPU_REAL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"))
}

fn open_gpu_doc_tree() -> PathBuf {
    let commit = headers::OPEN_GPU_DOC.strip_prefix("open-gpu-doc@").unwrap();
    data_root().join(format!("open-gpu-doc-{commit}"))
}

fn tinygrad_file(header: Header) -> PathBuf {
    data_root().join(header.release).join(header.path)
}

/// `_QMDVxx_yy_`: the part of a field name that names the layout version.
fn version_tag(layout: &QmdLayout) -> String {
    format!("_QMDV{:02}_{:02}_", layout.major, layout.minor)
}

/// A layout's name for messages: version, chips, fields and header.
fn layout_name(layout: &QmdLayout) -> String {
    let chips = [
        (headers::CLC5C0_QMD, "Turing"),
        (headers::CLC6C0_QMD, "Ampere"),
        (headers::CLC9C0_QMD, "Ada"),
        (headers::CLCBC0_QMD, "Hopper"),
        (headers::CLCDC0_QMD, "Blackwell"),
    ]
    .iter()
    .find(|(h, _)| *h == layout.header)
    .map_or("?", |(_, c)| c);
    let prefix = layout.fields.first().and_then(|f| f.name.split_once('_')).map_or("", |(p, _)| p);
    format!(
        "QMD V{:02}_{:02} ({chips}: {} {prefix}{}* fields of {} {})",
        layout.major,
        layout.minor,
        layout.fields.len(),
        version_tag(layout),
        layout.header.release,
        layout.header.path
    )
}

/// The layouts tinygrad's file defines (under some class prefix), `None` if the file is absent.
fn layouts_in_tinygrad() -> Option<BTreeSet<(u8, u8)>> {
    let text = std::fs::read_to_string(tinygrad_file(headers::TINYGRAD_NV_570)).ok()?;
    let fields = tinygrad_fields(&text);
    Some(
        qmd::LAYOUTS
            .iter()
            .filter(|l| !prefixes_with(&fields, &version_tag(l)).is_empty())
            .map(|l| (l.major, l.minor))
            .collect(),
    )
}

/// The field checks both sources share: name form, `_SHIFTED<n>`, inside the QMD.
fn check_field_shape(layout: &QmdLayout, field: &qmd::FieldPos) {
    assert!(field.name.contains(&version_tag(layout)), "{}", field.name);
    let shift = field.name.rsplit_once("_SHIFTED").map_or(0, |(_, n)| n.parse().unwrap());
    assert_eq!(field.shift, shift, "{}", field.name);
    assert!(field.hi + field.stride * 7 < layout.dwords as u32 * 32, "{} beyond the QMD", field.name);
}

// ---------------------------------------------------------------------------------------------
// open-gpu-doc's C headers.

/// `#define NAME MW(hi:lo)` or `#define NAME(i) MW((hi+(i)*s):(lo+(i)*s))` -> (hi, lo, stride).
fn mw(text: &str, name: &str) -> Option<(u32, u32, u32)> {
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("#define") else { continue };
        let rest = rest.trim_start();
        let Some(after) = rest.strip_prefix(name) else { continue };
        let after = after.strip_prefix("(i)").unwrap_or(after);
        if !after.starts_with(char::is_whitespace) {
            continue;
        }
        let body: String = after.chars().filter(|c| !c.is_whitespace()).collect();
        let inner = body.strip_prefix("MW(")?.strip_suffix(')')?;
        let (hi, lo) = inner
            .split_once("):(")
            .map(|(h, l)| (h.trim_start_matches('('), l.trim_end_matches(')')))
            .unwrap_or_else(|| inner.split_once(':').unwrap());
        return bit_range(hi, lo);
    }
    None
}

/// `hi`, `lo` as `N` or `N+(i)*S` (the same S in both) -> (hi, lo, stride).
fn bit_range(hi: &str, lo: &str) -> Option<(u32, u32, u32)> {
    let part = |s: &str| -> Option<(u32, u32)> {
        match s.split_once("+(i)*") {
            Some((base, stride)) => Some((base.parse().ok()?, stride.parse().ok()?)),
            None => Some((s.parse().ok()?, 0)),
        }
    };
    let ((h, hs), (l, ls)) = (part(hi)?, part(lo)?);
    (hs == ls).then_some((h, l, hs))
}

#[test]
fn qmd_fields_match_open_gpu_doc() {
    let dir = open_gpu_doc_tree();
    if !dir.is_dir() {
        // What no other source checked: the layouts tinygrad's file lacks (all, without it).
        let in_tinygrad = layouts_in_tinygrad().unwrap_or_default();
        let unchecked: Vec<String> =
            qmd::LAYOUTS.iter().filter(|l| !in_tinygrad.contains(&(l.major, l.minor))).map(layout_name).collect();
        if !unchecked.is_empty() {
            tests::skips::record(
                "qmd_fields_match_open_gpu_doc",
                &format!(
                    "{} not checked: in open-gpu-doc only, and {} is absent (no package carries open-gpu-doc; \
                     OPEN_GPU_DOC_GIT=<clone> for scripts/fetch-real-data.sh)",
                    unchecked.join("; "),
                    dir.display()
                ),
            );
        }
        return;
    }
    let mut checked = 0;
    for layout in qmd::LAYOUTS {
        let path = dir.join(layout.header.path);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let major = format!("QMDV{:02}_{:02}_QMD_MAJOR_VERSION", layout.major, layout.minor);
        assert!(text.contains(&major), "{}: no {major}", path.display());
        for field in layout.fields {
            check_field_shape(layout, field);
            let got =
                mw(&text, field.name).unwrap_or_else(|| panic!("{} not defined in {}", field.name, path.display()));
            assert_eq!(got, (field.hi, field.lo, field.stride), "{}", field.name);
            checked += 1;
        }
    }
    assert!(checked > 150, "only {checked} fields");
    println!("checked {checked} QMD fields against open-gpu-doc");
}

// ---------------------------------------------------------------------------------------------
// tinygrad's generated Python.

/// The QMD fields of tinygrad's `nv_570.py`: `NAME = (hi, lo)` and
/// `NAME = lambda i: ((hi+(i)*s), (lo+(i)*s)) # type: ignore` -> (hi, lo, stride). Other
/// `_QMDV` lines (field values, two-index arrays, aliases of one element) are not fields of one
/// position and are left out.
fn tinygrad_fields(text: &str) -> BTreeMap<String, (u32, u32, u32)> {
    let mut fields = BTreeMap::new();
    for line in text.lines() {
        let Some((name, value)) = line.split_once(" = ") else { continue };
        if !name.contains("_QMDV") || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let value = value.split_once('#').map_or(value, |(v, _)| v);
        let value: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        let pair = match value.strip_prefix("lambdai:") {
            Some(array) => {
                array.strip_prefix("((").and_then(|v| v.strip_suffix("))")).and_then(|v| v.split_once("),("))
            }
            None => value.strip_prefix('(').and_then(|v| v.strip_suffix(')')).and_then(|v| v.split_once(',')),
        };
        if let Some(range) = pair.and_then(|(hi, lo)| bit_range(hi, lo)) {
            fields.insert(name.to_owned(), range);
        }
    }
    fields
}

/// The class prefixes (`NVC6C0`) under which tinygrad's file defines layout `tag` (`_QMDV03_00_`).
fn prefixes_with(fields: &BTreeMap<String, (u32, u32, u32)>, tag: &str) -> BTreeSet<String> {
    fields.keys().filter_map(|name| name.split_once(tag).map(|(prefix, _)| prefix.to_owned())).collect()
}

#[test]
fn qmd_fields_match_tinygrad_nv_570() {
    let path = tinygrad_file(headers::TINYGRAD_NV_570);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => panic!(
            "missing real data: {} ({e}): run `sudo scripts/fetch-real-data.sh` (it fetches PyPI's {})",
            path.display(),
            headers::TINYGRAD
        ),
    };
    let fields = tinygrad_fields(&text);
    assert!(fields.len() > 700, "only {} QMD fields read from {}", fields.len(), path.display());
    let mut checked = BTreeMap::new();
    let mut absent = Vec::new();
    let mut failures = Vec::new();
    for layout in qmd::LAYOUTS {
        let tag = version_tag(layout);
        let prefixes = prefixes_with(&fields, &tag);
        let prefix = match prefixes.len() {
            0 => {
                absent.push(layout);
                continue;
            }
            1 => prefixes.first().unwrap(),
            _ => panic!("{}: {tag} under several classes {prefixes:?}: which one is ours?", path.display()),
        };
        for field in layout.fields {
            check_field_shape(layout, field);
            let (_, rest) = field.name.split_once(&tag).unwrap();
            let theirs = format!("{prefix}{tag}{rest}");
            match fields.get(&theirs) {
                Some(&got) if got == (field.hi, field.lo, field.stride) => {
                    *checked.entry(format!("{prefix}{}", tag.trim_end_matches('_'))).or_insert(0) += 1
                }
                Some(got) => failures.push(format!(
                    "{}: ours ({}, {}, stride {}), tinygrad's {theirs} {got:?}",
                    field.name, field.hi, field.lo, field.stride
                )),
                None => failures.push(format!("{}: no {theirs} in {}", field.name, path.display())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} QMD fields differ from {}:\n  {}",
        failures.len(),
        path.display(),
        failures.join("\n  ")
    );
    let total: usize = checked.values().sum();
    println!("checked {total} QMD fields against {} {}: {checked:?}", headers::TINYGRAD, headers::TINYGRAD_NV_570.path);
    // Every layout but Hopper's is in tinygrad's file; a layout it lacks is named, never passed over.
    assert!(total > 120, "only {total} fields");
    let lacking: Vec<(u8, u8)> = absent.iter().map(|l| (l.major, l.minor)).collect();
    assert_eq!(lacking, [(4, 0)], "{} {} lacks other layouts than Hopper's V04_00", headers::TINYGRAD, path.display());
    // A layout tinygrad lacks (Hopper's) is left to qmd_fields_match_open_gpu_doc, which checks it
    // or records its skip by name.
    for layout in absent {
        println!("not in {}: {} (qmd_fields_match_open_gpu_doc checks it)", headers::TINYGRAD, layout_name(layout));
    }
}

#[test]
fn tinygrad_reader_handles_its_forms() {
    let text = concat!(
        "NVC6C0_QMDV03_00_QMD_GROUP_ID = (133, 128)\n",
        "NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID = lambda i: ((640+(i)*1), (640+(i)*1)) # type: ignore\n",
        "NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID_TRUE = 0x00000001\n",
        "NVCEC0_QMDV05_00_RELEASE0_ENABLE = NVCEC0_QMDV05_00_RELEASE_ENABLE(0)\n",
        "NVCEC0_QMDV05_00_X = lambda i,j: ((1+(i)*2+(j)*3), (1+(i)*2+(j)*3)) # type: ignore\n",
        "NVCEC0_QMDV05_00_BAD = lambda i: ((9+(i)*4), (8+(i)*2)) # type: ignore\n",
        "class struct_QMDV_x(c.Struct):\n",
    );
    let fields = tinygrad_fields(text);
    let expected: BTreeMap<String, (u32, u32, u32)> = [
        ("NVC6C0_QMDV03_00_QMD_GROUP_ID".to_owned(), (133, 128, 0)),
        ("NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID".to_owned(), (640, 640, 1)),
    ]
    .into_iter()
    .collect();
    assert_eq!(fields, expected);
    assert_eq!(prefixes_with(&fields, "_QMDV03_00_").into_iter().collect::<Vec<_>>(), ["NVC6C0"]);
    assert!(prefixes_with(&fields, "_QMDV04_00_").is_empty());
}
