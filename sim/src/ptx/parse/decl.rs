//! Declarations: variables (`.reg`, `.shared`, `.local`, `.global`, `.const`) and parameter lists.

use super::*;

/// A variable declaration `[.extern] .space [.align N] [.vN] .ty name[dims] [= init]`.
pub(super) struct VarDecl {
    pub(super) space: String,
    pub(super) name: String,
    pub(super) size: u32,
    pub(super) align: u32,
    pub(super) elem: Ty,
    pub(super) init: Vec<u8>,
    pub(super) is_extern: bool,
}

pub(super) fn parse_var_decl(line: u32, s: &str) -> Result<VarDecl, PtxError> {
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

pub(super) fn parse_params(line: u32, list: &str) -> Result<(Vec<Param>, u32), PtxError> {
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
