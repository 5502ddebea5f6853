//! The one-time handoff from the trampoline: parse the loader's information (identity-mapped
//! at this point) into the static BootInfo and BootExtras.

use boot::{BootExtras, ImageLayout, LoaderData, PhysMemory, Protocol};
use bootloader_api::BootInfo;
use core::sync::atomic::{AtomicBool, Ordering};

unsafe extern "C" {
    static __kernel_start: u8;
    static __kernel_end: u8;
    static boot_stack_bottom: u8;
    static boot_stack_top: u8;
}

/// Physical memory through the trampoline's identity map of the first 4 GiB.
struct IdentityLow4G;

impl PhysMemory<'static> for IdentityLow4G {
    fn slice(&self, phys: u64, len: usize) -> Option<&'static [u8]> {
        let end = phys.checked_add(len as u64)?;
        if phys == 0 || end > (4 << 30) {
            return None;
        }
        // SAFETY: the range is inside the identity map; loader structures and modules stay
        // mapped at the same addresses for the kernel's lifetime (paging::init keeps RAM below
        // 4 GiB identity-mapped) and are reserved in the memory map, so nothing overwrites them.
        Some(unsafe { core::slice::from_raw_parts(phys as *const u8, len) })
    }
}

static mut REGIONS: [bootloader_api::info::MemoryRegion; boot::memory::MAX_REGIONS] =
    [bootloader_api::info::MemoryRegion { start: 0, end: 0, kind: bootloader_api::info::MemoryRegionKind::Bootloader };
        boot::memory::MAX_REGIONS];
static mut BOOT_INFO: Option<BootInfo> = None;
static mut EXTRAS: Option<BootExtras> = None;
static DONE: AtomicBool = AtomicBool::new(false);

pub fn layout() -> ImageLayout {
    // Only the addresses of the linker-defined symbols are taken (no read: no unsafe).
    ImageLayout {
        kernel_start: core::ptr::addr_of!(__kernel_start) as u64,
        kernel_end: core::ptr::addr_of!(__kernel_end) as u64,
        stack_bottom: core::ptr::addr_of!(boot_stack_bottom) as u64,
        stack_top: core::ptr::addr_of!(boot_stack_top) as u64,
    }
}

pub fn handoff(
    protocol: u32,
    magic: u32,
    info: u32,
) -> Result<(&'static mut BootInfo, &'static BootExtras), boot::BootError> {
    if DONE.swap(true, Ordering::SeqCst) {
        return Err(boot::BootError::AlreadyHandedOff);
    }
    let layout = layout();
    // SAFETY: DONE guarantees this runs once, on the boot CPU, before anything else reads
    // these statics; afterwards they are only reached through the references returned here.
    unsafe {
        let extras = &mut *core::ptr::addr_of_mut!(EXTRAS);
        let data = extras.insert(BootExtras { protocol: Protocol::Pvh, data: LoaderData::new() });
        data.protocol = {
            let mut parsed = LoaderData::new();
            let p = boot::parse_loader(&IdentityLow4G, protocol, magic, info as u64, layout, &mut parsed)?;
            data.data = parsed;
            p
        };
        let regions = &mut *core::ptr::addr_of_mut!(REGIONS);
        let list = data.data.regions.as_slice();
        regions[..list.len()].copy_from_slice(list);
        let region_slice: &'static mut [bootloader_api::info::MemoryRegion] = &mut regions[..list.len()];
        let info_slot = &mut *core::ptr::addr_of_mut!(BOOT_INFO);
        let info = info_slot.insert(BootInfo::new(region_slice.into()));
        boot::fill_boot_info(info, &data.data, layout);
        Ok((info, &*data))
    }
}
