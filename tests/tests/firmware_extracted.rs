//! The boot ucodes of the pinned release (535.261.03) as `cargo xtask extract-firmware` writes
//! them from NVIDIA's own source (`target/real-data/extracted-535.261.03/`): they parse with the
//! driver's parsers, their sizes are the `DATA SIZE` comments of the `g_bindata_*.c` arrays they
//! come from (read here from the C text, independently of the extractor), the flat module names
//! find them, and the model recognises them by the fingerprints it declares.
//!
//! Missing data is a failure, never a skip: run `sudo scripts/fetch-real-data.sh` from the
//! workspace root first (it unpacks NVIDIA's source and runs the extractor), or point
//! `NVGPU_REAL_DATA` at a copy.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nvgpu::chip::Chipset;
use nvgpu::firmware::{
    extra_module_name, module_name_for_path, BooterFirmware, BootloaderFirmware, ExtraImage, FirmwareBundle,
    FirmwareKind, GenericBootloaderFirmware, PINNED_BOOT_FIRMWARE_DIR,
};
use nvgpu::hw::fw::rmflcnbl::RmFlcnBlDesc;
use nvgpu::platform::FirmwareSource;
use sha2::{Digest, Sha384};
use sim::booter::{fnv1a64, BooterKind, KNOWN_BOOTERS};

const RELEASE: &str = "535.261.03";

fn data_root() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "missing real data: {} ({what}).\nThis test never passes without the real files: run \
         `sudo scripts/fetch-real-data.sh` from the workspace root (it runs `cargo xtask extract-firmware`), \
         or set NVGPU_REAL_DATA.",
        path.display()
    );
    path
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}): run `sudo scripts/fetch-real-data.sh` from the workspace root", path.display())
    })
}

/// `extracted-535.261.03/nvidia/<chip>/gsp/<stem>-535.261.03.bin`.
fn extracted_path(chip: &str, stem: &str) -> PathBuf {
    require(
        data_root()
            .join(PINNED_BOOT_FIRMWARE_DIR)
            .join("nvidia")
            .join(chip)
            .join("gsp")
            .join(format!("{stem}-{RELEASE}.bin")),
        "boot ucodes extracted from NVIDIA's 535.261.03 source by `cargo xtask extract-firmware`",
    )
}

fn extracted(chip: &str, stem: &str) -> Vec<u8> {
    read(&extracted_path(chip, stem))
}

/// Array name -> `DATA SIZE (bytes)` of a `g_bindata_*.c` file, from its comment blocks only
/// (each comment's last `DATA SIZE` before the array's declaration).
fn data_sizes(file: &str) -> HashMap<String, usize> {
    let path = require(
        data_root().join(format!("open-gpu-kernel-modules-{RELEASE}/src/nvidia/generated")).join(file),
        "NVIDIA open-gpu-kernel-modules 535.261.03",
    );
    let text = String::from_utf8(read(&path)).expect("C source is UTF-8");
    let mut sizes = HashMap::new();
    let mut size = None;
    for line in text.lines() {
        if let Some(v) = line.trim().strip_prefix("// DATA SIZE (bytes):") {
            size = v.trim().parse::<usize>().ok();
        } else if let Some(rest) = line.trim().strip_prefix("static BINDATA_CONST NvU8 ") {
            let name = rest.split('[').next().unwrap().trim().to_string();
            let data_size = size.take().unwrap_or_else(|| panic!("{file}: {name} has no DATA SIZE"));
            sizes.insert(name, data_size);
        }
    }
    sizes
}

fn data_size(sizes: &HashMap<String, usize>, name: &str) -> usize {
    *sizes.get(name).unwrap_or_else(|| panic!("no array {name}"))
}

const BOOTER_CHIPS: [&str; 5] = ["tu102", "tu116", "ga100", "ga102", "ad102"];
const BOOTLOADER_CHIPS: [&str; 5] = ["tu102", "ga100", "ga102", "ad102", "gh100"];

// ---------------------------------------------------------------------------------------------
// The files parse and are the arrays' sizes.

#[test]
fn extracted_booters_parse_and_are_the_arrays_sizes() {
    for chip in BOOTER_CHIPS {
        for (load, stem) in [("Load", "booter_load"), ("Unload", "booter_unload")] {
            let upper = chip.to_uppercase();
            let sizes = data_sizes(&format!("g_bindata_kgspGetBinArchiveBooter{load}Ucode_{upper}.c"));
            let array = |part: &str| format!("kgspBinArchiveBooter{load}Ucode_{upper}_{part}_data");
            let file = extracted(chip, stem);
            assert_eq!(FirmwareKind::detect(&file), Ok(FirmwareKind::Booter), "{chip} {stem}");
            let booter = BooterFirmware::parse(&file).unwrap_or_else(|e| panic!("{chip} {stem}: {e}"));
            assert_eq!(booter.image().len(), data_size(&sizes, &array("image_prod")), "{chip} {stem} image");
            assert_eq!(booter.signatures().len(), data_size(&sizes, &array("sig_prod")), "{chip} {stem} signatures");
            assert_eq!(booter.hs.load_header_size as usize, data_size(&sizes, &array("header_prod")));
            assert_eq!(booter.hs.meta_data_size as usize, data_size(&sizes, &array("patch_meta")));
            assert_eq!(booter.signature_size(), if chip.starts_with("tu") { 16 } else { 384 }, "{chip} {stem}");
            assert_eq!(booter.patch_signature_index, 0);
            assert_eq!(booter.load.num_apps, 1);
            eprintln!(
                "{chip} {stem}: {} bytes, image {:#x}, {} signature(s), ucode id {}",
                file.len(),
                booter.image().len(),
                booter.num_signatures,
                booter.meta.ucode_id
            );
        }
    }
}

#[test]
fn extracted_bootloaders_parse_and_are_the_arrays_sizes() {
    for chip in BOOTLOADER_CHIPS {
        let upper = chip.to_uppercase();
        let sizes = data_sizes(&format!("g_bindata_kgspGetBinArchiveGspRmBoot_{upper}.c"));
        // GA102 and later carry debug and production images; Turing and GA100 one of each.
        let suffix = if sizes.contains_key(&format!("kgspBinArchiveGspRmBoot_{upper}_ucode_image_prod_data")) {
            "_prod"
        } else {
            ""
        };
        let file = extracted(chip, "bootloader");
        assert_eq!(FirmwareKind::detect(&file), Ok(FirmwareKind::Bootloader), "{chip}");
        let bootloader = BootloaderFirmware::parse(&file).unwrap_or_else(|e| panic!("{chip} bootloader: {e}"));
        let image = format!("kgspBinArchiveGspRmBoot_{upper}_ucode_image{suffix}_data");
        let desc = format!("kgspBinArchiveGspRmBoot_{upper}_ucode_desc{suffix}_data");
        assert_eq!(bootloader.image().len(), data_size(&sizes, &image), "{chip} {image}");
        assert_eq!(bootloader.desc_size as usize, data_size(&sizes, &desc), "{chip} {desc}");
        let d = bootloader.desc;
        eprintln!(
            "{chip} bootloader: version {}, bootloader {:#x}+{:#x}, monitor code {:#x}+{:#x}, data {:#x}+{:#x}, manifest {:#x}+{:#x}, appVersion {:#x}",
            d.version, d.bootloader_offset, d.bootloader_size, d.monitor_code_offset, d.monitor_code_size,
            d.monitor_data_offset, d.monitor_data_size, d.manifest_offset, d.manifest_size, d.app_version
        );
    }
    // Hopper's boot binary is monitor-only: the GSP-FMC starts it.
    let gh100 = extracted("gh100", "bootloader");
    let gh100 = BootloaderFirmware::parse(&gh100).unwrap();
    assert_eq!((gh100.desc.bootloader_size, gh100.desc.monitor_enabled), (0, true));
}

#[test]
fn extracted_generic_bootloader_is_rms_and_parses_as_the_fwsec_step_takes_it() {
    let sizes = data_sizes("g_bindata_ksec2GetBinArchiveBlUcode_TU102.c");
    let file = extracted("tu102", "generic_bootloader");
    assert_eq!(FirmwareKind::detect(&file), Ok(FirmwareKind::GenericBootloader));
    let loader = GenericBootloaderFirmware::parse(&file).unwrap_or_else(|e| panic!("generic bootloader: {e}"));
    assert_eq!(loader.image().len(), data_size(&sizes, "ksec2BinArchiveBlUcode_TU102_ucode_image_data"));
    // The descriptor the driver declares from the same source.
    assert_eq!(loader.desc, RmFlcnBlDesc::RM_535_SEC2_GP10X);
    assert_eq!((loader.bin.header_offset, loader.bin.data_offset), (24, 48));
    assert_eq!(loader.loader().image, loader.image());
    // The model recognises it: its fingerprint is this file's code.
    let fp = sim::generic_bl::KNOWN_GENERIC_BOOTLOADERS[0];
    assert_eq!(fp.start_tag, loader.desc.bl_start_tag);
    assert_eq!(fp.dmem_desc_offset, loader.desc.bl_dmem_desc_load_off);
    assert_eq!(fp.code_size, loader.desc.bl_img_header.bl_code_size);
    assert_eq!(fp.code_fnv64, fnv1a64(&loader.image()[..fp.code_size as usize]));
}

#[test]
fn extracted_gh100_fmc_is_the_arrays_and_its_hash_is_its_sha384() {
    let sizes = data_sizes("g_bindata_kgspGetBinArchiveGspRmFmcGfwProdSigned_GH100.c");
    let parts: Vec<Vec<u8>> =
        ["fmc_image", "fmc_hash", "fmc_sig", "fmc_pkey"].map(|stem| extracted("gh100", stem)).into();
    for (bytes, part) in parts.iter().zip(["image", "hash", "sig", "pkey"]) {
        let name = format!("kgspBinArchiveGspRmFmcGfwProdSigned_GH100_ucode_{part}_data");
        assert_eq!(bytes.len(), data_size(&sizes, &name), "{name}");
    }
    // NVIDIA's hash of the image is the image's SHA-384: the arrays were read and inflated right.
    assert_eq!(Sha384::digest(&parts[0]).as_slice(), parts[1].as_slice());
    // The model's FSP knows this FMC and its credentials.
    let fp = sim::gsp_rm::fsp::KNOWN_FMCS[0];
    assert_eq!(fp.image_size as usize, parts[0].len());
    assert_eq!(
        [fp.image_fnv64, fp.hash_fnv64, fp.signature_fnv64, fp.public_key_fnv64],
        [fnv1a64(&parts[0]), fnv1a64(&parts[1]), fnv1a64(&parts[2]), fnv1a64(&parts[3])]
    );
}

// ---------------------------------------------------------------------------------------------
// The model's booter fingerprints, recomputed from the extracted files.

#[test]
fn the_models_known_booters_are_the_extracted_535_261_03_booters() {
    for chip in BOOTER_CHIPS {
        for (kind, load, stem) in
            [(BooterKind::Load, "Load", "booter_load"), (BooterKind::Unload, "Unload", "booter_unload")]
        {
            let file = extracted(chip, stem);
            let b = BooterFirmware::parse(&file).unwrap();
            let image = b.image();
            let l = b.load;
            let range = |offset: u32, size: u32| &image[offset as usize..(offset + size) as usize];
            let mut os_data = range(l.os_data_offset, l.os_data_size).to_vec();
            let sig_at = b.signature_dmem_offset() as usize;
            os_data[sig_at..sig_at + b.signature_size() as usize].fill(0);
            let signatures: Vec<u64> = b.signatures().chunks(b.signature_size() as usize).map(fnv1a64).collect();
            let chipset = Chipset::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(chip)).unwrap();
            let fp = KNOWN_BOOTERS
                .iter()
                .find(|fp| fp.kind == kind && fp.chips.contains(&chipset))
                .unwrap_or_else(|| panic!("no known {kind:?} booter for {chip}"));
            assert_eq!(
                (
                    fp.os_code_offset,
                    fp.os_code_size,
                    fp.os_data_offset,
                    fp.os_data_size,
                    fp.app_code_offset,
                    fp.app_code_size
                ),
                (
                    l.os_code_offset,
                    l.os_code_size,
                    l.os_data_offset,
                    l.os_data_size,
                    l.app_code_offset,
                    l.app_code_size
                ),
                "{chip} {stem}"
            );
            assert_eq!(
                (fp.signature_dmem_offset, fp.signature_size, fp.ucode_id, fp.engine_id_mask),
                (b.signature_dmem_offset(), b.signature_size(), b.meta.ucode_id, b.meta.engine_id_mask),
                "{chip} {stem}"
            );
            assert_eq!(fp.app_code_fnv64, fnv1a64(range(l.app_code_offset, l.app_code_size)), "{chip} {stem}");
            assert_eq!(fp.os_code_fnv64, fnv1a64(range(l.os_code_offset, l.os_code_size)), "{chip} {stem}");
            assert_eq!(fp.os_data_fnv64, fnv1a64(&os_data), "{chip} {stem}");
            assert_eq!(fp.signature_fnv64, signatures.as_slice(), "{chip} {stem}");
            let upper = chip.to_uppercase();
            assert!(fp.bindata.contains(&format!("kgspBinArchiveBooter{load}Ucode_{upper}_")), "{}", fp.bindata);
            // Debian's 535.113.01 file of the same name holds the same bytes.
            let debian = data_root()
                .join(format!("firmware-nvidia-graphics/lib/firmware/nvidia/{chip}/gsp/{stem}-535.113.01.bin"));
            assert!(
                read(&require(debian, "Debian firmware-nvidia-graphics")) == file,
                "{chip} {stem}: differs from Debian's"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Module names and the bundle.

struct Files(HashMap<String, Vec<u8>>);

impl FirmwareSource for Files {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(Vec::as_slice)
    }
}

/// Every extracted file under its flat module name, plus Debian's GSP-RM images.
fn extracted_modules() -> Files {
    let mut files = HashMap::new();
    let root = data_root().join(PINNED_BOOT_FIRMWARE_DIR).join("nvidia");
    for chip in ["tu102", "tu116", "ga100", "ga102", "ad102", "gh100"] {
        let dir = require(root.join(chip).join("gsp"), "extracted boot ucodes (cargo xtask extract-firmware)");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = module_name_for_path(path.to_str().unwrap()).unwrap_or_else(|| panic!("{}", path.display()));
            assert!(files.insert(name, read(&path)).is_none());
        }
    }
    for gsp in ["gsp_tu10x.bin", "gsp_ga10x.bin"] {
        let path = require(
            data_root().join("firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03").join(gsp),
            "Debian firmware-nvidia-gsp 535.261.03",
        );
        files.insert(gsp.to_string(), read(&path));
    }
    Files(files)
}

#[test]
fn every_chip_with_gsp_rm_loads_its_bundle_from_the_extracted_files() {
    let files = extracted_modules();
    assert!(files.0.contains_key("tu102-generic_bootloader.bin") && files.0.contains_key("gh100-fmc_image.bin"));
    for chip in Chipset::ALL.iter().copied().filter(|c| c.gsp_firmware_file().is_some()) {
        let bundle = FirmwareBundle::load(&files, chip).unwrap_or_else(|e| panic!("{chip:?}: {e}"));
        for name in
            FirmwareBundle::module_names(chip).unwrap().into_iter().chain(FirmwareBundle::extra_module_names(chip))
        {
            assert!(files.0.contains_key(&name), "{chip:?}: {name}");
        }
        let loader = FirmwareBundle::generic_bootloader(&files, chip).unwrap();
        let fmc = FirmwareBundle::fmc_images(&files, chip).unwrap();
        match chip {
            Chipset::GH100 => {
                assert!(bundle.booter_load.is_none() && loader.is_none());
                let fmc = fmc.expect("GH100 takes the GSP-FMC");
                assert_eq!(fmc.image.len(), 165_448);
                assert_eq!(Sha384::digest(fmc.image).as_slice(), fmc.hash384.as_slice());
            }
            _ if matches!(chip.family(), nvgpu::hal::Family::Turing | nvgpu::hal::Family::Ga100) => {
                assert_eq!(loader.map(|l| l.desc), Some(RmFlcnBlDesc::RM_535_SEC2_GP10X), "{chip:?}");
                assert!(fmc.is_none());
            }
            _ => assert!(loader.is_none() && fmc.is_none(), "{chip:?}"),
        }
    }
    assert_eq!(
        extra_module_name(Chipset::TU117, ExtraImage::GenericBootloader).as_deref(),
        Some("tu102-generic_bootloader.bin")
    );
    assert_eq!(extra_module_name(Chipset::GH100, ExtraImage::FmcSignature).as_deref(), Some("gh100-fmc_sig.bin"));

    // A hash of the wrong size is refused by name.
    let mut broken = extracted_modules();
    broken.0.insert("gh100-fmc_hash.bin".into(), vec![0; 47]);
    let err = FirmwareBundle::fmc_images(&broken, Chipset::GH100).unwrap_err();
    assert!(err.to_string().starts_with("gh100-fmc_hash.bin: "), "{err}");
    // Without the extracted files the boot input is named as missing.
    broken.0.remove("tu102-generic_bootloader.bin");
    let err = FirmwareBundle::generic_bootloader(&broken, Chipset::TU102).unwrap_err();
    assert!(err.to_string().contains("tu102-generic_bootloader.bin"), "{err}");
}
