//! Functions: the per-function decoder state (registers, symbols, frames), the statement loop,
//! and the context and modifier helpers of instruction decoding.

use super::*;

#[derive(Clone, Copy)]
pub(super) enum Symbol {
    /// An address in its own state space (shared, local, const, param offsets).
    Offset(u64),
    /// A module `.global` variable.
    Global(u32),
    /// A `.param` of a `.func` or of a call site: a slot in the thread's local memory (offset,
    /// size), so `ld.param`/`st.param` on it become local accesses.
    Frame(u64, u32),
}

pub(super) struct FunctionBuilder<'f> {
    pub(super) params: Vec<Param>,
    /// A `.func`'s parameter and return slots in local memory.
    pub(super) formals: Vec<(u32, u32)>,
    pub(super) ret: Option<(u32, u32)>,
    pub(super) funcs: &'f [RawFunc],
    /// Where this function's instructions start in the kernel's code.
    pub(super) pc_base: u32,
    pub(super) param_size: u32,
    /// `%r<32>` style declarations: prefix -> (first index, count).
    pub(super) ranged: BTreeMap<String, (u32, u32)>,
    pub(super) single: BTreeMap<String, u32>,
    pub(super) num_regs: u32,
    pub(super) symbols: BTreeMap<String, Symbol>,
    pub(super) local_size: u32,
}

impl<'f> FunctionBuilder<'f> {
    pub(super) fn new(
        line: u32,
        header: &str,
        scope: &ModuleScope,
        shared: &BTreeMap<String, u32>,
        dyn_base: u32,
        link: &mut Link,
        funcs: &'f [RawFunc],
    ) -> Result<Self, PtxError> {
        let bad = || err(line, ParseError::BadDirective(format!("function header `{header}`")));
        let (_, is_entry) = header_name(line, header)?;
        // `[.visible] .entry name ( params ) [performance directives]`, or
        // `.func [(ret)] name ( params )`.
        let kw = if is_entry { ".entry" } else { ".func" };
        let after = &header[header.find(kw).ok_or_else(bad)? + kw.len()..];
        let mut rest = after.trim_start();
        let mut ret_decl = None;
        if let Some(r) = rest.strip_prefix('(') {
            let close = r.find(')').ok_or_else(bad)?;
            ret_decl = Some(&r[..close]);
            rest = r[close + 1..].trim_start();
        }
        let name_end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
        rest = rest[name_end..].trim_start();
        let (params, param_size) = if let Some(r) = rest.strip_prefix('(') {
            let close = r.find(')').ok_or_else(bad)?;
            parse_params(line, &r[..close])?
        } else {
            (Vec::new(), 0)
        };
        let mut symbols = BTreeMap::new();
        for (n, off) in &scope.shared {
            symbols.insert(n.clone(), Symbol::Offset(*off as u64));
        }
        for (n, _) in &scope.extern_shared {
            symbols.insert(n.clone(), Symbol::Offset(dyn_base as u64));
        }
        for (n, off) in shared {
            symbols.insert(n.clone(), Symbol::Offset(*off as u64));
        }
        for (n, off) in &scope.consts {
            symbols.insert(n.clone(), Symbol::Offset(*off as u64));
        }
        for (n, idx) in &scope.globals {
            symbols.insert(n.clone(), Symbol::Global(*idx));
        }
        let mut local_size = link.local_size;
        let mut formals = Vec::new();
        let mut ret = None;
        if is_entry {
            if ret_decl.is_some() {
                return Err(bad());
            }
            for p in &params {
                symbols.insert(p.name.clone(), Symbol::Offset(p.offset as u64));
            }
        } else {
            // A `.func`'s parameters and return value live in the thread's local memory.
            let mut slot = |p: &Param, symbols: &mut BTreeMap<String, Symbol>| -> Result<(u32, u32), PtxError> {
                let (at, end) = place(line, local_size, p.align, p.size)?;
                local_size = end;
                symbols.insert(p.name.clone(), Symbol::Frame(at as u64, p.size));
                Ok((at, p.size))
            };
            for p in &params {
                formals.push(slot(p, &mut symbols)?);
            }
            if let Some(r) = ret_decl {
                let (rp, _) = parse_params(line, r)?;
                match rp.as_slice() {
                    [] => {}
                    [p] => ret = Some(slot(p, &mut symbols)?),
                    _ => {
                        return Err(err(line, ParseError::Unsupported(format!("several return values in `{header}`"))))
                    }
                }
            }
        }
        Ok(FunctionBuilder {
            params,
            formals,
            ret,
            funcs,
            pc_base: link.code.len() as u32,
            param_size,
            ranged: BTreeMap::new(),
            single: BTreeMap::new(),
            num_regs: link.num_regs,
            symbols,
            local_size,
        })
    }

    pub(super) fn declare_regs(&mut self, line: u32, s: &str) -> Result<(), PtxError> {
        let bad = || err(line, ParseError::BadDirective(s.to_string()));
        let mut words = s.split_whitespace().skip(1).filter(|w| !w.starts_with('.') || w.starts_with(".v"));
        let names: String = words.by_ref().filter(|w| !w.starts_with(".v")).collect::<Vec<_>>().join("");
        for decl in names.split(',').filter(|d| !d.is_empty()) {
            if let Some((prefix, n)) = decl.split_once('<') {
                let n = n.strip_suffix('>').and_then(|n| n.parse::<u32>().ok()).ok_or_else(bad)?;
                if !prefix.starts_with('%') || prefix.len() < 2 {
                    return Err(bad());
                }
                self.ranged.insert(prefix.to_string(), (self.num_regs, n));
                self.num_regs = self.num_regs.checked_add(n).ok_or_else(bad)?;
            } else {
                if !decl.starts_with('%') || decl.len() < 2 {
                    return Err(bad());
                }
                self.single.insert(decl.to_string(), self.num_regs);
                self.num_regs += 1;
            }
            if self.num_regs > 1 << 20 {
                return Err(bad());
            }
        }
        Ok(())
    }

    pub(super) fn reg(&self, name: &str) -> Option<Reg> {
        if let Some(r) = self.single.get(name) {
            return Some(*r);
        }
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let (prefix, num) = name.split_at(name.len() - digits);
        let n: u32 = num.parse().ok()?;
        let (base, count) = self.ranged.get(prefix)?;
        (n < *count).then_some(base + n)
    }

    /// Decodes the body into `link`; returns where the function landed.
    pub(super) fn build(mut self, body: &[Item], link: &mut Link) -> Result<Frame, PtxError> {
        // Pass 1: registers, local variables and label positions. (Shared variables were laid
        // out for the whole kernel; `.param` slots of call sites are bound in order in pass 2,
        // as each call block redeclares `param0`...)
        let mut labels: BTreeMap<&str, u32> = BTreeMap::new();
        let mut count = 0u32;
        for item in body {
            match &item.kind {
                ItemKind::Stmt(s) if s.starts_with('.') => {
                    let first = s.split_whitespace().next().unwrap_or("");
                    match first {
                        ".reg" => self.declare_regs(item.line, s)?,
                        ".loc" | ".pragma" | ".maxntid" | ".reqntid" | ".minnctapersm" | ".maxnreg" | ".param"
                        | ".shared" => {}
                        ".extern" if s.contains(".shared") => {}
                        _ => {
                            let d = parse_var_decl(item.line, s)?;
                            if d.space != "local" {
                                return Err(err(item.line, ParseError::BadDirective(s.clone())));
                            }
                            if !d.init.is_empty() {
                                return Err(err(
                                    item.line,
                                    ParseError::Unsupported(".local variable with an initialiser".into()),
                                ));
                            }
                            let (at, end) = place(item.line, self.local_size, d.align, d.size)?;
                            self.symbols.insert(d.name, Symbol::Offset(at as u64));
                            self.local_size = end;
                        }
                    }
                }
                ItemKind::Stmt(_) => count += 1,
                ItemKind::Label(l) => {
                    if labels.insert(l.as_str(), self.pc_base + count).is_some() {
                        return Err(err(item.line, ParseError::DuplicateLabel(l.clone())));
                    }
                }
                ItemKind::Open(_) | ItemKind::Close => {}
            }
        }

        // Pass 2: instructions, and call-site parameter slots as they are declared.
        for item in body {
            if let ItemKind::Stmt(s) = &item.kind {
                if s.starts_with(".param") {
                    let p = parse_params(item.line, s)?.0;
                    for p in p {
                        let (at, end) = place(item.line, self.local_size, p.align, p.size)?;
                        self.local_size = end;
                        self.symbols.insert(p.name, Symbol::Frame(at as u64, p.size));
                    }
                    continue;
                }
                if s.starts_with('.') {
                    continue;
                }
                let (inst, opcode) = self.decode(item.line, s, &labels, link)?;
                link.code.push(inst);
                link.lines.push(item.line);
                link.opcodes.push(opcode);
            }
        }
        link.num_regs = self.num_regs;
        link.local_size = self.local_size;
        if link.code.len() > u32::MAX as usize / 2 {
            return Err(err(0, ParseError::Unsupported("function too large".into())));
        }
        Ok(Frame { pc: self.pc_base, formals: self.formals, ret: self.ret })
    }

    // -----------------------------------------------------------------------------------------
    // Operands.

    pub(super) fn src(&self, cx: &Cx, s: &str, ty: Ty) -> Result<Src, PtxError> {
        if s.starts_with('%') {
            return self.reg(s).map(Src::Reg).ok_or_else(|| cx.undefined_reg(s));
        }
        if let Some(v) = parse_imm(s, ty) {
            return Ok(Src::Imm(v));
        }
        match self.symbols.get(s) {
            Some(Symbol::Offset(o)) => Ok(Src::Imm(*o)),
            Some(Symbol::Global(g)) => Ok(Src::Global(*g)),
            Some(Symbol::Frame(o, _)) => Ok(Src::Imm(*o)),
            None if s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$') => {
                Err(cx.undefined_symbol(s))
            }
            None => Err(cx.bad_operand(s)),
        }
    }

    pub(super) fn dst(&self, cx: &Cx, s: &str) -> Result<Reg, PtxError> {
        if !s.starts_with('%') {
            return Err(cx.bad_operand(s));
        }
        self.reg(s).ok_or_else(|| cx.undefined_reg(s))
    }

    /// A predicate source, possibly negated (`!%p1`).
    pub(super) fn pred_src(&self, cx: &Cx, s: &str) -> Result<(Src, bool), PtxError> {
        match s.strip_prefix('!') {
            Some(r) => Ok((self.src(cx, r.trim(), Ty::Pred)?, true)),
            None => Ok((self.src(cx, s, Ty::Pred)?, false)),
        }
    }

    /// A memory operand, and whether it names a `.param` slot of a call frame (local memory).
    pub(super) fn addr(&self, cx: &Cx, s: &str) -> Result<(Addr, bool), PtxError> {
        let inner = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')).ok_or_else(|| cx.bad_operand(s))?.trim();
        // `base+off`, `base+-off`, `base-off` or a plain `base` / immediate.
        let split = inner.char_indices().skip(1).find(|(_, c)| *c == '+' || *c == '-').map(|(i, _)| i);
        let (base, offset) = match split {
            Some(i) => {
                let off_text = inner[i..].trim_start_matches('+').trim();
                let off = parse_int(&off_text.replace(' ', "")).ok_or_else(|| cx.bad_operand(s))?;
                let off = i64::try_from(off).map_err(|_| cx.bad_operand(s))?;
                (inner[..i].trim(), off)
            }
            None => (inner, 0),
        };
        if let Some(v) = parse_int(base) {
            return Ok((Addr { base: Src::Imm(v as u64), offset }, false));
        }
        let frame = matches!(self.symbols.get(base), Some(Symbol::Frame(..)));
        Ok((Addr { base: self.src(cx, base, Ty::U64)?, offset }, frame))
    }

    pub(super) fn vector<'a>(&self, cx: &Cx, s: &'a str) -> Result<Vec<&'a str>, PtxError> {
        let inner = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')).ok_or_else(|| cx.bad_operand(s))?;
        Ok(inner.split(',').map(str::trim).collect())
    }

    pub(super) fn decode(
        &self,
        line: u32,
        stmt: &str,
        labels: &BTreeMap<&str, u32>,
        link: &mut Link,
    ) -> Result<(Inst, String), PtxError> {
        let mut rest = stmt.trim();
        let mut guard = None;
        if let Some(g) = rest.strip_prefix('@') {
            let end = g.find(char::is_whitespace).ok_or_else(|| {
                err(line, ParseError::BadOperand { instruction: stmt.to_string(), operand: g.to_string() })
            })?;
            let (neg, p) = match g[..end].strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, &g[..end]),
            };
            let r = self.reg(p).ok_or_else(|| {
                err(line, ParseError::UndefinedRegister { instruction: stmt.to_string(), register: p.to_string() })
            })?;
            guard = Some((r, neg));
            rest = g[end..].trim_start();
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let opcode = &rest[..end];
        let operands = split_commas(rest[end..].trim());
        let cx = Cx { line, opcode };
        let op = self.decode_op(&cx, opcode, &operands, labels, link)?;
        Ok((Inst { guard, op }, opcode.to_string()))
    }
}

/// Context of the instruction being decoded, for errors.
pub(super) struct Cx<'a> {
    pub(super) line: u32,
    pub(super) opcode: &'a str,
}

impl Cx<'_> {
    pub(super) fn bad_operand(&self, s: &str) -> PtxError {
        err(self.line, ParseError::BadOperand { instruction: self.opcode.to_string(), operand: s.to_string() })
    }
    pub(super) fn undefined_reg(&self, s: &str) -> PtxError {
        err(self.line, ParseError::UndefinedRegister { instruction: self.opcode.to_string(), register: s.to_string() })
    }
    pub(super) fn undefined_symbol(&self, s: &str) -> PtxError {
        err(self.line, ParseError::UndefinedSymbol { instruction: self.opcode.to_string(), symbol: s.to_string() })
    }
    pub(super) fn unsupported(&self) -> PtxError {
        err(self.line, ParseError::Unsupported(self.opcode.to_string()))
    }
    pub(super) fn operands(&self, ops: &[&str], n: usize) -> Result<(), PtxError> {
        if ops.len() != n {
            return Err(self.bad_operand(&ops.join(", ")));
        }
        Ok(())
    }
}

/// The modifiers of an opcode, taken one kind at a time by the decoder; whatever is left over
/// makes the instruction unsupported.
pub(super) struct Mods<'a> {
    pub(super) list: Vec<&'a str>,
}

/// Modifiers with no effect in this model: memory ordering and scope (every access is
/// immediately visible), cache operators and eviction hints, `.uni`/`.aligned` promises.
pub(super) const IGNORED_MODS: &[&str] = &[
    "uni", "aligned", "nc", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "weak", "cta", "gpu", "sys",
    "cluster", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "sync",
];

impl<'a> Mods<'a> {
    pub(super) fn new(parts: &[&'a str]) -> Self {
        Mods { list: parts.iter().copied().filter(|m| !IGNORED_MODS.contains(m) && !m.contains("::")).collect() }
    }
    pub(super) fn take(&mut self, m: &str) -> bool {
        match self.list.iter().position(|x| *x == m) {
            Some(i) => {
                self.list.remove(i);
                true
            }
            None => false,
        }
    }
    pub(super) fn take_any<T: Copy>(&mut self, options: &[(&str, T)]) -> Option<T> {
        for (name, v) in options {
            if self.take(name) {
                return Some(*v);
            }
        }
        None
    }
    pub(super) fn types(&mut self) -> Vec<Ty> {
        let mut out = Vec::new();
        self.list.retain(|m| match Ty::parse(m) {
            Some(t) => {
                out.push(t);
                false
            }
            None => true,
        });
        out
    }
    pub(super) fn one_type(&mut self, cx: &Cx) -> Result<Ty, PtxError> {
        let t = self.types();
        if t.len() != 1 {
            return Err(cx.unsupported());
        }
        Ok(t[0])
    }
    pub(super) fn rounding(&mut self) -> Round {
        self.take_any(&[
            ("rn", Round::Rn),
            ("rz", Round::Rz),
            ("rm", Round::Rm),
            ("rp", Round::Rp),
            ("rni", Round::Rni),
            ("rzi", Round::Rzi),
            ("rmi", Round::Rmi),
            ("rpi", Round::Rpi),
            ("approx", Round::Approx),
            ("full", Round::Approx),
        ])
        .unwrap_or(Round::None)
    }
    pub(super) fn space(&mut self) -> Space {
        self.take_any(&[
            ("global", Space::Global),
            ("shared", Space::Shared),
            ("local", Space::Local),
            ("param", Space::Param),
            ("const", Space::Const),
        ])
        .unwrap_or(Space::Generic)
    }
    pub(super) fn done(&self, cx: &Cx) -> Result<(), PtxError> {
        if self.list.is_empty() {
            Ok(())
        } else {
            Err(cx.unsupported())
        }
    }
}

pub(super) const CMPS: &[(&str, Cmp)] = &[
    ("eq", Cmp::Eq),
    ("ne", Cmp::Ne),
    ("lt", Cmp::Lt),
    ("le", Cmp::Le),
    ("gt", Cmp::Gt),
    ("ge", Cmp::Ge),
    ("lo", Cmp::Lo),
    ("ls", Cmp::Ls),
    ("hi", Cmp::Hi),
    ("hs", Cmp::Hs),
    ("equ", Cmp::Equ),
    ("neu", Cmp::Neu),
    ("ltu", Cmp::Ltu),
    ("leu", Cmp::Leu),
    ("gtu", Cmp::Gtu),
    ("geu", Cmp::Geu),
    ("num", Cmp::Num),
    ("nan", Cmp::Nan),
];

pub(super) const BOOL_OPS: &[(&str, BoolOp)] = &[("and", BoolOp::And), ("or", BoolOp::Or), ("xor", BoolOp::Xor)];

/// Real PTX instructions this interpreter does not run: a clear "unsupported" rather than
/// "unknown".
pub(super) const KNOWN_UNSUPPORTED: &[&str] = &[
    "addc",
    "subc",
    "mul24",
    "mad24",
    "sad",
    "testp",
    "tanh",
    "ex2h",
    "tex",
    "tld4",
    "txq",
    "suld",
    "sust",
    "sured",
    "suq",
    "mma",
    "wmma",
    "cp",
    "ldmatrix",
    "stmatrix",
    "match",
    "redux",
    "ldu",
    "prefetch",
    "prefetchu",
    "isspacep",
    "mapa",
    "getctarank",
    "elect",
    "mbarrier",
    "griddepcontrol",
    "alloca",
    "stacksave",
    "stackrestore",
    "fns",
    "dp4a",
    "dp2a",
    "bmsk",
    "szext",
    "lop3",
    "vadd",
    "vsub",
    "vmad",
    "vote",
    "applypriority",
    "discard",
    "createpolicy",
];
