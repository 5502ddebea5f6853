//! GSP-RM's interrupt table for the CPU side: `NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE`,
//! which tells a GSP-client RM each engine's stall and non-stall (notification) interrupt
//! vectors and which `CPU_INTR_TOP` subtrees each interrupt category uses.
//!
//! Layouts and numbers are 535.261.03's: the control and its parameters from
//! `src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080internal.h`, the engine indices
//! (`MC_ENGINE_IDX_*`) from `src/nvidia/inc/kernel/gpu/intr/engine_idx.h`,
//! `NV_INTR_VECTOR_INVALID` from `src/nvidia/arch/nvalloc/common/inc/dev_ctrl_defines.h`; checked
//! by `tests/tests/gsp_rpc_layout.rs` with NVIDIA's headers and the C compiler.
//!
//! How RM uses it (`intrInitInterruptTable_KERNEL`, `src/nvidia/src/kernel/gpu/intr/intr.c`):
//! one call on GSP-RM's internal client and subdevice ([`InternalSubdevice`]) at init, a reply
//! with more than `NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE` records is refused
//! (`NV_ERR_OUT_OF_RANGE`), and every record becomes an `INTR_TABLE_ENTRY`; the non-stall vector
//! of engine `mcEngine` is then looked up by engine index (`intrGetVectorFromEngineId`), and
//! `NV_INTR_VECTOR_INVALID` means the engine has none.

use alloc::vec::Vec;
use core::fmt;

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

use super::fifo::{NV2080_ENGINE_TYPE_COPY0, NV2080_ENGINE_TYPE_GRAPHICS};
use super::{InternalSubdevice, RmError};
use crate::gsp::commands::RpcChannel;
use crate::hw::headers;
use crate::hw::layout::{c_constant, c_struct, ConstantFact, StructLayout};

// ---------------------------------------------------------------------------------------------
// Numbers.

/// `NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE`.
pub const NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE: u32 = 0x2080_0a5c;
/// `NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE`: records in the table.
pub const NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE: usize = 128;
/// `NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE`: engine (stall) interrupts.
pub const NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE: usize = 1;
/// `NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION`: engine notifications (non-stall).
pub const NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION: usize = 2;
/// `NV2080_INTR_CATEGORY_UVM_OWNED`: interrupts UVM services itself (the replayable fault
/// buffer's).
pub const NV2080_INTR_CATEGORY_UVM_OWNED: usize = 5;
/// `NV_CPU_INTR_UVM_SUBTREE_START` (= `_LAST`): the CPU_INTR top-level subtree RM gives
/// `NV2080_INTR_CATEGORY_UVM_OWNED` (`intrInitSubtreeMap_TU102`).
pub const NV_CPU_INTR_UVM_SUBTREE_START: u8 = 1;
/// `NV2080_INTR_CATEGORY_ENUM_COUNT`: entries of `subtreeMap`.
pub const NV2080_INTR_CATEGORY_ENUM_COUNT: usize = 7;
/// `NV2080_INTR_INVALID_SUBTREE` (`NV_U8_MAX`): a category without subtrees.
pub const NV2080_INTR_INVALID_SUBTREE: u8 = 0xff;

/// `MC_ENGINE_IDX_CE0`; copy engine `n` is `MC_ENGINE_IDX_CE(n)`, `CE0 + n`.
pub const MC_ENGINE_IDX_CE0: u16 = 15;
/// `MC_ENGINE_IDX_CE_MAX` (= `MC_ENGINE_IDX_CE9`): the last copy-engine index.
pub const MC_ENGINE_IDX_CE_MAX: u16 = 24;
/// `MC_ENGINE_IDX_GR0` (= `MC_ENGINE_IDX_GR`).
pub const MC_ENGINE_IDX_GR0: u16 = 82;
/// `MC_ENGINE_IDX_REPLAYABLE_FAULT`: the replayable fault buffer's notification. RM takes its
/// vector from the table's `vectorStall` (`intrGetVectorFromEngineId(..., NV_FALSE)` in
/// `kgmmuGetFaultRegisterMappings_TU102`, `kern_gmmu_tu102.c`) and hands UVM the leaf register
/// and bit of it.
pub const MC_ENGINE_IDX_REPLAYABLE_FAULT: u16 = 58;

/// `NV_INTR_VECTOR_INVALID` (`NV_U32_MAX`): no vector.
pub const NV_INTR_VECTOR_INVALID: u32 = u32::MAX;

// ---------------------------------------------------------------------------------------------
// Structures.

/// `NV2080_CTRL_INTERNAL_INTR_GET_KERNEL_TABLE_ENTRY`. 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv2080CtrlInternalIntrGetKernelTableEntry {
    /// `engineIdx`: an `MC_ENGINE_IDX_*`.
    pub engine_idx: u16,
    /// The C compiler's padding before `pmcIntrMask`.
    pub _pad: [u8; 2],
    /// `pmcIntrMask`: the engine's bits in the legacy `NV_PMC_INTR` tree, 0 for none.
    pub pmc_intr_mask: u32,
    /// `vectorStall`.
    pub vector_stall: u32,
    /// `vectorNonStall`.
    pub vector_non_stall: u32,
}

/// `NV2080_INTR_CATEGORY_SUBTREE_MAP`: the `CPU_INTR_TOP` subtrees of one category, inclusive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv2080IntrCategorySubtreeMap {
    /// `subtreeStart`.
    pub subtree_start: u8,
    /// `subtreeEnd`.
    pub subtree_end: u8,
}

/// `NV2080_CTRL_INTERNAL_INTR_GET_KERNEL_TABLE_PARAMS`. 2068 bytes.
#[derive(Clone, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv2080CtrlInternalIntrGetKernelTableParams {
    /// `tableLen`: valid records in `table`.
    pub table_len: u32,
    /// `table`.
    pub table: [Nv2080CtrlInternalIntrGetKernelTableEntry; NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE],
    /// `subtreeMap`, by `NV2080_INTR_CATEGORY`.
    pub subtree_map: [Nv2080IntrCategorySubtreeMap; NV2080_INTR_CATEGORY_ENUM_COUNT],
    /// The C compiler's tail padding (to the struct's 4-byte alignment).
    pub _pad: [u8; 2],
}

impl Default for Nv2080CtrlInternalIntrGetKernelTableParams {
    fn default() -> Self {
        Self::new_zeroed()
    }
}

// ---------------------------------------------------------------------------------------------
// The table.

/// The `NV2080_ENGINE_TYPE_*` of an `MC_ENGINE_IDX_*`, for the engines this driver runs work
/// on (graphics/compute and the copy engines); `None` for the others.
pub const fn engine_type_of(mc_engine_idx: u16) -> Option<u32> {
    if mc_engine_idx == MC_ENGINE_IDX_GR0 {
        Some(NV2080_ENGINE_TYPE_GRAPHICS)
    } else if mc_engine_idx >= MC_ENGINE_IDX_CE0 && mc_engine_idx <= MC_ENGINE_IDX_CE_MAX {
        Some(NV2080_ENGINE_TYPE_COPY0 + (mc_engine_idx - MC_ENGINE_IDX_CE0) as u32)
    } else {
        None
    }
}

/// One record of GSP-RM's table, as RM keeps it (`INTR_TABLE_ENTRY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelIntrEntry {
    /// `MC_ENGINE_IDX_*`.
    pub mc_engine_idx: u16,
    /// The legacy `NV_PMC_INTR` mask, 0 for none.
    pub pmc_intr_mask: u32,
    /// The stall vector, `None` for `NV_INTR_VECTOR_INVALID`.
    pub vector_stall: Option<u32>,
    /// The non-stall (notification) vector, `None` for `NV_INTR_VECTOR_INVALID`.
    pub vector_non_stall: Option<u32>,
}

/// GSP-RM's interrupt table for the CPU side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelIntrTable {
    /// The records, in GSP-RM's order.
    pub entries: Vec<KernelIntrEntry>,
    /// `subtreeMap`: the inclusive subtree range of each `NV2080_INTR_CATEGORY`, `None` where
    /// GSP-RM gave `NV2080_INTR_INVALID_SUBTREE`.
    pub subtree_map: [Option<(u8, u8)>; NV2080_INTR_CATEGORY_ENUM_COUNT],
}

/// Why GSP-RM's interrupt table could not be had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IntrTableError {
    /// The control failed.
    Rm(RmError),
    /// `tableLen` beyond `NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE` (RM: `NV_ERR_OUT_OF_RANGE`).
    TableLen { table_len: u32 },
}

impl From<RmError> for IntrTableError {
    fn from(e: RmError) -> Self {
        IntrTableError::Rm(e)
    }
}

impl fmt::Display for IntrTableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntrTableError::Rm(e) => write!(f, "NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE: {e}"),
            IntrTableError::TableLen { table_len } => write!(
                f,
                "NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE returned tableLen {table_len}, beyond the {} records of the table",
                NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE
            ),
        }
    }
}

const fn vector(raw: u32) -> Option<u32> {
    if raw == NV_INTR_VECTOR_INVALID {
        None
    } else {
        Some(raw)
    }
}

impl KernelIntrTable {
    /// Asks GSP-RM for the table on its internal subdevice, as RM's CPU side does at init.
    pub fn query<T: RpcChannel>(rpc: &mut T, internal: InternalSubdevice) -> Result<Self, IntrTableError> {
        let mut params = Nv2080CtrlInternalIntrGetKernelTableParams::default();
        internal.control_typed(rpc, NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE, &mut params)?;
        Self::from_params(&params)
    }

    /// The table in a control's reply.
    pub fn from_params(params: &Nv2080CtrlInternalIntrGetKernelTableParams) -> Result<Self, IntrTableError> {
        let records = params
            .table
            .get(..params.table_len as usize)
            .ok_or(IntrTableError::TableLen { table_len: params.table_len })?;
        let entries = records
            .iter()
            .map(|r| KernelIntrEntry {
                mc_engine_idx: r.engine_idx,
                pmc_intr_mask: r.pmc_intr_mask,
                vector_stall: vector(r.vector_stall),
                vector_non_stall: vector(r.vector_non_stall),
            })
            .collect();
        let subtree_map = params.subtree_map.map(|m| {
            let valid = m.subtree_start != NV2080_INTR_INVALID_SUBTREE && m.subtree_end != NV2080_INTR_INVALID_SUBTREE;
            valid.then_some((m.subtree_start, m.subtree_end))
        });
        Ok(KernelIntrTable { entries, subtree_map })
    }

    /// The record of engine `mc_engine_idx` (RM: the first with that index).
    pub fn entry(&self, mc_engine_idx: u16) -> Option<&KernelIntrEntry> {
        self.entries.iter().find(|e| e.mc_engine_idx == mc_engine_idx)
    }

    /// The replayable fault buffer's vector (`MC_ENGINE_IDX_REPLAYABLE_FAULT`'s `vectorStall`,
    /// as `intrStateInit_TU102` caches `replayableFaultIntrVector` without confidential
    /// computing), `None` where the table has no such record.
    pub fn replayable_fault_vector(&self) -> Option<u32> {
        self.entry(MC_ENGINE_IDX_REPLAYABLE_FAULT)?.vector_stall
    }

    /// `(NV2080_ENGINE_TYPE, non-stall vector)` of every graphics and copy engine that has a
    /// non-stall vector, in table order.
    pub fn notification_vectors(&self) -> Vec<(u32, u32)> {
        self.entries.iter().filter_map(|e| Some((engine_type_of(e.mc_engine_idx)?, e.vector_non_stall?))).collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Layout tables for tests/tests/gsp_rpc_layout.rs.

/// The structures of this module.
pub const STRUCT_LAYOUTS: &[StructLayout] = &[
    c_struct!("NV2080_CTRL_INTERNAL_INTR_GET_KERNEL_TABLE_ENTRY", Nv2080CtrlInternalIntrGetKernelTableEntry, headers::CTRL2080INTERNAL, [
        "engineIdx" => engine_idx, "pmcIntrMask" => pmc_intr_mask, "vectorStall" => vector_stall,
        "vectorNonStall" => vector_non_stall,
    ]),
    c_struct!("NV2080_INTR_CATEGORY_SUBTREE_MAP", Nv2080IntrCategorySubtreeMap, headers::CTRL2080INTERNAL, [
        "subtreeStart" => subtree_start, "subtreeEnd" => subtree_end,
    ]),
    c_struct!("NV2080_CTRL_INTERNAL_INTR_GET_KERNEL_TABLE_PARAMS", Nv2080CtrlInternalIntrGetKernelTableParams, headers::CTRL2080INTERNAL, [
        "tableLen" => table_len, "table" => table, "subtreeMap" => subtree_map,
    ]),
];

/// The constants of this module, under NVIDIA's names.
pub const CONSTANTS: &[ConstantFact] = &[
    c_constant!(
        "NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE",
        headers::CTRL2080INTERNAL,
        NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE
    ),
    c_constant!(
        "NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE",
        headers::CTRL2080INTERNAL,
        NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE
    ),
    c_constant!(
        "NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE",
        headers::CTRL2080INTERNAL,
        NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE
    ),
    c_constant!(
        "NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION",
        headers::CTRL2080INTERNAL,
        NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION
    ),
    c_constant!("NV2080_INTR_CATEGORY_UVM_OWNED", headers::CTRL2080INTERNAL, NV2080_INTR_CATEGORY_UVM_OWNED),
    c_constant!("NV2080_INTR_CATEGORY_ENUM_COUNT", headers::CTRL2080INTERNAL, NV2080_INTR_CATEGORY_ENUM_COUNT),
    c_constant!("NV2080_INTR_INVALID_SUBTREE", headers::CTRL2080INTERNAL, NV2080_INTR_INVALID_SUBTREE),
    c_constant!("MC_ENGINE_IDX_CE0", headers::ENGINE_IDX, MC_ENGINE_IDX_CE0),
    c_constant!("MC_ENGINE_IDX_CE_MAX", headers::ENGINE_IDX, MC_ENGINE_IDX_CE_MAX),
    c_constant!("MC_ENGINE_IDX_GR0", headers::ENGINE_IDX, MC_ENGINE_IDX_GR0),
    c_constant!("MC_ENGINE_IDX_REPLAYABLE_FAULT", headers::ENGINE_IDX, MC_ENGINE_IDX_REPLAYABLE_FAULT),
    c_constant!("NV_INTR_VECTOR_INVALID", headers::DEV_CTRL_DEFINES, NV_INTR_VECTOR_INVALID),
    c_constant!("NV_CPU_INTR_UVM_SUBTREE_START", headers::DEV_VM_ADDENDUM, NV_CPU_INTR_UVM_SUBTREE_START),
];

/// Values NVIDIA spells as expressions: C expressions and what they evaluate to.
pub fn expression_checks() -> [(&'static str, u64); 2] {
    [
        ("MC_ENGINE_IDX_CE(2)", (MC_ENGINE_IDX_CE0 + 2) as u64),
        // The control number's low byte is its parameters' message id.
        (
            "NV2080_CTRL_INTERNAL_INTR_GET_KERNEL_TABLE_PARAMS_MESSAGE_ID",
            (NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE & 0xff) as u64,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(records: &[(u16, u32, u32)]) -> Nv2080CtrlInternalIntrGetKernelTableParams {
        let mut p =
            Nv2080CtrlInternalIntrGetKernelTableParams { table_len: records.len() as u32, ..Default::default() };
        for (slot, &(engine_idx, stall, non_stall)) in p.table.iter_mut().zip(records) {
            *slot = Nv2080CtrlInternalIntrGetKernelTableEntry {
                engine_idx,
                vector_stall: stall,
                vector_non_stall: non_stall,
                ..Default::default()
            };
        }
        p.subtree_map = [Nv2080IntrCategorySubtreeMap { subtree_start: 0xff, subtree_end: 0xff }; 7];
        p.subtree_map[NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION] =
            Nv2080IntrCategorySubtreeMap { subtree_start: 0, subtree_end: 0 };
        p
    }

    #[test]
    fn intr_table_sizes_follow_the_c_layout() {
        assert_eq!(core::mem::size_of::<Nv2080CtrlInternalIntrGetKernelTableEntry>(), 16);
        assert_eq!(core::mem::size_of::<Nv2080CtrlInternalIntrGetKernelTableParams>(), 2068);
    }

    #[test]
    fn intr_table_names_graphics_and_copy_engines_and_skips_the_rest() {
        let p = params(&[
            (MC_ENGINE_IDX_GR0, 96, 0),
            (MC_ENGINE_IDX_CE0 + 2, 99, 3),
            (MC_ENGINE_IDX_CE0 + 1, 98, NV_INTR_VECTOR_INVALID),
            (49 /* GSP */, 100, 7),
        ]);
        let table = KernelIntrTable::from_params(&p).unwrap();
        assert_eq!(table.entries.len(), 4);
        assert_eq!(table.entry(MC_ENGINE_IDX_CE0 + 1).unwrap().vector_non_stall, None);
        assert_eq!(
            table.notification_vectors(),
            vec![(NV2080_ENGINE_TYPE_GRAPHICS, 0), (NV2080_ENGINE_TYPE_COPY0 + 2, 3)]
        );
        assert_eq!(table.subtree_map[NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION], Some((0, 0)));
        assert_eq!(table.subtree_map[NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE], None);
        assert_eq!(engine_type_of(MC_ENGINE_IDX_CE_MAX + 1), None);
    }

    #[test]
    fn intr_table_refuses_an_overlong_table() {
        let mut p = params(&[]);
        p.table_len = 129;
        assert_eq!(KernelIntrTable::from_params(&p), Err(IntrTableError::TableLen { table_len: 129 }));
        p.table_len = 128;
        assert_eq!(KernelIntrTable::from_params(&p).unwrap().entries.len(), 128);
    }
}
