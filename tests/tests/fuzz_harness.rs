//! The fuzz harnesses outside the fuzzer: every target has its binary in `fuzz/`, its seeds
//! from real artifacts reach past the parsers' first checks, each harness survives its seeds
//! and a fixed set of mutations of them, and every crash the fuzzer found (`fuzz/regressions/`)
//! stays fixed. `cargo xtask fuzz` does the coverage-guided part.

use std::path::{Path, PathBuf};

use tests::fuzz::{target, TARGETS};
use tests::fuzz_seeds::seeds;
use tests::rng::Rng;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

#[test]
fn every_target_has_its_binary_and_nothing_else_is_there() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for t in TARGETS {
        let source = std::fs::read_to_string(fuzz_dir().join(format!("fuzz_targets/{}.rs", t.name)))
            .unwrap_or_else(|e| panic!("fuzz/fuzz_targets/{}.rs: {e}", t.name));
        assert!(source.contains(&format!("tests::fuzz::{}(data)", t.name)), "{} does not run its harness", t.name);
        assert!(manifest.contains(&format!("name = \"{}\"", t.name)), "fuzz/Cargo.toml lacks the bin {}", t.name);
    }
    for entry in std::fs::read_dir(fuzz_dir().join("fuzz_targets")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        assert!(target(&name).is_some(), "fuzz/fuzz_targets/{name}.rs has no harness in tests::fuzz::TARGETS");
    }
}

/// Every target has seeds, and none of their sources is missing (real data comes from
/// `scripts/fetch-real-data.sh`, cubins from `scripts/fetch-cuda-tools.sh`).
#[test]
fn every_target_has_seeds_from_every_source() {
    let mut problems = Vec::new();
    for t in TARGETS {
        let (found, missing) = seeds(t.name);
        if found.is_empty() {
            problems.push(format!("{}: no seeds", t.name));
        }
        problems.extend(missing.into_iter().map(|m| format!("{}: {m}", t.name)));
    }
    assert!(problems.is_empty(), "seeds missing:\n  {}", problems.join("\n  "));
}

fn seed_named<'a>(seeds: &'a [(String, Vec<u8>)], prefix: &str) -> &'a [u8] {
    &seeds.iter().find(|(n, _)| n.starts_with(prefix)).unwrap_or_else(|| panic!("no seed {prefix}*")).1
}

/// Seeds that the parsers refuse at the first check would leave the fuzzer to find the format
/// on its own: these are checked to get through.
#[test]
fn seeds_get_past_the_first_checks() {
    use nvgpu::firmware::GspElf;
    use nvgpu::gsp::fw::msgq::verify_element;

    let (firmware, _) = seeds("firmware");
    let small = seed_named(&firmware, "small-gsp_tu10x");
    assert!(small.len() < 64 << 10, "the rebuilt GSP-RM ELF is {} bytes", small.len());
    let elf = GspElf::parse(small).expect("the rebuilt GSP-RM ELF parses");
    assert_eq!(elf.checked_version().expect("and carries its version"), "535.261.03");

    let (platform, _) = seeds("acpi_platform");
    for (name, seed) in &platform {
        let memory = tests::fuzz::FuzzMemory { base: tests::fuzz::ACPI_BASE, bytes: &seed[1..] };
        let tables =
            kernel::acpi::parse_platform(&memory, tests::fuzz::ACPI_BASE).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(tables.madt.is_some() && !tables.mcfg.is_empty(), "{name}: {:?}", tables.warnings);
    }

    let (records, _) = seeds("gsp_rpc");
    for (name, seed) in records.iter().filter(|(n, _)| n.ends_with("-0")) {
        verify_element(&seed[1..]).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let (rpc, _) = seeds("gsp_rpc");
    let sequencer = seed_named(&rpc, "sequencer-0");
    let received = verify_element(&sequencer[1..]).unwrap();
    let buffer = nvgpu::gsp::sequencer::SequencerBuffer::decode(received.params).expect("the sequencer seed decodes");
    assert_eq!(buffer.commands.len(), 3);

    let (queues, _) = seeds("gsp_queue");
    for (name, seed) in &queues {
        let count: usize = name.split('-').nth(1).unwrap().parse().unwrap();
        assert_eq!(tests::fuzz::gsp_queue_messages(seed), count, "{name}");
    }

    let (faults, _) = seeds("fault_buffer");
    let packets = seed_named(&faults, "model-faults");
    let count = u32::from_le_bytes(packets[4..8].try_into().unwrap());
    assert_eq!(count, 12);
    for raw in packets[10..].chunks_exact(32) {
        uvm::fault::FaultEntry::decode(raw.try_into().unwrap()).expect("the model's packets decode");
    }

    // The COT seeds reach the model FSP's COT check (a whole message assembled from the
    // packets), whose reply the driver reads as a command response.
    let (fsp, _) = seeds("fsp");
    for channel in [1024, 256, 64] {
        let seed = seed_named(&fsp, &format!("cot-{channel}"));
        let mut state = sim::gsp_rm::fsp::FspState::default();
        let mut rest = seed;
        let mut replies = Vec::new();
        while let [lo, hi, tail @ ..] = rest {
            let (packet, next) = tail.split_at(usize::from(u16::from_le_bytes([*lo, *hi])));
            replies.extend(state.packet(packet, None, 1 << 34, false, false).reply);
            rest = next;
        }
        assert_eq!(state.received.len(), 1, "cot-{channel}: one message");
        assert_eq!(state.received[0][0], nvgpu::hw::fw::fsp::NVDM_TYPE_COT);
        assert_eq!(replies.len(), 1, "cot-{channel}: one reply");
        // No system memory behind the addresses: the FSP refuses with INVALID_DATA.
        assert!(matches!(
            nvgpu::gsp::boot::fsp::check_response(&replies[0][7..]),
            Err(nvgpu::gsp::boot::fsp::FspError::CommandFailed { .. })
        ));
    }
}

/// A mutant of `seed`: a few bytes overwritten (often with boundary values), sometimes cut short.
fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut m = seed.to_vec();
    if m.is_empty() {
        return m;
    }
    for _ in 0..1 + rng.below(8) as usize {
        let at = rng.below(m.len() as u64) as usize;
        m[at] = match rng.below(4) {
            0 => 0,
            1 => 0xff,
            2 => m[at] ^ (1 << rng.below(8)),
            _ => rng.next_u64() as u8,
        };
    }
    if rng.below(4) == 0 {
        let keep = rng.below(m.len() as u64) as usize;
        m.truncate(keep);
    }
    m
}

/// Each harness on each seed, and on 32 mutants of each; a panic (or overflow) fails the test.
#[test]
fn harnesses_survive_their_seeds_and_mutants() {
    let mut runs = 0;
    for t in TARGETS {
        let (found, _) = seeds(t.name);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for (name, seed) in &found {
            let seed = &seed[..seed.len().min(t.max_len)];
            let result = std::panic::catch_unwind(|| (t.run)(seed));
            assert!(result.is_ok(), "{} panicked on seed {name}", t.name);
            for _ in 0..32 {
                let mutant = mutate(seed, &mut rng);
                let copy = mutant.clone();
                let result = std::panic::catch_unwind(move || (t.run)(&copy));
                if result.is_err() {
                    let path = std::env::temp_dir().join(format!("fuzz-mutant-{}-{name}", t.name));
                    let _ = std::fs::write(&path, &mutant);
                    panic!("{} panicked on a mutant of {name}, written to {}", t.name, path.display());
                }
                runs += 1;
            }
        }
    }
    println!("{runs} mutants run");
}

/// Every input in `fuzz/regressions/TARGET/` (crashes the fuzzer found, minimised) runs clean.
#[test]
fn fuzz_regressions_stay_fixed() {
    let dir = fuzz_dir().join("regressions");
    let mut count = 0;
    for target_dir in std::fs::read_dir(&dir).expect("fuzz/regressions").flatten() {
        if !target_dir.path().is_dir() {
            continue;
        }
        let name = target_dir.file_name().to_string_lossy().into_owned();
        let t = target(&name).unwrap_or_else(|| panic!("fuzz/regressions/{name}: no such target"));
        for input in std::fs::read_dir(target_dir.path()).unwrap().flatten() {
            if input.file_name().to_string_lossy().ends_with(".md") {
                continue;
            }
            let bytes = std::fs::read(input.path()).unwrap();
            let result = std::panic::catch_unwind(|| (t.run)(&bytes));
            assert!(result.is_ok(), "{name} still panics on {}", input.path().display());
            count += 1;
        }
    }
    println!("{count} regression inputs");
}
