//! LIBOS init arguments: the table of memory regions GSP-RM's LIBOS kernel is told about at boot
//! (`src/common/uproc/os/common/include/libos_init_args.h`, 535.261.03).
//!
//! RM fills one 4 KiB page (`LIBOS_INIT_ARGUMENTS_SIZE`, `g_kernel_gsp_nvoc.h`) with these
//! entries in `kgspSetupLibosInitArgs` (`kernel_gsp.c`): the three log buffers first
//! ("LOGINIT" must be first for early init logging), then "RMARGS", the page holding
//! [`super::GspArgumentsCached`]. The rest of the page stays zero (kind `NONE` ends the table).
//! Each entry is named by an 8-byte tag, [`init_arg_id`].

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `LIBOS_MEMORY_REGION_INIT_ARGUMENTS_MAX`: the most entries LIBOS reads.
pub const LIBOS_MEMORY_REGION_INIT_ARGUMENTS_MAX: usize = 4096;
/// `LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE`: page size of radix regions (and of [`super::radix3`]).
pub const LIBOS_MEMORY_REGION_RADIX_PAGE_SIZE: u64 = 4096;
/// `LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2`.
pub const LIBOS_MEMORY_REGION_RADIX_PAGE_LOG2: u32 = 12;
/// `LIBOS_INIT_ARGUMENTS_SIZE` (`g_kernel_gsp_nvoc.h`): bytes RM reserves for the entry table.
pub const LIBOS_INIT_ARGUMENTS_SIZE: usize = 0x1000;
/// How many [`LibosMemoryRegionInitArgument`]s fit in [`LIBOS_INIT_ARGUMENTS_SIZE`].
pub const LIBOS_INIT_ARGUMENTS_COUNT: usize =
    LIBOS_INIT_ARGUMENTS_SIZE / core::mem::size_of::<LibosMemoryRegionInitArgument>();

/// Size of each GSP-RM log buffer in a release build of RM (`logInitValues` in
/// `_kgspInitLibosLoggingStructures`, `kernel_gsp.c`): 64 KiB for "LOGINIT", "LOGINTR", "LOGRM".
pub const LIBOS_LOG_BUFFER_SIZE: u64 = 0x10000;

/// Packs up to the first 8 bytes of `name` (stopping at a NUL) into a region tag, the way RM's
/// `_kgspGenerateInitArgId` (`kernel_gsp.c`) does: each byte shifts the tag left by 8, so the
/// first character ends up in the most significant used byte ("RMARGS" is `0x524d_4152_4753`).
pub const fn init_arg_id(name: &[u8]) -> u64 {
    let mut id = 0u64;
    let mut i = 0;
    while i < name.len() && i < 8 {
        let c = name[i];
        if c == 0 {
            break;
        }
        id = (id << 8) | c as u64;
        i += 1;
    }
    id
}

/// Tag of the init-task log buffer (`"LOGINIT"`).
pub const LOGINIT_ID: u64 = init_arg_id(b"LOGINIT");
/// Tag of the interrupt-task log buffer (`"LOGINTR"`).
pub const LOGINTR_ID: u64 = init_arg_id(b"LOGINTR");
/// Tag of the RM-task log buffer (`"LOGRM"`).
pub const LOGRM_ID: u64 = init_arg_id(b"LOGRM");
/// Tag of the GSP-RM arguments page, [`super::GspArgumentsCached`] (`"RMARGS"`).
pub const RMARGS_ID: u64 = init_arg_id(b"RMARGS");

/// `LibosMemoryRegionKind`: how a region is mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LibosMemoryRegionKind {
    /// `LIBOS_MEMORY_REGION_NONE`: unused entry (ends the table).
    None = 0,
    /// `LIBOS_MEMORY_REGION_CONTIGUOUS`: `pa` is the first byte of a physically contiguous range.
    Contiguous = 1,
    /// `LIBOS_MEMORY_REGION_RADIX3`: `pa` is the root of a [`super::radix3`] table.
    Radix3 = 2,
}

impl LibosMemoryRegionKind {
    /// Decodes a `kind` byte; `None` for values the header does not name.
    pub const fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            0 => Some(Self::None),
            1 => Some(Self::Contiguous),
            2 => Some(Self::Radix3),
            _ => None,
        }
    }
}

/// `LibosMemoryRegionLoc`: which memory a region is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LibosMemoryRegionLoc {
    /// `LIBOS_MEMORY_REGION_LOC_NONE`.
    None = 0,
    /// `LIBOS_MEMORY_REGION_LOC_SYSMEM`: system memory, by bus address.
    Sysmem = 1,
    /// `LIBOS_MEMORY_REGION_LOC_FB`: the GPU's framebuffer.
    Fb = 2,
}

impl LibosMemoryRegionLoc {
    /// Decodes a `loc` byte; `None` for values the header does not name.
    pub const fn from_raw(raw: u8) -> Option<Self> {
        match raw {
            0 => Some(Self::None),
            1 => Some(Self::Sysmem),
            2 => Some(Self::Fb),
            _ => None,
        }
    }
}

/// `LibosMemoryRegionInitArgument` (`libos_init_args.h`): one memory region LIBOS maps for
/// GSP-RM, found by its tag. 32 bytes; owns nothing (it describes memory the driver owns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct LibosMemoryRegionInitArgument {
    /// `id8`: the region's tag, [`init_arg_id`] of its name.
    pub id8: u64,
    /// `pa`: bus address of the region (or of its radix3 root).
    pub pa: u64,
    /// `size`: bytes in the region.
    pub size: u64,
    /// `kind`: a [`LibosMemoryRegionKind`].
    pub kind: u8,
    /// `loc`: a [`LibosMemoryRegionLoc`].
    pub loc: u8,
    /// Trailing padding of the C struct (its alignment is 8).
    pub _padding: [u8; 6],
}

impl LibosMemoryRegionInitArgument {
    /// A physically contiguous system-memory region, the only kind RM 535 passes
    /// (`kgspSetupLibosInitArgs`).
    pub const fn contiguous_sysmem(id8: u64, pa: u64, size: u64) -> Self {
        Self {
            id8,
            pa,
            size,
            kind: LibosMemoryRegionKind::Contiguous as u8,
            loc: LibosMemoryRegionLoc::Sysmem as u8,
            _padding: [0; 6],
        }
    }

    /// The decoded kind, or `None` when the byte is not one the header names.
    pub const fn region_kind(&self) -> Option<LibosMemoryRegionKind> {
        LibosMemoryRegionKind::from_raw(self.kind)
    }

    /// The decoded location, or `None` when the byte is not one the header names.
    pub const fn region_loc(&self) -> Option<LibosMemoryRegionLoc> {
        LibosMemoryRegionLoc::from_raw(self.loc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id8_packs_first_character_highest() {
        // 'L' 'O' 'G' 'I' 'N' 'I' 'T' = 4c 4f 47 49 4e 49 54, seven bytes, first one highest.
        assert_eq!(LOGINIT_ID, 0x004c_4f47_494e_4954);
        // 'L' 'O' 'G' 'I' 'N' 'T' 'R' = 4c 4f 47 49 4e 54 52.
        assert_eq!(LOGINTR_ID, 0x004c_4f47_494e_5452);
        // 'L' 'O' 'G' 'R' 'M' = 4c 4f 47 52 4d.
        assert_eq!(LOGRM_ID, 0x0000_004c_4f47_524d);
        // 'R' 'M' 'A' 'R' 'G' 'S' = 52 4d 41 52 47 53.
        assert_eq!(RMARGS_ID, 0x0000_524d_4152_4753);
        // "LOGVGPU", another name RM uses, for good measure.
        assert_eq!(init_arg_id(b"LOGVGPU"), 0x004c_4f47_5647_5055);
    }

    #[test]
    fn id8_stops_at_nul_and_after_eight_bytes() {
        assert_eq!(init_arg_id(b"RM\0ARGS"), 0x524d);
        assert_eq!(init_arg_id(b""), 0);
        // Only the first eight characters count: "ABCDEFGHIJ" -> "ABCDEFGH".
        assert_eq!(init_arg_id(b"ABCDEFGHIJ"), 0x4142_4344_4546_4748);
    }

    #[test]
    fn region_round_trips_through_bytes() {
        let arg = LibosMemoryRegionInitArgument::contiguous_sysmem(RMARGS_ID, 0x1_2345_6000, 0x1000);
        let bytes = arg.as_bytes();
        assert_eq!(bytes.len(), 32);
        assert_eq!(&bytes[0..8], &RMARGS_ID.to_le_bytes());
        assert_eq!(&bytes[8..16], &0x1_2345_6000u64.to_le_bytes());
        assert_eq!(&bytes[16..24], &0x1000u64.to_le_bytes());
        assert_eq!(bytes[24], 1, "kind CONTIGUOUS");
        assert_eq!(bytes[25], 1, "loc SYSMEM");
        assert_eq!(&bytes[26..], &[0; 6]);
        let back = LibosMemoryRegionInitArgument::read_from_bytes(bytes).unwrap();
        assert_eq!(back, arg);
        assert_eq!(back.region_kind(), Some(LibosMemoryRegionKind::Contiguous));
        assert_eq!(back.region_loc(), Some(LibosMemoryRegionLoc::Sysmem));
        assert_eq!(LIBOS_INIT_ARGUMENTS_COUNT, 128);
    }

    #[test]
    fn unknown_kind_and_loc_decode_to_none() {
        let arg = LibosMemoryRegionInitArgument { kind: 7, loc: 3, ..Default::default() };
        assert_eq!(arg.region_kind(), None);
        assert_eq!(arg.region_loc(), None);
    }
}
