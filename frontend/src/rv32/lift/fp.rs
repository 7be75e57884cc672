//! Single-precision F instructions and the custom low-precision conversions.
//!
//! Every arithmetic result follows RISC-V: subnormals kept, NaN results are the
//! canonical 0x7fc00000, flags exact (accrued into the lane's fflags when the
//! kernel can observe them). `dyn` rounding reads the lane's frm at run time: a
//! table over frm picks one of five copies of the instruction, each with a static
//! rounding mode, and frm 5..7 traps (illegal instruction).

use wavejit_ir::{
    Block, BlockCall, CastOp, Denorm, FBinOp, FUnOp, FloatCC, FloatFormat, FloatMode, IBinOp,
    InstKind, NanMode, Round, Terminator, Type, Value,
};

use super::emit::Emitter;
use super::liveness::FFLAGS;
use super::trap::TrapCause;
use crate::rv32::{
    FReg, FmaOp, FpArithOp, FpCmpOp, FpMinMaxOp, FpSignOp, LpDirection, LpFormat, RoundingMode,
    XReg,
};

pub const CANONICAL_NAN: u64 = 0x7fc0_0000;

fn round_of(rm: RoundingMode) -> Option<Round> {
    match rm {
        RoundingMode::Rne => Some(Round::NearestEven),
        RoundingMode::Rtz => Some(Round::TowardZero),
        RoundingMode::Rdn => Some(Round::Down),
        RoundingMode::Rup => Some(Round::Up),
        RoundingMode::Rmm => Some(Round::NearestAway),
        RoundingMode::Dyn => None,
    }
}

fn lp_format(f: LpFormat) -> FloatFormat {
    match f {
        LpFormat::Bf16 => FloatFormat::Bf16,
        LpFormat::E4m3 => FloatFormat::E4m3,
        LpFormat::E5m2 => FloatFormat::E5m2,
        LpFormat::E2m1 => FloatFormat::E2m1,
    }
}

/// A result and, when flags are tracked, the flags it raised.
type FpOut = (Value, Option<Value>);

impl Emitter<'_> {
    pub fn fmode(&self, round: Round) -> FloatMode {
        FloatMode {
            denorm_in: Denorm::Preserve,
            denorm_out: Denorm::Preserve,
            nan: NanMode::Canonical(CANONICAL_NAN),
            round,
            sat: false,
            flags: self.env.track_flags,
        }
    }

    /// Mode of instructions with an integer result (no NaN result rule).
    fn int_result_mode(&self, round: Round) -> FloatMode {
        FloatMode {
            nan: NanMode::Propagate,
            ..self.fmode(round)
        }
    }

    fn fp_out(&mut self, kind: InstKind, args: &[Value]) -> FpOut {
        let r = self.inst(kind, args);
        let flags = if self.env.track_flags {
            r.get(1).copied()
        } else {
            None
        };
        (r.first().copied().unwrap_or(Value::from_u32(0)), flags)
    }

    fn accrue(&mut self, flags: Option<Value>) {
        if let Some(f) = flags {
            self.vals[FFLAGS] = self.bin(IBinOp::Or, self.vals[FFLAGS], f);
        }
    }

    /// Runs `op` with the static mode of `rm`, or branches over frm for `dyn`.
    fn with_rm(
        &mut self,
        rm: RoundingMode,
        mut op: impl FnMut(&mut Self, Round) -> FpOut,
    ) -> FpOut {
        if let Some(r) = round_of(rm) {
            return op(self, r);
        }
        if !self.env.dynamic_frm {
            // frm is 0 (RNE) at launch and nothing writes it.
            return op(self, Round::NearestEven);
        }
        let frm = self.vals[super::liveness::FRM];
        let code = self.site(TrapCause::InvalidFrm, self.pc, self.word);
        let bad = self.trap_block(code);
        let join = self.new_block();
        let modes: Vec<Block> = Round::ALL.iter().map(|_| self.new_block()).collect();
        self.k.set_terminator(
            self.cur,
            Terminator::Table {
                index: frm,
                targets: modes.iter().map(|&b| BlockCall::new(b, &[])).collect(),
                default: BlockCall::new(bad, &[]),
            },
        );
        let mut params: Option<(Value, Option<Value>)> = None;
        for (&b, &round) in modes.iter().zip(Round::ALL.iter()) {
            self.cur = b;
            let (r, fl) = op(self, round);
            if params.is_none() {
                let ty = self.k.value_type(r);
                let p = self.k.add_block_param(join, ty);
                let pf = fl.map(|_| self.k.add_block_param(join, Type::I32));
                params = Some((p, pf));
            }
            let mut args = vec![r];
            args.extend(fl);
            self.k
                .set_terminator(b, Terminator::Jump(BlockCall::new(join, &args)));
        }
        self.cur = join;
        params.unwrap_or((Value::from_u32(0), None))
    }

    pub fn fp_arith(&mut self, op: FpArithOp, rd: FReg, rs1: FReg, rs2: FReg, rm: RoundingMode) {
        let (a, b) = (self.f(rs1), self.f(rs2));
        let op = match op {
            FpArithOp::Add => FBinOp::Add,
            FpArithOp::Sub => FBinOp::Sub,
            FpArithOp::Mul => FBinOp::Mul,
            FpArithOp::Div => FBinOp::Div,
        };
        let (r, fl) = self.with_rm(rm, |e, round| {
            let mode = e.fmode(round);
            e.fp_out(InstKind::FBinary { op, mode }, &[a, b])
        });
        self.accrue(fl);
        self.set_f(rd, r);
    }

    pub fn fsqrt(&mut self, rd: FReg, rs1: FReg, rm: RoundingMode) {
        let a = self.f(rs1);
        let (r, fl) = self.with_rm(rm, |e, round| {
            let mode = e.fmode(round);
            e.fp_out(
                InstKind::FUnary {
                    op: FUnOp::Sqrt,
                    mode,
                },
                &[a],
            )
        });
        self.accrue(fl);
        self.set_f(rd, r);
    }

    /// Exact sign flip of an f32 value's bits (no NaN rules: an sNaN stays one).
    fn flip_sign(&mut self, v: Value) -> Value {
        let bits = self.cast(CastOp::Bitcast, Type::I32, v);
        let x = self.bin_imm(IBinOp::Xor, bits, 0x8000_0000);
        self.cast(CastOp::Bitcast, Type::F32, x)
    }

    pub fn fma(&mut self, op: FmaOp, rd: FReg, srcs: [FReg; 3], rm: RoundingMode) {
        let [a, b, c] = srcs.map(|r| self.f(r));
        let (a, c) = match op {
            FmaOp::Madd => (a, c),
            FmaOp::Msub => (a, self.flip_sign(c)),
            FmaOp::Nmsub => (self.flip_sign(a), c),
            FmaOp::Nmadd => {
                let na = self.flip_sign(a);
                (na, self.flip_sign(c))
            }
        };
        let (r, fl) = self.with_rm(rm, |e, round| {
            let mode = e.fmode(round);
            e.fp_out(InstKind::Fma { mode }, &[a, b, c])
        });
        self.accrue(fl);
        self.set_f(rd, r);
    }

    pub fn fp_sign(&mut self, op: FpSignOp, rd: FReg, rs1: FReg, rs2: FReg) {
        let a = self.f(rs1);
        let b = self.f(rs2);
        let a = self.cast(CastOp::Bitcast, Type::I32, a);
        let b = self.cast(CastOp::Bitcast, Type::I32, b);
        let sign_b = self.bin_imm(IBinOp::And, b, 0x8000_0000);
        let r = match op {
            FpSignOp::Inject | FpSignOp::Negate => {
                let mag = self.bin_imm(IBinOp::And, a, 0x7fff_ffff);
                let s = if op == FpSignOp::Negate {
                    self.bin_imm(IBinOp::Xor, sign_b, 0x8000_0000)
                } else {
                    sign_b
                };
                self.bin(IBinOp::Or, mag, s)
            }
            FpSignOp::Xor => self.bin(IBinOp::Xor, a, sign_b),
        };
        let r = self.cast(CastOp::Bitcast, Type::F32, r);
        self.set_f(rd, r);
    }

    pub fn fp_minmax(&mut self, op: FpMinMaxOp, rd: FReg, rs1: FReg, rs2: FReg) {
        let (a, b) = (self.f(rs1), self.f(rs2));
        let op = match op {
            FpMinMaxOp::Min => FBinOp::Min,
            FpMinMaxOp::Max => FBinOp::Max,
        };
        let mode = self.fmode(Round::NearestEven);
        let (r, fl) = self.fp_out(InstKind::FBinary { op, mode }, &[a, b]);
        self.accrue(fl);
        self.set_f(rd, r);
    }

    pub fn fp_compare(&mut self, op: FpCmpOp, rd: XReg, rs1: FReg, rs2: FReg) {
        let (a, b) = (self.f(rs1), self.f(rs2));
        // feq is quiet; flt/fle signal invalid on any NaN.
        let cc = match op {
            FpCmpOp::Eq => FloatCC::Eq,
            FpCmpOp::Lt => FloatCC::Lt,
            FpCmpOp::Le => FloatCC::Le,
        };
        let mode = self.int_result_mode(Round::NearestEven);
        let (r, fl) = self.fp_out(InstKind::Fcmp { cc, mode }, &[a, b]);
        self.accrue(fl);
        let r = self.cast(CastOp::Zext, Type::I32, r);
        self.set_x(rd, r);
    }

    pub fn fclass(&mut self, rd: XReg, rs1: FReg) {
        let a = self.f(rs1);
        let mode = FloatMode {
            flags: false,
            ..self.int_result_mode(Round::NearestEven)
        };
        let r = self.ins(InstKind::Fclass { mode }, &[a]);
        self.set_x(rd, r);
    }

    pub fn fcvt_to_int(&mut self, rd: XReg, rs1: FReg, unsigned: bool, rm: RoundingMode) {
        let a = self.f(rs1);
        let (r, fl) = self.with_rm(rm, |e, round| {
            let mode = e.int_result_mode(round);
            e.fp_out(
                InstKind::FToI {
                    from: FloatFormat::F32,
                    to: Type::I32,
                    signed: !unsigned,
                    nan_to_max: true,
                    mode,
                },
                &[a],
            )
        });
        self.accrue(fl);
        self.set_x(rd, r);
    }

    pub fn fcvt_from_int(&mut self, rd: FReg, rs1: XReg, unsigned: bool, rm: RoundingMode) {
        let a = self.x(rs1);
        let (r, fl) = self.with_rm(rm, |e, round| {
            let mode = e.fmode(round);
            e.fp_out(
                InstKind::IToF {
                    to: FloatFormat::F32,
                    signed: !unsigned,
                    mode,
                },
                &[a],
            )
        });
        self.accrue(fl);
        self.set_f(rd, r);
    }

    pub fn fmv_to_int(&mut self, rd: XReg, rs1: FReg) {
        let a = self.f(rs1);
        let r = self.cast(CastOp::Bitcast, Type::I32, a);
        self.set_x(rd, r);
    }

    pub fn fmv_from_int(&mut self, rd: FReg, rs1: XReg) {
        let a = self.x(rs1);
        let r = self.cast(CastOp::Bitcast, Type::F32, a);
        self.set_f(rd, r);
    }

    /// Custom conversions (datasheet §7): rm ignored (RNE), narrowing saturates
    /// (except bf16) and zero-extends into fd, widening reads only the low bits.
    pub fn lp_convert(&mut self, fmt: LpFormat, dir: LpDirection, rd: FReg, rs1: FReg) {
        let a = self.f(rs1);
        let ff = lp_format(fmt);
        let storage = ff.storage();
        let base = self.fmode(Round::NearestEven);
        let r = match dir {
            LpDirection::Narrow => {
                let mode = FloatMode {
                    // bf16 NaN -> 0x7fc0; e4m3/e5m2/e2m1 keep the IR's OCP NaN rules
                    // (sign kept; e2m1 gives +-6).
                    nan: if fmt == LpFormat::Bf16 {
                        NanMode::Canonical(0x7fc0)
                    } else {
                        NanMode::Propagate
                    },
                    sat: fmt != LpFormat::Bf16,
                    ..base
                };
                let (r, fl) = self.fp_out(
                    InstKind::Fcvt {
                        from: FloatFormat::F32,
                        to: ff,
                        mode,
                    },
                    &[a],
                );
                self.accrue(fl);
                let wide = self.cast(CastOp::Zext, Type::I32, r);
                self.cast(CastOp::Bitcast, Type::F32, wide)
            }
            LpDirection::Widen => {
                let bits = self.cast(CastOp::Bitcast, Type::I32, a);
                let mut low = self.cast(CastOp::Trunc, storage, bits);
                if fmt == LpFormat::E2m1 {
                    let m = self.iconst(Type::I8, 0xf);
                    low = self.bin(IBinOp::And, low, m);
                }
                let (r, fl) = self.fp_out(
                    InstKind::Fcvt {
                        from: ff,
                        to: FloatFormat::F32,
                        mode: base,
                    },
                    &[low],
                );
                self.accrue(fl);
                r
            }
        };
        self.set_f(rd, r);
    }
}
