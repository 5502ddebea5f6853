//! TLB invalidation through BAR0, as RM does it on Turing and later
//! (`kgmmuInvalidateTlb_GM107` builds the command, `kgmmuCommitTlbInvalidate_TU102` writes it,
//! `kgmmuCheckPendingInvalidates_TU102` polls it; `kern_gmmu_gm107.c`/`kern_gmmu_tu102.c`,
//! 535.261.03): wait until no invalidate is pending, write the PDB (`..._INVALIDATE_PDB` and
//! `_UPPER_PDB`), write `..._INVALIDATE` with `ALL_VA` and `TRIGGER` (plus `SYS_MEMBAR` and
//! `ACK_GLOBALLY` for downgrades, `kgmmuSetTlbInvalidateMembarWarParameters_TU102`), then poll
//! until `TRIGGER` reads clear. Every wait is bounded.

use super::format::TableAperture;
use super::page_table::{TlbChange, TlbError, TlbInvalidate, TlbInvalidator};
use crate::hw::vm::{
    InvalidateAck, InvalidatePdbAperture, NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE as INVALIDATE,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB as INVALIDATE_PDB,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB_ADDR_ALIGNMENT as PDB_SHIFT,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_UPPER_PDB as INVALIDATE_UPPER_PDB, VF_BASE,
};
use crate::hw::RegisterIo;
use crate::platform::{wait_for, Clock};

/// How long one invalidate may take before it is an error (RM uses its default GPU timeout).
pub const INVALIDATE_TIMEOUT_MS: u64 = 100;

/// A [`TlbInvalidator`] over BAR0 registers.
pub struct RegisterTlbInvalidator<'a, R: RegisterIo + ?Sized, C: Clock + ?Sized> {
    io: &'a R,
    clock: &'a C,
    /// Invalidates issued.
    pub issued: u64,
}

impl<'a, R: RegisterIo + ?Sized, C: Clock + ?Sized> RegisterTlbInvalidator<'a, R, C> {
    pub fn new(io: &'a R, clock: &'a C) -> Self {
        RegisterTlbInvalidator { io, clock, issued: 0 }
    }

    fn wait_idle(&self, what: &'static str) -> Result<(), TlbError> {
        wait_for(self.clock, INVALIDATE_TIMEOUT_MS, what, || {
            (!INVALIDATE::read(self.io, VF_BASE).trigger()).then_some(())
        })
        .map_err(TlbError::Timeout)
    }

    fn commit(&mut self, command: INVALIDATE) -> Result<(), TlbError> {
        command.with(INVALIDATE::TRIGGER, true).write(self.io, VF_BASE);
        self.issued += 1;
        self.wait_idle("NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_TRIGGER to clear after a TLB invalidate")
    }

    /// Invalidates every address space's translations.
    pub fn invalidate_all_pdbs(&mut self) -> Result<(), TlbError> {
        self.wait_idle("NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_TRIGGER to clear before a TLB invalidate")?;
        let command = INVALIDATE::default().with(INVALIDATE::ALL_VA, true).with(INVALIDATE::ALL_PDB, true);
        self.commit(command)
    }
}

impl<R: RegisterIo + ?Sized, C: Clock + ?Sized> TlbInvalidator for RegisterTlbInvalidator<'_, R, C> {
    fn invalidate(&mut self, request: &TlbInvalidate) -> Result<(), TlbError> {
        let units = request.pdb.address >> PDB_SHIFT;
        let low_bits = INVALIDATE_PDB::ADDR.bits.width();
        let upper = units >> low_bits;
        if upper >> INVALIDATE_UPPER_PDB::ADDR.bits.width() != 0 || request.pdb.address & ((1 << PDB_SHIFT) - 1) != 0 {
            return Err(TlbError::Failed {
                what: "PDB address does not fit NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB",
            });
        }
        self.wait_idle("NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_TRIGGER to clear before a TLB invalidate")?;
        let aperture = match request.pdb.aperture {
            TableAperture::Video => InvalidatePdbAperture::VidMem,
            TableAperture::SystemCoherent | TableAperture::SystemNonCoherent => InvalidatePdbAperture::SysMem,
        };
        INVALIDATE_PDB::default()
            .with(INVALIDATE_PDB::ADDR, (units & ((1 << low_bits) - 1)) as u32)
            .with(INVALIDATE_PDB::APERTURE, aperture)
            .write(self.io, VF_BASE);
        INVALIDATE_UPPER_PDB::default().with(INVALIDATE_UPPER_PDB::ADDR, upper as u32).write(self.io, VF_BASE);
        // RM never uses a VA range on this path; the range is in `request` for channel-based
        // invalidates.
        let mut command = INVALIDATE::default().with(INVALIDATE::ALL_VA, true);
        if request.change == TlbChange::Downgrade {
            command = command.with(INVALIDATE::SYS_MEMBAR, true).with(INVALIDATE::ACK, InvalidateAck::Globally);
        }
        self.commit(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::format::TableAddress;
    use core::cell::{Cell, RefCell};
    use std::vec::Vec;

    struct Clk(Cell<u64>);
    impl Clock for Clk {
        fn now_ns(&self) -> u64 {
            self.0.set(self.0.get() + 1_000_000);
            self.0.get()
        }
    }

    /// Records writes; TRIGGER stays set when `stuck`.
    struct Bar {
        writes: RefCell<Vec<(u32, u32)>>,
        stuck: bool,
    }
    impl RegisterIo for Bar {
        fn read32(&self, offset: u32) -> u32 {
            let last = self.writes.borrow().iter().rev().find(|w| w.0 == offset).map_or(0, |w| w.1);
            if self.stuck {
                last
            } else {
                last & !(1 << 31)
            }
        }
        fn write32(&self, offset: u32, value: u32) {
            self.writes.borrow_mut().push((offset, value));
        }
    }

    fn request(address: u64, change: TlbChange) -> TlbInvalidate {
        let pdb = TableAddress { aperture: TableAperture::SystemCoherent, address };
        TlbInvalidate { pdb, va: 0, size: 4096, directories_changed: false, change }
    }

    #[test]
    fn writes_what_rm_writes() {
        let bar = Bar { writes: RefCell::new(Vec::new()), stuck: false };
        let clock = Clk(Cell::new(0));
        let mut tlb = RegisterTlbInvalidator::new(&bar, &clock);
        tlb.invalidate(&request(0x12_3456_7000, TlbChange::Downgrade)).unwrap();
        let w = bar.writes.borrow().clone();
        // 0x12_3456_7000 >> 12 = 0x123_4567: low 28 bits 0x123_4567 in 31:4, SYS_MEM in 1:1.
        assert_eq!(w, vec![(0xB830A0, 0x1234_5672), (0xB830A4, 0), (0xB830B0, 0x8000_00C1)]);
        tlb.invalidate(&request(0x1_2345_6789_A000, TlbChange::Upgrade)).unwrap();
        let w = bar.writes.borrow().clone();
        // >> 12 = 0x12_3456_789A: low 28 bits 0x456_789A, upper 0x123.
        assert_eq!(w[3..], [(0xB830A0, 0x4567_89A2), (0xB830A4, 0x123), (0xB830B0, 0x8000_0001)]);
    }

    #[test]
    fn a_stuck_trigger_is_a_timeout_naming_it() {
        let bar = Bar { writes: RefCell::new(Vec::new()), stuck: true };
        let clock = Clk(Cell::new(0));
        let mut tlb = RegisterTlbInvalidator::new(&bar, &clock);
        match tlb.invalidate(&request(0x1000, TlbChange::Upgrade)) {
            Err(TlbError::Timeout(t)) => assert!(t.what.contains("INVALIDATE_TRIGGER to clear after")),
            other => panic!("{other:?}"),
        }
        match tlb.invalidate(&request(0x1000, TlbChange::Upgrade)) {
            Err(TlbError::Timeout(t)) => assert!(t.what.contains("before")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(tlb.invalidate(&request(0x1001, TlbChange::Upgrade)), Err(TlbError::Failed { .. })));
    }
}
