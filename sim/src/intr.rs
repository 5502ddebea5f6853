//! The model's CPU interrupt tree: the VF-space `CPU_INTR_TOP`/`CPU_INTR_LEAF` registers
//! (`nvgpu::hw::intr`, `turing/tu102/dev_vm.h`) and the "MSI line" they drive.
//!
//! | register | behaviour |
//! |---|---|
//! | `CPU_INTR_LEAF(i)` (VF+0x1000, 8) | pending vectors 32i..32i+31; a written 1 clears that bit (W1C) |
//! | `CPU_INTR_LEAF_EN_SET(i)` / `_EN_CLEAR(i)` (VF+0x1200/0x1400) | written 1s enable / disable vectors; both read the enabled set |
//! | `CPU_INTR_TOP(0)` (VF+0x1600) | bit s: leaf 2s or 2s+1 has a pending, enabled bit (read-only) |
//! | `CPU_INTR_TOP_EN_SET(0)` / `_EN_CLEAR(0)` (VF+0x1608/0x1610) | written 1s enable / disable subtrees; both read the enabled set |
//!
//! The line ([`InterruptTree::line`]) is up while `TOP & TOP_EN` is non-zero.
//!
//! Vectors are assigned by the model's GSP-RM ([`nonstall_vector`]): engine notifications in
//! subtree 0 (vectors 0..=63), as `intrInitSubtreeMap_TU102` places
//! `ESCHED_DRIVEN_ENGINE_NOTIFICATION`. GSP-RM tells the CPU side in its answer to
//! `NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE` ([`kernel_table`]).

use nvgpu::hw::intr::{
    leaf_subtree, vector_bit, vector_leaf, NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF as LEAF,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF_EN_CLEAR as LEAF_EN_CLEAR,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF_EN_SET as LEAF_EN_SET,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF__SIZE_1 as LEAVES, NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP as TOP,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP_EN_CLEAR as TOP_EN_CLEAR,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP_EN_SET as TOP_EN_SET,
};
use nvgpu::hw::vm::VF_BASE;
use nvgpu::rm::fifo as f;
use nvgpu::rm::intr::{
    Nv2080CtrlInternalIntrGetKernelTableEntry as TableEntry, Nv2080CtrlInternalIntrGetKernelTableParams as TableParams,
    Nv2080IntrCategorySubtreeMap as SubtreeMap, MC_ENGINE_IDX_CE0, MC_ENGINE_IDX_GR0, MC_ENGINE_IDX_REPLAYABLE_FAULT,
    NV2080_INTR_CATEGORY_ENUM_COUNT, NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION,
    NV2080_INTR_CATEGORY_UVM_OWNED, NV2080_INTR_INVALID_SUBTREE, NV_CPU_INTR_UVM_SUBTREE_START, NV_INTR_VECTOR_INVALID,
};

/// The non-stall (notification) vector the model's GSP-RM gives the engine of
/// `NV2080_ENGINE_TYPE_*` `engine_type`: graphics 0, copy engine n 1 + n; `None` for others.
/// (A model assignment, reported to the driver by [`kernel_table`].)
pub fn nonstall_vector(engine_type: u32) -> Option<u32> {
    if engine_type == f::NV2080_ENGINE_TYPE_GRAPHICS {
        Some(0)
    } else {
        engine_type.checked_sub(f::NV2080_ENGINE_TYPE_COPY0).filter(|n| *n < 32).map(|n| 1 + n)
    }
}

/// The vector the model's GSP-RM gives the replayable fault buffer: the first of subtree 1,
/// the subtree RM gives `NV2080_INTR_CATEGORY_UVM_OWNED` (`NV_CPU_INTR_UVM_SUBTREE_START`,
/// `dev_vm_addendum.h`). A model assignment, reported by [`kernel_table`].
pub const REPLAYABLE_FAULT_VECTOR: u32 = 64;

/// The model GSP-RM's answer to `NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE`: a record for
/// graphics (`MC_ENGINE_IDX_GR0`) and each of the model's `copy_engines` copy engines
/// (`MC_ENGINE_IDX_CE(n)`) with its [`nonstall_vector`], and the notification category's
/// subtree (0), then the replayable fault buffer's record (`MC_ENGINE_IDX_REPLAYABLE_FAULT`,
/// `vectorStall` [`REPLAYABLE_FAULT_VECTOR`]) and the UVM-owned category's subtree (1).
///
/// Where the model differs from GSP-RM: it raises no engine stall interrupts, so the engines'
/// `vectorStall` is `NV_INTR_VECTOR_INVALID` and the other categories are
/// `NV2080_INTR_INVALID_SUBTREE`; `pmcIntrMask` is 0 (none in the legacy tree), as for engines
/// that report through the CPU_INTR tree.
pub fn kernel_table(copy_engines: u32) -> TableParams {
    let mut params = TableParams::default();
    let engines = core::iter::once((MC_ENGINE_IDX_GR0, f::NV2080_ENGINE_TYPE_GRAPHICS))
        .chain((0..copy_engines.min(10)).map(|n| (MC_ENGINE_IDX_CE0 + n as u16, f::NV2080_ENGINE_TYPE_COPY0 + n)));
    let mut len = 0;
    for (slot, (engine_idx, engine_type)) in params.table.iter_mut().zip(engines) {
        *slot = TableEntry {
            engine_idx,
            pmc_intr_mask: 0,
            vector_stall: NV_INTR_VECTOR_INVALID,
            vector_non_stall: nonstall_vector(engine_type).unwrap_or(NV_INTR_VECTOR_INVALID),
            ..Default::default()
        };
        len += 1;
    }
    if let Some(slot) = params.table.get_mut(len as usize) {
        *slot = TableEntry {
            engine_idx: MC_ENGINE_IDX_REPLAYABLE_FAULT,
            pmc_intr_mask: 0,
            vector_stall: REPLAYABLE_FAULT_VECTOR,
            vector_non_stall: NV_INTR_VECTOR_INVALID,
            ..Default::default()
        };
        len += 1;
    }
    params.table_len = len;
    let invalid = SubtreeMap { subtree_start: NV2080_INTR_INVALID_SUBTREE, subtree_end: NV2080_INTR_INVALID_SUBTREE };
    params.subtree_map = [invalid; NV2080_INTR_CATEGORY_ENUM_COUNT];
    params.subtree_map[NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION] =
        SubtreeMap { subtree_start: 0, subtree_end: 0 };
    let uvm = NV_CPU_INTR_UVM_SUBTREE_START;
    debug_assert_eq!(u32::from(uvm), leaf_subtree(vector_leaf(REPLAYABLE_FAULT_VECTOR)));
    params.subtree_map[NV2080_INTR_CATEGORY_UVM_OWNED] = SubtreeMap { subtree_start: uvm, subtree_end: uvm };
    params
}

/// Leaf, enable and top-enable state.
#[derive(Clone, Debug, Default)]
pub struct InterruptTree {
    leaf: [u32; LEAVES as usize],
    leaf_en: [u32; LEAVES as usize],
    top_en: u32,
    /// Vectors raised so far (pending or not).
    pub raised: u64,
}

impl InterruptTree {
    /// Marks `vector` pending (whether enabled or not, as the hardware latches it).
    pub fn raise(&mut self, vector: u32) {
        if let Some(leaf) = self.leaf.get_mut(vector_leaf(vector) as usize) {
            *leaf |= 1 << vector_bit(vector);
            self.raised += 1;
        }
    }

    /// `CPU_INTR_TOP(0)`.
    pub fn top(&self) -> u32 {
        let mut top = 0;
        for (i, (leaf, en)) in self.leaf.iter().zip(&self.leaf_en).enumerate() {
            if leaf & en != 0 {
                top |= 1 << leaf_subtree(i as u32);
            }
        }
        top
    }

    /// The interrupt line to the CPU.
    pub fn line(&self) -> bool {
        self.top() & self.top_en != 0
    }

    /// Whether `offset` is one of the tree's registers.
    pub fn claims(offset: u32) -> bool {
        Self::decode(offset).is_some()
    }

    fn decode(offset: u32) -> Option<(u32, usize)> {
        let arrays = [
            (LEAF::address(VF_BASE, 0), LEAVES),
            (LEAF_EN_SET::address(VF_BASE, 0), LEAVES),
            (LEAF_EN_CLEAR::address(VF_BASE, 0), LEAVES),
            (TOP::address(VF_BASE, 0), 1),
            (TOP_EN_SET::address(VF_BASE, 0), 1),
            (TOP_EN_CLEAR::address(VF_BASE, 0), 1),
        ];
        arrays.into_iter().find_map(|(first, count)| {
            let index = offset.checked_sub(first)? / 4;
            (offset.is_multiple_of(4) && index < count).then_some((first, index as usize))
        })
    }

    /// A BAR0 access (at an offset [`Self::claims`]); `None` for a write to read-only `TOP`.
    pub fn access(&mut self, offset: u32, write: Option<u32>) -> Option<u32> {
        let (first, i) = Self::decode(offset)?;
        let leaf_en = self.leaf_en.get_mut(i);
        match (first, write) {
            (a, None) if a == LEAF::address(VF_BASE, 0) => self.leaf.get(i).copied(),
            (a, Some(v)) if a == LEAF::address(VF_BASE, 0) => {
                *self.leaf.get_mut(i)? &= !v;
                Some(0)
            }
            (a, None) if a == LEAF_EN_SET::address(VF_BASE, 0) || a == LEAF_EN_CLEAR::address(VF_BASE, 0) => {
                leaf_en.map(|e| *e)
            }
            (a, Some(v)) if a == LEAF_EN_SET::address(VF_BASE, 0) => {
                *leaf_en? |= v;
                Some(0)
            }
            (a, Some(v)) if a == LEAF_EN_CLEAR::address(VF_BASE, 0) => {
                *leaf_en? &= !v;
                Some(0)
            }
            (a, None) if a == TOP::address(VF_BASE, 0) => Some(self.top()),
            (a, Some(_)) if a == TOP::address(VF_BASE, 0) => None,
            (_, None) => Some(self.top_en),
            (a, Some(v)) if a == TOP_EN_SET::address(VF_BASE, 0) => {
                self.top_en |= v;
                Some(0)
            }
            (_, Some(v)) => {
                self.top_en &= !v;
                Some(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_enabled_leaves_show_in_top_and_clear_by_writing_one() {
        let mut t = InterruptTree::default();
        let leaf = |i| LEAF::address(VF_BASE, i);
        t.raise(37);
        assert_eq!(t.access(leaf(1), None), Some(1 << 5));
        assert_eq!(t.top(), 0, "not enabled");
        t.access(LEAF_EN_SET::address(VF_BASE, 1), Some(1 << 5));
        assert_eq!(t.access(TOP::address(VF_BASE, 0), None), Some(1));
        assert!(!t.line(), "subtree not enabled");
        t.access(TOP_EN_SET::address(VF_BASE, 0), Some(1));
        assert!(t.line());
        t.access(leaf(1), Some(1 << 4));
        assert!(t.line(), "another bit written");
        t.access(leaf(1), Some(1 << 5));
        assert!(!t.line());
        assert_eq!(t.access(leaf(1), None), Some(0));
        t.raise(200);
        assert_eq!(t.access(leaf(6), None), Some(1 << 8));
        assert_eq!(t.top(), 0);
        t.access(LEAF_EN_SET::address(VF_BASE, 6), Some(!0));
        t.access(LEAF_EN_CLEAR::address(VF_BASE, 6), Some(!(1 << 8)));
        assert_eq!(t.access(LEAF_EN_SET::address(VF_BASE, 6), None), Some(1 << 8));
        assert_eq!(t.top(), 1 << 3);
        assert_eq!(t.access(TOP::address(VF_BASE, 0), Some(0)), None);
        assert!(!InterruptTree::claims(LEAF::address(VF_BASE, 8)));
        assert_eq!(nonstall_vector(f::NV2080_ENGINE_TYPE_COPY0 + 2), Some(3));
    }

    #[test]
    fn kernel_table_names_graphics_each_copy_engine_and_the_replayable_fault_buffer() {
        let t = kernel_table(2);
        assert_eq!(t.table_len, 4);
        let rows: alloc::vec::Vec<(u16, u32, u32)> =
            t.table[..4].iter().map(|e| (e.engine_idx, e.vector_stall, e.vector_non_stall)).collect();
        let none = NV_INTR_VECTOR_INVALID;
        assert_eq!(
            rows,
            [
                (MC_ENGINE_IDX_GR0, none, 0),
                (MC_ENGINE_IDX_CE0, none, 1),
                (MC_ENGINE_IDX_CE0 + 1, none, 2),
                (MC_ENGINE_IDX_REPLAYABLE_FAULT, REPLAYABLE_FAULT_VECTOR, none)
            ]
        );
        assert_eq!(t.subtree_map[NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION], SubtreeMap::default());
        assert_eq!(t.subtree_map[NV2080_INTR_CATEGORY_UVM_OWNED], SubtreeMap { subtree_start: 1, subtree_end: 1 });
        assert_eq!(t.subtree_map[0].subtree_start, NV2080_INTR_INVALID_SUBTREE);
        assert_eq!(kernel_table(99).table_len, 12, "MC_ENGINE_IDX_CE0..=CE9 at most, and the fault buffer");
    }
}
