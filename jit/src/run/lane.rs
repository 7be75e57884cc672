//! The lane core's Rust side of a batch: lane setup, the lowest-pc-first scheduler that calls
//! compiled segments, barriers, cross-lane instructions and fault reports.
//!
//! The schedule is the interpreter's, per workgroup: in each round, wave 0 runs
//! until none of its lanes is runnable, then wave 1, ...; then parked lanes are
//! released. The batch runs wave `w` of all its workgroups together: each
//! workgroup's wave keeps its own minimum pc and co-active set, and waves of
//! different workgroups that share a minimum pc run in one call.

use wavejit_ir::semantics::wave::eval_wave;
use wavejit_ir::{Block, Dispatch, Fault, FaultKind, GlobalMemory, Inst, InstKind, Kernel, LaneId};

use crate::abi::{BatchCtx, GcEntry, LaneRec, NO_FAULT, PC_DEAD, WATCHDOG_FAULT};
use crate::buffers::Buffers;
use crate::compiled::Compiled;
use crate::host::{HostCtx, LaneFault, fault_kind};
use crate::plan::PcKind;

/// One worker's batch state, reused from batch to batch.
pub struct Runner<'a> {
    c: &'a Compiled,
    dispatch: &'a Dispatch,
    host: HostCtx<'a>,
    /// Lanes per workgroup.
    wg_lanes: usize,
    slots: usize,
    wave_size: usize,
    bufs: Buffers,
    /// The inline global-region caches, one per access site, carried from
    /// call to call.
    gc: Vec<GcEntry>,
    fault: Option<LaneFault>,
    /// Linear id of the batch's first workgroup.
    first: u64,
}

impl<'a> Runner<'a> {
    pub fn new(
        c: &'a Compiled,
        kernel: &'a Kernel,
        dispatch: &'a Dispatch,
        memory: &'a dyn GlobalMemory,
        bufs: Buffers,
    ) -> Runner<'a> {
        let wg_lanes = dispatch.lanes_per_workgroup() as usize;
        let slots = c.lanes / wg_lanes.max(1);
        let n = c.lanes;
        let mut bufs = bufs;
        // Every batch's `setup` re-initialises lane records, shared and private
        // memory and parked flags; slab slots are always written before they
        // are read (SSA dominance), so recycled buffers only need the sizes.
        bufs.regs.resize(kernel.values.len() * n, 0);
        bufs.recs.resize(n, LaneRec::EMPTY);
        let (ss, ps) = (c.shared_bytes, c.private_bytes);
        bufs.shared.resize(ss * slots, 0);
        bufs.private.resize(ps * n, 0);
        bufs.parked.resize(n, false);
        bufs.wave_min.resize(slots, PC_DEAD);
        bufs.wave_next.resize(slots, PC_DEAD);
        // The per-lane fields that do not change from batch to batch, set once
        // per dispatch (the divisions of `local_id` cost more than a short
        // kernel's lane).
        let wave_size = dispatch.wave_size as usize;
        let shared = bufs.shared.as_mut_ptr() as u64;
        let private = bufs.private.as_mut_ptr() as u64;
        let wgl = wg_lanes.max(1);
        for (lane, rec) in bufs.recs.iter_mut().enumerate() {
            let (slot, local) = (lane / wgl, lane % wgl);
            *rec = LaneRec {
                shared: shared + (slot * ss) as u64,
                private: private + (lane * ps) as u64,
                local_index: local as u32,
                local: dispatch.local_id(local as u32),
                lane_id: (local % wave_size.max(1)) as u32,
                wave_id: (local / wave_size.max(1)) as u32,
                ..LaneRec::EMPTY
            };
        }
        Runner {
            c,
            dispatch,
            host: HostCtx::new(kernel, &c.arg_tys, &c.plan, memory),
            wg_lanes,
            slots,
            wave_size,
            bufs,
            gc: vec![GcEntry::default(); (c.plan.gc_sites as usize).max(1)],
            fault: None,
            first: 0,
        }
    }

    /// The compiled kernel this runner runs.
    pub fn compiled(&self) -> &'a Compiled {
        self.c
    }

    /// Steps (blocks entered) the lanes of the last batch's first `count`
    /// workgroups took: its cost, loops included.
    pub fn lane_steps(&self, count: usize) -> u64 {
        let lanes = (count * self.wg_lanes).min(self.bufs.recs.len());
        self.bufs.recs[..lanes]
            .iter()
            .map(|r| r.steps.saturating_sub(1))
            .fold(0, u64::saturating_add)
    }

    /// The buffers, for the next dispatch of the same compiled kernel.
    pub fn into_buffers(self) -> Buffers {
        self.bufs
    }

    /// Runs workgroups `first .. first + count` (count <= slots); returns the fault
    /// of their lowest faulting lane.
    pub fn run_batch(&mut self, first: u64, count: usize) -> Option<LaneFault> {
        self.fault = None;
        self.first = first;
        self.setup(first, count);
        let waves = self.wg_lanes.div_ceil(self.wave_size);
        // In the first round each wave starts with all lanes of the live
        // workgroups at the entry (unless the step limit stopped them).
        let mut fresh = (self.dispatch.step_limit >= 1).then_some(count);
        loop {
            for w in 0..waves {
                self.run_wave(w, fresh);
            }
            fresh = None;
            // Most kernels have no barrier: a quick test before the release pass.
            if !self.bufs.parked.contains(&true) {
                break;
            }
            let mut released = false;
            for (rec, parked) in self.bufs.recs.iter_mut().zip(self.bufs.parked.iter_mut()) {
                if *parked {
                    *parked = false;
                    rec.pc += 1;
                    released = true;
                }
            }
            if !released {
                break;
            }
        }
        self.fault.take()
    }

    fn setup(&mut self, first: u64, count: usize) {
        self.bufs.shared.fill(0);
        self.bufs.private.fill(0);
        self.bufs.parked.fill(false);
        let wgl = self.wg_lanes.max(1);
        for (slot, recs) in self.bufs.recs.chunks_mut(wgl).enumerate() {
            let group = self.dispatch.workgroup_id(first + slot as u64);
            let live = slot < count;
            for rec in recs {
                // The entry block is block 0, at linear pc 0.
                rec.pc = if live { 0 } else { PC_DEAD };
                rec.fault = NO_FAULT;
                rec.steps = 1;
                rec.fault_addr = 0;
                rec.group = group;
            }
        }
        if self.dispatch.step_limit < 1 {
            for lane in 0..self.bufs.recs.len() {
                if self.bufs.recs[lane].pc != PC_DEAD {
                    self.bufs.recs[lane].fault = WATCHDOG_FAULT;
                    self.bufs.recs[lane].fault_addr = 0;
                    self.report(lane);
                }
            }
        }
    }

    /// Runs wave `w` of every workgroup of the batch until none of its lanes is
    /// runnable. `fresh`: the first `fresh` workgroups have all lanes of the
    /// wave at the entry, so the first co-active set needs no scan.
    fn run_wave(&mut self, w: usize, fresh: Option<usize>) {
        let lo = w * self.wave_size;
        let hi = (lo + self.wave_size).min(self.wg_lanes);
        let mut fresh = fresh.filter(|&count| count > 0);
        loop {
            let (best, limit) = match fresh.take() {
                Some(count) => self.entry_set(count, lo, hi),
                None => match self.next_set(lo, hi) {
                    Some(set) => set,
                    None => return,
                },
            };
            match self.c.plan.kind(best) {
                PcKind::Segment(seg) => self.segment(seg, limit),
                PcKind::Sync(inst) => self.sync(inst, best, lo, hi),
                PcKind::Inner => {
                    // Unreachable for verified kernels; stop the lanes rather than spin.
                    for k in 0..self.bufs.list.len() {
                        let lane = self.bufs.list[k] as usize;
                        self.bufs.recs[lane].pc = PC_DEAD;
                    }
                }
            }
        }
    }

    /// The co-active set of a fresh wave: every lane of the first `count`
    /// workgroups at pc 0, nothing else runnable. Returns (pc, limit).
    fn entry_set(&mut self, count: usize, lo: usize, hi: usize) -> (u32, u32) {
        self.bufs.list.clear();
        for s in 0..self.slots {
            let live = s < count;
            self.bufs.wave_min[s] = if live { 0 } else { PC_DEAD };
            self.bufs.wave_next[s] = PC_DEAD;
            if live {
                let base = s * self.wg_lanes;
                self.bufs
                    .list
                    .extend((base + lo..base + hi).map(|l| l as u32));
            }
        }
        (0, PC_DEAD)
    }

    /// The next co-active set of wave lanes `lo..hi` (lowest pc first) into
    /// the list; returns (pc, limit), or `None` when no lane is runnable.
    fn next_set(&mut self, lo: usize, hi: usize) -> Option<(u32, u32)> {
        let mut best = PC_DEAD;
        for s in 0..self.slots {
            let range = s * self.wg_lanes + lo..s * self.wg_lanes + hi;
            let recs = &self.bufs.recs[range.clone()];
            let parked = &self.bufs.parked[range];
            // The lowest and second lowest pc of the wave's runnable lanes.
            let pc_of = |(rec, &p): (&LaneRec, &bool)| if p { PC_DEAD } else { rec.pc };
            let first = recs
                .iter()
                .zip(parked)
                .map(pc_of)
                .find(|&pc| pc != PC_DEAD)
                .unwrap_or(PC_DEAD);
            // Usually every runnable lane is at the same pc: one pass
            // without a dependency chain tells.
            let together = recs
                .iter()
                .zip(parked)
                .map(pc_of)
                .fold(true, |t, pc| t & (pc == first || pc == PC_DEAD));
            let (mut m, mut m2) = (first, PC_DEAD);
            if !together {
                m = PC_DEAD;
                for pc in recs.iter().zip(parked).map(pc_of) {
                    if pc < m {
                        m2 = m;
                        m = pc;
                    } else if pc != m && pc < m2 {
                        m2 = pc;
                    }
                }
            }
            self.bufs.wave_min[s] = m;
            self.bufs.wave_next[s] = m2;
            best = best.min(m);
        }
        if best == PC_DEAD {
            return None;
        }
        // Compiled code may run on while the set stays below every other lane
        // of its waves.
        let limit = (0..self.slots)
            .filter(|&s| self.bufs.wave_min[s] == best)
            .map(|s| self.bufs.wave_next[s])
            .min()
            .unwrap_or(PC_DEAD);
        self.bufs.list.clear();
        for s in 0..self.slots {
            if self.bufs.wave_min[s] != best {
                continue;
            }
            let base = s * self.wg_lanes + lo;
            let range = base..s * self.wg_lanes + hi;
            let recs = &self.bufs.recs[range.clone()];
            let parked = &self.bufs.parked[range];
            let list = &mut self.bufs.list;
            for (i, (rec, &p)) in recs.iter().zip(parked).enumerate() {
                if rec.pc == best && !p {
                    list.push((base + i) as u32);
                }
            }
        }
        Some((best, limit))
    }

    fn ctx(&mut self) -> BatchCtx {
        BatchCtx {
            regs: self.bufs.regs.as_mut_ptr(),
            lanes: self.bufs.recs.as_mut_ptr(),
            uniforms: self.dispatch.uniforms.as_ptr(),
            uniforms_len: self.dispatch.uniforms.len() as u64,
            step_limit: self.dispatch.step_limit,
            host: (&raw const self.host).cast(),
            workgroup_size: self.dispatch.workgroup_size,
            num_workgroups: self.dispatch.workgroups,
            wave_size: self.dispatch.wave_size,
            seg_of_pc: self.c.seg_of_pc.as_ptr(),
            gc: self.gc.as_mut_ptr(),
        }
    }

    /// Runs segment `seg` for the listed lanes.
    fn segment(&mut self, seg: u32, limit: u32) {
        let mut ctx = self.ctx();
        // `run::run_dispatch` compiled the lane code before making a runner.
        let Ok(code) = self.c.lane_code() else {
            return;
        };
        // SAFETY: the code was compiled for `self.c.lanes` lanes and this kernel;
        // every pointer in `ctx` refers to this runner's buffers of that size, and
        // `list` holds `list.len()` increasing lane indices below `lanes`.
        let _ieee = wavejit_ir::host_float_env::Ieee::enter();
        let faulted = unsafe {
            (code.func)(
                &mut ctx,
                seg,
                self.bufs.list.as_ptr(),
                self.bufs.list.len() as u32,
                limit,
            )
        };
        if faulted != 0 {
            for k in 0..self.bufs.list.len() {
                let lane = self.bufs.list[k] as usize;
                if self.bufs.recs[lane].fault != NO_FAULT {
                    self.report(lane);
                }
            }
        }
    }

    /// A barrier or cross-lane instruction at `pc` for the listed lanes.
    fn sync(&mut self, inst: Inst, pc: u32, lo: usize, hi: usize) {
        let kernel = self.host.kernel;
        let data = &kernel.insts[inst];
        if data.kind == InstKind::Barrier {
            for &lane in &self.bufs.list {
                self.bufs.parked[lane as usize] = true;
            }
            return;
        }
        let n = self.c.lanes;
        let width = hi - lo;
        let mut executing = vec![false; width];
        let mut cols = vec![vec![0u64; width]; data.args.len()];
        let mut out = vec![0u64; width];
        for s in 0..self.slots {
            if self.bufs.wave_min[s] != pc {
                continue;
            }
            let base = s * self.wg_lanes + lo;
            executing.fill(false);
            for (i, e) in executing.iter_mut().enumerate() {
                let lane = base + i;
                *e = self.bufs.recs[lane].pc == pc && !self.bufs.parked[lane];
            }
            for (col, &v) in cols.iter_mut().zip(&data.args) {
                for (i, c) in col.iter_mut().enumerate() {
                    *c = if executing[i] {
                        self.bufs.regs[v.as_u32() as usize * n + base + i]
                    } else {
                        0
                    };
                }
            }
            let refs: Vec<&[u64]> = cols.iter().map(Vec::as_slice).collect();
            let tys = &self.c.arg_tys[inst.as_u32() as usize];
            let ok =
                data.results.len() == 1 && eval_wave(&data.kind, tys, &executing, &refs, &mut out);
            for i in 0..width {
                if !executing[i] {
                    continue;
                }
                let lane = base + i;
                if ok {
                    self.bufs.regs[data.results[0].as_u32() as usize * n + lane] = out[i];
                    self.bufs.recs[lane].pc = pc + 1;
                } else {
                    self.bufs.recs[lane].fault = inst.as_u32();
                    self.report(lane);
                }
            }
        }
    }

    /// Turns lane `lane`'s fault record into a `Fault`, stops the lane and keeps
    /// the fault if it is the lowest so far.
    fn report(&mut self, lane: usize) {
        let rec = self.bufs.recs[lane];
        self.bufs.recs[lane].pc = PC_DEAD;
        self.bufs.parked[lane] = false;
        let wgl = self.wg_lanes.max(1);
        let (slot, local) = (lane / wgl, lane % wgl);
        let key = u128::from(self.first + slot as u64) * wgl as u128 + local as u128;
        if self.fault.as_ref().is_some_and(|(k, _)| *k < key) {
            return;
        }
        let kernel = self.host.kernel;
        let (block, inst, kind) = if rec.fault == WATCHDOG_FAULT {
            (
                Block::from_u32(rec.fault_addr as u32),
                None,
                FaultKind::Watchdog {
                    limit: self.dispatch.step_limit,
                },
            )
        } else {
            let inst = Inst::from_u32(rec.fault);
            let block = self.c.inst_block[inst];
            (block, Some(inst), self.fault_kind(inst, rec.fault_addr))
        };
        let fault = Fault {
            kernel: kernel.name.clone(),
            block,
            inst,
            guest_pc: inst.and_then(|i| kernel.srclocs[i].0),
            lane: LaneId {
                workgroup: rec.group,
                local: rec.local,
            },
            kind,
        };
        self.fault = Some((key, fault));
    }

    fn fault_kind(&self, inst: Inst, addr: u64) -> FaultKind {
        fault_kind(self.host.kernel, self.host.memory, inst, addr)
    }
}
