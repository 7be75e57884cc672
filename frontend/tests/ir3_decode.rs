//! Typed decoding spot checks: the fields a lifter reads, for representative
//! instructions of every category (words from mesa's vectors).

use wavejit_frontend::ir3::{self, FieldValue, Operand, OperandKind as K, field};

fn op(kind: K) -> Operand {
    Operand {
        kind,
        half: false,
        neg: false,
        abs: false,
        repeat_inc: false,
        last: false,
    }
}
fn half(kind: K) -> Operand {
    Operand {
        half: true,
        ..op(kind)
    }
}
fn dec(word: u64) -> ir3::Instr {
    ir3::decode(word).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn cat0_branches_and_flow() {
    let i = dec(0x00800000fffffffc); // br p0.x, #-4
    assert_eq!((i.cat, i.encoding, i.mnemonic.as_str()), (0, "br", "br"));
    assert_eq!(i.get(field::IMMED), Some(-4));
    assert_eq!(i.branch_target(10), Some(6));
    assert_eq!(
        (i.get(field::INV1), i.get(field::COMP1)),
        (Some(0), Some(0))
    );
    let i = dec(0x0090602000000007); // brao !p0.x, !p0.y, #7
    assert_eq!(
        (
            i.get(field::INV1),
            i.get(field::COMP1),
            i.get(field::INV2),
            i.get(field::COMP2)
        ),
        (Some(1), Some(0), Some(1), Some(1))
    );
    let i = dec(0x008000630000001e); // brac.3 #30
    assert_eq!(
        (i.encoding, i.get(field::INDEX), i.get(field::IMMED)),
        ("brac", Some(3), Some(30))
    );
    let i = dec(0x0000020000000000); // (rpt2)nop
    assert_eq!((i.encoding, i.repeat), ("nop", 2));
    let i = dec(0x0402100000000000); // (ss)shpe
    assert!(i.flags.ss && !i.flags.sy);
    let i = dec(0x0222000000000004); // getlast.w8 #4
    assert_eq!(
        (i.mnemonic.as_str(), i.get(field::CLUSTER_SIZE)),
        ("getlast.w8", Some(8))
    );
}

#[test]
fn cat1_moves() {
    let i = dec(0x2015000000000000); // cov.s32s16 hr0.x, r0.x
    assert_eq!((i.encoding, i.mnemonic.as_str()), ("mov-gpr", "cov.s32s16"));
    assert_eq!(i.dsts, vec![half(K::Gpr(0))]);
    assert_eq!(i.srcs, vec![op(K::Gpr(0))]);
    assert_eq!(
        (i.get(field::SRC_TYPE), i.get(field::DST_TYPE)),
        (Some(5), Some(4))
    );
    let i = dec(0x2015600400000c11); // (ul)mov.s32s32 r1.x, c<a0.x + 17>
    assert!(i.flags.ul);
    assert_eq!(i.srcs, vec![op(K::RelConst(17))]);
    let i = dec(0x2017400400000008); // mov.s32s32 r<a0.x + 4>, r2.x
    assert_eq!(i.dsts, vec![op(K::RelGpr(4))]);
    assert_eq!(i.srcs, vec![op(K::Gpr(8))]);
    let i = dec(0x2024490500000410); // (rpt1)mov.f32f32 r1.y, (r)c260.x
    assert_eq!(i.repeat, 1);
    assert_eq!(
        i.srcs,
        vec![Operand {
            repeat_inc: true,
            ..op(K::Const(1040))
        }]
    );
    let i = dec(0x204440003f800000); // mov.f32f32 r0.x, (1.000000)
    assert_eq!(
        i.srcs,
        vec![op(K::FloatImm {
            bits: 0x3f80_0000,
            width: 32
        })]
    );
    let i = dec(0x2040000500003900); // mov.f16f16 hr1.y, h(0.625000)
    assert_eq!(
        i.srcs,
        vec![half(K::FloatImm {
            bits: 0x3900,
            width: 16
        })]
    );
    assert_eq!(i.dsts, vec![half(K::Gpr(5))]);
    let i = dec(0x205100050000ffff); // mov.s16s16 hr1.y, -1
    assert_eq!(i.srcs, vec![op(K::Imm(-1))]);
    let i = dec(0x201100f400000000); // mova a0.x, hr0.x
    assert_eq!(i.mnemonic, "mova");
    assert_eq!(i.dsts[0].kind, K::Gpr(0xf4));
    let i = dec(0x201108f400000000); // mova.u a0.x, (r)hr0.x
    assert_eq!(i.mnemonic, "mova.u");
    assert!(i.srcs[0].repeat_inc);
    let i = dec(0x240c020504030201); // sct.u32f16 hr1.y, hr0.z, hr0.w, hr1.x, r0.y
    assert_eq!(
        i.dsts,
        vec![
            half(K::Gpr(5)),
            half(K::Gpr(2)),
            half(K::Gpr(3)),
            half(K::Gpr(4))
        ]
    );
    assert_eq!(i.srcs, vec![op(K::Gpr(1))]);
    let i = dec(0x260cc3c000000000); // movmsk.w128 r48.x
    assert_eq!(
        (i.mnemonic.as_str(), i.get(field::W)),
        ("movmsk.w128", Some(128))
    );
    assert_eq!(i.dsts, vec![op(K::Gpr(0xc0))]);
}

#[test]
fn cat2_alu() {
    let i = dec(0x40b8080410408004); // (nop3) cmps.f.lt r1.x, (abs)r1.x, c16.x
    assert_eq!(
        (i.encoding, i.mnemonic.as_str(), i.nop, i.repeat),
        ("cmps.f", "cmps.f.lt", 3, 0)
    );
    assert_eq!(
        i.field(field::COND),
        Some(&FieldValue::Enum {
            value: 0,
            text: "lt"
        })
    );
    assert_eq!(
        i.srcs,
        vec![
            Operand {
                abs: true,
                ..op(K::Gpr(4))
            },
            op(K::Const(64))
        ]
    );
    let i = dec(0x4008090250200006); // (rpt1)add.f hr0.z, (r)hr1.z, (neg)(r)hc8.x
    assert_eq!((i.repeat, i.nop), (1, 0));
    assert_eq!(i.dsts, vec![half(K::Gpr(2))]);
    assert_eq!(
        i.srcs,
        vec![
            Operand {
                repeat_inc: true,
                ..half(K::Gpr(6))
            },
            Operand {
                repeat_inc: true,
                neg: true,
                ..half(K::Const(32))
            }
        ]
    );
    let i = dec(0x40a500f82c000004); // cmps.f.ne p0.x, hr1.x, h(0.0)
    assert_eq!(i.dsts, vec![op(K::Gpr(0xf8))], "p0.x is never half");
    assert_eq!(i.srcs[1], half(K::Flut(0)));
    assert_eq!(i.dsts[0].p0_comp(), Some(0));
    let i = dec(0x438000f900020001); // and.b p0.y, hr0.y, hr0.z
    assert_eq!(i.dsts[0].p0_comp(), Some(1));
    assert_eq!(i.srcs[1].gpr(), Some((0, 2)));
    let i = dec(0x4228080727ff0000); // (nop3) add.s hr1.w, hr0.x, h(-1)
    assert_eq!(i.srcs[1].kind, K::Imm(-1));
    let i = dec(0x42380c0100040001); // (sat)(nop3) add.s r0.y, r0.y, r1.x
    assert!(i.flags.sat);
    let i = dec(0x4248000048801086); // (nop2) sub.u hr0.x, hc33.z, (neg)hr<a0.x + 128>
    assert_eq!(
        i.srcs,
        vec![
            half(K::Const(134)),
            Operand {
                neg: true,
                ..half(K::RelGpr(128))
            }
        ]
    );
    let i = dec(0x4010000768040008); // add.f r1.w, r2.x, (neg)(e)
    assert_eq!(
        i.srcs[1],
        Operand {
            neg: true,
            ..op(K::Flut(4))
        }
    );
    let i = dec(0x4730880200002000); // (nop1) bary.f (ei)r0.z, 0, r0.x
    assert!(i.flags.ei);
    assert_eq!(i.nop, 1);
}

#[test]
fn cat3_cat4() {
    let i = dec(0x6382000510315030); // mad.f32 r1.y, (neg)c12.x, r1.x, c12.y
    assert_eq!(
        i.srcs,
        vec![
            Operand {
                neg: true,
                ..op(K::Const(48))
            },
            op(K::Gpr(4)),
            op(K::Const(49))
        ]
    );
    let i = dec(0x646084c31fff300a); // shrm r48.w, 10, r48.y, 4095
    assert_eq!(
        i.srcs,
        vec![op(K::Imm(10)), op(K::Gpr(0xc1)), op(K::Imm(4095))]
    );
    assert_eq!(i.dsts, vec![op(K::Gpr(0xc3))]);
    assert!(i.dsts[0].is_shared() && !i.srcs[0].is_shared());
    let i = dec(0x6481090430521036); // (rpt1)sel.b32 r1.x, (r)c13.z, r0.z, (r)c20.z
    assert_eq!(
        i.srcs[0],
        Operand {
            repeat_inc: true,
            ..op(K::Const(54))
        }
    );
    assert_eq!(
        i.srcs[2],
        Operand {
            repeat_inc: true,
            ..op(K::Const(82))
        }
    );
    let i = dec(0x659008200c0aac05); // (nop3) shlg hr8.x, hc<a0.x + 5>, hr8.x, hc<a0.x + 10>
    assert_eq!(
        i.srcs,
        vec![
            half(K::RelConst(5)),
            half(K::Gpr(32)),
            half(K::RelConst(10))
        ]
    );
    let i = dec(0x8010000a00000003); // rcp r2.z, r0.w
    assert_eq!((i.cat, i.encoding), (4, "rcp"));
    assert_eq!(
        (i.dsts.clone(), i.srcs.clone()),
        (vec![op(K::Gpr(10))], vec![op(K::Gpr(3))])
    );
}

#[test]
fn cat5_cat6_cat7() {
    let i = dec(0xa048d107cc080a07); // isaml.base3 (s32)(x)r1.w, r0.w, r1.y, s#0, t#6
    assert_eq!(i.encoding, "isaml");
    assert_eq!(i.dsts, vec![op(K::Gpr(7))]);
    assert_eq!(
        (i.get(field::WRMASK), i.get(field::TYPE)),
        (Some(1), Some(5))
    );
    let i = dec(0xa0c01f040cc00005); // sam (f32)(xyzw)r1.x, r0.z, s#6, t#6
    assert_eq!(
        (i.get(field::SAMP), i.get(field::TEX), i.get(field::WRMASK)),
        (Some(6), Some(6), Some(15))
    );
    assert_eq!(i.srcs, vec![op(K::Gpr(2))]);
    let i = dec(0xc00600030180c269); // ldg.u32 r0.w, g[r0.w+308], 1
    assert_eq!(
        (
            i.encoding,
            i.get(field::OFF),
            i.get(field::SIZE),
            i.get(field::TYPE)
        ),
        ("ldg", Some(308), Some(1), Some(3))
    );
    assert_eq!(i.srcs[0], op(K::Gpr(3)));
    let i = dec(0xc002000703c1740f); // ldg.a.f32 r1.w, g[r1.y+(((r1.w<<3)+2)<<2)], 3
    assert_eq!(
        (
            i.get(field::SRC2_SHIFT),
            i.get(field::OFF),
            i.get(field::TYPE_SHIFT)
        ),
        (Some(3), Some(2), Some(2))
    );
    assert_eq!(i.srcs, vec![op(K::Gpr(5)), op(K::Gpr(7))]);
    let i = dec(0xc1425b5001803e02); // stp.f32 p[r11.y-176], r0.y, 1
    assert_eq!(i.get(field::OFF), Some(-176));
    let i = dec(0xc706012003800000); // stc.u32 c[a1.x+32], r0.x, 3
    assert_eq!(i.dsts, vec![op(K::ConstA1(32))]);
    let i = dec(0xc026000201e1b100 + (7 << 54)); // ldib.b ... r0.y+7, 0
    assert_eq!(
        (i.encoding, i.get(field::OFFSET), i.get(field::HAS_OFFSET)),
        ("ldib.b", Some(7), Some(1))
    );
    assert_eq!(
        i.dsts,
        vec![op(K::Gpr(2))],
        "ldib.b's SRC1 is its destination"
    );
    assert_eq!(i.srcs, vec![op(K::Gpr(1))]);
    let i = dec(0xc0260201ffc78080); // ldc.offset0.1.nonuniform r0.y, 255, r0.y
    assert_eq!(i.srcs, vec![op(K::Imm(255)), op(K::Gpr(1))]);
    assert_eq!(
        i.field(field::MODE),
        Some(&FieldValue::Enum {
            value: 2,
            text: "nonuniform"
        })
    );
    let i = dec(0xe0fa000000000000); // fence.g.l.r.w
    assert_eq!(
        (
            i.cat,
            i.encoding,
            i.get(field::G),
            i.get(field::L),
            i.get(field::R),
            i.get(field::W)
        ),
        (7, "fence", Some(1), Some(1), Some(1), Some(1))
    );
    let i = dec(0xf042000000000000); // (sy)bar.g
    assert!(i.flags.sy);
}

#[test]
fn unknown_words_are_errors_naming_the_word() {
    for w in [u64::MAX, 0xe7ff_ffff_ffff_ffff] {
        let e = ir3::decode(w).unwrap_err();
        assert_eq!(e.word(), w);
    }
    // a cmps with an undefined condition (6) is rejected, not guessed
    let e = ir3::decode(0x40b8080410408004 | (6 << 48)).unwrap_err();
    assert!(e.to_string().contains("COND"), "{e}");
}

/// Every decodable gpu 630 vector decodes to an Instr whose mnemonic is the one
/// mesa prints and whose operand count matches the encoding's shape.
#[test]
fn every_vector_decodes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/ir3_disasm_vectors.tsv"
    );
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "{path}: {e}");
            eprintln!("skipping: {path} not readable ({e})");
            return;
        }
    };
    let mut n = 0;
    for line in text.lines().skip(1).filter(|l| l.starts_with("630\t")) {
        let c: Vec<&str> = line.splitn(3, '\t').collect();
        let word = u64::from_str_radix(c[1].trim_start_matches("0x"), 16)
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        if c[2].starts_with("raw ") {
            assert!(ir3::decode(word).is_err());
            continue;
        }
        let i = dec(word);
        assert_eq!(i.word, word);
        assert_eq!(u64::from(i.cat), word >> 61);
        let mut t = c[2];
        while let Some(rest) = t.strip_prefix('(') {
            t = rest
                .split_once(')')
                .map(|(_, r)| r.trim_start())
                .unwrap_or(rest);
        }
        assert_eq!(
            Some(i.mnemonic.as_str()),
            t.split_whitespace().next(),
            "{line}"
        );
        n += 1;
    }
    assert_eq!(n, 283);
}
