//! Unit tests on synthetic files built here in the layouts the module follows (the real Debian
//! files are exercised by `tests/tests/firmware_real.rs`).

// Tests index and compute offsets on purpose, over inputs they build themselves.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::HashMap;
use std::string::{String, ToString};
use std::vec::Vec;

use super::*;
use crate::chip::{Chipset, GSP_FIRMWARE_VERSION};
use crate::platform::FirmwareSource;

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn round_up(value: u32, to: u32) -> u32 {
    value.div_ceil(to) * to
}

/// An HS ucode file laid out the way `extract-firmware-nouveau.py` lays out booter files.
struct HsFile {
    signatures: Vec<u8>,
    num_sigs: u32,
    patch_loc: u32,
    patch_sig: u32,
    meta: [u32; 3],
    load: [u32; 9],
    image: Vec<u8>,
}

impl HsFile {
    fn ga102_like() -> Self {
        let mut signatures = vec![0xA1; 384];
        signatures.extend(vec![0xB2; 384]);
        HsFile {
            signatures,
            num_sigs: 2,
            patch_loc: 0x810,
            patch_sig: 0,
            meta: [1, 1, 3],
            load: [0, 0x100, 0x800, 0x400, 1, 0x100, 0x600, 0x100, 0],
            image: (0..0xc00u32).map(|i| i as u8).collect(),
        }
    }

    fn build(&self) -> Vec<u8> {
        let sig_size = self.signatures.len() as u32;
        let data_offset = 120 + sig_size;
        let total = round_up(data_offset + self.image.len() as u32, 256);
        let mut file = words(&[NVFW_BIN_MAGIC, 1, total, 24, data_offset, self.image.len() as u32]);
        let patch_loc_offset = 60 + sig_size;
        file.extend(words(&[
            60,
            sig_size,
            patch_loc_offset,
            patch_loc_offset + 4,
            patch_loc_offset + 8,
            12,
            patch_loc_offset + 20,
            patch_loc_offset + 24,
            36,
        ]));
        file.extend(&self.signatures);
        file.extend(words(&[self.patch_loc, self.patch_sig]));
        file.extend(words(&self.meta));
        file.extend(words(&[self.num_sigs]));
        file.extend(words(&self.load));
        file.extend(&self.image);
        file
    }
}

/// A bootloader file as `extract-firmware-nouveau.py` writes it.
fn bootloader_file(desc: &[u32], image_size: usize) -> Vec<u8> {
    let desc = words(desc);
    let data_offset = 24 + desc.len() as u32;
    let total = round_up(data_offset + image_size as u32, 256);
    let mut file = words(&[NVFW_BIN_MAGIC, 1, total, 24, data_offset, image_size as u32]);
    file.extend(desc);
    file.extend((0..image_size).map(|i| (i * 7) as u8));
    file
}

/// The GA102 descriptor of the Debian file (version 5, 21 words).
const DESC_V5: [u32; 21] =
    [5, 0x4000, 0x458, 0x4458, 0x10, 0, 0, 0, 0, 0x800, 0x800, 0x1000, 0x1800, 0x2500, 1, 0, 0, 0, 0, 0x5000, 0];
/// The TU102 descriptor of the Debian file (version 4, 19 words).
const DESC_V4: [u32; 19] = [4, 0, 0x488, 0x488, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// A minimal ELF64 REL file for `machine` with the given sections, plus `.shstrtab`.
fn elf_file(machine: u16, sections: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    let mut placed = Vec::new();
    for (_, data) in sections {
        placed.push((64 + body.len() as u64, data.len() as u64));
        body.extend_from_slice(data);
    }
    let mut shstrtab = vec![0u8];
    let mut name_offsets = Vec::new();
    for (name, _) in sections.iter().copied().chain([(".shstrtab", &[][..])]) {
        name_offsets.push(shstrtab.len() as u32);
        shstrtab.extend_from_slice(name.as_bytes());
        shstrtab.push(0);
    }
    let shstrtab_offset = 64 + body.len() as u64;
    body.extend_from_slice(&shstrtab);
    while body.len() % 8 != 0 {
        body.push(0);
    }
    let shoff = 64 + body.len() as u64;
    let shnum = sections.len() as u16 + 2;

    let mut file = Vec::new();
    file.extend_from_slice(b"\x7fELF");
    file.extend_from_slice(&[2, 1, 1, 0]);
    file.extend_from_slice(&[0; 8]);
    file.extend_from_slice(&1u16.to_le_bytes()); // e_type: REL
    file.extend_from_slice(&machine.to_le_bytes());
    file.extend_from_slice(&1u32.to_le_bytes());
    file.extend_from_slice(&0u64.to_le_bytes()); // e_entry
    file.extend_from_slice(&0u64.to_le_bytes()); // e_phoff
    file.extend_from_slice(&shoff.to_le_bytes());
    file.extend_from_slice(&0u32.to_le_bytes()); // e_flags
    file.extend_from_slice(&64u16.to_le_bytes()); // e_ehsize
    file.extend_from_slice(&0u16.to_le_bytes()); // e_phentsize
    file.extend_from_slice(&0u16.to_le_bytes()); // e_phnum
    file.extend_from_slice(&64u16.to_le_bytes()); // e_shentsize
    file.extend_from_slice(&shnum.to_le_bytes());
    file.extend_from_slice(&(shnum - 1).to_le_bytes()); // e_shstrndx
    assert_eq!(file.len(), 64);
    file.extend_from_slice(&body);

    let mut header = |name: u32, kind: u32, offset: u64, size: u64| {
        file.extend_from_slice(&name.to_le_bytes());
        file.extend_from_slice(&kind.to_le_bytes());
        file.extend_from_slice(&0u64.to_le_bytes()); // flags
        file.extend_from_slice(&0u64.to_le_bytes()); // addr
        file.extend_from_slice(&offset.to_le_bytes());
        file.extend_from_slice(&size.to_le_bytes());
        file.extend_from_slice(&0u32.to_le_bytes()); // link
        file.extend_from_slice(&0u32.to_le_bytes()); // info
        file.extend_from_slice(&1u64.to_le_bytes()); // addralign
        file.extend_from_slice(&0u64.to_le_bytes()); // entsize
    };
    header(0, 0, 0, 0);
    for (i, (offset, size)) in placed.iter().enumerate() {
        header(name_offsets[i], 1, *offset, *size);
    }
    header(name_offsets[sections.len()], 3, shstrtab_offset, shstrtab.len() as u64);
    file
}

const EM_RISCV: u16 = 243;

fn version_bytes(version: &str) -> Vec<u8> {
    let mut v = version.as_bytes().to_vec();
    v.push(0);
    v
}

fn gsp_file(version: &[u8], signatures: &[&str]) -> Vec<u8> {
    let image = vec![0x13u8; 0x3000];
    let signature = vec![0x5Au8; 0x1000];
    let mut sections: Vec<(&str, &[u8])> = vec![(".fwimage", &image), (".fwversion", version)];
    for name in signatures {
        sections.push((name, &signature));
    }
    elf_file(EM_RISCV, &sections)
}

fn ga10x_like() -> Vec<u8> {
    gsp_file(
        &version_bytes(GSP_FIRMWARE_VERSION),
        &[".fwsignature_cc_gh100", ".fwsignature_gh100", ".fwsignature_ad10x", ".fwsignature_ga10x"],
    )
}

/// Every prefix and a byte flip at every offset below `flip_limit` must give a result, not a
/// panic; returns how many variants were refused.
fn never_panics(file: &[u8], flip_limit: usize, parse: impl Fn(&[u8]) -> bool) -> usize {
    let mut refused = 0;
    for cut in 0..file.len() {
        refused += usize::from(!parse(&file[..cut]));
    }
    let mut copy = file.to_vec();
    for at in 0..flip_limit.min(file.len()) {
        for mask in [0x01, 0x80, 0xFF] {
            copy[at] ^= mask;
            refused += usize::from(!parse(&copy));
            copy[at] ^= mask;
        }
    }
    refused
}

// ---------------------------------------------------------------------------------------------
// nvfw_bin_hdr

#[test]
fn bin_header_refuses_foreign_and_bad_headers() {
    assert_eq!(BinHeader::parse(&[]), Err(FirmwareError::Empty));
    assert_eq!(BinHeader::parse(b"MZ\x90\x00 and more"), Err(FirmwareError::BadBinMagic { found: 0x0090_5A4D }));
    let mut file = HsFile::ga102_like().build();
    file[4] = 2;
    assert_eq!(BinHeader::parse(&file), Err(FirmwareError::UnsupportedBinVersion { version: 2 }));
    let mut file = HsFile::ga102_like().build();
    file[12] = 8; // header_offset inside nvfw_bin_hdr
    assert!(matches!(BinHeader::parse(&file), Err(FirmwareError::BadField { field: "header_offset", .. })));
    let file = HsFile::ga102_like().build();
    assert!(matches!(
        BinHeader::parse(&file[..file.len() - 1]),
        Err(FirmwareError::Truncated { what: "ucode image", .. })
    ));
    assert!(matches!(BinHeader::parse(&file[..10]), Err(FirmwareError::Truncated { what: "nvfw_bin_hdr", .. })));
}

// ---------------------------------------------------------------------------------------------
// HS booter

#[test]
fn booter_fields_and_signature_selection() {
    let spec = HsFile::ga102_like();
    let file = spec.build();
    let booter = BooterFirmware::parse(&file).expect("synthetic booter parses");
    assert_eq!(booter.bin.data_offset, 120 + 768);
    assert_eq!(booter.hs.sig_prod_offset, 60);
    assert_eq!(booter.hs.sig_prod_size, 768);
    assert_eq!(booter.num_signatures, 2);
    assert_eq!(booter.signature_size(), 384);
    assert_eq!(booter.patch_location, 0x810);
    assert_eq!(booter.meta, HsPatchMeta { fuse_version: 1, engine_id_mask: 1, ucode_id: 3 });
    assert_eq!(booter.load.app_code_size, 0x600);
    assert_eq!(booter.signature_dmem_offset(), 0x10);
    assert_eq!(booter.image(), &spec.image[..]);
    // Fuse version 1 takes signature 0, fuse version 0 signature 1; 2 has none.
    assert_eq!(booter.signature_for_fuse_version(1).unwrap(), &[0xA1; 384][..]);
    assert_eq!(booter.signature_for_fuse_version(0).unwrap(), &[0xB2; 384][..]);
    assert_eq!(
        booter.signature_for_fuse_version(2),
        Err(FirmwareError::NoSignatureForFuseVersion { fuse_version: 2, signatures: 2 })
    );
    let patched = booter.patched_image(0).unwrap();
    assert_eq!(&patched[0x810..0x810 + 384], &[0xB2; 384][..]);
    assert_eq!(&patched[..0x810], &spec.image[..0x810]);
    assert_eq!(&patched[0x810 + 384..], &spec.image[0x810 + 384..]);
}

#[test]
fn booter_with_one_signature_uses_it_for_any_fuse_version() {
    let mut spec = HsFile::ga102_like();
    spec.signatures = vec![0x77; 16];
    spec.num_sigs = 1;
    let file = spec.build();
    let booter = BooterFirmware::parse(&file).unwrap();
    assert_eq!(booter.signature_for_fuse_version(5).unwrap(), &[0x77; 16][..]);
}

#[test]
fn booter_refuses_what_nvidia_refuses() {
    type Change = fn(&mut HsFile);
    let cases: Vec<(Change, &str)> = vec![
        (|f| f.load[4] = 2, "num_apps"),
        (|f| f.patch_sig = 1, "patch_sig[0]"),
        (|f| f.num_sigs = 0, "num_sigs"),
        (|f| f.num_sigs = 5, "sig_prod_size"),
        (|f| f.load[6] = 0, "app_code_size"),
        (|f| f.load[3] = 0, "os_data_size"),
        (|f| f.patch_loc = 0x700, "patch_loc[0]"),
    ];
    for (change, field) in cases {
        let mut spec = HsFile::ga102_like();
        change(&mut spec);
        let err = BooterFirmware::parse(&spec.build()).unwrap_err();
        assert!(matches!(err, FirmwareError::BadField { field: f, .. } if f == field), "{field}: {err}");
    }
    // The patch location leaves no room for a whole signature.
    let mut spec = HsFile::ga102_like();
    spec.patch_loc = 0xc00 - 384;
    let err = BooterFirmware::parse(&spec.build()).unwrap_err();
    assert!(matches!(err, FirmwareError::OutOfRange { what: "signature patch location", .. }), "{err}");
    // Application code past the image.
    let mut spec = HsFile::ga102_like();
    spec.load[6] = 0xc00;
    let err = BooterFirmware::parse(&spec.build()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "application code (0xc00 bytes at 0x100) runs past the end of the ucode image (0xc00 bytes)"
    );
}

#[test]
fn booter_never_panics_on_cut_or_flipped_files() {
    let file = HsFile::ga102_like().build();
    let refused = never_panics(&file, 120 + 768 + 16, |b| BooterFirmware::parse(b).is_ok());
    assert!(refused >= file.len(), "every strict prefix is refused");
}

// ---------------------------------------------------------------------------------------------
// GSP bootloader

#[test]
fn bootloader_v5_and_v4_descriptors() {
    let file = bootloader_file(&DESC_V5, 0x5000);
    let bl = BootloaderFirmware::parse(&file).unwrap();
    assert_eq!(bl.desc_size, 84);
    assert_eq!(bl.bin.data_offset, 0x6c);
    assert_eq!(bl.desc.version, 5);
    assert_eq!((bl.desc.bootloader_offset, bl.desc.bootloader_size), (0x4000, 0x458));
    assert_eq!((bl.desc.monitor_code_offset, bl.desc.monitor_code_size), (0x1800, 0x2500));
    assert!(bl.desc.monitor_enabled);
    assert_eq!(bl.desc.fb_reserved_size, Some(0x5000));
    assert_eq!(bl.desc.signed_as_code, Some(false));
    assert_eq!(bl.image().len(), 0x5000);

    let file = bootloader_file(&DESC_V4, 0x1000);
    let bl = BootloaderFirmware::parse(&file).unwrap();
    assert_eq!(bl.desc_size, 76);
    assert_eq!(bl.desc.version, 4);
    assert_eq!(bl.desc.bootloader_param_offset, 0x488);
    assert_eq!(bl.desc.fb_reserved_size, None);
    assert_eq!(bl.desc.signed_as_code, None);
    assert!(!bl.desc.monitor_enabled);
}

#[test]
fn bootloader_refuses_bad_descriptors() {
    let mut desc = DESC_V5;
    desc[0] = 6;
    assert!(matches!(
        BootloaderFirmware::parse(&bootloader_file(&desc, 0x5000)),
        Err(FirmwareError::BadField { field: "version", value: 6, .. })
    ));
    let mut desc = DESC_V5;
    desc[2] = 0;
    assert!(matches!(
        BootloaderFirmware::parse(&bootloader_file(&desc, 0x5000)),
        Err(FirmwareError::BadField { field: "bootloaderSize", .. })
    ));
    // Monitor code past the end of the image.
    let mut desc = DESC_V5;
    desc[13] = 0x4000;
    assert_eq!(
        BootloaderFirmware::parse(&bootloader_file(&desc, 0x5000)).unwrap_err().to_string(),
        "monitor code (0x4000 bytes at 0x1800) runs past the end of the bootloader image (0x5000 bytes)"
    );
    // A descriptor of neither known size.
    assert!(matches!(
        BootloaderFirmware::parse(&bootloader_file(&DESC_V5[..20], 0x5000)),
        Err(FirmwareError::BadField { value: 80, .. })
    ));
}

#[test]
fn bootloader_never_panics_on_cut_or_flipped_files() {
    let file = bootloader_file(&DESC_V5, 0x5000);
    let refused = never_panics(&file, 0x6c, |b| BootloaderFirmware::parse(b).is_ok());
    assert!(refused >= file.len());
}

// ---------------------------------------------------------------------------------------------
// GSP-RM ELF

#[test]
fn gsp_elf_lists_sections_and_picks_the_signature() {
    let file = ga10x_like();
    let fw = GspFirmware::parse(&file, ".fwsignature_ad10x").unwrap();
    assert_eq!(fw.version(), "535.261.03");
    assert_eq!(fw.image_size(), 0x3000);
    assert_eq!(fw.image(), &[0x13; 0x3000][..]);
    assert_eq!(fw.signature_section(), ".fwsignature_ad10x");
    assert_eq!(fw.signature().len(), 0x1000);
    let names: Vec<&str> = fw.elf().sections().iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            ".fwimage",
            ".fwversion",
            ".fwsignature_cc_gh100",
            ".fwsignature_gh100",
            ".fwsignature_ad10x",
            ".fwsignature_ga10x",
            ".shstrtab"
        ]
    );
    assert_eq!(fw.elf().sections()[0].index, 1);
    assert_eq!(fw.elf().sections()[0].offset, Some(64));
    assert_eq!(fw.elf().sections()[0].size, 0x3000);
    assert_eq!(fw.elf().image_offset(), 64);
    let cc = fw.elf().signature(".fwsignature_cc_gh100").unwrap();
    assert!(cc.is_confidential_computing());
    assert_eq!(cc.family(), "cc_gh100");
    assert_eq!(cc.chips(), [Chipset::GH100]);
    let ga10x = fw.elf().signature(".fwsignature_ga10x").unwrap();
    assert_eq!(ga10x.chips(), [Chipset::GA102, Chipset::GA103, Chipset::GA104, Chipset::GA106, Chipset::GA107]);

    let fw = GspFirmware::for_chip(&file, Chipset::GH100).unwrap();
    assert_eq!(fw.signature_section(), ".fwsignature_gh100");
    assert_eq!(
        GspFirmware::for_chip(&file, Chipset::TU102).unwrap_err(),
        FirmwareError::MissingSection { name: ".fwsignature_tu10x".to_string() }
    );
    assert_eq!(
        GspFirmware::for_chip(&file, Chipset::GB202).unwrap_err(),
        FirmwareError::NoGspFirmware { chip: Chipset::GB202 }
    );
}

#[test]
fn gsp_version_must_be_the_pinned_one() {
    let file = gsp_file(&version_bytes("535.113.01"), &[".fwsignature_ga10x"]);
    let err = GspFirmware::parse(&file, ".fwsignature_ga10x").unwrap_err();
    assert_eq!(err, FirmwareError::VersionMismatch { found: "535.113.01".to_string(), expected: "535.261.03" });
    assert_eq!(
        err.to_string(),
        "GSP firmware version mismatch: the file is 535.113.01, the driver is bound to 535.261.03"
    );
    // The container is still readable for tools.
    assert_eq!(GspElf::parse(&file).unwrap().version_string(), Some("535.113.01"));

    // Without its NUL, with a trailing extra byte, or not text: malformed.
    for version in [&b"535.261.03"[..], b"535.261.03\0\0", b"\xff\xfe\0", b""] {
        let file = gsp_file(version, &[".fwsignature_ga10x"]);
        let err = GspFirmware::parse(&file, ".fwsignature_ga10x").unwrap_err();
        assert_eq!(err, FirmwareError::MalformedVersion { size: version.len() as u64 }, "{version:?}");
    }
}

#[test]
fn gsp_container_errors() {
    let version = version_bytes(GSP_FIRMWARE_VERSION);
    let sig = [1u8; 16];
    let image = [2u8; 16];
    let no_image = elf_file(EM_RISCV, &[(".fwversion", &version), (".fwsignature_ga10x", &sig)]);
    assert_eq!(GspElf::parse(&no_image).unwrap_err(), FirmwareError::MissingSection { name: ".fwimage".to_string() });
    let no_version = elf_file(EM_RISCV, &[(".fwimage", &image)]);
    assert_eq!(
        GspElf::parse(&no_version).unwrap_err(),
        FirmwareError::MissingSection { name: ".fwversion".to_string() }
    );
    let twice = elf_file(EM_RISCV, &[(".fwimage", &image), (".fwversion", &version), (".fwimage", &image)]);
    assert_eq!(GspElf::parse(&twice).unwrap_err(), FirmwareError::DuplicateSection { name: ".fwimage".to_string() });
    let empty_image = elf_file(EM_RISCV, &[(".fwimage", &[]), (".fwversion", &version)]);
    assert_eq!(GspElf::parse(&empty_image).unwrap_err(), FirmwareError::EmptySection { name: ".fwimage".to_string() });
    let empty_sig = elf_file(EM_RISCV, &[(".fwimage", &image), (".fwversion", &version), (".fwsignature_ga10x", &[])]);
    assert_eq!(
        GspFirmware::parse(&empty_sig, ".fwsignature_ga10x").unwrap_err(),
        FirmwareError::EmptySection { name: ".fwsignature_ga10x".to_string() }
    );
    let x86 = elf_file(62, &[(".fwimage", &image), (".fwversion", &version)]);
    assert_eq!(GspElf::parse(&x86).unwrap_err(), FirmwareError::NotRiscv { machine: 62 });
    assert!(matches!(GspElf::parse(b"not an elf"), Err(FirmwareError::Elf { .. })));
    assert_eq!(GspElf::parse(&[]), Err(FirmwareError::Empty));
}

#[test]
fn gsp_never_panics_on_cut_or_flipped_files() {
    let file = ga10x_like();
    let image_end = 64 + 0x3000;
    let parse = |b: &[u8]| GspFirmware::parse(b, ".fwsignature_ga10x").is_ok();
    // Every cut of the file, and flips in the ELF header.
    let refused = never_panics(&file, 64, parse);
    assert!(refused >= file.len());
    // Flips in everything after the image: version, signatures, names, section headers.
    let mut copy = file.clone();
    for at in image_end..file.len() {
        for mask in [0x01, 0x80, 0xFF] {
            copy[at] ^= mask;
            let _ = GspElf::parse(&copy);
            let _ = GspFirmware::parse(&copy, ".fwsignature_ga10x");
            copy[at] ^= mask;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Kind detection

#[test]
fn detects_kinds() {
    assert_eq!(FirmwareKind::detect(&ga10x_like()), Ok(FirmwareKind::GspElf));
    assert_eq!(FirmwareKind::detect(&HsFile::ga102_like().build()), Ok(FirmwareKind::Booter));
    assert_eq!(FirmwareKind::detect(&bootloader_file(&DESC_V5, 0x5000)), Ok(FirmwareKind::Bootloader));
    assert_eq!(FirmwareKind::detect(&bootloader_file(&DESC_V4, 0x1000)), Ok(FirmwareKind::Bootloader));
    assert_eq!(FirmwareKind::detect(&[]), Err(FirmwareError::Empty));
    assert_eq!(FirmwareKind::detect(b"PK\x03\x04"), Err(FirmwareError::UnknownFormat { first_word: 0x0403_4B50 }));
    assert_eq!(FirmwareKind::detect(b"\xde"), Err(FirmwareError::UnknownFormat { first_word: 0xde }));
}

// ---------------------------------------------------------------------------------------------
// Bundle

#[test]
fn module_names_follow_the_flat_scheme() {
    use BootImage::*;
    assert_eq!(boot_module_name(Chipset::GA104, BooterLoad).as_deref(), Some("ga102-booter_load.bin"));
    assert_eq!(boot_module_name(Chipset::TU117, BooterUnload).as_deref(), Some("tu116-booter_unload.bin"));
    assert_eq!(boot_module_name(Chipset::TU117, Bootloader).as_deref(), Some("tu102-bootloader.bin"));
    assert_eq!(boot_module_name(Chipset::TU106, BooterLoad).as_deref(), Some("tu102-booter_load.bin"));
    assert_eq!(boot_module_name(Chipset::AD107, Bootloader).as_deref(), Some("ad102-bootloader.bin"));
    assert_eq!(boot_module_name(Chipset::GA100, BooterLoad).as_deref(), Some("ga100-booter_load.bin"));
    assert_eq!(boot_module_name(Chipset::GH100, BooterLoad), None);
    assert_eq!(boot_module_name(Chipset::GH100, Bootloader).as_deref(), Some("gh100-bootloader.bin"));
    assert_eq!(boot_module_name(Chipset::GB202, Bootloader), None);

    assert_eq!(
        FirmwareBundle::module_names(Chipset::GA102).unwrap(),
        ["gsp_ga10x.bin", "ga102-booter_load.bin", "ga102-booter_unload.bin", "ga102-bootloader.bin"]
    );
    assert_eq!(FirmwareBundle::module_names(Chipset::GH100).unwrap(), ["gsp_ga10x.bin", "gh100-bootloader.bin"]);
    assert_eq!(
        FirmwareBundle::module_names(Chipset::GB100),
        Err(FirmwareError::NoGspFirmware { chip: Chipset::GB100 })
    );

    for (path, name) in [
        ("nvidia/ga102/gsp/booter_load-535.113.01.bin", Some("ga102-booter_load.bin")),
        ("/lib/firmware/nvidia/tu116/gsp/booter_unload-535.113.01.bin", Some("tu116-booter_unload.bin")),
        ("ad102/gsp/bootloader-535.113.01.bin", Some("ad102-bootloader.bin")),
        ("lib/firmware/nvidia/535.261.03/gsp_ga10x.bin", Some("gsp_ga10x.bin")),
        ("gsp_tu10x.bin", Some("gsp_tu10x.bin")),
        ("nvidia/ga102/gsp/gsp-535.113.01.bin", None),
        ("nvidia/ga102/gsp/booter_load.bin", None),
        ("nvidia/ga102/gr/booter_load-535.113.01.bin", None),
        ("nvidia/GA102/gsp/booter_load-535.113.01.bin", None),
        ("booter_load-535.113.01.bin", None),
        ("", None),
    ] {
        assert_eq!(module_name_for_path(path).as_deref(), name, "{path}");
    }
}

struct Files(HashMap<String, Vec<u8>>);

impl FirmwareSource for Files {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(Vec::as_slice)
    }
}

#[test]
fn bundle_loads_every_file_and_names_what_is_missing() {
    let mut files = Files(HashMap::new());
    files.0.insert("gsp_ga10x.bin".into(), ga10x_like());
    let err = FirmwareBundle::load(&files, Chipset::GA104).unwrap_err();
    assert_eq!(err.to_string(), "firmware file ga102-booter_load.bin (booter load ucode for GA104) is missing");
    files.0.insert("ga102-booter_load.bin".into(), HsFile::ga102_like().build());
    files.0.insert("ga102-booter_unload.bin".into(), HsFile::ga102_like().build());
    let err = files.firmware_bundle(Chipset::GA104).unwrap_err();
    assert!(matches!(&err, FirmwareError::MissingFile { name, .. } if name == "ga102-bootloader.bin"));
    // A file of the wrong kind is refused, naming the file.
    files.0.insert("ga102-bootloader.bin".into(), HsFile::ga102_like().build());
    let err = files.firmware_bundle(Chipset::GA104).unwrap_err();
    assert!(err.to_string().starts_with("ga102-bootloader.bin: nvfw_bin_hdr.data_offset - header_offset"), "{err}");

    files.0.insert("ga102-bootloader.bin".into(), bootloader_file(&DESC_V5, 0x5000));
    let bundle = files.firmware_bundle(Chipset::GA104).unwrap();
    assert_eq!(bundle.chip, Chipset::GA104);
    assert_eq!(bundle.gsp.signature_section(), ".fwsignature_ga10x");
    assert!(bundle.booter_load.is_some() && bundle.booter_unload.is_some());
    assert_eq!(bundle.bootloader.desc.version, 5);

    // Hopper: no booter; the bootloader slot (GSP-FMC) is required.
    let err = files.firmware_bundle(Chipset::GH100).unwrap_err();
    assert!(matches!(&err, FirmwareError::MissingFile { name, .. } if name == "gh100-bootloader.bin"));
    files.0.insert("gh100-bootloader.bin".into(), bootloader_file(&DESC_V5, 0x5000));
    let bundle = files.firmware_bundle(Chipset::GH100).unwrap();
    assert!(bundle.booter_load.is_none() && bundle.booter_unload.is_none());
    assert_eq!(bundle.gsp.signature_section(), ".fwsignature_gh100");

    // A GSP-RM image of another release is refused for the bundle, naming the file.
    files.0.insert("gsp_ga10x.bin".into(), gsp_file(&version_bytes("535.113.01"), &[".fwsignature_ga10x"]));
    let err = files.firmware_bundle(Chipset::GA104).unwrap_err();
    assert_eq!(
        err.to_string(),
        "gsp_ga10x.bin: GSP firmware version mismatch: the file is 535.113.01, the driver is bound to 535.261.03"
    );
    let missing: String = FirmwareBundle::load(&Files(HashMap::new()), Chipset::TU102).unwrap_err().to_string();
    assert_eq!(missing, "firmware file gsp_tu10x.bin (GSP-RM firmware for TU102) is missing");
}
