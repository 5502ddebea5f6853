//! Interrupt service for engine notifications (non-stall interrupts), through the VF CPU
//! interrupt tree (`hw::intr`, `turing/tu102/dev_vm.h`) as a GSP-client RM services them
//! (`intr_tu102.c`): enable the vectors' leaf bits and the subtree in `CPU_INTR_TOP_EN_SET`, and
//! on an interrupt read `CPU_INTR_TOP`, read the pending subtrees' leaves, write the bits
//! back to clear them (W1C) before acting, so that a notification raised while the work is
//! handled raises the line again.
//!
//! Which vector an engine notifies on is GSP-RM's to say
//! (`NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE`, `vectorNonStall` per engine,
//! [`crate::rm::intr::KernelIntrTable`]): [`Interrupts::from_kernel_table`] enables what
//! the table names; [`Interrupts::enable`] takes the vectors from the caller.

use alloc::vec::Vec;
use core::fmt;

use crate::hw::intr::{
    leaf_subtree, vector_bit, vector_leaf, NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF as LEAF,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF_EN_CLEAR as LEAF_EN_CLEAR,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF_EN_SET as LEAF_EN_SET,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_LEAF__SIZE_1 as LEAVES, NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP as TOP,
    NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP_EN_SET as TOP_EN_SET,
};
use crate::hw::vm::VF_BASE;
use crate::hw::RegisterIo;
use crate::rm::intr::KernelIntrTable;

/// An interrupt the service routine found and acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterruptEvent {
    /// An engine finished work that asked for a notification (`NON_STALL_INTERRUPT`, a copy
    /// with an interrupt): `engine` is the caller's tag for the vector.
    NonStall { engine: u32, vector: u32 },
    /// A pending, enabled vector nobody registered (acknowledged so that it cannot storm).
    Unexpected { vector: u32 },
}

/// A vector the driver cannot enable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorOutOfRange {
    pub vector: u32,
}

impl fmt::Display for VectorOutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "interrupt vector {} is beyond the {} CPU_INTR_LEAF registers", self.vector, LEAVES)
    }
}

/// The notification vectors this driver services, and the service routine.
pub struct Interrupts {
    /// (engine tag, vector).
    vectors: Vec<(u32, u32)>,
}

impl Interrupts {
    /// Enables each `(engine tag, vector)`'s leaf bit and its subtree.
    pub fn enable(io: &(impl RegisterIo + ?Sized), vectors: &[(u32, u32)]) -> Result<Self, VectorOutOfRange> {
        if let Some(&(_, vector)) = vectors.iter().find(|(_, v)| vector_leaf(*v) >= LEAVES) {
            return Err(VectorOutOfRange { vector });
        }
        let mut subtrees = 0u32;
        for &(_, vector) in vectors {
            LEAF_EN_SET::default().with(LEAF_EN_SET::VALUE, 1 << vector_bit(vector)).write(
                io,
                VF_BASE,
                vector_leaf(vector),
            );
            subtrees |= 1 << leaf_subtree(vector_leaf(vector));
        }
        TOP_EN_SET::default().with(TOP_EN_SET::VALUE, subtrees).write(io, VF_BASE, 0);
        Ok(Interrupts { vectors: vectors.to_vec() })
    }

    /// Enables the non-stall vector of every graphics and copy engine in GSP-RM's interrupt
    /// table, each tagged with its `NV2080_ENGINE_TYPE_*` (the type a channel is allocated
    /// for), as RM enables every `intrVectorNonStall` of its table (`intrStateInit_TU102`'s
    /// loop in `intr_tu102.c`).
    pub fn from_kernel_table(
        io: &(impl RegisterIo + ?Sized),
        table: &KernelIntrTable,
    ) -> Result<Self, VectorOutOfRange> {
        Self::enable(io, &table.notification_vectors())
    }

    /// The vector of the engine tagged `engine`, if this services one.
    pub fn vector_of(&self, engine: u32) -> Option<u32> {
        self.vectors.iter().find(|(e, _)| *e == engine).map(|&(_, v)| v)
    }

    /// The `(engine tag, vector)` pairs enabled.
    pub fn vectors(&self) -> &[(u32, u32)] {
        &self.vectors
    }

    /// Disables the vectors again (the subtrees stay enabled: other owners may use them).
    pub fn disable(self, io: &(impl RegisterIo + ?Sized)) {
        for (_, vector) in self.vectors {
            LEAF_EN_CLEAR::default().with(LEAF_EN_CLEAR::VALUE, 1 << vector_bit(vector)).write(
                io,
                VF_BASE,
                vector_leaf(vector),
            );
        }
    }

    /// The service routine: reads `CPU_INTR_TOP`, then the leaves of each pending subtree, and
    /// acknowledges every pending, enabled bit; returns one event per bit.
    pub fn service(&self, io: &(impl RegisterIo + ?Sized)) -> Vec<InterruptEvent> {
        let mut events = Vec::new();
        let top = TOP::read(io, VF_BASE, 0).value();
        for leaf in 0..LEAVES {
            if top & (1 << leaf_subtree(leaf)) == 0 {
                continue;
            }
            let enabled = LEAF_EN_SET::read(io, VF_BASE, leaf).value();
            let pending = LEAF::read(io, VF_BASE, leaf).value() & enabled;
            if pending == 0 {
                continue;
            }
            LEAF::default().with(LEAF::VALUE, pending).write(io, VF_BASE, leaf);
            for bit in 0..32 {
                if pending & (1 << bit) == 0 {
                    continue;
                }
                let vector = leaf * 32 + bit;
                events.push(match self.vectors.iter().find(|(_, v)| *v == vector) {
                    Some(&(engine, vector)) => InterruptEvent::NonStall { engine, vector },
                    None => InterruptEvent::Unexpected { vector },
                });
            }
        }
        events
    }
}

/// One vector driven the way UVM drives the replayable fault buffer's on Turing and later
/// (`uvm_gpu_isr.c`, `uvm_turing_fault_buffer.c`, with the leaf register and bit RM hands it
/// from `kgmmuGetFaultRegisterMappings_TU102`): the top half sees the leaf bit pending and
/// disables the vector; the bottom half, when done, enables it again and clears the bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorControl {
    vector: u32,
}

impl VectorControl {
    pub fn new(vector: u32) -> Result<Self, VectorOutOfRange> {
        if vector_leaf(vector) >= LEAVES {
            return Err(VectorOutOfRange { vector });
        }
        Ok(VectorControl { vector })
    }

    pub fn vector(&self) -> u32 {
        self.vector
    }

    fn bit(&self) -> u32 {
        1 << vector_bit(self.vector)
    }

    /// Enables the vector's leaf bit and its subtree.
    pub fn enable(&self, io: &(impl RegisterIo + ?Sized)) {
        let leaf = vector_leaf(self.vector);
        LEAF_EN_SET::default().with(LEAF_EN_SET::VALUE, self.bit()).write(io, VF_BASE, leaf);
        TOP_EN_SET::default().with(TOP_EN_SET::VALUE, 1 << leaf_subtree(leaf)).write(io, VF_BASE, 0);
    }

    /// Disables the vector's leaf bit (the subtree stays enabled: other vectors share it).
    pub fn disable(&self, io: &(impl RegisterIo + ?Sized)) {
        LEAF_EN_CLEAR::default().with(LEAF_EN_CLEAR::VALUE, self.bit()).write(io, VF_BASE, vector_leaf(self.vector));
    }

    /// Whether the vector's leaf bit is pending (enabled or not).
    pub fn pending(&self, io: &(impl RegisterIo + ?Sized)) -> bool {
        LEAF::read(io, VF_BASE, vector_leaf(self.vector)).value() & self.bit() != 0
    }

    /// Clears the pending bit (write one to clear).
    pub fn clear(&self, io: &(impl RegisterIo + ?Sized)) {
        LEAF::default().with(LEAF::VALUE, self.bit()).write(io, VF_BASE, vector_leaf(self.vector));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::RefCell;
    use std::collections::BTreeMap;

    /// Leaves W1C, enables set/clear, TOP computed: enough of the tree to drive the routine.
    #[derive(Default)]
    struct Tree(RefCell<BTreeMap<u32, u32>>);
    impl RegisterIo for Tree {
        fn read32(&self, offset: u32) -> u32 {
            let m = self.0.borrow();
            if offset == TOP::address(VF_BASE, 0) {
                return (0..LEAVES)
                    .filter(|&l| {
                        let leaf = m.get(&LEAF::address(VF_BASE, l)).copied().unwrap_or(0);
                        let en = m.get(&LEAF_EN_SET::address(VF_BASE, l)).copied().unwrap_or(0);
                        leaf & en != 0
                    })
                    .fold(0, |top, l| top | 1 << leaf_subtree(l));
            }
            m.get(&offset).copied().unwrap_or(0)
        }
        fn write32(&self, offset: u32, value: u32) {
            let mut m = self.0.borrow_mut();
            let slot = m.entry(offset).or_default();
            if (LEAF::address(VF_BASE, 0)..LEAF::address(VF_BASE, LEAVES)).contains(&offset) {
                *slot &= !value;
            } else {
                *slot |= value;
            }
        }
    }

    #[test]
    fn services_acknowledges_and_names_the_engine() {
        let io = Tree::default();
        let intr = Interrupts::enable(&io, &[(7, 37)]).unwrap();
        assert_eq!(io.read32(TOP_EN_SET::address(VF_BASE, 0)), 1);
        assert!(intr.service(&io).is_empty());
        io.0.borrow_mut().insert(LEAF::address(VF_BASE, 1), 1 << 5 | 1 << 6);
        assert_eq!(intr.service(&io), vec![InterruptEvent::NonStall { engine: 7, vector: 37 }]);
        // Bit 6 is not enabled: left alone.
        assert_eq!(io.read32(LEAF::address(VF_BASE, 1)), 1 << 6);
        assert!(intr.service(&io).is_empty());
        assert_eq!(Interrupts::enable(&io, &[(0, 256)]).err(), Some(VectorOutOfRange { vector: 256 }));
    }

    #[test]
    fn intr_from_kernel_table_enables_what_gsp_rm_names() {
        use crate::rm::fifo::NV2080_ENGINE_TYPE_COPY0;
        use crate::rm::intr::{KernelIntrEntry, MC_ENGINE_IDX_CE0, NV2080_INTR_CATEGORY_ENUM_COUNT};
        let io = Tree::default();
        let entry = |mc_engine_idx, vector_non_stall| KernelIntrEntry {
            mc_engine_idx,
            pmc_intr_mask: 0,
            vector_stall: None,
            vector_non_stall,
        };
        let table = KernelIntrTable {
            entries: vec![entry(MC_ENGINE_IDX_CE0, Some(40)), entry(MC_ENGINE_IDX_CE0 + 1, None), entry(49, Some(3))],
            subtree_map: [None; NV2080_INTR_CATEGORY_ENUM_COUNT],
        };
        let intr = Interrupts::from_kernel_table(&io, &table).unwrap();
        assert_eq!(intr.vectors(), &[(NV2080_ENGINE_TYPE_COPY0, 40)]);
        assert_eq!(intr.vector_of(NV2080_ENGINE_TYPE_COPY0), Some(40));
        assert_eq!(io.read32(LEAF_EN_SET::address(VF_BASE, 1)), 1 << 8);
        assert_eq!(io.read32(LEAF_EN_SET::address(VF_BASE, 0)), 0, "vector 3 belongs to an engine not serviced here");
        io.0.borrow_mut().insert(LEAF::address(VF_BASE, 0), 1 << 3);
        assert!(intr.service(&io).is_empty(), "not enabled, not reported");
    }

    #[test]
    fn a_vector_control_enables_its_leaf_bit_and_subtree_and_clears_its_bit() {
        let io = Tree::default();
        let v = VectorControl::new(64 + 5).unwrap();
        v.enable(&io);
        assert_eq!(io.read32(LEAF_EN_SET::address(VF_BASE, 2)), 1 << 5);
        assert_eq!(io.read32(TOP_EN_SET::address(VF_BASE, 0)), 1 << 1, "vectors 64..127 are subtree 1");
        assert!(!v.pending(&io));
        io.0.borrow_mut().insert(LEAF::address(VF_BASE, 2), 1 << 5 | 1 << 9);
        assert!(v.pending(&io));
        v.clear(&io);
        assert!(!v.pending(&io));
        assert_eq!(io.read32(LEAF::address(VF_BASE, 2)), 1 << 9, "other bits of the leaf stay");
        v.disable(&io);
        assert_eq!(io.read32(LEAF_EN_CLEAR::address(VF_BASE, 2)), 1 << 5);
        assert_eq!(VectorControl::new(256).err(), Some(VectorOutOfRange { vector: 256 }));
    }
}
