//! The replayable fault buffer protocol (`uvm_gpu_replayable_faults.c`,
//! `uvm_volta_fault_buffer.c`, 535.261.03), over two small traits so that the kernel's BAR0
//! and DMA memory and the GPU model can both sit under it.
//!
//! Hardware writes entries and advances PUT; software reads entries and advances GET
//! (`NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_{GET,PUT}(1)`, `dev_vm.h`). Entries may land out
//! of order, so each entry's own VALID bit says whether it is ready; software clears it after
//! reading. GET goes back to the hardware once per batch, and only when it moved.
//!
//! On overflow (a fault arrived with the buffer full) the hardware drops faults until software
//! clears the condition: GET is written first, then a second write sets OVERFLOW and
//! GETPTR_CORRUPTED (write-one-to-clear). Two writes, because one could collide with an arriving
//! fault and re-assert the overflow at once.

use alloc::vec::Vec;
use core::fmt;

use nvgpu::hw::vm::{
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET as GetReg, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT as PutReg,
};

use super::batch::DEFAULT_BATCH_SIZE;
use super::entry::{is_valid, is_valid_words, FaultEntry, FaultEntryError, RawFaultEntry};
use nvgpu::hw::fault::packet_words;

/// The buffer's memory: `max_faults` entries of 32 bytes.
pub trait FaultBufferMemory {
    /// Reads entry `index` (`index < max_faults`; the protocol never asks for more).
    fn read_entry(&self, index: u32) -> RawFaultEntry;
    /// Clears the VALID bit of entry `index`, telling hardware the slot is free to rewrite.
    fn clear_valid(&mut self, index: u32);
}

/// The replayable buffer's GET and PUT registers, as raw 32-bit values.
pub trait FaultBufferRegisters {
    /// Reads `..._FAULT_BUFFER_PUT(1)`.
    fn read_put(&self) -> u32;
    /// Reads `..._FAULT_BUFFER_GET(1)`.
    fn read_get(&self) -> u32;
    /// Writes `..._FAULT_BUFFER_GET(1)`.
    fn write_get(&mut self, raw: u32);
}

/// How [`ReplayableFaultBuffer::flush`] finds the end of what it drops
/// (`uvm_gpu_buffer_flush_mode_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlushMode {
    /// Up to the PUT read last; cheap, leaves faults that arrived since.
    CachedPut,
    /// Read PUT first and drop up to it (worth it when many duplicates are expected).
    UpdatePut,
}

/// Tuning of the fetch loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchConfig {
    /// Polls of an entry's VALID bit before a fetch that has nothing yet gives up (and before
    /// a flush gives up on an entry below PUT).
    pub spin_limit: u32,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig { spin_limit: 1 << 20 }
    }
}

/// What went wrong with the buffer itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultBufferError {
    /// The buffer has no entries.
    Empty,
    /// The buffer is larger than GET/PUT `PTR` can index.
    TooLarge { max_faults: u32 },
    /// Entry `index` lies below PUT but its VALID bit stayed clear for `spins` polls.
    EntryNeverValid { index: u32, put: u32, spins: u32 },
    /// PUT's `PTR` reads beyond the buffer.
    PutOutOfRange { put: u32, max_faults: u32 },
    /// GET's `PTR` (read at start) is beyond the buffer.
    GetOutOfRange { get: u32, max_faults: u32 },
}

impl fmt::Display for FaultBufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "replayable fault buffer has no entries"),
            Self::TooLarge { max_faults } => {
                write!(f, "replayable fault buffer of {max_faults} entries exceeds GET/PUT PTR")
            }
            Self::EntryNeverValid { index, put, spins } => {
                write!(f, "timeout waiting for VALID of replayable fault entry {index} (PUT {put}) after {spins} polls")
            }
            Self::PutOutOfRange { put, max_faults } => {
                write!(f, "replayable fault buffer PUT {put} is beyond its {max_faults} entries")
            }
            Self::GetOutOfRange { get, max_faults } => {
                write!(f, "replayable fault buffer GET {get} is beyond its {max_faults} entries")
            }
        }
    }
}

/// An entry that was valid but could not be decoded (it is consumed and skipped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MalformedEntry {
    pub index: u32,
    pub error: FaultEntryError,
}

/// Counters kept across batches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultBufferStats {
    /// Entries decoded and handed out.
    pub faults_fetched: u64,
    /// Fetches that consumed at least one entry.
    pub batches: u64,
    /// Duplicates found by coalescing and servicing (added by [`ReplayableFaultBuffer::record_duplicates`]).
    pub duplicates: u64,
    /// Times PUT or GET reported OVERFLOW.
    pub overflows: u64,
    /// Times PUT or GET reported GETPTR_CORRUPTED.
    pub getptr_corrupted: u64,
    /// Valid entries that did not decode.
    pub malformed: u64,
    /// Entries dropped by flushes.
    pub flushed: u64,
}

/// The entries of one fetch, in buffer order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FetchedFaults {
    pub entries: Vec<FaultEntry>,
    pub malformed: Vec<MalformedEntry>,
}

impl FetchedFaults {
    /// Entries consumed from the buffer (decoded or not).
    pub fn consumed(&self) -> usize {
        self.entries.len() + self.malformed.len()
    }
}

/// The replayable fault buffer, with UVM's cached GET and PUT.
#[derive(Debug)]
pub struct ReplayableFaultBuffer<M, R> {
    memory: M,
    registers: R,
    max_faults: u32,
    cached_get: u32,
    cached_put: u32,
    /// OVERFLOW or GETPTR_CORRUPTED was seen and not yet cleared.
    clear_pending: bool,
    config: FetchConfig,
    stats: FaultBufferStats,
}

const PTR_LIMIT: u32 = 1 << GetReg::PTR.bits.width();

impl<M: FaultBufferMemory, R: FaultBufferRegisters> ReplayableFaultBuffer<M, R> {
    /// Takes over a buffer of `max_faults` entries (buffer size / 32), starting from the
    /// hardware's GET.
    pub fn new(memory: M, registers: R, max_faults: u32, config: FetchConfig) -> Result<Self, FaultBufferError> {
        if max_faults == 0 {
            return Err(FaultBufferError::Empty);
        }
        if max_faults > PTR_LIMIT {
            return Err(FaultBufferError::TooLarge { max_faults });
        }
        let get_reg = GetReg(registers.read_get());
        let get = get_reg.ptr();
        if get >= max_faults {
            return Err(FaultBufferError::GetOutOfRange { get, max_faults });
        }
        let mut buffer = ReplayableFaultBuffer {
            memory,
            registers,
            max_faults,
            cached_get: get,
            cached_put: get,
            clear_pending: false,
            config,
            stats: FaultBufferStats::default(),
        };
        buffer.note_conditions(get_reg.overflow(), get_reg.getptr_corrupted());
        Ok(buffer)
    }

    pub fn max_faults(&self) -> u32 {
        self.max_faults
    }

    /// The batch size UVM uses for this buffer: 256, capped at the buffer's size.
    pub fn default_batch_size(&self) -> usize {
        DEFAULT_BATCH_SIZE.min(self.max_faults as usize)
    }

    pub fn cached_get(&self) -> u32 {
        self.cached_get
    }

    pub fn cached_put(&self) -> u32 {
        self.cached_put
    }

    pub fn stats(&self) -> &FaultBufferStats {
        &self.stats
    }

    /// Adds duplicates the batch found to the counters.
    pub fn record_duplicates(&mut self, duplicates: u64) {
        self.stats.duplicates += duplicates;
    }

    pub fn memory(&self) -> &M {
        &self.memory
    }

    pub fn memory_mut(&mut self) -> &mut M {
        &mut self.memory
    }

    pub fn registers(&self) -> &R {
        &self.registers
    }

    pub fn registers_mut(&mut self) -> &mut R {
        &mut self.registers
    }

    /// Whether an overflow or corrupted GET was seen and awaits its clearing write.
    pub fn overflow_pending(&self) -> bool {
        self.clear_pending
    }

    fn next(&self, index: u32) -> u32 {
        if index + 1 == self.max_faults {
            0
        } else {
            index + 1
        }
    }

    fn note_conditions(&mut self, overflow: bool, corrupted: bool) {
        if overflow {
            self.stats.overflows += 1;
        }
        if corrupted {
            self.stats.getptr_corrupted += 1;
        }
        self.clear_pending |= overflow || corrupted;
    }

    /// Reads PUT over BAR0 into the cache (with its OVERFLOW and GETPTR_CORRUPTED bits).
    fn update_put(&mut self) -> Result<u32, FaultBufferError> {
        let put = PutReg(self.registers.read_put());
        let ptr = put.ptr();
        if ptr >= self.max_faults {
            return Err(FaultBufferError::PutOutOfRange { put: ptr, max_faults: self.max_faults });
        }
        self.note_conditions(put.overflow(), put.getptr_corrupted());
        self.cached_put = ptr;
        Ok(ptr)
    }

    /// Writes GET if it moved; then, if an overflow or corrupted GET is pending, the second
    /// write that clears them.
    fn write_get(&mut self, get: u32) {
        if get == self.cached_get {
            return;
        }
        self.cached_get = get;
        let value = GetReg::default().with(GetReg::PTR, get);
        self.registers.write_get(value.raw());
        if self.clear_pending {
            let clear = value.with(GetReg::GETPTR_CORRUPTED, true).with(GetReg::OVERFLOW, true);
            self.registers.write_get(clear.raw());
            self.clear_pending = false;
        }
    }

    /// Writes the cached GET again, whether or not it moved: after the bottom half clears the
    /// fault interrupt, this makes the GPU raise it again for entries that arrived meanwhile
    /// (`uvm_hal_turing_enable_replayable_faults` writes GET for that).
    pub fn rewrite_get(&mut self) {
        let value = GetReg::default().with(GetReg::PTR, self.cached_get);
        self.registers.write_get(value.raw());
    }

    /// Clears a pending overflow now, rewriting the current GET first (for a caller that
    /// consumed nothing but wants faults flowing again).
    pub fn clear_overflow(&mut self) {
        if !self.clear_pending {
            return;
        }
        let value = GetReg::default().with(GetReg::PTR, self.cached_get);
        self.registers.write_get(value.raw());
        self.registers.write_get(value.with(GetReg::GETPTR_CORRUPTED, true).with(GetReg::OVERFLOW, true).raw());
        self.clear_pending = false;
    }

    /// Polls entry `index` (first read as `raw`) until VALID, at most `spin_limit` more times.
    fn wait_valid(&self, index: u32, mut raw: RawFaultEntry) -> Result<RawFaultEntry, u32> {
        let limit = self.config.spin_limit;
        let mut spins = 0;
        while !is_valid(&raw) {
            if spins >= limit {
                return Err(spins);
            }
            core::hint::spin_loop();
            spins += 1;
            raw = self.memory.read_entry(index);
        }
        Ok(raw)
    }

    /// Whether faults wait in the buffer (`uvm_gpu_replayable_faults_pending`): entries left
    /// from the last pass, or VALID at the cached GET, and only otherwise a read of PUT.
    pub fn pending(&mut self) -> Result<bool, FaultBufferError> {
        if self.cached_get != self.cached_put {
            return Ok(true);
        }
        if is_valid(&self.memory.read_entry(self.cached_get)) {
            return Ok(true);
        }
        let put = self.update_put()?;
        Ok(put != self.cached_get)
    }

    /// Fetches up to `max` ready entries in buffer order (UVM's `FAULT_FETCH_MODE_BATCH_READY`).
    ///
    /// PUT is read only when GET has caught up with the cached PUT. The fetch stops at the first
    /// entry whose VALID is still clear; if nothing was fetched yet it polls that entry, at most
    /// `spin_limit` times. Each consumed entry has VALID cleared; malformed ones are consumed and
    /// reported, not returned. GET is written once at the end, if it moved.
    pub fn fetch_batch(&mut self, max: usize) -> Result<FetchedFaults, FaultBufferError> {
        let mut get = self.cached_get;
        if get == self.cached_put {
            self.update_put()?;
        }
        let put = self.cached_put;
        let mut fetched = FetchedFaults::default();
        let waiting = if put >= get { put - get } else { self.max_faults.saturating_sub(get).saturating_add(put) };
        fetched.entries.reserve((waiting as usize).min(max));
        let mut result = Ok(());

        while get != put && fetched.consumed() < max {
            let raw = self.memory.read_entry(get);
            // Read as words once, for VALID and the decode.
            let words = packet_words(&raw);
            let words = if is_valid_words(&words) {
                words
            } else if fetched.consumed() > 0 {
                break;
            } else {
                match self.wait_valid(get, raw) {
                    Ok(raw) => packet_words(&raw),
                    Err(spins) => {
                        result = Err(FaultBufferError::EntryNeverValid { index: get, put, spins });
                        break;
                    }
                }
            };
            match FaultEntry::decode_words(&words) {
                Ok(entry) => fetched.entries.push(entry),
                Err(error) => fetched.malformed.push(MalformedEntry { index: get, error }),
            }
            self.memory.clear_valid(get);
            get = self.next(get);
        }

        self.write_get(get);
        self.stats.faults_fetched += fetched.entries.len() as u64;
        self.stats.malformed += fetched.malformed.len() as u64;
        if fetched.consumed() > 0 {
            self.stats.batches += 1;
        }
        result.map(|()| fetched)
    }

    /// Drops every entry up to PUT (the cached one, or a fresh read with
    /// [`FlushMode::UpdatePut`]): waits for each to be VALID, clears it, then writes GET.
    /// Returns how many were dropped. The caller then pushes the replay.
    pub fn flush(&mut self, mode: FlushMode) -> Result<u32, FaultBufferError> {
        if mode == FlushMode::UpdatePut {
            self.update_put()?;
        }
        let put = self.cached_put;
        let mut get = self.cached_get;
        let mut dropped = 0;
        while get != put {
            if let Err(spins) = self.wait_valid(get, self.memory.read_entry(get)) {
                self.write_get(get);
                self.stats.flushed += u64::from(dropped);
                return Err(FaultBufferError::EntryNeverValid { index: get, put, spins });
            }
            self.memory.clear_valid(get);
            dropped += 1;
            get = self.next(get);
        }
        self.write_get(get);
        self.stats.flushed += u64::from(dropped);
        Ok(dropped)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::fault::entry::tests::packet;
    use crate::fault::entry::FaultAccess;
    use core::cell::{Cell, RefCell};
    use nvgpu::hw::fault::{FaultAccessType, FaultType, NVC369_BUF_ENTRY_FAULT_TYPE, NVC369_BUF_ENTRY_VALID};

    /// Buffer memory whose entries can turn valid after some reads.
    #[derive(Debug)]
    pub(crate) struct Memory {
        pub entries: RefCell<Vec<RawFaultEntry>>,
        /// Entry index -> reads of it before its VALID bit appears.
        pub valid_after: RefCell<Vec<(u32, u32)>>,
        pub reads: Cell<u32>,
        pub cleared: Vec<u32>,
    }

    impl Memory {
        pub(crate) fn new(n: usize) -> Self {
            Memory {
                entries: RefCell::new(alloc::vec![[0; 32]; n]),
                valid_after: RefCell::new(Vec::new()),
                reads: Cell::new(0),
                cleared: Vec::new(),
            }
        }

        pub(crate) fn write(&self, index: u32, va: u64, access: FaultAccessType) {
            self.entries.borrow_mut()[index as usize] = packet(0x10_0000, va, access, FaultType::Pte);
        }

        /// Writes the entry with VALID clear, to turn valid after `reads` reads.
        fn write_late(&self, index: u32, va: u64, reads: u32) {
            self.write(index, va, FaultAccessType::VirtRead);
            NVC369_BUF_ENTRY_VALID.set(&mut self.entries.borrow_mut()[index as usize], 0);
            self.valid_after.borrow_mut().push((index, reads));
        }
    }

    impl FaultBufferMemory for Memory {
        fn read_entry(&self, index: u32) -> RawFaultEntry {
            self.reads.set(self.reads.get() + 1);
            let mut late = self.valid_after.borrow_mut();
            if let Some(slot) = late.iter_mut().find(|(i, _)| *i == index) {
                if slot.1 == 0 {
                    NVC369_BUF_ENTRY_VALID.set(&mut self.entries.borrow_mut()[index as usize], 1);
                    late.retain(|(i, _)| *i != index);
                } else {
                    slot.1 -= 1;
                }
            }
            self.entries.borrow()[index as usize]
        }
        fn clear_valid(&mut self, index: u32) {
            NVC369_BUF_ENTRY_VALID.set(&mut self.entries.borrow_mut()[index as usize], 0);
            self.cleared.push(index);
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) enum Access {
        ReadPut,
        ReadGet,
        WriteGet(u32),
    }

    /// GET/PUT registers that record every access.
    #[derive(Debug, Default)]
    pub(crate) struct Registers {
        pub put: Cell<u32>,
        pub get: Cell<u32>,
        pub log: RefCell<Vec<Access>>,
    }

    impl Registers {
        pub(crate) fn writes(&self) -> Vec<u32> {
            self.log.borrow().iter().filter_map(|a| if let Access::WriteGet(v) = a { Some(*v) } else { None }).collect()
        }
        fn put_reads(&self) -> usize {
            self.log.borrow().iter().filter(|a| **a == Access::ReadPut).count()
        }
    }

    impl FaultBufferRegisters for Registers {
        fn read_put(&self) -> u32 {
            self.log.borrow_mut().push(Access::ReadPut);
            self.put.get()
        }
        fn read_get(&self) -> u32 {
            self.log.borrow_mut().push(Access::ReadGet);
            self.get.get()
        }
        fn write_get(&mut self, raw: u32) {
            self.log.borrow_mut().push(Access::WriteGet(raw));
            self.get.set(raw & 0xf_ffff);
        }
    }

    pub(crate) fn buffer(n: u32) -> ReplayableFaultBuffer<Memory, Registers> {
        ReplayableFaultBuffer::new(Memory::new(n as usize), Registers::default(), n, FetchConfig { spin_limit: 8 })
            .unwrap()
    }

    fn vas(f: &FetchedFaults) -> Vec<u64> {
        f.entries.iter().map(|e| e.va).collect()
    }

    #[test]
    fn fetch_reads_put_once_takes_entries_in_order_and_writes_get_once() {
        let mut b = buffer(16);
        for i in 0..5 {
            b.memory().write(i, 0x1000 * (i as u64 + 1), FaultAccessType::VirtRead);
        }
        b.registers().put.set(5);
        let f = b.fetch_batch(256).unwrap();
        assert_eq!(vas(&f), [0x1000, 0x2000, 0x3000, 0x4000, 0x5000]);
        assert_eq!(b.memory().cleared, [0, 1, 2, 3, 4]);
        assert_eq!(*b.registers().log.borrow(), [Access::ReadGet, Access::ReadPut, Access::WriteGet(5)]);
        assert_eq!((b.cached_get(), b.cached_put()), (5, 5));
        assert_eq!(b.stats().faults_fetched, 5);
        assert_eq!(b.stats().batches, 1);

        // Nothing new: PUT is read again, GET is not rewritten, no batch counted.
        let f = b.fetch_batch(256).unwrap();
        assert!(f.entries.is_empty());
        assert_eq!(b.registers().writes(), [5]);
        assert_eq!(b.registers().put_reads(), 2);
        assert_eq!(b.stats().batches, 1);
    }

    #[test]
    fn fetch_honours_max_and_does_not_reread_put_while_behind_it() {
        let mut b = buffer(16);
        for i in 0..6 {
            b.memory().write(i, 0x1000 * (i as u64 + 1), FaultAccessType::VirtRead);
        }
        b.registers().put.set(6);
        assert_eq!(vas(&b.fetch_batch(4).unwrap()), [0x1000, 0x2000, 0x3000, 0x4000]);
        assert_eq!(vas(&b.fetch_batch(4).unwrap()), [0x5000, 0x6000]);
        assert_eq!(b.registers().put_reads(), 1);
        assert_eq!(b.registers().writes(), [4, 6]);
    }

    #[test]
    fn fetch_stops_at_the_first_entry_not_yet_valid() {
        let mut b = buffer(16);
        b.memory().write(0, 0x1000, FaultAccessType::VirtRead);
        b.memory().write(1, 0x2000, FaultAccessType::VirtRead);
        // Entry 2 is not written yet, entry 3 already is.
        b.memory().write(3, 0x4000, FaultAccessType::VirtRead);
        b.registers().put.set(4);
        let f = b.fetch_batch(256).unwrap();
        assert_eq!(vas(&f), [0x1000, 0x2000]);
        assert_eq!(b.cached_get(), 2);
        assert_eq!(b.registers().writes(), [2]);
        // Entry 3 keeps its VALID bit for the next fetch.
        assert!(is_valid(&b.memory().entries.borrow()[3]));

        // With nothing fetched yet, the fetch waits for entry 2.
        b.memory().write_late(2, 0x3000, 3);
        let f = b.fetch_batch(256).unwrap();
        assert_eq!(vas(&f), [0x3000, 0x4000]);
        assert_eq!(b.registers().writes(), [2, 4]);
        assert_eq!(b.registers().put_reads(), 1);
    }

    #[test]
    fn the_spin_is_bounded_and_names_the_entry() {
        let mut b = buffer(16);
        b.registers().put.set(3);
        let before = b.memory().reads.get();
        let err = b.fetch_batch(256).unwrap_err();
        assert_eq!(err, FaultBufferError::EntryNeverValid { index: 0, put: 3, spins: 8 });
        assert_eq!(b.memory().reads.get() - before, 9);
        assert_eq!(err.to_string(), "timeout waiting for VALID of replayable fault entry 0 (PUT 3) after 8 polls");
        assert!(b.registers().writes().is_empty());
    }

    #[test]
    fn fetch_wraps_at_the_end_of_the_buffer() {
        // Start from GET = 3 of 4: entries 3, 0, 1.
        let regs = Registers::default();
        regs.get.set(3);
        let mut b = ReplayableFaultBuffer::new(Memory::new(4), regs, 4, FetchConfig { spin_limit: 8 }).unwrap();
        assert_eq!(b.cached_get(), 3);
        b.memory().write(3, 0x3000, FaultAccessType::VirtRead);
        b.memory().write(0, 0x4000, FaultAccessType::VirtRead);
        b.memory().write(1, 0x5000, FaultAccessType::VirtRead);
        b.registers().put.set(2);
        let f = b.fetch_batch(256).unwrap();
        assert_eq!(vas(&f), [0x3000, 0x4000, 0x5000]);
        assert_eq!(b.memory().cleared, [3, 0, 1]);
        assert_eq!(b.registers().writes(), [2]);
    }

    #[test]
    fn malformed_entries_are_consumed_counted_and_reported() {
        let mut b = buffer(8);
        b.memory().write(0, 0x1000, FaultAccessType::VirtWrite);
        b.memory().write(1, 0x2000, FaultAccessType::VirtRead);
        NVC369_BUF_ENTRY_FAULT_TYPE.set(&mut b.memory().entries.borrow_mut()[1], 0x1f);
        b.memory().write(2, 0x3000, FaultAccessType::VirtRead);
        b.registers().put.set(3);
        let f = b.fetch_batch(256).unwrap();
        assert_eq!(vas(&f), [0x1000, 0x3000]);
        assert_eq!(f.entries[0].access, FaultAccess::Write);
        assert_eq!(
            f.malformed,
            [MalformedEntry { index: 1, error: FaultEntryError::UnknownFaultType { value: 0x1f } }]
        );
        assert_eq!(b.memory().cleared, [0, 1, 2]);
        assert_eq!((b.stats().faults_fetched, b.stats().malformed), (2, 1));
        assert_eq!(b.registers().writes(), [3]);
    }

    #[test]
    fn overflow_is_cleared_by_writing_get_then_the_one_to_clear_bits() {
        let mut b = buffer(4);
        for i in 0..3 {
            b.memory().write(i, 0x1000 * (i as u64 + 1), FaultAccessType::VirtRead);
        }
        // PUT == GET - 1 (full) and a dropped fault: OVERFLOW.
        b.registers().put.set(0x8000_0003);
        let f = b.fetch_batch(256).unwrap();
        assert_eq!(f.entries.len(), 3);
        assert_eq!(b.stats().overflows, 1);
        assert_eq!(
            *b.registers().log.borrow(),
            [Access::ReadGet, Access::ReadPut, Access::WriteGet(3), Access::WriteGet(0xC000_0003)]
        );
        assert!(!b.overflow_pending());

        // The next GET update is a single write again.
        b.memory().write(3, 0x9000, FaultAccessType::VirtRead);
        b.registers().put.set(0);
        b.fetch_batch(256).unwrap();
        assert_eq!(b.registers().writes(), [3, 0xC000_0003, 0]);
    }

    #[test]
    fn overflow_and_corruption_seen_in_get_at_start_are_cleared_on_request() {
        let regs = Registers::default();
        regs.get.set(0xC000_0002);
        let mut b = ReplayableFaultBuffer::new(Memory::new(4), regs, 4, FetchConfig::default()).unwrap();
        assert_eq!(b.cached_get(), 2);
        assert!(b.overflow_pending());
        assert_eq!((b.stats().overflows, b.stats().getptr_corrupted), (1, 1));
        b.clear_overflow();
        assert_eq!(b.registers().writes(), [2, 0xC000_0002]);
        b.clear_overflow();
        assert_eq!(b.registers().writes().len(), 2);
    }

    #[test]
    fn bad_register_values_are_errors() {
        let regs = Registers::default();
        regs.get.set(9);
        assert_eq!(
            ReplayableFaultBuffer::new(Memory::new(4), regs, 4, FetchConfig::default()).unwrap_err(),
            FaultBufferError::GetOutOfRange { get: 9, max_faults: 4 }
        );
        assert_eq!(
            ReplayableFaultBuffer::new(Memory::new(0), Registers::default(), 0, FetchConfig::default()).unwrap_err(),
            FaultBufferError::Empty
        );
        assert_eq!(
            ReplayableFaultBuffer::new(Memory::new(0), Registers::default(), 1 << 21, FetchConfig::default())
                .unwrap_err(),
            FaultBufferError::TooLarge { max_faults: 1 << 21 }
        );
        let mut b = buffer(4);
        b.registers().put.set(4);
        assert_eq!(b.fetch_batch(256).unwrap_err(), FaultBufferError::PutOutOfRange { put: 4, max_faults: 4 });
        assert_eq!(b.pending().unwrap_err(), FaultBufferError::PutOutOfRange { put: 4, max_faults: 4 });
    }

    #[test]
    fn flush_with_cached_put_drops_up_to_the_cached_put_only() {
        let mut b = buffer(8);
        for i in 0..4 {
            b.memory().write(i, 0x1000, FaultAccessType::VirtRead);
        }
        b.registers().put.set(4);
        b.fetch_batch(2).unwrap();
        // Hardware moved on to 6 meanwhile; a CACHED_PUT flush does not look.
        b.memory().write(4, 0x1000, FaultAccessType::VirtRead);
        b.memory().write(5, 0x1000, FaultAccessType::VirtRead);
        b.registers().put.set(6);
        assert_eq!(b.flush(FlushMode::CachedPut), Ok(2));
        assert_eq!(b.memory().cleared, [0, 1, 2, 3]);
        assert_eq!(b.registers().writes(), [2, 4]);
        assert_eq!(b.registers().put_reads(), 1);
        assert_eq!(b.stats().flushed, 2);

        assert_eq!(b.flush(FlushMode::UpdatePut), Ok(2));
        assert_eq!(b.memory().cleared, [0, 1, 2, 3, 4, 5]);
        assert_eq!(b.registers().writes(), [2, 4, 6]);
        assert_eq!(b.registers().put_reads(), 2);
        // Nothing left: GET is not rewritten.
        assert_eq!(b.flush(FlushMode::CachedPut), Ok(0));
        assert_eq!(b.registers().writes(), [2, 4, 6]);
    }

    #[test]
    fn flush_gives_up_on_an_entry_that_never_turns_valid() {
        let mut b = buffer(8);
        b.memory().write(0, 0x1000, FaultAccessType::VirtRead);
        b.registers().put.set(2);
        assert_eq!(
            b.flush(FlushMode::UpdatePut),
            Err(FaultBufferError::EntryNeverValid { index: 1, put: 2, spins: 8 })
        );
        // What was dropped is handed back.
        assert_eq!(b.registers().writes(), [1]);
        assert_eq!(b.stats().flushed, 1);
    }

    #[test]
    fn pending_reads_put_only_when_the_cache_says_nothing() {
        let mut b = buffer(8);
        assert_eq!(b.pending(), Ok(false));
        assert_eq!(b.registers().put_reads(), 1);
        // VALID at cached GET: pending without touching PUT.
        b.memory().write(0, 0x1000, FaultAccessType::VirtRead);
        assert_eq!(b.pending(), Ok(true));
        assert_eq!(b.registers().put_reads(), 1);
        // PUT moved but the entry is not valid yet: the PUT read tells.
        b.memory().entries.borrow_mut()[0] = [0; 32];
        b.registers().put.set(1);
        assert_eq!(b.pending(), Ok(true));
        assert_eq!(b.registers().put_reads(), 2);
        // Cached GET != cached PUT: pending, no register read.
        assert_eq!(b.pending(), Ok(true));
        assert_eq!(b.registers().put_reads(), 2);
    }
}
