//! What a platform provides so that applications run on it: the [`Platform`] trait (devices,
//! command line, modules, clock), and for each opened device a [`DeviceOps`], which
//! [`GpuBackend`] implements over the driver's `nvgpu::runtime::Gpu` for any register I/O, DMA
//! allocator, clock and RPC channel. Applications never see this module's types; the unikernel
//! and [`crate::model`] do.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use nvgpu::channel::GpuMapping;
use nvgpu::chip::Chipset;
use nvgpu::gsp::commands::{GspStaticConfigInfo, RpcChannel};
use nvgpu::hw::RegisterIo;
use nvgpu::platform::{Clock, DmaAllocator, DmaBuffer};
use nvgpu::rm::fifo::NvGpuSemaphore;
use nvgpu::rm::InternalSubdevice;
use nvgpu::runtime::params::Args;
use nvgpu::runtime::{
    DeviceBuffer, Event, Gpu, GpuConfig, LaunchConfig, Module, ParamLayout, RuntimeError, Stream, StreamKind,
};
use uvm::runtime::{CpuMappings, ManagedBuffer, ManagedConfig, ManagedError, UnifiedMemory};
use zerocopy::IntoBytes;

use crate::context::{ManagedOptions, ManagedStats};
use crate::system::DeviceProperties;
use crate::Error;

/// The system under the application: implemented by the unikernel over the GPUs it booted, and
/// by [`crate::model`] over model GPUs on the host.
pub trait Platform {
    /// Devices the application may open.
    fn device_count(&self) -> usize;
    /// Device `ordinal`'s properties; `None` past the last.
    fn properties(&self, ordinal: usize) -> Option<DeviceProperties>;
    /// Opens device `ordinal` (a context of its own).
    fn open(&self, ordinal: usize) -> Result<Box<dyn DeviceOps + '_>, Error>;
    /// The kernel command line.
    fn cmdline(&self) -> &str;
    /// A boot module by name.
    fn module(&self, name: &str) -> Option<&[u8]>;
    /// Every boot module's name.
    fn module_names(&self) -> Vec<String>;
    /// Nanoseconds of a monotonic clock.
    fn now_ns(&self) -> u64;
    /// CPUs online.
    fn cpus(&self) -> usize {
        1
    }
    /// A named point in the application's run, for the platform's timeline (the unikernel's
    /// boot timeline); nothing by default.
    fn milestone(&self, _name: &str) {}
}

/// Buffer, module, stream and event handles of one context: never reused.
pub type Id = u32;

/// One opened device, as the API drives it: byte-level and object-safe, so that
/// [`crate::Context`] is one type whatever the platform's register, DMA and clock types are.
pub trait DeviceOps {
    /// VRAM for `bytes` bytes, mapped: its handle and GPU address.
    fn alloc(&mut self, bytes: usize) -> Result<(Id, u64), Error>;
    fn free(&mut self, buffer: Id) -> Result<(), Error>;
    /// Host to device, the whole buffer; returns once the data is in place.
    fn write(&mut self, buffer: Id, src: &[u8]) -> Result<(), Error>;
    /// Device to host, the whole buffer.
    fn read(&mut self, buffer: Id, dst: &mut [u8]) -> Result<(), Error>;
    /// Device to device, whole buffers of equal size.
    fn copy(&mut self, dst: Id, src: Id) -> Result<(), Error>;
    fn memset_d8(&mut self, buffer: Id, value: u8) -> Result<(), Error>;
    fn memset_d32(&mut self, buffer: Id, value: u32) -> Result<(), Error>;

    /// A stream for launches (its own compute channel).
    fn create_stream(&mut self) -> Result<Id, Error>;
    fn destroy_stream(&mut self, stream: Id) -> Result<(), Error>;
    /// Waits for the stream's work (servicing managed-memory faults meanwhile).
    fn stream_synchronize(&mut self, stream: Id) -> Result<(), Error>;
    fn stream_query(&mut self, stream: Id) -> Result<bool, Error>;
    /// Waits for every stream.
    fn synchronize(&mut self) -> Result<(), Error>;

    /// An event after the stream's work so far; it carries the GPU's timestamp of that point.
    fn record(&mut self, stream: Id) -> Result<Id, Error>;
    fn event_query(&mut self, event: Id) -> Result<bool, Error>;
    fn event_synchronize(&mut self, event: Id) -> Result<(), Error>;
    /// The GPU-clock nanoseconds the event completed at (waiting for it first).
    fn event_time_ns(&mut self, event: Id) -> Result<u64, Error>;
    fn event_free(&mut self, event: Id);

    /// Loads a fatbin, cubin or PTX image.
    fn load_module(&mut self, image: &[u8]) -> Result<Id, Error>;
    fn module_free(&mut self, module: Id) -> Result<(), Error>;
    fn function_names(&self, module: Id) -> Result<Vec<String>, Error>;
    /// The kernel's parameter table.
    fn function_params(&self, module: Id, name: &str) -> Result<Vec<ParamLayout>, Error>;
    /// Launches `name` of `module` on `stream` (the arguments are checked against its table).
    fn launch(&mut self, stream: Id, module: Id, name: &str, config: LaunchConfig, args: &Args) -> Result<(), Error>;

    /// Sets up managed memory and starts it (before its first buffer).
    fn configure_managed(&mut self, options: ManagedOptions) -> Result<(), Error>;
    /// A managed range of `bytes` bytes: its address (the same on the CPU and the GPU).
    fn managed_alloc(&mut self, bytes: usize) -> Result<u64, Error>;
    /// Copies into managed memory at `va` from the CPU (the pages come to the CPU first).
    fn managed_write(&mut self, va: u64, src: &[u8]) -> Result<(), Error>;
    fn managed_read(&mut self, va: u64, dst: &mut [u8]) -> Result<(), Error>;
    /// Runs `pass(offset, bytes)` over `len` bytes at `va` in place on the CPU: pieces in
    /// order, each a whole number of 4-byte words.
    fn managed_cpu_pass(&mut self, va: u64, len: usize, pass: &mut dyn FnMut(usize, &mut [u8])) -> Result<(), Error>;
    fn managed_stats(&self) -> ManagedStats;

    /// The GPU clock, nanoseconds.
    fn gpu_time_ns(&self) -> u64;
    /// Gives everything back (streams, buffers, modules, managed memory, the RM client). Later
    /// calls fail; dropping the backend closes it too, reporting nothing.
    fn close(&mut self) -> Result<(), Error>;
}

/// Where a backend's RPCs go: the GSP-RM session of its GPU, reached for one call at a time
/// (the unikernel's sessions sit behind a lock).
pub trait RpcSource {
    type Channel: RpcChannel;
    /// Runs `f` with the channel; `None` when the session is gone.
    fn with<T>(&mut self, f: impl FnOnce(&mut Self::Channel) -> T) -> Option<T>;
}

impl<C: RpcChannel> RpcSource for &mut C {
    type Channel = C;
    fn with<T>(&mut self, f: impl FnOnce(&mut C) -> T) -> Option<T> {
        Some(f(self))
    }
}

/// What a CPU pass over managed memory counted (the platform's own way of reaching it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuAccessCounters {
    /// CPU page faults taken on managed memory.
    pub page_faults: u64,
    /// Bytes those faults migrated back from the GPU.
    pub migrated_back_bytes: u64,
}

/// How the application's CPU code reaches managed memory on this platform.
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
    /// What the passes counted so far.
    fn counters(&self) -> CpuAccessCounters {
        CpuAccessCounters::default()
    }
}

impl<'a, R, A, C, T> CpuAccess<'a, R, A, C> for Box<T>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
    T: CpuAccess<'a, R, A, C> + ?Sized,
{
    fn mappings(&mut self) -> Option<Box<dyn CpuMappings>> {
        (**self).mappings()
    }
    fn in_place(
        &mut self,
        um: &mut UnifiedMemory<'a, R>,
        gpu: &mut Gpu<'a, R, A, C>,
        buf: &ManagedBuffer,
        pass: &mut dyn FnMut(usize, &mut [u8]),
    ) -> Result<(), ManagedError> {
        (**self).in_place(um, gpu, buf, pass)
    }
    fn counters(&self) -> CpuAccessCounters {
        (**self).counters()
    }
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

/// Bytes of one event's semaphore report (`NvGpuSemaphore`: payload, then the timestamp).
const EVENT_REPORT: usize = core::mem::size_of::<NvGpuSemaphore>();
/// Event reports in the context's event page.
const EVENT_SLOTS: usize = 4096 / EVENT_REPORT;

/// What [`GpuBackend::open`] needs besides the driver's pieces.
#[derive(Clone, Copy, Debug)]
pub struct BackendConfig {
    pub gpu: GpuConfig,
    pub ordinal: usize,
}

struct EventState {
    event: Event,
    slot: usize,
}

/// [`DeviceOps`] over the driver's runtime: one `nvgpu::runtime::Gpu`, its streams, buffers
/// and modules by handle, unified memory on demand, and a page of event reports.
pub struct GpuBackend<'a, R, A, C, P, X>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
    P: RpcSource,
    X: CpuAccess<'a, R, A, C>,
{
    gpu: Option<Gpu<'a, R, A, C>>,
    rpc: P,
    ordinal: usize,
    internal: InternalSubdevice,
    cpu: X,
    managed_config: ManagedConfig,
    um: Option<UnifiedMemory<'a, R>>,
    next_id: Id,
    buffers: BTreeMap<Id, DeviceBuffer<u8>>,
    modules: BTreeMap<Id, Module>,
    streams: BTreeMap<Id, Stream>,
    events: BTreeMap<Id, EventState>,
    event_page: Option<(DmaBuffer, GpuMapping)>,
    free_slots: Vec<usize>,
}

impl<'a, R, A, C, P, X> GpuBackend<'a, R, A, C, P, X>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
    P: RpcSource,
    X: CpuAccess<'a, R, A, C>,
{
    /// Opens the GPU: an RM client of its own (`config.gpu.client_index`), the VA space, the
    /// default copy stream and the event page.
    #[allow(clippy::too_many_arguments)]
    pub fn open(
        mut rpc: P,
        io: &'a R,
        dma: &'a A,
        clock: &'a C,
        info: &GspStaticConfigInfo,
        chipset: Chipset,
        config: BackendConfig,
        cpu: X,
    ) -> Result<Self, Error> {
        let ordinal = config.ordinal;
        let opened = rpc.with(|rpc| Gpu::new(rpc, io, dma, clock, info, chipset, config.gpu));
        let mut gpu = opened.ok_or(Error::SessionGone { ordinal })??;
        gpu.set_progress(Some(crate::system::log_progress));
        let page = match Self::event_page(&mut gpu) {
            Ok(p) => p,
            Err(e) => {
                let _ = rpc.with(|rpc| gpu.destroy(rpc));
                return Err(e);
            }
        };
        Ok(GpuBackend {
            gpu: Some(gpu),
            rpc,
            ordinal,
            internal: InternalSubdevice::from_static_info(info),
            cpu,
            managed_config: ManagedConfig::default(),
            um: None,
            next_id: 1,
            buffers: BTreeMap::new(),
            modules: BTreeMap::new(),
            streams: BTreeMap::new(),
            events: BTreeMap::new(),
            event_page: Some(page),
            free_slots: (0..EVENT_SLOTS).rev().collect(),
        })
    }

    fn event_page(gpu: &mut Gpu<'a, R, A, C>) -> Result<(DmaBuffer, GpuMapping), Error> {
        let buffer = gpu.dma().alloc(4096).map_err(RuntimeError::from)?;
        let mut tlb = gpu.tlb_invalidator();
        match gpu.va_space_mut().map_dma(&buffer, &mut tlb) {
            Ok(m) => Ok((buffer, m)),
            Err(e) => {
                gpu.dma().free(buffer);
                Err(RuntimeError::from(e).into())
            }
        }
    }

    fn gpu(&mut self) -> Result<&mut Gpu<'a, R, A, C>, Error> {
        self.gpu.as_mut().ok_or(Error::SessionGone { ordinal: self.ordinal })
    }

    fn id(&mut self) -> Id {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        id
    }

    fn stream(&self, id: Id) -> Result<Stream, Error> {
        self.streams.get(&id).copied().ok_or(Error::ForeignHandle { what: "stream" })
    }

    /// Waits for `stream`, through unified memory when it exists (faults are serviced).
    fn wait(&mut self, stream: Stream) -> Result<(), Error> {
        let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal: self.ordinal })?;
        match self.um.as_mut() {
            Some(um) => Ok(um.synchronize(gpu, &stream)?),
            None => Ok(stream.synchronize(gpu)?),
        }
    }

    /// Runs `f` on buffer `id` once every launch stream's earlier work is done (host-side
    /// copies and memsets come after it).
    fn on_buffer<T>(
        &mut self,
        id: Id,
        f: impl FnOnce(&mut Gpu<'a, R, A, C>, &DeviceBuffer<u8>) -> Result<T, RuntimeError>,
    ) -> Result<T, Error> {
        self.drain()?;
        let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal: self.ordinal })?;
        let b = self.buffers.get(&id).ok_or(Error::ForeignHandle { what: "buffer" })?;
        Ok(f(gpu, b)?)
    }

    /// Waits for every launch stream: host-side copies come after their work.
    fn drain(&mut self) -> Result<(), Error> {
        let streams: Vec<Stream> = self.streams.values().copied().collect();
        for s in streams {
            self.wait(s)?;
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn um(&mut self) -> Result<(&mut UnifiedMemory<'a, R>, &mut Gpu<'a, R, A, C>, &mut X), Error> {
        if self.um.is_none() {
            let internal = self.internal;
            let config = self.managed_config;
            let ordinal = self.ordinal;
            let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal })?;
            let made = self.rpc.with(|rpc| UnifiedMemory::new(gpu, rpc, internal, config));
            let mut um = made.ok_or(Error::SessionGone { ordinal })??;
            if let Some(m) = self.cpu.mappings() {
                um.set_cpu_mappings(m)?;
            }
            self.um = Some(um);
        }
        let ordinal = self.ordinal;
        match (self.um.as_mut(), self.gpu.as_mut()) {
            (Some(um), Some(gpu)) => Ok((um, gpu, &mut self.cpu)),
            _ => Err(Error::SessionGone { ordinal }),
        }
    }

    fn teardown(&mut self) -> Result<(), Error> {
        let Some(mut gpu) = self.gpu.take() else { return Ok(()) };
        let mut first: Result<(), Error> = gpu.synchronize().map_err(Into::into);
        let mut keep = |r: Result<(), Error>| {
            if first.is_ok() {
                first = r;
            }
        };
        if let Some(um) = self.um.take() {
            let r = self.rpc.with(|rpc| um.destroy(&mut gpu, rpc));
            keep(r.ok_or(Error::SessionGone { ordinal: self.ordinal }).and_then(|r| r.map_err(Into::into)));
        }
        for (_, m) in core::mem::take(&mut self.modules) {
            keep(m.free(&mut gpu).map_err(Into::into));
        }
        for (_, b) in core::mem::take(&mut self.buffers) {
            keep(b.free(&mut gpu).map_err(Into::into));
        }
        self.events.clear();
        if let Some((buffer, mapping)) = self.event_page.take() {
            let mut tlb = gpu.tlb_invalidator();
            match gpu.va_space_mut().unmap(mapping, &mut tlb) {
                Ok(()) => gpu.dma().free(buffer),
                Err(e) => keep(Err(RuntimeError::from(e).into())),
            }
        }
        let streams = core::mem::take(&mut self.streams);
        let ordinal = self.ordinal;
        let closed = self.rpc.with(|rpc| {
            let mut first = Ok(());
            for (_, s) in streams {
                let r = gpu.destroy_stream(rpc, s);
                if first.is_ok() {
                    first = r;
                }
            }
            first.and(gpu.destroy(rpc))
        });
        keep(closed.ok_or(Error::SessionGone { ordinal }).and_then(|r| r.map_err(Into::into)));
        first
    }
}

impl<'a, R, A, C, P, X> Drop for GpuBackend<'a, R, A, C, P, X>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
    P: RpcSource,
    X: CpuAccess<'a, R, A, C>,
{
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            log::error!(target: "nvrt", "device {}: closing the context: {e}", self.ordinal);
        }
    }
}

impl<'a, R, A, C, P, X> DeviceOps for GpuBackend<'a, R, A, C, P, X>
where
    R: RegisterIo + ?Sized,
    A: DmaAllocator + ?Sized,
    C: Clock + ?Sized,
    P: RpcSource,
    X: CpuAccess<'a, R, A, C>,
{
    fn alloc(&mut self, bytes: usize) -> Result<(Id, u64), Error> {
        let buffer = self.gpu()?.alloc::<u8>(bytes)?;
        let va = buffer.device_ptr();
        let id = self.id();
        self.buffers.insert(id, buffer);
        Ok((id, va))
    }

    fn free(&mut self, buffer: Id) -> Result<(), Error> {
        // After `close` everything went with the context: a late drop has nothing to give back.
        self.gpu()?;
        let b = self.buffers.remove(&buffer).ok_or(Error::ForeignHandle { what: "buffer" })?;
        Ok(b.free(self.gpu()?)?)
    }

    fn write(&mut self, buffer: Id, src: &[u8]) -> Result<(), Error> {
        self.on_buffer(buffer, |gpu, b| gpu.copy_to_device(b, src))
    }

    fn read(&mut self, buffer: Id, dst: &mut [u8]) -> Result<(), Error> {
        self.on_buffer(buffer, |gpu, b| gpu.copy_from_device(dst, b))
    }

    fn copy(&mut self, dst: Id, src: Id) -> Result<(), Error> {
        self.drain()?;
        let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal: self.ordinal })?;
        let d = self.buffers.get(&dst).ok_or(Error::ForeignHandle { what: "buffer" })?;
        let s = self.buffers.get(&src).ok_or(Error::ForeignHandle { what: "buffer" })?;
        Ok(gpu.copy_device_to_device(d, s)?)
    }

    fn memset_d8(&mut self, buffer: Id, value: u8) -> Result<(), Error> {
        self.on_buffer(buffer, |gpu, b| gpu.memset_d8(b, value))
    }

    fn memset_d32(&mut self, buffer: Id, value: u32) -> Result<(), Error> {
        self.on_buffer(buffer, |gpu, b| gpu.memset_d32(b, value))
    }

    fn create_stream(&mut self) -> Result<Id, Error> {
        let ordinal = self.ordinal;
        let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal })?;
        let made = self.rpc.with(|rpc| gpu.create_stream(rpc, StreamKind::Compute));
        let stream = made.ok_or(Error::SessionGone { ordinal })??;
        let id = self.id();
        self.streams.insert(id, stream);
        Ok(id)
    }

    fn destroy_stream(&mut self, stream: Id) -> Result<(), Error> {
        self.gpu()?;
        let s = self.stream(stream)?;
        let waited = self.wait(s);
        self.streams.remove(&stream);
        let ordinal = self.ordinal;
        let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal })?;
        let destroyed = self.rpc.with(|rpc| gpu.destroy_stream(rpc, s)).ok_or(Error::SessionGone { ordinal })?;
        waited?;
        Ok(destroyed?)
    }

    fn stream_synchronize(&mut self, stream: Id) -> Result<(), Error> {
        let s = self.stream(stream)?;
        self.wait(s)
    }

    fn stream_query(&mut self, stream: Id) -> Result<bool, Error> {
        let s = self.stream(stream)?;
        Ok(s.query(self.gpu()?)?)
    }

    fn synchronize(&mut self) -> Result<(), Error> {
        self.drain()?;
        Ok(self.gpu()?.synchronize()?)
    }

    fn record(&mut self, stream: Id) -> Result<Id, Error> {
        let s = self.stream(stream)?;
        let slot = self.free_slots.pop().ok_or(RuntimeError::Unsupported { what: "more than 256 live events" })?;
        let recorded = (|| {
            let (page, mapping) = self.event_page.as_mut().ok_or(Error::SessionGone { ordinal: self.ordinal })?;
            let offset = slot * EVENT_REPORT;
            page.write(offset, NvGpuSemaphore::default().as_bytes())
                .map_err(|_| RuntimeError::Unsupported { what: "an event report outside the event page" })?;
            let va = mapping.va + offset as u64;
            let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal: self.ordinal })?;
            Ok::<_, Error>(s.record_timestamp(gpu, va)?)
        })();
        match recorded {
            Ok(event) => {
                let id = self.id();
                self.events.insert(id, EventState { event, slot });
                Ok(id)
            }
            Err(e) => {
                self.free_slots.push(slot);
                Err(e)
            }
        }
    }

    fn event_query(&mut self, event: Id) -> Result<bool, Error> {
        let e = self.events.get(&event).ok_or(Error::ForeignHandle { what: "event" })?.event;
        Ok(e.query(self.gpu()?)?)
    }

    fn event_synchronize(&mut self, event: Id) -> Result<(), Error> {
        let e = self.events.get(&event).ok_or(Error::ForeignHandle { what: "event" })?.event;
        if self.um.is_some() {
            // Work behind the event may fault on managed memory: the stream is waited for with
            // the faults serviced.
            return self.wait(e.stream());
        }
        let gpu = self.gpu()?;
        let timeout_ms = gpu.config().timeout_ms;
        Ok(e.synchronize(gpu, timeout_ms)?)
    }

    fn event_time_ns(&mut self, event: Id) -> Result<u64, Error> {
        self.event_synchronize(event)?;
        let slot = self.events.get(&event).ok_or(Error::ForeignHandle { what: "event" })?.slot;
        let (page, _) = self.event_page.as_ref().ok_or(Error::SessionGone { ordinal: self.ordinal })?;
        let mut report = NvGpuSemaphore::default();
        page.read(slot * EVENT_REPORT, report.as_mut_bytes())
            .map_err(|_| RuntimeError::Unsupported { what: "an event report outside the event page" })?;
        if report.data[0] != 1 {
            return Err(
                RuntimeError::Unsupported { what: "an event whose semaphore report the GPU did not write" }.into()
            );
        }
        Ok(report.nanoseconds())
    }

    fn event_free(&mut self, event: Id) {
        if let Some(e) = self.events.remove(&event) {
            self.free_slots.push(e.slot);
        }
    }

    fn load_module(&mut self, image: &[u8]) -> Result<Id, Error> {
        let module = Module::load(self.gpu()?, image)?;
        let id = self.id();
        self.modules.insert(id, module);
        Ok(id)
    }

    fn module_free(&mut self, module: Id) -> Result<(), Error> {
        self.gpu()?;
        let m = self.modules.remove(&module).ok_or(Error::ForeignHandle { what: "module" })?;
        self.drain()?;
        Ok(m.free(self.gpu()?)?)
    }

    fn function_names(&self, module: Id) -> Result<Vec<String>, Error> {
        let m = self.modules.get(&module).ok_or(Error::ForeignHandle { what: "module" })?;
        Ok(m.function_names().map(ToString::to_string).collect())
    }

    fn function_params(&self, module: Id, name: &str) -> Result<Vec<ParamLayout>, Error> {
        let m = self.modules.get(&module).ok_or(Error::ForeignHandle { what: "module" })?;
        Ok(m.function(name)?.params().to_vec())
    }

    fn launch(&mut self, stream: Id, module: Id, name: &str, config: LaunchConfig, args: &Args) -> Result<(), Error> {
        let s = self.stream(stream)?;
        let gpu = self.gpu.as_mut().ok_or(Error::SessionGone { ordinal: self.ordinal })?;
        let m = self.modules.get(&module).ok_or(Error::ForeignHandle { what: "module" })?;
        let f = m.function(name)?;
        Ok(s.launch(gpu, &f, config, args)?)
    }

    fn configure_managed(&mut self, options: ManagedOptions) -> Result<(), Error> {
        if self.um.is_some() {
            return Err(Error::ManagedAlreadyStarted);
        }
        let default = ManagedConfig::default();
        self.managed_config = ManagedConfig {
            vram_bytes: options.vram_limit_bytes.unwrap_or(default.vram_bytes),
            prefetch: options.prefetch,
            ..default
        };
        // Unified memory starts now (its VRAM pool, the replayable fault buffer): kernels'
        // faults are serviced through it from here on, managed buffers or not.
        self.um().map(|_| ())
    }

    fn managed_alloc(&mut self, bytes: usize) -> Result<u64, Error> {
        let (um, gpu, _) = self.um()?;
        Ok(um.alloc_managed(gpu, bytes)?.va)
    }

    fn managed_write(&mut self, va: u64, src: &[u8]) -> Result<(), Error> {
        self.drain()?;
        let (um, gpu, _) = self.um()?;
        Ok(um.write(gpu, va, src)?)
    }

    fn managed_read(&mut self, va: u64, dst: &mut [u8]) -> Result<(), Error> {
        self.drain()?;
        let (um, gpu, _) = self.um()?;
        Ok(um.read(gpu, va, dst)?)
    }

    fn managed_cpu_pass(&mut self, va: u64, len: usize, pass: &mut dyn FnMut(usize, &mut [u8])) -> Result<(), Error> {
        self.drain()?;
        let (um, gpu, cpu) = self.um()?;
        Ok(cpu.in_place(um, gpu, &ManagedBuffer { va, len }, pass)?)
    }

    fn managed_stats(&self) -> ManagedStats {
        let c = self.cpu.counters();
        ManagedStats {
            uvm: self.um.as_ref().map(|um| um.stats()).unwrap_or_default(),
            cpu_page_faults: c.page_faults,
            cpu_migrated_back_bytes: c.migrated_back_bytes,
        }
    }

    fn gpu_time_ns(&self) -> u64 {
        self.gpu.as_ref().map_or(0, |g| g.clock().now_ns())
    }

    fn close(&mut self) -> Result<(), Error> {
        self.teardown()
    }
}
