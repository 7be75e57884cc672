//! Clocks of the benchmarks: wall time next to CPU time (the machines are
//! shared, so wall time alone also measures the other users), medians of
//! alternated runs, and the load the figures were taken under.

use std::time::{Duration, Instant};

/// One timed run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub wall: Duration,
    /// CPU time of the calling thread: what a 1-thread run costs.
    pub thread_cpu: Duration,
    /// CPU time of every thread of the process (ended ones included): what a
    /// multi-thread run costs in total.
    pub process_cpu: Duration,
}

/// Which CPU clock a figure is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    Thread,
    Process,
}

impl Sample {
    pub fn cpu(&self, clock: Clock) -> Duration {
        match clock {
            Clock::Thread => self.thread_cpu,
            Clock::Process => self.process_cpu,
        }
    }
}

#[cfg(unix)]
fn cpu_clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

#[cfg(unix)]
fn cpu_now() -> (Duration, Duration) {
    (
        cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID),
        cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID),
    )
}

/// Without the POSIX CPU clocks, CPU time reads as wall time since the first call.
#[cfg(not(unix))]
fn cpu_now() -> (Duration, Duration) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let t = START.get_or_init(Instant::now).elapsed();
    (t, t)
}

/// Runs `f` once and times it on every clock.
pub fn sample<R>(f: impl FnOnce() -> R) -> (R, Sample) {
    let (t0, p0) = cpu_now();
    let w0 = Instant::now();
    let r = f();
    let wall = w0.elapsed();
    let (t1, p1) = cpu_now();
    (
        r,
        Sample {
            wall,
            thread_cpu: t1.saturating_sub(t0),
            process_cpu: p1.saturating_sub(p0),
        },
    )
}

/// Median of each clock on its own (the upper middle for an even count).
pub fn median(samples: &[Sample]) -> Sample {
    fn mid(mut v: Vec<Duration>) -> Duration {
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    }
    Sample {
        wall: mid(samples.iter().map(|s| s.wall).collect()),
        thread_cpu: mid(samples.iter().map(|s| s.thread_cpu).collect()),
        process_cpu: mid(samples.iter().map(|s| s.process_cpu).collect()),
    }
}

/// Timed runs per variant in the quick report.
pub const REPS: usize = 5;

/// Untimed runs of a variant right before each of its timed runs last at least
/// this long (at least one run, at most [`MAX_WARM_RUNS`]). A native loop run
/// right after a JIT run takes about twice as long as in a loop of its own
/// (saxpy over 4 Mi floats: 2.5 against 1.2 ms, back to steady state only after
/// four to six runs), so without this, alternation would weaken whichever side
/// runs after the other.
pub const WARM: Duration = Duration::from_millis(10);
pub const MAX_WARM_RUNS: usize = 64;

/// Times `variants` variants (`run(i)` runs variant `i` once) in turn, `reps`
/// rounds (a, b, c, a, b, c, ...), so that a change of load or clock speed
/// during the measurement hits them alike; each timed run follows untimed runs
/// of the same variant for `warm` (see [`WARM`]), so that each is timed in the
/// steady state of repeated runs, not in the state the previous variant left.
/// Returns each variant's median; stops at the first failure.
pub fn alternated<E>(
    reps: usize,
    variants: usize,
    warm: Duration,
    mut run: impl FnMut(usize) -> Result<(), E>,
) -> Result<Vec<Sample>, E> {
    let mut samples = vec![Vec::with_capacity(reps); variants];
    for _ in 0..reps.max(1) {
        for (i, s) in samples.iter_mut().enumerate() {
            let start = Instant::now();
            for _ in 0..MAX_WARM_RUNS {
                run(i)?;
                if start.elapsed() >= warm {
                    break;
                }
            }
            let (r, t) = sample(|| run(i));
            r?;
            s.push(t);
        }
    }
    Ok(samples.iter().map(|s| median(s)).collect())
}

/// The 1-minute load average (`/proc/loadavg`), if the system tells it.
pub fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// `12.3 ms`-style duration with three significant figures.
pub fn short(d: Duration) -> String {
    let s = d.as_secs_f64();
    let (v, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else {
        (s * 1e6, "us")
    };
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn median_takes_each_clock_on_its_own() {
        let s = |w, t, p| Sample {
            wall: ms(w),
            thread_cpu: ms(t),
            process_cpu: ms(p),
        };
        let m = median(&[s(5, 1, 9), s(1, 2, 7), s(3, 3, 8)]);
        assert_eq!(m, s(3, 2, 8));
        assert_eq!(m.cpu(Clock::Thread), ms(2));
        assert_eq!(m.cpu(Clock::Process), ms(8));
    }

    #[test]
    fn alternated_runs_in_turn_each_timed_run_after_a_warm_one() {
        let mut order = String::new();
        let medians = alternated(3, 2, Duration::ZERO, |i| {
            order.push(if i == 0 { 'a' } else { 'b' });
            Ok::<(), ()>(())
        })
        .expect("no variant fails");
        assert_eq!(medians.len(), 2);
        assert_eq!(order, "aabbaabbaabb");
    }

    #[test]
    fn warm_up_runs_are_bounded() {
        let mut runs = 0;
        let medians = alternated(2, 1, Duration::from_secs(3600), |_| {
            runs += 1;
            Ok::<(), ()>(())
        })
        .expect("no variant fails");
        assert_eq!(medians.len(), 1);
        assert_eq!(runs, 2 * (MAX_WARM_RUNS + 1));
    }

    #[test]
    fn alternated_stops_at_a_failure() {
        let mut runs = 0;
        let r = alternated(5, 1, Duration::ZERO, |_| {
            runs += 1;
            if runs == 3 { Err("third run") } else { Ok(()) }
        });
        assert_eq!(r, Err("third run"));
        assert_eq!(runs, 3);
    }

    #[test]
    fn short_keeps_three_figures() {
        assert_eq!(short(Duration::from_micros(1234)), "1.23 ms");
        assert_eq!(short(Duration::from_micros(45_600)), "45.6 ms");
        assert_eq!(short(Duration::from_nanos(980)), "0.98 us");
        assert_eq!(short(Duration::from_millis(2500)), "2.50 s");
    }
}
