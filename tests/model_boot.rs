//! Booting model GPUs with the real 535.261.03 firmware for integration tests: every family's
//! boot inputs (the generic bootloader for Turing, the GSP-FMC for Hopper, the FB size for
//! models without the register that reports it), then a closure with the booted session.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use std::collections::HashMap;
use std::path::Path;

use nvgpu::chip::Chipset;
use nvgpu::firmware::{module_name_for_path, FirmwareBundle};
use nvgpu::gsp::boot::{BootConfig, BootInputs, GspBoot};
use nvgpu::gsp::queue::QueueHeadDoorbell;
use nvgpu::platform::{Clock, FirmwareSource};
use nvgpu::vbios::Vbios;
use sim::{DmaArena, ModelConfig, ModelGpu};

use crate::rm_c::data_root;

/// Virtual time: 1 µs per reading.
#[derive(Default)]
pub struct ModelClock(std::cell::Cell<u64>);

impl Clock for ModelClock {
    fn now_ns(&self) -> u64 {
        let now = self.0.get();
        self.0.set(now + 1_000);
        now
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| {
        panic!("missing real data {} ({e}): run `sudo scripts/fetch-real-data.sh` from the workspace root", path.display())
    })
}

pub struct FirmwareFiles(HashMap<String, Vec<u8>>);

impl FirmwareSource for FirmwareFiles {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(Vec::as_slice)
    }
}

pub fn firmware_files(chip: Chipset) -> FirmwareFiles {
    use nvgpu::firmware::{boot_image_chip, extra_image_chip, BootImage, ExtraImage};
    let mut files = HashMap::new();
    let gsp_name = chip.gsp_firmware_file().expect("chip has GSP-RM firmware");
    let gsp = data_root().join("firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03").join(gsp_name);
    files.insert(gsp_name.to_string(), read(&gsp));
    let boot = BootImage::ALL.into_iter().filter_map(|image| Some((boot_image_chip(chip, image)?, image.stem())));
    let extra = ExtraImage::ALL.into_iter().filter_map(|image| Some((extra_image_chip(chip, image)?, image.stem())));
    for (ucode_chip, stem) in boot.chain(extra) {
        let path = data_root()
            .join(nvgpu::firmware::PINNED_BOOT_FIRMWARE_DIR)
            .join("nvidia")
            .join(ucode_chip)
            .join("gsp")
            .join(format!("{stem}-535.261.03.bin"));
        let module = module_name_for_path(path.to_str().expect("utf-8 path")).expect("module name");
        files.insert(module, read(&path));
    }
    FirmwareFiles(files)
}

pub type Boot<'a> = GspBoot<'a, ModelGpu, dyn Clock + 'a, DmaArena, QueueHeadDoorbell<&'a ModelGpu>>;

/// Boots `config` with whatever its family's boot takes, then runs `f`. Model errors the boot
/// leaves are dropped.
pub fn with_booted(config: ModelConfig, f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>)) {
    boot_then(config, false, f);
}

/// As [`with_booted`], and strict: the boot must leave no model errors, and once `f` is done and
/// the boot dropped, every DMA region must have gone back to the arena.
pub fn with_booted_strict(config: ModelConfig, f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>)) {
    boot_then(config, true, f);
}

fn boot_then(config: ModelConfig, strict: bool, f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>)) {
    let chip = config.chipset;
    let vram = config.vram_bytes;
    let files = firmware_files(chip);
    let bundle = FirmwareBundle::load(&files, chip).expect("bundle");
    let model = ModelGpu::new(config);
    let arena = DmaArena::new();
    model.set_system_memory(Box::new(arena.clone()));
    let vbios = Vbios::from_prom(&model).expect("model VBIOS");
    let clock = ModelClock::default();
    let clock: &dyn Clock = &clock;
    let inputs = BootInputs {
        io: &model,
        clock,
        dma: &arena,
        chipset: chip,
        firmware: &bundle,
        vbios: Some(&vbios),
        generic_bootloader: FirmwareBundle::generic_bootloader(&files, chip).expect("generic bootloader"),
        fmc: FirmwareBundle::fmc_images(&files, chip).expect("FMC"),
    };
    // Models without NV_USABLE_FB_SIZE_IN_MB / LOCAL_MEMORY_RANGE: the boot is told the FB size.
    let boot_config = match chip {
        Chipset::TU102 | Chipset::GA100 => BootConfig { usable_fb_size: Some(vram), ..BootConfig::default() },
        _ => BootConfig::default(),
    };
    if matches!(chip, Chipset::TU102 | Chipset::GA100) {
        model.set_gsp_boot_sequencer(sim::BootSequencer::None);
    }
    let mut boot = GspBoot::new(inputs, boot_config, QueueHeadDoorbell(&model));
    boot.run().unwrap_or_else(|e| panic!("{chip:?}: {e}\nmodel errors: {:?}", model.errors()));
    if strict {
        assert_eq!(model.errors(), vec![], "{chip:?}: the boot left no model errors");
    } else {
        model.take_errors();
    }
    f(&model, &arena, clock, &mut boot);
    if strict {
        drop(boot);
        model.take_errors();
        assert_eq!(arena.allocated(), 0, "{chip:?}: every DMA region went back");
    }
}

