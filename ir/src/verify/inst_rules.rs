//! Per-instruction rules: argument handles, the signature, result types and
//! the attribute rules the signature does not cover (constants, float modes,
//! memory declared by the kernel).

use super::{Role, Rule, Verifier, Where};
use crate::entities::{Block, Inst};
use crate::float_mode::{FloatMode, NanMode};
use crate::inst::{AddrSpace, InstKind};
use crate::kernel::InstData;
use crate::types::{FloatFormat, Type};

/// What a canonical NaN pattern of an instruction is checked against.
enum NanTarget {
    /// The float format of the (first) result.
    Format(FloatFormat),
    /// The result is not a float: a canonical NaN is meaningless.
    NoFloat,
    /// Unknown because the arguments are ill-typed (already reported).
    Unknown,
}

impl Verifier<'_> {
    pub(super) fn check_inst(&mut self, block: Block, inst: Inst, data: &InstData) {
        let at = Where::Inst(Some(block), inst);
        let mut args_exist = true;
        self.arg_tys.clear();
        for (index, &value) in data.args.iter().enumerate() {
            match self.kernel.values.get(value) {
                Some(v) => self.arg_tys.push(v.ty),
                None => {
                    args_exist = false;
                    let role = Role::Arg(index);
                    self.report(at, Rule::MissingValue { role, value });
                }
            }
        }
        let mut signature_ok = false;
        if args_exist {
            match data.kind.signature(&self.arg_tys) {
                Ok(result_tys) => {
                    signature_ok = true;
                    self.check_results(at, data, &result_tys);
                }
                Err(error) => self.report(at, Rule::Signature(error)),
            }
        }
        self.check_attributes(at, &data.kind, signature_ok);
    }

    fn check_results(&mut self, at: Where, data: &InstData, expected: &[Type]) {
        if expected.len() != data.results.len() {
            let rule = Rule::ResultCount {
                expected: expected.len(),
                got: data.results.len(),
            };
            self.report(at, rule);
            return;
        }
        for (index, (&value, &want)) in data.results.iter().zip(expected).enumerate() {
            // A missing result value was reported when it was defined.
            if let Some(v) = self.kernel.values.get(value)
                && v.ty != want
            {
                let rule = Rule::ResultType {
                    index,
                    value,
                    expected: want,
                    got: v.ty,
                };
                self.report(at, rule);
            }
        }
    }

    fn check_attributes(&mut self, at: Where, kind: &InstKind, signature_ok: bool) {
        if let InstKind::Const { ty, bits } = *kind
            && bits & !ty.mask() != 0
        {
            self.report(at, Rule::ConstBits { ty, bits });
        }
        if let Some((mode, target)) = self.float_rules(kind, signature_ok) {
            if let NanMode::Canonical(bits) = mode.nan {
                let broken = match target {
                    NanTarget::Format(format) => canonical_nan_rule(format, bits),
                    NanTarget::NoFloat => Some(Rule::CanonicalWithoutFloatResult),
                    NanTarget::Unknown => None,
                };
                if let Some(rule) = broken {
                    self.report(at, rule);
                }
            }
            if mode.flags && matches!(kind, InstKind::Fclass { .. }) {
                self.report(at, Rule::FlagsUnsupported);
            }
            if mode.denorm_in == crate::float_mode::Denorm::FlushBeforeRounding {
                self.report(at, Rule::FlushBeforeRoundingOnInput);
            }
        }
        let space = match kind {
            InstKind::Load(access) | InstKind::Store(access) => Some(access.space),
            InstKind::Atomic { space, .. } => Some(*space),
            _ => None,
        };
        match space {
            Some(AddrSpace::Shared) if self.kernel.shared_size == 0 => {
                self.report(at, Rule::NoSharedMemory)
            }
            Some(AddrSpace::Private) if self.kernel.private_size == 0 => {
                self.report(at, Rule::NoPrivateMemory)
            }
            _ => {}
        }
    }

    /// The float mode of a float instruction and the format its NaN results have.
    fn float_rules(&self, kind: &InstKind, signature_ok: bool) -> Option<(FloatMode, NanTarget)> {
        use InstKind::*;
        let of_first_arg = || match self.arg_tys.first() {
            Some(&ty) if signature_ok => FloatFormat::of_type(ty)
                .map(NanTarget::Format)
                .unwrap_or(NanTarget::Unknown),
            _ => NanTarget::Unknown,
        };
        Some(match kind {
            FBinary { mode, .. } | FUnary { mode, .. } | Fma { mode } | Special { mode, .. } => {
                (*mode, of_first_arg())
            }
            PowFixup { mode } => (*mode, NanTarget::Format(FloatFormat::F32)),
            Fcvt { to, mode, .. } | IToF { to, mode, .. } => (*mode, NanTarget::Format(*to)),
            Fcmp { mode, .. } | Fclass { mode } | FToI { mode, .. } => (*mode, NanTarget::NoFloat),
            _ => return None,
        })
    }
}

/// Checks that `bits` is a NaN encoding of `format` within its width.
fn canonical_nan_rule(format: FloatFormat, bits: u64) -> Option<Rule> {
    // (width, exponent mask, mantissa mask); e4m3 has a single NaN per sign (all ones).
    let (width, exp, man) = match format {
        FloatFormat::F16 => (16, 0x7c00, 0x03ff),
        FloatFormat::Bf16 => (16, 0x7f80, 0x007f),
        FloatFormat::F32 => (32, 0x7f80_0000, 0x007f_ffff),
        FloatFormat::F64 => (64, 0x7ff0_0000_0000_0000, 0x000f_ffff_ffff_ffff),
        FloatFormat::E4m3 => (8, 0x7f, 0),
        FloatFormat::E5m2 => (8, 0x7c, 0x03),
        FloatFormat::E2m1 => return Some(Rule::FormatHasNoNan { format }),
    };
    if width < 64 && bits >> width != 0 {
        return Some(Rule::CanonicalNanWidth { bits, format });
    }
    let is_nan = bits & exp == exp && (man == 0 || bits & man != 0);
    (!is_nan).then_some(Rule::CanonicalNotNan { bits, format })
}
