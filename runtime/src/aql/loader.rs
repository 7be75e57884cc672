//! ISA backends: how a registered code object becomes an IR kernel, and how the
//! kernarg segment and dispatch become the kernel's uniform space.
//!
//! The lifters (`wavejit_frontend::{agx, ir3, rv32}`) plug in by implementing
//! [`IsaBackend`] and being registered with [`super::Agent::register_backend`].
//! This module implements the IR-text ISA.

use wavejit_ir::Kernel;

use super::code_object::{ArgAbi, CodeObject, Isa};
use super::status::{AqlError, Status};

/// A registered code object as backends see it.
#[derive(Copy, Clone, Debug)]
pub struct CodeObjectRef<'a> {
    pub desc: &'a CodeObject,
    pub arg_abi: ArgAbi,
    /// The code bytes (`desc.code` .. + `desc.code_size`), copied at registration.
    pub code: &'a [u8],
}

/// What goes into the uniform space at one offset.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UniformSource {
    /// The first `len` bytes of the kernarg segment (read from global memory).
    Kernargs { len: u32 },
    /// The kernarg segment's address, u64.
    KernargAddress,
    /// The 64-byte kernel-dispatch packet as launched (the "dispatch pointer" view).
    DispatchPacket,
    /// Grid size in work-items, 3 × u32.
    GridSize,
}

impl UniformSource {
    pub fn len(self) -> u32 {
        match self {
            UniformSource::Kernargs { len } => len,
            UniformSource::KernargAddress => 8,
            UniformSource::DispatchPacket => 64,
            UniformSource::GridSize => 12,
        }
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct UniformItem {
    pub offset: u32,
    pub source: UniformSource,
}

/// The uniform space of a dispatch: `size` bytes, zero except for the items.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct UniformLayout {
    pub size: u32,
    pub items: Vec<UniformItem>,
}

impl UniformLayout {
    /// Appends `source` at the next multiple of `align` and returns its offset.
    pub fn push(&mut self, source: UniformSource, align: u32) -> u32 {
        let offset = self.size.next_multiple_of(align.max(1));
        self.items.push(UniformItem { offset, source });
        self.size = offset + source.len();
        offset
    }
}

/// A code object made runnable.
#[derive(Clone, Debug)]
pub struct LoadedKernel {
    pub kernel: Kernel,
    pub uniforms: UniformLayout,
    /// Lanes per wave for cross-lane operations.
    pub wave_size: u32,
    /// How a fault of the kernel reads in guest terms (the ISA's instruction
    /// and what a trap means); `None`: the IR fault's own text.
    pub wording: Option<FaultWording>,
}

/// A backend's wording of a kernel fault (e.g. `ret r1` at pc 0x6 and why
/// that traps, for AGX; the cause, pc and word of an RV32 trap).
#[derive(Clone)]
pub struct FaultWording(pub std::sync::Arc<dyn Fn(&wavejit_ir::Fault) -> String + Send + Sync>);

impl FaultWording {
    pub fn describe(&self, fault: &wavejit_ir::Fault) -> String {
        (self.0)(fault)
    }
}

impl std::fmt::Debug for FaultWording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FaultWording(..)")
    }
}

/// One ISA's loader: code object → IR kernel + argument ABI.
pub trait IsaBackend: Send + Sync {
    fn isa(&self) -> Isa;

    /// Lifts (or parses) the code. Errors use INVALID_CODE_OBJECT (bad code) or
    /// INVALID_ISA (code for a variant this backend does not run), with a message
    /// naming the offset or line.
    fn load(&self, object: CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError>;
}

/// The IR-text ISA: the code is a module in `wavejit_ir::text` form and `entry`
/// indexes its kernels.
///
/// Uniform layout:
/// - `UniformCopy`: kernarg bytes `[0, kernarg_size)` at offset 0;
/// - `UniformPointer`: the kernarg address (u64) at offset 0;
/// - then the 64-byte dispatch packet at the next multiple of 16 (offset 16 for
///   `UniformPointer`, `align16(kernarg_size)` for `UniformCopy`).
pub struct IrTextBackend;

/// Default wave size when a descriptor leaves it 0.
pub const DEFAULT_WAVE_SIZE: u32 = 32;

impl IsaBackend for IrTextBackend {
    fn isa(&self) -> Isa {
        Isa::IrText
    }

    fn load(&self, object: CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError> {
        let bad = |m: String| AqlError::new(Status::INVALID_CODE_OBJECT, m);
        let text = std::str::from_utf8(object.code)
            .map_err(|e| bad(format!("IR text is not UTF-8 at byte {}", e.valid_up_to())))?;
        let mut kernels = wavejit_ir::text::parse_module(text)
            .map_err(|e| bad(format!("IR text does not parse: {e}")))?;
        let count = kernels.len();
        let index = usize::try_from(object.desc.entry)
            .ok()
            .filter(|&i| i < count)
            .ok_or_else(|| {
                bad(format!(
                    "entry {} names no kernel (the module has {count})",
                    object.desc.entry
                ))
            })?;
        let kernel = kernels.swap_remove(index);
        wavejit_ir::verify::verify(&kernel)
            .map_err(|e| bad(format!("kernel `{}` does not verify: {e}", kernel.name)))?;
        let mut uniforms = UniformLayout::default();
        match object.arg_abi {
            ArgAbi::UniformCopy => uniforms.push(
                UniformSource::Kernargs {
                    len: object.desc.kernarg_size,
                },
                16,
            ),
            ArgAbi::UniformPointer => uniforms.push(UniformSource::KernargAddress, 8),
        };
        uniforms.push(UniformSource::DispatchPacket, 16);
        Ok(LoadedKernel {
            kernel,
            uniforms,
            wave_size: match object.desc.wave_size {
                0 => DEFAULT_WAVE_SIZE,
                n => n,
            },
            wording: None,
        })
    }
}

/// A backend from a closure, for plugging a lifter in without a new type:
///
/// ```ignore
/// agent.register_backend(Arc::new(FnBackend::new(Isa::Agx, |obj| {
///     let kernel = wavejit_frontend::agx::lift(obj.code, obj.desc.entry)?; // map the error
///     let mut uniforms = UniformLayout::default();
///     uniforms.push(UniformSource::Kernargs { len: obj.desc.kernarg_size }, 16);
///     Ok(LoadedKernel { kernel, uniforms, wave_size: 32 })
/// })));
/// ```
pub struct FnBackend<F> {
    isa: Isa,
    load: F,
}

impl<F> FnBackend<F>
where
    F: Fn(CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError> + Send + Sync,
{
    pub fn new(isa: Isa, load: F) -> FnBackend<F> {
        FnBackend { isa, load }
    }
}

impl<F> IsaBackend for FnBackend<F>
where
    F: Fn(CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError> + Send + Sync,
{
    fn isa(&self) -> Isa {
        self.isa
    }

    fn load(&self, object: CodeObjectRef<'_>) -> Result<LoadedKernel, AqlError> {
        (self.load)(object)
    }
}
