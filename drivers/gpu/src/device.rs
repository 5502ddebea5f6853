//! The GPU foundation bring-up shared by the kernel and the tests: identify the chip from
//! BOOT0/BOOT42, pick its HAL, name the board from its PCI device id, read the VBIOS through
//! the PROM window and find FWSEC. The GSP boot (a later stage) starts from what this returns.

use crate::chip::{self, ChipIdentity};
use crate::fwsec::FwsecKind;
use crate::hal::Hal;
use crate::hw::RegisterIo;
use crate::vbios::{Bar0Read, BiosVersion, Vbios, VbiosError};
use core::fmt;

/// Reads the PROM window through the BAR0 register boundary.
pub struct PromReader<'a, R: RegisterIo + ?Sized>(pub &'a R);

impl<R: RegisterIo + ?Sized> Bar0Read for PromReader<'_, R> {
    fn read_u32(&self, offset: u32) -> u32 {
        self.0.read32(offset)
    }
}

/// What FWSEC the VBIOS carries (the GSP boot uploads it later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FwsecSummary {
    pub descriptor_version: u8,
    pub imem_len: usize,
    pub dmem_len: usize,
    pub signatures: u32,
    /// ROM offset of the DMEM mapper ("DMAP") the FRTS command is patched into.
    pub dmem_mapper_rom_offset: u32,
}

/// The result of the foundation bring-up of one GPU.
pub struct Foundation {
    pub identity: ChipIdentity,
    pub hal: &'static Hal,
    pub pci_device_id: u16,
    pub board: Option<&'static str>,
    pub vbios: Vbios,
    /// `Err` when the VBIOS has no usable FWSEC (older boards, a damaged ROM): reported, since
    /// Turing..Ada cannot boot GSP without it.
    pub fwsec: Result<FwsecSummary, VbiosError>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundationError {
    Chip(chip::Error),
    Vbios(VbiosError),
}

impl fmt::Display for FoundationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FoundationError::Chip(e) => write!(f, "chip identification: {e}"),
            FoundationError::Vbios(e) => write!(f, "reading the VBIOS through the PROM window: {e}"),
        }
    }
}

impl Foundation {
    pub fn bios_version(&self) -> Option<BiosVersion> {
        self.vbios.version()
    }
}

/// Brings up the foundation of the GPU behind `bar0` (PCI device id `pci_device_id`).
pub fn bring_up<R: RegisterIo + ?Sized>(bar0: &R, pci_device_id: u16) -> Result<Foundation, FoundationError> {
    let identity = chip::read_identity(bar0).map_err(FoundationError::Chip)?;
    let hal = identity.chipset.hal();
    let vbios = Vbios::from_prom(&PromReader(bar0)).map_err(FoundationError::Vbios)?;
    let fwsec = vbios.fwsec(FwsecKind::Prod).map(|f| FwsecSummary {
        descriptor_version: f.descriptor.version(),
        imem_len: f.imem().len(),
        dmem_len: f.dmem().len(),
        signatures: f.signature_count(),
        dmem_mapper_rom_offset: f.dmem_mapper_rom_offset(),
    });
    Ok(Foundation { identity, hal, pci_device_id, board: chip::board_name(pci_device_id), vbios, fwsec })
}

impl fmt::Display for Foundation {
    /// One line for the boot log: identity, board, VBIOS version and FWSEC.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [10de:{:04x}]", self.identity, self.pci_device_id)?;
        if let Some(b) = self.board {
            write!(f, " \"{b}\"")?;
        }
        match self.vbios.version() {
            Some(v) => write!(f, ", VBIOS {v}")?,
            None => write!(f, ", VBIOS version unknown")?,
        }
        write!(f, ", {} ROM images", self.vbios.images().len())?;
        match &self.fwsec {
            Ok(s) => write!(
                f,
                ", FWSEC v{} (IMEM {} bytes, DMEM {} bytes, {} signatures)",
                s.descriptor_version, s.imem_len, s.dmem_len, s.signatures
            ),
            Err(e) => write!(f, ", no FWSEC: {e}"),
        }
    }
}
