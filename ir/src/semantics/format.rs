//! Bit layouts of the float formats the semantics handle, and unpacking of a bit
//! pattern into its class and exact value.

use crate::types::{FloatFormat, Type};

/// Which special encodings a format has.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE 754: the all-ones exponent holds infinities and NaNs.
    Ieee,
    /// OCP e4m3 ("fn"): no infinities; only S.1111.111 is NaN.
    NanOnlyAllOnes,
    /// OCP e2m1: every code is a finite number.
    FiniteOnly,
}

/// A binary float layout: 1 sign bit, `ebits` exponent bits, `mbits` fraction bits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Fmt {
    pub ebits: u32,
    pub mbits: u32,
    pub specials: Specials,
}

impl Fmt {
    pub const F16: Fmt = Fmt::ieee(5, 10);
    pub const BF16: Fmt = Fmt::ieee(8, 7);
    pub const F32: Fmt = Fmt::ieee(8, 23);
    pub const F64: Fmt = Fmt::ieee(11, 52);
    pub const E4M3: Fmt = Fmt {
        ebits: 4,
        mbits: 3,
        specials: Specials::NanOnlyAllOnes,
    };
    pub const E5M2: Fmt = Fmt::ieee(5, 2);
    pub const E2M1: Fmt = Fmt {
        ebits: 2,
        mbits: 1,
        specials: Specials::FiniteOnly,
    };

    const fn ieee(ebits: u32, mbits: u32) -> Fmt {
        Fmt {
            ebits,
            mbits,
            specials: Specials::Ieee,
        }
    }

    pub const fn of(f: FloatFormat) -> Fmt {
        match f {
            FloatFormat::F16 => Fmt::F16,
            FloatFormat::Bf16 => Fmt::BF16,
            FloatFormat::F32 => Fmt::F32,
            FloatFormat::F64 => Fmt::F64,
            FloatFormat::E4m3 => Fmt::E4M3,
            FloatFormat::E5m2 => Fmt::E5M2,
            FloatFormat::E2m1 => Fmt::E2M1,
        }
    }

    /// The format of an IR float type (`None` for integers).
    pub const fn of_type(t: Type) -> Option<Fmt> {
        match t {
            Type::F16 => Some(Fmt::F16),
            Type::F32 => Some(Fmt::F32),
            Type::F64 => Some(Fmt::F64),
            _ => None,
        }
    }

    pub const fn bias(self) -> i32 {
        (1 << (self.ebits - 1)) - 1
    }

    /// Exponent of the smallest normal number.
    pub const fn emin(self) -> i32 {
        1 - self.bias()
    }

    pub const fn width(self) -> u32 {
        1 + self.ebits + self.mbits
    }

    pub const fn sign_bit(self) -> u64 {
        1 << (self.ebits + self.mbits)
    }

    /// All bits except the sign.
    pub const fn mag_mask(self) -> u64 {
        self.sign_bit() - 1
    }

    pub const fn frac_mask(self) -> u64 {
        (1 << self.mbits) - 1
    }

    /// The all-ones exponent field, in place.
    pub const fn exp_mask(self) -> u64 {
        self.mag_mask() & !self.frac_mask()
    }

    /// The quiet bit of an IEEE-style NaN (top fraction bit).
    pub const fn quiet_bit(self) -> u64 {
        1 << (self.mbits - 1)
    }

    /// Magnitude bits of the largest finite value.
    pub const fn max_finite(self) -> u64 {
        match self.specials {
            Specials::Ieee => self.exp_mask() - 1,
            Specials::NanOnlyAllOnes => self.mag_mask() - 1,
            Specials::FiniteOnly => self.mag_mask(),
        }
    }

    /// Magnitude bits of infinity, if the format has one.
    pub const fn inf(self) -> Option<u64> {
        match self.specials {
            Specials::Ieee => Some(self.exp_mask()),
            _ => None,
        }
    }

    /// The default quiet NaN: sign clear, quiet bit only (`0x7fc00000` for f32);
    /// e4m3 has the single pattern 0x7f; e2m1 has none (`None`).
    pub const fn default_nan(self) -> Option<u64> {
        match self.specials {
            Specials::Ieee => Some(self.exp_mask() | self.quiet_bit()),
            Specials::NanOnlyAllOnes => Some(self.mag_mask()),
            Specials::FiniteOnly => None,
        }
    }

    pub const fn is_nan(self, bits: u64) -> bool {
        let mag = bits & self.mag_mask();
        match self.specials {
            Specials::Ieee => mag > self.exp_mask(),
            Specials::NanOnlyAllOnes => mag == self.mag_mask(),
            Specials::FiniteOnly => false,
        }
    }

    /// A signaling NaN: IEEE-style NaN with the quiet bit clear.
    pub const fn is_snan(self, bits: u64) -> bool {
        matches!(self.specials, Specials::Ieee) && self.is_nan(bits) && bits & self.quiet_bit() == 0
    }

    pub const fn is_inf(self, bits: u64) -> bool {
        match self.inf() {
            Some(inf) => bits & self.mag_mask() == inf,
            None => false,
        }
    }

    /// Nonzero with a zero exponent field.
    pub const fn is_subnormal(self, bits: u64) -> bool {
        bits & self.exp_mask() == 0 && bits & self.frac_mask() != 0
    }

    pub const fn is_zero(self, bits: u64) -> bool {
        bits & self.mag_mask() == 0
    }

    pub const fn sign(self, bits: u64) -> bool {
        bits & self.sign_bit() != 0
    }
}

/// What a bit pattern denotes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    Zero,
    /// The value `sig * 2^exp` with `sig != 0` (normal or subnormal).
    Finite {
        exp: i32,
        sig: u64,
    },
    Inf,
    Nan,
}

/// Sign and class of a bit pattern of `fmt`.
#[inline]
pub fn unpack(fmt: Fmt, bits: u64) -> (bool, Class) {
    let sign = fmt.sign(bits);
    if fmt.is_nan(bits) {
        return (sign, Class::Nan);
    }
    if fmt.is_inf(bits) {
        return (sign, Class::Inf);
    }
    let field = ((bits & fmt.exp_mask()) >> fmt.mbits) as i32;
    let frac = bits & fmt.frac_mask();
    let class = if field == 0 {
        if frac == 0 {
            Class::Zero
        } else {
            Class::Finite {
                exp: fmt.emin() - fmt.mbits as i32,
                sig: frac,
            }
        }
    } else {
        Class::Finite {
            exp: field - fmt.bias() - fmt.mbits as i32,
            sig: frac | (1 << fmt.mbits),
        }
    };
    (sign, class)
}
