//! The TLB invalidate registers of the "virtual function" register space, the path RM uses on
//! Turing and later (`kgmmuCommitTlbInvalidate_TU102`, `kgmmuSetPdbToInvalidate_TU102`,
//! `kgmmuCheckPendingInvalidates_TU102` in `src/nvidia/src/kernel/gpu/mmu/arch/turing/
//! kern_gmmu_tu102.c`, 535.261.03).
//!
//! Follows `turing/tu102/dev_vm.h`. The offsets are relative to the virtual-function space,
//! which RM reaches (`GPU_VREG_WR32`) at `gpuGetVirtRegPhysOffset_TU102` =
//! `DRF_BASE(NV_VIRTUAL_FUNCTION_FULL_PHYS_OFFSET)` (0xB80000) on every chip up to Hopper when it
//! is not an SR-IOV VF; `g_gpu_nvoc.h` binds that one implementation for all chips and
//! `g_kern_gmmu_nvoc.h` binds the TU102 invalidate for all chips, Hopper included. Hopper's own
//! `hopper/gh100/dev_vm.h` does not list the invalidate registers at all (it describes the VF's
//! own BAR0), so the Turing header is the source for every family.
//!
//! The header has no VA-targeted register (`..._INVALIDATE_VADDR`) in 535: RM always sets
//! `ALL_VA` here; VA-range invalidates are host methods on a channel (`MEM_OP_*`).

use super::headers;
use crate::{constants, field_values, registers};

constants! {
    /// Facts of the VF space and the PDB address alignment.
    pub const CONSTANT_FACTS;

    /// Where the VF register space sits in BAR0 for the physical function.
    pub NV_VIRTUAL_FUNCTION_FULL_PHYS_OFFSET: Range = 0x00BBFFFF : 0x00B80000 in headers::TU102_DEV_VM;
    /// `PDB_ADDR` holds the PDB's address shifted right by this.
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB_ADDR_ALIGNMENT: u32 = 0x0000000c in headers::TU102_DEV_VM;
}

/// BAR0 offset of the VF register space (`DRF_BASE(NV_VIRTUAL_FUNCTION_FULL_PHYS_OFFSET)`).
pub const VF_BASE: u32 = NV_VIRTUAL_FUNCTION_FULL_PHYS_OFFSET.first;

field_values! {
    /// Where the PDB to invalidate lives.
    pub enum InvalidatePdbAperture: NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB_APERTURE in headers::TU102_DEV_VM {
        VidMem = 0x0 => VID_MEM,
        SysMem = 0x1 => SYS_MEM,
    }
}

field_values! {
    /// Fault replay / cancel that rides along with an invalidate.
    pub enum InvalidateReplay: NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_REPLAY in headers::TU102_DEV_VM {
        None = 0x0 => NONE,
        Start = 0x1 => START,
        StartAckAll = 0x2 => START_ACK_ALL,
        CancelTargeted = 0x3 => CANCEL_TARGETED,
        CancelGlobal = 0x4 => CANCEL_GLOBAL,
        CancelVaGlobal = 0x5 => CANCEL_VA_GLOBAL,
    }
}

field_values! {
    /// Which acknowledgement the invalidate waits for.
    pub enum InvalidateAck: NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_ACK in headers::TU102_DEV_VM {
        NoneRequired = 0x0 => NONE_REQUIRED,
        Globally = 0x1 => GLOBALLY,
        Intranode = 0x2 => INTRANODE,
    }
}

field_values! {
    /// Which cached levels go (the header's `CANCEL_*` values reuse these numbers for cancels).
    pub enum InvalidateCacheLevel: NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_CACHE_LEVEL in headers::TU102_DEV_VM {
        All = 0x0 => ALL,
        PteOnly = 0x1 => PTE_ONLY,
        UpToPde0 = 0x2 => UP_TO_PDE0,
        UpToPde1 = 0x3 => UP_TO_PDE1,
        UpToPde2 = 0x4 => UP_TO_PDE2,
        UpToPde3 = 0x5 => UP_TO_PDE3,
        UpToPde4 = 0x6 => UP_TO_PDE4,
        UpToPde5 = 0x7 => UP_TO_PDE5,
    }
}

registers! {
    /// Facts of the invalidate registers.
    pub const FACTS;

    /// The PDB (address space root) to invalidate, low part: address bits 39:12.
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB(base + 0x000030A0) in headers::TU102_DEV_VM {
        1:1 APERTURE => aperture: InvalidatePdbAperture,
        /// PDB address >> 12, low 28 bits.
        31:4 ADDR => addr: u32,
    }

    /// The PDB's address bits above those of `..._INVALIDATE_PDB_ADDR`.
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_UPPER_PDB(base + 0x000030A4) in headers::TU102_DEV_VM {
        /// (PDB address >> 12) >> 28.
        19:0 ADDR => addr: u32,
    }

    /// The invalidate command; writing `TRIGGER` starts it, `TRIGGER` reads 1 while it runs.
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE(base + 0x000030B0) in headers::TU102_DEV_VM {
        /// Every VA (RM always sets it on this path).
        0:0 ALL_VA => all_va: bool,
        /// Every address space, not only the one in `..._INVALIDATE_PDB`.
        1:1 ALL_PDB => all_pdb: bool,
        /// Only the hub TLB (BAR address spaces).
        2:2 HUBTLB_ONLY => hubtlb_only: bool,
        5:3 REPLAY => replay: InvalidateReplay,
        /// Order after outstanding system-memory traffic (RM: on PTE downgrades).
        6:6 SYS_MEMBAR => sys_membar: bool,
        8:7 ACK => ack: InvalidateAck,
        26:24 CACHE_LEVEL => cache_level: InvalidateCacheLevel,
        31:31 TRIGGER => trigger: bool,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vf_registers_sit_where_rm_writes_them() {
        assert_eq!(VF_BASE, 0x00B8_0000);
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE::address(VF_BASE), 0x00B8_30B0);
        let v = NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE::default()
            .with(NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE::ALL_VA, true)
            .with(NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE::ACK, InvalidateAck::Globally)
            .with(NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE::TRIGGER, true);
        assert_eq!(v.raw(), 0x8000_0081);
        assert_eq!(InvalidateReplay::from_raw(7), None);
    }
}
