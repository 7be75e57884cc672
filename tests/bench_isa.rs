//! The ISA benchmark workloads of `wavejit bench` / criterion at small sizes: the
//! RV32 kernels through the MMIO device and the AGX kernels must give the native
//! loop's bits, bad sizes are errors, and the AQL round trip completes.

use wavejit::bench::agx::AgxWorkload;
use wavejit::bench::isa_report::aql_round_trip;
use wavejit::bench::kernels::{alu_native, saxpy_native};
use wavejit::bench::rv32::{MAX_ELEMENTS, Rv32Workload};
use wavejit::bench::side::{ALU_ROUNDS, BenchError, Computation, GROUP, SAXPY_A, SideBySide};
use wavejit::runtime::aql::Processing;

/// Five blocks, so the index computation across blocks is exercised.
const N: usize = 5 * GROUP as usize;

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// What the native loops give for the benchmark inputs, computed here on its own.
fn expected(c: Computation, runs: usize) -> Vec<u32> {
    let x: Vec<f32> = (0..N).map(|i| (i % 977) as f32 * 0.125 - 30.0).collect();
    match c {
        Computation::Alu => {
            let mut y = vec![0u32; N];
            alu_native(&x, &mut y, ALU_ROUNDS);
            y
        }
        Computation::Saxpy => {
            let mut y = vec![0f32; N];
            for _ in 0..runs {
                saxpy_native(SAXPY_A, &x, &mut y);
            }
            y.iter().map(|v| v.to_bits()).collect()
        }
    }
}

#[test]
fn rv32_alu_through_the_device_is_bit_exact() {
    let mut w = Rv32Workload::new(Computation::Alu, N).expect("set up");
    assert!(w.agrees().expect("runs"));
    assert_eq!(w.engine(), "jit");
    // One JIT thread, as the 1-thread rows it sits beside.
    assert_eq!(w.jit_threads(), 1);
    let got = words(&w.output().expect("read back"));
    let want = expected(Computation::Alu, 1);
    assert_eq!(got, want);
    // Spot value: lane 0 starts from f = -30.0, h = 0.
    let mut f = -30.0f32;
    let mut h = 0u32;
    for _ in 0..ALU_ROUNDS {
        f = f * 1.0001 + 0.5;
        h = h.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        h ^= h >> 13;
    }
    assert_eq!(got[0], f.to_bits() ^ h);
}

#[test]
fn rv32_saxpy_accumulates_in_vram() {
    let mut w = Rv32Workload::new(Computation::Saxpy, N).expect("set up");
    assert!(w.agrees().expect("runs"));
    w.run().expect("second dispatch");
    assert_eq!(
        words(&w.output().expect("read back")),
        expected(Computation::Saxpy, 2)
    );
}

#[test]
fn agx_kernels_are_bit_exact() {
    for c in [Computation::Alu, Computation::Saxpy] {
        let mut w = AgxWorkload::new(c, N).expect("set up");
        assert!(w.agrees().expect("runs"), "{}", w.name());
        assert_eq!(words(&w.output().expect("read back")), expected(c, 1));
    }
}

#[test]
fn sizes_that_do_not_fit_are_setup_errors() {
    for n in [0, 100, MAX_ELEMENTS + GROUP as usize] {
        match Rv32Workload::new(Computation::Alu, n) {
            Err(BenchError::Setup { bench, reason }) => {
                assert_eq!(bench, "rv32_alu");
                assert!(reason.contains(&n.to_string()), "{reason}");
            }
            Err(e) => panic!("{n}: unexpected error {e}"),
            Ok(_) => panic!("{n} elements accepted"),
        }
    }
    assert!(matches!(
        AgxWorkload::new(Computation::Saxpy, 257),
        Err(BenchError::Setup {
            bench: "agx_saxpy",
            ..
        })
    ));
}

#[test]
fn aql_round_trip_completes() {
    for p in [Processing::Manual, Processing::Thread] {
        let us = aql_round_trip(p, 5).expect("empty dispatches complete");
        assert!(us.is_finite() && us > 0.0, "{p:?}: {us}");
    }
}
