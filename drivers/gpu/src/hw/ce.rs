//! Copy engine (DMA copy class) methods and the fields of their data words.
//!
//! Sources: the DMA copy class headers. TURING_DMA_COPY_A (`clc5b5.h`, 535.261.03
//! `src/common/sdk/nvidia/inc/class/`) is declared in full with typed fields; the later classes
//! keep its method offsets and field positions, and their own sub-modules pin each fact the driver
//! and the model use under that class's prefix:
//!
//! - [`ampere_a`]: AMPERE_DMA_COPY_A, `clc6b5.h` (535): adds `TARGET_PEERMEM` with `PEER_ID`
//!   and `FLA`; drops `SRC_BYPASS_L2`/`DST_BYPASS_L2`.
//! - [`ampere_b`]: AMPERE_DMA_COPY_B, `clc7b5.h` (535): adds `SET_SEMAPHORE_PAYLOAD_UPPER` and
//!   `LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE` (64-bit semaphore payloads) and renames the semaphore
//!   types `RELEASE_SEMAPHORE_{NO,WITH}_TIMESTAMP` (same values as one-word / four-word).
//! - [`hopper`]: HOPPER_DMA_COPY_A. 535's `src/common/sdk/nvidia/inc/class/clc8b5.h` is cut down
//!   to what RM uses, so the facts cite the full copy UVM builds against,
//!   `kernel-open/nvidia-uvm/clc8b5.h` (535): addresses widen to 57 bits (`*_UPPER` 24:0),
//!   `LAUNCH_DMA` gains `COPY_TYPE` 21:20 and `MEMORY_SCRUB_ENABLE` 23:23, `VPRMODE` shrinks to 22:22.
//! - [`blackwell_a`], [`blackwell_b`]: BLACKWELL_DMA_COPY_A/B. 570's class headers carry only the
//!   class numbers, so the facts cite open-gpu-doc's `classes/dma-copy/clc9b5.h`/`clcab5.h`:
//!   Hopper's layout without `FORCE_RMWDISABLE`; `_B` adds `DATA_TRANSFER_TYPE_PREFETCH`.
//!
//! Where a later class's fact has the same suffix as a Turing one, `tests/tests/ce_headers.rs`
//! checks that the values agree except for the differences listed above, so code written against
//! Turing's positions is right for every class, and the class-specific facts are the only
//! branches (`nvgpu::ce::CeClass`).
//!
//! Several NVIDIA value names start with a digit or repeat across fields (`DST_MEMORY_LAYOUT_*`
//! beside `SRC_MEMORY_LAYOUT_*`), so the second field's named values are [`constants!`] facts
//! next to the enum the two fields share.

use super::headers;
use crate::{constants, field_values, registers};

/// Method byte offsets of TURING_DMA_COPY_A (pushed with subchannel-relative method headers).
pub mod method {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of the copy engine method offsets.
        pub const FACTS;

        pub NVC5B5_NOP: u32 = 0x00000100 in headers::CLC5B5;
        /// Semaphore address, upper bits.
        pub NVC5B5_SET_SEMAPHORE_A: u32 = 0x00000240 in headers::CLC5B5;
        /// Semaphore address, lower 32 bits.
        pub NVC5B5_SET_SEMAPHORE_B: u32 = 0x00000244 in headers::CLC5B5;
        pub NVC5B5_SET_SEMAPHORE_PAYLOAD: u32 = 0x00000248 in headers::CLC5B5;
        /// Aperture of a physical source.
        pub NVC5B5_SET_SRC_PHYS_MODE: u32 = 0x00000260 in headers::CLC5B5;
        /// Aperture of a physical destination.
        pub NVC5B5_SET_DST_PHYS_MODE: u32 = 0x00000264 in headers::CLC5B5;
        /// Starts the transfer and/or semaphore release the state methods describe.
        pub NVC5B5_LAUNCH_DMA: u32 = 0x00000300 in headers::CLC5B5;
        pub NVC5B5_OFFSET_IN_UPPER: u32 = 0x00000400 in headers::CLC5B5;
        pub NVC5B5_OFFSET_IN_LOWER: u32 = 0x00000404 in headers::CLC5B5;
        pub NVC5B5_OFFSET_OUT_UPPER: u32 = 0x00000408 in headers::CLC5B5;
        pub NVC5B5_OFFSET_OUT_LOWER: u32 = 0x0000040C in headers::CLC5B5;
        /// Bytes between the starts of consecutive source lines (multi-line transfers).
        pub NVC5B5_PITCH_IN: u32 = 0x00000410 in headers::CLC5B5;
        pub NVC5B5_PITCH_OUT: u32 = 0x00000414 in headers::CLC5B5;
        /// Bytes per line; with remapping, elements per line.
        pub NVC5B5_LINE_LENGTH_IN: u32 = 0x00000418 in headers::CLC5B5;
        /// Lines (multi-line transfers only).
        pub NVC5B5_LINE_COUNT: u32 = 0x0000041C in headers::CLC5B5;
        pub NVC5B5_SET_REMAP_CONST_A: u32 = 0x00000700 in headers::CLC5B5;
        pub NVC5B5_SET_REMAP_CONST_B: u32 = 0x00000704 in headers::CLC5B5;
        pub NVC5B5_SET_REMAP_COMPONENTS: u32 = 0x00000708 in headers::CLC5B5;
    }
}

field_values! {
    /// `NVC5B5_SET_SRC_PHYS_MODE_TARGET` (and `SET_DST_PHYS_MODE_TARGET`, same values): the
    /// aperture of a physical address. `PEERMEM` (3) exists from AMPERE_DMA_COPY_A on
    /// ([`ampere_a::NVC6B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM`]).
    pub enum PhysModeTarget: NVC5B5_SET_SRC_PHYS_MODE_TARGET in headers::CLC5B5 {
        LocalFb = 0x0 => LOCAL_FB,
        CoherentSysmem = 0x1 => COHERENT_SYSMEM,
        NoncoherentSysmem = 0x2 => NONCOHERENT_SYSMEM,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_DATA_TRANSFER_TYPE`. A pipelined transfer may start before the previous
    /// one has finished (its reads may overlap the previous writes); a non-pipelined one waits
    /// for the previous transfer to complete first. `NONE` launches only a semaphore release.
    pub enum DataTransferType: NVC5B5_LAUNCH_DMA_DATA_TRANSFER_TYPE in headers::CLC5B5 {
        None = 0x0 => NONE,
        Pipelined = 0x1 => PIPELINED,
        NonPipelined = 0x2 => NON_PIPELINED,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_FLUSH_TYPE`: which caches `FLUSH_ENABLE` flushes.
    pub enum FlushType: NVC5B5_LAUNCH_DMA_FLUSH_TYPE in headers::CLC5B5 {
        /// To system scope (visible to the CPU and peers).
        Sys = 0x0 => SYS,
        /// To GPU (L2) scope.
        Gl = 0x1 => GL,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_SEMAPHORE_TYPE`: what the launch writes at the semaphore address after
    /// the transfer. From AMPERE_DMA_COPY_B on, 1 and 2 are also named
    /// `RELEASE_SEMAPHORE_NO_TIMESTAMP` / `RELEASE_SEMAPHORE_WITH_TIMESTAMP`.
    pub enum SemaphoreType: NVC5B5_LAUNCH_DMA_SEMAPHORE_TYPE in headers::CLC5B5 {
        None = 0x0 => NONE,
        /// The payload alone (4 bytes; 8 with a two-word payload).
        ReleaseOneWord = 0x1 => RELEASE_ONE_WORD_SEMAPHORE,
        /// A 16-byte report: payload, then a 64-bit timestamp at byte 8.
        ReleaseFourWord = 0x2 => RELEASE_FOUR_WORD_SEMAPHORE,
        /// Release that also raises an interrupt on a condition (not modelled).
        ReleaseConditionalIntr = 0x3 => RELEASE_CONDITIONAL_INTR_SEMAPHORE,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_INTERRUPT_TYPE`: whether the launch raises the engine's non-stall
    /// interrupt when done, and whether the engine waits for it to be serviced.
    pub enum InterruptType: NVC5B5_LAUNCH_DMA_INTERRUPT_TYPE in headers::CLC5B5 {
        None = 0x0 => NONE,
        Blocking = 0x1 => BLOCKING,
        NonBlocking = 0x2 => NON_BLOCKING,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT` (and `DST_MEMORY_LAYOUT`, same values).
    pub enum MemoryLayout: NVC5B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT in headers::CLC5B5 {
        /// GOB/block tiling (`SET_*_BLOCK_SIZE`); the driver never uses it, the model rejects it.
        BlockLinear = 0x0 => BLOCKLINEAR,
        /// Linear lines `PITCH_*` bytes apart.
        Pitch = 0x1 => PITCH,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_SRC_TYPE` (and `DST_TYPE`, same values): how the offset is translated.
    pub enum AddressType: NVC5B5_LAUNCH_DMA_SRC_TYPE in headers::CLC5B5 {
        /// A GPU virtual address in the channel's VA space.
        Virtual = 0x0 => VIRTUAL,
        /// A physical address in the aperture of `SET_*_PHYS_MODE`.
        Physical = 0x1 => PHYSICAL,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_SEMAPHORE_REDUCTION`: the read-modify-write a reduction release does.
    pub enum SemaphoreReduction: NVC5B5_LAUNCH_DMA_SEMAPHORE_REDUCTION in headers::CLC5B5 {
        Imin = 0x0 => IMIN,
        Imax = 0x1 => IMAX,
        Ixor = 0x2 => IXOR,
        Iand = 0x3 => IAND,
        Ior = 0x4 => IOR,
        Iadd = 0x5 => IADD,
        /// `old >= payload ? 0 : old + 1`.
        Inc = 0x6 => INC,
        /// `old == 0 || old > payload ? payload : old - 1`.
        Dec = 0x7 => DEC,
        Fadd = 0xA => FADD,
    }
}

field_values! {
    /// `NVC5B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN`: how `IMIN`/`IMAX` compare.
    pub enum ReductionSign: NVC5B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN in headers::CLC5B5 {
        Signed = 0x0 => SIGNED,
        Unsigned = 0x1 => UNSIGNED,
    }
}

field_values! {
    /// `NVC5B5_SET_REMAP_COMPONENTS_DST_X` (and `DST_Y`/`DST_Z`/`DST_W`, same values): where a
    /// destination component comes from.
    pub enum RemapSource: NVC5B5_SET_REMAP_COMPONENTS_DST_X in headers::CLC5B5 {
        SrcX = 0x0 => SRC_X,
        SrcY = 0x1 => SRC_Y,
        SrcZ = 0x2 => SRC_Z,
        SrcW = 0x3 => SRC_W,
        /// `SET_REMAP_CONST_A`'s low `COMPONENT_SIZE` bytes.
        ConstA = 0x4 => CONST_A,
        ConstB = 0x5 => CONST_B,
        /// The destination component keeps its bytes.
        NoWrite = 0x6 => NO_WRITE,
    }
}

field_values! {
    /// `NVC5B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE`: bytes per component, minus one.
    pub enum ComponentSize: NVC5B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE in headers::CLC5B5 {
        One = 0x0 => ONE,
        Two = 0x1 => TWO,
        Three = 0x2 => THREE,
        Four = 0x3 => FOUR,
    }
}

field_values! {
    /// `NVC5B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS` (and `NUM_DST_COMPONENTS`, same values):
    /// components per element, minus one.
    pub enum ComponentCount: NVC5B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS in headers::CLC5B5 {
        One = 0x0 => ONE,
        Two = 0x1 => TWO,
        Three = 0x2 => THREE,
        Four = 0x3 => FOUR,
    }
}

impl ComponentSize {
    /// Bytes per component.
    pub const fn bytes(self) -> u32 {
        self as u32 + 1
    }
}

impl ComponentCount {
    /// Components per element.
    pub const fn count(self) -> u32 {
        self as u32 + 1
    }
}

registers! {
    /// Facts of the copy engine methods' data words.
    pub const FACTS;

    /// `SET_SEMAPHORE_A`: semaphore address bits 48:32 (56:32 from Hopper on).
    pub NVC5B5_SET_SEMAPHORE_A(view) in headers::CLC5B5 {
        16:0 UPPER => upper: u32,
    }
    /// `SET_SEMAPHORE_B`: semaphore address bits 31:0.
    pub NVC5B5_SET_SEMAPHORE_B(view) in headers::CLC5B5 {
        31:0 LOWER => lower: u32,
    }
    pub NVC5B5_SET_SEMAPHORE_PAYLOAD(view) in headers::CLC5B5 {
        31:0 PAYLOAD => payload: u32,
    }
    /// `SET_SRC_PHYS_MODE`. `TARGET` is raw bits here: its values depend on the class
    /// ([`PhysModeTarget`], plus `PEERMEM` from Ampere on).
    pub NVC5B5_SET_SRC_PHYS_MODE(view) in headers::CLC5B5 {
        1:0 TARGET => target: u8,
        5:2 BASIC_KIND => basic_kind: u8,
    }
    pub NVC5B5_SET_DST_PHYS_MODE(view) in headers::CLC5B5 {
        1:0 TARGET => target: u8,
        5:2 BASIC_KIND => basic_kind: u8,
    }
    /// `LAUNCH_DMA`: what to do with the state the other methods set.
    pub NVC5B5_LAUNCH_DMA(view) in headers::CLC5B5 {
        1:0 DATA_TRANSFER_TYPE => data_transfer_type: DataTransferType,
        /// Flush (membar) before the semaphore release, so the copy is visible first.
        2:2 FLUSH_ENABLE => flush_enable: bool,
        4:3 SEMAPHORE_TYPE => semaphore_type: SemaphoreType,
        6:5 INTERRUPT_TYPE => interrupt_type: InterruptType,
        7:7 SRC_MEMORY_LAYOUT => src_memory_layout: MemoryLayout,
        8:8 DST_MEMORY_LAYOUT => dst_memory_layout: MemoryLayout,
        /// `LINE_COUNT` lines `PITCH_IN`/`PITCH_OUT` apart instead of one line.
        9:9 MULTI_LINE_ENABLE => multi_line_enable: bool,
        /// Build destination elements from `SET_REMAP_COMPONENTS` (memset, swizzles).
        10:10 REMAP_ENABLE => remap_enable: bool,
        11:11 FORCE_RMWDISABLE => force_rmwdisable: bool,
        12:12 SRC_TYPE => src_type: AddressType,
        13:13 DST_TYPE => dst_type: AddressType,
        17:14 SEMAPHORE_REDUCTION => semaphore_reduction: SemaphoreReduction,
        18:18 SEMAPHORE_REDUCTION_SIGN => semaphore_reduction_sign: ReductionSign,
        19:19 SEMAPHORE_REDUCTION_ENABLE => semaphore_reduction_enable: bool,
        /// Turing only (`FORCE_VOLATILE` = 1); these bits are undefined in AMPERE_DMA_COPY_A/B
        /// and are `COPY_TYPE` from Hopper on.
        20:20 SRC_BYPASS_L2 => src_bypass_l2: bool,
        21:21 DST_BYPASS_L2 => dst_bypass_l2: bool,
        23:22 VPRMODE => vprmode: u8,
        24:24 RESERVED_START_OF_COPY => reserved_start_of_copy: bool,
        25:25 FLUSH_TYPE => flush_type: FlushType,
        /// Disable post-L2 compression for the writes (UVM sets it from AMPERE_DMA_COPY_B on).
        26:26 DISABLE_PLC => disable_plc: bool,
        31:28 RESERVED_ERR_CODE => reserved_err_code: u8,
    }
    /// `OFFSET_IN_UPPER`: source address bits 48:32 (56:32 from Hopper on).
    pub NVC5B5_OFFSET_IN_UPPER(view) in headers::CLC5B5 {
        16:0 UPPER => upper: u32,
    }
    pub NVC5B5_OFFSET_IN_LOWER(view) in headers::CLC5B5 {
        31:0 VALUE => value: u32,
    }
    pub NVC5B5_OFFSET_OUT_UPPER(view) in headers::CLC5B5 {
        16:0 UPPER => upper: u32,
    }
    pub NVC5B5_OFFSET_OUT_LOWER(view) in headers::CLC5B5 {
        31:0 VALUE => value: u32,
    }
    pub NVC5B5_PITCH_IN(view) in headers::CLC5B5 {
        31:0 VALUE => value: u32,
    }
    pub NVC5B5_PITCH_OUT(view) in headers::CLC5B5 {
        31:0 VALUE => value: u32,
    }
    pub NVC5B5_LINE_LENGTH_IN(view) in headers::CLC5B5 {
        31:0 VALUE => value: u32,
    }
    pub NVC5B5_LINE_COUNT(view) in headers::CLC5B5 {
        31:0 VALUE => value: u32,
    }
    pub NVC5B5_SET_REMAP_CONST_A(view) in headers::CLC5B5 {
        31:0 V => v: u32,
    }
    pub NVC5B5_SET_REMAP_CONST_B(view) in headers::CLC5B5 {
        31:0 V => v: u32,
    }
    /// `SET_REMAP_COMPONENTS`: element layout for remapped transfers.
    pub NVC5B5_SET_REMAP_COMPONENTS(view) in headers::CLC5B5 {
        2:0 DST_X => dst_x: RemapSource,
        6:4 DST_Y => dst_y: RemapSource,
        10:8 DST_Z => dst_z: RemapSource,
        14:12 DST_W => dst_w: RemapSource,
        17:16 COMPONENT_SIZE => component_size: ComponentSize,
        21:20 NUM_SRC_COMPONENTS => num_src_components: ComponentCount,
        25:24 NUM_DST_COMPONENTS => num_dst_components: ComponentCount,
    }
}

constants! {
    /// Named values of the second of two fields that share an enum, and of one-bit fields whose
    /// names are not `TRUE`/`FALSE`.
    pub const VALUE_FACTS;

    pub NVC5B5_SET_DST_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLC5B5;
    pub NVC5B5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLC5B5;
    pub NVC5B5_SET_DST_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_DST_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_DST_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_SRC_BYPASS_L2_USE_PTE_SETTING: u32 = 0x00000000 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_SRC_BYPASS_L2_FORCE_VOLATILE: u32 = 0x00000001 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_DST_BYPASS_L2_USE_PTE_SETTING: u32 = 0x00000000 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_DST_BYPASS_L2_FORCE_VOLATILE: u32 = 0x00000001 in headers::CLC5B5;
    pub NVC5B5_LAUNCH_DMA_VPRMODE_VPR_NONE: u32 = 0x00000000 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE: u32 = 0x00000000 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_TWO: u32 = 0x00000001 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_THREE: u32 = 0x00000002 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_FOUR: u32 = 0x00000003 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Y_CONST_A: u32 = 0x00000004 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Y_CONST_B: u32 = 0x00000005 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Y_NO_WRITE: u32 = 0x00000006 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Y_SRC_Y: u32 = 0x00000001 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Z_CONST_A: u32 = 0x00000004 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Z_CONST_B: u32 = 0x00000005 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Z_NO_WRITE: u32 = 0x00000006 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_Z_SRC_Z: u32 = 0x00000002 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_W_CONST_A: u32 = 0x00000004 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_W_CONST_B: u32 = 0x00000005 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_W_NO_WRITE: u32 = 0x00000006 in headers::CLC5B5;
    pub NVC5B5_SET_REMAP_COMPONENTS_DST_W_SRC_W: u32 = 0x00000003 in headers::CLC5B5;
}

// The second fields of a shared enum take the same values.
const _: () = {
    assert!(PhysModeTarget::LocalFb as u32 == NVC5B5_SET_DST_PHYS_MODE_TARGET_LOCAL_FB);
    assert!(PhysModeTarget::CoherentSysmem as u32 == NVC5B5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM);
    assert!(PhysModeTarget::NoncoherentSysmem as u32 == NVC5B5_SET_DST_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM);
    assert!(MemoryLayout::BlockLinear as u32 == NVC5B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR);
    assert!(MemoryLayout::Pitch as u32 == NVC5B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH);
    assert!(AddressType::Virtual as u32 == NVC5B5_LAUNCH_DMA_DST_TYPE_VIRTUAL);
    assert!(AddressType::Physical as u32 == NVC5B5_LAUNCH_DMA_DST_TYPE_PHYSICAL);
    assert!(ComponentCount::One as u32 == NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE);
    assert!(ComponentCount::Two as u32 == NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_TWO);
    assert!(ComponentCount::Three as u32 == NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_THREE);
    assert!(ComponentCount::Four as u32 == NVC5B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_FOUR);
    assert!(RemapSource::ConstA as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Y_CONST_A);
    assert!(RemapSource::ConstB as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Y_CONST_B);
    assert!(RemapSource::NoWrite as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Y_NO_WRITE);
    assert!(RemapSource::SrcY as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Y_SRC_Y);
    assert!(RemapSource::ConstA as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Z_CONST_A);
    assert!(RemapSource::ConstB as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Z_CONST_B);
    assert!(RemapSource::NoWrite as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Z_NO_WRITE);
    assert!(RemapSource::SrcZ as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_Z_SRC_Z);
    assert!(RemapSource::ConstA as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_W_CONST_A);
    assert!(RemapSource::ConstB as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_W_CONST_B);
    assert!(RemapSource::NoWrite as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_W_NO_WRITE);
    assert!(RemapSource::SrcW as u32 == NVC5B5_SET_REMAP_COMPONENTS_DST_W_SRC_W);
};

/// AMPERE_DMA_COPY_A (`clc6b5.h`, 535.261.03).
pub mod ampere_a {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of this class the driver and the model rely on.
        pub const FACTS;

        pub NVC6B5_SET_SEMAPHORE_A: u32 = 0x00000240 in headers::CLC6B5;
        pub NVC6B5_SET_SEMAPHORE_A_UPPER: Range = 16:0 in headers::CLC6B5;
        pub NVC6B5_SET_SEMAPHORE_B: u32 = 0x00000244 in headers::CLC6B5;
        pub NVC6B5_SET_SEMAPHORE_B_LOWER: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_SET_SEMAPHORE_PAYLOAD: u32 = 0x00000248 in headers::CLC6B5;
        pub NVC6B5_SET_SEMAPHORE_PAYLOAD_PAYLOAD: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE: u32 = 0x00000260 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_TARGET: Range = 1:0 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE: u32 = 0x00000264 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_TARGET: Range = 1:0 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA: u32 = 0x00000300 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE: Range = 1:0 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_FLUSH_ENABLE: Range = 2:2 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_FLUSH_TYPE: Range = 25:25 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_FLUSH_TYPE_SYS: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_FLUSH_TYPE_GL: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE: Range = 4:3 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE: u32 = 0x00000003 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_INTERRUPT_TYPE: Range = 6:5 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_INTERRUPT_TYPE_NONE: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_INTERRUPT_TYPE_BLOCKING: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_INTERRUPT_TYPE_NON_BLOCKING: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT: Range = 7:7 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT: Range = 8:8 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_MULTI_LINE_ENABLE: Range = 9:9 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_REMAP_ENABLE: Range = 10:10 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_FORCE_RMWDISABLE: Range = 11:11 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SRC_TYPE: Range = 12:12 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SRC_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DST_TYPE: Range = 13:13 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DST_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DST_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION: Range = 17:14 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMIN: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMAX: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IXOR: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IAND: u32 = 0x00000003 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IOR: u32 = 0x00000004 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IADD: u32 = 0x00000005 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_INC: u32 = 0x00000006 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_DEC: u32 = 0x00000007 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FADD: u32 = 0x0000000a in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN: Range = 18:18 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_SIGNED: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_UNSIGNED: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE: Range = 19:19 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_VPRMODE: Range = 23:22 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_VPRMODE_VPR_NONE: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_RESERVED_START_OF_COPY: Range = 24:24 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_DISABLE_PLC: Range = 26:26 in headers::CLC6B5;
        pub NVC6B5_LAUNCH_DMA_RESERVED_ERR_CODE: Range = 31:28 in headers::CLC6B5;
        pub NVC6B5_OFFSET_IN_UPPER: u32 = 0x00000400 in headers::CLC6B5;
        pub NVC6B5_OFFSET_IN_UPPER_UPPER: Range = 16:0 in headers::CLC6B5;
        pub NVC6B5_OFFSET_IN_LOWER: u32 = 0x00000404 in headers::CLC6B5;
        pub NVC6B5_OFFSET_IN_LOWER_VALUE: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_OFFSET_OUT_UPPER: u32 = 0x00000408 in headers::CLC6B5;
        pub NVC6B5_OFFSET_OUT_UPPER_UPPER: Range = 16:0 in headers::CLC6B5;
        pub NVC6B5_OFFSET_OUT_LOWER: u32 = 0x0000040c in headers::CLC6B5;
        pub NVC6B5_OFFSET_OUT_LOWER_VALUE: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_PITCH_IN: u32 = 0x00000410 in headers::CLC6B5;
        pub NVC6B5_PITCH_IN_VALUE: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_PITCH_OUT: u32 = 0x00000414 in headers::CLC6B5;
        pub NVC6B5_PITCH_OUT_VALUE: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_LINE_LENGTH_IN: u32 = 0x00000418 in headers::CLC6B5;
        pub NVC6B5_LINE_LENGTH_IN_VALUE: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_LINE_COUNT: u32 = 0x0000041c in headers::CLC6B5;
        pub NVC6B5_LINE_COUNT_VALUE: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_CONST_A: u32 = 0x00000700 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_CONST_A_V: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_CONST_B: u32 = 0x00000704 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_CONST_B_V: Range = 31:0 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS: u32 = 0x00000708 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X: Range = 2:0 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_Y: Range = 6:4 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_Z: Range = 10:8 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_W: Range = 14:12 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X_SRC_X: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X_SRC_Y: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X_SRC_Z: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X_SRC_W: u32 = 0x00000003 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X_CONST_A: u32 = 0x00000004 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X_CONST_B: u32 = 0x00000005 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_DST_X_NO_WRITE: u32 = 0x00000006 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE: Range = 17:16 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_THREE: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR: u32 = 0x00000003 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS: Range = 21:20 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS: Range = 25:24 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE: u32 = 0x00000000 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_TWO: u32 = 0x00000001 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_THREE: u32 = 0x00000002 in headers::CLC6B5;
        pub NVC6B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_FOUR: u32 = 0x00000003 in headers::CLC6B5;
        pub NVC6B5_NOP: u32 = 0x00000100 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLC6B5;
        pub NVC6B5_SET_SRC_PHYS_MODE_FLA: Range = 9:9 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLC6B5;
        pub NVC6B5_SET_DST_PHYS_MODE_FLA: Range = 9:9 in headers::CLC6B5;
    }
}

/// AMPERE_DMA_COPY_B (`clc7b5.h`, 535.261.03): 64-bit semaphore payloads.
pub mod ampere_b {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of this class the driver and the model rely on.
        pub const FACTS;

        pub NVC7B5_SET_SEMAPHORE_A: u32 = 0x00000240 in headers::CLC7B5;
        pub NVC7B5_SET_SEMAPHORE_A_UPPER: Range = 16:0 in headers::CLC7B5;
        pub NVC7B5_SET_SEMAPHORE_B: u32 = 0x00000244 in headers::CLC7B5;
        pub NVC7B5_SET_SEMAPHORE_B_LOWER: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_SET_SEMAPHORE_PAYLOAD: u32 = 0x00000248 in headers::CLC7B5;
        pub NVC7B5_SET_SEMAPHORE_PAYLOAD_PAYLOAD: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE: u32 = 0x00000260 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_TARGET: Range = 1:0 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE: u32 = 0x00000264 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_TARGET: Range = 1:0 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA: u32 = 0x00000300 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DATA_TRANSFER_TYPE: Range = 1:0 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_FLUSH_ENABLE: Range = 2:2 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_FLUSH_TYPE: Range = 25:25 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_FLUSH_TYPE_SYS: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_FLUSH_TYPE_GL: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_TYPE: Range = 4:3 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE: u32 = 0x00000003 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_INTERRUPT_TYPE: Range = 6:5 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_INTERRUPT_TYPE_NONE: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_INTERRUPT_TYPE_BLOCKING: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_INTERRUPT_TYPE_NON_BLOCKING: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT: Range = 7:7 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DST_MEMORY_LAYOUT: Range = 8:8 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_MULTI_LINE_ENABLE: Range = 9:9 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_REMAP_ENABLE: Range = 10:10 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_FORCE_RMWDISABLE: Range = 11:11 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SRC_TYPE: Range = 12:12 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SRC_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DST_TYPE: Range = 13:13 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DST_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DST_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION: Range = 17:14 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMIN: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMAX: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IXOR: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IAND: u32 = 0x00000003 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IOR: u32 = 0x00000004 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IADD: u32 = 0x00000005 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_INC: u32 = 0x00000006 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_DEC: u32 = 0x00000007 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FADD: u32 = 0x0000000a in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMIN: u32 = 0x0000000b in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMAX: u32 = 0x0000000c in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN: Range = 18:18 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_SIGNED: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_UNSIGNED: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE: Range = 19:19 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_VPRMODE: Range = 23:22 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_VPRMODE_VPR_NONE: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_RESERVED_START_OF_COPY: Range = 24:24 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_DISABLE_PLC: Range = 26:26 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_RESERVED_ERR_CODE: Range = 31:28 in headers::CLC7B5;
        pub NVC7B5_OFFSET_IN_UPPER: u32 = 0x00000400 in headers::CLC7B5;
        pub NVC7B5_OFFSET_IN_UPPER_UPPER: Range = 16:0 in headers::CLC7B5;
        pub NVC7B5_OFFSET_IN_LOWER: u32 = 0x00000404 in headers::CLC7B5;
        pub NVC7B5_OFFSET_IN_LOWER_VALUE: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_OFFSET_OUT_UPPER: u32 = 0x00000408 in headers::CLC7B5;
        pub NVC7B5_OFFSET_OUT_UPPER_UPPER: Range = 16:0 in headers::CLC7B5;
        pub NVC7B5_OFFSET_OUT_LOWER: u32 = 0x0000040c in headers::CLC7B5;
        pub NVC7B5_OFFSET_OUT_LOWER_VALUE: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_PITCH_IN: u32 = 0x00000410 in headers::CLC7B5;
        pub NVC7B5_PITCH_IN_VALUE: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_PITCH_OUT: u32 = 0x00000414 in headers::CLC7B5;
        pub NVC7B5_PITCH_OUT_VALUE: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_LINE_LENGTH_IN: u32 = 0x00000418 in headers::CLC7B5;
        pub NVC7B5_LINE_LENGTH_IN_VALUE: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_LINE_COUNT: u32 = 0x0000041c in headers::CLC7B5;
        pub NVC7B5_LINE_COUNT_VALUE: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_CONST_A: u32 = 0x00000700 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_CONST_A_V: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_CONST_B: u32 = 0x00000704 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_CONST_B_V: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS: u32 = 0x00000708 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X: Range = 2:0 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_Y: Range = 6:4 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_Z: Range = 10:8 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_W: Range = 14:12 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X_SRC_X: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X_SRC_Y: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X_SRC_Z: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X_SRC_W: u32 = 0x00000003 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X_CONST_A: u32 = 0x00000004 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X_CONST_B: u32 = 0x00000005 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_DST_X_NO_WRITE: u32 = 0x00000006 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE: Range = 17:16 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_THREE: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR: u32 = 0x00000003 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS: Range = 21:20 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS: Range = 25:24 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_TWO: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_THREE: u32 = 0x00000002 in headers::CLC7B5;
        pub NVC7B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_FOUR: u32 = 0x00000003 in headers::CLC7B5;
        pub NVC7B5_NOP: u32 = 0x00000100 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLC7B5;
        pub NVC7B5_SET_SRC_PHYS_MODE_FLA: Range = 9:9 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLC7B5;
        pub NVC7B5_SET_DST_PHYS_MODE_FLA: Range = 9:9 in headers::CLC7B5;
        pub NVC7B5_SET_SEMAPHORE_PAYLOAD_UPPER: u32 = 0x0000024c in headers::CLC7B5;
        pub NVC7B5_SET_SEMAPHORE_PAYLOAD_UPPER_PAYLOAD: Range = 31:0 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE: Range = 27:27 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_ONE_WORD: u32 = 0x00000000 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_NO_TIMESTAMP: u32 = 0x00000001 in headers::CLC7B5;
        pub NVC7B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_WITH_TIMESTAMP: u32 = 0x00000002 in headers::CLC7B5;
    }
}

/// HOPPER_DMA_COPY_A (`kernel-open/nvidia-uvm/clc8b5.h`, 535.261.03): 57-bit addresses.
pub mod hopper {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of this class the driver and the model rely on.
        pub const FACTS;

        pub NVC8B5_SET_SEMAPHORE_A: u32 = 0x00000240 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SEMAPHORE_A_UPPER: Range = 24:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SEMAPHORE_B: u32 = 0x00000244 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SEMAPHORE_B_LOWER: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SEMAPHORE_PAYLOAD: u32 = 0x00000248 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SEMAPHORE_PAYLOAD_PAYLOAD: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE: u32 = 0x00000260 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_TARGET: Range = 1:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE: u32 = 0x00000264 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_TARGET: Range = 1:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA: u32 = 0x00000300 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE: Range = 1:0 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_FLUSH_ENABLE: Range = 2:2 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_FLUSH_TYPE: Range = 25:25 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_FLUSH_TYPE_SYS: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_FLUSH_TYPE_GL: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE: Range = 4:3 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE: u32 = 0x00000003 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE: Range = 6:5 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE_NONE: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE_BLOCKING: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_INTERRUPT_TYPE_NON_BLOCKING: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT: Range = 7:7 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT: Range = 8:8 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE: Range = 9:9 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_REMAP_ENABLE: Range = 10:10 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_FORCE_RMWDISABLE: Range = 11:11 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SRC_TYPE: Range = 12:12 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SRC_TYPE_PHYSICAL: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DST_TYPE: Range = 13:13 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DST_TYPE_VIRTUAL: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DST_TYPE_PHYSICAL: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION: Range = 17:14 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMIN: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMAX: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IXOR: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IAND: u32 = 0x00000003 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IOR: u32 = 0x00000004 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IADD: u32 = 0x00000005 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_INC: u32 = 0x00000006 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_DEC: u32 = 0x00000007 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FADD: u32 = 0x0000000a in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMIN: u32 = 0x0000000b in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMAX: u32 = 0x0000000c in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN: Range = 18:18 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_SIGNED: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_UNSIGNED: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE: Range = 19:19 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_VPRMODE: Range = 22:22 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_VPRMODE_VPR_NONE: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_RESERVED_START_OF_COPY: Range = 24:24 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_DISABLE_PLC: Range = 26:26 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_RESERVED_ERR_CODE: Range = 31:28 in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_IN_UPPER: u32 = 0x00000400 in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_IN_UPPER_UPPER: Range = 24:0 in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_IN_LOWER: u32 = 0x00000404 in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_IN_LOWER_VALUE: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_OUT_UPPER: u32 = 0x00000408 in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_OUT_UPPER_UPPER: Range = 24:0 in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_OUT_LOWER: u32 = 0x0000040c in headers::UVM_CLC8B5;
        pub NVC8B5_OFFSET_OUT_LOWER_VALUE: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_PITCH_IN: u32 = 0x00000410 in headers::UVM_CLC8B5;
        pub NVC8B5_PITCH_IN_VALUE: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_PITCH_OUT: u32 = 0x00000414 in headers::UVM_CLC8B5;
        pub NVC8B5_PITCH_OUT_VALUE: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_LINE_LENGTH_IN: u32 = 0x00000418 in headers::UVM_CLC8B5;
        pub NVC8B5_LINE_LENGTH_IN_VALUE: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_LINE_COUNT: u32 = 0x0000041c in headers::UVM_CLC8B5;
        pub NVC8B5_LINE_COUNT_VALUE: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_CONST_A: u32 = 0x00000700 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_CONST_A_V: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_CONST_B: u32 = 0x00000704 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_CONST_B_V: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS: u32 = 0x00000708 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X: Range = 2:0 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_Y: Range = 6:4 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_Z: Range = 10:8 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_W: Range = 14:12 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_X: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_Y: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_Z: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X_SRC_W: u32 = 0x00000003 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_A: u32 = 0x00000004 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X_CONST_B: u32 = 0x00000005 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_DST_X_NO_WRITE: u32 = 0x00000006 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE: Range = 17:16 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_THREE: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR: u32 = 0x00000003 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS: Range = 21:20 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS: Range = 25:24 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_TWO: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_THREE: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_FOUR: u32 = 0x00000003 in headers::UVM_CLC8B5;
        pub NVC8B5_NOP: u32 = 0x00000100 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_PEER_ID: Range = 8:6 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SRC_PHYS_MODE_FLA: Range = 9:9 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_PEER_ID: Range = 8:6 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_DST_PHYS_MODE_FLA: Range = 9:9 in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER: u32 = 0x0000024c in headers::UVM_CLC8B5;
        pub NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER_PAYLOAD: Range = 31:0 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE: Range = 27:27 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_ONE_WORD: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_NO_TIMESTAMP: u32 = 0x00000001 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_WITH_TIMESTAMP: u32 = 0x00000002 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_COPY_TYPE: Range = 21:20 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_COPY_TYPE_DEFAULT: u32 = 0x00000000 in headers::UVM_CLC8B5;
        pub NVC8B5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE: Range = 23:23 in headers::UVM_CLC8B5;
    }
}

/// BLACKWELL_DMA_COPY_A (open-gpu-doc `classes/dma-copy/clc9b5.h`).
pub mod blackwell_a {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of this class the driver and the model rely on.
        pub const FACTS;

        pub NVC9B5_SET_SEMAPHORE_A: u32 = 0x00000240 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SEMAPHORE_A_UPPER: Range = 24:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SEMAPHORE_B: u32 = 0x00000244 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SEMAPHORE_B_LOWER: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SEMAPHORE_PAYLOAD: u32 = 0x00000248 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SEMAPHORE_PAYLOAD_PAYLOAD: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE: u32 = 0x00000260 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_TARGET: Range = 1:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE: u32 = 0x00000264 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_TARGET: Range = 1:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA: u32 = 0x00000300 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DATA_TRANSFER_TYPE: Range = 1:0 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_FLUSH_ENABLE: Range = 2:2 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_FLUSH_TYPE: Range = 25:25 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_FLUSH_TYPE_SYS: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_FLUSH_TYPE_GL: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_TYPE: Range = 4:3 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE: u32 = 0x00000003 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_INTERRUPT_TYPE: Range = 6:5 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_INTERRUPT_TYPE_NONE: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_INTERRUPT_TYPE_BLOCKING: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_INTERRUPT_TYPE_NON_BLOCKING: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT: Range = 7:7 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DST_MEMORY_LAYOUT: Range = 8:8 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_MULTI_LINE_ENABLE: Range = 9:9 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_REMAP_ENABLE: Range = 10:10 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SRC_TYPE: Range = 12:12 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SRC_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SRC_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DST_TYPE: Range = 13:13 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DST_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DST_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION: Range = 17:14 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMIN: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMAX: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IXOR: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IAND: u32 = 0x00000003 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IOR: u32 = 0x00000004 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IADD: u32 = 0x00000005 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_INC: u32 = 0x00000006 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_DEC: u32 = 0x00000007 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FADD: u32 = 0x0000000a in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMIN: u32 = 0x0000000b in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMAX: u32 = 0x0000000c in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN: Range = 18:18 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_SIGNED: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_UNSIGNED: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE: Range = 19:19 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_VPRMODE: Range = 22:22 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_VPRMODE_VPR_NONE: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_RESERVED_START_OF_COPY: Range = 24:24 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_DISABLE_PLC: Range = 26:26 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_RESERVED_ERR_CODE: Range = 31:28 in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_IN_UPPER: u32 = 0x00000400 in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_IN_UPPER_UPPER: Range = 24:0 in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_IN_LOWER: u32 = 0x00000404 in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_IN_LOWER_VALUE: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_OUT_UPPER: u32 = 0x00000408 in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_OUT_UPPER_UPPER: Range = 24:0 in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_OUT_LOWER: u32 = 0x0000040c in headers::CLC9B5_DOC;
        pub NVC9B5_OFFSET_OUT_LOWER_VALUE: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_PITCH_IN: u32 = 0x00000410 in headers::CLC9B5_DOC;
        pub NVC9B5_PITCH_IN_VALUE: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_PITCH_OUT: u32 = 0x00000414 in headers::CLC9B5_DOC;
        pub NVC9B5_PITCH_OUT_VALUE: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_LINE_LENGTH_IN: u32 = 0x00000418 in headers::CLC9B5_DOC;
        pub NVC9B5_LINE_LENGTH_IN_VALUE: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_LINE_COUNT: u32 = 0x0000041c in headers::CLC9B5_DOC;
        pub NVC9B5_LINE_COUNT_VALUE: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_CONST_A: u32 = 0x00000700 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_CONST_A_V: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_CONST_B: u32 = 0x00000704 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_CONST_B_V: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS: u32 = 0x00000708 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X: Range = 2:0 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_Y: Range = 6:4 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_Z: Range = 10:8 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_W: Range = 14:12 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X_SRC_X: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X_SRC_Y: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X_SRC_Z: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X_SRC_W: u32 = 0x00000003 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X_CONST_A: u32 = 0x00000004 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X_CONST_B: u32 = 0x00000005 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_DST_X_NO_WRITE: u32 = 0x00000006 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE: Range = 17:16 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_THREE: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR: u32 = 0x00000003 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS: Range = 21:20 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS: Range = 25:24 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_TWO: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_THREE: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_FOUR: u32 = 0x00000003 in headers::CLC9B5_DOC;
        pub NVC9B5_NOP: u32 = 0x00000100 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SRC_PHYS_MODE_FLA: Range = 9:9 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_DST_PHYS_MODE_FLA: Range = 9:9 in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SEMAPHORE_PAYLOAD_UPPER: u32 = 0x0000024c in headers::CLC9B5_DOC;
        pub NVC9B5_SET_SEMAPHORE_PAYLOAD_UPPER_PAYLOAD: Range = 31:0 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE: Range = 27:27 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_ONE_WORD: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_NO_TIMESTAMP: u32 = 0x00000001 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_WITH_TIMESTAMP: u32 = 0x00000002 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_COPY_TYPE: Range = 21:20 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_COPY_TYPE_DEFAULT: u32 = 0x00000000 in headers::CLC9B5_DOC;
        pub NVC9B5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE: Range = 23:23 in headers::CLC9B5_DOC;
    }
}

/// BLACKWELL_DMA_COPY_B (open-gpu-doc `classes/dma-copy/clcab5.h`).
pub mod blackwell_b {
    use super::headers;
    use crate::constants;

    constants! {
        /// Facts of this class the driver and the model rely on.
        pub const FACTS;

        pub NVCAB5_SET_SEMAPHORE_A: u32 = 0x00000240 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SEMAPHORE_A_UPPER: Range = 24:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SEMAPHORE_B: u32 = 0x00000244 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SEMAPHORE_B_LOWER: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SEMAPHORE_PAYLOAD: u32 = 0x00000248 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SEMAPHORE_PAYLOAD_PAYLOAD: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE: u32 = 0x00000260 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_TARGET: Range = 1:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE: u32 = 0x00000264 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_TARGET: Range = 1:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_TARGET_LOCAL_FB: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_TARGET_NONCOHERENT_SYSMEM: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_BASIC_KIND: Range = 5:2 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA: u32 = 0x00000300 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DATA_TRANSFER_TYPE: Range = 1:0 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PIPELINED: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_FLUSH_ENABLE: Range = 2:2 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_FLUSH_TYPE: Range = 25:25 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_FLUSH_TYPE_SYS: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_FLUSH_TYPE_GL: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_TYPE: Range = 4:3 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_TYPE_NONE: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_CONDITIONAL_INTR_SEMAPHORE: u32 = 0x00000003 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_INTERRUPT_TYPE: Range = 6:5 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_INTERRUPT_TYPE_NONE: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_INTERRUPT_TYPE_BLOCKING: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_INTERRUPT_TYPE_NON_BLOCKING: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SRC_MEMORY_LAYOUT: Range = 7:7 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DST_MEMORY_LAYOUT: Range = 8:8 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DST_MEMORY_LAYOUT_BLOCKLINEAR: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_MULTI_LINE_ENABLE: Range = 9:9 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_REMAP_ENABLE: Range = 10:10 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SRC_TYPE: Range = 12:12 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SRC_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SRC_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DST_TYPE: Range = 13:13 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DST_TYPE_VIRTUAL: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DST_TYPE_PHYSICAL: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION: Range = 17:14 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMIN: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IMAX: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IXOR: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IAND: u32 = 0x00000003 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IOR: u32 = 0x00000004 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_IADD: u32 = 0x00000005 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_INC: u32 = 0x00000006 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_DEC: u32 = 0x00000007 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FADD: u32 = 0x0000000a in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMIN: u32 = 0x0000000b in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_FMAX: u32 = 0x0000000c in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN: Range = 18:18 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_SIGNED: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_SIGN_UNSIGNED: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE: Range = 19:19 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_VPRMODE: Range = 22:22 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_VPRMODE_VPR_NONE: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_RESERVED_START_OF_COPY: Range = 24:24 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DISABLE_PLC: Range = 26:26 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_RESERVED_ERR_CODE: Range = 31:28 in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_IN_UPPER: u32 = 0x00000400 in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_IN_UPPER_UPPER: Range = 24:0 in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_IN_LOWER: u32 = 0x00000404 in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_IN_LOWER_VALUE: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_OUT_UPPER: u32 = 0x00000408 in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_OUT_UPPER_UPPER: Range = 24:0 in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_OUT_LOWER: u32 = 0x0000040c in headers::CLCAB5_DOC;
        pub NVCAB5_OFFSET_OUT_LOWER_VALUE: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_PITCH_IN: u32 = 0x00000410 in headers::CLCAB5_DOC;
        pub NVCAB5_PITCH_IN_VALUE: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_PITCH_OUT: u32 = 0x00000414 in headers::CLCAB5_DOC;
        pub NVCAB5_PITCH_OUT_VALUE: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_LINE_LENGTH_IN: u32 = 0x00000418 in headers::CLCAB5_DOC;
        pub NVCAB5_LINE_LENGTH_IN_VALUE: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_LINE_COUNT: u32 = 0x0000041c in headers::CLCAB5_DOC;
        pub NVCAB5_LINE_COUNT_VALUE: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_CONST_A: u32 = 0x00000700 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_CONST_A_V: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_CONST_B: u32 = 0x00000704 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_CONST_B_V: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS: u32 = 0x00000708 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X: Range = 2:0 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_Y: Range = 6:4 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_Z: Range = 10:8 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_W: Range = 14:12 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X_SRC_X: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X_SRC_Y: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X_SRC_Z: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X_SRC_W: u32 = 0x00000003 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X_CONST_A: u32 = 0x00000004 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X_CONST_B: u32 = 0x00000005 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_DST_X_NO_WRITE: u32 = 0x00000006 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_COMPONENT_SIZE: Range = 17:16 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_ONE: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_TWO: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_THREE: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR: u32 = 0x00000003 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_NUM_SRC_COMPONENTS: Range = 21:20 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS: Range = 25:24 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_ONE: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_TWO: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_THREE: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_REMAP_COMPONENTS_NUM_DST_COMPONENTS_FOUR: u32 = 0x00000003 in headers::CLCAB5_DOC;
        pub NVCAB5_NOP: u32 = 0x00000100 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SRC_PHYS_MODE_FLA: Range = 9:9 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_TARGET_PEERMEM: u32 = 0x00000003 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_PEER_ID: Range = 8:6 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_DST_PHYS_MODE_FLA: Range = 9:9 in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SEMAPHORE_PAYLOAD_UPPER: u32 = 0x0000024c in headers::CLCAB5_DOC;
        pub NVCAB5_SET_SEMAPHORE_PAYLOAD_UPPER_PAYLOAD: Range = 31:0 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE: Range = 27:27 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_ONE_WORD: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_NO_TIMESTAMP: u32 = 0x00000001 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_WITH_TIMESTAMP: u32 = 0x00000002 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_COPY_TYPE: Range = 21:20 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_COPY_TYPE_DEFAULT: u32 = 0x00000000 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE: Range = 23:23 in headers::CLCAB5_DOC;
        pub NVCAB5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PREFETCH: u32 = 0x00000003 in headers::CLCAB5_DOC;
    }
}

/// Facts of [`PhysModeTarget`] (no register field carries the enum, see [`NVC5B5_SET_SRC_PHYS_MODE`]).
pub const PHYS_MODE_TARGET_FACTS: &[super::FactGroup] = &[&[<PhysModeTarget as super::FieldType>::VALUE_FACTS]];

/// Every fact table of this module (each one goes into [`super::FACT_TABLES`]).
pub const FACT_TABLES: &[&[super::FactGroup]] = &[
    method::FACTS,
    FACTS,
    VALUE_FACTS,
    PHYS_MODE_TARGET_FACTS,
    ampere_a::FACTS,
    ampere_b::FACTS,
    hopper::FACTS,
    blackwell_a::FACTS,
    blackwell_b::FACTS,
];
