//! Time: the TSC as the monotonic clock, calibrated against the HPET (IA-PC HPET
//! specification 1.0a, section 2.3: GCAP_ID at 0x000 with the counter period in femtoseconds
//! in bits 63:32 and COUNT_SIZE_CAP in bit 13; GEN_CONF at 0x010 with ENABLE_CNF in bit 0;
//! the main counter at 0x0F0), or, without an HPET, against PIT channel 2 (Intel 8254: 1.193182
//! MHz input; port 0x61 bit 0 gates channel 2, bit 5 reads its output).

use crate::arch::{self, port};
use crate::mem::mmio::Mmio;
use crate::mem::paging;
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};

static ENTRY_TSC: AtomicU64 = AtomicU64::new(0);
static TSC_PER_MS: AtomicU64 = AtomicU64::new(0);
static HPET: spin::Once<Mmio> = spin::Once::new();
static HPET_PERIOD_FS: AtomicU64 = AtomicU64::new(0);
static SOURCE: AtomicU8 = AtomicU8::new(0);

const HPET_GCAP_ID: u64 = 0x000;
const HPET_GEN_CONF: u64 = 0x010;
const HPET_MAIN_COUNTER: u64 = 0x0F0;
const PIT_HZ: u64 = 1_193_182;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Calibration {
    Hpet,
    Pit,
}

/// Records the TSC at kernel entry: "milliseconds since entry" count from here.
pub fn mark_entry() {
    ENTRY_TSC.store(arch::rdtsc(), Ordering::Relaxed);
}

pub fn millis_since_entry() -> u64 {
    let per_ms = TSC_PER_MS.load(Ordering::Relaxed);
    if per_ms == 0 {
        return 0;
    }
    arch::rdtsc().saturating_sub(ENTRY_TSC.load(Ordering::Relaxed)) / per_ms
}

pub fn nanos_since_entry() -> u64 {
    let per_ms = TSC_PER_MS.load(Ordering::Relaxed);
    if per_ms == 0 {
        return 0;
    }
    let ticks = arch::rdtsc().saturating_sub(ENTRY_TSC.load(Ordering::Relaxed)) as u128;
    (ticks * 1_000_000 / per_ms as u128) as u64
}

pub fn tsc_per_ms() -> u64 {
    TSC_PER_MS.load(Ordering::Relaxed)
}

pub fn source() -> Option<Calibration> {
    match SOURCE.load(Ordering::Relaxed) {
        1 => Some(Calibration::Hpet),
        2 => Some(Calibration::Pit),
        _ => None,
    }
}

/// An HPET register (0 before the HPET is mapped).
fn hpet_read(reg: u64) -> u64 {
    HPET.get().and_then(|hpet| hpet.read64(reg)).unwrap_or(0)
}

fn hpet_write(reg: u64, value: u64) {
    if let Some(hpet) = HPET.get() {
        hpet.write64(reg, value);
    }
}

/// The HPET main counter in nanoseconds (None without an HPET).
pub fn hpet_nanos() -> Option<u64> {
    let period = HPET_PERIOD_FS.load(Ordering::Relaxed);
    if period == 0 {
        return None;
    }
    Some((hpet_read(HPET_MAIN_COUNTER) as u128 * period as u128 / 1_000_000) as u64)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeError {
    Map(paging::MapError),
    /// GCAP_ID reports a period of 0 or above the 100 ns the specification allows.
    BadHpetPeriod(u64),
    /// The counter did not move: timed out waiting for the HPET main counter.
    HpetStuck,
}

impl core::fmt::Display for TimeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TimeError::Map(e) => write!(f, "mapping the HPET: {e}"),
            TimeError::BadHpetPeriod(p) => write!(f, "HPET reports an invalid period of {p} fs"),
            TimeError::HpetStuck => write!(f, "timed out waiting for the HPET main counter to advance"),
        }
    }
}

/// Enables the HPET at `phys` and calibrates the TSC against it over ~10 ms.
pub fn calibrate_with_hpet(phys: u64) -> Result<(), TimeError> {
    let mapped = Mmio::map(phys, 0x400).map_err(TimeError::Map)?;
    let hpet = *HPET.call_once(|| mapped);
    if hpet != mapped {
        log::warn!(target: "time", "HPET already mapped; calibrating with the first one");
    }
    let cap = hpet_read(HPET_GCAP_ID);
    let period = cap >> 32;
    if period == 0 || period > 100_000_000 {
        return Err(TimeError::BadHpetPeriod(period));
    }
    hpet_write(HPET_GEN_CONF, hpet_read(HPET_GEN_CONF) | 1);
    HPET_PERIOD_FS.store(period, Ordering::Relaxed);
    let ticks_10ms = 10_000_000_000_000 / period; // 10 ms in femtoseconds / period
    let c0 = hpet_read(HPET_MAIN_COUNTER);
    let t0 = arch::rdtsc();
    // Bounded by TSC cycles too: a stuck counter must not hang the boot (at 10 GHz, 10^10
    // cycles is one second).
    loop {
        let c = hpet_read(HPET_MAIN_COUNTER);
        if c.wrapping_sub(c0) >= ticks_10ms {
            let t1 = arch::rdtsc();
            let elapsed_fs = c.wrapping_sub(c0) as u128 * period as u128;
            let per_ms = ((t1 - t0) as u128 * 1_000_000_000_000 / elapsed_fs) as u64;
            TSC_PER_MS.store(per_ms.max(1), Ordering::Relaxed);
            SOURCE.store(1, Ordering::Relaxed);
            return Ok(());
        }
        if arch::rdtsc() - t0 > 10_000_000_000 {
            HPET_PERIOD_FS.store(0, Ordering::Relaxed);
            return Err(TimeError::HpetStuck);
        }
        core::hint::spin_loop();
    }
}

/// Calibrates the TSC against PIT channel 2: counts down from 0xFFFF in mode 0 and reads the
/// counter back (latch command, Intel 8254 datasheet "Counter Latch Command") until 10 ms worth
/// of PIT ticks have passed. Reading the count works on every chipset model; the OUT2 status bit
/// in port 0x61 is not reliable everywhere.
pub fn calibrate_with_pit() {
    fn read_count() -> u16 {
        // Latch channel 2 (SC=10, RW=00), then read low and high bytes.
        port::outb(0x43, 0b1000_0000);
        let lo = port::inb(0x42) as u16;
        let hi = port::inb(0x42) as u16;
        hi << 8 | lo
    }
    let ticks = (PIT_HZ / 100) as u16;
    // Gate high, speaker off.
    port::outb(0x61, (port::inb(0x61) & !0x02) | 0x01);
    // Channel 2, lobyte/hibyte, mode 0, binary; count 0xFFFF.
    port::outb(0x43, 0b1011_0000);
    port::outb(0x42, 0xFF);
    port::outb(0x42, 0xFF);
    // Wait for the count to be loaded (it starts below 0xFFFF after one input clock).
    let start_wait = arch::rdtsc();
    let mut c0 = read_count();
    while c0 == 0xFFFF || c0 < 0x8000 {
        if arch::rdtsc() - start_wait > 10_000_000_000 {
            break;
        }
        c0 = read_count();
    }
    let t0 = arch::rdtsc();
    let mut t1 = t0;
    let mut elapsed_ticks = 0u64;
    // Give up after ~1 s worth of cycles at 10 GHz.
    while t1 - t0 < 10_000_000_000 {
        let c = read_count();
        t1 = arch::rdtsc();
        elapsed_ticks = c0.wrapping_sub(c) as u64;
        if elapsed_ticks >= ticks as u64 {
            break;
        }
    }
    let per_ms = if elapsed_ticks == 0 {
        0
    } else {
        ((t1 - t0) as u128 * PIT_HZ as u128 / (elapsed_ticks as u128 * 1000)) as u64
    };
    TSC_PER_MS.store(per_ms.max(1), Ordering::Relaxed);
    SOURCE.store(2, Ordering::Relaxed);
}

/// A deadline for bounded waits on hardware and firmware.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    end_ns: u64,
}

impl Deadline {
    pub fn after_ms(ms: u64) -> Self {
        Deadline { end_ns: nanos_since_entry() + ms * 1_000_000 }
    }
    pub fn expired(&self) -> bool {
        nanos_since_entry() >= self.end_ns
    }
}

pub fn sleep_ms(ms: u64) {
    let d = Deadline::after_ms(ms);
    while !d.expired() {
        core::hint::spin_loop();
    }
}
