//! The KGSL user ABI (msm_kgsl.h) that compute clients use: request numbers and
//! struct layouts (LP64; aarch64 and x86-64 agree).

/// `dir<<30 | size<<16 | 0x09<<8 | nr`
pub const fn request(dir: u64, size: u64, nr: u64) -> u64 {
    (dir << 30) | (size << 16) | (0x09 << 8) | nr
}

const W: u64 = 1;
const RW: u64 = 3;

pub const IOCTL_DEVICE_GETPROPERTY: u64 = request(RW, 24, 0x02);
pub const IOCTL_DEVICE_WAITTIMESTAMP_CTXTID: u64 = request(W, 12, 0x07);
pub const IOCTL_DRAWCTXT_CREATE: u64 = request(RW, 8, 0x13);
pub const IOCTL_DRAWCTXT_DESTROY: u64 = request(W, 4, 0x14);
pub const IOCTL_MAP_USER_MEM: u64 = request(RW, 48, 0x15);
pub const IOCTL_CMDSTREAM_READTIMESTAMP_CTXTID: u64 = request(RW, 12, 0x16);
pub const IOCTL_SHAREDMEM_FREE: u64 = request(W, 8, 0x21);
pub const IOCTL_SETPROPERTY: u64 = request(W, 24, 0x32);
pub const IOCTL_TIMESTAMP_EVENT: u64 = request(RW, 32, 0x33);
pub const IOCTL_GPUMEM_ALLOC_ID: u64 = request(RW, 48, 0x34);
pub const IOCTL_GPUMEM_FREE_ID: u64 = request(RW, 8, 0x35);
pub const IOCTL_GPUOBJ_ALLOC: u64 = request(RW, 48, 0x45);
pub const IOCTL_GPUOBJ_FREE: u64 = request(W, 32, 0x46);
pub const IOCTL_GPUOBJ_INFO: u64 = request(RW, 48, 0x47);
pub const IOCTL_GPUOBJ_SYNC: u64 = request(W, 16, 0x49);
pub const IOCTL_GPU_COMMAND: u64 = request(RW, 64, 0x4a);

/// Property types of GETPROPERTY/SETPROPERTY.
pub const PROP_DEVICE_INFO: u32 = 0x1;
pub const PROP_VERSION: u32 = 0x8;
pub const PROP_PWR_CONSTRAINT: u32 = 0x12;

/// Adreno 630 v2: core 6, major 3, minor 0, patch 1.
pub const CHIP_ID_A630: u32 = 0x0603_0001;

pub const MEMFLAGS_USE_CPU_MAP: u64 = 0x1000_0000;
/// The GPU may only read the memory (GPUOBJ_ALLOC, MAP_USER_MEM).
pub const MEMFLAGS_GPUREADONLY: u64 = 0x0100_0000;
pub const CMDLIST_IB: u32 = 1;
pub const CMDSTREAM_TIMESTAMP_RETIRED: u32 = 2;

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct GpuobjAlloc {
    pub size: u64,
    pub flags: u64,
    pub va_len: u64,
    pub mmapsize: u64,
    pub id: u32,
    pub metadata_len: u32,
    pub metadata: u64,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct GpuobjFree {
    pub flags: u64,
    pub priv_: u64,
    pub id: u32,
    pub type_: u32,
    pub len: u32,
    pub _pad: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct GpuobjInfo {
    pub gpuaddr: u64,
    pub flags: u64,
    pub size: u64,
    pub va_len: u64,
    pub va_addr: u64,
    pub id: u32,
    pub _pad: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct GpuobjSync {
    pub objs: u64,
    pub obj_len: u32,
    pub count: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct GpumemAllocId {
    pub id: u32,
    pub flags: u32,
    pub size: u64,
    pub mmapsize: u64,
    pub gpuaddr: u64,
    pub _reserved: [u64; 2],
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct GpumemFreeId {
    pub id: u32,
    pub _pad: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct DrawctxtCreate {
    pub flags: u32,
    pub drawctxt_id: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct DrawctxtDestroy {
    pub drawctxt_id: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct DeviceGetProperty {
    pub type_: u32,
    pub _pad: u32,
    pub value: u64,
    pub sizebytes: u64,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct DevInfo {
    pub device_id: u32,
    pub chip_id: u32,
    pub mmu_enabled: u32,
    pub _pad: u32,
    pub gmem_gpubaseaddr: u64,
    pub gpu_id: u32,
    pub _pad2: u32,
    pub gmem_sizebytes: u64,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct DeviceConstraint {
    pub type_: u32,
    pub context_id: u32,
    pub data: u64,
    pub size: u64,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct GpuCommand {
    pub flags: u64,
    pub cmdlist: u64,
    pub cmdsize: u32,
    pub numcmds: u32,
    pub objlist: u64,
    pub objsize: u32,
    pub numobjs: u32,
    pub synclist: u64,
    pub syncsize: u32,
    pub numsyncs: u32,
    pub context_id: u32,
    pub timestamp: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct CommandObject {
    pub offset: u64,
    pub gpuaddr: u64,
    pub size: u64,
    pub flags: u32,
    pub id: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct WaitTimestamp {
    pub context_id: u32,
    pub timestamp: u32,
    pub timeout: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct ReadTimestamp {
    pub context_id: u32,
    pub type_: u32,
    pub timestamp: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct MapUserMem {
    pub fd: i32,
    pub _pad: u32,
    pub gpuaddr: u64,
    pub len: u64,
    pub offset: u64,
    pub hostptr: u64,
    pub memtype: u32,
    pub flags: u32,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct SharedmemFree {
    pub gpuaddr: u64,
}

#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub struct TimestampEvent {
    pub type_: i32,
    pub timestamp: u32,
    pub context_id: u32,
    pub _pad: u32,
    pub priv_: u64,
    pub len: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_match_the_reference() {
        assert_eq!(IOCTL_GPUOBJ_ALLOC, 0xc030_0945);
        assert_eq!(IOCTL_DRAWCTXT_CREATE, 0xc008_0913);
        assert_eq!(IOCTL_SETPROPERTY, 0x4018_0932);
        assert_eq!(IOCTL_DEVICE_GETPROPERTY, 0xc018_0902);
        assert_eq!(IOCTL_GPU_COMMAND, 0xc040_094a);
        assert_eq!(IOCTL_DEVICE_WAITTIMESTAMP_CTXTID, 0x400c_0907);
        assert_eq!(IOCTL_GPUOBJ_FREE, 0x4020_0946);
        assert_eq!(IOCTL_MAP_USER_MEM, 0xc030_0915);
        assert_eq!(IOCTL_SHAREDMEM_FREE, 0x4008_0921);
        assert_eq!(IOCTL_DRAWCTXT_DESTROY, 0x4004_0914);
        assert_eq!(IOCTL_CMDSTREAM_READTIMESTAMP_CTXTID, 0xc00c_0916);
        assert_eq!(IOCTL_GPUMEM_ALLOC_ID, 0xc030_0934);
        assert_eq!(IOCTL_GPUMEM_FREE_ID, 0xc008_0935);
        assert_eq!(IOCTL_GPUOBJ_INFO, 0xc030_0947);
        assert_eq!(IOCTL_GPUOBJ_SYNC, 0x4010_0949);
        assert_eq!(IOCTL_TIMESTAMP_EVENT, 0xc020_0933);
    }

    #[test]
    fn struct_sizes_match_the_request_numbers() {
        use std::mem::size_of;
        assert_eq!(size_of::<GpuobjAlloc>(), 48);
        assert_eq!(size_of::<GpuobjFree>(), 32);
        assert_eq!(size_of::<GpuobjInfo>(), 48);
        assert_eq!(size_of::<GpuobjSync>(), 16);
        assert_eq!(size_of::<GpumemAllocId>(), 48);
        assert_eq!(size_of::<DrawctxtCreate>(), 8);
        assert_eq!(size_of::<DeviceGetProperty>(), 24);
        assert_eq!(size_of::<DevInfo>(), 40);
        assert_eq!(size_of::<GpuCommand>(), 64);
        assert_eq!(size_of::<CommandObject>(), 32);
        assert_eq!(size_of::<WaitTimestamp>(), 12);
        assert_eq!(size_of::<MapUserMem>(), 48);
        assert_eq!(size_of::<TimestampEvent>(), 32);
    }
}

// SAFETY: every uapi struct above is repr(C) of integers with explicit padding.
mod pod {
    use super::*;
    use crate::kgsl::user_copy::Pod;
    unsafe impl Pod for GpuobjAlloc {}
    unsafe impl Pod for GpuobjFree {}
    unsafe impl Pod for GpuobjInfo {}
    unsafe impl Pod for GpuobjSync {}
    unsafe impl Pod for GpumemAllocId {}
    unsafe impl Pod for GpumemFreeId {}
    unsafe impl Pod for DrawctxtCreate {}
    unsafe impl Pod for DrawctxtDestroy {}
    unsafe impl Pod for DeviceGetProperty {}
    unsafe impl Pod for DevInfo {}
    unsafe impl Pod for DeviceConstraint {}
    unsafe impl Pod for GpuCommand {}
    unsafe impl Pod for CommandObject {}
    unsafe impl Pod for WaitTimestamp {}
    unsafe impl Pod for ReadTimestamp {}
    unsafe impl Pod for MapUserMem {}
    unsafe impl Pod for SharedmemFree {}
    unsafe impl Pod for TimestampEvent {}
    unsafe impl Pod for u32 {}
}
