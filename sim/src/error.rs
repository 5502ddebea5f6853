//! What the model rejects, and how tests see it.
//!
//! Real hardware answers a wrong access with a PRI error, a hang or silence; the model answers
//! the same way on the bus (poison reads, dropped writes, a falcon halting with an error code)
//! and also records a [`ModelError`] that names the access, so a driver bug shows up as a test
//! failure that says what went wrong. Every record is also logged with `log::warn!`.

use core::fmt;

use nvgpu::hw::engine::FalconEngine;

use crate::booter::BooterError;
use crate::gsp_rm::GspRmError;
use crate::ucode::HaltCode;

/// The value a read of an unmodelled (or refused) register returns: 0xBADF5040.
///
/// The top 12 bits are 0xBAD, so RM's register-read sanity check
/// (`(value & GPU_READ_PRI_ERROR_MASK) == GPU_READ_PRI_ERROR_CODE`, `gpu_access.c`) flags it as
/// a possible PRI error; the top 16 are 0xBADF, the prefix of NVIDIA's PRI error codes that RM's
/// comments call "the 0xbadf sanity checking" (`g_gpu_access_nvoc.h`) and that falcons see as
/// `FLCN_CSB_PRIV_PRI_ERROR_CODE` (`flcnretval.h`); the low 16 bits, 0x5040, mark it as the
/// model's (NVIDIA's 535.261.03 source defines no 0xBADF5040). No modelled register holds it
/// unless the driver wrote it there.
pub const POISON: u32 = 0xBADF_5040;

const _: () = {
    use nvgpu::hw::pri::*;
    assert!(POISON & GPU_READ_PRI_ERROR_MASK == GPU_READ_PRI_ERROR_CODE);
    assert!(POISON & FLCN_CSB_PRIV_PRI_ERROR_MASK == FLCN_CSB_PRIV_PRI_ERROR_CODE);
};

/// A read or a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Read,
    Write,
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
        })
    }
}

/// An access to a BAR0 offset the model does not implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnmodelledAccess {
    /// BAR0 offset.
    pub offset: u32,
    pub kind: AccessKind,
    /// The value written, or for a read the poison returned.
    pub value: u32,
}

impl fmt::Display for UnmodelledAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unmodelled register {} at BAR0 {:#08x} (value {:#010x})", self.kind, self.offset, self.value)
    }
}

/// Which falcon memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FalconMemory {
    Imem,
    Dmem,
    Emem,
}

impl fmt::Display for FalconMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FalconMemory::Imem => "IMEM",
            FalconMemory::Dmem => "DMEM",
            FalconMemory::Emem => "EMEM",
        })
    }
}

/// A falcon DMA the model refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmaError {
    /// `DMATRFCMD_SIZE` other than `SIZE_256B`, the one size the header names.
    UnsupportedSize { raw_size: u32 },
    /// The falcon-memory offset (`DMATRFMOFFS`) or the external offset (`DMATRFFBOFFS`) is not
    /// a multiple of the 256-byte transfer.
    Misaligned { memory_offset: u32, external_offset: u32 },
    /// The transfer runs past the end of IMEM/DMEM.
    OutOfRange { memory: FalconMemory, offset: u32, size: u32 },
    /// `DMACTL_REQUIRE_CTX` is set: the model binds no DMA context (clear it, as RM's
    /// `kflcnDisableCtxReq` does).
    RequiresContext,
    /// `NV_PFALCON_FBIF_CTL_ALLOW_PHYS_NO_CTX` is clear.
    PhysicalWithoutContextNotAllowed,
    /// `NV_PFALCON_FBIF_TRANSCFG(ctxdma)` does not select physical coherent system memory (the
    /// model has no other aperture a falcon can reach).
    Aperture { ctxdma: u32, transcfg: u32 },
    /// No system memory is attached to the model (`ModelGpu::set_system_memory`).
    NoSystemMemory,
    /// System memory refused the bus address range.
    Fault { bus: u64, len: u32, write: bool },
}

impl fmt::Display for DmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DmaError::UnsupportedSize { raw_size } => {
                write!(f, "DMATRFCMD size {raw_size:#x} unsupported (only SIZE_256B)")
            }
            DmaError::Misaligned { memory_offset, external_offset } => {
                write!(f, "DMA offsets not 256-byte aligned (MOFFS {memory_offset:#x}, FBOFFS {external_offset:#x})")
            }
            DmaError::OutOfRange { memory, offset, size } => {
                write!(f, "DMA to {memory} offset {offset:#x} past its {size:#x} bytes")
            }
            DmaError::RequiresContext => write!(f, "DMA with DMACTL_REQUIRE_CTX set (no context bound)"),
            DmaError::PhysicalWithoutContextNotAllowed => {
                write!(f, "DMA with FBIF_CTL_ALLOW_PHYS_NO_CTX clear")
            }
            DmaError::Aperture { ctxdma, transcfg } => {
                write!(f, "FBIF_TRANSCFG({ctxdma}) = {transcfg:#x} is not physical coherent system memory")
            }
            DmaError::NoSystemMemory => write!(f, "DMA with no system memory attached to the model"),
            DmaError::Fault { bus, len, write } => write!(
                f,
                "DMA {} of {len:#x} bytes at bus address {bus:#x} faulted",
                if write { "write" } else { "read" }
            ),
        }
    }
}

/// Something a falcon refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FalconError {
    /// A register of the falcon was accessed while its engine is held in reset.
    InReset { offset: u32, kind: AccessKind },
    /// IMEM/DMEM was accessed (or the CPU started) before scrubbing after reset finished.
    Scrubbing { what: &'static str },
    /// The FSP's memories and CPU belong to its own firmware; the driver may only use EMEM.
    Privileged { what: &'static str },
    /// A PIO access past the end of a memory (size from HWCFG).
    OutOfRange { memory: FalconMemory, address: u32, size: u32 },
    /// A PIO read of secure IMEM.
    SecureImemRead { address: u32 },
    /// A value with bits set that the register's declaration does not define.
    UndefinedBits { register: &'static str, value: u32 },
    /// A DMA the model refused (nothing was transferred).
    Dma(DmaError),
    /// A start that did not happen: `reason` says why.
    StartIgnored { reason: &'static str },
    /// The ucode (or the model's boot ROM) halted with an error in `MAILBOX0`.
    Halted { code: HaltCode },
}

impl fmt::Display for FalconError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            FalconError::InReset { offset, kind } => {
                write!(f, "{kind} of {offset:#08x} while the engine is held in reset")
            }
            FalconError::Scrubbing { what } => write!(f, "{what} before memory scrubbing finished"),
            FalconError::Privileged { what } => write!(f, "{what}: privileged (FSP-owned)"),
            FalconError::OutOfRange { memory, address, size } => {
                write!(f, "{memory} PIO at {address:#x} past its {size:#x} bytes")
            }
            FalconError::SecureImemRead { address } => write!(f, "PIO read of secure IMEM at {address:#x}"),
            FalconError::UndefinedBits { register, value } => {
                write!(f, "{register} written with undefined bits ({value:#010x})")
            }
            FalconError::Dma(e) => write!(f, "DMA refused: {e}"),
            FalconError::StartIgnored { reason } => write!(f, "start ignored: {reason}"),
            FalconError::Halted { code } => write!(f, "halted with MAILBOX0 = {code}"),
        }
    }
}

/// One thing the model rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModelError {
    /// An access to a register the model does not implement.
    Unmodelled(UnmodelledAccess),
    /// A doorbell that runs nothing.
    Doorbell { token: u32, reason: &'static str },
    /// A channel stopped with a robust-channel error.
    ChannelError { chid: u32, xid: u32 },
    /// A BAR0 access at an offset that is not a multiple of 4.
    Misaligned { offset: u32, kind: AccessKind, value: u32 },
    /// A write to a register the driver may not write (read-only, or privileged).
    ReadOnly { register: &'static str, offset: u32, value: u32 },
    /// Something a falcon refused.
    Falcon { engine: FalconEngine, error: FalconError },
    /// A booter on SEC2 refused the boot (SEC2 halted with the error's `MAILBOX0`).
    Booter(BooterError),
    /// GSP-RM refused something the CPU gave it.
    GspRm(GspRmError),
    /// A BAR1 access that reached no VRAM: outside the aperture, BAR1 not bound, or an MMU
    /// fault (`fault`, also in the MMU fault log). Reads return 0xFF bytes, writes are dropped.
    Bar1 { offset: u64, len: u64, write: bool, reason: &'static str, fault: Option<crate::engine_mem::MmuFault> },
    /// The replayable fault buffer refused a register access or a replay/cancel.
    FaultBuffer(crate::fault_buffer::FaultBufferError),
    /// BAR0 accesses made while another access was still running inside the model (the
    /// driver re-entered the GPU from a callback of its own access): `count` of them, the
    /// first at `offset`. Each read returned poison and each write was dropped.
    Reentrant { count: u64, offset: u32, kind: AccessKind },
    /// A PCI configuration write that changed nothing: `reason` says why (an identity
    /// register, an empty BAR slot, an offset the model's header does not implement).
    PciConfigWrite { offset: u16, value: u32, reason: &'static str },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Unmodelled(access) => write!(f, "{access}"),
            ModelError::Doorbell { token, reason } => write!(f, "doorbell with work-submit token {token:#x}: {reason}"),
            ModelError::ChannelError { chid, xid } => {
                write!(f, "channel {chid} stopped with robust-channel error Xid {xid}")
            }
            ModelError::Misaligned { offset, kind, value } => {
                write!(f, "misaligned BAR0 {kind} at {offset:#08x} (value {value:#010x})")
            }
            ModelError::ReadOnly { register, offset, value } => {
                write!(f, "write of {value:#010x} to {register} ({offset:#08x}), which the driver may not write")
            }
            ModelError::Falcon { engine, error } => write!(f, "{engine:?} falcon: {error}"),
            ModelError::Booter(error) => write!(f, "SEC2 booter: {error}"),
            ModelError::GspRm(error) => write!(f, "GSP-RM: {error}"),
            ModelError::FaultBuffer(error) => write!(f, "{error}"),
            ModelError::PciConfigWrite { offset, value, reason } => {
                write!(f, "PCI configuration write of {value:#010x} at {offset:#05x}: {reason}")
            }
            ModelError::Reentrant { count, offset, kind } => write!(
                f,
                "{count} re-entrant BAR0 access(es), the first a {kind} at {offset:#08x}, made while another access was running"
            ),
            ModelError::Bar1 { offset, len, write, reason, fault } => {
                let what = if *write { "write" } else { "read" };
                write!(f, "BAR1 {what} of {len:#x} bytes at {offset:#x}: {reason}")?;
                match fault {
                    Some(fault) => write!(f, " ({fault})"),
                    None => Ok(()),
                }
            }
        }
    }
}
