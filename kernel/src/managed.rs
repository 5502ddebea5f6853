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

use crate::mem::{frames, paging};

struct Managed {
    ctx: UvmContext,
    next_va: u64,
}

static MANAGED: Mutex<Option<Managed>> = Mutex::new(None);

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
        *m = Some(Managed { ctx: UvmContext::new(), next_va: paging::MANAGED_BASE });
        crate::arch::idt::set_page_fault_service(page_fault);
    }
}

/// A managed allocation of `size` bytes: its CPU address, 2 MiB-aligned. Nothing is resident
/// until touched.
pub fn alloc(size: u64) -> Result<u64, &'static str> {
    init();
    let mut guard = MANAGED.lock();
    let m = guard.as_mut().ok_or("managed memory not set up")?;
    let size = size.checked_next_multiple_of(PAGE_SIZE).ok_or("size overflows")?;
    let va = m.next_va;
    let end = va.checked_add(size).filter(|&e| e <= paging::MANAGED_LIMIT).ok_or("managed window exhausted")?;
    m.ctx.va_space.create_managed_range(va, size, VaPolicy::default()).map_err(|_| "managed range refused")?;
    m.next_va = end.next_multiple_of(VA_BLOCK_SIZE);
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
    // A fault while the service itself runs (or another CPU holds it) is not resolvable here.
    let Some(mut guard) = MANAGED.try_lock() else { return false };
    let Some(m) = guard.as_mut() else { return false };
    let write = error_code & crate::arch::idt::PF_ERROR_WRITE != 0;
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
