//! Worker threads for kernel dispatches of a threaded queue. Dispatches with the
//! barrier bit clear may overlap (a waiting kernel must not block a later setter),
//! so the pool grows whenever no worker is idle; idle workers are reused.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    idle: usize,
    shutdown: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
pub(crate) struct WorkerPool {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl WorkerPool {
    /// Runs `job` on an idle worker, or on a new one. Gives the job back when the
    /// pool is shut down or no thread could be started (the caller runs it inline).
    /// Only one thread (the queue's processor) submits.
    pub(crate) fn submit(&self, job: Job) -> Option<Job> {
        let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.shutdown {
            return Some(job);
        }
        st.jobs.push_back(job);
        if st.idle >= st.jobs.len() {
            drop(st);
            self.shared.wake.notify_one();
            return None;
        }
        drop(st);
        let shared = self.shared.clone();
        match std::thread::Builder::new()
            .name("wj-aql-dispatch".into())
            .spawn(move || worker(&shared))
        {
            Ok(h) => {
                self.threads
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(h);
                None
            }
            Err(_) => {
                // Take it back unless a worker that became idle already did.
                let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
                st.jobs.pop_back()
            }
        }
    }

    /// Lets queued and running jobs finish, then joins every worker.
    pub(crate) fn shutdown(&self) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .shutdown = true;
        self.shared.wake.notify_all();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            // A panicking job already reported nothing useful; keep shutting down.
            let _ = t.join();
        }
    }
}

fn worker(shared: &Shared) {
    let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if let Some(job) = st.jobs.pop_front() {
            drop(st);
            job();
            st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            continue;
        }
        if st.shutdown {
            return;
        }
        st.idle += 1;
        st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        st.idle -= 1;
    }
}
