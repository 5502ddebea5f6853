//! VESA Coordinated Video Timings (CVT 1.2, section 3 and its spreadsheet): normal blanking,
//! reduced blanking v1, and reduced blanking v2 (CVT 1.2 / 2.0). Interlace and margins as the
//! standard defines them. NVIDIA implements the same formulas in
//! `src/common/modeset/timing/nvt_cvt.c` (`NvTiming_CalcCVT`, `NvTiming_CalcCVT_RB`,
//! `NvTiming_CalcCVT_RB2`).
//!
//! The formulas are floating point as in the standard's spreadsheet; the results are whole
//! pixels, lines and kilohertz.

use super::{floor, Timing};

/// Which CVT blanking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CvtBlanking {
    Normal,
    ReducedV1,
    ReducedV2,
}

/// What to generate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CvtRequest {
    pub width: u32,
    pub height: u32,
    pub refresh_hz: f64,
    pub blanking: CvtBlanking,
    pub interlaced: bool,
    /// 1.8 % margins on each side.
    pub margins: bool,
    /// RB2 only: the 1000/1001 "video optimized" refresh.
    pub video_optimized: bool,
}

const CELL_GRAN: f64 = 8.0;
const MIN_V_PORCH: f64 = 3.0;
const MIN_V_BPORCH: f64 = 6.0;
const MIN_VSYNC_BP_US: f64 = 550.0;
const C_PRIME: f64 = 30.0; // ((C - J) * K / 256) + J with C = 40, J = 20, K = 128
const M_PRIME: f64 = 300.0; // K / 256 * M with M = 600
const H_SYNC_PERCENT: f64 = 8.0;
const MARGIN_PERCENT: f64 = 1.8;
const CLOCK_STEP_MHZ: f64 = 0.25;
const RB_MIN_V_BLANK_US: f64 = 460.0;

/// The vertical sync width CVT uses to tell the aspect ratio (CVT 1.2 table 3-2).
pub fn vsync_for_aspect(width: u32, height: u32) -> u32 {
    let w = u64::from(width);
    let h = u64::from(height);
    let is = |a: u64, b: u64| w.saturating_mul(b) == h.saturating_mul(a);
    if is(4, 3) {
        4
    } else if is(16, 9) {
        5
    } else if is(16, 10) {
        6
    } else if is(5, 4) || is(15, 9) {
        7
    } else {
        10
    }
}

/// Generates a CVT timing; `None` for a request the formula cannot serve (zero size or rate).
pub fn cvt(req: &CvtRequest) -> Option<Timing> {
    if req.width == 0 || req.height == 0 || req.refresh_hz <= 0.0 {
        return None;
    }
    let interlace = if req.interlaced { 0.5 } else { 0.0 };
    let field_rate = if req.interlaced { req.refresh_hz * 2.0 } else { req.refresh_hz };
    let cell = if req.blanking == CvtBlanking::ReducedV2 { 1.0 } else { CELL_GRAN };
    let h_pixels = floor(f64::from(req.width) / cell) * cell;
    let v_lines = if req.interlaced { floor(f64::from(req.height) / 2.0) } else { f64::from(req.height) };
    let (h_margin, v_margin) = if req.margins {
        (floor(h_pixels * MARGIN_PERCENT / 100.0 / cell) * cell, floor(v_lines * MARGIN_PERCENT / 100.0))
    } else {
        (0.0, 0.0)
    };
    let total_active = h_pixels + 2.0 * h_margin;
    let v_sync = f64::from(match req.blanking {
        CvtBlanking::ReducedV2 => 8,
        _ => vsync_for_aspect(req.width, req.height),
    });

    let (h_front, h_sync, h_back, v_front, v_back, pixel_khz, h_positive);
    match req.blanking {
        CvtBlanking::Normal => {
            let h_period_est = ((1.0 / field_rate) - MIN_VSYNC_BP_US / 1_000_000.0)
                / (v_lines + 2.0 * v_margin + MIN_V_PORCH + interlace)
                * 1_000_000.0;
            let mut v_sync_bp = floor(MIN_VSYNC_BP_US / h_period_est) + 1.0;
            if v_sync_bp < v_sync + MIN_V_BPORCH {
                v_sync_bp = v_sync + MIN_V_BPORCH;
            }
            let mut duty = C_PRIME - M_PRIME * h_period_est / 1000.0;
            if duty < 20.0 {
                duty = 20.0;
            }
            let h_blank = floor(total_active * duty / (100.0 - duty) / (2.0 * CELL_GRAN)) * 2.0 * CELL_GRAN;
            let total_pixels = total_active + h_blank;
            let clock = CLOCK_STEP_MHZ * floor(total_pixels / h_period_est / CLOCK_STEP_MHZ);
            let sync = floor(H_SYNC_PERCENT / 100.0 * total_pixels / CELL_GRAN) * CELL_GRAN;
            h_back = h_blank / 2.0;
            h_sync = sync;
            h_front = h_blank - h_back - sync;
            v_front = MIN_V_PORCH;
            v_back = v_sync_bp - v_sync;
            pixel_khz = clock * 1000.0;
            h_positive = false;
        }
        CvtBlanking::ReducedV1 | CvtBlanking::ReducedV2 => {
            let v2 = req.blanking == CvtBlanking::ReducedV2;
            let (h_blank, rb_v_front, rb_min_v_back) = if v2 { (80.0, 1.0, 6.0) } else { (160.0, 3.0, 6.0) };
            let rate = if v2 && req.video_optimized { field_rate * 1000.0 / 1001.0 } else { field_rate };
            let h_period_est = ((1_000_000.0 / field_rate) - RB_MIN_V_BLANK_US) / (v_lines + 2.0 * v_margin);
            let vbi = floor(RB_MIN_V_BLANK_US / h_period_est) + 1.0;
            let min_vbi = rb_v_front + v_sync + rb_min_v_back;
            let vbi = if vbi < min_vbi { min_vbi } else { vbi };
            let total_v = vbi + v_lines + 2.0 * v_margin + interlace;
            let total_pixels = h_blank + total_active;
            let step = if v2 { 0.001 } else { CLOCK_STEP_MHZ };
            let clock = step * floor(rate * total_v * total_pixels / 1_000_000.0 / step + 1e-9);
            h_sync = 32.0;
            if v2 {
                h_front = 8.0;
                h_back = 40.0;
                v_back = rb_min_v_back;
                v_front = vbi - v_sync - rb_min_v_back;
            } else {
                h_back = 80.0;
                h_front = 48.0;
                v_front = rb_v_front;
                v_back = vbi - v_sync - rb_v_front;
            }
            pixel_khz = clock * 1000.0;
            h_positive = true;
        }
    }
    Some(Timing {
        h_active: total_active as u32,
        h_front: h_front as i32,
        h_sync: h_sync as i32,
        h_back: h_back as i32,
        v_active: if req.interlaced {
            ((v_lines + 2.0 * v_margin) as u32).saturating_mul(2)
        } else {
            (v_lines + 2.0 * v_margin) as u32
        },
        v_front: v_front as i32,
        v_sync: v_sync as i32,
        v_back: v_back as i32,
        pixel_clock_khz: super::round(pixel_khz) as u32,
        h_sync_positive: h_positive,
        v_sync_positive: !h_positive,
        interlaced: req.interlaced,
    })
}
