//! Loader entry and BootInfo handoff (being written).
#![cfg_attr(not(test), no_std)]
