//! The framebuffer layout RM computes for GSP-RM, and the [`GspFwWprMeta`]
//! ([`crate::gsp::fw::wpr`]) that describes it to the boot chain (Booter on Turing..Ada, the
//! FSP/FMC chain on Hopper), with the per-chip parameters RM's HAL feeds it ([`WprChipParams`]).
//!
//! The layout below (the top of the framebuffer) is what `kgspCalculateFbLayout_TU102`
//! (`arch/turing/kernel_gsp_tu102.c`) computes, top down, and what
//! [`GspFwWprMeta::layout_tu102`] reproduces step by step:
//!
//! ```text
//!   fbSize ------------------------- end of usable FB
//!            VGA workspace
//!   vgaWorkspaceOffset ------------- (vbiosReservedOffset: this, or a lower VBIOS MMU lock)
//!            alignment gap
//!   gspFwWprEnd -------------------- 128 KiB aligned
//!            FRTS (from FWSEC)
//!   frtsOffset
//!            boot binary (Booter-loaded GSP bootloader)
//!   bootBinOffset ------------------ 4 KiB aligned
//!            GSP-RM ELF
//!   gspFwOffset -------------------- 64 KiB aligned
//!            GSP-RM heap (WPR)
//!   gspFwHeapOffset ---------------- 1 MiB aligned
//!            GspFwWprMeta (placed by Booter) and padding
//!   gspFwWprStart ------------------ 1 MiB aligned
//!            non-WPR heap
//!   nonWprHeapOffset = gspFwRsvdStart  1 MiB aligned
//! ```
//!
//! On Hopper, `kgspCalculateFbLayout_GH100` only states sizes; the FMC places the regions and
//! patches the offsets ([`GspFwWprMeta::layout_gh100`]).

use core::fmt;

use super::fw::wpr::{
    GspFwWprMeta, WprMetaSignature, GSP_FW_FLAGS_RECOVERY_MARGIN_PRESENT, GSP_FW_HEAP_PARAM_BASE_RM_SIZE_GH100,
    GSP_FW_HEAP_PARAM_BASE_RM_SIZE_TU10X, GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE, GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS2,
    GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS3, GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB, GSP_FW_WPR_META_MAGIC,
    GSP_FW_WPR_META_REVISION,
};
use super::{align_down, align_up};
use crate::chip::Chipset;

/// Size of `NV_PRAMIN` (`dev_ram.h`, 0x7fffff:0x700000): the VGA workspace when display is off.
pub const NV_PRAMIN_SIZE: u64 = 0x10_0000;
/// `VBIOS_WORKSPACE_SIZE` in `kgspCalculateFbLayout_TU102`: the VGA workspace when the
/// hardware's base is below the last `NV_PRAMIN_SIZE` of the framebuffer.
pub const VBIOS_WORKSPACE_SIZE: u64 = 0x2_0000;
/// `vgaWorkspaceSize` `kgspCalculateFbLayout_GH100` asks the FSP to reserve.
pub const GH100_VGA_WORKSPACE_SIZE: u64 = 128 * 1024;

/// Which layout function RM's HAL picks (`Hal function -- kgspCalculateFbLayout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FbLayoutFlavor {
    /// `kgspCalculateFbLayout_TU102`: the CPU places every region (Turing, Ampere, Ada).
    Tu102,
    /// `kgspCalculateFbLayout_GH100`: the CPU states sizes, the FMC places regions (Hopper).
    Gh100,
}

/// The per-chip numbers RM's HAL feeds the layout (`g_kernel_gsp_nvoc.c`, the `KernelGsp` HAL
/// fields and functions named on each member), for a bare-metal kernel RM (not vGPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WprChipParams {
    /// `kgspCalculateFbLayout` variant.
    pub layout: FbLayoutFlavor,
    /// `kgspGetNonWprHeapSize`: 1 MiB; 2 MiB on GH100.
    pub non_wpr_heap_size: u64,
    /// `kgspGetFrtsSize`: `NV_PGC6_AON_FRTS_INPUT_WPR_SIZE_SECURE_SCRATCH_GROUP_03_0_WPR_SIZE_1MB_IN_4K`
    /// 4 KiB pages (1 MiB); 0 on GA100, which has no FRTS.
    pub frts_size: u64,
    /// `fwHeapParamBaseSize`.
    pub fw_heap_param_base_size: u64,
    /// `fwHeapParamOsCarveoutSize` (the `PF_KERNEL_ONLY` RM variant).
    pub fw_heap_param_os_carveout_size: u64,
    /// `kgspGetMinWprHeapSizeMB` (without vGPU offload).
    pub min_wpr_heap_size_mb: u64,
    /// `kgspGetMaxWprHeapSizeMB` (without vGPU offload); RM applies it only to a registry
    /// override of the heap size, which this driver does not have.
    pub max_wpr_heap_size_mb: u64,
    /// `kgspGetPrescrubbedTopFbSize`: how much of the top of FB is scrubbed before GSP-RM runs;
    /// `None` where RM says "all of it" (`NV_U64_MAX`: GA100, GH100).
    pub prescrubbed_top_fb_size: Option<u64>,
    /// `bScrubberUcodeSupported` (Ada): a scrubber ucode clears the rest of FB first, so the heap
    /// is not limited to the pre-scrubbed area.
    pub scrubber_ucode_supported: bool,
}

/// One MiB.
const MIB: u64 = 1 << 20;
/// The FRTS region: `FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K` 4 KiB pages.
const FRTS: u64 = 0x100 * 0x1000;

impl WprChipParams {
    /// The parameters RM 535.261.03 uses for `chip` (the HAL's [`crate::hal::Hal::wpr`]); `None`
    /// for chips that release does not know (Blackwell).
    pub const fn for_chipset(chip: Chipset) -> Option<Self> {
        crate::hal::for_chipset(chip).wpr
    }

    /// Turing (`kgspGetNonWprHeapSize`, `kgspGetFrtsSize` and the heap parameters of the TU102
    /// HAL).
    pub const TU102: Self = Self {
        layout: FbLayoutFlavor::Tu102,
        non_wpr_heap_size: MIB,
        frts_size: FRTS,
        fw_heap_param_base_size: GSP_FW_HEAP_PARAM_BASE_RM_SIZE_TU10X,
        fw_heap_param_os_carveout_size: GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS2,
        min_wpr_heap_size_mb: 64,
        max_wpr_heap_size_mb: 256,
        prescrubbed_top_fb_size: Some(256 * MIB),
        scrubber_ucode_supported: false,
    };
    /// GA100: Turing's, without FRTS, all of FB pre-scrubbed.
    pub const GA100: Self = Self { frts_size: 0, prescrubbed_top_fb_size: None, ..Self::TU102 };
    /// GA10x: LIBOS3's carveout and larger heap bounds.
    pub const GA102: Self = Self {
        fw_heap_param_os_carveout_size: GSP_FW_HEAP_PARAM_OS_SIZE_LIBOS3,
        min_wpr_heap_size_mb: 84,
        max_wpr_heap_size_mb: 276,
        ..Self::TU102
    };
    /// Ada: GA10x's, with the scrubber ucode.
    pub const AD102: Self = Self { scrubber_ucode_supported: true, ..Self::GA102 };
    /// GH100: its own FB layout, a 2 MiB non-WPR heap, GH100's RM base size, all of FB
    /// pre-scrubbed.
    pub const GH100: Self = Self {
        layout: FbLayoutFlavor::Gh100,
        non_wpr_heap_size: 2 * MIB,
        fw_heap_param_base_size: GSP_FW_HEAP_PARAM_BASE_RM_SIZE_GH100,
        prescrubbed_top_fb_size: None,
        ..Self::GA102
    };

    /// The GSP-RM (WPR) heap size for a usable framebuffer of `usable_fb_size` bytes, with
    /// `posterior_fb_size` bytes between the heap's end and the end of FB (0: no limit), as
    /// `kgspGetFwHeapSize` without a registry override computes it:
    ///
    /// 1. If no scrubber ucode runs first and `posterior_fb_size` is not 0, the heap must fit in
    ///    the pre-scrubbed top of FB: at most `(prescrubbed - posterior) >> 20` MiB.
    /// 2. `_kgspCalculateFwHeapSize`: OS carveout + RM base + 96 KiB per GiB of FB (GiB rounded
    ///    up, the product rounded up to 1 MiB) + 96 MiB for client allocations;
    /// 3. raised to the chip's minimum, then lowered to the limit of step 1.
    pub fn fw_heap_size(&self, usable_fb_size: u64, posterior_fb_size: u64) -> Result<u64, LayoutError> {
        const MIB: u64 = 1 << 20;
        let mut max_scrubbed_mb = u64::from(u32::MAX);
        if !self.scrubber_ucode_supported && posterior_fb_size != 0 {
            if let Some(prescrubbed) = self.prescrubbed_top_fb_size {
                let room = prescrubbed.checked_sub(posterior_fb_size).ok_or(LayoutError::DoesNotFit {
                    region: "GSP-RM heap in the pre-scrubbed top of FB",
                    needed: posterior_fb_size,
                    available: prescrubbed,
                })?;
                max_scrubbed_mb = room >> 20;
            }
        }
        let fb_size_gb = align_up(usable_fb_size, 1 << 30).ok_or(LayoutError::FbSizeOverflow { usable_fb_size })? >> 30;
        let per_gb = align_up(GSP_FW_HEAP_PARAM_SIZE_PER_GB_FB * fb_size_gb, MIB).unwrap_or(u64::MAX);
        let client = GSP_FW_HEAP_PARAM_CLIENT_ALLOC_SIZE.next_multiple_of(MIB);
        // Saturating: the parameters are public and a caller may set them to anything.
        let heap = self
            .fw_heap_param_os_carveout_size
            .saturating_add(self.fw_heap_param_base_size)
            .saturating_add(per_gb)
            .saturating_add(client);
        let heap = heap.max(self.min_wpr_heap_size_mb.saturating_mul(MIB));
        Ok(heap.min(max_scrubbed_mb.saturating_mul(MIB)))
    }
}

/// A buffer in system memory the boot chain reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SysmemRegion {
    /// Bus address.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
}

/// What the CPU has put in system memory for the boot chain.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirmwareImages {
    /// Bus address of the radix3 root of the GSP-RM ELF (`sysmemAddrOfRadix3Elf`).
    pub radix3_elf_addr: u64,
    /// Size of the GSP-RM ELF image (`GSP_FIRMWARE::imageSize`).
    pub elf_size: u64,
    /// The boot binary (GSP bootloader image on Turing..Ada, GSP-FMC on Hopper).
    pub bootloader: SysmemRegion,
    /// `RM_RISCV_UCODE_DESC::monitorCodeOffset` of the boot binary.
    pub bootloader_code_offset: u64,
    /// `monitorDataOffset`.
    pub bootloader_data_offset: u64,
    /// `manifestOffset`.
    pub bootloader_manifest_offset: u64,
    /// The firmware signature for this chip (`.fwsignature_*`), when there is one.
    pub signature: Option<SysmemRegion>,
    /// The CrashCat queue, when allocated.
    pub crash_report_queue: Option<SysmemRegion>,
}

/// A VBIOS-locked framebuffer range (`memmgrReadMmuLock_HAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmuLock {
    /// Lowest locked address.
    pub lo: u64,
    /// Highest locked address.
    pub hi: u64,
}

/// Inputs of [`GspFwWprMeta::layout_tu102`], the values RM reads from the hardware.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WprLayoutInputs {
    /// Usable framebuffer size (`kmemsysGetUsableFbSize_HAL`).
    pub usable_fb_size: u64,
    /// The VGA workspace base the display hardware reports (`kdispGetVgaWorkspaceBase`), or
    /// `None` when display is fused off or the base is not valid.
    pub vga_workspace_base: Option<u64>,
    /// The VBIOS MMU lock, when valid.
    pub mmu_lock: Option<MmuLock>,
    /// The firmware in system memory.
    pub images: FirmwareImages,
}

impl GspFwWprMeta {
    /// The metadata for `params.layout`: [`Self::layout_tu102`] or [`Self::layout_gh100`].
    pub fn layout(params: &WprChipParams, inputs: &WprLayoutInputs) -> Result<Self, LayoutError> {
        match params.layout {
            FbLayoutFlavor::Tu102 => Self::layout_tu102(params, inputs),
            FbLayoutFlavor::Gh100 => Self::layout_gh100(params, &inputs.images, inputs.usable_fb_size),
        }
    }

    /// The metadata `kgspCalculateFbLayout_TU102` (`kernel_gsp_tu102.c`) computes on a first boot
    /// (no recovery margin: `kgspGetWprEndMargin` is 0 without a registry override and without a
    /// previous failed attempt), one step per paragraph below, top of FB downwards.
    pub fn layout_tu102(params: &WprChipParams, inputs: &WprLayoutInputs) -> Result<Self, LayoutError> {
        let images = &inputs.images;
        if images.elf_size == 0 {
            return Err(LayoutError::EmptyImage { which: "GSP-RM ELF" });
        }
        if images.bootloader.size == 0 {
            return Err(LayoutError::EmptyImage { which: "GSP bootloader" });
        }
        let mut meta = Self::with_images(images);

        // fbSize: the usable framebuffer.
        let fb_size = inputs.usable_fb_size;
        meta.fb_size = fb_size;

        // VGA workspace: the hardware's base, moved to the last 128 KiB when it lies below the
        // last NV_PRAMIN-sized (1 MiB) window; the last 1 MiB when display is off.
        let pramin_start = sub(fb_size, NV_PRAMIN_SIZE, "VGA workspace (NV_PRAMIN window)")?;
        meta.vga_workspace_offset = match inputs.vga_workspace_base {
            Some(base) if base < pramin_start => sub(fb_size, VBIOS_WORKSPACE_SIZE, "VGA workspace")?,
            Some(base) if base > fb_size => {
                return Err(LayoutError::VgaWorkspaceBeyondFb { base, fb_size });
            }
            Some(base) => base,
            None => pramin_start,
        };
        meta.vga_workspace_size = fb_size - meta.vga_workspace_offset;

        // vbiosReservedOffset: the VGA workspace, or a lower VBIOS MMU lock.
        let vbios_reserved_offset = match inputs.mmu_lock {
            Some(lock) => lock.lo.min(meta.vga_workspace_offset),
            None => meta.vga_workspace_offset,
        };

        // gspFwWprEnd: 128 KiB aligned below the VBIOS reservation (no end margin).
        meta.gsp_fw_wpr_end = align_down(vbios_reserved_offset, 0x2_0000);

        // FRTS, directly below the end of WPR2.
        meta.frts_size = params.frts_size;
        meta.frts_offset = sub(meta.gsp_fw_wpr_end, params.frts_size, "FRTS")?;

        // Boot binary, 4 KiB aligned below FRTS.
        meta.boot_bin_offset = align_down(sub(meta.frts_offset, images.bootloader.size, "boot binary")?, 0x1000);

        // GSP-RM ELF, 64 KiB aligned below the boot binary.
        meta.gsp_fw_offset = align_down(sub(meta.boot_bin_offset, images.elf_size, "GSP-RM ELF")?, 0x1_0000);

        // GSP-RM heap, sized for the FB and what lies above it; 1 MiB aligned below the ELF, its
        // size then whatever 1 MiB-aligned span reaches the ELF.
        let heap = params.fw_heap_size(fb_size, fb_size - meta.gsp_fw_offset)?;
        meta.gsp_fw_heap_offset = align_down(sub(meta.gsp_fw_offset, heap, "GSP-RM heap")?, 0x10_0000);
        meta.gsp_fw_heap_size = align_down(meta.gsp_fw_offset - meta.gsp_fw_heap_offset, 0x10_0000);
        meta.gsp_fw_heap_vf_partition_count = 0;

        // gspFwWprStart: room for this structure below the heap, 1 MiB aligned.
        let meta_size = core::mem::size_of::<Self>() as u64;
        meta.gsp_fw_wpr_start = align_down(sub(meta.gsp_fw_heap_offset, meta_size, "WPR metadata")?, 0x10_0000);

        // Non-WPR heap, 1 MiB aligned below WPR2; the reservation starts there.
        meta.non_wpr_heap_size = params.non_wpr_heap_size;
        meta.non_wpr_heap_offset =
            align_down(sub(meta.gsp_fw_wpr_start, params.non_wpr_heap_size, "non-WPR heap")?, 0x10_0000);
        meta.gsp_fw_rsvd_start = meta.non_wpr_heap_offset;

        // A first boot: no recovery margin, not yet booted, not yet verified.
        meta.flags &= !GSP_FW_FLAGS_RECOVERY_MARGIN_PRESENT;
        meta.boot_count = 0;
        meta.verified = 0;
        Ok(meta)
    }

    /// The metadata `kgspCalculateFbLayout_GH100` (`kernel_gsp_gh100.c`) computes: sizes only
    /// (VGA workspace 128 KiB, non-WPR heap, and the WPR heap as a minimum: `kgspGetFwHeapSize`
    /// with no posterior size, so no pre-scrubbed limit, for a usable FB of `usable_fb_size`
    /// bytes); the FMC chooses the offsets and patches them in.
    pub fn layout_gh100(
        params: &WprChipParams,
        images: &FirmwareImages,
        usable_fb_size: u64,
    ) -> Result<Self, LayoutError> {
        if images.elf_size == 0 {
            return Err(LayoutError::EmptyImage { which: "GSP-RM ELF" });
        }
        if images.bootloader.size == 0 {
            return Err(LayoutError::EmptyImage { which: "GSP-FMC" });
        }
        let mut meta = Self::with_images(images);
        meta.vga_workspace_size = GH100_VGA_WORKSPACE_SIZE;
        meta.non_wpr_heap_size = params.non_wpr_heap_size;
        meta.gsp_fw_heap_size = params.fw_heap_size(usable_fb_size, 0)?;
        meta.gsp_fw_heap_vf_partition_count = 0;
        Ok(meta)
    }

    /// Magic, revision and the system-memory addresses every layout writes.
    fn with_images(images: &FirmwareImages) -> Self {
        let mut meta = Self {
            magic: GSP_FW_WPR_META_MAGIC,
            revision: GSP_FW_WPR_META_REVISION,
            sysmem_addr_of_radix3_elf: images.radix3_elf_addr,
            size_of_radix3_elf: images.elf_size,
            sysmem_addr_of_bootloader: images.bootloader.addr,
            size_of_bootloader: images.bootloader.size,
            bootloader_code_offset: images.bootloader_code_offset,
            bootloader_data_offset: images.bootloader_data_offset,
            bootloader_manifest_offset: images.bootloader_manifest_offset,
            ..Self::default()
        };
        if let Some(sig) = images.signature {
            meta.signature = WprMetaSignature { sysmem_addr_of_signature: sig.addr, size_of_signature: sig.size };
        }
        if let Some(queue) = images.crash_report_queue {
            meta.crash_cat.sysmem_addr_of_crash_report_queue = queue.addr;
            // RM stores the size truncated to NvU32 (`(NvU32)memdescGetSize`).
            meta.crash_cat.size_of_crash_report_queue = queue.size as u32;
        }
        meta
    }
}

/// `a - b` for a layout step, or the error naming the region that did not fit.
fn sub(a: u64, b: u64, region: &'static str) -> Result<u64, LayoutError> {
    a.checked_sub(b).ok_or(LayoutError::DoesNotFit { region, needed: b, available: a })
}

/// Why a WPR layout could not be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// A region needs more room than is left below the regions above it.
    DoesNotFit { region: &'static str, needed: u64, available: u64 },
    /// An image of size zero.
    EmptyImage { which: &'static str },
    /// The VGA workspace base the hardware reports lies beyond the end of FB.
    VgaWorkspaceBeyondFb { base: u64, fb_size: u64 },
    /// A usable FB size too large to round to a GiB.
    FbSizeOverflow { usable_fb_size: u64 },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LayoutError::DoesNotFit { region, needed, available } => {
                write!(f, "WPR layout: {region} needs {needed:#x} bytes below {available:#x}")
            }
            LayoutError::EmptyImage { which } => {
                write!(f, "WPR layout: the {which} image is empty")
            }
            LayoutError::VgaWorkspaceBeyondFb { base, fb_size } => {
                write!(f, "WPR layout: VGA workspace base {base:#x} is beyond the end of FB ({fb_size:#x})")
            }
            LayoutError::FbSizeOverflow { usable_fb_size } => {
                write!(f, "WPR layout: usable FB size {usable_fb_size:#x} overflows")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gsp::fw::wpr::{WprMetaHeapFreeList, WprMetaPartitionRpc};
    use zerocopy::{FromBytes, IntoBytes};

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    fn images(elf_size: u64, bootloader_size: u64) -> FirmwareImages {
        FirmwareImages {
            radix3_elf_addr: 0x1_0000_0000,
            elf_size,
            bootloader: SysmemRegion { addr: 0x2_0000_0000, size: bootloader_size },
            bootloader_code_offset: 0x100,
            bootloader_data_offset: 0x8000,
            bootloader_manifest_offset: 0x9000,
            signature: Some(SysmemRegion { addr: 0x3_0000_0000, size: 0x1000 }),
            crash_report_queue: None,
        }
    }

    fn params(chip: Chipset) -> WprChipParams {
        WprChipParams::for_chipset(chip).unwrap()
    }

    #[test]
    fn heap_sizes_by_hand() {
        // TU102, 8 GiB: 0 (LIBOS2) + 8 MiB + align_up(96 KiB * 8 = 768 KiB, 1 MiB) = 1 MiB
        // + 96 MiB = 105 MiB; above the 64 MiB minimum; no limit without a posterior size.
        assert_eq!(params(Chipset::TU102).fw_heap_size(8 * GIB, 0), Ok(105 * MIB));
        // GA102, 24 GiB: 20 + 8 + align_up(2304 KiB) = 3 + 96 = 127 MiB.
        assert_eq!(params(Chipset::GA102).fw_heap_size(24 * GIB, 0), Ok(127 * MIB));
        // GH100, 80 GiB: 20 + 14 + 7680 KiB -> 8 + 96 = 138 MiB.
        assert_eq!(params(Chipset::GH100).fw_heap_size(80 * GIB, 0), Ok(138 * MIB));
        // A 23.5 GiB FB counts as 24 GiB.
        assert_eq!(params(Chipset::AD102).fw_heap_size(24 * GIB - 512 * MIB, 0), Ok(127 * MIB));
        // Pre-scrubbed limit (TU102, 256 MiB scrubbed): with 200 MiB above the heap, at most
        // (256 - 200) = 56 MiB, below even the minimum: RM takes the limit.
        assert_eq!(params(Chipset::TU102).fw_heap_size(8 * GIB, 200 * MIB), Ok(56 * MIB));
        // A posterior size of 200 MiB + 1 byte leaves 55.99.. MiB -> 55 MiB.
        assert_eq!(params(Chipset::TU102).fw_heap_size(8 * GIB, 200 * MIB + 1), Ok(55 * MIB));
        // Ada runs a scrubber first; GA100 and GH100 are scrubbed whole: no limit.
        assert_eq!(params(Chipset::AD104).fw_heap_size(12 * GIB, 200 * MIB), Ok(126 * MIB));
        assert_eq!(params(Chipset::GA100).fw_heap_size(40 * GIB, 200 * MIB), Ok(108 * MIB));
        // More above the heap than was scrubbed: nothing fits.
        assert!(matches!(params(Chipset::GA104).fw_heap_size(8 * GIB, 300 * MIB), Err(LayoutError::DoesNotFit { .. })));
        assert_eq!(WprChipParams::for_chipset(Chipset::GB202), None);
    }

    /// TU102 with 8 GiB, display off, no MMU lock, bootloader 0x12345 bytes, ELF 0x1c00123 bytes.
    #[test]
    fn tu102_layout_by_hand() {
        let inputs = WprLayoutInputs {
            usable_fb_size: 0x2_0000_0000,
            vga_workspace_base: None,
            mmu_lock: None,
            images: images(0x1c0_0123, 0x1_2345),
        };
        let meta = GspFwWprMeta::layout(&params(Chipset::TU102), &inputs).unwrap();
        // VGA: the last 1 MiB.
        assert_eq!(meta.vga_workspace_offset, 0x1_fff0_0000);
        assert_eq!(meta.vga_workspace_size, 0x10_0000);
        // WPR end: 0x1fff00000 is already 128 KiB aligned. FRTS: 1 MiB below it.
        assert_eq!(meta.gsp_fw_wpr_end, 0x1_fff0_0000);
        assert_eq!(meta.frts_offset, 0x1_ffe0_0000);
        assert_eq!(meta.frts_size, 0x10_0000);
        // Boot binary: 0x1ffe00000 - 0x12345 = 0x1ffdedcbb, down to 4 KiB: 0x1ffded000.
        assert_eq!(meta.boot_bin_offset, 0x1_ffde_d000);
        // ELF: 0x1ffded000 - 0x1c00123 = 0x1fe1ecedd, down to 64 KiB: 0x1fe1e0000.
        assert_eq!(meta.gsp_fw_offset, 0x1_fe1e_0000);
        // Heap: 105 MiB (0x6900000); 0x200000000 - 0x1fe1e0000 = 0x1e20000 (30.1 MiB) above it
        // leaves (256 MiB - 0x1e20000) >> 20 = 225 MiB of pre-scrubbed room: no clamp.
        // 0x1fe1e0000 - 0x6900000 = 0x1f78e0000, down to 1 MiB: 0x1f7800000; the size is
        // 0x1fe1e0000 - 0x1f7800000 = 0x69e0000, down to 1 MiB: 0x6900000.
        assert_eq!(meta.gsp_fw_heap_offset, 0x1_f780_0000);
        assert_eq!(meta.gsp_fw_heap_size, 0x690_0000);
        // WPR start: 0x1f7800000 - 256 = 0x1f77fff00, down to 1 MiB: 0x1f7700000.
        assert_eq!(meta.gsp_fw_wpr_start, 0x1_f770_0000);
        // Non-WPR heap: 1 MiB below, already aligned.
        assert_eq!(meta.non_wpr_heap_offset, 0x1_f760_0000);
        assert_eq!(meta.non_wpr_heap_size, 0x10_0000);
        assert_eq!(meta.gsp_fw_rsvd_start, 0x1_f760_0000);
        // The rest comes straight from the inputs.
        assert_eq!(meta.fb_size, 0x2_0000_0000);
        assert_eq!(meta.size_of_radix3_elf, 0x1c0_0123);
        assert_eq!(meta.size_of_bootloader, 0x1_2345);
        assert_eq!(meta.sysmem_addr_of_radix3_elf, 0x1_0000_0000);
        assert_eq!(
            meta.signature,
            WprMetaSignature { sysmem_addr_of_signature: 0x3_0000_0000, size_of_signature: 0x1000 }
        );
        assert_eq!(
            (meta.magic, meta.revision, meta.verified, meta.boot_count, meta.flags),
            (GSP_FW_WPR_META_MAGIC, 1, 0, 0, 0)
        );
        assert!(meta.is_valid_header() && !meta.is_verified());
    }

    /// GA102 with 12 GiB, a VGA base low in FB (moved to the last 128 KiB) and an MMU lock below
    /// it; a 200 MiB ELF pushes the heap against the pre-scrubbed limit.
    #[test]
    fn ga102_layout_with_vga_lock_and_clamp() {
        let fb = 12 * GIB; // 0x300000000
        let inputs = WprLayoutInputs {
            usable_fb_size: fb,
            vga_workspace_base: Some(0x10_0000),
            mmu_lock: Some(MmuLock { lo: fb - 0x5_0000, hi: fb - 1 }),
            images: images(200 * MIB, 0x8000),
        };
        let meta = GspFwWprMeta::layout_tu102(&params(Chipset::GA102), &inputs).unwrap();
        // VGA base 1 MiB is below fb - 1 MiB: the workspace becomes the last 128 KiB.
        assert_eq!(meta.vga_workspace_offset, 0x2_fffe_0000);
        assert_eq!(meta.vga_workspace_size, 0x2_0000);
        // The MMU lock at fb - 0x50000 = 0x2fffb0000 is lower; 128 KiB down: 0x2fffa0000.
        assert_eq!(meta.gsp_fw_wpr_end, 0x2_fffa_0000);
        assert_eq!(meta.frts_offset, 0x2_ffea_0000);
        // 0x2ffea0000 - 0x8000 = 0x2ffe98000 (already 4 KiB aligned).
        assert_eq!(meta.boot_bin_offset, 0x2_ffe9_8000);
        // 0x2ffe98000 - 0xc800000 = 0x2f3698000, down to 64 KiB: 0x2f3690000.
        assert_eq!(meta.gsp_fw_offset, 0x2_f369_0000);
        // Above the heap: 0x300000000 - 0x2f3690000 = 0xc970000 (201.4 MiB); pre-scrubbed room
        // (0x10000000 - 0xc970000) >> 20 = 0x3690000 >> 20 = 54 MiB < 127 MiB: heap 54 MiB.
        // 0x2f3690000 - 0x3600000 = 0x2f0090000, down to 1 MiB: 0x2f0000000; size 0x3690000
        // down to 1 MiB: 0x3600000.
        assert_eq!(meta.gsp_fw_heap_offset, 0x2_f000_0000);
        assert_eq!(meta.gsp_fw_heap_size, 0x360_0000);
        // 0x2f0000000 - 256 -> 0x2eff00000; non-WPR heap 1 MiB below.
        assert_eq!(meta.gsp_fw_wpr_start, 0x2_eff0_0000);
        assert_eq!(meta.non_wpr_heap_offset, 0x2_efe0_0000);
    }

    #[test]
    fn vga_base_in_the_last_window_is_kept() {
        let fb = 4 * GIB;
        let inputs = WprLayoutInputs {
            usable_fb_size: fb,
            vga_workspace_base: Some(fb - 0x8_0000),
            mmu_lock: None,
            images: images(0x100_0000, 0x1000),
        };
        let meta = GspFwWprMeta::layout_tu102(&params(Chipset::TU117), &inputs).unwrap();
        assert_eq!(meta.vga_workspace_offset, fb - 0x8_0000);
        assert_eq!(meta.vga_workspace_size, 0x8_0000);
        assert_eq!(meta.gsp_fw_wpr_end, fb - 0x8_0000);
        let beyond = WprLayoutInputs { vga_workspace_base: Some(fb + 0x1000), ..inputs };
        assert_eq!(
            GspFwWprMeta::layout_tu102(&params(Chipset::TU117), &beyond),
            Err(LayoutError::VgaWorkspaceBeyondFb { base: fb + 0x1000, fb_size: fb })
        );
    }

    #[test]
    fn ga100_has_no_frts() {
        let inputs =
            WprLayoutInputs { usable_fb_size: 40 * GIB, images: images(0x100_0000, 0x1000), ..Default::default() };
        let meta = GspFwWprMeta::layout_tu102(&params(Chipset::GA100), &inputs).unwrap();
        assert_eq!(meta.frts_size, 0);
        assert_eq!(meta.frts_offset, meta.gsp_fw_wpr_end);
    }

    #[test]
    fn small_or_empty_inputs_are_errors() {
        let tiny =
            WprLayoutInputs { usable_fb_size: 64 * MIB, images: images(0x100_0000, 0x1000), ..Default::default() };
        assert!(matches!(
            GspFwWprMeta::layout_tu102(&params(Chipset::TU104), &tiny),
            Err(LayoutError::DoesNotFit { .. })
        ));
        let none = WprLayoutInputs { usable_fb_size: 0, images: images(0x100_0000, 0x1000), ..Default::default() };
        assert!(matches!(
            GspFwWprMeta::layout_tu102(&params(Chipset::TU104), &none),
            Err(LayoutError::DoesNotFit { .. })
        ));
        let empty = WprLayoutInputs { usable_fb_size: 8 * GIB, images: images(0, 0x1000), ..Default::default() };
        assert_eq!(
            GspFwWprMeta::layout_tu102(&params(Chipset::TU104), &empty),
            Err(LayoutError::EmptyImage { which: "GSP-RM ELF" })
        );
        let huge =
            WprLayoutInputs { usable_fb_size: u64::MAX, images: images(0x100_0000, 0x1000), ..Default::default() };
        assert!(GspFwWprMeta::layout_tu102(&params(Chipset::AD102), &huge).is_err());
    }

    #[test]
    fn gh100_states_sizes_only() {
        let meta =
            GspFwWprMeta::layout_gh100(&params(Chipset::GH100), &images(0x300_0000, 0x2_0000), 80 * GIB).unwrap();
        assert_eq!(meta.vga_workspace_size, 128 * 1024);
        assert_eq!(meta.non_wpr_heap_size, 2 * MIB);
        assert_eq!(meta.gsp_fw_heap_size, 138 * MIB);
        assert_eq!((meta.gsp_fw_wpr_start, meta.gsp_fw_offset, meta.frts_offset, meta.fb_size), (0, 0, 0, 0));
        assert_eq!(meta.size_of_radix3_elf, 0x300_0000);
        assert!(meta.is_valid_header());
    }

    #[test]
    fn meta_round_trips_and_union_views() {
        let mut meta = GspFwWprMeta::layout_tu102(
            &params(Chipset::GA104),
            &WprLayoutInputs { usable_fb_size: 8 * GIB, images: images(0x100_0000, 0x1000), ..Default::default() },
        )
        .unwrap();
        meta.crash_cat.sysmem_addr_of_crash_report_queue = 0x1122_3344_5566_7788;
        meta.crash_cat.size_of_crash_report_queue = 0x1000;
        let bytes = meta.as_bytes();
        assert_eq!(bytes.len(), 256);
        assert_eq!(&bytes[0..8], &GSP_FW_WPR_META_MAGIC.to_le_bytes());
        // gspFwWprStart at 112, fbSize at 176, the second union at 208, verified at 248.
        assert_eq!(&bytes[112..120], &meta.gsp_fw_wpr_start.to_le_bytes());
        assert_eq!(&bytes[176..184], &(8 * GIB).to_le_bytes());
        assert_eq!(&bytes[224..232], &0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(GspFwWprMeta::read_from_bytes(bytes).unwrap(), meta);
        // The crash queue address overlays elfDataOffset and elfCodeSize.
        let partition = meta.partition_rpc();
        assert_eq!((partition.elf_data_offset, partition.elf_code_size), (0x5566_7788, 0x1122_3344));
        assert_eq!(partition.elf_data_size, 0x1000);
        // And the free-list offset overlays the low half of the signature address.
        meta.set_heap_free_list(WprMetaHeapFreeList {
            gsp_fw_heap_free_list_wpr_offset: 0xabcd,
            unused0: 0,
            unused1: 0,
        });
        assert_eq!(meta.signature.sysmem_addr_of_signature, 0xabcd);
        meta.set_partition_rpc(WprMetaPartitionRpc { ls_ucode_version: 7, ..Default::default() });
        assert_eq!(meta.crash_cat.ls_ucode_version_padding, [7]);
    }
}
