//! The falcon driver: reset, memory loads (PIO and DMA), heavy-secure boot parameters, start,
//! halt and mailboxes, for the falcon microcontrollers a chip's HAL lists (GSP, SEC2, and the
//! FSP on Hopper and Blackwell).
//!
//! Follows the behaviour of NVIDIA's `KernelFalcon` HALs in open-gpu-kernel-modules 535.261.03
//! (`src/nvidia/src/kernel/gpu/falcon/arch/{turing,ampere}/kernel_falcon_*.c`), the engine resets
//! of `kgspResetHw_*`/`ksec2ResetHw_*`, the loaders of `kernel_gsp_falcon_{tu102,ga102}.c`, and
//! the FSP EMEM access of `kern_fsp_gh100.c`. Registers are `crate::hw`'s declarations
//! (`hw::falcon`, `hw::engine`).
//!
//! A [`Falcon`] is generic over the register I/O (BAR0) and the clock; every wait is bounded by
//! the clock through [`crate::platform::wait_for`] and fails with a [`FalconError::Timeout`]
//! naming the engine and what it waited for. Arguments are checked before any register is
//! written; nothing read from a register can make the driver panic.
//!
//! Step by step, as RM runs a heavy-secure ucode:
//! ```text
//! falcon.reset()?;                                  // engine reset, scrubbing, falcon core
//! falcon.load_dma(&buffer, DmaTarget::CoherentSysmem, &[imem, dmem])?;   // or load_imem/load_dmem
//! falcon.program_brom(&BromParams::from_fwsec_v3(&desc))?;              // GA102 and later
//! let out = falcon.execute(boot_vector, Mailboxes::default(), timeout_ms)?;
//! ```

mod dma;
mod emem;
mod engine;
mod error;
mod hs;
mod pio;

#[cfg(test)]
mod tests;

pub use dma::{DmaSegment, DmaTarget, FalconMemory, DMA_BLOCK};
pub use engine::{Engine, Fsp, Gsp, HasEmem, HostBooted, Sec2};
pub use error::{engine_name, FalconError, Result};
pub use hs::{booter_signature_index, patch_signature, BromParams, HsSignatureLocation};
pub use pio::FALCON_BLOCK;

use crate::hal::{FalconLayout, Hal};
use crate::hw::engine::{FalconEngine, FalconUnit};
use crate::hw::falcon::{ga102, tu102, NV_PFALCON_FALCON_CPUCTL, NV_PFALCON_FALCON_CPUCTL_ALIAS};
use crate::hw::falcon::{
    NV_PFALCON_FALCON_BOOTVEC, NV_PFALCON_FALCON_IRQSCLR, NV_PFALCON_FALCON_IRQSTAT, NV_PFALCON_FALCON_MAILBOX0,
    NV_PFALCON_FALCON_MAILBOX1, NV_PFALCON_FALCON_RM,
};
use crate::hw::{pmc, RegisterIo};
use crate::platform::{wait_for, Clock};

/// Register reads between writes of an engine reset, so the reset propagates
/// (`FLCN_RESET_PROPAGATION_DELAY_COUNT` in RM's `falcon_common.h`).
pub const RESET_PROPAGATION_READS: u32 = 10;

/// How long to wait for `NV_PFALCON_FALCON_HWCFG2_RESET_READY` before resetting anyway. RM waits
/// 150 µs and then proceeds regardless, because hardware does not always set it
/// (`kflcnPreResetWait_GA10X`); one tick of our millisecond bound covers that.
pub const PRE_RESET_TIMEOUT_MS: u64 = 1;
/// Bound on Hopper's reset state machine reporting asserted/deasserted (RM allows 10 µs).
pub const RESET_STATUS_TIMEOUT_MS: u64 = 1;
/// Bound on IMEM/DMEM scrubbing after reset. Hardware takes microseconds; the bound only has to
/// catch an engine that never finishes.
pub const SCRUBBING_TIMEOUT_MS: u64 = 1_000;
/// Bound on the RISC-V boot configuration reporting VALID after a core switch.
pub const CORE_SWITCH_TIMEOUT_MS: u64 = 1_000;
/// Bound on one falcon DMA wait (queue space, or idle at the end).
pub const DMA_TIMEOUT_MS: u64 = 1_000;

/// The two falcon mailboxes: arguments in before a ucode starts, results out after it halts,
/// by each ucode's own convention.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mailboxes {
    pub mailbox0: u32,
    pub mailbox1: u32,
}

/// One falcon of one GPU: engine `E` ([`Gsp`], [`Sec2`], [`Fsp`]), its registers (through
/// `io`), its place in BAR0 (`unit`) and the chip's choices (`hal`). Owns nothing on the GPU;
/// callers serialise steps on one engine.
pub struct Falcon<R: RegisterIo, C: Clock, E: Engine> {
    io: R,
    clock: C,
    hal: &'static Hal,
    unit: FalconUnit,
    engine: core::marker::PhantomData<E>,
}

impl<R: RegisterIo, C: Clock, E: Engine> Falcon<R, C, E> {
    /// The falcon `E` as the chip's HAL places it; [`FalconError::NotPresent`] when the HAL
    /// lists none (SEC2 on Hopper, the FSP before Hopper).
    pub fn new(io: R, clock: C, hal: &'static Hal) -> Result<Self> {
        let engine = E::ENGINE;
        let unit = *hal.falcon(engine).ok_or(FalconError::NotPresent { engine })?;
        Ok(Self { io, clock, hal, unit, engine: core::marker::PhantomData })
    }

    /// Which engine this is.
    pub fn engine(&self) -> FalconEngine {
        E::ENGINE
    }

    /// Where the engine's registers are.
    pub fn unit(&self) -> &FalconUnit {
        &self.unit
    }

    /// The register I/O this falcon uses.
    pub fn io(&self) -> &R {
        &self.io
    }

    fn base(&self) -> u32 {
        self.unit.base
    }

    fn layout(&self) -> FalconLayout {
        self.hal.falcon_layout
    }

    fn wait<T>(&self, timeout_ms: u64, what: &'static str, done: impl FnMut() -> Option<T>) -> Result<T> {
        wait_for(&self.clock, timeout_ms, what, done).map_err(FalconError::timeout(self.engine()))
    }

    fn unsupported(&self, what: &'static str) -> FalconError {
        FalconError::Unsupported { engine: self.engine(), what }
    }

    // ---------------------------------------------------------------------------------------
    // State queries.

    /// Whether the falcon CPU is halted (`CPUCTL_HALTED`).
    pub fn is_halted(&self) -> bool {
        NV_PFALCON_FALCON_CPUCTL::read(&self.io, self.base()).halted()
    }

    /// Whether scrubbing after reset has finished.
    pub fn is_scrubbing_done(&self) -> bool {
        (self.hal.falcon_scrubbing_done)(&self.io, self.base())
    }

    /// Whether the engine has a RISC-V core (`HWCFG2_RISCV`, same bit in both layouts).
    pub fn has_riscv(&self) -> bool {
        match self.layout() {
            FalconLayout::Tu102 => tu102::NV_PFALCON_FALCON_HWCFG2::read(&self.io, self.base()).riscv(),
            FalconLayout::Ga102 => ga102::NV_PFALCON_FALCON_HWCFG2::read(&self.io, self.base()).riscv(),
        }
    }

    /// Whether the engine's RISC-V core is running (false where the driver knows of none).
    pub fn is_riscv_active(&self) -> bool {
        match self.unit.riscv_base {
            Some(riscv_base) => (self.hal.riscv_active)(&self.io, riscv_base),
            None => false,
        }
    }

    /// IMEM size in bytes, as `HWCFG_IMEM_SIZE` (256-byte blocks) reports it.
    pub fn imem_size(&self) -> u32 {
        let blocks = crate::hw::falcon::NV_PFALCON_FALCON_HWCFG::read(&self.io, self.base()).imem_size();
        u32::from(blocks) * FALCON_BLOCK
    }

    /// Reads both mailboxes, whatever the CPU's state.
    pub fn mailboxes(&self) -> Mailboxes {
        Mailboxes {
            mailbox0: NV_PFALCON_FALCON_MAILBOX0::read(&self.io, self.base()).raw(),
            mailbox1: NV_PFALCON_FALCON_MAILBOX1::read(&self.io, self.base()).raw(),
        }
    }

    /// The mailboxes as a finished ucode's results: [`FalconError::NotHalted`] while it runs.
    pub fn results(&self) -> Result<Mailboxes> {
        if !self.is_halted() {
            return Err(FalconError::NotHalted { engine: self.engine() });
        }
        Ok(self.mailboxes())
    }

    /// Pending interrupts.
    pub fn interrupt_status(&self) -> NV_PFALCON_FALCON_IRQSTAT {
        NV_PFALCON_FALCON_IRQSTAT::read(&self.io, self.base())
    }

    /// Clears the interrupts whose bits are set in `which`.
    pub fn clear_interrupts(&self, which: NV_PFALCON_FALCON_IRQSCLR) {
        which.write(&self.io, self.base());
    }

    /// Clears the HALT and SWGEN0 interrupts a finished ucode leaves pending.
    pub fn clear_halt_interrupts(&self) {
        self.clear_interrupts(
            NV_PFALCON_FALCON_IRQSCLR::default()
                .with(NV_PFALCON_FALCON_IRQSCLR::HALT, true)
                .with(NV_PFALCON_FALCON_IRQSCLR::SWGEN0, true),
        );
    }
}

/// What the host does only to the engines it boots (GSP, SEC2).
impl<R: RegisterIo, C: Clock, E: HostBooted> Falcon<R, C, E> {
    // ---------------------------------------------------------------------------------------
    // Reset and core selection.

    /// Resets the engine and leaves it ready to load falcon ucode: the engine reset (per
    /// family), IMEM/DMEM scrubbing finished, the falcon core selected where the engine also has
    /// a RISC-V core, and `NV_PFALCON_FALCON_RM` holding `NV_PMC_BOOT_0` (ucodes such as the
    /// booter read the RM's identity from it). This is what RM's `kflcnReset_TU102` amounts to
    /// for engines without a PMC enable bit (GSP, SEC2), done once instead of twice.
    ///
    /// The FSP is not reset by the driver (it is the root of trust and boots itself): a
    /// `Falcon<_, _, Fsp>` has no `reset`.
    pub fn reset(&self) -> Result<()> {
        self.reset_engine()?;
        self.wait_for_scrubbing()?;
        self.select_falcon_core()?;
        let boot0 = pmc::NV_PMC_BOOT_0::read(&self.io).raw();
        NV_PFALCON_FALCON_RM(boot0).write(&self.io, self.base());
        Ok(())
    }

    /// Resets the engine into its RISC-V core (GA102 and later), as RM's `_kgspResetIntoRiscv`:
    /// the engine reset, scrubbing, then the boot configuration selecting RISC-V with the boot
    /// ROM fetching the image when `brfetch`.
    pub fn reset_into_riscv(&self, brfetch: bool) -> Result<()> {
        self.riscv_bcr_base()?;
        self.reset_engine()?;
        self.wait_for_scrubbing()?;
        self.select_riscv_core(brfetch)
    }

    /// The engine reset alone: assert and release the per-engine `NV_P*_FALCON_ENGINE_RESET`,
    /// with RM's pre-reset wait on GA10x/Ada and Hopper's reset-status handshake.
    pub fn reset_engine(&self) -> Result<()> {
        let engine = self.engine();
        let reset_offset = E::ENGINE_RESET;
        log::debug!("{} falcon: engine reset", engine_name(engine));

        if self.hal.falcon_pre_reset_wait {
            self.pre_reset_wait();
        }

        let with_status = E::RESET_STATUS_HANDSHAKE && self.hal.gsp_reset_status;
        if with_status {
            // kgspResetHw_GH100: the reset state machine reports each transition.
            use crate::hw::engine::gh100::{ResetStatus, NV_PGSP_FALCON_ENGINE as Reg};
            Reg::modify(&self.io, |r| r.with(Reg::RESET, true));
            self.wait(RESET_STATUS_TIMEOUT_MS, "engine reset to assert", || {
                (Reg::read(&self.io).reset_status() == Ok(ResetStatus::Asserted)).then_some(())
            })?;
            Reg::modify(&self.io, |r| r.with(Reg::RESET, false));
            self.wait(RESET_STATUS_TIMEOUT_MS, "engine reset to deassert", || {
                (Reg::read(&self.io).reset_status() == Ok(ResetStatus::Deasserted)).then_some(())
            })?;
        } else {
            // kgspResetHw_TU102 / ksec2ResetHw_TU102: both engines' registers have one layout.
            use crate::hw::engine::NV_PGSP_FALCON_ENGINE as Reg;
            let reset_bit = Reg::RESET.bits;
            for assert in [true, false] {
                let value = reset_bit.insert(self.io.read32(reset_offset), assert as u32);
                self.io.write32(reset_offset, value);
                for _ in 0..RESET_PROPAGATION_READS {
                    self.io.read32(reset_offset);
                }
            }
        }
        Ok(())
    }

    /// Waits (briefly) for `HWCFG2_RESET_READY`; proceeds either way, as RM does.
    fn pre_reset_wait(&self) {
        let ready = self.wait(PRE_RESET_TIMEOUT_MS, "reset ready", || {
            ga102::NV_PFALCON_FALCON_HWCFG2::read(&self.io, self.base()).reset_ready().then_some(())
        });
        if ready.is_err() {
            log::debug!("{} falcon: RESET_READY not set, resetting anyway", engine_name(self.engine()));
        }
    }

    /// Waits until IMEM and DMEM scrubbing after reset has finished (DMACTL on Turing/GA100,
    /// HWCFG2 on GA102 and later, as the HAL chooses).
    pub fn wait_for_scrubbing(&self) -> Result<()> {
        self.wait(SCRUBBING_TIMEOUT_MS, "memory scrubbing", || self.is_scrubbing_done().then_some(()))
    }

    /// Makes the falcon core the one that runs, where the engine also has a RISC-V core
    /// (`kflcnSwitchToFalcon_GA10X`). Nothing to do on Turing/GA100 or on falcon-only engines.
    pub fn select_falcon_core(&self) -> Result<()> {
        if self.layout() == FalconLayout::Tu102 {
            return Ok(());
        }
        let Some(riscv_base) = self.unit.riscv_base else { return Ok(()) };
        if !self.has_riscv() {
            return Ok(());
        }
        use ga102::{CoreSelect, NV_PRISCV_RISCV_BCR_CTRL as Bcr};
        if Bcr::read(&self.io, riscv_base).core_select() == Ok(CoreSelect::Falcon) {
            return Ok(());
        }
        Bcr::default().with(Bcr::CORE_SELECT, CoreSelect::Falcon).write(&self.io, riscv_base);
        self.wait(CORE_SWITCH_TIMEOUT_MS, "switch to the falcon core", || {
            Bcr::read(&self.io, riscv_base).valid().then_some(())
        })
    }

    /// Selects the RISC-V core for the next boot (`kflcnRiscvProgramBcr_GA102`); the boot ROM
    /// fetches the image itself when `brfetch`.
    pub fn select_riscv_core(&self, brfetch: bool) -> Result<()> {
        let riscv_base = self.riscv_bcr_base()?;
        use ga102::{CoreSelect, NV_PRISCV_RISCV_BCR_CTRL as Bcr};
        Bcr::default()
            .with(Bcr::CORE_SELECT, CoreSelect::Riscv)
            .with(Bcr::VALID, true)
            .with(Bcr::BRFETCH, brfetch)
            .write(&self.io, riscv_base);
        Ok(())
    }

    /// The RISC-V base, for the boot configuration registers GA102 and later have.
    fn riscv_bcr_base(&self) -> Result<u32> {
        match (self.layout(), self.unit.riscv_base) {
            (FalconLayout::Ga102, Some(base)) => Ok(base),
            _ => Err(self.unsupported("RISC-V boot configuration (GA102 and later)")),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Start, halt, mailboxes, interrupts.

    /// Sets the IMEM address the CPU starts at.
    pub fn set_boot_vector(&self, address: u32) {
        NV_PFALCON_FALCON_BOOTVEC(address).write(&self.io, self.base());
    }

    /// Writes both mailboxes.
    pub fn write_mailboxes(&self, mailboxes: Mailboxes) {
        NV_PFALCON_FALCON_MAILBOX0(mailboxes.mailbox0).write(&self.io, self.base());
        NV_PFALCON_FALCON_MAILBOX1(mailboxes.mailbox1).write(&self.io, self.base());
    }

    /// Starts the CPU at the boot vector: through `CPUCTL_ALIAS` when `CPUCTL_ALIAS_EN` says
    /// CPUCTL is locked, else through `CPUCTL` (`kflcnStartCpu_TU102`).
    pub fn start(&self) {
        if NV_PFALCON_FALCON_CPUCTL::read(&self.io, self.base()).alias_en() {
            NV_PFALCON_FALCON_CPUCTL_ALIAS::default()
                .with(NV_PFALCON_FALCON_CPUCTL_ALIAS::STARTCPU, true)
                .write(&self.io, self.base());
        } else {
            NV_PFALCON_FALCON_CPUCTL::default()
                .with(NV_PFALCON_FALCON_CPUCTL::STARTCPU, true)
                .write(&self.io, self.base());
        }
    }

    /// Waits until the CPU halts, then returns the mailboxes.
    pub fn wait_for_halt(&self, timeout_ms: u64) -> Result<Mailboxes> {
        self.wait(timeout_ms, "halt", || self.is_halted().then_some(()))?;
        Ok(self.mailboxes())
    }

    /// Runs loaded ucode to completion, as the tail of RM's `kgspExecuteHsFalcon_*`: boot vector,
    /// mailboxes in, start, wait for halt, mailboxes out.
    pub fn execute(&self, boot_vector: u32, mailboxes: Mailboxes, timeout_ms: u64) -> Result<Mailboxes> {
        self.set_boot_vector(boot_vector);
        self.write_mailboxes(mailboxes);
        self.start();
        self.wait_for_halt(timeout_ms)
    }
}
