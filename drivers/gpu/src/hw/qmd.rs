//! QMD (Queue Meta Data, the compute launch descriptor) field positions, by layout version, as
//! NVIDIA's open-gpu-doc `classes/compute/cl*qmd.h` define them with `MW(hi:lo)` (bit positions
//! in the QMD seen as one little-endian array of 32-bit words). Ampere (`clc6c0qmd.h`) and Ada
//! (`clc9c0qmd.h`) use QMDV03_00, Hopper (`clcbc0qmd.h`) QMDV04_00, Blackwell (`clcdc0qmd.h`)
//! QMDV05_00. Every position here is checked against those headers by
//! `tests/tests/qmd_layout.rs`. Array fields (`CONSTANT_BUFFER_VALID(i)`, `RELEASE_ENABLE(i)`)
//! keep the position of element 0 and the stride of `(i)`. Fields named `_SHIFTED<n>` hold the
//! value shifted right by n bits.
//!
//! Hopper and Blackwell have no `SM_GLOBAL_CACHING_ENABLE`, and their release semaphores are
//! the arrays `RELEASE_ENABLE(i)` / `RELEASE_STRUCTURE_SIZE(i)` with `RELEASE_SEMAPHORE0_*`
//! addresses; [`Semantic`] names the role, the table names NVIDIA's field.

use super::headers;
use super::Header;
use crate::defined_names;

defined_names! {
    /// The define of each compute class's QMD header that shows the layout version the HAL
    /// picks for it (`hal::QmdVersion::define`).
    pub const VERSION_FACTS;

    /// Turing (TURING_COMPUTE_A): QMDV02_03.
    pub NVC5C0_QMDV02_03_QMD_MAJOR_VERSION in headers::CLC5C0_QMD;
    /// GA100 (AMPERE_COMPUTE_A): QMDV03_00.
    pub NVC6C0_QMDV03_00_QMD_MAJOR_VERSION in headers::CLC6C0_QMD;
    /// GA10x (AMPERE_COMPUTE_B): QMDV03_00.
    pub NVC7C0_QMDV03_00_QMD_MAJOR_VERSION in headers::CLC7C0_QMD;
    /// Ada (ADA_COMPUTE_A): QMDV03_00.
    pub NVC9C0_QMDV03_00_QMD_MAJOR_VERSION in headers::CLC9C0_QMD;
    /// Hopper (HOPPER_COMPUTE_A): QMDV04_00.
    pub NVCBC0_QMDV04_00_QMD_MAJOR_VERSION in headers::CLCBC0_QMD;
    /// Blackwell GB10x (BLACKWELL_COMPUTE_A): QMDV05_00.
    pub NVCDC0_QMDV05_00_QMD_MAJOR_VERSION in headers::CLCDC0_QMD;
    /// Blackwell GB20x (BLACKWELL_COMPUTE_B): QMDV05_00.
    pub NVCEC0_QMDV05_00_QMD_MAJOR_VERSION in headers::CLCEC0_QMD;
}

/// What a QMD field is for, independently of its name in one version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semantic {
    ProgramAddressLower,
    ProgramAddressUpper,
    GridWidth,
    GridHeight,
    GridDepth,
    BlockDim0,
    BlockDim1,
    BlockDim2,
    SharedMemorySize,
    MinSmConfigSharedMemSize,
    MaxSmConfigSharedMemSize,
    TargetSmConfigSharedMemSize,
    RegisterCount,
    BarrierCount,
    ConstantBufferValid,
    ConstantBufferAddrLower,
    ConstantBufferAddrUpper,
    ConstantBufferSize,
    Release0Enable,
    Release0AddrLower,
    Release0AddrUpper,
    Release0PayloadLower,
    Release0PayloadUpper,
    Release0StructureSize,
    SmGlobalCachingEnable,
    InvalidateTextureHeaderCache,
    InvalidateTextureSamplerCache,
    InvalidateTextureDataCache,
    InvalidateShaderDataCache,
    InvalidateInstructionCache,
    InvalidateShaderConstantCache,
    QmdGroupId,
    QmdVersion,
    QmdMajorVersion,
    ApiVisibleCallLimit,
    SamplerIndex,
    ShaderLocalMemoryLowSize,
    ShaderLocalMemoryHighSize,
    ProgramPrefetchSize,
}

/// One field: NVIDIA's name, its `MW(hi:lo)` (of element 0), the stride of `(i)` (0 if not an
/// array), and the right shift the stored value has (`_SHIFTED<n>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldPos {
    pub semantic: Semantic,
    pub name: &'static str,
    pub hi: u32,
    pub lo: u32,
    pub stride: u32,
    pub shift: u32,
}

impl FieldPos {
    /// Width in bits.
    pub const fn width(&self) -> u32 {
        self.hi - self.lo + 1
    }
}

const fn f(semantic: Semantic, name: &'static str, hi: u32, lo: u32, stride: u32, shift: u32) -> FieldPos {
    assert!(hi >= lo && hi - lo < 32, "a QMD field is at most 32 bits wide");
    FieldPos { semantic, name, hi, lo, stride, shift }
}

/// A QMD layout: its version, size, header and fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QmdLayout {
    pub major: u8,
    pub minor: u8,
    /// Size in 32-bit words (every field of these versions lies below bit 2048).
    pub dwords: usize,
    /// Constant buffer slots (`CONSTANT_BUFFER_*(i)`, i < 8).
    pub constant_buffers: u32,
    pub header: Header,
    pub fields: &'static [FieldPos],
}

impl QmdLayout {
    /// The field with role `semantic`, if this version has it.
    pub fn field(&self, semantic: Semantic) -> Option<&'static FieldPos> {
        self.fields.iter().find(|f| f.semantic == semantic)
    }
}

/// Ampere (GA100 AMPERE_COMPUTE_A, GA10x AMPERE_COMPUTE_B): QMDV03_00.
pub const AMPERE: QmdLayout = QmdLayout {
    major: 3,
    minor: 0,
    dwords: 64,
    constant_buffers: 8,
    header: headers::CLC6C0_QMD,
    fields: AMPERE_V03_00,
};
/// Ada (ADA_COMPUTE_A): QMDV03_00, under its own class prefix.
pub const ADA: QmdLayout =
    QmdLayout { major: 3, minor: 0, dwords: 64, constant_buffers: 8, header: headers::CLC9C0_QMD, fields: ADA_V03_00 };
/// Hopper (HOPPER_COMPUTE_A): QMDV04_00.
pub const HOPPER: QmdLayout = QmdLayout {
    major: 4,
    minor: 0,
    dwords: 64,
    constant_buffers: 8,
    header: headers::CLCBC0_QMD,
    fields: HOPPER_V04_00,
};
/// Blackwell GB10x (BLACKWELL_COMPUTE_A): QMDV05_00.
pub const BLACKWELL: QmdLayout = QmdLayout {
    major: 5,
    minor: 0,
    dwords: 64,
    constant_buffers: 8,
    header: headers::CLCDC0_QMD,
    fields: BLACKWELL_V05_00,
};

/// Turing (TURING_COMPUTE_A): QMDV02_03. The fields a launch needs; its release semaphore uses
/// other fields (`SEMAPHORE_RELEASE_ENABLE0`) and is not declared.
pub const TURING: QmdLayout = QmdLayout {
    major: 2,
    minor: 3,
    dwords: 64,
    constant_buffers: 8,
    header: headers::CLC5C0_QMD,
    fields: TURING_V02_03,
};

/// Every layout declared here.
pub const LAYOUTS: &[QmdLayout] = &[TURING, AMPERE, ADA, HOPPER, BLACKWELL];

/// `NVC5C0_QMDV02_03_*` of open-gpu-doc `classes/compute/clc5c0qmd.h`.
pub const TURING_V02_03: &[FieldPos] = &[
    f(Semantic::ProgramAddressLower, "NVC5C0_QMDV02_03_PROGRAM_ADDRESS_LOWER", 1567, 1536, 0, 0),
    f(Semantic::ProgramAddressUpper, "NVC5C0_QMDV02_03_PROGRAM_ADDRESS_UPPER", 1584, 1568, 0, 0),
    f(Semantic::GridWidth, "NVC5C0_QMDV02_03_CTA_RASTER_WIDTH", 415, 384, 0, 0),
    f(Semantic::GridHeight, "NVC5C0_QMDV02_03_CTA_RASTER_HEIGHT", 431, 416, 0, 0),
    f(Semantic::GridDepth, "NVC5C0_QMDV02_03_CTA_RASTER_DEPTH", 463, 448, 0, 0),
    f(Semantic::BlockDim0, "NVC5C0_QMDV02_03_CTA_THREAD_DIMENSION0", 607, 592, 0, 0),
    f(Semantic::BlockDim1, "NVC5C0_QMDV02_03_CTA_THREAD_DIMENSION1", 623, 608, 0, 0),
    f(Semantic::BlockDim2, "NVC5C0_QMDV02_03_CTA_THREAD_DIMENSION2", 639, 624, 0, 0),
    f(Semantic::SharedMemorySize, "NVC5C0_QMDV02_03_SHARED_MEMORY_SIZE", 561, 544, 0, 0),
    f(Semantic::RegisterCount, "NVC5C0_QMDV02_03_REGISTER_COUNT_V", 656, 648, 0, 0),
    f(Semantic::BarrierCount, "NVC5C0_QMDV02_03_BARRIER_COUNT", 959, 955, 0, 0),
    f(Semantic::ConstantBufferValid, "NVC5C0_QMDV02_03_CONSTANT_BUFFER_VALID", 640, 640, 1, 0),
    f(Semantic::ConstantBufferAddrLower, "NVC5C0_QMDV02_03_CONSTANT_BUFFER_ADDR_LOWER", 1055, 1024, 64, 0),
    f(Semantic::ConstantBufferAddrUpper, "NVC5C0_QMDV02_03_CONSTANT_BUFFER_ADDR_UPPER", 1072, 1056, 64, 0),
    f(Semantic::ConstantBufferSize, "NVC5C0_QMDV02_03_CONSTANT_BUFFER_SIZE_SHIFTED4", 1087, 1075, 64, 4),
    f(Semantic::QmdVersion, "NVC5C0_QMDV02_03_QMD_VERSION", 579, 576, 0, 0),
    f(Semantic::QmdMajorVersion, "NVC5C0_QMDV02_03_QMD_MAJOR_VERSION", 583, 580, 0, 0),
    f(Semantic::ShaderLocalMemoryLowSize, "NVC5C0_QMDV02_03_SHADER_LOCAL_MEMORY_LOW_SIZE", 951, 928, 0, 0),
    f(Semantic::ShaderLocalMemoryHighSize, "NVC5C0_QMDV02_03_SHADER_LOCAL_MEMORY_HIGH_SIZE", 983, 960, 0, 0),
];

/// `NVC6C0_QMDV03_00_*` of open-gpu-doc `classes/compute/clc6c0qmd.h`.
pub const AMPERE_V03_00: &[FieldPos] = &[
    f(Semantic::ProgramAddressLower, "NVC6C0_QMDV03_00_PROGRAM_ADDRESS_LOWER", 1567, 1536, 0, 0),
    f(Semantic::ProgramAddressUpper, "NVC6C0_QMDV03_00_PROGRAM_ADDRESS_UPPER", 1584, 1568, 0, 0),
    f(Semantic::GridWidth, "NVC6C0_QMDV03_00_CTA_RASTER_WIDTH", 415, 384, 0, 0),
    f(Semantic::GridHeight, "NVC6C0_QMDV03_00_CTA_RASTER_HEIGHT", 431, 416, 0, 0),
    f(Semantic::GridDepth, "NVC6C0_QMDV03_00_CTA_RASTER_DEPTH", 463, 448, 0, 0),
    f(Semantic::BlockDim0, "NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION0", 607, 592, 0, 0),
    f(Semantic::BlockDim1, "NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION1", 623, 608, 0, 0),
    f(Semantic::BlockDim2, "NVC6C0_QMDV03_00_CTA_THREAD_DIMENSION2", 639, 624, 0, 0),
    f(Semantic::SharedMemorySize, "NVC6C0_QMDV03_00_SHARED_MEMORY_SIZE", 561, 544, 0, 0),
    f(Semantic::MinSmConfigSharedMemSize, "NVC6C0_QMDV03_00_MIN_SM_CONFIG_SHARED_MEM_SIZE", 567, 562, 0, 0),
    f(Semantic::MaxSmConfigSharedMemSize, "NVC6C0_QMDV03_00_MAX_SM_CONFIG_SHARED_MEM_SIZE", 574, 569, 0, 0),
    f(Semantic::TargetSmConfigSharedMemSize, "NVC6C0_QMDV03_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE", 662, 657, 0, 0),
    f(Semantic::RegisterCount, "NVC6C0_QMDV03_00_REGISTER_COUNT_V", 656, 648, 0, 0),
    f(Semantic::BarrierCount, "NVC6C0_QMDV03_00_BARRIER_COUNT", 767, 763, 0, 0),
    f(Semantic::ConstantBufferValid, "NVC6C0_QMDV03_00_CONSTANT_BUFFER_VALID", 640, 640, 1, 0),
    f(Semantic::ConstantBufferAddrLower, "NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_LOWER", 1055, 1024, 64, 0),
    f(Semantic::ConstantBufferAddrUpper, "NVC6C0_QMDV03_00_CONSTANT_BUFFER_ADDR_UPPER", 1072, 1056, 64, 0),
    f(Semantic::ConstantBufferSize, "NVC6C0_QMDV03_00_CONSTANT_BUFFER_SIZE_SHIFTED4", 1087, 1075, 64, 4),
    f(Semantic::Release0Enable, "NVC6C0_QMDV03_00_RELEASE0_ENABLE", 823, 823, 0, 0),
    f(Semantic::Release0AddrLower, "NVC6C0_QMDV03_00_RELEASE0_ADDRESS_LOWER", 799, 768, 0, 0),
    f(Semantic::Release0AddrUpper, "NVC6C0_QMDV03_00_RELEASE0_ADDRESS_UPPER", 807, 800, 0, 0),
    f(Semantic::Release0PayloadLower, "NVC6C0_QMDV03_00_RELEASE0_PAYLOAD_LOWER", 863, 832, 0, 0),
    f(Semantic::Release0PayloadUpper, "NVC6C0_QMDV03_00_RELEASE0_PAYLOAD_UPPER", 895, 864, 0, 0),
    f(Semantic::Release0StructureSize, "NVC6C0_QMDV03_00_RELEASE0_STRUCTURE_SIZE", 831, 830, 0, 0),
    f(Semantic::SmGlobalCachingEnable, "NVC6C0_QMDV03_00_SM_GLOBAL_CACHING_ENABLE", 134, 134, 0, 0),
    f(Semantic::InvalidateTextureHeaderCache, "NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_HEADER_CACHE", 186, 186, 0, 0),
    f(Semantic::InvalidateTextureSamplerCache, "NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_SAMPLER_CACHE", 187, 187, 0, 0),
    f(Semantic::InvalidateTextureDataCache, "NVC6C0_QMDV03_00_INVALIDATE_TEXTURE_DATA_CACHE", 188, 188, 0, 0),
    f(Semantic::InvalidateShaderDataCache, "NVC6C0_QMDV03_00_INVALIDATE_SHADER_DATA_CACHE", 189, 189, 0, 0),
    f(Semantic::InvalidateInstructionCache, "NVC6C0_QMDV03_00_INVALIDATE_INSTRUCTION_CACHE", 190, 190, 0, 0),
    f(Semantic::InvalidateShaderConstantCache, "NVC6C0_QMDV03_00_INVALIDATE_SHADER_CONSTANT_CACHE", 191, 191, 0, 0),
    f(Semantic::QmdGroupId, "NVC6C0_QMDV03_00_QMD_GROUP_ID", 133, 128, 0, 0),
    f(Semantic::QmdVersion, "NVC6C0_QMDV03_00_QMD_VERSION", 579, 576, 0, 0),
    f(Semantic::QmdMajorVersion, "NVC6C0_QMDV03_00_QMD_MAJOR_VERSION", 583, 580, 0, 0),
    f(Semantic::ApiVisibleCallLimit, "NVC6C0_QMDV03_00_API_VISIBLE_CALL_LIMIT", 378, 378, 0, 0),
    f(Semantic::SamplerIndex, "NVC6C0_QMDV03_00_SAMPLER_INDEX", 382, 382, 0, 0),
    f(Semantic::ShaderLocalMemoryLowSize, "NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_LOW_SIZE", 759, 736, 0, 0),
    f(Semantic::ShaderLocalMemoryHighSize, "NVC6C0_QMDV03_00_SHADER_LOCAL_MEMORY_HIGH_SIZE", 1623, 1600, 0, 0),
    f(Semantic::ProgramPrefetchSize, "NVC6C0_QMDV03_00_PROGRAM_PREFETCH_SIZE", 1649, 1641, 0, 0),
];
/// `NVC9C0_QMDV03_00_*` of open-gpu-doc `classes/compute/clc9c0qmd.h`.
pub const ADA_V03_00: &[FieldPos] = &[
    f(Semantic::ProgramAddressLower, "NVC9C0_QMDV03_00_PROGRAM_ADDRESS_LOWER", 1567, 1536, 0, 0),
    f(Semantic::ProgramAddressUpper, "NVC9C0_QMDV03_00_PROGRAM_ADDRESS_UPPER", 1584, 1568, 0, 0),
    f(Semantic::GridWidth, "NVC9C0_QMDV03_00_CTA_RASTER_WIDTH", 415, 384, 0, 0),
    f(Semantic::GridHeight, "NVC9C0_QMDV03_00_CTA_RASTER_HEIGHT", 431, 416, 0, 0),
    f(Semantic::GridDepth, "NVC9C0_QMDV03_00_CTA_RASTER_DEPTH", 463, 448, 0, 0),
    f(Semantic::BlockDim0, "NVC9C0_QMDV03_00_CTA_THREAD_DIMENSION0", 607, 592, 0, 0),
    f(Semantic::BlockDim1, "NVC9C0_QMDV03_00_CTA_THREAD_DIMENSION1", 623, 608, 0, 0),
    f(Semantic::BlockDim2, "NVC9C0_QMDV03_00_CTA_THREAD_DIMENSION2", 639, 624, 0, 0),
    f(Semantic::SharedMemorySize, "NVC9C0_QMDV03_00_SHARED_MEMORY_SIZE", 561, 544, 0, 0),
    f(Semantic::MinSmConfigSharedMemSize, "NVC9C0_QMDV03_00_MIN_SM_CONFIG_SHARED_MEM_SIZE", 567, 562, 0, 0),
    f(Semantic::MaxSmConfigSharedMemSize, "NVC9C0_QMDV03_00_MAX_SM_CONFIG_SHARED_MEM_SIZE", 574, 569, 0, 0),
    f(Semantic::TargetSmConfigSharedMemSize, "NVC9C0_QMDV03_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE", 662, 657, 0, 0),
    f(Semantic::RegisterCount, "NVC9C0_QMDV03_00_REGISTER_COUNT_V", 656, 648, 0, 0),
    f(Semantic::BarrierCount, "NVC9C0_QMDV03_00_BARRIER_COUNT", 767, 763, 0, 0),
    f(Semantic::ConstantBufferValid, "NVC9C0_QMDV03_00_CONSTANT_BUFFER_VALID", 640, 640, 1, 0),
    f(Semantic::ConstantBufferAddrLower, "NVC9C0_QMDV03_00_CONSTANT_BUFFER_ADDR_LOWER", 1055, 1024, 64, 0),
    f(Semantic::ConstantBufferAddrUpper, "NVC9C0_QMDV03_00_CONSTANT_BUFFER_ADDR_UPPER", 1072, 1056, 64, 0),
    f(Semantic::ConstantBufferSize, "NVC9C0_QMDV03_00_CONSTANT_BUFFER_SIZE_SHIFTED4", 1087, 1075, 64, 4),
    f(Semantic::Release0Enable, "NVC9C0_QMDV03_00_RELEASE0_ENABLE", 823, 823, 0, 0),
    f(Semantic::Release0AddrLower, "NVC9C0_QMDV03_00_RELEASE0_ADDRESS_LOWER", 799, 768, 0, 0),
    f(Semantic::Release0AddrUpper, "NVC9C0_QMDV03_00_RELEASE0_ADDRESS_UPPER", 807, 800, 0, 0),
    f(Semantic::Release0PayloadLower, "NVC9C0_QMDV03_00_RELEASE0_PAYLOAD_LOWER", 863, 832, 0, 0),
    f(Semantic::Release0PayloadUpper, "NVC9C0_QMDV03_00_RELEASE0_PAYLOAD_UPPER", 895, 864, 0, 0),
    f(Semantic::Release0StructureSize, "NVC9C0_QMDV03_00_RELEASE0_STRUCTURE_SIZE", 831, 830, 0, 0),
    f(Semantic::SmGlobalCachingEnable, "NVC9C0_QMDV03_00_SM_GLOBAL_CACHING_ENABLE", 134, 134, 0, 0),
    f(Semantic::InvalidateTextureHeaderCache, "NVC9C0_QMDV03_00_INVALIDATE_TEXTURE_HEADER_CACHE", 186, 186, 0, 0),
    f(Semantic::InvalidateTextureSamplerCache, "NVC9C0_QMDV03_00_INVALIDATE_TEXTURE_SAMPLER_CACHE", 187, 187, 0, 0),
    f(Semantic::InvalidateTextureDataCache, "NVC9C0_QMDV03_00_INVALIDATE_TEXTURE_DATA_CACHE", 188, 188, 0, 0),
    f(Semantic::InvalidateShaderDataCache, "NVC9C0_QMDV03_00_INVALIDATE_SHADER_DATA_CACHE", 189, 189, 0, 0),
    f(Semantic::InvalidateInstructionCache, "NVC9C0_QMDV03_00_INVALIDATE_INSTRUCTION_CACHE", 190, 190, 0, 0),
    f(Semantic::InvalidateShaderConstantCache, "NVC9C0_QMDV03_00_INVALIDATE_SHADER_CONSTANT_CACHE", 191, 191, 0, 0),
    f(Semantic::QmdGroupId, "NVC9C0_QMDV03_00_QMD_GROUP_ID", 133, 128, 0, 0),
    f(Semantic::QmdVersion, "NVC9C0_QMDV03_00_QMD_VERSION", 579, 576, 0, 0),
    f(Semantic::QmdMajorVersion, "NVC9C0_QMDV03_00_QMD_MAJOR_VERSION", 583, 580, 0, 0),
    f(Semantic::ApiVisibleCallLimit, "NVC9C0_QMDV03_00_API_VISIBLE_CALL_LIMIT", 378, 378, 0, 0),
    f(Semantic::SamplerIndex, "NVC9C0_QMDV03_00_SAMPLER_INDEX", 382, 382, 0, 0),
    f(Semantic::ShaderLocalMemoryLowSize, "NVC9C0_QMDV03_00_SHADER_LOCAL_MEMORY_LOW_SIZE", 759, 736, 0, 0),
    f(Semantic::ShaderLocalMemoryHighSize, "NVC9C0_QMDV03_00_SHADER_LOCAL_MEMORY_HIGH_SIZE", 1623, 1600, 0, 0),
    f(Semantic::ProgramPrefetchSize, "NVC9C0_QMDV03_00_PROGRAM_PREFETCH_SIZE", 1649, 1641, 0, 0),
];
/// `NVCBC0_QMDV04_00_*` of open-gpu-doc `classes/compute/clcbc0qmd.h`.
pub const HOPPER_V04_00: &[FieldPos] = &[
    f(Semantic::ProgramAddressLower, "NVCBC0_QMDV04_00_PROGRAM_ADDRESS_LOWER", 1247, 1216, 0, 0),
    f(Semantic::ProgramAddressUpper, "NVCBC0_QMDV04_00_PROGRAM_ADDRESS_UPPER", 1272, 1248, 0, 0),
    f(Semantic::GridWidth, "NVCBC0_QMDV04_00_GRID_WIDTH", 1055, 1024, 0, 0),
    f(Semantic::GridHeight, "NVCBC0_QMDV04_00_GRID_HEIGHT", 1071, 1056, 0, 0),
    f(Semantic::GridDepth, "NVCBC0_QMDV04_00_GRID_DEPTH", 1103, 1088, 0, 0),
    f(Semantic::BlockDim0, "NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION0", 1167, 1152, 0, 0),
    f(Semantic::BlockDim1, "NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION1", 1183, 1168, 0, 0),
    f(Semantic::BlockDim2, "NVCBC0_QMDV04_00_CTA_THREAD_DIMENSION2", 1199, 1184, 0, 0),
    f(Semantic::SharedMemorySize, "NVCBC0_QMDV04_00_SHARED_MEMORY_SIZE", 601, 584, 0, 0),
    f(Semantic::MinSmConfigSharedMemSize, "NVCBC0_QMDV04_00_MIN_SM_CONFIG_SHARED_MEM_SIZE", 613, 608, 0, 0),
    f(Semantic::MaxSmConfigSharedMemSize, "NVCBC0_QMDV04_00_MAX_SM_CONFIG_SHARED_MEM_SIZE", 619, 614, 0, 0),
    f(Semantic::TargetSmConfigSharedMemSize, "NVCBC0_QMDV04_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE", 625, 620, 0, 0),
    f(Semantic::RegisterCount, "NVCBC0_QMDV04_00_REGISTER_COUNT", 1208, 1200, 0, 0),
    f(Semantic::BarrierCount, "NVCBC0_QMDV04_00_BARRIER_COUNT", 1215, 1211, 0, 0),
    f(Semantic::ConstantBufferValid, "NVCBC0_QMDV04_00_CONSTANT_BUFFER_VALID", 416, 416, 4, 0),
    f(Semantic::ConstantBufferAddrLower, "NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6", 1567, 1536, 64, 6),
    f(Semantic::ConstantBufferAddrUpper, "NVCBC0_QMDV04_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6", 1586, 1568, 64, 6),
    f(Semantic::ConstantBufferSize, "NVCBC0_QMDV04_00_CONSTANT_BUFFER_SIZE_SHIFTED4", 1599, 1587, 64, 4),
    f(Semantic::Release0Enable, "NVCBC0_QMDV04_00_RELEASE_ENABLE", 320, 320, 16, 0),
    f(Semantic::Release0AddrLower, "NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_ADDR_LOWER", 671, 640, 0, 0),
    f(Semantic::Release0AddrUpper, "NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_ADDR_UPPER", 696, 672, 0, 0),
    f(Semantic::Release0PayloadLower, "NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_PAYLOAD_LOWER", 735, 704, 0, 0),
    f(Semantic::Release0PayloadUpper, "NVCBC0_QMDV04_00_RELEASE_SEMAPHORE0_PAYLOAD_UPPER", 767, 736, 0, 0),
    f(Semantic::Release0StructureSize, "NVCBC0_QMDV04_00_RELEASE_STRUCTURE_SIZE", 322, 321, 16, 0),
    f(Semantic::InvalidateTextureHeaderCache, "NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_HEADER_CACHE", 602, 602, 0, 0),
    f(Semantic::InvalidateTextureSamplerCache, "NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_SAMPLER_CACHE", 603, 603, 0, 0),
    f(Semantic::InvalidateTextureDataCache, "NVCBC0_QMDV04_00_INVALIDATE_TEXTURE_DATA_CACHE", 604, 604, 0, 0),
    f(Semantic::InvalidateShaderDataCache, "NVCBC0_QMDV04_00_INVALIDATE_SHADER_DATA_CACHE", 605, 605, 0, 0),
    f(Semantic::InvalidateInstructionCache, "NVCBC0_QMDV04_00_INVALIDATE_INSTRUCTION_CACHE", 606, 606, 0, 0),
    f(Semantic::InvalidateShaderConstantCache, "NVCBC0_QMDV04_00_INVALIDATE_SHADER_CONSTANT_CACHE", 607, 607, 0, 0),
    f(Semantic::QmdGroupId, "NVCBC0_QMDV04_00_QMD_GROUP_ID", 21, 16, 0, 0),
    f(Semantic::QmdVersion, "NVCBC0_QMDV04_00_QMD_MINOR_VERSION", 579, 576, 0, 0),
    f(Semantic::QmdMajorVersion, "NVCBC0_QMDV04_00_QMD_MAJOR_VERSION", 583, 580, 0, 0),
    f(Semantic::ApiVisibleCallLimit, "NVCBC0_QMDV04_00_API_VISIBLE_CALL_LIMIT", 568, 568, 0, 0),
    f(Semantic::SamplerIndex, "NVCBC0_QMDV04_00_SAMPLER_INDEX", 569, 569, 0, 0),
    f(Semantic::ShaderLocalMemoryLowSize, "NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_LOW_SIZE", 535, 512, 0, 0),
    f(Semantic::ShaderLocalMemoryHighSize, "NVCBC0_QMDV04_00_SHADER_LOCAL_MEMORY_HIGH_SIZE", 567, 544, 0, 0),
    f(Semantic::ProgramPrefetchSize, "NVCBC0_QMDV04_00_PROGRAM_PREFETCH_SIZE", 1401, 1393, 0, 0),
];
/// `NVCDC0_QMDV05_00_*` of open-gpu-doc `classes/compute/clcdc0qmd.h`.
pub const BLACKWELL_V05_00: &[FieldPos] = &[
    f(Semantic::ProgramAddressLower, "NVCDC0_QMDV05_00_PROGRAM_ADDRESS_LOWER_SHIFTED4", 1055, 1024, 0, 4),
    f(Semantic::ProgramAddressUpper, "NVCDC0_QMDV05_00_PROGRAM_ADDRESS_UPPER_SHIFTED4", 1076, 1056, 0, 4),
    f(Semantic::GridWidth, "NVCDC0_QMDV05_00_GRID_WIDTH", 1279, 1248, 0, 0),
    f(Semantic::GridHeight, "NVCDC0_QMDV05_00_GRID_HEIGHT", 1295, 1280, 0, 0),
    f(Semantic::GridDepth, "NVCDC0_QMDV05_00_GRID_DEPTH", 1327, 1312, 0, 0),
    f(Semantic::BlockDim0, "NVCDC0_QMDV05_00_CTA_THREAD_DIMENSION0", 1103, 1088, 0, 0),
    f(Semantic::BlockDim1, "NVCDC0_QMDV05_00_CTA_THREAD_DIMENSION1", 1119, 1104, 0, 0),
    f(Semantic::BlockDim2, "NVCDC0_QMDV05_00_CTA_THREAD_DIMENSION2", 1127, 1120, 0, 0),
    f(Semantic::SharedMemorySize, "NVCDC0_QMDV05_00_SHARED_MEMORY_SIZE_SHIFTED7", 1162, 1152, 0, 7),
    f(Semantic::MinSmConfigSharedMemSize, "NVCDC0_QMDV05_00_MIN_SM_CONFIG_SHARED_MEM_SIZE", 1168, 1163, 0, 0),
    f(Semantic::MaxSmConfigSharedMemSize, "NVCDC0_QMDV05_00_MAX_SM_CONFIG_SHARED_MEM_SIZE", 1174, 1169, 0, 0),
    f(Semantic::TargetSmConfigSharedMemSize, "NVCDC0_QMDV05_00_TARGET_SM_CONFIG_SHARED_MEM_SIZE", 1180, 1175, 0, 0),
    f(Semantic::RegisterCount, "NVCDC0_QMDV05_00_REGISTER_COUNT", 1136, 1128, 0, 0),
    f(Semantic::BarrierCount, "NVCDC0_QMDV05_00_BARRIER_COUNT", 1141, 1137, 0, 0),
    f(Semantic::ConstantBufferValid, "NVCDC0_QMDV05_00_CONSTANT_BUFFER_VALID", 1856, 1856, 4, 0),
    f(Semantic::ConstantBufferAddrLower, "NVCDC0_QMDV05_00_CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6", 1375, 1344, 64, 6),
    f(Semantic::ConstantBufferAddrUpper, "NVCDC0_QMDV05_00_CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6", 1394, 1376, 64, 6),
    f(Semantic::ConstantBufferSize, "NVCDC0_QMDV05_00_CONSTANT_BUFFER_SIZE_SHIFTED4", 1407, 1395, 64, 4),
    f(Semantic::Release0Enable, "NVCDC0_QMDV05_00_RELEASE_ENABLE", 288, 288, 16, 0),
    f(Semantic::Release0AddrLower, "NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_ADDR_LOWER", 511, 480, 0, 0),
    f(Semantic::Release0AddrUpper, "NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_ADDR_UPPER", 536, 512, 0, 0),
    f(Semantic::Release0PayloadLower, "NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_PAYLOAD_LOWER", 575, 544, 0, 0),
    f(Semantic::Release0PayloadUpper, "NVCDC0_QMDV05_00_RELEASE_SEMAPHORE0_PAYLOAD_UPPER", 607, 576, 0, 0),
    f(Semantic::Release0StructureSize, "NVCDC0_QMDV05_00_RELEASE_STRUCTURE_SIZE", 290, 289, 16, 0),
    f(Semantic::InvalidateTextureHeaderCache, "NVCDC0_QMDV05_00_INVALIDATE_TEXTURE_HEADER_CACHE", 472, 472, 0, 0),
    f(Semantic::InvalidateTextureSamplerCache, "NVCDC0_QMDV05_00_INVALIDATE_TEXTURE_SAMPLER_CACHE", 473, 473, 0, 0),
    f(Semantic::InvalidateTextureDataCache, "NVCDC0_QMDV05_00_INVALIDATE_TEXTURE_DATA_CACHE", 474, 474, 0, 0),
    f(Semantic::InvalidateShaderDataCache, "NVCDC0_QMDV05_00_INVALIDATE_SHADER_DATA_CACHE", 475, 475, 0, 0),
    f(Semantic::InvalidateInstructionCache, "NVCDC0_QMDV05_00_INVALIDATE_INSTRUCTION_CACHE", 476, 476, 0, 0),
    f(Semantic::InvalidateShaderConstantCache, "NVCDC0_QMDV05_00_INVALIDATE_SHADER_CONSTANT_CACHE", 477, 477, 0, 0),
    f(Semantic::QmdGroupId, "NVCDC0_QMDV05_00_QMD_GROUP_ID", 149, 144, 0, 0),
    f(Semantic::QmdVersion, "NVCDC0_QMDV05_00_QMD_MINOR_VERSION", 467, 464, 0, 0),
    f(Semantic::QmdMajorVersion, "NVCDC0_QMDV05_00_QMD_MAJOR_VERSION", 471, 468, 0, 0),
    f(Semantic::ApiVisibleCallLimit, "NVCDC0_QMDV05_00_API_VISIBLE_CALL_LIMIT", 456, 456, 0, 0),
    f(Semantic::SamplerIndex, "NVCDC0_QMDV05_00_SAMPLER_INDEX", 457, 457, 0, 0),
    f(Semantic::ShaderLocalMemoryLowSize, "NVCDC0_QMDV05_00_SHADER_LOCAL_MEMORY_LOW_SIZE_SHIFTED4", 1199, 1184, 0, 4),
    f(Semantic::ShaderLocalMemoryHighSize, "NVCDC0_QMDV05_00_SHADER_LOCAL_MEMORY_HIGH_SIZE_SHIFTED4", 1215, 1200, 0, 4),
    f(Semantic::ProgramPrefetchSize, "NVCDC0_QMDV05_00_PROGRAM_PREFETCH_SIZE", 1085, 1077, 0, 0),
];
