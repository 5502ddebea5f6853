//! Firmware tables (ACPI, the BIOS areas): copies of physical memory that no Rust object owns.
//!
//! [`read`] copies rather than lending a view: the bytes then belong to a Rust object of their
//! own, and nothing the kernel does later (a device mapping of the same range, firmware or SMM
//! writing ACPI NVS) can change them under a reference. Ranges that may hold memory the kernel
//! writes as Rust objects (the RAM frames come from, the kernel image and its stack) are refused
//! ([`paging::overlaps_kernel_objects`]); the loader's structures, which the kernel only reads,
//! may be read (Multiboot2 hands over a copy of the RSDP inside its information structure). The parser reads
//! through [`crate::platform_acpi::KernelMapper`], which keeps the copies for as long as it
//! lives.

use super::paging::{self, CacheType};
use super::PHYS_OFFSET;
use alloc::boxed::Box;
use alloc::vec;

/// The highest physical address bit x86_64 page tables can name (52-bit physical addresses).
const PHYS_LIMIT: u64 = 1 << 52;

/// A copy of the `len` bytes of physical memory at `phys`: through the RAM mapping where every
/// page of the range is there (ACPI reclaimable and NVS memory), otherwise through a fresh
/// write-back mapping (SeaBIOS keeps its tables in E820-reserved memory). `None` past the
/// physical address space, for ranges that may hold the kernel's own objects, or when no
/// mapping can be made.
pub fn read(phys: u64, len: usize) -> Option<Box<[u8]>> {
    let end = phys.checked_add(len as u64)?;
    if end > PHYS_LIMIT || paging::overlaps_kernel_objects(phys, end.max(phys + 1)) {
        return None;
    }
    let mut copy = vec![0u8; len].into_boxed_slice();
    if len == 0 {
        return Some(copy);
    }
    let direct = |a: u64| paging::translate(PHYS_OFFSET + a).is_some_and(|(p, _, _)| p == a);
    let mapped = (phys & !0xfff..end).step_by(0x1000).all(direct);
    let virt =
        if mapped { PHYS_OFFSET + phys } else { paging::map_mmio(phys, len as u64, CacheType::WriteBack).ok()? };
    // SAFETY: `[virt, virt + len)` maps `[phys, end)` for the kernel's lifetime (checked page by
    // page, or just mapped). No Rust object the kernel writes lives there (checked above), so
    // the read races with no write of ours, and `copy`, a fresh allocation, aliases nothing.
    unsafe { core::ptr::copy_nonoverlapping(virt as *const u8, copy.as_mut_ptr(), len) };
    Some(copy)
}
