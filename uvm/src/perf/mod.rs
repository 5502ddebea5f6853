//! UVM's performance heuristics for one va_block: how much to move on a fault ([`prefetch`],
//! after `uvm_perf_prefetch.c`) and when to stop moving a page that processors fight over
//! ([`thrashing`], after `uvm_perf_thrashing.c`), both from NVIDIA's open-gpu-kernel-modules
//! 535.261.03, `kernel-open/nvidia-uvm/`.
//!
//! Both are pure state machines: the caller passes the block's masks, the processor topology
//! and the time (`now_ns`, nanoseconds of a monotonic clock); nothing here reads a clock, locks
//! or allocates beyond the per-block thrashing table. The fault-servicing path asks thrashing
//! for a hint per faulted page first, then asks prefetch for the pages to add, excluding the
//! pages thrashing reports.
//!
//! Page indices are those of [`crate::page_mask`]: page `i` lies `i` × 4 KiB above the 2 MiB
//! boundary the block sits in, so a 64 KiB big page starts at a multiple of 16 and a block
//! smaller than 2 MiB is the [`PageRegion`](crate::page_mask::PageRegion) of its pages.

pub mod prefetch;
pub mod thrashing;

use core::fmt;

/// A tunable outside the range UVM accepts. UVM logs and falls back to the default; we refuse,
/// so that a wrong setting is seen rather than silently replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The module parameter's name in UVM (`uvm_perf_prefetch_threshold`, ...).
    pub parameter: &'static str,
    pub value: u64,
    pub min: u64,
    pub max: u64,
}

impl ConfigError {
    pub(crate) fn check(parameter: &'static str, value: u64, min: u64, max: u64) -> Result<(), ConfigError> {
        if (min..=max).contains(&value) {
            Ok(())
        } else {
            Err(ConfigError { parameter, value, min, max })
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {} is outside {}..={}", self.parameter, self.value, self.min, self.max)
    }
}
