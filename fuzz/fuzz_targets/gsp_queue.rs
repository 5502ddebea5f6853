//! Fuzz target `gsp_queue`: the harness `tests::fuzz::gsp_queue` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::gsp_queue(data));
