//! Hardware and format facts the model needs that `nvgpu` does not export yet. Those `nvgpu`
//! already declares (24 of them: ROM and BIT format constants, FWSEC command values, header
//! paths) are re-exported from there, not declared again.
//!
//! Each one is defined here once, under NVIDIA's name, with the file of open-gpu-kernel-modules
//! 535.261.03 that defines it, so the lead can move it into `nvgpu::hw` (registers, constants)
//! or `nvgpu::vbios` (format constants the parser keeps private) and delete it here. [`FACTS`]
//! lists them in `nvgpu::hw::HeaderFact` form, ready for `tests/tests/header_conformance.rs`.
//!
//! Facts that no NVIDIA file states (the PCI specification's class codes, nouveau's reading of
//! `HWCFG`, the EFI image header) are at the end, with their sources; they cannot be checked
//! against NVIDIA's headers and say so.

use nvgpu::hw::{headers::OGKM_PINNED, FactValue, Header, HeaderFact};

// Declared once in nvgpu; re-exported here for the model's modules that import this file.
pub use nvgpu::gsp::fwsec_frts::{
    FWSECLIC_FRTS_REGION_DESC_VERSION, FWSECLIC_FRTS_REGION_MEDIA_FB, FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K,
    FWSECLIC_READ_VBIOS_DESC_VERSION, FWSECLIC_READ_VBIOS_STRUCT_FLAGS, NV_VBIOS_FWSECLIC_SB_ERR_CODE_MASK,
    NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15,
};
pub use nvgpu::hw::headers::{
    GA100_DEV_FUSE, GA102_DEV_FALCON_SECOND_PRI, GH100_DEV_FSP_PRI, KERNEL_GSP_FRTS_TU102, LR10_DEV_SOE_IP,
    TU102_DEV_FBIF_V4,
};
pub use nvgpu::vbios::{
    BIT_HEADER_V1_00_SIZE, BIT_TOKEN_V1_00_SIZE_6, FALCON_UCODE_TABLE_HDR_V1_VERSION, NV_PCI_DATA_EXT_REV_10,
    NV_PCI_DATA_EXT_REV_11, NV_PCI_DATA_EXT_SIG, PCI_DATA_STRUCT_SIGNATURE, PCI_DATA_STRUCT_SIGNATURE_NV,
    PCI_EXP_ROM_SIGNATURE_NV, PCI_LAST_IMAGE, PCI_ROM_IMAGE_BLOCK_SIZE,
};

const fn pinned(path: &'static str) -> Header {
    Header { release: OGKM_PINNED, path }
}

/// `src/nvidia/generated/g_gpu_nvoc.h`: RM's register-read sanity check.
pub const G_GPU_NVOC: Header = pinned("src/nvidia/generated/g_gpu_nvoc.h");
/// `src/nvidia/arch/nvalloc/common/inc/flcnretval.h`.
pub const FLCNRETVAL: Header = pinned("src/nvidia/arch/nvalloc/common/inc/flcnretval.h");
/// `src/nvidia/inc/kernel/platform/pci_exp_table.h`.
pub const PCI_EXP_TABLE: Header = pinned("src/nvidia/inc/kernel/platform/pci_exp_table.h");
/// `src/nvidia/src/kernel/gpu/gsp/kernel_gsp_fwsec.c`.
pub const KERNEL_GSP_FWSEC: Header = pinned("src/nvidia/src/kernel/gpu/gsp/kernel_gsp_fwsec.c");
/// `src/common/nvswitch/kernel/inc/rom_nvswitch.h` (BIOSDATA layouts).
pub const ROM_NVSWITCH: Header = pinned("src/common/nvswitch/kernel/inc/rom_nvswitch.h");
/// `turing/tu102/dev_fuse.h`.
pub const TU102_DEV_FUSE: Header = pinned("src/common/inc/swref/published/turing/tu102/dev_fuse.h");
/// `hopper/gh100/dev_fuse.h`.
pub const GH100_DEV_FUSE: Header = pinned("src/common/inc/swref/published/hopper/gh100/dev_fuse.h");
/// `src/nvidia/arch/nvalloc/common/inc/fsp/fsp_emem_channels.h`.
pub const FSP_EMEM_CHANNELS: Header = pinned("src/nvidia/arch/nvalloc/common/inc/fsp/fsp_emem_channels.h");
/// `src/nvidia/src/kernel/gpu/gsp/arch/ampere/kernel_gsp_ga100.c` (fuse version reading).
pub const KERNEL_GSP_GA100: Header = pinned("src/nvidia/src/kernel/gpu/gsp/arch/ampere/kernel_gsp_ga100.c");

// ---------------------------------------------------------------------------------------------
// Register-read error values.

/// RM treats a read whose top 12 bits are 0xBAD as a possible PRI error (`gpu_access.c` checks
/// `(value & GPU_READ_PRI_ERROR_MASK) == GPU_READ_PRI_ERROR_CODE`).
pub const GPU_READ_PRI_ERROR_MASK: u32 = 0xFFF0_0000;
/// See [`GPU_READ_PRI_ERROR_MASK`].
pub const GPU_READ_PRI_ERROR_CODE: u32 = 0xBAD0_0000;
/// The "0xbadf" error prefix of falcon-side PRI reads (`FLCN_CSB_PRIV_PRI_ERROR_CODE`); RM's
/// comments call its register-read checks "the 0xbadf sanity checking" (`g_gpu_access_nvoc.h`).
pub const FLCN_CSB_PRIV_PRI_ERROR_CODE: u32 = 0xBADF_0000;
/// See [`FLCN_CSB_PRIV_PRI_ERROR_CODE`].
pub const FLCN_CSB_PRIV_PRI_ERROR_MASK: u32 = 0xFFFF_0000;

// ---------------------------------------------------------------------------------------------
// PCI expansion ROM (`pci_exp_table.h`); the parser keeps these private in `vbios::pci_rom`.

/// Where the ROM header keeps the 16-bit pointer to the PCI data structure.
pub const OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR: usize = 0x18;
/// Offset of the NPDE's private last-image byte.
pub const OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE: usize = 0xA;

// ---------------------------------------------------------------------------------------------
// BIT and falcon ucode table (`kernel_gsp_fwsec.c`, `rom_nvswitch.h`).

/// Size of `BIT_DATA_BIOSDATA_V2` (format "1d2b3w2d4b3w3b1d", `rom_nvswitch.h`).
pub const BIT_DATA_BIOSDATA_V2_SIZE: u16 = 37;
/// `BIT_DATA_FALCON_DATA_V2_SIZE_4`.
pub const BIT_DATA_FALCON_DATA_V2_SIZE_4: u16 = 4;
/// The falcon data token version whose table RM reads (`BIT_DATA_FALCON_DATA_V2`).
pub const BIT_DATA_FALCON_DATA_VERSION_2: u8 = 2;
/// `FALCON_UCODE_TABLE_HDR_V1_SIZE_6`.
pub const FALCON_UCODE_TABLE_HDR_V1_SIZE_6: u8 = 6;
/// `FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6`.
pub const FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6: u8 = 6;
/// `NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE` (bit 0 of vDesc).
pub const NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE: u32 = 0x01;
/// Low bit of `NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION` (15:8).
pub const NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_SHIFT: u32 = 8;
/// Low bit of `NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE` (31:16).
pub const NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE_SHIFT: u32 = 16;
/// `NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2`.
pub const NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2: u8 = 2;
/// `NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3`.
pub const NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3: u8 = 3;
/// `FALCON_UCODE_DESC_V2_SIZE_60`.
pub const FALCON_UCODE_DESC_V2_SIZE_60: u16 = 60;
/// `FALCON_UCODE_DESC_V3_SIZE_44`.
pub const FALCON_UCODE_DESC_V3_SIZE_44: u16 = 44;

// ---------------------------------------------------------------------------------------------
// FWSEC's interface (`kernel_gsp_frts_tu102.c`).

/// `FALCON_APPLICATION_INTERFACE_HEADER_V1` version every real ROM carries (and the size of that
/// header: four bytes).
pub const FALCON_APPLICATION_INTERFACE_HEADER_V1_VERSION: u8 = 1;
/// `sizeof(FALCON_APPLICATION_INTERFACE_HEADER_V1)`.
pub const FALCON_APPLICATION_INTERFACE_HEADER_V1_SIZE: u8 = 4;
/// `sizeof(FALCON_APPLICATION_INTERFACE_ENTRY_V1)`.
pub const FALCON_APPLICATION_INTERFACE_ENTRY_V1_SIZE: u8 = 8;
/// The DMEM mapper version all three sample ROMs carry (its name says V3).
pub const FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_VERSION: u16 = 3;
/// `sizeof(FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3)`.
pub const FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIZE: u16 = 64;
/// `sizeof(FWSECLIC_READ_VBIOS_DESC)`: u32, u32, u64, u32, u32 with natural alignment.
pub const FWSECLIC_READ_VBIOS_DESC_SIZE: u32 = 24;
/// `sizeof(FWSECLIC_FRTS_REGION_DESC)`: five u32.
pub const FWSECLIC_FRTS_REGION_DESC_SIZE: u32 = 20;
/// Bytes of `FWSECLIC_FRTS_CMD` that carry fields: the two descriptors back to back (RM's C
/// struct is 48 bytes with tail padding after them; Nova's packed one is 44).
pub const FWSECLIC_FRTS_CMD_FIELDS_SIZE: u32 = FWSECLIC_READ_VBIOS_DESC_SIZE + FWSECLIC_FRTS_REGION_DESC_SIZE;

// ---------------------------------------------------------------------------------------------
// Fuses.

/// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` on Turing (`turing/tu102/dev_fuse.h`).
pub const NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_TU102: u32 = 0x0002_174C;
/// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` on GA100 and later (`ampere/ga100/dev_fuse.h`,
/// `hopper/gh100/dev_fuse.h`).
pub const NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_GA100: u32 = 0x0082_074C;
/// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_NO`: debug mode enabled (debug-fused part).
pub const NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_NO: u32 = 0;
/// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_YES`: debug disabled (production part).
pub const NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_YES: u32 = 1;
/// `NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION` (`ampere/ga100/dev_fuse.h`); ucode id `n` (1-based) is
/// at `+ 4 * (n - 1)` for n up to 16 (`kgspReadUcodeFuseVersion_GA100`).
pub const NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION: u32 = nvgpu::hw::boot::NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION::OFFSET;
/// The ucode ids `kgspReadUcodeFuseVersion_GA100` reads a fuse for.
pub const FPF_GSP_UCODE_VERSION_COUNT: u32 = 16;

// ---------------------------------------------------------------------------------------------
// The falcon boot ROM's registers (GA102 and later), relative to the engine's RISC-V base.

/// `NV_PFALCON2_FALCON_MOD_SEL`.
pub const NV_PFALCON2_FALCON_MOD_SEL: u32 = nvgpu::hw::falcon2::NV_PFALCON2_FALCON_MOD_SEL::OFFSET;
/// `NV_PFALCON2_FALCON_MOD_SEL_ALGO_RSA3K` (field `ALGO` 7:0).
pub const NV_PFALCON2_FALCON_MOD_SEL_ALGO_RSA3K: u32 = nvgpu::hw::falcon2::ModSelAlgo::Rsa3k as u32;
/// `NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID` (field `VAL` 7:0).
pub const NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID: u32 =
    nvgpu::hw::falcon2::NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::OFFSET;
/// `NV_PFALCON2_FALCON_BROM_ENGIDMASK`.
pub const NV_PFALCON2_FALCON_BROM_ENGIDMASK: u32 = nvgpu::hw::falcon2::NV_PFALCON2_FALCON_BROM_ENGIDMASK::OFFSET;
/// `NV_PFALCON2_FALCON_BROM_PARAADDR(i)`: base of the array (stride 4).
pub const NV_PFALCON2_FALCON_BROM_PARAADDR: u32 = nvgpu::hw::falcon2::NV_PFALCON2_FALCON_BROM_PARAADDR::OFFSET;
/// Elements of `NV_PFALCON2_FALCON_BROM_PARAADDR` the model keeps (RM writes index 0 only; the
/// header gives no `__SIZE_1`).
pub const BROM_PARAADDR_MODELLED: u32 = 4;

// ---------------------------------------------------------------------------------------------
// Port counts and FSP EMEM.

/// `NV_PFALCON_FBIF_TRANSCFG__SIZE_1`.
pub const NV_PFALCON_FBIF_TRANSCFG__SIZE_1: u32 = 8;
/// The FBIF target "non-coherent system memory" (`NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM`,
/// `nvswitch/lr10/dev_soe_ip.h`: the same FBIF block; no `dev_fbif_v4.h` names it), as
/// `nvgpu::hw::falcon2` declares it.
pub const NV_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM: u32 =
    nvgpu::hw::falcon2::NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM;
/// `NV_PFSP_EMEMC__SIZE_1`: the FSP's EMEM ports.
pub const NV_PFSP_EMEMC__SIZE_1: u32 = 8;
/// `FSP_EMEM_CHANNEL_RM_SIZE`: bytes of RM's channel in the FSP's EMEM.
pub const FSP_EMEM_CHANNEL_RM_SIZE: u32 = nvgpu::gsp::boot::fsp::FSP_EMEM_CHANNEL_RM_SIZE as u32;
/// `NV_PGSP_EMEMC__SIZE_1` (`turing/tu102/dev_gsp.h`).
pub const NV_PGSP_EMEMC__SIZE_1: u32 = 4;

/// Every fact above that an NVIDIA file states, for the conformance test.
pub const FACTS: &[HeaderFact] = &[
    fact("GPU_READ_PRI_ERROR_MASK", G_GPU_NVOC, GPU_READ_PRI_ERROR_MASK as u64),
    fact("GPU_READ_PRI_ERROR_CODE", G_GPU_NVOC, GPU_READ_PRI_ERROR_CODE as u64),
    fact("FLCN_CSB_PRIV_PRI_ERROR_CODE", FLCNRETVAL, FLCN_CSB_PRIV_PRI_ERROR_CODE as u64),
    fact("FLCN_CSB_PRIV_PRI_ERROR_MASK", FLCNRETVAL, FLCN_CSB_PRIV_PRI_ERROR_MASK as u64),
    fact("PCI_EXP_ROM_SIGNATURE_NV", PCI_EXP_TABLE, PCI_EXP_ROM_SIGNATURE_NV as u64),
    fact("OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR", PCI_EXP_TABLE, OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR as u64),
    fact("PCI_DATA_STRUCT_SIGNATURE", PCI_EXP_TABLE, PCI_DATA_STRUCT_SIGNATURE as u64),
    fact("PCI_DATA_STRUCT_SIGNATURE_NV", PCI_EXP_TABLE, PCI_DATA_STRUCT_SIGNATURE_NV as u64),
    fact("PCI_ROM_IMAGE_BLOCK_SIZE", PCI_EXP_TABLE, PCI_ROM_IMAGE_BLOCK_SIZE as u64),
    fact("NV_PCI_DATA_EXT_SIG", PCI_EXP_TABLE, NV_PCI_DATA_EXT_SIG as u64),
    fact("NV_PCI_DATA_EXT_REV_10", PCI_EXP_TABLE, NV_PCI_DATA_EXT_REV_10 as u64),
    fact("NV_PCI_DATA_EXT_REV_11", PCI_EXP_TABLE, NV_PCI_DATA_EXT_REV_11 as u64),
    fact("OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE", PCI_EXP_TABLE, OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE as u64),
    fact("BIT_DATA_FALCON_DATA_V2_SIZE_4", KERNEL_GSP_FWSEC, BIT_DATA_FALCON_DATA_V2_SIZE_4 as u64),
    fact("FALCON_UCODE_TABLE_HDR_V1_VERSION", KERNEL_GSP_FWSEC, FALCON_UCODE_TABLE_HDR_V1_VERSION as u64),
    fact("FALCON_UCODE_TABLE_HDR_V1_SIZE_6", KERNEL_GSP_FWSEC, FALCON_UCODE_TABLE_HDR_V1_SIZE_6 as u64),
    fact("FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6", KERNEL_GSP_FWSEC, FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6 as u64),
    fact(
        "NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE",
        KERNEL_GSP_FWSEC,
        NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE as u64,
    ),
    bits("NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION", KERNEL_GSP_FWSEC, 15, 8),
    bits("NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE", KERNEL_GSP_FWSEC, 31, 16),
    fact("NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2", KERNEL_GSP_FWSEC, 2),
    fact("NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3", KERNEL_GSP_FWSEC, 3),
    fact("FALCON_UCODE_DESC_V2_SIZE_60", KERNEL_GSP_FWSEC, FALCON_UCODE_DESC_V2_SIZE_60 as u64),
    fact("FALCON_UCODE_DESC_V3_SIZE_44", KERNEL_GSP_FWSEC, FALCON_UCODE_DESC_V3_SIZE_44 as u64),
    fact("FWSECLIC_READ_VBIOS_STRUCT_FLAGS", KERNEL_GSP_FRTS_TU102, FWSECLIC_READ_VBIOS_STRUCT_FLAGS as u64),
    fact("FWSECLIC_FRTS_REGION_MEDIA_FB", KERNEL_GSP_FRTS_TU102, FWSECLIC_FRTS_REGION_MEDIA_FB as u64),
    fact("FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K", KERNEL_GSP_FRTS_TU102, FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K as u64),
    fact("NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15", KERNEL_GSP_FRTS_TU102, NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15 as u64),
    bits("NV_VBIOS_FWSECLIC_SB_ERR_CODE", KERNEL_GSP_FRTS_TU102, 15, 0),
    fact("NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS", TU102_DEV_FUSE, NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_TU102 as u64),
    fact("NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS", GA100_DEV_FUSE, NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_GA100 as u64),
    fact("NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS", GH100_DEV_FUSE, NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_GA100 as u64),
    bits("NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA", GA100_DEV_FUSE, 0, 0),
    fact("NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_NO", GA100_DEV_FUSE, NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_NO as u64),
    fact("NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_YES", GA100_DEV_FUSE, NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_YES as u64),
    fact("NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION", GA100_DEV_FUSE, NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION as u64),
    bits("NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION_DATA", GA100_DEV_FUSE, 15, 0),
    fact("NV_PFALCON2_FALCON_MOD_SEL", GA102_DEV_FALCON_SECOND_PRI, NV_PFALCON2_FALCON_MOD_SEL as u64),
    bits("NV_PFALCON2_FALCON_MOD_SEL_ALGO", GA102_DEV_FALCON_SECOND_PRI, 7, 0),
    fact(
        "NV_PFALCON2_FALCON_MOD_SEL_ALGO_RSA3K",
        GA102_DEV_FALCON_SECOND_PRI,
        NV_PFALCON2_FALCON_MOD_SEL_ALGO_RSA3K as u64,
    ),
    fact(
        "NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID",
        GA102_DEV_FALCON_SECOND_PRI,
        NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID as u64,
    ),
    bits("NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID_VAL", GA102_DEV_FALCON_SECOND_PRI, 7, 0),
    fact("NV_PFALCON2_FALCON_BROM_ENGIDMASK", GA102_DEV_FALCON_SECOND_PRI, NV_PFALCON2_FALCON_BROM_ENGIDMASK as u64),
    HeaderFact {
        name: "NV_PFALCON2_FALCON_BROM_PARAADDR",
        header: GA102_DEV_FALCON_SECOND_PRI,
        value: FactValue::Indexed { base: NV_PFALCON2_FALCON_BROM_PARAADDR, stride: 4 },
    },
    fact("NV_PFALCON_FBIF_TRANSCFG__SIZE_1", TU102_DEV_FBIF_V4, NV_PFALCON_FBIF_TRANSCFG__SIZE_1 as u64),
    fact(
        "NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM",
        LR10_DEV_SOE_IP,
        NV_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM as u64,
    ),
    fact("NV_PFSP_EMEMC__SIZE_1", GH100_DEV_FSP_PRI, NV_PFSP_EMEMC__SIZE_1 as u64),
    fact("FSP_EMEM_CHANNEL_RM_SIZE", FSP_EMEM_CHANNELS, FSP_EMEM_CHANNEL_RM_SIZE as u64),
    fact(
        "NV_PGSP_EMEMC__SIZE_1",
        pinned("src/common/inc/swref/published/turing/tu102/dev_gsp.h"),
        NV_PGSP_EMEMC__SIZE_1 as u64,
    ),
];

const fn fact(name: &'static str, header: Header, value: u64) -> HeaderFact {
    HeaderFact { name, header, value: FactValue::Number(value) }
}

const fn bits(name: &'static str, header: Header, hi: u32, lo: u32) -> HeaderFact {
    HeaderFact { name, header, value: FactValue::Bits { hi, lo } }
}

// ---------------------------------------------------------------------------------------------
// Facts from outside NVIDIA's tree (not checkable against its headers).

/// `NV_PFALCON_FALCON_HWCFG` bits 17:9: DMEM size in 256-byte blocks. NVIDIA's published
/// `dev_falcon_v4.h` names only `IMEM_SIZE` (8:0); nouveau reads DMEM's size from 17:9
/// (`drivers/gpu/drm/nouveau/nvkm/falcon/base.c`, `nvkm_falcon_oneinit`: `(caps & 0x3fe00) >> 1`).
pub const HWCFG_DMEM_SIZE_SHIFT: u32 = 9;
/// Width of the HWCFG DMEM size field (nouveau, as above).
pub const HWCFG_DMEM_SIZE_MASK: u32 = 0x1FF;

/// PCI class code (base class 03h, sub-class 00h): VGA-compatible display controller. PCI Code
/// and ID Assignment Specification, class 03h.
pub const PCI_CLASS_DISPLAY_VGA: u16 = 0x0300;
/// PCI class code (base class 03h, sub-class 02h): 3D controller (not VGA-compatible), what
/// NVIDIA's compute boards (H100/H200) report.
pub const PCI_CLASS_DISPLAY_3D: u16 = 0x0302;
/// PCI vendor id of NVIDIA (also `PCI_VENDOR_ID_NVIDIA` in `rom_nvswitch.h`, exported by
/// `nvgpu::vbios`).
pub const PCI_VENDOR_ID_NVIDIA: u16 = nvgpu::vbios::PCI_VENDOR_ID_NVIDIA;

/// EFI PCI option ROM image header (UEFI Specification, "PCI Option ROMs", EFI PCI Expansion ROM
/// Header): the signature 0x0EF1 at offset 4.
pub const EFI_PCI_EXPANSION_ROM_HEADER_EFISIGNATURE: u32 = 0x0EF1;
/// `EFI_IMAGE_MACHINE_X64` (PE/COFF machine type AMD64), the machine type of x86-64 EFI drivers.
pub const EFI_IMAGE_MACHINE_X64: u16 = 0x8664;
/// `EFI_IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER` (PE/COFF subsystem 11).
pub const EFI_IMAGE_SUBSYSTEM_EFI_BOOT_SERVICE_DRIVER: u16 = 11;
