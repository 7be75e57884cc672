//! Captured submissions: the IBs of one GPU_COMMAND, the context's registers and
//! a snapshot of every live allocation (non-zero pages only), so a submission can
//! be replayed offline (`wavejit kgsl replay`) exactly as the client sent it.

use std::path::Path;

use wavejit_ir::GlobalMemory;

use super::pm4::{CommandProcessor, ComputeUnit, CpError, RunOutcome, Submission};
use crate::memory::{AddressSpace, MemError};

const MAGIC: &[u8; 8] = b"WJKGSLC1";
const PAGE: u64 = 4096;

/// One captured submission.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// (address, dwords) of each IB, in order.
    pub ibs: Vec<(u64, u32)>,
    /// Non-zero CP registers of the context before the submission.
    pub registers: Vec<(u32, u32)>,
    /// Live allocations: (start, length).
    pub regions: Vec<(u64, u64)>,
    /// Non-zero pages of those allocations: (address, bytes).
    pub pages: Vec<(u64, Vec<u8>)>,
}

/// Why a capture file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("not a wavejit KGSL capture (bad magic)")]
    Magic,
    #[error("capture truncated at byte {0}")]
    Truncated(usize),
    #[error("capture region {start:#x}+{len:#x}: {source}")]
    Region {
        start: u64,
        len: u64,
        #[source]
        source: MemError,
    },
    #[error("captured page at {0:#x} lies outside every captured region")]
    StrayPage(u64),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Capture {
    /// Snapshots `mem` and the registers for the IBs about to run.
    pub fn take(mem: &AddressSpace, ibs: Vec<(u64, u32)>, cp: &CommandProcessor) -> Capture {
        let mut c = Capture {
            ibs,
            registers: cp.regs.nonzero().collect(),
            ..Capture::default()
        };
        for r in mem.regions().unwrap_or_default() {
            c.regions.push((r.start, r.len));
            let mut off = 0;
            while off < r.len {
                let n = (r.len - off).min(PAGE) as usize;
                let mut buf = vec![0u8; n];
                if mem.read(r.start + off, &mut buf).is_ok() && buf.iter().any(|b| *b != 0) {
                    c.pages.push((r.start + off, buf));
                }
                off += PAGE;
            }
        }
        c
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = MAGIC.to_vec();
        let n = |o: &mut Vec<u8>, v: usize| o.extend_from_slice(&(v as u32).to_le_bytes());
        n(&mut o, self.ibs.len());
        for (a, d) in &self.ibs {
            o.extend_from_slice(&a.to_le_bytes());
            o.extend_from_slice(&d.to_le_bytes());
        }
        n(&mut o, self.registers.len());
        for (r, v) in &self.registers {
            o.extend_from_slice(&r.to_le_bytes());
            o.extend_from_slice(&v.to_le_bytes());
        }
        n(&mut o, self.regions.len());
        for (s, l) in &self.regions {
            o.extend_from_slice(&s.to_le_bytes());
            o.extend_from_slice(&l.to_le_bytes());
        }
        n(&mut o, self.pages.len());
        for (a, bytes) in &self.pages {
            o.extend_from_slice(&a.to_le_bytes());
            n(&mut o, bytes.len());
            o.extend_from_slice(bytes);
        }
        o
    }

    pub fn from_bytes(b: &[u8]) -> Result<Capture, CaptureError> {
        if b.get(..8) != Some(MAGIC.as_slice()) {
            return Err(CaptureError::Magic);
        }
        let mut r = Reader { b, at: 8 };
        let mut c = Capture::default();
        for _ in 0..r.u32()? {
            c.ibs.push((r.u64()?, r.u32()?));
        }
        for _ in 0..r.u32()? {
            c.registers.push((r.u32()?, r.u32()?));
        }
        for _ in 0..r.u32()? {
            c.regions.push((r.u64()?, r.u64()?));
        }
        for _ in 0..r.u32()? {
            let addr = r.u64()?;
            let len = r.u32()? as usize;
            c.pages.push((addr, r.bytes(len)?.to_vec()));
        }
        Ok(c)
    }

    pub fn save(&self, path: &Path) -> Result<(), CaptureError> {
        Ok(std::fs::write(path, self.to_bytes())?)
    }

    pub fn load(path: &Path) -> Result<Capture, CaptureError> {
        Capture::from_bytes(&std::fs::read(path)?)
    }

    /// Rebuilds the captured memory at its original guest addresses.
    pub fn memory(&self) -> Result<AddressSpace, CaptureError> {
        let mem = AddressSpace::new();
        for &(start, len) in &self.regions {
            mem.alloc_at(start, len)
                .map_err(|source| CaptureError::Region { start, len, source })?;
        }
        for (addr, bytes) in &self.pages {
            mem.write_bytes(*addr, bytes)
                .map_err(|_| CaptureError::StrayPage(*addr))?;
        }
        Ok(mem)
    }

    /// Runs the captured IBs against `mem` (from [`Capture::memory`]) on a fresh
    /// command processor holding the captured registers.
    pub fn replay(
        &self,
        mem: &AddressSpace,
        cu: &mut dyn ComputeUnit,
    ) -> Result<RunOutcome, CpError> {
        self.replay_on(&mut CommandProcessor::default(), mem, cu)
    }

    /// Like [`Capture::replay`] on a given command processor, whose state (e.g.
    /// the constants the IBs loaded) the caller can inspect afterwards.
    pub fn replay_on(
        &self,
        cp: &mut CommandProcessor,
        mem: &AddressSpace,
        cu: &mut dyn ComputeUnit,
    ) -> Result<RunOutcome, CpError> {
        for &(r, v) in &self.registers {
            cp.regs.set(r, v);
        }
        for &(addr, dwords) in &self.ibs {
            let mut sub = Submission::new(addr, dwords);
            if cp.run(&mut sub, mem, cu)? == RunOutcome::Parked {
                return Ok(RunOutcome::Parked);
            }
        }
        Ok(RunOutcome::Done)
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn bytes(&mut self, n: usize) -> Result<&[u8], CaptureError> {
        let s = self
            .b
            .get(self.at..self.at.saturating_add(n))
            .ok_or(CaptureError::Truncated(self.at))?;
        self.at += n;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, CaptureError> {
        let s = self.bytes(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn u64(&mut self) -> Result<u64, CaptureError> {
        Ok(u64::from(self.u32()?) | (u64::from(self.u32()?) << 32))
    }
}
