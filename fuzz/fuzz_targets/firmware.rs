//! Fuzz target `firmware`: the harness `tests::fuzz::firmware` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::firmware(data));
