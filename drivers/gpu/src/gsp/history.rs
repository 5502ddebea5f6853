//! The RPC history: the last [`RPC_HISTORY_DEPTH`] messages exchanged with GSP-RM (commands sent,
//! replies and events received), kept so that every RPC failure can say what led up to it.
//!
//! RM keeps the same kind of ring (`RpcHistoryEntry`, `RPC_HISTORY_DEPTH` in
//! `src/nvidia/kernel/inc/objrpc.h`; filled by `_kgspAddRpcHistoryEntry` and
//! `_kgspCompleteRpcHistoryEntry` in `kernel_gsp.c`, printed on Xid 119). RM keeps commands and
//! events in two rings of 8; this one keeps both in one ring of twice that, so their order is
//! visible. [`HistorySnapshot`] is a copy that an error carries and prints.

use core::fmt;

use super::fw::rpc::{RpcEvent, RpcFunction, NV_VGPU_MSG_EVENT_FIRST_EVENT};
use super::status::NvStatus;

/// Entries kept: RM's `RPC_HISTORY_DEPTH` (8) for commands plus 8 for events.
pub const RPC_HISTORY_DEPTH: usize = 16;

/// An RPC function or event number, printed under NVIDIA's name when it is one we declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RpcName(pub u32);

impl RpcName {
    /// NVIDIA's enumerator name (`NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC`), if declared.
    pub const fn nvidia_name(self) -> Option<&'static str> {
        if self.0 > NV_VGPU_MSG_EVENT_FIRST_EVENT {
            match RpcEvent::from_raw(self.0) {
                Some(e) => Some(e.nvidia_name()),
                None => None,
            }
        } else {
            match RpcFunction::from_raw(self.0) {
                Some(f) => Some(f.nvidia_name()),
                None => None,
            }
        }
    }
}

impl From<RpcFunction> for RpcName {
    fn from(f: RpcFunction) -> Self {
        RpcName(f.raw())
    }
}

impl From<RpcEvent> for RpcName {
    fn from(e: RpcEvent) -> Self {
        RpcName(e.raw())
    }
}

impl fmt::Display for RpcName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.nvidia_name() {
            Some(name) => f.write_str(name),
            None if self.0 > NV_VGPU_MSG_EVENT_FIRST_EVENT => write!(f, "RPC event {:#x}", self.0),
            None => write!(f, "RPC function {}", self.0),
        }
    }
}

/// Which way a history entry's message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// A command the driver sent (command queue).
    Command,
    /// A message GSP-RM sent that was not the reply being waited for: an event, or a reply to an
    /// RPC nobody waits for (status queue).
    Incoming,
}

/// What became of a history entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpcOutcome {
    /// Sent, waiting for the reply.
    Pending,
    /// Sent without waiting for a reply (`GSP_SET_SYSTEM_INFO`, `SET_REGISTRY`: RM's
    /// `_issueRpcAsync`).
    Posted,
    /// The reply arrived with this `rpc_result`.
    Replied(NvStatus),
    /// No reply within the timeout.
    TimedOut,
    /// The exchange failed before a reply could be read (queue or record error).
    Failed,
    /// A message received from GSP-RM (event or unawaited reply), with its `rpc_result`.
    Received(NvStatus),
}

/// One message in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpcHistoryEntry {
    /// Command or incoming message.
    pub direction: Direction,
    /// The RPC function or event number.
    pub function: RpcName,
    /// The queue element sequence number (`seqNum`) of the message's first record.
    pub seq_num: u32,
    /// Queue records the message took (more than one with continuation records).
    pub records: u32,
    /// Two words that say which call this was (RM's `RpcHistoryEntry.data`): for
    /// `GSP_RM_ALLOC` the class and object handle, for `GSP_RM_CONTROL` the command and object.
    pub data: [u32; 2],
    /// When it was sent or received, in `Clock` nanoseconds.
    pub start_ns: u64,
    /// When the reply arrived or the exchange ended.
    pub end_ns: Option<u64>,
    /// What became of it.
    pub outcome: RpcOutcome,
}

/// A copy of the history, oldest entry first, that errors carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistorySnapshot {
    entries: [Option<RpcHistoryEntry>; RPC_HISTORY_DEPTH],
    /// Time of the snapshot, to print ages.
    taken_ns: u64,
}

impl HistorySnapshot {
    /// The entries, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &RpcHistoryEntry> {
        self.entries.iter().flatten()
    }

    /// When the snapshot was taken, in `Clock` nanoseconds.
    pub const fn taken_ns(&self) -> u64 {
        self.taken_ns
    }

    /// The newest entry.
    pub fn last(&self) -> Option<&RpcHistoryEntry> {
        self.entries.iter().rev().flatten().next()
    }
}

impl fmt::Display for HistorySnapshot {
    /// The entries on one line (an error that carries the history stays one log line), oldest
    /// first, separated by ` | `: direction, name, sequence number, records, data words, how
    /// long ago it started, how long it took, outcome.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut any = false;
        for e in self.entries() {
            if any {
                f.write_str(" | ")?;
            }
            any = true;
            let dir = match e.direction {
                Direction::Command => "->",
                Direction::Incoming => "<-",
            };
            let ago_us = self.taken_ns.saturating_sub(e.start_ns) / 1000;
            write!(
                f,
                "{dir} {} seq {} ({} record{}) data {:#x} {:#x}, {ago_us} us ago, ",
                e.function,
                e.seq_num,
                e.records,
                if e.records == 1 { "" } else { "s" },
                e.data[0],
                e.data[1]
            )?;
            match e.end_ns {
                Some(end) => write!(f, "took {} us, ", end.saturating_sub(e.start_ns) / 1000)?,
                None => f.write_str("unfinished, ")?,
            }
            match e.outcome {
                RpcOutcome::Pending => f.write_str("pending")?,
                RpcOutcome::Posted => f.write_str("posted (no reply awaited)")?,
                RpcOutcome::Replied(s) => write!(f, "replied {s}")?,
                RpcOutcome::TimedOut => f.write_str("timed out")?,
                RpcOutcome::Failed => f.write_str("failed")?,
                RpcOutcome::Received(s) => write!(f, "received, rpc_result {s}")?,
            }
        }
        if !any {
            f.write_str("(no RPCs yet)")?;
        }
        Ok(())
    }
}

/// Index of an entry in the ring, valid until [`RPC_HISTORY_DEPTH`] newer entries were added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryId {
    slot: usize,
    generation: u64,
}

/// The ring of the last [`RPC_HISTORY_DEPTH`] messages.
#[derive(Clone, Debug)]
pub struct RpcHistory {
    slots: [Option<(u64, RpcHistoryEntry)>; RPC_HISTORY_DEPTH],
    /// Entries ever added; the next one goes to `added % RPC_HISTORY_DEPTH`.
    added: u64,
}

impl Default for RpcHistory {
    fn default() -> Self {
        Self::new()
    }
}

impl RpcHistory {
    /// An empty history.
    pub const fn new() -> Self {
        Self { slots: [None; RPC_HISTORY_DEPTH], added: 0 }
    }

    /// Adds an entry, evicting the oldest when full.
    pub fn push(&mut self, entry: RpcHistoryEntry) -> EntryId {
        let slot = (self.added % RPC_HISTORY_DEPTH as u64) as usize;
        let generation = self.added;
        self.slots[slot] = Some((generation, entry));
        self.added += 1;
        EntryId { slot, generation }
    }

    /// The entry `id`, if it has not been evicted.
    pub fn get_mut(&mut self, id: EntryId) -> Option<&mut RpcHistoryEntry> {
        match self.slots.get_mut(id.slot) {
            Some(Some((generation, entry))) if *generation == id.generation => Some(entry),
            _ => None,
        }
    }

    /// Ends entry `id` at `now_ns` with `outcome` (nothing if it was evicted meanwhile).
    pub fn complete(&mut self, id: EntryId, now_ns: u64, outcome: RpcOutcome) {
        if let Some(entry) = self.get_mut(id) {
            entry.end_ns = Some(now_ns);
            entry.outcome = outcome;
        }
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &RpcHistoryEntry> {
        let start =
            if self.added > RPC_HISTORY_DEPTH as u64 { (self.added % RPC_HISTORY_DEPTH as u64) as usize } else { 0 };
        (0..RPC_HISTORY_DEPTH).filter_map(move |i| self.slots[(start + i) % RPC_HISTORY_DEPTH].as_ref()).map(|(_, e)| e)
    }

    /// A copy for an error to carry, taken at `now_ns`.
    pub fn snapshot(&self, now_ns: u64) -> HistorySnapshot {
        let mut entries = [None; RPC_HISTORY_DEPTH];
        for (slot, e) in entries.iter_mut().zip(self.entries()) {
            *slot = Some(*e);
        }
        HistorySnapshot { entries, taken_ns: now_ns }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn command(function: RpcFunction, seq_num: u32, start_ns: u64) -> RpcHistoryEntry {
        RpcHistoryEntry {
            direction: Direction::Command,
            function: function.into(),
            seq_num,
            records: 1,
            data: [0, 0],
            start_ns,
            end_ns: None,
            outcome: RpcOutcome::Pending,
        }
    }

    #[test]
    fn keeps_the_newest_entries_in_order() {
        let mut history = RpcHistory::new();
        let first = history.push(command(RpcFunction::GspSetSystemInfo, 0, 0));
        for seq in 1..(RPC_HISTORY_DEPTH as u32 + 3) {
            history.push(command(RpcFunction::GspRmControl, seq, seq as u64 * 1000));
        }
        assert!(history.get_mut(first).is_none(), "evicted");
        let seqs: alloc::vec::Vec<u32> = history.entries().map(|e| e.seq_num).collect();
        assert_eq!(seqs.len(), RPC_HISTORY_DEPTH);
        assert_eq!(seqs[0], 3);
        assert_eq!(*seqs.last().unwrap(), RPC_HISTORY_DEPTH as u32 + 2);
        assert!(seqs.windows(2).all(|w| w[0] + 1 == w[1]));
    }

    #[test]
    fn snapshot_prints_names_and_outcomes() {
        let mut history = RpcHistory::new();
        assert!(history.snapshot(0).to_string().contains("no RPCs yet"));
        let id = history.push(command(RpcFunction::GspRmAlloc, 7, 1_000_000));
        history.complete(id, 1_250_000, RpcOutcome::Replied(NvStatus::NV_ERR_INVALID_CLASS));
        history.push(RpcHistoryEntry {
            direction: Direction::Incoming,
            function: RpcEvent::OsErrorLog.into(),
            outcome: RpcOutcome::Received(NvStatus::NV_OK),
            ..command(RpcFunction::Nop, 3, 2_000_000)
        });
        history.push(command(RpcFunction::GspRmControl, 8, 3_000_000));
        let text = history.snapshot(4_000_000).to_string();
        assert!(text.contains("-> NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC seq 7 (1 record)"), "{text}");
        assert!(text.contains("took 250 us, replied NV_ERR_INVALID_CLASS"), "{text}");
        assert!(text.contains("<- NV_VGPU_MSG_EVENT_OS_ERROR_LOG seq 3"), "{text}");
        assert!(
            text.contains(
                "NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL seq 8 (1 record) data 0x0 0x0, 1000 us ago, unfinished, pending"
            ),
            "{text}"
        );
        assert!(!text.contains('\n'), "one line: {text}");
        assert!(text.contains("replied NV_ERR_INVALID_CLASS (0x00000022: Given class-id not valid) | <- NV_VGPU_MSG_EVENT_OS_ERROR_LOG"), "{text}");
        assert_eq!(RpcName(0x1fff).to_string(), "RPC event 0x1fff");
        assert_eq!(RpcName(150).to_string(), "RPC function 150");
    }
}
