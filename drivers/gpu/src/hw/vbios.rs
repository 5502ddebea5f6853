//! Facts of the VBIOS formats `crate::vbios` parses (and the GPU model's VBIOS builder writes):
//! the PCI expansion ROM images (`pci_exp_table.h`), the BIT and the falcon ucode table with its
//! descriptors (`kernel_gsp_fwsec.c`; the descriptors are `crate::fwsec`'s), the vendor id (`rom_nvswitch.h`).
//!
//! The constants are declared once, in `crate::vbios` next to the parser; this table registers
//! each with the file that defines it, for `hw::FACT_TABLES` and the header conformance test.
//! The format constants no NVIDIA file defines (the EFI image header's, sizes NVIDIA gives only
//! as a format string) say so where they are declared.

use super::headers;
use crate::facts_of;

facts_of! {
    /// Facts of this module.
    pub const FACTS;

    crate::vbios {
        PCI_EXP_ROM_SIGNATURE,
        PCI_EXP_ROM_SIGNATURE_NV,
        PCI_EXP_ROM_SIGNATURE_NV2,
        OFFSETOF_PCI_EXP_ROM_PCI_DATA_STRUCT_PTR,
        PCI_DATA_STRUCT_SIGNATURE,
        PCI_DATA_STRUCT_SIGNATURE_NV,
        PCI_DATA_STRUCT_SIGNATURE_NV2,
        PCI_LAST_IMAGE,
        PCI_ROM_IMAGE_BLOCK_SIZE,
        NV_PCI_DATA_EXT_SIG,
        NV_PCI_DATA_EXT_REV_10,
        NV_PCI_DATA_EXT_REV_11,
        OFFSETOF_PCI_DATA_EXT_STRUCT_LAST_IMAGE,
    } in headers::PCI_EXP_TABLE;

    crate::vbios {
        BIT_HEADER_ID,
        BIT_HEADER_SIGNATURE,
        BIT_TOKEN_BIOSDATA,
        BIT_DATA_BIOSDATA_BINVER_SIZE_5,
        BIT_TOKEN_FALCON_DATA,
        BIT_DATA_FALCON_DATA_V2_SIZE_4,
        FALCON_UCODE_TABLE_HDR_V1_VERSION,
        FALCON_UCODE_TABLE_HDR_V1_SIZE_6,
        FALCON_UCODE_TABLE_ENTRY_V1_SIZE_6,
        FALCON_UCODE_ENTRY_APPID_FIRMWARE_SEC_LIC,
        FALCON_UCODE_ENTRY_APPID_FWSEC_DBG,
        FALCON_UCODE_ENTRY_APPID_FWSEC_PROD,
    } in headers::KERNEL_GSP_FWSEC;

    crate::fwsec {
        NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_FLAGS_VERSION_AVAILABLE,
        NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION: Bits,
        NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_SIZE: Bits,
        NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V2,
        NV_BIT_FALCON_UCODE_DESC_HEADER_VDESC_VERSION_V3,
        FALCON_UCODE_DESC_V2_SIZE_60,
        FALCON_UCODE_DESC_V3_SIZE_44,
    } in headers::KERNEL_GSP_FWSEC;

    crate::vbios { PCI_VENDOR_ID_NVIDIA } in headers::ROM_NVSWITCH;
}
