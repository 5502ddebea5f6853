//! The TLB invalidate and MMU fault buffer registers of the "virtual function" register space.
//! The invalidate registers are the path RM uses on Turing and later
//! (`kgmmuCommitTlbInvalidate_TU102`, `kgmmuSetPdbToInvalidate_TU102`,
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

// ---------------------------------------------------------------------------------------------
// The MMU fault buffers (index 0 non-replayable, 1 replayable).
//
// `dev_vm.h` gives the VF addresses of the five registers and the fields of GET and PUT; it does
// not spell out LO, HI and SIZE. UVM programs and reads the VF registers on Turing and later with
// the field layouts of Volta's `NV_PFB_PRI_MMU_FAULT_BUFFER_*` (`kernel-open/nvidia-uvm/hwref/
// volta/gv100/dev_fb.h`, included by `uvm_volta_fault_buffer.c`), and the prefetch filter with
// Pascal's `NV_PFB_PRI_MMU_PAGE_FAULT_CTRL_PRF_FILTER` (`hwref/pascal/gp100/dev_fb.h`, used by
// `uvm_pascal_mmu.c` on the `pPrefetchCtrl` RM hands out, which is the VF `PAGE_FAULT_CTRL` of
// `kgmmuGetFaultRegisterMappings_TU102`). Those layouts are declared as views below, under their
// own names, and the VF registers convert to them.

constants! {
    /// Facts of the fault buffer registers' indices and named values.
    pub const FAULT_BUFFER_CONSTANT_FACTS;

    /// Index of the non-replayable fault buffer in the register arrays.
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_NON_REPLAY_FAULT_BUFFER: u32 = 0 in headers::TU102_DEV_VM;
    /// Index of the replayable fault buffer (the one UVM services).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_REPLAY_FAULT_BUFFER: u32 = 1 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_LO__SIZE_1: u32 = 2 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_HI__SIZE_1: u32 = 2 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET__SIZE_1: u32 = 2 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT__SIZE_1: u32 = 2 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE__SIZE_1: u32 = 2 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET_PTR_RESET: u32 = 0x00000000 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET_GETPTR_CORRUPTED_NO: u32 = 0x00000000 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET_GETPTR_CORRUPTED_YES: u32 = 0x00000001 in headers::TU102_DEV_VM;
    /// Writing 1 clears the corrupted-GET condition (write-one-to-clear).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET_GETPTR_CORRUPTED_CLEAR: u32 = 0x00000001 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET_OVERFLOW_NO: u32 = 0x00000000 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET_OVERFLOW_YES: u32 = 0x00000001 in headers::TU102_DEV_VM;
    /// Writing 1 clears the overflow condition (write-one-to-clear).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET_OVERFLOW_CLEAR: u32 = 0x00000001 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT_PTR_RESET: u32 = 0x00000000 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT_GETPTR_CORRUPTED_NO: u32 = 0x00000000 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT_GETPTR_CORRUPTED_YES: u32 = 0x00000001 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT_OVERFLOW_NO: u32 = 0x00000000 in headers::TU102_DEV_VM;
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT_OVERFLOW_YES: u32 = 0x00000001 in headers::TU102_DEV_VM;
}

registers! {
    /// Facts of the fault buffer registers.
    pub const FAULT_BUFFER_FACTS;

    /// Buffer address, low word (layout: [`NV_PFB_PRI_MMU_FAULT_BUFFER_LO`]).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_LO(base + 0x00003000, stride 32) in headers::TU102_DEV_VM {}
    /// Buffer address, high word (layout: [`NV_PFB_PRI_MMU_FAULT_BUFFER_HI`]).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_HI(base + 0x00003004, stride 32) in headers::TU102_DEV_VM {}
    /// The consumer index, written by software.
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET(base + 0x00003008, stride 32) in headers::TU102_DEV_VM {
        /// Next entry software will read.
        19:0 PTR => ptr: u32,
        /// Hardware found GET out of range; write 1 to clear.
        30:30 GETPTR_CORRUPTED => getptr_corrupted: bool,
        /// A fault was dropped because the buffer was full; write 1 to clear.
        31:31 OVERFLOW => overflow: bool,
    }
    /// The producer index, written by hardware (read-only).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT(base + 0x0000300C, stride 32) in headers::TU102_DEV_VM {
        /// Next entry hardware will write.
        19:0 PTR => ptr: u32,
        30:30 GETPTR_CORRUPTED => getptr_corrupted: bool,
        31:31 OVERFLOW => overflow: bool,
    }
    /// Entry count and enables (layout: [`NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE`]).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE(base + 0x00003010, stride 32) in headers::TU102_DEV_VM {}
    /// Which faults the MMU reports (layout: [`NV_PFB_PRI_MMU_PAGE_FAULT_CTRL`]).
    pub NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL(base + 0x00003070) in headers::TU102_DEV_VM {}
}

field_values! {
    /// Whether the buffer address is virtual or physical.
    pub enum FaultBufferAddrMode: NV_PFB_PRI_MMU_FAULT_BUFFER_LO_ADDR_MODE in headers::GV100_UVM_DEV_FB {
        Virtual = 0x0 => VIRTUAL,
        Physical = 0x1 => PHYSICAL,
    }
}

field_values! {
    /// Where a physically addressed fault buffer lives.
    pub enum FaultBufferAperture: NV_PFB_PRI_MMU_FAULT_BUFFER_LO_PHYS_APERTURE in headers::GV100_UVM_DEV_FB {
        Local = 0x0 => LOCAL,
        SysCoh = 0x2 => SYS_COH,
        SysNcoh = 0x3 => SYS_NCOH,
    }
}

field_values! {
    /// Which prefetch faults reach the buffer.
    pub enum PrfFilter: NV_PFB_PRI_MMU_PAGE_FAULT_CTRL_PRF_FILTER in headers::GP100_UVM_DEV_FB {
        /// Every prefetch fault is reported.
        SendAll = 0x0 => SEND_ALL,
        /// Prefetch faults are dropped (UVM's "disable prefetch faults").
        SendNone = 0x3 => SEND_NONE,
    }
}

registers! {
    /// Facts of the fault buffer field layouts UVM applies to the VF registers.
    pub const FAULT_BUFFER_LAYOUT_FACTS;

    /// `..._FAULT_BUFFER_LO` value layout.
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_LO(view) in headers::GV100_UVM_DEV_FB {
        0:0 ADDR_MODE => addr_mode: FaultBufferAddrMode,
        2:1 PHYS_APERTURE => phys_aperture: FaultBufferAperture,
        3:3 PHYS_VOL => phys_vol: bool,
        /// Buffer address bits 31:12.
        31:12 ADDR => addr: u32,
    }
    /// `..._FAULT_BUFFER_HI` value layout: address bits 63:32.
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_HI(view) in headers::GV100_UVM_DEV_FB {
        31:0 ADDR => addr: u32,
    }
    /// `..._FAULT_BUFFER_SIZE` value layout.
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE(view) in headers::GV100_UVM_DEV_FB {
        /// Number of 32-byte entries.
        19:0 VAL => val: u32,
        /// Raise an interrupt on overflow.
        29:29 OVERFLOW_INTR => overflow_intr: bool,
        /// Let hardware pick its default size.
        30:30 SET_DEFAULT => set_default: bool,
        31:31 ENABLE => enable: bool,
    }
    /// `..._PAGE_FAULT_CTRL` value layout.
    pub NV_PFB_PRI_MMU_PAGE_FAULT_CTRL(view) in headers::GP100_UVM_DEV_FB {
        1:0 PRF_FILTER => prf_filter: PrfFilter,
    }
}

constants! {
    /// Named values of the one-bit SIZE fields.
    pub const FAULT_BUFFER_LAYOUT_CONSTANT_FACTS;

    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE_VAL_RESET: u32 = 0x00000000 in headers::GV100_UVM_DEV_FB;
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE_OVERFLOW_INTR_DISABLE: u32 = 0x00000000 in headers::GV100_UVM_DEV_FB;
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE_OVERFLOW_INTR_ENABLE: u32 = 0x00000001 in headers::GV100_UVM_DEV_FB;
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE_SET_DEFAULT_NO: u32 = 0x00000000 in headers::GV100_UVM_DEV_FB;
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE_SET_DEFAULT_YES: u32 = 0x00000001 in headers::GV100_UVM_DEV_FB;
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE_ENABLE_FALSE: u32 = 0x00000000 in headers::GV100_UVM_DEV_FB;
    pub NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE_ENABLE_TRUE: u32 = 0x00000001 in headers::GV100_UVM_DEV_FB;
}

macro_rules! layout_of {
    ($($vf:ident => $layout:ident),* $(,)?) => {$(
        impl $vf {
            /// The value seen through the field layout UVM uses for it.
            pub const fn fields(self) -> $layout {
                $layout(self.0)
            }
        }
        impl From<$layout> for $vf {
            fn from(value: $layout) -> Self {
                $vf(value.0)
            }
        }
    )*};
}
layout_of! {
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_LO => NV_PFB_PRI_MMU_FAULT_BUFFER_LO,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_HI => NV_PFB_PRI_MMU_FAULT_BUFFER_HI,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE => NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL => NV_PFB_PRI_MMU_PAGE_FAULT_CTRL,
}

/// BAR0 offset of `NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET(index)` for the physical function.
pub const fn fault_buffer_get_offset(index: u32) -> u32 {
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET::address(VF_BASE, index)
}

/// BAR0 offset of `NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT(index)` for the physical function.
pub const fn fault_buffer_put_offset(index: u32) -> u32 {
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT::address(VF_BASE, index)
}

/// Hopper's `dev_vm.h` lists only `PAGE_FAULT_CTRL` of these, at the Turing offset.
pub mod gh100 {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of Hopper's `dev_vm.h` this module relies on.
        pub const FACTS;

        pub NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL: u32 = 0x00003070 in headers::GH100_DEV_VM;
    }

    const _: () = assert!(
        NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL == super::NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL::OFFSET
    );
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

    #[test]
    fn replayable_fault_buffer_registers_sit_where_uvm_reads_them() {
        let replay = NV_VIRTUAL_FUNCTION_PRIV_MMU_REPLAY_FAULT_BUFFER;
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_LO::address(VF_BASE, replay), 0x00B8_3020);
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_HI::address(VF_BASE, replay), 0x00B8_3024);
        assert_eq!(fault_buffer_get_offset(replay), 0x00B8_3028);
        assert_eq!(fault_buffer_put_offset(replay), 0x00B8_302C);
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE::address(VF_BASE, replay), 0x00B8_3030);
        assert_eq!(fault_buffer_get_offset(NV_VIRTUAL_FUNCTION_PRIV_MMU_NON_REPLAY_FAULT_BUFFER), 0x00B8_3008);
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL::address(VF_BASE), 0x00B8_3070);
    }

    #[test]
    fn fault_buffer_values_encode_as_the_layouts_say() {
        let clear = NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET::default()
            .with(NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET::PTR, 0xF_FFFF)
            .with(NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET::GETPTR_CORRUPTED, true)
            .with(NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET::OVERFLOW, true);
        assert_eq!(clear.raw(), 0xC00F_FFFF);
        let put = NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT(0x8000_0123);
        assert_eq!((put.ptr(), put.overflow(), put.getptr_corrupted()), (0x123, true, false));

        let size = NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE::default()
            .with(NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE::VAL, 8192)
            .with(NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE::ENABLE, true);
        let vf = NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE::from(size);
        assert_eq!(vf.raw(), 0x8000_2000);
        assert_eq!(vf.fields().val(), 8192);
        assert!(!vf.fields().overflow_intr() && !vf.fields().set_default());

        let lo = NV_PFB_PRI_MMU_FAULT_BUFFER_LO::default()
            .with(NV_PFB_PRI_MMU_FAULT_BUFFER_LO::ADDR_MODE, FaultBufferAddrMode::Physical)
            .with(NV_PFB_PRI_MMU_FAULT_BUFFER_LO::PHYS_APERTURE, FaultBufferAperture::SysNcoh)
            .with(NV_PFB_PRI_MMU_FAULT_BUFFER_LO::PHYS_VOL, true)
            .with(NV_PFB_PRI_MMU_FAULT_BUFFER_LO::ADDR, 0x12345);
        assert_eq!(lo.raw(), 0x1234_500F);
        assert_eq!(NV_PFB_PRI_MMU_FAULT_BUFFER_LO(0x4).phys_aperture(), Ok(FaultBufferAperture::SysCoh));
        assert!(NV_PFB_PRI_MMU_FAULT_BUFFER_LO(0x2).phys_aperture().is_err());

        let ctrl = NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL(0xFFFF_FFFC).fields();
        assert_eq!(ctrl.with(NV_PFB_PRI_MMU_PAGE_FAULT_CTRL::PRF_FILTER, PrfFilter::SendNone).raw(), 0xFFFF_FFFF);
        assert_eq!(ctrl.prf_filter(), Ok(PrfFilter::SendAll));
    }
}
