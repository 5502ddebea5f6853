//! The generic falcon bootloader's ABI (`rmflcnbl.h`, `flcnifcmn.h`, 535.261.03): the descriptor
//! NVIDIA's bootloader files start with (`RM_FLCN_BL_DESC`, where the loader goes) and the one RM
//! writes to DMEM for it (`RM_FLCN_BL_DMEM_DESC`, where the real ucode comes from). Turing and
//! GA100 run their v2 FWSEC through it. The driver (`crate::fwsec::frts`,
//! `crate::firmware::generic_bootloader`) and the model (`sim::generic_bl`) use these declarations;
//! [`LAYOUTS`] is compared with the C compiler's reading of `rmflcnbl.h` by
//! `tests/tests/fw_layout.rs`.

use core::mem::size_of;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::hw::headers;
use crate::hw::layout::{c_struct, StructLayout};

/// `RM_FLCN_U64` (`flcnifcmn.h`: `NvU64_ALIGN32`): a 64-bit value as two 32-bit words, low first,
/// 4-byte aligned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RmFlcnU64 {
    pub lo: u32,
    pub hi: u32,
}

impl RmFlcnU64 {
    /// `RM_FLCN_U64_PACK`.
    pub const fn pack(value: u64) -> Self {
        Self { lo: value as u32, hi: (value >> 32) as u32 }
    }

    /// `RM_FLCN_U64_UNPACK`.
    pub const fn get(self) -> u64 {
        self.lo as u64 | (self.hi as u64) << 32
    }
}

/// `RM_FLCN_BL_DMEM_DESC`: what the generic bootloader reads from DMEM to fetch the real ucode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RmFlcnBlDmemDesc {
    /// `reserved`.
    pub reserved: [u32; 4],
    /// `signature`: zeros when the code has no secure part to check (RM always writes zeros).
    pub signature: [u32; 4],
    /// `ctxDma`: the FBIF context the loader DMAs through.
    pub ctx_dma: u32,
    /// `codeDmaBase`: bus address of the code buffer (256-byte aligned).
    pub code_dma_base: RmFlcnU64,
    /// `nonSecureCodeOff`.
    pub non_secure_code_off: u32,
    /// `nonSecureCodeSize`.
    pub non_secure_code_size: u32,
    /// `secureCodeOff`.
    pub secure_code_off: u32,
    /// `secureCodeSize`.
    pub secure_code_size: u32,
    /// `codeEntryPoint`.
    pub code_entry_point: u32,
    /// `dataDmaBase`: bus address of the data buffer.
    pub data_dma_base: RmFlcnU64,
    /// `dataSize`.
    pub data_size: u32,
    /// `argc`.
    pub argc: u32,
    /// `argv`.
    pub argv: u32,
}

/// `RM_FLCN_BL_IMG_HEADER`: where the loader's code and data sit in its image.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RmFlcnBlImgHeader {
    /// `blCodeOffset`.
    pub bl_code_offset: u32,
    /// `blCodeSize`.
    pub bl_code_size: u32,
    /// `blDataOffset`.
    pub bl_data_offset: u32,
    /// `blDataSize`.
    pub bl_data_size: u32,
}

/// `RM_FLCN_BL_DESC`: where the generic bootloader goes; the header region of NVIDIA's
/// bootloader files (`crate::firmware::generic_bootloader`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RmFlcnBlDesc {
    /// `blStartTag`: the IMEM tag (virtual address >> 8) of its first block; also its entry.
    pub bl_start_tag: u32,
    /// `blDmemDescLoadOff`: where it expects its [`RmFlcnBlDmemDesc`] (RM writes DMEM 0).
    pub bl_dmem_desc_load_off: u32,
    /// `blImgHeader`.
    pub bl_img_header: RmFlcnBlImgHeader,
}

impl RmFlcnBlDesc {
    /// The descriptor RM 535.261.03 carries for SEC2's generic bootloader on Turing and GA100
    /// (`ksec2BinArchiveBlUcode_TU102_ucode_desc_data` in
    /// `src/nvidia/generated/g_bindata_ksec2GetBinArchiveBlUcode_TU102.c`, from
    /// `g_sec2_bl_gp10x.h`): start tag 0xfd, descriptor at DMEM 0, 0x200 bytes of code then
    /// 0x100 of data. Its 768-byte image is compressed in the same file.
    pub const RM_535_SEC2_GP10X: Self = Self {
        bl_start_tag: 0xfd,
        bl_dmem_desc_load_off: 0,
        bl_img_header: RmFlcnBlImgHeader {
            bl_code_offset: 0,
            bl_code_size: 0x200,
            bl_data_offset: 0x200,
            bl_data_size: 0x100,
        },
    };
}

/// `sizeof(RM_FLCN_BL_DESC)`: what a bootloader file's header region holds.
pub const RM_FLCN_BL_DESC_SIZE: usize = size_of::<RmFlcnBlDesc>();

/// The FBIF context RM names in [`RmFlcnBlDmemDesc::ctx_dma`]: "dmaIdx for PHYS_SYS_NCOH,
/// consumed by the generic falcon boot loader" (a literal in `s_prepareHsFalconWithLoader`,
/// `kernel_gsp_falcon_tu102.c`; no header names it).
pub const GENERIC_BL_CTX_DMA: u32 = 4;

/// The layout of every structure here, under NVIDIA's names (for `tests/tests/fw_layout.rs`).
pub const LAYOUTS: &[StructLayout] = &[
    c_struct!("RM_FLCN_BL_DMEM_DESC", RmFlcnBlDmemDesc, headers::RMFLCNBL, [
        "reserved" => reserved,
        "signature" => signature,
        "ctxDma" => ctx_dma,
        "codeDmaBase" => code_dma_base,
        "nonSecureCodeOff" => non_secure_code_off,
        "nonSecureCodeSize" => non_secure_code_size,
        "secureCodeOff" => secure_code_off,
        "secureCodeSize" => secure_code_size,
        "codeEntryPoint" => code_entry_point,
        "dataDmaBase" => data_dma_base,
        "dataSize" => data_size,
        "argc" => argc,
        "argv" => argv,
    ]),
    c_struct!("RM_FLCN_BL_IMG_HEADER", RmFlcnBlImgHeader, headers::RMFLCNBL, [
        "blCodeOffset" => bl_code_offset,
        "blCodeSize" => bl_code_size,
        "blDataOffset" => bl_data_offset,
        "blDataSize" => bl_data_size,
    ]),
    c_struct!("RM_FLCN_BL_DESC", RmFlcnBlDesc, headers::RMFLCNBL, [
        "blStartTag" => bl_start_tag,
        "blDmemDescLoadOff" => bl_dmem_desc_load_off,
        "blImgHeader" => bl_img_header,
        "blImgHeader.blCodeOffset" => bl_img_header.bl_code_offset,
        "blImgHeader.blCodeSize" => bl_img_header.bl_code_size,
        "blImgHeader.blDataOffset" => bl_img_header.bl_data_offset,
        "blImgHeader.blDataSize" => bl_img_header.bl_data_size,
    ]),
];

#[cfg(test)]
mod tests {
    use zerocopy::IntoBytes;

    use super::*;

    #[test]
    fn dmem_desc_bytes_are_little_endian_words_in_order() {
        let d = RmFlcnBlDmemDesc {
            ctx_dma: GENERIC_BL_CTX_DMA,
            code_dma_base: RmFlcnU64::pack(0x1_2345_6700),
            data_size: 0x300,
            argv: 0xaa,
            ..Default::default()
        };
        let b = d.as_bytes();
        assert_eq!(b.len(), 84);
        assert_eq!(b.get(32..36), Some(&4u32.to_le_bytes()[..]));
        assert_eq!(b.get(36..40), Some(&0x2345_6700u32.to_le_bytes()[..]));
        assert_eq!(b.get(40..44), Some(&1u32.to_le_bytes()[..]));
        assert_eq!(b.get(72..76), Some(&0x300u32.to_le_bytes()[..]));
        assert_eq!(b.get(80..84), Some(&0xaau32.to_le_bytes()[..]));
        assert_eq!(d.code_dma_base.get(), 0x1_2345_6700);
    }
}
