//! Shared helpers of the IR transform tests (private promotion, constant
//! folding): a small global memory, kernels from text with a prologue, and a
//! differential check that runs a kernel before and after a pass on the golden
//! interpreter.

#![allow(dead_code)]

use std::cell::UnsafeCell;
use std::ptr::NonNull;

use wavejit_ir::interp::Interpreter;
use wavejit_ir::transform::{PromoteStats, promote_private};
use wavejit_ir::verify::verify;
use wavejit_ir::{
    Access, AccessCause, AddrSpace, Dispatch, Engine, Fault, GlobalMemory, InstKind, Kernel,
};

/// Parses `text` with its `PROLOGUE` placeholder replaced by `prologue`.
pub fn kernel_with(prologue: &str, text: &str) -> Kernel {
    let text = text.replace("PROLOGUE", prologue);
    wavejit_ir::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Two workgroups of 8 lanes in waves of 4: divergence inside and across waves.
pub fn two_groups_of_8() -> Dispatch {
    let mut d = Dispatch::new([2, 1, 1], [8, 1, 1]);
    d.wave_size = 4;
    d
}

/// Guest address of the test buffer.
pub const BASE: u64 = 0x10_0000;
/// Bytes of the test buffer.
pub const SIZE: usize = 1 << 16;

/// One writable buffer at [`BASE`]; lanes write disjoint bytes.
pub struct Buffer {
    words: UnsafeCell<Vec<u64>>,
}

// SAFETY: the interpreter runs lanes one at a time; tests never race.
unsafe impl Sync for Buffer {}

impl Buffer {
    pub fn new() -> Buffer {
        Buffer {
            words: UnsafeCell::new(vec![0; SIZE / 8]),
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        // SAFETY: no dispatch is running.
        let words = unsafe { &*self.words.get() };
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Little-endian u32 at byte `offset` of the buffer.
    pub fn u32_at(bytes: &[u8], offset: usize) -> u32 {
        u32::from_le_bytes([
            bytes[offset],
            bytes[offset + 1],
            bytes[offset + 2],
            bytes[offset + 3],
        ])
    }
}

// SAFETY: translate returns pointers into the buffer, which outlives the dispatch.
unsafe impl GlobalMemory for Buffer {
    fn translate(&self, addr: u64, len: u64, _: Access) -> Result<NonNull<u8>, AccessCause> {
        let start = addr.checked_sub(BASE).ok_or(AccessCause::Unmapped)?;
        if start.checked_add(len).is_none_or(|end| end > SIZE as u64) {
            return Err(AccessCause::Unmapped);
        }
        // SAFETY: in bounds of the buffer (checked above).
        let p = unsafe {
            (*self.words.get())
                .as_mut_ptr()
                .cast::<u8>()
                .add(start as usize)
        };
        NonNull::new(p).ok_or(AccessCause::Unmapped)
    }
}

/// Runs `kernel` on the interpreter with a fresh buffer.
pub fn run(kernel: &Kernel, dispatch: &Dispatch) -> (Result<(), Fault>, Vec<u8>) {
    let buffer = Buffer::new();
    let result = Interpreter::new().run(kernel, dispatch, &buffer);
    (result, buffer.bytes())
}

/// Private loads and stores placed in `kernel`.
pub fn private_accesses(kernel: &Kernel) -> usize {
    kernel
        .blocks
        .values()
        .flat_map(|b| &b.insts)
        .filter(|&&i| {
            matches!(
                kernel.insts[i].kind,
                InstKind::Load(m) | InstKind::Store(m) if m.space == AddrSpace::Private
            )
        })
        .count()
}

/// A fault with its instruction handle replaced by that instruction's kind:
/// the pass renumbers instructions, so handles differ while the faulting
/// instruction (kind, block, guest pc) must not.
pub fn fault_place(kernel: &Kernel, mut f: Fault) -> (Fault, Option<InstKind>) {
    let kind = f.inst.take().map(|i| kernel.insts[i].kind.clone());
    (f, kind)
}

/// Promotes a copy of `kernel`, checks that it verifies and that it writes the
/// same bytes and reports the same fault as the original; returns the copy.
pub fn promote_and_compare(kernel: &Kernel, dispatch: &Dispatch) -> (Kernel, PromoteStats) {
    verify(kernel).unwrap_or_else(|e| panic!("input does not verify: {e}"));
    let mut promoted = kernel.clone();
    let stats = promote_private(&mut promoted).expect("verified input");
    if let Err(e) = verify(&promoted) {
        panic!(
            "promoted kernel does not verify: {e}\n{}",
            wavejit_ir::text::print(&promoted)
        );
    }
    assert_eq!(
        private_accesses(kernel) - private_accesses(&promoted),
        stats.loads + stats.stores,
        "stats count the removed accesses"
    );
    assert_same_run(kernel, &promoted, dispatch);
    (promoted, stats)
}

/// Checks that `transformed` verifies and, run on the interpreter, writes the
/// same bytes and reports the same fault (by place: passes renumber
/// instructions) as `original`.
pub fn assert_same_run(original: &Kernel, transformed: &Kernel, dispatch: &Dispatch) {
    if let Err(e) = verify(transformed) {
        panic!(
            "transformed kernel does not verify: {e}\n{}",
            wavejit_ir::text::print(transformed)
        );
    }
    let before = run(original, dispatch);
    let after = run(transformed, dispatch);
    assert_eq!(
        before.0.clone().map_err(|f| fault_place(original, f)),
        after.0.clone().map_err(|f| fault_place(transformed, f)),
        "fault differs\n{}",
        wavejit_ir::text::print(transformed)
    );
    assert!(
        before.1 == after.1,
        "memory differs\n{}",
        wavejit_ir::text::print(transformed)
    );
}
