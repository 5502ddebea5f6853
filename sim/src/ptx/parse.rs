//! PTX text to [`Module`]: a scanner that cuts the text into statements, labels and blocks
//! (comments removed, lines kept), then a decoder per function that resolves registers to
//! indexes, labels to instruction indexes and symbols to addresses. Follows the grammar of the
//! PTX ISA document (chapters "Syntax", "State Spaces, Types, and Variables", "Directives").

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::inst::*;
use super::{CallSite, GlobalVar, Kernel, Module, Param, ParseError, PtxError};

fn err(line: u32, error: ParseError) -> PtxError {
    PtxError::Parse { line, error }
}

// ---------------------------------------------------------------------------------------------
// Scanner.

#[derive(Debug, PartialEq)]
enum ItemKind {
    Stmt(String),
    Label(String),
    /// `{`, with the text before it (a function header at module scope, empty inside a body).
    Open(String),
    Close,
}

struct Item {
    line: u32,
    kind: ItemKind,
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

fn scan(text: &str) -> Result<Vec<Item>, PtxError> {
    let chars: Vec<char> = text.chars().collect();
    let mut items = Vec::new();
    let mut buf = String::new();
    let mut buf_line = 1u32;
    let mut line = 1u32;
    let mut depth = 0u32;
    let mut i = 0;
    let push_char = |buf: &mut String, buf_line: &mut u32, c: char, line: u32| {
        if buf.trim().is_empty() && !c.is_whitespace() {
            *buf_line = line;
        }
        buf.push(c);
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                // `.version`, `.target`, `.address_size`, `.file` and `.loc` end at the line's end.
                let s = buf.trim();
                let first = s.split_whitespace().next().unwrap_or("");
                if matches!(first, ".version" | ".target" | ".address_size" | ".file" | ".loc") {
                    items.push(Item { line: buf_line, kind: ItemKind::Stmt(s.to_string()) });
                    buf.clear();
                } else {
                    buf.push(' ');
                }
                line += 1;
            }
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if next == Some('*') => {
                i += 2;
                loop {
                    match chars.get(i) {
                        None => return Err(err(line, ParseError::Truncated("unterminated /* comment".into()))),
                        Some('*') if chars.get(i + 1) == Some(&'/') => {
                            i += 2;
                            break;
                        }
                        Some('\n') => line += 1,
                        Some(_) => {}
                    }
                    i += 1;
                }
                buf.push(' ');
                continue;
            }
            '"' => {
                push_char(&mut buf, &mut buf_line, c, line);
                i += 1;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => {
                            return Err(err(line, ParseError::Truncated("unterminated string".into())))
                        }
                        Some('"') => break,
                        Some(&ch) => buf.push(ch),
                    }
                    i += 1;
                }
                buf.push('"');
            }
            ';' => {
                let s = buf.trim();
                if !s.is_empty() {
                    items.push(Item { line: buf_line, kind: ItemKind::Stmt(s.to_string()) });
                }
                buf.clear();
            }
            '{' => {
                let s = buf.trim();
                let opens_block = if depth == 0 { !s.contains('=') } else { s.is_empty() };
                if opens_block {
                    items.push(Item {
                        line: if s.is_empty() { line } else { buf_line },
                        kind: ItemKind::Open(s.to_string()),
                    });
                    buf.clear();
                    depth += 1;
                } else {
                    push_char(&mut buf, &mut buf_line, c, line);
                }
            }
            '}' => {
                let open = buf.matches('{').count();
                let close = buf.matches('}').count();
                if open > close {
                    buf.push(c);
                } else {
                    let s = buf.trim();
                    if !s.is_empty() {
                        return Err(err(buf_line, ParseError::Truncated(format!("`{s}` has no `;` before `}}`"))));
                    }
                    if depth == 0 {
                        return Err(err(line, ParseError::BadDirective("`}` without `{`".into())));
                    }
                    depth -= 1;
                    items.push(Item { line, kind: ItemKind::Close });
                    buf.clear();
                }
            }
            ':' if next != Some(':') && i > 0 && chars[i - 1] != ':' => {
                let s = buf.trim();
                if !s.is_empty() && s.chars().all(is_ident_char) && !s.starts_with('.') {
                    items.push(Item { line: buf_line, kind: ItemKind::Label(s.to_string()) });
                    buf.clear();
                } else {
                    buf.push(c);
                }
            }
            _ => push_char(&mut buf, &mut buf_line, c, line),
        }
        i += 1;
    }
    let s = buf.trim();
    if !s.is_empty() {
        return Err(err(buf_line, ParseError::Truncated(format!("`{s}` at end of text has no `;`"))));
    }
    if depth != 0 {
        return Err(err(line, ParseError::Truncated("end of text inside a function body (missing `}`)".into())));
    }
    Ok(items)
}

// ---------------------------------------------------------------------------------------------
// Numbers.

/// An integer literal: decimal, `0x` hex, `0b` binary, leading-zero octal, optional `U`.
fn parse_int(s: &str) -> Option<i128> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let s = s.strip_suffix('U').unwrap_or(s);
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse::<u64>().ok()?
    } as i128;
    Some(if neg { -v } else { v })
}

/// An immediate for an operand of type `ty`: integer bits, or float bits of `ty`'s width.
fn parse_imm(s: &str, ty: Ty) -> Option<u64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let float: Option<f64> = if let Some(h) = body.strip_prefix("0f").or_else(|| body.strip_prefix("0F")) {
        if h.len() != 8 {
            return None;
        }
        let bits = u32::from_str_radix(h, 16).ok()?;
        if ty == Ty::F32 && !neg {
            return Some(bits as u64);
        }
        Some(f32::from_bits(bits) as f64)
    } else if let Some(h) = body.strip_prefix("0d").or_else(|| body.strip_prefix("0D")) {
        if h.len() != 16 {
            return None;
        }
        let bits = u64::from_str_radix(h, 16).ok()?;
        if ty == Ty::F64 && !neg {
            return Some(bits);
        }
        Some(f64::from_bits(bits))
    } else if body.contains('.') || (body.contains(['e', 'E']) && !body.starts_with("0x")) {
        Some(body.parse::<f64>().ok()?)
    } else {
        None
    };
    match float {
        Some(f) => {
            let f = if neg { -f } else { f };
            Some(match ty {
                Ty::F32 => (f as f32).to_bits() as u64,
                Ty::F64 => f.to_bits(),
                _ => return None,
            })
        }
        None => {
            let v = parse_int(s)?;
            Some(match ty {
                Ty::F32 => (v as f32).to_bits() as u64,
                Ty::F64 => (v as f64).to_bits(),
                _ => v as u64 & mask(ty.bits()),
            })
        }
    }
}

pub(crate) fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn align_up(v: u32, a: u32) -> u32 {
    let a = a.max(1);
    v.div_ceil(a).saturating_mul(a)
}

/// Places `size` bytes at `align` after `cur`: (offset, new end), or an error when the layout
/// passes 4 GiB (sizes are input).
fn place(line: u32, cur: u32, align: u32, size: u32) -> Result<(u32, u32), PtxError> {
    let a = align.max(1);
    let at = cur.div_ceil(a).checked_mul(a);
    match at.and_then(|at| Some((at, at.checked_add(size)?))) {
        Some(r) => Ok(r),
        None => Err(err(line, ParseError::BadDirective("variables larger than 4 GiB".into()))),
    }
}

/// The constant bank of a launch is 64 KiB (CUDA's `__constant__` limit).
const MAX_CONST_BYTES: u32 = 64 << 10;

/// Splits at top-level commas (not inside `{}`, `[]`, `()`).
fn split_commas(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = s[start..].trim();
    if !last.is_empty() || !out.is_empty() {
        out.push(last);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Declarations.

/// A variable declaration `[.extern] .space [.align N] [.vN] .ty name[dims] [= init]`.
struct VarDecl {
    space: String,
    name: String,
    size: u32,
    align: u32,
    elem: Ty,
    init: Vec<u8>,
    is_extern: bool,
}

fn parse_var_decl(line: u32, s: &str) -> Result<VarDecl, PtxError> {
    let bad = || err(line, ParseError::BadDirective(s.to_string()));
    let (decl, init) = match s.split_once('=') {
        Some((d, i)) => (d.trim(), Some(i.trim())),
        None => (s, None),
    };
    let mut space = None;
    let mut align = 0;
    let mut elem = None;
    let mut vec_n = 1;
    let mut is_extern = false;
    let mut name_part = None;
    let mut words = decl.split_whitespace().peekable();
    while let Some(w) = words.next() {
        match w {
            ".extern" => is_extern = true,
            ".visible" | ".weak" | ".common" => {}
            ".global" | ".const" | ".shared" | ".local" => space = Some(&w[1..]),
            ".align" => align = words.next().and_then(|n| n.parse::<u32>().ok()).ok_or_else(bad)?,
            ".v2" => vec_n = 2,
            ".v4" => vec_n = 4,
            _ if w.starts_with('.') => elem = Some(Ty::parse(&w[1..]).ok_or_else(bad)?),
            _ => {
                // The name, possibly with dimensions glued on or following (`a [4]`).
                let mut rest = String::from(w);
                for more in words.by_ref() {
                    rest.push_str(more);
                }
                name_part = Some(rest);
            }
        }
    }
    let (space, elem, name_part) = match (space, elem, name_part) {
        (Some(sp), Some(e), Some(n)) => (sp, e, n),
        _ => return Err(bad()),
    };
    let (name, dims) = match name_part.find('[') {
        Some(i) => (&name_part[..i], &name_part[i..]),
        None => (name_part.as_str(), ""),
    };
    let mut count: u32 = 1;
    let mut rest = dims;
    while let Some(r) = rest.strip_prefix('[') {
        let end = r.find(']').ok_or_else(bad)?;
        let d = &r[..end];
        let n = if d.is_empty() { 0 } else { parse_int(d).and_then(|v| u32::try_from(v).ok()).ok_or_else(bad)? };
        count = count.checked_mul(n).ok_or_else(bad)?;
        rest = &r[end + 1..];
    }
    if !rest.is_empty() {
        return Err(bad());
    }
    let elem_size = elem.bytes() * vec_n;
    let size = count.checked_mul(elem_size).ok_or_else(bad)?;
    let mut init_bytes = Vec::new();
    if let Some(init) = init {
        let flat: String = init.chars().filter(|c| *c != '{' && *c != '}').collect();
        for v in flat.split(',').map(str::trim).filter(|v| !v.is_empty()) {
            let bits = parse_imm(v, elem).ok_or_else(|| {
                err(line, ParseError::Unsupported(format!("initialiser `{v}` (only numeric initialisers)")))
            })?;
            init_bytes.extend_from_slice(&bits.to_le_bytes()[..elem.bytes() as usize]);
        }
        if init_bytes.len() > size as usize {
            return Err(bad());
        }
    }
    Ok(VarDecl {
        space: space.to_string(),
        name: name.to_string(),
        size,
        align: if align == 0 { elem.bytes() } else { align },
        elem,
        init: init_bytes,
        is_extern,
    })
}

fn parse_params(line: u32, list: &str) -> Result<(Vec<Param>, u32), PtxError> {
    let mut params = Vec::new();
    let mut offset = 0u32;
    for p in split_commas(list) {
        if p.is_empty() {
            continue;
        }
        if !p.starts_with(".param") {
            return Err(err(line, ParseError::BadDirective(format!("parameter `{p}`"))));
        }
        let d = parse_var_decl(
            line,
            &p.replacen(".param", ".local", 1)
                .replace(".ptr", "")
                .replace(".global ", " ")
                .replace(".shared ", " ")
                .replace(".const ", " "),
        )
        .map_err(|_| err(line, ParseError::BadDirective(format!("parameter `{p}`"))))?;
        let align = d.align.max(d.elem.bytes());
        let (at, end) = place(line, offset, align, d.size)?;
        params.push(Param { name: d.name, size: d.size, align, offset: at });
        offset = end;
    }
    Ok((params, offset))
}

// ---------------------------------------------------------------------------------------------
// Module.

/// Module-scope symbols every function sees.
#[derive(Default)]
struct ModuleScope {
    /// Static `.shared` variables at module scope: name -> offset (laid out before each
    /// kernel's own).
    shared: BTreeMap<String, u32>,
    shared_size: u32,
    /// `.extern .shared` arrays: they name the dynamic shared area.
    extern_shared: Vec<(String, u32)>,
    consts: BTreeMap<String, u32>,
    globals: BTreeMap<String, u32>,
}

pub fn parse_module(text: &str) -> Result<Module, PtxError> {
    let items = scan(text)?;
    let mut module = Module {
        version: (0, 0),
        target: String::new(),
        address_size: 64,
        kernels: Vec::new(),
        globals: Vec::new(),
        const_image: Vec::new(),
    };
    let mut scope = ModuleScope::default();
    let mut seen_version = false;
    let mut funcs: Vec<RawFunc> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let line = items[i].line;
        match &items[i].kind {
            ItemKind::Stmt(s) => {
                let first = s.split_whitespace().next().unwrap_or("");
                match first {
                    ".version" => {
                        let v = s[first.len()..].trim();
                        let (maj, min) = v
                            .split_once('.')
                            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
                            .ok_or_else(|| err(line, ParseError::BadDirective(s.clone())))?;
                        if maj != 7 && maj != 8 {
                            return Err(err(line, ParseError::UnsupportedVersion(v.to_string())));
                        }
                        module.version = (maj, min);
                        seen_version = true;
                    }
                    ".target" => module.target = s[first.len()..].trim().to_string(),
                    ".address_size" => {
                        let a = s[first.len()..].trim();
                        module.address_size = match a {
                            "64" => 64,
                            "32" => 32,
                            _ => return Err(err(line, ParseError::BadDirective(s.clone()))),
                        };
                    }
                    ".file" | ".loc" | ".pragma" | ".section" => {}
                    _ if s.contains(".func") || s.contains(".entry") => {
                        // A prototype (`.extern .func ...;`): nothing to run.
                    }
                    _ if first.starts_with('.') => {
                        let d = parse_var_decl(line, s)?;
                        match d.space.as_str() {
                            "shared" if d.is_extern || d.size == 0 => scope.extern_shared.push((d.name, d.align)),
                            "shared" => {
                                let (at, end) = place(line, scope.shared_size, d.align, d.size)?;
                                scope.shared.insert(d.name, at);
                                scope.shared_size = end;
                            }
                            "const" => {
                                let (at, end) = place(line, module.const_image.len() as u32, d.align, d.size)?;
                                if end > MAX_CONST_BYTES {
                                    return Err(err(
                                        line,
                                        ParseError::BadDirective(format!("`.const` variables past 64 KiB: {s}")),
                                    ));
                                }
                                module.const_image.resize(at as usize, 0);
                                module.const_image.extend_from_slice(&d.init);
                                module.const_image.resize(end as usize, 0);
                                scope.consts.insert(d.name, at);
                            }
                            "global" => {
                                scope.globals.insert(d.name.clone(), module.globals.len() as u32);
                                module.globals.push(GlobalVar {
                                    name: d.name,
                                    size: d.size,
                                    align: d.align,
                                    init: d.init,
                                });
                            }
                            _ => return Err(err(line, ParseError::BadDirective(s.clone()))),
                        }
                    }
                    _ => return Err(err(line, ParseError::BadDirective(s.clone()))),
                }
                i += 1;
            }
            ItemKind::Open(header) => {
                if !seen_version {
                    return Err(err(line, ParseError::MissingVersion));
                }
                // The body runs to the matching Close.
                let mut depth = 1;
                let mut j = i + 1;
                while j < items.len() && depth > 0 {
                    match items[j].kind {
                        ItemKind::Open(_) => depth += 1,
                        ItemKind::Close => depth -= 1,
                        _ => {}
                    }
                    j += 1;
                }
                let (name, is_entry) = header_name(line, header)?;
                if funcs.iter().any(|f: &RawFunc| f.name == name) {
                    return Err(err(line, ParseError::BadDirective(format!("function `{name}` defined twice"))));
                }
                funcs.push(RawFunc { name, is_entry, line, header: header.clone(), body: i + 1..j.saturating_sub(1) });
                i = j;
            }
            ItemKind::Label(l) => {
                return Err(err(line, ParseError::BadDirective(format!("label `{l}` outside a function"))))
            }
            ItemKind::Close => return Err(err(line, ParseError::BadDirective("`}` without `{`".into()))),
        }
    }
    if !seen_version {
        return Err(err(1, ParseError::MissingVersion));
    }
    for (f, raw) in funcs.iter().enumerate() {
        if raw.is_entry {
            module.kernels.push(link_kernel(&items, &funcs, f, &scope)?);
        } else {
            // Functions no kernel calls are still decoded, so their errors are reported.
            link_function_alone(&items, &funcs, f, &scope)?;
        }
    }
    Ok(module)
}

/// A function's text: header and the items of its body.
struct RawFunc {
    name: String,
    is_entry: bool,
    line: u32,
    header: String,
    body: core::ops::Range<usize>,
}

/// `[.visible] .entry name(...)` or `.func [(ret)] name(...)`: the name and whether it is a kernel.
fn header_name(line: u32, header: &str) -> Result<(String, bool), PtxError> {
    let bad = || err(line, ParseError::BadDirective(format!("function header `{header}`")));
    let is_entry = header.split_whitespace().any(|w| w == ".entry" || w.starts_with(".entry("));
    let kw = if is_entry { ".entry" } else { ".func" };
    let after = &header[header.find(kw).ok_or_else(bad)? + kw.len()..];
    let mut rest = after.trim_start();
    if rest.starts_with('(') {
        let close = rest.find(')').ok_or_else(bad)?;
        rest = rest[close + 1..].trim_start();
    }
    let name_end = rest.find(|c: char| c == '(' || c.is_whitespace()).unwrap_or(rest.len());
    let name = &rest[..name_end];
    if name.is_empty() {
        return Err(bad());
    }
    Ok((name.to_string(), is_entry))
}

/// Names of the functions a body calls (`call[.uni] [(ret),] name, (args)`).
fn callees(body: &[Item]) -> Vec<&str> {
    let mut out = Vec::new();
    for item in body {
        if let ItemKind::Stmt(s) = &item.kind {
            // Skip a guard (`@%p1 call ...`).
            let s = match s.strip_prefix('@') {
                Some(g) => g.split_once(char::is_whitespace).map_or("", |(_, r)| r.trim_start()),
                None => s.as_str(),
            };
            let stmt = match s.split_once(char::is_whitespace) {
                Some((op, rest)) if op == "call" || op.starts_with("call.") => rest,
                _ => continue,
            };
            let ops = split_commas(stmt.trim());
            let name = if ops.first().is_some_and(|o| o.starts_with('(')) { ops.get(1) } else { ops.first() };
            if let Some(n) = name {
                out.push(*n);
            }
        }
    }
    out
}

/// Where one function of a kernel landed: entry instruction and its parameter slots (offsets
/// and sizes in the thread's local memory).
struct Frame {
    pc: u32,
    formals: Vec<(u32, u32)>,
    ret: Option<(u32, u32)>,
}

/// A call site before its callee's frame is known.
struct PendingCall {
    line: u32,
    opcode: String,
    callee: u32,
    args: Vec<(u32, u32)>,
    ret: Option<(u32, u32)>,
}

/// The code of one kernel under construction: its own instructions, then those of every
/// function it calls (directly or not), each with its own registers and parameter slots.
#[derive(Default)]
struct Link {
    code: Vec<Inst>,
    lines: Vec<u32>,
    opcodes: Vec<String>,
    calls: Vec<PendingCall>,
    num_regs: u32,
    local_size: u32,
}

fn link_kernel(items: &[Item], funcs: &[RawFunc], entry: usize, scope: &ModuleScope) -> Result<Kernel, PtxError> {
    // The functions reachable from the kernel, kernel first.
    let mut order = vec![entry];
    let mut k = 0;
    while k < order.len() {
        let f = &funcs[order[k]];
        for name in callees(&items[f.body.clone()]) {
            let idx = funcs.iter().position(|g| g.name == name && !g.is_entry).ok_or_else(|| {
                err(f.line, ParseError::UndefinedSymbol { instruction: "call".into(), symbol: name.to_string() })
            })?;
            if !order.contains(&idx) {
                order.push(idx);
            }
        }
        k += 1;
    }
    // Shared memory: module scope, then each function's declarations; dynamic shared after all.
    let mut shared_size = scope.shared_size;
    let mut shared_syms: Vec<BTreeMap<String, u32>> = Vec::new();
    for &f in &order {
        let mut syms = BTreeMap::new();
        for item in &items[funcs[f].body.clone()] {
            if let ItemKind::Stmt(s) = &item.kind {
                if s.starts_with(".shared") || s.starts_with(".extern .shared") {
                    let d = parse_var_decl(item.line, s)?;
                    let (at, end) = place(item.line, shared_size, d.align, d.size)?;
                    syms.insert(d.name, at);
                    shared_size = end;
                }
            }
        }
        shared_syms.push(syms);
    }
    // Dynamic shared memory starts after every static declaration, 16-byte aligned (the
    // strictest alignment any type needs), or the `.extern` array's own alignment.
    let dyn_align = scope.extern_shared.iter().map(|(_, a)| *a).fold(16, u32::max);
    let dyn_base = align_up(shared_size, dyn_align);

    let mut link = Link::default();
    let mut frames: BTreeMap<usize, Frame> = BTreeMap::new();
    let mut kernel_params = (Vec::new(), 0);
    for (n, &f) in order.iter().enumerate() {
        let raw = &funcs[f];
        let b = FunctionBuilder::new(raw.line, &raw.header, scope, &shared_syms[n], dyn_base, &mut link, funcs)?;
        if n == 0 {
            kernel_params = (b.params.clone(), b.param_size);
        }
        let frame = b.build(&items[raw.body.clone()], &mut link)?;
        frames.insert(f, frame);
    }
    let mut call_sites = Vec::with_capacity(link.calls.len());
    for c in &link.calls {
        let frame =
            frames.get(&(c.callee as usize)).ok_or_else(|| err(c.line, ParseError::Unsupported(c.opcode.clone())))?;
        let arity = || {
            err(
                c.line,
                ParseError::BadOperand {
                    instruction: c.opcode.clone(),
                    operand: format!("{} arguments for {} parameters", c.args.len(), frame.formals.len()),
                },
            )
        };
        if c.args.len() != frame.formals.len() || c.ret.is_some() != frame.ret.is_some() {
            return Err(arity());
        }
        let copies = c.args.iter().zip(&frame.formals).map(|(a, f)| (a.0, f.0, a.1.min(f.1))).collect();
        let ret = match (c.ret, frame.ret) {
            (Some(caller), Some(callee)) => Some((callee.0, caller.0, caller.1.min(callee.1))),
            _ => None,
        };
        call_sites.push(CallSite { target: frame.pc, callee: c.callee, copies, ret });
    }
    Ok(Kernel {
        name: funcs[entry].name.clone(),
        params: kernel_params.0,
        param_size: kernel_params.1,
        num_regs: link.num_regs,
        code: link.code,
        lines: link.lines,
        opcodes: link.opcodes,
        call_sites,
        static_shared: dyn_base,
        local_size: link.local_size,
    })
}

/// Decodes a function no kernel calls, for its errors only.
fn link_function_alone(items: &[Item], funcs: &[RawFunc], f: usize, scope: &ModuleScope) -> Result<(), PtxError> {
    let raw = &funcs[f];
    let mut link = Link::default();
    let mut syms = BTreeMap::new();
    let mut shared_size = scope.shared_size;
    for item in &items[raw.body.clone()] {
        if let ItemKind::Stmt(s) = &item.kind {
            if s.starts_with(".shared") {
                let d = parse_var_decl(item.line, s)?;
                let (at, end) = place(item.line, shared_size, d.align, d.size)?;
                syms.insert(d.name, at);
                shared_size = end;
            }
        }
    }
    let b = FunctionBuilder::new(raw.line, &raw.header, scope, &syms, shared_size, &mut link, funcs)?;
    b.build(&items[raw.body.clone()], &mut link)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Functions.

#[derive(Clone, Copy)]
enum Symbol {
    /// An address in its own state space (shared, local, const, param offsets).
    Offset(u64),
    /// A module `.global` variable.
    Global(u32),
    /// A `.param` of a `.func` or of a call site: a slot in the thread's local memory (offset,
    /// size), so `ld.param`/`st.param` on it become local accesses.
    Frame(u64, u32),
}

struct FunctionBuilder<'f> {
    params: Vec<Param>,
    /// A `.func`'s parameter and return slots in local memory.
    formals: Vec<(u32, u32)>,
    ret: Option<(u32, u32)>,
    funcs: &'f [RawFunc],
    /// Where this function's instructions start in the kernel's code.
    pc_base: u32,
    param_size: u32,
    /// `%r<32>` style declarations: prefix -> (first index, count).
    ranged: BTreeMap<String, (u32, u32)>,
    single: BTreeMap<String, u32>,
    num_regs: u32,
    symbols: BTreeMap<String, Symbol>,
    local_size: u32,
}

impl<'f> FunctionBuilder<'f> {
    fn new(
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

    fn declare_regs(&mut self, line: u32, s: &str) -> Result<(), PtxError> {
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

    fn reg(&self, name: &str) -> Option<Reg> {
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
    fn build(mut self, body: &[Item], link: &mut Link) -> Result<Frame, PtxError> {
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

    fn src(&self, cx: &Cx, s: &str, ty: Ty) -> Result<Src, PtxError> {
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

    fn dst(&self, cx: &Cx, s: &str) -> Result<Reg, PtxError> {
        if !s.starts_with('%') {
            return Err(cx.bad_operand(s));
        }
        self.reg(s).ok_or_else(|| cx.undefined_reg(s))
    }

    /// A predicate source, possibly negated (`!%p1`).
    fn pred_src(&self, cx: &Cx, s: &str) -> Result<(Src, bool), PtxError> {
        match s.strip_prefix('!') {
            Some(r) => Ok((self.src(cx, r.trim(), Ty::Pred)?, true)),
            None => Ok((self.src(cx, s, Ty::Pred)?, false)),
        }
    }

    /// A memory operand, and whether it names a `.param` slot of a call frame (local memory).
    fn addr(&self, cx: &Cx, s: &str) -> Result<(Addr, bool), PtxError> {
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

    fn vector<'a>(&self, cx: &Cx, s: &'a str) -> Result<Vec<&'a str>, PtxError> {
        let inner = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')).ok_or_else(|| cx.bad_operand(s))?;
        Ok(inner.split(',').map(str::trim).collect())
    }

    fn decode(
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
struct Cx<'a> {
    line: u32,
    opcode: &'a str,
}

impl Cx<'_> {
    fn bad_operand(&self, s: &str) -> PtxError {
        err(self.line, ParseError::BadOperand { instruction: self.opcode.to_string(), operand: s.to_string() })
    }
    fn undefined_reg(&self, s: &str) -> PtxError {
        err(self.line, ParseError::UndefinedRegister { instruction: self.opcode.to_string(), register: s.to_string() })
    }
    fn undefined_symbol(&self, s: &str) -> PtxError {
        err(self.line, ParseError::UndefinedSymbol { instruction: self.opcode.to_string(), symbol: s.to_string() })
    }
    fn unsupported(&self) -> PtxError {
        err(self.line, ParseError::Unsupported(self.opcode.to_string()))
    }
    fn operands(&self, ops: &[&str], n: usize) -> Result<(), PtxError> {
        if ops.len() != n {
            return Err(self.bad_operand(&ops.join(", ")));
        }
        Ok(())
    }
}

/// The modifiers of an opcode, taken one kind at a time by the decoder; whatever is left over
/// makes the instruction unsupported.
struct Mods<'a> {
    list: Vec<&'a str>,
}

/// Modifiers with no effect in this model: memory ordering and scope (every access is
/// immediately visible), cache operators and eviction hints, `.uni`/`.aligned` promises.
const IGNORED_MODS: &[&str] = &[
    "uni", "aligned", "nc", "volatile", "relaxed", "acquire", "release", "acq_rel", "sc", "weak", "cta", "gpu", "sys",
    "cluster", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "sync",
];

impl<'a> Mods<'a> {
    fn new(parts: &[&'a str]) -> Self {
        Mods { list: parts.iter().copied().filter(|m| !IGNORED_MODS.contains(m) && !m.contains("::")).collect() }
    }
    fn take(&mut self, m: &str) -> bool {
        match self.list.iter().position(|x| *x == m) {
            Some(i) => {
                self.list.remove(i);
                true
            }
            None => false,
        }
    }
    fn take_any<T: Copy>(&mut self, options: &[(&str, T)]) -> Option<T> {
        for (name, v) in options {
            if self.take(name) {
                return Some(*v);
            }
        }
        None
    }
    fn types(&mut self) -> Vec<Ty> {
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
    fn one_type(&mut self, cx: &Cx) -> Result<Ty, PtxError> {
        let t = self.types();
        if t.len() != 1 {
            return Err(cx.unsupported());
        }
        Ok(t[0])
    }
    fn rounding(&mut self) -> Round {
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
    fn space(&mut self) -> Space {
        self.take_any(&[
            ("global", Space::Global),
            ("shared", Space::Shared),
            ("local", Space::Local),
            ("param", Space::Param),
            ("const", Space::Const),
        ])
        .unwrap_or(Space::Generic)
    }
    fn done(&self, cx: &Cx) -> Result<(), PtxError> {
        if self.list.is_empty() {
            Ok(())
        } else {
            Err(cx.unsupported())
        }
    }
}

const CMPS: &[(&str, Cmp)] = &[
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

const BOOL_OPS: &[(&str, BoolOp)] = &[("and", BoolOp::And), ("or", BoolOp::Or), ("xor", BoolOp::Xor)];

/// Real PTX instructions this interpreter does not run: a clear "unsupported" rather than
/// "unknown".
const KNOWN_UNSUPPORTED: &[&str] = &[
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

impl FunctionBuilder<'_> {
    fn decode_op(
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

fn special_reg(s: &str) -> Option<Sreg> {
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
