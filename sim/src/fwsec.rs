//! The model FWSEC: what the VBIOS's FWSEC ucode does when the GSP falcon runs it, as far as the
//! driver can observe it.
//!
//! Structures follow `src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_frts_tu102.c`
//! (535.261.03): `FALCON_APPLICATION_INTERFACE_HEADER_V1`/`_ENTRY_V1`,
//! `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3`, `FWSECLIC_READ_VBIOS_DESC`,
//! `FWSECLIC_FRTS_REGION_DESC`, `FWSECLIC_FRTS_CMD`; Nova (`drivers/gpu/nova-core/firmware/
//! fwsec.rs`) writes the same command. The effects follow what RM checks after FWSEC-FRTS
//! (`s_executeFwsec_TU102`): `NV_PBUS_VBIOS_SCRATCH(NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E)` carries
//! the FRTS error code in bits 31:16 (0 = none), `NV_PFB_PRI_MMU_WPR2_ADDR_HI` is non-zero and
//! `NV_PFB_PRI_MMU_WPR2_ADDR_LO` holds the FRTS offset in 4 KiB units.
//!
//! # What the model FWSEC does
//! Reading DMEM as the driver patched it:
//! 1. the application interface table at the header's `interface_offset`: version 1, header and
//!    entry sizes at least NVIDIA's, at least two entries, one of them the DMEM mapper
//!    (`FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER`) whose structure lies in DMEM and starts with "DMAP", version 3;
//! 2. the mapper's `init_cmd`:
//!    - `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS` (0x15): the command-in buffer (in DMEM, at least 44 bytes) holds
//!      `FWSECLIC_READ_VBIOS_DESC` {version 1, size 24, flags `FWSECLIC_READ_VBIOS_STRUCT_FLAGS`}
//!      then `FWSECLIC_FRTS_REGION_DESC` {version 1, size 20, offset in 4 KiB units (non-zero),
//!      size `FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K`, media type `FWSECLIC_FRTS_REGION_MEDIA_FB`};
//!      the region must lie inside VRAM and WPR2 must not be set up yet. Then WPR2 is
//!      [offset, offset + size - 1] in 4 KiB units, scratch 0x0E's FRTS error code is NONE, and
//!      the falcon halts with `MAILBOX0` = 0.
//!    - `FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB` (0x19): what RM checks after it (`s_executeFwsec_TU102`): scratch
//!      0x15's SB error code (bits 15:0) is NONE; halt with success. SB's work inside the GPU
//!      has no effect the published headers describe, so the model has none beyond that.
//!    - anything else: halt with [`HaltCode::FwsecUnsupportedCommand`].
//!
//! On an FRTS failure, scratch 0x0E's FRTS error code (bits 31:16) is the low 16 bits of the
//! halt code (0x0012 for a malformed command, 0x0013 out of range, 0x0014 WPR2 already set,
//! 0x0010 interface unusable) and `MAILBOX0` is the halt code.

use alloc::vec::Vec;
use core::mem::size_of;

use nvgpu::hw::bus::{
    NV_VBIOS_FWSECLIC, NV_VBIOS_FWSECLIC_FRTS_ERR_CODE_NONE, NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E,
    NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15,
};
use nvgpu::hw::fw::{
    FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB,
    FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIGNATURE, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIZE,
    FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_VERSION, FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER,
    FALCON_APPLICATION_INTERFACE_ENTRY_V1_SIZE, FALCON_APPLICATION_INTERFACE_HEADER_V1_SIZE,
    FALCON_APPLICATION_INTERFACE_HEADER_V1_VERSION, FWSECLIC_FRTS_REGION_DESC_SIZE, FWSECLIC_FRTS_REGION_DESC_VERSION,
    FWSECLIC_FRTS_REGION_MEDIA_FB, FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K, FWSECLIC_READ_VBIOS_DESC_SIZE,
    FWSECLIC_READ_VBIOS_DESC_VERSION, FWSECLIC_READ_VBIOS_STRUCT_FLAGS,
};
use zerocopy::{FromBytes, IntoBytes};

use crate::ucode::HaltCode;

// The structures, their sizes and the values in them are the firmware ABI's, declared once in
// `nvgpu::hw::fw`; this model reads them and checks the values the driver wrote.
pub use nvgpu::hw::fw::{
    AppInterfaceEntryV1, AppInterfaceHeaderV1, DmemMapperV3, FwseclicFrtsCmd, FwseclicFrtsRegionDesc,
    FwseclicReadVbiosDesc,
};

/// Bytes of the FRTS command FWSEC reads: the two descriptors (RM's C struct adds 4 bytes of
/// tail padding, which FWSEC does not read).
pub const FRTS_COMMAND_BYTES: usize = nvgpu::hw::fw::FWSECLIC_FRTS_CMD_FIELDS_SIZE;

/// The FRTS command's bytes for a 1 MiB region at byte offset `frts_offset` of VRAM, as RM's
/// `s_executeFwsec_TU102` fills them, for tests that stand in for the driver. Built here from the
/// header-checked constants, field by field, not with the driver's encoder, so that a mistake in
/// the driver's command is not repeated in what it is compared with.
pub fn frts_command_bytes(frts_offset: u64) -> [u8; FRTS_COMMAND_BYTES] {
    let cmd = FwseclicFrtsCmd {
        read_vbios_desc: FwseclicReadVbiosDesc {
            version: FWSECLIC_READ_VBIOS_DESC_VERSION,
            size: FWSECLIC_READ_VBIOS_DESC_SIZE,
            gfw_image_offset: 0,
            gfw_image_size: 0,
            flags: FWSECLIC_READ_VBIOS_STRUCT_FLAGS,
        },
        frts_region_desc: FwseclicFrtsRegionDesc {
            version: FWSECLIC_FRTS_REGION_DESC_VERSION,
            size: FWSECLIC_FRTS_REGION_DESC_SIZE,
            frts_region_offset_4k: (frts_offset >> 12) as u32,
            frts_region_size: FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K,
            frts_region_media_type: FWSECLIC_FRTS_REGION_MEDIA_FB,
        },
        _padding: 0,
    };
    let mut out = [0u8; FRTS_COMMAND_BYTES];
    out.copy_from_slice(&cmd.as_bytes()[..FRTS_COMMAND_BYTES]);
    out
}

/// What FWSEC changed outside its falcon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FwsecEffect {
    /// `NV_PFB_PRI_MMU_WPR2_ADDR_LO/HI` `VAL` fields (4 KiB units; `hi` is the last unit).
    SetWpr2 { lo_4k: u32, hi_4k: u32 },
    /// `NV_PBUS_SW_SCRATCH(index)` = `value`.
    SetScratch { index: u32, value: u32 },
}

/// What FWSEC needs to know about the GPU it runs on.
#[derive(Clone, Copy, Debug)]
pub struct FwsecContext {
    pub vram_bytes: u64,
    /// Whether `NV_PFB_PRI_MMU_WPR2_ADDR_HI` is already non-zero.
    pub wpr2_set: bool,
}

/// How a run ended: the halt code for `MAILBOX0` and the effects to apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FwsecOutcome {
    pub halt: HaltCode,
    pub effects: Vec<FwsecEffect>,
}

fn frts_failed(code: HaltCode) -> FwsecOutcome {
    let value = NV_VBIOS_FWSECLIC::default().with(NV_VBIOS_FWSECLIC::FRTS_ERR_CODE, code.value() as u16).raw();
    FwsecOutcome {
        halt: code,
        effects: alloc::vec![FwsecEffect::SetScratch { index: NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E, value }],
    }
}

fn read_at<T: FromBytes>(dmem: &[u8], offset: u32) -> Option<T> {
    let start = usize::try_from(offset).ok()?;
    let bytes = dmem.get(start..start.checked_add(size_of::<T>())?)?;
    T::read_from_bytes(bytes).ok()
}

/// The DMEM mapper the interface table at `interface_offset` points at, and its DMEM offset.
pub fn find_dmem_mapper(dmem: &[u8], interface_offset: u32) -> Option<(u32, DmemMapperV3)> {
    let header: AppInterfaceHeaderV1 = read_at(dmem, interface_offset)?;
    if header.version != FALCON_APPLICATION_INTERFACE_HEADER_V1_VERSION
        || header.header_size < FALCON_APPLICATION_INTERFACE_HEADER_V1_SIZE
        || header.entry_size < FALCON_APPLICATION_INTERFACE_ENTRY_V1_SIZE
        || header.entry_count < 2
    {
        return None;
    }
    let first = interface_offset.checked_add(u32::from(header.header_size))?;
    (0..u32::from(header.entry_count)).find_map(|index| {
        let at = first.checked_add(index * u32::from(header.entry_size))?;
        let entry: AppInterfaceEntryV1 = read_at(dmem, at)?;
        if entry.id.get() != FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER {
            return None;
        }
        let mapper: DmemMapperV3 = read_at(dmem, entry.dmem_offset.get())?;
        let valid = mapper.signature.get() == FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIGNATURE
            && mapper.version.get() == FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_VERSION
            && mapper.size.get() >= FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_SIZE;
        valid.then_some((entry.dmem_offset.get(), mapper))
    })
}

/// Runs the model FWSEC over `dmem` (as loaded and patched by the driver).
pub fn run(dmem: &[u8], interface_offset: u32, context: &FwsecContext) -> FwsecOutcome {
    let Some((_, mapper)) = find_dmem_mapper(dmem, interface_offset) else {
        return frts_failed(HaltCode::FwsecBadInterface);
    };
    match mapper.init_cmd.get() {
        FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS => run_frts(dmem, &mapper, context),
        FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB => FwsecOutcome {
            halt: HaltCode::Success,
            effects: alloc::vec![FwsecEffect::SetScratch {
                index: NV_VBIOS_FWSECLIC_SCRATCH_INDEX_15,
                // NV_VBIOS_FWSECLIC_SB_ERR_CODE_NONE in bits 15:0.
                value: 0,
            }],
        },
        _ => FwsecOutcome { halt: HaltCode::FwsecUnsupportedCommand, effects: Vec::new() },
    }
}

fn run_frts(dmem: &[u8], mapper: &DmemMapperV3, context: &FwsecContext) -> FwsecOutcome {
    if (mapper.cmd_in_buffer_size.get() as usize) < FRTS_COMMAND_BYTES {
        return frts_failed(HaltCode::FwsecBadFrtsCommand);
    }
    // The two descriptors back to back, read one by one: FWSEC reads no padding after them.
    let at = mapper.cmd_in_buffer_offset.get();
    let (Some(read_vbios), Some(region)) = (
        read_at::<FwseclicReadVbiosDesc>(dmem, at),
        at.checked_add(FWSECLIC_READ_VBIOS_DESC_SIZE).and_then(|at| read_at::<FwseclicFrtsRegionDesc>(dmem, at)),
    ) else {
        return frts_failed(HaltCode::FwsecBadFrtsCommand);
    };
    let well_formed = read_vbios.version == FWSECLIC_READ_VBIOS_DESC_VERSION
        && read_vbios.size == FWSECLIC_READ_VBIOS_DESC_SIZE
        && read_vbios.flags == FWSECLIC_READ_VBIOS_STRUCT_FLAGS
        && region.version == FWSECLIC_FRTS_REGION_DESC_VERSION
        && region.size == FWSECLIC_FRTS_REGION_DESC_SIZE
        && region.frts_region_size == FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K
        && region.frts_region_media_type == FWSECLIC_FRTS_REGION_MEDIA_FB;
    if !well_formed {
        return frts_failed(HaltCode::FwsecBadFrtsCommand);
    }
    let lo_4k = region.frts_region_offset_4k;
    let size_4k = region.frts_region_size;
    let end_bytes = (u64::from(lo_4k) + u64::from(size_4k)) << 12;
    if lo_4k == 0 || end_bytes > context.vram_bytes {
        return frts_failed(HaltCode::FwsecFrtsOutOfRange);
    }
    if context.wpr2_set {
        return frts_failed(HaltCode::FwsecWpr2AlreadySet);
    }
    let none =
        NV_VBIOS_FWSECLIC::default().with(NV_VBIOS_FWSECLIC::FRTS_ERR_CODE, NV_VBIOS_FWSECLIC_FRTS_ERR_CODE_NONE);
    FwsecOutcome {
        halt: HaltCode::Success,
        effects: alloc::vec![
            FwsecEffect::SetWpr2 { lo_4k, hi_4k: lo_4k + size_4k - 1 },
            FwsecEffect::SetScratch { index: NV_VBIOS_FWSECLIC_SCRATCH_INDEX_0E, value: none.raw() },
        ],
    }
}
