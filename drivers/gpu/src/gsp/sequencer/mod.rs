//! The CPU sequencer, in one place: the `GSP_RUN_CPU_SEQUENCER` buffers GSP-RM sends decoded into
//! [`SeqCommand`]s and run over [`RegisterIo`] and a [`SequencerCore`] (`kgspExecuteSequencerBuffer`,
//! `rmgspseq.h`), and [`cores`]: the core operations those scripts ask for, on the GPU's falcons.
//!
//! Everything decoded here comes from firmware: lengths are checked before anything is read, and a
//! short or inconsistent buffer is a [`SequencerError`], never a panic.

pub mod cores;

pub use cores::BootCore;

use crate::gsp::commands::*;
use crate::hw::RegisterIo;
use crate::platform::{wait_for, Clock, Timeout};
use alloc::vec::Vec;
use core::fmt;
use core::mem::size_of;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `GSP_SEQ_BUF_OPCODE` (`rmgspseq.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum SeqOpcode {
    /// `GSP_SEQ_BUF_OPCODE_REG_WRITE`.
    RegWrite = 0,
    /// `GSP_SEQ_BUF_OPCODE_REG_MODIFY`.
    RegModify = 1,
    /// `GSP_SEQ_BUF_OPCODE_REG_POLL`.
    RegPoll = 2,
    /// `GSP_SEQ_BUF_OPCODE_DELAY_US`.
    DelayUs = 3,
    /// `GSP_SEQ_BUF_OPCODE_REG_STORE`.
    RegStore = 4,
    /// `GSP_SEQ_BUF_OPCODE_CORE_RESET`.
    CoreReset = 5,
    /// `GSP_SEQ_BUF_OPCODE_CORE_START`.
    CoreStart = 6,
    /// `GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT`.
    CoreWaitForHalt = 7,
    /// `GSP_SEQ_BUF_OPCODE_CORE_RESUME`.
    CoreResume = 8,
}

impl SeqOpcode {
    /// Every opcode.
    pub const ALL: [SeqOpcode; 9] = [
        SeqOpcode::RegWrite,
        SeqOpcode::RegModify,
        SeqOpcode::RegPoll,
        SeqOpcode::DelayUs,
        SeqOpcode::RegStore,
        SeqOpcode::CoreReset,
        SeqOpcode::CoreStart,
        SeqOpcode::CoreWaitForHalt,
        SeqOpcode::CoreResume,
    ];

    /// Decodes an opcode word.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        if (raw as usize) < Self::ALL.len() {
            Some(Self::ALL[raw as usize])
        } else {
            None
        }
    }

    /// NVIDIA's name.
    pub const fn nvidia_name(self) -> &'static str {
        match self {
            SeqOpcode::RegWrite => "GSP_SEQ_BUF_OPCODE_REG_WRITE",
            SeqOpcode::RegModify => "GSP_SEQ_BUF_OPCODE_REG_MODIFY",
            SeqOpcode::RegPoll => "GSP_SEQ_BUF_OPCODE_REG_POLL",
            SeqOpcode::DelayUs => "GSP_SEQ_BUF_OPCODE_DELAY_US",
            SeqOpcode::RegStore => "GSP_SEQ_BUF_OPCODE_REG_STORE",
            SeqOpcode::CoreReset => "GSP_SEQ_BUF_OPCODE_CORE_RESET",
            SeqOpcode::CoreStart => "GSP_SEQ_BUF_OPCODE_CORE_START",
            SeqOpcode::CoreWaitForHalt => "GSP_SEQ_BUF_OPCODE_CORE_WAIT_FOR_HALT",
            SeqOpcode::CoreResume => "GSP_SEQ_BUF_OPCODE_CORE_RESUME",
        }
    }

    /// Argument words after the opcode (`GSP_SEQUENCER_PAYLOAD_SIZE_DWORDS`).
    pub const fn payload_dwords(self) -> usize {
        match self {
            SeqOpcode::RegWrite => size_of::<SeqRegWrite>() / 4,
            SeqOpcode::RegModify => size_of::<SeqRegModify>() / 4,
            SeqOpcode::RegPoll => size_of::<SeqRegPoll>() / 4,
            SeqOpcode::DelayUs => size_of::<SeqDelayUs>() / 4,
            SeqOpcode::RegStore => size_of::<SeqRegStore>() / 4,
            SeqOpcode::CoreReset | SeqOpcode::CoreStart | SeqOpcode::CoreWaitForHalt | SeqOpcode::CoreResume => 0,
        }
    }
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_WRITE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegWrite {
    /// `addr`: BAR0 offset.
    pub addr: u32,
    /// `val`.
    pub val: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_MODIFY`: `reg = (reg & !mask) | val`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegModify {
    /// `addr`.
    pub addr: u32,
    /// `mask`.
    pub mask: u32,
    /// `val`, already shifted into the mask.
    pub val: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_POLL`: wait until `reg & mask == val`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegPoll {
    /// `addr`.
    pub addr: u32,
    /// `mask`.
    pub mask: u32,
    /// `val`.
    pub val: u32,
    /// `timeout`: the header says milliseconds, but RM passes it to `gpuSetTimeout`, which
    /// takes microseconds; this driver does as RM does. 0 (`GPU_TIMEOUT_DEFAULT`) means RM's
    /// default timeout.
    pub timeout: u32,
    /// `error`: a `GSP_SEQUENCER_BUFFER_ERR` code naming the GSP-RM code that asked.
    pub error: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_DELAY_US`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqDelayUs {
    /// `val`: microseconds.
    pub val: u32,
}

/// `GSP_SEQ_BUF_PAYLOAD_REG_STORE`: save a register in `regSaveArea[index]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct SeqRegStore {
    /// `addr`.
    pub addr: u32,
    /// `index`: below `GSP_SEQ_BUF_REG_SAVE_SIZE`.
    pub index: u32,
}

/// One sequencer command, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqCommand {
    /// `REG_WRITE`.
    RegWrite(SeqRegWrite),
    /// `REG_MODIFY`.
    RegModify(SeqRegModify),
    /// `REG_POLL`.
    RegPoll(SeqRegPoll),
    /// `DELAY_US`.
    DelayUs(SeqDelayUs),
    /// `REG_STORE` (its index checked at decode time).
    RegStore(SeqRegStore),
    /// `CORE_RESET`: reset the GSP falcon (`kflcnReset`, `kflcnDisableCtxReq`).
    CoreReset,
    /// `CORE_START`: start its CPU (`kflcnStartCpu`).
    CoreStart,
    /// `CORE_WAIT_FOR_HALT`: wait for it to halt (`kflcnWaitForHalt`).
    CoreWaitForHalt,
    /// `CORE_RESUME`: resume GSP-RM (Turing..Ada: reset, boot arguments, SEC2 reload;
    /// `kgspExecuteSequencerCommand_TU102`).
    CoreResume,
}

impl SeqCommand {
    /// The opcode.
    pub const fn opcode(&self) -> SeqOpcode {
        match self {
            SeqCommand::RegWrite(_) => SeqOpcode::RegWrite,
            SeqCommand::RegModify(_) => SeqOpcode::RegModify,
            SeqCommand::RegPoll(_) => SeqOpcode::RegPoll,
            SeqCommand::DelayUs(_) => SeqOpcode::DelayUs,
            SeqCommand::RegStore(_) => SeqOpcode::RegStore,
            SeqCommand::CoreReset => SeqOpcode::CoreReset,
            SeqCommand::CoreStart => SeqOpcode::CoreStart,
            SeqCommand::CoreWaitForHalt => SeqOpcode::CoreWaitForHalt,
            SeqCommand::CoreResume => SeqOpcode::CoreResume,
        }
    }

    /// Appends the command's words (opcode, then arguments) to `out`: how GSP-RM's
    /// `gspAppendToSequencerBuffer` writes it (for the model and tests).
    pub fn encode(&self, out: &mut Vec<u32>) {
        out.push(self.opcode() as u32);
        let args: &[u8] = match self {
            SeqCommand::RegWrite(p) => p.as_bytes(),
            SeqCommand::RegModify(p) => p.as_bytes(),
            SeqCommand::RegPoll(p) => p.as_bytes(),
            SeqCommand::DelayUs(p) => p.as_bytes(),
            SeqCommand::RegStore(p) => p.as_bytes(),
            _ => &[],
        };
        out.extend(args.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])));
    }
}

/// Why a sequencer buffer was refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequencerError {
    /// Shorter than `rpc_run_cpu_sequencer_v17_00`.
    Truncated { len: usize },
    /// `bufferSizeDWord` is 0 (RM: `NV_ERR_INVALID_STATE`).
    EmptyBuffer,
    /// `cmdIndex` not below `bufferSizeDWord` (RM: `NV_ERR_INVALID_DATA`), or beyond the words
    /// the message carries.
    BadCommandIndex { cmd_index: u32, buffer_size_dword: u32, words_present: usize },
    /// An opcode RM does not know (the arch HAL would answer `NV_ERR_INVALID_ARGUMENT`).
    UnknownOpcode { opcode: u32, at: usize },
    /// A command's arguments run past `cmdIndex` (RM: `NV_ERR_INVALID_DATA`).
    ArgumentsPastEnd { opcode: SeqOpcode, at: usize },
    /// `REG_STORE` to an index at or beyond `GSP_SEQ_BUF_REG_SAVE_SIZE`.
    SaveIndex { index: u32, at: usize },
    /// `REG_POLL` did not see the value in time.
    PollTimeout { addr: u32, mask: u32, val: u32, last: u32, error_code: u32, after_ms: u64 },
    /// A core operation failed.
    Core { opcode: SeqOpcode, error: CoreOpError },
}

impl fmt::Display for SequencerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SequencerError::Truncated { len } => {
                write!(f, "{len} bytes is shorter than rpc_run_cpu_sequencer_v17_00")
            }
            SequencerError::EmptyBuffer => f.write_str("bufferSizeDWord is 0"),
            SequencerError::BadCommandIndex { cmd_index, buffer_size_dword, words_present } => write!(
                f,
                "cmdIndex {cmd_index} with bufferSizeDWord {buffer_size_dword} and {words_present} command words present"
            ),
            SequencerError::UnknownOpcode { opcode, at } => {
                write!(f, "unknown opcode {opcode} at word {at}")
            }
            SequencerError::ArgumentsPastEnd { opcode, at } => {
                write!(f, "{} at word {at}: arguments run past cmdIndex", opcode.nvidia_name())
            }
            SequencerError::SaveIndex { index, at } => write!(
                f,
                "GSP_SEQ_BUF_OPCODE_REG_STORE at word {at}: index {index} is not below GSP_SEQ_BUF_REG_SAVE_SIZE"
            ),
            SequencerError::PollTimeout { addr, mask, val, last, error_code, after_ms } => write!(
                f,
                "timeout waiting for register {addr:#x} & {mask:#x} == {val:#x} after {after_ms} ms (last {last:#x}, GSP error code {error_code})"
            ),
            SequencerError::Core { opcode, error } => write!(f, "{}: {error}", opcode.nvidia_name()),
        }
    }
}

/// Why a core operation of the sequencer failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreOpError {
    /// A bounded wait ran out.
    Timeout(Timeout),
    /// The core did not do what was asked.
    Failed(&'static str),
    /// This core cannot do the operation (e.g. `CORE_RESUME` where no resume path exists).
    Unsupported,
}

impl fmt::Display for CoreOpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreOpError::Timeout(t) => t.fmt(f),
            CoreOpError::Failed(why) => f.write_str(why),
            CoreOpError::Unsupported => f.write_str("not supported by this core"),
        }
    }
}

/// The GSP core operations a sequencer may ask for; the boot implements them over its falcon.
pub trait SequencerCore {
    /// `CORE_RESET`: reset the GSP falcon and disable context requests.
    fn reset(&mut self) -> Result<(), CoreOpError>;
    /// `CORE_START`: start its CPU.
    fn start(&mut self) -> Result<(), CoreOpError>;
    /// `CORE_WAIT_FOR_HALT`: wait (bounded) until it halts.
    fn wait_for_halt(&mut self) -> Result<(), CoreOpError>;
    /// `CORE_RESUME`: bring GSP-RM back (Turing..Ada: secure reset, boot arguments, SEC2
    /// reload, check that the RISC-V core runs).
    fn resume(&mut self) -> Result<(), CoreOpError>;
}

/// A `GSP_RUN_CPU_SEQUENCER` message, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SequencerBuffer {
    /// `bufferSizeDWord`.
    pub buffer_size_dword: u32,
    /// `regSaveArea`: as sent, then as `REG_STORE`s left it after [`run_sequencer`].
    pub reg_save_area: [u32; GSP_SEQ_BUF_REG_SAVE_SIZE],
    /// The commands, in order.
    pub commands: Vec<SeqCommand>,
}

impl SequencerBuffer {
    /// Decodes the parameters of `GSP_RUN_CPU_SEQUENCER`, checking what
    /// `kgspExecuteSequencerBuffer` checks before it executes anything, and more: the command
    /// words must be in the message, every opcode known, every `REG_STORE` index in range.
    pub fn decode(payload: &[u8]) -> Result<Self, SequencerError> {
        let header: RpcRunCpuSequencerV17_00 =
            read_prefix(payload).ok_or(SequencerError::Truncated { len: payload.len() })?;
        if header.buffer_size_dword == 0 {
            return Err(SequencerError::EmptyBuffer);
        }
        let words: Vec<u32> = payload[size_of::<RpcRunCpuSequencerV17_00>()..]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let end = header.cmd_index as usize;
        if header.cmd_index >= header.buffer_size_dword || end > words.len() {
            return Err(SequencerError::BadCommandIndex {
                cmd_index: header.cmd_index,
                buffer_size_dword: header.buffer_size_dword,
                words_present: words.len(),
            });
        }
        let words = &words[..end];
        let mut commands = Vec::new();
        let mut at = 0;
        while at < end {
            let raw = words[at];
            let opcode = SeqOpcode::from_raw(raw).ok_or(SequencerError::UnknownOpcode { opcode: raw, at })?;
            let args_at = at + 1;
            let n = opcode.payload_dwords();
            let args = words.get(args_at..args_at + n).ok_or(SequencerError::ArgumentsPastEnd { opcode, at })?;
            let bytes: Vec<u8> = args.iter().flat_map(|w| w.to_le_bytes()).collect();
            let command = match opcode {
                SeqOpcode::RegWrite => read_prefix(&bytes).map(SeqCommand::RegWrite),
                SeqOpcode::RegModify => read_prefix(&bytes).map(SeqCommand::RegModify),
                SeqOpcode::RegPoll => read_prefix(&bytes).map(SeqCommand::RegPoll),
                SeqOpcode::DelayUs => read_prefix(&bytes).map(SeqCommand::DelayUs),
                SeqOpcode::RegStore => read_prefix::<SeqRegStore>(&bytes).map(SeqCommand::RegStore),
                SeqOpcode::CoreReset => Some(SeqCommand::CoreReset),
                SeqOpcode::CoreStart => Some(SeqCommand::CoreStart),
                SeqOpcode::CoreWaitForHalt => Some(SeqCommand::CoreWaitForHalt),
                SeqOpcode::CoreResume => Some(SeqCommand::CoreResume),
            }
            .ok_or(SequencerError::ArgumentsPastEnd { opcode, at })?;
            if let SeqCommand::RegStore(s) = command {
                if s.index as usize >= GSP_SEQ_BUF_REG_SAVE_SIZE {
                    return Err(SequencerError::SaveIndex { index: s.index, at });
                }
            }
            commands.push(command);
            at = args_at + n;
        }
        Ok(SequencerBuffer {
            buffer_size_dword: header.buffer_size_dword,
            reg_save_area: header.reg_save_area,
            commands,
        })
    }

    /// The parameters of a `GSP_RUN_CPU_SEQUENCER` carrying `commands` (what GSP-RM sends; for
    /// the model and tests).
    pub fn encode(buffer_size_dword: u32, commands: &[SeqCommand]) -> Vec<u8> {
        let mut words = Vec::new();
        for c in commands {
            c.encode(&mut words);
        }
        let header = RpcRunCpuSequencerV17_00 {
            buffer_size_dword,
            cmd_index: words.len() as u32,
            reg_save_area: [0; GSP_SEQ_BUF_REG_SAVE_SIZE],
        };
        let mut out = Vec::from(header.as_bytes());
        out.extend(words.iter().flat_map(|w| w.to_le_bytes()));
        out
    }
}

/// Executes a decoded sequencer buffer, in order, as `kgspExecuteSequencerBuffer` does:
/// register commands over `io`, waits bounded by `clock`, core commands through `core`.
/// `REG_STORE`s land in `buffer.reg_save_area`.
pub fn run_sequencer<R, C, K>(
    buffer: &mut SequencerBuffer,
    io: &R,
    clock: &C,
    core: &mut K,
) -> Result<(), SequencerError>
where
    R: RegisterIo + ?Sized,
    C: Clock + ?Sized,
    K: SequencerCore + ?Sized,
{
    for command in buffer.commands.iter() {
        match *command {
            SeqCommand::RegWrite(w) => io.write32(w.addr, w.val),
            SeqCommand::RegModify(m) => {
                let value = (io.read32(m.addr) & !m.mask) | m.val;
                io.write32(m.addr, value);
            }
            SeqCommand::RegPoll(p) => {
                let timeout_ms = if p.timeout == 0 { RM_DEFAULT_TIMEOUT_MS } else { (p.timeout as u64).div_ceil(1000) };
                let mut last = 0;
                wait_for(clock, timeout_ms, "a register value a GSP sequencer REG_POLL asked for", || {
                    last = io.read32(p.addr);
                    (last & p.mask == p.val).then_some(())
                })
                .map_err(|t| SequencerError::PollTimeout {
                    addr: p.addr,
                    mask: p.mask,
                    val: p.val,
                    last,
                    error_code: p.error,
                    after_ms: t.after_ms,
                })?;
            }
            SeqCommand::DelayUs(d) => {
                let until = clock.now_ns().saturating_add(d.val as u64 * 1000);
                // Bounded one millisecond beyond the delay itself: it ends by the clock.
                let _ = wait_for(clock, (d.val as u64).div_ceil(1000) + 1, "a GSP sequencer DELAY_US", || {
                    (clock.now_ns() >= until).then_some(())
                });
            }
            SeqCommand::RegStore(s) => {
                let value = io.read32(s.addr);
                if let Some(slot) = buffer.reg_save_area.get_mut(s.index as usize) {
                    *slot = value;
                }
            }
            SeqCommand::CoreReset => {
                core.reset().map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreReset, error })?
            }
            SeqCommand::CoreStart => {
                core.start().map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreStart, error })?
            }
            SeqCommand::CoreWaitForHalt => core
                .wait_for_halt()
                .map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreWaitForHalt, error })?,
            SeqCommand::CoreResume => {
                core.resume().map_err(|error| SequencerError::Core { opcode: SeqOpcode::CoreResume, error })?
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gsp::cmdq::fake::FakeClock;
    use alloc::string::ToString;
    use alloc::vec;
    use core::cell::{Cell, RefCell};

    fn all_commands() -> Vec<SeqCommand> {
        vec![
            SeqCommand::RegWrite(SeqRegWrite { addr: 0x10, val: 0xaa }),
            SeqCommand::RegModify(SeqRegModify { addr: 0x14, mask: 0xf0, val: 0x50 }),
            SeqCommand::RegPoll(SeqRegPoll { addr: 0x18, mask: 0x1, val: 0x1, timeout: 2000, error: 1 }),
            SeqCommand::DelayUs(SeqDelayUs { val: 250 }),
            SeqCommand::RegStore(SeqRegStore { addr: 0x10, index: 7 }),
            SeqCommand::CoreReset,
            SeqCommand::CoreStart,
            SeqCommand::CoreWaitForHalt,
            SeqCommand::CoreResume,
        ]
    }

    #[test]
    fn sequencer_buffers_decode_every_opcode() {
        let commands = all_commands();
        let payload = SequencerBuffer::encode(0x100, &commands);
        // 1 + 2, 1 + 3, 1 + 5, 1 + 1, 1 + 2, then four bare opcodes: 22 words.
        assert_eq!(payload.len(), 40 + 22 * 4);
        let decoded = SequencerBuffer::decode(&payload).unwrap();
        assert_eq!(decoded.commands, commands);
        assert_eq!(decoded.buffer_size_dword, 0x100);
        for (op, c) in SeqOpcode::ALL.iter().zip(&commands) {
            assert_eq!(c.opcode(), *op);
            assert_eq!(SeqOpcode::from_raw(*op as u32), Some(*op));
        }
        assert_eq!(SeqOpcode::from_raw(9), None);
    }

    #[test]
    fn malformed_sequencer_buffers_are_refused() {
        let ok = SequencerBuffer::encode(0x100, &all_commands());
        assert_eq!(SequencerBuffer::decode(&ok[..39]), Err(SequencerError::Truncated { len: 39 }));
        let mut empty = ok.clone();
        empty[0..4].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(SequencerBuffer::decode(&empty), Err(SequencerError::EmptyBuffer));
        let mut small = ok.clone();
        small[0..4].copy_from_slice(&22u32.to_le_bytes());
        assert!(matches!(SequencerBuffer::decode(&small), Err(SequencerError::BadCommandIndex { cmd_index: 22, .. })));
        assert!(matches!(SequencerBuffer::decode(&ok[..ok.len() - 4]), Err(SequencerError::BadCommandIndex { .. })));
        let mut unknown = ok.clone();
        unknown[40..44].copy_from_slice(&99u32.to_le_bytes());
        assert_eq!(SequencerBuffer::decode(&unknown), Err(SequencerError::UnknownOpcode { opcode: 99, at: 0 }));
        let cut = SequencerBuffer::encode(0x100, &[SeqCommand::RegPoll(SeqRegPoll::default())]);
        let mut cut = cut;
        cut[4..8].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(
            SequencerBuffer::decode(&cut),
            Err(SequencerError::ArgumentsPastEnd { opcode: SeqOpcode::RegPoll, at: 0 })
        );
        let store = SequencerBuffer::encode(0x100, &[SeqCommand::RegStore(SeqRegStore { addr: 0, index: 8 })]);
        assert_eq!(SequencerBuffer::decode(&store), Err(SequencerError::SaveIndex { index: 8, at: 0 }));
    }

    struct Regs {
        values: RefCell<alloc::collections::BTreeMap<u32, u32>>,
        writes: RefCell<Vec<(u32, u32)>>,
        /// Reads of this address before it shows bit 0.
        poll_after: Cell<u32>,
    }

    impl RegisterIo for Regs {
        fn read32(&self, offset: u32) -> u32 {
            if offset == 0x18 {
                let left = self.poll_after.get();
                self.poll_after.set(left.saturating_sub(1));
                return if left == 0 { 1 } else { 0 };
            }
            *self.values.borrow().get(&offset).unwrap_or(&0)
        }
        fn write32(&self, offset: u32, value: u32) {
            self.writes.borrow_mut().push((offset, value));
            self.values.borrow_mut().insert(offset, value);
        }
    }

    #[derive(Default)]
    struct Core(Vec<&'static str>, bool);

    impl SequencerCore for Core {
        fn reset(&mut self) -> Result<(), CoreOpError> {
            self.0.push("reset");
            Ok(())
        }
        fn start(&mut self) -> Result<(), CoreOpError> {
            self.0.push("start");
            Ok(())
        }
        fn wait_for_halt(&mut self) -> Result<(), CoreOpError> {
            self.0.push("halt");
            Ok(())
        }
        fn resume(&mut self) -> Result<(), CoreOpError> {
            self.0.push("resume");
            if self.1 {
                Err(CoreOpError::Failed("RISC-V core not running"))
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn the_sequencer_executes_in_order() {
        let regs = Regs {
            values: RefCell::new([(0x14, 0xff0f)].into_iter().collect()),
            writes: RefCell::default(),
            poll_after: Cell::new(3),
        };
        let clock = FakeClock::new(None);
        let mut core = Core::default();
        let mut buffer = SequencerBuffer::decode(&SequencerBuffer::encode(0x100, &all_commands())).unwrap();
        run_sequencer(&mut buffer, &regs, &clock, &mut core).unwrap();
        assert_eq!(*regs.writes.borrow(), vec![(0x10, 0xaa), (0x14, 0xff5f)]);
        assert_eq!(buffer.reg_save_area[7], 0xaa);
        assert_eq!(core.0, vec!["reset", "start", "halt", "resume"]);
        assert!(clock.now.get() >= 250_000 + 300_000, "polled three times and delayed 250 us");

        let mut failing = Core(Vec::new(), true);
        let err = run_sequencer(&mut buffer, &regs, &clock, &mut failing).unwrap_err();
        assert_eq!(
            err,
            SequencerError::Core {
                opcode: SeqOpcode::CoreResume,
                error: CoreOpError::Failed("RISC-V core not running")
            }
        );
        assert_eq!(err.to_string(), "GSP_SEQ_BUF_OPCODE_CORE_RESUME: RISC-V core not running");
    }

    #[test]
    fn a_sequencer_poll_times_out_with_its_error_code() {
        let regs = Regs { values: RefCell::default(), writes: RefCell::default(), poll_after: Cell::new(u32::MAX) };
        let clock = FakeClock::new(None);
        let mut buffer = SequencerBuffer::decode(&SequencerBuffer::encode(
            0x100,
            &[SeqCommand::RegPoll(SeqRegPoll { addr: 0x18, mask: 1, val: 1, timeout: 1500, error: 3 })],
        ))
        .unwrap();
        let err = run_sequencer(&mut buffer, &regs, &clock, &mut Core::default()).unwrap_err();
        assert_eq!(
            err,
            SequencerError::PollTimeout { addr: 0x18, mask: 1, val: 1, last: 0, error_code: 3, after_ms: 2 }
        );
        assert!(err.to_string().contains("GSP error code 3"));
    }
}
