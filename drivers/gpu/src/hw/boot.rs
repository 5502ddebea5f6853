//! Facts the GSP boot reads outside the falcon and engine blocks: the ucode revocation fuses and
//! the GSP debug fuse, two GC6 scratch values, the FB local memory range, GH100's boot ROM
//! lockdown bit, the PCI configuration mirror and the PCI class codes the boards report. Their
//! tables are in `hw::FACT_TABLES`, so the header conformance test checks them like every other
//! fact.
//!
//! The fuse registers are declared for ucode id 1 only, as the header names them one by one
//! (`NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION` .. `UCODE16`, 4 bytes apart) and RM computes the
//! others as `UCODE1 + 4 * (id - 1)` (`kgspReadUcodeFuseVersion_GA100`,
//! `ksec2ReadUcodeFuseVersion_GA100`); see [`ucode_fuse_offset`].

use crate::hw::headers;
use crate::{constants, field_values, registers};

registers! {
    /// Facts of the ucode revocation fuses.
    pub const FUSE_FACTS;

    /// Revocation fuse of GSP ucode id 1: a bitmap whose highest set bit, plus one, is the
    /// lowest signature version the boot ROM accepts for that ucode.
    pub NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION(0x008241c0) in headers::GA100_DEV_FUSE {
        /// The fuse bits.
        15:0 DATA => data: u16,
    }

    /// Revocation fuse of SEC2 ucode id 1 (the booters are SEC2 ucodes).
    pub NV_FUSE_OPT_FPF_SEC2_UCODE1_VERSION(0x00824140) in headers::GA100_DEV_FUSE {
        /// The fuse bits.
        15:0 DATA => data: u16,
    }
}

constants! {
    /// Facts of named values.
    pub const VALUE_FACTS;

    /// `NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK_READ_PROTECTION_LEVEL0`: the driver's
    /// privilege level may read scratch group 05 (FWSEC lowered the mask; GFW boot status is
    /// readable).
    pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK_READ_PROTECTION_LEVEL0_ENABLE: u32 = 0x00000001
        in headers::TU102_DEV_GC6_ISLAND;
    /// `NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF`: the booter handed off to GSP-RM.
    pub NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF_VALUE_DONE: u32 = 0x1
        in headers::TU102_DEV_GC6_ISLAND_ADDENDUM;
}

field_values! {
    /// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA`: whether the part is production-fused.
    pub enum SecureGspDebugDis: NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA in headers::GA100_DEV_FUSE {
        /// Debug mode enabled: a debug-fused part (it runs debug-signed FWSEC).
        No = 0x0 => NO,
        /// Debug disabled: a production part.
        Yes = 0x1 => YES,
    }
}

registers! {
    /// Facts of the GSP debug fuse (GA100 and later; [`tu102::FACTS`] and [`gh100::FACTS`] have
    /// the other headers').
    pub const DEBUG_FUSE_FACTS;

    /// Whether GSP debug mode is fused off, which selects the FWSEC signing (production or
    /// debug) RM picks.
    pub NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS(0x0082074c) in headers::GA100_DEV_FUSE {
        /// The fuse.
        0:0 DATA => data: SecureGspDebugDis,
    }
}

/// The GSP debug fuse on Turing.
pub mod tu102 {
    use crate::hw::headers;
    use crate::registers;

    registers! {
        /// Facts of this module.
        pub const FACTS;

        /// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` at Turing's offset.
        pub NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS(0x0002174c) in headers::TU102_DEV_FUSE {
            /// The fuse ([`super::SecureGspDebugDis`] values).
            0:0 DATA => data: u8,
        }
    }
}

/// The GSP debug fuse as Hopper's header has it (at GA100's offset).
pub mod gh100 {
    use crate::hw::headers;
    use crate::registers;

    registers! {
        /// Facts of this module.
        pub const FACTS;

        /// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` on Hopper.
        pub NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS(0x0082074c) in headers::GH100_DEV_FUSE {
            /// The fuse ([`super::SecureGspDebugDis`] values).
            0:0 DATA => data: u8,
        }
    }

    const _: () = assert!(NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS::OFFSET == super::NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS::OFFSET);
}

/// Number of `NV_FUSE_OPT_FPF_*_UCODE<n>_VERSION` registers per engine (n = 1..16): RM's
/// `index < 16` in `kgspReadUcodeFuseVersion_GA100` (the header names no `__SIZE_1`).
pub const NV_FUSE_OPT_FPF_UCODE_VERSION_COUNT: u32 = 16;

/// Which engine's revocation fuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuseEngine {
    /// `NV_FUSE_OPT_FPF_GSP_UCODE<n>_VERSION`: FWSEC and the other ucodes GSP runs.
    Gsp,
    /// `NV_FUSE_OPT_FPF_SEC2_UCODE<n>_VERSION`: the booters.
    Sec2,
}

/// BAR0 offset of `engine`'s fuse for 1-based `ucode_id`, or `None` outside 1..=16 (RM reads
/// no fuse there and takes version 0).
pub const fn ucode_fuse_offset(engine: FuseEngine, ucode_id: u32) -> Option<u32> {
    if ucode_id == 0 || ucode_id > NV_FUSE_OPT_FPF_UCODE_VERSION_COUNT {
        return None;
    }
    let first = match engine {
        FuseEngine::Gsp => NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION::OFFSET,
        FuseEngine::Sec2 => NV_FUSE_OPT_FPF_SEC2_UCODE1_VERSION::OFFSET,
    };
    Some(first + 4 * (ucode_id - 1))
}

/// Note: the `NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK_READ_PROTECTION_LEVEL0` field
/// itself is declared by `hw::gc6`; only its named value is here.
const _: () = assert!(NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK_READ_PROTECTION_LEVEL0_ENABLE == 1);

registers! {
    /// Facts of the local memory range register.
    pub const FB_FACTS;

    /// The framebuffer size devinit found: `LOWER_MAG << (LOWER_SCALE + 20)` bytes, 15/16 of it
    /// usable when ECC is on.
    pub NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE(0x00100ce0) in headers::GP102_DEV_FB {
        /// Scale (a power of two on top of MiB).
        3:0 LOWER_SCALE => lower_scale: u8,
        /// Magnitude.
        9:4 LOWER_MAG => lower_mag: u8,
        /// ECC on (`_ENABLED` = 1).
        30:30 ECC_MODE => ecc_mode: bool,
    }
}

impl NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE {
    /// The usable framebuffer size it says, as `kmemsysReadUsableFbSize_GP102` computes it.
    pub fn usable_fb_size(self) -> u64 {
        let size = u64::from(self.lower_mag()) << (u32::from(self.lower_scale()) + 20);
        if self.ecc_mode() {
            size / 16 * 15
        } else {
            size
        }
    }
}

registers! {
    /// Facts of Hopper's HWCFG2 lockdown bit.
    pub const GH100_FALCON_FACTS;

    /// `NV_PFALCON_FALCON_HWCFG2` as Hopper's header adds to it (`hw::falcon::ga102` declares
    /// the register and its other fields).
    pub NV_PFALCON_FALCON_HWCFG2(view) in headers::GH100_DEV_FALCON_V4 {
        /// The boot ROM's privilege lockdown: 1 (`_LOCK`) until the GSP-FMC releases it.
        13:13 RISCV_BR_PRIV_LOCKDOWN => riscv_br_priv_lockdown: bool,
    }
}

constants! {
    /// Facts of the PCI config-space mirrors in BAR0.
    pub const PCFG_FACTS;

    /// The PCI config-space mirror RM reports to GSP-RM on Turing to Ada
    /// (`kbifGetPciConfigSpacePriMirror_GM107`).
    pub NV_PCFG: Range = 0x00088fff : 0x00088000 in headers::TU102_DEV_NV_XVE;
    /// The same on Hopper (`kbifGetPciConfigSpacePriMirror_GH100`).
    pub NV_EP_PCFGM: Range = 0x92fff : 0x92000 in headers::GH100_DEV_XTL_EP_PRI;
}

/// PCI class code (base class 03h, sub-class 00h): VGA-compatible display controller, what
/// NVIDIA's display boards report. From the PCI Code and ID Assignment Specification (class
/// 03h), not from an NVIDIA file: it cannot be checked against NVIDIA's headers.
pub const PCI_CLASS_DISPLAY_VGA: u16 = 0x0300;
/// PCI class code (base class 03h, sub-class 02h): 3D controller (not VGA-compatible), what
/// NVIDIA's compute boards (A100, H100/H200, B200) report. Same source as
/// [`PCI_CLASS_DISPLAY_VGA`]; not header-checked.
pub const PCI_CLASS_DISPLAY_3D: u16 = 0x0302;
