//! `GspFwWprMeta` (`src/nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h`, 535.261.03): the
//! 256-byte description of the framebuffer regions GSP-RM runs in, which the CPU fills and the
//! boot chain (Booter on Turing..Ada, the FSP/FMC chain on Hopper) checks and locks into WPR2,
//! with its magic numbers and the heap-size parameters of `gsp_fw_heap.h`.
//!
//! Where the regions go is computed by [`crate::gsp::fb_layout`] (RM's
//! `kgspCalculateFbLayout_TU102/_GH100`), which fills this structure.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `GSP_FW_WPR_META_MAGIC`.
pub const GSP_FW_WPR_META_MAGIC: u64 = 0xdc3a_ae21_371a_60b3;
/// `GSP_FW_WPR_META_REVISION`.
pub const GSP_FW_WPR_META_REVISION: u64 = 1;
/// `GSP_FW_WPR_META_VERIFIED`: what Booter writes into `verified` once it has checked the image.
pub const GSP_FW_WPR_META_VERIFIED: u64 = 0xa0a0_a0a0_a0a0_a0a0;
/// `GSP_FW_WPR_HEAP_FREE_REGION_COUNT`.
pub const GSP_FW_WPR_HEAP_FREE_REGION_COUNT: u32 = 128;
/// `GSP_FW_HEAP_FREE_LIST_MAGIC`.
pub const GSP_FW_HEAP_FREE_LIST_MAGIC: u64 = 0x4845_4150_4652_4545;
/// `GSP_FW_FLAGS_CLOCK_BOOST` (`NVBIT(0)`), a bit of `flags`.
pub const GSP_FW_FLAGS_CLOCK_BOOST: u8 = 1 << 0;
/// `GSP_FW_FLAGS_RECOVERY_MARGIN_PRESENT` (`NVBIT(1)`), a bit of `flags`.
pub const GSP_FW_FLAGS_RECOVERY_MARGIN_PRESENT: u8 = 1 << 1;

/// `GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB` (`gsp_fw_heap.h`): heap per GiB of framebuffer.
pub const GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB: u64 = 96 << 10;
/// `GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE` (`gsp_fw_heap.h`): heap for 2048 client channels.
pub const GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE: u64 = (48 << 10) * 2048;
/// `GSP_FW_HEAP_PARAM_BASE_RM_SIZE_TU10X`: base heap, Turing through Ada.
pub const GSP_FW_HEAP_PARAM_BASE_RM_SIZE_TU10X: u64 = 8 << 20;
/// `GSP_FW_HEAP_PARAM_BASE_RM_SIZE_GH100`: base heap, Hopper.
pub const GSP_FW_HEAP_PARAM_BASE_RM_SIZE_GH100: u64 = 14 << 20;
/// `GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS2`: LIBOS 2 (TU10x, GA100) takes no heap.
pub const GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS2: u64 = 0;
/// `GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS3`: LIBOS 3 (GA102 and later).
pub const GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS3: u64 = 20 << 20;

/// The first union of `GspFwWprMeta`, as used at initial boot: where the signature is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct WprMetaSignature {
    /// `sysmemAddrOfSignature`: bus address of the firmware signature.
    pub sysmem_addr_of_signature: u64,
    /// `sizeOfSignature`.
    pub size_of_signature: u64,
}

/// The first union of `GspFwWprMeta`, as used at suspend/resume: where the heap free list is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct WprMetaHeapFreeList {
    /// `gspFwHeapFreeListWprOffset`: offset of `GspFwHeapFreeList` from `gspFwWprStart`.
    pub gsp_fw_heap_free_list_wpr_offset: u32,
    /// `unused0`.
    pub unused0: u32,
    /// `unused1`.
    pub unused1: u64,
}

/// The second union of `GspFwWprMeta`, as the CPU writes it: the CrashCat queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct WprMetaCrashCat {
    /// `partitionRpcPadding`.
    pub partition_rpc_padding: [u32; 4],
    /// `sysmemAddrOfCrashReportQueue`: bus address of the CrashCat queue, or 0.
    pub sysmem_addr_of_crash_report_queue: u64,
    /// `sizeOfCrashReportQueue`.
    pub size_of_crash_report_queue: u32,
    /// `lsUcodeVersionPadding`.
    pub ls_ucode_version_padding: [u32; 1],
}

/// The second union of `GspFwWprMeta`, as the partition bootstrapper patches it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct WprMetaPartitionRpc {
    /// `partitionRpcAddr`.
    pub partition_rpc_addr: u64,
    /// `partitionRpcRequestOffset`.
    pub partition_rpc_request_offset: u16,
    /// `partitionRpcReplyOffset`.
    pub partition_rpc_reply_offset: u16,
    /// `elfCodeOffset`.
    pub elf_code_offset: u32,
    /// `elfDataOffset`.
    pub elf_data_offset: u32,
    /// `elfCodeSize`.
    pub elf_code_size: u32,
    /// `elfDataSize`.
    pub elf_data_size: u32,
    /// `lsUcodeVersion`: checked for revocation at resume.
    pub ls_ucode_version: u32,
}

/// `GspFwWprMeta`: 256 bytes the CPU writes to system memory and Booter copies to the bottom of
/// WPR2. The two anonymous unions of the C struct are [`Self::signature`] (with the
/// [`WprMetaHeapFreeList`] view) and [`Self::crash_cat`] (with the [`WprMetaPartitionRpc`] view).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspFwWprMeta {
    /// `magic`: [`GSP_FW_WPR_META_MAGIC`].
    pub magic: u64,
    /// `revision`: [`GSP_FW_WPR_META_REVISION`].
    pub revision: u64,
    /// `sysmemAddrOfRadix3Elf`: bus address of the [`super::radix3`] root of the GSP-RM ELF.
    pub sysmem_addr_of_radix3_elf: u64,
    /// `sizeOfRadix3Elf`: size of the ELF image.
    pub size_of_radix3_elf: u64,
    /// `sysmemAddrOfBootloader`: bus address of the boot binary (GSP bootloader / FMC).
    pub sysmem_addr_of_bootloader: u64,
    /// `sizeOfBootloader`.
    pub size_of_bootloader: u64,
    /// `bootloaderCodeOffset` (`RM_RISCV_UCODE_DESC::monitorCodeOffset`).
    pub bootloader_code_offset: u64,
    /// `bootloaderDataOffset` (`monitorDataOffset`).
    pub bootloader_data_offset: u64,
    /// `bootloaderManifestOffset` (`manifestOffset`).
    pub bootloader_manifest_offset: u64,
    /// The first union: signature at boot (`sysmemAddrOfSignature`, `sizeOfSignature`).
    pub signature: WprMetaSignature,
    /// `gspFwRsvdStart`: start of everything reserved for GSP at the top of FB.
    pub gsp_fw_rsvd_start: u64,
    /// `nonWprHeapOffset`.
    pub non_wpr_heap_offset: u64,
    /// `nonWprHeapSize`.
    pub non_wpr_heap_size: u64,
    /// `gspFwWprStart`: start of WPR2, where this structure is placed.
    pub gsp_fw_wpr_start: u64,
    /// `gspFwHeapOffset`.
    pub gsp_fw_heap_offset: u64,
    /// `gspFwHeapSize`.
    pub gsp_fw_heap_size: u64,
    /// `gspFwOffset`: where the ELF is copied (its size is `sizeOfRadix3Elf`).
    pub gsp_fw_offset: u64,
    /// `bootBinOffset`: where the boot binary is copied (its size is `sizeOfBootloader`).
    pub boot_bin_offset: u64,
    /// `frtsOffset`.
    pub frts_offset: u64,
    /// `frtsSize`.
    pub frts_size: u64,
    /// `gspFwWprEnd`: end of WPR2.
    pub gsp_fw_wpr_end: u64,
    /// `fbSize`: usable framebuffer size.
    pub fb_size: u64,
    /// `vgaWorkspaceOffset`.
    pub vga_workspace_offset: u64,
    /// `vgaWorkspaceSize`.
    pub vga_workspace_size: u64,
    /// `bootCount`.
    pub boot_count: u64,
    /// The second union: CrashCat queue (`sysmemAddrOfCrashReportQueue`, ...).
    pub crash_cat: WprMetaCrashCat,
    /// `gspFwHeapVfPartitionCount`: 0 without vGPU.
    pub gsp_fw_heap_vf_partition_count: u8,
    /// `flags`: `GSP_FW_FLAGS_*`.
    pub flags: u8,
    /// `padding`: zero.
    pub padding: [u8; 6],
    /// `verified`: 0 from the CPU; [`GSP_FW_WPR_META_VERIFIED`] once Booter accepted the image.
    pub verified: u64,
}

const _: () = assert!(core::mem::size_of::<GspFwWprMeta>() == 256);
const _: () = assert!(core::mem::size_of::<WprMetaSignature>() == core::mem::size_of::<WprMetaHeapFreeList>());
const _: () = assert!(core::mem::size_of::<WprMetaCrashCat>() == core::mem::size_of::<WprMetaPartitionRpc>());

impl GspFwWprMeta {
    /// The first union seen as the suspend/resume free-list location.
    pub fn heap_free_list(&self) -> WprMetaHeapFreeList {
        zerocopy::transmute!(self.signature)
    }

    /// Sets the first union through its suspend/resume view.
    pub fn set_heap_free_list(&mut self, view: WprMetaHeapFreeList) {
        self.signature = zerocopy::transmute!(view);
    }

    /// The second union seen as the partition bootstrapper's fields.
    pub fn partition_rpc(&self) -> WprMetaPartitionRpc {
        zerocopy::transmute!(self.crash_cat)
    }

    /// Sets the second union through the partition bootstrapper's view.
    pub fn set_partition_rpc(&mut self, view: WprMetaPartitionRpc) {
        self.crash_cat = zerocopy::transmute!(view);
    }

    /// Whether `magic` and `revision` are the ones this release uses.
    pub const fn is_valid_header(&self) -> bool {
        self.magic == GSP_FW_WPR_META_MAGIC && self.revision == GSP_FW_WPR_META_REVISION
    }

    /// Whether Booter marked the image verified.
    pub const fn is_verified(&self) -> bool {
        self.verified == GSP_FW_WPR_META_VERIFIED
    }
}
