//! The model's framebuffer (VRAM): sparse, so a model of an 80 GiB board costs only what is
//! written. 64 KiB pages are allocated on first write; memory never written reads as zeros.
//! Every access is range-checked against the board's size (`ModelConfig::vram_bytes`).

use alloc::boxed::Box;
use alloc::collections::BTreeMap;

/// Bytes per backing page.
pub const VRAM_PAGE_BYTES: u64 = 64 * 1024;

/// Sparse VRAM of a fixed size.
pub struct Vram {
    size: u64,
    pages: BTreeMap<u64, Box<[u8]>>,
}

impl Vram {
    /// VRAM of `size` bytes, all zeros, nothing allocated.
    pub fn new(size: u64) -> Self {
        Vram { size, pages: BTreeMap::new() }
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes of host memory backing written pages.
    pub fn resident_bytes(&self) -> u64 {
        self.pages.len() as u64 * VRAM_PAGE_BYTES
    }

    fn in_range(&self, addr: u64, len: usize) -> bool {
        addr.checked_add(len as u64).is_some_and(|end| end <= self.size)
    }

    /// Fills `buf` from `addr`; `false` (nothing read) when any byte is past the end.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> bool {
        if !self.in_range(addr, buf.len()) {
            return false;
        }
        let mut done = 0usize;
        while done < buf.len() {
            let at = addr + done as u64;
            let page = at / VRAM_PAGE_BYTES;
            let offset = (at % VRAM_PAGE_BYTES) as usize;
            let n = (VRAM_PAGE_BYTES as usize - offset).min(buf.len() - done);
            let dst = &mut buf[done..done + n];
            match self.pages.get(&page) {
                Some(bytes) => dst.copy_from_slice(&bytes[offset..offset + n]),
                None => dst.fill(0),
            }
            done += n;
        }
        true
    }

    /// Writes `data` at `addr`; `false` (nothing written) when any byte is past the end.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        if !self.in_range(addr, data.len()) {
            return false;
        }
        let mut done = 0usize;
        while done < data.len() {
            let at = addr + done as u64;
            let page = at / VRAM_PAGE_BYTES;
            let offset = (at % VRAM_PAGE_BYTES) as usize;
            let n = (VRAM_PAGE_BYTES as usize - offset).min(data.len() - done);
            let src = &data[done..done + n];
            let bytes =
                self.pages.entry(page).or_insert_with(|| alloc::vec![0u8; VRAM_PAGE_BYTES as usize].into_boxed_slice());
            bytes[offset..offset + n].copy_from_slice(src);
            done += n;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_zero_filled_and_range_checked() {
        let mut v = Vram::new(24 << 30);
        let mut b = [0xAAu8; 8];
        assert!(v.read(20 << 30, &mut b));
        assert_eq!(b, [0; 8]);
        assert_eq!(v.resident_bytes(), 0);
        // Straddles a 64 KiB page boundary.
        let data: alloc::vec::Vec<u8> = (0..100u8).collect();
        assert!(v.write(VRAM_PAGE_BYTES - 50, &data));
        assert_eq!(v.resident_bytes(), 2 * VRAM_PAGE_BYTES);
        let mut back = [0u8; 100];
        assert!(v.read(VRAM_PAGE_BYTES - 50, &mut back));
        assert_eq!(&back[..], &data[..]);
        assert!(!v.write((24 << 30) - 4, &[0; 8]));
        assert!(!v.read(u64::MAX - 2, &mut b));
        assert!(v.write((24 << 30) - 8, &[1; 8]));
    }
}
