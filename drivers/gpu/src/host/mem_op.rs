//! Fault replay and precise fault cancel as host `MEM_OP_A..D` methods (the sequences UVM pushes
//! in `uvm_volta_host.c` / `uvm_hopper_host.c`, 535.261.03): a replay is a targeted TLB
//! invalidate of a dummy PDB (address 0 in vidmem, so no VA loses its translation) with
//! `REPLAY_START` or `REPLAY_START_ACK_ALL`; a precise cancel is a targeted invalidate of the
//! faulting PDB and 4 KiB VA with `REPLAY_CANCEL_VA_GLOBAL`, an access type and the engine id.
//!
//! Field positions come from [`crate::hw::host`] (`clc46f.h`; Ampere's `clc56f.h` and Hopper's
//! `clc86f.h` are pinned to the same layout there, except Hopper's 9-bit engine id).

use core::fmt;

use super::{HostClass, PushBuffer, PushError, PushStorage};
use crate::hw::host::{
    hopper::NVC86F_MEM_OP_A, method, MemOpOperation, MemOpSysmembar, TlbInvalidateAccessType, TlbInvalidateAckType,
    TlbInvalidateGpc, TlbInvalidatePageTableLevel, TlbInvalidatePdb, TlbInvalidatePdbAperture, TlbInvalidateReplay,
    NVC46F_MEM_OP_A, NVC46F_MEM_OP_B, NVC46F_MEM_OP_C, NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC, NVC46F_MEM_OP_D,
};

/// The two replays UVM issues (`uvm_fault_replay_type_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReplayType {
    /// Retry the faulted accesses (`REPLAY_START`).
    Start,
    /// Retry and acknowledge every outstanding fault (`REPLAY_START_ACK_ALL`).
    StartAckAll,
}

impl ReplayType {
    const fn field(self) -> TlbInvalidateReplay {
        match self {
            ReplayType::Start => TlbInvalidateReplay::Start,
            ReplayType::StartAckAll => TlbInvalidateReplay::StartAckAll,
        }
    }
}

/// Which accesses a precise cancel kills (`uvm_fault_cancel_va_mode_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CancelVaMode {
    /// Every access to the page: the address has no valid mapping (`ACCESS_TYPE_VIRT_ALL`).
    All,
    /// Writes and atomics only: the page is legally read-only
    /// (`ACCESS_TYPE_VIRT_WRITE_AND_ATOMIC`).
    WriteAndAtomic,
}

impl CancelVaMode {
    /// The `MEM_OP_C` `TLB_INVALIDATE_ACCESS_TYPE` this mode writes.
    pub const fn access_type(self) -> TlbInvalidateAccessType {
        self.field()
    }

    const fn field(self) -> TlbInvalidateAccessType {
        match self {
            CancelVaMode::All => TlbInvalidateAccessType::VirtAll,
            CancelVaMode::WriteAndAtomic => TlbInvalidateAccessType::VirtWriteAndAtomic,
        }
    }
}

/// Where a PDB lives. UVM cancels only with vidmem or coherent sysmem PDBs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PdbAperture {
    VidMem,
    SysMemCoherent,
}

/// One precise cancel: the faulting address space, page, engine and the accesses to kill.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CancelVa {
    /// The PDB (page directory base) of the faulting address space, 4 KiB aligned.
    pub pdb: u64,
    pub pdb_aperture: PdbAperture,
    /// The faulting VA, 4 KiB aligned (fault entries are aligned down already).
    pub va: u64,
    /// The MMU engine id from the fault entry.
    pub mmu_engine_id: u16,
    pub mode: CancelVaMode,
}

/// Why a replay or cancel could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOpError {
    /// The PDB address is not 4 KiB aligned.
    PdbMisaligned { pdb: u64 },
    /// The PDB address needs more bits than `PDB_ADDR_LO` + `PDB_ADDR_HI` hold.
    PdbOutOfRange { pdb: u64, bits: u32 },
    /// The VA is not 4 KiB aligned.
    VaMisaligned { va: u64 },
    /// The engine id is wider than the class's `CANCEL_MMU_ENGINE_ID`.
    EngineIdOutOfRange { mmu_engine_id: u16, class: HostClass, bits: u32 },
    /// The pushbuffer refused the method.
    Push(PushError),
}

impl fmt::Display for MemOpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PdbMisaligned { pdb } => write!(f, "PDB {pdb:#x} is not 4 KiB aligned"),
            Self::PdbOutOfRange { pdb, bits } => write!(f, "PDB {pdb:#x} is beyond {bits} address bits"),
            Self::VaMisaligned { va } => write!(f, "cancel VA {va:#x} is not 4 KiB aligned"),
            Self::EngineIdOutOfRange { mmu_engine_id, class, bits } => {
                write!(f, "MMU engine id {mmu_engine_id} does not fit {class:?}'s {bits}-bit CANCEL_MMU_ENGINE_ID")
            }
            Self::Push(e) => write!(f, "pushing MEM_OP_A..D: {e}"),
        }
    }
}

impl From<PushError> for MemOpError {
    fn from(e: PushError) -> Self {
        MemOpError::Push(e)
    }
}

const PAGE_SHIFT: u32 = 12;

/// Bits of `CANCEL_MMU_ENGINE_ID` in `class` (7 before Hopper, 9 on Hopper).
pub const fn cancel_engine_id_bits(class: HostClass) -> u32 {
    match class {
        HostClass::TuringA | HostClass::AmpereA => NVC46F_MEM_OP_A::TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID.bits.width(),
        HostClass::HopperA => NVC86F_MEM_OP_A::TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID.bits.width(),
    }
}

/// PDB address bits the MEM_OP_C/D pair holds: 12 + `PDB_ADDR_LO` (20) + `PDB_ADDR_HI` (27).
pub const PDB_ADDRESS_BITS: u32 = PAGE_SHIFT
    + NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_ADDR_LO.bits.width()
    + NVC46F_MEM_OP_D::TLB_INVALIDATE_PDB_ADDR_HI.bits.width();

/// `MEM_OP_C` with GPC enabled: `TLB_INVALIDATE_GPC` is `1:1` and `ENABLE` is 0.
fn with_gpc_enable(c: NVC46F_MEM_OP_C) -> NVC46F_MEM_OP_C {
    NVC46F_MEM_OP_C(NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC.insert(c.raw(), TlbInvalidateGpc::Enable as u32))
}

/// The four data words (`MEM_OP_A`, `_B`, `_C`, `_D`) of a replay. They are the same in every
/// class: no engine id, dummy PDB and VA 0.
pub fn replay_words(replay: ReplayType) -> [u32; 4] {
    let a = NVC46F_MEM_OP_A::default()
        .with(NVC46F_MEM_OP_A::TLB_INVALIDATE_SYSMEMBAR, MemOpSysmembar::Dis)
        .with(NVC46F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO, 0);
    let b = NVC46F_MEM_OP_B::default().with(NVC46F_MEM_OP_B::TLB_INVALIDATE_TARGET_ADDR_HI, 0);
    let c = NVC46F_MEM_OP_C::default()
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB, TlbInvalidatePdb::One)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_ADDR_LO, 0)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_PAGE_TABLE_LEVEL, TlbInvalidatePageTableLevel::PteOnly)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_APERTURE, TlbInvalidatePdbAperture::VidMem)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_REPLAY, replay.field());
    let c = with_gpc_enable(c);
    let d = NVC46F_MEM_OP_D::default()
        .with(NVC46F_MEM_OP_D::OPERATION, MemOpOperation::MmuTlbInvalidateTargeted)
        .with(NVC46F_MEM_OP_D::TLB_INVALIDATE_PDB_ADDR_HI, 0);
    [a.raw(), b.raw(), c.raw(), d.raw()]
}

/// The four data words of a precise cancel for `class`.
pub fn cancel_va_words(class: HostClass, cancel: &CancelVa) -> Result<[u32; 4], MemOpError> {
    let CancelVa { pdb, pdb_aperture, va, mmu_engine_id, mode } = *cancel;
    if pdb & ((1 << PAGE_SHIFT) - 1) != 0 {
        return Err(MemOpError::PdbMisaligned { pdb });
    }
    if pdb >> PDB_ADDRESS_BITS != 0 {
        return Err(MemOpError::PdbOutOfRange { pdb, bits: PDB_ADDRESS_BITS });
    }
    if va & ((1 << PAGE_SHIFT) - 1) != 0 {
        return Err(MemOpError::VaMisaligned { va });
    }
    let bits = cancel_engine_id_bits(class);
    if u32::from(mmu_engine_id) >> bits != 0 {
        return Err(MemOpError::EngineIdOutOfRange { mmu_engine_id, class, bits });
    }

    let page = va >> PAGE_SHIFT;
    let va_lo_bits = NVC46F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO.bits.width();
    let va_lo = (page & ((1 << va_lo_bits) - 1)) as u32;
    // 64 - 12 - 20 = 32 bits remain: ADDR_HI takes all of them.
    let va_hi = (page >> va_lo_bits) as u32;
    let pdb_page = pdb >> PAGE_SHIFT;
    let pdb_lo_bits = NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_ADDR_LO.bits.width();
    let pdb_lo = (pdb_page & ((1 << pdb_lo_bits) - 1)) as u32;
    let pdb_hi = (pdb_page >> pdb_lo_bits) as u32;

    let a = NVC46F_MEM_OP_A::default()
        .with(NVC46F_MEM_OP_A::TLB_INVALIDATE_SYSMEMBAR, MemOpSysmembar::Dis)
        .with(NVC46F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO, va_lo);
    let a = match class {
        HostClass::TuringA | HostClass::AmpereA => {
            a.with(NVC46F_MEM_OP_A::TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID, mmu_engine_id as u8).raw()
        }
        HostClass::HopperA => {
            NVC86F_MEM_OP_A(a.raw()).with(NVC86F_MEM_OP_A::TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID, mmu_engine_id).raw()
        }
    };
    let b = NVC46F_MEM_OP_B::default().with(NVC46F_MEM_OP_B::TLB_INVALIDATE_TARGET_ADDR_HI, va_hi);
    let aperture = match pdb_aperture {
        PdbAperture::VidMem => TlbInvalidatePdbAperture::VidMem,
        PdbAperture::SysMemCoherent => TlbInvalidatePdbAperture::SysMemCoherent,
    };
    let c = NVC46F_MEM_OP_C::default()
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB, TlbInvalidatePdb::One)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_ADDR_LO, pdb_lo)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_REPLAY, TlbInvalidateReplay::CancelVaGlobal)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_ACK_TYPE, TlbInvalidateAckType::None)
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_ACCESS_TYPE, mode.field())
        .with(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_APERTURE, aperture);
    let c = with_gpc_enable(c);
    let d = NVC46F_MEM_OP_D::default()
        .with(NVC46F_MEM_OP_D::OPERATION, MemOpOperation::MmuTlbInvalidateTargeted)
        .with(NVC46F_MEM_OP_D::TLB_INVALIDATE_PDB_ADDR_HI, pdb_hi);
    Ok([a, b.raw(), c.raw(), d.raw()])
}

impl<S: PushStorage> PushBuffer<S> {
    /// Pushes a fault replay: one incrementing method writing `MEM_OP_A..D` on subchannel 0.
    pub fn replay_faults(&mut self, replay: ReplayType) -> Result<(), PushError> {
        self.incr(0, method::NVC46F_MEM_OP_A, &replay_words(replay))
    }

    /// Pushes a precise cancel of one page's faulted accesses (UVM issues one per 4 KiB page).
    pub fn cancel_faults_va(&mut self, cancel: &CancelVa) -> Result<(), MemOpError> {
        let words = cancel_va_words(self.class(), cancel)?;
        self.incr(0, method::NVC46F_MEM_OP_A, &words)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{decode, MethodKind};

    fn mem_op_writes(words: &[u32]) -> [u32; 4] {
        let methods: alloc::vec::Vec<_> = decode(words).collect::<Result<_, _>>().unwrap();
        assert_eq!(methods.len(), 1);
        let m = &methods[0];
        assert_eq!((m.subchannel, m.method, m.kind), (0, method::NVC46F_MEM_OP_A, MethodKind::Incr));
        let writes: alloc::vec::Vec<_> = m.writes().collect();
        assert_eq!(
            writes.iter().map(|w| w.0).collect::<alloc::vec::Vec<_>>(),
            [method::NVC46F_MEM_OP_A, method::NVC46F_MEM_OP_B, method::NVC46F_MEM_OP_C, method::NVC46F_MEM_OP_D]
        );
        [writes[0].1, writes[1].1, writes[2].1, writes[3].1]
    }

    #[test]
    fn replay_start_is_a_targeted_invalidate_of_a_dummy_pdb() {
        for (replay, field) in [
            (ReplayType::Start, TlbInvalidateReplay::Start),
            (ReplayType::StartAckAll, TlbInvalidateReplay::StartAckAll),
        ] {
            for class in [HostClass::TuringA, HostClass::AmpereA, HostClass::HopperA] {
                let mut pb = PushBuffer::with_storage(alloc::vec::Vec::new(), class);
                pb.replay_faults(replay).unwrap();
                assert_eq!(pb.len(), 5);
                let [a, b, c, d] = mem_op_writes(pb.words());
                let (a, b, c, d) = (NVC46F_MEM_OP_A(a), NVC46F_MEM_OP_B(b), NVC46F_MEM_OP_C(c), NVC46F_MEM_OP_D(d));
                assert_eq!(a.sysmembar(), Ok(MemOpSysmembar::Dis));
                assert_eq!(a.target_addr_lo(), 0);
                assert_eq!(b.target_addr_hi(), 0);
                assert_eq!(c.pdb(), Ok(TlbInvalidatePdb::One));
                assert_eq!(c.pdb_addr_lo(), 0);
                assert_eq!(NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC.extract(c.raw()), TlbInvalidateGpc::Enable as u32);
                assert_eq!(c.page_table_level(), Ok(TlbInvalidatePageTableLevel::PteOnly));
                assert_eq!(c.pdb_aperture(), Ok(TlbInvalidatePdbAperture::VidMem));
                assert_eq!(c.replay(), Ok(field));
                assert_eq!(d.operation(), Ok(MemOpOperation::MmuTlbInvalidateTargeted));
                assert_eq!(d.pdb_addr_hi(), 0);
            }
        }
        // Concrete words: C = PTE_ONLY (1 << 7) | START (1 << 2); D = 0xA << 27.
        assert_eq!(replay_words(ReplayType::Start), [0, 0, 0x84, 0x5000_0000]);
        assert_eq!(replay_words(ReplayType::StartAckAll), [0, 0, 0x88, 0x5000_0000]);
    }

    #[test]
    fn precise_cancel_carries_pdb_va_access_type_and_engine() {
        let cancel = CancelVa {
            pdb: 0x0123_4567_8000,
            pdb_aperture: PdbAperture::SysMemCoherent,
            va: 0x7fff_dead_b000,
            mmu_engine_id: 0x45,
            mode: CancelVaMode::WriteAndAtomic,
        };
        let mut pb = PushBuffer::with_storage(alloc::vec::Vec::new(), HostClass::AmpereA);
        pb.cancel_faults_va(&cancel).unwrap();
        let [a, b, c, d] = mem_op_writes(pb.words());
        let (a, b, c, d) = (NVC46F_MEM_OP_A(a), NVC46F_MEM_OP_B(b), NVC46F_MEM_OP_C(c), NVC46F_MEM_OP_D(d));
        assert_eq!(a.sysmembar(), Ok(MemOpSysmembar::Dis));
        assert_eq!(a.cancel_mmu_engine_id(), 0x45);
        // VA >> 12 = 0x7_fffd_eadb: low 20 bits in A, the rest in B.
        assert_eq!(a.target_addr_lo(), 0xd_eadb);
        assert_eq!(b.target_addr_hi(), 0x7fff);
        assert_eq!(c.pdb(), Ok(TlbInvalidatePdb::One));
        assert_eq!(NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC.extract(c.raw()), 0);
        assert_eq!(c.replay(), Ok(TlbInvalidateReplay::CancelVaGlobal));
        assert_eq!(c.ack_type(), Ok(TlbInvalidateAckType::None));
        assert_eq!(c.access_type(), Ok(TlbInvalidateAccessType::VirtWriteAndAtomic));
        assert_eq!(c.pdb_aperture(), Ok(TlbInvalidatePdbAperture::SysMemCoherent));
        // PDB >> 12 = 0x1234_5678: low 20 bits in C, the rest in D.
        assert_eq!(c.pdb_addr_lo(), 0x4_5678);
        assert_eq!(d.pdb_addr_hi(), 0x123);
        assert_eq!(d.operation(), Ok(MemOpOperation::MmuTlbInvalidateTargeted));
        assert_eq!(a.raw(), 0xdeadb045);
        assert_eq!(c.raw(), (0x4_5678 << 12) | (2 << 10) | (6 << 7) | (5 << 2));
    }

    #[test]
    fn hopper_cancels_carry_nine_bit_engine_ids() {
        let cancel = CancelVa {
            pdb: 0x1000,
            pdb_aperture: PdbAperture::VidMem,
            va: 0x2000,
            mmu_engine_id: 384 + 63,
            mode: CancelVaMode::All,
        };
        let [a, _, c, _] = cancel_va_words(HostClass::HopperA, &cancel).unwrap();
        assert_eq!(NVC86F_MEM_OP_A(a).cancel_mmu_engine_id(), 447);
        assert_eq!(NVC86F_MEM_OP_A(a).target_addr_lo(), 2);
        assert_eq!(NVC46F_MEM_OP_C(c).access_type(), Ok(TlbInvalidateAccessType::VirtAll));
        assert_eq!(NVC46F_MEM_OP_C(c).pdb_aperture(), Ok(TlbInvalidatePdbAperture::VidMem));
        assert_eq!(
            cancel_va_words(HostClass::TuringA, &cancel),
            Err(MemOpError::EngineIdOutOfRange { mmu_engine_id: 447, class: HostClass::TuringA, bits: 7 })
        );
        assert_eq!(cancel_engine_id_bits(HostClass::AmpereA), 7);
        assert_eq!(cancel_engine_id_bits(HostClass::HopperA), 9);
        let ok = CancelVa { mmu_engine_id: 127, ..cancel };
        assert_eq!(NVC46F_MEM_OP_A(cancel_va_words(HostClass::TuringA, &ok).unwrap()[0]).cancel_mmu_engine_id(), 127);
    }

    #[test]
    fn bad_cancels_are_refused_before_any_word_is_written() {
        let good = CancelVa {
            pdb: 0x1000,
            pdb_aperture: PdbAperture::VidMem,
            va: 0,
            mmu_engine_id: 0,
            mode: CancelVaMode::All,
        };
        assert_eq!(PDB_ADDRESS_BITS, 59);
        let cases = [
            (CancelVa { pdb: 0x1800, ..good }, MemOpError::PdbMisaligned { pdb: 0x1800 }),
            (CancelVa { pdb: 1 << 59, ..good }, MemOpError::PdbOutOfRange { pdb: 1 << 59, bits: 59 }),
            (CancelVa { va: 0x1234, ..good }, MemOpError::VaMisaligned { va: 0x1234 }),
        ];
        for (cancel, err) in cases {
            let mut pb = PushBuffer::new();
            assert_eq!(pb.cancel_faults_va(&cancel), Err(err));
            assert!(pb.is_empty());
        }
        let mut tiny = [0u32; 4];
        let mut pb = PushBuffer::over_slice(&mut tiny, HostClass::TuringA);
        assert_eq!(pb.cancel_faults_va(&good), Err(MemOpError::Push(PushError::Full { needed: 5, available: 4 })));
        assert_eq!(pb.replay_faults(ReplayType::Start), Err(PushError::Full { needed: 5, available: 4 }));
        assert!(pb.is_empty());
    }
}
