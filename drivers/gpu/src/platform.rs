//! The driver's other boundaries besides register I/O (`hw::RegisterIo`): DMA memory, time
//! with bounded waits, and firmware by name. The kernel implements them for real hardware
//! (frames as DMA memory, the TSC clock, boot modules); host tests and the in-kernel GPU model
//! implement them in software. The driver never touches the machine any other way.
// The DMA boundary: memory a device shares with the CPU is reached through raw pointers only
// here, behind `DmaBuffer`'s bounds-checked accessors.
#![allow(unsafe_code)]

use core::fmt;

use zerocopy::{FromBytes, Immutable, IntoBytes};

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

/// Coherent system memory the GPU can reach, and the bus address the device uses. The CPU
/// reaches the bytes only through its methods, which copy in and out: no reference into memory
/// the device may read or write is ever handed out.
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
    /// The CPU virtual address of the first byte, as a number: for the allocator that made the
    /// buffer to recognise it when it comes back, and for alignment checks. Not a way in: the
    /// bytes are reached only through the accessors below.
    pub fn cpu_address(&self) -> usize {
        self.cpu as usize
    }

    /// `Ok` when `offset..offset + len` lies inside the buffer; the error names the range and
    /// the buffer's size.
    #[inline]
    fn range(&self, offset: usize, len: usize) -> Result<(), DmaRangeError> {
        if offset.checked_add(len).is_some_and(|end| end <= self.len) {
            Ok(())
        } else {
            Err(DmaRangeError { offset, len, size: self.len })
        }
    }

    /// Copies `data` into the buffer at `offset` (one bulk copy: for memory the device is not
    /// reading at the same time, such as images and tables written before it is told of them).
    #[inline]
    pub fn write(&mut self, offset: usize, data: &[u8]) -> Result<(), DmaRangeError> {
        self.range(offset, data.len())?;
        // SAFETY: `offset + data.len() <= self.len` (checked), so the destination lies inside
        // the memory `new`'s contract makes valid for writes. `data` cannot overlap it: the
        // constructors require memory nothing but this buffer reaches, and `&mut self` rules
        // out a borrow of the buffer itself. Bytes have alignment 1.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), self.cpu.add(offset), data.len()) };
        Ok(())
    }

    /// Copies `out.len()` bytes from `offset` into `out` (one bulk copy: for memory the device
    /// is not writing at the same time; see [`Self::read_volatile_bytes`] for memory it is).
    #[inline]
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), DmaRangeError> {
        self.range(offset, out.len())?;
        // SAFETY: the source lies inside the buffer (checked) and `new`'s contract makes it
        // valid for reads. `out` cannot overlap it: nothing but this buffer reaches its memory
        // (the constructors' contract), and a mutable borrow of the buffer cannot coexist with
        // `&self`.
        unsafe { core::ptr::copy_nonoverlapping(self.cpu.add(offset), out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// Sets `len` bytes from `offset` to `value` (one bulk store).
    #[inline]
    pub fn fill(&mut self, offset: usize, len: usize, value: u8) -> Result<(), DmaRangeError> {
        self.range(offset, len)?;
        // SAFETY: inside the buffer (checked), valid for writes by `new`'s contract, and
        // `&mut self` gives exclusive CPU access.
        unsafe { core::ptr::write_bytes(self.cpu.add(offset), value, len) };
        Ok(())
    }

    /// Copies `len` bytes from `offset` into a new vector.
    pub fn read_vec(&self, offset: usize, len: usize) -> Result<alloc::vec::Vec<u8>, DmaRangeError> {
        self.range(offset, len)?;
        let mut out = alloc::vec![0u8; len];
        self.read(offset, &mut out)?;
        Ok(out)
    }

    /// The little-endian `u32` at `offset` (any alignment).
    #[inline]
    pub fn read_u32(&self, offset: usize) -> Result<u32, DmaRangeError> {
        let mut raw = [0u8; 4];
        self.read(offset, &mut raw)?;
        Ok(u32::from_le_bytes(raw))
    }

    /// The little-endian `u64` at `offset` (any alignment).
    #[inline]
    pub fn read_u64(&self, offset: usize) -> Result<u64, DmaRangeError> {
        let mut raw = [0u8; 8];
        self.read(offset, &mut raw)?;
        Ok(u64::from_le_bytes(raw))
    }

    /// Writes `value` little-endian at `offset` (any alignment).
    #[inline]
    pub fn write_u32(&mut self, offset: usize, value: u32) -> Result<(), DmaRangeError> {
        self.write(offset, &value.to_le_bytes())
    }

    /// Writes `value` little-endian at `offset` (any alignment).
    #[inline]
    pub fn write_u64(&mut self, offset: usize, value: u64) -> Result<(), DmaRangeError> {
        self.write(offset, &value.to_le_bytes())
    }

    /// Copies `value`'s bytes to `offset` (a firmware structure in its in-memory layout).
    #[inline]
    pub fn write_struct<T: IntoBytes + Immutable>(&mut self, offset: usize, value: &T) -> Result<(), DmaRangeError> {
        self.write(offset, value.as_bytes())
    }

    /// The `T` whose bytes lie at `offset` (any alignment), copied out.
    #[inline]
    pub fn read_struct<T: FromBytes>(&self, offset: usize) -> Result<T, DmaRangeError> {
        self.range(offset, core::mem::size_of::<T>())?;
        // SAFETY: `size_of::<T>()` bytes from `offset` lie inside the buffer (checked) and are
        // valid for reads by `new`'s contract; `read_unaligned` needs no alignment, and
        // `T: FromBytes` makes every bit pattern a valid `T`.
        Ok(unsafe { core::ptr::read_unaligned(self.cpu.add(offset).cast::<T>()) })
    }

    /// Reads the little-endian `u32` at `offset` with a volatile load: memory the device
    /// writes (semaphores, USERD, notifiers) must be read afresh each time. `None` when out of
    /// range or misaligned.
    #[inline]
    pub fn read_volatile_u32(&self, offset: usize) -> Option<u32> {
        if !self.aligned(offset, 4) || !self.holds(offset, 4) {
            return None;
        }
        // SAFETY: in bounds and 4-byte aligned (both checked), and `new`'s contract makes the
        // memory valid for reads.
        Some(u32::from_le(unsafe { core::ptr::read_volatile(self.cpu.add(offset).cast::<u32>()) }))
    }

    /// Writes `value` little-endian at `offset` with a volatile store (the device reads it:
    /// GPPut, GPFIFO entries). `false` when out of range or misaligned.
    #[inline]
    pub fn write_volatile_u32(&mut self, offset: usize, value: u32) -> bool {
        if !self.aligned(offset, 4) || !self.holds(offset, 4) {
            return false;
        }
        // SAFETY: in bounds and aligned as above; `&mut self` gives exclusive CPU access.
        unsafe { core::ptr::write_volatile(self.cpu.add(offset).cast::<u32>(), value.to_le()) };
        true
    }

    /// Reads the little-endian `u64` at `offset` with one volatile 8-byte load (page-table
    /// entries the device walks). `None` when out of range or not 8-byte aligned.
    #[inline]
    pub fn read_volatile_u64(&self, offset: usize) -> Option<u64> {
        if !self.aligned(offset, 8) || !self.holds(offset, 8) {
            return None;
        }
        // SAFETY: in bounds and 8-byte aligned (both checked), valid for reads by `new`'s
        // contract.
        Some(u64::from_le(unsafe { core::ptr::read_volatile(self.cpu.add(offset).cast::<u64>()) }))
    }

    /// Writes `value` little-endian at `offset` with one volatile 8-byte store. `false` when
    /// out of range or not 8-byte aligned.
    #[inline]
    pub fn write_volatile_u64(&mut self, offset: usize, value: u64) -> bool {
        if !self.aligned(offset, 8) || !self.holds(offset, 8) {
            return false;
        }
        // SAFETY: in bounds and aligned as in `read_volatile_u64`; `&mut self` gives exclusive
        // CPU access.
        unsafe { core::ptr::write_volatile(self.cpu.add(offset).cast::<u64>(), value.to_le()) };
        true
    }

    /// Whether the byte at `offset` has an address that is a multiple of `align` (offsets that
    /// are multiples of it are, in memory a `DmaAllocator` hands out: it aligns to 4 KiB).
    #[inline]
    fn aligned(&self, offset: usize, align: usize) -> bool {
        (self.cpu as usize).wrapping_add(offset).is_multiple_of(align)
    }

    /// Whether `offset..offset + len` lies inside the buffer.
    #[inline]
    fn holds(&self, offset: usize, len: usize) -> bool {
        self.range(offset, len).is_ok()
    }

    /// How many of the `len` bytes from `offset` come before the first 8-byte aligned address:
    /// the volatile byte copies below move those and the tail byte by byte, the rest as whole
    /// 8-byte words (one load or store per word, not per byte).
    #[inline]
    fn unaligned_head(&self, offset: usize, len: usize) -> usize {
        let address = (self.cpu as usize).wrapping_add(offset);
        (address.wrapping_neg() % 8).min(len)
    }

    /// Fills `out` from `offset` with volatile loads (memory the device changes at any time:
    /// nothing holds a reference into it), 8 bytes a load where the address is aligned. `false`
    /// when out of range.
    pub fn read_volatile_bytes(&self, offset: usize, out: &mut [u8]) -> bool {
        if !self.holds(offset, out.len()) {
            return false;
        }
        let (head, rest) = out.split_at_mut(self.unaligned_head(offset, out.len()));
        let mut at = offset;
        for b in head.iter_mut() {
            // SAFETY: `at < offset + out.len() <= self.len` (checked), and `new`'s contract
            // makes the memory valid for reads.
            *b = unsafe { core::ptr::read_volatile(self.cpu.add(at)) };
            at += 1;
        }
        let mut words = rest.chunks_exact_mut(8);
        for chunk in &mut words {
            // SAFETY: `at..at + 8` lies inside the buffer (checked above: the chunk is part of
            // `out`), and `at`'s address is 8-byte aligned (after the head); valid for reads by
            // `new`'s contract.
            let word = unsafe { core::ptr::read_volatile(self.cpu.add(at).cast::<u64>()) };
            chunk.copy_from_slice(&word.to_ne_bytes());
            at += 8;
        }
        for b in words.into_remainder() {
            // SAFETY: as for the head.
            *b = unsafe { core::ptr::read_volatile(self.cpu.add(at)) };
            at += 1;
        }
        true
    }

    /// Writes `data` at `offset` with volatile stores, 8 bytes a store where the address is
    /// aligned. `false` (and nothing written) when out of range.
    pub fn write_volatile_bytes(&mut self, offset: usize, data: &[u8]) -> bool {
        if !self.holds(offset, data.len()) {
            return false;
        }
        let (head, rest) = data.split_at(self.unaligned_head(offset, data.len()));
        let mut at = offset;
        for &b in head {
            // SAFETY: in bounds as in `read_volatile_bytes`; `&mut self` gives exclusive CPU
            // access.
            unsafe { core::ptr::write_volatile(self.cpu.add(at), b) };
            at += 1;
        }
        let words = rest.chunks_exact(8);
        let tail = words.remainder();
        for chunk in words {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            // SAFETY: in bounds and 8-byte aligned as in `read_volatile_bytes`; `&mut self`
            // gives exclusive CPU access.
            unsafe { core::ptr::write_volatile(self.cpu.add(at).cast::<u64>(), u64::from_ne_bytes(word)) };
            at += 8;
        }
        for &b in tail {
            // SAFETY: as for the head.
            unsafe { core::ptr::write_volatile(self.cpu.add(at), b) };
            at += 1;
        }
        true
    }

    /// Writes `len` bytes of `value` at `offset` with volatile stores, 8 bytes a store where
    /// the address is aligned. `false` (and nothing written) when out of range.
    pub fn fill_volatile(&mut self, offset: usize, len: usize, value: u8) -> bool {
        if !self.holds(offset, len) {
            return false;
        }
        let head = self.unaligned_head(offset, len);
        let words = (len - head) / 8;
        let word = u64::from_ne_bytes([value; 8]);
        let mut at = offset;
        for _ in 0..head {
            // SAFETY: `at < offset + len <= self.len` (checked); `&mut self` gives exclusive
            // CPU access.
            unsafe { core::ptr::write_volatile(self.cpu.add(at), value) };
            at += 1;
        }
        for _ in 0..words {
            // SAFETY: `at + 8 <= offset + len` and `at`'s address is 8-byte aligned (after the
            // head); `&mut self` gives exclusive CPU access.
            unsafe { core::ptr::write_volatile(self.cpu.add(at).cast::<u64>(), word) };
            at += 8;
        }
        while at < offset + len {
            // SAFETY: as for the head.
            unsafe { core::ptr::write_volatile(self.cpu.add(at), value) };
            at += 1;
        }
        true
    }
}

/// An access to a [`DmaBuffer`] that does not fit in it: `len` bytes at `offset` of a buffer
/// of `size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaRangeError {
    pub offset: usize,
    pub len: usize,
    pub size: usize,
}

impl fmt::Display for DmaRangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes at offset {:#x} do not fit in a DMA buffer of {} bytes", self.len, self.offset, self.size)
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
    /// The bus address at which a device can read `bytes` where they are, without a copy, or
    /// `None` (the caller copies them into an allocation instead). A platform answers only for
    /// memory that outlives every device access and that it shares read-only: the kernel for
    /// page-aligned boot modules, whose pages then become the GSP-RM image's radix3 leaves. The
    /// address is 4 KiB-aligned, and the whole pages from it covering `bytes` are readable.
    fn share_read_only(&self, bytes: &[u8]) -> Option<u64> {
        let _ = bytes;
        None
    }
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
    fn share_read_only(&self, bytes: &[u8]) -> Option<u64> {
        (**self).share_read_only(bytes)
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

    /// A buffer over `len` leaked bytes holding 0, 1, 2, ... (mod 256), and a copy of them.
    fn counting(len: usize) -> (DmaBuffer, Vec<u8>) {
        let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
        // 8-byte aligned memory (a leaked u64 vector) so the volatile word accessors apply.
        let words: &'static mut [u64] = Vec::leak(vec![0u64; len.div_ceil(8)]);
        let memory: &'static mut [u8] = zerocopy::IntoBytes::as_mut_bytes(words);
        memory[..len].copy_from_slice(&bytes);
        let memory = &mut memory[..len];
        (DmaBuffer::from_static(memory, 0x1_0000_0000), bytes)
    }

    #[test]
    fn copies_in_and_out_at_any_offset() {
        let (mut b, mut want) = counting(64);
        let mut out = [0u8; 5];
        b.read(3, &mut out).unwrap();
        assert_eq!(out, [3, 4, 5, 6, 7]);
        b.write(61, &[0xaa, 0xbb, 0xcc]).unwrap();
        want[61..].copy_from_slice(&[0xaa, 0xbb, 0xcc]);
        b.fill(10, 4, 0xee).unwrap();
        want[10..14].fill(0xee);
        assert_eq!(b.read_vec(0, 64).unwrap(), want);
        // Zero-length accesses at the end are in range; past it they are not.
        b.write(64, &[]).unwrap();
        b.read(64, &mut []).unwrap();
        b.fill(64, 0, 1).unwrap();
        assert_eq!(b.read_vec(64, 0).unwrap(), Vec::<u8>::new());
        assert_eq!(b.write(65, &[]), Err(DmaRangeError { offset: 65, len: 0, size: 64 }));
    }

    #[test]
    fn out_of_range_accesses_fail_naming_offset_length_and_size_and_change_nothing() {
        let (mut b, want) = counting(32);
        let err = DmaRangeError { offset: 30, len: 4, size: 32 };
        assert_eq!(b.write(30, &[1, 2, 3, 4]), Err(err));
        assert_eq!(b.read(30, &mut [0; 4]), Err(err));
        assert_eq!(b.fill(30, 4, 9), Err(err));
        assert_eq!(b.read_u32(30), Err(err));
        assert_eq!(b.write_u32(30, 1), Err(err));
        assert_eq!(b.read_u64(30), Err(DmaRangeError { offset: 30, len: 8, size: 32 }));
        assert_eq!(b.write_u64(25, 1), Err(DmaRangeError { offset: 25, len: 8, size: 32 }));
        assert_eq!(b.read_vec(0, 33), Err(DmaRangeError { offset: 0, len: 33, size: 32 }));
        assert_eq!(b.read_struct::<[u8; 3]>(30), Err(DmaRangeError { offset: 30, len: 3, size: 32 }));
        assert_eq!(b.write_struct(31, &[0u8; 2]), Err(DmaRangeError { offset: 31, len: 2, size: 32 }));
        // Offsets near usize::MAX do not wrap round into range.
        assert_eq!(b.read(usize::MAX, &mut [0; 2]), Err(DmaRangeError { offset: usize::MAX, len: 2, size: 32 }));
        assert_eq!(b.fill(1, usize::MAX, 0), Err(DmaRangeError { offset: 1, len: usize::MAX, size: 32 }));
        assert_eq!(err.to_string(), "4 bytes at offset 0x1e do not fit in a DMA buffer of 32 bytes");
        assert_eq!(b.read_vec(0, 32).unwrap(), want);
    }

    #[test]
    fn words_are_little_endian_at_any_alignment() {
        let (mut b, _) = counting(32);
        assert_eq!(b.read_u32(1).unwrap(), 0x0403_0201);
        assert_eq!(b.read_u64(8).unwrap(), 0x0f0e_0d0c_0b0a_0908);
        b.write_u32(5, 0xdead_beef).unwrap();
        assert_eq!(b.read_vec(4, 6).unwrap(), [4, 0xef, 0xbe, 0xad, 0xde, 9]);
        b.write_u64(17, 0x0102_0304_0506_0708).unwrap();
        assert_eq!(b.read_vec(16, 10).unwrap(), [16, 8, 7, 6, 5, 4, 3, 2, 1, 25]);
        // The last word of the buffer.
        b.write_u64(24, u64::MAX).unwrap();
        assert_eq!(b.read_u64(24).unwrap(), u64::MAX);
    }

    #[test]
    fn structures_copy_in_and_out_by_their_bytes() {
        #[derive(Debug, PartialEq, zerocopy::FromBytes, zerocopy::IntoBytes, zerocopy::Immutable)]
        #[repr(C)]
        struct Pair {
            a: u32,
            b: u16,
            c: u16,
        }
        let (mut b, _) = counting(16);
        // Unaligned: offset 3.
        assert_eq!(b.read_struct::<Pair>(3).unwrap(), Pair { a: 0x0605_0403, b: 0x0807, c: 0x0a09 });
        b.write_struct(7, &Pair { a: 0x1122_3344, b: 0x5566, c: 0x7788 }).unwrap();
        assert_eq!(b.read_vec(6, 10).unwrap(), [6, 0x44, 0x33, 0x22, 0x11, 0x66, 0x55, 0x88, 0x77, 15]);
    }

    #[test]
    fn volatile_words_need_range_and_alignment() {
        let (mut b, _) = counting(16);
        assert_eq!(b.read_volatile_u32(4), Some(0x0706_0504));
        assert_eq!(b.read_volatile_u32(2), None);
        assert_eq!(b.read_volatile_u32(16), None);
        assert_eq!(b.read_volatile_u64(8), Some(0x0f0e_0d0c_0b0a_0908));
        assert_eq!(b.read_volatile_u64(4), None);
        assert_eq!(b.read_volatile_u64(16), None);
        assert!(b.write_volatile_u64(0, 0x8877_6655_4433_2211));
        assert!(!b.write_volatile_u64(12, 0));
        assert!(!b.write_volatile_u32(14, 0));
        assert_eq!(b.read_vec(0, 9).unwrap(), [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 8]);
        // The alignment is the address's, not only the offset's.
        let (odd, _) = counting(17);
        let odd_memory = Vec::leak(vec![0u8; 20]);
        let start = odd_memory.as_ptr() as usize;
        let skew = usize::from(start.is_multiple_of(2));
        let skewed = DmaBuffer::from_static(&mut odd_memory[skew..skew + 16], 0);
        assert_eq!(skewed.read_volatile_u32(0), None);
        assert_eq!(odd.read_volatile_u32(0), Some(0x0302_0100));
    }

    #[test]
    fn volatile_byte_copies_move_every_byte_at_every_alignment() {
        // Every start and length over the first words, so heads, whole words and tails of
        // each size are crossed; the bytes around the range stay as they were.
        for offset in 0..20 {
            for len in 0..=(40 - offset) {
                let (mut b, mut want) = counting(40);
                let mut out = vec![0u8; len];
                assert!(b.read_volatile_bytes(offset, &mut out), "read {len} at {offset}");
                assert_eq!(out, want[offset..offset + len], "read {len} at {offset}");
                let data: Vec<u8> = (0..len).map(|i| 0x80 | i as u8).collect();
                assert!(b.write_volatile_bytes(offset, &data), "write {len} at {offset}");
                want[offset..offset + len].copy_from_slice(&data);
                assert_eq!(b.read_vec(0, 40).unwrap(), want, "write {len} at {offset}");
                assert!(b.fill_volatile(offset, len, 0x5a), "fill {len} at {offset}");
                want[offset..offset + len].fill(0x5a);
                assert_eq!(b.read_vec(0, 40).unwrap(), want, "fill {len} at {offset}");
            }
        }
    }

    #[test]
    fn volatile_byte_copies_refuse_ranges_past_the_end_and_write_nothing() {
        let (mut b, want) = counting(24);
        let mut out = [0xffu8; 5];
        assert!(!b.read_volatile_bytes(20, &mut out));
        assert!(!b.read_volatile_bytes(usize::MAX, &mut out[..2]));
        assert!(!b.write_volatile_bytes(20, &[1; 5]));
        assert!(!b.write_volatile_bytes(25, &[]));
        assert!(!b.fill_volatile(17, 8, 1));
        assert!(!b.fill_volatile(1, usize::MAX, 1));
        assert_eq!(b.read_vec(0, 24).unwrap(), want, "nothing written");
        // The last bytes and the empty range at the end are in range.
        assert!(b.read_volatile_bytes(19, &mut out));
        assert_eq!(out, [19, 20, 21, 22, 23]);
        assert!(b.read_volatile_bytes(24, &mut []));
        assert!(b.write_volatile_bytes(24, &[]));
        assert!(b.fill_volatile(24, 0, 1));
    }

    #[test]
    fn no_access_panics_whatever_its_offset_and_length() {
        // Offsets and lengths at and around the end, and ones whose sum overflows: each access
        // answers (in range or an error), none panics.
        let interesting = [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, usize::MAX / 2, usize::MAX - 8, usize::MAX];
        let outcome = std::panic::catch_unwind(|| {
            let (mut b, _) = counting(32);
            let mut errors = 0;
            for &offset in &interesting {
                for &len in &interesting {
                    let fits = offset.checked_add(len).is_some_and(|end| end <= 32);
                    let want = if fits { Ok(()) } else { Err(DmaRangeError { offset, len, size: 32 }) };
                    assert_eq!(b.fill(offset, len, 0), want, "fill {len} at {offset}");
                    assert_eq!(b.fill_volatile(offset, len, 0), fits, "fill_volatile {len} at {offset}");
                    // Lengths a caller could hold in memory.
                    if len <= 33 {
                        let mut out = vec![0u8; len];
                        assert_eq!(b.read(offset, &mut out), want, "read {len} at {offset}");
                        assert_eq!(b.write(offset, &out), want, "write {len} at {offset}");
                        assert_eq!(b.read_vec(offset, len).map(|v| v.len()), want.map(|()| len));
                        assert_eq!(b.read_volatile_bytes(offset, &mut out), fits);
                        assert_eq!(b.write_volatile_bytes(offset, &out), fits);
                    }
                    errors += usize::from(!fits);
                }
                let word = offset.checked_add(4).is_some_and(|end| end <= 32);
                assert_eq!(b.read_u32(offset).is_ok(), word, "read_u32 at {offset}");
                assert_eq!(b.write_u32(offset, 1).is_ok(), word, "write_u32 at {offset}");
                let quad = offset.checked_add(8).is_some_and(|end| end <= 32);
                assert_eq!(b.read_u64(offset).is_ok(), quad, "read_u64 at {offset}");
                assert_eq!(b.write_u64(offset, 1).is_ok(), quad, "write_u64 at {offset}");
                assert_eq!(b.read_struct::<[u32; 2]>(offset).is_ok(), quad, "read_struct at {offset}");
                assert_eq!(b.write_struct(offset, &[0u32; 2]).is_ok(), quad, "write_struct at {offset}");
                assert_eq!(b.read_volatile_u32(offset).is_some(), word && offset % 4 == 0);
                assert_eq!(b.write_volatile_u32(offset, 0), word && offset % 4 == 0);
                assert_eq!(b.read_volatile_u64(offset).is_some(), quad && offset % 8 == 0);
                assert_eq!(b.write_volatile_u64(offset, 0), quad && offset % 8 == 0);
            }
            errors
        });
        let errors = outcome.expect("an out-of-range access panicked instead of returning an error");
        assert!(errors > 100, "the sweep reaches past the end ({errors} out-of-range pairs)");
    }

    #[test]
    fn the_cpu_address_is_where_the_bytes_are() {
        let memory = Vec::leak(vec![0u8; 8]);
        let at = memory.as_ptr() as usize;
        let b = DmaBuffer::from_static(memory, 0x2000);
        assert_eq!((b.cpu_address(), b.bus_address(), b.len()), (at, 0x2000, 8));
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
