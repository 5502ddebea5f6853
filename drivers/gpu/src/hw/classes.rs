//! Class numbers: the object types RM allocates for channels, copy engines, compute and usermode.
//!
//! Each number is checked against its defining header in `src/common/sdk/nvidia/inc/class/`
//! (535.261.03; Blackwell classes from 570.133.07).

use super::headers;
use crate::constants;

constants! {
    /// Facts of this module.
    pub const FACTS;

    /// Turing GPFIFO channel (also what Turing..Ada RM accepts for older clients).
    pub TURING_CHANNEL_GPFIFO_A: u32 = 0x0000C46F in headers::CLC46F;
    /// Ampere GPFIFO channel (GA100..Ada).
    pub AMPERE_CHANNEL_GPFIFO_A: u32 = 0x0000C56F in headers::CLC56F;
    /// Hopper GPFIFO channel.
    pub HOPPER_CHANNEL_GPFIFO_A: u32 = 0x0000C86F in headers::CLC86F;
    /// Blackwell GB10x GPFIFO channel.
    pub BLACKWELL_CHANNEL_GPFIFO_A: u32 = 0x0000C96F in headers::CLC96F;
    /// Blackwell GB20x GPFIFO channel.
    pub BLACKWELL_CHANNEL_GPFIFO_B: u32 = 0x0000CA6F in headers::CLCA6F;

    /// Turing copy engine.
    pub TURING_DMA_COPY_A: u32 = 0x0000C5B5 in headers::CLC5B5;
    /// GA100 copy engine.
    pub AMPERE_DMA_COPY_A: u32 = 0x0000C6B5 in headers::CLC6B5;
    /// GA10x and Ada copy engine.
    pub AMPERE_DMA_COPY_B: u32 = 0x0000C7B5 in headers::CLC7B5;
    /// Hopper copy engine.
    pub HOPPER_DMA_COPY_A: u32 = 0x0000C8B5 in headers::CLC8B5;
    /// Blackwell GB10x copy engine.
    pub BLACKWELL_DMA_COPY_A: u32 = 0x0000C9B5 in headers::CLC9B5;
    /// Blackwell GB20x copy engine.
    pub BLACKWELL_DMA_COPY_B: u32 = 0x0000CAB5 in headers::CLCAB5;

    /// Turing compute.
    pub TURING_COMPUTE_A: u32 = 0xC5C0 in headers::CLC5C0;
    /// GA100 compute.
    pub AMPERE_COMPUTE_A: u32 = 0xC6C0 in headers::CLC6C0;
    /// GA10x compute.
    pub AMPERE_COMPUTE_B: u32 = 0xC7C0 in headers::CLC7C0;
    /// Ada compute.
    pub ADA_COMPUTE_A: u32 = 0xC9C0 in headers::CLC9C0;
    /// Hopper compute.
    pub HOPPER_COMPUTE_A: u32 = 0xCBC0 in headers::CLCBC0;
    /// Blackwell GB10x compute.
    pub BLACKWELL_COMPUTE_A: u32 = 0xCDC0 in headers::CLCDC0;
    /// Blackwell GB20x compute.
    pub BLACKWELL_COMPUTE_B: u32 = 0xCEC0 in headers::CLCEC0;

    /// Turing usermode region (doorbells).
    pub TURING_USERMODE_A: u32 = 0xc461 in headers::CLC461;
    /// Ampere usermode region (GA100..Ada).
    pub AMPERE_USERMODE_A: u32 = 0xc561 in headers::CLC561;
    /// Hopper usermode region (also GB10x).
    pub HOPPER_USERMODE_A: u32 = 0xc661 in headers::CLC661;
    /// Blackwell GB20x usermode region.
    pub BLACKWELL_USERMODE_A: u32 = 0xc761 in headers::CLC761;
}
