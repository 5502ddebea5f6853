//! The GPU model's GSP boot chain and GSP-RM (`sim::booter`, `sim::gsp_rm`), driven the way RM
//! drives real hardware, with no driver boot code: register pokes through the falcon driver
//! (`nvgpu::falcon`, for resets, uploads and starts) and DMA buffers laid out with `nvgpu::gsp`'s
//! structures (WPR metadata, radix3, LIBOS arguments, `GSP_ARGUMENTS_CACHED`, message queues,
//! RPC headers). The CPU side of the queues here is a minimal one of the test's own, so that the
//! model is checked against NVIDIA's layouts rather than against the driver's queue code.
//!
//! Tests that use NVIDIA's booter images read them from `target/real-data` (Debian
//! `firmware-nvidia-graphics`); they fail, never skip, when the files are missing: run
//! `sudo scripts/fetch-real-data.sh`.

use std::path::PathBuf;

use nvgpu::chip::Chipset;
use nvgpu::falcon::{BromParams, DmaSegment, DmaTarget, Engine, Falcon, FalconMemory, Fsp, Gsp, Mailboxes, Sec2};
use nvgpu::firmware::BooterFirmware;
use nvgpu::fwsec::{FwsecDescriptor, FwsecKind};
use nvgpu::gsp::fb_layout::{FirmwareImages, SysmemRegion, WprChipParams, WprLayoutInputs};
use nvgpu::gsp::fw::init_args::{GspArgumentsCached, MessageQueueInitArguments};
use nvgpu::gsp::fw::libos::{
    LibosMemoryRegionInitArgument, LIBOS_LOG_BUFFER_SIZE, LOGINIT_ID, LOGINTR_ID, LOGRM_ID, RMARGS_ID,
};
use nvgpu::gsp::fw::msgq::{
    seal_element, verify_element, MessageQueueLayout, MsgqTxHeader, GSP_MSG_QUEUE_ELEMENT_HDR_SIZE,
    GSP_MSG_QUEUE_ELEMENT_SIZE_MIN,
};
use nvgpu::gsp::fw::radix3::{build_radix3, Radix3Layout};
use nvgpu::gsp::fw::rpc::{RpcEvent, RpcFunction, RpcMessageHeader, RPC_MESSAGE_HEADER_SIZE};
use nvgpu::gsp::fw::wpr::GspFwWprMeta;
use nvgpu::gsp::status::NvStatus;
use nvgpu::hal::{self, FalconLayout};
use nvgpu::hw::boot::NV_FUSE_OPT_FPF_SEC2_UCODE1_VERSION;
use nvgpu::hw::engine::{NV_PGSP_MAILBOX, NV_PGSP_QUEUE_HEAD};
use nvgpu::hw::fw::FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS;
use nvgpu::hw::gc6::NV_PGC6_BSI_SECURE_SCRATCH_14;
use nvgpu::hw::RegisterIo;
use nvgpu::platform::{DmaAllocator, DmaBuffer};
use nvgpu::vbios::Vbios;
use sim::booter::{build_model_booter, load_style, BooterLoadStyle};
use sim::gsp_rm::image::build_model_image;
use sim::gsp_rm::payloads::*;
use sim::gsp_rm::sequencer;
use sim::zerocopy::{FromBytes, IntoBytes};
use sim::{
    BootSequencer, BooterError, BooterKind, DmaArena, GspFault, GspRmError, GspRmStatus, HaltCode, ModelError,
    ModelGpu, RegistryValue,
};
use tests::model_boot::ModelClock;

// ---------------------------------------------------------------------------------------------
// Plumbing.

const TIMEOUT_MS: u64 = 100;
const PAGE: usize = 4096;

fn falcon<E: Engine>(model: &ModelGpu) -> Falcon<&ModelGpu, ModelClock, E> {
    Falcon::new(model, ModelClock::default(), hal::for_chipset(model.chipset())).expect("falcon listed")
}

fn real_data() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

/// A Debian booter file, or a failure that says how to get it.
fn debian_booter(chip: &str, kind: &str) -> Vec<u8> {
    let path =
        real_data().join(format!("firmware-nvidia-graphics/lib/firmware/nvidia/{chip}/gsp/{kind}-535.113.01.bin"));
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "missing real data {} ({e}): NVIDIA's booter from Debian firmware-nvidia-graphics. \
             Run `sudo scripts/fetch-real-data.sh` from the workspace root; this test never passes without it.",
            path.display()
        )
    })
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

// ---------------------------------------------------------------------------------------------
// The CPU side of the message queues, from `nvgpu::gsp::fw::msgq` and `msgq.c`'s rules.

struct CpuQueues {
    block: DmaBuffer,
    layout: MessageQueueLayout,
    cmd_seq: u32,
    stat_seq: u32,
    stat_read: u32,
}

impl CpuQueues {
    /// `GspMsgQueuesInit`: one contiguous block, page table, command queue header.
    fn new(arena: &DmaArena) -> Self {
        let layout = MessageQueueLayout::rm_default();
        let mut block = arena.alloc(layout.shared_size() as usize).unwrap();
        let bus = block.bus_address();
        let pages: Vec<u64> = (0..layout.page_count()).map(|i| bus + i * PAGE as u64).collect();
        let table_len = layout.page_table_size as usize;
        let mut table = vec![0u8; table_len];
        layout.write_page_table(&pages, &mut table).unwrap();
        block.write(0, &table).unwrap();
        let tx = MsgqTxHeader::gsp_queue(layout.command_queue_size as u32).unwrap();
        let cmd = layout.cmd_queue_offset() as usize;
        block.write_struct(cmd, &tx).unwrap();
        Self { block, layout, cmd_seq: 0, stat_seq: 0, stat_read: 0 }
    }

    fn init_args(&self) -> MessageQueueInitArguments {
        MessageQueueInitArguments::new(self.block.bus_address(), &self.layout)
    }

    fn u32_at(&self, at: usize) -> u32 {
        self.block.read_u32(at).unwrap()
    }

    fn cmd(&self) -> usize {
        self.layout.cmd_queue_offset() as usize
    }

    fn stat(&self) -> usize {
        self.layout.stat_queue_offset() as usize
    }

    fn cmd_write_ptr(&self) -> u32 {
        self.u32_at(self.cmd() + 16)
    }

    fn set_u32(&mut self, at: usize, value: u32) {
        self.block.write_u32(at, value).unwrap();
    }

    /// GSP-RM's read pointer of the command queue (in the status queue's header page).
    fn gsp_read_ptr(&self) -> u32 {
        self.u32_at(self.stat() + 32)
    }

    /// Writes a raw record (already sealed, whole entries) and advances `writePtr`; no doorbell.
    fn push_record(&mut self, record: &[u8]) {
        let count = 63;
        let mut write = self.cmd_write_ptr();
        for chunk in record.chunks(PAGE) {
            let at = self.cmd() + PAGE + write as usize * PAGE;
            self.block.write(at, chunk).unwrap();
            write = (write + 1) % count;
        }
        let cmd = self.cmd();
        self.set_u32(cmd + 16, write);
    }

    /// A sealed record for `function` with `params` and `header` edits.
    fn record(&mut self, function: u32, params: &[u8], edit: impl FnOnce(&mut RpcMessageHeader)) -> Vec<u8> {
        let mut header = RpcMessageHeader::request(function, params.len() as u32).unwrap();
        edit(&mut header);
        let size = GSP_MSG_QUEUE_ELEMENT_HDR_SIZE as usize + RPC_MESSAGE_HEADER_SIZE as usize + params.len();
        let mut record = vec![0u8; size.div_ceil(PAGE) * PAGE];
        record[48..80].copy_from_slice(header.as_bytes());
        record[80..80 + params.len()].copy_from_slice(params);
        seal_element(&mut record, self.cmd_seq).unwrap();
        self.cmd_seq += 1;
        record
    }

    /// `GspMsgQueueSendCommand` then the doorbell (`kgspSetCmdQueueHead_TU102`).
    fn send(&mut self, model: &ModelGpu, function: RpcFunction, params: &[u8]) {
        let record = self.record(function.raw(), params, |_| {});
        self.push_record(&record);
        model.write32(NV_PGSP_QUEUE_HEAD::OFFSET, 0);
    }

    /// `msgqRxLink` on the CPU side: checks GSP-RM's status queue header, zeroes our read pointer.
    fn link_status_queue(&mut self) {
        let header = self.block.read_struct::<MsgqTxHeader>(self.stat()).unwrap();
        header.check_peer(self.layout.status_queue_size as u32, GSP_MSG_QUEUE_ELEMENT_SIZE_MIN).unwrap();
        let cmd = self.cmd();
        self.set_u32(cmd + 32, 0);
        self.stat_read = 0;
    }

    fn stat_write_ptr(&self) -> u32 {
        self.u32_at(self.stat() + 16)
    }

    /// One status record, raw (whole entries), consumed; `None` when the queue is empty.
    fn receive_raw(&mut self, model: &ModelGpu) -> Option<Vec<u8>> {
        // RM's receive loop reads NV_PGSP_MAILBOX(0) every turn (kgspHealthCheck_TU102).
        model.read32(NV_PGSP_MAILBOX::OFFSET);
        let count = 63;
        if self.stat_write_ptr() == self.stat_read {
            return None;
        }
        let first = self.stat() + PAGE + self.stat_read as usize * PAGE;
        let elements = self.u32_at(first + 40);
        let mut record = Vec::new();
        for i in 0..elements {
            let at = self.stat() + PAGE + ((self.stat_read + i) % count) as usize * PAGE;
            record.extend_from_slice(&self.block.read_vec(at, PAGE).unwrap());
        }
        self.stat_read = (self.stat_read + elements) % count;
        let cmd = self.cmd();
        let read = self.stat_read;
        self.set_u32(cmd + 32, read);
        Some(record)
    }

    /// One status message, checked (checksum, seqNum, header); `None` when empty.
    fn receive(&mut self, model: &ModelGpu) -> Option<(RpcMessageHeader, Vec<u8>)> {
        let record = self.receive_raw(model)?;
        let received = verify_element(&record).expect("status record verifies");
        assert_eq!(received.element.seq_num, self.stat_seq, "status seqNum");
        self.stat_seq += 1;
        received.element.rpc.check().unwrap();
        Some((received.element.rpc, received.params.to_vec()))
    }

    /// Sends and waits for the reply (RM's `_issueRpcAndWait`).
    fn call(&mut self, model: &ModelGpu, function: RpcFunction, params: &[u8]) -> (RpcMessageHeader, Vec<u8>) {
        self.send(model, function, params);
        let (header, reply) = self.receive(model).expect("a reply");
        assert_eq!(header.function, function.raw());
        (header, reply)
    }
}

// ---------------------------------------------------------------------------------------------
// Boot data in system memory.

/// Which booter to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Booter {
    Model,
    Debian,
}

struct Rig {
    model: ModelGpu,
    arena: DmaArena,
    keep: Vec<DmaBuffer>,
    queues: CpuQueues,
    meta: GspFwWprMeta,
    meta_bus: u64,
    libos_bus: u64,
}

fn debian_dir(chipset: Chipset) -> &'static str {
    match chipset {
        Chipset::TU102 => "tu102",
        Chipset::GA100 => "ga100",
        Chipset::GA102 => "ga102",
        Chipset::AD102 => "ad102",
        other => panic!("no Debian booter directory chosen for {other}"),
    }
}

impl Rig {
    fn new(model: ModelGpu) -> Self {
        let arena = DmaArena::new();
        model.set_system_memory(Box::new(arena.clone()));
        let queues = CpuQueues::new(&arena);
        let mut rig =
            Rig { model, arena, keep: Vec::new(), queues, meta: GspFwWprMeta::default(), meta_bus: 0, libos_bus: 0 };
        rig.lay_out();
        rig
    }

    fn alloc(&mut self, bytes: &[u8]) -> u64 {
        let mut buffer = self.arena.alloc(bytes.len().max(1)).unwrap();
        buffer.write(0, bytes).unwrap();
        let bus = buffer.bus_address();
        self.keep.push(buffer);
        bus
    }

    /// The GSP-RM image behind radix3 (pages allocated one by one, so not contiguous).
    fn radix3(&mut self, image: &[u8]) -> u64 {
        let layout = Radix3Layout::new(image.len() as u64).unwrap();
        let pages: Vec<u64> = (0..layout.total_pages()).map(|_| self.alloc(&[0u8; PAGE])).collect();
        let mut tables = vec![0u8; layout.table_bytes() as usize];
        build_radix3(&layout, &pages, &mut tables).unwrap();
        let mut content = tables;
        content.extend_from_slice(image);
        content.resize(layout.total_pages() as usize * PAGE, 0);
        for (page, chunk) in pages.iter().zip(content.chunks(PAGE)) {
            assert!(self.arena.write_bus(*page, chunk));
        }
        pages[0]
    }

    /// WPR metadata, radix3 image, boot binary, signature, LIBOS arguments and RMARGS.
    fn lay_out(&mut self) {
        let chipset = self.model.chipset();
        let image = build_model_image(chipset, 3 * PAGE + 123).unwrap();
        let radix3 = self.radix3(&image);
        let bootloader = self.alloc(&[0xB1; 0x3000]);
        let signature = self.alloc(&[0x5A; 0x1000]);
        let images = FirmwareImages {
            radix3_elf_addr: radix3,
            elf_size: image.len() as u64,
            bootloader: SysmemRegion { addr: bootloader, size: 0x3000 },
            bootloader_code_offset: 0,
            bootloader_data_offset: 0x1000,
            bootloader_manifest_offset: 0x2000,
            signature: Some(SysmemRegion { addr: signature, size: 0x1000 }),
            crash_report_queue: None,
        };
        let params = WprChipParams::for_chipset(chipset).unwrap();
        let inputs = WprLayoutInputs {
            usable_fb_size: self.model.config().vram_bytes,
            vga_workspace_base: None,
            mmu_lock: None,
            images,
        };
        self.meta = GspFwWprMeta::layout(&params, &inputs).unwrap();
        let meta = self.meta;
        self.meta_bus = self.alloc(meta.as_bytes());

        let log = |rig: &mut Rig| rig.alloc(&vec![0u8; LIBOS_LOG_BUFFER_SIZE as usize]);
        let (loginit, logintr, logrm) = (log(self), log(self), log(self));
        let rmargs = GspArgumentsCached::cold_boot(self.queues.init_args(), 0);
        let rmargs = self.alloc(&{
            let mut page = rmargs.as_bytes().to_vec();
            page.resize(PAGE, 0);
            page
        });
        let mut table = Vec::new();
        for (id, pa, size) in [
            (LOGINIT_ID, loginit, LIBOS_LOG_BUFFER_SIZE),
            (LOGINTR_ID, logintr, LIBOS_LOG_BUFFER_SIZE),
            (LOGRM_ID, logrm, LIBOS_LOG_BUFFER_SIZE),
            (RMARGS_ID, rmargs, PAGE as u64),
        ] {
            table.extend_from_slice(LibosMemoryRegionInitArgument::contiguous_sysmem(id, pa, size).as_bytes());
        }
        table.resize(PAGE, 0);
        self.libos_bus = self.alloc(&table);
    }

    /// Rewrites the WPR metadata in system memory (after a test changed `meta`).
    fn rewrite_meta(&mut self) {
        assert!(self.arena.write_bus(self.meta_bus, self.meta.as_bytes()));
    }

    /// FWSEC-FRTS from the model VBIOS on GSP, by DMA, as RM does on GA10x/Ada: WPR2 = FRTS.
    fn run_fwsec_frts(&mut self) {
        let mailbox0 = tests::fwsec_frts::run_on_gsp(
            &self.model,
            &self.arena,
            self.meta.frts_offset,
            TIMEOUT_MS,
            |fwsec, fuse| fwsec.signature_for_fuse_version(fuse).unwrap().to_vec(),
        );
        assert_eq!(mailbox0, 0, "FWSEC-FRTS");
        let frts_end = self.meta.frts_offset + self.meta.frts_size - 1;
        assert_eq!(self.model.wpr2(), Some((self.meta.frts_offset, frts_end)));
    }

    /// RM's steps between FWSEC and the booter: reset GSP into RISC-V (GA102+), queue the boot
    /// RPCs, LIBOS arguments into GSP's mailboxes.
    fn prepare_gsp(&mut self, registry: bool) {
        let gsp = falcon::<Gsp>(&self.model);
        if hal::for_chipset(self.model.chipset()).falcon_layout == FalconLayout::Ga102 {
            gsp.reset_into_riscv(false).unwrap();
            // The core switch completes on the next poll (RM waits for VALID).
            self.model.read32(nvgpu::hw::engine::NV_FALCON2_GSP_BASE + 0x668);
        } else {
            gsp.reset().unwrap();
        }
        self.queues.send(&self.model, RpcFunction::GspSetSystemInfo, &system_info(&self.model));
        if registry {
            self.queues.send(&self.model, RpcFunction::SetRegistry, &registry_table());
        }
        gsp.write_mailboxes(Mailboxes { mailbox0: self.libos_bus as u32, mailbox1: (self.libos_bus >> 32) as u32 });
    }

    /// SEC2 runs `file` (a booter in NVIDIA's layout) with `mailboxes`, loaded as RM loads it
    /// (`kgspExecuteHsFalcon_GA102` / `s_prepareHsFalconDirect`); returns MAILBOX0.
    fn run_booter_file(&mut self, file: &[u8], mailboxes: Mailboxes) -> u32 {
        let model = &self.model;
        let booter = BooterFirmware::parse(file).unwrap();
        let ucode_id = booter.meta.ucode_id;
        let fuse = if model.chipset().family() == nvgpu::hal::Family::Turing {
            0
        } else {
            model.read32(NV_FUSE_OPT_FPF_SEC2_UCODE1_VERSION::OFFSET + 4 * (ucode_id - 1)) & 0xffff
        };
        let fuse_version = 32 - fuse.leading_zeros();
        let image = booter.patched_image(fuse_version).unwrap();
        let load = booter.load;
        let sec2 = falcon::<Sec2>(model);
        sec2.reset().unwrap();
        let bootvec = match load_style(model.chipset()) {
            BooterLoadStyle::FromHs => {
                let mut buffer = self.arena.alloc(image.len().next_multiple_of(256)).unwrap();
                buffer.write(0, &image).unwrap();
                let segments = [
                    DmaSegment {
                        memory: FalconMemory::Imem { secure: true },
                        source_offset: load.app_code_offset,
                        falcon_offset: 0,
                        len: load.app_code_size,
                        virtual_address: Some(load.app_code_offset),
                    },
                    DmaSegment {
                        memory: FalconMemory::Dmem,
                        source_offset: load.os_data_offset,
                        falcon_offset: 0,
                        len: load.os_data_size,
                        virtual_address: None,
                    },
                ];
                sec2.load_dma(&buffer, DmaTarget::CoherentSysmem, &segments).unwrap();
                self.keep.push(buffer);
                sec2.program_brom(&BromParams {
                    signature_dmem_offset: booter.signature_dmem_offset(),
                    engine_id_mask: booter.meta.engine_id_mask,
                    ucode_id: ucode_id as u8,
                })
                .unwrap();
                load.app_code_offset
            }
            BooterLoadStyle::Direct => {
                let os_code = &image[load.os_code_offset as usize..(load.os_code_offset + load.os_code_size) as usize];
                sec2.load_imem(0, os_code, load.os_code_offset, false).unwrap();
                let app = &image[load.app_code_offset as usize..(load.app_code_offset + load.app_code_size) as usize];
                sec2.load_imem(load.os_code_size.next_multiple_of(256), app, load.app_code_offset, true).unwrap();
                let data = &image[load.os_data_offset as usize..(load.os_data_offset + load.os_data_size) as usize];
                sec2.load_dmem(0, data).unwrap();
                0
            }
        };
        sec2.execute(bootvec, mailboxes, TIMEOUT_MS).unwrap().mailbox0
    }

    fn booter_file(&self, booter: Booter, kind: BooterKind) -> Vec<u8> {
        let chipset = self.model.chipset();
        match booter {
            Booter::Model => build_model_booter(chipset, kind, false),
            Booter::Debian => debian_booter(
                debian_dir(chipset),
                if kind == BooterKind::Load { "booter_load" } else { "booter_unload" },
            ),
        }
    }

    /// booter_load with the metadata's bus address in SEC2's mailboxes; returns MAILBOX0.
    fn booter_load(&mut self, booter: Booter) -> u32 {
        let file = self.booter_file(booter, BooterKind::Load);
        let mailboxes = Mailboxes { mailbox0: self.meta_bus as u32, mailbox1: (self.meta_bus >> 32) as u32 };
        self.run_booter_file(&file, mailboxes)
    }

    fn riscv_active(&self) -> bool {
        falcon::<Gsp>(&self.model).is_riscv_active()
    }

    /// FWSEC-FRTS, GSP prepared, booter_load, status queue linked.
    fn boot(&mut self, booter: Booter) {
        self.run_fwsec_frts();
        self.prepare_gsp(true);
        assert_eq!(self.booter_load(booter), 0, "booter_load MAILBOX0 ({:x?})", self.model.errors());
        assert!(self.riscv_active(), "GSP RISC-V active after booter_load");
        self.queues.link_status_queue();
    }

    /// `kgspExecuteSequencerBuffer`, as RM runs it.
    fn execute_sequencer(&mut self, params: &[u8]) {
        let header = RpcRunCpuSequencerV17_00::read_from_prefix(params).unwrap().0;
        assert!(header.cmd_index < header.buffer_size_dword, "kgspExecuteSequencerBuffer's check");
        let words: Vec<u32> = params[40..].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        let mut i = 0;
        while i < header.cmd_index as usize {
            let op = SeqOpcode::from_raw(words[i]).expect("a sequencer opcode");
            let n = op.payload_dwords();
            let p = &words[i + 1..i + 1 + n];
            match op {
                SeqOpcode::RegWrite => self.model.write32(p[0], p[1]),
                SeqOpcode::RegModify => {
                    let value = (self.model.read32(p[0]) & !p[1]) | p[2];
                    self.model.write32(p[0], value);
                }
                SeqOpcode::RegPoll => {
                    let mut tries = 0;
                    while self.model.read32(p[0]) & p[1] != p[2] {
                        tries += 1;
                        assert!(tries < 100, "REG_POLL timed out with error {:#x}", p[4]);
                    }
                }
                SeqOpcode::DelayUs => {}
                SeqOpcode::CoreResume => self.core_resume(),
                other => panic!("{} not expected in the model's script", other.nvidia_name()),
            }
            i += 1 + n;
        }
    }

    /// `kgspExecuteSequencerCommand_GA102(CORE_RESUME)`.
    fn core_resume(&mut self) {
        let gsp = falcon::<Gsp>(&self.model);
        if hal::for_chipset(self.model.chipset()).falcon_layout == FalconLayout::Ga102 {
            gsp.reset_into_riscv(false).unwrap();
            self.model.read32(nvgpu::hw::engine::NV_FALCON2_GSP_BASE + 0x668);
        } else {
            gsp.reset().unwrap();
        }
        gsp.write_mailboxes(Mailboxes { mailbox0: self.libos_bus as u32, mailbox1: (self.libos_bus >> 32) as u32 });
        let sec2 = falcon::<Sec2>(&self.model);
        sec2.start();
        let mut polls = 0;
        while !NV_PGC6_BSI_SECURE_SCRATCH_14::read(&self.model).boot_stage_3_handoff() {
            polls += 1;
            assert!(polls < 100, "SEC2 never resumed GSP-RM");
        }
        assert_eq!(sec2.mailboxes().mailbox0, 0, "SEC2 MAILBOX0 after the resume");
        assert!(self.riscv_active());
    }

    /// Waits for `GSP_INIT_DONE`, executing the sequencer on the way (`kgspWaitForRmInitDone`).
    fn wait_init_done(&mut self) -> RpcMessageHeader {
        for _ in 0..10 {
            match self.queues.receive(&self.model) {
                Some((h, p)) if h.function == RpcEvent::GspRunCpuSequencer.raw() => self.execute_sequencer(&p),
                Some((h, _)) if h.function == RpcEvent::GspInitDone.raw() => return h,
                Some((h, _)) => panic!("unexpected message {:#x}", h.function),
                None => {}
            }
        }
        panic!("no GSP_INIT_DONE; errors: {:x?}", self.model.errors());
    }

    fn booted(model: ModelGpu, booter: Booter) -> Rig {
        let mut rig = Rig::new(model);
        rig.boot(booter);
        let done = rig.wait_init_done();
        assert_eq!(done.rpc_result, 0);
        assert_eq!(rig.model.errors(), vec![]);
        rig
    }

    fn alloc_rpc(&mut self, client: u32, parent: u32, object: u32, class: u32, params: &[u8]) -> (u32, u32) {
        let request = RpcGspRmAllocV03_00 {
            h_client: client,
            h_parent: parent,
            h_object: object,
            h_class: class,
            status: 0,
            params_size: params.len() as u32,
            flags: 0,
            reserved: [0; 4],
        };
        let mut bytes = request.as_bytes().to_vec();
        bytes.extend_from_slice(params);
        let (header, reply) = self.queues.call(&self.model, RpcFunction::GspRmAlloc, &bytes);
        (header.rpc_result, u32_at(&reply, 16))
    }

    fn free_rpc(&mut self, client: u32, parent: u32, object: u32) -> (u32, u32) {
        let request = RpcFreeV03_00 {
            params: Nvos00ParametersV03_00 { h_root: client, h_object_parent: parent, h_object_old: object, status: 0 },
        };
        let (header, reply) = self.queues.call(&self.model, RpcFunction::Free, request.as_bytes());
        (header.rpc_result, u32_at(&reply, 12))
    }

    fn control_rpc(&mut self, client: u32, object: u32, cmd: u32, params: &[u8]) -> (u32, Vec<u8>) {
        let request = RpcGspRmControlV03_00 {
            h_client: client,
            h_object: object,
            cmd,
            status: 0,
            params_size: params.len() as u32,
            flags: 0,
        };
        let mut bytes = request.as_bytes().to_vec();
        bytes.extend_from_slice(params);
        let (header, reply) = self.queues.call(&self.model, RpcFunction::GspRmControl, &bytes);
        assert_eq!(u32_at(&reply, 12), header.rpc_result, "status in the parameters too");
        (header.rpc_result, reply[24..].to_vec())
    }
}

trait WriteBus {
    fn write_bus(&self, bus: u64, data: &[u8]) -> bool;
}

impl WriteBus for DmaArena {
    fn write_bus(&self, bus: u64, data: &[u8]) -> bool {
        sim::SystemMemory::write(self, bus, data)
    }
}

/// A packed registry table with one DWORD and one STRING entry.
fn registry_table() -> Vec<u8> {
    let names = b"RMSecBusResetEnable\0RmModelNote\0";
    let string = b"hello\0";
    let header_and_entries = 8 + 2 * 16;
    let size = header_and_entries + names.len() + string.len();
    let mut table = Vec::new();
    table.extend_from_slice(PackedRegistryTable { size: size as u32, num_entries: 2 }.as_bytes());
    let name1 = header_and_entries as u32;
    let name2 = name1 + 20;
    let data = (header_and_entries + names.len()) as u32;
    table.extend_from_slice(
        PackedRegistryEntry {
            name_offset: name1,
            type_: REGISTRY_TABLE_ENTRY_TYPE_DWORD,
            _padding: [0; 3],
            data: 1,
            length: 4,
        }
        .as_bytes(),
    );
    table.extend_from_slice(
        PackedRegistryEntry {
            name_offset: name2,
            type_: REGISTRY_TABLE_ENTRY_TYPE_STRING,
            _padding: [0; 3],
            data,
            length: string.len() as u32,
        }
        .as_bytes(),
    );
    table.extend_from_slice(names);
    table.extend_from_slice(string);
    assert_eq!(table.len(), size);
    table
}

/// `GspSystemInfo` (672 bytes) as the CPU sends it, written here by the header's offsets
/// (`gsp_static_config.h`: `gpuPhysAddr` at 0, `gpuPhysFbAddr` at 8, `gpuPhysInstAddr` at 16,
/// `nvDomainBusDeviceFunc` at 24) with where the model's board is on PCI; everything else 0.
fn system_info(model: &ModelGpu) -> Vec<u8> {
    let p = model.config().placement;
    let bdf =
        (u64::from(p.segment) << 32) | (u64::from(p.bus) << 8) | (u64::from(p.device) << 3) | u64::from(p.function);
    let mut info = vec![0u8; GSP_SYSTEM_INFO_SIZE];
    for (at, value) in [(0, p.bar0), (8, p.bar1), (16, p.bar2), (24, bdf)] {
        info[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }
    info
}

fn gsp_rm_errors(model: &ModelGpu) -> Vec<GspRmError> {
    model.take_errors().into_iter().filter_map(|e| if let ModelError::GspRm(e) = e { Some(e) } else { None }).collect()
}

// ---------------------------------------------------------------------------------------------
// Booter.

#[test]
fn model_booter_boots_gsp_rm_on_ga10x_and_ada() {
    for model in [ModelGpu::rtx3090(), ModelGpu::rtx4090()] {
        let name = model.config().board_name.unwrap_or("?");
        let mut rig = Rig::new(model);
        rig.boot(Booter::Model);
        assert_eq!(
            rig.model.wpr2(),
            Some((rig.meta.gsp_fw_wpr_start, rig.meta.gsp_fw_wpr_end - 1)),
            "{name}: booter widens WPR2 to the GSP-RM region"
        );
        assert_eq!(rig.model.gsp_rm_status(), GspRmStatus::Running { init_done: false });
        let done = rig.wait_init_done();
        assert_eq!(done.rpc_result, 0, "{name}");
        assert_eq!(rig.model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
        assert_eq!(rig.model.errors(), vec![], "{name}");
        let registry = rig.model.gsp_registry();
        assert_eq!(registry.len(), 2);
        assert_eq!(registry[0].name, "RMSecBusResetEnable");
        assert_eq!(registry[0].value, RegistryValue::Dword(1));
        assert_eq!(registry[1].value, RegistryValue::String(b"hello\0".to_vec()));
    }
}

#[test]
fn debian_booters_are_recognised_and_boot_gsp_rm() {
    for model in [ModelGpu::rtx3090(), ModelGpu::rtx4090()] {
        let mut rig = Rig::new(model);
        rig.boot(Booter::Debian);
        assert_eq!(rig.wait_init_done().rpc_result, 0);
        assert_eq!(rig.model.errors(), vec![]);
    }
}

#[test]
fn debian_booter_signature_follows_the_sec2_fuse() {
    // GA102's booter carries two signatures; fuse version 1 takes the first (num_sigs - 1 - 1).
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.model.set_sec2_ucode_fuse(3, 0b1);
    rig.run_fwsec_frts();
    rig.prepare_gsp(true);
    assert_eq!(rig.booter_load(Booter::Debian), 0);
    assert_eq!(rig.model.errors(), vec![]);

    // A signature for another fuse version: the boot ROM rejects it, nothing happens.
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.run_fwsec_frts();
    rig.prepare_gsp(true);
    let mut file = debian_booter("ga102", "booter_load");
    let booter = BooterFirmware::parse(&file).unwrap();
    let (first, second) = (booter.signature(0).unwrap().to_vec(), booter.signature(1).unwrap().to_vec());
    // Swap the two signatures in the file so the driver's rule picks the wrong one.
    let at = booter.hs.sig_prod_offset as usize;
    file[at..at + first.len()].copy_from_slice(&second);
    file[at + first.len()..at + 2 * first.len()].copy_from_slice(&first);
    let mailboxes = Mailboxes { mailbox0: rig.meta_bus as u32, mailbox1: (rig.meta_bus >> 32) as u32 };
    assert_eq!(rig.run_booter_file(&file, mailboxes), HaltCode::SignatureRejected.value());
    assert!(!rig.riscv_active());
}

#[test]
fn debian_booters_of_other_chips_are_fingerprinted() {
    // Every Debian booter_load/unload matches the model's table entry for its chip (the
    // fingerprint table was computed from these files).
    for fp in sim::booter::KNOWN_BOOTERS {
        let path = real_data().join("firmware-nvidia-graphics/lib/firmware").join(fp.file);
        let file = std::fs::read(&path).unwrap_or_else(|e| {
            panic!("missing real data {} ({e}): run `sudo scripts/fetch-real-data.sh`", path.display())
        });
        let booter = BooterFirmware::parse(&file).unwrap();
        let image = booter.image();
        let app = &image[booter.load.app_code_offset as usize..][..booter.load.app_code_size as usize];
        assert_eq!(sim::booter::fnv1a64(app), fp.app_code_fnv64, "{}", fp.file);
        assert_eq!(booter.signature_dmem_offset(), fp.signature_dmem_offset, "{}", fp.file);
        assert_eq!(booter.num_signatures as usize, fp.signature_fnv64.len(), "{}", fp.file);
        for (i, &hash) in fp.signature_fnv64.iter().enumerate() {
            assert_eq!(sim::booter::fnv1a64(booter.signature(i as u32).unwrap()), hash, "{}", fp.file);
        }
    }
}

#[test]
fn turing_booter_runs_direct_loaded() {
    // Turing: no FRTS check change, booter loaded by PIO (os code, then secure app code).
    for booter in [Booter::Model, Booter::Debian] {
        let mut rig = Rig::new(ModelGpu::rtx2080ti());
        rig.run_fwsec_frts_turing();
        rig.prepare_gsp(true);
        assert_eq!(rig.booter_load(booter), 0, "{booter:?}: {:x?}", rig.model.errors());
        assert!(rig.riscv_active());
        rig.queues.link_status_queue();
        assert_eq!(rig.wait_init_done().rpc_result, 0);
        assert_eq!(rig.model.errors(), vec![], "{booter:?}");
    }
}

impl Rig {
    /// Turing's FWSEC has a v2 descriptor and no PKC: the test sets WPR2 the way FWSEC-FRTS does,
    /// through the model's FWSEC run on GSP by PIO.
    fn run_fwsec_frts_turing(&mut self) {
        let model = &self.model;
        let vbios = Vbios::from_prom(model).unwrap();
        let fwsec = vbios.fwsec(FwsecKind::Prod).unwrap();
        let FwsecDescriptor::V2(desc) = fwsec.descriptor else { panic!("Turing FWSEC has a v2 descriptor") };
        let mut dmem = fwsec.dmem().to_vec();
        let init_cmd = fwsec.dmem_mapper.init_cmd_dmem_offset() as usize;
        dmem[init_cmd..init_cmd + 4]
            .copy_from_slice(&FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS.to_le_bytes());
        let cmd = sim::fwsec::frts_command_bytes(self.meta.frts_offset);
        let cmd_at = fwsec.dmem_mapper.cmd_in_buffer_offset as usize;
        dmem[cmd_at..cmd_at + cmd.len()].copy_from_slice(&cmd);
        let gsp = falcon::<Gsp>(model);
        gsp.reset().unwrap();
        gsp.load_imem(desc.imem_phys_base, fwsec.imem(), desc.imem_virt_base, true).unwrap();
        gsp.load_dmem(desc.dmem_phys_base, &dmem).unwrap();
        let out = gsp.execute(desc.imem_virt_base, Mailboxes::default(), TIMEOUT_MS).unwrap();
        assert_eq!(out.mailbox0, 0, "FWSEC-FRTS on Turing: {:x?}", model.errors());
    }
}

#[test]
fn wpr_meta_violations_halt_the_booter_with_an_error() {
    type Edit = fn(&mut GspFwWprMeta);
    type Expect = fn(&BooterError) -> bool;
    let cases: &[(&str, Edit, Expect)] = &[
        ("magic", |m| m.magic ^= 1, |e| matches!(e, BooterError::BadMagic { .. })),
        ("revision", |m| m.revision = 2, |e| matches!(e, BooterError::BadRevision { .. })),
        ("verified", |m| m.verified = u64::MAX, |e| matches!(e, BooterError::NotZero { field: "verified", .. })),
        ("heap alignment", |m| m.gsp_fw_heap_offset += 0x1000, |e| matches!(e, BooterError::Layout { .. })),
        (
            "image overlaps boot binary",
            |m| m.gsp_fw_offset = m.boot_bin_offset,
            |e| matches!(e, BooterError::Layout { .. }),
        ),
        ("fb beyond VRAM", |m| m.fb_size = 1 << 50, |e| matches!(e, BooterError::Layout { .. })),
        (
            "FRTS elsewhere than WPR2",
            |m| {
                m.frts_offset -= 0x10_0000;
                m.gsp_fw_wpr_end -= 0x10_0000;
            },
            |e| matches!(e, BooterError::Wpr2NotFrts { .. } | BooterError::Layout { .. }),
        ),
        (
            "radix3 size",
            |m| m.size_of_radix3_elf += 8192,
            |e| matches!(e, BooterError::Radix3 { .. } | BooterError::Layout { .. }),
        ),
        ("image size in header", |m| m.size_of_radix3_elf -= 1, |e| matches!(e, BooterError::NotGspRm { .. })),
        (
            "bootloader offsets",
            |m| m.bootloader_manifest_offset = m.size_of_bootloader,
            |e| matches!(e, BooterError::Layout { .. }),
        ),
        (
            "signature unreadable",
            |m| m.signature.sysmem_addr_of_signature = 0x1000,
            |e| matches!(e, BooterError::Unreadable { .. }),
        ),
    ];
    for (name, edit, expect) in cases {
        let mut rig = Rig::new(ModelGpu::rtx3090());
        rig.run_fwsec_frts();
        rig.prepare_gsp(true);
        edit(&mut rig.meta);
        rig.rewrite_meta();
        let wpr2 = rig.model.wpr2();
        let mailbox0 = rig.booter_load(Booter::Model);
        let errors = rig.model.take_errors();
        let error = errors.iter().find_map(|e| if let ModelError::Booter(b) = e { Some(*b) } else { None });
        let error = error.unwrap_or_else(|| panic!("{name}: no booter error in {errors:x?}"));
        assert!(expect(&error), "{name}: {error}");
        assert_eq!(mailbox0, error.mailbox0(), "{name}");
        assert_ne!(mailbox0, 0, "{name}");
        assert!(!rig.riscv_active(), "{name}: GSP not started");
        assert_eq!(rig.model.wpr2(), wpr2, "{name}: WPR2 unchanged");
        assert_eq!(rig.model.gsp_rm_status(), GspRmStatus::Off);
    }
}

#[test]
fn booter_refuses_a_missing_frts_and_a_gsp_on_the_falcon_core() {
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.prepare_gsp(true);
    assert_ne!(rig.booter_load(Booter::Model), 0);
    assert!(matches!(rig.model.take_errors()[..], [ModelError::Booter(BooterError::Wpr2NotFrts { found: None, .. })]));

    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.run_fwsec_frts();
    rig.prepare_gsp(true);
    falcon::<Gsp>(&rig.model).reset().unwrap(); // back to the falcon core
    rig.model.take_errors();
    assert_ne!(rig.booter_load(Booter::Model), 0);
    assert!(matches!(rig.model.take_errors()[..], [ModelError::Booter(BooterError::GspNotReady { .. })]));
}

#[test]
fn unrecognised_code_on_sec2_is_not_a_booter() {
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.run_fwsec_frts();
    rig.prepare_gsp(true);
    let mut file = debian_booter("ga102", "booter_load");
    let booter = BooterFirmware::parse(&file).unwrap();
    let at = booter.bin.data_offset as usize + booter.load.app_code_offset as usize + 0x40;
    file[at] ^= 0xFF; // one byte of NVIDIA's code changed: no fingerprint matches
    let mailboxes = Mailboxes { mailbox0: rig.meta_bus as u32, mailbox1: (rig.meta_bus >> 32) as u32 };
    assert_eq!(rig.run_booter_file(&file, mailboxes), HaltCode::UnrecognisedUcode.value());
    assert!(!rig.riscv_active());
}

// ---------------------------------------------------------------------------------------------
// GSP-RM boot and queues.

#[test]
fn libos_and_queue_violations_stop_gsp_rm_with_an_error_word() {
    type Poke = fn(&mut Rig);
    type Expect = fn(&GspRmError) -> bool;
    let cases: &[(&str, Poke, Expect)] = &[
        ("LIBOS table not aligned", |rig| rig.libos_bus += 8, |e| matches!(e, GspRmError::LibosArgs { .. })),
        (
            "LOGINIT not first",
            |rig| {
                let mut t = vec![0u8; 64];
                let bus = rig.libos_bus;
                assert!(sim::SystemMemory::read(&rig.arena, bus, &mut t));
                let (a, b) = t.split_at_mut(32);
                a.swap_with_slice(b);
                assert!(rig.arena.write_bus(bus, &t));
            },
            |e| matches!(e, GspRmError::LibosRegion { .. }),
        ),
        (
            "command queue header msgSize",
            |rig| {
                let at = rig.queues.cmd() + 8;
                rig.queues.set_u32(at, 2048);
            },
            |e| matches!(e, GspRmError::CommandQueueHeader { field: "msgSize", .. }),
        ),
        (
            "page table entry",
            |rig| {
                let q = &mut rig.queues;
                q.block.write_u64(8 * 5, 0x1234).unwrap();
            },
            |e| matches!(e, GspRmError::PageTable { index: 5, .. }),
        ),
    ];
    for (name, poke, expect) in cases {
        let mut rig = Rig::new(ModelGpu::rtx3090());
        rig.run_fwsec_frts();
        rig.prepare_gsp(true);
        poke(&mut rig);
        let gsp = falcon::<Gsp>(&rig.model);
        gsp.write_mailboxes(Mailboxes { mailbox0: rig.libos_bus as u32, mailbox1: (rig.libos_bus >> 32) as u32 });
        assert_eq!(rig.booter_load(Booter::Model), 0, "{name}: the booter does not read these");
        let errors = gsp_rm_errors(&rig.model);
        assert!(errors.len() == 1 && expect(&errors[0]), "{name}: {errors:?}");
        let word = rig.model.read32(NV_PGSP_MAILBOX::OFFSET);
        assert_eq!(word, errors[0].error_word(), "{name}");
        assert_eq!(word >> 28, 0xE, "{name}: NV_GSP_ERROR_TAG");
        assert!(!rig.riscv_active(), "{name}");
        assert_eq!(rig.model.gsp_rm_status(), GspRmStatus::Stopped);
    }
}

#[test]
fn records_are_checked_for_checksum_sequence_and_header() {
    type Make = fn(&mut CpuQueues) -> Vec<u8>;
    type Expect = fn(&GspRmError) -> bool;
    let cases: &[(&str, Make, Expect)] = &[
        (
            "bad checksum",
            |q| {
                let mut r = q.record(RpcFunction::Nop.raw(), &[1, 2, 3, 4], |_| {});
                r[80] ^= 1;
                r
            },
            |e| matches!(e, GspRmError::BadRecord { .. }),
        ),
        (
            "sequence number skipped",
            |q| {
                q.cmd_seq += 1;
                q.record(RpcFunction::Nop.raw(), &[], |_| {})
            },
            |e| matches!(e, GspRmError::SequenceNumber { .. }),
        ),
        (
            "signature",
            |q| q.record(RpcFunction::Nop.raw(), &[], |h| h.signature = 0),
            |e| matches!(e, GspRmError::RequestHeader { .. }),
        ),
        (
            "rpc_result not pending",
            |q| q.record(RpcFunction::Nop.raw(), &[], |h| h.rpc_result = 0),
            |e| matches!(e, GspRmError::RequestHeader { .. }),
        ),
        (
            "stray continuation",
            |q| q.record(RpcFunction::ContinuationRecord.raw(), &[0; 8], |_| {}),
            |e| matches!(e, GspRmError::Continuation { .. }),
        ),
    ];
    for (name, make, expect) in cases {
        let mut rig = Rig::booted(ModelGpu::rtx3090(), Booter::Model);
        let record = make(&mut rig.queues);
        rig.queues.push_record(&record);
        rig.model.write32(NV_PGSP_QUEUE_HEAD::OFFSET, 0);
        let errors = gsp_rm_errors(&rig.model);
        assert!(errors.len() == 1 && expect(&errors[0]), "{name}: {errors:?}");
        assert_eq!(rig.model.gsp_rm_status(), GspRmStatus::Stopped, "{name}");
        assert_eq!(rig.model.read32(NV_PGSP_MAILBOX::OFFSET), errors[0].error_word());
        assert!(rig.queues.receive(&rig.model).is_none(), "{name}: no answer");
    }
}

#[test]
fn boot_rpcs_in_order_and_init_done_reports_bad_system_info() {
    // System information with an NvBool of 2: GSP_INIT_DONE carries NV_ERR_INVALID_ARGUMENT.
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.run_fwsec_frts();
    let gsp = falcon::<Gsp>(&rig.model);
    gsp.reset_into_riscv(false).unwrap();
    rig.model.read32(nvgpu::hw::engine::NV_FALCON2_GSP_BASE + 0x668);
    let mut info = system_info(&rig.model);
    info[610] = 2; // bIsPassthru
    rig.queues.send(&rig.model, RpcFunction::GspSetSystemInfo, &info);
    gsp.write_mailboxes(Mailboxes { mailbox0: rig.libos_bus as u32, mailbox1: (rig.libos_bus >> 32) as u32 });
    assert_eq!(rig.booter_load(Booter::Model), 0);
    rig.queues.link_status_queue();
    let (header, _) = rig.queues.receive(&rig.model).unwrap();
    assert_eq!(header.function, RpcEvent::GspInitDone.raw(), "no sequencer after a failed init");
    assert_eq!(header.rpc_result, NvStatus::NV_ERR_INVALID_ARGUMENT.raw());
    assert!(matches!(gsp_rm_errors(&rig.model)[..], [GspRmError::BadParams { function: 72, .. }]));

    // A command before GSP_INIT_DONE: NV_ERR_INVALID_STATE, recorded.
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.boot(Booter::Model);
    rig.queues.send(&rig.model, RpcFunction::Nop, &[]);
    // The sequencer event came first; the reply to NOP follows it.
    let (header, _) = rig.queues.receive(&rig.model).unwrap();
    assert_eq!(header.function, RpcEvent::GspRunCpuSequencer.raw());
    let (reply, _) = rig.queues.receive(&rig.model).unwrap();
    assert_eq!(reply.function, RpcFunction::Nop.raw());
    assert_eq!(reply.rpc_result, NvStatus::NV_ERR_INVALID_STATE.raw());
    assert!(matches!(gsp_rm_errors(&rig.model)[..], [GspRmError::OutOfOrder { function: 0, .. }]));
}

#[test]
fn sequencer_variants_lead_to_init_done() {
    for sequencer in [BootSequencer::RegistersOnly, BootSequencer::None] {
        let mut rig = Rig::new(ModelGpu::rtx4090());
        rig.model.set_gsp_boot_sequencer(sequencer);
        rig.boot(Booter::Model);
        assert_eq!(rig.wait_init_done().rpc_result, 0, "{sequencer:?}");
        assert_eq!(rig.model.errors(), vec![], "{sequencer:?}");
    }
    // A CORE_RESUME without the register writes first: the resume fails, GSP-RM stops.
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.boot(Booter::Model);
    let (header, _) = rig.queues.receive(&rig.model).unwrap();
    assert_eq!(header.function, RpcEvent::GspRunCpuSequencer.raw());
    let gsp = falcon::<Gsp>(&rig.model);
    gsp.reset_into_riscv(false).unwrap();
    rig.model.read32(nvgpu::hw::engine::NV_FALCON2_GSP_BASE + 0x668);
    gsp.write_mailboxes(Mailboxes { mailbox0: rig.libos_bus as u32, mailbox1: (rig.libos_bus >> 32) as u32 });
    let sec2 = falcon::<Sec2>(&rig.model);
    sec2.start();
    assert_ne!(sec2.mailboxes().mailbox0, 0, "SEC2 reports the failed resume");
    assert!(matches!(gsp_rm_errors(&rig.model)[..], [GspRmError::Sequencer { .. }]));
    assert!(!rig.riscv_active());
    assert_eq!(sequencer::TOKEN_EXPECTED, 0x5E0C_A501);
}

#[test]
fn a_reset_of_gsp_outside_core_resume_kills_gsp_rm() {
    let rig = Rig::booted(ModelGpu::rtx3090(), Booter::Model);
    falcon::<Gsp>(&rig.model).reset_engine().unwrap();
    assert!(matches!(gsp_rm_errors(&rig.model)[..], [GspRmError::ResetWhileRunning]));
    assert_eq!(rig.model.gsp_rm_status(), GspRmStatus::Stopped);
}

// ---------------------------------------------------------------------------------------------
// RPCs.

#[test]
fn static_info_describes_the_board() {
    for model in [ModelGpu::rtx3090(), ModelGpu::rtx4090(), ModelGpu::rtx2080ti()] {
        let config = model.config().clone();
        let mut rig = Rig::new(model);
        if config.chipset == Chipset::TU102 {
            rig.run_fwsec_frts_turing();
            rig.prepare_gsp(true);
            assert_eq!(rig.booter_load(Booter::Model), 0);
            rig.queues.link_status_queue();
            rig.wait_init_done();
        } else {
            rig.boot(Booter::Model);
            rig.wait_init_done();
        }
        let (header, bytes) =
            rig.queues.call(&rig.model, RpcFunction::GetGspStaticInfo, &[0u8; GSP_STATIC_CONFIG_INFO_SIZE]);
        assert_eq!(header.rpc_result, 0);
        let info = GspStaticConfigInfo::read_from_bytes(&bytes).expect("exactly sizeof(GspStaticConfigInfo)");
        assert_eq!(info.fb_length, config.vram_bytes);
        assert_eq!(Some(info.gpu_name().as_str()), config.board_name);
        assert_eq!(info.gpu_short_name(), config.chipset.name());
        let regions = info.fb_regions();
        assert_eq!(regions.len(), 1, "one FB region");
        assert_eq!(
            (regions[0].base, regions[0].limit),
            (0, rig.meta.gsp_fw_rsvd_start - 1),
            "FB up to the GSP reservation"
        );
        assert_eq!(info.vbios_sub_device, u32::from(config.pci.subsystem_id));
        assert_eq!(info.gid_info.id().len(), 16, "binary UUID");
        assert_eq!(info.gr_engines().count(), 1);
        assert_eq!(info.copy_engines().count(), 3);
        let client = info.h_internal_client;
        assert!(rig.model.gsp_rm_objects().iter().any(|o| o.handle == client && o.class == NV01_ROOT));
        assert_eq!(rig.model.errors(), vec![]);
    }
}

#[test]
fn client_device_subdevice_alloc_control_and_free() {
    let mut rig = Rig::booted(ModelGpu::rtx3090(), Booter::Model);
    let (client, device, subdevice): (u32, u32, u32) = (0xC100_0010, 0xD000_0001, 0xD000_0002);
    let nv0000 = Nv0000AllocParameters::new(client, 1, "gsp_model").as_bytes().to_vec();
    let nv0080 = Nv0080AllocParameters::default().as_bytes().to_vec();
    let nv2080 = Nv2080AllocParameters::default().as_bytes().to_vec();
    let ok = NvStatus::NV_OK.raw();

    assert_eq!(rig.alloc_rpc(client, client, client, NV01_ROOT, &nv0000), (ok, ok));
    let dup = NvStatus::NV_ERR_INSERT_DUPLICATE_NAME.raw();
    assert_eq!(rig.alloc_rpc(client, client, client, NV01_ROOT, &nv0000), (dup, dup));
    let bad_parent = NvStatus::NV_ERR_INVALID_OBJECT_PARENT.raw();
    assert_eq!(rig.alloc_rpc(client, 0xBEEF, subdevice, NV20_SUBDEVICE_0, &nv2080), (bad_parent, bad_parent));
    assert_eq!(rig.alloc_rpc(client, client, device, NV01_DEVICE_0, &nv0080), (ok, ok));
    assert_eq!(rig.alloc_rpc(client, client, device, NV01_DEVICE_0, &nv0080), (dup, dup));
    assert_eq!(rig.alloc_rpc(client, device, subdevice, NV20_SUBDEVICE_0, &nv2080), (ok, ok));
    let bad_client = NvStatus::NV_ERR_INVALID_CLIENT.raw();
    assert_eq!(rig.alloc_rpc(0x1234, 0x1234, 0x77, NV01_DEVICE_0, &nv0080), (bad_client, bad_client));
    let bad_class = NvStatus::NV_ERR_INVALID_CLASS.raw();
    // AMPERE_A (the 3D class, 0xC697): not one the model's GSP-RM allocates.
    assert_eq!(rig.alloc_rpc(client, device, 0x78, 0xC697, &[]), (bad_class, bad_class));
    // A GPFIFO channel belongs under a channel group, not under the device.
    assert_eq!(rig.alloc_rpc(client, device, 0x78, 0xC56F, &[]), (bad_parent, bad_parent));

    // Controls.
    let mut params = vec![0u8; NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS_SIZE as usize];
    let (status, out) = rig.control_rpc(client, device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &params);
    assert_eq!(status, ok);
    let count = u32_at(&out, 0) as usize;
    let classes: Vec<u32> = (0..count).map(|i| u32_at(&out, 4 + 4 * i)).collect();
    assert!(classes.contains(&nvgpu::hw::classes::AMPERE_COMPUTE_B), "{classes:x?}");
    assert!(classes.contains(&NV20_SUBDEVICE_0));
    params.truncate(8);
    let (status, _) = rig.control_rpc(client, device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &params);
    assert_eq!(status, NvStatus::NV_ERR_INVALID_PARAM_STRUCT.raw());

    let mut info = vec![0u8; NV2080_CTRL_GPU_GET_INFO_V2_PARAMS_SIZE as usize];
    info[..4].copy_from_slice(&2u32.to_le_bytes());
    info[4..8].copy_from_slice(&NV2080_CTRL_GPU_INFO_INDEX_SYSMEM_ACCESS.to_le_bytes());
    info[12..16].copy_from_slice(&NV2080_CTRL_GPU_INFO_INDEX_DISPLAY_ENABLED.to_le_bytes());
    let (status, out) = rig.control_rpc(client, subdevice, NV2080_CTRL_CMD_GPU_GET_INFO_V2, &info);
    assert_eq!(status, ok);
    assert_eq!((u32_at(&out, 8), u32_at(&out, 16)), (1, 1), "sysmem access, display on a VGA board");
    let (status, _) = rig.control_rpc(client, device, NV2080_CTRL_CMD_GPU_GET_INFO_V2, &info);
    assert_eq!(status, NvStatus::NV_ERR_NOT_SUPPORTED.raw(), "a subdevice control on a device");
    let (status, _) = rig.control_rpc(client, 0x4242, NV2080_CTRL_CMD_GPU_GET_INFO_V2, &info);
    assert_eq!(status, NvStatus::NV_ERR_INVALID_OBJECT_HANDLE.raw());

    // Freeing the device frees the subdevice under it (RM's resource tree).
    assert_eq!(rig.free_rpc(client, client, device), (ok, ok));
    let objects = rig.model.gsp_rm_objects();
    assert!(!objects.iter().any(|o| o.client == client && (o.handle == device || o.handle == subdevice)));
    let not_found = NvStatus::NV_ERR_OBJECT_NOT_FOUND.raw();
    assert_eq!(rig.free_rpc(client, device, subdevice), (not_found, not_found));
    assert_eq!(rig.free_rpc(client, 0, client), (ok, ok));
    assert_eq!(rig.free_rpc(client, 0, client), (bad_client, bad_client));
    assert_eq!(gsp_rm_errors(&rig.model), vec![], "error statuses are answers, not violations");
}

#[test]
fn large_registry_arrives_in_continuation_records() {
    // A registry table larger than one record: the first record is full
    // (GSP_MSG_QUEUE_RPC_SIZE_MAX), the rest follows in CONTINUATION_RECORDs.
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.run_fwsec_frts();
    let gsp = falcon::<Gsp>(&rig.model);
    gsp.reset_into_riscv(false).unwrap();
    rig.model.read32(nvgpu::hw::engine::NV_FALCON2_GSP_BASE + 0x668);
    rig.queues.send(&rig.model, RpcFunction::GspSetSystemInfo, &system_info(&rig.model));
    let blob = vec![0x42u8; 80_000];
    let name = b"RmBigBlob\0";
    let size = 8 + 16 + name.len() + blob.len();
    let mut table = PackedRegistryTable { size: size as u32, num_entries: 1 }.as_bytes().to_vec();
    table.extend_from_slice(
        PackedRegistryEntry {
            name_offset: 24,
            type_: REGISTRY_TABLE_ENTRY_TYPE_BINARY,
            _padding: [0; 3],
            data: (24 + name.len()) as u32,
            length: blob.len() as u32,
        }
        .as_bytes(),
    );
    table.extend_from_slice(name);
    table.extend_from_slice(&blob);
    let first = (nvgpu::gsp::fw::msgq::GSP_MSG_QUEUE_RPC_SIZE_MAX - RPC_MESSAGE_HEADER_SIZE) as usize;
    let (head, tail) = table.split_at(first);
    let record = rig.queues.record(RpcFunction::SetRegistry.raw(), head, |_| {});
    rig.queues.push_record(&record);
    let record = rig.queues.record(RpcFunction::ContinuationRecord.raw(), tail, |_| {});
    rig.queues.push_record(&record);
    rig.model.write32(NV_PGSP_QUEUE_HEAD::OFFSET, 0);
    gsp.write_mailboxes(Mailboxes { mailbox0: rig.libos_bus as u32, mailbox1: (rig.libos_bus >> 32) as u32 });
    assert_eq!(rig.booter_load(Booter::Model), 0);
    rig.queues.link_status_queue();
    assert_eq!(rig.wait_init_done().rpc_result, 0);
    let registry = rig.model.gsp_registry();
    assert_eq!(registry.len(), 1);
    assert_eq!(registry[0].value, RegistryValue::Binary(blob));
    assert_eq!(rig.model.errors(), vec![]);
}

#[test]
fn unload_stops_gsp_rm_and_booter_unload_tears_down_wpr2() {
    for booter in [Booter::Model, Booter::Debian] {
        let mut rig = Rig::booted(ModelGpu::rtx3090(), booter);
        let params = RpcUnloadingGuestDriverV1F07::default();
        let (header, _) = rig.queues.call(&rig.model, RpcFunction::UnloadingGuestDriver, params.as_bytes());
        assert_eq!(header.rpc_result, 0);
        let gsp = falcon::<Gsp>(&rig.model);
        assert_eq!(gsp.mailboxes().mailbox0, 0x8000_0000, "LIBOS_INTERRUPT_PROCESSOR_SUSPENDED");
        assert!(!rig.riscv_active());
        assert_eq!(rig.model.gsp_rm_status(), GspRmStatus::Unloaded);
        let file = rig.booter_file(booter, BooterKind::Unload);
        assert_eq!(rig.run_booter_file(&file, Mailboxes { mailbox0: 0xFF, mailbox1: 0xFF }), 0);
        assert_eq!(rig.model.wpr2(), None, "{booter:?}: WPR2 torn down");
        assert_eq!(rig.model.errors(), vec![]);
    }
}

// ---------------------------------------------------------------------------------------------
// Fault injection.

#[test]
fn fault_gsp_never_answers() {
    let mut rig = Rig::booted(ModelGpu::rtx3090(), Booter::Model);
    rig.model.inject(GspFault::DropCommands);
    rig.queues.send(&rig.model, RpcFunction::GetGspStaticInfo, &[0u8; GSP_STATIC_CONFIG_INFO_SIZE]);
    for _ in 0..10 {
        assert!(rig.queues.receive(&rig.model).is_none());
    }
    assert_eq!(rig.queues.gsp_read_ptr(), rig.queues.cmd_write_ptr(), "consumed, but unanswered");
    rig.model.clear_faults();
    let (header, _) = rig.queues.call(&rig.model, RpcFunction::GetGspStaticInfo, &[0u8; GSP_STATIC_CONFIG_INFO_SIZE]);
    assert_eq!(header.rpc_result, 0);
}

#[test]
fn fault_gsp_answers_with_an_error_status() {
    let mut rig = Rig::booted(ModelGpu::rtx3090(), Booter::Model);
    rig.model.inject(GspFault::FailCommands { status: NvStatus::NV_ERR_TIMEOUT });
    let client = 0xC100_0020;
    let (status, in_params) = rig.alloc_rpc(client, client, client, NV01_ROOT, &[]);
    assert_eq!((status, in_params), (NvStatus::NV_ERR_TIMEOUT.raw(), NvStatus::NV_ERR_TIMEOUT.raw()));
    assert!(!rig.model.gsp_rm_objects().iter().any(|o| o.handle == client), "not executed");
}

#[test]
fn fault_corrupt_status_element() {
    let mut rig = Rig::booted(ModelGpu::rtx3090(), Booter::Model);
    rig.model.inject(GspFault::CorruptNextMessage);
    rig.queues.send(&rig.model, RpcFunction::Nop, &[]);
    let record = rig.queues.receive_raw(&rig.model).expect("a record");
    assert!(matches!(verify_element(&record), Err(nvgpu::gsp::fw::msgq::ElementError::BadChecksum { .. })));
    // Only that one.
    rig.queues.stat_seq += 1;
    let (header, _) = rig.queues.call(&rig.model, RpcFunction::Nop, &[]);
    assert_eq!(header.rpc_result, 0);
}

#[test]
fn fault_riscv_stops() {
    let rig = Rig::booted(ModelGpu::rtx3090(), Booter::Model);
    rig.model.inject(GspFault::StopRiscv);
    assert!(!rig.riscv_active());
    let word = rig.model.read32(NV_PGSP_MAILBOX::OFFSET);
    assert_eq!(word, GspRmError::InjectedStop.error_word());
    assert_eq!(word >> 28, 0xE);
    assert_eq!(gsp_rm_errors(&rig.model), vec![GspRmError::InjectedStop]);
}

#[test]
fn fault_booter_halts_early() {
    let mut rig = Rig::new(ModelGpu::rtx3090());
    rig.run_fwsec_frts();
    rig.prepare_gsp(true);
    rig.model.inject(GspFault::BooterHalts { mailbox0: 0xDEAD_0001 });
    assert_eq!(rig.booter_load(Booter::Model), 0xDEAD_0001);
    assert!(!rig.riscv_active());
    assert_eq!(rig.model.take_errors(), vec![ModelError::Booter(BooterError::Injected { mailbox0: 0xDEAD_0001 })]);
    // The fault is spent: the next run (after a reset, as RM does) boots.
    assert_eq!(rig.booter_load(Booter::Model), 0);
    assert!(rig.riscv_active());
}

// ---------------------------------------------------------------------------------------------
// The facts the booter and GSP-RM models declare, against NVIDIA's headers.

/// `#define name value` in `text` (comments dropped): the value's text.
fn define_text(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("#define")?.trim_start();
        let after = rest.strip_prefix(name)?;
        if !after.starts_with([' ', '\t']) {
            return None;
        }
        Some(after.split("/*").next()?.split("//").next()?.trim().to_string())
    })
}

fn parse_number(text: &str) -> Option<u64> {
    let s = text.trim().trim_start_matches('(').trim_end_matches(')').trim().trim_end_matches(['u', 'U']);
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

#[test]
fn model_facts_match_nvidia_headers() {
    use nvgpu::hw::FactValue;
    let tree = real_data().join(format!("open-gpu-kernel-modules-{}", nvgpu::hw::headers::OGKM_PINNED));
    let mut checked = 0;
    // The RM values the GSP-RM model answers with and the register arrays it implements, declared
    // in `nvgpu::hw` (the conformance test checks them too, with its own reader).
    let tables = [nvgpu::hw::rm::ERROR_FACTS, nvgpu::hw::rm::FACTS, nvgpu::hw::engine::SIZE_FACTS];
    for fact in tables.iter().flat_map(|t| t.iter()).flat_map(|g| g.iter()).flat_map(|f| f.iter()) {
        let path = tree.join(fact.header.path);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("missing real data {} ({e}): run `sudo scripts/fetch-real-data.sh`", path.display())
        });
        let found = define_text(&text, fact.name)
            .unwrap_or_else(|| panic!("{} not defined in {}", fact.name, fact.header.path));
        match fact.value {
            FactValue::Number(value) => assert_eq!(parse_number(&found), Some(value), "{} = {found}", fact.name),
            FactValue::Bits { hi, lo } => assert_eq!(found, format!("{hi}:{lo}"), "{}", fact.name),
            other => panic!("{}: {other:?} not checked here", fact.name),
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked} facts");
    // The sequencer opcodes the model's script uses, by their position in the enum of rmgspseq.h.
    let rmgspseq = std::fs::read_to_string(tree.join(nvgpu::hw::headers::RMGSPSEQ.path)).unwrap();
    let enum_body = rmgspseq.split("typedef enum GSP_SEQ_BUF_OPCODE").nth(1).unwrap().split('}').next().unwrap();
    let names: Vec<&str> = enum_body.lines().filter_map(|l| l.trim().strip_prefix("GSP_SEQ_BUF_OPCODE_")).collect();
    for op in [SeqOpcode::RegWrite, SeqOpcode::RegModify, SeqOpcode::RegPoll, SeqOpcode::DelayUs, SeqOpcode::CoreResume]
    {
        let short = op.nvidia_name().trim_start_matches("GSP_SEQ_BUF_OPCODE_");
        let position =
            names.iter().position(|n| n.trim_end_matches([',', ' ']).split([' ', '=']).next() == Some(short));
        assert_eq!(position, Some(op as usize), "{}", op.nvidia_name());
    }
}

// ---------------------------------------------------------------------------------------------
// Hopper: the FSP's chain of trust.

impl Rig {
    /// RM's Hopper steps up to the chain-of-trust command: boot RPCs queued (no GSP reset, no
    /// mailboxes: the GSP-FMC gets the LIBOS arguments from its parameters), then the COT
    /// message through the FSP's EMEM queue; returns the FSP's answer.
    fn fsp_chain_of_trust(
        &mut self,
        edit: impl FnOnce(&mut nvgpu::hw::fw::fsp::NvdmPayloadCot),
    ) -> Result<nvgpu::hw::fw::fsp::NvdmPayloadCommandResponse, nvgpu::gsp::boot::fsp::FspError> {
        use nvgpu::gsp::boot::fsp::{cot_payload, CotAddresses, FmcImages, FspChannel};
        use nvgpu::hw::fw::fsp::{GspFmcBootParams, NVDM_TYPE_COT};
        self.queues.send(&self.model, RpcFunction::GspSetSystemInfo, &system_info(&self.model));
        self.queues.send(&self.model, RpcFunction::SetRegistry, &registry_table());
        let fmc_image = vec![0xF3u8; 0x2000];
        let (hash, key, sig) = ([0x11u8; 48], [0x22u8; 384], [0x33u8; 384]);
        let params = GspFmcBootParams::new(self.meta_bus, self.libos_bus);
        let addresses = CotAddresses {
            fmc_image: self.alloc(&fmc_image),
            frts_sysmem: self.alloc(&vec![0u8; 0x10_0000]),
            fmc_boot_params: self.alloc(params.as_bytes()),
        };
        let fmc = FmcImages { image: &fmc_image, hash384: &hash, public_key: &key, signature: &sig };
        let mut cot = cot_payload(&fmc, &addresses);
        edit(&mut cot);
        let fsp = falcon::<Fsp>(&self.model);
        let clock = ModelClock::default();
        FspChannel::new(&fsp, &clock).send_and_read(cot.as_bytes(), NVDM_TYPE_COT)
    }
}

/// A model H200 whose FSP runs the rig's stand-in GSP-FMC (the tests here build their own
/// image; NVIDIA's FMC boots in `gsp_boot`).
fn stand_in_h200() -> ModelGpu {
    ModelGpu::new(sim::ModelConfig { allow_stand_in_fmc: true, ..sim::ModelConfig::h200() })
}

/// Without the opt-in, the FSP refuses an FMC that is not one of NVIDIA's, as the silicon's
/// chain of trust does; the model used to run any image it was given.
#[test]
fn hopper_fsp_refuses_a_stand_in_fmc_unless_a_test_allows_it() {
    use nvgpu::gsp::boot::fsp::FspError;
    let mut rig = Rig::new(ModelGpu::h200());
    let result = rig.fsp_chain_of_trust(|_| {});
    assert!(matches!(result, Err(FspError::CommandFailed { .. })), "{result:?}");
    let errors = gsp_rm_errors(&rig.model);
    assert!(
        matches!(&errors[..], [GspRmError::Fsp(r)] if r.what.contains("not one of NVIDIA's GSP-FMCs")),
        "{errors:?}"
    );
    assert!(!rig.riscv_active());
    assert_eq!(rig.model.wpr2(), None, "no FMC ran");
}

#[test]
fn hopper_fsp_chain_of_trust_boots_gsp_rm() {
    let mut rig = Rig::new(stand_in_h200());
    assert_eq!(rig.model.wpr2(), None);
    let response = rig.fsp_chain_of_trust(|_| {}).expect("FSP_OK");
    assert_eq!(response.command_nvdm_type.get(), 0x14);
    let messages = rig.model.fsp_received_messages();
    assert_eq!(messages.len(), 1);
    assert_eq!((messages[0][0], messages[0].len()), (0x14, 1 + 860), "NVDM type COT and NVDM_PAYLOAD_COT");
    assert_eq!(falcon::<Gsp>(&rig.model).mailboxes().mailbox0, 0, "no GSP-FMC error");
    assert!(rig.riscv_active());
    let (lo, hi) = rig.model.wpr2().expect("the FMC raised WPR2");
    let vram = rig.model.config().vram_bytes;
    assert_eq!(hi + 1, vram - 0x20_0000 + 0x10_0000, "WPR2 ends with the FRTS copy 2 MiB below the end of FB");
    assert!(lo < hi && lo % 0x10_0000 == 0);
    rig.queues.link_status_queue();
    assert_eq!(rig.wait_init_done().rpc_result, 0, "registers-only sequencer: Hopper has no SEC2");
    let (header, bytes) =
        rig.queues.call(&rig.model, RpcFunction::GetGspStaticInfo, &[0u8; GSP_STATIC_CONFIG_INFO_SIZE]);
    assert_eq!(header.rpc_result, 0);
    let info = GspStaticConfigInfo::read_from_bytes(&bytes).unwrap();
    assert_eq!(
        info.fb_regions()[0].limit + 1,
        rig.model.wpr2().unwrap().0 - rig.meta.non_wpr_heap_size.next_multiple_of(0x10_0000)
    );
    assert_eq!(info.b_is_tesla, 1, "a 3D-controller board");
    assert_eq!(rig.model.errors(), vec![]);
}

#[test]
fn hopper_fsp_refuses_bad_cot_and_the_fmc_bad_metadata() {
    use nvgpu::gsp::boot::fsp::FspError;
    use nvgpu::hw::fw::fsp::FSP_ERR_IFS_ERR_INVALID_DATA;
    use sim::zerocopy::byteorder::little_endian::U16;

    let mut rig = Rig::new(stand_in_h200());
    let result = rig.fsp_chain_of_trust(|cot| cot.version = U16::new(2));
    assert!(
        matches!(result, Err(FspError::CommandFailed { error_code, .. }) if error_code == FSP_ERR_IFS_ERR_INVALID_DATA),
        "{result:?}"
    );
    assert!(matches!(gsp_rm_errors(&rig.model)[..], [GspRmError::Fsp(_)]));
    assert!(!rig.riscv_active());

    // The FSP accepts the command, but the GSP-FMC finds a placed layout: its error in MAILBOX0.
    let mut rig = Rig::new(stand_in_h200());
    rig.meta.gsp_fw_offset = 0x1_0000_0000;
    rig.rewrite_meta();
    rig.fsp_chain_of_trust(|_| {}).expect("the FSP itself accepts");
    let mailbox0 = falcon::<Gsp>(&rig.model).mailboxes().mailbox0;
    let errors = gsp_rm_errors(&rig.model);
    assert!(matches!(errors[..], [GspRmError::Fmc(BooterError::Layout { .. })]), "{errors:?}");
    let GspRmError::Fmc(error) = errors[0] else { unreachable!() };
    assert_eq!(mailbox0, error.mailbox0());
    assert!(!rig.riscv_active());
    assert_eq!(rig.model.wpr2(), None);
}
