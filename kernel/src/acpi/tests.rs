//! Host tests over synthetic tables: every MADT entry type the kernel reads, and every kind of
//! corruption named in the module docs (bad checksums, short and lying lengths, zero-length
//! entries, pointers past the end of memory), plus the BIOS-area RSDP scan.

// Tests index and compute offsets on purpose, over inputs they build themselves.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::string::String;
use std::time::Duration;
use std::vec;
use std::vec::Vec;

use super::test_support::{
    fix_checksum, hpet, io_apic, iso, lapic, lapic_address_override, lapic_nmi, madt, mcfg, mp_wakeup, nmi_source,
    refix_sdt_checksum, rsdp_v1, rsdp_v2, rsdt, sdt, within, x2apic, x2apic_nmi, xsdt, HostMemory,
};
use super::*;

const RSDP_AT: u64 = 0x1000;
const XSDT_AT: u64 = 0x2000;
const MADT_AT: u64 = 0x3000;
const MCFG_AT: u64 = 0x4000;
const HPET_AT: u64 = 0x5000;
const RSDT_AT: u64 = 0x6000;
const LIMIT: Duration = Duration::from_secs(10);

/// A small clean machine: 2 CPUs, one I/O APIC, the usual IRQ0 and IRQ9 overrides.
fn clean_madt() -> Vec<u8> {
    madt(
        3,
        0xFEE0_0000,
        1,
        &[
            lapic(0, 0, 1),
            lapic(1, 2, 1),
            io_apic(8, 0xFEC0_0000, 0),
            iso(0, 0, 2, 0),
            iso(0, 9, 9, 0b1101),
            lapic_nmi(0xFF, 0b0101, 1),
        ],
    )
}

fn machine(madt: Vec<u8>) -> HostMemory {
    let mut memory = HostMemory::new();
    memory
        .place(RSDP_AT, rsdp_v2(0, XSDT_AT))
        .place(XSDT_AT, xsdt(&[MADT_AT, MCFG_AT, HPET_AT]))
        .place(MADT_AT, madt)
        .place(MCFG_AT, mcfg(&[(0xE000_0000, 0, 0, 0xFF)]))
        .place(HPET_AT, hpet(0x8086_A701, 0, 0xFED0_0000, 0, 0x80));
    memory
}

fn parse(memory: HostMemory) -> Result<PlatformTables, AcpiError> {
    within(LIMIT, move || parse_platform(&memory, RSDP_AT))
}

fn parse_madt_bytes(bytes: Vec<u8>) -> (Result<MadtInfo, AcpiError>, Vec<String>) {
    within(LIMIT, move || {
        let mut warnings = Vec::new();
        let result = Table::from_bytes(MADT_AT, &bytes, madt::MADT_FIXED_LEN)
            .and_then(|table| MadtInfo::parse(&table, &mut warnings));
        (result, warnings)
    })
}

#[test]
fn clean_machine_parses_without_warnings() {
    let platform = parse(machine(clean_madt())).expect("clean tables parse");
    assert_eq!(platform.warnings, Vec::<String>::new());
    assert!(platform.rejected.is_empty());
    assert_eq!(platform.root, RootTable::Xsdt(XSDT_AT));
    let signatures: Vec<Signature> = platform.tables.iter().map(|t| t.signature).collect();
    assert_eq!(signatures, [Signature::MADT, Signature::MCFG, Signature::HPET]);

    let madt = platform.madt.as_ref().expect("MADT");
    assert_eq!(madt.local_apic_address, 0xFEE0_0000);
    assert!(madt.pcat_compat);
    assert_eq!(madt.cpus.len(), 2);
    assert_eq!(madt.cpus[1], Cpu { processor_uid: 1, apic_id: 2, enabled: true, online_capable: false, x2apic: false });
    assert_eq!(madt.io_apics, [IoApic { id: 8, address: 0xFEC0_0000, gsi_base: 0 }]);
    assert_eq!(
        madt.override_for_isa_irq(9),
        Some(&InterruptOverride {
            bus: 0,
            source_irq: 9,
            gsi: 9,
            polarity: Polarity::ActiveHigh,
            trigger: TriggerMode::Level
        })
    );
    assert_eq!(madt.override_for_isa_irq(0).map(|o| o.gsi), Some(2));
    assert_eq!(
        madt.local_apic_nmis,
        [LocalApicNmi {
            processor: NmiProcessor::All,
            lint: LocalInterrupt::Lint1,
            polarity: Polarity::ActiveHigh,
            trigger: TriggerMode::Edge,
            x2apic: false
        }]
    );

    assert_eq!(platform.mcfg, [McfgSegment { base_address: 0xE000_0000, segment: 0, bus_start: 0, bus_end: 0xFF }]);
    let hpet = platform.hpet.expect("HPET");
    assert_eq!(hpet.base_address, 0xFED0_0000);
    assert_eq!(hpet.comparators, 8);
    assert!(hpet.counter_64bit && hpet.legacy_replacement);
    assert_eq!((hpet.pci_vendor_id, hpet.hardware_rev, hpet.min_tick), (0x8086, 1, 0x80));
}

#[test]
fn every_x86_madt_entry_type() {
    let bytes = madt(
        5,
        0xFEE0_0000,
        0,
        &[
            lapic(1, 0, 0b01),
            lapic(2, 1, 0b10), // online capable (revision 5)
            lapic(3, 2, 0b00), // unusable
            x2apic(0x1_0000, 0b01, 0x400),
            io_apic(0, 0xFEC0_0000, 0),
            io_apic(1, 0xFEC0_1000, 24),
            iso(0, 0, 2, 0),
            nmi_source(0b1111, 30),
            lapic_nmi(1, 0, 0),
            x2apic_nmi(0b0101, 0xFFFF_FFFF, 1),
            x2apic_nmi(0, 0x400, 0),
            lapic_address_override(0x1_FEE0_0000),
            mp_wakeup(0x8000),
            vec![0x80, 4, 0xAA, 0xBB], // OEM type
            vec![0x0C, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], // GICD
        ],
    );
    let (result, warnings) = parse_madt_bytes(bytes);
    let madt = result.expect("MADT parses");
    assert_eq!(madt.revision, 5);
    assert_eq!(madt.local_apic_address, 0x1_FEE0_0000, "the 64-bit override replaces the header field");
    assert!(!madt.pcat_compat);
    assert_eq!(
        madt.cpus,
        [
            Cpu { processor_uid: 1, apic_id: 0, enabled: true, online_capable: false, x2apic: false },
            Cpu { processor_uid: 2, apic_id: 1, enabled: false, online_capable: true, x2apic: false },
            Cpu { processor_uid: 3, apic_id: 2, enabled: false, online_capable: false, x2apic: false },
            Cpu { processor_uid: 0x400, apic_id: 0x1_0000, enabled: true, online_capable: false, x2apic: true },
        ]
    );
    assert_eq!(madt.cpus.iter().filter(|c| c.usable()).count(), 3);
    assert_eq!(madt.enabled_cpus().count(), 2);
    assert_eq!(madt.io_apics.len(), 2);
    assert_eq!(madt.io_apics[1], IoApic { id: 1, address: 0xFEC0_1000, gsi_base: 24 });
    assert_eq!(madt.nmi_sources, [NmiSource { gsi: 30, polarity: Polarity::ActiveLow, trigger: TriggerMode::Level }]);
    assert_eq!(
        madt.local_apic_nmis,
        [
            LocalApicNmi {
                processor: NmiProcessor::Uid(1),
                lint: LocalInterrupt::Lint0,
                polarity: Polarity::ConformsToBus,
                trigger: TriggerMode::ConformsToBus,
                x2apic: false
            },
            LocalApicNmi {
                processor: NmiProcessor::All,
                lint: LocalInterrupt::Lint1,
                polarity: Polarity::ActiveHigh,
                trigger: TriggerMode::Edge,
                x2apic: true
            },
            LocalApicNmi {
                processor: NmiProcessor::Uid(0x400),
                lint: LocalInterrupt::Lint0,
                polarity: Polarity::ConformsToBus,
                trigger: TriggerMode::ConformsToBus,
                x2apic: true
            },
        ]
    );
    assert_eq!(madt.mp_wakeup_mailbox, Some(0x8000));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("unknown type 0x80"), "{warnings:?}");
    assert!(warnings[1].contains("GICD"), "{warnings:?}");
}

#[test]
fn online_capable_bit_means_nothing_before_madt_revision_5() {
    let (result, _) = parse_madt_bytes(madt(4, 0xFEE0_0000, 0, &[lapic(0, 0, 1), lapic(1, 1, 0b10)]));
    let madt = result.expect("MADT parses");
    assert!(!madt.cpus[1].online_capable && !madt.cpus[1].usable());
}

#[test]
fn reserved_interrupt_flags_skip_the_entry_with_a_warning() {
    let (result, warnings) = parse_madt_bytes(madt(
        3,
        0xFEE0_0000,
        0,
        &[lapic(0, 0, 1), io_apic(0, 0xFEC0_0000, 0), iso(0, 9, 9, 0b0010), lapic_nmi(0xFF, 0, 2)],
    ));
    let madt = result.expect("MADT parses");
    assert!(madt.overrides.is_empty() && madt.local_apic_nmis.is_empty());
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("reserved flags 0x0002"), "{warnings:?}");
    assert!(warnings[1].contains("LINT 2"), "{warnings:?}");
}

#[test]
fn missing_tables_are_warnings_not_errors() {
    let mut memory = HostMemory::new();
    let facp = sdt(b"FACP", 6, &[0u8; 240]);
    memory.place(RSDP_AT, rsdp_v2(0, XSDT_AT)).place(XSDT_AT, xsdt(&[0x7000])).place(0x7000, facp);
    let platform = parse(memory).expect("a machine without MADT/MCFG/HPET still parses");
    assert_eq!(platform.madt, None);
    assert!(platform.mcfg.is_empty());
    assert_eq!(platform.hpet, None);
    assert!(platform.rejected.is_empty());
    assert_eq!(platform.tables.len(), 1);
    assert_eq!(platform.warnings.len(), 3, "{:?}", platform.warnings);
    assert!(platform.warnings[0].contains("no usable MADT"));
    assert!(platform.warnings[1].contains("no usable MCFG"));
    assert!(platform.warnings[2].contains("no usable HPET"));
}

#[test]
fn flipped_checksum_rejects_only_that_table() {
    let mut memory = machine(clean_madt());
    memory.region_mut(MADT_AT)[50] ^= 0x01;
    let platform = parse(memory).expect("walk still succeeds");
    assert_eq!(platform.madt, None);
    assert!(matches!(
        platform.rejected.as_slice(),
        [AcpiError::BadChecksum { signature: Signature::MADT, phys: MADT_AT, .. }]
    ));
    assert!(platform.warnings.iter().any(|w| w.contains("APIC at 0x3000: checksum")), "{:?}", platform.warnings);
    assert_eq!(platform.mcfg.len(), 1);
    assert!(platform.hpet.is_some());
}

#[test]
fn truncated_madt_is_an_error() {
    // The header claims 16 bytes more than memory holds.
    let mut bytes = clean_madt();
    let claimed = bytes.len() as u32 + 16;
    bytes[4..8].copy_from_slice(&claimed.to_le_bytes());
    refix_sdt_checksum(&mut bytes);
    let platform = parse(machine(bytes.clone())).expect("walk still succeeds");
    assert_eq!(platform.madt, None);
    assert_eq!(
        platform.rejected,
        [AcpiError::Unmapped { target: MapTarget::Table(Signature::MADT), phys: MADT_AT, len: u64::from(claimed) }]
    );

    // The same table handed over as a slice.
    let (result, _) = parse_madt_bytes(bytes.clone());
    assert!(matches!(result, Err(AcpiError::Truncated { length, .. }) if length == claimed));
    // Cut inside the header.
    let (result, _) = parse_madt_bytes(bytes[..20].to_vec());
    assert!(matches!(result, Err(AcpiError::Truncated { length: 36, available: 20, .. })));
}

#[test]
fn madt_shorter_than_its_fixed_part_is_bad_length() {
    let mut bytes = sdt(b"APIC", 3, &[0, 0, 0xE0]);
    refix_sdt_checksum(&mut bytes);
    let (result, _) = parse_madt_bytes(bytes);
    assert!(matches!(result, Err(AcpiError::BadLength { length: 39, min: 44, .. })), "{result:?}");
}

#[test]
fn madt_entry_of_length_zero_is_an_error_not_a_hang() {
    for length in [0u8, 1] {
        let bytes = madt(3, 0xFEE0_0000, 0, &[lapic(0, 0, 1), vec![0x00, length, 0, 0, 0, 0, 0, 0]]);
        let (result, _) = parse_madt_bytes(bytes.clone());
        assert_eq!(
            result,
            Err(AcpiError::MadtEntryTooShort { phys: MADT_AT, offset: 52, entry_type: 0, length, min: 8 })
        );
        // Through the whole walk as well, and for an unknown type too.
        let platform = parse(machine(bytes)).expect("walk succeeds");
        assert!(platform.madt.is_none());
        let (result, _) = parse_madt_bytes(madt(3, 0, 0, &[vec![0x42, length, 0, 0]]));
        assert!(matches!(result, Err(AcpiError::MadtEntryTooShort { entry_type: 0x42, min: 2, .. })));
    }
}

#[test]
fn madt_entry_shorter_than_its_type_is_an_error() {
    let (result, _) = parse_madt_bytes(madt(3, 0, 0, &[vec![0x01, 8, 0, 0, 0, 0, 0xC0, 0xFE]]));
    assert_eq!(
        result,
        Err(AcpiError::MadtEntryTooShort { phys: MADT_AT, offset: 44, entry_type: 1, length: 8, min: 12 })
    );
}

#[test]
fn madt_entry_running_past_the_table_is_an_error() {
    // An x2APIC entry claiming 16 bytes with 6 left; and a lone type byte at the very end.
    let (result, _) = parse_madt_bytes(madt(3, 0, 0, &[lapic(0, 0, 1), vec![0x09, 16, 0, 0, 0, 0]]));
    assert_eq!(
        result,
        Err(AcpiError::MadtEntryOverrun { phys: MADT_AT, offset: 52, entry_type: 9, length: 16, remaining: 6 })
    );
    let (result, _) = parse_madt_bytes(madt(3, 0, 0, &[lapic(0, 0, 1), vec![0x00]]));
    assert!(matches!(result, Err(AcpiError::MadtEntryOverrun { offset: 52, remaining: 1, .. })), "{result:?}");
}

#[test]
fn every_mutation_of_an_madt_parses_or_errors_without_panicking() {
    let original = madt(
        5,
        0xFEE0_0000,
        1,
        &[
            lapic(0, 0, 1),
            x2apic(300, 1, 7),
            io_apic(0, 0xFEC0_0000, 0),
            iso(0, 9, 9, 0b1101),
            nmi_source(0b0101, 3),
            lapic_nmi(0xFF, 0b0101, 1),
            x2apic_nmi(0, 7, 1),
            lapic_address_override(0xFEE0_0000),
            mp_wakeup(0x1000),
        ],
    );
    within(Duration::from_secs(60), move || {
        let mut parsed = 0;
        let mut check = |mut bytes: Vec<u8>| {
            if bytes.len() >= 8 {
                let len = bytes.len() as u32;
                bytes[4..8].copy_from_slice(&len.to_le_bytes());
            }
            if bytes.len() >= 10 {
                refix_sdt_checksum(&mut bytes);
            }
            let mut warnings = Vec::new();
            if let Ok(table) = Table::from_bytes(MADT_AT, &bytes, madt::MADT_FIXED_LEN) {
                let _ = MadtInfo::parse(&table, &mut warnings);
                parsed += 1;
            }
        };
        for cut in 0..=original.len() {
            check(original[..cut].to_vec());
        }
        for position in 36..original.len() {
            for value in [0x00, 0x01, 0x02, 0x0A, 0x7F, 0xFF] {
                let mut bytes = original.clone();
                bytes[position] = value;
                check(bytes);
            }
        }
        assert!(parsed > 500, "only {parsed} mutations got past the header checks");
    });
}

#[test]
fn xsdt_pointing_past_memory_is_an_error() {
    let mut memory = machine(clean_madt());
    *memory.region_mut(RSDP_AT) = rsdp_v2(0, 0x4000_0000);
    assert_eq!(parse(memory), Err(AcpiError::Unmapped { target: MapTarget::TableHeader, phys: 0x4000_0000, len: 36 }));
}

#[test]
fn xsdt_longer_than_memory_is_an_error() {
    let mut memory = machine(clean_madt());
    let table = memory.region_mut(XSDT_AT);
    table[4..8].copy_from_slice(&0x800u32.to_le_bytes());
    refix_sdt_checksum(table);
    assert_eq!(
        parse(memory),
        Err(AcpiError::Unmapped { target: MapTarget::Table(Signature::XSDT), phys: XSDT_AT, len: 0x800 })
    );
}

#[test]
fn absurd_table_length_is_refused_before_mapping() {
    let mut memory = machine(clean_madt());
    let table = memory.region_mut(XSDT_AT);
    table[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(parse(memory), Err(AcpiError::BadLength { signature: Signature::XSDT, length: u32::MAX, .. })));
}

#[test]
fn xsdt_entry_pointing_past_memory_skips_that_entry() {
    let mut memory = machine(clean_madt());
    *memory.region_mut(XSDT_AT) = xsdt(&[0xDEAD_0000_0000, MADT_AT, 0, MCFG_AT, HPET_AT]);
    let platform = parse(memory).expect("walk succeeds");
    assert_eq!(
        platform.rejected,
        [AcpiError::Unmapped { target: MapTarget::TableHeader, phys: 0xDEAD_0000_0000, len: 36 }]
    );
    assert!(
        platform.warnings[0].starts_with("XSDT entry 0: table header at 0xdead00000000"),
        "{:?}",
        platform.warnings
    );
    assert!(platform.warnings[1].contains("entry 2 is a null pointer"), "{:?}", platform.warnings);
    assert!(platform.madt.is_some() && platform.hpet.is_some() && platform.mcfg.len() == 1);
}

#[test]
fn wrong_signature_where_the_xsdt_should_be() {
    let mut memory = machine(clean_madt());
    *memory.region_mut(RSDP_AT) = rsdp_v2(0, MADT_AT);
    assert_eq!(
        parse(memory),
        Err(AcpiError::BadSignature { phys: MADT_AT, expected: Signature::XSDT, found: Signature::MADT })
    );
}

#[test]
fn bad_xsdt_falls_back_to_the_rsdt() {
    let mut memory = machine(clean_madt());
    memory.place(RSDT_AT, rsdt(&[MADT_AT as u32, HPET_AT as u32]));
    *memory.region_mut(RSDP_AT) = rsdp_v2(RSDT_AT as u32, XSDT_AT);
    memory.region_mut(XSDT_AT)[40] ^= 0xFF;
    let platform = parse(memory).expect("RSDT is good");
    assert_eq!(platform.root, RootTable::Rsdt(RSDT_AT as u32));
    assert!(matches!(platform.rejected[0], AcpiError::BadChecksum { signature: Signature::XSDT, .. }));
    assert!(platform.madt.is_some() && platform.hpet.is_some());
    assert!(platform.mcfg.is_empty());
}

#[test]
fn acpi_1_rsdp_uses_the_rsdt() {
    let mut memory = machine(clean_madt());
    memory.place(RSDT_AT, rsdt(&[MADT_AT as u32, MCFG_AT as u32, HPET_AT as u32]));
    *memory.region_mut(RSDP_AT) = rsdp_v1(RSDT_AT as u32);
    let platform = parse(memory).expect("ACPI 1.0 tables parse");
    assert_eq!(platform.rsdp.revision, 0);
    assert_eq!(platform.root, RootTable::Rsdt(RSDT_AT as u32));
    assert_eq!(platform.tables.len(), 3);
    assert!(platform.warnings.is_empty(), "{:?}", platform.warnings);
}

#[test]
fn bad_rsdps_are_errors() {
    let check = |rsdp: Vec<u8>| {
        let mut memory = machine(clean_madt());
        *memory.region_mut(RSDP_AT) = rsdp;
        parse(memory)
    };
    let mut bad_checksum = rsdp_v2(0, XSDT_AT);
    bad_checksum[16] ^= 1;
    fix_checksum(&mut bad_checksum, 32, 36);
    assert!(matches!(check(bad_checksum), Err(AcpiError::RsdpBadChecksum { phys: RSDP_AT, .. })));

    let mut bad_extended = rsdp_v2(0, XSDT_AT);
    bad_extended[33] = 1; // reserved byte, covered only by the extended checksum
    assert!(matches!(check(bad_extended), Err(AcpiError::RsdpBadExtendedChecksum { phys: RSDP_AT, .. })));

    let mut bad_signature = rsdp_v2(0, XSDT_AT);
    bad_signature[0] = b'X';
    assert_eq!(check(bad_signature), Err(AcpiError::RsdpBadSignature { phys: RSDP_AT }));

    let mut bad_length = rsdp_v2(0, XSDT_AT);
    bad_length[20..24].copy_from_slice(&20u32.to_le_bytes());
    fix_checksum(&mut bad_length, 8, 20);
    assert_eq!(check(bad_length), Err(AcpiError::RsdpBadLength { phys: RSDP_AT, length: 20 }));

    assert_eq!(check(rsdp_v2(0, 0)), Err(AcpiError::NoRootTable { rsdp_phys: RSDP_AT }));
    assert_eq!(parse(HostMemory::new()), Err(AcpiError::Unmapped { target: MapTarget::Rsdp, phys: RSDP_AT, len: 20 }));
}

#[test]
fn hpet_outside_system_memory_is_rejected() {
    let mut memory = machine(clean_madt());
    *memory.region_mut(HPET_AT) = hpet(0x8086_A701, 1, 0x1000, 0, 0);
    let platform = parse(memory).expect("walk succeeds");
    assert_eq!(platform.hpet, None);
    assert_eq!(platform.rejected, [AcpiError::HpetNotInMemory { phys: HPET_AT, address_space: 1 }]);

    let mut memory = machine(clean_madt());
    *memory.region_mut(HPET_AT) = hpet(0x8086_A701, 0, 0, 0, 0);
    let platform = parse(memory).expect("walk succeeds");
    assert_eq!(platform.rejected, [AcpiError::HpetNoBaseAddress { phys: HPET_AT }]);

    let mut memory = machine(clean_madt());
    let mut short = sdt(b"HPET", 1, &[0u8; 10]);
    refix_sdt_checksum(&mut short);
    *memory.region_mut(HPET_AT) = short;
    let platform = parse(memory).expect("walk succeeds");
    assert!(matches!(platform.rejected.as_slice(), [AcpiError::BadLength { length: 46, min: 56, .. }]));
}

#[test]
fn mcfg_entries_are_checked() {
    let mut memory = machine(clean_madt());
    let mut table = mcfg(&[(0xE000_0000, 0, 0, 0x3F), (0xF000_0000, 1, 0x80, 0x10), (0, 2, 0, 0xFF)]);
    // Four stray bytes after the last entry.
    table.extend_from_slice(&[1, 2, 3, 4]);
    let len = table.len() as u32;
    table[4..8].copy_from_slice(&len.to_le_bytes());
    refix_sdt_checksum(&mut table);
    *memory.region_mut(MCFG_AT) = table;
    let platform = parse(memory).expect("walk succeeds");
    assert_eq!(platform.mcfg, [McfgSegment { base_address: 0xE000_0000, segment: 0, bus_start: 0, bus_end: 0x3F }]);
    let mcfg_warnings: Vec<&String> = platform.warnings.iter().filter(|w| w.contains("MCFG")).collect();
    assert_eq!(mcfg_warnings.len(), 3, "{mcfg_warnings:?}");

    let segment = platform.mcfg[0];
    assert_eq!(segment.function_address(0, 0, 0), Some(0xE000_0000));
    assert_eq!(segment.function_address(1, 2, 3), Some(0xE000_0000 + (1 << 20) + (2 << 15) + (3 << 12)));
    assert_eq!(segment.function_address(0x40, 0, 0), None);
    assert_eq!(segment.function_address(0, 32, 0), None);
    assert_eq!(segment.function_address(0, 0, 8), None);
}

#[test]
fn displays_are_single_lines() {
    let platform = parse(machine(clean_madt())).expect("parses");
    let lines = [
        std::format!("{platform}"),
        std::format!("{}", platform.madt.as_ref().expect("MADT")),
        std::format!("{}", platform.madt.as_ref().expect("MADT").cpus[0]),
        std::format!("{}", platform.madt.as_ref().expect("MADT").io_apics[0]),
        std::format!("{}", platform.madt.as_ref().expect("MADT").overrides[1]),
        std::format!("{}", platform.madt.as_ref().expect("MADT").local_apic_nmis[0]),
        std::format!("{}", platform.mcfg[0]),
        std::format!("{}", platform.hpet.expect("HPET")),
        std::format!("{}", platform.rsdp),
        std::format!("{}", AcpiError::MadtEntryTooShort { phys: 1, offset: 2, entry_type: 3, length: 0, min: 8 }),
    ];
    for line in &lines {
        assert!(!line.is_empty() && !line.contains('\n'), "{line:?}");
    }
    assert_eq!(
        lines[0],
        "ACPI: RSDP rev 2 at 0x1000, XSDT at 0x2000, OEM TESTOE TESTTABL rev 0x1, 3 tables: APIC MCFG HPET"
    );
    assert_eq!(
        lines[1],
        "MADT rev 3: 2 CPUs (2 enabled, 0 online-capable, 0 disabled), first APIC id 0x0, local APIC at 0xfee00000, \
         1 I/O APICs, 2 IRQ overrides, 0 NMI sources, 1 local NMIs, 8259 PICs present"
    );
    assert_eq!(lines[4], "IRQ 9 -> GSI 9 active-high level");
    assert_eq!(lines[6], "PCIe ECAM segment 0 buses 00..ff at 0xe0000000");
    assert_eq!(
        lines[7],
        "HPET 0 at 0xfed00000: 8 comparators, 64-bit counter, legacy replacement, vendor 0x8086 rev 1, min tick 128"
    );
}

// --- The BIOS-area RSDP scan, over a synthetic 1 MiB low-memory image ---

const LOW_MEMORY: usize = 0x10_0000;

fn low_memory(ebda_segment: u16, rsdps: &[(usize, Vec<u8>)]) -> HostMemory {
    let mut image = vec![0u8; LOW_MEMORY];
    image[0x40E..0x410].copy_from_slice(&ebda_segment.to_le_bytes());
    for (at, rsdp) in rsdps {
        image[*at..*at + rsdp.len()].copy_from_slice(rsdp);
    }
    let mut memory = HostMemory::new();
    memory.place(0, image);
    memory
}

fn scan(memory: HostMemory) -> Result<u64, AcpiError> {
    within(LIMIT, move || find_rsdp_in_bios_areas(&memory))
}

#[test]
fn rsdp_found_in_the_ebda() {
    assert_eq!(scan(low_memory(0x9FC0, &[(0x9FC40, rsdp_v2(0, 0x1234))])), Ok(0x9FC40));
}

#[test]
fn rsdp_found_in_the_bios_area() {
    assert_eq!(scan(low_memory(0x9FC0, &[(0xF6A40, rsdp_v2(0, 0x1234))])), Ok(0xF6A40));
    assert_eq!(scan(low_memory(0, &[(0xE0000, rsdp_v1(0x1234))])), Ok(0xE0000));
    // An ACPI 1.0 RSDP close to the top of the area.
    assert_eq!(scan(low_memory(0, &[(0xFFFE0, rsdp_v1(0x1234))])), Ok(0xFFFE0));
}

#[test]
fn rsdp_in_the_ebda_wins_over_the_bios_area() {
    let memory = low_memory(0x9FC0, &[(0xE0000, rsdp_v2(0, 1)), (0x9FD00, rsdp_v2(0, 2))]);
    assert_eq!(scan(memory), Ok(0x9FD00));
}

#[test]
fn rsdp_candidates_with_bad_checksums_are_passed_over() {
    let mut bad = rsdp_v2(0, 1);
    bad[8] ^= 1;
    let mut bad_extended = rsdp_v2(0, 1);
    bad_extended[32] ^= 1;
    let memory = low_memory(0x9FC0, &[(0x9FC00, bad), (0xE0010, bad_extended), (0xE0100, rsdp_v2(0, 3))]);
    assert_eq!(scan(memory), Ok(0xE0100));
}

#[test]
fn rsdp_off_a_16_byte_boundary_is_not_found() {
    assert_eq!(scan(low_memory(0x9FC0, &[(0xE0008, rsdp_v2(0, 1))])), Err(AcpiError::RsdpNotFound));
    assert_eq!(scan(low_memory(0x9FC0, &[])), Err(AcpiError::RsdpNotFound));
}

#[test]
fn garbage_ebda_pointer_still_scans_the_bios_area() {
    for segment in [0x0000, 0x0001, 0xA000, 0xFFFF] {
        assert_eq!(scan(low_memory(segment, &[(0xFA000, rsdp_v2(0, 1))])), Ok(0xFA000), "segment {segment:#x}");
    }
}

#[test]
fn unreadable_bios_area_is_an_error() {
    let mut memory = HostMemory::new();
    memory.place(0, vec![0u8; 0x1000]);
    assert_eq!(scan(memory), Err(AcpiError::Unmapped { target: MapTarget::BiosArea, phys: 0xE0000, len: 0x20000 }));
}
