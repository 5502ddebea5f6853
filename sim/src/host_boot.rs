//! Booting a model GPU with the real 535.261.03 firmware on the host (feature `std`): for
//! integration tests and `nvtool run`. Every family's boot inputs: Debian's GSP-RM image, the
//! boot ucodes `cargo xtask extract-firmware` takes from NVIDIA's source (booters, bootloaders,
//! Turing's generic falcon bootloader, Hopper's GSP-FMC), and the FB size for models without
//! the register that reports it. Nothing here panics: missing or unusable files are errors that
//! say what to run.

use std::collections::HashMap;
use std::format;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::vec::Vec;

use nvgpu::chip::Chipset;
use nvgpu::firmware::{module_name_for_path, FirmwareBundle};
use nvgpu::gsp::boot::{BootConfig, BootInputs, GspBoot};
use nvgpu::gsp::cmdq::QueueHeadDoorbell;
use nvgpu::platform::{Clock, FirmwareSource};
use nvgpu::vbios::Vbios;

use crate::{BootSequencer, DmaArena, ModelConfig, ModelGpu};

/// Where the real data is: `$NVGPU_REAL_DATA`, else the workspace's `target/real-data`.
pub fn data_root() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

/// Virtual time: 1 µs per reading. The model works inside register accesses, so a wait that
/// can end ends after a few polls, and one that cannot times out quickly.
#[derive(Default)]
pub struct ModelClock(core::cell::Cell<u64>);

impl Clock for ModelClock {
    fn now_ns(&self) -> u64 {
        let now = self.0.get();
        self.0.set(now + 1_000);
        now
    }
}

/// Firmware files by boot-module name.
pub struct FirmwareFiles(pub HashMap<String, Vec<u8>>);

impl FirmwareSource for FirmwareFiles {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(Vec::as_slice)
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        format!("missing real data {} ({e}): run `sudo scripts/fetch-real-data.sh` from the workspace root, or set NVGPU_REAL_DATA", path.display())
    })
}

/// The files `chip` boots with, from `root`.
pub fn firmware_files(chip: Chipset, root: &Path) -> Result<FirmwareFiles, String> {
    use nvgpu::firmware::{boot_image_chip, extra_image_chip, BootImage, ExtraImage};
    let mut files = HashMap::new();
    let gsp_name = chip.gsp_firmware_file().ok_or_else(|| format!("{chip:?} has no GSP-RM firmware"))?;
    let gsp = root.join("firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03").join(gsp_name);
    files.insert(gsp_name.to_string(), read(&gsp)?);
    let boot = BootImage::ALL.into_iter().filter_map(|image| Some((boot_image_chip(chip, image)?, image.stem())));
    let extra = ExtraImage::ALL.into_iter().filter_map(|image| Some((extra_image_chip(chip, image)?, image.stem())));
    for (ucode_chip, stem) in boot.chain(extra) {
        let path = root
            .join(nvgpu::firmware::PINNED_BOOT_FIRMWARE_DIR)
            .join("nvidia")
            .join(ucode_chip)
            .join("gsp")
            .join(format!("{stem}-535.261.03.bin"));
        let text = path.to_str().ok_or_else(|| format!("{} is not UTF-8", path.display()))?;
        let module = module_name_for_path(text).ok_or_else(|| format!("{} has no module name", path.display()))?;
        files.insert(module, read(&path)?);
    }
    Ok(FirmwareFiles(files))
}

/// A booted session.
pub type Boot<'a> = GspBoot<'a, ModelGpu, dyn Clock + 'a, DmaArena, QueueHeadDoorbell<&'a ModelGpu>>;

/// Boots `config` with the firmware under `root`, then runs `f` with the model, its system
/// memory, the clock and the boot (whose `rpc()` talks to GSP-RM).
pub fn with_booted<R>(
    config: ModelConfig,
    root: &Path,
    f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>) -> R,
) -> Result<R, String> {
    boot_then(config, root, false, f)
}

/// [`with_booted`], stricter: the boot must leave no model errors behind, and once `f` returned
/// and the boot is dropped every DMA region must have gone back to the arena.
pub fn with_booted_strict<R>(
    config: ModelConfig,
    root: &Path,
    f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>) -> R,
) -> Result<R, String> {
    boot_then(config, root, true, f)
}

fn boot_then<R>(
    config: ModelConfig,
    root: &Path,
    strict: bool,
    f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>) -> R,
) -> Result<R, String> {
    let chip = config.chipset;
    let vram = config.vram_bytes;
    let files = firmware_files(chip, root)?;
    let bundle = FirmwareBundle::load(&files, chip).map_err(|e| format!("{chip:?} firmware: {e}"))?;
    let model = ModelGpu::new(config);
    let arena = DmaArena::new();
    model.set_system_memory(std::boxed::Box::new(arena.clone()));
    let vbios = Vbios::from_prom(&model).map_err(|e| format!("model VBIOS: {e}"))?;
    let clock = ModelClock::default();
    let clock: &dyn Clock = &clock;
    let inputs = BootInputs {
        io: &model,
        clock,
        dma: &arena,
        chipset: chip,
        firmware: &bundle,
        vbios: Some(&vbios),
        generic_bootloader: FirmwareBundle::generic_bootloader(&files, chip)
            .map_err(|e| format!("generic bootloader: {e}"))?,
        fmc: FirmwareBundle::fmc_images(&files, chip).map_err(|e| format!("GSP-FMC: {e}"))?,
    };
    // Models without NV_USABLE_FB_SIZE_IN_MB / LOCAL_MEMORY_RANGE: the boot is told the FB size.
    let placed = BootConfig { pci: crate::board::boot_placement(model.config()), ..BootConfig::default() };
    let boot_config = match chip {
        Chipset::TU102 | Chipset::GA100 => BootConfig { usable_fb_size: Some(vram), ..placed },
        _ => placed,
    };
    if matches!(chip, Chipset::TU102 | Chipset::GA100) {
        model.set_gsp_boot_sequencer(BootSequencer::None);
    }
    let mut boot = GspBoot::new(inputs, boot_config, QueueHeadDoorbell(&model));
    boot.run().map_err(|e| format!("{chip:?}: GSP-RM boot: {e}; model errors: {:?}", model.errors()))?;
    let errors = model.take_errors();
    if strict && !errors.is_empty() {
        return Err(format!("{chip:?}: the boot left model errors: {errors:?}"));
    }
    let result = f(&model, &arena, clock, &mut boot);
    drop(boot);
    if strict && arena.allocated() != 0 {
        return Err(format!("{chip:?}: {} bytes of DMA memory did not go back", arena.allocated()));
    }
    Ok(result)
}
