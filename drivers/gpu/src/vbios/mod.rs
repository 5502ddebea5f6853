//! VBIOS parsing (placeholder until written).
