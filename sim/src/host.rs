//! The model's host (PBDMA): runs a channel's GPFIFO when its doorbell rings.
//!
//! Formats are the shared facts of `nvgpu::hw::host` (`clc46f.h`, `clc56f.h`, `clc86f.h`) and
//! USERD's layout of `nvgpu::hw::host::UserdControl`. On a doorbell the host reads `GPPut`
//! from USERD, fetches each GPFIFO entry from `GPGet` on through the channel's VA space (the MMU
//! and the driver's page tables), fetches the pushbuffer segment the entry names, decodes method
//! headers (incrementing, non-incrementing, increment-once, immediate), executes host methods
//! itself (`SET_OBJECT`, semaphores, `NOP`, `WFI`, `NON_STALL_INTERRUPT`, `SET_REFERENCE`,
//! `MEM_OP_*` TLB invalidation) and hands methods from `0x100` up to the engine bound on the
//! subchannel. After each entry it writes `GPGet` back to USERD.
//!
//! A semaphore acquire that is not yet satisfied stops the channel where it is; the next run
//! (another doorbell, or the GPU letting pending work advance) re-evaluates it. An engine
//! stalled on replayable faults (a compute launch whose warps wait for UVM) stops the channel
//! at the method that launched it; the next run issues that method again, which resumes the
//! engine, and goes on from there.
//!
//! `MEM_OP_D` with `OPERATION` `MMU_TLB_INVALIDATE(_TARGETED)` invalidates the TLB, and its
//! `MEM_OP_C` `REPLAY` field asks for a fault replay (`START`, `START_ACK_ALL`) or a precise
//! cancel (`CANCEL_VA_GLOBAL`, with the PDB of `MEM_OP_C/D` and the VA of `MEM_OP_A/B`), which the
//! host hands to the GPU ([`HostEffects::replay`], [`HostEffects::cancel_va`]), as UVM's replays
//! and cancels on a channel reach the MMU (`uvm_volta_host.c`). The other replay modes
//! (`CANCEL_TARGETED`, `CANCEL_GLOBAL`) are refused: UVM does not use them on Volta and later. Anything the
//! host cannot execute (an MMU fault, a malformed entry or method header, an unknown host
//! method, an engine's error) stops the channel with a [`HostError`]: the GPU turns it into a
//! robust-channel error for this channel only.
//!
//! Method data that continues past the end of a GPFIFO segment is refused (hardware allows it;
//! the driver never emits it).

use alloc::vec::Vec;
use core::fmt;

use nvgpu::hw::host::{
    method, DmaSecOp, GpFetch, GpLevel, GpOpcode, SemOperation, NVC46F_DMA, NVC46F_GP_ENTRY0, NVC46F_GP_ENTRY1,
    NVC46F_SEM_EXECUTE, NVC46F_SET_OBJECT,
};
use nvgpu::hw::host::{USERD_GP_GET, USERD_GP_PUT, USERD_REFERENCE};

use nvgpu::hw::host::{TlbInvalidateAccessType, TlbInvalidatePdbAperture, TlbInvalidateReplay};

use crate::engine_mem::{MmuFault, PhysAddr, PhysAperture, PhysicalMemory, VirtualMemory};

/// Where a segment stopped.
enum Stop {
    Finished,
    Blocked(u64),
    Stalled(u8),
}

/// Subchannels per channel (`NVC46F_NUMBER_OF_SUBCHANNELS`).
pub const SUBCHANNELS: usize = nvgpu::hw::host::NVC46F_NUMBER_OF_SUBCHANNELS as usize;
/// First method that belongs to the engine on the subchannel rather than to host.
pub const FIRST_ENGINE_METHOD: u32 = 0x100;
/// Size of a GPFIFO entry.
const GP_ENTRY_BYTES: u64 = nvgpu::hw::host::NVC46F_GP_ENTRY__SIZE as u64;

/// Why a channel stopped with an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostError {
    /// The host's own fetch (GPFIFO entry, pushbuffer, semaphore) faulted.
    Fault(MmuFault),
    /// USERD could not be read or written.
    UserdUnreachable { userd: PhysAddr },
    /// `GPPut` is not an entry of the ring.
    BadGpPut { gp_put: u32, entries: u32 },
    /// A GPFIFO entry the host cannot execute.
    BadGpEntry { index: u32, entry: [u32; 2], reason: &'static str },
    /// A pushbuffer word that is not a valid method header, or method data that runs past the
    /// segment.
    BadMethodHeader { va: u64, word: u32, reason: &'static str },
    /// A host method this model does not execute, or bad data for one it does.
    BadHostMethod { subchannel: u8, method: u32, data: u32 },
    /// An engine method on a subchannel with no object bound.
    NoObject { subchannel: u8, method: u32 },
    /// The engine bound on the subchannel refused a method or failed executing it.
    Engine { subchannel: u8, class: u32, method: u32, data: u32, error: EngineError },
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Fault(fault) => write!(f, "host fetch: {fault}"),
            HostError::UserdUnreachable { userd } => write!(f, "USERD at {userd:?} is not reachable"),
            HostError::BadGpPut { gp_put, entries } => write!(f, "GPPut {gp_put} outside a ring of {entries} entries"),
            HostError::BadGpEntry { index, entry, reason } => {
                write!(f, "GPFIFO entry {index} ({:#010x} {:#010x}): {reason}", entry[0], entry[1])
            }
            HostError::BadMethodHeader { va, word, reason } => {
                write!(f, "pushbuffer word {word:#010x} at VA {va:#x}: {reason}")
            }
            HostError::BadHostMethod { subchannel, method, data } => {
                write!(f, "host method {method:#x} = {data:#x} on subchannel {subchannel} is not executable")
            }
            HostError::NoObject { subchannel, method } => {
                write!(f, "method {method:#x} on subchannel {subchannel}, which has no object bound")
            }
            HostError::Engine { subchannel, class, method, data, error } => {
                write!(f, "class {class:#06x} on subchannel {subchannel}, method {method:#x} = {data:#x}: {error}")
            }
        }
    }
}

/// What an engine reports when it cannot take a method.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineError {
    /// The engine's access faulted.
    Fault(MmuFault),
    /// The engine refused the method (unknown method, reserved value, unsupported operation).
    Refused(alloc::string::String),
    /// The class is not one this GPU's engines implement.
    UnknownClass,
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Fault(fault) => write!(f, "{fault}"),
            EngineError::Refused(why) => f.write_str(why),
            EngineError::UnknownClass => f.write_str("no engine implements this class"),
        }
    }
}

/// The engines behind a channel's subchannels.
pub trait EngineDispatch {
    /// Binds `class` to `subchannel` (`SET_OBJECT`); an error when no engine has the class.
    fn bind(&mut self, subchannel: u8, class: u32) -> Result<(), EngineError>;
    /// One method for the object of `class` on `subchannel`.
    fn method(
        &mut self,
        subchannel: u8,
        class: u32,
        method: u32,
        data: u32,
        vm: &mut dyn VirtualMemory,
        pm: &mut dyn PhysicalMemory,
    ) -> Result<EngineStatus, EngineError>;
}

/// A channel as the host runs it.
#[derive(Clone, Debug)]
pub struct HostChannel {
    pub chid: u32,
    /// GPU VA of the GPFIFO ring.
    pub gpfifo_va: u64,
    /// Entries in the ring.
    pub gpfifo_entries: u32,
    /// Where USERD is.
    pub userd: PhysAddr,
    /// The entry the host reads next.
    pub gp_get: u32,
    /// Dwords of the current entry already executed (a blocked acquire resumes there).
    resume_dword: u32,
    /// Methods of the header at `resume_dword` already executed (a stalled engine method
    /// resumes at the next one, itself).
    resume_calls: u32,
    /// The class bound to each subchannel.
    subchannels: [Option<u32>; SUBCHANNELS],
    sem_addr: u64,
    sem_payload: u64,
    mem_op: [u32; 3],
    /// Non-stalling interrupts raised.
    pub non_stall_interrupts: u32,
    /// TLB invalidations requested through `MEM_OP_D`.
    pub tlb_invalidations: u32,
    /// Methods executed (host and engine).
    pub methods: u64,
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// Every entry up to `GPPut` executed.
    Idle,
    /// Stopped at a semaphore acquire that is not satisfied yet.
    Blocked { va: u64 },
    /// Stopped at an engine method whose work is stalled on replayable faults (the engine on
    /// `subchannel` holds them); runs on after a replay.
    Stalled { subchannel: u8 },
    /// Stopped with an error; the channel must not run again.
    Error(HostError),
}

/// What a run asks of the GPU beyond the channel itself.
pub trait HostEffects {
    /// The current GPU time in ns (semaphore timestamps).
    fn timestamp_ns(&mut self) -> u64;
    /// `MEM_OP_D` asked for a TLB invalidation of this channel's VA space.
    fn invalidate_tlb(&mut self);
    /// A TLB invalidate with `REPLAY` `START` (`ack_all` false) or `START_ACK_ALL`: the faulted
    /// accesses are retried.
    fn replay(&mut self, ack_all: bool);
    /// A TLB invalidate with `REPLAY` `CANCEL_VA_GLOBAL`: the faulted accesses of the address
    /// space at `pdb` to the page at `va` are cancelled (`access`: `ACCESS_TYPE`, `mmu_engine_id`
    /// from `MEM_OP_A`).
    fn cancel_va(&mut self, pdb: PhysAddr, va: u64, access: TlbInvalidateAccessType, mmu_engine_id: u16);
}

/// What an engine did with a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineStatus {
    /// Executed.
    Done,
    /// Started (or resumed) work that is stalled on replayable faults: the host stops here and
    /// issues the same method again on its next run.
    Stalled,
}

impl HostChannel {
    pub fn new(chid: u32, gpfifo_va: u64, gpfifo_entries: u32, userd: PhysAddr) -> Self {
        HostChannel {
            chid,
            gpfifo_va,
            gpfifo_entries,
            userd,
            gp_get: 0,
            resume_dword: 0,
            resume_calls: 0,
            subchannels: [None; SUBCHANNELS],
            sem_addr: 0,
            sem_payload: 0,
            mem_op: [0; 3],
            non_stall_interrupts: 0,
            tlb_invalidations: 0,
            methods: 0,
        }
    }

    /// The class bound on `subchannel`.
    pub fn bound(&self, subchannel: u8) -> Option<u32> {
        self.subchannels.get(subchannel as usize).copied().flatten()
    }

    fn userd_u32(&self, pm: &mut dyn PhysicalMemory, offset: u64) -> Result<u32, HostError> {
        let mut b = [0u8; 4];
        let at = PhysAddr { aperture: self.userd.aperture, addr: self.userd.addr + offset };
        if !pm.read_phys(at, &mut b) {
            return Err(HostError::UserdUnreachable { userd: self.userd });
        }
        Ok(u32::from_le_bytes(b))
    }

    fn set_userd_u32(&self, pm: &mut dyn PhysicalMemory, offset: u64, value: u32) -> Result<(), HostError> {
        let at = PhysAddr { aperture: self.userd.aperture, addr: self.userd.addr + offset };
        if !pm.write_phys(at, &value.to_le_bytes()) {
            return Err(HostError::UserdUnreachable { userd: self.userd });
        }
        Ok(())
    }

    /// Runs the channel until it is idle, blocked or fails.
    pub fn run(
        &mut self,
        vm: &mut dyn VirtualMemory,
        pm: &mut dyn PhysicalMemory,
        engines: &mut dyn EngineDispatch,
        effects: &mut dyn HostEffects,
    ) -> RunOutcome {
        match self.run_inner(vm, pm, engines, effects) {
            Ok(outcome) => outcome,
            Err(error) => RunOutcome::Error(error),
        }
    }

    fn run_inner(
        &mut self,
        vm: &mut dyn VirtualMemory,
        pm: &mut dyn PhysicalMemory,
        engines: &mut dyn EngineDispatch,
        effects: &mut dyn HostEffects,
    ) -> Result<RunOutcome, HostError> {
        let gp_put = self.userd_u32(pm, USERD_GP_PUT)?;
        if gp_put >= self.gpfifo_entries {
            return Err(HostError::BadGpPut { gp_put, entries: self.gpfifo_entries });
        }
        let mut segment: Vec<u32> = Vec::new();
        while self.gp_get != gp_put {
            let index = self.gp_get;
            let mut raw = [0u8; 8];
            vm.read(self.gpfifo_va + u64::from(index) * GP_ENTRY_BYTES, &mut raw).map_err(HostError::Fault)?;
            let entry = [
                u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]),
                u32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]),
            ];
            let e0 = NVC46F_GP_ENTRY0(entry[0]);
            let e1 = NVC46F_GP_ENTRY1(entry[1]);
            let length = e1.length();
            let bad = |reason| HostError::BadGpEntry { index, entry, reason };
            if length != 0 {
                if e1.level() != Ok(GpLevel::Main) {
                    return Err(bad("subroutine entries are not supported by the model"));
                }
                if e0.fetch() != Ok(GpFetch::Unconditional) {
                    return Err(bad("conditional fetch is not supported by the model"));
                }
                let va = (u64::from(e0.get_lo()) << 2) | (u64::from(e1.get_hi()) << 32);
                segment.clear();
                segment.resize(length as usize, 0);
                let bytes: &mut [u8] = bytemuck_u32s(&mut segment);
                vm.read(va, bytes).map_err(HostError::Fault)?;
                fix_endianness(&mut segment);
                match self.execute_segment(va, &segment, vm, pm, engines, effects)? {
                    Stop::Finished => {}
                    Stop::Blocked(va) => return Ok(RunOutcome::Blocked { va }),
                    Stop::Stalled(subchannel) => return Ok(RunOutcome::Stalled { subchannel }),
                }
            } else {
                match e1.opcode() {
                    Ok(GpOpcode::Nop) => {}
                    Ok(GpOpcode::Illegal) => return Err(bad("ILLEGAL control entry")),
                    // CRC entries check what the model does not compute.
                    _ => return Err(bad("control entry opcode not supported by the model")),
                }
            }
            self.resume_dword = 0;
            self.resume_calls = 0;
            self.gp_get = (self.gp_get + 1) % self.gpfifo_entries;
            self.set_userd_u32(pm, USERD_GP_GET, self.gp_get)?;
        }
        Ok(RunOutcome::Idle)
    }

    /// Executes one segment from `resume_dword` (and `resume_calls`).
    fn execute_segment(
        &mut self,
        va: u64,
        words: &[u32],
        vm: &mut dyn VirtualMemory,
        pm: &mut dyn PhysicalMemory,
        engines: &mut dyn EngineDispatch,
        effects: &mut dyn HostEffects,
    ) -> Result<Stop, HostError> {
        let mut at = self.resume_dword as usize;
        while at < words.len() {
            let header_at = at;
            let word = words[at];
            let word_va = va + 4 * at as u64;
            let header = NVC46F_DMA(word);
            let address = u32::from(header.method_address()) << 2;
            let subchannel = header.method_subchannel();
            let count = usize::from(header.method_count());
            let bad = |reason| HostError::BadMethodHeader { va: word_va, word, reason };
            // (method, data) pairs of this header.
            let mut calls: Vec<(u32, u32)> = Vec::new();
            let op = header.sec_op();
            match op {
                Ok(DmaSecOp::Grp0UseTert) => {
                    if word != 0 {
                        return Err(bad("tertiary-op header (sub-device mask) not supported by the model"));
                    }
                    at += 1;
                    self.resume_dword = at as u32;
                    self.resume_calls = 0;
                    continue;
                }
                Ok(DmaSecOp::ImmdDataMethod) => {
                    calls.push((address, u32::from(header.immd_data())));
                    at += 1;
                }
                Ok(kind @ (DmaSecOp::IncMethod | DmaSecOp::NonIncMethod | DmaSecOp::OneInc)) => {
                    let data = words.get(at + 1..at + 1 + count).ok_or(bad("method data runs past the segment"))?;
                    for (i, &d) in data.iter().enumerate() {
                        let m = if kind == DmaSecOp::IncMethod {
                            address + 4 * i as u32
                        } else if kind == DmaSecOp::OneInc && i > 0 {
                            address + 4
                        } else {
                            address
                        };
                        calls.push((m, d));
                    }
                    at += 1 + count;
                }
                Ok(DmaSecOp::EndPbSegment) => return Ok(Stop::Finished),
                _ => return Err(bad("reserved method header opcode")),
            }
            // A blocked acquire must resume at the header that holds it: keep `resume_dword` at
            // the header until all of its methods ran; methods before the acquire in the same
            // header are only re-run if they are idempotent state writes (the semaphore method
            // group is), which is how the driver emits acquires.
            // A stalled engine method resumes at itself: the calls before it are not run again.
            let done = self.resume_calls as usize;
            for (i, (method, data)) in calls.into_iter().enumerate().skip(done) {
                self.methods += 1;
                if method < FIRST_ENGINE_METHOD {
                    if let Some(blocked) = self.host_method(subchannel, method, data, vm, pm, engines, effects)? {
                        self.resume_dword = header_at as u32;
                        self.resume_calls = 0;
                        return Ok(Stop::Blocked(blocked));
                    }
                } else {
                    let class = self.bound(subchannel).ok_or(HostError::NoObject { subchannel, method })?;
                    let status = engines
                        .method(subchannel, class, method, data, vm, pm)
                        .map_err(|error| HostError::Engine { subchannel, class, method, data, error })?;
                    if status == EngineStatus::Stalled {
                        self.resume_dword = header_at as u32;
                        self.resume_calls = i as u32;
                        return Ok(Stop::Stalled(subchannel));
                    }
                }
            }
            self.resume_dword = at as u32;
            self.resume_calls = 0;
        }
        Ok(Stop::Finished)
    }

    #[allow(clippy::too_many_arguments)] // the host's whole view of one method
    fn host_method(
        &mut self,
        subchannel: u8,
        method: u32,
        data: u32,
        vm: &mut dyn VirtualMemory,
        pm: &mut dyn PhysicalMemory,
        engines: &mut dyn EngineDispatch,
        effects: &mut dyn HostEffects,
    ) -> Result<Option<u64>, HostError> {
        let refuse = || HostError::BadHostMethod { subchannel, method, data };
        match method {
            method::NVC46F_SET_OBJECT => {
                let class = u32::from(NVC46F_SET_OBJECT(data).nvclass());
                engines.bind(subchannel, class).map_err(|error| HostError::Engine {
                    subchannel,
                    class,
                    method,
                    data,
                    error,
                })?;
                self.subchannels[usize::from(subchannel) % SUBCHANNELS] = Some(class);
            }
            method::NVC46F_NOP | method::NVC46F_WFI => {}
            method::NVC46F_NON_STALL_INTERRUPT => self.non_stall_interrupts += 1,
            method::NVC46F_SET_REFERENCE => self.set_userd_u32(pm, USERD_REFERENCE, data)?,
            method::NVC46F_MEM_OP_A | method::NVC46F_MEM_OP_B | method::NVC46F_MEM_OP_C => {
                self.mem_op[((method - method::NVC46F_MEM_OP_A) / 4) as usize] = data;
            }
            method::NVC46F_MEM_OP_D => {
                use nvgpu::hw::host::{
                    NVC46F_MEM_OP_D_OPERATION as OP, NVC46F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE as INVALIDATE,
                    NVC46F_MEM_OP_D_OPERATION_MMU_TLB_INVALIDATE_TARGETED as TARGETED,
                };
                match (data >> OP.first) & ((1u32 << (OP.last - OP.first + 1)) - 1) {
                    INVALIDATE | TARGETED => {
                        self.tlb_invalidations += 1;
                        effects.invalidate_tlb();
                        self.fault_op(data, effects).ok_or_else(refuse)?;
                    }
                    _ => return Err(refuse()),
                }
            }
            method::NVC46F_SEM_ADDR_LO => {
                self.sem_addr = (self.sem_addr & !0xFFFF_FFFF) | u64::from(data & !3);
                if data & 3 != 0 {
                    return Err(refuse());
                }
            }
            method::NVC46F_SEM_ADDR_HI => {
                self.sem_addr = (self.sem_addr & 0xFFFF_FFFF) | (u64::from(data & 0x01FF_FFFF) << 32);
            }
            method::NVC46F_SEM_PAYLOAD_LO => {
                self.sem_payload = (self.sem_payload & !0xFFFF_FFFF) | u64::from(data);
            }
            method::NVC46F_SEM_PAYLOAD_HI => {
                self.sem_payload = (self.sem_payload & 0xFFFF_FFFF) | (u64::from(data) << 32);
            }
            method::NVC46F_SEM_EXECUTE => {
                return self.semaphore(data, vm, effects).map_err(|e| e.unwrap_or_else(refuse))
            }
            _ => return Err(refuse()),
        }
        Ok(None)
    }

    /// The `REPLAY` part of a TLB invalidate whose `MEM_OP_D` is `d`; `None` for a mode the model
    /// refuses.
    fn fault_op(&self, d: u32, effects: &mut dyn HostEffects) -> Option<()> {
        use nvgpu::hw::host::{NVC46F_MEM_OP_A, NVC46F_MEM_OP_B, NVC46F_MEM_OP_C, NVC46F_MEM_OP_D};
        let [a, b, c] = self.mem_op;
        let c = NVC46F_MEM_OP_C(c);
        match c.replay().ok()? {
            TlbInvalidateReplay::None => Some(()),
            TlbInvalidateReplay::Start => {
                effects.replay(false);
                Some(())
            }
            TlbInvalidateReplay::StartAckAll => {
                effects.replay(true);
                Some(())
            }
            TlbInvalidateReplay::CancelVaGlobal => {
                let a = NVC46F_MEM_OP_A(a);
                let va = (u64::from(NVC46F_MEM_OP_B(b).target_addr_hi()) << 32) | (u64::from(a.target_addr_lo()) << 12);
                let pdb_page = (u64::from(NVC46F_MEM_OP_D(d).pdb_addr_hi()) << 20) | u64::from(c.pdb_addr_lo());
                let aperture = match c.pdb_aperture().ok()? {
                    TlbInvalidatePdbAperture::VidMem => PhysAperture::Video,
                    TlbInvalidatePdbAperture::SysMemCoherent => PhysAperture::SystemCoherent,
                    TlbInvalidatePdbAperture::SysMemNoncoherent => PhysAperture::SystemNonCoherent,
                };
                // The engine id is 7 bits (6:0) before Hopper, 9 (8:0) from Hopper; bits 8:7 are
                // otherwise unused in the cancel form, so Hopper's wider field reads both.
                let engine = nvgpu::hw::host::hopper::NVC86F_MEM_OP_A(self.mem_op[0]).cancel_mmu_engine_id();
                let pdb = PhysAddr { aperture, addr: pdb_page << 12 };
                effects.cancel_va(pdb, va, c.access_type().ok()?, engine);
                Some(())
            }
            TlbInvalidateReplay::CancelTargeted | TlbInvalidateReplay::CancelGlobal => None,
        }
    }

    /// `SEM_EXECUTE`; `Err(None)` for data the model refuses.
    fn semaphore(
        &mut self,
        data: u32,
        vm: &mut dyn VirtualMemory,
        effects: &mut dyn HostEffects,
    ) -> Result<Option<u64>, Option<HostError>> {
        let exec = NVC46F_SEM_EXECUTE(data);
        let wide = exec.payload_size_64bit();
        let va = self.sem_addr;
        if wide && !va.is_multiple_of(8) {
            return Err(None);
        }
        let Ok(op) = exec.operation() else { return Err(None) };
        if op == SemOperation::Release {
            let mut bytes = [0u8; 16];
            let n = if wide { 8 } else { 4 };
            bytes[..8].copy_from_slice(&self.sem_payload.to_le_bytes());
            let len = if exec.release_timestamp() {
                bytes[8..].copy_from_slice(&effects.timestamp_ns().to_le_bytes());
                16
            } else {
                n
            };
            if exec.release_timestamp() && !va.is_multiple_of(16) {
                return Err(None);
            }
            vm.write(va, &bytes[..len]).map_err(|f| Some(HostError::Fault(f)))?;
            return Ok(None);
        }
        let mut raw = [0u8; 8];
        let n = if wide { 8 } else { 4 };
        vm.read(va, &mut raw[..n]).map_err(|f| Some(HostError::Fault(f)))?;
        let value = u64::from_le_bytes(raw);
        let want = if wide { self.sem_payload } else { self.sem_payload & 0xFFFF_FFFF };
        let satisfied = match op {
            SemOperation::Acquire => value == want,
            SemOperation::AcqStrictGeq => value >= want,
            SemOperation::AcqCircGeq => {
                if wide {
                    (value.wrapping_sub(want) as i64) >= 0
                } else {
                    ((value as u32).wrapping_sub(want as u32) as i32) >= 0
                }
            }
            SemOperation::AcqAnd => value & want != 0,
            SemOperation::AcqNor => !(value | want) & if wide { u64::MAX } else { 0xFFFF_FFFF } != 0,
            _ => return Err(None),
        };
        Ok(if satisfied { None } else { Some(va) })
    }
}

/// Views a `u32` buffer as bytes (for one read into it).
fn bytemuck_u32s(words: &mut [u32]) -> &mut [u8] {
    zerocopy::IntoBytes::as_mut_bytes(words)
}

/// Pushbuffer words are little-endian in memory.
fn fix_endianness(words: &mut [u32]) {
    for w in words {
        *w = u32::from_le(*w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine_mem::{FlatMemory, PhysAperture};
    use nvgpu::host::{GpEntry, HostClass, PushBuffer};

    struct Phys(FlatMemory);
    impl PhysicalMemory for Phys {
        fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool {
            self.0.read(at.addr, buf).is_ok()
        }
        fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool {
            self.0.write(at.addr, data).is_ok()
        }
    }

    #[derive(Default)]
    struct Recorder {
        bound: Vec<(u8, u32)>,
        methods: Vec<(u8, u32, u32, u32)>,
        invalidations: u32,
    }
    impl EngineDispatch for Recorder {
        fn bind(&mut self, subchannel: u8, class: u32) -> Result<(), EngineError> {
            if class == 0xdead {
                return Err(EngineError::UnknownClass);
            }
            self.bound.push((subchannel, class));
            Ok(())
        }
        fn method(
            &mut self,
            subchannel: u8,
            class: u32,
            method: u32,
            data: u32,
            _vm: &mut dyn VirtualMemory,
            _pm: &mut dyn PhysicalMemory,
        ) -> Result<EngineStatus, EngineError> {
            self.methods.push((subchannel, class, method, data));
            Ok(EngineStatus::Done)
        }
    }
    impl HostEffects for Recorder {
        fn timestamp_ns(&mut self) -> u64 {
            0x1122_3344_5566_7788
        }
        fn invalidate_tlb(&mut self) {
            self.invalidations += 1;
        }
        fn replay(&mut self, _ack_all: bool) {}
        fn cancel_va(&mut self, _: PhysAddr, _: u64, _: TlbInvalidateAccessType, _: u16) {}
    }

    const BASE: u64 = 0x10_0000;
    const GPFIFO: u64 = BASE;
    const PB: u64 = BASE + 0x1000;
    const SEM: u64 = BASE + 0x3000;
    const USERD: u64 = 0x100;

    struct Rig {
        vm: FlatMemory,
        pm: Phys,
        ch: HostChannel,
        put: u32,
        pb_at: u64,
    }

    impl Rig {
        fn new() -> Self {
            Rig {
                vm: FlatMemory::new(BASE, 0x10000),
                pm: Phys(FlatMemory::new(0, 0x1000)),
                ch: HostChannel::new(1, GPFIFO, 4, PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD }),
                put: 0,
                pb_at: PB,
            }
        }

        fn submit(&mut self, pb: &PushBuffer) {
            let bytes: Vec<u8> = pb.words().iter().flat_map(|w| w.to_le_bytes()).collect();
            self.vm.write(self.pb_at, &bytes).unwrap();
            let entry = GpEntry::new(self.pb_at, pb.words().len() as u32, Default::default()).unwrap();
            let raw = entry.to_words();
            let mut e = [0u8; 8];
            e[..4].copy_from_slice(&raw[0].to_le_bytes());
            e[4..].copy_from_slice(&raw[1].to_le_bytes());
            self.vm.write(GPFIFO + 8 * u64::from(self.put), &e).unwrap();
            self.pb_at += bytes.len() as u64;
            self.put = (self.put + 1) % 4;
            self.pm.write_phys(
                PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD + USERD_GP_PUT },
                &self.put.to_le_bytes(),
            );
        }

        fn run(&mut self, rec: &mut Recorder) -> RunOutcome {
            let mut engines = Recorder::default();
            core::mem::swap(&mut engines, rec);
            let mut effects = Recorder::default();
            let out = self.ch.run(&mut self.vm, &mut self.pm, &mut engines, &mut effects);
            engines.invalidations += effects.invalidations;
            core::mem::swap(&mut engines, rec);
            out
        }

        fn sem(&mut self) -> u64 {
            let mut b = [0u8; 8];
            self.vm.read(SEM, &mut b).unwrap();
            u64::from_le_bytes(b)
        }

        fn userd(&mut self, off: u64) -> u32 {
            let mut b = [0u8; 4];
            self.pm.read_phys(PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD + off }, &mut b);
            u32::from_le_bytes(b)
        }
    }

    #[test]
    fn methods_reach_the_bound_engine_and_semaphores_release() {
        let mut rig = Rig::new();
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::AmpereA);
        pb.set_object(2, 0xc7b5).unwrap();
        pb.incr(2, 0x400, &[1, 2, 3]).unwrap();
        pb.non_incr(2, 0x500, &[7, 8]).unwrap();
        pb.immediate(2, 0x600, 5).unwrap();
        pb.semaphore_release(SEM, 0xABCD, false).unwrap();
        rig.submit(&pb);
        let mut rec = Recorder::default();
        assert_eq!(rig.run(&mut rec), RunOutcome::Idle);
        assert_eq!(rec.bound, [(2, 0xc7b5)]);
        assert_eq!(
            rec.methods,
            [
                (2, 0xc7b5, 0x400, 1),
                (2, 0xc7b5, 0x404, 2),
                (2, 0xc7b5, 0x408, 3),
                (2, 0xc7b5, 0x500, 7),
                (2, 0xc7b5, 0x500, 8),
                (2, 0xc7b5, 0x600, 5)
            ]
        );
        assert_eq!(rig.sem() & 0xFFFF_FFFF, 0xABCD);
        assert_eq!(rig.userd(USERD_GP_GET), 1, "GPGet follows the consumed entry");
    }

    /// Raw words worked out by hand from `clc46f.h`'s field positions, without the driver's
    /// encoders: method headers `SEC_OP` 31:29 (INC 1, NON_INC 3, IMMD 4), `METHOD_COUNT` /
    /// `IMMD_DATA` 28:16, `METHOD_SUBCHANNEL` 15:13, `METHOD_ADDRESS` 11:0 in dwords; GPFIFO
    /// `ENTRY0_GET` 31:2 (the address >> 2), `ENTRY1_GET_HI` 7:0, `ENTRY1_LENGTH` 30:10. So the
    /// model's decoding is checked against the header, not against the driver.
    #[test]
    fn hand_encoded_entries_and_headers_decode_as_the_header_says() {
        let mut rig = Rig::new();
        let header =
            |sec_op: u32, count: u32, subch: u32, method: u32| sec_op << 29 | count << 16 | subch << 13 | method >> 2;
        let words = [
            header(1, 1, 3, 0x0000), // SET_OBJECT on subchannel 3
            0xc7b5,
            header(1, 2, 3, 0x0400), // incrementing: 0x400, 0x404
            0x11,
            0x22,
            header(3, 2, 3, 0x0500), // non-incrementing: 0x500 twice
            0x33,
            0x44,
            header(4, 0x1abc, 3, 0x0600), // immediate data 0x1abc
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let pb_va = PB + 0x104;
        rig.vm.write(pb_va, &bytes).unwrap();
        let entry0 = (pb_va as u32 >> 2) << 2;
        let entry1 = (pb_va >> 32) as u32 | (words.len() as u32) << 10;
        let mut e = [0u8; 8];
        e[..4].copy_from_slice(&entry0.to_le_bytes());
        e[4..].copy_from_slice(&entry1.to_le_bytes());
        rig.vm.write(GPFIFO, &e).unwrap();
        rig.pm.write_phys(
            PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD + USERD_GP_PUT },
            &1u32.to_le_bytes(),
        );
        let mut rec = Recorder::default();
        assert_eq!(rig.run(&mut rec), RunOutcome::Idle);
        assert_eq!(rec.bound, [(3, 0xc7b5)]);
        assert_eq!(
            rec.methods,
            [
                (3, 0xc7b5, 0x400, 0x11),
                (3, 0xc7b5, 0x404, 0x22),
                (3, 0xc7b5, 0x500, 0x33),
                (3, 0xc7b5, 0x500, 0x44),
                (3, 0xc7b5, 0x600, 0x1abc)
            ]
        );
        assert_eq!(rig.userd(USERD_GP_GET), 1);
        // The USERD offsets themselves, from `Nvc46fControl`: GPGet at dword 0x22, GPPut at 0x23.
        assert_eq!((USERD_GP_GET, USERD_GP_PUT), (0x22 * 4, 0x23 * 4));
    }

    #[test]
    fn an_unsatisfied_acquire_blocks_until_the_value_arrives() {
        let mut rig = Rig::new();
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::AmpereA);
        pb.semaphore_acquire(SEM, 5).unwrap();
        pb.semaphore_release(SEM + 8, 9, false).unwrap();
        rig.submit(&pb);
        let mut rec = Recorder::default();
        assert_eq!(rig.run(&mut rec), RunOutcome::Blocked { va: SEM });
        assert_eq!(rig.userd(USERD_GP_GET), 0);
        rig.vm.write(SEM, &5u32.to_le_bytes()).unwrap();
        assert_eq!(rig.run(&mut rec), RunOutcome::Idle);
        let mut b = [0u8; 4];
        rig.vm.read(SEM + 8, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), 9);
        assert_eq!(rig.userd(USERD_GP_GET), 1);
    }

    #[test]
    fn errors_stop_the_channel_with_a_reason() {
        // Engine method without an object.
        let mut rig = Rig::new();
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::TuringA);
        pb.incr(1, 0x400, &[1]).unwrap();
        rig.submit(&pb);
        assert!(matches!(
            rig.run(&mut Recorder::default()),
            RunOutcome::Error(HostError::NoObject { subchannel: 1, .. })
        ));
        // A semaphore release to an unmapped address faults.
        let mut rig = Rig::new();
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::TuringA);
        pb.semaphore_release(0x4000_0000, 1, false).unwrap();
        rig.submit(&pb);
        assert!(matches!(rig.run(&mut Recorder::default()), RunOutcome::Error(HostError::Fault(_))));
        // An unknown class.
        let mut rig = Rig::new();
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::TuringA);
        pb.set_object(0, 0xdead).unwrap();
        rig.submit(&pb);
        assert!(matches!(rig.run(&mut Recorder::default()), RunOutcome::Error(HostError::Engine { .. })));
        // GPPut outside the ring.
        let mut rig = Rig::new();
        rig.pm.write_phys(
            PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD + USERD_GP_PUT },
            &9u32.to_le_bytes(),
        );
        assert!(matches!(rig.run(&mut Recorder::default()), RunOutcome::Error(HostError::BadGpPut { gp_put: 9, .. })));
        // A header whose data runs past the segment.
        let mut rig = Rig::new();
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::TuringA);
        pb.incr(0, method::NVC46F_SEM_ADDR_LO, &[0, 0, 0]).unwrap();
        let words = pb.words();
        let truncated = &words[..words.len() - 1];
        let bytes: Vec<u8> = truncated.iter().flat_map(|w| w.to_le_bytes()).collect();
        rig.vm.write(PB, &bytes).unwrap();
        let raw = GpEntry::new(PB, truncated.len() as u32, Default::default()).unwrap().to_words();
        rig.vm.write(GPFIFO, &[raw[0].to_le_bytes(), raw[1].to_le_bytes()].concat()).unwrap();
        rig.pm.write_phys(
            PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD + USERD_GP_PUT },
            &1u32.to_le_bytes(),
        );
        assert!(matches!(rig.run(&mut Recorder::default()), RunOutcome::Error(HostError::BadMethodHeader { .. })));
    }

    #[test]
    fn release_with_timestamp_writes_the_sixteen_byte_structure() {
        let mut rig = Rig::new();
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::HopperA);
        pb.semaphore_release_64(SEM, 0x1_0000_0002, true).unwrap();
        rig.submit(&pb);
        assert_eq!(rig.run(&mut Recorder::default()), RunOutcome::Idle);
        assert_eq!(rig.sem(), 0x1_0000_0002);
    }
}
