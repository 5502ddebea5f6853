//! The RISC-V core's registers (`dev_riscv_pri.h`) and the boot ROM's (`dev_falcon_second_pri.h`):
//! CPUCTL, BCR, the BROM parameters, as the parent module describes them.

use super::*;

impl Falcon {
    pub(super) fn read_riscv(&mut self, rel: u32) -> Option<u32> {
        let value = match self.spec.layout {
            FalconLayout::Tu102 => match rel {
                r if r == tu102::NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS::OFFSET => {
                    tu102::NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS::default()
                        .with(tu102::NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS::ACTIVE_STAT, self.riscv.running)
                        .raw()
                }
                r if r == tu102::NV_PRISCV_RISCV_IRQMASK::OFFSET => self.riscv.irqmask,
                r if r == tu102::NV_PRISCV_RISCV_IRQDEST::OFFSET => self.riscv.irqdest,
                _ => return None,
            },
            FalconLayout::Ga102 => match rel {
                r if r == gh100::NV_PRISCV_RISCV_CPUCTL::OFFSET => {
                    use gh100::NV_PRISCV_RISCV_CPUCTL as C;
                    C::default().with(C::HALTED, self.riscv.halted).with(C::ACTIVE_STAT, self.riscv.running).raw()
                }
                r if r == ga102::NV_PRISCV_RISCV_BCR_CTRL::OFFSET => {
                    use ga102::{CoreSelect, NV_PRISCV_RISCV_BCR_CTRL as B};
                    let core = if self.riscv.core_select_riscv { CoreSelect::Riscv } else { CoreSelect::Falcon };
                    B::default()
                        .with(B::VALID, self.riscv.valid)
                        .with(B::CORE_SELECT, core)
                        .with(B::BRFETCH, self.riscv.brfetch)
                        .raw()
                }
                r if r == ga102::NV_PRISCV_RISCV_IRQMASK::OFFSET => self.riscv.irqmask,
                r if r == ga102::NV_PRISCV_RISCV_IRQDEST::OFFSET => self.riscv.irqdest,
                r if self.has_bcr_dma() && r == gh100::NV_PRISCV_RISCV_BCR_DMACFG::OFFSET => self.riscv.bcr_dmacfg,
                r if self.has_bcr_dma() && self.bcr_dmaaddr_index(r).is_some() => {
                    self.bcr_dmaaddr_index(r).map_or(0, |i| self.riscv.bcr_dmaaddr[i])
                }
                r if self.spec.has_boot_rom_registers() => self.read_brom(r)?,
                _ => return None,
            },
        };
        Some(value)
    }

    pub(super) fn has_bcr_dma(&self) -> bool {
        self.spec.layout == FalconLayout::Ga102 && self.spec.reports_reset_status
    }

    pub(super) fn bcr_dmaaddr_index(&self, rel: u32) -> Option<usize> {
        let first = gh100::NV_PRISCV_RISCV_BCR_DMAADDR_PKCPARAM_LO::OFFSET;
        let index = rel.checked_sub(first)? / 4;
        (rel.is_multiple_of(4) && index < 6).then_some(index as usize)
    }

    pub(super) fn read_brom(&self, rel: u32) -> Option<u32> {
        match rel {
            NV_PFALCON2_FALCON_MOD_SEL::OFFSET => Some(self.brom_mod_sel),
            NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::OFFSET => Some(self.brom_ucode_id),
            NV_PFALCON2_FALCON_BROM_ENGIDMASK::OFFSET => Some(self.brom_engid_mask),
            r => self.paraaddr_index(r).map(|i| self.brom_paraaddr[i]),
        }
    }

    pub(super) fn paraaddr_index(&self, rel: u32) -> Option<usize> {
        let index =
            rel.checked_sub(NV_PFALCON2_FALCON_BROM_PARAADDR::OFFSET)? / NV_PFALCON2_FALCON_BROM_PARAADDR::STRIDE;
        (rel.is_multiple_of(4) && index < BROM_PARAADDR_MODELLED).then_some(index as usize)
    }

    pub(super) fn write_riscv(&mut self, rel: u32, value: u32, env: &mut Env<'_>) -> bool {
        match self.spec.layout {
            FalconLayout::Tu102 => match rel {
                r if r == tu102::NV_PRISCV_RISCV_IRQMASK::OFFSET => self.riscv.irqmask = value,
                r if r == tu102::NV_PRISCV_RISCV_IRQDEST::OFFSET => self.riscv.irqdest = value,
                r if r == tu102::NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS::OFFSET => {
                    env.log.record(ModelError::ReadOnly {
                        register: tu102::NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS::NAME,
                        offset: self.spec.unit.riscv_base.unwrap_or(0) + r,
                        value,
                    });
                }
                _ => return false,
            },
            FalconLayout::Ga102 => match rel {
                r if r == gh100::NV_PRISCV_RISCV_CPUCTL::OFFSET => {
                    use gh100::NV_PRISCV_RISCV_CPUCTL as C;
                    let read_only = C::HALTED.bits.mask() | C::STOPPED.bits.mask() | C::ACTIVE_STAT.bits.mask();
                    if let Some(value) = undefined_bits(value, C::STARTCPU.bits.mask() | read_only) {
                        self.record(env.log, FalconError::UndefinedBits { register: C::NAME, value });
                    }
                    if C::from_raw(value).startcpu() {
                        self.start_riscv(env);
                    }
                }
                r if r == ga102::NV_PRISCV_RISCV_BCR_CTRL::OFFSET => {
                    use ga102::{CoreSelect, NV_PRISCV_RISCV_BCR_CTRL as B};
                    let defined = B::CORE_SELECT.bits.mask() | B::BRFETCH.bits.mask() | B::VALID.bits.mask();
                    if let Some(value) = undefined_bits(value, defined) {
                        self.record(env.log, FalconError::UndefinedBits { register: B::NAME, value });
                    }
                    let bcr = B::from_raw(value);
                    self.riscv.core_select_riscv = bcr.core_select() == Ok(CoreSelect::Riscv);
                    self.riscv.brfetch = bcr.brfetch();
                    // The core switch completes on the next poll (RM and Nova wait for VALID).
                    self.riscv.valid = false;
                    self.riscv.valid_after_polls = 1;
                }
                r if r == ga102::NV_PRISCV_RISCV_IRQMASK::OFFSET => self.riscv.irqmask = value,
                r if r == ga102::NV_PRISCV_RISCV_IRQDEST::OFFSET => self.riscv.irqdest = value,
                r if self.has_bcr_dma() && r == gh100::NV_PRISCV_RISCV_BCR_DMACFG::OFFSET => {
                    self.riscv.bcr_dmacfg = value
                }
                r if self.has_bcr_dma() && self.bcr_dmaaddr_index(r).is_some() => {
                    if let Some(i) = self.bcr_dmaaddr_index(r) {
                        self.riscv.bcr_dmaaddr[i] = value;
                    }
                }
                r if self.spec.has_boot_rom_registers() => match r {
                    NV_PFALCON2_FALCON_MOD_SEL::OFFSET => self.brom_mod_sel = value,
                    NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID::OFFSET => self.brom_ucode_id = value,
                    NV_PFALCON2_FALCON_BROM_ENGIDMASK::OFFSET => self.brom_engid_mask = value,
                    r => match self.paraaddr_index(r) {
                        Some(i) => self.brom_paraaddr[i] = value,
                        None => return false,
                    },
                },
                _ => return false,
            },
        }
        true
    }
}
