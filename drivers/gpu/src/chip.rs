//! Chip identification: which chipset a GPU is, from NV_PMC_BOOT_42 (NV_PMC_BOOT_0 where BOOT_42
//! reads zero), and what that chipset needs (boot flow, firmware, classes) through its HAL.
//!
//! Architecture numbers (`nv_ref.h`'s NV_PMC_BOOT_42_ARCHITECTURE_*) and implementation numbers
//! (`nv_arch.h`'s GPU_IMPLEMENTATION_*) of open-gpu-kernel-modules 535.261.03, Blackwell's from
//! 570.133.07, are declared in `hw::pmc`, the firmware families in `hw::fw`; the table here
//! names them.
//! A chip id is `architecture << 4 | implementation` (NV_PMC_BOOT_42_CHIP_ID). Anything not
//! declared here is refused with [`Error::Unsupported`], never guessed.
//!
//! Board names by PCI device id follow the supported-GPU table in the README.md of the same
//! releases.

use core::fmt;

use crate::hal::{self, BootFlow, Family, Hal, MmuVersion, QmdVersion};
use crate::hw::{fw, headers, pmc, Header, RegisterIo};

/// GPU architecture generations the driver supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Architecture {
    Turing,
    Ampere,
    Ada,
    Hopper,
    Blackwell,
}

impl Architecture {
    /// Marketing name.
    pub const fn name(self) -> &'static str {
        match self {
            Architecture::Turing => "Turing",
            Architecture::Ampere => "Ampere",
            Architecture::Ada => "Ada",
            Architecture::Hopper => "Hopper",
            Architecture::Blackwell => "Blackwell",
        }
    }
}

impl fmt::Display for Architecture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! arch_ids {
    ($(
        $(#[$meta:meta])*
        $id:ident = $value:path, $arch:ident, $nv_arch:path;
    )*) => {
        /// Architecture numbers as NV_PMC_BOOT_42_ARCHITECTURE holds them, by NVIDIA's names.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ArchId {
            $( $(#[$meta])* $id, )*
        }

        impl ArchId {
            /// Every supported architecture number.
            pub const ALL: &'static [ArchId] = &[$(ArchId::$id),*];

            /// The number in NV_PMC_BOOT_42_ARCHITECTURE.
            pub const fn value(self) -> u8 {
                match self { $( ArchId::$id => $value, )* }
            }

            /// The generation.
            pub const fn architecture(self) -> Architecture {
                match self { $( ArchId::$id => Architecture::$arch, )* }
            }

            /// The architecture with number `value`, if supported.
            pub const fn from_value(value: u8) -> Option<ArchId> {
                match value { $( $value => Some(ArchId::$id), )* _ => None }
            }
        }

        // nv_arch.h's GPU_ARCHITECTURE_* is the same number shifted by 4 (the chip id of
        // implementation 0): the two headers agree.
        const _: () = { $( assert!(($value as u16) << 4 == $nv_arch); )* };
    };
}

arch_ids! {
    /// Turing.
    TU100 = pmc::NV_PMC_BOOT_42_ARCHITECTURE_TU100, Turing, pmc::GPU_ARCHITECTURE_TURING;
    /// Ampere (GA100 and GA10x).
    GA100 = pmc::NV_PMC_BOOT_42_ARCHITECTURE_GA100, Ampere, pmc::GPU_ARCHITECTURE_AMPERE;
    /// Hopper.
    GH100 = pmc::NV_PMC_BOOT_42_ARCHITECTURE_GH100, Hopper, pmc::GPU_ARCHITECTURE_HOPPER;
    /// Ada.
    AD100 = pmc::NV_PMC_BOOT_42_ARCHITECTURE_AD100, Ada, pmc::GPU_ARCHITECTURE_ADA;
    /// Blackwell datacenter (GB10x).
    GB100 = pmc::NV_PMC_BOOT_42_ARCHITECTURE_GB100, Blackwell, pmc::GPU_ARCHITECTURE_BLACKWELL_GB1XX;
    /// Blackwell client and workstation (GB20x).
    GB200 = pmc::NV_PMC_BOOT_42_ARCHITECTURE_GB200, Blackwell, pmc::GPU_ARCHITECTURE_BLACKWELL_GB2XX;
}

/// Architecture numbers older than Turing (no GSP: not supported), for error messages.
const PRE_TURING: &[(u8, &str)] = &[
    (pmc::NV_PMC_BOOT_42_ARCHITECTURE_GM100, "Maxwell GM10x"),
    (pmc::NV_PMC_BOOT_42_ARCHITECTURE_GM200, "Maxwell GM20x"),
    (pmc::NV_PMC_BOOT_42_ARCHITECTURE_GP100, "Pascal"),
    (pmc::NV_PMC_BOOT_42_ARCHITECTURE_GV100, "Volta GV100"),
    (pmc::NV_PMC_BOOT_42_ARCHITECTURE_GV110, "Volta GV11x"),
];

macro_rules! chipsets {
    ($( $name:ident: $arch:ident, $implementation:path, $family:ident, $fw:ident; )*) => {
        /// A supported GPU chip.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(clippy::upper_case_acronyms)]
        pub enum Chipset {
            $( $name, )*
        }

        impl Chipset {
            /// Every supported chipset.
            pub const ALL: &'static [Chipset] = &[$(Chipset::$name),*];

            /// NVIDIA's name, e.g. "GA102".
            pub const fn name(self) -> &'static str {
                match self { $( Chipset::$name => stringify!($name), )* }
            }

            /// Its architecture number.
            pub const fn arch_id(self) -> ArchId {
                match self { $( Chipset::$name => ArchId::$arch, )* }
            }

            /// Its implementation number within the architecture (GPU_IMPLEMENTATION_*).
            pub const fn implementation(self) -> u8 {
                match self { $( Chipset::$name => $implementation, )* }
            }

            /// Which HAL drives it.
            pub const fn family(self) -> Family {
                match self { $( Chipset::$name => Family::$family, )* }
            }

            /// Which firmware family (per `nv_firmware_get_chip_family` of
            /// nv-firmware-chip-family-select.h: TU102..TU106 are tu10x, later Turing tu11x;
            /// GA100 apart from the other Amperes).
            pub const fn firmware_family(self) -> FirmwareFamily {
                match self { $( Chipset::$name => FirmwareFamily::$fw, )* }
            }

            /// The chipset with this NV_PMC_BOOT_42_CHIP_ID, if supported.
            pub const fn from_chip_id(chip_id: u16) -> Option<Chipset> {
                $( if chip_id == Chipset::$name.chip_id() { return Some(Chipset::$name); } )*
                None
            }
        }
    };
}

chipsets! {
    TU102: TU100, pmc::GPU_IMPLEMENTATION_TU102, Turing, Tu10x;
    TU104: TU100, pmc::GPU_IMPLEMENTATION_TU104, Turing, Tu10x;
    TU106: TU100, pmc::GPU_IMPLEMENTATION_TU106, Turing, Tu10x;
    TU116: TU100, pmc::GPU_IMPLEMENTATION_TU116, Turing, Tu11x;
    TU117: TU100, pmc::GPU_IMPLEMENTATION_TU117, Turing, Tu11x;
    GA100: GA100, pmc::GPU_IMPLEMENTATION_GA100, Ga100, Ga100;
    GA102: GA100, pmc::GPU_IMPLEMENTATION_GA102, Ga10x, Ga10x;
    GA103: GA100, pmc::GPU_IMPLEMENTATION_GA103, Ga10x, Ga10x;
    GA104: GA100, pmc::GPU_IMPLEMENTATION_GA104, Ga10x, Ga10x;
    GA106: GA100, pmc::GPU_IMPLEMENTATION_GA106, Ga10x, Ga10x;
    GA107: GA100, pmc::GPU_IMPLEMENTATION_GA107, Ga10x, Ga10x;
    AD102: AD100, pmc::GPU_IMPLEMENTATION_AD102, Ada, Ad10x;
    AD103: AD100, pmc::GPU_IMPLEMENTATION_AD103, Ada, Ad10x;
    AD104: AD100, pmc::GPU_IMPLEMENTATION_AD104, Ada, Ad10x;
    AD106: AD100, pmc::GPU_IMPLEMENTATION_AD106, Ada, Ad10x;
    AD107: AD100, pmc::GPU_IMPLEMENTATION_AD107, Ada, Ad10x;
    GH100: GH100, pmc::GPU_IMPLEMENTATION_GH100, Hopper, Gh100;
    GB100: GB100, pmc::GPU_IMPLEMENTATION_GB100, BlackwellGb10x, Gb10x;
    GB102: GB100, pmc::GPU_IMPLEMENTATION_GB102, BlackwellGb10x, Gb10x;
    GB202: GB200, pmc::GPU_IMPLEMENTATION_GB202, BlackwellGb20x, Gb20x;
    GB203: GB200, pmc::GPU_IMPLEMENTATION_GB203, BlackwellGb20x, Gb20x;
    GB205: GB200, pmc::GPU_IMPLEMENTATION_GB205, BlackwellGb20x, Gb20x;
    GB206: GB200, pmc::GPU_IMPLEMENTATION_GB206, BlackwellGb20x, Gb20x;
    GB207: GB200, pmc::GPU_IMPLEMENTATION_GB207, BlackwellGb20x, Gb20x;
}

/// Which GSP firmware image and signature a chip takes (`nv_firmware_chip_family_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum FirmwareFamily {
    Tu10x = fw::NV_FIRMWARE_CHIP_FAMILY_TU10X,
    Tu11x = fw::NV_FIRMWARE_CHIP_FAMILY_TU11X,
    Ga100 = fw::NV_FIRMWARE_CHIP_FAMILY_GA100,
    Ga10x = fw::NV_FIRMWARE_CHIP_FAMILY_GA10X,
    Ad10x = fw::NV_FIRMWARE_CHIP_FAMILY_AD10X,
    Gh100 = fw::NV_FIRMWARE_CHIP_FAMILY_GH100,
    Gb10x = fw::NV_FIRMWARE_CHIP_FAMILY_GB10X,
    Gb20x = fw::NV_FIRMWARE_CHIP_FAMILY_GB20X,
}

impl FirmwareFamily {
    /// The lowercase name the firmware files and ELF sections use.
    pub const fn suffix(self) -> &'static str {
        match self {
            FirmwareFamily::Tu10x => "tu10x",
            FirmwareFamily::Tu11x => "tu11x",
            FirmwareFamily::Ga100 => "ga100",
            FirmwareFamily::Ga10x => "ga10x",
            FirmwareFamily::Ad10x => "ad10x",
            FirmwareFamily::Gh100 => "gh100",
            FirmwareFamily::Gb10x => "gb10x",
            FirmwareFamily::Gb20x => "gb20x",
        }
    }

    /// The GSP-RM firmware file of this family in [`GSP_FIRMWARE_VERSION`] (nv-firmware.h
    /// `nv_firmware_path`), or `None` where that release has none (Blackwell).
    pub const fn gsp_firmware_file(self) -> Option<&'static str> {
        match self {
            FirmwareFamily::Tu10x | FirmwareFamily::Tu11x | FirmwareFamily::Ga100 => Some("gsp_tu10x.bin"),
            FirmwareFamily::Ga10x | FirmwareFamily::Ad10x | FirmwareFamily::Gh100 => Some("gsp_ga10x.bin"),
            FirmwareFamily::Gb10x | FirmwareFamily::Gb20x => None,
        }
    }

    /// The ELF section of the GSP firmware carrying this family's signature (`.fwsignature_` +
    /// family; Hopper in confidential-compute mode uses `.fwsignature_cc_gh100` instead), or
    /// `None` where [`FirmwareFamily::gsp_firmware_file`] is `None`.
    pub const fn gsp_signature_section(self) -> Option<&'static str> {
        match self {
            FirmwareFamily::Tu10x => Some(".fwsignature_tu10x"),
            FirmwareFamily::Tu11x => Some(".fwsignature_tu11x"),
            FirmwareFamily::Ga100 => Some(".fwsignature_ga100"),
            FirmwareFamily::Ga10x => Some(".fwsignature_ga10x"),
            FirmwareFamily::Ad10x => Some(".fwsignature_ad10x"),
            FirmwareFamily::Gh100 => Some(".fwsignature_gh100"),
            FirmwareFamily::Gb10x | FirmwareFamily::Gb20x => None,
        }
    }

    /// The chip whose booter (load or unload) ucode this family runs, lowercase as in the
    /// firmware directories: TU116/TU117 have their own; Hopper and later have no booter (the
    /// FSP starts GSP), Blackwell none in the pinned release.
    pub const fn booter_chip(self) -> Option<&'static str> {
        match self {
            FirmwareFamily::Tu10x => Some("tu102"),
            FirmwareFamily::Tu11x => Some("tu116"),
            FirmwareFamily::Ga100 => Some("ga100"),
            FirmwareFamily::Ga10x => Some("ga102"),
            FirmwareFamily::Ad10x => Some("ad102"),
            FirmwareFamily::Gh100 | FirmwareFamily::Gb10x | FirmwareFamily::Gb20x => None,
        }
    }

    /// The chip whose GSP-RM bootloader this family runs (TU116/TU117 run TU102's).
    pub const fn bootloader_chip(self) -> Option<&'static str> {
        match self {
            FirmwareFamily::Tu10x | FirmwareFamily::Tu11x => Some("tu102"),
            FirmwareFamily::Ga100 => Some("ga100"),
            FirmwareFamily::Ga10x => Some("ga102"),
            FirmwareFamily::Ad10x => Some("ad102"),
            FirmwareFamily::Gh100 => Some("gh100"),
            FirmwareFamily::Gb10x | FirmwareFamily::Gb20x => None,
        }
    }

    /// The chip whose generic falcon bootloader this family's FWSEC boots through: the chips
    /// whose FWSEC has a v2 descriptor (Turing, GA100; RM's HAL `ksec2GetBinArchiveBlUcode_TU102`
    /// also covers GA10x, whose v3 FWSEC boots from HS without it).
    pub const fn generic_bootloader_chip(self) -> Option<&'static str> {
        match self {
            FirmwareFamily::Tu10x | FirmwareFamily::Tu11x | FirmwareFamily::Ga100 => Some("tu102"),
            _ => None,
        }
    }

    /// The chip whose GSP first-stage firmware (FMC) this family boots, in the pinned release
    /// (Hopper only).
    pub const fn fmc_chip(self) -> Option<&'static str> {
        match self {
            FirmwareFamily::Gh100 => Some("gh100"),
            _ => None,
        }
    }
}

/// The GSP-RM firmware release this driver boots (`lib/firmware/nvidia/<version>/`).
pub const GSP_FIRMWARE_VERSION: &str = "535.261.03";

impl Chipset {
    /// NV_PMC_BOOT_42_CHIP_ID of this chipset: `architecture << 4 | implementation`.
    pub const fn chip_id(self) -> u16 {
        ((self.arch_id().value() as u16) << 4) | self.implementation() as u16
    }

    /// Its architecture generation.
    pub const fn architecture(self) -> Architecture {
        self.arch_id().architecture()
    }

    /// Its HAL.
    pub const fn hal(self) -> &'static Hal {
        hal::for_chipset(self)
    }

    /// Boots GSP through the FSP's chain of trust (Hopper, Blackwell) rather than SEC2.
    pub const fn uses_fsp(self) -> bool {
        matches!(self.hal().boot_flow, BootFlow::FspChainOfTrust)
    }

    /// Runs FWSEC through the generic falcon bootloader (Turing, GA100) rather than loading it
    /// directly.
    pub const fn needs_fwsec_bootloader(self) -> bool {
        matches!(self.hal().boot_flow, BootFlow::FwsecBootloader)
    }

    /// GPU page-table format.
    pub const fn mmu_version(self) -> MmuVersion {
        self.hal().mmu_version
    }

    /// The SM (compute capability, major*10 + minor) of this chip's shader cores: which cubins
    /// run on it ([`Hal::sm_version`]).
    pub const fn sm_version(self) -> u32 {
        self.hal().sm_version
    }

    /// QMD layout the compute class takes.
    pub const fn qmd_version(self) -> QmdVersion {
        self.hal().qmd_version
    }

    /// The GSP-RM firmware file for this chip in [`GSP_FIRMWARE_VERSION`]
    /// ([`FirmwareFamily::gsp_firmware_file`]).
    pub const fn gsp_firmware_file(self) -> Option<&'static str> {
        self.firmware_family().gsp_firmware_file()
    }

    /// The ELF section of the GSP firmware carrying this chip's signature
    /// ([`FirmwareFamily::gsp_signature_section`]).
    pub const fn gsp_signature_section(self) -> Option<&'static str> {
        self.firmware_family().gsp_signature_section()
    }
}

impl fmt::Display for Chipset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A chip revision, e.g. A1 (major 0xA, minor 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Revision {
    pub major: u8,
    pub minor: u8,
    /// NV_PMC_BOOT_42_MINOR_EXTENDED_REVISION; BOOT_0 has none.
    pub minor_extended: Option<u8>,
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}{:X}", self.major, self.minor)
    }
}

/// Which register a chip was identified from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdSource {
    Boot42,
    Boot0,
}

/// What identification found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipIdentity {
    pub chipset: Chipset,
    pub revision: Revision,
    pub source: IdSource,
    /// The raw registers, for logs.
    pub boot0: u32,
    pub boot42: u32,
}

impl fmt::Display for ChipIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}) rev {}", self.chipset, self.chipset.architecture(), self.revision)
    }
}

/// Chip identification failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The chip is not one this driver supports (or did not answer); `what` says why.
    Unsupported { boot0: u32, boot42: u32, what: &'static str },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Unsupported { boot0, boot42, what } => {
                let (arch, implementation) = decoded_ids(boot0, boot42);
                write!(
                    f,
                    "unsupported GPU: {what} (architecture {arch:#x}, implementation {implementation:#x}; \
                     NV_PMC_BOOT_0 = {boot0:#010x}, NV_PMC_BOOT_42 = {boot42:#010x})"
                )
            }
        }
    }
}

/// Architecture and implementation as identification reads them: BOOT_42 when non-zero, else
/// BOOT_0, both in the 570.133.07 layout (six architecture bits).
fn decoded_ids(boot0: u32, boot42: u32) -> (u8, u8) {
    if boot42 != 0 {
        let r = pmc::r570::NV_PMC_BOOT_42::from_raw(boot42);
        (r.architecture(), r.implementation())
    } else {
        let r = pmc::r570::NV_PMC_BOOT_0::from_raw(boot0);
        (r.full_architecture(), r.implementation())
    }
}

/// Identifies a chip from its NV_PMC_BOOT_0 and NV_PMC_BOOT_42 values.
pub fn identify(boot0: u32, boot42: u32) -> Result<ChipIdentity, Error> {
    let unsupported = |what| Error::Unsupported { boot0, boot42, what };
    if boot0 == u32::MAX || boot42 == u32::MAX {
        return Err(unsupported(
            "BAR0 reads all ones: the device is not responding (BAR not mapped, or the GPU fell off the bus)",
        ));
    }
    if boot0 == 0 && boot42 == 0 {
        return Err(unsupported("NV_PMC_BOOT_0 and NV_PMC_BOOT_42 both read zero: not an NVIDIA GPU's BAR0"));
    }
    let (arch, implementation) = decoded_ids(boot0, boot42);
    let (source, revision) = if boot42 != 0 {
        let r = pmc::r570::NV_PMC_BOOT_42::from_raw(boot42);
        (
            IdSource::Boot42,
            Revision {
                major: r.major_revision(),
                minor: r.minor_revision(),
                minor_extended: Some(r.minor_extended_revision()),
            },
        )
    } else {
        let r = pmc::r570::NV_PMC_BOOT_0::from_raw(boot0);
        (IdSource::Boot0, Revision { major: r.major_revision(), minor: r.minor_revision(), minor_extended: None })
    };

    let Some(arch_id) = ArchId::from_value(arch) else {
        if PRE_TURING.iter().any(|&(value, _)| value == arch) || arch < ArchId::TU100.value() {
            return Err(unsupported(
                "pre-Turing architecture: it has no GSP, and this driver boots only through GSP-RM",
            ));
        }
        return Err(unsupported("unknown architecture: newer than this driver knows, or not an NVIDIA GPU"));
    };
    let chip_id = (u16::from(arch_id.value()) << 4) | u16::from(implementation);
    let Some(chipset) = Chipset::from_chip_id(chip_id) else {
        return Err(unsupported("unknown implementation of a supported architecture"));
    };
    Ok(ChipIdentity { chipset, revision, source, boot0, boot42 })
}

/// Reads NV_PMC_BOOT_0 and NV_PMC_BOOT_42 and identifies the chip.
pub fn read_identity(io: &(impl RegisterIo + ?Sized)) -> Result<ChipIdentity, Error> {
    let boot0 = pmc::NV_PMC_BOOT_0::read(io).raw();
    let boot42 = pmc::NV_PMC_BOOT_42::read(io).raw();
    let identity = identify(boot0, boot42)?;
    log::info!("GPU: {identity} (BOOT0 {boot0:#010x}, BOOT42 {boot42:#010x})");
    Ok(identity)
}

/// Name of the description of a pre-Turing architecture number, for logs.
pub fn pre_turing_name(arch: u8) -> Option<&'static str> {
    PRE_TURING.iter().find(|&&(value, _)| value == arch).map(|&(_, name)| name)
}

/// A board from NVIDIA's supported-GPU table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    /// PCI device id (vendor 0x10de).
    pub device_id: u16,
    /// NVIDIA's name for it.
    pub name: &'static str,
    /// The README that lists it.
    pub source: Header,
}

macro_rules! boards {
    ($($id:literal => $name:literal in $source:path;)*) => {
        /// Boards people run this on, by PCI device id. Where one device id has several names
        /// (by subsystem), the one listed without a subsystem id, else the first.
        pub const BOARDS: &[Board] = &[$(Board { device_id: $id, name: $name, source: $source }),*];
    };
}

boards! {
    0x1E04 => "NVIDIA GeForce RTX 2080 Ti" in headers::README;
    0x1F82 => "NVIDIA GeForce GTX 1650" in headers::README;
    0x20B0 => "NVIDIA A100-SXM4-40GB" in headers::README;
    0x20B2 => "NVIDIA A100-SXM4-80GB" in headers::README;
    0x20B5 => "NVIDIA A100 80GB PCIe" in headers::README;
    0x20B7 => "NVIDIA A30" in headers::README;
    0x20F1 => "NVIDIA A100-PCIE-40GB" in headers::README;
    0x2204 => "NVIDIA GeForce RTX 3090" in headers::README;
    0x2206 => "NVIDIA GeForce RTX 3080" in headers::README;
    0x2236 => "NVIDIA A10" in headers::README;
    0x2321 => "NVIDIA H100 NVL" in headers::README;
    0x2322 => "NVIDIA H800 PCIe" in headers::README;
    0x2324 => "NVIDIA H800" in headers::README;
    0x2330 => "NVIDIA H100 80GB HBM3" in headers::README;
    0x2331 => "NVIDIA H100 PCIe" in headers::README;
    0x2335 => "NVIDIA H200" in headers::README_570;
    0x233B => "NVIDIA H200 NVL" in headers::README_570;
    0x2484 => "NVIDIA GeForce RTX 3070" in headers::README;
    0x2684 => "NVIDIA GeForce RTX 4090" in headers::README;
    0x26B1 => "NVIDIA RTX 6000 Ada Generation" in headers::README;
    0x26B5 => "NVIDIA L40" in headers::README;
    0x26B9 => "NVIDIA L40S" in headers::README;
    0x2704 => "NVIDIA GeForce RTX 4080" in headers::README;
    0x27B8 => "NVIDIA L4" in headers::README;
    0x2803 => "NVIDIA GeForce RTX 4060 Ti" in headers::README;
    0x2882 => "NVIDIA GeForce RTX 4060" in headers::README;
    0x2901 => "NVIDIA B200" in headers::README_570;
    0x2B85 => "NVIDIA GeForce RTX 5090" in headers::README_570;
    0x2BB1 => "NVIDIA RTX PRO 6000 Blackwell Workstation Edition" in headers::README_570;
    0x2C02 => "NVIDIA GeForce RTX 5080" in headers::README_570;
}

/// NVIDIA's name for the board with PCI device id `device_id`, if it is one of [`BOARDS`].
pub fn board_name(device_id: u16) -> Option<&'static str> {
    BOARDS.iter().find(|b| b.device_id == device_id).map(|b| b.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot42_for(chip: Chipset, major: u32, minor: u32) -> u32 {
        (u32::from(chip.chip_id()) << 20) | (major << 16) | (minor << 12)
    }

    fn boot0_for(chip: Chipset, major: u32, minor: u32) -> u32 {
        (u32::from(chip.arch_id().value()) << 24) | (u32::from(chip.implementation()) << 20) | (major << 4) | minor
    }

    #[test]
    fn chip_ids_are_unique_and_round_trip() {
        for &chip in Chipset::ALL {
            assert_eq!(Chipset::from_chip_id(chip.chip_id()), Some(chip), "{chip}");
        }
        assert_eq!(Chipset::ALL.len(), 24);
        assert_eq!(Chipset::TU102.chip_id(), 0x162);
        assert_eq!(Chipset::TU116.chip_id(), 0x168);
        assert_eq!(Chipset::GA100.chip_id(), 0x170);
        assert_eq!(Chipset::GH100.chip_id(), 0x180);
        assert_eq!(Chipset::AD102.chip_id(), 0x192);
        assert_eq!(Chipset::GB100.chip_id(), 0x1a0);
        assert_eq!(Chipset::GB202.chip_id(), 0x1b2);
    }

    #[test]
    fn every_chip_is_identified_from_boot42() {
        for &chip in Chipset::ALL {
            let id = identify(0, boot42_for(chip, 0xa, 1)).unwrap();
            assert_eq!(id.chipset, chip);
            assert_eq!(id.source, IdSource::Boot42);
            assert_eq!(id.revision, Revision { major: 0xa, minor: 1, minor_extended: Some(0) });
            assert_eq!(id.revision.to_string(), "A1");
        }
    }

    #[test]
    fn every_chip_is_identified_from_boot0_when_boot42_is_zero() {
        for &chip in Chipset::ALL {
            let id = identify(boot0_for(chip, 0xb, 2), 0).unwrap();
            assert_eq!(id.chipset, chip);
            assert_eq!(id.source, IdSource::Boot0);
            assert_eq!(id.revision.to_string(), "B2");
        }
    }

    #[test]
    fn boot42_wins_over_boot0() {
        let id = identify(boot0_for(Chipset::TU102, 0, 0), boot42_for(Chipset::GH100, 0xa, 1)).unwrap();
        assert_eq!(id.chipset, Chipset::GH100);
    }

    #[test]
    fn pre_turing_chips_are_refused() {
        // GV100: architecture 0x14, implementation 0 (chip id 0x140), and Pascal GP102 (0x132).
        for (boot0, boot42) in [(0, 0x140 << 20), (0x14 << 24, 0), (0x1320_00a1, 0)] {
            let err = identify(boot0, boot42).unwrap_err();
            let Error::Unsupported { what, .. } = err;
            assert!(what.contains("pre-Turing"), "{what}");
            assert!(err.to_string().contains("unsupported GPU"));
        }
    }

    #[test]
    fn unknown_chips_are_refused_not_guessed() {
        // Unknown implementation of Turing, GA102F (0x17f), architecture 0x1c, and an
        // architecture with the sixth bit set whose low bits look like Turing (0x36).
        for boot42 in [0x165 << 20, 0x17f << 20, 0x1c2 << 20, 0x362 << 20] {
            let err = identify(0, boot42).unwrap_err();
            let Error::Unsupported { what, boot42: b, .. } = err;
            assert_eq!(b, boot42);
            assert!(what.contains("unknown"), "{boot42:#x}: {what}");
        }
        // The same through BOOT_0's separate architecture bit.
        let err = identify((0x16 << 24) | (1 << 8) | (0x2 << 20), 0).unwrap_err();
        assert!(matches!(err, Error::Unsupported { what, .. } if what.contains("unknown")));
    }

    #[test]
    fn dead_devices_are_refused() {
        assert!(identify(u32::MAX, u32::MAX).is_err());
        assert!(identify(0, 0).is_err());
        let message = identify(u32::MAX, u32::MAX).unwrap_err().to_string();
        assert!(message.contains("not responding"), "{message}");
    }

    #[test]
    fn capabilities() {
        use Chipset::*;
        assert!(TU102.needs_fwsec_bootloader() && GA100.needs_fwsec_bootloader());
        assert!(!GA102.needs_fwsec_bootloader() && !AD102.needs_fwsec_bootloader());
        assert!(GH100.uses_fsp() && GB202.uses_fsp() && !AD104.uses_fsp());
        assert_eq!(TU117.gsp_signature_section(), Some(".fwsignature_tu11x"));
        assert_eq!(TU106.gsp_signature_section(), Some(".fwsignature_tu10x"));
        assert_eq!(GA100.gsp_firmware_file(), Some("gsp_tu10x.bin"));
        assert_eq!(GH100.gsp_firmware_file(), Some("gsp_ga10x.bin"));
        assert_eq!(GB100.gsp_firmware_file(), None);
        assert_eq!(AD107.mmu_version(), MmuVersion::V2);
        assert_eq!(GH100.mmu_version(), MmuVersion::V3);
    }

    #[test]
    fn board_names() {
        assert_eq!(board_name(0x2335), Some("NVIDIA H200"));
        assert_eq!(board_name(0x2330), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(board_name(0x1F82), Some("NVIDIA GeForce GTX 1650"));
        assert_eq!(board_name(0x0000), None);
        let mut ids: Vec<u16> = BOARDS.iter().map(|b| b.device_id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), BOARDS.len(), "a device id listed twice");
    }
}
