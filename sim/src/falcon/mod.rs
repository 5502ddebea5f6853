//! Falcon engines (GSP, SEC2, FSP) as the driver sees them through BAR0.
//!
//! Registers follow `nvgpu::hw::falcon` (`dev_falcon_v4.h`, `dev_fbif_v4.h`, `dev_riscv_pri.h`
//! of TU102/GA102/GH100), `nvgpu::hw::engine` (engine reset, FSP EMEM and queues) and
//! `nvgpu::hw::falcon2` (the boot ROM registers, `dev_falcon_second_pri.h`). Behaviour
//! follows what RM (`kernel_falcon_tu102.c`, `kernel_falcon_ga102.c`, `kernel_gsp_falcon_tu102.c`,
//! `kernel_gsp_falcon_ga102.c`) and Nova rely on:
//!
//! - **Reset.** `NV_P*_FALCON_ENGINE_RESET` = 1 holds the engine in reset: every other register
//!   of the falcon then reads [`POISON`] and records an error, IMEM/DMEM/tags are cleared and the
//!   CPU stops. Writing 0 releases it; memory scrubbing then reads pending (TU102 layout:
//!   `DMACTL_DMEM/IMEM_SCRUBBING`; GA102 layout: `HWCFG2_MEM_SCRUBBING`) for
//!   `ModelConfig::scrub_polls` reads of the falcon's registers, and IMEM/DMEM access or a start
//!   before that is refused. Hopper and later also report `RESET_STATUS`. `HWCFG2_RESET_READY`
//!   always reads 1 (the model's DMA is never in flight).
//! - **PIO.** `IMEMC(i)`/`IMEMD(i)`/`IMEMT(i)` (4 ports) and `DMEMC(i)`/`DMEMD(i)` (8 ports):
//!   address = `BLK * 256 + OFFS * 4`; `AINCW` advances it by 4 on each data write; `DMEMC_AINCR`
//!   (25:25, TU102 header; the GA102 header omits it and says nothing of reads, so either
//!   `AINCR` or `AINCW` advances GA102 reads) on each data read; IMEM reads never advance.
//!   `IMEMT` tags the 256-byte block the port's address is in, as RM writes it before each
//!   block; `IMEMC_SECURE` marks the blocks written. Secure IMEM cannot be read back. Accesses
//!   past the memory's size (`HWCFG`) are refused and recorded.
//! - **DMA.** A `DMATRFCMD` write moves 256 bytes between falcon memory at `DMATRFMOFFS` and
//!   system memory at `(DMATRFBASE1 << 40 | DMATRFBASE << 8) + DMATRFFBOFFS`, at once (`IDLE`
//!   reads 1, `FULL` 0). IMEM blocks take the tag `DMATRFFBOFFS >> 8` (RM passes the IMEM
//!   virtual address there) and are secure when `SEC` is non-zero. Refused (recorded, nothing
//!   moved): sizes other than 256 B, unaligned offsets, transfers past the memory's end,
//!   `DMACTL_REQUIRE_CTX` set, `FBIF_CTL_ALLOW_PHYS_NO_CTX` clear, or `FBIF_TRANSCFG(ctxdma)`
//!   other than physical system memory (coherent or non-coherent: the model has no caches). After reset `REQUIRE_CTX` reads 1 and the FBIF
//!   registers 0, so a driver must set them up as RM's `kflcnDisableCtxReq` does.
//! - **Start.** `CPUCTL_STARTCPU` (when `CPUCTL_ALIAS_EN` is clear) or `CPUCTL_ALIAS_STARTCPU`
//!   (when it is set) runs the ucode at `BOOTVEC` to completion: see [`crate::ucode`] for the
//!   checks and [`HaltCode`] for what `MAILBOX0` holds afterwards; `CPUCTL_HALTED` and
//!   `IRQSTAT_HALT` are then set. A start through the wrong register is ignored and recorded. The
//!   falcon must be reset between runs (and after power on, when the boot firmware had used it).
//!   With `BCR_CTRL_CORE_SELECT` = RISC-V (GA102 layout), a falcon start halts with
//!   [`HaltCode::WrongCore`]; `NV_PRISCV_RISCV_CPUCTL_STARTCPU` starts the RISC-V core, which
//!   finds no image it recognises and halts with [`HaltCode::RiscvNoImage`]. GSP's RISC-V core
//!   runs GSP-RM only when a booter (or the FSP chain) starts it: `NV_PRISCV_RISCV_CPUCTL_ACTIVE_STAT`
//!   (GA102 layout) / `NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS_ACTIVE_STAT` (Turing) then read 1
//!   and `HALTED` 0, until GSP-RM stops or the engine is reset ([`crate::gsp_rm`]).
//! - **NVIDIA's generic falcon bootloader** (Turing, GA100): a start at a known loader's entry
//!   runs its copies (DMA through its `ctxDma`) and goes on at the entry of what it loaded
//!   ([`crate::generic_bl`]).
//! - **Booters on SEC2.** A SEC2 start runs NVIDIA's booter images recognised by fingerprint, or
//!   the model booter ([`crate::booter`]); `MAILBOX0` holds the booter's result. While GSP-RM
//!   waits for `CORE_RESUME`, a SEC2 start (no reset, as RM does it) resumes GSP-RM instead.
//! - **FSP** (Hopper, Blackwell): runs its own firmware from power on. The driver reaches it
//!   through EMEM (`NV_PFSP_EMEMC(i)`/`EMEMD(i)`, 8 ports, same addressing as DMEM with `AINCW`
//!   and `AINCR`) and the queue head/tail registers; its IMEM/DMEM ports, DMA and start are
//!   privileged and refused. A write of `NV_PFSP_QUEUE_HEAD(0)` (RM's channel) makes the FSP take
//!   the packet from HEAD through the word at TAIL and answer in the message queue
//!   ([`crate::gsp_rm::fsp`]); with TAIL below HEAD there is no packet and nothing happens.
//!
//! Sizes are the model's choices: IMEM and DMEM 64 KiB on every engine (`HWCFG` says so:
//! `IMEM_SIZE` 8:0 and, as nouveau reads it, DMEM size 17:9, both in 256-byte blocks); FSP EMEM
//! 8 KiB (eight `FSP_EMEM_CHANNEL_RM_SIZE` channels).

use alloc::vec;
use alloc::vec::Vec;

use nvgpu::hal::FalconLayout;
use nvgpu::hw::engine::{self, FalconEngine, FalconUnit, FSP_EMEM_CHANNEL_RM_SIZE, NV_PFSP_EMEMC__SIZE_1};
use nvgpu::hw::falcon::{
    self as hwf, ga102, gh100, tu102, DmaTransferSize, FbifMemType, FbifTarget, HWCFG_DMEM_SIZE_MASK,
    HWCFG_DMEM_SIZE_SHIFT, NV_PFALCON_FALCON_CPUCTL, NV_PFALCON_FALCON_DMATRFCMD, NV_PFALCON_FBIF_TRANSCFG__SIZE_1,
};
use nvgpu::hw::falcon2::{
    self as f2, ModSelAlgo, NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID, NV_PFALCON2_FALCON_BROM_ENGIDMASK,
    NV_PFALCON2_FALCON_BROM_PARAADDR, NV_PFALCON2_FALCON_MOD_SEL,
};

use crate::booter::{self, BooterKind, BooterOutcome, BromState, LoadedUcode, PeerGsp};
use crate::error::{AccessKind, DmaError, FalconError, FalconMemory, ModelError, POISON};
use crate::fwsec::{self, FwsecContext, FwsecEffect};
use crate::generic_bl;
use crate::gpu::{ChipEvent, ErrorLog, Machine};
use crate::memory::SystemMemory;
mod dma;
mod pio;
mod riscv;
mod run;

use crate::ucode::{self, HaltCode, APPLICATION_FWSEC, FLAG_DEBUG_SIGNED, FLAG_HS, FLAG_PKC, SIGNATURE_SIZE};

/// Bytes of a falcon memory block (and of a DMA transfer).
pub const BLOCK: u32 = 256;
/// IMEM of every model falcon.
pub const IMEM_SIZE: u32 = 64 * 1024;
/// DMEM of every model falcon.
pub const DMEM_SIZE: u32 = 64 * 1024;
/// EMEM of the model FSP.
pub const FSP_EMEM_SIZE: u32 = NV_PFSP_EMEMC__SIZE_1 * FSP_EMEM_CHANNEL_RM_SIZE as u32;
/// Elements of `NV_PFALCON2_FALCON_BROM_PARAADDR(i)` the model keeps (RM writes index 0 only;
/// the header gives no `__SIZE_1`).
const BROM_PARAADDR_MODELLED: u32 = 4;
/// IMEM ports (`IMEMC(i)` stride 16 reaches `DMEMC(0)` at the fifth).
pub const IMEM_PORTS: usize = 4;
/// DMEM ports the model implements.
pub const DMEM_PORTS: usize = 8;

/// Bytes of the falcon register window from the engine base (the engine reset register at
/// 0x3c0 is inside it).
const CORE_WINDOW: u32 = 0x400;
/// Bytes of the FBIF window.
const FBIF_WINDOW: u32 = 0x100;
/// Bytes of the RISC-V window.
const RISCV_WINDOW: u32 = 0x1000;

/// Offsets in the FBIF window: `TRANSCFG(i)` and `CTL`.
const FBIF_CTL: u32 = hwf::NV_PFALCON_FBIF_CTL::OFFSET;

/// One falcon engine the model has, and how it is wired.
#[derive(Clone, Copy, Debug)]
pub struct FalconSpec {
    /// Engine and bases as the chip's HAL lists them.
    pub unit: FalconUnit,
    pub layout: FalconLayout,
    /// Whether the engine reset reports its state (`NV_PFALCON_FALCON_ENGINE_RESET_STATUS`).
    pub reports_reset_status: bool,
    /// BAR0 offset of the engine's FBIF (GSP and SEC2 have one even where the HAL does not use
    /// it).
    pub fbif_base: Option<u32>,
    /// BAR0 offset of `NV_P*_FALCON_ENGINE`, where the driver resets the engine.
    pub engine_reset: Option<u32>,
    /// `HWCFG2_RISCV`: the engine has a RISC-V core (and, on GA102 layout, `BCR_CTRL`).
    pub has_riscv_core: bool,
    /// The FSP: its firmware owns the CPU and memories; the driver uses EMEM and queues.
    pub fsp_owned: bool,
    /// Polls after reset before scrubbing is done.
    pub scrub_polls: u32,
}

impl FalconSpec {
    /// One engine of a chip as the model's silicon table places it, wired as the hardware has it.
    pub fn for_unit(unit: FalconUnit, silicon: &crate::silicon::Silicon, scrub_polls: u32) -> Self {
        let (fbif_base, engine_reset) = match unit.engine {
            FalconEngine::Gsp => (Some(engine::NV_PGSP_FBIF_BASE), Some(engine::NV_PGSP_FALCON_ENGINE::OFFSET)),
            FalconEngine::Sec2 => (Some(engine::NV_PSEC_FBIF_BASE), Some(engine::NV_PSEC_FALCON_ENGINE::OFFSET)),
            FalconEngine::Fsp => (None, None),
        };
        Self {
            unit,
            layout: silicon.falcon_layout,
            reports_reset_status: silicon.falcon_reset_status,
            fbif_base,
            engine_reset,
            has_riscv_core: unit.riscv_base.is_some(),
            fsp_owned: unit.engine == FalconEngine::Fsp,
            scrub_polls,
        }
    }

    fn has_boot_rom_registers(&self) -> bool {
        self.layout == FalconLayout::Ga102 && self.unit.riscv_base.is_some()
    }
}

/// Everything [`Falcon`] needs from the rest of the GPU while handling one access.
pub(crate) struct Env<'a> {
    pub log: &'a mut ErrorLog,
    pub memory: Option<&'a (dyn SystemMemory + Send)>,
    pub machine: &'a mut Machine,
    /// GSP's state, for a booter running on SEC2 (`None` for other engines' accesses).
    pub gsp: Option<PeerGsp>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Port {
    address: u32,
    aincw: bool,
    aincr: bool,
    secure: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct ImemBlock {
    /// Loaded since the last reset.
    valid: bool,
    tag: u16,
    secure: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cpu {
    /// Not started since reset.
    Stopped,
    /// Ran to completion (or was refused) and halted.
    Halted,
    /// The FSP: running its own firmware.
    Running,
}

/// One model falcon.
pub(crate) struct Falcon {
    spec: FalconSpec,
    imem: Vec<u8>,
    blocks: Vec<ImemBlock>,
    dmem: Vec<u8>,
    emem: Vec<u8>,
    imem_ports: [Port; IMEM_PORTS],
    dmem_ports: [Port; DMEM_PORTS],
    emem_ports: [Port; NV_PFSP_EMEMC__SIZE_1 as usize],
    /// FSP queue registers: command head/tail, message head/tail, per port.
    queues: [[u32; 4]; NV_PFSP_EMEMC__SIZE_1 as usize],
    mailbox: [u32; 2],
    os: u32,
    rm: u32,
    debuginfo: u32,
    bootvec: u32,
    irqstat: u32,
    irqmask: u32,
    irqdest: u32,
    require_ctx: bool,
    dma_base: u32,
    dma_base1: u32,
    dma_moffs: u32,
    dma_fboffs: u32,
    dma_cmd: u32,
    cpu: Cpu,
    alias_en: bool,
    ran_since_reset: bool,
    in_reset: bool,
    scrub_polls_left: u32,
    fbif_transcfg: [u32; NV_PFALCON_FBIF_TRANSCFG__SIZE_1 as usize],
    fbif_ctl: u32,
    scratch_group_2: [u32; 4],
    riscv: Riscv,
    brom_mod_sel: u32,
    brom_ucode_id: u32,
    brom_engid_mask: u32,
    brom_paraaddr: [u32; BROM_PARAADDR_MODELLED as usize],
    /// Engine resets so far (GSP-RM notices its core was reset).
    reset_epoch: u32,
}

#[derive(Clone, Copy, Debug)]
struct Riscv {
    core_select_riscv: bool,
    brfetch: bool,
    valid: bool,
    valid_after_polls: u32,
    halted: bool,
    /// GSP-RM (or another image) runs on the core: `ACTIVE_STAT`.
    running: bool,
    irqmask: u32,
    irqdest: u32,
    bcr_dmacfg: u32,
    bcr_dmaaddr: [u32; 6],
}

impl Riscv {
    /// Reset values: `BCR_CTRL` CORE_SELECT FALCON, VALID FALSE, BRFETCH TRUE (GA102
    /// `dev_riscv_pri.h` initial values); CPUCTL HALTED (GH100 initial value).
    const POWER_ON: Riscv = Riscv {
        core_select_riscv: false,
        brfetch: true,
        valid: false,
        valid_after_polls: 0,
        halted: true,
        running: false,
        irqmask: 0,
        irqdest: 0,
        bcr_dmacfg: 0,
        bcr_dmaaddr: [0; 6],
    };
}

/// `Some(value)` when `value` sets bits outside `defined`. Callers include a register's read-only
/// fields in `defined`: drivers write them back in read-modify-writes, and hardware ignores them.
fn undefined_bits(value: u32, defined: u32) -> Option<u32> {
    (value & !defined != 0).then_some(value)
}

impl Falcon {
    pub fn new(spec: FalconSpec) -> Self {
        let fsp = spec.fsp_owned;
        Self {
            spec,
            imem: vec![0; IMEM_SIZE as usize],
            blocks: vec![ImemBlock::default(); (IMEM_SIZE / BLOCK) as usize],
            dmem: vec![0; DMEM_SIZE as usize],
            emem: if fsp { vec![0; FSP_EMEM_SIZE as usize] } else { Vec::new() },
            imem_ports: [Port::default(); IMEM_PORTS],
            dmem_ports: [Port::default(); DMEM_PORTS],
            emem_ports: [Port::default(); NV_PFSP_EMEMC__SIZE_1 as usize],
            queues: [[0; 4]; NV_PFSP_EMEMC__SIZE_1 as usize],
            mailbox: [0; 2],
            os: 0,
            rm: 0,
            debuginfo: 0,
            bootvec: 0,
            irqstat: 0,
            irqmask: 0,
            irqdest: 0,
            require_ctx: true,
            dma_base: 0,
            dma_base1: 0,
            dma_moffs: 0,
            dma_fboffs: 0,
            dma_cmd: 0,
            // Power on: the FSP runs its firmware; GSP and SEC2 are halted as the boot firmware
            // (devinit, FWSEC-SB) left them, and need a reset before the driver uses them.
            cpu: if fsp { Cpu::Running } else { Cpu::Halted },
            alias_en: false,
            ran_since_reset: !fsp,
            in_reset: false,
            scrub_polls_left: 0,
            fbif_transcfg: [0; NV_PFALCON_FBIF_TRANSCFG__SIZE_1 as usize],
            fbif_ctl: 0,
            scratch_group_2: [0; 4],
            riscv: Riscv::POWER_ON,
            brom_mod_sel: 0,
            brom_ucode_id: 0,
            brom_engid_mask: 0,
            brom_paraaddr: [0; BROM_PARAADDR_MODELLED as usize],
            reset_epoch: 0,
        }
    }

    pub fn engine(&self) -> FalconEngine {
        self.spec.unit.engine
    }

    fn base(&self) -> u32 {
        self.spec.unit.base
    }

    fn record(&self, log: &mut ErrorLog, error: FalconError) {
        log.record(ModelError::Falcon { engine: self.engine(), error });
    }

    /// Whether `offset` falls in one of this falcon's register windows.
    pub fn claims(&self, offset: u32) -> bool {
        let within = |base: u32, len: u32| offset >= base && offset - base < len;
        within(self.base(), CORE_WINDOW)
            || self.spec.fbif_base.is_some_and(|b| within(b, FBIF_WINDOW))
            || self.spec.unit.riscv_base.is_some_and(|b| within(b, RISCV_WINDOW))
            || (self.spec.fsp_owned && (self.emem_port(offset).is_some() || self.queue_register(offset).is_some()))
    }

    fn emem_port(&self, offset: u32) -> Option<(usize, bool)> {
        let first = engine::NV_PFSP_EMEMC::OFFSET;
        let stride = engine::NV_PFSP_EMEMC::STRIDE;
        let rel = offset.checked_sub(first)?;
        let port = (rel / stride) as usize;
        if port >= self.emem_ports.len() {
            return None;
        }
        match rel % stride {
            0 => Some((port, false)),
            r if r == engine::NV_PFSP_EMEMD::OFFSET - first => Some((port, true)),
            _ => None,
        }
    }

    /// (port, which) for the FSP queue registers: 0 QUEUE_HEAD, 1 QUEUE_TAIL, 2 MSGQ_HEAD, 3
    /// MSGQ_TAIL.
    fn queue_register(&self, offset: u32) -> Option<(usize, usize)> {
        let arrays = [
            (engine::NV_PFSP_QUEUE_HEAD::OFFSET, engine::NV_PFSP_QUEUE_HEAD::STRIDE),
            (engine::NV_PFSP_QUEUE_TAIL::OFFSET, engine::NV_PFSP_QUEUE_TAIL::STRIDE),
            (engine::NV_PFSP_MSGQ_HEAD::OFFSET, engine::NV_PFSP_MSGQ_HEAD::STRIDE),
            (engine::NV_PFSP_MSGQ_TAIL::OFFSET, engine::NV_PFSP_MSGQ_TAIL::STRIDE),
        ];
        arrays.iter().enumerate().find_map(|(which, &(first, stride))| {
            let rel = offset.checked_sub(first)?;
            let port = (rel / stride) as usize;
            (rel % stride == 0 && port < self.queues.len()).then_some((port, which))
        })
    }

    // -----------------------------------------------------------------------------------------
    // Reset and scrubbing.

    fn scrubbing(&self) -> bool {
        self.scrub_polls_left > 0
    }

    /// One poll of the falcon's registers: pending work advances.
    fn tick(&mut self) {
        self.scrub_polls_left = self.scrub_polls_left.saturating_sub(1);
        if self.riscv.valid_after_polls > 0 {
            self.riscv.valid_after_polls -= 1;
            if self.riscv.valid_after_polls == 0 {
                self.riscv.valid = true;
            }
        }
    }

    fn enter_reset(&mut self) {
        self.in_reset = true;
        self.imem.fill(0);
        self.dmem.fill(0);
        self.blocks.fill(ImemBlock::default());
        self.imem_ports = [Port::default(); IMEM_PORTS];
        self.dmem_ports = [Port::default(); DMEM_PORTS];
        self.mailbox = [0; 2];
        self.os = 0;
        self.debuginfo = 0;
        self.bootvec = 0;
        self.irqstat = 0;
        self.irqmask = 0;
        self.irqdest = 0;
        self.require_ctx = true;
        self.dma_base = 0;
        self.dma_base1 = 0;
        self.dma_moffs = 0;
        self.dma_fboffs = 0;
        self.dma_cmd = 0;
        self.cpu = Cpu::Stopped;
        self.alias_en = false;
        self.ran_since_reset = false;
        self.fbif_transcfg = [0; NV_PFALCON_FBIF_TRANSCFG__SIZE_1 as usize];
        self.fbif_ctl = 0;
        self.brom_mod_sel = 0;
        self.brom_ucode_id = 0;
        self.brom_engid_mask = 0;
        self.brom_paraaddr = [0; BROM_PARAADDR_MODELLED as usize];
        // BCR_CTRL survives an engine reset (RM switches the core back after every reset); the
        // RISC-V CPU stops.
        self.riscv.halted = true;
        self.riscv.running = false;
        self.reset_epoch = self.reset_epoch.wrapping_add(1);
    }

    fn leave_reset(&mut self) {
        self.in_reset = false;
        self.scrub_polls_left = self.spec.scrub_polls;
    }

    fn engine_register(&self) -> u32 {
        if self.spec.reports_reset_status {
            use engine::gh100::{ResetStatus, NV_PGSP_FALCON_ENGINE as E};
            let status = if self.in_reset { ResetStatus::Asserted } else { ResetStatus::Deasserted };
            E::default().with(E::RESET, self.in_reset).with(E::RESET_STATUS, status).raw()
        } else {
            use engine::NV_PGSP_FALCON_ENGINE as E;
            E::default().with(E::RESET, self.in_reset).raw()
        }
    }

    fn write_engine_register(&mut self, value: u32, log: &mut ErrorLog) {
        use engine::NV_PGSP_FALCON_ENGINE as E;
        // Read-only fields (Hopper's RESET_STATUS) come back in read-modify-writes; ignored.
        let mut defined = E::RESET.bits.mask();
        if self.spec.reports_reset_status {
            defined |= engine::gh100::NV_PGSP_FALCON_ENGINE::RESET_STATUS.bits.mask();
        }
        if let Some(value) = undefined_bits(value, defined) {
            self.record(log, FalconError::UndefinedBits { register: "NV_P*_FALCON_ENGINE", value });
        }
        let reset = E::from_raw(value).reset();
        match (self.in_reset, reset) {
            (false, true) => self.enter_reset(),
            (true, false) => self.leave_reset(),
            _ => {}
        }
    }

    // -----------------------------------------------------------------------------------------
    // Register access.

    /// Reads `offset` (which [`Self::claims`]); `None` when no register of the falcon is there.
    pub fn read(&mut self, offset: u32, env: &mut Env<'_>) -> Option<u32> {
        if Some(offset) == self.spec.engine_reset {
            return Some(self.engine_register());
        }
        if self.in_reset {
            self.record(env.log, FalconError::InReset { offset, kind: AccessKind::Read });
            return Some(POISON);
        }
        self.tick();
        if let Some((port, data)) = self.emem_port(offset).filter(|_| self.spec.fsp_owned) {
            return Some(if data { self.emem_read(port, env.log) } else { self.ememc_value(port) });
        }
        if let Some((port, which)) = self.queue_register(offset).filter(|_| self.spec.fsp_owned) {
            return Some(self.queues[port][which]);
        }
        if let Some(fbif) = self.spec.fbif_base.filter(|&b| offset >= b && offset - b < FBIF_WINDOW) {
            return self.read_fbif(offset - fbif);
        }
        if let Some(riscv) = self.spec.unit.riscv_base.filter(|&b| offset >= b && offset - b < RISCV_WINDOW) {
            return self.read_riscv(offset - riscv);
        }
        self.read_core(offset - self.base(), env)
    }

    /// Writes `offset` (which [`Self::claims`]); `false` when no register of the falcon is there.
    pub fn write(&mut self, offset: u32, value: u32, env: &mut Env<'_>) -> bool {
        if Some(offset) == self.spec.engine_reset {
            self.write_engine_register(value, env.log);
            return true;
        }
        if self.in_reset {
            self.record(env.log, FalconError::InReset { offset, kind: AccessKind::Write });
            return true;
        }
        if let Some((port, data)) = self.emem_port(offset).filter(|_| self.spec.fsp_owned) {
            if data {
                self.emem_write(port, value, env.log);
            } else {
                self.ememc_write(port, value, env.log);
            }
            return true;
        }
        if let Some((port, which)) = self.queue_register(offset).filter(|_| self.spec.fsp_owned) {
            self.queues[port][which] = value;
            if port == 0 && which == 0 {
                // Writing RM's QUEUE_HEAD interrupts the FSP: it takes the packet.
                env.machine.events.push(ChipEvent::FspCommand);
            }
            return true;
        }
        if let Some(fbif) = self.spec.fbif_base.filter(|&b| offset >= b && offset - b < FBIF_WINDOW) {
            return self.write_fbif(offset - fbif, value);
        }
        if let Some(riscv) = self.spec.unit.riscv_base.filter(|&b| offset >= b && offset - b < RISCV_WINDOW) {
            return self.write_riscv(offset - riscv, value, env);
        }
        self.write_core(offset - self.base(), value, env)
    }

    fn hwcfg(&self) -> u32 {
        let imem = hwf::NV_PFALCON_FALCON_HWCFG::default()
            .with(hwf::NV_PFALCON_FALCON_HWCFG::IMEM_SIZE, (IMEM_SIZE / BLOCK) as u16)
            .raw();
        imem | (((DMEM_SIZE / BLOCK) & HWCFG_DMEM_SIZE_MASK) << HWCFG_DMEM_SIZE_SHIFT)
    }

    fn hwcfg2(&self) -> u32 {
        match self.spec.layout {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_HWCFG2 as H;
                H::default().with(H::RISCV, self.spec.has_riscv_core).raw()
            }
            FalconLayout::Ga102 => {
                use ga102::{MemScrubbing, NV_PFALCON_FALCON_HWCFG2 as H};
                let scrubbing = if self.scrubbing() { MemScrubbing::Pending } else { MemScrubbing::Done };
                H::default()
                    .with(H::RISCV, self.spec.has_riscv_core)
                    .with(H::MEM_SCRUBBING, scrubbing)
                    .with(H::RESET_READY, true)
                    .raw()
            }
        }
    }

    fn dmactl(&self) -> u32 {
        use hwf::NV_PFALCON_FALCON_DMACTL as D;
        let scrubbing = self.spec.layout == FalconLayout::Tu102 && self.scrubbing();
        D::default()
            .with(D::REQUIRE_CTX, self.require_ctx)
            .with(D::DMEM_SCRUBBING, scrubbing)
            .with(D::IMEM_SCRUBBING, scrubbing)
            .raw()
    }

    fn cpuctl(&self) -> u32 {
        NV_PFALCON_FALCON_CPUCTL::default()
            .with(NV_PFALCON_FALCON_CPUCTL::HALTED, self.cpu == Cpu::Halted)
            .with(NV_PFALCON_FALCON_CPUCTL::ALIAS_EN, self.alias_en)
            .raw()
    }

    fn read_core(&mut self, rel: u32, env: &mut Env<'_>) -> Option<u32> {
        use hwf::*;
        let imem_port = |rel: u32| {
            let r = rel.checked_sub(NV_PFALCON_FALCON_IMEMD::OFFSET - 4)?;
            ((r / NV_PFALCON_FALCON_IMEMD::STRIDE) < IMEM_PORTS as u32)
                .then_some(((r / NV_PFALCON_FALCON_IMEMD::STRIDE) as usize, r % NV_PFALCON_FALCON_IMEMD::STRIDE))
        };
        let dmem_port = |rel: u32| {
            let r = rel.checked_sub(NV_PFALCON_FALCON_DMEMD::OFFSET - 4)?;
            ((r / NV_PFALCON_FALCON_DMEMD::STRIDE) < DMEM_PORTS as u32)
                .then_some(((r / NV_PFALCON_FALCON_DMEMD::STRIDE) as usize, r % NV_PFALCON_FALCON_DMEMD::STRIDE))
        };
        let value = match rel {
            r if r == NV_PFALCON_FALCON_IRQSTAT::OFFSET => self.irqstat,
            r if r == NV_PFALCON_FALCON_IRQMASK::OFFSET => self.irqmask,
            r if r == NV_PFALCON_FALCON_IRQDEST::OFFSET => self.irqdest,
            r if r == NV_PFALCON_FALCON_MAILBOX0::OFFSET => self.mailbox[0],
            r if r == NV_PFALCON_FALCON_MAILBOX1::OFFSET => self.mailbox[1],
            r if r == NV_PFALCON_FALCON_OS::OFFSET => self.os,
            r if r == NV_PFALCON_FALCON_RM::OFFSET => self.rm,
            r if r == NV_PFALCON_FALCON_DEBUGINFO::OFFSET => self.debuginfo,
            r if r == tu102::NV_PFALCON_FALCON_HWCFG2::OFFSET => self.hwcfg2(),
            r if r == NV_PFALCON_FALCON_CPUCTL::OFFSET => self.cpuctl(),
            r if r == NV_PFALCON_FALCON_BOOTVEC::OFFSET => self.bootvec,
            r if r == NV_PFALCON_FALCON_HWCFG::OFFSET => self.hwcfg(),
            r if r == NV_PFALCON_FALCON_DMACTL::OFFSET => self.dmactl(),
            r if r == NV_PFALCON_FALCON_DMATRFBASE::OFFSET => self.dma_base,
            r if r == NV_PFALCON_FALCON_DMATRFBASE1::OFFSET => self.dma_base1,
            r if r == tu102::NV_PFALCON_FALCON_DMATRFMOFFS::OFFSET => self.dma_moffs,
            r if r == NV_PFALCON_FALCON_DMATRFFBOFFS::OFFSET => self.dma_fboffs,
            r if r == NV_PFALCON_FALCON_DMATRFCMD::OFFSET => {
                use NV_PFALCON_FALCON_DMATRFCMD as C;
                C::from_raw(self.dma_cmd).with(C::IDLE, true).with(C::FULL, false).raw()
            }
            r if r >= NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET
                && r < NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2::address(0, 4) =>
            {
                self.scratch_group_2[((r - NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET) / 4) as usize]
            }
            r => {
                if let Some((port, which)) = imem_port(r) {
                    match which {
                        0 => self.imemc_value(port),
                        4 => self.imem_read(port, env.log),
                        8 => u32::from(self.current_tag(port)),
                        _ => return None,
                    }
                } else if let Some((port, which)) = dmem_port(r) {
                    match which {
                        0 => self.dmemc_value(port),
                        4 => self.dmem_read(port, env.log),
                        _ => return None,
                    }
                } else {
                    return None;
                }
            }
        };
        Some(value)
    }

    fn write_core(&mut self, rel: u32, value: u32, env: &mut Env<'_>) -> bool {
        use hwf::*;
        match rel {
            r if r == NV_PFALCON_FALCON_IRQSCLR::OFFSET => self.irqstat &= !value,
            r if r == NV_PFALCON_FALCON_IRQMSET::OFFSET => self.irqmask |= value,
            r if r == NV_PFALCON_FALCON_IRQMCLR::OFFSET => self.irqmask &= !value,
            r if r == NV_PFALCON_FALCON_IRQDEST::OFFSET => self.irqdest = value,
            r if r == NV_PFALCON_FALCON_MAILBOX0::OFFSET => self.mailbox[0] = value,
            r if r == NV_PFALCON_FALCON_MAILBOX1::OFFSET => self.mailbox[1] = value,
            r if r == NV_PFALCON_FALCON_OS::OFFSET => self.os = value,
            r if r == NV_PFALCON_FALCON_RM::OFFSET => self.rm = value,
            r if r == NV_PFALCON_FALCON_DEBUGINFO::OFFSET => self.debuginfo = value,
            r if r == NV_PFALCON_FALCON_BOOTVEC::OFFSET => self.bootvec = value,
            r if r == NV_PFALCON_FALCON_DMACTL::OFFSET => {
                use NV_PFALCON_FALCON_DMACTL as D;
                let read_only = D::DMEM_SCRUBBING.bits.mask() | D::IMEM_SCRUBBING.bits.mask();
                if let Some(value) = undefined_bits(value, D::REQUIRE_CTX.bits.mask() | read_only) {
                    self.record(env.log, FalconError::UndefinedBits { register: D::NAME, value });
                }
                self.require_ctx = D::from_raw(value).require_ctx();
            }
            r if r == NV_PFALCON_FALCON_DMATRFBASE::OFFSET => self.dma_base = value,
            r if r == NV_PFALCON_FALCON_DMATRFBASE1::OFFSET => {
                let mask = NV_PFALCON_FALCON_DMATRFBASE1::BASE.bits.mask();
                if let Some(value) = undefined_bits(value, mask) {
                    self.record(
                        env.log,
                        FalconError::UndefinedBits { register: NV_PFALCON_FALCON_DMATRFBASE1::NAME, value },
                    );
                }
                self.dma_base1 = value & mask;
            }
            r if r == tu102::NV_PFALCON_FALCON_DMATRFMOFFS::OFFSET => {
                let mask = match self.spec.layout {
                    FalconLayout::Tu102 => tu102::NV_PFALCON_FALCON_DMATRFMOFFS::OFFS.bits.mask(),
                    FalconLayout::Ga102 => ga102::NV_PFALCON_FALCON_DMATRFMOFFS::OFFS.bits.mask(),
                };
                if let Some(value) = undefined_bits(value, mask) {
                    self.record(
                        env.log,
                        FalconError::UndefinedBits { register: "NV_PFALCON_FALCON_DMATRFMOFFS", value },
                    );
                }
                self.dma_moffs = value & mask;
            }
            r if r == NV_PFALCON_FALCON_DMATRFFBOFFS::OFFSET => self.dma_fboffs = value,
            r if r == NV_PFALCON_FALCON_DMATRFCMD::OFFSET => self.dma_command(value, env),
            r if r == NV_PFALCON_FALCON_CPUCTL::OFFSET => {
                use NV_PFALCON_FALCON_CPUCTL as C;
                let defined = C::STARTCPU.bits.mask() | C::ALIAS_EN.bits.mask() | C::HALTED.bits.mask();
                if let Some(value) = undefined_bits(value, defined) {
                    self.record(env.log, FalconError::UndefinedBits { register: C::NAME, value });
                }
                let cpuctl = C::from_raw(value);
                if cpuctl.startcpu() {
                    if self.alias_en {
                        self.record(
                            env.log,
                            FalconError::StartIgnored { reason: "CPUCTL_ALIAS_EN is set: start through CPUCTL_ALIAS" },
                        );
                    } else {
                        self.start_falcon(env);
                    }
                }
                self.alias_en = cpuctl.alias_en();
            }
            r if r == NV_PFALCON_FALCON_CPUCTL_ALIAS::OFFSET => {
                use NV_PFALCON_FALCON_CPUCTL_ALIAS as A;
                if let Some(value) = undefined_bits(value, A::STARTCPU.bits.mask()) {
                    self.record(env.log, FalconError::UndefinedBits { register: A::NAME, value });
                }
                if A::from_raw(value).startcpu() {
                    if self.alias_en {
                        self.start_falcon(env);
                    } else {
                        self.record(
                            env.log,
                            FalconError::StartIgnored {
                                reason: "CPUCTL_ALIAS written while CPUCTL_ALIAS_EN is clear: start through CPUCTL",
                            },
                        );
                    }
                }
            }
            r if r >= NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET
                && r < NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2::address(0, 4) =>
            {
                self.scratch_group_2[((r - NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2::OFFSET) / 4) as usize] = value;
            }
            r if r == NV_PFALCON_FALCON_IRQSTAT::OFFSET
                || r == NV_PFALCON_FALCON_IRQMASK::OFFSET
                || r == NV_PFALCON_FALCON_HWCFG::OFFSET
                || r == tu102::NV_PFALCON_FALCON_HWCFG2::OFFSET =>
            {
                env.log.record(ModelError::ReadOnly {
                    register: "falcon status register",
                    offset: self.base() + r,
                    value,
                });
            }
            r => return self.write_pio(r, value, env),
        }
        true
    }

    fn write_pio(&mut self, rel: u32, value: u32, env: &mut Env<'_>) -> bool {
        use hwf::*;
        if let Some(r) = rel.checked_sub(NV_PFALCON_FALCON_IMEMD::OFFSET - 4) {
            let port = (r / NV_PFALCON_FALCON_IMEMD::STRIDE) as usize;
            if port < IMEM_PORTS {
                match r % NV_PFALCON_FALCON_IMEMD::STRIDE {
                    0 => self.imemc_write(port, value, env.log),
                    4 => self.imem_write(port, value, env.log),
                    8 => self.imemt_write(port, value, env.log),
                    _ => return false,
                }
                return true;
            }
        }
        if let Some(r) = rel.checked_sub(NV_PFALCON_FALCON_DMEMD::OFFSET - 4) {
            let port = (r / NV_PFALCON_FALCON_DMEMD::STRIDE) as usize;
            if port < DMEM_PORTS {
                match r % NV_PFALCON_FALCON_DMEMD::STRIDE {
                    0 => self.dmemc_write(port, value, env.log),
                    4 => self.dmem_write(port, value, env.log),
                    _ => return false,
                }
                return true;
            }
        }
        false
    }

    fn read_fbif(&mut self, rel: u32) -> Option<u32> {
        if rel == FBIF_CTL {
            return Some(self.fbif_ctl);
        }
        let index = rel / hwf::NV_PFALCON_FBIF_TRANSCFG::STRIDE;
        (rel.is_multiple_of(4) && index < NV_PFALCON_FBIF_TRANSCFG__SIZE_1).then(|| self.fbif_transcfg[index as usize])
    }

    fn write_fbif(&mut self, rel: u32, value: u32) -> bool {
        if rel == FBIF_CTL {
            self.fbif_ctl = value;
            return true;
        }
        let index = rel / hwf::NV_PFALCON_FBIF_TRANSCFG::STRIDE;
        if rel.is_multiple_of(4) && index < NV_PFALCON_FBIF_TRANSCFG__SIZE_1 {
            self.fbif_transcfg[index as usize] = value;
            return true;
        }
        false
    }
}

/// How a start ended.
enum RunEnd {
    /// The boot ROM or a model ucode halted with this code.
    Code(HaltCode),
    /// A booter ran.
    Booter(BooterOutcome),
}

impl LoadedUcode for Falcon {
    fn bootvec(&self) -> u32 {
        self.bootvec
    }

    fn fetch(&self, va: u32, len: u32) -> Result<(Vec<u8>, bool), HaltCode> {
        Falcon::fetch(self, va, len)
    }

    fn dmem(&self) -> &[u8] {
        &self.dmem
    }

    fn brom(&self) -> Option<BromState> {
        self.spec.has_boot_rom_registers().then_some(BromState {
            mod_sel: self.brom_mod_sel,
            ucode_id: self.brom_ucode_id,
            engid_mask: self.brom_engid_mask,
            paraaddr0: self.brom_paraaddr[0],
        })
    }
}

/// What GSP-RM (and the booter that starts it) reads and changes on GSP's falcon.
impl Falcon {
    /// `NV_PFALCON_FALCON_MAILBOX<i>` (0 or 1).
    pub fn mailbox(&self, index: usize) -> u32 {
        self.mailbox.get(index).copied().unwrap_or(0)
    }

    pub fn set_mailbox(&mut self, index: usize, value: u32) {
        if let Some(slot) = self.mailbox.get_mut(index) {
            *slot = value;
        }
    }

    /// Starts or stops the RISC-V core (for GSP-RM); stopping leaves it halted.
    pub fn set_riscv_running(&mut self, running: bool) {
        self.riscv.running = running;
        self.riscv.halted = !running;
    }

    /// Engine resets so far.
    pub fn reset_epoch(&self) -> u32 {
        self.reset_epoch
    }

    /// GSP-RM's message interrupt: `NV_PFALCON_FALCON_IRQSTAT_SWGEN0`.
    pub fn raise_swgen0(&mut self) {
        self.irqstat |= hwf::NV_PFALCON_FALCON_IRQSTAT::SWGEN0.bits.mask();
    }

    /// Held in reset (`NV_P*_FALCON_ENGINE_RESET`).
    pub fn in_reset(&self) -> bool {
        self.in_reset
    }

    /// The RISC-V core is the one that boots: `BCR_CTRL_CORE_SELECT` = RISC-V on the GA102 layout;
    /// always on Turing (no BCR: the booter switches the core itself).
    pub fn riscv_core_selected(&self) -> bool {
        match self.spec.layout {
            FalconLayout::Tu102 => true,
            FalconLayout::Ga102 => self.riscv.core_select_riscv,
        }
    }

    /// GSP's state as a booter on SEC2 sees it.
    pub fn peer_view(&self) -> PeerGsp {
        PeerGsp {
            in_reset: self.in_reset,
            riscv_selected: self.riscv_core_selected(),
            riscv_running: self.riscv.running,
        }
    }

    /// The FSP takes RM's command packet: EMEM from `QUEUE_HEAD(0)` through the word at
    /// `QUEUE_TAIL(0)`, then HEAD = TAIL (taken). `None`, and nothing changes, when TAIL is below
    /// HEAD or beyond EMEM: no packet to take.
    pub fn take_fsp_command(&mut self) -> Option<Vec<u8>> {
        let [head, tail, _, _] = self.queues[0];
        let end = tail.checked_add(4).filter(|&end| tail >= head && end as usize <= self.emem.len())?;
        let packet = self.emem.get(head as usize..end as usize)?.to_vec();
        self.queues[0][0] = tail;
        Some(packet)
    }

    /// The FSP's reply: `packet` at EMEM 0, `MSGQ_HEAD(0)` = 0, `MSGQ_TAIL(0)` = its last word.
    pub fn post_fsp_message(&mut self, packet: &[u8]) {
        if let Some(dest) = self.emem.get_mut(..packet.len()) {
            dest.copy_from_slice(packet);
            self.queues[0][2] = 0;
            self.queues[0][3] = (packet.len() as u32).saturating_sub(4);
        }
    }

    /// SEC2 after resuming GSP-RM: halted again with `mailbox0`.
    pub fn finish_resume(&mut self, mailbox0: u32) {
        self.cpu = Cpu::Halted;
        self.mailbox[0] = mailbox0;
        self.irqstat |= hwf::NV_PFALCON_FALCON_IRQSTAT::HALT.bits.mask();
    }
}
