//! Host (PBDMA) formats of the GPFIFO channel classes: the pushbuffer method header, the GPFIFO
//! entry, and the host methods the driver pushes (semaphores, `SET_OBJECT`).
//!
//! Sources (535.261.03, `src/common/sdk/nvidia/inc/class/`): `clc46f.h` (TURING_CHANNEL_GPFIFO_A)
//! is declared in full; `clc56f.h` (AMPERE_CHANNEL_GPFIFO_A) and `clc86f.h`
//! (HOPPER_CHANNEL_GPFIFO_A) repeat the same layout under their own prefixes, and the facts of
//! [`ampere`] and [`hopper`] pin each of their fields, which the `const` checks below compare
//! with Turing's. One difference: Hopper widens `SEM_ADDR_HI_OFFSET` to `24:0` (a 57-bit
//! semaphore address, against 40 bits before). `clc86f.h` defines no `NVC86F_DMA_*` names; the
//! pushbuffer format is the one of `clc46f.h`/`clc56f.h` (dev_ram.ref "FIFO DMA RAM").
//!
//! Several header values are spelled with a leading digit (`PAYLOAD_SIZE_32BIT`), which cannot be
//! an enum variant's suffix in [`field_values!`](crate::field_values), so the one-bit `SEM_EXECUTE`
//! fields are `bool`s and their named values are plain [`constants!`] facts.

use super::headers;
use crate::{constants, field_values, registers};

// ---------------------------------------------------------------------------------------------
// Pushbuffer method header ("dma method formats").

field_values! {
    /// `NVC46F_DMA_SEC_OP`: what kind of method header a pushbuffer word is.
    pub enum DmaSecOp: NVC46F_DMA_SEC_OP in headers::CLC46F {
        /// Uses `NVC46F_DMA_TERT_OP` (sub-device masks; the all-zero word is `NVC46F_DMA_NOP`).
        Grp0UseTert = 0x0 => GRP0_USE_TERT,
        /// Incrementing: data word `i` goes to method `address + 4*i`.
        IncMethod = 0x1 => INC_METHOD,
        /// Uses `NVC46F_DMA_TERT_OP` (group 2).
        Grp2UseTert = 0x2 => GRP2_USE_TERT,
        /// Non-incrementing: every data word goes to the same method.
        NonIncMethod = 0x3 => NON_INC_METHOD,
        /// Immediate: the 13-bit data is in the header itself, no data word follows.
        ImmdDataMethod = 0x4 => IMMD_DATA_METHOD,
        /// Increment once: the first data word goes to `address`, the rest to `address + 4`.
        OneInc = 0x5 => ONE_INC,
        Reserved6 = 0x6 => RESERVED6,
        /// Ends the pushbuffer segment.
        EndPbSegment = 0x7 => END_PB_SEGMENT,
    }
}

registers! {
    /// Facts of the pushbuffer method header.
    pub const DMA_FACTS;

    /// A pushbuffer method header word (`NVC46F_DMA_*`). The address is in 4-byte units.
    pub NVC46F_DMA(view) in headers::CLC46F {
        /// Method address, in dwords (`method_byte_offset >> 2`).
        11:0 METHOD_ADDRESS => method_address: u16,
        /// Subchannel the method goes to.
        15:13 METHOD_SUBCHANNEL => method_subchannel: u8,
        /// Number of data words that follow.
        28:16 METHOD_COUNT => method_count: u16,
        /// Immediate data (same bits as the count, for `IMMD_DATA_METHOD`).
        28:16 IMMD_DATA => immd_data: u16,
        /// Header kind.
        31:29 SEC_OP => sec_op: DmaSecOp,
    }
}

constants! {
    /// Facts of the pushbuffer format's named numbers.
    pub const DMA_CONSTANT_FACTS;

    /// Subchannels per channel (`0..8`).
    pub NVC46F_NUMBER_OF_SUBCHANNELS: u32 = 8 in headers::CLC46F;
    /// The no-operation pushbuffer word.
    pub NVC46F_DMA_NOP: u32 = 0x00000000 in headers::CLC46F;
    /// `SEC_OP` of an incrementing method (the `NVC46F_DMA_INCR_*` format).
    pub NVC46F_DMA_INCR_OPCODE_VALUE: u32 = 0x00000001 in headers::CLC46F;
    pub NVC46F_DMA_NONINCR_OPCODE_VALUE: u32 = 0x00000003 in headers::CLC46F;
    pub NVC46F_DMA_ONEINCR_OPCODE_VALUE: u32 = 0x00000005 in headers::CLC46F;
    pub NVC46F_DMA_IMMD_OPCODE_VALUE: u32 = 0x00000004 in headers::CLC46F;
    /// Per-format field names: the same bits as [`NVC46F_DMA`]'s.
    pub NVC46F_DMA_INCR_ADDRESS: Range = 11:0 in headers::CLC46F;
    pub NVC46F_DMA_INCR_SUBCHANNEL: Range = 15:13 in headers::CLC46F;
    pub NVC46F_DMA_INCR_COUNT: Range = 28:16 in headers::CLC46F;
    pub NVC46F_DMA_INCR_OPCODE: Range = 31:29 in headers::CLC46F;
    pub NVC46F_DMA_NONINCR_ADDRESS: Range = 11:0 in headers::CLC46F;
    pub NVC46F_DMA_NONINCR_SUBCHANNEL: Range = 15:13 in headers::CLC46F;
    pub NVC46F_DMA_NONINCR_COUNT: Range = 28:16 in headers::CLC46F;
    pub NVC46F_DMA_NONINCR_OPCODE: Range = 31:29 in headers::CLC46F;
    pub NVC46F_DMA_ONEINCR_ADDRESS: Range = 11:0 in headers::CLC46F;
    pub NVC46F_DMA_ONEINCR_SUBCHANNEL: Range = 15:13 in headers::CLC46F;
    pub NVC46F_DMA_ONEINCR_COUNT: Range = 28:16 in headers::CLC46F;
    pub NVC46F_DMA_ONEINCR_OPCODE: Range = 31:29 in headers::CLC46F;
    pub NVC46F_DMA_IMMD_ADDRESS: Range = 11:0 in headers::CLC46F;
    pub NVC46F_DMA_IMMD_SUBCHANNEL: Range = 15:13 in headers::CLC46F;
    pub NVC46F_DMA_IMMD_OPCODE: Range = 31:29 in headers::CLC46F;
}

// ---------------------------------------------------------------------------------------------
// GPFIFO entry ("GPFIFO entry format").

field_values! {
    /// `NVC46F_GP_ENTRY0_FETCH`.
    pub enum GpFetch: NVC46F_GP_ENTRY0_FETCH in headers::CLC46F {
        Unconditional = 0x0 => UNCONDITIONAL,
        Conditional = 0x1 => CONDITIONAL,
    }
}

field_values! {
    /// `NVC46F_GP_ENTRY1_LEVEL`.
    pub enum GpLevel: NVC46F_GP_ENTRY1_LEVEL in headers::CLC46F {
        Main = 0x0 => MAIN,
        Subroutine = 0x1 => SUBROUTINE,
    }
}

field_values! {
    /// `NVC46F_GP_ENTRY1_SYNC`: whether host waits for the previous segment's methods to finish.
    pub enum GpSync: NVC46F_GP_ENTRY1_SYNC in headers::CLC46F {
        Proceed = 0x0 => PROCEED,
        Wait = 0x1 => WAIT,
    }
}

field_values! {
    /// `NVC46F_GP_ENTRY1_OPCODE`: a control entry's operation (only when `LENGTH` is 0).
    pub enum GpOpcode: NVC46F_GP_ENTRY1_OPCODE in headers::CLC46F {
        Nop = 0x0 => NOP,
        Illegal = 0x1 => ILLEGAL,
        GpCrc = 0x2 => GP_CRC,
        PbCrc = 0x3 => PB_CRC,
    }
}

registers! {
    /// Facts of the GPFIFO entry.
    pub const GP_ENTRY_FACTS;

    /// GPFIFO entry, low word.
    pub NVC46F_GP_ENTRY0(view) in headers::CLC46F {
        0:0 FETCH => fetch: GpFetch,
        /// Pushbuffer segment address bits 31:2 (in 4-byte units).
        31:2 GET => get_lo: u32,
        /// The whole word, for control entries.
        31:0 OPERAND => operand: u32,
    }

    /// GPFIFO entry, high word.
    pub NVC46F_GP_ENTRY1(view) in headers::CLC46F {
        /// Pushbuffer segment address bits 39:32.
        7:0 GET_HI => get_hi: u8,
        9:9 LEVEL => level: GpLevel,
        /// Segment length in dwords; 0 makes the entry a control entry (see `OPCODE`).
        30:10 LENGTH => length: u32,
        31:31 SYNC => sync: GpSync,
        /// Control entry operation (overlaps `GET_HI`).
        7:0 OPCODE => opcode: GpOpcode,
    }
}

constants! {
    /// Facts of the GPFIFO entry's size.
    pub const GP_ENTRY_CONSTANT_FACTS;

    /// Bytes per GPFIFO entry.
    pub NVC46F_GP_ENTRY__SIZE: u32 = 8 in headers::CLC46F;
}

// ---------------------------------------------------------------------------------------------
// Host methods.

/// Host method offsets (bytes), as pushed with subchannel-relative method headers.
///
/// They live in their own module because [`NVC46F_SEM_EXECUTE`] and friends, in the parent, are
/// the layouts of these methods' data words under the same NVIDIA names.
pub mod method {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of the host method offsets.
        pub const FACTS;

        /// Binds a class to the subchannel.
        pub NVC46F_SET_OBJECT: u32 = 0x00000000 in headers::CLC46F;
        /// No operation (its data is ignored).
        pub NVC46F_NOP: u32 = 0x00000008 in headers::CLC46F;
        /// Raises the channel's non-stalling interrupt.
        pub NVC46F_NON_STALL_INTERRUPT: u32 = 0x00000020 in headers::CLC46F;
        /// Memory operations (TLB invalidation, cache flushes): four words, executed on `MEM_OP_D`.
        pub NVC46F_MEM_OP_A: u32 = 0x00000028 in headers::CLC46F;
        pub NVC46F_MEM_OP_B: u32 = 0x0000002c in headers::CLC46F;
        pub NVC46F_MEM_OP_C: u32 = 0x00000030 in headers::CLC46F;
        pub NVC46F_MEM_OP_D: u32 = 0x00000034 in headers::CLC46F;
        /// The channel's reference count (read back from USERD `Ref`).
        pub NVC46F_SET_REFERENCE: u32 = 0x00000050 in headers::CLC46F;
        /// Wait for idle: later methods wait until earlier work finished.
        pub NVC46F_WFI: u32 = 0x00000078 in headers::CLC46F;
        /// Semaphore address bits 31:2.
        pub NVC46F_SEM_ADDR_LO: u32 = 0x0000005c in headers::CLC46F;
        /// Semaphore address high bits.
        pub NVC46F_SEM_ADDR_HI: u32 = 0x00000060 in headers::CLC46F;
        pub NVC46F_SEM_PAYLOAD_LO: u32 = 0x00000064 in headers::CLC46F;
        pub NVC46F_SEM_PAYLOAD_HI: u32 = 0x00000068 in headers::CLC46F;
        /// Performs the semaphore operation described by the data word.
        pub NVC46F_SEM_EXECUTE: u32 = 0x0000006c in headers::CLC46F;
    }
}

field_values! {
    /// `NVC46F_SEM_EXECUTE_OPERATION`.
    pub enum SemOperation: NVC46F_SEM_EXECUTE_OPERATION in headers::CLC46F {
        /// Wait until the semaphore equals the payload.
        Acquire = 0x0 => ACQUIRE,
        /// Write the payload.
        Release = 0x1 => RELEASE,
        AcqStrictGeq = 0x2 => ACQ_STRICT_GEQ,
        /// Wait until the semaphore is >= the payload, with wrap-around.
        AcqCircGeq = 0x3 => ACQ_CIRC_GEQ,
        AcqAnd = 0x4 => ACQ_AND,
        AcqNor = 0x5 => ACQ_NOR,
        Reduction = 0x6 => REDUCTION,
    }
}

registers! {
    /// Facts of the host methods' data words.
    pub const METHOD_DATA_FACTS;

    /// `SET_OBJECT` data.
    pub NVC46F_SET_OBJECT(view) in headers::CLC46F {
        15:0 NVCLASS => nvclass: u16,
        20:16 ENGINE => engine: u8,
    }
    /// `SEM_ADDR_LO` data: address bits 31:2.
    pub NVC46F_SEM_ADDR_LO(view) in headers::CLC46F {
        31:2 OFFSET => offset: u32,
    }
    /// `SEM_ADDR_HI` data: address bits 39:32 (Turing, Ampere).
    pub NVC46F_SEM_ADDR_HI(view) in headers::CLC46F {
        7:0 OFFSET => offset: u8,
    }
    pub NVC46F_SEM_PAYLOAD_LO(view) in headers::CLC46F {
        31:0 PAYLOAD => payload: u32,
    }
    pub NVC46F_SEM_PAYLOAD_HI(view) in headers::CLC46F {
        31:0 PAYLOAD => payload: u32,
    }
    /// `SEM_EXECUTE` data.
    pub NVC46F_SEM_EXECUTE(view) in headers::CLC46F {
        2:0 OPERATION => operation: SemOperation,
        /// On a failed acquire, let the scheduler switch to another TSG.
        12:12 ACQUIRE_SWITCH_TSG => acquire_switch_tsg: bool,
        /// Wait for idle before releasing.
        20:20 RELEASE_WFI => release_wfi: bool,
        /// 64-bit payload (`PAYLOAD_HI:PAYLOAD_LO`) instead of 32-bit.
        24:24 PAYLOAD_SIZE => payload_size_64bit: bool,
        /// Release writes a 16-byte report with a timestamp.
        25:25 RELEASE_TIMESTAMP => release_timestamp: bool,
    }
}

constants! {
    /// Named values of the one-bit `SEM_EXECUTE` fields and `SET_OBJECT`.
    pub const METHOD_VALUE_FACTS;

    pub NVC46F_SET_OBJECT_ENGINE_SW: u32 = 0x0000001f in headers::CLC46F;
    /// `MEM_OP_D`'s operation field, and the two TLB invalidations it names.
    pub NVC46F_MEM_OP_D_OPERATION: Range = 31:27 in headers::CLC46F;
    pub NVC46F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE: u32 = 0x00000009 in headers::CLC46F;
    pub NVC46F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED: u32 = 0x0000000a in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_DIS: u32 = 0x00000000 in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG_EN: u32 = 0x00000001 in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_RELEASE_WFI_DIS: u32 = 0x00000000 in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_RELEASE_WFI_EN: u32 = 0x00000001 in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT: u32 = 0x00000000 in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_PAYLOAD_SIZE_64BIT: u32 = 0x00000001 in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_RELEASE_TIMESTAMP_DIS: u32 = 0x00000000 in headers::CLC46F;
    pub NVC46F_SEM_EXECUTE_RELEASE_TIMESTAMP_EN: u32 = 0x00000001 in headers::CLC46F;
}

// ---------------------------------------------------------------------------------------------
// MEM_OP data words for TLB invalidation, fault replay and fault cancel ("MEM_OP_A..D" of
// `clc46f.h`; UVM's `uvm_volta_host.c` pushes replays and precise cancels with them).

field_values! {
    /// `MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR`: a system membar after the invalidate.
    pub enum MemOpSysmembar: NVC46F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR in headers::CLC46F {
        En = 0x00000001 => EN,
        Dis = 0x00000000 => DIS,
    }
}

field_values! {
    /// `MEM_OP_C_TLB_INVALIDATE_PDB`: one address space (given in C/D) or all.
    pub enum TlbInvalidatePdb: NVC46F_MEM_OP_C_TLB_INVALIDATE_PDB in headers::CLC46F {
        One = 0x00000000 => ONE,
        All = 0x00000001 => ALL,
    }
}

field_values! {
    /// `MEM_OP_C_TLB_INVALIDATE_GPC`. Its bit (1:1) is [`NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC`],
    /// kept out of the fact tables: `ENABLE` is 0 here, which the conformance test's rule for
    /// one-bit `bool` fields would read as an inverted bool. The values are checked.
    pub enum TlbInvalidateGpc: NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC in headers::CLC46F {
        Enable = 0x00000000 => ENABLE,
        Disable = 0x00000001 => DISABLE,
    }
}

/// Bit range of `NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC` (`1:1`; see [`TlbInvalidateGpc`]).
pub const NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC: super::BitRange = super::BitRange::new(1, 1);

field_values! {
    /// `MEM_OP_C_TLB_INVALIDATE_REPLAY`: what happens to faulted accesses held in the uTLBs.
    pub enum TlbInvalidateReplay: NVC46F_MEM_OP_C_TLB_INVALIDATE_REPLAY in headers::CLC46F {
        None = 0x00000000 => NONE,
        /// Retry the faulted accesses.
        Start = 0x00000001 => START,
        /// Retry, and acknowledge every outstanding fault.
        StartAckAll = 0x00000002 => START_ACK_ALL,
        CancelTargeted = 0x00000003 => CANCEL_TARGETED,
        CancelGlobal = 0x00000004 => CANCEL_GLOBAL,
        /// Cancel the accesses to one VA (given in A/B) of one PDB, by access type and engine.
        CancelVaGlobal = 0x00000005 => CANCEL_VA_GLOBAL,
    }
}

field_values! {
    /// `MEM_OP_C_TLB_INVALIDATE_ACK_TYPE`.
    pub enum TlbInvalidateAckType: NVC46F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE in headers::CLC46F {
        None = 0x00000000 => NONE,
        Globally = 0x00000001 => GLOBALLY,
        Intranode = 0x00000002 => INTRANODE,
    }
}

field_values! {
    /// `MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE`: which accesses a `CANCEL_VA_GLOBAL` cancels
    /// (shares bits 9:7 with `PAGE_TABLE_LEVEL`).
    pub enum TlbInvalidateAccessType: NVC46F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE in headers::CLC46F {
        VirtRead = 0 => VIRT_READ,
        VirtWrite = 1 => VIRT_WRITE,
        VirtAtomicStrong = 2 => VIRT_ATOMIC_STRONG,
        VirtRsvrvd = 3 => VIRT_RSVRVD,
        VirtAtomicWeak = 4 => VIRT_ATOMIC_WEAK,
        VirtAtomicAll = 5 => VIRT_ATOMIC_ALL,
        /// Writes and atomics (a write to a read-only page).
        VirtWriteAndAtomic = 6 => VIRT_WRITE_AND_ATOMIC,
        /// Every access (an address with no valid mapping).
        VirtAll = 7 => VIRT_ALL,
    }
}

field_values! {
    /// `MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL`: the level invalidated, and all below it.
    pub enum TlbInvalidatePageTableLevel: NVC46F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL in headers::CLC46F {
        All = 0x00000000 => ALL,
        PteOnly = 0x00000001 => PTE_ONLY,
        UpToPde0 = 0x00000002 => UP_TO_PDE0,
        UpToPde1 = 0x00000003 => UP_TO_PDE1,
        UpToPde2 = 0x00000004 => UP_TO_PDE2,
        UpToPde3 = 0x00000005 => UP_TO_PDE3,
        UpToPde4 = 0x00000006 => UP_TO_PDE4,
        UpToPde5 = 0x00000007 => UP_TO_PDE5,
    }
}

field_values! {
    /// `MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE`.
    pub enum TlbInvalidatePdbAperture: NVC46F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE in headers::CLC46F {
        VidMem = 0x00000000 => VID_MEM,
        SysMemCoherent = 0x00000002 => SYS_MEM_COHERENT,
        SysMemNoncoherent = 0x00000003 => SYS_MEM_NONCOHERENT,
    }
}

field_values! {
    /// `MEM_OP_D_OPERATION`: what the MEM_OP sequence does (it runs on the write of `MEM_OP_D`).
    pub enum MemOpOperation: NVC46F_MEM_OP_D_OPERATION in headers::CLC46F {
        Membar = 0x00000005 => MEMBAR,
        MmuTlbInvalidate = 0x00000009 => MMU_TLB_INVALIDATE,
        MmuTlbInvalidateTargeted = 0x0000000a => MMU_TLB_INVALIDATE_TARGETED,
        L2PeermemInvalidate = 0x0000000d => L2_PEERMEM_INVALIDATE,
        L2SysmemInvalidate = 0x0000000e => L2_SYSMEM_INVALIDATE,
        L2CleanComptags = 0x0000000f => L2_CLEAN_COMPTAGS,
        L2FlushDirty = 0x00000010 => L2_FLUSH_DIRTY,
        L2WaitForSysPendingReads = 0x00000015 => L2_WAIT_FOR_SYS_PENDING_READS,
        AccessCounterClr = 0x00000016 => ACCESS_COUNTER_CLR,
    }
}

registers! {
    /// Facts of the MEM_OP data words.
    pub const MEM_OP_FACTS;

    /// `MEM_OP_A` data.
    pub NVC46F_MEM_OP_A(view) in headers::CLC46F {
        /// For `CANCEL_TARGETED`: the client within the GPC.
        5:0 TLB_INVALIDATE_CANCEL_TARGET_CLIENT_UNIT_ID => cancel_target_client_unit_id: u8,
        /// For ranged invalidates (not `CANCEL_TARGETED`).
        5:0 TLB_INVALIDATE_INVALIDATION_SIZE => invalidation_size: u8,
        /// For `CANCEL_TARGETED`: the GPC.
        10:6 TLB_INVALIDATE_CANCEL_TARGET_GPC_ID => cancel_target_gpc_id: u8,
        /// For `CANCEL_VA_GLOBAL`: the faulting MMU engine (7 bits before Hopper).
        6:0 TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID => cancel_mmu_engine_id: u8,
        11:11 TLB_INVALIDATE_SYSMEMBAR => sysmembar: MemOpSysmembar,
        /// Target VA bits 31:12.
        31:12 TLB_INVALIDATE_TARGET_ADDR_LO => target_addr_lo: u32,
    }
    /// `MEM_OP_B` data: target VA bits 63:32.
    pub NVC46F_MEM_OP_B(view) in headers::CLC46F {
        31:0 TLB_INVALIDATE_TARGET_ADDR_HI => target_addr_hi: u32,
    }
    /// `MEM_OP_C` data (TLB invalidate form; bit 1 is `TLB_INVALIDATE_GPC`, see
    /// [`TlbInvalidateGpc`]).
    pub NVC46F_MEM_OP_C(view) in headers::CLC46F {
        0:0 TLB_INVALIDATE_PDB => pdb: TlbInvalidatePdb,
        4:2 TLB_INVALIDATE_REPLAY => replay: TlbInvalidateReplay,
        6:5 TLB_INVALIDATE_ACK_TYPE => ack_type: TlbInvalidateAckType,
        9:7 TLB_INVALIDATE_ACCESS_TYPE => access_type: TlbInvalidateAccessType,
        9:7 TLB_INVALIDATE_PAGE_TABLE_LEVEL => page_table_level: TlbInvalidatePageTableLevel,
        11:10 TLB_INVALIDATE_PDB_APERTURE => pdb_aperture: TlbInvalidatePdbAperture,
        /// PDB address bits 31:12 (PDB address >> 12, low 20 bits).
        31:12 TLB_INVALIDATE_PDB_ADDR_LO => pdb_addr_lo: u32,
    }
    /// `MEM_OP_D` data.
    pub NVC46F_MEM_OP_D(view) in headers::CLC46F {
        /// PDB address >> 32 (the bits above `PDB_ADDR_LO`).
        26:0 TLB_INVALIDATE_PDB_ADDR_HI => pdb_addr_hi: u32,
        31:27 OPERATION => operation: MemOpOperation,
    }
}

/// The GPC field's value facts (its range is [`NVC46F_MEM_OP_C_TLB_INVALIDATE_GPC`]).
pub const MEM_OP_GPC_VALUE_FACTS: &[super::FactGroup] = &[&[<TlbInvalidateGpc as super::FieldType>::VALUE_FACTS]];

// ---------------------------------------------------------------------------------------------
// The same layout in the later classes.

/// AMPERE_CHANNEL_GPFIFO_A (`clc56f.h`): the same fields as Turing, each checked below.
pub mod ampere {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of `clc56f.h` the driver relies on.
        pub const FACTS;

        pub NVC56F_DMA_METHOD_ADDRESS: Range = 11:0 in headers::CLC56F;
        pub NVC56F_DMA_METHOD_SUBCHANNEL: Range = 15:13 in headers::CLC56F;
        pub NVC56F_DMA_METHOD_COUNT: Range = 28:16 in headers::CLC56F;
        pub NVC56F_DMA_IMMD_DATA: Range = 28:16 in headers::CLC56F;
        pub NVC56F_DMA_SEC_OP: Range = 31:29 in headers::CLC56F;
        pub NVC56F_DMA_SEC_OP_INC_METHOD: u32 = 0x00000001 in headers::CLC56F;
        pub NVC56F_DMA_SEC_OP_NON_INC_METHOD: u32 = 0x00000003 in headers::CLC56F;
        pub NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD: u32 = 0x00000004 in headers::CLC56F;
        pub NVC56F_DMA_SEC_OP_ONE_INC: u32 = 0x00000005 in headers::CLC56F;

        pub NVC56F_GP_ENTRY__SIZE: u32 = 8 in headers::CLC56F;
        pub NVC56F_GP_ENTRY0_FETCH: Range = 0:0 in headers::CLC56F;
        pub NVC56F_GP_ENTRY0_GET: Range = 31:2 in headers::CLC56F;
        pub NVC56F_GP_ENTRY1_GET_HI: Range = 7:0 in headers::CLC56F;
        pub NVC56F_GP_ENTRY1_LEVEL: Range = 9:9 in headers::CLC56F;
        pub NVC56F_GP_ENTRY1_LENGTH: Range = 30:10 in headers::CLC56F;
        pub NVC56F_GP_ENTRY1_SYNC: Range = 31:31 in headers::CLC56F;
        pub NVC56F_GP_ENTRY1_OPCODE: Range = 7:0 in headers::CLC56F;

        pub NVC56F_SEM_ADDR_LO: u32 = 0x0000005c in headers::CLC56F;
        pub NVC56F_SEM_ADDR_LO_OFFSET: Range = 31:2 in headers::CLC56F;
        pub NVC56F_SEM_ADDR_HI: u32 = 0x00000060 in headers::CLC56F;
        pub NVC56F_SEM_ADDR_HI_OFFSET: Range = 7:0 in headers::CLC56F;
        pub NVC56F_SEM_PAYLOAD_LO: u32 = 0x00000064 in headers::CLC56F;
        pub NVC56F_SEM_PAYLOAD_HI: u32 = 0x00000068 in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE: u32 = 0x0000006c in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE_OPERATION: Range = 2:0 in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE: u32 = 0x00000000 in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE_OPERATION_RELEASE: u32 = 0x00000001 in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG: Range = 12:12 in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE_RELEASE_WFI: Range = 20:20 in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE_PAYLOAD_SIZE: Range = 24:24 in headers::CLC56F;
        pub NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP: Range = 25:25 in headers::CLC56F;
    }

    constants! {
        /// Facts of `clc56f.h`'s MEM_OP fields the replay and cancel encoders use.
        pub const MEM_OP_FACTS;

        pub NVC56F_MEM_OP_A: u32 = 0x00000028 in headers::CLC56F;
        pub NVC56F_MEM_OP_B: u32 = 0x0000002c in headers::CLC56F;
        pub NVC56F_MEM_OP_C: u32 = 0x00000030 in headers::CLC56F;
        pub NVC56F_MEM_OP_D: u32 = 0x00000034 in headers::CLC56F;
        pub NVC56F_MEM_OP_A_TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID: Range = 6:0 in headers::CLC56F;
        pub NVC56F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR: Range = 11:11 in headers::CLC56F;
        pub NVC56F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR_DIS: u32 = 0x00000000 in headers::CLC56F;
        pub NVC56F_MEM_OP_A_TLB_INVALIDATE_TARGET_ADDR_LO: Range = 31:12 in headers::CLC56F;
        pub NVC56F_MEM_OP_B_TLB_INVALIDATE_TARGET_ADDR_HI: Range = 31:0 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB: Range = 0:0 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_ONE: u32 = 0x00000000 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_GPC_ENABLE: u32 = 0x00000000 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY: Range = 4:2 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START: u32 = 0x00000001 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START_ACK_ALL: u32 = 0x00000002 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY_CANCEL_VA_GLOBAL: u32 = 0x00000005 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE: Range = 6:5 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE_NONE: u32 = 0x00000000 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE: Range = 9:7 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_WRITE_AND_ATOMIC: u32 = 6 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ALL: u32 = 7 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL: Range = 9:7 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_PTE_ONLY: u32 = 0x00000001 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE: Range = 11:10 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_VID_MEM: u32 = 0x00000000 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_SYS_MEM_COHERENT: u32 = 0x00000002 in headers::CLC56F;
        pub NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_ADDR_LO: Range = 31:12 in headers::CLC56F;
        pub NVC56F_MEM_OP_D_TLB_INVALIDATE_PDB_ADDR_HI: Range = 26:0 in headers::CLC56F;
        pub NVC56F_MEM_OP_D_OPERATION: Range = 31:27 in headers::CLC56F;
        pub NVC56F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED: u32 = 0x0000000a in headers::CLC56F;
    }
}

/// HOPPER_CHANNEL_GPFIFO_A (`clc86f.h`): semaphores and GPFIFO entries (the header defines no
/// pushbuffer format names); `SEM_ADDR_HI_OFFSET` is wider than Turing's.
pub mod hopper {
    use super::headers;
    use crate::{constants, registers};

    constants! {
        /// Facts of `clc86f.h` the driver relies on.
        pub const FACTS;

        pub NVC86F_GP_ENTRY__SIZE: u32 = 8 in headers::CLC86F;
        pub NVC86F_GP_ENTRY0_FETCH: Range = 0:0 in headers::CLC86F;
        pub NVC86F_GP_ENTRY0_GET: Range = 31:2 in headers::CLC86F;
        pub NVC86F_GP_ENTRY1_GET_HI: Range = 7:0 in headers::CLC86F;
        pub NVC86F_GP_ENTRY1_LEVEL: Range = 9:9 in headers::CLC86F;
        pub NVC86F_GP_ENTRY1_LENGTH: Range = 30:10 in headers::CLC86F;
        pub NVC86F_GP_ENTRY1_SYNC: Range = 31:31 in headers::CLC86F;
        pub NVC86F_GP_ENTRY1_OPCODE: Range = 7:0 in headers::CLC86F;
        pub NVC86F_GP_ENTRY1_OPCODE_NOP: u32 = 0x00000000 in headers::CLC86F;

        pub NVC86F_SEM_ADDR_LO: u32 = 0x0000005c in headers::CLC86F;
        pub NVC86F_SEM_ADDR_LO_OFFSET: Range = 31:2 in headers::CLC86F;
        pub NVC86F_SEM_ADDR_HI: u32 = 0x00000060 in headers::CLC86F;
        /// 25 bits: semaphore addresses up to 57 bits.
        pub NVC86F_SEM_ADDR_HI_OFFSET: Range = 24:0 in headers::CLC86F;
        pub NVC86F_SEM_PAYLOAD_LO: u32 = 0x00000064 in headers::CLC86F;
        pub NVC86F_SEM_PAYLOAD_HI: u32 = 0x00000068 in headers::CLC86F;
        pub NVC86F_SEM_EXECUTE: u32 = 0x0000006c in headers::CLC86F;
        pub NVC86F_SEM_EXECUTE_OPERATION: Range = 2:0 in headers::CLC86F;
        pub NVC86F_SEM_EXECUTE_OPERATION_RELEASE: u32 = 0x00000001 in headers::CLC86F;
        pub NVC86F_SEM_EXECUTE_RELEASE_WFI: Range = 20:20 in headers::CLC86F;
        pub NVC86F_SEM_EXECUTE_PAYLOAD_SIZE: Range = 24:24 in headers::CLC86F;
        pub NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT: u32 = 0x00000000 in headers::CLC86F;
    }

    constants! {
        /// Facts of UVM's full `clc86f.h` (the SDK's copy has no MEM_OP fields): the same
        /// MEM_OP layout as Turing except `CANCEL_MMU_ENGINE_ID`, widened to 9 bits.
        pub const MEM_OP_FACTS;

        pub NVC86F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR: Range = 11:11 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR_DIS: u32 = 0x00000000 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_B_TLB_INVALIDATE_TARGET_ADDR_HI: Range = 31:0 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB: Range = 0:0 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_ONE: u32 = 0x00000000 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_GPC_ENABLE: u32 = 0x00000000 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY: Range = 4:2 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START: u32 = 0x00000001 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START_ACK_ALL: u32 = 0x00000002 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_CANCEL_VA_GLOBAL: u32 = 0x00000005 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE: Range = 6:5 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE_NONE: u32 = 0x00000000 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE: Range = 9:7 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_WRITE_AND_ATOMIC: u32 = 6 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ALL: u32 = 7 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL: Range = 9:7 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_PTE_ONLY: u32 = 0x00000001 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE: Range = 11:10 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_VID_MEM: u32 = 0x00000000 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_SYS_MEM_COHERENT: u32 = 0x00000002 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_ADDR_LO: Range = 31:12 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_D_TLB_INVALIDATE_PDB_ADDR_HI: Range = 26:0 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_D_OPERATION: Range = 31:27 in headers::UVM_CLC86F;
        pub NVC86F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED: u32 = 0x0000000a in headers::UVM_CLC86F;
    }

    /// Hopper's MEM_OP method offsets (their own module: [`NVC86F_MEM_OP_A`] is the data layout).
    pub mod mem_op {
        use super::headers;
        use crate::constants;

        constants! {
            /// Facts of Hopper's MEM_OP method offsets.
            pub const FACTS;

            pub NVC86F_MEM_OP_A: u32 = 0x00000028 in headers::UVM_CLC86F;
            pub NVC86F_MEM_OP_B: u32 = 0x0000002c in headers::UVM_CLC86F;
            pub NVC86F_MEM_OP_C: u32 = 0x00000030 in headers::UVM_CLC86F;
            pub NVC86F_MEM_OP_D: u32 = 0x00000034 in headers::UVM_CLC86F;
        }
    }

    registers! {
        /// Facts of Hopper's `MEM_OP_A`, whose engine id field differs from Turing's.
        pub const MEM_OP_A_FACTS;

        /// `MEM_OP_A` data, Hopper.
        pub NVC86F_MEM_OP_A(view) in headers::UVM_CLC86F {
            /// For `CANCEL_VA_GLOBAL`: the faulting MMU engine (9 bits: Hopper's ids reach 384+).
            8:0 TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID => cancel_mmu_engine_id: u16,
            31:12 TLB_INVALIDATE_TARGET_ADDR_LO => target_addr_lo: u32,
        }
    }
}

constants! {
    /// Where a channel's memory must sit: an instance block is `NV_RAMIN_ALLOC_SIZE` bytes (RM
    /// allocates and describes it so, `kernel_fifo_gm107.c`), USERD is aligned to
    /// `1 << NV_RAMUSERD_BASE_SHIFT` (`kfifoGetUserdSizeAlign_GM107`).
    pub const RAM_FACTS;

    pub NV_RAMIN_ALLOC_SIZE: u32 = 4096 in headers::GA100_DEV_RAM;
    pub NV_RAMUSERD_BASE_SHIFT: u32 = 9 in headers::GM107_DEV_RAM;
}

/// Every fact table of this module (each one goes into [`super::FACT_TABLES`]).
pub const FACT_TABLES: &[&[super::FactGroup]] = &[
    RAM_FACTS,
    DMA_FACTS,
    DMA_CONSTANT_FACTS,
    GP_ENTRY_FACTS,
    GP_ENTRY_CONSTANT_FACTS,
    method::FACTS,
    METHOD_DATA_FACTS,
    METHOD_VALUE_FACTS,
    ampere::FACTS,
    hopper::FACTS,
    MEM_OP_FACTS,
    MEM_OP_GPC_VALUE_FACTS,
    ampere::MEM_OP_FACTS,
    hopper::MEM_OP_FACTS,
    hopper::MEM_OP_A_FACTS,
    hopper::mem_op::FACTS,
];

// The later classes keep Turing's layout, field by field (Hopper's SEM_ADDR_HI aside).
const fn same<R, T>(field: super::Field<R, T>, range: super::UnitRange) -> bool {
    field.bits.hi as u32 == range.last && field.bits.lo as u32 == range.first
}

const _: () = {
    use ampere::*;
    use hopper::*;
    assert!(same(NVC46F_DMA::METHOD_ADDRESS, NVC56F_DMA_METHOD_ADDRESS));
    assert!(same(NVC46F_DMA::METHOD_ADDRESS, NVC46F_DMA_INCR_ADDRESS));
    assert!(same(NVC46F_DMA::METHOD_ADDRESS, NVC46F_DMA_NONINCR_ADDRESS));
    assert!(same(NVC46F_DMA::METHOD_ADDRESS, NVC46F_DMA_ONEINCR_ADDRESS));
    assert!(same(NVC46F_DMA::METHOD_ADDRESS, NVC46F_DMA_IMMD_ADDRESS));
    assert!(same(NVC46F_DMA::METHOD_SUBCHANNEL, NVC56F_DMA_METHOD_SUBCHANNEL));
    assert!(same(NVC46F_DMA::METHOD_SUBCHANNEL, NVC46F_DMA_INCR_SUBCHANNEL));
    assert!(same(NVC46F_DMA::METHOD_SUBCHANNEL, NVC46F_DMA_NONINCR_SUBCHANNEL));
    assert!(same(NVC46F_DMA::METHOD_SUBCHANNEL, NVC46F_DMA_ONEINCR_SUBCHANNEL));
    assert!(same(NVC46F_DMA::METHOD_SUBCHANNEL, NVC46F_DMA_IMMD_SUBCHANNEL));
    assert!(same(NVC46F_DMA::METHOD_COUNT, NVC56F_DMA_METHOD_COUNT));
    assert!(same(NVC46F_DMA::METHOD_COUNT, NVC46F_DMA_INCR_COUNT));
    assert!(same(NVC46F_DMA::METHOD_COUNT, NVC46F_DMA_NONINCR_COUNT));
    assert!(same(NVC46F_DMA::METHOD_COUNT, NVC46F_DMA_ONEINCR_COUNT));
    assert!(same(NVC46F_DMA::IMMD_DATA, NVC56F_DMA_IMMD_DATA));
    assert!(same(NVC46F_DMA::SEC_OP, NVC56F_DMA_SEC_OP));
    assert!(same(NVC46F_DMA::SEC_OP, NVC46F_DMA_INCR_OPCODE));
    assert!(same(NVC46F_DMA::SEC_OP, NVC46F_DMA_NONINCR_OPCODE));
    assert!(same(NVC46F_DMA::SEC_OP, NVC46F_DMA_ONEINCR_OPCODE));
    assert!(same(NVC46F_DMA::SEC_OP, NVC46F_DMA_IMMD_OPCODE));
    assert!(DmaSecOp::IncMethod as u32 == NVC46F_DMA_INCR_OPCODE_VALUE);
    assert!(DmaSecOp::IncMethod as u32 == NVC56F_DMA_SEC_OP_INC_METHOD);
    assert!(DmaSecOp::NonIncMethod as u32 == NVC46F_DMA_NONINCR_OPCODE_VALUE);
    assert!(DmaSecOp::NonIncMethod as u32 == NVC56F_DMA_SEC_OP_NON_INC_METHOD);
    assert!(DmaSecOp::ImmdDataMethod as u32 == NVC46F_DMA_IMMD_OPCODE_VALUE);
    assert!(DmaSecOp::ImmdDataMethod as u32 == NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD);
    assert!(DmaSecOp::OneInc as u32 == NVC46F_DMA_ONEINCR_OPCODE_VALUE);
    assert!(DmaSecOp::OneInc as u32 == NVC56F_DMA_SEC_OP_ONE_INC);

    assert!(NVC46F_GP_ENTRY__SIZE == NVC56F_GP_ENTRY__SIZE && NVC46F_GP_ENTRY__SIZE == NVC86F_GP_ENTRY__SIZE);
    assert!(
        same(NVC46F_GP_ENTRY0::FETCH, NVC56F_GP_ENTRY0_FETCH) && same(NVC46F_GP_ENTRY0::FETCH, NVC86F_GP_ENTRY0_FETCH)
    );
    assert!(same(NVC46F_GP_ENTRY0::GET, NVC56F_GP_ENTRY0_GET) && same(NVC46F_GP_ENTRY0::GET, NVC86F_GP_ENTRY0_GET));
    assert!(
        same(NVC46F_GP_ENTRY1::GET_HI, NVC56F_GP_ENTRY1_GET_HI)
            && same(NVC46F_GP_ENTRY1::GET_HI, NVC86F_GP_ENTRY1_GET_HI)
    );
    assert!(
        same(NVC46F_GP_ENTRY1::LEVEL, NVC56F_GP_ENTRY1_LEVEL) && same(NVC46F_GP_ENTRY1::LEVEL, NVC86F_GP_ENTRY1_LEVEL)
    );
    assert!(
        same(NVC46F_GP_ENTRY1::LENGTH, NVC56F_GP_ENTRY1_LENGTH)
            && same(NVC46F_GP_ENTRY1::LENGTH, NVC86F_GP_ENTRY1_LENGTH)
    );
    assert!(same(NVC46F_GP_ENTRY1::SYNC, NVC56F_GP_ENTRY1_SYNC) && same(NVC46F_GP_ENTRY1::SYNC, NVC86F_GP_ENTRY1_SYNC));
    assert!(
        same(NVC46F_GP_ENTRY1::OPCODE, NVC56F_GP_ENTRY1_OPCODE)
            && same(NVC46F_GP_ENTRY1::OPCODE, NVC86F_GP_ENTRY1_OPCODE)
    );
    assert!(GpOpcode::Nop as u32 == NVC86F_GP_ENTRY1_OPCODE_NOP);

    assert!(method::NVC46F_SEM_ADDR_LO == NVC56F_SEM_ADDR_LO && method::NVC46F_SEM_ADDR_LO == NVC86F_SEM_ADDR_LO);
    assert!(method::NVC46F_SEM_ADDR_HI == NVC56F_SEM_ADDR_HI && method::NVC46F_SEM_ADDR_HI == NVC86F_SEM_ADDR_HI);
    assert!(
        method::NVC46F_SEM_PAYLOAD_LO == NVC56F_SEM_PAYLOAD_LO
            && method::NVC46F_SEM_PAYLOAD_LO == NVC86F_SEM_PAYLOAD_LO
    );
    assert!(
        method::NVC46F_SEM_PAYLOAD_HI == NVC56F_SEM_PAYLOAD_HI
            && method::NVC46F_SEM_PAYLOAD_HI == NVC86F_SEM_PAYLOAD_HI
    );
    assert!(method::NVC46F_SEM_EXECUTE == NVC56F_SEM_EXECUTE && method::NVC46F_SEM_EXECUTE == NVC86F_SEM_EXECUTE);
    // The five semaphore methods are consecutive: one incrementing method writes them all.
    assert!(method::NVC46F_SEM_ADDR_HI == method::NVC46F_SEM_ADDR_LO + 4);
    assert!(method::NVC46F_SEM_PAYLOAD_LO == method::NVC46F_SEM_ADDR_LO + 8);
    assert!(method::NVC46F_SEM_PAYLOAD_HI == method::NVC46F_SEM_ADDR_LO + 12);
    assert!(method::NVC46F_SEM_EXECUTE == method::NVC46F_SEM_ADDR_LO + 16);
    assert!(
        same(NVC46F_SEM_ADDR_LO::OFFSET, NVC56F_SEM_ADDR_LO_OFFSET)
            && same(NVC46F_SEM_ADDR_LO::OFFSET, NVC86F_SEM_ADDR_LO_OFFSET)
    );
    assert!(same(NVC46F_SEM_ADDR_HI::OFFSET, NVC56F_SEM_ADDR_HI_OFFSET));
    assert!(NVC86F_SEM_ADDR_HI_OFFSET.first == 0);
    assert!(
        same(NVC46F_SEM_EXECUTE::OPERATION, NVC56F_SEM_EXECUTE_OPERATION)
            && same(NVC46F_SEM_EXECUTE::OPERATION, NVC86F_SEM_EXECUTE_OPERATION)
    );
    assert!(same(NVC46F_SEM_EXECUTE::ACQUIRE_SWITCH_TSG, NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG));
    assert!(
        same(NVC46F_SEM_EXECUTE::RELEASE_WFI, NVC56F_SEM_EXECUTE_RELEASE_WFI)
            && same(NVC46F_SEM_EXECUTE::RELEASE_WFI, NVC86F_SEM_EXECUTE_RELEASE_WFI)
    );
    assert!(
        same(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, NVC56F_SEM_EXECUTE_PAYLOAD_SIZE)
            && same(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, NVC86F_SEM_EXECUTE_PAYLOAD_SIZE)
    );
    assert!(same(NVC46F_SEM_EXECUTE::RELEASE_TIMESTAMP, NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP));
    assert!(SemOperation::Acquire as u32 == NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE);
    assert!(SemOperation::Release as u32 == NVC56F_SEM_EXECUTE_OPERATION_RELEASE);
    assert!(SemOperation::Release as u32 == NVC86F_SEM_EXECUTE_OPERATION_RELEASE);
    assert!(NVC46F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT == NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT);
};

// MEM_OP: Ampere and Hopper keep Turing's layout, but for Hopper's wider engine id.
const _: () = {
    use ampere::*;
    use hopper::*;
    const fn same_bits(a: super::BitRange, range: super::UnitRange) -> bool {
        a.hi as u32 == range.last && a.lo as u32 == range.first
    }
    assert!(method::NVC46F_MEM_OP_A == NVC56F_MEM_OP_A && method::NVC46F_MEM_OP_A == hopper::mem_op::NVC86F_MEM_OP_A);
    assert!(method::NVC46F_MEM_OP_B == NVC56F_MEM_OP_B && method::NVC46F_MEM_OP_B == hopper::mem_op::NVC86F_MEM_OP_B);
    assert!(method::NVC46F_MEM_OP_C == NVC56F_MEM_OP_C && method::NVC46F_MEM_OP_C == hopper::mem_op::NVC86F_MEM_OP_C);
    assert!(method::NVC46F_MEM_OP_D == NVC56F_MEM_OP_D && method::NVC46F_MEM_OP_D == hopper::mem_op::NVC86F_MEM_OP_D);
    // The four are consecutive: one incrementing method writes them.
    assert!(method::NVC46F_MEM_OP_B == method::NVC46F_MEM_OP_A + 4);
    assert!(method::NVC46F_MEM_OP_C == method::NVC46F_MEM_OP_A + 8);
    assert!(method::NVC46F_MEM_OP_D == method::NVC46F_MEM_OP_A + 12);

    assert!(same(
        NVC46F_MEM_OP_A::TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID,
        NVC56F_MEM_OP_A_TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID
    ));
    assert!(same(NVC46F_MEM_OP_A::TLB_INVALIDATE_SYSMEMBAR, NVC56F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR));
    assert!(same(NVC46F_MEM_OP_A::TLB_INVALIDATE_SYSMEMBAR, NVC86F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR));
    assert!(same(NVC46F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO, NVC56F_MEM_OP_A_TLB_INVALIDATE_TARGET_ADDR_LO));
    assert!(
        NVC46F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO.bits.hi
            == NVC86F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO.bits.hi
    );
    assert!(
        NVC46F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO.bits.lo
            == NVC86F_MEM_OP_A::TLB_INVALIDATE_TARGET_ADDR_LO.bits.lo
    );
    assert!(NVC86F_MEM_OP_A::TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID.bits.lo == 0);
    assert!(NVC86F_MEM_OP_A::TLB_INVALIDATE_CANCEL_MMU_ENGINE_ID.bits.hi == 8);
    assert!(MemOpSysmembar::Dis as u32 == NVC56F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR_DIS);
    assert!(MemOpSysmembar::Dis as u32 == NVC86F_MEM_OP_A_TLB_INVALIDATE_SYSMEMBAR_DIS);
    assert!(same(NVC46F_MEM_OP_B::TLB_INVALIDATE_TARGET_ADDR_HI, NVC56F_MEM_OP_B_TLB_INVALIDATE_TARGET_ADDR_HI));
    assert!(same(NVC46F_MEM_OP_B::TLB_INVALIDATE_TARGET_ADDR_HI, NVC86F_MEM_OP_B_TLB_INVALIDATE_TARGET_ADDR_HI));

    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB, NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB));
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB, NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB));
    assert!(TlbInvalidatePdb::One as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_ONE);
    assert!(TlbInvalidatePdb::One as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_ONE);
    assert!(TlbInvalidateGpc::Enable as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_GPC_ENABLE);
    assert!(TlbInvalidateGpc::Enable as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_GPC_ENABLE);
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_REPLAY, NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY));
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_REPLAY, NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY));
    assert!(TlbInvalidateReplay::Start as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START);
    assert!(TlbInvalidateReplay::Start as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START);
    assert!(TlbInvalidateReplay::StartAckAll as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START_ACK_ALL);
    assert!(TlbInvalidateReplay::StartAckAll as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_START_ACK_ALL);
    assert!(TlbInvalidateReplay::CancelVaGlobal as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_REPLAY_CANCEL_VA_GLOBAL);
    assert!(TlbInvalidateReplay::CancelVaGlobal as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_REPLAY_CANCEL_VA_GLOBAL);
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_ACK_TYPE, NVC56F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE));
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_ACK_TYPE, NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE));
    assert!(TlbInvalidateAckType::None as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE_NONE);
    assert!(TlbInvalidateAckType::None as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_ACK_TYPE_NONE);
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_ACCESS_TYPE, NVC56F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE));
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_ACCESS_TYPE, NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE));
    assert!(TlbInvalidateAccessType::VirtAll as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ALL);
    assert!(TlbInvalidateAccessType::VirtAll as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_ALL);
    assert!(
        TlbInvalidateAccessType::VirtWriteAndAtomic as u32
            == NVC56F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_WRITE_AND_ATOMIC
    );
    assert!(
        TlbInvalidateAccessType::VirtWriteAndAtomic as u32
            == NVC86F_MEM_OP_C_TLB_INVALIDATE_ACCESS_TYPE_VIRT_WRITE_AND_ATOMIC
    );
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PAGE_TABLE_LEVEL, NVC56F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL));
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PAGE_TABLE_LEVEL, NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL));
    assert!(TlbInvalidatePageTableLevel::PteOnly as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_PTE_ONLY);
    assert!(TlbInvalidatePageTableLevel::PteOnly as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_PAGE_TABLE_LEVEL_PTE_ONLY);
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_APERTURE, NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE));
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_APERTURE, NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE));
    assert!(TlbInvalidatePdbAperture::VidMem as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_VID_MEM);
    assert!(TlbInvalidatePdbAperture::VidMem as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_VID_MEM);
    assert!(
        TlbInvalidatePdbAperture::SysMemCoherent as u32 == NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_SYS_MEM_COHERENT
    );
    assert!(
        TlbInvalidatePdbAperture::SysMemCoherent as u32 == NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_APERTURE_SYS_MEM_COHERENT
    );
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_ADDR_LO, NVC56F_MEM_OP_C_TLB_INVALIDATE_PDB_ADDR_LO));
    assert!(same(NVC46F_MEM_OP_C::TLB_INVALIDATE_PDB_ADDR_LO, NVC86F_MEM_OP_C_TLB_INVALIDATE_PDB_ADDR_LO));
    assert!(same(NVC46F_MEM_OP_D::TLB_INVALIDATE_PDB_ADDR_HI, NVC56F_MEM_OP_D_TLB_INVALIDATE_PDB_ADDR_HI));
    assert!(same(NVC46F_MEM_OP_D::TLB_INVALIDATE_PDB_ADDR_HI, NVC86F_MEM_OP_D_TLB_INVALIDATE_PDB_ADDR_HI));
    assert!(same(NVC46F_MEM_OP_D::OPERATION, NVC56F_MEM_OP_D_OPERATION));
    assert!(same(NVC46F_MEM_OP_D::OPERATION, NVC86F_MEM_OP_D_OPERATION));
    assert!(same_bits(NVC46F_MEM_OP_D::OPERATION.bits, NVC46F_MEM_OP_D_OPERATION));
    assert!(MemOpOperation::MmuTlbInvalidateTargeted as u32 == NVC46F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED);
    assert!(MemOpOperation::MmuTlbInvalidateTargeted as u32 == NVC56F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED);
    assert!(MemOpOperation::MmuTlbInvalidateTargeted as u32 == NVC86F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED);
};

// ---------------------------------------------------------------------------------------------
// USERD, the channel's control area (checked against `clc46f.h` with the RM structures:
// `crate::rm::fifo::STRUCT_LAYOUTS`).

/// USERD: the channel's control area (`Nvc46fControl` in `clc46f.h`; `clc56f.h` and `clc86f.h`
/// repeat it). The driver writes `GPPut`; the host writes `GPGet` as it consumes entries. 512 bytes.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    zerocopy::FromBytes,
    zerocopy::IntoBytes,
    zerocopy::Immutable,
    zerocopy::KnownLayout,
)]
#[repr(C)]
pub struct UserdControl {
    pub ignored00: [u32; 0x10],
    /// `Put`: pushbuffer put (unused with GPFIFO).
    pub put: u32,
    /// `Get`.
    pub get: u32,
    /// `Reference`: the last `SET_REFERENCE` value.
    pub reference: u32,
    /// `PutHi`.
    pub put_hi: u32,
    pub ignored01: [u32; 2],
    /// `TopLevelGet`.
    pub top_level_get: u32,
    /// `TopLevelGetHi`.
    pub top_level_get_hi: u32,
    /// `GetHi`.
    pub get_hi: u32,
    pub ignored02: [u32; 7],
    pub ignored03: u32,
    pub ignored04: [u32; 1],
    /// `GPGet`: the next GPFIFO entry the host reads.
    pub gp_get: u32,
    /// `GPPut`: one past the last entry the driver wrote.
    pub gp_put: u32,
    pub ignored05: [u32; 0x5c],
}

/// Byte offset of `GPGet` in USERD.
pub const USERD_GP_GET: u64 = core::mem::offset_of!(UserdControl, gp_get) as u64;
/// Byte offset of `GPPut` in USERD.
pub const USERD_GP_PUT: u64 = core::mem::offset_of!(UserdControl, gp_put) as u64;
/// Byte offset of `Reference` in USERD.
pub const USERD_REFERENCE: u64 = core::mem::offset_of!(UserdControl, reference) as u64;
/// USERD's size.
pub const USERD_SIZE: u64 = core::mem::size_of::<UserdControl>() as u64;
