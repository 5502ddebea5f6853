//! The example application linked into the unikernel image (and run by host tests on model
//! GPUs), written against the application API (`nvrt`) only: vector add, SAXPY, a tiled matrix
//! multiply, a reduction with shared memory, a histogram with atomics and a Mandelbrot image,
//! then the managed-memory example ([`managed`]). Each example allocates device buffers, copies
//! its inputs in, launches the project's own kernel (`payloads/*.cu`, compiled to PTX by
//! clang-19 when the image is built), copies the result back and compares it with a CPU
//! reference computed here; the report carries the time each step took on the GPU's clock and
//! the kernel's own time between two events.
//!
//! Kernels come from the boot modules by name: `payload-NAME-ARCH.ptx`, ARCH being `sm_75` on
//! Turing, `sm_90` on Hopper, `sm_80` otherwise (`nvrt::payload_module_name`).
#![no_std]
extern crate alloc;

pub mod managed;

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use nvrt::{Context, LaunchConfig, Module, Stream, System};

/// One example's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub name: &'static str,
    /// `None` when the result matched the CPU reference; else what differed.
    pub mismatch: Option<String>,
    /// GPU-clock nanoseconds from the first copy in to the last copy out.
    pub elapsed_ns: u64,
    /// GPU-clock nanoseconds of the kernel alone, between an event before and one after it.
    pub kernel_ns: u64,
    /// A one-line description of the work.
    pub work: String,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.mismatch.is_none()
    }
}

/// Why an example could not run at all.
#[derive(Debug)]
pub struct AppError {
    pub example: &'static str,
    pub error: nvrt::Error,
}

impl core::fmt::Display for AppError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.example, self.error)
    }
}

/// Every example, in order.
pub const EXAMPLES: &[&str] = &["vector_add", "saxpy", "matmul", "reduce", "histogram", "mandelbrot"];

/// The application: every example on device 0, reported on the console (`log`, target `app`),
/// then the managed-memory example. `Ok(true)` when every result matched its CPU reference.
pub fn main(sys: &System<'_>) -> Result<bool, AppError> {
    let open = |error| AppError { example: "open", error };
    let ctx = sys.open(0).map_err(open)?;
    sys.milestone("GPU opened");
    let props = ctx.properties().clone();
    let stream = ctx.new_stream().map_err(open)?;
    sys.milestone("compute stream created");
    log::info!(target: "app", "{}: running {} examples on \"{}\" (sm_{})", props.chip, EXAMPLES.len(), props.name, props.sm_version);
    let mut first = true;
    let mut done = 0;
    let reports = run(&ctx, &stream, &mut |r| {
        if core::mem::take(&mut first) {
            sys.milestone("first result");
        }
        log_report(r);
        done += 1;
        sys.progress("examples", done, EXAMPLES.len() as u64);
    })?;
    sys.milestone("examples done");
    let failed = reports.iter().filter(|r| !r.passed()).count();
    log::info!(target: "app", "{} passed, {failed} failed", reports.len() - failed);
    let managed = managed::run(&ctx, &stream)?;
    let r = &managed.report;
    match &r.mismatch {
        None => log::info!(target: "app", "managed: ok, {} ({} us)", r.work, r.elapsed_ns / 1_000),
        Some(why) => log::error!(target: "app", "managed: WRONG RESULT, {}: {why}", r.work),
    }
    log::info!(
        target: "app",
        "managed: {} CPU page faults served through uvm, {} bytes migrated back from the GPU by them",
        managed.stats.cpu_page_faults,
        managed.stats.cpu_migrated_back_bytes
    );
    log::info!(target: "app", "managed stats: {}", managed.stats.uvm.to_json());
    sys.milestone("managed example done");
    drop(stream);
    ctx.close().map_err(|error| AppError { example: "close", error })?;
    Ok(failed == 0 && r.passed())
}

fn log_report(r: &Report) {
    let us = r.elapsed_ns / 1_000;
    let kernel_us = r.kernel_ns / 1_000;
    match &r.mismatch {
        None => log::info!(target: "app", "{}: ok, {} ({us} us, kernel {kernel_us} us)", r.name, r.work),
        Some(why) => log::error!(target: "app", "{}: WRONG RESULT, {}: {why}", r.name, r.work),
    }
}

/// Runs every example in `ctx`, kernels on `stream`, calling `report` after each. Returns the
/// reports; an example that cannot run stops the run with an error.
pub fn run<'p>(
    ctx: &Context<'p>,
    stream: &Stream<'p>,
    report: &mut dyn FnMut(&Report),
) -> Result<Vec<Report>, AppError> {
    let x = Ex { ctx, stream };
    let mut reports = Vec::new();
    for name in EXAMPLES {
        let r = match *name {
            "vector_add" => vector_add(&x),
            "saxpy" => saxpy(&x),
            "matmul" => matmul(&x),
            "reduce" => reduce(&x),
            "histogram" => histogram(&x),
            _ => mandelbrot(&x),
        }
        .map_err(|(example, error)| AppError { example, error })?;
        report(&r);
        reports.push(r);
    }
    Ok(reports)
}

struct Ex<'c, 'p> {
    ctx: &'c Context<'p>,
    stream: &'c Stream<'p>,
}

type Res<T> = Result<T, (&'static str, nvrt::Error)>;

impl<'p> Ex<'_, 'p> {
    fn module(&self, example: &'static str) -> Res<Module<'p>> {
        self.ctx.load_payload(example).map_err(|e| (example, e))
    }
    fn now(&self, example: &'static str) -> Res<u64> {
        self.ctx.gpu_time_ns().map_err(|e| (example, e))
    }
    /// Launches `kernel` with `args` between two events and waits; the kernel's GPU time.
    fn launch(
        &self,
        example: &'static str,
        m: &Module<'p>,
        kernel: &str,
        cfg: LaunchConfig,
        args: &[&dyn nvrt::KernelArg],
    ) -> Res<u64> {
        let e = |e| (example, e);
        let f = m.function(kernel).map_err(e)?;
        let start = self.stream.record_event().map_err(e)?;
        let mut launch = self.stream.launch_builder(&f);
        for a in args {
            launch = launch.arg(*a);
        }
        launch.launch(cfg).map_err(e)?;
        let end = self.stream.record_event().map_err(e)?;
        self.stream.synchronize().map_err(e)?;
        start.elapsed_ns(&end).map_err(e)
    }
}

/// A small deterministic generator (xorshift64*), so every run checks the same data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

fn first_mismatch<T: PartialEq + core::fmt::Debug>(got: &[T], want: &[T]) -> Option<String> {
    got.iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .map(|i| format!("element {i}: got {:?}, expected {:?}", got[i], want[i]))
}

macro_rules! rt {
    ($example:expr, $e:expr) => {
        $e.map_err(|e| ($example, e))?
    };
}

fn vector_add(ex: &Ex<'_, '_>) -> Res<Report> {
    const EX: &str = "vector_add";
    let n = 100_003u32;
    let mut rng = Rng(1);
    let a: Vec<f32> = (0..n).map(|_| rng.f32(-100.0, 100.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.f32(-100.0, 100.0)).collect();
    let m = ex.module(EX)?;
    let t0 = ex.now(EX)?;
    let da = rt!(EX, ex.ctx.htod(&a));
    let db = rt!(EX, ex.ctx.htod(&b));
    let dc = rt!(EX, ex.ctx.alloc::<f32>(n as usize));
    let kernel_ns =
        ex.launch(EX, &m, "vector_add_f32", LaunchConfig::linear(n.div_ceil(256), 256), &[&da, &db, &dc, &n])?;
    let mut c = vec![0f32; n as usize];
    rt!(EX, ex.ctx.memcpy_dtoh(&dc, &mut c));
    let elapsed_ns = ex.now(EX)? - t0;
    let want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| (x + y).to_bits()).collect();
    let got: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&got, &want),
        elapsed_ns,
        kernel_ns,
        work: format!("{n} f32 additions"),
    })
}

fn saxpy(ex: &Ex<'_, '_>) -> Res<Report> {
    const EX: &str = "saxpy";
    let n = 65_537u32;
    let alpha = 2.5f32;
    let mut rng = Rng(2);
    let x: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let m = ex.module(EX)?;
    let t0 = ex.now(EX)?;
    let dx = rt!(EX, ex.ctx.htod(&x));
    let dy = rt!(EX, ex.ctx.htod(&y));
    // A grid-stride loop: fewer threads than elements.
    let kernel_ns = ex.launch(EX, &m, "saxpy", LaunchConfig::linear(64, 256), &[&n, &alpha, &dx, &dy])?;
    let mut out = vec![0f32; n as usize];
    rt!(EX, ex.ctx.memcpy_dtoh(&dy, &mut out));
    let elapsed_ns = ex.now(EX)? - t0;
    let want: Vec<u32> = x.iter().zip(&y).map(|(x, y)| libm::fmaf(alpha, *x, *y).to_bits()).collect();
    let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&got, &want),
        elapsed_ns,
        kernel_ns,
        work: format!("y = {alpha}*x + y, {n} elements"),
    })
}

fn matmul(ex: &Ex<'_, '_>) -> Res<Report> {
    const EX: &str = "matmul";
    let (rows, cols, inner) = (96usize, 80usize, 72usize);
    let mut rng = Rng(3);
    let a: Vec<f32> = (0..rows * inner).map(|_| rng.f32(-1.0, 1.0)).collect();
    let b: Vec<f32> = (0..inner * cols).map(|_| rng.f32(-1.0, 1.0)).collect();
    let m = ex.module(EX)?;
    let t0 = ex.now(EX)?;
    let da = rt!(EX, ex.ctx.htod(&a));
    let db = rt!(EX, ex.ctx.htod(&b));
    let dc = rt!(EX, ex.ctx.alloc::<f32>(rows * cols));
    let cfg = LaunchConfig {
        grid: [cols.div_ceil(16) as u32, rows.div_ceil(16) as u32, 1],
        block: [16, 16, 1],
        shared_bytes: 0,
    };
    let kernel_ns =
        ex.launch(EX, &m, "matmul_tiled", cfg, &[&da, &db, &dc, &(rows as i32), &(cols as i32), &(inner as i32)])?;
    let mut c = vec![0f32; rows * cols];
    rt!(EX, ex.ctx.memcpy_dtoh(&dc, &mut c));
    let elapsed_ns = ex.now(EX)? - t0;
    // The kernel's order: an fma chain over k.
    let mut want = vec![0u32; rows * cols];
    for r in 0..rows {
        for col in 0..cols {
            let mut acc = 0.0f32;
            for k in 0..inner {
                acc = libm::fmaf(a[r * inner + k], b[k * cols + col], acc);
            }
            want[r * cols + col] = acc.to_bits();
        }
    }
    let got: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&got, &want),
        elapsed_ns,
        kernel_ns,
        work: format!("{rows}x{inner} * {inner}x{cols}, 16x16 tiles"),
    })
}

fn reduce(ex: &Ex<'_, '_>) -> Res<Report> {
    const EX: &str = "reduce";
    let (n, block) = (200_001u32, 256u32);
    let grid = n.div_ceil(block);
    let mut rng = Rng(4);
    let v: Vec<u32> = (0..n).map(|_| rng.u32() >> 8).collect();
    let m = ex.module(EX)?;
    let t0 = ex.now(EX)?;
    let din = rt!(EX, ex.ctx.htod(&v));
    let dout = rt!(EX, ex.ctx.alloc::<u32>(grid as usize));
    // The per-block array lives in dynamic shared memory.
    let cfg = LaunchConfig { grid: [grid, 1, 1], block: [block, 1, 1], shared_bytes: 4 * block };
    let kernel_ns = ex.launch(EX, &m, "reduce_sum_u32", cfg, &[&din, &dout, &n])?;
    let mut partial = vec![0u32; grid as usize];
    rt!(EX, ex.ctx.memcpy_dtoh(&dout, &mut partial));
    let elapsed_ns = ex.now(EX)? - t0;
    let got = partial.iter().fold(0u32, |s, x| s.wrapping_add(*x));
    let want = v.iter().fold(0u32, |s, x| s.wrapping_add(*x));
    let per_block: Vec<u32> =
        v.chunks(block as usize).map(|c| c.iter().fold(0u32, |s, x| s.wrapping_add(*x))).collect();
    let mismatch =
        first_mismatch(&partial, &per_block).or((got != want).then(|| format!("sum {got}, expected {want}")));
    Ok(Report {
        name: EX,
        mismatch,
        elapsed_ns,
        kernel_ns,
        work: format!("sum of {n} u32 in {grid} blocks of {block} (shared memory)"),
    })
}

fn histogram(ex: &Ex<'_, '_>) -> Res<Report> {
    const EX: &str = "histogram";
    let n = 150_000u32;
    let mut rng = Rng(5);
    // Skewed data: many collisions in the atomics.
    let data: Vec<u8> = (0..n)
        .map(|_| {
            let r = rng.u32();
            ((r & 0xff) as u8) & ((r >> 8) as u8)
        })
        .collect();
    let m = ex.module(EX)?;
    let t0 = ex.now(EX)?;
    let dd = rt!(EX, ex.ctx.htod(&data));
    let dbins = rt!(EX, ex.ctx.alloc::<u32>(256));
    rt!(EX, ex.ctx.memset_d32(&dbins, 0));
    let kernel_ns = ex.launch(EX, &m, "histogram256", LaunchConfig::linear(32, 256), &[&dd, &n, &dbins])?;
    let mut bins = vec![0u32; 256];
    rt!(EX, ex.ctx.memcpy_dtoh(&dbins, &mut bins));
    let elapsed_ns = ex.now(EX)? - t0;
    let mut want = vec![0u32; 256];
    for &d in &data {
        want[d as usize] += 1;
    }
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&bins, &want),
        elapsed_ns,
        kernel_ns,
        work: format!("256 bins over {n} bytes (shared and global atomics)"),
    })
}

fn mandelbrot(ex: &Ex<'_, '_>) -> Res<Report> {
    const EX: &str = "mandelbrot";
    let (w, h, max_iter) = (96i32, 64i32, 64i32);
    let (x0, y0, dx, dy) = (-2.0f32, -1.2f32, 3.0f32 / 96.0, 2.4f32 / 64.0);
    let m = ex.module(EX)?;
    let t0 = ex.now(EX)?;
    let dout = rt!(EX, ex.ctx.alloc::<u32>((w * h) as usize));
    let dout8 = rt!(EX, ex.ctx.alloc::<u8>((w * h) as usize));
    let cfg =
        LaunchConfig { grid: [(w as u32).div_ceil(16), (h as u32).div_ceil(8), 1], block: [16, 8, 1], shared_bytes: 0 };
    let kernel_ns = ex.launch(EX, &m, "mandelbrot", cfg, &[&dout, &dout8, &w, &h, &x0, &y0, &dx, &dy, &max_iter])?;
    let mut got = vec![0u32; (w * h) as usize];
    rt!(EX, ex.ctx.memcpy_dtoh(&dout, &mut got));
    let elapsed_ns = ex.now(EX)? - t0;
    // The PTX's operations (clang contracts to fma): cx = fma(px, dx, x0); per step y2 = y*y,
    // test fma(x, x, y2) <= 4, x' = cx + (x*x - y2), y' = fma(x + x, y, cy).
    let mut want = vec![0u32; (w * h) as usize];
    for py in 0..h {
        for px in 0..w {
            let cx = libm::fmaf(px as f32, dx, x0);
            let cy = libm::fmaf(py as f32, dy, y0);
            let (mut x, mut y, mut it) = (0.0f32, 0.0f32, 0);
            while it < max_iter {
                let y2 = y * y;
                if libm::fmaf(x, x, y2) > 4.0 {
                    break;
                }
                let xt = cx + (x * x - y2);
                y = libm::fmaf(x + x, y, cy);
                x = xt;
                it += 1;
            }
            want[(py * w + px) as usize] = it as u32;
        }
    }
    let inside = got.iter().filter(|&&v| v == max_iter as u32).count();
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&got, &want),
        elapsed_ns,
        kernel_ns,
        work: format!("{w}x{h} pixels, {max_iter} iterations, {inside} inside the set"),
    })
}
