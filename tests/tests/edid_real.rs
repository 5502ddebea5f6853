//! The EDID parser against 300 real EDIDs (`../shared/testdata/edid/*.bin`, from the linuxhw
//! EDID collection, CC-BY-4.0, see ATTRIBUTION.md there; set `EDID_TESTDATA_DIR` to read them
//! from elsewhere), each checked against the edid-decode output stored beside it
//! (`.linuxhw.txt`): manufacturer, product, version, every detailed timing in block order
//! (base block, then CTA-861, then DisplayID), CTA-861 VICs, established and standard modes.

use std::path::{Path, PathBuf};

use tests::edid_decode;

fn testdata_dir() -> PathBuf {
    match std::env::var_os("EDID_TESTDATA_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/edid"),
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
        match edid_decode::compare(&reference) {
            Ok(counts) => {
                dtds += counts.detailed;
                vics += counts.vics;
                established += counts.established;
                standard += counts.standard;
            }
            Err(what) => failures.extend(what.into_iter().map(|w| format!("{name}: {w}"))),
        }
        files += 1;
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    eprintln!("edid_real: {files} EDIDs, {dtds} detailed timings, {vics} VICs, {established} established, {standard} standard modes");
    assert_eq!(files, 300, "the corpus holds 300 EDIDs");
    assert!(dtds > 1000 && vics > 2000 && established > 2000 && standard > 1000, "too little compared");
}
