//! Signals: value operations, waits with every condition, timeouts returning the
//! observed value, cross-thread wake-ups, handles.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use wavejit_runtime::aql::{Condition, Signal};

#[test]
fn value_operations_return_previous_values() {
    let s = Signal::new(10);
    assert_eq!(s.load(Ordering::Acquire), 10);
    assert_eq!(s.add(5, Ordering::AcqRel), 10);
    assert_eq!(s.sub(3, Ordering::AcqRel), 15);
    assert_eq!(s.load(Ordering::Relaxed), 12);
    assert_eq!(s.and(0b1010, Ordering::AcqRel), 12);
    assert_eq!(s.load(Ordering::Relaxed), 8);
    assert_eq!(s.or(0b0011, Ordering::AcqRel), 8);
    assert_eq!(s.xor(0b0001, Ordering::AcqRel), 11);
    assert_eq!(s.load(Ordering::Relaxed), 10);
    assert_eq!(s.exchange(-4, Ordering::AcqRel), 10);
    assert_eq!(
        s.cas(0, 99, Ordering::AcqRel),
        -4,
        "failed CAS returns the value"
    );
    assert_eq!(s.load(Ordering::Relaxed), -4);
    assert_eq!(s.cas(-4, 99, Ordering::AcqRel), -4);
    assert_eq!(s.load(Ordering::Relaxed), 99);
    s.store(i64::MIN, Ordering::Release);
    assert_eq!(s.sub(1, Ordering::AcqRel), i64::MIN, "wrapping");
    assert_eq!(s.load(Ordering::Relaxed), i64::MAX);
    s.silent_store(3, Ordering::Relaxed);
    assert_eq!(s.load(Ordering::Relaxed), 3);
}

#[test]
fn conditions() {
    let s = Signal::new(5);
    let t = Some(Duration::ZERO);
    assert_eq!(s.wait(Condition::Eq, 5, t), 5);
    assert_eq!(s.wait(Condition::Ne, 4, t), 5);
    assert_eq!(s.wait(Condition::Lt, 6, t), 5);
    assert_eq!(s.wait(Condition::Gte, 5, t), 5);
    assert!(Condition::Lt.holds(-1, 0));
    assert!(!Condition::Lt.holds(0, 0));
    assert!(Condition::Gte.holds(0, 0));
    assert!(!Condition::Ne.holds(7, 7));
    assert_eq!(Condition::from_raw(3), Some(Condition::Gte));
    assert_eq!(Condition::from_raw(4), None);
}

/// rocrtst waits `LT 1` with a timeout and expects the unchanged value back.
#[test]
fn timeout_returns_the_observed_value() {
    let s = Signal::new(1);
    let start = Instant::now();
    let v = s.wait(Condition::Lt, 1, Some(Duration::from_millis(60)));
    let took = start.elapsed();
    assert_eq!(v, 1);
    assert!(took >= Duration::from_millis(60), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn wait_wakes_on_a_store_from_another_thread() {
    let s = Signal::new(1);
    let setter = s.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        setter.sub(1, Ordering::Release);
    });
    let start = Instant::now();
    let v = s.wait(Condition::Eq, 0, None);
    assert_eq!(v, 0);
    assert!(start.elapsed() < Duration::from_secs(5));
    t.join().expect("setter");
}

#[test]
fn many_waiters_and_decrementers() {
    const N: i64 = 64;
    let s = Signal::new(N);
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || s.wait(Condition::Eq, 0, Some(Duration::from_secs(20))))
        })
        .collect();
    let decs: Vec<_> = (0..4)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..N / 4 {
                    s.sub(1, Ordering::AcqRel);
                }
            })
        })
        .collect();
    for d in decs {
        d.join().expect("decrementer");
    }
    for w in waiters {
        assert_eq!(w.join().expect("waiter"), 0);
    }
}

#[test]
fn raw_writes_through_the_handle_are_seen_by_polling_waiters() {
    let s = Signal::new(1);
    let h = s.handle();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        // SAFETY: the handle is the live amd_signal_t; value at +8, aligned.
        let value = unsafe { std::sync::atomic::AtomicI64::from_ptr((h + 8) as *mut i64) };
        value.store(0, Ordering::Release);
    });
    assert_eq!(s.wait(Condition::Eq, 0, Some(Duration::from_secs(10))), 0);
    t.join().expect("writer");
}

#[test]
fn handles_are_unique_while_alive_and_forgotten_after() {
    let a = Signal::new(0);
    let b = Signal::new(0);
    assert_ne!(a.handle(), b.handle());
    assert_eq!(a.handle() % 64, 0);
    let again = Signal::from_handle(a.handle()).expect("live");
    again.store(9, Ordering::Release);
    assert_eq!(a.load(Ordering::Acquire), 9, "same signal");
    let h = b.handle();
    drop(b);
    assert!(Signal::from_handle(h).is_none());
}
