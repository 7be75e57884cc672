//! Which private-memory bytes can live in SSA values: the "slots" of
//! [`super::promote_private`].
//!
//! A slot is a run of at most 8 private bytes that only non-faulting scalar
//! loads and stores at constant addresses touch. Accesses whose byte ranges
//! overlap (an AGX 16-bit half inside a 32-bit register, say) share one slot,
//! held as an integer wide enough for the whole run; each access then reads or
//! writes its bytes at a known position inside it.

use std::collections::HashMap;

use crate::entities::{Inst, Value};
use crate::inst::{AddrSpace, InstKind, MemAccess};
use crate::kernel::{Kernel, ValueDef};
use crate::types::Type;

/// A promoted run of private bytes `[start, start + ty.bytes())`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub start: u32,
    /// The type the run is held in: the accesses' own type when they all agree
    /// on shape, else the narrowest integer covering the run.
    pub ty: Type,
}

/// One promoted load or store.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct SlotAccess {
    pub slot: usize,
    /// Byte offset of the access inside its slot.
    pub rel: u32,
    pub mem: MemAccess,
    pub store: bool,
}

impl SlotAccess {
    /// True when the access moves the slot's whole value unchanged.
    pub fn is_whole(&self, slot: &Slot) -> bool {
        self.mem.ty == slot.ty && self.covers(slot)
    }

    /// True when the access touches every byte of its slot (a store then
    /// replaces the slot's value instead of merging into it).
    pub fn covers(&self, slot: &Slot) -> bool {
        self.rel == 0 && u32::from(self.mem.bits) == slot.ty.bits()
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Slots {
    pub slots: Vec<Slot>,
    pub accesses: HashMap<Inst, SlotAccess>,
}

/// A private access found in the kernel.
struct Found {
    inst: Inst,
    start: u64,
    end: u64,
    mem: MemAccess,
    store: bool,
    /// It can never fault and is a single element: it may be promoted.
    promotable: bool,
}

/// The constant value of `v`, if an instruction `Const` defines it.
pub(crate) fn const_bits(kernel: &Kernel, v: Value) -> Option<u64> {
    let ValueDef::Result { inst, .. } = kernel.values.get(v)?.def else {
        return None;
    };
    match kernel.insts.get(inst)?.kind {
        InstKind::Const { bits, .. } => Some(bits),
        _ => None,
    }
}

/// Finds the slots of `kernel`. Returns no slots at all when any private access
/// has a non-constant address: it could reach any byte, and tracking which bytes
/// it may alias is not worth it (the ir3 lifter's `a0`-relative register
/// accesses are the case; AGX and RV32 lifters only use constant addresses).
pub(crate) fn find_slots(kernel: &Kernel) -> Slots {
    let mut found = Vec::new();
    for block in kernel.blocks.values() {
        for &inst in &block.insts {
            let Some(data) = kernel.insts.get(inst) else {
                continue;
            };
            let (mem, store) = match data.kind {
                InstKind::Load(m) if m.space == AddrSpace::Private => (m, false),
                InstKind::Store(m) if m.space == AddrSpace::Private => (m, true),
                _ => continue,
            };
            let Some(addr) = data.args.first().and_then(|&a| const_bits(kernel, a)) else {
                return Slots::default();
            };
            // Private addresses are 32-bit offsets (the interpreter masks them).
            let start = addr & 0xffff_ffff;
            let end = start + u64::from(mem.total_bytes());
            let aligned = mem.align <= 1 || start.is_multiple_of(u64::from(mem.align));
            let promotable = mem.count == 1
                && mem.total_bytes() > 0
                && aligned
                && end <= u64::from(kernel.private_size);
            found.push(Found {
                inst,
                start,
                end,
                mem,
                store,
                promotable,
            });
        }
    }
    group(found)
}

/// Groups overlapping accesses into slots; a group with an access that cannot
/// be promoted, or wider than 8 bytes, stays in memory.
fn group(mut found: Vec<Found>) -> Slots {
    found.sort_by_key(|f| (f.start, f.end));
    let mut out = Slots::default();
    let mut i = 0;
    while i < found.len() {
        let start = found[i].start;
        let mut end = found[i].end;
        let mut j = i + 1;
        while j < found.len() && found[j].start < end {
            end = end.max(found[j].end);
            j += 1;
        }
        let members = &found[i..j];
        i = j;
        if end - start > 8 || members.iter().any(|f| !f.promotable) {
            continue;
        }
        let Ok(start32) = u32::try_from(start) else {
            continue;
        };
        let first = members[0].mem;
        let uniform = members
            .iter()
            .all(|f| f.start == start && f.mem.ty == first.ty && f.mem.bits == first.bits)
            && u32::from(first.bits) == first.ty.bits();
        let ty = if uniform {
            first.ty
        } else {
            int_type_for_bytes(end - start)
        };
        let slot = out.slots.len();
        out.slots.push(Slot { start: start32, ty });
        for f in members {
            out.accesses.insert(
                f.inst,
                SlotAccess {
                    slot,
                    rel: (f.start - start) as u32,
                    mem: f.mem,
                    store: f.store,
                },
            );
        }
    }
    out
}

/// The narrowest integer type of at least `bytes` bytes (1..=8).
fn int_type_for_bytes(bytes: u64) -> Type {
    match bytes {
        0 | 1 => Type::I8,
        2 => Type::I16,
        3 | 4 => Type::I32,
        _ => Type::I64,
    }
}

/// The integer type of a memory element of `bits` bits (8, 16, 32 or 64).
pub(crate) fn int_type_for_bits(bits: u8) -> Type {
    int_type_for_bytes(u64::from(bits) / 8)
}
