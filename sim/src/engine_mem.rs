//! How the model's engines (host, copy engine, compute) reach memory: by GPU virtual address
//! through the MMU and the page tables the driver wrote, or by physical address in an aperture
//! (the copy engine's physical mode, the host's USERD and instance blocks).
//!
//! The MMU ([`crate::mmu`]) implements [`VirtualMemory`] for one VA space; engines are written
//! against the trait, so unit tests can give them plain memory and integration tests the real
//! MMU over the driver's tables.

use core::fmt;

/// Where a physical address points (the apertures of `NV_MMU_VER2_PTE_APERTURE` /
/// `NV_MMU_VER3_PTE_APERTURE`, `dev_mmu.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhysAperture {
    /// The GPU's own framebuffer.
    Video,
    /// System memory, snooped (coherent).
    SystemCoherent,
    /// System memory, not snooped.
    SystemNonCoherent,
    /// Another GPU's framebuffer through NVLink or PCIe (peer index).
    Peer(u8),
}

/// A physical address in an aperture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PhysAddr {
    pub aperture: PhysAperture,
    pub addr: u64,
}

/// The kind of access that faulted (`NV_PFAULT_ACCESS_TYPE_*`, `dev_fault.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessType {
    Read,
    Write,
    /// Atomic read-modify-write.
    Atomic,
    Prefetch,
}

/// Why an access faulted (`NV_PFAULT_FAULT_TYPE_*`, `dev_fault.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// No valid PDE on the walk (`FAULT_PDE`).
    InvalidPde,
    /// No valid PTE (`FAULT_PTE`).
    InvalidPte,
    /// A write to a read-only page (`FAULT_RO_VIOLATION`).
    ReadOnlyViolation,
    /// An atomic on a page that forbids atomics (`FAULT_ATOMIC_VIOLATION`).
    AtomicViolation,
    /// A privileged page accessed by an unprivileged engine (`FAULT_PRIV_VIOLATION`).
    PrivilegeViolation,
    /// The PTE names memory that does not exist, or the VA is out of the format's range
    /// (`FAULT_UNBOUND_INST_BLOCK` / `FAULT_VA_LIMIT_VIOLATION` style errors).
    VaLimitViolation,
    /// The page tables themselves could not be read (bad PDE target, corrupt entry).
    BadPageTable,
}

/// A translation fault: what the MMU reports (and the driver later sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MmuFault {
    pub va: u64,
    pub access: AccessType,
    pub kind: FaultKind,
}

impl fmt::Display for MmuFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MMU fault {:?} on {:?} at VA {:#x}", self.kind, self.access, self.va)
    }
}

/// Memory by GPU virtual address, for one VA space.
pub trait VirtualMemory {
    /// Fills `buf` from `va`; the first faulting byte's page stops the access.
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MmuFault>;
    /// Writes `data` at `va`; a fault leaves the bytes before the faulting page written.
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MmuFault>;
    /// Checks, with no side effect, that a `write` of `len` bytes at `va` would not fault part
    /// way: engines that must leave no partial effect of a faulting access (the compute engine's
    /// replayable faults) call it before `write`. The default accepts everything, which is right
    /// for memories whose `write` checks the whole range before writing (as [`FlatMemory`]
    /// does) and for accesses inside one page (every naturally aligned access of at most 4 KiB);
    /// a memory whose `write` may fault after writing some bytes of one access should override
    /// it and report the fault `write` would report.
    fn probe_write(&mut self, va: u64, len: usize) -> Result<(), MmuFault> {
        let _ = (va, len);
        Ok(())
    }
    /// An atomic read-modify-write of `buf.len()` bytes (4 or 8) at `va`: `op` gets the old value
    /// and returns the new one, which is written; returns the old value's bytes in `buf`.
    fn atomic(&mut self, va: u64, buf: &mut [u8], op: &mut dyn FnMut(&[u8], &mut [u8])) -> Result<(), MmuFault> {
        let mut old = [0u8; 16];
        let n = buf.len().min(16);
        self.read(va, &mut old[..n]).map_err(|f| MmuFault { access: AccessType::Atomic, ..f })?;
        let mut new = [0u8; 16];
        op(&old[..n], &mut new[..n]);
        self.write(va, &new[..n]).map_err(|f| MmuFault { access: AccessType::Atomic, ..f })?;
        buf[..n].copy_from_slice(&old[..n]);
        Ok(())
    }
}

/// Memory by physical address.
pub trait PhysicalMemory {
    /// Fills `buf` from `at`; `false` when any byte is not backed.
    fn read_phys(&mut self, at: PhysAddr, buf: &mut [u8]) -> bool;
    /// Writes `data` at `at`; `false` (nothing written) when any byte is not backed.
    fn write_phys(&mut self, at: PhysAddr, data: &[u8]) -> bool;
}

/// A flat, identity-mapped memory for engine unit tests: VA = offset into `bytes`, every access
/// out of range faults as an invalid PTE.
pub struct FlatMemory {
    pub base: u64,
    pub bytes: alloc::vec::Vec<u8>,
}

impl FlatMemory {
    pub fn new(base: u64, len: usize) -> Self {
        FlatMemory { base, bytes: alloc::vec![0; len] }
    }

    fn range(&self, va: u64, len: usize, access: AccessType) -> Result<core::ops::Range<usize>, MmuFault> {
        let fault = MmuFault { va, access, kind: FaultKind::InvalidPte };
        let start = va.checked_sub(self.base).ok_or(fault)? as usize;
        let end = start.checked_add(len).ok_or(fault)?;
        if end > self.bytes.len() {
            let first_bad = self.base + self.bytes.len().max(start) as u64;
            return Err(MmuFault { va: first_bad, ..fault });
        }
        Ok(start..end)
    }
}

impl VirtualMemory for FlatMemory {
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), MmuFault> {
        let r = self.range(va, buf.len(), AccessType::Read)?;
        buf.copy_from_slice(&self.bytes[r]);
        Ok(())
    }
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MmuFault> {
        let r = self.range(va, data.len(), AccessType::Write)?;
        self.bytes[r].copy_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_memory_faults_outside_its_range() {
        let mut m = FlatMemory::new(0x1000, 0x100);
        m.write(0x1010, &[1, 2, 3]).unwrap();
        let mut b = [0; 3];
        m.read(0x1010, &mut b).unwrap();
        assert_eq!(b, [1, 2, 3]);
        let e = m.read(0x10FF, &mut [0; 2]).unwrap_err();
        assert_eq!(e.kind, FaultKind::InvalidPte);
        assert!(m.write(0xFFF, &[0]).is_err());
        let mut old = [0u8; 4];
        m.atomic(0x1010, &mut old, &mut |o, n| {
            let v = u32::from_le_bytes([o[0], o[1], o[2], o[3]]) + 5;
            n.copy_from_slice(&v.to_le_bytes());
        })
        .unwrap();
        assert_eq!(u32::from_le_bytes(old), 0x0003_0201);
        m.read(0x1010, &mut old).unwrap();
        assert_eq!(u32::from_le_bytes(old), 0x0003_0206);
    }
}
