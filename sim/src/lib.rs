//! The GPU model (see ../shared/DESIGN.md, "The GPU model"). no_std + alloc.
#![cfg_attr(not(test), no_std)]
extern crate alloc;
