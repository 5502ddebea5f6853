//! `cargo xtask extract-firmware`: the GSP boot ucodes of the pinned release, 535.261.03, taken
//! from the arrays NVIDIA's RM compiles in (`src/nvidia/generated/g_bindata_*.c` of
//! open-gpu-kernel-modules, which `scripts/fetch-real-data.sh` unpacks), written as files under
//! `target/real-data/extracted-535.261.03/`. Nothing extracted is ever committed.
//!
//! # The input
//! Each array in a `g_bindata_*.c` file follows a comment block naming it (`FUNCTION:
//! kgspGetBinArchiveBooterLoadUcode_TU102("image_prod")`) and stating `COMPRESSION: YES|NO`,
//! `DATA SIZE (bytes): N` and `COMPRESSED SIZE (bytes): M|N/A`; the array is
//! `static BINDATA_CONST NvU8 <name>[] = { 0x.., ... };`, raw DEFLATE (no zlib or gzip header) when
//! compressed. A few descriptors are C structure initialisers instead
//! (`static const RM_FLCN_BL_DESC <name> = { ... };`, `DATA SIZE: sizeof(...)`). Every array is
//! checked against its comment: the stored byte count against `COMPRESSED SIZE` (or `DATA SIZE`
//! when stored plain), the inflated byte count against `DATA SIZE`. Only production-signed
//! (`_prod`) images are taken, as Debian's files are.
//!
//! # The output (`<out>/nvidia/<chip>/gsp/<image>-535.261.03.bin`, the distribution layout)
//! - `booter_load`, `booter_unload` (tu102, tu116, ga100, ga102, ad102), from
//!   `kgspBinArchiveBooter{Load,Unload}Ucode_<CHIP>_{image_prod,header_prod,sig_prod,patch_loc,
//!   patch_sig,patch_meta,num_sigs}_data`, in the `nvfw_bin_hdr` layout NVIDIA documents in
//!   `nouveau/nouveau_firmware_layout.ods` (and `nvgpu::firmware::BooterFirmware` reads):
//!   `nvfw_bin_hdr` (6 words: magic 0x10de, version 1, bin_size rounded up to 256, header offset
//!   24, image offset, image size); `nvfw_hs_header_v2` (9 words: signatures' offset and size, the
//!   offsets of patch_loc, patch_sig, the 12-byte patch metadata and its size, num_sigs, and the
//!   load header and its size 36); the signatures; patch_loc; patch_sig; fuse version, engine id
//!   mask, ucode id; num_sigs; the 36-byte `nvfw_hs_load_header_v2` (`header_prod`); the image.
//! - `bootloader` (tu102, ga100, ga102, ad102, gh100), from
//!   `kgspBinArchiveGspRmBoot_<CHIP>_ucode_{image,desc}[_prod]_data`: `nvfw_bin_hdr` (header
//!   offset 24), the `RM_RISCV_UCODE_DESC` (76 or 84 bytes), the image.
//! - `generic_bootloader` (tu102: Turing and GA100 use it), from
//!   `ksec2BinArchiveBlUcode_TU102_ucode_{image,desc}_data`: `nvfw_bin_hdr`, the six words of
//!   `RM_FLCN_BL_DESC` at 24, the image at 48 (`nvgpu::firmware::GenericBootloaderFirmware`).
//! - `fmc_image`, `fmc_hash`, `fmc_sig`, `fmc_pkey` (gh100), raw, from
//!   `kgspBinArchiveGspRmFmcGfwProdSigned_GH100_ucode_{image,hash,sig,pkey}_data`; the image's
//!   SHA-384 must be `ucode_hash`.
//!
//! Each written file is parsed back with the driver's own parser before it is kept. Files whose
//! bytes did not change are not rewritten, so a second run changes nothing; `SOURCES.txt` lists
//! every file with its size and the arrays it came from.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use crate::args::Args;
use crate::util::{error, target_dir, Context, Result};

/// The release the boot ucodes are extracted from: the GSP-RM release the driver is bound to.
pub const RELEASE: &str = nvgpu::chip::GSP_FIRMWARE_VERSION;

/// `NVFW_BIN_MAGIC`, `NVFW_BIN_VERSION`, `sizeof(nvfw_bin_hdr)`.
const BIN_MAGIC: u32 = nvgpu::firmware::NVFW_BIN_MAGIC;
const BIN_VERSION: u32 = nvgpu::firmware::NVFW_BIN_VERSION;
const BIN_HDR_SIZE: u32 = nvgpu::firmware::NVFW_BIN_HDR_SIZE as u32;
/// `sizeof(nvfw_hs_header_v2)`, of the patch metadata and of `nvfw_hs_load_header_v2`.
const HS_HEADER_SIZE: u32 = nvgpu::firmware::NVFW_HS_HEADER_V2_SIZE as u32;
const PATCH_META_SIZE: u32 = nvgpu::firmware::HS_PATCH_META_SIZE as u32;
const LOAD_HEADER_SIZE: u32 = nvgpu::firmware::NVFW_HS_LOAD_HEADER_V2_SIZE as u32;
/// Signature sizes: AES-128 on Turing, RSA-3K from GA100 on.
const AES_SIGNATURE_SIZE: usize = 16;
const RSA3K_SIGNATURE_SIZE: usize = 384;

const USAGE: &str = "\
cargo xtask extract-firmware [--source DIR] [--out DIR]

Extracts the GSP boot ucodes of NVIDIA's 535.261.03 release from the g_bindata_*.c arrays of its
open-gpu-kernel-modules tree (booter_load/unload, the GSP bootloaders, Turing's generic falcon
bootloader, Hopper's GSP-FMC with hash, signature and public key) into files in the distribution
layout, checked against the arrays' size comments and parsed back with nvgpu::firmware.
  --source DIR   the unpacked tree (default target/real-data/open-gpu-kernel-modules-535.261.03)
  --out DIR      where to write (default target/real-data/extracted-535.261.03)
";

/// The subcommand.
pub fn cmd_extract_firmware(mut args: Args) -> Result<()> {
    if args.flag("--help") | args.flag("-h") {
        print!("{USAGE}");
        return Ok(());
    }
    let real = target_dir().join("real-data");
    let source = args
        .value("--source")?
        .map(PathBuf::from)
        .unwrap_or_else(|| real.join(format!("open-gpu-kernel-modules-{RELEASE}")));
    let out =
        args.value("--out")?.map(PathBuf::from).unwrap_or_else(|| real.join(nvgpu::firmware::PINNED_BOOT_FIRMWARE_DIR));
    args.finish()?;
    let summary = extract(&source, &out)?;
    println!(
        "extract-firmware: {} files in {} ({} written, {} already up to date)",
        summary.files,
        out.display(),
        summary.written,
        summary.files - summary.written
    );
    Ok(())
}

/// What a run did.
pub struct Summary {
    pub files: usize,
    pub written: usize,
}

/// Extracts every boot ucode of the tree at `source` into `out`.
pub fn extract(source: &Path, out: &Path) -> Result<Summary> {
    check_release(source)?;
    let generated = source.join("src/nvidia/generated");
    let mut files: Vec<OutputFile> = Vec::new();

    for (chip, booter_sig_size) in [
        ("tu102", AES_SIGNATURE_SIZE),
        ("tu116", AES_SIGNATURE_SIZE),
        ("ga100", RSA3K_SIGNATURE_SIZE),
        ("ga102", RSA3K_SIGNATURE_SIZE),
        ("ad102", RSA3K_SIGNATURE_SIZE),
    ] {
        for load in ["Load", "Unload"] {
            files.push(booter(&generated, chip, load, booter_sig_size)?);
        }
    }
    for chip in ["tu102", "ga100", "ga102", "ad102", "gh100"] {
        files.push(bootloader(&generated, chip)?);
    }
    files.push(generic_bootloader(&generated)?);
    files.extend(gh100_fmc(&generated)?);

    let mut written = 0;
    let mut sources = format!(
        "Boot ucodes of NVIDIA open-gpu-kernel-modules {RELEASE}, extracted by `cargo xtask extract-firmware`\n\
         from {}.\nNVIDIA-licensed: never commit these files.\n\n",
        generated.display()
    );
    for file in &files {
        let path = out.join(&file.path);
        if write_if_changed(&path, &file.bytes)? {
            written += 1;
        }
        let _ = writeln!(sources, "{}  {} bytes\n    from {}", file.path, file.bytes.len(), file.sources);
    }
    write_if_changed(&out.join("SOURCES.txt"), sources.as_bytes())?;
    write_if_changed(&out.join(".extracted"), format!("{RELEASE}\n").as_bytes())?;
    Ok(Summary { files: files.len(), written })
}

fn check_release(source: &Path) -> Result<()> {
    let version_mk = source.join("version.mk");
    let text = fs::read_to_string(&version_mk).with_context(|| {
        format!(
            "reading {} (unpack NVIDIA's {RELEASE} source first: sudo scripts/fetch-real-data.sh)",
            version_mk.display()
        )
    })?;
    let found = text
        .lines()
        .find_map(|line| line.strip_prefix("NVIDIA_VERSION = "))
        .map(str::trim)
        .with_context(|| format!("{}: no NVIDIA_VERSION line", version_mk.display()))?;
    if found != RELEASE {
        return Err(error(format!("{} is release {found}, the driver is bound to {RELEASE}", source.display())));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Reading g_bindata_*.c.

/// One array of a bindata file, as stored.
#[derive(Debug)]
enum Entry {
    /// An `NvU8` array, inflated where it was compressed (and checked against its comment).
    Bytes(Vec<u8>),
    /// A structure initialiser: its type and the integers in it, in order.
    Struct { type_name: String, values: Vec<u64> },
}

/// The arrays of one `g_bindata_*.c` file.
struct Bindata {
    file: PathBuf,
    entries: BTreeMap<String, Entry>,
}

/// The comment block in front of an array.
#[derive(Default)]
struct Comment {
    compressed: Option<bool>,
    data_size: Option<String>,
    compressed_size: Option<String>,
}

impl Bindata {
    fn read(file: &Path) -> Result<Self> {
        let text = fs::read_to_string(file).with_context(|| {
            format!(
                "reading {} (is NVIDIA's {RELEASE} source unpacked? sudo scripts/fetch-real-data.sh)",
                file.display()
            )
        })?;
        let entries = parse_bindata(&text).map_err(|e| error(format!("{}: {e}", file.display())))?;
        Ok(Self { file: file.to_path_buf(), entries })
    }

    fn bytes(&self, name: &str) -> Result<&[u8]> {
        match self.entries.get(name) {
            Some(Entry::Bytes(bytes)) => Ok(bytes),
            Some(Entry::Struct { .. }) => {
                Err(error(format!("{}: {name} is a structure, not a byte array", self.file.display())))
            }
            None => Err(error(format!("{}: no array {name}", self.file.display()))),
        }
    }

    fn has(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    fn words<const N: usize>(&self, name: &str) -> Result<[u32; N]> {
        let bytes = self.bytes(name)?;
        if bytes.len() != 4 * N {
            return Err(error(format!(
                "{}: {name} is {} bytes, expected {} ({N} words)",
                self.file.display(),
                bytes.len(),
                4 * N
            )));
        }
        let mut words = [0u32; N];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(4)) {
            *word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        Ok(words)
    }

    fn structure(&self, name: &str, type_name: &str, fields: usize) -> Result<Vec<u32>> {
        let (found_type, values) = match self.entries.get(name) {
            Some(Entry::Struct { type_name, values }) => (type_name, values),
            Some(Entry::Bytes(_)) => {
                return Err(error(format!("{}: {name} is a byte array, not {type_name}", self.file.display())))
            }
            None => return Err(error(format!("{}: no structure {name}", self.file.display()))),
        };
        if found_type != type_name || values.len() != fields {
            return Err(error(format!(
                "{}: {name} is {found_type} with {} values, expected {type_name} with {fields}",
                self.file.display(),
                values.len()
            )));
        }
        values
            .iter()
            .map(|&v| {
                u32::try_from(v)
                    .map_err(|_| error(format!("{}: {name}: {v:#x} is not a 32-bit word", self.file.display())))
            })
            .collect()
    }

    /// `<file>: <array>, ...` for SOURCES.txt.
    fn cite(&self, names: &[&str]) -> String {
        let file = self.file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        format!("{file}: {}", names.join(", "))
    }
}

/// Every array of a bindata file's text, checked against its comment and inflated.
fn parse_bindata(text: &str) -> std::result::Result<BTreeMap<String, Entry>, String> {
    let mut entries = BTreeMap::new();
    let mut comment = Comment::default();
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let line_no = index + 1;
        let t = line.trim();
        if let Some(v) = t.strip_prefix("// COMPRESSION:") {
            comment.compressed = match v.trim() {
                "YES" => Some(true),
                "NO" => Some(false),
                other => return Err(format!("line {line_no}: COMPRESSION is '{other}', not YES or NO")),
            };
        } else if let Some(v) = t.strip_prefix("// DATA SIZE (bytes):") {
            comment.data_size = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("// COMPRESSED SIZE (bytes):") {
            comment.compressed_size = Some(v.trim().to_string());
        } else if let Some(rest) = t.strip_prefix("static BINDATA_CONST NvU8 ") {
            let name = rest.split('[').next().unwrap_or_default().trim().to_string();
            let stored = collect_until_close(&mut lines, |token| {
                let hex = token.strip_prefix("0x").ok_or_else(|| format!("'{token}' is not a 0x.. byte"))?;
                u8::from_str_radix(hex, 16).map_err(|e| format!("'{token}': {e}"))
            })
            .map_err(|e| format!("array {name} (line {line_no}): {e}"))?;
            let bytes = check_and_inflate(&name, stored, &std::mem::take(&mut comment))?;
            entries.insert(name, Entry::Bytes(bytes));
        } else if let Some(rest) = t.strip_prefix("static const ") {
            // `static const TYPE NAME = {` (archives are `static const BINDATA_ARCHIVE ...`).
            let mut words = rest.split_whitespace();
            let (Some(type_name), Some(name)) = (words.next(), words.next()) else { continue };
            if type_name == "BINDATA_ARCHIVE" || !rest.contains('=') {
                continue;
            }
            let values = collect_until_close(&mut lines, |token| {
                let parsed = match token.strip_prefix("0x").or_else(|| token.strip_prefix("0X")) {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => token.parse(),
                };
                parsed.map_err(|e| format!("'{token}' is not an integer: {e}"))
            })
            .map_err(|e| format!("structure {name} (line {line_no}): {e}"))?;
            let data_size = std::mem::take(&mut comment).data_size.unwrap_or_default();
            if data_size != format!("sizeof({name})") {
                return Err(format!("structure {name}: DATA SIZE is '{data_size}', expected sizeof({name})"));
            }
            entries.insert(name.to_string(), Entry::Struct { type_name: type_name.to_string(), values });
        }
    }
    Ok(entries)
}

/// The tokens up to the line holding `};`, separated by commas, braces and blanks, each parsed
/// by `parse`.
fn collect_until_close<'a, T>(
    lines: &mut impl Iterator<Item = (usize, &'a str)>,
    parse: impl Fn(&str) -> std::result::Result<T, String>,
) -> std::result::Result<Vec<T>, String> {
    let mut out = Vec::new();
    for (_, line) in lines {
        let (body, done) = match line.find("};") {
            Some(end) => (&line[..end], true),
            None => (line, false),
        };
        for token in body.split(|c: char| c == ',' || c == '{' || c == '}' || c.is_whitespace()) {
            if !token.is_empty() {
                out.push(parse(token)?);
            }
        }
        if done {
            return Ok(out);
        }
    }
    Err("no closing '};'".to_string())
}

fn size_field(what: &str, value: &Option<String>) -> std::result::Result<usize, String> {
    let text = value.as_deref().ok_or_else(|| format!("no {what} comment"))?;
    text.parse().map_err(|_| format!("{what} is '{text}', not a number"))
}

/// The array's bytes as RM uses them: the stored bytes checked against `COMPRESSED SIZE`, then
/// inflated (raw DEFLATE) and checked against `DATA SIZE`; or, stored plain, checked against
/// `DATA SIZE`.
fn check_and_inflate(name: &str, stored: Vec<u8>, comment: &Comment) -> std::result::Result<Vec<u8>, String> {
    let data_size = size_field("DATA SIZE", &comment.data_size).map_err(|e| format!("array {name}: {e}"))?;
    match comment.compressed {
        Some(true) => {
            let compressed_size =
                size_field("COMPRESSED SIZE", &comment.compressed_size).map_err(|e| format!("array {name}: {e}"))?;
            if stored.len() != compressed_size {
                return Err(format!(
                    "array {name}: {} bytes stored, COMPRESSED SIZE says {compressed_size}",
                    stored.len()
                ));
            }
            let inflated = miniz_oxide::inflate::decompress_to_vec_with_limit(&stored, data_size).map_err(|e| {
                format!("array {name}: raw DEFLATE stream does not inflate to DATA SIZE {data_size} bytes: {e}")
            })?;
            if inflated.len() != data_size {
                return Err(format!("array {name}: inflates to {} bytes, DATA SIZE says {data_size}", inflated.len()));
            }
            Ok(inflated)
        }
        Some(false) => {
            if stored.len() != data_size {
                return Err(format!("array {name}: {} bytes stored, DATA SIZE says {data_size}", stored.len()));
            }
            Ok(stored)
        }
        None => Err(format!("array {name}: no COMPRESSION comment")),
    }
}

// ---------------------------------------------------------------------------------------------
// Writing the files.

struct OutputFile {
    /// Relative to the output folder.
    path: String,
    bytes: Vec<u8>,
    /// `<g_bindata file>: <array>, <array>, ...`
    sources: String,
}

fn push_words(out: &mut Vec<u8>, words: &[u32]) {
    for word in words {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

fn u32_len(what: &str, len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| error(format!("{what}: {len} bytes do not fit a 32-bit size")))
}

/// `nvfw_bin_hdr`, then `headers` (the type-specific part, at offset 24), then `image`.
fn nvfw_bin_file(headers: &[u8], image: &[u8]) -> Result<Vec<u8>> {
    let data_offset = BIN_HDR_SIZE + u32_len("headers", headers.len())?;
    let data_size = u32_len("image", image.len())?;
    let total = data_offset.checked_add(data_size).context("file size overflows 32 bits")?;
    let bin_size = total.checked_next_multiple_of(256).context("file size overflows 32 bits")?;
    let mut file = Vec::with_capacity(total as usize);
    push_words(&mut file, &[BIN_MAGIC, BIN_VERSION, bin_size, BIN_HDR_SIZE, data_offset, data_size]);
    file.extend_from_slice(headers);
    file.extend_from_slice(image);
    Ok(file)
}

fn release_path(chip: &str, stem: &str) -> String {
    format!("nvidia/{chip}/gsp/{stem}-{RELEASE}.bin")
}

/// booter_load / booter_unload of `chip` (`load` is "Load" or "Unload").
fn booter(generated: &Path, chip: &str, load: &str, signature_size: usize) -> Result<OutputFile> {
    let chip_upper = chip.to_uppercase();
    let bindata =
        Bindata::read(&generated.join(format!("g_bindata_kgspGetBinArchiveBooter{load}Ucode_{chip_upper}.c")))?;
    let array = |part: &str| format!("kgspBinArchiveBooter{load}Ucode_{chip_upper}_{part}_data");
    let parts = ["image_prod", "header_prod", "sig_prod", "patch_loc", "patch_sig", "patch_meta", "num_sigs"];
    let image = bindata.bytes(&array("image_prod"))?;
    let load_header = bindata.bytes(&array("header_prod"))?;
    let signatures = bindata.bytes(&array("sig_prod"))?;
    let [patch_loc] = bindata.words::<1>(&array("patch_loc"))?;
    let [patch_sig] = bindata.words::<1>(&array("patch_sig"))?;
    let [fuse_version, engine_id_mask, ucode_id] = bindata.words::<3>(&array("patch_meta"))?;
    let [num_sigs] = bindata.words::<1>(&array("num_sigs"))?;
    let what = format!("{chip} booter_{}", load.to_lowercase());

    // What RM requires of the archive (`s_allocateUcodeFromBinArchive`, kernel_gsp_booter.c).
    if load_header.len() != LOAD_HEADER_SIZE as usize {
        return Err(error(format!(
            "{what}: header_prod is {} bytes, not nvfw_hs_load_header_v2's {LOAD_HEADER_SIZE}",
            load_header.len()
        )));
    }
    if num_sigs == 0 || signatures.len() != num_sigs as usize * signature_size {
        return Err(error(format!(
            "{what}: {} signature bytes for num_sigs {num_sigs} of {signature_size} bytes each",
            signatures.len()
        )));
    }
    if patch_sig != 0 {
        return Err(error(format!("{what}: patch_sig is {patch_sig}, RM requires 0")));
    }

    let signatures_size = u32_len("signatures", signatures.len())?;
    let signatures_offset = BIN_HDR_SIZE + HS_HEADER_SIZE;
    let patch_loc_offset = signatures_offset + signatures_size;
    let patch_sig_offset = patch_loc_offset + 4;
    let meta_offset = patch_sig_offset + 4;
    let num_sigs_offset = meta_offset + PATCH_META_SIZE;
    let load_header_offset = num_sigs_offset + 4;
    let mut headers = Vec::new();
    push_words(
        &mut headers,
        &[
            signatures_offset,
            signatures_size,
            patch_loc_offset,
            patch_sig_offset,
            meta_offset,
            PATCH_META_SIZE,
            num_sigs_offset,
            load_header_offset,
            LOAD_HEADER_SIZE,
        ],
    );
    headers.extend_from_slice(signatures);
    push_words(&mut headers, &[patch_loc, patch_sig, fuse_version, engine_id_mask, ucode_id, num_sigs]);
    headers.extend_from_slice(load_header);
    let bytes = nvfw_bin_file(&headers, image)?;
    nvgpu::firmware::BooterFirmware::parse(&bytes)
        .map_err(|e| error(format!("{what}: the written file does not parse as a booter: {e}")))?;
    Ok(OutputFile {
        path: release_path(chip, &format!("booter_{}", load.to_lowercase())),
        bytes,
        sources: bindata.cite(&parts.map(array).iter().map(String::as_str).collect::<Vec<_>>()),
    })
}

/// The GSP RISC-V bootloader (RM's "GspRmBoot") of `chip`; on GH100 RM's boot binary that the
/// GSP-FMC starts.
fn bootloader(generated: &Path, chip: &str) -> Result<OutputFile> {
    let chip_upper = chip.to_uppercase();
    let bindata = Bindata::read(&generated.join(format!("g_bindata_kgspGetBinArchiveGspRmBoot_{chip_upper}.c")))?;
    // GA102 and later have debug and production images; Turing and GA100 one of each.
    let prod = format!("kgspBinArchiveGspRmBoot_{chip_upper}_ucode_image_prod_data");
    let (image_name, desc_name) = if bindata.has(&prod) {
        (prod, format!("kgspBinArchiveGspRmBoot_{chip_upper}_ucode_desc_prod_data"))
    } else {
        (
            format!("kgspBinArchiveGspRmBoot_{chip_upper}_ucode_image_data"),
            format!("kgspBinArchiveGspRmBoot_{chip_upper}_ucode_desc_data"),
        )
    };
    let image = bindata.bytes(&image_name)?;
    let desc = bindata.bytes(&desc_name)?;
    if desc.len() != nvgpu::firmware::RM_RISCV_UCODE_DESC_SIZE
        && desc.len() != nvgpu::firmware::RM_RISCV_UCODE_DESC_SHORT_SIZE
    {
        return Err(error(format!(
            "{chip} bootloader: {desc_name} is {} bytes, not an RM_RISCV_UCODE_DESC (76 or 84)",
            desc.len()
        )));
    }
    let bytes = nvfw_bin_file(desc, image)?;
    nvgpu::firmware::BootloaderFirmware::parse(&bytes)
        .map_err(|e| error(format!("{chip} bootloader: the written file does not parse as a GSP bootloader: {e}")))?;
    Ok(OutputFile { path: release_path(chip, "bootloader"), bytes, sources: bindata.cite(&[&image_name, &desc_name]) })
}

/// NVIDIA's generic falcon bootloader (`ksec2GetBinArchiveBlUcode_TU102`).
fn generic_bootloader(generated: &Path) -> Result<OutputFile> {
    let bindata = Bindata::read(&generated.join("g_bindata_ksec2GetBinArchiveBlUcode_TU102.c"))?;
    let image_name = "ksec2BinArchiveBlUcode_TU102_ucode_image_data";
    let desc_name = "ksec2BinArchiveBlUcode_TU102_ucode_desc_data";
    let image = bindata.bytes(image_name)?;
    // RM_FLCN_BL_DESC { blStartTag, blDmemDescLoadOff, blImgHeader { 4 words } }.
    let desc = bindata.structure(desc_name, "RM_FLCN_BL_DESC", 6)?;
    let mut headers = Vec::new();
    push_words(&mut headers, &desc);
    let bytes = nvfw_bin_file(&headers, image)?;
    nvgpu::firmware::GenericBootloaderFirmware::parse(&bytes)
        .map_err(|e| error(format!("generic bootloader: the written file does not parse: {e}")))?;
    Ok(OutputFile {
        path: release_path("tu102", "generic_bootloader"),
        bytes,
        sources: bindata.cite(&[image_name, desc_name]),
    })
}

/// Hopper's production-signed GSP-FMC and its credentials, raw.
fn gh100_fmc(generated: &Path) -> Result<Vec<OutputFile>> {
    let bindata = Bindata::read(&generated.join("g_bindata_kgspGetBinArchiveGspRmFmcGfwProdSigned_GH100.c"))?;
    let mut files = Vec::new();
    for (part, stem, size) in [
        ("image", "fmc_image", None),
        ("hash", "fmc_hash", Some(48)),
        ("sig", "fmc_sig", Some(RSA3K_SIGNATURE_SIZE)),
        ("pkey", "fmc_pkey", Some(RSA3K_SIGNATURE_SIZE)),
    ] {
        let name = format!("kgspBinArchiveGspRmFmcGfwProdSigned_GH100_ucode_{part}_data");
        let bytes = bindata.bytes(&name)?;
        if size.is_some_and(|size| size != bytes.len()) || bytes.is_empty() {
            return Err(error(format!("GH100 GSP-FMC: {name} is {} bytes, expected {size:?}", bytes.len())));
        }
        files.push(OutputFile {
            path: release_path("gh100", stem),
            bytes: bytes.to_vec(),
            sources: bindata.cite(&[&name]),
        });
    }
    // The FSP checks the image against this hash; a mismatch means the arrays were misread.
    if let [image, hash, ..] = &files[..] {
        let digest = <sha2::Sha384 as sha2::Digest>::digest(&image.bytes);
        if digest.as_slice() != hash.bytes.as_slice() {
            return Err(error("GH100 GSP-FMC: the image's SHA-384 is not ucode_hash (the arrays were misread)"));
        }
    }
    Ok(files)
}

/// Writes `bytes` to `path` unless it already holds them (through a temporary file, so a reader
/// never sees half a file); whether it wrote.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool> {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    let dir = path.parent().with_context(|| format!("{} has no parent folder", path.display()))?;
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
#if defined(BINDATA_INCLUDE_DATA)
//
// FUNCTION: kfoo(\"ucode_image\")
// COMPRESSION: YES
// DATA SIZE (bytes): 8
// COMPRESSED SIZE (bytes): 5
//
static BINDATA_CONST NvU8 kfoo_image_data[] = 
{
    0x63, 0x60, 0x80,
    0x00, 0x00,
};
#endif
// COMPRESSION: NO
// DATA SIZE (bytes): 4
// COMPRESSED SIZE (bytes): N/A
static BINDATA_CONST NvU8 kfoo_loc_data[] = 
{
    0x00, 0x82, 0x00, 0x00,
};
// COMPRESSION: NO
// DATA SIZE (bytes): sizeof(kfoo_desc_data)
// COMPRESSED SIZE (bytes): N/A
static const RM_FLCN_BL_DESC kfoo_desc_data = {
    0xfd, 
    0, 
    {
        0x0, 
        0x200, 
        0x200, 
        0x100  
    }
};
static const BINDATA_ARCHIVE __kfoo =
{
    2,  // entryNum
};
";

    #[test]
    fn parses_inflates_and_checks_arrays() {
        let entries = parse_bindata(SAMPLE).unwrap();
        // Eight zero bytes, raw DEFLATE (fixed Huffman).
        match &entries["kfoo_image_data"] {
            Entry::Bytes(b) => assert_eq!(b, &[0u8; 8]),
            other => panic!("{other:?}"),
        }
        match &entries["kfoo_loc_data"] {
            Entry::Bytes(b) => assert_eq!(b, &[0, 0x82, 0, 0]),
            other => panic!("{other:?}"),
        }
        match &entries["kfoo_desc_data"] {
            Entry::Struct { type_name, values } => {
                assert_eq!(type_name, "RM_FLCN_BL_DESC");
                assert_eq!(values, &[0xfd, 0, 0, 0x200, 0x200, 0x100]);
            }
            other => panic!("{other:?}"),
        }
        assert!(!entries.contains_key("__kfoo"));
    }

    #[test]
    fn size_comments_are_enforced() {
        let wrong_data = SAMPLE.replace("DATA SIZE (bytes): 8", "DATA SIZE (bytes): 9");
        let e = parse_bindata(&wrong_data).unwrap_err();
        assert!(e.contains("kfoo_image_data") && e.contains("inflates to 8 bytes, DATA SIZE says 9"), "{e}");
        let shorter = SAMPLE.replace("DATA SIZE (bytes): 8", "DATA SIZE (bytes): 7");
        let e = parse_bindata(&shorter).unwrap_err();
        assert!(e.contains("does not inflate to DATA SIZE 7 bytes"), "{e}");
        let wrong_compressed = SAMPLE.replace("COMPRESSED SIZE (bytes): 5", "COMPRESSED SIZE (bytes): 6");
        let e = parse_bindata(&wrong_compressed).unwrap_err();
        assert!(e.contains("5 bytes stored, COMPRESSED SIZE says 6"), "{e}");
        let wrong_plain = SAMPLE.replace("DATA SIZE (bytes): 4", "DATA SIZE (bytes): 3");
        let e = parse_bindata(&wrong_plain).unwrap_err();
        assert!(e.contains("kfoo_loc_data") && e.contains("DATA SIZE says 3"), "{e}");
        let bad_byte = SAMPLE.replace("0x82", "0xZZ");
        assert!(parse_bindata(&bad_byte).unwrap_err().contains("0xZZ"));
    }

    #[test]
    fn nvfw_bin_header_layout() {
        let file = nvfw_bin_file(&[1, 2, 3, 4], &[9; 300]).unwrap();
        let word = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
        assert_eq!((word(0), word(4), word(8), word(12), word(16), word(20)), (0x10de, 1, 512, 24, 28, 300));
        assert_eq!(file.len(), 328, "not padded to bin_size, as NVIDIA's script writes it");
    }
}
