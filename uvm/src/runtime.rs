//! Managed memory for applications on the runtime's [`Gpu`] (the `cudaMallocManaged`
//! equivalent): one UVM context over one GPU, with its replayable fault buffer set up through
//! RM, GPU memory from a PMM over VRAM the context takes from the GPU's allocator, and system
//! memory for CPU-resident pages in DMA memory.
//!
//! How it runs, as NVIDIA's UVM does on a GPU with replayable faults:
//! - [`UnifiedMemory::new`] allocates `MMU_FAULT_BUFFER` (class `0xc369`) under the subdevice,
//!   DMA memory for its entries, and registers the pages with
//!   `NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER` (physical RM programs and enables the
//!   buffer). The [`Gpu`] must have been opened with [`nvgpu::runtime::GpuConfig::page_faulting`].
//! - [`UnifiedMemory::alloc_managed`] reserves a 2 MiB-aligned VA range with nothing mapped and
//!   creates the managed va_range: pages arrive on first touch.
//! - A kernel touching unmapped pages stalls on replayable faults; [`UnifiedMemory::synchronize`]
//!   runs the bottom half ([`crate::replayable::service_replayable_faults`]: fetch, coalesce,
//!   service per va_block with prefetch and thrashing, flush, replay with `MEM_OP` on the
//!   default stream's channel) until the stream's work completes. Fatal faults are cancelled
//!   precisely and come back as [`ManagedError::FatalFault`].
//! - CPU access goes through [`UnifiedMemory::read`] / [`UnifiedMemory::write`]: each page is
//!   serviced for the CPU first (migrated back from VRAM on the copy engine), as the kernel's
//!   page-fault handler does for the unikernel's CPU code.
//! - When the VRAM budget runs out, the PMM names its least recently used root chunk and its
//!   pages are evicted to system memory.

use alloc::vec::Vec;
use core::fmt;

use nvgpu::ce::{CeAddress, CeAperture, MemsetPattern, Pipelining};
use nvgpu::gsp::commands::RpcChannel;
use nvgpu::hw::vm::{
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET as GET, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT as PUT,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_REPLAY_FAULT_BUFFER as REPLAYABLE, VF_BASE,
};
use nvgpu::hw::RegisterIo;
use nvgpu::intr::VectorControl;
use nvgpu::mm::format::PageSize;
use nvgpu::mm::{PteAttrs, VramAllocation};
use nvgpu::platform::{Clock, DmaAllocator, DmaBuffer, DmaRangeError};
use nvgpu::rm::intr::KernelIntrTable;
use nvgpu::rm::{AnyObject, Handle, InternalSubdevice};
use nvgpu::runtime::{Gpu, RuntimeError, Stream};

use crate::fault::batch::ServiceConfig;
use crate::fault::buffer::{FaultBufferMemory, FaultBufferRegisters, FetchConfig, ReplayableFaultBuffer};
use crate::fault::entry::RawFaultEntry;
use crate::gpu_mapping::GpuMapper;
use crate::gpu_memory::GpuMemory;
use crate::page_mask::{PAGE_SIZE, VA_BLOCK_SIZE};
use crate::perf::prefetch::PrefetchConfig;
use crate::pmm::{Pmm, SimpleRootSource};
use crate::policy::{Advice, ProcessorTopology, VaPolicy};
use crate::processor::ProcessorId;
use crate::replayable::{
    service_replayable_faults, BottomHalfState, CancelledFault, FaultingGpu, ReplayChannel, ReplayChannelError,
};
use crate::service::{
    BackendError, Location, NoPrefetch, PageAccess, PageCopy, PrefetchPolicy, Prefetcher, UvmBackend, UvmContext,
    UvmStats,
};
use crate::va_block::{AccessType, MappingTarget, Prot};

/// Naps a CPU access or prefetch waits out on a throttled block before it gives up (the
/// throttle lasts one nap; a pin follows after a few).
const MAX_THROTTLE_NAPS: u32 = 64;

/// The GPU's index in the context (one GPU).
const GPU: u8 = 0;

/// How a context is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ManagedConfig {
    /// VRAM the context may hold, in bytes (rounded down to 2 MiB root chunks, at least one):
    /// less than the working set runs oversubscribed.
    pub vram_bytes: u64,
    /// UVM's prefetch heuristic (`uvm_perf_prefetch_enable`).
    pub prefetch: bool,
    /// Entries of the replayable fault buffer (32 bytes each, at most 256 pages).
    pub fault_buffer_entries: u32,
    /// Bottom halves run while one stream is waited for before the wait is given up.
    pub max_bottom_halves: u32,
}

impl Default for ManagedConfig {
    fn default() -> Self {
        ManagedConfig { vram_bytes: 64 << 20, prefetch: true, fault_buffer_entries: 1024, max_bottom_halves: 100_000 }
    }
}

/// A managed buffer: `len` bytes at GPU VA `va`, the same address for every processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ManagedBuffer {
    pub va: u64,
    pub len: usize,
}

impl ManagedBuffer {
    /// The address kernels take.
    pub fn device_ptr(&self) -> u64 {
        self.va
    }
}

/// Why managed memory failed.
#[derive(Debug)]
pub enum ManagedError {
    Runtime(RuntimeError),
    /// A kernel's access could not be serviced: cancelled precisely; the launch's channel was
    /// stopped by the GPU.
    FatalFault {
        va: u64,
        access: AccessType,
        reason: &'static str,
    },
    /// Servicing failed (out of memory everywhere, a copy or mapping error).
    Service(crate::service::ServiceError),
    /// The bottom half failed (fault buffer protocol, replay channel).
    BottomHalf(crate::replayable::BottomHalfError),
    /// An address or length outside every managed buffer.
    OutOfRange {
        va: u64,
        len: usize,
    },
    /// Thrashing kept throttling the processor on the block at `va` through `naps` naps.
    Throttled {
        va: u64,
        naps: u32,
    },
    /// The stream neither completed nor faulted within the bottom halves allowed.
    Stuck {
        bottom_halves: u32,
    },
    /// Neither the stream's work completed nor the replayable fault interrupt (`vector`) came
    /// within the GPU's `timeout_ms`.
    WaitTimeout {
        vector: u32,
        timeout_ms: u64,
    },
}

impl fmt::Display for ManagedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Runtime(e) => write!(f, "{e}"),
            Self::FatalFault { va, access, reason } => {
                write!(f, "fatal GPU fault at {va:#x} ({}): {reason}", access_name(*access))
            }
            Self::Service(e) => write!(f, "unified memory: {e:?}"),
            Self::BottomHalf(e) => write!(f, "replayable faults: {e}"),
            Self::OutOfRange { va, len } => write!(f, "{len} bytes at {va:#x} are not managed memory"),
            Self::Throttled { va, naps } => {
                write!(f, "thrashing throttled access to the block at {va:#x} through {naps} naps")
            }
            Self::Stuck { bottom_halves } => {
                write!(f, "the stream did not complete after {bottom_halves} fault-servicing passes")
            }
            Self::WaitTimeout { vector, timeout_ms } => write!(
                f,
                "timed out after {timeout_ms} ms waiting for the stream's work to complete or for the \
                 replayable fault interrupt (vector {vector})"
            ),
        }
    }
}

/// The access type as the fatal-fault line names it.
pub fn access_name(a: AccessType) -> &'static str {
    match a {
        AccessType::Prefetch => "prefetch",
        AccessType::Read => "read",
        AccessType::Write => "write",
        AccessType::AtomicWeak => "atomic (weak)",
        AccessType::AtomicStrong => "atomic",
    }
}

impl From<RuntimeError> for ManagedError {
    fn from(e: RuntimeError) -> Self {
        Self::Runtime(e)
    }
}

/// The fault buffer's entries, in DMA memory.
pub struct DmaEntries(DmaBuffer);

impl FaultBufferMemory for DmaEntries {
    fn read_entry(&self, index: u32) -> RawFaultEntry {
        let at = index as usize * 32;
        // Volatile: the GPU writes entries while the driver reads them. Out of range reads as
        // an empty (invalid) entry.
        let mut e = [0u8; 32];
        if !self.0.read_volatile_bytes(at, &mut e) {
            e = [0u8; 32];
        }
        e
    }
    fn clear_valid(&mut self, index: u32) {
        let at = index as usize * 32;
        let mut e = [0u8; 32];
        if self.0.read_volatile_bytes(at, &mut e) {
            nvgpu::hw::fault::NVC369_BUF_ENTRY_VALID.set(&mut e, 0);
            self.0.write_volatile_bytes(at, &e);
        }
    }
}

/// `GET`/`PUT` of the replayable buffer, through BAR0.
pub struct BarRegisters<'a, R: RegisterIo + ?Sized>(&'a R);

impl<R: RegisterIo + ?Sized> FaultBufferRegisters for BarRegisters<'_, R> {
    fn read_put(&self) -> u32 {
        self.0.read32(PUT::address(VF_BASE, REPLAYABLE))
    }
    fn read_get(&self) -> u32 {
        self.0.read32(GET::address(VF_BASE, REPLAYABLE))
    }
    fn write_get(&mut self, raw: u32) {
        self.0.write32(GET::address(VF_BASE, REPLAYABLE), raw)
    }
}

/// System memory for CPU-resident pages: each managed buffer brings DMA memory of its size,
/// whose 4 KiB pages join the context's pool of CPU pages (UVM places CPU pages anywhere; the
/// block records where).
struct Backing {
    va: u64,
    size: u64,
    dma: DmaBuffer,
}

/// The CPU's page tables for managed memory, where the platform has them (the unikernel: a CPU
/// access to a page not mapped there takes a page fault, which the kernel resolves with
/// [`UnifiedMemory::cpu_fault`]). Without them, CPU code reaches managed memory through
/// [`UnifiedMemory::read`], [`UnifiedMemory::write`] and [`UnifiedMemory::cpu_pages`].
///
/// Managed buffers keep one GPU VA for every GPU; their CPU address is the platform's choice
/// (a unikernel's window for managed memory need not be where the GPU's VA space has room).
pub trait CpuMappings {
    /// CPU addresses for a managed range of `size` bytes (a multiple of 2 MiB): the address of
    /// its first byte, 2 MiB-aligned, with nothing mapped.
    fn reserve(&mut self, size: u64) -> Option<u64>;
    /// Maps the 4 KiB page of system memory at bus address `bus` (DMA memory of the GPU's
    /// allocator) at CPU address `cpu_va`, writable or read-only.
    fn map(&mut self, cpu_va: u64, bus: u64, writable: bool) -> bool;
    /// Removes the mapping at `cpu_va` if there is one, the CPU's TLB entry with it.
    fn unmap(&mut self, cpu_va: u64);
    /// Gives back what [`CpuMappings::reserve`] handed out (every page already unmapped).
    fn release(&mut self, cpu_va: u64, size: u64);
}

/// Where each managed range is on the CPU, when the platform maps managed memory there.
#[derive(Default)]
struct CpuSide {
    mappings: Option<alloc::boxed::Box<dyn CpuMappings>>,
    /// (GPU VA, reserved size, CPU address), one per managed range.
    ranges: Vec<(u64, u64, u64)>,
}

impl CpuSide {
    /// The CPU address of managed VA `va`.
    fn cpu_of(&self, va: u64) -> Option<u64> {
        self.ranges.iter().find(|&&(v, size, _)| va >= v && va - v < size).map(|&(v, _, cpu)| cpu + (va - v))
    }
    /// The managed VA at CPU address `cpu`.
    fn va_of(&self, cpu: u64) -> Option<u64> {
        self.ranges.iter().find(|&&(_, size, c)| cpu >= c && cpu - c < size).map(|&(v, _, c)| v + (cpu - c))
    }
}

enum Prefetch {
    On(Prefetcher),
    Off(NoPrefetch),
}

impl PrefetchPolicy for Prefetch {
    fn hint(
        &mut self,
        block: &crate::va_block::VaBlock,
        dst: ProcessorId,
        faulted: &crate::page_mask::PageMask,
        thrashing: &crate::page_mask::PageMask,
        preferred: Option<ProcessorId>,
    ) -> crate::page_mask::PageMask {
        match self {
            Prefetch::On(p) => p.hint(block, dst, faulted, thrashing, preferred),
            Prefetch::Off(p) => p.hint(block, dst, faulted, thrashing, preferred),
        }
    }
}

/// One UVM context on one GPU.
pub struct UnifiedMemory<'a, R: RegisterIo + ?Sized> {
    pub ctx: UvmContext,
    memory: GpuMemory<SimpleRootSource>,
    pool: Option<VramAllocation>,
    backing: Vec<Backing>,
    /// Free CPU pages (bus addresses in the backings).
    cpu_free: Vec<u64>,
    cpu: CpuSide,
    buffer: ReplayableFaultBuffer<DmaEntries, BarRegisters<'a, R>>,
    fault_object: Handle<AnyObject>,
    prefetch: Prefetch,
    service: ServiceConfig,
    bottom_half: BottomHalfState,
    graphics_engine_base: u16,
    /// The replayable fault buffer's interrupt vector, from GSP-RM's interrupt table.
    fault_interrupt: VectorControl,
    config: ManagedConfig,
    /// Faults cancelled so far, oldest first.
    pub cancelled: Vec<CancelledFault>,
    /// Replayable fault interrupts taken (each ran one bottom half).
    pub fault_interrupts: u64,
}

impl<'a, R: RegisterIo + ?Sized> UnifiedMemory<'a, R> {
    /// Sets up managed memory on `gpu`: the VRAM pool, the replayable fault buffer (through
    /// RM: `MMU_FAULT_BUFFER`, then registration on GSP-RM's `internal` subdevice).
    pub fn new<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        gpu: &mut Gpu<'a, R, A, C>,
        rpc: &mut impl RpcChannel,
        internal: InternalSubdevice,
        config: ManagedConfig,
    ) -> Result<Self, ManagedError> {
        if !gpu.config().page_faulting {
            return Err(
                RuntimeError::Unsupported { what: "managed memory on a GPU opened without page_faulting" }.into()
            );
        }
        let roots = (config.vram_bytes / VA_BLOCK_SIZE).max(1);
        let pool = gpu.vram_mut().alloc(roots * VA_BLOCK_SIZE, VA_BLOCK_SIZE).map_err(RuntimeError::from)?;
        let base = pool.base();
        let memory = GpuMemory::new(Pmm::new(SimpleRootSource::new(base, roots as usize), None));
        let bytes = config.fault_buffer_entries.saturating_mul(32);
        let entries = gpu.dma().alloc(bytes as usize).map_err(RuntimeError::from)?;
        let undo = |gpu: &mut Gpu<'a, R, A, C>, entries: DmaBuffer, pool: VramAllocation| {
            gpu.dma().free(entries);
            let _ = gpu.vram_mut().free(pool);
        };
        // The vector RM would hand UVM for the buffer (its table's MC_ENGINE_IDX_REPLAYABLE_FAULT).
        let table = match KernelIntrTable::query(rpc, internal) {
            Ok(t) => t,
            Err(e) => {
                undo(gpu, entries, pool);
                return Err(match e {
                    nvgpu::rm::intr::IntrTableError::Rm(e) => RuntimeError::from(e).into(),
                    nvgpu::rm::intr::IntrTableError::TableLen { .. } => RuntimeError::Unsupported {
                        what: "a GSP-RM interrupt table longer than NV2080_CTRL_INTERNAL_INTR_MAX_TABLE_SIZE",
                    }
                    .into(),
                });
            }
        };
        let Some(fault_interrupt) = table.replayable_fault_vector().and_then(|v| VectorControl::new(v).ok()) else {
            undo(gpu, entries, pool);
            return Err(RuntimeError::Unsupported {
                what: "a GPU whose GSP-RM interrupt table names no usable replayable-fault vector",
            }
            .into());
        };
        let object = match gpu.alloc_subdevice_object(rpc, nvgpu::hw::fault::MMU_FAULT_BUFFER, &[]) {
            Ok(o) => o,
            Err(e) => {
                undo(gpu, entries, pool);
                return Err(e.into());
            }
        };
        let registered =
            nvgpu::rm::gmmu::register_params(gpu.client_handle(), object.raw(), entries.bus_address(), bytes)
                .and_then(|mut p| nvgpu::rm::gmmu::register_fault_buffer(rpc, internal, &mut p));
        if let Err(e) = registered {
            let _ = gpu.free_object(rpc, object);
            undo(gpu, entries, pool);
            return Err(RuntimeError::Unsupported {
                what: match e {
                    nvgpu::rm::gmmu::RegisterFaultBufferError::BadSize { .. } => "a fault buffer of this size",
                    nvgpu::rm::gmmu::RegisterFaultBufferError::Rm(_) => {
                        "GSP-RM refused NV2080_CTRL_CMD_INTERNAL_GMMU_REGISTER_FAULT_BUFFER"
                    }
                },
            }
            .into());
        }
        let buffer = ReplayableFaultBuffer::new(
            DmaEntries(entries),
            BarRegisters(gpu.io()),
            config.fault_buffer_entries,
            FetchConfig::default(),
        )
        .map_err(|e| ManagedError::BottomHalf(e.into()))?;
        let service = ServiceConfig::default();
        let prefetch = if config.prefetch {
            Prefetch::On(Prefetcher::new(PrefetchConfig::default()))
        } else {
            Prefetch::Off(NoPrefetch)
        };
        let graphics_engine_base = gpu.chipset().hal().fault_graphics_engine_base;
        fault_interrupt.enable(gpu.io());
        Ok(UnifiedMemory {
            ctx: UvmContext::new(),
            memory,
            pool: Some(pool),
            backing: Vec::new(),
            cpu_free: Vec::new(),
            cpu: CpuSide::default(),
            buffer,
            fault_object: object,
            prefetch,
            bottom_half: BottomHalfState::new(&service),
            service,
            graphics_engine_base,
            fault_interrupt,
            config,
            cancelled: Vec::new(),
            fault_interrupts: 0,
        })
    }

    /// The context's statistics.
    pub fn stats(&self) -> UvmStats {
        self.ctx.stats
    }

    /// Maps managed memory in the CPU's page tables from now on (before the first
    /// [`UnifiedMemory::alloc_managed`]: buffers made earlier have no CPU address).
    pub fn set_cpu_mappings(&mut self, mappings: alloc::boxed::Box<dyn CpuMappings>) -> Result<(), ManagedError> {
        if !self.backing.is_empty() {
            return Err(RuntimeError::Unsupported { what: "CPU mappings set after managed buffers exist" }.into());
        }
        self.cpu.mappings = Some(mappings);
        Ok(())
    }

    /// Where CPU code finds `buf` (with [`CpuMappings`] set): its first byte's CPU address.
    pub fn cpu_address(&self, buf: &ManagedBuffer) -> Option<u64> {
        self.cpu.cpu_of(buf.va)
    }

    /// The CPU page-fault service: a CPU access at CPU address `cpu_addr` (a write, or a read)
    /// found no mapping. `Ok(false)` when the address is in no managed buffer of this context
    /// (not this context's fault); `Ok(true)` when the page is now resident on the CPU and
    /// mapped there (migrated back from the GPU on the copy engine when it was there), so the
    /// faulting instruction can be re-executed. A write counts as ATOMIC_STRONG, as in UVM's
    /// `uvm_va_block_cpu_fault`: the CPU copy becomes the only one.
    pub fn cpu_fault<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        cpu_addr: u64,
        write: bool,
    ) -> Result<bool, ManagedError> {
        let Some(va) = self.cpu.va_of(cpu_addr) else { return Ok(false) };
        if self.check_range(va, 1).is_err() {
            return Ok(false);
        }
        self.ctx.stats.cpu_faults += 1;
        let access = if write { AccessType::AtomicStrong } else { AccessType::Read };
        self.for_pages(gpu, va & !(PAGE_SIZE - 1), 1, ProcessorId::Cpu, access)?;
        Ok(true)
    }

    /// CPU code over `[va, va + len)` in place, without CPU page tables: the pages are serviced
    /// for a CPU write (migrated back, other copies dropped), then `f(offset, bytes)` sees each
    /// piece within one page, in order, as the CPU's copy of it.
    pub fn cpu_pages<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        va: u64,
        len: usize,
        mut f: impl FnMut(usize, &mut [u8]),
    ) -> Result<(), ManagedError> {
        self.check_range(va, len)?;
        self.ctx.stats.cpu_faults += 1;
        self.for_pages(gpu, va, len, ProcessorId::Cpu, AccessType::AtomicStrong)?;
        // Each piece is copied out of its page, handed to `f`, and copied back.
        let mut piece = [0u8; PAGE_SIZE as usize];
        self.each_cpu_span(va, len, |dma, off, done, n| {
            let piece = &mut piece[..n];
            dma.read(off, piece)?;
            f(done, piece);
            dma.write(off, piece)
        })
    }

    /// A managed buffer of `len` bytes (rounded up to 4 KiB pages), resident nowhere until
    /// first touched (then zero-filled).
    pub fn alloc_managed<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        len: usize,
    ) -> Result<ManagedBuffer, ManagedError> {
        let size = (len.max(1) as u64).next_multiple_of(PAGE_SIZE);
        let va = gpu
            .va_space_mut()
            .reserve_va(size.next_multiple_of(VA_BLOCK_SIZE), VA_BLOCK_SIZE)
            .map_err(RuntimeError::from)?;
        let dma = match gpu.dma().alloc(size as usize) {
            Ok(d) => d,
            Err(e) => {
                let _ = gpu.va_space_mut().release_va(va, size.next_multiple_of(VA_BLOCK_SIZE));
                return Err(RuntimeError::from(e).into());
            }
        };
        if self.ctx.va_space.create_managed_range(va, size, VaPolicy::default()).is_err() {
            gpu.dma().free(dma);
            let _ = gpu.va_space_mut().release_va(va, size.next_multiple_of(VA_BLOCK_SIZE));
            return Err(ManagedError::OutOfRange { va, len });
        }
        if let Some(m) = self.cpu.mappings.as_mut() {
            let reserved = size.next_multiple_of(VA_BLOCK_SIZE);
            let Some(cpu) = m.reserve(reserved) else {
                let _ = self.ctx.va_space.destroy_ranges(va, size);
                gpu.dma().free(dma);
                let _ = gpu.va_space_mut().release_va(va, reserved);
                return Err(
                    RuntimeError::Unsupported { what: "CPU addresses for a managed buffer of this size" }.into()
                );
            };
            self.cpu.ranges.push((va, reserved, cpu));
        }
        let bus = dma.bus_address();
        self.cpu_free.extend((0..size / PAGE_SIZE).rev().map(|i| bus + i * PAGE_SIZE));
        self.backing.push(Backing { va, size, dma });
        Ok(ManagedBuffer { va, len })
    }

    /// `cudaMemAdvise` over `[va, va + len)`.
    pub fn advise(&mut self, va: u64, len: usize, advice: Advice) -> Result<(), ManagedError> {
        self.ctx.va_space.advise(va, len as u64, advice).map_err(|e| ManagedError::Service(e.into()))
    }

    /// `cudaMemPrefetchAsync` (waited for): migrates `[va, va + len)` to `to`.
    pub fn prefetch<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        va: u64,
        len: usize,
        to: ProcessorId,
    ) -> Result<(), ManagedError> {
        self.check_range(va, len)?;
        let access = if to.is_cpu() { AccessType::Write } else { AccessType::Read };
        self.for_pages(gpu, va, len, to, access)
    }

    fn check_range(&self, va: u64, len: usize) -> Result<(), ManagedError> {
        let end = va.checked_add(len as u64).ok_or(ManagedError::OutOfRange { va, len })?;
        if self.backing.iter().any(|b| va >= b.va && end <= b.va + b.size) {
            Ok(())
        } else {
            Err(ManagedError::OutOfRange { va, len })
        }
    }

    /// Services every page of `[va, va + len)` for `processor`, block by block.
    fn for_pages<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        va: u64,
        len: usize,
        processor: ProcessorId,
        access: AccessType,
    ) -> Result<(), ManagedError> {
        let end = va + len as u64;
        let mut at = va & !(PAGE_SIZE - 1);
        let mut pages = Vec::new();
        while at < end {
            let block_end = ((at / VA_BLOCK_SIZE) + 1) * VA_BLOCK_SIZE;
            pages.clear();
            let mut p = at;
            while p < end.min(block_end) {
                pages.push(PageAccess { page: ((p % VA_BLOCK_SIZE) / PAGE_SIZE) as usize, access });
                p += PAGE_SIZE;
            }
            // Thrashing may throttle the processor on this block: as UVM's CPU fault path
            // does, wait out the nap and service again (bounded).
            let mut naps = 0;
            loop {
                let mut backend = RuntimeBackend {
                    gpu: &mut *gpu,
                    memory: &mut self.memory,
                    cpu_free: &mut self.cpu_free,
                    cpu: &mut self.cpu,
                    error: None,
                };
                let r = self.ctx.service_block(processor, at, &pages, &mut self.prefetch, &mut backend);
                if let Some(e) = backend.error.take() {
                    return Err(e.into());
                }
                if r.map_err(ManagedError::Service)?.throttled == 0 {
                    break;
                }
                naps += 1;
                if naps > MAX_THROTTLE_NAPS {
                    return Err(ManagedError::Throttled { va: at, naps: MAX_THROTTLE_NAPS });
                }
                let clock = gpu.clock();
                let until = clock.now_ns().saturating_add(self.ctx.thrashing_config.nap_ns.max(1));
                while clock.now_ns() < until {
                    core::hint::spin_loop();
                }
            }
            at = block_end;
        }
        Ok(())
    }

    /// CPU reads `out.len()` bytes at `va`: pages resident on the GPU come back first (a CPU
    /// fault each block, as the kernel's page-fault handler services them).
    pub fn read<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        va: u64,
        out: &mut [u8],
    ) -> Result<(), ManagedError> {
        self.check_range(va, out.len())?;
        self.ctx.stats.cpu_faults += 1;
        self.for_pages(gpu, va, out.len(), ProcessorId::Cpu, AccessType::Read)?;
        self.each_cpu_span(va, out.len(), |dma, off, done, n| dma.read(off, &mut out[done..done + n]))
    }

    /// CPU writes `data` at `va` (the pages become CPU-resident, other copies are dropped).
    pub fn write<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        va: u64,
        data: &[u8],
    ) -> Result<(), ManagedError> {
        self.check_range(va, data.len())?;
        self.ctx.stats.cpu_faults += 1;
        self.for_pages(gpu, va, data.len(), ProcessorId::Cpu, AccessType::Write)?;
        self.each_cpu_span(va, data.len(), |dma, off, done, n| dma.write(off, &data[done..done + n]))
    }

    /// Calls `f(dma, off, done, n)` for each piece of `[va, va + len)` within one page, in
    /// order: the piece is `n` bytes at `off` in `dma`, the CPU copy of its page, and starts
    /// `done` bytes into the range.
    fn each_cpu_span(
        &mut self,
        va: u64,
        len: usize,
        mut f: impl FnMut(&mut DmaBuffer, usize, usize, usize) -> Result<(), DmaRangeError>,
    ) -> Result<(), ManagedError> {
        let mut done = 0;
        while done < len {
            let at = va + done as u64;
            let n = ((PAGE_SIZE - at % PAGE_SIZE) as usize).min(len - done);
            let (b, off) = self.cpu_page(at).ok_or(ManagedError::OutOfRange { va: at, len: n })?;
            f(&mut self.backing[b].dma, off, done, n).map_err(|_| ManagedError::OutOfRange { va: at, len: n })?;
            done += n;
        }
        Ok(())
    }

    /// Where the CPU copy of the byte at `va` is: (backing index, offset in it).
    fn cpu_page(&self, va: u64) -> Option<(usize, usize)> {
        let block = self.ctx.va_space.range(va)?.block(va)?;
        let page = block.page_index(va).ok()?;
        let phys = block.state(ProcessorId::Cpu)?.phys(page)? + va % PAGE_SIZE;
        let b = self.backing.iter().position(|b| {
            let bus = b.dma.bus_address();
            phys >= bus && phys < bus + b.size
        })?;
        Some((b, (phys - self.backing[b].dma.bus_address()) as usize))
    }

    /// Whether the replayable fault interrupt is pending (the top half's check).
    pub fn fault_interrupt_pending<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(&self, gpu: &Gpu<'a, R, A, C>) -> bool {
        self.fault_interrupt.pending(gpu.io())
    }

    /// The replayable fault buffer's interrupt vector.
    pub fn fault_interrupt_vector(&self) -> u32 {
        self.fault_interrupt.vector()
    }

    /// The top and bottom halves of the replayable fault interrupt, as UVM runs them on Turing
    /// and later: the vector is disabled, the bottom half services what the buffer holds, then
    /// the vector is enabled again, its pending bit cleared and GET written again, so that
    /// faults that arrived during the service raise it anew.
    pub fn service_fault_interrupt<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
    ) -> Result<crate::replayable::BottomHalfReport, ManagedError> {
        let io = gpu.io();
        self.fault_interrupts += 1;
        self.fault_interrupt.disable(io);
        let report = self.service_faults(gpu);
        self.fault_interrupt.enable(io);
        self.fault_interrupt.clear(io);
        self.buffer.rewrite_get();
        report
    }

    /// One bottom half: services what the fault buffer holds (nothing when it is empty).
    pub fn service_faults<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
    ) -> Result<crate::replayable::BottomHalfReport, ManagedError> {
        // UVM's unpin worker: pins whose time passed are dropped before the batch is judged.
        self.ctx.unpin_expired(gpu.clock().now_ns());
        let pdb = gpu.va_space().tables().pdb().address;
        let faulting = FaultingGpu { gpu: GPU, graphics_engine_base: self.graphics_engine_base };
        let (report, backend_error) = {
            let Self { ctx, memory, cpu_free, cpu, buffer, prefetch, service, bottom_half, .. } = self;
            let shared =
                core::cell::RefCell::new(RuntimeBackend { gpu: &mut *gpu, memory, cpu_free, cpu, error: None });
            let r = service_replayable_faults(
                buffer,
                ctx,
                faulting,
                |instance| instance.address == pdb,
                service,
                bottom_half,
                prefetch,
                &mut Shared(&shared),
                &mut Shared(&shared),
            );
            (r, shared.into_inner().error)
        };
        if let Some(e) = backend_error {
            return Err(e.into());
        }
        let report = report.map_err(ManagedError::BottomHalf)?;
        self.cancelled.extend(report.cancelled.iter().copied());
        Ok(report)
    }

    /// Waits for `stream`'s work, servicing replayable faults whenever their interrupt is
    /// pending. A cancelled fault ends the wait with [`ManagedError::FatalFault`]. Each wait
    /// for the stream or the interrupt is bounded by the GPU's `timeout_ms`
    /// ([`ManagedError::WaitTimeout`]).
    pub fn synchronize<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        &mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        stream: &Stream,
    ) -> Result<(), ManagedError> {
        let cancelled_before = self.cancelled.len();
        for _ in 0..self.config.max_bottom_halves {
            if let Some(c) = self.cancelled.get(cancelled_before) {
                return Err(ManagedError::FatalFault {
                    va: c.fault.va,
                    access: c.fault.access,
                    reason: fatal_reason(c.fault.reason),
                });
            }
            // Until the work is done or the fault interrupt is pending (the CPU has no GPU
            // interrupt line yet, so the line is read where an ISR would be entered).
            let started = gpu.clock().now_ns();
            let timeout_ns = gpu.config().timeout_ms.saturating_mul(1_000_000);
            loop {
                match stream.query(gpu) {
                    Ok(true) => return Ok(()),
                    Ok(false) => {}
                    Err(e) => return Err(e.into()),
                }
                if self.fault_interrupt_pending(gpu) {
                    break;
                }
                if gpu.clock().now_ns().saturating_sub(started) >= timeout_ns {
                    return Err(ManagedError::WaitTimeout {
                        vector: self.fault_interrupt.vector(),
                        timeout_ms: gpu.config().timeout_ms,
                    });
                }
                core::hint::spin_loop();
            }
            self.service_fault_interrupt(gpu)?;
        }
        Err(ManagedError::Stuck { bottom_halves: self.config.max_bottom_halves })
    }

    /// Frees the buffers' system memory, the VRAM pool and the fault buffer.
    pub fn destroy<A: DmaAllocator + ?Sized, C: Clock + ?Sized>(
        mut self,
        gpu: &mut Gpu<'a, R, A, C>,
        rpc: &mut impl RpcChannel,
    ) -> Result<(), ManagedError> {
        for b in core::mem::take(&mut self.backing) {
            let reserved = b.size.next_multiple_of(VA_BLOCK_SIZE);
            let mut tlb = gpu.tlb_invalidator();
            let _ = gpu.va_space_mut().tables_mut().unmap(b.va, reserved, &mut tlb);
            let _ = gpu.va_space_mut().release_va(b.va, reserved);
            let cpu = self.cpu.cpu_of(b.va);
            if let (Some(m), Some(cpu)) = (self.cpu.mappings.as_mut(), cpu) {
                for off in (0..reserved).step_by(PAGE_SIZE as usize) {
                    m.unmap(cpu + off);
                }
                m.release(cpu, reserved);
            }
            gpu.dma().free(b.dma);
        }
        self.fault_interrupt.disable(gpu.io());
        gpu.free_object(rpc, self.fault_object)?;
        if let Some(pool) = self.pool.take() {
            gpu.vram_mut().free(pool).map_err(RuntimeError::from)?;
        }
        Ok(())
    }
}

/// The bottom half's machine, shared by its two users: the service (copies, mappings, memory)
/// and the replay channel (replays and cancels pushed on the GPU as the bottom half issues
/// them, batch by batch, as UVM's BATCH_FLUSH policy does). They take turns, never nest.
struct Shared<'c, B>(&'c core::cell::RefCell<B>);

impl<B: ProcessorTopology> ProcessorTopology for Shared<'_, B> {
    fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool {
        self.0.borrow().can_access(from, to)
    }
    fn has_memory(&self, p: ProcessorId) -> bool {
        self.0.borrow().has_memory(p)
    }
    fn has_nvlink(&self, a: ProcessorId, b: ProcessorId) -> bool {
        self.0.borrow().has_nvlink(a, b)
    }
    fn has_native_atomics(&self, from: ProcessorId, to: ProcessorId) -> bool {
        self.0.borrow().has_native_atomics(from, to)
    }
}

impl<B: UvmBackend> UvmBackend for Shared<'_, B> {
    fn alloc(&mut self, processor: ProcessorId, size: u64, window: u64) -> Result<u64, BackendError> {
        self.0.borrow_mut().alloc(processor, size, window)
    }
    fn free(&mut self, processor: ProcessorId, phys: u64, size: u64) {
        self.0.borrow_mut().free(processor, phys, size)
    }
    fn copy(&mut self, copies: &[PageCopy]) -> Result<(), BackendError> {
        self.0.borrow_mut().copy(copies)
    }
    fn zero(&mut self, dst: Location, bytes: u64) -> Result<(), BackendError> {
        self.0.borrow_mut().zero(dst, bytes)
    }
    fn map(
        &mut self,
        processor: ProcessorId,
        va: u64,
        size: u64,
        page_size: PageSize,
        target: MappingTarget,
        prot: Prot,
    ) -> Result<(), BackendError> {
        self.0.borrow_mut().map(processor, va, size, page_size, target, prot)
    }
    fn unmap(&mut self, processor: ProcessorId, va: u64, size: u64) -> Result<(), BackendError> {
        self.0.borrow_mut().unmap(processor, va, size)
    }
    fn now_ns(&self) -> u64 {
        self.0.borrow().now_ns()
    }
    fn eviction_victims(&mut self, gpu: u8) -> Vec<u64> {
        self.0.borrow_mut().eviction_victims(gpu)
    }
}

/// Replays and cancels pushed at once as `MEM_OP` methods on the GPU's default stream channel
/// (a replay goes after the batch's flush; a cancel names its PDB, engine and access type).
impl<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> ReplayChannel
    for Shared<'_, RuntimeBackend<'_, '_, R, A, C>>
{
    fn replay(&mut self, replay: nvgpu::host::mem_op::ReplayType) -> Result<(), ReplayChannelError> {
        self.push(nvgpu::host::mem_op::replay_words(replay), "the replay's MEM_OP push failed")
    }
    fn cancel_va(&mut self, cancel: &nvgpu::host::mem_op::CancelVa) -> Result<(), ReplayChannelError> {
        let class = self.0.borrow_mut().gpu.default_stream_host_class();
        let class = class.map_err(|e| {
            self.0.borrow_mut().keep(e);
            ReplayChannelError { what: "no channel for the cancel" }
        })?;
        let words = nvgpu::host::mem_op::cancel_va_words(class, cancel)
            .map_err(|_| ReplayChannelError { what: "a cancel of this PDB or engine" })?;
        self.push(words, "the cancel's MEM_OP push failed")
    }
}

impl<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> Shared<'_, RuntimeBackend<'_, '_, R, A, C>> {
    fn push(&mut self, words: [u32; 4], what: &'static str) -> Result<(), ReplayChannelError> {
        let mut b = self.0.borrow_mut();
        let r = b.gpu.run_host_methods(|pb| {
            pb.incr(0, nvgpu::hw::host::method::NVC46F_MEM_OP_A, &words)
                .map_err(|e| RuntimeError::from(nvgpu::channel::ChannelError::from(e)))
        });
        r.map_err(|e| {
            b.keep(e);
            ReplayChannelError { what }
        })
    }
}

fn fatal_reason(r: crate::gpu_faults::FatalReason) -> &'static str {
    use crate::gpu_faults::FatalReason;
    match r {
        FatalReason::NoRange => "the address is in no managed buffer",
        _ => "the access is not permitted",
    }
}

/// The machine under the service: the runtime's GPU (copy engine, page tables), the PMM and
/// the buffers' system memory.
struct RuntimeBackend<'g, 'a, R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> {
    gpu: &'g mut Gpu<'a, R, A, C>,
    memory: &'g mut GpuMemory<SimpleRootSource>,
    cpu_free: &'g mut Vec<u64>,
    cpu: &'g mut CpuSide,
    /// The first runtime error (kept: the service sees only [`BackendError`]).
    error: Option<RuntimeError>,
}

impl<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> RuntimeBackend<'_, '_, R, A, C> {
    fn address(l: Location) -> CeAddress {
        let aperture = if l.processor.is_cpu() { CeAperture::CoherentSysmem } else { CeAperture::LocalFb };
        CeAddress::Physical { aperture, addr: l.phys }
    }

    /// GPU `g`'s page tables as UVM maps them (no peers: one GPU).
    fn with_mapper<T>(
        &mut self,
        g: u8,
        f: impl FnOnce(&mut GpuMapper<'_, nvgpu::mm::DmaTableMemory<&A>, nvgpu::mm::RegisterTlbInvalidator<'_, R, C>>) -> T,
    ) -> T {
        let mut tlb = self.gpu.tlb_invalidator();
        let tables = self.gpu.va_space_mut().tables_mut();
        f(&mut GpuMapper { gpu: g, tables, tlb: &mut tlb, kind: PteAttrs::default().kind, peer_id: &|_| None })
    }

    fn keep(&mut self, e: RuntimeError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }
}

impl<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> ProcessorTopology
    for RuntimeBackend<'_, '_, R, A, C>
{
    fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool {
        // The GPU maps system memory; the CPU reaches VRAM only through migration.
        from == to || (from == ProcessorId::Gpu(GPU) && to.is_cpu())
    }
    fn has_memory(&self, _p: ProcessorId) -> bool {
        true
    }
}

impl<R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> UvmBackend
    for RuntimeBackend<'_, '_, R, A, C>
{
    fn alloc(&mut self, processor: ProcessorId, size: u64, window: u64) -> Result<u64, BackendError> {
        match processor {
            ProcessorId::Cpu if size == PAGE_SIZE => self.cpu_free.pop().ok_or(BackendError::NoMemory { processor }),
            ProcessorId::Cpu => Err(BackendError::NoMemory { processor }),
            ProcessorId::Gpu(_) => self.memory.alloc(size, window).map_err(|_| BackendError::NoMemory { processor }),
        }
    }

    fn free(&mut self, processor: ProcessorId, phys: u64, size: u64) {
        match processor {
            ProcessorId::Gpu(_) => {
                let _ = self.memory.free(phys, size);
            }
            ProcessorId::Cpu => self.cpu_free.extend((0..size / PAGE_SIZE).map(|i| phys + i * PAGE_SIZE)),
        }
    }

    fn copy(&mut self, copies: &[PageCopy]) -> Result<(), BackendError> {
        if copies.is_empty() {
            return Ok(());
        }
        let r = self.gpu.run_copies(|ce, pb| {
            for c in copies {
                ce.copy(pb, Self::address(c.src), Self::address(c.dst), c.bytes, Pipelining::NonPipelined)?;
            }
            Ok(())
        });
        r.map_err(|e| {
            self.keep(e);
            BackendError::CopyFailed { code: 0 }
        })
    }

    fn zero(&mut self, dst: Location, bytes: u64) -> Result<(), BackendError> {
        let r = self.gpu.run_copies(|ce, pb| {
            ce.memset(pb, Self::address(dst), MemsetPattern::U8(0), bytes, Pipelining::NonPipelined)?;
            Ok(())
        });
        r.map_err(|e| {
            self.keep(e);
            BackendError::CopyFailed { code: 0 }
        })
    }

    fn map(
        &mut self,
        processor: ProcessorId,
        va: u64,
        size: u64,
        page_size: PageSize,
        target: MappingTarget,
        prot: Prot,
    ) -> Result<(), BackendError> {
        let ProcessorId::Gpu(g) = processor else {
            // Without CPU page tables, CPU access goes through `read`/`write`/`cpu_pages`,
            // which service the pages first.
            let cpu = self.cpu.cpu_of(va);
            let Some(m) = self.cpu.mappings.as_mut() else { return Ok(()) };
            let Some(cpu) = cpu else { return Err(BackendError::MappingFailed { processor, va }) };
            let writable = prot >= Prot::ReadWrite;
            for off in (0..size).step_by(PAGE_SIZE as usize) {
                if !m.map(cpu + off, target.phys + off, writable) {
                    return Err(BackendError::MappingFailed { processor, va: va + off });
                }
            }
            return Ok(());
        };
        self.with_mapper(g, |m| m.map(va, size, page_size, target, prot))
            .map_err(|_| BackendError::MappingFailed { processor, va })
    }

    fn unmap(&mut self, processor: ProcessorId, va: u64, size: u64) -> Result<(), BackendError> {
        let ProcessorId::Gpu(g) = processor else {
            // The service unmaps within one block, so within one managed range.
            let Some(cpu) = self.cpu.cpu_of(va) else { return Ok(()) };
            if let Some(m) = self.cpu.mappings.as_mut() {
                for off in (0..size).step_by(PAGE_SIZE as usize) {
                    m.unmap(cpu + off);
                }
            }
            return Ok(());
        };
        self.with_mapper(g, |m| m.unmap(va, size)).map_err(|_| BackendError::MappingFailed { processor, va })
    }

    fn now_ns(&self) -> u64 {
        self.gpu.clock().now_ns()
    }

    fn eviction_victims(&mut self, _gpu: u8) -> Vec<u64> {
        self.memory.eviction_victims()
    }
}
