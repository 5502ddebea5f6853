//! Which GSP-RM images the model accepts: what booter_load (or, on Hopper, the FSP chain) finds
//! behind the radix3 table of `GspFwWprMeta::sysmemAddrOfRadix3Elf`.
//!
//! RM puts there the `.fwimage` section of the GSP-RM firmware container
//! (`_kgspPrepareGspRmBinaryImage`, `kernel_gsp.c`): for `gsp_tu10x.bin` (Turing, GA100) that is a
//! 64-bit RISC-V ELF, for `gsp_ga10x.bin` (GA10x, Ada, Hopper) a raw LIBOS 3 image. The model cannot
//! hold 20-40 MB of NVIDIA's firmware, so it recognises
//! - **NVIDIA's images** in [`KNOWN_GSP_RM_IMAGES`], recognised by size and FNV-1a 64 of their
//!   first 4 KiB page, then verified whole: every page read through the radix3 table, hashed
//!   with [`words_fnv64`] and compared (facts from Debian's `firmware-nvidia-gsp` 535.261.03-1,
//!   checked against the files by `tests/tests/firmware_real.rs`), and
//! - **the model's stand-in** ([`build_model_image`]): a header ([`MODEL_GSP_RM_MAGIC`], version,
//!   the LIBOS generation of the chip, the image size, an FNV-1a 32 checksum of everything after
//!   the header) and filler text. The whole image is read and checked.
//!
//! An image for the other LIBOS generation (a `tu10x` image on GA102, say) is refused as the
//! wrong chip's.

use alloc::vec::Vec;
use core::fmt;

use nvgpu::chip::Chipset;

use crate::booter::fnv1a64;
use crate::ucode::fnv1a32;

/// First 8 bytes of the model GSP-RM image.
pub const MODEL_GSP_RM_MAGIC: [u8; 8] = *b"NVSIMGSP";
/// Header version.
pub const MODEL_GSP_RM_VERSION: u32 = 1;
/// Bytes of the header: magic, version, LIBOS generation, size (u64), checksum, reserved.
pub const MODEL_GSP_RM_HEADER_SIZE: usize = 32;

/// Which GSP-RM build a chip runs: `gsp_tu10x.bin` (LIBOS 2) or `gsp_ga10x.bin` (LIBOS 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GspRmBuild {
    Tu10x,
    Ga10x,
}

impl GspRmBuild {
    /// The build RM 535 loads on `chipset` (`kgspGetBinArchiveGspRmBoot`, and DESIGN.md: GH100
    /// uses `gsp_ga10x.bin`); `None` for chips 535 does not support (Blackwell).
    pub fn for_chipset(chipset: Chipset) -> Option<Self> {
        crate::silicon::of(chipset.family()).gsp_rm_build
    }

    /// The LIBOS generation written in the model header.
    pub const fn libos(self) -> u32 {
        match self {
            Self::Tu10x => 2,
            Self::Ga10x => 3,
        }
    }
}

/// One of NVIDIA's GSP-RM images.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownGspRmImage {
    pub build: GspRmBuild,
    /// The container file (under `/lib/firmware/` in `firmware-nvidia-gsp` 535.261.03-1).
    pub file: &'static str,
    /// SHA-256 of the container file.
    pub file_sha256: &'static str,
    /// Bytes of its `.fwimage` section (`sizeOfRadix3Elf`).
    pub size: u64,
    /// FNV-1a 64 of the section's first 4 KiB.
    pub first_page_fnv64: u64,
    /// [`words_fnv64`] of the whole section: the model reads every page through the radix3
    /// table and refuses an image that differs anywhere.
    pub image_words_fnv64: u64,
}

/// FNV-1a 64 over little-endian 64-bit words (a short tail zero-padded to a word), started at
/// `hash` so that it runs page by page: a whole-image check eight times cheaper than FNV-1a over
/// bytes, which matters for a 38 MB image the model checks under QEMU's TCG.
pub fn words_fnv64(hash: u64, bytes: &[u8]) -> u64 {
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let mut h = words.fold(hash, |h, chunk| {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        (h ^ word).wrapping_mul(0x0100_0000_01b3)
    });
    if !tail.is_empty() {
        let mut word = [0u8; 8];
        word[..tail.len()].copy_from_slice(tail);
        h = (h ^ u64::from_le_bytes(word)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Where [`words_fnv64`] starts: FNV-1a 64's offset basis.
pub const WORDS_FNV64_START: u64 = 0xcbf2_9ce4_8422_2325;

/// NVIDIA's GSP-RM 535.261.03 images.
pub const KNOWN_GSP_RM_IMAGES: &[KnownGspRmImage] = &[
    KnownGspRmImage {
        build: GspRmBuild::Tu10x,
        file: "nvidia/535.261.03/gsp_tu10x.bin",
        file_sha256: "430f7d7bfd05e62822a3afb191745ab8d8eaa7ad616997f3970ec3d178339348",
        size: 0x016c_1350,
        first_page_fnv64: 0xdf07_1573_80e1_97e4,
        image_words_fnv64: 0x7ade_c030_1c2c_b74d,
    },
    KnownGspRmImage {
        build: GspRmBuild::Ga10x,
        file: "nvidia/535.261.03/gsp_ga10x.bin",
        file_sha256: "a3986835541326050c344349b2b935bb830b33a346e20d578e9a6b297c1ea6df",
        size: 0x0247_7000,
        first_page_fnv64: 0x4270_3d50_d5c2_2295,
        image_words_fnv64: 0x266d_f738_77b8_e6dd,
    },
];

/// Why an image was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GspRmImageError {
    /// Bytes of the image could not be read through the radix3 table.
    Unreadable { offset: u64 },
    /// Neither one of NVIDIA's images nor the model's.
    Unknown { first_page_fnv64: u64, size: u64 },
    /// A GSP-RM image of the other build (LIBOS generation) than this chip runs.
    WrongChip { found: GspRmBuild, expected: Option<GspRmBuild> },
    /// The model image's header is malformed (`what`).
    ModelHeader { what: &'static str },
    /// The model image's checksum does not match its bytes.
    ModelChecksum { expected: u32, found: u32 },
    /// One of NVIDIA's images by its size and first page, but not in the rest of its bytes.
    Altered { found: u64, expected: u64 },
}

impl fmt::Display for GspRmImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            GspRmImageError::Unreadable { offset } => write!(f, "image byte {offset:#x} unreadable"),
            GspRmImageError::Unknown { first_page_fnv64, size } => {
                write!(f, "unknown image ({size:#x} bytes, first page FNV-1a 64 {first_page_fnv64:#018x})")
            }
            GspRmImageError::WrongChip { found, expected } => {
                write!(f, "a {found:?} GSP-RM image, this chip runs {expected:?}")
            }
            GspRmImageError::ModelHeader { what } => write!(f, "model GSP-RM header: {what}"),
            GspRmImageError::ModelChecksum { expected, found } => {
                write!(f, "model GSP-RM checksum {found:#010x}, header says {expected:#010x}")
            }
            GspRmImageError::Altered { found, expected } => write!(
                f,
                "NVIDIA's GSP-RM image altered after its first page (whole-image hash {found:#018x}, \
                 NVIDIA's {expected:#018x})"
            ),
        }
    }
}

/// Checks the `size`-byte image `read(offset, buf)` reads is a GSP-RM image for `chipset`.
pub fn check(chipset: Chipset, size: u64, read: &dyn Fn(u64, &mut [u8]) -> bool) -> Result<(), GspRmImageError> {
    let expected = GspRmBuild::for_chipset(chipset);
    let mut first = alloc::vec![0u8; size.min(4096) as usize];
    if !read(0, &mut first) {
        return Err(GspRmImageError::Unreadable { offset: 0 });
    }
    if first.starts_with(&MODEL_GSP_RM_MAGIC) {
        return check_model(&first, size, expected, read);
    }
    let fnv = fnv1a64(&first);
    let Some(known) = KNOWN_GSP_RM_IMAGES.iter().find(|k| k.size == size && k.first_page_fnv64 == fnv) else {
        return Err(GspRmImageError::Unknown { first_page_fnv64: fnv, size });
    };
    if Some(known.build) != expected {
        return Err(GspRmImageError::WrongChip { found: known.build, expected });
    }
    // Every page, through the radix3 table, as the booter's copy into WPR would read it.
    let mut hash = WORDS_FNV64_START;
    let mut page = alloc::vec![0u8; 4096];
    let mut offset = 0u64;
    while offset < size {
        let take = (size - offset).min(4096) as usize;
        if !read(offset, &mut page[..take]) {
            return Err(GspRmImageError::Unreadable { offset });
        }
        hash = words_fnv64(hash, &page[..take]);
        offset += take as u64;
    }
    if hash != known.image_words_fnv64 {
        return Err(GspRmImageError::Altered { found: hash, expected: known.image_words_fnv64 });
    }
    Ok(())
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    bytes.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn check_model(
    first: &[u8],
    size: u64,
    expected: Option<GspRmBuild>,
    read: &dyn Fn(u64, &mut [u8]) -> bool,
) -> Result<(), GspRmImageError> {
    if first.len() < MODEL_GSP_RM_HEADER_SIZE {
        return Err(GspRmImageError::ModelHeader { what: "shorter than its header" });
    }
    if u32_at(first, 8) != MODEL_GSP_RM_VERSION {
        return Err(GspRmImageError::ModelHeader { what: "version" });
    }
    let found = match u32_at(first, 12) {
        2 => GspRmBuild::Tu10x,
        3 => GspRmBuild::Ga10x,
        _ => return Err(GspRmImageError::ModelHeader { what: "LIBOS generation" }),
    };
    let recorded = u64::from(u32_at(first, 16)) | (u64::from(u32_at(first, 20)) << 32);
    if recorded != size {
        return Err(GspRmImageError::ModelHeader { what: "image size differs from sizeOfRadix3Elf" });
    }
    if u32_at(first, 28) != 0 {
        return Err(GspRmImageError::ModelHeader { what: "reserved word not 0" });
    }
    if Some(found) != expected {
        return Err(GspRmImageError::WrongChip { found, expected });
    }
    // FNV-1a 32 over bytes [32, size), read page by page.
    let mut hash = 0x811C_9DC5u32;
    let mut offset = MODEL_GSP_RM_HEADER_SIZE as u64;
    let mut page = alloc::vec![0u8; 4096];
    while offset < size {
        let take = (size - offset).min(4096) as usize;
        if !read(offset, &mut page[..take]) {
            return Err(GspRmImageError::Unreadable { offset });
        }
        for &b in &page[..take] {
            hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        offset += take as u64;
    }
    let stored = u32_at(first, 24);
    if stored != hash {
        return Err(GspRmImageError::ModelChecksum { expected: stored, found: hash });
    }
    Ok(())
}

/// The model's stand-in GSP-RM image for `chipset`, `size` bytes (at least the header), or
/// `None` for chips 535 does not run.
pub fn build_model_image(chipset: Chipset, size: usize) -> Option<Vec<u8>> {
    let build = GspRmBuild::for_chipset(chipset)?;
    let size = size.max(MODEL_GSP_RM_HEADER_SIZE);
    const FILLER: &[u8] = b"NVIDIA GPU model (sim/): stand-in GSP-RM image, not NVIDIA's firmware. ";
    let mut image: Vec<u8> = FILLER.iter().copied().cycle().take(size).collect();
    image[..8].copy_from_slice(&MODEL_GSP_RM_MAGIC);
    image[8..12].copy_from_slice(&MODEL_GSP_RM_VERSION.to_le_bytes());
    image[12..16].copy_from_slice(&build.libos().to_le_bytes());
    image[16..24].copy_from_slice(&(size as u64).to_le_bytes());
    image[28..32].copy_from_slice(&0u32.to_le_bytes());
    let sum = fnv1a32(&image[MODEL_GSP_RM_HEADER_SIZE..]);
    image[24..28].copy_from_slice(&sum.to_le_bytes());
    Some(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(image: &[u8]) -> impl Fn(u64, &mut [u8]) -> bool + '_ {
        move |offset, buf| {
            let start = offset as usize;
            match image.get(start..start + buf.len()) {
                Some(src) => {
                    buf.copy_from_slice(src);
                    true
                }
                None => false,
            }
        }
    }

    #[test]
    fn model_images_check_per_chip() {
        let image = build_model_image(Chipset::GA102, 10_000).unwrap();
        assert_eq!(check(Chipset::GA102, image.len() as u64, &reader(&image)), Ok(()));
        assert_eq!(check(Chipset::GH100, image.len() as u64, &reader(&image)), Ok(()));
        assert!(matches!(
            check(Chipset::TU102, image.len() as u64, &reader(&image)),
            Err(GspRmImageError::WrongChip { found: GspRmBuild::Ga10x, .. })
        ));
        assert!(matches!(
            check(Chipset::GA102, image.len() as u64 - 1, &reader(&image)),
            Err(GspRmImageError::ModelHeader { .. })
        ));
        let mut bad = image.clone();
        bad[9000] ^= 1;
        assert!(matches!(
            check(Chipset::GA102, bad.len() as u64, &reader(&bad)),
            Err(GspRmImageError::ModelChecksum { .. })
        ));
        let zeros = alloc::vec![0u8; 8192];
        assert!(matches!(check(Chipset::GA102, 8192, &reader(&zeros)), Err(GspRmImageError::Unknown { .. })));
        assert!(build_model_image(Chipset::GB202, 100).is_none());
    }
}
