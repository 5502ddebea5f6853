//! Host tests of the service path on a software machine: memory per processor, page tables
//! per processor that refuse double maps and unmaps of unmapped pages, and accesses that fault
//! exactly when the page tables say so.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use nvgpu::mm::format::PageSize;

use crate::page_mask::{PageMask, PAGE_SIZE, VA_BLOCK_SIZE};
use crate::policy::{Advice, ProcessorTopology, VaPolicy};
use crate::processor::ProcessorId;
use crate::service::*;
use crate::va_block::{AccessType, MappingTarget, Prot};

const MB2: u64 = VA_BLOCK_SIZE;
const CPU: ProcessorId = ProcessorId::Cpu;
const G0: ProcessorId = ProcessorId::Gpu(0);
const G1: ProcessorId = ProcessorId::Gpu(1);

#[derive(Clone, Copy, Debug)]
struct Pte {
    target: MappingTarget,
    prot: Prot,
}

/// A memory pool: a bump allocator with a free list per size, and a capacity.
#[derive(Default)]
struct Pool {
    next: u64,
    capacity: u64,
    free: BTreeMap<u64, Vec<u64>>,
    live: BTreeMap<u64, u64>,
}

impl Pool {
    fn new(base: u64, capacity: u64) -> Self {
        Pool { next: base, capacity, ..Default::default() }
    }
    fn alloc(&mut self, size: u64) -> Option<u64> {
        let used: u64 = self.live.values().sum();
        if used + size > self.capacity {
            return None;
        }
        let pa = match self.free.get_mut(&size).and_then(|v| v.pop()) {
            Some(pa) => pa,
            None => {
                let pa = self.next.next_multiple_of(size);
                self.next = pa + size;
                pa
            }
        };
        self.live.insert(pa, size);
        Some(pa)
    }
    fn free(&mut self, pa: u64, size: u64) {
        assert_eq!(self.live.remove(&pa), Some(size), "free of {pa:#x} ({size:#x}) not allocated with that size");
        self.free.entry(size).or_default().push(pa);
    }
    fn used(&self) -> u64 {
        self.live.values().sum()
    }
}

struct Machine {
    gpus: u8,
    pools: BTreeMap<ProcessorId, Pool>,
    data: BTreeMap<(ProcessorId, u64), [u8; 16]>,
    ptes: BTreeMap<(ProcessorId, u64), Pte>,
    copy_batches: usize,
    copied: u64,
    zeroed: u64,
    maps_by_size: BTreeMap<PageSize, usize>,
    peers: bool,
    /// The machine's clock; every access advances it by 1 us.
    now: core::cell::Cell<u64>,
    /// GPU0's memory through the PMM instead of the plain pool, when set.
    pmm: Option<crate::gpu_memory::GpuMemory<crate::pmm::SimpleRootSource>>,
}

impl Machine {
    fn new(gpus: u8, gpu_mem: u64) -> Self {
        let mut pools = BTreeMap::new();
        pools.insert(CPU, Pool::new(0x1_0000_0000, u64::MAX / 4));
        for g in 0..gpus {
            pools.insert(ProcessorId::Gpu(g), Pool::new(0x10_0000_0000 * (g as u64 + 1), gpu_mem));
        }
        Machine {
            gpus,
            pools,
            data: BTreeMap::new(),
            ptes: BTreeMap::new(),
            copy_batches: 0,
            copied: 0,
            zeroed: 0,
            maps_by_size: BTreeMap::new(),
            peers: false,
            now: core::cell::Cell::new(1_000_000),
            pmm: None,
        }
    }

    fn translate(&self, p: ProcessorId, va: u64, need: Prot) -> Option<Location> {
        let pte = self.ptes.get(&(p, va & !(PAGE_SIZE - 1)))?;
        (pte.prot >= need).then_some(Location { processor: pte.target.target, phys: pte.target.phys })
    }

    /// An access by `p`: the 16-byte tag stored at the page, or a fault.
    fn access(&mut self, p: ProcessorId, va: u64, write: Option<[u8; 16]>) -> Result<[u8; 16], AccessType> {
        self.now.set(self.now.get() + 1_000);
        let need = if write.is_some() { Prot::ReadWrite } else { Prot::ReadOnly };
        let Some(loc) = self.translate(p, va, need) else {
            return Err(if write.is_some() { AccessType::Write } else { AccessType::Read });
        };
        let cell = self.data.entry((loc.processor, loc.phys)).or_insert([0xEE; 16]);
        if let Some(w) = write {
            *cell = w;
        }
        Ok(*cell)
    }
}

impl ProcessorTopology for Machine {
    fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool {
        from == to || to == CPU || (self.peers && !from.is_cpu())
    }
    fn has_memory(&self, p: ProcessorId) -> bool {
        p.gpu().is_none_or(|g| g < self.gpus)
    }
}

impl UvmBackend for Machine {
    fn now_ns(&self) -> u64 {
        self.now.get()
    }
    fn alloc(&mut self, processor: ProcessorId, size: u64, window: u64) -> Result<u64, BackendError> {
        if let (Some(pmm), G0) = (self.pmm.as_mut(), processor) {
            return pmm.alloc(size, window).map_err(|_| BackendError::NoMemory { processor });
        }
        self.pools.get_mut(&processor).and_then(|p| p.alloc(size)).ok_or(BackendError::NoMemory { processor })
    }
    fn free(&mut self, processor: ProcessorId, phys: u64, size: u64) {
        for off in (0..size).step_by(PAGE_SIZE as usize) {
            self.data.remove(&(processor, phys + off));
        }
        if let (Some(pmm), G0) = (self.pmm.as_mut(), processor) {
            pmm.free(phys, size).expect("PMM free");
            return;
        }
        self.pools.get_mut(&processor).expect("pool").free(phys, size);
    }
    fn eviction_victims(&mut self, gpu: u8) -> Vec<u64> {
        match (self.pmm.as_mut(), gpu) {
            (Some(pmm), 0) => pmm.eviction_victims(),
            _ => Vec::new(),
        }
    }
    fn copy(&mut self, copies: &[PageCopy]) -> Result<(), BackendError> {
        if !copies.is_empty() {
            self.copy_batches += 1;
        }
        for c in copies {
            for off in (0..c.bytes).step_by(PAGE_SIZE as usize) {
                let v = *self.data.get(&(c.src.processor, c.src.phys + off)).expect("copy from memory never written");
                self.data.insert((c.dst.processor, c.dst.phys + off), v);
            }
            self.copied += c.bytes;
        }
        Ok(())
    }
    fn zero(&mut self, dst: Location, bytes: u64) -> Result<(), BackendError> {
        for off in (0..bytes).step_by(PAGE_SIZE as usize) {
            self.data.insert((dst.processor, dst.phys + off), [0; 16]);
        }
        self.zeroed += bytes;
        Ok(())
    }
    fn map(
        &mut self,
        p: ProcessorId,
        va: u64,
        size: u64,
        page_size: PageSize,
        target: MappingTarget,
        prot: Prot,
    ) -> Result<(), BackendError> {
        assert!(prot != Prot::None);
        let step = match page_size {
            PageSize::Size2M => MB2,
            PageSize::Size64K => 0x10000,
            _ => PAGE_SIZE,
        };
        assert_eq!(va % step, 0, "{p} map at {va:#x} not aligned to {page_size:?}");
        assert_eq!(size % step, 0);
        if !p.is_cpu() {
            assert_eq!(target.phys % step, 0, "{p} {page_size:?} PTE to unaligned memory {:#x}", target.phys);
        }
        *self.maps_by_size.entry(page_size).or_default() += (size / step) as usize;
        for off in (0..size).step_by(PAGE_SIZE as usize) {
            let t = MappingTarget { target: target.target, phys: target.phys + off };
            let old = self.ptes.insert((p, va + off), Pte { target: t, prot });
            assert!(old.is_none(), "{p} maps {:#x} twice", va + off);
        }
        Ok(())
    }
    fn unmap(&mut self, p: ProcessorId, va: u64, size: u64) -> Result<(), BackendError> {
        for off in (0..size).step_by(PAGE_SIZE as usize) {
            assert!(self.ptes.remove(&(p, va + off)).is_some(), "{p} unmaps {:#x}, which is not mapped", va + off);
        }
        Ok(())
    }
}

/// Runs an access to completion: fault, service, retry (at most 3 services).
fn touch(ctx: &mut UvmContext, m: &mut Machine, p: ProcessorId, va: u64, write: Option<[u8; 16]>) -> [u8; 16] {
    for _ in 0..3 {
        match m.access(p, va, write) {
            Ok(v) => return v,
            Err(access) => {
                let page = ((va % MB2) / PAGE_SIZE) as usize;
                ctx.service_block(p, va, &[PageAccess { page, access }], &mut NoPrefetch, m).expect("service");
            }
        }
    }
    panic!("{p} access to {va:#x} still faults after servicing");
}

fn tag(n: u64) -> [u8; 16] {
    let mut t = [0u8; 16];
    t[..8].copy_from_slice(&n.to_le_bytes());
    t[8..].copy_from_slice(&(!n).to_le_bytes());
    t
}

#[test]
fn whole_block_on_a_gpu_is_one_2m_chunk_and_one_pte() {
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(4 * MB2, MB2, VaPolicy::default()).unwrap();
    let all: Vec<PageAccess> = (0..512).map(|page| PageAccess { page, access: AccessType::Write }).collect();
    let r = ctx.service_block(G0, 4 * MB2, &all, &mut NoPrefetch, &mut m).unwrap();
    assert_eq!(r.migrated_pages, 512);
    assert_eq!(m.pools[&G0].used(), MB2, "one 2 MiB chunk");
    assert_eq!(m.maps_by_size.get(&PageSize::Size2M), Some(&1));
    assert_eq!(m.zeroed, MB2, "first touch zero-fills");
    assert_eq!(m.copy_batches, 0);
    assert_eq!(touch(&mut ctx, &mut m, G0, 4 * MB2 + 0x1234, Some(tag(7))), tag(7));
    // The CPU reads one page back: the block's GPU mapping is rewritten without it.
    assert_eq!(touch(&mut ctx, &mut m, CPU, 4 * MB2 + 0x1000, None), tag(7));
    assert_eq!(ctx.stats.migrated_to_cpu_bytes, PAGE_SIZE);
    let b = ctx.va_space.range(4 * MB2).unwrap().block(4 * MB2).unwrap();
    assert_eq!(b.resident(G0).count(), 511);
    assert_eq!(b.resident(CPU).count(), 1);
    let layout = b.gpu(0).unwrap().pte_layout;
    assert!(!layout.is_2m);
    assert_eq!(layout.big.count_ones(), 31);
    assert_eq!(layout.small.count(), 15);
    assert!(m.translate(G0, 4 * MB2 + 0x1000, Prot::ReadOnly).is_none(), "GPU mapping of the moved page revoked");
    assert!(m.translate(G0, 4 * MB2 + 0x2000, Prot::ReadWrite).is_some());
    // Moving it back restores the 2M PTE over the same chunk.
    assert_eq!(touch(&mut ctx, &mut m, G0, 4 * MB2 + 0x1000, Some(tag(8))), tag(8));
    let b = ctx.va_space.range(4 * MB2).unwrap().block(4 * MB2).unwrap();
    assert!(b.gpu(0).unwrap().pte_layout.is_2m);
    assert_eq!(m.pools[&CPU].used(), 0, "the CPU page was freed");
    assert_eq!(m.ptes.keys().filter(|(p, _)| *p == CPU).count(), 0);
}

#[test]
fn ping_pong_keeps_data_and_frees_everything() {
    let mut m = Machine::new(2, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.register_gpu(1).unwrap();
    let base = 3 * MB2 + 0x5000; // not window-aligned: partial blocks at both ends
    let size = 2 * MB2 + 0x3000;
    ctx.va_space.create_managed_range(base, size, VaPolicy::default()).unwrap();
    let mut expect: BTreeMap<u64, [u8; 16]> = BTreeMap::new();
    let mut rng = 0x1234_5678_9abc_def0u64;
    let procs = [CPU, G0, G1];
    for i in 0..400u64 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let va = base + (rng % (size / PAGE_SIZE)) * PAGE_SIZE;
        let p = procs[(rng >> 40) as usize % 3];
        if rng & 1 == 0 {
            touch(&mut ctx, &mut m, p, va, Some(tag(i)));
            expect.insert(va, tag(i));
        } else {
            let got = touch(&mut ctx, &mut m, p, va, None);
            assert_eq!(got, expect.get(&va).copied().unwrap_or([0; 16]), "{p} read of {va:#x} at step {i}");
        }
    }
    // Everything back to the CPU: no GPU memory left, every GPU PTE gone.
    for (&va, &v) in &expect {
        assert_eq!(touch(&mut ctx, &mut m, CPU, va, None), v);
    }
    // Pages never touched by the CPU loop above may still be on a GPU; move them too.
    let starts: Vec<(u64, PageMask)> = ctx
        .va_space
        .ranges()
        .flat_map(|r| r.blocks())
        .map(|b| (b.start(), b.resident(G0).or(&b.resident(G1))))
        .collect();
    for (start, pages) in starts {
        ctx.migrate_block_pages(start, CPU, &pages, false, &mut m).unwrap();
    }
    assert_eq!(m.pools[&G0].used(), 0, "GPU0 chunks leaked");
    assert_eq!(m.pools[&G1].used(), 0, "GPU1 chunks leaked");
    assert!(m.ptes.keys().all(|(p, _)| p.is_cpu()), "GPU PTEs left after everything moved to the CPU");
    assert!(ctx.stats.migrated_to_gpu_bytes > 0 && ctx.stats.migrated_to_cpu_bytes > 0);
}

#[test]
fn read_duplication_copies_and_a_write_collapses() {
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
    ctx.va_space.advise(0, MB2, Advice::SetReadMostly).unwrap();
    touch(&mut ctx, &mut m, CPU, 0x3000, Some(tag(1)));
    assert_eq!(touch(&mut ctx, &mut m, G0, 0x3000, None), tag(1));
    let b = ctx.va_space.range(0).unwrap().block(0).unwrap();
    assert_eq!(b.residency_of(3).count(), 2, "duplicated");
    assert!(b.read_duplicated.test(3));
    assert_eq!(b.prot(CPU, 3), Prot::ReadOnly, "the CPU's mapping was downgraded");
    assert_eq!(b.prot(G0, 3), Prot::ReadOnly);
    // The GPU writes: the CPU copy goes and its mapping with it.
    touch(&mut ctx, &mut m, G0, 0x3000, Some(tag(2)));
    let b = ctx.va_space.range(0).unwrap().block(0).unwrap();
    assert_eq!(b.residency_of(3), crate::processor::ProcessorMask::of(G0));
    assert!(!b.read_duplicated.test(3));
    assert!(m.translate(CPU, 0x3000, Prot::ReadOnly).is_none());
    assert_eq!(m.pools[&CPU].used(), 0);
    assert_eq!(touch(&mut ctx, &mut m, CPU, 0x3000, None), tag(2));
}

#[test]
fn accessed_by_maps_remotely_instead_of_migrating() {
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
    ctx.va_space.advise(0, MB2, Advice::SetPreferredLocation(CPU)).unwrap();
    ctx.va_space.advise(0, MB2, Advice::SetAccessedBy(G0)).unwrap();
    touch(&mut ctx, &mut m, CPU, 0x10000, Some(tag(5)));
    // The CPU's first touch also mapped the accessed-by GPU.
    assert!(m.translate(G0, 0x10000, Prot::ReadWrite).is_some_and(|l| l.processor == CPU));
    assert_eq!(touch(&mut ctx, &mut m, G0, 0x10000, None), tag(5));
    assert_eq!(ctx.stats.migrated_to_gpu_bytes, 0);
    assert_eq!(m.pools[&G0].used(), 0);
}

#[test]
fn advice_inside_a_window_keeps_chunks_with_the_window() {
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
    for page in [0u64, 17, 300, 511] {
        touch(&mut ctx, &mut m, G0, page * PAGE_SIZE, Some(tag(page)));
    }
    ctx.va_space.advise(0x10_0000, 0x10_0000, Advice::SetPreferredLocation(CPU)).unwrap();
    assert_eq!(ctx.va_space.ranges().count(), 2);
    for page in [0u64, 17, 300, 511] {
        assert_eq!(touch(&mut ctx, &mut m, CPU, page * PAGE_SIZE, None), tag(page));
    }
    assert_eq!(m.pools[&G0].used(), 0, "chunks of both halves freed");
}

#[test]
fn a_fault_batch_is_serviced_per_block_and_fatal_faults_are_singled_out() {
    use crate::gpu_faults::{service_fault_batch, FatalReason, PendingFault};
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(MB2, 2 * MB2, VaPolicy::default()).unwrap();
    touch(&mut ctx, &mut m, CPU, MB2 + 0x5000, Some(tag(9)));
    let f = |va: u64, access| PendingFault { va, access, unserviceable: None };
    let batch = [
        f(MB2 + 0x5000, AccessType::Read),
        f(MB2 + 0x6000, AccessType::Write),
        f(2 * MB2 + 0x1000, AccessType::AtomicStrong),
        PendingFault { va: 2 * MB2 + 0x2000, access: AccessType::Read, unserviceable: Some("PRIV_VIOLATION") },
        f(3 * MB2, AccessType::Write), // one byte past the range
    ];
    let out = service_fault_batch(&mut ctx, 0, &batch, &mut NoPrefetch, &mut m);
    assert_eq!(out.blocks, 2);
    assert_eq!(out.serviced, 3);
    assert_eq!(out.fatal.len(), 2);
    assert_eq!(out.fatal[0].reason, FatalReason::FaultType("PRIV_VIOLATION"));
    assert_eq!((out.fatal[1].va, out.fatal[1].reason), (3 * MB2, FatalReason::NoRange));
    assert_eq!(ctx.stats.gpu_faults, 5);
    assert_eq!(ctx.stats.fault_batches, 1);
    assert_eq!(ctx.stats.cancels, 2);
    assert_eq!(ctx.stats.migrated_to_gpu_bytes, PAGE_SIZE, "one page had data to copy; the others were first touches");
    assert_eq!(m.access(G0, MB2 + 0x5000, None), Ok(tag(9)));
    assert!(m.access(G0, 2 * MB2 + 0x1000, Some(tag(1))).is_ok(), "atomic fault mapped read-write-atomic");
    assert!(m.access(G0, 2 * MB2 + 0x2000, None).is_err(), "the fatal fault's page was not serviced");
}

#[test]
fn four_times_oversubscribed_gpu_evicts_and_keeps_every_byte() {
    // 4 MiB of GPU memory, 16 MiB of managed memory touched by the GPU window after window.
    let mut m = Machine::new(1, 2 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    let size = 8 * MB2;
    ctx.va_space.create_managed_range(0, size, VaPolicy::default()).unwrap();
    for round in 0..2u64 {
        for w in 0..8u64 {
            let pages: Vec<PageAccess> = (0..512).map(|page| PageAccess { page, access: AccessType::Write }).collect();
            ctx.service_block(G0, w * MB2, &pages, &mut NoPrefetch, &mut m).unwrap();
            for page in (0..512u64).step_by(37) {
                let va = w * MB2 + page * PAGE_SIZE;
                if round == 0 {
                    assert_eq!(m.access(G0, va, Some(tag(va))), Ok(tag(va)));
                } else {
                    assert_eq!(m.access(G0, va, None), Ok(tag(va)), "GPU read after eviction and return, {va:#x}");
                }
            }
            assert!(m.pools[&G0].used() <= 2 * MB2);
        }
    }
    // 6 windows evicted in the first pass (8 - 2 that fit), 8 in the second.
    assert_eq!(ctx.stats.evictions, 14);
    assert_eq!(ctx.stats.migrated_to_cpu_bytes, 14 * MB2);
    assert_eq!(ctx.stats.migrated_to_gpu_bytes, 8 * MB2, "every window came back once with data");
    assert_eq!(m.maps_by_size.get(&PageSize::Size2M), Some(&16), "each window mapped with one 2M PTE each time");
    // The CPU sees every byte wherever it lives.
    for w in 0..8u64 {
        let va = w * MB2 + 37 * PAGE_SIZE;
        assert_eq!(touch(&mut ctx, &mut m, CPU, va, None), tag(va));
    }
    let b = ctx.va_space.range(0).unwrap().block(0).unwrap();
    assert!(!b.gpu(0).unwrap().evicted.is_empty(), "evicted pages are recorded");
    // With nothing else to evict, a window that does not fit alone is NoMemory, not a hang.
    let mut tiny = Machine::new(1, 0x10000);
    let mut ctx2 = UvmContext::new();
    ctx2.va_space.register_gpu(0).unwrap();
    ctx2.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
    let pages: Vec<PageAccess> = (0..32).map(|page| PageAccess { page, access: AccessType::Write }).collect();
    assert_eq!(
        ctx2.service_block(G0, 0, &pages, &mut NoPrefetch, &mut tiny).err(),
        Some(ServiceError::Backend(BackendError::NoMemory { processor: G0 }))
    );
}

/// Touches every page of `[0, size)` in order on GPU0, faulting and servicing one fault at a
/// time as a kernel streaming through memory would; returns the faults taken.
fn stream_faults(prefetch: &mut impl PrefetchPolicy, size: u64) -> (u64, UvmStats) {
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, size, VaPolicy::default()).unwrap();
    // The data starts on the CPU, as an application's input would.
    for va in (0..size).step_by(PAGE_SIZE as usize) {
        touch(&mut ctx, &mut m, CPU, va, Some(tag(va)));
    }
    let mut faults = 0;
    for va in (0..size).step_by(PAGE_SIZE as usize) {
        loop {
            match m.access(G0, va, None) {
                Ok(v) => {
                    assert_eq!(v, tag(va));
                    break;
                }
                Err(access) => {
                    faults += 1;
                    let page = ((va % MB2) / PAGE_SIZE) as usize;
                    ctx.service_block(G0, va, &[PageAccess { page, access }], prefetch, &mut m).unwrap();
                }
            }
        }
    }
    (faults, ctx.stats)
}

#[test]
fn prefetch_cuts_the_faults_of_a_sequential_stream() {
    let size = 8 * MB2;
    let (without, s0) = stream_faults(&mut NoPrefetch, size);
    let (with, s1) = stream_faults(&mut Prefetcher::default(), size);
    assert_eq!(without, size / PAGE_SIZE, "one fault per page without prefetch");
    assert_eq!(s0.prefetched_pages, 0);
    assert!(with * 8 < without, "prefetch: {with} faults, without: {without}");
    assert!(s1.prefetched_pages > 0);
    assert_eq!(s1.migrated_to_gpu_bytes, size, "every page migrated exactly once either way");
    assert_eq!(s0.migrated_to_gpu_bytes, size);
    let mib = size >> 20;
    std::println!(
        "sequential stream: {} faults/MiB without prefetch, {} faults/MiB with",
        without / mib,
        with as f64 / mib as f64
    );
}

/// Runs an access to completion however often thrashing throttles it (each try advances the
/// machine's clock by 1 us); returns the value and the services it took.
fn touch_patiently(
    ctx: &mut UvmContext,
    m: &mut Machine,
    p: ProcessorId,
    va: u64,
    write: Option<[u8; 16]>,
) -> [u8; 16] {
    for _ in 0..5000 {
        match m.access(p, va, write) {
            Ok(v) => return v,
            Err(access) => {
                let page = ((va % MB2) / PAGE_SIZE) as usize;
                ctx.service_block(p, va, &[PageAccess { page, access }], &mut NoPrefetch, m).expect("service");
            }
        }
    }
    panic!("{p} access to {va:#x} never completed");
}

fn ping_pong(thrashing: bool) -> (UvmStats, u64, Option<Location>) {
    let (ctx, m) = ping_ponged(thrashing);
    (ctx.stats, ctx.throttled_faults, m.translate(G0, 0x7000, Prot::ReadOnly))
}

/// GPU0 and the CPU take turns writing and reading the page at 0x7000, 200 rounds.
fn ping_ponged(thrashing: bool) -> (UvmContext, Machine) {
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.thrashing_config.enabled = thrashing;
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
    for i in 0..200u64 {
        let va = 0x7000;
        touch_patiently(&mut ctx, &mut m, G0, va, Some(tag(2 * i)));
        assert_eq!(touch_patiently(&mut ctx, &mut m, CPU, va, None), tag(2 * i));
        touch_patiently(&mut ctx, &mut m, CPU, va, Some(tag(2 * i + 1)));
        assert_eq!(touch_patiently(&mut ctx, &mut m, G0, va, None), tag(2 * i + 1));
    }
    (ctx, m)
}

#[test]
fn a_pinned_page_is_never_prefetched_and_its_pin_expires_after_the_pin_time() {
    use crate::perf::thrashing::{LAPSE_USEC_DEFAULT, PIN_DEFAULT};
    const PINNED: usize = 7;
    let (mut ctx, mut m) = ping_ponged(true);
    assert!(ctx.pinned_pages(0).test(PINNED), "the ping-pong pinned its page");
    let deadline = ctx.next_unpin_deadline().expect("a pin deadline");
    // GPU0 streams over the first 64 pages with UVM's prefetcher: the pages around the
    // pinned one move in large regions, the thrashing page does not move as a prefetch.
    let mut prefetcher = Prefetcher::default();
    let before = ctx.stats.prefetched_pages;
    for page in (0..64u64).filter(|&p| p != PINNED as u64) {
        let va = page * PAGE_SIZE;
        while let Err(access) = m.access(G0, va, None) {
            ctx.service_block(G0, va, &[PageAccess { page: page as usize, access }], &mut prefetcher, &mut m).unwrap();
        }
    }
    assert!(ctx.stats.prefetched_pages > before, "the stream was prefetched");
    let block = ctx.va_space.range(0).and_then(|r| r.block(0)).expect("block");
    assert!(block.resident(G0).test(PINNED + 1) && block.resident(G0).test(PINNED - 1));
    assert!(!block.resident(G0).test(PINNED), "a thrashing page is not prefetched");
    assert!(block.resident(CPU).test(PINNED));
    // Before the pin time nothing expires; after it the page is forgotten.
    assert!(deadline > m.now_ns());
    let pin_ns = u64::from(PIN_DEFAULT) * u64::from(LAPSE_USEC_DEFAULT) * 1_000;
    assert_eq!(pin_ns, 150_000_000, "UVM pins for 150 ms");
    assert!(deadline - m.now_ns() <= pin_ns);
    assert_eq!(ctx.unpin_expired(m.now_ns()), 0);
    assert!(ctx.pinned_pages(0).test(PINNED));
    m.now.set(deadline);
    assert_eq!(ctx.unpin_expired(m.now_ns()), 1);
    assert!(ctx.pinned_pages(0).is_empty());
    assert_eq!(ctx.next_unpin_deadline(), None);
    assert_eq!(ctx.unpinned_pages, 1);
}

#[test]
fn a_page_that_ping_pongs_is_pinned_and_mapped_remotely_instead_of_migrated_again() {
    let (plain, throttled0, _) = ping_pong(false);
    let (detected, throttled, gpu_view) = ping_pong(true);
    assert_eq!(throttled0, 0);
    assert_eq!(plain.thrashing_events, 0);
    let plain_moves = (plain.migrated_to_gpu_bytes + plain.migrated_to_cpu_bytes) / PAGE_SIZE;
    let moves = (detected.migrated_to_gpu_bytes + detected.migrated_to_cpu_bytes) / PAGE_SIZE;
    assert!(plain_moves >= 399, "without detection every turn migrates: {plain_moves}");
    assert!(detected.thrashing_events >= 1);
    // Both processors reach CPU memory, so UVM pins the page there and the GPU maps it remotely.
    assert_eq!(gpu_view.map(|l| l.processor), Some(CPU), "the GPU maps the pinned page in CPU memory");
    assert!(moves * 4 < plain_moves, "with detection {moves} migrations, without {plain_moves}");
    std::println!("ping-pong 800 accesses: {plain_moves} migrations plain, {moves} with thrashing detection ({throttled} throttled faults)");
}

#[test]
fn faults_throttled_by_thrashing_are_counted_even_when_nothing_else_moves() {
    // A fast ping-pong on one page: once it thrashes, the processor outside the throttling
    // period is throttled, and its service has nothing else to do. Each throttle is counted in
    // `throttled_faults` (the bottom half ends after UVM's limit of throttled batches by it).
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
    let va = 0x7000;
    let page = ((va % MB2) / PAGE_SIZE) as usize;
    let (mut reported, mut only_throttled) = (0u64, 0u32);
    for i in 0..40u64 {
        for (p, write) in [(G0, Some(tag(i))), (CPU, None)] {
            let mut tries = 0;
            while let Err(access) = m.access(p, va, write) {
                tries += 1;
                assert!(tries < 5000, "{p} access to {va:#x} never completed");
                let r = ctx.service_block(p, va, &[PageAccess { page, access }], &mut NoPrefetch, &mut m).unwrap();
                reported += r.throttled as u64;
                if r.throttled > 0 && r.migrated_pages == 0 {
                    only_throttled += 1;
                }
            }
        }
    }
    assert!(ctx.stats.thrashing_events >= 1, "{:?}", ctx.stats);
    assert!(only_throttled > 0, "some services throttled their only page");
    assert_eq!(ctx.throttled_faults, reported, "every throttle is counted");
}

// ---------------------------------------------------------------------------------------------
// The whole replayable path against the GPU model's fault buffer: the model writes packets as
// the hardware does, the driver side fetches, coalesces, services, flushes and replays, and the
// model checks the protocol (a replay without a flush, a cancel of no fault, a GET beyond PUT
// are model errors here).

mod model_faults {
    use super::*;
    use crate::fault::batch::ServiceConfig;
    use crate::fault::buffer::{FaultBufferMemory, FaultBufferRegisters, FetchConfig, ReplayableFaultBuffer};
    use crate::fault::entry::RawFaultEntry;
    use crate::replayable::{
        service_replayable_faults, BottomHalfState, FaultingGpu, ReplayChannel, ReplayChannelError,
    };
    use core::cell::RefCell;
    use nvgpu::host::mem_op::{CancelVa, ReplayType};
    use nvgpu::hw::fault::{tu102::NV_PFAULT_MMU_ENG_ID_GRAPHICS, FaultAccessType, FaultType};
    use nvgpu::hw::vm::{
        FaultBufferAddrMode, FaultBufferAperture, NV_PFB_PRI_MMU_FAULT_BUFFER_LO as LO_LAYOUT,
        NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE as SIZE_LAYOUT, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET as GET,
        NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_HI as HI, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_LO as LO,
        NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT as PUT, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE as SIZE,
        NV_VIRTUAL_FUNCTION_PRIV_MMU_REPLAY_FAULT_BUFFER as REPLAYABLE, VF_BASE,
    };
    use sim::engine_mem::{PhysAddr, PhysAperture, PhysicalMemory};
    use sim::fault_buffer::{FaultRecord, Outstanding, ReplayableFaultBuffer as ModelBuffer};

    const BUF_BASE: u64 = 0x4_0000_0000;
    pub(super) const ENTRIES: u32 = 512;
    const PDB: PhysAddr = PhysAddr { aperture: PhysAperture::Video, addr: 0x20_0000 };

    /// The fault buffer's system memory: one flat array at [`BUF_BASE`].
    struct Sysmem(Vec<u8>);
    impl Default for Sysmem {
        fn default() -> Self {
            Sysmem(alloc::vec![0; ENTRIES as usize * 32])
        }
    }
    impl Sysmem {
        fn span(&mut self, at: PhysAddr, len: usize) -> Option<&mut [u8]> {
            let off = usize::try_from(at.addr.checked_sub(BUF_BASE)?).ok()?;
            self.0.get_mut(off..off.checked_add(len)?)
        }
    }
    impl PhysicalMemory for Sysmem {
        fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool {
            let len = buf.len();
            self.span(at, len).map(|s| buf.copy_from_slice(s)).is_some()
        }
        fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool {
            self.span(at, data.len()).map(|s| s.copy_from_slice(data)).is_some()
        }
    }

    /// The model's buffer and its memory, shared by the "GPU" (reporting) and the driver.
    pub(super) struct Model {
        pub(super) fb: RefCell<ModelBuffer>,
        mem: RefCell<Sysmem>,
        pub(super) errors: RefCell<Vec<sim::fault_buffer::FaultBufferError>>,
    }

    impl Model {
        pub(super) fn new() -> Self {
            let m =
                Model { fb: RefCell::new(ModelBuffer::default()), mem: RefCell::default(), errors: RefCell::default() };
            let lo = LO_LAYOUT::from_raw(0)
                .with(LO_LAYOUT::ADDR_MODE, FaultBufferAddrMode::Physical)
                .with(LO_LAYOUT::PHYS_APERTURE, FaultBufferAperture::SysCoh)
                .with(LO_LAYOUT::ADDR, (BUF_BASE as u32) >> 12);
            let size = SIZE_LAYOUT::from_raw(0).with(SIZE_LAYOUT::VAL, ENTRIES).with(SIZE_LAYOUT::ENABLE, true);
            for (reg, v) in [
                (LO::address(VF_BASE, REPLAYABLE), lo.raw()),
                (HI::address(VF_BASE, REPLAYABLE), (BUF_BASE >> 32) as u32),
                (SIZE::address(VF_BASE, REPLAYABLE), size.raw()),
            ] {
                m.reg(reg, Some(v));
            }
            m
        }
        fn reg(&self, offset: u32, write: Option<u32>) -> u32 {
            self.fb.borrow_mut().access(offset, write).unwrap_or_else(|e| {
                self.errors.borrow_mut().push(e);
                0
            })
        }
        pub(super) fn report(&self, va: u64, write: bool, ts: u64) {
            self.report_access(va, if write { FaultAccessType::VirtWrite } else { FaultAccessType::VirtRead }, ts);
        }
        pub(super) fn report_access(&self, va: u64, access: FaultAccessType, ts: u64) {
            let record = FaultRecord {
                instance: PDB,
                va,
                fault_type: FaultType::Pte,
                access,
                engine_id: NV_PFAULT_MMU_ENG_ID_GRAPHICS,
                client: (va >> 12) as u8 & 7,
                gpc: 0,
                timestamp_ns: ts,
            };
            let _ = self.fb.borrow_mut().report(record, &mut *self.mem.borrow_mut()).expect("fault buffer");
        }
    }

    impl FaultBufferMemory for &Model {
        fn read_entry(&self, index: u32) -> RawFaultEntry {
            let mut e = [0u8; 32];
            let at = PhysAddr { aperture: PhysAperture::SystemCoherent, addr: BUF_BASE + 32 * u64::from(index) };
            self.mem.borrow_mut().read_phys(at, &mut e);
            e
        }
        fn clear_valid(&mut self, index: u32) {
            let mut e = self.read_entry(index);
            nvgpu::hw::fault::NVC369_BUF_ENTRY_VALID.set(&mut e, 0);
            let at = PhysAddr { aperture: PhysAperture::SystemCoherent, addr: BUF_BASE + 32 * u64::from(index) };
            self.mem.borrow_mut().write_phys(at, &e);
        }
    }

    impl FaultBufferRegisters for &Model {
        fn read_put(&self) -> u32 {
            self.reg(PUT::address(VF_BASE, REPLAYABLE), None)
        }
        fn read_get(&self) -> u32 {
            self.reg(GET::address(VF_BASE, REPLAYABLE), None)
        }
        fn write_get(&mut self, raw: u32) {
            self.reg(GET::address(VF_BASE, REPLAYABLE), Some(raw));
        }
    }

    /// The replay channel: the model's replay hands back the outstanding faults to retry.
    pub(super) struct Channel<'a> {
        pub(super) model: &'a Model,
        pub(super) retry: Vec<Outstanding>,
        pub(super) cancelled: Vec<u64>,
        pub(super) replays: u32,
    }

    impl ReplayChannel for Channel<'_> {
        fn replay(&mut self, _: ReplayType) -> Result<(), ReplayChannelError> {
            self.replays += 1;
            match self.model.fb.borrow_mut().replay() {
                Ok(o) => {
                    self.retry.extend(o);
                    Ok(())
                }
                Err(e) => {
                    self.model.errors.borrow_mut().push(e);
                    Err(ReplayChannelError { what: "model refused the replay" })
                }
            }
        }
        fn cancel_va(&mut self, cancel: &CancelVa) -> Result<(), ReplayChannelError> {
            let instance = PhysAddr { aperture: PhysAperture::Video, addr: cancel.pdb };
            match self.model.fb.borrow_mut().cancel_va(instance, cancel.va, cancel.mode.access_type()) {
                Ok(_) => {
                    self.cancelled.push(cancel.va);
                    Ok(())
                }
                Err(e) => {
                    self.model.errors.borrow_mut().push(e);
                    Err(ReplayChannelError { what: "model refused the cancel" })
                }
            }
        }
    }

    /// A "kernel" of `accesses` (va, write value) run by the GPU: every access that misses is
    /// reported to the model's buffer and waits for a replay; returns the bottom halves run.
    fn run_kernel(
        ctx: &mut UvmContext,
        m: &mut Machine,
        model: &Model,
        accesses: &[(u64, Option<[u8; 16]>)],
        prefetch: &mut impl PrefetchPolicy,
    ) -> (u32, Vec<u64>, Vec<Option<[u8; 16]>>) {
        let mut results: Vec<Option<[u8; 16]>> = alloc::vec![None; accesses.len()];
        let mut waiting: Vec<usize> = (0..accesses.len()).collect();
        let mut cancelled = Vec::new();
        let mut bottom_halves = 0;
        let gpu = FaultingGpu { gpu: 0, graphics_engine_base: NV_PFAULT_MMU_ENG_ID_GRAPHICS };
        while !waiting.is_empty() {
            let mut still = Vec::new();
            for &i in &waiting {
                let (va, write) = accesses[i];
                match m.access(G0, va, write) {
                    Ok(v) => results[i] = Some(v),
                    Err(_) => {
                        model.report(va, write.is_some(), m.now_ns());
                        still.push(i);
                    }
                }
            }
            if still.is_empty() {
                break;
            }
            let mut buffer = ReplayableFaultBuffer::new(model, model, ENTRIES, FetchConfig::default()).unwrap();
            let mut channel = Channel { model, retry: Vec::new(), cancelled: Vec::new(), replays: 0 };
            let config = ServiceConfig::default();
            let mut state = BottomHalfState::new(&config);
            let report = service_replayable_faults(
                &mut buffer,
                ctx,
                gpu,
                |inst| inst.address == PDB.addr,
                &config,
                &mut state,
                prefetch,
                m,
                &mut channel,
            )
            .expect("bottom half");
            assert_eq!(report.replays, channel.replays);
            bottom_halves += 1;
            // Cancelled accesses end (the kernel is told); the rest retry.
            cancelled.extend(channel.cancelled.iter().copied());
            waiting = still.into_iter().filter(|&i| !channel.cancelled.contains(&(accesses[i].0 & !0xfff))).collect();
            assert!(bottom_halves < 50, "no progress");
        }
        assert!(model.errors.borrow().is_empty(), "model errors: {:?}", model.errors.borrow());
        (bottom_halves, cancelled, results)
    }

    /// The bench's machine: what a platform's backend has to do per call and nothing more,
    /// so that the count is uvm's work and not the checking [`Machine`]'s bookkeeping (its
    /// maps of page contents and PTEs). Page tables are flat arrays of PTE words, one 8-byte
    /// write per PTE mapped or cleared (a GPU's through `nvgpu`'s page-table code, the CPU's in
    /// the kernel's paging, each writes one word per PTE); memory comes from free lists, as
    /// the runtime's CPU pages and the PMM's chunks do; copies and zero-fills are counted and
    /// excluded from the figure (the copy engine does them).
    pub(super) struct LeanMachine {
        /// PTE words per processor (CPU, GPU0) for the managed VA `[0, BENCH_VA)`, 4 KiB each.
        ptes: [Vec<u64>; 2],
        cpu_free: Vec<u64>,
        cpu_next: u64,
        gpu_next: u64,
        gpu_free: Vec<(u64, u64)>,
        pub(super) copied: u64,
        now: core::cell::Cell<u64>,
    }

    /// The bench's managed VA: four 2 MiB blocks.
    const BENCH_VA: u64 = 4 * MB2;
    const PTE_VALID: u64 = 1;

    impl LeanMachine {
        fn new() -> Self {
            let pages = (BENCH_VA / PAGE_SIZE) as usize;
            LeanMachine {
                ptes: [alloc::vec![0; pages], alloc::vec![0; pages]],
                cpu_free: Vec::new(),
                cpu_next: 0x1_0000_0000,
                gpu_next: 0x10_0000_0000,
                gpu_free: Vec::new(),
                copied: 0,
                now: core::cell::Cell::new(1_000_000),
            }
        }
        fn table(&mut self, p: ProcessorId) -> &mut Vec<u64> {
            let [cpu, gpu] = &mut self.ptes;
            if p.is_cpu() {
                cpu
            } else {
                gpu
            }
        }
        /// The PTE word mapping `va` on `p`.
        pub(super) fn pte(&self, p: ProcessorId, va: u64) -> u64 {
            self.ptes[usize::from(!p.is_cpu())][(va / PAGE_SIZE) as usize]
        }
        pub(super) fn advance(&self, ns: u64) {
            self.now.set(self.now.get() + ns);
        }
    }

    impl ProcessorTopology for LeanMachine {
        fn can_access(&self, from: ProcessorId, to: ProcessorId) -> bool {
            from == to || to == CPU
        }
        fn has_memory(&self, p: ProcessorId) -> bool {
            p.gpu().is_none_or(|g| g == 0)
        }
    }

    // Out of line, so that callgrind counts the backend apart from uvm.
    impl UvmBackend for LeanMachine {
        #[inline(never)]
        fn alloc(&mut self, processor: ProcessorId, size: u64, _window: u64) -> Result<u64, BackendError> {
            if processor.is_cpu() {
                return Ok(self.cpu_free.pop().unwrap_or_else(|| {
                    self.cpu_next += PAGE_SIZE;
                    self.cpu_next - PAGE_SIZE
                }));
            }
            if let Some(i) = self.gpu_free.iter().rposition(|&(_, s)| s == size) {
                return Ok(self.gpu_free.swap_remove(i).0);
            }
            let pa = self.gpu_next.next_multiple_of(size);
            self.gpu_next = pa + size;
            Ok(pa)
        }
        #[inline(never)]
        fn free(&mut self, processor: ProcessorId, phys: u64, size: u64) {
            if processor.is_cpu() {
                self.cpu_free.push(phys);
            } else {
                self.gpu_free.push((phys, size));
            }
        }
        #[inline(never)]
        fn copy(&mut self, copies: &[PageCopy]) -> Result<(), BackendError> {
            self.copied += copies.iter().map(|c| c.bytes).sum::<u64>();
            Ok(())
        }
        #[inline(never)]
        fn zero(&mut self, _dst: Location, _bytes: u64) -> Result<(), BackendError> {
            Ok(())
        }
        #[inline(never)]
        fn map(
            &mut self,
            p: ProcessorId,
            va: u64,
            size: u64,
            page_size: PageSize,
            target: MappingTarget,
            prot: Prot,
        ) -> Result<(), BackendError> {
            let step = match page_size {
                PageSize::Size2M => MB2,
                PageSize::Size64K => 0x10000,
                _ => PAGE_SIZE,
            };
            let table = self.table(p);
            for off in (0..size).step_by(step as usize) {
                let slot = table
                    .get_mut(((va + off) / PAGE_SIZE) as usize)
                    .ok_or(BackendError::MappingFailed { processor: p, va })?;
                *slot = (target.phys + off) | (prot as u64) << 1 | PTE_VALID;
            }
            Ok(())
        }
        #[inline(never)]
        fn unmap(&mut self, p: ProcessorId, va: u64, size: u64) -> Result<(), BackendError> {
            let table = self.table(p);
            let first = (va / PAGE_SIZE) as usize;
            let slots = table.get_mut(first..first + (size / PAGE_SIZE) as usize);
            slots.ok_or(BackendError::MappingFailed { processor: p, va })?.fill(0);
            Ok(())
        }
        fn now_ns(&self) -> u64 {
            self.now.get()
        }
    }

    /// 256 GPU reads of 256 distinct CPU-resident pages (every other page of 4 blocks, so no
    /// two faults share a PTE or a copy), faulted into the model's buffer, then one bottom half
    /// on the [`LeanMachine`]; returns the faults serviced, after checking that every page
    /// moved: GPU-mapped to GPU memory, unmapped on the CPU, its CPU page freed.
    pub(super) fn bench_bottom_half() -> u64 {
        let mut m = LeanMachine::new();
        let mut ctx = UvmContext::new();
        ctx.va_space.register_gpu(0).unwrap();
        ctx.va_space.create_managed_range(0, BENCH_VA, VaPolicy::default()).unwrap();
        let vas: Vec<u64> = (0..256u64).map(|i| (i % 4) * MB2 + (i / 4) * 2 * PAGE_SIZE).collect();
        for &va in &vas {
            let page = ((va % MB2) / PAGE_SIZE) as usize;
            ctx.service_block(CPU, va, &[PageAccess { page, access: AccessType::Write }], &mut NoPrefetch, &mut m)
                .unwrap();
            m.advance(1000);
        }
        let model = Model::new();
        for &va in &vas {
            model.report(va, false, m.now_ns());
        }
        let mut buffer = ReplayableFaultBuffer::new(&model, &model, ENTRIES, FetchConfig::default()).unwrap();
        let mut channel = Channel { model: &model, retry: Vec::new(), cancelled: Vec::new(), replays: 0 };
        let gpu = FaultingGpu { gpu: 0, graphics_engine_base: NV_PFAULT_MMU_ENG_ID_GRAPHICS };
        let report = timed_bottom_half(&mut buffer, &mut ctx, gpu, &mut m, &mut channel);
        assert_eq!(channel.retry.len(), 256);
        assert_eq!(channel.replays, 1);
        assert!(model.errors.borrow().is_empty());
        assert_eq!(m.copied, 256 * PAGE_SIZE, "every page copied once");
        assert_eq!(m.cpu_free.len(), 256, "every CPU page freed");
        for &va in &vas {
            let gpu_pte = m.pte(G0, va);
            assert!(gpu_pte & PTE_VALID != 0 && gpu_pte >= 0x10_0000_0000, "{va:#x} GPU-mapped to vidmem");
            assert_eq!(m.pte(CPU, va), 0, "{va:#x} unmapped on the CPU");
        }
        report as u64
    }

    #[inline(never)]
    fn timed_bottom_half(
        buffer: &mut ReplayableFaultBuffer<&Model, &Model>,
        ctx: &mut UvmContext,
        gpu: FaultingGpu,
        m: &mut LeanMachine,
        channel: &mut Channel<'_>,
    ) -> usize {
        let config = ServiceConfig::default();
        let mut state = BottomHalfState::new(&config);
        service_replayable_faults(
            buffer,
            ctx,
            gpu,
            |inst| inst.address == PDB.addr,
            &config,
            &mut state,
            &mut NoPrefetch,
            m,
            channel,
        )
        .expect("bottom half")
        .serviced
    }

    /// The bench's workload on the checking [`Machine`] too: the same moves, with every page's
    /// contents checked after the replay.
    #[test]
    fn the_bench_workload_moves_every_page_with_its_contents() {
        let mut m = Machine::new(1, 64 * MB2);
        let mut ctx = UvmContext::new();
        ctx.va_space.register_gpu(0).unwrap();
        ctx.va_space.create_managed_range(0, BENCH_VA, VaPolicy::default()).unwrap();
        let vas: Vec<u64> = (0..256u64).map(|i| (i % 4) * MB2 + (i / 4) * 2 * PAGE_SIZE).collect();
        for &va in &vas {
            touch(&mut ctx, &mut m, CPU, va, Some(tag(va)));
        }
        let model = Model::new();
        let accesses: Vec<(u64, Option<[u8; 16]>)> = vas.iter().map(|&va| (va, None)).collect();
        let (bottom_halves, cancelled, results) = run_kernel(&mut ctx, &mut m, &model, &accesses, &mut NoPrefetch);
        assert_eq!((bottom_halves, cancelled.len()), (1, 0));
        for (&va, got) in vas.iter().zip(&results) {
            assert_eq!(*got, Some(tag(va)), "{va:#x}");
            assert!(m.access(CPU, va, None).is_err(), "{va:#x} left the CPU");
        }
        assert_eq!(ctx.stats.migrated_to_gpu_bytes, 256 * PAGE_SIZE);
        for &va in &vas {
            assert_eq!(touch(&mut ctx, &mut m, CPU, va, None), tag(va), "{va:#x} back on the CPU");
        }
    }

    #[test]
    fn faults_go_through_the_models_buffer_and_replay_to_exact_results() {
        let mut m = Machine::new(1, 64 * MB2);
        let mut ctx = UvmContext::new();
        ctx.va_space.register_gpu(0).unwrap();
        ctx.va_space.create_managed_range(0, 2 * MB2, VaPolicy::default()).unwrap();
        // The input starts on the CPU.
        for va in (0..2 * MB2).step_by(PAGE_SIZE as usize) {
            touch(&mut ctx, &mut m, CPU, va, Some(tag(va)));
        }
        let model = Model::new();
        // 300 "threads": 100 pages read three times each (duplicates within one batch).
        let reads: Vec<(u64, Option<[u8; 16]>)> = (0..300u64).map(|i| (((i % 100) * 3) * PAGE_SIZE, None)).collect();
        let (halves, cancelled, results) = run_kernel(&mut ctx, &mut m, &model, &reads, &mut NoPrefetch);
        assert!(cancelled.is_empty());
        for (i, r) in results.iter().enumerate() {
            assert_eq!(*r, Some(tag(reads[i].0)), "read {i}");
        }
        assert_eq!(halves, 1, "one bottom half services all 300 faults");
        // The first batch (256 entries) holds every one of the 100 pages; its BATCH_FLUSH
        // (duplicates well above 50%: UPDATE_PUT) drops the 44 entries left, then one replay.
        assert_eq!(ctx.stats.gpu_faults, 256);
        assert_eq!(ctx.stats.fault_batches, 1);
        assert_eq!(ctx.stats.replays, 1);
        assert_eq!(ctx.stats.migrated_to_gpu_bytes, 100 * PAGE_SIZE);
        assert_eq!(model.fb.borrow().delivered, 300);
    }

    #[test]
    fn a_fault_outside_managed_memory_is_cancelled_and_the_rest_completes() {
        let mut m = Machine::new(1, 64 * MB2);
        let mut ctx = UvmContext::new();
        ctx.va_space.register_gpu(0).unwrap();
        ctx.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
        let model = Model::new();
        let accesses = [(0x1000, Some(tag(1))), (MB2 + 0x5000, Some(tag(2))), (0x2000, Some(tag(3)))];
        let (_, cancelled, results) = run_kernel(&mut ctx, &mut m, &model, &accesses, &mut NoPrefetch);
        assert_eq!(cancelled, [MB2 + 0x5000]);
        assert_eq!(results[0], Some(tag(1)));
        assert_eq!(results[1], None, "the cancelled access never completed");
        assert_eq!(results[2], Some(tag(3)));
        assert_eq!(ctx.stats.cancels, 1);
        assert!(model.fb.borrow().outstanding().is_empty());
    }
}

#[test]
fn oversubscription_through_the_pmm_evicts_its_least_recently_used_root_chunks() {
    use crate::pmm::{Pmm, SimpleRootSource};
    let mut m = Machine::new(1, 0);
    m.pmm = Some(crate::gpu_memory::GpuMemory::new(Pmm::new(SimpleRootSource::new(0x10_0000_0000, 4), None)));
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, 16 * MB2, VaPolicy::default()).unwrap();
    // Windows 0..16 (4x the GPU's 4 root chunks), half of each block touched page by page:
    // 64 KiB chunks, several windows per root chunk.
    for w in 0..16u64 {
        for page in (0..256u64).step_by(16) {
            let va = w * MB2 + page * PAGE_SIZE;
            touch(&mut ctx, &mut m, G0, va, Some(tag(va)));
        }
    }
    let evicted = m.pmm.as_ref().unwrap().evicted_roots;
    assert!(evicted > 0, "the PMM chose victims");
    assert!(ctx.stats.evictions > 0);
    for w in 0..16u64 {
        for page in (0..256u64).step_by(16) {
            let va = w * MB2 + page * PAGE_SIZE;
            assert_eq!(touch(&mut ctx, &mut m, G0, va, None), tag(va), "{va:#x}");
        }
    }
    let stats = m.pmm.as_ref().unwrap().pmm.stats();
    std::println!("PMM after 4x oversubscription: {stats:?}, {} evictions", ctx.stats.evictions);
}

/// The cost of one bottom half that services 256 faults on 256 distinct pages (one full
/// batch): fetch, coalesce, sort, service (residency, memory, mappings), flush and replay.
/// Out of line so callgrind can count it alone (`scripts/bench-uvm-faults.sh`).
#[inline(never)]
pub(crate) fn one_bottom_half_of_256_faults() -> u64 {
    model_faults::bench_bottom_half()
}

#[test]
fn fault_service_cost_workload() {
    assert_eq!(one_bottom_half_of_256_faults(), 256);
}

#[test]
fn invalid_prefetch_faults_are_dropped_and_turn_prefetch_faults_off() {
    use crate::fault::batch::ServiceConfig;
    use crate::fault::buffer::{FetchConfig, ReplayableFaultBuffer};
    use crate::replayable::{service_replayable_faults, BottomHalfState, FaultingGpu};
    use model_faults::*;
    use nvgpu::hw::fault::{tu102::NV_PFAULT_MMU_ENG_ID_GRAPHICS, FaultAccessType};
    use nvgpu::hw::vm::PrfFilter;
    let mut m = Machine::new(1, 64 * MB2);
    let mut ctx = UvmContext::new();
    ctx.va_space.register_gpu(0).unwrap();
    ctx.va_space.create_managed_range(0, MB2, VaPolicy::default()).unwrap();
    let model = Model::new();
    // 200 prefetches to unmanaged addresses and one real read: more than 2/3 of a batch of 256.
    for i in 0..200u64 {
        model.report_access(8 * MB2 + i * PAGE_SIZE, FaultAccessType::VirtPrefetch, 1);
    }
    model.report(0x3000, false, 1);
    let config = ServiceConfig::default();
    let mut state = BottomHalfState::new(&config);
    let mut buffer = ReplayableFaultBuffer::new(&model, &model, ENTRIES, FetchConfig::default()).unwrap();
    let mut channel = Channel { model: &model, retry: Vec::new(), cancelled: Vec::new(), replays: 0 };
    let gpu = FaultingGpu { gpu: 0, graphics_engine_base: NV_PFAULT_MMU_ENG_ID_GRAPHICS };
    let report = service_replayable_faults(
        &mut buffer,
        &mut ctx,
        gpu,
        |_| true,
        &config,
        &mut state,
        &mut NoPrefetch,
        &mut m,
        &mut channel,
    )
    .unwrap();
    assert_eq!(report.invalid_prefetch, 200);
    assert!(report.cancelled.is_empty(), "prefetches to nowhere are not cancelled");
    assert_eq!(ctx.stats.cancels, 0);
    assert_eq!(report.prefetch_filter, Some(PrfFilter::SendNone));
    assert!(!state.prefetch_faults.enabled());
    assert!(m.access(G0, 0x3000, None).is_ok(), "the real fault was serviced");
    assert!(model.errors.borrow().is_empty(), "{:?}", model.errors.borrow());
}
