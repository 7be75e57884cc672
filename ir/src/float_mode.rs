//! Float-rule attributes carried by each float instruction (never global state).

/// What happens to subnormal values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Denorm {
    /// Subnormals are kept (IEEE).
    #[default]
    Preserve,
    /// Subnormals become zero of the same sign.
    FlushKeepSign,
    /// Results whose exact, unrounded value is below the smallest normal in
    /// magnitude become zero of the same sign, also when they round up to the
    /// smallest normal (tininess before rounding; AGX FP32). A result rule only
    /// (the verifier refuses it on inputs). Exact rule:
    /// `semantics::tiny_before_rounding`.
    FlushBeforeRounding,
}

/// What NaN a NaN result becomes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum NanMode {
    /// IEEE propagation as wavejit defines it, independent of the host (first NaN
    /// operand quieted; fresh NaNs are the format's default quiet NaN with the sign
    /// clear). Exact rule: `semantics::nan`.
    #[default]
    Propagate,
    /// Every NaN result is exactly this bit pattern (in the result's format width),
    /// e.g. 0x7fc00000 for f32 or 0x7e00 for f16.
    Canonical(u64),
}

/// IEEE rounding direction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum Round {
    /// To nearest, ties to even.
    #[default]
    NearestEven,
    /// Toward zero.
    TowardZero,
    /// Toward negative infinity.
    Down,
    /// Toward positive infinity.
    Up,
    /// To nearest, ties away from zero.
    NearestAway,
}

impl Round {
    pub const ALL: [Round; 5] = [
        Round::NearestEven,
        Round::TowardZero,
        Round::Down,
        Round::Up,
        Round::NearestAway,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Round::NearestEven => "rne",
            Round::TowardZero => "rtz",
            Round::Down => "rdn",
            Round::Up => "rup",
            Round::NearestAway => "rmm",
        }
    }

    pub fn from_name(s: &str) -> Option<Round> {
        Round::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// The float rules of one instruction. The order in which they apply is fixed
/// (see `crate::semantics`): inputs flushed (`denorm_in`), the operation computed
/// once with `round`, the result flushed (`denorm_out`), NaN replaced (`nan`),
/// then clamped to [0, 1] if `sat` (NaN -> +0).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct FloatMode {
    pub denorm_in: Denorm,
    pub denorm_out: Denorm,
    pub nan: NanMode,
    pub round: Round,
    pub sat: bool,
    /// The instruction yields one more result: the IEEE exception flags it raised,
    /// as an `i32` in RISC-V `fflags` order (NV=0x10, DZ=0x08, OF=0x04, UF=0x02, NX=0x01).
    pub flags: bool,
}

impl FloatMode {
    /// IEEE default: preserve subnormals, propagate NaN, round to nearest even.
    pub const IEEE: FloatMode = FloatMode {
        denorm_in: Denorm::Preserve,
        denorm_out: Denorm::Preserve,
        nan: NanMode::Propagate,
        round: Round::NearestEven,
        sat: false,
        flags: false,
    };
}

/// IEEE exception flag bits, RISC-V `fflags` layout.
pub mod fflags {
    pub const NV: u32 = 0x10;
    pub const DZ: u32 = 0x08;
    pub const OF: u32 = 0x04;
    pub const UF: u32 = 0x02;
    pub const NX: u32 = 0x01;
}
