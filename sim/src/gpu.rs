//! The model GPU: BAR0 as a register file, the PROM window over the model's VBIOS, the falcons,
//! and PCI configuration space.
//!
//! # BAR0 registers modelled
//! | register(s) | behaviour |
//! |---|---|
//! | `NV_PMC_BOOT_0`, `NV_PMC_BOOT_42` | read-only, from the chip ids (`board::boot0_value`/`boot42_value`) |
//! | `NV_PMC_ENABLE` | read/write storage |
//! | `NV_PROM_DATA(i)` (0x300000..0x400000) | the VBIOS from `vbios_builder`; past its end 0xFFFFFFFF (erased flash); writes refused |
//! | `NV_PBUS_SW_SCRATCH(0..64)` (= `NV_PBUS_VBIOS_SCRATCH`) | read/write storage; FWSEC leaves results in 0x0E and 0x15 |
//! | `NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI` | read-only to the driver (privileged); FWSEC-FRTS sets them |
//! | `NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT` | `PROGRESS` = COMPLETED: the boot firmware finished |
//! | `NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK` | read protection 0xF: every level (the driver included) may read group 05 |
//! | `NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0` | read/write storage, 0 at power on |
//! | `NV_USABLE_FB_SIZE_IN_MB` (GA10x and later) | VRAM in MiB, read-only |
//! | `NV_THERM_I2CS_SCRATCH` (Hopper, Blackwell; per HAL) | `FSP_BOOT_COMPLETE_STATUS` = SUCCESS, read-only |
//! | `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` (TU102 / GA100+ offsets) | `DATA_YES` (production) unless `debug_fused`, read-only |
//! | `NV_FUSE_OPT_FPF_GSP_UCODE<n>_VERSION` (GA100, GA10x, Ada) | `fwsec_ucode_fuse` for the FWSEC ucode id, 0 for the others, read-only |
//! | `NV_FUSE_OPT_FPF_SEC2_UCODE<n>_VERSION` (GA100, GA10x, Ada) | 0 unless set with [`ModelGpu::set_sec2_ucode_fuse`], read-only; selects the booter's signature |
//! | `NV_PGC6_BSI_SECURE_SCRATCH_14` | 0 at power on, read-only to the driver (secure scratch; a write is refused); SEC2 sets `BOOT_STAGE_3_HANDOFF` when it resumes GSP-RM |
//! | `NV_PGSP_MAILBOX(0..4)`, `NV_PGSP_QUEUE_HEAD(0..8)` (`dev_gsp.h`) | read/write storage owned by GSP-RM: its error word in MAILBOX(0/1); a QUEUE_HEAD(0) write is the command doorbell ([`crate::gsp_rm`]) |
//! | `NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE(_PDB, _UPPER_PDB)`, `NV_PBUS_BAR0_WINDOW` / `NV_XAL_EP_BAR0_WINDOW`, `NV_PRAMIN` | see [`crate::mmu::MemorySystem`] |
//! | BAR1 (not BAR0: [`ModelGpu::bar1_read`]/[`ModelGpu::bar1_write`]) | VRAM through the BAR1 VA space under GSP-RM's root (`bar1PdeBase`), the model MMU and TLB; faults logged, reads 0xFF |
//! | `NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_*` (VF+0x1000..0x1614) | the interrupt tree, see [`crate::intr`] |
//! | falcons | see [`crate::falcon`]; SEC2 runs booters ([`crate::booter`]), GSP's RISC-V core GSP-RM |
//!
//! Every access to a GSP register (falcon, FBIF, RISC-V windows, `NV_PGSP_MAILBOX`,
//! `NV_PGSP_QUEUE_HEAD`) lets GSP-RM work after the access itself.
//!
//! Anything else reads [`POISON`] and is recorded as an [`UnmodelledAccess`]; writes to it are
//! dropped and recorded. Accesses at offsets that are not multiples of 4 are recorded as
//! misaligned and treated the same way.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::RefCell;

use nvgpu::chip::Chipset;
use nvgpu::gsp::fw::wpr::GspFwWprMeta;
use nvgpu::hal::Family;
use nvgpu::hw::boot::{self, SecureGspDebugDis, NV_FUSE_OPT_FPF_UCODE_VERSION_COUNT};
use nvgpu::hw::engine::FalconEngine;
use nvgpu::hw::{bus, fb, gc6, pmc, therm, RegisterIo};
use nvgpu::vbios::{Bar0Read, NV_PROM_DATA_BASE, PROM_WINDOW_SIZE};

use crate::board::{BarSizes, ModelConfig, PciIdentity};
use crate::error::{AccessKind, ModelError, UnmodelledAccess, POISON};
use crate::falcon::{Env, Falcon, FalconSpec};
use crate::gsp_rm::{BootSequencer, GspCtx, GspFault, GspRm, GspRmStatus, RegistryEntry, RmObject};
use crate::memory::SystemMemory;
use crate::mmu::{MemorySystem, MmuClient, MmuFaultRecord};
use crate::vbios_builder::{self, BuiltVbios, FWSEC_UCODE_ID};
use nvgpu::hw::boot::NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE;
use nvgpu::rm::fifo as f;

/// The errors a model recorded, in order.
#[derive(Default)]
pub(crate) struct ErrorLog(Vec<ModelError>);

impl ErrorLog {
    /// Records `error` and logs it.
    pub fn record(&mut self, error: ModelError) {
        log::warn!("GPU model: {error}");
        self.0.push(error);
    }
}

/// Something a falcon's ucode started that reaches beyond the falcon; the GPU finishes it after
/// the access.
#[derive(Clone, Debug)]
pub(crate) enum ChipEvent {
    /// booter_load accepted the metadata: GSP's RISC-V core starts GSP-RM.
    StartGspRm(Box<GspFwWprMeta>),
    /// SEC2 was started during `CORE_RESUME`: it resumes GSP-RM.
    ResumeGspRm,
    /// The CPU wrote `NV_PFSP_QUEUE_HEAD(0)`: the FSP takes the packet.
    FspCommand,
    /// booter_load restored a suspended GSP-RM's WPR2: it resumes.
    RestoreGspRm,
}

/// Chip-wide state the falcons' ucode can change.
pub(crate) struct Machine {
    pub chipset: Chipset,
    pub vram_bytes: u64,
    pub debug_fused: bool,
    fwsec_ucode_fuse: u16,
    /// Raw `NV_FUSE_OPT_FPF_SEC2_UCODE<n>_VERSION`, n = 1..=16.
    sec2_ucode_fuse: [u16; NV_FUSE_OPT_FPF_UCODE_VERSION_COUNT as usize],
    scratch: [u32; bus::NV_PBUS_SW_SCRATCH__SIZE_1 as usize],
    wpr2_lo: u32,
    wpr2_hi: u32,
    /// `NV_PGC6_BSI_SECURE_SCRATCH_14`.
    pub bsi_scratch_14: u32,
    /// GSP-RM posted a `CORE_RESUME` script: the next SEC2 start resumes it.
    pub gsp_resume_armed: bool,
    /// Suspend/resume state shared by GSP-RM and the booters.
    pub gsp_sr: crate::gsp_rm::suspend::SrState,
    /// An injected fault: the next booter halts at once with this `MAILBOX0`.
    pub booter_halt: Option<u32>,
    /// Events for the GPU to finish after the current access.
    pub events: Vec<ChipEvent>,
}

impl Machine {
    /// WPR2 as (first byte, last byte), or `None` while not set.
    pub fn wpr2_range(&self) -> Option<(u64, u64)> {
        let lo = fb::NV_PFB_PRI_MMU_WPR2_ADDR_LO::from_raw(self.wpr2_lo);
        let hi = fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::from_raw(self.wpr2_hi);
        hi.last_unit_address().map(|last| (lo.start_address(), last + 0xFFF))
    }

    /// Tears WPR2 down (booter_unload).
    pub fn clear_wpr2(&mut self) {
        self.wpr2_lo = 0;
        self.wpr2_hi = 0;
    }

    /// The fuse version of SEC2 ucode `ucode_id` as `ksec2ReadUcodeFuseVersion_GA100` computes it
    /// (highest set bit + 1, or 0); 0 on Turing, which has no such fuse.
    pub fn sec2_fuse_version(&self, ucode_id: u32) -> u32 {
        if !crate::silicon::of(self.chipset.family()).sec2_fuse_versions {
            return 0;
        }
        match ucode_id.checked_sub(1).and_then(|i| self.sec2_ucode_fuse.get(i as usize)) {
            Some(&raw) if raw != 0 => 32 - u32::from(raw).leading_zeros(),
            _ => 0,
        }
    }

    pub fn wpr2_set(&self) -> bool {
        fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::from_raw(self.wpr2_hi).val() != 0
    }

    pub fn set_wpr2(&mut self, lo_4k: u32, hi_4k: u32) {
        use fb::{NV_PFB_PRI_MMU_WPR2_ADDR_HI as Hi, NV_PFB_PRI_MMU_WPR2_ADDR_LO as Lo};
        self.wpr2_lo = Lo::default().with(Lo::VAL, lo_4k).raw();
        self.wpr2_hi = Hi::default().with(Hi::VAL, hi_4k).raw();
    }

    pub fn set_scratch(&mut self, index: u32, value: u32) {
        if let Some(slot) = self.scratch.get_mut(index as usize) {
            *slot = value;
        }
    }

    /// The raw `NV_FUSE_OPT_FPF_GSP_UCODE<ucode_id>_VERSION` value.
    pub fn ucode_fuse(&self, ucode_id: u32) -> u32 {
        if ucode_id == u32::from(FWSEC_UCODE_ID) {
            u32::from(self.fwsec_ucode_fuse)
        } else {
            0
        }
    }

    /// The fuse version of `ucode_id` as RM computes it (`kgspReadUcodeFuseVersion_GA100`):
    /// highest set bit + 1, or 0.
    pub fn fuse_version(&self, ucode_id: u32) -> u32 {
        match self.ucode_fuse(ucode_id) {
            0 => 0,
            raw => 32 - raw.leading_zeros(),
        }
    }
}

struct GpuState {
    machine: Machine,
    falcons: Vec<Falcon>,
    log: ErrorLog,
    pmc_enable: u32,
    frts_input_wpr_size: u32,
    memory: Option<Box<dyn SystemMemory + Send>>,
    pci: PciConfigSpace,
    gsp_rm: GspRm,
    /// VRAM, the MMU's TLB and fault log, PRAMIN and the invalidate registers.
    mm: MemorySystem,
    /// The CPU interrupt tree (`CPU_INTR_TOP`/`LEAF`).
    intr: crate::intr::InterruptTree,
    /// The replayable MMU fault buffer (UVM's).
    fault_buffer: crate::fault_buffer::ReplayableFaultBuffer,
    /// The GPU's virtual time (semaphore timestamps, `NVC361_TIME`).
    gpu_time_ns: u64,
    /// Stalls that wrote replayable faults into the buffer (each would raise its interrupt).
    replayable_faults: u64,
}

/// A model GPU. Implements [`RegisterIo`] for BAR0 (and the VBIOS parser's [`Bar0Read`]).
///
/// Single-threaded by design (interior mutability through a `RefCell`): the driver's
/// `RegisterIo` takes `&self`, and the model runs work synchronously inside the access that
/// triggers it. It is `Send`, so the kernel can keep it behind a lock.
pub struct ModelGpu {
    config: ModelConfig,
    vbios: BuiltVbios,
    state: RefCell<GpuState>,
    /// BAR0 writes that reached the model (`probe` confirms it made none).
    register_writes: core::cell::Cell<u64>,
    /// Accesses refused because another was running: count, first offset and kind.
    reentrant: core::cell::Cell<(u64, u32, AccessKind)>,
}

impl ModelGpu {
    /// A model of the GPU `config` describes, at power on (boot firmware done, FSP booted).
    pub fn new(config: ModelConfig) -> Self {
        let vbios = vbios_builder::build(&config);
        let silicon = crate::silicon::of(config.chipset.family());
        let falcons = silicon
            .falcons
            .iter()
            .map(|&unit| Falcon::new(FalconSpec::for_unit(unit, silicon, config.scrub_polls)))
            .collect();
        let state = GpuState {
            machine: Machine {
                chipset: config.chipset,
                vram_bytes: config.vram_bytes,
                debug_fused: config.debug_fused,
                fwsec_ucode_fuse: config.fwsec_ucode_fuse,
                sec2_ucode_fuse: [0; NV_FUSE_OPT_FPF_UCODE_VERSION_COUNT as usize],
                scratch: [0; bus::NV_PBUS_SW_SCRATCH__SIZE_1 as usize],
                wpr2_lo: 0,
                wpr2_hi: 0,
                bsi_scratch_14: 0,
                gsp_resume_armed: false,
                gsp_sr: Default::default(),
                booter_halt: None,
                events: Vec::new(),
            },
            falcons,
            log: ErrorLog::default(),
            pmc_enable: 0,
            frts_input_wpr_size: 0,
            memory: None,
            pci: PciConfigSpace::new(config.pci, config.bars),
            gsp_rm: GspRm::default(),
            mm: MemorySystem::new(config.chipset.family(), config.vram_bytes),
            intr: Default::default(),
            fault_buffer: Default::default(),
            gpu_time_ns: 0,
            replayable_faults: 0,
        };
        Self {
            config,
            vbios,
            state: RefCell::new(state),
            register_writes: core::cell::Cell::new(0),
            reentrant: core::cell::Cell::new((0, 0, AccessKind::Read)),
        }
    }

    /// The default model board of `chipset` ([`ModelConfig::for_chipset`]).
    pub fn for_chipset(chipset: Chipset) -> Self {
        Self::new(ModelConfig::for_chipset(chipset))
    }

    /// NVIDIA H200 (GH100).
    pub fn h200() -> Self {
        Self::new(ModelConfig::h200())
    }

    /// NVIDIA GeForce RTX 4090 (AD102).
    pub fn rtx4090() -> Self {
        Self::new(ModelConfig::rtx4090())
    }

    /// NVIDIA GeForce RTX 3090 (GA102).
    pub fn rtx3090() -> Self {
        Self::new(ModelConfig::rtx3090())
    }

    /// NVIDIA GeForce RTX 2080 Ti (TU102).
    pub fn rtx2080ti() -> Self {
        Self::new(ModelConfig::rtx2080ti())
    }

    /// The configuration the model was built from.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Its chipset.
    pub fn chipset(&self) -> Chipset {
        self.config.chipset
    }

    /// The VBIOS image the PROM window shows, and where its parts are.
    pub fn vbios(&self) -> &BuiltVbios {
        &self.vbios
    }

    /// Attaches the system memory the model's DMA engines reach (replacing any before).
    pub fn set_system_memory(&self, memory: Box<dyn SystemMemory + Send>) {
        if let Ok(mut state) = self.state.try_borrow_mut() {
            state.memory = Some(memory);
        }
    }

    /// Everything the model rejected so far, in order.
    pub fn errors(&self) -> Vec<ModelError> {
        let mut errors = self.state.try_borrow().map(|s| s.log.0.clone()).unwrap_or_default();
        errors.extend(self.reentrant_error());
        errors
    }

    fn reentrant_error(&self) -> Option<ModelError> {
        let (count, offset, kind) = self.reentrant.get();
        (count > 0).then_some(ModelError::Reentrant { count, offset, kind })
    }

    /// BAR0 writes that reached the model since it was made (refused ones included).
    pub fn register_writes(&self) -> u64 {
        self.register_writes.get()
    }

    /// The accesses to unmodelled registers so far, in order.
    pub fn unmodelled_accesses(&self) -> Vec<UnmodelledAccess> {
        self.errors()
            .into_iter()
            .filter_map(|e| match e {
                ModelError::Unmodelled(access) => Some(access),
                _ => None,
            })
            .collect()
    }

    /// Returns the recorded errors and forgets them.
    pub fn take_errors(&self) -> Vec<ModelError> {
        let mut errors = self.state.try_borrow_mut().map(|mut s| core::mem::take(&mut s.log.0)).unwrap_or_default();
        errors.extend(self.reentrant_error());
        self.reentrant.set((0, 0, AccessKind::Read));
        errors
    }

    /// WPR2 as FWSEC-FRTS or booter_load left it: (first byte, last byte), or `None` while not
    /// set up.
    pub fn wpr2(&self) -> Option<(u64, u64)> {
        self.state.try_borrow().ok()?.machine.wpr2_range()
    }

    /// Sets the raw `NV_FUSE_OPT_FPF_SEC2_UCODE<ucode_id>_VERSION` (ucode ids 1..=16; GA100, GA10x,
    /// Ada): the fuse version that selects a booter's signature (default 0 everywhere).
    pub fn set_sec2_ucode_fuse(&self, ucode_id: u32, raw: u16) {
        if let Ok(mut state) = self.state.try_borrow_mut() {
            if let Some(slot) = ucode_id.checked_sub(1).and_then(|i| state.machine.sec2_ucode_fuse.get_mut(i as usize))
            {
                *slot = raw;
            }
        }
    }

    /// Arms a fault in the GSP boot chain or GSP-RM (see [`GspFault`]). `StopRiscv` acts at once
    /// if GSP-RM runs (the error word is posted), else at its next start.
    pub fn inject(&self, fault: GspFault) {
        let Ok(mut guard) = self.state.try_borrow_mut() else { return };
        let state = &mut *guard;
        match fault {
            GspFault::BooterHalts { mailbox0 } => state.machine.booter_halt = Some(mailbox0),
            other => {
                state.gsp_rm.inject(other);
                self.with_gsp(state, |gsp_rm, ctx| gsp_rm.service(ctx));
            }
        }
    }

    /// Clears every armed fault.
    pub fn clear_faults(&self) {
        if let Ok(mut state) = self.state.try_borrow_mut() {
            state.gsp_rm.clear_faults();
            state.machine.booter_halt = None;
        }
    }

    /// Chooses the CPU sequencer script GSP-RM sends during init (before it boots).
    pub fn set_gsp_boot_sequencer(&self, sequencer: BootSequencer) {
        if let Ok(mut state) = self.state.try_borrow_mut() {
            state.gsp_rm.set_sequencer(sequencer);
        }
    }

    /// GSP-RM's state.
    pub fn gsp_rm_status(&self) -> GspRmStatus {
        self.state.try_borrow().map(|s| s.gsp_rm.status()).unwrap_or(GspRmStatus::Off)
    }

    /// The registry GSP-RM accepted from `SET_REGISTRY`.
    pub fn gsp_registry(&self) -> Vec<RegistryEntry> {
        self.state.try_borrow().map(|s| s.gsp_rm.registry().to_vec()).unwrap_or_default()
    }

    /// Every complete message the FSP took from RM's channel, NVDM type byte first, oldest first
    /// (its reply overwrites the packet in EMEM, as on hardware).
    pub fn fsp_received_messages(&self) -> Vec<Vec<u8>> {
        self.state.try_borrow().map(|s| s.gsp_rm.fsp.received.clone()).unwrap_or_default()
    }

    /// The GSP-FMC the FSP's last accepted chain-of-trust command named: one of NVIDIA's (by
    /// fingerprint, with its own credentials) or a stand-in; `None` before any.
    pub fn fsp_accepted_fmc(&self) -> Option<crate::gsp_rm::fsp::FmcSeen> {
        self.state.try_borrow().ok().and_then(|s| s.gsp_rm.fsp.fmc)
    }

    /// The RM objects GSP-RM holds (its internal client, device and subdevice included).
    pub fn gsp_rm_objects(&self) -> Vec<RmObject> {
        self.state.try_borrow().map(|s| s.gsp_rm.objects()).unwrap_or_default()
    }

    /// Runs `f` with GSP-RM and its context (no-op on chips without a GSP falcon).
    fn with_gsp(&self, state: &mut GpuState, f: impl FnOnce(&mut GspRm, &mut GspCtx<'_>)) {
        let GpuState { machine, falcons, log, memory, gsp_rm, fault_buffer, .. } = state;
        let Some(gsp) = falcons.iter_mut().find(|f| f.engine() == FalconEngine::Gsp) else { return };
        let mut ctx = GspCtx { log, memory: memory.as_deref(), machine, gsp, config: &self.config, fault_buffer };
        f(gsp_rm, &mut ctx);
    }

    /// The FSP takes a command packet, answers complete messages, and after an accepted
    /// chain-of-trust command runs the GSP-FMC, which starts GSP-RM ([`crate::gsp_rm::fsp`]).
    fn fsp_command(&self, state: &mut GpuState) {
        use crate::gsp_rm::fsp;
        use crate::gsp_rm::GspRmError;
        let Some(fsp_falcon) = state.falcons.iter_mut().find(|f| f.engine() == FalconEngine::Fsp) else { return };
        let Some(packet) = fsp_falcon.take_fsp_command() else { return };
        let running = state.gsp_rm.is_up();
        let stand_in = self.config.allow_stand_in_fmc;
        let outcome =
            state.gsp_rm.fsp.packet(&packet, state.memory.as_deref(), state.machine.vram_bytes, running, stand_in);
        for refusal in outcome.refusals {
            state.log.record(ModelError::GspRm(GspRmError::Fsp(refusal)));
        }
        if let Some(reply) = &outcome.reply {
            fsp_falcon.post_fsp_message(reply);
        }
        let Some(params) = outcome.cot else { return };
        let result = match state.machine.booter_halt.take() {
            Some(mailbox0) => Err(crate::booter::BooterError::Injected { mailbox0 }),
            None => fsp::run_fmc(
                state.machine.chipset,
                &params,
                state.memory.as_deref(),
                state.machine.vram_bytes,
                state.machine.wpr2_range(),
                nvgpu::hw::fw::fsp::FRTS_VIDMEM_OFFSET_FROM_END,
            ),
        };
        match result {
            Ok(meta) => {
                state.machine.set_wpr2((meta.gsp_fw_wpr_start >> 12) as u32, ((meta.gsp_fw_wpr_end - 1) >> 12) as u32);
                let libos = params.gsp_rm_params.boot_args_offset;
                self.with_gsp(state, |gsp_rm, ctx| gsp_rm.start(meta, Some(libos), ctx));
                Self::bind_bar1(state, self.family());
            }
            Err(error) => {
                state.log.record(ModelError::GspRm(GspRmError::Fmc(error)));
                if let Some(gsp) = state.falcons.iter_mut().find(|f| f.engine() == FalconEngine::Gsp) {
                    gsp.set_mailbox(0, error.mailbox0());
                }
            }
        }
    }

    /// Finishes what falcons started during the last access (booter starting or SEC2 resuming
    /// GSP-RM).
    fn finish_events(&self, state: &mut GpuState) {
        let events = core::mem::take(&mut state.machine.events);
        for event in events {
            match event {
                ChipEvent::StartGspRm(meta) => {
                    self.with_gsp(state, |gsp_rm, ctx| gsp_rm.start(*meta, None, ctx));
                    Self::bind_bar1(state, self.family());
                }
                ChipEvent::FspCommand => self.fsp_command(state),
                ChipEvent::RestoreGspRm => self.with_gsp(state, |gsp_rm, ctx| gsp_rm.restore(ctx)),
                ChipEvent::ResumeGspRm => {
                    let mut mailbox0 = 0;
                    self.with_gsp(state, |gsp_rm, ctx| mailbox0 = gsp_rm.resume(ctx));
                    if let Some(sec2) = state.falcons.iter_mut().find(|f| f.engine() == FalconEngine::Sec2) {
                        sec2.finish_resume(mailbox0);
                    }
                }
            }
        }
    }

    /// Reads 32 bits of PCI configuration space at `offset` (a multiple of 4 below 256).
    pub fn pci_config_read32(&self, offset: u16) -> u32 {
        self.state.try_borrow().map(|s| s.pci.read32(offset)).unwrap_or(u32::MAX)
    }

    /// Writes 32 bits of PCI configuration space (command register and BARs are writable; BARs
    /// answer the all-ones sizing probe with their size mask).
    /// Any other write (an identity register, an empty BAR slot, an offset the header does not
    /// have, a misaligned one) changes nothing and is recorded as a [`ModelError::PciConfigWrite`].
    pub fn pci_config_write32(&self, offset: u16, value: u32) {
        if let Ok(mut state) = self.state.try_borrow_mut() {
            if let Err(reason) = state.pci.write32(offset, value) {
                state.log.record(ModelError::PciConfigWrite { offset, value, reason });
            }
        }
    }

    fn prom_word(&self, offset: u32) -> u32 {
        let rel = (offset - NV_PROM_DATA_BASE) as usize;
        match self.vbios.rom.get(rel..rel + 4) {
            Some(bytes) => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            None => u32::MAX,
        }
    }

    fn in_prom(offset: u32) -> bool {
        offset >= NV_PROM_DATA_BASE && offset - NV_PROM_DATA_BASE < PROM_WINDOW_SIZE
    }

    fn family(&self) -> Family {
        self.config.chipset.family()
    }

    /// Read-only registers outside the falcons: (NVIDIA name, value).
    fn fixed_register(&self, offset: u32, machine: &Machine) -> Option<(&'static str, u32)> {
        use gc6::*;
        let silicon = crate::silicon::of(self.family());
        let ga102_or_later = silicon.usable_fb_size_register;
        let fuse_debug_dis = match silicon.gsp_debug_fuse {
            crate::silicon::GspDebugFuse::Tu102 => Some(boot::tu102::NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS::OFFSET),
            crate::silicon::GspDebugFuse::Ga100 => Some(boot::NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS::OFFSET),
            crate::silicon::GspDebugFuse::None => None,
        };
        let has_ucode_fuses = silicon.ucode_fuse_registers;
        let value = match offset {
            pmc::NV_PMC_BOOT_0::OFFSET => ("NV_PMC_BOOT_0", self.config.boot0()),
            pmc::NV_PMC_BOOT_42::OFFSET => ("NV_PMC_BOOT_42", self.config.boot42()),
            fb::NV_PFB_PRI_MMU_WPR2_ADDR_LO::OFFSET => ("NV_PFB_PRI_MMU_WPR2_ADDR_LO", machine.wpr2_lo),
            fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::OFFSET => ("NV_PFB_PRI_MMU_WPR2_ADDR_HI", machine.wpr2_hi),
            // Secure scratch: SEC2-RTOS writes the boot-stage-3 handoff, the CPU only reads it
            // (the sequencer's CORE_RESUME waits on it). A driver that wrote it would fake the
            // handoff.
            NV_PGC6_BSI_SECURE_SCRATCH_14::OFFSET => ("NV_PGC6_BSI_SECURE_SCRATCH_14", machine.bsi_scratch_14),
            NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::OFFSET => (
                "NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT",
                NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::default()
                    .with(
                        NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT::PROGRESS,
                        NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_0_GFW_BOOT_PROGRESS_COMPLETED,
                    )
                    .raw(),
            ),
            NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::OFFSET => (
                "NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK",
                NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::default()
                    .with(NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::READ_PROTECTION, 0xF)
                    .raw(),
            ),
            // Read by RM before GA102 (`kmemsysReadUsableFbSize_GP102`): the FB size devinit
            // found, as LOWER_MAG << (LOWER_SCALE + 20) bytes, ECC off.
            NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE::OFFSET => {
                ("NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE", local_memory_range(self.config.vram_bytes))
            }
            NV_USABLE_FB_SIZE_IN_MB::OFFSET if ga102_or_later => {
                ("NV_USABLE_FB_SIZE_IN_MB", (self.config.vram_bytes >> 20).min(u64::from(u32::MAX)) as u32)
            }
            o if Some(o) == silicon.fsp_boot_status => (
                "NV_THERM_I2CS_SCRATCH",
                therm::NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE::default()
                    .with(therm::NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE::STATUS, therm::FspBootStatus::Success as u32)
                    .raw(),
            ),
            o if Some(o) == fuse_debug_dis => (
                "NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS",
                if machine.debug_fused { SecureGspDebugDis::No as u32 } else { SecureGspDebugDis::Yes as u32 },
            ),
            o if has_ucode_fuses
                && (boot::NV_FUSE_OPT_FPF_SEC2_UCODE1_VERSION::OFFSET
                    ..boot::NV_FUSE_OPT_FPF_SEC2_UCODE1_VERSION::OFFSET + 4 * NV_FUSE_OPT_FPF_UCODE_VERSION_COUNT)
                    .contains(&o) =>
            {
                let index = ((o - boot::NV_FUSE_OPT_FPF_SEC2_UCODE1_VERSION::OFFSET) / 4) as usize;
                ("NV_FUSE_OPT_FPF_SEC2_UCODE<n>_VERSION", u32::from(machine.sec2_ucode_fuse[index]))
            }
            o if has_ucode_fuses
                && (boot::NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION::OFFSET
                    ..boot::NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION::OFFSET + 4 * NV_FUSE_OPT_FPF_UCODE_VERSION_COUNT)
                    .contains(&o) =>
            {
                let ucode_id = (o - boot::NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION::OFFSET) / 4 + 1;
                ("NV_FUSE_OPT_FPF_GSP_UCODE<n>_VERSION", machine.ucode_fuse(ucode_id))
            }
            _ => return None,
        };
        Some(value)
    }

    fn access(&self, offset: u32, write: Option<u32>) -> u32 {
        let kind = if write.is_some() { AccessKind::Write } else { AccessKind::Read };
        if write.is_some() {
            self.register_writes.set(self.register_writes.get() + 1);
        }
        let Ok(mut guard) = self.state.try_borrow_mut() else {
            // An access from inside another (a logger or callback re-entering the model):
            // refused, and recorded where the state's own log cannot be reached.
            let (count, first, first_kind) = self.reentrant.get();
            let (first, first_kind) = if count == 0 { (offset, kind) } else { (first, first_kind) };
            self.reentrant.set((count + 1, first, first_kind));
            return POISON;
        };
        let state = &mut *guard;
        let shown = write.unwrap_or(POISON);
        if !offset.is_multiple_of(4) {
            state.log.record(ModelError::Misaligned { offset, kind, value: shown });
            return POISON;
        }

        if Self::in_prom(offset) {
            return match write {
                None => self.prom_word(offset),
                Some(value) => {
                    state.log.record(ModelError::ReadOnly { register: "NV_PROM_DATA", offset, value });
                    0
                }
            };
        }

        if let Some((name, value)) = self.fixed_register(offset, &state.machine) {
            return match write {
                None => value,
                Some(written) => {
                    state.log.record(ModelError::ReadOnly { register: name, offset, value: written });
                    0
                }
            };
        }

        let scratch = bus::NV_PBUS_SW_SCRATCH::OFFSET;
        if offset >= scratch && offset < bus::NV_PBUS_SW_SCRATCH::address(bus::NV_PBUS_SW_SCRATCH__SIZE_1) {
            let index = ((offset - scratch) / 4) as usize;
            return match write {
                None => state.machine.scratch[index],
                Some(value) => {
                    state.machine.scratch[index] = value;
                    0
                }
            };
        }

        let storage = match offset {
            pmc::NV_PMC_ENABLE::OFFSET => Some(&mut state.pmc_enable),
            gc6::NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0::OFFSET => {
                Some(&mut state.frts_input_wpr_size)
            }
            _ => None,
        };
        if let Some(slot) = storage {
            return match write {
                None => *slot,
                Some(value) => {
                    *slot = value;
                    0
                }
            };
        }

        if (f::NVC361_BASE..f::NVC361_BASE + f::NVC361_NV_USERMODE_SIZE).contains(&offset) {
            return match (offset - f::NVC361_BASE, write) {
                (f::NVC361_NOTIFY_CHANNEL_PENDING, Some(token)) => {
                    self.doorbell(state, token);
                    0
                }
                (f::NVC361_TIME_0, None) => state.gpu_time_ns as u32,
                (f::NVC361_TIME_1, None) => (state.gpu_time_ns >> 32) as u32,
                _ => {
                    state.log.record(ModelError::Unmodelled(UnmodelledAccess { offset, kind, value: shown }));
                    POISON
                }
            };
        }

        if crate::fault_buffer::ReplayableFaultBuffer::claims(offset) {
            let value = state.fault_buffer.access(offset, write).unwrap_or_else(|error| {
                state.log.record(ModelError::FaultBuffer(error));
                0
            });
            if state.fault_buffer.take_notify() {
                state.intr.raise(crate::intr::REPLAYABLE_FAULT_VECTOR);
            }
            return value;
        }

        if crate::intr::InterruptTree::claims(offset) {
            return state.intr.access(offset, write).unwrap_or_else(|| {
                state.log.record(ModelError::ReadOnly {
                    register: "NV_VIRTUAL_FUNCTION_PRIV_CPU_INTR_TOP",
                    offset,
                    value: shown,
                });
                0
            });
        }

        if state.mm.claims(offset) {
            let GpuState { mm, memory, log, .. } = state;
            let sysmem: Option<&dyn SystemMemory> = match memory.as_deref() {
                Some(m) => Some(m),
                None => None,
            };
            return mm.access(offset, write, sysmem).unwrap_or_else(|_| {
                log.record(ModelError::Unmodelled(UnmodelledAccess { offset, kind, value: shown }));
                POISON
            });
        }

        if GspRm::claims(offset) {
            let mut value = 0;
            self.with_gsp(state, |gsp_rm, ctx| match write {
                None => value = gsp_rm.read_register(offset, ctx),
                Some(written) => gsp_rm.write_register(offset, written, ctx),
            });
            self.finish_events(state);
            return value;
        }

        let peer = state.falcons.iter().find(|f| f.engine() == FalconEngine::Gsp).map(Falcon::peer_view);
        let GpuState { machine, falcons, log, memory, .. } = state;
        let mut handled = None;
        let mut engine = None;
        if let Some(falcon) = falcons.iter_mut().find(|f| f.claims(offset)) {
            engine = Some(falcon.engine());
            let gsp = if falcon.engine() == FalconEngine::Sec2 { peer } else { None };
            let mut env = Env { log, memory: memory.as_deref(), machine, gsp };
            handled = match write {
                None => falcon.read(offset, &mut env),
                Some(value) => falcon.write(offset, value, &mut env).then_some(0),
            };
        }
        self.finish_events(state);
        if engine == Some(FalconEngine::Gsp) {
            self.with_gsp(state, |gsp_rm, ctx| gsp_rm.service(ctx));
        }
        if let Some(value) = handled {
            return value;
        }

        state.log.record(ModelError::Unmodelled(UnmodelledAccess { offset, kind, value: shown }));
        POISON
    }
}

/// Model time a doorbell's work takes, in ns (virtual time: deterministic).
const WORK_NS: u64 = 1_000;

/// Channels: the doorbell runs the host.
impl ModelGpu {
    /// `NVC361_NOTIFY_CHANNEL_PENDING` with `token`: runs that channel, then any channel blocked
    /// on a semaphore or released from a fault stall by a replay, until none makes progress.
    fn doorbell(&self, state: &mut GpuState, token: u32) {
        state.gpu_time_ns += WORK_NS;
        let Some(fifo) = state.gsp_rm.fifo_mut() else {
            state.log.record(ModelError::Doorbell { token, reason: "GSP-RM is not running" });
            return;
        };
        let Some(ch) = fifo.channel_by_token(token) else {
            state.log.record(ModelError::Doorbell { token, reason: "no channel has this work-submit token" });
            return;
        };
        if !ch.scheduled {
            state.log.record(ModelError::Doorbell { token, reason: "the channel is not scheduled" });
            return;
        }
        let first = ch.handle_key();
        let mut progress = self.run_channel(state, first);
        // Blocked channels may have been released by what just ran.
        while progress {
            progress = false;
            let blocked: Vec<(u32, u32)> = match state.gsp_rm.fifo_mut() {
                Some(fifo) => fifo.channels.iter().filter(|c| c.runnable()).map(|c| c.handle_key()).collect(),
                None => Vec::new(),
            };
            for key in blocked {
                progress |= self.run_channel(state, key);
            }
        }
    }

    /// Runs one channel; `true` when it consumed entries or finished.
    fn run_channel(&self, state: &mut GpuState, key: (u32, u32)) -> bool {
        use crate::engine_mem::PhysicalMemory as _;
        use crate::engines::{PhysView, SharedSpace, VirtView};
        use crate::host::RunOutcome;
        let family = self.config.chipset.family();
        let format = crate::silicon::of(family).mmu;
        let GpuState { mm, memory, gsp_rm, gpu_time_ns, log, intr, fault_buffer, replayable_faults, .. } = &mut *state;
        let Some(fifo) = gsp_rm.fifo_mut() else { return false };
        let pdb = fifo
            .channels
            .iter()
            .find(|c| c.handle_key() == key)
            .and_then(|c| fifo.vaspace(c.client, c.vaspace))
            .and_then(|v| v.pdb);
        let faulting = fifo
            .channels
            .iter()
            .find(|c| c.handle_key() == key)
            .and_then(|c| fifo.vaspace(c.client, c.vaspace))
            .is_some_and(|v| v.page_faulting);
        let instance = pdb;
        let Some(ch) = fifo.channels.iter_mut().find(|c| c.handle_key() == key) else { return false };
        if ch.error.is_some() {
            return false;
        }
        let Some(pdb) = pdb.and_then(crate::mmu::table_address) else {
            log.record(ModelError::Doorbell {
                token: ch.token(),
                reason: "the channel's VA space has no page directory",
            });
            return false;
        };
        let sysmem: Option<&dyn SystemMemory> = match memory.as_deref() {
            Some(m) => Some(m),
            None => None,
        };
        let before = ch.host.gp_get;
        let notifications = (ch.host.non_stall_interrupts, ch.engines.interrupts);
        ch.engines.timestamp_ns = *gpu_time_ns;
        let space = SharedSpace(core::cell::RefCell::new(mm.address_space(
            format,
            pdb,
            crate::mmu::MmuClient::host(family),
            sysmem,
        )));
        let mut effects = HostTime { now: *gpu_time_ns, space: &space, pdb, ops: Vec::new() };
        ch.engines.replayable = faulting && fault_buffer.enabled();
        ch.fault_stalled = false;
        ch.replay_released = false;
        let outcome = ch.host.run(&mut VirtView(&space), &mut PhysView(&space), &mut ch.engines, &mut effects);
        let ops = core::mem::take(&mut effects.ops);
        if let (RunOutcome::Stalled { subchannel }, Some(instance)) = (&outcome, instance) {
            // The MMU reports each stalled access: one packet per warp and page (a warp's lanes
            // share its uTLB request), in thread order.
            ch.fault_stalled = true;
            let mut reported: Vec<(u32, u64, u8)> = Vec::new();
            let mut raised = false;
            for stalled in ch.engines.stalled_accesses(*subchannel) {
                let page = stalled.fault.va & !0xfff;
                let access = stalled.fault.access as u8;
                if reported.contains(&(stalled.warp, page, access)) {
                    continue;
                }
                reported.push((stalled.warp, page, access));
                let record = replayable_record(family, instance, stalled, *gpu_time_ns);
                match fault_buffer.report(record, &mut PhysView(&space)) {
                    Ok(crate::fault_buffer::Delivery::Written { .. }) => raised = true,
                    Ok(_) => {}
                    Err(e) => log.record(ModelError::FaultBuffer(e)),
                }
            }
            if raised {
                *replayable_faults += 1;
            }
            if fault_buffer.take_notify() {
                intr.raise(crate::intr::REPLAYABLE_FAULT_VECTOR);
            }
        }
        // NON_STALL_INTERRUPT and copy launches with an interrupt raise the engine's
        // notification vector (latched: several before service show as one pending bit).
        if (ch.host.non_stall_interrupts, ch.engines.interrupts) != notifications {
            if let Some(vector) = crate::intr::nonstall_vector(ch.engine_type) {
                intr.raise(vector);
            }
        }
        let notifier = ch.error_notifier;
        let after = ch.host.gp_get;
        ch.blocked = matches!(outcome, RunOutcome::Blocked { .. });
        let progressed = (after != before && !ch.fault_stalled) || !ch_blocked_or_stalled(&outcome);
        let RunOutcome::Error(error) = outcome else {
            let released = Self::apply_fault_ops(fifo, fault_buffer, log, &ops);
            return released || progressed;
        };
        let xid = channel_error_xid(&error, ch.engine_type);
        ch.error = Some(xid);
        let (engine_type, runlist, chid) = (ch.engine_type, ch.runlist, ch.host.chid);
        Self::apply_fault_ops(fifo, fault_buffer, log, &ops);
        let text = alloc::format!("channel {chid}: {error}");
        log::warn!("GPU model: robust-channel error Xid {xid} on {text}");
        if let Some(at) = notifier {
            // NvNotification as RM fills it: timeStamp, info32 = Xid, info16 = the engine type,
            // status = RC_NOTIFIER_STATUS.
            let n = f::NvNotification {
                time_stamp: [*gpu_time_ns as u32, (*gpu_time_ns >> 32) as u32],
                info32: xid,
                info16: engine_type as u16,
                status: f::RC_NOTIFIER_STATUS,
            };
            let n = zerocopy::IntoBytes::as_bytes(&n);
            let _ = space.0.borrow_mut().mem.write_phys(at, n);
        }
        state.log.record(ModelError::ChannelError { chid, xid });
        self.with_gsp(state, |gsp_rm, ctx| gsp_rm.post_channel_error(engine_type, runlist, chid, xid, &text, ctx));
        true
    }
}

fn ch_blocked_or_stalled(outcome: &crate::host::RunOutcome) -> bool {
    matches!(outcome, crate::host::RunOutcome::Blocked { .. } | crate::host::RunOutcome::Stalled { .. })
}

/// The fault packet for an access a compute launch stalled on. The engine is graphics with
/// VEID 0 (the model runs one subcontext); the GPC and client are those of the uTLB the warp's
/// TPC uses: CTAs are placed on the model's TPCs in turn (`MODEL_TPCS`, two per GPC), and
/// `T1_{2n}` / `T1_{2n+1}` of TPC `n` serve its even and odd warps (`uvm_ampere_fault_buffer.h`'s
/// numbering). The instance is the context's page directory (the model's instance blocks are
/// named by their PDB).
fn replayable_record(
    family: Family,
    instance: crate::engine_mem::PhysAddr,
    stalled: &crate::ptx::StalledAccess,
    now: u64,
) -> crate::fault_buffer::FaultRecord {
    use crate::engine_mem::FaultKind;
    use nvgpu::hw::fault::FaultType;
    let fault_type = match stalled.fault.kind {
        FaultKind::InvalidPde => FaultType::Pde,
        FaultKind::InvalidPte => FaultType::Pte,
        FaultKind::ReadOnlyViolation => FaultType::RoViolation,
        FaultKind::AtomicViolation => FaultType::AtomicViolation,
        FaultKind::PrivilegeViolation => FaultType::PrivViolation,
        FaultKind::VaLimitViolation => FaultType::VaLimitViolation,
        _ => FaultType::Pde,
    };
    let access = crate::mmu::fault_access_type(stalled.fault.access);
    let per_gpc = crate::compute::MODEL_TPC_MASK_PER_GPC.count_ones();
    let cta = stalled.cta[0] as u64 + stalled.cta[1] as u64 * 7 + stalled.cta[2] as u64 * 13;
    let tpc = (cta % u64::from(crate::compute::MODEL_TPCS)) as u32;
    let client = crate::mmu::MmuClient::graphics(family, 0, (tpc / per_gpc) as u8);
    crate::fault_buffer::FaultRecord {
        instance,
        va: stalled.fault.va,
        fault_type,
        access,
        engine_id: client.engine_id,
        client: (2 * (tpc % per_gpc) + stalled.warp % 2) as u8,
        gpc: client.gpc_id,
        timestamp_ns: now,
    }
}

/// The Xid (`nverror.h`) RM reports for a host stop.
fn channel_error_xid(error: &crate::host::HostError, engine_type: u32) -> u32 {
    use crate::host::{EngineError, HostError};
    match error {
        HostError::Fault(_) | HostError::Engine { error: EngineError::Fault(_), .. } => {
            f::ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT
        }
        HostError::Engine { .. } if engine_type == f::NV2080_ENGINE_TYPE_GRAPHICS => f::ROBUST_CHANNEL_GR_EXCEPTION,
        HostError::Engine { .. } => {
            f::ROBUST_CHANNEL_CE0_ERROR + engine_type.saturating_sub(f::NV2080_ENGINE_TYPE_COPY0)
        }
        _ => f::ROBUST_CHANNEL_PBDMA_ERROR,
    }
}

/// The host's view of the GPU around it: time, and TLB invalidation of the running space.
struct HostTime<'s, 'a> {
    now: u64,
    space: &'s crate::engines::SharedSpace<'a>,
    pdb: crate::mmu::TableAddress,
    /// Replays and cancels the run asked for, applied when it ends.
    ops: Vec<FaultOp>,
}

/// A replay or cancel a channel pushed.
#[derive(Clone, Copy, Debug)]
enum FaultOp {
    Replay,
    Cancel { pdb: crate::engine_mem::PhysAddr, va: u64, access: nvgpu::hw::host::TlbInvalidateAccessType },
}

impl crate::host::HostEffects for HostTime<'_, '_> {
    fn timestamp_ns(&mut self) -> u64 {
        self.now
    }
    fn invalidate_tlb(&mut self) {
        self.space.0.borrow_mut().tlb.invalidate_pdb(self.pdb);
    }
    fn replay(&mut self, _ack_all: bool) {
        self.ops.push(FaultOp::Replay);
    }
    fn cancel_va(
        &mut self,
        pdb: crate::engine_mem::PhysAddr,
        va: u64,
        access: nvgpu::hw::host::TlbInvalidateAccessType,
        _mmu_engine_id: u16,
    ) {
        self.ops.push(FaultOp::Cancel { pdb, va, access });
    }
}

impl ModelGpu {
    /// Applies the replays and cancels of a run, in order: a cancel kills the stalled accesses
    /// to its page in the channels of the address space at its PDB; a replay releases every
    /// channel stalled on faults (they run again and re-fault what still misses). The fault
    /// buffer checks both (a replay with unread entries, a cancel of no fault: model errors).
    /// Whether a channel was released.
    fn apply_fault_ops(
        fifo: &mut crate::gsp_rm::fifo::Fifo,
        fault_buffer: &mut crate::fault_buffer::ReplayableFaultBuffer,
        log: &mut ErrorLog,
        ops: &[FaultOp],
    ) -> bool {
        let mut released = false;
        for op in ops {
            match *op {
                FaultOp::Replay => match fault_buffer.replay() {
                    Ok(_) => {
                        for ch in fifo.channels.iter_mut().filter(|c| c.fault_stalled) {
                            ch.replay_released = true;
                            released = true;
                        }
                    }
                    Err(e) => log.record(ModelError::FaultBuffer(e)),
                },
                FaultOp::Cancel { pdb, va, access } => match fault_buffer.cancel_va(pdb, va, access) {
                    Ok(_) => {
                        let spaces: Vec<(u32, u32)> =
                            fifo.vaspaces.iter().filter(|v| v.pdb == Some(pdb)).map(|v| (v.client, v.handle)).collect();
                        for ch in fifo.channels.iter_mut().filter(|c| spaces.contains(&(c.client, c.vaspace))) {
                            let covers =
                                |a| crate::fault_buffer::cancel_covers(access, crate::mmu::fault_access_type(a));
                            ch.engines.cancel_va(va, &covers);
                        }
                    }
                    Err(e) => log.record(ModelError::FaultBuffer(e)),
                },
            }
        }
        released
    }
}

/// BAR1: the CPU's aperture onto VRAM, translated through the BAR1 VA space whose root page
/// directory GSP-RM keeps ([`GspRm::bar1_pdb`], reported as `bar1PdeBase`). BAR1 offsets are VAs
/// of that space; the walk and the TLB are the model MMU's (client `NV_PFAULT_MMU_ENG_ID_BAR1`),
/// so a PTE changed without a TLB invalidate is not seen.
impl ModelGpu {
    /// GSP-RM just started: it clears the BAR1 root directory it keeps (no mappings yet).
    fn bind_bar1(state: &mut GpuState, family: Family) {
        let Some(pdb) = state.gsp_rm.bar1_pdb() else { return };
        let bytes = crate::silicon::of(family).mmu.root_table_bytes();
        let zeros = alloc::vec![0u8; bytes as usize];
        state.mm.vram.write(pdb, &zeros);
        state.mm.tlb.invalidate_pdb(crate::mmu::TableAddress::video(pdb));
    }

    /// Reads `buf.len()` bytes at BAR1 offset `offset`. `false` when any of it reached no VRAM
    /// (past the aperture, BAR1 not bound, an MMU fault): then `buf` is all 0xFF and the error
    /// is recorded (and the fault in the MMU fault log).
    pub fn bar1_read(&self, offset: u64, buf: &mut [u8]) -> bool {
        use crate::engine_mem::VirtualMemory as _;
        let ok = self.bar1_access(offset, buf.len(), false, |space| space.read(offset, buf));
        if !ok {
            buf.fill(0xFF);
        }
        ok
    }

    /// Writes `data` at BAR1 offset `offset`. `false` when any of it reached no VRAM: the bytes
    /// of the faulting page and after are dropped, and the error is recorded.
    pub fn bar1_write(&self, offset: u64, data: &[u8]) -> bool {
        use crate::engine_mem::VirtualMemory as _;
        self.bar1_access(offset, data.len(), true, |space| space.write(offset, data))
    }

    fn bar1_access(
        &self,
        offset: u64,
        len: usize,
        write: bool,
        f: impl FnOnce(&mut crate::mmu::AddressSpace<'_>) -> Result<(), crate::engine_mem::MmuFault>,
    ) -> bool {
        let Ok(mut guard) = self.state.try_borrow_mut() else { return false };
        let state = &mut *guard;
        let len = len as u64;
        let refuse = |log: &mut ErrorLog, reason, fault| {
            log.record(ModelError::Bar1 { offset, len, write, reason, fault });
            false
        };
        if offset.checked_add(len).is_none_or(|end| end > self.config.bars.bar1) {
            return refuse(&mut state.log, "beyond the BAR1 aperture", None);
        }
        let Some(pdb) = state.gsp_rm.bar1_pdb() else {
            return refuse(&mut state.log, "BAR1 is not bound (GSP-RM is not running)", None);
        };
        let pdb = crate::mmu::TableAddress::video(pdb);
        let family = self.family();
        let format = crate::silicon::of(family).mmu;
        let GpuState { mm, memory, log, .. } = state;
        let sysmem: Option<&dyn SystemMemory> = match memory.as_deref() {
            Some(m) => Some(m),
            None => None,
        };
        match f(&mut mm.address_space(format, pdb, MmuClient::bar1(family), sysmem)) {
            Ok(()) => true,
            Err(fault) => refuse(log, "MMU fault", Some(fault)),
        }
    }
}

/// The driver reaches the model's BAR1 as it reaches a real one.
impl nvgpu::mm::Bar1Access for ModelGpu {
    fn bar1_read(&self, offset: u64, buf: &mut [u8]) -> Result<(), nvgpu::mm::Bar1AccessError> {
        let len = buf.len() as u64;
        ModelGpu::bar1_read(self, offset, buf).then_some(()).ok_or(nvgpu::mm::Bar1AccessError {
            offset,
            len,
            write: false,
        })
    }

    fn bar1_write(&self, offset: u64, data: &[u8]) -> Result<(), nvgpu::mm::Bar1AccessError> {
        let len = data.len() as u64;
        ModelGpu::bar1_write(self, offset, data).then_some(()).ok_or(nvgpu::mm::Bar1AccessError {
            offset,
            len,
            write: true,
        })
    }
}

/// GPU memory: VRAM, and memory through the MMU for the model's engines and for tests.
impl ModelGpu {
    /// Reads VRAM at `addr`; `false` when the range is past its end.
    pub fn vram_read(&self, addr: u64, buf: &mut [u8]) -> bool {
        self.state.try_borrow().is_ok_and(|s| s.mm.vram.read(addr, buf))
    }

    /// Writes VRAM at `addr`; `false` (nothing written) when the range is past its end.
    pub fn vram_write(&self, addr: u64, data: &[u8]) -> bool {
        self.state.try_borrow_mut().is_ok_and(|mut s| s.mm.vram.write(addr, data))
    }

    /// Runs `f` with the address space rooted at `pdb` (the chip's MMU format), as `client`
    /// reaches it: accesses go through the TLB and the tables in memory, faults are logged.
    /// `None` if the model is already busy (re-entered from inside an access).
    pub fn with_address_space<R>(
        &self,
        pdb: impl Into<crate::mmu::TableAddress>,
        client: MmuClient,
        f: impl FnOnce(&mut crate::mmu::AddressSpace<'_>) -> R,
    ) -> Option<R> {
        let mut guard = self.state.try_borrow_mut().ok()?;
        let GpuState { mm, memory, .. } = &mut *guard;
        let sysmem: Option<&dyn SystemMemory> = match memory.as_deref() {
            Some(m) => Some(m),
            None => None,
        };
        let format = crate::silicon::of(self.config.chipset.family()).mmu;
        Some(f(&mut mm.address_space(format, pdb.into(), client, sysmem)))
    }

    /// Runs `f` with VRAM and system memory by physical address.
    pub fn with_physical_memory<R>(
        &self,
        f: impl FnOnce(&mut dyn crate::engine_mem::PhysicalMemory) -> R,
    ) -> Option<R> {
        let mut guard = self.state.try_borrow_mut().ok()?;
        let GpuState { mm, memory, .. } = &mut *guard;
        let sysmem: Option<&dyn SystemMemory> = match memory.as_deref() {
            Some(m) => Some(m),
            None => None,
        };
        Some(f(&mut crate::mmu::Memories { vram: &mut mm.vram, sysmem }))
    }

    /// Every MMU fault so far, oldest first.
    pub fn mmu_faults(&self) -> Vec<MmuFaultRecord> {
        self.state.try_borrow().map(|s| s.mm.faults.entries().to_vec()).unwrap_or_default()
    }

    /// Takes the MMU faults out of the log.
    pub fn take_mmu_faults(&self) -> Vec<MmuFaultRecord> {
        self.state.try_borrow_mut().map(|mut s| s.mm.faults.take()).unwrap_or_default()
    }

    /// The interrupt line to the CPU (what the kernel polls as its "MSI"): an enabled vector is
    /// pending in an enabled subtree.
    pub fn interrupt_pending(&self) -> bool {
        self.state.try_borrow().is_ok_and(|s| s.intr.line())
    }

    /// Interrupt vectors raised so far (pending or serviced).
    pub fn interrupts_raised(&self) -> u64 {
        self.state.try_borrow().map(|s| s.intr.raised).unwrap_or_default()
    }

    /// TLB invalidates performed so far.
    pub fn tlb_invalidates(&self) -> u64 {
        self.state.try_borrow().map(|s| s.mm.tlb.invalidates()).unwrap_or_default()
    }
}

const _: () = {
    const fn assert_send<T: Send>() {}
    assert_send::<ModelGpu>();
};

impl RegisterIo for ModelGpu {
    fn read32(&self, offset: u32) -> u32 {
        self.access(offset, None)
    }

    fn write32(&self, offset: u32, value: u32) {
        self.access(offset, Some(value));
    }
}

impl Bar0Read for ModelGpu {
    fn read_u32(&self, offset: u32) -> u32 {
        self.read32(offset)
    }
}

// ---------------------------------------------------------------------------------------------
// PCI configuration space (type 0 header).

/// PCI configuration space offsets (PCI Local Bus Specification 3.0, type 0 header).
mod pci {
    pub const VENDOR_DEVICE: u16 = 0x00;
    pub const COMMAND_STATUS: u16 = 0x04;
    pub const CLASS_REVISION: u16 = 0x08;
    pub const HEADER_TYPE: u16 = 0x0C;
    pub const BAR0: u16 = 0x10;
    pub const SUBSYSTEM: u16 = 0x2C;
    pub const INTERRUPT: u16 = 0x3C;
    /// Command register bits the model keeps: I/O, memory, bus master, parity, SERR, INTx disable.
    pub const COMMAND_WRITABLE: u32 = 0x0547;
    /// Memory BAR type bits: 64-bit (bits 2:1 = 10b) and prefetchable (bit 3).
    pub const BAR_64BIT_PREFETCHABLE: u32 = 0b1100;
}

/// A BAR slot of the type 0 header.
#[derive(Clone, Copy, Debug)]
struct BarSlot {
    size: u64,
    /// Type bits in the low nibble of the low dword.
    flags: u32,
    /// Whether this slot is the upper half of a 64-bit BAR.
    upper: bool,
}

#[derive(Clone, Debug)]
struct PciConfigSpace {
    identity: PciIdentity,
    command: u32,
    /// BAR registers 0..6 as last written (address bits only).
    bars: [u32; 6],
    slots: [Option<BarSlot>; 6],
    /// `Interrupt Line` (offset 0x3C), which firmware may write.
    interrupt_line: u8,
}

impl PciConfigSpace {
    fn new(identity: PciIdentity, sizes: BarSizes) -> Self {
        let bar = |size, flags| Some(BarSlot { size, flags, upper: false });
        let upper = |size, flags| Some(BarSlot { size, flags, upper: true });
        let prefetch = pci::BAR_64BIT_PREFETCHABLE;
        // PCI region 0: BAR0 (32-bit, non-prefetchable); regions 1-2: BAR1 (64-bit prefetchable);
        // regions 3-4: BAR2 (64-bit prefetchable); region 5: none.
        let slots = [
            bar(sizes.bar0, 0),
            bar(sizes.bar1, prefetch),
            upper(sizes.bar1, prefetch),
            bar(sizes.bar2, prefetch),
            upper(sizes.bar2, prefetch),
            None,
        ];
        Self { identity, command: 0, bars: [0; 6], slots, interrupt_line: 0 }
    }

    fn read32(&self, offset: u16) -> u32 {
        let id = &self.identity;
        match offset & !3 {
            pci::VENDOR_DEVICE => u32::from(id.vendor_id) | (u32::from(id.device_id) << 16),
            pci::COMMAND_STATUS => self.command,
            pci::CLASS_REVISION => {
                u32::from(id.revision_id) | (u32::from(id.prog_if) << 8) | (u32::from(id.class) << 16)
            }
            pci::HEADER_TYPE => 0,
            o @ pci::BAR0..=0x24 => {
                let index = usize::from((o - pci::BAR0) / 4);
                match self.slots[index] {
                    Some(slot) if slot.upper => self.bars[index],
                    Some(slot) => self.bars[index] | slot.flags,
                    None => 0,
                }
            }
            pci::SUBSYSTEM => u32::from(id.subsystem_vendor_id) | (u32::from(id.subsystem_id) << 16),
            // Interrupt pin INTA, and the line firmware wrote.
            pci::INTERRUPT => (1 << 8) | u32::from(self.interrupt_line),
            _ => 0,
        }
    }

    fn write32(&mut self, offset: u16, value: u32) -> Result<(), &'static str> {
        if !offset.is_multiple_of(4) {
            return Err("a misaligned dword write");
        }
        if offset >= 0x100 {
            return Err("beyond the 256-byte configuration header the model has");
        }
        match offset {
            pci::COMMAND_STATUS => self.command = value & pci::COMMAND_WRITABLE,
            o @ pci::BAR0..=0x24 => {
                let index = usize::from((o - pci::BAR0) / 4);
                let Some(slot) = self.slots[index] else { return Err("an empty BAR slot") };
                // Address bits below the size read back as zero; that is how software sizes BARs.
                let mask = !(slot.size.saturating_sub(1));
                self.bars[index] =
                    if slot.upper { (value as u64 & (mask >> 32)) as u32 } else { value & mask as u32 & !0xF };
            }
            // The interrupt line is the firmware's scratch byte; the pin is read-only.
            pci::INTERRUPT => self.interrupt_line = value as u8,
            pci::VENDOR_DEVICE | pci::CLASS_REVISION | pci::SUBSYSTEM => return Err("a read-only identity register"),
            _ => return Err("a register the model's configuration space does not implement"),
        }
        Ok(())
    }
}

/// `NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE` for `vram_bytes`: the smallest scale whose 6-bit
/// magnitude holds the size in MiB (rounded down to what the encoding can say).
fn local_memory_range(vram_bytes: u64) -> u32 {
    let mib = vram_bytes >> 20;
    let mut scale = 0u32;
    while scale < 15 && (mib >> scale) > 0x3f {
        scale += 1;
    }
    let mag = ((mib >> scale) & 0x3f) as u32;
    mag << 4 | scale
}

#[cfg(test)]
mod local_memory_range_tests {
    use super::*;

    #[test]
    fn a_reentrant_access_is_refused_and_recorded_not_lost() {
        let model = ModelGpu::new(ModelConfig::h200());
        let boot0 = model.read32(0);
        assert_ne!(boot0, POISON);
        {
            // Another access still running (a callback of it re-entering the model).
            let _running = model.state.borrow_mut();
            assert_eq!(model.read32(0), POISON);
            model.write32(0x1700, 1);
        }
        let errors = model.take_errors();
        assert_eq!(errors, vec![ModelError::Reentrant { count: 2, offset: 0, kind: AccessKind::Read }]);
        assert!(model.take_errors().is_empty(), "taken once");
    }

    #[test]
    fn the_cpu_cannot_write_the_secure_boot_stage_scratch() {
        use nvgpu::hw::gc6::NV_PGC6_BSI_SECURE_SCRATCH_14 as S14;
        let model = ModelGpu::new(ModelConfig::rtx3090());
        model.write32(S14::OFFSET, 1 << S14::BOOT_STAGE_3_HANDOFF.bits.lo);
        assert_eq!(model.read32(S14::OFFSET), 0, "the handoff is SEC2's to set, not the driver's");
        assert!(
            matches!(
                model.take_errors().as_slice(),
                [ModelError::ReadOnly { register: "NV_PGC6_BSI_SECURE_SCRATCH_14", .. }]
            ),
            "the refused write is recorded"
        );
    }

    #[test]
    fn register_writes_are_counted_reads_are_not() {
        let model = ModelGpu::new(ModelConfig::h200());
        for _ in 0..5 {
            model.read32(0);
        }
        assert_eq!(model.register_writes(), 0);
        model.write32(0x1700, 0);
        assert_eq!(model.register_writes(), 1);
    }

    #[test]
    fn encodes_the_fb_size_the_driver_decodes() {
        for gib in [11u64, 24, 40, 80, 141] {
            let raw = local_memory_range(gib << 30);
            let decoded = NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE::from_raw(raw).usable_fb_size();
            assert!(decoded <= gib << 30 && decoded * 64 >= (gib << 30) * 63, "{gib} GiB -> {raw:#x} -> {decoded:#x}");
        }
    }
}
