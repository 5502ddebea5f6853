//! Mode selection: which timing to drive a head with.
//!
//! Order:
//! 1. The preferred timing: the first detailed timing of the base block when the EDID says it
//!    is preferred (always in E-EDID 1.4; feature bit 1 in 1.3), if the head can drive its
//!    pixel clock and it lies within the range limits.
//! 2. Otherwise the best of every other timing the EDID offers (detailed timings of every
//!    block, standard timings, established timings, CVT 3-byte codes), keeping those within
//!    the range limits descriptor (vertical and horizontal rates, maximum pixel clock) and the
//!    head's maximum pixel clock; best = largest active area, then highest refresh, then the
//!    earlier one in the EDID.
//!
//! Standard and established timings become full timings from the DMT table; a standard timing
//! DMT does not give a code is generated with CVT where an EDID 1.4 range limits descriptor
//! says CVT is supported, else with GTF (E-EDID 1.4 section 3.9; edid-decode does the same).

use alloc::vec::Vec;

use super::edid::{Descriptor, RangeFormula, RangeLimits};
use super::timing::cvt::{cvt, CvtBlanking, CvtRequest};
use super::timing::gtf::{gtf, GtfCurve};
use super::timing::{dmt, Mode, Timing};
use super::Edid;

/// The full timing of a mode named by size and refresh in this EDID.
pub fn mode_timing(edid: &Edid, mode: &Mode) -> Option<Timing> {
    if mode.interlaced {
        return dmt::DMT
            .iter()
            .find(|d| d.timing.interlaced && d.timing.h_active == mode.width && d.timing.v_active == mode.height)
            .map(|d| d.timing);
    }
    if let Some(d) = dmt::by_standard_timing(mode.width, mode.height, mode.refresh_hz) {
        return Some(d.timing);
    }
    let rate = f64::from(mode.refresh_hz);
    let cvt_supported = matches!(edid.base.range_limits(), Some(RangeLimits { formula: RangeFormula::Cvt { .. }, .. }));
    if edid.base.revision >= 4 && cvt_supported {
        cvt(&CvtRequest {
            width: mode.width,
            height: mode.height,
            refresh_hz: rate,
            blanking: CvtBlanking::Normal,
            interlaced: false,
            margins: false,
            video_optimized: false,
        })
    } else {
        gtf_for(edid.base.range_limits(), mode.width, mode.height, rate)
    }
}

/// GTF with the secondary curve when the range limits descriptor gives one and the default
/// curve's line rate reaches its start frequency (E-EDID 1.4 section 3.10.3.3).
pub fn gtf_for(limits: Option<&RangeLimits>, width: u32, height: u32, rate: f64) -> Option<Timing> {
    let default = gtf(width, height, rate, false, false, GtfCurve::DEFAULT, false)?;
    if let Some(RangeLimits { formula: RangeFormula::SecondaryGtf { start_khz, c, m, k, j }, .. }) = limits {
        if default.h_freq_hz() >= u64::from(*start_khz).saturating_mul(1000) {
            return gtf(width, height, rate, false, false, GtfCurve { c: *c, m: *m, k: *k, j: *j }, true);
        }
    }
    Some(default)
}

/// Every timing the EDID offers, in EDID order (detailed, standard, established, CVT codes).
pub fn all_timings(edid: &Edid) -> Vec<Timing> {
    let mut out: Vec<Timing> = edid.detailed_timings().into_iter().map(|(_, t)| t).collect();
    let mut modes: Vec<Mode> = edid.base.standard.iter().map(|s| s.mode).collect();
    for d in &edid.base.descriptors {
        if let Descriptor::StandardTimings(list) = d {
            modes.extend(list.iter().map(|s| s.mode));
        }
    }
    modes.extend(edid.base.established.iter().copied());
    out.extend(modes.iter().filter_map(|m| mode_timing(edid, m)));
    for d in &edid.base.descriptors {
        if let Descriptor::CvtCodes(codes) = d {
            for c in codes {
                let blanking = if c.rates & 0x01 != 0 && c.preferred_hz == 60 {
                    CvtBlanking::ReducedV1
                } else {
                    CvtBlanking::Normal
                };
                out.extend(cvt(&CvtRequest {
                    width: c.width,
                    height: c.height,
                    refresh_hz: f64::from(c.preferred_hz),
                    blanking,
                    interlaced: false,
                    margins: false,
                    video_optimized: false,
                }));
            }
        }
    }
    out
}

/// Whether `t` lies within `limits` (rates rounded as the descriptor states them: whole Hz
/// and kHz) and under `max_pixel_clock_khz`.
pub fn fits(t: &Timing, limits: Option<&RangeLimits>, max_pixel_clock_khz: u32) -> bool {
    if t.pixel_clock_khz == 0 || t.pixel_clock_khz > max_pixel_clock_khz {
        return false;
    }
    let Some(l) = limits else { return true };
    let v = t.refresh_hz();
    let h_khz = u32::try_from(t.h_freq_hz().saturating_add(500) / 1000).unwrap_or(u32::MAX);
    let clock_ok = l.max_pixel_clock_mhz == 0
        || u64::from(t.pixel_clock_khz) <= u64::from(l.max_pixel_clock_mhz).saturating_mul(1000);
    (l.min_v_hz..=l.max_v_hz).contains(&v) && (l.min_h_khz..=l.max_h_khz).contains(&h_khz) && clock_ok
}

/// Picks the mode for a head whose maximum pixel clock is `max_pixel_clock_khz` (see the
/// module comment for the order). `None` when nothing fits.
pub fn select_mode(edid: &Edid, max_pixel_clock_khz: u32) -> Option<Timing> {
    let limits = edid.base.range_limits();
    if edid.base.first_dtd_is_preferred() {
        let first = edid.base.descriptors.iter().find_map(|d| match d {
            Descriptor::Detailed(t) => Some(t.timing),
            _ => None,
        });
        if let Some(t) = first.filter(|t| fits(t, limits, max_pixel_clock_khz)) {
            return Some(t);
        }
    }
    let mut best: Option<Timing> = None;
    for t in all_timings(edid) {
        if !fits(&t, limits, max_pixel_clock_khz) {
            continue;
        }
        let better = match &best {
            None => true,
            Some(b) => (t.area(), t.refresh_millihz()) > (b.area(), b.refresh_millihz()),
        };
        if better {
            best = Some(t);
        }
    }
    best
}
