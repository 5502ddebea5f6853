//! The falcon driver (`nvgpu::falcon`) against the GPU model's falcons (`sim`): resets, PIO and
//! DMA uploads, heavy-secure boot parameters and starts, on a model of every family the model
//! builds boards for, with the model's strict checks as the judge.
//!
//! The model runs its own ucode format (`sim::ucode`): a start checks that the image is found by
//! its IMEM tags at BOOTVEC, complete, unaltered (checksum), secure where it must be, and for
//! PKC images that the boot ROM registers and the signature in DMEM are the ones NVIDIA's rules
//! select; only then does the application run. So a `MAILBOX0` past those checks proves the
//! upload, and FWSEC-FRTS setting WPR2 proves the whole heavy-secure path.

use nvgpu::falcon::{
    DmaSegment, DmaTarget, Engine, Falcon, FalconError, FalconMemory, Fsp, Gsp, HostBooted, Mailboxes, Sec2,
};
use nvgpu::hal::{self, FalconLayout};
use nvgpu::hw::engine::FalconEngine;
use nvgpu::hw::falcon::NV_PFALCON_FALCON_RM;
use nvgpu::hw::pmc;
use nvgpu::platform::DmaAllocator;
use sim::ucode::{build_image, UcodeSpec, FLAG_HS};
use sim::{DmaArena, HaltCode, ModelError, ModelGpu};
use tests::model_boot::ModelClock;

const RUN_TIMEOUT_MS: u64 = 100;

fn boards() -> Vec<(&'static str, ModelGpu)> {
    vec![
        ("RTX 2080 Ti (TU102)", ModelGpu::rtx2080ti()),
        ("RTX 3090 (GA102)", ModelGpu::rtx3090()),
        ("RTX 4090 (AD102)", ModelGpu::rtx4090()),
        ("H200 (GH100)", ModelGpu::h200()),
    ]
}

fn falcon<E: Engine>(model: &ModelGpu) -> Falcon<&ModelGpu, ModelClock, E> {
    let hal = hal::for_chipset(model.chipset());
    Falcon::new(model, ModelClock::default(), hal).expect("the HAL lists this falcon")
}

/// The model ucode image of an application the model does not implement: a start that gets as
/// far as dispatching it has passed every upload check.
fn probe_image(flags: u32) -> Vec<u8> {
    build_image(&UcodeSpec {
        application_id: 0x7e57,
        interface_offset: 0,
        image_size: 0x500,
        flags,
        ucode_id: 0,
        engine_id_mask: 0,
    })
}

fn halted_with(engine: FalconEngine, code: HaltCode) -> Vec<ModelError> {
    vec![ModelError::Falcon { engine, error: sim::FalconError::Halted { code } }]
}

#[test]
fn every_falcon_the_hal_lists_resets_cleanly() {
    fn resets_cleanly<E: HostBooted>(name: &str, model: &ModelGpu, unit: &nvgpu::hw::engine::FalconUnit) {
        let falcon = falcon::<E>(model);
        falcon.reset().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(model.take_errors(), vec![], "{name} {:?}", unit.engine);
        assert!(falcon.is_scrubbing_done(), "{name}");
        assert_eq!(
            NV_PFALCON_FALCON_RM::read(model, unit.base).raw(),
            pmc::NV_PMC_BOOT_0::read(model).raw(),
            "{name}: the RM identity for the booter"
        );
    }
    for (name, model) in boards() {
        let hal = hal::for_chipset(model.chipset());
        for unit in hal.falcons {
            match unit.engine {
                FalconEngine::Gsp => resets_cleanly::<Gsp>(name, &model, unit),
                FalconEngine::Sec2 => resets_cleanly::<Sec2>(name, &model, unit),
                // The driver has no reset for the FSP (it does not compile: `falcon::engine`).
                FalconEngine::Fsp => {}
            }
        }
    }
}

#[test]
fn pio_uploads_run_on_every_gsp_and_sec2() {
    fn uploads_run<E: HostBooted>(name: &str, model: &ModelGpu, unit: &nvgpu::hw::engine::FalconUnit) {
        let falcon = falcon::<E>(model);
        falcon.reset().unwrap();

        // Code at physical 0x200, tagged as virtual 0x1000, where BOOTVEC points.
        let image = probe_image(0);
        falcon.load_imem(0x200, &image, 0x1000, false).unwrap();
        let data: Vec<u8> = (0..0x80u8).collect();
        falcon.load_dmem(0x40, &data).unwrap();
        let mut back = vec![0u8; data.len()];
        falcon.read_dmem(0x40, &mut back).unwrap();
        assert_eq!(back, data, "{name} {:?}: DMEM readback", unit.engine);
        assert_eq!(model.take_errors(), vec![], "{name} {:?}: upload", unit.engine);

        let out = falcon.execute(0x1000, Mailboxes { mailbox0: 0, mailbox1: 0 }, RUN_TIMEOUT_MS).unwrap();
        assert_eq!(out.mailbox0, HaltCode::UnknownApplication.value(), "{name} {:?}", unit.engine);
        assert_eq!(model.take_errors(), halted_with(unit.engine, HaltCode::UnknownApplication));
        assert_eq!(falcon.results().unwrap(), out);
        assert!(falcon.interrupt_status().halt());
        falcon.clear_halt_interrupts();
        assert!(!falcon.interrupt_status().halt());
    }
    for (name, model) in boards() {
        let hal = hal::for_chipset(model.chipset());
        for unit in hal.falcons {
            match unit.engine {
                FalconEngine::Gsp => uploads_run::<Gsp>(name, &model, unit),
                FalconEngine::Sec2 => uploads_run::<Sec2>(name, &model, unit),
                FalconEngine::Fsp => {}
            }
        }
    }
}

#[test]
fn heavy_secure_code_must_be_uploaded_secure() {
    let model = ModelGpu::rtx3090();
    let sec2 = falcon::<Sec2>(&model);
    let image = probe_image(FLAG_HS);

    sec2.reset().unwrap();
    sec2.load_imem(0, &image, 0, false).unwrap();
    let out = sec2.execute(0, Mailboxes::default(), RUN_TIMEOUT_MS).unwrap();
    assert_eq!(out.mailbox0, HaltCode::NotSecure.value());

    sec2.reset().unwrap();
    sec2.load_imem(0, &image, 0, true).unwrap();
    let out = sec2.execute(0, Mailboxes::default(), RUN_TIMEOUT_MS).unwrap();
    assert_eq!(out.mailbox0, HaltCode::UnknownApplication.value(), "secure upload passes the HS check");
    model.take_errors();
}

#[test]
fn a_wrong_tag_leaves_no_image_at_bootvec() {
    let model = ModelGpu::rtx2080ti();
    let gsp = falcon::<Gsp>(&model);
    gsp.reset().unwrap();
    gsp.load_imem(0, &probe_image(0), 0x2000, false).unwrap();
    let out = gsp.execute(0x1000, Mailboxes::default(), RUN_TIMEOUT_MS).unwrap();
    assert_eq!(out.mailbox0, HaltCode::NoImageAtBootvec.value());
}

/// What it takes to run the model VBIOS's FWSEC-FRTS on GSP by DMA, as RM does on GA10x/Ada.
struct FwsecRun {
    model: ModelGpu,
    arena: DmaArena,
    frts_offset: u64,
}

impl FwsecRun {
    fn new(model: ModelGpu) -> Self {
        let arena = DmaArena::new();
        model.set_system_memory(Box::new(arena.clone()));
        let frts_offset = model.config().vram_bytes - 0x20_0000;
        Self { model, arena, frts_offset }
    }

    /// Runs FWSEC-FRTS with the signature `pick_signature` chooses; returns MAILBOX0.
    fn run(&self, pick_signature: impl Fn(&nvgpu::fwsec::Fwsec<'_>, u32) -> Vec<u8>) -> u32 {
        tests::fwsec_frts::run_on_gsp(&self.model, &self.arena, self.frts_offset, RUN_TIMEOUT_MS, pick_signature)
    }
}

#[test]
fn fwsec_frts_runs_by_dma_with_the_patched_signature_on_ga10x_and_ada() {
    for model in [ModelGpu::rtx3090(), ModelGpu::rtx4090()] {
        assert_eq!(hal::for_chipset(model.chipset()).falcon_layout, FalconLayout::Ga102);
        let run = FwsecRun::new(model);
        let mailbox0 = run.run(|fwsec, version| fwsec.signature_for_fuse_version(version).unwrap().to_vec());
        assert_eq!(mailbox0, HaltCode::Success.value(), "{:?}", run.model.errors());
        assert_eq!(run.model.errors(), vec![]);
        assert_eq!(run.model.wpr2(), Some((run.frts_offset, run.frts_offset + 0x10_0000 - 1)));
    }
}

#[test]
fn fwsec_with_another_fuse_versions_signature_is_rejected() {
    let run = FwsecRun::new(ModelGpu::rtx3090());
    let mailbox0 = run.run(|fwsec, version| {
        let right = fwsec.signature_for_fuse_version(version).unwrap();
        (0..fwsec.signature_count())
            .filter_map(|i| fwsec.signature(i))
            .find(|s| *s != right)
            .expect("the model FWSEC carries more than one signature")
            .to_vec()
    });
    assert_eq!(mailbox0, HaltCode::SignatureRejected.value());
    assert_eq!(run.model.wpr2(), None);
}

#[test]
fn fsp_emem_round_trips_on_hopper() {
    let model = ModelGpu::h200();
    let fsp = falcon::<Fsp>(&model);
    let message: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(3)).collect();
    fsp.emem_write(0, &message).unwrap();
    let mut back = vec![0u8; message.len()];
    fsp.emem_read(0, &mut back).unwrap();
    assert_eq!(back, message);
    assert_eq!(model.take_errors(), vec![]);

    // Hopper's GSP is started by the FSP: the driver has no DMA path into it.
    let gsp = falcon::<Gsp>(&model);
    let arena = DmaArena::new();
    let buffer = arena.alloc(0x100).unwrap();
    let segment = DmaSegment {
        memory: FalconMemory::Dmem,
        source_offset: 0,
        falcon_offset: 0,
        len: 0x100,
        virtual_address: None,
    };
    assert!(matches!(
        gsp.load_dma(&buffer, DmaTarget::CoherentSysmem, &[segment]),
        Err(FalconError::Unsupported { engine: FalconEngine::Gsp, .. })
    ));
}

/// The driver's FRTS command (`FwseclicFrtsCmd::new`) is what the model builds on its own from
/// the header-checked constants, for every 4 KiB-aligned offset shape: the fields FWSEC reads
/// byte for byte, and the C struct's tail padding zero.
#[test]
fn the_drivers_frts_command_is_the_models_reading_of_rm() {
    use zerocopy::IntoBytes;
    for offset in [0u64, 0x1000, 0x5_ffe0_0000, 0xff_ffff_f000] {
        let driver = nvgpu::hw::fw::FwseclicFrtsCmd::new(offset);
        let bytes = driver.as_bytes();
        assert_eq!(
            &bytes[..sim::fwsec::FRTS_COMMAND_BYTES],
            &sim::fwsec::frts_command_bytes(offset)[..],
            "{offset:#x}"
        );
        assert_eq!(&bytes[sim::fwsec::FRTS_COMMAND_BYTES..], &[0u8; 4][..]);
    }
}
