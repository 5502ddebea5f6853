//! Compute engine: launch descriptors (QMD), launches, the context's memory configuration.
pub mod launch;
pub mod memory;
pub mod qmd;
