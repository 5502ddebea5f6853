//! CTA-861 extension blocks (tag 0x02; CTA-861-G/H section 7): the header flags, the data
//! block collection and the detailed timings after it. NVIDIA reads the same block in
//! `src/common/modeset/timing/nvt_edidext_861.c` (`get861ExtInfo`, `parseCta861DataBlockInfo`,
//! `parseCta861VsdbBlocks`, `parseCta861HfScdb`).

use alloc::vec::Vec;

use super::edid::{at, descriptor, Descriptor};
use super::error::{EdidError, EdidErrorKind};

/// A short audio descriptor (CTA-861-H section 7.5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortAudioDescriptor {
    /// 1 = L-PCM, 2 = AC-3, ... 15 = extended.
    pub format: u8,
    pub max_channels: u8,
    /// Bit 0 32 kHz .. bit 6 192 kHz.
    pub sample_rates: u8,
    /// L-PCM: bit 0 16, bit 1 20, bit 2 24 bits; other formats as stored.
    pub byte3: u8,
}

/// The HDMI 1.4 vendor-specific data block (OUI 00-0C-03, HDMI 1.4b section 8.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HdmiVsdb {
    /// The CEC physical address a.b.c.d as 4 nibbles.
    pub physical_address: u16,
    /// Byte 6 as stored: bit 6 DC_48bit, bit 5 DC_36bit, bit 4 DC_30bit, bit 3 DC_Y444, bit 7 AI.
    pub deep_color: u8,
    /// Max TMDS clock in MHz (0 = not given).
    pub max_tmds_mhz: u32,
}

/// The HDMI Forum vendor-specific data block (OUI C4-5D-D8, HDMI 2.1 section 10.3.2) or the
/// HF-SCDB (extended tag 121) with the same payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HdmiForum {
    pub version: u8,
    /// Max TMDS character rate in MHz (0 = 340 MHz or less).
    pub max_tmds_character_rate_mhz: u32,
    pub scdc_present: bool,
    /// The capability byte as stored (bit 7 SCDC, bit 6 RR, bit 3 LTE_340Mcsc_scramble, ...).
    pub flags: u8,
}

/// HDR static metadata (extended tag 6, CTA-861-H section 7.5.13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HdrStaticMetadata {
    /// Bit 0 SDR, bit 1 traditional HDR, bit 2 SMPTE ST 2084, bit 3 HLG.
    pub eotfs: u8,
    pub descriptors: u8,
    /// Coded values as stored, when present.
    pub max_luminance: Option<u8>,
    pub max_frame_average: Option<u8>,
    pub min_luminance: Option<u8>,
}

/// One data block of the collection.
#[derive(Clone, Debug, PartialEq)]
pub enum DataBlock {
    /// Tag 2: the VICs in order with their native flag.
    Video(Vec<(u8, bool)>),
    /// Tag 1.
    Audio(Vec<ShortAudioDescriptor>),
    /// Tag 4: the three allocation bytes.
    SpeakerAllocation([u8; 3]),
    Hdmi(HdmiVsdb),
    HdmiForum(HdmiForum),
    /// Tag 3 with another OUI.
    VendorSpecific {
        oui: u32,
    },
    /// Extended tag 0: the capability byte.
    VideoCapability(u8),
    /// Extended tag 5: the two colorimetry bytes.
    Colorimetry(u16),
    HdrStaticMetadata(HdrStaticMetadata),
    /// Extended tag 14: VICs that support only YCbCr 4:2:0.
    Ycbcr420Video(Vec<u8>),
    /// Extended tag 15: bitmap over the Video Data Block's SVDs (empty: all of them).
    Ycbcr420CapabilityMap(Vec<u8>),
    /// Any other block: tag, extended tag when tag is 7, payload length.
    Other {
        tag: u8,
        extended: Option<u8>,
        len: u8,
    },
}

/// A CTA-861 extension block.
#[derive(Clone, Debug, PartialEq)]
pub struct CtaBlock {
    pub revision: u8,
    /// Byte 3 (revision 2 and later): bit 7 underscan, bit 6 basic audio, bit 5 YCbCr 4:4:4,
    /// bit 4 YCbCr 4:2:2, bits 3:0 number of native DTDs.
    pub flags: u8,
    pub data_blocks: Vec<DataBlock>,
    /// The 18-byte descriptors after the collection (detailed timings in practice).
    pub descriptors: Vec<Descriptor>,
}

impl CtaBlock {
    /// VICs of every Video Data Block, in order.
    pub fn vics(&self) -> impl Iterator<Item = u8> + '_ {
        self.data_blocks
            .iter()
            .flat_map(|b| match b {
                DataBlock::Video(v) => v.as_slice(),
                _ => &[],
            })
            .map(|&(vic, _)| vic)
    }
}

/// Decodes one short video descriptor (CTA-861-H section 7.5.1): VICs 1..=64 may carry the
/// native bit (129..=192); 193..=253 are VICs as they are; 0, 128, 254 and 255 are reserved.
fn svd(b: u8) -> Option<(u8, bool)> {
    match b {
        1..=127 => Some((b, false)),
        129..=192 => Some((b & 0x7F, true)),
        193..=253 => Some((b, false)),
        _ => None,
    }
}

fn oui(p: &[u8]) -> u32 {
    u32::from(at(p, 0)) | u32::from(at(p, 1)) << 8 | u32::from(at(p, 2)) << 16
}

fn data_block(tag: u8, p: &[u8], len: u8) -> DataBlock {
    match tag {
        1 => DataBlock::Audio(
            p.chunks_exact(3)
                .map(|s| ShortAudioDescriptor {
                    format: (at(s, 0) >> 3) & 0x0F,
                    max_channels: (at(s, 0) & 0x7).saturating_add(1),
                    sample_rates: at(s, 1) & 0x7F,
                    byte3: at(s, 2),
                })
                .collect(),
        ),
        2 => DataBlock::Video(p.iter().filter_map(|&b| svd(b)).collect()),
        4 => DataBlock::SpeakerAllocation([at(p, 0), at(p, 1), at(p, 2)]),
        3 => match oui(p) {
            0x000C03 => DataBlock::Hdmi(HdmiVsdb {
                physical_address: u16::from_be_bytes([at(p, 3), at(p, 4)]),
                deep_color: at(p, 5),
                max_tmds_mhz: u32::from(at(p, 6)).saturating_mul(5),
            }),
            0xC45DD8 => DataBlock::HdmiForum(hdmi_forum(p.get(3..).unwrap_or(&[]))),
            o => DataBlock::VendorSpecific { oui: o },
        },
        7 => {
            let ext = at(p, 0);
            let q = p.get(1..).unwrap_or(&[]);
            match ext {
                0 => DataBlock::VideoCapability(at(q, 0)),
                5 => DataBlock::Colorimetry(u16::from_le_bytes([at(q, 0), at(q, 1)])),
                6 => DataBlock::HdrStaticMetadata(HdrStaticMetadata {
                    eotfs: at(q, 0),
                    descriptors: at(q, 1),
                    max_luminance: q.get(2).copied(),
                    max_frame_average: q.get(3).copied(),
                    min_luminance: q.get(4).copied(),
                }),
                14 => DataBlock::Ycbcr420Video(q.iter().filter_map(|&b| svd(b)).map(|(v, _)| v).collect()),
                15 => DataBlock::Ycbcr420CapabilityMap(q.to_vec()),
                // HF-SCDB: two reserved bytes, then the HF-VSDB payload from its version byte.
                121 => DataBlock::HdmiForum(hdmi_forum(q.get(2..).unwrap_or(&[]))),
                _ => DataBlock::Other { tag, extended: Some(ext), len },
            }
        }
        _ => DataBlock::Other { tag, extended: None, len },
    }
}

fn hdmi_forum(q: &[u8]) -> HdmiForum {
    let flags = at(q, 2);
    HdmiForum {
        version: at(q, 0),
        max_tmds_character_rate_mhz: u32::from(at(q, 1)).saturating_mul(5),
        scdc_present: flags & 0x80 != 0,
        flags,
    }
}

/// Decodes a CTA-861 block (128 bytes, tag 0x02) at `block`.
pub(crate) fn cta_block(b: &[u8], block: usize, edid_revision: u8, errors: &mut Vec<EdidError>) -> CtaBlock {
    let revision = at(b, 1);
    let d = at(b, 2);
    let flags = if revision >= 2 { at(b, 3) } else { 0 };
    let mut data_blocks = Vec::new();
    let mut descriptors = Vec::new();
    // d = 0: no DTDs and no data blocks; otherwise DTDs start at d, which leaves room for the
    // 4-byte header before it and the checksum after (CTA-861-H table 84).
    let dtd_start = match usize::from(d) {
        0 => None,
        s if (4..=127).contains(&s) => Some(s),
        _ => {
            errors.push(EdidError::new(block, 2, EdidErrorKind::BadDtdOffset { offset: d }));
            None
        }
    };
    if let Some(end) = dtd_start.filter(|_| revision >= 3) {
        let mut o = 4usize;
        while o < end {
            let header = at(b, o);
            let tag = header >> 5;
            let len = header & 0x1F;
            let start = o.saturating_add(1);
            let next = start.saturating_add(usize::from(len));
            if next > end {
                errors.push(EdidError::new(block, o, EdidErrorKind::BadDataBlock { tag, len }));
                break;
            }
            data_blocks.push(data_block(tag, b.get(start..next).unwrap_or(&[]), len));
            o = next;
        }
    }
    if let Some(mut o) = dtd_start {
        while o.saturating_add(18) <= 127 {
            let d = b.get(o..o.saturating_add(18)).unwrap_or(&[]);
            // Zero bytes are padding; a zero pixel clock with a tag is a display descriptor
            // (real sinks put manufacturer descriptors here) and is decoded as one.
            if d.iter().all(|&x| x == 0) {
                break;
            }
            descriptors.push(descriptor(d, edid_revision, block, o, errors));
            o = o.saturating_add(18);
        }
    }
    CtaBlock { revision, flags, data_blocks, descriptors }
}
