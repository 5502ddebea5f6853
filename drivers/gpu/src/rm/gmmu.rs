//! GSP-RM's replayable fault buffer for the CPU side: the `MMU_FAULT_BUFFER` object (class
//! `0xc369`, `nvgpu::hw::fault::MMU_FAULT_BUFFER`) and
//! `NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER`, with which RM's CPU side hands the
//! pages it allocated for the replayable buffer to physical RM (GSP-RM), which programs
//! `NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_{LO,HI,SIZE}(1)` and enables the buffer.
//!
//! Layouts and numbers are 535.261.03's (`src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080internal.h`),
//! checked by `tests/tests/gsp_rpc_layout.rs` with NVIDIA's headers and the C compiler.
//!
//! How RM uses it (`kgmmuFaultBufferReplayableSetup`, `src/nvidia/src/kernel/gpu/mmu/kern_gmmu.c`):
//! the client allocates `MMU_FAULT_BUFFER` under its subdevice; RM allocates the buffer's pages
//! and sends their addresses, one per 4 KiB page (`faultBufferPteArray`), with the object's
//! handles and the size in bytes, on GSP-RM's internal subdevice ([`InternalSubdevice`]).
//! The client then reads `PUT` and writes `GET` itself through BAR0.

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout};

use super::{InternalSubdevice, RmError};
use crate::gsp::commands::RpcChannel;
use crate::hw::headers;
use crate::hw::layout::{c_constant, c_struct, ConstantFact, StructLayout};

/// `NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER`.
pub const NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER: u32 = 0x2080_0a9b;
/// `NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES`: pages one registration names.
pub const NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES: usize = 256;
/// The page size of `faultBufferPteArray` (`RM_PAGE_SIZE`).
pub const FAULT_BUFFER_PAGE_BYTES: u64 = 4096;

/// `NV2080_CTRL_INTERNAL_GMMU_REGISTER_FAULT_BUFFER_PARAMS`. 2064 bytes.
#[derive(Clone, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv2080CtrlInternalGmmuRegisterFaultBufferParams {
    /// `hClient`: the client of the `MMU_FAULT_BUFFER` object.
    pub h_client: u32,
    /// `hObject`: the `MMU_FAULT_BUFFER` object.
    pub h_object: u32,
    /// `faultBufferSize`: bytes of the buffer.
    pub fault_buffer_size: u32,
    /// The C compiler's padding before the 8-byte aligned array.
    pub _pad: u32,
    /// `faultBufferPteArray`: the physical address of each 4 KiB page, in order.
    pub fault_buffer_pte_array: [u64; NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES],
}

impl Default for Nv2080CtrlInternalGmmuRegisterFaultBufferParams {
    fn default() -> Self {
        Self::new_zeroed()
    }
}

/// Why a registration could not be sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterFaultBufferError {
    /// More pages than one registration names, or a size that is not whole entries.
    BadSize {
        bytes: u32,
    },
    Rm(RmError),
}

impl core::fmt::Display for RegisterFaultBufferError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::BadSize { bytes } => write!(
                f,
                "a replayable fault buffer of {bytes} bytes (whole 32-byte entries, at most {} pages)",
                NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES
            ),
            Self::Rm(e) => write!(f, "NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER: {e}"),
        }
    }
}

impl From<RmError> for RegisterFaultBufferError {
    fn from(e: RmError) -> Self {
        Self::Rm(e)
    }
}

/// The registration's parameters for the buffer of `bytes` bytes starting at physical `base`
/// (contiguous pages), owned by `(client, object)`.
pub fn register_params(
    client: u32,
    object: u32,
    base: u64,
    bytes: u32,
) -> Result<Nv2080CtrlInternalGmmuRegisterFaultBufferParams, RegisterFaultBufferError> {
    let entry = crate::hw::fault::NVC369_BUF_SIZE as u32;
    let pages = u64::from(bytes).div_ceil(FAULT_BUFFER_PAGE_BYTES) as usize;
    if bytes == 0 || !bytes.is_multiple_of(entry) || pages > NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES {
        return Err(RegisterFaultBufferError::BadSize { bytes });
    }
    let mut p = Nv2080CtrlInternalGmmuRegisterFaultBufferParams {
        h_client: client,
        h_object: object,
        fault_buffer_size: bytes,
        ..Default::default()
    };
    for (i, slot) in p.fault_buffer_pte_array.iter_mut().take(pages).enumerate() {
        *slot = base + i as u64 * FAULT_BUFFER_PAGE_BYTES;
    }
    Ok(p)
}

/// Sends the registration on GSP-RM's internal subdevice, as RM's CPU side does.
pub fn register_fault_buffer<T: RpcChannel>(
    rpc: &mut T,
    internal: InternalSubdevice,
    params: &mut Nv2080CtrlInternalGmmuRegisterFaultBufferParams,
) -> Result<(), RegisterFaultBufferError> {
    internal.control_typed(rpc, NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER, params)?;
    Ok(())
}

/// The structures of this module.
pub const STRUCT_LAYOUTS: &[StructLayout] = &[c_struct!(
    "NV2080_CTRL_INTERNAL_GMMU_REGISTER_FAULT_BUFFER_PARAMS",
    Nv2080CtrlInternalGmmuRegisterFaultBufferParams,
    headers::CTRL2080INTERNAL,
    [
        "hClient" => h_client, "hObject" => h_object, "faultBufferSize" => fault_buffer_size,
        "faultBufferPteArray" => fault_buffer_pte_array,
    ]
)];

/// The constants of this module, under NVIDIA's names.
pub const CONSTANTS: &[ConstantFact] = &[
    c_constant!(
        "NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER",
        headers::CTRL2080INTERNAL,
        NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER
    ),
    c_constant!(
        "NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES",
        headers::CTRL2080INTERNAL,
        NV2080_CTRL_INTERNAL_GMMU_FAULT_BUFFER_MAX_PAGES
    ),
    c_constant!("RM_PAGE_SIZE", headers::RM_PAGE_SIZE, FAULT_BUFFER_PAGE_BYTES),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registration_is_2064_bytes_and_names_every_page() {
        assert_eq!(core::mem::size_of::<Nv2080CtrlInternalGmmuRegisterFaultBufferParams>(), 2064);
        let p = register_params(1, 2, 0x10_0000, 8192 + 32).unwrap();
        assert_eq!(&p.fault_buffer_pte_array[..4], &[0x10_0000, 0x10_1000, 0x10_2000, 0]);
        assert!(register_params(1, 2, 0, 33).is_err());
        assert!(register_params(1, 2, 0, 257 * 4096).is_err());
    }
}
