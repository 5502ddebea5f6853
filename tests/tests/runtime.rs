//! The application API (`nvgpu::runtime`) end to end on model GPUs of every family GSP-RM
//! 535.261.03 runs on (TU102, GA100, GA102, AD102, GH100), booted with the real firmware:
//!
//! - a `Gpu` built from the boot's RPC channel, BAR0, DMA allocator, clock and static info;
//! - typed device buffers of several sizes and element types round-trip host -> device -> host
//!   byte for byte (through a small staging buffer, so large copies go in chunks), and VRAM
//!   itself is read back through the model to check the device side independently;
//! - device-to-device copies, 8- and 32-bit memsets, size errors;
//! - streams and events: recorded, queried, synchronized; a doorbell that never rings makes
//!   an event time out with the channel and fence named, and work resumes after it;
//! - a module of PTX compiled by clang-19 from `payloads/runtime_args.cu` for the chip's SM,
//!   its parameter layout checked against the ABI's rules and the model's PTX parser, and
//!   kernel arguments packed (count and size mismatches are typed errors).
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::channel::ChannelError;
use nvgpu::chip::Chipset;
use nvgpu::mm::PageSize;
use nvgpu::platform::Clock;
use nvgpu::runtime::{Args, ArgsError, Gpu, GpuConfig, ImageKind, Module, ParamLayout, RuntimeError, StreamKind};
use sim::{DmaArena, ModelConfig, ModelGpu};
use tests::model_boot::{pattern, with_booted, DoorbellSwitch};
use tests::ptx_build::ptx;

fn configs() -> Vec<ModelConfig> {
    vec![
        ModelConfig::rtx2080ti(),
        ModelConfig::for_chipset(Chipset::GA100),
        ModelConfig::rtx3090(),
        ModelConfig::rtx4090(),
        ModelConfig::h200(),
    ]
}

/// Staging smaller than the large buffers, so their copies take many chunks.
const STAGING: usize = 64 << 10;

/// Host -> device -> host for one element type: the device holds the bytes (read through the
/// model), and they come back unchanged.
fn round_trip<T: nvgpu::runtime::Pod + Clone + PartialEq + std::fmt::Debug>(
    gpu: &mut Gpu<'_, DoorbellSwitch<'_>, DmaArena, dyn Clock + '_>,
    model: &ModelGpu,
    values: &[T],
) -> (u64, u64) {
    use sim::zerocopy::IntoBytes;
    let chip = gpu.chipset();
    let buffer = gpu.alloc::<T>(values.len()).unwrap_or_else(|e| panic!("{chip:?}: alloc {}: {e}", values.len()));
    assert_eq!(buffer.len(), values.len());
    assert_eq!(buffer.byte_len(), std::mem::size_of_val(values));
    gpu.copy_to_device(&buffer, values)
        .unwrap_or_else(|e| panic!("{chip:?}: copy to device: {e}\n{:?}", model.errors()));
    let mut in_vram = vec![0u8; buffer.byte_len()];
    assert!(model.vram_read(buffer.vram_address(), &mut in_vram));
    assert!(in_vram == values.as_bytes(), "{chip:?}: VRAM holds the {} bytes copied", in_vram.len());
    let mut back = vec![values[0].clone(); values.len()];
    // Poison the host side first, so a copy that does nothing cannot pass.
    back.as_mut_bytes().fill(0xA5);
    gpu.copy_from_device(&mut back, &buffer).unwrap_or_else(|e| panic!("{chip:?}: copy from device: {e}"));
    assert!(back == values, "{chip:?}: {} elements round-trip", values.len());
    let placement = (buffer.device_ptr(), buffer.byte_len() as u64);
    buffer.free(gpu).expect("free");
    placement
}

fn exercise(config: ModelConfig) {
    let chip = config.chipset;
    with_booted(config, |model, arena, clock, boot| {
        let static_info = *boot.static_info().expect("static info");
        let rpc = boot.rpc().expect("rpc");
        let bar = DoorbellSwitch::new(model);
        let config = GpuConfig { runs_ptx: true, staging_bytes: STAGING, timeout_ms: 1_000, ..GpuConfig::default() };
        let mut gpu = Gpu::new(rpc, &bar, arena, clock, &static_info, chip, config)
            .unwrap_or_else(|e| panic!("{chip:?}: Gpu::new: {e}\nmodel: {:?}", model.errors()));
        let vram_free_at_start = gpu.vram_stats().free_bytes;

        // Buffers of several sizes and types, one element to several MiB (chunked copies).
        let bytes = pattern((3 << 20) + 4 * 7, chip as u32);
        let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        round_trip(&mut gpu, model, &bytes[..1]);
        round_trip(&mut gpu, model, &bytes[..4095]);
        round_trip(&mut gpu, model, &bytes[..200_001]);
        round_trip(&mut gpu, model, &words);
        let doubles: Vec<f64> = (0..1000).map(|i| i as f64 * 0.1 - 7.25).collect();
        round_trip(&mut gpu, model, &doubles);
        let shorts: Vec<i16> = (0..33).map(|i| (i * 997 - 16000) as i16).collect();
        round_trip(&mut gpu, model, &shorts);
        let triples: Vec<[u8; 3]> = bytes[..3 * 70_001].chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
        round_trip(&mut gpu, model, &triples);

        // The largest pages the size allows: 2 MiB for the 3 MiB buffer, 64 KiB for 200 KB.
        let big = gpu.alloc::<u32>(words.len()).expect("big");
        let pages: Vec<PageSize> =
            gpu.va_space().tables().mapped_pages(big.device_ptr(), 2 << 20).iter().map(|p| p.page_size).collect();
        assert_eq!(pages, [PageSize::Size2M], "{chip:?}: the first 2 MiB is one big page");
        let mid = gpu.alloc::<u8>(200_001).expect("mid");
        let pages: Vec<PageSize> =
            gpu.va_space().tables().mapped_pages(mid.device_ptr(), 192 << 10).iter().map(|p| p.page_size).collect();
        assert!(pages.len() == 3 && pages.iter().all(|p| *p == PageSize::Size64K), "{chip:?}: {pages:?}");

        // Size checks.
        let err = gpu.copy_to_device(&big, &words[1..]).unwrap_err();
        assert!(
            matches!(err, RuntimeError::LengthMismatch { device, host, .. } if device == words.len() && host == words.len() - 1),
            "{err}"
        );
        let mut short = vec![0u32; 3];
        assert!(matches!(gpu.copy_from_device(&mut short, &big), Err(RuntimeError::LengthMismatch { .. })));
        assert!(matches!(gpu.alloc::<u64>(usize::MAX / 4), Err(RuntimeError::TooLarge { .. })));
        assert!(matches!(gpu.alloc::<u8>(0), Err(RuntimeError::Vram(_))));

        // Device to device, then memsets; each checked in VRAM and through the copy back.
        gpu.copy_to_device(&big, &words).expect("fill big");
        let copy = gpu.alloc::<u32>(words.len()).expect("copy");
        gpu.copy_device_to_device(&copy, &big).unwrap_or_else(|e| panic!("{chip:?}: d2d: {e}"));
        let mut back = vec![0u32; words.len()];
        gpu.copy_from_device(&mut back, &copy).expect("read copy");
        assert!(back == words, "{chip:?}: device to device");
        let tiny = gpu.alloc::<u8>(5).expect("tiny");
        assert!(matches!(gpu.copy_device_to_device(&mid, &tiny), Err(RuntimeError::LengthMismatch { .. })));
        tiny.free(&mut gpu).expect("free tiny");

        gpu.memset_d32(&copy, 0xC0FF_EE11).unwrap_or_else(|e| panic!("{chip:?}: memset_d32: {e}"));
        gpu.copy_from_device(&mut back, &copy).expect("read memset");
        assert!(back.iter().all(|&w| w == 0xC0FF_EE11), "{chip:?}: memset_d32");
        gpu.memset_d8(&mid, 0x5A).expect("memset_d8");
        let mut mid_back = vec![0u8; 200_001];
        gpu.copy_from_device(&mut mid_back, &mid).expect("read mid");
        assert!(mid_back.iter().all(|&b| b == 0x5A), "{chip:?}: memset_d8");
        let mut past = [0u8; 4];
        assert!(model.vram_read(mid.vram_address() + 200_001, &mut past));
        assert_ne!(past, [0x5A; 4], "{chip:?}: nothing written past the buffer's bytes");
        let odd = gpu.alloc::<u8>(4095).expect("odd");
        assert!(matches!(gpu.memset_d32(&odd, 1), Err(RuntimeError::Misaligned { bytes: 4095, multiple: 4, .. })));

        // Streams and events.
        let stream = gpu.create_stream(rpc, StreamKind::Copy).unwrap_or_else(|e| panic!("{chip:?}: stream: {e}"));
        assert!(!stream.is_default());
        assert_ne!(
            stream.channel_id(&mut gpu).expect("chid"),
            gpu.default_stream().channel_id(&mut gpu).expect("chid")
        );
        let idle = stream.record(&mut gpu).expect("record on an idle stream");
        assert!(idle.query(&mut gpu).expect("query"), "an event before any work is complete");
        stream.memset_d32(&mut gpu, &copy, 0x1234_5678).expect("queue memset");
        stream.copy_device_to_device(&mut gpu, &big, &copy).expect("queue d2d");
        let done = stream.record(&mut gpu).expect("record");
        done.synchronize(&mut gpu, 1_000).unwrap_or_else(|e| panic!("{chip:?}: event: {e}"));
        assert!(done.query(&mut gpu).expect("query"));
        gpu.copy_from_device(&mut back, &big).expect("read big");
        assert!(back.iter().all(|&w| w == 0x1234_5678), "{chip:?}: the stream's work ran in order");

        // A doorbell that never rings: the event is not reached and its wait times out,
        // naming the channel and fence; the next doorbell runs both submissions.
        bar.drop_doorbells.set(true);
        stream.memset_d8(&mut gpu, &odd, 0x11).expect("queue unseen memset");
        let stuck = stream.record(&mut gpu).expect("record");
        assert!(!stuck.query(&mut gpu).expect("query"), "{chip:?}: the work was never announced");
        let chid = stream.channel_id(&mut gpu).expect("chid");
        match stuck.synchronize(&mut gpu, 5) {
            Err(RuntimeError::Channel(ChannelError::Timeout { chid: c, timeout_ms: 5, .. })) => assert_eq!(c, chid),
            other => panic!("{chip:?}: expected a timeout naming channel {chid}, got {other:?}"),
        }
        assert!(matches!(gpu.synchronize(), Err(RuntimeError::Channel(ChannelError::Timeout { .. }))));
        bar.drop_doorbells.set(false);
        stream.memset_d8(&mut gpu, &mid, 0x22).expect("queue memset");
        stuck.synchronize(&mut gpu, 1_000).expect("the stuck work ran with the next doorbell");
        gpu.synchronize().unwrap_or_else(|e| panic!("{chip:?}: synchronize: {e}"));
        let mut odd_back = vec![0u8; 4095];
        gpu.copy_from_device(&mut odd_back, &odd).expect("read odd");
        assert!(odd_back.iter().all(|&b| b == 0x11), "{chip:?}");

        // Stream handles: a compute stream cannot do copy-engine work; a destroyed stream's
        // handle is refused; the default stream cannot be destroyed.
        let compute =
            gpu.create_stream(rpc, StreamKind::Compute).unwrap_or_else(|e| panic!("{chip:?}: compute stream: {e}"));
        assert!(matches!(
            compute.memset_d8(&mut gpu, &odd, 0),
            Err(RuntimeError::WrongStream { kind: StreamKind::Compute, .. })
        ));
        gpu.destroy_stream(rpc, compute).expect("destroy compute stream");
        assert!(matches!(compute.record(&mut gpu), Err(RuntimeError::NoSuchStream { .. })));
        let again = gpu.create_stream(rpc, StreamKind::Copy).expect("stream in the freed slot");
        assert!(
            matches!(compute.query(&mut gpu), Err(RuntimeError::NoSuchStream { .. })),
            "a new stream in the slot is not the old one"
        );
        let default = gpu.default_stream();
        assert!(matches!(gpu.destroy_stream(rpc, default), Err(RuntimeError::WrongStream { .. })));
        gpu.destroy_stream(rpc, again).expect("destroy");
        gpu.destroy_stream(rpc, stream).expect("destroy");

        // A module of clang-19's PTX for the chip's SM.
        let arch = format!("sm_{}", chip.sm_version());
        let text = ptx("runtime_args", &arch);
        let module = Module::load(&mut gpu, text.as_bytes()).unwrap_or_else(|e| panic!("{chip:?}: load: {e}"));
        assert_eq!(module.image_kind(), ImageKind::Ptx { sm: chip.sm_version() });
        let mut names: Vec<&str> = module.function_names().collect();
        names.sort();
        assert_eq!(names, ["mixed", "no_params"]);
        let mut image = vec![0u8; module.image_len()];
        assert!(model.vram_read(module.image_vram_address(), &mut image));
        // Each entry's code image (the model's format: magic, entry, PTX text) is in VRAM at its
        // function's code address.
        for name in ["mixed", "no_params"] {
            let f = module.function(name).expect("function");
            let at = (f.code_va() - module.image_va()) as usize;
            let code = &image[at..at + f.code_size() as usize];
            assert_eq!(
                nvgpu::compute::launch::parse_model_code_image(code),
                Ok((name, text.as_str())),
                "{chip:?}: {name}'s code image is in VRAM"
            );
        }

        let mixed = module.function("mixed").expect("mixed");
        assert_eq!(mixed.code_va(), module.image_va());
        // The C ABI's layout of (unsigned, long long, float, double, const float*, struct {double;
        // int} by value, unsigned char, double*).
        let abi: Vec<(u32, u32)> = vec![(0, 4), (8, 8), (16, 4), (24, 8), (32, 8), (40, 16), (56, 1), (64, 8)];
        let layout: Vec<(u32, u32)> = mixed.params().iter().map(|p: &ParamLayout| (p.offset, p.size)).collect();
        assert_eq!(layout, abi, "{chip:?}: parameter layout");
        assert_eq!(mixed.param_size(), 72);
        // The model's own PTX parser (an independent implementation) agrees.
        let model_module = sim::ptx::Module::parse(&text).expect("model parses clang's PTX");
        let model_params: Vec<(u32, u32)> =
            model_module.kernel("mixed").expect("kernel").params().iter().map(|p| (p.offset, p.size)).collect();
        assert_eq!(model_params, abi);
        assert!(module.function("no_params").expect("no_params").params().is_empty());
        assert!(matches!(module.function("missing"), Err(RuntimeError::NoSuchFunction { .. })));

        let pair: Vec<u8> = [2.5f64.to_le_bytes().as_slice(), &(-3i32).to_le_bytes(), &[0; 4]].concat();
        let args = Args::new().u32(7).i64(-3).f32(2.5).f64(0.1).ptr(&big).bytes(&pair).u8(9).ptr(&copy);
        let block = mixed.pack(&args).unwrap_or_else(|e| panic!("{chip:?}: pack: {e}"));
        assert_eq!(block.len(), 72);
        assert_eq!(&block[0..4], &7u32.to_le_bytes());
        assert_eq!(&block[8..16], &(-3i64).to_le_bytes());
        assert_eq!(&block[16..20], &2.5f32.to_le_bytes());
        assert_eq!(&block[24..32], &0.1f64.to_le_bytes());
        assert_eq!(&block[32..40], &big.device_ptr().to_le_bytes());
        assert_eq!(&block[40..56], &pair[..]);
        assert_eq!(block[56], 9);
        assert_eq!(&block[64..72], &copy.device_ptr().to_le_bytes());
        match mixed.pack(&Args::new().u32(7).i64(-3)) {
            Err(RuntimeError::Args(ArgsError::Count { expected: 8, given: 2, .. })) => {}
            other => panic!("expected a count error, got {other:?}"),
        }
        let wrong = Args::new().u32(7).i64(-3).f32(2.5).f32(0.1).ptr(&big).bytes(&pair).u8(9).ptr(&copy);
        match mixed.pack(&wrong) {
            Err(RuntimeError::Args(ArgsError::Size { index: 3, kind: "f32", expected: 8, given: 4, .. })) => {}
            other => panic!("expected a size error for argument 3, got {other:?}"),
        }
        assert!(mixed.pack(&Args::new()).is_err());
        assert_eq!(module.function("no_params").expect("f").pack(&Args::new()).expect("empty block"), Vec::<u8>::new());

        // Images for the wrong chip and garbage are typed errors.
        let newer = if chip.sm_version() < 90 { "sm_90" } else { "sm_90a" };
        let newer_text = ptx("runtime_args", newer);
        match Module::load(&mut gpu, newer_text.as_bytes()) {
            Err(RuntimeError::Payload(nvgpu::payload::Error::WrongArchitecture { .. })) if chip.sm_version() < 90 => {}
            // sm_90a PTX targets 90: it runs on GH100.
            Ok(m) if chip.sm_version() >= 90 => m.free(&mut gpu).expect("free"),
            other => panic!("{chip:?}: {newer} PTX: {other:?}"),
        }
        assert!(matches!(Module::load(&mut gpu, b"\x00\x01garbage"), Err(RuntimeError::Payload(_))));

        // A compute stream's memory configuration: its local-memory buffer sized from GSP-RM's
        // TPC and warp counts, a kernel with a per-thread `.local` array reaching it through
        // the driver's generic window (cvta.local), and a launch asking for more shared memory
        // than a CTA of the family may have refused before anything is queued.
        let compute =
            gpu.create_stream(rpc, StreamKind::Compute).unwrap_or_else(|e| panic!("{chip:?}: compute stream: {e}"));
        let (local_va, local_bytes, plan) = compute.local_memory(&mut gpu).expect("local memory");
        let warps = sim::compute::model_max_warps_per_sm(chip.family());
        assert_eq!(
            (plan.tpcs, plan.max_warps_per_sm, plan.sms),
            (sim::compute::MODEL_TPCS, warps, 2 * sim::compute::MODEL_TPCS)
        );
        assert_eq!(plan.bytes_per_tpc, 1024 * 32 * u64::from(warps) * 2, "{chip:?}: 1 KiB per thread");
        assert!(local_bytes >= plan.bytes_per_tpc * u64::from(plan.tpcs) && local_va >= nvgpu::channel::VA_START);
        let locals_text = ptx("local_array", &arch);
        let locals = Module::load(&mut gpu, locals_text.as_bytes()).unwrap_or_else(|e| panic!("{chip:?}: load: {e}"));
        let local_array = locals.function("local_array").expect("local_array");
        let n = 300u32;
        let input: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761) ^ 0x1234).collect();
        let din = gpu.alloc_from(&input).expect("input");
        let dout = gpu.alloc::<u32>(n as usize).expect("output");
        let args = Args::new().ptr(&din).ptr(&dout).u32(n);
        compute
            .launch(&mut gpu, &local_array, nvgpu::runtime::LaunchConfig::linear(n.div_ceil(96), 96), &args)
            .unwrap_or_else(|e| panic!("{chip:?}: local_array: {e}"));
        compute.synchronize(&mut gpu).unwrap_or_else(|e| panic!("{chip:?}: local_array: {e}\n{:?}", model.errors()));
        let mut out = vec![0u32; n as usize];
        gpu.copy_from_device(&mut out, &dout).expect("read back");
        for (i, (&x, &got)) in input.iter().zip(&out).enumerate() {
            let buf: Vec<u32> = (0..16u32).map(|k| x.wrapping_mul(k + 1).wrapping_add(k)).collect();
            let want = (0..16u32)
                .fold(0u32, |acc, k| acc.wrapping_mul(31).wrapping_add(buf[(x.wrapping_add(7 * k) & 15) as usize]));
            assert_eq!(got, want, "{chip:?}: local_array thread {i}");
        }
        let max_shared = nvgpu::compute::memory::max_shared_per_cta(chip.family());
        let too_much = nvgpu::runtime::LaunchConfig {
            shared_bytes: max_shared as u32 + 1,
            ..nvgpu::runtime::LaunchConfig::linear(1, 32)
        };
        match compute.launch(&mut gpu, &local_array, too_much, &args) {
            Err(RuntimeError::Memory(nvgpu::compute::memory::MemoryConfigError::SharedMemoryTooLarge {
                bytes,
                max,
                ..
            })) => {
                assert_eq!((bytes, max), (max_shared + 1, max_shared), "{chip:?}");
            }
            other => panic!("{chip:?}: {} bytes of shared memory: {other:?}", max_shared + 1),
        }
        gpu.destroy_stream(rpc, compute).expect("destroy compute stream");
        locals.free(&mut gpu).expect("free module");
        din.free(&mut gpu).expect("free");
        dout.free(&mut gpu).expect("free");

        // Everything back: VRAM as at the start, then the device torn down.
        module.free(&mut gpu).expect("free module");
        for b in [big, copy] {
            b.free(&mut gpu).expect("free");
        }
        for b in [mid, odd] {
            b.free(&mut gpu).expect("free");
        }
        assert_eq!(gpu.vram_stats().free_bytes, vram_free_at_start, "{chip:?}: every VRAM byte returned");
        gpu.destroy(rpc).unwrap_or_else(|e| panic!("{chip:?}: destroy: {e}"));
        assert_eq!(model.take_errors(), vec![], "{chip:?}: the model saw nothing wrong");
    });
}

#[test]
fn turing_runtime() {
    exercise(configs().remove(0));
}

#[test]
fn ga100_runtime() {
    exercise(configs().remove(1));
}

#[test]
fn ga102_runtime() {
    exercise(configs().remove(2));
}

#[test]
fn ad102_runtime() {
    exercise(configs().remove(3));
}

#[test]
fn gh100_runtime() {
    exercise(configs().remove(4));
}
