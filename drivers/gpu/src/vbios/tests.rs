//! Unit tests over a small synthetic ROM laid out like the real ones (x86 image with BIT, EFI
//! image, 0xE0 image with the falcon ucode table and FWSEC). Real ROMs are tested in
//! `tests/tests/vbios_real.rs`.

// Tests index and compute offsets on purpose, over inputs they build themselves.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::fwsec::{AppInterfaceEntry, FwsecDescriptor, FwsecKind};

const X86: usize = 0x000; // x86 image, 0x400 bytes
const EFI: usize = 0x400; // EFI image, 0x200 bytes
const EXT: usize = 0x600; // 0xE0 image, 0x800 bytes
const ROM_SIZE: usize = 0xE00;
const BIT_AT: usize = 0x80;
const BIOSDATA_AT: usize = 0x100;
const FALCON_DATA_AT: usize = 0x130;
const TABLE_AT: usize = 0x680;
const DESC_AT: usize = 0x700;
/// expansion ROM offset = first 0xE0 image - size of the x86 image.
const EXP_OFF: usize = EXT - 0x400;
const IMEM_SIZE: u32 = 0x100;
const DMEM_SIZE: u32 = 0x100;
const INTERFACE_AT: u32 = 0x10;
const DMAP_AT: u32 = 0x40;

fn put16(rom: &mut [u8], at: usize, v: u16) {
    rom[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
fn put32(rom: &mut [u8], at: usize, v: u32) {
    rom[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Writes a ROM header + PCIR (+ NPDE) at `at`.
#[allow(clippy::too_many_arguments)]
fn put_image(
    rom: &mut [u8],
    at: usize,
    sig: u16,
    pcir_ptr: u16,
    pcir_sig: &[u8; 4],
    code: u8,
    blocks: u16,
    last: u8,
    npde_last: Option<u8>,
) {
    put16(rom, at, sig);
    put16(rom, at + 0x18, pcir_ptr);
    let p = at + usize::from(pcir_ptr);
    rom[p..p + 4].copy_from_slice(pcir_sig);
    put16(rom, p + 4, 0x10DE);
    put16(rom, p + 6, 0x2803);
    put16(rom, p + 0xA, 0x18);
    rom[p + 0xD..p + 0x10].copy_from_slice(&[0, 0, 3]);
    put16(rom, p + 0x10, blocks);
    rom[p + 0x14] = code;
    rom[p + 0x15] = last;
    if let Some(npde_last) = npde_last {
        let e = (p + 0x18 + 0xF) & !0xF;
        rom[e..e + 4].copy_from_slice(b"NPDE");
        put16(rom, e + 4, 0x101);
        put16(rom, e + 6, 0x14);
        put16(rom, e + 8, blocks);
        rom[e + 0xA] = npde_last;
    }
}

fn fix_bit_checksum(rom: &mut [u8]) {
    rom[BIT_AT + 11] = 0;
    let sum = rom[BIT_AT..BIT_AT + 12].iter().fold(0u8, |a, b| a.wrapping_add(*b));
    rom[BIT_AT + 11] = 0u8.wrapping_sub(sum);
}

fn pattern(len: u32, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect()
}

/// A synthetic ROM with a FWSEC descriptor of `desc_version` (2 or 3).
fn synthetic(desc_version: u8) -> Vec<u8> {
    let mut rom = vec![0u8; ROM_SIZE];
    put_image(&mut rom, X86, 0xAA55, 0x40, b"PCIR", 0x00, 2, 0, Some(0));
    put_image(&mut rom, EFI, 0xAA55, 0x1C, b"PCIR", 0x03, 1, 0x80, Some(0));
    put_image(&mut rom, EXT, 0x4E56, 0x20, b"NPDS", 0xE0, 4, 0, Some(0x80));

    // BIT: header, then 'B' and 'p' tokens.
    rom[BIT_AT..BIT_AT + 6].copy_from_slice(&[0xFF, 0xB8, b'B', b'I', b'T', 0]);
    put16(&mut rom, BIT_AT + 6, 0x0100);
    rom[BIT_AT + 8] = 12;
    rom[BIT_AT + 9] = 6;
    rom[BIT_AT + 10] = 2;
    let t = BIT_AT + 12;
    rom[t..t + 6].copy_from_slice(&[b'B', 2, 0x25, 0, BIOSDATA_AT as u8, (BIOSDATA_AT >> 8) as u8]);
    rom[t + 6..t + 12].copy_from_slice(&[b'p', 2, 4, 0, FALCON_DATA_AT as u8, (FALCON_DATA_AT >> 8) as u8]);
    fix_bit_checksum(&mut rom);
    put32(&mut rom, BIOSDATA_AT, 0x9506_3440);
    rom[BIOSDATA_AT + 4] = 0x38;

    // Falcon ucode table: an unused slot, FWSEC_DBG (bad pointer), FWSEC_PROD.
    put32(&mut rom, FALCON_DATA_AT, (TABLE_AT - EXP_OFF) as u32);
    rom[TABLE_AT..TABLE_AT + 6].copy_from_slice(&[1, 6, 6, 3, 3, 44]);
    let e = TABLE_AT + 6;
    rom[e..e + 2].copy_from_slice(&[0, 0]);
    rom[e + 6..e + 8].copy_from_slice(&[0x45, 7]);
    put32(&mut rom, e + 8, 0x00FF_0000);
    rom[e + 12..e + 14].copy_from_slice(&[0x85, 7]);
    put32(&mut rom, e + 14, (DESC_AT - EXP_OFF) as u32);

    let (image, dmem) = match desc_version {
        2 => {
            put32(&mut rom, DESC_AT, (60 << 16) | (2 << 8) | 1);
            let f = [
                0x200,
                0x200,
                0,
                INTERFACE_AT,
                0,
                IMEM_SIZE,
                0,
                0,
                IMEM_SIZE,
                IMEM_SIZE,
                0,
                DMEM_SIZE,
                IMEM_SIZE,
                DMEM_SIZE,
            ];
            for (i, v) in f.iter().enumerate() {
                put32(&mut rom, DESC_AT + 4 + 4 * i, *v);
            }
            let image = DESC_AT + 60;
            (image, image + IMEM_SIZE as usize)
        }
        _ => {
            let size = 44 + 2 * 384;
            put32(&mut rom, DESC_AT, (size << 16) | (3 << 8) | 1);
            let f = [0x300, 0x20, INTERFACE_AT, 0, IMEM_SIZE, 0, 0, DMEM_SIZE];
            for (i, v) in f.iter().enumerate() {
                put32(&mut rom, DESC_AT + 4 + 4 * i, *v);
            }
            put16(&mut rom, DESC_AT + 36, 0x400); // engine id mask
            rom[DESC_AT + 38] = 9; // ucode id
            rom[DESC_AT + 39] = 2; // signature count
            put16(&mut rom, DESC_AT + 40, 0b101); // signatures for fuse versions 0 and 2
            rom[DESC_AT + 44..DESC_AT + 44 + 384].fill(0xA0);
            rom[DESC_AT + 44 + 384..DESC_AT + 44 + 768].fill(0xA2);
            let image = DESC_AT + size as usize;
            (image, image + IMEM_SIZE as usize)
        }
    };
    rom[image..image + IMEM_SIZE as usize].copy_from_slice(&pattern(IMEM_SIZE, 1));
    rom[dmem..dmem + DMEM_SIZE as usize].copy_from_slice(&pattern(DMEM_SIZE, 2));
    // Interface table and DMEM mapper inside DMEM.
    let i = dmem + INTERFACE_AT as usize;
    rom[i..i + 4].copy_from_slice(&[1, 4, 8, 2]);
    put32(&mut rom, i + 4, 4);
    put32(&mut rom, i + 8, DMAP_AT);
    put32(&mut rom, i + 12, 5);
    put32(&mut rom, i + 16, 0xF0);
    let m = dmem + DMAP_AT as usize;
    rom[m..m + 64].fill(0);
    rom[m..m + 4].copy_from_slice(b"DMAP");
    put16(&mut rom, m + 4, 3);
    put16(&mut rom, m + 6, 0x40);
    put32(&mut rom, m + 8, 0xC0);
    put32(&mut rom, m + 12, 0x40);
    put32(&mut rom, m + 16, 0x0100_0000);
    put32(&mut rom, m + 20, 0x100);
    rom
}

fn dmem_at(rom: &[u8]) -> usize {
    let v = Vbios::from_bytes(rom).expect("synthetic ROM parses");
    v.fwsec(FwsecKind::Prod).expect("FWSEC").dmem_offset as usize
}

#[test]
fn synthetic_v3_parses() {
    let rom = synthetic(3);
    let v = Vbios::from_bytes(&rom).expect("parse");
    assert_eq!(v.rom_offset(), 0);
    assert!(v.ifr().is_none());
    assert_eq!(v.rom().len(), ROM_SIZE);
    let images: Vec<_> = v.images().iter().map(|i| (i.offset, i.size, i.code_type, i.last)).collect();
    assert_eq!(
        images,
        [
            (0x000, 0x400, CodeType::X86PcAt, false),
            (0x400, 0x200, CodeType::Efi, false),
            (0x600, 0x800, CodeType::NvidiaFwsec, true),
        ]
    );
    // The EFI image says "last" in PCIR, but its NPDE (long enough to carry the private
    // indicator) says not.
    assert_eq!(v.images()[1].pcir_last_image, 0x80);
    assert_eq!(v.images()[2].rom_signature, 0x4E56);
    assert_eq!(&v.images()[2].pcir_signature, b"NPDS");
    assert_eq!(v.expansion_rom_offset(), EXP_OFF as u32);

    assert_eq!(v.bit().offset, BIT_AT as u32);
    let tokens: Vec<_> = v.bit().tokens.iter().map(|t| (t.id, t.data_version, t.data_size, t.data_offset)).collect();
    assert_eq!(tokens, [(b'B', 2, 0x25, BIOSDATA_AT as u32), (b'p', 2, 4, FALCON_DATA_AT as u32)]);
    assert_eq!(v.bit().tokens[1].name(), Some("FALCON_DATA"));
    let version = v.version().expect("version");
    assert_eq!(alloc::format!("{version}"), "95.06.34.40.38");

    let table = v.falcon_ucode_table().expect("table");
    assert_eq!(table.offset, TABLE_AT as u32);
    assert_eq!(table.entries.len(), 3);
    assert_eq!(table.entries[2].application_name(), Some("FWSEC_PROD"));
    assert_eq!(table.entries[2].desc_offset, Some(DESC_AT as u32));

    let fwsec = v.fwsec(FwsecKind::Prod).expect("fwsec");
    assert_eq!(fwsec.descriptor.version(), 3);
    assert_eq!(fwsec.desc_offset, DESC_AT as u32);
    assert_eq!(fwsec.desc_size, 44 + 768);
    let image = DESC_AT as u32 + 44 + 768;
    assert_eq!(fwsec.image_offset, image);
    assert_eq!(fwsec.imem_offset, image);
    assert_eq!(fwsec.dmem_offset, image + IMEM_SIZE);
    assert_eq!(fwsec.imem(), &pattern(IMEM_SIZE, 1)[..]);
    assert_eq!(fwsec.dmem().len(), DMEM_SIZE as usize);
    assert_eq!(fwsec.signature_count(), 2);
    assert_eq!(fwsec.signatures().len(), 768);
    assert_eq!(fwsec.signature_for_fuse_version(0).map(|s| s[0]), Some(0xA0));
    assert_eq!(fwsec.signature_for_fuse_version(1), None);
    assert_eq!(fwsec.signature_for_fuse_version(2).map(|s| s[0]), Some(0xA2));
    assert_eq!(fwsec.signature_for_fuse_version(40), None);
    assert_eq!(
        fwsec.interface.entries,
        [AppInterfaceEntry { id: 4, dmem_offset: DMAP_AT }, AppInterfaceEntry { id: 5, dmem_offset: 0xF0 },]
    );
    let m = fwsec.dmem_mapper;
    assert_eq!((m.dmem_offset, m.version, m.size), (DMAP_AT, 3, 0x40));
    assert_eq!((m.cmd_in_buffer_offset, m.cmd_in_buffer_size), (0xC0, 0x40));
    assert_eq!(m.init_cmd_dmem_offset(), DMAP_AT + 0x2C);
    assert_eq!(fwsec.dmem_mapper_rom_offset(), image + IMEM_SIZE + DMAP_AT);

    // The debug entry's descriptor pointer leads outside the ROM: a typed error, not a panic.
    assert!(matches!(v.fwsec(FwsecKind::Debug), Err(VbiosError::Truncated { .. })));
}

#[test]
fn synthetic_v2_parses() {
    let rom = synthetic(2);
    let v = Vbios::from_bytes(&rom).expect("parse");
    let fwsec = v.fwsec(FwsecKind::Prod).expect("fwsec");
    let FwsecDescriptor::V2(d) = fwsec.descriptor else { panic!("expected v2") };
    assert_eq!((d.imem_load_size, d.dmem_offset, d.dmem_load_size), (IMEM_SIZE, IMEM_SIZE, DMEM_SIZE));
    assert_eq!(fwsec.image_offset, DESC_AT as u32 + 60);
    assert_eq!(fwsec.dmem_offset, DESC_AT as u32 + 60 + IMEM_SIZE);
    assert_eq!(
        fwsec.dmem(),
        &{
            let mut d = pattern(DMEM_SIZE, 2);
            let rom_dmem = &rom[fwsec.dmem_offset as usize..][..DMEM_SIZE as usize];
            d.copy_from_slice(rom_dmem);
            d
        }[..]
    );
    assert_eq!(fwsec.signature_count(), 0);
    assert!(fwsec.signatures().is_empty());
    assert_eq!(fwsec.signature_for_fuse_version(0), None);
    assert_eq!(fwsec.dmem_mapper.cmd_in_buffer_offset, 0xC0);
}

/// BAR0 of a fake GPU whose PROM window serves `prom`.
struct FakeBar0 {
    prom: Vec<u8>,
    reads: core::cell::Cell<usize>,
}

impl FakeBar0 {
    fn new(prom: Vec<u8>) -> Self {
        Self { prom, reads: core::cell::Cell::new(0) }
    }
}

impl Bar0Read for FakeBar0 {
    fn read_u32(&self, offset: u32) -> u32 {
        assert!(offset.is_multiple_of(4), "PROM reads are 32-bit aligned");
        assert!((NV_PROM_DATA_BASE..NV_PROM_DATA_BASE + PROM_WINDOW_SIZE).contains(&offset));
        self.reads.set(self.reads.get() + 1);
        let at = (offset - NV_PROM_DATA_BASE) as usize;
        let mut word = [0xFFu8; 4];
        for (i, b) in word.iter_mut().enumerate() {
            if let Some(v) = self.prom.get(at + i) {
                *b = *v;
            }
        }
        u32::from_le_bytes(word)
    }
}

#[test]
fn prom_and_file_give_the_same_vbios() {
    let rom = synthetic(3);
    let from_file = Vbios::from_bytes(&rom).expect("file");
    let bar0 = FakeBar0::new(rom.clone());
    let from_prom = Vbios::from_prom(&bar0).expect("prom");
    assert_eq!(from_prom.rom(), from_file.rom());
    assert_eq!(from_prom.images(), from_file.images());
    assert_eq!(from_prom.bit(), from_file.bit());
    assert_eq!(
        from_prom.fwsec(FwsecKind::Prod).expect("fwsec").imem(),
        from_file.fwsec(FwsecKind::Prod).expect("fwsec").imem()
    );
    // The chain walk plus one pass over the chain, not byte-by-byte word reads.
    assert!(bar0.reads.get() < ROM_SIZE / 4 + 64, "{} reads", bar0.reads.get());
}

fn with_ifr(version: u8) -> (Vec<u8>, u32) {
    let rom = synthetic(3);
    let (mut out, rom_offset) = match version {
        3 => {
            let mut p = vec![0u8; 0x2000];
            put32(&mut p, 8, 0x40); // FIXED2: total data size
            put32(&mut p, 0x40, 0x100); // flash status offset
            p[0x1100..0x1104].copy_from_slice(b"RFRD");
            put32(&mut p, 0x1108, 0x2000);
            (p, 0x2000)
        }
        _ => {
            let mut p = vec![0u8; 0x1000];
            put32(&mut p, 0x24, 0x1000); // extended section at 0x20, ROM offset at +4
            (p, 0x1000)
        }
    };
    out[0..4].copy_from_slice(b"NVGI");
    put32(&mut out, 4, (0x20 << 16) | (u32::from(version) << 8));
    out.extend_from_slice(&rom);
    (out, rom_offset)
}

#[test]
fn nvgi_header_is_skipped() {
    for version in [1, 2, 3] {
        let (data, rom_offset) = with_ifr(version);
        let v = Vbios::from_bytes(&data).expect("parse behind NVGI");
        assert_eq!(v.rom_offset(), rom_offset);
        assert_eq!(v.ifr(), Some(&IfrHeader { version, rom_offset }));
        assert_eq!(v.rom(), &synthetic(3)[..]);
        assert!(v.fwsec(FwsecKind::Prod).is_ok());
        let bar0 = FakeBar0::new(data);
        assert_eq!(Vbios::from_prom(&bar0).expect("prom").rom_offset(), rom_offset);
    }
}

#[test]
fn nvgi_errors() {
    let (mut data, _) = with_ifr(4);
    data[5] = 4;
    assert_eq!(Vbios::from_bytes(&data).unwrap_err(), VbiosError::UnsupportedIfrVersion { version: 4 });
    let (mut data, _) = with_ifr(3);
    data[0x1100] = b'X';
    assert!(matches!(Vbios::from_bytes(&data), Err(VbiosError::NoRomDirectory { offset: 0x1100, .. })));
    let (mut data, _) = with_ifr(2);
    put32(&mut data, 0x24, 0x1002);
    assert_eq!(Vbios::from_bytes(&data).unwrap_err(), VbiosError::MisalignedRomOffset { offset: 0x1002 });
    let (mut data, _) = with_ifr(2);
    put32(&mut data, 0x24, 0x0FF0_0000);
    assert!(matches!(Vbios::from_bytes(&data), Err(VbiosError::Truncated { .. })));
}

#[test]
fn empty_and_foreign_inputs() {
    assert_eq!(Vbios::from_bytes(&[]).unwrap_err(), VbiosError::Empty);
    assert!(matches!(Vbios::from_bytes(&[0x55]), Err(VbiosError::Truncated { .. })));
    assert_eq!(Vbios::from_bytes(b"hello, world").unwrap_err(), VbiosError::NoRomSignature { found: 0x6568 });

    let mut rom = synthetic(3);
    rom[0] = 0x56; // flipped signature byte
    assert!(matches!(Vbios::from_bytes(&rom), Err(VbiosError::NoRomSignature { .. })));

    let mut rom = synthetic(3);
    put16(&mut rom, 0x44, 0x8086);
    assert_eq!(Vbios::from_bytes(&rom).unwrap_err(), VbiosError::NotNvidia { vendor: 0x8086, device: 0x2803 });

    let mut rom = synthetic(3);
    rom[0x40..0x44].copy_from_slice(b"PCIX");
    assert!(matches!(Vbios::from_bytes(&rom), Err(VbiosError::BadPcirSignature { image: 0, pcir: 0x40, .. })));

    let mut rom = synthetic(3);
    put16(&mut rom, EXT, 0x1234);
    assert_eq!(
        Vbios::from_bytes(&rom).unwrap_err(),
        VbiosError::BadImageSignature { image: EXT as u32, found: 0x1234 }
    );
}

#[test]
fn bad_lengths_are_errors() {
    // Zero length (NPDE wins over PCIR): the walk would never advance.
    let mut rom = synthetic(3);
    put16(&mut rom, 0x68, 0);
    assert_eq!(Vbios::from_bytes(&rom).unwrap_err(), VbiosError::EmptyImage { image: 0 });

    // Huge length: beyond the PROM window.
    let mut rom = synthetic(3);
    put16(&mut rom, 0x68, 0xFFFF);
    assert!(matches!(Vbios::from_bytes(&rom), Err(VbiosError::RomTooLarge { .. })));

    // Longer than the file but inside the window.
    let mut rom = synthetic(3);
    put16(&mut rom, 0x68, 0x100);
    assert!(matches!(Vbios::from_bytes(&rom), Err(VbiosError::Truncated { what: "ROM image", .. })));

    // No last-image bit anywhere, every image one block: the walk stops at the bound.
    let mut rom = vec![0u8; 0x200 * (MAX_IMAGES + 4)];
    for n in 0..MAX_IMAGES + 4 {
        put_image(&mut rom, n * 0x200, 0xAA55, 0x40, b"PCIR", 0, 1, 0, None);
    }
    assert_eq!(Vbios::from_bytes(&rom).unwrap_err(), VbiosError::TooManyImages { limit: MAX_IMAGES });
}

#[test]
fn truncation_anywhere_is_an_error() {
    let rom = synthetic(3);
    for len in (1..ROM_SIZE).step_by(7).chain([2, 0x18, 0x40, 0x5F, 0x400, 0x600, ROM_SIZE - 1]) {
        let err = Vbios::from_bytes(&rom[..len]).unwrap_err();
        assert!(matches!(err, VbiosError::Truncated { .. }), "len {len:#x}: {err}");
    }
}

#[test]
fn bit_errors() {
    let mut rom = synthetic(3);
    rom[BIT_AT + 11] ^= 1;
    assert_eq!(Vbios::from_bytes(&rom).unwrap_err(), VbiosError::NoBitHeader);

    let mut rom = synthetic(3);
    rom[BIT_AT + 9] = 4;
    fix_bit_checksum(&mut rom);
    assert!(matches!(Vbios::from_bytes(&rom), Err(VbiosError::BadBitHeader { token_size: 4, .. })));

    let mut rom = synthetic(3);
    rom[BIT_AT + 9] = 255;
    rom[BIT_AT + 10] = 255;
    fix_bit_checksum(&mut rom);
    assert!(matches!(Vbios::from_bytes(&rom), Err(VbiosError::Truncated { what: "BIT token table", .. })));

    // No BIOSDATA token: no version, still a VBIOS.
    let mut rom = synthetic(3);
    rom[BIT_AT + 12] = b'Z';
    assert_eq!(Vbios::from_bytes(&rom).expect("parse").version(), None);

    // No falcon data token.
    let mut rom = synthetic(3);
    rom[BIT_AT + 18] = b'q';
    assert_eq!(Vbios::from_bytes(&rom).expect("parse").falcon_ucode_table().unwrap_err(), VbiosError::NoFalconData);
}

#[test]
fn falcon_table_and_fwsec_errors() {
    let parse = |rom: &[u8]| Vbios::from_bytes(rom).expect("chain and BIT parse");

    let mut rom = synthetic(3);
    rom[TABLE_AT] = 2;
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::BadFalconUcodeTable { version: 2, .. })));

    let mut rom = synthetic(3);
    rom[TABLE_AT + 6 + 12] = 0x86;
    assert_eq!(parse(&rom).fwsec(FwsecKind::Prod).unwrap_err(), VbiosError::NoFwsec { application_id: 0x85 });

    let mut rom = synthetic(3);
    rom[DESC_AT] = 0; // version-available flag cleared
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::FwsecDescVersionUnavailable { .. })));

    let mut rom = synthetic(3);
    rom[DESC_AT + 1] = 4;
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::UnsupportedFwsecDesc { version: 4, .. })));

    let mut rom = synthetic(3);
    put32(&mut rom, DESC_AT + 20, 0x1000); // IMEM larger than the image
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::FwsecLayout { .. })));

    let mut rom = synthetic(3);
    put32(&mut rom, DESC_AT + 4, 0x00FF_FFFF); // stored size past the ROM
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::Truncated { .. })));

    let mut rom = synthetic(3);
    rom[DESC_AT + 39] = 3; // three signatures, room for two
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::FwsecLayout { .. })));

    let mut rom = synthetic(3);
    let dmem = dmem_at(&rom);
    rom[dmem + DMAP_AT as usize] = b'X';
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::BadDmemMapper { offset: DMAP_AT, .. })));

    let mut rom = synthetic(3);
    rom[dmem + INTERFACE_AT as usize + 3] = 1;
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::BadInterfaceTable { .. })));

    let mut rom = synthetic(3);
    put32(&mut rom, dmem + INTERFACE_AT as usize + 4, 9);
    assert_eq!(parse(&rom).fwsec(FwsecKind::Prod).unwrap_err(), VbiosError::NoDmemMapper);

    let mut rom = synthetic(3);
    put32(&mut rom, dmem + DMAP_AT as usize + 8, 0xF0); // command-in buffer past DMEM
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::FwsecLayout { .. })));

    let mut rom = synthetic(2);
    put32(&mut rom, DESC_AT + 20, 0x80); // v2 IMEM physical base past the code block
    assert!(matches!(parse(&rom).fwsec(FwsecKind::Prod), Err(VbiosError::FwsecLayout { .. })));
}

/// Every single-byte corruption of the synthetic ROM parses or fails with an error; none panics.
#[test]
fn byte_flips_never_panic() {
    for version in [2, 3] {
        let rom = synthetic(version);
        for at in 0..rom.len() {
            for value in [0x00, 0xFF, rom[at] ^ 0x80] {
                let mut bad = rom.clone();
                bad[at] = value;
                if let Ok(v) = Vbios::from_bytes(&bad) {
                    let _ = v.fwsec(FwsecKind::Prod);
                    let _ = v.fwsec(FwsecKind::Debug);
                }
            }
        }
    }
}

#[test]
fn errors_print_on_one_line() {
    let errors = [
        VbiosError::Empty,
        VbiosError::Truncated { what: "ROM image", offset: 0x600, len: 0x800, size: 0x700 },
        VbiosError::NotNvidia { vendor: 0x8086, device: 0x1234 },
        VbiosError::NoBitHeader,
    ];
    for e in errors {
        let text = alloc::format!("{e}");
        assert!(!text.is_empty() && !text.contains('\n'), "{text}");
    }
}
