//! What the libraries export: libwavejit.so exactly the functions the headers
//! declare (all `wj_*`), and neither it nor libwavejit.a any libc function, so
//! linking wavejit interposes nothing.

mod support;

use std::collections::BTreeSet;

use support::{built, declared_functions, defined_symbols, have};

/// The functions the LD_PRELOAD shim interposes; a library without interposition
/// must define none of them.
const LIBC: &[&str] = &[
    "open",
    "open64",
    "openat",
    "openat64",
    "ioctl",
    "close",
    "mmap",
    "stat",
    "stat64",
    "lstat",
    "lstat64",
    "fstatat",
    "fstatat64",
    "__xstat",
    "__xstat64",
    "__lxstat",
    "__lxstat64",
    "__fxstatat",
    "__fxstatat64",
    "statx",
    "access",
    "faccessat",
];

#[test]
fn shared_library_exports_exactly_the_declared_wj_functions() {
    if !have("nm") {
        return;
    }
    let exported = defined_symbols(&built("libwavejit.so"), true);
    let declared = declared_functions();
    // The three APIs are all there (their full lists are the headers').
    for f in [
        "wj_kgsl_open",
        "wj_kgsl_ioctl",
        "wj_mmio_new",
        "wj_aql_agent_create",
    ] {
        assert!(declared.contains(f), "{f} not declared");
    }
    assert!(declared.len() > 40, "{declared:?}");
    let stray: BTreeSet<_> = exported.iter().filter(|s| !s.starts_with("wj_")).collect();
    assert!(stray.is_empty(), "exported beyond wj_*: {stray:?}");
    assert_eq!(exported, declared);
}

#[test]
fn static_library_defines_no_libc_function() {
    if !have("nm") {
        return;
    }
    let defined = defined_symbols(&built("libwavejit.a"), false);
    for f in ["wj_kgsl_open", "wj_mmio_new", "wj_aql_agent_create"] {
        assert!(defined.contains(f), "{f} missing from libwavejit.a");
    }
    let libc: BTreeSet<String> = LIBC.iter().map(|s| s.to_string()).collect();
    let clash: Vec<_> = defined.intersection(&libc).collect();
    assert!(clash.is_empty(), "libwavejit.a defines {clash:?}");
}
