//! Fuzz target `pushbuffer`: the harness `tests::fuzz::pushbuffer` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::pushbuffer(data));
