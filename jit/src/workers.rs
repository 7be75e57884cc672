//! The threads a dispatch runs on: the caller's and a pool's.
//!
//! A [`Jit`](crate::Jit) keeps its other worker threads alive between
//! dispatches: starting a thread and having it run on another core costs about
//! 50 us on a 2-vCPU machine (the time of 2^17 saxpy lanes), waking a pooled
//! one about 9 us, and one still spinning from the last dispatch nothing.

use std::mem::ManuallyDrop;

use rayon_core::{ThreadPool, ThreadPoolBuilder};

/// The worker threads beside a dispatch's calling thread, owned by the process
/// that started them.
pub struct Pool {
    /// The process that started the threads: a child made by `fork` has none
    /// of them (only the forking thread is copied), so it must not wait for
    /// them, nor stop them on drop (their locks may have been held at the fork).
    pid: u32,
    threads: ManuallyDrop<ThreadPool>,
}

impl Pool {
    /// `count` threads, or `None` when the system refuses them.
    pub fn start(count: usize) -> Option<Pool> {
        let threads = ThreadPoolBuilder::new()
            .num_threads(count)
            .thread_name(|i| format!("wavejit-jit-{i}"))
            .build()
            .ok()?;
        Some(Pool {
            pid: std::process::id(),
            threads: ManuallyDrop::new(threads),
        })
    }

    /// The threads, unless this process is a fork of the one that started them.
    pub fn threads(&self) -> Option<&ThreadPool> {
        (self.pid == std::process::id()).then_some(&*self.threads)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if self.pid == std::process::id() {
            // SAFETY: dropped once, here; `threads` is not used after.
            unsafe { ManuallyDrop::drop(&mut self.threads) };
        }
        // In a forked child the pool's bookkeeping is leaked (a few hundred
        // bytes): its threads do not exist there.
    }
}

/// The threads one dispatch may use: how many (the caller's included), and
/// the pool of the others (`None`: each dispatch spawns its helpers).
#[derive(Clone, Copy)]
pub struct Workers<'a> {
    pub threads: usize,
    pub pool: Option<&'a ThreadPool>,
}

impl Workers<'_> {
    /// Runs `worker` on `threads` threads, the caller's one of them; returns
    /// when every copy has returned.
    pub fn run(&self, threads: usize, worker: &(impl Fn() + Sync)) {
        match self.pool {
            Some(pool) => pool.in_place_scope(|scope| {
                for _ in 1..threads {
                    scope.spawn(|_| worker());
                }
                worker();
            }),
            None => std::thread::scope(|scope| {
                for _ in 1..threads {
                    scope.spawn(worker);
                }
                worker();
            }),
        }
    }
}
