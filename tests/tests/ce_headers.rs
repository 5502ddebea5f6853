//! The copy engine facts: every later DMA copy class agrees with TURING_DMA_COPY_A on each fact
//! both define, except the differences `nvgpu::hw::ce` documents; so code written against
//! Turing's positions is right for every class. (The values themselves are checked against the
//! headers by `header_conformance`.)

use std::collections::BTreeMap;

use nvgpu::hw::{self, ce, FactValue};

fn facts(tables: &[&[hw::FactGroup]]) -> BTreeMap<String, FactValue> {
    tables
        .iter()
        .flat_map(|t| t.iter())
        .flat_map(|g| g.iter())
        .flat_map(|f| f.iter())
        .map(|f| (f.name[7..].to_owned(), f.value))
        .collect()
}

#[test]
fn later_classes_differ_from_turing_only_where_documented() {
    let turing = facts(&[ce::method::FACTS, ce::FACTS, ce::VALUE_FACTS, ce::PHYS_MODE_TARGET_FACTS]);
    assert!(turing.len() > 120, "{}", turing.len());
    let wide = ["SET_SEMAPHORE_A_UPPER", "OFFSET_IN_UPPER_UPPER", "OFFSET_OUT_UPPER_UPPER"];
    for (class, table, differences) in [
        ("C6B5", ce::ampere_a::FACTS, &[][..]),
        ("C7B5", ce::ampere_b::FACTS, &[][..]),
        ("C8B5", ce::hopper::FACTS, &[&wide[..], &["LAUNCH_DMA_VPRMODE"]].concat()[..]),
        ("C9B5", ce::blackwell_a::FACTS, &[&wide[..], &["LAUNCH_DMA_VPRMODE"]].concat()[..]),
        ("CAB5", ce::blackwell_b::FACTS, &[&wide[..], &["LAUNCH_DMA_VPRMODE"]].concat()[..]),
    ] {
        let later = facts(&[table]);
        let mut shared = 0;
        let mut differing = Vec::new();
        for (name, value) in &later {
            if let Some(t) = turing.get(name) {
                shared += 1;
                if t != value {
                    differing.push(name.as_str());
                }
            }
        }
        differing.sort();
        let mut expected = differences.to_vec();
        expected.sort();
        assert_eq!(differing, expected, "{class}");
        assert!(shared > 100, "{class}: {shared}");
        if class != "C6B5" {
            // 64-bit payloads: PAYLOAD_UPPER right after PAYLOAD, SIZE one bit, ONE_WORD 0, TWO_WORD 1.
            assert_eq!(later["SET_SEMAPHORE_PAYLOAD_UPPER"], FactValue::Number(0x24c), "{class}");
            assert_eq!(later["LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE"], FactValue::Bits { hi: 27, lo: 27 }, "{class}");
            assert_eq!(later["LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_ONE_WORD"], FactValue::Number(0), "{class}");
            assert_eq!(later["LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD"], FactValue::Number(1), "{class}");
            assert_eq!(
                later["LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_NO_TIMESTAMP"],
                FactValue::Number(1),
                "{class}"
            );
            assert_eq!(
                later["LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_SEMAPHORE_WITH_TIMESTAMP"],
                FactValue::Number(2),
                "{class}"
            );
            assert_eq!(later["LAUNCH_DMA_SEMAPHORE_REDUCTION_FMIN"], FactValue::Number(0xb), "{class}");
        }
        // Peer apertures: the same fields in every class that has them, for source and destination.
        for side in ["SRC", "DST"] {
            assert_eq!(later[&format!("SET_{side}_PHYS_MODE_TARGET_PEERMEM")], FactValue::Number(3), "{class}");
            assert_eq!(later[&format!("SET_{side}_PHYS_MODE_PEER_ID")], FactValue::Bits { hi: 8, lo: 6 }, "{class}");
            assert_eq!(later[&format!("SET_{side}_PHYS_MODE_FLA")], FactValue::Bits { hi: 9, lo: 9 }, "{class}");
        }
        if class >= "C8B5" {
            assert_eq!(later["SET_SEMAPHORE_A_UPPER"], FactValue::Bits { hi: 24, lo: 0 }, "{class}");
            assert_eq!(later["LAUNCH_DMA_COPY_TYPE"], FactValue::Bits { hi: 21, lo: 20 }, "{class}");
            assert_eq!(later["LAUNCH_DMA_VPRMODE"], FactValue::Bits { hi: 22, lo: 22 }, "{class}");
        }
        // Only the Blackwell classes lack FORCE_RMWDISABLE.
        assert_eq!(later.contains_key("LAUNCH_DMA_FORCE_RMWDISABLE"), class < "C9B5", "{class}");
    }
}

#[test]
fn copy_engine_facts_are_in_the_conformance_tables() {
    let names: std::collections::BTreeSet<_> = hw::all_facts().map(|f| f.name).collect();
    for name in [
        "TURING_DMA_COPY_A",
        "NVC5B5_LAUNCH_DMA",
        "NVC5B5_LAUNCH_DMA_MULTI_LINE_ENABLE",
        "NVC5B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE_FOUR",
        "NVC5B5_SET_DST_PHYS_MODE_TARGET_COHERENT_SYSMEM",
        "NVC6B5_SET_SRC_PHYS_MODE_TARGET_PEERMEM",
        "NVC7B5_SET_SEMAPHORE_PAYLOAD_UPPER",
        "NVC8B5_OFFSET_OUT_UPPER_UPPER",
        "NVC9B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE",
        "NVCAB5_LAUNCH_DMA_DATA_TRANSFER_TYPE_PREFETCH",
    ] {
        assert!(names.contains(name), "{name}");
    }
}
