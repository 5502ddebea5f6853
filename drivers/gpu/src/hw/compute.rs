//! Compute class methods the driver uses to launch work: `SEND_PCAS_A` (the QMD's address, in
//! 256-byte units) and `SEND_SIGNALING_PCAS2_B` (what the compute work distributor does with it:
//! `INVALIDATE_COPY_SCHEDULE` reads the QMD afresh and schedules it), as NVIDIA's open-source
//! drivers launch on Ampere and later.
//!
//! Sources (535.261.03, `src/common/sdk/nvidia/inc/class/`): `clc6c0.h` (AMPERE_COMPUTE_A) and
//! `clc7c0.h` (AMPERE_COMPUTE_B) spell them out; 535 ships `clc9c0.h` (ADA_COMPUTE_A) and
//! `clcbc0.h` (HOPPER_COMPUTE_A) with the class number only, so Ada and Hopper rely on the
//! method offsets staying where Ampere has them (open-gpu-doc's `clc9c0.h`/`clcbc0.h` keep them).

use super::headers;
use crate::constants;

constants! {
    /// Facts of this module.
    pub const FACTS;

    /// The QMD's GPU VA shifted right by 8.
    pub NVC6C0_SEND_PCAS_A: u32 = 0x000002b4 in headers::CLC6C0;
    pub NVC6C0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8: Range = 31:0 in headers::CLC6C0;
    /// What to do with the QMD named by `SEND_PCAS_A`.
    pub NVC6C0_SEND_SIGNALING_PCAS2_B: u32 = 0x000002c0 in headers::CLC6C0;
    pub NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION: Range = 3:0 in headers::CLC6C0;
    pub NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE: u32 = 0x00000003 in headers::CLC6C0;
    /// Turing: the QMD's address, and `SEND_SIGNALING_PCAS_B` with `INVALIDATE` and `SCHEDULE`.
    pub NVC5C0_SEND_PCAS_A: u32 = 0x000002b4 in headers::CLC5C0;
    pub NVC5C0_SEND_SIGNALING_PCAS_B: u32 = 0x000002bc in headers::CLC5C0;
    pub NVC5C0_SEND_SIGNALING_PCAS_B_INVALIDATE: Range = 0:0 in headers::CLC5C0;
    pub NVC5C0_SEND_SIGNALING_PCAS_B_SCHEDULE: Range = 1:1 in headers::CLC5C0;
    pub NVC7C0_SEND_PCAS_A: u32 = 0x000002b4 in headers::CLC7C0;
    pub NVC7C0_SEND_SIGNALING_PCAS2_B: u32 = 0x000002c0 in headers::CLC7C0;
    pub NVC7C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE: u32 = 0x00000003 in headers::CLC7C0;
}

/// `SEND_SIGNALING_PCAS_B` with `INVALIDATE_TRUE` and `SCHEDULE_TRUE` (Turing).
pub const NVC5C0_PCAS_B_INVALIDATE_AND_SCHEDULE: u32 =
    (1 << NVC5C0_SEND_SIGNALING_PCAS_B_INVALIDATE.first) | (1 << NVC5C0_SEND_SIGNALING_PCAS_B_SCHEDULE.first);

const _: () = {
    assert!(NVC5C0_SEND_PCAS_A == NVC6C0_SEND_PCAS_A);
    assert!(NVC6C0_SEND_PCAS_A == NVC7C0_SEND_PCAS_A);
    assert!(NVC6C0_SEND_SIGNALING_PCAS2_B == NVC7C0_SEND_SIGNALING_PCAS2_B);
    assert!(
        NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE
            == NVC7C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE
    );
};
