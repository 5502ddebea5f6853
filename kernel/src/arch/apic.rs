//! The local APIC (xAPIC through MMIO, x2APIC through MSRs), its timer, self-IPIs, and the
//! allocation of interrupt vectors for devices (MSI/MSI-X).
//!
//! Register offsets: Intel SDM vol. 3A, table 11-1 "Local APIC Register Address Map"; x2APIC
//! MSR numbers are 0x800 + offset/16 (table 11-6). IA32_APIC_BASE is MSR 0x1B (section 11.4.4).

use crate::mem::paging::{self, CacheType};
use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use spin::Mutex;

const IA32_APIC_BASE: u32 = 0x1B;
const APIC_BASE_ENABLE: u64 = 1 << 11;
const APIC_BASE_X2APIC: u64 = 1 << 10;

const REG_ID: u32 = 0x20;
const REG_VERSION: u32 = 0x30;
const REG_TPR: u32 = 0x80;
const REG_EOI: u32 = 0xB0;
const REG_SVR: u32 = 0xF0;
const REG_ESR: u32 = 0x280;
const REG_ICR_LOW: u32 = 0x300;
const REG_ICR_HIGH: u32 = 0x310;
const REG_LVT_TIMER: u32 = 0x320;
const REG_LVT_LINT0: u32 = 0x350;
const REG_LVT_LINT1: u32 = 0x360;
const REG_LVT_ERROR: u32 = 0x370;
const REG_TIMER_INITIAL: u32 = 0x380;
pub const REG_TIMER_CURRENT: u32 = 0x390;
const REG_TIMER_DIVIDE: u32 = 0x3E0;
const X2APIC_SELF_IPI_MSR: u32 = 0x83F;

const LVT_MASKED: u32 = 1 << 16;
const LVT_TIMER_PERIODIC: u32 = 1 << 17;

/// Vector for spurious interrupts (SVR bits 7:0); its low 4 bits must be 1s on old APICs.
pub const SPURIOUS_VECTOR: u8 = 0xFF;
pub const ERROR_VECTOR: u8 = 0xFE;
/// The range handed to devices and kernel services.
const FIRST_DYNAMIC_VECTOR: u8 = 0x30;
const LAST_DYNAMIC_VECTOR: u8 = 0xEF;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApicMode {
    XApic,
    X2Apic,
}

static MODE: AtomicU8 = AtomicU8::new(0);
static XAPIC_VIRT: AtomicU64 = AtomicU64::new(0);
static VECTORS: Mutex<[u64; 4]> = Mutex::new([0; 4]);

pub fn mode() -> Option<ApicMode> {
    match MODE.load(Ordering::Relaxed) {
        1 => Some(ApicMode::XApic),
        2 => Some(ApicMode::X2Apic),
        _ => None,
    }
}

fn read(reg: u32) -> u32 {
    match mode() {
        Some(ApicMode::X2Apic) => super::rdmsr(0x800 + (reg >> 4)) as u32,
        Some(ApicMode::XApic) => {
            let base = XAPIC_VIRT.load(Ordering::Relaxed);
            // SAFETY: the xAPIC page is mapped UC at `base`; `reg` is a register offset.
            unsafe { core::ptr::read_volatile((base + reg as u64) as *const u32) }
        }
        None => 0,
    }
}

fn write(reg: u32, value: u32) {
    match mode() {
        // SAFETY: x2APIC MSRs of the register named.
        Some(ApicMode::X2Apic) => unsafe { super::wrmsr(0x800 + (reg >> 4), value as u64) },
        Some(ApicMode::XApic) => {
            let base = XAPIC_VIRT.load(Ordering::Relaxed);
            // SAFETY: as in `read`.
            unsafe { core::ptr::write_volatile((base + reg as u64) as *mut u32, value) }
        }
        None => {}
    }
}

/// Masks and remaps the legacy 8259 PICs so they never deliver (vectors 0x20..0x2F if one
/// fires spuriously), as the APIC replaces them.
fn disable_8259() {
    use super::port::outb;
    // ICW1..ICW4 (Intel 8259A datasheet): init, vector offsets, cascade, 8086 mode.
    for (cmd, data, offset, cascade) in [(0x20u16, 0x21u16, 0x20u8, 4u8), (0xA0, 0xA1, 0x28, 2)] {
        outb(cmd, 0x11);
        outb(data, offset);
        outb(data, cascade);
        outb(data, 0x01);
    }
    outb(0x21, 0xFF);
    outb(0xA1, 0xFF);
}

/// Enables the boot CPU's local APIC, in x2APIC mode when the CPU has it and `allow_x2apic`.
/// `madt_base` is the MADT's local APIC address (used for xAPIC mode when given).
pub fn init(madt_base: Option<u64>, allow_x2apic: bool) -> Result<ApicMode, paging::MapError> {
    disable_8259();
    let x2 = allow_x2apic && super::cpuid(1, 0).ecx & (1 << 21) != 0;
    let base_msr = super::rdmsr(IA32_APIC_BASE);
    if x2 {
        // SAFETY: enabling x2APIC mode (xAPIC enable bit set first, per SDM 11.12.5).
        unsafe { super::wrmsr(IA32_APIC_BASE, base_msr | APIC_BASE_ENABLE | APIC_BASE_X2APIC) };
        MODE.store(2, Ordering::Relaxed);
    } else {
        let phys = madt_base.unwrap_or(base_msr & 0x000f_ffff_ffff_f000);
        let virt = paging::map_mmio(phys, 0x1000, CacheType::Uncached)?;
        XAPIC_VIRT.store(virt, Ordering::Relaxed);
        // SAFETY: sets the global enable bit, keeping the base.
        unsafe { super::wrmsr(IA32_APIC_BASE, base_msr | APIC_BASE_ENABLE) };
        MODE.store(1, Ordering::Relaxed);
    }
    write(REG_TPR, 0);
    write(REG_LVT_TIMER, LVT_MASKED);
    write(REG_LVT_LINT0, LVT_MASKED);
    write(REG_LVT_LINT1, LVT_MASKED);
    write(REG_LVT_ERROR, ERROR_VECTOR as u32);
    write(REG_ESR, 0);
    write(REG_SVR, (1 << 8) | SPURIOUS_VECTOR as u32);
    {
        let mut v = VECTORS.lock();
        for vec in [SPURIOUS_VECTOR, ERROR_VECTOR] {
            v[vec as usize / 64] |= 1 << (vec % 64);
        }
    }
    Ok(if x2 { ApicMode::X2Apic } else { ApicMode::XApic })
}

pub fn id() -> u32 {
    match mode() {
        Some(ApicMode::X2Apic) => read(REG_ID),
        _ => read(REG_ID) >> 24,
    }
}

pub fn version() -> u32 {
    read(REG_VERSION) & 0xff
}

pub fn eoi() {
    write(REG_EOI, 0);
}

/// Sends a fixed interrupt with `vector` to this CPU.
pub fn self_ipi(vector: u8) {
    match mode() {
        // SAFETY: the SELF IPI MSR takes a vector number.
        Some(ApicMode::X2Apic) => unsafe { super::wrmsr(X2APIC_SELF_IPI_MSR, vector as u64) },
        Some(ApicMode::XApic) => {
            write(REG_ICR_HIGH, 0);
            // Destination shorthand 01 = self (bits 19:18), fixed delivery, edge.
            write(REG_ICR_LOW, (1 << 18) | vector as u32);
        }
        None => {}
    }
}

/// Programs the timer: `initial` counts at bus clock / 16, periodic or one-shot.
pub fn timer_start(vector: u8, initial: u32, periodic: bool) {
    write(REG_TIMER_DIVIDE, 0b0011); // divide by 16
    write(REG_LVT_TIMER, vector as u32 | if periodic { LVT_TIMER_PERIODIC } else { 0 });
    write(REG_TIMER_INITIAL, initial);
}

pub fn timer_stop() {
    write(REG_LVT_TIMER, LVT_MASKED);
    write(REG_TIMER_INITIAL, 0);
}

pub fn timer_current() -> u32 {
    read(REG_TIMER_CURRENT)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorsExhausted;

/// Allocates `count` consecutive vectors aligned to `count` (a power of two, as multi-message
/// MSI requires), from 0x30..=0xEF.
pub fn alloc_vectors(count: u8) -> Result<u8, VectorsExhausted> {
    if count == 0 || !count.is_power_of_two() {
        return Err(VectorsExhausted);
    }
    let mut v = VECTORS.lock();
    let mut start = FIRST_DYNAMIC_VECTOR as u16;
    while start + count as u16 - 1 <= LAST_DYNAMIC_VECTOR as u16 {
        if start.is_multiple_of(count as u16) {
            let free = (start..start + count as u16).all(|x| v[x as usize / 64] & (1 << (x % 64)) == 0);
            if free {
                for x in start..start + count as u16 {
                    v[x as usize / 64] |= 1 << (x % 64);
                }
                return Ok(start as u8);
            }
        }
        start += 1;
    }
    Err(VectorsExhausted)
}

pub fn free_vectors(first: u8, count: u8) {
    let mut v = VECTORS.lock();
    for x in first as u16..first as u16 + count as u16 {
        v[x as usize / 64] &= !(1 << (x % 64));
    }
}

/// The MSI message for a fixed, edge-triggered interrupt with `vector` to APIC `dest`
/// (Intel SDM vol. 3A, section 11.11 "Message Signalled Interrupts": address 0xFEEx_xxxx with
/// the destination ID in bits 19:12, data = vector in bits 7:0, delivery mode fixed).
pub fn msi_message(vector: u8, dest: u32) -> (u64, u32) {
    (0xFEE0_0000 | ((dest as u64 & 0xff) << 12), vector as u32)
}
