//! Every QMD field position in `nvgpu::hw::qmd` against NVIDIA's open-gpu-doc headers
//! (`classes/compute/cl*qmd.h`): name, `MW(hi:lo)` and the stride of `(i)` for array fields.
//!
//! open-gpu-doc is not in Debian: `scripts/fetch-real-data.sh` unpacks it only from a local clone
//! (OPEN_GPU_DOC_GIT). Without the tree the test prints why and returns; with it, every field is
//! checked. `NVGPU_REAL_DATA` overrides the data directory.

use std::path::{Path, PathBuf};

use nvgpu::hw::{headers, qmd};

fn tree() -> PathBuf {
    let root = std::env::var_os("NVGPU_REAL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"));
    let commit = headers::OPEN_GPU_DOC.strip_prefix("open-gpu-doc@").unwrap();
    root.join(format!("open-gpu-doc-{commit}"))
}

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
        let part = |s: &str| -> (u32, u32) {
            match s.split_once("+(i)*") {
                Some((base, stride)) => (base.parse().unwrap(), stride.parse().unwrap()),
                None => (s.parse().unwrap(), 0),
            }
        };
        let ((h, hs), (l, ls)) = (part(hi), part(lo));
        assert_eq!(hs, ls, "{name}: strides differ");
        return Some((h, l, hs));
    }
    None
}

#[test]
fn qmd_fields_match_open_gpu_doc() {
    let dir = tree();
    if !dir.is_dir() {
        tests::skips::record(
            "qmd_fields_match_open_gpu_doc",
            &format!(
                "QMD fields not checked: {} is absent (open-gpu-doc needs a local clone: OPEN_GPU_DOC_GIT for \
                 scripts/fetch-real-data.sh)",
                dir.display()
            ),
        );
        return;
    }
    let mut checked = 0;
    for layout in qmd::LAYOUTS {
        let path = dir.join(layout.header.path);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let major = format!("QMDV{:02}_{:02}_QMD_MAJOR_VERSION", layout.major, layout.minor);
        assert!(text.contains(&major), "{}: no {major}", path.display());
        for field in layout.fields {
            assert!(field.name.contains(&format!("_QMDV{:02}_{:02}_", layout.major, layout.minor)), "{}", field.name);
            let got =
                mw(&text, field.name).unwrap_or_else(|| panic!("{} not defined in {}", field.name, path.display()));
            assert_eq!(got, (field.hi, field.lo, field.stride), "{}", field.name);
            let shift = field.name.rsplit_once("_SHIFTED").map_or(0, |(_, n)| n.parse().unwrap());
            assert_eq!(field.shift, shift, "{}", field.name);
            assert!(field.hi + field.stride * 7 < layout.dwords as u32 * 32, "{} beyond the QMD", field.name);
            checked += 1;
        }
    }
    assert!(checked > 150, "only {checked} fields");
    println!("checked {checked} QMD fields against open-gpu-doc");
}
