//! Unified-memory access patterns end to end, in the spirit of NVIDIA's UVM tests: model GPUs
//! booted with the real firmware, managed buffers (`uvm::runtime`) written by the CPU, PTX
//! kernels (clang-19, `payloads/uvm_patterns.cu`) faulting on them, UVM's bottom half servicing
//! the faults (prefetch, eviction under a VRAM budget, thrashing detection), the results read
//! back by the CPU and compared with a CPU computation byte for byte, and the statistics
//! asserted for what the service guarantees:
//!
//! - a random gather through a VRAM budget half its input's size (every family);
//! - a strided update (one word every N pages): faults, migrated bytes and PTE sizes per page
//!   touched, with and without prefetch, and under eviction (every family without prefetch);
//! - a 4x oversubscribed stream of three inputs and one output (every family);
//! - a CPU/GPU ping-pong on one page: thrashing detected, the GPU throttled, then the page
//!   pinned in CPU memory and mapped remotely, migrations stopping (every family);
//! - a 2 MiB block faulted all at once: one migration, one 2 MiB chunk, one 2 MiB PTE;
//! - the same work 4x oversubscribed and fitting in VRAM (the throughput ratio is a figure of
//!   `cargo xtask bench`).
//!
//! Every run also asserts that the model recorded nothing real hardware would reject.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::chip::Chipset;
use nvgpu::platform::Clock;
use nvgpu::rm::InternalSubdevice;
use nvgpu::runtime::{Args, Gpu, GpuConfig, LaunchConfig, Module, Stream, StreamKind};
use sim::{DmaArena, ModelConfig, ModelGpu};
use tests::model_boot::{with_booted, DoorbellSwitch};
use tests::ptx_build::ptx;
use uvm::page_mask::{PAGE_SIZE, VA_BLOCK_SIZE};
use uvm::processor::ProcessorId;
use uvm::runtime::{ManagedBuffer, ManagedConfig, ManagedError, UnifiedMemory};
use uvm::service::UvmStats;
use uvm::va_block::VaBlock;

const GPU0: ProcessorId = ProcessorId::Gpu(0);
const CPU: ProcessorId = ProcessorId::Cpu;
const MIB: usize = 1 << 20;
const PAGE: usize = PAGE_SIZE as usize;
/// Threads per CTA of every launch here.
const CTA: u32 = 256;

/// One booted model GPU with a managed-memory context, the payload module and a stream.
struct Env<'e, 'b, 'm> {
    chip: Chipset,
    model: &'m ModelGpu,
    clock: &'m dyn Clock,
    gpu: &'e mut Gpu<'b, DoorbellSwitch<'m>, DmaArena, dyn Clock + 'm>,
    um: &'e mut UnifiedMemory<'b, DoorbellSwitch<'m>>,
    module: &'e Module,
    stream: &'e Stream,
}

impl Env<'_, '_, '_> {
    fn alloc(&mut self, bytes: usize) -> ManagedBuffer {
        self.um.alloc_managed(self.gpu, bytes).unwrap_or_else(|e| panic!("{:?}: alloc_managed: {e}", self.chip))
    }

    fn write(&mut self, buf: ManagedBuffer, data: &[u32]) {
        self.um.write(self.gpu, buf.va, &bytes(data)).unwrap_or_else(|e| panic!("{:?}: CPU write: {e}", self.chip))
    }

    fn read(&mut self, buf: ManagedBuffer) -> Vec<u32> {
        let mut out = vec![0u8; buf.len];
        self.um.read(self.gpu, buf.va, &mut out).unwrap_or_else(|e| panic!("{:?}: CPU read: {e}", self.chip));
        words(&out)
    }

    /// Launches `kernel` over `threads` threads (CTAs of [`CTA`]) and waits, servicing faults.
    fn run(&mut self, kernel: &str, threads: u32, args: &Args) {
        let f = self.module.function(kernel).expect("function");
        let cfg = LaunchConfig::linear(threads.div_ceil(CTA), CTA);
        self.stream.launch(self.gpu, &f, cfg, args).expect("launch");
        self.um
            .synchronize(self.gpu, self.stream)
            .unwrap_or_else(|e| panic!("{:?}: {kernel}: {e}\nmodel errors: {:?}", self.chip, self.model.errors()));
    }

    fn stats(&self) -> UvmStats {
        self.um.stats()
    }

    /// The blocks of `buf`, in address order.
    fn blocks(&self, buf: ManagedBuffer) -> Vec<&VaBlock> {
        let range = self.um.ctx.va_space.range(buf.va).expect("a managed range");
        (0..buf.len.div_ceil(VA_BLOCK_SIZE as usize))
            .filter_map(|b| range.block(buf.va + b as u64 * VA_BLOCK_SIZE))
            .collect()
    }

    /// Pages of `buf` resident in GPU memory.
    fn gpu_resident(&self, buf: ManagedBuffer) -> usize {
        self.blocks(buf).iter().map(|b| b.resident(GPU0).count()).sum()
    }

    /// Pages of the whole context resident in GPU memory.
    fn gpu_resident_total(&self) -> usize {
        self.um.ctx.va_space.ranges().flat_map(|r| r.blocks()).map(|b| b.resident(GPU0).count()).sum()
    }

    /// The block holding `va` and the page's index in it.
    fn page(&self, va: u64) -> (&VaBlock, usize) {
        let block = self.um.ctx.va_space.range(va).and_then(|r| r.block(va)).expect("a block");
        (block, block.page_index(va).expect("a page"))
    }
}

/// Boots `config`, opens the GPU with replayable faults and a managed-memory context, runs `f`,
/// then asserts that the model recorded no error.
fn session<T>(config: ModelConfig, managed: ManagedConfig, f: impl FnOnce(&mut Env<'_, '_, '_>) -> T) -> T {
    let chip = config.chipset;
    let mut out = None;
    with_booted(config, |model, arena, clock, boot| {
        let info = *boot.static_info().expect("static info");
        let rpc = boot.rpc().expect("rpc");
        let bar = DoorbellSwitch::new(model);
        let cfg = GpuConfig { runs_ptx: true, page_faulting: true, timeout_ms: 60_000, ..GpuConfig::default() };
        let mut gpu = Gpu::new(rpc, &bar, arena, clock, &info, chip, cfg).expect("gpu");
        let mut um = UnifiedMemory::new(&mut gpu, rpc, InternalSubdevice::from_static_info(&info), managed)
            .unwrap_or_else(|e| panic!("{chip:?}: managed memory: {e}\n{:?}", model.errors()));
        let text = ptx("uvm_patterns", tests::ptx_build::native_arch(chip));
        let module = Module::load(&mut gpu, text.as_bytes()).expect("module");
        let stream = gpu.create_stream(rpc, StreamKind::Compute).expect("stream");
        let mut env = Env { chip, model, clock, gpu: &mut gpu, um: &mut um, module: &module, stream: &stream };
        out = Some(f(&mut env));
        let errors = model.take_errors();
        assert!(errors.is_empty(), "{chip:?}: model errors: {errors:?}");
    });
    out.expect("the run finished")
}

fn managed(vram: usize, prefetch: bool) -> ManagedConfig {
    ManagedConfig { vram_bytes: vram as u64, prefetch, ..ManagedConfig::default() }
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Byte-for-byte comparison with a message that names the first difference.
fn check(chip: Chipset, what: &str, got: &[u32], want: &[u32], stats: UvmStats) {
    assert_eq!(got.len(), want.len(), "{chip:?}: {what}: length");
    if got != want {
        let first = got.iter().zip(want).position(|(x, y)| x != y).unwrap_or(0);
        let wrong = got.iter().zip(want).filter(|(x, y)| x != y).count();
        panic!(
            "{chip:?}: {what}: {wrong} of {} words wrong, first at word {first} (got {:#010x}, want {:#010x}); {stats:?}",
            got.len(),
            got[first],
            want[first]
        );
    }
}

/// xorshift64: the tests' fixed-seed pseudo-random numbers.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn random_words(n: usize, seed: u64) -> Vec<u32> {
    let mut x = XorShift::new(seed);
    (0..n).map(|_| x.next() as u32).collect()
}

/// A pseudo-random permutation of `0..n` (Fisher-Yates).
fn permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    let mut x = XorShift::new(seed);
    for i in (1..n).rev() {
        let j = (x.next() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

// ---------------------------------------------------------------------------------------------
// 1. Random gather.

/// `out[i] = in[idx[i]]` with `in` 8 MiB through 4 MiB of VRAM and `idx` the first 16 Ki
/// entries of a pseudo-random permutation of `in`'s indices (distinct words, pages in random
/// order: every warp faults on 32 random pages).
fn random_gather(config: ModelConfig) -> UvmStats {
    let chip = config.chipset;
    let vram = 4 * MIB;
    session(config, managed(vram, true), |env| {
        let (n_in, n_out) = (8 * MIB / 4, 16 * 1024);
        let input = random_words(n_in, 11 + chip as u64);
        let idx: Vec<u32> = permutation(n_in, 5)[..n_out].to_vec();
        let a = env.alloc(n_in * 4);
        let i = env.alloc(n_out * 4);
        let o = env.alloc(n_out * 4);
        env.write(a, &input);
        env.write(i, &idx);
        let args = Args::new().device_ptr(a.va).device_ptr(i.va).device_ptr(o.va).u32(n_out as u32);
        env.run("gather_u32", n_out as u32, &args);
        let s = env.stats();
        let resident = env.gpu_resident_total();
        assert!(resident <= vram / PAGE, "{chip:?}: {resident} pages on the GPU, over the {vram} byte budget");

        let got = env.read(o);
        let want: Vec<u32> = idx.iter().map(|&k| input[k as usize]).collect();
        check(chip, "random gather", &got, &want, s);
        // `in` survived its evictions and migrations.
        let back = env.read(a);
        check(chip, "the gathered input after the run", &back, &input, s);

        let mut touched: Vec<u32> = idx.iter().map(|&k| k / (PAGE as u32 / 4)).collect();
        touched.sort_unstable();
        touched.dedup();
        assert!(s.evictions > 0, "{chip:?}: 8 MiB of input does not fit 4 MiB: {s:?}");
        assert!(s.migrated_to_cpu_bytes > 0, "{chip:?}: evicted pages went back to the CPU before the read: {s:?}");
        assert!(
            s.gpu_faults + s.prefetched_pages >= touched.len() as u64,
            "{chip:?}: each of the {} pages touched was faulted or prefetched: {s:?}",
            touched.len()
        );
        assert!(
            s.migrated_to_gpu_bytes >= (touched.len() * PAGE) as u64,
            "{chip:?}: every page touched came to the GPU at least once: {s:?}"
        );
        assert_eq!(s.cancels, 0, "{chip:?}: {s:?}");
        eprintln!("{chip:?} random gather: {} pages touched, {resident} resident at the end; {s:?}", touched.len());
        s
    })
}

#[test]
fn tu102_random_gather_through_half_its_input_in_vram() {
    random_gather(ModelConfig::rtx2080ti());
}

#[test]
fn ga100_random_gather_through_half_its_input_in_vram() {
    random_gather(ModelConfig::for_chipset(Chipset::GA100));
}

#[test]
fn ga102_random_gather_through_half_its_input_in_vram() {
    random_gather(ModelConfig::rtx3090());
}

#[test]
fn ad102_random_gather_through_half_its_input_in_vram() {
    random_gather(ModelConfig::rtx4090());
}

#[test]
fn gh100_random_gather_through_half_its_input_in_vram() {
    random_gather(ModelConfig::h200());
}

// ---------------------------------------------------------------------------------------------
// 2. Strided update.

/// What one strided run measured.
struct Strided {
    /// After the kernel, before the read-back.
    kernel: UvmStats,
    /// After the read-back.
    read: UvmStats,
    /// Pages of the buffer resident on the GPU after the kernel.
    resident: usize,
    /// Per block of the buffer: (2 MiB PTE, 64 KiB PTE bitmap) after the kernel.
    layouts: Vec<(bool, u32)>,
    touched: usize,
}

/// `buf[i * stride] = buf[i * stride] * K + i` for one word every `stride_pages` pages of a
/// 16 MiB buffer the CPU wrote whole (so every page touched is copied, not zero-filled).
fn strided(stride_pages: usize, vram: usize, prefetch: bool) -> Strided {
    strided_on(ModelConfig::h200(), stride_pages, vram, prefetch)
}

fn strided_on(config: ModelConfig, stride_pages: usize, vram: usize, prefetch: bool) -> Strided {
    let chip = config.chipset;
    session(config, managed(vram, prefetch), |env| {
        let len = 16 * MIB;
        let touched = len / (stride_pages * PAGE);
        let stride = stride_pages * PAGE / 4;
        let init = random_words(len / 4, 9);
        let b = env.alloc(len);
        env.write(b, &init);
        let before = env.stats();
        assert_eq!(
            (before.gpu_faults, before.migrated_to_gpu_bytes),
            (0, 0),
            "{chip:?}: the CPU's writes moved nothing to the GPU"
        );
        let args = Args::new().device_ptr(b.va).u32(stride as u32).u32(touched as u32);
        env.run("strided_update_u32", touched as u32, &args);
        let kernel = env.stats();
        let resident = env.gpu_resident(b);
        let layouts = env
            .blocks(b)
            .iter()
            .map(|blk| blk.gpu(0).map(|g| (g.pte_layout.is_2m, g.pte_layout.big)).unwrap_or_default())
            .collect();
        assert!(env.gpu_resident_total() <= vram / PAGE, "{chip:?}: over the VRAM budget");
        let got = env.read(b);
        let mut want = init;
        for i in 0..touched {
            let at = i * stride;
            want[at] = want[at].wrapping_mul(2654435761).wrapping_add(i as u32);
        }
        check(chip, "strided update", &got, &want, kernel);
        eprintln!("strided every {stride_pages} pages, {vram} bytes of VRAM, prefetch {prefetch}: {kernel:?}");
        Strided { kernel, read: env.stats(), resident, layouts, touched }
    })
}

#[test]
fn strided_updates_fault_and_migrate_the_pages_touched_on_every_family() {
    let chips = [
        ModelConfig::rtx2080ti(),
        ModelConfig::for_chipset(Chipset::GA100),
        ModelConfig::rtx3090(),
        ModelConfig::rtx4090(),
    ];
    for config in chips {
        let chip = config.chipset;
        // One word every 64 KiB, without prefetch: exact results (checked in `strided_on`),
        // one fault and one page copied per page touched, 4 KiB PTEs only.
        let r = strided_on(config, 16, 64 * MIB, false);
        let (s, n) = (r.kernel, r.touched as u64);
        assert_eq!(s.gpu_faults, n, "{chip:?}: one fault per page touched: {s:?}");
        assert_eq!(s.migrated_to_gpu_bytes, n * PAGE_SIZE, "{chip:?}: {s:?}");
        assert_eq!(r.resident, 256, "{chip:?}");
        assert!(r.layouts.iter().all(|&(two_m, big)| !two_m && big == 0), "{chip:?}: {:?}", r.layouts);
        assert_eq!(r.read.migrated_to_cpu_bytes, n * PAGE_SIZE, "{chip:?}: {:?}", r.read);
    }
}

#[test]
fn strided_without_prefetch_faults_and_migrates_exactly_the_pages_touched() {
    // One word every 64 KiB: 256 pages, one per big page, in 8 blocks.
    let r = strided(16, 64 * MIB, false);
    let (s, n) = (r.kernel, r.touched as u64);
    assert_eq!(n, 256);
    // One fault per page (the kernel's read faults; the page is then mapped read-write, so
    // its write does not), all from one CTA: one batch of UVM's 256.
    assert_eq!(s.gpu_faults, n, "one fault per page touched: {s:?}");
    assert_eq!(s.fault_batches, 1, "256 faults of one CTA are one batch: {s:?}");
    assert_eq!(s.migrated_to_gpu_bytes, n * PAGE_SIZE, "each page touched copied once, nothing else: {s:?}");
    assert_eq!((s.prefetched_pages, s.evictions, s.migrated_to_cpu_bytes), (0, 0, 0), "{s:?}");
    assert_eq!(r.resident, 256, "only the pages touched are on the GPU");
    // 4 KiB PTEs only: no big page is fully resident.
    assert!(r.layouts.iter().all(|&(two_m, big)| !two_m && big == 0), "{:?}", r.layouts);
    // The read-back brings exactly those pages back.
    assert_eq!(r.read.migrated_to_cpu_bytes, n * PAGE_SIZE, "{:?}", r.read);
}

#[test]
fn strided_with_prefetch_takes_the_big_page_of_each_fault() {
    // One word every 256 KiB: 64 pages, 8 per block; 8 of 32 big pages per block is below
    // UVM's 51% threshold at every level of the prefetch tree, so only the big pages grow.
    let r = strided(64, 64 * MIB, true);
    let (s, n) = (r.kernel, r.touched as u64);
    assert_eq!(n, 64);
    assert_eq!(s.gpu_faults, n, "{s:?}");
    assert_eq!(s.prefetched_pages, n * 15, "the other 15 pages of each faulted big page: {s:?}");
    assert_eq!(s.migrated_to_gpu_bytes, n * 64 * 1024, "one 64 KiB big page per fault: {s:?}");
    assert_eq!(r.resident, 64 * 16);
    // Each faulted big page is mapped with one 64 KiB PTE: big pages 0, 4, 8, ... of every block.
    let every_fourth = (0..32).step_by(4).fold(0u32, |m, b| m | 1 << b);
    assert!(r.layouts.iter().all(|&l| l == (false, every_fourth)), "{:#x?}", r.layouts);
    assert_eq!(r.read.migrated_to_cpu_bytes, n * 64 * 1024, "{:?}", r.read);
}

#[test]
fn strided_with_prefetch_over_every_big_page_takes_whole_blocks() {
    // One word every 64 KiB: every big page of every block faults in the same batch, so the
    // prefetch tree fills each block and each moves whole: one 2 MiB chunk, one 2 MiB PTE.
    let r = strided(16, 64 * MIB, true);
    let (s, n) = (r.kernel, r.touched as u64);
    assert_eq!(s.gpu_faults, n, "{s:?}");
    assert_eq!(s.prefetched_pages, n * 15, "{s:?}");
    assert_eq!(s.migrated_to_gpu_bytes, 16 << 20, "the whole buffer: {s:?}");
    assert_eq!(r.resident, 16 * MIB / PAGE);
    assert_eq!(r.layouts, vec![(true, 0); 8], "a 2 MiB PTE per block");
}

#[test]
fn strided_through_a_small_vram_budget_refaults_what_it_evicted_and_completes() {
    // 256 pages touched by one CTA, each in its own 64 KiB chunk (16 MiB), through 4 MiB: the
    // batch's later blocks evict its earlier ones before the replay, whose warps fault again;
    // each replay completes the warps whose pages stayed, so the CTA gets through.
    let r = strided(16, 4 * MIB, false);
    let (s, n) = (r.kernel, r.touched as u64);
    assert!(s.evictions > 0, "{s:?}");
    assert!(s.gpu_faults > n, "pages evicted before their warp's replay fault again: {s:?}");
    assert!(s.fault_batches > 1, "{s:?}");
    assert!(s.migrated_to_cpu_bytes > 0, "evictions copied pages back before the read: {s:?}");
    // 64 chunks of 64 KiB with one resident page each at most.
    assert!(r.resident <= 64, "{} pages resident through 4 MiB of 64 KiB chunks", r.resident);
}

// ---------------------------------------------------------------------------------------------
// 3. 4x oversubscription.

/// `out = a + 3b + 5c` over four 4 MiB buffers (16 MiB) through 4 MiB of VRAM.
fn oversubscribed(config: ModelConfig) -> UvmStats {
    let chip = config.chipset;
    let vram = 4 * MIB;
    session(config, managed(vram, true), |env| {
        let len = 4 * MIB;
        let n = len / 4;
        let (a, b, c) = (random_words(n, 1), random_words(n, 2), random_words(n, 3 + chip as u64));
        let (ba, bb, bc, bo) = (env.alloc(len), env.alloc(len), env.alloc(len), env.alloc(len));
        env.write(ba, &a);
        env.write(bb, &b);
        env.write(bc, &c);
        let args = Args::new().device_ptr(ba.va).device_ptr(bb.va).device_ptr(bc.va).device_ptr(bo.va).u32(n as u32);
        env.run("mix3_u32", n as u32, &args);
        let s = env.stats();
        let resident = env.gpu_resident_total();
        assert!(resident <= vram / PAGE, "{chip:?}: {resident} pages on the GPU through {vram} bytes");
        assert!(s.evictions > 0, "{chip:?}: 16 MiB through 4 MiB: {s:?}");
        assert!(s.migrated_to_cpu_bytes > 0, "{chip:?}: evictions copied pages back before the read-back: {s:?}");
        assert!(s.migrated_to_gpu_bytes >= 3 * len as u64, "{chip:?}: the three inputs went to the GPU: {s:?}");
        assert_eq!(s.cancels, 0, "{chip:?}: {s:?}");

        // The read-back copies exactly the output's GPU-resident pages back.
        let out_resident = env.gpu_resident(bo) as u64;
        let got = env.read(bo);
        let r = env.stats();
        let want: Vec<u32> =
            (0..n).map(|i| a[i].wrapping_add(b[i].wrapping_mul(3)).wrapping_add(c[i].wrapping_mul(5))).collect();
        check(chip, "out = a + 3b + 5c", &got, &want, s);
        assert_eq!(
            r.migrated_to_cpu_bytes - s.migrated_to_cpu_bytes,
            out_resident * PAGE_SIZE,
            "{chip:?}: the read-back moved the output's {out_resident} GPU-resident pages: {r:?}"
        );
        assert!(r.migrated_to_cpu_bytes >= len as u64, "{chip:?}: every output page came back: {r:?}");
        assert_eq!(env.gpu_resident(bo), 0, "{chip:?}: the output is all on the CPU after the read");
        // The inputs survived eviction.
        for (buf, want, name) in [(ba, &a, "a"), (bb, &b, "b"), (bc, &c, "c")] {
            let got = env.read(buf);
            check(chip, name, &got, want, r);
        }
        eprintln!("{chip:?} 4x oversubscribed: {resident} pages resident; {s:?}; after the read-back {r:?}");
        s
    })
}

#[test]
fn tu102_four_times_oversubscribed_stream() {
    oversubscribed(ModelConfig::rtx2080ti());
}

#[test]
fn ga100_four_times_oversubscribed_stream() {
    oversubscribed(ModelConfig::for_chipset(Chipset::GA100));
}

#[test]
fn ga102_four_times_oversubscribed_stream() {
    oversubscribed(ModelConfig::rtx3090());
}

#[test]
fn ad102_four_times_oversubscribed_stream() {
    oversubscribed(ModelConfig::rtx4090());
}

#[test]
fn gh100_four_times_oversubscribed_stream() {
    oversubscribed(ModelConfig::h200());
}

// ---------------------------------------------------------------------------------------------
// 4. CPU/GPU ping-pong.

impl Env<'_, '_, '_> {
    /// A CPU access as UVM's CPU fault handler makes it: when thrashing throttles the CPU,
    /// sleep until the throttling period (one nap) ends and try again.
    ///
    /// `uvm::runtime`'s `read`/`write` do not wait yet: the service skips the throttled page,
    /// which stays on the GPU, and the copy then fails with `OutOfRange`. A retry happens only
    /// for exactly that case (the service counted a throttle during the call), so once the
    /// runtime waits by itself this never retries. Returns the retries.
    fn cpu_access(&mut self, buf: ManagedBuffer, mut access: impl FnMut(&mut Self) -> Result<(), ManagedError>) -> u32 {
        let mut retries = 0;
        loop {
            let throttled = self.um.ctx.throttled_faults;
            match access(self) {
                Ok(()) => return retries,
                Err(ManagedError::OutOfRange { va, .. })
                    if self.um.ctx.throttled_faults > throttled && va >= buf.va && va < buf.va + buf.len as u64 =>
                {
                    retries += 1;
                    assert!(retries < 100, "{:?}: the CPU stays throttled", self.chip);
                    let until = self.clock.now_ns() + self.um.ctx.thrashing_config.nap_ns;
                    while self.clock.now_ns() < until {}
                }
                Err(e) => panic!("{:?}: CPU access: {e}", self.chip),
            }
        }
    }
}

#[test]
fn tu102_cpu_gpu_ping_pong_is_detected_throttled_then_pinned_in_cpu_memory() {
    ping_pong(ModelConfig::rtx2080ti());
}

#[test]
fn ga100_cpu_gpu_ping_pong_is_detected_throttled_then_pinned_in_cpu_memory() {
    ping_pong(ModelConfig::for_chipset(Chipset::GA100));
}

#[test]
fn ga102_cpu_gpu_ping_pong_is_detected_throttled_then_pinned_in_cpu_memory() {
    ping_pong(ModelConfig::rtx3090());
}

#[test]
fn ad102_cpu_gpu_ping_pong_is_detected_throttled_then_pinned_in_cpu_memory() {
    ping_pong(ModelConfig::rtx4090());
}

#[test]
fn gh100_cpu_gpu_ping_pong_is_detected_throttled_then_pinned_in_cpu_memory() {
    ping_pong(ModelConfig::h200());
}

/// One page: the CPU writes it, a kernel increments it in place, the CPU reads it back, until
/// thrashing detection pins it and 20 rounds after.
fn ping_pong(config: ModelConfig) {
    let chip = config.chipset;
    session(config, managed(64 * MIB, true), |env| {
        // UVM's defaults: 3 events, each within 500 us of the last, make a page thrash.
        let cfg = env.um.ctx.thrashing_config;
        assert_eq!((cfg.threshold, cfg.lapse_ns, cfg.nap_ns, cfg.pin_threshold), (3, 500_000, 500_000, 10));
        // One page: the CPU writes it, a kernel increments it in place, the CPU reads it back.
        let n = PAGE / 4;
        let buf = env.alloc(PAGE);
        let va = buf.va;
        let mut v = random_words(n, 3);
        let mut cpu_retries = 0;
        let mut pinned_at = None;
        let mut at_pin = UvmStats::default();
        let mut round = 0u32;
        while round < 200 && pinned_at.is_none_or(|p| round < p + 20) {
            let start = env.clock.now_ns();
            cpu_retries += env.cpu_access(buf, |e| e.um.write(e.gpu, va, &bytes(&v)));
            let args = Args::new().device_ptr(va).u32(n as u32);
            env.run("increment_u32", n as u32, &args);
            let mut got = vec![0u8; PAGE];
            cpu_retries += env.cpu_access(buf, |e| e.um.read(e.gpu, va, &mut got));
            let want: Vec<u32> = v.iter().map(|x| x.wrapping_add(1)).collect();
            check(chip, &format!("round {round}: the kernel's increment"), &words(&got), &want, env.stats());
            v = want.iter().map(|x| x.wrapping_mul(3) ^ round).collect();
            if round < 2 {
                // Before thrashing is detected a round is well within one lapse: the model's
                // virtual clock moves 1 us per reading.
                let took = env.clock.now_ns() - start;
                assert!(took < 100_000, "{chip:?}: round {round} takes {took} ns, not under 100 us");
            }

            let (block, page) = env.page(va);
            let remote = block.gpu(0).and_then(|g| g.target(page)).is_some_and(|t| t.target == CPU);
            if remote && pinned_at.is_none() {
                pinned_at = Some(round);
                at_pin = env.stats();
                assert_eq!(block.residency_of(page).iter().collect::<Vec<_>>(), vec![CPU], "pinned in CPU memory");
            }
            if pinned_at.is_some() {
                assert!(remote, "{chip:?}: round {round}: the page stays mapped remotely");
            }
            round += 1;
        }
        let s = env.stats();
        let pinned_at = pinned_at.unwrap_or_else(|| panic!("{chip:?}: never pinned in {round} rounds: {s:?}"));
        eprintln!(
            "{chip:?} ping-pong: pinned after {pinned_at} rounds; {s:?}; {} throttled faults, {cpu_retries} CPU waits",
            env.um.ctx.throttled_faults
        );
        assert!(s.thrashing_events > 0, "{chip:?}: thrashing detected: {s:?}");
        assert!(env.um.ctx.throttled_faults > 0, "{chip:?}: the GPU's faults were throttled: {s:?}");
        assert!(at_pin.migrated_to_gpu_bytes >= 4 * PAGE_SIZE, "{chip:?}: the page ping-ponged first: {at_pin:?}");
        // Once pinned, nothing moves and the GPU no longer faults: 20 more rounds, same counters.
        assert_eq!(
            (s.migrated_to_gpu_bytes, s.migrated_to_cpu_bytes, s.gpu_faults),
            (at_pin.migrated_to_gpu_bytes, at_pin.migrated_to_cpu_bytes, at_pin.gpu_faults),
            "{chip:?}: migrations and faults stopped at the pin (round {pinned_at}): {s:?}"
        );
        // Fewer migrations than rounds: each round would otherwise move the page both ways.
        assert!(s.migrated_to_gpu_bytes < u64::from(round) * PAGE_SIZE, "{s:?}");
    });
}

// ---------------------------------------------------------------------------------------------
// 5. A fully touched 2 MiB block.

/// Column sums of a 256 x 2048 matrix of u32 (2 MiB, one 2 MiB-aligned block) the CPU wrote:
/// the first CTA reads word 0 of every other page (256 pages, one batch of faults).
/// Returns (stats after the kernel, (2 MiB PTE, 64 KiB PTE bitmap, 4 KiB PTEs) of the matrix's
/// block, its pages on the GPU).
fn column_sums(prefetch: bool) -> (UvmStats, (bool, u32, usize), usize) {
    let config = ModelConfig::h200();
    let chip = config.chipset;
    session(config, managed(64 * MIB, prefetch), |env| {
        let (rows, cols) = (256usize, 2048usize);
        let m = random_words(rows * cols, 77);
        let matrix = env.alloc(rows * cols * 4);
        assert_eq!(matrix.va % VA_BLOCK_SIZE, 0, "managed buffers are 2 MiB-aligned");
        let sums = env.alloc(cols * 4);
        env.write(matrix, &m);
        let args = Args::new().device_ptr(matrix.va).u32(rows as u32).u32(cols as u32).device_ptr(sums.va);
        env.run("column_sums_u32", (rows * cols) as u32, &args);
        let s = env.stats();
        let blocks = env.blocks(matrix);
        assert_eq!(blocks.len(), 1);
        let layout = blocks[0].gpu(0).map(|g| g.pte_layout).unwrap_or_default();
        let resident = env.gpu_resident(matrix);
        let got = env.read(sums);
        let want: Vec<u32> =
            (0..cols).map(|c| (0..rows).fold(0u32, |acc, r| acc.wrapping_add(m[r * cols + c]))).collect();
        check(chip, "column sums", &got, &want, s);
        (s, (layout.is_2m, layout.big, layout.small.count()), resident)
    })
}

#[test]
fn a_fully_touched_2mib_block_is_one_migration_and_one_2mib_pte() {
    let (s, layout, resident) = column_sums(true);
    // The first batch names every other page of the block (256 faults, one batch): the big
    // pages all grow whole, so the block moves in that one service (the odd pages prefetched,
    // never faulted), copied once (exactly 2 MiB), and is mapped with one 2 MiB PTE. The
    // second batch is the sums' first touch (its second page prefetched).
    assert_eq!(layout, (true, 0, 0), "one 2 MiB PTE: {s:?}");
    assert_eq!(resident, 512);
    assert_eq!(s.migrated_to_gpu_bytes, 2 << 20, "the block copied once: {s:?}");
    assert_eq!(s.gpu_faults, 256 + 1, "the even pages, then the sums: {s:?}");
    assert_eq!(s.prefetched_pages, 256 + 1, "the odd pages with the even ones, and the sums' second page: {s:?}");
    assert_eq!(s.fault_batches, 2, "the matrix in one batch, the sums in another: {s:?}");
    assert_eq!(s.evictions, 0);

    // Without prefetch the odd pages fault later (from CTA 1024 on, column 1024): two waves of
    // 256 faults in 64 KiB chunks. Those chunks come out of one root chunk in order, so once the
    // block is all there its mapping merges into a 2 MiB PTE too (UVM merges eagerly).
    let (n, layout, resident) = column_sums(false);
    assert_eq!(resident, 512);
    assert_eq!(layout.2, 0, "no 4 KiB PTE in the fully resident block: {layout:?}");
    assert_eq!(n.migrated_to_gpu_bytes, 2 << 20, "{n:?}");
    assert!(n.gpu_faults > 512, "every page of the matrix faulted, then the sums: {n:?}");
    assert!(n.fault_batches >= 4, "two waves of the matrix, and the sums': {n:?}");
    assert_eq!(n.prefetched_pages, 0, "{n:?}");
}

#[test]
fn a_2mib_block_streamed_in_order_arrives_in_growing_prefetches() {
    // `out[i] = in[i]`: a CTA reads 1 KiB, so faults come one page at a time. Each fault's
    // prefetch doubles what the block holds on the GPU (the 51% rule on the tree); the block is
    // still copied exactly once, in a handful of services, and mapped without any 4 KiB PTE.
    let config = ModelConfig::h200();
    let chip = config.chipset;
    let [with, without] = [true, false].map(|prefetch| {
        session(config.clone(), managed(64 * MIB, prefetch), |env| {
            let n = 2 * MIB / 4;
            let init = random_words(n, 19);
            let a = env.alloc(n * 4);
            let o = env.alloc(n * 4);
            env.write(a, &init);
            env.run("copy_u32", n as u32, &Args::new().device_ptr(a.va).device_ptr(o.va).u32(n as u32));
            let s = env.stats();
            for buf in [a, o] {
                let layout = env.blocks(buf)[0].gpu(0).map(|g| g.pte_layout).unwrap_or_default();
                assert_eq!(layout.small.count(), 0, "{chip:?}: no 4 KiB PTE in a fully resident block: {layout:?}");
                assert_eq!(env.gpu_resident(buf), 512);
            }
            let got = env.read(o);
            check(chip, "copy", &got, &init, s);
            s
        })
    });
    eprintln!("2 MiB copy in order: with prefetch {with:?}; without {without:?}");
    // Both buffers: `in` copied from the CPU, `out` zero-filled on the GPU (not a copy).
    assert_eq!(with.migrated_to_gpu_bytes, 2 << 20, "{with:?}");
    assert_eq!(without.migrated_to_gpu_bytes, 2 << 20, "{without:?}");
    assert_eq!(without.gpu_faults, 2 * 512, "{without:?}");
    assert!(with.gpu_faults <= 2 * 8, "two buffers in a few growing steps each: {with:?}");
    assert_eq!(with.gpu_faults + with.prefetched_pages, 2 * 512, "each page faulted or prefetched, once: {with:?}");
}

// ---------------------------------------------------------------------------------------------
// 6. Oversubscription's cost: the same work through a VRAM budget a quarter of its size and
// through one it fits in. Correct either way (asserted); the throughput ratio is a figure
// `cargo xtask bench` reports (UVM_BENCH_RUNS runs each, median), never an assertion.

/// `out = a + 3b + 5c` over four 4 MiB buffers with `vram` bytes of VRAM; the host time of the
/// kernel with its fault service, and the statistics.
fn mix3_timed(vram: usize) -> (std::time::Duration, UvmStats) {
    let config = ModelConfig::h200();
    let chip = config.chipset;
    session(config, managed(vram, true), |env| {
        let len = 4 * MIB;
        let n = len / 4;
        let (a, b, c) = (random_words(n, 11), random_words(n, 12), random_words(n, 13));
        let (ba, bb, bc, bo) = (env.alloc(len), env.alloc(len), env.alloc(len), env.alloc(len));
        env.write(ba, &a);
        env.write(bb, &b);
        env.write(bc, &c);
        let args = Args::new().device_ptr(ba.va).device_ptr(bb.va).device_ptr(bc.va).device_ptr(bo.va).u32(n as u32);
        let started = std::time::Instant::now();
        env.run("mix3_u32", n as u32, &args);
        let took = started.elapsed();
        let s = env.stats();
        let got = env.read(bo);
        let want: Vec<u32> =
            (0..n).map(|i| a[i].wrapping_add(b[i].wrapping_mul(3)).wrapping_add(c[i].wrapping_mul(5))).collect();
        check(chip, "out = a + 3b + 5c", &got, &want, s);
        (took, s)
    })
}

#[test]
fn four_times_oversubscribed_work_against_the_same_work_fitting_in_vram() {
    let runs: usize = std::env::var("UVM_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
    let median = |vram: usize| {
        let mut samples: Vec<(std::time::Duration, UvmStats)> = (0..runs).map(|_| mix3_timed(vram)).collect();
        samples.sort_by_key(|(t, _)| *t);
        samples[samples.len() / 2]
    };
    let (fit_t, fit) = median(32 * MIB);
    let (over_t, over) = median(4 * MIB);
    assert_eq!(fit.evictions, 0, "16 MiB in 32 MiB of VRAM fits: {fit:?}");
    assert!(over.evictions > 0, "16 MiB through 4 MiB is oversubscribed 4x: {over:?}");
    assert_eq!(fit.migrated_to_cpu_bytes, 0, "{fit:?}");
    let mib_s = |t: std::time::Duration| 16.0 / t.as_secs_f64();
    println!(
        "uvm oversubscription (GH100 model, 16 MiB of mix3, median of {runs}): fitting {:.1} MiB/s, \
         4x oversubscribed {:.1} MiB/s, ratio {:.2}; {} evictions, {} bytes back to the CPU, {} vs {} bytes to the GPU",
        mib_s(fit_t),
        mib_s(over_t),
        mib_s(over_t) / mib_s(fit_t),
        over.evictions,
        over.migrated_to_cpu_bytes,
        over.migrated_to_gpu_bytes,
        fit.migrated_to_gpu_bytes,
    );
}
