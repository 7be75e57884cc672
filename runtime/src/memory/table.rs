//! Entries of the live-allocation table and the bounded record of freed ranges.

use std::collections::BTreeMap;
use std::ptr::NonNull;

use memmap2::MmapMut;

pub(super) enum Backing {
    Owned(MmapMut),
    External(NonNull<u8>),
}

pub(super) struct Entry {
    pub len: u64,
    pub backing: Backing,
    pub writable: bool,
}

// SAFETY: the backing bytes are plain memory; concurrent guest accesses are the
// guest program's races, as on a GPU.
unsafe impl Send for Entry {}
unsafe impl Sync for Entry {}

impl Entry {
    pub fn host(&self) -> NonNull<u8> {
        match &self.backing {
            Backing::Owned(m) => NonNull::new(m.as_ptr().cast_mut()).unwrap_or(NonNull::dangling()),
            Backing::External(p) => *p,
        }
    }
}

/// Recently freed ranges, so that an access to one reports use-after-free rather
/// than "unmapped". Bounded: the oldest are forgotten first.
#[derive(Default)]
pub(super) struct FreedRanges {
    ranges: BTreeMap<u64, (u64, u64)>, // start -> (end, age)
    age: u64,
}

const FREED_REMEMBERED: usize = 4096;

impl FreedRanges {
    pub fn remember(&mut self, start: u64, end: u64) {
        self.age += 1;
        self.ranges.insert(start, (end, self.age));
        if self.ranges.len() > FREED_REMEMBERED
            && let Some((&oldest, _)) = self.ranges.iter().min_by_key(|(_, (_, age))| *age)
        {
            self.ranges.remove(&oldest);
        }
    }

    /// Drops records overlapping a range that is live again.
    pub fn forget(&mut self, start: u64, end: u64) {
        self.ranges.retain(|&s, &mut (e, _)| e <= start || s >= end);
    }

    pub fn contains(&self, addr: u64) -> bool {
        self.ranges
            .range(..=addr)
            .next_back()
            .is_some_and(|(_, &(end, _))| addr < end)
    }
}
