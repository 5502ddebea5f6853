//! Heavy-secure (HS) ucode: where its signature is patched into the image, which signature a
//! chip takes, and what the boot ROM is told on GA102 and later.
//!
//! An HS image ships unsigned at one location (`patch_loc`) and carries, beside it, one signature
//! per fuse version; the driver copies the one the chip's fuses select into the image before
//! loading it, and on GA102+ tells the boot ROM (BROM) where in DMEM the signature landed, which
//! engines and ucode id it was signed for, and the algorithm. Follows RM 535.261.03:
//! `s_patchBooterUcodeSignature` and `s_allocateUcodeFromBinArchive` (`kernel_gsp_booter.c`:
//! `patch_loc`, `patch_sig`, `patch_meta`, `num_sigs`), the FWSEC v3 patch in
//! `kernel_gsp_frts_tu102.c` (signature at DMEM `PKCDataOffset`, DMEM following IMEM in the
//! image), and the BROM programming of `kgspExecuteHsFalcon_GA102`.

use super::HostBooted;
use super::{Falcon, FalconError, Result};
use crate::fwsec::FalconUcodeDescV3;
use crate::hal::FalconLayout;
use crate::hw::falcon2::{
    ModSelAlgo, NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID, NV_PFALCON2_FALCON_BROM_ENGIDMASK,
    NV_PFALCON2_FALCON_BROM_PARAADDR, NV_PFALCON2_FALCON_MOD_SEL,
};
use crate::hw::RegisterIo;
use crate::platform::Clock;

/// Where an HS image's signature goes: `patch_loc` bytes into the image, inside the data that
/// becomes DMEM (which starts `data_offset` bytes into the image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HsSignatureLocation {
    /// Byte offset of the signature in the whole image (RM's `patch_loc`).
    pub patch_loc: u32,
    /// Byte offset of the DMEM image in the whole image.
    pub data_offset: u32,
}

impl HsSignatureLocation {
    /// FWSEC with a v3 descriptor: DMEM follows the `imem_load_size` bytes of code, and the
    /// signature sits at DMEM offset `pkc_data_offset`.
    pub fn from_fwsec_v3(desc: &FalconUcodeDescV3) -> Result<Self> {
        let patch_loc = desc
            .imem_load_size
            .checked_add(desc.pkc_data_offset)
            .ok_or(FalconError::BadUcodeLayout { what: "FWSEC signature offset overflows" })?;
        Ok(Self { patch_loc, data_offset: desc.imem_load_size })
    }

    /// A booter-style image: `patch_loc` from the firmware's `patch_loc` entry, the DMEM image
    /// at the header's OS data offset. The signature must lie in the data.
    pub fn from_patch_loc(patch_loc: u32, data_offset: u32) -> Result<Self> {
        if patch_loc < data_offset {
            return Err(FalconError::BadUcodeLayout { what: "signature patch location precedes the data" });
        }
        Ok(Self { patch_loc, data_offset })
    }

    /// Where the signature is in DMEM: what the boot ROM is given (`BROM_PARAADDR(0)`).
    pub fn dmem_offset(&self) -> u32 {
        self.patch_loc.saturating_sub(self.data_offset)
    }
}

/// Copies `signature` into `image` at `patch_loc`, checking it fits.
pub fn patch_signature(image: &mut [u8], patch_loc: u32, signature: &[u8]) -> Result<()> {
    let start = patch_loc as usize;
    let too_small = FalconError::ImageTooSmall {
        what: "the signature",
        offset: patch_loc.into(),
        len: signature.len() as u64,
        image_len: image.len() as u64,
    };
    let end = start.checked_add(signature.len()).ok_or(too_small)?;
    image.get_mut(start..end).ok_or(too_small)?.copy_from_slice(signature);
    Ok(())
}

/// Which of a booter's `num_sigs` signatures (stored newest fuse version last) matches a chip
/// whose ucode fuse version is `fuse_version`, as `s_patchBooterUcodeSignature` chooses. (FWSEC
/// selects by its version bitmap instead: `fwsec::Fwsec::signature_for_fuse_version`.)
pub fn booter_signature_index(num_sigs: u32, fuse_version: u32) -> Result<u32> {
    match num_sigs {
        0 => Err(FalconError::BadUcodeLayout { what: "the image carries no signatures" }),
        1 => Ok(0),
        n if fuse_version < n => Ok(n - 1 - fuse_version),
        n => Err(FalconError::NoSignatureForFuseVersion { fuse_version, available: n }),
    }
}

/// What the boot ROM of a GA102+ falcon needs to verify an HS image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BromParams {
    /// DMEM offset of the patched signature ([`HsSignatureLocation::dmem_offset`]).
    pub signature_dmem_offset: u32,
    /// Engines the image is signed for.
    pub engine_id_mask: u32,
    /// The ucode's id (selects its fuse version).
    pub ucode_id: u8,
}

impl BromParams {
    /// The parameters of FWSEC with a v3 descriptor.
    pub fn from_fwsec_v3(desc: &FalconUcodeDescV3) -> Self {
        Self {
            signature_dmem_offset: desc.pkc_data_offset,
            engine_id_mask: desc.engine_id_mask.into(),
            ucode_id: desc.ucode_id,
        }
    }
}

impl<R: RegisterIo, C: Clock, E: HostBooted> Falcon<R, C, E> {
    /// Programs the boot ROM for an HS image: signature location, engine mask, ucode id and
    /// RSA-3072. GA102 and later only (Turing and GA100 verify HS code without these).
    pub fn program_brom(&self, params: &BromParams) -> Result<()> {
        let falcon2 = match (self.layout(), self.unit.riscv_base) {
            (FalconLayout::Ga102, Some(base)) => base,
            _ => return Err(self.unsupported("boot ROM PKC parameters (GA102 and later)")),
        };
        NV_PFALCON2_FALCON_BROM_PARAADDR(params.signature_dmem_offset).write(&self.io, falcon2, 0);
        NV_PFALCON2_FALCON_BROM_ENGIDMASK(params.engine_id_mask).write(&self.io, falcon2);
        NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::default()
            .with(NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::VAL, params.ucode_id)
            .write(&self.io, falcon2);
        NV_PFALCON2_FALCON_MOD_SEL::default()
            .with(NV_PFALCON2_FALCON_MOD_SEL::ALGO, ModSelAlgo::Rsa3k)
            .write(&self.io, falcon2);
        Ok(())
    }
}
