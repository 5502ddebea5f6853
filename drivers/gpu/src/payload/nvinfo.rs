//! `.nv.info` and `.nv.info.<kernel>` sections of a cubin: a list of EIATTR records that tell
//! the driver what ptxas decided (registers, parameter layout, stack, barriers, exits).
//!
//! NVIDIA publishes no header for these. Each record is `u8 format | u8 attribute | ...`:
//! formats `EIFMT_NVAL` (1), `EIFMT_BVAL` (2) and `EIFMT_HVAL` (3) carry a 16-bit value in the
//! next two bytes; `EIFMT_SVAL` (4) carries a 16-bit length and that many bytes. The attribute
//! numbers in [`ATTRIBUTES`] are the ones cuobjdump 13.4 (`cuobjdump -elf`) names;
//! `tests/tests/payload_real.rs` decodes every record of cubins that ptxas 12.9 writes for
//! sm_75..sm_120 and checks each name here against cuobjdump's, record by record, and each
//! decoded value (registers, parameters, cbank offset) against cuobjdump and `ptxas -v`.
//! Attributes not in the table are kept raw; they are never an error.

use alloc::vec::Vec;

use super::{read_u16, read_u32, Error};

/// `EIFMT_*`: how a record's value is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// No value (the two bytes are zero).
    Nval,
    /// A byte value (in two bytes).
    Bval,
    /// A 16-bit value.
    Hval,
    /// A sized blob.
    Sval,
}

impl Format {
    fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            1 => Some(Format::Nval),
            2 => Some(Format::Bval),
            3 => Some(Format::Hval),
            4 => Some(Format::Sval),
            _ => None,
        }
    }
}

macro_rules! attributes {
    ($($(#[$m:meta])* $name:ident = $value:literal;)*) => {
        /// EIATTR numbers, under cuobjdump's names.
        pub mod attr {
            $( $(#[$m])* pub const $name: u8 = $value; )*
        }
        /// Every attribute this module names, with cuobjdump's name for it.
        pub const ATTRIBUTES: &[(u8, &str)] = &[$(($value, stringify!($name))),*];
    };
}

attributes! {
    /// Where the parameters live in constant bank 0: `u32 symbol of .nv.constant0.<k>`,
    /// `u16 offset`, `u16 size`.
    EIATTR_PARAM_CBANK = 0x0a;
    /// `.maxntid` (`__launch_bounds__`): three u32, x y z.
    EIATTR_MAX_THREADS = 0x05;
    /// Per-function frame size (global `.nv.info`): `u32 symbol`, `u32 bytes`.
    EIATTR_FRAME_SIZE = 0x11;
    /// Per-function minimum stack (global `.nv.info`): `u32 symbol`, `u32 bytes`.
    EIATTR_MIN_STACK_SIZE = 0x12;
    /// One kernel parameter (see [`ParamInfo`]).
    EIATTR_KPARAM_INFO = 0x17;
    /// Size of the parameter block in constant bank 0 (HVAL).
    EIATTR_CBANK_PARAM_SIZE = 0x19;
    /// `.maxnreg`-style register limit (HVAL).
    EIATTR_MAXREG_COUNT = 0x1b;
    /// Byte offsets of the EXIT instructions in `.text.<k>` (u32 each).
    EIATTR_EXIT_INSTR_OFFSETS = 0x1c;
    /// Per-function register count (global `.nv.info`): `u32 symbol`, `u32 registers`.
    EIATTR_REGCOUNT = 0x2f;
    /// Offsets of warp-wide instructions (u32 each).
    EIATTR_INT_WARP_WIDE_INSTR_OFFSETS = 0x31;
    /// Software workaround flags (u32).
    EIATTR_SW_WAR = 0x36;
    /// CUDA API version the code was built for (u32).
    EIATTR_CUDA_API_VERSION = 0x37;
    EIATTR_VRC_CTA_INIT_COUNT = 0x4a;
    /// Named barriers the kernel uses (BVAL); sm_100+ cubins carry it here, older ones in
    /// the `.text` section's flags.
    EIATTR_NUM_BARRIERS = 0x4c;
    EIATTR_SPARSE_MMA_MASK = 0x50;
}

/// cuobjdump's name for attribute `code`, if this module knows it.
pub fn attribute_name(code: u8) -> Option<&'static str> {
    ATTRIBUTES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// One record, undecoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub format: Format,
    pub attribute: u8,
    /// The 16-bit value for NVAL/BVAL/HVAL, the blob's length for SVAL.
    pub value16: u16,
    /// The blob (SVAL only; empty otherwise).
    pub data: &'a [u8],
}

impl<'a> Record<'a> {
    /// The `i`-th u32 of an SVAL blob.
    pub fn word(&self, i: usize) -> Option<u32> {
        read_u32(self.data, i.checked_mul(4)?, "").ok()
    }

    /// Every whole u32 of an SVAL blob.
    pub fn words(&self) -> impl Iterator<Item = u32> + 'a {
        self.data.chunks_exact(4).filter_map(|c| c.try_into().ok()).map(u32::from_le_bytes)
    }
}

/// Splits an `.nv.info*` section into records. A truncated record or an unknown format is an
/// error: after it the rest of the section cannot be framed.
pub fn records(section: &[u8]) -> Result<Vec<Record<'_>>, Error> {
    let mut out = Vec::new();
    // `pos` only ever moves past bytes that were just read, so it stays at most
    // `section.len()` and the saturating adds below never saturate.
    let mut pos = 0usize;
    while pos < section.len() {
        let raw_format = *section.get(pos).ok_or(Error::Corrupt { what: ".nv.info", detail: "record past the end" })?;
        let attribute = *section.get(pos.saturating_add(1)).ok_or(Error::Truncated {
            what: ".nv.info record",
            offset: pos,
            need: 4,
            have: section.len().saturating_sub(pos),
        })?;
        let format = Format::from_raw(raw_format)
            .ok_or(Error::Corrupt { what: ".nv.info", detail: "unknown EIFMT record format" })?;
        let value16 = read_u16(section, pos.saturating_add(2), ".nv.info record")?;
        pos = pos.saturating_add(4);
        let data = if format == Format::Sval {
            let len = usize::from(value16);
            let blob = section.get(pos..).and_then(|rest| rest.get(..len)).ok_or(Error::Truncated {
                what: ".nv.info SVAL record",
                offset: pos,
                need: len,
                have: section.len().saturating_sub(pos),
            })?;
            pos = pos.saturating_add(len);
            blob
        } else {
            &[][..]
        };
        out.push(Record { format, attribute, value16, data });
    }
    Ok(out)
}

/// `EIATTR_KPARAM_INFO`: one kernel parameter. Layout of the 12-byte value, as cuobjdump
/// prints it: `u32 index`, `u16 ordinal`, `u16 offset`, then a u32 holding pointee log2
/// alignment (7:0), space (11:8), cbank (16:12), a flag that is clear for "Parameter Space:
/// CBANK" (17) and the size in bytes (31:18).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    pub index: u32,
    /// Position in the signature (0 = first parameter).
    pub ordinal: u16,
    /// Byte offset inside the parameter block.
    pub offset: u16,
    /// Size in bytes.
    pub size: u16,
    pub log_alignment: u8,
    pub space: u8,
    pub cbank: u8,
    /// Whether the parameter is in a constant bank (flag bit 17 clear).
    pub in_cbank: bool,
}

impl ParamInfo {
    /// Decodes a KPARAM_INFO record's blob.
    pub fn decode(record: &Record<'_>) -> Result<Self, Error> {
        let bad = Error::Corrupt { what: "EIATTR_KPARAM_INFO", detail: "value shorter than 12 bytes" };
        if record.data.len() < 12 {
            return Err(bad);
        }
        let index = read_u32(record.data, 0, "EIATTR_KPARAM_INFO")?;
        let ordinal = read_u16(record.data, 4, "EIATTR_KPARAM_INFO")?;
        let offset = read_u16(record.data, 6, "EIATTR_KPARAM_INFO")?;
        let bits = read_u32(record.data, 8, "EIATTR_KPARAM_INFO")?;
        Ok(ParamInfo {
            index,
            ordinal,
            offset,
            size: (bits >> 18) as u16,
            log_alignment: (bits & 0xff) as u8,
            space: ((bits >> 8) & 0xf) as u8,
            cbank: ((bits >> 12) & 0x1f) as u8,
            in_cbank: bits & (1 << 17) == 0,
        })
    }
}

#[cfg(test)]
mod tests {
    // Tests index and compute offsets on purpose, over inputs they build themselves.
    #![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use super::*;

    #[test]
    fn records_frame_and_decode() {
        // CUDA_API_VERSION 0x81, MAXREG_COUNT 0xff, KPARAM_INFO ordinal 1 offset 8 size 1.
        let bytes = [
            4, 0x37, 4, 0, 0x81, 0, 0, 0, //
            3, 0x1b, 0xff, 0, //
            4, 0x17, 12, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0x00, 0xf0, 0x05, 0x00,
        ];
        let recs = records(&bytes).unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(attribute_name(recs[0].attribute), Some("EIATTR_CUDA_API_VERSION"));
        assert_eq!(recs[0].word(0), Some(0x81));
        assert_eq!(recs[1].value16, 0xff);
        let p = ParamInfo::decode(&recs[2]).unwrap();
        assert_eq!((p.ordinal, p.offset, p.size, p.cbank, p.in_cbank), (1, 8, 1, 0x1f, true));
    }

    #[test]
    fn truncated_and_unknown_records_are_errors() {
        assert!(records(&[4, 0x37, 8, 0, 1, 2]).is_err());
        assert!(records(&[9, 0x37, 0, 0]).is_err());
        assert!(records(&[3, 0x1b, 0xff]).is_err());
        // Unknown attribute numbers are kept.
        let recs = records(&[3, 0xee, 1, 0]).unwrap();
        assert_eq!((recs[0].attribute, attribute_name(0xee)), (0xee, None));
    }
}
