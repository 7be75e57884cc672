//! The agent: one emulated device that owns global memory, an execution engine,
//! ISA backends, registered code objects and limits, and creates queues.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use wavejit_ir::{Budget, Engine, Kernel};
use wavejit_jit::Jit;

use super::code_object::{ArgAbi, CodeObject, Isa};
use super::guard::guard_grid;
use super::loader::{
    CodeObjectRef, FaultWording, IrTextBackend, IsaBackend, LoadedKernel, UniformLayout,
    UniformSource,
};
use super::queue::{Queue, QueueOptions};
use super::status::{AqlError, Status};
use crate::memory::AddressSpace;
use crate::user_copy;

/// Limits and engine of an agent.
#[derive(Clone)]
pub struct AgentConfig {
    /// Runs the kernels (default: the Cranelift JIT).
    pub engine: Arc<dyn Engine + Send + Sync>,
    /// Largest group segment per workgroup, bytes (over it: INVALID_ALLOCATION).
    pub max_group_segment: u32,
    /// Largest private segment per work-item, bytes (over it: OUT_OF_RESOURCES).
    pub max_private_segment: u32,
    /// Largest workgroup, work-items (over it: INVALID_ARGUMENT).
    pub max_workgroup_size: u32,
    /// Largest queue, packets.
    pub max_queue_size: u32,
    /// Per-lane watchdog (blocks entered).
    pub step_limit: u64,
    /// Whole-dispatch budget: time limit (over it: EXCEPTION) and work-items
    /// (over it: INVALID_ARGUMENT). Default [`Budget::from_env`]
    /// (`WAVEJIT_DISPATCH_TIME_LIMIT_MS`, `WAVEJIT_DISPATCH_MAX_WORK_ITEMS`). Its
    /// cancel flag is ignored: each queue cancels its own dispatches when it
    /// is destroyed.
    pub budget: Budget,
    /// Conformance-suite compatibility: a workgroup or grid size of 0 completes as a
    /// no-op instead of failing with INVALID_ARGUMENT (hsa.h/ROCR behaviour).
    pub zero_size_is_noop: bool,
}

impl Default for AgentConfig {
    fn default() -> AgentConfig {
        AgentConfig {
            engine: Arc::new(Jit::default()),
            max_group_segment: 64 * 1024,
            max_private_segment: 64 * 1024,
            max_workgroup_size: 1024,
            max_queue_size: 1 << 17,
            step_limit: wavejit_ir::dispatch::DEFAULT_STEP_LIMIT,
            budget: Budget::from_env(),
            zero_size_is_noop: false,
        }
    }
}

/// A registered code object: an owned copy of its descriptor and code, loaded on
/// first dispatch.
pub(crate) struct RegisteredObject {
    desc: CodeObject,
    pub(crate) isa: Isa,
    arg_abi: ArgAbi,
    /// The registered copy of the code.
    pub(crate) code: Arc<[u8]>,
    loaded: Mutex<Option<Result<Arc<LoadedKernel>, AqlError>>>,
    variants: Mutex<HashMap<VariantKey, Arc<Variant>>>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct VariantKey {
    shared: u32,
    private: u32,
    guarded: bool,
}

/// The kernel as one dispatch shape runs it: segment sizes raised to what the
/// packet asks, and a grid guard for partial workgroups.
pub(crate) struct Variant {
    pub kernel: Arc<Kernel>,
    pub uniforms: UniformLayout,
    pub wave_size: u32,
    pub wording: Option<FaultWording>,
}

pub(crate) struct AgentInner {
    pub config: AgentConfig,
    pub memory: Arc<AddressSpace>,
    backends: RwLock<HashMap<Isa, Arc<dyn IsaBackend>>>,
    objects: RwLock<HashMap<u64, Arc<RegisteredObject>>>,
    /// The next kernel-object handle (handles are never reused).
    next_handle: AtomicU64,
}

/// The first kernel-object handle: opaque, non-zero, and unlike the small
/// integers or addresses a stale packet might carry.
const FIRST_HANDLE: u64 = 0x574a_0000_0000_0001;

/// An emulated AQL agent. Cheap to clone (shared state).
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<AgentInner>,
}

/// A registered code object's handle: the `kernel_object` of dispatch packets.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelObject(pub u64);

impl Default for Agent {
    fn default() -> Agent {
        Agent::new(AgentConfig::default())
    }
}

impl Agent {
    /// An agent with a fresh address space and the IR-text backend.
    pub fn new(config: AgentConfig) -> Agent {
        Agent::with_memory(config, Arc::new(AddressSpace::new()))
    }

    /// An agent whose kernels see `memory` as global memory.
    pub fn with_memory(config: AgentConfig, memory: Arc<AddressSpace>) -> Agent {
        let agent = Agent {
            inner: Arc::new(AgentInner {
                config,
                memory,
                backends: RwLock::new(HashMap::new()),
                objects: RwLock::new(HashMap::new()),
                next_handle: AtomicU64::new(FIRST_HANDLE),
            }),
        };
        agent.register_backend(Arc::new(IrTextBackend));
        agent
    }

    pub fn config(&self) -> &AgentConfig {
        &self.inner.config
    }

    /// Global memory: kernarg segments and buffers kernels touch live here (GPU
    /// address == host address for `alloc`).
    pub fn memory(&self) -> &Arc<AddressSpace> {
        &self.inner.memory
    }

    /// Installs (or replaces) the loader of one ISA.
    pub fn register_backend(&self, backend: Arc<dyn IsaBackend>) {
        self.inner
            .backends
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(backend.isa(), backend);
    }

    pub fn supports(&self, isa: Isa) -> bool {
        self.inner
            .backends
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&isa)
    }

    /// Registers the descriptor at `desc` (a client pointer) and returns a new
    /// handle for it. The descriptor and its code are copied, so they may be
    /// freed or reused afterwards: registering the same memory again gives
    /// another handle, and each handle keeps running its own kernel. Both are
    /// read with checked copies, so a wild pointer is INVALID_CODE_OBJECT.
    pub fn register_code_object(&self, desc: *const CodeObject) -> Result<KernelObject, AqlError> {
        let addr = desc as u64;
        if addr == 0 {
            return Err(AqlError::new(
                Status::INVALID_CODE_OBJECT,
                "descriptor address is 0",
            ));
        }
        let mut bytes = [0u8; std::mem::size_of::<CodeObject>()];
        user_copy::read_bytes(addr, &mut bytes).map_err(|_| {
            AqlError::new(
                Status::INVALID_CODE_OBJECT,
                format!("descriptor at {addr:#x} is not readable"),
            )
        })?;
        // SAFETY: CodeObject is repr(C) integers only (any bit pattern is valid)
        // and `bytes` holds exactly one.
        let d = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<CodeObject>()) };
        let (isa, arg_abi) = d.validate()?;
        let code = self.read_code(d.code, d.code_size)?;
        Ok(self.insert_object(d, isa, arg_abi, code))
    }

    /// Copies `size` (validated: at most MAX_CODE_SIZE) bytes of code at `addr`:
    /// through the checked table when an allocation of the agent's memory holds
    /// `addr` (its bounds are checked), else with a kernel-checked copy (code in
    /// the client's own memory, e.g. a C array).
    fn read_code(&self, addr: u64, size: u64) -> Result<Vec<u8>, AqlError> {
        let bad = |why: String| {
            AqlError::new(
                Status::INVALID_CODE_OBJECT,
                format!("code at {addr:#x} ({size} bytes) {why}"),
            )
        };
        let len = usize::try_from(size).map_err(|_| bad("exceeds memory".into()))?;
        let memory = &self.inner.memory;
        if memory.allocation_of(addr).is_some() {
            return memory
                .read_bytes(addr, len)
                .map_err(|e| bad(format!("is not readable: {e}")));
        }
        let mut code = vec![0; len];
        user_copy::read_bytes(addr, &mut code).map_err(|_| bad("is not readable".into()))?;
        Ok(code)
    }

    /// Registers a copy of `desc` whose code is `code` (`desc.code`/`code_size` are
    /// rewritten) under a new handle.
    pub fn register_code(&self, desc: &CodeObject, code: &[u8]) -> Result<KernelObject, AqlError> {
        let code = code.to_vec();
        let mut d = *desc;
        // Point at the agent's copy, which lives as long as the registration.
        d.code = code.as_ptr() as u64;
        d.code_size = code.len() as u64;
        let (isa, arg_abi) = d.validate()?;
        Ok(self.insert_object(d, isa, arg_abi, code))
    }

    /// Registers the kernel `entry` of an IR-text module.
    pub fn register_ir_text(
        &self,
        text: &str,
        arg_abi: ArgAbi,
        kernarg_size: u32,
    ) -> Result<KernelObject, AqlError> {
        let desc = CodeObject::new(Isa::IrText, arg_abi, text.as_bytes(), kernarg_size);
        self.register_code(&desc, text.as_bytes())
    }

    fn insert_object(
        &self,
        desc: CodeObject,
        isa: Isa,
        arg_abi: ArgAbi,
        code: Vec<u8>,
    ) -> KernelObject {
        let obj = RegisteredObject {
            desc,
            isa,
            arg_abi,
            code: code.into(),
            loaded: Mutex::new(None),
            variants: Mutex::new(HashMap::new()),
        };
        let handle = self.inner.next_handle.fetch_add(1, Ordering::Relaxed);
        self.inner
            .objects
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(handle, Arc::new(obj));
        KernelObject(handle)
    }

    /// Forgets a code object; packets naming it fail with INVALID_CODE_OBJECT.
    pub fn unregister_code_object(&self, object: KernelObject) -> Result<(), AqlError> {
        self.inner
            .objects
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&object.0)
            .map(|_| ())
            .ok_or_else(|| {
                AqlError::new(
                    Status::INVALID_CODE_OBJECT,
                    format!("kernel object {:#x} is not registered", object.0),
                )
            })
    }

    /// Loads (once) a registered code object through its ISA backend.
    pub fn load(&self, object: KernelObject) -> Result<Arc<LoadedKernel>, AqlError> {
        let obj = self.inner.object(object.0)?;
        self.inner.loaded(&obj)
    }

    /// Creates a queue on this agent.
    pub fn create_queue(&self, options: QueueOptions) -> Result<Queue, AqlError> {
        Queue::create(self.clone(), options)
    }
}

impl AgentInner {
    pub(crate) fn object(&self, handle: u64) -> Result<Arc<RegisteredObject>, AqlError> {
        if handle == 0 {
            return Err(AqlError::new(
                Status::INVALID_CODE_OBJECT,
                "kernel_object is 0",
            ));
        }
        self.objects
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&handle)
            .cloned()
            .ok_or_else(|| {
                AqlError::new(
                    Status::INVALID_CODE_OBJECT,
                    format!("kernel_object {handle:#x} is not a registered code object"),
                )
            })
    }

    fn loaded(&self, obj: &RegisteredObject) -> Result<Arc<LoadedKernel>, AqlError> {
        let mut slot = obj.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(result) = slot.as_ref() {
            return result.clone();
        }
        let backend = self
            .backends
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&obj.isa)
            .cloned();
        let Some(backend) = backend else {
            // Not cached: a backend may be registered later.
            return Err(AqlError::new(
                Status::INVALID_ISA,
                format!("this agent has no {:?} backend", obj.isa),
            ));
        };
        let result = backend
            .load(CodeObjectRef {
                desc: &obj.desc,
                arg_abi: obj.arg_abi,
                code: &obj.code,
            })
            .and_then(|k| self.check_loaded(k))
            .map(Arc::new);
        *slot = Some(result.clone());
        result
    }

    fn check_loaded(&self, k: LoadedKernel) -> Result<LoadedKernel, AqlError> {
        if k.kernel.shared_size > self.config.max_group_segment {
            return Err(AqlError::new(
                Status::INVALID_ALLOCATION,
                format!(
                    "kernel `{}` needs {} shared bytes, the agent has {}",
                    k.kernel.name, k.kernel.shared_size, self.config.max_group_segment
                ),
            ));
        }
        for item in &k.uniforms.items {
            if u64::from(item.offset) + u64::from(item.source.len()) > u64::from(k.uniforms.size) {
                return Err(AqlError::new(
                    Status::INVALID_CODE_OBJECT,
                    format!(
                        "uniform item {item:?} lies beyond the layout's {} bytes",
                        k.uniforms.size
                    ),
                ));
            }
        }
        if k.wave_size == 0 {
            return Err(AqlError::new(Status::INVALID_CODE_OBJECT, "wave size 0"));
        }
        Ok(k)
    }

    /// The kernel variant for a dispatch shape (cached per code object).
    pub(crate) fn variant(
        &self,
        obj: &RegisteredObject,
        group: u32,
        private: u32,
        guarded: bool,
    ) -> Result<Arc<Variant>, AqlError> {
        let loaded = self.loaded(obj)?;
        let key = VariantKey {
            shared: group
                .max(loaded.kernel.shared_size)
                .max(obj.desc.group_segment_fixed_size),
            private: private
                .max(loaded.kernel.private_size)
                .max(obj.desc.private_segment_fixed_size),
            guarded,
        };
        let mut variants = obj.variants.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = variants.get(&key) {
            return Ok(v.clone());
        }
        let mut uniforms = loaded.uniforms.clone();
        let mut kernel = if guarded {
            let grid_offset = uniforms.push(UniformSource::GridSize, 16);
            guard_grid(&loaded.kernel, grid_offset)?
        } else {
            loaded.kernel.clone()
        };
        kernel.shared_size = key.shared;
        kernel.private_size = key.private;
        let v = Arc::new(Variant {
            kernel: Arc::new(kernel),
            uniforms,
            wave_size: loaded.wave_size,
            wording: loaded.wording.clone(),
        });
        variants.insert(key, v.clone());
        Ok(v)
    }
}
