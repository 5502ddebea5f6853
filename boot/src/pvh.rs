//! PVH boot: `struct hvm_start_info` and the tables it points to.
//!
//! Layouts from Xen's public ABI header `xen/include/public/arch-x86/hvm/start_info.h`
//! (the "x86/HVM direct boot ABI" that QEMU, Firecracker and cloud-hypervisor implement):
//! ```text
//! hvm_start_info (56 bytes): magic u32 @0, version u32 @4, flags u32 @8, nr_modules u32 @12,
//!   modlist_paddr u64 @16, cmdline_paddr u64 @24, rsdp_paddr u64 @32,
//!   memmap_paddr u64 @40 (version >= 1), memmap_entries u32 @48, reserved u32 @52
//! hvm_modlist_entry (32 bytes): paddr u64 @0, size u64 @8, cmdline_paddr u64 @16, reserved u64
//! hvm_memmap_table_entry (24 bytes): addr u64 @0, size u64 @8, type u32 @16, reserved u32 @20
//! ```

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::phys::{c_string, u32_at, u64_at, PhysMemory};
use crate::{BootError, LoaderData, Module};

/// `XEN_HVM_START_MAGIC_VALUE` (start_info.h).
pub const XEN_HVM_START_MAGIC_VALUE: u32 = 0x336e_c578;
const START_INFO_SIZE: usize = 56;
const MODLIST_ENTRY_SIZE: usize = 32;
const MEMMAP_ENTRY_SIZE: usize = 24;

/// Parses the start info at `info_phys` into `out`.
pub fn parse<'m>(mem: &dyn PhysMemory<'m>, info_phys: u64, out: &mut LoaderData<'m>) -> Result<(), BootError> {
    let si = mem.slice(info_phys, START_INFO_SIZE).ok_or(BootError::Unreadable("hvm_start_info"))?;
    let field32 = |off| u32_at(si, off).ok_or(BootError::Unreadable("hvm_start_info"));
    let field64 = |off| u64_at(si, off).ok_or(BootError::Unreadable("hvm_start_info"));
    let magic = field32(0)?;
    if magic != XEN_HVM_START_MAGIC_VALUE {
        return Err(BootError::BadMagic { protocol: "PVH", found: magic });
    }
    let version = field32(4)?;
    let nr_modules = field32(12)?;
    let modlist = field64(16)?;
    let cmdline = field64(24)?;
    let rsdp = field64(32)?;
    out.reserve_loader_area(info_phys, START_INFO_SIZE as u64)?;
    out.cmdline = c_string(mem, cmdline, 4096);
    if cmdline != 0 {
        // With its NUL; at most 4096 bytes long, so the add cannot overflow.
        let with_nul = (out.cmdline.len() as u64).checked_add(1).ok_or(BootError::Malformed("PVH command line"))?;
        out.reserve_loader_area(cmdline, with_nul)?;
    }
    if rsdp != 0 {
        out.rsdp = Some(rsdp);
    }

    if version < 1 {
        return Err(BootError::NoMemoryMap("PVH start info version 0 has no memory map"));
    }
    let memmap = field64(40)?;
    let entries = field32(48)? as usize;
    let table_len = entries.checked_mul(MEMMAP_ENTRY_SIZE).ok_or(BootError::Unreadable("PVH memory map"))?;
    let table = mem.slice(memmap, table_len).ok_or(BootError::Unreadable("PVH memory map"))?;
    if entries == 0 {
        return Err(BootError::NoMemoryMap("PVH memory map has no entries"));
    }
    for e in table.chunks_exact(MEMMAP_ENTRY_SIZE) {
        let (addr, size, kind) = (u64_at(e, 0), u64_at(e, 8), u32_at(e, 16));
        if let (Some(addr), Some(size), Some(kind)) = (addr, size, kind) {
            out.regions.add_firmware_region(addr, size, kind).map_err(BootError::MemoryMap)?;
        }
    }
    out.reserve_loader_area(memmap, table_len as u64)?;

    let list_len =
        (nr_modules as usize).checked_mul(MODLIST_ENTRY_SIZE).ok_or(BootError::Unreadable("PVH module list"))?;
    if nr_modules > 0 {
        let list = mem.slice(modlist, list_len).ok_or(BootError::Unreadable("PVH module list"))?;
        out.reserve_loader_area(modlist, list_len as u64)?;
        for (i, e) in list.chunks_exact(MODLIST_ENTRY_SIZE).enumerate() {
            let paddr = u64_at(e, 0).unwrap_or(0);
            let size = u64_at(e, 8).unwrap_or(0);
            let name_phys = u64_at(e, 16).unwrap_or(0);
            let args = c_string(mem, name_phys, 1024);
            let data = mem.slice(paddr, size as usize).ok_or(BootError::Unreadable("PVH module"))?;
            // QEMU passes `-initrd` as module 0 without a command line: call it "initrd".
            let name = args.split_whitespace().next().unwrap_or(if i == 0 { "initrd" } else { "module" });
            out.add_module(Module { name, args, phys: paddr, data })?;
        }
    }
    out.loader_name = "PVH";
    Ok(())
}
