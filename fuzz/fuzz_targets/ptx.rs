//! Fuzz target `ptx`: the harness `tests::fuzz::ptx` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::ptx(data));
