//! PCI enumeration (placeholder until written).
