//! GSP-RM's LIBOS log buffers: read and decoded by `nvgpu::gsp::logs`, written by the GSP-RM
//! model (`sim::gsp_rm::log`), drained by the GSP boot into its report and errors.
//!
//! The record format is checked against NVIDIA's own header (`libos_log.h`, compiled with the
//! system C compiler); the boot runs on the model with Debian's real firmware files (535.261.03).
//! Missing real data is a failure, never a skip: run `sudo scripts/fetch-real-data.sh` from the
//! workspace root first (or point `NVGPU_REAL_DATA` at a copy).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use nvgpu::chip::Chipset;
use nvgpu::firmware::{module_name_for_path, FirmwareBundle, GspElf};
use nvgpu::gsp::boot::{BootConfig, BootInputs, BootStep, GspBoot};
use nvgpu::gsp::cmdq::QueueHeadDoorbell;
use nvgpu::gsp::fw::rpc::RpcFunction;
use nvgpu::gsp::logs::{
    logging_sections, GspLogs, LogElfError, LogLine, LogLineKind, LogMetadata, GSP_RM_LOG_TASKS,
    LOG_METADATA_EXTENDED_MARKER, LOG_METADATA_EXTENDED_SIZE, LOG_METADATA_SIZE,
};
use nvgpu::platform::FirmwareSource;
use nvgpu::vbios::Vbios;
use sim::gsp_rm::log::{elf64, metadata_address, model_log_firmware, string_address, Msg, MESSAGES};
use sim::{BootSequencer, DmaArena, GspFault, ModelConfig, ModelGpu};
use tests::model_boot::ModelClock;
use tests::rm_c::{compile_and_run, data_root};

// ---------------------------------------------------------------------------------------------
// Real data, the model, a clock.

fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "missing real data: {} ({what}).\nThis test never passes without the real files: run \
         `sudo scripts/fetch-real-data.sh` from the workspace root, or set NVGPU_REAL_DATA.",
        path.display()
    );
    path
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {} ({e})", path.display()))
}

fn gsp_firmware_file(name: &str) -> Vec<u8> {
    read(&require(
        data_root().join("firmware-nvidia-gsp/lib/firmware/nvidia/535.261.03").join(name),
        "Debian firmware-nvidia-gsp 535.261.03",
    ))
}

fn nvidia_tree() -> PathBuf {
    require(data_root().join("open-gpu-kernel-modules-535.261.03"), "NVIDIA's open-gpu-kernel-modules 535.261.03")
}

/// Firmware by flat module name, as the kernel finds boot modules.
struct DebianFiles(HashMap<String, Vec<u8>>);

impl FirmwareSource for DebianFiles {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(Vec::as_slice)
    }
}

/// `gsp_<family>.bin` and the three boot ucodes `chip` boots with.
fn debian_files(chip: Chipset) -> DebianFiles {
    let mut files = HashMap::new();
    let gsp_name = chip.gsp_firmware_file().expect("chip has GSP-RM firmware");
    files.insert(gsp_name.to_string(), gsp_firmware_file(gsp_name));
    let ucode_chip =
        nvgpu::firmware::boot_image_chip(chip, nvgpu::firmware::BootImage::BooterLoad).expect("chip has booters");
    for image in ["booter_load", "booter_unload", "bootloader"] {
        let path = require(
            data_root()
                .join("firmware-nvidia-graphics/lib/firmware/nvidia")
                .join(ucode_chip)
                .join("gsp")
                .join(format!("{image}-535.113.01.bin")),
            "Debian firmware-nvidia-graphics 20250410-2~bpo12+1",
        );
        let module = module_name_for_path(path.to_str().expect("utf-8 path")).expect("module name");
        files.insert(module, read(&path));
    }
    DebianFiles(files)
}

struct Rig {
    model: ModelGpu,
    arena: DmaArena,
    files: DebianFiles,
    vbios: Vbios,
    clock: ModelClock,
}

impl Rig {
    fn new(config: ModelConfig, sequencer: BootSequencer) -> Self {
        let chip = config.chipset;
        let model = ModelGpu::new(config);
        let arena = DmaArena::new();
        model.set_system_memory(Box::new(arena.clone()));
        model.set_gsp_boot_sequencer(sequencer);
        let vbios = Vbios::from_prom(&model).expect("model VBIOS");
        Self { model, arena, files: debian_files(chip), vbios, clock: ModelClock::default() }
    }

    fn inputs<'a>(&'a self, bundle: &'a FirmwareBundle<'a>) -> BootInputs<'a, ModelGpu, ModelClock, DmaArena> {
        BootInputs {
            io: &self.model,
            clock: &self.clock,
            dma: &self.arena,
            chipset: self.model.chipset(),
            firmware: bundle,
            vbios: Some(&self.vbios),
            generic_bootloader: None,
            fmc: None,
        }
    }
}

/// `file(line): ` of a model record, as the decoder prints it.
fn at(message: Msg) -> String {
    format!("log.rs({}): ", MESSAGES[message as usize].line)
}

fn texts(lines: &[LogLine]) -> Vec<String> {
    lines.iter().map(ToString::to_string).collect()
}

/// Where the line `[gsp <log>] <file(line) of message><rest>` is.
fn find(lines: &[LogLine], log: &str, message: Msg, rest: &str) -> usize {
    let wanted = format!("[gsp {log}] {}{rest}", at(message));
    lines
        .iter()
        .position(|l| l.to_string() == wanted)
        .unwrap_or_else(|| panic!("no line {wanted:?} in\n{}", texts(lines).join("\n")))
}

/// Where the first line of `log` starting with `message`'s text up to `rest` is.
fn find_prefix(lines: &[LogLine], log: &str, message: Msg, rest: &str) -> usize {
    let wanted = format!("[gsp {log}] {}{rest}", at(message));
    lines
        .iter()
        .position(|l| l.to_string().starts_with(&wanted))
        .unwrap_or_else(|| panic!("no line starting {wanted:?} in\n{}", texts(lines).join("\n")))
}

// ---------------------------------------------------------------------------------------------
// NVIDIA's record format.

/// `libosLogMetadata`'s layout and `LIBOS_LOG_INTERNAL`'s token order, from NVIDIA's header
/// compiled by the system C compiler: arguments first, the metadata's address last (the
/// timestamp LIBOS appends after them is only in the decoder, `libosExtractLog_ReadRecord`).
#[test]
fn the_record_format_is_nvidias() {
    let src = nvidia_tree().join("src");
    let program = r#"#include "libos_log.h"
#include <stdio.h>
#include <stddef.h>
static NvU64 got[32];
static NvU64 gotCount;
static void dispatch(NvU64 count, const NvU64 *tokens) { gotCount = count; for (NvU64 i = 0; i < count; i++) got[i] = tokens[i]; }
int main(void) {
    printf("%zu %zu %zu %zu %zu %zu\n", sizeof(libosLogMetadata), offsetof(libosLogMetadata, filename),
        offsetof(libosLogMetadata, format), offsetof(libosLogMetadata, lineNumber),
        offsetof(libosLogMetadata, argumentCount), offsetof(libosLogMetadata, printLevel));
    printf("%zu %zu %zu\n", sizeof(libosLogMetadata_extended), offsetof(libosLogMetadata_extended, elfSectionName),
        offsetof(libosLogMetadata_extended, meta));
    LIBOS_LOG_INTERNAL(dispatch, LOG_LEVEL_WARNING, "value %d and %x\n", 7, 0xab);
    const libosLogMetadata *m = (const libosLogMetadata *)(NvUPtr)got[gotCount - 1];
    printf("%llu %llu %llu %u %u %d %d %d\n", (unsigned long long)gotCount, (unsigned long long)got[0],
        (unsigned long long)got[1], m->argumentCount, m->printLevel, LOG_LEVEL_INFO, LOG_LEVEL_WARNING, LOG_LEVEL_ERROR);
    printf("%s", m->format);
    return 0;
}
"#;
    let flags: Vec<OsString> = vec![
        "-std=gnu11".into(),
        "-w".into(),
        "-DNVRM".into(),
        "-include".into(),
        src.join("common/sdk/nvidia/inc/cpuopsys.h").into(),
        "-I".into(),
        src.join("common/sdk/nvidia/inc").into(),
        "-I".into(),
        src.join("common/uproc/os/common/include").into(),
    ];
    let text = compile_and_run("libos_log", program, &flags);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("{LOG_METADATA_SIZE} 0 8 16 20 21"), "libosLogMetadata");
    assert_eq!(lines[1], format!("{LOG_METADATA_EXTENDED_SIZE} 8 16"), "libosLogMetadata_extended");
    // Three tokens: 7, 0xab, then &meta; two arguments at LOG_LEVEL_WARNING; levels 0, 1, 2.
    assert_eq!(lines[2], "3 7 171 2 1 0 1 2");
    assert_eq!(lines[3], "value %d and %x");

    // The same constants as the model writes them.
    let libos_log_h = std::fs::read_to_string(src.join("common/uproc/os/common/include/libos_log.h")).expect("read");
    assert!(libos_log_h.contains(".versionExtended = 0x8000000000000000ULL"));
    assert_eq!(LOG_METADATA_EXTENDED_MARKER, 0x8000_0000_0000_0000);
    let decoder = std::fs::read_to_string(src.join("common/uproc/os/common/include/liblogdecode.h")).expect("read");
    assert!(decoder.contains("#define LIBOS_LOG_MAX_ARGS         20"));
    let kernel_gsp = std::fs::read_to_string(src.join("nvidia/src/kernel/gpu/gsp/kernel_gsp.c")).expect("read");
    for (task, prefix_and_size) in GSP_RM_LOG_TASKS.iter().zip([
        r#"{"LOGINIT", "INIT", 0x10000, ".fwlogging_init"}"#,
        r#"{"LOGINTR", "INTR", 0x10000, ".fwlogging_rm"}"#,
        r#"{"LOGRM",   "RM",   0x10000, ".fwlogging_rm"}"#,
    ]) {
        assert!(kernel_gsp.contains(prefix_and_size), "{prefix_and_size}");
        assert!(prefix_and_size.contains(task.name) && prefix_and_size.contains(task.elf_section));
    }
}

/// Debian's firmware carries no log metadata: NVIDIA strips `.logging` from the images and ships
/// the metadata only in `gsp_log_*.bin`, which Debian does not package. The decoder says so
/// instead of resolving garbage, and a boot prints the records raw.
#[test]
fn debians_firmware_has_no_logging_sections() {
    for name in ["gsp_ga10x.bin", "gsp_tu10x.bin"] {
        let file = gsp_firmware_file(name);
        let elf = GspElf::parse(&file).expect("GSP container");
        let sections: Vec<&str> = elf.sections().iter().map(|s| s.name).collect();
        assert!(sections.contains(&".fwimage") && sections.contains(&".fwversion"), "{name}: {sections:?}");
        assert_eq!(logging_sections(&file).expect("ELF"), Vec::<&str>::new(), "{name}: {sections:?}");
        assert_eq!(LogMetadata::from_log_firmware(&file), Err(LogElfError::NoLoggingSection), "{name}");
    }
    // gsp_tu10x.bin's image is itself an ELF (LIBOS 2): its `.logging` sections are stripped too.
    let file = gsp_firmware_file("gsp_tu10x.bin");
    let image = GspElf::parse(&file).expect("container").image();
    assert!(image.starts_with(b"\x7fELF"));
    assert_eq!(logging_sections(image).expect("ELF"), Vec::<&str>::new());
    // gsp_ga10x.bin's image is a raw LIBOS 3 image, not an ELF.
    let file = gsp_firmware_file("gsp_ga10x.bin");
    assert!(!GspElf::parse(&file).expect("container").image().starts_with(b"\x7fELF"));
}

/// The model's gsp_log file is shaped as RM reads `gsp_log_*.bin`, and a known format string
/// resolves through it the documented way: metadata address -> `libosLogMetadata` -> format.
#[test]
fn the_models_log_firmware_resolves_format_strings() {
    let file = model_log_firmware();
    assert_eq!(logging_sections(&file).expect("ELF"), [".fwlogging"]);
    let metadata = LogMetadata::from_log_firmware(&file).expect("model log firmware");
    assert!(metadata.is_container());
    assert_eq!(metadata.task_sections(), [".fwlogging_init", ".fwlogging_rm"]);
    for task in &GSP_RM_LOG_TASKS {
        let elf = metadata.for_task(task).expect("task ELF");
        let meta = elf.metadata(metadata_address(Msg::InitDone)).expect("metadata");
        assert_eq!(elf.string(meta.format), Some(b"GSP_INIT_DONE posted\n".as_slice()));
        assert_eq!(elf.string(meta.filename), Some(b"sim/src/gsp_rm/log.rs".as_slice()));
        assert_eq!((meta.argument_count, meta.level, meta.line), (0, 0, MESSAGES[Msg::InitDone as usize].line));
        assert_eq!(elf.metadata(0x10), None, "an address outside the ELF");
    }
    // A version other than the driver's is refused, as `_kgspFwContainerVerifyVersion` does.
    let mut other = file.clone();
    let at = other.windows(11).position(|w| w == b"535.261.03\0").expect("version");
    other[at] = b'9';
    assert!(matches!(LogMetadata::from_log_firmware(&other), Err(LogElfError::Version { .. })));
    assert!(matches!(LogMetadata::from_log_firmware(b"not an ELF"), Err(LogElfError::NotElf { .. })));
}

// ---------------------------------------------------------------------------------------------
// The boot on the model.

/// A GA102 boot to `GSP_INIT_DONE` and the static information with Debian's firmware and the
/// model's log metadata: GSP-RM's log is in the report, decoded, oldest first.
#[test]
fn the_models_log_appears_decoded_after_a_boot() {
    let rig = Rig::new(ModelConfig::rtx3090(), BootSequencer::WithCoreResume);
    let bundle = FirmwareBundle::load(&rig.files, Chipset::GA102).expect("bundle");
    let log_file = model_log_firmware();
    let metadata = LogMetadata::from_log_firmware(&log_file).expect("model log firmware");
    let config = BootConfig { pci: sim::boot_placement(rig.model.config()), ..BootConfig::default() };
    let mut boot = GspBoot::new(rig.inputs(&bundle), config, QueueHeadDoorbell(&rig.model));
    boot.set_log_metadata(Some(&metadata));
    let report = boot.run().unwrap_or_else(|e| panic!("{e}\nmodel errors: {:?}", rig.model.errors()));
    let lines = &report.logs;
    eprintln!("{}", texts(lines).join("\n"));
    assert!(lines.iter().all(|l| matches!(l.kind, LogLineKind::Record { .. })), "all decoded");
    let stamps: Vec<u64> = lines.iter().map(|l| l.timestamp.expect("records have timestamps")).collect();
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "merged oldest first: {stamps:?}");

    let data = boot.data().expect("boot data");
    let rm_args = data.rm_args.message_queue_init_arguments;
    let libos = find(
        lines,
        "LOGINIT",
        Msg::LibosArgs,
        &format!(
            "LIBOS init arguments at {:#x}: 4 regions, RMARGS at {:#x}",
            data.libos_args_address(),
            data.rm_args_page.bus_address()
        ),
    );
    let queues = find(
        lines,
        "LOGINIT",
        Msg::QueuesLinked,
        &format!(
            "message queues linked: shared memory at {:#x}, {} page table entries",
            rm_args.shared_mem_phys_addr, rm_args.page_table_entry_count
        ),
    );
    let system_info =
        find(lines, "LOGRM", Msg::BootRpc, "boot RPC NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO: 672 bytes");
    let registry = find_prefix(lines, "LOGRM", Msg::BootRpc, "boot RPC NV_VGPU_MSG_FUNCTION_SET_REGISTRY: ");
    let sequencer = find_prefix(lines, "LOGRM", Msg::SequencerPosted, "GSP_RUN_CPU_SEQUENCER posted: ");
    assert!(lines[sequencer].text.ends_with("CORE_RESUME yes"), "{}", lines[sequencer]);
    let resumed = find(lines, "LOGINIT", Msg::Resumed, "resumed by SEC2 after CORE_RESUME");
    let init_done = find(lines, "LOGRM", Msg::InitDone, "GSP_INIT_DONE posted");
    let static_info = find(
        lines,
        "LOGRM",
        Msg::RpcAnswered,
        &format!(
            "RPC NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO ({}) answered: status 0",
            RpcFunction::GetGspStaticInfo.raw()
        ),
    );
    // GSP-RM's order, across the two buffers.
    let positions = [libos, queues, system_info, registry, sequencer, resumed, init_done, static_info];
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    assert_eq!(rig.model.errors(), vec![], "the strict model saw nothing wrong");

    // After the boot, reading again gives only what is new: the unload's records.
    assert!(boot.drain_logs().is_empty(), "nothing new");
    boot.unload().unwrap_or_else(|e| panic!("{e}"));
    let after = boot.drain_logs();
    find(&after, "LOGRM", Msg::Unloading, "UNLOADING_GUEST_DRIVER: suspending");
    find(
        &after,
        "LOGRM",
        Msg::RpcAnswered,
        &format!(
            "RPC NV_VGPU_MSG_FUNCTION_UNLOADING_GUEST_DRIVER ({}) answered: status 0",
            RpcFunction::UnloadingGuestDriver.raw()
        ),
    );
    drop(boot);
    rig.model.take_errors();
    assert_eq!(rig.arena.allocated(), 0);
}

/// Without `gsp_log_*.bin` (Debian's case) the same records come out raw, with their metadata
/// addresses visible for an offline decoder.
#[test]
fn without_log_metadata_the_boot_prints_the_records_raw() {
    let rig = Rig::new(ModelConfig::rtx4090(), BootSequencer::None);
    let bundle = FirmwareBundle::load(&rig.files, Chipset::AD102).expect("bundle");
    let config = BootConfig { pci: sim::boot_placement(rig.model.config()), ..BootConfig::default() };
    let mut boot = GspBoot::new(rig.inputs(&bundle), config, QueueHeadDoorbell(&rig.model));
    let report = boot.run().unwrap_or_else(|e| panic!("{e}"));
    let lines = &report.logs;
    eprintln!("{}", texts(lines).join("\n"));
    assert!(lines.iter().all(|l| l.kind == LogLineKind::Raw), "{:#?}", lines);
    let init_header = lines.iter().find(|l| l.log == "LOGINIT").expect("LOGINIT lines");
    assert!(
        init_header.text.contains("no logging metadata") && init_header.text.contains(".fwlogging_init"),
        "{init_header}"
    );
    let raw = texts(lines).join("\n");
    for message in [Msg::LibosArgs, Msg::QueuesLinked, Msg::BootRpc, Msg::InitDone] {
        assert!(raw.contains(&format!("{:#018x}", metadata_address(message))), "{message:?} in\n{raw}");
    }
    assert!(!lines.iter().any(|l| l.log == "LOGINTR"), "nothing logged by the interrupt task");
    drop(boot);
    rig.model.take_errors();
}

/// A failed boot carries what GSP-RM logged: here GSP-RM drops every command, the boot times out
/// waiting for `GSP_INIT_DONE`, and the error prints GSP-RM's lines, decoded.
#[test]
fn a_failed_boot_prints_what_gsp_rm_logged() {
    let rig = Rig::new(ModelConfig::rtx3090(), BootSequencer::None);
    rig.model.inject(GspFault::DropCommands);
    let bundle = FirmwareBundle::load(&rig.files, Chipset::GA102).expect("bundle");
    let log_file = model_log_firmware();
    let metadata = LogMetadata::from_log_firmware(&log_file).expect("model log firmware");
    let config = BootConfig { init_done_timeout_ms: 50, ..BootConfig::default() };
    let config = BootConfig { pci: sim::boot_placement(rig.model.config()), ..config };
    let mut boot = GspBoot::new(rig.inputs(&bundle), config, QueueHeadDoorbell(&rig.model));
    boot.set_log_metadata(Some(&metadata));
    let err = boot.run().expect_err("GSP-RM answers nothing");
    eprintln!("{err}");
    assert_eq!(err.step, BootStep::WaitInitDone);
    find_prefix(&err.logs, "LOGINIT", Msg::QueuesLinked, "message queues linked: shared memory at 0x");
    let dropped = format!(
        "[gsp LOGRM] {}RPC NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO ({}) dropped (injected fault)",
        at(Msg::RpcDropped),
        RpcFunction::GspSetSystemInfo.raw()
    );
    assert!(texts(&err.logs).contains(&dropped), "{:#?}", texts(&err.logs));
    assert!(err.to_string().contains(&format!("\n  {dropped}")), "the error prints GSP-RM's log:\n{err}");
    assert_eq!(err.logs, boot.report().logs, "the error carries the boot's whole log");

    // A fatal error after the boot: GSP-RM logs it before it stops.
    rig.model.clear_faults();
    rig.model.inject(GspFault::StopRiscv);
    let lines = boot.drain_logs();
    let fatal = lines.iter().find(|l| l.text.starts_with(&at(Msg::Fatal))).expect("fatal logged");
    assert!(fatal.text.contains("fatal: injected stop: error word 0xe"), "{fatal}");
    assert_eq!(fatal.kind, LogLineKind::Record { level: nvgpu::gsp::logs::LOG_LEVEL_ERROR });
    drop(boot);
    rig.model.take_errors();
    assert_eq!(rig.arena.allocated(), 0);
}

// ---------------------------------------------------------------------------------------------
// Buffers written by hand: wrap-around and corruption.

/// A log buffer written as LIBOS writes it.
struct Buffer {
    bytes: Vec<u8>,
    put: u64,
    clock: u64,
}

impl Buffer {
    fn new(size: usize) -> Self {
        Self { bytes: vec![0; size], put: 0, clock: 1_000 }
    }

    fn entries(&self) -> u64 {
        (self.bytes.len() / 8 - 1) as u64
    }

    fn set_put(&mut self, put: u64) {
        self.put = put;
        self.bytes[..8].copy_from_slice(&put.to_le_bytes());
    }

    fn push(&mut self, tokens: &[u64]) {
        for &token in tokens {
            let at = 8 * (1 + (self.put % self.entries()) as usize);
            self.bytes[at..at + 8].copy_from_slice(&token.to_le_bytes());
            self.put += 1;
        }
        self.set_put(self.put);
    }

    /// A record: arguments, metadata address, timestamp.
    fn record(&mut self, meta: u64, args: &[u64]) {
        self.clock += 1_000;
        let mut tokens = args.to_vec();
        tokens.extend([meta, self.clock]);
        self.push(&tokens);
    }

    /// "RPC <name> (<function>) answered: status <n>": five qwords.
    fn answered(&mut self, function: RpcFunction, status: u64) {
        let name = string_address(function.nvidia_name());
        self.record(metadata_address(Msg::RpcAnswered), &[name, function.raw().into(), status]);
    }
}

fn answered_text(function: RpcFunction, status: u64) -> String {
    format!("{}RPC {} ({}) answered: status {status:#x}", at(Msg::RpcAnswered), function.nvidia_name(), function.raw())
}

fn rm_only<'a>(metadata: Option<&LogMetadata<'a>>) -> GspLogs<'a> {
    GspLogs::new(&GSP_RM_LOG_TASKS[2..], metadata)
}

#[test]
fn records_wrap_around_the_ring_as_libos_writes_them() {
    let file = model_log_firmware();
    let metadata = LogMetadata::from_log_firmware(&file).expect("metadata");
    let mut logs = rm_only(Some(&metadata));
    // 0x100 bytes: the put pointer and a ring of 31 qwords; a record here is 5 qwords.
    let mut buffer = Buffer::new(0x100);
    let functions = [RpcFunction::Nop, RpcFunction::Free, RpcFunction::GspRmAlloc, RpcFunction::GspRmControl];

    // Four records, read; four more, crossing the end of the ring, read: nothing lost.
    for round in 0..2u64 {
        for (i, f) in functions.iter().enumerate() {
            buffer.answered(*f, 0x10 * round + i as u64 + 1);
        }
        let lines = logs.drain_to_vec(&[&buffer.bytes]);
        let expected: Vec<String> =
            functions.iter().enumerate().map(|(i, f)| answered_text(*f, 0x10 * round + i as u64 + 1)).collect();
        assert_eq!(lines.iter().map(|l| l.text.clone()).collect::<Vec<_>>(), expected, "round {round}");
    }
    assert!(buffer.put > buffer.entries(), "the ring wrapped");

    // Ten records (50 qwords) between two reads: the ring keeps 31 qwords, six whole records.
    for i in 0..10u64 {
        buffer.answered(RpcFunction::Nop, 0x100 + i);
    }
    let lines = logs.drain_to_vec(&[&buffer.bytes]);
    assert_eq!(lines[0].kind, LogLineKind::Error);
    assert_eq!(lines[0].to_string(), "[gsp LOGRM] buffer wrapped: lost 20 qwords");
    let texts: Vec<String> = lines[1..].iter().map(|l| l.text.clone()).collect();
    let expected: Vec<String> = (4..10u64).map(|i| answered_text(RpcFunction::Nop, 0x100 + i)).collect();
    assert_eq!(texts, expected);
    assert_eq!(logs.positions(), [("LOGRM", buffer.put)]);
}

#[test]
fn a_corrupted_put_pointer_or_record_gives_an_error_line() {
    let file = model_log_firmware();
    let metadata = LogMetadata::from_log_firmware(&file).expect("metadata");
    let mut logs = rm_only(Some(&metadata));
    let mut buffer = Buffer::new(0x1000);

    // A record whose metadata pointer resolves nowhere: older records are lost with it (their
    // length is unknown), newer ones still decode.
    buffer.answered(RpcFunction::Nop, 1);
    buffer.record(0xdead_beef, &[]);
    buffer.answered(RpcFunction::Free, 2);
    let lines = logs.drain_to_vec(&[&buffer.bytes]);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert_eq!(lines[0].to_string(), "[gsp LOGRM] bad metadata 0xdeadbeef at qword 5: lost 7 qwords");
    assert_eq!(lines[1].text, answered_text(RpcFunction::Free, 2));

    // The put pointer going back: an error line, then the buffer is read from its start.
    buffer.set_put(5);
    let lines = logs.drain_to_vec(&[&buffer.bytes]);
    assert_eq!(lines[0].kind, LogLineKind::Error);
    assert!(lines[0].text.contains("went back from 12 to 5"), "{}", lines[0]);
    assert_eq!(lines[1].text, answered_text(RpcFunction::Nop, 1));

    // A put pointer far ahead: the ring is read as wrapped, whatever it holds.
    buffer.set_put(u64::MAX - 7);
    let lines = logs.drain_to_vec(&[&buffer.bytes]);
    assert!(lines.iter().any(|l| l.kind == LogLineKind::Error), "{lines:#?}");

    // Garbage everywhere, many put pointers: lines, never a panic.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..200 {
        let mut garbage = Buffer::new(0x200);
        for chunk in garbage.bytes.chunks_exact_mut(8) {
            // Some qwords point at real metadata, so that decoding gets somewhere.
            let value = match next() % 4 {
                0 => metadata_address(Msg::RpcAnswered),
                1 => metadata_address(Msg::Fatal),
                _ => next(),
            };
            chunk.copy_from_slice(&value.to_le_bytes());
        }
        let put = if round % 2 == 0 { next() % 200 } else { next() };
        garbage.set_put(put);
        let mut fresh = rm_only(Some(&metadata));
        let lines = fresh.drain_to_vec(&[&garbage.bytes]);
        assert!(lines.len() <= 64, "bounded output");
        for line in &lines {
            assert!(line.text.len() <= 2048, "bounded line");
        }
    }
}

/// Metadata that lies: too many arguments, a format string outside the ELF, `%s` of an address
/// outside it, and an extended record (`LIBOS_LOG_ADDRESS`).
#[test]
fn lying_metadata_is_reported_not_trusted() {
    const VA: u64 = 0x2000_0000;
    let mut section = vec![0u8; 4 * 24 + 40];
    let strings_at = section.len() as u64;
    let put_meta = |section: &mut Vec<u8>, at: usize, filename: u64, format: u64, line: u32, args: u8, level: u8| {
        section[at..at + 8].copy_from_slice(&filename.to_le_bytes());
        section[at + 8..at + 16].copy_from_slice(&format.to_le_bytes());
        section[at + 16..at + 20].copy_from_slice(&line.to_le_bytes());
        section[at + 20] = args;
        section[at + 21] = level;
    };
    let file = VA + strings_at;
    section.extend_from_slice(b"src/kernel/gpu/gsp/x.c\0");
    let format = VA + section.len() as u64;
    section.extend_from_slice(b"%s and %s\n\0");
    let word = VA + section.len() as u64;
    section.extend_from_slice(b"word\0");
    let task = VA + section.len() as u64;
    section.extend_from_slice(b".fwlogging_rm\0");
    put_meta(&mut section, 0, file, format, 1, 200, 0); // too many arguments
    put_meta(&mut section, 24, file, 0x7777_0000, 2, 1, 1); // format outside the ELF
    put_meta(&mut section, 48, file, format, 3, 2, 2); // fine; %s of a bad address
                                                       // Extended: marker, task section name, then the metadata.
    section[96..104].copy_from_slice(&LOG_METADATA_EXTENDED_MARKER.to_le_bytes());
    section[104..112].copy_from_slice(&task.to_le_bytes());
    put_meta(&mut section, 112, file, format, 4, 2, 0);
    let elf = elf64(&[(".logging", 1, VA, &section)]);
    let metadata = LogMetadata::from_logging_elf(&elf).expect("plain logging ELF");
    assert!(!metadata.is_container());
    let mut logs = rm_only(Some(&metadata));
    assert!(logs.decodes("LOGRM"));

    let mut buffer = Buffer::new(0x1000);
    buffer.record(VA + 48, &[word, 0x1234]);
    buffer.record(VA + 96, &[word, word]);
    buffer.record(VA + 24, &[5]);
    let lines = logs.drain_to_vec(&[&buffer.bytes]);
    assert_eq!(
        texts(&lines),
        [
            "[gsp LOGRM] x.c(3): word and (bad-pointer)",
            "[gsp LOGRM] x.c(4): word and word",
            "[gsp LOGRM] x.c(2): <format string 0x77770000 not in the logging ELF> 0x5",
        ]
    );
    assert_eq!(lines[0].kind, LogLineKind::Record { level: 2 });
    buffer.answered(RpcFunction::Nop, 0); // 3 args at an address of the model's ELF: not here
    buffer.record(VA, &[]);
    let lines = logs.drain_to_vec(&[&buffer.bytes]);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].text.starts_with(&format!("bad metadata {VA:#x}")), "{}", lines[0]);
}
