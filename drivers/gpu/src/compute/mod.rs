//! Compute engine: launch descriptors (QMD), launches, the context's memory configuration.
pub mod qmd;
pub mod launch;
pub mod memory;
