//! PGC6 always-on (AON) scratch registers: what the VBIOS's boot firmware reports to the driver.
//!
//! Follows `turing/tu102/dev_gc6_island.h` and `dev_gc6_island_addendum.h`, for the usable
//! framebuffer size `ampere/ga102/dev_gc6_island.h` and its addendum, and for Hopper's FRTS size
//! `hopper/gh100/dev_gc6_island_addendum.h` ([`gh100`]) (535.261.03).

use super::{headers, RegisterIo};
use crate::{constants, registers};

constants! {
    /// Facts of the GC6 island window and named values.
    pub const CONSTANT_FACTS;

    /// The GC6 island's register window.
    pub NV_PGC6: Range = 0x118fff : 0x118000 in headers::TU102_DEV_GC6_ISLAND;
    /// `GFW_BOOT_PROGRESS` once the VBIOS boot firmware (devinit) finished.
    pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT_PROGRESS_COMPLETED: u8 = 0x000000FF
        in headers::TU102_DEV_GC6_ISLAND_ADDENDUM;
    /// FRTS region size of 1 MiB, in 4 KiB units.
    pub NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K: u16 = 0x100
        in headers::TU102_DEV_GC6_ISLAND_ADDENDUM;
}

registers! {
    /// Facts of this module's registers.
    pub const FACTS;

    /// AON scratch group 03.
    pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_03(0x00118214, stride 4) in headers::TU102_DEV_GC6_ISLAND {}
    /// AON scratch group 05.
    pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(0x00118234, stride 4) in headers::TU102_DEV_GC6_ISLAND {}

    /// Who may read scratch group 05: when level 0 (the driver) may not, the GFW boot status
    /// cannot be polled and the driver must wait a fixed time instead.
    pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK(0x00118128) in headers::TU102_DEV_GC6_ISLAND {
        /// Read protection per privilege level.
        3:0 READ_PROTECTION => read_protection: u8,
        /// Level 0 may read.
        0:0 READ_PROTECTION_LEVEL0 => read_protection_level0: bool,
    }

    /// GFW boot progress: `NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(0)`.
    pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT(0x00118234) in headers::TU102_DEV_GC6_ISLAND_ADDENDUM {
        /// Progress; [`NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT_PROGRESS_COMPLETED`] when done.
        7:0 PROGRESS => progress: u8,
    }

    /// FRTS input: the WPR size FWSEC should carve (`NV_PGC6_AON_SECURE_SCRATCH_GROUP_03(0)`).
    pub NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0(0x00118214) in headers::TU102_DEV_GC6_ISLAND_ADDENDUM {
        /// Size in 4 KiB units.
        15:0 WPR_SIZE => wpr_size: u16,
    }

    /// Boot-stage scratch of the BSI.
    pub NV_PGC6_BSI_SECURE_SCRATCH_14(0x001180f8) in headers::TU102_DEV_GC6_ISLAND {
        /// Boot stage 3 handed off.
        26:26 BOOT_STAGE_3_HANDOFF @ headers::TU102_DEV_GC6_ISLAND_ADDENDUM => boot_stage_3_handoff: bool,
    }

    /// AON scratch group 42 (GA102 and later).
    pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_42(0x001183a4) in headers::GA102_DEV_GC6_ISLAND {}

    /// Usable framebuffer size the boot firmware measured: `NV_PGC6_AON_SECURE_SCRATCH_GROUP_42`.
    pub NV_USABLE_FB_SIZE_IN_MB(0x001183a4) in headers::GA102_DEV_GC6_ISLAND_ADDENDUM {
        /// Size in MiB.
        31:0 VALUE => value: u32,
    }
}

/// Hopper's addendum, which RM's FSP code (`kern_fsp_gh100.c`) includes instead of Turing's.
pub mod gh100 {
    use crate::constants;
    use crate::hw::headers;

    constants! {
        /// Facts of Hopper's GC6 addendum.
        pub const FACTS;

        /// 1 MiB in 4 KiB units: the size of the FRTS copies RM asks the FSP for
        /// (`kfspSendBootCommands_GH100`).
        pub NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K: u32 = 0x100
            in headers::GH100_DEV_GC6_ISLAND_ADDENDUM;
    }
}

/// Whether the VBIOS boot firmware finished (GFW boot progress reads COMPLETED).
pub fn gfw_boot_completed(io: &(impl RegisterIo + ?Sized)) -> bool {
    NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::read(io).progress()
        == NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT_PROGRESS_COMPLETED
}

const _: () = {
    assert!(NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::OFFSET == NV_PGC6_AON_SECURE_SCRATCH_GROUP_05::address(0));
    assert!(NV_USABLE_FB_SIZE_IN_MB::OFFSET == NV_PGC6_AON_SECURE_SCRATCH_GROUP_42::OFFSET);
    assert!(NV_PGC6.contains(NV_USABLE_FB_SIZE_IN_MB::OFFSET));
};
