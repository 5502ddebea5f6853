//! GSP suspend and resume across a power transition, as RM 535.261.03 does it for a GSP client
//! outside GC6: `gpuPowerManagementEnter` / `gpuPowerManagementResume` (`gpu_suspend.c`) around
//! `kgspSavePowerMgmtState_TU102` / `kgspRestorePowerMgmtState_TU102` (`kernel_gsp_tu102.c`),
//! `kgspExecuteBooterUnloadIfNeeded_TU102` / `kgspExecuteBooterLoad_TU102`
//! (`kernel_gsp_booter_tu102.c`) and `kgspPopulateGspRmInitArgs` (`kernel_gsp.c`).
//!
//! [`GspBoot::suspend`]:
//! 1. `UNLOADING_GUEST_DRIVER` with `bInPMTransition` = 1, `bGc6Entering` = 0 and `newLevel`
//!    ([`PmTransition::level`]); then `kgspWaitForProcessorSuspend`: `NV_PGSP_FALCON_MAILBOX0` =
//!    `LIBOS_INTERRUPT_PROCESSOR_SUSPENDED`.
//! 2. The GSP falcon reset and FWSEC-SB (a failing FWSEC-SB is a warning, as in
//!    [`GspBoot::unload`]).
//! 3. `kgspSavePowerMgmtState_TU102`: a save area of `gspFwWprEnd - gspFwWprStart` bytes in
//!    system memory behind radix3 tables (`kgspCreateRadix3`), a [`GspFwSRMeta`] naming it, and
//!    booter_unload with the metadata's bus address in SEC2's `MAILBOX0/1`; WPR2 must be down.
//!
//! [`GspBoot::resume`]:
//! 1. `kgspPopulateGspRmInitArgs` with `GSP_SR_INIT_ARGUMENTS` { `oldLevel`, `flags`,
//!    `bInPMTransition` = 1 } rewritten into the RMARGS page (the queue arguments unchanged).
//! 2. `kgspWaitForGfwBootOk`.
//! 3. `kgspRestorePowerMgmtState_TU102`: booter_load with the SR metadata's bus address (not the
//!    WPR metadata's) in SEC2's `MAILBOX0/1`; `MAILBOX0` must read 0. The SR data is freed
//!    afterwards, whatever the outcome (`kgspFreeSuspendResumeData`).
//! 4. `kgspWaitForRmInitDone`: `GSP_INIT_DONE` again, over the same queues. RM does not
//!    re-create or re-link the queues on resume (`GspStatusQueueInit` runs only at boot): the CPU
//!    keeps its read and write positions, GSP-RM restores its own from WPR2.
//!
//! In 535.261.03 the CPU does not change `GspFwWprMeta` for a resume: what booter_load is told
//! is the SR metadata; the WPR metadata's suspend/resume view (`gspFwHeapFreeListWprOffset`) is
//! written by GSP-RM and the booter, not by the CPU.
//!
//! Not done here: PCI power states (D3hot/D3cold and back, the kernel's job), GC6 (WPR2 stays
//! up, booter_unload with `0xdeaddead`), Hopper (its GSP-FMC does SR through the FSP),
//! `memmgrSavePowerMgmtState` (FB contents: nothing the unikernel keeps in FB across SR).

use core::fmt;

use alloc::vec;
use alloc::vec::Vec;

use super::booter::{address_mailboxes, run_booter, Booter};
use super::dma::DmaRegion;
use super::{wpr2, BootError, BootErrorKind, BootReport, BootStep, GspBoot, StepResult};
use crate::falcon::Sec2;
use crate::gsp::cmdq::GspDoorbell;
use crate::gsp::commands::UnloadingGuestDriver;
use crate::gsp::fw::init_args::GspSrInitArguments;
use crate::gsp::fw::radix3::{build_radix3, Radix3Error, Radix3Layout, RADIX3_PAGE_SIZE};
use crate::gsp::fw::sr_meta::{GspFwSRMeta, SrMetaError};
use crate::hal::BootFlow;
use crate::hw::RegisterIo;
use crate::platform::{Clock, DmaAllocator, DmaError};

/// `NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_3` (`ctrl2080gpu.h`): standby (S3).
pub const NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_3: u32 = 3;
/// `NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_7`: hibernate (S4).
pub const NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_7: u32 = 7;
/// `GPU_STATE_FLAGS_PM_SUSPEND` (`g_gpu_nvoc.h`).
pub const GPU_STATE_FLAGS_PM_SUSPEND: u32 = 1 << 3;
/// `GPU_STATE_FLAGS_PM_HIBERNATE`.
pub const GPU_STATE_FLAGS_PM_HIBERNATE: u32 = 1 << 4;

/// The power transition, as `gpuEnterStandby` / `gpuEnterHibernate` (`gpu_suspend.c`) pass it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmTransition {
    /// `gpuEnterStandby`: level 3, `GPU_STATE_FLAGS_PM_SUSPEND`.
    Standby,
    /// `gpuEnterHibernate`: level 7, `GPU_STATE_FLAGS_PM_HIBERNATE`.
    Hibernate,
}

impl PmTransition {
    /// `newLevel` at suspend, `oldLevel` at resume.
    pub const fn level(self) -> u32 {
        match self {
            Self::Standby => NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_3,
            Self::Hibernate => NV2080_CTRL_GPU_SET_POWER_STATE_GPU_LEVEL_7,
        }
    }

    /// The `flags` of `GSP_SR_INIT_ARGUMENTS` at resume.
    pub const fn flags(self) -> u32 {
        match self {
            Self::Standby => GPU_STATE_FLAGS_PM_SUSPEND,
            Self::Hibernate => GPU_STATE_FLAGS_PM_HIBERNATE,
        }
    }
}

/// Why a suspend or resume could not proceed (beyond the boot's own errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SuspendError {
    /// [`GspBoot::resume`] without a [`GspBoot::suspend`] before it
    /// (`kgspRestorePowerMgmtState_TU102`: `NV_ERR_INVALID_STATE`).
    NotSuspended,
    /// [`GspBoot::suspend`] twice.
    AlreadySuspended,
    /// Suspend or resume of a flow without booters (Hopper).
    Unsupported { flow: BootFlow },
    /// The SR metadata in memory is no longer what [`GspBoot::suspend`] wrote.
    SrMeta(SrMetaError),
    /// The save area's radix3 tables.
    Radix3(Radix3Error),
    /// DMA memory for the SR data.
    Dma { what: &'static str, error: DmaError },
}

impl fmt::Display for SuspendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotSuspended => write!(f, "resume without a suspend: no GSP suspend/resume data"),
            Self::AlreadySuspended => write!(f, "GSP-RM is already suspended"),
            Self::Unsupported { flow } => write!(f, "suspend/resume is not available for the {flow:?} flow"),
            Self::SrMeta(e) => e.fmt(f),
            Self::Radix3(e) => e.fmt(f),
            Self::Dma { what, error } => write!(f, "DMA memory for {what}: {error:?}"),
        }
    }
}

impl From<SuspendError> for BootErrorKind {
    fn from(e: SuspendError) -> Self {
        BootErrorKind::Suspend(e)
    }
}

/// What a suspended GSP-RM needs back at resume: `pSRMetaDescriptor` and
/// `pSRRadix3Descriptor`.
pub struct SrData<'a, A: DmaAllocator + ?Sized> {
    /// The transition suspended through.
    pub transition: PmTransition,
    /// The metadata as written.
    pub meta: GspFwSRMeta,
    /// The page holding it (booter reads 256 bytes).
    pub meta_page: DmaRegion<'a, A>,
    /// The save area: radix3 tables, then `sizeOfSuspendResumeData` bytes.
    pub save_area: DmaRegion<'a, A>,
}

impl<A: DmaAllocator + ?Sized> SrData<'_, A> {
    /// Bus address of the metadata: what SEC2's mailboxes carry.
    pub fn meta_address(&self) -> u64 {
        self.meta_page.bus_address()
    }

    /// The metadata as it is in memory now.
    pub fn meta_in_memory(&self) -> Option<GspFwSRMeta> {
        self.meta_page.read_struct(0).ok()
    }
}

/// `kgspCreateRadix3` for `size` bytes of zeroed system memory.
fn save_area<'a, A: DmaAllocator + ?Sized>(dma: &'a A, size: u64) -> Result<DmaRegion<'a, A>, SuspendError> {
    let layout = Radix3Layout::new(size).map_err(SuspendError::Radix3)?;
    let total = usize::try_from(layout.total_pages() * RADIX3_PAGE_SIZE)
        .map_err(|_| SuspendError::Radix3(Radix3Error::ImageTooLarge { image_size: size }))?;
    let mut region = DmaRegion::zeroed(dma, total)
        .map_err(|error| SuspendError::Dma { what: "the GSP suspend/resume save area", error })?;
    let bus = region.bus_address();
    let pages: Vec<u64> = (0..layout.total_pages()).map(|i| bus + i * RADIX3_PAGE_SIZE).collect();
    let table_bytes = layout.table_bytes() as usize;
    let mut tables = vec![0u8; table_bytes];
    build_radix3(&layout, &pages, &mut tables).map_err(SuspendError::Radix3)?;
    region.write(0, &tables).map_err(|_| {
        SuspendError::Radix3(Radix3Error::TableSize { expected: table_bytes as u64, found: region.len() as u64 })
    })?;
    Ok(region)
}

impl<'a, R: RegisterIo, C: Clock + ?Sized, A: DmaAllocator + ?Sized, D: GspDoorbell> GspBoot<'a, R, C, A, D> {
    /// Whether GSP-RM is suspended (its SR data held).
    pub fn is_suspended(&self) -> bool {
        self.sr.is_some()
    }

    /// The SR data of a suspended GSP-RM.
    pub fn sr_data(&self) -> Option<&SrData<'a, A>> {
        self.sr.as_ref()
    }

    /// The SR data, mutably (for diagnostics and tests that corrupt it).
    pub fn sr_data_mut(&mut self) -> Option<&mut SrData<'a, A>> {
        self.sr.as_mut()
    }

    /// Suspends GSP-RM for `transition` (`gpuPowerManagementEnter`, GSP part, not GC6): the
    /// module documentation's steps. Afterwards WPR2 is down and the GSP halted; the boot data,
    /// queues and SR data stay for [`Self::resume`]. Returns the report of these steps.
    pub fn suspend(&mut self, transition: PmTransition) -> Result<BootReport, BootError> {
        self.with_report(|b| b.suspend_steps(transition))
    }

    /// Resumes GSP-RM suspended by [`Self::suspend`] (`gpuPowerManagementResume`, GSP part):
    /// the module documentation's steps, ending with `GSP_INIT_DONE`. The RM objects created
    /// before the suspend are GSP-RM's again; the RPC client carries on.
    pub fn resume(&mut self) -> Result<BootReport, BootError> {
        self.with_report(Self::resume_steps)
    }

    fn with_report(&mut self, f: impl FnOnce(&mut Self) -> Result<(), BootError>) -> Result<BootReport, BootError> {
        let mut report = BootReport { flow: Some(self.hal.boot_flow), ..BootReport::default() };
        core::mem::swap(&mut self.report, &mut report);
        let result = f(self);
        core::mem::swap(&mut self.report, &mut report);
        result.map(|()| report)
    }

    fn suspend_steps(&mut self, transition: PmTransition) -> Result<(), BootError> {
        // GSP-RM saves its state into WPR2 and suspends its processor.
        self.step(BootStep::UnloadGuestDriver, |b| b.suspend_guest_driver(transition))?;
        // The GSP falcon reset, FWSEC-SB (the pre-OS applications back).
        self.step(BootStep::FwsecSb, Self::fwsec_sb)?;
        // The save area and its metadata, then booter_unload saves WPR2 into it and tears it down.
        self.step(BootStep::SaveSrData, |b| b.save_sr_data(transition))?;
        self.step(BootStep::BooterUnload, Self::booter_unload_sr)?;
        Ok(())
    }

    fn resume_steps(&mut self) -> Result<(), BootError> {
        // GSP_SR_INIT_ARGUMENTS for the resume, in the RMARGS page GSP-RM reads again.
        self.step(BootStep::ResumeInitArgs, Self::resume_init_args)?;
        self.step(BootStep::WaitGfwBoot, Self::wait_gfw_boot)?;
        // booter_load restores WPR2 from the save area and restarts GSP-RM; the SR data goes
        // whatever the outcome.
        let restored = self.step(BootStep::BooterLoad, Self::booter_load_sr);
        self.sr = None;
        restored?;
        self.step(BootStep::RiscvActive, Self::wait_riscv_active)?;
        self.step(BootStep::WaitInitDone, Self::wait_init_done)?;
        Ok(())
    }

    fn sr_preconditions(&mut self, resuming: bool) -> StepResult<()> {
        let flow = self.hal.boot_flow;
        if flow == BootFlow::FspChainOfTrust {
            return Err(SuspendError::Unsupported { flow }.into());
        }
        match (resuming, self.sr.is_some()) {
            (true, false) => Err(SuspendError::NotSuspended.into()),
            (false, true) => Err(SuspendError::AlreadySuspended.into()),
            _ => Ok(()),
        }
    }

    /// `NV_RM_RPC_UNLOADING_GUEST_DRIVER(pGpu, status, NV_TRUE, NV_FALSE, newLevel)`, then
    /// `kgspWaitForProcessorSuspend`.
    fn suspend_guest_driver(&mut self, transition: PmTransition) -> StepResult<()> {
        self.sr_preconditions(false)?;
        let rpc = UnloadingGuestDriver { in_pm_transition: true, gc6_entering: false, new_level: transition.level() };
        self.rpc_client()?.call(&rpc)?;
        self.wait_for_processor_suspend()?;
        self.collect_logs();
        Ok(())
    }

    /// `kgspSavePowerMgmtState_TU102` up to booter_unload.
    fn save_sr_data(&mut self, transition: PmTransition) -> StepResult<()> {
        let meta = self.boot_data()?.wpr_meta;
        let size = meta.gsp_fw_wpr_end.saturating_sub(meta.gsp_fw_wpr_start);
        let dma = self.inputs.dma;
        let save_area = save_area(dma, size)?;
        let sr_meta = GspFwSRMeta::new(save_area.bus_address(), size);
        let meta_page =
            DmaRegion::with_bytes(dma, zerocopy::IntoBytes::as_bytes(&sr_meta), super::data::BOOT_ARGS_PAGE)
                .map_err(|error| SuspendError::Dma { what: "GspFwSRMeta", error })?;
        log::info!(
            "{:?}: GSP SR data: {size:#x} bytes behind radix3 at {:#x}, GspFwSRMeta at {:#x}",
            self.inputs.chipset,
            save_area.bus_address(),
            meta_page.bus_address()
        );
        self.sr = Some(SrData { transition, meta: sr_meta, meta_page, save_area });
        Ok(())
    }

    /// `kgspExecuteBooterUnloadIfNeeded_TU102(sysmemAddrOfSuspendResumeData)`: SEC2's mailboxes
    /// carry the SR metadata's address; WPR2 must be down afterwards. On failure the SR data
    /// goes (`exit_fail_cleanup`).
    fn booter_unload_sr(&mut self) -> StepResult<()> {
        let result = self.run_booter_unload_sr();
        if result.is_err() {
            self.sr = None;
        }
        result
    }

    fn run_booter_unload_sr(&mut self) -> StepResult<()> {
        if wpr2(self.inputs.io).is_none() {
            log::info!("{:?}: WPR2 is not up, skipping booter_unload", self.inputs.chipset);
            return Ok(());
        }
        let address = self.sr.as_ref().ok_or(SuspendError::NotSuspended)?.meta_address();
        let image = self
            .inputs
            .firmware
            .booter_unload
            .as_ref()
            .ok_or(BootErrorKind::Missing { what: "booter_unload firmware" })?;
        let sec2 = self.falcon::<Sec2>()?;
        run_booter(&sec2, self.hal, self.inputs.dma, Booter::Unload, image, address_mailboxes(address))?;
        match wpr2(self.inputs.io) {
            Some((lo, hi)) => Err(BootErrorKind::Wpr2StillUp { lo, hi }),
            None => Ok(()),
        }
    }

    /// `kgspPopulateGspRmInitArgs(pGpu, pKernelGsp, &gspSrInitArgs)`.
    fn resume_init_args(&mut self) -> StepResult<()> {
        self.sr_preconditions(true)?;
        let transition = self.sr.as_ref().ok_or(SuspendError::NotSuspended)?.transition;
        let data = self.data.as_mut().ok_or(BootErrorKind::Missing { what: "boot data" })?;
        data.rm_args.sr_init_arguments = GspSrInitArguments {
            old_level: transition.level(),
            flags: transition.flags(),
            b_in_pm_transition: 1,
            _padding: [0; 3],
        };
        data.rm_args_page.write_struct(0, &data.rm_args).map_err(|error| {
            BootErrorKind::Data(super::data::BootDataError::Write { what: "GSP-RM arguments", error })
        })?;
        Ok(())
    }

    /// `kgspRestorePowerMgmtState_TU102`: booter_load with the SR metadata's address.
    fn booter_load_sr(&mut self) -> StepResult<()> {
        let sr = self.sr.as_ref().ok_or(SuspendError::NotSuspended)?;
        let address = sr.meta_address();
        let image =
            self.inputs.firmware.booter_load.as_ref().ok_or(BootErrorKind::Missing { what: "booter_load firmware" })?;
        let sec2 = self.falcon::<Sec2>()?;
        let outcome = run_booter(&sec2, self.hal, self.inputs.dma, Booter::Load, image, address_mailboxes(address))?;
        self.report.booter_load = Some(outcome);
        Ok(())
    }
}
