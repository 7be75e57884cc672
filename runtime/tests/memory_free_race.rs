//! Frees racing dispatches (issue 14, item 1): `AddressSpace::free` is safe and
//! may come from any thread while a dispatch runs. The unmapping waits for the
//! dispatch: its kernel keeps seeing the old bytes through a region snapshot
//! taken before the free (the JIT's workers take one each when they start), or
//! faults cleanly as use-after-free where it asks `translate` (the interpreter,
//! a JIT worker that started after the free); which one depends on timing. The
//! host never crashes and the range is not handed out again meanwhile.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Access, AccessCause, Dispatch, Engine, FaultKind, GlobalMemory, Kernel, Pinned};
use wavejit_jit::{Jit, JitConfig};
use wavejit_runtime::{AddressSpace, MemError};

/// Lanes per workgroup; lane g (global index) owns word g of both buffers.
const LANES: u32 = 64;

/// Each lane adds 1 to victim[g] `{LIMIT}` times, then stores the victim's final
/// value + 1000 to keep[g]. Uniforms: victim address at 0, keep address at 8.
const KERNEL: &str = "kernel @hammer shared 0 private 0 {
block0:
  v20 = local_index
  v21 = workgroup_id.x
  v22 = const.i32 64
  v23 = imul.i32 v21, v22
  v0 = iadd.i32 v23, v20
  v1 = const.i32 0
  v2 = load.uniform.i64 v1
  v3 = zext.i32.i64 v0
  v4 = const.i64 2
  v5 = shl.i64 v3, v4
  v6 = iadd.i64 v2, v5
  jump block1(v1)

block1(v7: i32):
  v8 = load.global.i32 v6
  v9 = const.i32 1
  v10 = iadd.i32 v8, v9
  store.global.i32 v6, v10
  v11 = iadd.i32 v7, v9
  v12 = const.i32 {LIMIT}
  v13 = icmp.ult.i32 v11, v12
  br v13, block1(v11), block2

block2:
  v14 = load.global.i32 v6
  v15 = const.i32 1000
  v16 = iadd.i32 v14, v15
  v17 = const.i32 8
  v18 = load.uniform.i64 v17
  v19 = iadd.i64 v18, v5
  store.global.i32 v19, v16
  exit
}
";

fn kernel(limit: u32) -> Kernel {
    let text = KERNEL.replace("{LIMIT}", &limit.to_string());
    wavejit_ir::text::parse(&text).expect("the test kernel parses")
}

fn dispatch(groups: u32, victim: u64, keep: u64) -> Dispatch {
    let mut d = Dispatch::new([groups, 1, 1], [LANES, 1, 1]);
    d.uniforms = [victim.to_le_bytes(), keep.to_le_bytes()].concat();
    d
}

/// Guest address of the `alloc_at` victim (VRAM-style, not a host address).
const GUEST: u64 = 0x4000_0000;

/// One race: a dispatch on this thread, frees of its victim buffer from another
/// after a delay of `delay_us`. `free_it == false` is the control run. Returns
/// whether the free landed while the dispatch still ran, and whether it faulted.
fn race(
    engine: &dyn Engine,
    k: &Kernel,
    groups: u32,
    guest: bool,
    delay_us: u64,
    free_it: bool,
) -> (bool, bool) {
    let mem = AddressSpace::new();
    let words = (groups * LANES) as usize;
    let bytes = 4 * words as u64;
    let victim = if guest {
        mem.alloc_at(GUEST, bytes).expect("alloc_at")
    } else {
        mem.alloc(bytes).expect("alloc")
    };
    let keep = mem.alloc(bytes).expect("alloc");
    let d = dispatch(groups, victim, keep);
    let started = AtomicBool::new(false);
    let running = AtomicBool::new(true);
    let result = std::thread::scope(|s| {
        let freer = s.spawn(|| {
            while !started.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            if !free_it {
                return false;
            }
            std::thread::sleep(Duration::from_micros(delay_us));
            mem.free(victim)
                .expect("the victim is live until this free");
            let during = running.load(Ordering::SeqCst);
            // While the dispatch may still touch it, the range is reserved.
            if guest {
                match mem.alloc_at(GUEST, bytes) {
                    Err(MemError::InUse { start, .. }) => {
                        assert_eq!(start, GUEST);
                    }
                    Ok(_) => assert!(
                        !running.load(Ordering::SeqCst) || mem.deferred_frees() == 0,
                        "a freed range was reused while a dispatch still ran"
                    ),
                    Err(e) => panic!("unexpected refusal: {e}"),
                }
            }
            during
        });
        started.store(true, Ordering::SeqCst);
        let r = engine.run(k, &d, &mem);
        running.store(false, Ordering::SeqCst);
        (r, freer.join().expect("the freeing thread"))
    });
    let (result, during) = result;
    let faulted = result.is_err();
    // No dispatch runs now: nothing stays deferred.
    assert_eq!(mem.deferred_frees(), 0, "a deferred free was not released");
    match result {
        Ok(()) => {
            // Every lane ran to its end and saw the old memory throughout:
            // its final load returned all of its own increments.
            let out = mem.read_u32s(keep, words).expect("keep is live");
            assert_eq!(out, vec![1000 + RACE_LIMIT; words]);
            if !free_it {
                assert_eq!(
                    mem.read_u32s(victim, words).expect("victim live"),
                    vec![RACE_LIMIT; words],
                );
            }
        }
        Err(f) => {
            assert!(free_it, "the control run faulted: {f}");
            match f.kind {
                FaultKind::Memory { addr, cause, .. } => {
                    assert_eq!(cause, AccessCause::UseAfterFree, "{f}");
                    assert!((victim..victim + bytes).contains(&addr), "{f}");
                }
                _ => panic!("not a clean use-after-free fault: {f}"),
            }
        }
    }
    if guest && free_it {
        // The freeing thread's allocation, if it came after the dispatch.
        let _ = mem.free(GUEST);
        // The dispatch is over: the range can be allocated again.
        assert_eq!(mem.alloc_at(GUEST, bytes).expect("free again"), GUEST);
    }
    (during, faulted)
}

const RACE_LIMIT: u32 = 2000;

fn jit() -> Jit {
    Jit::new(JitConfig {
        threads: 2,
        // Several threads even for this small dispatch: frees race workers.
        parallel_min_work: 0,
        ..JitConfig::default()
    })
}

#[test]
fn frees_during_jit_dispatches_never_crash() {
    let k = kernel(RACE_LIMIT);
    let jit = jit();
    let (mut during, mut faults) = (0, 0);
    for i in 0..120u64 {
        let (d, f) = race(&jit, &k, 64, i % 2 == 0, (i * 37) % 3000, i % 10 != 9);
        during += usize::from(d);
        faults += usize::from(f);
    }
    // Workers snapshot the regions when they start: one that started before
    // the free sees the old memory, one that started after faults.
    eprintln!("jit: {during} frees inside a dispatch, {faults} faulted");
    assert!(during >= 20, "only {during} frees landed inside a dispatch");
}

#[test]
fn frees_during_interpreter_dispatches_never_crash() {
    let k = kernel(RACE_LIMIT);
    let mut during = 0;
    for i in 0..20u64 {
        let (d, _) = race(
            &Interpreter,
            &k,
            2,
            i % 2 == 0,
            (i * 211) % 4000,
            i % 5 != 4,
        );
        during += usize::from(d);
    }
    assert!(during >= 5, "only {during} frees landed inside a dispatch");
}

#[test]
fn a_free_while_pinned_is_deferred_until_the_last_pin() {
    let mem = AddressSpace::new();
    let a = mem.alloc_at(GUEST, 4096).expect("alloc_at");
    mem.write_u32s(a, &[0xfeed]).expect("write");
    let outer = Pinned::new(&mem);
    let regions = mem.regions().expect("regions");
    let inner = Pinned::new(&mem);
    mem.free(a).expect("free");
    // Refused to new lookups at once...
    assert_eq!(
        mem.translate(a, 4, Access::Read),
        Err(AccessCause::UseAfterFree)
    );
    // ...but still mapped for the pinned snapshot, and not reusable.
    assert_eq!(mem.deferred_frees(), 1);
    // SAFETY: the region is pinned (the point of this test).
    let old = unsafe { regions[0].host.cast::<u32>().read() };
    assert_eq!(old, 0xfeed);
    assert!(matches!(
        mem.alloc_at(GUEST + 64, 64),
        Err(MemError::InUse { .. })
    ));
    drop(inner);
    assert_eq!(mem.deferred_frees(), 1, "one pin is still held");
    drop(outer);
    assert_eq!(mem.deferred_frees(), 0);
    assert_eq!(mem.alloc_at(GUEST, 4096).expect("reusable now"), GUEST);
    // Unpinned frees unmap at once.
    mem.free(GUEST).expect("free");
    assert_eq!(mem.deferred_frees(), 0);
}

/// The same through AQL: the queue's processor thread runs the dispatch while
/// the client frees its buffer (what `wj_aql_memory_free` calls).
#[test]
fn frees_during_aql_dispatches_never_crash() {
    use std::sync::Arc;
    use wavejit_runtime::aql::{
        Agent, AgentConfig, ArgAbi, Condition, Header, KernelDispatchPacket, Packet, PacketType,
        Processing, QueueOptions, Signal, Status,
    };
    let agent = Agent::new(AgentConfig {
        engine: Arc::new(jit()),
        ..AgentConfig::default()
    });
    let text = KERNEL.replace("{LIMIT}", &RACE_LIMIT.to_string());
    let k = agent
        .register_ir_text(&text, ArgAbi::UniformCopy, 16)
        .expect("registers");
    let mem = agent.memory().clone();
    let groups = 64u32;
    let words = (groups * LANES) as usize;
    let (mut faults, mut fine) = (0, 0);
    for i in 0..40u64 {
        let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = errors.clone();
        let q = agent
            .create_queue(QueueOptions::new(4, Processing::Thread).callback(move |e| {
                log.lock().expect("log").push(e.clone());
            }))
            .expect("queue");
        let victim = mem.alloc(4 * words as u64).expect("alloc");
        let keep = mem.alloc(4 * words as u64).expect("alloc");
        let args = mem.alloc(16).expect("alloc");
        mem.write_bytes(args, &[victim.to_le_bytes(), keep.to_le_bytes()].concat())
            .expect("kernarg");
        let done = Signal::new(1);
        let p = KernelDispatchPacket {
            header: Header::new(PacketType::KernelDispatch, false).bits(),
            setup: 1,
            workgroup_size: [LANES as u16, 1, 1],
            grid_size: [groups * LANES, 1, 1],
            kernel_object: k.0,
            kernarg_address: args,
            completion_signal: done.handle(),
            ..KernelDispatchPacket::default()
        };
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        std::thread::sleep(Duration::from_micros((i * 53) % 2500));
        mem.free(victim).expect("free");
        // A faulted dispatch reports to the callback and may leave the signal.
        let start = std::time::Instant::now();
        let (left, errors) = loop {
            let left = done.wait(Condition::Eq, 0, Some(Duration::from_millis(1)));
            let errors = errors.lock().expect("log").clone();
            if left == 0 || !errors.is_empty() || start.elapsed() > Duration::from_secs(20) {
                break (left, errors);
            }
        };
        if let Some(e) = errors.first() {
            // A worker that started after the free faulted cleanly.
            assert_eq!(e.status, Status::MEMORY_FAULT, "{}", e.message);
            assert!(e.message.contains("freed"), "{}", e.message);
            faults += 1;
        } else {
            assert_eq!(left, 0, "the dispatch did not complete");
            let out = mem.read_u32s(keep, words).expect("keep is live");
            assert_eq!(out, vec![1000 + RACE_LIMIT; words]);
            fine += 1;
        }
        drop(q);
        mem.free(keep).expect("free");
        mem.free(args).expect("free");
    }
    eprintln!("aql: {fine} ran to the end, {faults} faulted");
    assert_eq!(mem.deferred_frees(), 0);
}
