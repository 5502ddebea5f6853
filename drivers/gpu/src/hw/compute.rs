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
    pub NVC7C0_SEND_PCAS_A: u32 = 0x000002b4 in headers::CLC7C0;
    pub NVC7C0_SEND_SIGNALING_PCAS2_B: u32 = 0x000002c0 in headers::CLC7C0;
    pub NVC7C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE: u32 = 0x00000003 in headers::CLC7C0;
}

const _: () = {
    assert!(NVC6C0_SEND_PCAS_A == NVC7C0_SEND_PCAS_A);
    assert!(NVC6C0_SEND_SIGNALING_PCAS2_B == NVC7C0_SEND_SIGNALING_PCAS2_B);
    assert!(
        NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE
            == NVC7C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE
    );
};
