//! Layout tables: a firmware-ABI or RM structure's size, alignment and fields, and a constant's
//! value, under NVIDIA's names, so that tests can compare them with what the C compiler makes of
//! NVIDIA's headers (`tests/tests/gsp_layout.rs`, `gsp_rpc_layout.rs`, `fw_layout.rs`).
//!
//! Offsets and sizes are taken from the Rust types themselves (`offset_of!`, `size_of`), so a
//! table entry cannot drift from the structure it describes. C field names are as `offsetof`
//! takes them: members of anonymous unions by their own name, members of named nested structs
//! with a dot (`profilerArgs.pa`). A field of size 0 is a flexible array member.

use core::mem::size_of;

use super::Header;

/// One field of a C struct: its name as `offsetof` takes it, byte offset and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldLayout {
    /// The C member designator, e.g. `sysmemAddrOfRadix3Elf` or `profilerArgs.pa`.
    pub c_name: &'static str,
    /// `offsetof(struct, field)`.
    pub offset: usize,
    /// `sizeof` the field; 0 for a flexible array member.
    pub size: usize,
}

/// One C struct: its typedef name, header, size, alignment and fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StructLayout {
    /// The C type name, e.g. `GspFwWprMeta`.
    pub c_name: &'static str,
    /// The Rust type implementing it.
    pub rust_name: &'static str,
    /// Where NVIDIA defines it.
    pub header: Header,
    /// `sizeof`.
    pub size: usize,
    /// `_Alignof`.
    pub align: usize,
    /// Every member, in declaration order (both views of each union).
    pub fields: &'static [FieldLayout],
}

/// A constant or enumerator the GSP structures use, with the value we use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstantFact {
    /// NVIDIA's name (a `#define` or an enumerator).
    pub c_name: &'static str,
    /// Where NVIDIA defines it.
    pub header: Header,
    /// Our value.
    pub value: u64,
}

/// `size_of` the target of a field projection, for a field named by a closure.
pub const fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// A structure's layout for the header comparison, fields listed as `"cName" => rust_field`:
/// the table form every layout module uses (`rm::fifo`, `rm::intr`, `hw::fw::fsp`, ...); a field of
/// a nested structure is written `outer.inner`.
macro_rules! c_struct {
    ($c:literal, $ty:ident, $header:expr, [$($cf:literal => $f:ident $(.$g:ident)?),* $(,)?]) => {
        $crate::hw::layout::StructLayout {
            c_name: $c,
            rust_name: stringify!($ty),
            header: $header,
            size: core::mem::size_of::<$ty>(),
            align: core::mem::align_of::<$ty>(),
            fields: &[$($crate::hw::layout::FieldLayout {
                c_name: $cf,
                offset: core::mem::offset_of!($ty, $f $(.$g)?),
                size: $crate::hw::layout::field_size(|s: &$ty| &s.$f $(.$g)?),
            }),*],
        }
    };
}
pub(crate) use c_struct;

/// A constant under NVIDIA's name, for the header comparison.
macro_rules! c_constant {
    ($c:literal, $header:expr, $v:expr) => {
        $crate::hw::layout::ConstantFact { c_name: $c, header: $header, value: $v as u64 }
    };
}
pub(crate) use c_constant;
