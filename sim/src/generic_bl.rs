//! NVIDIA's generic falcon bootloader on a model falcon: what it does when the driver starts it,
//! as far as the driver can observe it (Turing and GA100 run their v2 FWSEC through it).
//!
//! The model cannot run NVIDIA's falcon code. A start whose `BOOTVEC` is a known loader's
//! entry (`blStartTag << 8`) and whose IMEM there holds that loader's code (FNV-1a 64 of
//! `blCodeSize` bytes fetched through the tags) runs the loader as RM's
//! `s_prepareHsFalconWithLoader` (`kernel_gsp_falcon_tu102.c`, 535.261.03) sets it up: it reads
//! `RM_FLCN_BL_DMEM_DESC` (`rmflcnbl.h`, `nvgpu::hw::fw::rmflcnbl::RmFlcnBlDmemDesc`) from DMEM
//! at `blDmemDescLoadOff`, then, through FBIF context `ctxDma` (which must be a physical
//! system-memory aperture with `FBIF_CTL_ALLOW_PHYS_NO_CTX` set and `DMACTL_REQUIRE_CTX` clear,
//! as for any falcon DMA), copies in whole 256-byte blocks
//! - the non-secure code, `nonSecureCodeSize` bytes from `codeDmaBase + nonSecureCodeOff`, to
//!   IMEM at `nonSecureCodeOff`, tagged with its offset;
//! - the secure code, `secureCodeSize` bytes from `codeDmaBase + secureCodeOff`, to IMEM at
//!   `secureCodeOff`, tagged likewise and marked secure;
//! - the data, `dataSize` bytes from `dataDmaBase`, to DMEM 0;
//!
//! and jumps to `codeEntryPoint`, where the model's falcon goes on as after any start (the
//! model ucode checks of [`crate::ucode`], then the application: FWSEC). Code that would land
//! on the loader's own IMEM blocks, or a failed transfer, halts with
//! [`HaltCode::LoaderFailed`].
//!
//! The fingerprint comes from the 535.261.03 source (the extractor's
//! `tu102-generic_bootloader.bin`); the image itself is not part of the model.

use alloc::vec::Vec;

use nvgpu::hw::fw::rmflcnbl::RmFlcnBlDmemDesc;
use zerocopy::FromBytes;

use crate::booter::{fnv1a64, LoadedUcode};
use crate::ucode::HaltCode;

/// One of NVIDIA's generic falcon bootloaders, by the numbers the model checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenericBlFingerprint {
    /// Where the image comes from.
    pub source: &'static str,
    /// `RM_FLCN_BL_DESC.blStartTag`: the loader's entry is `blStartTag << 8`.
    pub start_tag: u32,
    /// `blDmemDescLoadOff`: where it reads its `RM_FLCN_BL_DMEM_DESC`.
    pub dmem_desc_offset: u32,
    /// `blImgHeader.blCodeSize`.
    pub code_size: u32,
    /// FNV-1a 64 of those code bytes as they sit in IMEM from the entry.
    pub code_fnv64: u64,
}

/// NVIDIA's generic falcon bootloader of RM 535.261.03: `ksec2BinArchiveBlUcode_TU102_ucode_image_data`
/// and `_ucode_desc_data` in `src/nvidia/generated/g_bindata_ksec2GetBinArchiveBlUcode_TU102.c`
/// (`g_sec2_bl_gp10x.h`: 768 bytes, start tag 0xfd, descriptor at DMEM 0, 0x200 bytes of code).
pub const KNOWN_GENERIC_BOOTLOADERS: &[GenericBlFingerprint] = &[GenericBlFingerprint {
    source: "g_bindata_ksec2GetBinArchiveBlUcode_TU102.c: ksec2BinArchiveBlUcode_TU102_ucode_image_data (535.261.03)",
    start_tag: 0xfd,
    dmem_desc_offset: 0,
    code_size: 0x200,
    code_fnv64: 0xb816_af7b_f2c7_291c,
}];

/// The known loader started in `ucode`, if any.
pub(crate) fn recognise(ucode: &dyn LoadedUcode) -> Option<&'static GenericBlFingerprint> {
    KNOWN_GENERIC_BOOTLOADERS.iter().find(|fp| {
        ucode.bootvec() == fp.start_tag << 8
            && ucode.fetch(fp.start_tag << 8, fp.code_size).is_ok_and(|(code, _)| fnv1a64(&code) == fp.code_fnv64)
    })
}

/// One copy the loader makes, in whole blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoaderCopy {
    /// Bus address of the first byte.
    pub bus: u64,
    /// IMEM (physical = virtual offset) or DMEM offset.
    pub falcon_offset: u32,
    /// Bytes, a multiple of 256.
    pub len: u32,
    pub imem: bool,
    pub secure: bool,
}

/// What the loader does with the descriptor it finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoaderPlan {
    pub ctx_dma: u32,
    pub copies: Vec<LoaderCopy>,
    /// Where it jumps.
    pub entry: u32,
}

fn whole_blocks(len: u32) -> Result<u32, HaltCode> {
    len.checked_next_multiple_of(256).ok_or(HaltCode::LoaderFailed)
}

/// Reads the loader's descriptor from `dmem` and plans its copies; `loader_imem` is the range
/// of IMEM the loader itself occupies (physical offsets), which its copies must not touch.
pub(crate) fn plan(
    fp: &GenericBlFingerprint,
    dmem: &[u8],
    loader_imem: core::ops::Range<u32>,
    imem_size: u32,
    dmem_size: u32,
) -> Result<LoaderPlan, HaltCode> {
    let at = fp.dmem_desc_offset as usize;
    let raw = dmem.get(at..at + core::mem::size_of::<RmFlcnBlDmemDesc>()).ok_or(HaltCode::LoaderFailed)?;
    let desc = RmFlcnBlDmemDesc::read_from_bytes(raw).map_err(|_| HaltCode::LoaderFailed)?;
    let code_base = desc.code_dma_base.get();
    let data_base = desc.data_dma_base.get();
    let mut copies = Vec::new();
    for (offset, size, secure) in [
        (desc.non_secure_code_off, desc.non_secure_code_size, false),
        (desc.secure_code_off, desc.secure_code_size, true),
    ] {
        if size == 0 {
            continue;
        }
        let len = whole_blocks(size)?;
        let end = offset.checked_add(len).ok_or(HaltCode::LoaderFailed)?;
        if offset % 256 != 0 || end > imem_size || (offset < loader_imem.end && loader_imem.start < end) {
            return Err(HaltCode::LoaderFailed);
        }
        let bus = code_base.checked_add(offset.into()).ok_or(HaltCode::LoaderFailed)?;
        copies.push(LoaderCopy { bus, falcon_offset: offset, len, imem: true, secure });
    }
    if desc.data_size != 0 {
        let len = whole_blocks(desc.data_size)?;
        if len > dmem_size {
            return Err(HaltCode::LoaderFailed);
        }
        copies.push(LoaderCopy { bus: data_base, falcon_offset: 0, len, imem: false, secure: false });
    }
    Ok(LoaderPlan { ctx_dma: desc.ctx_dma, copies, entry: desc.code_entry_point })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvgpu::hw::fw::rmflcnbl::RmFlcnU64;
    use zerocopy::IntoBytes;

    const FP: GenericBlFingerprint = KNOWN_GENERIC_BOOTLOADERS[0];

    fn dmem_with(desc: &RmFlcnBlDmemDesc) -> Vec<u8> {
        let mut dmem = alloc::vec![0u8; 0x1000];
        dmem[..84].copy_from_slice(desc.as_bytes());
        dmem
    }

    #[test]
    fn plans_the_copies_rm_asks_for() {
        let desc = RmFlcnBlDmemDesc {
            ctx_dma: 4,
            code_dma_base: RmFlcnU64::pack(0x1_2345_6700),
            non_secure_code_off: 0,
            non_secure_code_size: 0x100,
            secure_code_off: 0x100,
            secure_code_size: 0x300,
            data_dma_base: RmFlcnU64::pack(0x8000_0000),
            data_size: 0x1f0,
            ..Default::default()
        };
        let plan = plan(&FP, &dmem_with(&desc), 0xfe00..0x1_0000, 0x1_0000, 0x1_0000).unwrap();
        assert_eq!(plan.ctx_dma, 4);
        assert_eq!(plan.entry, 0);
        assert_eq!(
            plan.copies,
            [
                LoaderCopy { bus: 0x1_2345_6700, falcon_offset: 0, len: 0x100, imem: true, secure: false },
                LoaderCopy { bus: 0x1_2345_6800, falcon_offset: 0x100, len: 0x300, imem: true, secure: true },
                LoaderCopy { bus: 0x8000_0000, falcon_offset: 0, len: 0x200, imem: false, secure: false },
            ]
        );
    }

    #[test]
    fn code_over_the_loader_is_refused() {
        let desc = RmFlcnBlDmemDesc { secure_code_off: 0xfd00, secure_code_size: 0x200, ..Default::default() };
        assert_eq!(plan(&FP, &dmem_with(&desc), 0xfe00..0x1_0000, 0x1_0000, 0x1_0000), Err(HaltCode::LoaderFailed));
    }
}
