//! PTX text to [`Module`]: a scanner that cuts the text into statements, labels and blocks
//! (comments removed, lines kept), then a decoder per function that resolves registers to
//! indexes, labels to instruction indexes and symbols to addresses. Follows the grammar of the
//! PTX ISA document (chapters "Syntax", "State Spaces, Types, and Variables", "Directives").
//!
//! In the order the text flows through them: [`scan`] (statements, labels, blocks), [`lexical`]
//! (numbers and operand lists), [`decl`] (variables and parameters), this module (the module's
//! directives, its functions and the linking of a kernel with the functions it calls),
//! [`function`] (one function's statements), [`instruction`] (one instruction).

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use super::inst::*;
use super::{CallSite, GlobalVar, Kernel, Module, Param, ParseError, PtxError};

mod decl;
mod function;
mod instruction;
mod lexical;
mod scan;

use decl::*;
use function::*;
use lexical::*;
use scan::*;

pub(crate) use instruction::wide_of;
pub(crate) use lexical::mask;

fn err(line: u32, error: ParseError) -> PtxError {
    PtxError::Parse { line, error }
}

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
