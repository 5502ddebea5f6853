//! The booters on SEC2 (Turing to Ada): `booter_load` verifies GSP-RM, locks it into WPR2 and
//! starts the GSP's RISC-V core; `booter_unload` tears WPR2 down again.
//!
//! Follows `kernel_gsp_booter_tu102.c` (`kgspExecuteBooterLoad_TU102`,
//! `kgspExecuteBooterUnloadIfNeeded_TU102`, `s_executeBooterUcode_TU102`), the image preparation
//! of `s_allocateUcodeFromBinArchive` / `s_patchBooterUcodeSignature` (`kernel_gsp_booter.c`),
//! and the two ways SEC2 is loaded:
//! - GA102 and later (`bBootFromHs`, `kernel_sec2_ga102.c`): by DMA, the application's code at
//!   IMEM 0 tagged with its image offset, the OS data at DMEM 0, the boot ROM told where the
//!   signature is (`kgspExecuteHsFalcon_GA102`);
//! - Turing and GA100 (boot direct): by PIO, the OS code then the secure application code in
//!   IMEM, the data in DMEM, BOOTVEC 0 (`s_prepareHsFalconDirect`, `kernel_gsp_falcon_tu102.c`).
//!
//! SEC2 reports in `MAILBOX0`: 0 is success, anything else the booter's error code.

use core::fmt;

use super::dma::DmaRegion;
use crate::falcon::{
    BromParams, DmaSegment, DmaTarget, Falcon, FalconError, FalconMemory, Mailboxes, Sec2, FALCON_BLOCK,
};
use crate::firmware::{BooterFirmware, FirmwareError};
use crate::fwsec::frts::{disable_ctx_req, read_ucode_fuse_version};
use crate::hal::{FalconLayout, Hal};
use crate::hw::boot::FuseEngine;
use crate::hw::RegisterIo;
use crate::platform::{Clock, DmaAllocator, DmaError};

/// How long a booter may run: RM's `GPU_TIMEOUT_DEFAULT` (4 s, see `crate::fwsec::frts`).
pub const BOOTER_TIMEOUT_MS: u64 = 4_000;

/// The mailbox values `kgspExecuteBooterUnloadIfNeeded_TU102` starts booter_unload with when
/// it has no suspend/resume data to pass.
pub const BOOTER_UNLOAD_MAILBOX: u32 = 0xff;

/// Which booter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Booter {
    Load,
    Unload,
}

impl Booter {
    /// The name RM's messages use.
    pub const fn name(self) -> &'static str {
        match self {
            Booter::Load => "Booter Load",
            Booter::Unload => "Booter Unload",
        }
    }
}

/// How the booter was loaded into SEC2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BooterMethod {
    /// DMA and the boot ROM's PKC check (GA102 and later).
    FromHs,
    /// PIO, secure IMEM blocks (Turing, GA100).
    Direct,
}

/// What a booter run returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BooterOutcome {
    pub method: BooterMethod,
    /// The SEC2 ucode fuse version the signature was chosen for.
    pub fuse_version: u32,
    /// SEC2's mailboxes at halt (`mailbox0` is 0: checked).
    pub mailboxes: Mailboxes,
}

/// Why a booter run failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BooterError {
    /// The booter image could not be prepared (no signature for the fuse version, bad patch
    /// location).
    Image { booter: Booter, error: FirmwareError },
    /// The image's layout does not fit how SEC2 loads it.
    BadLayout { booter: Booter, what: &'static str },
    /// DMA memory for the image.
    Dma { booter: Booter, error: DmaError },
    /// A SEC2 falcon step (reset, load, boot ROM, start, halt timeout).
    Falcon { booter: Booter, error: FalconError },
    /// The booter halted with a non-zero `MAILBOX0`: its error code.
    Failed { booter: Booter, mailbox0: u32, mailbox1: u32 },
}

impl fmt::Display for BooterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Image { booter, error } => write!(f, "{}: preparing the image: {error}", booter.name()),
            Self::BadLayout { booter, what } => write!(f, "{}: {what}", booter.name()),
            Self::Dma { booter, error } => write!(f, "{}: {error}", booter.name()),
            Self::Falcon { booter, error } => write!(f, "{}: {error}", booter.name()),
            Self::Failed { booter, mailbox0, mailbox1 } => write!(
                f,
                "{} failed on SEC2 with error code {mailbox0:#x} in MAILBOX0 (MAILBOX1 {mailbox1:#x})",
                booter.name()
            ),
        }
    }
}

fn align_256(value: u32) -> Option<u32> {
    value.checked_add(FALCON_BLOCK - 1).map(|v| v & !(FALCON_BLOCK - 1))
}

/// Runs `image` (booter_load or booter_unload) on SEC2 with `mailboxes` in, as
/// `s_executeBooterUcode_TU102`: SEC2 is reset first (`kflcnReset_HAL`), the image gets the
/// signature SEC2's fuse selects, and a non-zero `MAILBOX0` at halt is the booter's error.
pub fn run_booter<R: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    sec2: &Falcon<R, C, Sec2>,
    hal: &Hal,
    dma: &A,
    booter: Booter,
    image: &BooterFirmware<'_>,
    mailboxes: Mailboxes,
) -> Result<BooterOutcome, BooterError> {
    let falcon = |error| BooterError::Falcon { booter, error };
    let layout = |what| BooterError::BadLayout { booter, what };
    let fuse_version = read_ucode_fuse_version(sec2.io(), hal.family, FuseEngine::Sec2, image.meta.ucode_id);
    let patched = image.patched_image(fuse_version).map_err(|error| BooterError::Image { booter, error })?;
    let load = image.load;
    if load.num_apps != 1 {
        return Err(layout("the image has more than one application"));
    }

    log::info!(
        "{}: SEC2 fuse version {fuse_version}, MAILBOX0/1 {:#x}/{:#x}",
        booter.name(),
        mailboxes.mailbox0,
        mailboxes.mailbox1
    );
    sec2.reset().map_err(falcon)?;

    let (method, out) = if hal.falcon_layout == FalconLayout::Ga102 {
        // Everything the transfers read, in whole 256-byte blocks past either piece's end.
        let code_end = load.app_code_offset.checked_add(align_256(load.app_code_size).unwrap_or(u32::MAX));
        let data_end = load.os_data_offset.checked_add(align_256(load.os_data_size).unwrap_or(u32::MAX));
        let len = code_end
            .zip(data_end)
            .map(|(c, d)| c.max(d).max(patched.len() as u32))
            .ok_or(layout("code or data reaches past 4 GiB"))?;
        let buffer =
            DmaRegion::with_bytes(dma, &patched, len as usize).map_err(|error| BooterError::Dma { booter, error })?;
        let segments = [
            DmaSegment {
                memory: FalconMemory::Imem { secure: true },
                source_offset: load.app_code_offset,
                falcon_offset: 0,
                len: load.app_code_size,
                virtual_address: Some(load.app_code_offset),
            },
            DmaSegment {
                memory: FalconMemory::Dmem,
                source_offset: load.os_data_offset,
                falcon_offset: 0,
                len: load.os_data_size,
                virtual_address: None,
            },
        ];
        let dma_buffer =
            buffer.buffer().ok_or(BooterError::Dma { booter, error: DmaError { requested: len as usize } })?;
        sec2.load_dma(dma_buffer, DmaTarget::CoherentSysmem, &segments).map_err(falcon)?;
        sec2.program_brom(&BromParams {
            signature_dmem_offset: image.signature_dmem_offset(),
            engine_id_mask: image.meta.engine_id_mask,
            ucode_id: u8::try_from(image.meta.ucode_id).map_err(|_| layout("ucode id above 255"))?,
        })
        .map_err(falcon)?;
        let out = sec2.execute(load.app_code_offset, mailboxes, BOOTER_TIMEOUT_MS).map_err(falcon)?;
        drop(buffer);
        (BooterMethod::FromHs, out)
    } else {
        let piece = |offset: u32, size: u32, what| {
            let start = offset as usize;
            // PIO moves whole words; the last word of a piece may run into the next one.
            let len = (size as usize).next_multiple_of(4);
            start.checked_add(len).and_then(|end| patched.get(start..end)).ok_or(what)
        };
        let os_code = piece(load.os_code_offset, load.os_code_size, "OS code").map_err(layout)?;
        let app_code = piece(load.app_code_offset, load.app_code_size, "application code").map_err(layout)?;
        let os_data = piece(load.os_data_offset, load.os_data_size, "OS data").map_err(layout)?;
        let secure_at = align_256(load.os_code_size).ok_or(layout("OS code size overflows"))?;
        disable_ctx_req(sec2).map_err(falcon)?;
        sec2.load_imem(0, os_code, load.os_code_offset, false).map_err(falcon)?;
        sec2.load_imem(secure_at, app_code, load.app_code_offset, true).map_err(falcon)?;
        sec2.load_dmem(0, os_data).map_err(falcon)?;
        let out = sec2.execute(0, mailboxes, BOOTER_TIMEOUT_MS).map_err(falcon)?;
        (BooterMethod::Direct, out)
    };

    if out.mailbox0 != 0 {
        return Err(BooterError::Failed { booter, mailbox0: out.mailbox0, mailbox1: out.mailbox1 });
    }
    Ok(BooterOutcome { method, fuse_version, mailboxes: out })
}

/// The mailboxes that carry a 64-bit bus address: low word in MAILBOX0, high in MAILBOX1.
pub const fn address_mailboxes(address: u64) -> Mailboxes {
    Mailboxes { mailbox0: address as u32, mailbox1: (address >> 32) as u32 }
}
