//! Fuzz target `fsp`: the harness `tests::fuzz::fsp` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::fsp(data));
