//! What the GSP-RM model writes into the LIBOS log buffers, in LIBOS's record format, and the
//! logging ELF that decodes it.
//!
//! # Records (`libos_log.h`, `liblogdecode.c` in 535.261.03; `nvgpu::gsp::logs` reads them)
//! Qword 0 of a buffer is the put pointer (qwords ever written); qword `1 + i % (size / 8 - 1)`
//! holds the `i`-th. A record is its arguments (one qword each), the address of its
//! `libosLogMetadata` (`filename`, `format`, `lineNumber`, `argumentCount`, `printLevel`: 24
//! bytes), then a timestamp. The model writes the record's qwords, then the new put pointer, as a
//! producer on another processor must. Like GSP-RM it logs over the page table the CPU left in
//! qwords 1.. (LIBOS reads that table before its first record).
//!
//! # Where the metadata is: the model's "gsp_log" file
//! NVIDIA's records point into `.logging` sections stripped from the firmware image; RM decodes
//! them with `gsp_log_<family>.bin`, which Debian does not ship. The model's boot runs NVIDIA's
//! real GSP-RM image (recognised by its hash, [`super::image`]), so the model cannot put its
//! strings into that image's headers. Instead it has its own logging ELF, shaped as RM expects
//! `gsp_log_*.bin` ([`model_log_firmware`]): a firmware container with `.fwversion`
//! ("535.261.03") and `.fwlogging`, itself a container (`.fwIsContainerElf`) of per-task ELFs
//! `.fwlogging_init` and `.fwlogging_rm`, each holding one `.logging` section at
//! [`MODEL_LOGGING_VA`]: the metadata records ([`MESSAGES`], 24 bytes each), then every string
//! they or a `%s` argument point at. Records' metadata and `%s` addresses point into it. A driver
//! given [`model_log_firmware`] decodes the model's records the documented way; a driver without
//! it prints them raw, as it must with NVIDIA's firmware on hardware.
//!
//! Timestamps are the model's own counter (1 µs a record, from 1 ms), not PTIMER: the model has
//! no timer; they only order records across the buffers.
//!
//! A record's `lineNumber` is the line of its entry in [`MESSAGES`] (and `filename` this file), so
//! a decoded line points at its format string.

use alloc::vec::Vec;

use nvgpu::chip::GSP_FIRMWARE_VERSION;
use nvgpu::gsp::fw::libos::{LOGINIT_ID, LOGINTR_ID, LOGRM_ID};
use nvgpu::gsp::fw::rpc::RpcFunction;

use super::error::GspRmError;
use crate::memory::SystemMemory;

/// Virtual address of the model's `.logging` section (any address works: only the logging ELF
/// maps it; this one is outside the GSP-RM task layouts NVIDIA's ELFs use, 0x0400_0000..).
pub const MODEL_LOGGING_VA: u64 = 0x1000_0000;
/// `sizeof(libosLogMetadata)`.
const METADATA_SIZE: usize = 24;
/// `EM_RISCV`: the model's ELFs claim GSP's machine, as NVIDIA's containers do.
const EM_RISCV: u16 = 243;

/// The LIBOS task a record is logged by, hence its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogTask {
    /// "LOGINIT": the init task (LIBOS arguments, queues, resume).
    Init,
    /// "LOGINTR": the interrupt task (the model logs nothing there).
    Intr,
    /// "LOGRM": the RM task (RPCs, init, errors).
    Rm,
}

impl LogTask {
    const fn index(self) -> usize {
        match self {
            Self::Init => 0,
            Self::Intr => 1,
            Self::Rm => 2,
        }
    }
}

/// `LOG_LEVEL_INFO`, `LOG_LEVEL_WARNING`, `LOG_LEVEL_ERROR` (`libos_log.h`).
const INFO: u8 = 0;
const WARNING: u8 = 1;
const ERROR: u8 = 2;

/// One of the model's log statements: what `LibosLog` puts into `.logging`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogMessage {
    pub format: &'static str,
    pub arguments: u8,
    pub level: u8,
    pub line: u32,
}

const fn message(format: &'static str, arguments: u8, level: u8, line: u32) -> LogMessage {
    LogMessage { format, arguments, level, line }
}

/// Every record the model writes; [`Msg`] indexes it.
pub const MESSAGES: &[LogMessage] = &[
    message("LIBOS init arguments at %#llx: %u regions, RMARGS at %#llx\n", 3, INFO, line!()),
    message("message queues linked: shared memory at %#llx, %u page table entries\n", 2, INFO, line!()),
    message("boot RPC %s: %u bytes\n", 2, INFO, line!()),
    message("GSP_RUN_CPU_SEQUENCER posted: %u bytes of commands, CORE_RESUME %s\n", 2, INFO, line!()),
    message("GSP_INIT_DONE posted\n", 0, INFO, line!()),
    message("GSP_INIT_DONE posted with status %#x: a boot RPC was refused\n", 1, ERROR, line!()),
    message("RPC %s (%u) answered: status %#x\n", 3, INFO, line!()),
    message("RPC %s (%u) dropped (injected fault)\n", 2, WARNING, line!()),
    message("resumed by SEC2 after CORE_RESUME\n", 0, INFO, line!()),
    message("UNLOADING_GUEST_DRIVER: suspending\n", 0, INFO, line!()),
    message("fatal: %s: error word %#010x, detail %#x\n", 3, ERROR, line!()),
];

/// Names for [`MESSAGES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    LibosArgs = 0,
    QueuesLinked,
    BootRpc,
    SequencerPosted,
    InitDone,
    InitFailed,
    RpcAnswered,
    RpcDropped,
    Resumed,
    Unloading,
    Fatal,
}

/// What `%s` may name besides RPC function names.
const WORDS: &[&str] = &["yes", "no", "an undeclared function"];

/// `%s` text for each kind of fatal error ([`error_category`]).
const ERROR_CATEGORIES: &[&str] = &[
    "LIBOS init arguments",
    "LIBOS memory region",
    "GSP_ARGUMENTS_CACHED",
    "message queue page table",
    "command queue header",
    "queue pointer",
    "queue memory",
    "command record",
    "command record sequence number",
    "RPC header",
    "continuation record",
    "boot order",
    "RPC parameters",
    "CPU sequencer",
    "GSP reset while running",
    "resume",
    "injected stop",
    "FSP",
    "GSP-FMC",
];

/// What a fatal error's record names as its kind.
pub const fn error_category(error: &GspRmError) -> &'static str {
    ERROR_CATEGORIES[match error {
        GspRmError::LibosArgs { .. } => 0,
        GspRmError::LibosRegion { .. } => 1,
        GspRmError::RmArgs { .. } => 2,
        GspRmError::PageTable { .. } => 3,
        GspRmError::CommandQueueHeader { .. } => 4,
        GspRmError::QueuePointer { .. } => 5,
        GspRmError::QueueMemory { .. } => 6,
        GspRmError::BadRecord { .. } => 7,
        GspRmError::SequenceNumber { .. } => 8,
        GspRmError::RequestHeader { .. } => 9,
        GspRmError::Continuation { .. } => 10,
        GspRmError::OutOfOrder { .. } => 11,
        GspRmError::BadParams { .. } => 12,
        GspRmError::Sequencer { .. } => 13,
        GspRmError::ResetWhileRunning => 14,
        GspRmError::Resume { .. } => 15,
        GspRmError::InjectedStop => 16,
        GspRmError::Fsp(_) => 17,
        GspRmError::Fmc(_) => 18,
    }]
}

/// The name `%s` prints for an RPC function number.
pub fn rpc_name(function: u32) -> &'static str {
    RpcFunction::from_raw(function).map_or("an undeclared function", RpcFunction::nvidia_name)
}

// ---------------------------------------------------------------------------------------------
// The `.logging` section.

/// The section's bytes and where each string is.
struct Logging {
    section: Vec<u8>,
    strings: Vec<(&'static str, u64)>,
}

static LOGGING: spin::Once<Logging> = spin::Once::new();

fn logging() -> &'static Logging {
    LOGGING.call_once(|| {
        let mut strings: Vec<&'static str> = alloc::vec![file!()];
        strings.extend(MESSAGES.iter().map(|m| m.format));
        strings.extend(RpcFunction::ALL.iter().map(|f| f.nvidia_name()));
        strings.extend_from_slice(WORDS);
        strings.extend_from_slice(ERROR_CATEGORIES);
        let mut section = alloc::vec![0u8; MESSAGES.len() * METADATA_SIZE];
        let mut placed: Vec<(&'static str, u64)> = Vec::new();
        for s in strings {
            if placed.iter().any(|(p, _)| *p == s) {
                continue;
            }
            placed.push((s, MODEL_LOGGING_VA + section.len() as u64));
            section.extend_from_slice(s.as_bytes());
            section.push(0);
        }
        let address = |s: &str| placed.iter().find(|(p, _)| *p == s).map_or(0, |(_, a)| *a);
        for (index, m) in MESSAGES.iter().enumerate() {
            let at = index * METADATA_SIZE;
            section[at..at + 8].copy_from_slice(&address(file!()).to_le_bytes());
            section[at + 8..at + 16].copy_from_slice(&address(m.format).to_le_bytes());
            section[at + 16..at + 20].copy_from_slice(&m.line.to_le_bytes());
            section[at + 20] = m.arguments;
            section[at + 21] = m.level;
        }
        Logging { section, strings: placed }
    })
}

/// Address of `text` in the `.logging` section (0 when it is not there: the decoder prints
/// "(bad-pointer)", as for any address it cannot resolve).
pub fn string_address(text: &str) -> u64 {
    logging().strings.iter().find(|(s, _)| *s == text).map_or(0, |(_, a)| *a)
}

/// Address of `message`'s `libosLogMetadata`.
pub fn metadata_address(message: Msg) -> u64 {
    MODEL_LOGGING_VA + (message as usize * METADATA_SIZE) as u64
}

/// The `.logging` section, at [`MODEL_LOGGING_VA`].
pub fn logging_section() -> &'static [u8] {
    &logging().section
}

// ---------------------------------------------------------------------------------------------
// The model's gsp_log file.

/// One section of an ELF the model writes: name, `sh_type`, address, bytes.
type Section<'a> = (&'a str, u32, u64, &'a [u8]);

const SHT_PROGBITS: u32 = 1;
const SHT_STRTAB: u32 = 3;

/// A minimal ELF64 little-endian relocatable file for RISC-V: the header, the sections' bytes
/// (8-byte aligned), `.shstrtab`, then the section header table. No program headers: the
/// decoder finds addresses through the sections (`LibosElfMapVirtual`'s second way). Written by
/// hand: `object`'s writer needs `std` and four more crates, for three ELFs of a few sections.
pub fn elf64(sections: &[Section<'_>]) -> Vec<u8> {
    let mut out = alloc::vec![0u8; 64];
    let mut shstrtab = alloc::vec![0u8];
    let mut headers: Vec<[u64; 8]> = alloc::vec![[0; 8]];
    let align = |out: &mut Vec<u8>| out.resize(out.len().next_multiple_of(8), 0);
    let mut add = |out: &mut Vec<u8>, name: &str, kind: u32, address: u64, data: &[u8]| {
        align(out);
        let name_offset = shstrtab.len() as u64;
        shstrtab.extend_from_slice(name.as_bytes());
        shstrtab.push(0);
        let offset = out.len() as u64;
        out.extend_from_slice(data);
        // sh_name | sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link | sh_info, sh_addralign, sh_entsize
        let flags = if address != 0 { 0x2 } else { 0 }; // SHF_ALLOC for mapped sections
        headers.push([name_offset | (u64::from(kind) << 32), flags, address, offset, data.len() as u64, 0, 1, 0]);
    };
    for &(name, kind, address, data) in sections {
        add(&mut out, name, kind, address, data);
    }
    // `.shstrtab` names itself: its name goes in before its bytes are copied.
    let shstrtab_name = shstrtab.len() as u64;
    shstrtab.extend_from_slice(b".shstrtab\0");
    align(&mut out);
    let shstrtab_offset = out.len() as u64;
    out.extend_from_slice(&shstrtab);
    headers.push([
        shstrtab_name | (u64::from(SHT_STRTAB) << 32),
        0,
        0,
        shstrtab_offset,
        shstrtab.len() as u64,
        0,
        1,
        0,
    ]);
    align(&mut out);
    let shoff = out.len() as u64;
    for h in &headers {
        for word in h {
            out.extend_from_slice(&word.to_le_bytes());
        }
    }
    // e_ident: ELFCLASS64, ELFDATA2LSB, EV_CURRENT.
    out[..8].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    out[16..18].copy_from_slice(&1u16.to_le_bytes()); // ET_REL
    out[18..20].copy_from_slice(&EM_RISCV.to_le_bytes());
    out[20..24].copy_from_slice(&1u32.to_le_bytes()); // e_version
    out[40..48].copy_from_slice(&shoff.to_le_bytes());
    out[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    out[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
    out[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    out[60..62].copy_from_slice(&(headers.len() as u16).to_le_bytes());
    out[62..64].copy_from_slice(&((headers.len() - 1) as u16).to_le_bytes());
    out
}

/// The model's counterpart of `gsp_log_<family>.bin` (module documentation).
pub fn model_log_firmware() -> Vec<u8> {
    let task = elf64(&[(".logging", SHT_PROGBITS, MODEL_LOGGING_VA, logging_section())]);
    let logging = elf64(&[
        (nvgpu::gsp::logs::LOGGING_CONTAINER_MARKER, SHT_PROGBITS, 0, &[1]),
        (".fwlogging_init", SHT_PROGBITS, 0, &task),
        (".fwlogging_rm", SHT_PROGBITS, 0, &task),
    ]);
    let version: Vec<u8> = [GSP_FIRMWARE_VERSION.as_bytes(), &[0]].concat();
    elf64(&[
        (".fwversion", SHT_PROGBITS, 0, &version),
        (nvgpu::gsp::logs::GSP_LOGGING_SECTION, SHT_PROGBITS, 0, &logging),
    ])
}

// ---------------------------------------------------------------------------------------------
// Writing records.

/// An argument of a record: a number, or a string of the `.logging` section (by address).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogArg {
    Int(u64),
    Str(&'static str),
}

impl From<u64> for LogArg {
    fn from(v: u64) -> Self {
        Self::Int(v)
    }
}

impl From<u32> for LogArg {
    fn from(v: u32) -> Self {
        Self::Int(v.into())
    }
}

/// One log buffer GSP-RM was given.
#[derive(Clone, Copy, Debug)]
struct Buffer {
    pa: u64,
    /// Qwords in the ring (after the put pointer).
    entries: u64,
    put: u64,
}

/// GSP-RM's log buffers and the records waiting to be written (a hook without system memory at
/// hand queues; [`Self::flush`] writes).
#[derive(Debug, Default)]
pub(crate) struct ModelLogs {
    buffers: [Option<Buffer>; 3],
    pending: Vec<(LogTask, Vec<u64>)>,
    now_ns: u64,
}

impl ModelLogs {
    /// A new boot: the buffers will be named by the next LIBOS argument table.
    pub fn reset(&mut self) {
        self.buffers = [None; 3];
        self.pending.clear();
    }

    /// A region of the LIBOS argument table, accepted: when it is a log buffer, GSP-RM logs there.
    pub fn attach(&mut self, id8: u64, pa: u64, size: u64) {
        let index = match id8 {
            LOGINIT_ID => 0,
            LOGINTR_ID => 1,
            LOGRM_ID => 2,
            _ => return,
        };
        let entries = (size / 8).saturating_sub(1);
        self.buffers[index] = (entries > 0).then_some(Buffer { pa, entries, put: 0 });
    }

    /// Queues a record of `task` (dropped when its buffer is not known).
    pub fn log(&mut self, task: LogTask, message: Msg, args: &[LogArg]) {
        if self.buffers[task.index()].is_none() {
            return;
        }
        debug_assert_eq!(args.len(), usize::from(MESSAGES[message as usize].arguments), "{message:?}");
        self.now_ns = self.now_ns.max(1_000_000) + 1_000;
        let mut tokens: Vec<u64> = args
            .iter()
            .map(|a| match *a {
                LogArg::Int(v) => v,
                LogArg::Str(s) => string_address(s),
            })
            .collect();
        tokens.push(metadata_address(message));
        tokens.push(self.now_ns);
        self.pending.push((task, tokens));
    }

    /// A fatal error, in LOGRM (or LOGINIT before the RM task has its buffer).
    pub fn fatal(&mut self, error: &GspRmError, detail: u32) {
        let task = if self.buffers[LogTask::Rm.index()].is_some() { LogTask::Rm } else { LogTask::Init };
        self.log(task, Msg::Fatal, &[LogArg::Str(error_category(error)), error.error_word().into(), detail.into()]);
    }

    /// Writes the queued records: each record's qwords, then the put pointer.
    pub fn flush(&mut self, memory: &dyn SystemMemory) {
        for (task, tokens) in core::mem::take(&mut self.pending) {
            let Some(buffer) = self.buffers[task.index()].as_mut() else { continue };
            for token in tokens {
                let slot = buffer.pa + 8 * (1 + buffer.put % buffer.entries);
                memory.write(slot, &token.to_le_bytes());
                buffer.put += 1;
            }
            memory.write(buffer.pa, &buffer.put.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_declares_its_argument_count() {
        for m in MESSAGES {
            let conversions = m.format.matches('%').count() - 2 * m.format.matches("%%").count();
            assert_eq!(conversions, usize::from(m.arguments), "{}", m.format);
        }
        assert_eq!(Msg::Fatal as usize + 1, MESSAGES.len());
    }

    #[test]
    fn every_string_is_in_the_section() {
        for s in ERROR_CATEGORIES.iter().chain(WORDS) {
            assert_ne!(string_address(s), 0, "{s}");
        }
        for function in RpcFunction::ALL {
            assert_ne!(string_address(rpc_name(function.raw())), 0, "{function:?}");
        }
        assert_eq!(error_category(&GspRmError::InjectedStop), "injected stop");
    }
}
