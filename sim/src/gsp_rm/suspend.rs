//! GSP-RM and the booters across a suspend/resume (RM 535.261.03, GSP client, not GC6):
//! `gpuPowerManagementEnter` / `gpuPowerManagementResume` (`gpu_suspend.c`),
//! `kgspSavePowerMgmtState_TU102` / `kgspRestorePowerMgmtState_TU102` (`kernel_gsp_tu102.c`),
//! `kgspExecuteBooterUnloadIfNeeded_TU102` / `kgspExecuteBooterLoad_TU102`.
//!
//! - `UNLOADING_GUEST_DRIVER` with `bInPMTransition` = 1 (`bGc6Entering` 0, `newLevel` 3 or 7):
//!   GSP-RM answers, keeps its session (queues, RM object table), leaves
//!   `LIBOS_INTERRUPT_PROCESSOR_SUSPENDED` in `NV_PGSP_FALCON_MAILBOX0` and halts its core.
//! - booter_unload with SEC2 `MAILBOX0/1` = an address (not RM's `0xFF`/`0xFF`): a
//!   `GspFwSRMeta` there with `GSP_FW_SR_META_MAGIC`, revision 2, `sizeOfSuspendResumeData` =
//!   the WPR2 size, zero padding, a radix3 save area of that size whose pages are readable,
//!   and GSP-RM suspended as above. The booter "saves" WPR2 (writes a tag into the save area's
//!   first page), tears WPR2 down and remembers the metadata.
//! - booter_load with SEC2 `MAILBOX0/1` pointing at memory starting with `GSP_FW_SR_META_MAGIC`:
//!   the resume. Something must have been saved (else `BooterError::Sr`: resume without suspend),
//!   the metadata must check as above and name the same save area, which must still hold the
//!   tag. WPR2 comes back over the saved range; GSP-RM re-reads RMARGS, whose
//!   `srInitArguments` must say `bInPMTransition` = 1 with `oldLevel` the suspend's `newLevel`
//!   and `flags` `GPU_STATE_FLAGS_PM_SUSPEND` or `_HIBERNATE`, and posts `GSP_INIT_DONE` on
//!   the same queues (positions kept), its RM objects unchanged.
//!
//! Not modelled: GC6 (`bGc6Entering`), the HMAC and hashes, actual WPR2 contents.

use alloc::vec;

use nvgpu::gsp::commands::RpcUnloadingGuestDriverV1F07;
use nvgpu::gsp::fw::init_args::GspArgumentsCached;
use nvgpu::gsp::fw::libos::{
    LibosMemoryRegionInitArgument, LIBOS_INIT_ARGUMENTS_COUNT, LIBOS_INIT_ARGUMENTS_SIZE, RMARGS_ID,
};
use nvgpu::gsp::fw::radix3::RADIX3_PAGE_SIZE;
use nvgpu::gsp::fw::rpc::RpcEvent;
use nvgpu::gsp::fw::sr_meta::{GspFwSRMeta, GSP_FW_SR_META_MAGIC};
use nvgpu::gsp::status::NvStatus;
use zerocopy::FromBytes;

use super::{error, log, GspCtx, GspRm, GspRmError, Init, State};
use crate::booter::{BooterContext, BooterEffect, BooterError, BooterKind, BooterOutcome};
use crate::memory::SystemMemory;

/// `GPU_STATE_FLAGS_PM_SUSPEND` (`g_gpu_nvoc.h`).
const GPU_STATE_FLAGS_PM_SUSPEND: u32 = 1 << 3;
/// `GPU_STATE_FLAGS_PM_HIBERNATE`.
const GPU_STATE_FLAGS_PM_HIBERNATE: u32 = 1 << 4;
/// What the model booter writes at the start of the save area: "GSPSRSAV".
const SAVE_TAG: [u8; 8] = *b"GSPSRSAV";

/// Where the chip is in a suspend/resume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)] // one per chip
pub(crate) enum SrState {
    /// No suspend in progress.
    #[default]
    Idle,
    /// GSP-RM suspended for `newLevel` `level`; WPR2 not saved yet.
    Suspended { level: u32 },
    /// booter_unload saved WPR2 `wpr` (first byte, last byte) with the metadata at `bus`.
    Saved { level: u32, bus: u64, meta: GspFwSRMeta, wpr: (u64, u64) },
}

fn sr(what: &'static str, value: u64) -> BooterError {
    BooterError::Sr { what, value }
}

fn read_meta(memory: &dyn SystemMemory, bus: u64) -> Result<GspFwSRMeta, BooterError> {
    let mut raw = [0u8; core::mem::size_of::<GspFwSRMeta>()];
    if !memory.read(bus, &mut raw) {
        return Err(sr("GspFwSRMeta unreadable", bus));
    }
    GspFwSRMeta::read_from_bytes(&raw).map_err(|_| sr("GspFwSRMeta unreadable", bus))
}

fn u64_at(memory: &dyn SystemMemory, bus: u64) -> Option<u64> {
    let mut raw = [0u8; 8];
    memory.read(bus, &mut raw).then(|| u64::from_le_bytes(raw))
}

/// The save area's first data page, after checking that every data page the radix3 tables
/// name is 4 KiB aligned and readable.
fn save_area(memory: &dyn SystemMemory, meta: &GspFwSRMeta) -> Result<u64, BooterError> {
    let entries = RADIX3_PAGE_SIZE / 8;
    let pages = meta.size_of_suspend_resume_data.div_ceil(RADIX3_PAGE_SIZE);
    let root = meta.sysmem_addr_of_suspend_resume_data;
    let entry = |table: u64, index: u64| -> Result<u64, BooterError> {
        let addr = u64_at(memory, table + 8 * index).ok_or(sr("save area radix3 table unreadable", table))?;
        if addr == 0 || !addr.is_multiple_of(RADIX3_PAGE_SIZE) {
            return Err(sr("save area radix3 entry not a 4 KiB-aligned page", addr));
        }
        Ok(addr)
    };
    let mut first = None;
    let mut probe = [0u8; 1];
    for l2_index in 0..pages.div_ceil(entries) {
        let l1 = entry(root, l2_index / entries)?;
        let l2 = entry(l1, l2_index % entries)?;
        for i in 0..entries.min(pages - l2_index * entries) {
            let page = entry(l2, i)?;
            if !memory.read(page, &mut probe) || !memory.read(page + RADIX3_PAGE_SIZE - 1, &mut probe) {
                return Err(sr("save area page unreadable", page));
            }
            first.get_or_insert(page);
        }
    }
    first.ok_or(sr("save area is empty", 0))
}

/// booter_unload or booter_load on a suspend/resume request; `None` when the request is not
/// one (plain unload: `0xFF` mailboxes; load: a `GspFwWprMeta`).
pub(crate) fn booter(kind: BooterKind, ctx: &BooterContext<'_>, state: &SrState) -> Option<BooterOutcome> {
    let bus = u64::from(ctx.mailboxes[0]) | (u64::from(ctx.mailboxes[1]) << 32);
    let memory = ctx.memory?;
    match kind {
        BooterKind::Unload => {
            if ctx.mailboxes == [0xFF; 2] || ctx.mailboxes == [0xdead_dead; 2] {
                return None;
            }
            Some(match save(ctx, memory, bus, state) {
                Ok(saved) => BooterOutcome {
                    mailbox0: 0,
                    error: None,
                    effects: vec![BooterEffect::ClearWpr2, BooterEffect::Sr(saved)],
                },
                Err(error) => BooterOutcome::failed(error),
            })
        }
        BooterKind::Load => {
            if u64_at(memory, bus) != Some(GSP_FW_SR_META_MAGIC) {
                return None;
            }
            Some(match restore(ctx, memory, bus, state) {
                Ok((lo_4k, hi_4k)) => BooterOutcome {
                    mailbox0: 0,
                    error: None,
                    effects: vec![BooterEffect::SetWpr2 { lo_4k, hi_4k }, BooterEffect::RestoreGspRm],
                },
                Err(error) => BooterOutcome::failed(error),
            })
        }
    }
}

fn save(ctx: &BooterContext<'_>, memory: &dyn SystemMemory, bus: u64, state: &SrState) -> Result<SrState, BooterError> {
    let SrState::Suspended { level } = *state else {
        return Err(sr("booter_unload with GspFwSRMeta while GSP-RM is not suspended", bus));
    };
    if ctx.gsp.riscv_running {
        return Err(BooterError::GspRmNotStopped);
    }
    let wpr = ctx.wpr2.ok_or(BooterError::Wpr2NotUp)?;
    let meta = read_meta(memory, bus)?;
    check(&meta, wpr.1 + 1 - wpr.0)?;
    let first = save_area(memory, &meta)?;
    if !memory.write(first, &SAVE_TAG) {
        return Err(sr("save area not writable", first));
    }
    Ok(SrState::Saved { level, bus, meta, wpr })
}

fn restore(
    ctx: &BooterContext<'_>,
    memory: &dyn SystemMemory,
    bus: u64,
    state: &SrState,
) -> Result<(u32, u32), BooterError> {
    let SrState::Saved { meta: saved, wpr, .. } = *state else {
        return Err(sr("booter_load with GspFwSRMeta but nothing was saved (resume without suspend)", bus));
    };
    if ctx.gsp.riscv_running {
        return Err(BooterError::GspRmRunning);
    }
    if let Some((lo, _)) = ctx.wpr2 {
        return Err(sr("booter_load for resume while WPR2 is up", lo));
    }
    let meta = read_meta(memory, bus)?;
    check(&meta, wpr.1 + 1 - wpr.0)?;
    if meta != saved {
        return Err(sr(
            "GspFwSRMeta differs from the one booter_unload saved with",
            meta.sysmem_addr_of_suspend_resume_data,
        ));
    }
    let first = save_area(memory, &meta)?;
    let mut tag = [0u8; 8];
    if !memory.read(first, &mut tag) || tag != SAVE_TAG {
        return Err(sr("save area does not hold what booter_unload saved", first));
    }
    Ok(((wpr.0 >> 12) as u32, (wpr.1 >> 12) as u32))
}

fn check(meta: &GspFwSRMeta, wpr_size: u64) -> Result<(), BooterError> {
    use nvgpu::gsp::fw::sr_meta::SrMetaError as E;
    meta.check(wpr_size).map_err(|e| match e {
        E::BadMagic { magic } => sr("GspFwSRMeta magic", magic),
        E::BadRevision { revision } => sr("GspFwSRMeta revision", revision),
        E::BadSize { size, .. } => sr("GspFwSRMeta sizeOfSuspendResumeData is not the WPR2 size", size),
        E::BadAddress { address } => sr("GspFwSRMeta sysmemAddrOfSuspendResumeData", address),
        E::PaddingNotZero => sr("GspFwSRMeta padding not zero", 0),
    })?;
    if meta.hmac != [0; 32]
        || meta.wpr_meta_hash != [0; 32]
        || meta.heap_free_list_hash != [0; 32]
        || meta.data_hash != [0; 32]
    {
        return Err(sr("GspFwSRMeta hmac/hashes not zero (the CPU leaves them to the booter)", 0));
    }
    Ok(())
}

impl GspRm {
    /// `UNLOADING_GUEST_DRIVER` answered: a plain unload, or a suspend for a PM transition.
    pub(crate) fn unloading_guest_driver(&mut self, params: &RpcUnloadingGuestDriverV1F07, ctx: &mut GspCtx<'_>) {
        if params.b_in_pm_transition == 0 {
            self.unload(ctx);
            return;
        }
        if params.b_gc6_entering != 0 || !matches!(params.new_level, 3 | 7) {
            let error = GspRmError::Resume {
                what: "UNLOADING_GUEST_DRIVER: GC6 or a newLevel other than 3/7",
                value: params.new_level.into(),
            };
            self.fail(error, ctx, 0);
            return;
        }
        self.logs.log(log::LogTask::Rm, log::Msg::Unloading, &[]);
        if let (State::Running(session), Some(memory)) = (&mut self.state, ctx.memory) {
            let _ = session.flush(memory, ctx.gsp);
            self.logs.flush(memory);
        }
        let State::Running(session) = core::mem::replace(&mut self.state, State::Off) else { return };
        self.state = State::PmSuspended(session);
        ctx.machine.gsp_sr = SrState::Suspended { level: params.new_level };
        ctx.gsp.set_mailbox(0, error::LIBOS_INTERRUPT_PROCESSOR_SUSPENDED);
        ctx.gsp.set_riscv_running(false);
    }

    /// booter_load restored WPR2: GSP-RM resumes its session.
    pub(crate) fn restore(&mut self, ctx: &mut GspCtx<'_>) {
        let SrState::Saved { level, .. } = core::mem::take(&mut ctx.machine.gsp_sr) else { return };
        let session = match core::mem::replace(&mut self.state, State::Off) {
            State::PmSuspended(session) => session,
            other => {
                self.state = other;
                self.fail(GspRmError::Resume { what: "restore without a suspended GSP-RM", value: 0 }, ctx, 0);
                return;
            }
        };
        ctx.gsp.set_riscv_running(true);
        if let Err(error) = check_resume_args(session.libos_args, level, ctx) {
            self.state = State::Running(session);
            self.fail(error, ctx, 0);
            return;
        }
        let mut session = session;
        session.reset_epoch = ctx.gsp.reset_epoch();
        session.init = Init::Done;
        session.post_event(RpcEvent::GspInitDone, NvStatus::NV_OK, &[], &mut self.faults.corrupt_next);
        self.logs.log(log::LogTask::Init, log::Msg::Resumed, &[]);
        self.logs.log(log::LogTask::Rm, log::Msg::InitDone, &[]);
        self.state = State::Running(session);
        self.service(ctx);
    }
}

/// RMARGS again: `srInitArguments` must describe this resume.
fn check_resume_args(libos_args: u64, level: u32, ctx: &GspCtx<'_>) -> Result<(), GspRmError> {
    let bad = |what, value| GspRmError::Resume { what, value };
    let memory = ctx.memory.ok_or(bad("no system memory", 0))?;
    let mut table = vec![0u8; LIBOS_INIT_ARGUMENTS_SIZE];
    if !memory.read(libos_args, &mut table) {
        return Err(bad("LIBOS arguments unreadable at resume", libos_args));
    }
    let size = core::mem::size_of::<LibosMemoryRegionInitArgument>();
    let rmargs = (0..LIBOS_INIT_ARGUMENTS_COUNT)
        .filter_map(|i| LibosMemoryRegionInitArgument::read_from_prefix(table.get(i * size..)?).ok())
        .map(|(arg, _)| arg)
        .find(|arg| arg.id8 == RMARGS_ID)
        .ok_or(bad("RMARGS missing at resume", 0))?;
    let mut raw = vec![0u8; core::mem::size_of::<GspArgumentsCached>()];
    if !memory.read(rmargs.pa, &mut raw) {
        return Err(bad("RMARGS unreadable at resume", rmargs.pa));
    }
    let args = GspArgumentsCached::read_from_bytes(&raw).map_err(|_| bad("RMARGS unreadable", rmargs.pa))?;
    let sr = args.sr_init_arguments;
    if sr.b_in_pm_transition != 1 {
        return Err(bad("srInitArguments.bInPMTransition is not 1 at resume", sr.b_in_pm_transition.into()));
    }
    if sr.old_level != level {
        return Err(bad("srInitArguments.oldLevel is not the suspend's newLevel", sr.old_level.into()));
    }
    if !matches!(sr.flags, GPU_STATE_FLAGS_PM_SUSPEND | GPU_STATE_FLAGS_PM_HIBERNATE) {
        return Err(bad("srInitArguments.flags is not GPU_STATE_FLAGS_PM_SUSPEND/_HIBERNATE", sr.flags.into()));
    }
    Ok(())
}
