//! The falcon register block (`NV_PFALCON_FALCON_*`), its FBIF (`NV_PFALCON_FBIF_*`) and the
//! RISC-V core registers (`NV_PRISCV_RISCV_*`), each relative to the engine's base (see
//! [`super::engine`] for GSP, SEC2 and FSP bases).
//!
//! Follows `turing/tu102/dev_falcon_v4.h`, `turing/tu102/dev_fbif_v4.h`,
//! `turing/tu102/dev_riscv_pri.h`, and for the layouts that changed with Ampere GA102
//! `ampere/ga102/dev_falcon_v4.h`, `dev_falcon_v4_addendum.h`, `dev_riscv_pri.h`; Hopper's RISC-V
//! boot registers from `hopper/gh100/dev_riscv_pri.h` (535.261.03). The registers at the root of
//! this module have one layout on every chip we support; [`tu102`] and [`ga102`] hold the ones
//! whose fields moved (TU102..TU117 and GA100 use `tu102`, GA102 and later use `ga102`).

use super::headers;
use crate::{constants, field_values, registers};

field_values! {
    /// Size of one falcon DMA transfer (`NV_PFALCON_FALCON_DMATRFCMD_SIZE`).
    pub enum DmaTransferSize: NV_PFALCON_FALCON_DMATRFCMD in headers::TU102_DEV_FALCON_V4 {
        /// 256 bytes, the only size the header names (and the one RM uses).
        Bytes256 = 0x6 => SIZE_256B,
    }
}

registers! {
    /// Facts of the falcon registers common to every supported chip.
    pub const FACTS;

    /// Clears interrupt status bits (write 1 to clear).
    pub NV_PFALCON_FALCON_IRQSCLR(base + 0x00000004) in headers::TU102_DEV_FALCON_V4 {
        /// Clears the HALT interrupt.
        4:4 HALT => halt: bool,
        /// Clears software interrupt 0.
        6:6 SWGEN0 => swgen0: bool,
    }

    /// Pending interrupts.
    pub NV_PFALCON_FALCON_IRQSTAT(base + 0x00000008) in headers::TU102_DEV_FALCON_V4 {
        /// The falcon halted.
        4:4 HALT => halt: bool,
        /// Software interrupt 0 raised.
        6:6 SWGEN0 => swgen0: bool,
    }

    /// Sets interrupt mask bits.
    pub NV_PFALCON_FALCON_IRQMSET(base + 0x00000010) in headers::TU102_DEV_FALCON_V4 {}
    /// Clears interrupt mask bits.
    pub NV_PFALCON_FALCON_IRQMCLR(base + 0x00000014) in headers::TU102_DEV_FALCON_V4 {}
    /// Current interrupt mask.
    pub NV_PFALCON_FALCON_IRQMASK(base + 0x00000018) in headers::TU102_DEV_FALCON_V4 {}
    /// Interrupt routing (host or falcon).
    pub NV_PFALCON_FALCON_IRQDEST(base + 0x0000001c) in headers::TU102_DEV_FALCON_V4 {}

    /// Mailbox 0: arguments in, status out, by each ucode's own convention.
    pub NV_PFALCON_FALCON_MAILBOX0(base + 0x00000040) in headers::TU102_DEV_FALCON_V4 {}
    /// Mailbox 1.
    pub NV_PFALCON_FALCON_MAILBOX1(base + 0x00000044) in headers::TU102_DEV_FALCON_V4 {}

    /// Scratch the running OS reports its version in.
    pub NV_PFALCON_FALCON_OS(base + 0x00000080) in headers::TU102_DEV_FALCON_V4 {}
    /// Scratch RM writes (the booter reads the RM's identity from it).
    pub NV_PFALCON_FALCON_RM(base + 0x00000084) in headers::TU102_DEV_FALCON_V4 {}
    /// Debug information left by the ucode.
    pub NV_PFALCON_FALCON_DEBUGINFO(base + 0x00000094) in headers::TU102_DEV_FALCON_V4 {}

    /// CPU control.
    pub NV_PFALCON_FALCON_CPUCTL(base + 0x00000100) in headers::TU102_DEV_FALCON_V4 {
        /// Write 1 to start the falcon at BOOTVEC.
        1:1 STARTCPU => startcpu: bool,
        /// The falcon is halted.
        4:4 HALTED => halted: bool,
        /// CPUCTL is locked; start through CPUCTL_ALIAS instead.
        6:6 ALIAS_EN => alias_en: bool,
    }

    /// Start the CPU when CPUCTL_ALIAS_EN is set (heavy-secure ucodes lock CPUCTL).
    pub NV_PFALCON_FALCON_CPUCTL_ALIAS(base + 0x00000130) in headers::TU102_DEV_FALCON_V4 {
        /// Write 1 to start the falcon.
        1:1 STARTCPU => startcpu: bool,
    }

    /// IMEM address the falcon starts executing at.
    pub NV_PFALCON_FALCON_BOOTVEC(base + 0x00000104) in headers::TU102_DEV_FALCON_V4 {}

    /// Hardware configuration.
    pub NV_PFALCON_FALCON_HWCFG(base + 0x00000108) in headers::TU102_DEV_FALCON_V4 {
        /// IMEM size, in 256-byte blocks.
        8:0 IMEM_SIZE => imem_size: u16,
    }

    /// DMA control; on Turing and GA100 also where memory scrubbing after reset shows.
    pub NV_PFALCON_FALCON_DMACTL(base + 0x0000010c) in headers::TU102_DEV_FALCON_V4 {
        /// DMA requires a context (clear for physical DMA).
        0:0 REQUIRE_CTX => require_ctx: bool,
        /// DMEM scrubbing in progress (0 = done).
        1:1 DMEM_SCRUBBING => dmem_scrubbing: bool,
        /// IMEM scrubbing in progress (0 = done).
        2:2 IMEM_SCRUBBING => imem_scrubbing: bool,
    }

    /// DMA base address, bits 39:8 of the external address.
    pub NV_PFALCON_FALCON_DMATRFBASE(base + 0x00000110) in headers::TU102_DEV_FALCON_V4 {
        /// Base address >> 8.
        31:0 BASE => base: u32,
    }

    /// DMA command: writing it starts a transfer between falcon memory and the external address.
    pub NV_PFALCON_FALCON_DMATRFCMD(base + 0x00000118) in headers::TU102_DEV_FALCON_V4 {
        /// The DMA queue is full.
        0:0 FULL => full: bool,
        /// The DMA engine is idle.
        1:1 IDLE => idle: bool,
        /// Security level of the transfer.
        3:2 SEC => sec: u8,
        /// The falcon side is IMEM (else DMEM).
        4:4 IMEM => imem: bool,
        /// Falcon to external memory (else external to falcon).
        5:5 WRITE => is_write: bool,
        /// Transfer size.
        10:8 SIZE => size: DmaTransferSize,
        /// FBIF context (TRANSCFG index) of the transfer.
        14:12 CTXDMA => ctxdma: u8,
        /// Tag IMEM blocks with the transfer's offset.
        16:16 SET_DMTAG => set_dmtag: bool,
    }

    /// External offset of the transfer, added to DMATRFBASE.
    pub NV_PFALCON_FALCON_DMATRFFBOFFS(base + 0x0000011c) in headers::TU102_DEV_FALCON_V4 {
        /// Offset in bytes.
        31:0 OFFS => offs: u32,
    }

    /// DMA base address, bits 48:40.
    pub NV_PFALCON_FALCON_DMATRFBASE1(base + 0x00000128) in headers::TU102_DEV_FALCON_V4 {
        /// Base address >> 40.
        8:0 BASE => base: u16,
    }

    /// IMEM data port `i` (after IMEMC(i) set the address).
    pub NV_PFALCON_FALCON_IMEMD(base + 0x00000184, stride 16) in headers::TU102_DEV_FALCON_V4 {
        /// One 32-bit word.
        31:0 DATA => data: u32,
    }

    /// IMEM tag port `i`: the virtual tag of the 256-byte block being written.
    pub NV_PFALCON_FALCON_IMEMT(base + 0x00000188, stride 16) in headers::TU102_DEV_FALCON_V4 {
        /// Block tag.
        15:0 TAG => tag: u16,
    }

    /// DMEM data port `i` (after DMEMC(i) set the address).
    pub NV_PFALCON_FALCON_DMEMD(base + 0x000001c4, stride 8) in headers::TU102_DEV_FALCON_V4 {
        /// One 32-bit word.
        31:0 DATA => data: u32,
    }

    /// Scratch group 2, where boot ROMs and FSP report progress.
    pub NV_PFALCON_FALCON_COMMON_SCRATCH_GROUP_2(base + 0x00000320, stride 4) in headers::TU102_DEV_FALCON_V4 {}

    /// FBIF aperture `i` (the CTXDMA a transfer names): where and how DMA reaches memory.
    pub NV_PFALCON_FBIF_TRANSCFG(base + 0x00000000, stride 4) in headers::TU102_DEV_FBIF_V4 {
        /// Target memory.
        1:0 TARGET => target: FbifTarget,
        /// Physical (1) or virtual addressing.
        2:2 MEM_TYPE => mem_type: FbifMemType,
    }

    /// FBIF control.
    pub NV_PFALCON_FBIF_CTL(base + 0x00000024) in headers::TU102_DEV_FBIF_V4 {
        /// Allow physical DMA without a context.
        7:7 ALLOW_PHYS_NO_CTX => allow_phys_no_ctx: bool,
    }
}

field_values! {
    /// `NV_PFALCON_FBIF_TRANSCFG_TARGET` values the header names.
    pub enum FbifTarget: NV_PFALCON_FBIF_TRANSCFG_TARGET in headers::TU102_DEV_FBIF_V4 {
        /// Coherent system memory.
        CoherentSysmem = 0x1 => COHERENT_SYSMEM,
    }
}

field_values! {
    /// `NV_PFALCON_FBIF_TRANSCFG_MEM_TYPE` values the header names.
    pub enum FbifMemType: NV_PFALCON_FBIF_TRANSCFG_MEM_TYPE in headers::TU102_DEV_FBIF_V4 {
        /// Physical addresses.
        Physical = 0x1 => PHYSICAL,
    }
}

constants! {
    /// Facts of the falcon's register array sizes.
    pub const SIZE_FACTS;

    /// Number of FBIF apertures, `NV_PFALCON_FBIF_TRANSCFG(i)`.
    pub NV_PFALCON_FBIF_TRANSCFG__SIZE_1: u32 = 8 in headers::TU102_DEV_FBIF_V4;
}

/// Low bit of the DMEM size in `NV_PFALCON_FALCON_HWCFG` (bits 17:9, 256-byte blocks). NVIDIA's
/// published `dev_falcon_v4.h` names only `IMEM_SIZE` (8:0); nouveau reads DMEM's size from 17:9
/// (`drivers/gpu/drm/nouveau/nvkm/falcon/base.c`, `nvkm_falcon_oneinit`: `(caps & 0x3fe00) >> 1`,
/// in bytes). No NVIDIA file states it, so it cannot be checked against NVIDIA's headers.
pub const HWCFG_DMEM_SIZE_SHIFT: u32 = 9;
/// Width mask of the HWCFG DMEM size field (nouveau, as [`HWCFG_DMEM_SIZE_SHIFT`]; not
/// header-checked).
pub const HWCFG_DMEM_SIZE_MASK: u32 = 0x1FF;

/// Falcon registers as Turing (TU10x, TU11x) and GA100 lay them out.
pub mod tu102 {
    use super::headers;
    use crate::registers;

    registers! {
        /// Facts of the Turing-layout falcon registers.
        pub const FACTS;

        /// Hardware configuration 2.
        pub NV_PFALCON_FALCON_HWCFG2(base + 0x000000f4) in headers::TU102_DEV_FALCON_V4 {
            /// The engine has a RISC-V core.
            10:10 RISCV => riscv: bool,
        }

        /// DMA offset inside falcon memory.
        pub NV_PFALCON_FALCON_DMATRFMOFFS(base + 0x00000114) in headers::TU102_DEV_FALCON_V4 {
            /// IMEM/DMEM offset.
            15:0 OFFS => offs: u16,
        }

        /// IMEM access control for port `i`.
        pub NV_PFALCON_FALCON_IMEMC(base + 0x00000180, stride 16) in headers::TU102_DEV_FALCON_V4 {
            /// Word offset in the block (bits 7:2 of the byte address).
            7:2 OFFS => offs: u8,
            /// 256-byte block index.
            15:8 BLK => blk: u8,
            /// Auto-increment the address on each IMEMD write.
            24:24 AINCW => aincw: bool,
            /// The block being written is secure.
            28:28 SECURE => secure: bool,
        }

        /// DMEM access control for port `i`.
        pub NV_PFALCON_FALCON_DMEMC(base + 0x000001c0, stride 8) in headers::TU102_DEV_FALCON_V4 {
            /// Word offset in the block.
            7:2 OFFS => offs: u8,
            /// 256-byte block index.
            15:8 BLK => blk: u8,
            /// Auto-increment on write.
            24:24 AINCW => aincw: bool,
            /// Auto-increment on read.
            25:25 AINCR => aincr: bool,
        }

        /// RISC-V core status (relative to the engine's RISC-V base).
        pub NV_PRISCV_RISCV_CORE_SWITCH_RISCV_STATUS(base + 0x00000240) in headers::TU102_DEV_RISCV_PRI {
            /// The RISC-V core is active.
            0:0 ACTIVE_STAT => active_stat: bool,
        }

        /// RISC-V interrupt mask.
        pub NV_PRISCV_RISCV_IRQMASK(base + 0x000002b4) in headers::TU102_DEV_RISCV_PRI {}
        /// RISC-V interrupt routing.
        pub NV_PRISCV_RISCV_IRQDEST(base + 0x000002b8) in headers::TU102_DEV_RISCV_PRI {}
    }
}

/// Falcon registers as GA102 and later (Ada, Hopper, Blackwell) lay them out.
pub mod ga102 {
    use super::headers;
    use crate::{field_values, registers};

    field_values! {
        /// `NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING`: memory scrubbing after reset.
        pub enum MemScrubbing: NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING in headers::GH100_DEV_FALCON_V4 {
            /// IMEM and DMEM are scrubbed.
            Done = 0x0 => DONE,
            /// Scrubbing still runs.
            Pending = 0x1 => PENDING,
        }
    }

    field_values! {
        /// `NV_PRISCV_RISCV_BCR_CTRL_CORE_SELECT`: which core the engine boots.
        pub enum CoreSelect: NV_PRISCV_RISCV_BCR_CTRL_CORE_SELECT in headers::GA102_DEV_RISCV_PRI {
            /// The falcon core.
            Falcon = 0x0 => FALCON,
            /// The RISC-V core.
            Riscv = 0x1 => RISCV,
        }
    }

    registers! {
        /// Facts of the GA102-layout falcon registers.
        pub const FACTS;

        /// Hardware configuration 2.
        pub NV_PFALCON_FALCON_HWCFG2(base + 0x000000f4) in headers::GA102_DEV_FALCON_V4 {
            /// The engine has a RISC-V core.
            10:10 RISCV => riscv: bool,
            /// Memory scrubbing state after reset.
            12:12 MEM_SCRUBBING => mem_scrubbing: MemScrubbing,
            /// The engine may be reset now.
            31:31 RESET_READY @ headers::GA102_DEV_FALCON_V4_ADDENDUM => reset_ready: bool,
        }

        /// DMA offset inside falcon memory.
        pub NV_PFALCON_FALCON_DMATRFMOFFS(base + 0x00000114) in headers::GA102_DEV_FALCON_V4 {
            /// IMEM/DMEM offset.
            23:0 OFFS => offs: u32,
        }

        /// IMEM access control for port `i`.
        pub NV_PFALCON_FALCON_IMEMC(base + 0x00000180, stride 16) in headers::GA102_DEV_FALCON_V4 {
            /// Word offset in the block.
            7:2 OFFS => offs: u8,
            /// 256-byte block index.
            23:8 BLK => blk: u16,
            /// Auto-increment the address on each IMEMD write.
            24:24 AINCW => aincw: bool,
            /// The block being written is secure.
            28:28 SECURE => secure: bool,
        }

        /// DMEM access control for port `i`.
        pub NV_PFALCON_FALCON_DMEMC(base + 0x000001c0, stride 8) in headers::GA102_DEV_FALCON_V4 {
            /// Word offset in the block.
            7:2 OFFS => offs: u8,
            /// 256-byte block index.
            23:8 BLK => blk: u16,
            /// Auto-increment on write (reads auto-increment too on these chips).
            24:24 AINCW => aincw: bool,
        }

        /// RISC-V CPU control (relative to the engine's RISC-V base).
        pub NV_PRISCV_RISCV_CPUCTL(base + 0x00000388) in headers::GA102_DEV_RISCV_PRI {
            /// The RISC-V core is active.
            7:7 ACTIVE_STAT => active_stat: bool,
        }

        /// Boot configuration: which core starts, and whether the boot ROM fetches the image.
        pub NV_PRISCV_RISCV_BCR_CTRL(base + 0x00000668) in headers::GA102_DEV_RISCV_PRI {
            /// The configuration is valid.
            0:0 VALID => valid: bool,
            /// Core to boot.
            4:4 CORE_SELECT => core_select: CoreSelect,
            /// Boot ROM fetches the boot image.
            8:8 BRFETCH => brfetch: bool,
        }

        /// RISC-V interrupt mask.
        pub NV_PRISCV_RISCV_IRQMASK(base + 0x00000528) in headers::GA102_DEV_RISCV_PRI {}
        /// RISC-V interrupt routing.
        pub NV_PRISCV_RISCV_IRQDEST(base + 0x0000052c) in headers::GA102_DEV_RISCV_PRI {}
    }
}

/// Hopper's RISC-V boot registers, through which the driver hands GSP its FMC image (Hopper and
/// Blackwell boot GSP this way under the FSP's chain of trust).
pub mod gh100 {
    use super::headers;
    use crate::registers;

    registers! {
        /// Facts of Hopper's RISC-V boot registers.
        pub const FACTS;

        /// RISC-V CPU control.
        pub NV_PRISCV_RISCV_CPUCTL(base + 0x00000388) in headers::GH100_DEV_RISCV_PRI {
            /// Write 1 to start the core.
            0:0 STARTCPU => startcpu: bool,
            /// The core is halted.
            4:4 HALTED => halted: bool,
            /// The core is stopped.
            5:5 STOPPED => stopped: bool,
            /// The core is active.
            7:7 ACTIVE_STAT => active_stat: bool,
        }

        /// DMA configuration of the boot ROM's fetch.
        pub NV_PRISCV_RISCV_BCR_DMACFG(base + 0x0000066c) in headers::GH100_DEV_RISCV_PRI {
            /// Memory the boot ROM fetches from (0 local FB, 1 coherent sysmem, 2 non-coherent).
            1:0 TARGET => target: u8,
            /// Lock the configuration.
            31:31 LOCK => lock: bool,
        }

        /// Address of the PKC parameters, bits 39:8.
        pub NV_PRISCV_RISCV_BCR_DMAADDR_PKCPARAM_LO(base + 0x00000670) in headers::GH100_DEV_RISCV_PRI {}
        /// Address of the PKC parameters, high bits.
        pub NV_PRISCV_RISCV_BCR_DMAADDR_PKCPARAM_HI(base + 0x00000674) in headers::GH100_DEV_RISCV_PRI {}
        /// Address of the FMC code, bits 39:8.
        pub NV_PRISCV_RISCV_BCR_DMAADDR_FMCCODE_LO(base + 0x00000678) in headers::GH100_DEV_RISCV_PRI {}
        /// Address of the FMC code, high bits.
        pub NV_PRISCV_RISCV_BCR_DMAADDR_FMCCODE_HI(base + 0x0000067c) in headers::GH100_DEV_RISCV_PRI {}
        /// Address of the FMC data, bits 39:8.
        pub NV_PRISCV_RISCV_BCR_DMAADDR_FMCDATA_LO(base + 0x00000680) in headers::GH100_DEV_RISCV_PRI {}
        /// Address of the FMC data, high bits.
        pub NV_PRISCV_RISCV_BCR_DMAADDR_FMCDATA_HI(base + 0x00000684) in headers::GH100_DEV_RISCV_PRI {}
    }
}
