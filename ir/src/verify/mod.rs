//! The IR verifier: checks that a kernel is well formed before any engine runs
//! it. Lifters call it on every kernel, so it runs in time linear in the kernel
//! size (plus the near-linear Cooper-Harvey-Kennedy dominator computation);
//! besides a few per-kernel tables and the result-type list each `signature`
//! call returns, it allocates only to describe errors.
//!
//! Rules, in the order they are checked (each has its own [`Rule`] variant):
//!
//! 1. Kernel: at least one block ([`Rule::NoBlocks`], which stops verification);
//!    `shared_size` and `private_size` within [`MAX_SHARED_BYTES`] and
//!    [`MAX_PRIVATE_BYTES`] (engines allocate them per workgroup and lane); the
//!    entry block (block 0) has no parameters.
//!
//! [`MAX_SHARED_BYTES`]: crate::dispatch::MAX_SHARED_BYTES
//! [`MAX_PRIVATE_BYTES`]: crate::dispatch::MAX_PRIVATE_BYTES
//! 2. Layout, block by block in layout order:
//!    - every parameter and result handle exists; its `ValueDef` points back to
//!      that slot; no value is defined twice (two slots, or twice in one list);
//!    - every instruction handle in a block's list exists and is placed once in
//!      the whole kernel (a second placement is reported, not re-checked);
//!    - instructions: arguments exist; [`InstKind::signature`](crate::InstKind::signature)
//!      accepts their types (its [`SignatureError`](crate::SignatureError) is reported
//!      as is: arity, argument types, attributes such as builtin dimensions and
//!      memory access shapes); the results match the signature in count and type;
//!      `Const` bits fit `ty.mask()`; `NanMode::Canonical` fits the result format's
//!      width and is a NaN of it (and is only given when the result is a float);
//!      `FloatMode.flags` only on kinds that produce flags (all but `Fclass`);
//!      shared/private accesses need a non-zero `shared_size`/`private_size`;
//!    - every block has a terminator; every target exists; block-call argument
//!      counts and types match the target's parameters; a branch condition is
//!      `i1`; a table index is `i32`.
//! 3. Every instruction in the arenas is placed in some block.
//! 4. SSA: every used value is defined in some block; within a block it is
//!    defined before the use (block parameters at block entry, terminators after
//!    the last instruction); across blocks its defining block dominates the
//!    using block.
//!
//! Decisions:
//! - Unreachable blocks are allowed and verified like the others, except for
//!   dominance: a use inside an unreachable block needs only a definition
//!   somewhere in the kernel (and, in the same block, an earlier one), since no
//!   lane ever executes it. A value defined in an unreachable block never
//!   dominates a reachable use.
//! - Branching back to the entry block is allowed (it has no parameters, so
//!   such calls pass no arguments).
//! - `Barrier` may appear anywhere, including divergent code: the execution
//!   model defines it per lane.
//! - Values in the arena that no block defines are allowed as long as nothing
//!   uses them (optimizations may leave dead entries behind).
//! - Errors name the instruction by handle plus a short local rendering
//!   (`v12 = IBinary(Add) v3, v4`: kind by `Debug`), independent of the text
//!   printer so the verifier never depends on it.

mod error;
mod inst_rules;
mod layout;
mod ssa;
mod summary;
mod terminator;

pub use error::{DefText, Location, Role, Rule, VerifyError};

use crate::entities::{Block, Inst};
use crate::kernel::{Kernel, ValueDef};
use crate::types::Type;

/// Checks `kernel`; returns the first broken rule (in the order listed in the
/// module documentation).
pub fn verify(kernel: &Kernel) -> Result<(), VerifyError> {
    match verify_all(kernel).into_iter().next() {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// Checks `kernel` and returns every broken rule found (empty when it is well formed).
pub fn verify_all(kernel: &Kernel) -> Vec<VerifyError> {
    let mut verifier = Verifier::new(kernel);
    if kernel.blocks.is_empty() {
        verifier.report(Where::Kernel, Rule::NoBlocks);
        return verifier.errors;
    }
    verifier.check_memory_sizes();
    verifier.check_layout();
    verifier.check_all_placed();
    verifier.check_uses();
    verifier.errors
}

/// Where a value is defined: `pos` 0 for block parameters, `i + 1` for the
/// results of the block's instruction `i`.
#[derive(Copy, Clone, Debug)]
struct DefSite {
    block: Block,
    pos: u32,
    def: ValueDef,
}

/// A cheap location; turned into a [`Location`] (with instruction text) only
/// when an error is reported.
#[derive(Copy, Clone, Debug)]
enum Where {
    Kernel,
    Block(Block),
    Inst(Option<Block>, Inst),
    Terminator(Block),
}

struct Verifier<'k> {
    kernel: &'k Kernel,
    errors: Vec<VerifyError>,
    /// Per value: its first definition in layout order.
    defs: Vec<Option<DefSite>>,
    /// Per instruction: its first placement (block, index in the block).
    placed: Vec<Option<(Block, u32)>>,
    /// Scratch buffer for argument types.
    arg_tys: Vec<Type>,
}

impl<'k> Verifier<'k> {
    fn new(kernel: &'k Kernel) -> Verifier<'k> {
        Verifier {
            kernel,
            errors: Vec::new(),
            defs: vec![None; kernel.values.len()],
            placed: vec![None; kernel.insts.len()],
            arg_tys: Vec::new(),
        }
    }

    fn check_memory_sizes(&mut self) {
        use crate::dispatch::{MAX_PRIVATE_BYTES, MAX_SHARED_BYTES};
        let (shared, private) = (self.kernel.shared_size, self.kernel.private_size);
        if shared > MAX_SHARED_BYTES {
            self.report(Where::Kernel, Rule::SharedTooLarge { bytes: shared });
        }
        if private > MAX_PRIVATE_BYTES {
            self.report(Where::Kernel, Rule::PrivateTooLarge { bytes: private });
        }
    }

    fn report(&mut self, at: Where, rule: Rule) {
        let location = match at {
            Where::Kernel => Location::Kernel,
            Where::Block(block) => Location::Block(block),
            Where::Inst(block, inst) => Location::Inst {
                block,
                inst,
                text: summary::inst_text(self.kernel, inst),
            },
            Where::Terminator(block) => Location::Terminator(block),
        };
        self.errors.push(VerifyError {
            kernel: self.kernel.name.clone(),
            location,
            rule,
        });
    }
}
