//! Fuzz target `fault_buffer`: the harness `tests::fuzz::fault_buffer` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::fault_buffer(data));
