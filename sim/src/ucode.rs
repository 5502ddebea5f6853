//! The model's falcon ucode format: what the model's falcons run instead of NVIDIA's code.
//!
//! We cannot ship NVIDIA's ucode, and the model does not execute falcon instructions. Instead the
//! IMEM image of every ucode the model builds (today: the FWSEC in its VBIOS) begins with a
//! [`ModelUcodeHeader`]; the model's falcon finds that header at `BOOTVEC`, checks it and the
//! image it describes, and runs the application it names as Rust code. Any other IMEM content
//! started on a model falcon halts it with [`HaltCode::UnrecognisedUcode`] in `MAILBOX0`.
//!
//! # Header (little-endian, at IMEM virtual address `BOOTVEC`)
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0x00 | 8 | `magic` | `b"NVSIMUC\0"` ([`MODEL_UCODE_MAGIC`]) |
//! | 0x08 | 4 | `application_id` | what runs: 1 = FWSEC ([`APPLICATION_FWSEC`]) |
//! | 0x0C | 4 | `version` | header version, 1 ([`MODEL_UCODE_VERSION`]) |
//! | 0x10 | 4 | `interface_offset` | DMEM offset of the application interface table (FWSEC: the same value as the VBIOS descriptor's `InterfaceOffset`) |
//! | 0x14 | 4 | `header_size` | 0x30 ([`MODEL_UCODE_HEADER_SIZE`]) |
//! | 0x18 | 4 | `image_size` | bytes of IMEM the image spans from `BOOTVEC`, header included; a multiple of 256 |
//! | 0x1C | 4 | `checksum` | FNV-1a 32 of image bytes `header_size..image_size` ([`fnv1a32`]) |
//! | 0x20 | 4 | `flags` | [`FLAG_HS`], [`FLAG_PKC`], [`FLAG_DEBUG_SIGNED`] |
//! | 0x24 | 4 | `ucode_id` | the fuse ucode id whose version selects the signature (PKC images) |
//! | 0x28 | 4 | `engine_id_mask` | what the boot ROM must be told in `BROM_ENGIDMASK` (PKC images) |
//! | 0x2C | 4 | `reserved` | 0 |
//!
//! The rest of the image is filler text (it says what it is, for whoever dumps IMEM).
//!
//! # Checks a start makes, in order (each failure halts with its [`HaltCode`])
//! 1. an IMEM block is tagged with `BOOTVEC >> 8` (exactly one), and the header is there;
//! 2. magic, version, header size and image size are valid;
//! 3. every 256-byte block of the image is loaded (found by tag), and the checksum matches;
//! 4. `FLAG_HS`: every block of the image was loaded secure (`IMEMC.SECURE` or `DMATRFCMD.SEC`);
//! 5. `FLAG_DEBUG_SIGNED` matches the part's fusing (`NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS`);
//! 6. `FLAG_PKC` (GA102 and later): the boot ROM registers hold RSA-3K (`MOD_SEL`), this image's
//!    ucode id (`BROM_CURR_UCODE_ID`) and engine mask (`BROM_ENGIDMASK`), and DMEM at
//!    `BROM_PARAADDR(0)` holds [`model_signature`] for the fuse version of that ucode id;
//! 7. the application runs on an engine it is built for (FWSEC: GSP).
//!
//! # Signatures
//! The model cannot check RSA signatures, and must not pretend to. [`model_signature`] is a
//! deterministic 384-byte pattern derived from the image checksum, the fuse version and the
//! debug/production signing; the VBIOS builder stores one per signature version, and the model's
//! boot ROM recomputes the one the fuse selects. It proves one thing: the driver patched in the
//! signature NVIDIA's selection rule picks (`s_executeFwsec_TU102`), not a neighbour.

use alloc::vec::Vec;

use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// First 8 bytes of every model ucode image.
pub const MODEL_UCODE_MAGIC: [u8; 8] = *b"NVSIMUC\0";
/// The header version this model writes and accepts.
pub const MODEL_UCODE_VERSION: u32 = 1;
/// Size of [`ModelUcodeHeader`].
pub const MODEL_UCODE_HEADER_SIZE: u32 = 0x30;
/// Application id of the model FWSEC.
pub const APPLICATION_FWSEC: u32 = 1;

/// Heavy-secure: every block of the image must have been loaded as secure IMEM.
pub const FLAG_HS: u32 = 1 << 0;
/// The boot ROM verifies a PKC (RSA-3K) signature patched into DMEM (GA102 and later).
pub const FLAG_PKC: u32 = 1 << 1;
/// Signed for debug-fused parts (FWSEC_DBG); production parts refuse it, and the reverse.
pub const FLAG_DEBUG_SIGNED: u32 = 1 << 2;
/// Every flag this header version defines.
pub const FLAGS_KNOWN: u32 = FLAG_HS | FLAG_PKC | FLAG_DEBUG_SIGNED;

/// Size of one signature (`BCRT30_RSA3K_SIG_SIZE`).
pub const SIGNATURE_SIZE: usize = nvgpu::hw::vbios::BCRT30_RSA3K_SIG_SIZE as usize;

/// The model ucode header. See the module documentation for the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ModelUcodeHeader {
    pub magic: [u8; 8],
    pub application_id: U32,
    pub version: U32,
    pub interface_offset: U32,
    pub header_size: U32,
    pub image_size: U32,
    pub checksum: U32,
    pub flags: U32,
    pub ucode_id: U32,
    pub engine_id_mask: U32,
    pub reserved: U32,
}

const _: () = assert!(core::mem::size_of::<ModelUcodeHeader>() == MODEL_UCODE_HEADER_SIZE as usize);

/// Why a model falcon halted: the value it leaves in `MAILBOX0`.
///
/// 0 is success (what FWSEC leaves and what RM and Nova check for). Every error is
/// `0x5100_0000 | n`: the 0x51 ("model") prefix keeps the codes apart from small values a real
/// ucode might leave, and from the 0xBADF register poison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum HaltCode {
    /// The application ran and succeeded.
    Success = 0,
    /// No IMEM block is tagged with `BOOTVEC >> 8`: nothing was loaded where execution starts.
    NoImageAtBootvec = 0x5100_0001,
    /// The IMEM at `BOOTVEC` does not begin with the model ucode magic: not code this model runs
    /// (e.g. NVIDIA's real ucode, or a wrong load offset).
    UnrecognisedUcode = 0x5100_0002,
    /// The header's version, size or image size is invalid.
    BadHeader = 0x5100_0003,
    /// A 256-byte block of the image is not loaded (no IMEM block carries its tag).
    ImageIncomplete = 0x5100_0004,
    /// Two IMEM blocks carry the same tag (the falcon's lookup would be ambiguous).
    MultipleTagHit = 0x5100_0005,
    /// The image bytes do not match the header's checksum (corrupted or misordered upload).
    ChecksumMismatch = 0x5100_0006,
    /// A heavy-secure image was (partly) loaded into non-secure IMEM.
    NotSecure = 0x5100_0007,
    /// Debug-signed ucode on a production part, or production-signed on a debug part.
    WrongFuseMode = 0x5100_0008,
    /// The boot ROM registers were not programmed for this image (`MOD_SEL`,
    /// `BROM_CURR_UCODE_ID`, `BROM_ENGIDMASK`, or `BROM_PARAADDR(0)` outside DMEM).
    BromNotProgrammed = 0x5100_0009,
    /// DMEM at `BROM_PARAADDR(0)` does not hold the signature the fuse version selects.
    SignatureRejected = 0x5100_000A,
    /// The header names an application this model does not implement.
    UnknownApplication = 0x5100_000B,
    /// The application was started on an engine it does not run on (FWSEC: only GSP).
    WrongEngine = 0x5100_000C,
    /// The falcon core was started while `BCR_CTRL.CORE_SELECT` selects the RISC-V core.
    WrongCore = 0x5100_000D,
    /// The falcon was started again without an engine reset since its last run (or since power
    /// on, when the boot firmware had used it). RM and Nova reset before every ucode.
    NeedsReset = 0x5100_000E,
    /// The RISC-V core was started but holds no image the model recognises (the model runs no
    /// RISC-V code yet).
    RiscvNoImage = 0x5100_000F,

    /// FWSEC: the application interface table or the DMEM mapper in DMEM is unusable.
    FwsecBadInterface = 0x5100_0010,
    /// FWSEC: `init_cmd` is not a command the model implements (SB, 0x19, included).
    FwsecUnsupportedCommand = 0x5100_0011,
    /// FWSEC-FRTS: the FRTS command in the command-in buffer is malformed.
    FwsecBadFrtsCommand = 0x5100_0012,
    /// FWSEC-FRTS: the FRTS region is empty or lies (partly) outside VRAM.
    FwsecFrtsOutOfRange = 0x5100_0013,
    /// FWSEC-FRTS: WPR2 is already set up (FRTS runs once per boot).
    FwsecWpr2AlreadySet = 0x5100_0014,

    /// NVIDIA's generic falcon bootloader could not load what its `RM_FLCN_BL_DMEM_DESC` names
    /// (a DMA fault, an aperture it cannot use, or code over the loader's own blocks).
    LoaderFailed = 0x5100_0015,
}

impl HaltCode {
    /// Every code.
    pub const ALL: &'static [HaltCode] = &[
        HaltCode::Success,
        HaltCode::NoImageAtBootvec,
        HaltCode::UnrecognisedUcode,
        HaltCode::BadHeader,
        HaltCode::ImageIncomplete,
        HaltCode::MultipleTagHit,
        HaltCode::ChecksumMismatch,
        HaltCode::NotSecure,
        HaltCode::WrongFuseMode,
        HaltCode::BromNotProgrammed,
        HaltCode::SignatureRejected,
        HaltCode::UnknownApplication,
        HaltCode::WrongEngine,
        HaltCode::WrongCore,
        HaltCode::NeedsReset,
        HaltCode::RiscvNoImage,
        HaltCode::FwsecBadInterface,
        HaltCode::FwsecUnsupportedCommand,
        HaltCode::FwsecBadFrtsCommand,
        HaltCode::FwsecFrtsOutOfRange,
        HaltCode::FwsecWpr2AlreadySet,
        HaltCode::LoaderFailed,
    ];

    /// The `MAILBOX0` value.
    pub const fn value(self) -> u32 {
        self as u32
    }

    /// The code a `MAILBOX0` value stands for, if it is one of the model's.
    pub fn from_value(value: u32) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.value() == value)
    }

    /// One line saying what went wrong.
    pub const fn description(self) -> &'static str {
        match self {
            HaltCode::Success => "success",
            HaltCode::NoImageAtBootvec => "no IMEM block tagged for BOOTVEC",
            HaltCode::UnrecognisedUcode => "IMEM at BOOTVEC is not a model ucode (bad magic)",
            HaltCode::BadHeader => "model ucode header invalid",
            HaltCode::ImageIncomplete => "a block of the ucode image is not loaded",
            HaltCode::MultipleTagHit => "two IMEM blocks carry the same tag",
            HaltCode::ChecksumMismatch => "ucode image checksum mismatch",
            HaltCode::NotSecure => "heavy-secure ucode loaded into non-secure IMEM",
            HaltCode::WrongFuseMode => "ucode signed for the other fuse mode (debug/production)",
            HaltCode::BromNotProgrammed => "boot ROM registers not programmed for this ucode",
            HaltCode::SignatureRejected => "signature in DMEM is not the one the fuse version selects",
            HaltCode::UnknownApplication => "unknown model application id",
            HaltCode::WrongEngine => "application started on an engine it does not run on",
            HaltCode::WrongCore => "falcon core started while BCR selects RISC-V",
            HaltCode::NeedsReset => "started again without an engine reset",
            HaltCode::RiscvNoImage => "RISC-V core started without a recognised image",
            HaltCode::FwsecBadInterface => "FWSEC: application interface table or DMEM mapper unusable",
            HaltCode::FwsecUnsupportedCommand => "FWSEC: init_cmd not implemented by the model",
            HaltCode::FwsecBadFrtsCommand => "FWSEC: malformed FRTS command",
            HaltCode::FwsecFrtsOutOfRange => "FWSEC: FRTS region empty or outside VRAM",
            HaltCode::FwsecWpr2AlreadySet => "FWSEC: WPR2 already set up",
            HaltCode::LoaderFailed => "generic bootloader could not load the ucode its DMEM descriptor names",
        }
    }
}

impl core::fmt::Display for HaltCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:#010x} ({})", self.value(), self.description())
    }
}

/// FNV-1a, 32 bits (offset basis 0x811C9DC5, prime 0x01000193): the image checksum. Not a
/// security measure; it catches uploads in the wrong order or at the wrong offset.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811C_9DC5u32, |hash, &b| (hash ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// The stand-in signature for an image with checksum `image_checksum`, signed for fuse version
/// `fuse_version` and for debug (`true`) or production parts: 384 bytes of xorshift32 output
/// seeded from the three. See the module documentation for what it proves and what it does not.
pub fn model_signature(image_checksum: u32, fuse_version: u32, debug: bool) -> [u8; SIGNATURE_SIZE] {
    let mode = if debug { 0xDEB0_0000 } else { 0x9D0D_0000 };
    let mut state = image_checksum ^ fuse_version.wrapping_mul(0x9E37_79B9) ^ mode;
    if state == 0 {
        state = 1;
    }
    let mut out = [0u8; SIGNATURE_SIZE];
    for chunk in out.chunks_mut(4) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let bytes = state.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    out
}

/// What a model ucode image should hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UcodeSpec {
    pub application_id: u32,
    pub interface_offset: u32,
    /// Bytes of IMEM, a multiple of 256 and at least the header.
    pub image_size: u32,
    pub flags: u32,
    pub ucode_id: u32,
    pub engine_id_mask: u32,
}

const FILLER: &[u8] = b"NVIDIA GPU model (sim/): stand-in ucode, run by the model as Rust code; \
not NVIDIA's. See sim/src/ucode.rs. ";

/// Builds the IMEM image for `spec`: header (checksum filled in) then filler text.
/// `image_size` is rounded up to a whole number of 256-byte blocks holding at least the header.
pub fn build_image(spec: &UcodeSpec) -> Vec<u8> {
    let size = spec.image_size.max(MODEL_UCODE_HEADER_SIZE).div_ceil(256) * 256;
    let mut image: Vec<u8> = FILLER.iter().copied().cycle().take(size as usize).collect();
    let mut header = ModelUcodeHeader {
        magic: MODEL_UCODE_MAGIC,
        application_id: U32::new(spec.application_id),
        version: U32::new(MODEL_UCODE_VERSION),
        interface_offset: U32::new(spec.interface_offset),
        header_size: U32::new(MODEL_UCODE_HEADER_SIZE),
        image_size: U32::new(size),
        checksum: U32::new(0),
        flags: U32::new(spec.flags),
        ucode_id: U32::new(spec.ucode_id),
        engine_id_mask: U32::new(spec.engine_id_mask),
        reserved: U32::new(0),
    };
    header.checksum = U32::new(fnv1a32(&image[MODEL_UCODE_HEADER_SIZE as usize..]));
    image[..MODEL_UCODE_HEADER_SIZE as usize].copy_from_slice(header.as_bytes());
    image
}

/// The header at the start of `bytes`, if it has the model's magic; `Err` says why not.
pub fn parse_header(bytes: &[u8]) -> Result<ModelUcodeHeader, HaltCode> {
    let (header, _) = ModelUcodeHeader::read_from_prefix(bytes).map_err(|_| HaltCode::BadHeader)?;
    if header.magic != MODEL_UCODE_MAGIC {
        return Err(HaltCode::UnrecognisedUcode);
    }
    let size = header.image_size.get();
    if header.version.get() != MODEL_UCODE_VERSION
        || header.header_size.get() != MODEL_UCODE_HEADER_SIZE
        || size < MODEL_UCODE_HEADER_SIZE
        || size % 256 != 0
        || header.flags.get() & !FLAGS_KNOWN != 0
        || header.reserved.get() != 0
    {
        return Err(HaltCode::BadHeader);
    }
    Ok(header)
}

/// Whether `image` (exactly `image_size` bytes) matches `header`'s checksum.
pub fn checksum_matches(header: &ModelUcodeHeader, image: &[u8]) -> bool {
    image.get(header.header_size.get() as usize..).is_some_and(|body| fnv1a32(body) == header.checksum.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> UcodeSpec {
        UcodeSpec {
            application_id: APPLICATION_FWSEC,
            interface_offset: 0x1C,
            image_size: 0x300,
            flags: FLAG_HS | FLAG_PKC,
            ucode_id: 9,
            engine_id_mask: 0x400,
        }
    }

    #[test]
    fn built_images_parse_and_check() {
        let image = build_image(&spec());
        assert_eq!(image.len(), 0x300);
        assert_eq!(&image[..8], b"NVSIMUC\0");
        let header = parse_header(&image).unwrap();
        assert_eq!(header.application_id.get(), APPLICATION_FWSEC);
        assert_eq!(header.interface_offset.get(), 0x1C);
        assert!(checksum_matches(&header, &image));
        let mut corrupted = image.clone();
        corrupted[0x200] ^= 1;
        assert!(!checksum_matches(&header, &corrupted));
    }

    #[test]
    fn foreign_code_is_not_recognised() {
        assert_eq!(parse_header(&[0u8; 0x40]), Err(HaltCode::UnrecognisedUcode));
        assert_eq!(parse_header(&[0u8; 4]), Err(HaltCode::BadHeader));
        let mut image = build_image(&spec());
        image[0x20] |= 0x80; // unknown flag
        assert_eq!(parse_header(&image), Err(HaltCode::BadHeader));
    }

    #[test]
    fn signatures_differ_by_every_input() {
        let base = model_signature(1, 2, false);
        assert_ne!(base, model_signature(1, 3, false));
        assert_ne!(base, model_signature(1, 2, true));
        assert_ne!(base, model_signature(5, 2, false));
        assert_eq!(base, model_signature(1, 2, false));
    }

    #[test]
    fn halt_codes_round_trip_and_only_success_is_zero() {
        for &code in HaltCode::ALL {
            assert_eq!(HaltCode::from_value(code.value()), Some(code));
            assert_eq!(code.value() == 0, code == HaltCode::Success);
        }
    }
}
