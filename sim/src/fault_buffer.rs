//! The model's replayable MMU fault buffer: the registers of `dev_vm.h`
//! (`NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_*`, index 1; field layouts as UVM applies them,
//! see `nvgpu::hw::vm`) and the 32-byte packets of class `MMU_FAULT_BUFFER` (`clc369.h`) written
//! into the buffer's memory, as the hardware does for faults in a context with replayable
//! faults enabled.
//!
//! The producer side follows what UVM expects of the hardware (`uvm_gpu_replayable_faults.c`,
//! `uvm_volta_fault_buffer.c`): a packet is written with `VALID` set and `PUT` advances; when the
//! buffer is full (`PUT + 1 == GET`) the fault is dropped and `OVERFLOW` latches in `GET` and
//! `PUT`, and nothing more is delivered until software clears it by writing `GET` with
//! `OVERFLOW` (write-one-to-clear). Faults stay *outstanding* until a replay retries them or a
//! cancel kills them.
//!
//! Strict, as everywhere in the model: a `GET` that points outside the entries written, a
//! replay while entries are still unread (no flush), and a cancel that matches no outstanding
//! fault are [`FaultBufferError`]s, and a `GET` out of range also latches `GETPTR_CORRUPTED`.

use alloc::vec::Vec;
use core::fmt;

use nvgpu::hw::fault::{self as pkt, FaultAccessType, FaultType, NVC369_BUF_SIZE};
use nvgpu::hw::host::TlbInvalidateAccessType;
use nvgpu::hw::vm::{
    FaultBufferAddrMode, FaultBufferAperture, PrfFilter, NV_PFB_PRI_MMU_FAULT_BUFFER_LO as LO_LAYOUT,
    NV_PFB_PRI_MMU_FAULT_BUFFER_SIZE as SIZE_LAYOUT, NV_PFB_PRI_MMU_PAGE_FAULT_CTRL as CTRL_LAYOUT,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_GET as GET, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_HI as HI,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_LO as LO, NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_PUT as PUT,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_FAULT_BUFFER_SIZE as SIZE, NV_VIRTUAL_FUNCTION_PRIV_MMU_PAGE_FAULT_CTRL as CTRL,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_REPLAY_FAULT_BUFFER as REPLAYABLE, VF_BASE,
};

use crate::engine_mem::{PhysAddr, PhysAperture, PhysicalMemory};

/// A fault as the MMU reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    /// The faulting context's instance block (the model: its page directory base).
    pub instance: PhysAddr,
    /// Faulting VA (any byte of the page).
    pub va: u64,
    pub fault_type: FaultType,
    pub access: FaultAccessType,
    /// `NV_PFAULT_MMU_ENG_ID_*` of the faulting engine (graphics base plus VEID).
    pub engine_id: u16,
    /// GPC-local client id and the GPC, for uTLB attribution.
    pub client: u8,
    pub gpc: u8,
    pub timestamp_ns: u64,
}

/// What became of a reported fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Written at this entry index; the interrupt is to be raised.
    Written { index: u32 },
    /// The buffer is full or already overflowed: dropped, `OVERFLOW` set.
    Overflowed,
    /// The buffer is not enabled: the fault cannot be delivered (the context's faults are then
    /// not replayable).
    Disabled,
    /// A prefetch fault the prefetch filter drops.
    Filtered,
}

/// Something the driver did that the hardware would not accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultBufferError {
    /// `GET` written outside the entries between the old `GET` and `PUT`.
    GetBeyondPut { get: u32, old_get: u32, put: u32, size: u32 },
    /// A replay while the buffer still holds unread entries (software did not fetch or flush).
    ReplayWithoutFlush { get: u32, put: u32 },
    /// A cancel that matches no outstanding fault (of the access types it names).
    CancelOfNoFault { va: u64 },
    /// A cancel with the reserved `ACCESS_TYPE` `VIRT_RSVRVD`.
    CancelAccessTypeReserved { va: u64 },
    /// The buffer is programmed with a virtual address or a size the model does not accept.
    BadSetup { what: &'static str, value: u32 },
    /// Writing a packet to the buffer's memory failed (not backed).
    BufferMemory { at: u64 },
    /// `PUT` is read-only.
    PutWritten { value: u32 },
}

impl fmt::Display for FaultBufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultBufferError::GetBeyondPut { get, old_get, put, size } => write!(
                f,
                "replayable fault buffer GET written {get}, outside the entries {old_get}..{put} (size {size})"
            ),
            FaultBufferError::ReplayWithoutFlush { get, put } => {
                write!(f, "fault replay with entries {get}..{put} still unread (no flush before the replay)")
            }
            FaultBufferError::CancelOfNoFault { va } => {
                write!(f, "fault cancel at VA {va:#x}, where no fault is outstanding")
            }
            FaultBufferError::CancelAccessTypeReserved { va } => {
                write!(f, "fault cancel at VA {va:#x} with the reserved ACCESS_TYPE VIRT_RSVRVD")
            }
            FaultBufferError::BadSetup { what, value } => {
                write!(f, "replayable fault buffer {what} {value:#010x} not accepted")
            }
            FaultBufferError::BufferMemory { at } => write!(f, "fault packet at {at:#x}: buffer memory not backed"),
            FaultBufferError::PutWritten { value } => {
                write!(f, "write of {value:#010x} to the read-only fault buffer PUT")
            }
        }
    }
}

/// A fault delivered and neither replayed nor cancelled yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outstanding {
    pub record: FaultRecord,
}

/// The replayable fault buffer's state.
#[derive(Clone, Debug, Default)]
pub struct ReplayableFaultBuffer {
    lo: u32,
    hi: u32,
    size: u32,
    ctrl: u32,
    get: u32,
    put: u32,
    overflow: bool,
    getptr_corrupted: bool,
    outstanding: Vec<Outstanding>,
    /// Packets written.
    pub delivered: u64,
    /// Faults dropped by overflow.
    pub dropped: u64,
    /// The buffer asks for its interrupt: a packet was written, or GET was written while
    /// entries remain (how Turing+ re-raises for faults that arrived during service).
    notify: bool,
}

impl ReplayableFaultBuffer {
    /// Whether BAR0 `offset` is one of this buffer's registers (the replayable index, and the
    /// prefetch control).
    pub fn claims(offset: u32) -> bool {
        [
            LO::address(VF_BASE, REPLAYABLE),
            HI::address(VF_BASE, REPLAYABLE),
            GET::address(VF_BASE, REPLAYABLE),
            PUT::address(VF_BASE, REPLAYABLE),
            SIZE::address(VF_BASE, REPLAYABLE),
            VF_BASE + CTRL::OFFSET,
        ]
        .contains(&offset)
    }

    fn entries(&self) -> u32 {
        SIZE_LAYOUT::from_raw(self.size).val()
    }

    /// Whether faults are delivered here.
    pub fn enabled(&self) -> bool {
        SIZE_LAYOUT::from_raw(self.size).enable() && self.entries() > 0
    }

    /// Faults delivered and not yet replayed or cancelled.
    pub fn outstanding(&self) -> &[Outstanding] {
        &self.outstanding
    }

    fn put_value(&self) -> u32 {
        PUT::from_raw(0)
            .with(PUT::PTR, self.put)
            .with(PUT::OVERFLOW, self.overflow)
            .with(PUT::GETPTR_CORRUPTED, self.getptr_corrupted)
            .raw()
    }

    fn get_value(&self) -> u32 {
        GET::from_raw(0)
            .with(GET::PTR, self.get)
            .with(GET::OVERFLOW, self.overflow)
            .with(GET::GETPTR_CORRUPTED, self.getptr_corrupted)
            .raw()
    }

    /// What physical RM does for `REGISTER_FAULT_BUFFER`: programs `LO`/`HI` with the buffer's
    /// physical address (aperture of `at`) and `SIZE` with `entries` and `ENABLE`.
    pub fn program(&mut self, at: PhysAddr, entries: u32) -> Result<(), FaultBufferError> {
        let aperture = match at.aperture {
            PhysAperture::Video => FaultBufferAperture::Local,
            PhysAperture::SystemCoherent => FaultBufferAperture::SysCoh,
            _ => FaultBufferAperture::SysNcoh,
        };
        let lo = LO_LAYOUT::from_raw(0)
            .with(LO_LAYOUT::ADDR_MODE, FaultBufferAddrMode::Physical)
            .with(LO_LAYOUT::PHYS_APERTURE, aperture)
            .with(LO_LAYOUT::ADDR, (at.addr as u32) >> 12);
        let size = SIZE_LAYOUT::from_raw(0).with(SIZE_LAYOUT::VAL, entries).with(SIZE_LAYOUT::ENABLE, true);
        self.access(LO::address(VF_BASE, REPLAYABLE), Some(lo.raw()))?;
        self.access(HI::address(VF_BASE, REPLAYABLE), Some((at.addr >> 32) as u32))?;
        self.access(SIZE::address(VF_BASE, REPLAYABLE), Some(size.raw()))?;
        Ok(())
    }

    /// Disables the buffer (its object was freed): nothing more is delivered.
    pub fn disable(&mut self) {
        let size = SIZE_LAYOUT::from_raw(self.size).with(SIZE_LAYOUT::ENABLE, false);
        self.size = size.raw();
        self.outstanding.clear();
    }

    /// A register access: `Some(value)` for reads, `None` for writes; errors for what the
    /// hardware would reject (the write still takes the effect hardware gives it).
    pub fn access(&mut self, offset: u32, write: Option<u32>) -> Result<u32, FaultBufferError> {
        let is = |a: u32| offset == a;
        match write {
            None => Ok(match () {
                _ if is(LO::address(VF_BASE, REPLAYABLE)) => self.lo,
                _ if is(HI::address(VF_BASE, REPLAYABLE)) => self.hi,
                _ if is(GET::address(VF_BASE, REPLAYABLE)) => self.get_value(),
                _ if is(PUT::address(VF_BASE, REPLAYABLE)) => self.put_value(),
                _ if is(SIZE::address(VF_BASE, REPLAYABLE)) => self.size,
                _ => self.ctrl,
            }),
            Some(v) => {
                if is(LO::address(VF_BASE, REPLAYABLE)) {
                    self.lo = v;
                    let lo = LO_LAYOUT::from_raw(v);
                    if lo.addr_mode() != Ok(FaultBufferAddrMode::Physical) {
                        return Err(FaultBufferError::BadSetup { what: "LO (virtual address mode)", value: v });
                    }
                } else if is(HI::address(VF_BASE, REPLAYABLE)) {
                    self.hi = v;
                } else if is(SIZE::address(VF_BASE, REPLAYABLE)) {
                    self.size = v;
                    let s = SIZE_LAYOUT::from_raw(v);
                    if s.enable() {
                        // Enabling resets the pointers (software starts at entry 0).
                        self.get = 0;
                        self.put = 0;
                        self.outstanding.clear();
                        if s.val() < 2 || s.set_default() {
                            return Err(FaultBufferError::BadSetup { what: "SIZE", value: v });
                        }
                    }
                } else if is(GET::address(VF_BASE, REPLAYABLE)) {
                    let g = GET::from_raw(v);
                    if g.overflow() {
                        self.overflow = false;
                    }
                    if g.getptr_corrupted() {
                        self.getptr_corrupted = false;
                    }
                    return self.write_get(g.ptr());
                } else if is(PUT::address(VF_BASE, REPLAYABLE)) {
                    return Err(FaultBufferError::PutWritten { value: v });
                } else {
                    self.ctrl = v;
                }
                Ok(0)
            }
        }
    }

    fn write_get(&mut self, new_get: u32) -> Result<u32, FaultBufferError> {
        let size = self.entries().max(1);
        let unread = (self.put + size - self.get) % size;
        let advance = (new_get.wrapping_add(size).wrapping_sub(self.get)) % size;
        if new_get >= size || advance > unread {
            self.getptr_corrupted = true;
            return Err(FaultBufferError::GetBeyondPut { get: new_get, old_get: self.get, put: self.put, size });
        }
        self.get = new_get;
        if self.get != self.put {
            self.notify = true;
        }
        Ok(0)
    }

    /// Whether the buffer raised its interrupt since the last call (the GPU then sets the
    /// replayable-fault vector's leaf bit).
    pub fn take_notify(&mut self) -> bool {
        core::mem::take(&mut self.notify)
    }

    /// Physical address of entry `index`.
    fn entry_address(&self, index: u32) -> Option<PhysAddr> {
        let lo = LO_LAYOUT::from_raw(self.lo);
        let aperture = match lo.phys_aperture() {
            Ok(FaultBufferAperture::Local) => PhysAperture::Video,
            Ok(FaultBufferAperture::SysCoh) => PhysAperture::SystemCoherent,
            Ok(FaultBufferAperture::SysNcoh) => PhysAperture::SystemNonCoherent,
            Err(_) => return None,
        };
        let base = (u64::from(self.hi) << 32) | (u64::from(lo.addr()) << 12);
        let addr = base.checked_add(u64::from(index) * NVC369_BUF_SIZE as u64)?;
        Some(PhysAddr { aperture, addr })
    }

    /// Reports a fault (the MMU's side).
    pub fn report(&mut self, record: FaultRecord, mem: &mut dyn PhysicalMemory) -> Result<Delivery, FaultBufferError> {
        if !self.enabled() {
            return Ok(Delivery::Disabled);
        }
        if record.access == FaultAccessType::VirtPrefetch
            && CTRL_LAYOUT::from_raw(self.ctrl).prf_filter() == Ok(PrfFilter::SendNone)
        {
            return Ok(Delivery::Filtered);
        }
        let size = self.entries();
        if self.overflow || (self.put + 1) % size == self.get {
            self.overflow = true;
            self.dropped += 1;
            return Ok(Delivery::Overflowed);
        }
        let index = self.put;
        let at = self.entry_address(index).ok_or(FaultBufferError::BadSetup { what: "LO", value: self.lo })?;
        let mut entry = [0u8; NVC369_BUF_SIZE];
        let inst_aperture = match record.instance.aperture {
            PhysAperture::Video => pkt::NVC369_BUF_ENTRY_INST_APERTURE_VID_MEM,
            PhysAperture::SystemCoherent => pkt::NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_COHERENT,
            _ => pkt::NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_NONCOHERENT,
        };
        pkt::NVC369_BUF_ENTRY_INST_APERTURE.set(&mut entry, u64::from(inst_aperture));
        pkt::NVC369_BUF_ENTRY_INST.set(&mut entry, record.instance.addr >> 12);
        pkt::NVC369_BUF_ENTRY_ADDR.set(&mut entry, record.va >> 12);
        pkt::NVC369_BUF_ENTRY_TIMESTAMP.set(&mut entry, record.timestamp_ns);
        pkt::NVC369_BUF_ENTRY_ENGINE_ID.set(&mut entry, u64::from(record.engine_id));
        pkt::NVC369_BUF_ENTRY_FAULT_TYPE.set(&mut entry, record.fault_type as u64);
        pkt::NVC369_BUF_ENTRY_REPLAYABLE_FAULT.set(&mut entry, u64::from(pkt::NVC369_BUF_ENTRY_REPLAYABLE_FAULT_TRUE));
        pkt::NVC369_BUF_ENTRY_CLIENT.set(&mut entry, u64::from(record.client));
        pkt::NVC369_BUF_ENTRY_ACCESS_TYPE.set(&mut entry, record.access as u64);
        pkt::NVC369_BUF_ENTRY_MMU_CLIENT_TYPE.set(&mut entry, 0);
        pkt::NVC369_BUF_ENTRY_GPC_ID.set(&mut entry, u64::from(record.gpc));
        pkt::NVC369_BUF_ENTRY_REPLAYABLE_FAULT_EN.set(&mut entry, 1);
        pkt::NVC369_BUF_ENTRY_VALID.set(&mut entry, u64::from(pkt::NVC369_BUF_ENTRY_VALID_TRUE));
        if !mem.write_phys(at, &entry) {
            return Err(FaultBufferError::BufferMemory { at: at.addr });
        }
        self.put = (self.put + 1) % size;
        self.delivered += 1;
        self.outstanding.push(Outstanding { record });
        self.notify = true;
        Ok(Delivery::Written { index })
    }

    /// A replay (`MEM_OP` with `REPLAY_START` or `START_ACK_ALL`): every outstanding fault is
    /// handed back for a retry, which re-reports those that still fault. Strict: the driver must
    /// have consumed the buffer (GET == PUT) first.
    pub fn replay(&mut self) -> Result<Vec<Outstanding>, FaultBufferError> {
        if self.get != self.put {
            return Err(FaultBufferError::ReplayWithoutFlush { get: self.get, put: self.put });
        }
        Ok(core::mem::take(&mut self.outstanding))
    }

    /// A precise cancel (`CANCEL_VA_GLOBAL`) of the outstanding faults of the access types
    /// `mode` names on the page of `va` in the context at `instance`; returns the cancelled
    /// faults. The others stay outstanding for the next replay.
    pub fn cancel_va(
        &mut self,
        instance: PhysAddr,
        va: u64,
        mode: TlbInvalidateAccessType,
    ) -> Result<Vec<Outstanding>, FaultBufferError> {
        if mode == TlbInvalidateAccessType::VirtRsvrvd {
            return Err(FaultBufferError::CancelAccessTypeReserved { va });
        }
        let page = va & !0xfff;
        let (gone, keep): (Vec<Outstanding>, Vec<Outstanding>) = self.outstanding.iter().partition(|o| {
            o.record.va & !0xfff == page && o.record.instance == instance && cancel_covers(mode, o.record.access)
        });
        if gone.is_empty() {
            return Err(FaultBufferError::CancelOfNoFault { va });
        }
        self.outstanding = keep;
        Ok(gone)
    }
}

/// Whether a cancel with `ACCESS_TYPE` `mode` applies to a fault of access type `access`, as
/// `clc46f.h` names the values: `VIRT_READ`, `VIRT_WRITE`, `VIRT_ATOMIC_STRONG`,
/// `VIRT_ATOMIC_WEAK` each one kind; `VIRT_ATOMIC_ALL` both atomics; `VIRT_WRITE_AND_ATOMIC`
/// writes and both atomics; `VIRT_ALL` every access, prefetches included. The reserved value
/// covers nothing (the cancel itself is refused). A physical access counts as its virtual kind.
pub fn cancel_covers(mode: TlbInvalidateAccessType, access: FaultAccessType) -> bool {
    use FaultAccessType as A;
    use TlbInvalidateAccessType as M;
    let (read, write, strong, weak) = match access {
        A::VirtRead | A::PhysRead => (true, false, false, false),
        A::VirtWrite | A::PhysWrite => (false, true, false, false),
        A::VirtAtomicStrong | A::PhysAtomic => (false, false, true, false),
        A::VirtAtomicWeak => (false, false, false, true),
        A::VirtPrefetch | A::PhysPrefetch => (false, false, false, false),
    };
    match mode {
        M::VirtRead => read,
        M::VirtWrite => write,
        M::VirtAtomicStrong => strong,
        M::VirtAtomicWeak => weak,
        M::VirtAtomicAll => strong || weak,
        M::VirtWriteAndAtomic => write || strong || weak,
        M::VirtAll => true,
        M::VirtRsvrvd => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;

    #[derive(Default)]
    struct Sys(BTreeMap<u64, u8>);
    impl PhysicalMemory for Sys {
        fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = self.0.get(&(at.addr + i as u64)).copied().unwrap_or(0);
            }
            true
        }
        fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool {
            assert_eq!(at.aperture, PhysAperture::SystemCoherent);
            for (i, b) in data.iter().enumerate() {
                self.0.insert(at.addr + i as u64, *b);
            }
            true
        }
    }

    const BASE: u64 = 0x1_2345_6000;

    fn setup(entries: u32) -> ReplayableFaultBuffer {
        let mut fb = ReplayableFaultBuffer::default();
        let lo = LO_LAYOUT::from_raw(0)
            .with(LO_LAYOUT::ADDR_MODE, FaultBufferAddrMode::Physical)
            .with(LO_LAYOUT::PHYS_APERTURE, FaultBufferAperture::SysCoh)
            .with(LO_LAYOUT::ADDR, (BASE as u32) >> 12);
        fb.access(LO::address(VF_BASE, REPLAYABLE), Some(lo.raw())).unwrap();
        fb.access(HI::address(VF_BASE, REPLAYABLE), Some((BASE >> 32) as u32)).unwrap();
        let size = SIZE_LAYOUT::from_raw(0).with(SIZE_LAYOUT::VAL, entries).with(SIZE_LAYOUT::ENABLE, true);
        fb.access(SIZE::address(VF_BASE, REPLAYABLE), Some(size.raw())).unwrap();
        fb
    }

    fn fault(va: u64) -> FaultRecord {
        FaultRecord {
            instance: PhysAddr { aperture: PhysAperture::Video, addr: 0x20_0000 },
            va,
            fault_type: FaultType::Pte,
            access: FaultAccessType::VirtWrite,
            engine_id: 64,
            client: 3,
            gpc: 1,
            timestamp_ns: 1000,
        }
    }

    fn put(fb: &mut ReplayableFaultBuffer) -> PUT {
        PUT::from_raw(fb.access(PUT::address(VF_BASE, REPLAYABLE), None).unwrap())
    }

    #[test]
    fn packets_are_written_in_the_documented_format() {
        let mut fb = setup(4);
        let mut mem = Sys::default();
        assert_eq!(fb.report(fault(0x7000_1234), &mut mem), Ok(Delivery::Written { index: 0 }));
        assert_eq!(fb.report(fault(0x7000_5000), &mut mem), Ok(Delivery::Written { index: 1 }));
        assert_eq!(put(&mut fb).ptr(), 2);
        let mut e = [0u8; 32];
        mem.read_phys(PhysAddr { aperture: PhysAperture::SystemCoherent, addr: BASE + 32 }, &mut e);
        // Dword 2/3: the VA with the low 12 bits clear; dword 7: type, access, valid.
        let dw = |i: usize| u32::from_le_bytes([e[4 * i], e[4 * i + 1], e[4 * i + 2], e[4 * i + 3]]);
        assert_eq!(u64::from(dw(3)) << 32 | u64::from(dw(2) & !0xfff), 0x7000_5000);
        assert_eq!(dw(0) & !0xfff, 0x20_0000);
        assert_eq!(dw(6) & 0x1ff, 64);
        assert_eq!(dw(7) & 0x1f, FaultType::Pte as u32);
        assert_eq!((dw(7) >> 16) & 0xf, FaultAccessType::VirtWrite as u32);
        assert_eq!(dw(7) >> 31, 1, "VALID");
        assert_eq!((dw(7) >> 30) & 1, 1, "REPLAYABLE_FAULT_EN");
        assert_eq!((dw(7) >> 7) & 1, 1, "REPLAYABLE");
        assert_eq!(fb.outstanding().len(), 2);
    }

    #[test]
    fn overflow_drops_until_cleared_and_get_is_checked() {
        let mut fb = setup(4);
        let mut mem = Sys::default();
        for i in 0..3 {
            assert!(matches!(fb.report(fault(0x1000 * i), &mut mem), Ok(Delivery::Written { .. })));
        }
        assert_eq!(fb.report(fault(0x9000), &mut mem), Ok(Delivery::Overflowed), "PUT + 1 == GET");
        assert!(put(&mut fb).overflow());
        // GET beyond PUT is refused and latches GETPTR_CORRUPTED.
        let bad = GET::from_raw(0).with(GET::PTR, 5).raw();
        assert_eq!(
            fb.access(GET::address(VF_BASE, REPLAYABLE), Some(bad)).err(),
            Some(FaultBufferError::GetBeyondPut { get: 5, old_get: 0, put: 3, size: 4 })
        );
        assert!(put(&mut fb).getptr_corrupted());
        // Consume all three, still overflowed: a new fault is dropped.
        fb.access(GET::address(VF_BASE, REPLAYABLE), Some(GET::from_raw(0).with(GET::PTR, 3).raw())).unwrap();
        assert_eq!(fb.report(fault(0xa000), &mut mem), Ok(Delivery::Overflowed));
        // Clear OVERFLOW and GETPTR_CORRUPTED (write-one-to-clear): delivery resumes, wrapping.
        let clear = GET::from_raw(0).with(GET::PTR, 3).with(GET::OVERFLOW, true).with(GET::GETPTR_CORRUPTED, true);
        fb.access(GET::address(VF_BASE, REPLAYABLE), Some(clear.raw())).unwrap();
        assert!(!put(&mut fb).overflow() && !put(&mut fb).getptr_corrupted());
        assert_eq!(fb.report(fault(0xb000), &mut mem), Ok(Delivery::Written { index: 3 }));
        assert_eq!(fb.report(fault(0xc000), &mut mem), Ok(Delivery::Written { index: 0 }));
        assert_eq!(fb.dropped, 2);
    }

    #[test]
    fn the_interrupt_is_asked_for_by_each_packet_and_by_a_get_that_leaves_entries() {
        let mut fb = setup(8);
        let mut mem = Sys::default();
        assert!(!fb.take_notify());
        fb.report(fault(0x4000), &mut mem).unwrap();
        fb.report(fault(0x5000), &mut mem).unwrap();
        assert!(fb.take_notify());
        assert!(!fb.take_notify(), "taken once");
        fb.access(GET::address(VF_BASE, REPLAYABLE), Some(GET::from_raw(0).with(GET::PTR, 1).raw())).unwrap();
        assert!(fb.take_notify(), "GET written with an entry left: raised again");
        fb.access(GET::address(VF_BASE, REPLAYABLE), Some(GET::from_raw(0).with(GET::PTR, 2).raw())).unwrap();
        assert!(!fb.take_notify(), "GET caught up with PUT: nothing to raise");
    }

    #[test]
    fn replay_needs_a_flush_and_cancel_needs_a_fault() {
        let mut fb = setup(8);
        let mut mem = Sys::default();
        fb.report(fault(0x4000), &mut mem).unwrap();
        fb.report(fault(0x4800), &mut mem).unwrap();
        fb.report(fault(0x6000), &mut mem).unwrap();
        assert_eq!(fb.replay().err(), Some(FaultBufferError::ReplayWithoutFlush { get: 0, put: 3 }));
        fb.access(GET::address(VF_BASE, REPLAYABLE), Some(GET::from_raw(0).with(GET::PTR, 3).raw())).unwrap();
        let inst = fault(0).instance;
        let all = TlbInvalidateAccessType::VirtAll;
        // The faults are writes: a cancel of reads only, or of atomics only, matches none.
        for mode in [TlbInvalidateAccessType::VirtRead, TlbInvalidateAccessType::VirtAtomicAll] {
            assert_eq!(fb.cancel_va(inst, 0x4123, mode).err(), Some(FaultBufferError::CancelOfNoFault { va: 0x4123 }));
        }
        assert_eq!(
            fb.cancel_va(inst, 0x4123, TlbInvalidateAccessType::VirtRsvrvd).err(),
            Some(FaultBufferError::CancelAccessTypeReserved { va: 0x4123 })
        );
        let read = FaultRecord { access: FaultAccessType::VirtRead, ..fault(0x4200) };
        fb.report(read, &mut mem).unwrap();
        fb.access(GET::address(VF_BASE, REPLAYABLE), Some(GET::from_raw(0).with(GET::PTR, 4).raw())).unwrap();
        let gone = fb.cancel_va(inst, 0x4123, TlbInvalidateAccessType::VirtWriteAndAtomic).unwrap();
        assert_eq!(gone.len(), 2, "both writes on the page, not the read");
        assert_eq!(
            fb.cancel_va(inst, 0x4000, TlbInvalidateAccessType::VirtWrite).err(),
            Some(FaultBufferError::CancelOfNoFault { va: 0x4000 })
        );
        let retried = fb.replay().unwrap();
        let mut vas: Vec<u64> = retried.iter().map(|o| o.record.va).collect();
        vas.sort();
        assert_eq!(vas, [0x4200, 0x6000], "the read on the cancelled page is replayed");
        fb.report(fault(0x7000), &mut mem).unwrap();
        fb.access(GET::address(VF_BASE, REPLAYABLE), Some(GET::from_raw(0).with(GET::PTR, 5).raw())).unwrap();
        assert_eq!(fb.cancel_va(inst, 0x7fff, all).unwrap().len(), 1);
        assert!(fb.outstanding().is_empty());
        // Prefetch faults are dropped when the filter says SEND_NONE.
        let ctrl = CTRL_LAYOUT::from_raw(0).with(CTRL_LAYOUT::PRF_FILTER, PrfFilter::SendNone);
        fb.access(VF_BASE + CTRL::OFFSET, Some(ctrl.raw())).unwrap();
        let prefetch = FaultRecord { access: FaultAccessType::VirtPrefetch, ..fault(0x8000) };
        assert_eq!(fb.report(prefetch, &mut mem), Ok(Delivery::Filtered));
        assert!(ReplayableFaultBuffer::claims(GET::address(VF_BASE, REPLAYABLE)));
        let _ = retried;
        assert!(!ReplayableFaultBuffer::claims(GET::address(VF_BASE, 0)), "the non-replayable buffer is RM's");
    }
}
