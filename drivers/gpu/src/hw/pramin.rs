//! PRAMIN: BAR0's 1 MiB window into GPU memory, and the register that places it.
//!
//! - `NV_PRAMIN` (`turing/tu102/dev_ram.h`; the same range in `hopper/gh100/dev_ram.h`): BAR0
//!   0x700000..=0x7FFFFF shows memory from the window base on.
//! - Turing to Ada: `NV_PBUS_BAR0_WINDOW` (`maxwell/gm107/dev_bus.h`), base in 64 KiB units and a
//!   target aperture; RM programs it in `kbusSetBAR0WindowVidOffset_GM107`
//!   (`kern_bus_gm107.c`), always with `TARGET_VID_MEM`.
//! - Hopper: `NV_XAL_EP_BAR0_WINDOW` (`hopper/gh100/pri_nv_xal_ep.h`), base only; "the
//!   `_BAR0_WINDOW_TARGET` field is removed. It's always VIDMEM" (`kbusSetBAR0WindowVidOffset_GH100`,
//!   `kern_bus_gh100.c`).

use super::headers;
use crate::{constants, field_values, registers};

field_values! {
    /// What the pre-Hopper window shows.
    pub enum Bar0WindowTarget: NV_PBUS_BAR0_WINDOW_TARGET in headers::GM107_DEV_BUS {
        VidMem = 0x0 => VID_MEM,
        SysMemCoherent = 0x2 => SYS_MEM_COHERENT,
        SysMemNoncoherent = 0x3 => SYS_MEM_NONCOHERENT,
    }
}

registers! {
    /// Facts of the window registers.
    pub const FACTS;

    /// The window's base and target, Turing to Ada.
    pub NV_PBUS_BAR0_WINDOW(0x00001700) in headers::GM107_DEV_BUS {
        /// Base address >> 16.
        23:0 BASE => base: u32,
        25:24 TARGET => target: Bar0WindowTarget,
    }

    /// The window's base, Hopper (video memory only).
    pub NV_XAL_EP_BAR0_WINDOW(0x0010fd40) in headers::GH100_PRI_NV_XAL_EP {
        /// Base address >> 16.
        21:0 BASE => base: u32,
    }
}

constants! {
    /// Facts of the window's range and base units.
    pub const CONSTANT_FACTS;

    /// The BAR0 range of the window.
    pub NV_PRAMIN: Range = 0x007FFFFF : 0x00700000 in headers::TU102_DEV_RAM;
    pub NV_PBUS_BAR0_WINDOW_BASE_SHIFT: u32 = 16 in headers::GM107_DEV_BUS;
    pub NV_XAL_EP_BAR0_WINDOW_BASE_SHIFT: u32 = 0x000010 in headers::GH100_PRI_NV_XAL_EP;
}

/// Bytes the window shows.
pub const PRAMIN_WINDOW_BYTES: u64 = (NV_PRAMIN.last - NV_PRAMIN.first) as u64 + 1;

/// Which register places the window on a chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowRegister {
    /// `NV_PBUS_BAR0_WINDOW` (Turing, Ampere, Ada).
    Pbus,
    /// `NV_XAL_EP_BAR0_WINDOW` (Hopper).
    XalEp,
}

impl WindowRegister {
    /// BAR0 offset of the register.
    pub const fn offset(self) -> u32 {
        match self {
            WindowRegister::Pbus => NV_PBUS_BAR0_WINDOW::OFFSET,
            WindowRegister::XalEp => NV_XAL_EP_BAR0_WINDOW::OFFSET,
        }
    }

    /// The largest base (in 64 KiB units) the register holds.
    pub const fn max_base(self) -> u32 {
        match self {
            WindowRegister::Pbus => NV_PBUS_BAR0_WINDOW::BASE.bits.mask() >> NV_PBUS_BAR0_WINDOW::BASE.bits.lo,
            WindowRegister::XalEp => NV_XAL_EP_BAR0_WINDOW::BASE.bits.mask() >> NV_XAL_EP_BAR0_WINDOW::BASE.bits.lo,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_one_mib_in_64k_steps() {
        assert_eq!(PRAMIN_WINDOW_BYTES, 1 << 20);
        assert_eq!(NV_PBUS_BAR0_WINDOW_BASE_SHIFT, NV_XAL_EP_BAR0_WINDOW_BASE_SHIFT);
        assert_eq!(WindowRegister::Pbus.max_base(), 0xFF_FFFF);
        assert_eq!(WindowRegister::XalEp.max_base(), 0x3F_FFFF);
    }
}
