//! PTHERM: the I2CS scratch register in which the FSP reports that its boot finished (Hopper and
//! later). Its offset moved on Blackwell GB20x, hence one module per layout.
//!
//! Follows `hopper/gh100/dev_therm.h` and `dev_therm_addendum.h` (535.261.03),
//! `blackwell/gb100/dev_therm.h` and `blackwell/gb202/dev_therm.h` (570.133.07).

use super::headers;
use crate::{field_values, registers};

field_values! {
    /// `NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE_STATUS`.
    pub enum FspBootStatus: NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE_STATUS in headers::GH100_DEV_THERM_ADDENDUM {
        /// Not (yet) booted.
        Failed = 0x00000000 => FAILED,
        /// The FSP finished booting.
        Success = 0x000000FF => SUCCESS,
    }
}

registers! {
    /// Facts of the Hopper layout.
    pub const FACTS;

    /// I2CS scratch (GH100).
    pub NV_THERM_I2CS_SCRATCH(0x000200bc) in headers::GH100_DEV_THERM {
        /// The word.
        31:0 DATA => data: u32,
    }

    /// The FSP boot status, as the addendum reads the I2CS scratch.
    pub NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE(view) in headers::GH100_DEV_THERM_ADDENDUM {
        /// Status (values other than the two named mean "still booting").
        31:0 STATUS => status: u32,
    }
}

/// Facts of the named FSP boot status values.
pub const VALUE_FACTS: &[super::FactGroup] = &[&[<FspBootStatus as super::FieldType>::VALUE_FACTS]];

/// GB100's layout (same offset as Hopper).
pub mod gb100 {
    use super::headers;
    use crate::registers;

    registers! {
        /// Facts of the GB100 layout.
        pub const FACTS;

        /// I2CS scratch (GB100).
        pub NV_THERM_I2CS_SCRATCH(0x000200bc) in headers::GB100_DEV_THERM {}
    }
}

/// GB202's layout (GB20x moved PTHERM).
pub mod gb202 {
    use super::headers;
    use crate::registers;

    registers! {
        /// Facts of the GB202 layout.
        pub const FACTS;

        /// I2CS scratch (GB202).
        pub NV_THERM_I2CS_SCRATCH(0x00ad00bc) in headers::GB202_DEV_THERM {}
    }
}
