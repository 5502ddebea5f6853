//! FWSEC-FRTS: running the VBIOS's FWSEC ucode on the GSP falcon with the FRTS command, so that
//! it copies the firmware runtime security data into a 1 MiB region at the top of the
//! framebuffer and opens WPR2 over it (Turing to Ada; the booter later grows WPR2 over GSP-RM).
//!
//! Follows `src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_frts_tu102.c` (535.261.03),
//! `s_executeFwsec_TU102` and `s_vbiosPatchInterfaceData`, and how `kernel_gsp_fwsec.c` lays the
//! ucode out (`s_vbiosFillFlcnUcodeFromDescV2`/`V3`); the falcon side is
//! `kgspExecuteHsFalcon_GA102` (`kernel_gsp_falcon_ga102.c`: DMA, boot ROM registers) and
//! `s_prepareHsFalconWithLoader` (`kernel_gsp_falcon_tu102.c`: the generic falcon bootloader).
//!
//! Two ways to run it, chosen by the VBIOS's descriptor:
//! - **v3 descriptor (GA10x, Ada): boot from HS.** IMEM then DMEM as one image; the command and
//!   the signature the chip's GSP fuse selects are patched into the DMEM part; the GSP falcon
//!   loads it by DMA, the boot ROM verifies it ([`BromParams`]), it runs from `IMEMVirtBase`.
//! - **v2 descriptor (Turing, GA100): boot with loader.** Code and data in two DMA buffers; the
//!   command is patched into the data; NVIDIA's generic falcon bootloader ([`GenericBootloader`],
//!   which RM keeps inside its own binary as SEC2's `ucode_image`) goes to the top of IMEM by
//!   PIO with an [`RmFlcnBlDmemDesc`] at DMEM 0 telling it where to fetch FWSEC from.
//!
//! Afterwards the postcondition is checked as RM checks it, and more strictly: the FRTS error code
//! in `NV_PBUS_VBIOS_SCRATCH(0x0E)` is NONE, and WPR2 is exactly the requested region (RM checks
//! the start and that the end is non-zero; here the end must also be the region's last 4 KiB
//! unit, since FWSEC is told the size).

// It patches DMEM images and programs the falcon from what `super` parsed, with offsets from the
// firmware: under the parser lints like `super`.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use alloc::vec;
use core::fmt;
use core::mem::size_of;

use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::{FalconUcodeDescV2, Fwsec, FwsecDescriptor};
use crate::falcon::{
    engine_name, patch_signature, BromParams, DmaSegment, DmaTarget, Falcon, FalconError, FalconMemory, Gsp,
    HostBooted, HsSignatureLocation, Mailboxes, FALCON_BLOCK,
};
use crate::gsp::boot::dma::DmaRegion;
use crate::hal::{FalconLayout, Family, Hal};
use crate::hw::boot::{ucode_fuse_offset, FuseEngine};
use crate::hw::falcon::{
    FbifMemType, FbifTarget, NV_PFALCON_FALCON_DMACTL, NV_PFALCON_FBIF_CTL, NV_PFALCON_FBIF_TRANSCFG,
};
use crate::hw::fw::rmflcnbl::{RmFlcnBlDesc, RmFlcnBlDmemDesc, RmFlcnU64, GENERIC_BL_CTX_DMA};
use crate::hw::fw::{
    FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS, FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB,
    FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER, FWSECLIC_FRTS_CMD_FIELDS_SIZE,
};
use crate::hw::{bus, fb, gc6, RegisterIo};
use crate::platform::{Clock, DmaAllocator, DmaError};

/// How long FWSEC may run: RM waits `GPU_TIMEOUT_DEFAULT`, which `osGetTimeoutParams`
/// (`arch/nvalloc/unix/src/os.c`) sets to 4 s for a graphics-mode GPU.
pub const FWSEC_TIMEOUT_MS: u64 = 4_000;

// ---------------------------------------------------------------------------------------------
// The FWSEC command interface, as `kernel_gsp_frts_tu102.c` defines it (the structures live in
// that C file, not in a header).

use crate::hw::fw::{
    FWSECLIC_FRTS_REGION_DESC_VERSION, FWSECLIC_FRTS_REGION_MEDIA_FB, FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K,
    FWSECLIC_READ_VBIOS_DESC_VERSION, FWSECLIC_READ_VBIOS_STRUCT_FLAGS,
};

/// The FRTS region's size in bytes.
pub const FRTS_REGION_SIZE: u64 = (FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K as u64) << 12;

use crate::hw::fw::{FwseclicFrtsCmd, FwseclicFrtsRegionDesc, FwseclicReadVbiosDesc};

impl FwseclicReadVbiosDesc {
    /// The descriptor RM sends with every FWSEC command.
    pub const fn rm_default() -> Self {
        Self {
            version: FWSECLIC_READ_VBIOS_DESC_VERSION,
            size: size_of::<Self>() as u32,
            gfw_image_offset: 0,
            gfw_image_size: 0,
            flags: FWSECLIC_READ_VBIOS_STRUCT_FLAGS,
        }
    }
}

impl FwseclicFrtsCmd {
    /// The FRTS command for the 1 MiB region at framebuffer offset `frts_offset` (4 KiB aligned),
    /// as `s_executeFwsec_TU102` builds it.
    pub const fn new(frts_offset: u64) -> Self {
        Self {
            read_vbios_desc: FwseclicReadVbiosDesc::rm_default(),
            frts_region_desc: FwseclicFrtsRegionDesc {
                version: FWSECLIC_FRTS_REGION_DESC_VERSION,
                size: size_of::<FwseclicFrtsRegionDesc>() as u32,
                frts_region_offset_4k: (frts_offset >> 12) as u32,
                frts_region_size: FWSECLIC_FRTS_REGION_SIZE_1MB_IN_4K,
                frts_region_media_type: FWSECLIC_FRTS_REGION_MEDIA_FB,
            },
            _padding: 0,
        }
    }
}

// The application interface FWSEC's DMEM starts with (`kernel_gsp_frts_tu102.c`), read from the
// DMEM image itself, as RM does, not from the parse of the ROM.

use crate::hw::fw::{AppInterfaceEntryV1, AppInterfaceHeaderV1, DmemMapperV3};

const _: () = assert!(size_of::<DmemMapperV3>() == 64);

/// Why FWSEC's DMEM could not take a command (`s_vbiosPatchInterfaceData`'s refusals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterfaceError {
    /// A structure lies (partly) outside the DMEM image.
    OutOfBounds { what: &'static str, offset: u64, dmem_size: u32 },
    /// The interface table has fewer than the two entries RM requires.
    TooFewEntries { entries: u8 },
    /// No DMEM mapper entry (`FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER`).
    NoDmemMapper,
    /// The command-in buffer is smaller than the command's fields.
    CommandBufferTooSmall { size: u32, needed: u32 },
}

impl fmt::Display for InterfaceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::OutOfBounds { what, offset, dmem_size } => {
                write!(f, "{what} at {offset:#x} lies outside FWSEC's {dmem_size:#x}-byte DMEM")
            }
            Self::TooFewEntries { entries } => {
                write!(f, "FWSEC application interface has {entries} entries (at least 2 expected)")
            }
            Self::NoDmemMapper => write!(f, "FWSEC application interface has no DMEM mapper entry"),
            Self::CommandBufferTooSmall { size, needed } => {
                write!(f, "FWSEC command buffer holds {size} bytes, the command needs {needed}")
            }
        }
    }
}

fn read_at<T: FromBytes + KnownLayout + Immutable>(
    dmem: &[u8],
    offset: u32,
    what: &'static str,
) -> Result<T, InterfaceError> {
    let out = InterfaceError::OutOfBounds { what, offset: offset.into(), dmem_size: dmem.len() as u32 };
    let start = offset as usize;
    let bytes = start.checked_add(size_of::<T>()).and_then(|end| dmem.get(start..end)).ok_or(out)?;
    T::read_from_bytes(bytes).map_err(|_| out)
}

/// Patches FWSEC's DMEM image for `cmd`: finds the DMEM mapper through the application
/// interface table at `interface_offset`, sets its `init_cmd`, and copies `cmd_buffer` into its
/// command-in buffer (`s_vbiosPatchInterfaceData`). Of `cmd_buffer`, at least `required` bytes
/// must fit the buffer's declared size; the rest (padding) is copied only where it fits.
/// Returns the DMEM offset of the mapper.
pub fn patch_interface_data(
    dmem: &mut [u8],
    interface_offset: u32,
    cmd: u32,
    cmd_buffer: &[u8],
    required: usize,
) -> Result<u32, InterfaceError> {
    let header: AppInterfaceHeaderV1 = read_at(dmem, interface_offset, "application interface header")?;
    if header.entry_count < 2 {
        return Err(InterfaceError::TooFewEntries { entries: header.entry_count });
    }
    // RM steps by sizeof(FALCON_APPLICATION_INTERFACE_ENTRY_V1) after sizeof(header); the
    // header's own size fields are what the table declares, and every VBIOS has them equal.
    let header_size = u32::from(header.header_size).max(size_of::<AppInterfaceHeaderV1>() as u32);
    let entry_size = u32::from(header.entry_size).max(size_of::<AppInterfaceEntryV1>() as u32);
    let mut mapper_at = None;
    for index in 0..u32::from(header.entry_count) {
        let at = interface_offset
            .checked_add(header_size)
            .and_then(|first| first.checked_add(index.checked_mul(entry_size)?))
            .ok_or(InterfaceError::OutOfBounds {
                what: "application interface entry",
                offset: u64::from(interface_offset)
                    .saturating_add(u64::from(header_size))
                    .saturating_add(u64::from(index).saturating_mul(u64::from(entry_size))),
                dmem_size: dmem.len() as u32,
            })?;
        let entry: AppInterfaceEntryV1 = read_at(dmem, at, "application interface entry")?;
        if entry.id.get() == FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER {
            mapper_at = Some(entry.dmem_offset.get());
        }
    }
    let mapper_at = mapper_at.ok_or(InterfaceError::NoDmemMapper)?;
    let mut mapper: DmemMapperV3 = read_at(dmem, mapper_at, "DMEM mapper")?;

    let buffer_size = mapper.cmd_in_buffer_size.get() as usize;
    if buffer_size < required {
        return Err(InterfaceError::CommandBufferTooSmall { size: buffer_size as u32, needed: required as u32 });
    }
    let copy = cmd_buffer.len().min(buffer_size).max(required.min(cmd_buffer.len()));
    let buffer_at = mapper.cmd_in_buffer_offset.get() as usize;
    let dmem_size = dmem.len() as u32;
    let dest = buffer_at
        .checked_add(copy)
        .and_then(|end| dmem.get_mut(buffer_at..end))
        .ok_or(InterfaceError::OutOfBounds { what: "FWSEC command-in buffer", offset: buffer_at as u64, dmem_size })?;
    // `copy` is at most `cmd_buffer.len()`.
    dest.copy_from_slice(cmd_buffer.get(..copy).unwrap_or(cmd_buffer));

    mapper.init_cmd = U32::new(cmd);
    let start = mapper_at as usize;
    // In bounds: read_at above read the mapper from the same range.
    if let Some(slot) = dmem.get_mut(start..start.saturating_add(size_of::<DmemMapperV3>())) {
        slot.copy_from_slice(mapper.as_bytes());
    }
    Ok(mapper_at)
}

// ---------------------------------------------------------------------------------------------
// Fuses.

/// The revocation fuse version of `engine`'s ucode `ucode_id` (1-based), as RM reads it:
/// `kgspReadUcodeFuseVersion_GA100` / `ksec2ReadUcodeFuseVersion_GA100` (highest set bit of the
/// fuse plus one, 0 when no bit is set or the id has no fuse) on GA100 and later; always 0 on
/// Turing, which has no such fuses (the `_b2b553` HAL stubs in `g_kernel_gsp_nvoc.c` and
/// `g_kernel_sec2_nvoc.c`).
pub fn read_ucode_fuse_version(
    io: &(impl RegisterIo + ?Sized),
    family: Family,
    engine: FuseEngine,
    ucode_id: u32,
) -> u32 {
    if !crate::hal::for_family(family).ucode_fuse_versions {
        return 0;
    }
    let Some(offset) = ucode_fuse_offset(engine, ucode_id) else { return 0 };
    // RM takes the whole register (`GPU_REG_RD32`), not only its DATA field; the bits above
    // DATA read as zero on hardware.
    match io.read32(offset) {
        0 => 0,
        bits => u32::BITS.saturating_sub(bits.leading_zeros()),
    }
}

// ---------------------------------------------------------------------------------------------
// The generic falcon bootloader (Turing, GA100).

/// NVIDIA's generic falcon bootloader: its descriptor and image. RM takes both from its own
/// binary (`ksec2GetGenericBlUcode_HAL`); NVIDIA ships them in no firmware file, so the caller
/// supplies them (e.g. from RM's generated bindata).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenericBootloader<'a> {
    pub desc: RmFlcnBlDesc,
    /// The image; the first `align_up(blCodeSize, 256)` bytes are loaded into IMEM.
    pub image: &'a [u8],
}

// ---------------------------------------------------------------------------------------------
// The step.

/// The framebuffer region FWSEC is asked to put FRTS in (and open WPR2 over).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrtsRegion {
    /// Framebuffer offset (4 KiB aligned, non-zero).
    pub offset: u64,
    /// Size: [`FRTS_REGION_SIZE`].
    pub size: u64,
}

impl FrtsRegion {
    /// The region at `offset`, of the size RM always asks for.
    pub const fn at(offset: u64) -> Self {
        Self { offset, size: FRTS_REGION_SIZE }
    }

    /// Last byte.
    pub const fn last_byte(&self) -> u64 {
        self.offset.saturating_add(self.size).saturating_sub(1)
    }
}

/// What FWSEC-FRTS left behind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FwsecFrtsOutcome {
    /// How the ucode was started.
    pub method: FwsecMethod,
    /// The GSP ucode fuse version the signature was chosen for (v3), else 0.
    pub fuse_version: u32,
    /// WPR2 as read back: first byte, last byte.
    pub wpr2: (u64, u64),
    /// The GSP falcon's MAILBOX0 at halt (FWSEC defines no result there; for the log).
    pub mailbox0: u32,
}

/// How FWSEC was started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FwsecMethod {
    /// v3: DMA and the boot ROM's PKC check (GA10x, Ada).
    BootFromHs,
    /// v2: the generic bootloader fetched it (Turing, GA100).
    BootWithLoader,
}

/// Why FWSEC-FRTS (or FWSEC-SB at unload) failed, naming the part: the ucode's layout, its interface, the signature,
/// DMA memory, the falcon, or the postcondition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FwsecFrtsError {
    /// The requested region is not what FWSEC can be asked for.
    BadRegion { offset: u64, size: u64 },
    /// The descriptor's layout is inconsistent (or of a kind this chip cannot run).
    BadUcodeLayout { what: &'static str },
    /// FWSEC's DMEM could not take the FRTS command.
    Interface(InterfaceError),
    /// The VBIOS carries no signature for this chip's fuse version.
    NoSignatureForFuseVersion { fuse_version: u32, signature_versions: u16 },
    /// A v2 FWSEC needs NVIDIA's generic bootloader, and none was given.
    NoGenericBootloader,
    /// DMA memory for the image could not be allocated.
    Dma(DmaError),
    /// A falcon step failed (reset, load, boot ROM, start, halt timeout).
    Falcon(FalconError),
    /// FWSEC reported an FRTS error in `NV_PBUS_VBIOS_SCRATCH(0x0E)`.
    FrtsErrorCode { code: u16, mailbox0: u32 },
    /// WPR2 is not set up after FWSEC ran (`NV_PFB_PRI_MMU_WPR2_ADDR_HI` reads 0).
    Wpr2NotSet { mailbox0: u32 },
    /// WPR2 is set up, but not over the requested region.
    Wpr2Mismatch { expected: (u64, u64), found: (u64, u64) },
    /// FWSEC reported an SB error in `NV_PBUS_VBIOS_SCRATCH(0x15)`.
    SbErrorCode { code: u16, mailbox0: u32 },
    /// After FWSEC-SB the GFW boot status is not readable, or not COMPLETED.
    GfwNotReadyAfterSb,
}

impl From<FalconError> for FwsecFrtsError {
    fn from(e: FalconError) -> Self {
        Self::Falcon(e)
    }
}

impl From<DmaError> for FwsecFrtsError {
    fn from(e: DmaError) -> Self {
        Self::Dma(e)
    }
}

impl From<InterfaceError> for FwsecFrtsError {
    fn from(e: InterfaceError) -> Self {
        Self::Interface(e)
    }
}

impl fmt::Display for FwsecFrtsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadRegion { offset, size } => {
                write!(f, "FWSEC-FRTS: cannot request FRTS region {offset:#x}+{size:#x} (1 MiB, 4 KiB aligned, non-zero)")
            }
            Self::BadUcodeLayout { what } => write!(f, "FWSEC-FRTS: inconsistent FWSEC layout: {what}"),
            Self::Interface(e) => write!(f, "FWSEC-FRTS: {e}"),
            Self::NoSignatureForFuseVersion { fuse_version, signature_versions } => write!(
                f,
                "FWSEC-FRTS: bad firmware signature: the VBIOS has no FWSEC signature for GSP fuse version \
                 {fuse_version} (signature versions {signature_versions:#06x})"
            ),
            Self::NoGenericBootloader => {
                write!(f, "FWSEC-FRTS: this FWSEC (v2 descriptor) needs NVIDIA's generic falcon bootloader")
            }
            Self::Dma(e) => write!(f, "FWSEC-FRTS: {e}"),
            Self::Falcon(e) => write!(f, "FWSEC-FRTS: {e}"),
            Self::FrtsErrorCode { code, mailbox0 } => write!(
                f,
                "FWSEC-FRTS: FWSEC reported FRTS error code {code:#06x} in NV_PBUS_VBIOS_SCRATCH(0x0e) \
                 (GSP MAILBOX0 {mailbox0:#010x})"
            ),
            Self::Wpr2NotSet { mailbox0 } => write!(
                f,
                "FWSEC-FRTS: no WPR2 after FWSEC ran (NV_PFB_PRI_MMU_WPR2_ADDR_HI is 0; GSP MAILBOX0 {mailbox0:#010x})"
            ),
            Self::SbErrorCode { code, mailbox0 } => write!(
                f,
                "FWSEC-SB: FWSEC reported SB error code {code:#06x} in NV_PBUS_VBIOS_SCRATCH(0x15) (GSP MAILBOX0 {mailbox0:#010x})"
            ),
            Self::GfwNotReadyAfterSb => {
                write!(f, "FWSEC-SB: the GFW boot status is not readable and COMPLETED afterwards")
            }
            Self::Wpr2Mismatch { expected, found } => write!(
                f,
                "FWSEC-FRTS: WPR2 is {:#x}..={:#x}, expected the FRTS region {:#x}..={:#x}",
                found.0, found.1, expected.0, expected.1
            ),
        }
    }
}

fn align_256(value: u32) -> Option<u32> {
    value.checked_add(FALCON_BLOCK - 1).map(|v| v & !(FALCON_BLOCK - 1))
}

/// How a v3 FWSEC loads by DMA from its image (IMEM, then DMEM, as [`Fwsec::imem`] and
/// [`Fwsec::dmem`] lie one after the other): IMEM secure at its physical base with its virtual
/// tag base, DMEM after it, as [`run_fwsec_frts`] loads it.
pub fn v3_dma_segments(desc: &super::FalconUcodeDescV3) -> [DmaSegment; 2] {
    [
        DmaSegment {
            memory: FalconMemory::Imem { secure: true },
            source_offset: 0,
            falcon_offset: desc.imem_phys_base,
            len: desc.imem_load_size,
            virtual_address: Some(desc.imem_virt_base),
        },
        DmaSegment {
            memory: FalconMemory::Dmem,
            source_offset: desc.imem_load_size,
            falcon_offset: desc.dmem_phys_base,
            len: desc.dmem_load_size,
            virtual_address: None,
        },
    ]
}

/// Runs FWSEC-FRTS on the GSP falcon `gsp` of a chip with HAL `hal`, asking for `region`, and
/// checks the postcondition. The falcon is reset first, as RM resets it just before
/// (`kgspBootstrapRiscvOSEarly_*`). `generic_bootloader` is needed for v2 FWSEC only.
pub fn run_fwsec_frts<R: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gsp: &Falcon<R, C, Gsp>,
    hal: &Hal,
    dma: &A,
    fwsec: &Fwsec<'_>,
    region: FrtsRegion,
    generic_bootloader: Option<&GenericBootloader<'_>>,
) -> Result<FwsecFrtsOutcome, FwsecFrtsError> {
    if region.size != FRTS_REGION_SIZE || region.offset == 0 || !region.offset.is_multiple_of(0x1000) {
        return Err(FwsecFrtsError::BadRegion { offset: region.offset, size: region.size });
    }
    let command = FwseclicFrtsCmd::new(region.offset);
    let (method, fuse_version) = run_fwsec_command(
        gsp,
        hal,
        dma,
        fwsec,
        FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_FRTS,
        command.as_bytes(),
        FWSECLIC_FRTS_CMD_FIELDS_SIZE,
        generic_bootloader,
    )?;
    let mailbox0 = gsp.mailboxes().mailbox0;
    let wpr2 = check_frts_postcondition(gsp.io(), region, mailbox0)?;
    log::info!("{}: FWSEC-FRTS done, WPR2 {:#x}..={:#x}", engine_name(gsp.engine()), wpr2.0, wpr2.1);
    Ok(FwsecFrtsOutcome { method, fuse_version, wpr2, mailbox0 })
}

/// Runs FWSEC's SB command ("put back the pre-OS applications", `kgspExecuteFwsecSb_TU102`),
/// which RM runs at unload before booter_unload, and checks its postcondition: the GFW boot
/// status readable and COMPLETED, and no SB error code in `NV_PBUS_VBIOS_SCRATCH(0x15)`.
pub fn run_fwsec_sb<R: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gsp: &Falcon<R, C, Gsp>,
    hal: &Hal,
    dma: &A,
    fwsec: &Fwsec<'_>,
    generic_bootloader: Option<&GenericBootloader<'_>>,
) -> Result<FwsecMethod, FwsecFrtsError> {
    let command = FwseclicReadVbiosDesc::rm_default();
    let (method, _) = run_fwsec_command(
        gsp,
        hal,
        dma,
        fwsec,
        FALCON_APPLICATION_INTERFACE_DMEM_MAPPER_V3_CMD_SB,
        command.as_bytes(),
        size_of::<FwseclicReadVbiosDesc>(),
        generic_bootloader,
    )?;
    let io = gsp.io();
    let plm = gc6::NV_PGC6_AON_SECURE_SCRATCH_GROUP_05_PRIV_LEVEL_MASK::read(io);
    if !plm.read_protection_level0() || !gc6::gfw_boot_completed(io) {
        return Err(FwsecFrtsError::GfwNotReadyAfterSb);
    }
    if let Err(code) = bus::fwsec_sb_result(io) {
        return Err(FwsecFrtsError::SbErrorCode { code, mailbox0: gsp.mailboxes().mailbox0 });
    }
    Ok(method)
}

/// Loads FWSEC with `cmd` and its `cmd_bytes` (at least `required` of them must fit the
/// command buffer) on the GSP falcon and runs it to its halt; returns how, and the fuse version
/// the signature was chosen for.
#[allow(clippy::too_many_arguments)]
fn run_fwsec_command<R: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gsp: &Falcon<R, C, Gsp>,
    hal: &Hal,
    dma: &A,
    fwsec: &Fwsec<'_>,
    cmd: u32,
    cmd_bytes: &[u8],
    required: usize,
    generic_bootloader: Option<&GenericBootloader<'_>>,
) -> Result<(FwsecMethod, u32), FwsecFrtsError> {
    match &fwsec.descriptor {
        FwsecDescriptor::V3(desc) => {
            if hal.falcon_layout != FalconLayout::Ga102 {
                return Err(FwsecFrtsError::BadUcodeLayout { what: "a v3 FWSEC needs a GA102-layout falcon" });
            }
            // The image as DMA sees it: IMEM, then DMEM, each padded to whole 256-byte blocks
            // (DMEM starts right after the code: `dataOffset = imemSize`).
            let imem_len = fwsec.imem().len();
            let mut image = fwsec.imem().to_vec();
            image.extend_from_slice(fwsec.dmem());
            let dmem_end = image.len();
            let padded = align_256(image.len() as u32)
                .ok_or(FwsecFrtsError::BadUcodeLayout { what: "FWSEC image size overflows" })?;
            image.resize(padded as usize, 0);

            // The command, patched into the DMEM part.
            let dmem_part = image
                .get_mut(imem_len..dmem_end)
                .ok_or(FwsecFrtsError::BadUcodeLayout { what: "FWSEC data outside its image" })?;
            patch_interface_data(dmem_part, desc.interface_offset, cmd, cmd_bytes, required)?;

            // The signature this chip's GSP fuse selects.
            let fuse_version = read_ucode_fuse_version(gsp.io(), hal.family, FuseEngine::Gsp, desc.ucode_id.into());
            let signature =
                fwsec.signature_for_fuse_version(fuse_version).ok_or(FwsecFrtsError::NoSignatureForFuseVersion {
                    fuse_version,
                    signature_versions: desc.signature_versions,
                })?;
            let location = HsSignatureLocation::from_fwsec_v3(desc)?;
            patch_signature(&mut image, location.patch_loc, signature)?;

            let buffer = DmaRegion::with_bytes(dma, &image, image.len())?;
            let dma_buffer = buffer.buffer().ok_or(DmaError { requested: image.len() })?;
            gsp.reset()?;
            gsp.load_dma(dma_buffer, DmaTarget::CoherentSysmem, &v3_dma_segments(desc))?;
            gsp.program_brom(&BromParams::from_fwsec_v3(desc))?;
            gsp.execute(desc.imem_virt_base, Mailboxes::default(), FWSEC_TIMEOUT_MS)?;
            drop(buffer);
            Ok((FwsecMethod::BootFromHs, fuse_version))
        }
        FwsecDescriptor::V2(desc) => {
            let loader = generic_bootloader.ok_or(FwsecFrtsError::NoGenericBootloader)?;
            run_with_loader(gsp, dma, fwsec, desc, loader, cmd, cmd_bytes, required)?;
            Ok((FwsecMethod::BootWithLoader, 0))
        }
    }
}

/// The FRTS postcondition: no FRTS error code, WPR2 set up over exactly `region`.
pub fn check_frts_postcondition(
    io: &(impl RegisterIo + ?Sized),
    region: FrtsRegion,
    mailbox0: u32,
) -> Result<(u64, u64), FwsecFrtsError> {
    if let Err(code) = bus::fwsec_frts_result(io) {
        return Err(FwsecFrtsError::FrtsErrorCode { code, mailbox0 });
    }
    let last_unit =
        fb::NV_PFB_PRI_MMU_WPR2_ADDR_HI::read(io).last_unit_address().ok_or(FwsecFrtsError::Wpr2NotSet { mailbox0 })?;
    let start = fb::NV_PFB_PRI_MMU_WPR2_ADDR_LO::read(io).start_address();
    let found = (start, last_unit.saturating_add(0xfff));
    let expected = (region.offset, region.last_byte());
    if found != expected {
        return Err(FwsecFrtsError::Wpr2Mismatch { expected, found });
    }
    Ok(found)
}

/// `kflcnDisableCtxReq_TU102`: lets the falcon's DMA use physical addresses without a context
/// (`FBIF_CTL_ALLOW_PHYS_NO_CTX`, `DMACTL` cleared). Returns the FBIF base.
pub(crate) fn disable_ctx_req<R: RegisterIo, C: Clock, E: HostBooted>(
    falcon: &Falcon<R, C, E>,
) -> Result<u32, FalconError> {
    let fbif = falcon
        .unit()
        .fbif_base
        .ok_or(FalconError::Unsupported { engine: falcon.engine(), what: "DMA through the FBIF" })?;
    let io = falcon.io();
    NV_PFALCON_FBIF_CTL::modify(io, fbif, |r| r.with(NV_PFALCON_FBIF_CTL::ALLOW_PHYS_NO_CTX, true));
    NV_PFALCON_FALCON_DMACTL::default().write(io, falcon.unit().base);
    Ok(fbif)
}

/// The Turing/GA100 path: FWSEC's code and data in DMA buffers, the generic bootloader in IMEM
/// (`s_vbiosFillFlcnUcodeFromDescV2`, `s_prepareHsFalconWithLoader`, `kgspExecuteHsFalcon_TU102`).
#[allow(clippy::too_many_arguments)]
fn run_with_loader<R: RegisterIo, C: Clock, A: DmaAllocator + ?Sized>(
    gsp: &Falcon<R, C, Gsp>,
    dma: &A,
    fwsec: &Fwsec<'_>,
    desc: &FalconUcodeDescV2,
    loader: &GenericBootloader<'_>,
    cmd: u32,
    command: &[u8],
    required: usize,
) -> Result<(), FwsecFrtsError> {
    let layout = |what| FwsecFrtsError::BadUcodeLayout { what };
    // The split RM makes of the v2 code: non-secure first, then the secure part.
    let imem_size = desc.imem_load_size;
    let imem_ns_size = imem_size.checked_sub(desc.imem_sec_size).ok_or(layout("IMEMSecSize exceeds IMEMLoadSize"))?;
    let imem_ns_pa = desc.imem_phys_base;
    let imem_sec_size = align_256(desc.imem_sec_size).ok_or(layout("IMEMSecSize overflows"))?;
    let imem_sec_pa = desc
        .imem_sec_base
        .checked_sub(desc.imem_virt_base)
        .and_then(|v| v.checked_add(desc.imem_phys_base))
        .ok_or(layout("IMEMSecBase below IMEMVirtBase"))?;
    let code_size_aligned = align_256(imem_size).ok_or(layout("IMEMLoadSize overflows"))?;
    let data_size_aligned = align_256(desc.dmem_load_size).ok_or(layout("DMEMLoadSize overflows"))?;
    if imem_ns_pa >= code_size_aligned.max(1)
        || u64::from(imem_ns_pa).saturating_add(u64::from(imem_size)) > code_size_aligned.into()
    {
        return Err(layout("IMEMPhysBase places the code outside its buffer"));
    }
    let dmem_pa = desc.dmem_phys_base;
    if dmem_pa >= data_size_aligned.max(1)
        || u64::from(dmem_pa).saturating_add(u64::from(desc.dmem_load_size)) > data_size_aligned.into()
    {
        return Err(layout("DMEMPhysBase places the data outside its buffer"));
    }

    let mut code = vec![0u8; code_size_aligned as usize];
    code.get_mut(imem_ns_pa as usize..)
        .and_then(|rest| rest.get_mut(..fwsec.imem().len()))
        .filter(|_| fwsec.imem().len() == imem_size as usize)
        .ok_or(layout("FWSEC code is not IMEMLoadSize bytes"))?
        .copy_from_slice(fwsec.imem());
    let mut data = vec![0u8; data_size_aligned as usize];
    data.get_mut(dmem_pa as usize..)
        .and_then(|rest| rest.get_mut(..fwsec.dmem().len()))
        .filter(|_| fwsec.dmem().len() == desc.dmem_load_size as usize)
        .ok_or(layout("FWSEC data is not DMEMLoadSize bytes"))?
        .copy_from_slice(fwsec.dmem());
    // RM patches the mapped data from its start, over `dmemSize` bytes.
    patch_interface_data(
        data.get_mut(..desc.dmem_load_size as usize).unwrap_or(&mut []),
        desc.interface_offset,
        cmd,
        command,
        required,
    )?;
    let code_buf = DmaRegion::with_bytes(dma, &code, code.len())?;
    let data_buf = DmaRegion::with_bytes(dma, &data, data.len())?;

    let bl_dmem = RmFlcnBlDmemDesc {
        ctx_dma: GENERIC_BL_CTX_DMA,
        code_dma_base: RmFlcnU64::pack(code_buf.bus_address()),
        non_secure_code_off: imem_ns_pa,
        non_secure_code_size: imem_ns_size,
        secure_code_off: imem_sec_pa,
        secure_code_size: imem_sec_size,
        code_entry_point: 0,
        data_dma_base: RmFlcnU64::pack(data_buf.bus_address()),
        data_size: desc.dmem_load_size,
        ..Default::default()
    };
    let bl_size = align_256(loader.desc.bl_img_header.bl_code_size).ok_or(layout("bootloader size overflows"))?;
    let bl_code = loader.image.get(..bl_size as usize).ok_or(layout("bootloader image shorter than its code"))?;
    let imem_total = gsp.imem_size();
    let bl_imem_offset = imem_total.checked_sub(bl_size).ok_or(layout("bootloader larger than IMEM"))?;
    let bl_virtual = loader.desc.bl_start_tag << 8;

    gsp.reset()?;
    // kflcnDisableCtxReq, then FBIF context `ctxDma` as physical coherent system memory.
    let fbif = disable_ctx_req(gsp)?;
    let io = gsp.io();
    NV_PFALCON_FBIF_TRANSCFG::read(io, fbif, GENERIC_BL_CTX_DMA)
        .with(NV_PFALCON_FBIF_TRANSCFG::TARGET, FbifTarget::CoherentSysmem)
        .with(NV_PFALCON_FBIF_TRANSCFG::MEM_TYPE, FbifMemType::Physical)
        .write(io, fbif, GENERIC_BL_CTX_DMA);
    gsp.load_dmem(0, bl_dmem.as_bytes())?;
    gsp.load_imem(bl_imem_offset, bl_code, bl_virtual, false)?;
    gsp.execute(bl_virtual, Mailboxes::default(), FWSEC_TIMEOUT_MS)?;
    drop((code_buf, data_buf));
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

    use super::*;

    #[test]
    fn frts_command_bytes_are_rms() {
        let cmd = FwseclicFrtsCmd::new(0x5_ffe0_0000);
        let b = cmd.as_bytes();
        assert_eq!(b.len(), 48);
        let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        // readVbiosDesc {1, 24, 0 (u64), 0, flags 2}
        assert_eq!((word(0), word(4), word(8), word(12), word(16), word(20)), (1, 24, 0, 0, 0, 2));
        // frtsRegionDesc {1, 20, offset >> 12, 0x100, media FB 2}
        assert_eq!((word(24), word(28), word(32), word(36), word(40)), (1, 20, 0x5ffe00, 0x100, 2));
        assert_eq!(word(44), 0, "tail padding");
    }

    fn dmem_with_mapper(buffer_size: u32) -> Vec<u8> {
        let mut dmem = vec![0u8; 0x400];
        dmem[0x10..0x14].copy_from_slice(&[1, 4, 8, 2]);
        dmem[0x14..0x18].copy_from_slice(&5u32.to_le_bytes());
        dmem[0x18..0x1c].copy_from_slice(&0x180u32.to_le_bytes());
        dmem[0x1c..0x20].copy_from_slice(&FALCON_APPLICATION_INTERFACE_ENTRY_ID_DMEMMAPPER.to_le_bytes());
        dmem[0x20..0x24].copy_from_slice(&0x100u32.to_le_bytes());
        dmem[0x100..0x104].copy_from_slice(b"DMAP");
        dmem[0x108..0x10c].copy_from_slice(&0x200u32.to_le_bytes());
        dmem[0x10c..0x110].copy_from_slice(&buffer_size.to_le_bytes());
        dmem
    }

    #[test]
    fn interface_patch_sets_init_cmd_and_copies_the_command() {
        let mut dmem = dmem_with_mapper(0x40);
        let cmd = FwseclicFrtsCmd::new(0x1000);
        assert_eq!(patch_interface_data(&mut dmem, 0x10, 0x15, cmd.as_bytes(), 44), Ok(0x100));
        assert_eq!(&dmem[0x12c..0x130], &0x15u32.to_le_bytes());
        assert_eq!(&dmem[0x200..0x230], cmd.as_bytes());
    }

    #[test]
    fn interface_patch_refusals() {
        let cmd = FwseclicFrtsCmd::new(0x1000);
        let mut small = dmem_with_mapper(40);
        assert_eq!(
            patch_interface_data(&mut small, 0x10, 0x15, cmd.as_bytes(), 44),
            Err(InterfaceError::CommandBufferTooSmall { size: 40, needed: 44 })
        );
        // Exactly the fields: 44 bytes copied, padding dropped.
        let mut exact = dmem_with_mapper(44);
        assert!(patch_interface_data(&mut exact, 0x10, 0x15, cmd.as_bytes(), 44).is_ok());
        let mut one_entry = dmem_with_mapper(0x40);
        one_entry[0x13] = 1;
        assert_eq!(
            patch_interface_data(&mut one_entry, 0x10, 0x15, cmd.as_bytes(), 44),
            Err(InterfaceError::TooFewEntries { entries: 1 })
        );
        let mut no_mapper = dmem_with_mapper(0x40);
        no_mapper[0x1c] = 9;
        assert_eq!(
            patch_interface_data(&mut no_mapper, 0x10, 0x15, cmd.as_bytes(), 44),
            Err(InterfaceError::NoDmemMapper)
        );
        let mut outside = dmem_with_mapper(0x40);
        outside[0x108..0x10c].copy_from_slice(&0x3f0u32.to_le_bytes());
        assert!(matches!(
            patch_interface_data(&mut outside, 0x10, 0x15, cmd.as_bytes(), 44),
            Err(InterfaceError::OutOfBounds { what: "FWSEC command-in buffer", .. })
        ));
        assert!(matches!(
            patch_interface_data(&mut outside, 0x3fe, 0x15, cmd.as_bytes(), 44),
            Err(InterfaceError::OutOfBounds { what: "application interface header", .. })
        ));
    }
}
