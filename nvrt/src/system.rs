//! The system an application runs on: its devices, command line, boot modules, clock, CPUs.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::context::Context;
use crate::platform::Platform;
use crate::Error;

/// A PCI function's address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciAddress {
    pub domain: u16,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl fmt::Display for PciAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}:{:02x}:{:02x}.{}", self.domain, self.bus, self.device, self.function)
    }
}

/// What an application may know of a device before and after opening it
/// (`cudaGetDeviceProperties`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// The device's index in [`System`].
    pub ordinal: usize,
    /// The marketing name GSP-RM reports (e.g. "NVIDIA H200").
    pub name: String,
    /// The chip (e.g. "GH100").
    pub chip: String,
    /// Compute capability as major * 10 + minor (75, 80, 86, 89, 90, ...).
    pub sm_version: u32,
    /// Video memory, bytes.
    pub memory_bytes: u64,
    /// Where the device sits on PCI, where the platform knows it.
    pub pci: Option<PciAddress>,
    /// The device executes PTX itself (the GPU model); real GPUs execute SASS only.
    pub runs_ptx: bool,
}

impl DeviceProperties {
    /// `(major, minor)` of the compute capability.
    pub fn compute_capability(&self) -> (u32, u32) {
        (self.sm_version / 10, self.sm_version % 10)
    }
}

/// The PTX target payloads for a device of `sm_version` are built for: the oldest SM of its
/// line whose PTX the device accepts (sm_75 on Turing, sm_80 on Ampere and Ada, sm_90 on
/// Hopper and Blackwell).
pub fn payload_arch(sm_version: u32) -> &'static str {
    match sm_version {
        ..=79 => "sm_75",
        90.. => "sm_90",
        _ => "sm_80",
    }
}

/// The boot module that carries the kernels of `name` (a CUDA source `name.cu` the image build
/// compiled) for a device of `sm_version`: `payload-NAME-ARCH.ptx`.
pub fn payload_module_name(name: &str, sm_version: u32) -> String {
    format!("payload-{name}-{}.ptx", payload_arch(sm_version))
}

/// The console line of a long step's progress: `progress: WHAT: DONE/TOTAL (P%)` (large copies
/// report it too, in bytes).
pub(crate) fn log_progress(what: &str, done: u64, total: u64) {
    let percent = done.saturating_mul(100).checked_div(total).unwrap_or(100);
    log::info!(target: "progress", "{what}: {done}/{total} ({percent}%)");
}

/// The system, as the application sees it.
#[derive(Clone, Copy)]
pub struct System<'p> {
    platform: &'p dyn Platform,
}

impl<'p> System<'p> {
    /// A system over `platform` (the unikernel makes one; so does [`crate::model`]).
    pub fn new(platform: &'p dyn Platform) -> Self {
        System { platform }
    }

    /// How many devices there are (`cuDeviceGetCount`).
    pub fn device_count(&self) -> usize {
        self.platform.device_count()
    }

    /// A device's properties, without opening it.
    pub fn device_properties(&self, ordinal: usize) -> Result<DeviceProperties, Error> {
        self.platform.properties(ordinal).ok_or(Error::NoSuchDevice { ordinal, count: self.device_count() })
    }

    /// Every device's properties, in ordinal order.
    pub fn devices(&self) -> Vec<DeviceProperties> {
        (0..self.device_count()).filter_map(|i| self.platform.properties(i)).collect()
    }

    /// Opens device `ordinal`: a context of its own (an RM client, a VA space, the default
    /// stream). Dropping the context gives it all back.
    pub fn open(&self, ordinal: usize) -> Result<Context<'p>, Error> {
        let properties = self.device_properties(ordinal)?;
        let ops = self.platform.open(ordinal)?;
        Ok(Context::new(self.platform, ops, properties))
    }

    /// The kernel command line, as the loader passed it.
    pub fn cmdline(&self) -> &'p str {
        self.platform.cmdline()
    }

    /// The value of `key=value` on the command line (the last one wins).
    pub fn cmdline_value(&self, key: &str) -> Option<&'p str> {
        self.cmdline().split_ascii_whitespace().rev().find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
    }

    /// Whether the bare word `word` is on the command line.
    pub fn cmdline_flag(&self, word: &str) -> bool {
        self.cmdline().split_ascii_whitespace().any(|w| w == word)
    }

    /// A boot module by name (input data, models, payloads).
    pub fn module(&self, name: &str) -> Option<&'p [u8]> {
        self.platform.module(name)
    }

    /// The names of every boot module.
    pub fn module_names(&self) -> Vec<String> {
        self.platform.module_names()
    }

    /// Nanoseconds of a monotonic clock since the platform started.
    pub fn now_ns(&self) -> u64 {
        self.platform.now_ns()
    }

    /// CPUs online.
    pub fn cpus(&self) -> usize {
        self.platform.cpus()
    }

    /// Marks a named point of the application's run on the platform's timeline (the
    /// unikernel's boot timeline prints it with its milliseconds).
    pub fn milestone(&self, name: &str) {
        self.platform.milestone(name);
    }

    /// Reports how far a long step got, as one console line:
    /// `progress: WHAT: DONE/TOTAL (P%)`.
    pub fn progress(&self, what: &str, done: u64, total: u64) {
        log_progress(what, done, total);
    }
}

/// What an application's `main` may return, and how the platform reads it: `Ok(())` or
/// `Ok(true)` is success, `Ok(false)` a wrong result, `Err(e)` a failure with its reason.
pub trait Termination {
    /// `Ok(())` on success; else one line saying what failed.
    fn report(self) -> Result<(), String>;
}

impl<E: fmt::Display> Termination for Result<(), E> {
    fn report(self) -> Result<(), String> {
        self.map_err(|e| format!("{e}"))
    }
}

impl<E: fmt::Display> Termination for Result<bool, E> {
    fn report(self) -> Result<(), String> {
        match self {
            Ok(true) => Ok(()),
            Ok(false) => Err(String::from("the application reported a wrong result")),
            Err(e) => Err(format!("{e}")),
        }
    }
}
