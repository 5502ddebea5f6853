//! ACPI platform tables (placeholder until written).
