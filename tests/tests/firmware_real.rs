//! The firmware parsers (`nvgpu::firmware`) against the real Debian firmware files and NVIDIA's
//! 535.261.03 sources, all under `target/real-data/` (`NVGPU_REAL_DATA` overrides).
//!
//! Expected values were decoded independently of these parsers: section tables with binutils'
//! `readelf -S -W`, and the booter/bootloader headers with a throwaway Python `struct.unpack`
//! decoder following `nouveau/extract-firmware-nouveau.py`. The facts the parsers declare
//! (section names, structure sizes and field orders, which chip runs which ucode) are compared
//! with NVIDIA's source text.
//!
//! Missing data is a failure, never a skip: run `sudo scripts/fetch-real-data.sh` first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nvgpu::chip::{Chipset, GSP_FIRMWARE_VERSION};
use nvgpu::firmware::{
    boot_image_chip, module_name_for_path, BootImage, BooterFirmware, BootloaderFirmware, FirmwareBundle,
    FirmwareError, FirmwareKind, GspElf, GspFirmware, GSP_CC_SIGNATURE_SECTION_PREFIX, GSP_IMAGE_SECTION,
    GSP_SIGNATURE_SECTION_PREFIX, GSP_VERSION_SECTION, HS_PATCH_META_SIZE, NVFW_BIN_HDR_SIZE, NVFW_BIN_MAGIC,
    NVFW_HS_HEADER_V2_SIZE, NVFW_HS_LOAD_HEADER_V2_SIZE, RM_RISCV_UCODE_DESC_SHORT_SIZE, RM_RISCV_UCODE_DESC_SIZE,
};
use nvgpu::hw::headers;
use nvgpu::platform::FirmwareSource;

// ---------------------------------------------------------------------------------------------
// Where the data is.

fn data_root() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "missing real data: {} ({what}).\n\
         This test never passes without the real files: run `sudo scripts/fetch-real-data.sh` \
         from the workspace root, or set NVGPU_REAL_DATA.",
        path.display()
    );
    path
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}): run `sudo scripts/fetch-real-data.sh` from the workspace root", path.display())
    })
}

fn gsp_path(name: &str) -> PathBuf {
    require(
        data_root().join("firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03").join(name),
        "Debian firmware-nvidia-gsp 535.261.03",
    )
}

fn graphics_dir() -> PathBuf {
    require(
        data_root().join("firmware-nvidia-graphics/lib/firmware/nvidia"),
        "Debian firmware-nvidia-graphics 20250410-2~bpo12+1",
    )
}

fn boot_path(chip: &str, image: &str) -> PathBuf {
    require(
        graphics_dir().join(chip).join("gsp").join(format!("{image}-535.113.01.bin")),
        "Debian firmware-nvidia-graphics 20250410-2~bpo12+1",
    )
}

fn source_file(relative: &str) -> String {
    let path = require(
        data_root().join("open-gpu-kernel-modules-535.261.03").join(relative),
        "NVIDIA open-gpu-kernel-modules 535.261.03",
    );
    String::from_utf8_lossy(&read(&path)).into_owned()
}

// ---------------------------------------------------------------------------------------------
// GSP-RM ELF.

/// (name, offset, size) as `readelf -S -W` prints them.
type SectionRow = (&'static str, u64, u64);

const GA10X_SECTIONS: &[SectionRow] = &[
    (".fwimage", 0x40, 0x2477000),
    (".fwversion", 0x2477040, 0xb),
    (".fwsignature_cc_gh100", 0x247704b, 0x1000),
    (".fwsignature_gh100", 0x247804b, 0x1000),
    (".fwsignature_ad10x", 0x247904b, 0x1000),
    (".fwsignature_ga10x", 0x247a04b, 0x1000),
    (".symtab", 0x247b050, 0xf0),
    (".strtab", 0x247b140, 0x1de),
    (".shstrtab", 0x247b31e, 0x7e),
];

const TU10X_SECTIONS: &[SectionRow] = &[
    (".fwimage", 0x40, 0x16c1350),
    (".fwversion", 0x16c1390, 0xb),
    (".fwsignature_ga100", 0x16c139b, 0x1000),
    (".fwsignature_tu11x", 0x16c239b, 0x1000),
    (".fwsignature_tu10x", 0x16c339b, 0x1000),
    (".symtab", 0x16c43a0, 0xd8),
    (".strtab", 0x16c4478, 0x1f9),
    (".shstrtab", 0x16c4671, 0x68),
];

fn check_gsp_file(name: &str, sections: &[SectionRow], signatures: &[&str]) {
    let bytes = read(&gsp_path(name));
    assert_eq!(FirmwareKind::detect(&bytes), Ok(FirmwareKind::GspElf));
    let elf = GspElf::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let listed: Vec<(&str, u64, u64)> =
        elf.sections().iter().map(|s| (s.name, s.offset.unwrap_or(u64::MAX), s.size)).collect();
    assert_eq!(listed, sections, "{name}: section table");
    assert_eq!(elf.version_string(), Some(GSP_FIRMWARE_VERSION));
    assert_eq!(elf.version_bytes(), b"535.261.03\0");
    assert_eq!(elf.image_offset(), sections[0].1);
    assert_eq!(elf.image().len() as u64, sections[0].2);
    let found: Vec<&str> = elf.signatures().iter().map(|s| s.section).collect();
    assert_eq!(found, signatures, "{name}: signature sections");
    for signature in elf.signatures() {
        assert_eq!(signature.data.len(), 0x1000, "{name}: {}", signature.section);
    }

    // Every chip that takes this file parses it, with its own 0x1000-byte signature.
    let chips: Vec<Chipset> = Chipset::ALL.iter().copied().filter(|c| c.gsp_firmware_file() == Some(name)).collect();
    assert!(!chips.is_empty());
    for chip in chips {
        let fw = GspFirmware::for_chip(&bytes, chip).unwrap_or_else(|e| panic!("{name} for {chip:?}: {e}"));
        assert_eq!(fw.version(), "535.261.03");
        assert_eq!(fw.image_size(), sections[0].2);
        assert_eq!(Some(fw.signature_section()), chip.gsp_signature_section());
        assert_eq!(fw.signature().len(), 0x1000);
        assert!(fw.elf().signature(fw.signature_section()).is_some());
    }
}

#[test]
fn gsp_ga10x_parses() {
    check_gsp_file(
        "gsp_ga10x.bin",
        GA10X_SECTIONS,
        &[".fwsignature_cc_gh100", ".fwsignature_gh100", ".fwsignature_ad10x", ".fwsignature_ga10x"],
    );
    // Hopper in confidential-computing mode takes the cc_ signature.
    let bytes = read(&gsp_path("gsp_ga10x.bin"));
    let fw = GspFirmware::parse(&bytes, ".fwsignature_cc_gh100").expect("cc signature");
    assert_eq!(fw.signature().len(), 0x1000);
}

#[test]
fn gsp_tu10x_parses() {
    check_gsp_file(
        "gsp_tu10x.bin",
        TU10X_SECTIONS,
        &[".fwsignature_ga100", ".fwsignature_tu11x", ".fwsignature_tu10x"],
    );
    let bytes = read(&gsp_path("gsp_tu10x.bin"));
    assert_eq!(
        GspFirmware::for_chip(&bytes, Chipset::GA102).unwrap_err(),
        FirmwareError::MissingSection { name: ".fwsignature_ga10x".into() }
    );
}

#[test]
fn another_release_is_refused() {
    // A real GSP-RM image of release 535.113.01 (Debian's firmware-nvidia-graphics).
    let path = require(
        graphics_dir().join("ga102/gsp/gsp-535.113.01.bin"),
        "Debian firmware-nvidia-graphics 20250410-2~bpo12+1",
    );
    let bytes = read(&path);
    let err = GspFirmware::for_chip(&bytes, Chipset::GA102).unwrap_err();
    assert_eq!(err, FirmwareError::VersionMismatch { found: "535.113.01".into(), expected: "535.261.03" });

    // The pinned file with `.fwversion` patched in memory.
    let mut bytes = read(&gsp_path("gsp_ga10x.bin"));
    let at = GA10X_SECTIONS[1].1 as usize;
    assert_eq!(&bytes[at..at + 11], b"535.261.03\0");
    bytes[at..at + 10].copy_from_slice(b"535.261.04");
    assert_eq!(
        GspFirmware::for_chip(&bytes, Chipset::AD102).unwrap_err().to_string(),
        "GSP firmware version mismatch: the file is 535.261.04, the driver is bound to 535.261.03"
    );
    bytes[at + 10] = b'x'; // no NUL any more
    assert_eq!(
        GspFirmware::for_chip(&bytes, Chipset::AD102).unwrap_err(),
        FirmwareError::MalformedVersion { size: 11 }
    );
}

#[test]
fn cut_or_corrupted_gsp_files_give_errors() {
    let bytes = read(&gsp_path("gsp_tu10x.bin"));
    let len = bytes.len();
    fn parse(b: &[u8]) -> Result<GspFirmware<'_>, FirmwareError> {
        GspFirmware::for_chip(b, Chipset::TU102)
    }
    // Cuts: the first KiB byte by byte, 64 spread through the image, and the whole tail from
    // the end of the image (version, signatures, symbols, names, section headers).
    let tail_start = TU10X_SECTIONS[1].1 as usize;
    let cuts = (0..1024).chain((1..64).map(|i| len / 64 * i)).chain(tail_start..len);
    for cut in cuts {
        assert!(parse(&bytes[..cut]).is_err(), "cut at {cut:#x} accepted");
    }
    // Flips in the ELF header and everything after the image.
    let mut copy = bytes.clone();
    for at in (0..64).chain(tail_start..len) {
        for mask in [0x01u8, 0x80, 0xff] {
            copy[at] ^= mask;
            let _ = parse(&copy);
            let _ = GspElf::parse(&copy);
            copy[at] ^= mask;
        }
    }
    assert_eq!(copy, bytes);
    // A corrupted section header offset is a clear error, not a panic.
    let mut copy = bytes.clone();
    let shoff = u64::from_le_bytes(copy[0x28..0x30].try_into().unwrap()) as usize;
    let fwimage_header = shoff + 64;
    copy[fwimage_header + 0x18..fwimage_header + 0x20].copy_from_slice(&(len as u64).to_le_bytes());
    let err = parse(&copy).unwrap_err();
    assert!(matches!(err, FirmwareError::Elf { .. }), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Booters.

/// (chip dir, image, bin_hdr [bin_size, header_offset, data_offset, data_size],
///  hs header (9 words), patch_loc, meta [fuse, engine, ucode], num_sigs, load header (9 words))
type BooterRow = (&'static str, &'static str, [u32; 4], [u32; 9], u32, [u32; 3], u32, [u32; 9]);

const TURING_HS: [u32; 9] = [0x3c, 0x10, 0x4c, 0x50, 0x54, 0xc, 0x60, 0x64, 0x24];
const GA100_HS: [u32; 9] = [0x3c, 0x180, 0x1bc, 0x1c0, 0x1c4, 0xc, 0x1d0, 0x1d4, 0x24];
const RSA2_HS: [u32; 9] = [0x3c, 0x300, 0x33c, 0x340, 0x344, 0xc, 0x350, 0x354, 0x24];

#[rustfmt::skip]
const BOOTERS: &[BooterRow] = &[
    ("tu102", "booter_load", [0xe300, 0x18, 0x88, 0xe200], TURING_HS, 0x8200, [0, 1, 0xd], 1,
        [0, 0x100, 0x8000, 0x6200, 1, 0x100, 0x7f00, 0x100, 0]),
    ("tu102", "booter_unload", [0x9500, 0x18, 0x88, 0x9400], TURING_HS, 0x4900, [0, 1, 0xd], 1,
        [0, 0x100, 0x4700, 0x4d00, 1, 0x100, 0x4600, 0x100, 0]),
    ("tu116", "booter_load", [0xe300, 0x18, 0x88, 0xe200], TURING_HS, 0x8200, [0, 1, 0xd], 1,
        [0, 0x100, 0x8000, 0x6200, 1, 0x100, 0x7f00, 0x100, 0]),
    ("tu116", "booter_unload", [0x9500, 0x18, 0x88, 0x9400], TURING_HS, 0x4900, [0, 1, 0xd], 1,
        [0, 0x100, 0x4700, 0x4d00, 1, 0x100, 0x4600, 0x100, 0]),
    ("ga100", "booter_load", [0xe700, 0x18, 0x1f8, 0xe500], GA100_HS, 0x8300, [0, 1, 3], 1,
        [0, 0x100, 0x8100, 0x6400, 1, 0x100, 0x8000, 0x100, 0]),
    ("ga100", "booter_unload", [0x9800, 0x18, 0x1f8, 0x9600], GA100_HS, 0x4900, [0, 1, 3], 1,
        [0, 0x100, 0x4700, 0x4f00, 1, 0x100, 0x4600, 0x100, 0]),
    ("ga102", "booter_load", [0xea00, 0x18, 0x378, 0xe600], RSA2_HS, 0x8410, [1, 1, 3], 2,
        [0, 0x100, 0x8400, 0x6200, 1, 0x100, 0x8300, 0x100, 0]),
    ("ga102", "booter_unload", [0x9b00, 0x18, 0x378, 0x9700], RSA2_HS, 0x4a10, [1, 1, 3], 2,
        [0, 0x100, 0x4a00, 0x4d00, 1, 0x100, 0x4900, 0x100, 0]),
    ("ad102", "booter_load", [0xdb00, 0x18, 0x378, 0xd700], RSA2_HS, 0x7710, [1, 1, 3], 2,
        [0, 0x100, 0x7700, 0x6000, 1, 0x100, 0x7600, 0x100, 0]),
    ("ad102", "booter_unload", [0x9c00, 0x18, 0x378, 0x9800], RSA2_HS, 0x4910, [1, 1, 3], 2,
        [0, 0x100, 0x4900, 0x4e00, 1, 0x100, 0x4800, 0x100, 0]),
];

#[test]
fn booters_parse_with_consistent_headers() {
    for &(chip, image, bin, hs, patch_loc, meta, num_sigs, load) in BOOTERS {
        let path = boot_path(chip, image);
        let bytes = read(&path);
        let what = format!("{chip} {image}");
        assert_eq!(FirmwareKind::detect(&bytes), Ok(FirmwareKind::Booter), "{what}");
        let b = BooterFirmware::parse(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));

        assert_eq!(b.bin.magic, NVFW_BIN_MAGIC);
        assert_eq!(b.bin.version, 1);
        assert_eq!([b.bin.bin_size, b.bin.header_offset, b.bin.data_offset, b.bin.data_size], bin, "{what}");
        let h = &b.hs;
        let got_hs = [
            h.sig_prod_offset,
            h.sig_prod_size,
            h.patch_loc_offset,
            h.patch_sig_offset,
            h.meta_data_offset,
            h.meta_data_size,
            h.num_sigs_offset,
            h.load_header_offset,
            h.load_header_size,
        ];
        assert_eq!(got_hs, hs, "{what}: nvfw_hs_header_v2");
        assert_eq!(b.patch_location, patch_loc, "{what}");
        assert_eq!(b.patch_signature_index, 0);
        assert_eq!([b.meta.fuse_version, b.meta.engine_id_mask, b.meta.ucode_id], meta, "{what}");
        assert_eq!(b.num_signatures, num_sigs, "{what}");
        let l = &b.load;
        let got_load = [
            l.os_code_offset,
            l.os_code_size,
            l.os_data_offset,
            l.os_data_size,
            l.num_apps,
            l.app_code_offset,
            l.app_code_size,
            l.app_data_offset,
            l.app_data_size,
        ];
        assert_eq!(got_load, load, "{what}: nvfw_hs_load_header_v2");

        // Consistency, independent of the table above.
        let file_len = bytes.len() as u64;
        assert_eq!(u64::from(b.bin.data_offset) + u64::from(b.bin.data_size), file_len, "{what}: image ends the file");
        assert_eq!(
            u64::from(b.bin.bin_size),
            file_len.next_multiple_of(256),
            "{what}: bin_size is the size rounded up"
        );
        let pieces = [
            h.sig_prod_offset,
            h.patch_loc_offset,
            h.patch_sig_offset,
            h.meta_data_offset,
            h.num_sigs_offset,
            h.load_header_offset,
        ];
        for offset in pieces {
            assert!(offset > b.bin.header_offset && offset < b.bin.data_offset, "{what}: {offset:#x} in the headers");
        }
        let signature_size = if chip.starts_with("tu") { 16 } else { 384 };
        assert_eq!(b.signature_size(), signature_size, "{what}");
        assert_eq!(b.signatures().len() as u32, signature_size * num_sigs);
        assert!(l.os_code_size > 0 && l.os_data_size > 0 && l.app_code_size > 0, "{what}");
        assert_eq!(l.num_apps, 1);
        assert!(l.app_code_offset >= l.os_code_offset + l.os_code_size, "{what}: app code after OS code");
        assert!(l.os_data_offset + l.os_data_size <= b.bin.data_size, "{what}");
        assert!(b.patch_location >= l.os_data_offset && b.patch_location < l.os_data_offset + l.os_data_size);

        // Every fuse version the file has a signature for patches that signature in.
        for fuse_version in 0..num_sigs {
            let patched = b.patched_image(fuse_version).unwrap();
            let at = b.patch_location as usize;
            let signature = b.signature_for_fuse_version(fuse_version).unwrap();
            assert_eq!(&patched[at..at + signature.len()], signature);
            assert_eq!(patched.len(), b.image().len());
        }
        if num_sigs > 1 {
            assert!(b.signature_for_fuse_version(num_sigs).is_err());
        }
    }
}

#[test]
fn cut_or_corrupted_booters_give_errors() {
    for &(chip, image, bin, ..) in BOOTERS.iter().step_by(2) {
        let bytes = read(&boot_path(chip, image));
        for cut in 0..bytes.len() {
            assert!(BooterFirmware::parse(&bytes[..cut]).is_err(), "{chip} {image} cut at {cut:#x} accepted");
            let _ = FirmwareKind::detect(&bytes[..cut]);
        }
        // Flips anywhere in the headers (the image itself is opaque to the parser).
        let mut copy = bytes.clone();
        for at in 0..bin[2] as usize {
            for mask in [0x01u8, 0x80, 0xff] {
                copy[at] ^= mask;
                let _ = BooterFirmware::parse(&copy);
                let _ = BootloaderFirmware::parse(&copy);
                copy[at] ^= mask;
            }
        }
        assert_eq!(copy, bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// GSP bootloaders.

/// (chip dir, bin_hdr [bin_size, header_offset, data_offset, data_size], descriptor words)
type BootloaderRow = (&'static str, [u32; 4], &'static [u32]);

const TURING_DESC: &[u32] = &[4, 0, 0x488, 0x488, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

#[rustfmt::skip]
const BOOTLOADERS: &[BootloaderRow] = &[
    ("tu102", [0x1100, 0x18, 0x64, 0x1000], TURING_DESC),
    ("tu116", [0x1100, 0x18, 0x64, 0x1000], TURING_DESC),
    ("ga100", [0x1100, 0x18, 0x64, 0x1000], TURING_DESC),
    ("ga102", [0x5100, 0x18, 0x6c, 0x5000], &[
        5, 0x4000, 0x458, 0x4458, 0x10, 0, 0, 0, 0, 0x800, 0x800, 0x1000, 0x1800, 0x2500, 1, 0, 0,
        0, 0, 0x5000, 0,
    ]),
    ("ad102", [0x8100, 0x18, 0x6c, 0x8000], &[
        5, 0x7000, 0x458, 0x7458, 0x10, 0, 0, 0, 0, 0x800, 0x800, 0x4000, 0x4800, 0x2500, 1, 0, 0,
        0, 0, 0x8000, 0,
    ]),
];

#[test]
fn bootloaders_parse() {
    for &(chip, bin, words) in BOOTLOADERS {
        let bytes = read(&boot_path(chip, "bootloader"));
        assert_eq!(FirmwareKind::detect(&bytes), Ok(FirmwareKind::Bootloader), "{chip}");
        let b = BootloaderFirmware::parse(&bytes).unwrap_or_else(|e| panic!("{chip}: {e}"));
        assert_eq!([b.bin.bin_size, b.bin.header_offset, b.bin.data_offset, b.bin.data_size], bin, "{chip}");
        assert_eq!(b.desc_size as usize, words.len() * 4, "{chip}");
        assert_eq!(u64::from(b.bin.data_offset + b.bin.data_size), bytes.len() as u64);
        assert_eq!(u64::from(b.bin.bin_size), (bytes.len() as u64).next_multiple_of(256));
        let d = &b.desc;
        let mut got = vec![
            d.version,
            d.bootloader_offset,
            d.bootloader_size,
            d.bootloader_param_offset,
            d.bootloader_param_size,
            d.riscv_elf_offset,
            d.riscv_elf_size,
            d.app_version,
            d.manifest_offset,
            d.manifest_size,
            d.monitor_data_offset,
            d.monitor_data_size,
            d.monitor_code_offset,
            d.monitor_code_size,
            u32::from(d.monitor_enabled),
            d.swbrom_code_offset,
            d.swbrom_code_size,
            d.swbrom_data_offset,
            d.swbrom_data_size,
        ];
        if let (Some(fb), Some(signed)) = (d.fb_reserved_size, d.signed_as_code) {
            got.extend([fb, u32::from(signed)]);
        }
        assert_eq!(got, words, "{chip}: RM_RISCV_UCODE_DESC");
        for (what, offset, size) in d.regions() {
            assert!(offset + size <= b.bin.data_size, "{chip}: {what}");
        }
        assert_eq!(b.image().len() as u32, b.bin.data_size);
    }
}

#[test]
fn cut_or_corrupted_bootloaders_give_errors() {
    for chip in ["tu102", "ga102"] {
        let bytes = read(&boot_path(chip, "bootloader"));
        for cut in 0..bytes.len() {
            assert!(BootloaderFirmware::parse(&bytes[..cut]).is_err(), "{chip}: cut at {cut:#x}");
        }
        let mut copy = bytes.clone();
        for at in 0..0x6c {
            for mask in [0x01u8, 0x80, 0xff] {
                copy[at] ^= mask;
                let _ = BootloaderFirmware::parse(&copy);
                let _ = BooterFirmware::parse(&copy);
                copy[at] ^= mask;
            }
        }
    }
    // The right file for the wrong parser.
    let booter = read(&boot_path("ga102", "booter_load"));
    assert!(BootloaderFirmware::parse(&booter).is_err());
    let bootloader = read(&boot_path("ga102", "bootloader"));
    assert!(BooterFirmware::parse(&bootloader).is_err());
}

#[test]
fn hopper_fmc_is_not_in_the_pinned_packages() {
    // Debian's firmware-nvidia-graphics carries no gh100/ directory, so no GSP-FMC file (nor
    // fmc-*.bin): the Hopper bundle's `gh100-bootloader.bin` has no Debian source yet.
    let dir = graphics_dir();
    assert!(!dir.join("gh100").exists(), "a gh100 directory appeared: parse its FMC");
    let gsp_dirs: Vec<String> = std::fs::read_dir(&dir)
        .expect("list firmware dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("gsp").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(gsp_dirs.iter().all(|d| !d.starts_with("gh")), "{gsp_dirs:?}");
}

// ---------------------------------------------------------------------------------------------
// The bundle against the Debian layout.

struct DebianFiles(HashMap<String, Vec<u8>>);

impl FirmwareSource for DebianFiles {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(Vec::as_slice)
    }
}

#[test]
fn boot_image_chips_follow_debians_links() {
    // Debian links e.g. ga104/gsp to ga102/gsp; where a chip's file really lives must be the
    // chip `boot_image_chip` names.
    for chip in Chipset::ALL.iter().copied().filter(|c| c.gsp_firmware_file().is_some()) {
        for image in BootImage::ALL {
            let dir = graphics_dir().join(chip.name().to_lowercase()).join("gsp");
            let file = dir.join(format!("{}-535.113.01.bin", image.stem()));
            match boot_image_chip(chip, image) {
                Some(owner) => {
                    if chip == Chipset::GH100 {
                        assert!(!file.exists());
                        continue;
                    }
                    let real = std::fs::canonicalize(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                    let parent = real.parent().and_then(Path::parent).and_then(Path::file_name);
                    assert_eq!(parent.and_then(|p| p.to_str()), Some(owner), "{chip:?} {image:?}");
                }
                None => assert!(!file.exists(), "{chip:?} has a {image:?} file"),
            }
        }
    }
}

#[test]
fn bundles_load_from_flat_module_names() {
    let mut files = HashMap::new();
    for name in ["gsp_tu10x.bin", "gsp_ga10x.bin"] {
        let path = gsp_path(name);
        let module = module_name_for_path(path.to_str().expect("utf-8 path")).expect("module name");
        files.insert(module, read(&path));
    }
    for chip in ["tu102", "tu116", "ga100", "ga102", "ad102"] {
        for image in ["booter_load", "booter_unload", "bootloader"] {
            let path = boot_path(chip, image);
            let module = module_name_for_path(path.to_str().expect("utf-8 path")).expect("module name");
            assert_eq!(module, format!("{chip}-{image}.bin"));
            files.insert(module, read(&path));
        }
    }
    let files = DebianFiles(files);
    for chip in Chipset::ALL.iter().copied() {
        let result = FirmwareBundle::load(&files, chip);
        match chip {
            Chipset::GH100 => assert!(
                matches!(&result, Err(FirmwareError::MissingFile { name, .. }) if name == "gh100-bootloader.bin"),
                "{result:?}"
            ),
            _ if chip.gsp_firmware_file().is_none() => {
                assert_eq!(result.unwrap_err(), FirmwareError::NoGspFirmware { chip })
            }
            _ => {
                let bundle = result.unwrap_or_else(|e| panic!("{chip:?}: {e}"));
                assert_eq!(Some(bundle.gsp.signature_section()), chip.gsp_signature_section());
                assert!(bundle.booter_load.is_some() && bundle.booter_unload.is_some());
                for name in FirmwareBundle::module_names(chip).unwrap() {
                    assert!(files.0.contains_key(&name), "{chip:?}: {name}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The declared facts against NVIDIA's source text.

/// The `NvU32` field names of the struct that ends with `} <name>;` (or the anonymous
/// `struct { ... } <name>;`) in `text`.
fn struct_fields(text: &str, name: &str) -> Vec<String> {
    let end = text.find(&format!("}} {name};")).unwrap_or_else(|| panic!("no struct {name}"));
    let start = text[..end].rfind('{').expect("struct body");
    text[start + 1..end]
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line.strip_prefix("NvU32")?.trim();
            Some(rest.split(';').next()?.trim().to_string())
        })
        .collect()
}

#[test]
fn declared_facts_match_nvidias_sources() {
    let nvoc = source_file(headers::KERNEL_GSP_NVOC_H.path);
    for (name, value) in [
        ("GSP_VERSION_SECTION_NAME", GSP_VERSION_SECTION),
        ("GSP_IMAGE_SECTION_NAME", GSP_IMAGE_SECTION),
        ("GSP_SIGNATURE_SECTION_NAME_PREFIX", GSP_SIGNATURE_SECTION_PREFIX),
        ("GSP_CC_SIGNATURE_SECTION_NAME_PREFIX", GSP_CC_SIGNATURE_SECTION_PREFIX),
    ] {
        let line = nvoc
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name) && l.starts_with("#define"))
            .unwrap_or_else(|| panic!("{name} not defined"));
        assert_eq!(line.split_whitespace().nth(2), Some(format!("\"{value}\"").as_str()), "{name}");
    }

    let riscv = source_file(headers::RM_RISCV_UCODE.path);
    let fields = struct_fields(&riscv, "RM_RISCV_UCODE_DESC");
    assert_eq!(fields.len() * 4, RM_RISCV_UCODE_DESC_SIZE, "{fields:?}");
    assert_eq!(fields[RM_RISCV_UCODE_DESC_SHORT_SIZE / 4 - 1], "swbromDataSize");
    assert_eq!(fields[RM_RISCV_UCODE_DESC_SHORT_SIZE / 4..], ["fbReservedSize", "bSignedAsCode"]);
    assert_eq!(fields[7], "appVersion");
    assert_eq!(fields[14], "bIsMonitorEnabled");

    let booter = source_file(headers::KERNEL_GSP_BOOTER_C.path);
    assert_eq!(
        struct_fields(&booter, "header"),
        [
            "osCodeOffset",
            "osCodeSize",
            "osDataOffset",
            "osDataSize",
            "numApps",
            "appCodeOffset",
            "appCodeSize",
            "appDataOffset",
            "appDataSize"
        ]
    );
    assert_eq!(struct_fields(&booter, "header").len() * 4, NVFW_HS_LOAD_HEADER_V2_SIZE);
    assert_eq!(struct_fields(&booter, "patchMeta"), ["fuseVer", "engineId", "ucodeId"]);
    assert_eq!(struct_fields(&booter, "patchMeta").len() * 4, HS_PATCH_META_SIZE);
    assert!(booter.contains("if (header.numApps != 1)"));
    assert!(booter.contains("if (patchSig != 0)"));
    assert!(booter.contains("sigIndex = numSigs - 1 - fuseVer;"));

    // The file layout NVIDIA's extraction script writes.
    let script = source_file("nouveau/extract-firmware-nouveau.py");
    assert!(script.contains("struct.pack(\"<6L\", 0x10de, 1, total_size, 24,"));
    assert_eq!(NVFW_BIN_HDR_SIZE, 24);
    assert!(script.contains("f.write(struct.pack(\"<9L\", 60, signatures_size"));
    assert_eq!(NVFW_BIN_HDR_SIZE + NVFW_HS_HEADER_V2_SIZE, 60);
    assert!(script.contains("total_size = round_up_to_base(120 + signatures_size + firmware_size, 256)"));
    assert_eq!(60 + 4 + 4 + HS_PATCH_META_SIZE + 4 + NVFW_HS_LOAD_HEADER_V2_SIZE, 120);

    // NVIDIA's own archive carries both descriptor sizes.
    for (chip, size) in [("TU102", 76), ("GA100", 76), ("GA102", 84), ("AD102", 84), ("GH100", 84)] {
        let text = source_file(&format!("src/nvidia/generated/g_bindata_kgspGetBinArchiveGspRmBoot_{chip}.c"));
        let desc = text.find("ucode_desc").unwrap_or_else(|| panic!("{chip}: no ucode_desc"));
        let size_line = text[desc..].lines().find(|l| l.contains("DATA SIZE (bytes):")).expect("size line");
        assert!(size_line.ends_with(&format!(": {size}")), "{chip}: {size_line}");
    }
}

#[test]
fn boot_image_chips_follow_nvidias_hal() {
    let nvoc = source_file(headers::KERNEL_GSP_NVOC_C.path);
    for (function, image) in [
        ("kgspGetBinArchiveBooterLoadUcode", BootImage::BooterLoad),
        ("kgspGetBinArchiveBooterUnloadUcode", BootImage::BooterUnload),
        ("kgspGetBinArchiveGspRmBoot", BootImage::Bootloader),
    ] {
        let start = nvoc
            .find(&format!("// Hal function -- {function}\n"))
            .unwrap_or_else(|| panic!("no HAL selection for {function}"));
        let block = &nvoc[start..];
        let block = &block[..block[1..].find("// Hal function").map_or(block.len(), |e| e + 1)];
        // (chips named in the condition, chosen suffix); the `else` branch has no chips.
        let mut branches: Vec<(Vec<String>, String)> = Vec::new();
        let mut pending = Vec::new();
        for line in block.lines() {
            if let Some(at) = line.find("/* ChipHal: ") {
                let chips = &line[at + 12..line.rfind("*/").expect("comment end")];
                pending = chips.split('|').map(|c| c.trim().to_string()).collect();
            } else if let Some(at) = line.find(&format!("= &{function}_")) {
                let suffix = line[at + function.len() + 4..].trim_end_matches(';').to_string();
                branches.push((std::mem::take(&mut pending), suffix));
            }
        }
        for chip in Chipset::ALL.iter().copied().filter(|c| c.gsp_firmware_file().is_some()) {
            let suffix = branches
                .iter()
                .find(|(chips, _)| chips.iter().any(|c| c == chip.name()))
                .or_else(|| branches.iter().find(|(chips, _)| chips.is_empty()))
                .map(|(_, s)| s.as_str())
                .unwrap_or_else(|| panic!("{function}: no branch for {chip:?}"));
            // A hex suffix is NVOC's stub that returns NULL: no such ucode.
            let expected = if suffix.chars().all(|c| c.is_ascii_hexdigit()) && suffix.len() == 6 {
                None
            } else {
                Some(suffix.to_lowercase())
            };
            assert_eq!(boot_image_chip(chip, image).map(str::to_string), expected, "{function} for {chip:?}");
        }
    }
}

/// The model knows NVIDIA's GSP-RM images by facts taken from Debian's files; each is checked
/// here against the file: its SHA-256, its `.fwimage` size, the FNV-1a 64 of the first page and
/// the whole-image word hash the model verifies every page against.
#[test]
fn the_models_known_gsp_rm_images_are_debians_files() {
    use sha2::{Digest, Sha256};
    use sim::gsp_rm::image::{words_fnv64, KNOWN_GSP_RM_IMAGES, WORDS_FNV64_START};
    for known in KNOWN_GSP_RM_IMAGES {
        let name = known.file.rsplit('/').next().unwrap();
        let bytes = read(&gsp_path(name));
        let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(sha, known.file_sha256, "{}", known.file);
        let elf = nvgpu::firmware::GspElf::parse(&bytes).expect("GSP-RM ELF");
        let image = elf.image();
        assert_eq!(image.len() as u64, known.size, "{}", known.file);
        assert_eq!(sim::booter::fnv1a64(&image[..4096]), known.first_page_fnv64, "{}", known.file);
        let whole = image.chunks(4096).fold(WORDS_FNV64_START, words_fnv64);
        assert_eq!(whole, known.image_words_fnv64, "{}: whole-image hash {whole:#018x}", known.file);
    }
}

/// The model checks NVIDIA's image page by page: the real image passes, and one byte changed
/// past the first page (where a first-page check would not look) or a page that cannot be read
/// is refused, naming what is wrong.
#[test]
fn the_model_refuses_a_gsp_rm_image_altered_past_its_first_page() {
    use sim::gsp_rm::image::{check, GspRmImageError};
    let bytes = read(&gsp_path("gsp_ga10x.bin"));
    let image = nvgpu::firmware::GspElf::parse(&bytes).expect("GSP-RM ELF").image().to_vec();
    let size = image.len() as u64;
    let reader = |image: Vec<u8>| {
        move |offset: u64, buf: &mut [u8]| -> bool {
            match image.get(offset as usize..offset as usize + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    true
                }
                None => false,
            }
        }
    };
    assert_eq!(check(Chipset::GA102, size, &reader(image.clone())), Ok(()));
    let mut altered = image.clone();
    altered[0x12_3457] ^= 0x20;
    assert!(
        matches!(check(Chipset::GA102, size, &reader(altered)), Err(GspRmImageError::Altered { .. })),
        "one byte past the first page"
    );
    let short = image[..image.len() - 4096].to_vec();
    assert_eq!(
        check(Chipset::GA102, size, &reader(short)),
        Err(GspRmImageError::Unreadable { offset: size - 4096 }),
        "the last page missing"
    );
}
