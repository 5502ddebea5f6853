//! The booter behind SEC2 (Turing, GA100, GA10x, Ada): what `booter_load` and `booter_unload` do
//! when SEC2 runs them, as far as the driver can observe it.
//!
//! Follows RM 535.261.03: `kgspExecuteBooterLoad_TU102` / `kgspExecuteBooterUnloadIfNeeded_TU102`
//! (`kernel_gsp_booter_tu102.c`: MAILBOX0/1 = the `GspFwWprMeta` bus address, low/high; success is
//! `MAILBOX0` = 0), the loaders `kgspExecuteHsFalcon_GA102` (GA102 and later: the application code
//! into IMEM at its own virtual address, `BOOTVEC` there, the OS data into DMEM, the boot ROM told
//! about the signature) and `s_prepareHsFalconDirect` (Turing, GA100: OS code non-secure at IMEM 0,
//! application code secure behind it, `BOOTVEC` 0), `s_allocateUcodeFromBinArchive` /
//! `s_patchBooterUcodeSignature` (`kernel_gsp_booter.c`: signature `numSigs - 1 - fuseVer`, where
//! the fuse is SEC2's, `ksec2ReadUcodeFuseVersion_GA100`), and `kgspBootstrapRiscvOSEarly_TU102/
//! _GA102` (afterwards the GSP RISC-V core is active: `kflcnIsRiscvActive_HAL`).
//!
//! # What the model recognises
//! The model cannot run NVIDIA's code. A SEC2 start runs a booter when IMEM and DMEM hold either
//! - **one of NVIDIA's images** in [`KNOWN_BOOTERS`], recognised by fingerprint: the load layout
//!   (`BOOTVEC`, code and data sizes), FNV-1a 64 of the application code as it sits in IMEM (and
//!   of the OS code where the driver loads it), FNV-1a 64 of the OS data in DMEM with the
//!   signature bytes zeroed, and FNV-1a 64 of each signature the file carries. The numbers come
//!   from the Debian files (`firmware-nvidia-graphics` 20250410-2~bpo12+1, `535.113.01` images),
//!   which are byte-identical to the files `cargo xtask extract-firmware` writes from the pinned
//!   535.261.03 source; the files themselves are not part of the model. Then: the application code blocks are secure
//!   IMEM; on GA102 and later the boot ROM registers name RSA-3K, the file's ucode id, engine mask
//!   and the signature's DMEM offset; and the signature in DMEM is the one for SEC2's fuse version
//!   of that ucode id (`NV_FUSE_OPT_FPF_SEC2_UCODE<n>_VERSION`). Failures halt with the generic
//!   boot ROM codes ([`HaltCode::NotSecure`], [`HaltCode::BromNotProgrammed`],
//!   [`HaltCode::SignatureRejected`], [`HaltCode::WrongFuseMode`] on a debug-fused part, which
//!   would need the `_dbg` images no Debian file carries);
//! - **the model's booter** ([`build_model_booter`]): a file in the same `nvfw_bin_hdr` /
//!   `nvfw_hs_header_v2` layout that `nvgpu::firmware::BooterFirmware` parses, whose application
//!   code is a model ucode ([`crate::ucode`]) with application id [`APPLICATION_BOOTER_LOAD`] or
//!   [`APPLICATION_BOOTER_UNLOAD`]; its signatures are [`crate::ucode::model_signature`]s, one per
//!   fuse version, checked by the model boot ROM (GA102 and later) or, on Turing and GA100, by the
//!   application itself at the DMEM offset the header's `interface_offset` names.
//!
//! # What booter_load checks and does
//! 1. `MAILBOX0 | MAILBOX1 << 32` is the bus address of a readable 256-byte `GspFwWprMeta` with
//!    `GSP_FW_WPR_META_MAGIC`, revision 1, `verified` 0, no VF partitions, padding zero;
//! 2. the layout `kgspCalculateFbLayout_TU102` promises, top down: every region inside `fbSize`
//!    (itself inside VRAM), in order and without overlap (VGA workspace, FRTS ending at
//!    `gspFwWprEnd`, boot binary, GSP-RM image, heap, the metadata's own 256 bytes, non-WPR heap
//!    from `gspFwRsvdStart`), with RM's alignments (WPR end 128 KiB, boot binary 4 KiB, image
//!    64 KiB, heap, WPR start and non-WPR heap 1 MiB);
//! 3. WPR2 is exactly the FRTS region FWSEC-FRTS set up (`frtsOffset`, `frtsSize`), or unset
//!    where the chip has no FRTS (GA100, `frtsSize` 0);
//! 4. the radix3 table at `sysmemAddrOfRadix3Elf` describes exactly `sizeOfRadix3Elf` bytes
//!    (`nvgpu::gsp::fw::radix3` layout: every needed entry a 4 KiB-aligned readable page, every other
//!    entry of the table pages zero), and the image is a GSP-RM image the model knows for this
//!    chip ([`crate::gsp_rm::image`]);
//! 5. the boot binary (with its code, data and manifest offsets inside it) and the signature are
//!    readable;
//! 6. GSP is out of reset, its RISC-V core selected (`BCR_CTRL`, GA102 and later), and GSP-RM not
//!    already running.
//!
//! Then it "copies" the images into WPR2 (nothing the CPU can see), widens WPR2 to
//! `[gspFwWprStart, gspFwWprEnd)`, starts the GSP RISC-V core (GSP-RM boots: [`crate::gsp_rm`]) and
//! halts with `MAILBOX0` = 0. Any failure halts with a non-zero [`BooterError::mailbox0`] and
//! records the error; nothing else changes.
//!
//! # What booter_unload checks and does
//! WPR2 is up and GSP-RM has stopped (after `UNLOADING_GUEST_DRIVER`, or never ran); then WPR2 is
//! torn down and `MAILBOX0` = 0. (RM passes 0xFF in both mailboxes on a plain unload.)

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use nvgpu::chip::Chipset;
use nvgpu::gsp::fw::radix3::{Radix3Layout, RADIX3_ENTRIES_PER_PAGE, RADIX3_PAGE_SIZE};
use nvgpu::gsp::fw::wpr::{GspFwWprMeta, GSP_FW_WPR_META_MAGIC, GSP_FW_WPR_META_REVISION};
use nvgpu::hal::Family;
use nvgpu::hw::falcon2::ModSelAlgo;
use zerocopy::FromBytes;

use crate::gsp_rm::image::{self as gsp_image, GspRmImageError};
use crate::memory::SystemMemory;
use crate::ucode::{self, HaltCode, UcodeSpec, FLAG_DEBUG_SIGNED, FLAG_HS, FLAG_PKC, SIGNATURE_SIZE};

/// Application id of the model `booter_load` ([`crate::ucode`] header).
pub const APPLICATION_BOOTER_LOAD: u32 = 2;
/// Application id of the model `booter_unload`.
pub const APPLICATION_BOOTER_UNLOAD: u32 = 3;

/// The ucode id NVIDIA's GA100/GA10x/Ada booters carry (`patch_meta.ucodeId`); the model booter
/// uses the same.
pub const BOOTER_UCODE_ID: u32 = 3;
/// The engine mask NVIDIA's booters carry (`patch_meta.engineId`: SEC2).
pub const BOOTER_ENGINE_ID_MASK: u32 = 1;

/// Which booter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BooterKind {
    /// `booter_load`: puts GSP-RM into WPR2 and starts it.
    Load,
    /// `booter_unload`: tears WPR2 down after GSP-RM stopped.
    Unload,
}

/// How the driver loads a booter (RM's `bBootFromHs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BooterLoadStyle {
    /// GA102 and later (`kgspExecuteHsFalcon_GA102`): application code at IMEM virtual address
    /// `app_code_offset` (secure), `BOOTVEC` there; OS data at DMEM 0; boot ROM registers.
    FromHs,
    /// Turing and GA100 (`s_prepareHsFalconDirect`): OS code non-secure at IMEM 0, application
    /// code secure at virtual address `app_code_offset`; OS data at DMEM 0; `BOOTVEC` 0.
    Direct,
}

/// One of NVIDIA's booter images, by the numbers the model checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BooterFingerprint {
    pub kind: BooterKind,
    /// The chips RM loads this file on.
    pub chips: &'static [Chipset],
    /// Path under `/lib/firmware/` in `firmware-nvidia-graphics`.
    pub file: &'static str,
    /// SHA-256 of the file (documentation: how to find the same file again).
    pub file_sha256: &'static str,
    /// The arrays of NVIDIA's 535.261.03 source the same image comes from (`g_bindata_*.c`,
    /// the `_prod` image, header and signatures), which `cargo xtask extract-firmware` turns
    /// into a byte-identical file.
    pub bindata: &'static str,
    pub style: BooterLoadStyle,
    /// `nvfw_hs_load_header_v2`, offsets into the ucode image.
    pub os_code_offset: u32,
    pub os_code_size: u32,
    pub os_data_offset: u32,
    pub os_data_size: u32,
    pub app_code_offset: u32,
    pub app_code_size: u32,
    /// `patch_loc - os_data_offset`: where the signature sits in DMEM.
    pub signature_dmem_offset: u32,
    /// Bytes of one signature (16 on Turing, 384 RSA-3K otherwise).
    pub signature_size: u32,
    /// `patch_meta.ucodeId` and `.engineId`.
    pub ucode_id: u32,
    pub engine_id_mask: u32,
    /// FNV-1a 64 of the application code.
    pub app_code_fnv64: u64,
    /// FNV-1a 64 of the OS code (checked where the driver loads it: [`BooterLoadStyle::Direct`]).
    pub os_code_fnv64: u64,
    /// FNV-1a 64 of the OS data with the signature bytes zeroed.
    pub os_data_fnv64: u64,
    /// FNV-1a 64 of each signature, in file order (`sig_prod`).
    pub signature_fnv64: &'static [u64],
}

const TU10X_FIRST: &[Chipset] = &[Chipset::TU102, Chipset::TU104, Chipset::TU106];
const TU11X: &[Chipset] = &[Chipset::TU116, Chipset::TU117];
const GA100: &[Chipset] = &[Chipset::GA100];
const GA10X: &[Chipset] = &[Chipset::GA102, Chipset::GA103, Chipset::GA104, Chipset::GA106, Chipset::GA107];
const AD10X: &[Chipset] = &[Chipset::AD102, Chipset::AD103, Chipset::AD104, Chipset::AD106, Chipset::AD107];

/// NVIDIA's booters, from `firmware-nvidia-graphics` 20250410-2~bpo12+1 (Debian bookworm-backports,
/// the `535.113.01` images; the other chips' directories hold identical copies, by SHA-256). The
/// numbers were computed from the files with the layout `nvgpu::firmware::BooterFirmware` parses.
///
/// The booters of the pinned release, 535.261.03 (`kgspBinArchiveBooter{Load,Unload}Ucode_<chip>`
/// in its `g_bindata_*.c`, extracted by `cargo xtask extract-firmware`), are the same images:
/// the files extracted from them are byte-identical to Debian's `535.113.01` ones, and their
/// fingerprints, computed from the extracted files, are the numbers below
/// (`tests/tests/firmware_extracted.rs` recomputes them). Each entry names its arrays.
pub const KNOWN_BOOTERS: &[BooterFingerprint] = &[
    BooterFingerprint {
        kind: BooterKind::Load,
        chips: TU10X_FIRST,
        file: "nvidia/tu102/gsp/booter_load-535.113.01.bin",
        file_sha256: "e1c574cc0734aebeae7954ad727917141d11f472e15dd206791857e63df84fda",
        bindata: "g_bindata_kgspGetBinArchiveBooterLoadUcode_TU102.c: kgspBinArchiveBooterLoadUcode_TU102_{image,header,sig}_prod_data",
        style: BooterLoadStyle::Direct,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x8000,
        os_data_size: 0x6200,
        app_code_offset: 0x100,
        app_code_size: 0x7f00,
        signature_dmem_offset: 0x200,
        signature_size: 16,
        ucode_id: 13,
        engine_id_mask: 1,
        app_code_fnv64: 0x98a0_314f_bc23_73a7,
        os_code_fnv64: 0x6421_47d0_3355_d475,
        os_data_fnv64: 0xce6e_7713_a59c_cb25,
        signature_fnv64: &[0x058c_98ac_ff9e_a66f],
    },
    BooterFingerprint {
        kind: BooterKind::Load,
        chips: TU11X,
        file: "nvidia/tu116/gsp/booter_load-535.113.01.bin",
        file_sha256: "aeca340bbc42f739d34a1c64c91b0176f264df5e1b8ff5a054e91d53d70a5cf8",
        bindata: "g_bindata_kgspGetBinArchiveBooterLoadUcode_TU116.c: kgspBinArchiveBooterLoadUcode_TU116_{image,header,sig}_prod_data",
        style: BooterLoadStyle::Direct,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x8000,
        os_data_size: 0x6200,
        app_code_offset: 0x100,
        app_code_size: 0x7f00,
        signature_dmem_offset: 0x200,
        signature_size: 16,
        ucode_id: 13,
        engine_id_mask: 1,
        app_code_fnv64: 0x6633_13eb_e1a0_af1c,
        os_code_fnv64: 0x4e2c_a1fc_c893_792b,
        os_data_fnv64: 0xce6e_7713_a59c_cb25,
        signature_fnv64: &[0x1c3a_b8eb_a359_5749],
    },
    BooterFingerprint {
        kind: BooterKind::Load,
        chips: GA100,
        file: "nvidia/ga100/gsp/booter_load-535.113.01.bin",
        file_sha256: "1d11d861ef1f41ee0a3437684ec29d0a5573be0c65b2823d38a2a8ec395c8ed9",
        bindata: "g_bindata_kgspGetBinArchiveBooterLoadUcode_GA100.c: kgspBinArchiveBooterLoadUcode_GA100_{image,header,sig}_prod_data",
        style: BooterLoadStyle::Direct,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x8100,
        os_data_size: 0x6400,
        app_code_offset: 0x100,
        app_code_size: 0x8000,
        signature_dmem_offset: 0x200,
        signature_size: 384,
        ucode_id: 3,
        engine_id_mask: 1,
        app_code_fnv64: 0x9c73_abe4_63ea_0a68,
        os_code_fnv64: 0x16a4_cc4a_b9fa_24f4,
        os_data_fnv64: 0x46e5_dd35_c3bf_f325,
        signature_fnv64: &[0x4f01_f14f_477c_fd27],
    },
    BooterFingerprint {
        kind: BooterKind::Load,
        chips: GA10X,
        file: "nvidia/ga102/gsp/booter_load-535.113.01.bin",
        file_sha256: "3ab46bf4c70d72e8fc89d98e6bdc9b83a61954a586629d26b8b5653a620237e0",
        bindata: "g_bindata_kgspGetBinArchiveBooterLoadUcode_GA102.c: kgspBinArchiveBooterLoadUcode_GA102_{image,header,sig}_prod_data",
        style: BooterLoadStyle::FromHs,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x8400,
        os_data_size: 0x6200,
        app_code_offset: 0x100,
        app_code_size: 0x8300,
        signature_dmem_offset: 0x10,
        signature_size: 384,
        ucode_id: 3,
        engine_id_mask: 1,
        app_code_fnv64: 0x5a4c_c967_9774_26f2,
        os_code_fnv64: 0xd80a_c658_736b_b725,
        os_data_fnv64: 0xce6e_7713_a59c_cb25,
        signature_fnv64: &[0x82ad_93f6_1cac_da69, 0xc86e_c345_c0ee_8125],
    },
    BooterFingerprint {
        kind: BooterKind::Load,
        chips: AD10X,
        file: "nvidia/ad102/gsp/booter_load-535.113.01.bin",
        file_sha256: "7d4ef3258da016f5208cfb1b348a9a1d69aaa13c2f8d4ee8c05d66bd05b45cd6",
        bindata: "g_bindata_kgspGetBinArchiveBooterLoadUcode_AD102.c: kgspBinArchiveBooterLoadUcode_AD102_{image,header,sig}_prod_data",
        style: BooterLoadStyle::FromHs,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x7700,
        os_data_size: 0x6000,
        app_code_offset: 0x100,
        app_code_size: 0x7600,
        signature_dmem_offset: 0x10,
        signature_size: 384,
        ucode_id: 3,
        engine_id_mask: 1,
        app_code_fnv64: 0x9767_88a5_5ccc_7e4a,
        os_code_fnv64: 0xd80a_c658_736b_b725,
        os_data_fnv64: 0x500c_1b90_2dbf_992c,
        signature_fnv64: &[0xe5a0_2592_e1b8_1c77, 0x58f8_23df_3d64_7b25],
    },
    BooterFingerprint {
        kind: BooterKind::Unload,
        chips: TU10X_FIRST,
        file: "nvidia/tu102/gsp/booter_unload-535.113.01.bin",
        file_sha256: "68cddb9e6d61d7bf78b06197e6bce8fc6f25b2f34d570c517f85974b4f360a2a",
        bindata: "g_bindata_kgspGetBinArchiveBooterUnloadUcode_TU102.c: kgspBinArchiveBooterUnloadUcode_TU102_{image,header,sig}_prod_data",
        style: BooterLoadStyle::Direct,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x4700,
        os_data_size: 0x4d00,
        app_code_offset: 0x100,
        app_code_size: 0x4600,
        signature_dmem_offset: 0x200,
        signature_size: 16,
        ucode_id: 13,
        engine_id_mask: 1,
        app_code_fnv64: 0x0e9e_8e59_5c03_7926,
        os_code_fnv64: 0x8a06_2d21_3137_22d9,
        os_data_fnv64: 0x120e_a083_bba3_a725,
        signature_fnv64: &[0x4ccf_c987_b944_696f],
    },
    BooterFingerprint {
        kind: BooterKind::Unload,
        chips: TU11X,
        file: "nvidia/tu116/gsp/booter_unload-535.113.01.bin",
        file_sha256: "3653ff42f0d64d2918e9f250bf10ee332fc9d8ab775afcfb695566e95c295acf",
        bindata: "g_bindata_kgspGetBinArchiveBooterUnloadUcode_TU116.c: kgspBinArchiveBooterUnloadUcode_TU116_{image,header,sig}_prod_data",
        style: BooterLoadStyle::Direct,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x4700,
        os_data_size: 0x4d00,
        app_code_offset: 0x100,
        app_code_size: 0x4600,
        signature_dmem_offset: 0x200,
        signature_size: 16,
        ucode_id: 13,
        engine_id_mask: 1,
        app_code_fnv64: 0x7d38_f68f_862a_e8dd,
        os_code_fnv64: 0x32e2_73d1_801c_1852,
        os_data_fnv64: 0x120e_a083_bba3_a725,
        signature_fnv64: &[0xf200_f5fc_ecc4_13e1],
    },
    BooterFingerprint {
        kind: BooterKind::Unload,
        chips: GA100,
        file: "nvidia/ga100/gsp/booter_unload-535.113.01.bin",
        file_sha256: "0518f894d45977d817b6308448ea482e93ede1096808d49c6ed62c7604772f0c",
        bindata: "g_bindata_kgspGetBinArchiveBooterUnloadUcode_GA100.c: kgspBinArchiveBooterUnloadUcode_GA100_{image,header,sig}_prod_data",
        style: BooterLoadStyle::Direct,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x4700,
        os_data_size: 0x4f00,
        app_code_offset: 0x100,
        app_code_size: 0x4600,
        signature_dmem_offset: 0x200,
        signature_size: 384,
        ucode_id: 3,
        engine_id_mask: 1,
        app_code_fnv64: 0x25ab_d4ef_fff2_f5d1,
        os_code_fnv64: 0xb451_f9fd_4706_e27e,
        os_data_fnv64: 0x5794_66e5_c8a6_cf25,
        signature_fnv64: &[0x00c9_8faf_7774_d07b],
    },
    BooterFingerprint {
        kind: BooterKind::Unload,
        chips: GA10X,
        file: "nvidia/ga102/gsp/booter_unload-535.113.01.bin",
        file_sha256: "09240c83595856a0fe70d2ab3ec7325455cd8adfc48ec7b47f6fced1e5431beb",
        bindata: "g_bindata_kgspGetBinArchiveBooterUnloadUcode_GA102.c: kgspBinArchiveBooterUnloadUcode_GA102_{image,header,sig}_prod_data",
        style: BooterLoadStyle::FromHs,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x4a00,
        os_data_size: 0x4d00,
        app_code_offset: 0x100,
        app_code_size: 0x4900,
        signature_dmem_offset: 0x10,
        signature_size: 384,
        ucode_id: 3,
        engine_id_mask: 1,
        app_code_fnv64: 0x4bd4_a981_b50d_b553,
        os_code_fnv64: 0xd80a_c658_736b_b725,
        os_data_fnv64: 0x120e_a083_bba3_a725,
        signature_fnv64: &[0x9110_5527_373b_7032, 0xc86e_c345_c0ee_8125],
    },
    BooterFingerprint {
        kind: BooterKind::Unload,
        chips: AD10X,
        file: "nvidia/ad102/gsp/booter_unload-535.113.01.bin",
        file_sha256: "d036dfee0545c36e2194bc555cb268a5e11a6f13b5f66a7dec40838efc6ad87e",
        bindata: "g_bindata_kgspGetBinArchiveBooterUnloadUcode_AD102.c: kgspBinArchiveBooterUnloadUcode_AD102_{image,header,sig}_prod_data",
        style: BooterLoadStyle::FromHs,
        os_code_offset: 0,
        os_code_size: 0x100,
        os_data_offset: 0x4900,
        os_data_size: 0x4e00,
        app_code_offset: 0x100,
        app_code_size: 0x4800,
        signature_dmem_offset: 0x10,
        signature_size: 384,
        ucode_id: 3,
        engine_id_mask: 1,
        app_code_fnv64: 0x3bd6_a9de_13f8_6c5f,
        os_code_fnv64: 0xd80a_c658_736b_b725,
        os_data_fnv64: 0x5ac3_8afb_6525_66fa,
        signature_fnv64: &[0x3939_4365_9e7f_2350, 0x5bac_4a0c_d777_9932],
    },
];

/// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3): the fingerprint hash.
/// It identifies images; it is no security measure (the model checks no cryptography).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The signature index a booter with `num_sigs` signatures uses for fuse version `fuse_version`
/// (`s_patchBooterUcodeSignature`); `None` when the file has none for it.
pub fn signature_index(num_sigs: usize, fuse_version: u32) -> Option<usize> {
    match num_sigs {
        0 => None,
        1 => Some(0),
        n => (fuse_version as usize).lt(&n).then(|| n - 1 - fuse_version as usize),
    }
}

// ---------------------------------------------------------------------------------------------
// Errors.

/// What a booter refused. [`Self::mailbox0`] is what SEC2's `MAILBOX0` holds afterwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BooterError {
    /// The metadata at the mailboxes' bus address could not be read.
    MetaUnreadable { bus: u64 },
    /// `magic` is not `GSP_FW_WPR_META_MAGIC`.
    BadMagic { magic: u64 },
    /// `revision` is not `GSP_FW_WPR_META_REVISION`.
    BadRevision { revision: u64 },
    /// A field the CPU must leave zero (`verified`, `padding`, VF partitions) is not.
    NotZero { field: &'static str, value: u64 },
    /// A region of the layout is out of order, overlaps, leaves FB/VRAM, or is misaligned.
    Layout { what: &'static str, value: u64 },
    /// WPR2 is not the FRTS region FWSEC-FRTS sets up (`found` `None`: WPR2 not set).
    Wpr2NotFrts { frts_lo: u64, frts_hi: u64, found: Option<(u64, u64)> },
    /// The radix3 table does not describe `sizeOfRadix3Elf` bytes of readable pages.
    Radix3 { what: &'static str, value: u64 },
    /// The image the radix3 table describes is not a GSP-RM image the model knows for this chip.
    NotGspRm { why: GspRmImageError },
    /// A buffer the metadata points at is not readable.
    Unreadable { what: &'static str, bus: u64, len: u64 },
    /// GSP cannot be started: `why`.
    GspNotReady { why: &'static str },
    /// booter_load while GSP-RM already runs (WPR2 already holds it).
    GspRmRunning,
    /// booter_unload while WPR2 is not up.
    Wpr2NotUp,
    /// booter_unload while GSP-RM still runs.
    GspRmNotStopped,
    /// An injected fault (`GspFault::BooterHalts`): the booter halted at once.
    Injected { mailbox0: u32 },
    /// A suspend/resume request refused (`crate::gsp_rm::suspend`).
    Sr { what: &'static str, value: u64 },
}

impl BooterError {
    /// The `MAILBOX0` value: `0x5200_00nn` (0x52, "model booter"; NVIDIA documents no booter
    /// error codes), or the injected value.
    pub const fn mailbox0(&self) -> u32 {
        let n = match self {
            BooterError::MetaUnreadable { .. } => 0x01,
            BooterError::BadMagic { .. } => 0x02,
            BooterError::BadRevision { .. } => 0x03,
            BooterError::NotZero { .. } => 0x04,
            BooterError::Layout { .. } => 0x05,
            BooterError::Wpr2NotFrts { .. } => 0x06,
            BooterError::Radix3 { .. } => 0x07,
            BooterError::NotGspRm { .. } => 0x08,
            BooterError::Unreadable { .. } => 0x09,
            BooterError::GspNotReady { .. } => 0x0A,
            BooterError::GspRmRunning => 0x0B,
            BooterError::Wpr2NotUp => 0x0C,
            BooterError::GspRmNotStopped => 0x0D,
            BooterError::Sr { .. } => 0x0E,
            BooterError::Injected { mailbox0 } => return *mailbox0,
        };
        0x5200_0000 | n
    }
}

impl fmt::Display for BooterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BooterError::MetaUnreadable { bus } => write!(f, "GspFwWprMeta at bus {bus:#x} unreadable"),
            BooterError::BadMagic { magic } => {
                write!(f, "GspFwWprMeta magic {magic:#x} (expected {GSP_FW_WPR_META_MAGIC:#x})")
            }
            BooterError::BadRevision { revision } => write!(f, "GspFwWprMeta revision {revision}"),
            BooterError::NotZero { field, value } => write!(f, "GspFwWprMeta {field} = {value:#x}, must be 0"),
            BooterError::Layout { what, value } => write!(f, "WPR layout: {what} ({value:#x})"),
            BooterError::Wpr2NotFrts { frts_lo, frts_hi, found } => {
                write!(f, "WPR2 is {found:x?}, not the FRTS region [{frts_lo:#x}, {frts_hi:#x}] FWSEC-FRTS sets up")
            }
            BooterError::Radix3 { what, value } => write!(f, "GSP-RM radix3 table: {what} ({value:#x})"),
            BooterError::NotGspRm { why } => write!(f, "not a GSP-RM image: {why}"),
            BooterError::Unreadable { what, bus, len } => {
                write!(f, "{what}: {len:#x} bytes at bus {bus:#x} unreadable")
            }
            BooterError::GspNotReady { why } => write!(f, "cannot start GSP: {why}"),
            BooterError::GspRmRunning => write!(f, "booter_load while GSP-RM already runs"),
            BooterError::Wpr2NotUp => write!(f, "booter_unload while WPR2 is not up"),
            BooterError::GspRmNotStopped => write!(f, "booter_unload while GSP-RM still runs"),
            BooterError::Sr { what, value } => write!(f, "suspend/resume: {what} ({value:#x})"),
            BooterError::Injected { mailbox0 } => write!(f, "injected fault: halted with {mailbox0:#x}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What the booter sees.

/// The boot ROM's registers as the driver left them (GA102 and later).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BromState {
    pub mod_sel: u32,
    pub ucode_id: u32,
    pub engid_mask: u32,
    pub paraaddr0: u32,
}

/// SEC2's memories as the driver loaded them.
pub(crate) trait LoadedUcode {
    fn bootvec(&self) -> u32;
    /// `len` bytes of IMEM from virtual address `va`, and whether every block was secure.
    fn fetch(&self, va: u32, len: u32) -> Result<(Vec<u8>, bool), HaltCode>;
    fn dmem(&self) -> &[u8];
    /// `None` where the falcon has no PKC boot ROM registers (Turing, GA100).
    fn brom(&self) -> Option<BromState>;
}

/// What the rest of the GPU looks like to a running booter.
pub(crate) struct BooterContext<'a> {
    pub chipset: Chipset,
    pub mailboxes: [u32; 2],
    pub memory: Option<&'a (dyn SystemMemory + Send)>,
    pub vram_bytes: u64,
    /// WPR2 (first byte, last byte), or `None`.
    pub wpr2: Option<(u64, u64)>,
    pub gsp: PeerGsp,
}

/// GSP's state, as a booter on SEC2 needs it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PeerGsp {
    pub in_reset: bool,
    /// `BCR_CTRL_CORE_SELECT` = RISC-V (always true where the chip has no BCR).
    pub riscv_selected: bool,
    /// The RISC-V core runs (GSP-RM is up).
    pub riscv_running: bool,
}

/// What a booter run changes outside SEC2.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // one effect per booter run: size does not matter
pub(crate) enum BooterEffect {
    /// WPR2 = [lo, hi] in 4 KiB units.
    SetWpr2 { lo_4k: u32, hi_4k: u32 },
    /// WPR2 torn down.
    ClearWpr2,
    /// GSP's RISC-V core starts GSP-RM with this metadata.
    StartGspRm { meta: Box<GspFwWprMeta> },
    /// Suspend/resume bookkeeping (`crate::gsp_rm::suspend`).
    Sr(crate::gsp_rm::suspend::SrState),
    /// GSP-RM resumes from the saved WPR2.
    RestoreGspRm,
}

/// How a run ended.
#[derive(Clone, Debug)]
pub(crate) struct BooterOutcome {
    pub mailbox0: u32,
    pub error: Option<BooterError>,
    pub effects: Vec<BooterEffect>,
}

impl BooterOutcome {
    fn done(effects: Vec<BooterEffect>) -> Self {
        Self { mailbox0: 0, error: None, effects }
    }

    pub fn failed(error: BooterError) -> Self {
        Self { mailbox0: error.mailbox0(), error: Some(error), effects: Vec::new() }
    }
}

// ---------------------------------------------------------------------------------------------
// Recognising NVIDIA's images.

/// The known booter loaded in `ucode` for `chipset`, if any: `Ok(None)` when IMEM holds none of
/// them (the falcon then tries the model's own format); `Err` when it is one but the load or the
/// signature is wrong.
pub(crate) fn recognise(
    chipset: Chipset,
    ucode: &dyn LoadedUcode,
    sec2_fuse_version: impl Fn(u32) -> u32,
    debug_fused: bool,
) -> Result<Option<&'static BooterFingerprint>, HaltCode> {
    let Some(fp) = KNOWN_BOOTERS.iter().filter(|fp| fp.chips.contains(&chipset)).find(|fp| matches_code(fp, ucode))
    else {
        return Ok(None);
    };
    check_load(fp, ucode)?;
    if debug_fused {
        // The Debian files carry production signatures only (`sig_prod`).
        return Err(HaltCode::WrongFuseMode);
    }
    let fuse = sec2_fuse_version(fp.ucode_id);
    let dmem = ucode.dmem();
    let at = fp.signature_dmem_offset as usize;
    let Some(signature) = dmem.get(at..at + fp.signature_size as usize) else {
        return Err(HaltCode::SignatureRejected);
    };
    let expected = signature_index(fp.signature_fnv64.len(), fuse).map(|i| fp.signature_fnv64[i]);
    if expected != Some(fnv1a64(signature)) {
        return Err(HaltCode::SignatureRejected);
    }
    Ok(Some(fp))
}

fn matches_code(fp: &BooterFingerprint, ucode: &dyn LoadedUcode) -> bool {
    let bootvec = match fp.style {
        BooterLoadStyle::FromHs => fp.app_code_offset,
        BooterLoadStyle::Direct => fp.os_code_offset,
    };
    ucode.bootvec() == bootvec
        && ucode.fetch(fp.app_code_offset, fp.app_code_size).is_ok_and(|(code, _)| fnv1a64(&code) == fp.app_code_fnv64)
}

fn check_load(fp: &BooterFingerprint, ucode: &dyn LoadedUcode) -> Result<(), HaltCode> {
    let (_, secure) = ucode.fetch(fp.app_code_offset, fp.app_code_size)?;
    if !secure {
        return Err(HaltCode::NotSecure);
    }
    if fp.style == BooterLoadStyle::Direct {
        let (code, _) = ucode.fetch(fp.os_code_offset, fp.os_code_size)?;
        if fnv1a64(&code) != fp.os_code_fnv64 {
            return Err(HaltCode::ChecksumMismatch);
        }
    }
    let mut data = ucode.dmem().get(..fp.os_data_size as usize).ok_or(HaltCode::ChecksumMismatch)?.to_vec();
    let sig = fp.signature_dmem_offset as usize..(fp.signature_dmem_offset + fp.signature_size) as usize;
    data.get_mut(sig).ok_or(HaltCode::ChecksumMismatch)?.fill(0);
    if fnv1a64(&data) != fp.os_data_fnv64 {
        return Err(HaltCode::ChecksumMismatch);
    }
    if let Some(brom) = ucode.brom() {
        let programmed = brom.mod_sel & 0xFF == ModSelAlgo::Rsa3k as u32
            && brom.ucode_id & 0xFF == fp.ucode_id
            && brom.engid_mask == fp.engine_id_mask
            && brom.paraaddr0 == fp.signature_dmem_offset;
        if !programmed {
            return Err(HaltCode::BromNotProgrammed);
        }
    }
    Ok(())
}

/// The model booter's own signature check on chips without PKC boot ROM registers: DMEM at the
/// header's `interface_offset` holds the signature for SEC2's fuse version.
pub(crate) fn model_signature_in_dmem(
    header: &ucode::ModelUcodeHeader,
    dmem: &[u8],
    fuse_version: u32,
    debug_fused: bool,
) -> Result<(), HaltCode> {
    let at = header.interface_offset.get() as usize;
    let expected = ucode::model_signature(header.checksum.get(), fuse_version, debug_fused);
    match dmem.get(at..at + SIGNATURE_SIZE) {
        Some(stored) if stored == expected.as_slice() => Ok(()),
        _ => Err(HaltCode::SignatureRejected),
    }
}

// ---------------------------------------------------------------------------------------------
// Running.

/// Runs `kind` with `ctx`, after the image was accepted.
pub(crate) fn run(kind: BooterKind, ctx: &BooterContext<'_>) -> BooterOutcome {
    match kind {
        BooterKind::Load => match load(ctx) {
            Ok(effects) => BooterOutcome::done(effects),
            Err(error) => BooterOutcome::failed(error),
        },
        BooterKind::Unload => {
            if ctx.gsp.riscv_running {
                BooterOutcome::failed(BooterError::GspRmNotStopped)
            } else if ctx.wpr2.is_none() {
                BooterOutcome::failed(BooterError::Wpr2NotUp)
            } else {
                BooterOutcome::done(vec![BooterEffect::ClearWpr2])
            }
        }
    }
}

fn read_exact(ctx: &BooterContext<'_>, what: &'static str, bus: u64, buf: &mut [u8]) -> Result<(), BooterError> {
    let unreadable = BooterError::Unreadable { what, bus, len: buf.len() as u64 };
    let memory = ctx.memory.ok_or(unreadable)?;
    if memory.read(bus, buf) {
        Ok(())
    } else {
        Err(unreadable)
    }
}

fn load(ctx: &BooterContext<'_>) -> Result<Vec<BooterEffect>, BooterError> {
    let bus = u64::from(ctx.mailboxes[0]) | (u64::from(ctx.mailboxes[1]) << 32);
    let mut raw = [0u8; core::mem::size_of::<GspFwWprMeta>()];
    read_exact(ctx, "GspFwWprMeta", bus, &mut raw).map_err(|_| BooterError::MetaUnreadable { bus })?;
    let meta = GspFwWprMeta::read_from_bytes(&raw).map_err(|_| BooterError::MetaUnreadable { bus })?;

    check_meta_header(&meta)?;
    check_layout(&meta, ctx.vram_bytes)?;
    check_wpr2(&meta, ctx.wpr2)?;
    check_radix3_image(&meta, ctx)?;
    check_images_readable(&meta, ctx)?;

    if ctx.gsp.riscv_running {
        return Err(BooterError::GspRmRunning);
    }
    if ctx.gsp.in_reset {
        return Err(BooterError::GspNotReady { why: "GSP is held in reset" });
    }
    if !ctx.gsp.riscv_selected {
        return Err(BooterError::GspNotReady {
            why: "BCR_CTRL_CORE_SELECT selects the falcon core (RM resets GSP into RISC-V first)",
        });
    }

    let lo_4k = (meta.gsp_fw_wpr_start >> 12) as u32;
    let hi_4k = ((meta.gsp_fw_wpr_end - 1) >> 12) as u32;
    Ok(vec![BooterEffect::SetWpr2 { lo_4k, hi_4k }, BooterEffect::StartGspRm { meta: Box::new(meta) }])
}

/// The boot binary (with its code, data and manifest offsets inside it) and the signature are
/// readable.
pub(crate) fn check_images_readable(meta: &GspFwWprMeta, ctx: &BooterContext<'_>) -> Result<(), BooterError> {
    let mut probe = [0u8; 1];
    let bootloader = meta.sysmem_addr_of_bootloader;
    let bl_size = meta.size_of_bootloader;
    if bl_size == 0 {
        return Err(BooterError::Layout { what: "sizeOfBootloader is 0", value: 0 });
    }
    for (what, offset) in [
        ("bootloaderCodeOffset", meta.bootloader_code_offset),
        ("bootloaderDataOffset", meta.bootloader_data_offset),
        ("bootloaderManifestOffset", meta.bootloader_manifest_offset),
    ] {
        if offset >= bl_size {
            return Err(BooterError::Layout { what, value: offset });
        }
    }
    read_exact(ctx, "boot binary (first byte)", bootloader, &mut probe)?;
    read_exact(ctx, "boot binary (last byte)", bootloader.saturating_add(bl_size - 1), &mut probe)?;
    let signature = meta.signature;
    if signature.size_of_signature == 0 {
        return Err(BooterError::Layout { what: "sizeOfSignature is 0", value: 0 });
    }
    read_exact(ctx, "GSP-RM signature (first byte)", signature.sysmem_addr_of_signature, &mut probe)?;
    read_exact(
        ctx,
        "GSP-RM signature (last byte)",
        signature.sysmem_addr_of_signature.saturating_add(signature.size_of_signature - 1),
        &mut probe,
    )?;
    Ok(())
}

pub(crate) fn check_meta_header(meta: &GspFwWprMeta) -> Result<(), BooterError> {
    if meta.magic != GSP_FW_WPR_META_MAGIC {
        return Err(BooterError::BadMagic { magic: meta.magic });
    }
    if meta.revision != GSP_FW_WPR_META_REVISION {
        return Err(BooterError::BadRevision { revision: meta.revision });
    }
    if meta.verified != 0 {
        return Err(BooterError::NotZero { field: "verified", value: meta.verified });
    }
    if meta.gsp_fw_heap_vf_partition_count != 0 {
        return Err(BooterError::NotZero {
            field: "gspFwHeapVfPartitionCount",
            value: meta.gsp_fw_heap_vf_partition_count.into(),
        });
    }
    if meta.padding != [0; 6] {
        return Err(BooterError::NotZero {
            field: "padding",
            value: u64::from_le_bytes([
                meta.padding[0],
                meta.padding[1],
                meta.padding[2],
                meta.padding[3],
                meta.padding[4],
                meta.padding[5],
                0,
                0,
            ]),
        });
    }
    Ok(())
}

fn aligned(what: &'static str, value: u64, align: u64) -> Result<(), BooterError> {
    if value.is_multiple_of(align) {
        Ok(())
    } else {
        Err(BooterError::Layout { what, value })
    }
}

/// `lower + size <= upper`, without overflow.
fn fits(what: &'static str, lower: u64, size: u64, upper: u64) -> Result<(), BooterError> {
    match lower.checked_add(size) {
        Some(end) if end <= upper => Ok(()),
        _ => Err(BooterError::Layout { what, value: lower }),
    }
}

/// The layout `kgspCalculateFbLayout_TU102` produces (see the module documentation).
fn check_layout(m: &GspFwWprMeta, vram_bytes: u64) -> Result<(), BooterError> {
    const MIB: u64 = 1 << 20;
    if m.fb_size == 0 || m.fb_size > vram_bytes {
        return Err(BooterError::Layout { what: "fbSize is 0 or beyond VRAM", value: m.fb_size });
    }
    fits("VGA workspace ends beyond fbSize", m.vga_workspace_offset, m.vga_workspace_size, m.fb_size)?;
    aligned("gspFwWprEnd not 128 KiB aligned", m.gsp_fw_wpr_end, 0x2_0000)?;
    fits("gspFwWprEnd above the VGA workspace", m.gsp_fw_wpr_end, 0, m.vga_workspace_offset)?;
    if m.frts_offset.checked_add(m.frts_size) != Some(m.gsp_fw_wpr_end) {
        return Err(BooterError::Layout { what: "FRTS does not end at gspFwWprEnd", value: m.frts_offset });
    }
    aligned("bootBinOffset not 4 KiB aligned", m.boot_bin_offset, 0x1000)?;
    fits("boot binary runs into FRTS", m.boot_bin_offset, m.size_of_bootloader, m.frts_offset)?;
    aligned("gspFwOffset not 64 KiB aligned", m.gsp_fw_offset, 0x1_0000)?;
    fits("GSP-RM image runs into the boot binary", m.gsp_fw_offset, m.size_of_radix3_elf, m.boot_bin_offset)?;
    aligned("gspFwHeapOffset not 1 MiB aligned", m.gsp_fw_heap_offset, MIB)?;
    if m.gsp_fw_heap_size == 0 {
        return Err(BooterError::Layout { what: "gspFwHeapSize is 0", value: 0 });
    }
    fits("GSP-RM heap runs into the image", m.gsp_fw_heap_offset, m.gsp_fw_heap_size, m.gsp_fw_offset)?;
    aligned("gspFwWprStart not 1 MiB aligned", m.gsp_fw_wpr_start, MIB)?;
    fits(
        "no room for GspFwWprMeta between gspFwWprStart and the heap",
        m.gsp_fw_wpr_start,
        core::mem::size_of::<GspFwWprMeta>() as u64,
        m.gsp_fw_heap_offset,
    )?;
    aligned("nonWprHeapOffset not 1 MiB aligned", m.non_wpr_heap_offset, MIB)?;
    fits("non-WPR heap runs into WPR2", m.non_wpr_heap_offset, m.non_wpr_heap_size, m.gsp_fw_wpr_start)?;
    if m.gsp_fw_rsvd_start != m.non_wpr_heap_offset {
        return Err(BooterError::Layout { what: "gspFwRsvdStart is not nonWprHeapOffset", value: m.gsp_fw_rsvd_start });
    }
    if m.size_of_radix3_elf == 0 {
        return Err(BooterError::Layout { what: "sizeOfRadix3Elf is 0", value: 0 });
    }
    Ok(())
}

fn check_wpr2(m: &GspFwWprMeta, wpr2: Option<(u64, u64)>) -> Result<(), BooterError> {
    if m.frts_size == 0 {
        return match wpr2 {
            None => Ok(()),
            found => Err(BooterError::Wpr2NotFrts { frts_lo: m.frts_offset, frts_hi: m.frts_offset, found }),
        };
    }
    let expected = (m.frts_offset, m.frts_offset + m.frts_size - 1);
    if wpr2 == Some(expected) {
        Ok(())
    } else {
        Err(BooterError::Wpr2NotFrts { frts_lo: expected.0, frts_hi: expected.1, found: wpr2 })
    }
}

/// Walks the radix3 table and hands the image's first page (and the reader of all of it) to the
/// GSP-RM image check.
pub(crate) fn check_radix3_image(m: &GspFwWprMeta, ctx: &BooterContext<'_>) -> Result<(), BooterError> {
    let layout = Radix3Layout::new(m.size_of_radix3_elf).map_err(|_| BooterError::Radix3 {
        what: "sizeOfRadix3Elf cannot be described",
        value: m.size_of_radix3_elf,
    })?;
    let root = m.sysmem_addr_of_radix3_elf;
    if root == 0 || !root.is_multiple_of(RADIX3_PAGE_SIZE) {
        return Err(BooterError::Radix3 { what: "root not a 4 KiB-aligned page", value: root });
    }
    let mut level_pages = vec![root];
    for level in 1..4 {
        let count = layout.level_pages(level) as usize;
        let mut next = Vec::with_capacity(count);
        for (index, &table) in level_pages.iter().enumerate() {
            let mut page = vec![0u8; RADIX3_PAGE_SIZE as usize];
            read_exact(ctx, "radix3 table page", table, &mut page)
                .map_err(|_| BooterError::Radix3 { what: "table page unreadable", value: table })?;
            for (slot, entry) in page.chunks_exact(8).enumerate() {
                let entry = u64::from_le_bytes(entry.try_into().unwrap_or([0; 8]));
                let global = index * RADIX3_ENTRIES_PER_PAGE as usize + slot;
                if global < count {
                    if entry == 0 || !entry.is_multiple_of(RADIX3_PAGE_SIZE) {
                        return Err(BooterError::Radix3 { what: "entry not a 4 KiB-aligned page", value: entry });
                    }
                    next.push(entry);
                } else if entry != 0 {
                    return Err(BooterError::Radix3 {
                        what: "entry past the image's pages (sizeOfRadix3Elf too small?)",
                        value: entry,
                    });
                }
            }
        }
        level_pages = next;
    }
    let data_pages = level_pages;
    let size = m.size_of_radix3_elf;
    let read_image = |offset: u64, buf: &mut [u8]| -> bool {
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let Some(&page) = data_pages.get((at / RADIX3_PAGE_SIZE) as usize) else { return false };
            let within = (at % RADIX3_PAGE_SIZE) as usize;
            let take = (RADIX3_PAGE_SIZE as usize - within).min(buf.len() - done);
            if !ctx.memory.is_some_and(|m| m.read(page + within as u64, &mut buf[done..done + take])) {
                return false;
            }
            done += take;
        }
        true
    };
    gsp_image::check(ctx.chipset, size, &read_image).map_err(|why| BooterError::NotGspRm { why })
}

// ---------------------------------------------------------------------------------------------
// The model booter file.

/// Bytes of the model booter's OS data (DMEM image).
const MODEL_OS_DATA_SIZE: u32 = 0x400;
/// DMEM offset of the model booter's signature (as in NVIDIA's GA102/Ada booters).
pub const MODEL_SIGNATURE_DMEM_OFFSET: u32 = 0x10;
/// Signatures the model booter carries: fuse versions 0 and 1.
pub const MODEL_NUM_SIGNATURES: u32 = 2;

/// How the driver loads a booter on `chipset` (RM's `bBootFromHs`: GA102 and later).
pub fn load_style(chipset: Chipset) -> BooterLoadStyle {
    // Chips without a booter (Hopper on) would load one as GA102 does.
    crate::silicon::of(chipset.family()).booter.unwrap_or(BooterLoadStyle::FromHs)
}

/// A model booter file for `chipset`, in the layout `nvgpu::firmware::BooterFirmware` parses
/// (`nvfw_bin_hdr`, `nvfw_hs_header_v2`, signatures, `patch_loc`, `patch_sig`, patch metadata,
/// `num_sigs`, `nvfw_hs_load_header_v2`, image), signed for production parts (`debug` false) or
/// debug-fused ones, with [`MODEL_NUM_SIGNATURES`] signatures (file order: newest fuse version
/// first, so `s_patchBooterUcodeSignature` picks `num_sigs - 1 - fuse`).
///
/// The image: OS code (0x100 bytes), application code, OS data, as NVIDIA's files order them. On
/// GA102 and later the application code is the model ucode (heavy-secure, PKC) and the OS code
/// filler; on Turing and GA100, where `BOOTVEC` is 0, the OS code is the model ucode (no HS/PKC
/// flags: its first block is loaded non-secure) and the application code filler.
pub fn build_model_booter(chipset: Chipset, kind: BooterKind, debug: bool) -> Vec<u8> {
    let style = load_style(chipset);
    let application_id = match kind {
        BooterKind::Load => APPLICATION_BOOTER_LOAD,
        BooterKind::Unload => APPLICATION_BOOTER_UNLOAD,
    };
    let debug_flag = if debug { FLAG_DEBUG_SIGNED } else { 0 };
    let spec = UcodeSpec {
        application_id,
        interface_offset: MODEL_SIGNATURE_DMEM_OFFSET,
        image_size: 0x300,
        flags: debug_flag | if style == BooterLoadStyle::FromHs { FLAG_HS | FLAG_PKC } else { 0 },
        ucode_id: BOOTER_UCODE_ID,
        engine_id_mask: BOOTER_ENGINE_ID_MASK,
    };
    let model_code = ucode::build_image(&spec);
    let checksum = ucode::parse_header(&model_code).map(|h| h.checksum.get()).unwrap_or(0);
    let filler = |len: usize| -> Vec<u8> { b"model booter filler ".iter().copied().cycle().take(len).collect() };
    let (os_code, app_code) = match style {
        BooterLoadStyle::FromHs => (filler(0x100), model_code),
        BooterLoadStyle::Direct => (model_code, filler(0x100)),
    };

    let mut image = Vec::new();
    image.extend_from_slice(&os_code);
    let os_code_size = os_code.len() as u32;
    let app_code_offset = image.len() as u32;
    image.extend_from_slice(&app_code);
    let os_data_offset = image.len() as u32;
    image.extend(core::iter::repeat_n(0u8, MODEL_OS_DATA_SIZE as usize));
    let patch_loc = os_data_offset + MODEL_SIGNATURE_DMEM_OFFSET;

    // Signatures in file order: index i is for fuse version num_sigs - 1 - i.
    let mut signatures = Vec::new();
    for index in 0..MODEL_NUM_SIGNATURES {
        let fuse_version = MODEL_NUM_SIGNATURES - 1 - index;
        signatures.extend_from_slice(&ucode::model_signature(checksum, fuse_version, debug));
    }

    const BIN_HDR: u32 = 24;
    const HS_HDR: u32 = 36;
    let sig_offset = BIN_HDR + HS_HDR;
    let patch_loc_offset = sig_offset + signatures.len() as u32;
    let patch_sig_offset = patch_loc_offset + 4;
    let meta_offset = patch_sig_offset + 4;
    let num_sigs_offset = meta_offset + 12;
    let load_offset = num_sigs_offset + 4;
    let data_offset = (load_offset + 36).next_multiple_of(256);

    let mut file = Vec::new();
    let words = |file: &mut Vec<u8>, values: &[u32]| {
        for v in values {
            file.extend_from_slice(&v.to_le_bytes());
        }
    };
    let bin_size = (data_offset + image.len() as u32).next_multiple_of(256);
    words(
        &mut file,
        &[
            nvgpu::firmware::NVFW_BIN_MAGIC,
            nvgpu::firmware::NVFW_BIN_VERSION,
            bin_size,
            BIN_HDR,
            data_offset,
            image.len() as u32,
        ],
    );
    words(
        &mut file,
        &[
            sig_offset,
            signatures.len() as u32,
            patch_loc_offset,
            patch_sig_offset,
            meta_offset,
            12,
            num_sigs_offset,
            load_offset,
            36,
        ],
    );
    file.extend_from_slice(&signatures);
    words(&mut file, &[patch_loc, 0, 1, BOOTER_ENGINE_ID_MASK, BOOTER_UCODE_ID, MODEL_NUM_SIGNATURES]);
    words(
        &mut file,
        &[
            0,
            os_code_size,
            os_data_offset,
            MODEL_OS_DATA_SIZE,
            1,
            app_code_offset,
            app_code.len() as u32,
            app_code_offset,
            0,
        ],
    );
    file.resize(data_offset as usize, 0);
    file.extend_from_slice(&image);
    file
}

/// The family's WPR layout flavour matters to the booter only through the FRTS size; Hopper and
/// Blackwell have no booter.
pub const fn has_booter(family: Family) -> bool {
    crate::silicon::of(family).booter.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_index_follows_rm() {
        assert_eq!(signature_index(1, 5), Some(0));
        assert_eq!(signature_index(2, 0), Some(1));
        assert_eq!(signature_index(2, 1), Some(0));
        assert_eq!(signature_index(2, 2), None);
        assert_eq!(signature_index(0, 0), None);
    }

    #[test]
    fn fnv64_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn model_booter_parses_as_nvidia_booter() {
        for chip in [Chipset::TU102, Chipset::GA100, Chipset::GA102, Chipset::AD102] {
            for kind in [BooterKind::Load, BooterKind::Unload] {
                let file = build_model_booter(chip, kind, false);
                let booter = nvgpu::firmware::BooterFirmware::parse(&file).expect("parses");
                assert_eq!(booter.num_signatures, MODEL_NUM_SIGNATURES);
                assert_eq!(booter.meta.ucode_id, BOOTER_UCODE_ID);
                assert_eq!(booter.signature_dmem_offset(), MODEL_SIGNATURE_DMEM_OFFSET);
                let header_at = match load_style(chip) {
                    BooterLoadStyle::FromHs => booter.load.app_code_offset as usize,
                    BooterLoadStyle::Direct => 0,
                };
                let header = ucode::parse_header(&booter.image()[header_at..]).unwrap();
                let kind_id =
                    if kind == BooterKind::Load { APPLICATION_BOOTER_LOAD } else { APPLICATION_BOOTER_UNLOAD };
                assert_eq!(header.application_id.get(), kind_id);
                // Fuse version 0 takes the last signature, as RM picks it.
                let sig = booter.signature_for_fuse_version(0).unwrap();
                assert_eq!(sig, ucode::model_signature(header.checksum.get(), 0, false).as_slice());
            }
        }
    }

    #[test]
    fn errors_have_distinct_mailbox_codes() {
        let all = [
            BooterError::MetaUnreadable { bus: 0 },
            BooterError::BadMagic { magic: 0 },
            BooterError::BadRevision { revision: 0 },
            BooterError::NotZero { field: "", value: 0 },
            BooterError::Layout { what: "", value: 0 },
            BooterError::Wpr2NotFrts { frts_lo: 0, frts_hi: 0, found: None },
            BooterError::Radix3 { what: "", value: 0 },
            BooterError::NotGspRm { why: GspRmImageError::Unknown { first_page_fnv64: 0, size: 0 } },
            BooterError::Unreadable { what: "", bus: 0, len: 0 },
            BooterError::GspNotReady { why: "" },
            BooterError::GspRmRunning,
            BooterError::Wpr2NotUp,
            BooterError::GspRmNotStopped,
        ];
        let mut codes: Vec<u32> = all.iter().map(BooterError::mailbox0).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
        assert!(codes.iter().all(|&c| c != 0));
    }
}
