//! The driver proper: objects in a memfd, contexts with in-order rings, and the
//! ioctls a compute client uses, with the real driver's errno for bad input.

use std::collections::{BTreeMap, VecDeque};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use super::fault_log::FaultLog;
use super::maps::{FileMapping, mappings_of};
use super::profile::{self, Phase};
use super::pm4::{CommandProcessor, ComputeUnit, RunOutcome, Submission};
use super::uapi::*;
use super::user_copy::{self, Pod};
use crate::memory::AddressSpace;

const PAGE: u64 = 4096;
/// Sparse size of the backing memfd; object ids are page indexes into it and are
/// never reused, so this bounds the total ever allocated by one device.
const MEMFD_SIZE: u64 = 1 << 42;
/// Largest object a client may request, in bytes before page rounding: the real
/// driver's `gpumem_alloc_entry` refuses `size > UINT_MAX` with EINVAL, which
/// also keeps the rounding below from wrapping. It is far below MEMFD_SIZE, the
/// device's whole memory, so no single object can exceed that either.
const MAX_OBJECT_SIZE: u64 = u32::MAX as u64;
/// How long DEVICE_WAITTIMESTAMP retries parked work before returning (the client
/// polls memory with its own timeout).
const WAIT_RETRY: Duration = Duration::from_millis(20);

/// An errno value.
pub type Errno = i32;

struct GpuObject {
    page: u64,
    size: u64,
    flags: u64,
    /// Our own mapping, for objects without USE_CPU_MAP (their GPU address).
    own_map: Option<NonNull<u8>>,
}

// SAFETY: own_map is a private shared mapping used only under the device's lock.
unsafe impl Send for GpuObject {}

struct Context {
    submitted: u32,
    retired: u32,
    /// Submissions parked at a wait, in order, with the timestamp each retires.
    ring: VecDeque<(Submission, u32)>,
    fault: Option<String>,
    cp: CommandProcessor,
}

/// One open device: what a client's fd of `/dev/kgsl-3d0` reaches.
pub struct KgslDevice {
    memfd: OwnedFd,
    memfd_id: (u32, u32, u64),
    next_page: u64,
    objects: BTreeMap<u32, GpuObject>,
    user_maps: BTreeMap<u64, u64>,
    contexts: BTreeMap<u32, Context>,
    next_context: u32,
    mem: AddressSpace,
    live_regions: Vec<(u64, u64)>,
    compute: Box<dyn ComputeUnit + Send>,
    fault_log: FaultLog,
}

impl KgslDevice {
    /// A device whose CP_EXEC_CS dispatches run on `compute`.
    pub fn new(compute: Box<dyn ComputeUnit + Send>) -> std::io::Result<KgslDevice> {
        // SAFETY: memfd_create with a valid C string; the fd is owned below.
        let fd = unsafe { libc::memfd_create(c"wavejit-kgsl".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor we own.
        let memfd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: plain syscalls on our fd.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::ftruncate(fd, MEMFD_SIZE as libc::off_t) } != 0
            || unsafe { libc::fstat(fd, &mut st) } != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        let (major, minor) = (libc::major(st.st_dev), libc::minor(st.st_dev));
        Ok(KgslDevice {
            memfd,
            memfd_id: (major, minor, st.st_ino),
            next_page: 1,
            objects: BTreeMap::new(),
            user_maps: BTreeMap::new(),
            contexts: BTreeMap::new(),
            next_context: 1,
            mem: AddressSpace::new(),
            live_regions: Vec::new(),
            compute,
            fault_log: FaultLog::from_env(),
        })
    }

    /// The memfd whose pages back every object (a client maps object `id` at
    /// offset `id << 12`).
    pub fn memfd(&self) -> RawFd {
        self.memfd.as_raw_fd()
    }

    /// The checked address space kernels run against (refreshed per submission).
    pub fn memory(&self) -> &AddressSpace {
        &self.mem
    }

    /// Handles one ioctl. `arg` is the client's argument pointer.
    pub fn ioctl(&mut self, request: u64, arg: u64) -> Result<(), Errno> {
        match request {
            IOCTL_GPUOBJ_ALLOC => self.with::<GpuobjAlloc>(arg, Self::gpuobj_alloc),
            IOCTL_GPUOBJ_FREE => self.with::<GpuobjFree>(arg, Self::gpuobj_free),
            IOCTL_GPUOBJ_INFO => self.with::<GpuobjInfo>(arg, Self::gpuobj_info),
            IOCTL_GPUOBJ_SYNC => self.with::<GpuobjSync>(arg, |_, _| Ok(())),
            IOCTL_GPUMEM_ALLOC_ID => self.with::<GpumemAllocId>(arg, Self::gpumem_alloc_id),
            IOCTL_GPUMEM_FREE_ID => self.with::<GpumemFreeId>(arg, |d, a| d.free_object(a.id)),
            IOCTL_DRAWCTXT_CREATE => self.with::<DrawctxtCreate>(arg, Self::drawctxt_create),
            IOCTL_DRAWCTXT_DESTROY => self.with::<DrawctxtDestroy>(arg, |d, a| {
                d.contexts
                    .remove(&a.drawctxt_id)
                    .map(|_| ())
                    .ok_or(libc::EINVAL)
            }),
            IOCTL_DEVICE_GETPROPERTY => self.with::<DeviceGetProperty>(arg, Self::getproperty),
            IOCTL_SETPROPERTY => self.with::<DeviceGetProperty>(arg, Self::setproperty),
            IOCTL_GPU_COMMAND => self.with::<GpuCommand>(arg, Self::gpu_command),
            IOCTL_DEVICE_WAITTIMESTAMP_CTXTID => {
                self.with::<WaitTimestamp>(arg, Self::wait_timestamp)
            }
            IOCTL_CMDSTREAM_READTIMESTAMP_CTXTID => {
                self.with::<ReadTimestamp>(arg, Self::read_timestamp)
            }
            IOCTL_TIMESTAMP_EVENT => self.with::<TimestampEvent>(arg, |_, _| Err(libc::EINVAL)),
            IOCTL_MAP_USER_MEM => self.with::<MapUserMem>(arg, Self::map_user_mem),
            IOCTL_SHAREDMEM_FREE => self.with::<SharedmemFree>(arg, |d, a| {
                d.user_maps
                    .remove(&a.gpuaddr)
                    .map(|_| ())
                    .ok_or(libc::EINVAL)
            }),
            _ => Err(libc::ENOTTY),
        }
    }

    /// Reads the argument struct, runs `f`, writes the struct back.
    fn with<T: Pod>(
        &mut self,
        arg: u64,
        f: impl FnOnce(&mut Self, &mut T) -> Result<(), Errno>,
    ) -> Result<(), Errno> {
        let mut a: T = user_copy::read(arg)?;
        f(self, &mut a)?;
        user_copy::write(arg, &a)
    }

    fn alloc_object(&mut self, size: u64, flags: u64) -> Result<(u32, u64), Errno> {
        if size == 0 || size > MAX_OBJECT_SIZE {
            return Err(libc::EINVAL);
        }
        let size = size.div_ceil(PAGE) * PAGE;
        let pages = size / PAGE;
        if self.next_page + pages > MEMFD_SIZE / PAGE || self.next_page > u64::from(u32::MAX) {
            return Err(libc::ENOMEM);
        }
        let page = self.next_page;
        self.next_page += pages;
        let own_map = if flags & MEMFLAGS_USE_CPU_MAP == 0 {
            // SAFETY: maps our memfd's pages for this object; unmapped on free.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    size as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    self.memfd.as_raw_fd(),
                    (page * PAGE) as libc::off_t,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(libc::ENOMEM);
            }
            NonNull::new(p.cast::<u8>())
        } else {
            None
        };
        let id = page as u32;
        self.objects.insert(
            id,
            GpuObject {
                page,
                size,
                flags,
                own_map,
            },
        );
        Ok((id, size))
    }

    fn gpuobj_alloc(&mut self, a: &mut GpuobjAlloc) -> Result<(), Errno> {
        let (id, size) = self.alloc_object(a.size, a.flags)?;
        a.id = id;
        a.mmapsize = size;
        Ok(())
    }

    fn gpumem_alloc_id(&mut self, a: &mut GpumemAllocId) -> Result<(), Errno> {
        let (id, size) = self.alloc_object(a.size, u64::from(a.flags))?;
        a.id = id;
        a.mmapsize = size;
        a.gpuaddr = self
            .objects
            .get(&id)
            .and_then(|o| o.own_map)
            .map_or(0, |p| p.as_ptr() as u64);
        Ok(())
    }

    fn free_object(&mut self, id: u32) -> Result<(), Errno> {
        if !self.objects.contains_key(&id) {
            return Err(libc::EINVAL);
        }
        // Learn the client's current mappings of the object first, so that its
        // addresses are remembered as freed (use-after-free, not "unmapped").
        self.refresh_memory();
        let obj = self.objects.remove(&id).ok_or(libc::EINVAL)?;
        if let Some(p) = obj.own_map {
            // SAFETY: this mapping was created by alloc_object with this size.
            unsafe { libc::munmap(p.as_ptr().cast(), obj.size as usize) };
        }
        // Give the pages back; the range is never handed out again.
        // SAFETY: plain syscall on our fd.
        unsafe {
            libc::fallocate(
                self.memfd.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                (obj.page * PAGE) as libc::off_t,
                obj.size as libc::off_t,
            )
        };
        self.refresh_memory();
        Ok(())
    }

    fn gpuobj_free(&mut self, a: &mut GpuobjFree) -> Result<(), Errno> {
        self.free_object(a.id)
    }

    fn gpuobj_info(&mut self, a: &mut GpuobjInfo) -> Result<(), Errno> {
        let obj = self.objects.get(&a.id).ok_or(libc::EINVAL)?;
        let gpuaddr = match obj.own_map {
            Some(p) => p.as_ptr() as u64,
            None => self.client_address_of(obj.page, obj.size).unwrap_or(0),
        };
        a.gpuaddr = gpuaddr;
        a.flags = obj.flags;
        a.size = obj.size;
        a.va_len = obj.size;
        a.va_addr = gpuaddr;
        Ok(())
    }

    fn drawctxt_create(&mut self, a: &mut DrawctxtCreate) -> Result<(), Errno> {
        let id = self.next_context;
        self.next_context = self.next_context.checked_add(1).ok_or(libc::ENOSPC)?;
        self.contexts.insert(
            id,
            Context {
                submitted: 0,
                retired: 0,
                ring: VecDeque::new(),
                fault: None,
                cp: CommandProcessor::default(),
            },
        );
        a.drawctxt_id = id;
        Ok(())
    }

    fn getproperty(&mut self, a: &mut DeviceGetProperty) -> Result<(), Errno> {
        match a.type_ {
            PROP_DEVICE_INFO => {
                if (a.sizebytes as usize) < std::mem::size_of::<DevInfo>() {
                    return Err(libc::EINVAL);
                }
                let info = DevInfo {
                    device_id: 0,
                    chip_id: CHIP_ID_A630,
                    mmu_enabled: 1,
                    gmem_gpubaseaddr: 0x10_0000,
                    gpu_id: 630,
                    gmem_sizebytes: 1 << 20,
                    ..DevInfo::default()
                };
                user_copy::write(a.value, &info)
            }
            PROP_VERSION => {
                if a.sizebytes < 16 {
                    return Err(libc::EINVAL);
                }
                // drv_major 3, drv_minor 1, dev_major 3, dev_minor 1
                let bytes: Vec<u8> = [3u32, 1, 3, 1]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect();
                user_copy::write_bytes(a.value, &bytes)
            }
            _ => Err(libc::EINVAL),
        }
    }

    fn setproperty(&mut self, a: &mut DeviceGetProperty) -> Result<(), Errno> {
        match a.type_ {
            PROP_PWR_CONSTRAINT => {
                if (a.sizebytes as usize) < std::mem::size_of::<DeviceConstraint>() {
                    return Err(libc::EINVAL);
                }
                let c: DeviceConstraint = user_copy::read(a.value)?;
                if c.context_id != 0 && !self.contexts.contains_key(&c.context_id) {
                    return Err(libc::EINVAL);
                }
                Ok(())
            }
            _ => Err(libc::EINVAL),
        }
    }

    fn map_user_mem(&mut self, a: &mut MapUserMem) -> Result<(), Errno> {
        if a.len == 0 || a.hostptr == 0 || !a.hostptr.is_multiple_of(PAGE) {
            return Err(libc::EINVAL);
        }
        // The range must be mapped in the client right now.
        let mut probe = [0u8; 1];
        user_copy::read_bytes(a.hostptr, &mut probe)?;
        user_copy::read_bytes(a.hostptr + a.len - 1, &mut probe)?;
        self.user_maps.insert(a.hostptr, a.len);
        a.gpuaddr = a.hostptr;
        Ok(())
    }

    /// Client address of an object's first byte, if the client has it mapped.
    fn client_address_of(&self, page: u64, size: u64) -> Option<u64> {
        let start = page * PAGE;
        self.file_mappings()
            .into_iter()
            .find(|m| {
                m.offset <= start && start < m.offset + (m.end - m.start) && start + size > m.offset
            })
            .map(|m| m.start + (start - m.offset))
    }

    fn file_mappings(&self) -> Vec<FileMapping> {
        let text = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let (major, minor, ino) = self.memfd_id;
        mappings_of(&text, major, minor, ino)
    }

    /// Rebuilds the checked address space from what the client has mapped now:
    /// every mapping of a live object, clipped to the object, plus user maps that
    /// are still mapped. Called before each submission runs, because the client may
    /// unmap and remap between submissions.
    pub fn refresh_memory(&mut self) {
        let _t = profile::start(Phase::Refresh);
        let mut want: Vec<(u64, u64, bool)> = Vec::new();
        for m in self.file_mappings() {
            let (f0, f1) = (m.offset, m.offset + (m.end - m.start));
            for obj in self.objects.values() {
                let (o0, o1) = (obj.page * PAGE, obj.page * PAGE + obj.size);
                let (s, e) = (o0.max(f0), o1.min(f1));
                if s < e {
                    want.push((m.start + (s - f0), e - s, m.writable));
                }
            }
        }
        for (&addr, &len) in &self.user_maps {
            let mut probe = [0u8; 1];
            if user_copy::read_bytes(addr, &mut probe).is_ok()
                && user_copy::read_bytes(addr + len - 1, &mut probe).is_ok()
            {
                want.push((addr, len, true));
            }
        }
        want.sort_unstable();
        want.dedup_by_key(|w| w.0);
        let have = std::mem::take(&mut self.live_regions);
        for (start, len) in &have {
            if !want.iter().any(|w| (w.0, w.1) == (*start, *len)) {
                let _ = self.mem.free(*start);
            }
        }
        for (start, len, writable) in want {
            if !have.contains(&(start, len)) {
                let Some(host) = NonNull::new(start as *mut u8) else {
                    continue;
                };
                // SAFETY: the range is a live mapping of this process (just read from
                // /proc/self/maps or probed); it is re-validated before every submission.
                if unsafe { self.mem.register(start, host, len, writable) }.is_err() {
                    continue;
                }
            }
            self.live_regions.push((start, len));
        }
    }

    fn gpu_command(&mut self, a: &mut GpuCommand) -> Result<(), Errno> {
        let _t = profile::start(Phase::Submit);
        if !self.contexts.contains_key(&a.context_id) {
            return Err(libc::EINVAL);
        }
        if a.numcmds > 0 && (a.cmdsize as usize) < std::mem::size_of::<CommandObject>() {
            return Err(libc::EINVAL);
        }
        let mut subs = Vec::new();
        for i in 0..u64::from(a.numcmds) {
            let cmd: CommandObject = user_copy::read(a.cmdlist + i * u64::from(a.cmdsize))?;
            if cmd.flags & CMDLIST_IB != 0 {
                if !cmd.size.is_multiple_of(4) {
                    return Err(libc::EINVAL);
                }
                let dwords = u32::try_from(cmd.size / 4).map_err(|_| libc::EINVAL)?;
                subs.push(Submission::new(cmd.gpuaddr, dwords));
            }
        }
        let id = a.context_id;
        // kgsl_check_context_state: a faulted (invalidated) context takes no more
        // submissions, and they get no timestamp.
        if self.contexts.get(&id).is_some_and(|c| c.fault.is_some()) {
            return Err(libc::EDEADLK);
        }
        self.refresh_memory();
        let ctx = self.contexts.get_mut(&id).ok_or(libc::EINVAL)?;
        if let Some(dir) = std::env::var_os("WAVEJIT_KGSL_CAPTURE") {
            capture_submission(std::path::Path::new(&dir), &self.mem, &subs, &ctx.cp);
        }
        ctx.submitted = ctx.submitted.wrapping_add(1);
        let ts = ctx.submitted;
        a.timestamp = ts;
        for s in subs {
            ctx.ring.push_back((s, ts));
        }
        if ctx.ring.is_empty() {
            ctx.retired = ts;
        }
        self.drain(id);
        Ok(())
    }

    /// Runs the context's ring in order until it empties or parks.
    fn drain(&mut self, id: u32) {
        let Some(ctx) = self.contexts.get_mut(&id) else {
            return;
        };
        while let Some((sub, ts)) = ctx.ring.front_mut() {
            let ts = *ts;
            match ctx.cp.run(sub, &self.mem, self.compute.as_mut()) {
                Ok(RunOutcome::Parked) => return,
                Ok(RunOutcome::Done) => {
                    ctx.ring.pop_front();
                    if ctx.ring.front().is_none_or(|(_, next)| *next != ts) {
                        ctx.retired = ts;
                    }
                }
                Err(e) => {
                    let text = e.to_string();
                    self.fault_log.report(id, &text);
                    ctx.fault = Some(text);
                    ctx.ring.clear();
                    return;
                }
            }
        }
        ctx.retired = ctx.submitted;
    }

    fn wait_timestamp(&mut self, a: &mut WaitTimestamp) -> Result<(), Errno> {
        let _t = profile::start(Phase::Wait);
        let id = a.context_id;
        if !self.contexts.contains_key(&id) {
            return Err(libc::EINVAL);
        }
        let deadline = Instant::now() + WAIT_RETRY;
        loop {
            self.refresh_memory();
            self.drain(id);
            let ctx = self.contexts.get(&id).ok_or(libc::EINVAL)?;
            if ctx.fault.is_some() {
                return Err(libc::EDEADLK);
            }
            let done = ctx.retired.wrapping_sub(a.timestamp) as i32 >= 0;
            if done || Instant::now() >= deadline {
                return Ok(());
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn read_timestamp(&mut self, a: &mut ReadTimestamp) -> Result<(), Errno> {
        let ctx = self.contexts.get(&a.context_id).ok_or(libc::EINVAL)?;
        a.timestamp = match a.type_ {
            CMDSTREAM_TIMESTAMP_RETIRED | 1 => ctx.retired,
            _ => return Err(libc::EINVAL),
        };
        Ok(())
    }

    /// Appends each context fault to `path` as well (`None`: stderr only); the
    /// default comes from [`super::fault_log::FAULT_LOG_ENV`].
    pub fn set_fault_log(&mut self, path: Option<std::path::PathBuf>) {
        self.fault_log = FaultLog::new(path);
    }

    /// The stored fault of a context, if a submission failed.
    pub fn context_fault(&self, context_id: u32) -> Option<&str> {
        self.contexts
            .get(&context_id)
            .and_then(|c| c.fault.as_deref())
    }
}

impl Drop for KgslDevice {
    fn drop(&mut self) {
        if profile::enabled() {
            eprint!("{}", profile::report());
        }
    }
}

/// Writes `DIR/kgsl-<pid>-<n>.wjcap` for `WAVEJIT_KGSL_CAPTURE=DIR`.
fn capture_submission(
    dir: &std::path::Path,
    mem: &AddressSpace,
    subs: &[Submission],
    cp: &CommandProcessor,
) {
    use std::sync::atomic::{AtomicU32, Ordering};
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let ibs = subs.iter().filter_map(Submission::ib).collect();
    let cap = super::capture::Capture::take(mem, ibs, cp);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("kgsl-{}-{n:04}.wjcap", std::process::id()));
    if let Err(e) = cap.save(&path) {
        eprintln!("wavejit kgsl: cannot write capture {}: {e}", path.display());
    }
}
