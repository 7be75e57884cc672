//! Small workgroups packed side by side: a dispatch of `G` workgroups of
//! `W` lanes each (one wave per workgroup) becomes one of `G / P`
//! workgroups of `P * W` lanes, each a single wave holding `P` of the
//! original workgroups, and the kernel computes each lane's original ids
//! from its packed ones.
//!
//! Why: tinygrad's reductions to a few values run one lane per workgroup
//! (`r_4375_3_13125`: 4375 workgroups of 1 lane, each looping 13125 times).
//! An engine that keeps lanes of a workgroup together then runs every loop
//! iteration for one lane; packed, a gang's vectors hold lanes of 16
//! workgroups.
//!
//! Why the run is the same: the interpreter runs workgroups one after the
//! other and each of these as a single wave, lowest pc first. In the packed
//! wave the lanes at the lowest pc of the whole wave run; lanes of one
//! original workgroup at that pc are exactly those at their own lowest pc,
//! so each original workgroup performs its instructions in its own order,
//! interleaved with the others'. That interleaving is invisible when
//! workgroups cannot see each other: no cross-lane instruction, no barrier,
//! no shared memory (each workgroup had its own), no atomics (their old
//! values would show the order) — and no global byte written by one
//! workgroup and touched by another, which is the dispatch's own contract
//! (engines already run workgroups on several threads at once; see the
//! README's execution model). No block is added, so the watchdog counts the
//! same steps; the new instructions (integer arithmetic on builtins) cannot
//! fault; instruction, block and value ids of the original stay, so faults
//! name the same place, and [`WorkgroupPacking::original_fault`] names the
//! original lane. `P` divides `G`, so no lane is added either.

use crate::dispatch::{Dispatch, local_id_in, workgroup_id_in};
use crate::entities::Value;
use crate::fault::{Fault, LaneId};
use crate::inst::{AddrSpace, Builtin, IBinOp, InstKind};
use crate::kernel::Kernel;
use crate::types::Type;

/// Most lanes of a packed workgroup: a few gangs' worth, so a wave's lowest
/// pc search stays short.
pub const MAX_PACKED_LANES: u32 = 128;

/// Fewest lanes of a packed workgroup worth packing for (one gang of the
/// JIT's gang core).
pub const MIN_PACKED_LANES: u32 = 16;

/// How a dispatch's workgroups are packed: `per_pack` consecutive
/// workgroups (in linear order) form one packed workgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WorkgroupPacking {
    per_pack: u32,
    /// The original grid.
    workgroups: [u32; 3],
    /// The original workgroup shape.
    workgroup_size: [u32; 3],
    /// The original wave size.
    wave_size: u32,
}

impl WorkgroupPacking {
    /// The packing of `dispatch` for `kernel`, or `None` when the kernel lets
    /// workgroups see each other, a workgroup is more than one wave or
    /// already [`MIN_PACKED_LANES`] lanes, or no divisor of the workgroup
    /// count gives a pack of [`MIN_PACKED_LANES`] to [`MAX_PACKED_LANES`] lanes.
    pub fn plan(kernel: &Kernel, dispatch: &Dispatch) -> Option<WorkgroupPacking> {
        let w = dispatch.lanes_per_workgroup();
        if w == 0 || w >= MIN_PACKED_LANES || w > dispatch.wave_size {
            return None;
        }
        let groups = u32::try_from(dispatch.workgroup_count()).ok()?;
        let per_pack = (2..=MAX_PACKED_LANES / w).rev().find(|p| groups % p == 0)?;
        if per_pack * w < MIN_PACKED_LANES || !workgroups_independent(kernel) {
            return None;
        }
        Some(WorkgroupPacking {
            per_pack,
            workgroups: dispatch.workgroups,
            workgroup_size: dispatch.workgroup_size,
            wave_size: dispatch.wave_size,
        })
    }

    /// Original workgroups per packed workgroup.
    pub fn per_pack(&self) -> u32 {
        self.per_pack
    }

    fn lanes_per_group(&self) -> u32 {
        self.workgroup_size.iter().product()
    }

    /// The packed dispatch: one dimension, one wave per workgroup.
    pub fn dispatch(&self, dispatch: &Dispatch) -> Dispatch {
        let groups = self.workgroups.iter().product::<u32>() / self.per_pack;
        let lanes = self.per_pack * self.lanes_per_group();
        Dispatch {
            workgroups: [groups, 1, 1],
            workgroup_size: [lanes, 1, 1],
            wave_size: lanes,
            ..dispatch.clone()
        }
    }

    /// `kernel` reading its builtins through the packing: each builtin's
    /// uses take the original value, computed at the top of the entry block.
    pub fn kernel(&self, kernel: &Kernel) -> Kernel {
        let mut k = kernel.clone();
        let Some(entry) = k.entry() else {
            return k;
        };
        let old = std::mem::take(&mut k.blocks[entry].insts);
        let mut at = Emit { k: &mut k, entry };
        let original = self.original_builtins(&mut at);
        // The instructions just emitted read the packed dispatch's builtins.
        let new = k.blocks[entry].insts.clone();
        k.blocks[entry].insts.extend(old);
        // Builtins may sit in any block (lifters read them where the guest
        // reads the register).
        let mut alias: Vec<(Value, Value)> = Vec::new();
        for block in k.blocks.values() {
            for &inst in &block.insts {
                let data = &k.insts[inst];
                if let InstKind::Builtin(b) = data.kind
                    && let Some(&r) = data.results.first()
                    && !new.contains(&inst)
                {
                    alias.push((r, original(b)));
                }
            }
        }
        super::compact::map_uses(&mut k, |v| {
            if let Some(&(_, to)) = alias.iter().find(|(from, _)| from == v) {
                *v = to;
            }
        });
        // No instruction reaches shared memory (see `plan`); one packed
        // workgroup needs none.
        k.shared_size = 0;
        k
    }

    /// Emits the original builtins' values; returns a lookup by builtin.
    fn original_builtins(&self, at: &mut Emit<'_>) -> impl Fn(Builtin) -> Value + use<> {
        let [wx, wy, _] = self.workgroup_size;
        let [nx, ny, _] = self.workgroups;
        let w = self.lanes_per_group();
        let j = at.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
        let packed_group = at.ins(InstKind::Builtin(Builtin::WorkgroupId(0)), &[]);
        // j = k * W + l: the k-th workgroup of the pack, its lane l.
        let k = at.bin_const(IBinOp::DivU, j, w);
        let l = at.bin_const(IBinOp::RemU, j, w);
        let first = at.bin_const(IBinOp::Mul, packed_group, self.per_pack);
        let g = at.bin(IBinOp::Add, first, k);
        let group = at.split3(g, nx, ny);
        let local = at.split3(l, wx, wy);
        let size = self.workgroup_size.map(|n| at.iconst(n));
        let count = self.workgroups.map(|n| at.iconst(n));
        let wave_size = at.iconst(self.wave_size);
        let zero = at.iconst(0);
        move |b| match b {
            Builtin::LocalId(d) => local[usize::from(d.min(2))],
            Builtin::WorkgroupId(d) => group[usize::from(d.min(2))],
            Builtin::WorkgroupSize(d) => size[usize::from(d.min(2))],
            Builtin::NumWorkgroups(d) => count[usize::from(d.min(2))],
            // A workgroup is one wave (`plan`): its lanes are the wave's.
            Builtin::LocalIndex | Builtin::LaneId => l,
            Builtin::WaveId => zero,
            Builtin::WaveSize => wave_size,
        }
    }

    /// The original lane of a lane of the packed dispatch.
    pub fn original_lane(&self, lane: LaneId) -> LaneId {
        let w = self.lanes_per_group();
        let j = lane.local[0];
        let g = u64::from(lane.workgroup[0]) * u64::from(self.per_pack) + u64::from(j / w);
        LaneId {
            workgroup: workgroup_id_in(self.workgroups, g),
            local: local_id_in(self.workgroup_size, j % w),
        }
    }

    /// A fault of the packed run as the original run reports it.
    pub fn original_fault(&self, mut fault: Fault) -> Fault {
        fault.lane = self.original_lane(fault.lane);
        fault
    }
}

/// Whether nothing a workgroup does can be seen by another (besides global
/// memory, whose byte-level independence is the dispatch's contract).
fn workgroups_independent(kernel: &Kernel) -> bool {
    kernel.blocks.values().all(|b| {
        b.insts.iter().all(|&i| match &kernel.insts[i].kind {
            InstKind::Load(a) | InstKind::Store(a) => a.space != AddrSpace::Shared,
            InstKind::Atomic { .. } | InstKind::Barrier => false,
            kind => !kind.is_cross_lane(),
        })
    })
}

/// Appends i32 arithmetic to the entry block.
struct Emit<'k> {
    k: &'k mut Kernel,
    entry: crate::entities::Block,
}

impl Emit<'_> {
    fn ins(&mut self, kind: InstKind, args: &[Value]) -> Value {
        let inst = self.k.append_inst(self.entry, kind, args);
        self.k.insts[inst].results[0]
    }

    fn iconst(&mut self, n: u32) -> Value {
        self.ins(
            InstKind::Const {
                ty: Type::I32,
                bits: u64::from(n),
            },
            &[],
        )
    }

    fn bin(&mut self, op: IBinOp, a: Value, b: Value) -> Value {
        self.ins(InstKind::IBinary(op), &[a, b])
    }

    fn bin_const(&mut self, op: IBinOp, a: Value, n: u32) -> Value {
        let c = self.iconst(n);
        self.bin(op, a, c)
    }

    /// `(i % nx, (i / nx) % ny, i / (nx * ny))` in IR: the order of
    /// [`workgroup_id_in`] and [`local_id_in`].
    fn split3(&mut self, i: Value, nx: u32, ny: u32) -> [Value; 3] {
        let x = self.bin_const(IBinOp::RemU, i, nx);
        let row = self.bin_const(IBinOp::DivU, i, nx);
        let y = self.bin_const(IBinOp::RemU, row, ny);
        let z = self.bin_const(IBinOp::DivU, row, ny);
        [x, y, z]
    }
}
