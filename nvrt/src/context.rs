//! A context and what lives in it: buffers, modules, functions, streams, events, managed
//! memory, launches.

use alloc::boxed::Box;
use alloc::format;
use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{RefCell, RefMut};
use core::marker::PhantomData;

use nvgpu::runtime::params::Args;
use nvgpu::runtime::{LaunchConfig, ParamLayout, Pod};
use uvm::service::UvmStats;
use zerocopy::{FromBytes, IntoBytes};

use crate::platform::{DeviceOps, Id, Platform};
use crate::system::{payload_module_name, DeviceProperties};
use crate::Error;

fn zeroed<T: Pod>(len: usize) -> Vec<T> {
    (0..len).map(|_| T::new_zeroed()).collect()
}

struct Shared<'p> {
    ops: RefCell<Box<dyn DeviceOps + 'p>>,
    platform: &'p dyn Platform,
    properties: DeviceProperties,
    /// The default stream, made on first use.
    default_stream: RefCell<Option<Id>>,
}

impl<'p> Shared<'p> {
    /// The device, for one call. A call made from inside a managed CPU pass (the only place
    /// application code runs while the device is busy) is refused, not deadlocked.
    fn ops(&self) -> Result<RefMut<'_, Box<dyn DeviceOps + 'p>>, Error> {
        self.ops.try_borrow_mut().map_err(|_| Error::Busy)
    }
}

/// One opened device (`CUcontext`; cudarc's `CudaContext`). Cheap to clone: clones share the
/// context, which closes when the last clone and the last thing made in it are gone.
#[derive(Clone)]
pub struct Context<'p> {
    shared: Rc<Shared<'p>>,
}

/// How a context's managed memory is set up (before its first managed buffer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ManagedOptions {
    /// VRAM managed memory may hold (2 MiB root chunks, at least one); less than the working
    /// set runs oversubscribed, with evictions. `None`: the runtime's default (64 MiB).
    pub vram_limit_bytes: Option<u64>,
    /// UVM's prefetch heuristic.
    pub prefetch: bool,
}

impl Default for ManagedOptions {
    fn default() -> Self {
        ManagedOptions { vram_limit_bytes: None, prefetch: true }
    }
}

/// What unified memory did in a context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ManagedStats {
    /// UVM's counters (GPU faults, replays, migrations, prefetches, evictions, ...).
    pub uvm: UvmStats,
    /// CPU page faults the platform took on managed memory in CPU passes.
    pub cpu_page_faults: u64,
    /// Bytes those CPU faults migrated back from the GPU.
    pub cpu_migrated_back_bytes: u64,
}

impl<'p> Context<'p> {
    pub(crate) fn new(platform: &'p dyn Platform, ops: Box<dyn DeviceOps + 'p>, properties: DeviceProperties) -> Self {
        Context {
            shared: Rc::new(Shared {
                ops: RefCell::new(ops),
                platform,
                properties,
                default_stream: RefCell::new(None),
            }),
        }
    }

    /// The device's properties.
    pub fn properties(&self) -> &DeviceProperties {
        &self.shared.properties
    }

    fn same(&self, other: &Rc<Shared<'p>>) -> bool {
        Rc::ptr_eq(&self.shared, other)
    }

    // ---------------------------------------------------------------------------------------
    // Memory.

    /// `len` elements of uninitialised VRAM (`cuMemAlloc`).
    pub fn alloc<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<'p, T>, Error> {
        let bytes = len
            .checked_mul(core::mem::size_of::<T>())
            .ok_or(Error::Runtime(nvgpu::runtime::RuntimeError::TooLarge { len, elem: core::mem::size_of::<T>() }))?;
        let (id, va) = self.shared.ops()?.alloc(bytes)?;
        Ok(DeviceBuffer { shared: self.shared.clone(), id, va, len, _t: PhantomData })
    }

    /// `len` zeroed elements.
    pub fn alloc_zeros<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<'p, T>, Error> {
        let b = self.alloc(len)?;
        self.shared.ops()?.memset_d8(b.id, 0)?;
        Ok(b)
    }

    /// A buffer holding a copy of `src` (cudarc's `clone_htod`).
    pub fn htod<T: Pod>(&self, src: &[T]) -> Result<DeviceBuffer<'p, T>, Error> {
        let b = self.alloc(src.len())?;
        self.shared.ops()?.write(b.id, src.as_bytes())?;
        Ok(b)
    }

    /// The buffer's elements, after every stream's earlier work (cudarc's `clone_dtoh`).
    pub fn dtoh<T: Pod>(&self, src: &DeviceBuffer<'p, T>) -> Result<Vec<T>, Error> {
        let mut out = zeroed::<T>(src.len);
        self.memcpy_dtoh(src, &mut out)?;
        Ok(out)
    }

    /// Host to device, whole buffer (`cuMemcpyHtoD`).
    pub fn memcpy_htod<T: Pod>(&self, src: &[T], dst: &DeviceBuffer<'p, T>) -> Result<(), Error> {
        self.check(dst, "memcpy_htod", src.len())?;
        self.shared.ops()?.write(dst.id, src.as_bytes())
    }

    /// Device to host, whole buffer (`cuMemcpyDtoH`).
    pub fn memcpy_dtoh<T: Pod>(&self, src: &DeviceBuffer<'p, T>, dst: &mut [T]) -> Result<(), Error> {
        self.check(src, "memcpy_dtoh", dst.len())?;
        self.shared.ops()?.read(src.id, dst.as_mut_bytes())
    }

    /// Device to device, whole buffers of equal length (`cuMemcpyDtoD`).
    pub fn memcpy_dtod<T: Pod>(&self, src: &DeviceBuffer<'p, T>, dst: &DeviceBuffer<'p, T>) -> Result<(), Error> {
        self.check(dst, "memcpy_dtod", src.len)?;
        if !self.same(&src.shared) {
            return Err(Error::ForeignHandle { what: "buffer" });
        }
        self.shared.ops()?.copy(dst.id, src.id)
    }

    /// Every byte of `dst` set to `value` (`cuMemsetD8`).
    pub fn memset_d8<T: Pod>(&self, dst: &DeviceBuffer<'p, T>, value: u8) -> Result<(), Error> {
        self.check(dst, "memset_d8", dst.len)?;
        self.shared.ops()?.memset_d8(dst.id, value)
    }

    /// Every 32-bit word of `dst` set to `value` (`cuMemsetD32`).
    pub fn memset_d32<T: Pod>(&self, dst: &DeviceBuffer<'p, T>, value: u32) -> Result<(), Error> {
        self.check(dst, "memset_d32", dst.len)?;
        self.shared.ops()?.memset_d32(dst.id, value)
    }

    fn check<T: Pod>(&self, b: &DeviceBuffer<'p, T>, what: &'static str, host: usize) -> Result<(), Error> {
        if !self.same(&b.shared) {
            return Err(Error::ForeignHandle { what: "buffer" });
        }
        if b.len != host {
            return Err(Error::LengthMismatch { what, device: b.len, host });
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------------
    // Modules.

    /// Loads a fatbin, cubin or PTX image (`cuModuleLoadData`): the image for this device's
    /// chip goes to GPU memory.
    pub fn load_module(&self, image: &[u8]) -> Result<Module<'p>, Error> {
        let id = self.shared.ops()?.load_module(image)?;
        Ok(Module { shared: self.shared.clone(), id })
    }

    /// Loads the kernels of the CUDA source `name.cu` the image build compiled for this
    /// device's architecture (the boot module [`crate::payload_module_name`]).
    pub fn load_payload(&self, name: &str) -> Result<Module<'p>, Error> {
        let module = payload_module_name(name, self.shared.properties.sm_version);
        let image = self.shared.platform.module(&module).ok_or(Error::MissingModule { name: module })?;
        self.load_module(image)
    }

    // ---------------------------------------------------------------------------------------
    // Streams and events.

    /// A new stream (`cuStreamCreate`): launches on it run in order; launches on different
    /// streams are unordered unless the application waits on events.
    pub fn new_stream(&self) -> Result<Stream<'p>, Error> {
        let id = self.shared.ops()?.create_stream()?;
        Ok(Stream { shared: self.shared.clone(), id, owned: true })
    }

    /// The context's default stream (made on first use, lives as long as the context).
    pub fn default_stream(&self) -> Result<Stream<'p>, Error> {
        let mut slot = self.shared.default_stream.try_borrow_mut().map_err(|_| Error::Busy)?;
        let id = match *slot {
            Some(id) => id,
            None => {
                let id = self.shared.ops()?.create_stream()?;
                *slot = Some(id);
                id
            }
        };
        Ok(Stream { shared: self.shared.clone(), id, owned: false })
    }

    /// Waits for every stream of the context (`cuCtxSynchronize`).
    pub fn synchronize(&self) -> Result<(), Error> {
        self.shared.ops()?.synchronize()
    }

    /// The GPU's clock, nanoseconds.
    pub fn gpu_time_ns(&self) -> Result<u64, Error> {
        Ok(self.shared.ops()?.gpu_time_ns())
    }

    // ---------------------------------------------------------------------------------------
    // Managed memory.

    /// Sets up managed memory and starts it: from here on the GPU's page faults in this
    /// context are serviced by unified memory (before the first managed buffer).
    pub fn configure_managed(&self, options: ManagedOptions) -> Result<(), Error> {
        self.shared.ops()?.configure_managed(options)
    }

    /// `len` zeroed elements of managed memory (`cuMemAllocManaged`): one address for the CPU
    /// and the GPU; pages move to whichever touches them. It lives as long as the context.
    pub fn alloc_managed<T: Pod>(&self, len: usize) -> Result<ManagedBuffer<'p, T>, Error> {
        let size = core::mem::size_of::<T>();
        if size == 0 || 4096 % size != 0 {
            return Err(Error::ElementSize { size });
        }
        let bytes =
            len.checked_mul(size).ok_or(Error::Runtime(nvgpu::runtime::RuntimeError::TooLarge { len, elem: size }))?;
        let va = self.shared.ops()?.managed_alloc(bytes)?;
        Ok(ManagedBuffer { shared: self.shared.clone(), va, len, _t: PhantomData })
    }

    /// What unified memory did in this context so far.
    pub fn managed_stats(&self) -> Result<ManagedStats, Error> {
        Ok(self.shared.ops()?.managed_stats())
    }

    /// Closes the context now, reporting what went wrong; buffers, modules and streams still
    /// held become unusable (their calls fail with [`Error::SessionGone`]).
    pub fn close(self) -> Result<(), Error> {
        self.shared.ops()?.close()
    }
}

/// `len` elements of `T` in VRAM (`CUdeviceptr` with its length; cudarc's `CudaSlice`). Freed
/// when dropped, after every stream's earlier work.
pub struct DeviceBuffer<'p, T: Pod> {
    shared: Rc<Shared<'p>>,
    id: Id,
    va: u64,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Pod> DeviceBuffer<'_, T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The GPU virtual address kernels see.
    pub fn device_ptr(&self) -> u64 {
        self.va
    }
}

impl<T: Pod> Drop for DeviceBuffer<'_, T> {
    fn drop(&mut self) {
        release(&self.shared, "a device buffer", |ops| ops.free(self.id));
    }
}

/// Gives back what a handle held, from its `Drop`: a context already closed has nothing left
/// to give back (quiet); anything else that goes wrong is logged, as a drop cannot return it.
fn release(shared: &Shared<'_>, what: &str, give_back: impl FnOnce(&mut dyn DeviceOps) -> Result<(), Error>) {
    match shared.ops() {
        Ok(mut ops) => match give_back(&mut **ops) {
            Ok(()) | Err(Error::SessionGone { .. }) => {}
            Err(e) => log::warn!(target: "nvrt", "giving back {what}: {e}"),
        },
        Err(_) => log::warn!(target: "nvrt", "{what} dropped inside a managed CPU pass stays allocated"),
    }
}

/// `len` elements of `T` in managed memory: the same address on the CPU and the GPU.
pub struct ManagedBuffer<'p, T: Pod> {
    shared: Rc<Shared<'p>>,
    va: u64,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Pod> ManagedBuffer<'_, T> {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The address kernels (and the CPU) use.
    pub fn device_ptr(&self) -> u64 {
        self.va
    }

    /// Runs `f(first_index, elements)` over the whole buffer in place on the CPU, pieces in
    /// order: the pages come to the CPU as it touches them (the unikernel takes real page
    /// faults; elsewhere the runtime brings them first). `f` must not call the context.
    pub fn with_host_mut(&self, mut f: impl FnMut(usize, &mut [T])) -> Result<(), Error> {
        let size = core::mem::size_of::<T>();
        let mut bad = None;
        let mut pass = |offset: usize, bytes: &mut [u8]| {
            if bad.is_some() {
                return;
            }
            match <[T]>::mut_from_bytes(bytes) {
                Ok(elems) if offset.is_multiple_of(size) => f(offset / size, elems),
                _ => bad = Some(Error::ElementSize { size }),
            }
        };
        self.shared.ops()?.managed_cpu_pass(self.va, self.len * size, &mut pass)?;
        bad.map_or(Ok(()), Err)
    }

    /// Copies `src` into the buffer from the CPU.
    pub fn write(&self, src: &[T]) -> Result<(), Error> {
        if src.len() != self.len {
            return Err(Error::LengthMismatch { what: "managed write", device: self.len, host: src.len() });
        }
        self.shared.ops()?.managed_write(self.va, src.as_bytes())
    }

    /// The buffer's elements, read by the CPU.
    pub fn read(&self) -> Result<Vec<T>, Error> {
        let mut out = zeroed::<T>(self.len);
        self.shared.ops()?.managed_read(self.va, out.as_mut_bytes())?;
        Ok(out)
    }
}

/// A loaded module (`CUmodule`); unloaded when dropped.
pub struct Module<'p> {
    shared: Rc<Shared<'p>>,
    id: Id,
}

impl<'p> Module<'p> {
    /// A kernel by name (`cuModuleGetFunction`), with its parameter table.
    pub fn function(&self, name: &str) -> Result<Function<'_, 'p>, Error> {
        let params = self.shared.ops()?.function_params(self.id, name)?;
        Ok(Function { module: self, name: String::from(name), params })
    }

    /// The kernels in the module.
    pub fn function_names(&self) -> Result<Vec<String>, Error> {
        self.shared.ops()?.function_names(self.id)
    }
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        release(&self.shared, "a module", |ops| ops.module_free(self.id));
    }
}

/// A kernel of a module (`CUfunction`).
pub struct Function<'m, 'p> {
    module: &'m Module<'p>,
    name: String,
    params: Vec<ParamLayout>,
}

impl Function<'_, '_> {
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The parameter table: offset, size (and alignment, from PTX) of each parameter.
    pub fn params(&self) -> &[ParamLayout] {
        &self.params
    }
}

/// A stream (`CUstream`; cudarc's `CudaStream`): one compute channel of the GPU.
pub struct Stream<'p> {
    shared: Rc<Shared<'p>>,
    id: Id,
    /// Destroyed when dropped (not the default stream).
    owned: bool,
}

impl<'p> Stream<'p> {
    /// Starts a launch of `function` (cudarc's `launch_builder`): add arguments in order, then
    /// [`LaunchBuilder::launch`].
    pub fn launch_builder<'s, 'f>(&'s self, function: &'f Function<'f, 'p>) -> LaunchBuilder<'s, 'f, 'p> {
        LaunchBuilder { stream: self, function, args: Some(Args::new()), error: None, count: 0 }
    }

    /// Waits for the stream's work (`cuStreamSynchronize`); on a GPU fault in managed memory
    /// the fault is serviced meanwhile, and an unserviceable one is the error.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.shared.ops()?.stream_synchronize(self.id)
    }

    /// Whether the stream's work finished (`cuStreamQuery`).
    pub fn query(&self) -> Result<bool, Error> {
        self.shared.ops()?.stream_query(self.id)
    }

    /// An event after the stream's work so far (`cuEventRecord`), with the GPU's timestamp.
    pub fn record_event(&self) -> Result<Event<'p>, Error> {
        let id = self.shared.ops()?.record(self.id)?;
        Ok(Event { shared: self.shared.clone(), id })
    }

    /// Host to device after the stream's earlier work; returns once the data is in place.
    pub fn memcpy_htod<T: Pod>(&self, src: &[T], dst: &DeviceBuffer<'p, T>) -> Result<(), Error> {
        self.shared.ops()?.stream_synchronize(self.id)?;
        Context { shared: self.shared.clone() }.memcpy_htod(src, dst)
    }

    /// Device to host after the stream's earlier work.
    pub fn memcpy_dtoh<T: Pod>(&self, src: &DeviceBuffer<'p, T>, dst: &mut [T]) -> Result<(), Error> {
        self.shared.ops()?.stream_synchronize(self.id)?;
        Context { shared: self.shared.clone() }.memcpy_dtoh(src, dst)
    }

    /// Device to device after the stream's earlier work.
    pub fn memcpy_dtod<T: Pod>(&self, src: &DeviceBuffer<'p, T>, dst: &DeviceBuffer<'p, T>) -> Result<(), Error> {
        self.shared.ops()?.stream_synchronize(self.id)?;
        Context { shared: self.shared.clone() }.memcpy_dtod(src, dst)
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        if self.owned {
            release(&self.shared, "a stream", |ops| ops.destroy_stream(self.id));
        }
    }
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        // The default stream goes with the context's teardown (the backend's `close`).
        if let Ok(mut ops) = self.ops.try_borrow_mut() {
            if let Err(e) = ops.close() {
                log::error!(target: "nvrt", "device {}: closing the context: {e}", self.properties.ordinal);
            }
        }
    }
}

/// A point in a stream's work (`CUevent`), with the GPU's timestamp of it.
pub struct Event<'p> {
    shared: Rc<Shared<'p>>,
    id: Id,
}

impl Event<'_> {
    /// Whether the work before the event finished (`cuEventQuery`).
    pub fn query(&self) -> Result<bool, Error> {
        self.shared.ops()?.event_query(self.id)
    }
    /// Waits for the work before the event (`cuEventSynchronize`).
    pub fn synchronize(&self) -> Result<(), Error> {
        self.shared.ops()?.event_synchronize(self.id)
    }
    /// GPU-clock nanoseconds from `self` to `later` (`cuEventElapsedTime`, in ns), waiting for
    /// both.
    pub fn elapsed_ns(&self, later: &Event<'_>) -> Result<u64, Error> {
        let mut ops = self.shared.ops()?;
        let start = ops.event_time_ns(self.id)?;
        drop(ops);
        let end = later.shared.ops()?.event_time_ns(later.id)?;
        Ok(end.saturating_sub(start))
    }
    /// [`Event::elapsed_ns`] in milliseconds, as `cuEventElapsedTime` reports it.
    pub fn elapsed_ms(&self, later: &Event<'_>) -> Result<f32, Error> {
        Ok(self.elapsed_ns(later)? as f32 / 1e6)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        if let Ok(mut ops) = self.shared.ops() {
            ops.event_free(self.id);
        }
    }
}

/// A kernel argument: scalars by value, buffers as their device address.
pub trait KernelArg {
    /// Appends this argument to `args`.
    fn push(&self, args: &mut ArgList<'_>) -> Result<(), Error>;
}

/// The arguments of one launch, being built.
pub struct ArgList<'a> {
    args: Args,
    owner: *const (),
    _l: PhantomData<&'a ()>,
}

impl ArgList<'_> {
    fn take(&mut self, f: impl FnOnce(Args) -> Args) {
        let args = core::mem::take(&mut self.args);
        self.args = f(args);
    }
    /// Raw bytes of a by-value parameter (a struct the kernel takes by value).
    pub fn bytes(&mut self, v: &[u8]) {
        self.take(|a| a.bytes(v));
    }
}

macro_rules! scalar_arg {
    ($($t:ty => $m:ident),* $(,)?) => {
        $(impl KernelArg for $t {
            fn push(&self, args: &mut ArgList<'_>) -> Result<(), Error> {
                let v = *self;
                args.take(|a| a.$m(v));
                Ok(())
            }
        })*
    };
}

scalar_arg!(u8 => u8, u16 => u16, u32 => u32, i32 => i32, u64 => u64, i64 => i64, f32 => f32, f64 => f64);

impl<T: Pod> KernelArg for DeviceBuffer<'_, T> {
    fn push(&self, args: &mut ArgList<'_>) -> Result<(), Error> {
        if Rc::as_ptr(&self.shared) as *const () != args.owner {
            return Err(Error::ForeignHandle { what: "buffer" });
        }
        let va = self.va;
        args.take(|a| a.device_ptr(va));
        Ok(())
    }
}

impl<T: Pod> KernelArg for ManagedBuffer<'_, T> {
    fn push(&self, args: &mut ArgList<'_>) -> Result<(), Error> {
        if Rc::as_ptr(&self.shared) as *const () != args.owner {
            return Err(Error::ForeignHandle { what: "managed buffer" });
        }
        let va = self.va;
        args.take(|a| a.device_ptr(va));
        Ok(())
    }
}

/// A launch being put together (cudarc's `LaunchArgs`).
pub struct LaunchBuilder<'s, 'f, 'p> {
    stream: &'s Stream<'p>,
    function: &'f Function<'f, 'p>,
    args: Option<Args>,
    error: Option<Error>,
    count: usize,
}

impl LaunchBuilder<'_, '_, '_> {
    /// The next argument, in the kernel's parameter order.
    pub fn arg(mut self, arg: &dyn KernelArg) -> Self {
        if self.error.is_some() {
            return self;
        }
        let mut list = ArgList {
            args: self.args.take().unwrap_or_default(),
            owner: Rc::as_ptr(&self.stream.shared) as *const (),
            _l: PhantomData,
        };
        if let Err(e) = arg.push(&mut list) {
            self.error = Some(e);
        }
        self.args = Some(list.args);
        self.count += 1;
        self
    }

    /// Launches with `config` (grid, block, dynamic shared memory): the arguments are checked
    /// against the kernel's parameter table first (count, sizes, alignment); the launch is
    /// asynchronous.
    pub fn launch(self, config: LaunchConfig) -> Result<(), Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let f = self.function;
        if !Rc::ptr_eq(&f.module.shared, &self.stream.shared) {
            return Err(Error::ForeignHandle { what: "function" });
        }
        let args = self.args.unwrap_or_default();
        let launched = self.stream.shared.ops()?.launch(self.stream.id, f.module.id, &f.name, config, &args);
        match launched {
            Err(Error::Runtime(nvgpu::runtime::RuntimeError::Args(e))) => {
                Err(Error::Arguments { function: f.name.clone(), reason: format!("{e}") })
            }
            other => other,
        }
    }
}
