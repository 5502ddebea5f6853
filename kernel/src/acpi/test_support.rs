//! Host stand-ins for physical memory and builders for synthetic ACPI structures, so the same
//! `parse_platform` the kernel runs can be run over host buffers.

// Tests index and compute offsets on purpose, over inputs they build themselves.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::sync::mpsc;
use std::time::Duration;
use std::vec;
use std::vec::Vec;

use super::bytes::checksum;
use super::PhysMapper;

/// Fake physical memory: buffers placed at chosen physical addresses. Reads must fall wholly
/// inside one buffer; anything else is "not mapped".
#[derive(Default, Clone)]
pub struct HostMemory {
    regions: Vec<(u64, Vec<u8>)>,
}

impl HostMemory {
    pub fn new() -> HostMemory {
        HostMemory::default()
    }

    /// Places `bytes` at `phys`. Panics (test bug) when it overlaps a buffer already placed.
    pub fn place(&mut self, phys: u64, bytes: Vec<u8>) -> &mut HostMemory {
        let end = phys + bytes.len() as u64;
        for (start, existing) in &self.regions {
            let existing_end = start + existing.len() as u64;
            assert!(end <= *start || phys >= existing_end, "test bug: region at {phys:#x} overlaps {start:#x}");
        }
        self.regions.push((phys, bytes));
        self
    }

    /// The buffer placed at exactly `phys`, to corrupt in tests.
    pub fn region_mut(&mut self, phys: u64) -> &mut Vec<u8> {
        &mut self.regions.iter_mut().find(|(start, _)| *start == phys).expect("test bug: no region there").1
    }
}

impl PhysMapper for HostMemory {
    fn map(&self, phys: u64, len: usize) -> Option<&[u8]> {
        self.regions.iter().find_map(|(start, bytes)| {
            let offset = usize::try_from(phys.checked_sub(*start)?).ok()?;
            bytes.get(offset..offset.checked_add(len)?)
        })
    }
}

/// Sets byte `checksum_offset` so that `bytes[range]` sums to zero.
pub fn fix_checksum(bytes: &mut [u8], checksum_offset: usize, covered: usize) {
    bytes[checksum_offset] = 0;
    let sum = checksum(&bytes[..covered]);
    bytes[checksum_offset] = 0u8.wrapping_sub(sum);
}

/// A table with a valid header (length and checksum filled in) around `body`.
pub fn sdt(signature: &[u8; 4], revision: u8, body: &[u8]) -> Vec<u8> {
    let mut table = Vec::with_capacity(36 + body.len());
    table.extend_from_slice(signature);
    table.extend_from_slice(&((36 + body.len()) as u32).to_le_bytes());
    table.push(revision);
    table.push(0); // checksum, below
    table.extend_from_slice(b"TESTOE");
    table.extend_from_slice(b"TESTTABL");
    table.extend_from_slice(&1u32.to_le_bytes());
    table.extend_from_slice(b"TEST");
    table.extend_from_slice(&1u32.to_le_bytes());
    table.extend_from_slice(body);
    let len = table.len();
    fix_checksum(&mut table, 9, len);
    table
}

/// Recomputes the header checksum of a whole table after a test edited it.
pub fn refix_sdt_checksum(table: &mut [u8]) {
    let len = table.len();
    fix_checksum(table, 9, len);
}

/// An XSDT listing `pointers`.
pub fn xsdt(pointers: &[u64]) -> Vec<u8> {
    let body: Vec<u8> = pointers.iter().flat_map(|p| p.to_le_bytes()).collect();
    sdt(b"XSDT", 1, &body)
}

/// An RSDT listing `pointers`.
pub fn rsdt(pointers: &[u32]) -> Vec<u8> {
    let body: Vec<u8> = pointers.iter().flat_map(|p| p.to_le_bytes()).collect();
    sdt(b"RSDT", 1, &body)
}

/// An ACPI 2.0+ RSDP (revision 2, 36 bytes) with both checksums valid.
pub fn rsdp_v2(rsdt: u32, xsdt: u64) -> Vec<u8> {
    let mut rsdp = Vec::with_capacity(36);
    rsdp.extend_from_slice(b"RSD PTR ");
    rsdp.push(0);
    rsdp.extend_from_slice(b"TESTOE");
    rsdp.push(2);
    rsdp.extend_from_slice(&rsdt.to_le_bytes());
    rsdp.extend_from_slice(&36u32.to_le_bytes());
    rsdp.extend_from_slice(&xsdt.to_le_bytes());
    rsdp.extend_from_slice(&[0, 0, 0, 0]);
    fix_checksum(&mut rsdp, 8, 20);
    fix_checksum(&mut rsdp, 32, 36);
    rsdp
}

/// An ACPI 1.0 RSDP (revision 0, 20 bytes).
pub fn rsdp_v1(rsdt: u32) -> Vec<u8> {
    let mut rsdp = Vec::with_capacity(20);
    rsdp.extend_from_slice(b"RSD PTR ");
    rsdp.push(0);
    rsdp.extend_from_slice(b"TESTOE");
    rsdp.push(0);
    rsdp.extend_from_slice(&rsdt.to_le_bytes());
    fix_checksum(&mut rsdp, 8, 20);
    rsdp
}

/// Runs `work` on another thread and fails the test if it takes longer than `limit`: a parser
/// that loops forever on bad input must show up as a failure, not a hung test run.
pub fn within<T: Send + 'static>(limit: Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    match receiver.recv_timeout(limit) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("still running after {limit:?}: the parser loops on this input")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the parser panicked on this input"),
    }
}

// MADT entry builders, field by field as ACPI 6.5 §5.2.12.x lays them out.
pub fn lapic(uid: u8, apic_id: u8, flags: u32) -> Vec<u8> {
    let mut e = vec![0x00, 8, uid, apic_id];
    e.extend_from_slice(&flags.to_le_bytes());
    e
}
pub fn io_apic(id: u8, address: u32, gsi_base: u32) -> Vec<u8> {
    let mut e = vec![0x01, 12, id, 0];
    e.extend_from_slice(&address.to_le_bytes());
    e.extend_from_slice(&gsi_base.to_le_bytes());
    e
}
pub fn iso(bus: u8, irq: u8, gsi: u32, flags: u16) -> Vec<u8> {
    let mut e = vec![0x02, 10, bus, irq];
    e.extend_from_slice(&gsi.to_le_bytes());
    e.extend_from_slice(&flags.to_le_bytes());
    e
}
pub fn nmi_source(flags: u16, gsi: u32) -> Vec<u8> {
    let mut e = vec![0x03, 8];
    e.extend_from_slice(&flags.to_le_bytes());
    e.extend_from_slice(&gsi.to_le_bytes());
    e
}
pub fn lapic_nmi(uid: u8, flags: u16, lint: u8) -> Vec<u8> {
    let mut e = vec![0x04, 6, uid];
    e.extend_from_slice(&flags.to_le_bytes());
    e.push(lint);
    e
}
pub fn lapic_address_override(address: u64) -> Vec<u8> {
    let mut e = vec![0x05, 12, 0, 0];
    e.extend_from_slice(&address.to_le_bytes());
    e
}
pub fn x2apic(apic_id: u32, flags: u32, uid: u32) -> Vec<u8> {
    let mut e = vec![0x09, 16, 0, 0];
    e.extend_from_slice(&apic_id.to_le_bytes());
    e.extend_from_slice(&flags.to_le_bytes());
    e.extend_from_slice(&uid.to_le_bytes());
    e
}
pub fn x2apic_nmi(flags: u16, uid: u32, lint: u8) -> Vec<u8> {
    let mut e = vec![0x0A, 12];
    e.extend_from_slice(&flags.to_le_bytes());
    e.extend_from_slice(&uid.to_le_bytes());
    e.extend_from_slice(&[lint, 0, 0, 0]);
    e
}
pub fn mp_wakeup(mailbox: u64) -> Vec<u8> {
    let mut e = vec![0x10, 16, 0, 0, 0, 0, 0, 0];
    e.extend_from_slice(&mailbox.to_le_bytes());
    e
}

pub fn madt(revision: u8, local_apic: u32, flags: u32, entries: &[Vec<u8>]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&local_apic.to_le_bytes());
    body.extend_from_slice(&flags.to_le_bytes());
    for e in entries {
        body.extend_from_slice(e);
    }
    sdt(b"APIC", revision, &body)
}

pub fn mcfg(entries: &[(u64, u16, u8, u8)]) -> Vec<u8> {
    let mut body = vec![0u8; 8];
    for &(base, segment, start, end) in entries {
        body.extend_from_slice(&base.to_le_bytes());
        body.extend_from_slice(&segment.to_le_bytes());
        body.extend_from_slice(&[start, end, 0, 0, 0, 0]);
    }
    sdt(b"MCFG", 1, &body)
}

pub fn hpet(block_id: u32, address_space: u8, address: u64, number: u8, min_tick: u16) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(&block_id.to_le_bytes());
    body.extend_from_slice(&[address_space, 64, 0, 0]);
    body.extend_from_slice(&address.to_le_bytes());
    body.push(number);
    body.extend_from_slice(&min_tick.to_le_bytes());
    body.push(0);
    sdt(b"HPET", 1, &body)
}
