//! The compute engine's PTX interpreter: parses the PTX text clang-19 emits for sm_80..sm_90
//! (PTX ISA 7.8/8.0, NVIDIA "Parallel Thread Execution ISA" document) once into a compact
//! instruction list ([`inst`]), then runs kernels over a grid of CTAs.
//!
//! # Execution model
//! CTAs run one after another. Inside a CTA, threads are grouped in warps of 32 (by linear
//! thread id, x fastest). The scheduler runs each ready thread of a warp alone until it *stops*:
//! at a barrier (`bar.sync`), at a warp-collective instruction (`shfl.sync`, `vote.sync`,
//! `activemask`), or at `ret`/`exit`. When every thread of the warp has stopped, the threads
//! stopped at the same collective instruction (same instruction index) execute it together as
//! one converged group, then run on. So shuffles and votes see a warp in lock-step even though
//! ordinary instructions run a thread at a time. A `shfl`/`vote` whose member mask names a lane
//! that exists, has not exited and did not arrive is a [`ExecError::WarpDivergence`].
//!
//! A barrier releases when its expected count of threads has arrived: the `count` operand, or
//! (no operand) every thread of the CTA that has not exited: exited threads count as arrived,
//! as on Volta and later hardware. When every live thread is blocked and no barrier can
//! release, the launch fails with [`ExecError::BarrierDeadlock`] instead of hanging.
//!
//! # Replayable faults
//! [`start_launch`] gives a [`LaunchState`] whose [`LaunchState::run`] treats MMU faults as a
//! GPU with replayable faults does: a global access that faults has no effect (no register
//! written, no byte stored, no atomic applied) and its thread stalls at it, while the other
//! threads run on until they exit, wait at a barrier or stall too (a warp with a stalled lane
//! holds its collectives; a barrier held back by stalled threads stalls the CTA, it is not a
//! deadlock). `run` then answers [`RunOutcome::Stalled`], one [`StalledAccess`] per stalled
//! thread; the next `run` replays those accesses and goes on. CTAs still run one at a time and
//! in order, so completed CTAs never run again and later ones wait. [`LaunchState::cancel`]
//! kills the launch as a fault CANCEL does. [`launch`] keeps the simple behaviour: the first
//! fault ends the launch with [`ExecError::Fault`].
//!
//! Memory effects are immediately visible to every thread (the model runs one thread at a
//! time), so `membar`/`fence` have no work to do and decode to [`inst::Op::Nop`].
//!
//! # Address spaces
//! Global memory goes through [`crate::engine_mem::VirtualMemory`]; an MMU fault stops the
//! launch with the fault and the instruction's line (or, resumable, stalls the thread: see
//! above). A global store asks [`crate::engine_mem::VirtualMemory::probe_write`] before writing,
//! so a faulting store writes nothing. Shared memory is per CTA (static `.shared`
//! declarations first, then the launch's dynamic bytes, which `.extern .shared` arrays name);
//! local memory is per thread; `.param` is the launch's argument buffer laid out by
//! [`Kernel::params`]; `.const` is the launch's constant bank (by default the module's own
//! `.const` image, [`Module::const_image`]).
//!
//! Generic addresses use windows, like the hardware's shared and local windows (whose bases
//! the driver sets with `SET_SHADER_SHARED_MEMORY_WINDOW_A/B` and
//! `SET_SHADER_LOCAL_MEMORY_WINDOW_A/B`): a generic address in `[shared, shared + size)` of the
//! launch's [`Windows`] is shared memory offset `addr - shared`, likewise `local`; a generic
//! address in [`CONST_WINDOW`]'s range is the constant bank; every other generic address is
//! global. [`Windows::default`] puts the windows above any GPU VA (49 bits on Ampere, 57 on
//! Hopper), so no global address is shadowed; the compute engine ([`crate::compute`]) uses the
//! windows the driver set instead. Local memory itself stays in the interpreter (per thread,
//! sized by the kernel's declarations), not in the driver's local-memory buffer.
//!
//! # Floating point
//! `add`/`sub`/`mul`/`fma`/`div`/`sqrt`/`rcp` with `.rn` are correctly rounded (IEEE 754), and
//! with `.rz`/`.rm`/`.rp` too (the exact error of the round-to-nearest result, from an FMA,
//! picks the neighbour). `.approx`/`.full` forms are computed correctly rounded or with libm
//! (`sin`, `cos`, `ex2`, `lg2`: within 1 ulp in f32), inside the ISA's bounds (e.g. `sin.approx`
//! max absolute error 2^-20.9 in -pi..pi, `ex2.approx` 2 ulp, `div.approx` 2 ulp). `.ftz`
//! flushes f32 subnormal inputs and results to signed zero. NaN results are the canonical NaN
//! `0x7fffffff` (f32) as PTX specifies.
//!
//! # Calls
//! Each kernel is linked with every `.func` it reaches: the callee's instructions follow the
//! kernel's, with their own registers in the same flat register file, and the `.param`
//! variables of functions and call sites are slots in the thread's local memory, so `call`
//! copies the arguments into the callee's slots and `ret` copies the return value back. Frames
//! are static (one per function), so a recursive call is refused at run time
//! ([`ExecError::RecursiveCall`]).
//!
//! # Integer corner cases
//! Division by zero (undefined in PTX) gives all ones for the quotient and the dividend for the
//! remainder; `INT_MIN / -1` wraps. Shifts by the width or more give 0 (or the sign for `shr.s`).
//!
//! # Not supported (a typed parse error names the instruction and line)
//! Calls through function pointers, f16/bf16 arithmetic and conversions, textures and surfaces,
//! `mma`/`wmma`, `cp.async`, `ldmatrix`, `atom`/`red` on 16-bit types or vectors, `bar.arrive`/
//! `bar.red`, `match.sync`, `redux.sync`, `addc`/`subc`, `mul24`/`mad24`, `sad`, `testp`,
//! `tanh`, `trap`, `prmt` modes other than the default, `fma` with `.rz/.rm/.rp`.

pub mod exec;
pub mod float;
pub mod inst;
pub mod parse;

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::engine_mem::MmuFault;

pub use exec::{launch, start_launch, LaunchState, RunOutcome, StalledAccess};

/// Generic-address window of shared memory (see the module docs).
pub const SHARED_WINDOW: u64 = 0xFFFF_FE00_0000_0000;
/// Generic-address window of local memory.
pub const LOCAL_WINDOW: u64 = 0xFFFF_FF00_0000_0000;
/// Generic-address window of the constant bank.
pub const CONST_WINDOW: u64 = 0xFFFF_FD00_0000_0000;
/// Size of each window.
pub const WINDOW_SIZE: u64 = 1 << 32;

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;
/// Most threads in a CTA (every architecture since Fermi).
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// A parsed PTX module.
#[derive(Clone, Debug)]
pub struct Module {
    pub version: (u32, u32),
    pub target: String,
    pub address_size: u32,
    pub(crate) kernels: Vec<Kernel>,
    pub(crate) globals: Vec<GlobalVar>,
    pub(crate) const_image: Vec<u8>,
}

/// One kernel (`.entry`), decoded.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub(crate) params: Vec<Param>,
    pub(crate) param_size: u32,
    pub(crate) num_regs: u32,
    pub(crate) code: Vec<inst::Inst>,
    /// Per instruction: source line and opcode text, for errors only.
    pub(crate) lines: Vec<u32>,
    pub(crate) opcodes: Vec<String>,
    pub(crate) call_sites: Vec<CallSite>,
    pub(crate) static_shared: u32,
    pub(crate) local_size: u32,
}

/// A resolved `call`: the callee's first instruction, the argument copies (caller slot, callee
/// slot, bytes) and the return-value copy (callee slot, caller slot, bytes), all in the
/// thread's local memory. Each `.func` has one frame per thread, so recursion is refused at run
/// time ([`ExecError::RecursiveCall`]).
#[derive(Clone, Debug)]
pub(crate) struct CallSite {
    pub target: u32,
    pub callee: u32,
    pub copies: Vec<(u32, u32, u32)>,
    pub ret: Option<(u32, u32, u32)>,
}

/// A kernel parameter as the driver must lay it out in the parameter buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub offset: u32,
}

/// A module-scope `.global` variable: the driver allocates `size` bytes at `align`, writes
/// `init` (zeros when shorter), and passes the address in [`LaunchConfig::globals`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalVar {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub init: Vec<u8>,
}

impl Module {
    /// Parses PTX text. Errors name the line and the offending instruction or directive.
    pub fn parse(text: &str) -> Result<Module, PtxError> {
        parse::parse_module(text)
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    pub fn globals(&self) -> &[GlobalVar] {
        &self.globals
    }

    /// The `.const` variables with their initialisers, at the offsets the code uses.
    pub fn const_image(&self) -> &[u8] {
        &self.const_image
    }
}

impl Kernel {
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// Bytes of the parameter buffer.
    pub fn param_size(&self) -> u32 {
        self.param_size
    }

    /// Bytes of statically declared shared memory.
    pub fn static_shared(&self) -> u32 {
        self.static_shared
    }

    /// Decoded instructions.
    pub fn instruction_count(&self) -> usize {
        self.code.len()
    }

    /// Lays arguments out in a parameter buffer: each `args[i]` (little-endian bytes, at most the
    /// parameter's size) goes to parameter `i`'s offset.
    pub fn pack_params(&self, args: &[&[u8]]) -> Result<Vec<u8>, LaunchError> {
        if args.len() != self.params.len() {
            return Err(LaunchError::ParamCount { expected: self.params.len(), given: args.len() });
        }
        let mut buf = alloc::vec![0u8; self.param_size as usize];
        for (p, a) in self.params.iter().zip(args) {
            if a.len() > p.size as usize {
                return Err(LaunchError::ParamTooLarge { name: p.name.clone(), size: p.size, given: a.len() });
            }
            let at = p.offset as usize;
            buf[at..at + a.len()].copy_from_slice(a);
        }
        Ok(buf)
    }
}

/// Where generic addresses see shared and local memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    pub shared: u64,
    pub local: u64,
    /// Bytes each window spans.
    pub size: u64,
}

impl Default for Windows {
    fn default() -> Self {
        Windows { shared: SHARED_WINDOW, local: LOCAL_WINDOW, size: WINDOW_SIZE }
    }
}

impl Windows {
    /// Whether the two windows and [`CONST_WINDOW`]'s range are disjoint and none wraps.
    pub fn disjoint(&self) -> bool {
        let ranges = [(self.shared, self.size), (self.local, self.size), (CONST_WINDOW, WINDOW_SIZE)];
        ranges.iter().all(|(a, n)| a.checked_add(*n).is_some())
            && ranges
                .iter()
                .enumerate()
                .all(|(i, (a, n))| ranges.iter().skip(i + 1).all(|(b, m)| a + n <= *b || b + m <= *a))
    }
}

/// Grid and block shape of a launch, and what the launch binds.
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'a> {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory (after the static declarations).
    pub dynamic_shared: u32,
    /// The constant bank; `None` uses [`Module::const_image`].
    pub const_bank: Option<&'a [u8]>,
    /// Addresses of the module's `.global` variables, by name.
    pub globals: &'a [(&'a str, u64)],
    /// Generic-address windows of shared and local memory.
    pub windows: Windows,
}

impl LaunchConfig<'static> {
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> Self {
        LaunchConfig { grid, block, dynamic_shared: 0, const_bank: None, globals: &[], windows: Windows::default() }
    }

    /// A 1-D launch.
    pub fn linear(blocks: u32, threads: u32) -> Self {
        Self::new([blocks, 1, 1], [threads, 1, 1])
    }
}

/// Bounds on one launch.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Instructions (all threads together) before the launch fails with
    /// [`ExecError::BudgetExhausted`].
    pub instruction_budget: u64,
    /// Bytes the model may allocate for one CTA (registers, local and shared memory) before
    /// the launch fails with [`LaunchError::TooMuchMemory`]: PTX declares register and array
    /// sizes, and the model's heap is finite.
    pub cta_memory_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { instruction_budget: 1 << 32, cta_memory_bytes: 256 << 20 }
    }
}

/// What a launch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchStats {
    /// Instructions executed (guarded-off ones included), all threads together.
    pub instructions: u64,
    pub ctas: u64,
    pub threads: u64,
}

/// Why a parse failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// An opcode the ISA does not have (or this parser does not know).
    UnknownInstruction(String),
    /// A real PTX instruction or form the interpreter does not implement.
    Unsupported(String),
    /// A directive that is malformed or unknown.
    BadDirective(String),
    /// An operand that does not parse, or the wrong number of operands.
    BadOperand {
        instruction: String,
        operand: String,
    },
    UndefinedRegister {
        instruction: String,
        register: String,
    },
    UndefinedLabel {
        instruction: String,
        label: String,
    },
    UndefinedSymbol {
        instruction: String,
        symbol: String,
    },
    DuplicateLabel(String),
    /// The text ends inside a statement or function body.
    Truncated(String),
    /// Nothing in the module (no `.version`).
    MissingVersion,
    UnsupportedVersion(String),
}

/// Why a launch could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaunchError {
    NoSuchKernel(String),
    BadShape {
        grid: [u32; 3],
        block: [u32; 3],
    },
    ParamBufferTooSmall {
        needed: u32,
        given: usize,
    },
    ParamCount {
        expected: usize,
        given: usize,
    },
    ParamTooLarge {
        name: String,
        size: u32,
        given: usize,
    },
    UnboundGlobal(String),
    /// Registers, local and shared memory of one CTA would need `needed` bytes.
    TooMuchMemory {
        needed: u64,
        limit: u64,
    },
}

/// Why a running kernel stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    /// Global memory access faulted in the MMU.
    Fault(MmuFault),
    /// A shared/local/param/const access outside its space.
    OutOfRange {
        space: inst::Space,
        addr: u64,
        len: u32,
    },
    /// An access not aligned to its size.
    Misaligned {
        addr: u64,
        len: u32,
    },
    BudgetExhausted {
        executed: u64,
    },
    /// Live threads all wait at barriers that can never release.
    BarrierDeadlock {
        waiting: u32,
        live: u32,
    },
    /// A warp-collective whose mask names a live lane that is elsewhere.
    WarpDivergence {
        lane: u32,
        mask: u32,
    },
    /// An instruction form the interpreter rejects at run time (e.g. an f16 conversion).
    Unsupported,
    /// A `.func` called while it is already active (frames are static, one per function).
    RecursiveCall,
}

/// Everything that can go wrong, with where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxError {
    Parse {
        line: u32,
        error: ParseError,
    },
    Launch(LaunchError),
    /// At `instruction` (opcode text), source `line`, in CTA `cta`, thread `tid`.
    Exec {
        error: ExecError,
        line: u32,
        instruction: String,
        cta: [u32; 3],
        tid: [u32; 3],
    },
}

impl From<LaunchError> for PtxError {
    fn from(e: LaunchError) -> Self {
        PtxError::Launch(e)
    }
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtxError::Parse { line, error } => write!(f, "PTX line {line}: {error:?}"),
            PtxError::Launch(e) => write!(f, "PTX launch: {e:?}"),
            PtxError::Exec { error: ExecError::Fault(fault), line, instruction, cta, tid } => {
                write!(f, "PTX line {line} `{instruction}` (CTA {cta:?}, thread {tid:?}): {fault}")
            }
            PtxError::Exec { error: ExecError::BudgetExhausted { executed }, line, instruction, .. } => {
                write!(f, "instruction budget exhausted after {executed} instructions (at line {line} `{instruction}`)")
            }
            PtxError::Exec { error, line, instruction, cta, tid } => {
                write!(f, "PTX line {line} `{instruction}` (CTA {cta:?}, thread {tid:?}): {error:?}")
            }
        }
    }
}

#[cfg(test)]
mod replay_tests;
#[cfg(test)]
mod tests;
