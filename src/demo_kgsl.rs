//! The committed tinygrad capture (`tests/captures/tinygrad_a2p1.wjcap`): a real
//! mesa-compiled a630 kernel and the PM4 stream tinygrad submitted for it,
//! replayed through the fake KGSL command processor.

use crate::runtime::kgsl::capture::Capture;
use crate::runtime::kgsl::pm4::{CommandProcessor, RunOutcome};

/// The capture's bytes, built into the binary so `demo` works from any directory.
pub const TINYGRAD_A2P1: &[u8] = include_bytes!("../tests/captures/tinygrad_a2p1.wjcap");

/// Result of replaying the a*2+1 capture.
pub struct A2p1 {
    pub input: [f32; 4],
    pub output: [f32; 4],
    pub shader_addr: u64,
}

/// Replays the capture on the ir3 compute unit and reads the buffers tinygrad
/// bound: the output pointer in c0.xy, the input pointer in c0.zw.
pub fn replay_a2p1() -> Result<A2p1, Box<dyn std::error::Error>> {
    let cap = Capture::from_bytes(TINYGRAD_A2P1)?;
    let mem = cap.memory()?;
    let input_addr = |cp: &CommandProcessor| -> u64 {
        u64::from(cp.state.consts[2]) | (u64::from(cp.state.consts[3]) << 32)
    };
    let mut cp = CommandProcessor::default();
    let mut cu = crate::runtime::kgsl::compute_unit();
    if cap.replay_on(&mut cp, &mem, cu.as_mut())? != RunOutcome::Done {
        return Err("the captured submission parked at a wait".into());
    }
    let out = u64::from(cp.state.consts[0]) | (u64::from(cp.state.consts[1]) << 32);
    let four = |v: Vec<f32>| -> [f32; 4] { [v[0], v[1], v[2], v[3]] };
    Ok(A2p1 {
        input: four(mem.read_f32s(input_addr(&cp), 4)?),
        output: four(mem.read_f32s(out, 4)?),
        shader_addr: cp.regs.get64(0xa9b4),
    })
}
