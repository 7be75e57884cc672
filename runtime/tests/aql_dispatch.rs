//! Kernel dispatch of real IR kernels through AQL queues, on the interpreter and
//! the JIT: partial workgroups in 1–3 dimensions write exactly the grid, barriers
//! with exited lanes, both argument ABIs, the dispatch-packet view, segment sizes,
//! overlap of barrier-bit-clear dispatches, and the benchmark hook.

mod aql_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use aql_support::*;
use wavejit_ir::interp::Interpreter;
use wavejit_runtime::aql::bench::DispatchRoundTrip;
use wavejit_runtime::aql::{
    Agent, AgentConfig, ArgAbi, Header, KernelObject, Outcome, Packet, PacketType, Processing,
    Signal, Status,
};

/// out[linear global id] = linear + base, where linear uses the grid sizes read
/// from the dispatch-packet view (uniform 16: packet; grid x at 28, y at 32).
/// kernargs: out (u64) at 0, base (i32) at 8; kernarg_size 16.
const FILL: &str = "kernel @fill {
block0:
  v0 = workgroup_id.x
  v1 = workgroup_size.x
  v2 = local_id.x
  v3 = imul.i32 v0, v1
  v4 = iadd.i32 v3, v2
  v5 = workgroup_id.y
  v6 = workgroup_size.y
  v7 = local_id.y
  v8 = imul.i32 v5, v6
  v9 = iadd.i32 v8, v7
  v10 = workgroup_id.z
  v11 = workgroup_size.z
  v12 = local_id.z
  v13 = imul.i32 v10, v11
  v14 = iadd.i32 v13, v12
  v20 = const.i32 28
  v21 = load.uniform.i32 v20
  v22 = const.i32 32
  v23 = load.uniform.i32 v22
  v24 = imul.i32 v14, v23
  v25 = iadd.i32 v24, v9
  v26 = imul.i32 v25, v21
  v27 = iadd.i32 v26, v4
  v30 = const.i32 0
  v31 = load.uniform.i64 v30
  v32 = const.i32 8
  v33 = load.uniform.i32 v32
  v34 = iadd.i32 v27, v33
  v35 = zext.i32.i64 v27
  v36 = const.i64 2
  v37 = shl.i64 v35, v36
  v38 = iadd.i64 v31, v37
  store.global.i32 v38, v34
  exit
}
";

/// Every live lane adds 1 to a shared counter; after a barrier, lane 0 stores it
/// to out[workgroup_id.x]. kernargs: out (u64); kernarg_size 8.
const COUNT: &str = "kernel @count shared 4 {
block0:
  v0 = const.i32 0
  v1 = const.i32 1
  v2 = atomic.add.shared.i32 v0, v1
  barrier
  v3 = local_index
  v4 = icmp.eq.i32 v3, v0
  br v4, block1, block2
block1:
  v5 = load.shared.i32 v0
  v6 = load.uniform.i64 v0
  v7 = workgroup_id.x
  v8 = zext.i32.i64 v7
  v9 = const.i64 2
  v10 = shl.i64 v8, v9
  v11 = iadd.i64 v6, v10
  store.global.i32 v11, v5
  jump block2
block2:
  exit
}
";

const SENTINEL: u32 = 0xdead_beef;

struct Fill {
    agent: Agent,
    kernel: KernelObject,
}

impl Fill {
    fn new(agent: Agent) -> Fill {
        let kernel = agent
            .register_ir_text(FILL, ArgAbi::UniformCopy, 16)
            .expect("fill registers");
        Fill { agent, kernel }
    }

    /// Runs one dispatch; returns the buffer (grid cells + 64 extra).
    fn run(&self, dims: u16, grid: [u32; 3], wg: [u16; 3], group: u32, private: u32) -> Vec<u32> {
        let cells = grid.iter().product::<u32>() as usize + 64;
        let mem = self.agent.memory();
        let out = mem.alloc(cells as u64 * 4).expect("alloc");
        mem.write_u32s(out, &vec![SENTINEL; cells]).expect("init");
        let args = mem.alloc(16).expect("alloc");
        let mut kernarg = out.to_le_bytes().to_vec();
        kernarg.extend_from_slice(&1000u32.to_le_bytes());
        mem.write_bytes(args, &kernarg).expect("kernarg");
        let q = queue(&self.agent, 4, Processing::Manual);
        let done = Signal::new(1);
        let mut p = dispatch(self.kernel, dims, grid, wg, args, Some(&done));
        p.group_segment_size = group;
        p.private_segment_size = private;
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        assert_eq!(q.process(), Outcome::Idle, "{:?}", q.error());
        assert_eq!(done.load(Ordering::Acquire), 0);
        let got = mem.read_u32s(out, cells).expect("read");
        mem.free(out).expect("free");
        mem.free(args).expect("free");
        got
    }
}

fn check_fill(got: &[u32], grid: [u32; 3], what: &str) {
    let n = grid.iter().product::<u32>() as usize;
    for (i, &v) in got.iter().enumerate() {
        let want = if i < n { i as u32 + 1000 } else { SENTINEL };
        assert_eq!(v, want, "{what}: cell {i} of {n}");
    }
}

#[test]
fn partial_workgroups_write_exactly_the_grid() {
    let shapes: [(u16, [u32; 3], [u16; 3]); 7] = [
        (1, [100, 1, 1], [32, 1, 1]),
        (1, [96, 1, 1], [32, 1, 1]),
        (1, [1, 1, 1], [1, 1, 1]),
        (1, [1000, 1, 1], [256, 1, 1]),
        (2, [10, 7, 1], [4, 3, 1]),
        (3, [5, 3, 3], [2, 2, 2]),
        (3, [9, 4, 5], [8, 4, 2]),
    ];
    for (name, agent) in agents() {
        let fill = Fill::new(agent);
        for (dims, grid, wg) in shapes {
            let got = fill.run(dims, grid, wg, 0, 0);
            check_fill(&got, grid, &format!("{name} grid {grid:?} wg {wg:?}"));
        }
    }
}

/// `test_aql_launch_size`: every workgroup size and grid size (grid >= wg) in a
/// small range; only the addressed memory is written.
#[test]
fn launch_size_sweep() {
    let fill = Fill::new(interp_agent());
    for wg in [1u16, 2, 3, 7, 16, 33] {
        for extra in [0u32, 1, 5, 16, 31, 64] {
            let grid = [u32::from(wg) + extra, 1, 1];
            let got = fill.run(1, grid, [wg, 1, 1], 0, 0);
            check_fill(&got, grid, &format!("wg {wg} grid {}", grid[0]));
        }
    }
}

/// `test_aql_group_memory_overspecified` / `…private…`.
#[test]
fn overspecified_segments_still_work() {
    for (name, agent) in agents() {
        let fill = Fill::new(agent);
        let grid = [70, 1, 1];
        let got = fill.run(1, grid, [16, 1, 1], 4096, 256);
        check_fill(&got, grid, name);
    }
}

#[test]
fn barrier_with_exited_lanes_in_partial_workgroups() {
    for (name, agent) in agents() {
        let k = agent
            .register_ir_text(COUNT, ArgAbi::UniformCopy, 8)
            .expect("registers");
        let mem = agent.memory();
        let out = mem.alloc(16).expect("alloc");
        let args = mem.alloc(8).expect("alloc");
        mem.write_bytes(args, &out.to_le_bytes()).expect("kernarg");
        let q = queue(&agent, 4, Processing::Manual);
        let done = Signal::new(1);
        let p = dispatch(k, 1, [100, 1, 1], [32, 1, 1], args, Some(&done));
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        assert_eq!(q.process(), Outcome::Idle, "{name}: {:?}", q.error());
        assert_eq!(
            mem.read_u32s(out, 4).expect("read"),
            [32, 32, 32, 4],
            "{name}"
        );
    }
}

/// kernarg pointer ABI: uniform 0 holds the kernarg address; the kernel loads the
/// output pointer from global memory and stores 42 there.
#[test]
fn uniform_pointer_argument_abi() {
    const PTR: &str = "kernel @ptr {
block0:
  v0 = const.i32 0
  v1 = load.uniform.i64 v0
  v2 = load.global.i64 v1
  v3 = const.i32 42
  store.global.i32 v2, v3
  v4 = const.i32 16
  v5 = load.uniform.i32.u16 v4
  v6 = const.i64 4
  v7 = iadd.i64 v2, v6
  store.global.i32 v7, v5
  exit
}
";
    for (name, agent) in agents() {
        let k = agent
            .register_ir_text(PTR, ArgAbi::UniformPointer, 8)
            .expect("registers");
        let mem = agent.memory();
        let out = mem.alloc(8).expect("alloc");
        let args = mem.alloc(8).expect("alloc");
        mem.write_bytes(args, &out.to_le_bytes()).expect("kernarg");
        let q = queue(&agent, 4, Processing::Manual);
        let p = dispatch(k, 1, [1, 1, 1], [1, 1, 1], args, None);
        let header = p.header;
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        assert_eq!(q.process(), Outcome::Idle, "{name}: {:?}", q.error());
        // The packet view at uniform 16 starts with the header as launched.
        assert_eq!(
            mem.read_u32s(out, 2).expect("read"),
            [42, u32::from(header)],
            "{name}"
        );
    }
}

/// Dynamic group memory: the packet's group_segment_size enlarges the kernel's
/// shared space; without it the same access faults.
#[test]
fn group_segment_size_gives_dynamic_shared_memory() {
    const DYN: &str = "kernel @dyn shared 4 {
block0:
  v0 = const.i32 124
  v1 = const.i32 7
  store.shared.i32 v0, v1
  v2 = load.shared.i32 v0
  v3 = const.i32 0
  v4 = load.uniform.i64 v3
  store.global.i32 v4, v2
  exit
}
";
    let agent = interp_agent();
    let k = agent
        .register_ir_text(DYN, ArgAbi::UniformCopy, 8)
        .expect("registers");
    let mem = agent.memory();
    let out = mem.alloc(4).expect("alloc");
    let args = mem.alloc(8).expect("alloc");
    mem.write_bytes(args, &out.to_le_bytes()).expect("kernarg");
    let q = queue(&agent, 4, Processing::Manual);
    let mut p = dispatch(k, 1, [1, 1, 1], [1, 1, 1], args, None);
    p.group_segment_size = 128;
    q.submit(&Packet::KernelDispatch(p)).expect("submit");
    assert_eq!(q.process(), Outcome::Idle, "{:?}", q.error());
    assert_eq!(mem.read_u32s(out, 1).expect("read"), [7]);
    p.group_segment_size = 0;
    q.submit(&Packet::KernelDispatch(p)).expect("submit");
    assert_eq!(q.process(), Outcome::Error);
    let e = q.error().expect("fault");
    assert_eq!(e.status, Status::MEMORY_FAULT, "{}", e.message);
    assert!(e.message.contains("shared"), "{}", e.message);
}

const WAITER: &str = "kernel @waiter {
block0:
  v0 = const.i32 0
  v1 = load.uniform.i64 v0
  jump block1
block1:
  v2 = const.i32 0
  v3 = atomic.add.global.i32 v1, v2
  v4 = icmp.eq.i32 v3, v2
  br v4, block1, block2
block2:
  exit
}
";

const SETTER: &str = "kernel @setter {
block0:
  v0 = const.i32 0
  v1 = load.uniform.i64 v0
  v2 = const.i32 1
  v3 = atomic.xchg.global.i32 v1, v2
  exit
}
";

fn waiter_setter(
    agent: &Agent,
    setter_barrier: bool,
) -> (wavejit_runtime::aql::Queue, Signal, u64) {
    let waiter = agent
        .register_ir_text(WAITER, ArgAbi::UniformCopy, 8)
        .expect("registers");
    let setter = agent
        .register_ir_text(SETTER, ArgAbi::UniformCopy, 8)
        .expect("registers");
    let mem = agent.memory();
    let flag = mem.alloc(4).expect("alloc");
    let args = mem.alloc(8).expect("alloc");
    mem.write_bytes(args, &flag.to_le_bytes()).expect("kernarg");
    let q = queue(agent, 8, Processing::Thread);
    let count = Signal::new(3);
    for _ in 0..2 {
        let p = dispatch(waiter, 1, [1, 1, 1], [1, 1, 1], args, Some(&count));
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
    }
    let mut p = dispatch(setter, 1, [1, 1, 1], [1, 1, 1], args, Some(&count));
    p.header = Header::new(PacketType::KernelDispatch, setter_barrier).bits();
    q.submit(&Packet::KernelDispatch(p)).expect("submit");
    (q, count, flag)
}

/// `test_aql_barrier_bit_not_set`: waiters spinning on a flag must not block a
/// later setter without the barrier bit (dispatches overlap).
#[test]
fn barrier_bit_clear_lets_dispatches_overlap() {
    for (name, agent) in agents() {
        let (q, count, flag) = waiter_setter(&agent, false);
        wait_eq(&count, 0);
        assert!(q.error().is_none(), "{name}: {:?}", q.error());
        assert_eq!(agent.memory().read_u32s(flag, 1).expect("read"), [1]);
    }
}

/// `test_aql_barrier_bit_set`: the setter must not run before the waiters finish;
/// they never do, and the watchdog ends them.
#[test]
fn barrier_bit_set_holds_the_setter_back() {
    let agent = Agent::new(AgentConfig {
        engine: Arc::new(Interpreter),
        step_limit: 20_000,
        ..AgentConfig::default()
    });
    let (q, count, flag) = waiter_setter(&agent, true);
    let deadline = std::time::Instant::now() + WAIT;
    while q.error().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let e = q.error().expect("watchdog fault");
    assert_eq!(e.status, Status::EXCEPTION, "{}", e.message);
    assert!(e.message.contains("watchdog"), "{}", e.message);
    stays(&count, 3);
    assert_eq!(agent.memory().read_u32s(flag, 1).expect("read"), [0]);
}

#[test]
fn bench_hook_round_trips() {
    for processing in [Processing::Manual, Processing::Thread] {
        let mut rt = DispatchRoundTrip::new(processing).expect("setup");
        for _ in 0..20 {
            rt.run_once().expect("round trip");
        }
        assert_eq!(rt.queue.load_read_index(Ordering::Acquire), 20);
        assert_eq!(rt.signal.load(Ordering::Acquire), 0);
    }
}
