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

/// Reproducible test bytes (xorshift32 from `seed`).
pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2654435761) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// BAR0 of a model GPU with a switch that drops doorbell writes
/// (`NVC361_NOTIFY_CHANNEL_PENDING`): work is queued but the host never learns of it. That is
/// how a stuck channel looks from the CPU, and, in measurements, what leaves only the driver's
/// own cost.
pub struct DoorbellSwitch<'a> {
    pub model: &'a ModelGpu,
    pub drop_doorbells: std::cell::Cell<bool>,
}

impl<'a> DoorbellSwitch<'a> {
    /// Doorbells ring until [`Self::drop_doorbells`] is set.
    pub fn new(model: &'a ModelGpu) -> Self {
        DoorbellSwitch { model, drop_doorbells: std::cell::Cell::new(false) }
    }

    /// Doorbells are dropped from the start.
    pub fn quiet(model: &'a ModelGpu) -> Self {
        DoorbellSwitch { model, drop_doorbells: std::cell::Cell::new(true) }
    }
}

impl nvgpu::hw::RegisterIo for DoorbellSwitch<'_> {
    fn read32(&self, offset: u32) -> u32 {
        self.model.read32(offset)
    }
    fn write32(&self, offset: u32, value: u32) {
        let doorbell = nvgpu::rm::fifo::NVC361_BASE + nvgpu::rm::fifo::NVC361_NOTIFY_CHANNEL_PENDING;
        if !(offset == doorbell && self.drop_doorbells.get()) {
            self.model.write32(offset, value);
        }
    }
}
