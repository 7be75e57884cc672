//! The native side of the IR workloads: inputs and outputs allocated once, so
//! that a timed run is the computation alone, in place, on as many threads as
//! the engine it is compared with.

use super::{kernels, simd};

/// Which native loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Twin {
    /// The plain loops of [`kernels`] (the compiler vectorizes what it can).
    Scalar,
    /// The 128-bit twins of [`simd`], at the JIT's vector width.
    Simd,
}

impl Twin {
    pub fn label(self) -> &'static str {
        match self {
            Twin::Scalar => "native",
            Twin::Simd => "simd",
        }
    }
}

/// The computation of an IR workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Task {
    Alu { rounds: usize },
    Saxpy { a: f32 },
    Divergent,
    Reduce,
}

/// Elements of x per thread: whole reduce groups, so no tree and no gang is
/// split between threads.
fn share(n: usize, threads: usize) -> usize {
    let groups = n.div_ceil(kernels::REDUCE_GROUP);
    groups.div_ceil(threads.max(1)).max(1) * kernels::REDUCE_GROUP
}

/// Runs `part(first, x, out)` over consecutive shares of `x` and `out` (`per`
/// elements of x for `per / ratio` of out), the first share on the calling
/// thread and one spawned thread per other share, as the JIT's workers are.
fn split<T: Send>(
    x: &[f32],
    out: &mut [T],
    threads: usize,
    ratio: usize,
    part: impl Fn(u32, &[f32], &mut [T]) + Sync,
) {
    let per = share(x.len(), threads);
    if threads <= 1 || per >= x.len() {
        part(0, x, out);
        return;
    }
    std::thread::scope(|scope| {
        let mut shares = x.chunks(per).zip(out.chunks_mut(per / ratio)).enumerate();
        let own = shares.next();
        for (k, (xs, ys)) in shares {
            let part = &part;
            scope.spawn(move || part((k * per) as u32, xs, ys));
        }
        if let Some((_, (xs, ys))) = own {
            part(0, xs, ys);
        }
    });
}

/// Preallocated native buffers of one workload.
pub struct Native {
    task: Task,
    x: Vec<f32>,
    /// Float output (saxpy accumulates into it).
    y: Vec<f32>,
    /// Integer output (ALU).
    bits: Vec<u32>,
}

impl Native {
    pub fn new(task: Task, x: Vec<f32>) -> Native {
        let n = x.len();
        let (y, bits) = match task {
            Task::Alu { .. } => (Vec::new(), vec![0; n]),
            Task::Saxpy { .. } | Task::Divergent => (vec![0.0; n], Vec::new()),
            Task::Reduce => (vec![0.0; n / kernels::REDUCE_GROUP], Vec::new()),
        };
        Native { task, x, y, bits }
    }

    pub fn task(&self) -> Task {
        self.task
    }

    pub fn x(&self) -> &[f32] {
        &self.x
    }

    /// One run of `twin` on `threads` threads, in place.
    pub fn run(&mut self, twin: Twin, threads: usize) {
        let x = &self.x;
        match (self.task, twin) {
            (Task::Alu { rounds }, Twin::Scalar) => {
                split(x, &mut self.bits, threads, 1, |f, x, y| {
                    kernels::alu_native_from(f, x, y, rounds)
                })
            }
            (Task::Alu { rounds }, Twin::Simd) => {
                split(x, &mut self.bits, threads, 1, |f, x, y| {
                    simd::alu_from(f, x, y, rounds)
                })
            }
            (Task::Saxpy { a }, Twin::Scalar) => split(x, &mut self.y, threads, 1, |_, x, y| {
                kernels::saxpy_native(a, x, y)
            }),
            (Task::Saxpy { a }, Twin::Simd) => {
                split(x, &mut self.y, threads, 1, |_, x, y| simd::saxpy(a, x, y))
            }
            (Task::Divergent, Twin::Scalar) => split(x, &mut self.y, threads, 1, |f, x, y| {
                kernels::divergent_native_from(f, x, y)
            }),
            (Task::Divergent, Twin::Simd) => split(x, &mut self.y, threads, 1, |f, x, y| {
                simd::divergent_from(f, x, y)
            }),
            (Task::Reduce, Twin::Scalar) => {
                split(x, &mut self.y, threads, kernels::REDUCE_GROUP, |_, x, s| {
                    kernels::reduce_native(x, s)
                })
            }
            (Task::Reduce, Twin::Simd) => {
                split(x, &mut self.y, threads, kernels::REDUCE_GROUP, |_, x, s| {
                    simd::reduce(x, s)
                })
            }
        }
    }

    /// Output back to zero (saxpy accumulates into it).
    pub fn reset(&mut self) {
        self.y.fill(0.0);
        self.bits.fill(0);
    }

    /// The output as little-endian bytes (what the device buffer holds).
    pub fn output_bytes(&self) -> Vec<u8> {
        match self.task {
            Task::Alu { .. } => self.bits.iter().flat_map(|v| v.to_le_bytes()).collect(),
            _ => self.y.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// Output bytes.
    pub fn output_len(&self) -> usize {
        4 * (self.y.len() + self.bits.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 7 * kernels::REDUCE_GROUP;

    fn tasks() -> [Task; 4] {
        [
            Task::Alu { rounds: 64 },
            Task::Saxpy { a: 2.5 },
            Task::Divergent,
            Task::Reduce,
        ]
    }

    #[test]
    fn shares_are_whole_reduce_groups() {
        assert_eq!(share(N, 1), N);
        assert_eq!(share(N, 2), 4 * 256);
        assert_eq!(share(300, 2), 256);
        assert_eq!(share(0, 2), 256);
    }

    #[test]
    fn every_twin_on_two_threads_gives_the_one_thread_scalar_bits() {
        for task in tasks() {
            let mut want = Native::new(task, super::super::inputs(N));
            want.run(Twin::Scalar, 1);
            // Twice for saxpy: it accumulates, so the second run reads the first.
            want.run(Twin::Scalar, 1);
            let want = want.output_bytes();
            for twin in [Twin::Scalar, Twin::Simd] {
                for threads in [1, 2, 3] {
                    let mut n = Native::new(task, super::super::inputs(N));
                    n.run(twin, threads);
                    n.run(twin, threads);
                    assert_eq!(
                        n.output_bytes(),
                        want,
                        "{task:?} {twin:?} {threads} threads"
                    );
                }
            }
        }
    }

    #[test]
    fn reset_zeroes_the_output() {
        let mut n = Native::new(Task::Saxpy { a: 2.5 }, super::super::inputs(N));
        n.run(Twin::Simd, 2);
        assert_ne!(n.output_bytes(), vec![0; 4 * N]);
        n.reset();
        assert_eq!(n.output_bytes(), vec![0; 4 * N]);
        assert_eq!(n.output_len(), 4 * N);
    }

    #[test]
    fn the_alu_hash_continues_across_shares() {
        let mut n = Native::new(Task::Alu { rounds: 1 }, vec![0.0; N]);
        n.run(Twin::Scalar, 2);
        let out = n.output_bytes();
        // Element 1024 is the second thread's first: h starts from its global
        // index, one round: h = 1024 * 1664525 + 1013904223, h ^= h >> 13.
        let h = 1024u32.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let want = 0.5f32.to_bits() ^ h ^ (h >> 13);
        assert_eq!(out[4 * 1024..4 * 1025], want.to_le_bytes());
    }
}
