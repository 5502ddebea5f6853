//! Unit tests of the display module: formula timings against VESA's DMT values, and corrupt
//! input against the typed errors.

#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)] // tests index their own fixtures

use alloc::vec::Vec;

use super::timing::cvt::{cvt, CvtBlanking, CvtRequest};
use super::timing::dmt::{self, Blanking};
use super::timing::gtf::{gtf, GtfCurve};
use super::{parse, parse_strict, EdidErrorKind};

fn req(width: u32, height: u32, refresh_hz: u32, blanking: CvtBlanking) -> CvtRequest {
    CvtRequest {
        width,
        height,
        refresh_hz: f64::from(refresh_hz),
        blanking,
        interlaced: false,
        margins: false,
        video_optimized: false,
    }
}

/// DMT's reduced-blanking entries whose aspect ratio CVT can name (CVT 1.2 table 3-2; 1360x768
/// cannot be named, so its vertical sync differs) are CVT-RB timings (DMT 1.13 marks them
/// so): our CVT-RB must reproduce each exactly.
#[test]
fn cvt_rb_matches_dmt_reduced_entries() {
    let mut checked = 0;
    for d in dmt::DMT.iter().filter(|d| d.blanking == Blanking::Reduced && d.timing.h_front == 48) {
        if super::timing::cvt::vsync_for_aspect(d.timing.h_active, d.timing.v_active) == 10 {
            continue;
        }
        let t = d.timing;
        let ours = cvt(&req(t.h_active, t.v_active, d.refresh_hz, CvtBlanking::ReducedV1)).unwrap();
        assert_eq!(ours, t, "DMT {:#04x}", d.id);
        checked += 1;
    }
    assert_eq!(checked, 22, "{checked}");
}

/// DMT entries that DMT 1.13 lists as CVT normal-blanking timings (1.31MA etc.).
#[test]
fn cvt_normal_matches_dmt() {
    for id in [0x17u8, 0x1C, 0x2A, 0x2F, 0x3A, 0x45, 0x4D] {
        let d = dmt::by_id(id).unwrap();
        let t = d.timing;
        assert_eq!(cvt(&req(t.h_active, t.v_active, d.refresh_hz, CvtBlanking::Normal)).unwrap(), t, "DMT {id:#04x}");
    }
}

/// DMT 0x57 is CVT-RB2 (4096x2160@60): the RB2 formula gives its pixel clock, totals and
/// vertical timing. (The DMT entry places the 80-pixel horizontal blanking as 8/56/16; the
/// CVT 1.2 RB2 formula as 8/32/40.)
#[test]
fn cvt_rb2_matches_dmt() {
    let d = dmt::by_id(0x57).unwrap().timing;
    let ours = cvt(&req(4096, 2160, 60, CvtBlanking::ReducedV2)).unwrap();
    assert_eq!((ours.pixel_clock_khz, ours.h_total(), ours.h_front), (d.pixel_clock_khz, d.h_total(), d.h_front));
    assert_eq!((ours.v_front, ours.v_sync, ours.v_back, ours.v_total()), (d.v_front, d.v_sync, d.v_back, d.v_total()));
}

/// GTF values edid-decode prints for standard timings in the corpus (e.g. 1152x864@60:
/// 53.700 kHz, 81.624 MHz).
#[test]
fn gtf_matches_published_values() {
    for (w, h, r, khz) in
        [(1152, 864, 60, 81_624), (640, 480, 100, 43_163), (1024, 768, 120, 139_054), (1920, 1080, 75, 220_637)]
    {
        let t = gtf(w, h, f64::from(r), false, false, GtfCurve::DEFAULT, false).unwrap();
        assert_eq!(t.pixel_clock_khz, khz, "{w}x{h}@{r}");
    }
}

#[test]
fn dmt_table_has_every_id() {
    assert_eq!(dmt::DMT.len(), 88);
    for (i, d) in dmt::DMT.iter().enumerate() {
        assert_eq!(usize::from(d.id), i + 1);
        // Interlaced 0x0F is named by its frame rate (43 Hz); refresh_hz() is the field rate.
        let fields = if d.timing.interlaced { 2 } else { 1 };
        assert!(d.timing.refresh_hz().abs_diff(d.refresh_hz * fields) <= 1, "DMT {:#04x}", d.id);
    }
}

/// A valid 2-block EDID built by hand: a 1.4 base with one DTD and range limits, and a CTA
/// block with a video data block and one DTD.
pub(crate) fn sample() -> Vec<u8> {
    let mut b = alloc::vec![0u8; 256];
    b[..8].copy_from_slice(&super::edid::HEADER);
    b[8..10].copy_from_slice(&[0x4C, 0x2D]); // SAM
    b[18] = 1;
    b[19] = 4;
    b[20] = 0xA5;
    // DTD 1920x1080@60 148.5 MHz.
    b[54..72].copy_from_slice(&[
        0x02, 0x3A, 0x80, 0x18, 0x71, 0x38, 0x2D, 0x40, 0x58, 0x2C, 0x45, 0x00, 0, 0, 0, 0, 0, 0x1E,
    ]);
    b[72..90].copy_from_slice(&[0, 0, 0, 0xFD, 0, 48, 75, 30, 90, 20, 1, 0x0A, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20]);
    b[90..108].copy_from_slice(&[0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    b[108..126].copy_from_slice(&[0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    b[126] = 1;
    let c = &mut b[128..256];
    c[..4].copy_from_slice(&[0x02, 0x03, 8, 0x40]);
    c[4..8].copy_from_slice(&[0x43, 0x90, 0x04, 0x03]);
    c[8..26]
        .copy_from_slice(&[0x01, 0x1D, 0x00, 0x72, 0x51, 0xD0, 0x1E, 0x20, 0x6E, 0x28, 0x55, 0, 0, 0, 0, 0, 0, 0x1E]);
    fix_checksums(&mut b);
    b
}

pub(crate) fn fix_checksums(b: &mut [u8]) {
    for block in b.chunks_exact_mut(128) {
        let sum = super::edid::checksum(&block[..127]);
        block[127] = 0u8.wrapping_sub(sum);
    }
}

#[test]
fn sample_parses_cleanly() {
    let e = parse_strict(&sample()).unwrap();
    assert_eq!(e.base.manufacturer_str(), "SAM");
    assert_eq!(e.cta_vics(), [16, 4, 3]);
    let d = e.detailed_timings();
    assert_eq!(d.len(), 2);
    assert_eq!(
        (d[0].1.h_active, d[0].1.v_active, d[0].1.pixel_clock_khz, d[0].1.refresh_hz()),
        (1920, 1080, 148_500, 60)
    );
    assert_eq!((d[1].1.h_active, d[1].1.v_active, d[1].1.pixel_clock_khz), (1280, 720, 74_250));
    let r = e.base.range_limits().unwrap();
    assert_eq!((r.min_v_hz, r.max_v_hz, r.min_h_khz, r.max_h_khz, r.max_pixel_clock_mhz), (48, 75, 30, 90, 200));
    // Preferred mode first; a head that cannot drive 148.5 MHz gets the next largest mode.
    assert_eq!(super::mode::select_mode(&e, 600_000).unwrap().h_active, 1920);
    let small = super::mode::select_mode(&e, 100_000).unwrap();
    assert_eq!((small.h_active, small.v_active), (1280, 720));
}

#[test]
fn truncated_at_every_length_is_typed() {
    let s = sample();
    for len in 0..s.len() {
        match parse(&s[..len]) {
            Err(e) => assert_eq!(e.kind, EdidErrorKind::Truncated { needed: 128, have: len }, "{len}"),
            Ok(e) => {
                assert!(len >= 128, "{len}");
                assert!(
                    e.errors
                        .iter()
                        .any(|x| matches!(x.kind, EdidErrorKind::MissingExtensions { declared: 1, present: 0 })),
                    "{len}"
                );
            }
        }
    }
}

#[test]
fn bad_header_and_checksums() {
    let mut s = sample();
    s[1] = 0;
    assert_eq!(parse(&s).unwrap_err().kind, EdidErrorKind::BadHeader);
    let mut s = sample();
    s[127] = s[127].wrapping_add(1);
    s[255] = s[255].wrapping_add(2);
    let e = parse(&s).unwrap();
    let sums: Vec<_> = e.errors.iter().map(|x| (x.block, x.kind)).collect();
    assert_eq!(sums, [(0, EdidErrorKind::Checksum { sum: 1 }), (1, EdidErrorKind::Checksum { sum: 2 })]);
    assert_eq!(parse_strict(&s).unwrap_err().kind, EdidErrorKind::Checksum { sum: 1 });
}

#[test]
fn extension_count_beyond_input() {
    let mut s = sample();
    s[126] = 3;
    fix_checksums(&mut s);
    let e = parse(&s).unwrap();
    assert_eq!(e.errors[0].kind, EdidErrorKind::MissingExtensions { declared: 3, present: 1 });
    assert_eq!(e.errors[0].block, 2);
}

#[test]
fn bad_descriptor_and_data_block_lengths() {
    // A DTD whose blanking is smaller than front porch plus sync.
    let mut s = sample();
    s[54 + 3] = 0x01;
    s[54 + 4] &= 0xF0;
    fix_checksums(&mut s);
    let e = parse(&s).unwrap();
    assert_eq!(
        (e.errors[0].block, e.errors[0].offset, e.errors[0].kind),
        (0, 54, EdidErrorKind::BadDescriptor { tag: 0 })
    );
    // Range limits with minimum above maximum.
    let mut s = sample();
    s[72 + 5] = 100;
    fix_checksums(&mut s);
    assert_eq!(parse(&s).unwrap().errors[0].kind, EdidErrorKind::BadDescriptor { tag: 0xFD });
    // A data block running past the DTD offset.
    let mut s = sample();
    s[128 + 4] = 0x4F;
    fix_checksums(&mut s);
    assert_eq!(parse(&s).unwrap().errors[0].kind, EdidErrorKind::BadDataBlock { tag: 2, len: 15 });
    // A DTD offset beyond the block.
    let mut s = sample();
    s[128 + 2] = 200;
    fix_checksums(&mut s);
    let e = parse(&s).unwrap();
    assert_eq!(
        (e.errors[0].block, e.errors[0].offset, e.errors[0].kind),
        (1, 2, EdidErrorKind::BadDtdOffset { offset: 200 })
    );
}

#[test]
fn displayid_section_length_overflow() {
    let mut s = sample();
    let c = &mut s[128..256];
    c.fill(0);
    c[..6].copy_from_slice(&[0x70, 0x20, 200, 0x03, 0x00, 0x00]);
    fix_checksums(&mut s);
    let e = parse(&s).unwrap();
    assert_eq!(e.errors[0].kind, EdidErrorKind::SectionOverflow { declared: 200, room: 121 });
    // A type VII block (2.0, 1 kHz units) inside a well-formed section.
    let mut s = sample();
    let c = &mut s[128..256];
    c.fill(0);
    let mut sec = alloc::vec![0x20u8, 23, 0x03, 0x00, 0x22, 0x00, 20];
    // 3840x2160@60 CVT-RB2: 533.250 MHz, h 3840+8+32+40, v 2160+48+8+6.
    let px: u32 = 533_250 - 1;
    sec.extend_from_slice(&px.to_le_bytes()[..3]);
    sec.push(0x80);
    for v in [3840u16 - 1, 80 - 1, (8 - 1) | 0x8000, 32 - 1, 2160 - 1, 62 - 1, 48 - 1, 8 - 1] {
        sec.extend_from_slice(&v.to_le_bytes());
    }
    let sum = super::edid::checksum(&sec);
    sec.push(0u8.wrapping_sub(sum));
    c[1..1 + sec.len()].copy_from_slice(&sec);
    c[0] = 0x70;
    fix_checksums(&mut s);
    let e = parse_strict(&s).unwrap();
    let d = e.detailed_timings();
    assert_eq!(d.len(), 2);
    let t = d[1].1;
    assert_eq!(
        (t.h_active, t.h_front, t.h_sync, t.h_back, t.v_active, t.v_front, t.v_sync, t.v_back),
        (3840, 8, 32, 40, 2160, 48, 8, 6)
    );
    assert_eq!((t.pixel_clock_khz, t.h_sync_positive, t.v_sync_positive), (533_250, true, false));
}
