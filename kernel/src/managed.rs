//! Managed (unified) memory on the CPU side: the kernel's half of `uvm`. Managed ranges live
//! in the paging window [`paging::MANAGED_BASE`]; their pages are mapped only while the CPU may
//! use them, so a CPU access to any other page takes a page fault, which [`page_fault`] serves
//! through `uvm`'s block service with the CPU as the faulting processor (a write counts as
//! ATOMIC_STRONG, as in UVM's `uvm_va_block_cpu_fault`), then the instruction is re-executed.
//!
//! The CPU's memory is frames; its mappings are 4 KiB PTEs in the window. What is not wired
//! yet: GPUs in this va_space (the runtime's GPU memory, copy engine and page tables behind
//! [`UvmBackend`]), so today every managed page lives in CPU memory, and pages resident on a
//! GPU cannot come back through this path yet. The fault service must not run while the
//! faulting code holds the heap or frame-allocator lock (managed memory is the application's,
//! not the allocator's, so it does not).

use nvgpu::mm::format::PageSize;
use spin::Mutex;
use uvm::page_mask::{PAGE_SIZE, VA_BLOCK_SIZE};
use uvm::policy::{ProcessorTopology, VaPolicy};
use uvm::processor::ProcessorId;
use uvm::service::{BackendError, Location, NoPrefetch, PageAccess, PageCopy, UvmBackend, UvmContext};
use uvm::va_block::{AccessType, MappingTarget, Prot};

use crate::mem::managed_window::{self, WindowError};
use crate::mem::{frames, paging};
use alloc::boxed::Box;
use nvgpu::hw::RegisterIo;
use nvgpu::platform::{Clock, DmaAllocator};
use nvgpu::runtime::Gpu;
use uvm::runtime::{CpuMappings, ManagedBuffer, ManagedError, UnifiedMemory};

struct Managed {
    ctx: UvmContext,
}

static MANAGED: Mutex<Option<Managed>> = Mutex::new(None);

/// The next free address of the window (2 MiB-aligned; addresses are not reused).
static NEXT_VA: Mutex<u64> = Mutex::new(paging::MANAGED_BASE);

/// `size` bytes of the window, 2 MiB-aligned.
fn reserve_window(size: u64) -> Option<u64> {
    let mut next = NEXT_VA.lock();
    let va = *next;
    let end = va.checked_add(size).filter(|&e| e <= paging::MANAGED_LIMIT)?;
    *next = end.checked_next_multiple_of(VA_BLOCK_SIZE)?;
    Some(va)
}

/// The CPU-only machine behind the service.
struct CpuMachine;

impl ProcessorTopology for CpuMachine {
    fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool {
        from == to
    }
    fn has_memory(&self, p: ProcessorId) -> bool {
        p.is_cpu()
    }
}

impl UvmBackend for CpuMachine {
    fn alloc(&mut self, processor: ProcessorId, size: u64, _window: u64) -> Result<u64, BackendError> {
        if !processor.is_cpu() || size != PAGE_SIZE {
            return Err(BackendError::NoMemory { processor });
        }
        frames::alloc().ok_or(BackendError::NoMemory { processor })
    }
    fn free(&mut self, processor: ProcessorId, phys: u64, _size: u64) {
        if processor.is_cpu() {
            frames::free(phys);
        }
    }
    fn copy(&mut self, copies: &[PageCopy]) -> Result<(), BackendError> {
        for c in copies {
            if !c.dst.processor.is_cpu() || !c.src.processor.is_cpu() {
                return Err(BackendError::CopyFailed { code: 0 });
            }
            for off in (0..c.bytes).step_by(PAGE_SIZE as usize) {
                paging::copy_frame(c.dst.phys + off, c.src.phys + off);
            }
        }
        Ok(())
    }
    fn zero(&mut self, dst: Location, bytes: u64) -> Result<(), BackendError> {
        if !dst.processor.is_cpu() {
            return Err(BackendError::CopyFailed { code: 0 });
        }
        for off in (0..bytes).step_by(PAGE_SIZE as usize) {
            paging::zero_frame(dst.phys + off);
        }
        Ok(())
    }
    fn map(
        &mut self,
        processor: ProcessorId,
        va: u64,
        size: u64,
        _ps: PageSize,
        target: MappingTarget,
        prot: Prot,
    ) -> Result<(), BackendError> {
        if !processor.is_cpu() || !target.target.is_cpu() {
            return Err(BackendError::MappingFailed { processor, va });
        }
        for off in (0..size).step_by(PAGE_SIZE as usize) {
            paging::map_managed(va + off, target.phys + off, prot >= Prot::ReadWrite)
                .map_err(|_| BackendError::MappingFailed { processor, va: va + off })?;
        }
        Ok(())
    }
    fn unmap(&mut self, processor: ProcessorId, va: u64, size: u64) -> Result<(), BackendError> {
        if !processor.is_cpu() {
            return Err(BackendError::MappingFailed { processor, va });
        }
        for off in (0..size).step_by(PAGE_SIZE as usize) {
            paging::unmap_managed(va + off);
        }
        Ok(())
    }
    fn now_ns(&self) -> u64 {
        crate::time::nanos_since_entry()
    }
}

/// Sets the service up (once).
pub fn init() {
    let mut m = MANAGED.lock();
    if m.is_none() {
        *m = Some(Managed { ctx: UvmContext::new() });
        crate::arch::idt::set_page_fault_service(page_fault);
    }
}

/// Why a managed allocation was refused.
#[derive(Debug)]
pub enum AllocError {
    /// The service is not set up.
    NotSetUp,
    /// The size rounded up to pages overflows.
    SizeOverflow { size: u64 },
    /// The managed window has no room left for this many bytes.
    WindowExhausted { size: u64 },
    /// The va_space refused the range.
    Range(uvm::va_space::VaSpaceError),
}

impl core::fmt::Display for AllocError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AllocError::NotSetUp => f.write_str("managed memory not set up"),
            AllocError::SizeOverflow { size } => write!(f, "a managed allocation of {size:#x} bytes overflows"),
            AllocError::WindowExhausted { size } => write!(f, "managed window exhausted ({size:#x} bytes asked)"),
            AllocError::Range(e) => write!(f, "managed range refused: {e:?}"),
        }
    }
}

/// For the in-kernel tests, whose failures are messages.
impl From<AllocError> for alloc::string::String {
    fn from(e: AllocError) -> Self {
        alloc::format!("{e}")
    }
}

/// A managed allocation of `size` bytes: its CPU address, 2 MiB-aligned. Nothing is resident
/// until touched.
pub fn alloc(size: u64) -> Result<u64, AllocError> {
    init();
    let mut guard = MANAGED.lock();
    let m = guard.as_mut().ok_or(AllocError::NotSetUp)?;
    let size = size.checked_next_multiple_of(PAGE_SIZE).ok_or(AllocError::SizeOverflow { size })?;
    let va = reserve_window(size).ok_or(AllocError::WindowExhausted { size })?;
    m.ctx.va_space.create_managed_range(va, size, VaPolicy::default()).map_err(AllocError::Range)?;
    Ok(va)
}

/// The context's statistics.
pub fn stats() -> Option<uvm::service::UvmStats> {
    MANAGED.lock().as_ref().map(|m| m.ctx.stats)
}

/// Pages of managed memory resident on the CPU.
pub fn cpu_resident_pages() -> usize {
    MANAGED.lock().as_ref().map_or(0, |m| {
        m.ctx.va_space.ranges().flat_map(|r| r.blocks()).map(|b| b.resident(ProcessorId::Cpu).count()).sum()
    })
}

/// The page-fault service: `true` when the fault was on managed memory and is resolved.
fn page_fault(cr2: u64, error_code: u64) -> bool {
    if !(paging::MANAGED_BASE..paging::MANAGED_LIMIT).contains(&cr2) {
        return false;
    }
    let write = error_code & crate::arch::idt::PF_ERROR_WRITE != 0;
    // A GPU context's service, lent while a copy of `PageFaults::in_place` runs, goes first.
    if let Some(served) = managed_window::serve_lent(cr2, write) {
        return served;
    }
    // A fault while the service itself runs (or another CPU holds it) is not resolvable here.
    let Some(mut guard) = MANAGED.try_lock() else { return false };
    let Some(m) = guard.as_mut() else { return false };
    if m.ctx.va_space.range(cr2).is_none() {
        return false;
    }
    let access = if write { AccessType::AtomicStrong } else { AccessType::Read };
    let page = ((cr2 % VA_BLOCK_SIZE) / PAGE_SIZE) as usize;
    m.ctx.stats.cpu_faults += 1;
    match m.ctx.service_block(ProcessorId::Cpu, cr2, &[PageAccess { page, access }], &mut NoPrefetch, &mut CpuMachine) {
        Ok(_) => true,
        Err(e) => {
            log::error!(target: "uvm", "CPU fault at {cr2:#x} ({}): {e}", if write { "write" } else { "read" });
            false
        }
    }
}

/// Window addresses and PTEs for an application's GPU context ([`UnifiedMemory::set_cpu_mappings`]).
/// System memory for CPU-resident pages is the runtime's DMA memory (frames: bus address =
/// physical address).
pub struct KernelCpuMappings;

impl CpuMappings for KernelCpuMappings {
    fn reserve(&mut self, size: u64) -> Option<u64> {
        reserve_window(size)
    }
    fn map(&mut self, cpu_va: u64, bus: u64, writable: bool) -> bool {
        paging::map_managed(cpu_va, bus, writable).is_ok()
    }
    fn unmap(&mut self, cpu_va: u64) {
        paging::unmap_managed(cpu_va);
    }
    fn release(&mut self, _cpu_va: u64, _size: u64) {
        // Window addresses are not reused (the window is 1 TiB); the pages are unmapped.
    }
}

/// The application's CPU code over managed buffers, page by page: each page of the buffer is
/// copied out of its window address, handed to the pass, and copied back
/// ([`managed_window::copy_in_place`]); each first touch of a page not mapped for the CPU, by
/// those copies, is a page fault the context's service resolves. `faults` counts the page
/// faults taken meanwhile, `migrated_back` the bytes they brought back from the GPU (the
/// context migrates nothing else while CPU code runs).
#[derive(Default)]
pub struct PageFaults {
    pub faults: usize,
    pub migrated_back: u64,
}

impl<'a, R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> nvrt::platform::CpuAccess<'a, R, A, C>
    for PageFaults
{
    fn mappings(&mut self) -> Option<Box<dyn CpuMappings>> {
        Some(Box::new(KernelCpuMappings))
    }

    fn counters(&self) -> nvrt::platform::CpuAccessCounters {
        nvrt::platform::CpuAccessCounters { page_faults: self.faults as u64, migrated_back_bytes: self.migrated_back }
    }

    fn in_place(
        &mut self,
        um: &mut UnifiedMemory<'a, R>,
        gpu: &mut Gpu<'a, R, A, C>,
        buf: &ManagedBuffer,
        pass: &mut dyn FnMut(usize, &mut [u8]),
    ) -> Result<(), ManagedError> {
        let unmapped = || ManagedError::OutOfRange { va: buf.va, len: buf.len };
        let cpu = um.cpu_address(buf).ok_or_else(unmapped)?;
        let mut failure = None;
        let migrated_before = um.stats().migrated_to_cpu_bytes;
        let mut service = |addr: u64, write: bool| match um.cpu_fault(gpu, addr, write) {
            Ok(served) => served,
            Err(e) => {
                log::error!(target: "uvm", "CPU fault at {addr:#x} ({}): {e}", if write { "write" } else { "read" });
                failure.get_or_insert(e);
                false
            }
        };
        // The page-fault hook that offers faults to the lent service is installed by `init`.
        init();
        let before = crate::arch::idt::count(14);
        let ran = managed_window::copy_in_place(cpu, buf.len as u64, &mut service, pass);
        self.faults += crate::arch::idt::count(14) - before;
        self.migrated_back += um.stats().migrated_to_cpu_bytes - migrated_before;
        match ran {
            Ok(()) => {}
            Err(WindowError::OutOfWindow { .. }) => return Err(unmapped()),
            Err(WindowError::Busy) => {
                let what = "CPU access to managed memory is already in progress";
                return Err(nvgpu::runtime::RuntimeError::Unsupported { what }.into());
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
