//! IMEM/DMEM loads by the falcon's own DMA engine, from system memory through its FBIF.
//!
//! Follows `kflcnDisableCtxReq_TU102` (FBIF_CTL, DMACTL), the TRANSCFG setup and
//! `s_dmaTransfer_GA102`/`s_dmaPoll_GA102` of `kgspExecuteHsFalcon_GA102`
//! (`kernel_gsp_falcon_ga102.c`): the DMA base is the source's bus address >> 8, each 256-byte
//! transfer names its falcon-side offset (DMATRFMOFFS) and its offset from the base
//! (DMATRFFBOFFS, which also becomes the IMEM block's tag), the queue must have room before the
//! base or a command is written, and the engine must be idle before anything else runs.

use alloc::vec::Vec;

use super::pio::pio_address_limit;
use super::HostBooted;
use super::{Falcon, FalconError, Result, DMA_TIMEOUT_MS};
use crate::hal::FalconLayout;
use crate::hw::falcon::{
    ga102, tu102, DmaTransferSize, FbifMemType, FbifTarget, NV_PFALCON_FALCON_DMACTL, NV_PFALCON_FALCON_DMATRFBASE,
    NV_PFALCON_FALCON_DMATRFBASE1, NV_PFALCON_FALCON_DMATRFCMD, NV_PFALCON_FALCON_DMATRFFBOFFS, NV_PFALCON_FBIF_CTL,
    NV_PFALCON_FBIF_TRANSCFG,
};
use crate::hw::falcon2::NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM;
use crate::hw::RegisterIo;
use crate::platform::{Clock, DmaBuffer};

/// Bytes one DMA command moves (`NV_PFALCON_FALCON_DMATRFCMD_SIZE_256B`).
pub const DMA_BLOCK: u32 = 256;
/// The FBIF context (TRANSCFG index) the driver's transfers use, as `kgspExecuteHsFalcon_GA102`.
const CTXDMA: u8 = 0;
/// DMATRFBASE holds address bits 39:8 and DMATRFBASE1 bits 48:40: 49 bits of bus address.
const DMA_ADDRESS_LIMIT: u64 = 1 << 49;

/// Where in system memory the FBIF sends the falcon's DMA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmaTarget {
    /// Cache-coherent system memory (`NV_PFALCON_FBIF_TRANSCFG_TARGET_COHERENT_SYSMEM`).
    CoherentSysmem,
    /// Non-coherent system memory (see `regs` for where the value comes from).
    NoncoherentSysmem,
}

/// Which falcon memory a load fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FalconMemory {
    /// Instruction memory; `secure` marks the blocks for heavy-secure code.
    Imem { secure: bool },
    /// Data memory.
    Dmem,
}

/// One contiguous piece of a DMA buffer to load into falcon memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaSegment {
    /// Destination memory.
    pub memory: FalconMemory,
    /// Where the piece starts in the buffer.
    pub source_offset: u32,
    /// Where it lands in IMEM/DMEM (a 256-byte boundary).
    pub falcon_offset: u32,
    /// Length in bytes; transfers move whole 256-byte blocks, so the buffer must hold the piece
    /// rounded up to 256.
    pub len: u32,
    /// The address the ucode sees the piece at (RM's `imemVa`/`dmemVa`): DMATRFFBOFFS counts up
    /// from it, so IMEM blocks are tagged with it, and for DMEM `Some` also sets SET_DMTAG.
    /// `None` counts from 0 and leaves DMEM untagged.
    pub virtual_address: Option<u32>,
}

impl<R: RegisterIo, C: Clock, E: HostBooted> Falcon<R, C, E> {
    /// The FBIF base, for engines whose DMA the driver programs.
    fn fbif_base(&self) -> Result<u32> {
        self.unit.fbif_base.ok_or(self.unsupported("DMA through the FBIF"))
    }

    /// Lets the falcon DMA to physical addresses without a context (`kflcnDisableCtxReq_TU102`)
    /// and points FBIF context 0 at physical `target` memory.
    pub fn configure_dma(&self, target: DmaTarget) -> Result<()> {
        let fbif = self.fbif_base()?;
        NV_PFALCON_FBIF_CTL::modify(&self.io, fbif, |r| r.with(NV_PFALCON_FBIF_CTL::ALLOW_PHYS_NO_CTX, true));
        NV_PFALCON_FALCON_DMACTL::default().write(&self.io, self.base());
        NV_PFALCON_FBIF_TRANSCFG::read(&self.io, fbif, CTXDMA.into())
            .with(NV_PFALCON_FBIF_TRANSCFG::MEM_TYPE, FbifMemType::Physical)
            .with_target(target)
            .write(&self.io, fbif, CTXDMA.into());
        Ok(())
    }

    /// Loads `segments` of `buffer` into falcon memory by DMA, after [`Self::configure_dma`]
    /// for `target`. Every segment is checked before the first register is written.
    pub fn load_dma(&self, buffer: &DmaBuffer, target: DmaTarget, segments: &[DmaSegment]) -> Result<()> {
        self.fbif_base()?;
        let imem_size =
            if segments.iter().any(|s| matches!(s.memory, FalconMemory::Imem { .. })) { self.imem_size() } else { 0 };
        let plans = segments
            .iter()
            .map(|segment| self.plan_transfer(buffer, segment, imem_size))
            .collect::<Result<Vec<_>>>()?;
        self.configure_dma(target)?;
        for plan in &plans {
            self.transfer(plan)?;
        }
        Ok(())
    }

    /// Checks one segment and works out its registers.
    fn plan_transfer(&self, buffer: &DmaBuffer, segment: &DmaSegment, imem_size: u32) -> Result<Transfer> {
        let engine = self.engine();
        let too_large = |what, size: u64, max: u64| FalconError::TooLarge { engine, what, size, max };

        self.check_aligned("DMA falcon offset", segment.falcon_offset.into(), DMA_BLOCK)?;
        let blocks = u64::from(segment.len).div_ceil(DMA_BLOCK.into());
        let span = blocks * u64::from(DMA_BLOCK);

        let source_end = u64::from(segment.source_offset) + span;
        if source_end > buffer.len() as u64 {
            return Err(too_large("DMA source (offset + length rounded to 256)", source_end, buffer.len() as u64));
        }

        let falcon_end = u64::from(segment.falcon_offset) + span;
        let moffs_limit = match self.layout() {
            FalconLayout::Tu102 => 1u64 << tu102::NV_PFALCON_FALCON_DMATRFMOFFS::OFFS.bits.width(),
            FalconLayout::Ga102 => 1u64 << ga102::NV_PFALCON_FALCON_DMATRFMOFFS::OFFS.bits.width(),
        };
        let (falcon_limit, what) = match segment.memory {
            FalconMemory::Imem { .. } => (u64::from(imem_size), "DMA load into IMEM"),
            FalconMemory::Dmem => (pio_address_limit(self.layout()), "DMA load into DMEM"),
        };
        if falcon_end > falcon_limit.min(moffs_limit) {
            return Err(too_large(what, falcon_end, falcon_limit.min(moffs_limit)));
        }

        let virtual_start = u64::from(segment.virtual_address.unwrap_or(0));
        if virtual_start + span > u64::from(u32::MAX) + 1 {
            return Err(too_large("DMA virtual address range", virtual_start + span, u64::from(u32::MAX) + 1));
        }

        // The base is where virtual address 0 would be; the transfers' FBOFFS add the rest.
        let source = buffer.bus_address().checked_add(segment.source_offset.into());
        let dma_base = source
            .and_then(|s| s.checked_sub(virtual_start))
            .ok_or(FalconError::BadUcodeLayout { what: "DMA virtual address lies beyond the source's bus address" })?;
        self.check_aligned("DMA base (bus address + source offset - virtual address)", dma_base, DMA_BLOCK)?;
        let reach = dma_base.saturating_add(virtual_start + span);
        if reach > DMA_ADDRESS_LIMIT {
            return Err(too_large("DMA bus address", reach, DMA_ADDRESS_LIMIT));
        }

        use NV_PFALCON_FALCON_DMATRFCMD as Cmd;
        let mut command =
            Cmd::default().with(Cmd::WRITE, false).with(Cmd::SIZE, DmaTransferSize::Bytes256).with(Cmd::CTXDMA, CTXDMA);
        command = match segment.memory {
            FalconMemory::Imem { secure } => command.with(Cmd::IMEM, true).with(Cmd::SEC, secure as u8),
            FalconMemory::Dmem => {
                command.with(Cmd::IMEM, false).with(Cmd::SET_DMTAG, segment.virtual_address.is_some())
            }
        };

        Ok(Transfer {
            dma_base,
            falcon_offset: segment.falcon_offset,
            virtual_start: virtual_start as u32,
            blocks: blocks as u32,
            command,
        })
    }

    /// Waits until the DMA queue has room.
    fn wait_dma_queue(&self) -> Result<()> {
        self.wait(DMA_TIMEOUT_MS, "DMA queue space", || {
            (!NV_PFALCON_FALCON_DMATRFCMD::read(&self.io, self.base()).full()).then_some(())
        })
    }

    fn transfer(&self, plan: &Transfer) -> Result<()> {
        let base = self.base();
        // Writing the base while the queue is full would corrupt queued transfers.
        self.wait_dma_queue()?;
        let shifted = plan.dma_base >> 8;
        NV_PFALCON_FALCON_DMATRFBASE(shifted as u32).write(&self.io, base);
        NV_PFALCON_FALCON_DMATRFBASE1::default()
            .with(NV_PFALCON_FALCON_DMATRFBASE1::BASE, (shifted >> 32) as u16)
            .write(&self.io, base);

        for block in 0..plan.blocks {
            let step = block * DMA_BLOCK;
            self.wait_dma_queue()?;
            let moffs = plan.falcon_offset + step;
            match self.layout() {
                FalconLayout::Tu102 => {
                    use tu102::NV_PFALCON_FALCON_DMATRFMOFFS as M;
                    M::default().with(M::OFFS, moffs as u16).write(&self.io, base)
                }
                FalconLayout::Ga102 => {
                    use ga102::NV_PFALCON_FALCON_DMATRFMOFFS as M;
                    M::default().with(M::OFFS, moffs).write(&self.io, base)
                }
            }
            NV_PFALCON_FALCON_DMATRFFBOFFS(plan.virtual_start.wrapping_add(step)).write(&self.io, base);
            plan.command.write(&self.io, base);
        }

        // GA10x and later have no memory tagging to order DMA against later accesses: wait.
        self.wait(DMA_TIMEOUT_MS, "DMA completion", || {
            NV_PFALCON_FALCON_DMATRFCMD::read(&self.io, base).idle().then_some(())
        })
    }
}

/// A checked segment: what its transfers write.
#[derive(Debug, Clone, Copy)]
struct Transfer {
    dma_base: u64,
    falcon_offset: u32,
    virtual_start: u32,
    blocks: u32,
    command: NV_PFALCON_FALCON_DMATRFCMD,
}

trait WithTarget {
    fn with_target(self, target: DmaTarget) -> Self;
}

impl WithTarget for NV_PFALCON_FBIF_TRANSCFG {
    fn with_target(self, target: DmaTarget) -> Self {
        match target {
            DmaTarget::CoherentSysmem => self.with(Self::TARGET, FbifTarget::CoherentSysmem),
            // The hw enum names only the coherent value; set the field's bits directly.
            DmaTarget::NoncoherentSysmem => {
                Self(Self::TARGET.bits.insert(self.0, NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM))
            }
        }
    }
}
