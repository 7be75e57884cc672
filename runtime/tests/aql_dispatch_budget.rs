//! Issue 14.5 on AQL: a dispatch over the work-item budget or past the time
//! budget fails its queue with an error status; destroying a queue while a
//! dispatch runs for ever returns, from the Rust API and through
//! `wj_aql_queue_destroy` while another thread is inside
//! `wj_aql_queue_process`. Budgets are set in the agent configuration; no test
//! waits for the 30 s default.

mod aql_support;

use std::ptr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use aql_support::*;
use wavejit_ir::dispatch::DEFAULT_MAX_WORK_ITEMS;
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Budget, Engine};
use wavejit_jit::Jit;
use wavejit_runtime::aql::ffi::*;
use wavejit_runtime::aql::{
    Agent, AgentConfig, ArgAbi, CodeObject, HsaQueue, Isa, KernelObject, Packet, Processing,
    QueueError, Signal, Status,
};

/// 100 loop trips per work-item and no memory access: a huge grid of it never
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

/// An interpreter agent and a JIT agent with `budget`.
fn agents_with(budget: Budget) -> Vec<(&'static str, Agent)> {
    let engines: [(&str, Arc<dyn Engine + Send + Sync>); 2] = [
        ("interp", Arc::new(Interpreter)),
        ("jit", Arc::new(Jit::default())),
    ];
    engines
        .into_iter()
        .map(|(name, engine)| {
            let cfg = AgentConfig {
                engine,
                budget: budget.clone(),
                ..AgentConfig::default()
            };
            (name, Agent::new(cfg))
        })
        .collect()
}

fn spin(agent: &Agent) -> KernelObject {
    agent
        .register_ir_text(SPIN, ArgAbi::UniformCopy, 0)
        .expect("spin registers")
}

/// The queue's error, waiting for it at most a minute (the budgets under test
/// are 200 ms or none: the bound never decides a passing run).
fn error_of(q: &wavejit_runtime::aql::Queue) -> QueueError {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(e) = q.error() {
            return e;
        }
        assert!(Instant::now() < deadline, "no queue error within 60 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_dispatch_of_2_to_the_96_work_items_fails_with_invalid_argument() {
    let budget = Budget {
        max_work_items: DEFAULT_MAX_WORK_ITEMS,
        ..Budget::unlimited()
    };
    for (name, agent) in agents_with(budget) {
        let k = spin(&agent);
        let q = queue(&agent, 4, Processing::Thread);
        let done = Signal::new(1);
        let p = dispatch(k, 3, [u32::MAX; 3], [1, 1, 1], 0, Some(&done));
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        let e = error_of(&q);
        assert_eq!(e.status, Status::INVALID_ARGUMENT, "{name}: {}", e.message);
        let items = u128::from(u32::MAX).pow(3);
        assert!(
            e.message.contains(&format!(
                "{items} work-items exceed the dispatch work-item budget of {DEFAULT_MAX_WORK_ITEMS}"
            )),
            "{name}: {}",
            e.message
        );
        assert_eq!(done.load(Ordering::Acquire), 1, "{name}: never completes");
    }
}

#[test]
fn a_dispatch_past_the_time_limit_fails_with_exception() {
    let budget = Budget {
        time_limit: Some(Duration::from_millis(200)),
        ..Budget::unlimited()
    };
    for (name, agent) in agents_with(budget) {
        let k = spin(&agent);
        let q = queue(&agent, 4, Processing::Thread);
        let done = Signal::new(1);
        let p = dispatch(k, 1, [u32::MAX, 1, 1], [64, 1, 1], 0, Some(&done));
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        let e = error_of(&q);
        assert_eq!(e.status, Status::EXCEPTION, "{name}: {}", e.message);
        assert!(
            e.message
                .contains("kernel `spin` stopped before workgroup (")
                && e.message.contains("time limit of 200 ms"),
            "{name}: {}",
            e.message
        );
        assert_eq!(done.load(Ordering::Acquire), 1, "{name}: never completes");
    }
}

#[test]
fn dropping_a_queue_during_an_endless_dispatch_returns() {
    for (name, agent) in agents_with(Budget::unlimited()) {
        let k = spin(&agent);
        let q = queue(&agent, 4, Processing::Thread);
        let done = Signal::new(1);
        let p = dispatch(k, 1, [u32::MAX, 1, 1], [64, 1, 1], 0, Some(&done));
        q.submit(&Packet::KernelDispatch(p)).expect("submit");
        let deadline = Instant::now() + Duration::from_secs(60);
        while q.active_dispatches() == 0 {
            assert!(Instant::now() < deadline, "{name}: never launched");
            std::thread::sleep(Duration::from_millis(1));
        }
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            drop(q);
            let _ = tx.send(());
        });
        rx.recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("{name}: dropping the queue did not return"));
        assert_eq!(
            done.load(Ordering::Acquire),
            1,
            "{name}: cancelled, not completed"
        );
    }
}

#[test]
fn wj_aql_queue_destroy_stops_a_dispatch_running_inside_wj_aql_queue_process() {
    for engine in [0u32, 1] {
        // SAFETY: every pointer is a live local or was returned by the ABI; the
        // queue pointer crosses threads as an integer and is used by the other
        // thread only through calls that look it up.
        unsafe {
            let mut cfg = std::mem::zeroed::<WjAgentConfig>();
            assert_eq!(wj_aql_agent_config_default(&mut cfg), 0);
            cfg.engine = engine;
            cfg.dispatch_time_limit_ms = 0;
            cfg.max_work_items = 0;
            let mut a = ptr::null_mut();
            assert_eq!(wj_aql_agent_create(&cfg, &mut a), 0);
            let desc = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, SPIN.as_bytes(), 0);
            let mut k = 0;
            assert_eq!(wj_aql_code_object_register(a, &desc, &mut k), 0);
            let mut q: *mut HsaQueue = ptr::null_mut();
            // Manual processing: the dispatch runs inside wj_aql_queue_process.
            assert_eq!(
                wj_aql_queue_create(a, 4, 1, 1, None, ptr::null_mut(), &mut q),
                0
            );
            let p = dispatch(KernelObject(k), 1, [u32::MAX, 1, 1], [64, 1, 1], 0, None);
            let bytes = p.to_bytes();
            assert_eq!(
                wj_aql_queue_submit(q, bytes.as_ptr().cast(), ptr::null_mut()),
                0
            );
            let (tx, rx) = mpsc::channel();
            let qa = q as usize;
            std::thread::spawn(move || {
                let mut outcome = u32::MAX;
                let st = wj_aql_queue_process(qa as *mut HsaQueue, &mut outcome);
                let _ = tx.send((st, outcome));
            });
            let deadline = Instant::now() + Duration::from_secs(60);
            while wj_aql_queue_load_read_index(q, 1) == 0 {
                assert!(Instant::now() < deadline, "engine {engine}: never launched");
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(wj_aql_queue_destroy(q), 0, "engine {engine}");
            let (st, outcome) = rx
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("engine {engine}: process did not return"));
            assert_eq!(st, 0, "engine {engine}");
            // WJ_AQL_OUTCOME_ERROR: the dispatch faulted with the cancellation.
            assert_eq!(outcome, 4, "engine {engine}");
            assert_eq!(wj_aql_agent_destroy(a), 0);
        }
    }
}

#[test]
fn the_c_agent_reports_its_budget_defaults_and_takes_every_isa() {
    // SAFETY: live locals and pointers returned by the ABI.
    unsafe {
        let mut cfg = std::mem::zeroed::<WjAgentConfig>();
        assert_eq!(wj_aql_agent_config_default(&mut cfg), 0);
        if std::env::var_os(wavejit_ir::dispatch::TIME_LIMIT_ENV).is_none()
            && std::env::var_os(wavejit_ir::dispatch::MAX_WORK_ITEMS_ENV).is_none()
        {
            assert_eq!(cfg.dispatch_time_limit_ms, 30_000);
            assert_eq!(cfg.max_work_items, 1 << 32);
        }
        let mut a = ptr::null_mut();
        assert_eq!(wj_aql_agent_create(&cfg, &mut a), 0);
        // Code that lifts on each ISA registers and loads: a dispatch would
        // fail with INVALID_ISA ("no ... backend") before issue 14.12.
        for (isa, code) in [
            (Isa::Rv32, isa_sample(Isa::Rv32)),
            (Isa::Ir3, isa_sample(Isa::Ir3)),
            (Isa::Agx, isa_sample(Isa::Agx)),
        ] {
            let desc = CodeObject::new(isa, ArgAbi::UniformCopy, &code, 24);
            let mut k = 0;
            assert_eq!(wj_aql_code_object_register(a, &desc, &mut k), 0, "{isa:?}");
            let mut q: *mut HsaQueue = ptr::null_mut();
            assert_eq!(
                wj_aql_queue_create(a, 4, 1, 1, None, ptr::null_mut(), &mut q),
                0
            );
            // No kernarg segment or buffers: the dispatch fails, but only
            // after its code object was loaded (lifted) by the ISA's backend
            // (the C client in kgsl-preload/tests runs all three for real).
            let p = dispatch(KernelObject(k), 1, [32, 1, 1], [32, 1, 1], 0, None);
            let bytes = p.to_bytes();
            assert_eq!(
                wj_aql_queue_submit(q, bytes.as_ptr().cast(), ptr::null_mut()),
                0
            );
            let mut outcome = u32::MAX;
            assert_eq!(wj_aql_queue_process(q, &mut outcome), 0);
            let mut status = 0;
            let mut text = [0u8; 256];
            assert_eq!(
                wj_aql_queue_get_error(q, &mut status, text.as_mut_ptr().cast(), text.len()),
                0
            );
            let text = String::from_utf8_lossy(&text);
            assert_ne!(status, Status::INVALID_ISA.0, "{isa:?}: {text}");
            assert!(!text.contains("backend"), "{isa:?}: {text}");
            assert!(
                text.contains("kernel"),
                "{isa:?}: the dispatch failed: {text}"
            );
            assert_eq!(wj_aql_queue_destroy(q), 0);
        }
        assert_eq!(wj_aql_agent_destroy(a), 0);
    }
}

fn isa_sample(isa: Isa) -> Vec<u8> {
    use wavejit_runtime::aql::isa::samples;
    match isa {
        Isa::Rv32 => samples::rv32_scale_add(),
        Isa::Ir3 => samples::ir3_axpy(),
        _ => samples::agx_add(),
    }
    .expect("sample encodes")
}
