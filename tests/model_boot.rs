//! Booting model GPUs with the real 535.261.03 firmware for integration tests:
//! `sim::host_boot`, with failures as test panics that say what to run.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::chip::Chipset;
use nvgpu::platform::Clock;
use sim::{DmaArena, ModelConfig, ModelGpu};

pub use sim::host_boot::{Boot, FirmwareFiles, ModelClock};

/// The files `chip` boots with.
pub fn firmware_files(chip: Chipset) -> FirmwareFiles {
    sim::host_boot::firmware_files(chip, &sim::host_boot::data_root()).unwrap_or_else(|e| panic!("{e}"))
}

/// Boots `config` with whatever its family's boot takes, then runs `f`.
pub fn with_booted(config: ModelConfig, f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>)) {
    sim::host_boot::with_booted(config, &sim::host_boot::data_root(), f).unwrap_or_else(|e| panic!("{e}"))
}

/// [`with_booted`], stricter: no model errors from the boot, and every DMA region back in the
/// arena once the boot is dropped.
pub fn with_booted_strict(config: ModelConfig, f: impl FnOnce(&ModelGpu, &DmaArena, &dyn Clock, &mut Boot<'_>)) {
    sim::host_boot::with_booted_strict(config, &sim::host_boot::data_root(), f).unwrap_or_else(|e| panic!("{e}"))
}
