//! Numbers, immediates, alignment and operand lists: the lexical pieces the declarations and
//! instructions share.

use super::*;

/// An integer literal: decimal, `0x` hex, `0b` binary, leading-zero octal, optional `U`.
pub(super) fn parse_int(s: &str) -> Option<i128> {
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
pub(super) fn parse_imm(s: &str, ty: Ty) -> Option<u64> {
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

pub(super) fn align_up(v: u32, a: u32) -> u32 {
    let a = a.max(1);
    v.div_ceil(a).saturating_mul(a)
}

/// Places `size` bytes at `align` after `cur`: (offset, new end), or an error when the layout
/// passes 4 GiB (sizes are input).
pub(super) fn place(line: u32, cur: u32, align: u32, size: u32) -> Result<(u32, u32), PtxError> {
    let a = align.max(1);
    let at = cur.div_ceil(a).checked_mul(a);
    match at.and_then(|at| Some((at, at.checked_add(size)?))) {
        Some(r) => Ok(r),
        None => Err(err(line, ParseError::BadDirective("variables larger than 4 GiB".into()))),
    }
}

/// The constant bank of a launch is 64 KiB (CUDA's `__constant__` limit).
pub(super) const MAX_CONST_BYTES: u32 = 64 << 10;

/// Splits at top-level commas (not inside `{}`, `[]`, `()`).
pub(super) fn split_commas(s: &str) -> Vec<&str> {
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
