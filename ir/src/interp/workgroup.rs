//! The scheduler: workgroups in order, waves by rounds, lowest pc first inside a
//! wave (see the module documentation of `interp` for the exact rules).

use crate::dispatch::Dispatch;
use crate::entities::{Block, Inst};
use crate::fault::{Fault, FaultKind, LaneId};
use crate::inst::Builtin;
use crate::kernel::Kernel;
use crate::memory::GlobalMemory;
use crate::semantics::{eval_pure, wave::eval_wave};

use super::MALFORMED_TRAP;
use super::access::LaneMemory;
use super::program::{Edge, Op, OpKind, Program, Term};

/// (block number, instruction index); the terminator sits at index `ops.len()`.
type Pc = (usize, usize);

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum LaneState {
    Running,
    /// Waiting at the barrier at its pc.
    Parked,
    /// Exited or faulted.
    Done,
}

struct Lane {
    pc: Pc,
    state: LaneState,
    /// Blocks entered so far (watchdog).
    steps: u64,
    local: [u32; 3],
    values: Vec<u64>,
    private: Vec<u8>,
}

/// What stays fixed for a whole dispatch.
struct Ctx<'a> {
    kernel: &'a Kernel,
    dispatch: &'a Dispatch,
    prog: &'a Program,
    memory: &'a dyn GlobalMemory,
    wave_size: usize,
}

/// Runs every workgroup in linear order; stops at the first one that faults.
pub(crate) fn run_dispatch(
    kernel: &Kernel,
    dispatch: &Dispatch,
    memory: &dyn GlobalMemory,
) -> Result<(), Fault> {
    let [sx, sy, sz] = dispatch.workgroup_size.map(u128::from);
    let lanes = sx * sy * sz;
    let [gx, gy, gz] = dispatch.workgroups.map(u128::from);
    let groups = gx * gy * gz;
    if lanes == 0 || groups == 0 {
        return Ok(());
    }
    let first_lane = LaneId {
        workgroup: [0; 3],
        local: [0; 3],
    };
    let malformed = |inst| Fault {
        kernel: kernel.name.clone(),
        block: Block::from_u32(0),
        inst,
        guest_pc: None,
        lane: first_lane,
        kind: FaultKind::Trap {
            code: MALFORMED_TRAP,
        },
    };
    // Dispatch::check (Interpreter::run) bounded lanes and wave size already.
    let Ok(lanes) = usize::try_from(lanes) else {
        return Err(malformed(None));
    };
    if kernel.blocks.is_empty() || dispatch.wave_size == 0 {
        return Err(malformed(None));
    }
    let prog = Program::new(kernel);
    let ctx = Ctx {
        kernel,
        dispatch,
        prog: &prog,
        memory,
        wave_size: dispatch.wave_size as usize,
    };
    let Some(mut wg) = Workgroup::new(&ctx, lanes) else {
        return Err(malformed(None));
    };
    let clock = dispatch.budget.start();
    for g in 0..groups {
        let id = [
            (g % gx) as u32,
            ((g / gx) % gy) as u32,
            (g / (gx * gy)) as u32,
        ];
        // Once per workgroup: a clock read is nothing next to a workgroup.
        if let Some(fault) = clock.fault(kernel, id) {
            return Err(fault);
        }
        if let Some(fault) = wg.run(&ctx, id) {
            return Err(fault);
        }
    }
    Ok(())
}

/// One workgroup's lanes and shared memory, reused from workgroup to workgroup.
struct Workgroup {
    lanes: Vec<Lane>,
    shared: Vec<u8>,
    workgroup: [u32; 3],
    /// The fault of the lowest faulting local index so far.
    fault: Option<(usize, Fault)>,
    /// Co-active lane indices of the current step.
    set: Vec<usize>,
    /// A lane of the set parked or stopped during the current instruction.
    set_changed: bool,
    /// Scratch for block-parameter moves.
    moves: Vec<u64>,
}

impl Workgroup {
    /// `None` when the host cannot hold the lanes' state.
    fn new(ctx: &Ctx, lanes: usize) -> Option<Workgroup> {
        let [sx, sy, _] = ctx.dispatch.workgroup_size.map(|s| s as usize);
        let lanes = (0..lanes)
            .map(|i| {
                Some(Lane {
                    pc: (0, 0),
                    state: LaneState::Running,
                    steps: 0,
                    local: [
                        (i % sx) as u32,
                        ((i / sx) % sy) as u32,
                        (i / (sx * sy)) as u32,
                    ],
                    values: zeroed(ctx.prog.value_count)?,
                    private: zeroed(ctx.kernel.private_size as usize)?,
                })
            })
            .collect::<Option<_>>()?;
        Some(Workgroup {
            lanes,
            shared: zeroed(ctx.kernel.shared_size as usize)?,
            workgroup: [0; 3],
            fault: None,
            set: Vec::new(),
            set_changed: false,
            moves: Vec::new(),
        })
    }

    /// Runs the workgroup `id` to completion; returns its lowest-lane fault.
    fn run(&mut self, ctx: &Ctx, id: [u32; 3]) -> Option<Fault> {
        self.workgroup = id;
        self.fault = None;
        self.shared.fill(0);
        for i in 0..self.lanes.len() {
            let lane = &mut self.lanes[i];
            lane.pc = (0, 0);
            lane.state = LaneState::Running;
            lane.steps = 1;
            lane.values.fill(0);
            lane.private.fill(0);
            if !ctx.prog.entry_ok {
                self.fail(ctx, i, 0, None, malformed());
            } else if ctx.dispatch.step_limit < 1 {
                let limit = ctx.dispatch.step_limit;
                self.fail(ctx, i, 0, None, FaultKind::Watchdog { limit });
            }
        }
        loop {
            let mut start = 0;
            while start < self.lanes.len() {
                let end = (start + ctx.wave_size).min(self.lanes.len());
                self.run_wave(ctx, start, end);
                start = end;
            }
            let mut parked = false;
            for lane in &mut self.lanes {
                if lane.state == LaneState::Parked {
                    lane.state = LaneState::Running;
                    lane.pc.1 += 1;
                    parked = true;
                }
            }
            if !parked {
                break;
            }
        }
        self.fault.take().map(|(_, f)| f)
    }

    /// Runs lanes `lo..hi` (one wave) until none of them is runnable.
    fn run_wave(&mut self, ctx: &Ctx, lo: usize, hi: usize) {
        loop {
            let running = || (lo..hi).filter(|&i| self.lanes[i].state == LaneState::Running);
            let Some(pc) = running().map(|i| self.lanes[i].pc).min() else {
                return;
            };
            // The lowest pc of lanes outside the set: the set runs straight on
            // until it reaches it (and merges) or leaves the block.
            let others = running()
                .map(|i| self.lanes[i].pc)
                .filter(|&p| p != pc)
                .min();
            self.set.clear();
            self.set.extend(
                (lo..hi).filter(|&i| {
                    self.lanes[i].state == LaneState::Running && self.lanes[i].pc == pc
                }),
            );
            let (b, mut idx) = pc;
            let block = &ctx.prog.blocks[b];
            // False when the set stops early: emptied, or met other lanes (then
            // it must re-form with them before going on, terminators included).
            let mut reached_terminator = true;
            while let Some(op) = block.ops.get(idx) {
                self.set_changed = false;
                self.exec_op(ctx, b, op, lo, hi);
                if self.set_changed {
                    // Parked lanes keep the barrier's pc; stopped ones leave the set.
                    let lanes = &mut self.lanes;
                    for &i in &self.set {
                        lanes[i].pc = (b, idx);
                    }
                    self.set.retain(|&i| lanes[i].state == LaneState::Running);
                }
                idx += 1;
                if self.set.is_empty() || others.is_some_and(|o| o <= (b, idx)) {
                    reached_terminator = false;
                    break;
                }
            }
            if !reached_terminator {
                for &i in &self.set {
                    self.lanes[i].pc = (b, idx);
                }
                continue;
            }
            for k in 0..self.set.len() {
                let i = self.set[k];
                self.exec_term(ctx, b, &block.term, i);
            }
        }
    }

    /// Executes `op` for every lane of the co-active set, in increasing lane order.
    fn exec_op(&mut self, ctx: &Ctx, b: usize, op: &Op, lo: usize, hi: usize) {
        if let OpKind::Wave(kind) = &op.kind {
            self.exec_wave(ctx, b, op, kind, lo, hi);
            return;
        }
        for k in 0..self.set.len() {
            let i = self.set[k];
            if let Err(kind) = self.exec_lane(ctx, op, i) {
                self.fail(ctx, i, b, Some(op.inst), kind);
            }
        }
    }

    /// One non-cross-lane instruction for lane `i`. Argument and result counts
    /// fit the kind: `Program::new` turned every op that does not into `Malformed`.
    fn exec_lane(&mut self, ctx: &Ctx, op: &Op, i: usize) -> Result<(), FaultKind> {
        let Workgroup { lanes, shared, .. } = self;
        let lane = &mut lanes[i];
        let arg = |k: usize| lane.values[op.args[k]];
        match &op.kind {
            OpKind::Const(bits) => lane.values[op.results[0]] = *bits,
            OpKind::Pure(kind) => {
                let mut args = [0u64; 8];
                let mut out = [0u64; 4];
                let (Some(args), Some(out)) = (
                    args.get_mut(..op.args.len()),
                    out.get_mut(..op.results.len()),
                ) else {
                    return Err(malformed());
                };
                for (a, &slot) in args.iter_mut().zip(op.args.iter()) {
                    *a = lane.values[slot];
                }
                if !eval_pure(kind, &op.arg_tys, args, out) {
                    return Err(malformed());
                }
                for (&slot, &v) in op.results.iter().zip(out.iter()) {
                    lane.values[slot] = v;
                }
            }
            OpKind::Builtin(bi) => {
                let v = builtin(ctx, *bi, self.workgroup, lane.local, i).ok_or_else(malformed)?;
                lane.values[op.results[0]] = u64::from(v);
            }
            OpKind::Load(a) => {
                let mut out = [0u64; 4];
                let out = out.get_mut(..op.results.len()).ok_or_else(malformed)?;
                let mem = LaneMemory {
                    global: ctx.memory,
                    uniforms: &ctx.dispatch.uniforms,
                    shared,
                    private: &mut lane.private,
                };
                mem.load(a, lane.values[op.args[0]], out)?;
                for (&slot, &v) in op.results.iter().zip(out.iter()) {
                    lane.values[slot] = v;
                }
            }
            OpKind::Store(a) => {
                let mut vals = [0u64; 4];
                let vals = vals
                    .get_mut(..op.args.len().saturating_sub(1))
                    .ok_or_else(malformed)?;
                for (v, &slot) in vals.iter_mut().zip(op.args[1..].iter()) {
                    *v = lane.values[slot];
                }
                let addr = arg(0);
                let mut mem = LaneMemory {
                    global: ctx.memory,
                    uniforms: &ctx.dispatch.uniforms,
                    shared,
                    private: &mut lane.private,
                };
                mem.store(a, addr, vals)?;
            }
            OpKind::Atomic { space, op: aop, ty } => {
                let (addr, a) = (arg(0), arg(1));
                let b = if op.args.len() > 2 { arg(2) } else { 0 };
                let mut mem = LaneMemory {
                    global: ctx.memory,
                    uniforms: &ctx.dispatch.uniforms,
                    shared,
                    private: &mut lane.private,
                };
                let old = mem.atomic(*space, *aop, *ty, addr, a, b)?;
                lane.values[op.results[0]] = old;
            }
            OpKind::Barrier => {
                lane.state = LaneState::Parked;
                self.set_changed = true;
            }
            OpKind::Fence => {}
            OpKind::Trap(code) => return Err(FaultKind::Trap { code: *code }),
            OpKind::Wave(_) | OpKind::Malformed => return Err(malformed()),
        }
        Ok(())
    }

    /// A cross-lane instruction over the co-active set of the wave `lo..hi`.
    fn exec_wave(
        &mut self,
        ctx: &Ctx,
        b: usize,
        op: &Op,
        kind: &crate::inst::InstKind,
        lo: usize,
        hi: usize,
    ) {
        let n = hi - lo;
        let mut executing = vec![false; n];
        for &i in &self.set {
            executing[i - lo] = true;
        }
        let cols: Vec<Vec<u64>> = op
            .args
            .iter()
            .map(|&slot| {
                (lo..hi)
                    .map(|i| {
                        if executing[i - lo] {
                            self.lanes[i].values[slot]
                        } else {
                            0
                        }
                    })
                    .collect()
            })
            .collect();
        let col_refs: Vec<&[u64]> = cols.iter().map(Vec::as_slice).collect();
        let mut out = vec![0u64; n];
        let ok =
            op.results.len() == 1 && eval_wave(kind, &op.arg_tys, &executing, &col_refs, &mut out);
        for k in 0..self.set.len() {
            let i = self.set[k];
            if ok {
                self.lanes[i].values[op.results[0]] = out[i - lo];
            } else {
                self.fail(ctx, i, b, Some(op.inst), malformed());
            }
        }
    }

    /// The terminator of block `b` for lane `i`.
    fn exec_term(&mut self, ctx: &Ctx, b: usize, term: &Term, i: usize) {
        let values = &self.lanes[i].values;
        let edge = match term {
            Term::Jump(e) => e,
            Term::Branch {
                cond,
                then,
                otherwise,
            } => {
                if values[*cond] & 1 != 0 {
                    then
                } else {
                    otherwise
                }
            }
            Term::Table {
                index,
                targets,
                default,
            } => {
                let k = values[*index] & 0xffff_ffff;
                usize::try_from(k)
                    .ok()
                    .and_then(|k| targets.get(k))
                    .unwrap_or(default)
            }
            Term::Exit => {
                self.lanes[i].state = LaneState::Done;
                return;
            }
            Term::Malformed => {
                self.fail(ctx, i, b, None, malformed());
                return;
            }
        };
        self.take_edge(ctx, edge, i);
    }

    /// Moves block arguments (in parallel) and enters the target block.
    fn take_edge(&mut self, ctx: &Ctx, edge: &Edge, i: usize) {
        let lane = &mut self.lanes[i];
        self.moves.clear();
        self.moves
            .extend(edge.moves.iter().map(|&(src, _)| lane.values[src]));
        for (&(_, dst), &v) in edge.moves.iter().zip(&self.moves) {
            lane.values[dst] = v;
        }
        lane.pc = (edge.block, 0);
        lane.steps += 1;
        if lane.steps > ctx.dispatch.step_limit {
            let limit = ctx.dispatch.step_limit;
            self.fail(ctx, i, edge.block, None, FaultKind::Watchdog { limit });
        }
    }

    /// Stops lane `i` with a fault at block number `b`; keeps the lowest lane's.
    fn fail(&mut self, ctx: &Ctx, i: usize, b: usize, inst: Option<Inst>, kind: FaultKind) {
        self.set_changed = true;
        let lane = &mut self.lanes[i];
        lane.state = LaneState::Done;
        if self.fault.as_ref().is_some_and(|(j, _)| *j < i) {
            return;
        }
        let block = ctx
            .prog
            .blocks
            .get(b)
            .map_or(Block::from_u32(0), |c| c.block);
        let fault = Fault {
            kernel: ctx.kernel.name.clone(),
            block,
            inst,
            guest_pc: inst.and_then(|x| ctx.kernel.srclocs[x].0),
            lane: LaneId {
                workgroup: self.workgroup,
                local: lane.local,
            },
            kind,
        };
        self.fault = Some((i, fault));
    }
}

/// A zeroed vector, or `None` if the host cannot allocate it (a kernel's sizes
/// are input data; running out of memory must not abort the process).
fn zeroed<T: Copy + Default>(len: usize) -> Option<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).ok()?;
    v.resize(len, T::default());
    Some(v)
}

fn malformed() -> FaultKind {
    FaultKind::Trap {
        code: MALFORMED_TRAP,
    }
}

/// The value of a builtin for the lane with linear local index `index`.
fn builtin(ctx: &Ctx, b: Builtin, wg: [u32; 3], local: [u32; 3], index: usize) -> Option<u32> {
    let d = ctx.dispatch;
    let dim = |x: &[u32; 3], k: u8| x.get(usize::from(k)).copied();
    Some(match b {
        Builtin::LocalId(k) => dim(&local, k)?,
        Builtin::WorkgroupId(k) => dim(&wg, k)?,
        Builtin::WorkgroupSize(k) => dim(&d.workgroup_size, k)?,
        Builtin::NumWorkgroups(k) => dim(&d.workgroups, k)?,
        Builtin::LocalIndex => index as u32,
        Builtin::LaneId => (index % ctx.wave_size) as u32,
        Builtin::WaveId => (index / ctx.wave_size) as u32,
        Builtin::WaveSize => d.wave_size,
    })
}
