//! Cubins: ELF64 objects for `EM_CUDA` (190) as ptxas writes them, read with the `object`
//! crate's ELF layer (no_std, `read_core` + `elf`).
//!
//! What a launch needs and where a cubin keeps it (ptxas 12.9; every item is checked by
//! `tests/tests/payload_real.rs` against cuobjdump 13.4 and `ptxas -v` for sm_75..sm_120):
//! - the SM: `e_flags`. Two layouts, told apart by `e_ident[EI_ABIVERSION]`: ABI 7 (up to sm_90;
//!   `EI_OSABI` 0x33) keeps the SM in bits 7:0 and the virtual SM in bits 23:16 (0x5a055a for
//!   sm_90, with 0x400 = 64-bit addresses and 0x100 set); ABI 8 (sm_100 and later; `EI_OSABI`
//!   0x41) keeps it in bits 15:8 (0x6006402 for sm_100, 0x6007802 for sm_120). cuobjdump prints
//!   `abi=7, sm=90` / `ABI=8, sm=100` for them.
//! - code: `.text.<kernel>`, whose symbol is an `STT_FUNC` with `st_other` 0x10 (entry).
//! - registers: `EIATTR_REGCOUNT` in `.nv.info` (per function symbol); cubins of ABI 7 for
//!   sm_75..sm_89 also keep it in bits 31:24 of `.text.<kernel>`'s `sh_info` (bits 23:0 are the
//!   symbol), which is the fallback here.
//! - barriers: bits 26:20 of `.text.<kernel>`'s `sh_flags` (ABI 7), or `EIATTR_NUM_BARRIERS`.
//! - parameters: `EIATTR_KPARAM_INFO` records, `EIATTR_PARAM_CBANK` (offset and size of the
//!   parameter block in constant bank 0), `EIATTR_CBANK_PARAM_SIZE`.
//! - static shared memory: the size of `.nv.shared.<kernel>` (NOBITS).
//! - constant bank 0: `.nv.constant0.<kernel>` (its size is what the QMD's bank 0 must cover).
//! - globals: `.nv.global` (NOBITS) and `.nv.global.init`; their addresses reach the code
//!   through `.nv.constant4`, patched by `R_CUDA_64` relocations (`.rel`/`.rela` sections).

use alloc::string::String;
use alloc::vec::Vec;

use object::elf::{FileHeader64, SHT_NOBITS, SHT_REL, SHT_RELA, SHT_SYMTAB};
use object::read::elf::{FileHeader, Rel as _, Rela as _, SectionHeader, Sym as _};
use object::{Endianness, SectionIndex, SymbolIndex};

use super::nvinfo::{self, attr, ParamInfo, Record};
use super::{read_u32, read_u64, Error};

/// `EM_CUDA`, the ELF machine of cubins.
pub const EM_CUDA: u16 = 190;
/// `.nv.info` section type (`SHT_LOPROC`), as cuobjdump names it `CUDA_INFO`.
pub const SHT_CUDA_INFO: u32 = 0x7000_0000;

/// The ELF layout generation of a cubin (`e_ident[EI_ABIVERSION]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfAbi {
    /// ABI version 7: up to sm_90.
    V7,
    /// ABI version 8: sm_100 and later.
    V8,
}

/// The SM a cubin's code is for, from `e_flags`.
pub fn decode_sm(abi: ElfAbi, e_flags: u32) -> u32 {
    match abi {
        ElfAbi::V7 => e_flags & 0xff,
        ElfAbi::V8 => (e_flags >> 8) & 0xff,
    }
}

/// `R_CUDA_*` relocation types this loader knows (numbers as cuobjdump names them).
pub mod reloc {
    /// No relocation.
    pub const R_CUDA_NONE: u32 = 0;
    /// 32-bit absolute address.
    pub const R_CUDA_32: u32 = 1;
    /// 64-bit absolute address (the only type ptxas 12.9 emits for our test kernels: global
    /// variable addresses in `.nv.constant4`, and `.debug_frame`).
    pub const R_CUDA_64: u32 = 2;
    /// Names, for messages and the conformance test.
    pub const NAMES: &[(u32, &str)] =
        &[(R_CUDA_NONE, "R_CUDA_NONE"), (R_CUDA_32, "R_CUDA_32"), (R_CUDA_64, "R_CUDA_64")];
}

/// A kernel parameter.
pub type Param = ParamInfo;

/// One kernel (`__global__` function) of a cubin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    /// ELF section index of `.text.<name>`.
    pub text_section: usize,
    /// The SASS code.
    pub code: Vec<u8>,
    /// Parameters, sorted by ordinal.
    pub params: Vec<Param>,
    /// Offset of the parameter block in constant bank 0 (`EIATTR_PARAM_CBANK`), if any.
    pub param_base: Option<u16>,
    /// Size of the parameter block (`EIATTR_CBANK_PARAM_SIZE`, else `EIATTR_PARAM_CBANK`).
    pub param_size: u16,
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Named barriers used.
    pub barriers: u32,
    /// Static shared memory (`.nv.shared.<name>`), bytes.
    pub shared_size: u64,
    /// Size of `.nv.constant0.<name>`.
    pub const0_size: u64,
    /// `.maxntid`, if given.
    pub max_threads: Option<[u32; 3]>,
    /// Stack frame per thread (`EIATTR_FRAME_SIZE`).
    pub frame_size: u32,
    /// Minimum stack per thread (`EIATTR_MIN_STACK_SIZE`).
    pub min_stack_size: u32,
    pub max_reg_count: Option<u16>,
    pub exit_offsets: Vec<u32>,
    pub cuda_api_version: Option<u32>,
    /// Every record of `.nv.info.<name>`, as (format, attribute, value16, blob).
    pub attributes: Vec<RawAttribute>,
}

/// An EIATTR record kept as found (unknown ones included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawAttribute {
    pub format: nvinfo::Format,
    pub attribute: u8,
    pub value16: u16,
    pub data: Vec<u8>,
}

impl From<&Record<'_>> for RawAttribute {
    fn from(r: &Record<'_>) -> Self {
        RawAttribute { format: r.format, attribute: r.attribute, value16: r.value16, data: r.data.to_vec() }
    }
}

/// A relocation against a section the loader uploads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relocation {
    /// Section patched (its ELF index and name).
    pub target_section: usize,
    pub target_name: String,
    /// Byte offset in that section.
    pub offset: u64,
    pub r_type: u32,
    /// Symbol the address is of.
    pub symbol: String,
    /// The symbol's section index (0 if undefined) and value (offset in that section).
    pub symbol_section: usize,
    pub symbol_value: u64,
    /// Explicit addend (RELA), or `None` for REL (the addend is in the patched bytes).
    pub addend: Option<i64>,
}

/// A section the loader uploads (globals, constant banks other than 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSection {
    pub index: usize,
    pub name: String,
    /// Contents; empty for NOBITS (`.nv.global`), whose size is [`DataSection::size`].
    pub data: Vec<u8>,
    pub size: u64,
    pub nobits: bool,
}

/// A parsed cubin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cubin {
    pub abi: ElfAbi,
    pub e_flags: u32,
    pub sm: u32,
    pub kernels: Vec<Kernel>,
    /// `.nv.global`, `.nv.global.init`, `.nv.constant<N>` for N != 0.
    pub data_sections: Vec<DataSection>,
    /// Relocations against code and data sections (debug sections are left out).
    pub relocations: Vec<Relocation>,
    /// Every record of the global `.nv.info` section, as found.
    pub global_attributes: Vec<RawAttribute>,
}

fn elf_err(context: &'static str) -> impl Fn(object::read::Error) -> Error {
    move |_| Error::Elf { context }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Cubin {
    /// Parses a cubin. Not-ELF, not-CUDA, 32-bit and corrupt inputs are errors.
    pub fn parse(data: &[u8]) -> Result<Cubin, Error> {
        if !data.starts_with(b"\x7fELF") {
            return Err(Error::BadMagic {
                what: "cubin (ELF) header",
                offset: 0,
                found: read_u32(data, 0, "cubin").unwrap_or(0),
            });
        }
        if data.get(4) != Some(&object::elf::ELFCLASS64) {
            return Err(Error::Elf { context: "cubin is not ELF64 (32-bit cubins are not supported)" });
        }
        let header = FileHeader64::<Endianness>::parse(data).map_err(elf_err("ELF header"))?;
        let endian = header.endian().map_err(elf_err("ELF byte order"))?;
        let machine = header.e_machine(endian);
        if machine != EM_CUDA {
            return Err(Error::NotCuda { machine });
        }
        let abi = match header.e_ident().abi_version {
            7 => ElfAbi::V7,
            8 => ElfAbi::V8,
            v => {
                return Err(Error::UnsupportedVersion {
                    what: "cubin ELF ABI (e_ident[EI_ABIVERSION])",
                    version: v.into(),
                })
            }
        };
        let e_flags = header.e_flags(endian);
        let sm = decode_sm(abi, e_flags);
        let sections = header.sections(endian, data).map_err(elf_err("section headers"))?;
        let symbols = sections.symbols(endian, data, SHT_SYMTAB).map_err(elf_err("symbol table"))?;

        let mut names = Vec::with_capacity(sections.len());
        for section in sections.iter() {
            names.push(sections.section_name(endian, section).map_err(elf_err("section name"))?);
        }
        let find = |name: &[u8]| names.iter().position(|n| *n == name);
        let section_data = |index: usize, context: &'static str| -> Result<&[u8], Error> {
            let section = sections.section(SectionIndex(index)).map_err(elf_err(context))?;
            if section.sh_type(endian) == SHT_NOBITS {
                return Ok(&[]);
            }
            section.data(endian, data).map_err(elf_err(context))
        };
        let section_size = |index: usize| -> Result<u64, Error> {
            Ok(sections.section(SectionIndex(index)).map_err(elf_err("section"))?.sh_size(endian))
        };

        // Global .nv.info: per-function registers, frame and stack sizes, by symbol index.
        let mut regcount = Vec::new();
        let mut frame = Vec::new();
        let mut min_stack = Vec::new();
        let mut global_attributes = Vec::new();
        if let Some(i) = find(b".nv.info") {
            for r in nvinfo::records(section_data(i, ".nv.info")?)? {
                global_attributes.push(RawAttribute::from(&r));
                let (Some(sym), Some(value)) = (r.word(0), r.word(1)) else { continue };
                match r.attribute {
                    attr::EIATTR_REGCOUNT => regcount.push((sym, value)),
                    attr::EIATTR_FRAME_SIZE => frame.push((sym, value)),
                    attr::EIATTR_MIN_STACK_SIZE => min_stack.push((sym, value)),
                    _ => {}
                }
            }
        }
        let lookup = |table: &[(u32, u32)], sym: usize| table.iter().find(|(s, _)| *s as usize == sym).map(|(_, v)| *v);

        let mut kernels = Vec::new();
        for (index, symbol) in symbols.iter().enumerate() {
            // Entry functions: STT_FUNC with st_other's CUDA entry bit (0x10).
            if symbol.st_type() != object::elf::STT_FUNC || symbol.st_other() & 0x10 == 0 {
                continue;
            }
            let name = symbols.symbol_name(endian, symbol).map_err(elf_err("symbol name"))?;
            let text_index = usize::from(symbol.st_shndx(endian));
            let text_name = [b".text.", name].concat();
            if names.get(text_index).copied() != Some(&text_name[..]) {
                return Err(Error::Corrupt { what: "cubin", detail: "entry symbol not in its .text.<kernel> section" });
            }
            let text = sections.section(SectionIndex(text_index)).map_err(elf_err(".text section"))?;
            let code = section_data(text_index, ".text section")?.to_vec();

            let info_name = [b".nv.info.", name].concat();
            let mut kernel = Kernel {
                name: lossy(name),
                text_section: text_index,
                code,
                params: Vec::new(),
                param_base: None,
                param_size: 0,
                registers: lookup(&regcount, index),
                barriers: ((text.sh_flags(endian) >> 20) & 0x7f) as u32,
                shared_size: 0,
                const0_size: 0,
                max_threads: None,
                frame_size: lookup(&frame, index).unwrap_or(0),
                min_stack_size: lookup(&min_stack, index).unwrap_or(0),
                max_reg_count: None,
                exit_offsets: Vec::new(),
                cuda_api_version: None,
                attributes: Vec::new(),
            };
            if kernel.registers.is_none() {
                let from_info = text.sh_info(endian) >> 24;
                kernel.registers = (from_info != 0).then_some(from_info);
            }
            if let Some(i) = find(&info_name) {
                for r in nvinfo::records(section_data(i, ".nv.info.<kernel>")?)? {
                    match r.attribute {
                        attr::EIATTR_KPARAM_INFO => kernel.params.push(ParamInfo::decode(&r)?),
                        attr::EIATTR_PARAM_CBANK => {
                            let word = r
                                .word(1)
                                .ok_or(Error::Corrupt { what: "EIATTR_PARAM_CBANK", detail: "short value" })?;
                            kernel.param_base = Some(word as u16);
                            if kernel.param_size == 0 {
                                kernel.param_size = (word >> 16) as u16;
                            }
                        }
                        attr::EIATTR_CBANK_PARAM_SIZE => kernel.param_size = r.value16,
                        attr::EIATTR_MAX_THREADS => {
                            if let (Some(x), Some(y), Some(z)) = (r.word(0), r.word(1), r.word(2)) {
                                kernel.max_threads = Some([x, y, z]);
                            }
                        }
                        attr::EIATTR_MAXREG_COUNT => kernel.max_reg_count = Some(r.value16),
                        attr::EIATTR_EXIT_INSTR_OFFSETS => kernel.exit_offsets = r.words().collect(),
                        attr::EIATTR_CUDA_API_VERSION => kernel.cuda_api_version = r.word(0),
                        attr::EIATTR_NUM_BARRIERS => kernel.barriers = kernel.barriers.max(u32::from(r.value16 & 0xff)),
                        _ => {}
                    }
                    kernel.attributes.push(RawAttribute::from(&r));
                }
            }
            kernel.params.sort_by_key(|p| p.ordinal);
            if let Some(i) = find(&[b".nv.shared.", name].concat()) {
                kernel.shared_size = section_size(i)?;
            }
            if let Some(i) = find(&[b".nv.constant0.", name].concat()) {
                kernel.const0_size = section_size(i)?;
            }
            if let Some(base) = kernel.param_base {
                let end = u64::from(base).checked_add(u64::from(kernel.param_size));
                if end.is_none_or(|end| end > kernel.const0_size) {
                    return Err(Error::Corrupt {
                        what: "cubin",
                        detail: "parameter block beyond .nv.constant0.<kernel>",
                    });
                }
            }
            kernels.push(kernel);
        }

        let mut data_sections = Vec::new();
        for (index, (section, &name)) in sections.iter().zip(&names).enumerate() {
            let is_data = name == b".nv.global"
                || name == b".nv.global.init"
                || (name.starts_with(b".nv.constant") && !name.starts_with(b".nv.constant0"));
            if is_data {
                let nobits = section.sh_type(endian) == SHT_NOBITS;
                data_sections.push(DataSection {
                    index,
                    name: lossy(name),
                    data: section_data(index, "data section")?.to_vec(),
                    size: section.sh_size(endian),
                    nobits,
                });
            }
        }

        let mut relocations = Vec::new();
        for section in sections.iter() {
            let sh_type = section.sh_type(endian);
            if sh_type != SHT_REL && sh_type != SHT_RELA {
                continue;
            }
            let target = section.sh_info(endian) as usize;
            let Some(target_name) = names.get(target) else {
                return Err(Error::Corrupt { what: "cubin", detail: "relocation section names no section" });
            };
            // Debug information is not uploaded.
            if target_name.starts_with(b".debug") {
                continue;
            }
            let mut push = |offset: u64, sym: u32, r_type: u32, addend: Option<i64>| -> Result<(), Error> {
                let symbol = symbols.symbol(SymbolIndex(sym as usize)).map_err(elf_err("relocation symbol"))?;
                relocations.push(Relocation {
                    target_section: target,
                    target_name: lossy(target_name),
                    offset,
                    r_type,
                    symbol: lossy(symbols.symbol_name(endian, symbol).map_err(elf_err("relocation symbol name"))?),
                    symbol_section: usize::from(symbol.st_shndx(endian)),
                    symbol_value: symbol.st_value(endian),
                    addend,
                });
                Ok(())
            };
            if sh_type == SHT_REL {
                if let Some((rels, _)) = section.rel(endian, data).map_err(elf_err("relocations"))? {
                    for r in rels {
                        push(r.r_offset(endian), r.r_sym(endian), r.r_type(endian), None)?;
                    }
                }
            } else if let Some((relas, _)) = section.rela(endian, data).map_err(elf_err("relocations"))? {
                for r in relas {
                    push(
                        r.r_offset(endian),
                        r.r_sym(endian, false),
                        r.r_type(endian, false),
                        Some(r.r_addend(endian)),
                    )?;
                }
            }
        }

        Ok(Cubin { abi, e_flags, sm, kernels, data_sections, relocations, global_attributes })
    }

    /// The kernel called `name`.
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// Applies the relocations against section `target` to `bytes` (that section's contents as
    /// it will be uploaded), with `section_address(index)` giving the GPU virtual address each
    /// section is loaded at. Unknown relocation types and out-of-range offsets are errors.
    pub fn relocate(
        &self,
        target: usize,
        bytes: &mut [u8],
        section_address: &dyn Fn(usize) -> Option<u64>,
    ) -> Result<usize, Error> {
        let mut applied = 0usize;
        for r in self.relocations.iter().filter(|r| r.target_section == target) {
            let width = match r.r_type {
                reloc::R_CUDA_NONE => continue,
                reloc::R_CUDA_32 => 4,
                reloc::R_CUDA_64 => 8,
                other => return Err(Error::UnsupportedRelocation { section: r.target_name.clone(), r_type: other }),
            };
            // The `width` bytes the relocation patches.
            let slot = usize::try_from(r.offset).ok().and_then(|at| bytes.get_mut(at..at.checked_add(width)?));
            let Some(slot) = slot else {
                return Err(Error::Corrupt { what: "relocation", detail: "offset outside its section" });
            };
            let base = section_address(r.symbol_section).ok_or(Error::UnresolvedSymbol { symbol: r.symbol.clone() })?;
            let addend = match r.addend {
                Some(a) => a as u64,
                None if width == 8 => read_u64(slot, 0, "relocation")?,
                None => u64::from(read_u32(slot, 0, "relocation")?),
            };
            // ELF relocation arithmetic (S + A) is modulo 2^64.
            let value = base.wrapping_add(r.symbol_value).wrapping_add(addend);
            if width == 8 {
                slot.copy_from_slice(&value.to_le_bytes());
            } else {
                let narrow = u32::try_from(value)
                    .map_err(|_| Error::Corrupt { what: "relocation", detail: "address does not fit R_CUDA_32" })?;
                slot.copy_from_slice(&narrow.to_le_bytes());
            }
            // At most one per relocation: never saturates.
            applied = applied.saturating_add(1);
        }
        Ok(applied)
    }
}
