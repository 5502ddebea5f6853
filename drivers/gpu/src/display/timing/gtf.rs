//! VESA Generalized Timing Formula 1.1 (GTF), computed from the vertical refresh rate, with the
//! default curve (C = 40 %, M = 600 %/kHz, K = 128, J = 20 %) or a secondary curve whose
//! parameters come from an EDID range limits descriptor (E-EDID 1.4 section 3.10.3.3).
//! NVIDIA: `src/common/modeset/timing/nvt_gtf.c` (`NvTiming_CalcGTF`).

use super::{round, Timing};

/// The curve's parameters, as the range limits descriptor gives them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GtfCurve {
    pub c: f64,
    pub m: f64,
    pub k: f64,
    pub j: f64,
}

impl GtfCurve {
    pub const DEFAULT: GtfCurve = GtfCurve { c: 40.0, m: 600.0, k: 128.0, j: 20.0 };
}

const CELL_GRAN: f64 = 8.0;
const MIN_PORCH: f64 = 1.0;
const V_SYNC: f64 = 3.0;
const MIN_VSYNC_BP_US: f64 = 550.0;
const H_SYNC_PERCENT: f64 = 8.0;
const MARGIN_PERCENT: f64 = 1.8;

/// Generates a GTF timing from size and refresh rate. Sync polarities follow GTF 1.1: the
/// default curve has a negative horizontal and positive vertical sync, the secondary curve the
/// opposite. `None` for zero sizes or rates.
pub fn gtf(
    width: u32,
    height: u32,
    refresh_hz: f64,
    interlaced: bool,
    margins: bool,
    curve: GtfCurve,
    secondary: bool,
) -> Option<Timing> {
    if width == 0 || height == 0 || refresh_hz <= 0.0 {
        return None;
    }
    let c_prime = (curve.c - curve.j) * curve.k / 256.0 + curve.j;
    let m_prime = curve.k / 256.0 * curve.m;
    let h_pixels = round(f64::from(width) / CELL_GRAN) * CELL_GRAN;
    let v_lines = if interlaced { round(f64::from(height) / 2.0) } else { round(f64::from(height)) };
    let field_rate = if interlaced { refresh_hz * 2.0 } else { refresh_hz };
    let v_margin = if margins { round(MARGIN_PERCENT / 100.0 * v_lines) } else { 0.0 };
    let interlace = if interlaced { 0.5 } else { 0.0 };
    let h_period_est = ((1.0 / field_rate) - MIN_VSYNC_BP_US / 1_000_000.0)
        / (v_lines + 2.0 * v_margin + MIN_PORCH + interlace)
        * 1_000_000.0;
    let v_sync_bp = round(MIN_VSYNC_BP_US / h_period_est);
    let v_back = v_sync_bp - V_SYNC;
    let total_v = v_lines + 2.0 * v_margin + v_sync_bp + interlace + MIN_PORCH;
    let v_field_rate_est = 1.0 / h_period_est / total_v * 1_000_000.0;
    let h_period = h_period_est / (field_rate / v_field_rate_est);
    let h_margin = if margins { round(h_pixels * MARGIN_PERCENT / 100.0 / CELL_GRAN) * CELL_GRAN } else { 0.0 };
    let total_active = h_pixels + 2.0 * h_margin;
    let duty = c_prime - m_prime * h_period / 1000.0;
    let h_blank = round(total_active * duty / (100.0 - duty) / (2.0 * CELL_GRAN)) * 2.0 * CELL_GRAN;
    let total_pixels = total_active + h_blank;
    let pixel_mhz = total_pixels / h_period;
    let h_sync = round(H_SYNC_PERCENT / 100.0 * total_pixels / CELL_GRAN) * CELL_GRAN;
    let h_back = h_blank / 2.0;
    let h_front = h_blank - h_back - h_sync;
    let lines = v_lines + 2.0 * v_margin;
    Some(Timing {
        h_active: total_active as u32,
        h_front: h_front as i32,
        h_sync: h_sync as i32,
        h_back: h_back as i32,
        v_active: if interlaced { (lines as u32).saturating_mul(2) } else { lines as u32 },
        v_front: MIN_PORCH as i32,
        v_sync: V_SYNC as i32,
        v_back: v_back as i32,
        pixel_clock_khz: round(pixel_mhz * 1000.0) as u32,
        h_sync_positive: secondary,
        v_sync_positive: !secondary,
        interlaced,
    })
}
