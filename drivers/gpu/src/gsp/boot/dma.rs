//! DMA memory the boot owns: a [`DmaBuffer`] that goes back to its allocator when dropped, so
//! that a failed boot step leaks nothing.

use alloc::vec::Vec;

use zerocopy::{FromBytes, Immutable, IntoBytes};

use crate::platform::{DmaAllocator, DmaBuffer, DmaError, DmaRangeError};

/// Rounds `len` up to whole 4 KiB pages (`None` on overflow).
pub const fn page_align(len: usize) -> Option<usize> {
    match len.checked_add(0xfff) {
        Some(v) => Some(v & !0xfff),
        None => None,
    }
}

/// One DMA allocation, owned: freed through its allocator on drop.
pub struct DmaRegion<'a, A: DmaAllocator + ?Sized> {
    allocator: &'a A,
    /// `Some` from construction until `drop` or [`Self::into_buffer`].
    buffer: Option<DmaBuffer>,
    /// The bus address, kept so that it can be read without the buffer.
    bus: u64,
}

impl<'a, A: DmaAllocator + ?Sized> DmaRegion<'a, A> {
    /// `len` zeroed bytes (rounded up to 4 KiB by most allocators).
    pub fn zeroed(allocator: &'a A, len: usize) -> Result<Self, DmaError> {
        let buffer = allocator.alloc(len.max(1))?;
        if buffer.len() < len {
            let short = buffer.len();
            allocator.free(buffer);
            log::error!("DMA allocator returned {short} bytes for a request of {len}");
            return Err(DmaError { requested: len });
        }
        let bus = buffer.bus_address();
        Ok(Self { allocator, buffer: Some(buffer), bus })
    }

    /// `len` bytes (at least `bytes.len()`) holding `bytes`, then zeros.
    pub fn with_bytes(allocator: &'a A, bytes: &[u8], len: usize) -> Result<Self, DmaError> {
        let mut region = Self::zeroed(allocator, len.max(bytes.len()))?;
        // `zeroed` made the region at least `bytes.len()` long, so this cannot miss.
        if let Err(e) = region.write(0, bytes) {
            log::error!("DMA region: {e}");
            return Err(DmaError { requested: len });
        }
        Ok(region)
    }

    /// Bus address of the first byte.
    pub fn bus_address(&self) -> u64 {
        self.bus
    }

    /// Bytes in the allocation.
    pub fn len(&self) -> usize {
        self.buffer.as_ref().map_or(0, DmaBuffer::len)
    }

    /// Whether it is empty (never, while owned).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer.
    pub fn buffer(&self) -> Option<&DmaBuffer> {
        self.buffer.as_ref()
    }

    /// The buffer, for writing.
    fn buffer_mut(&mut self) -> Result<&mut DmaBuffer, DmaRangeError> {
        self.buffer.as_mut().ok_or(DmaRangeError { offset: 0, len: 0, size: 0 })
    }

    /// The buffer, for reading.
    fn buffer_ref(&self) -> Result<&DmaBuffer, DmaRangeError> {
        self.buffer.as_ref().ok_or(DmaRangeError { offset: 0, len: 0, size: 0 })
    }

    /// [`DmaBuffer::write`].
    pub fn write(&mut self, offset: usize, data: &[u8]) -> Result<(), DmaRangeError> {
        self.buffer_mut()?.write(offset, data)
    }

    /// [`DmaBuffer::read`].
    pub fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), DmaRangeError> {
        self.buffer_ref()?.read(offset, out)
    }

    /// [`DmaBuffer::read_vec`].
    pub fn read_vec(&self, offset: usize, len: usize) -> Result<Vec<u8>, DmaRangeError> {
        self.buffer_ref()?.read_vec(offset, len)
    }

    /// [`DmaBuffer::fill`].
    pub fn fill(&mut self, offset: usize, len: usize, value: u8) -> Result<(), DmaRangeError> {
        self.buffer_mut()?.fill(offset, len, value)
    }

    /// [`DmaBuffer::read_u64`].
    pub fn read_u64(&self, offset: usize) -> Result<u64, DmaRangeError> {
        self.buffer_ref()?.read_u64(offset)
    }

    /// [`DmaBuffer::write_u64`].
    pub fn write_u64(&mut self, offset: usize, value: u64) -> Result<(), DmaRangeError> {
        self.buffer_mut()?.write_u64(offset, value)
    }

    /// [`DmaBuffer::write_struct`].
    pub fn write_struct<T: IntoBytes + Immutable>(&mut self, offset: usize, value: &T) -> Result<(), DmaRangeError> {
        self.buffer_mut()?.write_struct(offset, value)
    }

    /// [`DmaBuffer::read_struct`].
    pub fn read_struct<T: FromBytes>(&self, offset: usize) -> Result<T, DmaRangeError> {
        self.buffer_ref()?.read_struct(offset)
    }

    /// Gives up ownership: the caller must return the buffer to the same allocator.
    pub fn into_buffer(mut self) -> Option<DmaBuffer> {
        self.buffer.take()
    }
}

impl<A: DmaAllocator + ?Sized> Drop for DmaRegion<'_, A> {
    fn drop(&mut self) {
        if let Some(buffer) = self.buffer.take() {
            self.allocator.free(buffer);
        }
    }
}
