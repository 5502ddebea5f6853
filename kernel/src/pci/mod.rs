//! PCI: enumeration of every function under the root ranges ACPI names, BAR sizing, capability
//! decoding, and the config-space side of claiming a function (decode enables, power state,
//! MSI/MSI-X).
//!
//! Machine access is the [`ConfigAccess`] trait; the kernel binary implements it for ECAM
//! (MCFG windows, 4 KiB per function) and for ports 0xCF8/0xCFC (256 bytes per function), and
//! host tests implement it over a fake config space. Nothing here touches hardware directly.
//!
//! Boot flow: `enumerate(&access, &roots)`, log `describe(f)` for each function, then drivers
//! pick functions by class/vendor and call [`enable`], [`set_power_state`], [`msi_configure`]
//! or [`msix_layout`] + [`msix_set_control`].
//!
//! From `pci_types` we take the address type ([`PciAddress`]), the command register flags and
//! the header type enum; its register walkers are replaced (see each module's first lines).

mod access;
mod bar;
mod caps;
mod control;
mod describe;
mod function;
mod scan;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;

pub use access::{ConfigAccess, PciTypesAccess, RootRange, CONVENTIONAL_SPACE_LEN, EXTENDED_SPACE_LEN};
pub use caps::{
    Capability, ExtendedCapability, LinkSpeed, Msi, Msix, PciExpress, PcieDeviceType, PcieLink, PowerManagement,
    PowerState, CAP_ID_BRIDGE_SUBSYSTEM, CAP_ID_MSI, CAP_ID_MSIX, CAP_ID_PCIE, CAP_ID_PM,
};
pub use control::{
    command, enable, msi_configure, msi_disable, msix_layout, msix_set_control, power_state, set_power_state,
    BarRegion, Decode, MsixControl, MsixLayout, MsixTableEntry, PciError, PowerTransition,
};
pub use describe::describe;
pub use function::{Bar, BarKind, BridgeInfo, MsixStructure, PciFunction, RomBar, Subsystem, Warning, Window};
pub use pci_types::{CommandRegister, HeaderType, PciAddress};
pub use scan::enumerate;
