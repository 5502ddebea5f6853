//! Instructions: each opcode and its modifiers and operands decoded into an [`Inst`], and the
//! special registers.

use super::*;

impl FunctionBuilder<'_> {
    pub(super) fn decode_op(
        &self,
        cx: &Cx,
        opcode: &str,
        ops: &[&str],
        labels: &BTreeMap<&str, u32>,
        link: &mut Link,
    ) -> Result<Op, PtxError> {
        let parts: Vec<&str> = opcode.split('.').collect();
        let name = parts[0];
        let mut m = Mods::new(&parts[1..]);
        let op = match name {
            "mov" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 2)?;
                let bits = if ty == Ty::Pred { 64 } else { ty.bits() };
                if ops[0].starts_with('{') {
                    let parts = self.vector(cx, ops[0])?;
                    let n = parts.len();
                    if !(n == 2 || n == 4) || ty.bits() % n as u32 != 0 {
                        return Err(cx.bad_operand(ops[0]));
                    }
                    let mut d = [None; 4];
                    for (k, p) in parts.iter().enumerate() {
                        d[k] = if *p == "_" { None } else { Some(self.dst(cx, p)?) };
                    }
                    Op::Unpack { d, n: n as u8, part_bits: ty.bits() / n as u32, a: self.src(cx, ops[1], ty)? }
                } else if ops[1].starts_with('{') {
                    let parts = self.vector(cx, ops[1])?;
                    let n = parts.len();
                    if !(n == 2 || n == 4) || ty.bits() % n as u32 != 0 {
                        return Err(cx.bad_operand(ops[1]));
                    }
                    let part_ty = match ty.bits() / n as u32 {
                        8 => Ty::B8,
                        16 => Ty::B16,
                        _ => Ty::B32,
                    };
                    let mut srcs = [Src::Imm(0); 4];
                    for (k, p) in parts.iter().enumerate() {
                        srcs[k] = self.src(cx, p, part_ty)?;
                    }
                    Op::Pack { d: self.dst(cx, ops[0])?, parts: srcs, n: n as u8, part_bits: ty.bits() / n as u32 }
                } else if let Some(s) = special_reg(ops[1]) {
                    Op::MovSreg { d: self.dst(cx, ops[0])?, s }
                } else if ops[1].starts_with("%") && self.reg(ops[1]).is_none() && ops[1].contains('.') {
                    return Err(cx.unsupported());
                } else {
                    Op::Mov { d: self.dst(cx, ops[0])?, a: self.src(cx, ops[1], ty)?, bits }
                }
            }
            "add" | "sub" | "mul" | "div" | "min" | "max" | "rem" => {
                let rnd = m.rounding();
                let ftz = m.take("ftz");
                let sat = m.take("sat");
                let mode = m.take_any(&[("lo", MadMode::Lo), ("hi", MadMode::Hi), ("wide", MadMode::Wide)]);
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 3)?;
                let d = self.dst(cx, ops[0])?;
                if ty.is_float() {
                    if ty == Ty::F16 || mode.is_some() || name == "rem" {
                        return Err(cx.unsupported());
                    }
                    let op = match name {
                        "add" => FloatOp::Add,
                        "sub" => FloatOp::Sub,
                        "mul" => FloatOp::Mul,
                        "div" => FloatOp::Div,
                        "min" => FloatOp::Min,
                        _ => FloatOp::Max,
                    };
                    let rnd = match (op, rnd) {
                        (FloatOp::Div, Round::None) if ty == Ty::F32 => return Err(cx.unsupported()),
                        (_, Round::None) => Round::Rn,
                        (_, Round::Rn | Round::Rz | Round::Rm | Round::Rp) => rnd,
                        (FloatOp::Div, Round::Approx) if ty == Ty::F32 => rnd,
                        _ => return Err(cx.unsupported()),
                    };
                    Op::Float { op, ty, rnd, ftz, sat, d, a: self.src(cx, ops[1], ty)?, b: self.src(cx, ops[2], ty)? }
                } else {
                    if ftz || rnd != Round::None || ty == Ty::Pred {
                        return Err(cx.unsupported());
                    }
                    let op = match (name, mode, sat) {
                        ("add", None, false) => IntOp::Add,
                        ("add", None, true) if ty == Ty::S32 => IntOp::AddSat,
                        ("sub", None, false) => IntOp::Sub,
                        ("sub", None, true) if ty == Ty::S32 => IntOp::SubSat,
                        ("mul", Some(MadMode::Lo), false) => IntOp::MulLo,
                        ("mul", Some(MadMode::Hi), false) => IntOp::MulHi,
                        ("mul", Some(MadMode::Wide), false) if ty.bits() <= 32 => IntOp::MulWide,
                        ("div", None, false) => IntOp::Div,
                        ("rem", None, false) => IntOp::Rem,
                        ("min", None, false) => IntOp::Min,
                        ("max", None, false) => IntOp::Max,
                        _ => return Err(cx.unsupported()),
                    };
                    Op::Int { op, ty, d, a: self.src(cx, ops[1], ty)?, b: self.src(cx, ops[2], ty)? }
                }
            }
            "mad" | "fma" => {
                let rnd = m.rounding();
                let ftz = m.take("ftz");
                let sat = m.take("sat");
                let mode = m.take_any(&[("lo", MadMode::Lo), ("hi", MadMode::Hi), ("wide", MadMode::Wide)]);
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 4)?;
                let d = self.dst(cx, ops[0])?;
                if ty.is_float() {
                    if ty == Ty::F16 || mode.is_some() || !matches!(rnd, Round::Rn | Round::None) {
                        return Err(cx.unsupported());
                    }
                    let (a, b, c) = (self.src(cx, ops[1], ty)?, self.src(cx, ops[2], ty)?, self.src(cx, ops[3], ty)?);
                    Op::Fma { ty, rnd: Round::Rn, ftz, sat, d, a, b, c }
                } else {
                    let mode = mode.ok_or_else(|| cx.unsupported())?;
                    if ftz
                        || rnd != Round::None
                        || (sat && !(mode == MadMode::Hi && ty == Ty::S32))
                        || (mode == MadMode::Wide && ty.bits() > 32)
                    {
                        return Err(cx.unsupported());
                    }
                    let cty = if mode == MadMode::Wide { wide_of(ty) } else { ty };
                    let (a, b, c) = (self.src(cx, ops[1], ty)?, self.src(cx, ops[2], ty)?, self.src(cx, ops[3], cty)?);
                    Op::Mad { mode, sat, ty, d, a, b, c }
                }
            }
            "and" | "or" | "xor" | "shl" | "shr" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 3)?;
                let op = match name {
                    "and" => IntOp::And,
                    "or" => IntOp::Or,
                    "xor" => IntOp::Xor,
                    "shl" => IntOp::Shl,
                    _ => IntOp::Shr,
                };
                let bty = if matches!(op, IntOp::Shl | IntOp::Shr) { Ty::U32 } else { ty };
                Op::Int {
                    op,
                    ty,
                    d: self.dst(cx, ops[0])?,
                    a: self.src(cx, ops[1], ty)?,
                    b: self.src(cx, ops[2], bty)?,
                }
            }
            "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 2)?;
                let op = match name {
                    "not" => IntUn::Not,
                    "cnot" => IntUn::Cnot,
                    "popc" => IntUn::Popc,
                    "clz" => IntUn::Clz,
                    "brev" => IntUn::Brev,
                    _ => IntUn::Bfind,
                };
                Op::IntUn { op, ty, d: self.dst(cx, ops[0])?, a: self.src(cx, ops[1], ty)? }
            }
            "neg" | "abs" | "sqrt" | "rcp" | "rsqrt" | "sin" | "cos" | "ex2" | "lg2" => {
                let rnd = m.rounding();
                let ftz = m.take("ftz");
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 2)?;
                let d = self.dst(cx, ops[0])?;
                if !ty.is_float() {
                    let op = match name {
                        "neg" => IntUn::Neg,
                        "abs" => IntUn::Abs,
                        _ => return Err(cx.unsupported()),
                    };
                    if ftz || rnd != Round::None {
                        return Err(cx.unsupported());
                    }
                    Op::IntUn { op, ty, d, a: self.src(cx, ops[1], ty)? }
                } else {
                    if ty == Ty::F16 {
                        return Err(cx.unsupported());
                    }
                    let op = match name {
                        "neg" => FloatUn::Neg,
                        "abs" => FloatUn::Abs,
                        "sqrt" => FloatUn::Sqrt,
                        "rcp" => FloatUn::Rcp,
                        "rsqrt" => FloatUn::Rsqrt,
                        "sin" => FloatUn::Sin,
                        "cos" => FloatUn::Cos,
                        "ex2" => FloatUn::Ex2,
                        _ => FloatUn::Lg2,
                    };
                    let ok = match op {
                        FloatUn::Neg | FloatUn::Abs => rnd == Round::None,
                        FloatUn::Sqrt | FloatUn::Rcp => {
                            matches!(rnd, Round::Rn | Round::Rz | Round::Rm | Round::Rp)
                                || (rnd == Round::Approx && (ty == Ty::F32 || (op == FloatUn::Rcp && ftz)))
                        }
                        FloatUn::Rsqrt => rnd == Round::Approx,
                        _ => rnd == Round::Approx && ty == Ty::F32,
                    };
                    if !ok {
                        return Err(cx.unsupported());
                    }
                    Op::FloatUn { op, ty, rnd, ftz, d, a: self.src(cx, ops[1], ty)? }
                }
            }
            "copysign" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if !matches!(ty, Ty::F32 | Ty::F64) {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 3)?;
                Op::Copysign {
                    ty,
                    d: self.dst(cx, ops[0])?,
                    a: self.src(cx, ops[1], ty)?,
                    b: self.src(cx, ops[2], ty)?,
                }
            }
            "bfe" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 4)?;
                Op::Bfe {
                    ty,
                    d: self.dst(cx, ops[0])?,
                    a: self.src(cx, ops[1], ty)?,
                    pos: self.src(cx, ops[2], Ty::U32)?,
                    len: self.src(cx, ops[3], Ty::U32)?,
                }
            }
            "bfi" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 5)?;
                Op::Bfi {
                    ty,
                    d: self.dst(cx, ops[0])?,
                    f: self.src(cx, ops[1], ty)?,
                    b: self.src(cx, ops[2], ty)?,
                    pos: self.src(cx, ops[3], Ty::U32)?,
                    len: self.src(cx, ops[4], Ty::U32)?,
                }
            }
            "prmt" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if ty != Ty::B32 {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 4)?;
                Op::Prmt {
                    d: self.dst(cx, ops[0])?,
                    a: self.src(cx, ops[1], ty)?,
                    b: self.src(cx, ops[2], ty)?,
                    c: self.src(cx, ops[3], ty)?,
                }
            }
            "shf" => {
                let left = match (m.take("l"), m.take("r")) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => return Err(cx.unsupported()),
                };
                let wrap = match (m.take("wrap"), m.take("clamp")) {
                    (true, false) => true,
                    (false, true) => false,
                    _ => return Err(cx.unsupported()),
                };
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if ty != Ty::B32 {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 4)?;
                Op::Shf {
                    left,
                    wrap,
                    d: self.dst(cx, ops[0])?,
                    a: self.src(cx, ops[1], ty)?,
                    b: self.src(cx, ops[2], ty)?,
                    c: self.src(cx, ops[3], Ty::U32)?,
                }
            }
            "setp" | "set" => {
                let cmp = m.take_any(CMPS).ok_or_else(|| cx.unsupported())?;
                let boolop = m.take_any(BOOL_OPS);
                let ftz = m.take("ftz");
                let tys = m.types();
                m.done(cx)?;
                let (dty, ty) = match (name, tys.as_slice()) {
                    ("setp", [t]) => (Ty::Pred, *t),
                    ("set", [d, s]) => (*d, *s),
                    _ => return Err(cx.unsupported()),
                };
                if ty == Ty::F16 || ty == Ty::Pred || dty == Ty::Pred && name == "set" {
                    return Err(cx.unsupported());
                }
                let float_only = matches!(
                    cmp,
                    Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Num | Cmp::Nan
                );
                let int_only = matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs);
                if (float_only && !ty.is_float()) || (int_only && ty.is_float()) {
                    return Err(cx.unsupported());
                }
                let n = if boolop.is_some() { 4 } else { 3 };
                cx.operands(ops, n)?;
                let combine = match boolop {
                    Some(b) => {
                        let (p, neg) = self.pred_src(cx, ops[3])?;
                        Some((b, p, neg))
                    }
                    None => None,
                };
                let a = self.src(cx, ops[1], ty)?;
                let b = self.src(cx, ops[2], ty)?;
                if name == "setp" {
                    let (d, d2) = match ops[0].split_once('|') {
                        Some((p, q)) => (self.dst(cx, p.trim())?, Some(self.dst(cx, q.trim())?)),
                        None => (self.dst(cx, ops[0])?, None),
                    };
                    Op::Setp { cmp, ty, ftz, d, d2, a, b, combine }
                } else {
                    Op::Set { cmp, ty, dty, ftz, d: self.dst(cx, ops[0])?, a, b, combine }
                }
            }
            "selp" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 4)?;
                Op::Selp {
                    bits: ty.bits(),
                    d: self.dst(cx, ops[0])?,
                    a: self.src(cx, ops[1], ty)?,
                    b: self.src(cx, ops[2], ty)?,
                    p: self.src(cx, ops[3], Ty::Pred)?,
                }
            }
            "cvt" => {
                let rnd = m.rounding();
                let ftz = m.take("ftz");
                let sat = m.take("sat");
                let tys = m.types();
                m.done(cx)?;
                let [dty, sty] = tys[..] else { return Err(cx.unsupported()) };
                if dty == Ty::F16 || sty == Ty::F16 || dty == Ty::Pred || sty == Ty::Pred || rnd == Round::Approx {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 2)?;
                Op::Cvt { dty, sty, rnd, ftz, sat, d: self.dst(cx, ops[0])?, a: self.src(cx, ops[1], sty)? }
            }
            "cvta" => {
                let to = m.take("to");
                let space = m.space();
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if !matches!(space, Space::Global | Space::Shared | Space::Local | Space::Const)
                    || !matches!(ty, Ty::U32 | Ty::U64)
                {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 2)?;
                Op::Cvta { to, space, bits: ty.bits(), d: self.dst(cx, ops[0])?, a: self.src(cx, ops[1], ty)? }
            }
            "ld" | "st" => {
                let mut space = m.space();
                let n = m.take_any(&[("v2", 2u8), ("v4", 4u8)]).unwrap_or(1);
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                cx.operands(ops, 2)?;
                let (regs_text, addr_text) = if name == "ld" { (ops[0], ops[1]) } else { (ops[1], ops[0]) };
                let (addr, frame) = self.addr(cx, addr_text)?;
                if space == Space::Param && frame {
                    space = Space::Local;
                }
                if ty == Ty::Pred || (space == Space::Param && name == "st") {
                    return Err(cx.unsupported());
                }
                let items: Vec<&str> = if n == 1 { vec![regs_text] } else { self.vector(cx, regs_text)? };
                if items.len() != n as usize {
                    return Err(cx.bad_operand(regs_text));
                }
                if name == "ld" {
                    let mut d = [None; 4];
                    for (k, r) in items.iter().enumerate() {
                        d[k] = if *r == "_" { None } else { Some(self.dst(cx, r)?) };
                    }
                    Op::Ld { space, ty, n, d, addr }
                } else {
                    let mut a = [Src::Imm(0); 4];
                    for (k, r) in items.iter().enumerate() {
                        a[k] = self.src(cx, r, ty)?;
                    }
                    Op::St { space, ty, n, a, addr }
                }
            }
            "atom" | "red" => {
                let space = m.space();
                let op = m
                    .take_any(&[
                        ("add", AtomOp::Add),
                        ("min", AtomOp::Min),
                        ("max", AtomOp::Max),
                        ("inc", AtomOp::Inc),
                        ("dec", AtomOp::Dec),
                        ("and", AtomOp::And),
                        ("or", AtomOp::Or),
                        ("xor", AtomOp::Xor),
                        ("exch", AtomOp::Exch),
                        ("cas", AtomOp::Cas),
                    ])
                    .ok_or_else(|| cx.unsupported())?;
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if !matches!(space, Space::Generic | Space::Global | Space::Shared) || ty.bits() < 32 {
                    return Err(cx.unsupported());
                }
                let type_ok = match op {
                    AtomOp::Add => !matches!(ty, Ty::B32 | Ty::B64),
                    AtomOp::Min | AtomOp::Max => !ty.is_float() && !matches!(ty, Ty::B32 | Ty::B64),
                    AtomOp::Inc | AtomOp::Dec => ty == Ty::U32,
                    AtomOp::And | AtomOp::Or | AtomOp::Xor | AtomOp::Exch | AtomOp::Cas => {
                        matches!(ty, Ty::B32 | Ty::B64)
                    }
                };
                if !type_ok {
                    return Err(cx.unsupported());
                }
                let (d, rest) = if name == "atom" {
                    let n = if op == AtomOp::Cas { 4 } else { 3 };
                    cx.operands(ops, n)?;
                    (Some(self.dst(cx, ops[0])?), &ops[1..])
                } else {
                    if op == AtomOp::Cas {
                        return Err(cx.unsupported());
                    }
                    cx.operands(ops, 2)?;
                    (None, ops)
                };
                let (addr, _) = self.addr(cx, rest[0])?;
                let b = self.src(cx, rest[1], ty)?;
                let c = if op == AtomOp::Cas { self.src(cx, rest[2], ty)? } else { Src::Imm(0) };
                Op::Atom { space, op, ty, d, addr, b, c }
            }
            "bar" | "barrier" => {
                if m.take("warp") {
                    // `bar.warp.sync mask`: the warp converges at its next collective anyway.
                    m.done(cx)?;
                    cx.operands(ops, 1)?;
                    self.src(cx, ops[0], Ty::U32)?;
                    Op::Nop
                } else {
                    if name == "bar" && m.list.is_empty() && !parts.contains(&"sync") {
                        return Err(cx.unsupported());
                    }
                    m.done(cx)?;
                    if ops.is_empty() || ops.len() > 2 {
                        return Err(cx.bad_operand(&ops.join(", ")));
                    }
                    let id = self.src(cx, ops[0], Ty::U32)?;
                    let count = if ops.len() == 2 { Some(self.src(cx, ops[1], Ty::U32)?) } else { None };
                    Op::Bar { id, count }
                }
            }
            "bra" => {
                m.done(cx)?;
                cx.operands(ops, 1)?;
                let target = labels.get(ops[0]).copied().ok_or_else(|| {
                    err(
                        cx.line,
                        ParseError::UndefinedLabel { instruction: opcode.to_string(), label: ops[0].to_string() },
                    )
                })?;
                Op::Bra { target }
            }
            "ret" | "exit" => {
                m.done(cx)?;
                if !ops.is_empty() {
                    return Err(cx.bad_operand(ops[0]));
                }
                if name == "ret" {
                    Op::Ret
                } else {
                    Op::Exit
                }
            }
            "call" => {
                m.done(cx)?;
                // `call[.uni] [(ret),] name, (args)`; function pointers (a register or a
                // prototype label) are not supported.
                let (ret_text, rest) = match ops.first() {
                    Some(o) if o.starts_with('(') => (Some(*o), &ops[1..]),
                    _ => (None, ops),
                };
                let (callee, args_text) = match rest {
                    [c] => (*c, "()"),
                    [c, a] => (*c, *a),
                    _ => return Err(cx.unsupported()),
                };
                let callee = self
                    .funcs
                    .iter()
                    .position(|f| f.name == callee && !f.is_entry)
                    .ok_or_else(|| cx.undefined_symbol(callee))? as u32;
                let slot = |s: &str| -> Result<(u32, u32), PtxError> {
                    match self.symbols.get(s) {
                        Some(Symbol::Frame(o, size)) => Ok((*o as u32, *size)),
                        _ => Err(cx.bad_operand(s)),
                    }
                };
                let list = |t: &str| -> Result<Vec<(u32, u32)>, PtxError> {
                    let inner =
                        t.strip_prefix('(').and_then(|r| r.strip_suffix(')')).ok_or_else(|| cx.bad_operand(t))?;
                    inner.split(',').map(str::trim).filter(|a| !a.is_empty()).map(&slot).collect()
                };
                let args = list(args_text)?;
                let ret = match ret_text {
                    Some(t) => match list(t)?.as_slice() {
                        [r] => Some(*r),
                        _ => return Err(cx.bad_operand(t)),
                    },
                    None => None,
                };
                let site = link.calls.len() as u32;
                link.calls.push(PendingCall { line: cx.line, opcode: opcode.to_string(), callee, args, ret });
                Op::Call { site }
            }
            "trap" | "brkpt" => return Err(cx.unsupported()),
            "membar" | "fence" | "nanosleep" | "pmevent" => Op::Nop,
            "shfl" => {
                if !parts.contains(&"sync") {
                    return Err(cx.unsupported());
                }
                let mode = m
                    .take_any(&[
                        ("up", ShflMode::Up),
                        ("down", ShflMode::Down),
                        ("bfly", ShflMode::Bfly),
                        ("idx", ShflMode::Idx),
                    ])
                    .ok_or_else(|| cx.unsupported())?;
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if ty != Ty::B32 {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 5)?;
                let (d, dp) = match ops[0].split_once('|') {
                    Some((a, p)) => (self.dst(cx, a.trim())?, Some(self.dst(cx, p.trim())?)),
                    None => (self.dst(cx, ops[0])?, None),
                };
                Op::Shfl {
                    mode,
                    d,
                    dp,
                    a: self.src(cx, ops[1], Ty::B32)?,
                    b: self.src(cx, ops[2], Ty::U32)?,
                    c: self.src(cx, ops[3], Ty::U32)?,
                    mask: self.src(cx, ops[4], Ty::U32)?,
                }
            }
            "vote" if parts.contains(&"sync") => {
                // `.uni` is also the branch hint the modifier filter drops: look for it first.
                let mode = if parts.contains(&"uni") {
                    VoteMode::Uni
                } else {
                    m.take_any(&[("all", VoteMode::All), ("any", VoteMode::Any), ("ballot", VoteMode::Ballot)])
                        .ok_or_else(|| cx.unsupported())?
                };
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if (mode == VoteMode::Ballot) != (ty == Ty::B32) || !matches!(ty, Ty::B32 | Ty::Pred) {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 3)?;
                let (a, negate) = self.pred_src(cx, ops[1])?;
                Op::Vote { mode, d: self.dst(cx, ops[0])?, a, negate, mask: self.src(cx, ops[2], Ty::U32)? }
            }
            "activemask" => {
                let ty = m.one_type(cx)?;
                m.done(cx)?;
                if ty != Ty::B32 {
                    return Err(cx.unsupported());
                }
                cx.operands(ops, 1)?;
                Op::Activemask { d: self.dst(cx, ops[0])? }
            }
            _ if KNOWN_UNSUPPORTED.contains(&name) => return Err(cx.unsupported()),
            _ => return Err(err(cx.line, ParseError::UnknownInstruction(opcode.to_string()))),
        };
        Ok(op)
    }
}

/// The type `mul.wide`/`mad.wide` produce from `ty`.
pub(crate) fn wide_of(ty: Ty) -> Ty {
    match ty {
        Ty::S16 => Ty::S32,
        Ty::U16 | Ty::B16 => Ty::U32,
        Ty::S32 => Ty::S64,
        _ => Ty::U64,
    }
}

pub(super) fn special_reg(s: &str) -> Option<Sreg> {
    let comp = |c: &str| match c {
        "x" => Some(0u8),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    if let Some((base, c)) = s.split_once('.') {
        let c = comp(c)?;
        return Some(match base {
            "%tid" => Sreg::Tid(c),
            "%ntid" => Sreg::Ntid(c),
            "%ctaid" => Sreg::Ctaid(c),
            "%nctaid" => Sreg::Nctaid(c),
            _ => return None,
        });
    }
    Some(match s {
        "%laneid" => Sreg::LaneId,
        "%warpid" => Sreg::WarpId,
        "%nwarpid" => Sreg::NWarpId,
        "%smid" => Sreg::SmId,
        "%nsmid" => Sreg::NSmId,
        "%gridid" => Sreg::GridId,
        "%clock" => Sreg::Clock,
        "%clock64" | "%globaltimer" => Sreg::Clock64,
        "%lanemask_eq" => Sreg::LanemaskEq,
        "%lanemask_lt" => Sreg::LanemaskLt,
        "%lanemask_le" => Sreg::LanemaskLe,
        "%lanemask_gt" => Sreg::LanemaskGt,
        "%lanemask_ge" => Sreg::LanemaskGe,
        "%dynamic_smem_size" => Sreg::DynamicSmemSize,
        "%total_smem_size" => Sreg::TotalSmemSize,
        _ => return None,
    })
}
