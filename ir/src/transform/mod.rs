//! Kernel-to-kernel transforms. Each takes a verified kernel and returns one
//! that verifies and behaves identically on every engine (same memory effects,
//! same faults, same fault pcs) — except `merge_straight_blocks`, after which
//! the watchdog counts fewer blocks (see there).

pub mod canonical_nan;
pub mod compact;
mod const_lattice;
pub mod cse;
mod dead_code;
pub mod float_rules;
pub mod fold;
mod identities;
pub mod known_bits;
pub mod loop_invariants;
pub mod merge_blocks;
pub mod narrow;
pub mod pack_workgroups;
mod private_slots;
pub mod promote_private;
mod slot_placement;
pub mod unreachable_tail;

pub use canonical_nan::relax_canonical_nan;
pub use compact::compact;
pub use cse::eliminate_common_subexpressions;
pub use dead_code::DeadCounts;
pub use float_rules::{FloatRuleStats, relax_float_rules};
pub use fold::{FoldCounts, FoldStats, fold_constants};
pub use known_bits::{BitsStats, simplify_bits};
pub use loop_invariants::hoist_loop_invariants;
pub use merge_blocks::merge_straight_blocks;
pub use narrow::{NarrowStats, narrow_integers};
pub use pack_workgroups::WorkgroupPacking;
pub use promote_private::{PromoteStats, promote_private};
pub use unreachable_tail::drop_unreachable_tail;
