//! Per-family choices: one [`Hal`] per family (Turing, GA100, GA10x, Ada, Hopper, Blackwell
//! GB10x and GB20x) that says how GSP boots, where the falcons are and which register layouts
//! they use, which MMU and QMD formats and which classes the chip takes.
//!
//! Everything here is data or a function pointer chosen from `hw`'s declarations, so a family is
//! read top to bottom in one place. Sources: boot flow per RM's `kernel_gsp_*` HALs (FWSEC via the
//! bootloader on TU10x/GA100, FWSEC-FRTS directly on GA10x/AD10x, FSP chain of trust on GH100 and
//! later); classes per `gpuGetClassDescriptorList_<CHIP>` in `src/nvidia/generated/g_gpu_class_list.c`;
//! MMU format per `pascal/gp100/dev_mmu.h` (version 2) and `hopper/gh100/dev_mmu.h` (version 3);
//! QMD versions per open-gpu-doc `classes/compute/cl*qmd.h`.

use crate::chip::Chipset;
use crate::gsp::fb_layout::WprChipParams;
use crate::hw::engine::{self, FalconEngine, FalconUnit};
use crate::hw::falcon::{self, ga102, tu102};
use crate::hw::pramin::WindowRegister;
use crate::hw::qmd::{self, QmdLayout};
use crate::hw::UnitRange;
use crate::hw::{boot, classes, compute, fault, therm, HeaderFact, RegisterIo};
use crate::mm::format::{Kind, MmuFormat};

/// The families that share a HAL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// TU102, TU104, TU106, TU116, TU117.
    Turing,
    /// GA100.
    Ga100,
    /// GA102, GA103, GA104, GA106, GA107.
    Ga10x,
    /// AD102..AD107.
    Ada,
    /// GH100.
    Hopper,
    /// GB100, GB102.
    BlackwellGb10x,
    /// GB202..GB207.
    BlackwellGb20x,
}

/// How GSP-RM gets started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BootFlow {
    /// FWSEC (from the VBIOS) runs on GSP through the generic falcon bootloader to set up FRTS;
    /// then the booter on SEC2 loads GSP-RM (Turing, GA100).
    FwsecBootloader,
    /// FWSEC-FRTS is loaded straight into GSP; then the booter on SEC2 loads GSP-RM (GA10x, Ada).
    FwsecFrtsBooter,
    /// The FSP verifies and starts GSP's first-stage firmware (FMC), which loads GSP-RM
    /// (Hopper, Blackwell).
    FspChainOfTrust,
}

/// Which falcon register layout (see [`crate::hw::falcon`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FalconLayout {
    /// `falcon::tu102`: scrubbing in DMACTL, 8-bit IMEM/DMEM block index, RISC-V status in
    /// CORE_SWITCH_RISCV_STATUS.
    Tu102,
    /// `falcon::ga102`: scrubbing in HWCFG2, 16-bit block index, RISC-V CPUCTL and BCR.
    Ga102,
}

/// GPU page-table format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmuVersion {
    /// NV_MMU_VER2_*: 5 levels, 49-bit VA (Pascal to Ada).
    V2,
    /// NV_MMU_VER3_*: 6 levels, 57-bit VA (Hopper and later).
    V3,
}

/// QMD (compute launch descriptor) layout version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QmdVersion {
    pub major: u8,
    pub minor: u8,
    /// The define that shows the compute class's QMD header has this layout (`hw::qmd`, where
    /// the conformance test finds it).
    pub define: HeaderFact,
}

/// The classes a family's channels use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EngineClasses {
    /// Channel (GPFIFO) class.
    pub gpfifo: u32,
    /// Copy engine class.
    pub copy: u32,
    /// Compute class.
    pub compute: u32,
    /// Usermode (doorbell) class.
    pub usermode: u32,
}

/// One family's choices.
#[derive(Clone, Copy, Debug)]
pub struct Hal {
    pub family: Family,
    /// How GSP-RM boots.
    pub boot_flow: BootFlow,
    /// The falcon-based engines the boot uses, and where.
    pub falcons: &'static [FalconUnit],
    /// Which falcon register variants apply.
    pub falcon_layout: FalconLayout,
    /// GPU page-table format.
    pub mmu_version: MmuVersion,
    /// QMD layout of the compute class.
    pub qmd_version: QmdVersion,
    /// Classes for channels and engines.
    pub classes: EngineClasses,
    /// BAR0 offset of NV_THERM_I2CS_SCRATCH, where the FSP reports boot completion.
    pub fsp_boot_status: Option<u32>,
    /// Whether IMEM/DMEM scrubbing after a falcon reset finished.
    pub falcon_scrubbing_done: fn(&dyn RegisterIo, u32) -> bool,
    /// Whether the RISC-V core at the given RISC-V base is running.
    pub riscv_active: fn(&dyn RegisterIo, u32) -> bool,
    /// GPU page-table format (`NV_MMU_VER2` with 64 KiB or 512 MiB big pages, `NV_MMU_VER3`).
    pub mmu_format: MmuFormat,
    /// PTE kind of plain (pitch, uncompressed) memory: `NV_MMU_PTE_KIND_GENERIC_MEMORY` of the
    /// format's header.
    pub generic_memory_kind: u8,
    /// The register that places the PRAMIN window (`None`: no 535 source for it).
    pub pramin_window: Option<WindowRegister>,
    /// RM's wait before a falcon engine reset (`kflcnPreResetWait_GA10X`).
    pub falcon_pre_reset_wait: bool,
    /// The GSP engine reset reports its state transitions (`kgspResetHw_GH100`).
    pub gsp_reset_status: bool,
    /// The booter flow of GA102 and later (`kgspBootstrapRiscvOSEarly_GA102`): FALCON_OS and
    /// the rest that differs from Turing and GA100.
    pub ga102_booter_flow: bool,
    /// Where the usable framebuffer size comes from when the caller does not give it.
    pub fb_size_source: FbSizeSource,
    /// RM's WPR (FB layout and GSP-RM heap) parameters; `None` where 535.261.03 has none.
    pub wpr: Option<WprChipParams>,
    /// The SM version (compute capability, major*10 + minor) of the family's shader cores: which
    /// cubins run on it. NVIDIA's CUDA C++ Programming Guide, "Compute Capabilities": Turing
    /// 7.5, GA100 8.0, GA10x 8.6, AD10x 8.9, GH100 9.0, GB10x 10.0, GB20x 12.0.
    pub sm_version: u32,
    /// The QMD layout of [`Hal::qmd_version`], field by field (`hw::qmd`).
    pub qmd_layout: QmdLayout,
    /// Whether the QMD carries the shared-memory configuration (`MIN/MAX/TARGET_SM_CONFIG_SHARED_MEM_SIZE`):
    /// QMD V02_03 of Turing does not declare it, and the SM takes its default carveout.
    pub qmd_sm_config: bool,
    /// Where in constant bank 0 the kernel's parameters start: what NVIDIA's ptxas records in
    /// `EIATTR_PARAM_CBANK` (0x160 for sm_75..sm_89, 0x210 for sm_90, 0x380 for sm_100 and
    /// sm_120; checked against ptxas 12.9's cubins by `tests/tests/payload_real.rs`).
    pub param_cbank_offset: u32,
    /// The shared-memory capacities (carveouts, in KiB) an SM can be configured to, smallest
    /// first. CUDA C++ Programming Guide, "Compute Capabilities": 8.0 (GA100) 0, 8, 16, 32, 64,
    /// 100, 132 and 164 KB; 8.6/8.9 (GA10x, Ada) 0, 8, 16, 32, 64 and 100 KB; 9.0 (Hopper) and
    /// 10.0 (GB10x) up to 228 KB; 12.0 (GB20x) as 8.6; 7.5 (Turing) 32 or 64 KB.
    pub shared_carveouts_kib: &'static [u64],
    /// Shared memory the SM reserves per CTA for the system, on top of the kernel's (the guide:
    /// "1 KB of shared memory is reserved for system use" per thread block from 8.0 on; none on
    /// Turing, whose 64 KB are all the kernel's).
    pub shared_reserved_per_cta: u64,
    /// Bits of `SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER` in the compute class (17 in `clc6c0.h`
    /// and its Turing/Ampere/Ada siblings, 25 in open-gpu-doc's `clcbc0.h`; Blackwell's classes
    /// have no declaration here and take the narrower Ampere field).
    pub local_memory_address_upper_bits: u32,
    /// The PCI config-space mirror in BAR0 RM reports to GSP-RM in `GSP_SET_SYSTEM_INFO`
    /// (`kbifGetPciConfigSpacePriMirror_GM107`: NV_PCFG; `_GH100`: NV_EP_PCFGM).
    pub pci_config_mirror: UnitRange,
    /// `NV_PFAULT_MMU_ENG_ID_GRAPHICS`: the engine id the VEID is added to in fault packets
    /// (64 in `turing/tu102/dev_fault.h`, 384 in `hopper/gh100/dev_fault.h`).
    pub fault_graphics_engine_base: u16,
    /// Whether a QMD is launched with `SEND_SIGNALING_PCAS_B` (`INVALIDATE` and `SCHEDULE`;
    /// Turing's `clc5c0.h`) rather than `SEND_SIGNALING_PCAS2_B` (Ampere's `clc6c0.h` on).
    pub launch_by_pcas_b: bool,
    /// Whether the chip has per-ucode revocation fuses RM reads (`kgspReadUcodeFuseVersion_GA100`,
    /// `ksec2ReadUcodeFuseVersion_GA100`); Turing's HAL entries are stubs that return 0.
    pub ucode_fuse_versions: bool,
}

/// Where a family reports the usable framebuffer size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FbSizeSource {
    /// `NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE` (Turing, GA100).
    LocalMemoryRange,
    /// `NV_USABLE_FB_SIZE_IN_MB` in the GC6 island (GA102 and later).
    Gc6UsableFbSize,
}

impl Hal {
    /// The falcon unit of `engine`, if this family has (and uses) it.
    pub fn falcon(&self, engine: FalconEngine) -> Option<&'static FalconUnit> {
        self.falcons.iter().find(|unit| unit.engine == engine)
    }

    /// Shared memory per SM at its largest carveout, in bytes.
    pub const fn max_shared_per_sm(&self) -> u64 {
        match self.shared_carveouts_kib.last() {
            Some(kib) => *kib << 10,
            None => 0,
        }
    }

    /// Most shared memory one CTA may use: the SM's largest carveout less the system's reserve
    /// (the guide's "maximum amount of shared memory per thread block": 163 KB on 8.0, 99 KB on
    /// 8.6/8.9, 227 KB on 9.0; 64 KB on Turing).
    pub const fn max_shared_per_cta(&self) -> u64 {
        self.max_shared_per_sm().saturating_sub(self.shared_reserved_per_cta)
    }

    /// `(pciConfigMirrorBase, pciConfigMirrorSize)` for `GSP_SET_SYSTEM_INFO`.
    pub const fn pci_config_mirror(&self) -> (u32, u32) {
        let r = self.pci_config_mirror;
        (r.first, r.last - r.first + 1)
    }
}

fn scrubbing_done_dmactl(io: &dyn RegisterIo, base: u32) -> bool {
    let dmactl = falcon::NV_PFALCON_FALCON_DMACTL::read(io, base);
    !dmactl.dmem_scrubbing() && !dmactl.imem_scrubbing()
}

fn scrubbing_done_hwcfg2(io: &dyn RegisterIo, base: u32) -> bool {
    // A value the header does not define counts as not done; the caller's bounded wait reports it.
    ga102::NV_PFALCON_FALCON_HWCFG2::read(io, base).mem_scrubbing() == Ok(ga102::MemScrubbing::Done)
}

fn riscv_active_core_switch(io: &dyn RegisterIo, riscv_base: u32) -> bool {
    tu102::NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS::read(io, riscv_base).active_stat()
}

fn riscv_active_cpuctl(io: &dyn RegisterIo, riscv_base: u32) -> bool {
    ga102::NV_PRISCV_RISCV_CPUCTL::read(io, riscv_base).active_stat()
}

const GSP: FalconUnit = FalconUnit {
    engine: FalconEngine::Gsp,
    base: engine::GSP_BASE,
    riscv_base: Some(engine::NV_FALCON2_GSP_BASE),
    fbif_base: Some(engine::NV_PGSP_FBIF_BASE),
};
/// SEC2 of Turing and GA100: falcon only.
const SEC2_FALCON: FalconUnit = FalconUnit {
    engine: FalconEngine::Sec2,
    base: engine::SEC2_BASE,
    riscv_base: None,
    fbif_base: Some(engine::NV_PSEC_FBIF_BASE),
};
/// SEC2 of GA102 and later: with a RISC-V core.
const SEC2_RISCV: FalconUnit = FalconUnit { riscv_base: Some(engine::NV_FALCON2_SEC_BASE), ..SEC2_FALCON };
/// GSP under the FSP: the driver starts it through its RISC-V BCR registers, not its FBIF.
const GSP_FMC: FalconUnit = FalconUnit { fbif_base: None, ..GSP };
const FSP: FalconUnit =
    FalconUnit { engine: FalconEngine::Fsp, base: engine::FSP_BASE, riscv_base: None, fbif_base: None };

const QMD_V02_03_TURING: QmdVersion =
    QmdVersion { major: 2, minor: 3, define: qmd::NVC5C0_QMDV02_03_QMD_MAJOR_VERSION };
const QMD_V03_00_GA100: QmdVersion = QmdVersion { major: 3, minor: 0, define: qmd::NVC6C0_QMDV03_00_QMD_MAJOR_VERSION };
const QMD_V03_00_GA10X: QmdVersion = QmdVersion { major: 3, minor: 0, define: qmd::NVC7C0_QMDV03_00_QMD_MAJOR_VERSION };
const QMD_V03_00_ADA: QmdVersion = QmdVersion { major: 3, minor: 0, define: qmd::NVC9C0_QMDV03_00_QMD_MAJOR_VERSION };
const QMD_V04_00_HOPPER: QmdVersion =
    QmdVersion { major: 4, minor: 0, define: qmd::NVCBC0_QMDV04_00_QMD_MAJOR_VERSION };
const QMD_V05_00_GB10X: QmdVersion = QmdVersion { major: 5, minor: 0, define: qmd::NVCDC0_QMDV05_00_QMD_MAJOR_VERSION };
const QMD_V05_00_GB20X: QmdVersion = QmdVersion { major: 5, minor: 0, define: qmd::NVCEC0_QMDV05_00_QMD_MAJOR_VERSION };

/// Shared memory the SM reserves per CTA for the system from compute capability 8.0 on (CUDA
/// C++ Programming Guide, "Compute Capabilities": "1 KB of shared memory is reserved for system
/// use" per thread block).
pub const SHARED_RESERVED_PER_CTA: u64 = 1 << 10;
/// The carveouts of 8.6, 8.9 and 12.0 (KiB).
const CARVEOUTS_8_6: &[u64] = &[0, 8, 16, 32, 64, 100];
/// The carveouts of 9.0 and 10.0 (KiB).
const CARVEOUTS_9_0: &[u64] = &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228];

/// Turing.
pub static TURING: Hal = Hal {
    family: Family::Turing,
    boot_flow: BootFlow::FwsecBootloader,
    falcons: &[GSP, SEC2_FALCON],
    falcon_layout: FalconLayout::Tu102,
    mmu_version: MmuVersion::V2,
    qmd_version: QMD_V02_03_TURING,
    classes: EngineClasses {
        gpfifo: classes::TURING_CHANNEL_GPFIFO_A,
        copy: classes::TURING_DMA_COPY_A,
        compute: classes::TURING_COMPUTE_A,
        usermode: classes::TURING_USERMODE_A,
    },
    fsp_boot_status: None,
    falcon_scrubbing_done: scrubbing_done_dmactl,
    riscv_active: riscv_active_core_switch,
    mmu_format: MmuFormat::VER2,
    generic_memory_kind: Kind::GENERIC_MEMORY_TU102,
    pramin_window: Some(WindowRegister::Pbus),
    falcon_pre_reset_wait: false,
    gsp_reset_status: false,
    ga102_booter_flow: false,
    fb_size_source: FbSizeSource::LocalMemoryRange,
    wpr: Some(WprChipParams::TU102),
    sm_version: 75,
    qmd_layout: qmd::TURING,
    qmd_sm_config: false,
    param_cbank_offset: 0x160,
    shared_carveouts_kib: &[32, 64],
    shared_reserved_per_cta: 0,
    local_memory_address_upper_bits: compute::NVC5C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    pci_config_mirror: boot::NV_PCFG,
    fault_graphics_engine_base: fault::tu102::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
    launch_by_pcas_b: true,
    ucode_fuse_versions: false,
};

/// GA100: Turing's boot flow and falcon layout, Ampere's classes.
pub static GA100: Hal = Hal {
    family: Family::Ga100,
    boot_flow: BootFlow::FwsecBootloader,
    falcons: &[GSP, SEC2_FALCON],
    falcon_layout: FalconLayout::Tu102,
    mmu_version: MmuVersion::V2,
    qmd_version: QMD_V03_00_GA100,
    classes: EngineClasses {
        gpfifo: classes::AMPERE_CHANNEL_GPFIFO_A,
        copy: classes::AMPERE_DMA_COPY_A,
        compute: classes::AMPERE_COMPUTE_A,
        usermode: classes::AMPERE_USERMODE_A,
    },
    fsp_boot_status: None,
    falcon_scrubbing_done: scrubbing_done_dmactl,
    riscv_active: riscv_active_core_switch,
    mmu_format: MmuFormat::VER2_512M,
    generic_memory_kind: Kind::GENERIC_MEMORY_TU102,
    pramin_window: Some(WindowRegister::Pbus),
    falcon_pre_reset_wait: false,
    gsp_reset_status: false,
    ga102_booter_flow: false,
    fb_size_source: FbSizeSource::LocalMemoryRange,
    wpr: Some(WprChipParams::GA100),
    sm_version: 80,
    qmd_layout: qmd::AMPERE,
    qmd_sm_config: true,
    param_cbank_offset: 0x160,
    shared_carveouts_kib: &[0, 8, 16, 32, 64, 100, 132, 164],
    shared_reserved_per_cta: SHARED_RESERVED_PER_CTA,
    local_memory_address_upper_bits: compute::NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    pci_config_mirror: boot::NV_PCFG,
    fault_graphics_engine_base: fault::tu102::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
    launch_by_pcas_b: false,
    ucode_fuse_versions: true,
};

/// GA102..GA107.
pub static GA10X: Hal = Hal {
    family: Family::Ga10x,
    boot_flow: BootFlow::FwsecFrtsBooter,
    falcons: &[GSP, SEC2_RISCV],
    falcon_layout: FalconLayout::Ga102,
    mmu_version: MmuVersion::V2,
    qmd_version: QMD_V03_00_GA10X,
    classes: EngineClasses {
        gpfifo: classes::AMPERE_CHANNEL_GPFIFO_A,
        copy: classes::AMPERE_DMA_COPY_B,
        compute: classes::AMPERE_COMPUTE_B,
        usermode: classes::AMPERE_USERMODE_A,
    },
    fsp_boot_status: None,
    falcon_scrubbing_done: scrubbing_done_hwcfg2,
    riscv_active: riscv_active_cpuctl,
    mmu_format: MmuFormat::VER2_512M,
    generic_memory_kind: Kind::GENERIC_MEMORY_TU102,
    pramin_window: Some(WindowRegister::Pbus),
    falcon_pre_reset_wait: true,
    gsp_reset_status: false,
    ga102_booter_flow: true,
    fb_size_source: FbSizeSource::Gc6UsableFbSize,
    wpr: Some(WprChipParams::GA102),
    sm_version: 86,
    qmd_layout: qmd::AMPERE,
    qmd_sm_config: true,
    param_cbank_offset: 0x160,
    shared_carveouts_kib: CARVEOUTS_8_6,
    shared_reserved_per_cta: SHARED_RESERVED_PER_CTA,
    local_memory_address_upper_bits: compute::NVC7C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    pci_config_mirror: boot::NV_PCFG,
    fault_graphics_engine_base: fault::tu102::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
    launch_by_pcas_b: false,
    ucode_fuse_versions: true,
};

/// AD102..AD107.
pub static ADA: Hal = Hal {
    family: Family::Ada,
    boot_flow: BootFlow::FwsecFrtsBooter,
    falcons: &[GSP, SEC2_RISCV],
    falcon_layout: FalconLayout::Ga102,
    mmu_version: MmuVersion::V2,
    qmd_version: QMD_V03_00_ADA,
    classes: EngineClasses {
        gpfifo: classes::AMPERE_CHANNEL_GPFIFO_A,
        copy: classes::AMPERE_DMA_COPY_B,
        compute: classes::ADA_COMPUTE_A,
        usermode: classes::AMPERE_USERMODE_A,
    },
    fsp_boot_status: None,
    falcon_scrubbing_done: scrubbing_done_hwcfg2,
    riscv_active: riscv_active_cpuctl,
    mmu_format: MmuFormat::VER2_512M,
    generic_memory_kind: Kind::GENERIC_MEMORY_TU102,
    pramin_window: Some(WindowRegister::Pbus),
    falcon_pre_reset_wait: true,
    gsp_reset_status: false,
    ga102_booter_flow: true,
    fb_size_source: FbSizeSource::Gc6UsableFbSize,
    wpr: Some(WprChipParams::AD102),
    sm_version: 89,
    qmd_layout: qmd::ADA,
    qmd_sm_config: true,
    param_cbank_offset: 0x160,
    shared_carveouts_kib: CARVEOUTS_8_6,
    shared_reserved_per_cta: SHARED_RESERVED_PER_CTA,
    local_memory_address_upper_bits: compute::NVC9C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    pci_config_mirror: boot::NV_PCFG,
    fault_graphics_engine_base: fault::tu102::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
    launch_by_pcas_b: false,
    ucode_fuse_versions: true,
};

/// GH100.
pub static HOPPER: Hal = Hal {
    family: Family::Hopper,
    boot_flow: BootFlow::FspChainOfTrust,
    falcons: &[GSP_FMC, FSP],
    falcon_layout: FalconLayout::Ga102,
    mmu_version: MmuVersion::V3,
    qmd_version: QMD_V04_00_HOPPER,
    classes: EngineClasses {
        gpfifo: classes::HOPPER_CHANNEL_GPFIFO_A,
        copy: classes::HOPPER_DMA_COPY_A,
        compute: classes::HOPPER_COMPUTE_A,
        usermode: classes::HOPPER_USERMODE_A,
    },
    fsp_boot_status: Some(therm::NV_THERM_I2CS_SCRATCH::OFFSET),
    falcon_scrubbing_done: scrubbing_done_hwcfg2,
    riscv_active: riscv_active_cpuctl,
    mmu_format: MmuFormat::VER3,
    generic_memory_kind: Kind::GENERIC_MEMORY_GH100,
    pramin_window: Some(WindowRegister::XalEp),
    falcon_pre_reset_wait: false,
    gsp_reset_status: true,
    ga102_booter_flow: false,
    fb_size_source: FbSizeSource::Gc6UsableFbSize,
    wpr: Some(WprChipParams::GH100),
    sm_version: 90,
    qmd_layout: qmd::HOPPER,
    qmd_sm_config: true,
    param_cbank_offset: 0x210,
    shared_carveouts_kib: CARVEOUTS_9_0,
    shared_reserved_per_cta: SHARED_RESERVED_PER_CTA,
    local_memory_address_upper_bits: compute::NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    pci_config_mirror: boot::NV_EP_PCFGM,
    fault_graphics_engine_base: fault::gh100::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
    launch_by_pcas_b: false,
    ucode_fuse_versions: true,
};

/// GB100, GB102.
pub static BLACKWELL_GB10X: Hal = Hal {
    family: Family::BlackwellGb10x,
    boot_flow: BootFlow::FspChainOfTrust,
    falcons: &[GSP_FMC, FSP],
    falcon_layout: FalconLayout::Ga102,
    mmu_version: MmuVersion::V3,
    qmd_version: QMD_V05_00_GB10X,
    classes: EngineClasses {
        gpfifo: classes::BLACKWELL_CHANNEL_GPFIFO_A,
        copy: classes::BLACKWELL_DMA_COPY_A,
        compute: classes::BLACKWELL_COMPUTE_A,
        usermode: classes::HOPPER_USERMODE_A,
    },
    fsp_boot_status: Some(therm::gb100::NV_THERM_I2CS_SCRATCH::OFFSET),
    falcon_scrubbing_done: scrubbing_done_hwcfg2,
    riscv_active: riscv_active_cpuctl,
    mmu_format: MmuFormat::VER3,
    generic_memory_kind: Kind::GENERIC_MEMORY_GH100,
    pramin_window: None,
    falcon_pre_reset_wait: false,
    gsp_reset_status: true,
    ga102_booter_flow: false,
    fb_size_source: FbSizeSource::Gc6UsableFbSize,
    wpr: None,
    sm_version: 100,
    qmd_layout: qmd::BLACKWELL,
    qmd_sm_config: true,
    param_cbank_offset: 0x380,
    shared_carveouts_kib: CARVEOUTS_9_0,
    shared_reserved_per_cta: SHARED_RESERVED_PER_CTA,
    local_memory_address_upper_bits: compute::NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    pci_config_mirror: boot::NV_EP_PCFGM,
    fault_graphics_engine_base: fault::gh100::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
    launch_by_pcas_b: false,
    ucode_fuse_versions: true,
};

/// GB202..GB207.
pub static BLACKWELL_GB20X: Hal = Hal {
    family: Family::BlackwellGb20x,
    boot_flow: BootFlow::FspChainOfTrust,
    falcons: &[GSP_FMC, FSP],
    falcon_layout: FalconLayout::Ga102,
    mmu_version: MmuVersion::V3,
    qmd_version: QMD_V05_00_GB20X,
    classes: EngineClasses {
        gpfifo: classes::BLACKWELL_CHANNEL_GPFIFO_B,
        copy: classes::BLACKWELL_DMA_COPY_B,
        compute: classes::BLACKWELL_COMPUTE_B,
        usermode: classes::BLACKWELL_USERMODE_A,
    },
    fsp_boot_status: Some(therm::gb202::NV_THERM_I2CS_SCRATCH::OFFSET),
    falcon_scrubbing_done: scrubbing_done_hwcfg2,
    riscv_active: riscv_active_cpuctl,
    mmu_format: MmuFormat::VER3,
    generic_memory_kind: Kind::GENERIC_MEMORY_GH100,
    pramin_window: None,
    falcon_pre_reset_wait: false,
    gsp_reset_status: true,
    ga102_booter_flow: false,
    fb_size_source: FbSizeSource::Gc6UsableFbSize,
    wpr: None,
    sm_version: 120,
    qmd_layout: qmd::BLACKWELL,
    qmd_sm_config: true,
    param_cbank_offset: 0x380,
    shared_carveouts_kib: CARVEOUTS_8_6,
    shared_reserved_per_cta: SHARED_RESERVED_PER_CTA,
    local_memory_address_upper_bits: compute::NVC6C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER.width(),
    pci_config_mirror: boot::NV_EP_PCFGM,
    fault_graphics_engine_base: fault::gh100::NV_PFAULT_MMU_ENG_ID_GRAPHICS,
    launch_by_pcas_b: false,
    ucode_fuse_versions: true,
};

/// Every HAL.
pub static ALL: &[&Hal] = &[&TURING, &GA100, &GA10X, &ADA, &HOPPER, &BLACKWELL_GB10X, &BLACKWELL_GB20X];

/// The HAL of a family.
pub const fn for_family(family: Family) -> &'static Hal {
    match family {
        Family::Turing => &TURING,
        Family::Ga100 => &GA100,
        Family::Ga10x => &GA10X,
        Family::Ada => &ADA,
        Family::Hopper => &HOPPER,
        Family::BlackwellGb10x => &BLACKWELL_GB10X,
        Family::BlackwellGb20x => &BLACKWELL_GB20X,
    }
}

/// The HAL of a chipset.
pub const fn for_chipset(chipset: Chipset) -> &'static Hal {
    for_family(chipset.family())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chipset_has_the_hal_of_its_family() {
        for &chip in Chipset::ALL {
            let hal = for_chipset(chip);
            assert_eq!(hal.family, chip.family());
            assert!(hal.falcon(FalconEngine::Gsp).is_some(), "{chip}: no GSP");
            let expected = match chip.family() {
                Family::Turing | Family::Ga100 => BootFlow::FwsecBootloader,
                Family::Ga10x | Family::Ada => BootFlow::FwsecFrtsBooter,
                _ => BootFlow::FspChainOfTrust,
            };
            assert_eq!(hal.boot_flow, expected, "{chip}");
            assert_eq!(hal.falcon(FalconEngine::Fsp).is_some(), hal.boot_flow == BootFlow::FspChainOfTrust);
            assert_eq!(hal.falcon(FalconEngine::Sec2).is_some(), hal.boot_flow != BootFlow::FspChainOfTrust);
            assert_eq!(hal.fsp_boot_status.is_some(), hal.boot_flow == BootFlow::FspChainOfTrust);
        }
        assert_eq!(ALL.len(), 7);
    }

    #[test]
    fn function_choices_read_the_right_registers() {
        use std::cell::RefCell;
        use std::collections::BTreeMap;
        struct Bar(RefCell<BTreeMap<u32, u32>>);
        impl RegisterIo for Bar {
            fn read32(&self, offset: u32) -> u32 {
                self.0.borrow().get(&offset).copied().unwrap_or(0)
            }
            fn write32(&self, offset: u32, value: u32) {
                self.0.borrow_mut().insert(offset, value);
            }
        }
        let bar = Bar(RefCell::new(BTreeMap::new()));
        let base = engine::GSP_BASE;
        // Turing: DMACTL bits 1 and 2 pending; GA102: HWCFG2 bit 12 pending.
        bar.write32(base + 0x10c, 0x6);
        bar.write32(base + 0xf4, 1 << 12);
        assert!(!(TURING.falcon_scrubbing_done)(&bar, base));
        assert!(!(GA10X.falcon_scrubbing_done)(&bar, base));
        bar.write32(base + 0x10c, 0);
        assert!((TURING.falcon_scrubbing_done)(&bar, base));
        assert!(!(GA10X.falcon_scrubbing_done)(&bar, base));
        bar.write32(base + 0xf4, 0);
        assert!((GA10X.falcon_scrubbing_done)(&bar, base));

        let riscv = engine::NV_FALCON2_GSP_BASE;
        bar.write32(riscv + 0x388, 1 << 7);
        assert!((ADA.riscv_active)(&bar, riscv));
        assert!(!(TURING.riscv_active)(&bar, riscv));
        bar.write32(riscv + 0x240, 1);
        assert!((TURING.riscv_active)(&bar, riscv));
    }
}
