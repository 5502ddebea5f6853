//! PFB: the write-protected region 2 (WPR2) bounds FWSEC-FRTS and the booter set up.
//!
//! Follows `turing/tu102/dev_fb.h` (535.261.03), which RM also uses for Ampere and Ada.

use super::headers;
use crate::registers;

registers! {
    /// Facts of this module.
    pub const FACTS;

    /// Start of WPR2, in 4 KiB units (address bits 39:12 in VAL).
    pub NV_PFB_PRI_MMU_WPR2_ADDR_LO(0x001fa824) in headers::TU102_DEV_FB {
        /// Start address >> 12 (`NV_PFB_PRI_MMU_WPR2_ADDR_LO_ALIGNMENT`).
        31:4 VAL => val: u32,
    }

    /// End of WPR2 (inclusive 4 KiB unit); zero while no WPR2 is set up.
    pub NV_PFB_PRI_MMU_WPR2_ADDR_HI(0x001fa828) in headers::TU102_DEV_FB {
        /// End address >> 12.
        31:4 VAL => val: u32,
    }
}

crate::constants! {
    /// Facts of the WPR2 address alignment.
    pub const ALIGNMENT_FACTS;

    /// Shift from `VAL` to a byte address.
    pub NV_PFB_PRI_MMU_WPR2_ADDR_LO_ALIGNMENT: u32 = 0x0000000c in headers::TU102_DEV_FB;
    /// Shift from `VAL` to a byte address.
    pub NV_PFB_PRI_MMU_WPR2_ADDR_HI_ALIGNMENT: u32 = 0x0000000c in headers::TU102_DEV_FB;
}

impl NV_PFB_PRI_MMU_WPR2_ADDR_LO {
    /// Byte address of WPR2's start.
    pub fn start_address(self) -> u64 {
        u64::from(self.val()) << NV_PFB_PRI_MMU_WPR2_ADDR_LO_ALIGNMENT
    }
}

impl NV_PFB_PRI_MMU_WPR2_ADDR_HI {
    /// Byte address of WPR2's last 4 KiB unit; `None` when WPR2 is not set up.
    pub fn last_unit_address(self) -> Option<u64> {
        match self.val() {
            0 => None,
            val => Some(u64::from(val) << NV_PFB_PRI_MMU_WPR2_ADDR_HI_ALIGNMENT),
        }
    }
}
