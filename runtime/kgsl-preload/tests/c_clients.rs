//! C clients of libwavejit_kgsl.so: one embedding it through wavejit_kgsl.h, the
//! others reaching it through LD_PRELOAD and plain open/ioctl/mmap/close and
//! stat/access (tinygrad exercises the preload path too, in CI); and what the
//! shim exports. Needs a C compiler (`cc`).

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
    __typeof__(&wj_kgsl_open) open_ = (__typeof__(open_))dlsym(lib, "wj_kgsl_open");
    __typeof__(&wj_kgsl_ioctl) ioctl_ = (__typeof__(ioctl_))dlsym(lib, "wj_kgsl_ioctl");
    __typeof__(&wj_kgsl_close) close_ = (__typeof__(close_))dlsym(lib, "wj_kgsl_close");
    int fd = open_();
    struct devinfo info = {0};
    struct getprop p = {1, 0, (uint64_t)(uintptr_t)&info, sizeof info};
    int ok = ioctl_(fd, GETPROPERTY, &p);
    p.size = 4;
    int small = ioctl_(fd, GETPROPERTY, &p);
    int closed = close_(fd);
    int again = close_(fd);
    printf("chip %#x ok %d small %d closed %d again %d\n", info.chip_id, ok, small, closed,
           again);
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
    // None only without a compiler: a client that does not compile fails.
    let res = Command::new("cc")
        .args(["-O1", "-D_GNU_SOURCE", "-o"])
        .arg(&out)
        .arg(&c)
        .arg(format!("-I{include}"))
        .arg("-ldl")
        .output()
        .ok()?;
    assert!(
        res.status.success(),
        "{name}.c: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    Some(out)
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
    assert_eq!(
        text.trim(),
        "chip 0x6030001 ok 0 small -22 closed 0 again -9"
    );
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

/// A client whose first submission writes to an unmapped address: the submit
/// after the fault gets EDEADLK, and the fault is in the WAVEJIT_FAULT_LOG file.
const FAULTING_CLIENT: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
struct gpuobj_alloc { uint64_t size, flags, va_len, mmapsize; uint32_t id, metadata_len;
                      uint64_t metadata; };
struct drawctxt_create { uint32_t flags, drawctxt_id; };
struct cmd_object { uint64_t offset, gpuaddr, size; uint32_t flags, id; };
struct gpu_command { uint64_t flags, cmdlist; uint32_t cmdsize, numcmds; uint64_t objlist;
                     uint32_t objsize, numobjs; uint64_t synclist; uint32_t syncsize, numsyncs;
                     uint32_t context_id, timestamp; };
struct wait_ts { uint32_t context_id, timestamp, timeout; };
#define GPUOBJ_ALLOC 0xc0300945UL
#define DRAWCTXT_CREATE 0xc0080913UL
#define GPU_COMMAND 0xc040094aUL
#define WAITTIMESTAMP 0x400c0907UL
int main(void) {
    int fd = open("/dev/kgsl-3d0", O_RDWR);
    struct gpuobj_alloc a = {4096, 0x100C0000};
    if (ioctl(fd, GPUOBJ_ALLOC, &a)) return 3;
    uint32_t *ib = mmap(0, a.mmapsize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)a.id << 12);
    if (ib == MAP_FAILED) return 4;
    uint32_t words[] = {IB_WORDS};
    memcpy(ib, words, sizeof words);
    struct drawctxt_create c = {0x04008A12, 0};
    if (ioctl(fd, DRAWCTXT_CREATE, &c)) return 5;
    struct cmd_object cmd = {0, (uint64_t)(uintptr_t)ib, sizeof words, 1, 0};
    struct gpu_command g = {0};
    g.cmdlist = (uint64_t)(uintptr_t)&cmd;
    g.cmdsize = sizeof cmd;
    g.numcmds = 1;
    g.context_id = c.drawctxt_id;
    int first = ioctl(fd, GPU_COMMAND, &g);
    struct wait_ts w = {c.drawctxt_id, g.timestamp, 1000};
    int waited = ioctl(fd, WAITTIMESTAMP, &w);
    int wait_errno = errno;
    int second = ioctl(fd, GPU_COMMAND, &g);
    int second_errno = errno;
    printf("pid %d ib %#lx context %u first %d wait %d/%d second %d/%d\n", (int)getpid(),
           (unsigned long)(uintptr_t)ib, c.drawctxt_id, first, waited, wait_errno == EDEADLK,
           second, second_errno == EDEADLK);
    return 0;
}
"#;

#[test]
fn preloaded_client_gets_edeadlk_after_a_fault_and_reads_it_in_the_fault_log() {
    use wavejit_runtime::kgsl::pm4::{packet::op, type7};
    let Some((so, dir)) = setup("fault-log") else {
        return;
    };
    // CP_MEM_WRITE of one dword to 0x10, which no mapping holds.
    let ib = [type7(op::MEM_WRITE, 3), 0x10, 0, 7];
    let words = ib.map(|w| format!("{w:#x}")).join(", ");
    let src = FAULTING_CLIENT.replace("IB_WORDS", &words);
    let Some(bin) = compile(&dir, "fault-log", &src) else {
        assert!(std::env::var_os("CI").is_none(), "cc failed under CI");
        println!("SKIP: no C compiler");
        return;
    };
    let log = dir.join("faults.log");
    let _ = std::fs::remove_file(&log);
    let out = run_with_limit(
        Command::new(&bin)
            .env("LD_PRELOAD", &so)
            .env("WAVEJIT_FAULT_LOG", &log),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let field = |i: usize| text.split_whitespace().nth(i).unwrap_or_default();
    let (pid, ib_addr) = (field(1), field(3));
    assert_eq!(
        text.trim(),
        format!("pid {pid} ib {ib_addr} context 1 first 0 wait -1/1 second -1/1")
    );
    let logged = std::fs::read_to_string(&log).expect("the fault log was written");
    assert_eq!(
        logged,
        format!(
            "wavejit kgsl: pid {pid} context 1: IB {ib_addr} dword 0: CP_MEM_WRITE at 0x10 \
             refused: no allocation contains it\n"
        )
    );
}

/// Issue 14.2 through the shim, as a C client makes them: (1) MAP_USER_MEM of
/// a PROT_READ page, then CP_MEM_WRITE into it; (2) a GPU object mapped
/// PROT_NONE used as an IB; (3) a MAP_USER_MEM range whose middle page is
/// unmapped (refused), and one holed after mapping, then written. Each faults
/// its context (EDEADLK at the wait) or is refused with kgsl's errno; the
/// host memory is untouched and the process does not crash.
const PROTECTION_CLIENT: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
struct gpuobj_alloc { uint64_t size, flags, va_len, mmapsize; uint32_t id, metadata_len;
                      uint64_t metadata; };
struct drawctxt_create { uint32_t flags, drawctxt_id; };
struct cmd_object { uint64_t offset, gpuaddr, size; uint32_t flags, id; };
struct gpu_command { uint64_t flags, cmdlist; uint32_t cmdsize, numcmds; uint64_t objlist;
                     uint32_t objsize, numobjs; uint64_t synclist; uint32_t syncsize, numsyncs;
                     uint32_t context_id, timestamp; };
struct wait_ts { uint32_t context_id, timestamp, timeout; };
struct map_user_mem { int fd; uint32_t pad; uint64_t gpuaddr, len, offset, hostptr;
                      uint32_t memtype, flags; };
#define GPUOBJ_ALLOC 0xc0300945UL
#define DRAWCTXT_CREATE 0xc0080913UL
#define GPU_COMMAND 0xc040094aUL
#define WAITTIMESTAMP 0x400c0907UL
#define MAP_USER_MEM 0xc0300915UL
#define GPUREADONLY 0x01000000u
#define MEM_WRITE_HDR MEM_WRITE_HEADER
static int fd;
static uint32_t *alloc_obj(uint32_t *id, int prot) {
    struct gpuobj_alloc a = {4096, 0x100C0000};
    if (ioctl(fd, GPUOBJ_ALLOC, &a)) return 0;
    *id = a.id;
    void *p = mmap(0, 4096, prot, MAP_SHARED, fd, (off_t)a.id << 12);
    return p == MAP_FAILED ? 0 : p;
}
static uint32_t context(void) {
    struct drawctxt_create c = {0x04008A12, 0};
    return ioctl(fd, DRAWCTXT_CREATE, &c) ? 0 : c.drawctxt_id;
}
/* Submits `dwords` at `ib` on a fresh context; returns the wait's errno (0: ok). */
static int run(void *ib, uint32_t dwords) {
    uint32_t ctx = context();
    struct cmd_object cmd = {0, (uint64_t)(uintptr_t)ib, 4 * dwords, 1, 0};
    struct gpu_command g = {0};
    g.cmdlist = (uint64_t)(uintptr_t)&cmd;
    g.cmdsize = sizeof cmd;
    g.numcmds = 1;
    g.context_id = ctx;
    if (ioctl(fd, GPU_COMMAND, &g)) return 1000 + errno;
    struct wait_ts w = {ctx, g.timestamp, 1000};
    return ioctl(fd, WAITTIMESTAMP, &w) ? errno : 0;
}
static int write_at(uint32_t *ib, void *addr, uint32_t value) {
    uint64_t a = (uint64_t)(uintptr_t)addr;
    uint32_t words[] = {MEM_WRITE_HDR, (uint32_t)a, (uint32_t)(a >> 32), value};
    memcpy(ib, words, sizeof words);
    return run(ib, 4);
}
static int map_user(void *p, uint64_t len, uint32_t flags) {
    struct map_user_mem m = {0};
    m.hostptr = (uint64_t)(uintptr_t)p;
    m.len = len;
    m.memtype = 3;
    m.flags = flags;
    return ioctl(fd, MAP_USER_MEM, &m) ? errno : 0;
}
int main(void) {
    fd = open("/dev/kgsl-3d0", O_RDWR);
    uint32_t ib_id, sig_id, obj_id;
    uint32_t *ib = alloc_obj(&ib_id, PROT_READ | PROT_WRITE);
    uint32_t *sig = alloc_obj(&sig_id, PROT_READ | PROT_WRITE);
    if (!ib || !sig) return 3;
    /* (1) */
    uint32_t *ro = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ro[0] = 0x11;
    mprotect(ro, 4096, PROT_READ);
    int ro_plain = map_user(ro, 4096, 0);
    int ro_gpuro = map_user(ro, 4096, GPUREADONLY);
    int ro_write = write_at(ib, ro, 7);
    printf("readonly: map %d/%d write %d value %#x\n", ro_plain == EFAULT, ro_gpuro,
           ro_write == EDEADLK, ro[0]);
    /* (2) */
    uint32_t *obj = alloc_obj(&obj_id, PROT_READ | PROT_WRITE);
    uint64_t s = (uint64_t)(uintptr_t)sig;
    uint32_t words[] = {MEM_WRITE_HDR, (uint32_t)s, (uint32_t)(s >> 32), 9};
    memcpy(obj, words, sizeof words);
    void *none = mmap(0, 4096, PROT_NONE, MAP_SHARED, fd, (off_t)obj_id << 12);
    int none_ib = run(none, 4);
    printf("prot_none ib: %d signal %u\n", none_ib == EDEADLK, sig[0]);
    /* (3) */
    char *p = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(p + 4096, 4096);
    int hole_map = map_user(p, 3 * 4096, 0);
    int hole_write = write_at(ib, p, 3);
    char *q = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int full_map = map_user(q, 3 * 4096, 0);
    int before = write_at(ib, q + 8192, 4);
    munmap(q + 4096, 4096);
    int after = write_at(ib, q, 5);
    printf("hole: map %d write %d value %u; holed later: map %d before %d/%u after %d/%u\n",
           hole_map == EINVAL, hole_write == EDEADLK, *(uint32_t *)p, full_map, before,
           *(uint32_t *)(q + 8192), after == EDEADLK, *(uint32_t *)q);
    return 0;
}
"#;

#[test]
fn preloaded_client_faults_on_protected_and_holed_memory_without_crashing() {
    use wavejit_runtime::kgsl::pm4::{packet::op, type7};
    let Some((so, dir)) = setup("protection") else {
        return;
    };
    let header = format!("{:#x}u", type7(op::MEM_WRITE, 3));
    let src = PROTECTION_CLIENT.replace("MEM_WRITE_HEADER", &header);
    let Some(bin) = compile(&dir, "protection", &src) else {
        assert!(std::env::var_os("CI").is_none(), "cc failed under CI");
        println!("SKIP: no C compiler");
        return;
    };
    let out = run_with_limit(
        Command::new(&bin)
            .env("LD_PRELOAD", &so)
            .env("WAVEJIT_FAULT_LOG", dir.join("faults.log")),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}: {text} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        text.trim(),
        "readonly: map 1/0 write 1 value 0x11\n\
         prot_none ib: 1 signal 0\n\
         hole: map 1 write 1 value 0; holed later: map 0 before 0/4 after 1/0"
    );
}

/// The node as stat/access report it, through each entry point a program may
/// bind: the glibc ≥ 2.33 functions, the 64-bit names, statx, and the `__xstat` family
/// that binaries built against older glibc call (found with dlsym, as new
/// programs cannot link them). Other paths pass through. Prints one line per
/// call; the same binary without the shim is the control.
const STAT_CLIENT: &str = r#"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#define DEV "/dev/kgsl-3d0"
static void show(const char *what, int r, const struct stat *st) {
    if (r) printf("%s -1 errno %d\n", what, errno);
    else printf("%s chr %d mode %o rdev %u:%u\n", what, S_ISCHR(st->st_mode),
                st->st_mode & 07777, major(st->st_rdev), minor(st->st_rdev));
}
int main(void) {
    struct stat st;
    struct stat64 st64;
    int r;
    r = stat(DEV, &st); show("stat", r, &st);
    r = lstat(DEV, &st); show("lstat", r, &st);
    r = fstatat(AT_FDCWD, DEV, &st, 0); show("fstatat", r, &st);
    r = stat64(DEV, &st64); show("stat64", r, (struct stat *)&st64);
    r = lstat64(DEV, &st64); show("lstat64", r, (struct stat *)&st64);
    r = fstatat64(AT_FDCWD, DEV, &st64, AT_SYMLINK_NOFOLLOW); show("fstatat64", r, (struct stat *)&st64);
    int (*xstat)(int, const char *, struct stat *) = dlsym(RTLD_DEFAULT, "__xstat");
    int (*lxstat)(int, const char *, struct stat *) = dlsym(RTLD_DEFAULT, "__lxstat64");
    int (*fxstatat)(int, int, const char *, struct stat *, int) =
        dlsym(RTLD_DEFAULT, "__fxstatat");
    r = xstat(1, DEV, &st); show("__xstat", r, &st);
    r = lxstat(1, DEV, &st); show("__lxstat64", r, &st);
    r = fxstatat(1, AT_FDCWD, DEV, &st, 0); show("__fxstatat", r, &st);
    r = xstat(1, "/dev/null", &st); show("__xstat null", r, &st);
    struct statx stx;
    r = statx(AT_FDCWD, DEV, 0, STATX_BASIC_STATS, &stx);
    st.st_mode = stx.stx_mode;
    st.st_rdev = makedev(stx.stx_rdev_major, stx.stx_rdev_minor);
    show("statx", r, &st);
    r = stat("/dev/null", &st); show("stat null", r, &st);
    r = stat("/nonexistent-wavejit", &st); show("stat missing", r, &st);
    int rw = access(DEV, R_OK | W_OK);
    int x = access(DEV, X_OK);
    int x_errno = errno;
    int at = faccessat(AT_FDCWD, DEV, F_OK, AT_EACCESS);
    int missing = access("/nonexistent-wavejit", F_OK);
    int missing_errno = errno;
    printf("access rw %d x %d/%d faccessat %d missing %d/%d\n", rw, x, x_errno, at, missing,
           missing_errno);
    return 0;
}
"#;

#[test]
fn preloaded_stat_and_access_see_a_character_device() {
    let Some((so, dir)) = setup("stat") else {
        return;
    };
    let Some(bin) = compile(&dir, "stat", STAT_CLIENT) else {
        assert!(std::env::var_os("CI").is_none(), "cc failed under CI");
        println!("SKIP: no C compiler");
        return;
    };
    let node = "chr 1 mode 666 rdev 508:0";
    let null = "chr 1 mode 666 rdev 1:3";
    let out = run_with_limit(
        Command::new(&bin).env("LD_PRELOAD", &so),
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text,
        format!(
            "stat {node}\nlstat {node}\nfstatat {node}\nstat64 {node}\nlstat64 {node}\n\
             fstatat64 {node}\n__xstat {node}\n__lxstat64 {node}\n__fxstatat {node}\n\
             __xstat null {null}\nstatx {node}\nstat null {null}\nstat missing -1 errno 2\n\
             access rw 0 x -1/13 faccessat 0 missing -1/2\n"
        )
    );
    // Without the shim the node does not exist here (no Adreno on CI).
    if std::path::Path::new("/dev/kgsl-3d0").exists() {
        return;
    }
    let out = run_with_limit(&mut Command::new(&bin), Duration::from_secs(60));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("stat -1 errno 2\nlstat -1 errno 2\n"),
        "{text}"
    );
}

/// What tinygrad's device probe and Python's os module call on this glibc.
#[test]
fn preloaded_python_sees_the_node() {
    let Some((so, _dir)) = setup("python") else {
        return;
    };
    let script = "import os, stat\n\
                  p = '/dev/kgsl-3d0'\n\
                  st = os.stat(p)\n\
                  print(os.path.exists(p), stat.S_ISCHR(st.st_mode), os.major(st.st_rdev), \
                  os.access(p, os.R_OK | os.W_OK), os.access(p, os.X_OK), \
                  os.path.exists('/nonexistent-wavejit'))";
    let out = match Command::new("python3")
        .args(["-c", script])
        .env("LD_PRELOAD", &so)
        .output()
    {
        Ok(out) => out,
        Err(_) => {
            assert!(std::env::var_os("CI").is_none(), "no python3 under CI");
            println!("SKIP: no python3");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.trim(), "True True 508 True False False");
}

/// The libc functions the shim defines: exactly these, besides the wj_* API.
const INTERPOSED: &[&str] = &[
    "__fxstatat",
    "__fxstatat64",
    "__lxstat",
    "__lxstat64",
    "__xstat",
    "__xstat64",
    "access",
    "close",
    "faccessat",
    "fstatat",
    "fstatat64",
    "ioctl",
    "lstat",
    "lstat64",
    "open",
    "open64",
    "openat",
    "openat64",
    "stat",
    "stat64",
    "statx",
];

fn dynamic_symbols(lib: &Path) -> Option<Vec<String>> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib)
        .output()
        .ok()?;
    assert!(out.status.success(), "nm {}", lib.display());
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(String::from))
        .collect();
    names.sort();
    Some(names)
}

#[test]
fn shim_exports_the_interposed_functions_and_the_wj_api() {
    let Some(so) = shim() else {
        assert!(std::env::var_os("CI").is_none(), "shim not built");
        return;
    };
    let Some(exported) = dynamic_symbols(&so) else {
        assert!(std::env::var_os("CI").is_none(), "no nm under CI");
        return;
    };
    let (wj, libc): (Vec<String>, Vec<String>) =
        exported.into_iter().partition(|s| s.starts_with("wj_"));
    assert_eq!(libc, INTERPOSED);
    for f in [
        "wj_kgsl_open",
        "wj_kgsl_ioctl",
        "wj_kgsl_mmap_fd",
        "wj_kgsl_close",
    ] {
        assert!(wj.iter().any(|s| s == f), "{f} not exported");
    }
    // The same wj_* API as libwavejit.so, when that was built alongside.
    let lib = so.with_file_name("libwavejit.so");
    if lib.exists() {
        let theirs: Vec<String> = dynamic_symbols(&lib)
            .expect("nm ran above")
            .into_iter()
            .collect();
        assert_eq!(wj, theirs);
    }
}
