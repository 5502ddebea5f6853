//! IMEM/DMEM loads by programmed I/O through access port 0: IMEMC/IMEMD with auto-increment and a
//! block tag (IMEMT) every 256 bytes, DMEMC/DMEMD, and DMEM readback.
//!
//! Follows `s_imemCopyTo_TU102`/`s_dmemCopyTo_TU102` (`kernel_gsp_falcon_tu102.c`) and, for
//! reading, `kcrashcatEngineReadDmem_TU102`, which RM uses on every chip (the DMEMC AINCR bit
//! is declared only in Turing's header; GA102's header leaves bit 25 unnamed).

use super::{Engine, HostBooted};
use super::{Falcon, FalconError, Result};
use crate::hal::FalconLayout;
use crate::hw::falcon::{ga102, tu102, NV_PFALCON_FALCON_DMEMD, NV_PFALCON_FALCON_IMEMD, NV_PFALCON_FALCON_IMEMT};
use crate::hw::RegisterIo;
use crate::platform::Clock;

/// Falcon memories are organised, tagged and transferred in 256-byte blocks.
pub const FALCON_BLOCK: u32 = 256;
/// PIO moves 32-bit words.
const WORD: u32 = 4;
/// The port the driver uses (RM uses port 0 for loads).
const PORT: u32 = 0;

// Both layouts put the access ports at the same offsets; only their BLK fields differ.
const _: () = assert!(
    tu102::NV_PFALCON_FALCON_IMEMC::OFFSET == ga102::NV_PFALCON_FALCON_IMEMC::OFFSET
        && tu102::NV_PFALCON_FALCON_IMEMC::STRIDE == ga102::NV_PFALCON_FALCON_IMEMC::STRIDE
        && tu102::NV_PFALCON_FALCON_DMEMC::OFFSET == ga102::NV_PFALCON_FALCON_DMEMC::OFFSET
        && tu102::NV_PFALCON_FALCON_DMEMC::STRIDE == ga102::NV_PFALCON_FALCON_DMEMC::STRIDE
        && tu102::NV_PFALCON_FALCON_DMEMC::AINCW.bits.lo == ga102::NV_PFALCON_FALCON_DMEMC::AINCW.bits.lo
);

/// How many bytes an IMEMC/DMEMC address can reach: its OFFS (7:2) and BLK fields together.
pub(super) fn pio_address_limit(layout: FalconLayout) -> u64 {
    let blk_bits = match layout {
        FalconLayout::Tu102 => tu102::NV_PFALCON_FALCON_IMEMC::BLK.bits.width(),
        FalconLayout::Ga102 => ga102::NV_PFALCON_FALCON_IMEMC::BLK.bits.width(),
    };
    1u64 << (blk_bits + 8)
}

/// Words of `data`, little-endian (the falcon's byte order).
fn words(data: &[u8]) -> impl Iterator<Item = u32> + '_ {
    data.chunks_exact(WORD as usize).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// Argument checks every memory access shares (PIO, DMA, EMEM).
impl<R: RegisterIo, C: Clock, E: Engine> Falcon<R, C, E> {
    pub(super) fn check_aligned(&self, what: &'static str, address: u64, alignment: u32) -> Result<()> {
        if !address.is_multiple_of(u64::from(alignment)) {
            return Err(FalconError::AddressNotAligned { engine: self.engine(), what, address, alignment });
        }
        Ok(())
    }

    pub(super) fn check_size(&self, what: &'static str, size: u64, alignment: u32) -> Result<()> {
        if !size.is_multiple_of(u64::from(alignment)) {
            return Err(FalconError::SizeNotAligned { engine: self.engine(), what, size, alignment });
        }
        Ok(())
    }

    pub(super) fn check_fits(&self, what: &'static str, end: u64, max: u64) -> Result<()> {
        if end > max {
            return Err(FalconError::TooLarge { engine: self.engine(), what, size: end, max });
        }
        Ok(())
    }
}

impl<R: RegisterIo, C: Clock, E: HostBooted> Falcon<R, C, E> {
    /// Writes `code` into IMEM at `imem_offset` (a block boundary), tagging each 256-byte block
    /// with consecutive tags from `virtual_address >> 8`, and marking the blocks secure when
    /// `secure` (heavy-secure code is verified from secure blocks).
    ///
    /// `code` is whole words; it need not fill its last block. Checked before any write: the
    /// alignments, the IMEM size (`HWCFG_IMEM_SIZE`), the IMEMC address field and the tag field.
    pub fn load_imem(&self, imem_offset: u32, code: &[u8], virtual_address: u32, secure: bool) -> Result<()> {
        self.check_aligned("IMEM load offset", imem_offset.into(), FALCON_BLOCK)?;
        self.check_aligned("IMEM virtual address", virtual_address.into(), FALCON_BLOCK)?;
        self.check_size("IMEM load", code.len() as u64, WORD)?;
        if code.is_empty() {
            return Ok(());
        }
        let end = u64::from(imem_offset) + code.len() as u64;
        self.check_fits("IMEM load address", end, pio_address_limit(self.layout()))?;
        self.check_fits("IMEM load", end, self.imem_size().into())?;
        let blocks = (code.len() as u64).div_ceil(FALCON_BLOCK.into());
        let first_tag = u64::from(virtual_address >> 8);
        self.check_fits("IMEM block tag", first_tag + blocks - 1, u64::from(u16::MAX))?;

        let base = self.base();
        let block = imem_offset / FALCON_BLOCK;
        let imemc = match self.layout() {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_IMEMC as C;
                // Fits: checked against the field's reach above.
                C::default().with(C::BLK, block as u8).with(C::AINCW, true).with(C::SECURE, secure).raw()
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_IMEMC as C;
                C::default().with(C::BLK, block as u16).with(C::AINCW, true).with(C::SECURE, secure).raw()
            }
        };
        self.io.write32(tu102::NV_PFALCON_FALCON_IMEMC::address(base, PORT), imemc);

        let words_per_block = (FALCON_BLOCK / WORD) as usize;
        let mut tag = first_tag as u16;
        for (index, word) in words(code).enumerate() {
            if index % words_per_block == 0 {
                NV_PFALCON_FALCON_IMEMT::default().with(NV_PFALCON_FALCON_IMEMT::TAG, tag).write(&self.io, base, PORT);
                tag = tag.wrapping_add(1);
            }
            NV_PFALCON_FALCON_IMEMD(word).write(&self.io, base, PORT);
        }
        Ok(())
    }

    /// The DMEMC value addressing `dmem_offset`, with write or read auto-increment.
    fn dmemc(&self, dmem_offset: u32, read: bool) -> u32 {
        let offs = ((dmem_offset % FALCON_BLOCK) / WORD) as u8;
        let block = dmem_offset / FALCON_BLOCK;
        let value = match self.layout() {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_DMEMC as C;
                C::default().with(C::OFFS, offs).with(C::BLK, block as u8).raw()
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_DMEMC as C;
                C::default().with(C::OFFS, offs).with(C::BLK, block as u16).raw()
            }
        };
        use tu102::NV_PFALCON_FALCON_DMEMC as T;
        if read {
            T::AINCR.bits.insert(value, 1)
        } else {
            T::AINCW.bits.insert(value, 1)
        }
    }

    fn check_dmem_range(&self, what: &'static str, dmem_offset: u32, len: usize) -> Result<()> {
        self.check_aligned(what, dmem_offset.into(), WORD)?;
        self.check_size(what, len as u64, WORD)?;
        let end = u64::from(dmem_offset) + len as u64;
        self.check_fits(what, end, pio_address_limit(self.layout()))
    }

    /// Writes `data` (whole words) into DMEM at `dmem_offset` (word aligned).
    pub fn load_dmem(&self, dmem_offset: u32, data: &[u8]) -> Result<()> {
        self.check_dmem_range("DMEM load", dmem_offset, data.len())?;
        if data.is_empty() {
            return Ok(());
        }
        let base = self.base();
        self.io.write32(tu102::NV_PFALCON_FALCON_DMEMC::address(base, PORT), self.dmemc(dmem_offset, false));
        for word in words(data) {
            NV_PFALCON_FALCON_DMEMD(word).write(&self.io, base, PORT);
        }
        Ok(())
    }

    /// Reads DMEM from `dmem_offset` (word aligned) into `out` (whole words): to verify a load or
    /// to collect what a ucode left in DMEM.
    pub fn read_dmem(&self, dmem_offset: u32, out: &mut [u8]) -> Result<()> {
        self.check_dmem_range("DMEM read", dmem_offset, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        let base = self.base();
        self.io.write32(tu102::NV_PFALCON_FALCON_DMEMC::address(base, PORT), self.dmemc(dmem_offset, true));
        for chunk in out.chunks_exact_mut(WORD as usize) {
            chunk.copy_from_slice(&NV_PFALCON_FALCON_DMEMD::read(&self.io, base, PORT).raw().to_le_bytes());
        }
        Ok(())
    }
}
