//! `SET_REGISTRY`: the registry keys GSP-RM reads at boot, packed as `PACKED_REGISTRY_TABLE`.

use super::*;

/// `REGISTRY_TABLE_ENTRY_TYPE_DWORD`.
pub const REGISTRY_TABLE_ENTRY_TYPE_DWORD: u8 = 1;
/// `REGISTRY_TABLE_ENTRY_TYPE_BINARY`.
pub const REGISTRY_TABLE_ENTRY_TYPE_BINARY: u8 = 2;
/// `REGISTRY_TABLE_ENTRY_TYPE_STRING`.
pub const REGISTRY_TABLE_ENTRY_TYPE_STRING: u8 = 3;

/// `PACKED_REGISTRY_ENTRY` (`g_os_nvoc.h`). 16 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PackedRegistryEntry {
    /// `nameOffset`: offset of the NUL-terminated name from the table start.
    pub name_offset: u32,
    /// `type`: `REGISTRY_TABLE_ENTRY_TYPE_*`.
    pub type_: u8,
    /// Padding before `data`.
    pub _padding: [u8; 3],
    /// `data`: the value of a DWORD; the offset of the bytes of a BINARY or STRING.
    pub data: u32,
    /// `length`: 4 for a DWORD; bytes of a BINARY or STRING.
    pub length: u32,
}

/// `PACKED_REGISTRY_TABLE` (`g_os_nvoc.h`) without its `entries[]`. 8 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct PackedRegistryTable {
    /// `size`: bytes of the whole table, names and data included.
    pub size: u32,
    /// `numEntries`.
    pub num_entries: u32,
}

/// A registry value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegistryValue {
    /// `REGISTRY_TABLE_ENTRY_TYPE_DWORD`.
    Dword(u32),
    /// `REGISTRY_TABLE_ENTRY_TYPE_BINARY`.
    Binary(Vec<u8>),
    /// `REGISTRY_TABLE_ENTRY_TYPE_STRING`: the bytes as sent (with their terminating NUL).
    String(Vec<u8>),
}

/// Registry keys for GSP-RM, packed as `RmPackageRegistry` / `regCopyEntriesToPackedBuffer`
/// (`registry.c`) pack them: the table header, every entry, then each entry's NUL-terminated
/// name followed by its BINARY or STRING bytes, in entry order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistryTable {
    /// The entries, in order.
    pub entries: Vec<(String, RegistryValue)>,
}

impl RegistryTable {
    /// An empty table.
    pub const fn new() -> Self {
        RegistryTable { entries: Vec::new() }
    }

    /// Adds a DWORD key.
    pub fn dword(mut self, name: &str, value: u32) -> Self {
        self.entries.push((name.into(), RegistryValue::Dword(value)));
        self
    }

    /// Adds a STRING key (a terminating NUL is added).
    pub fn string(mut self, name: &str, value: &str) -> Self {
        let mut bytes = Vec::from(value.as_bytes());
        bytes.push(0);
        self.entries.push((name.into(), RegistryValue::String(bytes)));
        self
    }

    /// Adds a BINARY key.
    pub fn binary(mut self, name: &str, value: &[u8]) -> Self {
        self.entries.push((name.into(), RegistryValue::Binary(value.into())));
        self
    }

    /// The packed table.
    pub fn pack(&self) -> Vec<u8> {
        let header = size_of::<PackedRegistryTable>();
        let entries = size_of::<PackedRegistryEntry>() * self.entries.len();
        let mut data = Vec::new();
        let mut packed = Vec::new();
        for (name, value) in &self.entries {
            let name_offset = (header + entries + data.len()) as u32;
            data.extend_from_slice(name.as_bytes());
            data.push(0);
            let (type_, value_word, length) = match value {
                RegistryValue::Dword(v) => (REGISTRY_TABLE_ENTRY_TYPE_DWORD, *v, 4),
                RegistryValue::Binary(b) | RegistryValue::String(b) => {
                    let at = (header + entries + data.len()) as u32;
                    data.extend_from_slice(b);
                    let t = if matches!(value, RegistryValue::Binary(_)) {
                        REGISTRY_TABLE_ENTRY_TYPE_BINARY
                    } else {
                        REGISTRY_TABLE_ENTRY_TYPE_STRING
                    };
                    (t, at, b.len() as u32)
                }
            };
            packed.push(PackedRegistryEntry { name_offset, type_, _padding: [0; 3], data: value_word, length });
        }
        let mut out = Vec::with_capacity(header + entries + data.len());
        out.extend_from_slice(
            PackedRegistryTable {
                size: (header + entries + data.len()) as u32,
                num_entries: self.entries.len() as u32,
            }
            .as_bytes(),
        );
        for e in &packed {
            out.extend_from_slice(e.as_bytes());
        }
        out.extend_from_slice(&data);
        out
    }

    /// Reads a packed table back (what GSP-RM does with it; for the model), checking every
    /// offset and length against the bytes.
    pub fn unpack(bytes: &[u8]) -> Result<Self, RpcError> {
        let bad = |reason| RpcError::bad_reply(RpcFunction::SetRegistry, reason, bytes.len());
        let header: PackedRegistryTable = read_prefix(bytes).ok_or(bad("shorter than PACKED_REGISTRY_TABLE"))?;
        if header.size as usize != bytes.len() {
            return Err(bad("size does not match the table's length"));
        }
        let mut table = RegistryTable::new();
        for i in 0..header.num_entries as usize {
            let at = size_of::<PackedRegistryTable>() + i * size_of::<PackedRegistryEntry>();
            let e: PackedRegistryEntry =
                read_prefix(bytes.get(at..).unwrap_or(&[])).ok_or(bad("entry beyond the table"))?;
            let name_bytes = bytes.get(e.name_offset as usize..).ok_or(bad("name beyond the table"))?;
            let end = name_bytes.iter().position(|&b| b == 0).ok_or(bad("name without NUL"))?;
            let name = core::str::from_utf8(&name_bytes[..end]).map_err(|_| bad("name is not UTF-8"))?;
            let blob = |offset: u32, len: u32| {
                let start = offset as usize;
                bytes.get(start..start.checked_add(len as usize)?).map(Vec::from)
            };
            let value = match e.type_ {
                REGISTRY_TABLE_ENTRY_TYPE_DWORD => RegistryValue::Dword(e.data),
                REGISTRY_TABLE_ENTRY_TYPE_BINARY => {
                    RegistryValue::Binary(blob(e.data, e.length).ok_or(bad("value beyond the table"))?)
                }
                REGISTRY_TABLE_ENTRY_TYPE_STRING => {
                    RegistryValue::String(blob(e.data, e.length).ok_or(bad("value beyond the table"))?)
                }
                _ => return Err(bad("unknown entry type")),
            };
            table.entries.push((name.into(), value));
        }
        Ok(table)
    }
}

/// `SET_REGISTRY`: registry keys, queued before GSP-RM boots and not answered
/// (`rpcSetRegistry_v17_00`, async; use [`GspRpc::post`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetRegistry(pub RegistryTable);

impl Rpc for SetRegistry {
    const FUNCTION: RpcFunction = RpcFunction::SetRegistry;
    type Reply = ();
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.pack());
    }
    fn decode_reply(_: &[u8]) -> Result<(), RpcError> {
        Ok(())
    }
}
