//! Shared helpers for the integration tests in `tests/tests/`.

pub mod rm_c;
pub mod ptx_build;
