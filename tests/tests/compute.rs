//! Kernels launched through a compute channel on model GPUs (GA100, GA102, AD102, GH100) with the
//! real 535.261.03 firmware: the project's CUDA kernels compiled to PTX by clang-19 at test
//! time, their code image, QMD (the family's layout) and constant bank 0 in GPU memory, the
//! launch methods pushed on the compute object's subchannel, the fence waited for; results are
//! compared with the CPU's. Turing has no declared QMD layout: its launch is a typed error.
//!
//! Data lives in VRAM (copied in and out by a copy-engine channel) and in mapped system memory.

use nvgpu::ce::{CeAddress, CeClass, CeEncoder, Pipelining};
use nvgpu::channel::{Channel, ChannelConfig, ChannelEngine, GpuVaSpace, ENGINE_SUBCHANNEL};
use nvgpu::chip::Chipset;
use nvgpu::mm::{Aperture, MmuFormat, PteAttrs, RegisterTlbInvalidator, VramAllocator};
use nvgpu::platform::{Clock, DmaAllocator};
use nvgpu::rm::RmClient;
use sim::{DmaArena, ModelConfig, ModelGpu};
use tests::model_boot::with_booted;

use nvgpu::compute::launch::{const_bank0, model_code_image, push_launch, qmd, CONST0_BYTES, QMD_BYTES};
use nvgpu::compute::memory::{
    push_memory_config, sm_shared_config, LocalMemoryPlan, LOCAL_WINDOW_VA, SHARED_WINDOW_VA,
};
use nvgpu::compute::qmd::Launch;
use nvgpu::host::decode;
use nvgpu::mm::DmaTableMemory as Tables;
use tests::ptx_build;

const TIMEOUT_MS: u64 = 10_000;

struct Rig<'a> {
    model: &'a ModelGpu,
    arena: &'a DmaArena,
    clock: &'a dyn Clock,
    family: nvgpu::hal::Family,
    vas: GpuVaSpace<Tables<DmaArena>>,
    tlb: RegisterTlbInvalidator<'a, ModelGpu, dyn Clock + 'a>,
    compute: Channel,
    copy: Channel,
    copy_encoder: CeEncoder,
    vram: VramAllocator,
    keep: Vec<nvgpu::platform::DmaBuffer>,
}

impl Rig<'_> {
    /// A DMA buffer holding `bytes`, mapped; returns its VA.
    fn sysmem(&mut self, bytes: &[u8]) -> u64 {
        let mut b = self.arena.alloc(bytes.len().max(1).next_multiple_of(4096)).expect("dma");
        b.write(0, bytes).unwrap();
        let m = self.vas.map_dma(&b, &mut self.tlb).expect("map");
        self.keep.push(b);
        m.va
    }

    /// VRAM holding `bytes` (copied in by the copy engine); returns its VA.
    fn vram(&mut self, bytes: &[u8]) -> u64 {
        let size = (bytes.len().max(1) as u64).next_multiple_of(64 << 10);
        let a = self.vram.alloc(size, 64 << 10).expect("vram");
        let m =
            self.vas.map(a.base(), a.size(), Aperture::Video, PteAttrs::default(), &mut self.tlb).expect("map vram");
        let staging = self.sysmem(bytes);
        let mut pb = self.copy.pushbuffer();
        self.copy_encoder
            .copy(
                &mut pb,
                CeAddress::Virtual(staging),
                CeAddress::Virtual(m.va),
                bytes.len() as u64,
                Pipelining::NonPipelined,
            )
            .expect("copy in");
        let f = self.copy.submit(self.model, &pb).expect("submit copy");
        self.copy.wait(f, self.clock, TIMEOUT_MS, || {}).expect("copy in done");
        m.va
    }

    /// Reads `len` bytes at `va` back through the copy engine.
    fn read(&mut self, va: u64, len: usize) -> Vec<u8> {
        let staging = self.sysmem(&vec![0u8; len]);
        let mut pb = self.copy.pushbuffer();
        self.copy_encoder
            .copy(&mut pb, CeAddress::Virtual(va), CeAddress::Virtual(staging), len as u64, Pipelining::NonPipelined)
            .expect("copy out");
        let f = self.copy.submit(self.model, &pb).expect("submit copy");
        self.copy.wait(f, self.clock, TIMEOUT_MS, || {}).expect("copy out done");
        self.keep.last().expect("staging").read_vec(0, len).unwrap()
    }

    /// Gives the compute object its local memory (sized by `plan`) and generic windows, as a
    /// compute stream does; returns the buffer's VA and the pushed methods, decoded.
    fn configure_memory(&mut self, plan: &LocalMemoryPlan) -> (u64, Vec<(u32, Vec<u32>)>) {
        let a = self.vram.alloc(plan.total_bytes, 128 << 10).expect("local memory");
        let m = self
            .vas
            .map(a.base(), a.size(), Aperture::Video, PteAttrs::default(), &mut self.tlb)
            .expect("map local memory");
        let mut pb = self.compute.pushbuffer();
        push_memory_config(&mut pb, self.family, ENGINE_SUBCHANNEL, m.va, plan).expect("memory methods");
        let methods = decode(pb.words()).map(|d| d.expect("decodes")).map(|d| (d.method, d.data.to_vec())).collect();
        let f = self.compute.submit(self.model, &pb).expect("submit");
        self.compute
            .wait(f, self.clock, TIMEOUT_MS, || {})
            .unwrap_or_else(|e| panic!("{e}: {:?}", self.model.errors()));
        (m.va, methods)
    }

    /// Launches `entry` of `ptx` with `params` and waits.
    fn launch(
        &mut self,
        ptx: &str,
        entry: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &[u8],
    ) -> Result<(), nvgpu::compute::launch::LaunchError> {
        self.launch_edited(ptx, entry, grid, block, shared, params, |_| {}, TIMEOUT_MS)
            .map(|r| r.unwrap_or_else(|e| panic!("{:?}: {e}\nmodel: {:?}", self.family, self.model.errors())))
    }

    /// Launches with the QMD's fields edited by `edit` before it is written; the wait's outcome.
    #[allow(clippy::too_many_arguments)]
    fn launch_edited(
        &mut self,
        ptx: &str,
        entry: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        params: &[u8],
        edit: impl FnOnce(&mut Launch),
        timeout_ms: u64,
    ) -> Result<Result<(), nvgpu::channel::ChannelError>, nvgpu::compute::launch::LaunchError> {
        let code = self.sysmem(&model_code_image(entry, ptx));
        let bank = const_bank0(self.family, params)?;
        let mut area = vec![0u8; CONST0_BYTES as usize + QMD_BYTES];
        area[QMD_BYTES..].copy_from_slice(&bank);
        let area_va = self.sysmem(&area);
        let launch = Launch {
            program_address: code,
            grid,
            block,
            shared_memory: u64::from(shared),
            registers: 32,
            barriers: 1,
            const0: (area_va + QMD_BYTES as u64, CONST0_BYTES),
            release: None,
            local_bytes_per_thread: 1024,
            sm_config: match self.family {
                nvgpu::hal::Family::Turing => None,
                f => Some(sm_shared_config(f, u64::from(shared)).expect("shared config")),
            },
        };
        let mut launch = launch;
        edit(&mut launch);
        let q = qmd(self.family, &launch)?;
        let words: Vec<u8> = q.words().iter().flat_map(|w| w.to_le_bytes()).collect();
        self.keep.last_mut().expect("area").write(0, &words[..QMD_BYTES]).unwrap();
        let mut pb = self.compute.pushbuffer();
        push_launch(&mut pb, self.family, ENGINE_SUBCHANNEL, area_va)?;
        let f = self.compute.submit(self.model, &pb).expect("submit launch");
        Ok(self.compute.wait(f, self.clock, timeout_ms, || {}))
    }
}

fn u32s(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}
fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}
fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn params(parts: &[&[u8]]) -> Vec<u8> {
    // Natural alignment, as PTX lays out .param lists (8-byte pointers, 4-byte scalars).
    let mut out = Vec::new();
    for p in parts {
        let align = p.len().min(8);
        while out.len() % align != 0 {
            out.push(0);
        }
        out.extend_from_slice(p);
    }
    out
}

fn run(config: ModelConfig) {
    let chip = config.chipset;
    let family = chip.family();
    with_booted(config, |model, arena, clock, boot| {
        let static_info = *boot.static_info().expect("static info");
        let fb_regions = static_info.fb_regions().to_vec();
        let rpc = boot.rpc().expect("rpc");
        let mut rm = RmClient::new(rpc, 0).expect("client");
        let device = rm.alloc_device(rpc, &Default::default()).expect("device");
        let mut tlb = RegisterTlbInvalidator::new(model, clock);
        let mut vas =
            GpuVaSpace::create(&mut rm, rpc, device, MmuFormat::for_family(family), Tables::new(arena.clone()))
                .expect("VA space");
        let compute = Channel::create(
            &mut rm,
            rpc,
            model,
            device,
            family,
            &mut vas,
            arena,
            &mut tlb,
            ChannelConfig { engine: ChannelEngine::Compute, ..Default::default() },
        )
        .unwrap_or_else(|e| panic!("{chip:?}: compute channel: {e}\n{:?}", model.errors()));
        let copy =
            Channel::create(&mut rm, rpc, model, device, family, &mut vas, arena, &mut tlb, ChannelConfig::default())
                .expect("copy channel");
        let copy_encoder =
            CeEncoder::new(CeClass::from_class_number(copy.engine_class()).expect("class"), ENGINE_SUBCHANNEL);
        let vram = VramAllocator::from_fb_regions(&fb_regions, &[]).expect("vram");
        let mut rig =
            Rig { model, arena, clock, family, vas, tlb, compute, copy, copy_encoder, vram, keep: Vec::new() };
        let plan = LocalMemoryPlan::from_static_info(1024, &static_info).expect("GSP-RM reports TPCs and warps");
        let (local_va, methods) = rig.configure_memory(&plan);
        // The methods' values, decoded from the pushbuffer: the buffer's address, its size per
        // TPC and SM count, the two windows.
        let size = plan.bytes_per_tpc;
        assert_eq!(
            methods,
            vec![
                (0x790, vec![(local_va >> 32) as u32, local_va as u32]),
                (0x2e4, vec![(size >> 32) as u32, size as u32, plan.sms]),
                (0x7b0, vec![(LOCAL_WINDOW_VA >> 32) as u32, LOCAL_WINDOW_VA as u32]),
                (0x2a0, vec![(SHARED_WINDOW_VA >> 32) as u32, SHARED_WINDOW_VA as u32]),
            ],
            "{chip:?}"
        );

        let arch = tests::ptx_build::native_arch(chip);

        // vector_add_u32 on VRAM buffers, n not a multiple of the block.
        let ptx = ptx_build::ptx("vector_add", arch);
        let n = 10_007u32;
        let a: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let b: Vec<u32> = (0..n).map(|i| i ^ 0x5555_aaaa).collect();
        let (da, db) = (rig.vram(&bytes_u32(&a)), rig.vram(&bytes_u32(&b)));
        let dc = rig.vram(&vec![0u8; 4 * n as usize]);
        let p = params(&[&da.to_le_bytes(), &db.to_le_bytes(), &dc.to_le_bytes(), &n.to_le_bytes()]);
        rig.launch(&ptx, "vector_add_u32", [n.div_ceil(256), 1, 1], [256, 1, 1], 0, &p).expect("launch");
        let c = u32s(&rig.read(dc, 4 * n as usize));
        for i in 0..n as usize {
            assert_eq!(c[i], a[i].wrapping_add(b[i]), "{chip:?} vector_add at {i}");
        }

        // SAXPY on system memory buffers.
        let ptx = ptx_build::ptx("saxpy", arch);
        let n = 5_000u32;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 100.0).collect();
        let y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let (dx, dy) = (rig.sysmem(&bytes_f32(&x)), rig.sysmem(&bytes_f32(&y)));
        let p = params(&[&n.to_le_bytes(), &2.5f32.to_le_bytes(), &dx.to_le_bytes(), &dy.to_le_bytes()]);
        rig.launch(&ptx, "saxpy", [8, 1, 1], [128, 1, 1], 0, &p).expect("launch");
        let out = f32s(&rig.read(dy, 4 * n as usize));
        for i in 0..n as usize {
            assert_eq!(out[i].to_bits(), 2.5f32.mul_add(x[i], y[i]).to_bits(), "{chip:?} saxpy at {i}");
        }

        // Tiled matrix multiply (shared memory, barriers), odd shapes.
        let ptx = ptx_build::ptx("matmul", arch);
        let (rows, cols, inner) = (37usize, 29usize, 23usize);
        let ma: Vec<f32> = (0..rows * inner).map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0).collect();
        let mb: Vec<f32> = (0..inner * cols).map(|i| ((i * 104_729) % 1000) as f32 / 250.0 - 2.0).collect();
        let (da, db) = (rig.vram(&bytes_f32(&ma)), rig.vram(&bytes_f32(&mb)));
        let dc = rig.vram(&vec![0u8; 4 * rows * cols]);
        let p = params(&[
            &da.to_le_bytes(),
            &db.to_le_bytes(),
            &dc.to_le_bytes(),
            &(rows as i32).to_le_bytes(),
            &(cols as i32).to_le_bytes(),
            &(inner as i32).to_le_bytes(),
        ]);
        rig.launch(&ptx, "matmul_tiled", [cols.div_ceil(16) as u32, rows.div_ceil(16) as u32, 1], [16, 16, 1], 0, &p)
            .expect("launch");
        let c = f32s(&rig.read(dc, 4 * rows * cols));
        for r in 0..rows {
            for col in 0..cols {
                let mut acc = 0.0f32;
                for k in 0..inner {
                    acc = ma[r * inner + k].mul_add(mb[k * cols + col], acc);
                }
                assert_eq!(c[r * cols + col].to_bits(), acc.to_bits(), "{chip:?} matmul at ({r},{col})");
            }
        }

        // Reduction with dynamic shared memory.
        let ptx = ptx_build::ptx("reduce", arch);
        let (n, block) = (3_000u32, 128u32);
        let grid = n.div_ceil(block);
        let v: Vec<u32> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9) >> 7).collect();
        let din = rig.vram(&bytes_u32(&v));
        let dout = rig.vram(&vec![0u8; 4 * grid as usize]);
        let p = params(&[&din.to_le_bytes(), &dout.to_le_bytes(), &n.to_le_bytes()]);
        rig.launch(&ptx, "reduce_sum_u32", [grid, 1, 1], [block, 1, 1], 4 * block, &p).expect("launch");
        let got = u32s(&rig.read(dout, 4 * grid as usize));
        for (g, got_g) in got.iter().enumerate() {
            let lo = g * block as usize;
            let want = v[lo..(lo + block as usize).min(n as usize)].iter().fold(0u32, |s, x| s.wrapping_add(*x));
            assert_eq!(*got_g, want, "{chip:?} reduce cta {g}");
        }

        // Histogram with shared-memory atomics.
        let ptx = ptx_build::ptx("histogram", arch);
        let n = 20_000u32;
        let data: Vec<u8> = (0..n).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let dd = rig.vram(&data);
        let dbins = rig.vram(&vec![0u8; 4 * 256]);
        let p = params(&[&dd.to_le_bytes(), &n.to_le_bytes(), &dbins.to_le_bytes()]);
        rig.launch(&ptx, "histogram256", [16, 1, 1], [256, 1, 1], 0, &p).expect("launch");
        let bins = u32s(&rig.read(dbins, 4 * 256));
        let mut want = [0u32; 256];
        for &d in &data {
            want[d as usize] += 1;
        }
        assert_eq!(bins, want.to_vec(), "{chip:?} histogram");

        // A per-thread `.local` array: its generic addresses (cvta.local) lie in the driver's
        // local window, which the model resolves as the driver set it.
        let ptx = ptx_build::ptx("local_array", arch);
        let n = 500u32;
        let v: Vec<u32> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9) ^ 77).collect();
        let din = rig.vram(&bytes_u32(&v));
        let dout = rig.vram(&vec![0u8; 4 * n as usize]);
        let p = params(&[&din.to_le_bytes(), &dout.to_le_bytes(), &n.to_le_bytes()]);
        rig.launch(&ptx, "local_array", [n.div_ceil(96), 1, 1], [96, 1, 1], 0, &p).expect("launch");
        let out = u32s(&rig.read(dout, 4 * n as usize));
        for (i, &x) in v.iter().enumerate() {
            let buf: Vec<u32> = (0..16u32).map(|k| x.wrapping_mul(k + 1).wrapping_add(k)).collect();
            let want = (0..16u32)
                .fold(0u32, |acc, k| acc.wrapping_mul(31).wrapping_add(buf[(x.wrapping_add(7 * k) & 15) as usize]));
            assert_eq!(out[i], want, "{chip:?} local_array thread {i}");
        }
        assert_eq!(model.take_errors(), vec![], "{chip:?}: the strict model saw nothing wrong");

        // QMDs the model refuses (each stops the channel, so each is the last launch here):
        // on Ampere and later a shared-memory configuration too small for the CTA; on Turing a
        // local size smaller than the kernel's `.local` array.
        type Edit = Box<dyn FnOnce(&mut Launch)>;
        let (edit, expect): (Edit, &str) = if family == nvgpu::hal::Family::Turing {
            (Box::new(|l: &mut Launch| l.local_bytes_per_thread = 16), "SHADER_LOCAL_MEMORY_LOW_SIZE")
        } else {
            // 48 KiB of dynamic shared memory with the minimum configuration of 8 KiB (3).
            (
                Box::new(|l: &mut Launch| {
                    if let Some(c) = l.sm_config.as_mut() {
                        c.min = 3;
                        c.target = 3;
                    }
                }),
                "the minimum configuration does not hold",
            )
        };
        // The model's typed reason (`ComputeError`) reaches the log as the channel's stop text;
        // `sim::compute`'s unit tests check the reasons themselves on the same QMD edits.
        let _ = expect;
        let outcome = rig
            .launch_edited(&ptx, "local_array", [1, 1, 1], [32, 1, 1], 48 << 10, &p, edit, 500)
            .expect("launch built");
        assert!(outcome.is_err(), "{chip:?}: the refused launch completed");
        let errors = model.take_errors();
        assert!(errors.iter().any(|e| matches!(e, sim::ModelError::ChannelError { .. })), "{chip:?}: {errors:?}");
    });
}

#[test]
fn ga100_runs_kernels_through_a_compute_channel() {
    run(ModelConfig::for_chipset(Chipset::GA100));
}

#[test]
fn ga102_runs_kernels_through_a_compute_channel() {
    run(ModelConfig::rtx3090());
}

#[test]
fn ad102_runs_kernels_through_a_compute_channel() {
    run(ModelConfig::rtx4090());
}

#[test]
fn gh100_runs_kernels_through_a_compute_channel() {
    run(ModelConfig::h200());
}

#[test]
fn tu102_runs_kernels_through_a_compute_channel() {
    run(ModelConfig::rtx2080ti());
}

/// One launch through the application API (the arguments built beforehand, as an application
/// does once per call site): argument packing, the launch slot, the QMD from the
/// function's template, constant bank 0, the two launch methods, the GPFIFO entry, GPPut and
/// the doorbell. Kept out of line so callgrind can count it alone
/// (`valgrind --tool=callgrind --toggle-collect='*one_launch*'`).
#[inline(never)]
fn one_launch<R: nvgpu::hw::RegisterIo + ?Sized, A: nvgpu::platform::DmaAllocator + ?Sized, C: Clock + ?Sized>(
    gpu: &mut nvgpu::runtime::Gpu<'_, R, A, C>,
    stream: nvgpu::runtime::Stream,
    f: &nvgpu::runtime::Function<'_>,
    args: &nvgpu::runtime::Args,
) {
    let cfg = nvgpu::runtime::LaunchConfig::linear(4, 256);
    stream.launch(gpu, f, cfg, args).expect("launch");
}

/// CPU cost of one kernel launch through the application API, the doorbell held back while it is
/// measured. `cargo xtask bench` runs it in release with `--nocapture` for the figure; as a test
/// it checks that the launches queued meanwhile all run once the doorbell rings again.
#[test]
fn launch_cost() {
    use nvgpu::hw::RegisterIo as _;
    use nvgpu::runtime::{Gpu, GpuConfig, Module, StreamKind};
    with_booted(ModelConfig::h200(), |model, arena, clock, boot| {
        let info = *boot.static_info().expect("static info");
        let rpc = boot.rpc().expect("rpc");
        let bar = tests::model_boot::DoorbellSwitch::new(model);
        let mut gpu = Gpu::new(
            rpc,
            &bar,
            arena,
            clock,
            &info,
            model.chipset(),
            GpuConfig { runs_ptx: true, ..GpuConfig::default() },
        )
        .expect("gpu");
        let ptx = ptx_build::ptx("vector_add", "sm_90");
        let module = Module::load(&mut gpu, ptx.as_bytes()).expect("module");
        let f = module.function("vector_add_u32").expect("function");
        let a = gpu.alloc::<u32>(1000).expect("buffer");
        let stream = gpu.create_stream(rpc, StreamKind::Compute).expect("stream");
        // The template is built on the first launch (outside the measurement; its kernel runs).
        let args = nvgpu::runtime::Args::new().ptr(&a).ptr(&a).ptr(&a).u32(1000);
        stream.launch(&mut gpu, &f, nvgpu::runtime::LaunchConfig::linear(4, 256), &args).expect("first launch");
        stream.synchronize(&mut gpu).expect("first launch");
        bar.drop_doorbells.set(true);
        let _ = bar.read32(0);
        // Fewer launches than the stream has slots: none waits.
        let n = 60;
        let start = std::time::Instant::now();
        for _ in 0..n {
            one_launch(&mut gpu, stream, &f, &args);
        }
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        bar.drop_doorbells.set(false);
        // Not through `one_launch`: this doorbell runs the queued kernels inside the call, which
        // the per-launch count (callgrind over `one_launch`) must not include.
        stream.launch(&mut gpu, &f, nvgpu::runtime::LaunchConfig::linear(4, 256), &args).expect("launch");
        stream.synchronize(&mut gpu).expect("the launches queued behind the held-back doorbell run");
        eprintln!("one kernel launch (Stream::launch: arguments, QMD from the template, constant bank, pushbuffer, GPFIFO, doorbell): {ns:.0} ns");
    });
}
