//! `wavejit rv32` command-line tests (root test target `rv32`): disassembly of a
//! committed kernel, runs through the MMIO device with --init/--dump/--regs/--json,
//! and a faulting kernel's exit status.

use std::path::PathBuf;
use std::process::Command;

fn kernels() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rv32/kernels")
}

fn wavejit(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(args)
        .output()
        .expect("wavejit runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("wavejit-rv32-cli-{}-{name}", std::process::id()))
}

fn write_words(name: &str, words: &[u32]) -> PathBuf {
    let p = tmp(name);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&p, bytes).expect("temp file");
    p
}

/// The qtest `fp_kernel`: out[i] = 2i + 1 at 0x1000.
const FP_KERNEL: [u32; 15] = [
    0xF1402373, 0x01F37313, 0xD00300D3, 0x00200493, 0xD0048153, 0x00100493, 0xD00481D3, 0x10208253,
    0x003202D3, 0xC00293D3, 0x00231413, 0x00001E37, 0x008E0E33, 0x007E2023, 0x00100073,
];

#[test]
fn disasm_elf_and_raw() {
    let elf = kernels().join("saxpy.elf");
    let (ok, out, err) = wavejit(&["rv32", "disasm", elf.to_str().unwrap_or_default()]);
    assert!(ok, "{err}");
    let first: Vec<&str> = out.lines().take(3).collect();
    assert_eq!(first.len(), 3);
    assert!(first[0].contains("auipc\tra,0x0"), "{out}");
    assert!(first[2].contains("ebreak"), "{out}");
    assert!(out.contains("fmadd.s"), "{out}");
    let raw = write_words("fp.bin", &FP_KERNEL);
    let (ok, out, _) = wavejit(&["rv32", "disasm", raw.to_str().unwrap_or_default()]);
    assert!(ok);
    assert_eq!(out.lines().count(), 15);
    assert!(
        out.lines()
            .next()
            .unwrap_or_default()
            .contains("csrr\tt1,mhartid")
    );
}

#[test]
fn run_json_with_dumps_and_regs() {
    let raw = write_words("fp-run.bin", &FP_KERNEL);
    let init = tmp("init.bin");
    std::fs::write(&init, [0xAA, 0xBB, 0xCC, 0xDD]).expect("init");
    let outfile = tmp("dump.bin");
    let init_arg = format!("{}@0x2000", init.display());
    let dump_arg = format!("0x2000:4={}", outfile.display());
    let (ok, out, err) = wavejit(&[
        "rv32",
        "run",
        raw.to_str().unwrap_or_default(),
        "--grid",
        "1,1,1",
        "--block",
        "2,1,1",
        "--init",
        &init_arg,
        "--dump",
        "0x1000:8",
        "--dump",
        &dump_arg,
        "--regs",
        "--json",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with(
            "{\"status\": \"ok\", \"fault\": null, \"dumps\": [{\"addr\": 4096, \"len\": 8, \"hex\": \"0100000003000000\"}, {\"addr\": 8192, \"len\": 4, \"hex\": \"aabbccdd\"}], \"lanes\": [{\"id\": 0, \"x\": [0, 0, 0, 0, 0, 0, 0, 1, "
        ),
        "{out}"
    );
    assert!(
        out.contains("{\"id\": 1, \"x\": [0, 0, 0, 0, 0, 0, 1, 3, 4, 1,"),
        "{out}"
    );
    assert_eq!(
        std::fs::read(&outfile).expect("dump file"),
        [0xAA, 0xBB, 0xCC, 0xDD]
    );
}

#[test]
fn bare_metal_single_lane_and_faults() {
    // addi x5, x0, 7 ; sw x5, 0x100(x0) ; ebreak  (defaults: one lane)
    let ok_prog = write_words("one.bin", &[0x0070_0293, 0x1050_2023, 0x0010_0073]);
    let (ok, out, err) = wavejit(&[
        "rv32",
        "run",
        ok_prog.to_str().unwrap_or_default(),
        "--dump",
        "256:4",
    ]);
    assert!(ok, "{err}");
    assert_eq!(out, "status: ok\ndump 0x100:0x4\n  00000100: 07000000\n");
    // addi x5, x0, 7 ; .word 0 (illegal)
    let bad = write_words("bad.bin", &[0x0070_0293, 0x0000_0000]);
    let (ok, out, _) = wavejit(&["rv32", "run", bad.to_str().unwrap_or_default(), "--json"]);
    assert!(!ok, "a fault exits non-zero");
    assert!(
        out.starts_with("{\"status\": \"fault\", \"fault\": {\"message\": \"illegal instruction"),
        "{out}"
    );
    assert!(
        out.contains("\"pc\": 4, \"word\": 0, \"hartid\": 0, \"error_status\": 4}"),
        "{out}"
    );
    // Runaway loop: the cycle limit.
    let spin = write_words("spin.bin", &[0x0000_006F]);
    let (ok, out, _) = wavejit(&["rv32", "run", spin.to_str().unwrap_or_default()]);
    assert!(!ok);
    assert!(out.contains("cycle limit"), "{out}");
}

#[test]
fn elf_kernel_runs_with_init_files() {
    // saxpy over one block of 4 lanes: x = 1,2,3,4 ; y = 0.5 each, at the
    // addresses its argument block (at 0xF000) names.
    let args = tmp("args.bin");
    let block: Vec<u8> = [0x10000u32, 0x20000, 0x30000]
        .iter()
        .flat_map(|a| a.to_le_bytes())
        .collect();
    std::fs::write(&args, block).expect("args");
    let x = tmp("x.bin");
    let y = tmp("y.bin");
    let xs: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let ys: Vec<u8> = [0.5f32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(&x, xs).expect("x");
    std::fs::write(&y, ys).expect("y");
    let elf = kernels().join("saxpy.elf");
    let (ok, out, err) = wavejit(&[
        "rv32",
        "run",
        elf.to_str().unwrap_or_default(),
        "--block",
        "4",
        "--init",
        &format!("{}@0xf000", args.display()),
        "--init",
        &format!("{}@0x10000", x.display()),
        "--init",
        &format!("{}@0x20000", y.display()),
        "--dump",
        "0x30000:16",
        "--json",
    ]);
    assert!(ok, "{err}");
    // 2.5*x + 0.5 = 3, 5.5, 8, 10.5
    let want: String = [3.0f32, 5.5, 8.0, 10.5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(out.contains(&format!("\"hex\": \"{want}\"")), "{out}");
    assert!(out.ends_with("\"lanes\": []}\n"), "{out}");
}

#[test]
fn jalr_through_a_zero_register_runs_code_at_address_zero() {
    // Image at 0x100: jalr ra, 0(t0) with t0 = 0; VRAM 0 holds an ebreak.
    let jalr = write_words("jalr0.bin", &[0x0002_80e7]);
    let ebreak = write_words("ebreak0.bin", &[0x0010_0073]);
    let init = format!("{}@0", ebreak.display());
    for engine in ["jit", "interp"] {
        let (ok, out, err) = wavejit(&[
            "rv32",
            "run",
            jalr.to_str().unwrap_or_default(),
            "--base",
            "0x100",
            "--init",
            &init,
            "--regs",
            "--engine",
            engine,
        ]);
        assert!(ok, "{engine}: {out}{err}");
        assert!(out.contains("status: ok"), "{engine}: {out}");
    }
}

#[test]
fn cycle_limit_fault_names_its_pc_in_text_and_json() {
    // nop ; nop ; 8: addi x5, x5, 1 ; 12: j 8 — the limit is found at the jump.
    let spin = write_words(
        "spin_pc.bin",
        &[0x0000_0013, 0x0000_0013, 0x0012_8293, 0xffdf_f06f],
    );
    let path = spin.to_str().unwrap_or_default();
    let (ok, out, _) = wavejit(&["rv32", "run", path, "--cycle-limit", "1000"]);
    assert!(!ok);
    assert!(
        out.contains("cycle limit: lane retired more than 1000 instructions at pc 0x0000000c"),
        "{out}"
    );
    let (ok, out, _) = wavejit(&["rv32", "run", path, "--cycle-limit", "1000", "--json"]);
    assert!(!ok);
    assert!(
        out.contains("\"pc\": 12, \"word\": 4292866159, \"hartid\": 0"),
        "{out}"
    );
}

#[test]
fn cycle_limit_0_is_unlimited() {
    // x5 = 20,971,520 ; loop: addi x5, x5, -1 ; bnez x5, loop ; sw x5, 0x100(x0) ;
    // ebreak: more loop iterations than the engines' default step bound (2^24).
    let long = write_words(
        "long.bin",
        &[
            0x0140_02b7,
            0xfff2_8293,
            0xfe02_9ee3,
            0x1050_2023,
            0x0010_0073,
        ],
    );
    let path = long.to_str().unwrap_or_default();
    let (ok, out, err) = wavejit(&["rv32", "run", path, "--cycle-limit", "0"]);
    assert!(ok, "{out}{err}");
    assert_eq!(out, "status: ok\n");
    let (ok, out, _) = wavejit(&["rv32", "run", path]);
    assert!(!ok, "the default limit (100,000) stops it");
    assert!(out.contains("cycle limit"), "{out}");
}

#[test]
fn gcc_switch_jump_table_runs_through_the_cli() {
    // switch.c: out[i] = classify(i % 8, i) through a 7-case jump table; the
    // case bodies are lifted when the lanes jump there. Lane 6: ~6; lane 7:
    // the default case 0xdead.
    let elf = kernels().join("switch.elf");
    for engine in ["jit", "interp"] {
        let (ok, out, err) = wavejit(&[
            "rv32",
            "run",
            elf.to_str().unwrap_or_default(),
            "--block",
            "8",
            "--dump",
            "0x30000:32",
            "--engine",
            engine,
        ]);
        assert!(ok, "{engine}: {out}{err}");
        assert!(
            out.contains("00030000: 03000000 07000000 57000000 f8ffffff")
                && out.contains("00030010: 10000000 02010000 f9ffffff adde0000"),
            "{engine}: {out}"
        );
    }
}

#[test]
fn sparse_image_runs_what_runs() {
    // Issue 13: 300 x {beq zero, zero, +4004; 1,000 nops}; li a0, 42; ebreak.
    let mut words = Vec::new();
    for _ in 0..300 {
        words.push(0x7a00_02e3); // beq zero, zero, +4004
        words.extend(std::iter::repeat_n(0x0000_0013, 1000));
    }
    words.extend([0x02a0_0513, 0x0010_0073]);
    let image = write_words("sparse.bin", &words);
    let (ok, out, err) = wavejit(&["rv32", "run", image.to_str().unwrap_or_default(), "--regs"]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("x10=0000002a"), "{out}");
}
