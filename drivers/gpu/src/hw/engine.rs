//! Where each falcon-based engine sits in BAR0, and the registers NVIDIA names per engine
//! (`NV_PGSP_*`, `NV_PSEC_*`, `NV_PFSP_*`): engine reset, EMEM ports, message queues.
//!
//! Follows `turing/tu102/dev_gsp.h`, `dev_gsp_addendum.h`, `dev_sec_pri.h`, `dev_sec_addendum.h`,
//! `dev_riscv_pri.h`; `ampere/ga102/dev_falcon_second_pri.h`; `hopper/gh100/dev_gsp.h`,
//! `dev_fsp_pri.h` (535.261.03); `blackwell/gb202/dev_fsp_pri.h` (570.133.07).
//!
//! The PMU (0x10a000 in other drivers) is not here: no 535.261.03 header places it, and a
//! GSP-based boot does not touch it.

use super::{falcon, headers};
use crate::{constants, registers};

constants! {
    /// Facts of the engine windows and bases.
    pub const BASE_FACTS;

    /// GSP's register window.
    pub NV_PGSP: Range = 0x113fff : 0x110000 in headers::TU102_DEV_GSP;
    /// SEC2's register window.
    pub NV_PSEC: Range = 0x843fff : 0x840000 in headers::TU102_DEV_SEC_PRI;
    /// GSP's RISC-V ("falcon2") register base.
    pub NV_FALCON2_GSP_BASE: u32 = 0x00111000 in headers::TU102_DEV_RISCV_PRI;
    /// SEC2's RISC-V register base (GA102 and later have a RISC-V core in SEC2).
    pub NV_FALCON2_SEC_BASE: u32 = 0x00841000 in headers::GA102_DEV_FALCON_SECOND_PRI;
    /// GSP's FBIF (DMA interface) base.
    pub NV_PGSP_FBIF_BASE: u32 = 0x110600 in headers::TU102_DEV_GSP_ADDENDUM;
    /// SEC2's FBIF base.
    pub NV_PSEC_FBIF_BASE: u32 = 0x00840600 in headers::TU102_DEV_SEC_ADDENDUM;
}

constants! {
    /// Facts of the engines' register array sizes.
    pub const SIZE_FACTS;

    /// Number of `NV_PGSP_MAILBOX(i)`.
    pub NV_PGSP_MAILBOX__SIZE_1: u32 = 4 in headers::TU102_DEV_GSP;
    /// Number of `NV_PGSP_QUEUE_HEAD(i)`.
    pub NV_PGSP_QUEUE_HEAD__SIZE_1: u32 = 8 in headers::TU102_DEV_GSP;
    /// GSP's EMEM ports, `NV_PGSP_EMEMC(i)`.
    pub NV_PGSP_EMEMC__SIZE_1: u32 = 4 in headers::TU102_DEV_GSP;
    /// The FSP's EMEM ports, `NV_PFSP_EMEMC(i)`.
    pub NV_PFSP_EMEMC__SIZE_1: u32 = 8 in headers::GH100_DEV_FSP_PRI;
    /// Bytes of RM's channel in the FSP's EMEM (one packet at most).
    pub FSP_EMEM_CHANNEL_RM_SIZE: usize = 1024 in headers::FSP_EMEM_CHANNELS;
}

/// GSP's falcon base.
pub const GSP_BASE: u32 = NV_PGSP.first;
/// SEC2's falcon base (Turing to Ada; Hopper and Blackwell boot through the FSP instead).
pub const SEC2_BASE: u32 = NV_PSEC.first;
/// The FSP's falcon base (Hopper and later). No header names it; it follows from
/// `NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2(0)` being the falcon's
/// `NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2(0)`.
pub const FSP_BASE: u32 =
    NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET - falcon::NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET;
/// Offset of the engine reset register (`NV_P*_FALCON_ENGINE`) from a falcon's base; the
/// headers name it per engine only, and both agree.
pub const FALCON_ENGINE_OFFSET: u32 = NV_PGSP_FALCON_ENGINE::OFFSET - GSP_BASE;

const _: () = {
    assert!(NV_PSEC_FALCON_ENGINE::OFFSET - SEC2_BASE == FALCON_ENGINE_OFFSET);
    assert!(NV_PGSP_FBIF_BASE > GSP_BASE && NV_PGSP.contains(NV_PGSP_FBIF_BASE));
    assert!(NV_PSEC.contains(NV_PSEC_FBIF_BASE));
    assert!(FSP_BASE == 0x008f_0000);
};

registers! {
    /// Facts of the per-engine registers.
    pub const FACTS;

    /// GSP engine reset (Turing to Ada layout).
    pub NV_PGSP_FALCON_ENGINE(0x001103c0) in headers::TU102_DEV_GSP {
        /// Hold the engine in reset.
        0:0 RESET => reset: bool,
    }

    /// SEC2 engine reset.
    pub NV_PSEC_FALCON_ENGINE(0x008403c0) in headers::TU102_DEV_SEC_PRI {
        /// Hold the engine in reset.
        0:0 RESET => reset: bool,
    }

    /// GSP mailboxes beyond the falcon's two.
    pub NV_PGSP_MAILBOX(0x00110804, stride 4) in headers::TU102_DEV_GSP {
        /// The word.
        31:0 DATA => data: u32,
    }

    /// GSP command queue heads (RM writes them to signal the GSP).
    pub NV_PGSP_QUEUE_HEAD(0x00110c00, stride 8) in headers::TU102_DEV_GSP {
        /// Head offset.
        31:0 ADDRESS => queue_address: u32,
    }

    /// GSP EMEM access control for port `i`.
    pub NV_PGSP_EMEMC(0x00110ac0, stride 8) in headers::TU102_DEV_GSP {
        /// Word offset in the block.
        7:2 OFFS => offs: u8,
        /// 256-byte block index.
        15:8 BLK => blk: u8,
        /// Auto-increment on write.
        24:24 AINCW => aincw: bool,
        /// Auto-increment on read.
        25:25 AINCR => aincr: bool,
    }

    /// GSP EMEM data port `i`.
    pub NV_PGSP_EMEMD(0x00110ac4, stride 8) in headers::TU102_DEV_GSP {
        /// One 32-bit word.
        31:0 DATA => data: u32,
    }

    /// FSP EMEM access control for port `i` (the driver talks to the FSP through EMEM).
    pub NV_PFSP_EMEMC(0x008f2ac0, stride 8) in headers::GH100_DEV_FSP_PRI {
        /// Word offset in the block.
        7:2 OFFS => offs: u8,
        /// 256-byte block index.
        15:8 BLK => blk: u8,
        /// Auto-increment on write.
        24:24 AINCW => aincw: bool,
        /// Auto-increment on read.
        25:25 AINCR => aincr: bool,
    }

    /// FSP EMEM data port `i`.
    pub NV_PFSP_EMEMD(0x008f2ac4, stride 8) in headers::GH100_DEV_FSP_PRI {
        /// One 32-bit word.
        31:0 DATA => data: u32,
    }

    /// Head of command queue `i` (driver to FSP).
    pub NV_PFSP_QUEUE_HEAD(0x008f2c00, stride 8) in headers::GH100_DEV_FSP_PRI {
        /// Offset in EMEM.
        31:0 ADDRESS => queue_address: u32,
    }

    /// Tail of command queue `i`.
    pub NV_PFSP_QUEUE_TAIL(0x008f2c04, stride 8) in headers::GH100_DEV_FSP_PRI {
        /// Offset in EMEM.
        31:0 ADDRESS => queue_address: u32,
    }

    /// Head of message queue `i` (FSP to driver).
    pub NV_PFSP_MSGQ_HEAD(0x008f2c80, stride 8) in headers::GH100_DEV_FSP_PRI {
        /// Offset in EMEM.
        31:0 VAL => val: u32,
    }

    /// Tail of message queue `i`.
    pub NV_PFSP_MSGQ_TAIL(0x008f2c84, stride 8) in headers::GH100_DEV_FSP_PRI {
        /// Offset in EMEM.
        31:0 VAL => val: u32,
    }

    /// FSP scratch group 2, where the FSP reports boot progress.
    pub NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2(0x008f0320, stride 4) in headers::GH100_DEV_FSP_PRI {
        /// The word.
        31:0 VAL => val: u32,
    }
}

/// Engine registers as Hopper (and Blackwell GB100) lay them out.
pub mod gh100 {
    use super::headers;
    use crate::{field_values, registers};

    field_values! {
        /// `NV_PGSP_FALCON_ENGINE_RESET_STATUS`.
        pub enum ResetStatus: NV_PGSP_FALCON_ENGINE_RESET_STATUS in headers::GH100_DEV_GSP {
            /// Reset is held.
            Asserted = 0x0 => ASSERTED,
            /// Reset is released.
            Deasserted = 0x2 => DEASSERTED,
        }
    }

    registers! {
        /// Facts of Hopper's engine registers.
        pub const FACTS;

        /// GSP engine reset with a status readback.
        pub NV_PGSP_FALCON_ENGINE(0x001103c0) in headers::GH100_DEV_GSP {
            /// 1 asserts reset, 0 releases it.
            0:0 RESET => reset: bool,
            /// Where the reset stands.
            10:8 RESET_STATUS => reset_status: ResetStatus,
        }
    }
}

/// The FSP's scratch registers as Blackwell GB20x headers place them (same offsets as Hopper).
pub mod gb202 {
    use super::headers;
    use crate::registers;

    registers! {
        /// Facts of GB202's FSP registers.
        pub const FACTS;

        /// FSP scratch group 2.
        pub NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2(0x008f0320, stride 4) in headers::GB202_DEV_FSP_PRI {
            /// The word.
            31:0 VAL => val: u32,
        }
    }

    const _: () =
        assert!(NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET == super::NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET);
}

/// Which falcon-based engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FalconEngine {
    /// GPU System Processor: runs GSP-RM.
    Gsp,
    /// Security engine 2: runs the booter (Turing to Ada).
    Sec2,
    /// Firmware Security Processor: root of the chain of trust (Hopper and later).
    Fsp,
}

/// Where one falcon-based engine of a chip sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FalconUnit {
    /// Which engine.
    pub engine: FalconEngine,
    /// Base of its `NV_PFALCON_FALCON_*` registers.
    pub base: u32,
    /// Base of its `NV_PRISCV_RISCV_*` registers, when it has a RISC-V core the driver uses.
    pub riscv_base: Option<u32>,
    /// Base of its `NV_PFALCON_FBIF_*` registers, when the driver programs its DMA.
    pub fbif_base: Option<u32>,
}
