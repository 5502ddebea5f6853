//! The EDID parser against Debian's `edid-decode` on the project's own edge cases: EDIDs built
//! here, byte by byte from the VESA E-EDID 1.4, CTA-861 and DisplayID layouts, for what the real
//! corpus (`edid_real.rs`) rarely or never holds: EDID 1.2's square standard-timing aspect, GTF
//! on an analog 1.3 display, interlaced and negative-polarity DTDs, 12-bit porches and sizes at
//! the top of their ranges, CTA-861 native and 193+ VICs beside the YCbCr 4:2:0 block, DisplayID
//! 1.3 type I and DisplayID 2.0 type VII timings, and wrong checksums. Each EDID is written to a
//! file, decoded by `edid-decode` (scripts/install-deps.sh, group `edid`), and compared with
//! `nvgpu::display` by `tests::edid_decode::compare`; the reference must also have decoded what
//! each case was built to hold, so a case edid-decode read differently cannot pass unnoticed.

use std::path::PathBuf;
use std::process::Command;

use nvgpu::display::{self, EdidErrorKind};
use tests::edid_decode;

// ---------------------------------------------------------------------------------------------
// Builders.

/// A detailed timing: active, blanking and sync in pixels and lines, clock in kHz.
#[derive(Clone, Copy)]
struct Dtd {
    khz: u32,
    h_active: u16,
    h_blank: u16,
    h_front: u16,
    h_sync: u16,
    v_active: u16,
    v_blank: u16,
    v_front: u16,
    v_sync: u16,
    interlaced: bool,
    h_positive: bool,
    v_positive: bool,
}

impl Dtd {
    /// The 18-byte EDID / CTA-861 descriptor (E-EDID 1.4 section 3.10.2; digital separate sync).
    fn edid(self) -> [u8; 18] {
        let mut d = [0u8; 18];
        let clock = (self.khz / 10) as u16;
        d[0..2].copy_from_slice(&clock.to_le_bytes());
        d[2] = self.h_active as u8;
        d[3] = self.h_blank as u8;
        d[4] = ((self.h_active >> 8) as u8) << 4 | (self.h_blank >> 8) as u8;
        d[5] = self.v_active as u8;
        d[6] = self.v_blank as u8;
        d[7] = ((self.v_active >> 8) as u8) << 4 | (self.v_blank >> 8) as u8;
        d[8] = self.h_front as u8;
        d[9] = self.h_sync as u8;
        d[10] = ((self.v_front & 0xf) as u8) << 4 | (self.v_sync & 0xf) as u8;
        d[11] = ((self.h_front >> 8) as u8) << 6
            | ((self.h_sync >> 8) as u8 & 3) << 4
            | ((self.v_front >> 4) as u8 & 3) << 2
            | ((self.v_sync >> 4) as u8 & 3);
        // 600 mm x 340 mm image.
        d[12] = 600u16 as u8;
        d[13] = 340u16 as u8;
        d[14] = ((600u16 >> 8) as u8) << 4 | (340u16 >> 8) as u8;
        d[17] = u8::from(self.interlaced) << 7
            | 0b11 << 3
            | u8::from(self.v_positive) << 2
            | u8::from(self.h_positive) << 1;
        d
    }

    /// The 20-byte DisplayID descriptor (type I in 10 kHz units, type VII in 1 kHz units).
    fn displayid(self, clock_unit_khz: u32, preferred: bool) -> [u8; 20] {
        let mut d = [0u8; 20];
        let clock = self.khz / clock_unit_khz - 1;
        d[0..3].copy_from_slice(&clock.to_le_bytes()[..3]);
        d[3] = u8::from(preferred) << 7 | u8::from(self.interlaced) << 4;
        let put = |d: &mut [u8; 20], at: usize, v: u16| d[at..at + 2].copy_from_slice(&v.to_le_bytes());
        put(&mut d, 4, self.h_active - 1);
        put(&mut d, 6, self.h_blank - 1);
        put(&mut d, 8, (self.h_front - 1) | u16::from(self.h_positive) << 15);
        put(&mut d, 10, self.h_sync - 1);
        put(&mut d, 12, self.v_active - 1);
        put(&mut d, 14, self.v_blank - 1);
        put(&mut d, 16, (self.v_front - 1) | u16::from(self.v_positive) << 15);
        put(&mut d, 18, self.v_sync - 1);
        d
    }
}

/// CTA-861 1920x1080p60 (VIC 16).
const P1080: Dtd = Dtd {
    khz: 148_500,
    h_active: 1920,
    h_blank: 280,
    h_front: 88,
    h_sync: 44,
    v_active: 1080,
    v_blank: 45,
    v_front: 4,
    v_sync: 5,
    interlaced: false,
    h_positive: true,
    v_positive: true,
};
/// CTA-861 1920x1080i60 (VIC 5): 540 lines a field.
const I1080: Dtd = Dtd { khz: 74_250, v_active: 540, v_blank: 22, v_front: 2, interlaced: true, ..P1080 };
/// DMT 1280x1024@60 with negative syncs (the DMT's are positive; the DTD says what it says).
const SXGA_NEG: Dtd = Dtd {
    khz: 108_000,
    h_active: 1280,
    h_blank: 408,
    h_front: 48,
    h_sync: 112,
    v_active: 1024,
    v_blank: 42,
    v_front: 1,
    v_sync: 3,
    interlaced: false,
    h_positive: false,
    v_positive: false,
};
/// 12-bit fields near their tops: 4000 pixels, 4000 blanking, 1000-pixel porch, 60-line porch
/// (6 bits), 600-pixel sync, 655.35 MHz (the 16-bit clock's maximum).
const WIDE: Dtd = Dtd {
    khz: 655_350,
    h_active: 4000,
    h_blank: 2000,
    h_front: 1000,
    h_sync: 600,
    v_active: 2400,
    v_blank: 100,
    v_front: 60,
    v_sync: 15,
    interlaced: false,
    h_positive: true,
    v_positive: false,
};
/// CTA-861 3840x2160p60 (VIC 97).
const P2160: Dtd = Dtd {
    khz: 594_000,
    h_active: 3840,
    h_blank: 560,
    h_front: 176,
    h_sync: 88,
    v_active: 2160,
    v_blank: 90,
    v_front: 8,
    v_sync: 10,
    interlaced: false,
    h_positive: true,
    v_positive: true,
};

/// A base block under construction.
struct Base([u8; 128]);

impl Base {
    /// Header, "NVE" product 0x1234, serial 0, week 10 of 2024, the given version, 8 bpc
    /// DisplayPort digital input (analog when `analog`), 60 x 34 cm, gamma 2.2, sRGB-ish colour.
    fn new(version: u8, revision: u8, analog: bool, features: u8) -> Self {
        let mut b = [0u8; 128];
        b[..8].copy_from_slice(&[0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]);
        let letters = *b"NVE";
        let id = letters.iter().fold(0u16, |acc, &l| acc << 5 | u16::from(l - b'A' + 1));
        b[8..10].copy_from_slice(&id.to_be_bytes());
        b[10..12].copy_from_slice(&0x1234u16.to_le_bytes());
        b[16] = 10;
        b[17] = (2024 - 1990) as u8;
        b[18] = version;
        b[19] = revision;
        b[20] = if analog {
            0x08
        } else if revision >= 4 {
            0xa5
        } else {
            0x80
        };
        b[21] = 60;
        b[22] = 34;
        b[23] = 120;
        b[24] = features;
        b[25..35].copy_from_slice(&[0xee, 0x91, 0xa3, 0x54, 0x4c, 0x99, 0x26, 0x0f, 0x50, 0x54]);
        // Unused standard timings are 01 01.
        b[38..54].fill(1);
        // Four dummy descriptors (tag 0x10).
        for d in 0..4 {
            b[54 + 18 * d + 3] = 0x10;
        }
        Base(b)
    }

    fn established(mut self, bytes: [u8; 3]) -> Self {
        self.0[35..38].copy_from_slice(&bytes);
        self
    }

    /// Standard timing `slot`: width, aspect code (bits 7:6), refresh in Hz.
    fn standard(mut self, slot: usize, width: u32, aspect: u8, hz: u8) -> Self {
        self.0[38 + 2 * slot] = (width / 8 - 31) as u8;
        self.0[39 + 2 * slot] = aspect << 6 | (hz - 60);
        self
    }

    fn descriptor(mut self, slot: usize, bytes: [u8; 18]) -> Self {
        self.0[54 + 18 * slot..72 + 18 * slot].copy_from_slice(&bytes);
        self
    }

    fn build(mut self, extensions: &[[u8; 128]]) -> Vec<u8> {
        self.0[126] = extensions.len() as u8;
        seal(&mut self.0);
        let mut out = self.0.to_vec();
        for e in extensions {
            out.extend_from_slice(e);
        }
        out
    }
}

/// Sets a block's checksum byte (the last) so the block sums to zero.
fn seal(block: &mut [u8; 128]) {
    let sum = block[..127].iter().fold(0u8, |a, &b| a.wrapping_add(b));
    block[127] = 0u8.wrapping_sub(sum);
}

/// A display name descriptor (tag 0xFC).
fn name(text: &str) -> [u8; 18] {
    let mut d = [0u8; 18];
    d[3] = 0xfc;
    d[5..].fill(b' ');
    d[5..5 + text.len()].copy_from_slice(text.as_bytes());
    if text.len() < 13 {
        d[5 + text.len()] = b'\n';
    }
    d
}

/// A range limits descriptor (tag 0xFD): offsets flags, vertical Hz, horizontal kHz (before
/// the +255 offsets), pixel clock in 10 MHz, timing support (0 default GTF, 1 range only, 4 CVT).
fn range_limits(flags: u8, v: (u8, u8), h: (u8, u8), clock_10mhz: u8, support: u8) -> [u8; 18] {
    let mut d = [0u8; 18];
    d[3] = 0xfd;
    d[4] = flags;
    d[5..10].copy_from_slice(&[v.0, v.1, h.0, h.1, clock_10mhz]);
    d[10] = support;
    if support == 4 {
        // CVT 1.1, no extra clock precision, max 4096 px, all aspects, 16:9 preferred, both
        // blankings (standard preferred), every scaling, 60 Hz preferred.
        d[11..18].copy_from_slice(&[0x11, 0x00, 0x00, 0xf8, 0x18, 0xf0, 60]);
    } else {
        d[11] = 0x0a;
        d[12..18].fill(b' ');
    }
    d
}

/// A CTA-861 revision 3 block: data blocks, then DTDs.
fn cta(flags: u8, data_blocks: &[Vec<u8>], dtds: &[Dtd]) -> [u8; 128] {
    let mut b = [0u8; 128];
    b[0] = 0x02;
    b[1] = 3;
    b[3] = flags;
    let mut at = 4;
    for block in data_blocks {
        b[at..at + block.len()].copy_from_slice(block);
        at += block.len();
    }
    b[2] = at as u8;
    for d in dtds {
        b[at..at + 18].copy_from_slice(&d.edid());
        at += 18;
    }
    seal(&mut b);
    b
}

/// A CTA-861 data block: tag (bits 7:5) and length (bits 4:0), then the payload.
fn data_block(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![tag << 5 | payload.len() as u8];
    v.extend_from_slice(payload);
    v
}

/// A CTA-861 extended-tag data block (tag 7).
fn extended_block(ext_tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![ext_tag];
    p.extend_from_slice(payload);
    data_block(7, &p)
}

/// A DisplayID extension block: one section of `version` with the given data blocks
/// (`(tag, revision, payload)`), its section checksum, and the block checksum.
fn displayid(version: u8, product_type: u8, blocks: &[(u8, u8, Vec<u8>)]) -> [u8; 128] {
    let mut payload = Vec::new();
    for (tag, rev, p) in blocks {
        payload.extend_from_slice(&[*tag, *rev, p.len() as u8]);
        payload.extend_from_slice(p);
    }
    let mut section = vec![version, payload.len() as u8, product_type, 0];
    section.extend_from_slice(&payload);
    let sum = section.iter().fold(0u8, |a, &b| a.wrapping_add(b));
    section.push(0u8.wrapping_sub(sum));
    let mut b = [0u8; 128];
    b[0] = 0x70;
    b[1..1 + section.len()].copy_from_slice(&section);
    seal(&mut b);
    b
}

// ---------------------------------------------------------------------------------------------
// The cases.

/// One edge case: its bytes and what the reference must have decoded from them.
struct Case {
    name: &'static str,
    bytes: Vec<u8>,
    version: &'static str,
    detailed: usize,
    vics: &'static [u8],
    established: usize,
    standard: usize,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();

    // EDID 1.2: aspect code 00 in a standard timing is 1:1 (16:10 only from 1.3), and the
    // display supports GTF (feature bit 0).
    cases.push(Case {
        name: "v1.2-square-aspect-gtf",
        bytes: Base::new(1, 2, true, 0x0b)
            .established([0x21, 0x08, 0x00])
            .standard(0, 1024, 0, 60)
            .standard(1, 1152, 0, 75)
            .standard(2, 1024, 1, 85)
            .descriptor(0, SXGA_NEG.edid())
            .descriptor(1, name("EDGE 1.2"))
            .build(&[]),
        version: "1.2",
        detailed: 1,
        vics: &[],
        established: 3,
        standard: 3,
    });

    // EDID 1.3, analog, default GTF: every established timing, standard timings of every aspect
    // code (00 is 16:10 here), off-DMT sizes and refresh rates that only GTF can time.
    cases.push(Case {
        name: "v1.3-analog-gtf",
        bytes: Base::new(1, 3, true, 0x0b)
            .established([0xff, 0xff, 0x80])
            .standard(0, 1680, 0, 60)
            .standard(1, 1400, 1, 65)
            .standard(2, 1280, 2, 60)
            .standard(3, 1920, 3, 60)
            .standard(4, 1440, 0, 70)
            .standard(5, 800, 1, 123)
            .descriptor(0, SXGA_NEG.edid())
            .descriptor(1, range_limits(0, (50, 125), (30, 110), 23, 0))
            .descriptor(2, name("EDGE ANALOG"))
            .build(&[]),
        version: "1.3",
        detailed: 1,
        vics: &[],
        established: 17,
        standard: 6,
    });

    // EDID 1.4 digital: an interlaced DTD, negative syncs, 12-bit fields at their tops and the
    // maximum clock; range limits past 255 kHz (the +255 horizontal offset) with CVT support.
    cases.push(Case {
        name: "v1.4-dtd-extremes",
        bytes: Base::new(1, 4, false, 0x0b)
            .standard(0, 1920, 0, 60)
            .standard(1, 2048, 3, 60)
            .standard(2, 1600, 1, 60)
            .descriptor(0, P1080.edid())
            .descriptor(1, I1080.edid())
            .descriptor(2, WIDE.edid())
            .descriptor(3, range_limits(0x08, (24, 144), (15, 45), 66, 4))
            .build(&[]),
        version: "1.4",
        detailed: 3,
        vics: &[],
        established: 0,
        standard: 3,
    });

    // CTA-861: a native VIC (bit 7 on a code below 129), VICs 193+ (all eight bits are the
    // VIC), a second Video Data Block; the YCbCr 4:2:0 Video Data Block, colorimetry, HDR static
    // metadata, HDMI and HDMI Forum vendor blocks are not Video Data Blocks and add no VICs;
    // three DTDs in the extension.
    let cta_blocks = vec![
        data_block(2, &[0x80 | 16, 4, 31, 0xc1, 97]),
        data_block(1, &[0x09, 0x07, 0x07]),
        data_block(4, &[0x01, 0x00, 0x00]),
        data_block(3, &[0x03, 0x0c, 0x00, 0x10, 0x00, 0x00, 0x3c]),
        data_block(3, &[0xd8, 0x5d, 0xc4, 0x01, 0x78, 0x80, 0x03]),
        extended_block(0x0e, &[96, 97]),
        extended_block(0x05, &[0xe3, 0x00]),
        extended_block(0x06, &[0x0d, 0x01]),
        data_block(2, &[3, 0x80 | 2]),
    ];
    cases.push(Case {
        name: "cta-861-vics-and-blocks",
        bytes: Base::new(1, 4, false, 0x0b)
            .established([0x21, 0x00, 0x00])
            .standard(0, 1920, 3, 60)
            .descriptor(0, P2160.edid())
            .descriptor(1, range_limits(0, (24, 75), (15, 135), 60, 1))
            .descriptor(2, name("EDGE CTA"))
            .build(&[cta(0xf0, &cta_blocks, &[P1080, I1080, SXGA_NEG])]),
        version: "1.4",
        detailed: 4,
        vics: &[16, 4, 31, 193, 97, 3, 2],
        established: 2,
        standard: 1,
    });

    // DisplayID 1.3 type I timings (10 kHz units), one interlaced and one with negative syncs,
    // then DisplayID 2.0 type VII (1 kHz units, so 594.000 and 148.352 MHz exactly).
    // DisplayID writes an interlaced timing's vertical values for the frame.
    let i1080_frame = Dtd { v_active: 1080, v_blank: 45, v_front: 4, v_sync: 10, ..I1080 };
    let type_i: Vec<u8> =
        [P1080.displayid(10, true), i1080_frame.displayid(10, false), SXGA_NEG.displayid(10, false)].concat();
    let type_vii: Vec<u8> = [P2160.displayid(1, true), Dtd { khz: 148_352, ..P1080 }.displayid(1, false)].concat();
    cases.push(Case {
        name: "displayid-1.3-type-i-and-2.0-type-vii",
        bytes: Base::new(1, 4, false, 0x0b)
            .descriptor(0, P1080.edid())
            .descriptor(1, name("EDGE DISPID"))
            .build(&[displayid(0x13, 0, &[(0x03, 0, type_i)]), displayid(0x20, 0, &[(0x22, 0, type_vii)])]),
        version: "1.4",
        detailed: 6,
        vics: &[],
        established: 0,
        standard: 0,
    });

    // Wrong checksums in the base block and the extension: edid-decode decodes on and says what
    // the checksum should be; so does nvgpu::display, as recoverable errors.
    let mut bad = Base::new(1, 4, false, 0x0b)
        .established([0x20, 0x00, 0x00])
        .descriptor(0, P1080.edid())
        .build(&[cta(0x00, &[data_block(2, &[16])], &[])]);
    bad[127] ^= 0x5a;
    bad[255] ^= 0x01;
    cases.push(Case {
        name: "bad-checksums",
        bytes: bad,
        version: "1.4",
        detailed: 1,
        vics: &[16],
        established: 1,
        standard: 0,
    });
    cases
}

fn edid_decode_version() -> Option<String> {
    let out = Command::new("edid-decode").arg("--help").output().ok()?;
    // edid-decode exits non-zero for --help on some versions; that it ran is what counts.
    Some(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or("").to_string())
}

#[test]
fn edge_cases_match_debian_edid_decode() {
    if edid_decode_version().is_none() {
        tests::skips::record(
            "edid_edge",
            "Debian's edid-decode is not installed (scripts/install-deps.sh edid): the project's own \
             edge-case EDIDs were NOT compared with it",
        );
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("edid_edge");
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let cases = cases();
    for case in &cases {
        let file = dir.join(format!("{}.bin", case.name));
        std::fs::write(&file, &case.bytes).unwrap();
        let out = Command::new("edid-decode").arg(&file).output().expect("running edid-decode");
        let text = String::from_utf8_lossy(&out.stdout);
        if !text.contains("Block 0, Base EDID:") {
            failures.push(format!("{}: edid-decode did not decode it:\n{text}", case.name));
            continue;
        }
        let reference = edid_decode::read(&text);
        let mut fail = |what: String| failures.push(format!("{}: {what}", case.name));
        if reference.hex != case.bytes {
            fail("edid-decode's hex dump is not the bytes given".into());
        }
        // The reference decoded what the case was built to hold.
        if reference.version != case.version {
            fail(format!("edid-decode read version {}, built {}", reference.version, case.version));
        }
        if reference.detailed.len() != case.detailed {
            fail(format!("edid-decode found {} detailed timings, built {}", reference.detailed.len(), case.detailed));
        }
        if reference.vics != case.vics {
            fail(format!("edid-decode found VICs {:?}, built {:?}", reference.vics, case.vics));
        }
        if reference.established.len() != case.established || reference.standard.len() != case.standard {
            fail(format!(
                "edid-decode found {} established and {} standard modes, built {} and {}",
                reference.established.len(),
                reference.standard.len(),
                case.established,
                case.standard
            ));
        }
        if reference.manufacturer != "NVE" || reference.model != Some(0x1234) {
            fail(format!("edid-decode read {} {:?}", reference.manufacturer, reference.model));
        }
        // nvgpu::display agrees with it on everything compared.
        if let Err(what) = edid_decode::compare(&reference) {
            for w in what {
                fail(w);
            }
        }
        // Checksums: both name the same blocks.
        let theirs: Vec<usize> = text
            .split("\nBlock ")
            .enumerate()
            .filter(|(_, part)| part.contains("(should be 0x"))
            .map(|(i, _)| i.saturating_sub(1))
            .collect();
        let ours: Vec<usize> = display::parse(&case.bytes)
            .map(|e| {
                e.errors.iter().filter(|e| matches!(e.kind, EdidErrorKind::Checksum { .. })).map(|e| e.block).collect()
            })
            .unwrap_or_default();
        if ours != theirs {
            fail(format!("checksum errors in blocks {ours:?}, edid-decode's in {theirs:?}"));
        }
        if case.name == "bad-checksums" && ours != [0, 1] {
            fail(format!("the broken checksums of blocks 0 and 1 were not both reported: {ours:?}"));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    eprintln!("edid_edge: {} edge-case EDIDs match Debian's edid-decode", cases.len());
}

/// Where the two readings part, on purpose: in EDID 1.2 a standard timing's aspect code 00 is
/// 1:1 (E-EDID 1.4 section 3.9: 16:10 only from 1.3), so `81 0F` is 1280x1280 at 75 Hz to
/// nvgpu::display; edid-decode looks the two bytes up as a DMT standard-timing code first and
/// reports the DMT's 1280x800 (a 16:10 mode). The test fails if either reading changes.
#[test]
fn edid_1_2_square_aspect_against_the_dmt_code() {
    let bytes = Base::new(1, 2, true, 0x0b).standard(0, 1280, 0, 75).build(&[]);
    let ours = display::parse(&bytes).expect("parses");
    let modes: Vec<(u32, u32, u32)> =
        ours.base.standard.iter().map(|s| (s.mode.width, s.mode.height, s.mode.refresh_hz)).collect();
    assert_eq!(modes, [(1280, 1280, 75)], "EDID 1.2's aspect code 00 is 1:1");
    if edid_decode_version().is_none() {
        tests::skips::record(
            "edid_edge_dmt_code",
            "Debian's edid-decode is not installed (scripts/install-deps.sh edid): its reading of \
             EDID 1.2's `81 0F` was NOT checked",
        );
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("edid_edge");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("v1.2-dmt-code.bin");
    std::fs::write(&file, &bytes).unwrap();
    let out = Command::new("edid-decode").arg(&file).output().expect("running edid-decode");
    let reference = edid_decode::read(&String::from_utf8_lossy(&out.stdout));
    let theirs: Vec<(u32, u32)> = reference.standard.iter().map(|m| (m.width, m.height)).collect();
    assert_eq!(theirs, [(1280, 800)], "edid-decode's DMT-code reading of EDID 1.2's 81 0F");
}
