//! The example application linked into the unikernel image (and run by host tests on model
//! GPUs): vector add, SAXPY, a tiled matrix multiply, a reduction with shared memory, a
//! histogram with atomics and a Mandelbrot image. Each example allocates device buffers, copies
//! its inputs in, launches the project's own kernel (`payloads/*.cu`, compiled to PTX by
//! clang-19 when the image is built), copies the result back and compares it with a CPU
//! reference computed here; the report carries the time each step took on the GPU's clock.
//!
//! Kernels come by name from the caller (boot modules in the kernel, files in tests):
//! `payload-NAME-ARCH.ptx`, ARCH being `sm_75` on Turing, `sm_90` on Hopper, `sm_80` otherwise
//! (PTX is built for the oldest SM of the family that runs it).
#![no_std]
extern crate alloc;

pub mod managed;

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use nvgpu::chip::Chipset;
use nvgpu::hw::RegisterIo;
use nvgpu::platform::{Clock, DmaAllocator};
use nvgpu::runtime::params::Args;
use nvgpu::runtime::{Gpu, LaunchConfig, Module, RuntimeError, Stream};

/// One example's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub name: &'static str,
    /// `None` when the result matched the CPU reference; else what differed.
    pub mismatch: Option<String>,
    /// GPU-clock nanoseconds from the first copy in to the last copy out.
    pub elapsed_ns: u64,
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
pub enum AppError {
    /// No boot module / file of this name.
    MissingPayload(String),
    Runtime(&'static str, RuntimeError),
    /// Managed memory failed (a fatal GPU fault, servicing, the fault buffer).
    Managed(&'static str, uvm::runtime::ManagedError),
}

impl core::fmt::Display for AppError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AppError::MissingPayload(name) => write!(f, "payload {name} is not among the boot modules"),
            AppError::Runtime(example, e) => write!(f, "{example}: {e}"),
            AppError::Managed(example, e) => write!(f, "{example}: {e}"),
        }
    }
}

/// The payload module name of `kernel_file` for `chip`.
pub fn payload_name(kernel_file: &str, chip: Chipset) -> String {
    format!("payload-{kernel_file}-{}.ptx", payload_arch(chip))
}

/// The PTX target the payloads for `chip` are built for: the oldest SM of its line whose PTX
/// the model and the chip's driver accept (sm_75 on Turing, sm_80 on Ampere and Ada, sm_90 on
/// Hopper and Blackwell), chosen by the chip's SM version.
pub fn payload_arch(chip: Chipset) -> &'static str {
    match chip.sm_version() {
        ..=79 => "sm_75",
        90.. => "sm_90",
        _ => "sm_80",
    }
}

/// Every example, in order.
pub const EXAMPLES: &[&str] = &["vector_add", "saxpy", "matmul", "reduce", "histogram", "mandelbrot"];

struct Ctx<'g, 'a, R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> {
    gpu: &'g mut Gpu<'a, R, A, C>,
    stream: Stream,
    payloads: &'g dyn Fn(&str) -> Option<&'g [u8]>,
}

/// Runs every example on `gpu` with kernels on `stream` (a compute stream), calling `report`
/// after each. Returns the reports; an example that cannot run stops the run with an error.
pub fn run<'g, 'a, R, A, C>(
    gpu: &'g mut Gpu<'a, R, A, C>,
    stream: Stream,
    payloads: &'g dyn Fn(&str) -> Option<&'g [u8]>,
    report: &mut dyn FnMut(&Report),
) -> Result<Vec<Report>, AppError>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
{
    let mut ctx = Ctx { gpu, stream, payloads };
    let mut reports = Vec::new();
    for name in EXAMPLES {
        let r = match *name {
            "vector_add" => vector_add(&mut ctx),
            "saxpy" => saxpy(&mut ctx),
            "matmul" => matmul(&mut ctx),
            "reduce" => reduce(&mut ctx),
            "histogram" => histogram(&mut ctx),
            _ => mandelbrot(&mut ctx),
        }?;
        report(&r);
        reports.push(r);
    }
    Ok(reports)
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

impl<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> Ctx<'_, '_, R, A, C> {
    fn module(&mut self, example: &'static str, file: &str) -> Result<Module, AppError> {
        let name = payload_name(file, self.gpu.chipset());
        let bytes = (self.payloads)(&name).ok_or(AppError::MissingPayload(name))?;
        Module::load(self.gpu, bytes).map_err(|e| AppError::Runtime(example, e))
    }

    fn now(&self) -> u64 {
        self.gpu.clock().now_ns()
    }

    fn launch(
        &mut self,
        example: &'static str,
        m: &Module,
        kernel: &str,
        cfg: LaunchConfig,
        args: &Args,
    ) -> Result<(), AppError> {
        let f = m.function(kernel).map_err(|e| AppError::Runtime(example, e))?;
        self.stream.launch(self.gpu, &f, cfg, args).map_err(|e| AppError::Runtime(example, e))?;
        self.stream.synchronize(self.gpu).map_err(|e| AppError::Runtime(example, e))
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
        $e.map_err(|e| AppError::Runtime($example, e))?
    };
}

fn vector_add<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
    ctx: &mut Ctx<'_, '_, R, A, C>,
) -> Result<Report, AppError> {
    const EX: &str = "vector_add";
    let n = 100_003u32;
    let mut rng = Rng(1);
    let a: Vec<f32> = (0..n).map(|_| rng.f32(-100.0, 100.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.f32(-100.0, 100.0)).collect();
    let m = ctx.module(EX, "vector_add")?;
    let t0 = ctx.now();
    let da = rt!(EX, ctx.gpu.alloc_from(&a));
    let db = rt!(EX, ctx.gpu.alloc_from(&b));
    let dc = rt!(EX, ctx.gpu.alloc::<f32>(n as usize));
    let args = Args::new().ptr(&da).ptr(&db).ptr(&dc).u32(n);
    ctx.launch(EX, &m, "vector_add_f32", LaunchConfig::linear(n.div_ceil(256), 256), &args)?;
    let mut c = vec![0f32; n as usize];
    rt!(EX, ctx.gpu.copy_from_device(&mut c, &dc));
    let elapsed_ns = ctx.now() - t0;
    let want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| (x + y).to_bits()).collect();
    let got: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
    for buf in [da, db, dc] {
        rt!(EX, buf.free(ctx.gpu));
    }
    rt!(EX, m.free(ctx.gpu));
    Ok(Report { name: EX, mismatch: first_mismatch(&got, &want), elapsed_ns, work: format!("{n} f32 additions") })
}

fn saxpy<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
    ctx: &mut Ctx<'_, '_, R, A, C>,
) -> Result<Report, AppError> {
    const EX: &str = "saxpy";
    let n = 65_537u32;
    let alpha = 2.5f32;
    let mut rng = Rng(2);
    let x: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
    let m = ctx.module(EX, "saxpy")?;
    let t0 = ctx.now();
    let dx = rt!(EX, ctx.gpu.alloc_from(&x));
    let dy = rt!(EX, ctx.gpu.alloc_from(&y));
    let args = Args::new().u32(n).f32(alpha).ptr(&dx).ptr(&dy);
    // A grid-stride loop: fewer threads than elements.
    ctx.launch(EX, &m, "saxpy", LaunchConfig::linear(64, 256), &args)?;
    let mut out = vec![0f32; n as usize];
    rt!(EX, ctx.gpu.copy_from_device(&mut out, &dy));
    let elapsed_ns = ctx.now() - t0;
    let want: Vec<u32> = x.iter().zip(&y).map(|(x, y)| libm::fmaf(alpha, *x, *y).to_bits()).collect();
    let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
    for buf in [dx, dy] {
        rt!(EX, buf.free(ctx.gpu));
    }
    rt!(EX, m.free(ctx.gpu));
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&got, &want),
        elapsed_ns,
        work: format!("y = {alpha}*x + y, {n} elements"),
    })
}

fn matmul<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
    ctx: &mut Ctx<'_, '_, R, A, C>,
) -> Result<Report, AppError> {
    const EX: &str = "matmul";
    let (rows, cols, inner) = (96usize, 80usize, 72usize);
    let mut rng = Rng(3);
    let a: Vec<f32> = (0..rows * inner).map(|_| rng.f32(-1.0, 1.0)).collect();
    let b: Vec<f32> = (0..inner * cols).map(|_| rng.f32(-1.0, 1.0)).collect();
    let m = ctx.module(EX, "matmul")?;
    let t0 = ctx.now();
    let da = rt!(EX, ctx.gpu.alloc_from(&a));
    let db = rt!(EX, ctx.gpu.alloc_from(&b));
    let dc = rt!(EX, ctx.gpu.alloc::<f32>(rows * cols));
    let args = Args::new().ptr(&da).ptr(&db).ptr(&dc).i32(rows as i32).i32(cols as i32).i32(inner as i32);
    let cfg = LaunchConfig {
        grid: [cols.div_ceil(16) as u32, rows.div_ceil(16) as u32, 1],
        block: [16, 16, 1],
        shared_bytes: 0,
    };
    ctx.launch(EX, &m, "matmul_tiled", cfg, &args)?;
    let mut c = vec![0f32; rows * cols];
    rt!(EX, ctx.gpu.copy_from_device(&mut c, &dc));
    let elapsed_ns = ctx.now() - t0;
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
    for buf in [da, db, dc] {
        rt!(EX, buf.free(ctx.gpu));
    }
    rt!(EX, m.free(ctx.gpu));
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&got, &want),
        elapsed_ns,
        work: format!("{rows}x{inner} * {inner}x{cols}, 16x16 tiles"),
    })
}

fn reduce<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
    ctx: &mut Ctx<'_, '_, R, A, C>,
) -> Result<Report, AppError> {
    const EX: &str = "reduce";
    let (n, block) = (200_001u32, 256u32);
    let grid = n.div_ceil(block);
    let mut rng = Rng(4);
    let v: Vec<u32> = (0..n).map(|_| rng.u32() >> 8).collect();
    let m = ctx.module(EX, "reduce")?;
    let t0 = ctx.now();
    let din = rt!(EX, ctx.gpu.alloc_from(&v));
    let dout = rt!(EX, ctx.gpu.alloc::<u32>(grid as usize));
    let args = Args::new().ptr(&din).ptr(&dout).u32(n);
    // The per-block array lives in dynamic shared memory.
    let cfg = LaunchConfig { grid: [grid, 1, 1], block: [block, 1, 1], shared_bytes: 4 * block };
    ctx.launch(EX, &m, "reduce_sum_u32", cfg, &args)?;
    let mut partial = vec![0u32; grid as usize];
    rt!(EX, ctx.gpu.copy_from_device(&mut partial, &dout));
    let elapsed_ns = ctx.now() - t0;
    let got = partial.iter().fold(0u32, |s, x| s.wrapping_add(*x));
    let want = v.iter().fold(0u32, |s, x| s.wrapping_add(*x));
    let per_block: Vec<u32> =
        v.chunks(block as usize).map(|c| c.iter().fold(0u32, |s, x| s.wrapping_add(*x))).collect();
    let mismatch =
        first_mismatch(&partial, &per_block).or((got != want).then(|| format!("sum {got}, expected {want}")));
    for buf in [din, dout] {
        rt!(EX, buf.free(ctx.gpu));
    }
    rt!(EX, m.free(ctx.gpu));
    Ok(Report {
        name: EX,
        mismatch,
        elapsed_ns,
        work: format!("sum of {n} u32 in {grid} blocks of {block} (shared memory)"),
    })
}

fn histogram<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
    ctx: &mut Ctx<'_, '_, R, A, C>,
) -> Result<Report, AppError> {
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
    let m = ctx.module(EX, "histogram")?;
    let t0 = ctx.now();
    let dd = rt!(EX, ctx.gpu.alloc_from(&data));
    let dbins = rt!(EX, ctx.gpu.alloc::<u32>(256));
    rt!(EX, ctx.gpu.memset_d32(&dbins, 0));
    let args = Args::new().ptr(&dd).u32(n).ptr(&dbins);
    ctx.launch(EX, &m, "histogram256", LaunchConfig::linear(32, 256), &args)?;
    let mut bins = vec![0u32; 256];
    rt!(EX, ctx.gpu.copy_from_device(&mut bins, &dbins));
    let elapsed_ns = ctx.now() - t0;
    let mut want = vec![0u32; 256];
    for &d in &data {
        want[d as usize] += 1;
    }
    {
        let buf = dbins;
        rt!(EX, buf.free(ctx.gpu));
    }
    rt!(EX, dd.free(ctx.gpu));
    rt!(EX, m.free(ctx.gpu));
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&bins, &want),
        elapsed_ns,
        work: format!("256 bins over {n} bytes (shared and global atomics)"),
    })
}

fn mandelbrot<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
    ctx: &mut Ctx<'_, '_, R, A, C>,
) -> Result<Report, AppError> {
    const EX: &str = "mandelbrot";
    let (w, h, max_iter) = (96i32, 64i32, 64i32);
    let (x0, y0, dx, dy) = (-2.0f32, -1.2f32, 3.0f32 / 96.0, 2.4f32 / 64.0);
    let m = ctx.module(EX, "mandelbrot")?;
    let t0 = ctx.now();
    let dout = rt!(EX, ctx.gpu.alloc::<u32>((w * h) as usize));
    let dout8 = rt!(EX, ctx.gpu.alloc::<u8>((w * h) as usize));
    let args = Args::new().ptr(&dout).ptr(&dout8).i32(w).i32(h).f32(x0).f32(y0).f32(dx).f32(dy).i32(max_iter);
    let cfg =
        LaunchConfig { grid: [(w as u32).div_ceil(16), (h as u32).div_ceil(8), 1], block: [16, 8, 1], shared_bytes: 0 };
    ctx.launch(EX, &m, "mandelbrot", cfg, &args)?;
    let mut got = vec![0u32; (w * h) as usize];
    rt!(EX, ctx.gpu.copy_from_device(&mut got, &dout));
    let elapsed_ns = ctx.now() - t0;
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
    rt!(EX, dout.free(ctx.gpu));
    rt!(EX, dout8.free(ctx.gpu));
    rt!(EX, m.free(ctx.gpu));
    Ok(Report {
        name: EX,
        mismatch: first_mismatch(&got, &want),
        elapsed_ns,
        work: format!("{w}x{h} pixels, {max_iter} iterations, {inside} inside the set"),
    })
}
