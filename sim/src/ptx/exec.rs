//! Running a kernel: the grid of CTAs, the warp scheduler of a CTA (see the module docs of
//! [`super`] for the scheme) and the per-thread interpreter loop over pre-decoded instructions.
//! Registers are a flat `u64` array per thread; nothing allocates per instruction.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::float::{self, ftz32, NAN_F32, NAN_F64};
use super::inst::*;
use super::parse::{mask, wide_of};
use super::{
    ExecError, Kernel, LaunchConfig, LaunchError, LaunchStats, Limits, Module, PtxError, Windows, CONST_WINDOW,
    MAX_BLOCK_THREADS, WARP_SIZE, WINDOW_SIZE,
};
use crate::engine_mem::{MmuFault, VirtualMemory};

/// Where a thread stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ready,
    /// Waiting at barrier `id` for `count` threads (`u32::MAX`: every live thread).
    Barrier {
        id: u32,
        count: u32,
    },
    /// At the warp-collective instruction at its `pc`.
    Collective,
    /// Stalled on a replayable MMU fault at the global access at its `pc`, which has had no
    /// effect: a replay runs the instruction again.
    Faulted(MmuFault),
    Exited,
}

/// What a launch binds, shared by every thread.
struct Env<'a> {
    code: &'a [Inst],
    sites: &'a [super::CallSite],
    params: &'a [u8],
    const_bank: &'a [u8],
    globals: &'a [u64],
    mem: &'a mut dyn VirtualMemory,
    ntid: [u32; 3],
    nctaid: [u32; 3],
    ctaid: [u32; 3],
    dynamic_shared: u32,
    total_shared: u32,
    nthreads: u32,
    executed: u64,
    budget: u64,
    windows: Windows,
    /// [`launch`]'s behaviour: the first fault ends the launch at once (no other thread runs on).
    stop_on_fault: bool,
}

/// One CTA's state, reused from CTA to CTA.
struct Cta {
    nregs: usize,
    local_size: usize,
    regs: Vec<u64>,
    local: Vec<u8>,
    shared: Vec<u8>,
    pc: Vec<u32>,
    state: Vec<State>,
    /// Per thread: (return instruction, call site) of each active call.
    stacks: Vec<Vec<(u32, u32)>>,
}

/// Runs `kernel` of `module` over the grid of `cfg`, with the parameter buffer `params` (laid out
/// per [`Kernel::params`]) and global memory `mem`. The first MMU fault ends the launch with
/// [`ExecError::Fault`] at once (no other thread runs on); [`start_launch`] is the form that
/// stalls on faults and resumes after them.
pub fn launch(
    module: &Module,
    kernel: &str,
    cfg: &LaunchConfig,
    params: &[u8],
    mem: &mut dyn VirtualMemory,
    limits: &Limits,
) -> Result<LaunchStats, PtxError> {
    let mut state = prepare(module, kernel, cfg, params, limits, true)?;
    match state.run(module, mem)? {
        RunOutcome::Completed(stats) => Ok(stats),
        // Not reached: with `stop_on_fault` a fault is an error, but answer the same if it were.
        RunOutcome::Stalled { faults } => {
            let s = faults[0];
            Err(PtxError::Exec {
                error: ExecError::Fault(s.fault),
                line: s.line,
                instruction: module.kernels[state.kernel].opcodes.get(s.pc as usize).cloned().unwrap_or_default(),
                cta: s.cta,
                tid: s.tid,
            })
        }
    }
}

/// Prepares a resumable launch of `kernel` (see [`LaunchState`]): checks the shape, the
/// parameter buffer (copied), the bound globals and the CTA's memory as [`launch`] does, and
/// allocates the CTA state. Nothing runs and no memory is touched until [`LaunchState::run`].
pub fn start_launch(
    module: &Module,
    kernel: &str,
    cfg: &LaunchConfig,
    params: &[u8],
    limits: &Limits,
) -> Result<LaunchState, PtxError> {
    prepare(module, kernel, cfg, params, limits, false)
}

/// A launch that stalls on replayable MMU faults and resumes, as a GPU with replayable faults
/// does (the compute engine of unified memory).
///
/// A global `ld`/`st`/`atom`/`red` (any width, vectors too) that faults has no effect: nothing
/// is written (a store is checked with [`VirtualMemory::probe_write`] first), the thread keeps
/// its registers and stays at the instruction, and it is not counted in the instruction total.
/// The other threads of the CTA run on until they too exit, wait at a barrier or stall; a warp
/// with a stalled lane executes no collective (`shfl`/`vote`) until the replay; a barrier that
/// cannot release because threads are stalled stalls the CTA (not a
/// [`ExecError::BarrierDeadlock`]). [`LaunchState::run`] then answers [`RunOutcome::Stalled`]
/// with one [`StalledAccess`] per stalled thread.
///
/// The next `run` is the replay: every stalled thread re-executes its access (one that still
/// faults stalls and is reported again), and the launch goes on. CTAs run in order, one at a
/// time (x fastest, then y, then z): completed CTAs never run again and the CTAs after a
/// stalled one start only once it completes. Shared memory is zeroed when a CTA starts, not on
/// replay. The instruction budget of [`Limits`] covers the whole launch, all runs together.
///
/// [`LaunchState::cancel`] ends the launch as a fault CANCEL does on hardware. Once the launch
/// has completed or failed, `run` answers the same again.
pub struct LaunchState {
    kernel: usize,
    name: String,
    params: Vec<u8>,
    const_bank: Option<Vec<u8>>,
    globals: Vec<u64>,
    ntid: [u32; 3],
    nctaid: [u32; 3],
    dynamic_shared: u32,
    total_shared: u32,
    nthreads: u32,
    windows: Windows,
    budget: u64,
    executed: u64,
    stop_on_fault: bool,
    cta: Cta,
    /// Linear index (x fastest) of the CTA running or next to start.
    next_cta: u64,
    /// Whether `cta` holds the stalled CTA `next_cta` (else that CTA starts afresh).
    in_cta: bool,
    /// A cancel hit the access of this thread of the stalled CTA: the next `run` fails with it.
    cancelled: Option<u32>,
    stats: LaunchStats,
    /// How the launch ended, which `run` answers again.
    ended: Option<Result<LaunchStats, PtxError>>,
}

/// What one [`LaunchState::run`] came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// Every CTA ran to its end; the stats cover the whole launch.
    Completed(LaunchStats),
    /// The running CTA cannot go on until these accesses are replayed: one per stalled thread,
    /// in thread order (several threads may name the same page, as several uTLBs report it).
    Stalled { faults: Vec<StalledAccess> },
}

/// A thread stalled at a global access that faulted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StalledAccess {
    /// The fault as the memory reported it (VA, access type, kind).
    pub fault: MmuFault,
    pub cta: [u32; 3],
    pub tid: [u32; 3],
    /// Linear thread id in the CTA (x fastest), and its warp (`thread / 32`).
    pub thread: u32,
    pub warp: u32,
    /// Index of the faulting instruction and its source line.
    pub pc: u32,
    pub line: u32,
}

fn prepare(
    module: &Module,
    kernel: &str,
    cfg: &LaunchConfig,
    params: &[u8],
    limits: &Limits,
    stop_on_fault: bool,
) -> Result<LaunchState, PtxError> {
    let index =
        module.kernels.iter().position(|k| k.name == kernel).ok_or_else(|| LaunchError::NoSuchKernel(kernel.into()))?;
    let k = &module.kernels[index];
    let [bx, by, bz] = cfg.block;
    let [gx, gy, gz] = cfg.grid;
    let nthreads = bx as u64 * by as u64 * bz as u64;
    if nthreads == 0
        || nthreads > MAX_BLOCK_THREADS as u64
        || bz > 64
        || gx == 0
        || gy == 0
        || gz == 0
        || gx > i32::MAX as u32
        || gy > 65535
        || gz > 65535
    {
        return Err(LaunchError::BadShape { grid: cfg.grid, block: cfg.block }.into());
    }
    if params.len() < k.param_size as usize {
        return Err(LaunchError::ParamBufferTooSmall { needed: k.param_size, given: params.len() }.into());
    }
    let mut globals = vec![u64::MAX; module.globals.len()];
    for (i, g) in module.globals.iter().enumerate() {
        if let Some((_, va)) = cfg.globals.iter().find(|(n, _)| *n == g.name) {
            globals[i] = *va;
        }
    }
    for inst in &k.code {
        if let Some(g) = global_ref(&inst.op) {
            if globals.get(g as usize) == Some(&u64::MAX) {
                return Err(LaunchError::UnboundGlobal(module.globals[g as usize].name.clone()).into());
            }
        }
    }
    let total_shared = k
        .static_shared
        .checked_add(cfg.dynamic_shared)
        .ok_or(LaunchError::BadShape { grid: cfg.grid, block: cfg.block })?;
    let needed = (k.num_regs as u64 * 8 + k.local_size as u64) * nthreads + total_shared as u64;
    if needed > limits.cta_memory_bytes {
        return Err(LaunchError::TooMuchMemory { needed, limit: limits.cta_memory_bytes }.into());
    }
    let nthreads = nthreads as u32;
    let nregs = k.num_regs as usize;
    let cta = Cta {
        nregs,
        local_size: k.local_size as usize,
        regs: vec![0; nregs * nthreads as usize],
        local: vec![0; k.local_size as usize * nthreads as usize],
        shared: vec![0; total_shared as usize],
        pc: vec![0; nthreads as usize],
        state: vec![State::Ready; nthreads as usize],
        // Without recursion a call chain visits each call site at most once.
        stacks: (0..nthreads).map(|_| Vec::with_capacity(k.call_sites.len())).collect(),
    };
    Ok(LaunchState {
        kernel: index,
        name: k.name.clone(),
        params: params.to_vec(),
        const_bank: cfg.const_bank.map(|b| b.to_vec()),
        globals,
        ntid: cfg.block,
        nctaid: cfg.grid,
        dynamic_shared: cfg.dynamic_shared,
        total_shared,
        nthreads,
        windows: cfg.windows,
        budget: limits.instruction_budget,
        executed: 0,
        stop_on_fault,
        cta,
        next_cta: 0,
        in_cta: false,
        cancelled: None,
        stats: LaunchStats::default(),
        ended: None,
    })
}

impl core::fmt::Debug for LaunchState {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let stalled = self.cta.state.iter().filter(|s| matches!(s, State::Faulted(_))).count();
        f.debug_struct("LaunchState")
            .field("kernel", &self.name)
            .field("grid", &self.nctaid)
            .field("block", &self.ntid)
            .field("next_cta", &self.next_cta)
            .field("stalled_threads", &if self.in_cta { stalled } else { 0 })
            .field("executed", &self.executed)
            .field("ended", &self.ended)
            .finish()
    }
}

impl LaunchState {
    /// Runs (first call) or replays (later calls) the launch until it completes, stalls on
    /// faults, or fails. `module` must be the one the launch was started from (a module without
    /// the kernel at the same place is [`LaunchError::NoSuchKernel`]); `mem` may be a different
    /// view of the same memory on each call (the driver maps pages in between).
    pub fn run(&mut self, module: &Module, mem: &mut dyn VirtualMemory) -> Result<RunOutcome, PtxError> {
        if let Some(end) = &self.ended {
            return end.clone().map(RunOutcome::Completed);
        }
        let k = match module.kernels.get(self.kernel) {
            Some(k) if k.name == self.name => k,
            _ => return Err(LaunchError::NoSuchKernel(self.name.clone()).into()),
        };
        let [gx, gy, gz] = self.nctaid.map(u64::from);
        let ctaid = |i: u64| [(i % gx) as u32, ((i / gx) % gy) as u32, (i / (gx * gy)) as u32];
        if let Some(t) = self.cancelled {
            let pc = self.cta.pc[t as usize];
            let State::Faulted(f) = self.cta.state[t as usize] else { unreachable!("cancel names a stalled thread") };
            let e = located(k, pc as usize, ExecError::Fault(f), ctaid(self.next_cta), tid_of(t, self.ntid));
            self.ended = Some(Err(e.clone()));
            return Err(e);
        }
        let mut env = Env {
            code: &k.code,
            sites: &k.call_sites,
            params: &self.params,
            const_bank: self.const_bank.as_deref().unwrap_or(module.const_image()),
            globals: &self.globals,
            mem,
            ntid: self.ntid,
            nctaid: self.nctaid,
            ctaid: [0; 3],
            dynamic_shared: self.dynamic_shared,
            total_shared: self.total_shared,
            nthreads: self.nthreads,
            executed: self.executed,
            budget: self.budget,
            windows: self.windows,
            stop_on_fault: self.stop_on_fault,
        };
        let cta = &mut self.cta;
        let total = gx * gy * gz;
        loop {
            if self.next_cta == total {
                self.executed = env.executed;
                self.stats.instructions = env.executed;
                self.ended = Some(Ok(self.stats));
                return Ok(RunOutcome::Completed(self.stats));
            }
            env.ctaid = ctaid(self.next_cta);
            if self.in_cta {
                // The replay: stalled threads run their access again.
                for s in cta.state.iter_mut() {
                    if matches!(s, State::Faulted(_)) {
                        *s = State::Ready;
                    }
                }
            } else {
                cta.regs.fill(0);
                cta.local.fill(0);
                cta.shared.fill(0);
                cta.pc.fill(0);
                cta.state.fill(State::Ready);
                cta.stacks.iter_mut().for_each(Vec::clear);
                self.in_cta = true;
            }
            match run_cta(&mut env, cta) {
                Ok(true) => {
                    self.stats.ctas += 1;
                    self.stats.threads += self.nthreads as u64;
                    self.next_cta += 1;
                    self.in_cta = false;
                }
                Ok(false) => {
                    self.executed = env.executed;
                    let mut faults = Vec::new();
                    for (t, s) in cta.state.iter().enumerate() {
                        if let State::Faulted(fault) = *s {
                            let pc = cta.pc[t];
                            faults.push(StalledAccess {
                                fault,
                                cta: env.ctaid,
                                tid: tid_of(t as u32, self.ntid),
                                thread: t as u32,
                                warp: t as u32 / WARP_SIZE,
                                pc,
                                line: k.lines.get(pc as usize).copied().unwrap_or(0),
                            });
                        }
                    }
                    return Ok(RunOutcome::Stalled { faults });
                }
                Err((error, t)) => {
                    self.executed = env.executed;
                    let pc = cta.pc.get(t as usize).copied().unwrap_or(0) as usize;
                    let e = located(k, pc, error, env.ctaid, tid_of(t, env.ntid));
                    self.ended = Some(Err(e.clone()));
                    return Err(e);
                }
            }
        }
    }

    /// Cancels the accesses stalled on the page of `page_size` bytes (a power of two) holding
    /// `va`, as the fault buffer's CANCEL does: the kernel is killed, so the next [`Self::run`]
    /// fails with [`ExecError::Fault`] of the first such thread (and every run after it too);
    /// nothing runs again. Returns whether any stalled access was on that page (if none, nothing
    /// changes). `covers` says which access types the cancel applies to (its `ACCESS_TYPE`):
    /// accesses it does not cover stay stalled for the next replay.
    pub fn cancel(&mut self, va: u64, page_size: u64, covers: impl Fn(crate::engine_mem::AccessType) -> bool) -> bool {
        if self.ended.is_some() || !self.in_cta {
            return false;
        }
        let size = page_size.max(1);
        let page = va & !(size - 1);
        let hit = self
            .cta
            .state
            .iter()
            .position(|s| matches!(s, State::Faulted(f) if f.va.wrapping_sub(page) < size && covers(f.access)));
        if let Some(t) = hit {
            self.cancelled.get_or_insert(t as u32);
        }
        hit.is_some()
    }

    /// Whether the launch has completed or failed (`run` would only answer that again).
    pub fn is_finished(&self) -> bool {
        self.ended.is_some()
    }

    /// CTAs completed so far.
    pub fn ctas_done(&self) -> u64 {
        self.stats.ctas
    }
}

fn global_ref(op: &Op) -> Option<u32> {
    let g = |s: &Src| if let Src::Global(g) = s { Some(*g) } else { None };
    match op {
        Op::Mov { a, .. } => g(a),
        Op::Int { a, b, .. } => g(a).or(g(b)),
        Op::Cvta { a, .. } => g(a),
        Op::Ld { addr, .. } | Op::St { addr, .. } | Op::Atom { addr, .. } => g(&addr.base),
        _ => None,
    }
}

fn located(k: &Kernel, pc: usize, error: ExecError, cta: [u32; 3], tid: [u32; 3]) -> PtxError {
    let pc = pc.min(k.code.len().saturating_sub(1));
    PtxError::Exec {
        error,
        line: k.lines.get(pc).copied().unwrap_or(0),
        instruction: k.opcodes.get(pc).cloned().unwrap_or_else(String::new),
        cta,
        tid,
    }
}

fn tid_of(t: u32, ntid: [u32; 3]) -> [u32; 3] {
    [t % ntid[0], (t / ntid[0]) % ntid[1], t / (ntid[0] * ntid[1])]
}

/// Runs one CTA until it completes (`true`) or every thread that has not exited is blocked and
/// some are stalled on faults (`false`). An error comes with the thread it happened on.
fn run_cta(env: &mut Env, cta: &mut Cta) -> Result<bool, (ExecError, u32)> {
    let n = env.nthreads;
    let nwarps = n.div_ceil(WARP_SIZE);
    loop {
        for w in 0..nwarps {
            run_warp(env, cta, w)?;
        }
        // Every thread is now exited, at a barrier, stalled on a fault, or at a collective of
        // a warp with a stalled lane.
        let live = cta.state.iter().filter(|s| **s != State::Exited).count() as u32;
        if live == 0 {
            return Ok(true);
        }
        let mut released = false;
        for id in 0..16u32 {
            let mut arrived = 0u32;
            let mut expected = 0u32;
            for s in &cta.state {
                if let State::Barrier { id: i, count } = *s {
                    if i == id {
                        arrived += 1;
                        expected = if count == u32::MAX { live } else { count };
                    }
                }
            }
            if arrived > 0 && arrived >= expected {
                for s in cta.state.iter_mut() {
                    if matches!(*s, State::Barrier { id: i, .. } if i == id) {
                        *s = State::Ready;
                    }
                }
                released = true;
            }
        }
        if !released {
            if cta.state.iter().any(|s| matches!(s, State::Faulted(_))) {
                return Ok(false);
            }
            let first = cta.state.iter().position(|s| matches!(s, State::Barrier { .. })).unwrap_or(0) as u32;
            // Point the error at the barrier the thread waits on.
            if let Some(pc) = cta.pc.get_mut(first as usize) {
                *pc = pc.saturating_sub(1);
            }
            return Err((ExecError::BarrierDeadlock { waiting: live, live }, first));
        }
    }
}

/// Runs the threads of warp `w` until each has exited or waits at a barrier, executing
/// collectives for the groups of lanes that meet at them.
fn run_warp(env: &mut Env, cta: &mut Cta, w: u32) -> Result<(), (ExecError, u32)> {
    let first = w * WARP_SIZE;
    let last = (first + WARP_SIZE).min(env.nthreads);
    loop {
        for t in first..last {
            if cta.state[t as usize] == State::Ready {
                let ti = t as usize;
                let regs = &mut cta.regs[ti * cta.nregs..(ti + 1) * cta.nregs];
                let local = &mut cta.local[ti * cta.local_size..(ti + 1) * cta.local_size];
                let mut pc = cta.pc[ti];
                let r = run_thread(env, t, regs, local, &mut cta.shared, &mut cta.stacks[ti], &mut pc);
                cta.pc[ti] = pc;
                cta.state[ti] = r.map_err(|e| (e, t))?;
                if let State::Faulted(f) = cta.state[ti] {
                    if env.stop_on_fault {
                        return Err((ExecError::Fault(f), t));
                    }
                }
            }
        }
        // A lane stalled on a fault has not reached any collective yet: the warp's collectives
        // wait for the replay (as a warp stalled at a faulting instruction waits on hardware).
        if cta.state[first as usize..last as usize].iter().any(|s| matches!(s, State::Faulted(_))) {
            return Ok(());
        }
        // Collectives: lanes at the same instruction execute it together.
        let mut any = false;
        for t in first..last {
            if cta.state[t as usize] != State::Collective {
                continue;
            }
            any = true;
            let pc = cta.pc[t as usize];
            let mut group = 0u32;
            for u in t..last {
                if cta.state[u as usize] == State::Collective && cta.pc[u as usize] == pc {
                    group |= 1 << (u - first);
                }
            }
            collective(env, cta, first, last, group, pc).map_err(|e| (e, t))?;
            for u in t..last {
                if group & (1 << (u - first)) != 0 {
                    cta.state[u as usize] = State::Ready;
                    cta.pc[u as usize] = pc + 1;
                }
            }
        }
        if !any {
            return Ok(());
        }
    }
}

/// Executes the warp-collective at `pc` for the lanes in `group` (bit i: thread `first + i`).
fn collective(env: &mut Env, cta: &mut Cta, first: u32, last: u32, group: u32, pc: u32) -> Result<(), ExecError> {
    let op = env.code.get(pc as usize).map(|i| i.op).ok_or(ExecError::Unsupported)?;
    let nregs = cta.nregs;
    let read = |cta: &Cta, lane: u32, s: Src| -> u64 {
        let t = (first + lane) as usize;
        match s {
            Src::Reg(r) => cta.regs[t * nregs + r as usize],
            Src::Imm(v) => v,
            Src::Global(g) => env.globals.get(g as usize).copied().unwrap_or(0),
        }
    };
    let lanes = || (0..(last - first)).filter(move |l| group & (1 << l) != 0);
    // Lanes that exist and have not exited but are elsewhere: naming one in a mask is divergence.
    let mut live_elsewhere = 0u32;
    for l in 0..(last - first) {
        if group & (1 << l) == 0 && cta.state[(first + l) as usize] != State::Exited {
            live_elsewhere |= 1 << l;
        }
    }
    let check_mask = |m: u32| -> Result<(), ExecError> {
        let bad = m & live_elsewhere;
        if bad != 0 {
            return Err(ExecError::WarpDivergence { lane: bad.trailing_zeros(), mask: m });
        }
        Ok(())
    };
    let write = |cta: &mut Cta, lane: u32, r: Reg, v: u64| {
        cta.regs[(first + lane) as usize * nregs + r as usize] = v;
    };
    match op {
        Op::Activemask { d } => {
            for l in lanes() {
                write(cta, l, d, group as u64);
            }
        }
        Op::Vote { mode, d, a, negate, mask: m } => {
            let mut ballot = 0u32;
            let mut members = 0u32;
            for l in lanes() {
                let mk = read(cta, l, m) as u32;
                check_mask(mk)?;
                members |= 1 << l;
                if (read(cta, l, a) & 1 != 0) != negate {
                    ballot |= 1 << l;
                }
            }
            for l in lanes() {
                let mk = read(cta, l, m) as u32 & members;
                let v = ballot & mk;
                let r = match mode {
                    VoteMode::Ballot => v as u64,
                    VoteMode::All => (v == mk) as u64,
                    VoteMode::Any => (v != 0) as u64,
                    VoteMode::Uni => (v == mk || v == 0) as u64,
                };
                write(cta, l, d, r);
            }
        }
        Op::Shfl { mode, d, dp, a, b, c, mask: m } => {
            let mut vals = [0u64; 32];
            for l in lanes() {
                check_mask(read(cta, l, m) as u32)?;
                vals[l as usize] = read(cta, l, a) & 0xFFFF_FFFF;
            }
            let mut out = [(0u64, false); 32];
            for l in lanes() {
                let bval = (read(cta, l, b) & 0x1F) as i32;
                let cv = read(cta, l, c) as u32;
                let clamp = (cv & 0x1F) as i32;
                let segmask = ((cv >> 8) & 0x1F) as i32;
                let lane = l as i32;
                let max_lane = (lane & segmask) | (clamp & !segmask);
                let min_lane = lane & segmask;
                let (j, pval) = match mode {
                    ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                    ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                    ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                    ShflMode::Idx => {
                        let j = min_lane | (bval & !segmask);
                        (j, j <= max_lane)
                    }
                };
                let j = if pval { j } else { lane };
                // A source lane outside the group (inactive) gives the reader's own value.
                let v = if (0..32).contains(&j) && group & (1 << j) != 0 { vals[j as usize] } else { vals[l as usize] };
                out[l as usize] = (v, pval);
            }
            for l in lanes() {
                let (v, p) = out[l as usize];
                write(cta, l, d, v);
                if let Some(dp) = dp {
                    write(cta, l, dp, p as u64);
                }
            }
        }
        _ => return Err(ExecError::Unsupported),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Values.

#[inline(always)]
fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

#[inline(always)]
fn zext(v: u64, bits: u32) -> u64 {
    v & mask(bits)
}

/// The integer value of `v` as `ty` says (sign- or zero-extended).
#[inline(always)]
fn ival(v: u64, ty: Ty) -> i128 {
    if ty.is_signed() {
        sext(v, ty.bits()) as i128
    } else {
        zext(v, ty.bits()) as i128
    }
}

#[inline(always)]
fn f32v(v: u64, ftz: bool) -> f32 {
    let x = f32::from_bits(v as u32);
    if ftz {
        ftz32(x)
    } else {
        x
    }
}

#[inline(always)]
fn put32(x: f32, ftz: bool, sat: bool) -> u64 {
    let x = if sat { float::sat64(x as f64) as f32 } else { x };
    let x = if ftz { ftz32(x) } else { x };
    if x.is_nan() {
        NAN_F32 as u64
    } else {
        x.to_bits() as u64
    }
}

#[inline(always)]
fn put64(x: f64, sat: bool) -> u64 {
    let x = if sat { float::sat64(x) } else { x };
    if x.is_nan() {
        NAN_F64
    } else {
        x.to_bits()
    }
}

fn int_bin(op: IntOp, ty: Ty, a: u64, b: u64) -> u64 {
    let bits = ty.bits();
    let signed = ty.is_signed();
    match op {
        IntOp::Add => a.wrapping_add(b),
        IntOp::Sub => a.wrapping_sub(b),
        IntOp::AddSat => (sext(a, 32) + sext(b, 32)).clamp(i32::MIN as i64, i32::MAX as i64) as u64,
        IntOp::SubSat => (sext(a, 32) - sext(b, 32)).clamp(i32::MIN as i64, i32::MAX as i64) as u64,
        IntOp::MulLo => a.wrapping_mul(b),
        IntOp::MulHi => {
            if bits == 64 {
                let (x, y) = (ival(a, ty), ival(b, ty));
                if signed {
                    ((x * y) >> 64) as u64
                } else {
                    (((x as u128) * (y as u128)) >> 64) as u64
                }
            } else {
                ((ival(a, ty) * ival(b, ty)) >> bits) as u64
            }
        }
        IntOp::MulWide => (ival(a, ty) * ival(b, ty)) as u64,
        IntOp::Div | IntOp::Rem => {
            let (x, y) = (ival(a, ty), ival(b, ty));
            if y == 0 {
                // PTX leaves division by zero undefined; the model answers all ones (quotient)
                // and the dividend (remainder), as the hardware's unsigned divide does.
                return if op == IntOp::Div { u64::MAX } else { a };
            }
            let r = if op == IntOp::Div { x.wrapping_div(y) } else { x.wrapping_rem(y) };
            r as u64
        }
        IntOp::Min => ival(a, ty).min(ival(b, ty)) as u64,
        IntOp::Max => ival(a, ty).max(ival(b, ty)) as u64,
        IntOp::And => a & b,
        IntOp::Or => a | b,
        IntOp::Xor => a ^ b,
        IntOp::Shl => {
            let s = b & 0xFFFF_FFFF;
            if s >= bits as u64 {
                0
            } else {
                a << s
            }
        }
        IntOp::Shr => {
            let s = (b & 0xFFFF_FFFF).min(bits as u64 - 1 + (!signed) as u64);
            if signed {
                (sext(a, bits) >> s.min(63)) as u64
            } else if s >= bits as u64 {
                0
            } else {
                zext(a, bits) >> s
            }
        }
    }
}

fn int_un(op: IntUn, ty: Ty, a: u64) -> u64 {
    let bits = ty.bits();
    match op {
        IntUn::Not if ty == Ty::Pred => (a & 1) ^ 1,
        IntUn::Not => !a,
        IntUn::Cnot => (zext(a, bits) == 0) as u64,
        IntUn::Neg => (sext(a, bits).wrapping_neg()) as u64,
        IntUn::Abs => (sext(a, bits).wrapping_abs()) as u64,
        IntUn::Popc => zext(a, bits).count_ones() as u64,
        IntUn::Clz => (zext(a, bits).leading_zeros() - (64 - bits)) as u64,
        IntUn::Brev => zext(a, bits).reverse_bits() >> (64 - bits),
        IntUn::Bfind => {
            let v = if ty.is_signed() && sext(a, bits) < 0 { !a } else { a };
            let v = zext(v, bits);
            if v == 0 {
                0xFFFF_FFFF
            } else {
                (63 - v.leading_zeros()) as u64
            }
        }
    }
}

fn bfe(ty: Ty, a: u64, pos: u64, len: u64) -> u64 {
    let bits = ty.bits() as u64;
    let msb = bits - 1;
    let pos = pos & 0xFF;
    let len = len & 0xFF;
    let sbit = if ty.is_signed() && len > 0 { (a >> (pos + len - 1).min(msb)) & 1 } else { 0 };
    let mut d = 0u64;
    for i in 0..bits {
        let bit = if i < len && pos + i <= msb { (a >> (pos + i)) & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

fn bfi(ty: Ty, f: u64, b: u64, pos: u64, len: u64) -> u64 {
    let bits = ty.bits() as u64;
    let pos = pos & 0xFF;
    let len = len & 0xFF;
    let mut d = b;
    for i in 0..len {
        if pos + i >= bits {
            break;
        }
        let bit = (f >> i) & 1;
        d = (d & !(1 << (pos + i))) | (bit << (pos + i));
    }
    d
}

fn prmt(a: u64, b: u64, c: u64) -> u64 {
    let bytes = ((b as u32 as u64) << 32) | (a as u32 as u64);
    let mut d = 0u64;
    for k in 0..4 {
        let sel = (c >> (4 * k)) & 0xF;
        let byte = (bytes >> (8 * (sel & 7))) & 0xFF;
        let byte = if sel & 8 != 0 {
            if byte & 0x80 != 0 {
                0xFF
            } else {
                0
            }
        } else {
            byte
        };
        d |= byte << (8 * k);
    }
    d
}

fn shf(left: bool, wrap: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = if wrap { c & 31 } else { (c & 0xFFFF_FFFF).min(32) };
    let pair = ((b as u32 as u64) << 32) | a as u32 as u64;
    if left {
        ((pair << n) >> 32) & 0xFFFF_FFFF
    } else {
        (pair >> n) & 0xFFFF_FFFF
    }
}

fn compare(cmp: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    if ty.is_float() {
        let (x, y) = if ty == Ty::F32 {
            (f32v(a, ftz) as f64, f32v(b, ftz) as f64)
        } else {
            (f64::from_bits(a), f64::from_bits(b))
        };
        let unordered = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => x == y,
            Cmp::Ne => !unordered && x != y,
            Cmp::Lt => x < y,
            Cmp::Le => x <= y,
            Cmp::Gt => x > y,
            Cmp::Ge => x >= y,
            Cmp::Equ => unordered || x == y,
            Cmp::Neu => x != y,
            Cmp::Ltu => unordered || x < y,
            Cmp::Leu => unordered || x <= y,
            Cmp::Gtu => unordered || x > y,
            Cmp::Geu => unordered || x >= y,
            Cmp::Num => !unordered,
            Cmp::Nan => unordered,
            Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => false,
        };
    }
    let (x, y) = (ival(a, ty), ival(b, ty));
    let (ux, uy) = (zext(a, ty.bits()), zext(b, ty.bits()));
    match cmp {
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
        Cmp::Lo => ux < uy,
        Cmp::Ls => ux <= uy,
        Cmp::Hi => ux > uy,
        Cmp::Hs => ux >= uy,
        _ => false,
    }
}

fn combine(r: bool, c: Option<(BoolOp, bool)>) -> bool {
    match c {
        None => r,
        Some((BoolOp::And, p)) => r & p,
        Some((BoolOp::Or, p)) => r | p,
        Some((BoolOp::Xor, p)) => r ^ p,
    }
}

fn cvt(dty: Ty, sty: Ty, rnd: Round, ftz: bool, sat: bool, a: u64) -> Result<u64, ExecError> {
    let dbits = dty.bits();
    Ok(match (dty.is_float(), sty.is_float()) {
        (false, false) => {
            let v = ival(a, sty);
            if sat {
                let (lo, hi): (i128, i128) = if dty.is_signed() {
                    (-(1i128 << (dbits - 1)), (1i128 << (dbits - 1)) - 1)
                } else {
                    (0, (1i128 << dbits) - 1)
                };
                v.clamp(lo, hi) as u64 & mask(dbits)
            } else {
                v as u64 & mask(dbits)
            }
        }
        (true, false) => {
            let v = ival(a, sty);
            let mode = if rnd == Round::None { Round::Rn } else { rnd };
            match dty {
                Ty::F32 => put32(float::int_to_f32(v, mode), ftz, sat),
                Ty::F64 => put64(float::int_to_f64(v, mode), sat),
                _ => return Err(ExecError::Unsupported),
            }
        }
        (false, true) => {
            let x = match sty {
                Ty::F32 => f32v(a, ftz) as f64,
                Ty::F64 => f64::from_bits(a),
                _ => return Err(ExecError::Unsupported),
            };
            float::float_to_int(x, rnd, dty) & mask(dbits)
        }
        (true, true) => match (dty, sty) {
            (Ty::F32, Ty::F32) => put32(float::round_integral32(f32v(a, ftz), rnd), ftz, sat),
            (Ty::F64, Ty::F64) => put64(float::round_integral(f64::from_bits(a), rnd), sat),
            (Ty::F64, Ty::F32) => put64(float::round_integral(f32v(a, ftz) as f64, rnd), sat),
            (Ty::F32, Ty::F64) => {
                let x = f64::from_bits(a);
                let r = match rnd {
                    Round::Rni | Round::Rzi | Round::Rmi | Round::Rpi => float::round_integral(x, rnd) as f32,
                    Round::None => float::f64_to_f32(x, Round::Rn),
                    m => float::f64_to_f32(x, m),
                };
                put32(r, ftz, sat)
            }
            _ => return Err(ExecError::Unsupported),
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Memory.

/// Resolves a generic address to its space and offset.
#[inline(always)]
fn resolve(windows: &Windows, space: Space, addr: u64) -> (Space, u64) {
    if space != Space::Generic {
        return (space, addr);
    }
    if addr.wrapping_sub(windows.shared) < windows.size {
        (Space::Shared, addr - windows.shared)
    } else if addr.wrapping_sub(windows.local) < windows.size {
        (Space::Local, addr - windows.local)
    } else if addr.wrapping_sub(CONST_WINDOW) < WINDOW_SIZE {
        (Space::Const, addr - CONST_WINDOW)
    } else {
        (Space::Global, addr)
    }
}

fn range(space: Space, addr: u64, len: usize, size: usize) -> Result<core::ops::Range<usize>, ExecError> {
    let oob = ExecError::OutOfRange { space, addr, len: len as u32 };
    let start = usize::try_from(addr).map_err(|_| oob.clone())?;
    let end = start.checked_add(len).ok_or(oob.clone())?;
    if end > size {
        return Err(oob);
    }
    Ok(start..end)
}

fn load(env: &mut Env, local: &[u8], shared: &[u8], space: Space, addr: u64, buf: &mut [u8]) -> Result<(), ExecError> {
    if !addr.is_multiple_of(buf.len() as u64) {
        return Err(ExecError::Misaligned { addr, len: buf.len() as u32 });
    }
    let (space, off) = resolve(&env.windows, space, addr);
    let src = match space {
        Space::Global | Space::Generic => return env.mem.read(off, buf).map_err(ExecError::Fault),
        Space::Shared => shared,
        Space::Local => local,
        Space::Param => env.params,
        Space::Const => env.const_bank,
    };
    let r = range(space, off, buf.len(), src.len())?;
    buf.copy_from_slice(&src[r]);
    Ok(())
}

fn store(
    env: &mut Env,
    local: &mut [u8],
    shared: &mut [u8],
    space: Space,
    addr: u64,
    data: &[u8],
) -> Result<(), ExecError> {
    if !addr.is_multiple_of(data.len() as u64) {
        return Err(ExecError::Misaligned { addr, len: data.len() as u32 });
    }
    let (space, off) = resolve(&env.windows, space, addr);
    let dst = match space {
        Space::Global | Space::Generic => {
            // No partial store: a fault anywhere in the access leaves every byte unwritten.
            env.mem.probe_write(off, data.len()).map_err(ExecError::Fault)?;
            return env.mem.write(off, data).map_err(ExecError::Fault);
        }
        Space::Shared => shared,
        Space::Local => local,
        Space::Param | Space::Const => return Err(ExecError::OutOfRange { space, addr, len: data.len() as u32 }),
    };
    let r = range(space, off, data.len(), dst.len())?;
    dst[r].copy_from_slice(data);
    Ok(())
}

fn atom_apply(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    let r = match op {
        AtomOp::Add => match ty {
            Ty::F32 => (f32::from_bits(old as u32) + f32::from_bits(b as u32)).to_bits() as u64,
            Ty::F64 => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
            _ => old.wrapping_add(b),
        },
        AtomOp::Min => ival(old, ty).min(ival(b, ty)) as u64,
        AtomOp::Max => ival(old, ty).max(ival(b, ty)) as u64,
        AtomOp::Inc => {
            let (o, b) = (zext(old, bits), zext(b, bits));
            if o >= b {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            let (o, b) = (zext(old, bits), zext(b, bits));
            if o == 0 || o > b {
                b
            } else {
                o - 1
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if zext(old, bits) == zext(b, bits) {
                c
            } else {
                old
            }
        }
    };
    r & mask(bits)
}

fn sreg(env: &Env, t: u32, s: Sreg) -> u64 {
    let lane = t % WARP_SIZE;
    let tid = tid_of(t, env.ntid);
    match s {
        Sreg::Tid(c) => tid[c as usize] as u64,
        Sreg::Ntid(c) => env.ntid[c as usize] as u64,
        Sreg::Ctaid(c) => env.ctaid[c as usize] as u64,
        Sreg::Nctaid(c) => env.nctaid[c as usize] as u64,
        Sreg::LaneId => lane as u64,
        Sreg::WarpId => (t / WARP_SIZE) as u64,
        Sreg::NWarpId => env.nthreads.div_ceil(WARP_SIZE) as u64,
        Sreg::SmId | Sreg::GridId => 0,
        Sreg::NSmId => 1,
        Sreg::Clock => env.executed & 0xFFFF_FFFF,
        Sreg::Clock64 => env.executed,
        Sreg::LanemaskEq => 1 << lane,
        Sreg::LanemaskLt => (1u64 << lane) - 1,
        Sreg::LanemaskLe => (1u64 << (lane + 1)) - 1,
        Sreg::LanemaskGt => (0xFFFF_FFFFu64 << (lane + 1)) & 0xFFFF_FFFF,
        Sreg::LanemaskGe => (0xFFFF_FFFFu64 << lane) & 0xFFFF_FFFF,
        Sreg::DynamicSmemSize => env.dynamic_shared as u64,
        Sreg::TotalSmemSize => env.total_shared as u64,
    }
}

/// Copies a call argument or return value between frame slots in local memory.
fn frame_copy(local: &mut [u8], from: u32, to: u32, len: u32) -> Result<(), ExecError> {
    let src = range(Space::Local, from as u64, len as usize, local.len())?;
    range(Space::Local, to as u64, len as usize, local.len())?;
    local.copy_within(src, to as usize);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The interpreter loop.

/// Runs thread `t` from `*pc` until it stops. On return `*pc` is the next instruction (for a
/// barrier: the one after it; for a collective: the collective itself; for an error: the
/// failing one).
#[allow(clippy::too_many_arguments)]
fn run_thread(
    env: &mut Env,
    t: u32,
    regs: &mut [u64],
    local: &mut [u8],
    shared: &mut [u8],
    stack: &mut Vec<(u32, u32)>,
    pc_out: &mut u32,
) -> Result<State, ExecError> {
    let code = env.code;
    let mut pc = *pc_out as usize;
    macro_rules! v {
        ($s:expr) => {
            match $s {
                Src::Reg(r) => regs[r as usize],
                Src::Imm(v) => v,
                Src::Global(g) => env.globals[g as usize],
            }
        };
    }
    macro_rules! fail {
        ($e:expr) => {{
            *pc_out = pc as u32;
            return Err($e);
        }};
    }
    // A global access faulted before any effect: the thread stops at it, registers untouched,
    // and the instruction is not counted (its replay is).
    macro_rules! stall {
        ($f:expr) => {{
            *pc_out = pc as u32;
            env.executed -= 1;
            return Ok(State::Faulted($f));
        }};
    }
    macro_rules! fail_or_stall {
        ($e:expr) => {{
            match $e {
                ExecError::Fault(f) => stall!(f),
                e => fail!(e),
            }
        }};
    }
    loop {
        let Some(inst) = code.get(pc) else {
            // Falling off the end of the body returns, like `ret`.
            *pc_out = pc as u32;
            return Ok(State::Exited);
        };
        env.executed += 1;
        if env.executed > env.budget {
            fail!(ExecError::BudgetExhausted { executed: env.executed - 1 });
        }
        if let Some((p, neg)) = inst.guard {
            if (regs[p as usize] & 1 != 0) == neg {
                pc += 1;
                continue;
            }
        }
        match inst.op {
            Op::Mov { d, a, bits } => regs[d as usize] = v!(a) & mask(bits),
            Op::MovSreg { d, s } => regs[d as usize] = sreg(env, t, s),
            Op::Pack { d, parts, n, part_bits } => {
                let mut r = 0u64;
                for (k, part) in parts.iter().enumerate().take(n as usize) {
                    r |= (v!(*part) & mask(part_bits)) << (k as u32 * part_bits);
                }
                regs[d as usize] = r;
            }
            Op::Unpack { d, n, part_bits, a } => {
                let x = v!(a);
                for (k, dst) in d.iter().enumerate().take(n as usize) {
                    if let Some(r) = dst {
                        regs[*r as usize] = (x >> (k as u32 * part_bits)) & mask(part_bits);
                    }
                }
            }
            Op::Int { op, ty, d, a, b } => {
                let (x, y) = (v!(a), v!(b));
                let r = match (op, ty.bits()) {
                    (IntOp::Add, 32) => (x as u32).wrapping_add(y as u32) as u64,
                    (IntOp::Add, 64) => x.wrapping_add(y),
                    _ => int_bin(op, ty, x, y),
                };
                let bits = if op == IntOp::MulWide { wide_of(ty).bits() } else { ty.bits() };
                regs[d as usize] = r & mask(if ty == Ty::Pred { 1 } else { bits });
            }
            Op::IntUn { op, ty, d, a } => {
                let r = int_un(op, ty, v!(a));
                let bits = if matches!(op, IntUn::Popc | IntUn::Clz | IntUn::Bfind) { 32 } else { ty.bits() };
                regs[d as usize] = r & mask(bits);
            }
            Op::Mad { mode, sat, ty, d, a, b, c } => {
                let (x, y, z) = (v!(a), v!(b), v!(c));
                let r = match mode {
                    MadMode::Lo => x.wrapping_mul(y).wrapping_add(z) & mask(ty.bits()),
                    MadMode::Hi => {
                        let h = int_bin(IntOp::MulHi, ty, x, y);
                        if sat {
                            (sext(h, 32) + sext(z, 32)).clamp(i32::MIN as i64, i32::MAX as i64) as u64 & 0xFFFF_FFFF
                        } else {
                            h.wrapping_add(z) & mask(ty.bits())
                        }
                    }
                    MadMode::Wide => int_bin(IntOp::MulWide, ty, x, y).wrapping_add(z) & mask(wide_of(ty).bits()),
                };
                regs[d as usize] = r;
            }
            Op::Bfe { ty, d, a, pos, len } => regs[d as usize] = bfe(ty, v!(a), v!(pos), v!(len)) & mask(ty.bits()),
            Op::Bfi { ty, d, f, b, pos, len } => {
                regs[d as usize] = bfi(ty, v!(f), v!(b), v!(pos), v!(len)) & mask(ty.bits())
            }
            Op::Prmt { d, a, b, c } => regs[d as usize] = prmt(v!(a), v!(b), v!(c)),
            Op::Shf { left, wrap, d, a, b, c } => regs[d as usize] = shf(left, wrap, v!(a), v!(b), v!(c)),
            Op::Float { op, ty, rnd, ftz, sat, d, a, b } => {
                regs[d as usize] = if ty == Ty::F32 {
                    let (x, y) = (f32v(v!(a), ftz), f32v(v!(b), ftz));
                    let r = match op {
                        FloatOp::Add => float::add32(x, y, rnd),
                        FloatOp::Sub => float::add32(x, -y, rnd),
                        FloatOp::Mul => float::mul32(x, y, rnd),
                        FloatOp::Div => float::div32(x, y, rnd),
                        FloatOp::Min | FloatOp::Max => match float::min_max64(x as f64, y as f64, op == FloatOp::Max) {
                            Some(m) => m as f32,
                            None => f32::NAN,
                        },
                    };
                    put32(r, ftz, sat)
                } else {
                    let (x, y) = (f64::from_bits(v!(a)), f64::from_bits(v!(b)));
                    let r = match op {
                        FloatOp::Add => float::add64(x, y, rnd),
                        FloatOp::Sub => float::add64(x, -y, rnd),
                        FloatOp::Mul => float::mul64(x, y, rnd),
                        FloatOp::Div => float::div64(x, y, rnd),
                        FloatOp::Min | FloatOp::Max => float::min_max64(x, y, op == FloatOp::Max).unwrap_or(f64::NAN),
                    };
                    put64(r, sat)
                };
            }
            Op::Copysign { ty, d, a, b } => {
                let sign = if ty == Ty::F32 { 1u64 << 31 } else { 1u64 << 63 };
                regs[d as usize] = (v!(b) & mask(ty.bits()) & !sign) | (v!(a) & sign);
            }
            Op::Fma { ty, ftz, sat, d, a, b, c, .. } => {
                regs[d as usize] = if ty == Ty::F32 {
                    put32(float::fma32(f32v(v!(a), ftz), f32v(v!(b), ftz), f32v(v!(c), ftz)), ftz, sat)
                } else {
                    put64(float::fma64(f64::from_bits(v!(a)), f64::from_bits(v!(b)), f64::from_bits(v!(c))), sat)
                };
            }
            Op::FloatUn { op, ty, rnd, ftz, d, a } => {
                let x = v!(a);
                regs[d as usize] = if ty == Ty::F32 {
                    match op {
                        FloatUn::Neg => f32v(x, ftz).to_bits() as u64 ^ 0x8000_0000,
                        FloatUn::Abs => f32v(x, ftz).to_bits() as u64 & 0x7FFF_FFFF,
                        _ => {
                            let x = f32v(x, ftz);
                            let r = match op {
                                FloatUn::Sqrt => float::sqrt32(x, rnd),
                                FloatUn::Rcp => float::div32(1.0, x, rnd),
                                FloatUn::Rsqrt => (1.0 / float::sqrt_f64(x as f64)) as f32,
                                FloatUn::Sin => float::sin32(x),
                                FloatUn::Cos => float::cos32(x),
                                FloatUn::Ex2 => float::ex2_32(x),
                                _ => float::lg2_32(x),
                            };
                            put32(r, ftz, false)
                        }
                    }
                } else {
                    match op {
                        FloatUn::Neg => x ^ (1 << 63),
                        FloatUn::Abs => x & !(1 << 63),
                        _ => {
                            let x = f64::from_bits(x);
                            let r = match op {
                                FloatUn::Sqrt => float::sqrt64(x, rnd),
                                FloatUn::Rcp => {
                                    float::div64(1.0, x, if rnd == Round::Approx { Round::Rn } else { rnd })
                                }
                                FloatUn::Rsqrt => 1.0 / float::sqrt_f64(x),
                                _ => fail!(ExecError::Unsupported),
                            };
                            put64(r, false)
                        }
                    }
                };
            }
            Op::Setp { cmp, ty, ftz, d, d2, a, b, combine: c } => {
                let r = compare(cmp, ty, ftz, v!(a), v!(b));
                let c = c.map(|(op, p, neg)| (op, (v!(p) & 1 != 0) != neg));
                regs[d as usize] = combine(r, c) as u64;
                if let Some(d2) = d2 {
                    regs[d2 as usize] = combine(!r, c) as u64;
                }
            }
            Op::Set { cmp, ty, dty, ftz, d, a, b, combine: c } => {
                let r = compare(cmp, ty, ftz, v!(a), v!(b));
                let c = c.map(|(op, p, neg)| (op, (v!(p) & 1 != 0) != neg));
                let r = combine(r, c);
                regs[d as usize] = match dty {
                    Ty::F32 => (if r { 1.0f32 } else { 0.0 }).to_bits() as u64,
                    Ty::F64 => (if r { 1.0f64 } else { 0.0 }).to_bits(),
                    _ => {
                        if r {
                            mask(dty.bits())
                        } else {
                            0
                        }
                    }
                };
            }
            Op::Selp { bits, d, a, b, p } => regs[d as usize] = if v!(p) & 1 != 0 { v!(a) } else { v!(b) } & mask(bits),
            Op::Cvt { dty, sty, rnd, ftz, sat, d, a } => match cvt(dty, sty, rnd, ftz, sat, v!(a)) {
                Ok(r) => regs[d as usize] = r,
                Err(e) => fail!(e),
            },
            Op::Cvta { to, space, bits, d, a } => {
                let x = v!(a);
                let window = match space {
                    Space::Shared => env.windows.shared,
                    Space::Local => env.windows.local,
                    Space::Const => CONST_WINDOW,
                    _ => 0,
                };
                let r = if to { x.wrapping_sub(window) } else { (x & 0xFFFF_FFFF).wrapping_add(window) };
                regs[d as usize] = if space == Space::Global { x } else { r } & mask(bits);
            }
            Op::Ld { space, ty, n, d, addr } => {
                let at = v!(addr.base).wrapping_add(addr.offset as u64);
                let size = ty.bytes() as usize;
                let total = size * n as usize;
                let mut buf = [0u8; 32];
                if let Err(e) = load(env, local, shared, space, at, &mut buf[..total]) {
                    fail_or_stall!(e);
                }
                for (k, dst) in d.iter().enumerate().take(n as usize) {
                    if let Some(r) = dst {
                        let mut b8 = [0u8; 8];
                        b8[..size].copy_from_slice(&buf[k * size..(k + 1) * size]);
                        let raw = u64::from_le_bytes(b8);
                        regs[*r as usize] = if ty.is_signed() { sext(raw, ty.bits()) as u64 } else { raw };
                    }
                }
            }
            Op::St { space, ty, n, a, addr } => {
                let at = v!(addr.base).wrapping_add(addr.offset as u64);
                let size = ty.bytes() as usize;
                let total = size * n as usize;
                let mut buf = [0u8; 32];
                for k in 0..n as usize {
                    buf[k * size..(k + 1) * size].copy_from_slice(&v!(a[k]).to_le_bytes()[..size]);
                }
                if let Err(e) = store(env, local, shared, space, at, &buf[..total]) {
                    fail_or_stall!(e);
                }
            }
            Op::Atom { space, op, ty, d, addr, b, c } => {
                let at = v!(addr.base).wrapping_add(addr.offset as u64);
                let (bv, cv) = (v!(b), v!(c));
                let size = ty.bytes() as usize;
                if at % size as u64 != 0 {
                    fail!(ExecError::Misaligned { addr: at, len: size as u32 });
                }
                let (sp, off) = resolve(&env.windows, space, at);
                let old = match sp {
                    Space::Global | Space::Generic => {
                        let mut buf = [0u8; 8];
                        let mut f = |o: &[u8], n: &mut [u8]| {
                            let mut b8 = [0u8; 8];
                            b8[..o.len()].copy_from_slice(o);
                            let new = atom_apply(op, ty, u64::from_le_bytes(b8), bv, cv);
                            let len = n.len();
                            n.copy_from_slice(&new.to_le_bytes()[..len]);
                        };
                        if let Err(fault) = env.mem.atomic(off, &mut buf[..size], &mut f) {
                            stall!(fault);
                        }
                        u64::from_le_bytes(buf)
                    }
                    Space::Shared | Space::Local => {
                        let mem: &mut [u8] = if sp == Space::Shared { shared } else { local };
                        let r = match range(sp, off, size, mem.len()) {
                            Ok(r) => r,
                            Err(e) => fail!(e),
                        };
                        let mut b8 = [0u8; 8];
                        b8[..size].copy_from_slice(&mem[r.clone()]);
                        let old = u64::from_le_bytes(b8);
                        let new = atom_apply(op, ty, old, bv, cv);
                        mem[r].copy_from_slice(&new.to_le_bytes()[..size]);
                        old
                    }
                    _ => fail!(ExecError::OutOfRange { space: sp, addr: at, len: size as u32 }),
                };
                if let Some(d) = d {
                    regs[d as usize] = old;
                }
            }
            Op::Bar { id, count } => {
                let id = v!(id) as u32;
                let count = match count {
                    Some(c) => v!(c) as u32,
                    None => u32::MAX,
                };
                *pc_out = pc as u32 + 1;
                return Ok(State::Barrier { id: id & 15, count });
            }
            Op::Bra { target } => {
                pc = target as usize;
                continue;
            }
            Op::Call { site } => {
                let Some(cs) = env.sites.get(site as usize) else { fail!(ExecError::Unsupported) };
                if stack.iter().any(|(_, s)| env.sites.get(*s as usize).is_some_and(|o| o.callee == cs.callee)) {
                    fail!(ExecError::RecursiveCall);
                }
                for &(from, to, len) in &cs.copies {
                    if let Err(e) = frame_copy(local, from, to, len) {
                        fail!(e);
                    }
                }
                stack.push((pc as u32 + 1, site));
                pc = cs.target as usize;
                continue;
            }
            Op::Ret => match stack.pop() {
                Some((back, site)) => {
                    if let Some((from, to, len)) = env.sites.get(site as usize).and_then(|s| s.ret) {
                        if let Err(e) = frame_copy(local, from, to, len) {
                            fail!(e);
                        }
                    }
                    pc = back as usize;
                    continue;
                }
                None => {
                    *pc_out = pc as u32;
                    return Ok(State::Exited);
                }
            },
            Op::Exit => {
                *pc_out = pc as u32;
                return Ok(State::Exited);
            }
            Op::Shfl { .. } | Op::Vote { .. } | Op::Activemask { .. } => {
                *pc_out = pc as u32;
                return Ok(State::Collective);
            }
            Op::Nop => {}
        }
        pc += 1;
    }
}
