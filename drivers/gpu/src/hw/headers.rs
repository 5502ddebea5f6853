//! Where hardware facts come from: NVIDIA's headers, by release and path.
//!
//! The pinned release is open-gpu-kernel-modules 535.261.03 (the GSP-RM firmware version we boot,
//! fetched from Debian by `scripts/fetch-real-data.sh`). Blackwell postdates it, so Blackwell facts
//! cite 570.133.07 (first checked release with every Blackwell fact we use); QMD versions cite
//! NVIDIA's open-gpu-doc. The conformance test reads each header from the release it names.
//! Neither of those two trees is in Debian (its newest NVIDIA source, 550.163.01, has no
//! Blackwell), so CI reads a second source where one exists: [`TINYGRAD`]'s `nv_570.py`, generated
//! from NVIDIA's QMD headers, for every QMD layout but Hopper's V04_00, and Debian's
//! [`LINUX_SOURCE`] (nouveau's and Nova's NVIDIA-derived headers and tables) for Blackwell.
//!
//! Every NVIDIA file the workspace cites is named here once, driver and model alike (register
//! headers, the RM structure headers `tests/tests/gsp_layout.rs` and `gsp_rpc_layout.rs` compile,
//! the RM sources whose behaviour is followed); `tests/tests/header_conformance.rs` fails when a
//! `Header` is built, or a path written again, anywhere else.

/// A header file in one of NVIDIA's source releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Header {
    /// Which source tree: [`OGKM_PINNED`], [`OGKM_BLACKWELL`], [`OPEN_GPU_DOC`], or one of the
    /// second readings [`TINYGRAD`] and [`LINUX_SOURCE`].
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
/// PyPI's tinygrad 0.14.0 wheel (`tinygrad-0.14.0-py3-none-any.whl`, sha256
/// d2a5bea33c637fdf105963632329876b3d3253d38295ac1ffd2ff81646d93be3), unpacked by
/// `scripts/fetch-real-data.sh`. Not a source facts cite: a second reading of NVIDIA's headers
/// that CI can fetch, against which `tests/tests/qmd_layout.rs` checks the QMD layouts.
pub const TINYGRAD: &str = "tinygrad-0.14.0";
/// Debian's `linux-source-7.2` 7.2.13-1 (sid), of which `scripts/fetch-real-data.sh` unpacks the
/// GPU drivers' NVIDIA-derived parts. Not a source facts cite: a second reading, fetched from
/// Debian, against which `tests/tests/header_conformance.rs` checks the Blackwell facts that cite
/// [`OGKM_BLACKWELL`] (Debian carries no 570 tree).
pub const LINUX_SOURCE: &str = "linux-source-7.2_7.2.13-1";

macro_rules! headers {
    ($($(#[$meta:meta])* $name:ident = $release:ident : $path:literal;)*) => {
        $( $(#[$meta])* pub const $name: Header = Header { release: $release, path: $path }; )*
        /// Every file cited by the crate.
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
    /// Hopper's addendum, which `kern_fsp_gh100.c` takes the FRTS size from.
    GH100_DEV_GC6_ISLAND_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_gc6_island_addendum.h";
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
    /// `NV_PRAMIN`: the 1 MiB BAR0 window into memory (its size is also the default VGA
    /// workspace).
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
    /// The FWSEC-FRTS error code in a VBIOS scratch register, the FWSEC command interface
    /// (`kgspGetFrtsSize_TU102`, `s_executeFwsec_TU102`): RM defines them in its C source.
    /// The generic falcon bootloader's descriptors (`RM_FLCN_BL_DESC`, `RM_FLCN_BL_DMEM_DESC`).
    RMFLCNBL = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/rmflcnbl.h";
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

    /// `Nvc46fControl` (USERD) and Turing's GPFIFO methods.
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
    /// tinygrad's ctypes bindings generated from NVIDIA's `clc6c0qmd.h` (QMDV02_03, V02_04,
    /// V03_00 under the NVC6C0 prefix) and `clcec0qmd.h` (V04_01, V05_00, V05_01 under NVCEC0):
    /// `NAME = (hi, lo)` and `NAME = lambda i: ((hi+(i)*s), (lo+(i)*s))`. No Hopper V04_00.
    TINYGRAD_NV_570 = TINYGRAD: "tinygrad/runtime/autogen/nv_570.py";

    /// nouveau's excerpt of NVIDIA's `blackwell/gb202/dev_therm.h` (`NV_THERM_I2CS_SCRATCH`).
    NOUVEAU_GB202_DEV_THERM = LINUX_SOURCE: "drivers/gpu/drm/nouveau/include/nvhw/ref/gb202/dev_therm.h";
    /// nouveau's class numbers (`BLACKWELL_CHANNEL_GPFIFO_A`, `BLACKWELL_COMPUTE_B`, ...), under
    /// NVIDIA's names.
    NOUVEAU_NVIF_CLASS = LINUX_SOURCE: "drivers/gpu/drm/nouveau/include/nvif/class.h";
    /// Nova's chip table: `Chipset` (`GB202 = 0x1b2`, the BOOT_42 chip id) and `Architecture`
    /// (`BlackwellGB20x = 0x1b`).
    NOVA_GPU_RS = LINUX_SOURCE: "drivers/gpu/nova-core/gpu.rs";
    /// Nova's register table: `NV_PMC_BOOT_0(u32) @ 0x00000000 { 28:24 architecture_0; .. }`.
    NOVA_REGS_RS = LINUX_SOURCE: "drivers/gpu/nova-core/regs.rs";

    // -----------------------------------------------------------------------------------------
    // Registers and values outside the register headers above.

    /// The ucode revocation fuses RM reads on GA100 and every later chip of the release.
    GA100_DEV_FUSE = OGKM_PINNED: "src/common/inc/swref/published/ampere/ga100/dev_fuse.h";
    /// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` on Turing.
    TU102_DEV_FUSE = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_fuse.h";
    /// `NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` on Hopper.
    GH100_DEV_FUSE = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_fuse.h";
    /// Where RM reads the framebuffer size on Turing and GA100 (`kmemsysReadUsableFbSize_GP102`).
    GP102_DEV_FB = OGKM_PINNED: "src/common/inc/swref/published/pascal/gp102/dev_fb.h";
    /// `NV_PCFG`: the PCI config-space mirror, Turing to Ada.
    TU102_DEV_NV_XVE = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_nv_xve.h";
    /// `NV_EP_PCFGM`: the PCI config-space mirror on Hopper.
    GH100_DEV_XTL_EP_PRI = OGKM_PINNED: "src/common/inc/swref/published/hopper/gh100/dev_xtl_ep_pri.h";
    /// The NVSwitch SOE falcon's FBIF, which names the non-coherent system memory target.
    LR10_DEV_SOE_IP = OGKM_PINNED: "src/common/inc/swref/published/nvswitch/lr10/dev_soe_ip.h";
    /// UVM's copy of the gp100 MMU header: the one place VER2 aperture values are defined.
    UVM_GP100_DEV_MMU = OGKM_PINNED: "kernel-open/nvidia-uvm/hwref/pascal/gp100/dev_mmu.h";
    /// Turing's MMU header: `NV_MMU_PTE_KIND_GENERIC_MEMORY`, the kind Turing to Ada map memory
    /// with.
    TU102_DEV_MMU = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_mmu.h";
    /// `NV_CTRL_VF_DOORBELL_VECTOR`, `NV_CTRL_VF_DOORBELL_RUNLIST_ID`.
    DEV_CTRL_TU102 = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_ctrl.h";
    /// `NV_CPU_INTR_UVM_SUBTREE_START`.
    DEV_VM_ADDENDUM = OGKM_PINNED: "src/common/inc/swref/published/turing/tu102/dev_vm_addendum.h";
    /// `NV_INTR_VECTOR_INVALID`.
    DEV_CTRL_DEFINES = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/dev_ctrl_defines.h";

    // -----------------------------------------------------------------------------------------
    // GSP boot structures (compiled by `tests/tests/gsp_layout.rs`) and the RM code the boot
    // follows.

    /// `GspFwWprMeta`, `GSP_FW_WPR_META_*`, `GSP_FW_FLAGS_*`.
    GSP_FW_WPR_META = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_wpr_meta.h";
    /// `GspFwSRMeta`, `GSP_FW_SR_META_*`.
    GSP_FW_SR_META = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/gsp/gsp_fw_sr_meta.h";
    /// `LibosMemoryRegionInitArgument`, `LibosMemoryRegionKind`, `LibosMemoryRegionLoc`.
    LIBOS_INIT_ARGS = OGKM_PINNED: "src/common/uproc/os/common/include/libos_init_args.h";
    /// `GSP_ARGUMENTS_CACHED`, `MESSAGE_QUEUE_INIT_ARGUMENTS`, `GSP_SR_INIT_ARGUMENTS`.
    GSP_INIT_ARGS = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gsp/gsp_init_args.h";
    /// `msgqTxHeader`, `msgqRxHeader`, `MSGQ_VERSION`.
    MSGQ_PRIV = OGKM_PINNED: "src/common/shared/msgq/inc/msgq/msgq_priv.h";
    /// `MSGQ_FLAGS_SWAP_RX`, `MSGQ_MSG_SIZE_MIN`, `MSGQ_META_*_ALIGN`.
    MSGQ = OGKM_PINNED: "src/common/shared/msgq/inc/msgq/msgq.h";
    /// `msgqTxCreate`, `msgqRxLink`: how queue headers are filled and checked.
    MSGQ_C = OGKM_PINNED: "src/common/shared/msgq/msgq.c";
    /// `GSP_MSG_QUEUE_ELEMENT`, `GSP_MSG_QUEUE_*`, `_checkSum32`.
    MESSAGE_QUEUE_PRIV = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gsp/message_queue_priv.h";
    /// `_getMsgQueueParams`, `GspMsgQueuesInit`, `GspMsgQueueSendCommand`,
    /// `GspMsgQueueReceiveStatus`, `GspStatusQueueInit`.
    MESSAGE_QUEUE_CPU = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/message_queue_cpu.c";
    /// `RPC_TASK_RM_QUEUE_IDX`.
    MESSAGE_QUEUE_H = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gsp/message_queue.h";
    /// `rpc_message_header_v` (generated from `rpc-message-header.def`).
    RPC_MESSAGE_HEADER = OGKM_PINNED: "src/nvidia/generated/g_rpc-message-header.h";
    /// `rpc_generic_union` (whose alignment `rpc_message_header_v` inherits),
    /// `rpc_gsp_rm_alloc_v03_00`, `rpc_gsp_rm_control_v03_00`, `rpc_free_v03_00`,
    /// `rpc_run_cpu_sequencer_v17_00`, `rpc_os_error_log_v17_00`, `rpc_post_event_v17_00`, ...
    RPC_STRUCTURES = OGKM_PINNED: "src/nvidia/generated/g_rpc-structures.h";
    /// `NVOS00_PARAMETERS_v03_00`.
    G_SDK_STRUCTURES = OGKM_PINNED: "src/nvidia/generated/g_sdk-structures.h";
    /// `NV_VGPU_MSG_SIGNATURE_VALID`, `NV_VGPU_MSG_HEADER_VERSION_*`, `NV_VGPU_MSG_RESULT_*`,
    /// `MAX_GPC_COUNT`, `VIRTUAL_DISPLAY_GET_*_PARAMS`.
    RPC_HEADERS = OGKM_PINNED: "src/nvidia/kernel/inc/vgpu/rpc_headers.h";
    /// `NV_VGPU_MSG_FUNCTION_*` and `NV_VGPU_MSG_EVENT_*`.
    RPC_GLOBAL_ENUMS = OGKM_PINNED: "src/nvidia/kernel/inc/vgpu/rpc_global_enums.h";
    /// `rpcWriteCommonHeader`: how an RPC header is filled.
    RPC_COMMON = OGKM_PINNED: "src/nvidia/src/kernel/rmapi/rpc_common.c";
    /// `GSP_FW_HEAP_PARAM_*`: the GSP-RM heap sizing constants.
    GSP_FW_HEAP = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gsp/gsp_fw_heap.h";
    /// `kgspCreateRadix3`, `kgspGetFwHeapSize`, `_kgspCalculateFwHeapSize`, `kgspGetWprEndMargin`,
    /// `_kgspGenerateInitArgId`, `kgspSetupLibosInitArgs`, `kgspPopulateGspRmInitArgs`,
    /// `_kgspInitLibosLoggingStructures`, `kgspExecuteSequencerBuffer_IMPL`, `_kgspRpcRecvPoll`,
    /// `_kgspProcessRpcEvent`, `_kgspRpcSendMessage`.
    KERNEL_GSP_C = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/kernel_gsp.c";
    /// `kgspCalculateFbLayout_TU102`, `kgspExecuteSequencerCommand_TU102` (`CORE_RESUME`),
    /// `kgspSetCmdQueueHead_TU102`.
    KERNEL_GSP_TU102_C = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_tu102.c";
    /// `kgspCalculateFbLayout_GH100`.
    KERNEL_GSP_GH100_C = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/arch/hopper/kernel_gsp_gh100.c";
    /// The per-chip HAL choices of `KernelGsp` (heap parameters, layout function).
    KERNEL_GSP_NVOC_C = OGKM_PINNED: "src/nvidia/generated/g_kernel_gsp_nvoc.c";
    /// The HAL variants' bodies, `LIBOS_INIT_ARGUMENTS_SIZE`, the GSP image's section names.
    KERNEL_GSP_NVOC_H = OGKM_PINNED: "src/nvidia/generated/g_kernel_gsp_nvoc.h";
    /// `RM_PAGE_SIZE`.
    RM_PAGE_SIZE = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/mem_mgr/rm_page_size.h";
    /// `NV_OK` and the other `NV_STATUS` codes.
    NVSTATUSCODES = OGKM_PINNED: "src/common/sdk/nvidia/inc/nvstatuscodes.h";
    /// `NV_GSP_ERROR_*`: the error word GSP-RM posts in `NV_PGSP_MAILBOX(0)`.
    GSP_ERROR = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/gsp/gsp_error.h";
    /// `GSP_SEQ_BUF_OPCODE_*`, `GSP_SEQ_BUF_PAYLOAD_*`, `GSP_SEQ_BUF_REG_SAVE_SIZE`.
    RMGSPSEQ = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/rmgspseq.h";
    /// `RM_RISCV_UCODE_DESC`.
    RM_RISCV_UCODE = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/rmRiscvUcode.h";
    /// `kgspParseBooterUcode`: the booter's HS headers and patch metadata.
    KERNEL_GSP_BOOTER_C = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/kernel_gsp_booter.c";

    // -----------------------------------------------------------------------------------------
    // RPC payloads and RM objects (compiled by `tests/tests/gsp_rpc_layout.rs`).

    /// `GspStaticConfigInfo`, `GspSystemInfo`, `GSP_VF_INFO`, `GspSMInfo`.
    GSP_STATIC_CONFIG = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gsp/gsp_static_config.h";
    /// `PACKED_REGISTRY_TABLE`, `PACKED_REGISTRY_ENTRY`, `REGISTRY_TABLE_ENTRY_TYPE_*`.
    G_OS_NVOC = OGKM_PINNED: "src/nvidia/generated/g_os_nvoc.h";
    /// `BUSINFO`.
    G_CHIPSET_NVOC = OGKM_PINNED: "src/nvidia/generated/g_chipset_nvoc.h";
    /// `NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2` and the class list's size.
    CTRL0080GPU = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080gpu.h";
    /// `NV2080_CTRL_CMD_FB_GET_FB_REGION_INFO_PARAMS` and its region entry, the RAM types.
    CTRL2080FB = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080fb.h";
    /// `NV2080_CTRL_GPU_GET_GID_INFO_PARAMS`, the GPC/TPC/ZCULL info, `NV2080_GPU_MAX_*`,
    /// `NV2080_CTRL_CMD_GPU_GET_INFO_V2` and its indices.
    CTRL2080GPU = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gpu.h";
    /// `RM_SHA1_GID_SIZE`: the bytes of a binary GPU UUID.
    GPU_UUID = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gpu_uuid.h";
    /// `NV2080_CTRL_BIOS_GET_SKU_INFO_PARAMS`.
    CTRL2080BIOS = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080bios.h";
    /// `NV2080_CTRL_CMD_GR_CTXSW_PREEMPTION_BIND_BUFFERS_CONTEXT_POOL`.
    CTRL2080GR = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080gr.h";
    /// `NV0080_CTRL_GR_CAPS_TBL_SIZE`.
    CTRL0080GR = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080gr.h";
    /// The interrupt-table control, its parameters, `NV2080_INTR_CATEGORY`.
    CTRL2080INTERNAL = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl2080/ctrl2080internal.h";
    /// `RM_ENGINE_TYPE_*`.
    GPU_ENGINE_TYPE = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gpu_engine_type.h";
    /// `MC_ENGINE_IDX_*`.
    ENGINE_IDX = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/intr/engine_idx.h";
    /// `NVGPU_ENGINE_CAPS_MASK_*`.
    NVBITMASK = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/nvbitmask.h";
    /// `COMPUTE_BRANDING_TYPE`, `GPU_READ_PRI_ERROR_MASK`, `GPU_READ_PRI_ERROR_CODE`.
    G_GPU_NVOC = OGKM_PINNED: "src/nvidia/generated/g_gpu_nvoc.h";
    /// `RMAPI_RPC_FLAGS_*`.
    RMAPI_H = OGKM_PINNED: "src/nvidia/inc/kernel/rmapi/rmapi.h";
    /// `RPC_HISTORY_DEPTH`, `RpcHistoryEntry`.
    OBJRPC_H = OGKM_PINNED: "src/nvidia/kernel/inc/objrpc.h";
    /// `_issueRpcAndWait`, `_issueRpcLarge`, `rpcRmApiAlloc_GSP`, `rpcRmApiControl_GSP`,
    /// `rpcRmApiFree_GSP`, `rpcGspSetSystemInfo_v17_00`, `rpcSetRegistry_v17_00`,
    /// `rpcGetGspStaticInfo_v14_00`, `rpcUnloadingGuestDriver_v1F_07`.
    RPC_C = OGKM_PINNED: "src/nvidia/kernel/vgpu/nv/rpc.c";
    /// `regCopyEntriesToPackedBuffer`: how registry entries are packed.
    REGISTRY_C = OGKM_PINNED: "src/nvidia/arch/nvalloc/unix/src/registry.c";
    /// `timeoutSet`: a timeout of `GPU_TIMEOUT_DEFAULT` (0) means the default.
    GPU_TIMEOUT_C = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gpu_timeout.c";
    /// `GPU_TIMEOUT_DEFAULT`.
    GPU_TIMEOUT_H = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/gpu_timeout.h";
    /// `osGetTimeoutParams`: RM's default timeout (4 s for a graphics-mode GPU).
    UNIX_OS_C = OGKM_PINNED: "src/nvidia/arch/nvalloc/unix/src/os.c";
    /// `NV01_ROOT`, `NV01_NULL_OBJECT`, `NV0000_ALLOC_PARAMETERS`.
    CL0000 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/cl0000.h";
    /// `NV01_DEVICE_0`, `NV0080_ALLOC_PARAMETERS`.
    CL0080 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/cl0080.h";
    /// `NV20_SUBDEVICE_0`, `NV2080_ALLOC_PARAMETERS`.
    CL2080 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/cl2080.h";
    /// `NV_PROC_NAME_MAX_LENGTH`, `NV_MAX_SUBDEVICES`.
    NVLIMITS = OGKM_PINNED: "src/common/sdk/nvidia/inc/nvlimits.h";
    /// `RS_CLIENT_HANDLE_BASE`, `RS_CLIENT_HANDLE_MAX`.
    RESSERV = OGKM_PINNED: "src/nvidia/inc/libraries/resserv/resserv.h";
    /// `RS_UNIQUE_HANDLE_BASE`, `RS_UNIQUE_HANDLE_RANGE`.
    RS_CLIENT_H = OGKM_PINNED: "src/nvidia/inc/libraries/resserv/rs_client.h";
    /// `clientGenResourceHandle`, `clientSetHandleGenerator`.
    RS_CLIENT_C = OGKM_PINNED: "src/nvidia/src/libraries/resserv/src/rs_client.c";
    /// `rmapiutilAllocClientAndDeviceHandles`.
    RMAPI_UTILS_C = OGKM_PINNED: "src/nvidia/src/kernel/rmapi/rmapi_utils.c";
    /// `NV_VASPACE_ALLOCATION_PARAMETERS`, `NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS`, flags.
    NVOS = OGKM_PINNED: "src/common/sdk/nvidia/inc/nvos.h";
    /// `NV_CHANNEL_ALLOC_PARAMS`, `NV_MEMORY_DESC_PARAMS`.
    ALLOC_CHANNEL = OGKM_PINNED: "src/common/sdk/nvidia/inc/alloc/alloc_channel.h";
    /// `FERMI_VASPACE_A`.
    CL90F1 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/cl90f1.h";
    /// `KEPLER_CHANNEL_GROUP_A`.
    CLA06C = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/cla06c.h";
    /// `NVB0B5_ALLOCATION_PARAMETERS`.
    CLB0B5SW = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clb0b5sw.h";
    /// `NVC361_NOTIFY_CHANNEL_PENDING`, the usermode region.
    CLC361 = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/clc361.h";
    /// `NV0080_CTRL_CMD_DMA_SET_PAGE_DIRECTORY`.
    CTRL0080DMA = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrl0080/ctrl0080dma.h";
    /// `NVA06F_CTRL_CMD_GPFIFO_SCHEDULE`, `NVA06F_CTRL_CMD_BIND`.
    CTRLA06FGPFIFO = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrla06f/ctrla06fgpfifo.h";
    /// `NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN`.
    CTRLC36F = OGKM_PINNED: "src/common/sdk/nvidia/inc/ctrl/ctrlc36f.h";
    /// `NV2080_ENGINE_TYPE_*`.
    CL2080_NOTIFICATION = OGKM_PINNED: "src/common/sdk/nvidia/inc/class/cl2080_notification.h";
    /// `NvNotification`.
    NVGPUTYPES = OGKM_PINNED: "src/common/sdk/nvidia/inc/nvgputypes.h";
    /// `ROBUST_CHANNEL_*` error codes (Xids).
    NVERROR = OGKM_PINNED: "src/common/sdk/nvidia/inc/nverror.h";
    /// `krcErrorSetNotifier_IMPL`, `_krcErrorWriteNotifierCpuMemHelper`: what RM writes to an
    /// error notifier.
    KERNEL_RC_NOTIFICATION_C = OGKM_PINNED: "src/nvidia/src/kernel/gpu/rc/kernel_rc_notification.c";
    /// `ADDR_SYSMEM`, `ADDR_FBMEM` (`NV_ADDRESS_SPACE`).
    MEM_DESC = OGKM_PINNED: "src/nvidia/generated/g_mem_desc_nvoc.h";

    // -----------------------------------------------------------------------------------------
    // VBIOS formats, FWSEC and the FSP.

    /// `PCI_EXP_ROM_*`, `PCI_DATA_STRUCT_*`, `NV_PCI_DATA_EXT_*`: the PCI expansion ROM images.
    PCI_EXP_TABLE = OGKM_PINNED: "src/nvidia/inc/kernel/platform/pci_exp_table.h";
    /// The BIT tokens, the falcon ucode table and its descriptors, as RM reads them.
    KERNEL_GSP_FWSEC = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/kernel_gsp_fwsec.c";
    /// `NV_ROM_DIRECTORY_IDENTIFIER`; how RM finds the PCI ROM behind an IFR header and copies
    /// the VBIOS out of the PROM window.
    KERNEL_GSP_VBIOS_TU102 = OGKM_PINNED: "src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_vbios_tu102.c";
    /// The BIOSDATA layouts, `PCI_VENDOR_ID_NVIDIA`.
    ROM_NVSWITCH = OGKM_PINNED: "src/common/nvswitch/kernel/inc/rom_nvswitch.h";
    /// `FLCN_CSB_PRIV_PRI_ERROR_*`: the falcon-side PRI error values.
    FLCNRETVAL = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/flcnretval.h";
    /// `FSP_EMEM_CHANNEL_RM_SIZE`.
    FSP_EMEM_CHANNELS = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/fsp/fsp_emem_channels.h";
    /// `MCTP_HEADER_*`, `MCTP_MSG_HEADER_*`.
    FSP_MCTP_FORMAT = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/fsp/fsp_mctp_format.h";
    /// `NVDM_TYPE_*`.
    FSP_NVDM_FORMAT = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/fsp/fsp_nvdm_format.h";
    /// `FSP_OK`, `FSP_ERR_*`.
    KERN_FSP_RETVAL = OGKM_PINNED: "src/nvidia/inc/kernel/gpu/fsp/kern_fsp_retval.h";
    /// `kfspSendBootCommands_GH100`: the FRTS copies the chain-of-trust command asks for (RM
    /// declares `ESTIMATED_RESERVE_FB` there, as a constant local to the function).
    KERN_FSP_GH100 = OGKM_PINNED: "src/nvidia/src/kernel/gpu/fsp/arch/hopper/kern_fsp_gh100.c";
    /// `NVDM_PAYLOAD_COMMAND_RESPONSE`.
    NVDM_PAYLOAD_CMD_RESPONSE = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/fsp/nvdm_payload_cmd_response.h";
    /// `GSP_FMC_BOOT_PARAMS` and the structures in it, `GSP_DMA_TARGET`.
    GSPIFPUB = OGKM_PINNED: "src/nvidia/arch/nvalloc/common/inc/gsp/gspifpub.h";
    /// `NVDM_PAYLOAD_COT`.
    G_KERN_FSP_NVOC = OGKM_PINNED: "src/nvidia/generated/g_kern_fsp_nvoc.h";
}
