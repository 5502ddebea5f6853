//! Fuzz target `vbios`: the harness `tests::fuzz::vbios` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::vbios(data));
