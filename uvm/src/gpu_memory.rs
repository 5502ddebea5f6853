//! A GPU's memory for managed pages through the [`Pmm`]: what a [`UvmBackend`]
//! (crate::service::UvmBackend) implementation calls for its `alloc`, `free` and
//! `eviction_victims` on that GPU.
//!
//! Chunks are allocated TEMP_PINNED and unpinned at once (the service fills them before it
//! returns), which moves their root chunk to the tail of `va_block_used`; chunks are owned by
//! the 2 MiB window of the block they back. When the PMM is out of memory, the victims are the
//! owners of the root chunk UVM's order picks (`va_block_unused` head, then `va_block_used`
//! head): the service evicts those windows, which frees the root's chunks, and retries.

use alloc::vec::Vec;

use crate::pmm::{ChunkSize, GpuChunk, Pmm, PmmError, RootChunkSource, VictimKind};

/// A request the GPU's memory refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuMemoryError {
    /// Not 4 KiB, 64 KiB or 2 MiB.
    NotAChunkSize {
        size: u64,
    },
    Pmm(PmmError),
}

impl From<PmmError> for GpuMemoryError {
    fn from(e: PmmError) -> Self {
        GpuMemoryError::Pmm(e)
    }
}

impl core::fmt::Display for GpuMemoryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            GpuMemoryError::NotAChunkSize { size } => write!(f, "{size:#x} bytes is not a GPU chunk size"),
            GpuMemoryError::Pmm(e) => write!(f, "{e}"),
        }
    }
}

/// One GPU's managed memory.
pub struct GpuMemory<S: RootChunkSource> {
    pub pmm: Pmm<S>,
    /// Root chunks chosen for eviction.
    pub evicted_roots: u64,
}

impl<S: RootChunkSource> GpuMemory<S> {
    pub fn new(pmm: Pmm<S>) -> Self {
        GpuMemory { pmm, evicted_roots: 0 }
    }

    /// `size` bytes (4 KiB, 64 KiB or 2 MiB) for the block window `window`.
    pub fn alloc(&mut self, size: u64, window: u64) -> Result<u64, GpuMemoryError> {
        let chunk_size = ChunkSize::from_bytes(size).ok_or(GpuMemoryError::NotAChunkSize { size })?;
        let chunk = self.pmm.alloc(chunk_size, window)?;
        self.pmm.unpin(chunk)?;
        Ok(chunk.base)
    }

    /// Returns a chunk from [`Self::alloc`].
    pub fn free(&mut self, base: u64, size: u64) -> Result<(), GpuMemoryError> {
        let chunk_size = ChunkSize::from_bytes(size).ok_or(GpuMemoryError::NotAChunkSize { size })?;
        Ok(self.pmm.free(GpuChunk { base, size: chunk_size })?)
    }

    /// The windows whose pages to evict so that a root chunk frees up: the owners of the
    /// PMM's victim, in chunk order, each once.
    pub fn eviction_victims(&mut self) -> Vec<u64> {
        let Some(candidate) = self.pmm.pick_root_to_evict() else { return Vec::new() };
        if candidate.kind == VictimKind::FreeRoot {
            return Vec::new();
        }
        let Ok(chunks) = self.pmm.begin_eviction(candidate.root) else { return Vec::new() };
        // The service frees the chunks as it migrates the owners' pages out; the root must
        // accept those frees, so it leaves the evicting state now.
        let _ = self.pmm.abort_eviction(candidate.root);
        self.evicted_roots += 1;
        let mut owners: Vec<u64> = Vec::new();
        for c in chunks {
            if !owners.contains(&c.owner) {
                owners.push(c.owner);
            }
        }
        owners
    }
}
