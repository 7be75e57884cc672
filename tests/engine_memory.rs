//! Memory accesses on every engine: vectors, narrow loads (sign/zero extension),
//! truncating stores, uniform and private spaces, little-endian layout.

mod common;

use common::*;
use wavejit_ir::{AddrSpace, Builtin, FBinOp, FloatMode, IBinOp, InstKind, MemAccess, Type, Value};

fn access(space: AddrSpace, ty: Type, bits: u8, count: u8, signed: bool) -> MemAccess {
    MemAccess {
        space,
        ty,
        bits,
        count,
        signed,
        align: u32::from(bits) / 8,
    }
}

/// Lane `l` loads 4 x i32 at in + 16 l and stores them reversed, plus l, at
/// out + 16 l with one vector store.
#[test]
fn vector_loads_and_stores() {
    let mut kb = Kb::new("vec4");
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let inb = buffer(&mut b, 0);
        let src = elem(&mut b, inb, lid, 16);
        let v = b.inst(
            InstKind::Load(access(AddrSpace::Global, Type::I32, 32, 4, false)),
            &[src],
        );
        let outb = buffer(&mut b, 1);
        let dst = elem(&mut b, outb, lid, 16);
        let mut args = vec![dst];
        for &x in v.iter().rev() {
            args.push(bin(&mut b, IBinOp::Add, x, lid));
        }
        b.ins(
            InstKind::Store(access(AddrSpace::Global, Type::I32, 32, 4, false)),
            &args,
        );
        b.exit();
    }
    let k = kb.finish();
    let input: Vec<u32> = (0..32).map(|i| i * 1000 + 7).collect();
    let expect: Vec<u32> = (0..8u32)
        .flat_map(|l| (0..4u32).rev().map(move |j| (l * 4 + j) * 1000 + 7 + l))
        .collect();
    for (engine, out) in run_u32(&k, &dispatch_1d(1, 8, 4), &[input.clone(), vec![0; 32]]) {
        assert_eq!(out[1], expect, "engine {engine}");
    }
}

/// Narrow loads extend by `signed`; into i32 and i64 results.
#[test]
fn narrow_loads_sign_or_zero_extend() {
    let bytes: Vec<u8> = vec![0x80, 0x7f, 0xff, 0x01, 0x00, 0x80, 0xfe, 0xff];
    // (access, byte offset, expected result as u64)
    let cases: Vec<(MemAccess, u32, u64)> = vec![
        (
            access(AddrSpace::Global, Type::I32, 8, 1, true),
            0,
            0xffff_ff80,
        ),
        (access(AddrSpace::Global, Type::I32, 8, 1, false), 0, 0x80),
        (access(AddrSpace::Global, Type::I32, 8, 1, true), 1, 0x7f),
        (
            access(AddrSpace::Global, Type::I32, 16, 1, true),
            4,
            0xffff_8000,
        ),
        (
            access(AddrSpace::Global, Type::I32, 16, 1, false),
            4,
            0x8000,
        ),
        (
            access(AddrSpace::Global, Type::I64, 8, 1, true),
            0,
            0xffff_ffff_ffff_ff80,
        ),
        (
            access(AddrSpace::Global, Type::I64, 32, 1, true),
            4,
            0xffff_ffff_fffe_8000,
        ),
        (
            access(AddrSpace::Global, Type::I64, 32, 1, false),
            4,
            0xfffe_8000,
        ),
        (access(AddrSpace::Global, Type::I16, 8, 1, true), 2, 0xffff),
        (access(AddrSpace::Global, Type::I8, 8, 1, false), 6, 0xfe),
    ];
    for (n, (a, off, want)) in cases.into_iter().enumerate() {
        let mut kb = Kb::new("narrow");
        let entry = kb.entry();
        {
            let mut b = kb.at(entry);
            let base = buffer(&mut b, 0);
            let o = c64(&mut b, u64::from(off));
            let addr = bin(&mut b, IBinOp::Add, base, o);
            let v = b.ins(InstKind::Load(a), &[addr]);
            let wide: Value = if a.ty == Type::I64 {
                v
            } else {
                b.ins(
                    InstKind::Cast {
                        op: wavejit_ir::CastOp::Zext,
                        to: Type::I64,
                    },
                    &[v],
                )
            };
            let outb = buffer(&mut b, 1);
            store(&mut b, AddrSpace::Global, outb, wide);
            b.exit();
        }
        let k = kb.finish();
        for e in engines() {
            let run = run_with(
                e.as_ref(),
                &k,
                dispatch_1d(1, 1, 1),
                &[bytes.clone(), vec![0; 8]],
                &[],
            );
            run.ok(e.name());
            assert_eq!(
                run.u64s(1),
                vec![want],
                "engine {}: case {n} {a:?} at {off}",
                e.name()
            );
        }
    }
}

/// A vector of four signed bytes into i32 values.
#[test]
fn narrow_vector_load() {
    let mut kb = Kb::new("bytes4");
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let base = buffer(&mut b, 0);
        let v = b.inst(
            InstKind::Load(access(AddrSpace::Global, Type::I32, 8, 4, true)),
            &[base],
        );
        let outb = buffer(&mut b, 1);
        let mut args = vec![outb];
        args.extend(v);
        b.ins(
            InstKind::Store(access(AddrSpace::Global, Type::I32, 32, 4, false)),
            &args,
        );
        b.exit();
    }
    let k = kb.finish();
    for e in engines() {
        let run = run_with(
            e.as_ref(),
            &k,
            dispatch_1d(1, 1, 1),
            &[vec![0x01, 0x80, 0xff, 0x7f], vec![0; 16]],
            &[],
        );
        run.ok(e.name());
        assert_eq!(
            run.u32s(1),
            vec![1, 0xffff_ff80, 0xffff_ffff, 0x7f],
            "engine {}",
            e.name()
        );
    }
}

/// Narrow stores keep the low bytes, little-endian.
#[test]
fn narrow_stores_truncate() {
    let mut kb = Kb::new("trunc");
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let base = buffer(&mut b, 0);
        let v = c32(&mut b, 0x1234_5678);
        b.ins(
            InstKind::Store(access(AddrSpace::Global, Type::I32, 8, 1, false)),
            &[base, v],
        );
        let two = c64(&mut b, 2);
        let at2 = bin(&mut b, IBinOp::Add, base, two);
        b.ins(
            InstKind::Store(access(AddrSpace::Global, Type::I32, 16, 1, false)),
            &[at2, v],
        );
        let w = c64(&mut b, 0x0102_0304_0506_0708);
        let four = c64(&mut b, 4);
        let at4 = bin(&mut b, IBinOp::Add, base, four);
        b.ins(
            InstKind::Store(access(AddrSpace::Global, Type::I64, 32, 1, false)),
            &[at4, w],
        );
        let eight = c64(&mut b, 8);
        let at8 = bin(&mut b, IBinOp::Add, base, eight);
        store(&mut b, AddrSpace::Global, at8, w);
        b.exit();
    }
    let k = kb.finish();
    for e in engines() {
        let run = run_with(e.as_ref(), &k, dispatch_1d(1, 1, 1), &[vec![0xaa; 17]], &[]);
        run.ok(e.name());
        assert_eq!(
            run.bufs[0],
            vec![
                0x78, 0xaa, 0x78, 0x56, 0x08, 0x07, 0x06, 0x05, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03,
                0x02, 0x01, 0xaa
            ],
            "engine {}",
            e.name()
        );
    }
}

/// Uniform bytes after the buffer addresses, read per lane.
#[test]
fn uniform_reads() {
    let mut kb = Kb::new("uniforms");
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let two = c32(&mut b, 2);
        let eight = c32(&mut b, 8);
        let off = bin(&mut b, IBinOp::Mul, lid, two);
        let at = bin(&mut b, IBinOp::Add, off, eight);
        let v = b.ins(
            InstKind::Load(access(AddrSpace::Uniform, Type::I32, 16, 1, true)),
            &[at],
        );
        store_out(&mut b, 0, lid, v);
        b.exit();
    }
    let k = kb.finish();
    let extra: Vec<u8> = vec![0x01, 0x00, 0xff, 0xff, 0x34, 0x12, 0x00, 0x80];
    for e in engines() {
        let run = run_with(
            e.as_ref(),
            &k,
            dispatch_1d(1, 4, 4),
            &[u32_bytes(&[0; 4])],
            &extra,
        );
        run.ok(e.name());
        assert_eq!(
            run.u32s(0),
            vec![1, 0xffff_ffff, 0x1234, 0xffff_8000],
            "engine {}",
            e.name()
        );
    }
}

/// Private memory belongs to one lane and starts zeroed in every workgroup: each
/// lane reads slot lid % 4 (zero), writes lid + 1 there and to slot 3, and reads
/// both back.
#[test]
fn private_memory_is_per_lane_and_zeroed() {
    let mut kb = Kb::new("private");
    kb.kernel.private_size = 16;
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let gid = global_id(&mut b);
        let three = c32(&mut b, 3);
        let four = c32(&mut b, 4);
        let slot = bin(&mut b, IBinOp::And, lid, three);
        let off = bin(&mut b, IBinOp::Mul, slot, four);
        let before = load(&mut b, AddrSpace::Private, Type::I32, off);
        let one = c32(&mut b, 1);
        let v = bin(&mut b, IBinOp::Add, lid, one);
        store(&mut b, AddrSpace::Private, off, v);
        let twelve = c32(&mut b, 12);
        let hundred = c32(&mut b, 100);
        let w = bin(&mut b, IBinOp::Add, v, hundred);
        store(&mut b, AddrSpace::Private, twelve, w);
        let after = load(&mut b, AddrSpace::Private, Type::I32, off);
        let last = load(&mut b, AddrSpace::Private, Type::I32, twelve);
        let k = c32(&mut b, 3);
        let base = bin(&mut b, IBinOp::Mul, gid, k);
        store_out(&mut b, 0, base, before);
        let b1 = bin(&mut b, IBinOp::Add, base, one);
        store_out(&mut b, 0, b1, after);
        let b2 = bin(&mut b, IBinOp::Add, b1, one);
        store_out(&mut b, 0, b2, last);
        b.exit();
    }
    let k = kb.finish();
    let expect: Vec<u32> = (0..2)
        .flat_map(|_| 0..6u32)
        .flat_map(|l| {
            let after = if l % 4 == 3 { l + 101 } else { l + 1 };
            [0, after, l + 101]
        })
        .collect();
    for (engine, out) in run_u32(&k, &dispatch_1d(2, 6, 4), &[vec![9; 36]]) {
        assert_eq!(out[0], expect, "engine {engine}");
    }
}

/// Lanes write 16-bit halves of shared words; after a barrier, whole words read
/// back little-endian. Also f64 arithmetic through global memory.
#[test]
fn shared_halves_and_f64_values() {
    let mut kb = Kb::new("halves");
    kb.kernel.shared_size = 16;
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let two = c32(&mut b, 2);
        let off = bin(&mut b, IBinOp::Mul, lid, two);
        let k = c32(&mut b, 0xa000);
        let v = bin(&mut b, IBinOp::Add, lid, k);
        b.ins(
            InstKind::Store(access(AddrSpace::Shared, Type::I32, 16, 1, false)),
            &[off, v],
        );
        b.ins(InstKind::Barrier, &[]);
        let four = c32(&mut b, 4);
        let three = c32(&mut b, 3);
        let slot = bin(&mut b, IBinOp::And, lid, three);
        let woff = bin(&mut b, IBinOp::Mul, slot, four);
        let word = load(&mut b, AddrSpace::Shared, Type::I32, woff);
        store_out(&mut b, 0, lid, word);
        // f64: out2[lid] = in[lid] * 0.5 + in[lid]
        let x = load_in(&mut b, 1, lid, Type::F64);
        let half = b.iconst(Type::F64, 0.5f64.to_bits());
        let m = b.ins(
            InstKind::FBinary {
                op: FBinOp::Mul,
                mode: FloatMode::IEEE,
            },
            &[x, half],
        );
        let s = b.ins(
            InstKind::FBinary {
                op: FBinOp::Add,
                mode: FloatMode::IEEE,
            },
            &[m, x],
        );
        store_out(&mut b, 2, lid, s);
        b.exit();
    }
    let k = kb.finish();
    let xs: Vec<f64> = (0..8).map(|i| f64::from(i) * 1.1e300 - 3.0).collect();
    let xs_bits: Vec<u64> = xs.iter().map(|x| x.to_bits()).collect();
    for e in engines() {
        let run = run_with(
            e.as_ref(),
            &k,
            dispatch_1d(1, 8, 4),
            &[u32_bytes(&[0; 8]), u64_bytes(&xs_bits), u64_bytes(&[0; 8])],
            &[],
        );
        run.ok(e.name());
        let words: Vec<u32> = (0..8u32)
            .map(|l| {
                let s = l % 4;
                (0xa000 + 2 * s) | (0xa000 + 2 * s + 1) << 16
            })
            .collect();
        assert_eq!(run.u32s(0), words, "engine {}", e.name());
        let want: Vec<u64> = xs.iter().map(|x| (x * 0.5 + x).to_bits()).collect();
        assert_eq!(run.u64s(2), want, "engine {}", e.name());
    }
}
