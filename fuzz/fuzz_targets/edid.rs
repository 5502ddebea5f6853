//! Fuzz target `edid`: the harness `tests::fuzz::edid` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::edid(data));
