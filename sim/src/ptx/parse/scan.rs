//! The scanner: PTX text cut into statements, labels and `{ }` blocks, comments removed, each
//! item with its line.

use super::*;

#[derive(Debug, PartialEq)]
pub(super) enum ItemKind {
    Stmt(String),
    Label(String),
    /// `{`, with the text before it (a function header at module scope, empty inside a body).
    Open(String),
    Close,
}

pub(super) struct Item {
    pub(super) line: u32,
    pub(super) kind: ItemKind,
}

pub(super) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

pub(super) fn scan(text: &str) -> Result<Vec<Item>, PtxError> {
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
