//! `nvtool edid`: what the driver's EDID parser (`nvgpu::display`) sees in an EDID file, as a
//! text summary or one JSON object.
//!
//! JSON keys (a contract): `manufacturer` (three letters), `product` (number), `version`
//! ("1.4"), `name` (string or null), `detailed` (every detailed timing in block order: base
//! block, then CTA-861, then DisplayID; objects with `h_active`, `v_active`,
//! `pixel_clock_khz`, `h_front`, `h_sync`, `h_back`, `v_front`, `v_sync`, `v_back`,
//! `interlaced`, `h_sync_positive`, `v_sync_positive`), `established` and `standard` (lists of
//! `[width, height, refresh_hz]`), `cta_vics` (list of numbers), `range_limits` (object with
//! `min_v_hz`, `max_v_hz`, `min_h_khz`, `max_h_khz`, `max_pixel_clock_mhz`, `formula`, or
//! null), `extensions` (the list of extension block tags, in block order: 2 = CTA-861, 112 =
//! DisplayID, 240 = block map), `errors` (list of strings, the recoverable problems).

use std::fmt::Write as _;
use std::process::ExitCode;

use nvgpu::display::edid::RangeFormula;
use nvgpu::display::timing::Timing;
use nvgpu::display::{self, mode, Edid};
use serde_json::{json, Value};

/// Runs `nvtool edid` with the arguments after the command name.
pub fn run(args: &[String]) -> ExitCode {
    let mut json_output = false;
    let mut file = None;
    for arg in args {
        match arg.as_str() {
            "--json" => json_output = true,
            flag if flag.starts_with('-') => return crate::usage_error(&format!("unknown option '{flag}'")),
            path if file.is_none() => file = Some(path),
            _ => return crate::usage_error("more than one FILE given"),
        }
    }
    let Some(path) = file else {
        return crate::usage_error("no FILE given");
    };
    let data = match std::fs::read(path) {
        Ok(data) => data,
        Err(e) => return fail(path, &e),
    };
    let edid = match display::parse(&data) {
        Ok(edid) => edid,
        Err(e) => return fail(path, &e),
    };
    if json_output {
        println!("{}", report_json(&edid));
    } else {
        print!("{}", report_text(path, &edid));
    }
    ExitCode::SUCCESS
}

fn fail(path: &str, reason: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("nvtool edid: {path}: {reason}");
    ExitCode::FAILURE
}

fn timing_json(t: &Timing) -> Value {
    json!({
        "h_active": t.h_active, "v_active": t.v_active, "pixel_clock_khz": t.pixel_clock_khz,
        "h_front": t.h_front, "h_sync": t.h_sync, "h_back": t.h_back,
        "v_front": t.v_front, "v_sync": t.v_sync, "v_back": t.v_back,
        "interlaced": t.interlaced, "h_sync_positive": t.h_sync_positive, "v_sync_positive": t.v_sync_positive,
    })
}

fn formula_name(f: &RangeFormula) -> &'static str {
    match f {
        RangeFormula::DefaultGtf => "default_gtf",
        RangeFormula::BareLimits => "bare_limits",
        RangeFormula::SecondaryGtf { .. } => "secondary_gtf",
        RangeFormula::Cvt { .. } => "cvt",
        RangeFormula::Other(_) => "other",
    }
}

/// The JSON object (see the module comment for its keys).
pub fn report_json(edid: &Edid) -> Value {
    let b = &edid.base;
    let range = b.range_limits().map(|r| {
        json!({
            "min_v_hz": r.min_v_hz, "max_v_hz": r.max_v_hz, "min_h_khz": r.min_h_khz, "max_h_khz": r.max_h_khz,
            "max_pixel_clock_mhz": r.max_pixel_clock_mhz, "formula": formula_name(&r.formula),
        })
    });
    json!({
        "manufacturer": b.manufacturer_str(),
        "product": b.product,
        "version": format!("{}.{}", b.version, b.revision),
        "name": b.name(),
        "detailed": edid.detailed_timings().iter().map(|(_, t)| timing_json(t)).collect::<Vec<_>>(),
        "established": b.established.iter().map(|m| json!([m.width, m.height, m.refresh_hz])).collect::<Vec<_>>(),
        "standard": b.standard.iter().map(|s| json!([s.mode.width, s.mode.height, s.mode.refresh_hz])).collect::<Vec<_>>(),
        "cta_vics": edid.cta_vics(),
        "range_limits": range,
        "extensions": edid.extensions.iter().map(|e| e.tag()).collect::<Vec<_>>(),
        "errors": edid.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
    })
}

fn report_text(path: &str, edid: &Edid) -> String {
    let mut out = String::new();
    let w = &mut out;
    let b = &edid.base;
    let _ = writeln!(
        w,
        "EDID {path}: version {}.{}, {} product {:#06x}",
        b.version,
        b.revision,
        b.manufacturer_str(),
        b.product
    );
    if let Some(name) = b.name() {
        let _ = writeln!(w, "  name: {name}");
    }
    for (src, t) in edid.detailed_timings() {
        let _ = writeln!(
            w,
            "  detailed ({src:?}): {}x{}{} {}.{:03} Hz {} kHz (h {} {} {} {}, v {} {} {} {})",
            t.h_active,
            t.v_active,
            if t.interlaced { "i" } else { "" },
            t.refresh_millihz() / 1000,
            t.refresh_millihz() % 1000,
            t.pixel_clock_khz,
            t.h_front,
            t.h_sync,
            t.h_back,
            if t.h_sync_positive { '+' } else { '-' },
            t.v_front,
            t.v_sync,
            t.v_back,
            if t.v_sync_positive { '+' } else { '-' },
        );
    }
    for m in &b.established {
        let _ = writeln!(w, "  established: {}x{}@{}", m.width, m.height, m.refresh_hz);
    }
    for s in &b.standard {
        let _ = writeln!(w, "  standard: {}x{}@{}", s.mode.width, s.mode.height, s.mode.refresh_hz);
    }
    if let Some(r) = b.range_limits() {
        let _ = writeln!(
            w,
            "  range limits: {}-{} Hz V, {}-{} kHz H, max {} MHz ({})",
            r.min_v_hz,
            r.max_v_hz,
            r.min_h_khz,
            r.max_h_khz,
            r.max_pixel_clock_mhz,
            formula_name(&r.formula)
        );
    }
    let vics = edid.cta_vics();
    if !vics.is_empty() {
        let _ = writeln!(w, "  CTA-861 VICs: {vics:?}");
    }
    for (i, e) in edid.extensions.iter().enumerate() {
        let _ = writeln!(w, "  block {}: extension tag {:#04x}", i + 1, e.tag());
    }
    if let Some(t) = mode::select_mode(edid, u32::MAX) {
        let _ = writeln!(w, "  selected mode (no head limit): {}x{} {} kHz", t.h_active, t.v_active, t.pixel_clock_khz);
    }
    for e in &edid.errors {
        let _ = writeln!(w, "  error: {e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// `--json` output on corpus EDIDs: one JSON object with exactly the contract's keys, whose
    /// values agree with the library's parse.
    #[test]
    fn json_on_corpus_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata/edid");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!("SKIPPED nvtool_edid_json: no corpus at {}", dir.display());
            return;
        };
        let mut bins: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "bin"))
            .collect();
        bins.sort();
        let mut checked = 0;
        for bin in bins.iter().take(20) {
            let edid = nvgpu::display::parse(&std::fs::read(bin).unwrap()).unwrap();
            // What `run` prints with --json, read back.
            let text = super::report_json(&edid).to_string();
            assert_eq!(text.trim().lines().count(), 1, "one JSON object on one line");
            let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
            let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort();
            assert_eq!(
                keys,
                [
                    "cta_vics",
                    "detailed",
                    "errors",
                    "established",
                    "extensions",
                    "manufacturer",
                    "name",
                    "product",
                    "range_limits",
                    "standard",
                    "version"
                ]
            );
            assert_eq!(v["manufacturer"], edid.base.manufacturer_str());
            assert_eq!(v["product"], edid.base.product);
            let d = v["detailed"].as_array().unwrap();
            let ours = edid.detailed_timings();
            assert_eq!(d.len(), ours.len());
            for (j, (_, t)) in d.iter().zip(&ours) {
                assert_eq!(j["h_active"], t.h_active);
                assert_eq!(j["pixel_clock_khz"], t.pixel_clock_khz);
                assert_eq!(j["v_back"], t.v_back);
                assert_eq!(j["h_sync_positive"], t.h_sync_positive);
            }
            assert_eq!(v["cta_vics"].as_array().unwrap().len(), edid.cta_vics().len());
            checked += 1;
        }
        assert_eq!(checked, 20);
    }
}
