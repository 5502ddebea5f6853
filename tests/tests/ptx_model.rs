//! The compute engine's PTX interpreter against real compiler output: the project's CUDA
//! payloads (`payloads/*.cu`) compiled by clang-19 for sm_80/86/89/90 at test time
//! (`tests::ptx_build`), run on a flat memory over several grid and block shapes (block sizes
//! that are not multiples of 32, grids that do not divide the data), and compared with
//! references computed here on the CPU.
//!
//! Tolerances: integers exactly; f32/f64 `add`/`mul`/`fma`/`div.rn`/`sqrt.rn`/`rcp.rn` and
//! conversions bit for bit (IEEE 754 fixes them; the references mirror the operation order clang
//! emits, which the PTX shows); `.approx` operations within the bounds of the PTX ISA's
//! tables (documented at each check).

use sim::engine_mem::{FlatMemory, VirtualMemory};
use sim::ptx::{self, LaunchConfig, LaunchStats, Limits, Module};
use tests::ptx_build::{ptx, ptx_with, ARCHES};

const BASE: u64 = 0x1_0000_0000;

/// A flat GPU memory with a bump allocator.
struct Gpu {
    mem: FlatMemory,
    next: u64,
}

impl Gpu {
    fn new(bytes: usize) -> Self {
        Gpu { mem: FlatMemory::new(BASE, bytes), next: BASE }
    }
    fn alloc(&mut self, data: &[u8]) -> u64 {
        let va = self.next;
        self.mem.write(va, data).expect("test memory too small");
        self.next = (va + data.len() as u64 + 255) & !255;
        va
    }
    fn zeros(&mut self, len: usize) -> u64 {
        self.alloc(&vec![0; len])
    }
    fn read(&mut self, va: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0; len];
        self.mem.read(va, &mut b).expect("read back");
        b
    }
    fn u32s(&mut self, va: u64, n: usize) -> Vec<u32> {
        self.read(va, 4 * n).chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }
    fn u64s(&mut self, va: u64, n: usize) -> Vec<u64> {
        self.read(va, 8 * n).chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
    }
    fn f32s(&mut self, va: u64, n: usize) -> Vec<f32> {
        self.u32s(va, n).into_iter().map(f32::from_bits).collect()
    }
    fn f64s(&mut self, va: u64, n: usize) -> Vec<f64> {
        self.u64s(va, n).into_iter().map(f64::from_bits).collect()
    }
}

fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_f64(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_i64(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn u32(&mut self) -> u32 {
        (self.next() >> 32) as u32
    }
    fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// Kernel arguments.
enum Arg {
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}
use Arg::*;

fn module(name: &str, arch: &str) -> Module {
    let text = ptx(name, arch);
    Module::parse(&text).unwrap_or_else(|e| panic!("{name}.cu for {arch}: {e}"))
}

fn launch_cfg(gpu: &mut Gpu, m: &Module, kernel: &str, cfg: LaunchConfig, args: &[Arg]) -> LaunchStats {
    let k = m.kernel(kernel).unwrap_or_else(|| panic!("no kernel {kernel}"));
    let raw: Vec<Vec<u8>> = args
        .iter()
        .map(|a| match a {
            U32(v) => v.to_le_bytes().to_vec(),
            U64(v) => v.to_le_bytes().to_vec(),
            F32(v) => v.to_le_bytes().to_vec(),
            F64(v) => v.to_le_bytes().to_vec(),
        })
        .collect();
    let refs: Vec<&[u8]> = raw.iter().map(|v| v.as_slice()).collect();
    let params = k.pack_params(&refs).expect("arguments match the parameter list");
    ptx::launch(m, kernel, &cfg, &params, &mut gpu.mem, &Limits::default())
        .unwrap_or_else(|e| panic!("{kernel} grid {:?} block {:?}: {e}", cfg.grid, cfg.block))
}

fn launch(gpu: &mut Gpu, m: &Module, kernel: &str, grid: u32, block: u32, args: &[Arg]) -> LaunchStats {
    launch_cfg(gpu, m, kernel, LaunchConfig::linear(grid, block), args)
}

/// Linear shapes: (elements, threads per block), including blocks that are not a multiple of
/// 32 and element counts that do not fill the last block.
const SHAPES: &[(u32, u32)] = &[(1, 32), (1000, 128), (97, 48), (4097, 256), (300, 1024), (77, 33)];

#[test]
fn every_payload_parses_for_every_architecture() {
    let expected: &[(&str, &[&str])] = &[
        ("vector_add", &["vector_add_u32", "vector_add_f32"]),
        ("saxpy", &["saxpy"]),
        ("matmul", &["matmul_tiled"]),
        ("reduce", &["reduce_sum_u32", "reduce_sum_f32", "reduce_sum_shfl_u32"]),
        ("histogram", &["histogram256", "histogram256_global"]),
        ("mandelbrot", &["mandelbrot"]),
        ("f64_math", &["f64_ops", "f64_dot"]),
        ("f32_math", &["f32_math", "f32_exact"]),
        ("convert", &["conversions", "int_ops", "int64_ops"]),
        ("warp", &["warp_ops", "warp_segments", "atomics"]),
        ("calls", &["calls"]),
        ("local_array", &["local_array"]),
    ];
    for arch in ARCHES {
        for (file, kernels) in expected {
            let m = module(file, arch);
            assert_eq!(m.target.split(',').next().map(str::trim), Some(*arch), "{file} {arch}");
            assert_eq!(m.version, if *arch == "sm_90a" { (8, 0) } else { (7, 8) }, "{file} {arch}");
            for k in *kernels {
                let k = m.kernel(k).unwrap_or_else(|| panic!("{file}.cu for {arch} lacks {k}"));
                assert!(k.instruction_count() > 0);
            }
            assert_eq!(m.kernels().len(), kernels.len(), "{file} {arch}");
        }
    }
}

#[test]
fn vector_add_u32_and_f32() {
    for arch in ARCHES {
        let m = module("vector_add", arch);
        for &(n, block) in SHAPES {
            let mut rng = Rng(n as u64 * 31 + block as u64);
            let a: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
            let b: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
            let mut gpu = Gpu::new(1 << 20);
            let (da, db) = (gpu.alloc(&bytes_u32(&a)), gpu.alloc(&bytes_u32(&b)));
            let dc = gpu.alloc(&bytes_u32(&vec![0xDEAD_BEEF; n as usize + 8]));
            let grid = n.div_ceil(block);
            let stats = launch(&mut gpu, &m, "vector_add_u32", grid, block, &[U64(da), U64(db), U64(dc), U32(n)]);
            assert_eq!(stats.threads, (grid * block) as u64);
            let c = gpu.u32s(dc, n as usize + 8);
            for i in 0..n as usize {
                assert_eq!(c[i], a[i].wrapping_add(b[i]), "{arch} n={n} block={block} i={i}");
            }
            assert!(c[n as usize..].iter().all(|v| *v == 0xDEAD_BEEF), "wrote past n");

            let fa: Vec<f32> = (0..n).map(|_| rng.f32(-1e3, 1e3)).collect();
            let fb: Vec<f32> = (0..n).map(|_| rng.f32(-1e-3, 1e-3)).collect();
            let (da, db) = (gpu.alloc(&bytes_f32(&fa)), gpu.alloc(&bytes_f32(&fb)));
            let dc = gpu.zeros(4 * n as usize);
            launch(&mut gpu, &m, "vector_add_f32", grid, block, &[U64(da), U64(db), U64(dc), U32(n)]);
            let c = gpu.f32s(dc, n as usize);
            for i in 0..n as usize {
                assert_eq!(c[i].to_bits(), (fa[i] + fb[i]).to_bits(), "{arch} add.f32 is IEEE exact");
            }
        }
    }
}

#[test]
fn saxpy_grid_stride() {
    for arch in ARCHES {
        let m = module("saxpy", arch);
        // Fewer threads than elements: the grid-stride loop covers the rest.
        for &(n, grid, block) in &[(1000u32, 2u32, 96u32), (5000, 7, 128), (31, 1, 64)] {
            let mut rng = Rng(n as u64);
            let x: Vec<f32> = (0..n).map(|_| rng.f32(-10.0, 10.0)).collect();
            let y: Vec<f32> = (0..n).map(|_| rng.f32(-10.0, 10.0)).collect();
            let a = 2.5f32;
            let mut gpu = Gpu::new(1 << 20);
            let dx = gpu.alloc(&bytes_f32(&x));
            let dy = gpu.alloc(&bytes_f32(&y));
            launch(&mut gpu, &m, "saxpy", grid, block, &[U32(n), F32(a), U64(dx), U64(dy)]);
            let out = gpu.f32s(dy, n as usize);
            for i in 0..n as usize {
                // clang contracts a*x+y into fma.rn.f32 (visible in the PTX): one rounding.
                assert_eq!(out[i].to_bits(), a.mul_add(x[i], y[i]).to_bits(), "{arch} i={i}");
            }
        }
    }
}

#[test]
fn tiled_matmul_matches_cpu() {
    for arch in ARCHES {
        let m = module("matmul", arch);
        for &(rows, cols, inner) in &[(16usize, 16usize, 16usize), (37, 29, 23), (64, 48, 40), (5, 70, 3)] {
            let mut rng = Rng((rows * 1000 + cols * 10 + inner) as u64);
            let a: Vec<f32> = (0..rows * inner).map(|_| rng.f32(-1.0, 1.0)).collect();
            let b: Vec<f32> = (0..inner * cols).map(|_| rng.f32(-1.0, 1.0)).collect();
            let mut gpu = Gpu::new(1 << 20);
            let da = gpu.alloc(&bytes_f32(&a));
            let db = gpu.alloc(&bytes_f32(&b));
            let dc = gpu.zeros(4 * rows * cols);
            let cfg = LaunchConfig::new([cols.div_ceil(16) as u32, rows.div_ceil(16) as u32, 1], [16, 16, 1]);
            launch_cfg(
                &mut gpu,
                &m,
                "matmul_tiled",
                cfg,
                &[U64(da), U64(db), U64(dc), U32(rows as u32), U32(cols as u32), U32(inner as u32)],
            );
            let c = gpu.f32s(dc, rows * cols);
            for r in 0..rows {
                for col in 0..cols {
                    // The kernel's order: an fma chain over k, zero-padded to whole tiles
                    // (fma(0, 0, acc) == acc).
                    let mut acc = 0.0f32;
                    for k in 0..inner {
                        acc = a[r * inner + k].mul_add(b[k * cols + col], acc);
                    }
                    assert_eq!(
                        c[r * cols + col].to_bits(),
                        acc.to_bits(),
                        "{arch} {rows}x{cols}x{inner} at ({r},{col})"
                    );
                }
            }
        }
    }
}

#[test]
fn shared_memory_reductions() {
    for arch in ARCHES {
        let m = module("reduce", arch);
        for &(n, block) in &[(1000u32, 128u32), (4096, 256), (33, 64), (1, 32), (5000, 1024), (100, 1)] {
            let grid = n.div_ceil(block);
            let mut rng = Rng(n as u64 ^ 0x55);
            let v: Vec<u32> = (0..n).map(|_| rng.u32() >> 8).collect();
            let mut gpu = Gpu::new(1 << 20);
            let din = gpu.alloc(&bytes_u32(&v));
            let dout = gpu.zeros(4 * grid as usize);
            // reduce_sum_u32 takes its array from dynamic shared memory.
            let mut cfg = LaunchConfig::linear(grid, block);
            cfg.dynamic_shared = 4 * block;
            launch_cfg(&mut gpu, &m, "reduce_sum_u32", cfg, &[U64(din), U64(dout), U32(n)]);
            let got = gpu.u32s(dout, grid as usize);
            for (g, got_g) in got.iter().enumerate() {
                let lo = g * block as usize;
                let want = v[lo..(lo + block as usize).min(n as usize)].iter().fold(0u32, |s, x| s.wrapping_add(*x));
                assert_eq!(*got_g, want, "{arch} u32 n={n} block={block} cta {g}");
            }

            if block <= 256 {
                let f: Vec<f32> = (0..n).map(|_| rng.f32(-1.0, 1.0)).collect();
                let din = gpu.alloc(&bytes_f32(&f));
                let dout = gpu.zeros(4 * grid as usize);
                launch(&mut gpu, &m, "reduce_sum_f32", grid, block, &[U64(din), U64(dout), U32(n)]);
                let got = gpu.f32s(dout, grid as usize);
                for (g, got_g) in got.iter().enumerate() {
                    // The same tree as the kernel: s = block/2, /4, ... 1.
                    let mut s: Vec<f32> =
                        (0..block as usize).map(|t| f.get(g * block as usize + t).copied().unwrap_or(0.0)).collect();
                    let mut half = block as usize / 2;
                    while half > 0 {
                        for t in 0..half {
                            s[t] += s[t + half];
                        }
                        half /= 2;
                    }
                    assert_eq!(got_g.to_bits(), s[0].to_bits(), "{arch} f32 n={n} block={block} cta {g}");
                }
            }
        }
    }
}

#[test]
fn warp_shuffle_reduction() {
    for arch in ARCHES {
        let m = module("reduce", arch);
        for &(n, block) in &[(1000u32, 128u32), (64, 32), (3000, 1024), (31, 64)] {
            let grid = n.div_ceil(block);
            let mut rng = Rng(n as u64 + 7);
            let v: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
            let mut gpu = Gpu::new(1 << 20);
            let din = gpu.alloc(&bytes_u32(&v));
            let dtot = gpu.zeros(4);
            launch(&mut gpu, &m, "reduce_sum_shfl_u32", grid, block, &[U64(din), U64(dtot), U32(n)]);
            let want = v.iter().fold(0u32, |s, x| s.wrapping_add(*x));
            assert_eq!(gpu.u32s(dtot, 1)[0], want, "{arch} n={n} block={block}");
        }
    }
}

#[test]
fn histogram_with_shared_and_global_atomics() {
    for arch in ARCHES {
        let m = module("histogram", arch);
        for &(n, grid, block) in &[(10_000u32, 4u32, 256u32), (999, 3, 100), (5, 1, 32), (70_000, 8, 1024)] {
            let mut rng = Rng(n as u64 * 3);
            // A skewed distribution: many collisions on a few bins.
            let data: Vec<u8> =
                (0..n).map(|_| if rng.u32().is_multiple_of(4) { 7 } else { (rng.u32() % 256) as u8 }).collect();
            let mut want = [0u32; 256];
            for d in &data {
                want[*d as usize] += 1;
            }
            let mut gpu = Gpu::new(1 << 20);
            let dd = gpu.alloc(&data);
            let bins = gpu.zeros(1024);
            launch(&mut gpu, &m, "histogram256", grid, block, &[U64(dd), U32(n), U64(bins)]);
            assert_eq!(gpu.u32s(bins, 256), want.to_vec(), "{arch} shared n={n}");
            let bins = gpu.zeros(1024);
            launch(&mut gpu, &m, "histogram256_global", n.div_ceil(block), block, &[U64(dd), U32(n), U64(bins)]);
            assert_eq!(gpu.u32s(bins, 256), want.to_vec(), "{arch} global n={n}");
        }
    }
}

#[test]
fn mandelbrot_iteration_counts() {
    for arch in ARCHES {
        let m = module("mandelbrot", arch);
        let (w, h, max_iter) = (67i32, 45i32, 200i32);
        let (x0, y0, dx, dy) = (-2.0f32, -1.2f32, 3.0f32 / 67.0, 2.4f32 / 45.0);
        for &(bx, by) in &[(16u32, 16u32), (8, 4), (32, 3)] {
            let mut gpu = Gpu::new(1 << 20);
            let out = gpu.zeros(4 * (w * h) as usize);
            let out8 = gpu.zeros((w * h) as usize);
            let cfg = LaunchConfig::new([(w as u32).div_ceil(bx), (h as u32).div_ceil(by), 1], [bx, by, 1]);
            launch_cfg(
                &mut gpu,
                &m,
                "mandelbrot",
                cfg,
                &[
                    U64(out),
                    U64(out8),
                    U32(w as u32),
                    U32(h as u32),
                    F32(x0),
                    F32(y0),
                    F32(dx),
                    F32(dy),
                    U32(max_iter as u32),
                ],
            );
            let got = gpu.u32s(out, (w * h) as usize);
            let got8 = gpu.read(out8, (w * h) as usize);
            for py in 0..h {
                for px in 0..w {
                    // The PTX's operations: cx = fma(px, dx, x0); per step y2 = y*y,
                    // test fma(x, x, y2) <= 4, x' = cx + (x*x - y2), y' = fma(x + x, y, cy).
                    let cx = (px as f32).mul_add(dx, x0);
                    let cy = (py as f32).mul_add(dy, y0);
                    let (mut x, mut y, mut it) = (0.0f32, 0.0f32, 0);
                    while it < max_iter {
                        let y2 = y * y;
                        // NaN is outside too, as the PTX's `setp.le` then `@!p bra` has it.
                        let inside = x.mul_add(x, y2) <= 4.0;
                        if !inside {
                            break;
                        }
                        let xt = cx + (x * x - y2);
                        y = (x + x).mul_add(y, cy);
                        x = xt;
                        it += 1;
                    }
                    let i = (py * w + px) as usize;
                    assert_eq!(got[i], it as u32, "{arch} pixel ({px},{py})");
                    assert_eq!(got8[i], it as u8);
                }
            }
        }
    }
}

#[test]
fn f64_arithmetic_and_atomic_add() {
    for arch in ARCHES {
        let m = module("f64_math", arch);
        let n = 300u32;
        let mut rng = Rng(99);
        let a: Vec<f64> = (0..n).map(|_| rng.f32(-100.0, 100.0) as f64 * 1.000_000_1).collect();
        let b: Vec<f64> = (0..n).map(|i| if i == 5 { a[5] } else { rng.f32(-100.0, 100.0) as f64 / 3.0 }).collect();
        let c = 0.125f64;
        let mut gpu = Gpu::new(1 << 20);
        let (da, db) = (gpu.alloc(&bytes_f64(&a)), gpu.alloc(&bytes_f64(&b)));
        let dy = gpu.zeros(32 * n as usize);
        launch(&mut gpu, &m, "f64_ops", n.div_ceil(96), 96, &[U64(da), U64(db), U64(dy), F64(c), U32(n)]);
        let y = gpu.f64s(dy, 4 * n as usize);
        for i in 0..n as usize {
            let p = a[i].mul_add(b[i], c);
            assert_eq!(y[4 * i].to_bits(), p.abs().sqrt().to_bits(), "{arch} sqrt.rn.f64 i={i}");
            assert_eq!(y[4 * i + 1].to_bits(), (a[i] / b[i]).to_bits(), "{arch} div.rn.f64 i={i}");
            assert_eq!(y[4 * i + 2].to_bits(), (a[i].min(b[i]) - a[i].max(b[i])).to_bits(), "{arch} min/max.f64 i={i}");
            assert_eq!(y[4 * i + 3].to_bits(), (1.0 / a[i]).to_bits(), "{arch} rcp.rn.f64 i={i}");
        }
        let dout = gpu.zeros(8);
        launch(&mut gpu, &m, "f64_dot", 3, 128, &[U64(da), U64(db), U64(dout), U32(n)]);
        // atom.add.f64 order is the model's thread order (hardware's differs): compare with a
        // sum in index order, relative 1e-12.
        let want: f64 = (0..n as usize).map(|i| a[i] * b[i]).sum();
        let got = gpu.f64s(dout, 1)[0];
        assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{arch} dot {got} vs {want}");
    }
}

/// Whether `r` is `a / b` rounded toward zero (checked exactly in f64: r*b is exact).
fn is_div_rz(a: f32, b: f32, r: f32) -> bool {
    let exact = a as f64 / b as f64;
    let (lo, hi) = if r >= 0.0 {
        (r as f64, f32::from_bits(r.to_bits() + 1) as f64)
    } else {
        (f32::from_bits(r.to_bits() + 1) as f64, r as f64)
    };
    let rem = |q: f64| (a as f64 - q * b as f64) * b.signum() as f64; // > 0: true quotient above q
    if r >= 0.0 {
        rem(lo) >= 0.0 && rem(hi) < 0.0 && lo <= exact + exact.abs() * 1e-9
    } else {
        rem(hi) <= 0.0 && rem(lo) > 0.0
    }
}

fn ulps(a: f32, b: f32) -> u32 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

#[test]
fn f32_division_roots_and_transcendentals() {
    for arch in ARCHES {
        let m = module("f32_math", arch);
        let n = 500u32;
        let mut rng = Rng(1234);
        let pi = std::f32::consts::PI;
        let a: Vec<f32> = (0..n).map(|_| rng.f32(-pi, pi)).collect();
        let b: Vec<f32> = (0..n)
            .map(|_| {
                let v = rng.f32(0.01, 50.0);
                if rng.u32() & 1 == 0 {
                    v
                } else {
                    -v
                }
            })
            .collect();
        let mut gpu = Gpu::new(1 << 20);
        let (da, db) = (gpu.alloc(&bytes_f32(&a)), gpu.alloc(&bytes_f32(&b)));
        let dy = gpu.zeros(4 * 12 * n as usize);
        launch(&mut gpu, &m, "f32_math", n.div_ceil(200), 200, &[U64(da), U64(db), U64(dy), U32(n)]);
        let y = gpu.f32s(dy, 12 * n as usize);
        for i in 0..n as usize {
            let (x, z) = (a[i], b[i]);
            let o = &y[12 * i..12 * i + 12];
            assert_eq!(o[0].to_bits(), (x / z).to_bits(), "{arch} div.rn i={i}");
            // div.approx.f32: max 2 ulp over the documented range.
            assert!(ulps(o[1], x / z) <= 2, "{arch} div.approx {} vs {}", o[1], x / z);
            assert!(is_div_rz(x, z, o[2]), "{arch} div.rz {x}/{z} gave {}", o[2]);
            assert_eq!(o[3].to_bits(), x.abs().sqrt().to_bits(), "{arch} sqrt.rn");
            // sqrt.approx.f32: relative error 2^-23.
            assert!(
                ((o[4] as f64 - (x.abs() as f64).sqrt()).abs()) <= (x.abs() as f64).sqrt() * 2f64.powi(-23) + 1e-30,
                "{arch} sqrt.approx"
            );
            // rsqrt.approx.f32: relative error 2^-22.9.
            let rs = 1.0 / ((x.abs() + 1.0) as f64).sqrt();
            assert!((o[5] as f64 - rs).abs() <= rs * 2f64.powf(-22.9), "{arch} rsqrt.approx");
            assert_eq!(o[6].to_bits(), (1.0 / z).to_bits(), "{arch} rcp.rn");
            // sin/cos.approx.f32: max absolute error 2^-20.9 in -pi..pi.
            assert!((o[7] as f64 - (x as f64).sin()).abs() <= 2f64.powf(-20.9), "{arch} sin.approx({x})");
            assert!((o[8] as f64 - (x as f64).cos()).abs() <= 2f64.powf(-20.9), "{arch} cos.approx({x})");
            // ex2.approx.f32: max 2 ulp (relative 2^-22 here).
            let e = (x as f64).exp2();
            assert!((o[9] as f64 - e).abs() <= e * 2f64.powi(-22), "{arch} ex2.approx({x})");
            // lg2.approx.f32: max absolute error 2^-22.6 for x in 0.5..2, relative 2^-22 else.
            let l = ((x.abs() + 1.0) as f64).log2();
            assert!((o[10] as f64 - l).abs() <= 2f64.powf(-22.6).max(l.abs() * 2f64.powi(-22)), "{arch} lg2.approx");
            let mm = x.min(z) * 2.0 + x.max(z) - z.abs();
            assert_eq!(o[11].to_bits(), mm.to_bits(), "{arch} min/max/abs");
        }

        // IEEE-exact operations, including subnormal, huge and tiny operands.
        let specials = [0.0f32, -0.0, 1.0, -1.0, 3.0, 1e-40, -1e-38, 3.4e38, 1e-30, 7.0, f32::INFINITY];
        let mut xs = Vec::new();
        let mut ys = Vec::new();
        let mut zs = Vec::new();
        for &p in &specials {
            for &q in &specials {
                xs.push(p);
                ys.push(if q == 0.0 { 2.5 } else { q });
                zs.push(rng.f32(-1.0, 1.0));
            }
        }
        for _ in 0..200 {
            xs.push(rng.f32(-1e6, 1e6));
            ys.push(rng.f32(-1e-3, 1e3));
            zs.push(rng.f32(-1e3, 1e3));
        }
        let n = xs.len() as u32;
        let (da, db, dc) = (gpu.alloc(&bytes_f32(&xs)), gpu.alloc(&bytes_f32(&ys)), gpu.alloc(&bytes_f32(&zs)));
        let dy = gpu.zeros(16 * n as usize);
        launch(&mut gpu, &m, "f32_exact", n.div_ceil(64), 64, &[U64(da), U64(db), U64(dc), U64(dy), U32(n)]);
        let y = gpu.f32s(dy, 4 * n as usize);
        let canon = |v: f32| if v.is_nan() { 0x7FFF_FFFF } else { v.to_bits() };
        for i in 0..n as usize {
            let (p, q, r) = (xs[i], ys[i], zs[i]);
            assert_eq!(canon(y[4 * i]), canon(p + q), "{arch} {p} + {q}");
            assert_eq!(canon(y[4 * i + 1]), canon(p * q), "{arch} {p} * {q}");
            assert_eq!(canon(y[4 * i + 2]), canon(p.mul_add(q, r)), "{arch} fma({p}, {q}, {r})");
            assert_eq!(canon(y[4 * i + 3]), canon(p / q), "{arch} {p} / {q}");
        }
    }
}

#[test]
fn flush_to_zero_forms() {
    // `-fgpu-flush-denormals-to-zero` makes clang emit add/mul/fma/div `.ftz.f32`: subnormal
    // inputs and results become zero of the same sign.
    let ftz = |x: f32| if x.is_subnormal() { 0.0f32.copysign(x) } else { x };
    for arch in ARCHES {
        let text = ptx_with("f32_math", arch, &["-fgpu-flush-denormals-to-zero"]);
        assert!(text.contains("add.ftz.f32") && text.contains("fma.rn.ftz.f32"), "{arch}: clang emitted no .ftz forms");
        let m = Module::parse(&text).unwrap_or_else(|e| panic!("{arch}: {e}"));
        let sub = f32::from_bits(0x0000_1234);
        let xs = [sub, -sub, 1e-38, 1.5e-38, 3.0, -2e-39, 1e-20, f32::MIN_POSITIVE];
        let ys = [1.0f32, 2.0, 0.5, -0.75, sub, 4.0, 1e-19, 0.5];
        let zs = [0.0f32, -sub, 1e-38, -1.2e-38, 1.0, 0.0, -1e-39, 0.0];
        let n = xs.len() as u32;
        let mut gpu = Gpu::new(1 << 16);
        let (da, db, dc) = (gpu.alloc(&bytes_f32(&xs)), gpu.alloc(&bytes_f32(&ys)), gpu.alloc(&bytes_f32(&zs)));
        let dy = gpu.zeros(16 * n as usize);
        launch(&mut gpu, &m, "f32_exact", 1, 32, &[U64(da), U64(db), U64(dc), U64(dy), U32(n)]);
        let y = gpu.f32s(dy, 4 * n as usize);
        for i in 0..n as usize {
            let (p, q, r) = (ftz(xs[i]), ftz(ys[i]), ftz(zs[i]));
            assert_eq!(y[4 * i].to_bits(), ftz(p + q).to_bits(), "{arch} add.ftz {p} {q}");
            assert_eq!(y[4 * i + 1].to_bits(), ftz(p * q).to_bits(), "{arch} mul.ftz {p} {q}");
            assert_eq!(y[4 * i + 2].to_bits(), ftz(p.mul_add(q, r)).to_bits(), "{arch} fma.ftz {p} {q} {r}");
            assert_eq!(y[4 * i + 3].to_bits(), ftz(p / q).to_bits(), "{arch} div.ftz {p} {q}");
        }
    }
}

/// f64 to f32 rounded toward zero.
fn f64_to_f32_rz(y: f64) -> f32 {
    let r = y as f32;
    if r.is_infinite() && y.is_finite() {
        return if y > 0.0 { f32::MAX } else { f32::MIN };
    }
    if (r as f64).abs() > y.abs() {
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}

#[test]
fn conversions_match_rust_casts() {
    for arch in ARCHES {
        let m = module("convert", arch);
        let mut rng = Rng(77);
        let mut f: Vec<f32> = vec![
            2.5,
            -2.5,
            3.5,
            0.5,
            -0.5,
            1e10,
            -1e10,
            3e9,
            f32::NAN,
            f32::INFINITY,
            -f32::INFINITY,
            0.75,
            1.0,
            16777217.0,
        ];
        let mut d: Vec<f64> = vec![
            1e300,
            -1e300,
            1.0 + 1e-12,
            -(1.0 + 1e-12),
            9.3e18,
            -9.3e18,
            2.5,
            1e-320,
            0.1,
            3.4e38 * 1.0000001,
            -7.0,
            1.5e19,
            12345.678,
            0.0,
        ];
        let mut s: Vec<i32> =
            vec![0, -1, 127, 128, -129, 65535, 65536, i32::MIN, i32::MAX, 16_777_217, -16_777_217, 255, 1 << 30, -300];
        for _ in 0..150 {
            f.push(rng.f32(-1e6, 1e6));
            d.push(rng.f32(-1e6, 1e6) as f64 * 1.37e3);
            s.push(rng.u32() as i32);
        }
        let n = f.len() as u32;
        let mut gpu = Gpu::new(1 << 20);
        let (df, dd, ds) = (
            gpu.alloc(&bytes_f32(&f)),
            gpu.alloc(&bytes_f64(&d)),
            gpu.alloc(&bytes_u32(&s.iter().map(|v| *v as u32).collect::<Vec<_>>())),
        );
        let dout = gpu.zeros(8 * 16 * n as usize);
        launch(&mut gpu, &m, "conversions", n.div_ceil(40), 40, &[U64(df), U64(dd), U64(ds), U64(dout), U32(n)]);
        let out = gpu.u64s(dout, 16 * n as usize);
        for i in 0..n as usize {
            let (x, y, v) = (f[i], d[i], s[i]);
            let o = &out[16 * i..16 * i + 16];
            // PTX float-to-int conversions saturate and send NaN to 0, as Rust's `as` does.
            let want: [i64; 16] = [
                x as i32 as i64,
                (if x < 0.0 { -x } else { x }) as u32 as i64,
                y as i64,
                x.round_ties_even() as i32 as i64,
                x.floor() as i32 as i64,
                x.ceil() as i32 as i64,
                v as i8 as i64,
                v as u16 as i64,
                (v as f32).to_bits() as i64,
                (x as f64).to_bits() as i64,
                (y as f32).to_bits() as i64,
                f64_to_f32_rz(y).to_bits() as i64,
                (v as u32 as f32).to_bits() as i64,
                ((v as i64) as f64 * 3.0).to_bits() as i64,
                (if x.is_nan() { 0.0f32 } else { x.clamp(0.0, 1.0) }).to_bits() as i64,
                (if y < 0.0 { -y } else { y }) as u64 as i64,
            ];
            for k in 0..16 {
                let got = o[k] as i64;
                if k == 9 && x.is_nan() {
                    assert!(f64::from_bits(got as u64).is_nan());
                    continue;
                }
                assert_eq!(got, want[k], "{arch} slot {k} x={x} y={y} v={v}");
            }
        }
    }
}

/// PTX `prmt` default mode, from the ISA's description: selector nibble k picks byte
/// `sel & 7` of {b, a} (a is bytes 0..3), bit 3 replicates that byte's sign.
fn prmt_ref(a: u32, b: u32, c: u32) -> u32 {
    let bytes = ((b as u64) << 32 | a as u64).to_le_bytes();
    let mut d = [0u8; 4];
    for (k, byte) in d.iter_mut().enumerate() {
        let sel = (c >> (4 * k)) & 0xF;
        let v = bytes[(sel & 7) as usize];
        *byte = if sel & 8 != 0 {
            if v & 0x80 != 0 {
                0xFF
            } else {
                0
            }
        } else {
            v
        };
    }
    u32::from_le_bytes(d)
}

#[test]
fn integer_operations() {
    for arch in ARCHES {
        let m = module("convert", arch);
        let mut rng = Rng(4242);
        let mut a: Vec<i32> = vec![7, -7, 7, -7, 0, i32::MAX, i32::MIN + 1, 1 << 31 >> 1, -1, 123456789];
        let mut b: Vec<i32> = vec![2, 2, -2, -2, 5, -1, 3, 0, 31, 37];
        for _ in 0..200 {
            a.push(rng.u32() as i32);
            b.push(if rng.u32().is_multiple_of(5) { (rng.u32() % 40) as i32 } else { rng.u32() as i32 });
        }
        let n = a.len() as u32;
        let mut gpu = Gpu::new(1 << 20);
        let da = gpu.alloc(&bytes_u32(&a.iter().map(|v| *v as u32).collect::<Vec<_>>()));
        let db = gpu.alloc(&bytes_u32(&b.iter().map(|v| *v as u32).collect::<Vec<_>>()));
        let dout = gpu.zeros(4 * 16 * n as usize);
        launch(&mut gpu, &m, "int_ops", n.div_ceil(50), 50, &[U64(da), U64(db), U64(dout), U32(n)]);
        let out = gpu.u32s(dout, 16 * n as usize);
        for i in 0..n as usize {
            let (x, y) = (a[i], b[i]);
            let (ux, uy) = (x as u32, y as u32);
            let want: [u32; 16] = [
                if y != 0 { x.wrapping_div(y) as u32 } else { 0 },
                if y != 0 { x.wrapping_rem(y) as u32 } else { 0 },
                ux.checked_div(uy).unwrap_or(0),
                if uy != 0 { ux % uy } else { 0 },
                x.min(y) as u32,
                ux.max(uy),
                ((x as i64 * y as i64) >> 32) as u32,
                ((ux as u64 * uy as u64) >> 32) as u32,
                ux.count_ones(),
                ux.leading_zeros(),
                ux.reverse_bits(),
                ux.rotate_right(uy & 31),
                (x >> (uy & 31)) as u32,
                (ux >> 5) & 0x3FF,
                prmt_ref(ux, uy, 0x3210 ^ (ux & 0x7777)),
                x.wrapping_abs() as u32,
            ];
            assert_eq!(&out[16 * i..16 * i + 16], &want, "{arch} x={x} y={y}");
        }

        let mut a64: Vec<i64> = vec![7, -7, i64::MAX, i64::MIN + 5, -1, 1 << 40];
        let mut b64: Vec<i64> = vec![-2, 2, 3, 7, 0, -3];
        for _ in 0..100 {
            a64.push(rng.next() as i64);
            b64.push(if rng.u32().is_multiple_of(3) { (rng.next() >> 40) as i64 } else { rng.next() as i64 });
        }
        let n = a64.len() as u32;
        let (da, db) = (gpu.alloc(&bytes_i64(&a64)), gpu.alloc(&bytes_i64(&b64)));
        let dout = gpu.zeros(32 * n as usize);
        launch(&mut gpu, &m, "int64_ops", n.div_ceil(32), 32, &[U64(da), U64(db), U64(dout), U32(n)]);
        let out = gpu.u64s(dout, 4 * n as usize);
        for i in 0..n as usize {
            let (x, y) = (a64[i], b64[i]);
            let want = [
                if y != 0 { x.wrapping_div(y) } else { 0 } as u64,
                if y != 0 { x.wrapping_rem(y) } else { 0 } as u64,
                if y != 0 { (x as u64) / (y as u64) } else { 0 },
                ((x as u64 as u128 * y as u64 as u128) >> 64) as u64,
            ];
            assert_eq!(&out[4 * i..4 * i + 4], &want, "{arch} x={x} y={y}");
        }
    }
}

#[test]
fn votes_ballots_and_shuffles() {
    for arch in ARCHES {
        let m = module("warp", arch);
        for &(n, block) in &[(64u32, 32u32), (200, 96), (100, 48), (37, 64), (1000, 1024)] {
            let grid = n.div_ceil(block);
            let mut rng = Rng(n as u64 * 17 + block as u64);
            let v_in: Vec<u32> =
                (0..n).map(|_| if rng.u32().is_multiple_of(3) { 150 } else { rng.u32() % 200 }).collect();
            let mut gpu = Gpu::new(1 << 20);
            let din = gpu.alloc(&bytes_u32(&v_in));
            let dout = gpu.zeros(32 * n as usize);
            launch(&mut gpu, &m, "warp_ops", grid, block, &[U64(din), U64(dout), U32(n)]);
            let out = gpu.u32s(dout, 8 * n as usize);
            for cta in 0..grid {
                for w in 0..block.div_ceil(32) {
                    let present = (block - 32 * w).min(32);
                    let gid = |lane: u32| cta * block + 32 * w + lane;
                    let val = |lane: u32| if gid(lane) < n { v_in[gid(lane) as usize] } else { 0 };
                    let mask: u32 = if present == 32 { !0 } else { (1 << present) - 1 };
                    let ballot = (0..present).filter(|l| val(*l) & 1 != 0).fold(0u32, |m, l| m | 1 << l);
                    let big = (0..present).filter(|l| val(*l) > 100).count() as u32;
                    for lane in 0..present {
                        let i = gid(lane);
                        if i >= n {
                            continue;
                        }
                        let o = &out[8 * i as usize..8 * i as usize + 8];
                        let ctx = format!("{arch} n={n} block={block} thread {i}");
                        assert_eq!(o[0], ballot, "ballot {ctx}");
                        assert_eq!(o[1], (ballot == mask) as u32, "all {ctx}");
                        assert_eq!(o[2], (ballot != 0) as u32, "any {ctx}");
                        assert_eq!(o[3], (big == 0 || big == present) as u32, "uni {ctx}");
                        assert_eq!(o[4], if lane >= 3 { val(lane - 3) } else { val(lane) }, "shfl.up {ctx}");
                        // Reads from lanes past a partial warp are undefined on hardware: skip.
                        let down = lane + 5;
                        if down <= 31 && down < present {
                            assert_eq!(o[5], val(down), "shfl.down {ctx}");
                        } else if down > 31 {
                            assert_eq!(o[5], val(lane), "shfl.down clamp {ctx}");
                        }
                        if lane ^ 6 < present {
                            assert_eq!(o[6], val(lane ^ 6), "shfl.bfly {ctx}");
                        }
                        if val(lane) & 31 < present {
                            assert_eq!(o[7], val(val(lane) & 31), "shfl.idx {ctx}");
                        }
                    }
                }
            }
        }

        // Segments of 8 lanes: butterfly sums and shfl.up clamped at each segment's start.
        let n = 96u32;
        let mut rng = Rng(5);
        let v: Vec<f32> = (0..n).map(|_| rng.f32(-4.0, 4.0)).collect();
        let mut gpu = Gpu::new(1 << 20);
        let din = gpu.alloc(&bytes_f32(&v));
        let dout = gpu.zeros(8 * n as usize);
        launch(&mut gpu, &m, "warp_segments", n / 32, 32, &[U64(din), U64(dout)]);
        let out = gpu.f32s(dout, 2 * n as usize);
        let mut s = v.clone();
        for off in [4usize, 2, 1] {
            let prev = s.clone();
            for i in 0..n as usize {
                s[i] = prev[i] + prev[i ^ off];
            }
        }
        for i in 0..n as usize {
            assert_eq!(out[2 * i].to_bits(), s[i].to_bits(), "{arch} segment sum lane {i}");
            let up = if i % 8 == 0 { v[i] } else { v[i - 1] };
            assert_eq!(out[2 * i + 1].to_bits(), up.to_bits(), "{arch} segment up lane {i}");
        }
    }
}

#[test]
fn atomics_of_every_kind() {
    for arch in ARCHES {
        let m = module("warp", arch);
        for &(n, grid, block) in &[(100u32, 2u32, 64u32), (1000, 5, 256), (7, 3, 32)] {
            let init: [u32; 12] = [3, 5, 1000, 0xFFFF_FFFF, 0x10, 0xABCD, 2, 4, 0, 0, 0, 0];
            let mut gpu = Gpu::new(1 << 20);
            let g = gpu.alloc(&bytes_u32(&init));
            let gs = gpu.alloc(&bytes_u32(&[100, 1]));
            let g64 = gpu.alloc(&7u64.to_le_bytes());
            let gf = gpu.alloc(&1.0f32.to_le_bytes());
            launch(&mut gpu, &m, "atomics", grid, block, &[U64(g), U64(gs), U64(g64), U64(gf), U32(n)]);
            let live = n.min(grid * block);
            let is: Vec<u32> = (0..live).collect();
            let mut want = init;
            want[0] = is.iter().fold(init[0], |s, i| s.wrapping_add(*i));
            want[1] = is.iter().map(|i| i * 7 % 101).fold(init[1], u32::max);
            want[2] = is.iter().map(|i| i * 13 % 97 + 3).fold(init[2], u32::min);
            want[3] = is.iter().fold(init[3], |s, i| s & (!(1u32 << (i % 32)) | 1));
            want[4] = is.iter().fold(init[4], |s, i| s | 1 << (i % 32));
            want[5] = is.iter().fold(init[5], |s, i| s ^ i);
            want[6] = is.iter().fold(init[6], |o, _| if o >= 16 { 0 } else { o + 1 });
            want[7] = is.iter().fold(init[7], |o, _| if o == 0 || o > 9 { 9 } else { o - 1 });
            // atom.cas chains only in the model's deterministic order (thread order); on hardware
            // any value in 1..=n is possible.
            want[8] = live;
            want[9] = live;
            want[10] = live - 1;
            let ctas_with_work = live.div_ceil(block);
            want[11] = 5 * ctas_with_work;
            assert_eq!(gpu.u32s(g, 12), want.to_vec(), "{arch} n={n} grid={grid} block={block}");
            let s = gpu.u32s(gs, 2);
            assert_eq!(s[0] as i32, is.iter().map(|i| *i as i32 - 50).fold(100, i32::min));
            assert_eq!(s[1] as i32, is.iter().map(|i| -(*i as i32)).fold(1, i32::max));
            assert_eq!(gpu.u64s(g64, 1)[0], is.iter().fold(7u64, |s, i| s.wrapping_add((*i as u64) << 33)));
            assert_eq!(gpu.f32s(gf, 1)[0], 1.0 + 0.5 * live as f32);
        }
    }
}

#[test]
fn global_memory_faults_name_the_instruction() {
    let m = module("vector_add", "sm_90");
    let mut gpu = Gpu::new(4096);
    let a = gpu.zeros(64);
    // `b` points outside the flat memory: the load of b[i] faults.
    let e = ptx::launch(
        &m,
        "vector_add_u32",
        &LaunchConfig::linear(1, 16),
        &m.kernel("vector_add_u32")
            .unwrap()
            .pack_params(&[&a.to_le_bytes(), &0xDEAD_0000u64.to_le_bytes(), &a.to_le_bytes(), &16u32.to_le_bytes()])
            .unwrap(),
        &mut gpu.mem,
        &Limits::default(),
    )
    .unwrap_err();
    match e {
        ptx::PtxError::Exec { error: ptx::ExecError::Fault(f), instruction, line, .. } => {
            assert_eq!(f.va, 0xDEAD_0000);
            assert!(instruction.starts_with("ld.global"), "{instruction}");
            assert!(line > 0);
        }
        other => panic!("expected an MMU fault, got {other}"),
    }
}

/// Instructions per second of the interpreter on a 128x128x128 tiled matrix multiply, its
/// result checked bit for bit against the CPU (`cargo xtask bench` runs it in release with
/// `--nocapture` for the figure; here it is a test like any other).
#[test]
fn bench_matmul_instructions_per_second() {
    let m = module("matmul", "sm_90");
    let size = 128usize;
    let mut rng = Rng(1);
    let a: Vec<f32> = (0..size * size).map(|_| rng.f32(-1.0, 1.0)).collect();
    let mut gpu = Gpu::new(1 << 20);
    let da = gpu.alloc(&bytes_f32(&a));
    let db = gpu.alloc(&bytes_f32(&a));
    let dc = gpu.zeros(4 * size * size);
    let cfg = LaunchConfig::new([(size / 16) as u32, (size / 16) as u32, 1], [16, 16, 1]);
    let start = std::time::Instant::now();
    let stats = launch_cfg(
        &mut gpu,
        &m,
        "matmul_tiled",
        cfg,
        &[U64(da), U64(db), U64(dc), U32(size as u32), U32(size as u32), U32(size as u32)],
    );
    let secs = start.elapsed().as_secs_f64();
    let c = gpu.f32s(dc, size * size);
    for r in 0..size {
        for col in 0..size {
            let acc = (0..size).fold(0.0f32, |acc, k| a[r * size + k].mul_add(a[k * size + col], acc));
            assert_eq!(c[r * size + col].to_bits(), acc.to_bits(), "({r},{col})");
        }
    }
    println!(
        "matmul {size}x{size}x{size}: {} instructions in {secs:.3} s = {:.1} M instructions/s",
        stats.instructions,
        stats.instructions as f64 / secs / 1e6
    );
}

#[test]
fn per_thread_local_arrays() {
    for arch in ARCHES {
        let m = module("local_array", arch);
        for &(n, block) in &[(500u32, 96u32), (33, 32)] {
            let mut rng = Rng(n as u64 + 3);
            let v: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
            let mut gpu = Gpu::new(1 << 20);
            let din = gpu.alloc(&bytes_u32(&v));
            let dout = gpu.zeros(4 * n as usize);
            launch(&mut gpu, &m, "local_array", n.div_ceil(block), block, &[U64(din), U64(dout), U32(n)]);
            let out = gpu.u32s(dout, n as usize);
            for i in 0..n as usize {
                let x = v[i];
                let buf: Vec<u32> = (0..16u32).map(|k| x.wrapping_mul(k + 1).wrapping_add(k)).collect();
                let want = (0..16u32)
                    .fold(0u32, |acc, k| acc.wrapping_mul(31).wrapping_add(buf[(x.wrapping_add(7 * k) & 15) as usize]));
                assert_eq!(out[i], want, "{arch} thread {i}");
            }
        }
    }
}

#[test]
fn calls_to_device_functions() {
    let mix = |a: u32, b: u32| a.wrapping_mul(2_654_435_761) ^ (b >> 3);
    for arch in ARCHES {
        let m = module("calls", arch);
        for &(n, block) in &[(100u32, 32u32), (77, 50)] {
            let mut rng = Rng(n as u64);
            let a: Vec<f32> = (0..n).map(|_| rng.f32(0.0, 100.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.f32(-100.0, 100.0)).collect();
            let mut gpu = Gpu::new(1 << 20);
            let (da, db) = (gpu.alloc(&bytes_f32(&a)), gpu.alloc(&bytes_f32(&b)));
            let dout = gpu.zeros(4 * n as usize);
            let dpairs = gpu.zeros(8 * n as usize);
            let dcount = gpu.alloc(&bytes_u32(&(0..n).collect::<Vec<_>>()));
            launch(
                &mut gpu,
                &m,
                "calls",
                n.div_ceil(block),
                block,
                &[U64(da), U64(db), U64(dout), U64(dpairs), U64(dcount), U32(n)],
            );
            let out = gpu.f32s(dout, n as usize);
            let pairs = gpu.u32s(dpairs, 2 * n as usize);
            let count = gpu.u32s(dcount, n as usize);
            for i in 0..n as usize {
                // lerp3: fma(b - a, t, a) + (float)mix((unsigned)a, 7), as the PTX computes it.
                let want = (b[i] - a[i]).mul_add(0.25, a[i]) + mix(a[i] as u32, 7) as f32;
                assert_eq!(out[i].to_bits(), want.to_bits(), "{arch} out[{i}]");
                assert_eq!(count[i], i as u32 + 1);
                assert_eq!([pairs[2 * i], pairs[2 * i + 1]], [mix(i as u32, n), mix(n, i as u32)], "{arch} pairs[{i}]");
            }
        }
    }
}

/// PTX is input: real compiler output with single-character damage must parse to a module or a
/// typed error, and a module that parses must run to completion or a typed error, never panic.
#[test]
fn damaged_real_ptx_never_panics() {
    let replacements = [';', '{', '}', '%', '[', ']', '0', ' ', ':', ',', '.', '-', '9', 'x', '|', '!'];
    for (file, kernel) in [("reduce", "reduce_sum_shfl_u32"), ("matmul", "matmul_tiled"), ("convert", "int_ops")] {
        let text = ptx(file, "sm_90");
        let chars: Vec<char> = text.chars().collect();
        let mut rng = Rng(text.len() as u64);
        let (mut parsed, mut ran) = (0, 0);
        for _ in 0..1500 {
            let mut damaged = chars.clone();
            let at = (rng.next() % chars.len() as u64) as usize;
            let c = replacements[(rng.next() % replacements.len() as u64) as usize];
            if rng.u32().is_multiple_of(4) {
                damaged.remove(at);
            } else {
                damaged[at] = c;
            }
            let s: String = damaged.into_iter().collect();
            let Ok(m) = Module::parse(&s) else { continue };
            parsed += 1;
            let Some(k) = m.kernel(kernel) else { continue };
            // Pointers into a small memory, sizes small: errors are fine, panics are not.
            let mut params = vec![0u8; k.param_size() as usize];
            for p in k.params() {
                let v: u64 = if p.size == 8 { BASE + 0x100 } else { 8 };
                let n = (p.size as usize).min(8);
                params[p.offset as usize..p.offset as usize + n].copy_from_slice(&v.to_le_bytes()[..n]);
            }
            let mut gpu = Gpu::new(1 << 12);
            let _ = ptx::launch(
                &m,
                kernel,
                &LaunchConfig::new([2, 1, 1], [16, 2, 1]),
                &params,
                &mut gpu.mem,
                &Limits { instruction_budget: 200_000, ..Limits::default() },
            );
            ran += 1;
        }
        assert!(
            parsed > 100 && ran > 50,
            "{file}: too few damaged modules parsed ({parsed}) or ran ({ran}) to test anything"
        );
    }
}

/// The PTX model against native execution of the same kernel source (`tests::native`): the
/// outputs must be the same bytes (the host build contracts floating point as clang's CUDA mode
/// does, so mandelbrot's iteration counts agree too), and the ratio of the model's time to the
/// native time is printed for `cargo xtask bench` (a measurement: nothing is asserted about it).
#[test]
fn ptx_model_against_native_execution_of_the_same_kernels() {
    let (n, w, h, max_iter) = (100_003u32, 256u32, 256u32, 64u32);
    let native = tests::native::run(n, w, h, max_iter);

    let m = module("vector_add", "sm_90");
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let mut best = f64::MAX;
    let mut out = Vec::new();
    for _ in 0..3 {
        let mut gpu = Gpu::new(4 << 20);
        let (da, db) = (gpu.alloc(&bytes_f32(&a)), gpu.alloc(&bytes_f32(&b)));
        let dc = gpu.zeros(4 * n as usize);
        let cfg = LaunchConfig::new([n.div_ceil(256), 1, 1], [256, 1, 1]);
        let start = std::time::Instant::now();
        launch_cfg(&mut gpu, &m, "vector_add_f32", cfg, &[U64(da), U64(db), U64(dc), U32(n)]);
        best = best.min(start.elapsed().as_secs_f64());
        out = gpu.read(dc, 4 * n as usize);
    }
    assert_eq!(tests::native::fnv1a(&out), native.vector_add_f32.checksum, "vector_add_f32: model and native differ");
    let vector_ratio = best * 1e9 / native.vector_add_f32.ns.max(1) as f64;
    let vector_model_ns = best * 1e9;

    let m = module("mandelbrot", "sm_90");
    let mut best = f64::MAX;
    let mut counts = Vec::new();
    for _ in 0..3 {
        let mut gpu = Gpu::new(1 << 20);
        let out = gpu.zeros(4 * (w * h) as usize);
        let out8 = gpu.zeros((w * h) as usize);
        let cfg = LaunchConfig::new([w.div_ceil(16), h.div_ceil(16), 1], [16, 16, 1]);
        let args = [
            U64(out),
            U64(out8),
            U32(w),
            U32(h),
            F32(-2.0),
            F32(-1.25),
            F32(2.5 / w as f32),
            F32(2.5 / h as f32),
            U32(max_iter),
        ];
        let start = std::time::Instant::now();
        launch_cfg(&mut gpu, &m, "mandelbrot", cfg, &args);
        best = best.min(start.elapsed().as_secs_f64());
        counts = gpu.read(out, 4 * (w * h) as usize);
    }
    assert_eq!(tests::native::fnv1a(&counts), native.mandelbrot.checksum, "mandelbrot: model and native differ");
    let mandel_ratio = best * 1e9 / native.mandelbrot.ns.max(1) as f64;
    println!(
        "ptx model vs native: vector_add_f32 over {n} elements {:.0} us vs {:.0} us native = {vector_ratio:.0}x; \
         mandelbrot {w}x{h}, {max_iter} iterations {:.0} us vs {:.0} us native = {mandel_ratio:.0}x (outputs identical)",
        vector_model_ns / 1e3,
        native.vector_add_f32.ns as f64 / 1e3,
        best * 1e6,
        native.mandelbrot.ns as f64 / 1e3,
    );
}
