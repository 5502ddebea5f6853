//! Multiboot2 boot information (Multiboot2 specification 1.0, section 3.6 "Boot information").
//!
//! The information block starts with `total_size u32, reserved u32`, then 8-byte aligned tags
//! `type u32, size u32, ...` ending with a tag of type 0. Tags used here (section 3.6.x):
//! 1 command line (string @8), 2 boot loader name (string @8), 3 module (mod_start u32 @8,
//! mod_end u32 @12, string @16), 6 memory map (entry_size u32 @8, entry_version u32 @12,
//! entries @16: base_addr u64, length u64, type u32, reserved u32), 8 framebuffer info
//! (addr u64 @8, pitch u32 @16, width u32 @20, height u32 @24, bpp u8 @28, type u8 @29,
//! reserved u16 @30, colour info @32: for type 1 (direct RGB) red position u8, red mask size
//! u8, green position, green size, blue position, blue size), 14 ACPI old RSDP (copy @8),
//! 15 ACPI new RSDP (copy @8).

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::phys::{u32_at, u64_at, utf8_prefix, PhysMemory};
use crate::{BootError, FramebufferDesc, LoaderData, Module};

/// The value a Multiboot2 loader leaves in %eax (specification section 3.3).
pub const MULTIBOOT2_BOOTLOADER_MAGIC: u32 = 0x36d7_6289;

const TAG_END: u32 = 0;
const TAG_CMDLINE: u32 = 1;
const TAG_LOADER_NAME: u32 = 2;
const TAG_MODULE: u32 = 3;
const TAG_MMAP: u32 = 6;
const TAG_FRAMEBUFFER: u32 = 8;
const TAG_ACPI_OLD: u32 = 14;
const TAG_ACPI_NEW: u32 = 15;

/// Upper bound on the information block: GRUB's are a few KiB; this rejects garbage sizes.
const MAX_INFO_SIZE: usize = 1 << 20;

fn cstr_in(b: &[u8]) -> &str {
    // Up to the NUL (`split` yields at least one piece).
    utf8_prefix(b.split(|&c| c == 0).next().unwrap_or(b))
}

/// Physical address of the body (past the 8-byte header) of the tag at `off` in the information
/// block at `info_phys`; readable memory never reaches the top of the address space.
fn tag_body_phys(info_phys: u64, off: usize) -> Result<u64, BootError> {
    info_phys
        .checked_add(off as u64)
        .and_then(|tag| tag.checked_add(8))
        .ok_or(BootError::Malformed("Multiboot2 information address"))
}

pub fn parse<'m>(
    mem: &dyn PhysMemory<'m>,
    magic: u32,
    info_phys: u64,
    out: &mut LoaderData<'m>,
) -> Result<(), BootError> {
    if magic != MULTIBOOT2_BOOTLOADER_MAGIC {
        return Err(BootError::BadMagic { protocol: "Multiboot2", found: magic });
    }
    let head = mem.slice(info_phys, 8).ok_or(BootError::Unreadable("Multiboot2 information"))?;
    let total = u32_at(head, 0).unwrap_or(0) as usize;
    if !(16..=MAX_INFO_SIZE).contains(&total) {
        return Err(BootError::Malformed("Multiboot2 information total_size"));
    }
    let info = mem.slice(info_phys, total).ok_or(BootError::Unreadable("Multiboot2 information"))?;
    out.reserve_loader_area(info_phys, total as u64)?;
    out.loader_name = "Multiboot2";

    let mut have_mmap = false;
    let mut rsdp_new = None;
    let mut rsdp_old = None;
    let mut off = 8usize;
    loop {
        let (Some(tag), Some(size)) = (u32_at(info, off), off.checked_add(4).and_then(|at| u32_at(info, at))) else {
            return Err(BootError::Malformed("Multiboot2 tag runs past total_size"));
        };
        let size = size as usize;
        if tag == TAG_END {
            break;
        }
        let body = off
            .checked_add(size)
            .filter(|_| size >= 8)
            .and_then(|end| info.get(off..end))
            .ok_or(BootError::Malformed("Multiboot2 tag size"))?;
        match tag {
            // `body` is at least the 8-byte tag header, checked above.
            TAG_CMDLINE => out.cmdline = body.get(8..).map(cstr_in).unwrap_or(""),
            TAG_LOADER_NAME => out.loader_name = body.get(8..).map(cstr_in).unwrap_or(""),
            TAG_MODULE => {
                let start = u32_at(body, 8).ok_or(BootError::Malformed("module tag"))? as u64;
                let end = u32_at(body, 12).ok_or(BootError::Malformed("module tag"))? as u64;
                let args = body.get(16..).map(cstr_in).unwrap_or("");
                let len = end.checked_sub(start).ok_or(BootError::Malformed("module end before start"))?;
                let data = mem.slice(start, len as usize).ok_or(BootError::Unreadable("Multiboot2 module"))?;
                let name = args.split_whitespace().next().unwrap_or("module");
                out.add_module(Module { name, args, phys: start, data })?;
            }
            TAG_MMAP => {
                let entry_size = u32_at(body, 8).unwrap_or(0) as usize;
                if entry_size < 24 {
                    return Err(BootError::Malformed("Multiboot2 memory map entry_size"));
                }
                let entries = body.get(16..).ok_or(BootError::Malformed("Multiboot2 memory map tag size"))?;
                for e in entries.chunks_exact(entry_size) {
                    if let (Some(base), Some(len), Some(kind)) = (u64_at(e, 0), u64_at(e, 8), u32_at(e, 16)) {
                        out.regions.add_firmware_region(base, len, kind).map_err(BootError::MemoryMap)?;
                    }
                }
                have_mmap = true;
            }
            TAG_FRAMEBUFFER => {
                let addr = u64_at(body, 8);
                let pitch = u32_at(body, 16);
                let width = u32_at(body, 20);
                let height = u32_at(body, 24);
                let bpp = body.get(28).copied();
                let fb_type = body.get(29).copied();
                if let (Some(addr), Some(pitch), Some(width), Some(height), Some(bpp), Some(1)) =
                    (addr, pitch, width, height, bpp, fb_type)
                {
                    // Red, green, blue: position and mask size each; the usual 8:8:8 layout when
                    // the tag is too short to say.
                    let colour: Option<[u8; 6]> = body.get(32..38).and_then(|c| c.try_into().ok());
                    let [red_position, _, green_position, _, blue_position, _] = colour.unwrap_or([16, 0, 8, 0, 0, 0]);
                    out.framebuffer = Some(FramebufferDesc {
                        phys: addr,
                        pitch,
                        width,
                        height,
                        bpp,
                        red_position,
                        green_position,
                        blue_position,
                    });
                }
            }
            // The RSDP is copied into the tag: its physical address is the tag's body.
            TAG_ACPI_OLD => rsdp_old = Some(tag_body_phys(info_phys, off)?),
            TAG_ACPI_NEW => rsdp_new = Some(tag_body_phys(info_phys, off)?),
            _ => {}
        }
        off = size
            .checked_next_multiple_of(8)
            .and_then(|step| off.checked_add(step))
            .ok_or(BootError::Malformed("Multiboot2 tag size"))?;
    }
    if !have_mmap {
        return Err(BootError::NoMemoryMap("Multiboot2 information has no memory map tag"));
    }
    out.rsdp = rsdp_new.or(rsdp_old);
    Ok(())
}
