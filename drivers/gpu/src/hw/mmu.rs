//! GPU MMU page-table entry formats: NV_MMU_VER2_* (Pascal to Ada) and NV_MMU_VER3_* (Hopper and
//! Blackwell), each field by its bit range in the entry, each value under NVIDIA's name.
//!
//! Sources (535.261.03): `src/common/inc/swref/published/pascal/gp100/dev_mmu.h` and
//! `src/common/inc/swref/published/hopper/gh100/dev_mmu.h`. The published gp100 header leaves
//! out the VER2 aperture values and the PDE `IS_PTE` bit; those come from the copy UVM builds
//! against (`kernel-open/nvidia-uvm/hwref/pascal/gp100/dev_mmu.h`), which agrees with it on
//! every name both define.
//!
//! Entries are 64-bit words (128-bit for the dual PDE), so fields are declared as bit ranges with
//! `constants!` (`Range`), not as 32-bit `registers!`; [`EntryField`] reads and writes them.
//!
//! A few ranges are written as arithmetic in the headers (`NV_MMU_VER2_PTE_ADDRESS_VID` is
//! `(35-3):8`). The conformance test's reader evaluates plain numbers only, so those are in
//! [`ARITHMETIC_FACTS`] (checked by `tests/tests/mm_formats.rs`, which evaluates the
//! arithmetic) and appear in [`FACTS`] as names that must be defined.

use super::{headers, FactGroup, FactValue, Header, HeaderFact, UnitRange};
use crate::constants;

/// A field of a page-table entry: bits `hi:lo` counted across the entry's 64-bit words (bit 64
/// is bit 0 of the second word), as `dev_mmu.h` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryField {
    pub hi: u32,
    pub lo: u32,
}

impl EntryField {
    /// The field a `constants!` range declares; a field never crosses a 64-bit word here, which
    /// `mm::format`'s tests check for every declared field.
    pub const fn of(range: UnitRange) -> Self {
        Self { hi: range.last, lo: range.first }
    }

    /// Bits in the field.
    pub const fn width(self) -> u32 {
        self.hi - self.lo + 1
    }

    /// The largest value the field holds.
    pub const fn max_value(self) -> u64 {
        if self.width() >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width()) - 1
        }
    }

    /// Which 64-bit word of the entry holds the field.
    pub const fn word(self) -> usize {
        (self.lo / 64) as usize
    }

    const fn shift(self) -> u32 {
        self.lo % 64
    }

    /// The field's value in `entry`, shifted down; 0 if the entry has no such word.
    pub fn get(self, entry: &[u64]) -> u64 {
        match entry.get(self.word()) {
            Some(word) => (word >> self.shift()) & self.max_value(),
            None => 0,
        }
    }

    /// Whether `value` fits the field.
    pub const fn fits(self, value: u64) -> bool {
        value <= self.max_value()
    }

    /// `entry` with the field set to `value`. Callers check [`Self::fits`] first: bits beyond the
    /// width are dropped, never spilled into neighbouring fields.
    pub fn set(self, entry: &mut [u64], value: u64) {
        if let Some(word) = entry.get_mut(self.word()) {
            let mask = self.max_value() << self.shift();
            *word = (*word & !mask) | ((value << self.shift()) & mask);
        }
    }
}

/// Version 2 (Pascal to Ada): `NV_MMU_VER2_*`.
pub mod ver2 {
    use super::*;

    constants! {
        /// VER2 facts from the published gp100 header.
        pub const FACTS;

        /// Entry size of a PDE at PD3, PD2 and PD1 (bytes).
        pub NV_MMU_VER2_PDE__SIZE: u32 = 8 in headers::GP100_DEV_MMU;
        /// Target of the next level (a `NV_MMU_VER2_PDE_APERTURE_*` value).
        pub NV_MMU_VER2_PDE_APERTURE: Range = 2:1 in headers::GP100_DEV_MMU;
        /// The next level is not cached (UVM always sets it).
        pub NV_MMU_VER2_PDE_VOL: Range = 3:3 in headers::GP100_DEV_MMU;
        /// The next level's address in system memory, `>> NV_MMU_VER2_PDE_ADDRESS_SHIFT`.
        pub NV_MMU_VER2_PDE_ADDRESS_SYS: Range = 53:8 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PDE_ADDRESS_SHIFT: u32 = 0xc in headers::GP100_DEV_MMU;

        /// Entry size at PD0, the dual PDE: a big (64K) and a small (4K) page-table pointer.
        pub NV_MMU_VER2_DUAL_PDE__SIZE: u32 = 16 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_BIG: Range = 2:1 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_VOL_BIG: Range = 3:3 in headers::GP100_DEV_MMU;
        /// Big page tables are 256-byte aligned: their address is stored `>> 8`.
        pub NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SHIFT: u32 = 8 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL: Range = 66:65 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_VOL_SMALL: Range = 67:67 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_SYS: Range = 117:72 in headers::GP100_DEV_MMU;
        /// Small page tables: address stored `>> 12`.
        pub NV_MMU_VER2_DUAL_PDE_ADDRESS_SHIFT: u32 = 0xc in headers::GP100_DEV_MMU;

        pub NV_MMU_VER2_PTE__SIZE: u32 = 8 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_VALID: Range = 0:0 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_APERTURE: Range = 2:1 in headers::GP100_DEV_MMU;
        /// Not cached in the GPU L2; with VALID clear, marks a sparse PTE.
        pub NV_MMU_VER2_PTE_VOL: Range = 3:3 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_PRIVILEGE: Range = 5:5 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_READ_ONLY: Range = 6:6 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_ATOMIC_DISABLE: Range = 7:7 in headers::GP100_DEV_MMU;
        /// Page frame in system memory, `>> NV_MMU_VER2_PTE_ADDRESS_SHIFT`.
        pub NV_MMU_VER2_PTE_ADDRESS_SYS: Range = 53:8 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_KIND: Range = 63:56 in headers::GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_ADDRESS_SHIFT: u32 = 0xc in headers::GP100_DEV_MMU;

        /// Pitch (linear) memory: the kind Pascal and Volta map plain memory with.
        pub NV_MMU_PTE_KIND_PITCH: u8 = 0x00 in headers::GP100_DEV_MMU;
    }

    constants! {
        /// VER2 facts only UVM's copy of the gp100 header defines.
        pub const UVM_FACTS;

        /// Bit 0 of a PDE: set means the entry is a PTE (at levels that may hold one).
        pub NV_MMU_VER2_PDE_IS_PTE: Range = 0:0 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_PDE_APERTURE_INVALID: u32 = 0 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_PDE_APERTURE_VIDEO_MEMORY: u32 = 1 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_PDE_APERTURE_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_PDE_APERTURE_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::UVM_GP100_DEV_MMU;

        pub NV_MMU_VER2_DUAL_PDE_IS_PTE: Range = 0:0 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_BIG_INVALID: u32 = 0 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_BIG_VIDEO_MEMORY: u32 = 1 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_BIG_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_BIG_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL_INVALID: u32 = 0 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL_VIDEO_MEMORY: u32 = 1 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::UVM_GP100_DEV_MMU;

        pub NV_MMU_VER2_PTE_APERTURE_VIDEO_MEMORY: u32 = 0 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_APERTURE_PEER_MEMORY: u32 = 1 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_APERTURE_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::UVM_GP100_DEV_MMU;
        pub NV_MMU_VER2_PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::UVM_GP100_DEV_MMU;
    }

    constants! {
        /// VER2 fields whose header ranges are arithmetic (see the module documentation).
        pub const ARITHMETIC_FACTS;

        /// `(35-3):8`: the frame number in video memory (37-bit addresses).
        pub NV_MMU_VER2_PDE_ADDRESS_VID: Range = 32:8 in headers::GP100_DEV_MMU;
        /// `53:(8-4)`: big page-table address in system memory, `>> 8`.
        pub NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS: Range = 53:4 in headers::GP100_DEV_MMU;
        /// `(35-3):(8-4)`.
        pub NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_VID: Range = 32:4 in headers::GP100_DEV_MMU;
        /// `(99-3):72`.
        pub NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_VID: Range = 96:72 in headers::GP100_DEV_MMU;
        /// `(35-3):8`: frame number in video memory, also used for peer memory.
        pub NV_MMU_VER2_PTE_ADDRESS_VID: Range = 32:8 in headers::GP100_DEV_MMU;
        /// `35:(36-3)`: which peer (0..7) for the peer aperture.
        pub NV_MMU_VER2_PTE_ADDRESS_VID_PEER: Range = 35:33 in headers::GP100_DEV_MMU;
    }

    /// Kinds for Turing to Ada, where `PITCH` no longer exists (UVM's `make_pte_turing`).
    pub mod tu102 {
        use super::*;

        constants! {
            /// Turing kind facts.
            pub const FACTS;

            pub NV_MMU_PTE_KIND_GENERIC_MEMORY: u8 = 0x06 in headers::TU102_DEV_MMU;
        }
    }
}

/// Version 3 (Hopper, Blackwell): `NV_MMU_VER3_*`.
pub mod ver3 {
    use super::*;

    constants! {
        /// VER3 facts from the published gh100 header.
        pub const FACTS;

        pub NV_MMU_VER3_PDE__SIZE: u32 = 8 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_IS_PTE: Range = 0:0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_APERTURE: Range = 2:1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_APERTURE_INVALID: u32 = 0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_APERTURE_VIDEO_MEMORY: u32 = 1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_APERTURE_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_APERTURE_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::GH100_DEV_MMU;
        /// Permission control flags: valid/invalid, cached, ATS allowed.
        pub NV_MMU_VER3_PDE_PCF: Range = 5:3 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_PCF_VALID_CACHED_ATS_ALLOWED: u32 = 0 in headers::GH100_DEV_MMU;
        /// What UVM writes in every valid PDE on a system without ATS.
        pub NV_MMU_VER3_PDE_PCF_VALID_UNCACHED_ATS_ALLOWED: u32 = 1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_PCF_INVALID_ATS_ALLOWED: u32 = 0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_PCF_SPARSE_ATS_ALLOWED: u32 = 1 in headers::GH100_DEV_MMU;
        /// The next level's address, `>> NV_MMU_VER3_PDE_ADDRESS_SHIFT` (so bits stay in place).
        pub NV_MMU_VER3_PDE_ADDRESS: Range = 51:12 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PDE_ADDRESS_SHIFT: u32 = 0xc in headers::GH100_DEV_MMU;

        pub NV_MMU_VER3_DUAL_PDE__SIZE: u32 = 16 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_IS_PTE: Range = 0:0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_BIG: Range = 2:1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_BIG_INVALID: u32 = 0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_BIG_VIDEO_MEMORY: u32 = 1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_BIG_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_BIG_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_PCF_BIG: Range = 5:3 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_PCF_BIG_VALID_UNCACHED_ATS_ALLOWED: u32 = 1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_PCF_BIG_INVALID_ATS_ALLOWED: u32 = 0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG: Range = 51:8 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_ADDRESS_BIG_SHIFT: u32 = 8 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL: Range = 66:65 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL_INVALID: u32 = 0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL_VIDEO_MEMORY: u32 = 1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_APERTURE_SMALL_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_PCF_SMALL: Range = 69:67 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_PCF_SMALL_VALID_UNCACHED_ATS_ALLOWED: u32 = 1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_PCF_SMALL_INVALID_ATS_ALLOWED: u32 = 0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_ADDRESS_SMALL: Range = 115:76 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_DUAL_PDE_ADDRESS_SHIFT: u32 = 0xc in headers::GH100_DEV_MMU;

        pub NV_MMU_VER3_PTE__SIZE: u32 = 8 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_VALID: Range = 0:0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_APERTURE: Range = 2:1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_APERTURE_VIDEO_MEMORY: u32 = 0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_APERTURE_PEER_MEMORY: u32 = 1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_APERTURE_SYSTEM_COHERENT_MEMORY: u32 = 2 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_APERTURE_SYSTEM_NON_COHERENT_MEMORY: u32 = 3 in headers::GH100_DEV_MMU;
        /// Permission control flags: with VALID set, privilege/RO/atomics/cached/access counting;
        /// with VALID clear, why the PTE is invalid.
        pub NV_MMU_VER3_PTE_PCF: Range = 7:3 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_INVALID: u32 = 0x0 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_SPARSE: u32 = 0x1 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_MAPPING_NOWHERE: u32 = 0x2 in headers::GH100_DEV_MMU;
        /// On a big PTE: the 4K PTEs beneath it are ignored (UVM's "unmapped" big PTE).
        pub NV_MMU_VER3_PTE_PCF_NO_VALID_4KB_PAGE: u32 = 0x3 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_CACHED_ACE: u32 = 0x00 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_UNCACHED_ACE: u32 = 0x01 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_CACHED_ACE: u32 = 0x02 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_UNCACHED_ACE: u32 = 0x03 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_CACHED_ACE: u32 = 0x04 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_UNCACHED_ACE: u32 = 0x05 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_CACHED_ACE: u32 = 0x06 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_UNCACHED_ACE: u32 = 0x07 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_CACHED_ACE: u32 = 0x08 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_UNCACHED_ACE: u32 = 0x09 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_CACHED_ACE: u32 = 0x0a in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_UNCACHED_ACE: u32 = 0x0b in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_CACHED_ACE: u32 = 0x0c in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_UNCACHED_ACE: u32 = 0x0d in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_CACHED_ACE: u32 = 0x0e in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_UNCACHED_ACE: u32 = 0x0f in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_CACHED_ACD: u32 = 0x10 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_ATOMIC_UNCACHED_ACD: u32 = 0x11 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_CACHED_ACD: u32 = 0x12 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_ATOMIC_UNCACHED_ACD: u32 = 0x13 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_CACHED_ACD: u32 = 0x14 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_ATOMIC_UNCACHED_ACD: u32 = 0x15 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_CACHED_ACD: u32 = 0x16 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_ATOMIC_UNCACHED_ACD: u32 = 0x17 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_CACHED_ACD: u32 = 0x18 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RW_NO_ATOMIC_UNCACHED_ACD: u32 = 0x19 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_CACHED_ACD: u32 = 0x1a in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RW_NO_ATOMIC_UNCACHED_ACD: u32 = 0x1b in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_CACHED_ACD: u32 = 0x1c in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_REGULAR_RO_NO_ATOMIC_UNCACHED_ACD: u32 = 0x1d in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_CACHED_ACD: u32 = 0x1e in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_PCF_PRIVILEGE_RO_NO_ATOMIC_UNCACHED_ACD: u32 = 0x1f in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_KIND: Range = 11:8 in headers::GH100_DEV_MMU;
        /// Frame in system or peer memory, `>> NV_MMU_VER3_PTE_ADDRESS_SHIFT` (bits in place).
        pub NV_MMU_VER3_PTE_ADDRESS_SYS: Range = 51:12 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_ADDRESS_PEER: Range = 51:12 in headers::GH100_DEV_MMU;
        /// Frame in video memory (40-bit addresses).
        pub NV_MMU_VER3_PTE_ADDRESS_VID: Range = 39:12 in headers::GH100_DEV_MMU;
        pub NV_MMU_VER3_PTE_ADDRESS_SHIFT: u32 = 0xc in headers::GH100_DEV_MMU;

        /// The kind Hopper maps plain memory with (UVM's `make_pte_hopper`).
        pub NV_MMU_PTE_KIND_GENERIC_MEMORY: u8 = 0x6 in headers::GH100_DEV_MMU;
    }

    constants! {
        /// VER3 fields whose header ranges are arithmetic (see the module documentation).
        pub const ARITHMETIC_FACTS;

        /// `63:(64-3)`: which peer (0..7) for the peer aperture.
        pub NV_MMU_VER3_PTE_PEER_ID: Range = 63:61 in headers::GH100_DEV_MMU;
    }
}

/// The names of [`ARITHMETIC_FACTS`], as facts the conformance test can check (they must be
/// defined in the header cited); their values are checked by `tests/tests/mm_formats.rs`.
const ARITHMETIC_NAMES: &[HeaderFact] = &[
    defined("NV_MMU_VER2_PDE_ADDRESS_VID", headers::GP100_DEV_MMU),
    defined("NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_SYS", headers::GP100_DEV_MMU),
    defined("NV_MMU_VER2_DUAL_PDE_ADDRESS_BIG_VID", headers::GP100_DEV_MMU),
    defined("NV_MMU_VER2_DUAL_PDE_ADDRESS_SMALL_VID", headers::GP100_DEV_MMU),
    defined("NV_MMU_VER2_PTE_ADDRESS_VID", headers::GP100_DEV_MMU),
    defined("NV_MMU_VER2_PTE_ADDRESS_VID_PEER", headers::GP100_DEV_MMU),
    defined("NV_MMU_VER3_PTE_PEER_ID", headers::GH100_DEV_MMU),
];

const fn defined(name: &'static str, header: Header) -> HeaderFact {
    HeaderFact { name, header, value: FactValue::Defined }
}

/// Every MMU format fact the conformance test checks (one group per declaration block).
pub const FACTS: &[FactGroup] =
    &[ver2::FACTS[0], ver2::UVM_FACTS[0], ver2::tu102::FACTS[0], ver3::FACTS[0], &[ARITHMETIC_NAMES]];

/// Fields whose values `tests/tests/mm_formats.rs` checks by evaluating the header's arithmetic.
pub const ARITHMETIC_FACTS: &[FactGroup] = &[ver2::ARITHMETIC_FACTS[0], ver3::ARITHMETIC_FACTS[0]];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_fields_read_and_write_across_words() {
        let small = EntryField::of(ver2::NV_MMU_VER2_DUAL_PDE_APERTURE_SMALL);
        assert_eq!((small.word(), small.width()), (1, 2));
        let mut entry = [0u64; 2];
        small.set(&mut entry, 3);
        assert_eq!(entry, [0, 0b110]);
        assert_eq!(small.get(&entry), 3);
        // Too-wide values never spill into neighbours.
        let vol = EntryField::of(ver2::NV_MMU_VER2_PTE_VOL);
        let mut pte = [0u64];
        vol.set(&mut pte, 0xff);
        assert_eq!(pte, [1 << 3]);
        // A missing word reads as 0 and writes nothing.
        assert_eq!(small.get(&pte), 0);
        small.set(&mut pte, 1);
        assert_eq!(pte, [1 << 3]);
    }

    #[test]
    fn every_field_stays_within_one_64_bit_word() {
        for fact in FACTS.iter().chain(ARITHMETIC_FACTS).flat_map(|g| g.iter()).flat_map(|f| f.iter()) {
            if let FactValue::Bits { hi, lo } = fact.value {
                assert!(hi >= lo && hi / 64 == lo / 64, "{}: {hi}:{lo}", fact.name);
            }
        }
    }
}
