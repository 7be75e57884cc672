//! Partial workgroups: AQL grids are in work-items and need not be a multiple of
//! the workgroup size, while an IR dispatch runs whole workgroups. The dispatch
//! layer runs a wrapped kernel whose new entry block exits every lane whose global
//! id is outside the grid (exited lanes do not block barriers, so the rest of the
//! workgroup runs as if those lanes did not exist).
//!
//! The grid size is read from the uniform space (3 × u32 at `grid_offset`), so one
//! wrapped kernel serves every grid and the JIT compiles it once.

use super::status::{AqlError, Status};
use wavejit_ir::{
    AddrSpace, Block, BlockCall, Builtin, CastOp, IBinOp, InstKind, IntCC, Kernel, MemAccess,
    Terminator, Type, ValueDef,
};

fn shifted(b: Block) -> Block {
    Block::from_u32(b.as_u32() + 1)
}

fn shift_call(c: &mut BlockCall) {
    c.block = shifted(c.block);
}

/// `kernel` with a guard block in front: block 0 checks the lane's global id
/// against the grid size and either continues at the old entry (now block 1) or
/// jumps to a new exit block at the end. Relative block order is kept, so the
/// "lowest pc first" schedule of the original blocks is unchanged.
pub fn guard_grid(kernel: &Kernel, grid_offset: u32) -> Result<Kernel, AqlError> {
    let mut k = kernel.clone();
    let old: Vec<_> = k.blocks.values().cloned().collect();
    k.blocks.clear();
    let guard = k.blocks.push(Default::default());
    for mut data in old {
        if let Some(term) = data.term.as_mut() {
            match term {
                Terminator::Jump(c) => shift_call(c),
                Terminator::Branch {
                    then, otherwise, ..
                } => {
                    shift_call(then);
                    shift_call(otherwise);
                }
                Terminator::Table {
                    targets, default, ..
                } => {
                    targets.iter_mut().for_each(shift_call);
                    shift_call(default);
                }
                Terminator::Exit => {}
            }
        }
        k.blocks.push(data);
    }
    for v in k.values.values_mut() {
        if let ValueDef::Param { block, .. } = &mut v.def {
            *block = shifted(*block);
        }
    }
    let exit = k.add_block();
    k.set_terminator(exit, Terminator::Exit);

    let mut inside = None;
    for dim in 0..3u8 {
        let ok = lane_inside(&mut k, guard, dim, grid_offset + 4 * u32::from(dim))?;
        inside = Some(match inside {
            None => ok,
            Some(acc) => ins(&mut k, guard, InstKind::IBinary(IBinOp::And), &[acc, ok])?,
        });
    }
    let body = Block::from_u32(1);
    match inside {
        Some(cond) => k.set_terminator(
            guard,
            Terminator::Branch {
                cond,
                then: BlockCall::new(body, &[]),
                otherwise: BlockCall::new(exit, &[]),
            },
        ),
        None => k.set_terminator(guard, Terminator::Jump(BlockCall::new(body, &[]))),
    }
    Ok(k)
}

fn ins(
    k: &mut Kernel,
    block: Block,
    kind: InstKind,
    args: &[wavejit_ir::Value],
) -> Result<wavejit_ir::Value, AqlError> {
    let inst = k.append_inst(block, kind, args);
    k.insts[inst].results.first().copied().ok_or_else(|| {
        AqlError::new(
            Status::INVALID_CODE_OBJECT,
            format!("grid guard of `{}`: {inst} has no result", k.name),
        )
    })
}

/// `(workgroup_id * workgroup_size + local_id) < grid[dim]`, in 64 bits so that
/// grids near 2^32 work-items do not wrap.
fn lane_inside(
    k: &mut Kernel,
    b: Block,
    dim: u8,
    offset: u32,
) -> Result<wavejit_ir::Value, AqlError> {
    let wide = |k: &mut Kernel, v| {
        ins(
            k,
            b,
            InstKind::Cast {
                op: CastOp::Zext,
                to: Type::I64,
            },
            &[v],
        )
    };
    let wg = ins(k, b, InstKind::Builtin(Builtin::WorkgroupId(dim)), &[])?;
    let size = ins(k, b, InstKind::Builtin(Builtin::WorkgroupSize(dim)), &[])?;
    let local = ins(k, b, InstKind::Builtin(Builtin::LocalId(dim)), &[])?;
    let off = ins(
        k,
        b,
        InstKind::Const {
            ty: Type::I32,
            bits: u64::from(offset),
        },
        &[],
    )?;
    let grid = ins(
        k,
        b,
        InstKind::Load(MemAccess {
            space: AddrSpace::Uniform,
            ty: Type::I32,
            bits: 32,
            count: 1,
            signed: false,
            align: 4,
        }),
        &[off],
    )?;
    let (wg, size, local, grid) = (
        wide(k, wg)?,
        wide(k, size)?,
        wide(k, local)?,
        wide(k, grid)?,
    );
    let base = ins(k, b, InstKind::IBinary(IBinOp::Mul), &[wg, size])?;
    let id = ins(k, b, InstKind::IBinary(IBinOp::Add), &[base, local])?;
    ins(k, b, InstKind::Icmp(IntCC::Ult), &[id, grid])
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "kernel @k shared 16 {
block0:
  v0 = local_index
  jump block1(v0)
block1(v1: i32):
  v2 = const.i32 1
  v3 = isub.i32 v1, v2
  v4 = const.i32 0
  v5 = icmp.eq.i32 v3, v4
  br v5, block2, block1(v3)
block2:
  exit
}";

    #[test]
    fn guarded_kernel_verifies_and_keeps_block_order() {
        let k = wavejit_ir::text::parse(LOOP).map_err(|e| e.to_string());
        let Ok(k) = k else {
            panic!("parse: {k:?}");
        };
        let g = guard_grid(&k, 32).map_err(|e| e.to_string());
        let Ok(g) = g else {
            panic!("guard: {g:?}");
        };
        assert_eq!(
            wavejit_ir::verify::verify(&g).map_err(|e| e.to_string()),
            Ok(())
        );
        assert_eq!(g.blocks.len(), k.blocks.len() + 2);
        assert_eq!(g.shared_size, 16);
        // The loop back edge now targets block2 (old block1), with its parameter.
        let text = wavejit_ir::text::print(&g);
        assert!(text.contains("block2(v"), "{text}");
    }
}
