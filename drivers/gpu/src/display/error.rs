//! Typed EDID errors: which 128-byte block, which byte offset within it (or within a standalone
//! DisplayID structure), and what was wrong.

use core::fmt;

/// What was wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdidErrorKind {
    /// The input ended before the block: `needed` bytes from the block's start, `have` present.
    Truncated { needed: usize, have: usize },
    /// Block 0 does not begin with 00 FF FF FF FF FF FF 00.
    BadHeader,
    /// The block's bytes do not sum to 0 mod 256; `sum` is what they sum to.
    Checksum { sum: u8 },
    /// An EDID version other than 1 (E-EDID 1.4 covers version 1, revisions 0..=4).
    BadVersion { version: u8, revision: u8 },
    /// Byte 126 names more extension blocks than the input holds.
    MissingExtensions { declared: u8, present: usize },
    /// The input holds more whole blocks than byte 126 declares (a dump of two EDIDs, or an
    /// HDMI EEODB sink); they are decoded too.
    ExtraBlocks { declared: u8, present: usize },
    /// An 18-byte descriptor whose contents contradict its tag (for example a detailed timing
    /// whose blanking is shorter than front porch plus sync, or a range limits descriptor with
    /// minimum above maximum).
    BadDescriptor { tag: u8 },
    /// A CTA-861 data block that runs past the data block collection.
    BadDataBlock { tag: u8, len: u8 },
    /// A CTA-861 DTD offset that points outside the block's data area.
    BadDtdOffset { offset: u8 },
    /// A DisplayID section or data block longer than the room it has.
    SectionOverflow { declared: usize, room: usize },
    /// A DisplayID version this parser does not know.
    BadDisplayIdVersion { version: u8 },
    /// An extension block with a tag this parser does not decode.
    UnknownExtension { tag: u8 },
}

/// An error at a place in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdidError {
    /// The 128-byte block (0 = base EDID); for a standalone DisplayID structure, 0.
    pub block: usize,
    /// Byte offset within the block (or within the standalone structure).
    pub offset: usize,
    pub kind: EdidErrorKind,
}

impl EdidError {
    pub(crate) const fn new(block: usize, offset: usize, kind: EdidErrorKind) -> Self {
        EdidError { block, offset, kind }
    }
}

impl fmt::Display for EdidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block {} offset {:#04x}: ", self.block, self.offset)?;
        match self.kind {
            EdidErrorKind::Truncated { needed, have } => write!(f, "truncated: needs {needed} bytes, has {have}"),
            EdidErrorKind::BadHeader => write!(f, "bad EDID header"),
            EdidErrorKind::Checksum { sum } => write!(f, "bad checksum: bytes sum to {sum:#04x}, not 0"),
            EdidErrorKind::BadVersion { version, revision } => write!(f, "unknown EDID version {version}.{revision}"),
            EdidErrorKind::MissingExtensions { declared, present } => {
                write!(f, "{declared} extension blocks declared, {present} present")
            }
            EdidErrorKind::ExtraBlocks { declared, present } => {
                write!(f, "{declared} extension blocks declared, {present} present: all decoded")
            }
            EdidErrorKind::BadDescriptor { tag } => write!(f, "bad descriptor (tag {tag:#04x})"),
            EdidErrorKind::BadDataBlock { tag, len } => {
                write!(f, "CTA data block tag {tag} length {len} overruns the collection")
            }
            EdidErrorKind::BadDtdOffset { offset } => write!(f, "CTA DTD offset {offset} outside the block"),
            EdidErrorKind::SectionOverflow { declared, room } => {
                write!(f, "DisplayID length {declared} exceeds the {room} bytes available")
            }
            EdidErrorKind::BadDisplayIdVersion { version } => write!(f, "unknown DisplayID version {version:#04x}"),
            EdidErrorKind::UnknownExtension { tag } => write!(f, "unknown extension block tag {tag:#04x}"),
        }
    }
}
