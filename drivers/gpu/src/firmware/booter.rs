//! HS (heavy-secure) falcon ucode files: `booter_load`, `booter_unload` (and the scrubber, which
//! shares the layout). SEC2 runs booter_load to put GSP-RM into WPR2 and start it (Turing..Ada).
//!
//! File layout (`nouveau/extract-firmware-nouveau.py` and `nouveau/nouveau_firmware_layout.ods`,
//! NVIDIA open-gpu-kernel-modules 535.261.03), every offset absolute in the file:
//! ```text
//! 0x00  nvfw_bin_hdr            (bin_hdr.rs)
//! 0x18  nvfw_hs_header_v2       9 words: where the pieces below are
//! 0x3c  signatures              num_sigs x sig_size (16 bytes AES on Turing, 384 RSA-3072 later)
//!       patch_loc[1]            image offset where the chosen signature is patched in
//!       patch_sig[1]            signature index to patch (NVIDIA requires 0)
//!       meta: fuse_ver, engine_id, ucode_id
//!       num_sigs
//!       nvfw_hs_load_header_v2  9 words: OS code/data and the one application's code/data
//!       ucode image             at nvfw_bin_hdr.data_offset
//! ```
//! The content of each piece and the checks come from how NVIDIA's driver consumes the same
//! ucode from its compiled-in archive: `src/nvidia/src/kernel/gpu/gsp/kernel_gsp_booter.c`
//! (`s_allocateUcodeFromBinArchive`: the 9-word load header, `numApps == 1`, `patchSig == 0`,
//! `numSigs != 0`, signatures a multiple of `numSigs`; `s_patchBooterUcodeSignature`: signature
//! index `numSigs - 1 - fuseVer`, patch location inside the image).

use alloc::vec::Vec;
use core::mem::size_of;

use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::bin_hdr::BinHeader;
use super::error::{check_within, slice, struct_at, FirmwareError, Result};

/// `sizeof(nvfw_hs_header_v2)`.
pub const NVFW_HS_HEADER_V2_SIZE: usize = 36;
/// `sizeof(nvfw_hs_load_header_v2)` with one application: the `header` struct of
/// `s_allocateUcodeFromBinArchive` (`kernel_gsp_booter.c`).
pub const NVFW_HS_LOAD_HEADER_V2_SIZE: usize = 36;
/// Size of the patch metadata (`patchMeta` in `s_allocateUcodeFromBinArchive`: fuseVer,
/// engineId, ucodeId).
pub const HS_PATCH_META_SIZE: usize = 12;

#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct HsHeaderV2Raw {
    sig_prod_offset: U32,
    sig_prod_size: U32,
    patch_loc: U32,
    patch_sig: U32,
    meta_data_offset: U32,
    meta_data_size: U32,
    num_sig: U32,
    header_offset: U32,
    header_size: U32,
}

#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct HsPatchMetaRaw {
    fuse_ver: U32,
    engine_id: U32,
    ucode_id: U32,
}

#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct HsLoadHeaderV2Raw {
    os_code_offset: U32,
    os_code_size: U32,
    os_data_offset: U32,
    os_data_size: U32,
    num_apps: U32,
    app_code_offset: U32,
    app_code_size: U32,
    app_data_offset: U32,
    app_data_size: U32,
}

const _: () = assert!(size_of::<HsHeaderV2Raw>() == NVFW_HS_HEADER_V2_SIZE);
const _: () = assert!(size_of::<HsPatchMetaRaw>() == HS_PATCH_META_SIZE);
const _: () = assert!(size_of::<HsLoadHeaderV2Raw>() == NVFW_HS_LOAD_HEADER_V2_SIZE);

/// `nvfw_hs_header_v2`: file offsets (and sizes) of the pieces of an HS ucode file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HsHeaderV2 {
    /// `sig_prod_offset`: the production signatures.
    pub sig_prod_offset: u32,
    /// `sig_prod_size`: all signatures together (`num_sigs * sig_size`).
    pub sig_prod_size: u32,
    /// `patch_loc`: offset of the patch location array (one word).
    pub patch_loc_offset: u32,
    /// `patch_sig`: offset of the patch signature index array (one word).
    pub patch_sig_offset: u32,
    /// `meta_data_offset`: offset of fuse version, engine id, ucode id.
    pub meta_data_offset: u32,
    /// `meta_data_size`: [`HS_PATCH_META_SIZE`].
    pub meta_data_size: u32,
    /// `num_sig`: offset of the signature count.
    pub num_sigs_offset: u32,
    /// `header_offset`: offset of the [`HsLoadHeaderV2`].
    pub load_header_offset: u32,
    /// `header_size`: [`NVFW_HS_LOAD_HEADER_V2_SIZE`].
    pub load_header_size: u32,
}

/// The signature patch metadata (`patchMeta`, `kernel_gsp_booter.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HsPatchMeta {
    /// `fuseVer`: the ucode's own fuse version (the highest signature it carries is for it).
    pub fuse_version: u32,
    /// `engineId`: the falcon engines it may run on (`engineIdMask`).
    pub engine_id_mask: u32,
    /// `ucodeId`: which fuse version register the driver reads to pick the signature.
    pub ucode_id: u32,
}

/// `nvfw_hs_load_header_v2` with its one application: where OS and application code and data
/// lie in the ucode image (offsets relative to the image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HsLoadHeaderV2 {
    pub os_code_offset: u32,
    pub os_code_size: u32,
    pub os_data_offset: u32,
    pub os_data_size: u32,
    /// `num_apps`: 1 (the only value NVIDIA's driver accepts).
    pub num_apps: u32,
    pub app_code_offset: u32,
    pub app_code_size: u32,
    pub app_data_offset: u32,
    pub app_data_size: u32,
}

/// A parsed and checked HS ucode file (booter_load, booter_unload).
///
/// Borrows the file: the image and signatures are slices of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BooterFirmware<'a> {
    pub bin: BinHeader,
    pub hs: HsHeaderV2,
    pub load: HsLoadHeaderV2,
    /// `patch_loc[0]`: image offset where the chosen signature goes.
    pub patch_location: u32,
    /// `patch_sig[0]`: always 0.
    pub patch_signature_index: u32,
    pub meta: HsPatchMeta,
    /// `num_sigs`: how many signatures the file carries (one per fuse version).
    pub num_signatures: u32,
    signatures: &'a [u8],
    image: &'a [u8],
}

fn bad(field: &'static str, value: u32, expected: &'static str) -> FirmwareError {
    FirmwareError::BadField { structure: "nvfw_hs_header_v2", field, value: value.into(), expected }
}

fn word_at(file: &[u8], what: &'static str, offset: u32) -> Result<u32> {
    struct_at::<U32>(file, what, offset.into()).map(|w| w.get())
}

impl<'a> BooterFirmware<'a> {
    /// Parses an HS ucode file and checks it the way NVIDIA's driver checks the same ucode.
    pub fn parse(file: &'a [u8]) -> Result<Self> {
        let bin = BinHeader::parse(file)?;
        let raw: HsHeaderV2Raw = struct_at(file, "nvfw_hs_header_v2", bin.header_offset.into())?;
        let hs = HsHeaderV2 {
            sig_prod_offset: raw.sig_prod_offset.get(),
            sig_prod_size: raw.sig_prod_size.get(),
            patch_loc_offset: raw.patch_loc.get(),
            patch_sig_offset: raw.patch_sig.get(),
            meta_data_offset: raw.meta_data_offset.get(),
            meta_data_size: raw.meta_data_size.get(),
            num_sigs_offset: raw.num_sig.get(),
            load_header_offset: raw.header_offset.get(),
            load_header_size: raw.header_size.get(),
        };
        if hs.meta_data_size as usize != HS_PATCH_META_SIZE {
            return Err(bad("meta_data_size", hs.meta_data_size, "12 (fuse version, engine id, ucode id)"));
        }
        if hs.load_header_size as usize != NVFW_HS_LOAD_HEADER_V2_SIZE {
            return Err(bad("header_size", hs.load_header_size, "36 (nvfw_hs_load_header_v2 with one app)"));
        }

        let signatures = slice(file, "signatures", hs.sig_prod_offset.into(), hs.sig_prod_size.into())?;
        let patch_location = word_at(file, "patch_loc", hs.patch_loc_offset)?;
        let patch_signature_index = word_at(file, "patch_sig", hs.patch_sig_offset)?;
        let meta_raw: HsPatchMetaRaw = struct_at(file, "patch metadata", hs.meta_data_offset.into())?;
        let meta = HsPatchMeta {
            fuse_version: meta_raw.fuse_ver.get(),
            engine_id_mask: meta_raw.engine_id.get(),
            ucode_id: meta_raw.ucode_id.get(),
        };
        let num_signatures = word_at(file, "num_sigs", hs.num_sigs_offset)?;
        let load_raw: HsLoadHeaderV2Raw = struct_at(file, "nvfw_hs_load_header_v2", hs.load_header_offset.into())?;
        let load = HsLoadHeaderV2 {
            os_code_offset: load_raw.os_code_offset.get(),
            os_code_size: load_raw.os_code_size.get(),
            os_data_offset: load_raw.os_data_offset.get(),
            os_data_size: load_raw.os_data_size.get(),
            num_apps: load_raw.num_apps.get(),
            app_code_offset: load_raw.app_code_offset.get(),
            app_code_size: load_raw.app_code_size.get(),
            app_data_offset: load_raw.app_data_offset.get(),
            app_data_size: load_raw.app_data_size.get(),
        };
        let image = bin.image(file)?;

        if patch_signature_index != 0 {
            return Err(bad("patch_sig[0]", patch_signature_index, "0 (kernel_gsp_booter.c)"));
        }
        if num_signatures == 0 {
            return Err(bad("num_sigs", 0, "at least one signature"));
        }
        if hs.sig_prod_size == 0 || !hs.sig_prod_size.is_multiple_of(num_signatures) {
            return Err(bad("sig_prod_size", hs.sig_prod_size, "a non-zero multiple of num_sigs"));
        }
        if load.num_apps != 1 {
            return Err(FirmwareError::BadField {
                structure: "nvfw_hs_load_header_v2",
                field: "num_apps",
                value: load.num_apps.into(),
                expected: "1 (kernel_gsp_booter.c)",
            });
        }
        // What SEC2 loads: the application code into IMEM, the OS data into DMEM.
        if load.app_code_size == 0 || load.os_data_size == 0 {
            return Err(FirmwareError::BadField {
                structure: "nvfw_hs_load_header_v2",
                field: if load.app_code_size == 0 { "app_code_size" } else { "os_data_size" },
                value: 0,
                expected: "a non-empty region",
            });
        }
        let limit = image.len();
        check_within("OS code", load.os_code_offset, load.os_code_size, "ucode image", limit)?;
        check_within("OS data", load.os_data_offset, load.os_data_size, "ucode image", limit)?;
        check_within("application code", load.app_code_offset, load.app_code_size, "ucode image", limit)?;
        check_within("application data", load.app_data_offset, load.app_data_size, "ucode image", limit)?;

        // num_sigs != 0, checked above.
        let signature_size =
            hs.sig_prod_size.checked_div(num_signatures).ok_or(bad("num_sigs", 0, "at least one signature"))?;
        // s_patchBooterUcodeSignature: imageSize > patchLoc and imageSize - patchLoc > sigSize.
        if limit.checked_sub(patch_location as usize).is_none_or(|rest| rest <= signature_size as usize) {
            return Err(FirmwareError::OutOfRange {
                what: "signature patch location",
                offset: patch_location.into(),
                len: signature_size.into(),
                within: "ucode image",
                limit: limit as u64,
            });
        }
        // The patch lands in DMEM at patch_loc - os_data_offset (hsSigDmemAddr).
        if patch_location < load.os_data_offset {
            return Err(bad(
                "patch_loc[0]",
                patch_location,
                "an offset inside the OS data (at or after os_data_offset)",
            ));
        }

        Ok(BooterFirmware {
            bin,
            hs,
            load,
            patch_location,
            patch_signature_index,
            meta,
            num_signatures,
            signatures,
            image,
        })
    }

    /// The ucode image, unpatched.
    pub fn image(&self) -> &'a [u8] {
        self.image
    }

    /// All signatures, back to back.
    pub fn signatures(&self) -> &'a [u8] {
        self.signatures
    }

    /// Size of one signature (16 for Turing's AES signatures, 384 for RSA-3072).
    pub fn signature_size(&self) -> u32 {
        // `parse` refuses num_sigs == 0; the fields are public, so do not divide by zero anyway.
        self.hs.sig_prod_size.checked_div(self.num_signatures).unwrap_or(0)
    }

    /// Signature number `index` of the file.
    pub fn signature(&self, index: u32) -> Option<&'a [u8]> {
        let size = self.signature_size() as usize;
        let start = (index as usize).checked_mul(size)?;
        self.signatures.get(start..start.checked_add(size)?)
    }

    /// The signature for a chip whose fuse version register (`ucode_id`) reads `fuse_version`:
    /// with one signature, that one; otherwise number `num_sigs - 1 - fuse_version`
    /// (`s_patchBooterUcodeSignature`).
    pub fn signature_for_fuse_version(&self, fuse_version: u32) -> Result<&'a [u8]> {
        let missing = FirmwareError::NoSignatureForFuseVersion { fuse_version, signatures: self.num_signatures };
        let index = if self.num_signatures > 1 {
            // num_sigs - 1 - fuse_version, or no signature when fuse_version >= num_sigs.
            match self.num_signatures.checked_sub(fuse_version).and_then(|n| n.checked_sub(1)) {
                Some(index) => index,
                None => return Err(missing),
            }
        } else {
            0
        };
        self.signature(index).ok_or(missing)
    }

    /// DMEM offset of the patched signature (`hsSigDmemAddr = patchLoc - dataOffset`).
    pub fn signature_dmem_offset(&self) -> u32 {
        self.patch_location.saturating_sub(self.load.os_data_offset)
    }

    /// A copy of the image with the signature for `fuse_version` patched in at
    /// [`Self::patch_location`]: what the driver hands to SEC2.
    pub fn patched_image(&self, fuse_version: u32) -> Result<Vec<u8>> {
        let signature = self.signature_for_fuse_version(fuse_version)?;
        let mut image = self.image.to_vec();
        let start = self.patch_location as usize;
        let dest = start.checked_add(signature.len()).and_then(|end| image.get_mut(start..end)).ok_or(
            FirmwareError::OutOfRange {
                what: "signature patch location",
                offset: self.patch_location.into(),
                len: signature.len() as u64,
                within: "ucode image",
                limit: self.image.len() as u64,
            },
        )?;
        dest.copy_from_slice(signature);
        Ok(image)
    }
}
