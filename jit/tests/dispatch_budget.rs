//! The dispatch budget (issue 14.5): a grid over the work-item budget is
//! refused before anything runs, identically on the interpreter and every JIT
//! configuration; a dispatch past its time limit, or whose cancel flag is set,
//! stops between workgroups/batches with `FaultKind::Budget`. No test here
//! waits for the 30 s default: budgets are set on the dispatch.

mod support;

use std::sync::mpsc;
use std::time::Duration;

use support::{BUF, jit_configs, parse, run_on};
use wavejit_ir::dispatch::DEFAULT_MAX_WORK_ITEMS;
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{
    Block, Budget, BudgetExceeded, CancelFlag, Dispatch, DispatchError, Engine, Fault, FaultKind,
    Kernel, LaneId,
};
use wavejit_jit::{Jit, JitConfig};

/// out[global id] = workgroup id + 1 (0 marks a lane that never ran).
const MARK: &str = "kernel @mark {
block0:
  v0 = workgroup_id.x
  v1 = workgroup_size.x
  v2 = local_id.x
  v3 = imul.i32 v0, v1
  v4 = iadd.i32 v3, v2
  v5 = zext.i32.i64 v4
  v6 = const.i64 2
  v7 = shl.i64 v5, v6
  v8 = const.i32 0
  v9 = load.uniform.i64 v8
  v10 = iadd.i64 v9, v7
  v11 = const.i32 1
  v12 = iadd.i32 v0, v11
  store.global.i32 v10, v12
  exit
}
";

/// 100 loop trips per lane and no memory access: a huge grid of it never
/// faults by itself.
const SPIN: &str = "kernel @spin {
block0:
  v0 = const.i32 0
  jump block1(v0)

block1(v1: i32):
  v2 = const.i32 1
  v3 = iadd.i32 v1, v2
  v4 = const.i32 100
  v5 = icmp.ult.i32 v3, v4
  br v5, block1(v3), block2

block2:
  exit
}
";

/// The interpreter and a spread of JIT configurations (both cores, one and
/// several threads), named.
fn engines() -> Vec<(String, Box<dyn Engine + Send + Sync>)> {
    let mut v: Vec<(String, Box<dyn Engine + Send + Sync>)> =
        vec![("interp".into(), Box::new(Interpreter))];
    for (i, cfg) in jit_configs().into_iter().enumerate() {
        v.push((
            format!("jit#{i} {:?}/{}t", cfg.core, cfg.threads),
            Box::new(Jit::new(cfg)),
        ));
    }
    v.push((
        "jit default".into(),
        Box::new(Jit::new(JitConfig::default())),
    ));
    v
}

fn mark_dispatch(groups: u32, lanes: u32) -> Dispatch {
    let mut d = Dispatch::new([groups, 1, 1], [lanes, 1, 1]);
    d.uniforms = BUF.to_le_bytes().to_vec();
    d
}

#[test]
fn the_work_item_budget_refuses_alike_on_every_engine() {
    let k = parse(MARK);
    let mut over = mark_dispatch(100, 16);
    over.budget.max_work_items = 1599;
    let want = Fault {
        kernel: "mark".into(),
        block: Block::from_u32(0),
        inst: None,
        guest_pc: None,
        lane: LaneId {
            workgroup: [0; 3],
            local: [0; 3],
        },
        kind: FaultKind::Dispatch(DispatchError::TooManyWorkItems {
            items: 1600,
            limit: 1599,
        }),
    };
    let mut at_limit = over.clone();
    at_limit.budget.max_work_items = 1600;
    for (name, e) in engines() {
        let out = run_on(e.as_ref(), &k, &over, &[0; 6400], &[], true);
        assert_eq!(out.fault.as_ref(), Some(&want), "{name}");
        assert!(out.memory.iter().all(|&b| b == 0), "{name}: a lane ran");
        // Exactly at the budget the dispatch runs whole.
        let out = run_on(e.as_ref(), &k, &at_limit, &[0; 6400], &[], true);
        assert_eq!(out.fault, None, "{name}");
        let words: Vec<u32> = out
            .memory
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        for (i, &w) in words.iter().enumerate() {
            assert_eq!(w, i as u32 / 16 + 1, "{name}: word {i}");
        }
    }
    let text = want.to_string();
    assert!(
        text.contains("kernel `mark`") && text.contains("1600 work-items exceed"),
        "{text}"
    );
    assert!(text.contains("budget of 1599"), "{text}");
}

#[test]
fn a_grid_of_2_to_the_96_work_items_is_refused_without_overflow() {
    let k = parse(SPIN);
    let mut d = Dispatch::new([u32::MAX; 3], [1, 1, 1]);
    // Explicit, so that an environment override cannot turn this into a
    // dispatch that runs for ever.
    d.budget.max_work_items = DEFAULT_MAX_WORK_ITEMS;
    assert_eq!(d.workgroup_count(), u64::MAX, "the count saturates");
    let items = u128::from(u32::MAX).pow(3);
    assert_eq!(d.work_items(), items);
    for (name, e) in engines() {
        let out = run_on(e.as_ref(), &k, &d, &[], &[], true);
        let kind = out.fault.map(|f| f.kind);
        assert_eq!(
            kind,
            Some(FaultKind::Dispatch(DispatchError::TooManyWorkItems {
                items,
                limit: DEFAULT_MAX_WORK_ITEMS,
            })),
            "{name}"
        );
    }
}

/// Runs `d` on `e` on another thread and returns its result, failing the test
/// (instead of hanging it) if the dispatch does not end within two minutes:
/// the budgets under test are 200 ms or less, so the bound never decides a
/// passing run.
fn run_bounded(
    name: &str,
    e: Box<dyn Engine + Send + Sync>,
    k: &Kernel,
    d: &Dispatch,
    before_wait: impl FnOnce(),
) -> Result<(), Fault> {
    let (tx, rx) = mpsc::channel();
    let (k, d) = (k.clone(), d.clone());
    std::thread::spawn(move || {
        let _ = tx.send(e.run(&k, &d, &wavejit_ir::NoGlobalMemory));
    });
    before_wait();
    rx.recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("{name}: the dispatch did not stop within 120 s"))
}

#[test]
fn the_time_limit_stops_a_huge_grid_on_every_engine() {
    let k = parse(SPIN);
    let mut d = Dispatch::new([u32::MAX, 1, 1], [64, 1, 1]);
    d.budget = Budget {
        time_limit: Some(Duration::from_millis(200)),
        max_work_items: u64::MAX,
        cancel: None,
    };
    for (name, e) in engines() {
        let f = run_bounded(&name, e, &k, &d, || {}).expect_err("the budget faults");
        assert_eq!(
            f.kind,
            FaultKind::Budget(BudgetExceeded::Time {
                limit: Duration::from_millis(200)
            }),
            "{name}"
        );
        assert_eq!(f.kernel, "spin");
        assert_eq!(
            (f.block, f.inst, f.guest_pc),
            (Block::from_u32(0), None, None)
        );
        assert_eq!(
            f.lane.local, [0; 3],
            "{name}: the first lane of a workgroup"
        );
        let text = f.to_string();
        assert!(
            text.contains("kernel `spin` stopped before workgroup (")
                && text.contains("time limit of 200 ms (WAVEJIT_DISPATCH_TIME_LIMIT_MS)"),
            "{name}: {text}"
        );
    }
}

#[test]
fn cancelling_stops_a_running_dispatch_on_every_engine() {
    let k = parse(SPIN);
    for (name, e) in engines() {
        let cancel = CancelFlag::new();
        let mut d = Dispatch::new([u32::MAX, 1, 1], [64, 1, 1]);
        d.budget = Budget {
            cancel: Some(cancel.clone()),
            ..Budget::unlimited()
        };
        // Cancelled while (or before) it runs: either way it must end with
        // the cancellation fault, never with success.
        let f = run_bounded(&name, e, &k, &d, || cancel.cancel()).expect_err("cancelled");
        assert_eq!(
            f.kind,
            FaultKind::Budget(BudgetExceeded::Cancelled),
            "{name}"
        );
        assert!(f.to_string().contains("dispatch cancelled"), "{f}");
    }
}

#[test]
fn an_exhausted_budget_faults_identically_before_the_first_workgroup() {
    let k = parse(MARK);
    let cancelled = CancelFlag::new();
    cancelled.cancel();
    let budgets = [
        (
            Budget {
                cancel: Some(cancelled),
                ..Budget::unlimited()
            },
            BudgetExceeded::Cancelled,
        ),
        (
            Budget {
                time_limit: Some(Duration::ZERO),
                ..Budget::unlimited()
            },
            BudgetExceeded::Time {
                limit: Duration::ZERO,
            },
        ),
    ];
    for (budget, exceeded) in budgets {
        let mut d = mark_dispatch(40, 16);
        d.budget = budget;
        let want = Fault {
            kernel: "mark".into(),
            block: Block::from_u32(0),
            inst: None,
            guest_pc: None,
            lane: LaneId {
                workgroup: [0; 3],
                local: [0; 3],
            },
            kind: FaultKind::Budget(exceeded),
        };
        for (name, e) in engines() {
            let out = run_on(e.as_ref(), &k, &d, &[0; 2560], &[], true);
            assert_eq!(out.fault.as_ref(), Some(&want), "{name}");
            assert!(out.memory.iter().all(|&b| b == 0), "{name}: a lane ran");
        }
    }
}

#[test]
fn the_default_budget_is_thirty_seconds_and_2_to_the_32_work_items() {
    // The process environment of the test run decides `from_env`; CI sets
    // neither variable.
    if std::env::var_os(wavejit_ir::dispatch::TIME_LIMIT_ENV).is_some()
        || std::env::var_os(wavejit_ir::dispatch::MAX_WORK_ITEMS_ENV).is_some()
    {
        eprintln!("skipped: a budget variable is set");
        return;
    }
    let b = Dispatch::new([1, 1, 1], [1, 1, 1]).budget;
    assert_eq!(b.time_limit, Some(Duration::from_secs(30)));
    assert_eq!(b.max_work_items, 1 << 32);
    assert_eq!(b.cancel, None);
}
