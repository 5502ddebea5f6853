//! The GPU model's foundation, driven the way the driver will drive it: chip identification, the
//! strict register file, the VBIOS through the PROM window, and the falcons (reset, scrubbing, PIO
//! and DMA uploads, starts) running the model FWSEC that sets up WPR2 for FRTS.
//!
//! Everything here goes through `nvgpu::hw::RegisterIo` with `nvgpu::hw` declarations, as raw
//! register pokes (the driver's own falcon code is written in parallel); the sequences follow
//! RM's `kgspExecuteHsFalcon_TU102/GA102` and `s_executeFwsec_TU102`.

use nvgpu::chip::{self, Chipset};
use nvgpu::fwsec::{FwsecDescriptor, FwsecKind};
use nvgpu::hal::{self, FalconLayout};
use nvgpu::hw::engine::{self, FalconEngine, FalconUnit};
use nvgpu::hw::falcon::{self as hwf, ga102, tu102, DmaTransferSize, FbifMemType, FbifTarget};
use nvgpu::hw::falcon2::{
    ModSelAlgo, NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID, NV_PFALCON2_FALCON_BROM_ENGIDMASK,
    NV_PFALCON2_FALCON_BROM_PARAADDR, NV_PFALCON2_FALCON_MOD_SEL,
};
use nvgpu::hw::fw::{
    FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB,
};
use nvgpu::hw::pri::{GPU_READ_PRI_ERROR_CODE, GPU_READ_PRI_ERROR_MASK};
use nvgpu::hw::{boot, bus, fb, gc6, therm, RegisterIo};
use nvgpu::platform::DmaAllocator;
use nvgpu::vbios::Vbios;
use sim::{DmaArena, DmaError, FalconError, HaltCode, ModelError, ModelGpu, UnmodelledAccess, POISON};

/// Polls before a wait gives up (the model finishes pending work in a handful).
const POLLS: u32 = 100;

fn boards() -> [(ModelGpu, Chipset, u16); 4] {
    [
        (ModelGpu::h200(), Chipset::GH100, 0x2335),
        (ModelGpu::rtx4090(), Chipset::AD102, 0x2684),
        (ModelGpu::rtx3090(), Chipset::GA102, 0x2204),
        (ModelGpu::rtx2080ti(), Chipset::TU102, 0x1E04),
    ]
}

fn gsp(chipset: Chipset) -> &'static FalconUnit {
    hal::for_chipset(chipset).falcon(FalconEngine::Gsp).expect("every HAL has a GSP")
}

fn assert_clean(model: &ModelGpu) {
    let errors = model.errors();
    assert!(errors.is_empty(), "{}: model recorded errors: {errors:#?}", model.chipset());
}

// ---------------------------------------------------------------------------------------------
// Identity.

#[test]
fn boards_identify_through_boot_registers() {
    for (model, chipset, device_id) in boards() {
        let identity = chip::read_identity(&model).expect("identifies");
        assert_eq!(identity.chipset, chipset);
        assert_eq!(identity.revision.to_string(), "A1");
        assert_eq!(model.config().pci.device_id, device_id);
        assert_eq!(chip::board_name(device_id), model.config().board_name);
        assert_clean(&model);
    }
}

#[test]
fn every_chipset_identifies() {
    for &chipset in Chipset::ALL {
        let model = ModelGpu::for_chipset(chipset);
        assert_eq!(chip::read_identity(&model).unwrap().chipset, chipset);
        assert_clean(&model);
    }
}

#[test]
fn pci_identity_and_bar_sizing() {
    for (model, _, device_id) in boards() {
        assert_eq!(model.pci_config_read32(0x00), 0x10DE | (u32::from(device_id) << 16));
        let class = model.pci_config_read32(0x08) >> 16;
        let expected = if model.chipset() == Chipset::GH100 { 0x0302 } else { 0x0300 };
        assert_eq!(class, expected, "{}", model.chipset());
        assert_eq!(model.pci_config_read32(0x2C) & 0xFFFF, 0x10DE);
        // BAR0: the all-ones probe reads back the size mask.
        model.pci_config_write32(0x10, u32::MAX);
        let size = !(model.pci_config_read32(0x10) & !0xF) + 1;
        assert_eq!(u64::from(size), model.config().bars.bar0);
        assert_eq!(size, 16 << 20);
        // BAR1: 64-bit prefetchable, two dwords.
        model.pci_config_write32(0x14, u32::MAX);
        model.pci_config_write32(0x18, u32::MAX);
        let lo = model.pci_config_read32(0x14);
        assert_eq!(lo & 0xF, 0b1100);
        let mask = (u64::from(model.pci_config_read32(0x18)) << 32) | u64::from(lo & !0xF);
        assert_eq!(!mask + 1, model.config().bars.bar1);
        // The command register and the interrupt line take writes without complaint.
        model.pci_config_write32(0x04, 0x6);
        model.pci_config_write32(0x3C, 0x0b);
        assert_eq!(model.pci_config_read32(0x3C), (1 << 8) | 0x0b);
        assert_eq!(model.take_errors(), vec![], "{}", model.chipset());
    }
}

/// Configuration writes that change nothing are recorded, not dropped: an identity register,
/// the empty sixth BAR slot, a capability offset the header does not have, past the header, a
/// misaligned offset. (The model used to ignore all of them.)
#[test]
fn pci_config_writes_to_unknown_offsets_are_recorded() {
    let model = ModelGpu::rtx3090();
    for (offset, reason) in [
        (0x00u16, "read-only identity"),
        (0x24, "empty BAR slot"),
        (0x40, "does not implement"),
        (0x100, "256-byte"),
        (0x06, "misaligned"),
    ] {
        model.pci_config_write32(offset, 0x1234_5678);
        let errors = model.take_errors();
        assert!(
            matches!(errors.as_slice(), [ModelError::PciConfigWrite { offset: o, value: 0x1234_5678, reason: r }] if *o == offset && r.contains(reason)),
            "{offset:#x}: {errors:?}"
        );
    }
    assert_eq!(model.pci_config_read32(0x00) & 0xffff, 0x10de, "the identity is unchanged");
}

// ---------------------------------------------------------------------------------------------
// Strictness.

#[test]
fn unknown_registers_poison_and_are_recorded() {
    let model = ModelGpu::rtx3090();
    let value = model.read32(0x0000_0004);
    assert_eq!(value, POISON);
    assert_eq!(value & GPU_READ_PRI_ERROR_MASK, GPU_READ_PRI_ERROR_CODE, "RM's PRI-error check sees it");
    model.write32(0x0012_3450, 0xDEAD_BEEF);
    // Inside a falcon's window, but not a register.
    let gsp = gsp(Chipset::GA102).base;
    assert_eq!(model.read32(gsp + 0x3FC), POISON);
    assert_eq!(
        model.unmodelled_accesses(),
        vec![
            UnmodelledAccess { offset: 0x4, kind: sim::AccessKind::Read, value: POISON },
            UnmodelledAccess { offset: 0x0012_3450, kind: sim::AccessKind::Write, value: 0xDEAD_BEEF },
            UnmodelledAccess { offset: gsp + 0x3FC, kind: sim::AccessKind::Read, value: POISON },
        ]
    );
    // Misaligned accesses and writes to read-only registers are recorded too.
    assert_eq!(model.read32(0x0000_0A02), POISON);
    model.write32(nvgpu::hw::pmc::NV_PMC_BOOT_42::OFFSET, 0);
    model.write32(fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::OFFSET, 0x10);
    let errors = model.take_errors();
    assert!(matches!(errors[3], ModelError::Misaligned { offset: 0xA02, .. }));
    assert!(matches!(errors[4], ModelError::ReadOnly { register: "NV_PMC_BOOT_42", .. }));
    assert!(matches!(errors[5], ModelError::ReadOnly { register: "NV_PFB_PRI_MMU_WPR2_ADDR_HI", .. }));
    assert_eq!(model.wpr2(), None, "the driver cannot set WPR2 itself");
    assert!(chip::read_identity(&model).is_ok(), "BOOT_42 unchanged");
}

#[test]
fn boot_firmware_status_reads_done() {
    for (model, chipset, _) in boards() {
        assert!(gc6::gfw_boot_completed(&model), "{chipset}");
        let plm = gc6::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::read(&model);
        assert!(plm.read_protection_level0());
        if let Some(offset) = hal::for_chipset(chipset).fsp_boot_status {
            let status = therm::NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE::from_raw(model.read32(offset));
            assert_eq!(status.status(), therm::FspBootStatus::Success as u32);
        }
        if chipset != Chipset::TU102 {
            let mib = gc6::NV_USABLE_FB_SIZE_IN_MB::read(&model).value();
            assert_eq!(u64::from(mib) << 20, model.config().vram_bytes);
        }
        assert_clean(&model);
    }
}

// ---------------------------------------------------------------------------------------------
// VBIOS.

#[test]
fn vbios_parses_from_prom_on_every_chip() {
    for &chipset in Chipset::ALL {
        let model = ModelGpu::for_chipset(chipset);
        let vbios = Vbios::from_prom(&model).unwrap_or_else(|e| panic!("{chipset}: {e}"));
        let codes: Vec<_> = vbios.images().iter().map(|i| i.code_type.raw()).collect();
        assert_eq!(codes, [0x00, 0x03, 0xE0], "{chipset}");
        assert!(vbios.images()[2].last && !vbios.images()[1].last, "NPDE decides, not the EFI PCIR");
        assert!(vbios.images().iter().all(|i| i.vendor_id == 0x10DE && i.device_id == model.config().pci.device_id));
        assert!(vbios.bit().token(b'B').is_some() && vbios.bit().token(b'p').is_some());
        assert!(vbios.version().is_some());
        for kind in [FwsecKind::Prod, FwsecKind::Debug] {
            let fwsec = vbios.fwsec(kind).unwrap_or_else(|e| panic!("{chipset} {kind:?}: {e}"));
            let expected_version = if chipset.needs_fwsec_bootloader() { 2 } else { 3 };
            assert_eq!(fwsec.descriptor.version(), expected_version, "{chipset}");
            if let FwsecDescriptor::V3(d) = fwsec.descriptor {
                assert_eq!(u32::from(d.signature_count), fwsec.signature_count());
                assert_eq!(fwsec.signatures().len(), 3 * 384);
            }
            assert_eq!(&fwsec.imem()[..8], b"NVSIMUC\0", "model ucode header");
            let header = sim::ucode::parse_header(fwsec.imem()).unwrap();
            assert_eq!(header.interface_offset.get(), fwsec.descriptor.interface_offset());
            assert_eq!(fwsec.dmem_mapper.init_cmd, 0);
            assert!(fwsec.dmem_mapper.cmd_in_buffer_size >= 44);
        }
        assert_eq!(vbios.rom(), &model.vbios().rom[..], "PROM shows exactly the built ROM");
        assert_clean(&model);
    }
}

// ---------------------------------------------------------------------------------------------
// A raw falcon "driver" over registers.

struct Flcn<'m> {
    model: &'m ModelGpu,
    unit: FalconUnit,
    layout: FalconLayout,
}

impl<'m> Flcn<'m> {
    fn gsp(model: &'m ModelGpu) -> Self {
        let hal = hal::for_chipset(model.chipset());
        Self { model, unit: *gsp(model.chipset()), layout: hal.falcon_layout }
    }

    fn base(&self) -> u32 {
        self.unit.base
    }

    fn riscv(&self) -> u32 {
        self.unit.riscv_base.expect("GSP has a RISC-V base")
    }

    fn fbif(&self) -> u32 {
        engine::NV_PGSP_FBIF_BASE
    }

    /// Engine reset, then wait for scrubbing (RM `kflcnReset`, Nova `reset_eng`).
    fn reset(&self) {
        engine::NV_PGSP_FALCON_ENGINE::default().with(engine::NV_PGSP_FALCON_ENGINE::RESET, true).write(self.model);
        engine::NV_PGSP_FALCON_ENGINE::default().with(engine::NV_PGSP_FALCON_ENGINE::RESET, false).write(self.model);
        let done = hal::for_chipset(self.model.chipset()).falcon_scrubbing_done;
        let polls = (0..POLLS).find(|_| done(self.model, self.base())).expect("scrubbing finishes");
        assert!(polls > 0, "scrubbing is pending right after reset");
        if self.layout == FalconLayout::Ga102 {
            // Select the falcon core if the RISC-V one is selected (RM kflcnSwitchToFalcon_GA10X).
            let bcr = ga102::NV_PRISCV_RISCV_BCR_CTRL::read(self.model, self.riscv());
            if bcr.core_select() != Ok(ga102::CoreSelect::Falcon) {
                ga102::NV_PRISCV_RISCV_BCR_CTRL::default()
                    .with(ga102::NV_PRISCV_RISCV_BCR_CTRL::CORE_SELECT, ga102::CoreSelect::Falcon)
                    .write(self.model, self.riscv());
                (0..POLLS)
                    .find(|_| ga102::NV_PRISCV_RISCV_BCR_CTRL::read(self.model, self.riscv()).valid())
                    .expect("core switch completes");
            }
        }
    }

    fn imemc(&self, address: u32, secure: bool) -> u32 {
        match self.layout {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_IMEMC as C;
                C::default()
                    .with(C::BLK, (address >> 8) as u8)
                    .with(C::OFFS, ((address >> 2) & 0x3F) as u8)
                    .with(C::AINCW, true)
                    .with(C::SECURE, secure)
                    .raw()
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_IMEMC as C;
                C::default()
                    .with(C::BLK, (address >> 8) as u16)
                    .with(C::OFFS, ((address >> 2) & 0x3F) as u8)
                    .with(C::AINCW, true)
                    .with(C::SECURE, secure)
                    .raw()
            }
        }
    }

    fn dmemc(&self, address: u32) -> u32 {
        match self.layout {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_DMEMC as C;
                C::default()
                    .with(C::BLK, (address >> 8) as u8)
                    .with(C::OFFS, ((address >> 2) & 0x3F) as u8)
                    .with(C::AINCW, true)
                    .raw()
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_DMEMC as C;
                C::default()
                    .with(C::BLK, (address >> 8) as u16)
                    .with(C::OFFS, ((address >> 2) & 0x3F) as u8)
                    .with(C::AINCW, true)
                    .raw()
            }
        }
    }

    /// PIO upload to IMEM at `address`, tagging each block from `tag` (RM `s_imemCopyTo_TU102`).
    fn load_imem(&self, address: u32, bytes: &[u8], secure: bool, tag: u32) {
        self.model.write32(tu102::NV_PFALCON_FALCON_IMEMC::address(self.base(), 0), self.imemc(address, secure));
        let mut tag = tag >> 8;
        for (index, word) in bytes.chunks(4).enumerate() {
            if index % 64 == 0 {
                hwf::NV_PFALCON_FALCON_IMEMT::default().with(hwf::NV_PFALCON_FALCON_IMEMT::TAG, tag as u16).write(
                    self.model,
                    self.base(),
                    0,
                );
                tag += 1;
            }
            let value = u32::from_le_bytes(word.try_into().unwrap());
            hwf::NV_PFALCON_FALCON_IMEMD::from_raw(value).write(self.model, self.base(), 0);
        }
    }

    /// PIO upload to DMEM (RM `s_dmemCopyTo_TU102`).
    fn load_dmem(&self, address: u32, bytes: &[u8]) {
        self.model.write32(tu102::NV_PFALCON_FALCON_DMEMC::address(self.base(), 0), self.dmemc(address));
        for word in bytes.chunks(4) {
            let value = u32::from_le_bytes(word.try_into().unwrap());
            hwf::NV_PFALCON_FALCON_DMEMD::from_raw(value).write(self.model, self.base(), 0);
        }
    }

    fn read_dmem(&self, address: u32, len: usize) -> Vec<u8> {
        use tu102::NV_PFALCON_FALCON_DMEMC as C;
        // AINCR (25:25) as the TU102 header declares it; the model honours it on both layouts.
        let dmemc = self.dmemc(address) & !C::AINCW.bits.mask() | C::AINCR.bits.mask();
        self.model.write32(C::address(self.base(), 0), dmemc);
        (0..len / 4)
            .flat_map(|_| hwf::NV_PFALCON_FALCON_DMEMD::read(self.model, self.base(), 0).raw().to_le_bytes())
            .collect()
    }

    /// Start at `bootvec` through CPUCTL or CPUCTL_ALIAS (RM `kflcnStartCpu_TU102`), wait for halt,
    /// return MAILBOX0.
    fn start(&self, bootvec: u32) -> u32 {
        hwf::NV_PFALCON_FALCON_BOOTVEC::from_raw(bootvec).write(self.model, self.base());
        hwf::NV_PFALCON_FALCON_MAILBOX0::from_raw(0xFFFF_FFFF).write(self.model, self.base());
        if hwf::NV_PFALCON_FALCON_CPUCTL::read(self.model, self.base()).alias_en() {
            hwf::NV_PFALCON_FALCON_CPUCTL_ALIAS::default()
                .with(hwf::NV_PFALCON_FALCON_CPUCTL_ALIAS::STARTCPU, true)
                .write(self.model, self.base());
        } else {
            hwf::NV_PFALCON_FALCON_CPUCTL::default()
                .with(hwf::NV_PFALCON_FALCON_CPUCTL::STARTCPU, true)
                .write(self.model, self.base());
        }
        (0..POLLS)
            .find(|_| hwf::NV_PFALCON_FALCON_CPUCTL::read(self.model, self.base()).halted())
            .expect("falcon halts");
        assert!(hwf::NV_PFALCON_FALCON_IRQSTAT::read(self.model, self.base()).halt());
        hwf::NV_PFALCON_FALCON_MAILBOX0::read(self.model, self.base()).raw()
    }

    /// Programs the boot ROM for a PKC-signed ucode (RM `kgspExecuteHsFalcon_GA102`).
    fn program_brom(&self, signature_dmem_offset: u32, engine_id_mask: u16, ucode_id: u8) {
        let riscv = self.riscv();
        self.model.write32(NV_PFALCON2_FALCON_BROM_PARAADDR::address(riscv, 0), signature_dmem_offset);
        self.model.write32(NV_PFALCON2_FALCON_BROM_ENGIDMASK::address(riscv), u32::from(engine_id_mask));
        self.model.write32(NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::address(riscv), u32::from(ucode_id));
        self.model.write32(NV_PFALCON2_FALCON_MOD_SEL::address(riscv), ModSelAlgo::Rsa3k as u32);
    }
}

/// FWSEC's IMEM and its DMEM patched for FRTS at `frts_offset`, with the signature chosen for
/// the part's fuse version; plus the descriptor values the boot ROM needs (v3).
struct PreparedFwsec {
    imem: Vec<u8>,
    dmem: Vec<u8>,
    imem_virt_base: u32,
    /// (signature DMEM offset, engine id mask, ucode id) for v3.
    brom: Option<(u32, u16, u8)>,
}

fn fuse_version(model: &ModelGpu, ucode_id: u8) -> u32 {
    // kgspReadUcodeFuseVersion_GA100: highest set bit + 1, or 0.
    let raw = model.read32(boot::NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION::OFFSET + 4 * (u32::from(ucode_id) - 1)) & 0xFFFF;
    if raw == 0 {
        0
    } else {
        32 - raw.leading_zeros()
    }
}

fn prepare_fwsec(model: &ModelGpu, cmd: u32, frts_offset: u64, naive_signature: bool) -> PreparedFwsec {
    let vbios = Vbios::from_prom(model).unwrap();
    let debug_dis = if model.chipset().family() == hal::Family::Turing {
        boot::tu102::NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS::OFFSET
    } else {
        boot::NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS::OFFSET
    };
    let kind = if model.read32(debug_dis) & 1 == boot::SecureGspDebugDis::Yes as u32 {
        FwsecKind::Prod
    } else {
        FwsecKind::Debug
    };
    let fwsec = vbios.fwsec(kind).unwrap();
    let mut dmem = fwsec.dmem().to_vec();
    let mapper = fwsec.dmem_mapper;
    let init_at = (mapper.init_cmd_dmem_offset()) as usize;
    dmem[init_at..init_at + 4].copy_from_slice(&cmd.to_le_bytes());
    if cmd == FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS {
        let frts = sim::fwsec::frts_command_bytes(frts_offset);
        let at = mapper.cmd_in_buffer_offset as usize;
        dmem[at..at + frts.len()].copy_from_slice(&frts);
    }
    let brom = match fwsec.descriptor {
        FwsecDescriptor::V3(d) => {
            let version = fuse_version(model, d.ucode_id);
            let signature = if naive_signature {
                fwsec.signature(version).unwrap()
            } else {
                fwsec.signature_for_fuse_version(version).expect("a signature for the fuse version")
            };
            let at = d.pkc_data_offset as usize;
            dmem[at..at + signature.len()].copy_from_slice(signature);
            Some((d.pkc_data_offset, d.engine_id_mask, d.ucode_id))
        }
        FwsecDescriptor::V2(_) => None,
    };
    PreparedFwsec { imem: fwsec.imem().to_vec(), dmem, imem_virt_base: fwsec.descriptor.imem_virt_base(), brom }
}

fn frts_offset(model: &ModelGpu) -> u64 {
    // 1 MiB at the top of VRAM, below a 1 MiB margin (the model checks only that it fits).
    model.config().vram_bytes - (2 << 20)
}

fn run_fwsec_by_pio(model: &ModelGpu, cmd: u32, naive_signature: bool) -> u32 {
    let falcon = Flcn::gsp(model);
    falcon.reset();
    let prepared = prepare_fwsec(model, cmd, frts_offset(model), naive_signature);
    falcon.load_imem(0, &prepared.imem, true, prepared.imem_virt_base);
    falcon.load_dmem(0, &prepared.dmem);
    if let Some((signature_at, mask, ucode_id)) = prepared.brom {
        falcon.program_brom(signature_at, mask, ucode_id);
    }
    falcon.start(prepared.imem_virt_base)
}

fn assert_frts_done(model: &ModelGpu) {
    let offset = frts_offset(model);
    assert_eq!(bus::fwsec_frts_result(model), Ok(()));
    let hi = fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::read(model);
    let lo = fb::NV_PFB_PRI_MMU_WPR2_ADDR_LO::read(model);
    assert_eq!(lo.start_address(), offset, "RM: WPR2 starts at the FRTS offset");
    assert_eq!(hi.last_unit_address(), Some(offset + (1 << 20) - 0x1000), "RM: WPR2 HI non-zero");
    assert_eq!(model.wpr2(), Some((offset, offset + (1 << 20) - 1)));
}

// ---------------------------------------------------------------------------------------------
// FWSEC-FRTS.

#[test]
fn fwsec_frts_by_pio_sets_wpr2() {
    // Hopper boots through the FSP, which runs FWSEC itself: its driver never does, and GH100
    // has no GSP ucode fuses to choose a signature with (`hopper/gh100/dev_fuse.h`).
    for (model, chipset, _) in boards().into_iter().filter(|(_, c, _)| !c.uses_fsp()) {
        assert_eq!(model.wpr2(), None);
        let mailbox = run_fwsec_by_pio(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, false);
        assert_eq!(mailbox, 0, "{chipset}: MAILBOX0 {:?}", HaltCode::from_value(mailbox));
        assert_frts_done(&model);
        assert_clean(&model);
    }
    // Every chip whose boot runs FWSEC.
    for &chipset in Chipset::ALL.iter().filter(|c| !c.uses_fsp()) {
        let model = ModelGpu::for_chipset(chipset);
        assert_eq!(
            run_fwsec_by_pio(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, false),
            0,
            "{chipset}"
        );
        assert_frts_done(&model);
        assert_clean(&model);
    }
}

#[test]
fn fwsec_frts_by_dma_sets_wpr2() {
    // kgspExecuteHsFalcon_GA102: FBIF set up, IMEM (secure) then DMEM in 256-byte DMAs.
    for model in [ModelGpu::rtx3090(), ModelGpu::rtx4090(), ModelGpu::rtx2080ti()] {
        let arena = DmaArena::new();
        model.set_system_memory(Box::new(arena.clone()));
        let falcon = Flcn::gsp(&model);
        falcon.reset();
        let prepared =
            prepare_fwsec(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, frts_offset(&model), false);
        let mut buffer = arena.alloc(prepared.imem.len() + prepared.dmem.len()).unwrap();
        buffer.write(0, &prepared.imem).unwrap();
        buffer.write(prepared.imem.len(), &prepared.dmem).unwrap();
        let base = falcon.base();

        hwf::NV_PFALCON_FBIF_CTL::read(&model, falcon.fbif())
            .with(hwf::NV_PFALCON_FBIF_CTL::ALLOW_PHYS_NO_CTX, true)
            .write(&model, falcon.fbif());
        hwf::NV_PFALCON_FALCON_DMACTL::default().write(&model, base);
        hwf::NV_PFALCON_FBIF_TRANSCFG::read(&model, falcon.fbif(), 0)
            .with(hwf::NV_PFALCON_FBIF_TRANSCFG::TARGET, FbifTarget::CoherentSysmem)
            .with(hwf::NV_PFALCON_FBIF_TRANSCFG::MEM_TYPE, FbifMemType::Physical)
            .write(&model, falcon.fbif(), 0);

        let transfer = |src: u64, dest: u32, mem_off: u32, len: usize, imem: bool| {
            use hwf::NV_PFALCON_FALCON_DMATRFCMD as C;
            let cmd =
                C::default().with(C::SIZE, DmaTransferSize::Bytes256).with(C::IMEM, imem).with(C::SEC, u8::from(imem));
            hwf::NV_PFALCON_FALCON_DMATRFBASE::from_raw((src >> 8) as u32).write(&model, base);
            hwf::NV_PFALCON_FALCON_DMATRFBASE1::from_raw(((src >> 40) & 0x1FF) as u32).write(&model, base);
            for offset in (0..len as u32).step_by(256) {
                assert!(!C::read(&model, base).full());
                model.write32(tu102::NV_PFALCON_FALCON_DMATRFMOFFS::address(base), dest + offset);
                hwf::NV_PFALCON_FALCON_DMATRFFBOFFS::from_raw(mem_off + offset).write(&model, base);
                cmd.write(&model, base);
            }
            assert!(C::read(&model, base).idle());
        };
        let bus = buffer.bus_address();
        let va = prepared.imem_virt_base;
        transfer(bus - u64::from(va), 0, va, prepared.imem.len(), true);
        transfer(bus + prepared.imem.len() as u64, 0, 0, prepared.dmem.len(), false);
        if let Some((signature_at, mask, ucode_id)) = prepared.brom {
            falcon.program_brom(signature_at, mask, ucode_id);
        }
        assert_eq!(falcon.start(va), 0, "{}", model.chipset());
        assert_frts_done(&model);
        assert_eq!(falcon.read_dmem(0, 64), prepared.dmem[..64], "DMEM holds what was DMAed");
        assert_clean(&model);
        arena.free(buffer);
    }
}

fn halted_with(model: &ModelGpu, code: HaltCode) {
    let errors = model.take_errors();
    assert!(
        errors.contains(&ModelError::Falcon { engine: FalconEngine::Gsp, error: FalconError::Halted { code } }),
        "{}: expected {code}, got {errors:#?}",
        model.chipset()
    );
}

#[test]
fn fwsec_rejects_bad_commands() {
    // Malformed FRTS command: region outside VRAM.
    let model = ModelGpu::rtx3090();
    let falcon = Flcn::gsp(&model);
    falcon.reset();
    let prepared =
        prepare_fwsec(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, model.config().vram_bytes, false);
    falcon.load_imem(0, &prepared.imem, true, 0);
    falcon.load_dmem(0, &prepared.dmem);
    let (at, mask, id) = prepared.brom.unwrap();
    falcon.program_brom(at, mask, id);
    assert_eq!(falcon.start(0), HaltCode::FwsecFrtsOutOfRange.value());
    assert_eq!(bus::fwsec_frts_result(&model), Err(0x0013));
    assert_eq!(model.wpr2(), None);
    halted_with(&model, HaltCode::FwsecFrtsOutOfRange);

    // A second FRTS after a successful one: WPR2 is already set.
    let model = ModelGpu::rtx4090();
    assert_eq!(run_fwsec_by_pio(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, false), 0);
    assert_eq!(
        run_fwsec_by_pio(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, false),
        HaltCode::FwsecWpr2AlreadySet.value()
    );
    halted_with(&model, HaltCode::FwsecWpr2AlreadySet);

    // SB leaves what RM checks afterwards: the SB error code (scratch 0x15, bits 15:0) NONE.
    let model = ModelGpu::rtx2080ti();
    model.write32(nvgpu::hw::bus::NV_PBUS_SW_SCRATCH::OFFSET + 4 * 0x15, 0xdead);
    assert_eq!(
        run_fwsec_by_pio(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB, false),
        HaltCode::Success.value()
    );
    assert_eq!(model.read32(nvgpu::hw::bus::NV_PBUS_SW_SCRATCH::OFFSET + 4 * 0x15) & 0xffff, 0);
    assert_eq!(model.errors(), Vec::new());

    // The init command left unpatched (0).
    let model = ModelGpu::rtx2080ti();
    assert_eq!(run_fwsec_by_pio(&model, 0, false), HaltCode::FwsecUnsupportedCommand.value());
    halted_with(&model, HaltCode::FwsecUnsupportedCommand);
}

#[test]
fn wrong_signature_choice_is_rejected() {
    // The default fuse is version 2 and the signatures cover versions 0, 2, 3: indexing the
    // signatures by version (instead of counting the bits below it) picks the third, wrongly.
    let model = ModelGpu::rtx3090();
    assert_eq!(
        run_fwsec_by_pio(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, true),
        HaltCode::SignatureRejected.value()
    );
    halted_with(&model, HaltCode::SignatureRejected);
    assert_eq!(model.wpr2(), None);

    // Boot ROM registers left unprogrammed.
    let model = ModelGpu::rtx4090();
    let falcon = Flcn::gsp(&model);
    falcon.reset();
    let prepared =
        prepare_fwsec(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, frts_offset(&model), false);
    falcon.load_imem(0, &prepared.imem, true, 0);
    falcon.load_dmem(0, &prepared.dmem);
    assert_eq!(falcon.start(0), HaltCode::BromNotProgrammed.value());
    halted_with(&model, HaltCode::BromNotProgrammed);
}

// ---------------------------------------------------------------------------------------------
// Rejected ucode and out-of-order starts.

#[test]
fn foreign_ucode_halts_with_the_documented_error() {
    for (model, chipset, _) in boards() {
        let falcon = Flcn::gsp(&model);
        falcon.reset();
        // Something that is not a model ucode (NVIDIA's real code would look like this to it).
        let foreign: Vec<u8> = (0..512u32).map(|i| (i * 7 + 3) as u8).collect();
        falcon.load_imem(0, &foreign, true, 0);
        assert_eq!(falcon.start(0), HaltCode::UnrecognisedUcode.value(), "{chipset}");
        assert_eq!(HaltCode::UnrecognisedUcode.value(), 0x5100_0002);
        halted_with(&model, HaltCode::UnrecognisedUcode);
        assert!(model.errors().is_empty());
    }
}

#[test]
fn out_of_order_starts_are_refused() {
    let model = ModelGpu::rtx3090();
    let falcon = Flcn::gsp(&model);
    // Power on: the boot firmware used GSP; the driver must reset it first.
    assert_eq!(falcon.start(0), HaltCode::NeedsReset.value());
    halted_with(&model, HaltCode::NeedsReset);
    // Nothing loaded.
    falcon.reset();
    assert_eq!(falcon.start(0), HaltCode::NoImageAtBootvec.value());
    halted_with(&model, HaltCode::NoImageAtBootvec);
    // Loaded, but BOOTVEC points elsewhere than the tags.
    falcon.reset();
    let prepared =
        prepare_fwsec(&model, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, frts_offset(&model), false);
    falcon.load_imem(0, &prepared.imem, true, 0x1000);
    assert_eq!(falcon.start(0), HaltCode::NoImageAtBootvec.value());
    halted_with(&model, HaltCode::NoImageAtBootvec);
    // Half the image.
    falcon.reset();
    falcon.load_imem(0, &prepared.imem[..512], true, 0);
    assert_eq!(falcon.start(0), HaltCode::ImageIncomplete.value());
    halted_with(&model, HaltCode::ImageIncomplete);
    // Not secure.
    falcon.reset();
    falcon.load_imem(0, &prepared.imem, false, 0);
    assert_eq!(falcon.start(0), HaltCode::NotSecure.value());
    halted_with(&model, HaltCode::NotSecure);
    // Blocks in the wrong order (tags say so, content does not).
    falcon.reset();
    let mut swapped = prepared.imem.clone();
    swapped[256..512].copy_from_slice(&prepared.imem[512..768]);
    swapped[512..768].copy_from_slice(&prepared.imem[256..512]);
    falcon.load_imem(0, &swapped, true, 0);
    assert_eq!(falcon.start(0), HaltCode::ChecksumMismatch.value());
    halted_with(&model, HaltCode::ChecksumMismatch);
}

#[test]
fn riscv_core_select_is_honoured() {
    let model = ModelGpu::rtx4090();
    let falcon = Flcn::gsp(&model);
    falcon.reset();
    let riscv = falcon.riscv();
    ga102::NV_PRISCV_RISCV_BCR_CTRL::default()
        .with(ga102::NV_PRISCV_RISCV_BCR_CTRL::CORE_SELECT, ga102::CoreSelect::Riscv)
        .write(&model, riscv);
    assert_eq!(falcon.start(0), HaltCode::WrongCore.value());
    halted_with(&model, HaltCode::WrongCore);
    // The RISC-V core, started, finds nothing it recognises.
    use hwf::gh100::NV_PRISCV_RISCV_CPUCTL as R;
    R::default().with(R::STARTCPU, true).write(&model, riscv);
    assert!(R::read(&model, riscv).halted());
    assert!(!ga102::NV_PRISCV_RISCV_CPUCTL::read(&model, riscv).active_stat());
    assert_eq!(hwf::NV_PFALCON_FALCON_MAILBOX0::read(&model, falcon.base()).raw(), HaltCode::RiscvNoImage.value());
    halted_with(&model, HaltCode::RiscvNoImage);
}

#[test]
fn debug_signed_fwsec_is_refused_on_a_production_part() {
    let model = ModelGpu::rtx2080ti();
    let falcon = Flcn::gsp(&model);
    falcon.reset();
    let vbios = Vbios::from_prom(&model).unwrap();
    let fwsec = vbios.fwsec(FwsecKind::Debug).unwrap();
    falcon.load_imem(0, fwsec.imem(), true, 0);
    falcon.load_dmem(0, fwsec.dmem());
    assert_eq!(falcon.start(0), HaltCode::WrongFuseMode.value());
    halted_with(&model, HaltCode::WrongFuseMode);
}

// ---------------------------------------------------------------------------------------------
// Size, alignment and sequencing violations.

#[test]
fn size_and_alignment_violations_are_recorded() {
    let model = ModelGpu::rtx3090();
    let arena = DmaArena::new();
    model.set_system_memory(Box::new(arena.clone()));
    let falcon = Flcn::gsp(&model);
    let base = falcon.base();

    // During reset every falcon register is a PRI error.
    engine::NV_PGSP_FALCON_ENGINE::default().with(engine::NV_PGSP_FALCON_ENGINE::RESET, true).write(&model);
    assert_eq!(hwf::NV_PFALCON_FALCON_MAILBOX0::read(&model, base).raw(), POISON);
    engine::NV_PGSP_FALCON_ENGINE::default().write(&model);
    // Right after reset, memories are being scrubbed.
    falcon.load_dmem(0, &[1, 2, 3, 4]);
    let errors = model.take_errors();
    assert!(matches!(errors[0], ModelError::Falcon { error: FalconError::InReset { .. }, .. }), "{errors:?}");
    assert!(matches!(errors[1], ModelError::Falcon { error: FalconError::Scrubbing { .. }, .. }), "{errors:?}");
    falcon.reset();
    model.take_errors();

    // PIO past the end of IMEM (64 KiB, 256 blocks): block 256.
    let hwcfg = hwf::NV_PFALCON_FALCON_HWCFG::read(&model, base);
    assert_eq!(u32::from(hwcfg.imem_size()) * 256, 64 * 1024);
    falcon.load_imem(u32::from(hwcfg.imem_size()) * 256, &[0; 4], false, 0);
    // DMEM: the last word fits, the next one does not.
    falcon.load_dmem(64 * 1024 - 4, &[0; 8]);
    let errors = model.take_errors();
    let out_of_range =
        errors.iter().filter(|e| matches!(e, ModelError::Falcon { error: FalconError::OutOfRange { .. }, .. })).count();
    assert_eq!(out_of_range, 3, "IMEMT, IMEMD and the second DMEMD: {errors:#?}");

    // DMA before the FBIF and DMACTL are set up.
    let buffer = arena.alloc(4096).unwrap();
    use hwf::NV_PFALCON_FALCON_DMATRFCMD as C;
    let cmd = C::default().with(C::SIZE, DmaTransferSize::Bytes256);
    hwf::NV_PFALCON_FALCON_DMATRFBASE::from_raw((buffer.bus_address() >> 8) as u32).write(&model, base);
    hwf::NV_PFALCON_FALCON_DMATRFBASE1::from_raw((buffer.bus_address() >> 40) as u32).write(&model, base);
    cmd.write(&model, base);
    hwf::NV_PFALCON_FALCON_DMACTL::default().write(&model, base);
    cmd.write(&model, base);
    hwf::NV_PFALCON_FBIF_CTL::default()
        .with(hwf::NV_PFALCON_FBIF_CTL::ALLOW_PHYS_NO_CTX, true)
        .write(&model, falcon.fbif());
    cmd.write(&model, base);
    hwf::NV_PFALCON_FBIF_TRANSCFG::default()
        .with(hwf::NV_PFALCON_FBIF_TRANSCFG::TARGET, FbifTarget::CoherentSysmem)
        .with(hwf::NV_PFALCON_FBIF_TRANSCFG::MEM_TYPE, FbifMemType::Physical)
        .write(&model, falcon.fbif(), 0);
    // Misaligned offsets, then a size other than 256 B, then past the end of system memory.
    model.write32(tu102::NV_PFALCON_FALCON_DMATRFMOFFS::address(base), 0x80);
    cmd.write(&model, base);
    model.write32(tu102::NV_PFALCON_FALCON_DMATRFMOFFS::address(base), 0);
    C::from_raw(cmd.raw() & !C::SIZE.bits.mask()).write(&model, base);
    hwf::NV_PFALCON_FALCON_DMATRFFBOFFS::from_raw(4096).write(&model, base);
    cmd.write(&model, base);
    // And one that works.
    hwf::NV_PFALCON_FALCON_DMATRFFBOFFS::from_raw(0).write(&model, base);
    cmd.write(&model, base);
    let dma: Vec<DmaError> = model
        .take_errors()
        .into_iter()
        .map(|e| match e {
            ModelError::Falcon { error: FalconError::Dma(d), .. } => d,
            other => panic!("unexpected {other}"),
        })
        .collect();
    assert_eq!(
        dma,
        vec![
            DmaError::RequiresContext,
            DmaError::PhysicalWithoutContextNotAllowed,
            DmaError::Aperture { ctxdma: 0, transcfg: 0 },
            DmaError::Misaligned { memory_offset: 0x80, external_offset: 0 },
            DmaError::UnsupportedSize { raw_size: 0 },
            DmaError::Fault { bus: buffer.bus_address() + 4096, len: 256, write: false },
        ]
    );
    arena.free(buffer);

    // Starting through CPUCTL_ALIAS while ALIAS_EN is clear does nothing (and says so).
    hwf::NV_PFALCON_FALCON_CPUCTL_ALIAS::default()
        .with(hwf::NV_PFALCON_FALCON_CPUCTL_ALIAS::STARTCPU, true)
        .write(&model, base);
    assert!(!hwf::NV_PFALCON_FALCON_CPUCTL::read(&model, base).halted());
    assert!(matches!(model.take_errors()[..], [ModelError::Falcon { error: FalconError::StartIgnored { .. }, .. }]));
}

#[test]
fn hopper_reset_reports_status() {
    let model = ModelGpu::h200();
    use engine::gh100::{ResetStatus, NV_PGSP_FALCON_ENGINE as E};
    E::default().with(E::RESET, true).write(&model);
    assert_eq!(E::read(&model).reset_status(), Ok(ResetStatus::Asserted));
    E::default().write(&model);
    assert_eq!(E::read(&model).reset_status(), Ok(ResetStatus::Deasserted));
    assert_clean(&model);
}

// ---------------------------------------------------------------------------------------------
// The FSP's EMEM.

#[test]
fn fsp_emem_port_round_trips() {
    for model in [ModelGpu::h200(), ModelGpu::for_chipset(Chipset::GB202)] {
        use engine::{NV_PFSP_EMEMC as C, NV_PFSP_EMEMD as D};
        let port = 0;
        let words = [0x1111_1111u32, 0x2222_2222, 0x3333_3333, 0x4444_4444];
        // RM `kfspConfigEmemc_GH100`: offset in dwords split into block and dword.
        let offset_dwords = 70u32;
        let ememc = |aincw, aincr| {
            C::default()
                .with(C::BLK, (offset_dwords / 64) as u8)
                .with(C::OFFS, (offset_dwords % 64) as u8)
                .with(C::AINCW, aincw)
                .with(C::AINCR, aincr)
        };
        ememc(true, false).write(&model, port);
        for w in words {
            D::from_raw(w).write(&model, port);
        }
        let end = C::read(&model, port);
        assert_eq!(u32::from(end.blk()) * 64 + u32::from(end.offs()), offset_dwords + 4, "EMEMC advanced");
        ememc(false, true).write(&model, port);
        let back: Vec<u32> = (0..4).map(|_| D::read(&model, port).raw()).collect();
        assert_eq!(back, words);
        // Queue registers are plain storage the FSP would read.
        engine::NV_PFSP_QUEUE_HEAD::from_raw(0x40).write(&model, 0);
        assert_eq!(engine::NV_PFSP_QUEUE_HEAD::read(&model, 0).raw(), 0x40);
        assert_clean(&model);

        // Its IMEM/DMEM are the FSP firmware's.
        let fsp = hal::for_chipset(model.chipset()).falcon(FalconEngine::Fsp).unwrap().base;
        hwf::NV_PFALCON_FALCON_DMEMD::from_raw(0).write(&model, fsp, 0);
        assert!(matches!(
            model.take_errors()[..],
            [ModelError::Falcon { engine: FalconEngine::Fsp, error: FalconError::Privileged { .. } }]
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// The replayable fault buffer's registers on BAR0 (`dev_vm.h`, VF space).

#[test]
fn replayable_fault_buffer_registers_answer_on_bar0_and_refuse_what_hardware_would() {
    use nvgpu::hw::vm::{
        NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE as SIZE_LAYOUT, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET as GET,
        NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT as PUT, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE as SIZE,
        NV_VIRTUAL_FUNCTION_PRIV_MMU_REPLAY_FAULT_BUFFER as REPLAYABLE, VF_BASE,
    };
    for (model, chipset, _) in boards() {
        let size = SIZE_LAYOUT::from_raw(0).with(SIZE_LAYOUT::VAL, 64).with(SIZE_LAYOUT::ENABLE, true);
        model.write32(SIZE::address(VF_BASE, REPLAYABLE), size.raw());
        assert_eq!(model.read32(SIZE::address(VF_BASE, REPLAYABLE)), size.raw(), "{chipset}");
        assert_eq!(PUT::from_raw(model.read32(PUT::address(VF_BASE, REPLAYABLE))).ptr(), 0);
        assert_eq!(GET::from_raw(model.read32(GET::address(VF_BASE, REPLAYABLE))).ptr(), 0);
        assert_clean(&model);
        // GET beyond PUT: a model error, and GETPTR_CORRUPTED latches until written 1.
        model.write32(GET::address(VF_BASE, REPLAYABLE), GET::from_raw(0).with(GET::PTR, 5).raw());
        let errors = model.take_errors();
        assert!(
            matches!(
                errors.as_slice(),
                [ModelError::FaultBuffer(sim::fault_buffer::FaultBufferError::GetBeyondPut { get: 5, .. })]
            ),
            "{chipset}: {errors:?}"
        );
        assert!(PUT::from_raw(model.read32(PUT::address(VF_BASE, REPLAYABLE))).getptr_corrupted());
        model.write32(GET::address(VF_BASE, REPLAYABLE), GET::from_raw(0).with(GET::GETPTR_CORRUPTED, true).raw());
        assert!(!PUT::from_raw(model.read32(PUT::address(VF_BASE, REPLAYABLE))).getptr_corrupted());
        // PUT is the hardware's.
        model.write32(PUT::address(VF_BASE, REPLAYABLE), 3);
        assert!(matches!(model.take_errors().as_slice(), [ModelError::FaultBuffer(_)]), "{chipset}");
        assert_clean(&model);
    }
}
