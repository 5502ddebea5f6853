//! Fuzz target `gsp_rpc`: the harness `tests::fuzz::gsp_rpc` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::gsp_rpc(data));
