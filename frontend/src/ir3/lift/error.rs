//! Why a program could not be lifted; every variant names the guest pc
//! (instruction index) and, where there is one, the instruction word.

/// A lift failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiftError {
    /// A reachable word that is not an a630 instruction.
    #[error("undecodable ir3 word {word:#018x} at pc {pc}: {reason}")]
    Undecodable { pc: u64, word: u64, reason: String },
    /// A graphics-only (or otherwise compute-irrelevant) instruction.
    #[error("unsupported in compute: {name} at pc {pc} (word {word:#018x})")]
    Unsupported { name: String, pc: u64, word: u64 },
    /// An instruction whose semantics no public source documents; wavejit
    /// refuses it rather than guess.
    #[error("{name} at pc {pc} (word {word:#018x}): {why}")]
    Undocumented {
        name: String,
        pc: u64,
        word: u64,
        why: &'static str,
    },
    /// A branch whose target lies outside the program.
    #[error("branch at pc {pc} targets pc {target}, outside the {len}-instruction program")]
    BadTarget { pc: u64, target: i64, len: usize },
    /// Execution can run past the last instruction.
    #[error("control reaches pc {pc}, past the end of the program (no `end`)")]
    FallsOffEnd { pc: u64 },
    /// An operand form the instruction cannot take.
    #[error("malformed {name} at pc {pc} (word {word:#018x}): {what}")]
    Malformed {
        name: String,
        pc: u64,
        word: u64,
        what: String,
    },
    /// A lifter bug (the produced kernel is inconsistent).
    #[error("internal lifter error at pc {pc}: {what}")]
    Internal { pc: u64, what: String },
}
