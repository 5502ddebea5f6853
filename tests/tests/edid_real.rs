//! The EDID parser against 300 real EDIDs (`../shared/testdata/edid/*.bin`, from the linuxhw
//! EDID collection, CC-BY-4.0, see ATTRIBUTION.md there; set `EDID_TESTDATA_DIR` to read them
//! from elsewhere), each checked against the edid-decode output stored beside it
//! (`.linuxhw.txt`): manufacturer, product, version, every detailed timing in block order
//! (base block, then CTA-861, then DisplayID), CTA-861 VICs, established and standard modes.

use std::path::{Path, PathBuf};

use nvgpu::display::timing::Timing;
use nvgpu::display::{self, mode};
use tests::edid_decode::{self, RefTiming};

fn testdata_dir() -> PathBuf {
    match std::env::var_os("EDID_TESTDATA_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/edid"),
    }
}

fn ours(t: &Timing) -> RefTiming {
    RefTiming {
        h_active: t.h_active,
        v_active: t.v_active,
        interlaced: t.interlaced,
        pixel_clock_khz: t.pixel_clock_khz,
        h_front: t.h_front,
        h_sync: t.h_sync,
        h_back: t.h_back,
        h_positive: t.h_sync_positive,
        v_front: t.v_front,
        v_sync: t.v_sync,
        v_back: t.v_back,
        v_positive: t.v_sync_positive,
    }
}

#[test]
fn corpus_matches_edid_decode() {
    let dir = testdata_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        tests::skips::record("edid_real", &format!("no EDID corpus at {}", dir.display()));
        return;
    };
    let mut bins: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    bins.sort();
    let (mut files, mut dtds, mut vics, mut established, mut standard) = (0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for bin in &bins {
        let name = bin.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(bin).unwrap();
        let text = std::fs::read_to_string(bin.with_extension("linuxhw.txt")).unwrap();
        let reference = edid_decode::read(&text);
        // Decode what edid-decode decoded. Most .bin files are 512-byte reads of a 256-byte
        // EEPROM (the second half repeats the first); the hex dump says which bytes it saw.
        assert!(
            reference.hex.len() >= 128 && bytes.starts_with(&reference.hex),
            "{name}: the .bin does not begin with edid-decode's input"
        );
        let bytes = &reference.hex;
        let edid = match display::parse(bytes) {
            Ok(e) => e,
            Err(e) => {
                failures.push(format!("{name}: parse failed: {e}"));
                continue;
            }
        };
        let mut fail = |what: String| failures.push(format!("{name}: {what}"));
        let version = format!("{}.{}", edid.base.version, edid.base.revision);
        if version != reference.version {
            fail(format!("version {version} vs {}", reference.version));
        }
        if edid.base.manufacturer_str() != reference.manufacturer {
            fail(format!("manufacturer {} vs {}", edid.base.manufacturer_str(), reference.manufacturer));
        }
        if Some(u32::from(edid.base.product)) != reference.model {
            fail(format!("product {} vs {:?}", edid.base.product, reference.model));
        }
        let detailed: Vec<RefTiming> = edid.detailed_timings().iter().map(|(_, t)| ours(t)).collect();
        if detailed != reference.detailed {
            let i = detailed
                .iter()
                .zip(&reference.detailed)
                .position(|(a, b)| a != b)
                .unwrap_or(detailed.len().min(reference.detailed.len()));
            fail(format!(
                "detailed timing {i} of {}/{} differs:\n ours {:?}\n ref  {:?}",
                detailed.len(),
                reference.detailed.len(),
                detailed.get(i),
                reference.detailed.get(i)
            ));
        }
        dtds += reference.detailed.len();
        let our_vics = edid.cta_vics();
        if our_vics != reference.vics {
            fail(format!("VICs {our_vics:?} vs {:?}", reference.vics));
        }
        vics += reference.vics.len();
        let est: Vec<(u32, u32, bool)> =
            edid.base.established.iter().map(|m| (m.width, m.height, m.interlaced)).collect();
        let ref_est: Vec<(u32, u32, bool)> =
            reference.established.iter().map(|m| (m.width, m.height, m.interlaced)).collect();
        if est != ref_est {
            fail(format!("established {est:?} vs {ref_est:?}"));
        }
        established += ref_est.len();
        // Standard timings: size and refresh, and the full timing's pixel clock (DMT lookup,
        // or the CVT/GTF formula) against the one edid-decode printed.
        let std_ours: Vec<(u32, u32, u32, u32)> = edid
            .base
            .standard
            .iter()
            .map(|s| {
                let clock = mode::mode_timing(&edid, &s.mode).map_or(0, |t| t.pixel_clock_khz);
                (s.mode.width, s.mode.height, s.mode.refresh_hz, clock)
            })
            .collect();
        let std_ref: Vec<(u32, u32, u32, u32)> = reference
            .standard
            .iter()
            .map(|m| (m.width, m.height, ((m.refresh_millihz + 500) / 1000) as u32, m.pixel_clock_khz))
            .collect();
        if std_ours != std_ref {
            fail(format!("standard {std_ours:?} vs {std_ref:?}"));
        }
        standard += std_ref.len();
        files += 1;
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    eprintln!("edid_real: {files} EDIDs, {dtds} detailed timings, {vics} VICs, {established} established, {standard} standard modes");
    assert_eq!(files, 300, "the corpus holds 300 EDIDs");
    assert!(dtds > 1000 && vics > 2000 && established > 2000 && standard > 1000, "too little compared");
}
