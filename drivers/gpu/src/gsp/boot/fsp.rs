//! Hopper's chain of trust: the driver asks the FSP, over an MCTP/NVDM message in the FSP's
//! EMEM, to verify and start the GSP-FMC, which then boots GSP-RM from the WPR metadata.
//!
//! Follows RM 535.261.03: `kfspSendBootCommands_GH100`, `kfspSetupGspImages`, the packet
//! helpers `kfspCreateMctpHeader_GH100`, `kfspCreateNvdmHeader_GH100`, `kfspGetPacketInfo_GH100`,
//! `kfspValidateMctpPayloadHeader_GH100`, `kfspProcessCommandResponse_GH100`
//! (`fsp/arch/hopper/kern_fsp_gh100.c`); the queue protocol of `kfspSendAndReadMessage`,
//! `kfspSendPacket`, `kfspReadMessage`, `kfspPollForQueueEmpty`, `kfspPollForResponse`
//! (`fsp/kern_fsp.c`); the GSP side of `kgspSetupGspFmcArgs_GH100` and
//! `kgspBootstrapRiscvOSEarly_GH100` (`gsp/arch/hopper/kernel_gsp_gh100.c`). The message ABI
//! (MCTP and NVDM headers, `NVDM_PAYLOAD_COT`, the command response, `GSP_FMC_BOOT_PARAMS`, the
//! FSP's return codes) is declared in `crate::hw::fw::fsp`.
//!
//! The protocol, as RM speaks it on RM's channel (EMEM port 0, 1 KiB):
//! 1. wait until the command queue and the message queue are both empty (HEAD == TAIL);
//! 2. write a packet at EMEM 0: an MCTP transport header (SOM, EOM, SEID, SEQ), then in the
//!    first packet the MCTP message header (type 0x7e "vendor PCI", vendor 0x10de, NVDM type),
//!    then payload; pad to whole words;
//! 3. set the command queue TAIL to the packet's last word, then HEAD to 0 (HEAD interrupts the
//!    FSP); the FSP sets HEAD = TAIL when it took the packet;
//! 4. the reply comes the same way in the message queue: HEAD..=TAIL in EMEM; the driver reads
//!    it and sets TAIL = HEAD. Its NVDM type is `FSP_RESPONSE`, its payload
//!    `NVDM_PAYLOAD_COMMAND_RESPONSE` whose `errorCode` is `FSP_OK` on success.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use core::mem::size_of;

use zerocopy::byteorder::little_endian::{U16, U32, U64};
use zerocopy::FromBytes;

use crate::falcon::{Falcon, FalconError, Fsp};
use crate::hal::Hal;
use crate::hw::engine::{
    FSP_EMEM_CHANNEL_RM_SIZE, NV_PFSP_MSGQ_HEAD, NV_PFSP_MSGQ_TAIL, NV_PFSP_QUEUE_HEAD, NV_PFSP_QUEUE_TAIL,
};
use crate::hw::fw::fsp::{
    GspAcrBootGspRmParams, GspDmaTarget, GspFmcBootParams, GspRmParams, NvdmPayloadCommandResponse, NvdmPayloadCot,
    FRTS_SIZE, FRTS_VIDMEM_OFFSET_FROM_END, FSP_EMEM_CHANNEL_RM, FSP_OK, MCTP_HEADER_EOM, MCTP_HEADER_SEID,
    MCTP_HEADER_SEQ, MCTP_HEADER_SIZE, MCTP_HEADER_SOM, MCTP_MSG_HEADER_NVDM_TYPE, MCTP_MSG_HEADER_TYPE,
    MCTP_MSG_HEADER_TYPE_VENDOR_PCI, MCTP_MSG_HEADER_VENDOR_ID, MCTP_MSG_HEADER_VENDOR_ID_NV, NVDM_PAYLOAD_COT_SIZE,
    NVDM_PAYLOAD_COT_VERSION, NVDM_TYPE_FSP_RESPONSE, NVDM_TYPE_INFOROM, NVDM_TYPE_SMBPBI,
};
use crate::hw::therm::{FspBootStatus, NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE};
use crate::hw::RegisterIo;
use crate::platform::{wait_for, Clock, Timeout};

/// How long the FSP may take to boot: 4 s (`kfspWaitForSecureBoot_GH100`, "to match MODS").
pub const FSP_BOOT_TIMEOUT_MS: u64 = 4_000;
/// How long each queue wait may take: `GPU_TIMEOUT_DEFAULT` (4 s).
pub const FSP_QUEUE_TIMEOUT_MS: u64 = 4_000;
/// How long the GSP-FMC may take to release the GSP's target mask and lockdown.
pub const FMC_LOCKDOWN_TIMEOUT_MS: u64 = 4_000;

impl GspFmcBootParams {
    /// The parameters `kgspSetupGspFmcArgs_GH100` writes: the WPR metadata in cached (coherent)
    /// system memory, the LIBOS arguments in uncached (non-coherent) system memory, as RM
    /// allocates them.
    pub fn new(wpr_meta: u64, libos_args: u64) -> Self {
        Self {
            init_params_regkeys: 0,
            _padding: 0,
            boot_gsp_rm_params: GspAcrBootGspRmParams {
                target: GspDmaTarget::CoherentSystem as u32,
                gsp_rm_desc_size: size_of::<crate::gsp::fw::wpr::GspFwWprMeta>() as u32,
                gsp_rm_desc_offset: wpr_meta,
                wpr_carveout_offset: 0,
                wpr_carveout_size: 0,
                b_is_gsp_rm_boot: 1,
                _padding: [0; 3],
            },
            gsp_rm_params: GspRmParams {
                target: GspDmaTarget::NoncoherentSystem as u32,
                _padding: 0,
                boot_args_offset: libos_args,
            },
        }
    }
}

/// The GSP-FMC and its credentials (RM's `kgspGetBinArchiveGspRmFmcGfwProdSigned` archive:
/// `ucode_image`, `ucode_hash`, `ucode_sig`, `ucode_pkey`). NVIDIA ships them inside its
/// driver binary only; Debian's firmware packages do not have them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FmcImages<'a> {
    pub image: &'a [u8],
    /// SHA-384 of the image.
    pub hash384: &'a [u8; 48],
    pub public_key: &'a [u8; 384],
    pub signature: &'a [u8; 384],
}

/// What goes into the chain-of-trust message, by bus address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CotAddresses {
    /// The GSP-FMC image in system memory.
    pub fmc_image: u64,
    /// A 1 MiB system-memory buffer for the FSP's FRTS copy.
    pub frts_sysmem: u64,
    /// The `GSP_FMC_BOOT_PARAMS` page.
    pub fmc_boot_params: u64,
}

fn words<const N: usize>(bytes: &[u8]) -> [U32; N] {
    let mut out = [U32::new(0); N];
    for (word, chunk) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *word = U32::new(u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
    }
    out
}

/// The `NVDM_PAYLOAD_COT` `kfspSendBootCommands_GH100` sends on a first boot (no boot-retry
/// margin, FRTS copies in system and video memory, GSP-FMC booted by the FSP).
pub fn cot_payload(fmc: &FmcImages<'_>, addresses: &CotAddresses) -> NvdmPayloadCot {
    NvdmPayloadCot {
        version: U16::new(NVDM_PAYLOAD_COT_VERSION),
        size: U16::new(NVDM_PAYLOAD_COT_SIZE as u16),
        gsp_fmc_sysmem_offset: U64::new(addresses.fmc_image),
        frts_sysmem_offset: U64::new(addresses.frts_sysmem),
        frts_sysmem_size: U32::new(FRTS_SIZE),
        frts_vidmem_offset: U64::new(FRTS_VIDMEM_OFFSET_FROM_END),
        frts_vidmem_size: U32::new(FRTS_SIZE),
        hash384: words(fmc.hash384),
        public_key: words(fmc.public_key),
        signature: words(fmc.signature),
        gsp_boot_args_sysmem_offset: U64::new(addresses.fmc_boot_params),
    }
}

/// `kfspCreateMctpHeader_GH100`: SOM, EOM, SEID and SEQ (tag, destination and version 0).
pub const fn mctp_header(som: bool, eom: bool, seid: u8, seq: u8) -> u32 {
    ((som as u32) << MCTP_HEADER_SOM.first)
        | ((eom as u32) << MCTP_HEADER_EOM.first)
        | ((seid as u32) << MCTP_HEADER_SEID.first)
        | (((seq & 0x3) as u32) << MCTP_HEADER_SEQ.first)
}

/// `kfspCreateNvdmHeader_GH100`: vendor-defined PCI message, NVIDIA, NVDM type.
pub const fn nvdm_header(nvdm_type: u8) -> u32 {
    MCTP_MSG_HEADER_TYPE_VENDOR_PCI
        | (MCTP_MSG_HEADER_VENDOR_ID_NV << MCTP_MSG_HEADER_VENDOR_ID.first)
        | ((nvdm_type as u32) << MCTP_MSG_HEADER_NVDM_TYPE.first)
}

/// `kfspNvdmToSeid_GH100`.
pub const fn nvdm_seid(nvdm_type: u8) -> u8 {
    if nvdm_type == NVDM_TYPE_INFOROM {
        1
    } else {
        0
    }
}

/// The packets `kfspSendAndReadMessage` sends for `payload` of `nvdm_type` over a channel of
/// `channel_size` bytes, each padded to whole words: the first carries both headers, later ones
/// only the transport header with SEQ counting modulo 4.
pub fn packets(payload: &[u8], nvdm_type: u8, channel_size: usize) -> Vec<Vec<u8>> {
    let seid = nvdm_seid(nvdm_type);
    let first_capacity = channel_size.saturating_sub(8).max(1);
    let single = payload.len() <= first_capacity;
    let first_len = payload.len().min(first_capacity);
    let mut first = Vec::with_capacity(8 + first_len);
    first.extend_from_slice(&mctp_header(true, single, seid, 0).to_le_bytes());
    first.extend_from_slice(&nvdm_header(nvdm_type).to_le_bytes());
    first.extend_from_slice(&payload[..first_len]);
    let mut out = vec![first];
    let capacity = channel_size.saturating_sub(4).max(1);
    let mut sent = first_len;
    let mut seq = 0u8;
    while sent < payload.len() {
        let len = (payload.len() - sent).min(capacity);
        let last = sent + len == payload.len();
        seq = (seq + 1) % 4;
        let mut packet = Vec::with_capacity(4 + len);
        packet.extend_from_slice(&mctp_header(false, last, seid, seq).to_le_bytes());
        packet.extend_from_slice(&payload[sent..sent + len]);
        out.push(packet);
        sent += len;
    }
    for packet in &mut out {
        packet.resize(packet.len().next_multiple_of(4), 0);
    }
    out
}

/// Why the FSP path failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FspError {
    /// A bounded wait ran out.
    Timeout(Timeout),
    /// An EMEM access failed.
    Falcon(FalconError),
    /// A reply packet's size (from the message queue pointers) is not possible.
    BadPacketSize { size: u32 },
    /// A reply's MCTP message header is not a vendor-PCI NVIDIA message.
    BadMessageHeader { header: u32 },
    /// A reply's NVDM type is not a command response.
    UnexpectedNvdmType { nvdm_type: u8 },
    /// A reply too short for a command response.
    ShortResponse { len: usize },
    /// The FSP refused the command.
    CommandFailed { task_id: u32, command_nvdm_type: u32, error_code: u32 },
    /// The GSP-FMC reported an error in the GSP's MAILBOX0.
    FmcError { mailbox0: u32 },
}

impl From<Timeout> for FspError {
    fn from(t: Timeout) -> Self {
        Self::Timeout(t)
    }
}

impl From<FalconError> for FspError {
    fn from(e: FalconError) -> Self {
        Self::Falcon(e)
    }
}

impl fmt::Display for FspError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout(t) => write!(f, "FSP: {t}"),
            Self::Falcon(e) => write!(f, "FSP: {e}"),
            Self::BadPacketSize { size } => write!(f, "FSP reply packet of {size} bytes (1..=1024 allowed)"),
            Self::BadMessageHeader { header } => {
                write!(f, "FSP reply is not a vendor-PCI NVIDIA MCTP message (header {header:#010x})")
            }
            Self::UnexpectedNvdmType { nvdm_type } => write!(f, "FSP reply has NVDM type {nvdm_type:#x}"),
            Self::ShortResponse { len } => write!(f, "FSP command response of {len} bytes is too short"),
            Self::CommandFailed { task_id, command_nvdm_type, error_code } => write!(
                f,
                "FSP refused NVDM command {command_nvdm_type:#x} (task {task_id:#x}): error code {error_code:#x}"
            ),
            Self::FmcError { mailbox0 } => write!(f, "GSP-FMC reported error {mailbox0:#x} in GSP MAILBOX0"),
        }
    }
}

/// Checks a reply message (its NVDM payload: type byte, then the response), as
/// `kfspProcessNvdmMessage_GH100` and `kfspProcessCommandResponse_GH100` do.
pub fn check_response(message: &[u8]) -> Result<NvdmPayloadCommandResponse, FspError> {
    let (&nvdm_type, rest) = message.split_first().ok_or(FspError::ShortResponse { len: 0 })?;
    if nvdm_type != NVDM_TYPE_FSP_RESPONSE && nvdm_type != NVDM_TYPE_SMBPBI {
        return Err(FspError::UnexpectedNvdmType { nvdm_type });
    }
    let response = rest
        .get(..size_of::<NvdmPayloadCommandResponse>())
        .and_then(|b| NvdmPayloadCommandResponse::read_from_bytes(b).ok())
        .ok_or(FspError::ShortResponse { len: message.len() })?;
    if response.error_code.get() != FSP_OK {
        return Err(FspError::CommandFailed {
            task_id: response.task_id.get(),
            command_nvdm_type: response.command_nvdm_type.get(),
            error_code: response.error_code.get(),
        });
    }
    Ok(response)
}

/// Waits for the FSP to report its own boot complete (`kfspWaitForSecureBoot_GH100`).
pub fn wait_for_fsp_boot<R: RegisterIo + ?Sized, C: Clock + ?Sized>(
    io: &R,
    hal: &Hal,
    clock: &C,
) -> Result<(), FspError> {
    let Some(offset) = hal.fsp_boot_status else { return Ok(()) };
    wait_for(clock, FSP_BOOT_TIMEOUT_MS, "FSP boot complete (NV_THERM_I2CS_SCRATCH)", || {
        let status = NV_THERM_I2CS_SCRATCH_FSP_BOOT_COMPLETE::from_raw(io.read32(offset)).status();
        (status == FspBootStatus::Success as u32).then_some(())
    })?;
    Ok(())
}

/// RM's channel to the FSP: EMEM through the FSP falcon, and the queue registers.
pub struct FspChannel<'f, R: RegisterIo, C: Clock> {
    fsp: &'f Falcon<R, C, Fsp>,
    clock: &'f C,
}

impl<'f, R: RegisterIo, C: Clock> FspChannel<'f, R, C> {
    /// The channel through `fsp` (the FSP falcon), waiting by `clock`.
    pub fn new(fsp: &'f Falcon<R, C, Fsp>, clock: &'f C) -> Self {
        Self { fsp, clock }
    }

    fn io(&self) -> &R {
        self.fsp.io()
    }

    fn queues_empty(&self) -> bool {
        let io = self.io();
        let cmd = NV_PFSP_QUEUE_HEAD::read(io, FSP_EMEM_CHANNEL_RM).raw()
            == NV_PFSP_QUEUE_TAIL::read(io, FSP_EMEM_CHANNEL_RM).raw();
        let msg = NV_PFSP_MSGQ_HEAD::read(io, FSP_EMEM_CHANNEL_RM).raw()
            == NV_PFSP_MSGQ_TAIL::read(io, FSP_EMEM_CHANNEL_RM).raw();
        cmd && msg
    }

    fn message_pending(&self) -> bool {
        let io = self.io();
        NV_PFSP_MSGQ_HEAD::read(io, FSP_EMEM_CHANNEL_RM).raw() != NV_PFSP_MSGQ_TAIL::read(io, FSP_EMEM_CHANNEL_RM).raw()
    }

    /// `kfspSendPacket`: one packet (whole words) at EMEM 0, then TAIL and HEAD.
    pub fn send_packet(&self, packet: &[u8]) -> Result<(), FspError> {
        wait_for(self.clock, FSP_QUEUE_TIMEOUT_MS, "the FSP queues to be empty", || self.queues_empty().then_some(()))?;
        self.fsp.emem_write(0, packet)?;
        let last_word = (packet.len() as u32).saturating_sub(4);
        // HEAD after TAIL: writing HEAD interrupts the FSP.
        NV_PFSP_QUEUE_TAIL::from_raw(last_word).write(self.io(), FSP_EMEM_CHANNEL_RM);
        NV_PFSP_QUEUE_HEAD::from_raw(0).write(self.io(), FSP_EMEM_CHANNEL_RM);
        Ok(())
    }

    /// `kfspReadMessage`: packets until one has EOM, their payloads joined (the first's after
    /// the 7-byte MCTP header, so starting with the NVDM type; later ones after the transport
    /// header).
    pub fn read_message(&self) -> Result<Vec<u8>, FspError> {
        let mut message = Vec::new();
        loop {
            wait_for(self.clock, FSP_QUEUE_TIMEOUT_MS, "a reply from the FSP", || {
                self.message_pending().then_some(())
            })?;
            let io = self.io();
            let head = NV_PFSP_MSGQ_HEAD::read(io, FSP_EMEM_CHANNEL_RM).raw();
            let tail = NV_PFSP_MSGQ_TAIL::read(io, FSP_EMEM_CHANNEL_RM).raw();
            // TAIL points at the packet's last word.
            let size = tail.wrapping_sub(head).wrapping_add(4);
            if size < 4 || size as usize > FSP_EMEM_CHANNEL_RM_SIZE || !size.is_multiple_of(4) {
                return Err(FspError::BadPacketSize { size });
            }
            // RM's channel starts at EMEM 0 and every packet is read from there
            // (`kfspReadFromEmem_GH100`).
            let mut packet = vec![0u8; size as usize];
            self.fsp.emem_read(0, &mut packet)?;
            let transport = u32::from_le_bytes([packet[0], packet[1], packet[2], packet[3]]);
            let som = transport >> MCTP_HEADER_SOM.first & 1 == 1;
            let eom = transport >> MCTP_HEADER_EOM.first & 1 == 1;
            let header_len = if som {
                let header = packet.get(4..8).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                let vendor = (header >> MCTP_MSG_HEADER_VENDOR_ID.first) & 0xffff;
                if MCTP_MSG_HEADER_TYPE.extract(header) != MCTP_MSG_HEADER_TYPE_VENDOR_PCI
                    || vendor != MCTP_MSG_HEADER_VENDOR_ID_NV
                    || packet.len() < MCTP_HEADER_SIZE + 1
                {
                    return Err(FspError::BadMessageHeader { header });
                }
                MCTP_HEADER_SIZE
            } else {
                4
            };
            message.extend_from_slice(packet.get(header_len..).unwrap_or(&[]));
            // TAIL = HEAD: the CPU took the packet.
            NV_PFSP_MSGQ_TAIL::from_raw(head).write(io, FSP_EMEM_CHANNEL_RM);
            NV_PFSP_MSGQ_HEAD::from_raw(head).write(io, FSP_EMEM_CHANNEL_RM);
            if eom {
                return Ok(message);
            }
        }
    }

    /// `kfspSendAndReadMessage`: `payload` as NVDM `nvdm_type`, then the checked reply.
    pub fn send_and_read(&self, payload: &[u8], nvdm_type: u8) -> Result<NvdmPayloadCommandResponse, FspError> {
        for packet in packets(payload, nvdm_type, FSP_EMEM_CHANNEL_RM_SIZE) {
            self.send_packet(&packet)?;
        }
        let reply = self.read_message()?;
        check_response(&reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hw::fw::fsp::*;
    use zerocopy::IntoBytes;

    #[test]
    fn headers_are_rms() {
        // SOM, EOM, SEID 0, SEQ 0: bits 31 and 30.
        assert_eq!(mctp_header(true, true, 0, 0), 0xc000_0000);
        assert_eq!(mctp_header(false, true, 1, 5), 0x4001_0000 | (1 << 28));
        // 0x7e | 0x10de << 8 | 0x14 << 24.
        assert_eq!(nvdm_header(NVDM_TYPE_COT), 0x1410_de7e);
    }

    fn fmc() -> ([u8; 48], [u8; 384], [u8; 384]) {
        let mut hash = [0u8; 48];
        let mut key = [0u8; 384];
        let mut sig = [0u8; 384];
        for (i, b) in hash.iter_mut().enumerate() {
            *b = i as u8;
        }
        for (i, b) in key.iter_mut().enumerate() {
            *b = (i * 3) as u8;
        }
        for (i, b) in sig.iter_mut().enumerate() {
            *b = (i * 7) as u8;
        }
        (hash, key, sig)
    }

    #[test]
    fn cot_payload_bytes() {
        let (hash, key, sig) = fmc();
        let images = FmcImages { image: &[], hash384: &hash, public_key: &key, signature: &sig };
        let cot = cot_payload(
            &images,
            &CotAddresses { fmc_image: 0x1_0000_0000, frts_sysmem: 0x1_0010_0000, fmc_boot_params: 0x1_0020_0000 },
        );
        let b = cot.as_bytes();
        assert_eq!(b.len(), 860);
        assert_eq!(&b[0..4], &[1, 0, 0x5c, 0x03]);
        assert_eq!(&b[4..12], &0x1_0000_0000u64.to_le_bytes());
        assert_eq!(&b[12..20], &0x1_0010_0000u64.to_le_bytes());
        assert_eq!(&b[20..24], &0x10_0000u32.to_le_bytes());
        assert_eq!(&b[24..32], &0x20_0000u64.to_le_bytes());
        assert_eq!(&b[32..36], &0x10_0000u32.to_le_bytes());
        assert_eq!(&b[36..84], &hash);
        assert_eq!(&b[84..468], &key);
        assert_eq!(&b[468..852], &sig);
        assert_eq!(&b[852..860], &0x1_0020_0000u64.to_le_bytes());
    }

    #[test]
    fn the_cot_message_takes_one_packet() {
        let payload = vec![0xabu8; NVDM_PAYLOAD_COT_SIZE];
        let sent = packets(&payload, NVDM_TYPE_COT, FSP_EMEM_CHANNEL_RM_SIZE);
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].len(), 868);
        assert_eq!(&sent[0][0..4], &0xc000_0000u32.to_le_bytes());
        assert_eq!(&sent[0][4..8], &0x1410_de7eu32.to_le_bytes());
        assert_eq!(&sent[0][8..], &payload[..]);
    }

    #[test]
    fn long_messages_split_with_sequence_numbers() {
        let payload: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
        let sent = packets(&payload, NVDM_TYPE_INFOROM, 1024);
        // 1016 in the first, then 1020 per packet: 1016 + 1020 + 964.
        assert_eq!(sent.iter().map(Vec::len).collect::<Vec<_>>(), vec![1024, 1024, 968]);
        let h = |p: &Vec<u8>| u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
        assert_eq!(h(&sent[0]), mctp_header(true, false, 1, 0));
        assert_eq!(h(&sent[1]), mctp_header(false, false, 1, 1));
        assert_eq!(h(&sent[2]), mctp_header(false, true, 1, 2));
        let mut joined = sent[0][8..].to_vec();
        joined.extend_from_slice(&sent[1][4..]);
        joined.extend_from_slice(&sent[2][4..]);
        assert_eq!(joined, payload);
    }

    #[test]
    fn responses() {
        let mut ok = vec![NVDM_TYPE_FSP_RESPONSE];
        ok.extend_from_slice(&[1, 0, 0, 0, 0x14, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(check_response(&ok).map(|r| r.command_nvdm_type.get()), Ok(0x14));
        let mut bad = ok.clone();
        bad[9] = FSP_ERR_IFS_ERR_INVALID_STATE as u8;
        assert_eq!(
            check_response(&bad),
            Err(FspError::CommandFailed { task_id: 1, command_nvdm_type: 0x14, error_code: 0x9e })
        );
        assert_eq!(check_response(&[0x99, 0]), Err(FspError::UnexpectedNvdmType { nvdm_type: 0x99 }));
        assert_eq!(check_response(&ok[..5]), Err(FspError::ShortResponse { len: 5 }));
    }

    #[test]
    fn fmc_boot_params_layout() {
        let p = GspFmcBootParams::new(0x1_2345_6000, 0x2_0000_1000);
        let b = p.as_bytes();
        assert_eq!(&b[8..12], &1u32.to_le_bytes(), "WPR meta: coherent sysmem");
        assert_eq!(&b[12..16], &256u32.to_le_bytes());
        assert_eq!(&b[16..24], &0x1_2345_6000u64.to_le_bytes());
        assert_eq!(b[36], 1, "bIsGspRmBoot");
        assert_eq!(&b[40..44], &2u32.to_le_bytes(), "LIBOS args: non-coherent sysmem");
        assert_eq!(&b[48..56], &0x2_0000_1000u64.to_le_bytes());
    }
}
