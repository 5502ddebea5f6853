//! Interrupts end to end on model GPUs booted with the real firmware (TU102, GA100, GA102,
//! AD102, GH100): the driver asks GSP-RM for its interrupt table
//! (`NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE` on GSP-RM's internal subdevice) and enables
//! the notification vectors it names; a copy-engine channel copies, then pushes
//! `NON_STALL_INTERRUPT`; the model raises the copy engine's vector in the CPU interrupt tree,
//! the line goes up, and the driver's service routine (`nvgpu::intr`) sees exactly one event,
//! acknowledges it, and the line drops.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::ce::{CeAddress, CeClass, CeEncoder, Pipelining};
use nvgpu::channel::{Channel, ChannelConfig, ChannelEngine, GpuVaSpace, ENGINE_SUBCHANNEL};
use nvgpu::chip::Chipset;
use nvgpu::gsp::status::NvStatus;
use nvgpu::hw::host::method::NVC46F_NON_STALL_INTERRUPT;
use nvgpu::intr::{InterruptEvent, Interrupts};
use nvgpu::mm::{Aperture, DmaTableMemory, MmuFormat, PteAttrs, RegisterTlbInvalidator, VramAllocator};
use nvgpu::rm::fifo::{NV2080_ENGINE_TYPE_COPY0, NV2080_ENGINE_TYPE_GRAPHICS};
use nvgpu::rm::intr::{
    KernelIntrTable, Nv2080CtrlInternalIntrGetKernelTableParams, MC_ENGINE_IDX_CE0, MC_ENGINE_IDX_GR0,
    NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE, NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION,
};
use nvgpu::rm::{InternalSubdevice, RmClient, RmError};
use sim::ModelConfig;
use tests::model_boot::with_booted;

const TIMEOUT_MS: u64 = 1_000;

fn exercise(config: ModelConfig) {
    let chip = config.chipset;
    let family = chip.family();
    with_booted(config, |model, arena, clock, boot| {
        let info = boot.static_info().expect("static info");
        let fb_regions = info.fb_regions().to_vec();
        let internal = InternalSubdevice::from_static_info(info);
        let rpc = boot.rpc().expect("rpc");

        // GSP-RM's interrupt table, asked where RM's CPU side asks it.
        let table = KernelIntrTable::query(rpc, internal)
            .unwrap_or_else(|e| panic!("{chip:?}: {e}\nmodel: {:?}", model.errors()));
        let gr = table.entry(MC_ENGINE_IDX_GR0).expect("a record for GR0");
        let ce0_record = table.entry(MC_ENGINE_IDX_CE0).expect("a record for CE0");
        assert_eq!(gr.vector_non_stall, sim::intr::nonstall_vector(NV2080_ENGINE_TYPE_GRAPHICS), "{chip:?}");
        assert_eq!(ce0_record.vector_non_stall, sim::intr::nonstall_vector(NV2080_ENGINE_TYPE_COPY0), "{chip:?}");
        assert_eq!(table.subtree_map[NV2080_INTR_CATEGORY_ESCHED_DRIVEN_ENGINE_NOTIFICATION], Some((0, 0)));

        let mut rm = RmClient::new(rpc, 0).expect("client");
        let device = rm.alloc_device(rpc, &Default::default()).expect("device");
        let subdevice = rm.alloc_subdevice(rpc, device, &Default::default()).expect("subdevice");
        // An internal control (RMCTRL_FLAGS_INTERNAL) on a client of our own is refused.
        let mut params = Nv2080CtrlInternalIntrGetKernelTableParams::default();
        let refused = rm.control_typed(rpc, subdevice, NV2080_CTRL_CMD_INTERNAL_INTR_GET_KERNEL_TABLE, &mut params);
        assert!(
            matches!(refused, Err(RmError::Control { status: NvStatus::NV_ERR_NOT_SUPPORTED, .. })),
            "{chip:?}: {refused:?}"
        );
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

        let ce0 = NV2080_ENGINE_TYPE_COPY0;
        let intr = Interrupts::from_kernel_table(model, &table).expect("enable");
        let vector = intr.vector_of(ce0).expect("CE0 notification vector");
        assert_eq!(intr.vector_of(NV2080_ENGINE_TYPE_GRAPHICS), gr.vector_non_stall, "{chip:?}");
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
fn ga100_non_stall_interrupt() {
    exercise(ModelConfig::for_chipset(Chipset::GA100));
}

#[test]
fn ga102_non_stall_interrupt() {
    exercise(ModelConfig::rtx3090());
}

#[test]
fn ad102_non_stall_interrupt() {
    exercise(ModelConfig::rtx4090());
}

#[test]
fn gh100_non_stall_interrupt() {
    exercise(ModelConfig::h200());
}
