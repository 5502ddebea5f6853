//! Claiming a function: command register, power state, MSI and MSI-X programming.
//!
//! - Command register: PCI Local Bus Specification 3.0 §6.2.2 (bit 0 I/O space, 1 memory space,
//!   2 bus master, 10 interrupt disable). It shares a dword with the status register, whose error
//!   bits are write-one-to-clear, so every write here puts zeros in the status half.
//! - Power: PCI Bus Power Management Interface Specification 1.2 §3.2.4 (PMCSR) and §5.4/§5.6
//!   (allowed transitions, recovery times).
//! - MSI: PCI LB 3.0 §6.8.1 (register layout) and §6.8.3.4 (the function ORs the vector number
//!   into the low Multiple-Message-Enable bits of Message Data); PCIe Base §7.7.1 (extended
//!   message data).
//! - MSI-X: PCI LB 3.0 §6.8.2 and PCIe Base §7.7.2 (table entry: address low/high, data, vector
//!   control with bit 0 = mask; table and PBA located by BIR + offset; PBA one bit per entry in
//!   qwords).
//!
//! Only config space is touched here. The MSI-X table lives in a BAR, which the kernel maps; this
//! module says where and what to write.

use core::fmt;

use pci_types::{CommandRegister, PciAddress};

use super::access::ConfigAccess;
use super::bar::COMMAND;
use super::caps::{
    PowerState, MSIX_CONTROL_ENABLE, MSIX_CONTROL_FUNCTION_MASK, MSI_CONTROL_ENABLE, MSI_CONTROL_EXT_DATA_ENABLE,
    MSI_CONTROL_MME_MASK, MSI_CONTROL_MME_SHIFT, PMCSR_NO_SOFT_RESET, PMCSR_PME_STATUS, PMCSR_STATE_MASK,
};
use super::function::{MsixStructure, PciFunction};

/// What went wrong claiming or programming a function; each names the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PciError {
    /// Config reads return all ones: the function is gone or was never there.
    DeviceGone {
        function: PciAddress,
    },
    NoCapability {
        function: PciAddress,
        capability: &'static str,
    },
    /// The command register did not keep the bits written (e.g. I/O decode on a function with
    /// no I/O BARs, where the bit is hardwired to 0).
    CommandNotAccepted {
        function: PciAddress,
        wanted: u16,
        got: u16,
    },
    PowerStateNotSupported {
        function: PciAddress,
        state: PowerState,
    },
    /// D3hot may only go to D0; D2 only deeper or to D0 (PCI PM 1.2 §5.4).
    InvalidPowerTransition {
        function: PciAddress,
        from: PowerState,
        to: PowerState,
    },
    /// MSI vector counts are powers of two up to what the function can send.
    InvalidVectorCount {
        function: PciAddress,
        requested: u16,
        capable: u16,
    },
    /// Message address bits 1:0 must be zero.
    MessageAddressMisaligned {
        function: PciAddress,
        message_address: u64,
    },
    /// The MSI capability has no upper address register.
    MessageAddressAbove4GiB {
        function: PciAddress,
        message_address: u64,
    },
    /// Data above 16 bits needs the extended message data capability.
    MessageDataTooWide {
        function: PciAddress,
        data: u32,
    },
    /// With n vectors the function writes the vector number into the low log2(n) data bits.
    MessageDataNotAligned {
        function: PciAddress,
        data: u32,
        vectors: u16,
    },
    /// MSI and MSI-X must never be enabled together.
    OtherInterruptModeEnabled {
        function: PciAddress,
        enabled: &'static str,
    },
    MsixOutsideBar {
        function: PciAddress,
        what: MsixStructure,
        bir: u8,
        offset: u32,
    },
    MsixEntryOutOfRange {
        function: PciAddress,
        index: u16,
        entries: u16,
    },
}

impl fmt::Display for PciError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PciError::DeviceGone { function } => write!(f, "pci {function}: config space reads all ones"),
            PciError::NoCapability { function, capability } => {
                write!(f, "pci {function}: no {capability} capability")
            }
            PciError::CommandNotAccepted { function, wanted, got } => {
                write!(f, "pci {function}: command register 0x{got:04x} after writing 0x{wanted:04x}")
            }
            PciError::PowerStateNotSupported { function, state } => {
                write!(f, "pci {function}: power state {} not supported", state.name())
            }
            PciError::InvalidPowerTransition { function, from, to } => {
                write!(f, "pci {function}: power transition {} -> {} not allowed", from.name(), to.name())
            }
            PciError::InvalidVectorCount { function, requested, capable } => {
                write!(f, "pci {function}: {requested} msi vectors requested, capable of {capable} (power of two)")
            }
            PciError::MessageAddressMisaligned { function, message_address } => {
                write!(f, "pci {function}: message address 0x{message_address:x} not dword aligned")
            }
            PciError::MessageAddressAbove4GiB { function, message_address } => {
                write!(f, "pci {function}: message address 0x{message_address:x} needs a 64-bit msi capability")
            }
            PciError::MessageDataTooWide { function, data } => {
                write!(f, "pci {function}: message data 0x{data:x} wider than 16 bits without extended data")
            }
            PciError::MessageDataNotAligned { function, data, vectors } => {
                write!(f, "pci {function}: message data 0x{data:x} not aligned to {vectors} vectors")
            }
            PciError::OtherInterruptModeEnabled { function, enabled } => {
                write!(f, "pci {function}: {enabled} is enabled; disable it first")
            }
            PciError::MsixOutsideBar { function, what, bir, offset } => {
                let what = match what {
                    MsixStructure::Table => "table",
                    MsixStructure::PendingBitArray => "pba",
                };
                write!(f, "pci {function}: msi-x {what} bar{bir}+0x{offset:x} outside an implemented memory bar")
            }
            PciError::MsixEntryOutOfRange { function, index, entries } => {
                write!(f, "pci {function}: msi-x entry {index} of {entries}")
            }
        }
    }
}

/// Which decoders to turn on when claiming a function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Decode {
    pub memory: bool,
    pub io: bool,
    pub bus_master: bool,
}

/// Turns on the requested decoders (leaving every other command bit as found) and returns the
/// command register as read back. Bus mastering lets the function DMA anywhere the IOMMU (if
/// any) allows: request it only once the driver owns the device's DMA setup.
pub fn enable<A: ConfigAccess + ?Sized>(
    access: &A,
    function: PciAddress,
    decode: Decode,
) -> Result<CommandRegister, PciError> {
    let mut wanted = CommandRegister::empty();
    wanted.set(CommandRegister::MEMORY_ENABLE, decode.memory);
    wanted.set(CommandRegister::IO_ENABLE, decode.io);
    wanted.set(CommandRegister::BUS_MASTER_ENABLE, decode.bus_master);
    let command = update_command(access, function, wanted, CommandRegister::empty())?;
    if !command.contains(wanted) {
        return Err(PciError::CommandNotAccepted { function, wanted: wanted.bits(), got: command.bits() });
    }
    Ok(command)
}

/// The command register as it is, read and nothing written; `DeviceGone` when the function
/// answers all ones.
pub fn command<A: ConfigAccess + ?Sized>(access: &A, function: PciAddress) -> Result<CommandRegister, PciError> {
    match access.read32(function, COMMAND) {
        u32::MAX => Err(PciError::DeviceGone { function }),
        dword => Ok(CommandRegister::from_bits_retain(dword as u16)),
    }
}

/// Read-modify-write of the command register; returns it as read back afterwards.
fn update_command<A: ConfigAccess + ?Sized>(
    access: &A,
    function: PciAddress,
    set: CommandRegister,
    clear: CommandRegister,
) -> Result<CommandRegister, PciError> {
    let dword = access.read32(function, COMMAND);
    if dword == u32::MAX {
        return Err(PciError::DeviceGone { function });
    }
    let current = CommandRegister::from_bits_retain(dword as u16);
    let updated = (current | set) - clear;
    if updated != current {
        // Status half zero: its bits are RO or write-one-to-clear.
        access.write32(function, COMMAND, updated.bits() as u32);
    }
    Ok(CommandRegister::from_bits_retain(access.read32(function, COMMAND) as u16))
}

/// The outcome of a power state change, for the caller to act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PowerTransition {
    pub from: PowerState,
    pub to: PowerState,
    /// Minimum time before the function may be accessed again (PCI PM 1.2 §5.6.1, Table 5-6):
    /// 10 ms into or out of D3hot, 200 µs into or out of D2, otherwise none. The caller waits;
    /// this library has no clock.
    pub settle_us: u32,
    /// D3hot -> D0 without No_Soft_Reset: the function was reset (D0uninitialized). BARs, the
    /// command register and MSI/MSI-X state must be programmed again.
    pub state_lost: bool,
}

/// Reads the current power state from PMCSR.
pub fn power_state<A: ConfigAccess + ?Sized>(access: &A, function: &PciFunction) -> Result<PowerState, PciError> {
    let address = function.address;
    let pm = function.power.ok_or(PciError::NoCapability { function: address, capability: "pm" })?;
    let pmcsr = access.read32(address, pm.pmcsr_offset());
    if pmcsr == u32::MAX {
        return Err(PciError::DeviceGone { function: address });
    }
    Ok(PowerState::from_field(pmcsr))
}

/// Moves the function to `state` through the Power Management capability's PMCSR. Does not
/// wait: see [`PowerTransition::settle_us`].
pub fn set_power_state<A: ConfigAccess + ?Sized>(
    access: &A,
    function: &PciFunction,
    state: PowerState,
) -> Result<PowerTransition, PciError> {
    let address = function.address;
    let pm = function.power.ok_or(PciError::NoCapability { function: address, capability: "pm" })?;
    if !pm.supports(state) {
        return Err(PciError::PowerStateNotSupported { function: address, state });
    }
    let pmcsr = access.read32(address, pm.pmcsr_offset());
    if pmcsr == u32::MAX {
        return Err(PciError::DeviceGone { function: address });
    }
    let from = PowerState::from_field(pmcsr);
    if from == state {
        return Ok(PowerTransition { from, to: state, settle_us: 0, state_lost: false });
    }
    // Only deeper, or back to D0 (PCI PM 1.2 §5.4, Figure 5-1).
    if state != PowerState::D0 && state < from {
        return Err(PciError::InvalidPowerTransition { function: address, from, to: state });
    }
    // PME_Status written as 0 (it is write-one-to-clear); PME_En, Data_Select kept; the upper
    // half (bridge extensions, data) is read-only.
    let value = (pmcsr & !(PMCSR_STATE_MASK | PMCSR_PME_STATUS)) | state.field();
    access.write32(address, pm.pmcsr_offset(), value);

    let settle_us = match (from, state) {
        (PowerState::D3Hot, _) | (_, PowerState::D3Hot) => 10_000,
        (PowerState::D2, _) | (_, PowerState::D2) => 200,
        _ => 0,
    };
    let state_lost = from == PowerState::D3Hot && state == PowerState::D0 && pmcsr & PMCSR_NO_SOFT_RESET == 0;
    Ok(PowerTransition { from, to: state, settle_us, state_lost })
}

/// Programs and enables MSI: `vectors` (a power of two up to the capability's limit) messages
/// writing `data | vector_number` to `address`. Sequence: disable, write address and data,
/// unmask the vectors in use (per-vector masking only), set Multiple Message Enable and Enable,
/// then set Interrupt Disable so INTx stays quiet. Fails, writing nothing, if MSI-X is enabled.
pub fn msi_configure<A: ConfigAccess + ?Sized>(
    access: &A,
    function: &PciFunction,
    address: u64,
    data: u32,
    vectors: u8,
) -> Result<(), PciError> {
    let pci = function.address;
    let msi = function.msi.ok_or(PciError::NoCapability { function: pci, capability: "msi" })?;
    let capable = msi.vectors_capable();
    if vectors == 0 || !vectors.is_power_of_two() || vectors > capable {
        return Err(PciError::InvalidVectorCount { function: pci, requested: vectors as u16, capable: capable as u16 });
    }
    if address & 0b11 != 0 {
        return Err(PciError::MessageAddressMisaligned { function: pci, message_address: address });
    }
    if !msi.is_64bit && address > u32::MAX as u64 {
        return Err(PciError::MessageAddressAbove4GiB { function: pci, message_address: address });
    }
    let extended_data = data > 0xffff;
    if extended_data && !msi.extended_data_capable {
        return Err(PciError::MessageDataTooWide { function: pci, data });
    }
    if data & (vectors as u32 - 1) != 0 {
        return Err(PciError::MessageDataNotAligned { function: pci, data, vectors: vectors as u16 });
    }
    if msix_enabled(access, function)? {
        return Err(PciError::OtherInterruptModeEnabled { function: pci, enabled: "msi-x" });
    }

    let cap = msi.offset as u16;
    let head = access.read32(pci, cap);
    if head == u32::MAX {
        return Err(PciError::DeviceGone { function: pci });
    }
    let control = (head >> 16) as u16;
    let disabled = control & !MSI_CONTROL_ENABLE;
    write_control(access, pci, cap, head, disabled);

    access.write32(pci, msi.address_offset(), address as u32);
    if let Some(high) = msi.address_high_offset() {
        access.write32(pci, high, (address >> 32) as u32);
    }
    access.write32(pci, msi.data_offset(), data);
    if let Some(mask) = msi.mask_offset() {
        let in_use = if vectors >= 32 { u32::MAX } else { (1u32 << vectors) - 1 };
        access.write32(pci, mask, !in_use);
    }

    let mut enabled = (disabled & !MSI_CONTROL_MME_MASK)
        | ((vectors.trailing_zeros() as u16) << MSI_CONTROL_MME_SHIFT)
        | MSI_CONTROL_ENABLE;
    if extended_data {
        enabled |= MSI_CONTROL_EXT_DATA_ENABLE;
    } else {
        enabled &= !MSI_CONTROL_EXT_DATA_ENABLE;
    }
    write_control(access, pci, cap, head, enabled);
    update_command(access, pci, CommandRegister::INTERRUPT_DISABLE, CommandRegister::empty())?;
    Ok(())
}

/// Clears MSI Enable and lets INTx through again.
pub fn msi_disable<A: ConfigAccess + ?Sized>(access: &A, function: &PciFunction) -> Result<(), PciError> {
    let pci = function.address;
    let msi = function.msi.ok_or(PciError::NoCapability { function: pci, capability: "msi" })?;
    let cap = msi.offset as u16;
    let head = access.read32(pci, cap);
    if head == u32::MAX {
        return Err(PciError::DeviceGone { function: pci });
    }
    write_control(access, pci, cap, head, (head >> 16) as u16 & !MSI_CONTROL_ENABLE);
    update_command(access, pci, CommandRegister::empty(), CommandRegister::INTERRUPT_DISABLE)?;
    Ok(())
}

/// Writes a capability's Message Control (bits 31:16 of its first dword); the low half (ID, next
/// pointer) is read-only and written back unchanged.
fn write_control<A: ConfigAccess + ?Sized>(access: &A, function: PciAddress, cap: u16, head: u32, control: u16) {
    access.write32(function, cap, (head & 0xffff) | (control as u32) << 16);
}

fn msi_enabled<A: ConfigAccess + ?Sized>(access: &A, function: &PciFunction) -> Result<bool, PciError> {
    let Some(msi) = function.msi else {
        return Ok(false);
    };
    let head = access.read32(function.address, msi.offset as u16);
    if head == u32::MAX {
        return Err(PciError::DeviceGone { function: function.address });
    }
    Ok((head >> 16) as u16 & MSI_CONTROL_ENABLE != 0)
}

fn msix_enabled<A: ConfigAccess + ?Sized>(access: &A, function: &PciFunction) -> Result<bool, PciError> {
    let Some(msix) = function.msix else {
        return Ok(false);
    };
    let head = access.read32(function.address, msix.offset as u16);
    if head == u32::MAX {
        return Err(PciError::DeviceGone { function: function.address });
    }
    Ok((head >> 16) as u16 & MSIX_CONTROL_ENABLE != 0)
}

/// A byte range inside one of the function's BARs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BarRegion {
    /// BAR slot (for a 64-bit BAR, its lower slot).
    pub bar: u8,
    /// Offset from the start of the BAR.
    pub offset: u64,
    pub len: u64,
    /// Bus address of the first byte: BAR address + offset (what firmware assigned).
    pub address: u64,
}

/// Where a function's MSI-X table and Pending Bit Array live, validated against its BARs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsixLayout {
    pub function: PciAddress,
    pub entries: u16,
    /// `entries` × 16 bytes.
    pub table: BarRegion,
    /// One bit per entry, in qwords.
    pub pba: BarRegion,
}

/// Locates the MSI-X table and PBA: each must sit inside an implemented memory BAR.
pub fn msix_layout(function: &PciFunction) -> Result<MsixLayout, PciError> {
    let pci = function.address;
    let msix = function.msix.ok_or(PciError::NoCapability { function: pci, capability: "msi-x" })?;
    let table_len = msix.table_size as u64 * MsixTableEntry::SIZE;
    let pba_len = (msix.table_size as u64).div_ceil(64) * 8;
    let region = |what, bir: u8, offset: u32, len: u64| {
        function
            .bar(bir)
            .filter(|bar| bar.is_memory() && offset as u64 + len <= bar.size)
            .and_then(|bar| {
                // A BAR near the top of the address space is input too: no overflow.
                let address = bar.address.checked_add(offset as u64)?;
                Some(BarRegion { bar: bir, offset: offset as u64, len, address })
            })
            .ok_or(PciError::MsixOutsideBar { function: pci, what, bir, offset })
    };
    Ok(MsixLayout {
        function: pci,
        entries: msix.table_size,
        table: region(MsixStructure::Table, msix.table_bir, msix.table_offset, table_len)?,
        pba: region(MsixStructure::PendingBitArray, msix.pba_bir, msix.pba_offset, pba_len)?,
    })
}

impl MsixLayout {
    /// Offset of entry `index` from the start of the table's BAR.
    pub fn entry_offset(&self, index: u16) -> Result<u64, PciError> {
        if index >= self.entries {
            return Err(PciError::MsixEntryOutOfRange { function: self.function, index, entries: self.entries });
        }
        Ok(self.table.offset + index as u64 * MsixTableEntry::SIZE)
    }

    /// A checked entry for `index`: its offset in the BAR and its contents.
    pub fn entry(
        &self,
        index: u16,
        message_address: u64,
        data: u32,
        masked: bool,
    ) -> Result<(u64, MsixTableEntry), PciError> {
        let offset = self.entry_offset(index)?;
        if message_address & 0b11 != 0 {
            return Err(PciError::MessageAddressMisaligned { function: self.function, message_address });
        }
        Ok((offset, MsixTableEntry { address: message_address, data, masked }))
    }
}

/// One MSI-X table entry (16 bytes, little-endian dwords).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsixTableEntry {
    pub address: u64,
    pub data: u32,
    pub masked: bool,
}

impl MsixTableEntry {
    pub const SIZE: u64 = 16;
    pub const ADDRESS_LOW: u64 = 0x0;
    pub const ADDRESS_HIGH: u64 = 0x4;
    pub const DATA: u64 = 0x8;
    pub const VECTOR_CONTROL: u64 = 0xc;
    /// Vector Control bit 0.
    pub const MASK_BIT: u32 = 1 << 0;

    /// The four dwords in table order: address low, address high, data, vector control.
    /// Write them as 32-bit MMIO stores (the spec allows only dword or qword table access), and
    /// write vector control last, so an entry is never live half-written.
    pub fn to_dwords(&self) -> [u32; 4] {
        [self.address as u32, (self.address >> 32) as u32, self.data, if self.masked { Self::MASK_BIT } else { 0 }]
    }

    pub fn to_bytes(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        for (chunk, dword) in bytes.chunks_exact_mut(4).zip(self.to_dwords()) {
            chunk.copy_from_slice(&dword.to_le_bytes());
        }
        bytes
    }

    /// Vector Control with the mask bit changed and bits 31:1 kept as read: those are reserved
    /// or steering tags (PCIe Base §7.7.2.4), which software must preserve.
    pub fn vector_control(current: u32, masked: bool) -> u32 {
        if masked {
            current | Self::MASK_BIT
        } else {
            current & !Self::MASK_BIT
        }
    }
}

/// The two MSI-X Message Control bits software owns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsixControl {
    pub enable: bool,
    pub function_mask: bool,
}

/// Sets MSI-X Enable (Message Control bit 15) and Function Mask (bit 14). Enabling also sets
/// the command register's Interrupt Disable; disabling clears it. Fails if MSI is enabled.
///
/// Recommended order: `{enable, function_mask: true}`, program the table, then
/// `{enable, function_mask: false}`.
pub fn msix_set_control<A: ConfigAccess + ?Sized>(
    access: &A,
    function: &PciFunction,
    control: MsixControl,
) -> Result<(), PciError> {
    let pci = function.address;
    let msix = function.msix.ok_or(PciError::NoCapability { function: pci, capability: "msi-x" })?;
    if control.enable && msi_enabled(access, function)? {
        return Err(PciError::OtherInterruptModeEnabled { function: pci, enabled: "msi" });
    }
    let cap = msix.offset as u16;
    let head = access.read32(pci, cap);
    if head == u32::MAX {
        return Err(PciError::DeviceGone { function: pci });
    }
    let mut value = (head >> 16) as u16 & !(MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK);
    if control.enable {
        value |= MSIX_CONTROL_ENABLE;
    }
    if control.function_mask {
        value |= MSIX_CONTROL_FUNCTION_MASK;
    }
    write_control(access, pci, cap, head, value);
    if control.enable {
        update_command(access, pci, CommandRegister::INTERRUPT_DISABLE, CommandRegister::empty())?;
    } else {
        update_command(access, pci, CommandRegister::empty(), CommandRegister::INTERRUPT_DISABLE)?;
    }
    Ok(())
}
