//! GDT and TSS. Every interrupt vector runs on an IST stack (`idt.rs` assigns them): the
//! precompiled `core` uses the red zone, which an interrupt on the current stack would clobber.

use spin::Once;
use x86_64::instructions::segmentation::{Segment, CS, DS, ES, SS};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;
use x86_64::VirtAddr;

/// IST slots (1-based in the IDT gate, 0-based in the TSS array).
pub const IST_IRQ: u16 = 1;
pub const IST_DOUBLE_FAULT: u16 = 2;
pub const IST_NMI: u16 = 3;
pub const IST_MACHINE_CHECK: u16 = 4;
pub const IST_PAGE_FAULT: u16 = 5;
pub const IST_EXCEPTION: u16 = 6;
pub const IST_DEBUG: u16 = 7;

const IST_STACK_SIZE: usize = 64 * 1024;

#[repr(C, align(16))]
struct Stack([u8; IST_STACK_SIZE]);

static mut IST_STACKS: [Stack; 7] = [const { Stack([0; IST_STACK_SIZE]) }; 7];

static TSS: Once<TaskStateSegment> = Once::new();
static GDT: Once<(GlobalDescriptorTable, SegmentSelector, SegmentSelector, SegmentSelector)> = Once::new();

pub fn ist_stack_bounds(ist: u16) -> (u64, u64) {
    // SAFETY: only the address is taken; the stacks are used by the CPU alone.
    let base = unsafe { core::ptr::addr_of!(IST_STACKS[(ist - 1) as usize]) } as u64;
    (base, base + IST_STACK_SIZE as u64)
}

/// The most bytes IST stack `ist` has held since boot, as far as it can be told: the stacks
/// start zeroed (.bss) and grow down, so this counts from the top to the lowest byte that is
/// no longer zero (a zero written there and never overwritten reads as unused).
pub fn ist_stack_high_water(ist: u16) -> usize {
    let (base, top) = ist_stack_bounds(ist);
    let len = (top - base) as usize;
    // SAFETY: reads of a static the CPU writes only while this IST's vector is handled; a
    // handler running now (the caller may be one) writes above what it reads as used, and a
    // torn value only shifts the estimate.
    let bytes = unsafe { core::slice::from_raw_parts(base as *const u8, len) };
    len - bytes.iter().position(|&b| b != 0).unwrap_or(len)
}

pub fn init() {
    let tss = TSS.call_once(|| {
        let mut tss = TaskStateSegment::new();
        for ist in 1..=7u16 {
            let (_, top) = ist_stack_bounds(ist);
            tss.interrupt_stack_table[(ist - 1) as usize] = VirtAddr::new(top & !0xf);
        }
        tss
    });
    let gdt = GDT.call_once(|| {
        let mut gdt = GlobalDescriptorTable::new();
        let code = gdt.append(Descriptor::kernel_code_segment());
        let data = gdt.append(Descriptor::kernel_data_segment());
        let tss_sel = gdt.append(Descriptor::tss_segment(tss));
        (gdt, code, data, tss_sel)
    });
    gdt.0.load();
    // SAFETY: the selectors index the GDT just loaded, with the descriptors named.
    unsafe {
        CS::set_reg(gdt.1);
        DS::set_reg(gdt.2);
        ES::set_reg(gdt.2);
        SS::set_reg(gdt.2);
        load_tss(gdt.3);
    }
}
