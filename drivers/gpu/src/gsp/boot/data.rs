//! What the CPU lays out in system memory for the GSP boot chain and GSP-RM, in DMA memory:
//!
//! | region | what | RM |
//! |---|---|---|
//! | GSP-RM image | radix3 tables, then `.fwimage` | `kgspCreateRadix3` |
//! | signature | this chip's `.fwsignature_*`, 256-byte aligned | `_kgspCreateSignatureMemdesc` |
//! | boot binary | the RISC-V bootloader image (`RM_RISCV_UCODE_DESC` file) | `kgspPrepareBootBinaryImage` |
//! | log buffers | "LOGINIT", "LOGINTR", "LOGRM": 64 KiB each, own page table from word 1 | `_kgspInitLibosLoggingStructures` |
//! | WPR meta | `GspFwWprMeta` (one page), what the booter reads | `kgspAllocBootArgs`, `kgspCalculateFbLayout_TU102` |
//! | LIBOS args | `LibosMemoryRegionInitArgument[]` (one page): the logs, then "RMARGS" | `kgspSetupLibosInitArgs` |
//! | RM args | `GSP_ARGUMENTS_CACHED` (one page) | `kgspPopulateGspRmInitArgs` |
//! | queues | page table, command queue, status queue | `GspMsgQueuesInit` (`gsp::cmdq` takes it over) |
//!
//! All of it is `kgspInitRm` and `kgspBootstrapRiscvOSEarly_*` up to the point where a ucode is
//! started, for a first boot (no resume, no vGPU, no confidential computing, no CrashCat queue,
//! no profiler buffer). Every region is physically contiguous, as [`DmaAllocator`] promises, so a
//! region's page addresses are its bus address plus multiples of 4 KiB.
//!
//! The regions must outlive GSP-RM: drop a [`BootData`] only after GSP-RM is unloaded (or was
//! never started).

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use zerocopy::IntoBytes;

use super::dma::{page_align, DmaRegion};
use crate::firmware::{BootloaderFirmware, GspFirmware, RiscvUcodeDesc};
use crate::gsp::fb_layout::{FirmwareImages, LayoutError, MmuLock, SysmemRegion, WprChipParams, WprLayoutInputs};
use crate::gsp::fw::init_args::{GspArgumentsCached, MessageQueueInitArguments};
use crate::gsp::fw::libos::{
    LibosMemoryRegionInitArgument, LIBOS_INIT_ARGUMENTS_SIZE, LIBOS_LOG_BUFFER_SIZE, LOGINIT_ID, LOGINTR_ID, LOGRM_ID,
    RMARGS_ID,
};
use crate::gsp::fw::msgq::{MessageQueueLayout, RM_PAGE_SIZE};
use crate::gsp::fw::radix3::{build_radix3, Radix3Error, Radix3Layout, RADIX3_PAGE_SIZE};
use crate::gsp::fw::wpr::GspFwWprMeta;
use crate::platform::{DmaAllocator, DmaBuffer, DmaError, DmaRangeError};

/// Bytes of one boot-argument page (`kgspAllocBootArgs` allocates each structure a 4 KiB page).
pub const BOOT_ARGS_PAGE: usize = 0x1000;
/// Alignment of the signature buffer: "the alignment needed for Booter DMA"
/// (`_kgspCreateSignatureMemdesc`).
pub const SIGNATURE_ALIGNMENT: usize = 256;

/// One GSP-RM log buffer: word 0 is the put pointer GSP-RM advances, words 1.. the bus address
/// of each of the buffer's pages (RM passes the page table inside the buffer).
pub struct LogBuffer<'a, A: DmaAllocator + ?Sized> {
    /// The LIBOS region name ("LOGINIT", ...).
    pub name: &'static str,
    /// Its tag (`id8`).
    pub id8: u64,
    pub region: DmaRegion<'a, A>,
}

impl<A: DmaAllocator + ?Sized> LogBuffer<'_, A> {
    /// The put pointer GSP-RM keeps in word 0.
    pub fn put_pointer(&self) -> u64 {
        self.region.read_u64(0).unwrap_or(0)
    }
}

fn read_u64(bytes: &[u8], index: usize) -> Option<u64> {
    let at = index.checked_mul(8)?;
    let word = bytes.get(at..at.checked_add(8)?)?;
    let mut raw = [0u8; 8];
    raw.copy_from_slice(word);
    Some(u64::from_le_bytes(raw))
}

/// What the boot reads from the hardware and the chip's HAL to lay out the framebuffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FbInputs {
    /// The chip's layout parameters.
    pub params: WprChipParams,
    /// Usable framebuffer size in bytes.
    pub usable_fb_size: u64,
    /// The VGA workspace base the display hardware reports (`None`: display off or unknown).
    pub vga_workspace_base: Option<u64>,
    /// The VBIOS MMU lock, when one is set.
    pub mmu_lock: Option<MmuLock>,
}

/// Why the boot data could not be prepared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootDataError {
    /// DMA memory for `what` could not be allocated.
    Dma { what: &'static str, error: DmaError },
    /// The GSP-RM image does not fit a radix3 table.
    Radix3(Radix3Error),
    /// The framebuffer layout cannot be computed.
    Layout(LayoutError),
    /// A size overflowed.
    TooLarge { what: &'static str },
    /// Writing `what` into its DMA memory did not fit.
    Write { what: &'static str, error: DmaRangeError },
}

impl fmt::Display for BootDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dma { what, error } => write!(f, "GSP boot data: {what}: {error}"),
            Self::Radix3(e) => write!(f, "GSP boot data: GSP-RM image: {e}"),
            Self::Layout(e) => write!(f, "GSP boot data: {e}"),
            Self::TooLarge { what } => write!(f, "GSP boot data: {what} is too large"),
            Self::Write { what, error } => write!(f, "GSP boot data: {what}: {error}"),
        }
    }
}

fn dma_error(what: &'static str) -> impl Fn(DmaError) -> BootDataError {
    move |error| BootDataError::Dma { what, error }
}

fn write_error(what: &'static str) -> impl Fn(DmaRangeError) -> BootDataError {
    move |error| BootDataError::Write { what, error }
}

/// Everything in system memory the GSP boot hands out by bus address. Owns its DMA memory.
pub struct BootData<'a, A: DmaAllocator + ?Sized> {
    /// The GSP-RM `.fwimage` behind its radix3 tables (root at the region's first page).
    pub gsp_rm: DmaRegion<'a, A>,
    /// The radix3 page counts of [`Self::gsp_rm`].
    pub radix3: Radix3Layout,
    /// The firmware signature for this chip.
    pub signature: DmaRegion<'a, A>,
    /// Bytes of signature in [`Self::signature`] (before padding).
    pub signature_len: usize,
    /// The RISC-V boot binary (GSP bootloader).
    pub boot_binary: DmaRegion<'a, A>,
    /// Its descriptor.
    pub boot_desc: RiscvUcodeDesc,
    /// Bytes of image in [`Self::boot_binary`] (`gspRmBootUcodeSize`).
    pub boot_binary_len: usize,
    /// "LOGINIT", "LOGINTR", "LOGRM", in the order LIBOS takes them.
    pub logs: [LogBuffer<'a, A>; 3],
    /// The page holding [`Self::wpr_meta`].
    pub wpr_meta_page: DmaRegion<'a, A>,
    /// The WPR metadata as written.
    pub wpr_meta: GspFwWprMeta,
    /// The LIBOS init arguments page; its bus address goes to the GSP mailboxes.
    pub libos_args: DmaRegion<'a, A>,
    /// The `GSP_ARGUMENTS_CACHED` page ("RMARGS").
    pub rm_args_page: DmaRegion<'a, A>,
    /// The RM arguments as written.
    pub rm_args: GspArgumentsCached,
    /// The queue layout.
    pub queue_layout: MessageQueueLayout,
    /// Bus address of the queue memory (`sharedMemPhysAddr`).
    pub queue_bus_address: u64,
    /// The queue memory until [`Self::take_queue_memory`] hands it to the queue driver.
    queue_memory: Option<DmaRegion<'a, A>>,
    allocator: &'a A,
}

impl<'a, A: DmaAllocator + ?Sized> BootData<'a, A> {
    /// Prepares every region, in RM's order: boot binary, GSP-RM image and signature, log
    /// buffers, boot-argument pages, queue memory, then the framebuffer layout (WPR meta), the
    /// RM arguments and the LIBOS arguments.
    pub fn prepare(
        dma: &'a A,
        gsp_rm: &GspFirmware<'_>,
        boot: &BootloaderFirmware<'_>,
        fb: &FbInputs,
        queue_layout: MessageQueueLayout,
        gpu_instance: u32,
    ) -> Result<Self, BootDataError> {
        // Boot binary: the image, padded to a page (`kgspPrepareBootBinaryImage`).
        let boot_image = boot.image();
        let boot_len = page_align(boot_image.len()).ok_or(BootDataError::TooLarge { what: "boot binary" })?;
        let boot_binary = DmaRegion::with_bytes(dma, boot_image, boot_len).map_err(dma_error("boot binary"))?;

        // GSP-RM: signature, then the image behind its radix3 tables.
        let signature_bytes = gsp_rm.signature();
        let signature_len = signature_bytes
            .len()
            .checked_next_multiple_of(SIGNATURE_ALIGNMENT)
            .ok_or(BootDataError::TooLarge { what: "signature" })?;
        let signature = DmaRegion::with_bytes(dma, signature_bytes, signature_len).map_err(dma_error("signature"))?;
        let (gsp_rm_region, radix3) = load_radix3(dma, gsp_rm.image())?;

        // Log buffers.
        let logs = [
            log_buffer(dma, "LOGINIT", LOGINIT_ID)?,
            log_buffer(dma, "LOGINTR", LOGINTR_ID)?,
            log_buffer(dma, "LOGRM", LOGRM_ID)?,
        ];

        // Boot-argument pages.
        let mut wpr_meta_page = DmaRegion::zeroed(dma, BOOT_ARGS_PAGE).map_err(dma_error("WPR metadata"))?;
        let mut libos_args = DmaRegion::zeroed(dma, LIBOS_INIT_ARGUMENTS_SIZE).map_err(dma_error("LIBOS arguments"))?;
        let mut rm_args_page = DmaRegion::zeroed(dma, BOOT_ARGS_PAGE).map_err(dma_error("GSP-RM arguments"))?;

        // Queue memory (the queue driver writes its page table and headers).
        let queue_len =
            usize::try_from(queue_layout.shared_size()).map_err(|_| BootDataError::TooLarge { what: "queues" })?;
        let queue_memory = DmaRegion::zeroed(dma, queue_len).map_err(dma_error("message queues"))?;
        let queue_bus_address = queue_memory.bus_address();

        // The framebuffer layout (`kgspCalculateFbLayout_HAL`).
        let images = FirmwareImages {
            radix3_elf_addr: gsp_rm_region.bus_address(),
            elf_size: gsp_rm.image_size(),
            bootloader: SysmemRegion { addr: boot_binary.bus_address(), size: boot_image.len() as u64 },
            bootloader_code_offset: boot.desc.monitor_code_offset.into(),
            bootloader_data_offset: boot.desc.monitor_data_offset.into(),
            bootloader_manifest_offset: boot.desc.manifest_offset.into(),
            // `sizeOfSignature` is the memdesc's size: the padded one.
            signature: Some(SysmemRegion { addr: signature.bus_address(), size: signature_len as u64 }),
            crash_report_queue: None,
        };
        let inputs = WprLayoutInputs {
            usable_fb_size: fb.usable_fb_size,
            vga_workspace_base: fb.vga_workspace_base,
            mmu_lock: fb.mmu_lock,
            images,
        };
        let wpr_meta = GspFwWprMeta::layout(&fb.params, &inputs).map_err(BootDataError::Layout)?;
        wpr_meta_page.write_struct(0, &wpr_meta).map_err(write_error("WPR metadata"))?;

        // RM arguments (`kgspPopulateGspRmInitArgs`, cold boot).
        let rm_args = GspArgumentsCached::cold_boot(
            MessageQueueInitArguments::new(queue_bus_address, &queue_layout),
            gpu_instance,
        );
        rm_args_page.write_struct(0, &rm_args).map_err(write_error("GSP-RM arguments"))?;

        // LIBOS arguments: the logs ("LOGINIT" first), then "RMARGS" (`kgspSetupLibosInitArgs`).
        let mut entries: Vec<LibosMemoryRegionInitArgument> = logs
            .iter()
            .map(|log| {
                LibosMemoryRegionInitArgument::contiguous_sysmem(
                    log.id8,
                    log.region.bus_address(),
                    log.region.len() as u64,
                )
            })
            .collect();
        entries.push(LibosMemoryRegionInitArgument::contiguous_sysmem(
            RMARGS_ID,
            rm_args_page.bus_address(),
            rm_args_page.len() as u64,
        ));
        libos_args.fill(0, libos_args.len(), 0).map_err(write_error("LIBOS arguments"))?;
        libos_args.write(0, entries.as_bytes()).map_err(write_error("LIBOS arguments"))?;

        Ok(Self {
            gsp_rm: gsp_rm_region,
            radix3,
            signature,
            signature_len: signature_bytes.len(),
            boot_binary,
            boot_desc: boot.desc,
            boot_binary_len: boot_image.len(),
            logs,
            wpr_meta_page,
            wpr_meta,
            libos_args,
            rm_args_page,
            rm_args,
            queue_layout,
            queue_bus_address,
            queue_memory: Some(queue_memory),
            allocator: dma,
        })
    }

    /// Bus address of the WPR metadata: what the booter gets in SEC2's mailboxes.
    pub fn wpr_meta_address(&self) -> u64 {
        self.wpr_meta_page.bus_address()
    }

    /// Bus address of the LIBOS arguments: what the GSP's mailboxes carry
    /// (`kgspProgramLibosBootArgsAddr_TU102`).
    pub fn libos_args_address(&self) -> u64 {
        self.libos_args.bus_address()
    }

    /// The WPR metadata as it is in memory now (the booter writes `verified` back).
    pub fn wpr_meta_in_memory(&self) -> Option<GspFwWprMeta> {
        self.wpr_meta_page.read_struct(0).ok()
    }

    /// Hands the queue memory to the queue driver (once); [`Self::return_queue_memory`] takes it
    /// back for freeing.
    pub fn take_queue_memory(&mut self) -> Option<DmaBuffer> {
        self.queue_memory.take().and_then(DmaRegion::into_buffer)
    }

    /// Frees queue memory given back by the queue driver.
    pub fn return_queue_memory(&mut self, buffer: DmaBuffer) {
        self.allocator.free(buffer);
    }

    /// Whether the queue memory is still here (not handed out).
    pub fn has_queue_memory(&self) -> bool {
        self.queue_memory.is_some()
    }
}

/// A log buffer of RM's release size with its page table from word 1.
fn log_buffer<'a, A: DmaAllocator + ?Sized>(
    dma: &'a A,
    name: &'static str,
    id8: u64,
) -> Result<LogBuffer<'a, A>, BootDataError> {
    let size = LIBOS_LOG_BUFFER_SIZE as usize;
    let mut region = DmaRegion::zeroed(dma, size).map_err(dma_error("log buffer"))?;
    let bus = region.bus_address();
    let pages = size as u64 / RM_PAGE_SIZE;
    let table: Vec<u8> = (0..pages).flat_map(|page| (bus + page * RM_PAGE_SIZE).to_le_bytes()).collect();
    region.write(8, &table).map_err(write_error("log buffer page table"))?;
    Ok(LogBuffer { name, id8, region })
}

/// The image behind its radix3 tables in one contiguous block (`kgspCreateRadix3`); or, where
/// the platform shares the image's own pages read-only ([`DmaAllocator::share_read_only`]: a
/// page-aligned boot module), the tables alone, their last level pointing at those pages: no
/// copy of the 38 MB image.
fn load_radix3<'a, A: DmaAllocator + ?Sized>(
    dma: &'a A,
    image: &[u8],
) -> Result<(DmaRegion<'a, A>, Radix3Layout), BootDataError> {
    let layout = Radix3Layout::new(image.len() as u64).map_err(BootDataError::Radix3)?;
    if let Some(shared) = dma.share_read_only(image).filter(|bus| bus.is_multiple_of(RADIX3_PAGE_SIZE)) {
        let table_bytes = layout.table_bytes();
        let table_pages = layout.table_pages();
        let len = usize::try_from(table_bytes).map_err(|_| BootDataError::TooLarge { what: "radix3 tables" })?;
        let mut region = DmaRegion::zeroed(dma, len).map_err(dma_error("radix3 tables"))?;
        let bus = region.bus_address();
        let pages: Vec<u64> = (0..layout.total_pages())
            .map(|i| {
                if i < table_pages {
                    bus + i * RADIX3_PAGE_SIZE
                } else {
                    shared + (i - table_pages) * RADIX3_PAGE_SIZE
                }
            })
            .collect();
        let mut tables = vec![0u8; len];
        build_radix3(&layout, &pages, &mut tables).map_err(BootDataError::Radix3)?;
        region.write(0, &tables).map_err(write_error("radix3 tables"))?;
        log::info!(
            "GSP-RM image used in place: {} pages at bus {shared:#x}, {table_pages} radix3 table page(s)",
            layout.total_pages() - table_pages
        );
        return Ok((region, layout));
    }
    let total = usize::try_from(layout.total_pages() * RADIX3_PAGE_SIZE)
        .map_err(|_| BootDataError::TooLarge { what: "GSP-RM image" })?;
    let mut region = DmaRegion::zeroed(dma, total).map_err(dma_error("GSP-RM image"))?;
    let bus = region.bus_address();
    let pages: Vec<u64> = (0..layout.total_pages()).map(|i| bus + i * RADIX3_PAGE_SIZE).collect();
    let table_bytes = layout.table_bytes() as usize;
    // The tables are built here and copied in; the image follows them in one bulk copy.
    let mut tables = vec![0u8; table_bytes];
    build_radix3(&layout, &pages, &mut tables).map_err(BootDataError::Radix3)?;
    region.write(0, &tables).map_err(write_error("radix3 tables"))?;
    region.write(table_bytes, image).map_err(write_error("GSP-RM image"))?;
    Ok((region, layout))
}

/// Follows the radix3 tables at the start of `block` (bus address `bus`) to the image, reading
/// each level's entries as a device would: returns the bytes the tables point at, `size` of
/// them. `None` when an entry points outside the block. For tests and diagnostics.
pub fn walk_radix3(block: &[u8], bus: u64, size: u64) -> Option<Vec<u8>> {
    let page = RADIX3_PAGE_SIZE as usize;
    let deref = |addr: u64| -> Option<&[u8]> {
        let offset = usize::try_from(addr.checked_sub(bus)?).ok()?;
        block.get(offset..offset.checked_add(page)?)
    };
    let entries_per_page = page / 8;
    let data_pages = size.div_ceil(RADIX3_PAGE_SIZE) as usize;
    let mut out = Vec::with_capacity(size as usize);
    let root = deref(bus)?;
    for index in 0..data_pages {
        let l2_index = index / entries_per_page;
        let l1_index = l2_index / entries_per_page;
        let l1 = deref(read_u64(root, l1_index)?)?;
        let l2 = deref(read_u64(l1, l2_index % entries_per_page)?)?;
        let data = deref(read_u64(l2, index % entries_per_page)?)?;
        let take = (size as usize - out.len()).min(page);
        out.extend_from_slice(data.get(..take)?);
    }
    Some(out)
}
