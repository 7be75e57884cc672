//! The machine-ISA backends of the AQL agent: RV32, ir3 and AGX code objects are
//! lifted into IR kernels by `wavejit_frontend` and dispatched like any other.
//!
//! Each backend caches lifted kernels by content (code bytes + everything the lift
//! depends on), so re-registering the same code, or registering it twice, lifts
//! once. Lift errors become `INVALID_CODE_OBJECT` with the lifter's message; code
//! built for a variant the backend does not run (wave size) is `INVALID_ISA`.
//!
//! Argument ABIs (how kernarg bytes reach the kernel) — one per ISA, see each module:
//! - [`rv32`]: none through registers (the device starts every lane with all
//!   registers 0); the kernarg segment is the argument block in the 32-bit core
//!   address space and the kernel reads it at the fixed core address it was built for.
//! - [`ir3`]: const file `c0.x ..` = kernarg bytes (`ArgAbi::UniformCopy`).
//! - [`agx`]: uniform file `u0l ..` = kernarg bytes, so kernarg qword `i` is buffer
//!   `i`'s address in `u(2i)_u(2i+1)` (`ArgAbi::UniformCopy`).

pub mod agx;
mod cache;
pub mod ir3;
pub mod rv32;
pub mod samples;

use std::sync::Arc;

use super::agent::Agent;
use super::code_object::ArgAbi;
use super::loader::CodeObjectRef;
use super::status::{AqlError, Status};

pub use agx::AgxBackend;
pub use ir3::Ir3Backend;
pub use rv32::Rv32Backend;

/// Registers the RV32, ir3 and AGX backends with `agent`.
pub fn register_all(agent: &Agent) {
    agent.register_backend(Arc::new(Rv32Backend::default()));
    agent.register_backend(Arc::new(Ir3Backend::default()));
    agent.register_backend(Arc::new(AgxBackend::default()));
}

/// `isa: message`, the ISA said once (AGX decode errors already start with it).
fn invalid_code(isa: &str, message: impl std::fmt::Display) -> AqlError {
    let message = message.to_string();
    let text = if message.starts_with(&format!("{isa}:")) {
        message
    } else {
        format!("{isa}: {message}")
    };
    AqlError::new(Status::INVALID_CODE_OBJECT, text)
}

/// The descriptor's wave size, which must be one this ISA runs (0 = `default`).
fn wave_size(
    isa: &str,
    object: CodeObjectRef<'_>,
    default: u32,
    allowed: &[u32],
) -> Result<u32, AqlError> {
    match object.desc.wave_size {
        0 => Ok(default),
        n if allowed.contains(&n) => Ok(n),
        n => Err(AqlError::new(
            Status::INVALID_ISA,
            format!("{isa}: wave size {n} is not one this ISA runs ({allowed:?})"),
        )),
    }
}

/// Machine ISAs copy the kernargs into their uniform file: `UniformCopy` only,
/// and at most `limit` bytes.
fn copied_kernargs(isa: &str, object: CodeObjectRef<'_>, limit: u32) -> Result<u32, AqlError> {
    if object.arg_abi != ArgAbi::UniformCopy {
        return Err(invalid_code(
            isa,
            format!(
                "argument ABI {:?} is not supported (kernargs are copied into the {isa} uniform file: UniformCopy)",
                object.arg_abi
            ),
        ));
    }
    let len = object.desc.kernarg_size;
    if len > limit {
        return Err(invalid_code(
            isa,
            format!("kernarg_size {len} exceeds the {limit}-byte uniform file"),
        ));
    }
    Ok(len)
}
