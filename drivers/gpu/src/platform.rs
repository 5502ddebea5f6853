//! The driver's other boundaries besides register I/O (`hw::RegisterIo`): DMA memory, time
//! with bounded waits, and firmware by name. The kernel implements them for real hardware
//! (frames as DMA memory, the TSC clock, boot modules); host tests and the in-kernel GPU model
//! implement them in software. The driver never touches the machine any other way.
// The DMA boundary: memory a device shares with the CPU is reached through raw pointers only
// here, behind `DmaBuffer`'s bounds-checked accessors.
#![allow(unsafe_code)]

use core::fmt;

/// A monotonic clock. Every hardware or firmware wait in the driver is bounded by it.
pub trait Clock {
    /// Nanoseconds since an arbitrary fixed point; never decreases.
    fn now_ns(&self) -> u64;
    /// Called between polls of a wait. Real hardware: a pause. The model: lets pending work
    /// advance (virtual time).
    fn relax(&self) {
        core::hint::spin_loop();
    }
}

/// A wait that ran out of time, naming what it waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeout {
    pub what: &'static str,
    pub after_ms: u64,
}

impl fmt::Display for Timeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "timeout waiting for {} after {} ms", self.what, self.after_ms)
    }
}

/// Polls `done` until it returns `Some`, or fails with [`Timeout`] naming `what` after
/// `timeout_ms` of `clock` time. `done` is always polled at least once.
pub fn wait_for<C: Clock + ?Sized, T>(
    clock: &C,
    timeout_ms: u64,
    what: &'static str,
    mut done: impl FnMut() -> Option<T>,
) -> Result<T, Timeout> {
    let start = clock.now_ns();
    let limit = timeout_ms.saturating_mul(1_000_000);
    loop {
        if let Some(v) = done() {
            return Ok(v);
        }
        if clock.now_ns().saturating_sub(start) >= limit {
            // One last look: the condition may have become true while time ran out.
            return done().ok_or(Timeout { what, after_ms: timeout_ms });
        }
        clock.relax();
    }
}

/// Coherent system memory the GPU can reach: a CPU view and the bus address the device uses.
pub struct DmaBuffer {
    cpu: *mut u8,
    bus: u64,
    len: usize,
}

// SAFETY: a DmaBuffer owns its memory exclusively (see `DmaBuffer::new`); moving it to another
// thread moves that ownership.
unsafe impl Send for DmaBuffer {}

impl DmaBuffer {
    /// # Safety
    /// `cpu` is valid for reads and writes of `len` bytes for the buffer's lifetime, owned by
    /// it alone, and `bus` is the address at which the device sees the same bytes.
    pub unsafe fn new(cpu: *mut u8, bus: u64, len: usize) -> Self {
        DmaBuffer { cpu, bus, len }
    }
    /// A buffer over memory that lives for ever and that nothing else can reach (leaked host
    /// memory standing in for DMA memory in tests and tools), seen by the device at `bus`.
    pub fn from_static(memory: &'static mut [u8], bus: u64) -> Self {
        DmaBuffer { cpu: memory.as_mut_ptr(), bus, len: memory.len() }
    }
    pub fn bus_address(&self) -> u64 {
        self.bus
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `new`'s contract.
        unsafe { core::slice::from_raw_parts(self.cpu, self.len) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `new`'s contract; &mut self gives exclusive access.
        unsafe { core::slice::from_raw_parts_mut(self.cpu, self.len) }
    }
    pub fn cpu_ptr(&self) -> *mut u8 {
        self.cpu
    }

    /// Reads the little-endian `u32` at `offset` with a volatile load: memory the device
    /// writes (semaphores, USERD, notifiers) must be read afresh each time. `None` when out of
    /// range or misaligned.
    pub fn read_volatile_u32(&self, offset: usize) -> Option<u32> {
        if !offset.is_multiple_of(4) || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: in bounds and 4-byte aligned (allocations are at least 4-byte aligned, see
        // `DmaAllocator`), and `new`'s contract makes the memory valid for reads.
        Some(u32::from_le(unsafe { core::ptr::read_volatile(self.cpu.add(offset).cast::<u32>()) }))
    }

    /// Writes `value` little-endian at `offset` with a volatile store (the device reads it:
    /// GPPut, GPFIFO entries). `false` when out of range or misaligned.
    pub fn write_volatile_u32(&mut self, offset: usize, value: u32) -> bool {
        if !offset.is_multiple_of(4) || offset.checked_add(4).is_none_or(|end| end > self.len) {
            return false;
        }
        // SAFETY: in bounds and aligned as above; `&mut self` gives exclusive CPU access.
        unsafe { core::ptr::write_volatile(self.cpu.add(offset).cast::<u32>(), value.to_le()) };
        true
    }

    /// Whether `offset..offset + len` lies inside the buffer.
    fn holds(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.len)
    }

    /// Fills `out` from `offset` with volatile byte loads (memory the device changes at any
    /// time: nothing holds a reference into it). `false` when out of range.
    pub fn read_volatile_bytes(&self, offset: usize, out: &mut [u8]) -> bool {
        if !self.holds(offset, out.len()) {
            return false;
        }
        for (i, b) in out.iter_mut().enumerate() {
            // SAFETY: `offset + i < offset + out.len() <= self.len`, and `new`'s contract makes
            // the memory valid for reads.
            *b = unsafe { core::ptr::read_volatile(self.cpu.add(offset + i)) };
        }
        true
    }

    /// Writes `data` at `offset` with volatile byte stores. `false` when out of range.
    pub fn write_volatile_bytes(&mut self, offset: usize, data: &[u8]) -> bool {
        if !self.holds(offset, data.len()) {
            return false;
        }
        for (i, b) in data.iter().enumerate() {
            // SAFETY: in bounds as in `read_volatile_bytes`; `&mut self` gives exclusive CPU
            // access.
            unsafe { core::ptr::write_volatile(self.cpu.add(offset + i), *b) };
        }
        true
    }

    /// Writes `len` bytes of `value` at `offset` with volatile stores. `false` when out of range.
    pub fn fill_volatile(&mut self, offset: usize, len: usize, value: u8) -> bool {
        if !self.holds(offset, len) {
            return false;
        }
        for i in 0..len {
            // SAFETY: as in `write_volatile_bytes`.
            unsafe { core::ptr::write_volatile(self.cpu.add(offset + i), value) };
        }
        true
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaError {
    pub requested: usize,
}

impl fmt::Display for DmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot allocate {} bytes of DMA memory", self.requested)
    }
}

/// Allocates DMA memory: zeroed, physically contiguous, aligned to at least 4 KiB.
pub trait DmaAllocator {
    fn alloc(&self, len: usize) -> Result<DmaBuffer, DmaError>;
    /// Returns a buffer's memory.
    fn free(&self, buffer: DmaBuffer);
}

/// A shared reference allocates from what it refers to, so owners that want an allocator by
/// value (`DmaTableMemory`) can borrow one that outlives them (the kernel's, a test's arena).
impl<A: DmaAllocator + ?Sized> DmaAllocator for &A {
    fn alloc(&self, len: usize) -> Result<DmaBuffer, DmaError> {
        (**self).alloc(len)
    }
    fn free(&self, buffer: DmaBuffer) {
        (**self).free(buffer)
    }
}

/// Firmware blobs by name (`gsp_ga10x.bin`, ...), from boot modules or files.
pub trait FirmwareSource {
    fn get(&self, name: &str) -> Option<&[u8]>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    struct Stepping(Cell<u64>);
    impl Clock for Stepping {
        fn now_ns(&self) -> u64 {
            let t = self.0.get();
            self.0.set(t + 1_000_000);
            t
        }
    }

    #[test]
    fn wait_for_times_out_naming_what_it_waited_for() {
        let clock = Stepping(Cell::new(0));
        let err = wait_for(&clock, 50, "falcon halt", || None::<()>).unwrap_err();
        assert_eq!(err, Timeout { what: "falcon halt", after_ms: 50 });
        assert_eq!(err.to_string(), "timeout waiting for falcon halt after 50 ms");
    }

    #[test]
    fn wait_for_returns_the_value_when_ready() {
        let clock = Stepping(Cell::new(0));
        let polls = Cell::new(0);
        let v = wait_for(&clock, 50, "x", || {
            polls.set(polls.get() + 1);
            (polls.get() == 3).then_some(42)
        });
        assert_eq!(v, Ok(42));
    }
}
