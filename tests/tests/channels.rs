//! GPU memory, channels and the copy engine end to end on model GPUs of every family GSP-RM
//! 535.261.03 runs on (TU102, GA100, GA102, AD102, GH100), through the real driver:
//!
//! - GSP-RM boots with the real firmware; the driver creates its client, device and subdevice;
//! - a VA space with driver-owned page tables (system memory) is bound with
//!   `NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY`; VRAM from the allocator over GSP-RM's FB regions and
//!   system memory buffers are mapped with 4 KiB, 64 KiB and 2 MiB pages;
//! - a copy-engine channel (channel group, GPFIFO channel of the family's class, copy object)
//!   copies host to device, device to device and device to host and memsets, at odd sizes and
//!   alignments; every result is compared byte for byte with the CPU's;
//! - a second channel's MMU fault stops that channel with a typed error (the error notifier, and
//!   RM's `RC_TRIGGERED` event), while its sibling keeps working.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::ce::{CeAddress, CeClass, CeEncoder, MemsetPattern, Pipelining};
use nvgpu::channel::{Channel, ChannelConfig, ChannelEngine, ChannelError, Fence, GpuVaSpace, ENGINE_SUBCHANNEL};
use nvgpu::chip::Chipset;
use nvgpu::gsp::fw::rpc::RpcEvent;
use nvgpu::mm::{Aperture, DmaTableMemory, MmuFormat, PteAttrs, RegisterTlbInvalidator, VramAllocator};
use nvgpu::platform::DmaAllocator;
use nvgpu::rm::fifo::RobustChannelError;
use nvgpu::rm::RmClient;
use sim::ModelConfig;
use tests::model_boot::{pattern, with_booted, DoorbellSwitch};

const TIMEOUT_MS: u64 = 1_000;

fn configs() -> Vec<ModelConfig> {
    vec![
        ModelConfig::rtx2080ti(),
        ModelConfig::for_chipset(Chipset::GA100),
        ModelConfig::rtx3090(),
        ModelConfig::rtx4090(),
        ModelConfig::h200(),
    ]
}

fn exercise(config: ModelConfig) {
    let chip = config.chipset;
    let family = chip.family();
    with_booted(config, |model, arena, clock, boot| {
        let fb_regions = boot.static_info().expect("static info").fb_regions().to_vec();
        let rpc = boot.rpc().expect("rpc");
        let mut rm = RmClient::new(rpc, 0).expect("client");
        let device = rm.alloc_device(rpc, &Default::default()).expect("device");
        let _subdevice = rm.alloc_subdevice(rpc, device, &Default::default()).expect("subdevice");
        let mut tlb = RegisterTlbInvalidator::new(model, clock);
        let mut vas =
            GpuVaSpace::create(&mut rm, rpc, device, MmuFormat::for_family(family), DmaTableMemory::new(arena.clone()))
                .unwrap_or_else(|e| panic!("{chip:?}: VA space: {e}"));
        let mut copy = Channel::create(
            &mut rm,
            rpc,
            model,
            device,
            family,
            &mut vas,
            arena,
            &mut tlb,
            ChannelConfig { engine: ChannelEngine::Copy(0), ..Default::default() },
        )
        .unwrap_or_else(|e| panic!("{chip:?}: channel: {e}\nmodel: {:?}", model.errors()));
        let ce =
            CeEncoder::new(CeClass::from_class_number(copy.engine_class()).expect("copy class"), ENGINE_SUBCHANNEL);

        // VRAM from the allocator over GSP-RM's free FB regions; a 4 MiB buffer (2 MiB pages),
        // a 192 KiB one (64 KiB pages) and a 12 KiB one (4 KiB pages).
        let mut vram = VramAllocator::from_fb_regions(&fb_regions, &[]).expect("VRAM allocator");
        let big = vram.alloc(4 << 20, 2 << 20).expect("4 MiB");
        let mid = vram.alloc(192 << 10, 64 << 10).expect("192 KiB");
        let small = vram.alloc(12 << 10, 4 << 10).expect("12 KiB");
        let big_map = vas.map(big.base(), big.size(), Aperture::Video, PteAttrs::default(), &mut tlb).expect("map big");
        let mid_map = vas.map(mid.base(), mid.size(), Aperture::Video, PteAttrs::default(), &mut tlb).expect("map mid");
        let small_map =
            vas.map(small.base(), small.size(), Aperture::Video, PteAttrs::default(), &mut tlb).expect("map small");
        let pages: Vec<_> = vas.tables().mapped_pages(big_map.va, big_map.size).iter().map(|p| p.page_size).collect();
        assert!(pages.iter().all(|p| *p == nvgpu::mm::PageSize::Size2M), "{chip:?}: {pages:?}");
        let pages: Vec<_> = vas.tables().mapped_pages(mid_map.va, mid_map.size).iter().map(|p| p.page_size).collect();
        assert!(pages.iter().all(|p| *p == nvgpu::mm::PageSize::Size64K), "{chip:?}: {pages:?}");

        // System memory: source and destination.
        let len = (3 << 20) + 12_345;
        let mut src = arena.alloc(4 << 20).expect("src");
        let dst = arena.alloc(4 << 20).expect("dst");
        let data = pattern(len, chip as u32);
        src.write(0, &data).unwrap();
        let src_map = vas.map_dma(&src, &mut tlb).expect("map src");
        let dst_map = vas.map_dma(&dst, &mut tlb).expect("map dst");

        // Host to device at an odd offset, device to device across buffers, device to host.
        let mut pb = copy.pushbuffer();
        let v = CeAddress::Virtual;
        ce.copy(&mut pb, v(src_map.va), v(big_map.va + 3), len as u64, Pipelining::NonPipelined).expect("h2d");
        let fence = copy.submit(model, &pb).expect("submit h2d");
        copy.wait(fence, clock, TIMEOUT_MS, || {}).unwrap_or_else(|e| panic!("{chip:?}: {e}\n{:?}", model.errors()));
        let mut check = vec![0u8; len];
        assert!(model.vram_read(big.base() + 3, &mut check));
        assert!(check == data, "{chip:?}: host to device");

        let mut pb = copy.pushbuffer();
        ce.copy(&mut pb, v(big_map.va + 3 + 100_001), v(mid_map.va + 1), 150_000, Pipelining::Pipelined).expect("d2d");
        ce.copy(&mut pb, v(mid_map.va + 1), v(small_map.va + 7), 9_000, Pipelining::NonPipelined).expect("d2d 2");
        ce.copy(&mut pb, v(big_map.va + 3), v(dst_map.va + 5), len as u64, Pipelining::NonPipelined).expect("d2h");
        ce.memset(
            &mut pb,
            v(dst_map.va + 5 + len as u64),
            MemsetPattern::U32(0xC0FF_EE11),
            4_003,
            Pipelining::NonPipelined,
        )
        .expect("memset");
        let fence = copy.submit(model, &pb).expect("submit");
        copy.wait(fence, clock, TIMEOUT_MS, || {}).unwrap_or_else(|e| panic!("{chip:?}: {e}\n{:?}", model.errors()));
        let mut mid_bytes = vec![0u8; 150_000];
        assert!(model.vram_read(mid.base() + 1, &mut mid_bytes));
        assert!(mid_bytes[..] == data[100_001..250_001], "{chip:?}: device to device");
        let mut small_bytes = vec![0u8; 9_000];
        assert!(model.vram_read(small.base() + 7, &mut small_bytes));
        assert!(small_bytes[..] == data[100_001..109_001], "{chip:?}: device to device (4 KiB pages)");
        let seen = dst.read_vec(0, dst.len()).unwrap();
        assert!(seen[5..5 + len] == data[..], "{chip:?}: device to host");
        let set = &seen[5 + len..5 + len + 4_003];
        // The pattern repeats from the memset's first byte, whatever its alignment.
        let expected: Vec<u8> = (0..4_003).map(|i| 0xC0FF_EE11u32.to_le_bytes()[i % 4]).collect();
        assert!(set == &expected[..], "{chip:?}: memset");
        assert!(seen[5 + len + 4_003..].iter().all(|&b| b == 0), "{chip:?}: nothing written past the memset");

        // A sibling channel on the same engine, and an injected error on it: a copy to an
        // unmapped VA faults; the channel stops with MMU_ERR_FLT, the first keeps working.
        let mut sibling = Channel::create(
            &mut rm,
            rpc,
            model,
            device,
            family,
            &mut vas,
            arena,
            &mut tlb,
            ChannelConfig { engine: ChannelEngine::Copy(0), ..Default::default() },
        )
        .expect("sibling channel");
        assert_ne!(sibling.chid(), copy.chid());
        let mut pb = sibling.pushbuffer();
        ce.copy(&mut pb, v(src_map.va), v(0x7_0000_0000), 4096, Pipelining::NonPipelined).expect("bad copy");
        let fence = sibling.submit(model, &pb).expect("submit bad copy");
        match sibling.wait(fence, clock, TIMEOUT_MS, || {}) {
            Err(ChannelError::Failed { chid, error: RobustChannelError::MmuFault, xid: 31 }) => {
                assert_eq!(chid, sibling.chid())
            }
            other => panic!("{chip:?}: expected an MMU-fault channel error, got {other:?}"),
        }
        assert!(matches!(sibling.submit(model, &sibling.pushbuffer()), Err(ChannelError::Failed { .. })));
        let faults = model.take_mmu_faults();
        assert!(faults.iter().any(|f| f.va & !0xfff == 0x7_0000_0000), "{chip:?}: the fault is logged: {faults:?}");
        // GSP-RM told the CPU: RC_TRIGGERED for the sibling's channel id.
        let mut rc = Vec::new();
        rpc.poll(&mut |m: &nvgpu::gsp::cmdq::GspMessage| {
            if m.event() == Some(RpcEvent::RcTriggered) {
                rc.push(u32::from_le_bytes(m.payload[4..8].try_into().unwrap()));
            }
            Ok(())
        })
        .expect("poll events");
        assert_eq!(rc, [sibling.chid()], "{chip:?}: RC_TRIGGERED names the failed channel");

        // The first channel is untouched.
        let mut pb = copy.pushbuffer();
        ce.memset(&mut pb, v(small_map.va), MemsetPattern::U8(0x5A), 12 << 10, Pipelining::NonPipelined)
            .expect("memset");
        let fence = copy.submit(model, &pb).expect("submit after sibling error");
        copy.wait(fence, clock, TIMEOUT_MS, || {}).expect("the sibling's error leaves this channel running");
        let mut small_bytes = vec![0u8; 12 << 10];
        assert!(model.vram_read(small.base(), &mut small_bytes));
        assert!(small_bytes.iter().all(|&b| b == 0x5A), "{chip:?}");
        let channel_errors: Vec<_> =
            model.take_errors().into_iter().filter(|e| !matches!(e, sim::ModelError::ChannelError { .. })).collect();
        assert_eq!(channel_errors, vec![], "{chip:?}: nothing else went wrong");

        // Tear down: channels, mappings, VA space, client.
        sibling.destroy(&mut rm, rpc, &mut vas, arena, &mut tlb).expect("destroy sibling");
        copy.destroy(&mut rm, rpc, &mut vas, arena, &mut tlb).expect("destroy channel");
        for m in [big_map, mid_map, small_map, src_map, dst_map] {
            vas.unmap(m, &mut tlb).expect("unmap");
        }
        rm.free_all(rpc).expect("free client");
        arena.free(src);
        arena.free(dst);
    });
}

#[test]
fn turing_channels_copy_and_survive_a_sibling_error() {
    exercise(configs().remove(0));
}

#[test]
fn ga100_channels_copy_and_survive_a_sibling_error() {
    exercise(configs().remove(1));
}

#[test]
fn ga102_channels_copy_and_survive_a_sibling_error() {
    exercise(configs().remove(2));
}

#[test]
fn ad102_channels_copy_and_survive_a_sibling_error() {
    exercise(configs().remove(3));
}

#[test]
fn gh100_channels_copy_and_survive_a_sibling_error() {
    exercise(configs().remove(4));
}

/// One submission, out of line so callgrind can count it alone
/// (`valgrind --tool=callgrind --toggle-collect='*one_submission*'`).
#[inline(never)]
fn one_submission(ch: &mut Channel, io: &DoorbellSwitch<'_>, pb: &nvgpu::host::PushBuffer) -> Fence {
    std::hint::black_box(ch.submit(io, pb).expect("submit"))
}

/// CPU cost of one GPFIFO submission (a 64-byte copy's methods plus the fence release): copy
/// into the pushbuffer ring, GPFIFO entry, GPPut, doorbell write. `cargo xtask bench` runs it in
/// release with `--nocapture` for the figure; as a test it checks that every submission is
/// accepted with the next fence while the doorbell is held back.
#[test]
fn submission_cost() {
    use nvgpu::hw::RegisterIo as _;
    with_booted(ModelConfig::rtx4090(), |model, arena, clock, boot| {
        let family = model.chipset().family();
        let rpc = boot.rpc().expect("rpc");
        let mut rm = RmClient::new(rpc, 0).expect("client");
        let device = rm.alloc_device(rpc, &Default::default()).expect("device");
        let mut tlb = RegisterTlbInvalidator::new(model, clock);
        let mut vas =
            GpuVaSpace::create(&mut rm, rpc, device, MmuFormat::for_family(family), DmaTableMemory::new(arena.clone()))
                .expect("VA space");
        let config = ChannelConfig { gpfifo_entries: 2048, pushbuffer_bytes: 1 << 20, engine: ChannelEngine::Copy(0) };
        let mut ch =
            Channel::create(&mut rm, rpc, model, device, family, &mut vas, arena, &mut tlb, config).expect("channel");
        let ce = CeEncoder::new(CeClass::from_class_number(ch.engine_class()).expect("class"), ENGINE_SUBCHANNEL);
        let mut pb = ch.pushbuffer();
        ce.copy(&mut pb, CeAddress::Virtual(1 << 33), CeAddress::Virtual(1 << 34), 64, Pipelining::Pipelined)
            .expect("copy");
        let io = DoorbellSwitch::quiet(model);
        let _ = io.read32(0);
        let n = 1000;
        let start = std::time::Instant::now();
        let fences: Vec<Fence> = (0..n).map(|_| one_submission(&mut ch, &io, &pb)).collect();
        let ns = start.elapsed().as_nanos() as f64 / n as f64;
        assert!(
            fences.windows(2).all(|w| w[1].chid == w[0].chid && w[1].value == w[0].value.wrapping_add(1)),
            "fences not consecutive: {:?}",
            &fences[..4]
        );
        eprintln!("one GPFIFO submission ({} pushbuffer words + fence): {ns:.0} ns", pb.words().len());
    });
}

/// A small pushbuffer ring wraps many times; a producer that never waits is stopped with a
/// typed "ring space" error before it could overwrite a segment the GPU has not run.
#[test]
fn pushbuffer_ring_wraps_and_never_overwrites_live_segments() {
    with_booted(ModelConfig::rtx3090(), |model, arena, clock, boot| {
        let family = model.chipset().family();
        let rpc = boot.rpc().expect("rpc");
        let mut rm = RmClient::new(rpc, 0).expect("client");
        let device = rm.alloc_device(rpc, &Default::default()).expect("device");
        let mut tlb = RegisterTlbInvalidator::new(model, clock);
        let mut vas =
            GpuVaSpace::create(&mut rm, rpc, device, MmuFormat::for_family(family), DmaTableMemory::new(arena.clone()))
                .expect("VA space");
        let config = ChannelConfig { gpfifo_entries: 16, pushbuffer_bytes: 4096, engine: ChannelEngine::Copy(0) };
        let mut ch =
            Channel::create(&mut rm, rpc, model, device, family, &mut vas, arena, &mut tlb, config).expect("channel");
        let scratch = ch.semaphore_va() + 64;
        // 300 submissions of ~100 words through a 1024-word ring, each checked.
        for i in 0..300u32 {
            let mut pb = ch.pushbuffer();
            pb.nops(90).expect("nops");
            pb.semaphore_release(scratch, i, false).expect("release");
            let f = ch.submit(model, &pb).expect("submit");
            ch.wait(f, clock, 1_000, || {}).expect("wait");
            assert_eq!(ch.read_semaphore(64), Some(i));
        }
        // Without waiting (the doorbell is dropped, so nothing completes), the ring fills and
        // submit refuses rather than overwrite.
        let quiet = DoorbellSwitch::quiet(model);
        let mut pb = ch.pushbuffer();
        pb.nops(200).expect("nops");
        let mut accepted = 0;
        let err = loop {
            match ch.submit(&quiet, &pb) {
                Ok(_) => accepted += 1,
                Err(e) => break e,
            }
            assert!(accepted < 100, "submit never refused");
        };
        assert!(matches!(err, ChannelError::Timeout { .. }), "{err}");
        assert!((1..=4).contains(&accepted), "{accepted} segments of 205 words fit a 1024-word ring");
    });
}
