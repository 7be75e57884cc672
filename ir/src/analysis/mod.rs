//! Control-flow analyses shared by the verifier and the engines: successor and
//! predecessor lists, reverse postorder and dominators.
//!
//! Both tolerate malformed kernels (missing terminators, targets that do not
//! exist): such edges are simply left out, so the verifier can run them before it
//! knows the kernel is well formed.

pub mod cfg;
pub mod dominance;

pub use cfg::{Cfg, block_calls};
pub use dominance::DomTree;
