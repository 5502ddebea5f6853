//! The EDID base block (VESA E-EDID 1.4, release A rev 2; EDID 1.3 as E-EDID 1.4 annex
//! describes it) and its 18-byte descriptors. NVIDIA's reading of the same block is
//! `src/common/modeset/timing/nvt_edid.c` (`parseEdidEstablishedTiming`,
//! `parseEdidStandardTiming`, `parseEdidDetailedTimingDescriptor`, `parseEdidRangeLimits`,
//! `parseEdidCvt3ByteDescriptor`); tags and masks in `edid.h` there.

use alloc::string::String;
use alloc::vec::Vec;

use super::error::{EdidError, EdidErrorKind};
use super::timing::{Mode, Timing};

/// The 8-byte header of block 0.
pub const HEADER: [u8; 8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00];
/// Every EDID block is 128 bytes.
pub const BLOCK_LEN: usize = 128;

/// Reads byte `i` of a block that the caller has checked to hold 128 bytes; out of range
/// reads give 0 rather than a panic (no caller reads past 127).
pub(crate) fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

pub(crate) fn le16(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([at(b, i), at(b, i.saturating_add(1))])
}

/// The sum of a block's bytes mod 256 (0 when the checksum is right).
pub fn checksum(b: &[u8]) -> u8 {
    b.iter().fold(0u8, |s, &x| s.wrapping_add(x))
}

/// Digital or analog video input (byte 20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VideoInput {
    /// `bits_per_color`: None when undefined (or EDID 1.3, which has only the DFP 1.x bit);
    /// `interface`: 0 undefined, 1 DVI, 2 HDMI-a, 3 HDMI-b, 4 MDDI, 5 DisplayPort (1.4).
    Digital { bits_per_color: Option<u8>, interface: u8 },
    /// `signal_level`: bits 6:5; the remaining bits as stored.
    Analog { signal_level: u8, flags: u8 },
}

/// Screen size or aspect ratio (bytes 21-22).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScreenSize {
    Centimetres {
        width: u8,
        height: u8,
    },
    /// EDID 1.4: one byte zero, the other the aspect ratio; the value as stored (ratio =
    /// (value + 99) / 100, landscape when `landscape`).
    Aspect {
        value: u8,
        landscape: bool,
    },
    Undefined,
}

/// One colour's chromaticity as the 10-bit binary fraction the EDID stores (x = value / 1024).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Chromaticity {
    pub x: u16,
    pub y: u16,
}

/// Bytes 25-34.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ColorCharacteristics {
    pub red: Chromaticity,
    pub green: Chromaticity,
    pub blue: Chromaticity,
    pub white: Chromaticity,
}

/// The established timings of bytes 35-36 and bit 7 of byte 37 (E-EDID 1.4 table 3.18), in
/// bit order from byte 35 bit 7.
pub const ESTABLISHED_I_II: [Mode; 17] = [
    m(720, 400, 70),
    m(720, 400, 88),
    m(640, 480, 60),
    m(640, 480, 67),
    m(640, 480, 72),
    m(640, 480, 75),
    m(800, 600, 56),
    m(800, 600, 60),
    m(800, 600, 72),
    m(800, 600, 75),
    m(832, 624, 75),
    Mode { width: 1024, height: 768, refresh_hz: 87, interlaced: true },
    m(1024, 768, 60),
    m(1024, 768, 70),
    m(1024, 768, 75),
    m(1280, 1024, 75),
    m(1152, 870, 75),
];

/// Established timings III (descriptor 0xF7, E-EDID 1.4 table 3.30): DMT modes in bit order
/// from byte 6 bit 7; `true` marks the reduced-blanking variant.
pub const ESTABLISHED_III: [(u32, u32, u32, bool); 44] = [
    (640, 350, 85, false),
    (640, 400, 85, false),
    (720, 400, 85, false),
    (640, 480, 85, false),
    (848, 480, 60, false),
    (800, 600, 85, false),
    (1024, 768, 85, false),
    (1152, 864, 75, false),
    (1280, 768, 60, true),
    (1280, 768, 60, false),
    (1280, 768, 75, false),
    (1280, 768, 85, false),
    (1280, 960, 60, false),
    (1280, 960, 85, false),
    (1280, 1024, 60, false),
    (1280, 1024, 85, false),
    (1360, 768, 60, false),
    (1440, 900, 60, true),
    (1440, 900, 60, false),
    (1440, 900, 75, false),
    (1440, 900, 85, false),
    (1400, 1050, 60, true),
    (1400, 1050, 60, false),
    (1400, 1050, 75, false),
    (1400, 1050, 85, false),
    (1680, 1050, 60, true),
    (1680, 1050, 60, false),
    (1680, 1050, 75, false),
    (1680, 1050, 85, false),
    (1600, 1200, 60, false),
    (1600, 1200, 65, false),
    (1600, 1200, 70, false),
    (1600, 1200, 75, false),
    (1600, 1200, 85, false),
    (1792, 1344, 60, false),
    (1792, 1344, 75, false),
    (1856, 1392, 60, false),
    (1856, 1392, 75, false),
    (1920, 1200, 60, true),
    (1920, 1200, 60, false),
    (1920, 1200, 75, false),
    (1920, 1200, 85, false),
    (1920, 1440, 60, false),
    (1920, 1440, 75, false),
];

const fn m(width: u32, height: u32, refresh_hz: u32) -> Mode {
    Mode { width, height, refresh_hz, interlaced: false }
}

/// A standard timing (two bytes, E-EDID 1.4 section 3.9), decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandardTiming {
    pub code: u16,
    pub mode: Mode,
}

/// Decodes a standard timing's two bytes; `None` for an unused slot (01 01, and 00 00 or
/// 20 20 which old EDIDs put there). Aspect code 00 is 16:10 from EDID 1.3 on and 1:1 before.
pub fn standard_timing(b0: u8, b1: u8, revision: u8) -> Option<StandardTiming> {
    if (b0 == 0x01 && b1 == 0x01) || b0 == 0x00 || (b0 == 0x20 && b1 == 0x20) {
        return None;
    }
    let width = (u32::from(b0).saturating_add(31)).saturating_mul(8);
    let (num, den) = match b1 >> 6 {
        0 if revision < 3 => (1, 1),
        0 => (10, 16),
        1 => (3, 4),
        2 => (4, 5),
        _ => (9, 16),
    };
    let height = width.saturating_mul(num).checked_div(den).unwrap_or(0);
    let refresh_hz = u32::from(b1 & 0x3F).saturating_add(60);
    Some(StandardTiming { code: u16::from_be_bytes([b0, b1]), mode: m(width, height, refresh_hz) })
}

/// A detailed timing descriptor with what it carries besides the timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DetailedTiming {
    pub timing: Timing,
    pub image_width_mm: u16,
    pub image_height_mm: u16,
    pub h_border: u8,
    pub v_border: u8,
    /// Byte 17 as stored (interlace, stereo and sync bits).
    pub flags: u8,
}

/// Decodes an 18-byte detailed timing descriptor (E-EDID 1.4 section 3.10.2); `None` when the
/// pixel clock is zero (then it is a display descriptor).
pub fn detailed_timing(d: &[u8]) -> Option<DetailedTiming> {
    let clock = le16(d, 0);
    if clock == 0 {
        return None;
    }
    let hi = |lo: u8, bits: u8, shift: u8| u32::from(lo) | (u32::from(bits) << shift);
    let b4 = at(d, 4);
    let b7 = at(d, 7);
    let b11 = at(d, 11);
    let h_active = hi(at(d, 2), b4 >> 4, 8);
    let h_blank = hi(at(d, 3), b4 & 0x0F, 8);
    let v_active = hi(at(d, 5), b7 >> 4, 8);
    let v_blank = hi(at(d, 6), b7 & 0x0F, 8);
    let h_front = hi(at(d, 8), b11 >> 6, 8);
    let h_sync = hi(at(d, 9), (b11 >> 4) & 0x3, 8);
    let v_front = hi(at(d, 10) >> 4, (b11 >> 2) & 0x3, 4);
    let v_sync = hi(at(d, 10) & 0x0F, b11 & 0x3, 4);
    let flags = at(d, 17);
    let interlaced = flags & 0x80 != 0;
    // Bits 4:3 = 11: digital separate sync, bit 2 vertical and bit 1 horizontal polarity.
    // 10: digital composite, bit 1 the horizontal polarity. 0x: analog composite.
    let (h_pos, v_pos) = match (flags >> 3) & 0x3 {
        3 => (flags & 0x02 != 0, flags & 0x04 != 0),
        2 => (flags & 0x02 != 0, false),
        _ => (false, false),
    };
    let signed = |x: u32| i32::try_from(x).unwrap_or(i32::MAX);
    // The borders lie inside the blanking (E-EDID 1.4 section 3.12, figure 3.22): the back
    // porch is what the blanking leaves after front porch, sync and both borders.
    let h_borders = i32::from(at(d, 15)).saturating_mul(2);
    let v_borders = i32::from(at(d, 16)).saturating_mul(2);
    let timing = Timing {
        h_active,
        h_front: signed(h_front),
        h_sync: signed(h_sync),
        h_back: signed(h_blank)
            .saturating_sub(signed(h_front))
            .saturating_sub(signed(h_sync))
            .saturating_sub(h_borders),
        v_active: if interlaced { v_active.saturating_mul(2) } else { v_active },
        v_front: signed(v_front),
        v_sync: signed(v_sync),
        v_back: signed(v_blank)
            .saturating_sub(signed(v_front))
            .saturating_sub(signed(v_sync))
            .saturating_sub(v_borders),
        pixel_clock_khz: u32::from(clock).saturating_mul(10),
        h_sync_positive: h_pos,
        v_sync_positive: v_pos,
        interlaced,
    };
    let b14 = at(d, 14);
    Some(DetailedTiming {
        timing,
        image_width_mm: u16::from(at(d, 12)) | (u16::from(b14 >> 4) << 8),
        image_height_mm: u16::from(at(d, 13)) | (u16::from(b14 & 0x0F) << 8),
        h_border: at(d, 15),
        v_border: at(d, 16),
        flags,
    })
}

/// What a range limits descriptor says about formula timings (byte 10).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RangeFormula {
    /// 00: default GTF supported.
    DefaultGtf,
    /// 01: range limits only (EDID 1.4).
    BareLimits,
    /// 02: secondary GTF curve from `start_khz` on.
    SecondaryGtf {
        start_khz: u32,
        c: f64,
        m: f64,
        k: f64,
        j: f64,
    },
    /// 04: CVT supported (EDID 1.4), with its fields.
    Cvt {
        version: u8,
        /// Maximum pixel clock refined by the extra precision bits, in kHz.
        max_pixel_clock_khz: u32,
        /// 0 = no limit.
        max_active_pixels: u32,
        aspect_ratios: u8,
        preferred: u8,
        scaling: u8,
        preferred_refresh_hz: u8,
    },
    Other(u8),
}

/// Display range limits (descriptor 0xFD, E-EDID 1.4 section 3.10.3.3), with the 1.4 +255
/// offsets applied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RangeLimits {
    pub min_v_hz: u32,
    pub max_v_hz: u32,
    pub min_h_khz: u32,
    pub max_h_khz: u32,
    /// In MHz, a multiple of 10; 0 when not given.
    pub max_pixel_clock_mhz: u32,
    pub formula: RangeFormula,
}

fn range_limits(d: &[u8], revision: u8) -> Option<RangeLimits> {
    let off = if revision >= 4 { at(d, 4) } else { 0 };
    let plus = |v: u8, add: bool| u32::from(v).saturating_add(if add { 255 } else { 0 });
    let min_v = plus(at(d, 5), off & 0x03 == 0x03);
    let max_v = plus(at(d, 6), off & 0x02 != 0);
    let min_h = plus(at(d, 7), off & 0x0C == 0x0C);
    let max_h = plus(at(d, 8), off & 0x08 != 0);
    let max_clock = u32::from(at(d, 9)).saturating_mul(10);
    let formula = match at(d, 10) {
        0x00 => RangeFormula::DefaultGtf,
        0x01 => RangeFormula::BareLimits,
        0x02 => RangeFormula::SecondaryGtf {
            start_khz: u32::from(at(d, 12)).saturating_mul(2),
            c: f64::from(at(d, 13)) / 2.0,
            m: f64::from(le16(d, 14)),
            k: f64::from(at(d, 16)),
            j: f64::from(at(d, 17)) / 2.0,
        },
        0x04 => RangeFormula::Cvt {
            version: at(d, 11),
            max_pixel_clock_khz: max_clock
                .saturating_mul(1000)
                .saturating_sub(u32::from(at(d, 12) >> 2).saturating_mul(250)),
            max_active_pixels: ((u32::from(at(d, 12) & 0x3) << 8) | u32::from(at(d, 13))).saturating_mul(8),
            aspect_ratios: at(d, 14),
            preferred: at(d, 15),
            scaling: at(d, 16),
            preferred_refresh_hz: at(d, 17),
        },
        other => RangeFormula::Other(other),
    };
    if min_v > max_v || min_h > max_h {
        return None;
    }
    Some(RangeLimits {
        min_v_hz: min_v,
        max_v_hz: max_v,
        min_h_khz: min_h,
        max_h_khz: max_h,
        max_pixel_clock_mhz: max_clock,
        formula,
    })
}

/// A CVT 3-byte code (descriptor 0xF8, E-EDID 1.4 section 3.10.3.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CvtCode {
    pub width: u32,
    pub height: u32,
    /// The preferred vertical rate: 50, 60, 75 or 85.
    pub preferred_hz: u32,
    /// Bit 4 50 Hz, bit 3 60 Hz, bit 2 75 Hz, bit 1 85 Hz, bit 0 60 Hz reduced blanking.
    pub rates: u8,
}

fn cvt_code(c: &[u8]) -> Option<CvtCode> {
    let (b0, b1, b2) = (at(c, 0), at(c, 1), at(c, 2));
    if b0 == 0 && b1 == 0 && b2 == 0 {
        return None;
    }
    let lines = ((u32::from(b1 >> 4) << 8) | u32::from(b0)).saturating_add(1).saturating_mul(2);
    let (num, den) = match (b1 >> 2) & 0x3 {
        0 => (4, 3),
        1 => (16, 9),
        2 => (16, 10),
        _ => (15, 9),
    };
    let width = (lines.saturating_mul(num).checked_div(den).unwrap_or(0) / 8).saturating_mul(8);
    let preferred_hz = match (b2 >> 5) & 0x3 {
        0 => 50,
        1 => 60,
        2 => 75,
        _ => 85,
    };
    Some(CvtCode { width, height: lines, preferred_hz, rates: b2 & 0x1F })
}

/// An additional white point (descriptor 0xFB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColorPoint {
    pub index: u8,
    pub white: Chromaticity,
    /// (gamma * 100) - 100 as stored; 0xFF = gamma elsewhere.
    pub gamma: u8,
}

/// One 18-byte descriptor of the base block (or of a CTA-861 extension's DTD area).
#[derive(Clone, Debug, PartialEq)]
pub enum Descriptor {
    Detailed(DetailedTiming),
    /// 0xFF
    SerialNumber(String),
    /// 0xFE
    Text(String),
    /// 0xFD
    RangeLimits(RangeLimits),
    /// 0xFC
    Name(String),
    /// 0xFB
    ColorPoints(Vec<ColorPoint>),
    /// 0xFA
    StandardTimings(Vec<StandardTiming>),
    /// 0xF9: display colour management, version as stored.
    ColorManagement(u8),
    /// 0xF8
    CvtCodes(Vec<CvtCode>),
    /// 0xF7: DMT modes (size, refresh, reduced blanking).
    EstablishedIII(Vec<(u32, u32, u32, bool)>),
    /// 0x10
    Dummy,
    /// 0x00..=0x0F
    Manufacturer(u8),
    /// Any other tag (reserved in 1.4).
    Reserved(u8),
}

/// The text of a 0xFC/0xFE/0xFF descriptor: up to 13 bytes, ended by 0x0A, padded with
/// spaces (E-EDID 1.4 section 3.10.3.1). Non-ASCII bytes are kept as U+FFFD.
fn descriptor_text(d: &[u8]) -> String {
    let text = d.get(5..18).unwrap_or(&[]);
    let end = text.iter().position(|&c| c == 0x0A).unwrap_or(text.len());
    let s: String = text
        .get(..end)
        .unwrap_or(&[])
        .iter()
        .map(|&c| if c.is_ascii() && !c.is_ascii_control() { char::from(c) } else { '\u{FFFD}' })
        .collect();
    String::from(s.trim_end())
}

/// Decodes one 18-byte descriptor at `offset` of block `block`.
pub(crate) fn descriptor(
    d: &[u8],
    revision: u8,
    block: usize,
    offset: usize,
    errors: &mut Vec<EdidError>,
) -> Descriptor {
    if let Some(t) = detailed_timing(d) {
        let h_blank = t.timing.h_front.saturating_add(t.timing.h_sync).saturating_add(t.timing.h_back);
        if t.timing.h_back < 0 || t.timing.v_back < 0 || h_blank == 0 {
            errors.push(EdidError::new(block, offset, EdidErrorKind::BadDescriptor { tag: 0 }));
        }
        return Descriptor::Detailed(t);
    }
    let tag = at(d, 3);
    match tag {
        0xFF => Descriptor::SerialNumber(descriptor_text(d)),
        0xFE => Descriptor::Text(descriptor_text(d)),
        0xFC => Descriptor::Name(descriptor_text(d)),
        0xFD => match range_limits(d, revision) {
            Some(r) => Descriptor::RangeLimits(r),
            None => {
                errors.push(EdidError::new(block, offset, EdidErrorKind::BadDescriptor { tag }));
                Descriptor::Reserved(tag)
            }
        },
        0xFB => {
            let mut points = Vec::new();
            for base in [5usize, 10] {
                let index = at(d, base);
                if index == 0 {
                    continue;
                }
                let lo = at(d, base.saturating_add(1));
                let x = (u16::from(at(d, base.saturating_add(2))) << 2) | u16::from((lo >> 2) & 0x3);
                let y = (u16::from(at(d, base.saturating_add(3))) << 2) | u16::from(lo & 0x3);
                points.push(ColorPoint { index, white: Chromaticity { x, y }, gamma: at(d, base.saturating_add(4)) });
            }
            Descriptor::ColorPoints(points)
        }
        0xFA => {
            let list = (0..6usize)
                .filter_map(|i| {
                    let o = 5usize.saturating_add(i.saturating_mul(2));
                    standard_timing(at(d, o), at(d, o.saturating_add(1)), revision)
                })
                .collect();
            Descriptor::StandardTimings(list)
        }
        0xF9 => Descriptor::ColorManagement(at(d, 5)),
        0xF8 => {
            let list = (0..4usize)
                .filter_map(|i| d.get(6usize.saturating_add(i.saturating_mul(3))..).and_then(cvt_code))
                .collect();
            Descriptor::CvtCodes(list)
        }
        0xF7 => {
            let mut list = Vec::new();
            for (i, mode) in ESTABLISHED_III.iter().enumerate() {
                let byte = at(d, 6usize.saturating_add(i / 8));
                if byte & (0x80u8 >> (i % 8)) != 0 {
                    list.push(*mode);
                }
            }
            Descriptor::EstablishedIII(list)
        }
        0x10 => Descriptor::Dummy,
        0x00..=0x0F => Descriptor::Manufacturer(tag),
        other => Descriptor::Reserved(other),
    }
}

/// The base block, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct BaseBlock {
    /// Three letters (compressed ASCII of bytes 8-9).
    pub manufacturer: [u8; 3],
    pub product: u16,
    pub serial: u32,
    /// 0 = not given; 0xFF = `year` is a model year.
    pub week: u8,
    pub year: u16,
    pub model_year: bool,
    pub version: u8,
    pub revision: u8,
    pub input: VideoInput,
    pub size: ScreenSize,
    /// Gamma * 100 (120..=355); None when byte 23 is 0xFF (gamma given elsewhere).
    pub gamma: Option<u16>,
    /// Byte 24 as stored.
    pub features: u8,
    pub colors: ColorCharacteristics,
    /// Established timings I and II that are set.
    pub established: Vec<Mode>,
    /// Byte 37 bits 6:0: manufacturer's timings.
    pub manufacturer_timings: u8,
    pub standard: Vec<StandardTiming>,
    /// The four descriptors at 54, 72, 90, 108.
    pub descriptors: Vec<Descriptor>,
    /// Byte 126.
    pub extension_count: u8,
}

impl BaseBlock {
    pub fn manufacturer_str(&self) -> &str {
        core::str::from_utf8(&self.manufacturer).unwrap_or("???")
    }

    /// E-EDID 1.4: the first detailed timing is always the preferred timing mode; 1.3 says so
    /// with feature bit 1 (which 1.3 requires to be set).
    pub fn first_dtd_is_preferred(&self) -> bool {
        self.revision >= 4 || self.features & 0x02 != 0
    }

    /// Feature bit 0: continuous frequency (1.4) / default GTF supported (1.3).
    pub fn continuous_frequency(&self) -> bool {
        self.features & 0x01 != 0
    }

    pub fn range_limits(&self) -> Option<&RangeLimits> {
        self.descriptors.iter().find_map(|d| match d {
            Descriptor::RangeLimits(r) => Some(r),
            _ => None,
        })
    }

    pub fn name(&self) -> Option<&str> {
        self.descriptors.iter().find_map(|d| match d {
            Descriptor::Name(n) => Some(n.as_str()),
            _ => None,
        })
    }
}

/// Decodes block 0, which the caller has checked to be 128 bytes with the header.
pub(crate) fn base_block(b: &[u8], errors: &mut Vec<EdidError>) -> BaseBlock {
    let id = u16::from_be_bytes([at(b, 8), at(b, 9)]);
    let letter = |v: u16| {
        let c = (v & 0x1F) as u8;
        if (1..=26).contains(&c) {
            c.saturating_add(b'A').saturating_sub(1)
        } else {
            b'?'
        }
    };
    let manufacturer = [letter(id >> 10), letter(id >> 5), letter(id)];
    let version = at(b, 18);
    let revision = at(b, 19);
    if version != 1 {
        errors.push(EdidError::new(0, 18, EdidErrorKind::BadVersion { version, revision }));
    }
    let input_byte = at(b, 20);
    let input = if input_byte & 0x80 != 0 {
        if revision >= 4 {
            let depth = (input_byte >> 4) & 0x7;
            let bits_per_color = match depth {
                1..=6 => Some(depth.saturating_mul(2).saturating_add(4)),
                _ => None,
            };
            VideoInput::Digital { bits_per_color, interface: input_byte & 0x0F }
        } else {
            VideoInput::Digital { bits_per_color: None, interface: 0 }
        }
    } else {
        VideoInput::Analog { signal_level: (input_byte >> 5) & 0x3, flags: input_byte & 0x1F }
    };
    let size = match (at(b, 21), at(b, 22)) {
        (0, 0) => ScreenSize::Undefined,
        (w, 0) if revision >= 4 => ScreenSize::Aspect { value: w, landscape: true },
        (0, h) if revision >= 4 => ScreenSize::Aspect { value: h, landscape: false },
        (w, h) => ScreenSize::Centimetres { width: w, height: h },
    };
    let gamma = match at(b, 23) {
        0xFF => None,
        g => Some(u16::from(g).saturating_add(100)),
    };
    let lo_rg = at(b, 25);
    let lo_bw = at(b, 26);
    let chroma = |hi: usize, lo: u8, shift: u8| (u16::from(at(b, hi)) << 2) | u16::from((lo >> shift) & 0x3);
    let colors = ColorCharacteristics {
        red: Chromaticity { x: chroma(27, lo_rg, 6), y: chroma(28, lo_rg, 4) },
        green: Chromaticity { x: chroma(29, lo_rg, 2), y: chroma(30, lo_rg, 0) },
        blue: Chromaticity { x: chroma(31, lo_bw, 6), y: chroma(32, lo_bw, 4) },
        white: Chromaticity { x: chroma(33, lo_bw, 2), y: chroma(34, lo_bw, 0) },
    };
    let bits = u32::from(at(b, 35)) << 16 | u32::from(at(b, 36)) << 8 | u32::from(at(b, 37));
    let established =
        ESTABLISHED_I_II.iter().enumerate().filter(|(i, _)| bits & (0x80_0000u32 >> i) != 0).map(|(_, m)| *m).collect();
    let standard = (0..8usize)
        .filter_map(|i| {
            let o = 38usize.saturating_add(i.saturating_mul(2));
            standard_timing(at(b, o), at(b, o.saturating_add(1)), revision)
        })
        .collect();
    let descriptors = [54usize, 72, 90, 108]
        .iter()
        .map(|&o| descriptor(b.get(o..o.saturating_add(18)).unwrap_or(&[]), revision, 0, o, errors))
        .collect();
    let year_byte = at(b, 17);
    BaseBlock {
        manufacturer,
        product: le16(b, 10),
        serial: u32::from_le_bytes([at(b, 12), at(b, 13), at(b, 14), at(b, 15)]),
        week: at(b, 16),
        year: u16::from(year_byte).saturating_add(1990),
        model_year: at(b, 16) == 0xFF,
        version,
        revision,
        input,
        size,
        gamma,
        features: at(b, 24),
        colors,
        established,
        manufacturer_timings: at(b, 37) & 0x7F,
        standard,
        descriptors,
        extension_count: at(b, 126),
    }
}
