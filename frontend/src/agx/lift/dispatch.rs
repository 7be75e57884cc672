//! Host side of a lifted AGX dispatch (agx.md §8): grid, threadgroup size, the
//! uniform file with buffer addresses (`buffer(i)` → `u(2i)_u(2i+1)`), and the IR
//! uniform bytes a lifted kernel reads.

use wavejit_ir::{Dispatch, DispatchShape};

use super::error::LiftError;
use super::{GRID_OFFSET, UNIFORM_FILE_ADDR_OFFSET, UNIFORM_FILE_BYTES, UNIFORM_SPACE_BYTES};

/// 16-bit halves in the uniform file (u0l .. u255h).
pub const UNIFORM_HALVES: usize = 512;

/// The grid of an AGX dispatch: what a kernel lifted for one grid
/// ([`super::LiftConfig::grid`]) takes as constants.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgxGrid {
    /// Total threads along x, y, z.
    pub threads: [u32; 3],
    pub threadgroup_size: [u32; 3],
}

impl AgxGrid {
    /// The IR dispatch's shape: whole threadgroups covering the threads.
    pub fn shape(&self) -> DispatchShape {
        DispatchShape {
            num_workgroups: [0, 1, 2]
                .map(|d| self.threads[d].div_ceil(self.threadgroup_size[d].max(1))),
            workgroup_size: self.threadgroup_size,
        }
    }
}

/// One AGX compute dispatch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgxDispatch {
    /// Total threads along x, y, z (need not be a multiple of the threadgroup size:
    /// lanes past the grid never run).
    pub grid_threads: [u32; 3],
    pub threadgroup_size: [u32; 3],
    /// The uniform file, u0l first.
    pub uniforms: Vec<u16>,
}

impl AgxDispatch {
    pub fn new(grid_threads: [u32; 3], threadgroup_size: [u32; 3]) -> AgxDispatch {
        AgxDispatch {
            grid_threads,
            threadgroup_size,
            uniforms: vec![0; UNIFORM_HALVES],
        }
    }

    /// Its grid (for [`super::LiftConfig::grid`]).
    pub fn grid(&self) -> AgxGrid {
        AgxGrid {
            threads: self.grid_threads,
            threadgroup_size: self.threadgroup_size,
        }
    }

    /// A dispatch of `groups` whole threadgroups.
    pub fn from_threadgroups(groups: [u32; 3], threadgroup_size: [u32; 3]) -> AgxDispatch {
        let grid = [0, 1, 2].map(|d| groups[d].saturating_mul(threadgroup_size[d]));
        AgxDispatch::new(grid, threadgroup_size)
    }

    /// Binds buffer `i` at `addr`: the 64-bit address goes to `u(2i)_u(2i+1)`.
    pub fn bind_buffer(&mut self, index: usize, addr: u64) -> Result<(), LiftError> {
        if index >= UNIFORM_HALVES / 4 {
            return Err(LiftError::Config(format!(
                "buffer {index} does not fit the uniform file (at most {})",
                UNIFORM_HALVES / 4
            )));
        }
        for k in 0..4 {
            self.uniforms[4 * index + k] = (addr >> (16 * k)) as u16;
        }
        Ok(())
    }

    /// A dispatch with buffers 0.. bound in order.
    pub fn with_buffers(
        grid_threads: [u32; 3],
        threadgroup_size: [u32; 3],
        buffers: &[u64],
    ) -> Result<AgxDispatch, LiftError> {
        let mut d = AgxDispatch::new(grid_threads, threadgroup_size);
        for (i, &a) in buffers.iter().enumerate() {
            d.bind_buffer(i, a)?;
        }
        Ok(d)
    }

    /// Sets the 32-bit uniform `u<reg>`.
    pub fn set_u32(&mut self, reg: usize, value: u32) -> Result<(), LiftError> {
        if 2 * reg + 1 >= UNIFORM_HALVES {
            return Err(LiftError::Config(format!("uniform u{reg} does not exist")));
        }
        self.uniforms[2 * reg] = value as u16;
        self.uniforms[2 * reg + 1] = (value >> 16) as u16;
        Ok(())
    }

    /// The uniform file as little-endian bytes (1024).
    pub fn uniform_file_bytes(&self) -> Vec<u8> {
        let mut out: Vec<u8> = self.uniforms.iter().flat_map(|h| h.to_le_bytes()).collect();
        out.resize(UNIFORM_FILE_BYTES as usize, 0);
        out
    }

    /// Replaces the uniform file with bytes (e.g. read back after a preamble).
    pub fn set_uniform_file_bytes(&mut self, bytes: &[u8]) {
        self.uniforms = bytes
            .chunks_exact(2)
            .take(UNIFORM_HALVES)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        self.uniforms.resize(UNIFORM_HALVES, 0);
    }

    fn uniform_space(&self, grid: [u32; 3], file_addr: u64) -> Vec<u8> {
        let mut u = self.uniform_file_bytes();
        u.resize(UNIFORM_SPACE_BYTES as usize, 0);
        for (d, g) in grid.iter().enumerate() {
            let at = GRID_OFFSET as usize + 4 * d;
            u[at..at + 4].copy_from_slice(&g.to_le_bytes());
        }
        let at = UNIFORM_FILE_ADDR_OFFSET as usize;
        u[at..at + 8].copy_from_slice(&file_addr.to_le_bytes());
        u
    }

    /// The IR dispatch of the main kernel: ⌈grid / threadgroup⌉ workgroups, waves of
    /// 32 lanes (SIMD-groups).
    pub fn dispatch(&self) -> Result<Dispatch, LiftError> {
        if self.threadgroup_size.contains(&0) {
            return Err(LiftError::Config(
                "threadgroup size has a zero dimension".into(),
            ));
        }
        let groups = [0, 1, 2].map(|d| self.grid_threads[d].div_ceil(self.threadgroup_size[d]));
        let mut d = Dispatch::new(groups, self.threadgroup_size);
        d.wave_size = 32;
        d.uniforms = self.uniform_space(self.grid_threads, 0);
        Ok(d)
    }

    /// The IR dispatch of a preamble lifted with `Mode::Preamble`: one lane, whose
    /// uniform file is the 1024 bytes at global `file_addr` (fill them with
    /// [`AgxDispatch::uniform_file_bytes`] before, read them back with
    /// [`AgxDispatch::set_uniform_file_bytes`] after).
    pub fn preamble_dispatch(&self, file_addr: u64) -> Dispatch {
        let mut d = Dispatch::new([1, 1, 1], [1, 1, 1]);
        d.wave_size = 32;
        d.uniforms = self.uniform_space([1, 1, 1], file_addr);
        d
    }
}
