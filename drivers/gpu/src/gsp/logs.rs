//! GSP-RM's LIBOS log buffers ("LOGINIT", "LOGINTR", "LOGRM"), read out and printed the way RM's
//! decoder does it (`src/common/uproc/os/libos-v3.1.0/lib/liblogdecode.c`, 535.261.03).
//!
//! # The buffer (`_kgspInitLibosLoggingStructures`, `kernel_gsp.c`; `liblogdecode.c`)
//! A log buffer is an array of little-endian qwords. Qword 0 is the put pointer: the number of
//! qwords GSP-RM has ever written, never wrapped. The other `n = size / 8 - 1` qwords are a ring:
//! the qword with running number `i` lives at index `1 + i % n` ("-1 for PUT pointer",
//! `libosExtractLog_ReadRecord`). The CPU hands the buffer's page table to LIBOS in qwords 1..
//! (`memdescGetPhysAddrs(..., &pLog->pTaskLogBuffer[1])`); GSP-RM reads it at init and then logs
//! over it, so before the first record (put 0) those qwords are page addresses, not records.
//!
//! # A record (`LIBOS_LOG_INTERNAL`, `libos_log.h`; `libosExtractLog_ReadRecord`)
//! In writing order: the arguments (one qword each, `LIBOS_LOG_BUILD_ARG` casts every argument to
//! `NvU64`), the address of the record's `libosLogMetadata`, then a timestamp (PTIMER
//! nanoseconds; RM's decoder is not `bSynchronousBuffer`, so every record has one). The decoder
//! reads backwards from the put pointer: timestamp, metadata pointer, then `argumentCount`
//! arguments, which only the metadata tells. `libosLogMetadata` is 24 bytes: `filename` (u64
//! address), `format` (u64 address), `lineNumber` (u32, at 16), `argumentCount` (u8, at 20,
//! at most `LIBOS_LOG_MAX_ARGS` = 20), `printLevel` (u8, at 21; `LOG_LEVEL_INFO/WARNING/ERROR`).
//! An extended record (`LIBOS_LOG_ADDRESS`) points at `libosLogMetadata_extended` instead:
//! `versionExtended` = `0x8000_0000_0000_0000` where `filename` would be, the address of a task
//! ELF section name, then the `libosLogMetadata` at 16 (`_getLoggingMetadata`).
//!
//! # Where the metadata lives
//! Metadata and format strings sit in the firmware's `.logging` sections, which "are stripped from
//! the image as the final build step" (`libos_log.h`): the GSP-RM image in `gsp_*.bin` does not
//! carry them. RM decodes with a separate file, `gsp_log_ga10x.bin` / `gsp_log_tu10x.bin`
//! (`nv_firmware_path`, `nv-firmware.h`), loaded only when `NVreg_EnableGpuFirmwareLogs` asks
//! (`osinit.c`): a firmware container whose `.fwlogging` section (`GSP_LOGGING_SECTION_NAME`) is
//! an ELF (`_kgspInitLibosLogDecoder`). When that ELF has a `.fwIsContainerElf` section, each log
//! buffer is decoded with the ELF in its own section (`.fwlogging_init` for LOGINIT,
//! `.fwlogging_rm` for LOGINTR and LOGRM); otherwise the one ELF serves all (`libosLogInit`).
//! Addresses are resolved as `LibosElfMapVirtual` does (`libelf.c`): through the program header
//! that covers the whole range, else through the section whose address range holds it.
//! Debian's `firmware-nvidia-gsp` ships no `gsp_log_*.bin`, so on real hardware with Debian's
//! files [`GspLogs`] has no [`LogMetadata`] and prints the new qwords raw (RM prints nothing).
//!
//! # Reading (`libosExtractLogs_decode`)
//! Each drain reads what was written since the last one: from the put pointer back to the
//! previous put. When more than `n` qwords were written meanwhile, the oldest are overwritten
//! ("Buffer wrapped"): reading stops where the ring has been overwritten. A metadata pointer that
//! does not resolve, or that announces more than 20 arguments, ends the reading of that buffer
//! ("Bad metadata"): its argument count, hence everything older, is unknown. Both are error
//! lines, as RM prints them. Records of all buffers come out merged by timestamp, oldest first.
//!
//! Everything in the buffers and in the metadata ELF is input: indexes are reduced modulo the
//! ring, reads are bounds-checked, strings and field widths are capped; nothing here panics.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write};

use object::read::elf::{ElfFile64, ProgramHeader};
use object::{LittleEndian, Object, ObjectSection};

use crate::chip::GSP_FIRMWARE_VERSION;

/// `GSP_LOGGING_SECTION_NAME` (`g_kernel_gsp_nvoc.h`): the section of `gsp_log_*.bin` holding the
/// logging ELF.
pub const GSP_LOGGING_SECTION: &str = ".fwlogging";
/// The section that marks a logging ELF as a container of per-task ELFs (`_checkIsElfContainer`).
pub const LOGGING_CONTAINER_MARKER: &str = ".fwIsContainerElf";
/// The version section of a firmware container (`GSP_VERSION_SECTION_NAME`).
const VERSION_SECTION: &str = ".fwversion";
/// `LIBOS_LOG_MAX_ARGS` (`liblogdecode.h`): more arguments than this is bad metadata.
pub const LIBOS_LOG_MAX_ARGS: u8 = 20;
/// `sizeof(libosLogMetadata)`.
pub const LOG_METADATA_SIZE: usize = 24;
/// `sizeof(libosLogMetadata_extended)`.
pub const LOG_METADATA_EXTENDED_SIZE: usize = 40;
/// `libosLogMetadata_extended.versionExtended`: high bit set, where a `filename` pointer would be.
pub const LOG_METADATA_EXTENDED_MARKER: u64 = 0x8000_0000_0000_0000;
/// `LOG_LEVEL_INFO` (`libos_log.h`).
pub const LOG_LEVEL_INFO: u8 = 0;
/// `LOG_LEVEL_WARNING`.
pub const LOG_LEVEL_WARNING: u8 = 1;
/// `LOG_LEVEL_ERROR`.
pub const LOG_LEVEL_ERROR: u8 = 2;

/// Most qwords a drain prints raw per buffer (the newest); a wrapped 64 KiB buffer holds 8191.
pub const RAW_QWORDS_PER_DRAIN: u64 = 128;
/// Qwords per raw line.
const RAW_QWORDS_PER_LINE: usize = 4;
/// Longest string read from the metadata ELF (format strings, file names, `%s` arguments).
const MAX_STRING: usize = 1024;
/// Largest field width or precision honoured (a corrupt format cannot ask for megabytes).
const MAX_FIELD: usize = 256;
/// Longest decoded record text.
const MAX_LINE: usize = 1024;

/// One LIBOS task's log buffer, as RM describes it (`logInitValues` in
/// `_kgspInitLibosLoggingStructures`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogTask {
    /// The LIBOS region name ("LOGRM").
    pub name: &'static str,
    /// RM's prefix for its lines ("RM": `NVRM: GPU0 GSP-RM: ...`).
    pub prefix: &'static str,
    /// The section of a container logging ELF holding this task's ELF.
    pub elf_section: &'static str,
}

/// GSP-RM's three buffers in the order RM allocates them and LIBOS takes them
/// ([`super::boot::data::BootData::logs`]).
pub const GSP_RM_LOG_TASKS: [LogTask; 3] = [
    LogTask { name: "LOGINIT", prefix: "INIT", elf_section: ".fwlogging_init" },
    LogTask { name: "LOGINTR", prefix: "INTR", elf_section: ".fwlogging_rm" },
    LogTask { name: "LOGRM", prefix: "RM", elf_section: ".fwlogging_rm" },
];

/// Why a logging ELF or `gsp_log_*.bin` cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogElfError {
    /// Not an ELF64 little-endian file (`reason` from the parser).
    NotElf { what: &'static str, reason: String },
    /// A firmware container without `.fwlogging` (a `gsp_*.bin` rather than `gsp_log_*.bin`).
    NoLoggingSection,
    /// The container's `.fwversion` is not this driver's GSP-RM version plus NUL
    /// (`_kgspFwContainerVerifyVersion`).
    Version { found: String },
    /// A section's bytes could not be read.
    Section { name: &'static str },
}

impl fmt::Display for LogElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotElf { what, reason } => write!(f, "GSP-RM log metadata: {what} is not an ELF64 file: {reason}"),
            Self::NoLoggingSection => {
                write!(f, "GSP-RM log metadata: no {GSP_LOGGING_SECTION} section (not a gsp_log_*.bin)")
            }
            Self::Version { found } => {
                write!(f, "GSP-RM log metadata: .fwversion {found:?}, this driver runs GSP-RM {GSP_FIRMWARE_VERSION}")
            }
            Self::Section { name } => write!(f, "GSP-RM log metadata: section {name} unreadable"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The metadata ELF.

/// An address range of an ELF and where its bytes are in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Mapping {
    address: u64,
    /// Bytes of address space it covers (`p_memsz`, `sh_size`).
    size: u64,
    offset: u64,
    /// Bytes of it present in the file (`p_filesz`; `sh_size`).
    file_size: u64,
}

impl Mapping {
    /// Whether `[address, address + len)` lies inside, as `LibosElfProgramHeaderForRange` asks.
    fn covers(&self, address: u64, len: u64) -> bool {
        let Some(last) = address.checked_add(len.saturating_sub(1)) else { return false };
        address >= self.address && last - self.address < self.size
    }

    /// The file bytes from `address` to the end of the mapping's file bytes.
    fn tail<'a>(&self, file: &'a [u8], address: u64) -> Option<&'a [u8]> {
        let skip = address.checked_sub(self.address)?;
        let available = self.file_size.checked_sub(skip)?;
        let start = usize::try_from(self.offset.checked_add(skip)?).ok()?;
        let end = start.checked_add(usize::try_from(available).ok()?)?;
        file.get(start..end.min(file.len()))
    }
}

/// One task's logging ELF: the bytes behind the addresses its records carry. Borrows the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggingElf<'a> {
    file: &'a [u8],
    segments: Vec<Mapping>,
    sections: Vec<Mapping>,
}

fn parse_elf<'a>(bytes: &'a [u8], what: &'static str) -> Result<ElfFile64<'a, LittleEndian>, LogElfError> {
    ElfFile64::<LittleEndian>::parse(bytes).map_err(|e| LogElfError::NotElf { what, reason: e.to_string() })
}

impl<'a> LoggingElf<'a> {
    /// Reads the program and section headers of a logging ELF.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, LogElfError> {
        let elf = parse_elf(bytes, "the logging ELF")?;
        let endian = elf.endian();
        let segments = elf
            .elf_program_headers()
            .iter()
            .map(|p| Mapping {
                address: p.p_vaddr(endian),
                size: p.p_memsz(endian),
                offset: p.p_offset(endian),
                file_size: p.p_filesz(endian),
            })
            .collect();
        // Sections without file bytes (NOBITS) hold nothing to read, and sections at address 0
        // (string tables, symbols) are not where records point: leaving them out keeps a small
        // corrupt pointer from "resolving" into a symbol table.
        let sections = elf
            .sections()
            .filter(|s| s.address() != 0)
            .filter_map(|s| {
                let (offset, file_size) = s.file_range()?;
                Some(Mapping { address: s.address(), size: s.size(), offset, file_size })
            })
            .collect();
        Ok(Self { file: bytes, segments, sections })
    }

    /// The mapping holding `[address, address + len)`: a program header covering all of it, else
    /// the section whose range holds `address` (`LibosElfMapVirtual`).
    fn mapping(&self, address: u64, len: u64) -> Option<&Mapping> {
        self.segments
            .iter()
            .find(|m| m.covers(address, len))
            .or_else(|| self.sections.iter().find(|m| m.covers(address, 1)))
    }

    /// `len` bytes at virtual address `address`, when all of them are file bytes of one mapping.
    pub fn read(&self, address: u64, len: usize) -> Option<&'a [u8]> {
        self.mapping(address, len as u64)?.tail(self.file, address)?.get(..len)
    }

    /// The NUL-terminated string at `address` (without its NUL), when it ends inside one mapping
    /// and within [`MAX_STRING`] bytes (`LibosElfMapVirtualString`).
    pub fn string(&self, address: u64) -> Option<&'a [u8]> {
        let tail = self.mapping(address, 1)?.tail(self.file, address)?;
        let window = tail.get(..tail.len().min(MAX_STRING + 1))?;
        let end = window.iter().position(|&b| b == 0)?;
        window.get(..end)
    }

    /// The `libosLogMetadata` a record points at, extended or not (`_getLoggingMetadata`).
    pub fn metadata(&self, address: u64) -> Option<LogMetadataRecord> {
        let bytes = self.read(address, LOG_METADATA_SIZE)?;
        let filename = u64_le(bytes, 0)?;
        if filename == LOG_METADATA_EXTENDED_MARKER && self.string(filename).is_none() {
            let extended = self.read(address, LOG_METADATA_EXTENDED_SIZE)?;
            let mut meta = LogMetadataRecord::from_bytes(extended.get(16..)?)?;
            meta.task_section = u64_le(extended, 8).filter(|&a| a != 0);
            return Some(meta);
        }
        LogMetadataRecord::from_bytes(bytes)
    }
}

fn u64_le(bytes: &[u8], at: usize) -> Option<u64> {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(bytes.get(at..at.checked_add(8)?)?);
    Some(u64::from_le_bytes(raw))
}

/// A decoded `libosLogMetadata` (addresses still in the ELF's address space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogMetadataRecord {
    /// Address of the source file name.
    pub filename: u64,
    /// Address of the printf format string.
    pub format: u64,
    pub line: u32,
    /// Arguments in the record, not counting the format.
    pub argument_count: u8,
    /// `LOG_LEVEL_*`.
    pub level: u8,
    /// For an extended record: address of the task ELF section name it logs for.
    pub task_section: Option<u64>,
}

impl LogMetadataRecord {
    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let line = bytes.get(16..20)?;
        Some(Self {
            filename: u64_le(bytes, 0)?,
            format: u64_le(bytes, 8)?,
            line: u32::from_le_bytes([line[0], line[1], line[2], line[3]]),
            argument_count: *bytes.get(20)?,
            level: *bytes.get(21)?,
            task_section: None,
        })
    }
}

/// The logging ELF RM decodes GSP-RM's logs with: the `.fwlogging` section of
/// `gsp_log_<family>.bin`, whole or split per task. Borrows the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogMetadata<'a> {
    elf: &'a [u8],
    /// Per-task ELFs by section name when the ELF is a container.
    tasks: Option<Vec<(&'a str, &'a [u8])>>,
}

impl<'a> LogMetadata<'a> {
    /// Reads `gsp_log_<family>.bin` as `_kgspInitLibosLogDecoder` does: a firmware container whose
    /// `.fwversion` is the driver's version, then the ELF in its `.fwlogging` section.
    pub fn from_log_firmware(file: &'a [u8]) -> Result<Self, LogElfError> {
        let elf = parse_elf(file, "the log firmware container")?;
        let mut logging = None;
        let mut version = None;
        for section in elf.sections() {
            match section.name() {
                Ok(GSP_LOGGING_SECTION) => {
                    logging = Some(section.data().map_err(|_| LogElfError::Section { name: GSP_LOGGING_SECTION })?)
                }
                Ok(VERSION_SECTION) => {
                    version = Some(section.data().map_err(|_| LogElfError::Section { name: VERSION_SECTION })?)
                }
                _ => {}
            }
        }
        let logging = logging.ok_or(LogElfError::NoLoggingSection)?;
        let expected = [GSP_FIRMWARE_VERSION.as_bytes(), &[0]].concat();
        if let Some(found) = version.filter(|v| *v != expected.as_slice()) {
            return Err(LogElfError::Version { found: String::from_utf8_lossy(found).into_owned() });
        }
        Self::from_logging_elf(logging)
    }

    /// Reads the logging ELF itself (the `.fwlogging` payload): a container of per-task ELFs
    /// when it has `.fwIsContainerElf`, else one ELF for every buffer.
    pub fn from_logging_elf(elf_bytes: &'a [u8]) -> Result<Self, LogElfError> {
        let elf = parse_elf(elf_bytes, "the logging ELF")?;
        let is_container = elf.sections().any(|s| s.name() == Ok(LOGGING_CONTAINER_MARKER));
        if !is_container {
            LoggingElf::parse(elf_bytes)?;
            return Ok(Self { elf: elf_bytes, tasks: None });
        }
        let mut tasks = Vec::new();
        for section in elf.sections() {
            let Ok(name) = section.name() else { continue };
            // The marker and the ELF's own tables are not task ELFs.
            if name.is_empty() || matches!(name, LOGGING_CONTAINER_MARKER | ".shstrtab" | ".strtab" | ".symtab") {
                continue;
            }
            if let Ok(data) = section.data() {
                tasks.push((name, data));
            }
        }
        Ok(Self { elf: elf_bytes, tasks: Some(tasks) })
    }

    /// Whether the ELF is a container of per-task ELFs.
    pub fn is_container(&self) -> bool {
        self.tasks.is_some()
    }

    /// The section names of a container's per-task ELFs.
    pub fn task_sections(&self) -> Vec<&'a str> {
        self.tasks.iter().flatten().map(|(name, _)| *name).collect()
    }

    /// The ELF that decodes `task`'s buffer (`None`: a container without its section, or a
    /// section that is not an ELF; RM then does not decode that buffer).
    pub fn for_task(&self, task: &LogTask) -> Option<LoggingElf<'a>> {
        match &self.tasks {
            None => LoggingElf::parse(self.elf).ok(),
            Some(tasks) => {
                let (_, data) = tasks.iter().find(|(name, _)| *name == task.elf_section)?;
                LoggingElf::parse(data).ok()
            }
        }
    }
}

/// The sections of the ELF `bytes` that carry log metadata: `.fwlogging*` (a `gsp_log_*.bin`
/// container and its per-task ELFs) and `.logging*` (a task ELF before stripping). Empty for
/// NVIDIA's `gsp_*.bin` and the GSP-RM images in them, whose `.logging` sections are stripped.
pub fn logging_sections(bytes: &[u8]) -> Result<Vec<&str>, LogElfError> {
    let elf = parse_elf(bytes, "the ELF")?;
    Ok(elf
        .sections()
        .filter_map(|s| s.name().ok())
        .filter(|name| name.starts_with(GSP_LOGGING_SECTION) || name.starts_with(".logging"))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Lines.

/// What a [`LogLine`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLineKind {
    /// A decoded record at `LOG_LEVEL_*` `level`.
    Record { level: u8 },
    /// Qwords printed as they are (no metadata to decode them with).
    Raw,
    /// The buffer could not be read as records (wrapped, bad metadata, put pointer went back).
    Error,
}

/// One printed line of a GSP-RM log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// The buffer ("LOGRM").
    pub log: &'static str,
    pub kind: LogLineKind,
    /// The record's timestamp (PTIMER ns on hardware), for records.
    pub timestamp: Option<u64>,
    /// For a record: `file(line): message`, as RM prints it after its `GPUn GSP-RM:` prefix.
    pub text: String,
}

impl LogLine {
    fn error(task: &LogTask, text: String) -> Self {
        Self { log: task.name, kind: LogLineKind::Error, timestamp: None, text }
    }

    /// The `log` crate level this line is printed at.
    pub fn level(&self) -> log::Level {
        match self.kind {
            LogLineKind::Record { level: LOG_LEVEL_ERROR } => log::Level::Error,
            LogLineKind::Record { level: LOG_LEVEL_WARNING } | LogLineKind::Error => log::Level::Warn,
            LogLineKind::Record { .. } => log::Level::Info,
            LogLineKind::Raw => log::Level::Debug,
        }
    }
}

impl fmt::Display for LogLine {
    /// `[gsp LOGRM] <text>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[gsp {}] {}", self.log, self.text)
    }
}

// ---------------------------------------------------------------------------------------------
// The reader.

struct TaskLog<'a> {
    task: LogTask,
    /// The put pointer at the last drain: everything before it was printed.
    previous_put: u64,
    elf: Option<LoggingElf<'a>>,
}

/// Reads GSP-RM's log buffers: owns the read position of each buffer and the ELFs to decode
/// them with; the buffers themselves (DMA memory, [`super::boot::data::LogBuffer`]) stay with
/// their owner and are lent to each [`Self::drain`].
pub struct GspLogs<'a> {
    tasks: Vec<TaskLog<'a>>,
}

impl<'a> GspLogs<'a> {
    /// A reader for `tasks`' buffers (in the order [`Self::drain`] gets them), decoding with
    /// `metadata` where it has the task's ELF and printing raw otherwise.
    pub fn new(tasks: &[LogTask], metadata: Option<&LogMetadata<'a>>) -> Self {
        let tasks = tasks
            .iter()
            .map(|task| TaskLog { task: *task, previous_put: 0, elf: metadata.and_then(|m| m.for_task(task)) })
            .collect();
        Self { tasks }
    }

    /// A reader for GSP-RM's LOGINIT, LOGINTR and LOGRM ([`GSP_RM_LOG_TASKS`]).
    pub fn for_gsp_rm(metadata: Option<&LogMetadata<'a>>) -> Self {
        Self::new(&GSP_RM_LOG_TASKS, metadata)
    }

    /// Decodes with `metadata` from now on (read positions kept).
    pub fn set_metadata(&mut self, metadata: Option<&LogMetadata<'a>>) {
        for log in &mut self.tasks {
            log.elf = metadata.and_then(|m| m.for_task(&log.task));
        }
    }

    /// Whether `task`'s buffer is decoded (its ELF was found).
    pub fn decodes(&self, task: &str) -> bool {
        self.tasks.iter().any(|t| t.task.name == task && t.elf.is_some())
    }

    /// Forgets the read positions (new buffers: a new boot).
    pub fn reset(&mut self) {
        for log in &mut self.tasks {
            log.previous_put = 0;
        }
    }

    /// The put pointer each buffer had at the last drain.
    pub fn positions(&self) -> Vec<(&'static str, u64)> {
        self.tasks.iter().map(|t| (t.task.name, t.previous_put)).collect()
    }

    /// Everything written since the last drain, `buffers[i]` being a copy of task `i`'s
    /// buffer: decoded records merged by timestamp (oldest first), error lines where a buffer
    /// cannot be read as records, raw qwords where there is no metadata.
    pub fn drain(&mut self, buffers: &[&[u8]], mut sink: impl FnMut(LogLine)) {
        let mut per_task: Vec<alloc::collections::VecDeque<LogLine>> = self
            .tasks
            .iter_mut()
            .enumerate()
            .map(|(index, log)| match buffers.get(index) {
                Some(buffer) => log.read(buffer).into(),
                None => {
                    let line = LogLine::error(&log.task, String::from("no buffer given to read"));
                    alloc::vec![line].into()
                }
            })
            .collect();
        // Merge: error and raw lines go out as soon as they head their buffer's list (they keep
        // their place in it); records by timestamp, earlier buffers first on ties.
        loop {
            let mut best: Option<(usize, u64)> = None;
            for (index, lines) in per_task.iter().enumerate() {
                let Some(head) = lines.front() else { continue };
                let key = head.timestamp.unwrap_or(0);
                if best.is_none_or(|(_, k)| key < k) {
                    best = Some((index, key));
                }
            }
            let Some((index, _)) = best else { break };
            if let Some(line) = per_task.get_mut(index).and_then(|l| l.pop_front()) {
                sink(line);
            }
        }
    }

    /// [`Self::drain`] into a vector.
    pub fn drain_to_vec(&mut self, buffers: &[&[u8]]) -> Vec<LogLine> {
        let mut lines = Vec::new();
        self.drain(buffers, |line| lines.push(line));
        lines
    }
}

/// The buffer as a ring of qwords.
struct Ring<'b> {
    buffer: &'b [u8],
    /// Qwords in the ring (after the put pointer).
    entries: u64,
}

impl Ring<'_> {
    /// The qword with running number `i` (`physicLogBuffer[1 + i % log_entries]`).
    fn entry(&self, i: u64) -> u64 {
        let index = 1 + (i % self.entries) as usize;
        index.checked_mul(8).and_then(|at| u64_le(self.buffer, at)).unwrap_or(0)
    }
}

impl TaskLog<'_> {
    /// The lines since the last read, oldest first.
    fn read(&mut self, buffer: &[u8]) -> Vec<LogLine> {
        let task = self.task;
        let qwords = (buffer.len() / 8) as u64;
        if qwords < 2 {
            return alloc::vec![LogLine::error(
                &task,
                alloc::format!("buffer of {} bytes holds no records", buffer.len())
            )];
        }
        let ring = Ring { buffer, entries: qwords - 1 };
        let put = u64_le(buffer, 0).unwrap_or(0);
        let mut lines = Vec::new();
        let mut previous = self.previous_put;
        if put == previous {
            return lines;
        }
        if put < previous {
            lines.push(LogLine::error(
                &task,
                alloc::format!(
                    "put pointer went back from {previous} to {put} (GSP-RM restarted, or the buffer is corrupt): \
                     reading it from the start"
                ),
            ));
            previous = 0;
        }
        self.previous_put = put;
        // More written than the ring holds: the oldest were overwritten.
        let mut floor = previous;
        let mut lost = 0;
        if put - previous > ring.entries {
            floor = put - ring.entries;
            lost = floor - previous;
        }
        match &self.elf {
            Some(elf) => decode(&task, &ring, elf, floor, put, lost, &mut lines),
            None => raw(&task, &ring, floor, put, lost, &mut lines),
        }
        lines
    }
}

/// Records from `put` back to `floor`, pushed oldest first (`libosExtractLog_ReadRecord`).
fn decode(
    task: &LogTask,
    ring: &Ring<'_>,
    elf: &LoggingElf<'_>,
    floor: u64,
    put: u64,
    lost: u64,
    out: &mut Vec<LogLine>,
) {
    // Newest record first, each record's lines in order.
    let mut records: Vec<Vec<LogLine>> = Vec::new();
    let mut i = put;
    let mut stop: Option<String> = None;
    while i > floor {
        if i - floor < 2 {
            stop = Some(alloc::format!("buffer wrapped: lost {} qwords", i - floor + lost));
            break;
        }
        let timestamp = ring.entry(i - 1);
        let meta_address = ring.entry(i - 2);
        let Some(meta) = elf.metadata(meta_address).filter(|m| m.argument_count <= LIBOS_LOG_MAX_ARGS) else {
            stop = Some(alloc::format!(
                "bad metadata {meta_address:#x} at qword {}: lost {} qwords",
                i - 2,
                i - floor + lost
            ));
            break;
        };
        let count = u64::from(meta.argument_count);
        if i - 2 - floor < count {
            stop = Some(alloc::format!("buffer wrapped: lost {} qwords", i - floor + lost));
            break;
        }
        i -= 2;
        let args: Vec<u64> = (i - count..i).map(|n| ring.entry(n)).collect();
        i -= count;
        let kind = LogLineKind::Record { level: meta.level };
        let lines = format_record(elf, &meta, &args)
            .into_iter()
            .map(|text| LogLine { log: task.name, kind, timestamp: Some(timestamp), text })
            .collect();
        records.push(lines);
    }
    match stop {
        Some(text) => out.push(LogLine::error(task, text)),
        None if lost > 0 => out.push(LogLine::error(task, alloc::format!("buffer wrapped: lost {lost} qwords"))),
        None => {}
    }
    out.extend(records.into_iter().rev().flatten());
}

/// The new qwords as they are, the newest [`RAW_QWORDS_PER_DRAIN`] of them.
fn raw(task: &LogTask, ring: &Ring<'_>, floor: u64, put: u64, lost: u64, out: &mut Vec<LogLine>) {
    let new = put - floor;
    let shown = new.min(RAW_QWORDS_PER_DRAIN);
    let start = put - shown;
    let mut header = alloc::format!(
        "{new} new qwords (put {put}), no logging metadata to decode them ({} of gsp_log_*.bin)",
        task.elf_section
    );
    if lost > 0 {
        let _ = write!(header, "; {lost} overwritten before this read");
    }
    if shown < new {
        let _ = write!(header, "; the oldest {} not shown", new - shown);
    }
    out.push(LogLine { log: task.name, kind: LogLineKind::Raw, timestamp: None, text: header });
    let mut n = start;
    while n < put {
        // `put` is GSP-RM's word: near u64::MAX, a plain add would overflow.
        let end = n.saturating_add(RAW_QWORDS_PER_LINE as u64).min(put);
        let mut text = alloc::format!("qwords {n}..{end}:");
        for q in n..end {
            let _ = write!(text, " {:#018x}", ring.entry(q));
        }
        out.push(LogLine { log: task.name, kind: LogLineKind::Raw, timestamp: None, text });
        n = end;
    }
}

// ---------------------------------------------------------------------------------------------
// Formatting (`libosPrintLogRecords`, `libos_printf_a`).

/// A record's lines: `file(line): text` for each line of its formatted text, the file name
/// without its directories (`libosPrintLogRecords`), "unknown" when it does not resolve.
fn format_record(elf: &LoggingElf<'_>, meta: &LogMetadataRecord, args: &[u64]) -> Vec<String> {
    let file = elf.string(meta.filename).filter(|f| !f.is_empty()).unwrap_or(b"unknown");
    let file = file.rsplit(|&b| b == b'/').next().unwrap_or(file);
    let mut prefix = String::new();
    push_escaped(&mut prefix, file);
    let _ = write!(prefix, "({}): ", meta.line);
    let Some(format) = elf.string(meta.format) else {
        let mut text = alloc::format!("{prefix}<format string {:#x} not in the logging ELF>", meta.format);
        for arg in args {
            let _ = write!(text, " {arg:#x}");
        }
        return alloc::vec![text];
    };
    let text = printf(format, args, &|address| elf.string(address));
    text.split('\n').filter(|line| !line.is_empty()).map(|line| alloc::format!("{prefix}{line}")).collect()
}

/// Appends `bytes` as text: printable ASCII as is, anything else as `\xNN`.
fn push_escaped(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        if b == b'\n' || (0x20..0x7f).contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
}

/// printf as LIBOS's decoder does it: every argument is one u64 (no narrowing by length
/// modifiers, as `libos_printf_a` reads `args[]` whole), `%s` reads the string at the argument's
/// address in the logging ELF ("(bad-pointer)" when it is not there), `%p` is `%#x`, `%a`
/// (LIBOS's symbol conversion) prints the address, `%n` prints nothing. A conversion the decoder
/// does not know, or one with no argument left, ends the text with a marker.
pub fn printf<'s>(format: &[u8], args: &[u64], string_at: &dyn Fn(u64) -> Option<&'s [u8]>) -> String {
    let mut out = String::new();
    let mut args = args.iter().copied();
    let mut s = format;
    while let Some((&c, rest)) = s.split_first() {
        if out.len() > MAX_LINE {
            out.push_str("<...>");
            break;
        }
        s = rest;
        if c != b'%' {
            push_escaped(&mut out, &[c]);
            continue;
        }
        if let Some((b'%', rest)) = s.split_first() {
            out.push('%');
            s = rest;
            continue;
        }
        match conversion(&mut s, &mut args, string_at) {
            Ok(text) => out.push_str(&text),
            Err(marker) => {
                out.push_str(marker);
                break;
            }
        }
    }
    out
}

#[derive(Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alt: bool,
    width: usize,
    precision: Option<usize>,
}

fn take_number(s: &mut &[u8]) -> usize {
    let mut value = 0usize;
    while let Some((&d, rest)) = s.split_first() {
        if !d.is_ascii_digit() {
            break;
        }
        value = value.saturating_mul(10).saturating_add(usize::from(d - b'0'));
        *s = rest;
    }
    value.min(MAX_FIELD)
}

/// One conversion after its `%`: flags, width, precision, length, conversion character.
fn conversion<'s>(
    s: &mut &[u8],
    args: &mut impl Iterator<Item = u64>,
    string_at: &dyn Fn(u64) -> Option<&'s [u8]>,
) -> Result<String, &'static str> {
    const MISSING: &str = "<missing argument>";
    const BAD: &str = "<bad format>";
    let mut spec = Spec::default();
    // Positional arguments (`%1$d`): LIBOS's decoder has no values for them.
    if s.len() >= 2 && s[0].is_ascii_digit() && s[1] == b'$' {
        return Err(BAD);
    }
    while let Some((&f, rest)) = s.split_first() {
        match f {
            b'-' => spec.left = true,
            b'0' => spec.zero = true,
            b'+' => spec.plus = true,
            b' ' => spec.space = true,
            b'#' => spec.alt = true,
            b'\'' => {}
            _ => break,
        }
        *s = rest;
    }
    if let Some((b'*', rest)) = s.split_first() {
        *s = rest;
        let w = args.next().ok_or(MISSING)? as i64 as i32;
        if w < 0 {
            spec.left = true;
        }
        spec.width = (w.unsigned_abs() as usize).min(MAX_FIELD);
    } else {
        spec.width = take_number(s);
    }
    if let Some((b'.', rest)) = s.split_first() {
        *s = rest;
        if let Some((b'*', rest)) = s.split_first() {
            *s = rest;
            let p = args.next().ok_or(MISSING)? as i64 as i32;
            spec.precision = usize::try_from(p).ok().map(|p| p.min(MAX_FIELD));
        } else {
            spec.precision = Some(take_number(s));
        }
    }
    while let Some((&m, rest)) = s.split_first() {
        if !matches!(m, b'h' | b'l' | b'L' | b'j' | b'z' | b't' | b'q') {
            break;
        }
        *s = rest;
    }
    let Some((&conv, rest)) = s.split_first() else { return Err(BAD) };
    *s = rest;
    if conv == b'n' {
        return Ok(String::new());
    }
    let value = args.next().ok_or(MISSING)?;
    let (prefix, body): (&str, String) = match conv {
        b'd' | b'i' => {
            let v = value as i64;
            let sign = if v < 0 {
                "-"
            } else if spec.plus {
                "+"
            } else if spec.space {
                " "
            } else {
                ""
            };
            (sign, digits(v.unsigned_abs(), 10, false, &spec))
        }
        b'u' => ("", digits(value, 10, false, &spec)),
        b'o' => {
            let body = digits(value, 8, false, &spec);
            (if spec.alt && value != 0 && !body.starts_with('0') { "0" } else { "" }, body)
        }
        b'x' | b'X' | b'p' => {
            let upper = conv == b'X';
            let alt = spec.alt || conv == b'p';
            let prefix = match (alt && value != 0, upper) {
                (false, _) => "",
                (true, false) => "0x",
                (true, true) => "0X",
            };
            (prefix, digits(value, 16, upper, &spec))
        }
        // LIBOS's `%a` resolves a symbol; without a symbol table the address is what there is.
        b'a' => ("0x", digits(value, 16, false, &Spec::default())),
        b'c' => {
            spec.zero = false;
            let mut body = String::new();
            push_escaped(&mut body, &[value as u8]);
            ("", body)
        }
        b's' => {
            spec.zero = false;
            let bytes = string_at(value).unwrap_or(b"(bad-pointer)");
            let bytes = match spec.precision {
                Some(p) => bytes.get(..p.min(bytes.len())).unwrap_or(bytes),
                None => bytes,
            };
            let mut body = String::new();
            push_escaped(&mut body, bytes);
            ("", body)
        }
        // Floating point: GSP-RM logs none (`LIBOS_LOG_BUILD_ARG` under NVRM is integers only).
        b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'A' => ("0x", digits(value, 16, false, &Spec::default())),
        _ => return Err(BAD),
    };
    Ok(pad(prefix, &body, &spec))
}

/// `value`'s digits in `radix`, at least `precision` of them; none for 0 with precision 0.
fn digits(value: u64, radix: u32, upper: bool, spec: &Spec) -> String {
    let mut body = String::new();
    if !(value == 0 && spec.precision == Some(0)) {
        let _ = match (radix, upper) {
            (16, true) => write!(body, "{value:X}"),
            (16, false) => write!(body, "{value:x}"),
            (8, _) => write!(body, "{value:o}"),
            _ => write!(body, "{value}"),
        };
    }
    if let Some(p) = spec.precision {
        while body.len() < p {
            body.insert(0, '0');
        }
    }
    body
}

/// Pads `prefix` + `body` to the field width: spaces left or right, or zeros after the prefix
/// (`0` flag, not with `-` or a precision, as C).
fn pad(prefix: &str, body: &str, spec: &Spec) -> String {
    let len = prefix.len() + body.len();
    let fill = spec.width.saturating_sub(len);
    let mut out = String::with_capacity(len + fill);
    if spec.left {
        out.push_str(prefix);
        out.push_str(body);
        out.extend(core::iter::repeat_n(' ', fill));
    } else if spec.zero && spec.precision.is_none() {
        out.push_str(prefix);
        out.extend(core::iter::repeat_n('0', fill));
        out.push_str(body);
    } else {
        out.extend(core::iter::repeat_n(' ', fill));
        out.push_str(prefix);
        out.push_str(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(format: &str, args: &[u64]) -> String {
        printf(format.as_bytes(), args, &|a| (a == 0x1000).then_some(b"GSP_INIT_DONE".as_slice()))
    }

    #[test]
    fn printf_follows_libos() {
        assert_eq!(fmt("plain\n", &[]), "plain\n");
        assert_eq!(fmt("%d %i %u", &[-5i64 as u64, 7, 9]), "-5 7 9");
        assert_eq!(fmt("%x %X %#x %#x %p", &[0xab, 0xab, 0xab, 0, 0x10]), "ab AB 0xab 0 0x10");
        assert_eq!(fmt("%08x|%-6d|%6d|%+d", &[0x1f, 42, 42, 3]), "0000001f|42    |    42|+3");
        assert_eq!(fmt("%llx %lu %hhu %zu", &[u64::MAX, 1, 300, 2]), "ffffffffffffffff 1 300 2");
        assert_eq!(fmt("%.3d %.0d|", &[7, 0]), "007 |");
        assert_eq!(fmt("%s and %s", &[0x1000, 0x2000]), "GSP_INIT_DONE and (bad-pointer)");
        assert_eq!(fmt("%.3s|%8s|", &[0x1000, 0x1000]), "GSP|GSP_INIT_DONE|");
        assert_eq!(fmt("%c%c", &[b'o' as u64, b'k' as u64]), "ok");
        assert_eq!(fmt("100%%", &[]), "100%");
        assert_eq!(fmt("%*d|%-*d|", &[5, 1, 3, 2]), "    1|2  |");
        assert_eq!(fmt("%#o", &[8]), "010");
    }

    #[test]
    fn printf_survives_hostile_formats() {
        assert_eq!(fmt("%d %d", &[1]), "1 <missing argument>");
        assert_eq!(fmt("%", &[]), "<bad format>");
        assert_eq!(fmt("%w", &[1]), "<bad format>");
        assert_eq!(fmt("%1$d", &[1]), "<bad format>");
        // A width of four billion is capped.
        assert_eq!(fmt("%4000000000d", &[1]).len(), MAX_FIELD);
        assert_eq!(fmt("%*d", &[0x7fff_ffff, 1]).len(), MAX_FIELD);
        assert_eq!(fmt("\x01\u{ff}", &[]), "\\x01\\xc3\\xbf");
    }

    #[test]
    fn raw_lines_without_metadata_and_errors_on_a_bad_put() {
        let mut buffer = alloc::vec![0u8; 0x1000];
        let put = 6u64;
        buffer[..8].copy_from_slice(&put.to_le_bytes());
        for i in 0..put {
            let at = 8 * (1 + i as usize);
            buffer[at..at + 8].copy_from_slice(&(0x100 + i).to_le_bytes());
        }
        let mut logs = GspLogs::new(&GSP_RM_LOG_TASKS[2..], None);
        let lines = logs.drain_to_vec(&[&buffer]);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(lines.iter().all(|l| l.kind == LogLineKind::Raw && l.log == "LOGRM"));
        assert_eq!(
            lines[1].to_string(),
            "[gsp LOGRM] qwords 0..4: 0x0000000000000100 0x0000000000000101 0x0000000000000102 0x0000000000000103"
        );
        assert!(logs.drain_to_vec(&[&buffer]).is_empty(), "nothing new");
        // The put pointer going back is an error line, not a panic.
        buffer[..8].copy_from_slice(&2u64.to_le_bytes());
        let lines = logs.drain_to_vec(&[&buffer]);
        assert_eq!(lines[0].kind, LogLineKind::Error);
        assert!(lines[0].text.contains("went back from 6 to 2"), "{}", lines[0]);
        // A huge put pointer wraps: only the newest qwords print.
        buffer[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        let lines = logs.drain_to_vec(&[&buffer]);
        assert!(lines[0].text.contains("overwritten"), "{}", lines[0]);
        assert_eq!(lines.len(), 1 + (RAW_QWORDS_PER_DRAIN as usize) / RAW_QWORDS_PER_LINE);
        // Found by the `gsp_log` fuzz target: five new qwords ending just below u64::MAX made
        // the last line's end overflow.
        let mut fresh = GspLogs::new(&GSP_RM_LOG_TASKS[2..], None);
        buffer[..8].copy_from_slice(&(u64::MAX - 6).to_le_bytes());
        fresh.drain_to_vec(&[&buffer]);
        buffer[..8].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
        let lines = fresh.drain_to_vec(&[&buffer]);
        assert_eq!(lines.len(), 3, "{lines:#?}");
        assert!(
            lines[2].text.starts_with(&alloc::format!("qwords {}..{}:", u64::MAX - 2, u64::MAX - 1)),
            "{}",
            lines[2]
        );
        // Too small a buffer, or none.
        let lines = logs.drain_to_vec(&[&buffer[..8]]);
        assert_eq!(lines[0].kind, LogLineKind::Error);
        assert_eq!(logs.drain_to_vec(&[])[0].kind, LogLineKind::Error);
    }
}
