//! `libwavejit.so` and `libwavejit.a`: the C API of wavejit's device frontends,
//! for programs that link wavejit rather than preload it.
//!
//! Every exported function is a `wj_*` item defined in `wavejit-runtime`
//! (`aql::ffi`, `mmio::capi`, `kgsl::capi`), declared in `runtime/include/`
//! (`wavejit_aql.h`, `wavejit_mmio.h`, `wavejit_kgsl.h`). Unlike the LD_PRELOAD
//! shim (`libwavejit_kgsl.so`), this library defines no libc function, so
//! linking it changes nothing about `open`/`ioctl`/`close` in the process.

// Linking the runtime is what puts its `#[no_mangle]` functions in this library.
pub use wavejit_runtime;
