//! `runtime/include/wavejit_kgsl.h` against the driver: request numbers, flags
//! and struct layouts equal `kgsl::uapi` (so clients need no msm_kgsl.h), no
//! `WJ_KGSL_*` value is left unchecked, and the prototypes match `kgsl/capi.rs`.

mod c_header_support;

use std::mem::{offset_of, size_of};

use c_header_support::{cc_available, compile, defines, header, value_asserts};
use wavejit_runtime::kgsl::uapi::*;

fn constants() -> Vec<(&'static str, u64)> {
    vec![
        ("IOCTL_DEVICE_GETPROPERTY", IOCTL_DEVICE_GETPROPERTY),
        (
            "IOCTL_DEVICE_WAITTIMESTAMP_CTXTID",
            IOCTL_DEVICE_WAITTIMESTAMP_CTXTID,
        ),
        ("IOCTL_DRAWCTXT_CREATE", IOCTL_DRAWCTXT_CREATE),
        ("IOCTL_DRAWCTXT_DESTROY", IOCTL_DRAWCTXT_DESTROY),
        ("IOCTL_MAP_USER_MEM", IOCTL_MAP_USER_MEM),
        (
            "IOCTL_CMDSTREAM_READTIMESTAMP_CTXTID",
            IOCTL_CMDSTREAM_READTIMESTAMP_CTXTID,
        ),
        ("IOCTL_SHAREDMEM_FREE", IOCTL_SHAREDMEM_FREE),
        ("IOCTL_SETPROPERTY", IOCTL_SETPROPERTY),
        ("IOCTL_TIMESTAMP_EVENT", IOCTL_TIMESTAMP_EVENT),
        ("IOCTL_GPUMEM_ALLOC_ID", IOCTL_GPUMEM_ALLOC_ID),
        ("IOCTL_GPUMEM_FREE_ID", IOCTL_GPUMEM_FREE_ID),
        ("IOCTL_GPUOBJ_ALLOC", IOCTL_GPUOBJ_ALLOC),
        ("IOCTL_GPUOBJ_FREE", IOCTL_GPUOBJ_FREE),
        ("IOCTL_GPUOBJ_INFO", IOCTL_GPUOBJ_INFO),
        ("IOCTL_GPUOBJ_SYNC", IOCTL_GPUOBJ_SYNC),
        ("IOCTL_GPU_COMMAND", IOCTL_GPU_COMMAND),
        ("PROP_DEVICE_INFO", PROP_DEVICE_INFO.into()),
        ("PROP_VERSION", PROP_VERSION.into()),
        ("PROP_PWR_CONSTRAINT", PROP_PWR_CONSTRAINT.into()),
        ("CHIP_ID_A630", CHIP_ID_A630.into()),
        ("MEMFLAGS_USE_CPU_MAP", MEMFLAGS_USE_CPU_MAP),
        ("MEMFLAGS_GPUREADONLY", MEMFLAGS_GPUREADONLY),
        ("CMDLIST_IB", CMDLIST_IB.into()),
        (
            "CMDSTREAM_TIMESTAMP_RETIRED",
            CMDSTREAM_TIMESTAMP_RETIRED.into(),
        ),
    ]
}

/// `sizeof(struct wj_kgsl_NAME) == size` and each field's offset, in C.
macro_rules! layout {
    ($c:ident, $cname:literal, $rust:ty, { $($cfield:literal: $rfield:ident),* $(,)? }) => {{
        $c += &format!(
            "_Static_assert(sizeof(struct wj_kgsl_{}) == {}, \"{} size\");\n",
            $cname, size_of::<$rust>(), $cname
        );
        $(
            $c += &format!(
                "_Static_assert(offsetof(struct wj_kgsl_{}, {}) == {}, \"{}.{}\");\n",
                $cname, $cfield, offset_of!($rust, $rfield), $cname, $cfield
            );
        )*
    }};
}

fn layouts() -> String {
    let mut c = String::new();
    layout!(c, "device_getproperty", DeviceGetProperty, {
        "type": type_, "__pad": _pad, "value": value, "sizebytes": sizebytes });
    layout!(c, "devinfo", DevInfo, {
        "device_id": device_id, "chip_id": chip_id, "mmu_enabled": mmu_enabled,
        "__pad": _pad, "gmem_gpubaseaddr": gmem_gpubaseaddr, "gpu_id": gpu_id,
        "__pad2": _pad2, "gmem_sizebytes": gmem_sizebytes });
    layout!(c, "device_constraint", DeviceConstraint, {
        "type": type_, "context_id": context_id, "data": data, "size": size });
    layout!(c, "gpuobj_alloc", GpuobjAlloc, {
        "size": size, "flags": flags, "va_len": va_len, "mmapsize": mmapsize, "id": id,
        "metadata_len": metadata_len, "metadata": metadata });
    layout!(c, "gpuobj_free", GpuobjFree, {
        "flags": flags, "priv": priv_, "id": id, "type": type_, "len": len, "__pad": _pad });
    layout!(c, "gpuobj_info", GpuobjInfo, {
        "gpuaddr": gpuaddr, "flags": flags, "size": size, "va_len": va_len,
        "va_addr": va_addr, "id": id, "__pad": _pad });
    layout!(c, "gpuobj_sync", GpuobjSync, { "objs": objs, "obj_len": obj_len, "count": count });
    layout!(c, "gpumem_alloc_id", GpumemAllocId, {
        "id": id, "flags": flags, "size": size, "mmapsize": mmapsize, "gpuaddr": gpuaddr,
        "__pad": _reserved });
    layout!(c, "gpumem_free_id", GpumemFreeId, { "id": id, "__pad": _pad });
    layout!(c, "drawctxt_create", DrawctxtCreate, { "flags": flags, "drawctxt_id": drawctxt_id });
    layout!(c, "drawctxt_destroy", DrawctxtDestroy, { "drawctxt_id": drawctxt_id });
    layout!(c, "command_object", CommandObject, {
        "offset": offset, "gpuaddr": gpuaddr, "size": size, "flags": flags, "id": id });
    layout!(c, "gpu_command", GpuCommand, {
        "flags": flags, "cmdlist": cmdlist, "cmdsize": cmdsize, "numcmds": numcmds,
        "objlist": objlist, "objsize": objsize, "numobjs": numobjs, "synclist": synclist,
        "syncsize": syncsize, "numsyncs": numsyncs, "context_id": context_id,
        "timestamp": timestamp });
    layout!(c, "device_waittimestamp_ctxtid", WaitTimestamp, {
        "context_id": context_id, "timestamp": timestamp, "timeout": timeout });
    layout!(c, "cmdstream_readtimestamp_ctxtid", ReadTimestamp, {
        "context_id": context_id, "type": type_, "timestamp": timestamp });
    layout!(c, "map_user_mem", MapUserMem, {
        "fd": fd, "__pad": _pad, "gpuaddr": gpuaddr, "len": len, "offset": offset,
        "hostptr": hostptr, "memtype": memtype, "flags": flags });
    layout!(c, "sharedmem_free", SharedmemFree, { "gpuaddr": gpuaddr });
    layout!(c, "timestamp_event", TimestampEvent, {
        "type": type_, "timestamp": timestamp, "context_id": context_id, "__pad": _pad,
        "priv": priv_, "len": len });
    c
}

#[test]
fn every_header_constant_is_checked() {
    let mut names: std::collections::BTreeSet<String> = constants()
        .iter()
        .map(|(n, _)| format!("WJ_KGSL_{n}"))
        .collect();
    names.insert("WJ_KGSL_DEVICE_PATH".into());
    let h = header("wavejit_kgsl.h");
    assert_eq!(defines(&h, "WJ_KGSL_"), names);
    assert!(
        h.lines()
            .any(|l| l.trim() == "#define WJ_KGSL_DEVICE_PATH \"/dev/kgsl-3d0\""),
        "the path the shim serves"
    );
}

#[test]
fn header_needs_no_kernel_header_and_matches_the_driver() {
    if !cc_available() {
        eprintln!("skipped: no system `cc`");
        return;
    }
    let named: Vec<(String, u64)> = constants()
        .into_iter()
        .map(|(n, v)| (format!("WJ_KGSL_{n}"), v))
        .collect();
    // Only the header and stddef.h (for offsetof): no msm_kgsl.h anywhere.
    let mut c = String::from("#include <stddef.h>\n#include \"wavejit_kgsl.h\"\n");
    c += &value_asserts(named.iter().map(|(n, v)| (n.as_str(), *v)));
    c += &layouts();
    for (name, ty) in [
        ("wj_kgsl_open", "int (*)(void)"),
        ("wj_kgsl_ioctl", "int (*)(int, unsigned long, void *)"),
        ("wj_kgsl_mmap_fd", "int (*)(int)"),
        ("wj_kgsl_close", "int (*)(int)"),
    ] {
        c += &format!(
            "_Static_assert(__builtin_types_compatible_p(__typeof__(&{name}), {ty}), \"{name}\");\n"
        );
    }
    c += "_Static_assert(WJ_KGSL_MMAP_OFFSET(3) == 3 * 4096, \"mmap offset\");\n";
    compile(&c, "kgsl_check.c").unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_check_catches_a_wrong_offset() {
    if !cc_available() {
        return;
    }
    let c = "#include <stddef.h>\n#include \"wavejit_kgsl.h\"\n\
             _Static_assert(offsetof(struct wj_kgsl_gpu_command, timestamp) == 56, \"x\");\n";
    assert!(compile(c, "kgsl_negative.c").is_err());
}
