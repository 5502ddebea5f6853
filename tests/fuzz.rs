//! The fuzz harnesses: one function per parser (or family of parsers) that takes bytes from
//! outside, run by the coverage-guided targets in `fuzz/` (libFuzzer through `libfuzzer-sys`,
//! `cargo xtask fuzz`) and by `tests/tests/fuzz_harness.rs`, which runs each of them over the
//! seeds of [`crate::fuzz_seeds`] and over the regression inputs of crashes found so far.
//!
//! A harness must not panic on any input: a panic, an arithmetic overflow (fuzz builds keep
//! overflow checks) or a hang is a bug in the parser it drives. Where the format carries a
//! checksum, the harness can fix it up first (chosen by a bit of the input), so that the
//! fuzzer's mutations reach the code behind the checksum test as well as the test itself.

use std::cell::Cell;

use kernel::acpi::{self, PhysMapper};
use nvgpu::firmware::{BinHeader, BooterFirmware, BootloaderFirmware, FirmwareKind, GenericBootloaderFirmware, GspElf};
use nvgpu::fwsec::FwsecKind;
use nvgpu::gsp::cmdq::{GspDoorbell, GspMessage, GspMessageQueues};
use nvgpu::gsp::commands::{Free, GetGspStaticInfo, GspEvent, GspRmAlloc, GspRmControl, Rpc, UnloadingGuestDriver};
use nvgpu::gsp::fw::msgq::{seal_element, verify_element, MessageQueueLayout};
use nvgpu::gsp::fw::rpc::RpcMessageHeader;
use nvgpu::gsp::logs::{printf, GspLogs, LoggingElf};
use nvgpu::gsp::sequencer::SequencerBuffer;
use nvgpu::payload::{Cubin, Fatbin, Module};
use nvgpu::platform::{Clock, DmaAllocator};
use nvgpu::vbios::Vbios;
use sim::engine_mem::{FlatMemory, PhysAddr, PhysAperture, PhysicalMemory};
use sim::host::{HostChannel, HostEffects};
use sim::SystemMemory;
use uvm::fault::{
    FaultBatch, FaultBufferMemory, FaultBufferRegisters, FaultEntry, FetchConfig, FlushMode, RawFaultEntry,
    ReplayableFaultBuffer,
};

/// A fuzz target: its name (the binary in `fuzz/fuzz_targets/`) and its harness.
pub struct Target {
    pub name: &'static str,
    pub run: fn(&[u8]),
    /// Largest input worth mutating (libFuzzer's `-max_len`).
    pub max_len: usize,
}

/// Every target, in the order `cargo xtask fuzz` runs them.
pub const TARGETS: &[Target] = &[
    Target { name: "vbios", run: vbios, max_len: 1 << 20 },
    Target { name: "firmware", run: firmware, max_len: 256 << 10 },
    Target { name: "payload", run: payload, max_len: 256 << 10 },
    Target { name: "ptx", run: ptx, max_len: 64 << 10 },
    Target { name: "acpi_table", run: acpi_table, max_len: 64 << 10 },
    Target { name: "acpi_platform", run: acpi_platform, max_len: 64 << 10 },
    Target { name: "gsp_queue", run: gsp_queue, max_len: 64 << 10 },
    Target { name: "gsp_rpc", run: gsp_rpc, max_len: 64 << 10 },
    Target { name: "gsp_log", run: gsp_log, max_len: 16 << 10 },
    Target { name: "fault_buffer", run: fault_buffer, max_len: 16 << 10 },
    Target { name: "pushbuffer", run: pushbuffer, max_len: 16 << 10 },
    Target { name: "fsp", run: fsp, max_len: 16 << 10 },
    Target { name: "edid", run: edid, max_len: 32 << 10 },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// A VBIOS ROM (`nvidia/*.rom`, the PROM window): the PCI expansion ROM chain, the BIT table,
/// the falcon ucode table and both FWSEC images with their signatures and DMEM mapper.
pub fn vbios(data: &[u8]) {
    let Ok(rom) = Vbios::from_bytes(data) else { return };
    let _ = rom.version();
    for token in &rom.bit().tokens {
        let _ = token.name();
    }
    if let Ok(table) = rom.falcon_ucode_table() {
        for entry in &table.entries {
            let _ = entry.application_name();
        }
    }
    for kind in [FwsecKind::Prod, FwsecKind::Debug] {
        if let Ok(fwsec) = rom.fwsec(kind) {
            let _ = (fwsec.imem().len(), fwsec.dmem().len(), fwsec.signatures().len());
            for index in 0..fwsec.signature_count().min(64) {
                let _ = fwsec.signature(index);
            }
            let _ = fwsec.signature_for_fuse_version(0);
            let _ = fwsec.signature_for_fuse_version(u32::MAX);
            let _ = fwsec.dmem_mapper_rom_offset();
        }
    }
}

/// A firmware file as `nvtool firmware` and the boot read it: GSP-RM's ELF container (and the
/// logging ELF format), `nvfw_bin_hdr` files: booters, the RISC-V bootloader, the generic falcon
/// bootloader.
pub fn firmware(data: &[u8]) {
    let _ = BinHeader::parse(data);
    match FirmwareKind::detect(data) {
        Ok(FirmwareKind::GspElf) => {
            if let Ok(elf) = GspElf::parse(data) {
                let _ = elf.checked_version();
                for section in elf.sections() {
                    let _ = section.name.len();
                }
            }
            let _ = LoggingElf::parse(data);
            let _ = nvgpu::gsp::logs::logging_sections(data);
            let _ = nvgpu::gsp::logs::LogMetadata::from_log_firmware(data);
        }
        Ok(FirmwareKind::Booter) => {
            let _ = BooterFirmware::parse(data);
        }
        Ok(FirmwareKind::Bootloader) => {
            let _ = BootloaderFirmware::parse(data);
        }
        Ok(FirmwareKind::GenericBootloader) => {
            let _ = GenericBootloaderFirmware::parse(data);
        }
        Err(_) => {}
    }
}

/// A compute payload: fatbin, cubin (ELF with `.nv.info`) or PTX text, as an application's
/// module load reads it.
pub fn payload(data: &[u8]) {
    let _ = Fatbin::parse(data);
    let _ = Cubin::parse(data);
    let _ = Module::load(data);
}

/// PTX text, through the model's parser (what `nvtool run` and the model's compute engine load).
pub fn ptx(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = sim::ptx::Module::parse(&text);
}

/// Physical memory made of one buffer at `base` (the ACPI walk's view of an input).
pub struct FuzzMemory<'a> {
    pub base: u64,
    pub bytes: &'a [u8],
}

impl PhysMapper for FuzzMemory<'_> {
    fn map(&self, phys: u64, len: usize) -> Option<&[u8]> {
        let offset = usize::try_from(phys.checked_sub(self.base)?).ok()?;
        self.bytes.get(offset..offset.checked_add(len)?)
    }
}

/// Makes the first `len` bytes sum to zero (mod 256) by rewriting the byte at `at`: ACPI's
/// checksum.
pub fn fix_sum8(bytes: &mut [u8], at: usize, len: usize) {
    let len = len.min(bytes.len());
    if at >= len {
        return;
    }
    bytes[at] = 0;
    let sum = bytes[..len].iter().fold(0u8, |s, b| s.wrapping_add(*b));
    bytes[at] = 0u8.wrapping_sub(sum);
}

/// One ACPI table (MADT, MCFG, HPET, DMAR, IVRS or any other): the first byte's low bit asks for the
/// checksum to be fixed first.
pub fn acpi_table(data: &[u8]) {
    let Some((&mode, table)) = data.split_first() else { return };
    let mut table = table.to_vec();
    if mode & 1 != 0 && table.len() >= 8 {
        let length = u32::from_le_bytes([table[4], table[5], table[6], table[7]]) as usize;
        fix_sum8(&mut table, 9, length);
    }
    let mut warnings = Vec::new();
    let _ = acpi::sdt::SdtHeader::parse(&table);
    if let Ok(t) = acpi::sdt::Table::from_bytes(0x7fe0_0000, &table, acpi::sdt::SDT_HEADER_LEN) {
        let _ = acpi::MadtInfo::parse(&t, &mut warnings);
        let _ = acpi::mcfg::parse_mcfg(&t, &mut warnings);
        let _ = acpi::HpetInfo::parse(&t);
        let _ = acpi::dmar::parse_dmar(&t);
        let _ = acpi::ivrs::parse_ivrs(&t);
    }
}

/// Where the `acpi_platform` target places its input in physical memory (the BIOS area the
/// RSDP is searched in).
pub const ACPI_BASE: u64 = 0xe_0000;

/// Physical memory holding an RSDP at its start and the tables it leads to, walked as the
/// kernel walks them at boot. Bit 0 of the first byte fixes the RSDP's two checksums.
pub fn acpi_platform(data: &[u8]) {
    let Some((&mode, memory)) = data.split_first() else { return };
    let mut memory = memory.to_vec();
    if mode & 1 != 0 {
        fix_sum8(&mut memory, 8, 20);
        fix_sum8(&mut memory, 32, 36);
    }
    let mapper = FuzzMemory { base: ACPI_BASE, bytes: &memory };
    if let Ok(platform) = acpi::parse_platform(&mapper, ACPI_BASE) {
        let _ = platform.warnings.len();
    }
}

/// A clock that moves one millisecond each time it is read, so every bounded wait ends.
#[derive(Default)]
struct StepClock(Cell<u64>);

impl Clock for StepClock {
    fn now_ns(&self) -> u64 {
        let now = self.0.get();
        self.0.set(now.saturating_add(1_000_000));
        now
    }
}

struct NoDoorbell;

impl GspDoorbell for NoDoorbell {
    fn ring(&mut self, _: u32) {}
}

/// The queues the `gsp_queue` target runs: RM's layout with smaller queues (a 128 KiB status
/// queue: 31 entries, room for the largest record; an 8 KiB command queue), so that each run
/// zeroes and lays out 140 KiB of shared memory rather than RM's 516 KiB.
pub fn queue_layout() -> MessageQueueLayout {
    MessageQueueLayout::new(0x2000, 0x2_0000).unwrap_or(MessageQueueLayout::rm_default())
}

/// Bytes of the status queue that a fuzz input writes: its header page and the first entries.
const STATUS_QUEUE_SPAN: usize = 64 << 10;

/// GSP-RM's status queue as the driver reads it: the input is the start of the queue (its
/// `msgqTxHeader` page, then entries) as GSP-RM would have written it into shared memory.
/// Bit 0 of the first byte seals every record it finds (fixes `seqNum`, `elemCount` and
/// the checksum) so that the reassembly and decoding behind the checks are reached. Every
/// message received is decoded as the RPC client and the event loop would decode it.
pub fn gsp_queue(data: &[u8]) {
    let _ = gsp_queue_messages(data);
}

/// [`gsp_queue`], returning how many messages came out of the queue.
pub fn gsp_queue_messages(data: &[u8]) -> usize {
    let mut received = 0;
    let Some((&mode, image)) = data.split_first() else { return 0 };
    let layout = queue_layout();
    let arena = sim::DmaArena::new();
    let Ok(shared) = arena.alloc(layout.shared_size() as usize) else { return 0 };
    let bus = shared.bus_address();
    let Ok(mut queues) = GspMessageQueues::new(shared, layout, NoDoorbell) else { return 0 };
    let mut image = image[..image.len().min(STATUS_QUEUE_SPAN)].to_vec();
    if mode & 1 != 0 {
        seal_records(&mut image);
    }
    if !arena.write(bus + layout.stat_queue_offset(), &image) {
        return 0;
    }
    let clock = StepClock::default();
    let static_info = nvgpu::gsp::fw::rpc::RpcFunction::GetGspStaticInfo.raw();
    let full_len = |h: &RpcMessageHeader| if h.function == static_info { GetGspStaticInfo.reply_len() } else { None };
    for _ in 0..64 {
        match queues.try_receive_message(&clock, 5, &full_len) {
            Ok(Some(message)) => {
                decode_message(&message);
                received += 1;
            }
            Ok(None) | Err(_) => break,
        }
    }
    received
}

/// Seals each record of a status-queue image laid out as GSP-RM lays it out (entries of
/// 4 KiB after the header page), with sequence numbers from 0.
fn seal_records(image: &mut [u8]) {
    const ENTRY: usize = 0x1000;
    let mut at = ENTRY;
    let mut seq = 0;
    while at < image.len() {
        match seal_element(&mut image[at..], seq) {
            Ok(entries) => {
                seq += 1;
                at += ENTRY * (entries.max(1) as usize);
            }
            Err(_) => at += ENTRY,
        }
    }
}

/// Decodes a message's parameters every way the driver decodes what comes back.
fn decode_message(message: &GspMessage) {
    let _ = GspEvent::decode(message);
    decode_payload(&message.payload);
}

fn decode_payload(payload: &[u8]) {
    let _ = <GetGspStaticInfo as Rpc>::decode_reply(payload);
    let _ = <GspRmAlloc<'_> as Rpc>::decode_reply(payload);
    let _ = <GspRmControl<'_> as Rpc>::decode_reply(payload);
    let _ = <Free as Rpc>::decode_reply(payload);
    let _ = <UnloadingGuestDriver as Rpc>::decode_reply(payload);
    let _ = SequencerBuffer::decode(payload);
    let _ = nvgpu::gsp::boot::fsp::check_response(payload);
}

/// One record as it leaves the queue (element header, RPC header, parameters), then its
/// parameters decoded as each reply and event; bit 0 of the first byte seals the record.
pub fn gsp_rpc(data: &[u8]) {
    let Some((&mode, record)) = data.split_first() else { return };
    let mut record = record.to_vec();
    if mode & 1 != 0 {
        let _ = seal_element(&mut record, 0);
    }
    if let Ok(received) = verify_element(&record) {
        let message =
            GspMessage { header: received.element.rpc, seq_num: 0, records: 1, payload: received.params.to_vec() };
        decode_message(&message);
    }
    // The parameters alone, whatever the header says, under each event number.
    let payload = record.get(core::mem::size_of::<nvgpu::gsp::fw::msgq::GspMsgQueueElement>()..).unwrap_or(&[]);
    decode_payload(payload);
    let function = u32::from(mode >> 1) + 0x1000;
    let header = RpcMessageHeader { function, ..Default::default() };
    let _ = GspEvent::decode(&GspMessage { header, seq_num: 0, records: 1, payload: payload.to_vec() });
}

/// GSP-RM's log buffers (read raw: no metadata) and its printf formats with arguments and
/// strings from the input.
pub fn gsp_log(data: &[u8]) {
    let third = data.len() / 3;
    let (format, rest) = data.split_at(third);
    let (args, strings) = rest.split_at(third);
    let args: Vec<u64> = args
        .chunks(8)
        .map(|c| {
            let mut word = [0u8; 8];
            word[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(word)
        })
        .collect();
    let string_at = |address: u64| -> Option<&[u8]> {
        let start = usize::try_from(address % 0x1_0000).ok()?;
        let tail = strings.get(start..)?;
        Some(&tail[..tail.iter().position(|&b| b == 0).unwrap_or(tail.len())])
    };
    let _ = printf(format, &args, &string_at);
    let mut logs = GspLogs::for_gsp_rm(None);
    let buffers = [format, rest, data];
    let _ = logs.drain_to_vec(&buffers);
    let _ = logs.drain_to_vec(&buffers);
}

/// The replayable fault buffer as UVM reads it: GET and PUT (first eight bytes), the buffer's
/// size (next two), then the 32-byte entries the GPU wrote; fetched in batches, coalesced,
/// sorted and flushed.
pub fn fault_buffer(data: &[u8]) {
    struct Entries(Vec<RawFaultEntry>);
    impl FaultBufferMemory for Entries {
        fn read_entry(&self, index: u32) -> RawFaultEntry {
            self.0.get(index as usize).copied().unwrap_or([0; 32])
        }
        fn clear_valid(&mut self, index: u32) {
            if let Some(e) = self.0.get_mut(index as usize) {
                e[31] &= 0x7f;
            }
        }
    }
    struct Registers {
        get: Cell<u32>,
        put: u32,
    }
    impl FaultBufferRegisters for Registers {
        fn read_put(&self) -> u32 {
            self.put
        }
        fn read_get(&self) -> u32 {
            self.get.get()
        }
        fn write_get(&mut self, raw: u32) {
            self.get.set(raw);
        }
    }
    if data.len() < 10 {
        return;
    }
    let get = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let put = u32::from_le_bytes([data[4], data[5], data[6], data[7]]);
    let max_faults = u32::from(u16::from_le_bytes([data[8], data[9]]));
    let mut entries: Vec<RawFaultEntry> = data[10..]
        .chunks(32)
        .map(|c| {
            let mut e = [0u8; 32];
            e[..c.len()].copy_from_slice(c);
            e
        })
        .collect();
    for raw in &entries {
        let _ = FaultEntry::decode(raw);
    }
    entries.resize(max_faults as usize, [0; 32]);
    let Ok(mut buffer) = ReplayableFaultBuffer::new(
        Entries(entries),
        Registers { get: Cell::new(get), put },
        max_faults,
        FetchConfig { spin_limit: 2 },
    ) else {
        return;
    };
    for _ in 0..4 {
        let Ok(fetched) = buffer.fetch_batch(256) else { break };
        if fetched.consumed() == 0 {
            break;
        }
        let batch = FaultBatch::coalesce(&fetched.entries, true, 64, |e| u16::from(e.gpc) << 8 | u16::from(e.client));
        let order = batch.preprocess(|instance, veid| Some((instance, veid)));
        let _ = order.blocks(&batch);
    }
    let _ = buffer.flush(FlushMode::UpdatePut);
}

/// A flat buffer as physical memory of any aperture (the address is all that counts).
pub struct Phys(pub FlatMemory);

impl PhysicalMemory for Phys {
    fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool {
        sim::engine_mem::VirtualMemory::read(&mut self.0, at.addr, buf).is_ok()
    }
    fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool {
        sim::engine_mem::VirtualMemory::write(&mut self.0, at.addr, data).is_ok()
    }
}

/// A GPFIFO segment of methods, run by the model's host (PBDMA) on the model's copy and compute
/// engines (Hopper classes, the rest of memory zero): host methods, semaphores, MEM_OP, and the
/// engines' methods; the model must refuse what it cannot execute without panicking or hanging.
pub fn pushbuffer(data: &[u8]) {
    const BASE: u64 = 0x10_0000;
    const GPFIFO: u64 = BASE;
    const PB: u64 = BASE + 0x1000;
    const LEN: usize = 0x10_0000;
    const USERD: u64 = 0x100;
    struct Effects;
    impl HostEffects for Effects {
        fn timestamp_ns(&mut self) -> u64 {
            0
        }
        fn invalidate_tlb(&mut self) {}
        fn replay(&mut self, _: bool) {}
        fn cancel_va(&mut self, _: PhysAddr, _: u64, _: nvgpu::hw::host::TlbInvalidateAccessType, _: u16) {}
    }
    let words = (data.len() / 4).min((LEN - 0x1000) / 4);
    if words == 0 {
        return;
    }
    let mut vm = FlatMemory::new(BASE, LEN);
    vm.bytes[0x1000..0x1000 + words * 4].copy_from_slice(&data[..words * 4]);
    // One GPFIFO entry: the whole input as one segment (GET_LO/GET_HI in dwords, LENGTH).
    let entry0 = (PB as u32) & !3;
    let entry1 = ((PB >> 32) as u32 & 0xff) | ((words as u32) << 10);
    vm.bytes[0..4].copy_from_slice(&entry0.to_le_bytes());
    vm.bytes[4..8].copy_from_slice(&entry1.to_le_bytes());
    let mut pm = Phys(FlatMemory::new(0, 0x1000));
    let put_at = PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD + nvgpu::hw::host::USERD_GP_PUT };
    pm.write_phys(put_at, &1u32.to_le_bytes());
    let mut channel = HostChannel::new(1, GPFIFO, 4, PhysAddr { aperture: PhysAperture::SystemCoherent, addr: USERD });
    use nvgpu::hw::classes::{HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A};
    let mut engines =
        sim::engines::ChannelEngines::new(nvgpu::hal::Family::Hopper, HOPPER_DMA_COPY_A, HOPPER_COMPUTE_A);
    // A stalled or blocked channel is run again, as the GPU does on the next doorbell; a few
    // times only.
    for _ in 0..3 {
        match channel.run(&mut vm, &mut pm, &mut engines, &mut Effects) {
            sim::host::RunOutcome::Idle | sim::host::RunOutcome::Error(_) => break,
            _ => {}
        }
    }
}

/// FSP traffic (Hopper, Blackwell): a sequence of packets, each as a 2-byte little-endian length
/// and its bytes. Each goes to the model's FSP (`sim::gsp_rm::fsp::FspState::packet`: MCTP
/// transport and message headers, NVDM types, the chain-of-trust command), and each packet and
/// each reply the model posts to the driver's reply check (`check_response`), as RM's channel
/// would carry them.
pub fn fsp(data: &[u8]) {
    use nvgpu::gsp::boot::fsp::check_response;
    let mut state = sim::gsp_rm::fsp::FspState::default();
    let mut rest = data;
    while let [lo, hi, tail @ ..] = rest {
        let len = (usize::from(*lo) | usize::from(*hi) << 8).min(tail.len());
        let (packet, next) = tail.split_at(len);
        let _ = check_response(packet.get(7..).unwrap_or(&[]));
        let outcome = state.packet(packet, None, 1 << 34, false, false);
        if let Some(reply) = outcome.reply {
            let _ = check_response(reply.get(7..).unwrap_or(&[]));
        }
        rest = next;
    }
}

/// An EDID as a display's DDC channel would give it: the base block, CTA-861 and DisplayID
/// extensions, block maps; then every detailed timing, the VICs, the timing generators behind
/// every mode and the mode selection at three pixel-clock limits. Bit 0 of the first byte fixes
/// the checksum of every 128-byte block first.
pub fn edid(data: &[u8]) {
    let Some((&mode, bytes)) = data.split_first() else { return };
    let mut bytes = bytes.to_vec();
    if mode & 1 != 0 {
        for block in bytes.chunks_exact_mut(128) {
            let sum = block[..127].iter().fold(0u8, |a, b| a.wrapping_add(*b));
            block[127] = 0u8.wrapping_sub(sum);
        }
    }
    let _ = nvgpu::display::parse_strict(&bytes);
    let Ok(edid) = nvgpu::display::parse(&bytes) else { return };
    let _ = edid.detailed_timings();
    let _ = edid.cta_vics();
    for timing in nvgpu::display::mode::all_timings(&edid) {
        let _ = (timing.h_total(), timing.v_total(), timing.refresh_millihz());
    }
    for max_khz in [0, 165_000, u32::MAX] {
        let _ = nvgpu::display::mode::select_mode(&edid, max_khz);
    }
}
