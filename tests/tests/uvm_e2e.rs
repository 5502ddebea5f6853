//! Unified memory end to end on model GPUs of every family GSP-RM 535.261.03 runs on, booted
//! with the real firmware: managed buffers (`uvm::runtime`) written by the CPU, used by a PTX
//! kernel (clang-19, `payloads/vector_add.cu`) that takes replayable faults on every page it
//! touches first, serviced by UVM's bottom half (fetch, coalesce, service per va_block,
//! prefetch, eviction under a VRAM budget smaller than the working set, flush, replay with
//! `MEM_OP` on a channel), the model resuming the stalled warps with their registers intact;
//! the result read back by the CPU (GPU-resident pages migrated back), compared with a CPU
//! computation byte for byte, and the statistics asserted. A kernel writing outside every
//! managed buffer gets its fault cancelled precisely and a typed error naming the address and
//! access, and the context's other work goes on.
//!
//! Missing real data is a failure, never a skip: run `scripts/fetch-real-data.sh` (as root).

use nvgpu::chip::Chipset;
use nvgpu::rm::InternalSubdevice;
use nvgpu::runtime::{Args, Gpu, GpuConfig, LaunchConfig, Module, StreamKind};
use sim::ModelConfig;
use tests::model_boot::{pattern, with_booted, DoorbellSwitch};
use tests::ptx_build::ptx;
use uvm::runtime::{ManagedConfig, ManagedError, UnifiedMemory};
use uvm::va_block::AccessType;

/// What one run measured.
#[derive(Debug)]
struct Outcome {
    stats: uvm::service::UvmStats,
    model_errors: usize,
}

/// `c = a + b` over `n` u32s in managed memory, with `vram` bytes of VRAM for the context.
fn vector_add(config: ModelConfig, n: usize, vram: u64, prefetch: bool) -> Outcome {
    let chip = config.chipset;
    let mut outcome = None;
    with_booted(config, |model, arena, clock, boot| {
        let info = *boot.static_info().expect("static info");
        let rpc = boot.rpc().expect("rpc");
        let bar = DoorbellSwitch::new(model);
        let cfg = GpuConfig { runs_ptx: true, page_faulting: true, timeout_ms: 60_000, ..GpuConfig::default() };
        let mut gpu = Gpu::new(rpc, &bar, arena, clock, &info, chip, cfg).expect("gpu");
        let mut um = UnifiedMemory::new(
            &mut gpu,
            rpc,
            InternalSubdevice::from_static_info(&info),
            ManagedConfig { vram_bytes: vram, prefetch, ..ManagedConfig::default() },
        )
        .unwrap_or_else(|e| panic!("{chip:?}: managed memory: {e}\n{:?}", model.errors()));
        let bytes = n * 4;
        let a = um.alloc_managed(&mut gpu, bytes).expect("a");
        let b = um.alloc_managed(&mut gpu, bytes).expect("b");
        let c = um.alloc_managed(&mut gpu, bytes).expect("c");
        let av = pattern(bytes, 1 + chip as u32);
        let bv = pattern(bytes, 7 + chip as u32);
        um.write(&mut gpu, a.va, &av).expect("CPU writes a");
        um.write(&mut gpu, b.va, &bv).expect("CPU writes b");

        let text = ptx("vector_add", tests::ptx_build::native_arch(chip));
        let module = Module::load(&mut gpu, text.as_bytes()).expect("module");
        let f = module.function("vector_add_u32").expect("function");
        let stream = gpu.create_stream(rpc, StreamKind::Compute).expect("stream");
        let args = Args::new().device_ptr(a.va).device_ptr(b.va).device_ptr(c.va).u32(n as u32);
        stream.launch(&mut gpu, &f, LaunchConfig::linear((n as u32).div_ceil(256), 256), &args).expect("launch");
        let raised = model.interrupts_raised();
        um.synchronize(&mut gpu, &stream).unwrap_or_else(|e| panic!("{chip:?}: kernel: {e}\n{:?}", model.errors()));
        // The faults came through the replayable fault interrupt, on the vector GSP-RM's table
        // names, and each interrupt ran one bottom half; none is left pending.
        assert_eq!(um.fault_interrupt_vector(), sim::intr::REPLAYABLE_FAULT_VECTOR);
        assert!(um.fault_interrupts > 0, "{chip:?}: no replayable fault interrupt was taken");
        assert!(model.interrupts_raised() - raised >= um.fault_interrupts, "{chip:?}: the GPU raised each one");
        assert!(um.stats().fault_batches >= um.fault_interrupts);
        assert!(!um.fault_interrupt_pending(&gpu), "{chip:?}: the last bottom half cleared the interrupt");

        let mut got = vec![0u8; bytes];
        um.read(&mut gpu, c.va, &mut got).expect("CPU reads c");
        let want: Vec<u8> = av
            .chunks_exact(4)
            .zip(bv.chunks_exact(4))
            .flat_map(|(x, y)| {
                u32::from_le_bytes(x.try_into().unwrap())
                    .wrapping_add(u32::from_le_bytes(y.try_into().unwrap()))
                    .to_le_bytes()
            })
            .collect();
        if got != want {
            let first = got.iter().zip(&want).position(|(x, y)| x != y).unwrap_or(0);
            let wrong = got.chunks(4).zip(want.chunks(4)).filter(|(x, y)| x != y).count();
            panic!(
                "{chip:?}: c = a + b over {n} elements, byte for byte: {wrong} wrong, first at byte {first:#x} \
                 (got {:02x?}, want {:02x?}); stats {:?}",
                &got[first..first + 8],
                &want[first..first + 8],
                um.stats()
            );
        }
        // The inputs are intact after their round trip to the GPU.
        let mut back = vec![0u8; bytes];
        um.read(&mut gpu, a.va, &mut back).expect("CPU reads a");
        assert!(back == av, "{chip:?}: a survives migration");

        // A kernel that writes outside every managed buffer: cancelled, a typed error.
        // Far above everything the VA allocator hands out, in every MMU format's range.
        let stray = 0x4000_0000_0000u64;
        let stream2 = gpu.create_stream(rpc, StreamKind::Compute).expect("second stream");
        let bad = Args::new().device_ptr(a.va).device_ptr(b.va).device_ptr(stray).u32(64);
        stream2.launch(&mut gpu, &f, LaunchConfig::linear(1, 64), &bad).expect("launch");
        match um.synchronize(&mut gpu, &stream2) {
            Err(ManagedError::FatalFault { va, access, .. }) => {
                assert_eq!(va, stray & !0xfff, "{chip:?}: the fault names the page");
                assert_eq!(access, AccessType::Write, "{chip:?}: and the access");
            }
            other => panic!("{chip:?}: a stray write must be a fatal fault, got {other:?}"),
        }
        // The context goes on: managed memory still reads on the CPU.
        um.read(&mut gpu, a.va, &mut back).expect("CPU reads a after the fatal fault");
        assert!(back == av);

        let stats = um.stats();
        let errors = model.take_errors();
        // The cancelled launch's channel error is the one model error expected.
        let unexpected: Vec<_> = errors.iter().filter(|e| !matches!(e, sim::ModelError::ChannelError { .. })).collect();
        assert!(unexpected.is_empty(), "{chip:?}: model errors: {unexpected:?}");
        outcome = Some(Outcome { stats, model_errors: unexpected.len() });
    });
    outcome.expect("the run finished")
}

fn check_family(config: ModelConfig) {
    let chip = config.chipset;
    // 3 buffers of 3 MiB (9 MiB) through 4 MiB of VRAM: oversubscribed more than 2x.
    let o = vector_add(config, (3 << 20) / 4, 4 << 20, true);
    let s = o.stats;
    assert_eq!(o.model_errors, 0);
    assert!(s.gpu_faults > 0 && s.fault_batches > 0 && s.replays > 0, "{chip:?}: faults serviced: {s:?}");
    // BATCH_FLUSH: each batch is flushed and replayed on the channel before the next is fetched.
    assert_eq!(s.replays, s.fault_batches, "{chip:?}: one replay per batch: {s:?}");
    assert!(s.migrated_to_gpu_bytes >= 2 * (3 << 20), "{chip:?}: a and b went to the GPU: {s:?}");
    assert!(s.evictions > 0, "{chip:?}: the working set does not fit: {s:?}");
    assert!(s.migrated_to_cpu_bytes >= 3 << 20, "{chip:?}: c came back to the CPU: {s:?}");
    assert_eq!(s.cancels, 1, "{chip:?}: the stray write was cancelled: {s:?}");
}

#[test]
fn tu102_runs_managed_kernels_with_replayable_faults() {
    check_family(ModelConfig::rtx2080ti());
}

#[test]
fn ga100_runs_managed_kernels_with_replayable_faults() {
    check_family(ModelConfig::for_chipset(Chipset::GA100));
}

#[test]
fn ga102_runs_managed_kernels_with_replayable_faults() {
    check_family(ModelConfig::rtx3090());
}

#[test]
fn ad102_runs_managed_kernels_with_replayable_faults() {
    check_family(ModelConfig::rtx4090());
}

#[test]
fn gh100_runs_managed_kernels_with_replayable_faults() {
    check_family(ModelConfig::h200());
}

#[test]
fn prefetch_cuts_the_faults_of_a_sequential_stream() {
    // Fits in VRAM: no eviction, so the faults are the stream's own.
    let with = vector_add(ModelConfig::h200(), (2 << 20) / 4, 16 << 20, true).stats;
    let without = vector_add(ModelConfig::h200(), (2 << 20) / 4, 16 << 20, false).stats;
    assert_eq!(with.evictions, 0);
    assert!(with.prefetched_pages > 0, "{with:?}");
    assert_eq!(without.prefetched_pages, 0, "{without:?}");
    assert!(
        with.gpu_faults * 4 < without.gpu_faults,
        "prefetch: {} faults, without: {}",
        with.gpu_faults,
        without.gpu_faults
    );
}

/// CPU page tables for managed memory as the unikernel keeps them, on the host: window
/// addresses handed out in 2 MiB steps, 4 KiB PTEs (CPU address -> bus address, writable).
#[derive(Clone, Default)]
struct HostPageTables(std::rc::Rc<std::cell::RefCell<PageTableState>>);

#[derive(Default)]
struct PageTableState {
    next: u64,
    ptes: std::collections::BTreeMap<u64, (u64, bool)>,
    released: Vec<(u64, u64)>,
}

const WINDOW: u64 = 0x7f00_0000_0000;

impl uvm::runtime::CpuMappings for HostPageTables {
    fn reserve(&mut self, size: u64) -> Option<u64> {
        let mut s = self.0.borrow_mut();
        let va = WINDOW + s.next;
        s.next += size.next_multiple_of(2 << 20);
        Some(va)
    }
    fn map(&mut self, cpu_va: u64, bus: u64, writable: bool) -> bool {
        assert_eq!(cpu_va % 4096, 0, "CPU mappings are 4 KiB pages");
        self.0.borrow_mut().ptes.insert(cpu_va, (bus, writable));
        true
    }
    fn unmap(&mut self, cpu_va: u64) {
        self.0.borrow_mut().ptes.remove(&cpu_va);
    }
    fn release(&mut self, cpu_va: u64, size: u64) {
        self.0.borrow_mut().released.push((cpu_va, size));
    }
}

/// A CPU running the application's passes through [`HostPageTables`]: a page without a PTE
/// (or read-only, for the writes every pass may do) is a page fault, served by
/// `UnifiedMemory::cpu_fault`; the bytes are then those of the frame the PTE names. A PTE
/// left behind by a migration to the GPU would hand the CPU a stale frame and the example's
/// checks would fail.
struct SimulatedFaults<'m> {
    tables: HostPageTables,
    memory: &'m sim::DmaArena,
    faults: usize,
    migrated_back: u64,
}

impl<'a, 'm, R, A, C> nvrt::platform::CpuAccess<'a, R, A, C> for SimulatedFaults<'m>
where
    R: nvgpu::hw::RegisterIo + ?Sized,
    A: nvgpu::platform::DmaAllocator + ?Sized,
    C: nvgpu::platform::Clock + ?Sized,
{
    fn mappings(&mut self) -> Option<Box<dyn uvm::runtime::CpuMappings>> {
        Some(Box::new(self.tables.clone()))
    }
    fn in_place(
        &mut self,
        um: &mut UnifiedMemory<'a, R>,
        gpu: &mut Gpu<'a, R, A, C>,
        buf: &uvm::runtime::ManagedBuffer,
        pass: &mut dyn FnMut(usize, &mut [u8]),
    ) -> Result<(), ManagedError> {
        use sim::SystemMemory;
        let cpu = um.cpu_address(buf).expect("a CPU address");
        let before = um.stats().migrated_to_cpu_bytes;
        let mut page = vec![0u8; 4096];
        for off in (0..buf.len).step_by(4096) {
            let at = cpu + off as u64;
            let pte = self.tables.0.borrow().ptes.get(&at).copied();
            if !matches!(pte, Some((_, true))) {
                self.faults += 1;
                assert!(um.cpu_fault(gpu, at, true)?, "the fault at {at:#x} is the context's");
            }
            let (bus, writable) = self.tables.0.borrow().ptes[&at];
            assert!(writable, "a write fault leaves the page writable");
            let n = (buf.len - off).min(4096);
            assert!(self.memory.read(bus, &mut page[..n]));
            pass(off, &mut page[..n]);
            assert!(self.memory.write(bus, &page[..n]));
        }
        self.migrated_back += um.stats().migrated_to_cpu_bytes - before;
        Ok(())
    }
    fn counters(&self) -> nvrt::platform::CpuAccessCounters {
        nvrt::platform::CpuAccessCounters { page_faults: self.faults as u64, migrated_back_bytes: self.migrated_back }
    }
}

#[test]
fn cpu_page_tables_follow_migrations_and_cpu_faults_bring_pages_back() {
    let config = ModelConfig::h200();
    let sm = config.chipset.sm_version();
    let modules = [(nvrt::payload_module_name("managed", sm), ptx("managed", nvrt::payload_arch(sm)).into_bytes())];
    let tables = HostPageTables::default();
    struct Make(HostPageTables);
    impl nvrt::model::MakeCpuAccess for Make {
        fn make<'b>(&mut self, memory: &'b sim::DmaArena) -> nvrt::model::HostCpuAccess<'b> {
            Box::new(SimulatedFaults { tables: self.0.clone(), memory, faults: 0, migrated_back: 0 })
        }
    }
    let mut make_cpu = Make(tables.clone());
    let (out, _) = nvrt::model::run_with(config, &modules, "", &mut make_cpu, |sys| {
        let ctx = sys.open(0).expect("open");
        let stream = ctx.new_stream().expect("stream");
        let out = app::managed::run(&ctx, &stream).unwrap_or_else(|e| panic!("{e}"));
        drop(stream);
        ctx.close().expect("close");
        out
    })
    .expect("model run");
    assert!(out.report.passed(), "{:?}", out.report.mismatch);
    let pages = (u64::from(app::managed::ELEMENTS) * 4).div_ceil(4096);
    // The first pass faults on every page (nothing is mapped yet); the later two find the
    // pages the kernels left on the GPU unmapped, and bring them back by faulting.
    let faults = out.stats.cpu_page_faults;
    assert!(faults > pages, "{faults} CPU faults over {pages} pages");
    let back = out.stats.cpu_migrated_back_bytes;
    assert!(back >= 2 * app::managed::VRAM_BYTES, "{back} bytes came back");
    assert_eq!(out.stats.uvm.cpu_faults, faults);
    let state = tables.0.borrow();
    assert!(state.ptes.is_empty(), "{} CPU PTEs left after destroy", state.ptes.len());
    assert_eq!(state.released, vec![(WINDOW, 6 << 20)], "the buffer's 3 blocks of window are given back");
}
