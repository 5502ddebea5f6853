//! The kernel's host-testable core: table parsing and enumeration logic that does not touch
//! the machine directly. The binary (`main.rs`) supplies the machine access (ports, MMIO,
//! physical memory) through the traits defined here, and host tests supply fakes or real
//! firmware tables.
#![cfg_attr(not(test), no_std)]
extern crate alloc;

pub mod acpi;
pub mod cmdline;
pub mod pci;
pub mod timeline;
