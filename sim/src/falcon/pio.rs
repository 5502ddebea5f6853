//! The falcon's PIO ports: IMEM (`IMEMC`/`IMEMD`/`IMEMT`), DMEM (`DMEMC`/`DMEMD`) and the FSP's
//! EMEM (`EMEMC`/`EMEMD`), with their auto-increment and tag rules as the parent module
//! describes them.

use super::*;

impl Falcon {
    pub(super) fn imemc_value(&self, port: usize) -> u32 {
        let p = self.imem_ports[port];
        let (offs, blk) = (((p.address >> 2) & 0x3F) as u8, p.address / BLOCK);
        match self.spec.layout {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_IMEMC as C;
                C::default()
                    .with(C::OFFS, offs)
                    .with(C::BLK, blk as u8)
                    .with(C::AINCW, p.aincw)
                    .with(C::SECURE, p.secure)
                    .raw()
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_IMEMC as C;
                C::default()
                    .with(C::OFFS, offs)
                    .with(C::BLK, blk as u16)
                    .with(C::AINCW, p.aincw)
                    .with(C::SECURE, p.secure)
                    .raw()
            }
        }
    }

    pub(super) fn imemc_write(&mut self, port: usize, value: u32, log: &mut ErrorLog) {
        let (address, aincw, secure, defined) = match self.spec.layout {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_IMEMC as C;
                let c = C::from_raw(value);
                let defined = C::OFFS.bits.mask() | C::BLK.bits.mask() | C::AINCW.bits.mask() | C::SECURE.bits.mask();
                (u32::from(c.blk()) * BLOCK + u32::from(c.offs()) * 4, c.aincw(), c.secure(), defined)
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_IMEMC as C;
                let c = C::from_raw(value);
                let defined = C::OFFS.bits.mask() | C::BLK.bits.mask() | C::AINCW.bits.mask() | C::SECURE.bits.mask();
                (u32::from(c.blk()) * BLOCK + u32::from(c.offs()) * 4, c.aincw(), c.secure(), defined)
            }
        };
        if let Some(value) = undefined_bits(value, defined) {
            self.record(log, FalconError::UndefinedBits { register: "NV_PFALCON_FALCON_IMEMC", value });
        }
        self.imem_ports[port] = Port { address, aincw, aincr: false, secure };
    }

    pub(super) fn memory_check(&self, memory: FalconMemory, address: u32, log: &mut ErrorLog) -> bool {
        if self.spec.fsp_owned && memory != FalconMemory::Emem {
            self.record(log, FalconError::Privileged { what: "FSP IMEM/DMEM port" });
            return false;
        }
        if self.scrubbing() && memory != FalconMemory::Emem {
            self.record(log, FalconError::Scrubbing { what: "IMEM/DMEM port access" });
            return false;
        }
        let size = match memory {
            FalconMemory::Imem => IMEM_SIZE,
            FalconMemory::Dmem => DMEM_SIZE,
            FalconMemory::Emem => self.emem.len() as u32,
        };
        if address.checked_add(4).is_none_or(|end| end > size) {
            self.record(log, FalconError::OutOfRange { memory, address, size });
            return false;
        }
        true
    }

    pub(super) fn imem_write(&mut self, port: usize, value: u32, log: &mut ErrorLog) {
        let p = self.imem_ports[port];
        if self.memory_check(FalconMemory::Imem, p.address, log) {
            let at = p.address as usize;
            self.imem[at..at + 4].copy_from_slice(&value.to_le_bytes());
            let block = &mut self.blocks[at / BLOCK as usize];
            block.valid = true;
            block.secure = p.secure;
        }
        if p.aincw {
            self.imem_ports[port].address = p.address.wrapping_add(4);
        }
    }

    pub(super) fn imem_read(&mut self, port: usize, log: &mut ErrorLog) -> u32 {
        let p = self.imem_ports[port];
        if !self.memory_check(FalconMemory::Imem, p.address, log) {
            return POISON;
        }
        let at = p.address as usize;
        if self.blocks[at / BLOCK as usize].secure {
            self.record(log, FalconError::SecureImemRead { address: p.address });
            return POISON;
        }
        u32::from_le_bytes([self.imem[at], self.imem[at + 1], self.imem[at + 2], self.imem[at + 3]])
    }

    pub(super) fn current_tag(&self, port: usize) -> u16 {
        let block = (self.imem_ports[port].address / BLOCK) as usize;
        self.blocks.get(block).map_or(0, |b| b.tag)
    }

    pub(super) fn imemt_write(&mut self, port: usize, value: u32, log: &mut ErrorLog) {
        use hwf::NV_PFALCON_FALCON_IMEMT as T;
        if let Some(value) = undefined_bits(value, T::TAG.bits.mask()) {
            self.record(log, FalconError::UndefinedBits { register: T::NAME, value });
        }
        let address = self.imem_ports[port].address;
        if self.memory_check(FalconMemory::Imem, address, log) {
            self.blocks[(address / BLOCK) as usize].tag = T::from_raw(value).tag();
        }
    }

    pub(super) fn dmemc_value(&self, port: usize) -> u32 {
        let p = self.dmem_ports[port];
        let (offs, blk) = (((p.address >> 2) & 0x3F) as u8, p.address / BLOCK);
        match self.spec.layout {
            FalconLayout::Tu102 => {
                use tu102::NV_PFALCON_FALCON_DMEMC as C;
                C::default()
                    .with(C::OFFS, offs)
                    .with(C::BLK, blk as u8)
                    .with(C::AINCW, p.aincw)
                    .with(C::AINCR, p.aincr)
                    .raw()
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_DMEMC as C;
                let raw = C::default().with(C::OFFS, offs).with(C::BLK, blk as u16).with(C::AINCW, p.aincw).raw();
                raw | (u32::from(p.aincr) << tu102::NV_PFALCON_FALCON_DMEMC::AINCR.bits.lo)
            }
        }
    }

    pub(super) fn dmemc_write(&mut self, port: usize, value: u32, log: &mut ErrorLog) {
        use tu102::NV_PFALCON_FALCON_DMEMC as T;
        let aincr = T::from_raw(value).aincr();
        let (address, aincw, defined) = match self.spec.layout {
            FalconLayout::Tu102 => {
                let c = T::from_raw(value);
                let defined = T::OFFS.bits.mask() | T::BLK.bits.mask() | T::AINCW.bits.mask() | T::AINCR.bits.mask();
                (u32::from(c.blk()) * BLOCK + u32::from(c.offs()) * 4, c.aincw(), defined)
            }
            FalconLayout::Ga102 => {
                use ga102::NV_PFALCON_FALCON_DMEMC as C;
                let c = C::from_raw(value);
                let defined = C::OFFS.bits.mask() | C::BLK.bits.mask() | C::AINCW.bits.mask() | T::AINCR.bits.mask();
                (u32::from(c.blk()) * BLOCK + u32::from(c.offs()) * 4, c.aincw(), defined)
            }
        };
        if let Some(value) = undefined_bits(value, defined) {
            self.record(log, FalconError::UndefinedBits { register: "NV_PFALCON_FALCON_DMEMC", value });
        }
        self.dmem_ports[port] = Port { address, aincw, aincr, secure: false };
    }

    pub(super) fn dmem_write(&mut self, port: usize, value: u32, log: &mut ErrorLog) {
        let p = self.dmem_ports[port];
        if self.memory_check(FalconMemory::Dmem, p.address, log) {
            let at = p.address as usize;
            self.dmem[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        if p.aincw {
            self.dmem_ports[port].address = p.address.wrapping_add(4);
        }
    }

    pub(super) fn dmem_read(&mut self, port: usize, log: &mut ErrorLog) -> u32 {
        let p = self.dmem_ports[port];
        let value = if self.memory_check(FalconMemory::Dmem, p.address, log) {
            let at = p.address as usize;
            u32::from_le_bytes([self.dmem[at], self.dmem[at + 1], self.dmem[at + 2], self.dmem[at + 3]])
        } else {
            POISON
        };
        let advance = p.aincr || (self.spec.layout == FalconLayout::Ga102 && p.aincw);
        if advance {
            self.dmem_ports[port].address = p.address.wrapping_add(4);
        }
        value
    }

    pub(super) fn ememc_value(&self, port: usize) -> u32 {
        use engine::NV_PFSP_EMEMC as C;
        let p = self.emem_ports[port];
        C::default()
            .with(C::OFFS, ((p.address >> 2) & 0x3F) as u8)
            .with(C::BLK, (p.address / BLOCK) as u8)
            .with(C::AINCW, p.aincw)
            .with(C::AINCR, p.aincr)
            .raw()
    }

    pub(super) fn ememc_write(&mut self, port: usize, value: u32, log: &mut ErrorLog) {
        use engine::NV_PFSP_EMEMC as C;
        let defined = C::OFFS.bits.mask() | C::BLK.bits.mask() | C::AINCW.bits.mask() | C::AINCR.bits.mask();
        if let Some(value) = undefined_bits(value, defined) {
            self.record(log, FalconError::UndefinedBits { register: C::NAME, value });
        }
        let c = C::from_raw(value);
        self.emem_ports[port] = Port {
            address: u32::from(c.blk()) * BLOCK + u32::from(c.offs()) * 4,
            aincw: c.aincw(),
            aincr: c.aincr(),
            secure: false,
        };
    }

    pub(super) fn emem_write(&mut self, port: usize, value: u32, log: &mut ErrorLog) {
        let p = self.emem_ports[port];
        if self.memory_check(FalconMemory::Emem, p.address, log) {
            let at = p.address as usize;
            self.emem[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        if p.aincw {
            self.emem_ports[port].address = p.address.wrapping_add(4);
        }
    }

    pub(super) fn emem_read(&mut self, port: usize, log: &mut ErrorLog) -> u32 {
        let p = self.emem_ports[port];
        let value = if self.memory_check(FalconMemory::Emem, p.address, log) {
            let at = p.address as usize;
            u32::from_le_bytes([self.emem[at], self.emem[at + 1], self.emem[at + 2], self.emem[at + 3]])
        } else {
            POISON
        };
        if p.aincr {
            self.emem_ports[port].address = p.address.wrapping_add(4);
        }
        value
    }
}
