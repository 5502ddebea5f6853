//! EMEM: the memory a falcon shares with the host through EMEMC/EMEMD ports, where the FSP's
//! message queues live on Hopper and Blackwell (and GSP has one too).
//!
//! Follows `kfspConfigEmemc_GH100`, `kfspWriteToEmem_GH100` and `kfspReadFromEmem_GH100`
//! (`kern_fsp_gh100.c`): EMEMC takes the start as a block (64 words) and a word in it, with
//! auto-increment for writes or reads; afterwards EMEMC must point just past the last word, or
//! auto-increment did not work. Port 0 is RM's channel (`FSP_EMEM_CHANNEL_RM`).

use super::{Falcon, FalconError, HasEmem, Result};
use crate::hw::engine::{NV_PFSP_EMEMC, NV_PGSP_EMEMC};
use crate::hw::RegisterIo;
use crate::platform::Clock;

/// `FSP_EMEM_CHANNEL_RM` (`fsp_emem_channels.h`): the port and channel RM uses.
const PORT: u32 = 0;
const WORD: u32 = 4;
/// Words in one EMEM block.
const BLOCK_WORDS: u32 = 64;
/// The words EMEMC's OFFS (6 bits) and BLK (8 bits) fields address together.
const ADDRESS_WORDS: u32 = 1 << 14;

// The GSP's and the FSP's EMEM ports have one layout.
const _: () = assert!(
    NV_PFSP_EMEMC::OFFS.bits.lo == NV_PGSP_EMEMC::OFFS.bits.lo
        && NV_PFSP_EMEMC::BLK.bits.lo == NV_PGSP_EMEMC::BLK.bits.lo
        && NV_PFSP_EMEMC::BLK.bits.hi == NV_PGSP_EMEMC::BLK.bits.hi
        && NV_PFSP_EMEMC::AINCW.bits.lo == NV_PGSP_EMEMC::AINCW.bits.lo
        && NV_PFSP_EMEMC::AINCR.bits.lo == NV_PGSP_EMEMC::AINCR.bits.lo
        && (1u32 << (NV_PFSP_EMEMC::OFFS.bits.width() + NV_PFSP_EMEMC::BLK.bits.width())) == ADDRESS_WORDS
);

impl<R: RegisterIo, C: Clock, E: HasEmem> Falcon<R, C, E> {
    /// Checks a transfer of `len` bytes at `offset` and returns its first word.
    fn check_emem(&self, what: &'static str, offset: u32, len: usize) -> Result<u32> {
        self.check_aligned(what, offset.into(), WORD)?;
        self.check_size(what, len as u64, WORD)?;
        let end = u64::from(offset) + len as u64;
        self.check_fits(what, end, u64::from(ADDRESS_WORDS * WORD))?;
        Ok(offset / WORD)
    }

    fn emem_control(start_word: u32, write: bool) -> u32 {
        NV_PFSP_EMEMC::default()
            .with(NV_PFSP_EMEMC::OFFS, (start_word % BLOCK_WORDS) as u8)
            .with(NV_PFSP_EMEMC::BLK, (start_word / BLOCK_WORDS) as u8)
            .with(NV_PFSP_EMEMC::AINCW, write)
            .with(NV_PFSP_EMEMC::AINCR, !write)
            .raw()
    }

    /// Checks that EMEMC advanced to `start + words`.
    fn check_emem_advanced(&self, ememc: u32, start_word: u32, words: u32) -> Result<()> {
        let value = NV_PFSP_EMEMC::from_raw(self.io.read32(ememc));
        let found = u32::from(value.offs()) + u32::from(value.blk()) * BLOCK_WORDS;
        let expected = (start_word + words) % ADDRESS_WORDS;
        if found != expected {
            return Err(FalconError::EmemOffsetMismatch {
                engine: self.engine(),
                expected_words: expected,
                found_words: found,
            });
        }
        Ok(())
    }

    /// Writes `data` (whole words) into EMEM at byte `offset` (word aligned).
    pub fn emem_write(&self, offset: u32, data: &[u8]) -> Result<()> {
        let (ememc, ememd) = E::emem_ports(PORT);
        let start = self.check_emem("EMEM write", offset, data.len())?;
        self.io.write32(ememc, Self::emem_control(start, true));
        for chunk in data.chunks_exact(WORD as usize) {
            self.io.write32(ememd, u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
        }
        self.check_emem_advanced(ememc, start, (data.len() / WORD as usize) as u32)
    }

    /// Reads EMEM at byte `offset` (word aligned) into `out` (whole words).
    pub fn emem_read(&self, offset: u32, out: &mut [u8]) -> Result<()> {
        let (ememc, ememd) = E::emem_ports(PORT);
        let start = self.check_emem("EMEM read", offset, out.len())?;
        self.io.write32(ememc, Self::emem_control(start, false));
        for chunk in out.chunks_exact_mut(WORD as usize) {
            chunk.copy_from_slice(&self.io.read32(ememd).to_le_bytes());
        }
        self.check_emem_advanced(ememc, start, (out.len() / WORD as usize) as u32)
    }
}
