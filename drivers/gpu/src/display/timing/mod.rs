//! Display timings: one [`Timing`] type for every source (EDID detailed timing descriptors,
//! CTA-861 and DisplayID descriptors, the VESA DMT table, the CVT and GTF formulas).
//!
//! - [`dmt`]: VESA Display Monitor Timing standard 1.0 rev 13 (DMT 1.13), every entry by DMT id,
//!   with the standard-timing two-byte codes of E-EDID 1.4.
//! - [`cvt`]: VESA Coordinated Video Timings 1.2 (normal blanking, reduced blanking v1) and the
//!   reduced blanking v2 of CVT 1.2 / 2.0.
//! - [`gtf`]: VESA Generalized Timing Formula 1.1, default and secondary curve.

pub mod cvt;
pub mod dmt;
pub mod gtf;

/// One video timing. Horizontal values in pixels, vertical in lines.
///
/// For an interlaced timing, `v_active` is the active lines of the whole frame (both fields,
/// the way a mode is named: 1920x1080i) while `v_front`, `v_sync` and `v_back` are per field,
/// as an EDID detailed timing descriptor stores them. Porches are signed: real EDIDs carry
/// descriptors whose blanking is smaller than front porch plus sync (E-EDID 1.4 defines the
/// back porch only as the remainder), and such a descriptor is reported as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Timing {
    pub h_active: u32,
    pub h_front: i32,
    pub h_sync: i32,
    pub h_back: i32,
    pub v_active: u32,
    pub v_front: i32,
    pub v_sync: i32,
    pub v_back: i32,
    pub pixel_clock_khz: u32,
    pub h_sync_positive: bool,
    pub v_sync_positive: bool,
    pub interlaced: bool,
}

impl Timing {
    /// Total pixels per line (active plus blanking); 0 when the porches make no sense.
    pub fn h_total(&self) -> u64 {
        let blank =
            i64::from(self.h_front).saturating_add(i64::from(self.h_sync)).saturating_add(i64::from(self.h_back));
        u64::try_from(i64::from(self.h_active).saturating_add(blank)).unwrap_or(0)
    }

    /// Total lines per frame: an interlaced frame is two fields, each with the vertical
    /// blanking, plus one line split in halves between them (1080 + 2 * 22 + 1 = 1125).
    pub fn v_total(&self) -> u64 {
        let blank =
            i64::from(self.v_front).saturating_add(i64::from(self.v_sync)).saturating_add(i64::from(self.v_back));
        let lines = if self.interlaced {
            i64::from(self.v_active).saturating_add(blank.saturating_mul(2)).saturating_add(1)
        } else {
            i64::from(self.v_active).saturating_add(blank)
        };
        u64::try_from(lines).unwrap_or(0)
    }

    /// Field rate (frame rate when progressive) in millihertz; 0 for a degenerate timing.
    pub fn refresh_millihz(&self) -> u64 {
        let denom = self.h_total().saturating_mul(self.v_total());
        let fields: u64 = if self.interlaced { 2 } else { 1 };
        u64::from(self.pixel_clock_khz).saturating_mul(1_000_000).saturating_mul(fields).checked_div(denom).unwrap_or(0)
    }

    /// Field rate rounded to whole hertz.
    pub fn refresh_hz(&self) -> u32 {
        u32::try_from(self.refresh_millihz().saturating_add(500) / 1000).unwrap_or(u32::MAX)
    }

    /// Line rate in hertz.
    pub fn h_freq_hz(&self) -> u64 {
        u64::from(self.pixel_clock_khz).saturating_mul(1000).checked_div(self.h_total()).unwrap_or(0)
    }

    /// Active area in pixels.
    pub fn area(&self) -> u64 {
        u64::from(self.h_active).saturating_mul(u64::from(self.v_active))
    }
}

/// A mode named by its size and nominal refresh (established and standard timings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    pub width: u32,
    pub height: u32,
    pub refresh_hz: u32,
    pub interlaced: bool,
}

/// Rounds a non-negative float to the nearest integer (no_std has no `f64::round`).
pub(crate) fn round(x: f64) -> f64 {
    floor(x + 0.5)
}

/// Floor of a float in the range the formulas use (|x| < 2^52).
pub(crate) fn floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}
