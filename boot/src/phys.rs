//! Reading the loader's structures out of physical memory.

/// Read access to physical memory while the loader's structures are parsed. At handoff the
/// kernel runs on an identity map of the first 4 GiB; host tests back this with a buffer.
pub trait PhysMemory<'m> {
    /// `len` bytes at physical address `phys`, or `None` if that range is not readable.
    fn slice(&self, phys: u64, len: usize) -> Option<&'m [u8]>;
}

/// Little-endian field readers over a byte slice; `None` when the slice is too short.
pub(crate) fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off.checked_add(4)?)?.try_into().ok()?))
}
pub(crate) fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off.checked_add(8)?)?.try_into().ok()?))
}

/// A NUL-terminated string at `phys`, at most `max` bytes, as UTF-8 (invalid UTF-8 is cut at
/// the first bad byte: command lines are ASCII in practice).
pub(crate) fn c_string<'m>(mem: &dyn PhysMemory<'m>, phys: u64, max: usize) -> &'m str {
    if phys == 0 {
        return "";
    }
    // Read page by page so a string near the end of readable memory is still found.
    let mut len = 0usize;
    let mut bytes: &'m [u8] = &[];
    while len < max {
        let chunk = (4096 - ((phys as usize + len) & 4095)).min(max - len);
        match mem.slice(phys, len + chunk) {
            Some(b) => bytes = b,
            None => break,
        }
        if let Some(nul) = bytes[len..].iter().position(|&c| c == 0) {
            return utf8_prefix(&bytes[..len + nul]);
        }
        len += chunk;
    }
    utf8_prefix(bytes)
}

pub(crate) fn utf8_prefix(b: &[u8]) -> &str {
    match core::str::from_utf8(b) {
        Ok(s) => s,
        Err(e) => core::str::from_utf8(&b[..e.valid_up_to()]).unwrap_or(""),
    }
}
