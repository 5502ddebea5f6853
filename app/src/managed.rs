//! The managed-memory example: one managed buffer twice the VRAM its context may hold, first
//! written by CPU code in place, stepped by a kernel (`payloads/managed.cu`) that takes
//! replayable faults on every page it touches first (UVM migrates, prefetches and evicts to
//! keep it going), checked and rewritten in place by CPU code (pages resident on the GPU come
//! back), stepped again and checked again. Every value is compared with the CPU's own
//! computation; the report carries the context's unified-memory statistics.
//!
//! How CPU code reaches managed memory is the platform's: the unikernel maps managed buffers
//! in its page tables and serves CPU page faults; on the host the runtime services the pages
//! first and hands over its copies.

use alloc::format;
use alloc::string::String;

use nvrt::{Context, LaunchConfig, ManagedOptions, ManagedStats, Stream};

use crate::{AppError, Report, Rng};

const EX: &str = "managed";

/// Elements of the buffer: 4 MiB and 12 bytes of u32s, so the buffer's last 2 MiB block is
/// partly used.
pub const ELEMENTS: u32 = (1 << 20) + 3;
/// VRAM the example's context may hold: half the buffer (one 2 MiB root chunk).
pub const VRAM_BYTES: u64 = 2 << 20;

/// The example's outcome: the report and the context's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct ManagedReport {
    pub report: Report,
    pub stats: ManagedStats,
}

/// The first kernel step and the second.
const STEP1: (u32, u32) = (3, 7);
const STEP2: (u32, u32) = (5, 1);

fn step(x: u32, (mul, add): (u32, u32)) -> u32 {
    x.wrapping_mul(mul).wrapping_add(add)
}

/// What CPU code XORs element `i` with between the two kernels.
fn salt(i: u32) -> u32 {
    i.wrapping_mul(0x9e37_79b9)
}

/// The initial value of every element, in order.
fn initial() -> impl Iterator<Item = u32> {
    let mut rng = Rng(10);
    (0..ELEMENTS).map(move |_| rng.u32())
}

/// Compares elements with what they should be, recording the first mismatch.
struct Check {
    first: Option<String>,
    wrong: u64,
}

impl Check {
    fn new() -> Self {
        Check { first: None, wrong: 0 }
    }
    fn element(&mut self, what: &str, i: u32, got: u32, want: u32) {
        if got != want {
            self.wrong += 1;
            if self.first.is_none() {
                self.first = Some(format!("{what}: element {i}: got {got:#010x}, expected {want:#010x}"));
            }
        }
    }
    fn result(self) -> Option<String> {
        self.first.map(|f| format!("{} wrong; first {f}", self.wrong))
    }
}

/// Runs the example in `ctx` (managed memory not yet used in it), kernels on `stream`.
pub fn run<'p>(ctx: &Context<'p>, stream: &Stream<'p>) -> Result<ManagedReport, AppError> {
    let e = |error| AppError { example: EX, error };
    ctx.configure_managed(ManagedOptions { vram_limit_bytes: Some(VRAM_BYTES), ..ManagedOptions::default() })
        .map_err(e)?;
    let module = ctx.load_payload("managed").map_err(e)?;
    let f = module.function("managed_step_u32").map_err(e)?;
    let buf = ctx.alloc_managed::<u32>(ELEMENTS as usize).map_err(e)?;
    let cfg = LaunchConfig::linear(1024, 256);
    let t0 = ctx.gpu_time_ns().map_err(e)?;

    // CPU code writes the input in place (first touches: zero-filled pages).
    let mut init = initial();
    buf.with_host_mut(|_, elems| elems.iter_mut().for_each(|v| *v = init.next().unwrap_or(0))).map_err(e)?;

    let launch = |(mul, add): (u32, u32)| {
        stream.launch_builder(&f).arg(&buf).arg(&ELEMENTS).arg(&mul).arg(&add).launch(cfg)?;
        stream.synchronize()
    };
    launch(STEP1).map_err(e)?;

    // CPU code checks the kernel's result and rewrites it in place.
    let mut check = Check::new();
    let mut want = initial();
    buf.with_host_mut(|first, elems| {
        for (k, v) in elems.iter_mut().enumerate() {
            let i = (first + k) as u32;
            check.element("after the first kernel", i, *v, step(want.next().unwrap_or(0), STEP1));
            *v ^= salt(i);
        }
    })
    .map_err(e)?;

    launch(STEP2).map_err(e)?;

    let mut want = initial();
    buf.with_host_mut(|first, elems| {
        for (k, v) in elems.iter().enumerate() {
            let i = (first + k) as u32;
            let w = step(step(want.next().unwrap_or(0), STEP1) ^ salt(i), STEP2);
            check.element("after the second kernel", i, *v, w);
        }
    })
    .map_err(e)?;
    let elapsed_ns = ctx.gpu_time_ns().map_err(e)? - t0;
    let stats = ctx.managed_stats().map_err(e)?;
    let bytes = ELEMENTS as usize * 4;
    Ok(ManagedReport {
        report: Report {
            name: EX,
            mismatch: check.result(),
            elapsed_ns,
            kernel_ns: 0,
            work: format!(
                "{ELEMENTS} u32 in one managed buffer of {} KiB through {} KiB of VRAM, two kernels and three CPU passes in place",
                bytes / 1024,
                VRAM_BYTES / 1024
            ),
        },
        stats,
    })
}
