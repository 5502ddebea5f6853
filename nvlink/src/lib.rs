//! NVLink discovery, training and peer mappings. Not started yet: see the NVLink issue.
//! The crate exists so the workspace has the layout of the design card.
#![no_std]
