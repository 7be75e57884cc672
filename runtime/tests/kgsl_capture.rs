//! A captured submission replays offline with the same effect.

use wavejit_runtime::AddressSpace;
use wavejit_runtime::kgsl::capture::{Capture, CaptureError};
use wavejit_runtime::kgsl::pm4::packet::op;
use wavejit_runtime::kgsl::pm4::{
    CommandProcessor, ComputeError, ComputeUnit, CsDispatch, RunOutcome, type4, type7,
};

struct CountGroups(Vec<[u32; 3]>);
impl ComputeUnit for CountGroups {
    fn exec_cs(&mut self, d: &CsDispatch, _: &AddressSpace) -> Result<(), ComputeError> {
        self.0.push(d.groups);
        Ok(())
    }
}

#[test]
fn capture_round_trips_and_replays() {
    let mem = AddressSpace::new();
    let ib = mem.alloc(8192).unwrap();
    let out = mem.alloc(4096).unwrap();
    let words = [
        type4(0xb990, 1),
        3,
        type7(op::EXEC_CS, 4),
        0,
        4,
        1,
        1,
        type7(op::EVENT_WRITE, 4),
        4,
        out as u32,
        (out >> 32) as u32,
        77,
    ];
    mem.write_u32s(ib, &words).unwrap();
    let mut cp = CommandProcessor::default();
    cp.regs.set(0xa9b0, 0x282);
    let cap = Capture::take(&mem, vec![(ib, words.len() as u32)], &cp);
    assert_eq!(cap.regions.len(), 2);
    assert_eq!(cap.pages.len(), 1, "only the non-zero IB page is stored");
    assert_eq!(cap.registers, vec![(0xa9b0, 0x282)]);

    let bytes = cap.to_bytes();
    let back = Capture::from_bytes(&bytes).unwrap();
    assert_eq!(back, cap);
    assert!(matches!(
        Capture::from_bytes(&bytes[..bytes.len() - 1]),
        Err(CaptureError::Truncated(_))
    ));
    assert!(matches!(
        Capture::from_bytes(b"nope"),
        Err(CaptureError::Magic)
    ));

    let replay_mem = back.memory().unwrap();
    let mut cu = CountGroups(Vec::new());
    assert_eq!(back.replay(&replay_mem, &mut cu), Ok(RunOutcome::Done));
    assert_eq!(cu.0, vec![[4, 1, 1]]);
    assert_eq!(replay_mem.read_u32s(out, 1).unwrap(), vec![77]);
}
