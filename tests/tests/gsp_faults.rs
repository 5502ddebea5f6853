//! Every GSP fault the GPU model injects (`sim::GspFault`) ends in the right typed error, with
//! the RPC history, within its timeout; and a fault on one GPU leaves another working.
//!
//! The boot is the driver's (`nvgpu::gsp::boot::GspBoot`) with the real Debian firmware
//! (535.261.03) on one model chip of every family it runs, each boot flow among them: TU102
//! (FWSEC through NVIDIA's generic falcon bootloader), GA100 (no FWSEC, the booter loaded by PIO,
//! no `FALCON_OS`), GA102 and AD102, and GH100 (the FSP chain of trust and the GSP-FMC, no
//! booter). Blackwell is left out: 535.261.03 does not run it. Time is virtual ([`VirtualClock`]): every wait ends
//! after the same number of polls on every run, and a 30 s bound takes a fraction of a second.
//!
//! | fault | where | error |
//! |---|---|---|
//! | `DropCommands` | before boot | step "wait for GSP_INIT_DONE": timeout naming `GSP_INIT_DONE` and the bound |
//! | `DropCommands` | after boot | `RmError::Rpc`: timeout naming the RPC, history of the RPCs before |
//! | `FailCommands` | before boot | step `GET_GSP_STATIC_INFO`: the status by name |
//! | `FailCommands` | after boot | `RmError::Alloc` / `RmError::Control`: class or command, handles, status |
//! | `CorruptNextMessage` | before / after boot | bad checksum, the record left in the queue, history |
//! | `BooterHalts` | boot | step "booter_load on SEC2" with `MAILBOX0`; on GH100 the FSP chain-of-trust step, the GSP-FMC's code in the GSP's `MAILBOX0` |
//! | `StopRiscv` | at GSP-RM start / in the INIT_DONE wait / after boot | the step or RPC, and GSP-RM's error word from `NV_PGSP_MAILBOX(0)` |
//!
//! With two model GPUs (GA102 and AD102, two GA102s, GH100 and TU102), each fault on one leaves the other
//! booting and serving RM allocs and controls. Every error prints as one line naming the chip,
//! the step or RPC, the cause and (RPC errors) the history; `BootError` may add GSP-RM's LIBOS
//! log lines after it. `RmError::Alloc`/`Control` name neither the chip nor the history (the
//! RM layer drops the RPC error it came from): the history is checked on the client instead.
//!
//! Missing real data is a failure, never a skip: run `sudo scripts/fetch-real-data.sh` from the
//! workspace root first (or point `NVGPU_REAL_DATA` at a copy).

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use nvgpu::chip::Chipset;
use nvgpu::firmware::FirmwareBundle;
use nvgpu::fwsec::frts::GenericBootloader;
use nvgpu::gsp::boot::booter::{Booter, BooterError};
use nvgpu::gsp::boot::fsp::{FmcImages, FspError};
use nvgpu::gsp::boot::{
    BootConfig, BootError, BootErrorKind, BootInputs, BootStep, GspBoot, GspErrorReport, INIT_DONE_TIMEOUT_MS,
};
use nvgpu::gsp::cmdq::{QueueHeadDoorbell, TransportError};
use nvgpu::gsp::commands::{GspRpc, LogEvents, RpcError, RpcErrorKind, RPC_REPLY_TIMEOUT_MS};
use nvgpu::gsp::fw::msgq::ElementError;
use nvgpu::gsp::fw::rpc::{RpcEvent, RpcFunction};
use nvgpu::gsp::history::{Direction, RpcHistoryEntry, RpcName, RpcOutcome};
use nvgpu::gsp::status::NvStatus;
use nvgpu::hw::RegisterIo;
use nvgpu::platform::Clock;
use nvgpu::rm::{Device, Handle, RmClient, RmError, NV01_DEVICE_0, NV20_SUBDEVICE_0, RS_UNIQUE_HANDLE_BASE};
use nvgpu::vbios::Vbios;
use sim::gsp_rm::payloads::{NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS_SIZE};
use sim::{BootSequencer, DmaArena, GspFault, GspRmError, GspRmStatus, ModelConfig, ModelError, ModelGpu};
use tests::model_boot::FirmwareFiles;

// ---------------------------------------------------------------------------------------------
// Virtual time, firmware, boards.

/// Virtual time: every reading advances 10 µs. The model works inside register accesses, so a
/// wait that can end ends within a few readings, and one that cannot ends exactly at its bound.
struct VirtualClock(Cell<u64>);

const TICK_NS: u64 = 10_000;

impl VirtualClock {
    fn peek(&self) -> u64 {
        self.0.get()
    }
}

impl Clock for VirtualClock {
    fn now_ns(&self) -> u64 {
        let now = self.0.get();
        self.0.set(now + TICK_NS);
        now
    }
}

const MS: u64 = 1_000_000;
/// How far past its bound a timed-out wait may end: its last polls and the step's own readings.
const SLACK_NS: u64 = MS;

/// `elapsed` is a wait of `bound_ms` that ran out: not shorter, and not much longer.
fn assert_bounded(elapsed_ns: u64, bound_ms: u64, what: &str) {
    assert!(
        (bound_ms * MS..=bound_ms * MS + SLACK_NS).contains(&elapsed_ns),
        "{what}: {elapsed_ns} ns for a bound of {bound_ms} ms"
    );
}

fn data_root() -> PathBuf {
    match std::env::var_os("NVGPU_REAL_DATA") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/real-data"),
    }
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| {
        panic!(
            "missing real data: {} ({e}).\nThis test never passes without the real files: run \
             `sudo scripts/fetch-real-data.sh` from the workspace root, or set NVGPU_REAL_DATA.",
            path.display()
        )
    })
}

/// What `chip` boots with: the Debian firmware bundle (GSP-RM is 38 MB), NVIDIA's generic falcon
/// bootloader (Turing's FWSEC) and the GSP-FMC images (Hopper's FSP chain of trust), read once
/// per test process.
struct Firmware {
    bundle: FirmwareBundle<'static>,
    generic_bootloader: Option<GenericBootloader<'static>>,
    fmc: Option<FmcImages<'static>>,
}

fn firmware(chip: Chipset) -> &'static Firmware {
    static FIRMWARE: OnceLock<Mutex<HashMap<Chipset, &'static Firmware>>> = OnceLock::new();
    let mut all = FIRMWARE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    all.entry(chip).or_insert_with(|| {
        let files: &'static FirmwareFiles = Box::leak(Box::new(tests::model_boot::firmware_files(chip)));
        Box::leak(Box::new(Firmware {
            bundle: FirmwareBundle::load(files, chip).expect("Debian firmware bundle"),
            generic_bootloader: FirmwareBundle::generic_bootloader(files, chip).expect("generic bootloader"),
            fmc: FirmwareBundle::fmc_images(files, chip).expect("GSP-FMC images"),
        }))
    })
}

/// One model GPU with its DMA memory, VBIOS and clock.
struct Board {
    model: ModelGpu,
    arena: DmaArena,
    vbios: Vbios,
    clock: VirtualClock,
}

type Boot<'a, R> = GspBoot<'a, R, VirtualClock, DmaArena, QueueHeadDoorbell<&'a ModelGpu>>;
type Rpc<'a> = GspRpc<QueueHeadDoorbell<&'a ModelGpu>, nvgpu::gsp::boot::ClockRef<'a, VirtualClock>>;

/// The INIT_DONE bound the boot tests use (the default, 30 s, has its own test).
const INIT_DONE_MS: u64 = 250;

impl Board {
    fn new(config: ModelConfig, sequencer: BootSequencer) -> Self {
        let model = ModelGpu::new(config);
        let arena = DmaArena::new();
        model.set_system_memory(Box::new(arena.clone()));
        model.set_gsp_boot_sequencer(sequencer);
        let vbios = Vbios::from_prom(&model).expect("model VBIOS");
        Self { model, arena, vbios, clock: VirtualClock(Cell::new(0)) }
    }

    fn chip(&self) -> Chipset {
        self.model.chipset()
    }

    /// The model has no `NV_PFB_PRI_MMU_LOCAL_MEMORY_RANGE` (GA100): the FB size comes from the
    /// board.
    fn boot_config(&self) -> BootConfig {
        BootConfig {
            usable_fb_size: Some(self.model.config().vram_bytes),
            init_done_timeout_ms: INIT_DONE_MS,
            ..BootConfig::default()
        }
    }

    /// A boot with BAR0 through `io` (the model, or a [`Tap`] on it).
    fn boot_on<'a, R: RegisterIo>(&'a self, io: &'a R, config: BootConfig) -> Boot<'a, R> {
        let inputs = BootInputs {
            io,
            clock: &self.clock,
            dma: &self.arena,
            chipset: self.chip(),
            firmware: &firmware(self.chip()).bundle,
            vbios: Some(&self.vbios),
            generic_bootloader: firmware(self.chip()).generic_bootloader,
            fmc: firmware(self.chip()).fmc,
        };
        let config = BootConfig { pci: sim::boot_placement(self.model.config()), ..config };
        GspBoot::new(inputs, config, QueueHeadDoorbell(&self.model))
    }

    fn boot(&self) -> Boot<'_, ModelGpu> {
        self.boot_on(&self.model, self.boot_config())
    }

    /// Boots to `GET_GSP_STATIC_INFO`; the strict model saw nothing wrong.
    fn booted(&self) -> Boot<'_, ModelGpu> {
        let mut boot = self.boot();
        if let Err(e) = boot.run() {
            panic!("{e}\nmodel: {:?}", self.model.errors());
        }
        assert_eq!(self.model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
        assert_eq!(self.model.errors(), vec![]);
        boot
    }
}

/// A failed boot: the error, the steps that ran, the failing step's clock time.
struct Failed {
    error: BootError,
    ran: Vec<BootStep>,
    elapsed_ns: u64,
}

/// Runs `boot`, which must fail; drops it and checks every DMA region went back.
fn fail<R: RegisterIo>(board: &Board, mut boot: Boot<'_, R>) -> Failed {
    let error = boot.run().expect_err("the boot must fail");
    eprintln!("{error}");
    let ran: Vec<BootStep> = boot.report().steps.iter().map(|s| s.step).collect();
    let elapsed_ns = boot.report().steps.last().map_or(0, |s| s.elapsed_ns);
    assert_eq!(ran.last(), Some(&error.step), "the failing step is the last that ran");
    drop(boot);
    assert_eq!(board.arena.allocated(), 0, "{:?}: a failed boot returns its DMA memory", board.chip());
    Failed { error, ran, elapsed_ns }
}

/// What a [`Tap`] does after a write reached the model (given the register's offset).
type AfterWrite<'a> = Box<dyn Fn(&ModelGpu, u32) + 'a>;

/// BAR0 with a hook after every write: a fault armed at an exact point of the boot.
struct Tap<'a> {
    model: &'a ModelGpu,
    after_write: AfterWrite<'a>,
}

impl RegisterIo for Tap<'_> {
    fn read32(&self, offset: u32) -> u32 {
        self.model.read32(offset)
    }
    fn write32(&self, offset: u32, value: u32) {
        self.model.write32(offset, value);
        (self.after_write)(self.model, offset);
    }
}

/// One chip of every family 535.261.03 runs, each boot flow among them: TU102 (FWSEC through
/// NVIDIA's generic falcon bootloader, then the booter), GA100 (no FWSEC, the booter by PIO, no
/// FALCON_OS), GA102 and AD102 (FWSEC, the booter), GH100 (the FSP and the GSP-FMC; no booter).
/// Blackwell is not here: 535.261.03 does not run it.
fn boot_flow_chips() -> [ModelConfig; 5] {
    [
        ModelConfig::rtx2080ti(),
        ModelConfig::for_chipset(Chipset::GA100),
        ModelConfig::rtx3090(),
        ModelConfig::rtx4090(),
        ModelConfig::h200(),
    ]
}

/// Faults after boot are GSP-RM's, whatever the boot flow was: every family.
fn every_family() -> [ModelConfig; 5] {
    boot_flow_chips()
}

/// `text` is one line holding every piece.
fn assert_line(text: &str, pieces: &[&str]) {
    assert!(!text.contains('\n'), "one line: {text}");
    for piece in pieces {
        assert!(text.contains(piece), "{piece:?} missing from: {text}");
    }
}

/// A boot error: its first line holds every piece; what follows is GSP-RM's own log, a line
/// each, indented (`BootError` appends the LIBOS log lines read up to the failure).
fn assert_boot_error_line(error: &BootError, pieces: &[&str]) {
    let text = error.to_string();
    let mut lines = text.lines();
    assert_line(lines.next().unwrap_or_default(), pieces);
    let logs: Vec<&str> = lines.collect();
    assert_eq!(logs.len(), error.logs.len(), "only the log lines follow: {text}");
    assert!(logs.iter().all(|l| l.starts_with("  ")), "{text}");
}

fn chip_name(chip: Chipset) -> String {
    format!("{chip:?}")
}

/// What each history entry was: direction, name, outcome.
fn history_of(e: &RpcError) -> Vec<RpcHistoryEntry> {
    e.history.as_ref().expect("the error carries the history").entries().copied().collect()
}

fn command(function: RpcFunction) -> RpcName {
    function.into()
}

/// The RPC error of a boot error.
fn rpc_error(error: &BootError) -> &RpcError {
    match &error.kind {
        BootErrorKind::Rpc(e) => e,
        other => panic!("not an RPC error: {other:?}"),
    }
}

/// The model's `InjectedStop` error word, as the driver decodes it.
fn injected_stop() -> GspErrorReport {
    GspErrorReport { mailbox0: GspRmError::InjectedStop.error_word(), mailbox1: 0 }
}

/// Client, device on a booted GSP-RM.
fn client_and_device(rpc: &mut Rpc<'_>) -> (RmClient, Handle<Device>) {
    let mut client = RmClient::new(rpc, 0).expect("client");
    let device = client.alloc_device(rpc, &Default::default()).expect("device");
    (client, device)
}

fn class_list_params() -> Vec<u8> {
    vec![0u8; NV0080_CTRL_GPU_GET_CLASSLIST_V2_PARAMS_SIZE as usize]
}

/// A GPU serves RM allocs and controls: subdevice, class list (which holds the subdevice class).
fn serves_rm(board: &Board, rpc: &mut Rpc<'_>, client: &mut RmClient, device: Handle<Device>) {
    let subdevice =
        client.alloc_subdevice(rpc, device, &Default::default()).unwrap_or_else(|e| panic!("{:?}: {e}", board.chip()));
    let mut params = class_list_params();
    client
        .control(rpc, device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &mut params)
        .unwrap_or_else(|e| panic!("{:?}: {e}", board.chip()));
    let count = u32::from_le_bytes(params[..4].try_into().unwrap()) as usize;
    let classes: Vec<u32> =
        params[4..4 + 4 * count].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(classes.contains(&NV20_SUBDEVICE_0), "{classes:x?}");
    assert!(
        board.model.gsp_rm_objects().iter().any(|o| o.handle == subdevice.raw()),
        "{:?}: GSP-RM holds the subdevice",
        board.chip()
    );
    assert_eq!(board.model.errors(), vec![], "{:?}", board.chip());
}

/// The handle `RmClient` gives its n-th object.
const fn object(n: u32) -> u32 {
    RS_UNIQUE_HANDLE_BASE + n
}

// ---------------------------------------------------------------------------------------------
// 1. GSP-RM never answers.

#[test]
fn a_gsp_rm_that_never_answers_before_boot_times_out_waiting_for_init_done() {
    for config in boot_flow_chips() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        board.model.inject(GspFault::DropCommands);
        let Failed { error, ran, elapsed_ns } = fail(&board, board.boot());

        assert_eq!((error.chipset, error.step), (chip, BootStep::WaitInitDone));
        let rpc = rpc_error(&error);
        assert_eq!(
            rpc.kind,
            RpcErrorKind::Timeout { waiting_for: RpcEvent::GspInitDone.into(), reply: false, after_ms: INIT_DONE_MS }
        );
        assert_bounded(elapsed_ns, INIT_DONE_MS, "the INIT_DONE wait");
        // What was sent before: the two boot RPCs, posted; nothing came back.
        let history: Vec<(Direction, RpcName, RpcOutcome)> =
            history_of(rpc).iter().map(|e| (e.direction, e.function, e.outcome)).collect();
        assert_eq!(
            history,
            [
                (Direction::Command, command(RpcFunction::GspSetSystemInfo), RpcOutcome::Posted),
                (Direction::Command, command(RpcFunction::SetRegistry), RpcOutcome::Posted),
            ]
        );
        assert_eq!(rpc.gpu, Some(chip));
        assert_eq!(error.gsp_error, None, "GSP-RM runs, it just does not answer");
        assert_eq!(board.model.gsp_rm_status(), GspRmStatus::Running { init_done: false });
        // Each family's flow: FWSEC-FRTS from the VBIOS on Turing (through the generic
        // bootloader), GA10x and Ada; none on GA100 or on Hopper, whose FSP does FRTS. FALCON_OS
        // on GA10x and Ada only. The FSP chain of trust on Hopper only.
        let fwsec = matches!(chip, Chipset::TU102 | Chipset::GA102 | Chipset::AD102);
        let falcon_os = matches!(chip, Chipset::GA102 | Chipset::AD102);
        assert_eq!(ran.contains(&BootStep::FwsecFrts), fwsec, "{chip:?}: {ran:?}");
        assert_eq!(ran.contains(&BootStep::ProgramFalconOs), falcon_os, "{chip:?}: {ran:?}");
        assert_eq!(ran.contains(&BootStep::FspChainOfTrust), chip == Chipset::GH100, "{chip:?}: {ran:?}");
        assert_eq!(ran.contains(&BootStep::BooterLoad), chip != Chipset::GH100, "{chip:?}: {ran:?}");

        assert_boot_error_line(
            &error,
            &[
                &format!("{chip:?} GSP boot, step \"wait for GSP_INIT_DONE\": "),
                &format!("timeout waiting for NV_VGPU_MSG_EVENT_GSP_INIT_DONE after {INIT_DONE_MS} ms"),
                "; last RPCs (oldest first): -> NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO seq 0 (1 record)",
                "posted (no reply awaited) | -> NV_VGPU_MSG_FUNCTION_SET_REGISTRY seq 1",
            ],
        );
        assert_eq!(board.model.take_errors(), vec![]);
    }
}

#[test]
fn the_init_done_wait_is_bounded_by_rms_compute_timeout() {
    let board = Board::new(ModelConfig::rtx4090(), BootSequencer::None);
    board.model.inject(GspFault::DropCommands);
    let config = BootConfig { init_done_timeout_ms: INIT_DONE_TIMEOUT_MS, ..BootConfig::default() };
    let Failed { error, elapsed_ns, .. } = fail(&board, board.boot_on(&board.model, config));
    assert_eq!(error.step, BootStep::WaitInitDone);
    assert!(matches!(rpc_error(&error).kind, RpcErrorKind::Timeout { after_ms: 30_000, reply: false, .. }), "{error}");
    assert_bounded(elapsed_ns, INIT_DONE_TIMEOUT_MS, "the default INIT_DONE wait");
    assert!(error.to_string().contains("after 30000 ms"), "{error}");
}

#[test]
fn a_gsp_rm_that_stops_answering_after_boot_times_out_naming_the_rpc_with_history() {
    for config in every_family() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        let mut boot = board.booted();
        let rpc = boot.rpc().expect("RPC client");
        let (mut client, device) = client_and_device(rpc);
        board.model.inject(GspFault::DropCommands);

        // An alloc: no reply within 1.5 times RM's default timeout.
        let start = board.clock.peek();
        let err = client.alloc_subdevice(rpc, device, &Default::default()).unwrap_err();
        assert_bounded(board.clock.peek() - start, RPC_REPLY_TIMEOUT_MS, "the GSP_RM_ALLOC reply");
        eprintln!("{err}");
        let RmError::Rpc(e) = &err else { panic!("{err:?}") };
        assert_eq!(
            e.kind,
            RpcErrorKind::Timeout {
                waiting_for: command(RpcFunction::GspRmAlloc),
                reply: true,
                after_ms: RPC_REPLY_TIMEOUT_MS
            }
        );
        assert_eq!(e.gpu, Some(chip));
        let history = history_of(e);
        let names: Vec<RpcName> = history.iter().map(|e| e.function).collect();
        assert_eq!(
            names,
            [
                command(RpcFunction::GspSetSystemInfo),
                command(RpcFunction::SetRegistry),
                RpcEvent::GspInitDone.into(),
                command(RpcFunction::GetGspStaticInfo),
                command(RpcFunction::GspRmAlloc),
                command(RpcFunction::GspRmAlloc),
                command(RpcFunction::GspRmAlloc),
            ]
        );
        // The client and device allocs answered; the subdevice's timed out.
        assert_eq!(history[4].data, [0, client.handle().raw()]);
        assert_eq!(history[5].data, [NV01_DEVICE_0, device.raw()]);
        assert_eq!(history[5].outcome, RpcOutcome::Replied(NvStatus::NV_OK));
        let last = history.last().unwrap();
        assert_eq!((last.data, last.outcome), ([NV20_SUBDEVICE_0, object(2)], RpcOutcome::TimedOut));
        assert_eq!(client.objects().len(), 1, "the subdevice is not recorded");
        assert_line(
            &err.to_string(),
            &[
                &format!("{chip:?} GSP RPC: timeout waiting for the reply to NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC after 6000 ms; last RPCs (oldest first): -> NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO seq 0"),
                "| <- NV_VGPU_MSG_EVENT_GSP_INIT_DONE seq 0",
                "| -> NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO seq 2 (1 record) data 0x0 0x0",
                &format!("| -> NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC seq 4 (1 record) data 0x80 {:#x}", device.raw()),
                &format!("| -> NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC seq 5 (1 record) data 0x2080 {:#x}", object(2)),
                "took 6000",
                "timed out",
            ],
        );

        // A control next: the same, naming the command and its object; the alloc before it is
        // in the history as timed out.
        let start = board.clock.peek();
        let mut params = class_list_params();
        let err = client.control(rpc, device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &mut params).unwrap_err();
        assert_bounded(board.clock.peek() - start, RPC_REPLY_TIMEOUT_MS, "the GSP_RM_CONTROL reply");
        eprintln!("{err}");
        let RmError::Rpc(e) = &err else { panic!("{err:?}") };
        assert!(matches!(e.kind, RpcErrorKind::Timeout { reply: true, .. }), "{err}");
        let last = *history_of(e).last().unwrap();
        assert_eq!(last.function, command(RpcFunction::GspRmControl));
        assert_eq!(last.data, [NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, device.raw()]);
        assert_line(
            &err.to_string(),
            &[
                &format!("{chip:?} GSP RPC: timeout waiting for the reply to NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL after 6000 ms"),
                &format!("data 0x2080 {:#x}", object(2)),
                &format!("-> NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL seq 6 (1 record) data 0x800292 {:#x}", device.raw()),
            ],
        );
        // GSP-RM is alive (no error word): it is the RPC server that is hung.
        assert_eq!(boot.gsp_error(), None);
        assert_eq!(board.model.take_errors(), vec![]);
        drop(boot);
        assert_eq!(board.arena.allocated(), 0);
    }
}

// ---------------------------------------------------------------------------------------------
// 2. GSP-RM answers with an error.

#[test]
fn a_failing_status_after_boot_is_an_rm_error_naming_the_call_and_the_status() {
    for config in every_family() {
        let board = Board::new(config, BootSequencer::None);
        let mut boot = board.booted();
        let rpc = boot.rpc().expect("RPC client");
        let (mut client, device) = client_and_device(rpc);

        let status = NvStatus::NV_ERR_INSUFFICIENT_RESOURCES;
        board.model.inject(GspFault::FailCommands { status });
        let start = board.clock.peek();
        let err = client.alloc_subdevice(rpc, device, &Default::default()).unwrap_err();
        eprintln!("{err}");
        assert!(board.clock.peek() - start < MS, "answered at once");
        assert_eq!(err, RmError::Alloc { class: NV20_SUBDEVICE_0, handle: object(2), parent: device.raw(), status });
        assert_line(
            &err.to_string(),
            &[
                "GSP-RM refused to allocate class 0x2080 (NV20_SUBDEVICE_0)",
                &format!("as {:#010x} under {:#010x}", object(2), device.raw()),
                "NV_ERR_INSUFFICIENT_RESOURCES (0x0000001a",
            ],
        );
        // The client's history has the exchange with the status.
        let last = *rpc.history().entries().last().unwrap();
        assert_eq!(
            (last.function, last.data, last.outcome),
            (command(RpcFunction::GspRmAlloc), [NV20_SUBDEVICE_0, object(2)], RpcOutcome::Replied(status))
        );
        assert_eq!(client.objects().len(), 1, "the refused subdevice is not recorded");

        // A control, with another status.
        let status = NvStatus::NV_ERR_NOT_SUPPORTED;
        board.model.inject(GspFault::FailCommands { status });
        let mut params = class_list_params();
        let err = client.control(rpc, device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, &mut params).unwrap_err();
        eprintln!("{err}");
        assert_eq!(err, RmError::Control { cmd: NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2, object: device.raw(), status });
        assert_line(
            &err.to_string(),
            &[
                &format!("GSP-RM control 0x00800292 on {:#010x} failed", device.raw()),
                "NV_ERR_NOT_SUPPORTED (0x00000056",
            ],
        );
        assert!(params.iter().all(|&b| b == 0), "a failed control leaves the parameters");

        // The fault gone, the same calls work: nothing on the driver's side was left broken.
        board.model.clear_faults();
        serves_rm(&board, rpc, &mut client, device);
        drop(boot);
        assert_eq!(board.arena.allocated(), 0);
    }
}

#[test]
fn a_failing_status_during_boot_names_get_gsp_static_info_and_the_status() {
    for config in boot_flow_chips() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        // The boot RPCs are posted, not answered: the first answer is GET_GSP_STATIC_INFO's.
        let status = NvStatus::NV_ERR_INSUFFICIENT_RESOURCES;
        board.model.inject(GspFault::FailCommands { status });
        let Failed { error, elapsed_ns, .. } = fail(&board, board.boot());
        assert_eq!(error.step, BootStep::GetStaticInfo);
        let rpc = rpc_error(&error);
        assert_eq!(rpc.kind, RpcErrorKind::Failed { function: command(RpcFunction::GetGspStaticInfo), status });
        assert!(elapsed_ns < MS, "answered at once");
        let last = *history_of(rpc).last().unwrap();
        assert_eq!(
            (last.function, last.outcome),
            (command(RpcFunction::GetGspStaticInfo), RpcOutcome::Replied(status))
        );
        assert_boot_error_line(
            &error,
            &[
                &format!("{chip:?} GSP boot, step \"GET_GSP_STATIC_INFO\": GSP-RM answered NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO with NV_ERR_INSUFFICIENT_RESOURCES (0x0000001a"),
                "; last RPCs (oldest first): ",
                "<- NV_VGPU_MSG_EVENT_GSP_INIT_DONE seq 0",
                "-> NV_VGPU_MSG_FUNCTION_GET_GSP_STATIC_INFO seq 2 (1 record) data 0x0 0x0",
                "replied NV_ERR_INSUFFICIENT_RESOURCES",
            ],
        );
        assert_eq!(board.model.take_errors(), vec![]);
    }
}

// ---------------------------------------------------------------------------------------------
// 3. A corrupted status-queue element.

fn bad_checksum(error: &TransportError) -> u32 {
    match error {
        TransportError::Element(ElementError::BadChecksum { seq_num, .. }) => *seq_num,
        other => panic!("not a checksum error: {other:?}"),
    }
}

#[test]
fn a_corrupted_message_during_boot_is_a_checksum_error_and_stays_in_the_queue() {
    for config in boot_flow_chips() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        board.model.inject(GspFault::CorruptNextMessage);
        let mut boot = board.boot();
        let error = boot.run().expect_err("the boot must fail");
        eprintln!("{error}");
        assert_eq!(error.step, BootStep::WaitInitDone);
        let rpc = rpc_error(&error);
        let RpcErrorKind::Transport { during, error: transport } = &rpc.kind else { panic!("{error}") };
        assert_eq!(*during, RpcEvent::GspInitDone.into());
        assert_eq!(bad_checksum(transport), 0, "GSP_INIT_DONE, the first status record");
        assert_eq!(history_of(rpc).len(), 2, "the boot RPCs; the corrupted record was not taken");
        let elapsed = boot.report().elapsed_ns(BootStep::WaitInitDone).unwrap();
        assert!(elapsed < MS, "no wait for a timeout: {elapsed} ns");
        // Not consumed: the next record expected is still the first.
        let queues = boot.rpc().expect("RPC client").queues();
        assert_eq!(queues.next_status_seq(), 0);
        assert_boot_error_line(
            &error,
            &[
                &format!("{chip:?} GSP boot, step \"wait for GSP_INIT_DONE\": NV_VGPU_MSG_EVENT_GSP_INIT_DONE: GSP status queue: message queue record seqNum 0: bad checksum"),
                "; last RPCs (oldest first): -> NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO",
            ],
        );
        drop(boot);
        assert_eq!(board.arena.allocated(), 0);
        assert_eq!(board.model.take_errors(), vec![]);
    }
}

#[test]
fn a_corrupted_reply_after_boot_is_a_checksum_error_naming_the_rpc_and_stays_in_the_queue() {
    for config in every_family() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        let mut boot = board.booted();
        let rpc = boot.rpc().expect("RPC client");
        let (mut client, device) = client_and_device(rpc);
        let expected_seq = rpc.queues().next_status_seq();

        board.model.inject(GspFault::CorruptNextMessage);
        let start = board.clock.peek();
        let err = client.alloc_subdevice(rpc, device, &Default::default()).unwrap_err();
        assert!(board.clock.peek() - start < MS, "no wait for a timeout");
        eprintln!("{err}");
        let RmError::Rpc(e) = &err else { panic!("{err:?}") };
        let RpcErrorKind::Transport { during, error } = &e.kind else { panic!("{err}") };
        assert_eq!(*during, command(RpcFunction::GspRmAlloc));
        assert_eq!(bad_checksum(error), expected_seq);
        assert_eq!(e.gpu, Some(chip));
        let last = *history_of(e).last().unwrap();
        assert_eq!((last.data, last.outcome), ([NV20_SUBDEVICE_0, object(2)], RpcOutcome::Failed));
        assert_line(
            &err.to_string(),
            &[
                &format!("{chip:?} GSP RPC: NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC: GSP status queue: message queue record seqNum {expected_seq}: bad checksum"),
                "; last RPCs (oldest first): -> NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO",
                &format!("-> NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC seq 5 (1 record) data 0x2080 {:#x}", object(2)),
                "failed",
            ],
        );

        // The record is still there: the next read finds the same one, and says so.
        assert_eq!(rpc.queues().next_status_seq(), expected_seq, "not consumed");
        let again = rpc.poll(&mut LogEvents).unwrap_err();
        eprintln!("{again}");
        let RpcErrorKind::Polling(error) = &again.kind else { panic!("{again}") };
        assert_eq!(bad_checksum(error), expected_seq);
        assert!(again.history.is_some());
        assert_line(
            &again.to_string(),
            &[&format!("{chip:?} GSP RPC: polling the status queue: GSP status queue: message queue record seqNum {expected_seq}: bad checksum"), "last RPCs"],
        );
        assert_eq!(rpc.queues().next_status_seq(), expected_seq, "still not consumed");
        assert_eq!(board.model.take_errors(), vec![]);
        drop(boot);
        assert_eq!(board.arena.allocated(), 0);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. A falcon halts early; GSP-RM stops.

#[test]
fn a_booter_halting_early_fails_booter_load_with_its_mailbox() {
    for config in boot_flow_chips() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        let mailbox0 = 0xdead_0001;
        board.model.inject(GspFault::BooterHalts { mailbox0 });
        let Failed { error, ran, .. } = fail(&board, board.boot());
        if chip == Chipset::GH100 {
            // Hopper has no booter: the GSP-FMC the FSP starts is what fails, its code in the GSP's
            // MAILBOX0.
            assert_eq!(error.step, BootStep::FspChainOfTrust, "{error}");
            assert!(
                matches!(error.kind, BootErrorKind::Fsp(FspError::FmcError { mailbox0: m }) if m == mailbox0),
                "{error}"
            );
            assert!(!ran.contains(&BootStep::RiscvActive));
            assert_eq!(board.model.gsp_rm_status(), GspRmStatus::Off);
            assert_boot_error_line(
                &error,
                &["GH100 GSP boot, step ", "GSP-FMC reported error 0xdead0001 in GSP MAILBOX0"],
            );
            let errors = board.model.take_errors();
            assert_eq!(errors, vec![ModelError::GspRm(GspRmError::Fmc(sim::BooterError::Injected { mailbox0 }))]);
            continue;
        }
        assert_eq!(error.step, BootStep::BooterLoad);
        assert!(
            matches!(error.kind, BootErrorKind::Booter(BooterError::Failed { booter: Booter::Load, mailbox0: m, .. }) if m == mailbox0),
            "{error}"
        );
        assert!(!ran.contains(&BootStep::RiscvActive));
        assert_eq!(error.gsp_error, None);
        assert_eq!(board.model.gsp_rm_status(), GspRmStatus::Off);
        assert_boot_error_line(
            &error,
            &[&format!("{chip:?} GSP boot, step \"booter_load on SEC2\": Booter Load failed on SEC2 with error code 0xdead0001 in MAILBOX0")],
        );
        let errors = board.model.take_errors();
        assert!(errors.contains(&ModelError::Booter(sim::BooterError::Injected { mailbox0 })), "{errors:?}");
    }
}

#[test]
fn gsp_rm_stopping_at_its_start_fails_riscv_active_with_its_error_word() {
    for config in boot_flow_chips() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        board.model.inject(GspFault::StopRiscv);
        let Failed { error, elapsed_ns, .. } = fail(&board, board.boot());
        assert_eq!(error.step, BootStep::RiscvActive);
        assert_eq!(error.kind, BootErrorKind::RiscvNotActive);
        assert_eq!(error.gsp_error, Some(injected_stop()));
        assert_bounded(elapsed_ns, nvgpu::gsp::boot::RISCV_ACTIVE_TIMEOUT_MS, "the RISC-V active wait");
        let report = injected_stop();
        assert_boot_error_line(
            &error,
            &[
                &format!("{chip:?} GSP boot, step \"GSP RISC-V active\": the GSP RISC-V core is not active after its start (booter_load; on Hopper, the GSP-FMC)"),
                &format!(
                    "; GSP-RM task {} raised error code {:#x} for reason {:#x} at 0x0 (NV_PGSP_MAILBOX(0) {:#010x})",
                    report.task(),
                    report.code(),
                    report.reason(),
                    report.mailbox0
                ),
            ],
        );
        assert_eq!(board.model.take_errors(), vec![ModelError::GspRm(GspRmError::InjectedStop)]);
    }
}

/// GSP-RM stops while the CPU runs its sequencer script, inside the INIT_DONE wait (the tap
/// arms the stop right after the script's first register write).
fn stop_during_init_done(config: ModelConfig, sequencer: BootSequencer) -> (Failed, Board) {
    let board = Board::new(config, sequencer);
    let token = sim::gsp_rm::sequencer::token_register();
    let armed = Cell::new(true);
    let tap = Tap {
        model: &board.model,
        after_write: Box::new(|model: &ModelGpu, offset| {
            if offset == token && armed.replace(false) {
                model.inject(GspFault::StopRiscv);
            }
        }),
    };
    let failed = fail(&board, board.boot_on(&tap, board.boot_config()));
    assert!(!armed.get(), "the stop was armed inside the boot");
    drop(tap);
    (failed, board)
}

#[test]
fn gsp_rm_stopping_during_the_init_done_wait_times_out_naming_init_done_and_its_error_word() {
    for config in boot_flow_chips() {
        let (Failed { error, elapsed_ns, .. }, board) = stop_during_init_done(config, BootSequencer::RegistersOnly);
        let chip = board.chip();
        assert_eq!(error.step, BootStep::WaitInitDone);
        let rpc = rpc_error(&error);
        assert_eq!(
            rpc.kind,
            RpcErrorKind::Timeout { waiting_for: RpcEvent::GspInitDone.into(), reply: false, after_ms: INIT_DONE_MS }
        );
        assert_bounded(elapsed_ns, INIT_DONE_MS, "the INIT_DONE wait");
        assert_eq!(error.gsp_error, Some(injected_stop()));
        let last = *history_of(rpc).last().unwrap();
        assert_eq!((last.direction, last.function), (Direction::Incoming, RpcEvent::GspRunCpuSequencer.into()));
        assert_boot_error_line(
            &error,
            &[
                &format!("{chip:?} GSP boot, step \"wait for GSP_INIT_DONE\": timeout waiting for NV_VGPU_MSG_EVENT_GSP_INIT_DONE after {INIT_DONE_MS} ms; GSP-RM task 2 raised error code 0x11"),
                "; last RPCs (oldest first): -> NV_VGPU_MSG_FUNCTION_GSP_SET_SYSTEM_INFO",
                "| <- NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER seq 0",
            ],
        );
        assert_eq!(board.model.take_errors(), vec![ModelError::GspRm(GspRmError::InjectedStop)]);
    }
}

#[test]
fn gsp_rm_stopping_before_its_core_resume_fails_the_sequencer_naming_the_resume_and_its_error_word() {
    // CORE_RESUME goes through SEC2: Hopper has none, and GSP-RM sends it the registers-only
    // script (the INIT_DONE-wait test above covers a stop there).
    for config in every_family().into_iter().filter(|c| c.chipset != Chipset::GH100) {
        let (Failed { error, elapsed_ns, .. }, board) = stop_during_init_done(config, BootSequencer::WithCoreResume);
        let chip = board.chip();
        assert_eq!(error.step, BootStep::WaitInitDone);
        assert!(matches!(rpc_error(&error).kind, RpcErrorKind::Sequencer(_)), "{error}");
        // Bounded by the resume's own wait (RM's default timeout), inside the INIT_DONE bound.
        assert!(elapsed_ns < (nvgpu::gsp::commands::RM_DEFAULT_TIMEOUT_MS + 1) * MS, "{elapsed_ns}");
        assert_eq!(error.gsp_error, Some(injected_stop()));
        assert_boot_error_line(
            &error,
            &[
                &format!("{chip:?} GSP boot, step \"wait for GSP_INIT_DONE\": GSP CPU sequencer: GSP_SEQ_BUF_OPCODE_CORE_RESUME: "),
                "SEC2 to resume GSP-RM (BOOT_STAGE_3_HANDOFF)",
                "; GSP-RM task 2 raised error code 0x11",
                "| <- NV_VGPU_MSG_EVENT_GSP_RUN_CPU_SEQUENCER seq 0",
            ],
        );
        let errors = board.model.take_errors();
        assert_eq!(errors.first(), Some(&ModelError::GspRm(GspRmError::InjectedStop)), "{errors:?}");
    }
}

#[test]
fn gsp_rm_stopping_after_boot_times_out_the_rpc_and_the_boot_sees_its_error_word() {
    for config in every_family() {
        let board = Board::new(config, BootSequencer::None);
        let chip = board.chip();
        let mut boot = board.booted();
        let rpc = boot.rpc().expect("RPC client");
        let (mut client, device) = client_and_device(rpc);
        board.model.inject(GspFault::StopRiscv);
        let start = board.clock.peek();
        let err = client.alloc_subdevice(rpc, device, &Default::default()).unwrap_err();
        assert_bounded(board.clock.peek() - start, RPC_REPLY_TIMEOUT_MS, "the GSP_RM_ALLOC reply");
        eprintln!("{err}");
        let RmError::Rpc(e) = &err else { panic!("{err:?}") };
        assert!(matches!(e.kind, RpcErrorKind::Timeout { reply: true, .. }), "{err}");
        assert_line(
            &err.to_string(),
            &[&format!("{chip:?} GSP RPC: timeout waiting for the reply to NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC after 6000 ms; last RPCs")],
        );
        // The RPC layer has no registers; the boot, which owns BAR0, reads what GSP-RM said.
        assert_eq!(boot.gsp_error(), Some(injected_stop()));
        assert_eq!(board.model.take_errors(), vec![ModelError::GspRm(GspRmError::InjectedStop)]);
    }
}

#[test]
fn the_gsp_error_word_is_decoded_as_nvidias_header_lays_it_out() {
    use nvgpu::hw::rm::{NV_GSP_ERROR, NV_GSP_ERROR_TAG_VAL};
    let header = data_root().join("open-gpu-kernel-modules-535.261.03").join(nvgpu::hw::headers::GSP_ERROR.path);
    let text = String::from_utf8(read(&header)).expect("text");
    let define = |name: &str| -> String {
        text.lines()
            .find_map(|l| l.trim().strip_prefix("#define ")?.strip_prefix(name)?.strip_prefix(' ').map(str::trim))
            .unwrap_or_else(|| panic!("{name} in gsp_error.h"))
            .to_string()
    };
    for field in
        [NV_GSP_ERROR::CODE, NV_GSP_ERROR::REASON, NV_GSP_ERROR::TASK, NV_GSP_ERROR::SKIPPED, NV_GSP_ERROR::TAG]
    {
        assert_eq!(define(field.name), format!("{}:{}", field.bits.hi, field.bits.lo), "{}", field.name);
    }
    assert_eq!(define("NV_GSP_ERROR_TAG_VAL"), format!("{NV_GSP_ERROR_TAG_VAL:#X}").replace("0X", "0x"));
    // A word with every field set, decoded and printed in RM's words.
    let report = GspErrorReport { mailbox0: 0xE302_0711, mailbox1: 0x1234 };
    assert_eq!((report.skipped(), report.task(), report.reason(), report.code()), (3, 2, 7, 0x11));
    assert_eq!(
        report.to_string(),
        "GSP-RM task 2 raised error code 0x11 for reason 0x7 at 0x1234 (NV_PGSP_MAILBOX(0) 0xe3020711), 3 more errors skipped"
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Two GPUs: a fault on one leaves the other working.

/// The faults, each where it acts: before the boot, or on a booted GSP-RM.
const BOOT_FAULTS: [GspFault; 4] = [
    GspFault::DropCommands,
    GspFault::CorruptNextMessage,
    GspFault::StopRiscv,
    GspFault::BooterHalts { mailbox0: 0xdead_0002 },
];
const RUNTIME_FAULTS: [GspFault; 4] = [
    GspFault::DropCommands,
    GspFault::FailCommands { status: NvStatus::NV_ERR_INVALID_STATE },
    GspFault::CorruptNextMessage,
    GspFault::StopRiscv,
];

#[test]
fn a_fault_during_one_gpus_boot_leaves_another_booting_and_serving_rm() {
    for (faulty, healthy) in [
        (ModelConfig::rtx3090(), ModelConfig::rtx4090()),
        (ModelConfig::rtx4090(), ModelConfig::rtx3090()),
        (ModelConfig::rtx3090(), ModelConfig::rtx3090()),
        (ModelConfig::h200(), ModelConfig::rtx2080ti()),
        (ModelConfig::rtx2080ti(), ModelConfig::h200()),
    ] {
        for fault in BOOT_FAULTS {
            let a = Board::new(faulty.clone(), BootSequencer::None);
            let b = Board::new(healthy.clone(), BootSequencer::None);
            a.model.inject(fault);
            let failed = fail(&a, a.boot());
            assert!(failed.error.to_string().starts_with(&chip_name(a.chip())), "{}", failed.error);
            a.model.take_errors();

            let mut boot = b.booted();
            let rpc = boot.rpc().expect("RPC client");
            assert_eq!(rpc.history().entries().next().map(|e| e.seq_num), Some(0), "{fault:?}: B's own history");
            let (mut client, device) = client_and_device(rpc);
            serves_rm(&b, rpc, &mut client, device);
            assert!(
                !a.model.gsp_rm_objects().iter().any(|o| o.client == client.handle().raw()),
                "{fault:?}: nothing of B's went to A"
            );
        }
    }
}

#[test]
fn a_fault_on_one_running_gpu_leaves_another_serving_rm() {
    for (faulty, healthy) in [
        (ModelConfig::rtx3090(), ModelConfig::rtx4090()),
        (ModelConfig::rtx3090(), ModelConfig::rtx3090()),
        (ModelConfig::h200(), ModelConfig::rtx2080ti()),
    ] {
        for fault in RUNTIME_FAULTS {
            let a = Board::new(faulty.clone(), BootSequencer::None);
            let b = Board::new(healthy.clone(), BootSequencer::None);
            let mut boot_a = a.booted();
            let mut boot_b = b.booted();
            let rpc_a = boot_a.rpc().expect("RPC client");
            rpc_a.set_timeout_ms(100);
            let rpc_b = boot_b.rpc().expect("RPC client");
            let (mut client_a, device_a) = client_and_device(rpc_a);
            let (mut client_b, device_b) = client_and_device(rpc_b);
            let b_commands = rpc_b.queues().next_command_seq();

            a.model.inject(fault);
            let err = client_a.alloc_subdevice(rpc_a, device_a, &Default::default()).unwrap_err();
            match &err {
                RmError::Rpc(e) => assert_eq!(e.gpu, Some(a.chip()), "{err}"),
                RmError::Alloc { status, .. } => assert_eq!(*status, NvStatus::NV_ERR_INVALID_STATE),
                other => panic!("{fault:?}: {other}"),
            }
            assert_eq!(rpc_b.queues().next_command_seq(), b_commands, "{fault:?}: nothing reached B");

            serves_rm(&b, rpc_b, &mut client_b, device_b);
            client_b.free_all(rpc_b).unwrap_or_else(|e| panic!("{fault:?}: {e}"));
            assert_eq!(b.model.gsp_rm_status(), GspRmStatus::Running { init_done: true });
            assert_eq!(b.model.errors(), vec![], "{fault:?}");
            a.model.take_errors();
        }
    }
}
