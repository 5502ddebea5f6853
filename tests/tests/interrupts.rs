//! Interrupts end to end on model GPUs booted with the real firmware (TU102, GA102, GH100):
//! a copy-engine channel copies, then pushes `NON_STALL_INTERRUPT`; the model raises the copy
//! engine's notification vector in the CPU interrupt tree, the line goes up, and the driver's
//! service routine (`nvgpu::intr`) sees exactly one event, acknowledges it, and the line drops.
//!
//! The vector comes from the model (`sim::intr::nonstall_vector`): RM reports it through
//! `NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE`, which the driver does not ask yet.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::ce::{CeAddress, CeClass, CeEncoder, Pipelining};
use nvgpu::channel::{Channel, ChannelConfig, ChannelEngine, GpuVaSpace, ENGINE_SUBCHANNEL};
use nvgpu::gsp::rm::RmClient;
use nvgpu::gsp::rm_fifo::NV2080_ENGINE_TYPE_COPY0;
use nvgpu::hw::host::method::NVC46F_NON_STALL_INTERRUPT;
use nvgpu::intr::{InterruptEvent, Interrupts};
use nvgpu::mm::{Aperture, DmaTableMemory, MmuFormat, PteAttrs, RegisterTlbInvalidator, VramAllocator};
use sim::ModelConfig;
use tests::model_boot::with_booted;

const TIMEOUT_MS: u64 = 1_000;

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
        let mut vas = GpuVaSpace::create(&mut rm, rpc, device, MmuFormat::for_family(family), DmaTableMemory::new(arena.clone()))
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
        let ce = CeEncoder::new(CeClass::from_class_number(copy.engine_class()).expect("copy class"), ENGINE_SUBCHANNEL);

        let ce0 = NV2080_ENGINE_TYPE_COPY0;
        let vector = sim::intr::nonstall_vector(ce0).expect("CE0 notification vector");
        let intr = Interrupts::enable(model, &[(ce0, vector)]).expect("enable");
        assert!(!model.interrupt_pending(), "{chip:?}: nothing raised yet");

        let mut vram = VramAllocator::from_fb_regions(&fb_regions, &[]).expect("VRAM allocator");
        let buf = vram.alloc(64 << 10, 64 << 10).expect("64 KiB");
        let map = vas.map(buf.base(), buf.size(), Aperture::Video, PteAttrs::default(), &mut tlb).expect("map");
        let data: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        assert!(model.vram_write(buf.base(), &data));

        // A copy, then the notification.
        let mut pb = copy.pushbuffer();
        let v = CeAddress::Virtual;
        ce.copy(&mut pb, v(map.va), v(map.va + 8192), 4096, Pipelining::NonPipelined).expect("copy");
        pb.incr(0, NVC46F_NON_STALL_INTERRUPT, &[0]).expect("NON_STALL_INTERRUPT");
        let fence = copy.submit(model, &pb).expect("submit");
        copy.wait(fence, clock, TIMEOUT_MS, || {}).unwrap_or_else(|e| panic!("{chip:?}: {e}\n{:?}", model.errors()));
        let mut seen = vec![0u8; 4096];
        assert!(model.vram_read(buf.base() + 8192, &mut seen));
        assert!(seen == data, "{chip:?}: the copy ran");

        assert!(model.interrupt_pending(), "{chip:?}: the line is up");
        assert_eq!(intr.service(model), vec![InterruptEvent::NonStall { engine: ce0, vector }], "{chip:?}");
        assert!(!model.interrupt_pending(), "{chip:?}: acknowledged");
        assert!(intr.service(model).is_empty(), "{chip:?}: exactly one event");

        // Disabled, a notification stays latched but does not raise the line.
        intr.disable(model);
        let mut pb = copy.pushbuffer();
        pb.incr(0, NVC46F_NON_STALL_INTERRUPT, &[0]).expect("NON_STALL_INTERRUPT");
        let fence = copy.submit(model, &pb).expect("submit");
        copy.wait(fence, clock, TIMEOUT_MS, || {}).expect("wait");
        assert!(!model.interrupt_pending(), "{chip:?}: disabled");
        assert_eq!(model.interrupts_raised(), 2);
        assert!(model.take_errors().is_empty(), "{chip:?}");
    });
}

#[test]
fn turing_non_stall_interrupt() {
    exercise(ModelConfig::rtx2080ti());
}

#[test]
fn ga102_non_stall_interrupt() {
    exercise(ModelConfig::rtx3090());
}

#[test]
fn gh100_non_stall_interrupt() {
    exercise(ModelConfig::h200());
}
