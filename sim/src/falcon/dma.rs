//! The falcon's DMA engine (`DMATRFCMD` and its registers) and the FBIF aperture checks.

use super::*;

impl Falcon {
    pub(super) fn dma_command(&mut self, value: u32, env: &mut Env<'_>) {
        use NV_PFALCON_FALCON_DMATRFCMD as C;
        self.dma_cmd = value & !(C::IDLE.bits.mask() | C::FULL.bits.mask());
        if let Err(error) = self.dma_transfer(C::from_raw(value), env) {
            self.record(env.log, error);
        }
    }

    pub(super) fn dma_transfer(
        &mut self,
        cmd: NV_PFALCON_FALCON_DMATRFCMD,
        env: &mut Env<'_>,
    ) -> Result<(), FalconError> {
        use NV_PFALCON_FALCON_DMATRFCMD as C;
        if self.spec.fsp_owned {
            return Err(FalconError::Privileged { what: "FSP DMA" });
        }
        if self.scrubbing() {
            return Err(FalconError::Scrubbing { what: "DMA" });
        }
        let dma = FalconError::Dma;
        if cmd.size() != Ok(DmaTransferSize::Bytes256) {
            return Err(dma(DmaError::UnsupportedSize { raw_size: C::SIZE.bits.extract(cmd.raw()) }));
        }
        let (moffs, fboffs) = (self.dma_moffs, self.dma_fboffs);
        if moffs % BLOCK != 0 || fboffs % BLOCK != 0 {
            return Err(dma(DmaError::Misaligned { memory_offset: moffs, external_offset: fboffs }));
        }
        let (memory, size) = if cmd.imem() { (FalconMemory::Imem, IMEM_SIZE) } else { (FalconMemory::Dmem, DMEM_SIZE) };
        if moffs.checked_add(BLOCK).is_none_or(|end| end > size) {
            return Err(dma(DmaError::OutOfRange { memory, offset: moffs, size }));
        }
        self.check_dma_aperture(u32::from(cmd.ctxdma()))?;
        let memory_port = env.memory.ok_or(dma(DmaError::NoSystemMemory))?;
        let bus = ((u64::from(self.dma_base1) << 40) | (u64::from(self.dma_base) << 8)).wrapping_add(u64::from(fboffs));
        let at = moffs as usize;
        let range = at..at + BLOCK as usize;
        let target = if cmd.imem() { &mut self.imem } else { &mut self.dmem };
        let ok = if cmd.is_write() {
            memory_port.write(bus, &target[range])
        } else {
            memory_port.read(bus, &mut target[range])
        };
        if !ok {
            return Err(dma(DmaError::Fault { bus, len: BLOCK, write: cmd.is_write() }));
        }
        if cmd.imem() && !cmd.is_write() {
            self.blocks[at / BLOCK as usize] =
                ImemBlock { valid: true, tag: (fboffs / BLOCK) as u16, secure: cmd.sec() != 0 };
        }
        Ok(())
    }

    /// What every DMA through FBIF context `ctxdma` needs: `DMACTL_REQUIRE_CTX` clear,
    /// `FBIF_CTL_ALLOW_PHYS_NO_CTX` set, and `FBIF_TRANSCFG(ctxdma)` physical system memory.
    pub(super) fn check_dma_aperture(&self, ctxdma: u32) -> Result<(), FalconError> {
        let dma = FalconError::Dma;
        if self.require_ctx {
            return Err(dma(DmaError::RequiresContext));
        }
        if !hwf::NV_PFALCON_FBIF_CTL::from_raw(self.fbif_ctl).allow_phys_no_ctx() {
            return Err(dma(DmaError::PhysicalWithoutContextNotAllowed));
        }
        let raw = self.fbif_transcfg.get(ctxdma as usize).copied().unwrap_or(0);
        let transcfg = hwf::NV_PFALCON_FBIF_TRANSCFG::from_raw(raw);
        let target = hwf::NV_PFALCON_FBIF_TRANSCFG::TARGET.bits.extract(transcfg.raw());
        let sysmem =
            target == FbifTarget::CoherentSysmem as u32 || target == f2::NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM;
        if !sysmem || transcfg.mem_type() != Ok(FbifMemType::Physical) || ctxdma as usize >= self.fbif_transcfg.len() {
            return Err(dma(DmaError::Aperture { ctxdma, transcfg: transcfg.raw() }));
        }
        Ok(())
    }
}
