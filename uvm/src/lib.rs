//! Unified memory (va_space, va_range, 2 MB va_block, fault service). Not started yet: see the
//! UVM issue. The crate exists so the workspace has the layout of the design card.
#![no_std]
