//! What a register read returns when the PRI (the register bus behind BAR0) could not complete
//! it, as RM recognises such values: `GPU_READ_PRI_ERROR_*` (`g_gpu_nvoc.h`) for BAR0 reads, and
//! the falcon-side `FLCN_CSB_PRIV_PRI_ERROR_*` (`flcnretval.h`), the "0xbadf" prefix RM's
//! register-read checks look for (`g_gpu_access_nvoc.h` calls them "the 0xbadf sanity
//! checking"). The GPU model answers reads of registers it does not implement with a value both
//! checks flag.

use super::headers;
use crate::constants;

constants! {
    /// Facts of this module.
    pub const FACTS;

    /// RM treats a read whose top 12 bits are 0xBAD as a possible PRI error (`gpu_access.c`
    /// checks `(value & GPU_READ_PRI_ERROR_MASK) == GPU_READ_PRI_ERROR_CODE`).
    pub GPU_READ_PRI_ERROR_MASK: u32 = 0xFFF00000 in headers::G_GPU_NVOC;
    /// See [`GPU_READ_PRI_ERROR_MASK`].
    pub GPU_READ_PRI_ERROR_CODE: u32 = 0xBAD00000 in headers::G_GPU_NVOC;
    /// The "0xbadf" error prefix of falcon-side PRI reads.
    pub FLCN_CSB_PRIV_PRI_ERROR_CODE: u32 = 0xBADF0000 in headers::FLCNRETVAL;
    /// See [`FLCN_CSB_PRIV_PRI_ERROR_CODE`].
    pub FLCN_CSB_PRIV_PRI_ERROR_MASK: u32 = 0xFFFF0000 in headers::FLCNRETVAL;
}
