//! `eval_pure` over every pure kind: it accepts every valid signature, writes
//! exactly the results the signature names, keeps them within their types, and
//! never panics on any bits.

use wavejit_ir::semantics::eval_pure;
use wavejit_ir::{
    CastOp, Denorm, FBinOp, FUnOp, FloatCC, FloatFormat, FloatMode, IBinOp, IUnOp, InstKind, IntCC,
    NanMode, Round, SpecialFn, Type,
};

const INTS: [Type; 4] = [Type::I8, Type::I16, Type::I32, Type::I64];
const FLOATS: [Type; 3] = [Type::F16, Type::F32, Type::F64];

fn modes() -> Vec<FloatMode> {
    let mut v = Vec::new();
    for round in Round::ALL {
        for (flush, flags, sat) in [
            (false, false, false),
            (true, true, false),
            (true, false, true),
            (false, true, true),
        ] {
            let d = if flush {
                Denorm::FlushKeepSign
            } else {
                Denorm::Preserve
            };
            v.push(FloatMode {
                denorm_in: d,
                denorm_out: d,
                nan: if flush {
                    NanMode::Canonical(0x7fc0_0000)
                } else {
                    NanMode::Propagate
                },
                round,
                sat,
                flags,
            });
        }
    }
    v
}

fn all_kinds() -> Vec<(InstKind, Vec<Type>)> {
    let mut k = Vec::new();
    for t in INTS {
        for &op in IBinOp::ALL {
            k.push((InstKind::IBinary(op), vec![t, t]));
        }
        for &op in IUnOp::ALL {
            k.push((InstKind::IUnary(op), vec![t]));
        }
        for &cc in IntCC::ALL {
            k.push((InstKind::Icmp(cc), vec![t, t]));
        }
        k.push((
            InstKind::BitExtract { signed: true },
            vec![t, Type::I32, Type::I32],
        ));
        k.push((
            InstKind::BitExtract { signed: false },
            vec![t, Type::I32, Type::I32],
        ));
        k.push((InstKind::BitInsert, vec![t, t, Type::I32, Type::I32]));
        k.push((InstKind::Select, vec![Type::I1, t, t]));
        for to in INTS {
            for op in [CastOp::Zext, CastOp::Sext, CastOp::Trunc] {
                let kind = InstKind::Cast { op, to };
                if kind.signature(&[t]).is_ok() {
                    k.push((kind, vec![t]));
                }
            }
        }
    }
    for t in FLOATS {
        let bc = InstKind::Cast {
            op: CastOp::Bitcast,
            to: t.as_int(),
        };
        k.push((bc, vec![t]));
    }
    for mode in modes() {
        for t in FLOATS {
            for op in [
                FBinOp::Add,
                FBinOp::Sub,
                FBinOp::Mul,
                FBinOp::Div,
                FBinOp::Min,
                FBinOp::Max,
                FBinOp::Minimum,
                FBinOp::Maximum,
                FBinOp::Copysign,
            ] {
                k.push((InstKind::FBinary { op, mode }, vec![t, t]));
            }
            for op in [
                FUnOp::Neg,
                FUnOp::Abs,
                FUnOp::Sqrt,
                FUnOp::Floor,
                FUnOp::Ceil,
                FUnOp::Trunc,
                FUnOp::Nearest,
            ] {
                k.push((InstKind::FUnary { op, mode }, vec![t]));
            }
            for func in [
                SpecialFn::Rcp,
                SpecialFn::Rsqrt,
                SpecialFn::Exp2,
                SpecialFn::Log2,
                SpecialFn::Sin,
                SpecialFn::Cos,
            ] {
                k.push((InstKind::Special { func, mode }, vec![t]));
            }
            k.push((InstKind::Fma { mode }, vec![t, t, t]));
            k.push((
                InstKind::Fcmp {
                    cc: FloatCC::Ult,
                    mode,
                },
                vec![t, t],
            ));
            k.push((InstKind::Fclass { mode }, vec![t]));
        }
        k.push((InstKind::PowFixup { mode }, vec![Type::F32; 3]));
        for from in FloatFormat::ALL {
            for to in FloatFormat::ALL {
                if from != to {
                    k.push((InstKind::Fcvt { from, to, mode }, vec![from.storage()]));
                }
            }
            for to in INTS {
                for (signed, nan_to_max) in [(true, true), (false, false)] {
                    k.push((
                        InstKind::FToI {
                            from,
                            to,
                            signed,
                            nan_to_max,
                            mode,
                        },
                        vec![from.storage()],
                    ));
                }
                k.push((
                    InstKind::IToF {
                        to: from,
                        signed: true,
                        mode,
                    },
                    vec![to],
                ));
                k.push((
                    InstKind::IToF {
                        to: from,
                        signed: false,
                        mode,
                    },
                    vec![to],
                ));
            }
        }
    }
    k
}

#[test]
fn every_pure_kind_fills_its_signature() {
    let mut rng = 0x1357_9bdf_2468_ace0u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let kinds = all_kinds();
    assert!(kinds.len() > 4500, "{}", kinds.len());
    for (kind, tys) in &kinds {
        let results = kind
            .signature(tys)
            .unwrap_or_else(|e| panic!("{kind:?} {tys:?}: {e}"));
        for _ in 0..40 {
            let args: Vec<u64> = tys.iter().map(|t| next() & t.mask()).collect();
            let mut out = vec![u64::MAX; results.len()];
            assert!(eval_pure(kind, tys, &args, &mut out), "{kind:?}");
            for (v, t) in out.iter().zip(&results) {
                assert_eq!(v & !t.mask(), 0, "{kind:?} {args:x?} -> {out:x?}");
            }
            if let Some(flags) = (results.len() == 2).then(|| out[1]) {
                assert_eq!(flags & !0x1f, 0, "{kind:?}");
            }
            // Too few output slots: refused, nothing written.
            let mut short = vec![7u64; results.len() - 1];
            assert!(!eval_pure(kind, tys, &args, &mut short));
            assert!(short.iter().all(|&v| v == 7));
        }
    }
}
