//! Fuzz target of the AQL packet stream: per case a fresh queue gets one to
//! six packets (dispatches of a kernel that stores, one that never ends, a
//! no-op, unregistered or zero kernel objects, with grid, workgroup, segment,
//! kernarg and signal fields valid or not; barrier-AND/OR packets whose
//! dependencies are pending, zero or not signals; raw packets of every type)
//! and is processed until it stops. Seeds come first: one packet per line,
//! eight 64-bit words in hex or `store`/`spin`/`noop` (those kernels' objects)
//! or `kernarg` (a valid kernarg address).
//!
//! Checked: nothing panics, each case ends within the dispatch budget; a
//! queue that stops on an error names a known status and has a message, and
//! no packet after the failing one completes; a queue that drains completed
//! every dispatch and barrier (each completion signal went from 1 to 0), and
//! the storing kernel wrote its lanes. A store past a buffer's end is a
//! kernel memory fault (MEMORY_FAULT).

#[path = "../../frontend/tests/fuzz_support/mod.rs"]
mod fuzz_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fuzz_support::{Rng, corpus, long_cases};
use wavejit_ir::Budget;
use wavejit_ir::interp::Interpreter;
use wavejit_runtime::aql::{
    Agent, AgentConfig, ArgAbi, BarrierPacket, Header, KernelDispatchPacket, KernelObject, Outcome,
    Packet, PacketType, Processing, QueueOptions, Signal, Status,
};

/// out[global x] = x; kernargs: out (u64).
const STORE: &str = "kernel @store {
block0:
  v0 = workgroup_id.x
  v1 = workgroup_size.x
  v2 = local_id.x
  v3 = imul.i32 v0, v1
  v4 = iadd.i32 v3, v2
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = zext.i32.i64 v4
  v8 = const.i64 4
  v9 = imul.i64 v7, v8
  v10 = iadd.i64 v6, v9
  store.global.i32 v10, v4
  exit
}
";

/// Never ends: the step limit stops it.
const SPIN: &str = "kernel @spin {
block0:
  jump block1
block1:
  jump block1
}
";

const NOOP: &str = "kernel @noop {\nblock0:\n  exit\n}\n";

/// Lanes the output buffer holds.
const OUT_LANES: u64 = 1024;

struct Rig {
    agent: Agent,
    store: KernelObject,
    spin: KernelObject,
    noop: KernelObject,
    kernarg: u64,
    /// Kernargs whose `out` is a buffer of 16 lanes of its own: wider
    /// dispatches of the storing kernel fault (a kernel memory fault).
    kernarg_near_end: u64,
    out: u64,
}

impl Rig {
    fn new(jit: bool) -> Rig {
        let engine: Arc<dyn wavejit_ir::Engine + Send + Sync> = if jit {
            Arc::new(wavejit_jit::Jit::default())
        } else {
            Arc::new(Interpreter)
        };
        let agent = Agent::new(AgentConfig {
            engine,
            step_limit: 10_000,
            budget: Budget {
                time_limit: Some(Duration::from_millis(100)),
                max_work_items: 1 << 16,
                cancel: None,
            },
            ..AgentConfig::default()
        });
        let reg = |text: &str, size| {
            agent
                .register_ir_text(text, ArgAbi::UniformCopy, size)
                .expect("kernel registers")
        };
        let (store, spin, noop) = (reg(STORE, 8), reg(SPIN, 0), reg(NOOP, 0));
        let mem = agent.memory().clone();
        let out = mem.alloc(4 * OUT_LANES).expect("out");
        let kernarg = mem.alloc(64).expect("kernarg");
        mem.write_bytes(kernarg, &out.to_le_bytes())
            .expect("kernarg");
        let small = mem.alloc(4 * 16).expect("small out");
        let kernarg_near_end = mem.alloc(64).expect("kernarg");
        mem.write_bytes(kernarg_near_end, &small.to_le_bytes())
            .expect("kernarg");
        Rig {
            agent,
            store,
            spin,
            noop,
            kernarg,
            kernarg_near_end,
            out,
        }
    }
}

/// One packet of a case: what it is and the signal it completes (if one of
/// the case's own).
struct Sent {
    packet: Packet,
    signal: Option<Signal>,
    /// A dispatch of the storing kernel over these lanes.
    stores: Option<u64>,
}

fn dispatch(rig: &Rig, rng: &mut Rng) -> Sent {
    let kernel = match rng.below(20) {
        0..=9 => rig.store,
        10 => rig.spin,
        11..=17 => rig.noop,
        18 => KernelObject(0),
        _ => KernelObject(rng.next()),
    };
    let wild = rng.chance(20);
    let pick = |rng: &mut Rng, good: u64, bad: &[u64]| {
        if wild && rng.chance(30) {
            rng.pick(bad)
        } else {
            good
        }
    };
    let any = rng.next();
    let good_wg = rng.pick(&[1, 32, 64]);
    let wg = pick(rng, good_wg, &[0, 1025, u64::from(u16::MAX)]) as u16;
    let groups = rng.pick(&[1u64, 2, 16]);
    let grid = pick(
        rng,
        (u64::from(wg) * groups).min(OUT_LANES),
        &[0, u64::from(u32::MAX), 1 << 20],
    ) as u32;
    let signal = Signal::new(1);
    let completion = pick(rng, signal.handle(), &[0, 8, any]);
    let kernarg = if rng.chance(15) {
        rig.kernarg_near_end
    } else {
        rig.kernarg
    };
    let p = KernelDispatchPacket {
        header: Header::new(PacketType::KernelDispatch, rng.chance(30)).bits(),
        setup: pick(rng, 1, &[0, 2, 3, 4, 0xffff]) as u16,
        workgroup_size: [wg, 1, 1],
        grid_size: [grid, 1, 1],
        private_segment_size: pick(rng, 0, &[64, u64::from(u32::MAX)]) as u32,
        group_segment_size: pick(rng, 0, &[64, u64::from(u32::MAX)]) as u32,
        kernel_object: kernel.0,
        kernarg_address: pick(rng, kernarg, &[0, 8, any, rig.out + 4 * OUT_LANES]),
        completion_signal: completion,
        ..KernelDispatchPacket::default()
    };
    let stores = (kernel == rig.store && kernarg == rig.kernarg).then_some(u64::from(grid));
    Sent {
        packet: Packet::KernelDispatch(p),
        signal: (completion == signal.handle()).then_some(signal),
        stores,
    }
}

fn barrier(rng: &mut Rng, pending: &[u64]) -> Sent {
    let ty = if rng.chance(50) {
        PacketType::BarrierAnd
    } else {
        PacketType::BarrierOr
    };
    let signal = Signal::new(1);
    let mut p = BarrierPacket {
        header: Header::new(ty, rng.chance(30)).bits(),
        completion_signal: signal.handle(),
        ..BarrierPacket::default()
    };
    for slot in &mut p.dep_signal {
        *slot = match rng.below(40) {
            0..=4 if !pending.is_empty() => rng.pick(pending),
            5 => rng.next(),
            _ => 0,
        };
    }
    Sent {
        packet: Packet::Barrier(p),
        signal: Some(signal),
        stores: None,
    }
}

fn raw(rng: &mut Rng) -> Sent {
    let mut bytes = [0u8; 64];
    for chunk in bytes.chunks_exact_mut(8) {
        chunk.copy_from_slice(&rng.next().to_le_bytes());
    }
    bytes[0] = rng.below(8) as u8;
    Sent {
        packet: Packet::Raw(bytes),
        signal: None,
        stores: None,
    }
}

const KNOWN: &[Status] = &[
    Status::INVALID_PACKET_FORMAT,
    Status::INCOMPATIBLE_ARGUMENTS,
    Status::INVALID_ARGUMENT,
    Status::INVALID_ALLOCATION,
    Status::OUT_OF_RESOURCES,
    Status::INVALID_CODE_OBJECT,
    Status::INVALID_SIGNAL,
    Status::EXCEPTION,
    Status::MEMORY_FAULT,
];

/// Runs `packets` on a fresh queue; `Ok(errored)` when the properties hold.
fn check(rig: &Rig, packets: Vec<Sent>) -> Result<bool, String> {
    let start = Instant::now();
    rig.agent
        .memory()
        .write_bytes(rig.out, &[0u8; 4 * OUT_LANES as usize])
        .expect("out");
    let q = rig
        .agent
        .create_queue(QueueOptions::new(8, Processing::Manual))
        .map_err(|e| format!("queue: {e:?}"))?;
    let mut ids = Vec::new();
    for s in &packets {
        ids.push(q.submit(&s.packet).map_err(|e| format!("submit: {e:?}"))?);
    }
    let outcome = q.process();
    let took = start.elapsed();
    // Two dispatch budgets of 100 ms each at most run, with room.
    if took > Duration::from_secs(3) {
        return Err(format!("took {took:?} ({outcome:?})"));
    }
    let done = |s: &Sent| s.signal.as_ref().map(|g| g.load(Ordering::Acquire));
    match outcome {
        Outcome::Error => {
            let e = q.error().ok_or("Error without a queue error")?;
            if !KNOWN.contains(&e.status) || e.message.trim().is_empty() {
                return Err(format!("queue error {e:?}"));
            }
            for (s, id) in packets.iter().zip(&ids) {
                if *id > e.packet_id && done(s) == Some(0) {
                    return Err(format!("packet {id} completed after the error at {e:?}"));
                }
            }
            Ok(true)
        }
        Outcome::Idle => {
            for (s, id) in packets.iter().zip(&ids) {
                if done(s).is_some_and(|v| v != 0) {
                    return Err(format!(
                        "drained, but packet {id}'s signal is {:?}",
                        done(s)
                    ));
                }
            }
            // Every lane of the last store that ran wrote its index.
            if let Some(lanes) = packets.iter().filter_map(|s| s.stores).max() {
                let got = rig.agent.memory().read_bytes(rig.out, 4 * lanes as usize);
                let got = got.map_err(|e| format!("{e:?}"))?;
                for (i, w) in got.chunks_exact(4).enumerate() {
                    if u32::from_le_bytes([w[0], w[1], w[2], w[3]]) != i as u32 {
                        return Err(format!("lane {i} of the store did not write its index"));
                    }
                }
            }
            Ok(false)
        }
        Outcome::Dependencies { .. } | Outcome::Stalled { .. } | Outcome::BarrierBit { .. } => {
            Ok(false)
        }
        other => Err(format!("outcome {other:?}")),
    }
}

fn run(seed: u64, cases: usize) {
    let rigs = [Rig::new(false), Rig::new(true)];
    let mut rng = Rng::new(seed);
    let mut bad = Vec::new();
    for (name, text) in corpus("aql") {
        for rig in &rigs {
            let packets = seed_packets(rig, &text);
            if let Err(e) = check(rig, packets) {
                bad.push(format!("{name}: {e}"));
            }
        }
    }
    let mut errored = 0;
    for case in 0..cases {
        let rig = &rigs[case % 2];
        let mut packets: Vec<Sent> = Vec::new();
        for _ in 0..=rng.below(6) {
            let pending: Vec<u64> = packets
                .iter()
                .filter_map(|s| s.signal.as_ref().map(Signal::handle))
                .collect();
            packets.push(match rng.below(20) {
                0..=13 => dispatch(rig, &mut rng),
                14..=18 => barrier(&mut rng, &pending),
                _ => raw(&mut rng),
            });
        }
        match check(rig, packets) {
            Ok(e) => errored += usize::from(e),
            Err(e) => bad.push(format!("case {case}: {e}")),
        }
    }
    eprintln!("{cases} packet streams, {errored} stopped the queue with an error");
    assert!(
        bad.is_empty(),
        "{} cases fail:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
    assert!(
        errored > cases / 10 && errored < cases * 9 / 10,
        "{errored} of {cases}"
    );
    fuzz_support::assert_peak_rss_bounded();
}

/// The packets of a seed file (see the module documentation).
fn seed_packets(rig: &Rig, text: &[u8]) -> Vec<Sent> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut bytes = [0u8; 64];
            let words: Vec<u64> = l
                .split_whitespace()
                .map(|t| match t {
                    "store" => rig.store.0,
                    "spin" => rig.spin.0,
                    "noop" => rig.noop.0,
                    "kernarg" => rig.kernarg,
                    h => u64::from_str_radix(h.trim_start_matches("0x"), 16)
                        .unwrap_or_else(|e| panic!("seed word `{h}`: {e}")),
                })
                .collect();
            assert_eq!(words.len(), 8, "seed line `{l}`: eight words");
            for (chunk, w) in bytes.chunks_exact_mut(8).zip(&words) {
                chunk.copy_from_slice(&w.to_le_bytes());
            }
            Sent {
                packet: Packet::Raw(bytes),
                signal: None,
                stores: None,
            }
        })
        .collect()
}

#[test]
fn random_aql_packet_streams_stop_with_a_status_or_complete() {
    run(0xa91_0001, 2_000);
}

/// `WAVEJIT_LONG_CASES` packet streams (default 50,000) from another seed.
#[test]
#[ignore]
fn random_aql_packet_streams_stop_with_a_status_or_complete_long() {
    run(0xa91_0002, long_cases(50_000));
}
