//! What one dispatch of a kernel looks like, independent of the engine running it,
//! and the limits every engine checks before running one ([`Dispatch::check`]:
//! the one place, so that all engines refuse a dispatch alike), and the budget
//! ([`Budget`]) engines check while one runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::entities::Block;
use crate::fault::{Fault, FaultKind, LaneId};
use crate::kernel::Kernel;

/// Default per-lane step limit (blocks entered); a runaway kernel faults after it.
pub const DEFAULT_STEP_LIMIT: u64 = 1 << 24;

/// Most lanes per workgroup (real APIs allow 1024-2048); engines hold a
/// workgroup's lane state at once.
pub const MAX_WORKGROUP_LANES: u32 = 1 << 16;
/// Most shared (workgroup) memory a kernel may declare, bytes (GPUs have
/// 32-64 KiB). The verifier refuses more.
pub const MAX_SHARED_BYTES: u32 = 1 << 20;
/// Most private memory per lane a kernel may declare, bytes (ir3's largest
/// PVT_MEM_PARAM is 130,560). The verifier refuses more.
pub const MAX_PRIVATE_BYTES: u32 = 1 << 20;
/// Most private memory of one workgroup's lanes together, bytes.
pub const MAX_WORKGROUP_PRIVATE_BYTES: u64 = 256 << 20;

/// Default wall-clock budget of one dispatch: 30 s (a CI job survives a
/// runaway grid; real GPU drivers reset a hung context after a few seconds,
/// and the emulator is slower than a GPU).
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(30);
/// Environment variable overriding [`Budget::time_limit`] by default:
/// milliseconds, decimal; 0 means no time limit.
pub const TIME_LIMIT_ENV: &str = "WAVEJIT_DISPATCH_TIME_LIMIT_MS";
/// Default work-item budget of one dispatch: 2^32 work-items (the 2^20 groups
/// of 64 that took 10 s are 2^26; a grid of 2^32 would take about 10 minutes).
pub const DEFAULT_MAX_WORK_ITEMS: u64 = 1 << 32;
/// Environment variable overriding [`Budget::max_work_items`] by default
/// (decimal; 0 means no limit).
pub const MAX_WORK_ITEMS_ENV: &str = "WAVEJIT_DISPATCH_MAX_WORK_ITEMS";

/// A flag another thread sets to stop a running dispatch (queue or context
/// destruction). Clones share the flag; equality and hashing are by identity.
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn new() -> CancelFlag {
        CancelFlag::default()
    }

    /// Makes every dispatch holding this flag fault at its next check.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl PartialEq for CancelFlag {
    fn eq(&self, other: &CancelFlag) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CancelFlag {}

impl std::hash::Hash for CancelFlag {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.0).hash(state);
    }
}

/// How much a whole dispatch may do before it faults, like the per-lane step
/// limit does for one lane. The work-item budget is checked before anything
/// runs ([`Dispatch::check`], so every engine refuses alike); time and
/// cancellation between workgroups (interpreter) or batches (JIT, every 16th),
/// so the lanes' hot path never looks at them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Budget {
    /// Wall-clock time after which the dispatch faults with
    /// [`BudgetExceeded::Time`]; `None`: no limit. Default
    /// [`DEFAULT_TIME_LIMIT`], or [`TIME_LIMIT_ENV`].
    pub time_limit: Option<Duration>,
    /// Most work-items (lanes of all workgroups) a dispatch may have; larger
    /// ones are refused with [`DispatchError::TooManyWorkItems`]. `u64::MAX`:
    /// no limit. Default [`DEFAULT_MAX_WORK_ITEMS`], or [`MAX_WORK_ITEMS_ENV`].
    pub max_work_items: u64,
    /// Set by whoever may destroy the dispatch's queue or context.
    pub cancel: Option<CancelFlag>,
}

/// Reads a decimal environment variable; 0 means "no limit" (`None`), and a
/// value that is not a number is ignored with a warning rather than taken as
/// no limit.
fn env_limit(name: &str, default: u64) -> Option<u64> {
    match std::env::var(name) {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(0) => None,
            Ok(n) => Some(n),
            Err(_) => {
                eprintln!("wavejit: {name}={v:?} is not a number; using {default}");
                Some(default)
            }
        },
        Err(_) => Some(default),
    }
}

impl Budget {
    /// No time or work-item limit and no cancel flag.
    pub fn unlimited() -> Budget {
        Budget {
            time_limit: None,
            max_work_items: u64::MAX,
            cancel: None,
        }
    }

    /// The defaults, with [`TIME_LIMIT_ENV`] and [`MAX_WORK_ITEMS_ENV`] read
    /// once per process (every dispatch starts from this).
    pub fn from_env() -> Budget {
        static DEFAULT: OnceLock<Budget> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                let ms = DEFAULT_TIME_LIMIT.as_millis() as u64;
                Budget {
                    time_limit: env_limit(TIME_LIMIT_ENV, ms).map(Duration::from_millis),
                    max_work_items: env_limit(MAX_WORK_ITEMS_ENV, DEFAULT_MAX_WORK_ITEMS)
                        .unwrap_or(u64::MAX),
                    cancel: None,
                }
            })
            .clone()
    }

    /// Starts the clock of a dispatch's time limit.
    pub fn start(&self) -> BudgetClock<'_> {
        BudgetClock {
            budget: self,
            deadline: self.time_limit.and_then(|t| Instant::now().checked_add(t)),
        }
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::from_env()
    }
}

/// Which running budget a dispatch exceeded ([`FaultKind::Budget`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum BudgetExceeded {
    #[error(
        "dispatch ran past its time limit of {} ms ({TIME_LIMIT_ENV})",
        limit.as_millis()
    )]
    Time { limit: Duration },
    #[error("dispatch cancelled (its queue or context is being destroyed)")]
    Cancelled,
}

/// A running dispatch's view of its [`Budget`].
#[derive(Clone, Debug)]
pub struct BudgetClock<'a> {
    budget: &'a Budget,
    deadline: Option<Instant>,
}

impl BudgetClock<'_> {
    /// Whether the dispatch must stop now (before its next workgroup or batch).
    pub fn exceeded(&self) -> Option<BudgetExceeded> {
        if self
            .budget
            .cancel
            .as_ref()
            .is_some_and(CancelFlag::is_cancelled)
        {
            return Some(BudgetExceeded::Cancelled);
        }
        match (self.deadline, self.budget.time_limit) {
            (Some(d), Some(limit)) if Instant::now() >= d => Some(BudgetExceeded::Time { limit }),
            _ => None,
        }
    }

    /// [`BudgetClock::exceeded`] as the fault every engine reports: kernel
    /// `kernel`, on the first lane of workgroup `workgroup` (the first one not
    /// started), at `block0` with no instruction.
    pub fn fault(&self, kernel: &Kernel, workgroup: [u32; 3]) -> Option<Fault> {
        self.exceeded().map(|e| Fault {
            kernel: kernel.name.clone(),
            block: Block::from_u32(0),
            inst: None,
            guest_pc: None,
            lane: LaneId {
                workgroup,
                local: [0; 3],
            },
            kind: FaultKind::Budget(e),
        })
    }
}

/// Why a dispatch is refused before any lane runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum DispatchError {
    #[error("wave size 0")]
    ZeroWaveSize,
    #[error(
        "workgroup of {}x{}x{} = {lanes} lanes exceeds the limit of {MAX_WORKGROUP_LANES} lanes",
        size[0], size[1], size[2]
    )]
    WorkgroupTooLarge { size: [u32; 3], lanes: u128 },
    #[error(
        "kernel declares {bytes} bytes of shared memory, over the limit of {MAX_SHARED_BYTES} bytes"
    )]
    SharedTooLarge { bytes: u32 },
    #[error(
        "kernel declares {bytes} bytes of private memory per lane, over the limit of \
         {MAX_PRIVATE_BYTES} bytes"
    )]
    PrivateTooLarge { bytes: u32 },
    #[error(
        "{lanes} lanes x {bytes} private bytes = {total} bytes per workgroup exceeds the limit \
         of {MAX_WORKGROUP_PRIVATE_BYTES} bytes"
    )]
    WorkgroupPrivateTooLarge { lanes: u32, bytes: u32, total: u64 },
    /// `items` is exact (a grid of up to 2^96 workgroups of at most
    /// `MAX_WORKGROUP_LANES`), so no grid wraps under the limit.
    #[error(
        "{items} work-items exceed the dispatch work-item budget of {limit} \
         ({MAX_WORK_ITEMS_ENV})"
    )]
    TooManyWorkItems { items: u128, limit: u64 },
}

/// A dispatch's grid: workgroups (RV32 blocks) and lanes per workgroup. A
/// kernel transformed for one shape ([`crate::transform::simplify_bits`]) is
/// valid for dispatches of that shape only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DispatchShape {
    pub num_workgroups: [u32; 3],
    pub workgroup_size: [u32; 3],
}

/// The shape and inputs of a dispatch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dispatch {
    /// Number of workgroups along x, y, z.
    pub workgroups: [u32; 3],
    /// Lanes per workgroup along x, y, z.
    pub workgroup_size: [u32; 3],
    /// Lanes per wave (cross-lane operations see one wave).
    pub wave_size: u32,
    /// Read-only bytes of the uniform address space.
    pub uniforms: Vec<u8>,
    /// Per-lane limit on blocks entered before a watchdog fault.
    pub step_limit: u64,
    /// Whole-dispatch limits (time, work-items, cancellation).
    pub budget: Budget,
}

impl Dispatch {
    pub fn new(workgroups: [u32; 3], workgroup_size: [u32; 3]) -> Dispatch {
        Dispatch {
            workgroups,
            workgroup_size,
            wave_size: 32,
            uniforms: Vec::new(),
            step_limit: DEFAULT_STEP_LIMIT,
            budget: Budget::default(),
        }
    }

    /// The dispatch's grid.
    pub fn shape(&self) -> DispatchShape {
        DispatchShape {
            num_workgroups: self.workgroups,
            workgroup_size: self.workgroup_size,
        }
    }

    /// Lanes per workgroup; saturates at `u32::MAX` (over every limit) instead
    /// of wrapping, e.g. to 0 for 65536x65536.
    pub fn lanes_per_workgroup(&self) -> u32 {
        u32::try_from(self.workgroup_lanes()).unwrap_or(u32::MAX)
    }

    fn workgroup_lanes(&self) -> u128 {
        self.workgroup_size.iter().map(|&n| u128::from(n)).product()
    }

    /// Work-items of the whole dispatch; exact for every workgroup within
    /// [`MAX_WORKGROUP_LANES`], saturating at `u128::MAX` beyond (2^96 x 2^96).
    pub fn work_items(&self) -> u128 {
        let groups: u128 = self.workgroups.iter().map(|&n| u128::from(n)).product();
        groups.saturating_mul(self.workgroup_lanes())
    }

    /// Checks the shape, and the memory `kernel` declares, against the limits
    /// above and the work-item budget. A dispatch with no lanes passes: nothing
    /// runs.
    pub fn check_shape(&self, kernel: &Kernel) -> Result<(), DispatchError> {
        let lanes = self.workgroup_lanes();
        if lanes == 0 || self.workgroup_count() == 0 {
            return Ok(());
        }
        if self.wave_size == 0 {
            return Err(DispatchError::ZeroWaveSize);
        }
        if lanes > u128::from(MAX_WORKGROUP_LANES) {
            let size = self.workgroup_size;
            return Err(DispatchError::WorkgroupTooLarge { size, lanes });
        }
        if kernel.shared_size > MAX_SHARED_BYTES {
            let bytes = kernel.shared_size;
            return Err(DispatchError::SharedTooLarge { bytes });
        }
        let bytes = kernel.private_size;
        if bytes > MAX_PRIVATE_BYTES {
            return Err(DispatchError::PrivateTooLarge { bytes });
        }
        let lanes = self.lanes_per_workgroup();
        let total = u64::from(lanes) * u64::from(bytes);
        if total > MAX_WORKGROUP_PRIVATE_BYTES {
            return Err(DispatchError::WorkgroupPrivateTooLarge {
                lanes,
                bytes,
                total,
            });
        }
        // Last: an oversized workgroup is named as such even in a large grid.
        let items = self.work_items();
        if items > u128::from(self.budget.max_work_items) {
            return Err(DispatchError::TooManyWorkItems {
                items,
                limit: self.budget.max_work_items,
            });
        }
        Ok(())
    }

    /// [`Dispatch::check_shape`] as the fault every engine reports: on the first
    /// lane at `block0`, no instruction, kind [`FaultKind::Dispatch`].
    pub fn check(&self, kernel: &Kernel) -> Result<(), Fault> {
        self.check_shape(kernel).map_err(|e| Fault {
            kernel: kernel.name.clone(),
            block: Block::from_u32(0),
            inst: None,
            guest_pc: None,
            lane: LaneId {
                workgroup: [0; 3],
                local: [0; 3],
            },
            kind: FaultKind::Dispatch(e),
        })
    }

    /// Workgroups of the dispatch; saturates at `u64::MAX` instead of
    /// overflowing (three counts of 2^32 - 1 make about 2^96).
    pub fn workgroup_count(&self) -> u64 {
        self.workgroups
            .iter()
            .fold(1u64, |n, &g| n.saturating_mul(u64::from(g)))
    }

    /// The local id (x, y, z) of a linear index in the workgroup.
    pub fn local_id(&self, index: u32) -> [u32; 3] {
        local_id_in(self.workgroup_size, index)
    }

    /// The workgroup id (x, y, z) of a linear workgroup number.
    pub fn workgroup_id(&self, index: u64) -> [u32; 3] {
        workgroup_id_in(self.workgroups, index)
    }
}

/// [`Dispatch::local_id`] for a workgroup of shape `size`.
pub(crate) fn local_id_in(size: [u32; 3], index: u32) -> [u32; 3] {
    let [sx, sy, _] = size;
    [index % sx, (index / sx) % sy, index / (sx * sy)]
}

/// [`Dispatch::workgroup_id`] for a grid of `groups`.
pub(crate) fn workgroup_id_in(groups: [u32; 3], index: u64) -> [u32; 3] {
    let [gx, gy, _] = groups.map(u64::from);
    [
        (index % gx) as u32,
        ((index / gx) % gy) as u32,
        (index / (gx * gy)) as u32,
    ]
}
