//! Fuzz target `acpi_platform`: the harness `tests::fuzz::acpi_platform` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::acpi_platform(data));
