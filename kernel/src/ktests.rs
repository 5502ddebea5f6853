//! The in-kernel test cases (run with the `test` command-line word under QEMU).

// unsafe here: the in-kernel tests fault, trap and poke device registers on purpose.
#![allow(unsafe_code)]

mod gpu;
mod pci;
mod platform;
