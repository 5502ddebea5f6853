//! Fuzz target `acpi_table`: the harness `tests::fuzz::acpi_table` (see tests/fuzz.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tests::fuzz::acpi_table(data));
