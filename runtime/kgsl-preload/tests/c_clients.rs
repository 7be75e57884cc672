//! C clients of libwavejit_kgsl.so: one embedding it through wavejit_kgsl.h, one
//! reaching it through LD_PRELOAD and plain open/ioctl/mmap/close (tinygrad
//! exercises the preload path too, in CI). Needs a C compiler (`cc`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const GETPROP: &str = r#"
#include <stdint.h>
struct devinfo { uint32_t device_id, chip_id, mmu_enabled, pad; uint64_t gmem_base;
                 uint32_t gpu_id, pad2; uint64_t gmem_size; };
struct getprop { uint32_t type, pad; uint64_t value; uint64_t size; };
#define GETPROPERTY 0xc0180902UL
"#;

const EMBED_CLIENT: &str = r#"
#include <dlfcn.h>
#include <stdio.h>
#include "wavejit_kgsl.h"
int main(int argc, char **argv) {
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    WjKgsl *(*open_)(void) = dlsym(lib, "wj_kgsl_open");
    int (*ioctl_)(WjKgsl *, unsigned long, void *) = dlsym(lib, "wj_kgsl_ioctl");
    void (*close_)(WjKgsl *) = dlsym(lib, "wj_kgsl_close");
    WjKgsl *h = open_();
    struct devinfo info = {0};
    struct getprop p = {1, 0, (uint64_t)(uintptr_t)&info, sizeof info};
    int ok = ioctl_(h, GETPROPERTY, &p);
    p.size = 4;
    int small = ioctl_(h, GETPROPERTY, &p);
    printf("chip %#x ok %d small %d\n", info.chip_id, ok, small);
    close_(h);
    return 0;
}
"#;

const PRELOAD_CLIENT: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>
int main(void) {
    int fd = open("/dev/kgsl-3d0", O_RDWR);
    struct devinfo info = {0};
    struct getprop p = {1, 0, (uint64_t)(uintptr_t)&info, sizeof info};
    int ok = ioctl(fd, GETPROPERTY, &p);
    int bad = ioctl(fd, 0xdead, 0);
    int bad_errno = errno;
    int other = open("/dev/null", O_RDONLY);   /* passes through untouched */
    int other_closed = close(other);
    int closed = close(fd);
    int again = close(fd);                     /* now libc's: EBADF */
    int again_errno = errno;
    printf("chip %#x ok %d bad %d/%d other %d closed %d again %d/%d\n", info.chip_id, ok, bad,
           bad_errno == ENOTTY, other_closed, closed, again, again_errno == EBADF);
    return 0;
}
"#;

/// Runs `cmd`, killing it after `limit` (a deadlock must fail the test, not hang it).
fn run_with_limit(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collects");
            panic!(
                "client hung for {limit:?}; stdout so far: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collects")
}

/// The shim built next to this test binary (target/<profile>/).
fn shim() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    [
        deps.join("libwavejit_kgsl.so"),
        deps.parent()?.join("libwavejit_kgsl.so"),
    ]
    .into_iter()
    .find(|p| p.exists())
}

fn compile(dir: &Path, name: &str, src: &str) -> Option<PathBuf> {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, format!("{GETPROP}{src}")).ok()?;
    let out = dir.join(name);
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/../include");
    let st = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&out)
        .arg(&c)
        .arg(format!("-I{include}"))
        .arg("-ldl")
        .status()
        .ok()?;
    st.success().then_some(out)
}

fn setup(name: &str) -> Option<(PathBuf, PathBuf)> {
    let Some(so) = shim() else {
        // cargo builds the cdylib for the integration tests; CI must never skip.
        assert!(
            std::env::var_os("CI").is_none(),
            "libwavejit_kgsl.so not built"
        );
        println!("SKIP: libwavejit_kgsl.so not found next to the test binary");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("wj-kgsl-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    Some((so, dir))
}

#[test]
fn embedded_c_abi_returns_negative_errno() {
    let Some((so, dir)) = setup("embed") else {
        return;
    };
    let Some(bin) = compile(&dir, "embed", EMBED_CLIENT) else {
        assert!(std::env::var_os("CI").is_none(), "cc failed under CI");
        println!("SKIP: no C compiler");
        return;
    };
    let out = Command::new(&bin).arg(&so).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.trim(), "chip 0x6030001 ok 0 small -22");
}

#[test]
fn preloaded_c_client_opens_ioctls_and_closes_without_hanging() {
    let Some((so, dir)) = setup("preload") else {
        return;
    };
    let Some(bin) = compile(&dir, "preload", PRELOAD_CLIENT) else {
        assert!(std::env::var_os("CI").is_none(), "cc failed under CI");
        println!("SKIP: no C compiler");
        return;
    };
    let out = run_with_limit(
        Command::new(&bin).env("LD_PRELOAD", &so),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.trim(),
        "chip 0x6030001 ok 0 bad -1/1 other 0 closed 0 again -1/1"
    );
}
