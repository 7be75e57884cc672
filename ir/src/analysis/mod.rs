//! Control-flow analyses shared by the verifier and the engines: successor and
//! predecessor lists, reverse postorder, dominators and post-dominators,
//! uniformity, and when a workgroup's waves may run as one.
//!
//! Both tolerate malformed kernels (missing terminators, targets that do not
//! exist): such edges are simply left out, so the verifier can run them before it
//! knows the kernel is well formed.

pub mod cfg;
pub mod dominance;
pub mod steps;
pub mod uniform;
pub mod waves;

pub use cfg::{Cfg, block_calls};
pub use dominance::DomTree;
pub use steps::step_bound;
pub use uniform::{PostDominators, Region, Uniformity};
pub use waves::{WaveOrder, waves_commute};
