//! DMA memory the boot owns: a [`DmaBuffer`] that goes back to its allocator when dropped, so
//! that a failed boot step leaks nothing.

use crate::platform::{DmaAllocator, DmaBuffer, DmaError};

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
        if let Some(dest) = region.as_mut_slice().get_mut(..bytes.len()) {
            dest.copy_from_slice(bytes);
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

    /// CPU view.
    pub fn as_slice(&self) -> &[u8] {
        self.buffer.as_ref().map_or(&[], DmaBuffer::as_slice)
    }

    /// CPU view, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.buffer.as_mut().map_or(&mut [], DmaBuffer::as_mut_slice)
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
