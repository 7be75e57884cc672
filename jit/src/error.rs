//! Why a kernel could not be compiled (the engine then falls back to the
//! interpreter, so callers of `Engine::run` never see these).

use wavejit_ir::verify::VerifyError;

#[derive(Debug, thiserror::Error)]
pub enum JitError {
    #[error("Cranelift refused the kernel: {0}")]
    Cranelift(String),
    /// The IR verifier's error (its [`source`](std::error::Error::source)).
    #[error("kernel does not verify: {0}")]
    Unverified(#[from] VerifyError),
    #[error("malformed kernel: {0}")]
    Malformed(&'static str),
    #[error("{values} values x {lanes} lanes do not fit the register slab")]
    TooLarge { values: usize, lanes: usize },
}
