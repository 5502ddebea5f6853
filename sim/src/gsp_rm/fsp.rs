//! The FSP's chain of trust (Hopper): the chain-of-trust (COT) command RM sends over the FSP's EMEM
//! queue, and what the FSP and the GSP-FMC then do, as far as the CPU can observe it.
//!
//! Follows RM 535.261.03: `kfspSendBootCommands_GH100`, `kfspCreateMctpHeader_GH100`,
//! `kfspCreateNvdmHeader_GH100`, `kfspProcessCommandResponse_GH100`
//! (`fsp/arch/hopper/kern_fsp_gh100.c`), the queue protocol of `kfspSendPacket` /
//! `kfspReadMessage` (`fsp/kern_fsp.c`), `kgspSetupGspFmcArgs_GH100` and
//! `kgspBootstrapRiscvOSEarly_GH100` (`gsp/arch/hopper/kernel_gsp_gh100.c`). The layouts are the
//! driver's (`nvgpu::gsp::boot::fsp`: `NVDM_PAYLOAD_COT`, `GSP_FMC_BOOT_PARAMS`,
//! `NVDM_PAYLOAD_COMMAND_RESPONSE`, the MCTP and NVDM header fields); the FSP's own error codes
//! are `kern_fsp_retval.h`'s.
//!
//! # The queue (RM's channel: EMEM 0..1 KiB, queue 0)
//! The CPU writes a packet at EMEM 0, `NV_PFSP_QUEUE_TAIL(0)` = the offset of its last word, then
//! `NV_PFSP_QUEUE_HEAD(0)` = 0: that write makes the FSP take the packet (it sets HEAD = TAIL).
//! Packets are checked: whole words, at most 1 KiB, an MCTP transport header (SOM on the first,
//! SEQ counting modulo 4 after it, EOM on the last, SEID as `kfspNvdmToSeid_GH100`), and on the
//! first packet the message header (vendor-defined PCI 0x7e, vendor 0x10de, an NVDM type). A
//! complete message is answered by one packet at EMEM 0, `NV_PFSP_MSGQ_HEAD(0)` = 0 and
//! `NV_PFSP_MSGQ_TAIL(0)` = its last word: NVDM type `FSP_RESPONSE`, then
//! `NVDM_PAYLOAD_COMMAND_RESPONSE` {task id 0, the command's NVDM type, error code}.
//!
//! # The COT command
//! Refused with `FSP_ERR_IFS_ERR_INVALID_DATA` unless: exactly `sizeof(NVDM_PAYLOAD_COT)` bytes,
//! version 1, `size` 860; a GSP-FMC in system memory (`gspFmcSysmemOffset` readable); an FRTS
//! system-memory buffer of 1 MiB,
//! readable; the FRTS video-memory copy 1 MiB at an offset from the end of FB inside VRAM and at
//! least its size; `GSP_FMC_BOOT_PARAMS` readable with both targets system memory,
//! `gspRmDescSize` = `sizeof(GspFwWprMeta)`, `bIsGspRmBoot`, no WPR carve-out, LIBOS arguments
//! 4 KiB aligned. With GSP-RM already running it is `FSP_ERR_IFS_ERR_INVALID_STATE`; any other
//! NVDM type `FSP_ERR_IFS_ERR_NOT_SUPPORTED`.
//!
//! # Which GSP-FMC
//! The model runs no RISC-V code and checks no cryptography. A GSP-FMC in system memory that is
//! one of NVIDIA's ([`KNOWN_FMCS`]: its size and FNV-1a 64, numbers computed from the
//! 535.261.03 source) is accepted only with its own credentials: the COT's `hash384`,
//! `publicKey` and `signature` must be the ones that FMC ships with (by FNV-1a 64), else
//! `FSP_ERR_IFS_ERR_INVALID_DATA`. Any other image is taken as a stand-in and accepted, as
//! before the real FMC was available to tests; [`FspState::fmc`] tells which it was.
//!
//! # The GSP-FMC (after an accepted COT)
//! It reads `GspFwWprMeta` from `gspRmDescOffset` and checks it as `kgspCalculateFbLayout_GH100`
//! leaves it: the booter's header checks (magic, revision, `verified` 0, ...), sizes set (VGA
//! workspace, non-WPR heap, WPR heap, image, boot binary, signature readable), every offset still
//! 0 (placing the regions is the FMC's job), WPR2 down, and the GSP-RM image behind the radix3
//! table as booter_load checks it. Then it places the regions (the model's placement, top down
//! like `kgspCalculateFbLayout_TU102`: FRTS where the COT put it, boot binary 4 KiB aligned below
//! it, image 64 KiB aligned, heap, metadata and non-WPR heap 1 MiB aligned), raises WPR2 over
//! `[gspFwWprStart, gspFwWprEnd)`, and starts GSP-RM with the LIBOS arguments of
//! `GSP_FMC_BOOT_PARAMS` (not the GSP mailboxes, which RM does not write on Hopper). A failure
//! leaves the FMC's error in `NV_PGSP_FALCON_MAILBOX0` (RM's `_kgspLockdownReleasedOrFmcError`)
//! and GSP-RM off. The GSP's target mask and boot ROM lockdown are never held by the model
//! (`HWCFG2_RISCV_BR_PRIV_LOCKDOWN` reads unlocked).

use alloc::vec::Vec;

use nvgpu::chip::Chipset;
use nvgpu::gsp::fw::wpr::GspFwWprMeta;
use nvgpu::hw::engine::FSP_EMEM_CHANNEL_RM_SIZE;
use nvgpu::hw::fw::fsp::{
    GspDmaTarget, GspFmcBootParams, NvdmPayloadCommandResponse, NvdmPayloadCot, FRTS_SIZE,
    FSP_ERR_IFS_ERR_INVALID_DATA, FSP_ERR_IFS_ERR_INVALID_STATE, FSP_ERR_IFS_ERR_NOT_SUPPORTED, FSP_OK,
    MCTP_HEADER_EOM, MCTP_HEADER_SEID, MCTP_HEADER_SEQ, MCTP_HEADER_SIZE, MCTP_HEADER_SOM, MCTP_MSG_HEADER_NVDM_TYPE,
    MCTP_MSG_HEADER_TYPE, MCTP_MSG_HEADER_TYPE_VENDOR_PCI, MCTP_MSG_HEADER_VENDOR_ID, MCTP_MSG_HEADER_VENDOR_ID_NV,
    NVDM_PAYLOAD_COT_SIZE, NVDM_PAYLOAD_COT_VERSION, NVDM_TYPE_COT, NVDM_TYPE_FSP_RESPONSE, NVDM_TYPE_INFOROM,
};
use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, IntoBytes};

use crate::booter::{self, BooterContext, BooterError, PeerGsp};
use crate::memory::SystemMemory;

/// What the FSP refused, recorded as `GspRmError::Fsp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FspRefusal {
    pub what: &'static str,
    pub value: u64,
    /// The error code the FSP answered with (0 when it could not answer: a malformed packet).
    pub error_code: u32,
}

/// The FSP's state between packets.
#[derive(Clone, Debug, Default)]
pub struct FspState {
    /// The message assembled so far (NVDM type first) and the SEQ of the last packet.
    partial: Option<(Vec<u8>, u8, u8)>,
    /// Every complete message taken, NVDM type first (for tests: the FSP's reply overwrites
    /// RM's channel in EMEM).
    pub received: Vec<Vec<u8>>,
    /// The GSP-FMC of the last accepted COT.
    pub fmc: Option<FmcSeen>,
}

/// One of NVIDIA's GSP-FMCs, by the numbers the model's FSP checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FmcFingerprint {
    /// The arrays it comes from.
    pub source: &'static str,
    /// Bytes of the image (`ucode_image`).
    pub image_size: u32,
    /// FNV-1a 64 of the image, of its SHA-384 hash (`ucode_hash`), RSA-3K signature
    /// (`ucode_sig`) and public key (`ucode_pkey`).
    pub image_fnv64: u64,
    pub hash_fnv64: u64,
    pub signature_fnv64: u64,
    pub public_key_fnv64: u64,
}

/// NVIDIA's production-signed GSP-FMC for Hopper in RM 535.261.03:
/// `kgspBinArchiveGspRmFmcGfwProdSigned_GH100_ucode_{image,hash,sig,pkey}_data` in
/// `src/nvidia/generated/g_bindata_kgspGetBinArchiveGspRmFmcGfwProdSigned_GH100.c` (the archive
/// `kfspGetGspUcodeArchive` picks without confidential computing on a production part).
pub const KNOWN_FMCS: &[FmcFingerprint] = &[FmcFingerprint {
    source: "g_bindata_kgspGetBinArchiveGspRmFmcGfwProdSigned_GH100.c (535.261.03)",
    image_size: 165_448,
    image_fnv64: 0x49fb_f61c_5982_42a0,
    hash_fnv64: 0x20da_42cb_b862_04cc,
    signature_fnv64: 0x532c_a6ea_3f21_7e85,
    public_key_fnv64: 0xcfef_218a_ab3a_38a5,
}];

/// Which GSP-FMC an accepted COT named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FmcSeen {
    /// One of NVIDIA's, with its own credentials.
    Nvidia(&'static FmcFingerprint),
    /// An image the model does not know (a test's stand-in).
    StandIn,
}

/// The known FMC at `bus`, checked against the COT's credentials.
fn recognise_fmc(
    memory: Option<&(dyn SystemMemory + Send)>,
    bus: u64,
    cot: &NvdmPayloadCot,
) -> Result<FmcSeen, (&'static str, u64)> {
    let Some(memory) = memory else { return Ok(FmcSeen::StandIn) };
    for fp in KNOWN_FMCS {
        let mut image = alloc::vec![0u8; fp.image_size as usize];
        if !memory.read(bus, &mut image) || booter::fnv1a64(&image) != fp.image_fnv64 {
            continue;
        }
        for (what, bytes, expected) in [
            ("hash384 is not the GSP-FMC's SHA-384", cot.hash384.as_bytes(), fp.hash_fnv64),
            ("publicKey is not the GSP-FMC's key", cot.public_key.as_bytes(), fp.public_key_fnv64),
            ("signature is not the GSP-FMC's", cot.signature.as_bytes(), fp.signature_fnv64),
        ] {
            let found = booter::fnv1a64(bytes);
            if found != expected {
                return Err((what, found));
            }
        }
        return Ok(FmcSeen::Nvidia(fp));
    }
    Ok(FmcSeen::StandIn)
}

/// What a command packet led to.
#[derive(Clone, Debug, Default)]
pub struct FspOutcome {
    /// The reply packet to post in the message queue.
    pub reply: Option<Vec<u8>>,
    /// Refusals to record.
    pub refusals: Vec<FspRefusal>,
    /// An accepted COT: the GSP-FMC runs with these boot parameters.
    pub cot: Option<GspFmcBootParams>,
}

/// The model's own reading of a `hi:lo` field of a header word.
fn bits(word: u32, field: nvgpu::hw::UnitRange) -> u32 {
    let width = field.last - field.first + 1;
    (word >> field.first) & (u32::MAX >> (32 - width))
}

fn word(bytes: &[u8], at: usize) -> u32 {
    bytes.get(at..at + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The FSP's reply packet: SOM|EOM, then the message header (`FSP_RESPONSE`), then the response.
fn response_packet(command: u8, error_code: u32) -> Vec<u8> {
    let transport = (1u32 << MCTP_HEADER_SOM.first) | (1 << MCTP_HEADER_EOM.first);
    let header = MCTP_MSG_HEADER_TYPE_VENDOR_PCI
        | (MCTP_MSG_HEADER_VENDOR_ID_NV << MCTP_MSG_HEADER_VENDOR_ID.first)
        | (u32::from(NVDM_TYPE_FSP_RESPONSE) << MCTP_MSG_HEADER_NVDM_TYPE.first);
    let response = NvdmPayloadCommandResponse {
        task_id: U32::new(0),
        command_nvdm_type: U32::new(command.into()),
        error_code: U32::new(error_code),
    };
    let mut packet = Vec::new();
    packet.extend_from_slice(&transport.to_le_bytes());
    packet.extend_from_slice(&header.to_le_bytes());
    packet.extend_from_slice(response.as_bytes());
    packet.resize(packet.len().next_multiple_of(4), 0);
    packet
}

impl FspState {
    /// Takes one command packet; `gsp_rm_running` says whether a COT would come too late.
    pub fn packet(
        &mut self,
        packet: &[u8],
        memory: Option<&(dyn SystemMemory + Send)>,
        vram_bytes: u64,
        gsp_rm_running: bool,
        allow_stand_in_fmc: bool,
    ) -> FspOutcome {
        let mut outcome = FspOutcome::default();
        let refuse = |what, value: u64| FspRefusal { what, value, error_code: 0 };
        if packet.len() < 4 || packet.len() > FSP_EMEM_CHANNEL_RM_SIZE || !packet.len().is_multiple_of(4) {
            outcome.refusals.push(refuse("packet size not 4..=1024 whole words", packet.len() as u64));
            return outcome;
        }
        let transport = word(packet, 0);
        let som = bits(transport, MCTP_HEADER_SOM) == 1;
        let eom = bits(transport, MCTP_HEADER_EOM) == 1;
        let seq = bits(transport, MCTP_HEADER_SEQ) as u8;
        let seid = bits(transport, MCTP_HEADER_SEID) as u8;
        let (mut message, expected_seq, message_seid) = if som {
            if self.partial.take().is_some() {
                outcome.refusals.push(refuse("SOM while a message was incomplete (dropped)", 0));
            }
            let header = word(packet, 4);
            let vendor = bits(header, MCTP_MSG_HEADER_VENDOR_ID);
            if packet.len() < MCTP_HEADER_SIZE + 1
                || bits(header, MCTP_MSG_HEADER_TYPE) != MCTP_MSG_HEADER_TYPE_VENDOR_PCI
                || vendor != MCTP_MSG_HEADER_VENDOR_ID_NV
            {
                outcome.refusals.push(refuse("MCTP message header is not vendor-PCI NVIDIA", header.into()));
                return outcome;
            }
            (packet[MCTP_HEADER_SIZE..].to_vec(), seq, seid)
        } else {
            let Some((message, last_seq, message_seid)) = self.partial.take() else {
                outcome.refusals.push(refuse("continuation packet without SOM", transport.into()));
                return outcome;
            };
            ((message), (last_seq + 1) % 4, message_seid)
        };
        if !som {
            message.extend_from_slice(&packet[4..]);
        }
        if seq != expected_seq || seid != message_seid {
            outcome.refusals.push(refuse("MCTP SEQ or SEID out of sequence", transport.into()));
            return outcome;
        }
        let nvdm_type = message[0];
        // `kfspNvdmToSeid_GH100`: InfoROM messages travel on SEID 1, every other type on 0.
        let expected_seid = u8::from(nvdm_type == NVDM_TYPE_INFOROM);
        if message_seid != expected_seid {
            outcome.refusals.push(refuse("SEID is not the NVDM type's", seid.into()));
            return outcome;
        }
        if !eom {
            self.partial = Some((message, seq, message_seid));
            return outcome;
        }
        self.received.push(message.clone());
        let (error_code, refusal) = match nvdm_type {
            NVDM_TYPE_COT if gsp_rm_running => (FSP_ERR_IFS_ERR_INVALID_STATE, Some(("COT while GSP-RM runs", 0))),
            NVDM_TYPE_COT => match check_cot(&message[1..], memory, vram_bytes, allow_stand_in_fmc) {
                Ok((params, fmc)) => {
                    self.fmc = Some(fmc);
                    outcome.cot = Some(params);
                    (FSP_OK, None)
                }
                Err((what, value)) => (FSP_ERR_IFS_ERR_INVALID_DATA, Some((what, value))),
            },
            other => (FSP_ERR_IFS_ERR_NOT_SUPPORTED, Some(("NVDM type the model's FSP does not serve", other.into()))),
        };
        if let Some((what, value)) = refusal {
            outcome.refusals.push(FspRefusal { what, value, error_code });
        }
        outcome.reply = Some(response_packet(nvdm_type, error_code));
        outcome
    }
}

fn readable(memory: Option<&(dyn SystemMemory + Send)>, bus: u64, len: u64) -> bool {
    let mut probe = [0u8; 1];
    len != 0 && memory.is_some_and(|m| m.read(bus, &mut probe) && m.read(bus.saturating_add(len - 1), &mut probe))
}

fn check_cot(
    payload: &[u8],
    memory: Option<&(dyn SystemMemory + Send)>,
    vram_bytes: u64,
    allow_stand_in_fmc: bool,
) -> Result<(GspFmcBootParams, FmcSeen), (&'static str, u64)> {
    let cot = payload
        .get(..NVDM_PAYLOAD_COT_SIZE)
        .filter(|_| payload.len() == NVDM_PAYLOAD_COT_SIZE)
        .and_then(|b| NvdmPayloadCot::read_from_bytes(b).ok())
        .ok_or(("payload is not sizeof(NVDM_PAYLOAD_COT) (860)", payload.len() as u64))?;
    if cot.version.get() != NVDM_PAYLOAD_COT_VERSION {
        return Err(("NVDM_PAYLOAD_COT.version", cot.version.get().into()));
    }
    if usize::from(cot.size.get()) != NVDM_PAYLOAD_COT_SIZE {
        return Err(("NVDM_PAYLOAD_COT.size", cot.size.get().into()));
    }
    let fmc = cot.gsp_fmc_sysmem_offset.get();
    if fmc == u64::MAX || !readable(memory, fmc, 4096) {
        return Err(("gspFmcSysmemOffset: no readable GSP-FMC", fmc));
    }
    let fmc_seen = recognise_fmc(memory, fmc, &cot)?;
    if fmc_seen == FmcSeen::StandIn && !allow_stand_in_fmc {
        return Err((
            "gspFmcSysmemOffset: not one of NVIDIA's GSP-FMCs (a stand-in, which this model does not allow)",
            fmc,
        ));
    }
    let frts_sys = cot.frts_sysmem_offset.get();
    if cot.frts_sysmem_size.get() != FRTS_SIZE || !readable(memory, frts_sys, FRTS_SIZE.into()) {
        return Err(("frtsSysmemOffset/Size: not a readable 1 MiB buffer", frts_sys));
    }
    let frts_vid = cot.frts_vidmem_offset.get();
    let frts_vid_size = u64::from(cot.frts_vidmem_size.get());
    if frts_vid_size != u64::from(FRTS_SIZE) || frts_vid < frts_vid_size || frts_vid >= vram_bytes {
        return Err(("frtsVidmemOffset/Size: not a 1 MiB copy inside VRAM from its end", frts_vid));
    }
    let params_at = cot.gsp_boot_args_sysmem_offset.get();
    let mut raw = [0u8; core::mem::size_of::<GspFmcBootParams>()];
    if !memory.is_some_and(|m| m.read(params_at, &mut raw)) {
        return Err(("gspBootArgsSysmemOffset: GSP_FMC_BOOT_PARAMS unreadable", params_at));
    }
    let params = GspFmcBootParams::read_from_bytes(&raw).map_err(|_| ("GSP_FMC_BOOT_PARAMS", params_at))?;
    let sysmem =
        |target: u32| target == GspDmaTarget::CoherentSystem as u32 || target == GspDmaTarget::NoncoherentSystem as u32;
    let rm = params.boot_gsp_rm_params;
    if !sysmem(rm.target) {
        return Err(("bootGspRmParams.target is not system memory", rm.target.into()));
    }
    if rm.gsp_rm_desc_size as usize != core::mem::size_of::<GspFwWprMeta>() {
        return Err(("bootGspRmParams.gspRmDescSize is not sizeof(GspFwWprMeta)", rm.gsp_rm_desc_size.into()));
    }
    if rm.b_is_gsp_rm_boot != 1 {
        return Err(("bootGspRmParams.bIsGspRmBoot is not NV_TRUE", rm.b_is_gsp_rm_boot.into()));
    }
    if rm.wpr_carveout_offset != 0 || rm.wpr_carveout_size != 0 {
        return Err(("bootGspRmParams: a WPR carve-out (RM leaves it to the FMC)", rm.wpr_carveout_offset));
    }
    let libos = params.gsp_rm_params;
    if !sysmem(libos.target) {
        return Err(("gspRmParams.target is not system memory", libos.target.into()));
    }
    if libos.boot_args_offset == 0 || libos.boot_args_offset % 4096 != 0 {
        return Err(("gspRmParams.bootArgsOffset not 4 KiB aligned", libos.boot_args_offset));
    }
    Ok((params, fmc_seen))
}

/// The GSP-FMC's run after an accepted COT: the checked and placed metadata, or the error it
/// leaves in `NV_PGSP_FALCON_MAILBOX0`.
pub(crate) fn run_fmc(
    chipset: Chipset,
    params: &GspFmcBootParams,
    memory: Option<&(dyn SystemMemory + Send)>,
    vram_bytes: u64,
    wpr2: Option<(u64, u64)>,
    frts_offset_from_end: u64,
) -> Result<GspFwWprMeta, BooterError> {
    let bus = params.boot_gsp_rm_params.gsp_rm_desc_offset;
    let mut raw = [0u8; core::mem::size_of::<GspFwWprMeta>()];
    if !memory.is_some_and(|m| m.read(bus, &mut raw)) {
        return Err(BooterError::MetaUnreadable { bus });
    }
    let mut meta = GspFwWprMeta::read_from_bytes(&raw).map_err(|_| BooterError::MetaUnreadable { bus })?;
    booter::check_meta_header(&meta)?;
    let layout = |what, value| BooterError::Layout { what, value };
    for (what, value) in [
        ("vgaWorkspaceSize is 0", meta.vga_workspace_size),
        ("nonWprHeapSize is 0", meta.non_wpr_heap_size),
        ("gspFwHeapSize is 0", meta.gsp_fw_heap_size),
        ("sizeOfRadix3Elf is 0", meta.size_of_radix3_elf),
        ("sizeOfBootloader is 0", meta.size_of_bootloader),
    ] {
        if value == 0 {
            return Err(layout(what, 0));
        }
    }
    for (what, value) in [
        ("gspFwRsvdStart set (the FMC places regions)", meta.gsp_fw_rsvd_start),
        ("nonWprHeapOffset set (the FMC places regions)", meta.non_wpr_heap_offset),
        ("gspFwWprStart set (the FMC places regions)", meta.gsp_fw_wpr_start),
        ("gspFwHeapOffset set (the FMC places regions)", meta.gsp_fw_heap_offset),
        ("gspFwOffset set (the FMC places regions)", meta.gsp_fw_offset),
        ("bootBinOffset set (the FMC places regions)", meta.boot_bin_offset),
        ("frtsOffset set (the FMC places regions)", meta.frts_offset),
        ("gspFwWprEnd set (the FMC places regions)", meta.gsp_fw_wpr_end),
        ("vgaWorkspaceOffset set (the FMC places regions)", meta.vga_workspace_offset),
    ] {
        if value != 0 {
            return Err(layout(what, value));
        }
    }
    if wpr2.is_some() {
        return Err(BooterError::Wpr2NotFrts { frts_lo: 0, frts_hi: 0, found: wpr2 });
    }
    let ctx = BooterContext {
        chipset,
        mailboxes: [0; 2],
        memory,
        vram_bytes,
        wpr2: None,
        gsp: PeerGsp { in_reset: false, riscv_selected: true, riscv_running: false },
    };
    booter::check_radix3_image(&meta, &ctx)?;
    booter::check_images_readable(&meta, &ctx)?;

    // The model's placement, top down (see the module documentation).
    const MIB: u64 = 1 << 20;
    let sub = |a: u64, b: u64, what| a.checked_sub(b).ok_or(layout(what, b));
    meta.fb_size = vram_bytes;
    meta.vga_workspace_offset = sub(vram_bytes, meta.vga_workspace_size, "VGA workspace does not fit")?;
    meta.frts_size = u64::from(FRTS_SIZE);
    meta.frts_offset = sub(vram_bytes, frts_offset_from_end, "FRTS does not fit")?;
    meta.gsp_fw_wpr_end = meta.frts_offset + meta.frts_size;
    if meta.gsp_fw_wpr_end > meta.vga_workspace_offset {
        return Err(layout("FRTS overlaps the VGA workspace", meta.frts_offset));
    }
    meta.boot_bin_offset = sub(meta.frts_offset, meta.size_of_bootloader, "boot binary does not fit")? & !0xFFF;
    meta.gsp_fw_offset = sub(meta.boot_bin_offset, meta.size_of_radix3_elf, "image does not fit")? & !0xFFFF;
    meta.gsp_fw_heap_offset = sub(meta.gsp_fw_offset, meta.gsp_fw_heap_size, "heap does not fit")? & !(MIB - 1);
    meta.gsp_fw_wpr_start = sub(meta.gsp_fw_heap_offset, 256, "metadata does not fit")? & !(MIB - 1);
    meta.non_wpr_heap_offset =
        sub(meta.gsp_fw_wpr_start, meta.non_wpr_heap_size, "non-WPR heap does not fit")? & !(MIB - 1);
    meta.gsp_fw_rsvd_start = meta.non_wpr_heap_offset;
    Ok(meta)
}
