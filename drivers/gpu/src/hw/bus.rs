//! PBUS scratch registers and the PROM window (the VBIOS image as BAR0 sees it).
//!
//! Follows `turing/tu102/dev_bus.h`, `ampere/ga100/dev_bus.h`, `turing/tu102/dev_ext_devices.h`
//! and, for the FWSEC-FRTS error code, RM's `kernel_gsp_frts_tu102.c` (535.261.03).

use super::{headers, RegisterIo};
use crate::{constants, registers};

registers! {
    /// Facts of the registers of this module.
    pub const REGISTER_FACTS;

    /// The VBIOS ROM, byte-addressed from BAR0 offset 0x300000 (`NV_PROM_DATA(i)`). Reads are 32
    /// bits wide here, so `index` should be a multiple of 4; see [`read_prom_word`].
    pub NV_PROM_DATA(0x00300000, stride 1) in headers::TU102_DEV_EXT_DEVICES {}

    /// Scratch registers the VBIOS and its falcon ucodes leave results in (Turing header name).
    pub NV_PBUS_VBIOS_SCRATCH(0x00001400, stride 4) in headers::TU102_DEV_BUS {}

    /// The same scratch array under its Ampere-and-later name.
    pub NV_PBUS_SW_SCRATCH(0x00001400, stride 4) in headers::GA100_DEV_BUS {
        /// The whole word.
        31:0 FIELD => field: u32,
    }

    /// What FWSEC leaves in `NV_PBUS_VBIOS_SCRATCH(NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E)` after
    /// the FRTS command.
    pub NV_VBIOS_FWSECLIC(view) in headers::KERNEL_GSP_FRTS_TU102 {
        /// FRTS error code; [`NV_VBIOS_FWSECLIC_FRTS_ERR_CODE_NONE`] when FRTS succeeded.
        31:16 FRTS_ERR_CODE => frts_err_code: u16,
        /// SB error code (in `NV_PBUS_VBIOS_SCRATCH(NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15)`);
        /// [`NV_VBIOS_FWSECLIC_SB_ERR_CODE_NONE`] when the SB command succeeded.
        15:0 SB_ERR_CODE => sb_err_code: u16,
    }
}

constants! {
    /// Facts of the constants of this module.
    pub const CONSTANT_FACTS;

    /// Index of the scratch register holding FWSEC's FRTS result.
    pub NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E: u32 = 0x0E in headers::KERNEL_GSP_FRTS_TU102;
    /// FRTS error code meaning "no error".
    pub NV_VBIOS_FWSECLIC_FRTS_ERR_CODE_NONE: u16 = 0x00000000 in headers::KERNEL_GSP_FRTS_TU102;
    /// Index of the scratch register holding FWSEC's SB result.
    pub NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15: u32 = 0x15 in headers::KERNEL_GSP_FRTS_TU102;
    /// SB error code meaning "no error".
    pub NV_VBIOS_FWSECLIC_SB_ERR_CODE_NONE: u16 = 0x00000000 in headers::KERNEL_GSP_FRTS_TU102;
    /// Number of `NV_PBUS_SW_SCRATCH` registers.
    pub NV_PBUS_SW_SCRATCH__SIZE_1: u32 = 64 in headers::GA100_DEV_BUS;
}

/// Reads the 32-bit little-endian word at `byte_offset` into the ROM image (rounded down to a
/// multiple of 4).
pub fn read_prom_word(io: &(impl RegisterIo + ?Sized), byte_offset: u32) -> u32 {
    NV_PROM_DATA::read(io, byte_offset & !3).raw()
}

/// FWSEC's SB result: `Ok(())` when it reported no error, else the error code it left.
pub fn fwsec_sb_result(io: &(impl RegisterIo + ?Sized)) -> Result<(), u16> {
    let scratch = NV_PBUS_VBIOS_SCRATCH::read(io, NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15);
    match NV_VBIOS_FWSECLIC::from_raw(scratch.raw()).sb_err_code() {
        NV_VBIOS_FWSECLIC_SB_ERR_CODE_NONE => Ok(()),
        code => Err(code),
    }
}

/// FWSEC's FRTS result: `Ok(())` when it reported no error, else the error code it left.
pub fn fwsec_frts_result(io: &(impl RegisterIo + ?Sized)) -> Result<(), u16> {
    let scratch = NV_PBUS_VBIOS_SCRATCH::read(io, NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E);
    match NV_VBIOS_FWSECLIC::from_raw(scratch.raw()).frts_err_code() {
        NV_VBIOS_FWSECLIC_FRTS_ERR_CODE_NONE => Ok(()),
        code => Err(code),
    }
}
