//! C programs on libwavejit: the KGSL-direct API's return values, and the
//! example built with pkg-config against a copy installed by install.sh.

mod support;

use std::path::Path;
use std::process::Command;

use support::{built, compile_c, have, include_dir, manifest_dir, run, scratch, stdout};

/// The KGSL-direct API's contract, value by value: negative errno for bad
/// input and descriptors, objects mapped through wj_kgsl_mmap_fd, and open(2)
/// of the node not interposed.
const KGSL_CLIENT: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "wavejit_kgsl.h"
int main(void) {
    int fd = wj_kgsl_open();
    int cloexec = fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
    struct wj_kgsl_devinfo info = {0};
    struct wj_kgsl_device_getproperty p = {WJ_KGSL_PROP_DEVICE_INFO, 0,
                                           (uint64_t)(uintptr_t)&info, sizeof info};
    int ok = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_DEVICE_GETPROPERTY, &p);
    p.sizebytes = 4;
    int small = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_DEVICE_GETPROPERTY, &p);
    int unknown = wj_kgsl_ioctl(fd, 0xc0080999UL, &p);
    int fault = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_DEVICE_GETPROPERTY, (void *)8);
    int other = wj_kgsl_ioctl(0, WJ_KGSL_IOCTL_DEVICE_GETPROPERTY, &p);
    struct wj_kgsl_gpuobj_alloc a = {0};
    a.size = 100;
    a.flags = WJ_KGSL_MEMFLAGS_USE_CPU_MAP;
    int alloc = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_GPUOBJ_ALLOC, &a);
    a.size = 0;
    int zero = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_GPUOBJ_ALLOC, &a);
    int mfd = wj_kgsl_mmap_fd(fd);
    char *m = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, WJ_KGSL_MMAP_OFFSET(a.id));
    char *again = mmap(0, 4096, PROT_READ, MAP_SHARED, mfd, WJ_KGSL_MMAP_OFFSET(a.id));
    int shared = 0;
    if (m != MAP_FAILED && again != MAP_FAILED) {
        strcpy(m, "pages");
        shared = strcmp(again, "pages") == 0;
    }
    int node = open(WJ_KGSL_DEVICE_PATH, O_RDWR);
    int node_errno = errno;
    int second = wj_kgsl_open();
    int closed = wj_kgsl_close(fd);
    int reclosed = wj_kgsl_close(fd);
    int after = wj_kgsl_ioctl(fd, WJ_KGSL_IOCTL_DEVICE_GETPROPERTY, &p);
    int after_mmap_fd = wj_kgsl_mmap_fd(fd);
    int fd_gone = fcntl(fd, F_GETFD) == -1 && errno == EBADF;
    p.sizebytes = sizeof info;
    int second_ok = wj_kgsl_ioctl(second, WJ_KGSL_IOCTL_DEVICE_GETPROPERTY, &p);
    int not_ours = wj_kgsl_close(0);
    printf("fd %d cloexec %d chip %#x ok %d small %d unknown %d fault %d other %d\n",
           fd >= 0, cloexec, info.chip_id, ok, small, unknown, fault, other);
    printf("alloc %d id %u mmapsize %llu zero %d mmap_fd %d shared %d\n", alloc, a.id,
           (unsigned long long)a.mmapsize, zero, mfd == fd, shared);
    printf("open %d/%d closed %d reclosed %d after %d/%d gone %d second %d/%d stdin %d\n",
           node, node_errno == ENOENT, closed, reclosed, after, after_mmap_fd, fd_gone,
           second >= 0, second_ok, not_ours);
    return wj_kgsl_close(second);
}
"#;

#[test]
fn kgsl_direct_api_returns_negative_errno_and_maps_objects() {
    if !have("cc") {
        return;
    }
    let so = built("libwavejit.so");
    let lib_dir = so.parent().expect("lib dir").to_str().expect("utf-8 path");
    let dir = scratch("kgsl-direct");
    let include = include_dir();
    let bin = compile_c(
        &dir,
        "kgsl_direct",
        KGSL_CLIENT,
        &[
            "-I",
            include.to_str().expect("utf-8 path"),
            "-L",
            lib_dir,
            &format!("-Wl,-rpath,{lib_dir}"),
            "-lwavejit",
        ],
    );
    let text = stdout(&run(&mut Command::new(&bin)));
    use libc_errno::*;
    let (einval, enotty, efault, ebadf) = (-EINVAL, -ENOTTY, -EFAULT, -EBADF);
    assert_eq!(
        text,
        format!(
            "fd 1 cloexec 1 chip 0x6030001 ok 0 small {einval} unknown {enotty} fault {efault} \
             other {ebadf}\n\
             alloc 0 id 1 mmapsize 4096 zero {einval} mmap_fd 1 shared 1\n\
             open -1/1 closed 0 reclosed {ebadf} after {ebadf}/{ebadf} gone 1 second 1/0 \
             stdin {ebadf}\n"
        )
    );
}

/// Linux errno values (the test crate has no libc dependency).
mod libc_errno {
    pub const EBADF: i32 = 9;
    pub const EFAULT: i32 = 14;
    pub const EINVAL: i32 = 22;
    pub const ENOTTY: i32 = 25;
}

/// Installs into `prefix` with install.sh from the libraries of this run.
fn install(prefix: &Path) {
    let build = built("libwavejit.so");
    let build = build.parent().expect("lib dir");
    let out = run(Command::new("sh")
        .arg(manifest_dir().join("install.sh"))
        .arg(prefix)
        .arg(build));
    assert!(stdout(&out).starts_with("installed libwavejit "));
}

const EXPECTED: &str = "kgsl: chip_id 0x6030001\nkgsl: CP_MEM_WRITE wrote 0xcafe\n\
                        mmio: dev_id 0x47505055 ready 1 vram 0x123456789abcdef\n";

fn pkg_config(prefix: &Path, args: &[&str]) -> Vec<String> {
    let out = run(Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .args(args)
        .arg("wavejit"));
    stdout(&out).split_whitespace().map(String::from).collect()
}

#[test]
fn example_builds_with_pkg_config_against_the_installed_library() {
    if !have("cc") || !have("pkg-config") {
        return;
    }
    let dir = scratch("example");
    let prefix = dir.join("prefix");
    install(&prefix);
    for f in [
        "lib/libwavejit.so",
        "lib/libwavejit.a",
        "include/wavejit_aql.h",
        "include/wavejit_kgsl.h",
        "include/wavejit_mmio.h",
    ] {
        assert!(prefix.join(f).is_file(), "{f} not installed");
    }
    let flags = pkg_config(&prefix, &["--cflags", "--libs"]);
    let canonical = prefix.canonicalize().expect("prefix");
    assert_eq!(
        flags,
        [
            format!("-I{}/include", canonical.display()),
            format!("-L{}/lib", canonical.display()),
            "-lwavejit".to_string(),
        ]
    );
    let version = pkg_config(&prefix, &["--modversion"]);
    assert_eq!(version, [env!("CARGO_PKG_VERSION")]);

    let example = manifest_dir().join("examples/wavejit_hello.c");
    let bin = dir.join("wavejit_hello");
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&bin)
        .arg(&example)
        .args(&flags));
    let out = run(Command::new(&bin).env("LD_LIBRARY_PATH", prefix.join("lib")));
    assert_eq!(stdout(&out), EXPECTED);
}

#[test]
fn example_links_the_static_library() {
    if !have("cc") || !have("pkg-config") {
        return;
    }
    let dir = scratch("example-static");
    let prefix = dir.join("prefix");
    install(&prefix);
    // Without the .so, -lwavejit can only be the archive.
    std::fs::remove_file(prefix.join("lib/libwavejit.so")).expect("removes the .so");
    let flags = pkg_config(&prefix, &["--static", "--cflags", "--libs"]);
    let bin = dir.join("wavejit_hello");
    run(Command::new("cc")
        .args(["-std=c11", "-o"])
        .arg(&bin)
        .arg(manifest_dir().join("examples/wavejit_hello.c"))
        .args(&flags));
    let out = run(&mut Command::new(&bin));
    assert_eq!(stdout(&out), EXPECTED);
    let deps = stdout(&run(Command::new("ldd").arg(&bin)));
    assert!(!deps.contains("libwavejit"), "{deps}");
}
