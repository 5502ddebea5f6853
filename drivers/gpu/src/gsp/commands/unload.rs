//! `UNLOADING_GUEST_DRIVER`: GSP-RM's unload (and suspend) request.

use super::*;

/// `rpc_unloading_guest_driver_v1F_07`. 8 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RpcUnloadingGuestDriverV1F07 {
    /// `bInPMTransition`: suspending rather than unloading.
    pub b_in_pm_transition: u8,
    /// `bGc6Entering`.
    pub b_gc6_entering: u8,
    /// Padding before `newLevel`.
    pub _padding: [u8; 2],
    /// `newLevel`: the power level being entered.
    pub new_level: u32,
}

/// `UNLOADING_GUEST_DRIVER`: GSP-RM is about to be shut down or suspended
/// (`rpcUnloadingGuestDriver_v1F_07`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnloadingGuestDriver {
    /// Suspending (power-management transition) rather than unloading.
    pub in_pm_transition: bool,
    /// Entering GC6.
    pub gc6_entering: bool,
    /// The power level being entered.
    pub new_level: u32,
}

impl Rpc for UnloadingGuestDriver {
    const FUNCTION: RpcFunction = RpcFunction::UnloadingGuestDriver;
    type Reply = ();
    fn encode(&self, out: &mut Vec<u8>) {
        let params = RpcUnloadingGuestDriverV1F07 {
            b_in_pm_transition: self.in_pm_transition as u8,
            b_gc6_entering: self.gc6_entering as u8,
            _padding: [0; 2],
            new_level: self.new_level,
        };
        out.extend_from_slice(params.as_bytes());
    }
    fn decode_reply(_: &[u8]) -> Result<(), RpcError> {
        Ok(())
    }
}
