//! Kernel command line.
