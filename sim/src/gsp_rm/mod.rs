//! The GSP-RM model: what runs "on" GSP's RISC-V core once booter_load (or, on Hopper, the FSP
//! chain) has started it, as the CPU sees it through registers and the shared message queues.
//!
//! Follows RM 535.261.03's CPU side, which defines what GSP-RM must do: `kgspBootstrapRiscvOSEarly_
//! TU102/_GA102` (the LIBOS argument table's bus address in `NV_PGSP_FALCON_MAILBOX0/1`),
//! `kgspSetupLibosInitArgs` and `kgspPopulateGspRmInitArgs` (`kernel_gsp.c`: the LIBOS regions and
//! `GSP_ARGUMENTS_CACHED`), `message_queue_cpu.c` / `msgq.c` (the queues), `kgspWaitForRmInitDone`
//! and `kgspExecuteSequencerBuffer` (`GSP_INIT_DONE`, `GSP_RUN_CPU_SEQUENCER`), `kgspHealthCheck_
//! TU102` (fatal errors in `NV_PGSP_MAILBOX(0)`), `_kgspIsProcessorSuspended` (unload), and the RPC
//! builders of `src/nvidia/kernel/vgpu/nv/rpc.c`.
//!
//! # Boot ([`GspRm::start`], when booter_load or, on Hopper, the GSP-FMC ([`fsp`]) starts the
//! RISC-V core)
//! 1. `NV_PGSP_FALCON_MAILBOX0 | MAILBOX1 << 32` (booter_load; on Hopper the FMC's
//!    `gspRmParams.bootArgsOffset`): the bus address of a 4 KiB-aligned, readable
//!    table of `LibosMemoryRegionInitArgument`s, ended by kind NONE: `LOGINIT` first, then
//!    `LOGINTR`, `LOGRM` (each a contiguous system-memory region of `LIBOS_LOG_BUFFER_SIZE`
//!    bytes, 4 KiB aligned and readable) and `RMARGS` (contiguous, system memory, at least
//!    `sizeof(GSP_ARGUMENTS_CACHED)`), each exactly once; any other tag is refused.
//! 2. `GSP_ARGUMENTS_CACHED` from RMARGS: a cold boot (`srInitArguments` zero), no profiler
//!    buffer unless it is readable; its `MESSAGE_QUEUE_INIT_ARGUMENTS` through [`queue`]: the page
//!    table (entry 0 = `sharedMemPhysAddr`, every entry a 4 KiB-aligned readable page),
//!    `cmdQueueOffset` = the table's size, `statQueueOffset` a page inside the block, no task-ISR
//!    queues, and the CPU's command-queue header exactly as `msgqTxCreate` writes it.
//! 3. GSP-RM writes its status-queue header (`msgqTxCreate`: 4 KiB entries, `rxHdrOff` 32,
//!    `entryOff` 4096, `MSGQ_FLAGS_SWAP_RX`) and zeroes its read pointer of the command queue.
//! 4. It processes what the CPU queued before boot: `GSP_SET_SYSTEM_INFO` (first, exactly
//!    `sizeof(GspSystemInfo)` bytes, booleans 0 or 1), then optionally `SET_REGISTRY` (a packed
//!    table whose offsets, names and data lie inside it); neither is answered (RM sends both
//!    asynchronously).
//! 5. Once system information has arrived, init runs: with [`BootSequencer::WithCoreResume`] (the
//!    default) or [`BootSequencer::RegistersOnly`] GSP-RM posts `GSP_RUN_CPU_SEQUENCER` with a
//!    script ([`sequencer`]) the CPU must execute; `GSP_INIT_DONE` follows once it did (for the
//!    resume script: when SEC2 resumes GSP-RM; for the registers-only script: when the script's
//!    `REG_POLL` reads the value its `REG_WRITE` and `REG_MODIFY` produce). Chips without SEC2
//!    (Hopper) get the registers-only script. Invalid boot RPCs make
//!    `GSP_INIT_DONE` carry `NV_ERR_INVALID_ARGUMENT` (RM checks its `rpc_result`).
//!
//! A boot failure is fatal: GSP-RM posts its error word in `NV_PGSP_MAILBOX(0)` (detail in
//! `NV_PGSP_MAILBOX(1)`), the RISC-V core halts, the error is recorded.
//!
//! # When GSP-RM works
//! Deterministically, inside the CPU's register accesses: a write of `NV_PGSP_QUEUE_HEAD(0)` (the
//! doorbell RM rings after each command, `kgspSetCmdQueueHead_TU102`) and every access to a GSP
//! register (its falcon, FBIF and RISC-V windows, `NV_PGSP_MAILBOX(i)`, `NV_PGSP_QUEUE_HEAD(i)`)
//! let it process commands and post what is pending. RM's receive loop reads
//! `NV_PGSP_MAILBOX(0)` every turn (`kgspHealthCheck_TU102`), which is enough. Each status
//! record posted raises `NV_PFALCON_FALCON_IRQSTAT_SWGEN0` on GSP, as GSP-RM's message interrupt.
//!
//! # The RPC server ([`server`])
//! See there for what is answered and how. Every command record is checked with the model's own
//! reading of the record format (`queue::record`: element count, length, checksum), `seqNum` (0, 1, 2, ... per queue), the RPC header
//! (signature, version 3.0, length, `rpc_result` and `rpc_result_private` still
//! `NV_VGPU_MSG_RESULT_RPC_PENDING`, `u` 0), continuation records (only after a record of
//! `GSP_MSG_QUEUE_RPC_SIZE_MAX` whose parameters announce more, and until they are complete). A
//! violation is fatal, as above. Every status record GSP-RM posts is sealed by `queue::record`
//! with the status queue's own `seqNum`.
//!
//! # Fault injection ([`GspFault`])
//! Commands dropped, commands failed with a status, the next status record corrupted (checksum),
//! GSP-RM stopped (RISC-V halts, error word posted), the next booter (or, on Hopper, the GSP-FMC)
//! halting with an error.
//!
//! # Logs ([`log`])
//! GSP-RM writes LIBOS log records into LOGINIT (LIBOS arguments accepted, queues linked, resume)
//! and LOGRM (boot RPCs, the CPU sequencer, `GSP_INIT_DONE`, each RPC answered or dropped, each
//! fatal error; a fatal error before LOGRM is known goes to LOGINIT) in LIBOS's format. Their
//! metadata is the model's own, in the logging ELF [`log::model_log_firmware`] (NVIDIA's is in
//! `gsp_log_*.bin`, which Debian does not ship). Malformed parameters that are answered with an
//! error status show in the "answered" record's status, not as records of their own.
//!
//! # Not modelled
//! NVIDIA's own log records; GC6 (suspend/resume for standby and hibernate is in [`suspend`];
//! a cold boot's `srInitArguments` must be zero); no task-ISR queues; no events other than
//! `GSP_RUN_CPU_SEQUENCER` and `GSP_INIT_DONE`.

pub mod error;
pub mod fifo;
pub mod fsp;
pub mod image;
pub mod log;
pub mod objects;
pub mod payloads;
pub(crate) mod queue;
pub mod sequencer;
pub(crate) mod server;
pub(crate) mod suspend;

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use nvgpu::gsp::fw::init_args::GspArgumentsCached;
use nvgpu::gsp::fw::libos::{
    LibosMemoryRegionInitArgument, LibosMemoryRegionKind, LibosMemoryRegionLoc, LIBOS_INIT_ARGUMENTS_COUNT,
    LIBOS_INIT_ARGUMENTS_SIZE, LIBOS_LOG_BUFFER_SIZE, LOGINIT_ID, LOGINTR_ID, LOGRM_ID, RMARGS_ID,
};
use nvgpu::gsp::fw::msgq::RM_PAGE_SIZE;
use nvgpu::gsp::fw::rpc::{RpcEvent, RpcMessageHeader, NV_VGPU_MSG_SIGNATURE_VALID, RPC_HEADER_VERSION};
use nvgpu::gsp::fw::wpr::GspFwWprMeta;
use nvgpu::gsp::status::NvStatus;
use nvgpu::hw::engine::{NV_PGSP_MAILBOX, NV_PGSP_MAILBOX__SIZE_1, NV_PGSP_QUEUE_HEAD, NV_PGSP_QUEUE_HEAD__SIZE_1};
use zerocopy::FromBytes;

use crate::board::ModelConfig;
use crate::error::ModelError;
use crate::falcon::Falcon;
use crate::gpu::{ErrorLog, Machine};
use crate::memory::SystemMemory;

pub use error::GspRmError;
pub use objects::RmObject;

use objects::Objects;
use queue::Queues;

/// A fault the model injects into the GSP boot chain or GSP-RM ([`crate::ModelGpu::inject`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GspFault {
    /// GSP-RM consumes every command from now on and answers none (a hung RPC server).
    DropCommands,
    /// Every command that would be answered is answered with `status` in `rpc_result` (and in the
    /// parameters' status field where there is one) instead of being executed.
    FailCommands { status: NvStatus },
    /// The next status record GSP-RM posts has one byte changed after sealing: a bad checksum.
    CorruptNextMessage,
    /// GSP-RM stops now (or at its next start): the RISC-V core halts and the error word is
    /// posted in `NV_PGSP_MAILBOX(0)`.
    StopRiscv,
    /// The next booter SEC2 runs (load or unload) halts at once with `MAILBOX0` = `mailbox0`; on
    /// Hopper, the next GSP-FMC run fails with `mailbox0` in `NV_PGSP_FALCON_MAILBOX0`.
    BooterHalts { mailbox0: u32 },
}

/// Which CPU sequencer script GSP-RM sends during init.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BootSequencer {
    /// REG_WRITE, REG_MODIFY, REG_POLL, DELAY_US, CORE_RESUME: the CPU must also resume GSP-RM
    /// through SEC2 (`kgspExecuteSequencerCommand_GA102/_TU102`); `GSP_INIT_DONE` follows the
    /// resume.
    #[default]
    WithCoreResume,
    /// REG_WRITE, REG_MODIFY, REG_POLL, DELAY_US; `GSP_INIT_DONE` follows the poll.
    RegistersOnly,
    /// No sequencer: `GSP_INIT_DONE` at once.
    None,
}

/// GSP-RM's state, as a test can ask for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GspRmStatus {
    /// Not started (or the GPU was reset).
    Off,
    /// Running; `init_done` once `GSP_INIT_DONE` was posted.
    Running { init_done: bool },
    /// GSP was reset for `CORE_RESUME`; waiting for SEC2 to resume it.
    AwaitingResume,
    /// Stopped after `UNLOADING_GUEST_DRIVER`.
    Unloaded,
    /// Suspended for a power transition (`UNLOADING_GUEST_DRIVER` with `bInPMTransition`),
    /// its RM objects kept for the resume.
    PmSuspended,
    /// Stopped on an error (see the recorded errors and `NV_PGSP_MAILBOX(0)`).
    Stopped,
}

/// A registry value the CPU sent in `SET_REGISTRY`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryValue {
    Dword(u32),
    Binary(Vec<u8>),
    String(Vec<u8>),
}

/// One registry entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryEntry {
    pub name: String,
    pub value: RegistryValue,
}

/// Everything GSP-RM needs from the rest of the GPU while it works.
pub(crate) struct GspCtx<'a> {
    pub log: &'a mut ErrorLog,
    pub memory: Option<&'a (dyn SystemMemory + Send)>,
    pub machine: &'a mut Machine,
    pub gsp: &'a mut Falcon,
    pub config: &'a ModelConfig,
    /// The replayable fault buffer physical RM programs (`REGISTER_FAULT_BUFFER`).
    pub fault_buffer: &'a mut crate::fault_buffer::ReplayableFaultBuffer,
}

#[derive(Clone, Copy, Debug, Default)]
struct Faults {
    drop_commands: bool,
    fail_status: Option<NvStatus>,
    corrupt_next: bool,
    stop_pending: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Init {
    /// Waiting for `GSP_SET_SYSTEM_INFO`.
    AwaitSystemInfo,
    /// System information in (registry optional); init runs at the end of this pass.
    SystemInfoSeen,
    /// `GSP_RUN_CPU_SEQUENCER` posted; waiting for the CPU to execute it.
    AwaitSequencer { resume: bool },
    /// `GSP_INIT_DONE` posted.
    Done,
}

/// A message being assembled from continuation records.
#[derive(Clone, Debug)]
struct Partial {
    header: RpcMessageHeader,
    params: Vec<u8>,
    needed: usize,
}

impl Session {
    fn bar1_pdb(&self) -> u64 {
        self.meta.non_wpr_heap_offset
    }
}

/// One boot of GSP-RM.
struct Session {
    meta: GspFwWprMeta,
    libos_args: u64,
    queues: Queues,
    reset_epoch: u32,
    init: Init,
    init_status: NvStatus,
    outbox: VecDeque<Vec<u8>>,
    partial: Option<Partial>,
    objects: Objects,
    fifo: fifo::Fifo,
}

enum State {
    Off,
    Running(Box<Session>),
    Suspended(Box<Session>),
    /// Suspended for a power transition ([`suspend`]): the session (objects, queues) kept.
    PmSuspended(Box<Session>),
    Unloaded,
    Stopped,
}

/// GSP-RM and the GSP registers it owns (`NV_PGSP_MAILBOX(i)`, `NV_PGSP_QUEUE_HEAD(i)`).
pub(crate) struct GspRm {
    mailbox: [u32; NV_PGSP_MAILBOX__SIZE_1 as usize],
    queue_head: [u32; NV_PGSP_QUEUE_HEAD__SIZE_1 as usize],
    faults: Faults,
    sequencer: BootSequencer,
    state: State,
    registry: Vec<RegistryEntry>,
    /// The FSP's message state (Hopper).
    pub(crate) fsp: fsp::FspState,
    /// The LIBOS log buffers GSP-RM writes to ([`log`]).
    pub(crate) logs: log::ModelLogs,
}

impl Default for GspRm {
    fn default() -> Self {
        Self {
            mailbox: [0; NV_PGSP_MAILBOX__SIZE_1 as usize],
            queue_head: [0; NV_PGSP_QUEUE_HEAD__SIZE_1 as usize],
            faults: Faults::default(),
            sequencer: BootSequencer::default(),
            state: State::Off,
            registry: Vec::new(),
            fsp: fsp::FspState::default(),
            logs: log::ModelLogs::default(),
        }
    }
}

/// Which of GSP-RM's registers `offset` is.
enum Register {
    Mailbox(usize),
    QueueHead(usize),
}

fn register_at(offset: u32) -> Option<Register> {
    let indexed = |first: u32, stride: u32, count: u32| {
        let rel = offset.checked_sub(first)?;
        (rel % stride == 0 && rel / stride < count).then_some((rel / stride) as usize)
    };
    indexed(NV_PGSP_MAILBOX::OFFSET, NV_PGSP_MAILBOX::STRIDE, NV_PGSP_MAILBOX__SIZE_1).map(Register::Mailbox).or_else(
        || {
            indexed(NV_PGSP_QUEUE_HEAD::OFFSET, NV_PGSP_QUEUE_HEAD::STRIDE, NV_PGSP_QUEUE_HEAD__SIZE_1)
                .map(Register::QueueHead)
        },
    )
}

impl GspRm {
    /// Whether `offset` is one of GSP-RM's registers.
    pub fn claims(offset: u32) -> bool {
        register_at(offset).is_some()
    }

    pub fn status(&self) -> GspRmStatus {
        match &self.state {
            State::Off => GspRmStatus::Off,
            State::Running(s) => GspRmStatus::Running { init_done: s.init == Init::Done },
            State::Suspended(_) => GspRmStatus::AwaitingResume,
            State::PmSuspended(_) => GspRmStatus::PmSuspended,
            State::Unloaded => GspRmStatus::Unloaded,
            State::Stopped => GspRmStatus::Stopped,
        }
    }

    pub fn registry(&self) -> &[RegistryEntry] {
        &self.registry
    }

    pub fn objects(&self) -> Vec<RmObject> {
        match &self.state {
            State::Running(s) | State::Suspended(s) | State::PmSuspended(s) => s.objects.all().to_vec(),
            _ => Vec::new(),
        }
    }

    /// The channel objects, while GSP-RM runs.
    pub(crate) fn fifo_mut(&mut self) -> Option<&mut fifo::Fifo> {
        match &mut self.state {
            State::Running(s) => Some(&mut s.fifo),
            _ => None,
        }
    }

    /// Reports a robust-channel error to the CPU as RM does: `RC_TRIGGERED`
    /// (`rpc_rc_triggered_v17_02`: engine, chid, Xid, scope) and the Xid in `OS_ERROR_LOG`.
    pub(crate) fn post_channel_error(
        &mut self,
        engine_type: u32,
        runlist: u32,
        chid: u32,
        xid: u32,
        text: &str,
        ctx: &mut GspCtx<'_>,
    ) {
        let State::Running(session) = &mut self.state else { return };
        let mut rc = [0u8; 28];
        rc[0..4].copy_from_slice(&engine_type.to_le_bytes());
        rc[4..8].copy_from_slice(&chid.to_le_bytes());
        rc[12..16].copy_from_slice(&xid.to_le_bytes());
        let mut corrupt = false;
        session.post_event(RpcEvent::RcTriggered, NvStatus::NV_OK, &rc, &mut corrupt);
        let mut log = [0u8; 12 + 0x100];
        log[0..4].copy_from_slice(&xid.to_le_bytes());
        log[4..8].copy_from_slice(&runlist.to_le_bytes());
        log[8..12].copy_from_slice(&chid.to_le_bytes());
        let n = text.len().min(0xff);
        log[12..12 + n].copy_from_slice(&text.as_bytes()[..n]);
        session.post_event(RpcEvent::OsErrorLog, NvStatus::NV_OK, &log, &mut corrupt);
        if let Some(memory) = ctx.memory {
            let _ = session.flush(memory, ctx.gsp);
        }
    }

    pub fn set_sequencer(&mut self, sequencer: BootSequencer) {
        self.sequencer = sequencer;
    }

    /// Arms `fault`; [`GspFault::StopRiscv`] acts at the next [`Self::service`]. (The GPU keeps
    /// [`GspFault::BooterHalts`] itself: SEC2 consumes it.)
    pub fn inject(&mut self, fault: GspFault) {
        match fault {
            GspFault::DropCommands => self.faults.drop_commands = true,
            GspFault::FailCommands { status } => self.faults.fail_status = Some(status),
            GspFault::CorruptNextMessage => self.faults.corrupt_next = true,
            GspFault::StopRiscv => self.faults.stop_pending = true,
            GspFault::BooterHalts { .. } => {}
        }
    }

    /// Clears every armed fault.
    pub fn clear_faults(&mut self) {
        self.faults = Faults::default();
    }

    // -----------------------------------------------------------------------------------------
    // Registers.

    pub fn read_register(&mut self, offset: u32, ctx: &mut GspCtx<'_>) -> u32 {
        let value = match register_at(offset) {
            Some(Register::Mailbox(i)) => self.mailbox[i],
            Some(Register::QueueHead(i)) => self.queue_head[i],
            None => return crate::error::POISON,
        };
        if matches!(register_at(offset), Some(Register::Mailbox(i)) if i as u32 == sequencer::TOKEN_MAILBOX) {
            self.sequencer_register_read(value);
        }
        self.service(ctx);
        value
    }

    pub fn write_register(&mut self, offset: u32, value: u32, ctx: &mut GspCtx<'_>) {
        match register_at(offset) {
            Some(Register::Mailbox(i)) => self.mailbox[i] = value,
            Some(Register::QueueHead(i)) => self.queue_head[i] = value,
            None => return,
        }
        self.service(ctx);
    }

    // -----------------------------------------------------------------------------------------
    // Lifecycle.

    fn fail(&mut self, error: GspRmError, ctx: &mut GspCtx<'_>, detail: u32) {
        ctx.log.record(ModelError::GspRm(error));
        self.logs.fatal(&error, detail);
        if let Some(memory) = ctx.memory {
            self.logs.flush(memory);
        }
        self.mailbox[0] = error.error_word();
        self.mailbox[1] = detail;
        ctx.gsp.set_riscv_running(false);
        ctx.machine.gsp_resume_armed = false;
        self.state = State::Stopped;
    }

    /// The BAR1 root page directory GSP-RM keeps while it runs (`bar1PdeBase`): the first bytes
    /// of its non-WPR heap, reserved memory outside the FB regions it reports to clients.
    pub fn bar1_pdb(&self) -> Option<u64> {
        match &self.state {
            State::Running(session) | State::Suspended(session) | State::PmSuspended(session) => {
                Some(session.bar1_pdb())
            }
            _ => None,
        }
    }

    /// Whether GSP-RM runs (or waits for its resume).
    pub fn is_up(&self) -> bool {
        matches!(self.state, State::Running(_) | State::Suspended(_))
    }

    /// booter_load (or the FSP chain) started the RISC-V core with `meta`: GSP-RM boots, with
    /// the LIBOS arguments at `libos_args` (the GSP-FMC's parameters on Hopper) or, when `None`,
    /// where `NV_PGSP_FALCON_MAILBOX0/1` say (booter_load).
    pub fn start(&mut self, meta: GspFwWprMeta, libos_args: Option<u64>, ctx: &mut GspCtx<'_>) {
        ctx.gsp.set_riscv_running(true);
        self.registry.clear();
        self.logs.reset();
        if core::mem::take(&mut self.faults.stop_pending) {
            self.fail(GspRmError::InjectedStop, ctx, 0);
            return;
        }
        let libos_args =
            libos_args.unwrap_or_else(|| u64::from(ctx.gsp.mailbox(0)) | (u64::from(ctx.gsp.mailbox(1)) << 32));
        match boot(libos_args, ctx, &mut self.logs) {
            Ok(queues) => {
                self.state = State::Running(Box::new(Session {
                    meta,
                    libos_args,
                    queues,
                    reset_epoch: ctx.gsp.reset_epoch(),
                    init: Init::AwaitSystemInfo,
                    init_status: NvStatus::NV_OK,
                    outbox: VecDeque::new(),
                    partial: None,
                    objects: Objects::at_boot(),
                    fifo: fifo::Fifo::default(),
                }));
                self.service(ctx);
            }
            Err(error) => self.fail(error, ctx, (libos_args & 0xFFFF_FFFF) as u32),
        }
    }

    /// Lets GSP-RM work: notice a reset, act on an injected stop, take commands, post replies.
    pub fn service(&mut self, ctx: &mut GspCtx<'_>) {
        if let Some(memory) = ctx.memory {
            self.logs.flush(memory);
        }
        let State::Running(session) = &mut self.state else { return };
        if ctx.gsp.reset_epoch() != session.reset_epoch {
            if ctx.machine.gsp_resume_armed {
                let State::Running(session) = core::mem::replace(&mut self.state, State::Off) else { return };
                self.state = State::Suspended(session);
            } else {
                self.fail(GspRmError::ResetWhileRunning, ctx, 0);
            }
            return;
        }
        if core::mem::take(&mut self.faults.stop_pending) {
            self.fail(GspRmError::InjectedStop, ctx, 0);
            return;
        }
        if let Err(error) = self.run_server(ctx) {
            self.fail(error, ctx, 0);
        }
    }

    fn run_server(&mut self, ctx: &mut GspCtx<'_>) -> Result<(), GspRmError> {
        let Some(memory) = ctx.memory else { return Ok(()) };
        loop {
            let State::Running(session) = &mut self.state else { return Ok(()) };
            session.flush(memory, ctx.gsp)?;
            let Some(command) = session.queues.next_command(memory)? else { break };
            server::handle(self, command, ctx)?;
        }
        let State::Running(session) = &mut self.state else { return Ok(()) };
        if session.init == Init::SystemInfoSeen {
            self.begin_init(ctx);
        }
        if let State::Running(session) = &mut self.state {
            session.flush(memory, ctx.gsp)?;
        }
        self.logs.flush(memory);
        Ok(())
    }

    /// Init after the boot RPCs: the sequencer, or `GSP_INIT_DONE` at once.
    fn begin_init(&mut self, ctx: &mut GspCtx<'_>) {
        let sequencer = self.sequencer;
        let corrupt = &mut self.faults.corrupt_next;
        let State::Running(session) = &mut self.state else { return };
        if session.init_status != NvStatus::NV_OK || sequencer == BootSequencer::None {
            session.init = Init::Done;
            let status = session.init_status;
            session.post_event(RpcEvent::GspInitDone, status, &[], corrupt);
            match status {
                NvStatus::NV_OK => self.logs.log(log::LogTask::Rm, log::Msg::InitDone, &[]),
                _ => self.logs.log(log::LogTask::Rm, log::Msg::InitFailed, &[status.raw().into()]),
            }
            return;
        }
        // CORE_RESUME goes through SEC2; chips without one (Hopper) get the registers-only script.
        let has_sec2 =
            crate::silicon::of(ctx.config.chipset.family()).falcon(nvgpu::hw::engine::FalconEngine::Sec2).is_some();
        let resume = sequencer == BootSequencer::WithCoreResume && has_sec2;
        let script = sequencer::script(resume);
        session.post_event(RpcEvent::GspRunCpuSequencer, NvStatus::NV_OK, &script, corrupt);
        let resume_word = log::LogArg::Str(if resume { "yes" } else { "no" });
        self.logs.log(log::LogTask::Rm, log::Msg::SequencerPosted, &[(script.len() as u64).into(), resume_word]);
        session.init = Init::AwaitSequencer { resume };
        ctx.machine.gsp_resume_armed = resume;
    }

    /// The registers-only script's `REG_POLL` read: once it reads what `REG_WRITE` then
    /// `REG_MODIFY` produce, the CPU has executed the register part; init completes.
    fn sequencer_register_read(&mut self, value: u32) {
        let corrupt = &mut self.faults.corrupt_next;
        let State::Running(session) = &mut self.state else { return };
        if session.init == (Init::AwaitSequencer { resume: false }) && value == sequencer::TOKEN_EXPECTED {
            session.init = Init::Done;
            session.post_event(RpcEvent::GspInitDone, NvStatus::NV_OK, &[], corrupt);
            self.logs.log(log::LogTask::Rm, log::Msg::InitDone, &[]);
        }
    }

    /// SEC2 was started during `CORE_RESUME`: resumes GSP-RM. Returns SEC2's `MAILBOX0` (0 on
    /// success) and sets `BOOT_STAGE_3_HANDOFF` in `NV_PGC6_BSI_SECURE_SCRATCH_14` as SEC2-RTOS
    /// does (`_kgspIsReloadCompleted`).
    pub fn resume(&mut self, ctx: &mut GspCtx<'_>) -> u32 {
        ctx.machine.gsp_resume_armed = false;
        let session = match core::mem::replace(&mut self.state, State::Off) {
            State::Suspended(session) => session,
            other => {
                // SEC2 was armed, but GSP was never reset: the CPU skipped the core reset.
                self.state = other;
                let error = GspRmError::Resume { what: "SEC2 started before GSP was reset", value: 0 };
                self.fail(error, ctx, 0);
                return error.error_word();
            }
        };
        let libos_args = u64::from(ctx.gsp.mailbox(0)) | (u64::from(ctx.gsp.mailbox(1)) << 32);
        let problem = if self.mailbox[sequencer::TOKEN_MAILBOX as usize] != sequencer::TOKEN_EXPECTED {
            Some(GspRmError::Sequencer {
                what: "REG_WRITE/REG_MODIFY before CORE_RESUME not executed (NV_PGSP_MAILBOX(2))",
                value: self.mailbox[sequencer::TOKEN_MAILBOX as usize],
            })
        } else if ctx.gsp.in_reset() {
            Some(GspRmError::Resume { what: "GSP still held in reset", value: 0 })
        } else if !ctx.gsp.riscv_core_selected() {
            Some(GspRmError::Resume { what: "BCR_CTRL does not select the RISC-V core", value: 0 })
        } else if libos_args != session.libos_args {
            Some(GspRmError::Resume { what: "NV_PGSP_FALCON_MAILBOX0/1 not the LIBOS arguments", value: libos_args })
        } else {
            None
        };
        if let Some(error) = problem {
            self.state = State::Running(session);
            self.fail(error, ctx, 0);
            return error.error_word();
        }
        let mut session = session;
        session.reset_epoch = ctx.gsp.reset_epoch();
        ctx.gsp.set_riscv_running(true);
        ctx.machine.bsi_scratch_14 |= 1 << nvgpu::hw::gc6::NV_PGC6_BSI_SECURE_SCRATCH_14::BOOT_STAGE_3_HANDOFF.bits.lo;
        session.init = Init::Done;
        session.post_event(RpcEvent::GspInitDone, NvStatus::NV_OK, &[], &mut self.faults.corrupt_next);
        self.logs.log(log::LogTask::Init, log::Msg::Resumed, &[]);
        self.logs.log(log::LogTask::Rm, log::Msg::InitDone, &[]);
        self.state = State::Running(session);
        self.service(ctx);
        0
    }

    /// Stops after `UNLOADING_GUEST_DRIVER`: the reply is out; the core halts, and
    /// `NV_PGSP_FALCON_MAILBOX0` says the processor suspended.
    fn unload(&mut self, ctx: &mut GspCtx<'_>) {
        self.logs.log(log::LogTask::Rm, log::Msg::Unloading, &[]);
        if let (State::Running(session), Some(memory)) = (&mut self.state, ctx.memory) {
            let _ = session.flush(memory, ctx.gsp);
            self.logs.flush(memory);
        }
        ctx.gsp.set_mailbox(0, error::LIBOS_INTERRUPT_PROCESSOR_SUSPENDED);
        ctx.gsp.set_riscv_running(false);
        self.state = State::Unloaded;
    }
}

impl Session {
    /// Queues a message (sealed into records) for the status queue.
    fn post(&mut self, header: RpcMessageHeader, payload: &[u8], corrupt: &mut bool) {
        for mut record in self.queues.seal_message(header, payload) {
            if core::mem::take(corrupt) {
                // `rpc.sequence`'s low byte: inside the checksummed bytes, harmless to parse.
                record[72] ^= 0x01;
            }
            self.outbox.push_back(record);
        }
    }

    fn post_event(&mut self, event: RpcEvent, status: NvStatus, payload: &[u8], corrupt: &mut bool) {
        let header = RpcMessageHeader {
            header_version: RPC_HEADER_VERSION,
            signature: NV_VGPU_MSG_SIGNATURE_VALID,
            length: 0,
            function: event.raw(),
            rpc_result: status.raw(),
            rpc_result_private: status.raw(),
            sequence: 0,
            u: 0,
        };
        self.post(header, payload, corrupt);
    }

    /// Posts as many queued records as the status queue has room for; raises SWGEN0 if any.
    fn flush(&mut self, memory: &dyn SystemMemory, gsp: &mut Falcon) -> Result<(), GspRmError> {
        let mut posted = false;
        while let Some(record) = self.outbox.front() {
            if !self.queues.post(memory, record)? {
                break;
            }
            self.outbox.pop_front();
            posted = true;
        }
        if posted {
            gsp.raise_swgen0();
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Boot.

fn read_struct<T: FromBytes>(memory: &dyn SystemMemory, bus: u64) -> Option<T> {
    let mut raw = alloc::vec![0u8; core::mem::size_of::<T>()];
    memory.read(bus, &mut raw).then(|| T::read_from_bytes(&raw).ok()).flatten()
}

/// Steps 1-3 of the boot (module documentation).
fn boot(libos_args: u64, ctx: &mut GspCtx<'_>, logs: &mut log::ModelLogs) -> Result<Queues, GspRmError> {
    let libos = |what, value| GspRmError::LibosArgs { what, value };
    let memory = ctx.memory.ok_or(libos("no system memory attached to the model", 0))?;
    if libos_args == 0 || !libos_args.is_multiple_of(RM_PAGE_SIZE) {
        return Err(libos("NV_PGSP_FALCON_MAILBOX0/1 not a 4 KiB-aligned bus address", libos_args));
    }
    let mut table = alloc::vec![0u8; LIBOS_INIT_ARGUMENTS_SIZE];
    if !memory.read(libos_args, &mut table) {
        return Err(libos("argument table unreadable", libos_args));
    }
    let mut seen: Vec<u64> = Vec::new();
    let mut rmargs = None;
    for index in 0..LIBOS_INIT_ARGUMENTS_COUNT {
        let at = index * core::mem::size_of::<LibosMemoryRegionInitArgument>();
        let Ok((arg, _)) = LibosMemoryRegionInitArgument::read_from_prefix(&table[at..]) else { break };
        let region = |what, value| GspRmError::LibosRegion { id8: arg.id8, what, value };
        match arg.region_kind() {
            Some(LibosMemoryRegionKind::None) => break,
            Some(LibosMemoryRegionKind::Contiguous) => {}
            Some(LibosMemoryRegionKind::Radix3) => return Err(region("kind RADIX3 (RM 535 passes CONTIGUOUS)", 2)),
            None => return Err(region("unknown kind", arg.kind.into())),
        }
        if arg.region_loc() != Some(LibosMemoryRegionLoc::Sysmem) {
            return Err(region("location is not SYSMEM", arg.loc.into()));
        }
        if arg._padding != [0; 6] {
            return Err(region("padding not zero", 0));
        }
        if index == 0 && arg.id8 != LOGINIT_ID {
            return Err(region("the first region must be LOGINIT (early init logging)", arg.id8));
        }
        if seen.contains(&arg.id8) {
            return Err(region("region listed twice", arg.id8));
        }
        seen.push(arg.id8);
        if arg.pa == 0 || !arg.pa.is_multiple_of(RM_PAGE_SIZE) {
            return Err(region("pa not a 4 KiB-aligned bus address", arg.pa));
        }
        match arg.id8 {
            LOGINIT_ID | LOGINTR_ID | LOGRM_ID => {
                if arg.size != LIBOS_LOG_BUFFER_SIZE {
                    return Err(region("log buffer size is not LIBOS_LOG_BUFFER_SIZE", arg.size));
                }
            }
            RMARGS_ID => {
                if arg.size < core::mem::size_of::<GspArgumentsCached>() as u64 {
                    return Err(region("smaller than GSP_ARGUMENTS_CACHED", arg.size));
                }
                rmargs = Some(arg.pa);
            }
            other => return Err(region("a region RM 535 does not pass", other)),
        }
        let mut probe = [0u8; 1];
        let last = arg.pa.checked_add(arg.size - 1).ok_or(region("region wraps the address space", arg.pa))?;
        if !memory.read(arg.pa, &mut probe) || !memory.read(last, &mut probe) {
            return Err(region("region unreadable", arg.pa));
        }
        logs.attach(arg.id8, arg.pa, arg.size);
    }
    for (id, name) in [
        (LOGINIT_ID, "missing (LOGINIT)"),
        (LOGINTR_ID, "missing (LOGINTR)"),
        (LOGRM_ID, "missing (LOGRM)"),
        (RMARGS_ID, "missing (RMARGS)"),
    ] {
        if !seen.contains(&id) {
            return Err(GspRmError::LibosRegion { id8: id, what: name, value: 0 });
        }
    }
    let rmargs_pa = rmargs.ok_or(libos("RMARGS missing", 0))?;
    let args: GspArgumentsCached =
        read_struct(memory, rmargs_pa).ok_or(GspRmError::RmArgs { what: "unreadable", value: rmargs_pa })?;
    let sr = args.sr_init_arguments;
    if sr.b_in_pm_transition != 0 || sr.old_level != 0 || sr.flags != 0 {
        return Err(GspRmError::RmArgs {
            what: "srInitArguments is not a cold boot (the model does not resume from suspend)",
            value: sr.old_level.into(),
        });
    }
    let profiler = args.profiler_args;
    if profiler.size != 0 {
        let mut probe = [0u8; 1];
        if !memory.read(profiler.pa, &mut probe)
            || !memory.read(profiler.pa.saturating_add(profiler.size - 1), &mut probe)
        {
            return Err(GspRmError::RmArgs { what: "profiler buffer unreadable", value: profiler.pa });
        }
    }
    let init = log::LogTask::Init;
    logs.log(init, log::Msg::LibosArgs, &[libos_args.into(), (seen.len() as u64).into(), rmargs_pa.into()]);
    let queues = Queues::link(&args.message_queue_init_arguments, memory)?;
    let queue_args = &args.message_queue_init_arguments;
    logs.log(
        init,
        log::Msg::QueuesLinked,
        &[queue_args.shared_mem_phys_addr.into(), queue_args.page_table_entry_count.into()],
    );
    Ok(queues)
}

// The model's log records ([`log`]) assume RM's release buffer size.
const _: () = assert!(LIBOS_LOG_BUFFER_SIZE == 0x10000);
