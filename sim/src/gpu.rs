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
//! | `NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0`, `NV_PGC6_BSI_SECURE_SCRATCH_14` | read/write storage, 0 at power on |
//! | `NV_USABLE_FB_SIZE_IN_MB` (GA10x and later) | VRAM in MiB, read-only |
//! | `NV_THERM_I2CS_SCRATCH` (Hopper, Blackwell; per HAL) | `FSP_BOOT_COMPLETE_STATUS` = SUCCESS, read-only |
//! | `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` (TU102 / GA100+ offsets) | `DATA_YES` (production) unless `debug_fused`, read-only |
//! | `NV_FUSE_OPT_FPF_GSP_UCODE<n>_VERSION` (GA100, GA10x, Ada) | `fwsec_ucode_fuse` for the FWSEC ucode id, 0 for the others, read-only |
//! | falcons | see [`crate::falcon`] |
//!
//! Anything else reads [`POISON`] and is recorded as an [`UnmodelledAccess`]; writes to it are
//! dropped and recorded. Accesses at offsets that are not multiples of 4 are recorded as
//! misaligned and treated the same way.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::RefCell;

use nvgpu::chip::Chipset;
use nvgpu::hal::{self, Family};
use nvgpu::hw::{bus, fb, gc6, pmc, therm, RegisterIo};
use nvgpu::vbios::{Bar0Read, NV_PROM_DATA_BASE, PROM_WINDOW_SIZE};

use crate::board::{BarSizes, ModelConfig, PciIdentity};
use crate::error::{AccessKind, ModelError, UnmodelledAccess, POISON};
use crate::facts_pending::*;
use crate::falcon::{Env, Falcon, FalconSpec};
use crate::memory::SystemMemory;
use crate::vbios_builder::{self, BuiltVbios, FWSEC_UCODE_ID};

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

/// Chip-wide state the falcons' ucode can change.
pub(crate) struct Machine {
    pub vram_bytes: u64,
    pub debug_fused: bool,
    fwsec_ucode_fuse: u16,
    scratch: [u32; bus::NV_PBUS_SW_SCRATCH__SIZE_1 as usize],
    wpr2_lo: u32,
    wpr2_hi: u32,
}

impl Machine {
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
    bsi_scratch_14: u32,
    memory: Option<Box<dyn SystemMemory + Send>>,
    pci: PciConfigSpace,
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
}

impl ModelGpu {
    /// A model of the GPU `config` describes, at power on (boot firmware done, FSP booted).
    pub fn new(config: ModelConfig) -> Self {
        let vbios = vbios_builder::build(&config);
        let hal = hal::for_chipset(config.chipset);
        let falcons = hal
            .falcons
            .iter()
            .map(|&unit| Falcon::new(FalconSpec::for_unit(unit, hal.falcon_layout, hal.family, config.scrub_polls)))
            .collect();
        let state = GpuState {
            machine: Machine {
                vram_bytes: config.vram_bytes,
                debug_fused: config.debug_fused,
                fwsec_ucode_fuse: config.fwsec_ucode_fuse,
                scratch: [0; bus::NV_PBUS_SW_SCRATCH__SIZE_1 as usize],
                wpr2_lo: 0,
                wpr2_hi: 0,
            },
            falcons,
            log: ErrorLog::default(),
            pmc_enable: 0,
            frts_input_wpr_size: 0,
            bsi_scratch_14: 0,
            memory: None,
            pci: PciConfigSpace::new(config.pci, config.bars),
        };
        Self { config, vbios, state: RefCell::new(state) }
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
        self.state.try_borrow().map(|s| s.log.0.clone()).unwrap_or_default()
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
        self.state.try_borrow_mut().map(|mut s| core::mem::take(&mut s.log.0)).unwrap_or_default()
    }

    /// WPR2 as FWSEC-FRTS left it: (first byte, last byte), or `None` while not set up.
    pub fn wpr2(&self) -> Option<(u64, u64)> {
        let state = self.state.try_borrow().ok()?;
        let lo = fb::NV_PFB_PRI_MMU_WPR2_ADDR_LO::from_raw(state.machine.wpr2_lo);
        let hi = fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::from_raw(state.machine.wpr2_hi);
        hi.last_unit_address().map(|last| (lo.start_address(), last + 0xFFF))
    }

    /// Reads 32 bits of PCI configuration space at `offset` (a multiple of 4 below 256).
    pub fn pci_config_read32(&self, offset: u16) -> u32 {
        self.state.try_borrow().map(|s| s.pci.read32(offset)).unwrap_or(u32::MAX)
    }

    /// Writes 32 bits of PCI configuration space (command register and BARs are writable; BARs
    /// answer the all-ones sizing probe with their size mask).
    pub fn pci_config_write32(&self, offset: u16, value: u32) {
        if let Ok(mut state) = self.state.try_borrow_mut() {
            state.pci.write32(offset, value);
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
        let family = self.family();
        let ga102_or_later = !matches!(family, Family::Turing | Family::Ga100);
        let fuse_debug_dis = match family {
            Family::Turing => Some(NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_TU102),
            Family::Ga100 | Family::Ga10x | Family::Ada | Family::Hopper => {
                Some(NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_GA100)
            }
            Family::BlackwellGb10x | Family::BlackwellGb20x => None,
        };
        let has_ucode_fuses = matches!(family, Family::Ga100 | Family::Ga10x | Family::Ada);
        let value = match offset {
            pmc::NV_PMC_BOOT_0::OFFSET => ("NV_PMC_BOOT_0", self.config.boot0()),
            pmc::NV_PMC_BOOT_42::OFFSET => ("NV_PMC_BOOT_42", self.config.boot42()),
            fb::NV_PFB_PRI_MMU_WPR2_ADDR_LO::OFFSET => ("NV_PFB_PRI_MMU_WPR2_ADDR_LO", machine.wpr2_lo),
            fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::OFFSET => ("NV_PFB_PRI_MMU_WPR2_ADDR_HI", machine.wpr2_hi),
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
            NV_USABLE_FB_SIZE_IN_MB::OFFSET if ga102_or_later => {
                ("NV_USABLE_FB_SIZE_IN_MB", (self.config.vram_bytes >> 20).min(u64::from(u32::MAX)) as u32)
            }
            o if Some(o) == hal::for_chipset(self.config.chipset).fsp_boot_status => (
                "NV_THERM_I2CS_SCRATCH",
                therm::NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE::default()
                    .with(therm::NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE::STATUS, therm::FspBootStatus::Success as u32)
                    .raw(),
            ),
            o if Some(o) == fuse_debug_dis => (
                "NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS",
                if machine.debug_fused {
                    NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_NO
                } else {
                    NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS_DATA_YES
                },
            ),
            o if has_ucode_fuses
                && (NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION
                    ..NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION + 4 * FPF_GSP_UCODE_VERSION_COUNT)
                    .contains(&o) =>
            {
                let ucode_id = (o - NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION) / 4 + 1;
                ("NV_FUSE_OPT_FPF_GSP_UCODE<n>_VERSION", machine.ucode_fuse(ucode_id))
            }
            _ => return None,
        };
        Some(value)
    }

    fn access(&self, offset: u32, write: Option<u32>) -> u32 {
        let Ok(mut guard) = self.state.try_borrow_mut() else {
            // Only reachable if a logger re-entered the model from inside an access.
            return POISON;
        };
        let state = &mut *guard;
        let kind = if write.is_some() { AccessKind::Write } else { AccessKind::Read };
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
            gc6::NV_PGC6_BSI_SECURE_SCRATCH_14::OFFSET => Some(&mut state.bsi_scratch_14),
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

        let GpuState { machine, falcons, log, memory, .. } = state;
        if let Some(falcon) = falcons.iter_mut().find(|f| f.claims(offset)) {
            let mut env = Env { log, memory: memory.as_deref(), machine };
            let handled = match write {
                None => falcon.read(offset, &mut env),
                Some(value) => falcon.write(offset, value, &mut env).then_some(0),
            };
            if let Some(value) = handled {
                return value;
            }
        }

        log.record(ModelError::Unmodelled(UnmodelledAccess { offset, kind, value: shown }));
        POISON
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
        Self { identity, command: 0, bars: [0; 6], slots }
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
            // Interrupt pin INTA.
            pci::INTERRUPT => 1 << 8,
            _ => 0,
        }
    }

    fn write32(&mut self, offset: u16, value: u32) {
        match offset & !3 {
            pci::COMMAND_STATUS => self.command = value & pci::COMMAND_WRITABLE,
            o @ pci::BAR0..=0x24 => {
                let index = usize::from((o - pci::BAR0) / 4);
                let Some(slot) = self.slots[index] else { return };
                // Address bits below the size read back as zero; that is how software sizes BARs.
                let mask = !(slot.size.saturating_sub(1));
                self.bars[index] =
                    if slot.upper { (value as u64 & (mask >> 32)) as u32 } else { value & mask as u32 & !0xF };
            }
            _ => {}
        }
    }
}
