//! FWSEC-FRTS from a model VBIOS, run on the model's GSP by DMA the way RM does on GA10x/Ada:
//! the image as the falcon DMA sees it (IMEM, then DMEM, in 256-byte blocks), the FRTS command
//! patched into DMEM as the model reads RM's structure (`sim::fwsec::frts_command_bytes`), the
//! signature for this chip's fuses patched in, then a heavy-secure start through the boot ROM.
//!
//! The falcon-level and boot-level tests share it, so both exercise one sequence.

use nvgpu::falcon::{patch_signature, BromParams, DmaTarget, Falcon, Gsp, HsSignatureLocation, Mailboxes};
use nvgpu::fwsec::{Fwsec, FwsecDescriptor, FwsecKind};
use nvgpu::hal;
use nvgpu::hw::boot::NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION;
use nvgpu::hw::fw::FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS;
use nvgpu::hw::RegisterIo;
use nvgpu::platform::DmaAllocator;
use nvgpu::vbios::Vbios;
use sim::{DmaArena, ModelGpu};

use crate::model_boot::ModelClock;

/// The fuse version of GSP ucode `ucode_id` as RM reads it: the highest set bit of the fuse's
/// 16-bit field, plus one.
pub fn gsp_fuse_version(model: &ModelGpu, ucode_id: u8) -> u32 {
    let fuse = model.read32(NV_FUSE_OPT_FPF_GSP_UCODE1_VERSION::OFFSET + 4 * (u32::from(ucode_id) - 1)) & 0xffff;
    32 - fuse.leading_zeros()
}

/// Runs the production FWSEC of `model`'s VBIOS with the FRTS command for `frts_offset` and the
/// signature `pick_signature` chooses for the fuse version; returns MAILBOX0. `arena` must be
/// the model's system memory. Panics (this is a test helper) where the model VBIOS lacks a v3
/// FWSEC or an upload step fails.
pub fn run_on_gsp(
    model: &ModelGpu,
    arena: &DmaArena,
    frts_offset: u64,
    timeout_ms: u64,
    pick_signature: impl Fn(&Fwsec<'_>, u32) -> Vec<u8>,
) -> u32 {
    let vbios = Vbios::from_prom(model).expect("model VBIOS parses");
    let fwsec = vbios.fwsec(FwsecKind::Prod).expect("model VBIOS has FWSEC");
    let FwsecDescriptor::V3(desc) = fwsec.descriptor else { panic!("GA10x/Ada FWSEC has a v3 descriptor") };

    let mut image = fwsec.imem().to_vec();
    assert_eq!(image.len() % 256, 0, "FWSEC IMEM is whole 256-byte blocks");
    image.extend_from_slice(fwsec.dmem());
    image.resize(image.len().div_ceil(256) * 256, 0);

    // DMEM patches: the FRTS command, and the signature for this chip's fuses.
    let dmem_at = |offset: u32| desc.imem_load_size as usize + offset as usize;
    let mapper = &fwsec.dmem_mapper;
    let init_cmd = dmem_at(mapper.init_cmd_dmem_offset());
    image[init_cmd..init_cmd + 4].copy_from_slice(&FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS.to_le_bytes());
    let cmd = sim::fwsec::frts_command_bytes(frts_offset);
    let cmd_at = dmem_at(mapper.cmd_in_buffer_offset);
    image[cmd_at..cmd_at + cmd.len()].copy_from_slice(&cmd);
    let location = HsSignatureLocation::from_fwsec_v3(&desc).expect("v3 descriptor has a signature location");
    let signature = pick_signature(&fwsec, gsp_fuse_version(model, desc.ucode_id));
    patch_signature(&mut image, location.patch_loc, &signature).expect("signature patch fits");

    let mut buffer = arena.alloc(image.len()).expect("arena has room for FWSEC");
    buffer.write(0, &image).expect("FWSEC image fits its buffer");

    let hal = hal::for_chipset(model.chipset());
    let gsp: Falcon<&ModelGpu, ModelClock, Gsp> =
        Falcon::new(model, ModelClock::default(), hal).expect("the HAL lists GSP");
    gsp.reset().expect("GSP resets");
    gsp.load_dma(&buffer, DmaTarget::CoherentSysmem, &nvgpu::fwsec::frts::v3_dma_segments(&desc))
        .expect("FWSEC DMA upload");
    gsp.program_brom(&BromParams::from_fwsec_v3(&desc)).expect("boot ROM parameters");
    let out = gsp.execute(desc.imem_virt_base, Mailboxes::default(), timeout_ms).expect("FWSEC runs to a halt");
    arena.free(buffer);
    out.mailbox0
}
