//! DisplayID sections: DisplayID 1.3 (VESA, 2013) and 2.0/2.1 (VESA, 2017/2021), either inside
//! an EDID extension block (tag 0x70) or standalone. A section is a 4-byte header (version,
//! payload length, product type / primary use case, extension count), data blocks (tag,
//! revision, length, payload) and a checksum byte that makes the section sum to 0.
//! NVIDIA: `src/common/modeset/timing/nvt_edidext_displayid.c` (1.3),
//! `nvt_displayid20.c` and `nvt_edidext_displayid20.c` (2.x); tags in `displayid.h` and
//! `displayid20.h`.

use alloc::string::String;
use alloc::vec::Vec;

use super::edid::{at, checksum, le16};
use super::error::{EdidError, EdidErrorKind};
use super::timing::Timing;

/// Product identification (1.3 tag 0x00, 2.x tag 0x20).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProductId {
    /// Manufacturer ID (1.3: three ASCII letters) or IEEE OUI (2.x), as the three bytes stored.
    pub vendor: [u8; 3],
    pub product: u16,
    pub serial: u32,
    pub week: u8,
    /// Year (stored + 2000).
    pub year: u16,
    pub name: String,
}

/// Display parameters (1.3 tag 0x01, 2.x tag 0x21): image size in 0.1 mm and native pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DisplayParameters {
    pub width_tenth_mm: u16,
    pub height_tenth_mm: u16,
    pub h_pixels: u16,
    pub v_pixels: u16,
}

/// Tiled display topology (1.3 tag 0x12, 2.x tag 0x28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledTopology {
    pub capabilities: u8,
    pub columns: u8,
    pub rows: u8,
    pub column: u8,
    pub row: u8,
    pub tile_width: u32,
    pub tile_height: u32,
}

/// A detailed timing (type I in 1.3, type VII in 2.x) and its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DisplayIdTiming {
    pub timing: Timing,
    pub preferred: bool,
    /// Bits 3:0 of the options byte.
    pub aspect: u8,
}

/// One data block.
#[derive(Clone, Debug, PartialEq)]
pub enum DisplayIdBlock {
    ProductId(ProductId),
    DisplayParameters(DisplayParameters),
    Timings(Vec<DisplayIdTiming>),
    Tiled(TiledTopology),
    Other { tag: u8, len: u8 },
}

/// A section.
#[derive(Clone, Debug, PartialEq)]
pub struct DisplayIdSection {
    /// 0x12/0x13 for 1.x, 0x20/0x21 for 2.x.
    pub version: u8,
    pub product_type: u8,
    pub extension_count: u8,
    pub blocks: Vec<DisplayIdBlock>,
}

impl DisplayIdSection {
    pub fn is_v2(&self) -> bool {
        self.version >= 0x20
    }

    pub fn timings(&self) -> impl Iterator<Item = &DisplayIdTiming> {
        self.blocks.iter().flat_map(|b| match b {
            DisplayIdBlock::Timings(t) => t.as_slice(),
            _ => &[],
        })
    }
}

/// A 20-byte type I (pixel clock in 10 kHz) or type VII (1 kHz) descriptor.
fn detailed(d: &[u8], clock_unit_khz: u32) -> DisplayIdTiming {
    let clock = (u32::from(at(d, 0)) | u32::from(at(d, 1)) << 8 | u32::from(at(d, 2)) << 16).saturating_add(1);
    let flags = at(d, 3);
    let plus1 = |i: usize| i32::from(le16(d, i) & 0x7FFF).saturating_add(1);
    let full = |i: usize| u32::from(le16(d, i)).saturating_add(1);
    let interlaced = flags & 0x10 != 0;
    let h_active = full(4);
    let h_blank = i32::try_from(full(6)).unwrap_or(i32::MAX);
    let h_front = plus1(8);
    let h_sync = plus1(10);
    let v_active = full(12);
    let v_blank = i32::try_from(full(14)).unwrap_or(i32::MAX);
    let v_front = plus1(16);
    let v_sync = plus1(18);
    let v_back = v_blank.saturating_sub(v_front).saturating_sub(v_sync);
    // DisplayID gives an interlaced timing's vertical values for the whole frame (NVIDIA's
    // `parseDisplayIdTiming1Descriptor` takes the active lines as they are; edid-decode too).
    // A `Timing` holds the frame's active lines and one field's porches, as an EDID DTD of the
    // same mode decodes, so the porches are halved.
    let field = |lines: i32| if interlaced { lines / 2 } else { lines };
    DisplayIdTiming {
        timing: Timing {
            h_active,
            h_front,
            h_sync,
            h_back: h_blank.saturating_sub(h_front).saturating_sub(h_sync),
            v_active,
            v_front: field(v_front),
            v_sync: field(v_sync),
            v_back: field(v_back),
            pixel_clock_khz: clock.saturating_mul(clock_unit_khz),
            h_sync_positive: le16(d, 8) & 0x8000 != 0,
            v_sync_positive: le16(d, 16) & 0x8000 != 0,
            interlaced,
        },
        preferred: flags & 0x80 != 0,
        aspect: flags & 0x0F,
    }
}

fn product_id(p: &[u8]) -> ProductId {
    let name_len = usize::from(at(p, 11));
    let name = p
        .get(12..12usize.saturating_add(name_len))
        .unwrap_or(&[])
        .iter()
        .map(|&c| if c.is_ascii() && !c.is_ascii_control() { char::from(c) } else { '\u{FFFD}' })
        .collect();
    ProductId {
        vendor: [at(p, 0), at(p, 1), at(p, 2)],
        product: le16(p, 3),
        serial: u32::from_le_bytes([at(p, 5), at(p, 6), at(p, 7), at(p, 8)]),
        week: at(p, 9),
        year: u16::from(at(p, 10)).saturating_add(2000),
        name,
    }
}

fn tiled(p: &[u8]) -> TiledTopology {
    let b1 = at(p, 1);
    let b2 = at(p, 2);
    let b3 = at(p, 3);
    TiledTopology {
        capabilities: at(p, 0),
        columns: ((b1 >> 4) | ((b3 >> 6) & 0x3) << 4).saturating_add(1),
        rows: ((b1 & 0x0F) | ((b3 >> 4) & 0x3) << 4).saturating_add(1),
        column: (b2 >> 4) | ((b3 >> 2) & 0x3) << 4,
        row: (b2 & 0x0F) | (b3 & 0x3) << 4,
        tile_width: u32::from(le16(p, 4)).saturating_add(1),
        tile_height: u32::from(le16(p, 6)).saturating_add(1),
    }
}

/// Parses one section that begins at `s[0]` (its version byte). `block`/`base` place errors:
/// the EDID block number and the section's offset in it. Returns the section and its length
/// in bytes including the checksum, or the error that stops it.
pub fn section(
    s: &[u8],
    block: usize,
    base: usize,
    errors: &mut Vec<EdidError>,
) -> Result<(DisplayIdSection, usize), EdidError> {
    if s.len() < 5 {
        return Err(EdidError::new(block, base, EdidErrorKind::Truncated { needed: 5, have: s.len() }));
    }
    let version = at(s, 0);
    if !matches!(version, 0x10..=0x13 | 0x20 | 0x21) {
        return Err(EdidError::new(block, base, EdidErrorKind::BadDisplayIdVersion { version }));
    }
    let len = usize::from(at(s, 1));
    let total = len.saturating_add(5);
    let Some(bytes) = s.get(..total) else {
        return Err(EdidError::new(
            block,
            base.saturating_add(1),
            EdidErrorKind::SectionOverflow { declared: len, room: s.len().saturating_sub(5) },
        ));
    };
    let sum = checksum(bytes);
    if sum != 0 {
        errors.push(EdidError::new(
            block,
            base.saturating_add(total).saturating_sub(1),
            EdidErrorKind::Checksum { sum },
        ));
    }
    let v2 = version >= 0x20;
    let mut blocks = Vec::new();
    let data = bytes.get(4..total.saturating_sub(1)).unwrap_or(&[]);
    let mut o = 0usize;
    while o.saturating_add(3) <= data.len() {
        let tag = at(data, o);
        let rev = at(data, o.saturating_add(1));
        let blen = at(data, o.saturating_add(2));
        // Padding: a zero tag with zero length ends the data blocks.
        if tag == 0 && blen == 0 && !v2 && data.get(o..).is_some_and(|r| r.iter().all(|&b| b == 0)) {
            break;
        }
        if v2 && tag == 0 && blen == 0 {
            break;
        }
        let start = o.saturating_add(3);
        let end = start.saturating_add(usize::from(blen));
        let Some(p) = data.get(start..end) else {
            errors.push(EdidError::new(
                block,
                base.saturating_add(4).saturating_add(o),
                EdidErrorKind::SectionOverflow { declared: usize::from(blen), room: data.len().saturating_sub(start) },
            ));
            break;
        };
        let parsed = match (v2, tag) {
            (false, 0x00) | (true, 0x20) => DisplayIdBlock::ProductId(product_id(p)),
            (false, 0x01) | (true, 0x21) => DisplayIdBlock::DisplayParameters(DisplayParameters {
                width_tenth_mm: le16(p, 0),
                height_tenth_mm: le16(p, 2),
                h_pixels: le16(p, 4),
                v_pixels: le16(p, 6),
            }),
            (false, 0x03) => DisplayIdBlock::Timings(p.chunks_exact(20).map(|d| detailed(d, 10)).collect()),
            (true, 0x22) => {
                // Bits 6:4 of the revision: extra bytes per descriptor (DisplayID 2.1).
                let size = 20usize.saturating_add(usize::from((rev >> 4) & 0x7));
                // Bit 3 of the revision (2.1): the pixel clock is in 1 kHz units whatever it is.
                DisplayIdBlock::Timings(p.chunks_exact(size).map(|d| detailed(d, 1)).collect())
            }
            (false, 0x12) | (true, 0x28) => DisplayIdBlock::Tiled(tiled(p)),
            _ => DisplayIdBlock::Other { tag, len: blen },
        };
        blocks.push(parsed);
        o = end;
    }
    Ok((DisplayIdSection { version, product_type: at(s, 2), extension_count: at(s, 3), blocks }, total))
}

/// Parses a standalone DisplayID structure: its first section and the extension sections its
/// header counts, one after another.
pub fn parse_standalone(bytes: &[u8], errors: &mut Vec<EdidError>) -> Result<Vec<DisplayIdSection>, EdidError> {
    let (first, mut used) = section(bytes, 0, 0, errors)?;
    let count = first.extension_count;
    let mut sections = alloc::vec![first];
    for _ in 0..count {
        let rest = bytes.get(used..).unwrap_or(&[]);
        let (s, n) = section(rest, 0, used, errors)?;
        sections.push(s);
        used = used.saturating_add(n);
    }
    Ok(sections)
}
