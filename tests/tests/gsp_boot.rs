//! The GSP boot (`nvgpu::gsp::boot`, `nvgpu::fwsec::frts`) on the GPU model (`sim`), with
//! `sim::DmaArena` as DMA memory and the real firmware of release 535.261.03 where the boot
//! needs it: GSP-RM from Debian's `firmware-nvidia-gsp`, the boot ucodes (booters, bootloaders,
//! Turing's generic falcon bootloader, Hopper's GSP-FMC) extracted from NVIDIA's 535.261.03
//! source by `cargo xtask extract-firmware`.
//!
//! Missing real data is a failure, never a skip: run `sudo scripts/fetch-real-data.sh` from the
//! workspace root first (or point `NVGPU_REAL_DATA` at a copy).

use std::path::{Path, PathBuf};
use std::time::Instant;

use nvgpu::chip::Chipset;
use nvgpu::falcon::{Falcon, Gsp};
use nvgpu::firmware::FirmwareBundle;
use nvgpu::fwsec::frts::{
    run_fwsec_frts, FrtsRegion, FwsecFrtsError, FwsecMethod, GenericBootloader, FRTS_REGION_SIZE,
};
use nvgpu::fwsec::FwsecKind;
use nvgpu::gsp::boot::booter::BooterError;
use nvgpu::gsp::boot::data::{walk_radix3, BootData, FbInputs};
use nvgpu::gsp::boot::{wpr2, BootConfig, BootErrorKind, BootInputs, BootStep, GspBoot};
use nvgpu::gsp::cmdq::QueueHeadDoorbell;
use nvgpu::gsp::fb_layout::WprChipParams;
use nvgpu::gsp::fw::libos::{LibosMemoryRegionInitArgument, LOGINIT_ID, LOGINTR_ID, LOGRM_ID, RMARGS_ID};
use nvgpu::gsp::fw::msgq::MessageQueueLayout;
use nvgpu::gsp::fw::wpr::GSP_FW_WPR_META_MAGIC;
use nvgpu::hal;
use nvgpu::hw::fw::rmflcnbl::RmFlcnBlDesc;
use nvgpu::hw::headers;
use nvgpu::platform::Clock;
use nvgpu::vbios::Vbios;
use sim::{BootSequencer, DmaArena, GspFault, GspRmStatus, HaltCode, ModelConfig, ModelGpu};
use tests::model_boot::{firmware_files, ModelClock};
use tests::rm_c::data_root;

// ---------------------------------------------------------------------------------------------
// Clocks, memory, firmware.

/// Host wall-clock time, for step timings of the model boot on this machine.
struct HostClock(Instant);

impl Clock for HostClock {
    fn now_ns(&self) -> u64 {
        self.0.elapsed().as_nanos() as u64
    }
}

fn model_with_memory(config: ModelConfig) -> (ModelGpu, DmaArena) {
    let model = ModelGpu::new(config);
    let arena = DmaArena::new();
    model.set_system_memory(Box::new(arena.clone()));
    (model, arena)
}

fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "missing real data: {} ({what}).\nThis test never passes without the real files: run \
         `sudo scripts/fetch-real-data.sh` from the workspace root, or set NVGPU_REAL_DATA.",
        path.display()
    );
    path
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}): run `sudo scripts/fetch-real-data.sh` from the workspace root", path.display())
    })
}

fn gsp_falcon(model: &ModelGpu) -> Falcon<&ModelGpu, ModelClock, Gsp> {
    Falcon::new(model, ModelClock::default(), hal::for_chipset(model.chipset())).expect("GSP falcon")
}

/// The FRTS region the WPR layout puts on a board: right below the 128 KiB-aligned end of WPR2,
/// under the 1 MiB VGA workspace at the top of FB.
fn frts_region_for(model: &ModelGpu) -> FrtsRegion {
    let fb = model.config().vram_bytes;
    FrtsRegion::at((fb - 0x10_0000) / 0x2_0000 * 0x2_0000 - FRTS_REGION_SIZE)
}

// ---------------------------------------------------------------------------------------------
// FWSEC-FRTS as a driver step.

#[test]
fn fwsec_frts_step_sets_wpr2_over_the_frts_region_on_ga102_and_ad102() {
    for config in [ModelConfig::rtx3090(), ModelConfig::rtx4090()] {
        let (model, arena) = model_with_memory(config);
        let vbios = Vbios::from_prom(&model).expect("model VBIOS");
        let fwsec = vbios.fwsec(FwsecKind::Prod).expect("FWSEC");
        let region = frts_region_for(&model);
        let gsp = gsp_falcon(&model);
        let outcome = run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, region, None)
            .unwrap_or_else(|e| panic!("{:?}: {e} (model: {:?})", model.chipset(), model.errors()));
        assert_eq!(outcome.method, FwsecMethod::BootFromHs);
        assert_eq!(outcome.wpr2, (region.offset, region.last_byte()));
        assert_eq!(outcome.fuse_version, 2, "the default model fuse 0b11 is version 2");
        assert_eq!(model.wpr2(), Some((region.offset, region.last_byte())));
        assert_eq!(wpr2(&model), model.wpr2());
        assert_eq!(model.errors(), vec![], "{:?}", model.chipset());
        assert_eq!(arena.allocated(), 0, "the FWSEC image's DMA memory was returned");
    }
}

fn gsp_hal(model: &ModelGpu) -> &'static nvgpu::hal::Hal {
    hal::for_chipset(model.chipset())
}

#[test]
fn fwsec_frts_with_a_corrupted_signature_fails_with_a_typed_error() {
    let (model, arena) = model_with_memory(ModelConfig::rtx3090());
    let pristine = Vbios::from_prom(&model).expect("model VBIOS");
    let fwsec = pristine.fwsec(FwsecKind::Prod).expect("FWSEC");
    // Flip a byte of every signature in a copy of the ROM, so whichever the fuse selects is bad.
    let mut rom = pristine.rom().to_vec();
    let signatures = fwsec.signatures();
    let start = signatures.as_ptr() as usize - pristine.rom().as_ptr() as usize;
    for sig in 0..fwsec.signature_count() as usize {
        rom[start + sig * fwsec.signature_size() as usize + 17] ^= 0x5a;
    }
    let broken = Vbios::from_bytes(&rom).expect("still parses");
    let broken_fwsec = broken.fwsec(FwsecKind::Prod).expect("FWSEC");

    let gsp = gsp_falcon(&model);
    let err = run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &broken_fwsec, frts_region_for(&model), None).unwrap_err();
    assert_eq!(err, FwsecFrtsError::Wpr2NotSet { mailbox0: HaltCode::SignatureRejected.value() });
    assert!(err.to_string().contains("no WPR2 after FWSEC ran"), "{err}");
    assert_eq!(model.wpr2(), None);
    model.take_errors();
}

#[test]
fn fwsec_frts_without_a_signature_for_the_fuse_version_is_refused_before_running() {
    // Fuse 0b1 is version 1; the model FWSEC is signed for versions 0, 2 and 3 only.
    let config = ModelConfig { fwsec_ucode_fuse: 0b1, ..ModelConfig::rtx4090() };
    let (model, arena) = model_with_memory(config);
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let fwsec = vbios.fwsec(FwsecKind::Prod).expect("FWSEC");
    let gsp = gsp_falcon(&model);
    let err = run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, frts_region_for(&model), None).unwrap_err();
    assert!(matches!(err, FwsecFrtsError::NoSignatureForFuseVersion { fuse_version: 1, .. }), "{err:?}");
    assert!(err.to_string().contains("bad firmware signature"), "{err}");
    assert_eq!(model.errors(), vec![]);
}

#[test]
fn fwsec_frts_a_second_time_reports_fwsecs_frts_error_code() {
    let (model, arena) = model_with_memory(ModelConfig::rtx3090());
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let fwsec = vbios.fwsec(FwsecKind::Prod).expect("FWSEC");
    let gsp = gsp_falcon(&model);
    let region = frts_region_for(&model);
    run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, region, None).expect("first run");
    let err = run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, region, None).unwrap_err();
    let code = HaltCode::FwsecWpr2AlreadySet.value() as u16;
    assert!(matches!(err, FwsecFrtsError::FrtsErrorCode { code: c, .. } if c == code), "{err:?}");
    model.take_errors();
}

#[test]
fn fwsec_frts_refuses_regions_fwsec_cannot_take() {
    let (model, arena) = model_with_memory(ModelConfig::rtx3090());
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let fwsec = vbios.fwsec(FwsecKind::Prod).expect("FWSEC");
    let gsp = gsp_falcon(&model);
    for region in [FrtsRegion::at(0), FrtsRegion::at(0x1234), FrtsRegion { offset: 0x10_0000, size: 0x20_0000 }] {
        let err = run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, region, None).unwrap_err();
        assert!(matches!(err, FwsecFrtsError::BadRegion { .. }), "{err:?}");
    }
    assert_eq!(model.errors(), vec![], "nothing touched the GPU");
}

#[test]
fn turing_fwsec_needs_the_generic_bootloader() {
    let (model, arena) = model_with_memory(ModelConfig::rtx2080ti());
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let fwsec = vbios.fwsec(FwsecKind::Prod).expect("FWSEC");
    let gsp = gsp_falcon(&model);
    let err = run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, frts_region_for(&model), None).unwrap_err();
    assert_eq!(err, FwsecFrtsError::NoGenericBootloader);
}

/// NVIDIA's generic falcon bootloader of 535.261.03 (`ksec2GetBinArchiveBlUcode_TU102`, extracted
/// from RM's source) on the model: the driver puts it at the top of IMEM by PIO with its
/// descriptor at DMEM 0; the model recognises it, runs its copies, and the FWSEC it loaded opens
/// WPR2 over FRTS. A stand-in image of the same size is not NVIDIA's loader: the model halts.
#[test]
fn turing_fwsec_frts_through_nvidias_generic_bootloader_on_the_model() {
    let files = firmware_files(Chipset::TU102);
    let loader = FirmwareBundle::generic_bootloader(&files, Chipset::TU102)
        .expect("generic bootloader parses")
        .expect("Turing takes it");
    let (model, arena) = model_with_memory(ModelConfig::rtx2080ti());
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let fwsec = vbios.fwsec(FwsecKind::Prod).expect("FWSEC");
    let region = frts_region_for(&model);
    let gsp = gsp_falcon(&model);
    let outcome = run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, region, Some(&loader))
        .unwrap_or_else(|e| panic!("{e} (model: {:?})", model.errors()));
    assert_eq!(outcome.method, FwsecMethod::BootWithLoader);
    assert_eq!(outcome.wpr2, (region.offset, region.last_byte()));
    assert_eq!(model.wpr2(), Some((region.offset, region.last_byte())));
    assert_eq!(model.errors(), vec![]);
    assert_eq!(arena.allocated(), 0);

    let (model, arena) = model_with_memory(ModelConfig::rtx2080ti());
    let stand_in = vec![0u8; 0x300];
    let loader = GenericBootloader { desc: RmFlcnBlDesc::RM_535_SEC2_GP10X, image: &stand_in };
    let gsp = gsp_falcon(&model);
    let err =
        run_fwsec_frts(&gsp, gsp_hal(&model), &arena, &fwsec, frts_region_for(&model), Some(&loader)).unwrap_err();
    assert!(matches!(err, FwsecFrtsError::Wpr2NotSet { .. }), "{err:?}");
    model.take_errors();
    assert_eq!(arena.allocated(), 0);
}

// ---------------------------------------------------------------------------------------------
// Boot data in DMA memory, with the real firmware.

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// `LibosMemoryRegionInitArgument` number `index` of a table, decoded by hand from the header's
/// layout (id8 at 0, pa at 8, size at 16, kind at 24, loc at 25).
fn libos_entry(table: &[u8], index: usize) -> (u64, u64, u64, u8, u8) {
    let at = index * 32;
    (u64_at(table, at), u64_at(table, at + 8), u64_at(table, at + 16), table[at + 24], table[at + 25])
}

#[test]
fn boot_data_decodes_back_for_ga102_and_ad102() {
    for chip in [Chipset::GA102, Chipset::AD102] {
        let files = firmware_files(chip);
        let bundle = FirmwareBundle::load(&files, chip).expect("firmware bundle");
        let arena = DmaArena::new();
        let fb = FbInputs {
            params: WprChipParams::for_chipset(chip).expect("params"),
            usable_fb_size: 24 << 30,
            vga_workspace_base: None,
            mmu_lock: None,
        };
        let layout = MessageQueueLayout::rm_default();
        let mut data = BootData::prepare(&arena, &bundle.gsp, &bundle.bootloader, &fb, layout, 0).expect("boot data");

        // WPR metadata: valid, pointing at the images in memory.
        let meta = data.wpr_meta_in_memory().expect("WPR meta");
        assert_eq!(meta, data.wpr_meta);
        assert!(meta.is_valid_header() && meta.magic == GSP_FW_WPR_META_MAGIC);
        assert_eq!(meta.sysmem_addr_of_radix3_elf, data.gsp_rm.bus_address());
        assert_eq!(meta.size_of_radix3_elf, bundle.gsp.image_size());
        assert_eq!(meta.sysmem_addr_of_bootloader, data.boot_binary.bus_address());
        assert_eq!(meta.size_of_bootloader, bundle.bootloader.image().len() as u64);
        assert_eq!(meta.bootloader_code_offset, u64::from(bundle.bootloader.desc.monitor_code_offset));
        assert_eq!(meta.bootloader_data_offset, u64::from(bundle.bootloader.desc.monitor_data_offset));
        assert_eq!(meta.bootloader_manifest_offset, u64::from(bundle.bootloader.desc.manifest_offset));
        assert_eq!(meta.signature.sysmem_addr_of_signature, data.signature.bus_address());
        assert_eq!(meta.signature.size_of_signature as usize, bundle.gsp.signature().len().next_multiple_of(256));
        assert_eq!(data.signature.read_vec(0, bundle.gsp.signature().len()).unwrap(), bundle.gsp.signature());
        assert_eq!(meta.fb_size, 24 << 30);
        assert_eq!(meta.frts_size, FRTS_REGION_SIZE);
        assert_eq!(meta.frts_offset + meta.frts_size, meta.gsp_fw_wpr_end);
        assert_eq!(data.boot_binary.read_vec(0, data.boot_binary_len).unwrap(), bundle.bootloader.image());

        // Radix3: the tables, walked as GSP's bootloader walks them, lead to the image.
        let walked = walk_radix3(
            &data.gsp_rm.read_vec(0, data.gsp_rm.len()).unwrap(),
            data.gsp_rm.bus_address(),
            meta.size_of_radix3_elf,
        )
        .expect("radix3 walk stays inside the block");
        assert!(walked == bundle.gsp.image(), "{chip:?}: radix3 walk differs from .fwimage");

        // LIBOS arguments: LOGINIT, LOGINTR, LOGRM, RMARGS, then nothing.
        let args = data.libos_args.read_vec(0, data.libos_args.len()).unwrap();
        let args = args.as_slice();
        // Kind CONTIGUOUS (1), location SYSMEM (1).
        for (i, (id, log)) in [LOGINIT_ID, LOGINTR_ID, LOGRM_ID].into_iter().zip(&data.logs).enumerate() {
            assert_eq!(libos_entry(args, i), (id, log.region.bus_address(), 0x10000, 1, 1), "{}", log.name);
            // The log's page table follows its put pointer.
            let words: Vec<u64> = (0..17).map(|i| log.region.read_u64(i * 8).unwrap()).collect();
            assert_eq!(words[0], 0, "put pointer");
            for page in 0..16 {
                assert_eq!(words[1 + page], log.region.bus_address() + page as u64 * 0x1000);
            }
        }
        assert_eq!(libos_entry(args, 3), (RMARGS_ID, data.rm_args_page.bus_address(), 0x1000, 1, 1));
        assert!(args[4 * 32..].iter().all(|&b| b == 0), "the table ends after RMARGS");
        assert_eq!(LibosMemoryRegionInitArgument::default().kind, 0);

        // RM arguments (`MESSAGE_QUEUE_INIT_ARGUMENTS` first): the queues.
        let rm = data.rm_args_page.read_vec(0, data.rm_args_page.len()).unwrap();
        let rm = rm.as_slice();
        assert_eq!(u64_at(rm, 0), data.queue_bus_address, "sharedMemPhysAddr");
        assert_eq!((u32_at(rm, 8), u64_at(rm, 16), u64_at(rm, 24)), (129, 0x1000, 0x41000));
        assert_eq!(data.rm_args.message_queue_init_arguments.shared_mem_phys_addr, data.queue_bus_address);
        assert_eq!(u32_at(rm, 60), 0, "gpuInstance");

        let queue = data.take_queue_memory().expect("queue memory");
        assert_eq!(queue.bus_address(), data.queue_bus_address);
        assert_eq!(queue.len() as u64, layout.shared_size());
        data.return_queue_memory(queue);
        drop(data);
        assert_eq!(arena.allocated(), 0, "{chip:?}: every region returned");
    }
}

#[test]
fn the_real_booters_fit_how_sec2_loads_them() {
    for chip in [Chipset::TU102, Chipset::GA100, Chipset::GA102, Chipset::AD102] {
        let files = firmware_files(chip);
        let bundle = FirmwareBundle::load(&files, chip).expect("bundle");
        for (name, booter) in [("booter_load", &bundle.booter_load), ("booter_unload", &bundle.booter_unload)] {
            let b = booter.as_ref().expect("Turing..Ada have booters");
            let l = b.load;
            eprintln!(
                "{chip:?} {name}: os code {:#x}+{:#x}, os data {:#x}+{:#x}, app code {:#x}+{:#x}, signature at DMEM {:#x}, ucode id {}, engines {:#x}, {} signatures",
                l.os_code_offset, l.os_code_size, l.os_data_offset, l.os_data_size, l.app_code_offset, l.app_code_size,
                b.signature_dmem_offset(), b.meta.ucode_id, b.meta.engine_id_mask, b.num_signatures
            );
            assert_eq!(l.num_apps, 1);
            // DMA (GA102+) and PIO tags need the pieces on 256-byte boundaries.
            assert_eq!(l.app_code_offset % 256, 0, "{chip:?} {name}");
            assert_eq!(l.os_data_offset % 256, 0, "{chip:?} {name}");
            assert_eq!(l.os_code_offset % 256, 0, "{chip:?} {name}");
            assert!(b.signature_dmem_offset() < l.os_data_size);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The whole boot on the model.

fn boot_inputs<'a>(
    model: &'a ModelGpu,
    clock: &'a dyn Clock,
    arena: &'a DmaArena,
    bundle: &'a FirmwareBundle<'a>,
    vbios: &'a Vbios,
) -> BootInputs<'a, ModelGpu, dyn Clock + 'a, DmaArena> {
    BootInputs {
        io: model,
        clock,
        dma: arena,
        chipset: model.chipset(),
        firmware: bundle,
        vbios: Some(vbios),
        generic_bootloader: None,
        fmc: None,
    }
}

/// One GA10x/Ada boot on the model with the 535.261.03 firmware: the boot (or its error), and the
/// model afterwards.
struct ModelBoot {
    model: ModelGpu,
    arena: DmaArena,
}

impl ModelBoot {
    fn new(config: ModelConfig, sequencer: BootSequencer) -> Self {
        let (model, arena) = model_with_memory(config);
        model.set_gsp_boot_sequencer(sequencer);
        Self { model, arena }
    }
}

/// Boots `config` to `GSP_INIT_DONE` and the static information, unloads, and checks every
/// step's hardware postcondition and the model's view; prints the boot log with host times.
fn boot_and_unload(config: ModelConfig, sequencer: BootSequencer) {
    let chip = config.chipset;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("bundle");
    let mb = ModelBoot::new(config, sequencer);
    let (model, arena) = (&mb.model, &mb.arena);
    let vbios = Vbios::from_prom(model).expect("model VBIOS");
    let clock = HostClock(Instant::now());
    let mut boot = GspBoot::new(
        boot_inputs(model, &clock, arena, &bundle, &vbios),
        placed(BootConfig::default(), model),
        QueueHeadDoorbell(model),
    );
    let result = boot.run();
    eprintln!("{chip:?} ({sequencer:?}):\n{}", boot.report());
    let report = result.unwrap_or_else(|e| panic!("{e}\nmodel errors: {:?}", model.errors()));

    // Every step ran, in the script's order.
    let ran: Vec<BootStep> = report.steps.iter().map(|s| s.step).collect();
    assert_eq!(
        ran,
        [
            BootStep::WaitGfwBoot,
            BootStep::CheckWpr2Down,
            BootStep::PrepareBootData,
            BootStep::FwsecFrts,
            BootStep::ResetGspIntoRiscv,
            BootStep::QueueInitRpcs,
            BootStep::ProgramLibosArgs,
            BootStep::BooterLoad,
            BootStep::ProgramFalconOs,
            BootStep::RiscvActive,
            BootStep::LinkStatusQueue,
            BootStep::WaitInitDone,
            BootStep::GetStaticInfo,
        ]
    );
    // Postconditions as the model saw them: WPR2 grown by the booter from FRTS to GSP-RM's
    // region, SEC2 reported success, GSP-RM initialised, the registry RM sends on Linux.
    let meta = report.wpr_meta.expect("WPR meta");
    assert_eq!(report.fwsec.map(|f| f.wpr2), Some((meta.frts_offset, meta.frts_offset + meta.frts_size - 1)));
    assert_eq!(report.booter_load.map(|b| b.mailboxes.mailbox0), Some(0));
    assert_eq!(model.wpr2(), Some((meta.gsp_fw_wpr_start, meta.gsp_fw_wpr_end - 1)));
    assert_eq!(model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
    let registry: Vec<String> = model.gsp_registry().into_iter().map(|e| e.name).collect();
    assert_eq!(registry, ["RMSecBusResetEnable", "RMForcePcieConfigSave"]);
    match sequencer {
        BootSequencer::None => assert_eq!(report.sequencer_runs, 0),
        BootSequencer::RegistersOnly => assert_eq!((report.sequencer_runs, report.resumes), (1, 0)),
        BootSequencer::WithCoreResume => assert_eq!((report.sequencer_runs, report.resumes), (1, 1)),
    }
    let static_info = boot.static_info().expect("static info");
    assert_eq!(report.gpu_name.as_deref(), Some(static_info.gpu_name().as_str()));
    eprintln!("{chip:?}: GSP-RM says \"{}\"", static_info.gpu_name());
    assert_eq!(model.errors(), vec![], "the strict model saw nothing wrong");

    // Unload: GSP-RM suspends, FWSEC-SB (the model has none: a warning, as in RM), WPR2 down.
    let unload = boot.unload().unwrap_or_else(|e| panic!("{e}\nmodel errors: {:?}", model.errors()));
    eprintln!("{chip:?} unload:\n{unload}");
    for w in &unload.warnings {
        eprintln!("  warning: {w}");
    }
    assert_eq!(model.wpr2(), None);
    assert_eq!(model.gsp_rm_status(), GspRmStatus::Unloaded);
    drop(boot);
    model.take_errors();
    assert_eq!(arena.allocated(), 0, "every DMA region went back");
}

#[test]
fn ga10x_and_ada_boot_to_init_done_with_the_cpu_sequencer_and_unload() {
    for config in [ModelConfig::rtx3090(), ModelConfig::rtx4090()] {
        boot_and_unload(config, BootSequencer::WithCoreResume);
    }
}

#[test]
fn ga10x_and_ada_boot_to_init_done_without_a_sequencer_and_unload() {
    for config in [ModelConfig::rtx3090(), ModelConfig::rtx4090()] {
        boot_and_unload(config, BootSequencer::None);
    }
}

/// A boot of `config` on the model with the 535.261.03 firmware and virtual time, after `prepare`
/// armed something on the model; returns the error and the steps that ran.
/// `config` with the placement the model's board declares, as the kernel's PCI scan would give
/// it (the model's GSP-RM refuses a `GSP_SET_SYSTEM_INFO` that says otherwise).
fn placed(config: BootConfig, model: &ModelGpu) -> BootConfig {
    BootConfig { pci: sim::boot_placement(model.config()), ..config }
}

fn failing_boot(
    config: ModelConfig,
    boot_config: BootConfig,
    prepare: impl FnOnce(&ModelGpu),
) -> (nvgpu::gsp::boot::BootError, Vec<BootStep>) {
    let chip = config.chipset;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("bundle");
    let (model, arena) = model_with_memory(config);
    model.set_gsp_boot_sequencer(BootSequencer::None);
    prepare(&model);
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let clock = ModelClock::default();
    let mut boot = GspBoot::new(
        boot_inputs(&model, &clock, &arena, &bundle, &vbios),
        placed(boot_config, &model),
        QueueHeadDoorbell(&model),
    );
    let err = boot.run().expect_err("the boot must fail");
    eprintln!("{err}");
    let ran = boot.report().steps.iter().map(|s| s.step).collect();
    drop(boot);
    model.take_errors();
    assert_eq!(arena.allocated(), 0, "a failed boot returns its DMA memory");
    (err, ran)
}

/// `GSP_SET_SYSTEM_INFO` must say where the GPU is. The all-zero placement the driver sent
/// before the platform filled it in, and a BAR1 off by a page, are refused by the model's
/// GSP-RM, which names the field; the boot then fails at INIT_DONE. The board's own placement
/// boots (every other boot test).
#[test]
fn gsp_set_system_info_without_the_gpus_placement_is_refused() {
    let chip = Chipset::GA102;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("bundle");
    let mut off_by_a_page = sim::boot_placement(&ModelConfig::rtx3090());
    off_by_a_page.bar1 += 0x1000;
    for (pci, field) in [(nvgpu::gsp::boot::PciPlacement::default(), "gpuPhysAddr"), (off_by_a_page, "gpuPhysFbAddr")] {
        let (model, arena) = model_with_memory(ModelConfig::rtx3090());
        model.set_gsp_boot_sequencer(BootSequencer::None);
        let vbios = Vbios::from_prom(&model).expect("model VBIOS");
        let clock = ModelClock::default();
        let config = BootConfig { pci, init_done_timeout_ms: 50, ..BootConfig::default() };
        let mut boot =
            GspBoot::new(boot_inputs(&model, &clock, &arena, &bundle, &vbios), config, QueueHeadDoorbell(&model));
        let err = boot.run().expect_err("a wrong placement fails the boot");
        eprintln!("{err}");
        assert_eq!(err.step, BootStep::WaitInitDone, "{err}");
        drop(boot);
        let errors = format!("{:?}", model.take_errors());
        assert!(errors.contains(field), "the model names {field}: {errors}");
    }
}

#[test]
fn a_booter_error_code_is_a_typed_error_of_the_booter_load_step() {
    let (err, _) = failing_boot(ModelConfig::rtx3090(), BootConfig::default(), |m| {
        m.inject(GspFault::BooterHalts { mailbox0: 0x0bad_b007 })
    });
    assert_eq!(err.step, BootStep::BooterLoad);
    assert!(matches!(err.kind, BootErrorKind::Booter(BooterError::Failed { mailbox0: 0x0bad_b007, .. })), "{err}");
    assert!(err.to_string().contains("error code 0xbadb007 in MAILBOX0"), "{err}");
}

#[test]
fn a_sec2_fuse_without_a_booter_signature_is_refused() {
    // The GA102 booters carry two signatures (fuse versions 0 and 1); fuse bits 0b11 are version 2.
    let (err, _) = failing_boot(ModelConfig::rtx3090(), BootConfig::default(), |m| m.set_sec2_ucode_fuse(3, 0b11));
    assert_eq!(err.step, BootStep::BooterLoad);
    assert!(matches!(err.kind, BootErrorKind::Booter(BooterError::Image { .. })), "{err}");
}

#[test]
fn a_gsp_rm_that_never_answers_times_out_waiting_for_init_done() {
    let config = BootConfig { init_done_timeout_ms: 50, ..BootConfig::default() };
    let (err, ran) = failing_boot(ModelConfig::rtx4090(), config, |m| m.inject(GspFault::DropCommands));
    assert_eq!(err.step, BootStep::WaitInitDone);
    assert!(ran.contains(&BootStep::BooterLoad) && ran.contains(&BootStep::LinkStatusQueue));
    assert!(err.to_string().contains("after 50 ms"), "{err}");
}

#[test]
fn a_second_boot_without_a_gpu_reset_stops_at_wpr2() {
    // FWSEC-FRTS left WPR2 up (as after a boot): RM refuses to boot again.
    let (err, ran) = failing_boot(ModelConfig::rtx3090(), BootConfig::default(), |m| {
        let vbios = Vbios::from_prom(m).unwrap();
        let fwsec = vbios.fwsec(FwsecKind::Prod).unwrap();
        let arena = DmaArena::new();
        m.set_system_memory(Box::new(arena.clone()));
        run_fwsec_frts(&gsp_falcon(m), gsp_hal(m), &arena, &fwsec, frts_region_for(m), None).unwrap();
    });
    assert_eq!(ran, [BootStep::WaitGfwBoot, BootStep::CheckWpr2Down]);
    assert!(matches!(err.kind, BootErrorKind::Wpr2AlreadyUp { .. }), "{err}");
}

/// Turing: FWSEC-FRTS through NVIDIA's generic falcon bootloader, the GSP reset into its falcon
/// core, booter_load by PIO on SEC2 (the 535.261.03 booter), GSP-RM to `GSP_INIT_DONE` and the
/// static information; then the unload (FWSEC-SB through the loader: the model FWSEC implements
/// no SB, a warning as in RM) with booter_unload taking WPR2 down.
#[test]
fn turing_boots_to_init_done_through_the_generic_bootloader_and_unloads() {
    let chip = Chipset::TU102;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("bundle");
    let loader = FirmwareBundle::generic_bootloader(&files, chip).expect("generic bootloader parses");
    let config = ModelConfig::rtx2080ti();
    let vram = config.vram_bytes;
    let (model, arena) = model_with_memory(config);
    model.set_gsp_boot_sequencer(BootSequencer::None);
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let clock = HostClock(Instant::now());
    let mut inputs = boot_inputs(&model, &clock, &arena, &bundle, &vbios);
    inputs.generic_bootloader = loader;
    // The model has no NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE; tell the boot the FB size.
    let config = BootConfig { usable_fb_size: Some(vram), ..BootConfig::default() };
    let mut boot = GspBoot::new(inputs, placed(config, &model), QueueHeadDoorbell(&model));
    let result = boot.run();
    eprintln!("{:?}\n{}\nmodel: {:?}", result.as_ref().err().map(ToString::to_string), boot.report(), model.errors());
    let report = result.expect("TU102 boots");
    let ran: Vec<BootStep> = report.steps.iter().map(|s| s.step).collect();
    assert_eq!(
        ran,
        [
            BootStep::WaitGfwBoot,
            BootStep::CheckWpr2Down,
            BootStep::PrepareBootData,
            BootStep::FwsecFrts,
            BootStep::ResetGspFalcon,
            BootStep::QueueInitRpcs,
            BootStep::ProgramLibosArgs,
            BootStep::BooterLoad,
            BootStep::RiscvActive,
            BootStep::LinkStatusQueue,
            BootStep::WaitInitDone,
            BootStep::GetStaticInfo,
        ],
        "Turing: FWSEC through the loader, the GSP left a falcon, no FALCON_OS write"
    );
    let meta = report.wpr_meta.expect("meta");
    let fwsec = report.fwsec.expect("FWSEC-FRTS ran");
    assert_eq!(fwsec.method, FwsecMethod::BootWithLoader);
    assert_eq!(fwsec.wpr2, (meta.frts_offset, meta.frts_offset + meta.frts_size - 1));
    assert_eq!(report.booter_load.map(|b| b.method), Some(nvgpu::gsp::boot::booter::BooterMethod::Direct));
    assert_eq!(report.booter_load.map(|b| b.mailboxes.mailbox0), Some(0));
    assert_eq!(model.wpr2(), Some((meta.gsp_fw_wpr_start, meta.gsp_fw_wpr_end - 1)));
    assert_eq!(model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
    let name = boot.static_info().expect("static info").gpu_name();
    assert_eq!(report.gpu_name.as_deref(), Some(name.as_str()));
    eprintln!("TU102: GSP-RM says \"{name}\"");
    assert_eq!(model.errors(), vec![], "the strict model saw nothing wrong");

    let unload = boot.unload().unwrap_or_else(|e| panic!("{e}\nmodel errors: {:?}", model.errors()));
    eprintln!("TU102 unload:\n{unload}");
    assert_eq!(model.wpr2(), None);
    assert_eq!(model.gsp_rm_status(), GspRmStatus::Unloaded);
    drop(boot);
    model.take_errors();
    assert_eq!(arena.allocated(), 0);
}

/// GA100: no FRTS, so no FWSEC; the GSP stays a falcon, the booter goes to SEC2 by PIO and
/// starts GSP-RM; then the same RPCs as GA10x, and the unload.
#[test]
fn ga100_boots_to_init_done_and_unloads_on_the_model() {
    let chip = Chipset::GA100;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("bundle");
    let config = ModelConfig::for_chipset(chip);
    let vram = config.vram_bytes;
    let (model, arena) = model_with_memory(config);
    model.set_gsp_boot_sequencer(BootSequencer::None);
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let clock = HostClock(Instant::now());
    let config = BootConfig { usable_fb_size: Some(vram), ..BootConfig::default() };
    let mut boot = GspBoot::new(
        boot_inputs(&model, &clock, &arena, &bundle, &vbios),
        placed(config, &model),
        QueueHeadDoorbell(&model),
    );
    let result = boot.run();
    eprintln!(
        "{:?}\n{}\nmodel: {:?}",
        result.as_ref().err().map(ToString::to_string),
        boot.report(),
        model.take_errors()
    );
    let report = result.expect("GA100 boots");
    let ran: Vec<BootStep> = report.steps.iter().map(|s| s.step).collect();
    assert_eq!(
        ran,
        [
            BootStep::WaitGfwBoot,
            BootStep::CheckWpr2Down,
            BootStep::PrepareBootData,
            BootStep::ResetGspFalcon,
            BootStep::QueueInitRpcs,
            BootStep::ProgramLibosArgs,
            BootStep::BooterLoad,
            BootStep::RiscvActive,
            BootStep::LinkStatusQueue,
            BootStep::WaitInitDone,
            BootStep::GetStaticInfo,
        ],
        "no FWSEC and no FALCON_OS write on GA100"
    );
    assert_eq!(report.booter_load.map(|b| b.method), Some(nvgpu::gsp::boot::booter::BooterMethod::Direct));
    let meta = report.wpr_meta.expect("meta");
    assert_eq!(meta.frts_size, 0);
    assert_eq!(model.wpr2(), Some((meta.gsp_fw_wpr_start, meta.gsp_fw_wpr_end - 1)));
    assert_eq!(model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
    let unload = boot.unload().unwrap_or_else(|e| panic!("{e}\nmodel errors: {:?}", model.errors()));
    eprintln!("GA100 unload:\n{unload}");
    assert_eq!(model.wpr2(), None);
    drop(boot);
    model.take_errors();
    assert_eq!(arena.allocated(), 0);
}

/// Hopper (H200): the FSP chain of trust with NVIDIA's 535.261.03 GSP-FMC, its SHA-384, public
/// key and signature, and RM's GH100 boot binary, all extracted from RM's source: the model's
/// FSP recognises the FMC, accepts its own credentials, and GSP-RM boots to the static
/// information.
#[test]
fn hopper_boots_through_the_fsp_chain_of_trust_with_the_real_gsp_fmc() {
    let chip = Chipset::GH100;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("GH100 bundle: gsp_ga10x.bin and gh100-bootloader.bin");
    let fmc = FirmwareBundle::fmc_images(&files, chip).expect("GSP-FMC files").expect("GH100 takes the GSP-FMC");
    let (model, arena) = model_with_memory(ModelConfig::h200());
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let clock = ModelClock::default();
    let mut inputs = boot_inputs(&model, &clock, &arena, &bundle, &vbios);
    inputs.fmc = Some(fmc);
    let mut boot = GspBoot::new(inputs, placed(BootConfig::default(), &model), QueueHeadDoorbell(&model));
    let result = boot.run();
    eprintln!("{:?}\n{}\nmodel: {:?}", result.as_ref().err().map(ToString::to_string), boot.report(), model.errors());
    let report = result.unwrap_or_else(|e| panic!("{e}"));
    let ran: Vec<BootStep> = report.steps.iter().map(|s| s.step).collect();
    assert_eq!(
        ran,
        [
            BootStep::WaitFspBoot,
            BootStep::CheckWpr2Down,
            BootStep::PrepareBootData,
            BootStep::QueueInitRpcs,
            BootStep::FspChainOfTrust,
            BootStep::RiscvActive,
            BootStep::LinkStatusQueue,
            BootStep::WaitInitDone,
            BootStep::GetStaticInfo,
        ]
    );
    // The FSP saw NVIDIA's FMC with its own credentials.
    match model.fsp_accepted_fmc() {
        Some(sim::gsp_rm::fsp::FmcSeen::Nvidia(fp)) => assert_eq!(fp.image_size as usize, fmc.image.len()),
        other => panic!("the model's FSP did not recognise the real GSP-FMC: {other:?}"),
    }
    // What the FSP got, reassembled from the MCTP packets: the NVDM type (COT, 0x14), then the
    // payload: version 1, size 860, ..., the FMC's SHA-384 at payload offset 36, its public key
    // and signature after it.
    let received = model.fsp_received_messages();
    let message = received.first().expect("the FSP received the COT message");
    assert_eq!(message.len(), 1 + 860, "NVDM type byte + NVDM_PAYLOAD_COT");
    assert_eq!(message[0], 0x14, "NVDM type COT");
    assert_eq!(&message[1..5], &[1, 0, 0x5c, 0x03], "NVDM_PAYLOAD_COT version 1, size 860");
    assert_eq!(&message[37..85], fmc.hash384);
    assert_eq!(&message[85..469], fmc.public_key);
    assert_eq!(&message[469..853], fmc.signature);
    let meta = report.wpr_meta.expect("meta");
    assert_eq!(meta.size_of_bootloader, bundle.bootloader.image().len() as u64);
    assert_eq!(model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
    assert!(model.wpr2().is_some(), "the FMC raised WPR2");
    assert_eq!(model.errors(), vec![]);
    drop(boot);
    assert_eq!(arena.allocated(), 0);

    // The real FMC with another signature: the FSP refuses the command.
    let (model, arena) = model_with_memory(ModelConfig::h200());
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let mut forged = *fmc.signature;
    forged[0] ^= 1;
    let mut inputs = boot_inputs(&model, &clock, &arena, &bundle, &vbios);
    inputs.fmc = Some(nvgpu::gsp::boot::fsp::FmcImages { signature: &forged, ..fmc });
    let mut boot = GspBoot::new(inputs, placed(BootConfig::default(), &model), QueueHeadDoorbell(&model));
    let err = boot.run().expect_err("a forged signature is refused");
    eprintln!("{err}");
    assert_eq!(err.step, BootStep::FspChainOfTrust);
    assert!(matches!(err.kind, BootErrorKind::Fsp(_)), "{err}");
    assert_eq!(model.gsp_rm_status(), GspRmStatus::Off);
    drop(boot);
    model.take_errors();
    assert_eq!(arena.allocated(), 0);
}

// ---------------------------------------------------------------------------------------------
// The facts the boot declares, against NVIDIA's text.

/// The value of `#define name ...` in `text` (comments dropped): a number, or `hi:lo`.
fn define_value(text: &str, name: &str) -> Option<(u64, Option<u64>)> {
    let number = |s: &str| -> Option<u64> {
        let s = s.trim().trim_start_matches('(').trim_end_matches(')').trim().trim_end_matches(['u', 'U']);
        match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        }
    };
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("#define")?.trim_start();
        let after = rest.strip_prefix(name)?;
        if !after.starts_with([' ', '\t']) {
            return None;
        }
        let body = after.split("/*").next()?.split("//").next()?.trim();
        match body.split_once(':') {
            Some((hi, lo)) => Some((number(hi)?, Some(number(lo)?))),
            None => Some((number(body)?, None)),
        }
    })
}

fn nvidia_file(path: &str) -> String {
    let file = require(
        data_root().join("open-gpu-kernel-modules-535.261.03").join(path),
        "NVIDIA open-gpu-kernel-modules 535.261.03",
    );
    String::from_utf8_lossy(&read(&file)).into_owned()
}

#[test]
fn the_boots_facts_match_nvidias_headers() {
    use nvgpu::hw::{boot, FactValue};
    let mut checked = 0;
    for table in [
        boot::FUSE_FACTS,
        boot::DEBUG_FUSE_FACTS,
        boot::tu102::FACTS,
        boot::gh100::FACTS,
        boot::VALUE_FACTS,
        boot::FB_FACTS,
        boot::GH100_FALCON_FACTS,
        boot::PCFG_FACTS,
    ] {
        for group in table.iter() {
            for facts in group.iter() {
                for fact in facts.iter() {
                    assert_eq!(fact.header.release, "535.261.03");
                    let text = nvidia_file(fact.header.path);
                    let got = define_value(&text, fact.name)
                        .unwrap_or_else(|| panic!("{} not in {}", fact.name, fact.header.path));
                    let want = match fact.value {
                        FactValue::Number(n) => (n, None),
                        FactValue::Bits { hi, lo } => (hi.into(), Some(lo.into())),
                        other => panic!("{}: unexpected fact kind {other:?}", fact.name),
                    };
                    assert_eq!(got, want, "{} in {}", fact.name, fact.header.path);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 12, "{checked}");
}

#[test]
fn fwsec_and_fsp_constants_match_nvidias_sources() {
    use nvgpu::hw::{bus, fw};
    let frts = nvidia_file(headers::KERNEL_GSP_FRTS_TU102.path);
    for (name, value) in [
        ("FWSECLIC_READ_VBIOS_STRUCT_FLAGS", u64::from(fw::FWSECLIC_READ_VBIOS_STRUCT_FLAGS)),
        ("FWSECLIC_FRTS_REGION_MEDIA_FB", fw::FWSECLIC_FRTS_REGION_MEDIA_FB.into()),
        ("FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K", fw::FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K.into()),
        ("NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15", bus::NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15.into()),
        (
            "FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS",
            nvgpu::hw::fw::FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS.into(),
        ),
        (
            "FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB",
            nvgpu::hw::fw::FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB.into(),
        ),
    ] {
        assert_eq!(define_value(&frts, name), Some((value, None)), "{name}");
    }
    assert_eq!(define_value(&frts, "NV_VBIOS_FWSECLIC_SB_ERR_CODE"), Some((15, Some(0))));
    // The structures' field order, as the C file declares them.
    for decl in [
        "NvU32 version;\n    NvU32 size;\n    NvU64 gfwImageOffset;\n    NvU32 gfwImageSize;\n    NvU32 flags;\n} FWSECLIC_READ_VBIOS_DESC;",
        "NvU32 frtsRegionOffset4K;\n    NvU32 frtsRegionSize;\n    NvU32 frtsRegionMediaType;\n} FWSECLIC_FRTS_REGION_DESC;",
        "FWSECLIC_READ_VBIOS_DESC readVbiosDesc;\n    FWSECLIC_FRTS_REGION_DESC frtsRegionDesc;\n} FWSECLIC_FRTS_CMD;",
    ] {
        assert!(frts.contains(decl), "kernel_gsp_frts_tu102.c declares {decl}");
    }
    // The MCTP/NVDM constants and FSP return codes are `nvgpu::hw::fw::fsp::FACTS`, checked by
    // header_conformance with every other fact; the structures that compile on their own by
    // fw_layout. NVDM_PAYLOAD_COT's header is NVOC-generated: its fields are checked here.
    // Its fields in order (packed: the sizes add up to 860, `hw::fw::fsp::NVDM_PAYLOAD_COT_SIZE`).
    let cot = nvidia_file(headers::G_KERN_FSP_NVOC.path);
    let fields: Vec<&str> = [
        "NvU16 version;",
        "NvU16 size;",
        "NvU64 gspFmcSysmemOffset;",
        "NvU64 frtsSysmemOffset;",
        "NvU32 frtsSysmemSize;",
        "NvU64 frtsVidmemOffset;",
        "NvU32 frtsVidmemSize;",
        "NvU32 hash384[12];",
        "NvU32 publicKey[96];",
        "NvU32 signature[96];",
        "NvU64 gspBootArgsSysmemOffset;",
    ]
    .to_vec();
    let mut at = cot.find("#pragma pack(1)\ntypedef struct\n{\n    NvU16 version;").expect("NVDM_PAYLOAD_COT");
    for field in fields {
        at += cot[at..].find(field).unwrap_or_else(|| panic!("NVDM_PAYLOAD_COT field {field}"));
    }
    assert!(cot[at..].trim_start_matches(|c| c != '}').starts_with("} NVDM_PAYLOAD_COT;"));
}

/// An allocator over the arena that shares memory read-only the way the kernel shares a
/// page-aligned boot module: here the bytes are placed once in an arena page run (host memory
/// has no bus address of its own), and the driver must build tables that point at those pages
/// instead of copying the image behind them.
struct SharingArena {
    arena: DmaArena,
    shared: std::cell::RefCell<Vec<(u64, usize)>>,
}

impl nvgpu::platform::DmaAllocator for SharingArena {
    fn alloc(&self, len: usize) -> Result<nvgpu::platform::DmaBuffer, nvgpu::platform::DmaError> {
        self.arena.alloc(len)
    }
    fn free(&self, buffer: nvgpu::platform::DmaBuffer) {
        self.arena.free(buffer)
    }
    fn share_read_only(&self, bytes: &[u8]) -> Option<u64> {
        let mut buffer = self.arena.alloc(bytes.len()).ok()?;
        buffer.write(0, bytes).ok()?;
        // Never freed: the arena keeps the memory for its lifetime, as a module lives as long
        // as the kernel (a DmaBuffer frees nothing when it goes out of scope).
        let bus = buffer.bus_address();
        self.shared.borrow_mut().push((bus, bytes.len()));
        Some(bus)
    }
}

#[test]
fn a_shared_image_is_used_in_place_behind_tables_of_its_own() {
    use nvgpu::gsp::fw::radix3::{Radix3Layout, RADIX3_ENTRIES_PER_PAGE, RADIX3_PAGE_SIZE};
    use sim::SystemMemory;
    let chip = Chipset::GA102;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("firmware bundle");
    let dma = SharingArena { arena: DmaArena::new(), shared: Default::default() };
    let fb = FbInputs {
        params: WprChipParams::for_chipset(chip).expect("params"),
        usable_fb_size: 24 << 30,
        vga_workspace_base: None,
        mmu_lock: None,
    };
    let data = BootData::prepare(&dma, &bundle.gsp, &bundle.bootloader, &fb, MessageQueueLayout::rm_default(), 0)
        .expect("boot data");
    let image = bundle.gsp.image();
    let layout = Radix3Layout::new(image.len() as u64).unwrap();
    let shared = dma.shared.borrow().clone();
    assert_eq!(shared.len(), 1, "the image is shared once");
    let (image_bus, image_len) = shared[0];
    assert_eq!(image_len, image.len());
    // The radix3 block holds the tables alone, not 38 MB of copied image.
    assert_eq!(data.gsp_rm.len() as u64, layout.table_bytes());
    assert_eq!(data.wpr_meta.sysmem_addr_of_radix3_elf, data.gsp_rm.bus_address());
    // Walked by bus address as the GSP does: every leaf is the shared image's page, in order.
    let read_entry = |table: u64, index: u64| {
        let mut raw = [0u8; 8];
        assert!(dma.arena.read(table + index * 8, &mut raw), "table page {table:#x} readable");
        u64::from_le_bytes(raw)
    };
    let per_page = RADIX3_ENTRIES_PER_PAGE;
    let data_pages = (image.len() as u64).div_ceil(RADIX3_PAGE_SIZE);
    let root = data.gsp_rm.bus_address();
    for page in 0..data_pages {
        let l1 = read_entry(root, page / per_page / per_page);
        let l2 = read_entry(l1, (page / per_page) % per_page);
        let leaf = read_entry(l2, page % per_page);
        assert_eq!(leaf, image_bus + page * RADIX3_PAGE_SIZE, "leaf {page}");
    }
    let mut first = vec![0u8; RADIX3_PAGE_SIZE as usize];
    assert!(dma.arena.read(image_bus, &mut first));
    assert_eq!(&first[..], &image[..first.len()]);
}
