//! Kernel parameter layouts and typed kernel arguments.
//!
//! A kernel's parameters live in one block (constant bank 0 on the hardware, the `.param` space
//! in PTX) at offsets the compiler chose. For SASS the cubin says where (`EIATTR_KPARAM_INFO`,
//! decoded by [`crate::payload`]); for PTX the `.entry` signature does, by the rules of the PTX
//! ISA ("Kernel Function Parameters"): each parameter at the next multiple of its alignment
//! (the declared `.align`, at least the element's size), in declaration order.
//!
//! [`Args`] collects the values an application passes; [`pack`] lays them into a parameter
//! block after checking the count and every size against the layout.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The largest parameter block a kernel may take: 32764 bytes (PTX ISA 8.1, sm_70 and later with
/// CUDA 12.1); anything beyond it in a signature is corrupt input.
pub const MAX_PARAM_BLOCK: u32 = 32764;

/// Where one parameter sits in the parameter block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// Byte offset in the block.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes, where the image says it (PTX); cubins record only offsets and sizes.
    pub align: Option<u32>,
}

/// The parameters of one `.entry` of a PTX text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxEntry {
    pub name: String,
    pub params: Vec<ParamLayout>,
    /// Bytes of the parameter block (end of the last parameter).
    pub param_size: u32,
}

/// A PTX signature this parser cannot lay out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxSignatureError {
    /// The text is not UTF-8 (PTX is ASCII).
    NotText,
    /// `.entry` with no name after it.
    MissingName { at: usize },
    /// The parameter list of `entry` has no closing parenthesis.
    Unterminated { entry: String },
    /// A parameter declaration this parser does not understand.
    BadParam { entry: String, param: String },
    /// The block would exceed [`MAX_PARAM_BLOCK`].
    TooLarge { entry: String },
}

impl fmt::Display for PtxSignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotText => f.write_str("PTX text is not UTF-8"),
            Self::MissingName { at } => write!(f, "`.entry` without a name at byte {at}"),
            Self::Unterminated { entry } => write!(f, "parameter list of `{entry}` is not closed"),
            Self::BadParam { entry, param } => write!(f, "parameter `{param}` of `{entry}` cannot be laid out"),
            Self::TooLarge { entry } => {
                write!(f, "parameters of `{entry}` exceed the {MAX_PARAM_BLOCK}-byte parameter block")
            }
        }
    }
}

/// The text without `//` and `/* */` comments (each replaced by a space).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        let line_first = match (line, block) {
            (None, None) => {
                out.push_str(rest);
                return out;
            }
            (Some(l), Some(b)) => l < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        if let (true, Some(l)) = (line_first, line) {
            out.push_str(&rest[..l]);
            out.push(' ');
            rest = rest[l..].find('\n').map_or("", |n| &rest[l + n..]);
        } else if let Some(b) = block {
            out.push_str(&rest[..b]);
            out.push(' ');
            rest = rest[b + 2..].find("*/").map_or("", |e| &rest[b + 2 + e + 2..]);
        }
    }
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

/// Size of one element of a PTX fundamental type (`.u32`, `.f64`, `.b8`, `.pred` is not a
/// parameter type).
fn type_size(token: &str) -> Option<u32> {
    let ty = token.strip_prefix('.')?;
    let (kind, bits) = ty.split_at(1);
    if !matches!(kind, "u" | "s" | "b" | "f") {
        return None;
    }
    match bits {
        "8" if kind != "f" => Some(1),
        "16" => Some(2),
        "32" => Some(4),
        "64" => Some(8),
        _ => None,
    }
}

/// Lays out one `.param` declaration; returns (size, alignment).
fn param_shape(decl: &str) -> Option<(u32, u32)> {
    let mut tokens = decl.split_whitespace();
    if tokens.next()? != ".param" {
        return None;
    }
    let mut align = None;
    let mut elem = None;
    let mut name = None;
    let mut dims: Vec<&str> = Vec::new();
    while let Some(token) = tokens.next() {
        match token {
            ".align" => align = Some(tokens.next()?.parse::<u32>().ok()?),
            ".ptr" | ".global" | ".shared" | ".const" | ".local" => {}
            t if t.starts_with('[') => dims.push(t),
            t if t.starts_with('.') && elem.is_none() => elem = Some(type_size(t)?),
            t if name.is_none() => {
                let (n, d) = t.split_at(t.find('[').unwrap_or(t.len()));
                if n.is_empty() || !n.chars().all(is_ident_char) {
                    return None;
                }
                name = Some(n);
                if !d.is_empty() {
                    dims.push(d);
                }
            }
            _ => return None,
        }
    }
    name?;
    let elem = elem?;
    let mut count = 1u32;
    for d in dims.iter().flat_map(|d| d.split_inclusive(']')) {
        let n = d.strip_prefix('[')?.strip_suffix(']')?.trim().parse::<u32>().ok()?;
        count = count.checked_mul(n)?;
    }
    let size = elem.checked_mul(count)?;
    let align = align.unwrap_or(elem).max(elem);
    (size > 0 && align.is_power_of_two()).then_some((size, align))
}

/// Every `.entry` of a PTX text with its parameter layout.
pub fn ptx_entries(text: &[u8]) -> Result<Vec<PtxEntry>, PtxSignatureError> {
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    let text = core::str::from_utf8(&text[..end]).map_err(|_| PtxSignatureError::NotText)?;
    let text = strip_comments(text);
    let mut entries = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(".entry") {
        let at = from + found;
        let after = &text[at + ".entry".len()..];
        from = at + ".entry".len();
        let starts_token = text[..at].chars().next_back().is_none_or(char::is_whitespace);
        if !starts_token || !after.starts_with(char::is_whitespace) {
            continue;
        }
        let after = after.trim_start();
        let name_len = after.find(|c: char| !is_ident_char(c)).unwrap_or(after.len());
        if name_len == 0 {
            return Err(PtxSignatureError::MissingName { at });
        }
        let name = String::from(&after[..name_len]);
        let rest = after[name_len..].trim_start();
        let mut params = Vec::new();
        let mut offset = 0u32;
        if let Some(list) = rest.strip_prefix('(') {
            let close = list.find(')').ok_or_else(|| PtxSignatureError::Unterminated { entry: name.clone() })?;
            for decl in list[..close].split(',').map(str::trim).filter(|d| !d.is_empty()) {
                let bad = || PtxSignatureError::BadParam { entry: name.clone(), param: String::from(decl) };
                let (size, align) = param_shape(decl).ok_or_else(bad)?;
                let too_large = || PtxSignatureError::TooLarge { entry: name.clone() };
                let at = offset.checked_next_multiple_of(align).ok_or_else(too_large)?;
                let end = at.checked_add(size).filter(|&e| e <= MAX_PARAM_BLOCK).ok_or_else(too_large)?;
                params.push(ParamLayout { offset: at, size, align: Some(align) });
                offset = end;
            }
        }
        entries.push(PtxEntry { name, params, param_size: offset });
    }
    Ok(entries)
}

/// One kernel argument: its bytes (little-endian) and what the application said it was.
#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub kind: &'static str,
    pub bytes: Vec<u8>,
}

/// Kernel arguments in signature order, built as `Args::new().u32(7).f32(2.5).ptr(&buf)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    args: Vec<Arg>,
}

impl Args {
    pub fn new() -> Self {
        Args::default()
    }

    fn push(mut self, kind: &'static str, bytes: &[u8]) -> Self {
        self.args.push(Arg { kind, bytes: bytes.to_vec() });
        self
    }

    pub fn u8(self, v: u8) -> Self {
        self.push("u8", &[v])
    }
    pub fn u16(self, v: u16) -> Self {
        self.push("u16", &v.to_le_bytes())
    }
    pub fn u32(self, v: u32) -> Self {
        self.push("u32", &v.to_le_bytes())
    }
    pub fn i32(self, v: i32) -> Self {
        self.push("i32", &v.to_le_bytes())
    }
    pub fn u64(self, v: u64) -> Self {
        self.push("u64", &v.to_le_bytes())
    }
    pub fn i64(self, v: i64) -> Self {
        self.push("i64", &v.to_le_bytes())
    }
    pub fn f32(self, v: f32) -> Self {
        self.push("f32", &v.to_le_bytes())
    }
    pub fn f64(self, v: f64) -> Self {
        self.push("f64", &v.to_le_bytes())
    }
    /// A device pointer: the GPU VA of `buffer`'s first element.
    pub fn ptr<T: super::Pod>(self, buffer: &super::DeviceBuffer<T>) -> Self {
        self.push("pointer", &buffer.device_ptr().to_le_bytes())
    }
    /// A pointer given as its GPU VA (memory this API does not own: managed buffers).
    pub fn device_ptr(self, va: u64) -> Self {
        self.push("pointer", &va.to_le_bytes())
    }
    /// A by-value aggregate (a struct parameter), as its bytes.
    pub fn bytes(self, v: &[u8]) -> Self {
        self.push("bytes", v)
    }

    pub fn len(&self) -> usize {
        self.args.len()
    }
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }
    pub fn as_slice(&self) -> &[Arg] {
        &self.args
    }
}

/// Why arguments do not fit a kernel's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgsError {
    /// `given` arguments for a kernel of `expected` parameters.
    Count { function: String, expected: usize, given: usize },
    /// Argument `index` (a `kind`) has `given` bytes; the parameter takes `expected`.
    Size { function: String, index: usize, kind: &'static str, expected: u32, given: usize },
    /// The layout places parameter `index` outside the block (corrupt image).
    Layout { function: String, index: usize },
}

impl fmt::Display for ArgsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Count { function, expected, given } => {
                write!(f, "`{function}` takes {expected} parameters, {given} arguments given")
            }
            Self::Size { function, index, kind, expected, given } => {
                write!(f, "argument {index} of `{function}` is a {kind} of {given} bytes; the parameter has {expected}")
            }
            Self::Layout { function, index } => {
                write!(f, "parameter {index} of `{function}` lies outside its parameter block")
            }
        }
    }
}

/// Lays `args` into a parameter block of `block_size` bytes by `layout`, after checking the
/// count and each size.
pub fn pack(function: &str, layout: &[ParamLayout], block_size: u32, args: &Args) -> Result<Vec<u8>, ArgsError> {
    let mut block = alloc::vec![0u8; block_size as usize];
    pack_into(function, layout, args, &mut block)?;
    Ok(block)
}

/// [`pack`] into `block` (the parameter block, `block_size` bytes, already zeroed where no
/// parameter lands): what a launch does straight into constant bank 0, without an allocation.
pub fn pack_into(function: &str, layout: &[ParamLayout], args: &Args, block: &mut [u8]) -> Result<(), ArgsError> {
    if args.len() != layout.len() {
        return Err(ArgsError::Count { function: String::from(function), expected: layout.len(), given: args.len() });
    }
    for (index, (param, arg)) in layout.iter().zip(args.as_slice()).enumerate() {
        if arg.bytes.len() != param.size as usize {
            return Err(ArgsError::Size {
                function: String::from(function),
                index,
                kind: arg.kind,
                expected: param.size,
                given: arg.bytes.len(),
            });
        }
        let start = param.offset as usize;
        let slot = block.get_mut(start..start + arg.bytes.len());
        slot.ok_or_else(|| ArgsError::Layout { function: String::from(function), index })?.copy_from_slice(&arg.bytes);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIG: &str = "// comment .entry fake(\n.version 7.8\n.target sm_80\n\
        .visible .entry p(\n\t.param .u32 p_param_0,\n\t.param .u64 .ptr .global .align 8 p_param_1, /* x */\n\
        \t.param .align 16 .b8 p_param_2[20],\n\t.param .u8 p_param_3\n)\n{\nret;\n}\n\
        .visible .entry none()\n{\nret;\n}\n.entry bare\n{\nret;\n}\n";

    #[test]
    fn layouts_follow_natural_and_declared_alignment() {
        let entries = ptx_entries(SIG.as_bytes()).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["p", "none", "bare"], "the commented-out entry is not one");
        let p = &entries[0];
        let shape: Vec<(u32, u32, Option<u32>)> = p.params.iter().map(|l| (l.offset, l.size, l.align)).collect();
        assert_eq!(shape, [(0, 4, Some(4)), (8, 8, Some(8)), (16, 20, Some(16)), (36, 1, Some(1))]);
        assert_eq!(p.param_size, 37);
        assert!(entries[1].params.is_empty() && entries[2].params.is_empty());
    }

    #[test]
    fn bad_signatures_are_typed_errors() {
        let bad = |s: &str| ptx_entries(s.as_bytes()).unwrap_err();
        assert!(matches!(bad(".entry k(.param .u32 a"), PtxSignatureError::Unterminated { .. }));
        assert!(matches!(bad(".entry k(.param .pred a)"), PtxSignatureError::BadParam { .. }));
        assert!(matches!(bad(".entry k(.param .u32)"), PtxSignatureError::BadParam { .. }));
        assert!(matches!(bad(".entry k(.param .align 3 .b8 a[4])"), PtxSignatureError::BadParam { .. }));
        assert!(matches!(bad(".entry k(.param .b8 a[40000])"), PtxSignatureError::TooLarge { .. }));
        assert!(matches!(bad(".entry k(.param .b8 a[4294967295][4294967295])"), PtxSignatureError::BadParam { .. }));
        assert!(matches!(bad(".entry ("), PtxSignatureError::MissingName { .. }));
        assert_eq!(ptx_entries(&[0xff, 0xfe]), Err(PtxSignatureError::NotText));
        // Every prefix of a good text parses or fails typed, never panics.
        for end in 0..SIG.len() {
            let _ = ptx_entries(&SIG.as_bytes()[..end]);
        }
    }

    #[test]
    fn pack_places_arguments_and_checks_count_and_sizes() {
        let entries = ptx_entries(SIG.as_bytes()).unwrap();
        let p = &entries[0];
        let args = Args::new().u32(7).u64(0x1122_3344_5566_7788).bytes(&[9; 20]).u8(5);
        let block = pack("p", &p.params, p.param_size, &args).unwrap();
        assert_eq!(block.len(), 37);
        assert_eq!(&block[0..4], &7u32.to_le_bytes());
        assert_eq!(&block[4..8], &[0; 4], "padding stays zero");
        assert_eq!(&block[8..16], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(&block[16..36], &[9; 20]);
        assert_eq!(block[36], 5);
        let short = Args::new().u32(7);
        assert_eq!(
            pack("p", &p.params, p.param_size, &short),
            Err(ArgsError::Count { function: "p".into(), expected: 4, given: 1 })
        );
        let wrong = Args::new().u32(7).f32(1.0).bytes(&[9; 20]).u8(5);
        assert_eq!(
            pack("p", &p.params, p.param_size, &wrong),
            Err(ArgsError::Size { function: "p".into(), index: 1, kind: "f32", expected: 8, given: 4 })
        );
        let outside = [ParamLayout { offset: 30, size: 4, align: None }];
        assert!(matches!(pack("q", &outside, 8, &Args::new().u32(1)), Err(ArgsError::Layout { index: 0, .. })));
    }
}
