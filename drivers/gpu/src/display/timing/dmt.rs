//! The VESA DMT table (Display Monitor Timing standard, version 1.0 rev 13): every entry by its
//! DMT id 0x01..=0x58, each a full timing. The values are the standard's; NVIDIA keeps the
//! same table in `src/common/modeset/timing/nvt_dmt.c` (`DMT[]`), where 640x480@72 (0x05) is
//! written with its 8-pixel/8-line borders apart: here they are part of the porches, the way
//! EDID consumers print that mode (front 24, back 128; front 9, back 28), and the interlaced
//! 1024x768@43 (0x0F) has per-field vertical values.

use super::{Mode, Timing};

/// How a DMT entry's blanking was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blanking {
    /// Ordinary (CRT-era or CEA) blanking.
    Normal,
    /// CVT reduced blanking v1.
    Reduced,
    /// CVT reduced blanking v2.
    ReducedV2,
}

/// One DMT entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmtEntry {
    pub id: u8,
    /// The nominal refresh rate the standard names the mode by.
    pub refresh_hz: u32,
    pub blanking: Blanking,
    pub timing: Timing,
}

impl DmtEntry {
    pub fn mode(&self) -> Mode {
        Mode {
            width: self.timing.h_active,
            height: self.timing.v_active,
            refresh_hz: self.refresh_hz,
            interlaced: self.timing.interlaced,
        }
    }
}

#[allow(clippy::too_many_arguments)]
const fn e(
    id: u8,
    blanking: Blanking,
    h: (u32, i32, i32, i32, bool),
    v: (u32, i32, i32, i32, bool),
    refresh_hz: u32,
    pixel_clock_khz: u32,
) -> DmtEntry {
    DmtEntry {
        id,
        refresh_hz,
        blanking,
        timing: Timing {
            h_active: h.0,
            h_front: h.1,
            h_sync: h.2,
            h_back: h.3,
            v_active: v.0,
            v_front: v.1,
            v_sync: v.2,
            v_back: v.3,
            pixel_clock_khz,
            h_sync_positive: h.4,
            v_sync_positive: v.4,
            interlaced: false,
        },
    }
}

const fn interlaced(mut d: DmtEntry) -> DmtEntry {
    d.timing.interlaced = true;
    d
}

use Blanking::{Normal as N, Reduced as R, ReducedV2 as R2};
const P: bool = true;
const M: bool = false;

/// Every DMT 1.13 entry, in id order. Tuples: (active, front, sync, back, positive).
pub static DMT: [DmtEntry; 88] = [
    e(0x01, N, (640, 32, 64, 96, P), (350, 32, 3, 60, M), 85, 31_500),
    e(0x02, N, (640, 32, 64, 96, M), (400, 1, 3, 41, P), 85, 31_500),
    e(0x03, N, (720, 36, 72, 108, M), (400, 1, 3, 42, P), 85, 35_500),
    e(0x04, N, (640, 16, 96, 48, M), (480, 10, 2, 33, M), 60, 25_175),
    e(0x05, N, (640, 24, 40, 128, M), (480, 9, 3, 28, M), 72, 31_500),
    e(0x06, N, (640, 16, 64, 120, M), (480, 1, 3, 16, M), 75, 31_500),
    e(0x07, N, (640, 56, 56, 80, M), (480, 1, 3, 25, M), 85, 36_000),
    e(0x08, N, (800, 24, 72, 128, P), (600, 1, 2, 22, P), 56, 36_000),
    e(0x09, N, (800, 40, 128, 88, P), (600, 1, 4, 23, P), 60, 40_000),
    e(0x0A, N, (800, 56, 120, 64, P), (600, 37, 6, 23, P), 72, 50_000),
    e(0x0B, N, (800, 16, 80, 160, P), (600, 1, 3, 21, P), 75, 49_500),
    e(0x0C, N, (800, 32, 64, 152, P), (600, 1, 3, 27, P), 85, 56_250),
    e(0x0D, R, (800, 48, 32, 80, P), (600, 3, 4, 29, M), 120, 73_250),
    e(0x0E, N, (848, 16, 112, 112, P), (480, 6, 8, 23, P), 60, 33_750),
    interlaced(e(0x0F, N, (1024, 8, 176, 56, P), (768, 0, 4, 20, P), 43, 44_900)),
    e(0x10, N, (1024, 24, 136, 160, M), (768, 3, 6, 29, M), 60, 65_000),
    e(0x11, N, (1024, 24, 136, 144, M), (768, 3, 6, 29, M), 70, 75_000),
    e(0x12, N, (1024, 16, 96, 176, P), (768, 1, 3, 28, P), 75, 78_750),
    e(0x13, N, (1024, 48, 96, 208, P), (768, 1, 3, 36, P), 85, 94_500),
    e(0x14, R, (1024, 48, 32, 80, P), (768, 3, 4, 38, M), 120, 115_500),
    e(0x15, N, (1152, 64, 128, 256, P), (864, 1, 3, 32, P), 75, 108_000),
    e(0x16, R, (1280, 48, 32, 80, P), (768, 3, 7, 12, M), 60, 68_250),
    e(0x17, N, (1280, 64, 128, 192, M), (768, 3, 7, 20, P), 60, 79_500),
    e(0x18, N, (1280, 80, 128, 208, M), (768, 3, 7, 27, P), 75, 102_250),
    e(0x19, N, (1280, 80, 136, 216, M), (768, 3, 7, 31, P), 85, 117_500),
    e(0x1A, R, (1280, 48, 32, 80, P), (768, 3, 7, 35, M), 120, 140_250),
    e(0x1B, R, (1280, 48, 32, 80, P), (800, 3, 6, 14, M), 60, 71_000),
    e(0x1C, N, (1280, 72, 128, 200, M), (800, 3, 6, 22, P), 60, 83_500),
    e(0x1D, N, (1280, 80, 128, 208, M), (800, 3, 6, 29, P), 75, 106_500),
    e(0x1E, N, (1280, 80, 136, 216, M), (800, 3, 6, 34, P), 85, 122_500),
    e(0x1F, R, (1280, 48, 32, 80, P), (800, 3, 6, 38, M), 120, 146_250),
    e(0x20, N, (1280, 96, 112, 312, P), (960, 1, 3, 36, P), 60, 108_000),
    e(0x21, N, (1280, 64, 160, 224, P), (960, 1, 3, 47, P), 85, 148_500),
    e(0x22, R, (1280, 48, 32, 80, P), (960, 3, 4, 50, M), 120, 175_500),
    e(0x23, N, (1280, 48, 112, 248, P), (1024, 1, 3, 38, P), 60, 108_000),
    e(0x24, N, (1280, 16, 144, 248, P), (1024, 1, 3, 38, P), 75, 135_000),
    e(0x25, N, (1280, 64, 160, 224, P), (1024, 1, 3, 44, P), 85, 157_500),
    e(0x26, R, (1280, 48, 32, 80, P), (1024, 3, 7, 50, M), 120, 187_250),
    e(0x27, N, (1360, 64, 112, 256, P), (768, 3, 6, 18, P), 60, 85_500),
    e(0x28, R, (1360, 48, 32, 80, P), (768, 3, 5, 37, M), 120, 148_250),
    e(0x29, R, (1400, 48, 32, 80, P), (1050, 3, 4, 23, M), 60, 101_000),
    e(0x2A, N, (1400, 88, 144, 232, M), (1050, 3, 4, 32, P), 60, 121_750),
    e(0x2B, N, (1400, 104, 144, 248, M), (1050, 3, 4, 42, P), 75, 156_000),
    e(0x2C, N, (1400, 104, 152, 256, M), (1050, 3, 4, 48, P), 85, 179_500),
    e(0x2D, R, (1400, 48, 32, 80, P), (1050, 3, 4, 55, M), 120, 208_000),
    e(0x2E, R, (1440, 48, 32, 80, P), (900, 3, 6, 17, M), 60, 88_750),
    e(0x2F, N, (1440, 80, 152, 232, M), (900, 3, 6, 25, P), 60, 106_500),
    e(0x30, N, (1440, 96, 152, 248, M), (900, 3, 6, 33, P), 75, 136_750),
    e(0x31, N, (1440, 104, 152, 256, M), (900, 3, 6, 39, P), 85, 157_000),
    e(0x32, R, (1440, 48, 32, 80, P), (900, 3, 6, 44, M), 120, 182_750),
    e(0x33, N, (1600, 64, 192, 304, P), (1200, 1, 3, 46, P), 60, 162_000),
    e(0x34, N, (1600, 64, 192, 304, P), (1200, 1, 3, 46, P), 65, 175_500),
    e(0x35, N, (1600, 64, 192, 304, P), (1200, 1, 3, 46, P), 70, 189_000),
    e(0x36, N, (1600, 64, 192, 304, P), (1200, 1, 3, 46, P), 75, 202_500),
    e(0x37, N, (1600, 64, 192, 304, P), (1200, 1, 3, 46, P), 85, 229_500),
    e(0x38, R, (1600, 48, 32, 80, P), (1200, 3, 4, 64, M), 120, 268_250),
    e(0x39, R, (1680, 48, 32, 80, P), (1050, 3, 6, 21, M), 60, 119_000),
    e(0x3A, N, (1680, 104, 176, 280, M), (1050, 3, 6, 30, P), 60, 146_250),
    e(0x3B, N, (1680, 120, 176, 296, M), (1050, 3, 6, 40, P), 75, 187_000),
    e(0x3C, N, (1680, 128, 176, 304, M), (1050, 3, 6, 46, P), 85, 214_750),
    e(0x3D, R, (1680, 48, 32, 80, P), (1050, 3, 6, 53, M), 120, 245_500),
    e(0x3E, N, (1792, 128, 200, 328, M), (1344, 1, 3, 46, P), 60, 204_750),
    e(0x3F, N, (1792, 96, 216, 352, M), (1344, 1, 3, 69, P), 75, 261_000),
    e(0x40, R, (1792, 48, 32, 80, P), (1344, 3, 4, 72, M), 120, 333_250),
    e(0x41, N, (1856, 96, 224, 352, M), (1392, 1, 3, 43, P), 60, 218_250),
    e(0x42, N, (1856, 128, 224, 352, M), (1392, 1, 3, 104, P), 75, 288_000),
    e(0x43, R, (1856, 48, 32, 80, P), (1392, 3, 4, 75, M), 120, 356_500),
    e(0x44, R, (1920, 48, 32, 80, P), (1200, 3, 6, 26, M), 60, 154_000),
    e(0x45, N, (1920, 136, 200, 336, M), (1200, 3, 6, 36, P), 60, 193_250),
    e(0x46, N, (1920, 136, 208, 344, M), (1200, 3, 6, 46, P), 75, 245_250),
    e(0x47, N, (1920, 144, 208, 352, M), (1200, 3, 6, 53, P), 85, 281_250),
    e(0x48, R, (1920, 48, 32, 80, P), (1200, 3, 6, 62, M), 120, 317_000),
    e(0x49, N, (1920, 128, 208, 344, M), (1440, 1, 3, 56, P), 60, 234_000),
    e(0x4A, N, (1920, 144, 224, 352, M), (1440, 1, 3, 56, P), 75, 297_000),
    e(0x4B, R, (1920, 48, 32, 80, P), (1440, 3, 4, 78, M), 120, 380_500),
    e(0x4C, R, (2560, 48, 32, 80, P), (1600, 3, 6, 37, M), 60, 268_500),
    e(0x4D, N, (2560, 192, 280, 472, M), (1600, 3, 6, 49, P), 60, 348_500),
    e(0x4E, N, (2560, 208, 280, 488, M), (1600, 3, 6, 63, P), 75, 443_250),
    e(0x4F, N, (2560, 208, 280, 488, M), (1600, 3, 6, 73, P), 85, 505_250),
    e(0x50, R, (2560, 48, 32, 80, P), (1600, 3, 6, 85, M), 120, 552_750),
    e(0x51, N, (1366, 70, 143, 213, P), (768, 3, 3, 24, P), 60, 85_500),
    e(0x52, N, (1920, 88, 44, 148, P), (1080, 4, 5, 36, P), 60, 148_500),
    e(0x53, R, (1600, 24, 80, 96, P), (900, 1, 3, 96, P), 60, 108_000),
    e(0x54, R, (2048, 26, 80, 96, P), (1152, 1, 3, 44, P), 60, 162_000),
    e(0x55, N, (1280, 110, 40, 220, P), (720, 5, 5, 20, P), 60, 74_250),
    e(0x56, R, (1366, 14, 56, 64, P), (768, 1, 3, 28, P), 60, 72_000),
    e(0x57, R2, (4096, 8, 56, 16, P), (2160, 48, 8, 6, M), 60, 556_744),
    e(0x58, R2, (4096, 8, 56, 16, P), (2160, 48, 8, 6, M), 59, 556_188),
];

/// The entry with this DMT id.
pub fn by_id(id: u8) -> Option<&'static DmtEntry> {
    DMT.iter().find(|d| d.id == id)
}

/// The progressive entry for a mode named by size and nominal refresh, preferring normal
/// blanking over reduced blanking where the table has both (1280x800@60 is 0x1C, not 0x1B),
/// which is how a standard timing's two-byte code names a DMT mode (E-EDID 1.4 section 3.9,
/// NVIDIA's `NvTiming_EnumStdTwoBytesCode` tries `NvTiming_CalcDMT`, then DMT-RB, then RB2).
pub fn by_mode(width: u32, height: u32, refresh_hz: u32) -> Option<&'static DmtEntry> {
    let matching = |b: Blanking| {
        DMT.iter().find(move |d| {
            d.blanking == b
                && !d.timing.interlaced
                && d.timing.h_active == width
                && d.timing.v_active == height
                && d.refresh_hz == refresh_hz
        })
    };
    matching(Blanking::Normal).or_else(|| matching(Blanking::Reduced)).or_else(|| matching(Blanking::ReducedV2))
}

/// DMT ids whose reduced-blanking timing DMT 1.13 gives a standard-timing code: only
/// 1600x900@60 (0x53) and 2048x1152@60 (0x54). The other reduced-blanking entries have none,
/// so a standard timing of, say, 800x600@120 is a formula timing, not DMT 0x0D.
const REDUCED_WITH_STD_CODE: [u8; 2] = [0x53, 0x54];

/// The DMT entry a standard timing (E-EDID 1.4 section 3.9) names, if any: a normal-blanking
/// entry of that size and refresh, or one of the reduced-blanking entries with a code.
pub fn by_standard_timing(width: u32, height: u32, refresh_hz: u32) -> Option<&'static DmtEntry> {
    by_mode(width, height, refresh_hz)
        .filter(|d| d.blanking == Blanking::Normal || REDUCED_WITH_STD_CODE.contains(&d.id))
}
