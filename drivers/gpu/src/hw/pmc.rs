//! PMC: the master control unit at the start of BAR0 (chip identification, engine enables), and
//! the numbers chip identification compares with: architectures ([`ARCHITECTURE_FACTS`]) and
//! implementations ([`NV_ARCH_FACTS`]), which `crate::chip` builds its chip table from.
//!
//! Follows `src/common/inc/swref/published/nv_ref.h` (NV_PMC_BOOT_0, NV_PMC_BOOT_42), `nv_arch.h`
//! and
//! `turing/tu102/dev_boot.h` (NV_PMC_ENABLE) of open-gpu-kernel-modules 535.261.03. Release
//! 570.133.07 widens the architecture fields for Blackwell-and-later numbering; that layout is in
//! [`r570`] and is the one chip identification decodes with.

use super::headers;
use crate::{constants, registers};

registers! {
    /// Facts of this module (535.261.03 layouts; [`r570::FACTS`] has the 570 ones).
    pub const FACTS;

    /// Chip identification, the first register of BAR0. Superseded by [`NV_PMC_BOOT_42`] on
    /// chips that implement it; still the fallback when BOOT_42 reads zero.
    pub NV_PMC_BOOT_0(0x00000000) in headers::NV_REF {
        /// Minor revision of the chip (the "A1" in GA102-A1 is major 0xA, minor 1).
        3:0 MINOR_REVISION => minor_revision: u8,
        /// Major revision of the chip.
        7:4 MAJOR_REVISION => major_revision: u8,
        /// Implementation within the architecture (e.g. 2 for TU102).
        23:20 IMPLEMENTATION => implementation: u8,
        /// Architecture (0x16 Turing, 0x17 Ampere, 0x18 Hopper, 0x19 Ada); 535 has five bits.
        28:24 ARCHITECTURE => architecture: u8,
    }

    /// Chip identification for Turing and later: architecture and implementation in one
    /// `CHIP_ID`, plus the revision.
    pub NV_PMC_BOOT_42(0x00000a00) in headers::NV_REF {
        /// Extension of the minor revision.
        11:8 MINOR_EXTENDED_REVISION => minor_extended_revision: u8,
        /// Minor revision.
        15:12 MINOR_REVISION => minor_revision: u8,
        /// Major revision.
        19:16 MAJOR_REVISION => major_revision: u8,
        /// Implementation within the architecture.
        23:20 IMPLEMENTATION => implementation: u8,
        /// Architecture (five bits in 535; see [`r570::NV_PMC_BOOT_42`]).
        28:24 ARCHITECTURE => architecture: u8,
        /// `ARCHITECTURE << 4 | IMPLEMENTATION`, e.g. 0x172 for GA102.
        28:20 CHIP_ID => chip_id: u16,
    }

    /// Engine enables (one bit per engine on pre-Hopper chips; most engines are reset through
    /// their own registers on GSP-based chips).
    pub NV_PMC_ENABLE(0x00000200) in headers::TU102_DEV_BOOT {
        /// NVDEC engine enable.
        15:15 NVDEC => nvdec: bool,
    }
}

/// BOOT_0/BOOT_42 as open-gpu-kernel-modules 570.133.07 lays them out: the architecture field
/// grows a sixth bit (BOOT_0 keeps it apart, in bit 8) so numbers past 0x1f fit. Every
/// architecture up to Blackwell (0x1b) has that bit clear; decoding with this layout keeps a later
/// chip from aliasing onto a known one (0x36 must not read as Turing's 0x16).
pub mod r570 {
    use super::headers;
    use crate::registers;

    registers! {
        /// Facts of this module (570.133.07 layouts).
        pub const FACTS;

        /// BOOT_0 with the architecture split in two fields.
        pub NV_PMC_BOOT_0(0x00000000) in headers::NV_REF_570 {
            /// Minor revision.
            3:0 MINOR_REVISION => minor_revision: u8,
            /// Major revision.
            7:4 MAJOR_REVISION => major_revision: u8,
            /// Architecture bit 5.
            8:8 ARCHITECTURE_1 => architecture_1: u8,
            /// Implementation within the architecture.
            23:20 IMPLEMENTATION => implementation: u8,
            /// Architecture bits 4:0.
            28:24 ARCHITECTURE_0 => architecture_0: u8,
        }

        /// BOOT_42 with a six-bit architecture.
        pub NV_PMC_BOOT_42(0x00000a00) in headers::NV_REF_570 {
            /// Extension of the minor revision.
            11:8 MINOR_EXTENDED_REVISION => minor_extended_revision: u8,
            /// Minor revision.
            15:12 MINOR_REVISION => minor_revision: u8,
            /// Major revision.
            19:16 MAJOR_REVISION => major_revision: u8,
            /// Implementation within the architecture.
            23:20 IMPLEMENTATION => implementation: u8,
            /// Architecture, six bits.
            29:24 ARCHITECTURE => architecture: u8,
            /// `ARCHITECTURE << 4 | IMPLEMENTATION`, ten bits.
            29:20 CHIP_ID => chip_id: u16,
        }
    }

    impl NV_PMC_BOOT_0 {
        /// The whole architecture number (`ARCHITECTURE_1 << 5 | ARCHITECTURE_0`), as RM's
        /// `decodePmcBoot0Architecture` assembles it.
        pub fn full_architecture(self) -> u8 {
            (self.architecture_1() << 5) | self.architecture_0()
        }
    }
}

constants! {
    /// Facts of the architecture numbers (`NV_PMC_BOOT_42_ARCHITECTURE`'s values).
    pub const ARCHITECTURE_FACTS;

    /// Turing.
    pub NV_PMC_BOOT_42_ARCHITECTURE_TU100: u8 = 0x16 in headers::NV_REF;
    /// Ampere (GA100 and GA10x).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GA100: u8 = 0x17 in headers::NV_REF;
    /// Hopper.
    pub NV_PMC_BOOT_42_ARCHITECTURE_GH100: u8 = 0x18 in headers::NV_REF;
    /// Ada.
    pub NV_PMC_BOOT_42_ARCHITECTURE_AD100: u8 = 0x19 in headers::NV_REF;
    /// Blackwell datacenter (GB10x).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GB100: u8 = 0x1A in headers::NV_REF_570;
    /// Blackwell client and workstation (GB20x).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GB200: u8 = 0x1B in headers::NV_REF_570;

    /// Maxwell GM10x (not supported: no GSP; named for error messages, only in 570.133.07).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GM100: u8 = 0x11 in headers::NV_REF_570;
    /// Maxwell GM20x (not supported).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GM200: u8 = 0x12 in headers::NV_REF_570;
    /// Pascal (not supported).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GP100: u8 = 0x13 in headers::NV_REF_570;
    /// Volta GV100 (not supported).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GV100: u8 = 0x14 in headers::NV_REF_570;
    /// Volta GV11x (not supported).
    pub NV_PMC_BOOT_42_ARCHITECTURE_GV110: u8 = 0x15 in headers::NV_REF_570;
}

constants! {
    /// Facts of `nv_arch.h`: each architecture's number shifted by 4 (`GPU_ARCHITECTURE_*`, the
    /// chip id of implementation 0) and each chip's implementation number
    /// (`GPU_IMPLEMENTATION_*`); a chip id is `ARCHITECTURE << 4 | IMPLEMENTATION`.
    pub const NV_ARCH_FACTS;

    pub GPU_ARCHITECTURE_TURING: u16 = 0x0160 in headers::NV_ARCH;
    pub GPU_ARCHITECTURE_AMPERE: u16 = 0x0170 in headers::NV_ARCH;
    pub GPU_ARCHITECTURE_HOPPER: u16 = 0x0180 in headers::NV_ARCH;
    pub GPU_ARCHITECTURE_ADA: u16 = 0x0190 in headers::NV_ARCH;
    pub GPU_ARCHITECTURE_BLACKWELL_GB1XX: u16 = 0x01A0 in headers::NV_ARCH_570;
    pub GPU_ARCHITECTURE_BLACKWELL_GB2XX: u16 = 0x01B0 in headers::NV_ARCH_570;

    pub GPU_IMPLEMENTATION_TU102: u8 = 0x02 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_TU104: u8 = 0x04 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_TU106: u8 = 0x06 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_TU116: u8 = 0x08 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_TU117: u8 = 0x07 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GA100: u8 = 0x00 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GA102: u8 = 0x02 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GA103: u8 = 0x03 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GA104: u8 = 0x04 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GA106: u8 = 0x06 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GA107: u8 = 0x07 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_AD102: u8 = 0x02 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_AD103: u8 = 0x03 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_AD104: u8 = 0x04 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_AD106: u8 = 0x06 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_AD107: u8 = 0x07 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GH100: u8 = 0x00 in headers::NV_ARCH;
    pub GPU_IMPLEMENTATION_GB100: u8 = 0x00 in headers::NV_ARCH_570;
    pub GPU_IMPLEMENTATION_GB102: u8 = 0x02 in headers::NV_ARCH_570;
    pub GPU_IMPLEMENTATION_GB202: u8 = 0x02 in headers::NV_ARCH_570;
    pub GPU_IMPLEMENTATION_GB203: u8 = 0x03 in headers::NV_ARCH_570;
    pub GPU_IMPLEMENTATION_GB205: u8 = 0x05 in headers::NV_ARCH_570;
    pub GPU_IMPLEMENTATION_GB206: u8 = 0x06 in headers::NV_ARCH_570;
    pub GPU_IMPLEMENTATION_GB207: u8 = 0x07 in headers::NV_ARCH_570;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot42_fields_of_a_ga102_a1() {
        // GA102, revision A1: CHIP_ID 0x172, major 0xa, minor 1.
        let raw = (0x172 << 20) | (0xa << 16) | (0x1 << 12);
        let r = NV_PMC_BOOT_42::from_raw(raw);
        assert_eq!(r.chip_id(), 0x172);
        assert_eq!(r.architecture(), 0x17);
        assert_eq!(r.implementation(), 0x2);
        assert_eq!(r.major_revision(), 0xa);
        assert_eq!(r.minor_revision(), 0x1);
        assert_eq!(r570::NV_PMC_BOOT_42::from_raw(raw).chip_id(), 0x172);
    }

    #[test]
    fn the_570_layout_sees_the_sixth_architecture_bit() {
        let raw = 0x36 << 24;
        assert_eq!(NV_PMC_BOOT_42::from_raw(raw).architecture(), 0x16);
        assert_eq!(r570::NV_PMC_BOOT_42::from_raw(raw).architecture(), 0x36);
        let boot0 = r570::NV_PMC_BOOT_0::from_raw((0x16 << 24) | (1 << 8));
        assert_eq!(boot0.full_architecture(), 0x36);
    }
}
