//! The model's compute engine: takes a QMD by `SEND_PCAS_A` + `SEND_SIGNALING_PCAS2_B`
//! (`SEND_SIGNALING_PCAS_B` on Turing; `nvgpu::hw::compute`), decodes it itself (`QmdReader`:
//! the `MW(hi:lo)` positions of open-gpu-doc's `cl*c0qmd.h`, declared in `nvgpu::hw::qmd`, read
//! bit by bit, not with the driver's encoder), reads the code image
//! at the program address (on the model: PTX, `nvgpu::compute::launch::model_code_image`),
//! constant bank 0 with the parameters, and runs the grid through the PTX interpreter
//! ([`crate::ptx`]) with global memory through the channel's VA space. A QMD with `RELEASE0`
//! enabled gets its 32-bit payload written when the grid finished.
//!
//! Before the first launch the driver must have set the context's memory configuration:
//! the local-memory buffer (`SET_SHADER_LOCAL_MEMORY_A/B`, `..._NON_THROTTLED_A/B/C`) and the
//! generic windows (`SET_SHADER_LOCAL_MEMORY_WINDOW_A/B`, `SET_SHADER_SHARED_MEMORY_WINDOW_A/B`);
//! a launch without them is [`ComputeError::NotConfigured`]. A launch checks that the buffer is
//! mapped over the size the model's TPCs need, that the QMD's `SHADER_LOCAL_MEMORY_LOW_SIZE`
//! covers the kernel's local memory (its `.local` arrays and call frames, as the interpreter
//! lays them out) and fits the per-TPC size, and that the QMD's shared-memory configuration
//! (`MIN/MAX/TARGET_SM_CONFIG_SHARED_MEM_SIZE`, Ampere and later) admits the CTA's shared
//! memory. The interpreter resolves generic addresses through the driver's windows; local
//! memory's contents stay in the interpreter (per thread), not in the driver's buffer.
//!
//! In a context with replayable faults ([`ComputeEngine::replayable`], set by the GPU) a launch
//! runs resumably ([`crate::ptx::start_launch`]): a global access that misses or violates
//! permissions stalls its thread at the instruction, the launch method answers with the engine
//! stalled ([`ComputeEngine::stalled`] lists the accesses, which the GPU writes into the
//! replayable fault buffer), and the host issues the method again after a replay, which resumes
//! the launch with every register intact. A cancel ([`ComputeEngine::cancel_va`]) kills the
//! launch at its next resumption: it fails with the fault, and the channel takes a robust-channel
//! error, as a cancelled context does on hardware. Without replayable faults the first fault
//! fails the launch at once.
//!
//! Parsed modules are kept by program address (and compared by text), so launching the same
//! kernel again does not parse it again.

use alloc::format;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use nvgpu::compute::launch::{parse_model_code_image, QMD_BYTES};
use nvgpu::compute::memory::{SMS_PER_TPC, WARP_THREADS};
use nvgpu::hal::Family;
use nvgpu::hw::compute::*;
use nvgpu::hw::qmd::{QmdLayout, Semantic};

use crate::engine_mem::{MmuFault, VirtualMemory};
use crate::ptx::{self, LaunchConfig, Limits, Module, Windows};
use crate::silicon::{self, LaunchMethod, Silicon};

/// TPCs present in each of the model's GPCs.
pub const MODEL_TPC_MASK_PER_GPC: u32 = 0b11;

/// Resident warps per SM the model reports (`SM_info.maxWarpsPerSM`; [`Silicon::max_warps_per_sm`]).
pub const fn model_max_warps_per_sm(family: Family) -> u32 {
    silicon::of(family).max_warps_per_sm
}

/// TPCs of the model (what its GSP-RM static info reports: 6 GPCs).
pub const MODEL_TPCS: u32 = 6 * MODEL_TPC_MASK_PER_GPC.count_ones();
/// Bytes each generic window spans on the model (the driver's windows are this far apart).
pub const MODEL_WINDOW_BYTES: u64 = 1 << 24;

/// Most threads one launch may have in the model (grid times block). Hardware runs more; the
/// interpreter would spend hours inside one doorbell, and no test launches a tenth of it.
pub const MAX_LAUNCH_THREADS: u64 = 1 << 28;

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
    /// A launch before the driver set this part of the context's memory configuration.
    NotConfigured { what: &'static str },
    /// The generic windows overlap each other or the constant window.
    OverlappingWindows { shared: u64, local: u64 },
    /// Local memory too small: the QMD's per-thread size for the kernel, or the per-TPC size
    /// for the QMD's per-thread size.
    LocalMemoryTooSmall { what: &'static str, have: u64, need: u64 },
    /// The QMD's shared-memory configuration does not admit the CTA's shared memory, or is
    /// not a configuration of this family.
    SharedConfig { shared: u64, min_config: u64, target_config: u64, max_config: u64, why: &'static str },
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
            ComputeError::NotConfigured { what } => write!(f, "launch before the driver set {what}"),
            ComputeError::OverlappingWindows { shared, local } => {
                write!(f, "generic windows overlap (shared {shared:#x}, local {local:#x})")
            }
            ComputeError::LocalMemoryTooSmall { what, have, need } => write!(f, "{what}: {have} bytes, need {need}"),
            ComputeError::SharedConfig { shared, min_config, target_config, max_config, why } => write!(
                f,
                "{shared} bytes of shared memory with SM config min {min_config} target {target_config} max {max_config}: {why}"
            ),
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

/// The context memory methods' values, as the driver set them (`None`: not yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryConfig {
    pub local_memory_a: Option<u32>,
    pub local_memory_b: Option<u32>,
    pub non_throttled_a: Option<u32>,
    pub non_throttled_b: Option<u32>,
    pub non_throttled_c: Option<u32>,
    pub local_window_a: Option<u32>,
    pub local_window_b: Option<u32>,
    pub shared_window_a: Option<u32>,
    pub shared_window_b: Option<u32>,
}

fn join(hi: Option<u32>, lo: Option<u32>, what: &'static str) -> Result<u64, ComputeError> {
    match (hi, lo) {
        (Some(hi), Some(lo)) => Ok(u64::from(hi) << 32 | u64::from(lo)),
        _ => Err(ComputeError::NotConfigured { what }),
    }
}

impl MemoryConfig {
    /// The local-memory buffer's VA.
    pub fn local_memory(&self) -> Result<u64, ComputeError> {
        join(self.local_memory_a, self.local_memory_b, "SET_SHADER_LOCAL_MEMORY_A/B")
    }
    /// Local memory per TPC.
    pub fn bytes_per_tpc(&self) -> Result<u64, ComputeError> {
        join(self.non_throttled_a, self.non_throttled_b, "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B")
    }
    /// `NON_THROTTLED_C_MAX_SM_COUNT`.
    pub fn max_sm_count(&self) -> Result<u32, ComputeError> {
        let c = self
            .non_throttled_c
            .ok_or(ComputeError::NotConfigured { what: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C" })?;
        Ok(c & ((1 << NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT.width()) - 1))
    }
    /// The generic windows.
    pub fn windows(&self) -> Result<Windows, ComputeError> {
        let local = join(self.local_window_a, self.local_window_b, "SET_SHADER_LOCAL_MEMORY_WINDOW_A/B")?;
        let shared = join(self.shared_window_a, self.shared_window_b, "SET_SHADER_SHARED_MEMORY_WINDOW_A/B")?;
        Ok(Windows { shared, local, size: MODEL_WINDOW_BYTES })
    }
}

/// A launch stalled on replayable faults.
#[derive(Debug)]
struct Pending {
    /// Index into the engine's modules.
    module: usize,
    state: ptx::LaunchState,
    /// `RELEASE0` of the QMD: (VA, payload), written when the grid completes.
    release: Option<(u64, u32)>,
}

/// The model's reading of a QMD: each field at the `MW(hi:lo)` position NVIDIA's QMD header
/// gives it (`nvgpu::hw::qmd`), taken bit by bit from the words the engine fetched.
struct QmdReader<'a> {
    layout: &'static QmdLayout,
    words: &'a [u32],
}

impl QmdReader<'_> {
    /// Field `semantic` in its natural unit (a `_SHIFTED<n>` field shifted back up); a field
    /// this version lacks is a malformed launch.
    fn get(&self, semantic: Semantic) -> Result<u64, ComputeError> {
        Ok(self.raw(semantic)? << self.pos(semantic)?.shift)
    }

    /// Whether this QMD version has the field.
    fn has(&self, semantic: Semantic) -> bool {
        self.layout.field(semantic).is_some()
    }

    fn pos(&self, semantic: Semantic) -> Result<&'static nvgpu::hw::qmd::FieldPos, ComputeError> {
        self.layout.field(semantic).ok_or_else(|| {
            ComputeError::BadLaunch(format!(
                "QMD V{:02}_{:02} has no {semantic:?}",
                self.layout.major, self.layout.minor
            ))
        })
    }

    /// The stored bits of element 0 of `semantic`.
    fn raw(&self, semantic: Semantic) -> Result<u64, ComputeError> {
        let pos = self.pos(semantic)?;
        let mut value = 0u64;
        for (n, bit) in (pos.lo..=pos.hi).enumerate() {
            let word = self.words.get((bit / 32) as usize).ok_or_else(|| {
                ComputeError::BadLaunch(format!("QMD field {} lies past word {}", pos.name, self.words.len()))
            })?;
            value |= u64::from((word >> (bit % 32)) & 1) << n;
        }
        Ok(value)
    }

    /// An address split into `lower` and `upper` fields: the upper bits continue the lower
    /// field's, and a `_SHIFTED<n>` lower field shifts the whole address.
    fn address(&self, lower: Semantic, upper: Semantic) -> Result<u64, ComputeError> {
        let lo = self.pos(lower)?;
        let joined = self.raw(upper)? << (lo.hi - lo.lo + 1) | self.raw(lower)?;
        Ok(joined << lo.shift)
    }
}

/// The bytes a `*_SM_CONFIG_SHARED_MEM_SIZE` value stands for: the field counts 4 KiB units
/// plus one, and 0 means unset (the encoding NVIDIA's CUDA driver writes, as tinygrad's
/// `ops_nv.py` reproduces it).
fn sm_config_bytes(value: u64) -> Option<u64> {
    value.checked_sub(1).map(|units| units * 4096)
}

/// One channel's compute object.
#[derive(Debug)]
pub struct ComputeEngine {
    silicon: &'static Silicon,
    qmd_va: Option<u64>,
    /// Whether launches stall on faults (the context takes replayable faults).
    pub replayable: bool,
    pending: Option<Pending>,
    stalled: Vec<ptx::StalledAccess>,
    /// Times a launch stalled on faults, and resumed after a replay.
    pub stalls: u64,
    pub resumptions: u64,
    /// The context's memory configuration.
    pub memory: MemoryConfig,
    modules: Vec<(u64, String, Module)>,
    pub limits: Limits,
    pub launches: u64,
    pub last: Option<ComputeLaunch>,
}

impl ComputeEngine {
    pub fn new(family: Family) -> Self {
        ComputeEngine {
            silicon: silicon::of(family),
            qmd_va: None,
            replayable: false,
            pending: None,
            stalled: Vec::new(),
            stalls: 0,
            resumptions: 0,
            memory: MemoryConfig::default(),
            modules: Vec::new(),
            limits: Limits::default(),
            launches: 0,
            last: None,
        }
    }

    /// Whether a launch is stalled on replayable faults.
    pub fn is_stalled(&self) -> bool {
        self.pending.is_some()
    }

    /// The accesses the stalled launch waits on, one per stalled thread.
    pub fn stalled(&self) -> &[ptx::StalledAccess] {
        if self.pending.is_some() {
            &self.stalled
        } else {
            &[]
        }
    }

    /// Cancels the stalled accesses of the types `covers` accepts to the 4 KiB page holding
    /// `va`; whether there were any.
    pub fn cancel_va(&mut self, va: u64, covers: &dyn Fn(crate::engine_mem::AccessType) -> bool) -> bool {
        self.pending.as_mut().is_some_and(|p| p.state.cancel(va, 4096, covers))
    }

    /// One method; `Some` when it launched a grid.
    pub fn method(
        &mut self,
        method: u32,
        value: u32,
        vm: &mut dyn VirtualMemory,
    ) -> Result<Option<ComputeLaunch>, ComputeError> {
        match method {
            NVC6C0_SEND_PCAS_A => {
                self.qmd_va = Some(u64::from(value) << 8);
                Ok(None)
            }
            NVC6C0_SET_SHADER_LOCAL_MEMORY_A => {
                let bits = self.silicon.local_memory_upper_bits;
                self.memory.local_memory_a = Some(value & ((1 << bits) - 1));
                Ok(None)
            }
            NVC6C0_SET_SHADER_LOCAL_MEMORY_B => {
                self.memory.local_memory_b = Some(value);
                Ok(None)
            }
            NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A => {
                let bits = NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER.width();
                self.memory.non_throttled_a = Some(value & ((1 << bits) - 1));
                Ok(None)
            }
            NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B => {
                self.memory.non_throttled_b = Some(value);
                Ok(None)
            }
            NVC6C0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C => {
                self.memory.non_throttled_c = Some(value);
                Ok(None)
            }
            NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A => {
                let bits = NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER.width();
                self.memory.local_window_a = Some(value & ((1 << bits) - 1));
                Ok(None)
            }
            NVC6C0_SET_SHADER_LOCAL_MEMORY_WINDOW_B => {
                self.memory.local_window_b = Some(value);
                Ok(None)
            }
            NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A => {
                let bits = NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER.width();
                self.memory.shared_window_a = Some(value & ((1 << bits) - 1));
                Ok(None)
            }
            NVC6C0_SET_SHADER_SHARED_MEMORY_WINDOW_B => {
                self.memory.shared_window_b = Some(value);
                Ok(None)
            }
            NVC5C0_SEND_SIGNALING_PCAS_B if self.silicon.launch_method == LaunchMethod::PcasB => {
                if value & NVC5C0_PCAS_B_INVALIDATE_AND_SCHEDULE != NVC5C0_PCAS_B_INVALIDATE_AND_SCHEDULE {
                    return Err(ComputeError::UnsupportedAction(value));
                }
                let qmd_va = self.qmd_va.ok_or(ComputeError::NoQmd)?;
                self.launch_or_resume(qmd_va, vm)
            }
            NVC6C0_SEND_SIGNALING_PCAS2_B if self.silicon.launch_method == LaunchMethod::Pcas2B => {
                let action = value & 0xf;
                if action != NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE {
                    return Err(ComputeError::UnsupportedAction(action));
                }
                let qmd_va = self.qmd_va.ok_or(ComputeError::NoQmd)?;
                self.launch_or_resume(qmd_va, vm)
            }
            _ => Err(ComputeError::UnknownMethod { method, value }),
        }
    }

    /// The launch method: a new launch, or the stalled one resumed (the host issues the stalled
    /// method again after a replay). `Ok(None)` while stalled.
    fn launch_or_resume(
        &mut self,
        qmd_va: u64,
        vm: &mut dyn VirtualMemory,
    ) -> Result<Option<ComputeLaunch>, ComputeError> {
        let finished = match self.pending.take() {
            Some(pending) => {
                self.resumptions += 1;
                self.run_pending(pending, vm)?
            }
            None => match self.launch(qmd_va, vm)? {
                Started::Completed(launch) => Some(launch),
                Started::Resumable(pending) => self.run_pending(pending, vm)?,
            },
        };
        if let Some(launch) = finished {
            self.launches += 1;
            self.last = Some(launch);
        }
        Ok(finished)
    }

    /// Runs a resumable launch until it completes (`Some`) or stalls (`None`, kept pending).
    fn run_pending(
        &mut self,
        mut pending: Pending,
        vm: &mut dyn VirtualMemory,
    ) -> Result<Option<ComputeLaunch>, ComputeError> {
        let module = &self.modules[pending.module].2;
        match pending.state.run(module, vm).map_err(ptx_error)? {
            ptx::RunOutcome::Completed(stats) => {
                if let Some((address, payload)) = pending.release {
                    vm.write(address, &payload.to_le_bytes())?;
                }
                self.stalled.clear();
                Ok(Some(ComputeLaunch { instructions: stats.instructions, ctas: stats.ctas, threads: stats.threads }))
            }
            ptx::RunOutcome::Stalled { faults } => {
                self.stalls += 1;
                self.stalled = faults;
                self.pending = Some(pending);
                Ok(None)
            }
        }
    }

    fn launch(&mut self, qmd_va: u64, vm: &mut dyn VirtualMemory) -> Result<Started, ComputeError> {
        use Semantic::*;
        let layout = &self.silicon.qmd;
        let windows = self.memory.windows()?;
        if !windows.disjoint() {
            return Err(ComputeError::OverlappingWindows { shared: windows.shared, local: windows.local });
        }
        let local_buffer = self.memory.local_memory()?;
        let bytes_per_tpc = self.memory.bytes_per_tpc()?;
        let max_sm_count = self.memory.max_sm_count()?;
        let model_sms = MODEL_TPCS * SMS_PER_TPC;
        if max_sm_count < model_sms {
            return Err(ComputeError::LocalMemoryTooSmall {
                what: "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT (SMs)",
                have: max_sm_count.into(),
                need: model_sms.into(),
            });
        }
        // The buffer must be mapped over every TPC's share: its last byte reads.
        let buffer_bytes = bytes_per_tpc * u64::from(MODEL_TPCS);
        if buffer_bytes == 0 {
            return Err(ComputeError::LocalMemoryTooSmall { what: "local memory per TPC", have: 0, need: 1 });
        }
        vm.read(local_buffer, &mut [0u8])?;
        vm.read(local_buffer + buffer_bytes - 1, &mut [0u8])?;
        let mut raw = [0u8; QMD_BYTES];
        vm.read(qmd_va, &mut raw)?;
        let words: Vec<u32> = raw.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let q = QmdReader { layout, words: &words };
        let major = q.get(QmdMajorVersion)?;
        if major != u64::from(layout.major) {
            return Err(ComputeError::BadLaunch(format!(
                "QMD major version {major}: this compute class reads version {}",
                layout.major
            )));
        }
        let program = q.address(ProgramAddressLower, ProgramAddressUpper)?;
        let grid = [q.get(GridWidth)?, q.get(GridHeight)?, q.get(GridDepth)?];
        let block = [q.get(BlockDim0)?, q.get(BlockDim1)?, q.get(BlockDim2)?];
        let shared = q.get(SharedMemorySize)?;
        let threads = grid.iter().chain(&block).fold(1u128, |n, d| n * u128::from(*d));
        if threads > u128::from(MAX_LAUNCH_THREADS) {
            return Err(ComputeError::BadLaunch(format!(
                "a grid of {threads} threads is more than the model runs in one launch ({MAX_LAUNCH_THREADS})"
            )));
        }
        if q.get(ConstantBufferValid)? != 1 {
            return Err(ComputeError::BadLaunch("constant bank 0 is not valid".into()));
        }
        let const0 = q.address(ConstantBufferAddrLower, ConstantBufferAddrUpper)?;
        let const0_size = q.get(ConstantBufferSize)?;
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
        let kernel =
            module.kernel(entry).ok_or_else(|| ComputeError::Ptx(format!("no entry {entry} in the module")))?;
        let mut bank = vec![0u8; const0_size as usize];
        vm.read(const0, &mut bank)?;
        let at = self.silicon.param_cbank_offset as usize;
        let size = kernel.param_size() as usize;
        let params = bank
            .get(at..at + size)
            .ok_or_else(|| ComputeError::BadLaunch(format!("{size} bytes of parameters do not fit constant bank 0")))?
            .to_vec();
        self.check_memory(&q, kernel, shared, bytes_per_tpc)?;
        let static_shared = u64::from(kernel.static_shared());
        let dynamic_shared = shared.saturating_sub(static_shared) as u32;
        let grid = grid.map(|v| v as u32);
        let block = block.map(|v| v as u32);
        let cfg = LaunchConfig { grid, block, dynamic_shared, const_bank: None, globals: &[], windows };
        let release = if q.has(Release0Enable) && q.get(Release0Enable)? == 1 {
            let address = q.address(Release0AddrLower, Release0AddrUpper)?;
            Some((address, q.get(Release0PayloadLower)? as u32))
        } else {
            None
        };
        if self.replayable {
            let state = ptx::start_launch(module, entry, &cfg, &params, &self.limits).map_err(ptx_error)?;
            return Ok(Started::Resumable(Pending { module: index, state, release }));
        }
        let stats = ptx::launch(module, entry, &cfg, &params, vm, &self.limits).map_err(ptx_error)?;
        if let Some((address, payload)) = release {
            vm.write(address, &payload.to_le_bytes())?;
        }
        Ok(Started::Completed(ComputeLaunch {
            instructions: stats.instructions,
            ctas: stats.ctas,
            threads: stats.threads,
        }))
    }
}

/// A launch as it started (one at a time: its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Started {
    Completed(ComputeLaunch),
    Resumable(Pending),
}

fn ptx_error(e: ptx::PtxError) -> ComputeError {
    match e {
        ptx::PtxError::Exec { error: ptx::ExecError::Fault(fault), .. } => ComputeError::Fault(fault),
        other => ComputeError::Ptx(format!("{other}")),
    }
}

impl ComputeEngine {
    /// The QMD's local-memory size and shared-memory configuration against the kernel.
    fn check_memory(
        &self,
        q: &QmdReader<'_>,
        kernel: &ptx::Kernel,
        shared: u64,
        bytes_per_tpc: u64,
    ) -> Result<(), ComputeError> {
        use Semantic::*;
        let silicon = self.silicon;
        let local = q.get(ShaderLocalMemoryLowSize)?;
        let needed = u64::from(kernel.local_size);
        if local < needed {
            return Err(ComputeError::LocalMemoryTooSmall {
                what: "QMD SHADER_LOCAL_MEMORY_LOW_SIZE",
                have: local,
                need: needed,
            });
        }
        let per_tpc = local.next_multiple_of(16)
            * u64::from(WARP_THREADS)
            * u64::from(silicon.max_warps_per_sm)
            * u64::from(SMS_PER_TPC);
        if per_tpc > bytes_per_tpc {
            return Err(ComputeError::LocalMemoryTooSmall {
                what: "local memory per TPC",
                have: bytes_per_tpc,
                need: per_tpc,
            });
        }
        if shared > silicon.max_shared_per_cta() {
            return Err(ComputeError::SharedConfig {
                shared,
                min_config: 0,
                target_config: 0,
                max_config: 0,
                why: "more than a CTA of this family may use",
            });
        }
        // Turing's configuration fields are not declared; its QMDs leave them to the default.
        if !q.has(MinSmConfigSharedMemSize) {
            return Ok(());
        }
        let (min, target, max) =
            (q.get(MinSmConfigSharedMemSize)?, q.get(TargetSmConfigSharedMemSize)?, q.get(MaxSmConfigSharedMemSize)?);
        let refuse =
            |why| ComputeError::SharedConfig { shared, min_config: min, target_config: target, max_config: max, why };
        let (Some(min_bytes), Some(_), Some(max_bytes)) =
            (sm_config_bytes(min), sm_config_bytes(target), sm_config_bytes(max))
        else {
            return Err(refuse("a configuration is 0 (unset)"));
        };
        if !(min <= target && target <= max) {
            return Err(refuse("not min <= target <= max"));
        }
        if max_bytes > silicon.max_shared_per_sm() {
            return Err(refuse("max exceeds the family's SM shared memory"));
        }
        if min_bytes < shared + silicon.shared_reserved_per_cta {
            return Err(refuse("the minimum configuration does not hold the CTA's shared memory and reserve"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine_mem::FlatMemory;
    use nvgpu::compute::launch::{const_bank0, model_code_image, qmd, CONST0_BYTES};
    use nvgpu::compute::memory::{push_memory_config, sm_shared_config, LocalMemoryPlan, LOCAL_WINDOW_VA};
    use nvgpu::compute::qmd::Launch;
    use nvgpu::host::{decode, HostClass, PushBuffer};

    const BASE: u64 = 0x1_0000_0000;
    const QMD_AT: u64 = BASE;
    const BANK_AT: u64 = BASE + 0x1000;
    const CODE_AT: u64 = BASE + 0x4000;
    const OUT_AT: u64 = BASE + 0x8000;
    const LOCAL_AT: u64 = BASE + 0x10_0000;

    /// A kernel with a 64-byte `.local` array reached through its generic address.
    const PTX: &str = ".version 7.8\n.target sm_86\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n\
        .local .align 4 .b8 buf[64];\n.reg .b64 %rd<4>;\n.reg .b32 %r<3>;\n\
        ld.param.u64 %rd1, [out];\nmov.u64 %rd2, buf;\ncvta.local.u64 %rd3, %rd2;\n\
        mov.u32 %r1, 42;\nst.u32 [%rd3+8], %r1;\nld.u32 %r2, [%rd3+8];\n\
        st.global.u32 [%rd1], %r2;\nst.global.u64 [%rd1+8], %rd3;\nret;\n}\n";

    fn memory(plan: &LocalMemoryPlan) -> FlatMemory {
        let mut mem = FlatMemory::new(BASE, (LOCAL_AT - BASE + plan.total_bytes) as usize);
        let bank = const_bank0(Family::Ga10x, &OUT_AT.to_le_bytes()).unwrap();
        mem.write(BANK_AT, &bank).unwrap();
        mem.write(CODE_AT, &model_code_image("k", PTX)).unwrap();
        mem
    }

    fn configure(engine: &mut ComputeEngine, plan: &LocalMemoryPlan, mem: &mut FlatMemory) {
        let mut pb = PushBuffer::with_storage(Vec::new(), HostClass::AmpereA);
        push_memory_config(&mut pb, Family::Ga10x, 1, LOCAL_AT, plan).unwrap();
        for m in decode(pb.words()) {
            let m = m.unwrap();
            for (i, &v) in m.data.iter().enumerate() {
                assert_eq!(engine.method(m.method + 4 * i as u32, v, mem), Ok(None));
            }
        }
    }

    fn launch(
        engine: &mut ComputeEngine,
        mem: &mut FlatMemory,
        edit: impl FnOnce(&mut Launch),
    ) -> Result<Option<ComputeLaunch>, ComputeError> {
        launch_qmd_of(Family::Ga10x, engine, mem, edit)
    }

    /// A launch whose QMD the driver built for `family`.
    fn launch_qmd_of(
        family: Family,
        engine: &mut ComputeEngine,
        mem: &mut FlatMemory,
        edit: impl FnOnce(&mut Launch),
    ) -> Result<Option<ComputeLaunch>, ComputeError> {
        let mut l = Launch {
            program_address: CODE_AT,
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared_memory: 0,
            registers: 32,
            barriers: 1,
            const0: (BANK_AT, CONST0_BYTES),
            release: None,
            local_bytes_per_thread: 64,
            sm_config: Some(sm_shared_config(family, 0).unwrap()),
        };
        edit(&mut l);
        let words: Vec<u8> = qmd(family, &l).unwrap().words().iter().flat_map(|w| w.to_le_bytes()).collect();
        mem.write(QMD_AT, &words).unwrap();
        engine.method(NVC6C0_SEND_PCAS_A, (QMD_AT >> 8) as u32, mem)?;
        engine.method(
            NVC6C0_SEND_SIGNALING_PCAS2_B,
            NVC6C0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE,
            mem,
        )
    }

    #[test]
    fn compute_launches_need_the_memory_configuration_and_use_its_windows() {
        let plan = LocalMemoryPlan::new(64, MODEL_TPCS, model_max_warps_per_sm(Family::Ga10x)).unwrap();
        let mut mem = memory(&plan);
        let mut engine = ComputeEngine::new(Family::Ga10x);
        assert!(matches!(launch(&mut engine, &mut mem, |_| {}), Err(ComputeError::NotConfigured { .. })));
        assert!(matches!(engine.method(0x7b8, 0, &mut mem), Err(ComputeError::UnknownMethod { method: 0x7b8, .. })));
        configure(&mut engine, &plan, &mut mem);
        assert_eq!(engine.memory.local_memory(), Ok(LOCAL_AT));
        assert_eq!(engine.memory.bytes_per_tpc(), Ok(plan.bytes_per_tpc));
        assert_eq!(engine.memory.windows().map(|w| w.local), Ok(LOCAL_WINDOW_VA));

        assert!(launch(&mut engine, &mut mem, |_| {}).unwrap().is_some());
        let mut out = [0u8; 16];
        mem.read(OUT_AT, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out[..4].try_into().unwrap()), 42);
        let generic = u64::from_le_bytes(out[8..].try_into().unwrap());
        assert!(
            (LOCAL_WINDOW_VA..LOCAL_WINDOW_VA + MODEL_WINDOW_BYTES).contains(&generic),
            "{generic:#x} is in the driver's window"
        );
    }

    #[test]
    fn qmds_whose_memory_does_not_admit_the_kernel_are_refused() {
        let plan = LocalMemoryPlan::new(64, MODEL_TPCS, model_max_warps_per_sm(Family::Ga10x)).unwrap();
        let mut mem = memory(&plan);
        let mut engine = ComputeEngine::new(Family::Ga10x);
        configure(&mut engine, &plan, &mut mem);
        // Less local memory per thread than the kernel's 64-byte array.
        let r = launch(&mut engine, &mut mem, |l| l.local_bytes_per_thread = 48);
        assert!(matches!(r, Err(ComputeError::LocalMemoryTooSmall { have: 48, need: 64, .. })), "{r:?}");
        // More per thread than the buffer was sized for.
        let r = launch(&mut engine, &mut mem, |l| l.local_bytes_per_thread = 128);
        assert!(matches!(r, Err(ComputeError::LocalMemoryTooSmall { what: "local memory per TPC", .. })), "{r:?}");
        // 48 KiB of shared memory with the 8 KiB configuration as minimum and target.
        let r = launch(&mut engine, &mut mem, |l| {
            l.shared_memory = 48 << 10;
            l.sm_config = Some(sm_shared_config(Family::Ga10x, 0).unwrap());
        });
        assert!(matches!(r, Err(ComputeError::SharedConfig { shared: 49152, min_config: 3, .. })), "{r:?}");
        // No configuration at all.
        let r = launch(&mut engine, &mut mem, |l| l.sm_config = None);
        assert!(matches!(r, Err(ComputeError::SharedConfig { min_config: 0, .. })), "{r:?}");
        // The right configuration for 48 KiB runs.
        let r = launch(&mut engine, &mut mem, |l| {
            l.shared_memory = 48 << 10;
            l.sm_config = Some(sm_shared_config(Family::Ga10x, 48 << 10).unwrap());
        });
        assert!(matches!(r, Ok(Some(_))), "{r:?}");
    }

    #[test]
    fn a_grid_beyond_the_models_launch_limit_is_refused_before_it_runs() {
        let plan = LocalMemoryPlan::new(64, MODEL_TPCS, model_max_warps_per_sm(Family::Ga10x)).unwrap();
        let mut mem = memory(&plan);
        let mut engine = ComputeEngine::new(Family::Ga10x);
        configure(&mut engine, &plan, &mut mem);
        // 2^31 - 1 blocks of 32 threads: hardware would run them, the model refuses at once.
        let r = launch(&mut engine, &mut mem, |l| l.grid = [0x7fff_ffff, 1, 1]);
        assert!(matches!(&r, Err(ComputeError::BadLaunch(why)) if why.contains("more than the model runs")), "{r:?}");
        assert!(launch(&mut engine, &mut mem, |_| {}).unwrap().is_some());
    }

    /// The model's reader and the driver's encoder are separate code; a QMD the driver builds
    /// for each family reads back field by field, addresses with their upper bits included.
    #[test]
    fn the_models_qmd_reader_reads_what_the_driver_writes_on_every_family() {
        use Semantic::*;
        for s in silicon::ALL {
            let l = Launch {
                program_address: 0x1_2345_6700,
                grid: [7, 3, 2],
                block: [96, 2, 1],
                shared_memory: 4096,
                registers: 40,
                barriers: 1,
                const0: (0x7_0000_1000, CONST0_BYTES),
                release: s.qmd.field(Release0Enable).map(|_| (0x3_0000_0040, 0x55)),
                local_bytes_per_thread: 48,
                sm_config: s.qmd_has_sm_config().then(|| sm_shared_config(s.family, 4096).unwrap()),
            };
            let words = qmd(s.family, &l).unwrap().words().to_vec();
            let q = QmdReader { layout: &s.qmd, words: &words };
            let f = s.family;
            assert_eq!(q.get(QmdMajorVersion).unwrap(), u64::from(s.qmd.major), "{f:?}");
            assert_eq!(q.address(ProgramAddressLower, ProgramAddressUpper).unwrap(), l.program_address, "{f:?}");
            assert_eq!([q.get(GridWidth), q.get(GridHeight), q.get(GridDepth)], [Ok(7), Ok(3), Ok(2)], "{f:?}");
            assert_eq!([q.get(BlockDim0), q.get(BlockDim1), q.get(BlockDim2)], [Ok(96), Ok(2), Ok(1)], "{f:?}");
            assert_eq!(q.get(SharedMemorySize), Ok(4096), "{f:?}");
            assert_eq!(q.address(ConstantBufferAddrLower, ConstantBufferAddrUpper), Ok(l.const0.0), "{f:?}");
            assert_eq!(q.get(ConstantBufferSize), Ok(CONST0_BYTES), "{f:?}");
            assert_eq!(q.get(ShaderLocalMemoryLowSize), Ok(48), "{f:?}");
            if q.has(Release0Enable) {
                assert_eq!(q.get(Release0Enable), Ok(1), "{f:?}");
                assert_eq!(q.address(Release0AddrLower, Release0AddrUpper), Ok(0x3_0000_0040), "{f:?}");
            }
            if s.qmd_has_sm_config() {
                let min = sm_config_bytes(q.get(MinSmConfigSharedMemSize).unwrap()).unwrap();
                assert!(min >= 4096 + s.shared_reserved_per_cta, "{f:?}");
                assert_eq!(sm_config_bytes(q.get(MaxSmConfigSharedMemSize).unwrap()), Some(s.max_shared_per_sm()));
            }
        }
    }

    #[test]
    fn a_qmd_of_another_version_is_refused() {
        let plan = LocalMemoryPlan::new(64, MODEL_TPCS, model_max_warps_per_sm(Family::Ga10x)).unwrap();
        let mut mem = memory(&plan);
        let mut engine = ComputeEngine::new(Family::Ga10x);
        configure(&mut engine, &plan, &mut mem);
        // A Hopper QMD (V04_00) sent to an Ampere compute class (V03_00).
        let r = launch_qmd_of(Family::Hopper, &mut engine, &mut mem, |_| {});
        assert!(matches!(&r, Err(ComputeError::BadLaunch(why)) if why.contains("major version")), "{r:?}");
    }

    #[test]
    fn sm_config_values_count_4k_units_plus_one() {
        assert_eq!(sm_config_bytes(0), None);
        assert_eq!(sm_config_bytes(1), Some(0));
        assert_eq!(sm_config_bytes(0x1a), Some(100 << 10));
    }
}
