//! The radix3 page table through which GSP's bootloader finds the GSP-RM firmware ELF in system
//! memory, as RM builds it in `kgspCreateRadix3` (`src/nvidia/src/kernel/gpu/gsp/kernel_gsp.c`,
//! 535.261.03); the page size is `LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE` (`libos_init_args.h`).
//!
//! RM allocates one block of 4 KiB pages, not necessarily contiguous in bus address space, and
//! uses it in page order as:
//!
//! ```text
//! page 0                         level 0: bus addresses of the level-1 pages (one root page)
//! next L1 pages                  level 1: bus addresses of the level-2 pages
//! next L2 pages                  level 2: bus addresses of the data pages
//! next ceil(size / 4 KiB) pages  the image itself, zero-padded to the page
//! ```
//!
//! Every table entry is a little-endian `u64` bus address; a page holds 512 of them. Each level's
//! entries are written as one array from the start of that level's first page and run on into its
//! next pages, the rest of the table pages stay zero. The counts are computed from the bottom up
//! (`pages[level - 1] = ceil(pages[level] / 512)`) and the root must come out as exactly one
//! page, so an image can be at most 512^3 pages (512 GiB). `GspFwWprMeta::sysmemAddrOfRadix3Elf`
//! is the bus address of page 0 and `sizeOfRadix3Elf` the image size.
//!
//! This module computes the layout and writes the tables given the block's page addresses; the
//! caller allocates the pages and copies the image into the data pages.

use core::fmt;

use super::libos::{LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2, LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE};

/// Bytes per page at every level.
pub const RADIX3_PAGE_SIZE: u64 = LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE;
/// Entries per table page (`entriesLog2 = LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2 - 3`).
pub const RADIX3_ENTRIES_PER_PAGE: u64 = 1 << (LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2 - 3);

/// Page counts of a radix3 block for one image (RM's `radix3[4]` working array).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Radix3Layout {
    image_size: u64,
    /// Pages at levels 0, 1, 2 and of data (level 3).
    pages: [u64; 4],
}

impl Radix3Layout {
    /// The layout for an image of `image_size` bytes.
    pub fn new(image_size: u64) -> Result<Self, Radix3Error> {
        if image_size == 0 {
            return Err(Radix3Error::EmptyImage);
        }
        let mut pages = [0u64; 4];
        pages[3] = image_size.div_ceil(RADIX3_PAGE_SIZE);
        for level in (1..4).rev() {
            pages[level - 1] = pages[level].div_ceil(RADIX3_ENTRIES_PER_PAGE);
        }
        if pages[0] != 1 {
            return Err(Radix3Error::ImageTooLarge { image_size });
        }
        Ok(Self { image_size, pages })
    }

    /// The image size this layout was made for.
    pub const fn image_size(&self) -> u64 {
        self.image_size
    }

    /// Pages at `level` (0, 1, 2: tables; 3: data); 0 for any other level.
    pub const fn level_pages(&self, level: usize) -> u64 {
        if level < 4 {
            self.pages[level]
        } else {
            0
        }
    }

    /// Index of the first page of `level` in the block (RM's `radix3[level].offset` / 4 KiB).
    pub const fn level_first_page(&self, level: usize) -> u64 {
        let mut first = 0;
        let mut l = 0;
        while l < level && l < 4 {
            first += self.pages[l];
            l += 1;
        }
        first
    }

    /// Pages of tables (levels 0 to 2): the data starts at this page index.
    pub const fn table_pages(&self) -> u64 {
        self.pages[0] + self.pages[1] + self.pages[2]
    }

    /// Pages of data.
    pub const fn data_pages(&self) -> u64 {
        self.pages[3]
    }

    /// Pages in the whole block.
    pub const fn total_pages(&self) -> u64 {
        self.table_pages() + self.data_pages()
    }

    /// Bytes of tables, the size of the buffer [`build_radix3`] writes.
    pub const fn table_bytes(&self) -> u64 {
        self.table_pages() * RADIX3_PAGE_SIZE
    }
}

/// Writes the radix3 tables for `layout` into `tables` (the first
/// [`Radix3Layout::table_bytes`] bytes of the block, which it zeroes first), given `page_addrs`,
/// the bus addresses of all [`Radix3Layout::total_pages`] pages of the block in order. The root
/// is at `page_addrs[0]`.
pub fn build_radix3(layout: &Radix3Layout, page_addrs: &[u64], tables: &mut [u8]) -> Result<(), Radix3Error> {
    if page_addrs.len() as u64 != layout.total_pages() {
        return Err(Radix3Error::PageCount { expected: layout.total_pages(), found: page_addrs.len() as u64 });
    }
    if tables.len() as u64 != layout.table_bytes() {
        return Err(Radix3Error::TableSize { expected: layout.table_bytes(), found: tables.len() as u64 });
    }
    if let Some((index, &addr)) = page_addrs.iter().enumerate().find(|(_, a)| *a % RADIX3_PAGE_SIZE != 0) {
        return Err(Radix3Error::UnalignedPage { index, addr });
    }
    tables.fill(0);
    // Level L's entries point at the pages of level L + 1, for L = 0, 1, 2 (2 pointing at data).
    for level in 0..3 {
        let table_start = (layout.level_first_page(level) * RADIX3_PAGE_SIZE) as usize;
        let first = layout.level_first_page(level + 1) as usize;
        let count = layout.level_pages(level + 1) as usize;
        // In bounds: the counts sum to page_addrs.len(), and level `level` has enough pages
        // (ceil(count / 512)) to hold `count` entries inside `tables`.
        let targets = page_addrs.get(first..first + count).unwrap_or(&[]);
        let slots = tables.get_mut(table_start..).unwrap_or(&mut []);
        for (slot, addr) in slots.chunks_exact_mut(8).zip(targets) {
            slot.copy_from_slice(&addr.to_le_bytes());
        }
    }
    Ok(())
}

/// Why a radix3 table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Radix3Error {
    /// A zero-byte image (RM refuses it too).
    EmptyImage,
    /// More than 512^3 pages: the root would need more than one page.
    ImageTooLarge { image_size: u64 },
    /// `page_addrs` does not have one address per page of the block.
    PageCount { expected: u64, found: u64 },
    /// The table buffer is not exactly the tables' size.
    TableSize { expected: u64, found: u64 },
    /// A page address is not 4 KiB aligned.
    UnalignedPage { index: usize, addr: u64 },
}

impl fmt::Display for Radix3Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Radix3Error::EmptyImage => write!(f, "radix3: the image is empty"),
            Radix3Error::ImageTooLarge { image_size } => {
                write!(f, "radix3: image of {image_size:#x} bytes needs more than one root page")
            }
            Radix3Error::PageCount { expected, found } => {
                write!(f, "radix3: block needs {expected} page addresses, got {found}")
            }
            Radix3Error::TableSize { expected, found } => {
                write!(f, "radix3: table buffer must be {expected} bytes, got {found}")
            }
            Radix3Error::UnalignedPage { index, addr } => {
                write!(f, "radix3: page {index} at {addr:#x} is not 4 KiB aligned")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use alloc::vec::Vec;

    fn entry(tables: &[u8], page: u64, index: u64) -> u64 {
        let at = (page * RADIX3_PAGE_SIZE + index * 8) as usize;
        u64::from_le_bytes(tables[at..at + 8].try_into().unwrap())
    }

    /// Scattered, descending page addresses, so that an index mix-up shows.
    fn scattered(pages: u64) -> Vec<u64> {
        (0..pages).map(|i| 0x8000_0000 - i * 0x3000).collect()
    }

    #[test]
    fn three_page_image() {
        // 3 pages of data -> 1 level-2 page -> 1 level-1 page -> 1 root: 6 pages in all.
        let layout = Radix3Layout::new(3 * 4096 - 100).unwrap();
        assert_eq!([0, 1, 2, 3].map(|l| layout.level_pages(l)), [1, 1, 1, 3]);
        assert_eq!(layout.table_pages(), 3);
        assert_eq!(layout.total_pages(), 6);
        let addrs = scattered(6);
        let mut tables = vec![0xaau8; 3 * 4096];
        build_radix3(&layout, &addrs, &mut tables).unwrap();
        // Root -> level 1 page (block page 1); level 1 -> level 2 page (page 2);
        // level 2 -> data pages 3, 4, 5.
        assert_eq!(entry(&tables, 0, 0), addrs[1]);
        assert_eq!(entry(&tables, 1, 0), addrs[2]);
        assert_eq!([0, 1, 2].map(|i| entry(&tables, 2, i)), [addrs[3], addrs[4], addrs[5]]);
        // Everything else is zero.
        let used = [(0u64, 0u64), (1, 0), (2, 0), (2, 1), (2, 2)];
        for page in 0..3 {
            for index in 0..512 {
                if !used.contains(&(page, index)) {
                    assert_eq!(entry(&tables, page, index), 0, "page {page} entry {index}");
                }
            }
        }
    }

    #[test]
    fn six_hundred_page_image() {
        // 600 data pages -> ceil(600 / 512) = 2 level-2 pages -> 1 level-1 page -> 1 root.
        // Block: root at 0, level 1 at 1, level 2 at 2..=3, data at 4..=603.
        let layout = Radix3Layout::new(600 * 4096).unwrap();
        assert_eq!([0, 1, 2, 3].map(|l| layout.level_pages(l)), [1, 1, 2, 600]);
        assert_eq!([0, 1, 2, 3].map(|l| layout.level_first_page(l)), [0, 1, 2, 4]);
        assert_eq!(layout.total_pages(), 604);
        let addrs = scattered(604);
        let mut tables = vec![0u8; 4 * 4096];
        build_radix3(&layout, &addrs, &mut tables).unwrap();
        assert_eq!(entry(&tables, 0, 0), addrs[1]);
        assert_eq!(entry(&tables, 0, 1), 0);
        assert_eq!([entry(&tables, 1, 0), entry(&tables, 1, 1), entry(&tables, 1, 2)], [addrs[2], addrs[3], 0]);
        // Level 2 is one array over pages 2 and 3: entries 0..511 in page 2, 512..599 in page 3.
        for i in 0..512 {
            assert_eq!(entry(&tables, 2, i), addrs[4 + i as usize]);
        }
        for i in 0..88 {
            assert_eq!(entry(&tables, 3, i), addrs[4 + 512 + i as usize]);
        }
        assert_eq!(entry(&tables, 3, 88), 0);
        assert_eq!(entry(&tables, 3, 511), 0);
    }

    #[test]
    fn boundaries() {
        // 512 pages still fit one level-2 page; 513 need two.
        assert_eq!(Radix3Layout::new(512 * 4096).unwrap().level_pages(2), 1);
        assert_eq!(Radix3Layout::new(512 * 4096 + 1).unwrap().level_pages(2), 2);
        // The largest image: 512^3 pages.
        let max = 512u64 * 512 * 512 * 4096;
        let layout = Radix3Layout::new(max).unwrap();
        assert_eq!([0, 1, 2].map(|l| layout.level_pages(l)), [1, 512, 512 * 512]);
        assert_eq!(Radix3Layout::new(max + 1), Err(Radix3Error::ImageTooLarge { image_size: max + 1 }));
        assert_eq!(Radix3Layout::new(u64::MAX), Err(Radix3Error::ImageTooLarge { image_size: u64::MAX }));
        assert_eq!(Radix3Layout::new(0), Err(Radix3Error::EmptyImage));
    }

    #[test]
    fn refuses_bad_inputs() {
        let layout = Radix3Layout::new(4096).unwrap();
        let mut tables = vec![0u8; 3 * 4096];
        assert_eq!(
            build_radix3(&layout, &scattered(3), &mut tables),
            Err(Radix3Error::PageCount { expected: 4, found: 3 })
        );
        assert_eq!(
            build_radix3(&layout, &scattered(4), &mut tables[..4096]),
            Err(Radix3Error::TableSize { expected: 3 * 4096, found: 4096 })
        );
        let mut addrs = scattered(4);
        addrs[2] |= 0x800;
        assert_eq!(
            build_radix3(&layout, &addrs, &mut tables),
            Err(Radix3Error::UnalignedPage { index: 2, addr: addrs[2] })
        );
    }
}
