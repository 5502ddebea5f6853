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
}

/// HOPPER_CHANNEL_GPFIFO_A (`clc86f.h`): semaphores and GPFIFO entries (the header defines no
/// pushbuffer format names); `SEM_ADDR_HI_OFFSET` is wider than Turing's.
pub mod hopper {
    use super::headers;
    use crate::constants;

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
    assert!(same(NVC46F_GP_ENTRY0::FETCH, NVC56F_GP_ENTRY0_FETCH) && same(NVC46F_GP_ENTRY0::FETCH, NVC86F_GP_ENTRY0_FETCH));
    assert!(same(NVC46F_GP_ENTRY0::GET, NVC56F_GP_ENTRY0_GET) && same(NVC46F_GP_ENTRY0::GET, NVC86F_GP_ENTRY0_GET));
    assert!(same(NVC46F_GP_ENTRY1::GET_HI, NVC56F_GP_ENTRY1_GET_HI) && same(NVC46F_GP_ENTRY1::GET_HI, NVC86F_GP_ENTRY1_GET_HI));
    assert!(same(NVC46F_GP_ENTRY1::LEVEL, NVC56F_GP_ENTRY1_LEVEL) && same(NVC46F_GP_ENTRY1::LEVEL, NVC86F_GP_ENTRY1_LEVEL));
    assert!(same(NVC46F_GP_ENTRY1::LENGTH, NVC56F_GP_ENTRY1_LENGTH) && same(NVC46F_GP_ENTRY1::LENGTH, NVC86F_GP_ENTRY1_LENGTH));
    assert!(same(NVC46F_GP_ENTRY1::SYNC, NVC56F_GP_ENTRY1_SYNC) && same(NVC46F_GP_ENTRY1::SYNC, NVC86F_GP_ENTRY1_SYNC));
    assert!(same(NVC46F_GP_ENTRY1::OPCODE, NVC56F_GP_ENTRY1_OPCODE) && same(NVC46F_GP_ENTRY1::OPCODE, NVC86F_GP_ENTRY1_OPCODE));
    assert!(GpOpcode::Nop as u32 == NVC86F_GP_ENTRY1_OPCODE_NOP);

    assert!(method::NVC46F_SEM_ADDR_LO == NVC56F_SEM_ADDR_LO && method::NVC46F_SEM_ADDR_LO == NVC86F_SEM_ADDR_LO);
    assert!(method::NVC46F_SEM_ADDR_HI == NVC56F_SEM_ADDR_HI && method::NVC46F_SEM_ADDR_HI == NVC86F_SEM_ADDR_HI);
    assert!(method::NVC46F_SEM_PAYLOAD_LO == NVC56F_SEM_PAYLOAD_LO && method::NVC46F_SEM_PAYLOAD_LO == NVC86F_SEM_PAYLOAD_LO);
    assert!(method::NVC46F_SEM_PAYLOAD_HI == NVC56F_SEM_PAYLOAD_HI && method::NVC46F_SEM_PAYLOAD_HI == NVC86F_SEM_PAYLOAD_HI);
    assert!(method::NVC46F_SEM_EXECUTE == NVC56F_SEM_EXECUTE && method::NVC46F_SEM_EXECUTE == NVC86F_SEM_EXECUTE);
    // The five semaphore methods are consecutive: one incrementing method writes them all.
    assert!(method::NVC46F_SEM_ADDR_HI == method::NVC46F_SEM_ADDR_LO + 4);
    assert!(method::NVC46F_SEM_PAYLOAD_LO == method::NVC46F_SEM_ADDR_LO + 8);
    assert!(method::NVC46F_SEM_PAYLOAD_HI == method::NVC46F_SEM_ADDR_LO + 12);
    assert!(method::NVC46F_SEM_EXECUTE == method::NVC46F_SEM_ADDR_LO + 16);
    assert!(same(NVC46F_SEM_ADDR_LO::OFFSET, NVC56F_SEM_ADDR_LO_OFFSET) && same(NVC46F_SEM_ADDR_LO::OFFSET, NVC86F_SEM_ADDR_LO_OFFSET));
    assert!(same(NVC46F_SEM_ADDR_HI::OFFSET, NVC56F_SEM_ADDR_HI_OFFSET));
    assert!(NVC86F_SEM_ADDR_HI_OFFSET.first == 0);
    assert!(same(NVC46F_SEM_EXECUTE::OPERATION, NVC56F_SEM_EXECUTE_OPERATION) && same(NVC46F_SEM_EXECUTE::OPERATION, NVC86F_SEM_EXECUTE_OPERATION));
    assert!(same(NVC46F_SEM_EXECUTE::ACQUIRE_SWITCH_TSG, NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG));
    assert!(same(NVC46F_SEM_EXECUTE::RELEASE_WFI, NVC56F_SEM_EXECUTE_RELEASE_WFI) && same(NVC46F_SEM_EXECUTE::RELEASE_WFI, NVC86F_SEM_EXECUTE_RELEASE_WFI));
    assert!(same(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, NVC56F_SEM_EXECUTE_PAYLOAD_SIZE) && same(NVC46F_SEM_EXECUTE::PAYLOAD_SIZE, NVC86F_SEM_EXECUTE_PAYLOAD_SIZE));
    assert!(same(NVC46F_SEM_EXECUTE::RELEASE_TIMESTAMP, NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP));
    assert!(SemOperation::Acquire as u32 == NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE);
    assert!(SemOperation::Release as u32 == NVC56F_SEM_EXECUTE_OPERATION_RELEASE);
    assert!(SemOperation::Release as u32 == NVC86F_SEM_EXECUTE_OPERATION_RELEASE);
    assert!(NVC46F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT == NVC86F_SEM_EXECUTE_PAYLOAD_SIZE_32BIT);
};
