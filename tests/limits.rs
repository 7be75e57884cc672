//! Resource limits every engine enforces in one place (`Dispatch::check`):
//! workgroups whose lane count would wrap, and shared or private memory sized
//! by a kernel's declaration. Each is a clear refusal, the same on every engine,
//! never a wrapped shape or an allocation the host cannot hold.

mod common;

use std::process::Command;

use common::*;
use wavejit_ir::dispatch::{
    MAX_PRIVATE_BYTES, MAX_SHARED_BYTES, MAX_WORKGROUP_LANES, MAX_WORKGROUP_PRIVATE_BYTES,
};
use wavejit_ir::{AddrSpace, Dispatch, DispatchError, FaultKind, Kernel};
use wavejit_runtime::AddressSpace;

/// A kernel that stores 1 to shared and private memory of the given sizes.
fn touching(shared: u32, private: u32) -> Kernel {
    let mut kb = Kb::new("touch");
    let e = kb.entry();
    {
        let mut b = kb.at(e);
        let zero = c32(&mut b, 0);
        let one = c32(&mut b, 1);
        store(&mut b, AddrSpace::Shared, zero, one);
        store(&mut b, AddrSpace::Private, zero, one);
        b.exit();
    }
    // Not `finish`: that verifies, and the oversized declarations must reach
    // the engines.
    let mut k = kb.kernel;
    k.shared_size = shared;
    k.private_size = private;
    k
}

fn refusal(kernel: &Kernel, dispatch: &Dispatch) -> Vec<String> {
    let mem = AddressSpace::new();
    engines()
        .iter()
        .map(|e| {
            let f = e
                .run(kernel, dispatch, &mem)
                .expect_err("the dispatch is refused");
            assert!(
                matches!(f.kind, FaultKind::Dispatch(_)),
                "{}: {f}",
                e.name()
            );
            f.to_string()
        })
        .collect()
}

#[test]
fn a_workgroup_whose_lane_count_wraps_is_refused_alike() {
    let k = touching(16, 16);
    let d = Dispatch::new([1, 1, 1], [65536, 65536, 1]);
    assert_eq!(
        d.lanes_per_workgroup(),
        u32::MAX,
        "saturates, never wraps to 0"
    );
    assert_eq!(
        d.check_shape(&k),
        Err(DispatchError::WorkgroupTooLarge {
            size: [65536, 65536, 1],
            lanes: 1 << 32,
        })
    );
    let want = format!(
        "kernel `touch`: dispatch refused: workgroup of 65536x65536x1 = 4294967296 lanes \
         exceeds the limit of {MAX_WORKGROUP_LANES} lanes"
    );
    for got in refusal(&k, &d) {
        assert_eq!(got, want);
    }
    let d = Dispatch::new([1, 1, 1], [u32::MAX, u32::MAX, u32::MAX]);
    assert!(matches!(
        d.check_shape(&k),
        Err(DispatchError::WorkgroupTooLarge { .. })
    ));
    let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    d.wave_size = 0;
    for got in refusal(&k, &d) {
        assert_eq!(got, "kernel `touch`: dispatch refused: wave size 0");
    }
}

#[test]
fn declared_shared_and_private_memory_have_limits() {
    let d = Dispatch::new([1, 1, 1], [1, 1, 1]);
    let shared = touching(u32::MAX, 16);
    let want = format!(
        "kernel `touch`: dispatch refused: kernel declares 4294967295 bytes of shared memory, \
         over the limit of {MAX_SHARED_BYTES} bytes"
    );
    for got in refusal(&shared, &d) {
        assert_eq!(got, want);
    }
    let e = wavejit_ir::verify::verify(&shared).expect_err("the verifier refuses it too");
    assert_eq!(
        e.to_string(),
        format!(
            "kernel `touch`: kernel declares 4294967295 bytes of shared memory, over the \
             limit of {MAX_SHARED_BYTES} bytes"
        )
    );
    let private = touching(16, 1 << 30);
    let want = format!(
        "kernel `touch`: dispatch refused: kernel declares 1073741824 bytes of private \
         memory per lane, over the limit of {MAX_PRIVATE_BYTES} bytes"
    );
    for got in refusal(&private, &d) {
        assert_eq!(got, want);
    }
    assert!(wavejit_ir::verify::verify(&private).is_err());
    // Within the per-lane limit, too much for one workgroup's lanes together.
    let wide = touching(16, MAX_PRIVATE_BYTES);
    let d = Dispatch::new([1, 1, 1], [1024, 1, 1]);
    let want = format!(
        "kernel `touch`: dispatch refused: 1024 lanes x 1048576 private bytes = 1073741824 \
         bytes per workgroup exceeds the limit of {MAX_WORKGROUP_PRIVATE_BYTES} bytes"
    );
    for got in refusal(&wide, &d) {
        assert_eq!(got, want);
    }
    // At the limits the kernel runs.
    let ok = touching(MAX_SHARED_BYTES, MAX_PRIVATE_BYTES);
    let mem = AddressSpace::new();
    for e in engines() {
        assert_eq!(
            e.run(&ok, &Dispatch::new([2, 1, 1], [2, 1, 1]), &mem),
            Ok(())
        );
    }
    // A dispatch with no lanes runs nothing and passes.
    let empty = Dispatch::new([0, 1, 1], [65536, 65536, 1]);
    assert_eq!(empty.check(&shared), Ok(()));
}

fn wavejit(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(args)
        .output()
        .expect("wavejit runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("wavejit-limits-{}-{name}", std::process::id()));
    std::fs::write(&p, text).expect("temp file");
    p.display().to_string()
}

const NOP: &str = "kernel @nop {
block0:
  exit
}
";

#[test]
fn cli_huge_block_gives_the_same_refusal_on_both_engines() {
    let k = temp("nop.wj", NOP);
    let mut outputs = Vec::new();
    for engine in ["jit", "interp"] {
        let (code, _, err) = wavejit(&[
            "ir",
            "run",
            &k,
            "--block",
            "65536,65536",
            "--engine",
            engine,
        ]);
        assert_ne!(code, Some(0), "{engine}: {err}");
        let line = err
            .lines()
            .find(|l| l.contains("dispatch refused"))
            .unwrap_or_else(|| panic!("{engine}: {err}"))
            .to_string();
        outputs.push((code, line));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert!(
        outputs[0].1.ends_with(
            "kernel `nop`: dispatch refused: workgroup of 65536x65536x1 = 4294967296 lanes \
             exceeds the limit of 65536 lanes"
        ),
        "{}",
        outputs[0].1
    );
}

#[test]
fn cli_huge_declared_memory_is_a_clear_error() {
    for (name, decl, what) in [
        (
            "shared.wj",
            "shared 4294967295",
            "4294967295 bytes of shared memory",
        ),
        (
            "private.wj",
            "private 1073741824",
            "1073741824 bytes of private memory per lane",
        ),
    ] {
        let text = NOP.replace("kernel @nop {", &format!("kernel @nop {decl} {{"));
        let k = temp(name, &text);
        let (code, _, err) = wavejit(&["ir", "run", &k]);
        assert_eq!(code, Some(1), "{name}: {err}");
        assert!(
            err.contains(what) && err.contains("over the limit of"),
            "{name}: {err}"
        );
        let (code, out, _) = wavejit(&["ir", "check", &k]);
        assert_eq!(code, Some(1), "{name}: {out}");
        assert!(out.contains(what), "{name}: {out}");
    }
}

#[test]
fn cli_agx_run_with_huge_threadgroup_memory_is_a_clear_error() {
    let s = temp("stop.s", "stop\n");
    let (code, _, err) = wavejit(&["agx", "run", &s, "--tg-mem", "4294967295"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("declares 4294967295 bytes of shared memory, over the limit of 1048576 bytes"),
        "{err}"
    );
}

/// An ELF32 RISC-V executable of one PT_LOAD segment at 0: `words` nops then an
/// ebreak as its file bytes, `memsz` bytes in memory.
fn rv32_elf(words: usize, memsz: u32) -> Vec<u8> {
    let mut code: Vec<u8> = std::iter::repeat_n(0x0000_0013u32, words)
        .chain([0x0010_0073])
        .flat_map(u32::to_le_bytes)
        .collect();
    let filesz = code.len() as u32;
    let mut out = b"\x7fELF\x01\x01\x01\0".to_vec();
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    out.extend_from_slice(&243u16.to_le_bytes()); // EM_RISCV
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // e_entry
    out.extend_from_slice(&52u32.to_le_bytes()); // e_phoff
    out.extend_from_slice(&0u32.to_le_bytes()); // e_shoff
    out.extend_from_slice(&2u32.to_le_bytes()); // e_flags
    for h in [52u16, 32, 1, 40, 0, 0] {
        out.extend_from_slice(&h.to_le_bytes());
    }
    // PT_LOAD: offset, vaddr, paddr, filesz, memsz, flags (rwx), align.
    for v in [1u32, 84, 0, 0, filesz, memsz, 7, 4] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.append(&mut code);
    out
}

/// `wavejit rv32 run FILE` with the address space limited to 1 GiB, so that an
/// allocation sized by the file's p_memsz aborts instead of passing unnoticed.
fn rv32_run_limited(elf: &[u8], name: &str) -> (Option<i32>, String) {
    let p = std::env::temp_dir().join(format!("wavejit-limits-{}-{name}", std::process::id()));
    std::fs::write(&p, elf).expect("temp file");
    let out = Command::new("sh")
        .args(["-c", "ulimit -v 1048576 && exec \"$0\" rv32 run \"$1\""])
        .arg(env!("CARGO_BIN_EXE_wavejit"))
        .arg(&p)
        .output()
        .expect("sh runs");
    let _ = std::fs::remove_file(&p);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_rv32_segment_larger_than_vram_is_refused_before_it_is_allocated() {
    // The control: the same 4.9 KB program with an honest p_memsz runs in 1 GiB.
    let (code, err) = rv32_run_limited(&rv32_elf(1200, 4804), "small.elf");
    assert_eq!(code, Some(0), "{err}");
    let elf = rv32_elf(1200, 0xf000_0000);
    assert_eq!(elf.len(), 4888);
    let (code, err) = rv32_run_limited(&elf, "huge.elf");
    assert!(
        err.contains("segment 0x0..0xf0000000 does not fit the 0x4000000-byte VRAM"),
        "{err}"
    );
    assert_eq!(code, Some(1), "{err}");
}

/// Issue 14 item 11: the CLI names the guest pc and instruction of an AGX
/// error, and a trap says what it means, never IR blocks or `trap 0x...` alone.
#[test]
fn cli_agx_errors_name_the_guest_instruction() {
    let s = temp("lstore.s", "ldimm r1, 1\nlstore r1, r0l, 0, i32, x\nstop\n");
    let (code, _, err) = wavejit(&["agx", "run", &s]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(
            "agx lift: `lstore r1, r0l, 0, i32, x` at 0x6 accesses threadgroup memory, but the \
             launch declares none"
        ),
        "{err}"
    );
    assert!(!err.contains("block"), "{err}");
    let (code, _, err) = wavejit(&["agx", "run", &s, "--tg-mem", "64"]);
    assert_eq!(code, Some(0), "{err}");

    // A grid whose thread count along x does not fit 32 bits is refused
    // naming the limit (it ran 2^32 - 1 threads instead).
    let stop = temp("stop.s", "stop\n");
    let (code, _, err) = wavejit(&["agx", "run", &stop, "--grid", "4294967295", "--block", "64"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "--grid 4294967295 x --block 64 = 274877906880 threads along x exceed the AGX limit \
             of 4294967295 threads per dimension"
        ),
        "{err}"
    );

    let s = temp("ret.s", "ldimm r1, 0x40\nret r1\n");
    for engine in ["jit", "interp"] {
        let (code, _, err) = wavejit(&["agx", "run", &s, "--engine", engine]);
        assert_eq!(code, Some(3), "{err}");
        assert!(
            err.contains(
                "faulted: `ret r1` at pc 0x6: `ret`/`call` to an address that is not the start \
                 of an instruction the program can branch to (trap 0xa60003), lane"
            ),
            "{engine}: {err}"
        );
    }
}

/// Issue 14 item 11: `--wave` out of range is refused naming the wave size,
/// alike on both engines (it printed `trap 0xffffffff`); a wave wider than
/// the workgroup is one wave of the workgroup's lanes on both.
#[test]
fn cli_wave_sizes_are_named_or_run_alike() {
    let k = temp("nop-wave.wj", NOP);
    for engine in ["jit", "interp"] {
        let (code, _, err) = wavejit(&["ir", "run", &k, "--wave", "0", "--engine", engine]);
        assert_eq!(code, Some(3), "{err}");
        assert!(
            err.contains("kernel `nop`: dispatch refused: wave size 0"),
            "{engine}: {err}"
        );
    }
    // Each lane stores the ballot of `local_index < 70` (bits of lanes 0..63
    // only) and the wave's lane count as the sum of ones.
    let ballot = temp(
        "ballot.wj",
        "kernel @b {
block0:
  v0 = local_index
  v1 = const.i1 1
  v2 = const.i32 70
  v3 = icmp.ult.i32 v0, v2
  v4 = ballot v1, v3
  v5 = const.i32 1
  v6 = reduce.add.i32 v1, v5
  v7 = const.i32 0
  v8 = load.uniform.i64 v7
  v9 = zext.i32.i64 v0
  v10 = const.i64 16
  v11 = imul.i64 v9, v10
  v12 = iadd.i64 v8, v11
  store.global.i64 v12, v4
  v13 = const.i64 8
  v14 = iadd.i64 v12, v13
  store.global.i32 v14, v6
  exit
}
",
    );
    let mut outs = Vec::new();
    for engine in ["jit", "interp"] {
        let (code, out, err) = wavejit(&[
            "ir",
            "run",
            &ballot,
            "--block",
            "100",
            "--wave",
            "100000",
            "--buf",
            "u32:0*400",
            "--engine",
            engine,
        ]);
        assert_eq!(code, Some(0), "{engine}: {err}");
        outs.push(out);
    }
    assert_eq!(outs[0], outs[1]);
    // Lane 0's record: ballot of lanes 0..63 (all below 70), 100 lanes in the wave.
    assert!(
        outs[0].starts_with("buf0 = [4294967295, 4294967295, 100, 0, "),
        "{}",
        outs[0]
    );
}
