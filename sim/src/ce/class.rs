//! The copy classes as the model reads their headers: for each class number, the width of its
//! address fields and which of the optional fields its `cl*b5.h` defines, each taken from that
//! class's own declarations in `nvgpu::hw::ce` (`clc5b5.h` .. `clcab5.h`). The driver describes
//! the same classes with its own predicates (`nvgpu::ce::CeClass`); `tests/tests/copy_engine.rs`
//! compares the two, so a mistake in either is caught rather than agreed with.

use nvgpu::hw::ce::{self as hw, NVC5B5_LAUNCH_DMA, NVC5B5_OFFSET_IN_UPPER, NVC5B5_SET_SEMAPHORE_A};
use nvgpu::hw::{classes, UnitRange};

/// One copy class, as its header defines it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyClass {
    /// The class number (`*_DMA_COPY_*`, `cl*b5.h`).
    pub number: u32,
    /// NVIDIA's name of the class.
    pub name: &'static str,
    /// Width of `OFFSET_IN_UPPER_UPPER` / `OFFSET_OUT_UPPER_UPPER`.
    pub offset_upper_bits: u32,
    /// Width of `SET_SEMAPHORE_A_UPPER`.
    pub semaphore_upper_bits: u32,
    /// `SET_SRC_PHYS_MODE_PEER_ID` (with `TARGET_PEERMEM` and `FLA`), where the class has it.
    pub peer_id: Option<UnitRange>,
    /// `LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE` (with `SET_SEMAPHORE_PAYLOAD_UPPER` and the float
    /// reductions), where the class has it.
    pub payload_size: Option<UnitRange>,
    /// Whether `LAUNCH_DMA_SRC_BYPASS_L2` / `DST_BYPASS_L2` are defined.
    pub bypass_l2: bool,
    /// `LAUNCH_DMA_COPY_TYPE` (with `MEMORY_SCRUB_ENABLE`), where the class has it.
    pub copy_type: Option<UnitRange>,
    /// Whether `LAUNCH_DMA_FORCE_RMWDISABLE` is defined.
    pub force_rmwdisable: bool,
    /// `LAUNCH_DMA_DATA_TRANSFER_TYPE_PREFETCH`, where the class defines it.
    pub prefetch_transfer: Option<u32>,
}

const fn width(range: UnitRange) -> u32 {
    range.last - range.first + 1
}

/// Every copy class the model implements, oldest first.
pub const CLASSES: &[CopyClass] = &[
    CopyClass {
        number: classes::TURING_DMA_COPY_A,
        name: "TURING_DMA_COPY_A",
        offset_upper_bits: NVC5B5_OFFSET_IN_UPPER::UPPER.bits.width(),
        semaphore_upper_bits: NVC5B5_SET_SEMAPHORE_A::UPPER.bits.width(),
        peer_id: None,
        payload_size: None,
        bypass_l2: NVC5B5_LAUNCH_DMA::SRC_BYPASS_L2.bits.width() == 1,
        copy_type: None,
        force_rmwdisable: NVC5B5_LAUNCH_DMA::FORCE_RMWDISABLE.bits.width() == 1,
        prefetch_transfer: None,
    },
    CopyClass {
        number: classes::AMPERE_DMA_COPY_A,
        name: "AMPERE_DMA_COPY_A",
        offset_upper_bits: width(hw::ampere_a::NVC6B5_OFFSET_IN_UPPER_UPPER),
        semaphore_upper_bits: width(hw::ampere_a::NVC6B5_SET_SEMAPHORE_A_UPPER),
        peer_id: Some(hw::ampere_a::NVC6B5_SET_SRC_PHYS_MODE_PEER_ID),
        payload_size: None,
        bypass_l2: false,
        copy_type: None,
        force_rmwdisable: width(hw::ampere_a::NVC6B5_LAUNCH_DMA_FORCE_RMWDISABLE) == 1,
        prefetch_transfer: None,
    },
    CopyClass {
        number: classes::AMPERE_DMA_COPY_B,
        name: "AMPERE_DMA_COPY_B",
        offset_upper_bits: width(hw::ampere_b::NVC7B5_OFFSET_IN_UPPER_UPPER),
        semaphore_upper_bits: width(hw::ampere_b::NVC7B5_SET_SEMAPHORE_A_UPPER),
        peer_id: Some(hw::ampere_b::NVC7B5_SET_SRC_PHYS_MODE_PEER_ID),
        payload_size: Some(hw::ampere_b::NVC7B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
        bypass_l2: false,
        copy_type: None,
        force_rmwdisable: width(hw::ampere_b::NVC7B5_LAUNCH_DMA_FORCE_RMWDISABLE) == 1,
        prefetch_transfer: None,
    },
    CopyClass {
        number: classes::HOPPER_DMA_COPY_A,
        name: "HOPPER_DMA_COPY_A",
        offset_upper_bits: width(hw::hopper::NVC8B5_OFFSET_IN_UPPER_UPPER),
        semaphore_upper_bits: width(hw::hopper::NVC8B5_SET_SEMAPHORE_A_UPPER),
        peer_id: Some(hw::hopper::NVC8B5_SET_SRC_PHYS_MODE_PEER_ID),
        payload_size: Some(hw::hopper::NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
        bypass_l2: false,
        copy_type: Some(hw::hopper::NVC8B5_LAUNCH_DMA_COPY_TYPE),
        force_rmwdisable: width(hw::hopper::NVC8B5_LAUNCH_DMA_FORCE_RMWDISABLE) == 1,
        prefetch_transfer: None,
    },
    CopyClass {
        number: classes::BLACKWELL_DMA_COPY_A,
        name: "BLACKWELL_DMA_COPY_A",
        offset_upper_bits: width(hw::blackwell_a::NVC9B5_OFFSET_IN_UPPER_UPPER),
        semaphore_upper_bits: width(hw::blackwell_a::NVC9B5_SET_SEMAPHORE_A_UPPER),
        peer_id: Some(hw::blackwell_a::NVC9B5_SET_SRC_PHYS_MODE_PEER_ID),
        payload_size: Some(hw::blackwell_a::NVC9B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
        bypass_l2: false,
        copy_type: Some(hw::blackwell_a::NVC9B5_LAUNCH_DMA_COPY_TYPE),
        force_rmwdisable: false,
        prefetch_transfer: None,
    },
    CopyClass {
        number: classes::BLACKWELL_DMA_COPY_B,
        name: "BLACKWELL_DMA_COPY_B",
        offset_upper_bits: width(hw::blackwell_b::NVCAB5_OFFSET_IN_UPPER_UPPER),
        semaphore_upper_bits: width(hw::blackwell_b::NVCAB5_SET_SEMAPHORE_A_UPPER),
        peer_id: Some(hw::blackwell_b::NVCAB5_SET_SRC_PHYS_MODE_PEER_ID),
        payload_size: Some(hw::blackwell_b::NVCAB5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE),
        bypass_l2: false,
        copy_type: Some(hw::blackwell_b::NVCAB5_LAUNCH_DMA_COPY_TYPE),
        force_rmwdisable: false,
        prefetch_transfer: Some(hw::blackwell_b::NVCAB5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PREFETCH),
    },
];

impl CopyClass {
    /// The class with number `number`, if the model implements it.
    pub fn from_number(number: u32) -> Option<&'static CopyClass> {
        CLASSES.iter().find(|c| c.number == number)
    }
}

/// `range` of `raw`, shifted down: the model's own field extraction.
pub const fn field(raw: u32, range: UnitRange) -> u32 {
    let w = width(range);
    let ones = if w >= 32 { u32::MAX } else { (1u32 << w) - 1 };
    (raw >> range.first) & ones
}
