//! MMU faults: the fault and access types (`NV_PFAULT_*`, `dev_fault.h`), the MMU engine ids a
//! fault names, and the 32-byte fault packet of class MMU_FAULT_BUFFER (`clc369.h`, used from
//! Volta to Blackwell).
//!
//! Sources (535.261.03): `kernel-open/nvidia-uvm/hwref/turing/tu102/dev_fault.h` (Turing to Ada;
//! the fault and access type values are the same in the GA100 and GH100 copies) and
//! `hwref/hopper/gh100/dev_fault.h` (Hopper's engine ids), `src/common/sdk/nvidia/inc/class/
//! clc369.h`. The packet's fields are `MW(hi:lo)` bit positions over the whole 256-bit entry;
//! [`BUF_ENTRY_FIELDS`] repeats them and `tests/tests/model_mmu.rs` compares each with the
//! header's expression.

use super::{headers, FactGroup, FactValue, HeaderFact};
use crate::{constants, field_values, registers};

field_values! {
    /// Why the MMU refused an access.
    pub enum FaultType: NV_PFAULT_FAULT_TYPE in headers::TU102_DEV_FAULT {
        Pde = 0x00 => PDE,
        PdeSize = 0x01 => PDE_SIZE,
        Pte = 0x02 => PTE,
        VaLimitViolation = 0x03 => VA_LIMIT_VIOLATION,
        UnboundInstBlock = 0x04 => UNBOUND_INST_BLOCK,
        PrivViolation = 0x05 => PRIV_VIOLATION,
        RoViolation = 0x06 => RO_VIOLATION,
        WoViolation = 0x07 => WO_VIOLATION,
        PitchMaskViolation = 0x08 => PITCH_MASK_VIOLATION,
        WorkCreation = 0x09 => WORK_CREATION,
        UnsupportedAperture = 0x0a => UNSUPPORTED_APERTURE,
        CompressionFailure = 0x0b => COMPRESSION_FAILURE,
        UnsupportedKind = 0x0c => UNSUPPORTED_KIND,
        RegionViolation = 0x0d => REGION_VIOLATION,
        Poisoned = 0x0e => POISONED,
        AtomicViolation = 0x0f => ATOMIC_VIOLATION,
    }
}

field_values! {
    /// What the faulting access was (virtual accesses; `PHYS_*` for physical ones).
    pub enum FaultAccessType: NV_PFAULT_ACCESS_TYPE in headers::TU102_DEV_FAULT {
        VirtRead = 0x0 => VIRT_READ,
        VirtWrite = 0x1 => VIRT_WRITE,
        VirtAtomicStrong = 0x2 => VIRT_ATOMIC_STRONG,
        VirtPrefetch = 0x3 => VIRT_PREFETCH,
        VirtAtomicWeak = 0x4 => VIRT_ATOMIC_WEAK,
        PhysRead = 0x8 => PHYS_READ,
        PhysWrite = 0x9 => PHYS_WRITE,
        PhysAtomic = 0xa => PHYS_ATOMIC,
        PhysPrefetch = 0xb => PHYS_PREFETCH,
    }
}

field_values! {
    /// Whether the faulting client sits in a GPC or on the hub.
    pub enum MmuClientType: NV_PFAULT_MMU_CLIENT_TYPE in headers::TU102_DEV_FAULT {
        Gpc = 0x0 => GPC,
        Hub = 0x1 => HUB,
    }
}

registers! {
    /// Facts of the fault fields.
    pub const FACTS;

    /// The `NV_PFAULT` field layout (how the fault packet's dword 7 and the fault registers
    /// place these fields).
    pub NV_PFAULT(view) in headers::TU102_DEV_FAULT {
        4:0 FAULT_TYPE => fault_type: FaultType,
        19:16 ACCESS_TYPE => access_type: FaultAccessType,
        20:20 MMU_CLIENT_TYPE => mmu_client_type: MmuClientType,
    }
}

/// MMU engine ids, Turing to Ada.
pub mod tu102 {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of the Turing engine ids.
        pub const FACTS;

        /// Graphics: the base to which the subcontext (VEID) is added.
        pub NV_PFAULT_MMU_ENG_ID_GRAPHICS: u16 = 64 in headers::TU102_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_BAR1: u16 = 128 in headers::TU102_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_CE0: u16 = 15 in headers::TU102_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_PHYSICAL: u16 = 31 in headers::TU102_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_HOST0: u16 = 32 in headers::TU102_DEV_FAULT;
    }
}

/// MMU engine ids, Hopper.
pub mod gh100 {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of the Hopper engine ids.
        pub const FACTS;

        pub NV_PFAULT_MMU_ENG_ID_GRAPHICS: u16 = 384 in headers::GH100_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_BAR1: u16 = 256 in headers::GH100_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_CE0: u16 = 43 in headers::GH100_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_PHYSICAL: u16 = 56 in headers::GH100_DEV_FAULT;
        pub NV_PFAULT_MMU_ENG_ID_HOST0: u16 = 64 in headers::GH100_DEV_FAULT;
    }
}

constants! {
    /// Facts of the fault buffer class and its packet's named values.
    pub const BUFFER_FACTS;

    pub MMU_FAULT_BUFFER: u32 = 0xc369 in headers::CLC369;
    /// Bytes per fault packet.
    pub NVC369_BUF_SIZE: usize = 32 in headers::CLC369;
    pub NVC369_BUF_ENTRY_INST_APERTURE_VID_MEM: u32 = 0x00000000 in headers::CLC369;
    pub NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_COHERENT: u32 = 0x00000002 in headers::CLC369;
    pub NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_NONCOHERENT: u32 = 0x00000003 in headers::CLC369;
    pub NVC369_BUF_ENTRY_REPLAYABLE_FAULT_TRUE: u32 = 0x00000001 in headers::CLC369;
    pub NVC369_BUF_ENTRY_VALID_TRUE: u32 = 0x00000001 in headers::CLC369;
}

/// A field of the fault packet: bits `lo..=hi` of the 256-bit entry (little-endian dwords), as
/// `clc369.h` writes them with `MW(hi:lo)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketField {
    pub name: &'static str,
    pub hi: u32,
    pub lo: u32,
}

impl PacketField {
    const fn new(name: &'static str, hi: u32, lo: u32) -> Self {
        PacketField { name, hi, lo }
    }

    /// Stores the low bits of `value` in the field (bits beyond its width are dropped).
    pub fn set(&self, entry: &mut [u8; NVC369_BUF_SIZE], value: u64) {
        // The two little-endian 64-bit words holding the field (no field spans more).
        let mask = self.width_mask();
        let word = (self.lo / 64) as usize;
        let field = mask << (self.lo % 64);
        let shifted = (u128::from(value) & mask) << (self.lo % 64);
        for k in 0..2 {
            let part = (field >> (64 * k)) as u64;
            let Some(bytes) = entry.get_mut((word + k) * 8..(word + k + 1) * 8) else { continue };
            if part == 0 {
                continue;
            }
            let mut w = [0u8; 8];
            w.copy_from_slice(bytes);
            let updated = (u64::from_le_bytes(w) & !part) | ((shifted >> (64 * k)) as u64 & part);
            bytes.copy_from_slice(&updated.to_le_bytes());
        }
    }

    /// The mask of the field's width (at most 64 bits).
    fn width_mask(&self) -> u128 {
        let width = self.hi.saturating_sub(self.lo) + 1;
        if width >= 64 {
            u128::from(u64::MAX)
        } else {
            (1u128 << width) - 1
        }
    }

    /// Reads the field.
    pub fn get(&self, entry: &[u8; NVC369_BUF_SIZE]) -> u64 {
        self.get_words(&packet_words(entry))
    }

    /// Reads the field from the packet's little-endian 64-bit words ([`packet_words`]), for a
    /// decoder that reads many fields of one packet.
    pub fn get_words(&self, words: &[u64; NVC369_BUF_SIZE / 8]) -> u64 {
        // The two words holding the field (no field spans more).
        let mask = self.width_mask();
        let i = (self.lo / 64) as usize;
        let word = |i: usize| words.get(i).copied().unwrap_or(0);
        let raw = u128::from(word(i)) | (u128::from(word(i + 1)) << 64);
        ((raw >> (self.lo % 64)) & mask) as u64
    }
}

/// A packet as its four little-endian 64-bit words.
pub fn packet_words(entry: &[u8; NVC369_BUF_SIZE]) -> [u64; NVC369_BUF_SIZE / 8] {
    let mut words = [0u64; NVC369_BUF_SIZE / 8];
    for (w, bytes) in words.iter_mut().zip(entry.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(bytes);
        *w = u64::from_le_bytes(b);
    }
    words
}

pub const NVC369_BUF_ENTRY_INST_APERTURE: PacketField = PacketField::new("NVC369_BUF_ENTRY_INST_APERTURE", 9, 8);
/// Instance block (here: the PDB) address bits 63:12.
pub const NVC369_BUF_ENTRY_INST: PacketField = PacketField::new("NVC369_BUF_ENTRY_INST", 63, 12);
pub const NVC369_BUF_ENTRY_ADDR_PHYS_APERTURE: PacketField =
    PacketField::new("NVC369_BUF_ENTRY_ADDR_PHYS_APERTURE", 65, 64);
/// Faulting VA bits 63:12.
pub const NVC369_BUF_ENTRY_ADDR: PacketField = PacketField::new("NVC369_BUF_ENTRY_ADDR", 127, 76);
pub const NVC369_BUF_ENTRY_TIMESTAMP: PacketField = PacketField::new("NVC369_BUF_ENTRY_TIMESTAMP", 191, 128);
pub const NVC369_BUF_ENTRY_ENGINE_ID: PacketField = PacketField::new("NVC369_BUF_ENTRY_ENGINE_ID", 200, 192);
pub const NVC369_BUF_ENTRY_FAULT_TYPE: PacketField = PacketField::new("NVC369_BUF_ENTRY_FAULT_TYPE", 228, 224);
pub const NVC369_BUF_ENTRY_REPLAYABLE_FAULT: PacketField =
    PacketField::new("NVC369_BUF_ENTRY_REPLAYABLE_FAULT", 231, 231);
pub const NVC369_BUF_ENTRY_CLIENT: PacketField = PacketField::new("NVC369_BUF_ENTRY_CLIENT", 238, 232);
pub const NVC369_BUF_ENTRY_ACCESS_TYPE: PacketField = PacketField::new("NVC369_BUF_ENTRY_ACCESS_TYPE", 243, 240);
pub const NVC369_BUF_ENTRY_MMU_CLIENT_TYPE: PacketField =
    PacketField::new("NVC369_BUF_ENTRY_MMU_CLIENT_TYPE", 244, 244);
pub const NVC369_BUF_ENTRY_GPC_ID: PacketField = PacketField::new("NVC369_BUF_ENTRY_GPC_ID", 252, 248);
pub const NVC369_BUF_ENTRY_PROTECTED_MODE: PacketField = PacketField::new("NVC369_BUF_ENTRY_PROTECTED_MODE", 253, 253);
pub const NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN: PacketField =
    PacketField::new("NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN", 254, 254);
pub const NVC369_BUF_ENTRY_VALID: PacketField = PacketField::new("NVC369_BUF_ENTRY_VALID", 255, 255);

/// Every packet field this crate uses, for the test that checks each against `clc369.h`.
pub const BUF_ENTRY_FIELDS: &[PacketField] = &[
    NVC369_BUF_ENTRY_INST_APERTURE,
    NVC369_BUF_ENTRY_INST,
    NVC369_BUF_ENTRY_ADDR_PHYS_APERTURE,
    NVC369_BUF_ENTRY_ADDR,
    NVC369_BUF_ENTRY_TIMESTAMP,
    NVC369_BUF_ENTRY_ENGINE_ID,
    NVC369_BUF_ENTRY_FAULT_TYPE,
    NVC369_BUF_ENTRY_REPLAYABLE_FAULT,
    NVC369_BUF_ENTRY_CLIENT,
    NVC369_BUF_ENTRY_ACCESS_TYPE,
    NVC369_BUF_ENTRY_MMU_CLIENT_TYPE,
    NVC369_BUF_ENTRY_GPC_ID,
    NVC369_BUF_ENTRY_PROTECTED_MODE,
    NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN,
    NVC369_BUF_ENTRY_VALID,
];

macro_rules! defined {
    ($($field:ident),*) => {
        &[$(HeaderFact { name: $field.name, header: headers::CLC369, value: FactValue::Defined }),*]
    };
}

/// The packet fields' names (their `MW()` values are compared by `model_mmu.rs`).
pub const PACKET_FACTS: &[FactGroup] = &[&[defined!(
    NVC369_BUF_ENTRY_INST_APERTURE,
    NVC369_BUF_ENTRY_INST,
    NVC369_BUF_ENTRY_ADDR_PHYS_APERTURE,
    NVC369_BUF_ENTRY_ADDR,
    NVC369_BUF_ENTRY_TIMESTAMP,
    NVC369_BUF_ENTRY_ENGINE_ID,
    NVC369_BUF_ENTRY_FAULT_TYPE,
    NVC369_BUF_ENTRY_REPLAYABLE_FAULT,
    NVC369_BUF_ENTRY_CLIENT,
    NVC369_BUF_ENTRY_ACCESS_TYPE,
    NVC369_BUF_ENTRY_MMU_CLIENT_TYPE,
    NVC369_BUF_ENTRY_GPC_ID,
    NVC369_BUF_ENTRY_PROTECTED_MODE,
    NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN,
    NVC369_BUF_ENTRY_VALID
)]];

#[cfg(test)]
mod tests {
    use super::*;

    /// The field semantics bit by bit, as `MW(hi:lo)` defines them.
    fn reference_set(f: &PacketField, e: &mut [u8; NVC369_BUF_SIZE], value: u64) {
        for bit in f.lo..=f.hi {
            let v = ((value >> (bit - f.lo)) & 1) as u8;
            let (byte, shift) = ((bit / 8) as usize, bit % 8);
            e[byte] = (e[byte] & !(1 << shift)) | (v << shift);
        }
    }

    #[test]
    fn packet_fields_match_a_bit_by_bit_reading_and_leave_their_neighbours_alone() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for _ in 0..200 {
            let mut base = [0u8; NVC369_BUF_SIZE];
            base.iter_mut().for_each(|b| *b = next() as u8);
            for f in BUF_ENTRY_FIELDS {
                let v = next();
                let (mut ours, mut theirs) = (base, base);
                f.set(&mut ours, v);
                reference_set(f, &mut theirs, v);
                assert_eq!(ours, theirs, "{} set {v:#x}", f.name);
                let width = f.hi - f.lo + 1;
                let expect = if width == 64 { v } else { v & ((1 << width) - 1) };
                assert_eq!(f.get(&ours), expect, "{}", f.name);
            }
        }
    }

    #[test]
    fn packet_fields_round_trip_and_do_not_overlap() {
        let mut seen = [false; 256];
        for f in BUF_ENTRY_FIELDS {
            for bit in f.lo..=f.hi {
                assert!(!seen[bit as usize], "{} overlaps", f.name);
                seen[bit as usize] = true;
            }
            let mut e = [0u8; NVC369_BUF_SIZE];
            let width = f.hi - f.lo + 1;
            let v = if width == 64 { 0xDEAD_BEEF_1234_5678 } else { 0xDEAD_BEEF_1234_5678 & ((1u64 << width) - 1) };
            f.set(&mut e, v);
            assert_eq!(f.get(&e), v, "{}", f.name);
            f.set(&mut e, 0);
            assert_eq!(e, [0; NVC369_BUF_SIZE]);
        }
    }
}
