//! Conformance against real servers' tables (see REAL_DATA.md): the tables acpixtract saved on
//! three servers are placed in fake physical memory behind a synthetic RSDP (revision 2) and
//! XSDT, the same `parse_platform` the kernel runs walks them, and every decoded value is
//! compared, entry by entry, with what ACPICA's disassembler (`iasl -d`, Debian acpica-tools)
//! prints for the same bytes.
//!
//! These live in the library's unit tests rather than in `kernel/tests/`: an integration test
//! makes cargo build the kernel binary too, and that is a freestanding image, not a host program.

// Tests index and compute offsets on purpose, over inputs they build themselves.
#![allow(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::collections::BTreeSet;
use std::format;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::string::{String, ToString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use std::vec;
use std::vec::Vec;

use super::test_support::{
    io_apic, iso, lapic, lapic_address_override, lapic_nmi, madt, nmi_source, refix_sdt_checksum, rsdp_v2, within,
    x2apic, x2apic_nmi, xsdt, HostMemory,
};
use super::*;

const SERVERS: [&str; 3] = ["dell-r820", "hp-dl360-g7", "quanta-x10e-9n"];
/// Where the synthetic RSDP goes: in the BIOS area, so the scanner can find it too.
const RSDP_AT: u64 = 0xF_6A40;
const XSDT_AT: u64 = 0x7EF0_0000;
const TABLES_FROM: u64 = 0x7F00_0000;

fn testdata_dir() -> PathBuf {
    match std::env::var_os("ACPI_TESTDATA_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/testdata/acpi"),
    }
}

/// Every `*.dat` of one server, sorted by file name, as (file stem, bytes).
fn server_tables(server: &str) -> Vec<(String, Vec<u8>)> {
    let dir = testdata_dir().join(server);
    let listing = std::fs::read_dir(&dir).unwrap_or_else(|error| {
        panic!("real ACPI tables missing at {} ({error}): see REAL_DATA.md, or set ACPI_TESTDATA_DIR", dir.display())
    });
    let mut tables: Vec<(String, Vec<u8>)> = listing
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "dat"))
        .map(|path| {
            let stem = path.file_stem().expect("file name").to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (stem, bytes)
        })
        .collect();
    tables.sort();
    assert!(tables.iter().any(|(stem, _)| stem == "apic"), "{server}: no apic.dat in {}", dir.display());
    tables
}

fn table<'a>(tables: &'a [(String, Vec<u8>)], stem: &str) -> &'a [u8] {
    &tables.iter().find(|(s, _)| s == stem).unwrap_or_else(|| panic!("no {stem}.dat")).1
}

/// Fake memory holding a 1 MiB low-memory image with the RSDP in the BIOS area, an XSDT, and
/// every table of the server that an XSDT lists (FACS and DSDT are reached through the FADT,
/// never through the XSDT). Returns the memory and the (signature, address, length) it placed.
fn real_machine(tables: &[(String, Vec<u8>)]) -> (HostMemory, Vec<(Signature, u64, u32)>) {
    let mut memory = HostMemory::new();
    let mut low = vec![0u8; 0x10_0000];
    let rsdp = rsdp_v2(0, XSDT_AT);
    low[RSDP_AT as usize..RSDP_AT as usize + rsdp.len()].copy_from_slice(&rsdp);
    memory.place(0, low);

    let mut placed = Vec::new();
    let mut next = TABLES_FROM;
    for (_, bytes) in tables {
        let header = SdtHeader::parse(bytes).expect("every .dat starts with a table header");
        if [*b"FACS", *b"DSDT"].contains(&header.signature.0) {
            continue;
        }
        placed.push((header.signature, next, header.length));
        memory.place(next, bytes.clone());
        next = (next + bytes.len() as u64 + 0xFFF) & !0xFFF;
    }
    let pointers: Vec<u64> = placed.iter().map(|&(_, phys, _)| phys).collect();
    memory.place(XSDT_AT, xsdt(&pointers));
    (memory, placed)
}

// --- iasl ---

/// One `name : value` line of iasl's disassembly, in order.
type Fields = Vec<(String, String)>;

/// Disassembles `bytes` with `iasl -d` in a fresh temporary directory and returns the fields
/// of the `.dsl` it writes. Fails (never skips) without iasl: CI must run this comparison.
fn iasl_fields(label: &str, bytes: &[u8]) -> Fields {
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "kernel-acpi-iasl-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    std::fs::write(dir.join("table.dat"), bytes).expect("write table for iasl");
    let iasl = std::env::var_os("IASL").unwrap_or_else(|| "iasl".into());
    let run = Command::new(&iasl).arg("-d").arg("table.dat").current_dir(&dir).output();
    let dsl = std::fs::read_to_string(dir.join("table.dsl"));
    let _ = std::fs::remove_dir_all(&dir);
    let output = match run {
        Ok(output) => output,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => panic!(
            "`iasl` not found ({error}): install ACPICA's disassembler, Debian package acpica-tools \
             (`apt-get install acpica-tools`), or point IASL at it. This test compares against it and must not be skipped."
        ),
        Err(error) => panic!("running iasl: {error}"),
    };
    let dsl = dsl.unwrap_or_else(|error| {
        panic!(
            "{label}: iasl -d wrote no table.dsl ({error}); status {}, stderr:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )
    });
    parse_dsl(&dsl)
}

/// Lines look like `[02Eh 0046   1]                 Processor ID : 01` or, for decoded flag
/// bits, `                           Processor Enabled : 1`; the hex dump after
/// "Raw Table Data" is not fields.
fn parse_dsl(dsl: &str) -> Fields {
    let mut fields = Vec::new();
    for line in dsl.lines() {
        if line.starts_with("Raw Table Data") {
            break;
        }
        let Some((name, value)) = line.split_once(" : ") else {
            continue;
        };
        let name = match name.find(']') {
            Some(end) if name.trim_start().starts_with('[') => &name[end + 1..],
            _ => name,
        };
        fields.push((name.trim().to_string(), value.trim().to_string()));
    }
    fields
}

/// The leading hex number of a field value (`00 [Processor Local APIC]` gives 0).
fn hex(label: &str, name: &str, value: &str) -> u64 {
    let token = value.split_whitespace().next().unwrap_or("");
    u64::from_str_radix(token, 16).unwrap_or_else(|_| panic!("{label}: iasl field {name} = {value:?} is not hex"))
}

/// Fields grouped: the table's own fields, then one group per subtable, each starting at
/// the field named `first`.
fn split_subtables(fields: &Fields, first: &str) -> (Fields, Vec<Fields>) {
    let mut header = Vec::new();
    let mut groups: Vec<Fields> = Vec::new();
    for (name, value) in fields {
        if name == first {
            groups.push(Vec::new());
        }
        match groups.last_mut() {
            Some(group) => group.push((name.clone(), value.clone())),
            None => header.push((name.clone(), value.clone())),
        }
    }
    (header, groups)
}

fn get(label: &str, fields: &Fields, name: &str) -> u64 {
    let value = fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("{label}: iasl output has no field {name:?} in {fields:?}"));
    hex(label, name, value)
}

fn get_opt(label: &str, fields: &Fields, name: &str) -> Option<u64> {
    fields.iter().find(|(n, _)| n == name).map(|(_, v)| hex(label, name, v))
}

/// iasl prints MPS INTI polarity and trigger as their raw 2-bit values (ACPI 6.5 §5.2.12.5).
fn inti(label: &str, fields: &Fields) -> (Polarity, TriggerMode) {
    let polarity = match get(label, fields, "Polarity") {
        0 => Polarity::ConformsToBus,
        1 => Polarity::ActiveHigh,
        3 => Polarity::ActiveLow,
        other => panic!("{label}: reserved polarity {other} in a real table"),
    };
    let trigger = match get(label, fields, "Trigger Mode") {
        0 => TriggerMode::ConformsToBus,
        1 => TriggerMode::Edge,
        3 => TriggerMode::Level,
        other => panic!("{label}: reserved trigger mode {other} in a real table"),
    };
    (polarity, trigger)
}

fn lint(label: &str, fields: &Fields) -> LocalInterrupt {
    match get(label, fields, "Interrupt Input LINT") {
        0 => LocalInterrupt::Lint0,
        1 => LocalInterrupt::Lint1,
        other => panic!("{label}: LINT{other}"),
    }
}

/// Builds what iasl says the MADT holds, in the parser's shape, and compares it entry by entry.
/// Returns the number of subtables compared.
fn compare_madt_with_iasl(label: &str, table_bytes: &[u8], got: &MadtInfo) -> usize {
    let fields = iasl_fields(label, table_bytes);
    let (header, subtables) = split_subtables(&fields, "Subtable Type");
    let revision = get(label, &header, "Revision") as u8;
    let mut want = MadtInfo {
        revision,
        local_apic_address: get(label, &header, "Local Apic Address"),
        pcat_compat: get(label, &header, "PC-AT Compatibility") == 1,
        cpus: Vec::new(),
        io_apics: Vec::new(),
        overrides: Vec::new(),
        nmi_sources: Vec::new(),
        local_apic_nmis: Vec::new(),
        mp_wakeup_mailbox: None,
    };
    // The Online Capable bit is reserved before MADT revision 5; Linux ignores it there too.
    let online_capable = |enabled: bool, bit: Option<u64>| revision >= 5 && !enabled && bit == Some(1);
    for (index, sub) in subtables.iter().enumerate() {
        let label = format!("{label} subtable #{index}");
        let label = label.as_str();
        match get(label, sub, "Subtable Type") {
            0x00 => {
                let enabled = get(label, sub, "Processor Enabled") == 1;
                want.cpus.push(Cpu {
                    processor_uid: get(label, sub, "Processor ID") as u32,
                    apic_id: get(label, sub, "Local Apic ID") as u32,
                    enabled,
                    online_capable: online_capable(enabled, get_opt(label, sub, "Runtime Online Capable")),
                    x2apic: false,
                });
            }
            0x09 => {
                let enabled = get(label, sub, "Processor Enabled") == 1;
                // This iasl decodes only the Enabled bit of x2APIC flags; take bit 1 raw.
                let online = get_opt(label, sub, "Runtime Online Capable")
                    .or(Some((get(label, sub, "Flags (decoded below)") >> 1) & 1));
                want.cpus.push(Cpu {
                    processor_uid: get(label, sub, "Processor UID") as u32,
                    apic_id: get(label, sub, "Processor x2Apic ID") as u32,
                    enabled,
                    online_capable: online_capable(enabled, online),
                    x2apic: true,
                });
            }
            0x01 => want.io_apics.push(IoApic {
                id: get(label, sub, "I/O Apic ID") as u8,
                address: get(label, sub, "Address") as u32,
                gsi_base: get(label, sub, "Interrupt") as u32,
            }),
            0x02 => {
                let (polarity, trigger) = inti(label, sub);
                want.overrides.push(InterruptOverride {
                    bus: get(label, sub, "Bus") as u8,
                    source_irq: get(label, sub, "Source") as u8,
                    gsi: get(label, sub, "Interrupt") as u32,
                    polarity,
                    trigger,
                });
            }
            0x03 => {
                let (polarity, trigger) = inti(label, sub);
                want.nmi_sources.push(NmiSource { gsi: get(label, sub, "Interrupt") as u32, polarity, trigger });
            }
            0x04 => {
                let (polarity, trigger) = inti(label, sub);
                let uid = get(label, sub, "Processor ID");
                want.local_apic_nmis.push(LocalApicNmi {
                    processor: if uid == 0xFF { NmiProcessor::All } else { NmiProcessor::Uid(uid as u32) },
                    lint: lint(label, sub),
                    polarity,
                    trigger,
                    x2apic: false,
                });
            }
            0x0A => {
                let (polarity, trigger) = inti(label, sub);
                let uid = get(label, sub, "Processor UID");
                want.local_apic_nmis.push(LocalApicNmi {
                    processor: if uid == 0xFFFF_FFFF { NmiProcessor::All } else { NmiProcessor::Uid(uid as u32) },
                    lint: lint(label, sub),
                    polarity,
                    trigger,
                    x2apic: true,
                });
            }
            0x05 => want.local_apic_address = get(label, sub, "APIC Address"),
            other => panic!("{label}: iasl shows MADT subtable type {other:#x}, which this comparison does not cover"),
        }
    }

    assert_eq!(got.revision, want.revision, "{label}: revision");
    assert_eq!(got.local_apic_address, want.local_apic_address, "{label}: local APIC address");
    assert_eq!(got.pcat_compat, want.pcat_compat, "{label}: PC-AT compatibility");
    fn each<T: PartialEq + core::fmt::Debug>(label: &str, what: &str, got: &[T], want: &[T]) {
        for (index, (g, w)) in got.iter().zip(want).enumerate() {
            assert_eq!(g, w, "{label}: {what} #{index}");
        }
        assert_eq!(got.len(), want.len(), "{label}: number of {what}");
    }
    each(label, "CPUs", &got.cpus, &want.cpus);
    each(label, "I/O APICs", &got.io_apics, &want.io_apics);
    each(label, "interrupt source overrides", &got.overrides, &want.overrides);
    each(label, "NMI sources", &got.nmi_sources, &want.nmi_sources);
    each(label, "local APIC NMIs", &got.local_apic_nmis, &want.local_apic_nmis);
    assert_eq!(*got, want, "{label}: whole MADT");
    subtables.len()
}

fn compare_mcfg_with_iasl(label: &str, table_bytes: &[u8], got: &[McfgSegment]) {
    let fields = iasl_fields(label, table_bytes);
    let (_, entries) = split_subtables(&fields, "Base Address");
    let want: Vec<McfgSegment> = entries
        .iter()
        .map(|entry| McfgSegment {
            base_address: get(label, entry, "Base Address"),
            segment: get(label, entry, "Segment Group Number") as u16,
            bus_start: get(label, entry, "Start Bus Number") as u8,
            bus_end: get(label, entry, "End Bus Number") as u8,
        })
        .collect();
    assert!(!want.is_empty(), "{label}: iasl shows no MCFG entry");
    assert_eq!(got, want.as_slice(), "{label}: MCFG entries");
}

fn compare_hpet_with_iasl(label: &str, table_bytes: &[u8], got: &HpetInfo) {
    let fields = iasl_fields(label, table_bytes);
    assert_eq!(get(label, &fields, "Space ID"), 0, "{label}: real HPETs are in system memory");
    let block_id = get(label, &fields, "Hardware Block ID") as u32;
    // This iasl prints the Event Timer Block ID raw; its fields per IA-PC HPET 1.0a §2.3.4.
    let want = HpetInfo {
        base_address: get(label, &fields, "Address"),
        hardware_rev: (block_id & 0xFF) as u8,
        comparators: ((block_id >> 8) & 0x1F) as u8 + 1,
        counter_64bit: (block_id >> 13) & 1 == 1,
        legacy_replacement: (block_id >> 15) & 1 == 1,
        pci_vendor_id: (block_id >> 16) as u16,
        hpet_number: get(label, &fields, "Sequence Number") as u8,
        min_tick: get(label, &fields, "Minimum Clock Ticks") as u16,
        page_protection: match get(label, &fields, "Flags (decoded below)") & 0xF {
            0 => PageProtection::None,
            1 => PageProtection::Protected4K,
            2 => PageProtection::Protected64K,
            other => PageProtection::Reserved(other as u8),
        },
        event_timer_block_id: block_id,
    };
    assert_eq!(*got, want, "{label}: HPET");
}

#[test]
fn real_servers_match_iasl() {
    let mut compared = Vec::new();
    for server in SERVERS {
        let tables = server_tables(server);
        let (memory, placed) = real_machine(&tables);

        let rsdp = find_rsdp_in_bios_areas(&memory).unwrap_or_else(|e| panic!("{server}: {e}"));
        assert_eq!(rsdp, RSDP_AT, "{server}: RSDP scan");
        let platform = parse_platform(&memory, rsdp).unwrap_or_else(|e| panic!("{server}: {e}"));
        assert!(platform.rejected.is_empty(), "{server}: rejected {:?}", platform.rejected);
        assert_eq!(platform.warnings, Vec::<String>::new(), "{server}: warnings");

        let listed: Vec<(Signature, u64, u32)> =
            platform.tables.iter().map(|t| (t.signature, t.phys, t.length)).collect();
        assert_eq!(listed, placed, "{server}: tables listed by the XSDT");
        for (stem, bytes) in &tables {
            let length = SdtHeader::parse(bytes).map(|h| h.length as usize);
            assert_eq!(length, Some(bytes.len()), "{server}/{stem}.dat: header length is the file size");
        }

        let madt = platform.madt.as_ref().unwrap_or_else(|| panic!("{server}: no MADT"));
        let entries = compare_madt_with_iasl(&format!("{server} MADT"), table(&tables, "apic"), madt);
        compare_mcfg_with_iasl(&format!("{server} MCFG"), table(&tables, "mcfg"), &platform.mcfg);
        let hpet = platform.hpet.as_ref().unwrap_or_else(|| panic!("{server}: no HPET"));
        compare_hpet_with_iasl(&format!("{server} HPET"), table(&tables, "hpet"), hpet);
        compared.push((server, entries, platform));
    }

    // Anchors checked by hand against the iasl listings, so a comparison that silently
    // compares nothing cannot pass.
    let (_, dell_entries, dell) = &compared[0];
    let dell_madt = dell.madt.as_ref().expect("MADT");
    assert_eq!(*dell_entries, 104, "Dell R820 MADT: 96 local APICs, 1 local NMI, 2 overrides, 5 I/O APICs");
    assert_eq!((dell_madt.cpus.len(), dell_madt.enabled_cpus().count()), (96, 80));
    assert_eq!(dell_madt.io_apics[4], IoApic { id: 4, address: 0xFECC_0000, gsi_base: 0x80 });
    assert_eq!(dell.hpet.map(|h| (h.comparators, h.counter_64bit, h.pci_vendor_id)), Some((8, true, 0x8086)));
    assert_eq!(dell.mcfg[0].bus_end, 0xFF);
    let (_, _, hp) = &compared[1];
    assert_eq!(hp.mcfg[0].bus_end, 0x3F);
    assert_eq!(hp.hpet.map(|h| h.comparators), Some(3));
    let (_, quanta_entries, quanta) = &compared[2];
    assert_eq!(*quanta_entries, 19);
    assert_eq!(quanta.madt.as_ref().map(|m| m.local_apic_nmis.len()), Some(8));
}

#[test]
fn synthetic_madt_with_every_x86_entry_type_matches_iasl() {
    // The real tables hold only types 0, 1, 2 and 4; this covers 3, 5, 9 and 0x0A against iasl
    // too. (This iasl predates the Multiprocessor Wakeup structure, so that one is left out.)
    let bytes = madt(
        5,
        0xFEE0_0000,
        1,
        &[
            lapic(1, 0, 0b01),
            lapic(2, 1, 0b10),
            lapic(3, 0xFF, 0b00),
            x2apic(0x1_0000, 0b01, 0x400),
            x2apic(0x1_0001, 0b10, 0x401),
            io_apic(0, 0xFEC0_0000, 0),
            io_apic(1, 0xFEC0_1000, 24),
            iso(0, 0, 2, 0),
            iso(0, 9, 9, 0b1111),
            nmi_source(0b0111, 30),
            lapic_nmi(0xFF, 0b0101, 1),
            lapic_nmi(2, 0, 0),
            x2apic_nmi(0b1101, 0xFFFF_FFFF, 1),
            x2apic_nmi(0, 0x401, 0),
            lapic_address_override(0x1_FEE0_0000),
        ],
    );
    let mut warnings = Vec::new();
    let parsed = Table::from_bytes(0x1000, &bytes, madt::MADT_FIXED_LEN)
        .and_then(|table| MadtInfo::parse(&table, &mut warnings))
        .expect("synthetic MADT parses");
    assert_eq!(warnings, Vec::<String>::new());
    assert_eq!(compare_madt_with_iasl("synthetic MADT", &bytes, &parsed), 15);
}

#[test]
fn mutated_real_madts_never_panic_or_hang() {
    for server in SERVERS {
        let original = table(&server_tables(server), "apic").to_vec();
        let outcomes = within(Duration::from_secs(120), move || {
            let mut outcomes = BTreeSet::new();
            for position in sdt::SDT_HEADER_LEN..original.len() {
                for value in [0x00, 0x01, 0x02, 0x0A, 0x10, 0x7F, 0xFF] {
                    let mut bytes = original.clone();
                    bytes[position] = value;
                    refix_sdt_checksum(&mut bytes);
                    let mut warnings = Vec::new();
                    let result = Table::from_bytes(0x1000, &bytes, madt::MADT_FIXED_LEN)
                        .and_then(|table| MadtInfo::parse(&table, &mut warnings));
                    outcomes.insert(match result {
                        Ok(_) if warnings.is_empty() => "ok",
                        Ok(_) => "ok with warnings",
                        Err(AcpiError::MadtEntryTooShort { .. }) => "entry too short",
                        Err(AcpiError::MadtEntryOverrun { .. }) => "entry overrun",
                        Err(_) => "other error",
                    });
                }
            }
            outcomes
        });
        // Mutating length bytes must have produced both kinds of entry error.
        for expected in ["ok", "ok with warnings", "entry too short", "entry overrun"] {
            assert!(outcomes.contains(expected), "{server}: no mutation gave {expected:?}: {outcomes:?}");
        }
    }
}

// --- DMAR ---

/// Our DMAR as the (name, value) lines iasl prints for the same fields, in table order (type
/// names and flag decodings after a value's first word are iasl's own; reserved bytes left out).
fn dmar_as_iasl_lines(d: &dmar::Dmar, bytes: &[u8]) -> Fields {
    let mut out: Fields = vec![
        ("Host Address Width".into(), format!("{:02X}", d.host_address_width)),
        ("Flags".into(), format!("{:02X}", d.flags)),
    ];
    fn scopes(out: &mut Fields, scopes: &[dmar::DeviceScope]) {
        for s in scopes {
            out.push(("Device Scope Type".into(), format!("{:02X}", s.kind.raw())));
            out.push(("Entry Length".into(), format!("{:02X}", 6 + 2 * s.path.len())));
            out.push(("Enumeration ID".into(), format!("{:02X}", s.enumeration_id)));
            out.push(("PCI Bus Number".into(), format!("{:02X}", s.start_bus)));
            for (device, function) in &s.path {
                out.push(("PCI Path".into(), format!("{device:02X},{function:02X}")));
            }
        }
    }
    // Structures in table order: walk the raw types and take the next decoded one of each.
    let (mut u, mut r, mut a, mut h) = (0, 0, 0, 0);
    let mut at = dmar::DMAR_FIXED_LEN;
    while at + 4 <= bytes.len() {
        let kind = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let length = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]);
        out.push(("Subtable Type".into(), format!("{kind:04X}")));
        out.push(("Length".into(), format!("{length:04X}")));
        match kind {
            0 => {
                let unit = &d.units[u];
                u += 1;
                out.push(("Flags".into(), format!("{:02X}", unit.flags)));
                out.push(("PCI Segment Number".into(), format!("{:04X}", unit.segment)));
                out.push(("Register Base Address".into(), format!("{:016X}", unit.register_base)));
                scopes(&mut out, &unit.scopes);
            }
            1 => {
                let region = &d.reserved[r];
                r += 1;
                out.push(("PCI Segment Number".into(), format!("{:04X}", region.segment)));
                out.push(("Base Address".into(), format!("{:016X}", region.base)));
                out.push(("End Address (limit)".into(), format!("{:016X}", region.limit)));
                scopes(&mut out, &region.scopes);
            }
            2 => {
                let ats = &d.ats[a];
                a += 1;
                out.push(("Flags".into(), format!("{:02X}", ats.flags)));
                out.push(("PCI Segment Number".into(), format!("{:04X}", ats.segment)));
                scopes(&mut out, &ats.scopes);
            }
            3 => {
                let rhsa = &d.affinity[h];
                h += 1;
                out.push(("Register Base Address".into(), format!("{:016X}", rhsa.register_base)));
                out.push(("Proximity Domain".into(), format!("{:08X}", rhsa.proximity_domain)));
            }
            _ => {}
        }
        at += usize::from(length);
    }
    out
}

/// The fields of iasl's DMAR disassembly that [`dmar_as_iasl_lines`] produces, first word of
/// each value.
fn iasl_dmar_lines(label: &str, bytes: &[u8]) -> Fields {
    let keep = [
        "Host Address Width",
        "Flags",
        "Subtable Type",
        "Length",
        "PCI Segment Number",
        "Register Base Address",
        "Base Address",
        "End Address (limit)",
        "Proximity Domain",
        "Device Scope Type",
        "Entry Length",
        "Enumeration ID",
        "PCI Bus Number",
        "PCI Path",
    ];
    iasl_fields(label, bytes)
        .into_iter()
        .filter(|(name, _)| keep.contains(&name.as_str()))
        .map(|(name, value)| {
            let first = value.split_whitespace().next().unwrap_or("").to_string();
            (name, first)
        })
        .collect()
}

#[test]
fn real_dmars_match_iasl() {
    let mut units = 0;
    let mut scopes = 0;
    for server in SERVERS {
        let tables = server_tables(server);
        let bytes = table(&tables, "dmar");
        let t = Table::from_bytes(0x1000, bytes, dmar::DMAR_FIXED_LEN).expect("a valid DMAR");
        let d = dmar::parse_dmar(&t).unwrap_or_else(|e| panic!("{server}: {e}"));
        let ours = dmar_as_iasl_lines(&d, bytes);
        let theirs = iasl_dmar_lines(server, bytes);
        assert_eq!(ours, theirs, "{server}: our DMAR and iasl's differ");
        assert!(!d.units.is_empty(), "{server}: {d}");
        assert!(d.units.iter().any(|u| u.includes_all()), "{server}: one unit covers the rest: {d}");
        units += d.units.len();
        scopes += d.units.iter().map(|u| u.scopes.len()).sum::<usize>();
    }
    // What the three servers' tables hold (iasl agrees line by line above).
    assert_eq!((units, scopes), (6, 18), "remapping units and their device scopes over the three servers");
}

#[test]
fn mutated_real_dmars_never_panic() {
    for server in SERVERS {
        let original = table(&server_tables(server), "dmar").to_vec();
        let outcomes = within(Duration::from_secs(120), move || {
            let mut outcomes = BTreeSet::new();
            for position in sdt::SDT_HEADER_LEN..original.len() {
                for value in [0x00, 0x01, 0x05, 0x07, 0x10, 0x7F, 0xFF] {
                    let mut bytes = original.clone();
                    bytes[position] = value;
                    refix_sdt_checksum(&mut bytes);
                    let result = Table::from_bytes(0x1000, &bytes, dmar::DMAR_FIXED_LEN)
                        .map_err(|_| "table")
                        .and_then(|t| dmar::parse_dmar(&t).map_err(|_| "dmar"));
                    outcomes.insert(match result {
                        Ok(_) => "ok",
                        Err(e) => e,
                    });
                }
            }
            outcomes
        });
        assert!(outcomes.contains("ok") && outcomes.contains("dmar"), "{server}: {outcomes:?}");
    }
}

// --- IVRS ---

/// An IVRS as ACPICA's data-table compiler source (`iasl -T IVRS`'s format) with values in
/// every field: an IVHD 11h (EFR image) with 4- and 8-byte device entries (range, select, alias,
/// extended select, special IOAPIC and HPET), an IVHD 10h on segment 1, IVMD 21h and 22h. None
/// of the real servers here is an AMD machine, so iasl compiles this for the comparison.
const IVRS_SOURCE: &str = include_str!("ivrs_test.asl");

/// Compiles ACPICA data-table source with `iasl`; the table's bytes.
fn iasl_compile(source: &str) -> Vec<u8> {
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "kernel-acpi-iasl-compile-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    std::fs::write(dir.join("table.asl"), source).expect("write source");
    let iasl = std::env::var_os("IASL").unwrap_or_else(|| "iasl".into());
    let out = Command::new(&iasl).arg("table.asl").current_dir(&dir).output().unwrap_or_else(|e| {
        panic!("running iasl ({e}): Debian package acpica-tools; this test compares against it and must not be skipped")
    });
    let bytes = std::fs::read(dir.join("table.aml"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "iasl could not compile the IVRS source:\n{}", String::from_utf8_lossy(&out.stdout));
    bytes.expect("iasl wrote table.aml")
}

fn ivrs_as_iasl_lines(v: &ivrs::Ivrs, bytes: &[u8]) -> Fields {
    let mut out: Fields = vec![("Virtualization Info".into(), format!("{:08X}", v.info))];
    let (mut h, mut m) = (0, 0);
    let mut at = ivrs::IVRS_FIXED_LEN;
    while at + 4 <= bytes.len() {
        let kind = bytes[at];
        let length = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]);
        match kind {
            0x10 | 0x11 | 0x40 => {
                let b = &v.hardware[h];
                h += 1;
                out.push(("Subtable Type".into(), format!("{:02X}", b.kind)));
                out.push(("Flags".into(), format!("{:02X}", b.flags)));
                out.push(("Length".into(), format!("{length:04X}")));
                out.push(("DeviceId".into(), format!("{:04X}", b.device_id)));
                out.push(("Capability Offset".into(), format!("{:04X}", b.capability_offset)));
                out.push(("Base Address".into(), format!("{:016X}", b.base_address)));
                out.push(("PCI Segment Group".into(), format!("{:04X}", b.segment)));
                out.push(("Virtualization Info".into(), format!("{:04X}", b.info)));
                let name = if b.kind == 0x10 { "Feature Reporting" } else { "Attributes" };
                out.push((name.into(), format!("{:08X}", b.features)));
                if let Some(efr) = b.efr {
                    out.push(("EFR Image".into(), format!("{efr:016X}")));
                }
                for e in &b.entries {
                    out.push(("Entry Type".into(), format!("{:02X}", e.kind)));
                    out.push(("Device ID".into(), format!("{:04X}", e.device_id)));
                    out.push(("Data Setting".into(), format!("{:02X}", e.data)));
                    match &e.extra {
                        ivrs::EntryExtra::Alias { source } => {
                            out.push(("Source Used Device ID".into(), format!("{source:04X}")))
                        }
                        ivrs::EntryExtra::Extended { data } => {
                            out.push(("Extended Data".into(), format!("{data:08X}")))
                        }
                        ivrs::EntryExtra::Special { handle, source, variety } => {
                            out.push(("Handle".into(), format!("{handle:02X}")));
                            out.push(("Source Used Device ID".into(), format!("{source:04X}")));
                            out.push(("Variety".into(), format!("{variety:02X}")));
                        }
                        _ => {}
                    }
                }
            }
            0x20..=0x22 => {
                let b = &v.memory[m];
                m += 1;
                out.push(("Subtable Type".into(), format!("{:02X}", b.kind)));
                out.push(("Flags".into(), format!("{:02X}", b.flags)));
                out.push(("Length".into(), format!("{length:04X}")));
                out.push(("DeviceId".into(), format!("{:04X}", b.device_id)));
                out.push(("Auxiliary Data".into(), format!("{:04X}", b.aux)));
                out.push(("Start Address".into(), format!("{:016X}", b.start)));
                out.push(("Memory Length".into(), format!("{:016X}", b.length)));
            }
            _ => {}
        }
        at += usize::from(length);
    }
    out
}

#[test]
fn a_compiled_ivrs_matches_iasl() {
    let bytes = iasl_compile(IVRS_SOURCE);
    let t = Table::from_bytes(0x1000, &bytes, ivrs::IVRS_FIXED_LEN).expect("a valid IVRS");
    let v = ivrs::parse_ivrs(&t).unwrap_or_else(|e| panic!("{e}"));
    let header = [
        "Signature",
        "Table Length",
        "Revision",
        "Checksum",
        "Oem ID",
        "Oem Table ID",
        "Oem Revision",
        "Asl Compiler ID",
        "Asl Compiler Revision",
        "Reserved",
    ];
    let theirs: Fields = iasl_fields("IVRS", &bytes)
        .into_iter()
        // The disassembly's own comment line ("* Format: ... FieldName : FieldValue") is no field.
        .filter(|(name, _)| !header.contains(&name.as_str()) && !name.starts_with('*'))
        .map(|(name, value)| {
            let first = value.split_whitespace().next().unwrap_or("").to_string();
            (name, first)
        })
        .collect();
    assert_eq!(ivrs_as_iasl_lines(&v, &bytes), theirs, "our IVRS and iasl's differ");
    assert_eq!((v.hardware.len(), v.memory.len()), (2, 2));
    assert_eq!(v.hardware[0].entries.len(), 7);
    assert!(matches!(v.hardware[0].entries[5].extra, ivrs::EntryExtra::Special { handle: 0x21, variety: 1, .. }));
}

#[test]
fn mutated_ivrs_never_panics() {
    let original = iasl_compile(IVRS_SOURCE);
    let mut outcomes = BTreeSet::new();
    for position in sdt::SDT_HEADER_LEN..original.len() {
        for value in [0x00, 0x01, 0x04, 0x08, 0x10, 0x40, 0x7F, 0xF0, 0xFF] {
            let mut bytes = original.clone();
            bytes[position] = value;
            refix_sdt_checksum(&mut bytes);
            let result = Table::from_bytes(0x1000, &bytes, ivrs::IVRS_FIXED_LEN)
                .map_err(|_| "table")
                .and_then(|t| ivrs::parse_ivrs(&t).map_err(|_| "ivrs"));
            outcomes.insert(match result {
                Ok(_) => "ok",
                Err(e) => e,
            });
        }
    }
    assert!(outcomes.contains("ok") && outcomes.contains("ivrs"), "{outcomes:?}");
}
