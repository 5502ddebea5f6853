//! The in-kernel test cases (run with the `test` command-line word under QEMU).

mod gpu;
mod pci;
mod platform;
