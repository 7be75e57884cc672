//! Barrier-AND / barrier-OR packets: dependency rules, observation semantics,
//! negative values, chains across queues, counting completion signals
//! (HSA-Runtime-Conformance `test_aql_barrier_*`).

mod aql_support;

use std::sync::atomic::Ordering;

use aql_support::*;
use wavejit_runtime::aql::{Outcome, Processing, Signal};

fn signals(n: usize, value: i64) -> Vec<Signal> {
    (0..n).map(|_| Signal::new(value)).collect()
}

#[test]
fn barrier_and_waits_for_every_dependency_manual() {
    let agent = interp_agent();
    let k = noop(&agent);
    for n in 1..=5 {
        let q = queue(&agent, 16, Processing::Manual);
        let deps = signals(n, 1);
        let done = Signal::new(1);
        let dep_refs: Vec<_> = deps.iter().map(Some).collect();
        q.submit(&barrier(true, &dep_refs, None)).expect("submit");
        q.submit(&one(k, Some(&done))).expect("submit");
        assert_eq!(q.process(), Outcome::Dependencies { id: 0 });
        for (i, d) in deps.iter().enumerate() {
            assert_eq!(
                done.load(Ordering::Acquire),
                1,
                "n={n}: released after {i} deps"
            );
            d.store(0, Ordering::Release);
            q.process();
        }
        assert_eq!(done.load(Ordering::Acquire), 0, "n={n}");
        assert_eq!(q.process(), Outcome::Idle);
        assert_eq!(read_index(&q), 2);
    }
}

#[test]
fn barrier_and_counts_dependencies_observed_at_zero_at_different_times() {
    let agent = interp_agent();
    let k = noop(&agent);
    let q = queue(&agent, 8, Processing::Manual);
    let (a, b) = (Signal::new(1), Signal::new(1));
    let done = Signal::new(1);
    q.submit(&barrier(true, &[Some(&a), Some(&b)], None))
        .expect("submit");
    q.submit(&one(k, Some(&done))).expect("submit");
    a.store(0, Ordering::Release);
    assert_eq!(q.process(), Outcome::Dependencies { id: 0 });
    a.store(1, Ordering::Release); // a was observed at 0: it stays satisfied
    b.store(0, Ordering::Release);
    assert_eq!(q.process(), Outcome::Idle);
    assert_eq!(done.load(Ordering::Acquire), 0);
}

#[test]
fn barrier_and_threaded_releases_on_last_dependency() {
    let agent = interp_agent();
    let k = noop(&agent);
    let q = queue(&agent, 16, Processing::Thread);
    let deps = signals(5, 1);
    let done = Signal::new(1);
    let dep_refs: Vec<_> = deps.iter().map(Some).collect();
    q.submit(&barrier(true, &dep_refs, None)).expect("submit");
    q.submit(&one(k, Some(&done))).expect("submit");
    for d in &deps[..4] {
        d.store(0, Ordering::Release);
    }
    stays(&done, 1);
    deps[4].store(0, Ordering::Release);
    wait_eq(&done, 0);
}

#[test]
fn barrier_or_completes_on_any_single_dependency() {
    let agent = interp_agent();
    let k = noop(&agent);
    for slot in 0..5 {
        let q = queue(&agent, 8, Processing::Thread);
        let deps = signals(5, 1);
        let done = Signal::new(1);
        let dep_refs: Vec<_> = deps.iter().map(Some).collect();
        q.submit(&barrier(false, &dep_refs, None)).expect("submit");
        q.submit(&one(k, Some(&done))).expect("submit");
        stays(&done, 1);
        deps[slot].store(0, Ordering::Release);
        wait_eq(&done, 0);
    }
}

#[test]
fn zero_handles_are_satisfied_in_and_and_never_in_or() {
    let agent = interp_agent();
    let q = queue(&agent, 8, Processing::Manual);
    let b1 = Signal::new(1);
    q.submit(&barrier(true, &[None, None, None, None, None], Some(&b1)))
        .expect("submit");
    assert_eq!(q.process(), Outcome::Idle);
    assert_eq!(b1.load(Ordering::Acquire), 0);

    let s = Signal::new(1);
    let b2 = Signal::new(1);
    q.submit(&barrier(false, &[None, Some(&s)], Some(&b2)))
        .expect("submit");
    assert_eq!(q.process(), Outcome::Dependencies { id: 1 });
    s.store(0, Ordering::Release);
    assert_eq!(q.process(), Outcome::Idle);
    assert_eq!(b2.load(Ordering::Acquire), 0);

    let b3 = Signal::new(1);
    q.submit(&barrier(false, &[None; 5], Some(&b3)))
        .expect("submit");
    assert_eq!(q.process(), Outcome::Dependencies { id: 2 });
    assert_eq!(q.process(), Outcome::Dependencies { id: 2 });
    assert_eq!(b3.load(Ordering::Acquire), 1);
}

#[test]
fn negative_dependency_makes_the_completion_signal_negative() {
    let agent = interp_agent();
    let k = noop(&agent);
    for and in [true, false] {
        for slot in 0..5 {
            let log = ErrorLog::default();
            let q = agent
                .create_queue(log.options(8, Processing::Manual))
                .expect("queue");
            let deps = signals(5, 1);
            let b = Signal::new(1);
            let after = Signal::new(1);
            let dep_refs: Vec<_> = deps.iter().map(Some).collect();
            q.submit(&barrier(and, &dep_refs, Some(&b)))
                .expect("submit");
            q.submit(&one(k, Some(&after))).expect("submit");
            assert_eq!(q.process(), Outcome::Dependencies { id: 0 });
            deps[slot].store(-1, Ordering::Release);
            assert_eq!(q.process(), Outcome::Idle, "and={and} slot={slot}");
            assert_eq!(b.load(Ordering::Acquire), -1, "and={and} slot={slot}");
            // No callback; the queue goes on.
            assert!(log.errors().is_empty());
            assert_eq!(after.load(Ordering::Acquire), 0);
        }
    }
}

/// Queue i: barrier-AND on signal i completing signal i+1.
fn chain(n: usize) -> (Vec<wavejit_runtime::aql::Queue>, Vec<Signal>) {
    let agent = interp_agent();
    let sigs = signals(n + 1, 1);
    let queues: Vec<_> = (0..n)
        .map(|i| {
            let q = queue(&agent, 4, Processing::Thread);
            q.submit(&barrier(true, &[Some(&sigs[i])], Some(&sigs[i + 1])))
                .expect("submit");
            q
        })
        .collect();
    (queues, sigs)
}

#[test]
fn chain_across_queues_releases_in_order() {
    let (_queues, sigs) = chain(4);
    stays(&sigs[4], 1);
    sigs[0].store(0, Ordering::Release);
    for s in &sigs[1..] {
        wait_eq(s, 0);
    }
}

#[test]
fn chain_across_queues_propagates_negative_values() {
    let (_queues, sigs) = chain(4);
    sigs[0].store(-1, Ordering::Release);
    for (i, s) in sigs.iter().enumerate().skip(1) {
        let v = s.wait(wavejit_runtime::aql::Condition::Lt, 0, Some(WAIT));
        assert!(v < 0, "signal {i} is {v}");
    }
}

#[test]
fn multiple_barriers_each_halt_the_queue() {
    let agent = interp_agent();
    let k = noop(&agent);
    let q = queue(&agent, 16, Processing::Manual);
    let deps = signals(7, 1);
    let bars = signals(7, 1);
    let kerns = signals(7, 1);
    for i in 0..7 {
        q.submit(&barrier(true, &[Some(&deps[i])], Some(&bars[i])))
            .expect("submit");
        q.submit(&one(k, Some(&kerns[i]))).expect("submit");
    }
    for i in 0..7 {
        assert_eq!(q.process(), Outcome::Dependencies { id: 2 * i as u64 });
        assert_eq!(bars[i].load(Ordering::Acquire), 1);
        deps[i].store(0, Ordering::Release);
        q.process();
        assert_eq!(bars[i].load(Ordering::Acquire), 0, "barrier {i}");
        assert_eq!(kerns[i].load(Ordering::Acquire), 0, "dispatch {i}");
        if i + 1 < 7 {
            assert_eq!(bars[i + 1].load(Ordering::Acquire), 1);
            assert_eq!(kerns[i + 1].load(Ordering::Acquire), 1);
        }
    }
    assert_eq!(q.process(), Outcome::Idle);
}

#[test]
fn counting_signal_is_decremented_not_zeroed() {
    let agent = interp_agent();
    let k = noop(&agent);
    let q = queue(&agent, 16, Processing::Manual);
    let count = Signal::new(5);
    let gate = Signal::new(1);
    for _ in 0..2 {
        q.submit(&one(k, Some(&count))).expect("submit");
    }
    q.submit(&barrier(true, &[Some(&gate)], Some(&count)))
        .expect("submit");
    for _ in 0..2 {
        q.submit(&one(k, Some(&count))).expect("submit");
    }
    assert_eq!(q.process(), Outcome::Dependencies { id: 2 });
    assert_eq!(count.load(Ordering::Acquire), 3);
    gate.store(0, Ordering::Release);
    assert_eq!(q.process(), Outcome::Idle);
    assert_eq!(count.load(Ordering::Acquire), 0);
}

#[test]
fn counting_signal_threaded() {
    let agent = interp_agent();
    let k = noop(&agent);
    let q = queue(&agent, 8, Processing::Thread);
    let count = Signal::new(20);
    for _ in 0..20 {
        q.submit(&one(k, Some(&count))).expect("submit");
    }
    wait_eq(&count, 0);
    stays(&count, 0);
}
