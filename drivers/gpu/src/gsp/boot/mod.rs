//! `nvgpu::gsp::boot`: the GSP boot, per family, as a script.
//!
//! [`GspBoot::run`] reads top to bottom, one step a paragraph, each step timed and its hardware
//! postcondition checked before the next one starts. The flows follow NVIDIA's RM 535.261.03:
//! `kgspInitRm` and `_kgspBootGspRm` (`kernel_gsp.c`) around the per-family
//! `kgspBootstrapRiscvOSEarly_*`:
//!
//! - **GA10x, Ada** ([`BootFlow::FwsecFrtsBooter`], `kernel_gsp_ga102.c`): wait for GFW boot;
//!   WPR2 must be down; boot data in DMA memory; FWSEC-FRTS on the GSP falcon (WPR2 over FRTS);
//!   GSP reset into RISC-V with the boot ROM fetching (`_kgspResetIntoRiscv`); the first RPCs
//!   queued; LIBOS arguments in the GSP mailboxes; booter_load on SEC2 with the WPR metadata
//!   (SEC2 `MAILBOX0` 0); `NV_PFALCON_FALCON_OS` = the bootloader's `appVersion`; RISC-V active;
//!   the status queue linked; `GSP_INIT_DONE` (serving `RUN_CPU_SEQUENCER` on the way);
//!   `GET_GSP_STATIC_INFO`.
//! - **Turing, GA100** ([`BootFlow::FwsecBootloader`], `kernel_gsp_tu102.c`): the same, but
//!   FWSEC (v2) runs through NVIDIA's generic falcon bootloader (GA100 has no FRTS and skips it),
//!   the GSP is reset into its falcon core, the booter loads by PIO, and no `FALCON_OS` write.
//! - **Hopper** ([`BootFlow::FspChainOfTrust`], `kernel_gsp_gh100.c`, `kern_fsp_gh100.c`): the
//!   FSP verifies and starts the GSP-FMC after a chain-of-trust message over its EMEM queue; see
//!   [`fsp`].
//!
//! The data structures are in [`data`], the booters in [`booter`], FWSEC-FRTS in
//! [`crate::fwsec::frts`]. Every wait is bounded by the [`Clock`] and fails naming what it
//! waited for; every error names the step ([`BootError`]).

pub mod booter;
pub mod data;
pub mod dma;
pub mod fsp;
pub mod suspend;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::chip::Chipset;
use crate::falcon::{Engine, Falcon, FalconError, Fsp, Gsp, Mailboxes, Sec2};
use crate::firmware::FirmwareBundle;
use crate::fwsec::frts::{
    run_fwsec_frts, run_fwsec_sb, FrtsRegion, FwsecFrtsError, FwsecFrtsOutcome, GenericBootloader,
};
use crate::fwsec::FwsecKind;
use crate::gsp::cmdq::{GspDoorbell, GspMessage, GspMessageQueues, TransportError, STATUS_QUEUE_LINK_TIMEOUT_MS};
use crate::gsp::commands::{
    GetGspStaticInfo, GspEvent, GspRpc, GspSetSystemInfo, GspStaticConfigInfo, GspSystemInfo, RegistryTable, RpcError,
    SetRegistry, UnloadingGuestDriver,
};
use crate::gsp::fb_layout::WprChipParams;
use crate::gsp::fw::msgq::MessageQueueLayout;
use crate::gsp::fw::rpc::RpcEvent;
use crate::gsp::fw::wpr::GspFwWprMeta;
use crate::gsp::logs::{GspLogs, LogLine, LogMetadata};
use crate::gsp::sequencer::run_sequencer;
use crate::hal::{BootFlow, FbSizeSource, Hal};
use crate::hw::engine::NV_PGSP_MAILBOX;
use crate::hw::falcon::NV_PFALCON_FALCON_OS;
use crate::hw::rm::{NV_GSP_ERROR, NV_GSP_ERROR_TAG_VAL};
use crate::hw::{fb, gc6, RegisterIo};
use crate::platform::{wait_for, Clock, DmaAllocator, Timeout};
use crate::vbios::{Vbios, VbiosError};

use self::booter::{address_mailboxes, run_booter, Booter, BooterError, BooterOutcome, BOOTER_UNLOAD_MAILBOX};
use self::data::{BootData, BootDataError, FbInputs};
use self::dma::DmaRegion;
use crate::gsp::sequencer::BootCore;
use crate::hw::boot::{
    NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE,
    NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK_READ_PROTECTION_LEVEL0_ENABLE,
};

/// How long the VBIOS's boot firmware may take: `GPU_GFW_BOOT_COMPLETION_TIMEOUT_US`
/// (`kern_gpu_tu102.c`: 50 ms to start plus 2 s to complete).
pub const GFW_BOOT_TIMEOUT_MS: u64 = 2_050;
/// How long the GSP's RISC-V core may take to report active after booter_load: RM checks once,
/// right after the booter halts; one generous bound covers a slow status update.
pub const RISCV_ACTIVE_TIMEOUT_MS: u64 = 1_000;
/// How long GSP-RM may take to initialise: RM's `GPU_TIMEOUT_DEFAULT` for `rpcRecvPoll` is 4 s
/// (`osGetTimeoutParams`), which RM resets before waiting; compute-mode GPUs get 30 s. The
/// boot uses the compute value: the unikernel runs compute payloads.
pub const INIT_DONE_TIMEOUT_MS: u64 = 30_000;

/// A clock borrowed for a falcon (the falcon driver owns its clock by value).
pub struct ClockRef<'a, C: Clock + ?Sized>(pub &'a C);

impl<C: Clock + ?Sized> Clock for ClockRef<'_, C> {
    fn now_ns(&self) -> u64 {
        self.0.now_ns()
    }
    fn relax(&self) {
        self.0.relax()
    }
}

/// One step of a boot flow, for timing and errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BootStep {
    /// The VBIOS's boot firmware (devinit, FWSEC's early run) finished.
    WaitGfwBoot,
    /// WPR2 is not up from an earlier boot.
    CheckWpr2Down,
    /// Firmware images, arguments, logs, queues and the WPR metadata in DMA memory.
    PrepareBootData,
    /// FWSEC-FRTS on the GSP falcon: WPR2 over the FRTS region.
    FwsecFrts,
    /// GSP falcon reset, RISC-V selected, boot ROM fetching (GA102 and later).
    ResetGspIntoRiscv,
    /// GSP falcon reset into its falcon core (Turing, GA100: the booter loads the GSP).
    ResetGspFalcon,
    /// The queues created and the first RPCs queued (`GSP_SET_SYSTEM_INFO`, `SET_REGISTRY`).
    QueueInitRpcs,
    /// The LIBOS arguments' address in the GSP mailboxes.
    ProgramLibosArgs,
    /// booter_load on SEC2.
    BooterLoad,
    /// `NV_PFALCON_FALCON_OS` = the boot binary's `appVersion` (GA102 and later).
    ProgramFalconOs,
    /// The GSP's RISC-V core runs.
    RiscvActive,
    /// GSP-RM created its status queue.
    LinkStatusQueue,
    /// `GSP_INIT_DONE` received (CPU sequencer requests served on the way).
    WaitInitDone,
    /// `GET_GSP_STATIC_INFO` answered.
    GetStaticInfo,
    /// The FSP finished its own boot (Hopper).
    WaitFspBoot,
    /// The chain-of-trust message sent to the FSP and answered (Hopper).
    FspChainOfTrust,
    /// `UNLOADING_GUEST_DRIVER` answered, GSP suspended.
    UnloadGuestDriver,
    /// GSP falcon reset, FWSEC-SB (pre-OS applications restored; RM goes on when it fails).
    FwsecSb,
    /// booter_unload on SEC2; WPR2 down afterwards.
    BooterUnload,
    /// The suspend/resume save area and `GspFwSRMeta` in DMA memory ([`suspend`]).
    SaveSrData,
    /// `GSP_SR_INIT_ARGUMENTS` for a resume in the RMARGS page ([`suspend`]).
    ResumeInitArgs,
}

impl BootStep {
    /// Whether GSP-RM may be running (and able to post an error word) during this step.
    pub const fn gsp_rm_may_run(self) -> bool {
        matches!(
            self,
            Self::RiscvActive
                | Self::LinkStatusQueue
                | Self::WaitInitDone
                | Self::GetStaticInfo
                | Self::UnloadGuestDriver
        )
    }

    /// A short description for the boot log.
    pub const fn description(self) -> &'static str {
        match self {
            Self::WaitGfwBoot => "wait for GFW boot",
            Self::CheckWpr2Down => "check WPR2 is down",
            Self::PrepareBootData => "prepare boot data in DMA memory",
            Self::FwsecFrts => "FWSEC-FRTS (WPR2 over FRTS)",
            Self::ResetGspIntoRiscv => "reset GSP into RISC-V",
            Self::ResetGspFalcon => "reset GSP falcon",
            Self::QueueInitRpcs => "queue GSP_SET_SYSTEM_INFO, SET_REGISTRY",
            Self::ProgramLibosArgs => "LIBOS arguments to GSP mailboxes",
            Self::BooterLoad => "booter_load on SEC2",
            Self::ProgramFalconOs => "NV_PFALCON_FALCON_OS = appVersion",
            Self::RiscvActive => "GSP RISC-V active",
            Self::LinkStatusQueue => "link status queue",
            Self::WaitInitDone => "wait for GSP_INIT_DONE",
            Self::GetStaticInfo => "GET_GSP_STATIC_INFO",
            Self::WaitFspBoot => "wait for FSP boot",
            Self::FspChainOfTrust => "FSP chain-of-trust message",
            Self::UnloadGuestDriver => "UNLOADING_GUEST_DRIVER",
            Self::FwsecSb => "FWSEC-SB",
            Self::BooterUnload => "booter_unload on SEC2",
            Self::SaveSrData => "GSP SR save area and GspFwSRMeta",
            Self::ResumeInitArgs => "GSP_SR_INIT_ARGUMENTS for resume",
        }
    }
}

/// One timed step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRecord {
    pub step: BootStep,
    /// Clock time the step took.
    pub elapsed_ns: u64,
}

/// What a boot did, for the boot log: the flow, each step's time, and what the hardware said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BootReport {
    /// The flow run (`None` before a run).
    pub flow: Option<BootFlow>,
    /// Steps in the order they ran.
    pub steps: Vec<StepRecord>,
    /// The WPR metadata handed to the boot chain.
    pub wpr_meta: Option<GspFwWprMeta>,
    /// FWSEC-FRTS's outcome (WPR2 over FRTS).
    pub fwsec: Option<FwsecFrtsOutcome>,
    /// booter_load's outcome.
    pub booter_load: Option<BooterOutcome>,
    /// Events GSP-RM sent during the boot besides `GSP_INIT_DONE` (function numbers).
    pub events: Vec<u32>,
    /// `RUN_CPU_SEQUENCER` requests served.
    pub sequencer_runs: u32,
    /// `CORE_RESUME`s done for those.
    pub resumes: u32,
    /// The GPU's name from `GET_GSP_STATIC_INFO`.
    pub gpu_name: Option<String>,
    /// Failures RM logs and goes on from (FWSEC-SB at unload).
    pub warnings: Vec<BootError>,
    /// GSP-RM's LIBOS log lines read during the boot ([`crate::gsp::logs`]), oldest first.
    pub logs: Vec<LogLine>,
}

impl BootReport {
    /// Total clock time of all steps.
    pub fn total_ns(&self) -> u64 {
        self.steps.iter().map(|s| s.elapsed_ns).sum()
    }

    /// The time `step` took, if it ran.
    pub fn elapsed_ns(&self, step: BootStep) -> Option<u64> {
        self.steps.iter().find(|s| s.step == step).map(|s| s.elapsed_ns)
    }
}

impl fmt::Display for BootReport {
    /// The boot log: one line per step with its time in ms.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(flow) = self.flow {
            writeln!(f, "GSP boot ({flow:?}):")?;
        }
        for s in &self.steps {
            let ms = s.elapsed_ns / 1_000_000;
            let frac = (s.elapsed_ns % 1_000_000) / 1_000;
            writeln!(f, "  {:<44} {ms:>6}.{frac:03} ms", s.step.description())?;
        }
        let total = self.total_ns();
        write!(f, "  {:<44} {:>6}.{:03} ms", "total", total / 1_000_000, (total % 1_000_000) / 1_000)
    }
}

/// What went wrong in a boot step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootErrorKind {
    /// A bounded wait ran out.
    Timeout(Timeout),
    /// WPR2 was already up before the boot (the GPU needs a reset).
    Wpr2AlreadyUp { lo: u64, hi: u64 },
    /// WPR2 is still up after booter_unload.
    Wpr2StillUp { lo: u64, hi: u64 },
    /// The GFW boot status cannot be read (its privilege mask was not lowered).
    GfwBootNotReadable,
    /// The usable framebuffer size is unknown or zero.
    FbSize { read: u64 },
    /// The chip has no WPR layout parameters in this release.
    NoWprParams { chipset: Chipset },
    /// The VBIOS has no usable FWSEC.
    NoFwsec(VbiosError),
    /// The boot needs something the caller did not provide.
    Missing { what: &'static str },
    /// GSP-RM's reservation reaches below the pre-scrubbed top of FB: the scrubber ucode would
    /// have to run first (`kgspExecuteScrubberIfNeeded_AD102`); the driver does not have it.
    ScrubberNeeded { needed: u64, prescrubbed: u64 },
    /// The boot data could not be prepared.
    Data(BootDataError),
    /// FWSEC-FRTS failed.
    Fwsec(FwsecFrtsError),
    /// A booter failed.
    Booter(BooterError),
    /// A falcon step failed.
    Falcon(FalconError),
    /// The GSP's RISC-V core is not running after booter_load.
    RiscvNotActive,
    /// The message queues failed.
    Transport(TransportError),
    /// An RPC failed or was answered unexpectedly (with the RPC history).
    Rpc(RpcError),
    /// GSP-RM reported a failed initialisation in `GSP_INIT_DONE`'s `rpc_result`.
    InitFailed { rpc_result: u32 },
    /// The FSP path failed.
    Fsp(fsp::FspError),
    /// This flow or step is not available yet.
    NotAvailable { what: &'static str },
    /// Suspend or resume could not proceed ([`suspend`]).
    Suspend(suspend::SuspendError),
}

impl fmt::Display for BootErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(t) => t.fmt(f),
            Self::Wpr2AlreadyUp { lo, hi } => {
                write!(f, "WPR2 is already up ({lo:#x}..={hi:#x}): the GPU is in a bad state and needs a reset")
            }
            Self::Wpr2StillUp { lo, hi } => write!(f, "WPR2 is still up ({lo:#x}..={hi:#x}) after booter_unload"),
            Self::GfwBootNotReadable => write!(f, "GFW boot status is read-protected (FWSEC did not lower the PLM)"),
            Self::FbSize { read } => write!(f, "usable framebuffer size unknown (read {read:#x})"),
            Self::NoWprParams { chipset } => write!(f, "{chipset:?} has no WPR layout in GSP-RM 535.261.03"),
            Self::NoFwsec(e) => write!(f, "no FWSEC in the VBIOS: {e}"),
            Self::Missing { what } => write!(f, "missing {what}"),
            Self::ScrubberNeeded { needed, prescrubbed } => write!(
                f,
                "GSP-RM needs the top {needed:#x} bytes of FB, only {prescrubbed:#x} are scrubbed: the scrubber ucode \
                 (not in Debian's firmware) would have to run"
            ),
            Self::Data(e) => e.fmt(f),
            Self::Fwsec(e) => e.fmt(f),
            Self::Booter(e) => e.fmt(f),
            Self::Falcon(e) => e.fmt(f),
            Self::RiscvNotActive => {
                write!(f, "the GSP RISC-V core is not active after its start (booter_load; on Hopper, the GSP-FMC)")
            }
            Self::Transport(e) => e.fmt(f),
            Self::Rpc(e) => e.fmt(f),
            Self::InitFailed { rpc_result } => {
                write!(
                    f,
                    "GSP-RM reported a failed initialisation: GSP_INIT_DONE rpc_result {:?}",
                    crate::gsp::status::NvStatus::from_raw(*rpc_result)
                )
            }
            Self::Fsp(e) => e.fmt(f),
            Self::NotAvailable { what } => write!(f, "not available: {what}"),
            Self::Suspend(e) => e.fmt(f),
        }
    }
}

impl From<Timeout> for BootErrorKind {
    fn from(t: Timeout) -> Self {
        Self::Timeout(t)
    }
}
impl From<FalconError> for BootErrorKind {
    fn from(e: FalconError) -> Self {
        Self::Falcon(e)
    }
}
impl From<TransportError> for BootErrorKind {
    fn from(e: TransportError) -> Self {
        Self::Transport(e)
    }
}
impl From<BooterError> for BootErrorKind {
    fn from(e: BooterError) -> Self {
        Self::Booter(e)
    }
}
impl From<FwsecFrtsError> for BootErrorKind {
    fn from(e: FwsecFrtsError) -> Self {
        Self::Fwsec(e)
    }
}
impl From<BootDataError> for BootErrorKind {
    fn from(e: BootDataError) -> Self {
        Self::Data(e)
    }
}
impl From<RpcError> for BootErrorKind {
    fn from(e: RpcError) -> Self {
        Self::Rpc(e)
    }
}
impl From<fsp::FspError> for BootErrorKind {
    fn from(e: fsp::FspError) -> Self {
        Self::Fsp(e)
    }
}

/// A fatal error GSP-RM posted in `NV_PGSP_MAILBOX(0)` (detail in `NV_PGSP_MAILBOX(1)`), as
/// `kgspHealthCheck_TU102` (`kernel_gsp_tu102.c`) reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GspErrorReport {
    /// `NV_PGSP_MAILBOX(0)`: tag, skipped errors, task, reason, code.
    pub mailbox0: u32,
    /// `NV_PGSP_MAILBOX(1)`: where (RM prints it as "at").
    pub mailbox1: u32,
}

impl GspErrorReport {
    /// The report in `NV_PGSP_MAILBOX(0)/(1)`, if the error tag ([`NV_GSP_ERROR_TAG_VAL`]) is
    /// there.
    pub fn read(io: &(impl RegisterIo + ?Sized)) -> Option<Self> {
        let mailbox0 = NV_PGSP_MAILBOX::read(io, 0).data();
        (NV_GSP_ERROR::TAG.bits.extract(mailbox0) == NV_GSP_ERROR_TAG_VAL)
            .then(|| Self { mailbox0, mailbox1: NV_PGSP_MAILBOX::read(io, 1).data() })
    }

    pub const fn task(&self) -> u32 {
        NV_GSP_ERROR::TASK.bits.extract(self.mailbox0)
    }
    pub const fn reason(&self) -> u32 {
        NV_GSP_ERROR::REASON.bits.extract(self.mailbox0)
    }
    pub const fn code(&self) -> u32 {
        NV_GSP_ERROR::CODE.bits.extract(self.mailbox0)
    }
    /// Further errors GSP-RM could not report.
    pub const fn skipped(&self) -> u32 {
        NV_GSP_ERROR::SKIPPED.bits.extract(self.mailbox0)
    }
}

impl fmt::Display for GspErrorReport {
    /// RM's wording (`kgspHealthCheck_TU102`), with the raw word.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "GSP-RM task {} raised error code {:#x} for reason {:#x} at {:#x} (NV_PGSP_MAILBOX(0) {:#010x})",
            self.task(),
            self.code(),
            self.reason(),
            self.mailbox1,
            self.mailbox0
        )?;
        if self.skipped() != 0 {
            write!(f, ", {} more errors skipped", self.skipped())?;
        }
        Ok(())
    }
}

/// A failed boot: which chip, which step, what; and GSP-RM's own error report when it posted
/// one (a step failing while GSP-RM runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootError {
    pub chipset: Chipset,
    pub step: BootStep,
    pub kind: BootErrorKind,
    /// What GSP-RM reported in `NV_PGSP_MAILBOX(0)/(1)` when the step failed.
    pub gsp_error: Option<GspErrorReport>,
    /// GSP-RM's LIBOS log lines of the boot up to the failure (empty before the log buffers
    /// exist), oldest first.
    pub logs: Vec<LogLine>,
}

impl fmt::Display for BootError {
    /// One line: chip, step, cause, GSP-RM's error report, the RPC history; then GSP-RM's log
    /// lines, one per line, indented.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} GSP boot, step \"{}\": ", self.chipset, self.step.description())?;
        // The chip is named already: an RPC error prints without it, its history last.
        let rpc = match &self.kind {
            BootErrorKind::Rpc(e) => {
                e.kind.fmt(f)?;
                Some(e)
            }
            kind => {
                kind.fmt(f)?;
                None
            }
        };
        if let Some(report) = &self.gsp_error {
            write!(f, "; {report}")?;
        }
        if let Some(e) = rpc {
            e.fmt_history(f)?;
        }
        // Then what GSP-RM logged, a line each.
        for line in &self.logs {
            write!(f, "\n  {line}")?;
        }
        Ok(())
    }
}

/// Where the GPU sits on PCI, for `GSP_SET_SYSTEM_INFO`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PciPlacement {
    /// Bus address of BAR0 (`gpuPhysAddr`).
    pub bar0: u64,
    /// Bus address of BAR1, the framebuffer aperture (`gpuPhysFbAddr`).
    pub bar1: u64,
    /// Bus address of the instance-memory BAR (`gpuPhysInstAddr`: BAR3 with 64-bit BARs).
    pub bar_inst: u64,
    /// PCI segment, bus, device and function as RM packs them (`nvDomainBusDeviceFunc`:
    /// domain << 32 | bus << 8 | device << 3 | function).
    pub domain_bus_device_function: u64,
}

impl PciPlacement {
    /// RM's `gpuEncodeDomainBusDevice`-style packing of a PCI address.
    pub const fn encode(domain: u32, bus: u8, device: u8, function: u8) -> u64 {
        ((domain as u64) << 32) | ((bus as u64) << 8) | (((device & 0x1f) as u64) << 3) | ((function & 0x7) as u64)
    }

    /// The PCI address [`PciPlacement::encode`] packed into `domain_bus_device_function`:
    /// (domain, bus, device, function).
    pub const fn decode(&self) -> (u16, u8, u8, u8) {
        let d = self.domain_bus_device_function;
        ((d >> 32) as u16, (d >> 8) as u8, ((d >> 3) & 0x1f) as u8, (d & 0x7) as u8)
    }
}

/// `osGetMaxUserVa` on x86-64 Linux (`TASK_SIZE` with 4-level paging), which RM sends as
/// `maxUserVa`; the unikernel has no user space, and GSP-RM only bounds client mappings by it.
pub const MAX_USER_VA: u64 = 0x0000_7fff_ffff_f000;

/// The registry RM on Linux always sends (`initUnixSpecificRegistry`, `osinit.c`).
pub fn rm_unix_registry() -> RegistryTable {
    RegistryTable::new().dword("RMSecBusResetEnable", 1).dword("RMForcePcieConfigSave", 1)
}

/// Choices the boot takes from its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootConfig {
    /// RM's index of this GPU (`gpuInstance`).
    pub gpu_instance: u32,
    /// The usable framebuffer size, when the caller knows it better than the hardware; `None`
    /// reads it as RM does (`NV_USABLE_FB_SIZE_IN_MB` on GA102 and later,
    /// `NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE` before).
    pub usable_fb_size: Option<u64>,
    /// The VGA workspace base the display reports (`None`: display off; RM then reserves the
    /// last 1 MiB).
    pub vga_workspace_base: Option<u64>,
    /// The message queue sizes.
    pub queue_layout: MessageQueueLayout,
    /// Bound on waiting for `GSP_INIT_DONE`.
    pub init_done_timeout_ms: u64,
    /// Where the GPU is on PCI (`GSP_SET_SYSTEM_INFO`).
    pub pci: PciPlacement,
    /// The registry for `SET_REGISTRY`.
    pub registry: RegistryTable,
}

impl Default for BootConfig {
    fn default() -> Self {
        Self {
            gpu_instance: 0,
            usable_fb_size: None,
            vga_workspace_base: None,
            queue_layout: MessageQueueLayout::rm_default(),
            init_done_timeout_ms: INIT_DONE_TIMEOUT_MS,
            pci: PciPlacement::default(),
            registry: rm_unix_registry(),
        }
    }
}

/// What the boot is given: the GPU's registers, a clock, DMA memory, the firmware, the VBIOS.
pub struct BootInputs<'a, R: RegisterIo, C: Clock + ?Sized, A: DmaAllocator + ?Sized> {
    /// BAR0.
    pub io: &'a R,
    pub clock: &'a C,
    pub dma: &'a A,
    pub chipset: Chipset,
    /// GSP-RM, the booters and the bootloader.
    pub firmware: &'a FirmwareBundle<'a>,
    /// The VBIOS (FWSEC) on Turing..Ada.
    pub vbios: Option<&'a Vbios>,
    /// NVIDIA's generic falcon bootloader, for a v2 FWSEC (Turing).
    pub generic_bootloader: Option<GenericBootloader<'a>>,
    /// The GSP-FMC and its credentials (Hopper).
    pub fmc: Option<fsp::FmcImages<'a>>,
}

/// The GSP boot of one GPU, and afterwards the running GSP-RM's boot resources (the DMA memory
/// and the queues), which must stay alive while GSP-RM runs.
pub struct GspBoot<'a, R: RegisterIo, C: Clock + ?Sized, A: DmaAllocator + ?Sized, D: GspDoorbell> {
    inputs: BootInputs<'a, R, C, A>,
    hal: &'static Hal,
    config: BootConfig,
    doorbell: Option<D>,
    data: Option<BootData<'a, A>>,
    rpc: Option<GspRpc<D, ClockRef<'a, C>>>,
    static_info: Option<Box<GspStaticConfigInfo>>,
    /// DMA memory of the FSP path (GSP-FMC copy, FRTS buffer, FMC arguments).
    fsp_memory: Vec<DmaRegion<'a, A>>,
    report: BootReport,
    /// The read positions in GSP-RM's log buffers and the ELFs to decode them with.
    logs: GspLogs<'a>,
    /// The suspend/resume data while GSP-RM is suspended ([`suspend`]).
    sr: Option<suspend::SrData<'a, A>>,
}

type StepResult<T> = Result<T, BootErrorKind>;

impl<'a, R: RegisterIo, C: Clock + ?Sized, A: DmaAllocator + ?Sized, D: GspDoorbell> GspBoot<'a, R, C, A, D> {
    /// A boot of the GPU `inputs` describes; `doorbell` tells GSP-RM about new commands (on
    /// hardware `cmdq::QueueHeadDoorbell` over BAR0).
    pub fn new(inputs: BootInputs<'a, R, C, A>, config: BootConfig, doorbell: D) -> Self {
        let hal = inputs.chipset.hal();
        Self {
            inputs,
            hal,
            config,
            doorbell: Some(doorbell),
            data: None,
            rpc: None,
            static_info: None,
            fsp_memory: Vec::new(),
            report: BootReport::default(),
            logs: GspLogs::for_gsp_rm(None),
            sr: None,
        }
    }

    /// The boot data, once prepared.
    pub fn data(&self) -> Option<&BootData<'a, A>> {
        self.data.as_ref()
    }

    /// The RPC client, once the queues exist (for the RPCs after the boot).
    pub fn rpc(&mut self) -> Option<&mut GspRpc<D, ClockRef<'a, C>>> {
        self.rpc.as_mut()
    }

    /// The fatal error GSP-RM reports in `NV_PGSP_MAILBOX(0)/(1)`, if any: what to look at when
    /// an RPC after the boot times out.
    pub fn gsp_error(&self) -> Option<GspErrorReport> {
        GspErrorReport::read(self.inputs.io)
    }

    /// GSP-RM's static information, once `GET_GSP_STATIC_INFO` answered.
    pub fn static_info(&self) -> Option<&GspStaticConfigInfo> {
        self.static_info.as_deref()
    }

    /// Decodes GSP-RM's log records with `metadata` from now on (from `gsp_log_<family>.bin`,
    /// which Debian does not ship); without it the records print raw.
    pub fn set_log_metadata(&mut self, metadata: Option<&LogMetadata<'a>>) {
        self.logs.set_metadata(metadata);
    }

    /// GSP-RM's log lines since the last read (they are also printed through `log`): what RM's
    /// `kgspDumpGspLogs` prints, for a caller that polls after the boot.
    pub fn drain_logs(&mut self) -> Vec<LogLine> {
        self.collect_logs()
    }

    /// The report so far (complete after [`Self::run`]).
    pub fn report(&self) -> &BootReport {
        &self.report
    }

    /// Boots GSP-RM with the chip's flow.
    pub fn run(&mut self) -> Result<BootReport, BootError> {
        self.report = BootReport { flow: Some(self.hal.boot_flow), ..BootReport::default() };
        self.logs.reset();
        match self.hal.boot_flow {
            BootFlow::FwsecFrtsBooter | BootFlow::FwsecBootloader => self.boot_with_booter()?,
            BootFlow::FspChainOfTrust => self.boot_with_fsp()?,
        }
        self.collect_logs();
        Ok(self.report.clone())
    }

    /// Turing to Ada: FWSEC-FRTS, then booter_load on SEC2 (`kgspBootstrapRiscvOSEarly_TU102`
    /// and `_GA102`; they differ only where the paragraphs say).
    fn boot_with_booter(&mut self) -> Result<(), BootError> {
        let ga102_or_later = self.hal.ga102_booter_flow;

        // The VBIOS's boot firmware must have finished: it uses the GSP falcon itself, and the
        // framebuffer size is its result.
        self.step(BootStep::WaitGfwBoot, Self::wait_gfw_boot)?;

        // A WPR2 left from an earlier boot means the GPU was not reset: booting again would
        // fail inside the booter, so stop here (`_kgspBootGspRm`).
        self.step(BootStep::CheckWpr2Down, Self::check_wpr2_down)?;

        // Everything the boot chain reads from system memory, and the framebuffer layout
        // (`kgspCalculateFbLayout_TU102`), which places FRTS.
        self.step(BootStep::PrepareBootData, Self::prepare_boot_data)?;

        // FWSEC-FRTS: WPR2 opens over the FRTS region, exactly where the layout put it (GA100
        // has no FRTS region and skips this).
        if self.wpr_meta()?.frts_size > 0 {
            self.step(BootStep::FwsecFrts, Self::fwsec_frts)?;
        }

        // The GSP falcon: GA102 and later reset it into RISC-V with the boot ROM fetching, so
        // that the booter can start it; Turing leaves it in falcon mode for the booter to load.
        if ga102_or_later {
            self.step(BootStep::ResetGspIntoRiscv, |b| Ok(b.gsp_falcon()?.reset_into_riscv(true)?))?;
        } else {
            self.step(BootStep::ResetGspFalcon, |b| Ok(b.gsp_falcon()?.reset()?))?;
        }

        // The queues, with the messages GSP-RM runs before anything else.
        self.step(BootStep::QueueInitRpcs, Self::queue_init_rpcs)?;

        // Where GSP-RM finds its LIBOS arguments: the GSP mailboxes, low word first.
        self.step(BootStep::ProgramLibosArgs, |b| {
            let address = b.boot_data()?.libos_args_address();
            b.gsp_falcon()?.write_mailboxes(address_mailboxes(address));
            Ok(())
        })?;

        // booter_load on SEC2: verifies GSP-RM, grows WPR2 over it and starts the GSP; SEC2's
        // MAILBOX0 must read 0.
        self.step(BootStep::BooterLoad, Self::booter_load)?;

        // GA102 and later tell the GSP the boot binary's version.
        if ga102_or_later {
            self.step(BootStep::ProgramFalconOs, |b| {
                let version = b.boot_data()?.boot_desc.app_version;
                NV_PFALCON_FALCON_OS(version).write(b.inputs.io, b.gsp_falcon()?.unit().base);
                Ok(())
            })?;
        }

        // The GSP's RISC-V core must be running now.
        self.step(BootStep::RiscvActive, Self::wait_riscv_active)?;

        // GSP-RM initialises: its status queue, then INIT_DONE, then the static information.
        self.step(BootStep::LinkStatusQueue, Self::link_status_queue)?;
        self.step(BootStep::WaitInitDone, Self::wait_init_done)?;
        self.step(BootStep::GetStaticInfo, Self::get_static_info)?;
        Ok(())
    }

    /// Hopper: the FSP chain of trust (`kgspBootstrapRiscvOSEarly_GH100`).
    fn boot_with_fsp(&mut self) -> Result<(), BootError> {
        // The FSP boots itself from reset; the driver waits for it.
        self.step(BootStep::WaitFspBoot, |b| Ok(fsp::wait_for_fsp_boot(b.inputs.io, b.hal, b.inputs.clock)?))?;

        // WPR2 must be down, as on the other chips.
        self.step(BootStep::CheckWpr2Down, Self::check_wpr2_down)?;

        // Boot data (the FMC places the regions; the metadata states sizes only).
        self.step(BootStep::PrepareBootData, Self::prepare_boot_data)?;

        // The queues and the first RPCs, before GSP-RM starts.
        self.step(BootStep::QueueInitRpcs, Self::queue_init_rpcs)?;

        // The chain-of-trust message: the FSP verifies the GSP-FMC and starts it with the boot
        // parameters, which point GSP-RM at its WPR metadata and LIBOS arguments.
        self.step(BootStep::FspChainOfTrust, Self::fsp_chain_of_trust)?;

        // GSP-RM initialises.
        self.step(BootStep::RiscvActive, Self::wait_riscv_active)?;
        self.step(BootStep::LinkStatusQueue, Self::link_status_queue)?;
        self.step(BootStep::WaitInitDone, Self::wait_init_done)?;
        self.step(BootStep::GetStaticInfo, Self::get_static_info)?;
        Ok(())
    }

    /// Unloads GSP-RM (`kgspUnloadRm`): `UNLOADING_GUEST_DRIVER`, then booter_unload on SEC2,
    /// after which WPR2 must be down. Returns the report of these steps.
    pub fn unload(&mut self) -> Result<BootReport, BootError> {
        let mut report = BootReport { flow: Some(self.hal.boot_flow), ..BootReport::default() };
        core::mem::swap(&mut self.report, &mut report);
        let result = self.unload_steps();
        core::mem::swap(&mut self.report, &mut report);
        result.map(|()| report)
    }

    fn unload_steps(&mut self) -> Result<(), BootError> {
        // GSP-RM stops its work and suspends itself.
        self.step(BootStep::UnloadGuestDriver, Self::unloading_guest_driver)?;

        // The booter flows: GSP falcon reset, FWSEC-SB, then booter_unload tears WPR2 down
        // (skipped when WPR2 is not up, as RM does). On Hopper GSP-RM unloads through its FMC.
        if self.hal.boot_flow != BootFlow::FspChainOfTrust {
            self.step(BootStep::FwsecSb, Self::fwsec_sb)?;
            self.step(BootStep::BooterUnload, Self::booter_unload)?;
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // The steps.

    /// Runs `f` as `step`, recording its clock time.
    fn step<T>(&mut self, step: BootStep, f: impl FnOnce(&mut Self) -> StepResult<T>) -> Result<T, BootError> {
        let start = self.inputs.clock.now_ns();
        // Each step announced as it starts: the boot's progress on the console.
        log::info!(target: "progress", "GSP-RM ({:?}): {}", self.inputs.chipset, step.description());
        let result = f(self);
        let elapsed_ns = self.inputs.clock.now_ns().saturating_sub(start);
        self.report.steps.push(StepRecord { step, elapsed_ns });
        result.map_err(|kind| {
            let gsp_error = if step.gsp_rm_may_run() { GspErrorReport::read(self.inputs.io) } else { None };
            self.collect_logs();
            let logs = self.report.logs.clone();
            let error = BootError { chipset: self.inputs.chipset, step, kind, gsp_error, logs };
            log::error!("{error}");
            error
        })
    }

    /// Reads GSP-RM's log buffers (once the boot data exists) into the report and `log`.
    fn collect_logs(&mut self) -> Vec<LogLine> {
        let mut lines = Vec::new();
        if let Some(data) = self.data.as_ref() {
            // GSP-RM writes the buffers while it runs: each is copied out with volatile loads,
            // and the copies are decoded.
            let copies: Vec<Vec<u8>> = data
                .logs
                .iter()
                .map(|log| {
                    let mut copy = vec![0u8; log.region.len()];
                    let read = log.region.buffer().is_some_and(|b| b.read_volatile_bytes(0, &mut copy));
                    if read {
                        copy
                    } else {
                        Vec::new()
                    }
                })
                .collect();
            let buffers: Vec<&[u8]> = copies.iter().map(Vec::as_slice).collect();
            self.logs.drain(&buffers, |line| lines.push(line));
        }
        for line in &lines {
            log::log!(line.level(), "{:?}: {line}", self.inputs.chipset);
        }
        self.report.logs.extend(lines.iter().cloned());
        lines
    }

    fn falcon<E: Engine>(&self) -> StepResult<Falcon<&'a R, ClockRef<'a, C>, E>> {
        Ok(Falcon::new(self.inputs.io, ClockRef(self.inputs.clock), self.hal)?)
    }

    fn gsp_falcon(&self) -> StepResult<Falcon<&'a R, ClockRef<'a, C>, Gsp>> {
        self.falcon()
    }

    fn boot_data(&self) -> StepResult<&BootData<'a, A>> {
        self.data.as_ref().ok_or(BootErrorKind::Missing { what: "boot data (prepared in an earlier step)" })
    }

    fn wpr_meta(&self) -> Result<GspFwWprMeta, BootError> {
        self.boot_data().map(|d| d.wpr_meta).map_err(|kind| BootError {
            chipset: self.inputs.chipset,
            step: BootStep::PrepareBootData,
            kind,
            gsp_error: None,
            logs: Vec::new(),
        })
    }

    /// `gpuWaitForGfwBootComplete_TU102`: the privilege mask lowered, GFW_BOOT progress
    /// COMPLETED, then the GSP falcon halted (GFW ran on it).
    fn wait_gfw_boot(&mut self) -> StepResult<()> {
        let io = self.inputs.io;
        wait_for(self.inputs.clock, GFW_BOOT_TIMEOUT_MS, "GFW boot to complete (GFW_BOOT_PROGRESS)", || {
            let plm = gc6::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::read(io);
            let readable = u32::from(plm.read_protection_level0())
                == NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK_READ_PROTECTION_LEVEL0_ENABLE;
            (readable && gc6::gfw_boot_completed(io)).then_some(())
        })?;
        let gsp = self.gsp_falcon()?;
        wait_for(self.inputs.clock, GFW_BOOT_TIMEOUT_MS, "the GSP falcon to halt after GFW boot", || {
            gsp.is_halted().then_some(())
        })?;
        Ok(())
    }

    /// WPR2 must not be up (`kgspIsWpr2Up_TU102`: `WPR2_ADDR_HI` non-zero).
    fn check_wpr2_down(&mut self) -> StepResult<()> {
        match wpr2(self.inputs.io) {
            Some((lo, hi)) => Err(BootErrorKind::Wpr2AlreadyUp { lo, hi }),
            None => Ok(()),
        }
    }

    /// The usable framebuffer size as `kmemsysReadUsableFbSize_*` reads it.
    fn usable_fb_size(&self) -> StepResult<u64> {
        let size = match self.config.usable_fb_size {
            Some(size) => size,
            None => match self.hal.fb_size_source {
                FbSizeSource::LocalMemoryRange => {
                    NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE::read(self.inputs.io).usable_fb_size()
                }
                FbSizeSource::Gc6UsableFbSize => {
                    u64::from(gc6::NV_USABLE_FB_SIZE_IN_MB::read(self.inputs.io).value()) << 20
                }
            },
        };
        if size == 0 || size == u64::from(u32::MAX) << 20 {
            return Err(BootErrorKind::FbSize { read: size });
        }
        Ok(size)
    }

    fn prepare_boot_data(&mut self) -> StepResult<()> {
        let chipset = self.inputs.chipset;
        let params = WprChipParams::for_chipset(chipset).ok_or(BootErrorKind::NoWprParams { chipset })?;
        let fb = FbInputs {
            params,
            usable_fb_size: self.usable_fb_size()?,
            vga_workspace_base: self.config.vga_workspace_base,
            mmu_lock: None,
        };
        let firmware = self.inputs.firmware;
        let data = BootData::prepare(
            self.inputs.dma,
            &firmware.gsp,
            &firmware.bootloader,
            &fb,
            self.config.queue_layout,
            self.config.gpu_instance,
        )?;
        // `_kgspPrepareScrubberImageIfNeeded`: a reservation reaching below the pre-scrubbed
        // top of FB needs the scrubber ucode first, which no Debian package carries.
        let needed = data.wpr_meta.fb_size.saturating_sub(data.wpr_meta.gsp_fw_rsvd_start);
        if let Some(prescrubbed) = params.prescrubbed_top_fb_size {
            if needed > prescrubbed {
                return Err(BootErrorKind::ScrubberNeeded { needed, prescrubbed });
            }
        }
        log::info!(
            "{chipset:?}: WPR2 {:#x}..{:#x}, FRTS at {:#x}, GSP-RM heap {} MiB, FB {} MiB",
            data.wpr_meta.gsp_fw_wpr_start,
            data.wpr_meta.gsp_fw_wpr_end,
            data.wpr_meta.frts_offset,
            data.wpr_meta.gsp_fw_heap_size >> 20,
            data.wpr_meta.fb_size >> 20
        );
        self.report.wpr_meta = Some(data.wpr_meta);
        self.data = Some(data);
        Ok(())
    }

    fn fwsec_frts(&mut self) -> StepResult<()> {
        let vbios = self.inputs.vbios.ok_or(BootErrorKind::Missing { what: "the VBIOS (FWSEC)" })?;
        let fwsec = vbios.fwsec(FwsecKind::Prod).map_err(BootErrorKind::NoFwsec)?;
        let meta = self.boot_data()?.wpr_meta;
        let region = FrtsRegion { offset: meta.frts_offset, size: meta.frts_size };
        let gsp = self.gsp_falcon()?;
        let outcome =
            run_fwsec_frts(&gsp, self.hal, self.inputs.dma, &fwsec, region, self.inputs.generic_bootloader.as_ref())?;
        self.report.fwsec = Some(outcome);
        Ok(())
    }

    fn queue_init_rpcs(&mut self) -> StepResult<()> {
        let data = self.data.as_mut().ok_or(BootErrorKind::Missing { what: "boot data" })?;
        let memory = data.take_queue_memory().ok_or(BootErrorKind::Missing { what: "queue memory" })?;
        let doorbell = self.doorbell.take().ok_or(BootErrorKind::Missing { what: "the doorbell" })?;
        let queues = GspMessageQueues::new(memory, data.queue_layout, doorbell)?;
        let mut rpc = GspRpc::new(queues, ClockRef(self.inputs.clock));
        rpc.set_gpu(self.inputs.chipset);
        self.rpc = Some(rpc);
        self.send_init_rpcs()
    }

    fn booter_load(&mut self) -> StepResult<()> {
        let image =
            self.inputs.firmware.booter_load.as_ref().ok_or(BootErrorKind::Missing { what: "booter_load firmware" })?;
        let mailboxes = address_mailboxes(self.boot_data()?.wpr_meta_address());
        let sec2 = self.falcon::<Sec2>()?;
        let outcome = run_booter(&sec2, self.hal, self.inputs.dma, Booter::Load, image, mailboxes)?;
        self.report.booter_load = Some(outcome);
        Ok(())
    }

    fn wait_riscv_active(&mut self) -> StepResult<()> {
        let gsp = self.gsp_falcon()?;
        wait_for(self.inputs.clock, RISCV_ACTIVE_TIMEOUT_MS, "the GSP RISC-V core to become active", || {
            gsp.is_riscv_active().then_some(())
        })
        .map_err(|_| BootErrorKind::RiscvNotActive)
    }

    fn link_status_queue(&mut self) -> StepResult<()> {
        let clock = self.inputs.clock;
        let rpc = self.rpc.as_mut().ok_or(BootErrorKind::Missing { what: "message queues" })?;
        rpc.queues().wait_for_status_queue(clock, STATUS_QUEUE_LINK_TIMEOUT_MS)?;
        Ok(())
    }

    fn booter_unload(&mut self) -> StepResult<()> {
        if wpr2(self.inputs.io).is_none() {
            log::info!("{:?}: WPR2 is not up, skipping booter_unload", self.inputs.chipset);
            return Ok(());
        }
        let image = self
            .inputs
            .firmware
            .booter_unload
            .as_ref()
            .ok_or(BootErrorKind::Missing { what: "booter_unload firmware" })?;
        let sec2 = self.falcon::<Sec2>()?;
        let mailboxes = Mailboxes { mailbox0: BOOTER_UNLOAD_MAILBOX, mailbox1: BOOTER_UNLOAD_MAILBOX };
        run_booter(&sec2, self.hal, self.inputs.dma, Booter::Unload, image, mailboxes)?;
        match wpr2(self.inputs.io) {
            Some((lo, hi)) => Err(BootErrorKind::Wpr2StillUp { lo, hi }),
            None => Ok(()),
        }
    }

    /// `kgspBootstrapRiscvOSEarly_GH100` with the FSP booting the GSP-FMC: the FMC arguments,
    /// the chain-of-trust message (`kfspSendBootCommands_GH100`), then the GSP's target mask and
    /// boot ROM lockdown released with no FMC error in `MAILBOX0`, and `FALCON_OS`.
    /// `kgspUnloadRm`: the GSP falcon reset, then FWSEC-SB; a failing FWSEC-SB is a warning
    /// (RM asserts and goes on to booter_unload).
    fn fwsec_sb(&mut self) -> StepResult<()> {
        let gsp = self.gsp_falcon()?;
        gsp.reset()?;
        let Some(vbios) = self.inputs.vbios else { return Ok(()) };
        let result = vbios.fwsec(FwsecKind::Prod).map_err(BootErrorKind::NoFwsec).and_then(|fwsec| {
            Ok(run_fwsec_sb(&gsp, self.hal, self.inputs.dma, &fwsec, self.inputs.generic_bootloader.as_ref())?)
        });
        if let Err(kind) = result {
            let warning = BootError {
                chipset: self.inputs.chipset,
                step: BootStep::FwsecSb,
                kind,
                gsp_error: None,
                logs: Vec::new(),
            };
            log::warn!("{warning} (going on, as RM does)");
            self.report.warnings.push(warning);
        }
        Ok(())
    }

    fn fsp_chain_of_trust(&mut self) -> StepResult<()> {
        let fmc = self
            .inputs
            .fmc
            .ok_or(BootErrorKind::Missing { what: "the GSP-FMC and its credentials (not in Debian's firmware)" })?;
        let dma = self.inputs.dma;
        let data = self.boot_data()?;
        let boot_params = crate::hw::fw::fsp::GspFmcBootParams::new(data.wpr_meta_address(), data.libos_args_address());
        let app_version = data.boot_desc.app_version;
        let missing_memory = |what| move |error| BootErrorKind::Data(BootDataError::Dma { what, error });

        // What the FSP reads by bus address: the FMC, room for an FRTS copy, the FMC arguments.
        let fmc_len =
            dma::page_align(fmc.image.len()).ok_or(BootErrorKind::Missing { what: "a GSP-FMC below 4 GiB" })?;
        let fmc_image = DmaRegion::with_bytes(dma, fmc.image, fmc_len).map_err(missing_memory("GSP-FMC image"))?;
        let frts = DmaRegion::zeroed(dma, crate::hw::fw::fsp::FRTS_SIZE as usize)
            .map_err(missing_memory("FRTS system-memory copy"))?;
        let params = DmaRegion::with_bytes(dma, zerocopy::IntoBytes::as_bytes(&boot_params), data::BOOT_ARGS_PAGE)
            .map_err(missing_memory("GSP-FMC boot parameters"))?;
        let addresses = fsp::CotAddresses {
            fmc_image: fmc_image.bus_address(),
            frts_sysmem: frts.bus_address(),
            fmc_boot_params: params.bus_address(),
        };
        self.fsp_memory.extend([fmc_image, frts, params]);

        // The message.
        let cot = fsp::cot_payload(&fmc, &addresses);
        let fsp_falcon = self.falcon::<Fsp>()?;
        let clock = ClockRef(self.inputs.clock);
        fsp::FspChannel::new(&fsp_falcon, &clock)
            .send_and_read(zerocopy::IntoBytes::as_bytes(&cot), crate::hw::fw::fsp::NVDM_TYPE_COT)?;

        // The GSP becomes reachable once the FMC releases its target mask (until then its
        // registers read 0 or a 0xbadf41xx PRI error).
        let gsp = self.gsp_falcon()?;
        let io = self.inputs.io;
        let hwcfg2 = crate::hw::falcon::ga102::NV_PFALCON_FALCON_HWCFG2::address(gsp.unit().base);
        wait_for(self.inputs.clock, fsp::FMC_LOCKDOWN_TIMEOUT_MS, "the GSP target mask to be released", || {
            let raw = io.read32(hwcfg2);
            (raw != 0 && raw & 0xffff_ff00 != 0xbadf_4100).then_some(())
        })?;
        // Then the boot ROM lockdown, unless the FMC reports an error first.
        wait_for(
            self.inputs.clock,
            fsp::FMC_LOCKDOWN_TIMEOUT_MS,
            "the GSP lockdown release or a GSP-FMC error",
            || {
                let locked =
                    crate::hw::boot::NV_PFALCON_FALCON_HWCFG2::from_raw(io.read32(hwcfg2)).riscv_br_priv_lockdown();
                (!locked || gsp.mailboxes().mailbox0 != 0).then_some(())
            },
        )?;
        let mailbox0 = gsp.mailboxes().mailbox0;
        if mailbox0 != 0 {
            return Err(fsp::FspError::FmcError { mailbox0 }.into());
        }
        NV_PFALCON_FALCON_OS(app_version).write(io, gsp.unit().base);
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // The RPC steps (typed RPCs from `gsp::commands`).

    fn rpc_client(&mut self) -> StepResult<&mut GspRpc<D, ClockRef<'a, C>>> {
        self.rpc.as_mut().ok_or(BootErrorKind::Missing { what: "the RPC client (queues)" })
    }

    /// `GspSystemInfo` as `rpcGspSetSystemInfo_v17_00` fills it for bare metal: the BARs and
    /// PCI location, the config-space mirror (`kbifGetPciConfigSpacePriMirror_*`), `maxUserVa`;
    /// no chipset, ACPI, hypervisor or SR-IOV information.
    fn system_info(&self) -> GspSystemInfo {
        let pci = self.config.pci;
        let mut info = GspSystemInfo::zeroed();
        info.gpu_phys_addr = pci.bar0;
        info.gpu_phys_fb_addr = pci.bar1;
        info.gpu_phys_inst_addr = pci.bar_inst;
        info.nv_domain_bus_device_func = pci.domain_bus_device_function;
        let (base, size) = self.hal.pci_config_mirror();
        info.pci_config_mirror_base = base;
        info.pci_config_mirror_size = size;
        info.max_user_va = MAX_USER_VA;
        info
    }

    /// `GSP_SET_SYSTEM_INFO` then `SET_REGISTRY`, posted without waiting: GSP-RM reads them
    /// first thing when it boots.
    fn send_init_rpcs(&mut self) -> StepResult<()> {
        let system = GspSetSystemInfo(self.system_info());
        let registry = SetRegistry(self.config.registry.clone());
        let rpc = self.rpc_client()?;
        rpc.post(&system)?;
        rpc.post(&registry)?;
        Ok(())
    }

    /// The core a `GSP_RUN_CPU_SEQUENCER` script acts on.
    fn sequencer_core(&self) -> StepResult<BootCore<'a, R, C>> {
        let data = self.boot_data()?;
        Ok(BootCore {
            gsp: self.gsp_falcon()?,
            sec2: self.falcon::<Sec2>().ok(),
            clock: self.inputs.clock,
            libos_args: data.libos_args_address(),
            app_version: data.boot_desc.app_version,
            layout: self.hal.falcon_layout,
            resumes: 0,
        })
    }

    /// `kgspWaitForRmInitDone`: GSP-RM's messages until `GSP_INIT_DONE`, running every CPU
    /// sequencer script it sends (every opcode, in order) and logging the other events; then
    /// `GSP_INIT_DONE`'s `rpc_result` must be `NV_OK`.
    fn wait_init_done(&mut self) -> StepResult<()> {
        let mut core = self.sequencer_core()?;
        let io = self.inputs.io;
        let clock = self.inputs.clock;
        let timeout = self.config.init_done_timeout_ms;
        let mut events: Vec<u32> = Vec::new();
        let mut sequencer_runs = 0;
        let mut handler = |message: &GspMessage| -> Result<(), RpcError> {
            events.push(message.function());
            match GspEvent::decode(message)? {
                GspEvent::RunCpuSequencer(mut buffer) => {
                    log::info!("GSP-RM: running a CPU sequencer script of {} commands", buffer.commands.len());
                    run_sequencer(&mut buffer, io, &ClockRef(clock), &mut core)?;
                    sequencer_runs += 1;
                }
                GspEvent::OsErrorLog(e) => log::warn!("GSP-RM during boot: Xid {}: {}", e.except_type(), e.text()),
                _ => log::info!("GSP-RM during boot: {}", message.name()),
            }
            Ok(())
        };
        let rpc = self.rpc.as_mut().ok_or(BootErrorKind::Missing { what: "the RPC client (queues)" })?;
        let done = rpc.wait_for_event(RpcEvent::GspInitDone, timeout, &mut handler);
        let resumes = core.resumes;
        self.report.events.extend(events);
        self.report.sequencer_runs += sequencer_runs;
        self.report.resumes += resumes;
        let done = done?;
        // What GSP-RM logged on its way to INIT_DONE.
        self.collect_logs();
        if !done.rpc_result().is_ok() {
            return Err(BootErrorKind::InitFailed { rpc_result: done.header.rpc_result });
        }
        Ok(())
    }

    /// `GET_GSP_STATIC_INFO` (events that arrive meanwhile are logged).
    fn get_static_info(&mut self) -> StepResult<()> {
        let info = self.rpc_client()?.call(&GetGspStaticInfo)?;
        let name = info.gpu_name();
        log::info!("{:?}: GSP-RM static info: \"{name}\"", self.inputs.chipset);
        self.report.gpu_name = Some(name);
        self.static_info = Some(info);
        Ok(())
    }

    /// `UNLOADING_GUEST_DRIVER` (an unload, not a suspend), then GSP-RM's processor suspends
    /// (`kgspWaitForProcessorSuspend_TU102`: `MAILBOX0` = `LIBOS_INTERRUPT_PROCESSOR_SUSPENDED`).
    fn unloading_guest_driver(&mut self) -> StepResult<()> {
        self.rpc_client()?.call(&UnloadingGuestDriver::default())?;
        self.wait_for_processor_suspend()
    }

    /// `kgspWaitForProcessorSuspend_TU102`: GSP-RM's processor reports it suspended in
    /// `MAILBOX0` (`LIBOS_INTERRUPT_PROCESSOR_SUSPENDED`), within RM's default timeout.
    fn wait_for_processor_suspend(&self) -> StepResult<()> {
        let gsp = self.gsp_falcon()?;
        wait_for(
            self.inputs.clock,
            crate::gsp::commands::RM_DEFAULT_TIMEOUT_MS,
            "the GSP processor to suspend",
            || (gsp.mailboxes().mailbox0 == LIBOS_INTERRUPT_PROCESSOR_SUSPENDED).then_some(()),
        )?;
        Ok(())
    }
}

/// `LIBOS_INTERRUPT_PROCESSOR_SUSPENDED`: what GSP leaves in `NV_PGSP_FALCON_MAILBOX0` once it
/// has suspended (`_kgspIsProcessorSuspended`, `kernel_gsp_tu102.c`).
pub const LIBOS_INTERRUPT_PROCESSOR_SUSPENDED: u32 = 0x8000_0000;

impl<R: RegisterIo, C: Clock + ?Sized, A: DmaAllocator + ?Sized, D: GspDoorbell> Drop for GspBoot<'_, R, C, A, D> {
    fn drop(&mut self) {
        // The queue memory goes back with the rest of the boot data.
        if let (Some(rpc), Some(data)) = (self.rpc.take(), self.data.as_mut()) {
            let (queues, _clock) = rpc.into_parts();
            let (memory, _doorbell) = queues.into_parts();
            data.return_queue_memory(memory);
        }
    }
}

/// WPR2 as the hardware reports it: (first byte, last byte), or `None` when it is not up.
pub fn wpr2(io: &(impl RegisterIo + ?Sized)) -> Option<(u64, u64)> {
    let last = fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::read(io).last_unit_address()?;
    Some((fb::NV_PFB_PRI_MMU_WPR2_ADDR_LO::read(io).start_address(), last + 0xfff))
}
