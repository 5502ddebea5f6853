//! Named files inside a boot module in the cpio "newc" format (the initramfs format; see the
//! Linux kernel's Documentation/driver-api/early-userspace/buffer-format.rst):
//! a 110-byte ASCII header "070701" + 13 eight-digit hex fields (ino, mode, uid, gid, nlink,
//! mtime, filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check), the name
//! (namesize bytes including NUL), padding to 4 bytes, the data, padding to 4 bytes; the
//! archive ends with the entry "TRAILER!!!".
//!
//! PVH loaders pass one module (QEMU's `-initrd`); packing several files into it as cpio is how
//! firmware and payloads travel by name on that path.

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub const NEWC_MAGIC: &[u8; 6] = b"070701";
const HEADER_LEN: usize = 110;
const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpioEntry<'a> {
    pub name: &'a str,
    pub data: &'a [u8],
    /// Offset of `data` within the archive.
    pub offset: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpioError {
    BadMagic { offset: usize },
    BadHeaderField { offset: usize },
    Truncated { offset: usize },
    MissingTrailer,
}

pub fn is_cpio(data: &[u8]) -> bool {
    data.starts_with(NEWC_MAGIC)
}

fn hex_field(h: &[u8], index: usize, offset: usize) -> Result<u32, CpioError> {
    // Field `index` is the `index`th group of 8 digits after the magic.
    let digits = h
        .get(NEWC_MAGIC.len()..)
        .and_then(|fields| fields.chunks_exact(8).nth(index))
        .ok_or(CpioError::Truncated { offset })?;
    let text = core::str::from_utf8(digits).map_err(|_| CpioError::BadHeaderField { offset })?;
    u32::from_str_radix(text, 16).map_err(|_| CpioError::BadHeaderField { offset })
}

/// Iterates the regular files of a newc archive.
pub struct CpioIter<'a> {
    archive: &'a [u8],
    offset: usize,
    done: bool,
}

pub fn entries(archive: &[u8]) -> CpioIter<'_> {
    CpioIter { archive, offset: 0, done: false }
}

/// `x` rounded up to 4, or `None` past `usize::MAX`.
const fn align4(x: usize) -> Option<usize> {
    x.checked_next_multiple_of(4)
}

impl<'a> Iterator for CpioIter<'a> {
    type Item = Result<CpioEntry<'a>, CpioError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.done {
                return None;
            }
            let offset = self.offset;
            let step = (|| {
                let name_start = offset.checked_add(HEADER_LEN).ok_or(CpioError::MissingTrailer)?;
                let header = self.archive.get(offset..name_start).ok_or(CpioError::MissingTrailer)?;
                if !header.starts_with(NEWC_MAGIC) {
                    return Err(CpioError::BadMagic { offset });
                }
                let mode = hex_field(header, 1, offset)?;
                let filesize = hex_field(header, 6, offset)? as usize;
                let namesize = hex_field(header, 11, offset)? as usize;
                let name_end = name_start.checked_add(namesize).ok_or(CpioError::Truncated { offset })?;
                let name_bytes = self.archive.get(name_start..name_end).ok_or(CpioError::Truncated { offset })?;
                // Up to the NUL (`split` yields at least one piece).
                let name_bytes = name_bytes.split(|&c| c == 0).next().unwrap_or(name_bytes);
                let name = core::str::from_utf8(name_bytes).map_err(|_| CpioError::BadHeaderField { offset })?;
                let data_start = align4(name_end).ok_or(CpioError::Truncated { offset })?;
                let data_end = data_start.checked_add(filesize).ok_or(CpioError::Truncated { offset })?;
                let data = self.archive.get(data_start..data_end).ok_or(CpioError::Truncated { offset })?;
                let next = align4(data_end).ok_or(CpioError::Truncated { offset })?;
                Ok((mode, name, data, data_start, next))
            })();
            match step {
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
                Ok((_, "TRAILER!!!", _, _, _)) => {
                    self.done = true;
                    return None;
                }
                Ok((mode, name, data, data_start, next)) => {
                    self.offset = next;
                    if mode & S_IFMT == S_IFREG {
                        let name = name.trim_start_matches("./");
                        return Some(Ok(CpioEntry { name, data, offset: data_start }));
                    }
                }
            }
        }
    }
}

/// Builds a newc archive (used by tests and by xtask-like tooling on the host).
#[cfg(test)]
// Test-only: builds its own input, like the test modules.
#[allow(clippy::arithmetic_side_effects)]
pub fn build(files: &[(&str, &[u8])]) -> std::vec::Vec<u8> {
    let mut out = std::vec::Vec::new();
    let mut push = |name: &str, mode: u32, data: &[u8]| {
        let header = format!(
            "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            1,
            mode,
            0,
            0,
            1,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out.extend_from_slice(data);
        while out.len() % 4 != 0 {
            out.push(0);
        }
    };
    push(".", 0o040755, &[]);
    for (name, data) in files {
        push(name, 0o100644, data);
    }
    push("TRAILER!!!", 0, &[]);
    out
}

#[cfg(test)]
mod tests {
    // Tests index and compute offsets on purpose, over inputs they build themselves.
    #![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use super::*;

    #[test]
    fn lists_regular_files_with_their_data() {
        let a = build(&[("gsp_ga10x.bin", b"firmware"), ("payload/vecadd.ptx", b"ptx!")]);
        let files: std::vec::Vec<_> = entries(&a).map(|e| e.unwrap()).collect();
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].name, "gsp_ga10x.bin");
        assert_eq!(files[0].data, b"firmware");
        assert_eq!(files[1].name, "payload/vecadd.ptx");
        assert_eq!(&a[files[1].offset..files[1].offset + 4], b"ptx!");
    }

    /// A name padded with NULs past its end (as xtask writes them, to page-align the data):
    /// the name ends at its first NUL, the data starts after the whole namesize.
    #[test]
    fn a_name_padded_with_nuls_ends_at_its_first_nul() {
        let mut a = std::vec::Vec::new();
        let namesize = 4096 - 110;
        a.extend_from_slice(
            format!(
                "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
                1, 0o100644, 0, 0, 1, 0, 5, 0, 0, 0, 0, namesize, 0
            )
            .as_bytes(),
        );
        a.extend_from_slice(b"fw.bin");
        a.resize(110 + namesize, 0);
        a.extend_from_slice(b"hello\0\0\0");
        a.extend_from_slice(&build(&[])[112..]); // the trailer entry of an empty archive after "."
        let files: std::vec::Vec<_> = entries(&a).map(|e| e.unwrap()).collect();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, "fw.bin");
        assert_eq!(files[0].offset, 4096);
        assert_eq!(files[0].data, b"hello");
    }

    #[test]
    fn damaged_archives_give_errors() {
        let a = build(&[("x", b"abcdef")]);
        // Truncated inside the data of "x".
        let cut = &a[..a.len() - 130];
        assert!(entries(cut).any(|e| e.is_err()));
        // No trailer.
        let no_trailer = &a[..a.len() - 124];
        assert!(entries(no_trailer)
            .any(|e| e == Err(CpioError::MissingTrailer) || matches!(e, Err(CpioError::Truncated { .. }))));
        let mut bad = a.clone();
        bad[15] = b'z'; // inside the mode field
        assert!(matches!(entries(&bad).next(), Some(Err(CpioError::BadHeaderField { .. }))));
        assert!(matches!(entries(b"hello").next(), Some(Err(CpioError::MissingTrailer))));
    }
}
