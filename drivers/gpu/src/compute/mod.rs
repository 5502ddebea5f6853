//! Compute engine: launch descriptors (QMD).
pub mod qmd;
pub mod launch;
