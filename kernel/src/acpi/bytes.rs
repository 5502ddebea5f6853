//! Little-endian field reads from firmware bytes. Every read is bounds-checked and answers
//! `None` past the end, so a short or lying table becomes an error at the caller, never a panic.
//! ACPI stores every multi-byte field little-endian (ACPI 6.5 §5.2 "ACPI System Description
//! Tables": "All numeric values in ACPI-defined tables ... are little-endian").

/// Bounds-checked little-endian reads at byte offsets.
pub(crate) trait LeBytes {
    fn array_at<const N: usize>(&self, offset: usize) -> Option<[u8; N]>;

    fn u8_at(&self, offset: usize) -> Option<u8> {
        self.array_at::<1>(offset).map(|[byte]| byte)
    }

    fn u16_at(&self, offset: usize) -> Option<u16> {
        self.array_at(offset).map(u16::from_le_bytes)
    }

    fn u32_at(&self, offset: usize) -> Option<u32> {
        self.array_at(offset).map(u32::from_le_bytes)
    }

    fn u64_at(&self, offset: usize) -> Option<u64> {
        self.array_at(offset).map(u64::from_le_bytes)
    }
}

impl LeBytes for [u8] {
    fn array_at<const N: usize>(&self, offset: usize) -> Option<[u8; N]> {
        let end = offset.checked_add(N)?;
        self.get(offset..end)?.try_into().ok()
    }
}

/// The 8-bit sum of `bytes`; ACPI structures are valid when their bytes sum to zero.
pub(crate) fn checksum(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |sum, &byte| sum.wrapping_add(byte))
}

/// Firmware identifiers (OEM ID, table IDs, signatures) are meant to be ASCII but are input:
/// shows printable ASCII as is and anything else as `?`, without trailing spaces or NULs.
pub(crate) struct AsciiField<'a>(pub &'a [u8]);

impl core::fmt::Display for AsciiField<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let shown_bytes = match self.0.iter().rposition(|&b| b != b' ' && b != 0) {
            Some(last) => self.0.get(..=last).unwrap_or(&[]),
            None => &[],
        };
        for &byte in shown_bytes {
            let shown = if byte.is_ascii_graphic() || byte == b' ' { byte as char } else { '?' };
            core::fmt::Write::write_char(f, shown)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    // Tests index and compute offsets on purpose, over inputs they build themselves.
    #![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use super::*;

    #[test]
    fn reads_past_the_end_are_none() {
        let bytes = [1u8, 2, 3, 4, 5];
        assert_eq!(bytes.u32_at(0), Some(0x0403_0201));
        assert_eq!(bytes.u32_at(1), Some(0x0504_0302));
        assert_eq!(bytes.u32_at(2), None);
        assert_eq!(bytes.u64_at(0), None);
        assert_eq!(bytes.u8_at(usize::MAX), None);
        assert_eq!(bytes.u16_at(usize::MAX - 1), None);
    }

    #[test]
    fn ascii_field_trims_and_masks() {
        assert_eq!(alloc::format!("{}", AsciiField(b"DELL  ")), "DELL");
        assert_eq!(alloc::format!("{}", AsciiField(b"A\x01B\0\0")), "A?B");
        assert_eq!(alloc::format!("{}", AsciiField(b"\0\0\0\0")), "");
    }
}
