//! Register-level tests of the falcon driver against a recording fake of one falcon.
//!
//! The fake models only what the driver's sequences depend on: scrubbing that finishes after a
//! number of polls once reset is released, IMEMC/DMEMC/EMEMC auto-increment, IMEM tags and
//! secure blocks, DMA that copies 256-byte blocks from a fake system memory at the address the
//! driver programmed, a CPU that halts after a number of CPUCTL polls, and Hopper's reset status.
//! Every access is logged, so tests assert the exact register sequence.

use super::*;
use crate::hal::{self, Hal};
use crate::hw::engine::{FalconEngine, FalconUnit};
use crate::platform::DmaBuffer;
use core::cell::{Cell, RefCell};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    R(u32, u32),
    W(u32, u32),
}
use Access::{R, W};

const BOOT0: u32 = 0x1720_00a1;
const HWCFG2: u32 = 0xf4;
const DMACTL: u32 = 0x10c;
const CPUCTL: u32 = 0x100;
const MAILBOX0: u32 = 0x40;
const MAILBOX1: u32 = 0x44;
const HWCFG: u32 = 0x108;
const IMEMC: u32 = 0x180;
const IMEMD: u32 = 0x184;
const IMEMT: u32 = 0x188;
const DMEMC: u32 = 0x1c0;
const DMEMD: u32 = 0x1c4;
const DMATRFBASE: u32 = 0x110;
const DMATRFMOFFS: u32 = 0x114;
const DMATRFCMD: u32 = 0x118;
const DMATRFFBOFFS: u32 = 0x11c;
const DMATRFBASE1: u32 = 0x128;
const BCR_CTRL: u32 = 0x668;
const ENGINE_RESET: u32 = 0x3c0;

/// One falcon (plus BOOT0), as much as the driver's sequences need.
struct FakeFalcon {
    hal: &'static Hal,
    unit: FalconUnit,
    regs: RefCell<BTreeMap<u32, u32>>,
    log: RefCell<Vec<Access>>,
    /// Polls of the scrubbing register that report "pending" after each reset release.
    scrub_polls: Cell<u32>,
    scrub_left: Cell<u32>,
    /// CPUCTL polls after a start until the CPU halts (`None`: it never does).
    halt_polls: Cell<Option<u32>>,
    running: Cell<bool>,
    halt_left: Cell<u32>,
    imem: RefCell<Vec<u8>>,
    imem_tags: RefCell<BTreeMap<u32, u16>>,
    imem_secure: RefCell<BTreeMap<u32, bool>>,
    dmem: RefCell<Vec<u8>>,
    emem: RefCell<Vec<u8>>,
    emem_autoincrement: Cell<bool>,
    sysmem: RefCell<Option<(u64, Vec<u8>)>>,
    dma_idle: Cell<bool>,
}

impl FakeFalcon {
    fn new(hal: &'static Hal, engine: FalconEngine) -> Self {
        let unit = *hal.falcon(engine).expect("the HAL lists this falcon");
        let fake = FakeFalcon {
            hal,
            unit,
            regs: RefCell::new(BTreeMap::new()),
            log: RefCell::new(Vec::new()),
            scrub_polls: Cell::new(2),
            scrub_left: Cell::new(0),
            halt_polls: Cell::new(Some(3)),
            running: Cell::new(false),
            halt_left: Cell::new(0),
            imem: RefCell::new(vec![0; 0x10000]),
            imem_tags: RefCell::new(BTreeMap::new()),
            imem_secure: RefCell::new(BTreeMap::new()),
            dmem: RefCell::new(vec![0; 0x10000]),
            emem: RefCell::new(vec![0; 0x10000]),
            emem_autoincrement: Cell::new(true),
            sysmem: RefCell::new(None),
            dma_idle: Cell::new(true),
        };
        fake.set(0, BOOT0);
        fake.set(unit.base + HWCFG, 0x100); // 64 KiB of IMEM
        fake
    }

    /// The driver's falcon `E` over this fake (which stands for that engine).
    fn falcon<E: Engine>(&self) -> Falcon<&FakeFalcon, StepClock, E> {
        assert_eq!(E::ENGINE, self.unit.engine, "the fake is another engine");
        Falcon::new(self, StepClock::default(), self.hal).expect("present")
    }

    fn set(&self, offset: u32, value: u32) {
        self.regs.borrow_mut().insert(offset, value);
    }

    fn get(&self, offset: u32) -> u32 {
        self.regs.borrow().get(&offset).copied().unwrap_or(0)
    }

    fn take_log(&self) -> Vec<Access> {
        core::mem::take(&mut *self.log.borrow_mut())
    }

    fn writes(&self) -> Vec<(u32, u32)> {
        self.log
            .borrow()
            .iter()
            .filter_map(|a| match *a {
                W(o, v) => Some((o, v)),
                R(..) => None,
            })
            .collect()
    }

    fn ga102(&self) -> bool {
        self.hal.falcon_layout == FalconLayout::Ga102
    }

    fn blk_mask(&self) -> u32 {
        if self.ga102() {
            0xffff
        } else {
            0xff
        }
    }

    /// Byte address held by an IMEMC/DMEMC/EMEMC value.
    fn port_address(&self, control: u32) -> usize {
        ((((control >> 8) & self.blk_mask()) << 8) | (control & 0xfc)) as usize
    }

    /// The control value advanced by one word, flags kept.
    fn port_advance(&self, control: u32) -> u32 {
        let address = (self.port_address(control) + 4) as u32;
        let flags = control & !(0xfc | (self.blk_mask() << 8));
        flags | (address & 0xfc) | (((address >> 8) & self.blk_mask()) << 8)
    }

    fn is_reset_register(&self, offset: u32) -> bool {
        offset == self.unit.base + ENGINE_RESET
    }

    fn hopper_gsp(&self) -> bool {
        self.unit.engine == FalconEngine::Gsp && self.hal.boot_flow == hal::BootFlow::FspChainOfTrust
    }

    fn emem_ports(&self) -> (u32, u32) {
        match self.unit.engine {
            FalconEngine::Fsp => (0x008f_2ac0, 0x008f_2ac4),
            _ => (0x0011_0ac0, 0x0011_0ac4),
        }
    }

    fn model_read(&self, offset: u32) -> u32 {
        let base = self.unit.base;
        let stored = self.get(offset);
        let scrub_register = base + if self.ga102() { HWCFG2 } else { DMACTL };
        if offset == scrub_register {
            let pending = if self.ga102() { 1 << 12 } else { 0b110 };
            if self.scrub_left.get() > 0 {
                self.scrub_left.set(self.scrub_left.get() - 1);
                return stored | pending;
            }
            return stored & !pending;
        }
        if self.is_reset_register(offset) && self.hopper_gsp() {
            let status = if stored & 1 == 1 { 0 } else { 2 << 8 };
            return (stored & 1) | status;
        }
        if offset == base + CPUCTL {
            if self.running.get() {
                let left = self.halt_left.get();
                if self.halt_polls.get().is_some() && left <= 1 {
                    self.halt();
                } else if self.halt_polls.get().is_some() {
                    self.halt_left.set(left - 1);
                }
            }
            let halted = if self.running.get() { 0 } else { 1 << 4 };
            return (stored & !(1 << 4)) | halted;
        }
        if offset == base + DMEMD {
            let control = self.get(base + DMEMC);
            let address = self.port_address(control);
            let dmem = self.dmem.borrow();
            let word = u32::from_le_bytes(dmem[address..address + 4].try_into().unwrap());
            if control & (1 << 25) != 0 {
                self.set(base + DMEMC, self.port_advance(control));
            }
            return word;
        }
        if offset == base + DMATRFCMD {
            return if self.dma_idle.get() { 1 << 1 } else { 0 };
        }
        let (ememc, ememd) = self.emem_ports();
        if offset == ememd {
            let control = self.get(ememc);
            let address = (control & 0xfffc) as usize;
            let emem = self.emem.borrow();
            let word = u32::from_le_bytes(emem[address..address + 4].try_into().unwrap());
            if control & (1 << 25) != 0 && self.emem_autoincrement.get() {
                self.set(ememc, (control & !0xfffc) | ((address as u32 + 4) & 0xfffc));
            }
            return word;
        }
        stored
    }

    fn halt(&self) {
        self.running.set(false);
        let base = self.unit.base;
        // The "ucode" reports by changing both mailboxes recognisably.
        self.set(base + MAILBOX0, 0xc0de_0000 | (self.get(base + MAILBOX0) & 0xffff));
        self.set(base + MAILBOX1, self.get(base + MAILBOX1).wrapping_add(1));
    }

    fn start_cpu(&self) {
        self.running.set(true);
        self.halt_left.set(self.halt_polls.get().unwrap_or(0));
    }

    fn model_write(&self, offset: u32, value: u32) {
        let base = self.unit.base;
        if self.is_reset_register(offset) {
            if value & 1 == 0 && self.get(offset) & 1 == 1 {
                self.scrub_left.set(self.scrub_polls.get());
            }
            self.set(offset, value);
            return;
        }
        if offset == base + CPUCTL || offset == base + 0x130 {
            if value & (1 << 1) != 0 {
                self.start_cpu();
            }
            return;
        }
        if offset == base + IMEMT {
            let block = (self.port_address(self.get(base + IMEMC)) / 256) as u32;
            self.imem_tags.borrow_mut().insert(block, value as u16);
            return;
        }
        if offset == base + IMEMD {
            let control = self.get(base + IMEMC);
            let address = self.port_address(control);
            self.imem.borrow_mut()[address..address + 4].copy_from_slice(&value.to_le_bytes());
            self.imem_secure.borrow_mut().insert(address as u32 / 256, control & (1 << 28) != 0);
            if control & (1 << 24) != 0 {
                self.set(base + IMEMC, self.port_advance(control));
            }
            return;
        }
        if offset == base + DMEMD {
            let control = self.get(base + DMEMC);
            let address = self.port_address(control);
            self.dmem.borrow_mut()[address..address + 4].copy_from_slice(&value.to_le_bytes());
            if control & (1 << 24) != 0 {
                self.set(base + DMEMC, self.port_advance(control));
            }
            return;
        }
        if let Some(riscv) = self.unit.riscv_base {
            if offset == riscv + BCR_CTRL {
                // A switch to the falcon core completes at once.
                let valid = if value & (1 << 4) == 0 { 1 } else { value & 1 };
                self.set(offset, value | valid);
                return;
            }
        }
        if offset == base + DMATRFCMD {
            self.dma_block(value);
            return;
        }
        let (ememc, ememd) = self.emem_ports();
        if offset == ememd {
            let control = self.get(ememc);
            let address = (control & 0xfffc) as usize;
            self.emem.borrow_mut()[address..address + 4].copy_from_slice(&value.to_le_bytes());
            if control & (1 << 24) != 0 && self.emem_autoincrement.get() {
                self.set(ememc, (control & !0xfffc) | ((address as u32 + 4) & 0xfffc));
            }
            return;
        }
        self.set(offset, value);
    }

    /// One 256-byte DMA from fake system memory, at the address the registers describe.
    fn dma_block(&self, command: u32) {
        let base = self.unit.base;
        let dma_base = (u64::from(self.get(base + DMATRFBASE1)) << 32 | u64::from(self.get(base + DMATRFBASE))) << 8;
        let fboffs = self.get(base + DMATRFFBOFFS);
        let source = dma_base + u64::from(fboffs);
        let moffs = self.get(base + DMATRFMOFFS) as usize;
        let sysmem = self.sysmem.borrow();
        let (bus, bytes) = sysmem.as_ref().expect("DMA with no system memory");
        let start = (source - bus) as usize;
        let block = &bytes[start..start + 256];
        if command & (1 << 4) != 0 {
            self.imem.borrow_mut()[moffs..moffs + 256].copy_from_slice(block);
            self.imem_tags.borrow_mut().insert(moffs as u32 / 256, (fboffs >> 8) as u16);
            self.imem_secure.borrow_mut().insert(moffs as u32 / 256, command & (0b11 << 2) != 0);
        } else {
            self.dmem.borrow_mut()[moffs..moffs + 256].copy_from_slice(block);
        }
    }
}

impl RegisterIo for FakeFalcon {
    fn read32(&self, offset: u32) -> u32 {
        let value = self.model_read(offset);
        self.log.borrow_mut().push(R(offset, value));
        value
    }
    fn write32(&self, offset: u32, value: u32) {
        self.log.borrow_mut().push(W(offset, value));
        self.model_write(offset, value);
    }
}

/// A clock that advances 1 ms each time it is read.
#[derive(Default)]
struct StepClock(Cell<u64>);

impl Clock for StepClock {
    fn now_ns(&self) -> u64 {
        let t = self.0.get();
        self.0.set(t + 1_000_000);
        t
    }
}

fn reset_toggle(register: u32, initial: u32) -> Vec<Access> {
    let mut log = vec![R(register, initial), W(register, initial | 1)];
    log.extend(std::iter::repeat_n(R(register, initial | 1), RESET_PROPAGATION_READS as usize));
    log.extend([R(register, initial | 1), W(register, initial)]);
    log.extend(std::iter::repeat_n(R(register, initial), RESET_PROPAGATION_READS as usize));
    log
}

fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect()
}

fn words_of(data: &[u8]) -> Vec<u32> {
    data.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

// -------------------------------------------------------------------------------------------
// Construction and reset.

#[test]
fn falcons_come_from_the_hal() {
    let fake = FakeFalcon::new(&hal::HOPPER, FalconEngine::Gsp);
    let sec2 = Falcon::<_, _, Sec2>::new(&fake, StepClock::default(), &hal::HOPPER);
    assert_eq!(sec2.err(), Some(FalconError::NotPresent { engine: FalconEngine::Sec2 }));
    assert_eq!(FalconError::NotPresent { engine: FalconEngine::Sec2 }.to_string(), "this chip has no SEC2 falcon");
    let fsp = Falcon::<_, _, Fsp>::new(&fake, StepClock::default(), &hal::HOPPER).unwrap();
    assert_eq!(fsp.unit().base, 0x008f_0000);
    let gsp = Falcon::<_, _, Gsp>::new(&fake, StepClock::default(), &hal::TURING).unwrap();
    assert_eq!(gsp.unit().base, 0x0011_0000);
}

#[test]
fn ga10x_gsp_reset_waits_ready_toggles_reset_scrubs_and_selects_the_falcon_core() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let hwcfg2 = (1 << 31) | (1 << 10); // RESET_READY, RISCV
    fake.set(0x1100f4, hwcfg2);
    fake.set(0x111668, (1 << 4) | 1); // BCR: RISC-V selected, valid
    fake.falcon::<Gsp>().reset().unwrap();

    let mut expected = vec![R(0x1100f4, hwcfg2)]; // pre-reset: RESET_READY
    expected.extend(reset_toggle(0x1103c0, 0));
    expected.extend([
        R(0x1100f4, hwcfg2 | 1 << 12), // scrubbing pending
        R(0x1100f4, hwcfg2 | 1 << 12),
        R(0x1100f4, hwcfg2), // done
        R(0x1100f4, hwcfg2), // has a RISC-V core
        R(0x111668, 0x11),   // ... and it is selected
        W(0x111668, 0x0),    // CORE_SELECT_FALCON
        R(0x111668, 0x1),    // VALID
        R(0x0, BOOT0),
        W(0x110084, BOOT0), // NV_PFALCON_FALCON_RM
    ]);
    assert_eq!(fake.take_log(), expected);
}

#[test]
fn turing_sec2_reset_scrubs_in_dmactl_and_has_no_core_switch() {
    let fake = FakeFalcon::new(&hal::TURING, FalconEngine::Sec2);
    fake.scrub_polls.set(1);
    fake.falcon::<Sec2>().reset().unwrap();
    let mut expected = reset_toggle(0x8403c0, 0);
    expected.extend([R(0x84010c, 0b110), R(0x84010c, 0), R(0x0, BOOT0), W(0x840084, BOOT0)]);
    assert_eq!(fake.take_log(), expected);
}

#[test]
fn hopper_gsp_reset_follows_the_reset_status_handshake() {
    let fake = FakeFalcon::new(&hal::HOPPER, FalconEngine::Gsp);
    fake.scrub_polls.set(0);
    fake.falcon::<Gsp>().reset().unwrap();
    let log = fake.take_log();
    assert_eq!(
        log[..8],
        [
            R(0x1103c0, 0x200),
            W(0x1103c0, 0x201),
            R(0x1103c0, 0x001), // RESET_STATUS_ASSERTED
            R(0x1103c0, 0x001),
            W(0x1103c0, 0x000),
            R(0x1103c0, 0x200), // RESET_STATUS_DEASSERTED
            R(0x1100f4, 0),     // scrubbing done
            R(0x1100f4, 0),     // no RISC-V core reported: no switch
        ]
    );
    assert_eq!(log[8..], [R(0, BOOT0), W(0x110084, BOOT0)]);
}

#[test]
fn scrubbing_that_never_ends_times_out_naming_engine_and_step() {
    let fake = FakeFalcon::new(&hal::ADA, FalconEngine::Sec2);
    fake.scrub_polls.set(u32::MAX);
    let err = fake.falcon::<Sec2>().reset().unwrap_err();
    assert_eq!(
        err,
        FalconError::Timeout { engine: FalconEngine::Sec2, what: "memory scrubbing", after_ms: SCRUBBING_TIMEOUT_MS }
    );
    assert_eq!(err.to_string(), "timeout waiting for SEC2 falcon memory scrubbing after 1000 ms");
    // Nothing after the failed step.
    assert!(!fake.writes().iter().any(|&(o, _)| o == 0x840084));
}

#[test]
fn reset_into_riscv_programs_the_boot_configuration() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    fake.set(0x1100f4, 1 << 31);
    fake.falcon::<Gsp>().reset_into_riscv(true).unwrap();
    // VALID | CORE_SELECT_RISCV | BRFETCH, and the RM identity is not written.
    assert_eq!(fake.writes(), vec![(0x1103c0, 1), (0x1103c0, 0), (0x111668, 0x111)]);

    let turing = FakeFalcon::new(&hal::TURING, FalconEngine::Gsp);
    let err = turing.falcon::<Gsp>().reset_into_riscv(false).unwrap_err();
    assert!(matches!(err, FalconError::Unsupported { engine: FalconEngine::Gsp, .. }));
    assert!(turing.take_log().is_empty());
}

#[test]
fn state_queries_read_the_layouts_registers() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let falcon = fake.falcon::<Gsp>();
    assert!(falcon.is_halted());
    assert!(falcon.is_scrubbing_done());
    assert!(!falcon.has_riscv());
    fake.set(0x1100f4, 1 << 10);
    assert!(falcon.has_riscv());
    assert!(!falcon.is_riscv_active());
    fake.set(0x111388, 1 << 7);
    assert!(falcon.is_riscv_active());
    assert_eq!(falcon.imem_size(), 0x10000);
}

// -------------------------------------------------------------------------------------------
// PIO.

#[test]
fn imem_pio_tags_every_block_and_marks_it_secure() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Sec2);
    let code = bytes(600, 3);
    fake.falcon::<Sec2>().load_imem(0x200, &code, 0x1000, true).unwrap();

    let words = words_of(&code);
    let mut expected = vec![R(0x840108, 0x100), W(0x840180, (2 << 8) | (1 << 24) | (1 << 28))];
    for (block, chunk) in words.chunks(64).enumerate() {
        expected.push(W(0x840188, 0x10 + block as u32));
        expected.extend(chunk.iter().map(|&w| W(0x840184, w)));
    }
    assert_eq!(fake.take_log(), expected);
    assert_eq!(&fake.imem.borrow()[0x200..0x200 + 600], &code[..]);
    assert_eq!(*fake.imem_tags.borrow(), BTreeMap::from([(2, 0x10), (3, 0x11), (4, 0x12)]));
    assert_eq!(*fake.imem_secure.borrow(), BTreeMap::from([(2, true), (3, true), (4, true)]));
}

#[test]
fn turing_imemc_uses_the_narrow_block_field() {
    let fake = FakeFalcon::new(&hal::TURING, FalconEngine::Gsp);
    fake.falcon::<Gsp>().load_imem(0x100, &[1, 0, 0, 0], 0, false).unwrap();
    assert_eq!(fake.writes(), vec![(0x110180, (1 << 8) | (1 << 24)), (0x110188, 0), (0x110184, 1)]);
    // Beyond the 8-bit block field: refused before any access.
    let err = fake.falcon::<Gsp>().load_imem(0x1_0000, &[0; 4], 0, false).unwrap_err();
    assert!(matches!(err, FalconError::TooLarge { what: "IMEM load address", max: 0x10000, .. }), "{err:?}");
}

#[test]
fn pio_arguments_are_checked_before_any_register_write() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let falcon = fake.falcon::<Gsp>();
    let gsp = FalconEngine::Gsp;

    let err = falcon.load_imem(0x80, &[0; 4], 0, false).unwrap_err();
    assert_eq!(
        err,
        FalconError::AddressNotAligned { engine: gsp, what: "IMEM load offset", address: 0x80, alignment: 256 }
    );
    let err = falcon.load_imem(0, &[0; 4], 0x10, false).unwrap_err();
    assert!(matches!(err, FalconError::AddressNotAligned { what: "IMEM virtual address", .. }));
    let err = falcon.load_imem(0, &[0; 6], 0, false).unwrap_err();
    assert_eq!(err, FalconError::SizeNotAligned { engine: gsp, what: "IMEM load", size: 6, alignment: 4 });
    assert_eq!(err.to_string(), "GSP falcon: IMEM load size 0x6 is not a multiple of 4");
    let err = falcon.load_dmem(2, &[0; 4]).unwrap_err();
    assert!(matches!(err, FalconError::AddressNotAligned { what: "DMEM load", address: 2, alignment: 4, .. }));
    assert!(fake.take_log().is_empty());

    // Past the IMEM the hardware reports: only HWCFG is read.
    fake.set(0x110108, 0x10); // 4 KiB
    let err = falcon.load_imem(0x100, &vec![0; 0x1000], 0, false).unwrap_err();
    assert_eq!(err, FalconError::TooLarge { engine: gsp, what: "IMEM load", size: 0x1100, max: 0x1000 });
    assert_eq!(err.to_string(), "GSP falcon: IMEM load reaches 0x1100, beyond the limit 0x1000");
    assert_eq!(fake.take_log(), vec![R(0x110108, 0x10)]);

    // Tags past the 16-bit IMEMT field.
    let err = falcon.load_imem(0, &[0; 512], 0xffff00, false).unwrap_err();
    assert!(matches!(err, FalconError::TooLarge { what: "IMEM block tag", size: 0x10000, .. }), "{err:?}");
    assert!(fake.writes().is_empty());
}

#[test]
fn dmem_pio_writes_with_aincw_and_reads_back_with_aincr() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let falcon = fake.falcon::<Gsp>();
    let data = bytes(16, 9);
    falcon.load_dmem(0x104, &data).unwrap();
    let control = (1 << 8) | (1 << 2); // block 1, word 1
    let mut expected = vec![W(0x1101c0, control | 1 << 24)];
    expected.extend(words_of(&data).into_iter().map(|w| W(0x1101c4, w)));
    assert_eq!(fake.take_log(), expected);

    let mut back = [0u8; 16];
    falcon.read_dmem(0x104, &mut back).unwrap();
    assert_eq!(back[..], data[..]);
    let mut expected = vec![W(0x1101c0, control | 1 << 25)];
    expected.extend(words_of(&data).into_iter().map(|w| R(0x1101c4, w)));
    assert_eq!(fake.take_log(), expected);
}

// -------------------------------------------------------------------------------------------
// DMA.

/// A DMA buffer over a leaked vector (tests only), mirrored into the fake's system memory.
fn dma_buffer(fake: &FakeFalcon, bus: u64, contents: &[u8]) -> DmaBuffer {
    let memory: &'static mut [u8] = Vec::leak(contents.to_vec());
    *fake.sysmem.borrow_mut() = Some((bus, contents.to_vec()));
    DmaBuffer::from_static(memory, bus)
}

#[test]
fn dma_programs_fbif_base_offsets_and_commands() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let bus = 0x1_2345_6789_0000;
    let image = bytes(0x1000, 1);
    let buffer = dma_buffer(&fake, bus, &image);
    let segments = [
        DmaSegment {
            memory: FalconMemory::Imem { secure: true },
            source_offset: 0,
            falcon_offset: 0,
            len: 0x200,
            virtual_address: Some(0x100),
        },
        DmaSegment {
            memory: FalconMemory::Dmem,
            source_offset: 0x200,
            falcon_offset: 0,
            len: 0xf0,
            virtual_address: None,
        },
    ];
    fake.falcon::<Gsp>().load_dma(&buffer, DmaTarget::CoherentSysmem, &segments).unwrap();

    let imem_base = (bus - 0x100) >> 8;
    let dmem_base = (bus + 0x200) >> 8;
    let (cmd_imem, cmd_dmem) = (0x614, 0x600); // SIZE_256B | IMEM | SEC=1 ; SIZE_256B
    let idle = R(0x110118, 0x2);
    let expected = vec![
        R(0x110108, 0x100), // IMEM size
        R(0x110624, 0),
        W(0x110624, 0x80), // FBIF_CTL_ALLOW_PHYS_NO_CTX
        W(0x11010c, 0),    // DMACTL: no context required
        R(0x110600, 0),
        W(0x110600, 0x5), // TRANSCFG(0): COHERENT_SYSMEM, PHYSICAL
        idle,
        W(0x110110, imem_base as u32),
        W(0x110128, (imem_base >> 32) as u32),
        idle,
        W(0x110114, 0),
        W(0x11011c, 0x100),
        W(0x110118, cmd_imem),
        idle,
        W(0x110114, 0x100),
        W(0x11011c, 0x200),
        W(0x110118, cmd_imem),
        idle, // completion
        idle,
        W(0x110110, dmem_base as u32),
        W(0x110128, (dmem_base >> 32) as u32),
        idle,
        W(0x110114, 0),
        W(0x11011c, 0),
        W(0x110118, cmd_dmem),
        idle,
    ];
    assert_eq!(fake.take_log(), expected);
    assert_eq!((imem_base as u32, (imem_base >> 32) as u32), (0x4567_88ff, 0x123));
    // What the fake's DMA moved, from the addresses programmed, is the image.
    assert_eq!(fake.imem.borrow()[..0x200], image[..0x200]);
    assert_eq!(fake.dmem.borrow()[..0x100], image[0x200..0x300]);
    assert_eq!(*fake.imem_tags.borrow(), BTreeMap::from([(0, 1), (1, 2)]));
    assert_eq!(*fake.imem_secure.borrow(), BTreeMap::from([(0, true), (1, true)]));
}

#[test]
fn dma_to_tagged_dmem_and_noncoherent_memory() {
    let fake = FakeFalcon::new(&hal::TURING, FalconEngine::Sec2);
    let buffer = dma_buffer(&fake, 0x8000_0000, &bytes(0x400, 5));
    let segment = DmaSegment {
        memory: FalconMemory::Dmem,
        source_offset: 0x100,
        falcon_offset: 0x200,
        len: 0x100,
        virtual_address: Some(0x100),
    };
    fake.falcon::<Sec2>().load_dma(&buffer, DmaTarget::NoncoherentSysmem, &[segment]).unwrap();
    let writes = fake.writes();
    assert!(writes.contains(&(0x840600, 0x6)), "TRANSCFG NONCOHERENT_SYSMEM | PHYSICAL: {writes:x?}");
    assert!(writes.contains(&(0x840110, 0x0080_0000)), "base = bus + 0x100 - 0x100: {writes:x?}");
    assert!(writes.contains(&(0x840118, 0x1_0600)), "SET_DMTAG for a tagged DMEM load: {writes:x?}");
    assert_eq!(fake.dmem.borrow()[0x200..0x300], bytes(0x400, 5)[0x100..0x200]);
}

#[test]
fn dma_refuses_bad_segments_before_writing_anything() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let buffer = dma_buffer(&fake, 0x10_0000, &[0; 0x400]);
    let falcon = fake.falcon::<Gsp>();
    let imem = |source_offset, falcon_offset, len| DmaSegment {
        memory: FalconMemory::Imem { secure: false },
        source_offset,
        falcon_offset,
        len,
        virtual_address: None,
    };
    let err = falcon.load_dma(&buffer, DmaTarget::CoherentSysmem, &[imem(0x10, 0, 0x100)]).unwrap_err();
    assert!(matches!(err, FalconError::AddressNotAligned { alignment: 256, address: 0x10_0010, .. }), "{err:?}");
    let err = falcon.load_dma(&buffer, DmaTarget::CoherentSysmem, &[imem(0x300, 0, 0x101)]).unwrap_err();
    assert!(matches!(err, FalconError::TooLarge { size: 0x500, max: 0x400, .. }), "{err:?}");
    let err = falcon.load_dma(&buffer, DmaTarget::CoherentSysmem, &[imem(0, 0x80, 0x100)]).unwrap_err();
    assert!(matches!(err, FalconError::AddressNotAligned { what: "DMA falcon offset", .. }), "{err:?}");
    let err = falcon.load_dma(&buffer, DmaTarget::CoherentSysmem, &[imem(0, 0xff00, 0x200)]).unwrap_err();
    assert!(matches!(err, FalconError::TooLarge { what: "DMA load into IMEM", .. }), "{err:?}");
    // A later bad segment stops the earlier good ones too.
    let segments = [imem(0, 0, 0x100), imem(0, 0, 0x100)];
    let mut bad = segments;
    bad[1].virtual_address = Some(0x20_0000);
    let err = falcon.load_dma(&buffer, DmaTarget::CoherentSysmem, &bad).unwrap_err();
    assert!(matches!(err, FalconError::BadUcodeLayout { .. }), "{err:?}");
    assert!(fake.writes().is_empty());

    let huge = dma_buffer(&fake, (1 << 49) - 0x100, &[0; 0x200]);
    let err = falcon.load_dma(&huge, DmaTarget::CoherentSysmem, &[imem(0, 0, 0x200)]).unwrap_err();
    assert!(matches!(err, FalconError::TooLarge { what: "DMA bus address", .. }), "{err:?}");
    assert!(fake.writes().is_empty());

    // Hopper's GSP is started by the FSP: the driver has no FBIF to program.
    let hopper = FakeFalcon::new(&hal::HOPPER, FalconEngine::Gsp);
    let err = hopper.falcon::<Gsp>().load_dma(&buffer, DmaTarget::CoherentSysmem, &[imem(0, 0, 0x100)]).unwrap_err();
    assert!(matches!(err, FalconError::Unsupported { what: "DMA through the FBIF", .. }), "{err:?}");
    assert!(hopper.take_log().is_empty());
}

#[test]
fn dma_that_never_goes_idle_times_out() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let buffer = dma_buffer(&fake, 0x10_0000, &[0; 0x100]);
    fake.dma_idle.set(false);
    let segment =
        DmaSegment { memory: FalconMemory::Dmem, source_offset: 0, falcon_offset: 0, len: 4, virtual_address: None };
    let err = fake.falcon::<Gsp>().load_dma(&buffer, DmaTarget::CoherentSysmem, &[segment]).unwrap_err();
    assert_eq!(
        err,
        FalconError::Timeout { engine: FalconEngine::Gsp, what: "DMA completion", after_ms: DMA_TIMEOUT_MS }
    );
}

// -------------------------------------------------------------------------------------------
// Heavy-secure parameters.

fn fwsec_v3_desc() -> crate::fwsec::FalconUcodeDescV3 {
    crate::fwsec::FalconUcodeDescV3 {
        stored_size: 0x1000,
        pkc_data_offset: 0x40,
        interface_offset: 0,
        imem_phys_base: 0,
        imem_load_size: 0x800,
        imem_virt_base: 0,
        dmem_phys_base: 0,
        dmem_load_size: 0x400,
        engine_id_mask: 0x400,
        ucode_id: 9,
        signature_count: 2,
        signature_versions: 0b110,
        reserved: 0,
    }
}

#[test]
fn brom_parameters_go_to_the_falcon2_registers() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Sec2);
    let params = BromParams::from_fwsec_v3(&fwsec_v3_desc());
    assert_eq!(params, BromParams { signature_dmem_offset: 0x40, engine_id_mask: 0x400, ucode_id: 9 });
    fake.falcon::<Sec2>().program_brom(&params).unwrap();
    assert_eq!(
        fake.take_log(),
        vec![
            W(0x841210, 0x40),  // BROM_PARAADDR(0)
            W(0x84119c, 0x400), // BROM_ENGIDMASK
            W(0x841198, 9),     // BROM_CURR_UCODE_ID
            W(0x841180, 1),     // MOD_SEL_ALGO_RSA3K
        ]
    );
    let turing = FakeFalcon::new(&hal::TURING, FalconEngine::Sec2);
    assert!(matches!(turing.falcon::<Sec2>().program_brom(&params), Err(FalconError::Unsupported { .. })));
    assert!(turing.take_log().is_empty());
}

#[test]
fn signatures_are_patched_where_the_ucode_says() {
    let desc = fwsec_v3_desc();
    let location = HsSignatureLocation::from_fwsec_v3(&desc).unwrap();
    assert_eq!(location, HsSignatureLocation { patch_loc: 0x840, data_offset: 0x800 });
    assert_eq!(location.dmem_offset(), desc.pkc_data_offset);

    let mut image = vec![0u8; 0xc00];
    let signature = bytes(384, 77);
    patch_signature(&mut image, location.patch_loc, &signature).unwrap();
    assert_eq!(image[0x840..0x840 + 384], signature[..]);
    assert!(image[..0x840].iter().chain(&image[0x840 + 384..]).all(|&b| b == 0));

    let err = patch_signature(&mut image, 0xb00, &signature).unwrap_err();
    assert_eq!(err, FalconError::ImageTooSmall { what: "the signature", offset: 0xb00, len: 384, image_len: 0xc00 });
    assert!(patch_signature(&mut image, u32::MAX, &signature).is_err());

    let booter = HsSignatureLocation::from_patch_loc(0x5100, 0x5000).unwrap();
    assert_eq!(booter.dmem_offset(), 0x100);
    assert!(matches!(HsSignatureLocation::from_patch_loc(0x10, 0x20), Err(FalconError::BadUcodeLayout { .. })));
}

#[test]
fn booter_signature_selection_counts_back_from_the_newest() {
    assert_eq!(booter_signature_index(1, 7), Ok(0));
    assert_eq!(booter_signature_index(3, 0), Ok(2));
    assert_eq!(booter_signature_index(3, 2), Ok(0));
    assert_eq!(
        booter_signature_index(3, 3),
        Err(FalconError::NoSignatureForFuseVersion { fuse_version: 3, available: 3 })
    );
    assert!(matches!(booter_signature_index(0, 0), Err(FalconError::BadUcodeLayout { .. })));
}

// -------------------------------------------------------------------------------------------
// Start, halt, mailboxes, interrupts.

#[test]
fn execute_sets_bootvec_mailboxes_starts_and_collects_results() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let out = fake.falcon::<Gsp>().execute(0x100, Mailboxes { mailbox0: 0x11, mailbox1: 0x22 }, 50).unwrap();
    assert_eq!(out, Mailboxes { mailbox0: 0xc0de_0011, mailbox1: 0x23 });
    assert_eq!(
        fake.take_log(),
        vec![
            W(0x110104, 0x100), // BOOTVEC
            W(0x110040, 0x11),
            W(0x110044, 0x22),
            R(0x110100, 0x10), // CPUCTL: halted, no alias
            W(0x110100, 0x2),  // STARTCPU
            R(0x110100, 0x0),
            R(0x110100, 0x0),
            R(0x110100, 0x10), // halted
            R(0x110040, 0xc0de_0011),
            R(0x110044, 0x23),
        ]
    );
}

#[test]
fn start_goes_through_the_alias_when_cpuctl_is_locked() {
    let fake = FakeFalcon::new(&hal::ADA, FalconEngine::Sec2);
    fake.set(0x840100, 1 << 6); // ALIAS_EN
    fake.falcon::<Sec2>().start();
    assert_eq!(fake.take_log(), vec![R(0x840100, 0x50), W(0x840130, 0x2)]);
}

#[test]
fn a_falcon_that_never_halts_times_out_and_has_no_results() {
    let fake = FakeFalcon::new(&hal::TURING, FalconEngine::Gsp);
    fake.halt_polls.set(None);
    let falcon = fake.falcon::<Gsp>();
    falcon.start();
    let err = falcon.wait_for_halt(50).unwrap_err();
    assert_eq!(err, FalconError::Timeout { engine: FalconEngine::Gsp, what: "halt", after_ms: 50 });
    assert_eq!(err.to_string(), "timeout waiting for GSP falcon halt after 50 ms");
    assert_eq!(falcon.results(), Err(FalconError::NotHalted { engine: FalconEngine::Gsp }));
    assert_eq!(FalconError::NotHalted { engine: FalconEngine::Gsp }.engine(), Some(FalconEngine::Gsp));
}

#[test]
fn halt_interrupts_are_cleared_with_irqsclr() {
    let fake = FakeFalcon::new(&hal::GA10X, FalconEngine::Gsp);
    let falcon = fake.falcon::<Gsp>();
    falcon.clear_halt_interrupts();
    fake.set(0x110008, 1 << 4);
    assert!(falcon.interrupt_status().halt());
    assert_eq!(fake.writes(), vec![(0x110004, 0x50)]);
}

// -------------------------------------------------------------------------------------------
// EMEM.

#[test]
fn fsp_emem_auto_increments_and_is_checked() {
    let fake = FakeFalcon::new(&hal::HOPPER, FalconEngine::Fsp);
    let falcon = fake.falcon::<Fsp>();
    let message = bytes(32, 40);
    falcon.emem_write(0x104, &message).unwrap();
    let start = (1 << 8) | (1 << 2); // block 1, word 1
    let end = (1 << 8) | (9 << 2);
    let mut expected = vec![W(0x8f2ac0, start | 1 << 24)];
    expected.extend(words_of(&message).into_iter().map(|w| W(0x8f2ac4, w)));
    expected.push(R(0x8f2ac0, end | 1 << 24));
    assert_eq!(fake.take_log(), expected);

    let mut back = [0u8; 32];
    falcon.emem_read(0x104, &mut back).unwrap();
    assert_eq!(back[..], message[..]);
    assert_eq!(fake.take_log()[0], W(0x8f2ac0, start | 1 << 25));

    fake.emem_autoincrement.set(false);
    let err = falcon.emem_write(0, &message).unwrap_err();
    assert_eq!(err, FalconError::EmemOffsetMismatch { engine: FalconEngine::Fsp, expected_words: 8, found_words: 0 });
    assert!(err.to_string().contains("auto-increment failed"), "{err}");

    let err = falcon.emem_write(2, &message).unwrap_err();
    assert!(matches!(err, FalconError::AddressNotAligned { what: "EMEM write", .. }));
    let err = falcon.emem_write(0xfffc, &message).unwrap_err();
    assert!(matches!(err, FalconError::TooLarge { what: "EMEM write", max: 0x10000, .. }));
}

// -------------------------------------------------------------------------------------------
// The falcon2 (boot ROM) facts this module uses, as `hw::falcon2` declares them.

#[test]
fn local_register_facts_are_named_and_placed() {
    let facts: Vec<_> = crate::hw::falcon2::facts().collect();
    let find = |name: &str| facts.iter().find(|f| f.name == name).map(|f| f.value);
    use crate::hw::FactValue::{Bits, Indexed, Number};
    assert_eq!(find("NV_PFALCON2_FALCON_MOD_SEL"), Some(Number(0x180)));
    assert_eq!(find("NV_PFALCON2_FALCON_MOD_SEL_ALGO"), Some(Bits { hi: 7, lo: 0 }));
    assert_eq!(find("NV_PFALCON2_FALCON_MOD_SEL_ALGO_RSA3K"), Some(Number(1)));
    assert_eq!(find("NV_PFALCON2_FALCON_BROM_CURR_UCODE_ID"), Some(Number(0x198)));
    assert_eq!(find("NV_PFALCON2_FALCON_BROM_ENGIDMASK"), Some(Number(0x19c)));
    assert_eq!(find("NV_PFALCON2_FALCON_BROM_PARAADDR"), Some(Indexed { base: 0x210, stride: 4 }));
    assert_eq!(find("NV_SOE_FBIF_TRANSCFG_TARGET_NONCOHERENT_SYSMEM"), Some(Number(2)));
}
