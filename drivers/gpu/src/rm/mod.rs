//! Resource manager objects allocated in GSP-RM: a client (`NV01_ROOT`), its device
//! (`NV01_DEVICE_0`) and subdevice (`NV20_SUBDEVICE_0`), and any other object class through
//! [`RmClient::alloc`]; controls on them; freeing them children first. Beside `gsp/`, over its
//! RPCs: [`fifo`] (channels and their objects), [`gmmu`] (the fault buffer's registration),
//! [`intr`] (the interrupt table).
//!
//! The sequence follows RM's own `rmapiutilAllocClientAndDeviceHandles` /
//! `rmapiutilFreeClientAndDeviceHandles` (`src/nvidia/src/kernel/rmapi/rmapi_utils.c`, 535.261.03)
//! over `rpcRmApiAlloc_GSP`, `rpcRmApiControl_GSP` and `rpcRmApiFree_GSP` (`rpc.c`).
//!
//! # Handles
//!
//! RM's resource server numbers clients from `RS_CLIENT_HANDLE_BASE` (0xC1D00000, `resserv.h`)
//! and hands out handles for a client's objects from `RS_UNIQUE_HANDLE_BASE` (0xCAF00000,
//! `rs_client.h`, `clientGenResourceHandle`); RM's CPU side sends GSP-RM handles made that way.
//! This driver does the same: client `i` is `0xC1D00000 + i`, and a client's objects are
//! `0xCAF00000 + n` for n = 1, 2, ... in allocation order, never reused, within the first half of
//! `RS_UNIQUE_HANDLE_RANGE` (the half `clientSetHandleGenerator` leaves to a guest's RM; the
//! other is the host's). Every object is allocated with an explicit handle, so GSP-RM never
//! generates one inside our clients.
//!
//! # Lifetime
//!
//! [`RmClient`] keeps the tree of objects it allocated. [`RmClient::free`] refuses to free an
//! object that still has children ([`RmError::HasChildren`]); [`RmClient::free_tree`] frees an
//! object's descendants deepest first, then the object; [`RmClient::free_all`] does that for
//! every object and then frees the client.

pub mod fifo;
pub mod gmmu;
pub mod intr;

use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::gsp::commands::{Free, GspRmAlloc, GspRmControl, RmCallReply, RpcChannel, RpcError, RMAPI_RPC_FLAGS_NONE};
use crate::gsp::status::NvStatus;
use crate::hw::headers;
use crate::hw::layout::{ConstantFact, FieldLayout, StructLayout};

/// `NV01_NULL_OBJECT`.
pub const NV01_NULL_OBJECT: u32 = 0;
/// `NV01_ROOT`: the client class.
pub const NV01_ROOT: u32 = 0x0;
/// `NV01_DEVICE_0`.
pub const NV01_DEVICE_0: u32 = 0x80;
/// `NV20_SUBDEVICE_0`.
pub const NV20_SUBDEVICE_0: u32 = 0x2080;
/// `NV_PROC_NAME_MAX_LENGTH`.
pub const NV_PROC_NAME_MAX_LENGTH: usize = 100;
/// `RS_CLIENT_HANDLE_BASE`.
pub const RS_CLIENT_HANDLE_BASE: u32 = 0xC1D0_0000;
/// `RS_CLIENT_HANDLE_MAX`: clients per handle range.
pub const RS_CLIENT_HANDLE_MAX: u32 = 0x10_0000;
/// `RS_UNIQUE_HANDLE_BASE`: where RM generates a client's object handles.
pub const RS_UNIQUE_HANDLE_BASE: u32 = 0xcaf0_0000;
/// `RS_UNIQUE_HANDLE_RANGE`.
pub const RS_UNIQUE_HANDLE_RANGE: u32 = 0x0008_0000;
/// Object handles per client this driver uses: the guest half of `RS_UNIQUE_HANDLE_RANGE`.
pub const OBJECT_HANDLES_PER_CLIENT: u32 = RS_UNIQUE_HANDLE_RANGE / 2;

/// `NV0000_ALLOC_PARAMETERS`: allocation parameters of a client. 108 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv0000AllocParameters {
    /// `hClient`: the client's own handle.
    pub h_client: u32,
    /// `processID`.
    pub process_id: u32,
    /// `processName`: NUL-terminated.
    pub process_name: [u8; NV_PROC_NAME_MAX_LENGTH],
}

impl Nv0000AllocParameters {
    /// Parameters for client `h_client` of process `process_id` named `name` (truncated to fit
    /// with its NUL).
    pub fn new(h_client: u32, process_id: u32, name: &str) -> Self {
        let mut process_name = [0u8; NV_PROC_NAME_MAX_LENGTH];
        let n = name.len().min(NV_PROC_NAME_MAX_LENGTH - 1);
        process_name[..n].copy_from_slice(&name.as_bytes()[..n]);
        Nv0000AllocParameters { h_client, process_id, process_name }
    }
}

/// `NV0080_ALLOC_PARAMETERS`: allocation parameters of a device. 56 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv0080AllocParameters {
    /// `deviceId`: RM's device instance.
    pub device_id: u32,
    /// `hClientShare`: the client whose VA space the device shares (RM: the client itself).
    pub h_client_share: u32,
    /// `hTargetClient`.
    pub h_target_client: u32,
    /// `hTargetDevice`.
    pub h_target_device: u32,
    /// `flags`: `NV_DEVICE_ALLOCATION_FLAGS_*`.
    pub flags: u32,
    /// Padding before `vaSpaceSize`.
    pub _padding0: u32,
    /// `vaSpaceSize`.
    pub va_space_size: u64,
    /// `vaStartInternal`.
    pub va_start_internal: u64,
    /// `vaLimitInternal`.
    pub va_limit_internal: u64,
    /// `vaMode`: `NV_DEVICE_ALLOCATION_VAMODE_*`.
    pub va_mode: u32,
    /// Trailing padding.
    pub _padding1: u32,
}

/// `NV2080_ALLOC_PARAMETERS`: allocation parameters of a subdevice. 4 bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Nv2080AllocParameters {
    /// `subDeviceId`.
    pub sub_device_id: u32,
}

/// A kind of RM object, for typed handles.
pub trait ObjectKind {
    /// For messages.
    const NAME: &'static str;
}

/// The client (`NV01_ROOT`).
#[derive(Debug)]
pub enum Client {}
/// A device (`NV01_DEVICE_0`).
#[derive(Debug)]
pub enum Device {}
/// A subdevice (`NV20_SUBDEVICE_0`).
#[derive(Debug)]
pub enum Subdevice {}
/// Any other object (VA spaces, channels, memory, ...); layers above may define their own
/// kinds.
#[derive(Debug)]
pub enum AnyObject {}

impl ObjectKind for Client {
    const NAME: &'static str = "client";
}
impl ObjectKind for Device {
    const NAME: &'static str = "device";
}
impl ObjectKind for Subdevice {
    const NAME: &'static str = "subdevice";
}
impl ObjectKind for AnyObject {
    const NAME: &'static str = "object";
}

/// A handle to an RM object of kind `K`.
pub struct Handle<K> {
    raw: u32,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Handle<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Handle<K> {}
impl<K> PartialEq for Handle<K> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}
impl<K> Eq for Handle<K> {}
impl<K: ObjectKind> fmt::Debug for Handle<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:#010x}", K::NAME, self.raw)
    }
}

impl<K> Handle<K> {
    const fn new(raw: u32) -> Self {
        Handle { raw, _kind: PhantomData }
    }

    /// The raw handle.
    pub const fn raw(self) -> u32 {
        self.raw
    }

    /// The same handle without its kind.
    pub const fn erase(self) -> Handle<AnyObject> {
        Handle::new(self.raw)
    }
}

/// An object the client allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RmObject {
    /// Its handle.
    pub handle: u32,
    /// Its parent's handle (the client for a device).
    pub parent: u32,
    /// Its class.
    pub class: u32,
}

/// NVIDIA's name of the classes this module allocates, for messages.
pub fn class_name(class: u32) -> Option<&'static str> {
    match class {
        NV01_ROOT => Some("NV01_ROOT"),
        NV01_DEVICE_0 => Some("NV01_DEVICE_0"),
        NV20_SUBDEVICE_0 => Some("NV20_SUBDEVICE_0"),
        _ => None,
    }
}

struct ClassName(u32);

impl fmt::Display for ClassName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match class_name(self.0) {
            Some(name) => write!(f, "class {:#x} ({name})", self.0),
            None => write!(f, "class {:#x}", self.0),
        }
    }
}

/// Why an RM object operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RmError {
    /// The RPC itself failed (transport, timeout, or GSP-RM answered with a failing
    /// `rpc_result` that names no object).
    Rpc(RpcError),
    /// GSP-RM refused an allocation.
    Alloc { class: u32, handle: u32, parent: u32, status: NvStatus },
    /// GSP-RM refused a control call.
    Control { cmd: u32, object: u32, status: NvStatus },
    /// GSP-RM refused to free an object.
    Free { handle: u32, status: NvStatus },
    /// The object still has children; free them first ([`RmClient::free_tree`] does).
    HasChildren { handle: u32, children: usize, first_child: u32 },
    /// The handle is not an object of this client.
    UnknownObject { handle: u32 },
    /// The client has used all its object handles.
    HandlesExhausted,
    /// A client index beyond `RS_CLIENT_HANDLE_MAX`.
    BadClientIndex { index: u32 },
    /// A control returned a different number of parameter bytes than were sent.
    ParamsSize { cmd: u32, sent: usize, returned: usize },
    /// The client was already freed.
    ClientFreed,
}

impl From<RpcError> for RmError {
    fn from(e: RpcError) -> Self {
        RmError::Rpc(e)
    }
}

impl fmt::Display for RmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RmError::Rpc(e) => e.fmt(f),
            RmError::Alloc { class, handle, parent, status } => write!(
                f,
                "GSP-RM refused to allocate {} as {handle:#010x} under {parent:#010x}: {status}",
                ClassName(*class)
            ),
            RmError::Control { cmd, object, status } => {
                write!(f, "GSP-RM control {cmd:#010x} on {object:#010x} failed: {status}")
            }
            RmError::Free { handle, status } => {
                write!(f, "GSP-RM refused to free {handle:#010x}: {status}")
            }
            RmError::HasChildren { handle, children, first_child } => write!(
                f,
                "RM object {handle:#010x} still has {children} child object(s) (first {first_child:#010x}); free them first"
            ),
            RmError::UnknownObject { handle } => {
                write!(f, "{handle:#010x} is not an RM object of this client")
            }
            RmError::HandlesExhausted => f.write_str("RM client has used all its object handles"),
            RmError::BadClientIndex { index } => {
                write!(f, "RM client index {index} is beyond RS_CLIENT_HANDLE_MAX")
            }
            RmError::ParamsSize { cmd, sent, returned } => write!(
                f,
                "GSP-RM control {cmd:#010x} returned {returned} parameter bytes for {sent} sent"
            ),
            RmError::ClientFreed => f.write_str("RM client already freed"),
        }
    }
}

/// A client in GSP-RM and the objects it allocated.
#[derive(Debug)]
pub struct RmClient {
    handle: Handle<Client>,
    objects: Vec<RmObject>,
    /// Objects allocated so far (the next handle is `RS_UNIQUE_HANDLE_BASE + next + 1`).
    allocated: u32,
    freed: bool,
}

impl RmClient {
    /// Allocates client number `index` (`NV01_ROOT` with `NV0000_ALLOC_PARAMETERS`, the client
    /// its own parent) in GSP-RM.
    pub fn new<T: RpcChannel>(rpc: &mut T, index: u32) -> Result<Self, RmError> {
        if index >= RS_CLIENT_HANDLE_MAX {
            return Err(RmError::BadClientIndex { index });
        }
        let handle = RS_CLIENT_HANDLE_BASE + index;
        let params = Nv0000AllocParameters::new(handle, 0, "nvgpu");
        alloc_rpc(rpc, handle, handle, handle, NV01_ROOT, params.as_bytes())?;
        Ok(RmClient { handle: Handle::new(handle), objects: Vec::new(), allocated: 0, freed: false })
    }

    /// The client's handle.
    pub const fn handle(&self) -> Handle<Client> {
        self.handle
    }

    /// The objects allocated and not freed, in allocation order.
    pub fn objects(&self) -> &[RmObject] {
        &self.objects
    }

    /// The object with handle `raw`.
    pub fn object(&self, raw: u32) -> Option<&RmObject> {
        self.objects.iter().find(|o| o.handle == raw)
    }

    /// The children of `parent`, in allocation order.
    pub fn children(&self, parent: u32) -> impl Iterator<Item = &RmObject> {
        self.objects.iter().filter(move |o| o.parent == parent)
    }

    fn next_handle(&self) -> Result<u32, RmError> {
        if self.allocated + 1 >= OBJECT_HANDLES_PER_CLIENT {
            return Err(RmError::HandlesExhausted);
        }
        Ok(RS_UNIQUE_HANDLE_BASE + self.allocated + 1)
    }

    fn check_parent(&self, parent: u32) -> Result<(), RmError> {
        if self.freed {
            return Err(RmError::ClientFreed);
        }
        if parent == self.handle.raw || self.object(parent).is_some() {
            Ok(())
        } else {
            Err(RmError::UnknownObject { handle: parent })
        }
    }

    /// Allocates an object of `class` under `parent` with `params` (the class's allocation
    /// parameters, possibly empty); returns its handle and the parameters as GSP-RM left them.
    pub fn alloc_raw<T: RpcChannel, P>(
        &mut self,
        rpc: &mut T,
        parent: Handle<P>,
        class: u32,
        params: &[u8],
    ) -> Result<(Handle<AnyObject>, Vec<u8>), RmError> {
        self.check_parent(parent.raw)?;
        let handle = self.next_handle()?;
        let reply = alloc_rpc(rpc, self.handle.raw, parent.raw, handle, class, params)?;
        self.allocated += 1;
        self.objects.push(RmObject { handle, parent: parent.raw, class });
        Ok((Handle::new(handle), reply.params))
    }

    /// Allocates an object of `class` under `parent` with typed parameters, as kind `K`.
    pub fn alloc<K, T, P, A>(
        &mut self,
        rpc: &mut T,
        parent: Handle<P>,
        class: u32,
        params: &A,
    ) -> Result<Handle<K>, RmError>
    where
        K: ObjectKind,
        T: RpcChannel,
        A: IntoBytes + Immutable,
    {
        let (handle, _) = self.alloc_raw(rpc, parent, class, params.as_bytes())?;
        Ok(Handle::new(handle.raw))
    }

    /// Allocates the device (`NV01_DEVICE_0`) under the client. RM fills `hClientShare` with the
    /// client itself; so does this when it is 0.
    pub fn alloc_device<T: RpcChannel>(
        &mut self,
        rpc: &mut T,
        params: &Nv0080AllocParameters,
    ) -> Result<Handle<Device>, RmError> {
        let mut params = *params;
        if params.h_client_share == 0 {
            params.h_client_share = self.handle.raw;
        }
        self.alloc(rpc, self.handle, NV01_DEVICE_0, &params)
    }

    /// Allocates the subdevice (`NV20_SUBDEVICE_0`) under `device`.
    pub fn alloc_subdevice<T: RpcChannel>(
        &mut self,
        rpc: &mut T,
        device: Handle<Device>,
        params: &Nv2080AllocParameters,
    ) -> Result<Handle<Subdevice>, RmError> {
        self.alloc(rpc, device, NV20_SUBDEVICE_0, params)
    }

    /// Runs control `cmd` on `object` (or the client) with `params`, which GSP-RM updates in
    /// place.
    pub fn control<T: RpcChannel, K>(
        &mut self,
        rpc: &mut T,
        object: Handle<K>,
        cmd: u32,
        params: &mut [u8],
    ) -> Result<(), RmError> {
        self.check_parent(object.raw)?;
        control_rpc(rpc, self.handle.raw, object.raw, cmd, params)
    }

    /// Runs control `cmd` with typed parameters.
    pub fn control_typed<T, K, P>(
        &mut self,
        rpc: &mut T,
        object: Handle<K>,
        cmd: u32,
        params: &mut P,
    ) -> Result<(), RmError>
    where
        T: RpcChannel,
        P: IntoBytes + FromBytes,
    {
        self.control(rpc, object, cmd, params.as_mut_bytes())
    }

    /// Frees `object`, which must have no children left.
    pub fn free<T: RpcChannel, K>(&mut self, rpc: &mut T, object: Handle<K>) -> Result<(), RmError> {
        if self.freed {
            return Err(RmError::ClientFreed);
        }
        let Some(at) = self.objects.iter().position(|o| o.handle == object.raw) else {
            return Err(RmError::UnknownObject { handle: object.raw });
        };
        let children = self.children(object.raw).count();
        if let Some(first) = self.children(object.raw).next() {
            return Err(RmError::HasChildren { handle: object.raw, children, first_child: first.handle });
        }
        free_rpc(rpc, self.handle.raw, object.raw)?;
        self.objects.remove(at);
        Ok(())
    }

    /// Frees `object`'s descendants, deepest and newest first, then `object`.
    pub fn free_tree<T: RpcChannel, K>(&mut self, rpc: &mut T, object: Handle<K>) -> Result<(), RmError> {
        if self.object(object.raw).is_none() {
            return Err(RmError::UnknownObject { handle: object.raw });
        }
        // Newest first: a child is always newer than its parent, so this is children first.
        while let Some(child) = self.children(object.raw).last().map(|o| o.handle) {
            self.free_tree(rpc, Handle::<AnyObject>::new(child))?;
        }
        self.free(rpc, object)
    }

    /// Frees every object, children first, then the client itself. On failure the client
    /// keeps what could not be freed, and can be asked again.
    pub fn free_all<T: RpcChannel>(&mut self, rpc: &mut T) -> Result<(), RmError> {
        if self.freed {
            return Ok(());
        }
        while let Some(top) = self.children(self.handle.raw).last().map(|o| o.handle) {
            self.free_tree(rpc, Handle::<AnyObject>::new(top))?;
        }
        free_rpc(rpc, self.handle.raw, self.handle.raw)?;
        self.freed = true;
        Ok(())
    }
}

/// One `GSP_RM_CONTROL` on `(h_client, h_object)`; `params` gets GSP-RM's answer.
fn control_rpc<T: RpcChannel>(
    rpc: &mut T,
    h_client: u32,
    h_object: u32,
    cmd: u32,
    params: &mut [u8],
) -> Result<(), RmError> {
    let call = GspRmControl { h_client, h_object, cmd, flags: RMAPI_RPC_FLAGS_NONE, params };
    let reply = match rpc.call(&call) {
        Ok(reply) => reply,
        Err(e) => match e.status() {
            Some(status) => return Err(RmError::Control { cmd, object: h_object, status }),
            None => return Err(e.into()),
        },
    };
    if !reply.status.is_ok() {
        return Err(RmError::Control { cmd, object: h_object, status: reply.status });
    }
    if reply.params.len() != params.len() {
        return Err(RmError::ParamsSize { cmd, sent: params.len(), returned: reply.params.len() });
    }
    params.copy_from_slice(&reply.params);
    Ok(())
}

/// GSP-RM's own client and subdevice, which exist from boot and whose handles GSP-RM reports
/// in `GspStaticConfigInfo.hInternalClient` / `hInternalSubdevice`.
///
/// RM's CPU side sends the `NV2080_CTRL_CMD_INTERNAL_*` controls there, never on a client of
/// its own (`intrInitInterruptTable_KERNEL` in `src/nvidia/src/kernel/gpu/intr/intr.c` calls
/// `Control(pGpu->hInternalClient, pGpu->hInternalSubdevice, ...)`): those controls carry
/// `RMCTRL_FLAGS_INTERNAL` (`src/nvidia/inc/kernel/rmapi/control.h`, flags `0x600` in
/// `g_subdevice_nvoc.c`), which RM refuses with `NV_ERR_NOT_SUPPORTED` unless RM itself is the
/// caller (`rmControlCmdExecute` checks `bInternal`, `src/nvidia/src/kernel/rmapi/control.c`).
/// This driver stands where RM's CPU side stands, so it uses the same handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InternalSubdevice {
    /// `hInternalClient`.
    pub client: u32,
    /// `hInternalSubdevice`.
    pub subdevice: u32,
}

impl InternalSubdevice {
    /// The handles from GSP-RM's static information.
    pub fn from_static_info(info: &crate::gsp::commands::GspStaticConfigInfo) -> Self {
        InternalSubdevice { client: info.h_internal_client, subdevice: info.h_internal_subdevice }
    }

    /// Runs control `cmd` on the internal subdevice with typed parameters, which GSP-RM updates
    /// in place.
    pub fn control_typed<T, P>(&self, rpc: &mut T, cmd: u32, params: &mut P) -> Result<(), RmError>
    where
        T: RpcChannel,
        P: IntoBytes + FromBytes,
    {
        control_rpc(rpc, self.client, self.subdevice, cmd, params.as_mut_bytes())
    }
}

fn alloc_rpc<T: RpcChannel>(
    rpc: &mut T,
    client: u32,
    parent: u32,
    handle: u32,
    class: u32,
    params: &[u8],
) -> Result<RmCallReply, RmError> {
    let call = GspRmAlloc { h_client: client, h_parent: parent, h_object: handle, h_class: class, params };
    let refused = |status| RmError::Alloc { class, handle, parent, status };
    let reply = match rpc.call(&call) {
        Ok(reply) => reply,
        Err(e) => return Err(e.status().map_or_else(|| RmError::Rpc(e), refused)),
    };
    if !reply.status.is_ok() {
        return Err(refused(reply.status));
    }
    Ok(reply)
}

fn free_rpc<T: RpcChannel>(rpc: &mut T, client: u32, handle: u32) -> Result<(), RmError> {
    let status = match rpc.call(&Free { h_client: client, h_object: handle }) {
        Ok(status) => status,
        Err(e) => e.status().ok_or(RmError::Rpc(e))?,
    };
    if !status.is_ok() {
        return Err(RmError::Free { handle, status });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Layout tables for tests/tests/gsp_rpc_layout.rs.

macro_rules! field {
    ($ty:ty, $c:literal => $f:ident) => {
        FieldLayout {
            c_name: $c,
            offset: core::mem::offset_of!($ty, $f),
            size: {
                const fn size<T, F>(_: fn(&T) -> &F) -> usize {
                    core::mem::size_of::<F>()
                }
                size(|s: &$ty| &s.$f)
            },
        }
    };
}

/// The allocation parameter structures of this module.
pub const STRUCT_LAYOUTS: &[StructLayout] = &[
    StructLayout {
        c_name: "NV0000_ALLOC_PARAMETERS",
        rust_name: "Nv0000AllocParameters",
        header: headers::CL0000,
        size: core::mem::size_of::<Nv0000AllocParameters>(),
        align: core::mem::align_of::<Nv0000AllocParameters>(),
        fields: &[
            field!(Nv0000AllocParameters, "hClient" => h_client),
            field!(Nv0000AllocParameters, "processID" => process_id),
            field!(Nv0000AllocParameters, "processName" => process_name),
        ],
    },
    StructLayout {
        c_name: "NV0080_ALLOC_PARAMETERS",
        rust_name: "Nv0080AllocParameters",
        header: headers::CL0080,
        size: core::mem::size_of::<Nv0080AllocParameters>(),
        align: core::mem::align_of::<Nv0080AllocParameters>(),
        fields: &[
            field!(Nv0080AllocParameters, "deviceId" => device_id),
            field!(Nv0080AllocParameters, "hClientShare" => h_client_share),
            field!(Nv0080AllocParameters, "hTargetClient" => h_target_client),
            field!(Nv0080AllocParameters, "hTargetDevice" => h_target_device),
            field!(Nv0080AllocParameters, "flags" => flags),
            field!(Nv0080AllocParameters, "vaSpaceSize" => va_space_size),
            field!(Nv0080AllocParameters, "vaStartInternal" => va_start_internal),
            field!(Nv0080AllocParameters, "vaLimitInternal" => va_limit_internal),
            field!(Nv0080AllocParameters, "vaMode" => va_mode),
        ],
    },
    StructLayout {
        c_name: "NV2080_ALLOC_PARAMETERS",
        rust_name: "Nv2080AllocParameters",
        header: headers::CL2080,
        size: core::mem::size_of::<Nv2080AllocParameters>(),
        align: core::mem::align_of::<Nv2080AllocParameters>(),
        fields: &[field!(Nv2080AllocParameters, "subDeviceId" => sub_device_id)],
    },
];

/// The constants of this module, under NVIDIA's names.
pub const CONSTANTS: &[ConstantFact] = &[
    ConstantFact { c_name: "NV01_NULL_OBJECT", header: headers::CL0000, value: NV01_NULL_OBJECT as u64 },
    ConstantFact { c_name: "NV01_ROOT", header: headers::CL0000, value: NV01_ROOT as u64 },
    ConstantFact { c_name: "NV01_DEVICE_0", header: headers::CL0080, value: NV01_DEVICE_0 as u64 },
    ConstantFact { c_name: "NV20_SUBDEVICE_0", header: headers::CL2080, value: NV20_SUBDEVICE_0 as u64 },
    ConstantFact {
        c_name: "NV_PROC_NAME_MAX_LENGTH",
        header: headers::NVLIMITS,
        value: NV_PROC_NAME_MAX_LENGTH as u64,
    },
    ConstantFact { c_name: "RS_CLIENT_HANDLE_BASE", header: headers::RESSERV, value: RS_CLIENT_HANDLE_BASE as u64 },
    ConstantFact { c_name: "RS_CLIENT_HANDLE_MAX", header: headers::RESSERV, value: RS_CLIENT_HANDLE_MAX as u64 },
    ConstantFact { c_name: "RS_UNIQUE_HANDLE_BASE", header: headers::RS_CLIENT_H, value: RS_UNIQUE_HANDLE_BASE as u64 },
    ConstantFact {
        c_name: "RS_UNIQUE_HANDLE_RANGE",
        header: headers::RS_CLIENT_H,
        value: RS_UNIQUE_HANDLE_RANGE as u64,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gsp::cmdq::fake::{setup, FakeMessage, Outgoing};
    use crate::gsp::commands::{GspRpc, Rpc, RpcErrorKind, RpcFreeV03_00, RpcGspRmAllocV03_00, RpcGspRmControlV03_00};
    use crate::gsp::fw::rpc::RpcFunction;
    use alloc::boxed::Box;
    use alloc::rc::Rc;
    use alloc::string::ToString;
    use alloc::vec;
    use core::cell::RefCell;

    /// A stand-in for GSP-RM's resource server: objects by (client, handle), the checks RM
    /// makes (parent exists, handle unused, no children when freeing), and a log of calls.
    #[derive(Default)]
    struct FakeRm {
        objects: Vec<(u32, u32, u32, u32)>,
        log: Vec<String>,
        refuse_class: Option<u32>,
        fail_rpc_result: Option<u32>,
    }

    use alloc::string::String;

    impl FakeRm {
        fn exists(&self, client: u32, handle: u32) -> bool {
            self.objects.iter().any(|o| o.0 == client && o.1 == handle)
        }

        /// One RPC: returns (rpc_result, reply parameters).
        fn handle(&mut self, function: u32, payload: &[u8]) -> (u32, Vec<u8>) {
            let mut reply = payload.to_vec();
            if let Some(result) = self.fail_rpc_result {
                return (result, reply);
            }
            let status = if function == RpcFunction::GspRmAlloc.raw() {
                let a = RpcGspRmAllocV03_00::read_from_prefix(payload).unwrap().0;
                self.log.push(alloc::format!("alloc {:#x} {:#x} {:#x}", a.h_class, a.h_object, a.h_parent));
                let params = &payload[32..32 + a.params_size as usize];
                let status = if Some(a.h_class) == self.refuse_class {
                    NvStatus::NV_ERR_INVALID_CLASS
                } else if a.h_class == NV01_ROOT {
                    let p = Nv0000AllocParameters::read_from_bytes(params).unwrap();
                    assert_eq!(
                        (a.h_client, a.h_parent, a.h_object, p.h_client),
                        (a.h_client, a.h_client, a.h_client, a.h_client)
                    );
                    self.objects.push((a.h_client, a.h_client, 0, NV01_ROOT));
                    NvStatus::NV_OK
                } else if !self.exists(a.h_client, a.h_parent) {
                    NvStatus::NV_ERR_INVALID_OBJECT_PARENT
                } else if self.exists(a.h_client, a.h_object) {
                    NvStatus::NV_ERR_INSERT_DUPLICATE_NAME
                } else {
                    if a.h_class == NV01_DEVICE_0 {
                        let p = Nv0080AllocParameters::read_from_bytes(params).unwrap();
                        assert_eq!(p.h_client_share, a.h_client);
                    }
                    self.objects.push((a.h_client, a.h_object, a.h_parent, a.h_class));
                    NvStatus::NV_OK
                };
                reply[16..20].copy_from_slice(&status.raw().to_le_bytes());
                status
            } else if function == RpcFunction::GspRmControl.raw() {
                let c = RpcGspRmControlV03_00::read_from_prefix(payload).unwrap().0;
                self.log.push(alloc::format!("control {:#x} on {:#x}", c.cmd, c.h_object));
                let status = if self.exists(c.h_client, c.h_object) {
                    NvStatus::NV_OK
                } else {
                    NvStatus::NV_ERR_INVALID_OBJECT_HANDLE
                };
                for b in &mut reply[24..] {
                    *b = !*b;
                }
                reply[12..16].copy_from_slice(&status.raw().to_le_bytes());
                status
            } else if function == RpcFunction::Free.raw() {
                let f = RpcFreeV03_00::read_from_bytes(payload).unwrap().params;
                self.log.push(alloc::format!("free {:#x}", f.h_object_old));
                let (client, handle) = (f.h_root, f.h_object_old);
                let has_children = self.objects.iter().any(|o| o.0 == client && o.2 == handle && o.1 != handle);
                let status = if !self.exists(client, handle) {
                    NvStatus::NV_ERR_OBJECT_NOT_FOUND
                } else if has_children && handle != client {
                    // RM would free them with it; this stand-in insists on children first.
                    NvStatus::NV_ERR_STATE_IN_USE
                } else {
                    self.objects.retain(|o| !(o.0 == client && (o.1 == handle || handle == client)));
                    NvStatus::NV_OK
                };
                reply[12..16].copy_from_slice(&status.raw().to_le_bytes());
                status
            } else {
                panic!("unexpected function {function}");
            };
            let _ = status;
            (0, reply)
        }
    }

    /// An `RpcChannel` straight into `FakeRm`, without queues.
    struct Direct(FakeRm);

    impl RpcChannel for Direct {
        fn call<R: Rpc>(&mut self, rpc: &R) -> Result<R::Reply, RpcError> {
            let mut payload = Vec::new();
            rpc.encode(&mut payload);
            let (result, reply) = self.0.handle(R::FUNCTION.raw(), &payload);
            if result != 0 {
                return Err(RpcError::new(RpcErrorKind::Failed {
                    function: R::FUNCTION.into(),
                    status: NvStatus::from_raw(result),
                }));
            }
            R::decode_reply(&reply)
        }
    }

    #[test]
    fn client_device_subdevice_follow_rm_conventions() {
        let mut rm = Direct(FakeRm::default());
        let mut client = RmClient::new(&mut rm, 3).unwrap();
        assert_eq!(client.handle().raw(), 0xc1d0_0003);
        let device = client.alloc_device(&mut rm, &Nv0080AllocParameters::default()).unwrap();
        let subdevice = client.alloc_subdevice(&mut rm, device, &Nv2080AllocParameters::default()).unwrap();
        assert_eq!(device.raw(), 0xcaf0_0001);
        assert_eq!(subdevice.raw(), 0xcaf0_0002);
        assert_eq!(
            client.objects(),
            &[
                RmObject { handle: 0xcaf0_0001, parent: 0xc1d0_0003, class: NV01_DEVICE_0 },
                RmObject { handle: 0xcaf0_0002, parent: 0xcaf0_0001, class: NV20_SUBDEVICE_0 },
            ]
        );
        let mut params = [0x0fu8; 8];
        client.control(&mut rm, subdevice, 0x2080_0101, &mut params).unwrap();
        assert_eq!(params, [0xf0; 8]);
        assert_eq!(format!("{subdevice:?}"), "subdevice 0xcaf00002");
        assert_eq!(
            rm.0.log,
            vec![
                "alloc 0x0 0xc1d00003 0xc1d00003",
                "alloc 0x80 0xcaf00001 0xc1d00003",
                "alloc 0x2080 0xcaf00002 0xcaf00001",
                "control 0x20800101 on 0xcaf00002"
            ]
        );
        assert!(matches!(RmClient::new(&mut rm, RS_CLIENT_HANDLE_MAX), Err(RmError::BadClientIndex { .. })));
    }

    #[test]
    fn parents_are_not_freed_before_their_children() {
        let mut rm = Direct(FakeRm::default());
        let mut client = RmClient::new(&mut rm, 0).unwrap();
        let device = client.alloc_device(&mut rm, &Nv0080AllocParameters::default()).unwrap();
        let subdevice = client.alloc_subdevice(&mut rm, device, &Nv2080AllocParameters::default()).unwrap();
        let other: Handle<AnyObject> = client.alloc(&mut rm, subdevice, 0x90f1, &[0u8; 8]).unwrap();
        let err = client.free(&mut rm, device).unwrap_err();
        assert_eq!(err, RmError::HasChildren { handle: 0xcaf0_0001, children: 1, first_child: 0xcaf0_0002 });
        assert!(err.to_string().contains("free them first"), "{err}");
        assert!(!rm.0.log.iter().any(|l| l.starts_with("free")), "nothing sent");
        client.free_tree(&mut rm, device).unwrap();
        assert_eq!(&rm.0.log[4..], &["free 0xcaf00003", "free 0xcaf00002", "free 0xcaf00001"]);
        assert!(client.objects().is_empty());
        assert_eq!(client.free(&mut rm, other), Err(RmError::UnknownObject { handle: 0xcaf0_0003 }));
        client.free_all(&mut rm).unwrap();
        assert_eq!(rm.0.log.last().unwrap(), "free 0xc1d00000");
        assert!(rm.0.objects.is_empty());
        assert_eq!(client.alloc_device(&mut rm, &Nv0080AllocParameters::default()), Err(RmError::ClientFreed));
    }

    #[test]
    fn free_all_frees_children_first_then_the_client() {
        let mut rm = Direct(FakeRm::default());
        let mut client = RmClient::new(&mut rm, 1).unwrap();
        let d0 = client.alloc_device(&mut rm, &Nv0080AllocParameters::default()).unwrap();
        let s0 = client.alloc_subdevice(&mut rm, d0, &Nv2080AllocParameters::default()).unwrap();
        let _x: Handle<AnyObject> = client.alloc(&mut rm, s0, 0x90f1, &[0u8; 4]).unwrap();
        let _y: Handle<AnyObject> = client.alloc(&mut rm, d0, 0xc56f, &[0u8; 4]).unwrap();
        client.free_all(&mut rm).unwrap();
        let frees: Vec<_> = rm.0.log.iter().filter(|l| l.starts_with("free")).cloned().collect();
        assert_eq!(
            frees,
            vec!["free 0xcaf00004", "free 0xcaf00003", "free 0xcaf00002", "free 0xcaf00001", "free 0xc1d00001"]
        );
        assert!(rm.0.objects.is_empty());
    }

    #[test]
    fn rm_statuses_become_named_errors() {
        let mut rm = Direct(FakeRm { refuse_class: Some(NV01_DEVICE_0), ..Default::default() });
        let mut client = RmClient::new(&mut rm, 0).unwrap();
        let err = client.alloc_device(&mut rm, &Nv0080AllocParameters::default()).unwrap_err();
        assert_eq!(
            err,
            RmError::Alloc {
                class: NV01_DEVICE_0,
                handle: 0xcaf0_0001,
                parent: 0xc1d0_0000,
                status: NvStatus::NV_ERR_INVALID_CLASS
            }
        );
        assert_eq!(
            err.to_string(),
            "GSP-RM refused to allocate class 0x80 (NV01_DEVICE_0) as 0xcaf00001 under 0xc1d00000: NV_ERR_INVALID_CLASS (0x00000022: Given class-id not valid)"
        );
        assert!(client.objects().is_empty(), "a refused object is not recorded");
        // The handle was not consumed: the next allocation gets it.
        rm.0.refuse_class = None;
        assert_eq!(client.alloc_device(&mut rm, &Nv0080AllocParameters::default()).unwrap().raw(), 0xcaf0_0001);

        // A control on an object GSP-RM does not know.
        rm.0.objects.retain(|o| o.1 != 0xcaf0_0001);
        let device = Handle::<Device>::new(0xcaf0_0001);
        let err = client.control(&mut rm, device, 0x801, &mut [0; 4]).unwrap_err();
        assert_eq!(
            err,
            RmError::Control { cmd: 0x801, object: 0xcaf0_0001, status: NvStatus::NV_ERR_INVALID_OBJECT_HANDLE }
        );
        // A control on a handle this client never made is refused before any RPC.
        let stranger = Handle::<AnyObject>::new(0x1234);
        assert_eq!(client.control(&mut rm, stranger, 1, &mut []), Err(RmError::UnknownObject { handle: 0x1234 }));

        // A failing rpc_result is attributed to the object too.
        rm.0.fail_rpc_result = Some(NvStatus::NV_ERR_NO_MEMORY.raw());
        let err =
            client.alloc_subdevice(&mut rm, Handle::new(0xcaf0_0001), &Nv2080AllocParameters::default()).unwrap_err();
        assert!(matches!(err, RmError::Alloc { status: NvStatus::NV_ERR_NO_MEMORY, class: NV20_SUBDEVICE_0, .. }));
    }

    #[test]
    fn objects_through_the_queues() {
        let rm = Rc::new(RefCell::new(FakeRm::default()));
        let server = rm.clone();
        let s = setup(
            Box::new(move |m: &FakeMessage| {
                let (result, reply) = server.borrow_mut().handle(m.function, &m.payload);
                vec![Outgoing { function: m.function, rpc_result: result, payload: reply }]
            }),
            true,
        );
        let _mem = s.mem;
        let mut rpc = GspRpc::new(s.queues, s.clock);
        let mut client = RmClient::new(&mut rpc, 0).unwrap();
        let device = client.alloc_device(&mut rpc, &Nv0080AllocParameters::default()).unwrap();
        let subdevice = client.alloc_subdevice(&mut rpc, device, &Nv2080AllocParameters { sub_device_id: 0 }).unwrap();
        let mut params = [1u8, 2, 3, 4];
        client.control(&mut rpc, subdevice, 0x2080_0110, &mut params).unwrap();
        assert_eq!(params, [!1, !2, !3, !4]);
        client.free_all(&mut rpc).unwrap();
        assert!(rm.borrow().objects.is_empty());
        let functions: Vec<_> = rpc.history().entries().map(|e| e.function.to_string()).collect();
        assert_eq!(
            functions,
            vec![
                "NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC",
                "NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC",
                "NV_VGPU_MSG_FUNCTION_GSP_RM_ALLOC",
                "NV_VGPU_MSG_FUNCTION_GSP_RM_CONTROL",
                "NV_VGPU_MSG_FUNCTION_FREE",
                "NV_VGPU_MSG_FUNCTION_FREE",
                "NV_VGPU_MSG_FUNCTION_FREE",
            ]
        );
    }

    #[test]
    fn handles_run_out_cleanly() {
        let mut rm = Direct(FakeRm::default());
        let mut client = RmClient::new(&mut rm, 0).unwrap();
        client.allocated = OBJECT_HANDLES_PER_CLIENT - 1;
        assert_eq!(client.alloc_device(&mut rm, &Nv0080AllocParameters::default()), Err(RmError::HandlesExhausted));
    }

    #[test]
    fn allocation_parameters_are_byte_exact() {
        let p = Nv0000AllocParameters::new(0xc1d0_0000, 7, "a-very-long-name".repeat(10).as_str());
        let bytes = p.as_bytes();
        assert_eq!(bytes.len(), 108);
        assert_eq!(&bytes[0..8], &[0, 0, 0xd0, 0xc1, 7, 0, 0, 0]);
        assert_eq!(bytes[107], 0, "NUL-terminated even when truncated");
        assert_eq!(core::mem::size_of::<Nv0080AllocParameters>(), 56);
        assert_eq!(core::mem::offset_of!(Nv0080AllocParameters, va_space_size), 24);
    }
}
