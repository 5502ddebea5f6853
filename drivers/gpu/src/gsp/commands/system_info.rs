//! `GSP_SET_SYSTEM_INFO`: the GPU's placement and the platform, sent before GSP-RM initialises.

use super::*;

/// `BUSINFO` (`g_chipset_nvoc.h`): PCI identity of a bridge or chipset. 10 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct BusInfo {
    /// `deviceID`.
    pub device_id: u16,
    /// `vendorID`.
    pub vendor_id: u16,
    /// `subdeviceID`.
    pub subdevice_id: u16,
    /// `subvendorID`.
    pub subvendor_id: u16,
    /// `revisionID`.
    pub revision_id: u8,
    /// Trailing padding of the C struct.
    pub _padding: u8,
}

/// `GSP_VF_INFO` (`gsp_static_config.h`): SR-IOV virtual functions. 40 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspVfInfo {
    /// `totalVFs`.
    pub total_vfs: u32,
    /// `firstVFOffset`.
    pub first_vf_offset: u32,
    /// `FirstVFBar0Address`.
    pub first_vf_bar0_address: u64,
    /// `FirstVFBar1Address`.
    pub first_vf_bar1_address: u64,
    /// `FirstVFBar2Address`.
    pub first_vf_bar2_address: u64,
    /// `b64bitBar0`.
    pub b_64bit_bar0: u8,
    /// `b64bitBar1`.
    pub b_64bit_bar1: u8,
    /// `b64bitBar2`.
    pub b_64bit_bar2: u8,
    /// Trailing padding.
    pub _padding: [u8; 5],
}

/// Bytes of `ACPI_METHOD_DATA` (`gpu/gpu_acpi_data.h`), which this driver sends zeroed (no
/// ACPI method results: every `bValid` false).
pub const ACPI_METHOD_DATA_SIZE: usize = 484;

/// `GspSystemInfo` (`gsp_static_config.h`): what the CPU tells GSP-RM about the system before
/// it boots; the parameters of `GSP_SET_SYSTEM_INFO` (RM writes it over
/// `rpc_gsp_set_system_info_v17_00.data`, `rpcGspSetSystemInfo_v17_00`). 672 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct GspSystemInfo {
    /// `gpuPhysAddr`: bus address of BAR0.
    pub gpu_phys_addr: u64,
    /// `gpuPhysFbAddr`: bus address of BAR1.
    pub gpu_phys_fb_addr: u64,
    /// `gpuPhysInstAddr`: bus address of BAR2 (BAR3 on 64-bit BAR layouts).
    pub gpu_phys_inst_addr: u64,
    /// `nvDomainBusDeviceFunc`: PCI domain, bus, device and function.
    pub nv_domain_bus_device_func: u64,
    /// `simAccessBufPhysAddr`: 0 on silicon.
    pub sim_access_buf_phys_addr: u64,
    /// `pcieAtomicsOpMask`.
    pub pcie_atomics_op_mask: u64,
    /// `consoleMemSize`: framebuffer reserved for the console.
    pub console_mem_size: u64,
    /// `maxUserVa`.
    pub max_user_va: u64,
    /// `pciConfigMirrorBase`: BAR0 offset of the PCI config space mirror.
    pub pci_config_mirror_base: u32,
    /// `pciConfigMirrorSize`.
    pub pci_config_mirror_size: u32,
    /// `oorArch`.
    pub oor_arch: u8,
    /// Padding before `clPdbProperties`.
    pub _padding0: [u8; 7],
    /// `clPdbProperties`: chipset properties (`clSyncWithGsp`).
    pub cl_pdb_properties: u64,
    /// `Chipset`: RM's chipset id.
    pub chipset: u32,
    /// `bGpuBehindBridge`.
    pub b_gpu_behind_bridge: u8,
    /// `bMnocAvailable`.
    pub b_mnoc_available: u8,
    /// `bUpstreamL0sUnsupported`.
    pub b_upstream_l0s_unsupported: u8,
    /// `bUpstreamL1Unsupported`.
    pub b_upstream_l1_unsupported: u8,
    /// `bUpstreamL1PorSupported`.
    pub b_upstream_l1_por_supported: u8,
    /// `bUpstreamL1PorMobileOnly`.
    pub b_upstream_l1_por_mobile_only: u8,
    /// `upstreamAddressValid`.
    pub upstream_address_valid: u8,
    /// Padding before `FHBBusInfo`.
    pub _padding1: u8,
    /// `FHBBusInfo`: the host bridge.
    pub fhb_bus_info: BusInfo,
    /// `chipsetIDInfo`.
    pub chipset_id_info: BusInfo,
    /// `acpiMethodData` (`ACPI_METHOD_DATA`), opaque here.
    pub acpi_method_data: [u8; ACPI_METHOD_DATA_SIZE],
    /// `hypervisorType`.
    pub hypervisor_type: u32,
    /// `virtualConfigBits`.
    pub virtual_config_bits: u16,
    /// `bIsPassthru`.
    pub b_is_passthru: u8,
    /// Padding before `sysTimerOffsetNs`.
    pub _padding2: [u8; 5],
    /// `sysTimerOffsetNs`.
    pub sys_timer_offset_ns: u64,
    /// `gspVFInfo`.
    pub gsp_vf_info: GspVfInfo,
    /// `bTdrEventSupported`.
    pub b_tdr_event_supported: u8,
    /// Trailing padding.
    pub _padding3: [u8; 7],
}

impl GspSystemInfo {
    /// All zero: no chipset data, no ACPI data, no SR-IOV; the caller fills in the BARs, the
    /// PCI location and the config mirror.
    pub fn zeroed() -> Self {
        Self::new_zeroed()
    }
}

/// `GSP_SET_SYSTEM_INFO`: the system information, queued before GSP-RM boots and not answered
/// (`rpcGspSetSystemInfo_v17_00` issues it with `_issueRpcAsync`; use [`GspRpc::post`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GspSetSystemInfo(pub GspSystemInfo);

impl Rpc for GspSetSystemInfo {
    const FUNCTION: RpcFunction = RpcFunction::GspSetSystemInfo;
    type Reply = ();
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.0.as_bytes());
    }
    fn decode_reply(_: &[u8]) -> Result<(), RpcError> {
        Ok(())
    }
}
