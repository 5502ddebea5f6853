//! Shared helpers for the integration tests in `tests/tests/`.

pub mod edid_decode;
pub mod fuzz;
pub mod fuzz_seeds;
pub mod fwsec_frts;
pub mod model_boot;
pub mod native;
pub mod ptx_build;
pub mod rm_c;
pub mod rng;
pub mod skips;
