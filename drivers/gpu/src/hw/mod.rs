//! Hardware facts: register offsets, fields, values and class numbers, each under NVIDIA's name
//! and with the header it comes from (open-gpu-kernel-modules 535.261.03 unless a fact says
//! otherwise). The driver and the GPU model in `sim/` both import these; nothing is spelled twice.
//!
//! Registers are declarations (see [`registers!`]): a name, an address, and fields by bit range.
//! Each declaration also yields [`HeaderFact`]s, and `tests/tests/header_conformance.rs` checks
//! every one of them against the headers themselves, so a wrong number cannot hide here. Facts
//! are built nowhere else: the same test fails on a [`Header`] or [`HeaderFact`] built outside
//! this module, and on a header path written outside [`headers`].
//!
//! [`RegisterIo`] is the driver's register I/O boundary: the kernel implements it over a mapped
//! BAR0, the model implements it in software.

use core::fmt;
use core::marker::PhantomData;

pub mod boot;
pub mod bus;
pub mod ce;
pub mod classes;
pub mod compute;
pub mod engine;
pub mod falcon;
pub mod falcon2;
pub mod fault;
pub mod fb;
pub mod fw;
pub mod gc6;
pub mod headers;
pub mod host;
pub mod intr;
pub mod layout;
pub mod mmu;
pub mod pmc;
pub mod pramin;
pub mod pri;
pub mod qmd;
pub mod rm;
pub mod therm;
pub mod vbios;
pub mod vm;

pub use headers::Header;

/// 32-bit register access at byte offsets into one BAR (BAR0 for everything in this module).
///
/// Implementations decide how the access reaches the device (volatile MMIO, the GPU model, a
/// recording stub in tests); callers treat every value read as untrusted hardware input.
pub trait RegisterIo {
    /// Reads the 32-bit register at `offset` bytes into the BAR.
    fn read32(&self, offset: u32) -> u32;
    /// Writes `value` to the 32-bit register at `offset` bytes into the BAR.
    fn write32(&self, offset: u32, value: u32);
}

impl<T: RegisterIo + ?Sized> RegisterIo for &T {
    fn read32(&self, offset: u32) -> u32 {
        (**self).read32(offset)
    }
    fn write32(&self, offset: u32, value: u32) {
        (**self).write32(offset, value)
    }
}

/// The value a header gives a name, in the shapes NVIDIA's `#define`s take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FactValue {
    /// `#define NAME 0x1234`: an offset, a field value, a class number.
    Number(u64),
    /// `#define NAME hi:lo`: a field's bit range, or a unit's address range (`0x113fff:0x110000`).
    Bits { hi: u32, lo: u32 },
    /// `#define NAME(i) (base+(i)*stride)`: a register array.
    Indexed { base: u32, stride: u32 },
    /// The name only has to be defined (its value is a macro we do not evaluate, e.g. `MW(..)`).
    Defined,
}

/// One fact the driver relies on, as NVIDIA names it, and where to find it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HeaderFact {
    /// NVIDIA's name for it, e.g. `NV_PMC_BOOT_42_CHIP_ID`.
    pub name: &'static str,
    /// The header (and release) that defines it.
    pub header: Header,
    /// The value we use.
    pub value: FactValue,
}

/// A group of facts, as one declaration produces them (a register with its fields and values).
pub type FactGroup = &'static [&'static [HeaderFact]];

/// Every fact declared in this module, one table per declaration block. A new `registers!`,
/// `constants!` or value table goes here too, or the conformance test will not see it.
pub const FACT_TABLES: &[&[FactGroup]] = &[
    pmc::FACTS,
    pmc::r570::FACTS,
    pmc::ARCHITECTURE_FACTS,
    pmc::NV_ARCH_FACTS,
    bus::REGISTER_FACTS,
    bus::CONSTANT_FACTS,
    falcon::FACTS,
    falcon::tu102::FACTS,
    falcon::ga102::FACTS,
    falcon::gh100::FACTS,
    falcon::SIZE_FACTS,
    falcon2::FACTS,
    falcon2::VALUE_FACTS,
    boot::FUSE_FACTS,
    boot::DEBUG_FUSE_FACTS,
    boot::tu102::FACTS,
    boot::gh100::FACTS,
    boot::VALUE_FACTS,
    boot::FB_FACTS,
    boot::GH100_FALCON_FACTS,
    boot::PCFG_FACTS,
    engine::BASE_FACTS,
    engine::SIZE_FACTS,
    engine::FACTS,
    engine::gh100::FACTS,
    engine::gb202::FACTS,
    fb::FACTS,
    fb::ALIGNMENT_FACTS,
    fw::FACTS,
    fw::CHIP_FAMILY_FACTS,
    fw::fsp::FACTS,
    fw::fsp::FRTS_FACTS,
    gc6::CONSTANT_FACTS,
    gc6::FACTS,
    gc6::gh100::FACTS,
    therm::FACTS,
    therm::VALUE_FACTS,
    therm::gb100::FACTS,
    therm::gb202::FACTS,
    classes::FACTS,
    mmu::FACTS,
    host::RAM_FACTS,
    host::DMA_FACTS,
    host::DMA_CONSTANT_FACTS,
    host::GP_ENTRY_FACTS,
    host::GP_ENTRY_CONSTANT_FACTS,
    host::method::FACTS,
    host::METHOD_DATA_FACTS,
    host::METHOD_VALUE_FACTS,
    host::ampere::FACTS,
    host::hopper::FACTS,
    host::MEM_OP_FACTS,
    host::MEM_OP_GPC_VALUE_FACTS,
    host::ampere::MEM_OP_FACTS,
    host::hopper::MEM_OP_FACTS,
    host::hopper::MEM_OP_A_FACTS,
    host::hopper::mem_op::FACTS,
    vm::CONSTANT_FACTS,
    vm::FACTS,
    vm::FAULT_BUFFER_CONSTANT_FACTS,
    vm::FAULT_BUFFER_FACTS,
    vm::FAULT_BUFFER_LAYOUT_FACTS,
    vm::FAULT_BUFFER_LAYOUT_CONSTANT_FACTS,
    vm::gh100::FACTS,
    intr::CONSTANT_FACTS,
    intr::FACTS,
    pramin::FACTS,
    pramin::CONSTANT_FACTS,
    pri::FACTS,
    vbios::PCI_EXP_TABLE_FACTS,
    vbios::VENDOR_FACTS,
    vbios::IFR_FACTS,
    vbios::BIT_FACTS,
    vbios::FALCON_UCODE_DESC_FACTS,
    rm::ERROR_FACTS,
    rm::FACTS,
    fault::FACTS,
    fault::tu102::FACTS,
    fault::gh100::FACTS,
    fault::BUFFER_FACTS,
    fault::PACKET_FACTS,
    compute::FACTS,
    qmd::VERSION_FACTS,
    ce::method::FACTS,
    ce::FACTS,
    ce::VALUE_FACTS,
    ce::PHYS_MODE_TARGET_FACTS,
    ce::ampere_a::FACTS,
    ce::ampere_b::FACTS,
    ce::hopper::FACTS,
    ce::blackwell_a::FACTS,
    ce::blackwell_b::FACTS,
];

/// Iterates over every fact declared in `hw`.
pub fn all_facts() -> impl Iterator<Item = &'static HeaderFact> {
    FACT_TABLES.iter().flat_map(|module| module.iter()).flat_map(|group| group.iter()).flat_map(|facts| facts.iter())
}

/// A bit range `hi:lo` of a 32-bit register, as NVIDIA's headers write fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitRange {
    pub hi: u8,
    pub lo: u8,
}

impl BitRange {
    /// A range; `hi >= lo` and `hi < 32` are checked where declarations create ranges.
    pub const fn new(hi: u8, lo: u8) -> Self {
        Self { hi, lo }
    }

    /// Number of bits in the range.
    pub const fn width(self) -> u32 {
        (self.hi - self.lo) as u32 + 1
    }

    /// The range's bits set, in register position.
    pub const fn mask(self) -> u32 {
        let ones = if self.width() >= 32 { u32::MAX } else { (1u32 << self.width()) - 1 };
        ones << self.lo
    }

    /// The field's value, shifted down.
    pub const fn extract(self, raw: u32) -> u32 {
        (raw & self.mask()) >> self.lo
    }

    /// `raw` with the field replaced by `value`; bits of `value` beyond the width are dropped.
    pub const fn insert(self, raw: u32, value: u32) -> u32 {
        (raw & !self.mask()) | ((value << self.lo) & self.mask())
    }
}

/// A field of register `R` whose values are of type `T`.
pub struct Field<R, T> {
    pub bits: BitRange,
    /// NVIDIA's name for the field, e.g. `NV_PFALCON_FALCON_CPUCTL_HALTED`.
    pub name: &'static str,
    _register: PhantomData<fn() -> (R, T)>,
}

impl<R, T> Clone for Field<R, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R, T> Copy for Field<R, T> {}

impl<R, T> Field<R, T> {
    #[doc(hidden)]
    pub const fn new(hi: u8, lo: u8, name: &'static str) -> Self {
        Self { bits: BitRange::new(hi, lo), name, _register: PhantomData }
    }
}

impl<R, T> fmt::Debug for Field<R, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}:{})", self.name, self.bits.hi, self.bits.lo)
    }
}

/// A field held a value its header does not define.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidFieldValue {
    /// NVIDIA's name for the field.
    pub field: &'static str,
    /// The value read (shifted down).
    pub value: u32,
}

impl fmt::Display for InvalidFieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} holds {:#x}, a value its header does not define", self.field, self.value)
    }
}

/// How a field's raw bits become a Rust value and back.
///
/// Integers and `bool` take any value; enums (declared with [`field_values!`]) validate, because
/// a register read is hardware input.
pub trait FieldType: Copy {
    /// What reading the field gives: the value itself, or a `Result` for validated enums.
    type Decoded;
    /// The widest field this type can hold.
    const BITS: u32;
    /// Facts for the named values of this type (empty for plain integers).
    const VALUE_FACTS: &'static [HeaderFact] = &[];
    /// Converts the field's raw bits (shifted down); `field` names it in errors.
    fn decode(raw: u32, field: &'static str) -> Self::Decoded;
    /// The raw bits to store.
    fn encode(self) -> u32;
}

impl FieldType for bool {
    type Decoded = bool;
    const BITS: u32 = 1;
    fn decode(raw: u32, _field: &'static str) -> bool {
        raw != 0
    }
    fn encode(self) -> u32 {
        self as u32
    }
}

macro_rules! int_field_type {
    ($($t:ty),*) => {$(
        impl FieldType for $t {
            type Decoded = $t;
            const BITS: u32 = <$t>::BITS;
            fn decode(raw: u32, _field: &'static str) -> $t {
                // Declarations assert the field fits in the type, so this keeps every bit.
                raw as $t
            }
            fn encode(self) -> u32 {
                self as u32
            }
        }
    )*};
}
int_field_type!(u8, u16, u32);

/// Declares an enum of a field's named values, each with NVIDIA's name for it.
///
/// ```text
/// field_values! {
///     /// What `NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING` says.
///     pub enum MemScrubbing: NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING in headers::GA102_DEV_FALCON_V4 {
///         /// Scrubbing finished.
///         Done = 0x0 => DONE,
///         Pending = 0x1 => PENDING,
///     }
/// }
/// ```
/// generates the enum, its [`FieldType`] (validating) and facts named
/// `NV_PFALCON_FALCON_HWCFG2_MEM_SCRUBBING_DONE` and so on.
#[macro_export]
macro_rules! field_values {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident : $prefix:ident in $header:path {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $suffix:ident ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant = $value, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// NVIDIA's name for this value.
            pub const fn nvidia_name(self) -> &'static str {
                match self {
                    $( $name::$variant => concat!(stringify!($prefix), "_", stringify!($suffix)), )+
                }
            }

            /// The value for raw field bits, if the header defines one.
            pub const fn from_raw(raw: u32) -> Option<Self> {
                match raw {
                    $( $value => Some($name::$variant), )+
                    _ => None,
                }
            }
        }

        impl $crate::hw::FieldType for $name {
            type Decoded = Result<$name, $crate::hw::InvalidFieldValue>;
            const BITS: u32 = 32;
            const VALUE_FACTS: &'static [$crate::hw::HeaderFact] = &[
                $( $crate::hw::HeaderFact {
                    name: concat!(stringify!($prefix), "_", stringify!($suffix)),
                    header: $header,
                    value: $crate::hw::FactValue::Number($value),
                }, )+
            ];
            fn decode(raw: u32, field: &'static str) -> Self::Decoded {
                $name::from_raw(raw).ok_or($crate::hw::InvalidFieldValue { field, value: raw })
            }
            fn encode(self) -> u32 {
                self as u32
            }
        }
    };
}
pub use field_values;

/// Declares registers by NVIDIA name, address and fields, and collects their facts.
///
/// ```text
/// registers! {
///     /// Facts of this module.
///     pub const FACTS;
///
///     /// Chip identification.
///     pub NV_PMC_BOOT_42(0x00000a00) in headers::NV_REF {
///         /// Architecture and implementation together.
///         28:20 CHIP_ID => chip_id: u16,
///     }
///     /// A falcon register, relative to the falcon's base.
///     pub NV_PFALCON_FALCON_CPUCTL(base + 0x100) in headers::TU102_DEV_FALCON_V4 { .. }
///     /// A register array relative to a base, and an absolute one.
///     pub NV_PFALCON_FALCON_IMEMC(base + 0x180, stride 16) in .. { .. }
///     pub NV_PGC6_AON_SECURE_SCRATCH_GROUP_05(0x00118234, stride 4) in .. { .. }
///     /// A field layout applied to another register's value (no address of its own).
///     pub NV_VBIOS_FWSECLIC(view) in .. { .. }
/// }
/// ```
/// A field may name a different header than its register (`31:31 RESET_READY @ headers::X`), for
/// fields NVIDIA defines in an addendum.
///
/// Each register becomes a `Copy` newtype over `u32` with `read`/`write`/`modify` over a
/// [`RegisterIo`], a [`Field`] constant per field (NVIDIA's field name), a getter per field, and
/// `with(field, value)` to build values to write.
#[macro_export]
macro_rules! registers {
    (
        $(#[$tmeta:meta])*
        $tvis:vis const $table:ident;
        $(
            $(#[$meta:meta])*
            $vis:vis $name:ident ( $($addr:tt)+ ) in $header:path {
                $(
                    $(#[$fmeta:meta])*
                    $hi:literal : $lo:literal $field:ident $(@ $fheader:path)? => $getter:ident : $fty:ty
                ),* $(,)?
            }
        )*
    ) => {
        $(
            $crate::registers!(@one
                [$(#[$meta])*] $vis $name ($($addr)+) $header;
                $( [$(#[$fmeta])*] $hi : $lo $field [$($fheader)?] $getter $fty; )*
            );
        )*

        $(#[$tmeta])*
        $tvis const $table: &[$crate::hw::FactGroup] = &[$($name::FACTS),*];
    };

    (@one [$($meta:tt)*] $vis:vis $name:ident ($($addr:tt)+) $header:path;
        $( [$($fmeta:tt)*] $hi:literal : $lo:literal $field:ident [$($fheader:path)?] $getter:ident $fty:ty; )*
    ) => {
        $($meta)*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
        $vis struct $name(pub u32);

        #[allow(dead_code)]
        impl $name {
            /// NVIDIA's name for this register.
            pub const NAME: &'static str = stringify!($name);
            /// The header that defines it.
            pub const HEADER: $crate::hw::Header = $header;

            $(
                $($fmeta)*
                pub const $field: $crate::hw::Field<Self, $fty> = {
                    assert!($hi >= $lo && $hi < 32, "field bit range out of a 32-bit register");
                    assert!(
                        $hi - $lo < <$fty as $crate::hw::FieldType>::BITS,
                        "field wider than its type"
                    );
                    $crate::hw::Field::new($hi, $lo, concat!(stringify!($name), "_", stringify!($field)))
                };
            )*

            /// The register holding `raw`.
            pub const fn from_raw(raw: u32) -> Self {
                Self(raw)
            }

            /// The raw 32-bit value.
            pub const fn raw(self) -> u32 {
                self.0
            }

            /// Reads field `field` of this value.
            pub fn get<T: $crate::hw::FieldType>(self, field: $crate::hw::Field<Self, T>) -> T::Decoded {
                T::decode(field.bits.extract(self.0), field.name)
            }

            /// This value with field `field` set to `value`.
            #[must_use]
            pub fn with<T: $crate::hw::FieldType>(self, field: $crate::hw::Field<Self, T>, value: T) -> Self {
                Self(field.bits.insert(self.0, value.encode()))
            }

            $(
                $($fmeta)*
                pub fn $getter(self) -> <$fty as $crate::hw::FieldType>::Decoded {
                    self.get(Self::$field)
                }
            )*

            /// Facts of this register: its address, its fields and their named values.
            pub const FACTS: &'static [&'static [$crate::hw::HeaderFact]] = &[
                $crate::registers!(@addr_facts $name $header; $($addr)+),
                &[
                    $(
                        $crate::hw::HeaderFact {
                            name: concat!(stringify!($name), "_", stringify!($field)),
                            header: $crate::registers!(@header $header $(, $fheader)?),
                            value: $crate::hw::FactValue::Bits { hi: $hi, lo: $lo },
                        },
                    )*
                ],
                $( <$fty as $crate::hw::FieldType>::VALUE_FACTS, )*
            ];
        }

        $crate::registers!(@access $name $($addr)+);

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({:#010x})", stringify!($name), self.0)
            }
        }
    };

    (@header $header:path) => { $header };
    (@header $header:path, $fheader:path) => { $fheader };

    // A view has no address of its own: the header names only its fields.
    (@addr_facts $name:ident $header:path; view) => { &[] };
    (@addr_facts $name:ident $header:path; $($addr:tt)+) => {
        &[$crate::hw::HeaderFact {
            name: stringify!($name),
            header: $header,
            value: $crate::registers!(@addr_fact $($addr)+),
        }]
    };
    (@addr_fact base + $offset:literal, stride $stride:literal) => {
        $crate::hw::FactValue::Indexed { base: $offset, stride: $stride }
    };
    (@addr_fact base + $offset:literal) => { $crate::hw::FactValue::Number($offset) };
    (@addr_fact $offset:literal, stride $stride:literal) => {
        $crate::hw::FactValue::Indexed { base: $offset, stride: $stride }
    };
    (@addr_fact $offset:literal) => { $crate::hw::FactValue::Number($offset) };

    // A layout NVIDIA applies to another register's value (`DRF_VAL(_VBIOS, _FWSECLIC, ..)` on a
    // scratch register): fields only, no access of its own.
    (@access $name:ident view) => {};
    // A register at a fixed BAR0 offset.
    (@access $name:ident $offset:literal) => {
        #[allow(dead_code)]
        impl $name {
            /// BAR0 offset.
            pub const OFFSET: u32 = $offset;

            /// Reads the register.
            pub fn read(io: &(impl $crate::hw::RegisterIo + ?Sized)) -> Self {
                Self(io.read32(Self::OFFSET))
            }

            /// Writes this value to the register.
            pub fn write(self, io: &(impl $crate::hw::RegisterIo + ?Sized)) {
                io.write32(Self::OFFSET, self.0)
            }

            /// Reads, changes with `f`, writes back; returns the value written.
            pub fn modify(io: &(impl $crate::hw::RegisterIo + ?Sized), f: impl FnOnce(Self) -> Self) -> Self {
                let value = f(Self::read(io));
                value.write(io);
                value
            }
        }
    };
    // A register at an offset from a unit's base (a falcon's registers).
    (@access $name:ident base + $offset:literal) => {
        #[allow(dead_code)]
        impl $name {
            /// Offset from the unit's base.
            pub const OFFSET: u32 = $offset;

            /// BAR0 offset of this register in the unit at `base`.
            pub const fn address(base: u32) -> u32 {
                base.wrapping_add(Self::OFFSET)
            }

            /// Reads the register of the unit at `base`.
            pub fn read(io: &(impl $crate::hw::RegisterIo + ?Sized), base: u32) -> Self {
                Self(io.read32(Self::address(base)))
            }

            /// Writes this value to the register of the unit at `base`.
            pub fn write(self, io: &(impl $crate::hw::RegisterIo + ?Sized), base: u32) {
                io.write32(Self::address(base), self.0)
            }

            /// Reads, changes with `f`, writes back; returns the value written.
            pub fn modify(
                io: &(impl $crate::hw::RegisterIo + ?Sized),
                base: u32,
                f: impl FnOnce(Self) -> Self,
            ) -> Self {
                let value = f(Self::read(io, base));
                value.write(io, base);
                value
            }
        }
    };
    // An array of registers at an offset from a unit's base.
    (@access $name:ident base + $offset:literal, stride $stride:literal) => {
        #[allow(dead_code)]
        impl $name {
            /// Offset of element 0 from the unit's base.
            pub const OFFSET: u32 = $offset;
            /// Bytes between elements.
            pub const STRIDE: u32 = $stride;

            /// BAR0 offset of element `index` in the unit at `base`.
            pub const fn address(base: u32, index: u32) -> u32 {
                base.wrapping_add(Self::OFFSET).wrapping_add(index.wrapping_mul(Self::STRIDE))
            }

            /// Reads element `index` of the unit at `base`.
            pub fn read(io: &(impl $crate::hw::RegisterIo + ?Sized), base: u32, index: u32) -> Self {
                Self(io.read32(Self::address(base, index)))
            }

            /// Writes this value to element `index` of the unit at `base`.
            pub fn write(self, io: &(impl $crate::hw::RegisterIo + ?Sized), base: u32, index: u32) {
                io.write32(Self::address(base, index), self.0)
            }
        }
    };
    // An array of registers at fixed BAR0 offsets.
    (@access $name:ident $offset:literal, stride $stride:literal) => {
        #[allow(dead_code)]
        impl $name {
            /// BAR0 offset of element 0.
            pub const OFFSET: u32 = $offset;
            /// Bytes between elements.
            pub const STRIDE: u32 = $stride;

            /// BAR0 offset of element `index`.
            pub const fn address(index: u32) -> u32 {
                Self::OFFSET.wrapping_add(index.wrapping_mul(Self::STRIDE))
            }

            /// Reads element `index`.
            pub fn read(io: &(impl $crate::hw::RegisterIo + ?Sized), index: u32) -> Self {
                Self(io.read32(Self::address(index)))
            }

            /// Writes this value to element `index`.
            pub fn write(self, io: &(impl $crate::hw::RegisterIo + ?Sized), index: u32) {
                io.write32(Self::address(index), self.0)
            }
        }
    };
}
pub use registers;

/// Declares plain numeric facts (class numbers, unit address ranges, named constants) with their
/// headers, and collects them into a table.
///
/// ```text
/// constants! {
///     pub const FACTS;
///     /// Turing compute class.
///     pub TURING_COMPUTE_A: u32 = 0xC5C0 in headers::CLC5C0;
///     /// GSP's register window.
///     pub NV_PGSP: Range = 0x113fff : 0x110000 in headers::TU102_DEV_GSP;
/// }
/// ```
#[macro_export]
macro_rules! constants {
    (
        $(#[$tmeta:meta])*
        $tvis:vis const $table:ident;
        $(
            $(#[$meta:meta])*
            $vis:vis $name:ident : $kind:ident = $value:literal $(: $lo:literal)? in $header:path;
        )*
    ) => {
        $(
            $crate::constants!(@one [$(#[$meta])*] $vis $name $kind $value $(: $lo)?);
        )*

        $(#[$tmeta])*
        $tvis const $table: &[$crate::hw::FactGroup] = &[&[&[
            $( $crate::hw::HeaderFact {
                name: stringify!($name),
                header: $header,
                value: $crate::constants!(@fact $kind $value $(: $lo)?),
            }, )*
        ]]];
    };

    (@one [$($meta:tt)*] $vis:vis $name:ident Range $hi:literal : $lo:literal) => {
        $($meta)*
        #[allow(non_upper_case_globals)]
        $vis const $name: $crate::hw::UnitRange = $crate::hw::UnitRange { first: $lo, last: $hi };
    };
    (@one [$($meta:tt)*] $vis:vis $name:ident $kind:ident $value:literal) => {
        $($meta)*
        #[allow(non_upper_case_globals)]
        $vis const $name: $kind = $value;
    };

    (@fact Range $hi:literal : $lo:literal) => { $crate::hw::FactValue::Bits { hi: $hi, lo: $lo } };
    (@fact $kind:ident $value:literal) => { $crate::hw::FactValue::Number($value as u64) };
}
pub use constants;

/// Declares names a header must define whose values the crate does not use (the define shows
/// that a format exists where it is cited), each a [`HeaderFact`] of value
/// [`FactValue::Defined`], and collects them into a table.
///
/// ```text
/// defined_names! {
///     pub const VERSION_FACTS;
///     /// Turing's QMD layout version.
///     pub NVC5C0_QMDV02_03_QMD_MAJOR_VERSION in headers::CLC5C0_QMD;
/// }
/// ```
#[macro_export]
macro_rules! defined_names {
    (
        $(#[$tmeta:meta])*
        $tvis:vis const $table:ident;
        $( $(#[$meta:meta])* $vis:vis $name:ident in $header:path; )*
    ) => {
        $(
            $(#[$meta])*
            #[allow(non_upper_case_globals)]
            $vis const $name: $crate::hw::HeaderFact = $crate::hw::HeaderFact {
                name: stringify!($name),
                header: $header,
                value: $crate::hw::FactValue::Defined,
            };
        )*

        $(#[$tmeta])*
        $tvis const $table: &[$crate::hw::FactGroup] = &[&[&[$($name),*]]];
    };
}
pub use defined_names;

/// A unit's BAR0 address window, inclusive, as headers write it (`NV_PGSP 0x113fff:0x110000`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitRange {
    pub first: u32,
    pub last: u32,
}

impl UnitRange {
    /// Whether `offset` falls in the window.
    pub const fn contains(self, offset: u32) -> bool {
        offset >= self.first && offset <= self.last
    }

    /// Bits spanned when the range is a field's `hi:lo` (`constants!` declares both with
    /// `Range`).
    pub const fn width(self) -> u32 {
        self.last - self.first + 1
    }

    /// The field's bits of `raw`, shifted down, when the range is a field's `hi:lo` of a 32-bit
    /// word.
    pub const fn extract(self, raw: u32) -> u32 {
        let ones = if self.width() >= 32 { u32::MAX } else { (1u32 << self.width()) - 1 };
        (raw >> self.first) & ones
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::RefCell;
    use std::collections::BTreeMap;

    /// A register file in memory, for typed-access tests.
    #[derive(Default)]
    pub(crate) struct FakeBar(pub RefCell<BTreeMap<u32, u32>>);

    impl RegisterIo for FakeBar {
        fn read32(&self, offset: u32) -> u32 {
            self.0.borrow().get(&offset).copied().unwrap_or(0)
        }
        fn write32(&self, offset: u32, value: u32) {
            self.0.borrow_mut().insert(offset, value);
        }
    }

    #[test]
    fn bit_range_masks() {
        assert_eq!(BitRange::new(31, 0).mask(), u32::MAX);
        assert_eq!(BitRange::new(28, 20).mask(), 0x1ff0_0000);
        assert_eq!(BitRange::new(4, 4).extract(0x10), 1);
        assert_eq!(BitRange::new(7, 4).insert(0xffff_ffff, 0x3), 0xffff_ff3f);
        // Bits beyond the width are dropped, never spill into neighbours.
        assert_eq!(BitRange::new(7, 4).insert(0, 0x1ff), 0xf0);
    }

    #[test]
    fn typed_access_goes_through_register_io() {
        use falcon::NV_PFALCON_FALCON_CPUCTL;
        let bar = FakeBar::default();
        let base = engine::GSP_BASE;
        NV_PFALCON_FALCON_CPUCTL::default().with(NV_PFALCON_FALCON_CPUCTL::STARTCPU, true).write(&bar, base);
        assert_eq!(bar.read32(base + 0x100), 0x2);
        let v = NV_PFALCON_FALCON_CPUCTL::modify(&bar, base, |r| r.with(NV_PFALCON_FALCON_CPUCTL::HALTED, true));
        assert!(v.halted());
        assert_eq!(bar.read32(base + 0x100), 0x12);
    }

    #[test]
    fn invalid_enum_values_are_errors_not_panics() {
        use falcon::ga102::{MemScrubbing, NV_PFALCON_FALCON_HWCFG2};
        let r = NV_PFALCON_FALCON_HWCFG2::from_raw(1 << 12);
        assert_eq!(r.mem_scrubbing(), Ok(MemScrubbing::Pending));
        assert_eq!(MemScrubbing::from_raw(7), None);
    }

    #[test]
    fn every_fact_is_named_and_unique_per_header() {
        let mut seen = std::collections::BTreeMap::new();
        for fact in all_facts() {
            assert!(fact.name.starts_with("NV") || fact.name.contains('_'), "{}", fact.name);
            if let Some(previous) = seen.insert((fact.name, fact.header), fact.value) {
                assert_eq!(previous, fact.value, "{} declared twice with different values", fact.name);
            }
        }
        assert!(seen.len() > 100);
    }
}
