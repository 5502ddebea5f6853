//! The pre-decoded instruction list the interpreter runs: registers are indexes into a thread's
//! flat `u64` register file, labels are instruction indexes, symbols are offsets in their state
//! space. Nothing here is a string, so execution never touches text.

/// A register index into the thread's register file.
pub type Reg = u32;

/// The value types of PTX instructions (`.b8` .. `.f64`, `.pred`). Every register holds 64 bits;
/// a narrower result is stored zero-extended, and a narrower source uses the low bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    B8,
    B16,
    B32,
    B64,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F32,
    F64,
    Pred,
}

impl Ty {
    pub fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "b8" => Ty::B8,
            "b16" => Ty::B16,
            "b32" => Ty::B32,
            "b64" => Ty::B64,
            "u8" => Ty::U8,
            "u16" => Ty::U16,
            "u32" => Ty::U32,
            "u64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            "pred" => Ty::Pred,
            _ => return None,
        })
    }

    /// Size in bytes (a predicate counts as one).
    pub fn bytes(self) -> u32 {
        match self {
            Ty::B8 | Ty::U8 | Ty::S8 | Ty::Pred => 1,
            Ty::B16 | Ty::U16 | Ty::S16 | Ty::F16 => 2,
            Ty::B32 | Ty::U32 | Ty::S32 | Ty::F32 => 4,
            Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => 8,
        }
    }

    pub fn bits(self) -> u32 {
        self.bytes() * 8
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::F32 | Ty::F64)
    }
}

/// A source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Reg(Reg),
    /// An immediate, already converted to the instruction's type (float immediates as bits),
    /// or a symbol's address in its own state space.
    Imm(u64),
    /// The address of a module `.global` variable: index into the launch's symbol table.
    Global(u32),
}

/// A memory operand `[base+offset]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addr {
    pub base: Src,
    pub offset: i64,
}

/// State spaces of loads, stores and atomics. `Generic` resolves through the windows of
/// [`super::SHARED_WINDOW`], [`super::LOCAL_WINDOW`] and [`super::CONST_WINDOW`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Generic,
    Global,
    Shared,
    Local,
    Param,
    Const,
}

/// Integer binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    AddSat,
    SubSat,
    MulLo,
    MulHi,
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// Integer unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntUn {
    Not,
    Cnot,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
    /// `bfind`: position of the most significant non-sign bit, or all ones.
    Bfind,
}

/// `mad` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadMode {
    Lo,
    Hi,
    Wide,
}

/// Float binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
}

/// Float unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatUn {
    Neg,
    Abs,
    Sqrt,
    Rcp,
    Rsqrt,
    Sin,
    Cos,
    Ex2,
    Lg2,
}

/// Rounding modifiers. `Rn` is the default where PTX requires one and none is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// No modifier (for `.approx`/`.full` float ops and exact conversions).
    None,
    Rn,
    Rz,
    Rm,
    Rp,
    /// Round to an integral value: `.rni`, `.rzi`, `.rmi`, `.rpi`.
    Rni,
    Rzi,
    Rmi,
    Rpi,
    /// `.approx` (and `.full` for `div`): within the ISA's documented error.
    Approx,
}

/// Comparison operators of `setp`/`set`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// Predicate combining operators (`setp.lt.and`, `and.pred` is an [`IntOp`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Atomic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// Special registers (`%tid.x` ...). Components are 0 (x), 1 (y), 2 (z).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    /// `%clock`, `%clock64`, `%globaltimer`: the thread's executed-instruction count, so runs are
    /// deterministic and time still advances.
    Clock,
    Clock64,
    LanemaskEq,
    LanemaskLt,
    LanemaskLe,
    LanemaskGt,
    LanemaskGe,
    DynamicSmemSize,
    TotalSmemSize,
}

/// One decoded operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// `mov`, and every plain copy: `d = a` truncated to `bits`.
    Mov {
        d: Reg,
        a: Src,
        bits: u32,
    },
    MovSreg {
        d: Reg,
        s: Sreg,
    },
    /// `mov.b64 %rd, {%r1, %r2}` (parts of `part_bits` each, lowest first).
    Pack {
        d: Reg,
        parts: [Src; 4],
        n: u8,
        part_bits: u32,
    },
    /// `mov.b64 {%r1, %r2}, %rd`; a sink `_` part is `None`.
    Unpack {
        d: [Option<Reg>; 4],
        n: u8,
        part_bits: u32,
        a: Src,
    },
    Int {
        op: IntOp,
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
    },
    IntUn {
        op: IntUn,
        ty: Ty,
        d: Reg,
        a: Src,
    },
    Mad {
        mode: MadMode,
        sat: bool,
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    Bfe {
        ty: Ty,
        d: Reg,
        a: Src,
        pos: Src,
        len: Src,
    },
    Bfi {
        ty: Ty,
        d: Reg,
        f: Src,
        b: Src,
        pos: Src,
        len: Src,
    },
    Prmt {
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// Funnel shift `shf.{l,r}.{wrap,clamp}.b32`.
    Shf {
        left: bool,
        wrap: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    Float {
        op: FloatOp,
        ty: Ty,
        rnd: Round,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
    },
    FloatUn {
        op: FloatUn,
        ty: Ty,
        rnd: Round,
        ftz: bool,
        d: Reg,
        a: Src,
    },
    /// `copysign`: `b` with the sign of `a`.
    Copysign {
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
    },
    Fma {
        ty: Ty,
        rnd: Round,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `setp`: `d = (a cmp b) combine c`, `d2 = !(a cmp b) combine c`.
    Setp {
        cmp: Cmp,
        ty: Ty,
        ftz: bool,
        d: Reg,
        d2: Option<Reg>,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, Src, bool)>,
    },
    /// `set`: like `setp` but writes all ones / 1.0f to an integer / float register.
    Set {
        cmp: Cmp,
        ty: Ty,
        dty: Ty,
        ftz: bool,
        d: Reg,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, Src, bool)>,
    },
    Selp {
        bits: u32,
        d: Reg,
        a: Src,
        b: Src,
        p: Src,
    },
    Cvt {
        dty: Ty,
        sty: Ty,
        rnd: Round,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Src,
    },
    /// `cvta` (to generic) and `cvta.to` (from generic), `bits` 32 or 64.
    Cvta {
        to: bool,
        space: Space,
        bits: u32,
        d: Reg,
        a: Src,
    },
    Ld {
        space: Space,
        ty: Ty,
        n: u8,
        d: [Option<Reg>; 4],
        addr: Addr,
    },
    St {
        space: Space,
        ty: Ty,
        n: u8,
        a: [Src; 4],
        addr: Addr,
    },
    /// `atom` (`d` some) and `red` (`d` none).
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: Option<Reg>,
        addr: Addr,
        b: Src,
        c: Src,
    },
    /// `bar.sync` / `barrier.sync` (with `.aligned` or not): barrier `id`, thread `count` (none:
    /// every thread of the CTA).
    Bar {
        id: Src,
        count: Option<Src>,
    },
    Bra {
        target: u32,
    },
    /// `call` to a `.func`: index of the kernel's resolved call site (callee, argument copies).
    Call {
        site: u32,
    },
    /// `ret`: back to the caller, or (in the kernel itself) the thread's end.
    Ret,
    /// `exit`: the thread's end, from any depth.
    Exit,
    /// `shfl.sync`: warp-collective.
    Shfl {
        mode: ShflMode,
        d: Reg,
        dp: Option<Reg>,
        a: Src,
        b: Src,
        c: Src,
        mask: Src,
    },
    /// `vote.sync`: warp-collective.
    Vote {
        mode: VoteMode,
        d: Reg,
        a: Src,
        negate: bool,
        mask: Src,
    },
    /// `activemask`: warp-collective (the lanes that arrive together).
    Activemask {
        d: Reg,
    },
    /// `membar`, `fence`, `bar.warp.sync`-free hints: no effect in a model that runs one thread
    /// at a time and makes every store visible at once (see the module docs).
    Nop,
}

impl Op {
    /// Whether the warp must be converged to execute this (see the module docs).
    pub fn is_warp_collective(&self) -> bool {
        matches!(self, Op::Shfl { .. } | Op::Vote { .. } | Op::Activemask { .. })
    }
}

/// An instruction: guard predicate, operation, source line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inst {
    /// `@%p` (false) or `@!%p` (true).
    pub guard: Option<(Reg, bool)>,
    pub op: Op,
}
