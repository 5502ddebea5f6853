//! `GspFwSRMeta` (`src/nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_sr_meta.h`, 535.261.03): the
//! suspend/resume metadata CPU-RM keeps in system memory and hands to booter_unload (suspend)
//! and booter_load (resume) in SEC2's mailboxes (`kgspSavePowerMgmtState_TU102` /
//! `kgspRestorePowerMgmtState_TU102`, `kernel_gsp_tu102.c`).
//!
//! RM fills magic, revision, and the system-memory buffer (a radix3 block,
//! `kgspCreateRadix3`) that booter_unload saves the WPR2 contents into: its root's bus address
//! and `gspFwWprEnd - gspFwWprStart` bytes. The HMAC and hashes are the booter's; RM leaves
//! them, and the padding, zero.

use core::fmt;
use core::mem::{align_of, offset_of, size_of};

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::hw::headers;
use crate::hw::layout::{ConstantFact, FieldLayout, StructLayout};

/// `GSP_FW_SR_META_MAGIC`.
pub const GSP_FW_SR_META_MAGIC: u64 = 0x8a3b_b9e6_c6c3_9d93;
/// `GSP_FW_SR_META_REVISION`.
pub const GSP_FW_SR_META_REVISION: u64 = 2;

/// `GspFwSRMeta`: 256 bytes, one DMA chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspFwSRMeta {
    /// `magic` = [`GSP_FW_SR_META_MAGIC`].
    pub magic: u64,
    /// `revision` = [`GSP_FW_SR_META_REVISION`].
    pub revision: u64,
    /// `sysmemAddrOfSuspendResumeData`: bus address of the save area's radix3 root.
    pub sysmem_addr_of_suspend_resume_data: u64,
    /// `sizeOfSuspendResumeData`: `gspFwWprEnd - gspFwWprStart`.
    pub size_of_suspend_resume_data: u64,
    /// `hmac`: over the whole structure with this field zeroed (the booter's).
    pub hmac: [u8; 32],
    /// `wprMetaHash`: over `GspFwWprMeta` (the booter's).
    pub wpr_meta_hash: [u8; 32],
    /// `heapFreeListHash`: over `GspFwHeapFreeList`, zero for none (the booter's).
    pub heap_free_list_hash: [u8; 32],
    /// `dataHash`: over the WPR2 data (the booter's).
    pub data_hash: [u8; 32],
    /// `padding`: zero.
    pub padding: [u32; 24],
}

const _: () = assert!(size_of::<GspFwSRMeta>() == 256);

/// Why an SR metadata block is not what RM writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrMetaError {
    /// `magic` is not [`GSP_FW_SR_META_MAGIC`].
    BadMagic { magic: u64 },
    /// `revision` is not [`GSP_FW_SR_META_REVISION`].
    BadRevision { revision: u64 },
    /// `sizeOfSuspendResumeData` is not the WPR2 size it must save.
    BadSize { size: u64, expected: u64 },
    /// `sysmemAddrOfSuspendResumeData` is 0 or not 4 KiB aligned.
    BadAddress { address: u64 },
    /// The padding is not zero.
    PaddingNotZero,
}

impl fmt::Display for SrMetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic { magic } => {
                write!(f, "GspFwSRMeta magic {magic:#x} (expected {GSP_FW_SR_META_MAGIC:#x})")
            }
            Self::BadRevision { revision } => {
                write!(f, "GspFwSRMeta revision {revision} (expected {GSP_FW_SR_META_REVISION})")
            }
            Self::BadSize { size, expected } => {
                write!(f, "GspFwSRMeta sizeOfSuspendResumeData {size:#x} (WPR2 is {expected:#x} bytes)")
            }
            Self::BadAddress { address } => {
                write!(f, "GspFwSRMeta sysmemAddrOfSuspendResumeData {address:#x} is not a 4 KiB-aligned bus address")
            }
            Self::PaddingNotZero => write!(f, "GspFwSRMeta padding is not zero"),
        }
    }
}

impl GspFwSRMeta {
    /// The metadata `kgspSavePowerMgmtState_TU102` writes: magic, revision, the save area,
    /// everything else zero.
    pub const fn new(sysmem_addr_of_suspend_resume_data: u64, size_of_suspend_resume_data: u64) -> Self {
        Self {
            magic: GSP_FW_SR_META_MAGIC,
            revision: GSP_FW_SR_META_REVISION,
            sysmem_addr_of_suspend_resume_data,
            size_of_suspend_resume_data,
            hmac: [0; 32],
            wpr_meta_hash: [0; 32],
            heap_free_list_hash: [0; 32],
            data_hash: [0; 32],
            padding: [0; 24],
        }
    }

    /// Checks what the booter checks before it touches the save area: magic, revision, a
    /// page-aligned buffer of exactly `wpr_size` bytes (`gspFwWprEnd - gspFwWprStart`), zero
    /// padding. (The HMAC and hashes are the booter's own.)
    pub fn check(&self, wpr_size: u64) -> Result<(), SrMetaError> {
        if self.magic != GSP_FW_SR_META_MAGIC {
            return Err(SrMetaError::BadMagic { magic: self.magic });
        }
        if self.revision != GSP_FW_SR_META_REVISION {
            return Err(SrMetaError::BadRevision { revision: self.revision });
        }
        let address = self.sysmem_addr_of_suspend_resume_data;
        if address == 0 || !address.is_multiple_of(0x1000) {
            return Err(SrMetaError::BadAddress { address });
        }
        if self.size_of_suspend_resume_data != wpr_size || wpr_size == 0 {
            return Err(SrMetaError::BadSize { size: self.size_of_suspend_resume_data, expected: wpr_size });
        }
        if self.padding != [0; 24] {
            return Err(SrMetaError::PaddingNotZero);
        }
        Ok(())
    }
}

/// `GspFwSRMeta`'s layout under NVIDIA's names, for the header comparison (as
/// [`super::layout::STRUCT_LAYOUTS`]; `tests/tests/gsp_suspend.rs` compiles the header).
pub const SR_META_LAYOUT: StructLayout = StructLayout {
    c_name: "GspFwSRMeta",
    rust_name: "GspFwSRMeta",
    header: headers::GSP_FW_SR_META,
    size: size_of::<GspFwSRMeta>(),
    align: align_of::<GspFwSRMeta>(),
    fields: &[
        FieldLayout { c_name: "magic", offset: offset_of!(GspFwSRMeta, magic), size: 8 },
        FieldLayout { c_name: "revision", offset: offset_of!(GspFwSRMeta, revision), size: 8 },
        FieldLayout {
            c_name: "sysmemAddrOfSuspendResumeData",
            offset: offset_of!(GspFwSRMeta, sysmem_addr_of_suspend_resume_data),
            size: 8,
        },
        FieldLayout {
            c_name: "sizeOfSuspendResumeData",
            offset: offset_of!(GspFwSRMeta, size_of_suspend_resume_data),
            size: 8,
        },
        FieldLayout { c_name: "hmac", offset: offset_of!(GspFwSRMeta, hmac), size: 32 },
        FieldLayout { c_name: "wprMetaHash", offset: offset_of!(GspFwSRMeta, wpr_meta_hash), size: 32 },
        FieldLayout { c_name: "heapFreeListHash", offset: offset_of!(GspFwSRMeta, heap_free_list_hash), size: 32 },
        FieldLayout { c_name: "dataHash", offset: offset_of!(GspFwSRMeta, data_hash), size: 32 },
        FieldLayout { c_name: "padding", offset: offset_of!(GspFwSRMeta, padding), size: 96 },
    ],
};

/// The constants of `gsp_fw_sr_meta.h`.
pub const SR_META_CONSTANTS: &[ConstantFact] = &[
    ConstantFact { c_name: "GSP_FW_SR_META_MAGIC", header: headers::GSP_FW_SR_META, value: GSP_FW_SR_META_MAGIC },
    ConstantFact { c_name: "GSP_FW_SR_META_REVISION", header: headers::GSP_FW_SR_META, value: GSP_FW_SR_META_REVISION },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_meta_checks_and_corruption_is_typed() {
        let meta = GspFwSRMeta::new(0x1234_5000, 0x800_0000);
        assert_eq!(meta.check(0x800_0000), Ok(()));
        assert_eq!(&meta.as_bytes()[0..8], &GSP_FW_SR_META_MAGIC.to_le_bytes());
        assert_eq!(&meta.as_bytes()[8..16], &2u64.to_le_bytes());
        let mut bad = meta;
        bad.magic ^= 1;
        assert!(matches!(bad.check(0x800_0000), Err(SrMetaError::BadMagic { .. })));
        let mut bad = meta;
        bad.revision = 1;
        assert_eq!(bad.check(0x800_0000), Err(SrMetaError::BadRevision { revision: 1 }));
        assert!(matches!(meta.check(0x1000), Err(SrMetaError::BadSize { .. })));
        let mut bad = meta;
        bad.sysmem_addr_of_suspend_resume_data = 0x1234_5008;
        assert!(matches!(bad.check(0x800_0000), Err(SrMetaError::BadAddress { .. })));
    }
}
