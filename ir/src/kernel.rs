//! A kernel: arenas of blocks, instructions and values, plus a builder for lifters.

use cranelift_entity::{PrimaryMap, SecondaryMap};

use crate::entities::{Block, Inst, Value};
use crate::inst::{BlockCall, InstKind, Terminator};
use crate::types::Type;

/// Where a value comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueDef {
    Param { block: Block, index: u32 },
    Result { inst: Inst, index: u32 },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstData {
    pub kind: InstKind,
    pub args: Vec<Value>,
    pub results: Vec<Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockData {
    pub params: Vec<Value>,
    pub insts: Vec<Inst>,
    /// `None` only while the block is being built; the verifier rejects it.
    pub term: Option<Terminator>,
}

/// Guest program counter of an instruction, for faults and debugging.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SrcLoc(pub Option<u64>);

/// A compute kernel: the program of one lane. The first block is the entry and
/// has no parameters. Block numbers are layout order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    /// Bytes of workgroup-shared memory per workgroup.
    pub shared_size: u32,
    /// Bytes of private memory per lane.
    pub private_size: u32,
    pub blocks: PrimaryMap<Block, BlockData>,
    pub insts: PrimaryMap<Inst, InstData>,
    pub values: PrimaryMap<Value, ValueData>,
    /// Guest pc per instruction (lifted kernels).
    pub srclocs: SecondaryMap<Inst, SrcLoc>,
}

impl std::hash::Hash for Kernel {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // The content that changes code; srclocs only change fault messages but
        // those must name the right pc, so they are part of it too.
        self.name.hash(h);
        self.shared_size.hash(h);
        self.private_size.hash(h);
        for (b, data) in self.blocks.iter() {
            b.hash(h);
            data.hash(h);
        }
        for (i, data) in self.insts.iter() {
            data.hash(h);
            self.srclocs[i].hash(h);
        }
        for (_, data) in self.values.iter() {
            data.hash(h);
        }
    }
}

impl Kernel {
    pub fn new(name: impl Into<String>) -> Kernel {
        Kernel {
            name: name.into(),
            ..Kernel::default()
        }
    }

    pub fn entry(&self) -> Option<Block> {
        self.blocks.keys().next()
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    /// Appends a new empty block (after every existing one in layout).
    pub fn add_block(&mut self) -> Block {
        self.blocks.push(BlockData::default())
    }

    pub fn add_block_param(&mut self, block: Block, ty: Type) -> Value {
        let index = self.blocks[block].params.len() as u32;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::Param { block, index },
        });
        self.blocks[block].params.push(v);
        v
    }

    /// Appends an instruction to `block` and creates its results with the types
    /// its signature gives. Arguments that do not fit the kind are recorded as
    /// given (results then get no values) so that the verifier can name the problem;
    /// building never panics.
    pub fn append_inst(&mut self, block: Block, kind: InstKind, args: &[Value]) -> Inst {
        let arg_tys: Option<Vec<Type>> = args
            .iter()
            .map(|&a| self.values.get(a).map(|v| v.ty))
            .collect();
        let result_tys = arg_tys
            .and_then(|tys| kind.signature(&tys).ok())
            .unwrap_or_default();
        let inst = self.insts.push(InstData {
            kind,
            args: args.to_vec(),
            results: Vec::new(),
        });
        for (index, ty) in result_tys.into_iter().enumerate() {
            let v = self.values.push(ValueData {
                ty,
                def: ValueDef::Result {
                    inst,
                    index: index as u32,
                },
            });
            self.insts[inst].results.push(v);
        }
        self.blocks[block].insts.push(inst);
        inst
    }

    pub fn set_terminator(&mut self, block: Block, term: Terminator) {
        self.blocks[block].term = Some(term);
    }

    pub fn set_srcloc(&mut self, inst: Inst, guest_pc: u64) {
        self.srclocs[inst] = SrcLoc(Some(guest_pc));
    }

    /// Number of instructions including terminators (a size measure for tiering).
    pub fn op_count(&self) -> usize {
        self.blocks.values().map(|b| b.insts.len() + 1).sum()
    }
}

/// A cursor for building a kernel one block at a time: `ins` methods return the
/// first result value directly, which keeps lifters short.
pub struct Builder<'k> {
    pub kernel: &'k mut Kernel,
    pub block: Block,
    srcloc: Option<u64>,
}

impl<'k> Builder<'k> {
    /// A builder positioned at `block`.
    pub fn new(kernel: &'k mut Kernel, block: Block) -> Builder<'k> {
        Builder {
            kernel,
            block,
            srcloc: None,
        }
    }

    pub fn switch_to(&mut self, block: Block) {
        self.block = block;
    }

    /// Guest pc recorded on instructions appended from now on.
    pub fn set_srcloc(&mut self, guest_pc: Option<u64>) {
        self.srcloc = guest_pc;
    }

    /// Appends an instruction; returns all its results.
    pub fn inst(&mut self, kind: InstKind, args: &[Value]) -> Vec<Value> {
        let inst = self.kernel.append_inst(self.block, kind, args);
        if let Some(pc) = self.srcloc {
            self.kernel.set_srcloc(inst, pc);
        }
        self.kernel.insts[inst].results.clone()
    }

    /// Appends an instruction with one result (or none) and returns the first
    /// result. For kinds without results the returned value is a placeholder
    /// that must not be used.
    pub fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        self.inst(kind, args)
            .first()
            .copied()
            .unwrap_or_else(cranelift_entity::packed_option::ReservedValue::reserved_value)
    }

    pub fn iconst(&mut self, ty: Type, value: u64) -> Value {
        self.ins(
            InstKind::Const {
                ty,
                bits: value & ty.mask(),
            },
            &[],
        )
    }

    pub fn f32const(&mut self, value: f32) -> Value {
        self.ins(
            InstKind::Const {
                ty: Type::F32,
                bits: u64::from(value.to_bits()),
            },
            &[],
        )
    }

    pub fn jump(&mut self, dest: Block, args: &[Value]) {
        self.kernel
            .set_terminator(self.block, Terminator::Jump(BlockCall::new(dest, args)));
    }

    pub fn branch(&mut self, cond: Value, then: BlockCall, otherwise: BlockCall) {
        self.kernel.set_terminator(
            self.block,
            Terminator::Branch {
                cond,
                then,
                otherwise,
            },
        );
    }

    pub fn exit(&mut self) {
        self.kernel.set_terminator(self.block, Terminator::Exit);
    }
}
