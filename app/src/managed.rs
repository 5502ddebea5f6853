//! The managed-memory example: one managed buffer twice the VRAM its context may hold, first
//! written by CPU code in place, stepped by a kernel (`payloads/managed.cu`) that takes
//! replayable faults on every page it touches first (UVM migrates, prefetches and evicts to
//! keep it going), checked and rewritten in place by CPU code (pages resident on the GPU come
//! back), stepped again and checked again. Every value is compared with the CPU's own
//! computation; the report carries the context's UVM statistics.
//!
//! How CPU code reaches managed memory is the platform's ([`CpuAccess`]): the unikernel maps
//! managed buffers in its page tables and serves CPU page faults; elsewhere the runtime services
//! the pages first and hands over its copies ([`ThroughRuntime`]).

use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;

use nvgpu::gsp::commands::RpcChannel;
use nvgpu::hw::RegisterIo;
use nvgpu::platform::{Clock, DmaAllocator};
use nvgpu::rm::InternalSubdevice;
use nvgpu::runtime::params::Args;
use nvgpu::runtime::{Gpu, LaunchConfig, Module, Stream};
use uvm::runtime::{CpuMappings, ManagedBuffer, ManagedConfig, ManagedError, UnifiedMemory};
use uvm::service::UvmStats;

use crate::{payload_name, AppError, Report, Rng};

const EX: &str = "managed";

/// Elements of the buffer: 4 MiB and 12 bytes of u32s, so the buffer's last 2 MiB block is
/// partly used.
pub const ELEMENTS: u32 = (1 << 20) + 3;
/// VRAM the example's context may hold: half the buffer (one 2 MiB root chunk).
pub const VRAM_BYTES: u64 = 2 << 20;

/// How the application's CPU code reaches a managed buffer.
pub trait CpuAccess<'a, R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> {
    /// The CPU page tables managed memory lives in, if the platform has them (installed before
    /// the first managed buffer).
    fn mappings(&mut self) -> Option<Box<dyn CpuMappings>>;
    /// Runs `pass(offset, bytes)` over `buf` in place: every byte once, pieces in order,
    /// `offset` being the first byte's offset in the buffer (pieces are 4-byte aligned).
    fn in_place(
        &mut self,
        um: &mut UnifiedMemory<'a, R>,
        gpu: &mut Gpu<'a, R, A, C>,
        buf: &ManagedBuffer,
        pass: &mut dyn FnMut(usize, &mut [u8]),
    ) -> Result<(), ManagedError>;
}

/// CPU access through the runtime: the pages are serviced for the CPU, then the pass works on
/// the CPU's copies of them, one page at a time.
pub struct ThroughRuntime;

impl<'a, R: RegisterIo + ?Sized, A: DmaAllocator + ?Sized, C: Clock + ?Sized> CpuAccess<'a, R, A, C>
    for ThroughRuntime
{
    fn mappings(&mut self) -> Option<Box<dyn CpuMappings>> {
        None
    }
    fn in_place(
        &mut self,
        um: &mut UnifiedMemory<'a, R>,
        gpu: &mut Gpu<'a, R, A, C>,
        buf: &ManagedBuffer,
        pass: &mut dyn FnMut(usize, &mut [u8]),
    ) -> Result<(), ManagedError> {
        um.cpu_pages(gpu, buf.va, buf.len, pass)
    }
}

/// The example's outcome: the report and the context's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct ManagedReport {
    pub report: Report,
    pub stats: UvmStats,
}

/// The first kernel step and the second.
const STEP1: (u32, u32) = (3, 7);
const STEP2: (u32, u32) = (5, 1);

fn step(x: u32, (mul, add): (u32, u32)) -> u32 {
    x.wrapping_mul(mul).wrapping_add(add)
}

/// What CPU code XORs element `i` with between the two kernels.
fn salt(i: u32) -> u32 {
    i.wrapping_mul(0x9e37_79b9)
}

/// The initial value of every element, in order.
fn initial() -> impl Iterator<Item = u32> {
    let mut rng = Rng(10);
    (0..ELEMENTS).map(move |_| rng.u32())
}

/// Compares `bytes` (elements from `offset / 4`) with `want(i)`, recording the first mismatch.
struct Check {
    first: Option<String>,
    wrong: u64,
}

impl Check {
    fn new() -> Self {
        Check { first: None, wrong: 0 }
    }
    fn element(&mut self, what: &str, i: u32, got: u32, want: u32) {
        if got != want {
            self.wrong += 1;
            if self.first.is_none() {
                self.first = Some(format!("{what}: element {i}: got {got:#010x}, expected {want:#010x}"));
            }
        }
    }
    fn result(self) -> Option<String> {
        self.first.map(|f| format!("{} wrong; first {f}", self.wrong))
    }
}

/// Visits the u32 elements of a piece: `f(index, &mut value)`.
fn elements(offset: usize, bytes: &mut [u8], mut f: impl FnMut(u32, &mut u32)) {
    for (k, chunk) in bytes.chunks_exact_mut(4).enumerate() {
        let i = (offset / 4 + k) as u32;
        let mut v = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        f(i, &mut v);
        chunk.copy_from_slice(&v.to_le_bytes());
    }
}

/// Runs the example on `gpu` (opened with page faulting), kernels on `stream`.
pub fn run<'a, 'p, R, A, C>(
    gpu: &mut Gpu<'a, R, A, C>,
    rpc: &mut impl RpcChannel,
    internal: InternalSubdevice,
    stream: Stream,
    payloads: &'p dyn Fn(&str) -> Option<&'p [u8]>,
    cpu: &mut dyn CpuAccess<'a, R, A, C>,
) -> Result<ManagedReport, AppError>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
{
    let name = payload_name("managed", gpu.chipset());
    let text = payloads(&name).ok_or(AppError::MissingPayload(name))?;
    let module = Module::load(gpu, text).map_err(|e| AppError::Runtime(EX, e))?;
    let config = ManagedConfig { vram_bytes: VRAM_BYTES, ..ManagedConfig::default() };
    let mut um = match UnifiedMemory::new(gpu, rpc, internal, config) {
        Ok(um) => um,
        Err(e) => {
            let _ = module.free(gpu);
            return Err(AppError::Managed(EX, e));
        }
    };
    let outcome = steps(gpu, &mut um, &module, stream, cpu);
    let stats = um.stats();
    let destroyed = um.destroy(gpu, rpc);
    let freed = module.free(gpu);
    let report = outcome?;
    destroyed.map_err(|e| AppError::Managed(EX, e))?;
    freed.map_err(|e| AppError::Runtime(EX, e))?;
    Ok(ManagedReport { report, stats })
}

fn steps<'a, R, A, C>(
    gpu: &mut Gpu<'a, R, A, C>,
    um: &mut UnifiedMemory<'a, R>,
    module: &Module,
    stream: Stream,
    cpu: &mut dyn CpuAccess<'a, R, A, C>,
) -> Result<Report, AppError>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
{
    let managed = |e| AppError::Managed(EX, e);
    if let Some(m) = cpu.mappings() {
        um.set_cpu_mappings(m).map_err(managed)?;
    }
    let bytes = ELEMENTS as usize * 4;
    let buf = um.alloc_managed(gpu, bytes).map_err(managed)?;
    let f = module.function("managed_step_u32").map_err(|e| AppError::Runtime(EX, e))?;
    let cfg = LaunchConfig::linear(1024, 256);
    let t0 = gpu.clock().now_ns();

    // CPU code writes the input in place (first touches: zero-filled pages).
    let mut init = initial();
    cpu.in_place(um, gpu, &buf, &mut |off, b| elements(off, b, |_, v| *v = init.next().unwrap_or(0)))
        .map_err(managed)?;

    let launch = |gpu: &mut Gpu<'a, R, A, C>, um: &mut UnifiedMemory<'a, R>, (mul, add): (u32, u32)| {
        let args = Args::new().device_ptr(buf.device_ptr()).u32(ELEMENTS).u32(mul).u32(add);
        stream.launch(gpu, &f, cfg, &args).map_err(|e| AppError::Runtime(EX, e))?;
        um.synchronize(gpu, &stream).map_err(managed)
    };
    launch(gpu, um, STEP1)?;

    // CPU code checks the kernel's result and rewrites it in place.
    let mut check = Check::new();
    let mut want = initial();
    cpu.in_place(um, gpu, &buf, &mut |off, b| {
        elements(off, b, |i, v| {
            check.element("after the first kernel", i, *v, step(want.next().unwrap_or(0), STEP1));
            *v ^= salt(i);
        })
    })
    .map_err(managed)?;

    launch(gpu, um, STEP2)?;

    let mut want = initial();
    cpu.in_place(um, gpu, &buf, &mut |off, b| {
        elements(off, b, |i, v| {
            let w = step(step(want.next().unwrap_or(0), STEP1) ^ salt(i), STEP2);
            check.element("after the second kernel", i, *v, w);
        })
    })
    .map_err(managed)?;
    let elapsed_ns = gpu.clock().now_ns() - t0;
    Ok(Report {
        name: EX,
        mismatch: check.result(),
        elapsed_ns,
        work: format!(
            "{ELEMENTS} u32 in one managed buffer of {} KiB through {} KiB of VRAM, two kernels and three CPU passes in place",
            bytes / 1024,
            VRAM_BYTES / 1024
        ),
    })
}
