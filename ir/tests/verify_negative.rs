//! Each test builds one malformed kernel and checks the verifier's exact message.
//!
//! Most verifier cases are file tests (`tests/verify/*.wj`, run by
//! verify_files.rs). The ones here are kernels the text form cannot carry to
//! the verifier: the parser refuses them first (ill-typed instructions, wrong
//! result counts, undefined values or blocks, constants that do not fit), or
//! they need arena edits or builder misuse (dangling handles, values defined
//! twice, definitions that do not point back, instructions placed twice or
//! nowhere). A few also check the error's structure (`Rule`, `Location`) or
//! the `verify`/`verify_all` relation.

use wavejit_ir::verify::{Location, Role, Rule, verify, verify_all};
use wavejit_ir::*;

/// The first error's text; fails the test when the kernel verifies.
fn first_error(k: &Kernel) -> String {
    match verify(k) {
        Err(e) => e.to_string(),
        Ok(()) => panic!("kernel `{}` verified but must not", k.name),
    }
}

/// A kernel with one entry block and a builder on it.
fn with_entry(name: &str) -> (Kernel, Block) {
    let mut k = Kernel::new(name);
    let entry = k.add_block();
    (k, entry)
}

#[test]
fn argument_type_mismatch_without_results() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let a = b.iconst(Type::I32, 1);
    let f = b.f32const(2.0);
    // The builder records ill-typed instructions with no results.
    let r = b.inst(InstKind::IBinary(IBinOp::Add), &[a, f]);
    assert!(r.is_empty());
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst2 (IBinary(Add) v0, v1): \
         argument 1 must be i32 (same as argument 0), got f32"
    );
}

#[test]
fn argument_type_mismatch_after_arena_edit() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let a = b.iconst(Type::I32, 1);
    let f = b.f32const(2.0);
    let sum = b.ins(InstKind::IBinary(IBinOp::Add), &[a, a]);
    b.exit();
    let inst = Inst::from_u32(2);
    k.insts[inst].args[1] = f;
    assert_eq!(sum, Value::from_u32(2));
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "kernel `k`, block0, inst2 (v2 = IBinary(Add) v0, v1): \
         argument 1 must be i32 (same as argument 0), got f32"
    );
    assert_eq!(
        errors[0].location,
        Location::Inst {
            block: Some(entry),
            inst,
            text: "v2 = IBinary(Add) v0, v1".into()
        }
    );
    assert_eq!(
        errors[0].rule,
        Rule::Signature(SignatureError::ArgType {
            index: 1,
            expected: "i32 (same as argument 0)".into(),
            got: Type::F32
        })
    );
}

#[test]
fn wrong_arity() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let c = b.iconst(Type::I1, 1);
    let x = b.iconst(Type::I32, 5);
    b.inst(InstKind::Select, &[c, x]);
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst2 (Select v0, v1): expects 3 arguments, got 2"
    );
}

#[test]
fn invalid_cast() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let x = b.iconst(Type::I32, 5);
    b.inst(
        InstKind::Cast {
            op: CastOp::Zext,
            to: Type::I16,
        },
        &[x],
    );
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst1 (Cast { op: Zext, to: I16 } v0): \
         argument 0 must be a type that can Zext to i16, got i32"
    );
}

#[test]
fn result_count_differs_from_signature() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let a = b.iconst(Type::I32, 1);
    b.ins(InstKind::IBinary(IBinOp::Add), &[a, a]);
    b.exit();
    k.insts[Inst::from_u32(1)].results.clear();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst1 (IBinary(Add) v0, v0): \
         signature gives 1 results, instruction has 0"
    );
}

#[test]
fn result_type_differs_from_signature() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let a = b.iconst(Type::I32, 1);
    let sum = b.ins(InstKind::IBinary(IBinOp::Add), &[a, a]);
    b.exit();
    k.values[sum].ty = Type::F32;
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst1 (v1 = IBinary(Add) v0, v0): \
         result 0 (v1) is f32, signature gives i32"
    );
}

#[test]
fn value_def_does_not_point_back() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let a = b.iconst(Type::I32, 1);
    b.exit();
    k.values[a].def = ValueDef::Param {
        block: entry,
        index: 0,
    };
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst0 (v0 = Const { ty: I32, bits: 1 }): \
         result 0 (v0) records its definition as parameter 0 of block0"
    );
}

#[test]
fn value_defined_twice() {
    let (mut k, entry) = with_entry("k");
    let next = k.add_block();
    let p = k.add_block_param(next, Type::I32);
    k.blocks[next].params.push(p);
    let mut b = Builder::new(&mut k, entry);
    let x = b.iconst(Type::I32, 3);
    b.jump(next, &[x, x]);
    b.switch_to(next);
    b.exit();
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_string(),
        "kernel `k`, block1: parameter 1 (v0) is already defined as parameter 0 of block1"
    );
}

#[test]
fn argument_value_does_not_exist() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let a = b.iconst(Type::I32, 1);
    b.ins(InstKind::IBinary(IBinOp::Add), &[a, a]);
    b.exit();
    k.insts[Inst::from_u32(1)].args[1] = Value::from_u32(99);
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst1 (v1 = IBinary(Add) v0, v99): argument 1 (v99) does not exist"
    );
}

#[test]
fn using_the_placeholder_of_a_result_less_instruction() {
    let (mut k, entry) = with_entry("k");
    k.shared_size = 16;
    let mut b = Builder::new(&mut k, entry);
    let off = b.iconst(Type::I32, 0);
    let none = b.ins(InstKind::Barrier, &[]);
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Shared, Type::I32)),
        &[off, none],
    );
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst2 (Store(MemAccess { space: Shared, ty: I32, bits: 32, \
         count: 1, signed: false, align: 4 }) v0, v4294967295): \
         argument 1 (v4294967295) does not exist"
    );
}

#[test]
fn instruction_handle_does_not_exist() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    b.iconst(Type::I32, 1);
    b.exit();
    k.blocks[entry].insts.push(Inst::from_u32(7));
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0: instruction 1 of the block is inst7, which does not exist"
    );
}

#[test]
fn instruction_placed_in_two_blocks() {
    let (mut k, entry) = with_entry("k");
    let next = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    b.iconst(Type::I32, 1);
    b.jump(next, &[]);
    b.switch_to(next);
    b.exit();
    k.blocks[next].insts.push(Inst::from_u32(0));
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_string(),
        "kernel `k`, block1, inst0 (v0 = Const { ty: I32, bits: 1 }): \
         instruction is already placed in block0"
    );
}

#[test]
fn instruction_placed_nowhere() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    b.iconst(Type::I32, 1);
    b.exit();
    k.blocks[entry].insts.clear();
    assert_eq!(
        first_error(&k),
        "kernel `k`, inst0 (v0 = Const { ty: I32, bits: 1 }): \
         instruction is not placed in any block"
    );
}

#[test]
fn jump_target_does_not_exist() {
    let (mut k, entry) = with_entry("k");
    Builder::new(&mut k, entry).jump(Block::from_u32(9), &[]);
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, terminator: target block9 does not exist"
    );
}

#[test]
fn branch_condition_does_not_exist() {
    let (mut k, entry) = with_entry("k");
    let next = k.add_block();
    let mut b = Builder::new(&mut k, entry);
    b.branch(
        Value::from_u32(77),
        BlockCall::new(next, &[]),
        BlockCall::new(next, &[]),
    );
    b.switch_to(next);
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, terminator: branch condition (v77) does not exist"
    );
}

#[test]
fn constant_bits_beyond_type() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    b.ins(
        InstKind::Const {
            ty: Type::I8,
            bits: 0x1ff,
        },
        &[],
    );
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst0 (v0 = Const { ty: I8, bits: 511 }): \
         constant bits 0x1ff do not fit i8 (mask 0xff)"
    );
}

#[test]
fn i1_constant_of_two() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    b.ins(
        InstKind::Const {
            ty: Type::I1,
            bits: 2,
        },
        &[],
    );
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst0 (v0 = Const { ty: I1, bits: 2 }): \
         constant bits 0x2 do not fit i1 (mask 0x1)"
    );
}

#[test]
fn builtin_dimension_out_of_range() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    b.ins(InstKind::Builtin(Builtin::LocalId(3)), &[]);
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst0 (Builtin(LocalId(3))): \
         invalid attribute: builtin dimension 3 is not 0, 1 or 2"
    );
}

#[test]
fn vector_access_of_five_elements() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let addr = b.iconst(Type::I64, 0x100);
    let access = MemAccess {
        count: 5,
        ..MemAccess::scalar(AddrSpace::Global, Type::I32)
    };
    b.ins(InstKind::Load(access), &[addr]);
    b.exit();
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].rule.to_string(),
        "invalid attribute: vector count 5 is not 1 to 4"
    );
}

#[test]
fn store_to_uniform_space() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let off = b.iconst(Type::I32, 0);
    b.ins(
        InstKind::Store(MemAccess::scalar(AddrSpace::Uniform, Type::I32)),
        &[off, off],
    );
    b.exit();
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].rule.to_string(),
        "invalid attribute: stores to the uniform space are not allowed"
    );
}

#[test]
fn use_of_a_value_no_block_defines() {
    let (mut k, entry) = with_entry("k");
    let ghost = k.values.push(ValueData {
        ty: Type::I32,
        def: ValueDef::Result {
            inst: Inst::from_u32(99),
            index: 0,
        },
    });
    let mut b = Builder::new(&mut k, entry);
    b.ins(InstKind::IUnary(IUnOp::Not), &[ghost]);
    b.exit();
    assert_eq!(
        first_error(&k),
        "kernel `k`, block0, inst0 (v1 = IUnary(Not) v0): argument 0 (v0) is not defined in any block"
    );
}

#[test]
fn block_call_argument_does_not_exist() {
    let (mut k, entry) = with_entry("k");
    let next = k.add_block();
    k.add_block_param(next, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    b.jump(next, &[Value::from_u32(42)]);
    b.switch_to(next);
    b.exit();
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_string(),
        "kernel `k`, block0, terminator: argument 0 to block1 (v42) does not exist"
    );
    assert_eq!(
        errors[0].rule,
        Rule::MissingValue {
            role: Role::CallArg {
                target: next,
                index: 0
            },
            value: Value::from_u32(42)
        }
    );
}

/// A kernel full of dangling handles: every problem is reported, in layout
/// order, and nothing panics.
#[test]
fn garbage_handles_are_reported_without_panicking() {
    let mut k = Kernel::new("junk");
    let entry = k.add_block();
    k.blocks[entry].params.push(Value::from_u32(500));
    k.blocks[entry].insts.push(Inst::from_u32(300));
    k.insts.push(InstData {
        kind: InstKind::IBinary(IBinOp::Add),
        args: vec![Value::from_u32(600), Value::from_u32(601)],
        results: vec![Value::from_u32(700)],
    });
    k.blocks[entry].insts.push(Inst::from_u32(0));
    k.set_terminator(
        entry,
        Terminator::Table {
            index: Value::from_u32(800),
            targets: vec![BlockCall::new(
                Block::from_u32(900),
                &[Value::from_u32(901)],
            )],
            default: BlockCall::new(entry, &[Value::from_u32(902)]),
        },
    );
    let texts: Vec<String> = verify_all(&k).iter().map(|e| e.to_string()).collect();
    let inst = "kernel `junk`, block0, inst0 (v700 = IBinary(Add) v600, v601)";
    assert_eq!(
        texts,
        [
            "kernel `junk`, block0: entry block must have no parameters, has 1".to_string(),
            "kernel `junk`, block0: parameter 0 (v500) does not exist".into(),
            "kernel `junk`, block0: instruction 0 of the block is inst300, which does not exist"
                .into(),
            format!("{inst}: result 0 (v700) does not exist"),
            format!("{inst}: argument 0 (v600) does not exist"),
            format!("{inst}: argument 1 (v601) does not exist"),
            "kernel `junk`, block0, terminator: table index (v800) does not exist".into(),
            "kernel `junk`, block0, terminator: argument 0 to block900 (v901) does not exist"
                .into(),
            "kernel `junk`, block0, terminator: target block900 does not exist".into(),
            // The entry's one (missing) parameter matches the one argument in count.
            "kernel `junk`, block0, terminator: argument 0 to block0 (v902) does not exist".into(),
        ]
    );
    assert!(verify(&k).is_err());
}

#[test]
fn verify_reports_the_first_of_several_errors() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    b.ins(
        InstKind::Const {
            ty: Type::I16,
            bits: 0x1_0000,
        },
        &[],
    );
    b.ins(InstKind::Builtin(Builtin::WorkgroupId(7)), &[]);
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 3);
    assert_eq!(
        errors[2].to_string(),
        "kernel `k`, block0: block has no terminator"
    );
    assert_eq!(verify(&k), Err(errors[0].clone()));
    assert_eq!(
        errors[0].rule,
        Rule::ConstBits {
            ty: Type::I16,
            bits: 0x1_0000
        }
    );
}

#[test]
fn instruction_placed_twice_in_one_block() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    b.iconst(Type::I32, 1);
    b.exit();
    k.blocks[entry].insts.push(Inst::from_u32(0));
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_string(),
        "kernel `k`, block0, inst0 (v0 = Const { ty: I32, bits: 1 }): \
         instruction is already placed in block0"
    );
}

#[test]
fn result_value_shared_by_two_instructions() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let a = b.iconst(Type::I32, 1);
    let first = b.ins(InstKind::IUnary(IUnOp::Neg), &[a]);
    b.ins(InstKind::IUnary(IUnOp::Abs), &[a]);
    b.exit();
    k.insts[Inst::from_u32(2)].results[0] = first;
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_string(),
        "kernel `k`, block0, inst2 (v1 = IUnary(Abs) v0): \
         result 0 (v1) is already defined as result 0 of inst1"
    );
}

#[test]
fn block_parameter_def_does_not_point_back() {
    let (mut k, entry) = with_entry("k");
    let next = k.add_block();
    let p = k.add_block_param(next, Type::I32);
    let mut b = Builder::new(&mut k, entry);
    let x = b.iconst(Type::I32, 1);
    b.jump(next, &[x]);
    b.switch_to(next);
    b.exit();
    k.values[p].def = ValueDef::Param {
        block: next,
        index: 3,
    };
    assert_eq!(
        first_error(&k),
        "kernel `k`, block1: parameter 0 (v0) records its definition as parameter 3 of block1"
    );
}

#[test]
fn table_default_target_does_not_exist() {
    let (mut k, entry) = with_entry("k");
    let mut b = Builder::new(&mut k, entry);
    let i = b.iconst(Type::I32, 0);
    b.kernel.set_terminator(
        entry,
        Terminator::Table {
            index: i,
            targets: vec![BlockCall::new(entry, &[])],
            default: BlockCall::new(Block::from_u32(4), &[]),
        },
    );
    let errors = verify_all(&k);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].to_string(),
        "kernel `k`, block0, terminator: target block4 does not exist"
    );
}
