//! The emitter: guest state as SSA values, IR block plumbing, block ends with the
//! cycle-limit check folded into the terminator, traps and the jalr hub.

use std::collections::{BTreeMap, BTreeSet};

use wavejit_ir::{Block, Value};
use wavejit_ir::{
    BlockCall, Builder, Builtin, CastOp, IBinOp, InstKind, IntCC, Kernel, Terminator, Type,
};

use super::LiftConfig;
use super::consts::ConstTracker;
use super::liveness::{F_BASE, FFLAGS, FRM, FpEnv, ICOUNT, JalrTargets, NVARS};
use super::range::RangeState;
use super::trap::{TrapCause, TrapSite};
use crate::rv32::{FReg, XReg};

pub fn var_type(var: usize) -> Type {
    if (F_BASE..F_BASE + 32).contains(&var) {
        Type::F32
    } else {
        Type::I32
    }
}

/// Values the prologue defines once per lane (they dominate every block).
#[derive(Clone, Copy)]
pub struct Prologue {
    pub zero_i32: Value,
    pub zero_f32: Value,
    pub hartid: Value,
    /// Global address of the lane's context record, when dumping.
    pub ctx: Option<Value>,
    /// Global address of the lane's resume record ([`super::resume`]), when
    /// the lift has resumable exits.
    pub state: Option<Value>,
}

/// The dispatch hub of computed `jalr`s.
pub struct Hub {
    pub block: Block,
    pub vars: Vec<usize>,
    /// Trap codes of the jalr sites, indexed by the site argument.
    pub sites: Vec<u32>,
}

pub struct Emitter<'a> {
    pub k: Kernel,
    pub cur: Block,
    pub pc: Option<u32>,
    pub word: Option<u32>,
    pub vals: [Value; NVARS],
    pub traps: Vec<TrapSite>,
    pub env: FpEnv,
    pub opts: &'a LiftConfig,
    pub consts: ConstTracker,
    /// Guest block start -> (IR block, parameter variables in order).
    pub blocks: BTreeMap<u32, (Block, Vec<usize>)>,
    /// Variables written somewhere (the hub's parameters).
    pub written_vars: Vec<usize>,
    pub hub: Option<Hub>,
    pub watchdog: BTreeMap<Option<u32>, Block>,
    pub pro: Option<Prologue>,
    /// Ranges of the x registers at each guest block's entry, and at the
    /// current instruction.
    pub ranges_in: BTreeMap<u32, RangeState>,
    pub ranges: RangeState,
    /// Guest blocks whose end tests the cycle limit ([`super::watchdog`]), and
    /// whether the current one does.
    pub checked: BTreeSet<u32>,
    pub check_limit: bool,
    /// Guest blocks the instruction count is live into.
    pub count_live: BTreeSet<u32>,
    /// Computed jalrs with a target the range analysis decided.
    pub jalr: JalrTargets,
    /// Guest blocks emitted inside their predecessor's IR block.
    pub merged: BTreeSet<u32>,
    /// Lanes may leave resumably (the prologue then addresses their record).
    pub leaves: bool,
}

/// How a guest block ends, before the cycle-limit check is folded in.
pub enum End {
    Jump(BlockCall),
    Branch(Value, BlockCall, BlockCall),
}

impl<'a> Emitter<'a> {
    pub fn new(k: Kernel, entry: Block, env: FpEnv, opts: &'a LiftConfig) -> Emitter<'a> {
        Emitter {
            k,
            cur: entry,
            pc: None,
            word: None,
            vals: [Value::from_u32(0); NVARS],
            traps: Vec::new(),
            env,
            opts,
            consts: ConstTracker::default(),
            blocks: BTreeMap::new(),
            written_vars: Vec::new(),
            hub: None,
            watchdog: BTreeMap::new(),
            pro: None,
            ranges_in: BTreeMap::new(),
            ranges: RangeState::unknown(),
            checked: BTreeSet::new(),
            check_limit: true,
            count_live: BTreeSet::new(),
            jalr: JalrTargets::new(),
            merged: BTreeSet::new(),
            leaves: false,
        }
    }

    // ---- instruction helpers -------------------------------------------------

    pub fn inst(&mut self, kind: InstKind, args: &[Value]) -> Vec<Value> {
        let mut b = Builder::new(&mut self.k, self.cur);
        b.set_srcloc(self.pc.map(u64::from));
        b.inst(kind, args)
    }

    pub fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        let mut b = Builder::new(&mut self.k, self.cur);
        b.set_srcloc(self.pc.map(u64::from));
        b.ins(kind, args)
    }

    pub fn iconst(&mut self, ty: Type, v: u64) -> Value {
        self.ins(
            InstKind::Const {
                ty,
                bits: v & ty.mask(),
            },
            &[],
        )
    }

    pub fn c32(&mut self, v: u32) -> Value {
        self.iconst(Type::I32, u64::from(v))
    }

    pub fn bin(&mut self, op: IBinOp, a: Value, b: Value) -> Value {
        self.ins(InstKind::IBinary(op), &[a, b])
    }

    pub fn bin_imm(&mut self, op: IBinOp, a: Value, imm: u32) -> Value {
        let c = self.c32(imm);
        self.bin(op, a, c)
    }

    pub fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.ins(InstKind::Icmp(cc), &[a, b])
    }

    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.ins(InstKind::Select, &[c, a, b])
    }

    pub fn cast(&mut self, op: CastOp, to: Type, v: Value) -> Value {
        self.ins(InstKind::Cast { op, to }, &[v])
    }

    pub fn builtin(&mut self, b: Builtin) -> Value {
        self.ins(InstKind::Builtin(b), &[])
    }

    // ---- guest registers -----------------------------------------------------

    pub fn x(&mut self, r: XReg) -> Value {
        match r.0 {
            0 => self.zero_i32(),
            n => self.vals[usize::from(n) - 1],
        }
    }

    pub fn set_x(&mut self, r: XReg, v: Value) {
        if r.0 != 0 {
            self.vals[r.num() - 1] = v;
        }
    }

    pub fn f(&self, r: FReg) -> Value {
        self.vals[F_BASE + r.num()]
    }

    pub fn set_f(&mut self, r: FReg, v: Value) {
        self.vals[F_BASE + r.num()] = v;
    }

    pub fn zero_i32(&self) -> Value {
        self.pro.map_or(Value::from_u32(0), |p| p.zero_i32)
    }

    /// The launch value of a variable (0 / +0.0).
    pub fn launch_value(&self, var: usize) -> Value {
        match self.pro {
            Some(p) if var_type(var) == Type::F32 => p.zero_f32,
            Some(p) => p.zero_i32,
            None => Value::from_u32(0),
        }
    }

    // ---- blocks ----------------------------------------------------------------

    pub fn new_block(&mut self) -> Block {
        self.k.add_block()
    }

    pub fn call_vars(&self, block: Block, vars: &[usize]) -> BlockCall {
        let args: Vec<Value> = vars.iter().map(|&v| self.vals[v]).collect();
        BlockCall::new(block, &args)
    }

    /// Registers a trap site; returns its code.
    pub fn site(&mut self, cause: TrapCause, pc: Option<u32>, word: Option<u32>) -> u32 {
        self.traps.push(TrapSite { cause, pc, word });
        (self.traps.len() - 1) as u32
    }

    /// A fresh block that traps with `code` (srcloc = current pc).
    pub fn trap_block(&mut self, code: u32) -> Block {
        let saved = self.cur;
        let b = self.new_block();
        self.cur = b;
        self.inst(InstKind::Trap { code }, &[]);
        self.k.set_terminator(b, Terminator::Exit);
        self.cur = saved;
        b
    }

    /// Traps in the current block and ends it.
    pub fn trap_here(&mut self, cause: TrapCause) {
        let code = self.site(cause, self.pc, self.word);
        self.inst(InstKind::Trap { code }, &[]);
        self.k.set_terminator(self.cur, Terminator::Exit);
    }

    /// The call that continues at guest pc `target` from the current state.
    pub fn dest_call(&mut self, target: u32) -> BlockCall {
        if let Some((b, vars)) = self.blocks.get(&target) {
            let (b, vars) = (*b, vars.clone());
            return self.call_vars(b, &vars);
        }
        if target.is_multiple_of(4) && self.leaves {
            // Not discovered (past the discovery budget): the lane leaves and
            // the runtime lifts from there.
            return self.resume_call(target, super::resume::STATUS_JUMP);
        }
        let cause = if !target.is_multiple_of(4) {
            TrapCause::MisalignedTarget { target }
        } else {
            TrapCause::FetchFault
        };
        let code = self.site(cause, self.pc, self.word);
        BlockCall::new(self.trap_block(code), &[])
    }

    /// The call into the jalr hub with the current state, `target` and a new site.
    pub fn hub_call(&mut self, target: Value) -> BlockCall {
        let code = self.site(TrapCause::UnknownJumpTarget, self.pc, self.word);
        let mut hub = match self.hub.take() {
            Some(h) => h,
            None => {
                let block = self.new_block();
                let vars = self.written_vars.clone();
                for &v in &vars {
                    self.k.add_block_param(block, var_type(v));
                }
                // The target pc and the index of the jalr site.
                self.k.add_block_param(block, Type::I32);
                self.k.add_block_param(block, Type::I32);
                Hub {
                    block,
                    vars,
                    sites: Vec::new(),
                }
            }
        };
        // With resumable exits the argument is the trap code itself (the
        // record names the jalr by it); otherwise the index of the site.
        let site = if self.leaves {
            self.c32(code)
        } else {
            self.c32(hub.sites.len() as u32)
        };
        hub.sites.push(code);
        let mut call = self.call_vars(hub.block, &hub.vars);
        call.args.push(target);
        call.args.push(site);
        self.hub = Some(hub);
        call
    }

    /// The cycle-limit trap of the block ending at the current pc: one per
    /// checking block, so the fault names the instruction (the block's last)
    /// at which the lane was found over the limit.
    fn watchdog_block(&mut self) -> Block {
        if let Some(&b) = self.watchdog.get(&self.pc) {
            return b;
        }
        let limit = self.opts.cycle_limit.unwrap_or(u32::MAX);
        let code = self.site(TrapCause::CycleLimit { limit }, self.pc, self.word);
        let b = self.trap_block(code);
        self.watchdog.insert(self.pc, b);
        b
    }

    /// Ends the current block, checking the cycle limit first when this block
    /// must.
    pub fn end(&mut self, end: End) {
        let Some(limit) = self.opts.cycle_limit.filter(|_| self.check_limit) else {
            let term = match end {
                End::Jump(c) => Terminator::Jump(c),
                End::Branch(cond, then, otherwise) => Terminator::Branch {
                    cond,
                    then,
                    otherwise,
                },
            };
            self.k.set_terminator(self.cur, term);
            return;
        };
        let wd = BlockCall::new(self.watchdog_block(), &[]);
        let lim = self.c32(limit);
        let over = self.icmp(IntCC::Ugt, self.vals[ICOUNT], lim);
        let term = match end {
            End::Jump(c) => Terminator::Branch {
                cond: over,
                then: wd,
                otherwise: c,
            },
            End::Branch(cond, then, otherwise) => {
                let (zero, one, two) = (self.c32(0), self.c32(1), self.c32(2));
                let pick = self.select(cond, zero, one);
                let index = self.select(over, two, pick);
                Terminator::Table {
                    index,
                    targets: vec![then, otherwise],
                    default: wd,
                }
            }
        };
        self.k.set_terminator(self.cur, term);
    }

    /// Fills in the hub: a binary search over the known block starts (IR size
    /// linear in their number, depth logarithmic); a target that is none of them
    /// (unknown or misaligned) traps at the jalr that computed it, or with
    /// resumable exits leaves the lane for the runtime to decide.
    pub fn finish_hub(&mut self) {
        let Some(hub) = self.hub.take() else {
            return;
        };
        self.pc = None;
        self.word = None;
        let params = self.k.blocks[hub.block].params.clone();
        let n = hub.vars.len();
        let (target, site) = (params[n], params[n + 1]);
        let bad = self.new_block();
        let bad_call = if self.leaves {
            // Unknown targets leave the lane resumably (the runtime decides
            // whether the target is code); the hub's values dominate `bad`.
            self.cur = bad;
            for v in 0..NVARS {
                self.vals[v] = match hub.vars.iter().position(|&h| h == v) {
                    Some(pos) => params[pos],
                    None => self.launch_value(v),
                };
            }
            self.hub_leave(target, site);
            BlockCall::new(bad, &[])
        } else {
            // Bad targets: a table over the jalr sites names the culprit.
            let bad_site = self.k.add_block_param(bad, Type::I32);
            let site_traps: Vec<BlockCall> = hub
                .sites
                .iter()
                .map(|&code| BlockCall::new(self.trap_block(code), &[]))
                .collect();
            let Some(bad_default) = site_traps.first().cloned() else {
                return;
            };
            self.k.set_terminator(
                bad,
                Terminator::Table {
                    index: bad_site,
                    targets: site_traps,
                    default: bad_default,
                },
            );
            BlockCall::new(bad, &[site])
        };
        let leaves: Vec<(u32, BlockCall)> = self
            .blocks
            .iter()
            .map(|(&pc, (b, vars))| {
                let args: Vec<Value> = vars
                    .iter()
                    .map(|v| {
                        let pos = hub.vars.iter().position(|h| h == v).unwrap_or(0);
                        params[pos]
                    })
                    .collect();
                (pc, BlockCall::new(*b, &args))
            })
            .collect();
        if leaves.is_empty() {
            self.k.set_terminator(hub.block, Terminator::Jump(bad_call));
            return;
        }
        self.search(hub.block, target, &leaves, &bad_call);
    }

    /// Emits into `at` the search of `target` among `leaves` (sorted by pc).
    fn search(&mut self, at: Block, target: Value, leaves: &[(u32, BlockCall)], bad: &BlockCall) {
        self.cur = at;
        if let [(pc, call)] = leaves {
            let k = self.c32(*pc);
            let hit = self.icmp(IntCC::Eq, target, k);
            self.k.set_terminator(
                at,
                Terminator::Branch {
                    cond: hit,
                    then: call.clone(),
                    otherwise: bad.clone(),
                },
            );
            return;
        }
        let mid = leaves.len() / 2;
        let k = self.c32(leaves[mid].0);
        let below = self.icmp(IntCC::Ult, target, k);
        let (lo, hi) = (self.new_block(), self.new_block());
        self.k.set_terminator(
            at,
            Terminator::Branch {
                cond: below,
                then: BlockCall::new(lo, &[]),
                otherwise: BlockCall::new(hi, &[]),
            },
        );
        self.search(lo, target, &leaves[..mid], bad);
        self.search(hi, target, &leaves[mid..], bad);
    }

    /// Emits the prologue into the (current) entry block.
    pub fn prologue(&mut self) {
        let zero_i32 = self.c32(0);
        let zero_f32 = self.iconst(Type::F32, 0);
        let wg: Vec<Value> = (0..3)
            .map(|d| self.builtin(Builtin::WorkgroupId(d)))
            .collect();
        let nw: Vec<Value> = (0..3)
            .map(|d| self.builtin(Builtin::NumWorkgroups(d)))
            .collect();
        // block_linear = x + y*gx + z*gx*gy (fits 19 bits for valid dispatches).
        let yz = self.bin(IBinOp::Mul, wg[2], nw[1]);
        let yz = self.bin(IBinOp::Add, yz, wg[1]);
        let yz = self.bin(IBinOp::Mul, yz, nw[0]);
        let linear = self.bin(IBinOp::Add, yz, wg[0]);
        let local = self.builtin(Builtin::LocalIndex);
        let hi = self.bin_imm(IBinOp::Shl, linear, 13);
        let hartid = self.bin(IBinOp::Or, hi, local);
        // Linear lane index (block_linear * threads_per_block + local), in
        // i64: the per-lane records are indexed by it.
        let records = self.opts.context_base.is_some() || self.leaves;
        let lane = records.then(|| {
            let sizes: Vec<Value> = (0..3)
                .map(|d| self.builtin(Builtin::WorkgroupSize(d)))
                .collect();
            let t = self.bin(IBinOp::Mul, sizes[0], sizes[1]);
            let t = self.bin(IBinOp::Mul, t, sizes[2]);
            let t64 = self.cast(CastOp::Zext, Type::I64, t);
            let lin64 = self.cast(CastOp::Zext, Type::I64, linear);
            let loc64 = self.cast(CastOp::Zext, Type::I64, local);
            let lane = self.bin(IBinOp::Mul, lin64, t64);
            self.bin(IBinOp::Add, lane, loc64)
        });
        let record = |em: &mut Self, base: u64, bytes: u64| {
            let lane = lane?;
            let rec = em.iconst(Type::I64, bytes);
            let off = em.bin(IBinOp::Mul, lane, rec);
            let b = em.iconst(Type::I64, base);
            Some(em.bin(IBinOp::Add, off, b))
        };
        let ctx = self
            .opts
            .context_base
            .and_then(|base| record(self, base, super::context::LANE_BYTES));
        let state = self
            .opts
            .resume
            .filter(|_| self.leaves)
            .and_then(|r| record(self, r.base, super::resume::STATE_BYTES));
        self.pro = Some(Prologue {
            zero_i32,
            zero_f32,
            hartid,
            ctx,
            state,
        });
        for v in 0..NVARS {
            self.vals[v] = self.launch_value(v);
        }
        let _ = (FFLAGS, FRM);
    }
}
