//! The model MMU: page-table walks over the tables the driver wrote, a TLB that is as strict as
//! silicon (a changed PTE is not seen until the driver invalidates), the fault log, and the
//! BAR0 registers of the memory system (TLB invalidate, the PRAMIN window).
//!
//! The walk is the model's own, written from the hardware's description: the level geometry and
//! the entry decoders are [`format`]'s, the model's reading of `dev_mmu.h` over the bit positions
//! `nvgpu::hw::mmu` declares (the driver's `nvgpu::mm` encoders are not used). Entries the format
//! does not define (an undefined PCF, a video address wider than its field, a PTE where the
//! level holds none) are `BadPageTable` faults. What it honours: PDE apertures (tables in VRAM or in system memory by bus address), dual PDEs (a
//! valid big PTE wins; a plainly invalid one lets the 4K PTE beneath decide; an "unmapped" big
//! PTE hides it), 2M PTEs at PD0, 512M PTEs at PD1 where the format has them, sparse PTEs (reads
//! zero, writes dropped), and the read-only, atomic-disable and privilege attributes.
//!
//! Faults are returned as [`MmuFault`] and recorded in a [`FaultLog`] as fault-buffer packets
//! (class MMU_FAULT_BUFFER, `clc369.h`; fault and access types from `dev_fault.h`).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use nvgpu::hal::Family;
use nvgpu::hw::fault::{self, FaultAccessType, FaultType, MmuClientType, NVC369_BUF_SIZE};
use nvgpu::hw::pramin::{
    Bar0WindowTarget, WindowRegister, NV_PBUS_BAR0_WINDOW, NV_PBUS_BAR0_WINDOW_BASE_SHIFT, NV_PRAMIN,
    NV_XAL_EP_BAR0_WINDOW,
};
use nvgpu::hw::vm::{
    InvalidatePdbAperture, NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE as INVALIDATE,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB as INVALIDATE_PDB,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB_ADDR_ALIGNMENT as PDB_SHIFT,
    NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_UPPER_PDB as INVALIDATE_UPPER_PDB, VF_BASE,
};

pub mod format;

pub use format::{GmmuFormat, PageSize, Pte, PteAttrs, PteState, TableAddress, TableAperture};

use crate::engine_mem::{AccessType, FaultKind, MmuFault, PhysAddr, PhysAperture, PhysicalMemory, VirtualMemory};
use crate::memory::SystemMemory;
use crate::silicon;
use crate::vram::Vram;

/// The smallest page: accesses are split at its boundaries.
const SMALL_PAGE: u64 = 4096;
/// Translations the TLB holds before it drops them all (silicon evicts; the model forgets
/// everything at once, which is still never stale).
pub const TLB_CAPACITY: usize = 1 << 16;
/// Faults the log keeps; later ones are counted in [`FaultLog::dropped`].
pub const FAULT_LOG_CAPACITY: usize = 4096;

// ---------------------------------------------------------------------------------------------
// Physical memory.

/// The memories an access can reach: this GPU's VRAM and system memory by bus address.
pub struct Memories<'a> {
    pub vram: &'a mut Vram,
    pub sysmem: Option<&'a dyn SystemMemory>,
}

impl Memories<'_> {
    fn read_table_word(&self, at: TableAddress) -> Option<u64> {
        let mut b = [0u8; 8];
        let ok = match at.aperture {
            TableAperture::Video => self.vram.read(at.address, &mut b),
            TableAperture::SystemCoherent | TableAperture::SystemNonCoherent => {
                self.sysmem.is_some_and(|m| m.read(at.address, &mut b))
            }
        };
        ok.then_some(u64::from_le_bytes(b))
    }
}

impl PhysicalMemory for Memories<'_> {
    fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool {
        match at.aperture {
            PhysAperture::Video => self.vram.read(at.addr, buf),
            PhysAperture::SystemCoherent | PhysAperture::SystemNonCoherent => {
                self.sysmem.is_some_and(|m| m.read(at.addr, buf))
            }
            PhysAperture::Peer(_) => false,
        }
    }

    fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool {
        match at.aperture {
            PhysAperture::Video => self.vram.write(at.addr, data),
            PhysAperture::SystemCoherent | PhysAperture::SystemNonCoherent => {
                self.sysmem.is_some_and(|m| m.write(at.addr, data))
            }
            PhysAperture::Peer(_) => false,
        }
    }
}

/// Where a page directory given as a physical address is, for the walk (peer memory cannot hold
/// page tables).
pub fn table_address(at: PhysAddr) -> Option<TableAddress> {
    let aperture = match at.aperture {
        PhysAperture::Video => TableAperture::Video,
        PhysAperture::SystemCoherent => TableAperture::SystemCoherent,
        PhysAperture::SystemNonCoherent => TableAperture::SystemNonCoherent,
        PhysAperture::Peer(_) => return None,
    };
    Some(TableAddress { aperture, address: at.addr })
}

// ---------------------------------------------------------------------------------------------
// Who accesses.

/// The unit behind an access, as a fault packet names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmuClient {
    /// `NV_PFAULT_MMU_ENG_ID_*`.
    pub engine_id: u16,
    /// Client id within the hub or the GPC.
    pub client_id: u8,
    pub client_type: MmuClientType,
    pub gpc_id: u8,
    /// Whether the unit may touch pages with the privileged attribute.
    pub privileged: bool,
}

impl MmuClient {
    fn hub(engine_id: u16) -> Self {
        MmuClient { engine_id, client_id: 0, client_type: MmuClientType::Hub, gpc_id: 0, privileged: false }
    }

    /// Copy engine `n` of a chip of `family`.
    pub fn copy_engine(family: Family, n: u16) -> Self {
        Self::hub(silicon::of(family).fault_ids.ce0 + n)
    }

    /// Host (PBDMA) 0.
    pub fn host(family: Family) -> Self {
        Self::hub(silicon::of(family).fault_ids.host0)
    }

    /// The BAR1 unit (CPU accesses through BAR1).
    pub fn bar1(family: Family) -> Self {
        Self::hub(silicon::of(family).fault_ids.bar1)
    }

    /// Graphics/compute, subcontext `veid`, from GPC `gpc_id`.
    pub fn graphics(family: Family, veid: u16, gpc_id: u8) -> Self {
        let base = silicon::of(family).fault_ids.graphics;
        MmuClient { engine_id: base + veid, client_id: 0, client_type: MmuClientType::Gpc, gpc_id, privileged: false }
    }

    /// The same unit, allowed privileged pages.
    pub fn privileged(self) -> Self {
        MmuClient { privileged: true, ..self }
    }
}

// ---------------------------------------------------------------------------------------------
// Translations and the TLB.

/// What a leaf PTE said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    Mapped(Pte),
    /// Reads return zero, writes are dropped.
    Sparse,
}

/// A resolved page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageTranslation {
    pub page_va: u64,
    pub page_size: PageSize,
    pub leaf: Leaf,
}

impl PageTranslation {
    /// The physical address of `va` (which lies in this page); `None` for a sparse page.
    pub fn phys(&self, va: u64) -> Option<PhysAddr> {
        match self.leaf {
            Leaf::Mapped(pte) => {
                Some(PhysAddr { addr: pte.page.addr.wrapping_add(va.wrapping_sub(self.page_va)), ..pte.page })
            }
            Leaf::Sparse => None,
        }
    }
}

/// Cached translations per (PDB, 4 KiB page of VA). Entries stay until an invalidate names
/// their PDB (or all PDBs): a PTE rewritten without an invalidate is not seen, as on silicon.
/// Only successful walks are cached.
#[derive(Default)]
pub struct Tlb {
    entries: BTreeMap<(TableAddress, u64), PageTranslation>,
    invalidates: u64,
}

impl Tlb {
    pub fn new() -> Self {
        Self::default()
    }

    fn lookup(&self, pdb: TableAddress, va: u64) -> Option<PageTranslation> {
        self.entries.get(&(pdb, va / SMALL_PAGE)).copied()
    }

    fn insert(&mut self, pdb: TableAddress, va: u64, t: PageTranslation) {
        if self.entries.len() >= TLB_CAPACITY {
            self.entries.clear();
        }
        self.entries.insert((pdb, va / SMALL_PAGE), t);
    }

    /// Drops every translation of the address space rooted at `pdb`.
    pub fn invalidate_pdb(&mut self, pdb: TableAddress) {
        self.invalidate_matching(|p| *p == pdb);
    }

    /// One invalidate of every address space whose PDB `matches`.
    fn invalidate_matching(&mut self, matches: impl Fn(&TableAddress) -> bool) {
        self.entries.retain(|(p, _), _| !matches(p));
        self.invalidates += 1;
    }

    /// Drops every translation.
    pub fn invalidate_all(&mut self) {
        self.entries.clear();
        self.invalidates += 1;
    }

    /// Translations held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Invalidates performed so far.
    pub fn invalidates(&self) -> u64 {
        self.invalidates
    }
}

/// Why a walk or a permission check refused, in both vocabularies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Refusal {
    kind: FaultKind,
    fault_type: FaultType,
}

const fn refuse(kind: FaultKind, fault_type: FaultType) -> Refusal {
    Refusal { kind, fault_type }
}

/// Walks the tables of the address space rooted at `pdb` for `va`: the directories root first
/// (an entry there may be a PTE only at a level that holds large pages), then PD0's dual PDE
/// (or a 2M PTE in its place), then the big and the small page table beneath it.
fn walk(format: GmmuFormat, mem: &Memories<'_>, pdb: TableAddress, va: u64) -> Result<PageTranslation, Refusal> {
    if va >> format.va_bits() != 0 {
        return Err(refuse(FaultKind::VaLimitViolation, FaultType::VaLimitViolation));
    }
    let malformed = |fault_type| refuse(FaultKind::BadPageTable, fault_type);
    let read = |table: TableAddress, offset: u64, fault_type| {
        table.offset(offset).and_then(|at| mem.read_table_word(at)).ok_or(malformed(fault_type))
    };
    let leaf = |state: PteState, size: PageSize| -> Result<PageTranslation, Refusal> {
        let page_va = va & !(size.bytes() - 1);
        match state {
            PteState::Valid(pte) => Ok(PageTranslation { page_va, page_size: size, leaf: Leaf::Mapped(pte) }),
            PteState::Sparse => Ok(PageTranslation { page_va, page_size: size, leaf: Leaf::Sparse }),
            PteState::Invalid | PteState::UnmappedBig | PteState::MappingNowhere => {
                Err(refuse(FaultKind::InvalidPte, FaultType::Pte))
            }
        }
    };
    let pte = |raw: u64| format.pte(raw).map_err(|_| malformed(FaultType::Pte));

    let mut table = pdb;
    for level in format.directories() {
        let raw = read(table, level.entry_offset(va), FaultType::Pde)?;
        match format.pde(raw).map_err(|_| malformed(FaultType::Pde))? {
            // A PTE where the level holds none is a malformed directory.
            format::Pde::IsPte => return leaf(pte(raw)?, level.pte.ok_or(malformed(FaultType::Pde))?),
            format::Pde::Invalid => return Err(refuse(FaultKind::InvalidPde, FaultType::Pde)),
            format::Pde::Table(next) => table = next,
        }
    }
    let [pd0, big_level, small_level] = format.lower_levels();
    let offset = pd0.entry_offset(va);
    let low = read(table, offset, FaultType::Pde)?;
    if format.is_pte(low) {
        return leaf(pte(low)?, PageSize::Size2M);
    }
    let high = read(table, offset + 8, FaultType::Pde)?;
    let dual = format.dual_pde([low, high]).map_err(|_| malformed(FaultType::Pde))?;
    if dual.big.is_none() && dual.small.is_none() {
        return Err(refuse(FaultKind::InvalidPde, FaultType::Pde));
    }
    if let Some(big) = dual.big {
        match pte(read(big, big_level.entry_offset(va), FaultType::Pte)?)? {
            // Plainly invalid: the 4K PTE beneath decides.
            PteState::Invalid => {}
            other => return leaf(other, PageSize::Size64K),
        }
    }
    let Some(small) = dual.small else {
        return Err(refuse(FaultKind::InvalidPte, FaultType::Pte));
    };
    leaf(pte(read(small, small_level.entry_offset(va), FaultType::Pte)?)?, PageSize::Size4K)
}

/// Whether `client` may make access `access` to the page `t`.
fn check(t: &PageTranslation, access: AccessType, client: &MmuClient) -> Result<(), Refusal> {
    let Leaf::Mapped(pte) = t.leaf else { return Ok(()) };
    if pte.attrs.privileged && !client.privileged {
        return Err(refuse(FaultKind::PrivilegeViolation, FaultType::PrivViolation));
    }
    match access {
        AccessType::Read | AccessType::Prefetch => Ok(()),
        AccessType::Write if pte.attrs.read_only => Err(refuse(FaultKind::ReadOnlyViolation, FaultType::RoViolation)),
        AccessType::Atomic if pte.attrs.read_only => Err(refuse(FaultKind::ReadOnlyViolation, FaultType::RoViolation)),
        AccessType::Atomic if pte.attrs.atomic_disable => {
            Err(refuse(FaultKind::AtomicViolation, FaultType::AtomicViolation))
        }
        AccessType::Write | AccessType::Atomic => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// The fault log.

/// One fault, with what a fault-buffer packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmuFaultRecord {
    /// The faulting VA (the packet keeps bits 63:12).
    pub va: u64,
    /// The address space's root (the packet's instance pointer; the model has no instance
    /// blocks of its own here, so the PDB stands in for it).
    pub pdb: TableAddress,
    pub fault_type: FaultType,
    pub access_type: FaultAccessType,
    pub client: MmuClient,
    /// The model's fault clock: faults are numbered in the order they happened.
    pub timestamp: u64,
    /// The same fault as the engines see it.
    pub kind: FaultKind,
    pub access: AccessType,
}

impl MmuFaultRecord {
    /// The 32-byte packet (`NVC369_BUF_ENTRY_*`), `VALID` set, not replayable.
    pub fn to_packet(&self) -> [u8; NVC369_BUF_SIZE] {
        use fault::*;
        let mut e = [0u8; NVC369_BUF_SIZE];
        let aperture = match self.pdb.aperture {
            TableAperture::Video => NVC369_BUF_ENTRY_INST_APERTURE_VID_MEM,
            TableAperture::SystemCoherent => NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_COHERENT,
            TableAperture::SystemNonCoherent => NVC369_BUF_ENTRY_INST_APERTURE_SYS_MEM_NONCOHERENT,
        };
        NVC369_BUF_ENTRY_INST_APERTURE.set(&mut e, aperture.into());
        NVC369_BUF_ENTRY_INST.set(&mut e, self.pdb.address >> 12);
        NVC369_BUF_ENTRY_ADDR.set(&mut e, self.va >> 12);
        NVC369_BUF_ENTRY_TIMESTAMP.set(&mut e, self.timestamp);
        NVC369_BUF_ENTRY_ENGINE_ID.set(&mut e, self.client.engine_id.into());
        NVC369_BUF_ENTRY_FAULT_TYPE.set(&mut e, self.fault_type as u64);
        NVC369_BUF_ENTRY_CLIENT.set(&mut e, self.client.client_id.into());
        NVC369_BUF_ENTRY_ACCESS_TYPE.set(&mut e, self.access_type as u64);
        NVC369_BUF_ENTRY_MMU_CLIENT_TYPE.set(&mut e, self.client.client_type as u64);
        NVC369_BUF_ENTRY_GPC_ID.set(&mut e, self.client.gpc_id.into());
        NVC369_BUF_ENTRY_VALID.set(&mut e, NVC369_BUF_ENTRY_VALID_TRUE.into());
        e
    }
}

/// Every fault the MMU took, oldest first (at most [`FAULT_LOG_CAPACITY`]).
#[derive(Default)]
pub struct FaultLog {
    entries: Vec<MmuFaultRecord>,
    dropped: u64,
    clock: u64,
}

impl FaultLog {
    fn record(&mut self, mut record: MmuFaultRecord) {
        record.timestamp = self.clock;
        self.clock += 1;
        if self.entries.len() < FAULT_LOG_CAPACITY {
            self.entries.push(record);
        } else {
            self.dropped += 1;
        }
    }

    pub fn entries(&self) -> &[MmuFaultRecord] {
        &self.entries
    }

    /// Faults not kept because the log was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Takes the entries out.
    pub fn take(&mut self) -> Vec<MmuFaultRecord> {
        core::mem::take(&mut self.entries)
    }
}

/// The packet's `ACCESS_TYPE` of an engine's virtual access.
pub(crate) fn fault_access_type(access: AccessType) -> FaultAccessType {
    match access {
        AccessType::Read => FaultAccessType::VirtRead,
        AccessType::Write => FaultAccessType::VirtWrite,
        AccessType::Atomic => FaultAccessType::VirtAtomicStrong,
        AccessType::Prefetch => FaultAccessType::VirtPrefetch,
    }
}

// ---------------------------------------------------------------------------------------------
// An address space.

/// One VA space as an engine sees it: the root, the chip's format, memory, the TLB and the
/// fault log. Implements [`VirtualMemory`].
pub struct AddressSpace<'a> {
    pub pdb: TableAddress,
    pub format: GmmuFormat,
    pub mem: Memories<'a>,
    pub tlb: &'a mut Tlb,
    pub faults: &'a mut FaultLog,
    pub client: MmuClient,
}

impl AddressSpace<'_> {
    /// Translates `va` for `access`: the physical address, or `None` for a sparse page. A fault
    /// is recorded in the log.
    pub fn translate(&mut self, va: u64, access: AccessType) -> Result<Option<PhysAddr>, MmuFault> {
        let t = self.page(va, access)?;
        Ok(t.phys(va))
    }

    fn page(&mut self, va: u64, access: AccessType) -> Result<PageTranslation, MmuFault> {
        let result = match self.tlb.lookup(self.pdb, va) {
            Some(t) => Ok(t),
            None => walk(self.format, &self.mem, self.pdb, va).inspect(|t| self.tlb.insert(self.pdb, va, *t)),
        };
        match result.and_then(|t| check(&t, access, &self.client).map(|()| t)) {
            Ok(t) => Ok(t),
            Err(r) => Err(self.fault(va, access, r)),
        }
    }

    fn fault(&mut self, va: u64, access: AccessType, r: Refusal) -> MmuFault {
        self.faults.record(MmuFaultRecord {
            va,
            pdb: self.pdb,
            fault_type: r.fault_type,
            access_type: fault_access_type(access),
            client: self.client,
            timestamp: 0,
            kind: r.kind,
            access,
        });
        MmuFault { va, access, kind: r.kind }
    }

    /// Runs `f` on each piece of `[va, va + len)` that stays within one 4 KiB page.
    fn pieces(
        &mut self,
        va: u64,
        len: usize,
        access: AccessType,
        mut f: impl FnMut(&mut Memories<'_>, Option<PhysAddr>, core::ops::Range<usize>) -> bool,
    ) -> Result<(), MmuFault> {
        let mut done = 0usize;
        while done < len {
            let at = va.checked_add(done as u64).ok_or(MmuFault { va, access, kind: FaultKind::VaLimitViolation })?;
            let n = ((SMALL_PAGE - at % SMALL_PAGE) as usize).min(len - done);
            let phys = self.translate(at, access)?;
            if !f(&mut self.mem, phys, done..done + n) {
                // The PTE points at memory that is not there (past VRAM, an unreachable bus
                // address, a peer).
                return Err(self.fault(
                    at,
                    access,
                    refuse(FaultKind::VaLimitViolation, FaultType::UnsupportedAperture),
                ));
            }
            done += n;
        }
        Ok(())
    }
}

impl VirtualMemory for AddressSpace<'_> {
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MmuFault> {
        self.pieces(va, buf.len(), AccessType::Read, |mem, phys, r| match phys {
            Some(p) => mem.read_phys(p, &mut buf[r]),
            None => {
                buf[r].fill(0);
                true
            }
        })
    }

    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MmuFault> {
        self.pieces(va, data.len(), AccessType::Write, |mem, phys, r| match phys {
            Some(p) => mem.write_phys(p, &data[r]),
            None => true,
        })
    }

    fn atomic(&mut self, va: u64, buf: &mut [u8], op: &mut dyn FnMut(&[u8], &mut [u8])) -> Result<(), MmuFault> {
        let n = buf.len().min(16);
        // Atomics are naturally aligned, so they never cross a page.
        let phys = self.translate(va, AccessType::Atomic)?;
        let mut old = [0u8; 16];
        let mut new = [0u8; 16];
        let Some(p) = phys else {
            buf[..n].fill(0);
            return Ok(());
        };
        let ok = self.mem.read_phys(p, &mut old[..n]) && {
            op(&old[..n], &mut new[..n]);
            self.mem.write_phys(p, &new[..n])
        };
        if !ok {
            return Err(self.fault(
                va,
                AccessType::Atomic,
                refuse(FaultKind::VaLimitViolation, FaultType::UnsupportedAperture),
            ));
        }
        buf[..n].copy_from_slice(&old[..n]);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The memory system's registers.

/// VRAM, TLB, fault log and the BAR0 registers of the memory system, as `ModelGpu` holds them.
///
/// | register | behaviour |
/// |---|---|
/// | `NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE_PDB`, `_UPPER_PDB` (VF+0x30A0/4) | storage |
/// | `NV_VIRTUAL_FUNCTION_PRIV_MMU_INVALIDATE` (VF+0x30B0) | a write with `TRIGGER` drops the TLB entries of the PDB (or of all PDBs with `ALL_PDB`) at once; `TRIGGER` then reads 0. `ALL_VA`=0 and `HUBTLB_ONLY` invalidate the whole PDB too (more than asked, never less); replay/cancel fields are not modelled |
/// | `NV_PBUS_BAR0_WINDOW` (Turing..Ada), `NV_XAL_EP_BAR0_WINDOW` (Hopper) | storage; places PRAMIN |
/// | `NV_PRAMIN` (0x700000..=0x7FFFFF) | 32-bit access to VRAM (or, pre-Hopper, system memory by `TARGET`) at base + offset |
pub struct MemorySystem {
    pub vram: Vram,
    pub tlb: Tlb,
    pub faults: FaultLog,
    window: Option<WindowRegister>,
    window_raw: u32,
    invalidate_pdb: u32,
    invalidate_upper_pdb: u32,
    invalidate: u32,
}

/// An access the memory system claimed but had nothing behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NothingThere;

impl MemorySystem {
    pub fn new(family: Family, vram_bytes: u64) -> Self {
        MemorySystem {
            vram: Vram::new(vram_bytes),
            tlb: Tlb::new(),
            faults: FaultLog::default(),
            // `NV_PBUS_BAR0_WINDOW` up to Ada, `NV_XAL_EP_BAR0_WINDOW` on Hopper
            // (`kern_bus_gh100.c`), none on Blackwell, for which 535 has no source.
            window: silicon::of(family).pramin_window,
            window_raw: 0,
            invalidate_pdb: 0,
            invalidate_upper_pdb: 0,
            invalidate: 0,
        }
    }

    /// Whether `offset` is one of this unit's registers.
    pub fn claims(&self, offset: u32) -> bool {
        NV_PRAMIN.contains(offset)
            || self.window.is_some_and(|w| w.offset() == offset)
            || offset == INVALIDATE_PDB::address(VF_BASE)
            || offset == INVALIDATE_UPPER_PDB::address(VF_BASE)
            || offset == INVALIDATE::address(VF_BASE)
    }

    /// The PRAMIN window's base and target.
    pub fn pramin_window(&self) -> Option<PhysAddr> {
        let window = self.window?;
        let (base, aperture) = match window {
            WindowRegister::Pbus => {
                let r = NV_PBUS_BAR0_WINDOW::from_raw(self.window_raw);
                let aperture = match r.target() {
                    Ok(Bar0WindowTarget::VidMem) => PhysAperture::Video,
                    Ok(Bar0WindowTarget::SysMemCoherent) => PhysAperture::SystemCoherent,
                    Ok(Bar0WindowTarget::SysMemNoncoherent) => PhysAperture::SystemNonCoherent,
                    Err(_) => return None,
                };
                (r.base(), aperture)
            }
            WindowRegister::XalEp => (NV_XAL_EP_BAR0_WINDOW::from_raw(self.window_raw).base(), PhysAperture::Video),
        };
        Some(PhysAddr { aperture, addr: u64::from(base) << NV_PBUS_BAR0_WINDOW_BASE_SHIFT })
    }

    /// A BAR0 access at `offset` (which [`Self::claims`]).
    pub fn access(
        &mut self,
        offset: u32,
        write: Option<u32>,
        sysmem: Option<&dyn SystemMemory>,
    ) -> Result<u32, NothingThere> {
        if NV_PRAMIN.contains(offset) {
            let base = self.pramin_window().ok_or(NothingThere)?;
            let at = PhysAddr { addr: base.addr + u64::from(offset - NV_PRAMIN.first), ..base };
            let mut mem = Memories { vram: &mut self.vram, sysmem };
            return match write {
                Some(value) => mem.write_phys(at, &value.to_le_bytes()).then_some(0).ok_or(NothingThere),
                None => {
                    let mut b = [0u8; 4];
                    mem.read_phys(at, &mut b).then_some(u32::from_le_bytes(b)).ok_or(NothingThere)
                }
            };
        }
        if self.window.is_some_and(|w| w.offset() == offset) {
            if let Some(value) = write {
                self.window_raw = value;
            }
            return Ok(self.window_raw);
        }
        let slot = match offset {
            o if o == INVALIDATE_PDB::address(VF_BASE) => &mut self.invalidate_pdb,
            o if o == INVALIDATE_UPPER_PDB::address(VF_BASE) => &mut self.invalidate_upper_pdb,
            o if o == INVALIDATE::address(VF_BASE) => {
                if let Some(value) = write {
                    self.run_invalidate(INVALIDATE::from_raw(value));
                }
                return Ok(self.invalidate);
            }
            _ => return Err(NothingThere),
        };
        if let Some(value) = write {
            *slot = value;
        }
        Ok(*slot)
    }

    fn run_invalidate(&mut self, command: INVALIDATE) {
        // The model finishes the invalidate inside the write: TRIGGER reads back clear.
        self.invalidate = command.with(INVALIDATE::TRIGGER, false).raw();
        if !command.trigger() {
            return;
        }
        if command.all_pdb() {
            self.tlb.invalidate_all();
            return;
        }
        let low = INVALIDATE_PDB::from_raw(self.invalidate_pdb);
        let upper = INVALIDATE_UPPER_PDB::from_raw(self.invalidate_upper_pdb);
        let address =
            ((u64::from(upper.addr()) << INVALIDATE_PDB::ADDR.bits.width()) | u64::from(low.addr())) << PDB_SHIFT;
        match low.aperture() {
            Ok(InvalidatePdbAperture::VidMem) => {
                self.tlb.invalidate_pdb(TableAddress { aperture: TableAperture::Video, address })
            }
            // The register cannot tell coherent from non-coherent system memory.
            Ok(InvalidatePdbAperture::SysMem) | Err(_) => {
                self.tlb.invalidate_matching(|p| p.aperture != TableAperture::Video && p.address == address);
            }
        }
    }

    /// The address space rooted at `pdb`, as `client` reaches it.
    pub fn address_space<'a>(
        &'a mut self,
        format: GmmuFormat,
        pdb: TableAddress,
        client: MmuClient,
        sysmem: Option<&'a dyn SystemMemory>,
    ) -> AddressSpace<'a> {
        AddressSpace {
            pdb,
            format,
            mem: Memories { vram: &mut self.vram, sysmem },
            tlb: &mut self.tlb,
            faults: &mut self.faults,
            client,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nvgpu::mm::{self as driver, DualPde, MmuFormat};

    fn put(vram: &mut Vram, at: u64, word: u64) {
        assert!(vram.write(at, &word.to_le_bytes()));
    }

    /// Hand-built v2 tables in VRAM: PD3@0x1000 -> PD2@0x2000 -> PD1@0x3000 -> PD0@0x4000,
    /// dual PDE 0 -> small PT@0x5000 and big PT@0x6000.
    /// The driver's encoders write the tables; the model's decoders read them.
    fn tables(format: MmuFormat) -> MemorySystem {
        let mut ms = MemorySystem::new(Family::Turing, 64 << 20);
        let vid = |address| Some(driver::TableAddress { aperture: driver::TableAperture::Video, address });
        let v = &mut ms.vram;
        put(v, 0x1000, format.encode_pde(vid(0x2000)).unwrap());
        put(v, 0x2000, format.encode_pde(vid(0x3000)).unwrap());
        put(v, 0x3000, format.encode_pde(vid(0x4000)).unwrap());
        let dual = format.encode_dual_pde(DualPde { big: vid(0x6000), small: vid(0x5000) }).unwrap();
        put(v, 0x4000, dual[0]);
        put(v, 0x4008, dual[1]);
        let pte = |address, attrs| {
            format.encode_pte(&driver::Pte { aperture: driver::Aperture::Video, address, attrs }).unwrap()
        };
        // 4K page 1 -> 0x10_0000 read-only; 64K page 1 -> 0x20_0000 (hides nothing: valid).
        put(v, 0x5008, pte(0x10_0000, driver::PteAttrs { read_only: true, ..Default::default() }));
        put(v, 0x6008, pte(0x20_0000, driver::PteAttrs::default()));
        // 4K page 0 -> 0x30_0000, big PTE 0 plainly invalid.
        put(v, 0x5000, pte(0x30_0000, driver::PteAttrs { atomic_disable: true, ..Default::default() }));
        ms
    }

    #[test]
    fn walks_dual_pdes_and_enforces_attributes() {
        let mut ms = tables(MmuFormat::VER2);
        let pdb = TableAddress { aperture: TableAperture::Video, address: 0x1000 };
        let mut space = ms.address_space(GmmuFormat::Ver2, pdb, MmuClient::copy_engine(Family::Turing, 0), None);
        let vid = |addr| Some(PhysAddr { aperture: PhysAperture::Video, addr });
        assert_eq!(space.translate(0x123, AccessType::Read).unwrap(), vid(0x30_0123));
        // VA 0x1_0000..0x2_0000 is the second big page: the valid big PTE wins over 4K PTE 16.
        assert_eq!(space.translate(0x1_0042, AccessType::Write).unwrap(), vid(0x20_0042));
        // 4K page 1 sits under big page 0 (invalid): the 4K PTE decides.
        assert_eq!(space.translate(0x1008, AccessType::Read).unwrap(), vid(0x10_0008));
        let e = space.translate(0x1008, AccessType::Write).unwrap_err();
        assert_eq!(e.kind, FaultKind::ReadOnlyViolation);
        let e = space.atomic(0x10, &mut [0; 4], &mut |_, _| {}).unwrap_err();
        assert_eq!(e.kind, FaultKind::AtomicViolation);
        assert_eq!(space.translate(0x2000, AccessType::Read).unwrap_err().kind, FaultKind::InvalidPte);
        assert_eq!(space.translate(0x20_0000, AccessType::Read).unwrap_err().kind, FaultKind::InvalidPde);
        assert_eq!(space.translate(1 << 49, AccessType::Read).unwrap_err().kind, FaultKind::VaLimitViolation);
        let log = ms.faults.entries();
        assert_eq!(log.len(), 5);
        assert_eq!(log[0].fault_type, FaultType::RoViolation);
        assert_eq!(log[1].fault_type, FaultType::AtomicViolation);
        assert_eq!(log[1].access_type, FaultAccessType::VirtAtomicStrong);
        assert_eq!(log[4].timestamp, 4);
    }

    #[test]
    fn the_tlb_is_stale_until_invalidated_through_the_registers() {
        let format = MmuFormat::VER2;
        let mut ms = tables(format);
        let pdb = TableAddress { aperture: TableAperture::Video, address: 0x1000 };
        let client = MmuClient::host(Family::Turing);
        let t = |ms: &mut MemorySystem| {
            ms.address_space(GmmuFormat::Ver2, pdb, client, None).translate(0x5, AccessType::Read)
        };
        assert_eq!(t(&mut ms).unwrap().unwrap().addr, 0x30_0005);
        // Remap 4K page 0 without invalidating.
        let pte = format.encode_pte(&driver::Pte {
            aperture: driver::Aperture::Video,
            address: 0x40_0000,
            attrs: driver::PteAttrs::default(),
        });
        put(&mut ms.vram, 0x5000, pte.unwrap());
        assert_eq!(t(&mut ms).unwrap().unwrap().addr, 0x30_0005, "stale until invalidated");
        // Invalidate another PDB: still stale.
        ms.access(INVALIDATE_PDB::address(VF_BASE), Some(0x2 << 4), None).unwrap();
        ms.access(INVALIDATE::address(VF_BASE), Some(0x8000_0001), None).unwrap();
        assert_eq!(t(&mut ms).unwrap().unwrap().addr, 0x30_0005);
        // This PDB.
        ms.access(INVALIDATE_PDB::address(VF_BASE), Some(0x1 << 4), None).unwrap();
        ms.access(INVALIDATE::address(VF_BASE), Some(0x8000_0001), None).unwrap();
        assert_eq!(ms.access(INVALIDATE::address(VF_BASE), None, None).unwrap() >> 31, 0, "TRIGGER self-clears");
        assert_eq!(t(&mut ms).unwrap().unwrap().addr, 0x40_0005);
    }

    /// A driver that puts a field in the wrong place is caught by the walk: the access faults and
    /// the fault is logged, instead of the model agreeing with the driver's decoder.
    #[test]
    fn misplaced_fields_fault() {
        let pdb = TableAddress::video(0x1000);
        let client = MmuClient::host(Family::Turing);
        let read = |ms: &mut MemorySystem| {
            ms.address_space(GmmuFormat::Ver2, pdb, client, None).translate(0x123, AccessType::Read)
        };
        let mut ms = tables(MmuFormat::VER2);
        assert!(read(&mut ms).is_ok());
        // PD2's entry with its aperture at bits 4:3: the model sees an invalid PDE.
        let mut b = [0u8; 8];
        assert!(ms.vram.read(0x2000, &mut b));
        let right = u64::from_le_bytes(b);
        put(&mut ms.vram, 0x2000, (right & !0b110) | ((right >> 1) & 3) << 3);
        ms.tlb.invalidate_all();
        assert_eq!(read(&mut ms).unwrap_err().kind, FaultKind::InvalidPde);
        // A video PDE with address bits above the video field: a malformed table.
        let mut ms = tables(MmuFormat::VER2);
        put(&mut ms.vram, 0x2000, right | 1 << 45);
        assert_eq!(read(&mut ms).unwrap_err().kind, FaultKind::BadPageTable);
        // A PTE where PD2 holds none (PD2 maps no pages in either version).
        let mut ms = tables(MmuFormat::VER2);
        put(&mut ms.vram, 0x2000, right | 1);
        assert_eq!(read(&mut ms).unwrap_err().kind, FaultKind::BadPageTable);
        // A system-memory PTE whose aperture went into the wrong bits reads as video memory at
        // a bus address past VRAM's end: the access faults instead of landing somewhere.
        let mut ms = tables(MmuFormat::VER2);
        let sys = MmuFormat::VER2
            .encode_pte(&driver::Pte {
                aperture: driver::Aperture::SystemCoherent,
                address: 0x8000_0000,
                attrs: driver::PteAttrs::default(),
            })
            .unwrap();
        put(&mut ms.vram, 0x5000, (sys & !0b110) | ((sys >> 1) & 3) << 3);
        ms.tlb.invalidate_all();
        let mut space = ms.address_space(GmmuFormat::Ver2, pdb, client, None);
        assert_eq!(space.read(0x123, &mut [0; 4]).unwrap_err().kind, FaultKind::VaLimitViolation);
        assert_eq!(ms.faults.entries().last().map(|f| f.fault_type), Some(FaultType::UnsupportedAperture));
        assert_eq!(ms.faults.entries().len(), 1);
    }

    #[test]
    fn corrupt_tables_fault_instead_of_panicking() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for format in [GmmuFormat::Ver2, GmmuFormat::Ver2Pages512M, GmmuFormat::Ver3] {
            let mut ms = MemorySystem::new(Family::Turing, 1 << 20);
            for i in 0..(1 << 20) / 8 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                put(&mut ms.vram, i * 8, x);
            }
            let pdb = TableAddress { aperture: TableAperture::Video, address: 0 };
            let mut space = ms.address_space(format, pdb, MmuClient::host(Family::Turing), None);
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let _ = space.read(x >> 15, &mut [0u8; 16]);
                let _ = space.write(x >> 16, &[1u8; 8]);
            }
        }
    }
}
