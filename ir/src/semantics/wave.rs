//! Cross-lane results over one wave: ballot, votes, first/elect, lane reads,
//! shuffles, reductions and scans.
//!
//! A pure function of the wave's inputs, so the interpreter and the JIT (as a host
//! helper) compute the same bits. Lane `i` of the slices is lane `i` of the wave.
//!
//! Rules (on top of the `InstKind` doc comments):
//! - A lane *participates* when it executes the instruction (`executing[i]`) and its
//!   `mask` argument (argument 0) is true. Every executing lane gets a result,
//!   masked-off ones included; non-executing lanes' `out` slots are left untouched.
//! - `Ballot` sets bit `i` for participating lanes with `cond`; lanes 64 and above
//!   have no bit.
//! - `ReadLane` is `Shuffle(Index)`: a lane outside the wave or not participating
//!   yields the reading lane's own value. Lane numbers (`i32` arguments) are read as
//!   unsigned 32-bit; `Up` reads lane `self - n` (outside if negative), `Down`
//!   `self + n`, `Xor` `self ^ n`.
//! - Reductions fold participating lanes in increasing lane order, starting from the
//!   first participating value (no identity folded in); with no participants they
//!   give the identity. Scans: an inclusive scan of a participating lane folds the
//!   participating lanes up to and including it; every other case (exclusive scans,
//!   non-participating lanes) folds the participating lanes strictly below it.
//! - Identities: Add/Or/Xor/MaxU 0, Mul 1, And/MinU all ones, MinS the type's
//!   signed maximum, MaxS its signed minimum, FAdd +0.0, FMin +inf, FMax -inf.
//! - Float folds use `eval_pure` of `FBinary { Add | Min | Max, FloatMode::IEEE }`,
//!   so they follow exactly the per-lane float semantics.

use crate::float_mode::FloatMode;
use crate::inst::{FBinOp, InstKind, ReduceOp, ShuffleKind};
use crate::types::Type;

/// Evaluates the cross-lane instruction `kind` over one wave.
///
/// `arg_tys` are the instruction's argument types; `args[k][i]` is argument `k` of
/// wave lane `i` (read only where `executing[i]`); `out[i]` receives the result of
/// lane `i` for every executing lane. Every slice must be at least as long as
/// `executing`. Returns false (and writes nothing) when `kind` is not a cross-lane
/// operation, the arguments do not fit it, or a slice is too short.
pub fn eval_wave(
    kind: &InstKind,
    arg_tys: &[Type],
    executing: &[bool],
    args: &[&[u64]],
    out: &mut [u64],
) -> bool {
    let n = executing.len();
    let arity = match kind {
        InstKind::FirstActive | InstKind::Elect => 1,
        InstKind::Ballot
        | InstKind::VoteAny
        | InstKind::VoteAll
        | InstKind::ReadFirst
        | InstKind::Reduce(_)
        | InstKind::Scan { .. } => 2,
        InstKind::ReadLane | InstKind::Shuffle(_) => 3,
        _ => return false,
    };
    if args.len() != arity
        || arg_tys.len() != arity
        || out.len() < n
        || args.iter().any(|a| a.len() < n)
    {
        return false;
    }
    let part: Vec<bool> = (0..n)
        .map(|i| executing[i] && args[0][i] & 1 != 0)
        .collect();
    let first = part.iter().position(|&p| p);
    let write_all = |out: &mut [u64], v: u64| {
        for (o, _) in out.iter_mut().zip(executing).filter(|(_, e)| **e) {
            *o = v;
        }
    };
    match kind {
        InstKind::Ballot => {
            let bits = (0..n.min(64))
                .filter(|&i| part[i] && args[1][i] & 1 != 0)
                .fold(0u64, |acc, i| acc | 1 << i);
            write_all(out, bits);
        }
        InstKind::VoteAny => {
            let any = (0..n).any(|i| part[i] && args[1][i] & 1 != 0);
            write_all(out, u64::from(any));
        }
        InstKind::VoteAll => {
            let all = (0..n).all(|i| !part[i] || args[1][i] & 1 != 0);
            write_all(out, u64::from(all));
        }
        InstKind::FirstActive => {
            let v = first.map_or(u64::from(u32::MAX), |i| i as u64 & 0xffff_ffff);
            write_all(out, v);
        }
        InstKind::Elect => {
            for i in (0..n).filter(|&i| executing[i]) {
                out[i] = u64::from(Some(i) == first);
            }
        }
        InstKind::ReadFirst => {
            // No participant: every lane keeps its own value (nothing to read).
            for i in (0..n).filter(|&i| executing[i]) {
                out[i] = first.map_or(args[1][i], |f| args[1][f]);
            }
        }
        InstKind::ReadLane | InstKind::Shuffle(_) => {
            let shuffle = match kind {
                InstKind::Shuffle(s) => *s,
                _ => ShuffleKind::Index,
            };
            for i in (0..n).filter(|&i| executing[i]) {
                let k = args[2][i] & 0xffff_ffff;
                let src = match shuffle {
                    ShuffleKind::Index => Some(k),
                    ShuffleKind::Xor => Some(i as u64 ^ k),
                    ShuffleKind::Up => (i as u64).checked_sub(k),
                    ShuffleKind::Down => Some(i as u64 + k),
                };
                out[i] = match src.and_then(|s| usize::try_from(s).ok()) {
                    Some(s) if s < n && part[s] => args[1][s],
                    _ => args[1][i],
                };
            }
        }
        InstKind::Reduce(op) => {
            let ty = arg_tys[1];
            let mut acc: Option<u64> = None;
            for i in (0..n).filter(|&i| part[i]) {
                match fold(*op, ty, acc, args[1][i]) {
                    Some(v) => acc = Some(v),
                    None => return false,
                }
            }
            write_all(out, acc.unwrap_or_else(|| identity(*op, ty)));
        }
        InstKind::Scan { op, inclusive } => {
            let ty = arg_tys[1];
            // Results are computed first so that a failing fold writes nothing.
            let mut results = vec![0u64; n];
            let mut acc: Option<u64> = None;
            for i in 0..n {
                let below = acc;
                if part[i] {
                    match fold(*op, ty, acc, args[1][i]) {
                        Some(v) => acc = Some(v),
                        None => return false,
                    }
                }
                let prefix = if part[i] && *inclusive { acc } else { below };
                results[i] = prefix.unwrap_or_else(|| identity(*op, ty));
            }
            for i in (0..n).filter(|&i| executing[i]) {
                out[i] = results[i];
            }
        }
        _ => return false,
    }
    true
}

/// The identity of a reduction operator for values of type `ty`.
pub fn identity(op: ReduceOp, ty: Type) -> u64 {
    let mask = ty.mask();
    let sign = 1u64 << (ty.bits() - 1);
    match op {
        ReduceOp::Add | ReduceOp::Or | ReduceOp::Xor | ReduceOp::MaxU => 0,
        ReduceOp::Mul => 1,
        ReduceOp::And | ReduceOp::MinU => mask,
        ReduceOp::MinS => mask >> 1,
        ReduceOp::MaxS => sign,
        ReduceOp::FAdd => 0,
        ReduceOp::FMin => float_inf(ty, false),
        ReduceOp::FMax => float_inf(ty, true),
    }
}

fn float_inf(ty: Type, negative: bool) -> u64 {
    let (bits, sign) = match ty {
        Type::F16 => (0x7c00, 0x8000),
        Type::F64 => (0x7ff0_0000_0000_0000, 1 << 63),
        _ => (0x7f80_0000, 0x8000_0000),
    };
    if negative { bits | sign } else { bits }
}

/// `acc op v` (or `v` when nothing is accumulated yet); `None` when the float
/// semantics cannot evaluate it.
fn fold(op: ReduceOp, ty: Type, acc: Option<u64>, v: u64) -> Option<u64> {
    let mask = ty.mask();
    let v = v & mask;
    let Some(a) = acc else { return Some(v) };
    let bits = ty.bits();
    let sext = |x: u64| ((x << (64 - bits)) as i64) >> (64 - bits);
    let r = match op {
        ReduceOp::Add => a.wrapping_add(v),
        ReduceOp::Mul => a.wrapping_mul(v),
        ReduceOp::MinU => a.min(v),
        ReduceOp::MaxU => a.max(v),
        ReduceOp::MinS => sext(a).min(sext(v)) as u64,
        ReduceOp::MaxS => sext(a).max(sext(v)) as u64,
        ReduceOp::And => a & v,
        ReduceOp::Or => a | v,
        ReduceOp::Xor => a ^ v,
        ReduceOp::FAdd | ReduceOp::FMin | ReduceOp::FMax => {
            let fop = match op {
                ReduceOp::FAdd => FBinOp::Add,
                ReduceOp::FMin => FBinOp::Min,
                _ => FBinOp::Max,
            };
            let kind = InstKind::FBinary {
                op: fop,
                mode: FloatMode::IEEE,
            };
            let mut out = [0u64];
            if !super::eval_pure(&kind, &[ty, ty], &[a, v], &mut out) {
                return None;
            }
            out[0]
        }
    };
    Some(r & mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: InstKind, tys: &[Type], exec: &[bool], args: &[&[u64]]) -> Vec<u64> {
        let mut out = vec![0xdead; exec.len()];
        assert!(eval_wave(&kind, tys, exec, args, &mut out));
        out
    }

    #[test]
    fn ballot_counts_only_participating_lanes_with_cond() {
        let exec = [true, true, false, true];
        let mask = [1, 0, 1, 1];
        let cond = [1, 1, 1, 1];
        let out = run(
            InstKind::Ballot,
            &[Type::I1, Type::I1],
            &exec,
            &[&mask, &cond],
        );
        assert_eq!(out, vec![0b1001, 0b1001, 0xdead, 0b1001]);
    }

    #[test]
    fn elect_and_first_active_pick_lowest_participant() {
        let exec = [false, true, true, true];
        let mask = [1, 0, 1, 1];
        let out = run(InstKind::Elect, &[Type::I1], &exec, &[&mask]);
        assert_eq!(out, vec![0xdead, 0, 1, 0]);
        let out = run(InstKind::FirstActive, &[Type::I1], &exec, &[&mask]);
        assert_eq!(out, vec![0xdead, 2, 2, 2]);
        let none = [0, 0, 0, 0];
        let out = run(InstKind::FirstActive, &[Type::I1], &exec, &[&none]);
        assert_eq!(out, vec![0xdead, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff]);
    }

    #[test]
    fn shuffle_falls_back_to_own_value() {
        let exec = [true; 4];
        let mask = [1, 1, 0, 1];
        let v = [10, 11, 12, 13];
        let up = [1, 1, 1, 1];
        let out = run(
            InstKind::Shuffle(ShuffleKind::Up),
            &[Type::I1, Type::I32, Type::I32],
            &exec,
            &[&mask, &v, &up],
        );
        // lane 0: -1 outside; lane 3 reads lane 2 which is masked off.
        assert_eq!(out, vec![10, 10, 11, 13]);
    }

    #[test]
    fn signed_scan_and_reduce_with_gaps() {
        let exec = [true; 5];
        let mask = [1, 0, 1, 1, 0];
        let v = [3, 100, 0xffff_fffe, 5, 7]; // 3, -, -2, 5, -
        let tys = [Type::I1, Type::I32];
        let out = run(InstKind::Reduce(ReduceOp::MinS), &tys, &exec, &[&mask, &v]);
        assert_eq!(out, vec![0xffff_fffe; 5]);
        let incl = InstKind::Scan {
            op: ReduceOp::Add,
            inclusive: true,
        };
        let out = run(incl, &tys, &exec, &[&mask, &v]);
        assert_eq!(out, vec![3, 3, 1, 6, 6]);
        let excl = InstKind::Scan {
            op: ReduceOp::Add,
            inclusive: false,
        };
        let out = run(excl, &tys, &exec, &[&mask, &v]);
        assert_eq!(out, vec![0, 3, 3, 1, 6]);
    }

    #[test]
    fn identities_with_no_participant() {
        let exec = [true; 2];
        let mask = [0, 0];
        let v = [1, 2];
        let tys = [Type::I1, Type::I16];
        let out = run(InstKind::Reduce(ReduceOp::MinS), &tys, &exec, &[&mask, &v]);
        assert_eq!(out, vec![0x7fff; 2]);
        let out = run(InstKind::Reduce(ReduceOp::MaxS), &tys, &exec, &[&mask, &v]);
        assert_eq!(out, vec![0x8000; 2]);
        let ftys = [Type::I1, Type::F32];
        let out = run(InstKind::Reduce(ReduceOp::FMin), &ftys, &exec, &[&mask, &v]);
        assert_eq!(out, vec![0x7f80_0000; 2]);
    }
}
