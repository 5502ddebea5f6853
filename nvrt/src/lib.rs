//! The application API: what a CUDA developer expects, in Rust, on the unikernel.
//!
//! An application gets a [`System`] and works from there; it never names an RPC channel, a
//! BAR, a DMA allocator or a clock type:
//!
//! ```text
//! pub fn main(sys: &nvrt::System) -> Result<(), nvrt::Error> {
//!     let ctx = sys.open(0)?;                              // cuCtxCreate / CudaContext::new(0)
//!     let module = ctx.load_payload("vector_add")?;        // the kernels of payloads/vector_add.cu
//!     let add = module.function("vector_add")?;            // cuModuleGetFunction
//!     let a = ctx.htod(&[1.0f32, 2.0, 3.0])?;              // cuMemAlloc + cuMemcpyHtoD
//!     let b = ctx.htod(&[4.0f32, 5.0, 6.0])?;
//!     let c = ctx.alloc_zeros::<f32>(3)?;
//!     let stream = ctx.new_stream()?;                      // cuStreamCreate
//!     stream.launch_builder(&add).arg(&a).arg(&b).arg(&c).arg(&3u32)
//!         .launch(nvrt::LaunchConfig::linear(1, 32))?;     // cuLaunchKernel
//!     stream.synchronize()?;
//!     assert_eq!(ctx.dtoh(&c)?, [5.0, 7.0, 9.0]);          // cuMemcpyDtoH
//!     Ok(())
//! }
//! ```
//!
//! - [`System`]: the devices (count, [`DeviceProperties`], [`System::open`]), the kernel command
//!   line, boot modules by name, a monotonic clock, the CPUs, progress lines on the console.
//! - [`Context`]: one opened device. Typed [`DeviceBuffer`]s and copies, [`Module`]s (fatbin,
//!   cubin, or PTX on the model) and their [`Function`]s, [`Stream`]s and [`Event`]s (with
//!   elapsed time on the GPU's clock), [`ManagedBuffer`]s (unified memory: the same address on
//!   the CPU and the GPU, pages migrated on faults).
//! - Launches take typed arguments ([`KernelArg`]) and check them against the kernel's
//!   parameter table before anything reaches the GPU.
//! - Everything that holds GPU resources gives them back when dropped (buffers, modules,
//!   streams, the context itself); managed buffers live as long as their context.
//! - Errors are [`Error`], typed throughout.
//!
//! Copies between the host and the device are synchronous with the host (as CUDA's copies of
//! pageable memory are): a stream's `memcpy_htod` waits for the stream's earlier work, copies,
//! and returns once the data is in place. Device-side copies and memsets on a stream are ordered
//! after its earlier work the same way. Launches are asynchronous until the stream or an event
//! is waited for.
//!
//! Where the devices come from is the platform's: the unikernel implements [`Platform`] over
//! the GPUs it booted; on the host, [`model`] (feature `model`) runs the same application on
//! model GPUs booted with NVIDIA's real firmware.
#![no_std]
extern crate alloc;
#[cfg(feature = "model")]
extern crate std;

mod context;
mod error;
pub mod platform;
mod system;

#[cfg(feature = "model")]
pub mod model;

pub use context::{
    Context, DeviceBuffer, Event, Function, KernelArg, LaunchBuilder, ManagedBuffer, ManagedOptions, ManagedStats,
    Module, Stream,
};
pub use error::Error;
pub use nvgpu::runtime::{LaunchConfig, Pod};
pub use platform::Platform;
pub use system::{payload_arch, payload_module_name, DeviceProperties, PciAddress, System, Termination};
/// Why unified memory failed (inside [`Error::Managed`]), and what it counted
/// ([`ManagedStats::uvm`]).
pub use uvm::runtime::ManagedError;
pub use uvm::service::UvmStats;
