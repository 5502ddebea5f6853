//! Fuzz target `payload`: the harness `tests::fuzz::payload` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::payload(data));
