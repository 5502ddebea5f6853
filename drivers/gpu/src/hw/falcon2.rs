//! The falcon2 (boot ROM) registers of GA102 and later, and the FBIF target value the falcon
//! driver borrows from another header; their tables are in `hw::FACT_TABLES`.
//!
//! - `NV_PFALCON2_FALCON_*`: the boot ROM's parameters for a heavy-secure (PKC-signed) ucode on
//!   GA102 and later, relative to the engine's "falcon2" (RISC-V) base
//!   (`ampere/ga102/dev_falcon_second_pri.h`, 535.261.03); RM programs them in
//!   `kgspExecuteHsFalcon_GA102` (`kernel_gsp_falcon_ga102.c`).
//! - The FBIF non-coherent system memory target: no `dev_fbif_v4.h` names it (they name only
//!   `COHERENT_SYSMEM` = 1); the same FBIF block's header for the NVSwitch SOE falcon does
//!   (`nvswitch/lr10/dev_soe_ip.h`: `NV_SOE_FBIF_TRANSCFG_TARGET`, bits 1:0, the same field as
//!   `NV_PFALCON_FBIF_TRANSCFG_TARGET`), and RM's generic falcon bootloader descriptor calls
//!   context 4 "PHYS_SYS_NCOH".

use crate::hw::headers;
use crate::{constants, field_values, registers};

field_values! {
    /// `NV_PFALCON2_FALCON_MOD_SEL_ALGO`: the signature algorithm the boot ROM checks.
    pub enum ModSelAlgo: NV_PFALCON2_FALCON_MOD_SEL_ALGO in headers::GA102_DEV_FALCON_SECOND_PRI {
        /// RSA-3072 (the only value the header names; FWSEC and the booters use it).
        Rsa3k = 0x1 => RSA3K,
    }
}

registers! {
    /// Facts of the falcon2 boot ROM registers.
    pub const FACTS;

    /// Signature algorithm selection for the boot ROM (relative to the falcon2 base).
    pub NV_PFALCON2_FALCON_MOD_SEL(base + 0x00000180) in headers::GA102_DEV_FALCON_SECOND_PRI {
        /// Algorithm.
        7:0 ALGO => algo: ModSelAlgo,
    }

    /// Ucode id of the image being verified (selects its fuse revocation version).
    pub NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID(base + 0x00000198) in headers::GA102_DEV_FALCON_SECOND_PRI {
        /// Ucode id.
        7:0 VAL => val: u8,
    }

    /// Mask of the engines the image is signed for.
    pub NV_PFALCON2_FALCON_BROM_ENGIDMASK(base + 0x0000019c) in headers::GA102_DEV_FALCON_SECOND_PRI {}

    /// Boot ROM parameter addresses; element 0 is the signature's DMEM offset.
    pub NV_PFALCON2_FALCON_BROM_PARAADDR(base + 0x00000210, stride 4) in headers::GA102_DEV_FALCON_SECOND_PRI {}
}

constants! {
    /// Facts of values borrowed from another header (see the module note).
    pub const VALUE_FACTS;

    /// FBIF target: non-coherent system memory.
    pub NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM: u32 = 0x2 in headers::LR10_DEV_SOE_IP;
}

/// Every fact this module declares.
pub fn facts() -> impl Iterator<Item = &'static crate::hw::HeaderFact> {
    FACTS.iter().chain(VALUE_FACTS.iter()).flat_map(|group| group.iter()).flat_map(|facts| facts.iter())
}
