//! VBIOS parsing: the PCI expansion ROM chain, the BIT, the falcon ucode table and FWSEC.
//!
//! A VBIOS comes from a file ([`Vbios::from_bytes`]) or from the PROM window in BAR0
//! ([`Vbios::from_prom`]); both go through the same chain walk (`pci_rom`) over a byte source,
//! then the ROM chain is held in memory and everything else is parsed from there, the way NVIDIA's
//! driver copies the image out of `NV_PROM_DATA` before looking for FWSEC
//! (`src/nvidia/src/kernel/gpu/gsp/arch/turing/kernel_gsp_vbios_tu102.c`,
//! `kgspExtractVbiosFromRom_TU102`; then `kernel_gsp_fwsec.c`).
//!
//! Offsets: every offset in the types here is a *ROM offset*, counted from the first image's
//! 0x55AA signature, i.e. an index into [`Vbios::rom`]. When the source begins with an NVGI (IFR)
//! header, the ROM starts [`Vbios::rom_offset`] bytes into the source.
//!
//! The parser reads input only through bounds-checked helpers and returns a [`VbiosError`] for
//! anything short, corrupt or foreign; it never panics on ROM contents. The formats' constants
//! and byte layouts are hardware facts, declared in [`crate::hw::vbios`] (which the GPU model's
//! VBIOS builder writes from too); this module holds only the parser's own rules.

// Parses bytes from outside: no indexing that can panic, no arithmetic that can overflow.
#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

mod bit;
mod error;
mod falcon_ucode;
mod pci_rom;
pub(crate) mod source;

#[cfg(test)]
mod tests;

use alloc::vec;
use alloc::vec::Vec;

pub use bit::{token_name, BiosVersion, BitTable, BitToken};
pub use error::{Result, VbiosError};
pub use falcon_ucode::{FalconUcodeEntry, FalconUcodeTable};
pub use pci_rom::{CodeType, IfrHeader, Npde, RomImage, MAX_IMAGES};
pub use source::{Bar0Read, NV_PROM_DATA_BASE, PROM_WINDOW_SIZE};

use source::{read_bytes, PromSource, RomSource, SliceSource};

/// A parsed VBIOS: the ROM chain's bytes, its images, its BIT and its version.
///
/// Owns a copy of the ROM chain (from the first image to the end of the last one, at most
/// [`PROM_WINDOW_SIZE`] bytes) so the FWSEC code and data it hands out stay valid for the GSP boot.
#[derive(Debug, Clone)]
pub struct Vbios {
    rom: Vec<u8>,
    rom_offset: u32,
    ifr: Option<IfrHeader>,
    images: Vec<RomImage>,
    expansion_rom_offset: u32,
    bit: BitTable,
    version: Option<BiosVersion>,
}

impl Vbios {
    /// Parses a VBIOS from a ROM file's bytes.
    pub fn from_bytes(data: &[u8]) -> Result<Self> {
        let mut source = SliceSource::new(data)?;
        Self::from_source(&mut source)
    }

    /// Reads and parses the VBIOS through the PROM window (`NV_PROM_DATA`) of BAR0.
    ///
    /// Reads only as much of the window as the image chain spans.
    pub fn from_prom<B: Bar0Read + ?Sized>(bar0: &B) -> Result<Self> {
        let mut source = PromSource::new(bar0);
        Self::from_source(&mut source)
    }

    fn from_source<S: RomSource + ?Sized>(source: &mut S) -> Result<Self> {
        let layout = pci_rom::locate(source)?;
        let mut rom = vec![0u8; layout.rom_size as usize];
        read_bytes(source, "ROM image chain", layout.rom_offset, &mut rom)?;
        let bit = BitTable::find(&rom)?;
        let version = BiosVersion::from_bit(&rom, &bit)?;
        Ok(Self {
            rom,
            rom_offset: layout.rom_offset,
            ifr: layout.ifr,
            images: layout.images,
            expansion_rom_offset: layout.expansion_rom_offset,
            bit,
            version,
        })
    }

    /// The ROM chain's bytes; ROM offsets index into this.
    pub fn rom(&self) -> &[u8] {
        &self.rom
    }

    /// Where the ROM starts in the source (non-zero behind an NVGI header).
    pub fn rom_offset(&self) -> u32 {
        self.rom_offset
    }

    /// The NVGI (IFR) header the source began with, if any.
    pub fn ifr(&self) -> Option<&IfrHeader> {
        self.ifr.as_ref()
    }

    /// The images of the PCI expansion ROM chain, in order.
    pub fn images(&self) -> &[RomImage] {
        &self.images
    }

    /// The base the falcon ucode table and descriptor pointers count from: the first FWSEC
    /// (0xE0) image's offset less the x86 image's size, or 0 if either is missing.
    pub fn expansion_rom_offset(&self) -> u32 {
        self.expansion_rom_offset
    }

    /// The BIOS Information Table.
    pub fn bit(&self) -> &BitTable {
        &self.bit
    }

    /// The VBIOS version from the BIOSDATA token, if the BIT has one.
    pub fn version(&self) -> Option<BiosVersion> {
        self.version
    }

    /// The falcon ucode table reached from the BIT falcon data token.
    pub fn falcon_ucode_table(&self) -> Result<FalconUcodeTable> {
        FalconUcodeTable::find(&self.rom, &self.bit, self.expansion_rom_offset)
    }
}
