//! Starting a falcon: the generic bootloader, booters, the model ucode checks and FWSEC, and the
//! halt that ends a run.

use super::*;

impl Falcon {
    /// NVIDIA's generic falcon bootloader `fp` runs ([`crate::generic_bl`]): its copies, then
    /// `BOOTVEC` at its entry for the ucode it loaded. DMA failures are recorded.
    pub(super) fn run_generic_bootloader(
        &mut self,
        fp: &generic_bl::GenericBlFingerprint,
        env: &mut Env<'_>,
    ) -> Result<(), HaltCode> {
        let loader_start = self.block_for_tag(fp.start_tag as u16)? as u32 * BLOCK;
        let loader_end = loader_start + fp.code_size.next_multiple_of(BLOCK);
        let plan = generic_bl::plan(fp, &self.dmem, loader_start..loader_end, IMEM_SIZE, DMEM_SIZE)?;
        if let Err(error) = self.check_dma_aperture(plan.ctx_dma) {
            self.record(env.log, error);
            return Err(HaltCode::LoaderFailed);
        }
        let memory_port = env.memory.ok_or(HaltCode::LoaderFailed)?;
        for copy in &plan.copies {
            let at = copy.falcon_offset as usize;
            let range = at..at + copy.len as usize;
            let target = if copy.imem { &mut self.imem } else { &mut self.dmem };
            let dest = target.get_mut(range).ok_or(HaltCode::LoaderFailed)?;
            if !memory_port.read(copy.bus, dest) {
                self.record(env.log, FalconError::Dma(DmaError::Fault { bus: copy.bus, len: copy.len, write: false }));
                return Err(HaltCode::LoaderFailed);
            }
            if copy.imem {
                for block in 0..copy.len / BLOCK {
                    let offset = copy.falcon_offset + block * BLOCK;
                    self.blocks[(offset / BLOCK) as usize] =
                        ImemBlock { valid: true, tag: (offset / BLOCK) as u16, secure: copy.secure };
                }
            }
        }
        self.bootvec = plan.entry;
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Running ucode.

    pub(super) fn halt(&mut self, code: HaltCode, log: &mut ErrorLog) {
        self.cpu = Cpu::Halted;
        self.mailbox[0] = code.value();
        self.irqstat |= hwf::NV_PFALCON_FALCON_IRQSTAT::HALT.bits.mask();
        if code != HaltCode::Success {
            self.record(log, FalconError::Halted { code });
        }
    }

    /// Halts after a booter ran: its `MAILBOX0`, and its error recorded.
    pub(super) fn halt_booter(&mut self, outcome: BooterOutcome, log: &mut ErrorLog) {
        self.cpu = Cpu::Halted;
        self.mailbox[0] = outcome.mailbox0;
        self.irqstat |= hwf::NV_PFALCON_FALCON_IRQSTAT::HALT.bits.mask();
        if let Some(error) = outcome.error {
            log.record(ModelError::Booter(error));
        }
    }

    pub(super) fn start_falcon(&mut self, env: &mut Env<'_>) {
        if self.spec.fsp_owned {
            self.record(env.log, FalconError::Privileged { what: "FSP CPU start" });
            return;
        }
        if self.scrubbing() {
            self.record(env.log, FalconError::Scrubbing { what: "CPU start" });
            return;
        }
        if self.engine() == FalconEngine::Sec2 && env.machine.gsp_resume_armed {
            // CORE_RESUME: SEC2 (its RTOS, in hardware) resumes GSP-RM; the chip finishes it.
            env.machine.events.push(ChipEvent::ResumeGspRm);
            return;
        }
        if self.spec.layout == FalconLayout::Ga102 && self.spec.has_riscv_core && self.riscv.core_select_riscv {
            self.halt(HaltCode::WrongCore, env.log);
            return;
        }
        if self.ran_since_reset {
            self.halt(HaltCode::NeedsReset, env.log);
            return;
        }
        self.ran_since_reset = true;
        match self.run_image(env) {
            RunEnd::Code(code) => self.halt(code, env.log),
            RunEnd::Booter(outcome) => self.halt_booter(outcome, env.log),
        }
    }

    pub(super) fn start_riscv(&mut self, env: &mut Env<'_>) {
        if !self.riscv.core_select_riscv {
            self.record(
                env.log,
                FalconError::StartIgnored {
                    reason: "RISC-V STARTCPU while BCR_CTRL_CORE_SELECT selects the falcon core",
                },
            );
            return;
        }
        self.riscv.halted = true;
        self.cpu = Cpu::Halted;
        self.mailbox[0] = HaltCode::RiscvNoImage.value();
        self.record(env.log, FalconError::Halted { code: HaltCode::RiscvNoImage });
    }

    /// The block holding IMEM virtual address block `tag`.
    pub(super) fn block_for_tag(&self, tag: u16) -> Result<usize, HaltCode> {
        let mut hits = self.blocks.iter().enumerate().filter(|(_, b)| b.valid && b.tag == tag).map(|(i, _)| i);
        match (hits.next(), hits.next()) {
            (Some(block), None) => Ok(block),
            (Some(_), Some(_)) => Err(HaltCode::MultipleTagHit),
            (None, _) => Err(HaltCode::ImageIncomplete),
        }
    }

    /// `len` bytes of IMEM from virtual address `va` (block by block through the tags), and
    /// whether every block was secure.
    pub(super) fn fetch(&self, va: u32, len: u32) -> Result<(Vec<u8>, bool), HaltCode> {
        let mut out = Vec::with_capacity(len as usize);
        let mut secure = true;
        let mut at = va;
        let end = va.checked_add(len).ok_or(HaltCode::BadHeader)?;
        while at < end {
            let tag = u16::try_from(at / BLOCK).map_err(|_| HaltCode::BadHeader)?;
            let block = self.block_for_tag(tag)?;
            secure &= self.blocks[block].secure;
            let in_block = at % BLOCK;
            let take = (BLOCK - in_block).min(end - at);
            let start = block * BLOCK as usize + in_block as usize;
            out.extend_from_slice(&self.imem[start..start + take as usize]);
            at += take;
        }
        Ok((out, secure))
    }

    pub(super) fn run_image(&mut self, env: &mut Env<'_>) -> RunEnd {
        if self.engine() == FalconEngine::Sec2 {
            if let Some(mailbox0) = env.machine.booter_halt.take() {
                return RunEnd::Booter(BooterOutcome::failed(booter::BooterError::Injected { mailbox0 }));
            }
            let machine = &*env.machine;
            match booter::recognise(machine.chipset, &*self, |id| machine.sec2_fuse_version(id), machine.debug_fused) {
                Ok(Some(fingerprint)) => return RunEnd::Booter(self.run_booter(fingerprint.kind, env)),
                Ok(None) => {}
                Err(code) => return RunEnd::Code(code),
            }
        }
        if let Some(loader) = generic_bl::recognise(&*self) {
            if let Err(code) = self.run_generic_bootloader(loader, env) {
                return RunEnd::Code(code);
            }
        }
        match self.check_and_run(env) {
            Ok(end) => end,
            Err(code) => RunEnd::Code(code),
        }
    }

    /// Runs booter `kind` (recognised or model) and applies what it changes outside SEC2.
    pub(super) fn run_booter(&mut self, kind: BooterKind, env: &mut Env<'_>) -> BooterOutcome {
        let ctx = booter::BooterContext {
            chipset: env.machine.chipset,
            mailboxes: self.mailbox,
            memory: env.memory,
            vram_bytes: env.machine.vram_bytes,
            wpr2: env.machine.wpr2_range(),
            gsp: env.gsp.unwrap_or_default(),
        };
        let outcome =
            crate::gsp_rm::suspend::booter(kind, &ctx, &env.machine.gsp_sr).unwrap_or_else(|| booter::run(kind, &ctx));
        for effect in &outcome.effects {
            match effect {
                booter::BooterEffect::SetWpr2 { lo_4k, hi_4k } => env.machine.set_wpr2(*lo_4k, *hi_4k),
                booter::BooterEffect::ClearWpr2 => env.machine.clear_wpr2(),
                booter::BooterEffect::StartGspRm { meta } => {
                    env.machine.events.push(ChipEvent::StartGspRm(meta.clone()))
                }
                booter::BooterEffect::Sr(state) => env.machine.gsp_sr = *state,
                booter::BooterEffect::RestoreGspRm => env.machine.events.push(ChipEvent::RestoreGspRm),
            }
        }
        outcome
    }

    pub(super) fn check_and_run(&mut self, env: &mut Env<'_>) -> Result<RunEnd, HaltCode> {
        let bootvec = self.bootvec;
        let first_tag = u16::try_from(bootvec / BLOCK).map_err(|_| HaltCode::NoImageAtBootvec)?;
        self.block_for_tag(first_tag).map_err(|code| match code {
            HaltCode::ImageIncomplete => HaltCode::NoImageAtBootvec,
            other => other,
        })?;
        let (head, _) = self.fetch(bootvec, ucode::MODEL_UCODE_HEADER_SIZE)?;
        let header = ucode::parse_header(&head)?;
        let (image, secure) = self.fetch(bootvec, header.image_size.get())?;
        if !ucode::checksum_matches(&header, &image) {
            return Err(HaltCode::ChecksumMismatch);
        }
        let flags = header.flags.get();
        if flags & FLAG_HS != 0 && !secure {
            return Err(HaltCode::NotSecure);
        }
        if (flags & FLAG_DEBUG_SIGNED != 0) != env.machine.debug_fused {
            return Err(HaltCode::WrongFuseMode);
        }
        if flags & FLAG_PKC != 0 && self.spec.has_boot_rom_registers() {
            self.verify_signature(&header, env.machine)?;
        }
        match header.application_id.get() {
            APPLICATION_FWSEC => {
                if self.engine() != FalconEngine::Gsp {
                    return Err(HaltCode::WrongEngine);
                }
                let context = FwsecContext { vram_bytes: env.machine.vram_bytes, wpr2_set: env.machine.wpr2_set() };
                let outcome = fwsec::run(&self.dmem, header.interface_offset.get(), &context);
                for effect in outcome.effects {
                    match effect {
                        FwsecEffect::SetWpr2 { lo_4k, hi_4k } => env.machine.set_wpr2(lo_4k, hi_4k),
                        FwsecEffect::SetScratch { index, value } => env.machine.set_scratch(index, value),
                    }
                }
                Ok(RunEnd::Code(outcome.halt))
            }
            id @ (booter::APPLICATION_BOOTER_LOAD | booter::APPLICATION_BOOTER_UNLOAD) => {
                if self.engine() != FalconEngine::Sec2 {
                    return Err(HaltCode::WrongEngine);
                }
                if !self.spec.has_boot_rom_registers() {
                    let fuse = env.machine.sec2_fuse_version(header.ucode_id.get());
                    booter::model_signature_in_dmem(&header, &self.dmem, fuse, env.machine.debug_fused)?;
                }
                let kind = if id == booter::APPLICATION_BOOTER_LOAD { BooterKind::Load } else { BooterKind::Unload };
                Ok(RunEnd::Booter(self.run_booter(kind, env)))
            }
            _ => Err(HaltCode::UnknownApplication),
        }
    }

    /// The model boot ROM's PKC check (see `crate::ucode`, step 6).
    pub(super) fn verify_signature(&self, header: &ucode::ModelUcodeHeader, machine: &Machine) -> Result<(), HaltCode> {
        let ucode_id = header.ucode_id.get();
        let programmed = self.brom_mod_sel & 0xFF == ModSelAlgo::Rsa3k as u32
            && self.brom_ucode_id & 0xFF == ucode_id
            && self.brom_engid_mask == header.engine_id_mask.get();
        let at = self.brom_paraaddr[0] as usize;
        let stored = self.dmem.get(at..at.saturating_add(SIGNATURE_SIZE));
        let Some(stored) = stored.filter(|_| programmed) else {
            return Err(HaltCode::BromNotProgrammed);
        };
        // SEC2 ucodes (the booters) are signed against SEC2's fuses (`ksec2ReadUcodeFuseVersion`).
        let fuse = if self.engine() == FalconEngine::Sec2 {
            machine.sec2_fuse_version(ucode_id)
        } else {
            machine.fuse_version(ucode_id)
        };
        let expected = ucode::model_signature(header.checksum.get(), fuse, machine.debug_fused);
        if stored == expected.as_slice() {
            Ok(())
        } else {
            Err(HaltCode::SignatureRejected)
        }
    }
}
