//! The I/O APIC (Intel 82093AA datasheet): IOREGSEL at +0x00, IOWIN at +0x10; registers
//! 0x00 ID, 0x01 version (bits 23:16 = maximum redirection entry), 0x10 + 2n redirection
//! entry n (low dword: vector 7:0, delivery 10:8, polarity 13, trigger 15, mask 16; high
//! dword: destination 31:24).

use crate::mem::paging::{self, CacheType};
use spin::Mutex;

pub struct IoApic {
    virt: u64,
    pub id: u8,
    pub gsi_base: u32,
    pub entries: u32,
}

static IOAPICS: Mutex<alloc::vec::Vec<IoApic>> = Mutex::new(alloc::vec::Vec::new());

impl IoApic {
    fn read(&self, reg: u32) -> u32 {
        // SAFETY: the IOAPIC window is mapped UC at `virt`; IOREGSEL/IOWIN are 32-bit.
        unsafe {
            core::ptr::write_volatile(self.virt as *mut u32, reg);
            core::ptr::read_volatile((self.virt + 0x10) as *const u32)
        }
    }
    fn write(&self, reg: u32, value: u32) {
        // SAFETY: as in `read`.
        unsafe {
            core::ptr::write_volatile(self.virt as *mut u32, reg);
            core::ptr::write_volatile((self.virt + 0x10) as *mut u32, value);
        }
    }
}

/// Maps an I/O APIC and masks all its inputs.
pub fn add(id: u8, phys: u64, gsi_base: u32) -> Result<(), paging::MapError> {
    let virt = paging::map_mmio(phys, 0x20, CacheType::Uncached)?;
    let mut io = IoApic { virt, id, gsi_base, entries: 0 };
    io.entries = ((io.read(0x01) >> 16) & 0xff) + 1;
    let hw_id = (io.read(0x00) >> 24) & 0x0f;
    if hw_id != io.id as u32 & 0x0f {
        log::warn!(target: "apic", "I/O APIC at {phys:#x}: MADT says id {}, the chip says {hw_id}", io.id);
    }
    for n in 0..io.entries {
        io.write(0x10 + 2 * n, 1 << 16);
    }
    log::info!(target: "apic", "I/O APIC {id} at {phys:#x}: GSIs {}..{}", gsi_base, gsi_base + io.entries - 1);
    IOAPICS.lock().push(io);
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSuchGsi(pub u32);

/// Routes `gsi` to `vector` on APIC `dest` (fixed delivery), unmasked.
pub fn route(gsi: u32, vector: u8, dest: u32, active_low: bool, level: bool) -> Result<(), NoSuchGsi> {
    let list = IOAPICS.lock();
    let io = list.iter().find(|io| gsi >= io.gsi_base && gsi < io.gsi_base + io.entries).ok_or(NoSuchGsi(gsi))?;
    let n = gsi - io.gsi_base;
    let low = vector as u32 | (active_low as u32) << 13 | (level as u32) << 15;
    io.write(0x10 + 2 * n + 1, (dest & 0xff) << 24);
    io.write(0x10 + 2 * n, low);
    Ok(())
}

pub fn mask(gsi: u32) -> Result<(), NoSuchGsi> {
    let list = IOAPICS.lock();
    let io = list.iter().find(|io| gsi >= io.gsi_base && gsi < io.gsi_base + io.entries).ok_or(NoSuchGsi(gsi))?;
    let n = gsi - io.gsi_base;
    let low = io.read(0x10 + 2 * n);
    io.write(0x10 + 2 * n, low | 1 << 16);
    Ok(())
}

pub fn count() -> usize {
    IOAPICS.lock().len()
}
