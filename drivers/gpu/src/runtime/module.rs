//! Modules and functions: a payload's image for the chip, uploaded to GPU memory, and its
//! kernels' parameter layouts.
//!
//! [`crate::payload::Module::select`] picks the image: SASS built for the chip's SM, else PTX.
//! A SASS image uploads every kernel's code, each at a 256-byte aligned offset of one VRAM
//! buffer; a PTX image uploads the text itself (NUL-terminated), which is what the GPU model's
//! compute engine runs (real chips would need a PTX JIT, which this driver does not have).
//! Parameter layouts come from the cubin's `EIATTR_KPARAM_INFO` records or from the PTX
//! `.entry` signatures ([`super::params::ptx_entries`]).

use alloc::string::String;
use alloc::vec::Vec;

use super::params::{self, Args, ParamLayout};
use super::{DeviceBuffer, Gpu, RuntimeError};
use crate::hw::RegisterIo;
use crate::payload::{self, Image};
use crate::platform::{Clock, DmaAllocator};

/// Alignment of each kernel's code in a SASS upload (instruction fetch granule of the SMs).
const CODE_ALIGN: usize = 256;

/// Bytes of the module-scope `.shared` variables of a PTX text (`.shared .align A .b8 name[N];`
/// and scalar forms), summed with their alignment.
fn module_shared_bytes(text: &str) -> u64 {
    let mut total = 0u64;
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix(".shared") else { continue };
        let mut align = 1u64;
        let mut elem = 0u64;
        let mut count = 1u64;
        let mut words = rest.split_whitespace().peekable();
        while let Some(w) = words.next() {
            if w == ".align" {
                align = words.next().and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
            } else if let Some(ty) = w.strip_prefix('.') {
                let bits: u64 = ty.get(1..).and_then(|b| b.parse().ok()).unwrap_or(0);
                if bits != 0 {
                    elem = bits / 8;
                }
            } else {
                // The name, possibly with `[N]` and a trailing `;`.
                if let (Some(open), Some(close)) = (w.find('['), w.find(']')) {
                    count = w.get(open + 1..close).and_then(|n| n.parse().ok()).unwrap_or(0);
                }
                break;
            }
        }
        total = total.next_multiple_of(align) + elem * count;
    }
    total
}

/// Which kind of image a module runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// SASS for `sm`.
    Sass { sm: u32 },
    /// PTX for target `sm`.
    Ptx { sm: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct FunctionInfo {
    name: String,
    code_offset: u64,
    code_size: u64,
    params: Vec<ParamLayout>,
    param_size: u32,
    static_shared: u64,
    max_threads: Option<[u32; 3]>,
    registers: Option<u32>,
}

/// A module loaded on a GPU. Free it with [`Module::free`]; dropping it leaves its code in
/// VRAM until [`Gpu::destroy`].
pub struct Module {
    code: DeviceBuffer<u8>,
    kind: ImageKind,
    functions: Vec<FunctionInfo>,
}

/// A kernel of a loaded [`Module`]; borrowing the module keeps it loaded.
#[derive(Clone, Copy, Debug)]
pub struct Function<'m> {
    module: &'m Module,
    info: &'m FunctionInfo,
}

/// The launch shape: grid and block dimensions, dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
}

/// Threads per block every supported SM (Turing to Hopper) allows.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;

impl LaunchConfig {
    /// `grid` blocks of `block` threads in x, one in y and z, no dynamic shared memory.
    pub fn linear(grid: u32, block: u32) -> Self {
        LaunchConfig { grid: [grid, 1, 1], block: [block, 1, 1], shared_bytes: 0 }
    }

    /// Checks the shape against the hardware's limits and the function's `.maxntid`.
    pub fn check(&self, function: &Function<'_>) -> Result<(), RuntimeError> {
        if self.grid.contains(&0) || self.block.contains(&0) {
            return Err(RuntimeError::BadLaunch { what: "a grid or block dimension is zero" });
        }
        // Grid y and z are 16-bit on every supported SM; x is 31-bit.
        if self.grid[0] > i32::MAX as u32 || self.grid[1] > 65_535 || self.grid[2] > 65_535 {
            return Err(RuntimeError::BadLaunch { what: "grid dimensions beyond 2^31-1 x 65535 x 65535" });
        }
        let threads: u64 = self.block.iter().map(|&d| u64::from(d)).product();
        if threads > MAX_THREADS_PER_BLOCK || self.block[2] > 64 {
            return Err(RuntimeError::BadLaunch { what: "more than 1024 threads per block (or block z above 64)" });
        }
        if let Some(max) = function.info.max_threads {
            let limit: u64 = max.iter().map(|&d| u64::from(d.max(1))).product();
            if threads > limit {
                return Err(RuntimeError::BadLaunch { what: "more threads per block than the kernel's .maxntid" });
            }
        }
        Ok(())
    }
}

impl Module {
    /// Parses `bytes` (fatbin, cubin or PTX), picks the image for the GPU's chip and uploads it.
    pub fn load<R, A, C>(gpu: &mut Gpu<'_, R, A, C>, bytes: &[u8]) -> Result<Module, RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        let parsed = payload::Module::load(bytes)?;
        let image =
            if gpu.config().runs_ptx { parsed.select_ptx(gpu.chipset())? } else { parsed.select(gpu.chipset())? };
        if matches!(image, Image::Ptx(_)) && !gpu.config().runs_ptx {
            return Err(RuntimeError::Unsupported {
                what: "PTX on a real GPU (this driver has no PTX JIT): give a cubin or fatbin with SASS for the chip",
            });
        }
        let (kind, image, functions) = match image {
            Image::Ptx(ptx) => {
                // The model runs PTX: each entry gets its own code image (the magic, the entry's
                // name, the module's text: `compute::launch::model_code_image`), 256-byte aligned
                // in one upload.
                let entries = params::ptx_entries(&ptx.text)?;
                let text = core::str::from_utf8(&ptx.text)
                    .map_err(|_| RuntimeError::Payload(payload::Error::Corrupt { what: "PTX", detail: "not UTF-8" }))?;
                let static_shared = module_shared_bytes(text);
                let mut image = Vec::new();
                let mut functions = Vec::new();
                for e in entries {
                    image.resize(image.len().next_multiple_of(CODE_ALIGN), 0);
                    let code_offset = image.len() as u64;
                    let code = crate::compute::launch::model_code_image(&e.name, text);
                    image.extend_from_slice(&code);
                    functions.push(FunctionInfo {
                        name: e.name,
                        code_offset,
                        code_size: code.len() as u64,
                        params: e.params,
                        param_size: e.param_size,
                        // Module-scope `.shared` declarations, summed: at least what any entry
                        // uses (the model computes each entry's own and takes the rest as
                        // dynamic shared memory).
                        static_shared,
                        max_threads: None,
                        registers: None,
                    });
                }
                (ImageKind::Ptx { sm: ptx.sm }, image, functions)
            }
            Image::Sass(cubin) => {
                if !cubin.data_sections.is_empty() || !cubin.relocations.is_empty() {
                    return Err(RuntimeError::Unsupported {
                        what:
                            "cubins with global data, constant banks or relocations (only self-contained kernels load)",
                    });
                }
                let mut image = Vec::new();
                let mut functions = Vec::new();
                for k in &cubin.kernels {
                    image.resize(image.len().next_multiple_of(CODE_ALIGN), 0);
                    let code_offset = image.len() as u64;
                    image.extend_from_slice(&k.code);
                    let params = k
                        .params
                        .iter()
                        .map(|p| ParamLayout { offset: p.offset.into(), size: p.size.into(), align: None })
                        .collect();
                    functions.push(FunctionInfo {
                        name: k.name.clone(),
                        code_offset,
                        code_size: k.code.len() as u64,
                        params,
                        param_size: k.param_size.into(),
                        static_shared: k.shared_size,
                        max_threads: k.max_threads,
                        registers: k.registers,
                    });
                }
                (ImageKind::Sass { sm: cubin.sm }, image, functions)
            }
        };
        if image.is_empty() {
            return Err(RuntimeError::Payload(payload::Error::Corrupt { what: "module", detail: "no code" }));
        }
        let code = gpu.alloc_from::<u8>(&image)?;
        Ok(Module { code, kind, functions })
    }

    /// The kind of image loaded.
    pub fn image_kind(&self) -> ImageKind {
        self.kind
    }

    /// The kernels' names.
    pub fn function_names(&self) -> impl Iterator<Item = &str> {
        self.functions.iter().map(|f| f.name.as_str())
    }

    /// The kernel called `name`.
    pub fn function(&self, name: &str) -> Result<Function<'_>, RuntimeError> {
        let info = self.functions.iter().find(|f| f.name == name);
        let info = info.ok_or_else(|| RuntimeError::NoSuchFunction { name: String::from(name) })?;
        Ok(Function { module: self, info })
    }

    /// The GPU VA of the uploaded image.
    pub fn image_va(&self) -> u64 {
        self.code.device_ptr()
    }

    /// The physical VRAM address of the uploaded image (diagnostics, tests).
    pub fn image_vram_address(&self) -> u64 {
        self.code.vram_address()
    }

    /// Bytes of the uploaded image.
    pub fn image_len(&self) -> usize {
        self.code.len()
    }

    /// Frees the code's VRAM after every stream finished.
    pub fn free<R, A, C>(self, gpu: &mut Gpu<'_, R, A, C>) -> Result<(), RuntimeError>
    where
        R: RegisterIo + ?Sized,
        A: DmaAllocator + ?Sized,
        C: Clock + ?Sized,
    {
        self.code.free(gpu)
    }
}

impl Function<'_> {
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The image this kernel belongs to.
    pub fn image_kind(&self) -> ImageKind {
        self.module.kind
    }

    /// The GPU VA of the kernel's code: its SASS, or (PTX) the module's text, in which the
    /// kernel is the `.entry` of [`Function::name`].
    pub fn code_va(&self) -> u64 {
        self.module.code.device_ptr() + self.info.code_offset
    }

    /// Bytes of code at [`Function::code_va`].
    pub fn code_size(&self) -> u64 {
        self.info.code_size
    }

    /// The parameters in signature order.
    pub fn params(&self) -> &[ParamLayout] {
        &self.info.params
    }

    /// Bytes of the parameter block.
    pub fn param_size(&self) -> u32 {
        self.info.param_size
    }

    /// Static shared memory (cubins; 0 where the image does not say, PTX).
    pub fn static_shared_bytes(&self) -> u64 {
        self.info.static_shared
    }

    /// Registers per thread (cubins).
    pub fn registers(&self) -> Option<u32> {
        self.info.registers
    }

    /// Lays `args` out as this kernel's parameter block, checking their count and sizes.
    pub fn pack(&self, args: &Args) -> Result<Vec<u8>, RuntimeError> {
        Ok(params::pack(&self.info.name, &self.info.params, self.info.param_size, args)?)
    }

    /// Packs `args` into `block` (at least [`Self::param_size`] bytes): the parameter bytes
    /// land at their offsets, the padding between them becomes zero.
    pub fn pack_into(&self, args: &Args, block: &mut [u8]) -> Result<(), RuntimeError> {
        let size = self.info.param_size as usize;
        let block = block
            .get_mut(..size)
            .ok_or(RuntimeError::BadLaunch { what: "the parameters do not fit constant bank 0" })?;
        block.fill(0);
        Ok(params::pack_into(&self.info.name, &self.info.params, args, block)?)
    }
}

impl core::fmt::Debug for Module {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Module")
            .field("kind", &self.kind)
            .field("image_va", &self.image_va())
            .field("functions", &self.functions)
            .finish()
    }
}
