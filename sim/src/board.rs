//! Which GPU the model is: chip, board identity on PCI, BAR sizes, VRAM, fusing.
//!
//! Chip identity comes from `nvgpu::chip` (architecture and implementation numbers, encoded into
//! NV_PMC_BOOT_0/BOOT_42 by [`boot0_value`]/[`boot42_value`] with `nvgpu::hw::pmc`'s field
//! declarations). PCI device ids come from NVIDIA's supported-GPU table (`nvgpu::chip::BOARDS`)
//! and, for chips that table does not list, from the PCI ID Repository (`pci.ids` 2023.04.10,
//! Debian package `pci.ids`). BAR and VRAM sizes are the model's documented choices; they are
//! configuration, not facts the driver may assume.

use nvgpu::chip::{Chipset, Revision};
use nvgpu::hal::Family;
use nvgpu::hw::boot::{PCI_CLASS_DISPLAY_3D, PCI_CLASS_DISPLAY_VGA};
use nvgpu::hw::pmc;
use nvgpu::hw::vbios::PCI_VENDOR_ID_NVIDIA;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// How the GPU shows itself on PCI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciIdentity {
    /// 0x10DE.
    pub vendor_id: u16,
    pub device_id: u16,
    /// Base class and sub-class: 0x0300 (VGA) for boards with display, 0x0302 (3D controller)
    /// for compute boards (GH100).
    pub class: u16,
    /// Programming interface (0 for both classes).
    pub prog_if: u8,
    /// PCI revision id.
    pub revision_id: u8,
    pub subsystem_vendor_id: u16,
    pub subsystem_id: u16,
}

/// BAR sizes in bytes, in NVIDIA's numbering: BAR0 registers, BAR1 the VRAM aperture, BAR2 the
/// instance-memory aperture (PCI region 3, since BAR1 is 64-bit and takes two slots).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarSizes {
    pub bar0: u64,
    pub bar1: u64,
    pub bar2: u64,
}

/// BAR0 is 16 MiB on every supported chip (`NV_PROM_DATA` at 0x300000 and the FSP at 0x8f0000
/// are inside it).
pub const BAR0_SIZE: u64 = 16 * MIB;
/// BAR2 (PCI region 3) on every model board: 32 MiB.
pub const BAR2_SIZE: u64 = 32 * MIB;

/// Where a model GPU sits on PCI: the BARs' bus addresses and its segment, bus, device and
/// function. A model in a host test or in the kernel is on no real bus, so its board declares
/// one (as firmware would have assigned it); the driver must tell GSP-RM exactly this in
/// `GSP_SET_SYSTEM_INFO`, and the model's GSP-RM refuses anything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciPlacement {
    /// Bus address of BAR0 (registers).
    pub bar0: u64,
    /// Bus address of BAR1 (the VRAM aperture, 64-bit prefetchable).
    pub bar1: u64,
    /// Bus address of BAR2 (instance memory; PCI region 3).
    pub bar2: u64,
    pub segment: u16,
    pub bus: u8,
    pub device: u8,
    pub function: u8,
}

impl PciPlacement {
    /// A placement of BARs of `bars`' sizes as a BIOS would lay them out for one GPU behind a
    /// root port at bus 0x41: BAR0 below 4 GiB, BAR1 and BAR2 above, each aligned to its size.
    pub const fn for_bars(bars: &BarSizes) -> Self {
        let bar1 = 0x200_0000_0000u64.next_multiple_of(bars.bar1);
        let bar2 = (bar1 + bars.bar1).next_multiple_of(bars.bar2);
        Self { bar0: 0xfa00_0000, bar1, bar2, segment: 0, bus: 0x41, device: 0, function: 0 }
    }
}

/// Everything that makes one model GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelConfig {
    pub chipset: Chipset,
    /// Chip revision in BOOT_0/BOOT_42 (every model board: A1).
    pub revision: Revision,
    /// NVIDIA's board name, when the device id is one of `nvgpu::chip::BOARDS`.
    pub board_name: Option<&'static str>,
    pub pci: PciIdentity,
    pub bars: BarSizes,
    /// Where it is on PCI (what `GSP_SET_SYSTEM_INFO` must say).
    pub placement: PciPlacement,
    /// Bytes of VRAM (what `NV_USABLE_FB_SIZE_IN_MB` reports on GA102 and later, and the bound
    /// FWSEC checks the FRTS region against).
    pub vram_bytes: u64,
    /// A debug-fused part (`NV_FUSE_OPT_SECURE_GSP_DEBUG_DIS` reads `DATA_NO`): it runs
    /// FWSEC_DBG and refuses FWSEC_PROD. Production (false) by default.
    pub debug_fused: bool,
    /// Raw value of `NV_FUSE_OPT_FPF_GSP_UCODE<n>_VERSION` for the model FWSEC's ucode id
    /// ([`crate::vbios_builder::FWSEC_UCODE_ID`]); every other ucode id reads 0. RM turns a raw
    /// value into a version as "highest set bit + 1" (0 when none): the default 0b11 is version 2.
    pub fwsec_ucode_fuse: u16,
    /// Polls of a falcon's registers after an engine reset before memory scrubbing reads done.
    pub scrub_polls: u32,
    /// The FSP runs a GSP-FMC it does not know (a test's stand-in). Off by default: a Hopper
    /// model's FSP accepts only one of NVIDIA's GSP-FMCs (`gsp_rm::fsp::KNOWN_FMCS`), as the
    /// silicon's chain of trust does.
    pub allow_stand_in_fmc: bool,
}

/// Revision A1 (major 0xA, minor 1), what the supported boards ship.
pub const REVISION_A1: Revision = Revision { major: 0xA, minor: 1, minor_extended: Some(0) };

/// Default raw fuse value for the FWSEC ucode id (version 2).
pub const DEFAULT_FWSEC_UCODE_FUSE: u16 = 0b11;
/// Default scrubbing time after reset, in polls.
pub const DEFAULT_SCRUB_POLLS: u32 = 3;

impl ModelConfig {
    /// NVIDIA H200 (GH100, 10DE:2335, subsystem 10DE:18BE as the 570.133.07 README lists it):
    /// 3D controller class, 141 GiB of HBM3e, BAR1 256 GiB (large enough to map all VRAM, as
    /// Hopper datacenter boards do; the size is the model's choice).
    pub fn h200() -> Self {
        Self::board(Chipset::GH100, 0x2335, 0x18BE, 141 * GIB, 256 * GIB)
    }

    /// NVIDIA GeForce RTX 4090 (AD102, 10DE:2684): 24 GiB, BAR1 256 MiB (no resizable BAR).
    /// Subsystem 10DE:167C is the model's choice (no primary source at hand lists one).
    pub fn rtx4090() -> Self {
        Self::board(Chipset::AD102, 0x2684, 0x167C, 24 * GIB, 256 * MIB)
    }

    /// NVIDIA GeForce RTX 3090 (GA102, 10DE:2204; subsystem 10DE:147D, the Founders Edition in
    /// pci.ids, which lists it with the two ids swapped): 24 GiB, BAR1 256 MiB.
    pub fn rtx3090() -> Self {
        Self::board(Chipset::GA102, 0x2204, 0x147D, 24 * GIB, 256 * MIB)
    }

    /// NVIDIA GeForce RTX 2080 Ti (TU102, 10DE:1E04): 11 GiB, BAR1 256 MiB. Subsystem 10DE:12FA
    /// is the model's choice.
    pub fn rtx2080ti() -> Self {
        Self::board(Chipset::TU102, 0x1E04, 0x12FA, 11 * GIB, 256 * MIB)
    }

    /// A model of any supported chipset: the board of [`representative_device_id`], the family's
    /// default VRAM and BAR1 sizes ([`family_defaults`]), subsystem 10DE:0000.
    pub fn for_chipset(chipset: Chipset) -> Self {
        match chipset {
            Chipset::GH100 => return Self::h200(),
            Chipset::AD102 => return Self::rtx4090(),
            Chipset::GA102 => return Self::rtx3090(),
            Chipset::TU102 => return Self::rtx2080ti(),
            _ => {}
        }
        let (vram, bar1) = family_defaults(chipset.family());
        Self::board(chipset, representative_device_id(chipset), 0x0000, vram, bar1)
    }

    fn board(chipset: Chipset, device_id: u16, subsystem_id: u16, vram_bytes: u64, bar1: u64) -> Self {
        Self {
            chipset,
            revision: REVISION_A1,
            board_name: nvgpu::chip::board_name(device_id),
            pci: PciIdentity {
                vendor_id: PCI_VENDOR_ID_NVIDIA,
                device_id,
                class: pci_class(chipset),
                prog_if: 0,
                revision_id: 0xA1,
                subsystem_vendor_id: PCI_VENDOR_ID_NVIDIA,
                subsystem_id,
            },
            bars: BarSizes { bar0: BAR0_SIZE, bar1, bar2: BAR2_SIZE },
            placement: PciPlacement::for_bars(&BarSizes { bar0: BAR0_SIZE, bar1, bar2: BAR2_SIZE }),
            vram_bytes,
            debug_fused: false,
            fwsec_ucode_fuse: DEFAULT_FWSEC_UCODE_FUSE,
            scrub_polls: DEFAULT_SCRUB_POLLS,
            allow_stand_in_fmc: false,
        }
    }

    /// NV_PMC_BOOT_0 of this model.
    pub fn boot0(&self) -> u32 {
        boot0_value(self.chipset, self.revision)
    }

    /// NV_PMC_BOOT_42 of this model.
    pub fn boot42(&self) -> u32 {
        boot42_value(self.chipset, self.revision)
    }
}

/// 0x0302 (3D controller) for the compute-only chips (GA100, GH100, GB100/GB102), 0x0300 (VGA)
/// for the others.
pub const fn pci_class(chipset: Chipset) -> u16 {
    if crate::silicon::of(chipset.family()).compute_only {
        PCI_CLASS_DISPLAY_3D
    } else {
        PCI_CLASS_DISPLAY_VGA
    }
}

/// VRAM and BAR1 sizes of a family's generic model board: consumer families 8 GiB / 256 MiB;
/// GA100 40 GiB / 64 GiB; GH100 80 GiB / 128 GiB; GB10x 180 GiB / 256 GiB. Model choices.
pub const fn family_defaults(family: Family) -> (u64, u64) {
    let silicon = crate::silicon::of(family);
    (silicon.vram_bytes, silicon.bar1_bytes)
}

/// A PCI device id for each chip: a board in `nvgpu::chip::BOARDS` where it has one, else the
/// first GeForce/datacenter board of that chip in pci.ids 2023.04.10. GB102, GB205, GB206 and
/// GB207 have neither; they take their family's board (identification is by BOOT_42, never by
/// device id, so the driver is not misled).
pub const fn representative_device_id(chipset: Chipset) -> u16 {
    match chipset {
        Chipset::TU102 => 0x1E04,
        Chipset::TU104 => 0x1E82, // GeForce RTX 2080 (pci.ids)
        Chipset::TU106 => 0x1F02, // GeForce RTX 2070 (pci.ids)
        Chipset::TU116 => 0x2182, // GeForce GTX 1660 Ti (pci.ids)
        Chipset::TU117 => 0x1F82,
        Chipset::GA100 => 0x20B0,
        Chipset::GA102 => 0x2204,
        Chipset::GA103 => 0x2414, // GeForce RTX 3060 Ti (pci.ids)
        Chipset::GA104 => 0x2484,
        Chipset::GA106 => 0x2503, // GeForce RTX 3060 (pci.ids)
        Chipset::GA107 => 0x2582, // GeForce RTX 3050 8GB (pci.ids)
        Chipset::AD102 => 0x2684,
        Chipset::AD103 => 0x2704,
        Chipset::AD104 => 0x2782, // pci.ids: AD104 (GeForce RTX 4070 Ti)
        Chipset::AD106 => 0x2803,
        Chipset::AD107 => 0x2882,
        Chipset::GH100 => 0x2335,
        Chipset::GB100 | Chipset::GB102 => 0x2901,
        Chipset::GB202 => 0x2B85,
        Chipset::GB203 | Chipset::GB205 | Chipset::GB206 | Chipset::GB207 => 0x2C02,
    }
}

/// NV_PMC_BOOT_0 for `chipset` at `revision`, in the 570 layout (architecture bits 4:0 in 28:24,
/// bit 5 in bit 8), which equals the 535 layout for every architecture up to Blackwell.
pub fn boot0_value(chipset: Chipset, revision: Revision) -> u32 {
    use pmc::r570::NV_PMC_BOOT_0 as B;
    let arch = chipset.arch_id().value();
    B::default()
        .with(B::ARCHITECTURE_0, arch & 0x1F)
        .with(B::ARCHITECTURE_1, arch >> 5)
        .with(B::IMPLEMENTATION, chipset.implementation())
        .with(B::MAJOR_REVISION, revision.major)
        .with(B::MINOR_REVISION, revision.minor)
        .raw()
}

/// NV_PMC_BOOT_42 for `chipset` at `revision` (570 layout, see [`boot0_value`]).
pub fn boot42_value(chipset: Chipset, revision: Revision) -> u32 {
    use pmc::r570::NV_PMC_BOOT_42 as B;
    B::default()
        .with(B::CHIP_ID, chipset.chip_id())
        .with(B::MAJOR_REVISION, revision.major)
        .with(B::MINOR_REVISION, revision.minor)
        .with(B::MINOR_EXTENDED_REVISION, revision.minor_extended.unwrap_or(0))
        .raw()
}

/// The driver's `PciPlacement` for a model board: where the board says it is on PCI, as the
/// platform (the kernel's PCI scan, or a test standing in for it) hands it to the boot.
pub fn boot_placement(config: &crate::ModelConfig) -> nvgpu::gsp::boot::PciPlacement {
    let p = config.placement;
    nvgpu::gsp::boot::PciPlacement {
        bar0: p.bar0,
        bar1: p.bar1,
        bar_inst: p.bar2,
        domain_bus_device_function: nvgpu::gsp::boot::PciPlacement::encode(
            p.segment.into(),
            p.bus,
            p.device,
            p.function,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_board_is_placed_with_aligned_disjoint_bars_and_the_driver_gets_the_same() {
        for &chip in Chipset::ALL {
            let config = ModelConfig::for_chipset(chip);
            let (p, b) = (config.placement, config.bars);
            for (base, size) in [(p.bar0, b.bar0), (p.bar1, b.bar1), (p.bar2, b.bar2)] {
                assert!(base != 0 && base % size == 0, "{chip:?}: BAR at {base:#x} of {size:#x}");
            }
            assert!(p.bar0 + b.bar0 <= u64::from(u32::MAX) + 1, "{chip:?}: BAR0 below 4 GiB");
            assert!(p.bar1 + b.bar1 <= p.bar2, "{chip:?}: BAR1 and BAR2 overlap");
            let driver = boot_placement(&config);
            assert_eq!((driver.bar0, driver.bar1, driver.bar_inst), (p.bar0, p.bar1, p.bar2));
            assert_eq!(driver.domain_bus_device_function, 0x41 << 8, "{chip:?}: 0000:41:00.0");
            assert_eq!(driver.decode(), (p.segment, p.bus, p.device, p.function), "{chip:?}: decode undoes encode");
            let far = nvgpu::gsp::boot::PciPlacement {
                domain_bus_device_function: nvgpu::gsp::boot::PciPlacement::encode(3, 0xa1, 0x1f, 7),
                ..driver
            };
            assert_eq!(far.decode(), (3, 0xa1, 0x1f, 7));
        }
    }

    #[test]
    fn boot_registers_identify_every_chip_both_ways() {
        for &chip in Chipset::ALL {
            let boot0 = boot0_value(chip, REVISION_A1);
            let boot42 = boot42_value(chip, REVISION_A1);
            let by42 = nvgpu::chip::identify(boot0, boot42).unwrap();
            assert_eq!(by42.chipset, chip);
            assert_eq!(by42.revision.to_string(), "A1");
            assert_eq!(nvgpu::chip::identify(boot0, 0).unwrap().chipset, chip, "{chip} from BOOT_0");
            // The 535 layout reads the same chip id (no architecture has bit 5 set).
            assert_eq!(pmc::NV_PMC_BOOT_42::from_raw(boot42).chip_id(), chip.chip_id());
        }
        assert_eq!(boot42_value(Chipset::GA102, REVISION_A1), 0x172A_1000);
    }

    #[test]
    fn named_boards() {
        assert_eq!(ModelConfig::h200().board_name, Some("NVIDIA H200"));
        assert_eq!(ModelConfig::h200().pci.class, 0x0302);
        assert_eq!(ModelConfig::rtx4090().board_name, Some("NVIDIA GeForce RTX 4090"));
        assert_eq!(ModelConfig::rtx3090().pci.class, 0x0300);
        assert_eq!(ModelConfig::rtx2080ti().pci.device_id, 0x1E04);
        for &chip in Chipset::ALL {
            let config = ModelConfig::for_chipset(chip);
            assert_eq!(config.chipset, chip);
            assert_eq!(config.pci.vendor_id, 0x10DE);
            assert_eq!(config.bars.bar0, 16 << 20);
        }
    }
}
