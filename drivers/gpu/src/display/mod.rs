//! Display: EDID, CTA-861 and DisplayID parsing, formula timings and mode selection.
//!
//! These are display standards, not NVIDIA hardware facts (VESA E-EDID 1.4, CTA-861-G/H,
//! DisplayID 1.3/2.0, VESA DMT 1.13, CVT 1.2, GTF 1.1); NVIDIA's reading of them is
//! `src/common/modeset/timing/` in open-gpu-kernel-modules, cited where a fact came from there.
//!
//! [`parse`] is lenient: it decodes everything it can and collects recoverable problems (a bad
//! checksum, an unknown extension, a data block that overruns its collection) in
//! [`Edid::errors`]. [`parse_strict`] fails on the first of them. Input that cannot be an EDID
//! at all (shorter than a block, wrong header) is an error from both. Nothing here panics on
//! input.

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod cta;
pub mod displayid;
pub mod edid;
pub mod error;
pub mod mode;
pub mod timing;

#[cfg(test)]
mod tests;

use alloc::vec::Vec;

pub use error::{EdidError, EdidErrorKind};

use cta::CtaBlock;
use displayid::DisplayIdSection;
use edid::{BaseBlock, Descriptor, BLOCK_LEN, HEADER};
use timing::Timing;

/// Extension block tags (E-EDID 1.4 table 2.6; NVIDIA `nvtiming.h` NVT_EDID_EXTENSION_*).
pub mod tags {
    pub const CTA: u8 = 0x02;
    pub const VTB: u8 = 0x10;
    pub const DI: u8 = 0x40;
    pub const LS: u8 = 0x50;
    pub const DPVL: u8 = 0x60;
    pub const DISPLAYID: u8 = 0x70;
    pub const BLOCK_MAP: u8 = 0xF0;
    pub const OEM: u8 = 0xFF;
}

/// One extension block.
#[derive(Clone, Debug, PartialEq)]
pub enum Extension {
    Cta(CtaBlock),
    DisplayId(DisplayIdSection),
    /// A block map (tag 0xF0): the tags of the blocks it maps.
    BlockMap(Vec<u8>),
    /// Any other tag, or a block that could not be decoded.
    Other(u8),
}

impl Extension {
    pub fn tag(&self) -> u8 {
        match self {
            Extension::Cta(_) => tags::CTA,
            Extension::DisplayId(_) => tags::DISPLAYID,
            Extension::BlockMap(_) => tags::BLOCK_MAP,
            Extension::Other(t) => *t,
        }
    }
}

/// Where a detailed timing came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimingSource {
    Base,
    Cta,
    DisplayId,
}

/// A decoded EDID.
#[derive(Clone, Debug, PartialEq)]
pub struct Edid {
    pub base: BaseBlock,
    /// Blocks 1.., in order.
    pub extensions: Vec<Extension>,
    /// Recoverable problems, in the order met.
    pub errors: Vec<EdidError>,
}

impl Edid {
    /// Every detailed timing in block order: the base block's descriptors, then each
    /// extension's (CTA-861 DTDs, DisplayID type I/VII descriptors).
    pub fn detailed_timings(&self) -> Vec<(TimingSource, Timing)> {
        let mut out: Vec<(TimingSource, Timing)> = Vec::new();
        let dtds = |ds: &[Descriptor], src: TimingSource, out: &mut Vec<(TimingSource, Timing)>| {
            for d in ds {
                if let Descriptor::Detailed(t) = d {
                    out.push((src, t.timing));
                }
            }
        };
        dtds(&self.base.descriptors, TimingSource::Base, &mut out);
        for e in &self.extensions {
            match e {
                Extension::Cta(c) => dtds(&c.descriptors, TimingSource::Cta, &mut out),
                Extension::DisplayId(s) => out.extend(s.timings().map(|t| (TimingSource::DisplayId, t.timing))),
                _ => {}
            }
        }
        out
    }

    /// VICs of every CTA-861 Video Data Block, in block order.
    pub fn cta_vics(&self) -> Vec<u8> {
        self.extensions
            .iter()
            .flat_map(|e| match e {
                Extension::Cta(c) => c.vics().collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect()
    }
}

/// Parses an EDID leniently (see the module comment).
pub fn parse(bytes: &[u8]) -> Result<Edid, EdidError> {
    let Some(b0) = bytes.get(..BLOCK_LEN) else {
        return Err(EdidError::new(0, 0, EdidErrorKind::Truncated { needed: BLOCK_LEN, have: bytes.len() }));
    };
    if b0.get(..8) != Some(&HEADER[..]) {
        return Err(EdidError::new(0, 0, EdidErrorKind::BadHeader));
    }
    let mut errors = Vec::new();
    let sum = edid::checksum(b0);
    if sum != 0 {
        errors.push(EdidError::new(0, 127, EdidErrorKind::Checksum { sum }));
    }
    let base = edid::base_block(b0, &mut errors);
    let declared = base.extension_count;
    let mut extensions = Vec::new();
    let present = (bytes.len() / BLOCK_LEN).saturating_sub(1);
    if present > usize::from(declared) {
        errors.push(EdidError::new(0, 126, EdidErrorKind::ExtraBlocks { declared, present }));
    }
    for n in 1..=present.max(usize::from(declared)) {
        let start = n.saturating_mul(BLOCK_LEN);
        let Some(b) = bytes.get(start..start.saturating_add(BLOCK_LEN)) else {
            errors.push(EdidError::new(n, 0, EdidErrorKind::MissingExtensions { declared, present }));
            break;
        };
        let sum = edid::checksum(b);
        if sum != 0 {
            errors.push(EdidError::new(n, 127, EdidErrorKind::Checksum { sum }));
        }
        let tag = edid::at(b, 0);
        let ext = match tag {
            tags::CTA => Extension::Cta(cta::cta_block(b, n, base.revision, &mut errors)),
            tags::DISPLAYID => match displayid::section(b.get(1..127).unwrap_or(&[]), n, 1, &mut errors) {
                Ok((s, _)) => Extension::DisplayId(s),
                Err(e) => {
                    errors.push(e);
                    Extension::Other(tag)
                }
            },
            tags::BLOCK_MAP => {
                Extension::BlockMap(b.get(1..127).unwrap_or(&[]).iter().copied().take_while(|&t| t != 0).collect())
            }
            other => {
                errors.push(EdidError::new(n, 0, EdidErrorKind::UnknownExtension { tag: other }));
                Extension::Other(other)
            }
        };
        extensions.push(ext);
    }
    Ok(Edid { base, extensions, errors })
}

/// Parses an EDID and fails on the first problem [`parse`] would have collected.
pub fn parse_strict(bytes: &[u8]) -> Result<Edid, EdidError> {
    let edid = parse(bytes)?;
    match edid.errors.first() {
        Some(e) => Err(*e),
        None => Ok(edid),
    }
}
