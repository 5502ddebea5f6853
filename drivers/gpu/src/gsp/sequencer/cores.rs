//! The GSP core operations a `GSP_RUN_CPU_SEQUENCER` script asks the CPU for, on this GPU's
//! falcons: the [`SequencerCore`] the boot hands to [`super::run_sequencer`].
//!
//! Follows `kgspExecuteSequencerBuffer` (`kernel_gsp.c`: `CORE_RESET` is a falcon reset plus
//! `kflcnDisableCtxReq`, `CORE_START` a falcon start, `CORE_WAIT_FOR_HALT` a bounded halt wait)
//! and `kgspExecuteSequencerCommand_GA102` / `_TU102` for `CORE_RESUME`: reset the GSP (into
//! RISC-V on GA102 and later, a secure falcon reset on Turing), the LIBOS arguments into its
//! mailboxes, start SEC2 (whose RTOS reloads GSP-RM), wait for
//! `NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF`, SEC2 `MAILBOX0` must be 0, then (GA102
//! and later) `NV_PFALCON_FALCON_OS`, and the RISC-V core must be active.

use super::{CoreOpError, SequencerCore};
use crate::falcon::{Falcon, FalconError, Gsp, Sec2};
use crate::fwsec::frts::disable_ctx_req;
use crate::gsp::boot::booter::address_mailboxes;
use crate::gsp::boot::ClockRef;
use crate::gsp::commands::RM_DEFAULT_TIMEOUT_MS;
use crate::hal::FalconLayout;
use crate::hw::boot::NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF_VALUE_DONE;
use crate::hw::falcon::NV_PFALCON_FALCON_OS;
use crate::hw::gc6::NV_PGC6_BSI_SECURE_SCRATCH_14;
use crate::hw::RegisterIo;
use crate::platform::{wait_for, Clock};

/// The GSP (and SEC2, for a resume) as a sequencer sees them.
pub struct BootCore<'a, R: RegisterIo, C: Clock + ?Sized> {
    pub gsp: Falcon<&'a R, ClockRef<'a, C>, Gsp>,
    /// SEC2, where the chip has one (Turing to Ada).
    pub sec2: Option<Falcon<&'a R, ClockRef<'a, C>, Sec2>>,
    pub clock: &'a C,
    /// Bus address of the LIBOS arguments (the GSP mailboxes at resume).
    pub libos_args: u64,
    /// The boot binary's `appVersion` (`NV_PFALCON_FALCON_OS` at resume, GA102 and later).
    pub app_version: u32,
    /// GA102 layout: resume resets into RISC-V and writes `FALCON_OS`.
    pub layout: FalconLayout,
    /// Resumes done (for the boot report).
    pub resumes: u32,
}

fn failed(error: FalconError) -> CoreOpError {
    match error {
        FalconError::Timeout { what, after_ms, .. } => {
            CoreOpError::Timeout(crate::platform::Timeout { what, after_ms })
        }
        _ => CoreOpError::Failed("a GSP falcon step failed"),
    }
}

impl<R: RegisterIo, C: Clock + ?Sized> SequencerCore for BootCore<'_, R, C> {
    fn reset(&mut self) -> Result<(), CoreOpError> {
        self.gsp.reset().map_err(failed)?;
        disable_ctx_req(&self.gsp).map_err(failed)?;
        Ok(())
    }

    fn start(&mut self) -> Result<(), CoreOpError> {
        self.gsp.start();
        Ok(())
    }

    fn wait_for_halt(&mut self) -> Result<(), CoreOpError> {
        self.gsp.wait_for_halt(RM_DEFAULT_TIMEOUT_MS).map(|_| ()).map_err(failed)
    }

    fn resume(&mut self) -> Result<(), CoreOpError> {
        let sec2 = self.sec2.as_ref().ok_or(CoreOpError::Unsupported)?;
        if self.layout == FalconLayout::Ga102 {
            self.gsp.reset_into_riscv(true).map_err(failed)?;
        } else {
            // kflcnSecureReset_TU102: engine reset, scrubbing, falcon core.
            self.gsp.reset_engine().map_err(failed)?;
            self.gsp.wait_for_scrubbing().map_err(failed)?;
            self.gsp.select_falcon_core().map_err(failed)?;
        }
        self.gsp.write_mailboxes(address_mailboxes(self.libos_args));
        sec2.start();
        let io = *self.gsp.io();
        wait_for(self.clock, RM_DEFAULT_TIMEOUT_MS, "SEC2 to resume GSP-RM (BOOT_STAGE_3_HANDOFF)", || {
            let done = u32::from(NV_PGC6_BSI_SECURE_SCRATCH_14::read(io).boot_stage_3_handoff())
                == NV_PGC6_BSI_SECURE_SCRATCH_14_BOOT_STAGE_3_HANDOFF_VALUE_DONE;
            done.then_some(())
        })
        .map_err(CoreOpError::Timeout)?;
        if sec2.mailboxes().mailbox0 != 0 {
            return Err(CoreOpError::Failed("SEC2 MAILBOX0 is not 0 after resuming GSP-RM"));
        }
        if self.layout == FalconLayout::Ga102 {
            NV_PFALCON_FALCON_OS(self.app_version).write(io, self.gsp.unit().base);
        }
        if !self.gsp.is_riscv_active() {
            return Err(CoreOpError::Failed("the GSP RISC-V core is not active after the resume"));
        }
        self.resumes += 1;
        Ok(())
    }
}
