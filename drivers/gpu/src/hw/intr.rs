//! The CPU interrupt tree of the "virtual function" register space, what a GSP-client RM reads
//! and writes on Turing and later (`GPU_VREG_RD32/WR32` in `src/nvidia/src/kernel/gpu/intr/arch/
//! turing/intr_tu102.c`, `intr_swintr_tu102.c`, `ampere/intr_cpu_ga102.c`, 535.261.03).
//!
//! Follows `turing/tu102/dev_vm.h` (offsets relative to `hw::vm::VF_BASE`, 0xB80000). The tree:
//! interrupt vector `v` is bit `v % 32` of `CPU_INTR_LEAF(v / 32)`
//! (`NV_CTRL_INTR_GPU_VECTOR_TO_LEAF_REG/_BIT`); leaves `2s` and `2s + 1` form subtree `s`
//! (`NV_CTRL_INTR_SUBTREE_TO_LEAF_IDX_START/END`), which is bit `s` of `CPU_INTR_TOP`
//! (`src/nvidia/arch/nvalloc/common/inc/dev_ctrl_defines.h`). A leaf is W1C: writing 1 clears the
//! bit. Engine notifications (non-stall interrupts) use subtree 0
//! (`intrInitSubtreeMap_TU102`: `NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION` is
//! `CPU_INTR_TOP_SUBTREE(0)`), so their vectors are 0..=63.
//!
//! Hopper's `hopper/gh100/dev_vm.h` lists the same leaf offsets (16 leaves) and no `CPU_INTR_TOP`;
//! the TU102 declarations serve every family here, as for the TLB invalidate registers.

use super::headers;
use crate::{constants, registers};

constants! {
    /// Sizes of the register arrays.
    pub const CONSTANT_FACTS;

    /// `CPU_INTR_TOP` registers (one: subtrees 0..=31).
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP__SIZE_1: u32 = 1 in headers::TU102_DEV_VM;
    /// Leaf registers of the VF tree (Turing, Ampere; Hopper has 16).
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF__SIZE_1: u32 = 8 in headers::TU102_DEV_VM;
    /// `TOP` value of a subtree with an enabled pending leaf bit.
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP_SUBTREE_INTR_PENDING: u32 = 1 in headers::TU102_DEV_VM;
}

registers! {
    /// The interrupt tree registers.
    pub const FACTS;

    /// Which subtrees have an enabled, pending leaf bit (read-only).
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP(base + 0x00001600, stride 4) in headers::TU102_DEV_VM {
        31:0 VALUE => value: u32,
    }

    /// Writing 1s enables those subtrees' delivery to the CPU; reads the enabled set.
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP_EN_SET(base + 0x00001608, stride 4) in headers::TU102_DEV_VM {
        31:0 VALUE => value: u32,
    }

    /// Writing 1s disables those subtrees; reads the enabled set.
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP_EN_CLEAR(base + 0x00001610, stride 4) in headers::TU102_DEV_VM {
        31:0 VALUE => value: u32,
    }

    /// Pending vectors `32 i ..= 32 i + 31`; writing 1 to a bit clears it.
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF(base + 0x00001000, stride 4) in headers::TU102_DEV_VM {
        31:0 VALUE => value: u32,
    }

    /// Writing 1s enables those vectors; reads the enabled set.
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF_EN_SET(base + 0x00001200, stride 4) in headers::TU102_DEV_VM {
        31:0 VALUE => value: u32,
    }

    /// Writing 1s disables those vectors; reads the enabled set.
    pub NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF_EN_CLEAR(base + 0x00001400, stride 4) in headers::TU102_DEV_VM {
        31:0 VALUE => value: u32,
    }
}

/// The leaf register of interrupt vector `vector` (`NV_CTRL_INTR_GPU_VECTOR_TO_LEAF_REG`).
pub const fn vector_leaf(vector: u32) -> u32 {
    vector / 32
}

/// The bit of `vector` in its leaf (`NV_CTRL_INTR_GPU_VECTOR_TO_LEAF_BIT`).
pub const fn vector_bit(vector: u32) -> u32 {
    vector % 32
}

/// The subtree (`CPU_INTR_TOP` bit) of leaf `leaf` (`NV_CTRL_INTR_LEAF_IDX_TO_SUBTREE`).
pub const fn leaf_subtree(leaf: u32) -> u32 {
    leaf / 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::vm::VF_BASE;

    #[test]
    fn the_tree_sits_where_rm_reads_it() {
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP::address(VF_BASE, 0), 0x00B8_1600);
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF::address(VF_BASE, 1), 0x00B8_1004);
        assert_eq!(NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF_EN_CLEAR::address(VF_BASE, 7), 0x00B8_141C);
        // Vector 37: leaf 1, bit 5, subtree 0.
        assert_eq!((vector_leaf(37), vector_bit(37), leaf_subtree(vector_leaf(37))), (1, 5, 0));
        assert_eq!(leaf_subtree(3), 1);
    }
}
