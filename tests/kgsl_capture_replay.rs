//! A real tinygrad submission (mesa-compiled a630 kernel + PM4 stream), replayed
//! offline through the KGSL command processor, the ir3 lifter and the JIT.

#[test]
fn tinygrad_a_times_2_plus_1_replays_exactly() {
    let r = wavejit::demo_kgsl::replay_a2p1().expect("capture replays");
    assert_eq!(r.input, [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        r.output.map(f32::to_bits),
        [3.0f32, 5.0, 7.0, 9.0].map(f32::to_bits)
    );
}
