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

/// Timed runs per variant in the quick report (after one warm-up each).
pub const REPS: usize = 5;

/// Runs each of `variants` variants (`run(i)` runs variant `i`) once as a
/// warm-up, then `reps` rounds of all of them in turn (a, b, c, a, b, c, ...),
/// so that a change of load or clock speed during the measurement hits them
/// alike; returns each variant's median. Stops at the first failure.
pub fn alternated<E>(
    reps: usize,
    variants: usize,
    mut run: impl FnMut(usize) -> Result<(), E>,
) -> Result<Vec<Sample>, E> {
    for i in 0..variants {
        run(i)?;
    }
    let mut samples = vec![Vec::with_capacity(reps); variants];
    for _ in 0..reps.max(1) {
        for (i, s) in samples.iter_mut().enumerate() {
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
    fn alternated_runs_in_turn_after_one_warm_up_each() {
        let mut order = String::new();
        let medians = alternated(3, 2, |i| {
            order.push(if i == 0 { 'a' } else { 'b' });
            Ok::<(), ()>(())
        })
        .expect("no variant fails");
        assert_eq!(medians.len(), 2);
        assert_eq!(order, "abababab");
    }

    #[test]
    fn alternated_stops_at_a_failure() {
        let mut runs = 0;
        let r = alternated(5, 1, |_| {
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
