//! What each family's silicon is, as the model builds it: the model's own description of its
//! boards, written from NVIDIA's headers, RM's sources and the CUDA documentation independently
//! of the driver's HAL (`nvgpu::hal`). Values that are header facts (class numbers, register
//! offsets, fault engine ids, QMD field positions) are imported from `nvgpu::hw`, where each is
//! declared once and checked against its header; which of them a family has is written here.
//!
//! Every family choice of the model is read from this table; no other module of the model
//! matches on the family. `tests::the_model_and_the_driver_agree_on_every_family` compares the
//! table with the driver's HAL where both describe the same thing, so a mistake in either is a
//! disagreement, not an agreement.

use nvgpu::hal::{BootFlow, FalconLayout, Family};
use nvgpu::hw::engine::{self, FalconEngine, FalconUnit};
use nvgpu::hw::pramin::WindowRegister;
use nvgpu::hw::qmd::{self, QmdLayout};
use nvgpu::hw::{classes, compute, fault, therm};

use crate::booter::BooterLoadStyle;
use crate::gsp_rm::image::GspRmBuild;
use crate::mmu::GmmuFormat;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The classes the model's engines implement and its GSP-RM lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Classes {
    pub channel: u32,
    pub copy: u32,
    pub compute: u32,
    pub usermode: u32,
}

/// MMU engine ids of the units that reach the model's MMU, as fault packets carry them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultEngineIds {
    pub ce0: u16,
    pub host0: u16,
    pub bar1: u16,
    /// The graphics engine; the VEID is added to it.
    pub graphics: u16,
}

/// The method that launches a QMD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchMethod {
    /// `NVC5C0_SEND_SIGNALING_PCAS_B` with `INVALIDATE` and `SCHEDULE` (Turing).
    PcasB,
    /// `NVC6C0_SEND_SIGNALING_PCAS2_B` with `PCAS_ACTION_INVALIDATE_COPY_SCHEDULE` (Ampere on).
    Pcas2B,
}

/// Which FWSEC descriptor the VBIOS carries (`FALCON_UCODE_DESC_V2`/`_V3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FwsecDescriptor {
    V2,
    V3,
}

/// One family's silicon.
#[derive(Clone, Copy, Debug)]
pub struct Silicon {
    pub family: Family,

    // The board.
    /// Compute-only parts (GA100, GH100, GB10x): PCI class 3D controller and Tesla branding.
    pub compute_only: bool,
    /// HBM (the data-centre parts) rather than GDDR.
    pub hbm: bool,
    /// The generic board's VRAM and BAR1 sizes (model choices: consumer 8 GiB / 256 MiB).
    pub vram_bytes: u64,
    pub bar1_bytes: u64,
    /// The major byte of BIOSDATA `Version` (0x90 Turing .. 0x96 Hopper, as NVIDIA's ROMs and
    /// public dumps show; 0x97 GB10x and 0x98 GB20x by the same pattern).
    pub bios_major: u8,

    // Boot.
    /// How the chip's boot firmware chain runs.
    pub boot_flow: BootFlow,
    /// The FWSEC descriptor of the VBIOS: v2 where FWSEC runs through the generic bootloader.
    pub fwsec_descriptor: FwsecDescriptor,
    /// The falcon engines present, and where.
    pub falcons: &'static [FalconUnit],
    pub falcon_layout: FalconLayout,
    /// Whether a falcon reset reports its status (`NV_PFALCON_FALCON_ENGINE_RESET_STATUS`,
    /// Hopper on).
    pub falcon_reset_status: bool,
    /// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS`: TU102's offset, GA100's (GA100 to Hopper), or none
    /// (Blackwell, which 535 does not describe).
    pub gsp_debug_fuse: GspDebugFuse,
    /// The per-ucode fuse-version registers RM reads for SEC2 and GSP (GA100, GA10x, Ada).
    pub ucode_fuse_registers: bool,
    /// Whether SEC2 ucode fuse versions exist at all (not on Turing).
    pub sec2_fuse_versions: bool,
    /// `NV_USABLE_FB_SIZE_IN_MB` (GA102 and later).
    pub usable_fb_size_register: bool,
    /// The FSP's boot-complete scratch register (`NV_THERM_I2CS_SCRATCH`, Hopper on).
    pub fsp_boot_status: Option<u32>,
    /// Which GSP-RM build of 535 runs on the chip.
    pub gsp_rm_build: Option<GspRmBuild>,
    /// How a booter is loaded; `None` where there is no booter (the FSP's chain of trust).
    pub booter: Option<BooterLoadStyle>,

    // Memory.
    /// The page-table format of the chip's MMU.
    pub mmu: GmmuFormat,
    /// Where the PRAMIN window is placed (none modelled for Blackwell, which 535 lacks).
    pub pramin_window: Option<WindowRegister>,
    pub fault_ids: FaultEngineIds,

    // Compute.
    pub classes: Classes,
    /// Compute capability, major * 10 + minor.
    pub sm_version: u32,
    /// Resident warps per SM (`SM_info.maxWarpsPerSM` the model reports).
    pub max_warps_per_sm: u32,
    /// The QMD layout the compute class reads.
    pub qmd: QmdLayout,
    /// The method that launches a QMD.
    pub launch_method: LaunchMethod,
    /// Where the kernel parameters start in constant bank 0 (`EIATTR_PARAM_CBANK` of ptxas's
    /// cubins: 0x160 up to sm_89, 0x210 on sm_90, 0x380 on sm_100 and sm_120).
    pub param_cbank_offset: u32,
    /// The SM's shared-memory capacities in KiB, smallest first (CUDA C++ Programming Guide,
    /// "Compute Capabilities", table of shared memory per SM).
    pub shared_carveouts_kib: &'static [u64],
    /// Shared memory reserved per CTA for the system (1 KiB from 8.0 on, none on 7.5).
    pub shared_reserved_per_cta: u64,
    /// Bits of `SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER` the compute class keeps.
    pub local_memory_upper_bits: u32,
}

/// Which `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` a chip has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GspDebugFuse {
    Tu102,
    Ga100,
    None,
}

impl Silicon {
    /// The engine `engine`, if the chip has it.
    pub fn falcon(&self, engine: FalconEngine) -> Option<&'static FalconUnit> {
        self.falcons.iter().find(|u| u.engine == engine)
    }

    /// The largest shared-memory carveout, bytes.
    pub const fn max_shared_per_sm(&self) -> u64 {
        match self.shared_carveouts_kib.last() {
            Some(&kib) => kib << 10,
            None => 0,
        }
    }

    /// The most shared memory one CTA may use: the largest carveout less the reserve.
    pub const fn max_shared_per_cta(&self) -> u64 {
        self.max_shared_per_sm() - self.shared_reserved_per_cta
    }

    /// Whether the QMD carries the shared-memory configuration fields.
    pub fn qmd_has_sm_config(&self) -> bool {
        self.qmd.field(qmd::Semantic::MinSmConfigSharedMemSize).is_some()
    }
}

/// The silicon of `family`.
pub const fn of(family: Family) -> &'static Silicon {
    match family {
        Family::Turing => &TURING,
        Family::Ga100 => &GA100,
        Family::Ga10x => &GA10X,
        Family::Ada => &ADA,
        Family::Hopper => &HOPPER,
        Family::BlackwellGb10x => &GB10X,
        Family::BlackwellGb20x => &GB20X,
    }
}

/// Every family the model builds.
pub const ALL: [&Silicon; 7] = [&TURING, &GA100, &GA10X, &ADA, &HOPPER, &GB10X, &GB20X];

const GSP: FalconUnit = FalconUnit {
    engine: FalconEngine::Gsp,
    base: engine::GSP_BASE,
    riscv_base: Some(engine::NV_FALCON2_GSP_BASE),
    fbif_base: Some(engine::NV_PGSP_FBIF_BASE),
};
/// SEC2 before GA102 has no RISC-V core.
const SEC2_FALCON: FalconUnit = FalconUnit {
    engine: FalconEngine::Sec2,
    base: engine::SEC2_BASE,
    riscv_base: None,
    fbif_base: Some(engine::NV_PSEC_FBIF_BASE),
};
const SEC2_RISCV: FalconUnit = FalconUnit { riscv_base: Some(engine::NV_FALCON2_SEC_BASE), ..SEC2_FALCON };
/// Under the FSP, GSP's DMA is set up by its first-stage firmware, not through its FBIF.
const GSP_UNDER_FSP: FalconUnit = FalconUnit { fbif_base: None, ..GSP };
const FSP: FalconUnit =
    FalconUnit { engine: FalconEngine::Fsp, base: engine::FSP_BASE, riscv_base: None, fbif_base: None };

const TU102_FAULT_IDS: FaultEngineIds = FaultEngineIds {
    ce0: fault::tu102::NV_PFAULT_MMU_ENG_ID_CE0,
    host0: fault::tu102::NV_PFAULT_MMU_ENG_ID_HOST0,
    bar1: fault::tu102::NV_PFAULT_MMU_ENG_ID_BAR1,
    graphics: fault::tu102::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
};
const GH100_FAULT_IDS: FaultEngineIds = FaultEngineIds {
    ce0: fault::gh100::NV_PFAULT_MMU_ENG_ID_CE0,
    host0: fault::gh100::NV_PFAULT_MMU_ENG_ID_HOST0,
    bar1: fault::gh100::NV_PFAULT_MMU_ENG_ID_BAR1,
    graphics: fault::gh100::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
};

/// 7.5: 32 or 64 KiB, nothing reserved.
const CARVEOUTS_7_5: &[u64] = &[32, 64];
/// 8.0: up to 164 KiB.
const CARVEOUTS_8_0: &[u64] = &[0, 8, 16, 32, 64, 100, 132, 164];
/// 8.6, 8.9 and 12.0: up to 100 KiB.
const CARVEOUTS_8_6: &[u64] = &[0, 8, 16, 32, 64, 100];
/// 9.0 and 10.0: up to 228 KiB.
const CARVEOUTS_9_0: &[u64] = &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228];

const AMPERE_LOCAL_UPPER: u32 = compute::NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width();

static TURING: Silicon = Silicon {
    family: Family::Turing,
    compute_only: false,
    hbm: false,
    vram_bytes: 8 * GIB,
    bar1_bytes: 256 * MIB,
    bios_major: 0x90,
    boot_flow: BootFlow::FwsecBootloader,
    fwsec_descriptor: FwsecDescriptor::V2,
    falcons: &[GSP, SEC2_FALCON],
    falcon_layout: FalconLayout::Tu102,
    falcon_reset_status: false,
    gsp_debug_fuse: GspDebugFuse::Tu102,
    ucode_fuse_registers: false,
    sec2_fuse_versions: false,
    usable_fb_size_register: false,
    fsp_boot_status: None,
    gsp_rm_build: Some(GspRmBuild::Tu10x),
    booter: Some(BooterLoadStyle::Direct),
    mmu: GmmuFormat::Ver2,
    pramin_window: Some(WindowRegister::Pbus),
    fault_ids: TU102_FAULT_IDS,
    classes: Classes {
        channel: classes::TURING_CHANNEL_GPFIFO_A,
        copy: classes::TURING_DMA_COPY_A,
        compute: classes::TURING_COMPUTE_A,
        usermode: classes::TURING_USERMODE_A,
    },
    sm_version: 75,
    max_warps_per_sm: 32,
    qmd: qmd::TURING,
    launch_method: LaunchMethod::PcasB,
    param_cbank_offset: 0x160,
    shared_carveouts_kib: CARVEOUTS_7_5,
    shared_reserved_per_cta: 0,
    local_memory_upper_bits: compute::NVC5C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
};

static GA100: Silicon = Silicon {
    family: Family::Ga100,
    compute_only: true,
    hbm: true,
    vram_bytes: 40 * GIB,
    bar1_bytes: 64 * GIB,
    bios_major: 0x92,
    boot_flow: BootFlow::FwsecBootloader,
    fwsec_descriptor: FwsecDescriptor::V2,
    falcons: &[GSP, SEC2_FALCON],
    falcon_layout: FalconLayout::Tu102,
    falcon_reset_status: false,
    gsp_debug_fuse: GspDebugFuse::Ga100,
    ucode_fuse_registers: true,
    sec2_fuse_versions: true,
    usable_fb_size_register: false,
    fsp_boot_status: None,
    gsp_rm_build: Some(GspRmBuild::Tu10x),
    booter: Some(BooterLoadStyle::Direct),
    mmu: GmmuFormat::Ver2Pages512M,
    pramin_window: Some(WindowRegister::Pbus),
    fault_ids: TU102_FAULT_IDS,
    classes: Classes {
        channel: classes::AMPERE_CHANNEL_GPFIFO_A,
        copy: classes::AMPERE_DMA_COPY_A,
        compute: classes::AMPERE_COMPUTE_A,
        usermode: classes::AMPERE_USERMODE_A,
    },
    sm_version: 80,
    max_warps_per_sm: 64,
    qmd: qmd::AMPERE,
    launch_method: LaunchMethod::Pcas2B,
    param_cbank_offset: 0x160,
    shared_carveouts_kib: CARVEOUTS_8_0,
    shared_reserved_per_cta: 1 << 10,
    local_memory_upper_bits: AMPERE_LOCAL_UPPER,
};

static GA10X: Silicon = Silicon {
    family: Family::Ga10x,
    compute_only: false,
    hbm: false,
    vram_bytes: 8 * GIB,
    bar1_bytes: 256 * MIB,
    bios_major: 0x94,
    boot_flow: BootFlow::FwsecFrtsBooter,
    fwsec_descriptor: FwsecDescriptor::V3,
    falcons: &[GSP, SEC2_RISCV],
    falcon_layout: FalconLayout::Ga102,
    falcon_reset_status: false,
    gsp_debug_fuse: GspDebugFuse::Ga100,
    ucode_fuse_registers: true,
    sec2_fuse_versions: true,
    usable_fb_size_register: true,
    fsp_boot_status: None,
    gsp_rm_build: Some(GspRmBuild::Ga10x),
    booter: Some(BooterLoadStyle::FromHs),
    mmu: GmmuFormat::Ver2Pages512M,
    pramin_window: Some(WindowRegister::Pbus),
    fault_ids: TU102_FAULT_IDS,
    classes: Classes {
        channel: classes::AMPERE_CHANNEL_GPFIFO_A,
        copy: classes::AMPERE_DMA_COPY_B,
        compute: classes::AMPERE_COMPUTE_B,
        usermode: classes::AMPERE_USERMODE_A,
    },
    sm_version: 86,
    max_warps_per_sm: 48,
    qmd: qmd::AMPERE,
    launch_method: LaunchMethod::Pcas2B,
    param_cbank_offset: 0x160,
    shared_carveouts_kib: CARVEOUTS_8_6,
    shared_reserved_per_cta: 1 << 10,
    local_memory_upper_bits: AMPERE_LOCAL_UPPER,
};

static ADA: Silicon = Silicon {
    family: Family::Ada,
    bios_major: 0x95,
    classes: Classes { compute: classes::ADA_COMPUTE_A, ..GA10X.classes },
    sm_version: 89,
    qmd: qmd::ADA,
    local_memory_upper_bits: compute::NVC9C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    ..GA10X
};

static HOPPER: Silicon = Silicon {
    family: Family::Hopper,
    compute_only: true,
    hbm: true,
    vram_bytes: 80 * GIB,
    bar1_bytes: 128 * GIB,
    bios_major: 0x96,
    boot_flow: BootFlow::FspChainOfTrust,
    fwsec_descriptor: FwsecDescriptor::V3,
    falcons: &[GSP_UNDER_FSP, FSP],
    falcon_layout: FalconLayout::Ga102,
    falcon_reset_status: true,
    gsp_debug_fuse: GspDebugFuse::Ga100,
    ucode_fuse_registers: false,
    sec2_fuse_versions: true,
    usable_fb_size_register: true,
    fsp_boot_status: Some(therm::NV_THERM_I2CS_SCRATCH::OFFSET),
    gsp_rm_build: Some(GspRmBuild::Ga10x),
    booter: None,
    mmu: GmmuFormat::Ver3,
    pramin_window: Some(WindowRegister::XalEp),
    fault_ids: GH100_FAULT_IDS,
    classes: Classes {
        channel: classes::HOPPER_CHANNEL_GPFIFO_A,
        copy: classes::HOPPER_DMA_COPY_A,
        compute: classes::HOPPER_COMPUTE_A,
        usermode: classes::HOPPER_USERMODE_A,
    },
    sm_version: 90,
    max_warps_per_sm: 64,
    qmd: qmd::HOPPER,
    launch_method: LaunchMethod::Pcas2B,
    param_cbank_offset: 0x210,
    shared_carveouts_kib: CARVEOUTS_9_0,
    shared_reserved_per_cta: 1 << 10,
    local_memory_upper_bits: compute::NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
};

static GB10X: Silicon = Silicon {
    family: Family::BlackwellGb10x,
    vram_bytes: 180 * GIB,
    bar1_bytes: 256 * GIB,
    bios_major: 0x97,
    gsp_debug_fuse: GspDebugFuse::None,
    fsp_boot_status: Some(therm::gb100::NV_THERM_I2CS_SCRATCH::OFFSET),
    gsp_rm_build: None,
    pramin_window: None,
    classes: Classes {
        channel: classes::BLACKWELL_CHANNEL_GPFIFO_A,
        copy: classes::BLACKWELL_DMA_COPY_A,
        compute: classes::BLACKWELL_COMPUTE_A,
        usermode: classes::HOPPER_USERMODE_A,
    },
    sm_version: 100,
    qmd: qmd::BLACKWELL,
    param_cbank_offset: 0x380,
    // Blackwell's compute classes are not declared in `hw::compute`; the narrower Ampere field.
    local_memory_upper_bits: AMPERE_LOCAL_UPPER,
    ..HOPPER
};

static GB20X: Silicon = Silicon {
    family: Family::BlackwellGb20x,
    compute_only: false,
    hbm: false,
    vram_bytes: 8 * GIB,
    bar1_bytes: 256 * MIB,
    bios_major: 0x98,
    fsp_boot_status: Some(therm::gb202::NV_THERM_I2CS_SCRATCH::OFFSET),
    classes: Classes {
        channel: classes::BLACKWELL_CHANNEL_GPFIFO_B,
        copy: classes::BLACKWELL_DMA_COPY_B,
        compute: classes::BLACKWELL_COMPUTE_B,
        usermode: classes::BLACKWELL_USERMODE_A,
    },
    sm_version: 120,
    max_warps_per_sm: 48,
    shared_carveouts_kib: CARVEOUTS_8_6,
    ..GB10X
};

#[cfg(test)]
mod tests {
    use super::*;
    use nvgpu::hal;

    /// The model's table and the driver's HAL were written apart; where both describe the same
    /// thing they must agree. A disagreement is a mistake in one of them, found here rather
    /// than agreed with at run time.
    #[test]
    fn the_model_and_the_driver_agree_on_every_family() {
        for s in ALL {
            let h = hal::for_family(s.family);
            let f = s.family;
            assert_eq!(of(f).family, f);
            assert_eq!(s.boot_flow, h.boot_flow, "{f:?} boot flow");
            assert_eq!(s.falcon_layout, h.falcon_layout, "{f:?} falcon layout");
            let engines = |units: &[FalconUnit]| {
                units.iter().map(|u| (u.engine, u.base, u.riscv_base, u.fbif_base)).collect::<std::vec::Vec<_>>()
            };
            assert_eq!(engines(s.falcons), engines(h.falcons), "{f:?} falcons");
            assert_eq!(s.fsp_boot_status, h.fsp_boot_status, "{f:?} FSP boot status register");
            assert_eq!(s.falcon_reset_status, h.gsp_reset_status, "{f:?} reset status");
            assert_eq!(s.booter == Some(BooterLoadStyle::FromHs), h.ga102_booter_flow, "{f:?} booter flow");
            let driver_mmu = match (h.mmu_format.version, h.mmu_format.pages_512m) {
                (hal::MmuVersion::V2, false) => GmmuFormat::Ver2,
                (hal::MmuVersion::V2, true) => GmmuFormat::Ver2Pages512M,
                (hal::MmuVersion::V3, _) => GmmuFormat::Ver3,
            };
            assert_eq!(s.mmu, driver_mmu, "{f:?} MMU format");
            assert_eq!(s.mmu.va_bits(), h.mmu_format.va_bits(), "{f:?} VA bits");
            let root = h.mmu_format.levels().first().map(|l| l.table_bytes());
            assert_eq!(Some(s.mmu.root_table_bytes()), root, "{f:?} root directory size");
            assert_eq!(s.pramin_window, h.pramin_window, "{f:?} PRAMIN window");
            assert_eq!(s.fault_ids.graphics, h.fault_graphics_engine_base, "{f:?} graphics fault engine");
            let c = h.classes;
            assert_eq!(
                s.classes,
                Classes { channel: c.gpfifo, copy: c.copy, compute: c.compute, usermode: c.usermode },
                "{f:?} classes"
            );
            assert_eq!(s.sm_version, h.sm_version, "{f:?} SM version");
            assert_eq!(s.qmd, h.qmd_layout, "{f:?} QMD layout");
            assert_eq!(u32::from(s.qmd.major), u32::from(h.qmd_version.major), "{f:?} QMD major version");
            assert_eq!(s.qmd_has_sm_config(), h.qmd_sm_config, "{f:?} QMD shared-memory configuration");
            assert_eq!(s.param_cbank_offset, h.param_cbank_offset, "{f:?} parameter offset");
            assert_eq!(s.shared_carveouts_kib, h.shared_carveouts_kib, "{f:?} carveouts");
            assert_eq!(s.shared_reserved_per_cta, h.shared_reserved_per_cta, "{f:?} shared reserve");
            assert_eq!(s.local_memory_upper_bits, h.local_memory_address_upper_bits, "{f:?} local memory bits");
            assert_eq!(s.launch_method == LaunchMethod::PcasB, h.launch_by_pcas_b, "{f:?} launch method");
            assert_eq!(s.sec2_fuse_versions, h.ucode_fuse_versions, "{f:?} ucode fuse versions");
        }
    }

    #[test]
    fn every_family_is_in_the_table_once() {
        for (i, s) in ALL.iter().enumerate() {
            assert!(core::ptr::eq(of(s.family), *s));
            assert!(ALL[..i].iter().all(|o| o.family != s.family));
        }
    }

    #[test]
    fn carveouts_rise_and_hold_a_cta() {
        for s in ALL {
            assert!(s.shared_carveouts_kib.windows(2).all(|w| w[0] < w[1]), "{:?}", s.family);
            assert!(s.max_shared_per_cta() >= 48 << 10, "{:?}", s.family);
        }
    }
}
