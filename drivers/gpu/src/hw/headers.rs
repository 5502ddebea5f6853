//! Where hardware facts come from: NVIDIA's headers, by release and path.
//!
//! The pinned release is open-gpu-kernel-modules 535.261.03 (the GSP-RM firmware version we boot,
//! fetched from Debian by `scripts/fetch-real-data.sh`). Blackwell postdates it, so Blackwell facts
//! cite 570.133.07 (first checked release with every Blackwell fact we use); QMD versions cite
//! NVIDIA's open-gpu-doc. The conformance test reads each header from the release it names.

/// A header file in one of NVIDIA's source releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Header {
    /// Which source tree: [`OGKM_PINNED`], [`OGKM_BLACKWELL`] or [`OPEN_GPU_DOC`].
    pub release: &'static str,
    /// Path inside that tree.
    pub path: &'static str,
}

/// NVIDIA open-gpu-kernel-modules, the release our GSP-RM firmware is bound to.
pub const OGKM_PINNED: &str = "535.261.03";
/// NVIDIA open-gpu-kernel-modules release cited for Blackwell facts (absent from 535).
pub const OGKM_BLACKWELL: &str = "570.133.07";
/// NVIDIA open-gpu-doc at commit c8607fe576b53ff821ffcf97e7548d2de11c4eaf (class and QMD headers).
pub const OPEN_GPU_DOC: &str = "open-gpu-doc@c8607fe576b53ff821ffcf97e7548d2de11c4eaf";

macro_rules! headers {
    ($($(#[$meta:meta])* $name:ident = $release:ident : $path:literal;)*) => {
        $( $(#[$meta])* pub const $name: Header = Header { release: $release, path: $path }; )*
        /// Every header cited by `hw`, `chip` and `hal`.
        pub const ALL: &[Header] = &[$($name),*];
    };
}

headers! {
    /// NV_PMC_BOOT_0 / NV_PMC_BOOT_42: "very stable across generations".
    NV_REF = OGKM_PINNED: "src/common/inc/swref/published/nv_ref.h";
    /// Same, with the architecture fields widened for Blackwell and later.
    NV_REF_570 = OGKM_BLACKWELL: "src/common/inc/swref/published/nv_ref.h";
    /// GPU_ARCHITECTURE_* and GPU_IMPLEMENTATION_*.
    NV_ARCH = OGKM_PINNED: "src/common/inc/swref/published/nv_arch.h";
    NV_ARCH_570 = OGKM_BLACKWELL: "src/common/inc/swref/published/nv_arch.h";

    TU102_DEV_BOOT = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_boot.h";
    TU102_DEV_BUS = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_bus.h";
    GA100_DEV_BUS = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga100/dev_bus.h";
    TU102_DEV_EXT_DEVICES = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_ext_devices.h";
    TU102_DEV_FALCON_V4 = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_falcon_v4.h";
    GA102_DEV_FALCON_V4 = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga102/dev_falcon_v4.h";
    GA102_DEV_FALCON_V4_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga102/dev_falcon_v4_addendum.h";
    GH100_DEV_FALCON_V4 = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_falcon_v4.h";
    GA102_DEV_FALCON_SECOND_PRI = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga102/dev_falcon_second_pri.h";
    TU102_DEV_FBIF_V4 = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_fbif_v4.h";
    TU102_DEV_RISCV_PRI = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_riscv_pri.h";
    GA102_DEV_RISCV_PRI = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga102/dev_riscv_pri.h";
    GH100_DEV_RISCV_PRI = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_riscv_pri.h";
    TU102_DEV_GSP = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_gsp.h";
    TU102_DEV_GSP_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_gsp_addendum.h";
    GH100_DEV_GSP = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_gsp.h";
    TU102_DEV_SEC_PRI = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_sec_pri.h";
    TU102_DEV_SEC_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_sec_addendum.h";
    GH100_DEV_FSP_PRI = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_fsp_pri.h";
    GB202_DEV_FSP_PRI = OGKM_BLACKWELL: "src/common/inc/swref/published/blackwell/gb202/dev_fsp_pri.h";
    TU102_DEV_FB = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_fb.h";
    TU102_DEV_GC6_ISLAND = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_gc6_island.h";
    TU102_DEV_GC6_ISLAND_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_gc6_island_addendum.h";
    GA102_DEV_GC6_ISLAND = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga102/dev_gc6_island.h";
    GA102_DEV_GC6_ISLAND_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga102/dev_gc6_island_addendum.h";
    GH100_DEV_THERM = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_therm.h";
    GH100_DEV_THERM_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_therm_addendum.h";
    GB100_DEV_THERM = OGKM_BLACKWELL: "src/common/inc/swref/published/blackwell/gb100/dev_therm.h";
    GB202_DEV_THERM = OGKM_BLACKWELL: "src/common/inc/swref/published/blackwell/gb202/dev_therm.h";
    /// Where NV_MMU_VER2_* (the page-table format of Pascal to Ada) is defined.
    GP100_DEV_MMU = OGKM_PINNED: "src/common/inc/swref/published/pascal/gp100/dev_mmu.h";
    GH100_DEV_MMU = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_mmu.h";
    /// `NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE*`: RM's TLB invalidate on Turing and later
    /// (`kern_gmmu_tu102.c` includes this header for every chip through Hopper).
    TU102_DEV_VM = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_vm.h";
    /// Hopper's VF space (its `PAGE_FAULT_CTRL` offset).
    GH100_DEV_VM = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_vm.h";
    /// UVM's excerpt of Volta's `dev_fb.h`: the field layouts of the fault buffer registers, which
    /// UVM applies to the VF registers of Turing and later.
    GV100_UVM_DEV_FB = OGKM_PINNED: "kernel-open/nvidia-uvm/hwref/volta/gv100/dev_fb.h";
    /// UVM's excerpt of Pascal's `dev_fb.h`: `PAGE_FAULT_CTRL_PRF_FILTER`.
    GP100_UVM_DEV_FB = OGKM_PINNED: "kernel-open/nvidia-uvm/hwref/pascal/gp100/dev_fb.h";
    /// `NV_PBUS_BAR0_WINDOW`: RM's PRAMIN window register before Hopper (`kern_bus_gm107.c`).
    GM107_DEV_BUS = OGKM_PINNED: "src/common/inc/swref/published/maxwell/gm107/dev_bus.h";
    /// `NV_PRAMIN`: the 1 MiB BAR0 window into memory.
    TU102_DEV_RAM = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_ram.h";
    /// `NV_RAMIN_ALLOC_SIZE`: an instance block's size (and alignment).
    GA100_DEV_RAM = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga100/dev_ram.h";
    /// `NV_RAMUSERD_BASE_SHIFT`: USERD alignment.
    GM107_DEV_RAM = OGKM_PINNED: "src/common/inc/swref/published/maxwell/gm107/dev_ram.h";
    /// `NV_XAL_EP_BAR0_WINDOW`: Hopper's PRAMIN window register (`kern_bus_gh100.c`).
    GH100_PRI_NV_XAL_EP = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/pri_nv_xal_ep.h";
    /// `NV_PFAULT_*` (fault and access types, MMU engine ids), Turing to Ada.
    TU102_DEV_FAULT = OGKM_PINNED: "kernel-open/nvidia-uvm/hwref/turing/tu102/dev_fault.h";
    /// `NV_PFAULT_*`, Hopper (engine ids moved).
    GH100_DEV_FAULT = OGKM_PINNED: "kernel-open/nvidia-uvm/hwref/hopper/gh100/dev_fault.h";
    /// MMU_FAULT_BUFFER: the 32-byte fault packet, Volta to Blackwell.
    CLC369 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc369.h";
    /// The FWSEC-FRTS error code in a VBIOS scratch register: RM defines it in its C source.
    KERNEL_GSP_FRTS_TU102 = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_frts_tu102.c";
    /// NV_FIRMWARE_CHIP_FAMILY_*: which GSP firmware image and signature a chip takes.
    NV_FIRMWARE = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/nv-firmware.h";
    NV_FIRMWARE_570 = OGKM_BLACKWELL: "src/nvidia/arch/nvalloc/common/inc/nv-firmware.h";
    /// Which classes each chip exposes (`gpuGetClassDescriptorList_<CHIP>`).
    GPU_CLASS_LIST = OGKM_PINNED: "src/nvidia/generated/g_gpu_class_list.c";
    GPU_CLASS_LIST_570 = OGKM_BLACKWELL: "src/nvidia/generated/g_gpu_class_list.c";
    /// The supported-GPU table (board names by PCI device id).
    README = OGKM_PINNED: "README.md";
    README_570 = OGKM_BLACKWELL: "README.md";

    CLC46F = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc46f.h";
    CLC56F = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc56f.h";
    CLC86F = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc86f.h";
    CLC96F = OGKM_BLACKWELL: "src/common/sdk/nvidia/inc/class/clc96f.h";
    CLCA6F = OGKM_BLACKWELL: "src/common/sdk/nvidia/inc/class/clca6f.h";
    CLC5B5 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc5b5.h";
    CLC6B5 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc6b5.h";
    CLC7B5 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc7b5.h";
    CLC8B5 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc8b5.h";
    CLC9B5 = OGKM_BLACKWELL: "src/common/sdk/nvidia/inc/class/clc9b5.h";
    CLCAB5 = OGKM_BLACKWELL: "src/common/sdk/nvidia/inc/class/clcab5.h";
    /// HOPPER_DMA_COPY_A in full: the SDK's `clc8b5.h` of 535 holds only what RM uses.
    UVM_CLC8B5 = OGKM_PINNED: "kernel-open/nvidia-uvm/clc8b5.h";
    /// HOPPER_CHANNEL_GPFIFO_A in full: the SDK's `clc86f.h` of 535 has no `MEM_OP_*` fields.
    UVM_CLC86F = OGKM_PINNED: "kernel-open/nvidia-uvm/clc86f.h";
    /// Blackwell copy classes' methods: 570's `clc9b5.h`/`clcab5.h` carry only the class numbers.
    CLC9B5_DOC = OPEN_GPU_DOC: "classes/dma-copy/clc9b5.h";
    CLCAB5_DOC = OPEN_GPU_DOC: "classes/dma-copy/clcab5.h";
    CLC5C0 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc5c0.h";
    CLC6C0 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc6c0.h";
    CLC7C0 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc7c0.h";
    CLC9C0 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc9c0.h";
    CLCBC0 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clcbc0.h";
    CLCDC0 = OGKM_BLACKWELL: "src/common/sdk/nvidia/inc/class/clcdc0.h";
    CLCEC0 = OGKM_BLACKWELL: "src/common/sdk/nvidia/inc/class/clcec0.h";
    /// Ada and Hopper compute methods: 535's `clc9c0.h`/`clcbc0.h` carry only the class numbers.
    CLC9C0_DOC = OPEN_GPU_DOC: "classes/compute/clc9c0.h";
    CLCBC0_DOC = OPEN_GPU_DOC: "classes/compute/clcbc0.h";
    CLC461 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc461.h";
    CLC561 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc561.h";
    CLC661 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc661.h";
    CLC761 = OGKM_BLACKWELL: "src/common/sdk/nvidia/inc/class/clc761.h";

    /// QMD layouts, by compute class (open-gpu-doc).
    CLC5C0_QMD = OPEN_GPU_DOC: "classes/compute/clc5c0qmd.h";
    CLC6C0_QMD = OPEN_GPU_DOC: "classes/compute/clc6c0qmd.h";
    CLC7C0_QMD = OPEN_GPU_DOC: "classes/compute/clc7c0qmd.h";
    CLC9C0_QMD = OPEN_GPU_DOC: "classes/compute/clc9c0qmd.h";
    CLCBC0_QMD = OPEN_GPU_DOC: "classes/compute/clcbc0qmd.h";
    CLCDC0_QMD = OPEN_GPU_DOC: "classes/compute/clcdc0qmd.h";
    CLCEC0_QMD = OPEN_GPU_DOC: "classes/compute/clcec0qmd.h";
}
