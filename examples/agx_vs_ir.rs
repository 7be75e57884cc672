//! The AGX benchmark kernels against the IR ones on the same 1-thread JIT
//! (issue 17's targets: lifted AGX as fast as hand-written IR), thread CPU
//! time, median of alternated runs; `--dump` prints the lifted AGX IR.
//!
//! `cargo run --release --example agx_vs_ir -- [--reps N] [--dump]
//! [--try alu|saxpy FILE] [--only VARIANT RUNS]`

use std::time::Duration;

use wavejit::bench::agx::AgxWorkload;
use wavejit::bench::isa_report::{ALU_ELEMENTS, SAXPY_ELEMENTS};
use wavejit::bench::side::{Computation, SideBySide};
use wavejit::bench::timing::{WARM, alternated, load_average};
use wavejit::bench::{Workload, jit_with_threads};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The `k` arguments after `flag`, if it is given with that many.
fn after<'a>(args: &'a [String], flag: &str, k: usize) -> Option<&'a [String]> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1..i + 1 + k)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let reps = match after(&args, "--reps", 1) {
        Some([n]) => n.parse()?,
        _ => 7,
    };
    let mut agx_alu = AgxWorkload::new(Computation::Alu, ALU_ELEMENTS)?;
    let mut agx_saxpy = AgxWorkload::new(Computation::Saxpy, SAXPY_ELEMENTS)?;
    if args.iter().any(|a| a == "--dump") {
        for w in [&agx_alu, &agx_saxpy] {
            println!("{}", wavejit::ir::text::print(w.kernel()));
        }
        return Ok(());
    }
    for w in [&mut agx_alu, &mut agx_saxpy] {
        if !w.agrees()? {
            return Err(format!("{} disagrees with its native loop", w.name()).into());
        }
    }
    let ir_alu = Workload::alu(ALU_ELEMENTS);
    let ir_saxpy = Workload::saxpy(SAXPY_ELEMENTS);
    // `--try alu|saxpy FILE`: an edited kernel (same uniforms) timed as well.
    let mut tried = None;
    if let Some([which, file]) = after(&args, "--try", 2) {
        let mut w = if which == "alu" {
            Workload::alu(ALU_ELEMENTS)
        } else {
            Workload::saxpy(SAXPY_ELEMENTS)
        };
        w.kernel = wavejit::ir::text::parse(&std::fs::read_to_string(file)?)?;
        tried = Some(w);
    }
    let jit = jit_with_threads(1);
    let mut run = |i: usize| -> Result<(), String> {
        match i {
            0 => ir_alu.run(&jit),
            1 => agx_alu.run().map_err(|e| e.to_string()),
            2 => ir_saxpy.run(&jit),
            3 => agx_saxpy.run().map_err(|e| e.to_string()),
            4 => {
                agx_saxpy.run_native();
                Ok(())
            }
            5 => {
                agx_alu.run_native();
                Ok(())
            }
            _ => match &tried {
                Some(w) => w.run(&jit),
                None => Ok(()),
            },
        }
    };
    // `--only I N`: variant I run N times, untimed (for instruction counts
    // under callgrind, which a loaded machine does not disturb).
    if let Some([v, n]) = after(&args, "--only", 2) {
        let v: usize = v.parse()?;
        for _ in 0..n.parse::<usize>()? {
            run(v)?;
        }
        return Ok(());
    }
    println!("load average (1 min) at start: {:?}", load_average());
    let labels = [
        "ir alu",
        "agx alu",
        "ir saxpy",
        "agx saxpy",
        "native saxpy",
        "native alu",
        "tried",
    ];
    let n = labels.len() - usize::from(tried.is_none());
    let t = alternated(reps, n, WARM, &mut run)?;
    for (l, s) in labels.iter().zip(&t) {
        println!("{l:<14} {:>9.3} ms thread CPU", ms(s.thread_cpu));
    }
    let r = |a: usize, b: usize| t[a].thread_cpu.as_secs_f64() / t[b].thread_cpu.as_secs_f64();
    println!("agx alu / ir alu        {:.2}x", r(1, 0));
    println!("agx saxpy / ir saxpy    {:.2}x", r(3, 2));
    println!(
        "native saxpy / agx saxpy {:.3}x (agx_saxpy_vs_native)",
        r(4, 3)
    );
    println!(
        "native alu / agx alu    {:.3}x (agx_alu_vs_native)",
        r(5, 1)
    );
    println!("native alu / ir alu     {:.3}x", r(5, 0));
    println!("native saxpy / ir saxpy {:.3}x", r(4, 2));
    println!("load average (1 min) at end: {:?}", load_average());
    Ok(())
}
