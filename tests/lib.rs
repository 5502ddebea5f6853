//! Shared helpers for the integration tests in `tests/tests/`.

pub mod model_boot;
pub mod rm_c;
pub mod ptx_build;
