//! One entry point for embedders: a [`Device`] loads programs of every ISA
//! wavejit runs (ir3, AGX, RV32, and the IR's own text form), allocates
//! buffers, launches kernels and reads results back.
//!
//! ```
//! use wavejit::{Device, Launch};
//!
//! # fn main() -> Result<(), wavejit::Error> {
//! let dev = Device::new();
//! // buf[i] *= 2 for i = the global lane index; the buffer's address is
//! // the first argument (uniform bytes 0..8).
//! let kernel = dev.load_ir_text(
//!     "kernel @double shared 0 private 0 {
//!      block0:
//!        v0 = local_index
//!        v1 = workgroup_id.x
//!        v2 = workgroup_size.x
//!        v3 = imul.i32 v1, v2
//!        v4 = iadd.i32 v3, v0
//!        v5 = const.i32 0
//!        v6 = load.uniform.i64 v5
//!        v7 = zext.i32.i64 v4
//!        v8 = const.i64 2
//!        v9 = shl.i64 v7, v8
//!        v10 = iadd.i64 v6, v9
//!        v11 = load.global.i32 v10
//!        v12 = iadd.i32 v11, v11
//!        store.global.i32 v10, v12
//!        exit
//!      }",
//! )?;
//! let buf = dev.upload(&[1u32, 2, 3, 4])?;
//! dev.launch(&kernel, &Launch::new(1, 4).buffer(&buf))?;
//! assert_eq!(dev.read::<u32>(&buf)?, [2, 4, 6, 8]);
//! # Ok(())
//! # }
//! ```
//!
//! # Kernel arguments
//! A [`Launch`] lists arguments in order; each is placed at the next offset
//! aligned to its size (buffers are pointers: 8 bytes, 4 on RV32). Where the
//! bytes go depends on the ISA:
//! - IR text: the uniform space from byte 0 (`uniform.load`).
//! - ir3: the const file from `c0.x` (a buffer is a const pair, e.g. `c0.xy`).
//! - AGX: the uniform file from `u0l`, so buffer `i` (first) is `u(2i)_u(2i+1)`
//!   as Metal binds `buffer(i)`.
//! - RV32: the device's cores get no argument pointer, so the bytes are written
//!   to the program's argument block ([`Rv32Options::args_at`]) before the launch.
//!
//! # Addresses
//! Buffers live below 4 GiB (a window from [`BUFFER_WINDOW_START`]), so an
//! address is a valid pointer for every ISA, RV32's 32-bit cores included.
//! RV32 images are placed at their own addresses.

#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::error::{Error, KernelFault};
use crate::frontend::rv32::lift::TrapSite;
use crate::frontend::{agx, ir3, rv32};
use crate::ir::dispatch::{Budget, DEFAULT_STEP_LIMIT};
use crate::ir::{Dispatch, Engine, Kernel};
use crate::runtime::AddressSpace;

/// First address of the buffer window ([`Device::alloc`]); below it is free
/// for RV32 images and [`Device::alloc_at`].
pub const BUFFER_WINDOW_START: u64 = 0x4000_0000;
/// RV32's thread-ID window (`0x8000_0000..0x8000_1000`): loads there read
/// IDs, so no buffer is placed in it.
const ID_WINDOW: (u64, u64) = (0x8000_0000, 0x8001_0000);
/// The ranges buffers are placed in (below 4 GiB, around the ID window).
const WINDOWS: [(u64, u64); 2] = [
    (BUFFER_WINDOW_START, ID_WINDOW.0),
    (ID_WINDOW.1, 0xffff_0000),
];
/// Buffers start on this boundary.
const ALIGN: u64 = 256;
/// Most bytes of an RV32 image in memory (its segments' sizes come from the
/// file and are checked before anything is allocated for them).
pub const MAX_RV32_IMAGE_BYTES: u64 = 256 << 20;
/// Default RV32 argument block size ([`Rv32Options::args_size`]).
const DEFAULT_ARGS_SIZE: u32 = 256;

/// The instruction sets a [`Program`] can be in.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// The wavejit IR in its text form.
    Ir,
    /// Qualcomm Adreno a6xx (a630) ir3.
    Ir3,
    /// Apple G13 (AGX).
    Agx,
    /// The RV32IMF SIMT GPGPU device.
    Rv32,
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Isa::Ir => "ir",
            Isa::Ir3 => "ir3",
            Isa::Agx => "agx",
            Isa::Rv32 => "rv32",
        })
    }
}

/// Which engine runs kernels.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum EngineKind {
    /// The Cranelift JIT (default).
    #[default]
    Jit,
    /// The golden interpreter (slow; the reference the JIT is tested against).
    Interpreter,
}

/// How much a launch may do before it faults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Per-lane watchdog: blocks entered (IR, ir3, AGX) or instructions
    /// retired (RV32, whose lifted code counts them exactly, so the limit is
    /// taken when the program is loaded); over it the lane faults.
    /// `u64::MAX`: no limit. Default 2^24.
    pub steps_per_lane: u64,
    /// Wall-clock limit of one launch; `None`: none. Default 30 s, or
    /// `WAVEJIT_DISPATCH_TIME_LIMIT_MS`.
    pub time_limit: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            steps_per_lane: DEFAULT_STEP_LIMIT,
            time_limit: Budget::from_env().time_limit,
        }
    }
}

/// Launch facts of an a630 compute kernel that the code itself does not
/// carry (the driver programs them into HLSQ/SP registers). The defaults are
/// what mesa's compute shaders (and tinygrad's) use.
///
/// Kernels read buffers through 64-bit addresses in the const file
/// (`ldg`/`stg`); no texture, sampler, IBO or UBO descriptors are loaded (the
/// AQL ir3 backend's model; replay a KGSL capture for kernels that use them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ir3Options {
    /// Lanes per wave: 64 (default) or 128 (a6xx THREADSIZE).
    pub wave_size: u32,
    /// regid receiving the local id x,y,z (default 0: `r0.x`).
    pub local_id_regid: u32,
    /// regid receiving the workgroup id x,y,z (default 0xc0: `r48.x`).
    pub workgroup_id_regid: u32,
    /// regid receiving the linear local id (default 0xfc: none).
    pub linear_local_id_regid: u32,
    /// Private (ldp/stp) bytes per fiber (default 0).
    pub private_size: u32,
    /// Workgroup-local (ldl/stl) bytes (default 0).
    pub shared_size: u32,
    /// Half registers alias full ones (SP_CS_CNTL_0.MERGEDREGS; default on).
    pub merged_regs: bool,
    /// `hcN` reads 32-bit `cN` and converts (default on).
    pub const_demotion: bool,
    /// SP_CS_BOOLEAN_CF_MASK: bit N is the condition of every `brac.N`.
    pub boolean_cf_mask: u32,
}

impl Default for Ir3Options {
    fn default() -> Ir3Options {
        let cfg = crate::runtime::aql::isa::ir3::lift_config(0, 0);
        Ir3Options {
            wave_size: 64,
            local_id_regid: cfg.local_id_regid,
            workgroup_id_regid: cfg.workgroup_id_regid,
            linear_local_id_regid: cfg.linear_local_id_regid,
            private_size: 0,
            shared_size: 0,
            merged_regs: cfg.merged_regs,
            const_demotion: cfg.const_demotion,
            boolean_cf_mask: 0,
        }
    }
}

/// How to load an AGX program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgxOptions {
    /// Byte offset of the first instruction (default 0).
    pub entry: u64,
    /// Threadgroup memory bytes (default 0).
    pub threadgroup_memory: u32,
    /// Allocated registers, 1..=128 (default 128).
    pub gpr_count: u32,
}

impl Default for AgxOptions {
    fn default() -> AgxOptions {
        AgxOptions {
            entry: 0,
            threadgroup_memory: 0,
            gpr_count: 128,
        }
    }
}

/// How to load an RV32 program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rv32Options {
    /// Load address (and entry) of a raw image; ELF files carry their own.
    pub base: u32,
    /// Address of the argument block the kernel reads its arguments from, if
    /// it takes any (the device passes none in registers).
    pub args_at: Option<u32>,
    /// Bytes allocated for the argument block when no segment of the image
    /// holds it (default 256).
    pub args_size: u32,
}

impl Default for Rv32Options {
    fn default() -> Rv32Options {
        Rv32Options {
            base: 0,
            args_at: None,
            args_size: DEFAULT_ARGS_SIZE,
        }
    }
}

/// A device allocation: its address and size. A plain handle (copy it
/// freely); [`Device::free`] releases the memory, the device's drop all of it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Buffer {
    device: u64,
    addr: u64,
    len: u64,
}

impl Buffer {
    /// The device address (what kernels receive as the pointer).
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Always false: allocations have at least one byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Values buffers and arguments are made of: fixed-size little-endian numbers.
pub trait Element: Copy + sealed::Sealed {
    /// Bytes per element.
    const SIZE: usize;
    /// Appends the little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Reads one from the first [`Element::SIZE`] bytes (`None` if fewer).
    fn get(bytes: &[u8]) -> Option<Self>;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Option<$t> {
                let a = bytes.get(..Self::SIZE)?.try_into().ok()?;
                Some(<$t>::from_le_bytes(a))
            }
        }
    )*};
}
element!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// Grid or block dimensions; missing ones are 1 (`4`, `[4, 2]`, `[4, 2, 1]`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Dims(pub [u32; 3]);

impl From<u32> for Dims {
    fn from(x: u32) -> Dims {
        Dims([x, 1, 1])
    }
}

impl From<[u32; 2]> for Dims {
    fn from([x, y]: [u32; 2]) -> Dims {
        Dims([x, y, 1])
    }
}

impl From<[u32; 3]> for Dims {
    fn from(d: [u32; 3]) -> Dims {
        Dims(d)
    }
}

#[derive(Clone, Debug)]
enum Arg {
    Buffer(Buffer),
    Value { bytes: Vec<u8>, align: usize },
}

/// One kernel launch: the grid (workgroups, RV32 blocks, AGX threadgroups),
/// the block (lanes per workgroup) and the kernel arguments in order.
#[derive(Clone, Debug)]
pub struct Launch {
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<Arg>,
}

impl Launch {
    /// A launch of `grid` workgroups of `block` lanes, no arguments yet.
    pub fn new(grid: impl Into<Dims>, block: impl Into<Dims>) -> Launch {
        Launch {
            grid: grid.into().0,
            block: block.into().0,
            args: Vec::new(),
        }
    }

    /// Appends a buffer's address (8 bytes; 4 on RV32).
    pub fn buffer(mut self, buffer: &Buffer) -> Launch {
        self.args.push(Arg::Buffer(*buffer));
        self
    }

    /// Appends a scalar, aligned to its size.
    pub fn value<T: Element>(mut self, value: T) -> Launch {
        let mut bytes = Vec::with_capacity(T::SIZE);
        value.put(&mut bytes);
        self.args.push(Arg::Value {
            bytes,
            align: T::SIZE,
        });
        self
    }

    /// Appends raw bytes, 4-byte aligned (a struct argument, const data).
    pub fn bytes(mut self, bytes: &[u8]) -> Launch {
        self.args.push(Arg::Value {
            bytes: bytes.to_vec(),
            align: 4,
        });
        self
    }

    /// The argument bytes with pointers of `ptr` bytes (4: RV32's cores).
    fn encode(&self, device: u64, isa: Isa, ptr: usize) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        for a in &self.args {
            let (bytes, align) = match a {
                Arg::Buffer(b) => {
                    if b.device != device {
                        return Err(Error::ForeignHandle { what: "buffer" });
                    }
                    if ptr < 8 && b.addr >> (8 * ptr) != 0 {
                        return Err(Error::InvalidOption {
                            isa,
                            what: format!(
                                "buffer at {:#x} lies beyond the {}-bit address space",
                                b.addr,
                                8 * ptr
                            ),
                        });
                    }
                    (b.addr.to_le_bytes()[..ptr].to_vec(), ptr)
                }
                Arg::Value { bytes, align } => (bytes.clone(), *align),
            };
            out.resize(out.len().next_multiple_of(align), 0);
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }
}

/// What a loaded program needs at launch besides its kernel, by ISA.
#[derive(Debug)]
enum Extra {
    Ir,
    Ir3 {
        wave_size: u32,
    },
    Agx {
        /// The program's bytes, to name the instruction of a trap.
        code: Vec<u8>,
    },
    Rv32 {
        traps: Vec<TrapSite>,
        args: Option<(u32, u32)>,
        /// Allocations made for the image and the argument block.
        placed: Vec<u64>,
    },
}

/// A program lifted (or parsed) and verified, ready to launch on the device
/// that loaded it.
#[derive(Debug)]
pub struct Program {
    device: u64,
    isa: Isa,
    kernel: Kernel,
    extra: Extra,
}

impl Program {
    /// The program's ISA.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// The IR kernel the program was lifted to (print it with
    /// `wavejit::ir::text::print`).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}

/// What a device allocation is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Use {
    Buffer,
    Program,
}

/// An emulated GPU: checked device memory and an engine (the JIT by default).
/// Every method takes `&self`; a device can be shared between threads.
pub struct Device {
    id: u64,
    mem: AddressSpace,
    engine: Box<dyn Engine + Send + Sync>,
    limits: Limits,
    /// Device-made allocations by address: (bytes, use).
    allocs: Mutex<BTreeMap<u64, (u64, Use)>>,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("engine", &self.engine.name())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Default for Device {
    fn default() -> Device {
        Device::new()
    }
}

impl Device {
    /// A device running kernels on the JIT with the default [`Limits`].
    pub fn new() -> Device {
        Device::with_engine(EngineKind::Jit, Limits::default())
    }

    /// A device with the given engine and limits.
    pub fn with_engine(engine: EngineKind, limits: Limits) -> Device {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let engine: Box<dyn Engine + Send + Sync> = match engine {
            EngineKind::Jit => Box::new(crate::jit::Jit::default()),
            EngineKind::Interpreter => Box::new(crate::ir::interp::Interpreter::new()),
        };
        Device {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            mem: AddressSpace::new(),
            engine,
            limits,
            allocs: Mutex::new(BTreeMap::new()),
        }
    }

    /// The limits launches run under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The device memory (for what the facade does not cover, e.g. running a
    /// [`Kernel`] of your own with a [`crate::ir::Engine`]).
    pub fn memory(&self) -> &AddressSpace {
        &self.mem
    }

    fn allocs(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, (u64, Use)>> {
        // The map is consistent after every statement: a panic elsewhere
        // while it was held leaves nothing half done.
        self.allocs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Allocates `bytes` zeroed bytes in the buffer window.
    pub fn alloc(&self, bytes: u64) -> Result<Buffer, Error> {
        if bytes == 0 {
            return Err(crate::runtime::MemError::ZeroSize.into());
        }
        let mut allocs = self.allocs();
        let addr = place(&allocs, bytes).ok_or_else(|| Error::OutOfMemory {
            bytes,
            used: allocs.values().map(|(l, _)| l).sum(),
            window: WINDOWS.iter().map(|(lo, hi)| hi - lo).sum(),
        })?;
        self.mem.alloc_at(addr, bytes)?;
        allocs.insert(addr, (bytes, Use::Buffer));
        Ok(self.handle(addr, bytes))
    }

    /// Allocates `bytes` zeroed bytes at a fixed address (for kernels built to
    /// use fixed addresses, as RV32 device kernels often are).
    pub fn alloc_at(&self, addr: u64, bytes: u64) -> Result<Buffer, Error> {
        let mut allocs = self.allocs();
        self.mem.alloc_at(addr, bytes)?;
        allocs.insert(addr, (bytes, Use::Buffer));
        Ok(self.handle(addr, bytes))
    }

    /// Allocates a buffer holding `values`.
    pub fn upload<T: Element>(&self, values: &[T]) -> Result<Buffer, Error> {
        let bytes = to_bytes(values);
        let buf = self.alloc(bytes.len().max(1) as u64)?;
        self.mem.write_bytes(buf.addr, &bytes)?;
        Ok(buf)
    }

    fn handle(&self, addr: u64, len: u64) -> Buffer {
        Buffer {
            device: self.id,
            addr,
            len,
        }
    }

    fn check(&self, buf: &Buffer) -> Result<(), Error> {
        let live =
            buf.device == self.id && self.allocs().get(&buf.addr) == Some(&(buf.len, Use::Buffer));
        if live {
            Ok(())
        } else {
            Err(Error::ForeignHandle { what: "buffer" })
        }
    }

    fn range(&self, buf: &Buffer, what: &'static str, offset: u64, len: u64) -> Result<(), Error> {
        self.check(buf)?;
        if offset.checked_add(len).is_none_or(|end| end > buf.len) {
            return Err(Error::OutOfBounds {
                what,
                addr: buf.addr,
                size: buf.len,
                offset,
                len,
            });
        }
        Ok(())
    }

    /// Frees a buffer.
    pub fn free(&self, buf: Buffer) -> Result<(), Error> {
        self.check(&buf)?;
        self.allocs().remove(&buf.addr);
        Ok(self.mem.free(buf.addr)?)
    }

    /// Writes `values` at the start of `buf`.
    pub fn write<T: Element>(&self, buf: &Buffer, values: &[T]) -> Result<(), Error> {
        self.write_bytes(buf, 0, &to_bytes(values))
    }

    /// Writes `bytes` at byte `offset` of `buf`.
    pub fn write_bytes(&self, buf: &Buffer, offset: u64, bytes: &[u8]) -> Result<(), Error> {
        self.range(buf, "write", offset, bytes.len() as u64)?;
        Ok(self.mem.write_bytes(buf.addr + offset, bytes)?)
    }

    /// The whole buffer as elements of `T` (trailing bytes short of one
    /// element are left out).
    pub fn read<T: Element>(&self, buf: &Buffer) -> Result<Vec<T>, Error> {
        Ok(self
            .read_bytes(buf, 0, buf.len)?
            .chunks_exact(T::SIZE)
            .filter_map(T::get)
            .collect())
    }

    /// `len` bytes at byte `offset` of `buf`.
    pub fn read_bytes(&self, buf: &Buffer, offset: u64, len: u64) -> Result<Vec<u8>, Error> {
        self.range(buf, "read", offset, len)?;
        let n = usize::try_from(len).map_err(|_| Error::OutOfBounds {
            what: "read",
            addr: buf.addr,
            size: buf.len,
            offset,
            len,
        })?;
        Ok(self.mem.read_bytes(buf.addr + offset, n)?)
    }

    /// Loads a program with its ISA's default options: ir3 = little-endian
    /// 64-bit words, AGX = raw instruction bytes, RV32 = a raw image at 0 or an
    /// ELF executable, IR = UTF-8 text.
    pub fn load(&self, isa: Isa, code: &[u8]) -> Result<Program, Error> {
        match isa {
            Isa::Ir3 => self.load_ir3(code, &Ir3Options::default()),
            Isa::Agx => self.load_agx(code, &AgxOptions::default()),
            Isa::Rv32 => self.load_rv32(code, &Rv32Options::default()),
            Isa::Ir => {
                let text = std::str::from_utf8(code).map_err(|e| {
                    Error::Parse(crate::ir::text::ParseError {
                        line: 1,
                        col: 1,
                        message: format!("not UTF-8: {e}"),
                    })
                })?;
                self.load_ir_text(text)
            }
        }
    }

    fn program(&self, isa: Isa, kernel: Kernel, extra: Extra) -> Result<Program, Error> {
        // Engines verify too, but a load that succeeds should mean a launch
        // can run: a lifter bug surfaces here, naming the kernel.
        crate::ir::verify::verify(&kernel)?;
        Ok(Program {
            device: self.id,
            isa,
            kernel,
            extra,
        })
    }

    /// Parses and verifies a kernel in the IR text form.
    pub fn load_ir_text(&self, text: &str) -> Result<Program, Error> {
        let kernel = crate::ir::text::parse(text)?;
        self.program(Isa::Ir, kernel, Extra::Ir)
    }

    /// Lifts an a630 ir3 compute kernel: `code` is its 64-bit little-endian
    /// instruction words, the first one the entry.
    pub fn load_ir3(&self, code: &[u8], options: &Ir3Options) -> Result<Program, Error> {
        if !code.len().is_multiple_of(8) || code.is_empty() {
            return Err(Error::CodeLength {
                isa: Isa::Ir3,
                len: code.len(),
                unit: 8,
            });
        }
        if !matches!(options.wave_size, 64 | 128) {
            return Err(Error::InvalidOption {
                isa: Isa::Ir3,
                what: format!("wave size {} (a630 runs 64 or 128)", options.wave_size),
            });
        }
        let words: Vec<u64> = code
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        let mut cfg =
            crate::runtime::aql::isa::ir3::lift_config(options.private_size, options.shared_size);
        cfg.merged_regs = options.merged_regs;
        cfg.const_demotion = options.const_demotion;
        cfg.local_id_regid = options.local_id_regid;
        cfg.workgroup_id_regid = options.workgroup_id_regid;
        cfg.linear_local_id_regid = options.linear_local_id_regid;
        cfg.boolean_cf_mask = options.boolean_cf_mask;
        let kernel = ir3::lift::lift(&words, &cfg)?;
        let extra = Extra::Ir3 {
            wave_size: options.wave_size,
        };
        self.program(Isa::Ir3, kernel, extra)
    }

    /// Lifts an AGX (G13) compute program from its raw instruction bytes.
    pub fn load_agx(&self, code: &[u8], options: &AgxOptions) -> Result<Program, Error> {
        let cfg = agx::lift::LiftConfig {
            name: format!("agx@{:#x}", options.entry),
            entry: options.entry,
            gpr_count: options.gpr_count,
            threadgroup_memory: options.threadgroup_memory,
            ..agx::lift::LiftConfig::default()
        };
        let kernel = agx::lift::lift(code, &cfg)?;
        let extra = Extra::Agx {
            code: code.to_vec(),
        };
        self.program(Isa::Agx, kernel, extra)
    }

    /// Loads an RV32 program (raw image at [`Rv32Options::base`], or an ELF
    /// executable): its segments go to device memory at their addresses, and
    /// the kernel is lifted from its entry. A word nothing decodes is not an
    /// error here: the lane that reaches it faults, naming it and its pc.
    pub fn load_rv32(&self, image: &[u8], options: &Rv32Options) -> Result<Program, Error> {
        let image = rv32::load_image(image, options.base)?;
        let total: u64 = image.segments.iter().map(|s| u64::from(s.mem_size)).sum();
        if total > MAX_RV32_IMAGE_BYTES {
            return Err(Error::ImageTooLarge {
                bytes: total,
                limit: MAX_RV32_IMAGE_BYTES,
            });
        }
        let fetch = |pc: u32| -> Option<u32> {
            image.code_segments().find_map(|s| {
                let off = usize::try_from(pc.checked_sub(s.vaddr)?).ok()?;
                if off.checked_add(4)? > s.mem_size as usize {
                    return None;
                }
                // Bytes past the file data are the zero fill.
                let mut w = [0u8; 4];
                for (i, b) in w.iter_mut().enumerate() {
                    *b = s.data.get(off + i).copied().unwrap_or(0);
                }
                Some(u32::from_le_bytes(w))
            })
        };
        let steps = self.limits.steps_per_lane;
        let opts = rv32::lift::LiftConfig {
            name: format!("rv32@{:#x}", image.entry),
            cycle_limit: (steps != u64::MAX).then(|| u32::try_from(steps).unwrap_or(u32::MAX)),
            ..rv32::lift::LiftConfig::default()
        };
        let lifted = rv32::lift::lift(&fetch, image.entry, &opts)?;
        // Lifted first: nothing is placed for a program that does not load.
        let mut placed = Vec::new();
        let result = self.place_rv32(&image, options, &mut placed);
        if let Err(e) = result {
            self.unplace(&placed);
            return Err(e);
        }
        let extra = Extra::Rv32 {
            traps: lifted.traps,
            args: options.args_at.map(|a| (a, options.args_size)),
            placed: placed.clone(),
        };
        self.program(Isa::Rv32, lifted.kernel, extra)
            .inspect_err(|_| {
                self.unplace(&placed);
            })
    }

    fn place_rv32(
        &self,
        image: &rv32::LoadedImage,
        options: &Rv32Options,
        placed: &mut Vec<u64>,
    ) -> Result<(), Error> {
        let mut allocs = self.allocs();
        for seg in image.segments.iter().filter(|s| s.mem_size > 0) {
            let addr = u64::from(seg.vaddr);
            self.mem.alloc_at(addr, u64::from(seg.mem_size))?;
            allocs.insert(addr, (u64::from(seg.mem_size), Use::Program));
            placed.push(addr);
            self.mem.write_bytes(addr, &seg.data)?;
        }
        if let Some(at) = options.args_at {
            let size = u64::from(options.args_size.max(1));
            let at = u64::from(at);
            let inside = image
                .segments
                .iter()
                .any(|s| u64::from(s.vaddr) <= at && at + size <= s.end());
            if !inside {
                self.mem.alloc_at(at, size)?;
                allocs.insert(at, (size, Use::Program));
                placed.push(at);
            }
        }
        Ok(())
    }

    fn unplace(&self, placed: &[u64]) {
        let mut allocs = self.allocs();
        for &a in placed {
            allocs.remove(&a);
            // Allocated by this device just before: freeing cannot fail.
            let _ = self.mem.free(a);
        }
    }

    /// Frees what loading `program` placed in device memory (an RV32 image
    /// and its argument block).
    pub fn unload(&self, program: Program) -> Result<(), Error> {
        if program.device != self.id {
            return Err(Error::ForeignHandle { what: "program" });
        }
        if let Extra::Rv32 { placed, .. } = &program.extra {
            self.unplace(placed);
        }
        Ok(())
    }

    /// Runs `program` over the launch's grid and waits for it. A kernel fault
    /// is [`Error::Fault`]; memory the kernel wrote before it stays written.
    pub fn launch(&self, program: &Program, launch: &Launch) -> Result<(), Error> {
        if program.device != self.id {
            return Err(Error::ForeignHandle { what: "program" });
        }
        for (what, dims) in [("grid", launch.grid), ("block", launch.block)] {
            if dims.contains(&0) {
                return Err(Error::ZeroDimension { what, dims });
            }
        }
        let isa = program.isa;
        let ptr = if isa == Isa::Rv32 { 4 } else { 8 };
        let args = launch.encode(self.id, isa, ptr)?;
        let too_large = |limit: u32, space: &'static str| Error::ArgsTooLarge {
            isa,
            len: args.len(),
            limit: limit as usize,
            space,
        };
        let mut d = Dispatch::new(launch.grid, launch.block);
        d.step_limit = self.limits.steps_per_lane;
        match &program.extra {
            Extra::Agx { .. } => {
                if args.len() > agx::lift::UNIFORM_FILE_BYTES as usize {
                    return Err(too_large(agx::lift::UNIFORM_FILE_BYTES, "uniform file"));
                }
                // AGX grids count threads: each dimension must fit 32 bits.
                let threads =
                    [0, 1, 2].map(|i| u64::from(launch.grid[i]) * u64::from(launch.block[i]));
                if let Some(t) = threads.iter().find(|&&t| t > u64::from(u32::MAX)) {
                    return Err(Error::InvalidOption {
                        isa,
                        what: format!("a grid of {t} threads in one dimension exceeds 2^32 - 1"),
                    });
                }
                let mut a = agx::lift::AgxDispatch::from_threadgroups(launch.grid, launch.block);
                a.set_uniform_file_bytes(&args);
                d.uniforms = a.dispatch()?.uniforms;
            }
            Extra::Ir => d.uniforms = args,
            Extra::Ir3 { wave_size } => {
                let consts = ir3::lift::CONST_BYTES;
                if args.len() > consts as usize {
                    return Err(too_large(consts, "const file"));
                }
                d.wave_size = *wave_size;
                d.uniforms = args;
                // Rest of the const file, then the (zero) descriptor bases of
                // a dispatch that binds no descriptor.
                let image = ir3::lift::DescriptorLayout::none().image_bytes();
                d.uniforms.resize(image as usize, 0);
            }
            Extra::Rv32 { args: block, .. } => {
                // The lifted instruction counter is the watchdog.
                d.step_limit = u64::MAX;
                match block {
                    _ if args.is_empty() => {}
                    Some((at, size)) => {
                        if args.len() > *size as usize {
                            return Err(too_large(*size, "argument block"));
                        }
                        self.mem.write_bytes(u64::from(*at), &args)?;
                    }
                    None => return Err(Error::NoArgBlock { len: args.len() }),
                }
            }
        }
        d.budget.time_limit = self.limits.time_limit;
        self.engine
            .run(&program.kernel, &d, &self.mem)
            .map_err(|fault| {
                let trap = match (&program.extra, &fault.kind) {
                    (Extra::Rv32 { traps, .. }, crate::ir::FaultKind::Trap { code }) => {
                        traps.get(*code as usize).copied()
                    }
                    _ => None,
                };
                let agx_trap = match &program.extra {
                    Extra::Agx { code } => agx::lift::TrapSite::of(code, &fault),
                    _ => None,
                };
                KernelFault {
                    fault,
                    isa,
                    trap,
                    agx_trap,
                }
                .into()
            })
    }
}

fn to_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(values.len() * T::SIZE);
    for &v in values {
        v.put(&mut bytes);
    }
    bytes
}

/// The lowest `ALIGN`ed address in a window where `size` bytes overlap no
/// allocation in `allocs`.
fn place(allocs: &BTreeMap<u64, (u64, Use)>, size: u64) -> Option<u64> {
    for (lo, hi) in WINDOWS {
        let mut at = lo;
        for (&a, &(len, _)) in allocs.range(..hi) {
            let end = a.saturating_add(len);
            if end <= at {
                continue;
            }
            if at.checked_add(size).is_some_and(|e| e <= a) {
                break;
            }
            at = end.checked_next_multiple_of(ALIGN)?;
        }
        if at.checked_add(size).is_some_and(|e| e <= hi) {
            return Some(at);
        }
    }
    None
}
