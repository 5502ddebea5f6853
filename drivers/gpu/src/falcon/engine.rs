//! The falcon engines as types, so that what one engine cannot do does not compile on it: the
//! host resets, loads and starts GSP and SEC2 ([`HostBooted`]) but never the FSP, whose own
//! firmware owns its CPU and memories; only GSP and the FSP have EMEM ports the host reaches
//! ([`HasEmem`]). A `Falcon<R, C, Sec2>` has no `emem_write`, a `Falcon<R, C, Fsp>` no `reset`.
//!
//! Whether a chip has the engine at all stays a run-time question of its HAL
//! ([`super::Falcon::new`] answers `NotPresent`), as do the layout-dependent RISC-V operations.
//!
//! What compiles, and what does not (each refused example has an accepted twin, so the refusal
//! is the engine's and not a typo's):
//! ```
//! use nvgpu::falcon::{Falcon, Fsp, Gsp, Sec2};
//! use nvgpu::{hw::RegisterIo, platform::Clock};
//! fn boot<R: RegisterIo, C: Clock>(gsp: &Falcon<R, C, Gsp>, sec2: &Falcon<R, C, Sec2>, fsp: &Falcon<R, C, Fsp>) {
//!     let _ = gsp.reset();
//!     let _ = sec2.reset();
//!     let _ = gsp.emem_write(0, &[0; 4]);
//!     let _ = fsp.emem_write(0, &[0; 4]);
//! }
//! ```
//! ```compile_fail
//! use nvgpu::falcon::{Falcon, Fsp};
//! use nvgpu::{hw::RegisterIo, platform::Clock};
//! fn boot<R: RegisterIo, C: Clock>(fsp: &Falcon<R, C, Fsp>) {
//!     let _ = fsp.reset(); // the FSP boots itself
//! }
//! ```
//! ```compile_fail
//! use nvgpu::falcon::{Falcon, Sec2};
//! use nvgpu::{hw::RegisterIo, platform::Clock};
//! fn boot<R: RegisterIo, C: Clock>(sec2: &Falcon<R, C, Sec2>) {
//!     let _ = sec2.emem_write(0, &[0; 4]); // SEC2 has no EMEM port for the host
//! }
//! ```

use crate::hw::engine::{self, FalconEngine, NV_PFSP_EMEMC, NV_PFSP_EMEMD, NV_PGSP_EMEMC, NV_PGSP_EMEMD};

mod sealed {
    pub trait Sealed {}
}

/// A falcon engine, by type.
pub trait Engine: sealed::Sealed {
    /// The engine this type stands for.
    const ENGINE: FalconEngine;
}

/// An engine the host resets, loads and starts itself.
pub trait HostBooted: Engine {
    /// BAR0 offset of its `NV_P*_FALCON_ENGINE` (the per-engine reset).
    const ENGINE_RESET: u32;
    /// Whether RM's GH100 reset handshake (`RESET_STATUS`) applies to it where the HAL says so.
    const RESET_STATUS_HANDSHAKE: bool;
}

/// An engine whose EMEM the host reaches through EMEMC/EMEMD ports.
pub trait HasEmem: Engine {
    /// BAR0 offsets of `EMEMC` and `EMEMD` of `port`.
    fn emem_ports(port: u32) -> (u32, u32);
}

/// The GPU System Processor: runs FWSEC, the bootloaders and GSP-RM.
#[derive(Clone, Copy, Debug)]
pub struct Gsp;
/// Security engine 2: runs the booter (Turing to Ada).
#[derive(Clone, Copy, Debug)]
pub struct Sec2;
/// The Firmware Security Processor (Hopper on): the host only talks to it through EMEM.
#[derive(Clone, Copy, Debug)]
pub struct Fsp;

impl sealed::Sealed for Gsp {}
impl sealed::Sealed for Sec2 {}
impl sealed::Sealed for Fsp {}

impl Engine for Gsp {
    const ENGINE: FalconEngine = FalconEngine::Gsp;
}
impl Engine for Sec2 {
    const ENGINE: FalconEngine = FalconEngine::Sec2;
}
impl Engine for Fsp {
    const ENGINE: FalconEngine = FalconEngine::Fsp;
}

impl HostBooted for Gsp {
    const ENGINE_RESET: u32 = engine::NV_PGSP_FALCON_ENGINE::OFFSET;
    const RESET_STATUS_HANDSHAKE: bool = true;
}
impl HostBooted for Sec2 {
    const ENGINE_RESET: u32 = engine::NV_PSEC_FALCON_ENGINE::OFFSET;
    const RESET_STATUS_HANDSHAKE: bool = false;
}

impl HasEmem for Gsp {
    fn emem_ports(port: u32) -> (u32, u32) {
        (NV_PGSP_EMEMC::address(port), NV_PGSP_EMEMD::address(port))
    }
}
impl HasEmem for Fsp {
    fn emem_ports(port: u32) -> (u32, u32) {
        (NV_PFSP_EMEMC::address(port), NV_PFSP_EMEMD::address(port))
    }
}
