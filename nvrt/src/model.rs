//! The API on the host, on a model GPU (feature `model`): the GPU model boots NVIDIA's real
//! GSP-RM firmware (`target/real-data`, or `NVGPU_REAL_DATA`), and the application runs on it
//! through the same [`System`] it gets in the unikernel. Host tests and `nvtool run` use this.
//!
//! ```text
//! let modules = [("payload-vector_add-sm_90.ptx".to_string(), ptx_bytes)];
//! nvrt::model::run(ModelConfig::h200(), &modules, "", |sys| app::main(sys))??;
//! ```

use std::boxed::Box;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::format;
use std::rc::Rc;
use std::string::{String, ToString};
use std::vec::Vec;

use nvgpu::gsp::commands::{GspStaticConfigInfo, RpcChannel};
use nvgpu::platform::Clock;
use nvgpu::runtime::GpuConfig;
use sim::{DmaArena, ModelGpu};

/// The model GPUs a run may boot (a board's chip, VRAM, placement), and their chips.
pub use nvgpu::chip::Chipset;
pub use sim::ModelConfig;

use crate::platform::{BackendConfig, CpuAccess, DeviceOps, GpuBackend, Platform, RpcSource, ThroughRuntime};
use crate::system::{DeviceProperties, PciAddress};
use crate::{Error, System};

/// The booted session's RPC channel, shared by the contexts opened on it.
struct SharedRpc<'b, C: RpcChannel>(Rc<RefCell<&'b mut C>>);

impl<C: RpcChannel> RpcSource for SharedRpc<'_, C> {
    type Channel = C;
    fn with<T>(&mut self, f: impl FnOnce(&mut C) -> T) -> Option<T> {
        let mut rpc = self.0.try_borrow_mut().ok()?;
        Some(f(&mut rpc))
    }
}

/// How CPU code reaches managed memory on the host: a platform's own [`CpuAccess`] over the
/// model's system memory (tests use one that keeps page tables like the unikernel's).
pub type HostCpuAccess<'b> = Box<dyn CpuAccess<'b, ModelGpu, DmaArena, dyn Clock + 'b> + 'b>;

/// Makes each context's [`HostCpuAccess`].
pub trait MakeCpuAccess {
    fn make<'b>(&mut self, memory: &'b DmaArena) -> HostCpuAccess<'b>;
}

struct Through;

impl MakeCpuAccess for Through {
    fn make<'b>(&mut self, _: &'b DmaArena) -> HostCpuAccess<'b> {
        Box::new(ThroughRuntime)
    }
}

struct ModelPlatform<'b, C: RpcChannel> {
    make_cpu: RefCell<&'b mut dyn MakeCpuAccess>,
    model: &'b ModelGpu,
    arena: &'b DmaArena,
    clock: &'b dyn Clock,
    info: GspStaticConfigInfo,
    rpc: Rc<RefCell<&'b mut C>>,
    properties: DeviceProperties,
    modules: &'b BTreeMap<String, Vec<u8>>,
    cmdline: &'b str,
    next_client: Cell<u32>,
    milestones: RefCell<Vec<String>>,
    started: std::time::Instant,
}

impl<C: RpcChannel> Platform for ModelPlatform<'_, C> {
    fn device_count(&self) -> usize {
        1
    }
    fn properties(&self, ordinal: usize) -> Option<DeviceProperties> {
        (ordinal == 0).then(|| self.properties.clone())
    }
    fn open(&self, ordinal: usize) -> Result<Box<dyn DeviceOps + '_>, Error> {
        if ordinal != 0 {
            return Err(Error::NoSuchDevice { ordinal, count: 1 });
        }
        let client_index = self.next_client.get();
        self.next_client.set(client_index + 1);
        let config = BackendConfig {
            gpu: GpuConfig {
                runs_ptx: true,
                client_index,
                page_faulting: true,
                timeout_ms: 600_000,
                ..GpuConfig::default()
            },
            ordinal,
        };
        let chipset = self.model.config().chipset;
        let backend = GpuBackend::open(
            SharedRpc(self.rpc.clone()),
            self.model,
            self.arena,
            self.clock,
            &self.info,
            chipset,
            config,
            self.make_cpu.borrow_mut().make(self.arena),
        )?;
        Ok(Box::new(backend))
    }
    fn cmdline(&self) -> &str {
        self.cmdline
    }
    fn module(&self, name: &str) -> Option<&[u8]> {
        self.modules.get(name).map(Vec::as_slice)
    }
    fn module_names(&self) -> Vec<String> {
        self.modules.keys().cloned().collect()
    }
    fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }
    fn cpus(&self) -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
    fn milestone(&self, name: &str) {
        self.milestones.borrow_mut().push(name.to_string());
    }
}

/// What a run on the model left behind besides the application's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelReport {
    /// The milestones the application marked, in order.
    pub milestones: Vec<String>,
}

/// Boots a model GPU of `config` with the real firmware, then runs `app` on a [`System`] with
/// that one device, the boot modules `modules` (name, bytes) and the command line `cmdline`.
/// Fails when the model cannot boot, or when it rejected any access during the run (what real
/// hardware would have refused too).
pub fn run<T>(
    config: ModelConfig,
    modules: &[(String, Vec<u8>)],
    cmdline: &str,
    app: impl FnOnce(&System<'_>) -> T,
) -> Result<(T, ModelReport), String> {
    run_with(config, modules, cmdline, &mut Through, app)
}

/// [`run`], CPU access to managed memory made by `make_cpu` for each context opened.
pub fn run_with<T>(
    config: ModelConfig,
    modules: &[(String, Vec<u8>)],
    cmdline: &str,
    make_cpu: &mut dyn MakeCpuAccess,
    app: impl FnOnce(&System<'_>) -> T,
) -> Result<(T, ModelReport), String> {
    let modules: BTreeMap<String, Vec<u8>> = modules.iter().cloned().collect();
    let root = sim::host_boot::data_root();
    let outcome = sim::host_boot::with_booted(config, &root, |model, arena, clock, boot| {
        let info = *boot.static_info().ok_or("GSP-RM gave no static information")?;
        let rpc = boot.rpc().ok_or("GSP-RM is not running")?;
        let chipset = model.config().chipset;
        let memory_bytes = info.fb_bytes();
        let p = model.config().placement;
        let properties = DeviceProperties {
            ordinal: 0,
            name: info.gpu_name().to_string(),
            chip: format!("{chipset}"),
            sm_version: chipset.sm_version(),
            memory_bytes,
            pci: Some(PciAddress { domain: p.segment, bus: p.bus, device: p.device, function: p.function }),
            runs_ptx: true,
        };
        let platform = ModelPlatform {
            make_cpu: RefCell::new(make_cpu),
            model,
            arena,
            clock,
            info,
            rpc: Rc::new(RefCell::new(rpc)),
            properties,
            modules: &modules,
            cmdline,
            next_client: Cell::new(1),
            milestones: RefCell::new(Vec::new()),
            started: std::time::Instant::now(),
        };
        let value = app(&System::new(&platform));
        let report = ModelReport { milestones: platform.milestones.borrow().clone() };
        drop(platform);
        let errors = model.take_errors();
        if !errors.is_empty() {
            return Err(format!("the model rejected {} access(es): {errors:?}", errors.len()));
        }
        Ok::<_, String>((value, report))
    })?;
    outcome
}
