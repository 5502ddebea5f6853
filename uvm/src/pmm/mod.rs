//! The GPU physical memory manager (UVM's PMM, `kernel-open/nvidia-uvm/uvm_pmm_gpu.c` and
//! `uvm_pmm_gpu.h`, 535.261.03): GPU memory for va_blocks, in chunks of 2 MiB, 64 KiB and 4 KiB.
//!
//! Memory comes from a [`RootChunkSource`] one 2 MiB *root chunk* at a time (on hardware the
//! driver's [`VramAllocator`], through [`VramRootSource`]). A root chunk splits lazily, only when
//! a smaller chunk is asked for and no free one of that size exists, into 32 chunks of 64 KiB,
//! each of which splits into 16 of 4 KiB; chunks merge eagerly, as soon as every sibling is free.
//!
//! A chunk is FREE, TEMP_PINNED (just allocated: the caller is still filling it and it must not
//! be evicted), or ALLOCATED (unpinned, owned by a va_block and evictable); a parent whose
//! children live on their own is SPLIT (`uvm_pmm_gpu_chunk_state_t`).
//!
//! Root chunks holding ALLOCATED chunks sit on one of two LRU lists: `va_block_used`, which a
//! root joins at the tail whenever a chunk in it is unpinned, and `va_block_unused`, for roots
//! whose blocks hold no resident pages. When an allocation fails with [`PmmError::NoMemory`] the
//! caller picks a victim ([`Pmm::pick_root_to_evict`]: free roots, then the head of
//! `va_block_unused`, then the head of `va_block_used`, never a root with TEMP_PINNED chunks),
//! evicts it ([`Pmm::begin_eviction`], migrate the pages it lists to the CPU,
//! [`Pmm::finish_eviction`]) and retries, as UVM's NO_MEMORY → evict → MORE_PROCESSING_REQUIRED
//! loop does (`uvm_va_block.c:block_alloc_gpu_chunk`).
//!
//! UVM also keeps separate free lists for zeroed chunks and for kernel (non-va_block) memory;
//! this PMM has one kind of memory and does not track zeroing.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::vec;
use alloc::vec::Vec;
use core::borrow::BorrowMut;
use core::fmt;

use nvgpu::mm::vram::{VramAllocation, VramAllocator, VramError};

/// Bytes in a root chunk: the unit the PMM takes from its source.
pub const ROOT_CHUNK_SIZE: u64 = 2 << 20;
const CHUNK_64K: u64 = 64 << 10;
const CHUNK_4K: u64 = 4 << 10;
/// 64 KiB chunks in a split root chunk.
pub const CHUNKS_64K_PER_ROOT: usize = (ROOT_CHUNK_SIZE / CHUNK_64K) as usize;
/// 4 KiB chunks in a split 64 KiB chunk.
pub const CHUNKS_4K_PER_64K: usize = (CHUNK_64K / CHUNK_4K) as usize;
const _: () = assert!(CHUNKS_64K_PER_ROOT == 32 && CHUNKS_4K_PER_64K == 16);

/// The chunk sizes the PMM hands out (`uvm_chunk_size_t`, restricted to the sizes UVM uses for
/// va_blocks on Pascal and later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChunkSize {
    Size4K,
    Size64K,
    Size2M,
}

impl ChunkSize {
    /// Every size, smallest first (the order of [`ChunkSize::index`]).
    pub const ALL: [ChunkSize; 3] = [ChunkSize::Size4K, ChunkSize::Size64K, ChunkSize::Size2M];

    pub const fn bytes(self) -> u64 {
        match self {
            ChunkSize::Size4K => CHUNK_4K,
            ChunkSize::Size64K => CHUNK_64K,
            ChunkSize::Size2M => ROOT_CHUNK_SIZE,
        }
    }

    /// The size of exactly `bytes` bytes, if it is one.
    pub const fn from_bytes(bytes: u64) -> Option<Self> {
        match bytes {
            CHUNK_4K => Some(ChunkSize::Size4K),
            CHUNK_64K => Some(ChunkSize::Size64K),
            ROOT_CHUNK_SIZE => Some(ChunkSize::Size2M),
            _ => None,
        }
    }

    /// 0 for 4 KiB, 1 for 64 KiB, 2 for 2 MiB: the index into per-size arrays such as
    /// [`PmmStats::chunks`].
    pub const fn index(self) -> usize {
        match self {
            ChunkSize::Size4K => 0,
            ChunkSize::Size64K => 1,
            ChunkSize::Size2M => 2,
        }
    }

    /// The size a chunk of this size is split out of; `None` for a root chunk.
    pub const fn parent(self) -> Option<Self> {
        match self {
            ChunkSize::Size4K => Some(ChunkSize::Size64K),
            ChunkSize::Size64K => Some(ChunkSize::Size2M),
            ChunkSize::Size2M => None,
        }
    }

    /// The size this one splits into; `None` for 4 KiB.
    pub const fn child(self) -> Option<Self> {
        match self {
            ChunkSize::Size4K => None,
            ChunkSize::Size64K => Some(ChunkSize::Size4K),
            ChunkSize::Size2M => Some(ChunkSize::Size64K),
        }
    }
}

impl fmt::Display for ChunkSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChunkSize::Size4K => "4K",
            ChunkSize::Size64K => "64K",
            ChunkSize::Size2M => "2M",
        })
    }
}

/// What a chunk is doing (`uvm_pmm_gpu_chunk_state_t`, less PMA_OWNED: a root chunk this PMM
/// does not hold is simply absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkState {
    /// Free, and whole: not part of a larger free chunk (which would have merged it).
    Free,
    /// Allocated and not yet unpinned: never evicted.
    TempPinned,
    /// Allocated, unpinned, owned by a va_block: may be evicted.
    Allocated,
    /// Split into smaller chunks, which have their own states.
    Split,
}

impl fmt::Display for ChunkState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChunkState::Free => "FREE",
            ChunkState::TempPinned => "TEMP_PINNED",
            ChunkState::Allocated => "ALLOCATED",
            ChunkState::Split => "SPLIT",
        })
    }
}

/// A handle to one chunk: `size` bytes of VRAM at physical address `base`. It is only a name;
/// the PMM checks every handle it is given against its own records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GpuChunk {
    pub base: u64,
    pub size: ChunkSize,
}

impl GpuChunk {
    /// The root chunk this chunk lies in.
    pub const fn root_base(&self) -> u64 {
        self.base & !(ROOT_CHUNK_SIZE - 1)
    }

    /// One past the last byte; `None` if that overflows (no valid chunk does).
    pub fn end(&self) -> Option<u64> {
        self.base.checked_add(self.size.bytes())
    }
}

impl fmt::Display for GpuChunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} chunk {:#x}", self.size, self.base)
    }
}

/// Why a PMM operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmmError {
    /// No free chunk of `size`, and no root chunk to split: the source is exhausted or the cap
    /// of `root_chunks` root chunks is reached. Evict a root chunk and retry.
    NoMemory { size: ChunkSize, root_chunks: usize },
    /// The handle names no chunk of that size: misaligned, or the memory there is split
    /// differently (a 64 KiB handle on 4 KiB chunks, a 4 KiB one inside an allocated 2 MiB).
    BadChunk { base: u64, size: ChunkSize },
    /// The chunk is not allocated: its root chunk is not held by this PMM, or it is free
    /// (a double free).
    NotAllocated { base: u64, size: ChunkSize },
    /// The chunk is in `state` where the operation needs `expected`.
    WrongState { base: u64, size: ChunkSize, state: ChunkState, expected: ChunkState },
    /// The root chunk is being evicted.
    Evicting { root: u64 },
    /// `finish_eviction`/`abort_eviction` on a root chunk that is not being evicted.
    NotEvicting { root: u64 },
    /// The root chunk holds `pinned` TEMP_PINNED chunks and cannot be evicted now.
    Pinned { root: u64, pinned: usize },
    /// The root chunk is not wholly free, so it cannot go back to the source.
    RootInUse { root: u64 },
    /// The source handed out a root chunk that is misaligned or already held.
    BadRoot { base: u64 },
    /// The VRAM allocator failed other than by running out.
    Vram(VramError),
}

impl fmt::Display for PmmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PmmError::NoMemory { size, root_chunks } => {
                write!(f, "no free {size} GPU chunk and no root chunk to split ({root_chunks} root chunks held)")
            }
            PmmError::BadChunk { base, size } => write!(f, "{base:#x} is not a {size} chunk"),
            PmmError::NotAllocated { base, size } => {
                write!(f, "{size} chunk {base:#x} is not allocated")
            }
            PmmError::WrongState { base, size, state, expected } => {
                write!(f, "{size} chunk {base:#x} is {state}, expected {expected}")
            }
            PmmError::Evicting { root } => write!(f, "root chunk {root:#x} is being evicted"),
            PmmError::NotEvicting { root } => {
                write!(f, "root chunk {root:#x} is not being evicted")
            }
            PmmError::Pinned { root, pinned } => {
                write!(f, "root chunk {root:#x} holds {pinned} temp-pinned chunks and cannot be evicted")
            }
            PmmError::RootInUse { root } => write!(f, "root chunk {root:#x} is not wholly free"),
            PmmError::BadRoot { base } => {
                write!(f, "root chunk source returned a bad root chunk {base:#x}")
            }
            PmmError::Vram(e) => write!(f, "VRAM allocator: {e}"),
        }
    }
}

/// Where root chunks come from (PMA in UVM).
pub trait RootChunkSource {
    /// A 2 MiB-aligned 2 MiB root chunk; [`PmmError::NoMemory`] when there is none.
    fn alloc_root(&mut self) -> Result<u64, PmmError>;
    /// Takes back a root chunk `alloc_root` returned.
    fn free_root(&mut self, base: u64);
}

/// Root chunks from the driver's VRAM allocator. The allocator hands out [`VramAllocation`]
/// values that must come back to free the memory, so this keeps them, by base. `A` is the
/// allocator itself or a `&mut` to one the driver shares.
pub struct VramRootSource<A: BorrowMut<VramAllocator> = VramAllocator> {
    vram: A,
    roots: BTreeMap<u64, VramAllocation>,
}

impl<A: BorrowMut<VramAllocator>> VramRootSource<A> {
    pub fn new(vram: A) -> Self {
        Self { vram, roots: BTreeMap::new() }
    }

    pub fn vram(&self) -> &VramAllocator {
        self.vram.borrow()
    }

    /// Root chunks handed out and not yet taken back.
    pub fn roots_held(&self) -> usize {
        self.roots.len()
    }
}

impl<A: BorrowMut<VramAllocator>> RootChunkSource for VramRootSource<A> {
    fn alloc_root(&mut self) -> Result<u64, PmmError> {
        let allocation = match self.vram.borrow_mut().alloc(ROOT_CHUNK_SIZE, ROOT_CHUNK_SIZE) {
            Ok(a) => a,
            Err(VramError::OutOfMemory { .. }) => {
                return Err(PmmError::NoMemory { size: ChunkSize::Size2M, root_chunks: self.roots.len() })
            }
            Err(e) => return Err(PmmError::Vram(e)),
        };
        let base = allocation.base();
        if !base.is_multiple_of(ROOT_CHUNK_SIZE)
            || allocation.size() != ROOT_CHUNK_SIZE
            || self.roots.contains_key(&base)
        {
            if let Err(e) = self.vram.borrow_mut().free(allocation) {
                log::warn!("pmm: could not return bad VRAM allocation {base:#x}: {e}");
            }
            return Err(PmmError::BadRoot { base });
        }
        self.roots.insert(base, allocation);
        Ok(base)
    }

    fn free_root(&mut self, base: u64) {
        match self.roots.remove(&base) {
            Some(allocation) => {
                if let Err(e) = self.vram.borrow_mut().free(allocation) {
                    log::warn!("pmm: VRAM allocator refused root chunk {base:#x}: {e}");
                }
            }
            None => log::warn!("pmm: root chunk {base:#x} was not handed out by this source"),
        }
    }
}

/// A fixed pool of root chunks at `base`, `base + 2 MiB`, ... (for tests and simulations); it
/// hands out the lowest free one first.
#[derive(Clone, Debug, Default)]
pub struct SimpleRootSource {
    free: BTreeSet<u64>,
    held: BTreeSet<u64>,
    /// `free_root` calls for a root that was not handed out.
    pub bad_frees: usize,
}

impl SimpleRootSource {
    /// `count` root chunks from `base` rounded up to 2 MiB; fewer if the addresses would
    /// overflow.
    pub fn new(base: u64, count: usize) -> Self {
        let mut free = BTreeSet::new();
        let first = base.checked_next_multiple_of(ROOT_CHUNK_SIZE);
        for i in 0..count as u64 {
            let Some(b) = first.and_then(|f| i.checked_mul(ROOT_CHUNK_SIZE)?.checked_add(f)) else {
                break;
            };
            if b.checked_add(ROOT_CHUNK_SIZE).is_none() {
                break;
            }
            free.insert(b);
        }
        Self { free, held: BTreeSet::new(), bad_frees: 0 }
    }

    /// Root chunks handed out and not yet taken back.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Root chunks still available.
    pub fn available(&self) -> usize {
        self.free.len()
    }
}

impl RootChunkSource for SimpleRootSource {
    fn alloc_root(&mut self) -> Result<u64, PmmError> {
        let base = self
            .free
            .pop_first()
            .ok_or(PmmError::NoMemory { size: ChunkSize::Size2M, root_chunks: self.held.len() })?;
        self.held.insert(base);
        Ok(base)
    }

    fn free_root(&mut self, base: u64) {
        if self.held.remove(&base) {
            self.free.insert(base);
        } else {
            self.bad_frees += 1;
        }
    }
}

/// The two LRU lists of root chunks that hold ALLOCATED chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RootList {
    /// `va_block_used`: least recently unpinned (or marked used) at the head.
    VaBlockUsed,
    /// `va_block_unused`: roots whose blocks hold no resident pages.
    VaBlockUnused,
}

impl RootList {
    const fn index(self) -> usize {
        match self {
            RootList::VaBlockUsed => 0,
            RootList::VaBlockUnused => 1,
        }
    }
}

/// Why a root chunk was chosen as the victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VictimKind {
    /// Wholly free: nothing to migrate; it can go back to the source ([`Pmm::release_root`]).
    FreeRoot,
    /// The head of `va_block_unused`.
    Unused,
    /// The head of `va_block_used`.
    Used,
}

/// The root chunk [`Pmm::pick_root_to_evict`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EvictionCandidate {
    pub root: u64,
    pub kind: VictimKind,
}

/// One allocated chunk inside a root chunk being evicted, and who owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EvictedChunk {
    pub owner: u64,
    pub chunk: GpuChunk,
}

/// Chunks of one size, by state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkCounts {
    pub free: usize,
    pub temp_pinned: usize,
    pub allocated: usize,
    pub split: usize,
}

impl ChunkCounts {
    pub fn get(&self, state: ChunkState) -> usize {
        match state {
            ChunkState::Free => self.free,
            ChunkState::TempPinned => self.temp_pinned,
            ChunkState::Allocated => self.allocated,
            ChunkState::Split => self.split,
        }
    }
}

/// A snapshot of the PMM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PmmStats {
    /// Root chunks taken from the source and held.
    pub root_chunks: usize,
    /// The cap on `root_chunks`, if any.
    pub max_root_chunks: Option<usize>,
    /// Held root chunks that are wholly free and allocatable.
    pub free_root_chunks: usize,
    /// Held root chunks being evicted.
    pub evicting_root_chunks: usize,
    /// Root chunks on `va_block_used` and `va_block_unused`.
    pub va_block_used: usize,
    pub va_block_unused: usize,
    /// Free bytes inside held root chunks (those being evicted included).
    pub free_bytes: u64,
    pub temp_pinned_bytes: u64,
    pub allocated_bytes: u64,
    /// Chunks per size ([`ChunkSize::index`]) and state.
    pub chunks: [ChunkCounts; 3],
}

impl PmmStats {
    pub fn count(&self, size: ChunkSize, state: ChunkState) -> usize {
        self.chunks.get(size.index()).map_or(0, |c| c.get(state))
    }
}

/// The state of an unsplit chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Leaf {
    Free,
    TempPinned(u64),
    Allocated(u64),
}

impl Leaf {
    fn state(self) -> ChunkState {
        match self {
            Leaf::Free => ChunkState::Free,
            Leaf::TempPinned(_) => ChunkState::TempPinned,
            Leaf::Allocated(_) => ChunkState::Allocated,
        }
    }
}

/// A 64 KiB chunk: whole, or 16 chunks of 4 KiB. Kept inline (264 bytes) rather than boxed:
/// a split root holds 32 of them in one heap block, and splitting a 64 KiB chunk then needs no
/// allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
enum Node64 {
    Whole(Leaf),
    Split([Leaf; CHUNKS_4K_PER_64K]),
}

/// A root chunk's tree: whole, or 32 chunks of 64 KiB (a `Vec` of exactly 32, kept on the
/// heap).
#[derive(Clone, Debug, PartialEq, Eq)]
enum RootTree {
    Whole(Leaf),
    Split(Vec<Node64>),
}

/// Every unsplit chunk of a tree: (offset in the root, size, state).
fn leaves(tree: &RootTree) -> Vec<(u64, ChunkSize, Leaf)> {
    let mut out = Vec::new();
    match tree {
        RootTree::Whole(leaf) => out.push((0, ChunkSize::Size2M, *leaf)),
        RootTree::Split(nodes) => {
            for (i, node) in nodes.iter().enumerate() {
                let off = i as u64 * CHUNK_64K;
                match node {
                    Node64::Whole(leaf) => out.push((off, ChunkSize::Size64K, *leaf)),
                    Node64::Split(small) => {
                        for (j, leaf) in small.iter().enumerate() {
                            out.push((off + j as u64 * CHUNK_4K, ChunkSize::Size4K, *leaf));
                        }
                    }
                }
            }
        }
    }
    out
}

impl RootTree {
    /// The unsplit chunk covering `offset` (below 2 MiB): its size and state.
    fn covering(&self, offset: u64) -> Option<(ChunkSize, Leaf)> {
        match self {
            RootTree::Whole(leaf) => Some((ChunkSize::Size2M, *leaf)),
            RootTree::Split(nodes) => match nodes.get((offset / CHUNK_64K) as usize)? {
                Node64::Whole(leaf) => Some((ChunkSize::Size64K, *leaf)),
                Node64::Split(small) => {
                    small.get(((offset % CHUNK_64K) / CHUNK_4K) as usize).map(|leaf| (ChunkSize::Size4K, *leaf))
                }
            },
        }
    }

    /// The unsplit chunk of exactly `size` at `offset` (aligned to `size`).
    fn leaf_mut(&mut self, offset: u64, size: ChunkSize) -> Option<&mut Leaf> {
        match (self, size) {
            (RootTree::Whole(leaf), ChunkSize::Size2M) if offset == 0 => Some(leaf),
            (RootTree::Split(nodes), ChunkSize::Size64K) => match nodes.get_mut((offset / CHUNK_64K) as usize)? {
                Node64::Whole(leaf) => Some(leaf),
                Node64::Split(_) => None,
            },
            (RootTree::Split(nodes), ChunkSize::Size4K) => match nodes.get_mut((offset / CHUNK_64K) as usize)? {
                Node64::Split(small) => small.get_mut(((offset % CHUNK_64K) / CHUNK_4K) as usize),
                Node64::Whole(_) => None,
            },
            _ => None,
        }
    }

    /// The state of the chunk of `size` at `offset`, split ones included; `None` if the tree
    /// has no chunk of that size there (it is part of a larger unsplit chunk).
    fn state_of(&self, offset: u64, size: ChunkSize) -> Option<ChunkState> {
        match (self, size) {
            (RootTree::Whole(leaf), ChunkSize::Size2M) => Some(leaf.state()),
            (RootTree::Split(_), ChunkSize::Size2M) => Some(ChunkState::Split),
            (RootTree::Split(nodes), ChunkSize::Size64K) => match nodes.get((offset / CHUNK_64K) as usize)? {
                Node64::Whole(leaf) => Some(leaf.state()),
                Node64::Split(_) => Some(ChunkState::Split),
            },
            (RootTree::Split(_), ChunkSize::Size4K) => {
                self.covering(offset).filter(|(s, _)| *s == size).map(|(_, l)| l.state())
            }
            _ => None,
        }
    }
}

/// One held root chunk.
#[derive(Clone, Debug)]
struct RootChunk {
    tree: RootTree,
    /// TEMP_PINNED and ALLOCATED chunks inside.
    pinned: usize,
    allocated: usize,
    evicting: bool,
    /// Marked unused by its owner: goes on `va_block_unused` rather than `va_block_used`.
    unused: bool,
    /// The LRU list it is on and its sequence number there.
    lru: Option<(RootList, u64)>,
}

impl RootChunk {
    fn new() -> Self {
        Self { tree: RootTree::Whole(Leaf::Free), pinned: 0, allocated: 0, evicting: false, unused: false, lru: None }
    }
}

/// The physical memory manager of one GPU.
///
/// Invariants: `free[s]` holds exactly the FREE unsplit chunks of size `s` inside root chunks
/// not being evicted (for 2 MiB: the wholly free roots); a root chunk is on an LRU list exactly
/// when it is not being evicted and holds an ALLOCATED chunk.
pub struct Pmm<S: RootChunkSource> {
    source: S,
    max_root_chunks: Option<usize>,
    roots: BTreeMap<u64, RootChunk>,
    free: [BTreeSet<u64>; 3],
    /// Per [`RootList`]: sequence number to root base; the head is the smallest.
    lru: [BTreeMap<u64, u64>; 2],
    next_seq: u64,
}

impl<S: RootChunkSource> Pmm<S> {
    /// A PMM over `source`, holding at most `max_root_chunks` root chunks (to run a GPU as if
    /// it had less VRAM), or as many as the source gives if `None`.
    pub fn new(source: S, max_root_chunks: Option<usize>) -> Self {
        Self {
            source,
            max_root_chunks,
            roots: BTreeMap::new(),
            free: [BTreeSet::new(), BTreeSet::new(), BTreeSet::new()],
            lru: [BTreeMap::new(), BTreeMap::new()],
            next_seq: 0,
        }
    }

    pub fn source(&self) -> &S {
        &self.source
    }

    pub fn source_mut(&mut self) -> &mut S {
        &mut self.source
    }

    pub fn max_root_chunks(&self) -> Option<usize> {
        self.max_root_chunks
    }

    /// Changes the cap. Lowering it below the roots held takes nothing back; it only stops new
    /// root chunks until enough are released.
    pub fn set_max_root_chunks(&mut self, max: Option<usize>) {
        self.max_root_chunks = max;
    }

    /// Allocates a chunk of `size` for `owner` (an opaque id, e.g. the va_block's), TEMP_PINNED
    /// until [`Pmm::unpin`]. Free space in held root chunks comes first (a free chunk of the
    /// size, else the smallest free larger chunk that is already split out, else a free root),
    /// then a new root chunk from the source.
    pub fn alloc(&mut self, size: ChunkSize, owner: u64) -> Result<GpuChunk, PmmError> {
        let base = self.take_free(size)?;
        let root_base = base & !(ROOT_CHUNK_SIZE - 1);
        let offset = base - root_base;
        let root = self.roots.get_mut(&root_base).ok_or(PmmError::BadChunk { base, size })?;
        let leaf = root.tree.leaf_mut(offset, size).ok_or(PmmError::BadChunk { base, size })?;
        *leaf = Leaf::TempPinned(owner);
        root.pinned += 1;
        Ok(GpuChunk { base, size })
    }

    /// Makes a TEMP_PINNED chunk ALLOCATED (evictable) and moves its root chunk to the tail of
    /// `va_block_used`.
    pub fn unpin(&mut self, chunk: GpuChunk) -> Result<(), PmmError> {
        let (root_base, offset) = self.check_handle(chunk)?;
        let root = self.live_root_mut(root_base, chunk)?;
        let leaf =
            root.tree.leaf_mut(offset, chunk.size).ok_or(PmmError::BadChunk { base: chunk.base, size: chunk.size })?;
        let Leaf::TempPinned(owner) = *leaf else {
            return Err(PmmError::WrongState {
                base: chunk.base,
                size: chunk.size,
                state: leaf.state(),
                expected: ChunkState::TempPinned,
            });
        };
        *leaf = Leaf::Allocated(owner);
        root.pinned = root.pinned.saturating_sub(1);
        root.allocated += 1;
        root.unused = false;
        let evicting = root.evicting;
        if !evicting {
            self.lru_push_tail(root_base, RootList::VaBlockUsed);
        }
        Ok(())
    }

    /// Frees a TEMP_PINNED or ALLOCATED chunk and merges it with its free siblings.
    pub fn free(&mut self, chunk: GpuChunk) -> Result<(), PmmError> {
        let (root_base, offset) = self.check_handle(chunk)?;
        let root = self.live_root_mut(root_base, chunk)?;
        let leaf =
            root.tree.leaf_mut(offset, chunk.size).ok_or(PmmError::BadChunk { base: chunk.base, size: chunk.size })?;
        match *leaf {
            Leaf::Free => return Err(PmmError::NotAllocated { base: chunk.base, size: chunk.size }),
            Leaf::TempPinned(_) => root.pinned = root.pinned.saturating_sub(1),
            Leaf::Allocated(_) => root.allocated = root.allocated.saturating_sub(1),
        }
        *leaf = Leaf::Free;
        if root.allocated == 0 {
            self.lru_remove(root_base);
        }
        self.merge(root_base, offset, chunk.size);
        Ok(())
    }

    /// The state of the chunk `chunk` names (SPLIT for a split one).
    pub fn chunk_state(&self, chunk: GpuChunk) -> Result<ChunkState, PmmError> {
        let (root_base, offset) = self.check_handle(chunk)?;
        let root = self.roots.get(&root_base).ok_or(PmmError::NotAllocated { base: chunk.base, size: chunk.size })?;
        root.tree.state_of(offset, chunk.size).ok_or(PmmError::BadChunk { base: chunk.base, size: chunk.size })
    }

    /// The owner an allocated (or temp-pinned) chunk was allocated for.
    pub fn owner(&self, chunk: GpuChunk) -> Result<u64, PmmError> {
        let (root_base, offset) = self.check_handle(chunk)?;
        let root = self.roots.get(&root_base).ok_or(PmmError::NotAllocated { base: chunk.base, size: chunk.size })?;
        match root.tree.covering(offset) {
            Some((size, Leaf::TempPinned(owner) | Leaf::Allocated(owner))) if size == chunk.size => Ok(owner),
            Some((_, Leaf::Free)) => Err(PmmError::NotAllocated { base: chunk.base, size: chunk.size }),
            _ => Err(PmmError::BadChunk { base: chunk.base, size: chunk.size }),
        }
    }

    /// Records that the blocks owning chunks in `chunk`'s root chunk hold no resident pages
    /// there: the root moves to the tail of `va_block_unused`, ahead of every used root as a
    /// victim. `chunk` must be allocated or temp-pinned.
    pub fn mark_root_chunk_unused(&mut self, chunk: GpuChunk) -> Result<(), PmmError> {
        self.set_root_unused(chunk, true)
    }

    /// Undoes [`Pmm::mark_root_chunk_unused`]: the root moves to the tail of `va_block_used`.
    pub fn mark_root_chunk_used(&mut self, chunk: GpuChunk) -> Result<(), PmmError> {
        self.set_root_unused(chunk, false)
    }

    fn set_root_unused(&mut self, chunk: GpuChunk, unused: bool) -> Result<(), PmmError> {
        self.owner(chunk)?;
        let root_base = chunk.root_base();
        let root =
            self.roots.get_mut(&root_base).ok_or(PmmError::NotAllocated { base: chunk.base, size: chunk.size })?;
        root.unused = unused;
        if !root.evicting && root.allocated > 0 {
            let list = if unused { RootList::VaBlockUnused } else { RootList::VaBlockUsed };
            self.lru_push_tail(root_base, list);
        }
        Ok(())
    }

    /// The list a root chunk is on, if any (for diagnostics and tests).
    pub fn root_list(&self, root: u64) -> Option<RootList> {
        self.roots.get(&root).and_then(|r| r.lru.map(|(list, _)| list))
    }

    /// The root chunks on `list`, head (next victim) first.
    pub fn list_roots(&self, list: RootList) -> Vec<u64> {
        self.lru.get(list.index()).map_or_else(Vec::new, |l| l.values().copied().collect())
    }

    /// The next root chunk to evict, in UVM's order: a wholly free root, else the first root
    /// of `va_block_unused`, else of `va_block_used`, skipping roots that hold TEMP_PINNED
    /// chunks. Roots being evicted are on no list and never chosen. It marks nothing.
    pub fn pick_root_to_evict(&self) -> Option<EvictionCandidate> {
        if let Some(&root) = self.free[ChunkSize::Size2M.index()].first() {
            return Some(EvictionCandidate { root, kind: VictimKind::FreeRoot });
        }
        for (list, kind) in [(RootList::VaBlockUnused, VictimKind::Unused), (RootList::VaBlockUsed, VictimKind::Used)] {
            let found = self
                .lru
                .get(list.index())
                .and_then(|l| l.values().copied().find(|base| self.roots.get(base).is_some_and(|r| r.pinned == 0)));
            if let Some(root) = found {
                return Some(EvictionCandidate { root, kind });
            }
        }
        None
    }

    /// Starts evicting root chunk `root`: no allocation lands in it until
    /// [`Pmm::finish_eviction`] or [`Pmm::abort_eviction`]. Returns every ALLOCATED chunk in
    /// it, by address, with its owner: the pages the caller must migrate away.
    pub fn begin_eviction(&mut self, root_base: u64) -> Result<Vec<EvictedChunk>, PmmError> {
        let root = self.held_root_mut(root_base)?;
        if root.evicting {
            return Err(PmmError::Evicting { root: root_base });
        }
        if root.pinned > 0 {
            return Err(PmmError::Pinned { root: root_base, pinned: root.pinned });
        }
        root.evicting = true;
        let evicted = leaves(&root.tree)
            .into_iter()
            .filter_map(|(off, size, leaf)| match leaf {
                Leaf::Allocated(owner) => Some(EvictedChunk { owner, chunk: GpuChunk { base: root_base + off, size } }),
                _ => None,
            })
            .collect();
        self.lru_remove(root_base);
        self.unlist_free_chunks(root_base);
        Ok(evicted)
    }

    /// Ends an eviction: frees every chunk still allocated in the root chunk (their owners
    /// have moved their pages away), merges it whole and makes it allocatable again.
    pub fn finish_eviction(&mut self, root_base: u64) -> Result<(), PmmError> {
        let root = self.held_root_mut(root_base)?;
        if !root.evicting {
            return Err(PmmError::NotEvicting { root: root_base });
        }
        if root.pinned > 0 {
            // Nothing is allocated in an evicting root, so nothing can be pinned in it.
            return Err(PmmError::Pinned { root: root_base, pinned: root.pinned });
        }
        root.tree = RootTree::Whole(Leaf::Free);
        root.allocated = 0;
        root.evicting = false;
        root.unused = false;
        self.lru_remove(root_base);
        self.unlist_free_chunks(root_base);
        self.free[ChunkSize::Size2M.index()].insert(root_base);
        Ok(())
    }

    /// Gives up an eviction: the root chunk keeps what is still allocated in it, its free
    /// chunks become allocatable again, and it goes back to the tail of its LRU list (the tail,
    /// so that the next pick tries another root first).
    pub fn abort_eviction(&mut self, root_base: u64) -> Result<(), PmmError> {
        let root = self.held_root_mut(root_base)?;
        if !root.evicting {
            return Err(PmmError::NotEvicting { root: root_base });
        }
        root.evicting = false;
        let (allocated, unused) = (root.allocated, root.unused);
        let free_chunks: Vec<(u64, ChunkSize)> = leaves(&root.tree)
            .into_iter()
            .filter(|(_, _, leaf)| *leaf == Leaf::Free)
            .map(|(off, size, _)| (root_base + off, size))
            .collect();
        for (base, size) in free_chunks {
            if let Some(list) = self.free.get_mut(size.index()) {
                list.insert(base);
            }
        }
        if allocated > 0 {
            let list = if unused { RootList::VaBlockUnused } else { RootList::VaBlockUsed };
            self.lru_push_tail(root_base, list);
        }
        Ok(())
    }

    /// Whether root chunk `root` is being evicted.
    pub fn is_evicting(&self, root: u64) -> bool {
        self.roots.get(&root).is_some_and(|r| r.evicting)
    }

    /// Returns a wholly free root chunk to the source.
    pub fn release_root(&mut self, root_base: u64) -> Result<(), PmmError> {
        let root = self.held_root_mut(root_base)?;
        if root.evicting {
            return Err(PmmError::Evicting { root: root_base });
        }
        if root.tree != RootTree::Whole(Leaf::Free) {
            return Err(PmmError::RootInUse { root: root_base });
        }
        self.roots.remove(&root_base);
        self.free[ChunkSize::Size2M.index()].remove(&root_base);
        self.source.free_root(root_base);
        Ok(())
    }

    /// Returns every wholly free root chunk to the source; how many went back.
    pub fn release_free_roots(&mut self) -> usize {
        let free: Vec<u64> = self.free[ChunkSize::Size2M.index()].iter().copied().collect();
        free.into_iter().filter(|&root| self.release_root(root).is_ok()).count()
    }

    pub fn stats(&self) -> PmmStats {
        let mut stats = PmmStats {
            root_chunks: self.roots.len(),
            max_root_chunks: self.max_root_chunks,
            free_root_chunks: self.free[ChunkSize::Size2M.index()].len(),
            evicting_root_chunks: self.roots.values().filter(|r| r.evicting).count(),
            va_block_used: self.lru[RootList::VaBlockUsed.index()].len(),
            va_block_unused: self.lru[RootList::VaBlockUnused.index()].len(),
            ..PmmStats::default()
        };
        for root in self.roots.values() {
            if let RootTree::Split(nodes) = &root.tree {
                stats.chunks[ChunkSize::Size2M.index()].split += 1;
                let split64 = nodes.iter().filter(|n| matches!(n, Node64::Split(_))).count();
                stats.chunks[ChunkSize::Size64K.index()].split += split64;
            }
            for (_, size, leaf) in leaves(&root.tree) {
                let Some(counts) = stats.chunks.get_mut(size.index()) else { continue };
                let bytes = size.bytes();
                match leaf {
                    Leaf::Free => {
                        counts.free += 1;
                        stats.free_bytes += bytes;
                    }
                    Leaf::TempPinned(_) => {
                        counts.temp_pinned += 1;
                        stats.temp_pinned_bytes += bytes;
                    }
                    Leaf::Allocated(_) => {
                        counts.allocated += 1;
                        stats.allocated_bytes += bytes;
                    }
                }
            }
        }
        stats
    }

    /// Checks that `chunk` is aligned to its size; returns its root base and offset there.
    fn check_handle(&self, chunk: GpuChunk) -> Result<(u64, u64), PmmError> {
        if !chunk.base.is_multiple_of(chunk.size.bytes()) {
            return Err(PmmError::BadChunk { base: chunk.base, size: chunk.size });
        }
        let root = chunk.root_base();
        Ok((root, chunk.base - root))
    }

    /// The root chunk of `chunk`, after telling a double free (the place is free, perhaps
    /// merged into a larger free chunk) from a handle of the wrong size.
    fn live_root_mut(&mut self, root_base: u64, chunk: GpuChunk) -> Result<&mut RootChunk, PmmError> {
        let not_allocated = PmmError::NotAllocated { base: chunk.base, size: chunk.size };
        let root = self.roots.get_mut(&root_base).ok_or(not_allocated)?;
        match root.tree.covering(chunk.base - root_base) {
            Some((size, _)) if size == chunk.size => Ok(root),
            Some((_, Leaf::Free)) => Err(not_allocated),
            _ => Err(PmmError::BadChunk { base: chunk.base, size: chunk.size }),
        }
    }

    fn held_root_mut(&mut self, root_base: u64) -> Result<&mut RootChunk, PmmError> {
        if !root_base.is_multiple_of(ROOT_CHUNK_SIZE) {
            return Err(PmmError::BadChunk { base: root_base, size: ChunkSize::Size2M });
        }
        self.roots.get_mut(&root_base).ok_or(PmmError::NotAllocated { base: root_base, size: ChunkSize::Size2M })
    }

    /// A FREE unsplit chunk of exactly `size`, taken off its free list: an existing one, else
    /// one split out of a larger free chunk (recursively), else from a new root chunk.
    fn take_free(&mut self, size: ChunkSize) -> Result<u64, PmmError> {
        if let Some(base) = self.free.get_mut(size.index()).and_then(BTreeSet::pop_first) {
            return Ok(base);
        }
        let Some(parent) = size.parent() else {
            return self.take_new_root();
        };
        let base = self.take_free(parent).map_err(|e| match e {
            PmmError::NoMemory { root_chunks, .. } => PmmError::NoMemory { size, root_chunks },
            e => e,
        })?;
        self.split(base, parent)?;
        Ok(base)
    }

    /// Splits the FREE unsplit chunk at `base` (off every free list) into free children and
    /// lists all but the first, which the caller takes.
    fn split(&mut self, base: u64, size: ChunkSize) -> Result<(), PmmError> {
        let bad = PmmError::BadChunk { base, size };
        let root_base = base & !(ROOT_CHUNK_SIZE - 1);
        let offset = base - root_base;
        let root = self.roots.get_mut(&root_base).ok_or(bad)?;
        let (child, count) = match size {
            ChunkSize::Size2M if root.tree == RootTree::Whole(Leaf::Free) => {
                root.tree = RootTree::Split(vec![Node64::Whole(Leaf::Free); CHUNKS_64K_PER_ROOT]);
                (ChunkSize::Size64K, CHUNKS_64K_PER_ROOT)
            }
            ChunkSize::Size64K => {
                let RootTree::Split(nodes) = &mut root.tree else { return Err(bad) };
                let node = nodes.get_mut((offset / CHUNK_64K) as usize).ok_or(bad)?;
                if *node != Node64::Whole(Leaf::Free) {
                    return Err(bad);
                }
                *node = Node64::Split([Leaf::Free; CHUNKS_4K_PER_64K]);
                (ChunkSize::Size4K, CHUNKS_4K_PER_64K)
            }
            _ => return Err(bad),
        };
        if let Some(list) = self.free.get_mut(child.index()) {
            list.extend((1..count as u64).map(|i| base + i * child.bytes()));
        }
        Ok(())
    }

    fn take_new_root(&mut self) -> Result<u64, PmmError> {
        let held = self.roots.len();
        let no_memory = PmmError::NoMemory { size: ChunkSize::Size2M, root_chunks: held };
        if self.max_root_chunks.is_some_and(|max| held >= max) {
            return Err(no_memory);
        }
        let base = match self.source.alloc_root() {
            Ok(base) => base,
            Err(PmmError::NoMemory { .. }) => return Err(no_memory),
            Err(e) => return Err(e),
        };
        if !base.is_multiple_of(ROOT_CHUNK_SIZE)
            || base.checked_add(ROOT_CHUNK_SIZE).is_none()
            || self.roots.contains_key(&base)
        {
            // Not ours to give back: a duplicate is someone's live root chunk.
            return Err(PmmError::BadRoot { base });
        }
        self.roots.insert(base, RootChunk::new());
        Ok(base)
    }

    /// After the unsplit chunk at `offset` became FREE: merges it with its siblings while they
    /// are all free, then lists the resulting chunk (unless its root is being evicted).
    fn merge(&mut self, root_base: u64, offset: u64, size: ChunkSize) {
        let Some(root) = self.roots.get_mut(&root_base) else { return };
        let mut size = size;
        let mut offset = offset;
        let mut unlisted: Vec<(ChunkSize, u64)> = Vec::new();
        if size == ChunkSize::Size4K {
            if let RootTree::Split(nodes) = &mut root.tree {
                let i = (offset / CHUNK_64K) as usize;
                if let Some(node) = nodes.get_mut(i) {
                    if matches!(node, Node64::Split(small) if small.iter().all(|l| *l == Leaf::Free)) {
                        *node = Node64::Whole(Leaf::Free);
                        let parent = i as u64 * CHUNK_64K;
                        unlisted.extend(
                            (0..CHUNKS_4K_PER_64K as u64)
                                .map(|j| (ChunkSize::Size4K, root_base + parent + j * CHUNK_4K)),
                        );
                        size = ChunkSize::Size64K;
                        offset = parent;
                    }
                }
            }
        }
        if size == ChunkSize::Size64K {
            if let RootTree::Split(nodes) = &root.tree {
                if nodes.iter().all(|n| *n == Node64::Whole(Leaf::Free)) {
                    root.tree = RootTree::Whole(Leaf::Free);
                    unlisted.extend(
                        (0..CHUNKS_64K_PER_ROOT as u64).map(|j| (ChunkSize::Size64K, root_base + j * CHUNK_64K)),
                    );
                    size = ChunkSize::Size2M;
                    offset = 0;
                }
            }
        }
        let evicting = root.evicting;
        for (s, base) in unlisted {
            if let Some(list) = self.free.get_mut(s.index()) {
                list.remove(&base);
            }
        }
        if !evicting {
            if let Some(list) = self.free.get_mut(size.index()) {
                list.insert(root_base + offset);
            }
        }
    }

    /// Takes every free chunk of root `root_base` off the free lists.
    fn unlist_free_chunks(&mut self, root_base: u64) {
        let end = root_base.saturating_add(ROOT_CHUNK_SIZE);
        for list in &mut self.free {
            let inside: Vec<u64> = list.range(root_base..end).copied().collect();
            for base in inside {
                list.remove(&base);
            }
        }
    }

    fn lru_remove(&mut self, root_base: u64) {
        let Some(root) = self.roots.get_mut(&root_base) else { return };
        if let Some((list, seq)) = root.lru.take() {
            if let Some(l) = self.lru.get_mut(list.index()) {
                l.remove(&seq);
            }
        }
    }

    fn lru_push_tail(&mut self, root_base: u64, list: RootList) {
        self.lru_remove(root_base);
        let seq = match self.next_seq.checked_add(1) {
            Some(next) => core::mem::replace(&mut self.next_seq, next),
            None => self.renumber_lru(),
        };
        let Some(root) = self.roots.get_mut(&root_base) else { return };
        root.lru = Some((list, seq));
        if let Some(l) = self.lru.get_mut(list.index()) {
            l.insert(seq, root_base);
        }
    }

    /// Renumbers both lists from 0, keeping their order, when the sequence counter runs out;
    /// returns the next free number.
    fn renumber_lru(&mut self) -> u64 {
        let mut seq = 0u64;
        for (index, list) in [RootList::VaBlockUsed, RootList::VaBlockUnused].into_iter().enumerate() {
            let Some(l) = self.lru.get_mut(index) else { continue };
            let order: Vec<u64> = core::mem::take(l).into_values().collect();
            for base in order {
                l.insert(seq, base);
                if let Some(root) = self.roots.get_mut(&base) {
                    root.lru = Some((list, seq));
                }
                seq += 1;
            }
        }
        self.next_seq = seq + 1;
        seq
    }
}

#[cfg(test)]
mod tests;
