//! The driver proper: objects in a memfd, contexts with in-order rings, and the
//! ioctls a compute client uses, with the real driver's errno for bad input.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use super::fault_log::FaultLog;
use super::maps::{self, Vma};
use super::pm4::{CommandProcessor, ComputeUnit, RunOutcome, Submission};
use super::profile::{self, Phase};
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
    /// The device's own shared mapping of the object's pages. Every GPU access
    /// to the object goes through it, whatever client address it was made at, so
    /// a client that unmaps or remaps its own view between two re-reads of its
    /// mappings can never make the GPU touch memory that is gone. It is also the
    /// GPU address of objects without USE_CPU_MAP.
    view: NonNull<u8>,
}

impl GpuObject {
    fn view_addr(&self) -> u64 {
        self.view.as_ptr() as u64
    }

    fn gpu_writable(&self) -> bool {
        self.flags & MEMFLAGS_GPUREADONLY == 0
    }
}

// SAFETY: `view` is the device's own shared mapping, used only under its lock.
unsafe impl Send for GpuObject {}

/// A MAP_USER_MEM range.
struct UserMap {
    len: u64,
    /// Mapped with KGSL_MEMFLAGS_GPUREADONLY: GPU writes to it fault.
    gpu_readonly: bool,
    /// How many MAP_USER_MEM calls returned this address (each is freed once).
    count: u32,
    /// Seen no longer mapped in full: the GPU may not use it any more (a later
    /// mapping in the hole must not receive GPU writes); it stays only until
    /// SHAREDMEM_FREE.
    dead: bool,
}

/// A range registered in the checked address space: GPU address, length, host
/// address behind it and whether the GPU may write it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Region {
    start: u64,
    len: u64,
    host: u64,
    writable: bool,
}

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
    user_maps: BTreeMap<u64, UserMap>,
    contexts: BTreeMap<u32, Context>,
    next_context: u32,
    mem: AddressSpace,
    /// What `mem` holds, as last registered from the client's mappings.
    live_regions: BTreeSet<Region>,
    /// An object or MAP_USER_MEM range appeared since the client's mappings were
    /// last read: the next submission or wait re-reads them.
    stale: bool,
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
            live_regions: BTreeSet::new(),
            stale: false,
            compute,
            fault_log: FaultLog::from_env(),
        })
    }

    /// The memfd whose pages back every object (a client maps object `id` at
    /// offset `id << 12`).
    pub fn memfd(&self) -> RawFd {
        self.memfd.as_raw_fd()
    }

    /// The checked address space kernels run against (see [`Self::refresh_memory`]
    /// for when it is brought up to date with the client's mappings).
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
            IOCTL_SHAREDMEM_FREE => self.with::<SharedmemFree>(arg, Self::sharedmem_free),
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
        // SAFETY: maps our memfd's pages for this object; unmapped on free or drop.
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
        let view = match NonNull::new(p.cast::<u8>()) {
            Some(v) if p != libc::MAP_FAILED => v,
            _ => return Err(libc::ENOMEM),
        };
        self.next_page += pages;
        let id = page as u32;
        let obj = GpuObject {
            page,
            size,
            flags,
            view,
        };
        if flags & MEMFLAGS_USE_CPU_MAP == 0 {
            // Its GPU address is the view: usable without any client mapping.
            self.register(Region {
                start: obj.view_addr(),
                len: size,
                host: obj.view_addr(),
                writable: obj.gpu_writable(),
            });
        }
        self.objects.insert(id, obj);
        // The client maps it next, at an address only /proc/self/maps tells.
        self.stale = true;
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
        a.gpuaddr = match self.objects.get(&id) {
            Some(o) if o.flags & MEMFLAGS_USE_CPU_MAP == 0 => o.view_addr(),
            _ => 0,
        };
        Ok(())
    }

    fn free_object(&mut self, id: u32) -> Result<(), Errno> {
        if !self.objects.contains_key(&id) {
            return Err(libc::EINVAL);
        }
        // A mapping not registered yet would not be remembered as freed (a
        // later access would say "unmapped", not use-after-free).
        if self.stale {
            self.refresh_memory();
        }
        let obj = self.objects.remove(&id).ok_or(libc::EINVAL)?;
        // Every GPU address of the object leaves the address space (remembered
        // as freed, so a later access reports use-after-free); they are known
        // by their host side, the view, so no re-read of the mappings is needed.
        let (v0, v1) = (obj.view_addr(), obj.view_addr() + obj.size);
        let gone: Vec<Region> = self
            .live_regions
            .iter()
            .filter(|r| (v0..v1).contains(&r.host))
            .copied()
            .collect();
        for r in gone {
            self.unregister(r);
        }
        // SAFETY: the view was mapped by alloc_object with this size, and no
        // registered region points into it any more (dispatches run
        // synchronously under the device's lock, so none holds it).
        unsafe { libc::munmap(obj.view.as_ptr().cast(), obj.size as usize) };
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
        Ok(())
    }

    fn gpuobj_free(&mut self, a: &mut GpuobjFree) -> Result<(), Errno> {
        self.free_object(a.id)
    }

    fn gpuobj_info(&mut self, a: &mut GpuobjInfo) -> Result<(), Errno> {
        let obj = self.objects.get(&a.id).ok_or(libc::EINVAL)?;
        let gpuaddr = if obj.flags & MEMFLAGS_USE_CPU_MAP == 0 {
            obj.view_addr()
        } else {
            self.client_address_of(obj).unwrap_or(0)
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
        let end = a.hostptr.checked_add(a.len).ok_or(libc::EINVAL)?;
        let gpu_readonly = u64::from(a.flags) & MEMFLAGS_GPUREADONLY != 0;
        let vmas = maps::current();
        // As kgsl's memdesc_sg_virt: check_vma refuses a range that maps the
        // device's own memory (EFAULT); get_user_pages then pins pages in order
        // and stops at the first one that is unmapped, not readable, or read-only
        // while the GPU may write it (no GPUREADONLY). Stopping at the first page
        // returns its EFAULT; stopping later pins fewer pages than asked, which
        // kgsl turns into EINVAL.
        let mut pinned = a.hostptr;
        let mut stopped = false;
        for (s, e, v) in maps::covering(&vmas, a.hostptr, a.len) {
            if self.is_device_memory(v) {
                return Err(libc::EFAULT);
            }
            stopped |= s != pinned || !v.readable || (!v.writable && !gpu_readonly);
            if !stopped {
                pinned = e;
            }
        }
        if pinned == a.hostptr {
            return Err(libc::EFAULT);
        }
        if pinned < end {
            return Err(libc::EINVAL);
        }
        // GPU addresses are CPU addresses here, so mapping a range again (real
        // KGSL gives it a second GPU address) returns the same one; the range
        // stays until each mapping of it is freed.
        let m = self.user_maps.entry(a.hostptr).or_insert(UserMap {
            len: a.len,
            gpu_readonly,
            count: 0,
            dead: false,
        });
        if m.dead {
            // Mapped in full again: a fresh range.
            (m.len, m.gpu_readonly, m.dead) = (a.len, gpu_readonly, false);
        }
        m.len = m.len.max(a.len);
        m.gpu_readonly &= gpu_readonly;
        m.count = m.count.saturating_add(1);
        self.stale = true;
        a.gpuaddr = a.hostptr;
        Ok(())
    }

    fn sharedmem_free(&mut self, a: &mut SharedmemFree) -> Result<(), Errno> {
        let m = self.user_maps.get_mut(&a.gpuaddr).ok_or(libc::EINVAL)?;
        m.count -= 1;
        if m.count > 0 {
            return Ok(());
        }
        let m = self.user_maps.remove(&a.gpuaddr).ok_or(libc::EINVAL)?;
        let range = a.gpuaddr..a.gpuaddr + m.len;
        let gone: Vec<Region> = self
            .live_regions
            .iter()
            .filter(|r| r.host == r.start && range.contains(&r.start))
            .copied()
            .collect();
        for r in gone {
            self.unregister(r);
        }
        Ok(())
    }

    /// Whether `v` maps this device's memfd (an object view, ours or the client's).
    fn is_device_memory(&self, v: &Vma) -> bool {
        let (major, minor, ino) = self.memfd_id;
        v.maps_file(major, minor, ino)
    }

    /// Client address of an object's first byte, if the client has it mapped
    /// (the device's own view does not count).
    fn client_address_of(&self, obj: &GpuObject) -> Option<u64> {
        let start = obj.page * PAGE;
        maps::current()
            .into_iter()
            .find(|v| {
                self.is_device_memory(v)
                    && v.offset <= start
                    && start < v.offset + (v.end - v.start)
                    && v.start + (start - v.offset) != obj.view_addr()
            })
            .map(|v| v.start + (start - v.offset))
    }

    /// The objects whose pages overlap memfd bytes `f0..f1`, in order.
    fn objects_in(&self, f0: u64, f1: u64) -> impl Iterator<Item = &GpuObject> {
        let lo = u32::try_from(f0 / PAGE).unwrap_or(u32::MAX);
        let hi = u32::try_from(f1.div_ceil(PAGE)).unwrap_or(u32::MAX);
        let head = self
            .objects
            .range(..lo)
            .next_back()
            .map(|(_, o)| o)
            .filter(|o| o.page * PAGE + o.size > f0);
        head.into_iter()
            .chain(self.objects.range(lo..hi).map(|(_, o)| o))
    }

    /// Registers `r` in the checked address space (and remembers it).
    fn register(&mut self, r: Region) {
        let Some(host) = NonNull::new(r.host as *mut u8) else {
            return;
        };
        // SAFETY: `host` is an object's view (mapped until the object is freed,
        // which unregisters it first) or a client range that /proc/self/maps
        // showed mapped with these permissions just now; user ranges are
        // re-checked before every submission runs (see refresh_memory).
        if unsafe { self.mem.register(r.start, host, r.len, r.writable) }.is_ok() {
            self.live_regions.insert(r);
        }
    }

    fn unregister(&mut self, r: Region) {
        if self.live_regions.remove(&r) {
            let _ = self.mem.free(r.start);
        }
    }

    /// Whether the mappings must be re-read before GPU work runs: something
    /// appeared since the last read, or a MAP_USER_MEM range exists (its pages
    /// are the client's own, which it may unmap or protect at any time; object
    /// accesses go through the device's views and cannot touch unmapped memory).
    fn needs_refresh(&self) -> bool {
        self.stale || self.user_maps.values().any(|m| !m.dead)
    }

    /// Rebuilds the checked address space from what the client has mapped now
    /// (one read of /proc/self/maps): every readable client mapping of a live
    /// object, clipped to the object, with the mapping's write permission; the
    /// views of objects without USE_CPU_MAP; and the pieces of each MAP_USER_MEM
    /// range with their permissions. A PROT_NONE piece is not registered, a
    /// read-only one is registered read-only, so GPU accesses the CPU could not
    /// make fault the context instead of the host. A user range no longer mapped
    /// in full (a hole, or the device's memory mapped into it) is dropped: a
    /// later mapping in the hole must not receive GPU writes.
    ///
    /// Runs when an object or user range appeared since the last read, whenever
    /// user ranges exist, and when a submission's IB is not covered; not on
    /// every submission (see README, "KGSL client memory").
    pub fn refresh_memory(&mut self) {
        let _t = profile::start(Phase::Refresh);
        let vmas = maps::current();
        let memfd = self.memfd_id;
        let mut want: Vec<Region> = Vec::new();
        for v in vmas
            .iter()
            .filter(|v| v.readable && self.is_device_memory(v))
        {
            let (f0, f1) = (v.offset, v.offset + (v.end - v.start));
            for obj in self.objects_in(f0, f1) {
                let o0 = obj.page * PAGE;
                let (s, e) = (o0.max(f0), (o0 + obj.size).min(f1));
                let (start, host) = (v.start + (s - f0), obj.view_addr() + (s - o0));
                if start == host {
                    continue; // the device's own view
                }
                want.push(Region {
                    start,
                    len: e - s,
                    host,
                    writable: v.writable && obj.gpu_writable(),
                });
            }
        }
        for obj in self.objects.values() {
            if obj.flags & MEMFLAGS_USE_CPU_MAP == 0 {
                want.push(Region {
                    start: obj.view_addr(),
                    len: obj.size,
                    host: obj.view_addr(),
                    writable: obj.gpu_writable(),
                });
            }
        }
        for (&addr, m) in self.user_maps.iter_mut().filter(|(_, m)| !m.dead) {
            let mut pieces: Vec<Region> = Vec::new();
            let mut covered = addr;
            for (s, e, v) in maps::covering(&vmas, addr, m.len) {
                if s != covered || v.maps_file(memfd.0, memfd.1, memfd.2) {
                    break;
                }
                covered = e;
                if !v.readable {
                    continue;
                }
                let writable = v.writable && !m.gpu_readonly;
                match pieces.last_mut() {
                    Some(p) if p.start + p.len == s && p.writable == writable => p.len += e - s,
                    _ => pieces.push(Region {
                        start: s,
                        len: e - s,
                        host: s,
                        writable,
                    }),
                }
            }
            if covered == addr + m.len {
                want.extend(pieces);
            } else {
                m.dead = true;
            }
        }
        let want: BTreeSet<Region> = want.into_iter().collect();
        let gone: Vec<Region> = self.live_regions.difference(&want).copied().collect();
        for r in gone {
            self.unregister(r);
        }
        for r in want {
            if !self.live_regions.contains(&r) {
                self.register(r);
            }
        }
        self.stale = false;
    }

    /// Whether the checked address space holds all of IB `s`.
    fn covers(&self, s: &Submission) -> bool {
        s.ib().is_none_or(|(addr, dwords)| {
            self.mem
                .allocation_of(addr)
                .is_some_and(|(a, len)| addr + 4 * u64::from(dwords) <= a + len)
        })
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
        // An IB in a mapping made since the last read (without an allocation in
        // between) is found by a re-read rather than faulting.
        if self.needs_refresh() || !subs.iter().all(|s| self.covers(s)) {
            self.refresh_memory();
        }
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
            if self.needs_refresh() {
                self.refresh_memory();
            }
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
        // Nothing may point into the views once they are unmapped.
        for r in std::mem::take(&mut self.live_regions) {
            let _ = self.mem.free(r.start);
        }
        for obj in self.objects.values() {
            // SAFETY: mapped by alloc_object with this size; no region refers to it.
            unsafe { libc::munmap(obj.view.as_ptr().cast(), obj.size as usize) };
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
