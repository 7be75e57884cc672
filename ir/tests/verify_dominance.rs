//! Cross-checks the Cooper-Harvey-Kennedy dominator tree and the verifier's
//! dominance rule against a naive set-based dominator computation on random
//! control-flow graphs.

use cranelift_entity::EntityRef;
use wavejit_ir::analysis::{Cfg, DomTree};
use wavejit_ir::verify::{Rule, verify, verify_all};
use wavejit_ir::*;

/// xorshift64: deterministic, dependency-free randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A random CFG of `n` blocks; each block defines one i32 and one i1 value
/// (`defs[b]`), and ends with a random terminator using its own i1.
fn random_kernel(rng: &mut Rng, n: usize) -> (Kernel, Vec<Block>, Vec<(Value, Value)>) {
    let mut k = Kernel::new("random");
    let blocks: Vec<Block> = (0..n).map(|_| k.add_block()).collect();
    let mut defs = Vec::new();
    let mut b = Builder::new(&mut k, blocks[0]);
    for (i, &block) in blocks.iter().enumerate() {
        b.switch_to(block);
        let x = b.iconst(Type::I32, i as u64);
        let c = b.iconst(Type::I1, (i & 1) as u64);
        defs.push((x, c));
        let choice = rng.below(8);
        let mut pick = || BlockCall::new(blocks[rng.below(n)], &[]);
        match choice {
            0 => b.exit(),
            1..=3 => {
                let dest = pick();
                b.jump(dest.block, &[]);
            }
            4..=6 => {
                let (then, otherwise) = (pick(), pick());
                b.branch(c, then, otherwise);
            }
            _ => {
                let targets = vec![pick(), pick(), pick()];
                let default = pick();
                b.kernel.set_terminator(
                    block,
                    Terminator::Table {
                        index: x,
                        targets,
                        default,
                    },
                );
            }
        }
    }
    (k, blocks, defs)
}

/// dom[b] = set of blocks dominating b (None when unreachable), by iterating
/// dom(b) = {b} ∪ ⋂ dom(p) to a fixed point.
fn naive_dominators(cfg: &Cfg, n: usize) -> Vec<Option<Vec<bool>>> {
    let mut reachable = vec![false; n];
    let mut stack = vec![0usize];
    reachable[0] = true;
    while let Some(b) = stack.pop() {
        for s in cfg.succs(Block::new(b)) {
            if !reachable[s.index()] {
                reachable[s.index()] = true;
                stack.push(s.index());
            }
        }
    }
    let mut dom: Vec<Option<Vec<bool>>> = (0..n)
        .map(|b| reachable[b].then(|| vec![true; n]))
        .collect();
    dom[0] = Some((0..n).map(|i| i == 0).collect());
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..n {
            if !reachable[b] {
                continue;
            }
            let mut set = vec![true; n];
            for p in cfg.preds(Block::new(b)) {
                if let Some(pd) = &dom[p.index()] {
                    for i in 0..n {
                        set[i] &= pd[i];
                    }
                }
            }
            set[b] = true;
            if dom[b].as_ref() != Some(&set) {
                dom[b] = Some(set);
                changed = true;
            }
        }
    }
    dom
}

#[test]
fn chk_matches_naive_dominators_on_random_cfgs() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked_pairs = 0usize;
    for round in 0..400 {
        let n = 1 + round % 24;
        let (k, blocks, _) = random_kernel(&mut rng, n);
        assert_eq!(verify(&k), Ok(()), "round {round}");
        let cfg = Cfg::compute(&k);
        let dom = DomTree::from_cfg(&cfg);
        let naive = naive_dominators(&cfg, n);
        for &b in &blocks {
            assert_eq!(dom.is_reachable(b), naive[b.index()].is_some());
            for &a in &blocks {
                let expected = match &naive[b.index()] {
                    Some(set) => set[a.index()],
                    None => a == b,
                };
                assert_eq!(dom.dominates(a, b), expected, "round {round}: {a} dom {b}");
                checked_pairs += 1;
            }
            // The immediate dominator is the strict dominator closest to b:
            // every other strict dominator dominates it.
            if let Some(set) = &naive[b.index()] {
                let strict: Vec<Block> = blocks
                    .iter()
                    .copied()
                    .filter(|&a| a != b && set[a.index()])
                    .collect();
                match dom.idom(b) {
                    None => assert!(strict.is_empty(), "round {round}: {b}"),
                    Some(i) => {
                        assert!(strict.contains(&i));
                        assert!(strict.iter().all(|&s| dom.dominates(s, i)));
                    }
                }
            }
        }
        assert_eq!(
            dom.rpo().len(),
            naive.iter().filter(|d| d.is_some()).count()
        );
    }
    assert!(checked_pairs > 50_000);
}

/// A use of another block's value verifies exactly when the naive sets say the
/// defining block dominates the using block (or the user is unreachable).
#[test]
fn verifier_dominance_rule_matches_naive_sets() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut accepted, mut rejected) = (0, 0);
    for round in 0..300 {
        let n = 2 + round % 16;
        let (mut k, blocks, defs) = random_kernel(&mut rng, n);
        let cfg = Cfg::compute(&k);
        let naive = naive_dominators(&cfg, n);
        let user = blocks[rng.below(n)];
        let def_block = blocks[rng.below(n)];
        if user == def_block {
            continue;
        }
        // Append `not x` (x from def_block) at the end of `user`.
        let x = defs[def_block.index()].0;
        let inst = k.append_inst(user, InstKind::IUnary(IUnOp::Not), &[x]);
        let ok = match &naive[user.index()] {
            Some(set) => set[def_block.index()],
            None => true,
        };
        let errors = verify_all(&k);
        if ok {
            assert!(errors.is_empty(), "round {round}: {errors:?}");
            accepted += 1;
        } else {
            assert_eq!(errors.len(), 1, "round {round}: {errors:?}");
            assert_eq!(
                errors[0].rule,
                Rule::NotDominated {
                    role: verify::Role::Arg(0),
                    value: x,
                    def_block
                }
            );
            assert_eq!(
                errors[0].location,
                verify::Location::Inst {
                    block: Some(user),
                    inst,
                    text: format!("{} = IUnary(Not) {x}", k.insts[inst].results[0]),
                }
            );
            rejected += 1;
        }
    }
    assert!(accepted > 30 && rejected > 30, "{accepted} {rejected}");
}

/// The verifier stays linear-ish: a big kernel (a chain of 2000 diamonds, about
/// 10k blocks and 30k instructions) verifies.
#[test]
fn big_kernel_of_diamonds_verifies() {
    let mut k = Kernel::new("big");
    let entry = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    let x = b.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
    let one = b.iconst(Type::I32, 1);
    let mut acc = x;
    let mut cur = entry;
    for _ in 0..2000 {
        let then = b.kernel.add_block();
        let other = b.kernel.add_block();
        let join = b.kernel.add_block();
        let p = b.kernel.add_block_param(join, Type::I32);
        b.switch_to(cur);
        let bit = b.ins(InstKind::IBinary(IBinOp::And), &[acc, one]);
        let c = b.ins(InstKind::Icmp(IntCC::Eq), &[bit, one]);
        b.branch(c, BlockCall::new(then, &[]), BlockCall::new(other, &[]));
        b.switch_to(then);
        let t = b.ins(InstKind::IBinary(IBinOp::Add), &[acc, x]);
        b.jump(join, &[t]);
        b.switch_to(other);
        let o = b.ins(InstKind::IBinary(IBinOp::Xor), &[acc, one]);
        b.jump(join, &[o]);
        acc = p;
        cur = join;
    }
    b.switch_to(cur);
    b.exit();
    assert_eq!(k.blocks.len(), 6001);
    assert_eq!(verify(&k), Ok(()));
}
