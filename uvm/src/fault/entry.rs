//! One replayable fault, decoded from its 32-byte packet (class MMU_FAULT_BUFFER, `clc369.h`;
//! the field positions are `nvgpu::hw::fault`'s, checked against the header there). What the
//! decoder keeps and how it classifies follows UVM's `uvm_volta_fault_buffer.c` and
//! `uvm_hal_types.h` (535.261.03).
//!
//! The packet is DMA memory the GPU wrote: anything the hardware would not produce is a
//! [`FaultEntryError`], never a panic.

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use core::fmt;

use nvgpu::hw::fault::{
    FaultAccessType, FaultType, MmuClientType, NVC369_BUF_ENTRY_ACCESS_TYPE, NVC369_BUF_ENTRY_ADDR,
    NVC369_BUF_ENTRY_ADDR_PHYS_APERTURE, NVC369_BUF_ENTRY_CLIENT, NVC369_BUF_ENTRY_ENGINE_ID,
    NVC369_BUF_ENTRY_FAULT_TYPE, NVC369_BUF_ENTRY_GPC_ID, NVC369_BUF_ENTRY_INST, NVC369_BUF_ENTRY_INST_APERTURE,
    NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_COHERENT, NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_NONCOHERENT,
    NVC369_BUF_ENTRY_INST_APERTURE_VID_MEM, NVC369_BUF_ENTRY_MMU_CLIENT_TYPE, NVC369_BUF_ENTRY_PROTECTED_MODE,
    NVC369_BUF_ENTRY_REPLAYABLE_FAULT, NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN, NVC369_BUF_ENTRY_REPLAYABLE_FAULT_TRUE,
    NVC369_BUF_ENTRY_TIMESTAMP, NVC369_BUF_ENTRY_VALID, NVC369_BUF_ENTRY_VALID_TRUE, NVC369_BUF_SIZE,
};

use crate::page_mask::PAGE_SIZE;

/// Bytes of one fault packet.
pub const FAULT_ENTRY_SIZE: usize = NVC369_BUF_SIZE;

/// One raw fault packet.
pub type RawFaultEntry = [u8; FAULT_ENTRY_SIZE];

/// Where an instance block lives (`NVC369_BUF_ENTRY_INST_APERTURE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Aperture {
    VidMem,
    SysMemCoherent,
    SysMemNoncoherent,
}

/// A fault's instance block: the channel's address space (with the VEID, the va_space).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstancePtr {
    /// 4 KiB aligned.
    pub address: u64,
    pub aperture: Aperture,
}

/// UVM's view of an access type (`uvm_fault_access_type_t`), declared in order of
/// intrusiveness: `Prefetch < Read < Write < AtomicWeak < AtomicStrong`. Physical accesses map to
/// their virtual kind, as UVM does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultAccess {
    Prefetch,
    Read,
    Write,
    AtomicWeak,
    AtomicStrong,
}

impl FaultAccess {
    /// Every kind, least intrusive first.
    pub const ALL: [FaultAccess; 5] = [
        FaultAccess::Prefetch,
        FaultAccess::Read,
        FaultAccess::Write,
        FaultAccess::AtomicWeak,
        FaultAccess::AtomicStrong,
    ];

    /// UVM's kind of a hardware access type.
    pub const fn from_hw(hw: FaultAccessType) -> Self {
        match hw {
            FaultAccessType::VirtRead | FaultAccessType::PhysRead => FaultAccess::Read,
            FaultAccessType::VirtWrite | FaultAccessType::PhysWrite => FaultAccess::Write,
            FaultAccessType::VirtAtomicStrong | FaultAccessType::PhysAtomic => FaultAccess::AtomicStrong,
            FaultAccessType::VirtAtomicWeak => FaultAccess::AtomicWeak,
            FaultAccessType::VirtPrefetch | FaultAccessType::PhysPrefetch => FaultAccess::Prefetch,
        }
    }

    const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of access kinds (`access_type_mask` of a coalesced fault).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct AccessTypeMask(u8);

impl AccessTypeMask {
    pub const fn empty() -> Self {
        AccessTypeMask(0)
    }

    pub const fn of(access: FaultAccess) -> Self {
        AccessTypeMask(access.bit())
    }

    pub fn set(&mut self, access: FaultAccess) {
        self.0 |= access.bit();
    }

    pub const fn contains(self, access: FaultAccess) -> bool {
        self.0 & access.bit() != 0
    }

    pub const fn or(self, other: AccessTypeMask) -> AccessTypeMask {
        AccessTypeMask(self.0 | other.0)
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The most intrusive member.
    pub fn highest(self) -> Option<FaultAccess> {
        FaultAccess::ALL.into_iter().rev().find(|a| self.contains(*a))
    }

    /// Members, least intrusive first.
    pub fn iter(self) -> impl Iterator<Item = FaultAccess> {
        FaultAccess::ALL.into_iter().filter(move |a| self.contains(*a))
    }
}

impl fmt::Debug for AccessTypeMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl FromIterator<FaultAccess> for AccessTypeMask {
    fn from_iter<I: IntoIterator<Item = FaultAccess>>(iter: I) -> Self {
        let mut m = AccessTypeMask::empty();
        iter.into_iter().for_each(|a| m.set(a));
        m
    }
}

/// Whether UVM can service a fault of this type by migrating or mapping: only missing PDEs and
/// PTEs and the read-only, write-only and atomic violations. Every other type is fatal
/// (`UVM_FAULT_TYPE_FATAL` and above in `uvm_hal_types.h`).
pub const fn is_fatal(fault_type: FaultType) -> bool {
    !matches!(
        fault_type,
        FaultType::Pde | FaultType::Pte | FaultType::RoViolation | FaultType::WoViolation | FaultType::AtomicViolation
    )
}

/// One decoded replayable fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FaultEntry {
    /// The faulting channel's instance block.
    pub instance: InstancePtr,
    /// The faulting VA, aligned down to 4 KiB.
    pub va: u64,
    /// `ADDR_PHYS_APERTURE` (meaningful for physical accesses only).
    pub addr_phys_aperture: u8,
    /// GPU timestamp (ns) of the fault.
    pub timestamp: u64,
    /// The MMU engine id (for graphics: the GRAPHICS base plus the VEID).
    pub engine_id: u16,
    pub fault_type: FaultType,
    /// The hardware's access type, as reported.
    pub hw_access_type: FaultAccessType,
    /// UVM's access kind ([`FaultAccess::from_hw`] of `hw_access_type`).
    pub access: FaultAccess,
    /// The client id, local to its GPC for GPC clients.
    pub client: u8,
    pub client_type: MmuClientType,
    pub gpc: u8,
    /// `REPLAYABLE_FAULT`: the access waits in its uTLB for a replay.
    pub replayable: bool,
    pub protected_mode: bool,
    /// `VALID` as read (the buffer only hands out valid entries).
    pub valid: bool,
}

impl FaultEntry {
    /// Decodes a packet. A packet with `VALID` clear still decodes (the caller decides whether
    /// it was ready); fields that hardware never writes that way are errors.
    pub fn decode(raw: &RawFaultEntry) -> Result<FaultEntry, FaultEntryError> {
        Self::decode_words(&nvgpu::hw::fault::packet_words(raw))
    }

    /// [`Self::decode`] of a packet already read as its four little-endian 64-bit words
    /// (`nvgpu::hw::fault::packet_words`).
    pub fn decode_words(raw: &PacketWords) -> Result<FaultEntry, FaultEntryError> {
        let en = NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN.get_words(raw);
        if en != 1 {
            return Err(FaultEntryError::ReplayableFaultEnUnset);
        }
        let type_raw = NVC369_BUF_ENTRY_FAULT_TYPE.get_words(raw) as u32;
        let fault_type = FaultType::from_raw(type_raw).ok_or(FaultEntryError::UnknownFaultType { value: type_raw })?;
        let access_raw = NVC369_BUF_ENTRY_ACCESS_TYPE.get_words(raw) as u32;
        let hw_access_type =
            FaultAccessType::from_raw(access_raw).ok_or(FaultEntryError::UnknownAccessType { value: access_raw })?;
        let aperture_raw = NVC369_BUF_ENTRY_INST_APERTURE.get_words(raw) as u32;
        let aperture = match aperture_raw {
            NVC369_BUF_ENTRY_INST_APERTURE_VID_MEM => Aperture::VidMem,
            NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_COHERENT => Aperture::SysMemCoherent,
            NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_NONCOHERENT => Aperture::SysMemNoncoherent,
            value => return Err(FaultEntryError::UnknownInstanceAperture { value }),
        };
        let client_type = if NVC369_BUF_ENTRY_MMU_CLIENT_TYPE.get_words(raw) == MmuClientType::Hub as u64 {
            MmuClientType::Hub
        } else {
            MmuClientType::Gpc
        };
        // INST and ADDR hold bits 63:12; shifting back keeps them and clears the low 12.
        let va = NVC369_BUF_ENTRY_ADDR.get_words(raw) << 12;
        Ok(FaultEntry {
            instance: InstancePtr { address: NVC369_BUF_ENTRY_INST.get_words(raw) << 12, aperture },
            va: va & !(PAGE_SIZE - 1),
            addr_phys_aperture: NVC369_BUF_ENTRY_ADDR_PHYS_APERTURE.get_words(raw) as u8,
            timestamp: NVC369_BUF_ENTRY_TIMESTAMP.get_words(raw),
            engine_id: NVC369_BUF_ENTRY_ENGINE_ID.get_words(raw) as u16,
            fault_type,
            hw_access_type,
            access: FaultAccess::from_hw(hw_access_type),
            client: NVC369_BUF_ENTRY_CLIENT.get_words(raw) as u8,
            client_type,
            gpc: NVC369_BUF_ENTRY_GPC_ID.get_words(raw) as u8,
            replayable: NVC369_BUF_ENTRY_REPLAYABLE_FAULT.get_words(raw)
                == u64::from(NVC369_BUF_ENTRY_REPLAYABLE_FAULT_TRUE),
            protected_mode: NVC369_BUF_ENTRY_PROTECTED_MODE.get_words(raw) == 1,
            valid: NVC369_BUF_ENTRY_VALID.get_words(raw) == u64::from(NVC369_BUF_ENTRY_VALID_TRUE),
        })
    }

    /// Whether UVM cannot service this fault ([`is_fatal`] of its type).
    pub const fn is_fatal(&self) -> bool {
        is_fatal(self.fault_type)
    }

    /// Whether the faulting address is virtual (`PHYS_*` access types are not).
    pub const fn is_virtual(&self) -> bool {
        !matches!(
            self.hw_access_type,
            FaultAccessType::PhysRead
                | FaultAccessType::PhysWrite
                | FaultAccessType::PhysAtomic
                | FaultAccessType::PhysPrefetch
        )
    }
}

/// Whether the packet's `VALID` bit is set (hardware sets it last).
pub fn is_valid(raw: &RawFaultEntry) -> bool {
    is_valid_words(&nvgpu::hw::fault::packet_words(raw))
}

/// [`is_valid`] of a packet read as its 64-bit words.
pub fn is_valid_words(words: &PacketWords) -> bool {
    NVC369_BUF_ENTRY_VALID.get_words(words) == u64::from(NVC369_BUF_ENTRY_VALID_TRUE)
}

/// A packet as its four little-endian 64-bit words.
pub type PacketWords = [u64; nvgpu::hw::fault::NVC369_BUF_SIZE / 8];

/// A packet the hardware would not have written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultEntryError {
    /// `REPLAYABLE_FAULT_EN` is 0: every packet in a fault buffer has it set.
    ReplayableFaultEnUnset,
    /// `FAULT_TYPE` holds a value `dev_fault.h` does not define.
    UnknownFaultType { value: u32 },
    /// `ACCESS_TYPE` holds a value `dev_fault.h` does not define.
    UnknownAccessType { value: u32 },
    /// `INST_APERTURE` is not VID_MEM, SYS_MEM_COHERENT or SYS_MEM_NONCOHERENT.
    UnknownInstanceAperture { value: u32 },
}

impl fmt::Display for FaultEntryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReplayableFaultEnUnset => write!(f, "fault packet has NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN unset"),
            Self::UnknownFaultType { value } => write!(f, "fault packet has unknown FAULT_TYPE {value:#x}"),
            Self::UnknownAccessType { value } => write!(f, "fault packet has unknown ACCESS_TYPE {value:#x}"),
            Self::UnknownInstanceAperture { value } => write!(f, "fault packet has unknown INST_APERTURE {value:#x}"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    // Tests index and compute offsets on purpose, over inputs they build themselves.
    #![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use super::*;
    use nvgpu::hw::fault::PacketField;

    /// A packet as hardware writes it: valid, replayable, REPLAYABLE_FAULT_EN set.
    pub(crate) fn packet(instance: u64, va: u64, access: FaultAccessType, fault_type: FaultType) -> RawFaultEntry {
        let mut e = [0u8; FAULT_ENTRY_SIZE];
        NVC369_BUF_ENTRY_INST.set(&mut e, instance >> 12);
        NVC369_BUF_ENTRY_ADDR.set(&mut e, va >> 12);
        NVC369_BUF_ENTRY_ACCESS_TYPE.set(&mut e, access as u64);
        NVC369_BUF_ENTRY_FAULT_TYPE.set(&mut e, fault_type as u64);
        NVC369_BUF_ENTRY_REPLAYABLE_FAULT.set(&mut e, 1);
        NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN.set(&mut e, 1);
        NVC369_BUF_ENTRY_VALID.set(&mut e, 1);
        e
    }

    fn set(e: &mut RawFaultEntry, f: PacketField, v: u64) {
        f.set(e, v);
    }

    #[test]
    fn every_field_decodes() {
        let mut e = packet(0x12_3456_7000, 0x7f12_3456_7000, FaultAccessType::VirtWrite, FaultType::RoViolation);
        set(&mut e, NVC369_BUF_ENTRY_INST_APERTURE, 2);
        set(&mut e, NVC369_BUF_ENTRY_ADDR_PHYS_APERTURE, 3);
        set(&mut e, NVC369_BUF_ENTRY_TIMESTAMP, 0x1122_3344_5566_7788);
        set(&mut e, NVC369_BUF_ENTRY_ENGINE_ID, 64 + 5);
        set(&mut e, NVC369_BUF_ENTRY_CLIENT, 0x21);
        set(&mut e, NVC369_BUF_ENTRY_MMU_CLIENT_TYPE, 0);
        set(&mut e, NVC369_BUF_ENTRY_GPC_ID, 7);
        set(&mut e, NVC369_BUF_ENTRY_PROTECTED_MODE, 1);
        let f = FaultEntry::decode(&e).unwrap();
        assert_eq!(f.instance, InstancePtr { address: 0x12_3456_7000, aperture: Aperture::SysMemCoherent });
        assert_eq!(f.va, 0x7f12_3456_7000);
        assert_eq!(f.addr_phys_aperture, 3);
        assert_eq!(f.timestamp, 0x1122_3344_5566_7788);
        assert_eq!(f.engine_id, 69);
        assert_eq!(f.fault_type, FaultType::RoViolation);
        assert_eq!(f.hw_access_type, FaultAccessType::VirtWrite);
        assert_eq!(f.access, FaultAccess::Write);
        assert_eq!(f.client, 0x21);
        assert_eq!(f.client_type, MmuClientType::Gpc);
        assert_eq!(f.gpc, 7);
        assert!(f.replayable && f.protected_mode && f.valid && f.is_virtual() && !f.is_fatal());
    }

    #[test]
    fn both_instance_apertures_and_maximum_values() {
        let mut e = packet(!0xfff, u64::MAX, FaultAccessType::PhysPrefetch, FaultType::AtomicViolation);
        set(&mut e, NVC369_BUF_ENTRY_INST_APERTURE, 0);
        set(&mut e, NVC369_BUF_ENTRY_TIMESTAMP, u64::MAX);
        set(&mut e, NVC369_BUF_ENTRY_ENGINE_ID, 0x1ff);
        set(&mut e, NVC369_BUF_ENTRY_CLIENT, 0x7f);
        set(&mut e, NVC369_BUF_ENTRY_MMU_CLIENT_TYPE, 1);
        set(&mut e, NVC369_BUF_ENTRY_GPC_ID, 0x1f);
        let f = FaultEntry::decode(&e).unwrap();
        assert_eq!(f.instance, InstancePtr { address: 0xffff_ffff_ffff_f000, aperture: Aperture::VidMem });
        // The VA comes out aligned down to 4 KiB.
        assert_eq!(f.va, 0xffff_ffff_ffff_f000);
        assert_eq!(f.timestamp, u64::MAX);
        assert_eq!((f.engine_id, f.client, f.gpc), (511, 127, 31));
        assert_eq!(f.client_type, MmuClientType::Hub);
        assert_eq!(f.access, FaultAccess::Prefetch);
        assert!(!f.is_virtual() && !f.protected_mode);

        set(&mut e, NVC369_BUF_ENTRY_INST_APERTURE, 3);
        assert_eq!(FaultEntry::decode(&e).unwrap().instance.aperture, Aperture::SysMemNoncoherent);
        set(&mut e, NVC369_BUF_ENTRY_VALID, 0);
        set(&mut e, NVC369_BUF_ENTRY_REPLAYABLE_FAULT, 0);
        let f = FaultEntry::decode(&e).unwrap();
        assert!(!f.valid && !f.replayable);
        assert!(!is_valid(&e));
    }

    #[test]
    fn packets_hardware_would_not_write_are_errors() {
        let good = packet(0x1000, 0x2000, FaultAccessType::VirtRead, FaultType::Pte);
        let mut e = good;
        set(&mut e, NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN, 0);
        assert_eq!(FaultEntry::decode(&e), Err(FaultEntryError::ReplayableFaultEnUnset));
        let mut e = good;
        set(&mut e, NVC369_BUF_ENTRY_FAULT_TYPE, 0x10);
        assert_eq!(FaultEntry::decode(&e), Err(FaultEntryError::UnknownFaultType { value: 0x10 }));
        for bad in [5u64, 6, 7, 0xc, 0xf] {
            let mut e = good;
            set(&mut e, NVC369_BUF_ENTRY_ACCESS_TYPE, bad);
            assert_eq!(FaultEntry::decode(&e), Err(FaultEntryError::UnknownAccessType { value: bad as u32 }));
        }
        let mut e = good;
        set(&mut e, NVC369_BUF_ENTRY_INST_APERTURE, 1);
        assert_eq!(FaultEntry::decode(&e), Err(FaultEntryError::UnknownInstanceAperture { value: 1 }));
        assert_eq!(
            FaultEntryError::UnknownAccessType { value: 6 }.to_string(),
            "fault packet has unknown ACCESS_TYPE 0x6"
        );
    }

    #[test]
    fn only_pde_pte_and_permission_violations_are_serviceable() {
        let serviceable: alloc::vec::Vec<_> = FaultType::ALL.iter().copied().filter(|t| !is_fatal(*t)).collect();
        assert_eq!(
            serviceable,
            [
                FaultType::Pde,
                FaultType::Pte,
                FaultType::RoViolation,
                FaultType::WoViolation,
                FaultType::AtomicViolation
            ]
        );
        assert!(is_fatal(FaultType::PdeSize) && is_fatal(FaultType::UnboundInstBlock) && is_fatal(FaultType::Poisoned));
    }

    #[test]
    fn access_kinds_rank_by_intrusiveness() {
        use FaultAccess::*;
        assert!(Prefetch < Read && Read < Write && Write < AtomicWeak && AtomicWeak < AtomicStrong);
        assert_eq!(FaultAccess::from_hw(FaultAccessType::PhysAtomic), AtomicStrong);
        assert_eq!(FaultAccess::from_hw(FaultAccessType::VirtAtomicWeak), AtomicWeak);
        let m: AccessTypeMask = [Read, Write].into_iter().collect();
        assert_eq!(m.iter().collect::<alloc::vec::Vec<_>>(), [Read, Write]);
        assert_eq!(m.highest(), Some(Write));
        assert!(!m.contains(Prefetch));
        assert_eq!(AccessTypeMask::empty().highest(), None);
    }
}
