//! The model's compute engine: takes a QMD by `SEND_PCAS_A` + `SEND_SIGNALING_PCAS2_B`
//! (`nvgpu::hw::compute`), decodes it with the driver's own QMD table
//! (`nvgpu::compute::qmd`, checked against open-gpu-doc's `cl*c0qmd.h`), reads the code image
//! at the program address (on the model: PTX, `nvgpu::compute::launch::model_code_image`),
//! constant bank 0 with the parameters, and runs the grid through the PTX interpreter
//! ([`crate::ptx`]) with global memory through the channel's VA space. A QMD with `RELEASE0`
//! enabled gets its 32-bit payload written when the grid finished.
//!
//! Parsed modules are kept by program address (and compared by text), so launching the same
//! kernel again does not parse it again.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use nvgpu::compute::launch::{param_cbank_offset, parse_model_code_image, qmd_layout, QMD_BYTES};
use nvgpu::compute::qmd::Qmd;
use nvgpu::hal::Family;
use nvgpu::hw::compute::*;
use nvgpu::hw::qmd::Semantic;

use crate::engine_mem::{MmuFault, VirtualMemory};
use crate::ptx::{self, LaunchConfig, Limits, Module};

/// Why a compute method or launch failed.
#[derive(Clone, Debug, PartialEq)]
pub enum ComputeError {
    /// A method the model does not implement.
    UnknownMethod { method: u32, value: u32 },
    /// `SEND_SIGNALING_PCAS2_B` with an action the model does not perform.
    UnsupportedAction(u32),
    /// `SEND_SIGNALING_PCAS2_B` before any `SEND_PCAS_A`.
    NoQmd,
    /// The QMD, code image or constant bank could not be read.
    Fault(MmuFault),
    /// The QMD or code image is malformed.
    BadLaunch(String),
    /// The PTX failed to parse or run.
    Ptx(String),
}

impl core::fmt::Display for ComputeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ComputeError::UnknownMethod { method, value } => write!(f, "compute method {method:#x} = {value:#x} is not modelled"),
            ComputeError::UnsupportedAction(a) => write!(f, "PCAS action {a} is not modelled"),
            ComputeError::NoQmd => f.write_str("SEND_SIGNALING_PCAS2_B without SEND_PCAS_A"),
            ComputeError::Fault(fault) => write!(f, "{fault}"),
            ComputeError::BadLaunch(why) => write!(f, "bad launch: {why}"),
            ComputeError::Ptx(why) => write!(f, "PTX: {why}"),
        }
    }
}

impl From<MmuFault> for ComputeError {
    fn from(f: MmuFault) -> Self {
        ComputeError::Fault(f)
    }
}

/// What a launch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ComputeLaunch {
    pub instructions: u64,
    pub ctas: u64,
    pub threads: u64,
}

/// One channel's compute object.
#[derive(Debug)]
pub struct ComputeEngine {
    family: Family,
    qmd_va: Option<u64>,
    modules: Vec<(u64, String, Module)>,
    pub limits: Limits,
    pub launches: u64,
    pub last: Option<ComputeLaunch>,
}

impl ComputeEngine {
    pub fn new(family: Family) -> Self {
        ComputeEngine { family, qmd_va: None, modules: Vec::new(), limits: Limits::default(), launches: 0, last: None }
    }

    /// One method; `Some` when it launched a grid.
    pub fn method(&mut self, method: u32, value: u32, vm: &mut dyn VirtualMemory) -> Result<Option<ComputeLaunch>, ComputeError> {
        match method {
            NVC6C0_SEND_PCAS_A => {
                self.qmd_va = Some(u64::from(value) << 8);
                Ok(None)
            }
            NVC5C0_SEND_SIGNALING_PCAS_B if self.family == Family::Turing => {
                if value & NVC5C0_PCAS_B_INVALIDATE_AND_SCHEDULE != NVC5C0_PCAS_B_INVALIDATE_AND_SCHEDULE {
                    return Err(ComputeError::UnsupportedAction(value));
                }
                let qmd_va = self.qmd_va.ok_or(ComputeError::NoQmd)?;
                let launch = self.launch(qmd_va, vm)?;
                self.launches += 1;
                self.last = Some(launch);
                Ok(Some(launch))
            }
            NVC6C0_SEND_SIGNALING_PCAS2_B if self.family != Family::Turing => {
                let action = value & 0xf;
                if action != NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE {
                    return Err(ComputeError::UnsupportedAction(action));
                }
                let qmd_va = self.qmd_va.ok_or(ComputeError::NoQmd)?;
                let launch = self.launch(qmd_va, vm)?;
                self.launches += 1;
                self.last = Some(launch);
                Ok(Some(launch))
            }
            _ => Err(ComputeError::UnknownMethod { method, value }),
        }
    }

    fn launch(&mut self, qmd_va: u64, vm: &mut dyn VirtualMemory) -> Result<ComputeLaunch, ComputeError> {
        use Semantic::*;
        let layout = qmd_layout(self.family).map_err(|e| ComputeError::BadLaunch(format!("{e}")))?;
        let mut raw = [0u8; QMD_BYTES];
        vm.read(qmd_va, &mut raw)?;
        let words: Vec<u32> = raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let bad = |e: nvgpu::compute::qmd::QmdError| ComputeError::BadLaunch(format!("QMD: {e}"));
        let q = Qmd::from_words(layout, &words).map_err(bad)?;
        if q.get(QmdMajorVersion, 0).map_err(bad)? != u64::from(layout.major) {
            return Err(ComputeError::BadLaunch(format!("QMD major version is not {}", layout.major)));
        }
        let program = q.address(ProgramAddressLower, ProgramAddressUpper, 0).map_err(bad)?;
        let grid = [q.get(GridWidth, 0).map_err(bad)?, q.get(GridHeight, 0).map_err(bad)?, q.get(GridDepth, 0).map_err(bad)?];
        let block = [q.get(BlockDim0, 0).map_err(bad)?, q.get(BlockDim1, 0).map_err(bad)?, q.get(BlockDim2, 0).map_err(bad)?];
        let shared = q.get(SharedMemorySize, 0).map_err(bad)?;
        if q.get(ConstantBufferValid, 0).map_err(bad)? != 1 {
            return Err(ComputeError::BadLaunch("constant bank 0 is not valid".into()));
        }
        let const0 = q.address(ConstantBufferAddrLower, ConstantBufferAddrUpper, 0).map_err(bad)?;
        let const0_size = q.get(ConstantBufferSize, 0).map_err(bad)?;
        if const0_size > 64 << 10 {
            return Err(ComputeError::BadLaunch(format!("constant bank 0 of {const0_size} bytes")));
        }

        // The code image: header first, then the text.
        let mut head = [0u8; 12];
        vm.read(program, &mut head)?;
        let name_len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize;
        if name_len > 4096 {
            return Err(ComputeError::BadLaunch("entry name longer than 4 KiB".into()));
        }
        let mut upto_text = vec![0u8; 12 + name_len + 4];
        vm.read(program, &mut upto_text)?;
        let t = &upto_text[12 + name_len..];
        let text_len = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
        if text_len > 64 << 20 {
            return Err(ComputeError::BadLaunch("PTX text longer than 64 MiB".into()));
        }
        let mut image = vec![0u8; upto_text.len() + text_len];
        vm.read(program, &mut image)?;
        let (entry, text) = parse_model_code_image(&image).map_err(|e| ComputeError::BadLaunch(format!("{e}")))?;

        let index = match self.modules.iter().position(|(at, t, _)| *at == program && t == text) {
            Some(i) => i,
            None => {
                let module = Module::parse(text).map_err(|e| ComputeError::Ptx(format!("{e}")))?;
                self.modules.retain(|(at, _, _)| *at != program);
                self.modules.push((program, String::from(text), module));
                self.modules.len() - 1
            }
        };
        let module = &self.modules[index].2;
        let kernel = module.kernel(entry).ok_or_else(|| ComputeError::Ptx(format!("no entry {entry} in the module")))?;
        let mut bank = vec![0u8; const0_size as usize];
        vm.read(const0, &mut bank)?;
        let at = param_cbank_offset(self.family) as usize;
        let size = kernel.param_size() as usize;
        let params = bank
            .get(at..at + size)
            .ok_or_else(|| ComputeError::BadLaunch(format!("{size} bytes of parameters do not fit constant bank 0")))?
            .to_vec();
        let static_shared = u64::from(kernel.static_shared());
        let dynamic_shared = shared.saturating_sub(static_shared) as u32;
        let grid = grid.map(|v| v as u32);
        let block = block.map(|v| v as u32);
        let cfg = LaunchConfig { grid, block, dynamic_shared, const_bank: None, globals: &[] };
        let stats = ptx::launch(module, entry, &cfg, &params, vm, &self.limits).map_err(|e| match e {
            ptx::PtxError::Exec { error: ptx::ExecError::Fault(fault), .. } => ComputeError::Fault(fault),
            other => ComputeError::Ptx(format!("{other}")),
        })?;

        if q.get(Release0Enable, 0).unwrap_or(0) == 1 {
            let address = q.address(Release0AddrLower, Release0AddrUpper, 0).map_err(bad)?;
            let payload = q.get(Release0PayloadLower, 0).map_err(bad)? as u32;
            vm.write(address, &payload.to_le_bytes())?;
        }
        Ok(ComputeLaunch { instructions: stats.instructions, ctas: stats.ctas, threads: stats.threads })
    }
}
