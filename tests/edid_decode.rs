//! A reader of `edid-decode`'s text output (the reference EDID decoder; the corpus's
//! `.linuxhw.txt` files hold it, and Debian's `edid-decode` prints the same). It pulls out what
//! the tests compare: version, manufacturer, model, every detailed timing in block order,
//! CTA-861 VICs, and established and standard modes.

use nvgpu::display::timing::Timing;
use nvgpu::display::{self, mode};

/// One detailed timing as edid-decode prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefTiming {
    pub h_active: u32,
    pub v_active: u32,
    pub interlaced: bool,
    pub pixel_clock_khz: u32,
    pub h_front: i32,
    pub h_sync: i32,
    pub h_back: i32,
    pub h_positive: bool,
    pub v_front: i32,
    pub v_sync: i32,
    pub v_back: i32,
    pub v_positive: bool,
}

/// A mode line of the established or standard timings: size, refresh rounded to whole Hz,
/// and the pixel clock in kHz as printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefMode {
    pub source: String,
    pub width: u32,
    pub height: u32,
    pub interlaced: bool,
    pub refresh_millihz: u64,
    pub pixel_clock_khz: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Reference {
    /// The bytes edid-decode was given (its "edid-decode (hex):" dump).
    pub hex: Vec<u8>,
    pub version: String,
    pub manufacturer: String,
    pub model: Option<u32>,
    pub detailed: Vec<RefTiming>,
    pub vics: Vec<u8>,
    pub established: Vec<RefMode>,
    pub standard: Vec<RefMode>,
}

/// "586.580000" MHz -> 586580 kHz.
fn mhz_to_khz(s: &str) -> Option<u32> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let frac: String = frac.chars().chain("000".chars()).take(3).collect();
    Some(int.parse::<u32>().ok()? * 1000 + frac.parse::<u32>().ok()?)
}

/// "59.940476" Hz -> 59940 mHz (rounded).
fn hz_to_millihz(s: &str) -> Option<u64> {
    let v: f64 = s.parse().ok()?;
    Some((v * 1000.0).round() as u64)
}

/// "2560x1440" or "1920x1080i".
fn size(s: &str) -> Option<(u32, u32, bool)> {
    let (w, h) = s.split_once('x')?;
    let interlaced = h.ends_with('i');
    let h = h.trim_end_matches('i');
    Some((w.parse().ok()?, h.parse().ok()?, interlaced))
}

/// "Hfront    8 Hsync  32 Hback   40 Hpol P": (front, sync, back, positive).
fn porches(line: &str, axis: char) -> Option<(i32, i32, i32, bool)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let get = |name: &str| -> Option<&str> {
        let i = words.iter().position(|w| *w == name)?;
        words.get(i + 1).copied()
    };
    let n = |name: String| -> Option<i32> { get(&name)?.parse().ok() };
    Some((
        n(format!("{axis}front"))?,
        n(format!("{axis}sync"))?,
        n(format!("{axis}back"))?,
        get(&format!("{axis}pol")) == Some("P"),
    ))
}

/// A mode line: "DMT 0x04:   640x480    59.940476 Hz   4:3     31.469 kHz     25.175000 MHz".
fn mode_line(line: &str) -> Option<RefMode> {
    let (source, rest) = line.trim().split_once(':')?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let (width, height, interlaced) = size(words.first()?)?;
    let hz = words.iter().position(|w| *w == "Hz")?;
    let mhz = words.iter().position(|w| *w == "MHz")?;
    Some(RefMode {
        source: source.trim().to_string(),
        width,
        height,
        interlaced,
        refresh_millihz: hz_to_millihz(words.get(hz.checked_sub(1)?)?)?,
        pixel_clock_khz: mhz_to_khz(words.get(mhz.checked_sub(1)?)?)?,
    })
}

/// Reads edid-decode's output.
pub fn read(text: &str) -> Reference {
    let mut r = Reference::default();
    let lines: Vec<&str> = text.lines().collect();
    // The section (two-space indented heading) a line is in.
    let mut section = "";
    let mut i = 0;
    if let Some(start) = lines.iter().position(|l| l.starts_with("edid-decode (hex):")) {
        for l in lines.iter().skip(start + 1) {
            if l.starts_with("----") {
                break;
            }
            r.hex.extend(l.split_whitespace().filter_map(|w| u8::from_str_radix(w, 16).ok()));
        }
    }
    while i < lines.len() {
        let line = lines[i];
        // Everything after the warnings and failures is commentary.
        if line.starts_with("Warnings:") || line.starts_with("Failures:") {
            break;
        }
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if indent == 2 {
            section = t;
        }
        if let Some(v) = t.strip_prefix("EDID Structure Version & Revision: ") {
            r.version = v.to_string();
        } else if let Some(v) = t.strip_prefix("Manufacturer: ").filter(|_| indent == 4 && r.manufacturer.is_empty()) {
            r.manufacturer = v.to_string();
        } else if let Some(v) = t.strip_prefix("Model: ").filter(|_| indent == 4 && r.model.is_none()) {
            r.model = v.parse().ok();
        } else if t.starts_with("DTD") && t.contains("MHz") {
            let words: Vec<&str> = t.split_whitespace().collect();
            let at = words.iter().position(|w| w.contains('x') && size(w).is_some());
            let mhz = words.iter().position(|w| *w == "MHz");
            let h = lines.get(i + 1).and_then(|l| porches(l, 'H'));
            let v = lines.get(i + 2).and_then(|l| porches(l, 'V'));
            if let (Some(at), Some(mhz), Some(h), Some(v)) = (at, mhz, h, v) {
                if let (Some((w, hh, il)), Some(khz)) = (size(words[at]), mhz_to_khz(words[mhz - 1])) {
                    r.detailed.push(RefTiming {
                        h_active: w,
                        v_active: hh,
                        interlaced: il,
                        pixel_clock_khz: khz,
                        h_front: h.0,
                        h_sync: h.1,
                        h_back: h.2,
                        h_positive: h.3,
                        v_front: v.0,
                        v_sync: v.1,
                        v_back: v.2,
                        v_positive: v.3,
                    });
                }
            }
        } else if indent == 4
            && section == "Video Data Block:"
            && (t.starts_with("VIC") || t.starts_with("Unknown (VIC"))
        {
            let t = t.strip_prefix("Unknown (").unwrap_or(t);
            if let Some(n) = t
                .strip_prefix("VIC")
                .and_then(|s| s.split(':').next())
                .and_then(|s| s.trim().trim_end_matches(')').parse().ok())
            {
                r.vics.push(n);
            }
        } else if indent == 4 && section == "Established Timings I & II:" {
            if let Some(m) = mode_line(t) {
                r.established.push(m);
            }
        } else if indent == 4 && section == "Standard Timings:" {
            if let Some(m) = mode_line(t) {
                r.standard.push(m);
            }
        }
        i += 1;
    }
    r
}

/// How much one comparison checked.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub detailed: usize,
    pub vics: usize,
    pub established: usize,
    pub standard: usize,
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

/// Decodes the bytes edid-decode decoded (`reference.hex`) with `nvgpu::display` and compares:
/// version, manufacturer, product, every detailed timing in block order, CTA-861 VICs,
/// established modes, and standard modes with the pixel clock of their full timing (DMT lookup,
/// or the CVT/GTF formula). Returns what was compared, or every difference.
pub fn compare(reference: &Reference) -> Result<Counts, Vec<String>> {
    let edid = display::parse(&reference.hex).map_err(|e| vec![format!("parse failed: {e}")])?;
    let mut failures = Vec::new();
    let mut fail = |what: String| failures.push(what);
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
    let our_vics = edid.cta_vics();
    if our_vics != reference.vics {
        fail(format!("VICs {our_vics:?} vs {:?}", reference.vics));
    }
    let est: Vec<(u32, u32, bool)> = edid.base.established.iter().map(|m| (m.width, m.height, m.interlaced)).collect();
    let ref_est: Vec<(u32, u32, bool)> =
        reference.established.iter().map(|m| (m.width, m.height, m.interlaced)).collect();
    if est != ref_est {
        fail(format!("established {est:?} vs {ref_est:?}"));
    }
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
    if !failures.is_empty() {
        return Err(failures);
    }
    Ok(Counts {
        detailed: reference.detailed.len(),
        vics: reference.vics.len(),
        established: ref_est.len(),
        standard: std_ref.len(),
    })
}
