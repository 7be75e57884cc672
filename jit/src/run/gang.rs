//! The gang core's Rust side of a batch: per-lane arrays set up once per dispatch,
//! lanes reset per batch, one compiled call per batch (it runs the rounds and
//! releases barriers itself), and the fault report.
//!
//! The schedule is the interpreter's: per workgroup, wave after wave, each wave
//! lowest pc first, parked lanes released when no lane of the workgroup can
//! run. Compiled code runs a wave's co-active lanes chunk by chunk through each
//! run of a segment (`plan::Run`: any loads or one store), which other lanes
//! cannot tell from lane order, so memory effects equal the interpreter's.

use wavejit_ir::{Block, Dispatch, Fault, FaultKind, GlobalMemory, Inst, LaneId};

use crate::abi::GcEntry;
use crate::buffers::GangBuffers;
use crate::gang::GangCode;
use crate::gang::abi::{GangCtx, NO_FAULT, PAD, PC_DEAD, WATCHDOG_FAULT, WAVE_LANES};
use crate::gang::host::GangHost;
use crate::host::{HostCtx, LaneFault, fault_kind};

/// One worker's gang batch state.
pub struct GangRunner<'a> {
    c: &'a crate::compiled::Compiled,
    code: &'a GangCode,
    host: Box<GangHost<'a>>,
    bufs: GangBuffers,
    gc: Vec<GcEntry>,
    wg_lanes: usize,
    first: u64,
    /// The kernel has edges, so the compiled code counts steps.
    counts_steps: bool,
    /// A lane of the last batch faulted (the fault array needs a reset).
    faults_left: bool,
}

impl<'a> GangRunner<'a> {
    pub fn new(
        code: &'a GangCode,
        c: &'a crate::compiled::Compiled,
        dispatch: &'a Dispatch,
        memory: &'a dyn GlobalMemory,
        bufs: GangBuffers,
    ) -> GangRunner<'a> {
        let n = c.lanes;
        let padded = n + PAD;
        let wg_lanes = dispatch.lanes_per_workgroup().max(1) as usize;
        let slots = (n / wg_lanes).max(1);
        let mut bufs = bufs;
        // Slab areas are read a chunk at a time; the last value's chunk may run
        // PAD lanes past its area.
        bufs.regs.resize(c.kernel.values.len().max(1) * n + PAD, 0);
        bufs.pc.resize(crate::gang::abi::pc_lanes(n), PC_DEAD);
        bufs.steps.resize(padded, 0);
        bufs.fault.resize(padded, NO_FAULT);
        bufs.fault_addr.resize(padded, 0);
        let wave = dispatch.wave_size.max(1) as usize;
        let fill = |v: &mut Vec<u32>, f: &dyn Fn(usize) -> u32| {
            v.clear();
            v.extend((0..padded).map(|l| if l < slots * wg_lanes { f(l) } else { 0 }));
        };
        fill(&mut bufs.local_index, &|l| (l % wg_lanes) as u32);
        for d in 0..3 {
            fill(&mut bufs.local[d], &|l| {
                dispatch.local_id((l % wg_lanes) as u32)[d]
            });
        }
        fill(&mut bufs.lane_id, &|l| ((l % wg_lanes) % wave) as u32);
        fill(&mut bufs.wave_id, &|l| ((l % wg_lanes) / wave) as u32);
        let waves = slots * wg_lanes.div_ceil(wave);
        bufs.wave_state.resize(waves, WAVE_LANES);
        bufs.wave_steps.resize(2 * waves, 0);
        bufs.group.resize(slots, [0; 4]);
        bufs.shared.resize(c.shared_bytes * slots, 0);
        let base = bufs.shared.as_mut_ptr() as u64;
        bufs.shared_ptr.clear();
        bufs.shared_ptr
            .extend((0..slots).map(|s| base + (s * c.shared_bytes) as u64));
        bufs.private.resize(c.private_bytes * padded, 0);
        let host = Box::new(GangHost {
            hc: HostCtx::new(&c.kernel, &c.arg_tys, &c.gang_plan, memory),
            dispatch,
            lanes: n,
            chunk: code.chunk,
            shared_bytes: c.shared_bytes,
            private_bytes: c.private_bytes,
        });
        GangRunner {
            c,
            code,
            host,
            bufs,
            gc: vec![GcEntry::default(); (c.gang_plan.gc_sites as usize).max(1)],
            wg_lanes,
            first: 0,
            counts_steps: c
                .kernel
                .blocks
                .values()
                .any(|b| !matches!(b.term, Some(wavejit_ir::Terminator::Exit))),
            faults_left: true,
        }
    }

    /// The compiled kernel this runner runs.
    pub fn compiled(&self) -> &'a crate::compiled::Compiled {
        self.c
    }

    pub fn into_buffers(self) -> GangBuffers {
        self.bufs
    }

    fn ctx(&mut self, live: usize) -> GangCtx {
        let d = self.host.dispatch;
        let b = &mut self.bufs;
        GangCtx {
            regs: b.regs.as_mut_ptr().cast(),
            pc: b.pc.as_mut_ptr(),
            steps: b.steps.as_mut_ptr(),
            fault: b.fault.as_mut_ptr(),
            fault_addr: b.fault_addr.as_mut_ptr(),
            local_index: b.local_index.as_ptr(),
            local_x: b.local[0].as_ptr(),
            local_y: b.local[1].as_ptr(),
            local_z: b.local[2].as_ptr(),
            lane_id: b.lane_id.as_ptr(),
            wave_id: b.wave_id.as_ptr(),
            group: b.group.as_ptr().cast(),
            shared: b.shared_ptr.as_ptr(),
            private: b.private.as_mut_ptr(),
            private_size: self.host.private_bytes as u64,
            uniforms: d.uniforms.as_ptr(),
            uniforms_len: d.uniforms.len() as u64,
            workgroup_size: d.workgroup_size,
            num_workgroups: d.workgroups,
            wave_size: d.wave_size,
            step_limit: d.step_limit.min(u64::from(u32::MAX - 1)) as u32,
            wg_lanes: self.wg_lanes as u32,
            live_slots: live as u32,
            entry_of_pc: self.code.entry_of_pc.as_ptr(),
            gc: self.gc.as_mut_ptr(),
            host: (&raw const *self.host).cast(),
            faulted: 0,
            waves_per_slot: self.wg_lanes.div_ceil(d.wave_size.max(1) as usize) as u32,
            wave_state: b.wave_state.as_mut_ptr(),
            wave_steps: b.wave_steps.as_mut_ptr(),
        }
    }

    /// Runs workgroups `first .. first + count` (count <= slots); returns the
    /// fault of their lowest faulting lane.
    pub fn run_batch(&mut self, first: u64, count: usize) -> Option<LaneFault> {
        self.first = first;
        let live_lanes = count * self.wg_lanes;
        let d = self.host.dispatch;
        {
            let b = &mut self.bufs;
            // Not even an empty fill: memset's AVX-512 path costs a
            // power-state change per call on some hosts (20% of a small
            // saxpy batch measured here).
            if !b.shared.is_empty() {
                b.shared.fill(0);
            }
            if !b.private.is_empty() {
                b.private.fill(0);
            }
            // The pcs are set by the compiled code (a vector loop: cheaper
            // than a memset call per batch). Steps and faults are written
            // only by edges and faults: reset when they were.
            if self.counts_steps {
                b.steps.fill(1);
            }
            if self.faults_left || d.step_limit < 1 {
                b.fault.fill(NO_FAULT);
            }
            for (s, g) in b.group.iter_mut().enumerate() {
                let id = d.workgroup_id(first + s as u64);
                *g = [id[0], id[1], id[2], 0];
            }
            if d.step_limit < 1 {
                // The interpreter faults every lane at the entry.
                b.fault[..live_lanes].fill(WATCHDOG_FAULT);
                b.fault_addr[..live_lanes].fill(0);
            }
        }
        let mut ctx = self.ctx(count);
        // SAFETY: the code was compiled for this kernel and `self.host.lanes`
        // lanes; every pointer in `ctx` refers to this runner's buffers of that
        // size (plus PAD lanes) or to the dispatch.
        let flush = self.code.hw_flush;
        let ieee = wavejit_ir::host_float_env::Ieee::enter_flushing(flush >= 1, flush >= 2);
        let faulted = unsafe { (self.code.func)(&mut ctx) } != 0 || d.step_limit < 1;
        drop(ieee);
        self.faults_left = faulted;
        if faulted { self.lowest_fault() } else { None }
    }

    /// The fault of the first faulting lane (lanes are in (slot, local) order).
    fn lowest_fault(&self) -> Option<LaneFault> {
        let lane = self.bufs.fault.iter().position(|&f| f != NO_FAULT)?;
        let (code, addr) = (self.bufs.fault[lane], self.bufs.fault_addr[lane]);
        let kernel = self.host.hc.kernel;
        let (slot, local) = (lane / self.wg_lanes, lane % self.wg_lanes);
        let key = u128::from(self.first + slot as u64) * self.wg_lanes as u128 + local as u128;
        let (block, inst, kind) = if code == WATCHDOG_FAULT {
            (
                Block::from_u32(addr as u32),
                None,
                FaultKind::Watchdog {
                    limit: self.host.dispatch.step_limit,
                },
            )
        } else {
            let inst = Inst::from_u32(code);
            let block = self.c.inst_block[inst];
            (
                block,
                Some(inst),
                fault_kind(kernel, self.host.hc.memory, inst, addr),
            )
        };
        let g = self.bufs.group[slot];
        let fault = Fault {
            kernel: kernel.name.clone(),
            block,
            inst,
            guest_pc: inst.and_then(|i| kernel.srclocs[i].0),
            lane: LaneId {
                workgroup: [g[0], g[1], g[2]],
                local: self.host.dispatch.local_id(local as u32),
            },
            kind,
        };
        Some((key, fault))
    }
}
