//! Why a kernel could not be compiled (the engine then falls back to the
//! interpreter, so callers of `Engine::run` never see these).

#[derive(Debug, thiserror::Error)]
pub enum JitError {
    #[error("Cranelift refused the kernel: {0}")]
    Cranelift(String),
    #[error("kernel does not verify: {0}")]
    Unverified(String),
    #[error("malformed kernel: {0}")]
    Malformed(&'static str),
    #[error("{values} values x {lanes} lanes do not fit the register slab")]
    TooLarge { values: usize, lanes: usize },
}
