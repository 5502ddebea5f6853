//! The RM objects GSP-RM keeps for the CPU's clients: clients (`NV01_ROOT`), devices
//! (`NV01_DEVICE_0`) and subdevices (`NV20_SUBDEVICE_0`), each under its parent, with RM's
//! resource-server rules (`src/nvidia/src/libraries/resserv/src/rs_server.c`,
//! `rs_client.c`, 535.261.03) as far as these classes need them:
//!
//! - a client is allocated with `hClient == hObject` and `hParent` 0 or itself; its handle must
//!   be new among clients (`NV_ERR_INSERT_DUPLICATE_NAME`);
//! - any other object names an existing client (`NV_ERR_INVALID_CLIENT`) and a parent in it
//!   (`NV_ERR_INVALID_OBJECT_PARENT`) of the class it must live under: a device under the client,
//!   a subdevice under a device (also `NV_ERR_INVALID_OBJECT_PARENT`); its handle must be new in
//!   the client (`NV_ERR_INSERT_DUPLICATE_NAME`);
//! - a device takes `NV0080_ALLOC_PARAMETERS` with `deviceId` 0 (the model is one GPU;
//!   otherwise `NV_ERR_INVALID_ARGUMENT`), one device per client and device id
//!   (`NV_ERR_STATE_IN_USE`); a subdevice `NV2080_ALLOC_PARAMETERS` with `subDeviceId` 0, one
//!   per device (`NV_ERR_STATE_IN_USE`); wrong parameter sizes are `NV_ERR_INVALID_PARAM_STRUCT`;
//!   other classes `NV_ERR_INVALID_CLASS`;
//! - freeing an object frees its descendants first (RM's `serverFreeResourceTree`), freeing a
//!   client (`hObjectOld == hRoot`) frees everything in it; an unknown client is
//!   `NV_ERR_INVALID_CLIENT`, an unknown object `NV_ERR_OBJECT_NOT_FOUND`.
//!
//! GSP-RM's own internal client, device and subdevice exist from boot; their handles go to the
//! CPU in `GspStaticConfigInfo.hInternalClient/Device/Subdevice`.

use alloc::vec::Vec;

use nvgpu::gsp::status::NvStatus;

use super::payloads::{
    Nv0000AllocParameters, Nv0080AllocParameters, Nv2080AllocParameters, NV01_DEVICE_0, NV01_ROOT, NV20_SUBDEVICE_0,
};

const NV0000_SIZE: usize = core::mem::size_of::<Nv0000AllocParameters>();
const NV0080_SIZE: usize = core::mem::size_of::<Nv0080AllocParameters>();
const NV2080_SIZE: usize = core::mem::size_of::<Nv2080AllocParameters>();

/// GSP-RM's internal client handle: the first of `RS_CLIENT_INTERNAL_HANDLE_BASE` (0xC1E00000,
/// `src/nvidia/inc/libraries/resserv/resserv.h`), the range RM keeps apart from the clients the
/// CPU side allocates from `RS_CLIENT_HANDLE_BASE` (0xC1D00000).
pub const INTERNAL_CLIENT: u32 = 0xC1E0_0000;
/// Its device.
pub const INTERNAL_DEVICE: u32 = 0x5C00_0001;
/// Its subdevice.
pub const INTERNAL_SUBDEVICE: u32 = 0x5C00_0002;

/// One RM object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RmObject {
    pub client: u32,
    pub handle: u32,
    /// 0 for a client.
    pub parent: u32,
    pub class: u32,
}

/// Every object, by client.
#[derive(Clone, Debug, Default)]
pub(crate) struct Objects {
    objects: Vec<RmObject>,
}

impl Objects {
    /// The table at boot: GSP-RM's internal client, device and subdevice.
    pub fn at_boot() -> Self {
        let mut table = Self::default();
        table.objects.push(RmObject { client: INTERNAL_CLIENT, handle: INTERNAL_CLIENT, parent: 0, class: NV01_ROOT });
        table.objects.push(RmObject {
            client: INTERNAL_CLIENT,
            handle: INTERNAL_DEVICE,
            parent: INTERNAL_CLIENT,
            class: NV01_DEVICE_0,
        });
        table.objects.push(RmObject {
            client: INTERNAL_CLIENT,
            handle: INTERNAL_SUBDEVICE,
            parent: INTERNAL_DEVICE,
            class: NV20_SUBDEVICE_0,
        });
        table
    }

    pub fn all(&self) -> &[RmObject] {
        &self.objects
    }

    /// Every live object.
    pub fn live(&self) -> impl Iterator<Item = &RmObject> {
        self.objects.iter()
    }

    pub fn find(&self, client: u32, handle: u32) -> Option<&RmObject> {
        self.objects.iter().find(|o| o.client == client && o.handle == handle)
    }

    fn client_exists(&self, client: u32) -> bool {
        self.find(client, client).is_some_and(|o| o.class == NV01_ROOT)
    }

    /// Allocates `class` as `handle` under `parent` in `client`, with the allocation parameters
    /// `params`.
    pub fn alloc(&mut self, client: u32, parent: u32, handle: u32, class: u32, params: &[u8]) -> NvStatus {
        let word = |at: usize| params.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        match class {
            NV01_ROOT => {
                if handle != client || (parent != 0 && parent != client) || handle == 0 {
                    return NvStatus::NV_ERR_INVALID_OBJECT_PARENT;
                }
                // The NV0000 parameters are optional; when present their hClient must agree.
                if !params.is_empty() && params.len() != NV0000_SIZE {
                    return NvStatus::NV_ERR_INVALID_PARAM_STRUCT;
                }
                if word(0).is_some_and(|h| h != 0 && h != client) {
                    return NvStatus::NV_ERR_INVALID_ARGUMENT;
                }
                if self.client_exists(client) {
                    return NvStatus::NV_ERR_INSERT_DUPLICATE_NAME;
                }
                self.objects.push(RmObject { client, handle, parent: 0, class });
                NvStatus::NV_OK
            }
            NV01_DEVICE_0 | NV20_SUBDEVICE_0 => {
                if !self.client_exists(client) {
                    return NvStatus::NV_ERR_INVALID_CLIENT;
                }
                let Some(parent_object) = self.find(client, parent).copied() else {
                    return NvStatus::NV_ERR_INVALID_OBJECT_PARENT;
                };
                let (wanted_parent, size) =
                    if class == NV01_DEVICE_0 { (NV01_ROOT, NV0080_SIZE) } else { (NV01_DEVICE_0, NV2080_SIZE) };
                if parent_object.class != wanted_parent {
                    return NvStatus::NV_ERR_INVALID_OBJECT_PARENT;
                }
                if handle == 0 || self.find(client, handle).is_some() {
                    return NvStatus::NV_ERR_INSERT_DUPLICATE_NAME;
                }
                if params.len() != size {
                    return NvStatus::NV_ERR_INVALID_PARAM_STRUCT;
                }
                if word(0) != Some(0) {
                    // deviceId / subDeviceId: the model is one GPU with one subdevice.
                    return NvStatus::NV_ERR_INVALID_ARGUMENT;
                }
                if self.objects.iter().any(|o| o.client == client && o.parent == parent && o.class == class) {
                    return NvStatus::NV_ERR_STATE_IN_USE;
                }
                self.objects.push(RmObject { client, handle, parent, class });
                NvStatus::NV_OK
            }
            nvgpu::hw::fault::MMU_FAULT_BUFFER => {
                // The replayable fault buffer object (UVM allocates it without parameters under
                // its subdevice). A GPU has one replayable buffer, so one object per GPU.
                let Some(parent_object) = self.find(client, parent).copied() else {
                    return NvStatus::NV_ERR_INVALID_OBJECT_PARENT;
                };
                if parent_object.class != NV20_SUBDEVICE_0 {
                    return NvStatus::NV_ERR_INVALID_OBJECT_PARENT;
                }
                if handle == 0 || self.find(client, handle).is_some() {
                    return NvStatus::NV_ERR_INSERT_DUPLICATE_NAME;
                }
                if !params.is_empty() {
                    return NvStatus::NV_ERR_INVALID_PARAM_STRUCT;
                }
                if self.objects.iter().any(|o| o.class == class) {
                    return NvStatus::NV_ERR_STATE_IN_USE;
                }
                self.objects.push(RmObject { client, handle, parent, class });
                NvStatus::NV_OK
            }
            _ => NvStatus::NV_ERR_INVALID_CLASS,
        }
    }

    /// Checks that `handle` may be allocated under `parent` in `client` (client exists, parent
    /// exists, handle new); returns the parent's class.
    pub fn check_new_child(&self, client: u32, parent: u32, handle: u32) -> Result<u32, NvStatus> {
        if !self.client_exists(client) {
            return Err(NvStatus::NV_ERR_INVALID_CLIENT);
        }
        let parent_object = self.find(client, parent).ok_or(NvStatus::NV_ERR_INVALID_OBJECT_PARENT)?;
        if handle == 0 || self.find(client, handle).is_some() {
            return Err(NvStatus::NV_ERR_INSERT_DUPLICATE_NAME);
        }
        Ok(parent_object.class)
    }

    /// Records an object another module validated with [`Self::check_new_child`].
    pub fn insert(&mut self, client: u32, parent: u32, handle: u32, class: u32) {
        self.objects.push(RmObject { client, handle, parent, class });
    }

    /// Frees `handle` of `client` and everything under it.
    pub fn free(&mut self, client: u32, handle: u32) -> NvStatus {
        if !self.client_exists(client) {
            return NvStatus::NV_ERR_INVALID_CLIENT;
        }
        if self.find(client, handle).is_none() {
            return NvStatus::NV_ERR_OBJECT_NOT_FOUND;
        }
        let mut doomed = alloc::vec![handle];
        let mut i = 0;
        while let Some(&h) = doomed.get(i) {
            doomed.extend(
                self.objects.iter().filter(|o| o.client == client && o.parent == h && o.handle != h).map(|o| o.handle),
            );
            i += 1;
        }
        self.objects.retain(|o| !(o.client == client && doomed.contains(&o.handle)));
        NvStatus::NV_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEV: [u8; 56] = [0; 56];
    const SUB: [u8; 4] = [0; 4];

    #[test]
    fn handles_and_parents_follow_rm() {
        let mut t = Objects::at_boot();
        assert_eq!(t.alloc(0xC100_0001, 0, 0xC100_0001, NV01_ROOT, &[]), NvStatus::NV_OK);
        assert_eq!(t.alloc(0xC100_0001, 0, 0xC100_0001, NV01_ROOT, &[]), NvStatus::NV_ERR_INSERT_DUPLICATE_NAME);
        assert_eq!(t.alloc(0xC100_0001, 0xC100_0001, 0xD, NV01_DEVICE_0, &DEV), NvStatus::NV_OK);
        assert_eq!(t.alloc(0xC100_0001, 0xC100_0001, 0xD, NV01_DEVICE_0, &DEV), NvStatus::NV_ERR_INSERT_DUPLICATE_NAME);
        assert_eq!(t.alloc(0xC100_0001, 0x1234, 0xE, NV20_SUBDEVICE_0, &SUB), NvStatus::NV_ERR_INVALID_OBJECT_PARENT);
        assert_eq!(
            t.alloc(0xC100_0001, 0xC100_0001, 0xE, NV20_SUBDEVICE_0, &SUB),
            NvStatus::NV_ERR_INVALID_OBJECT_PARENT
        );
        assert_eq!(t.alloc(0xC100_0001, 0xD, 0xE, NV20_SUBDEVICE_0, &[0; 8]), NvStatus::NV_ERR_INVALID_PARAM_STRUCT);
        assert_eq!(t.alloc(0xC100_0001, 0xD, 0xE, NV20_SUBDEVICE_0, &SUB), NvStatus::NV_OK);
        assert_eq!(t.alloc(0xC100_0001, 0xD, 0xF, NV20_SUBDEVICE_0, &SUB), NvStatus::NV_ERR_STATE_IN_USE);
        assert_eq!(t.alloc(0xBAD, 0xBAD, 0x1, NV01_DEVICE_0, &DEV), NvStatus::NV_ERR_INVALID_CLIENT);
        assert_eq!(t.alloc(0xC100_0001, 0xD, 0x99, 0xC56F, &[]), NvStatus::NV_ERR_INVALID_CLASS);
        // Freeing the device frees the subdevice under it.
        assert_eq!(t.free(0xC100_0001, 0xD), NvStatus::NV_OK);
        assert!(t.find(0xC100_0001, 0xE).is_none());
        assert_eq!(t.free(0xC100_0001, 0xD), NvStatus::NV_ERR_OBJECT_NOT_FOUND);
        assert_eq!(t.free(0xC100_0001, 0xC100_0001), NvStatus::NV_OK);
        assert_eq!(t.free(0xC100_0001, 0xC100_0001), NvStatus::NV_ERR_INVALID_CLIENT);
        assert_eq!(t.all().len(), 3, "the internal objects remain");
    }
}
