//! Fuzz target `gsp_log`: the harness `tests::fuzz::gsp_log` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::gsp_log(data));
