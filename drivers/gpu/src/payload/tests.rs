//! Synthetic-byte tests: layouts, typed errors, and no panic on any truncation or byte flip.
//! Real cubins and fatbins (ptxas, libnvfatbin) are tested in `tests/tests/payload_real.rs`.

// Tests index and compute offsets on purpose, over inputs they build themselves.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::fatbin::{Compression, EntryFlags};
use super::*;
use alloc::vec;

/// A minimal ELF64 header for EM_CUDA, ABI 7, sm_90, with an empty section table except the
/// null section and a `.shstrtab`.
fn tiny_cubin(machine: u16, abi_version: u8, e_flags: u32) -> Vec<u8> {
    let shstrtab = b"\0.shstrtab\0";
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2; // ELFCLASS64
    elf[5] = 1; // little endian
    elf[6] = 1; // EV_CURRENT
    elf[7] = 0x33;
    elf[8] = abi_version;
    elf[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    elf[18..20].copy_from_slice(&machine.to_le_bytes());
    elf[20..24].copy_from_slice(&1u32.to_le_bytes());
    elf[48..52].copy_from_slice(&e_flags.to_le_bytes());
    elf[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    elf[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    let strtab_off = elf.len() as u64;
    elf.extend_from_slice(shstrtab);
    while !elf.len().is_multiple_of(8) {
        elf.push(0);
    }
    let shoff = elf.len() as u64;
    elf[40..48].copy_from_slice(&shoff.to_le_bytes());
    elf[60..62].copy_from_slice(&2u16.to_le_bytes()); // e_shnum
    elf[62..64].copy_from_slice(&1u16.to_le_bytes()); // e_shstrndx
    elf.extend_from_slice(&[0u8; 64]);
    let mut sh = [0u8; 64];
    sh[0..4].copy_from_slice(&1u32.to_le_bytes());
    sh[4..8].copy_from_slice(&3u32.to_le_bytes()); // SHT_STRTAB
    sh[24..32].copy_from_slice(&strtab_off.to_le_bytes());
    sh[32..40].copy_from_slice(&(shstrtab.len() as u64).to_le_bytes());
    elf.extend_from_slice(&sh);
    elf
}

fn entry(kind: u16, sm: u32, flags: u64, name: &[u8], stored: &[u8], uncompressed: u64) -> Vec<u8> {
    let mut payload = stored.to_vec();
    while !payload.len().is_multiple_of(8) {
        payload.push(0);
    }
    let mut h = vec![0u8; 0x50];
    h[0..2].copy_from_slice(&kind.to_le_bytes());
    h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
    h[4..8].copy_from_slice(&0x50u32.to_le_bytes());
    h[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    if flags & (EntryFlags::COMPRESSED_LZ4 | EntryFlags::COMPRESSED_ZSTD) != 0 {
        h[16..20].copy_from_slice(&(stored.len() as u32).to_le_bytes());
        h[0x38..0x40].copy_from_slice(&uncompressed.to_le_bytes());
    }
    h[0x18..0x1a].copy_from_slice(&8u16.to_le_bytes());
    h[0x1a..0x1c].copy_from_slice(&7u16.to_le_bytes());
    h[0x1c..0x20].copy_from_slice(&sm.to_le_bytes());
    h[0x20..0x24].copy_from_slice(&0x40u32.to_le_bytes());
    h[0x24..0x28].copy_from_slice(&(name.len() as u32).to_le_bytes());
    h[0x28..0x30].copy_from_slice(&flags.to_le_bytes());
    h[0x40..0x40 + name.len()].copy_from_slice(name);
    h.extend_from_slice(&payload);
    h
}

fn container(entries: &[Vec<u8>]) -> Vec<u8> {
    let body: Vec<u8> = entries.concat();
    let mut out = Vec::new();
    out.extend_from_slice(&fatbin::FATBIN_MAGIC.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

const PTX: &[u8] = b".version 7.8\n.target sm_90\n.address_size 64\n";

fn sample() -> Vec<u8> {
    let mut ptx = PTX.to_vec();
    ptx.push(0);
    // An LZ4 block of one literal-only sequence: token 0x50 = 5 literals, "hello".
    container(&[
        entry(2, 90, 0x11, b"a.cubin", &tiny_cubin(190, 7, 0x5a055a), 0),
        entry(1, 90, 0x11, b"a.ptx", &ptx, 0),
        entry(1, 80, 0x11 | EntryFlags::COMPRESSED_LZ4, b"z", b"\x50hello", 5),
    ])
}

#[test]
fn fatbin_entries_decode() {
    let data = sample();
    let fb = Fatbin::parse(&data).unwrap();
    assert_eq!(fb.entries.len(), 3);
    assert_eq!(fb.entries[0].kind, EntryKind::Elf);
    assert_eq!((fb.entries[0].sm, fb.entries[0].version), (90, (7, 8)));
    assert_eq!(fb.entries[0].name, b"a.cubin");
    assert!(fb.entries[0].flags.contains(EntryFlags::ADDRESS_64 | EntryFlags::HOST_LINUX));
    assert_eq!(fb.entries[1].ptx_text().unwrap(), PTX);
    assert_eq!(fb.entries[2].compression, Compression::Lz4);
    assert_eq!(&*fb.entries[2].payload().unwrap(), b"hello");

    let module = Module::from_fatbin(&fb).unwrap();
    assert_eq!(module.cubins.len(), 1);
    assert_eq!(module.cubins[0].sm, 90);
    assert!(matches!(module.select(Chipset::GH100), Ok(Image::Sass(c)) if c.sm == 90));
    // GA100 (sm_80) has no SASS: the sm_80 PTX is picked, not the sm_90 one.
    assert!(matches!(module.select(Chipset::GA100), Ok(Image::Ptx(p)) if p.sm == 80));
    let err = module.select(Chipset::TU102).unwrap_err();
    assert!(matches!(err, Error::WrongArchitecture { sm: 75, .. }), "{err}");
    assert!(err.to_string().contains("TU102"));
}

#[test]
fn fatbin_corruptions_are_typed() {
    assert!(matches!(Fatbin::parse(&[]), Err(Error::Truncated { .. })));
    assert!(matches!(Fatbin::parse(&[0u8; 16]), Err(Error::BadMagic { .. })));
    let mut wrapper = sample();
    wrapper[..4].copy_from_slice(&fatbin::FATBINC_MAGIC.to_le_bytes());
    assert!(matches!(Fatbin::parse(&wrapper), Err(Error::Corrupt { .. })));
    let zstd = container(&[entry(2, 90, 0x11 | EntryFlags::COMPRESSED_ZSTD, b"z", b"\x28\xb5\x2f\xfd", 100)]);
    let fb = Fatbin::parse(&zstd).unwrap();
    let err = fb.entries[0].payload().unwrap_err();
    assert_eq!(err, Error::UnsupportedCompression { entry: 0, codec: "zstd" });
    assert!(err.to_string().contains("compressed entry not supported"));
    // LZ4 that claims more output than it has.
    let short = container(&[entry(1, 90, 0x11 | EntryFlags::COMPRESSED_LZ4, b"z", b"\x50hello", 6)]);
    assert!(matches!(Fatbin::parse(&short).unwrap().entries[0].payload(), Err(Error::Decompress { .. })));
}

#[test]
fn cubin_header_checks() {
    assert_eq!(Cubin::parse(&tiny_cubin(190, 7, 0x5a055a)).unwrap().sm, 90);
    assert_eq!(Cubin::parse(&tiny_cubin(190, 8, 0x6006402)).unwrap().sm, 100);
    assert_eq!(Cubin::parse(&tiny_cubin(62, 7, 0)).unwrap_err(), Error::NotCuda { machine: 62 });
    assert!(matches!(Cubin::parse(&tiny_cubin(190, 9, 0)), Err(Error::UnsupportedVersion { .. })));
    assert!(matches!(Cubin::parse(b"\x7fELF\x01"), Err(Error::Elf { .. })));
    assert!(matches!(Module::load(b"garbage!"), Err(Error::BadMagic { .. })));
    assert_eq!(Module::load(PTX).unwrap().ptx[0].sm, 90);
}

#[test]
fn sm_decoding_by_abi() {
    use cubin::{decode_sm, ElfAbi};
    for (abi, flags, sm) in [
        (ElfAbi::V7, 0x4b054b, 75),
        (ElfAbi::V7, 0x560556, 86),
        (ElfAbi::V7, 0x5a055a, 90),
        (ElfAbi::V8, 0x6006402, 100),
        (ElfAbi::V8, 0x6007802, 120),
    ] {
        assert_eq!(decode_sm(abi, flags), sm);
    }
}

/// Parses `data` every way the driver would; errors are fine, panics are not.
fn exercise(data: &[u8]) {
    if let Ok(fb) = Fatbin::parse(data) {
        for e in &fb.entries {
            let _ = e.payload();
            let _ = e.ptx_text();
        }
        if let Ok(m) = Module::from_fatbin(&fb) {
            for &chip in Chipset::ALL {
                let _ = m.select(chip);
            }
        }
    }
    let _ = Module::load(data);
    let _ = nvinfo::records(data);
}

#[test]
fn truncations_and_byte_flips_never_panic() {
    let data = sample();
    for len in 0..data.len() {
        exercise(&data[..len]);
    }
    let cubin = tiny_cubin(190, 7, 0x5a055a);
    for len in 0..cubin.len() {
        exercise(&cubin[..len]);
    }
    // Every byte, flipped to a few values (a deterministic fuzz loop).
    for i in 0..data.len() {
        for v in [0x00, 0xff, 0x80, data[i] ^ 0x01, data[i].wrapping_add(0x40)] {
            let mut d = data.clone();
            d[i] = v;
            exercise(&d);
        }
    }
}
