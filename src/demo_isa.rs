//! Demo helpers for the machine ISAs: an RV32 kernel through the MMIO device (the
//! register sequence a driver writes), and RV32, ir3 and AGX kernels through one
//! HSA AQL queue (`runtime::aql::isa` backends, argument ABIs documented there).

use std::time::{Duration, Instant};

use crate::runtime::aql::isa::{self, samples};
use crate::runtime::aql::{
    Agent, ArgAbi, CodeObject, Condition, Header, Isa, KernelDispatchPacket, KernelObject, Packet,
    PacketType, Processing, QueueOptions, Signal,
};
use crate::runtime::mmio::regs::{self, ctrl, status};
use crate::runtime::mmio::{DeviceConfig, GpgpuDevice};

type DemoError = Box<dyn std::error::Error>;

/// One demo kernel run: its inputs, what it wrote, what native Rust computes.
pub struct Run<T> {
    pub inputs: Vec<Vec<T>>,
    pub output: Vec<T>,
    pub expected: Vec<T>,
    /// From submission (DISPATCH write / doorbell) to completion, lift included.
    pub elapsed: Duration,
    /// Lanes launched (grid) and workgroup size.
    pub grid: u32,
    pub workgroup: u32,
}

/// VRAM layout of the MMIO run (core addresses).
const IN: u32 = 0x1000;
const OUT: u32 = 0x2000;

/// `out[i] = 3 * in[i] + 7` for `n` lanes (a multiple of 32) on the RV32 device:
/// enable, code to VRAM 0, argument block at [`samples::RV32_ARGS`], buffers,
/// kernel/grid/block registers, DISPATCH, then status and results.
pub fn mmio_rv32(n: u32) -> Result<Run<u32>, DemoError> {
    let code = samples::rv32_scale_add()?;
    let mut dev = GpgpuDevice::new(DeviceConfig::default())?;
    let bar0 = |dev: &mut GpgpuDevice, reg: u64, v: u32| dev.mmio_write(0, reg, 4, u64::from(v));
    let poke = |dev: &mut GpgpuDevice, addr: u32, v: u32| {
        dev.mmio_write(2, u64::from(addr), 4, u64::from(v))
    };
    bar0(&mut dev, regs::GLOBAL_CTRL, ctrl::ENABLE);
    for (i, w) in code.chunks_exact(4).enumerate() {
        poke(
            &mut dev,
            4 * i as u32,
            u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
        );
    }
    poke(&mut dev, samples::RV32_ARGS, IN);
    poke(&mut dev, samples::RV32_ARGS + 4, OUT);
    let input: Vec<u32> = (0..n).map(|i| i * 11 % 97).collect();
    for (i, &v) in input.iter().enumerate() {
        poke(&mut dev, IN + 4 * i as u32, v);
        poke(&mut dev, OUT + 4 * i as u32, 0xdead_beef);
    }
    bar0(&mut dev, regs::KERNEL_ADDR_LO, 0);
    bar0(&mut dev, regs::KERNEL_ADDR_HI, 0);
    // Stored for the record; the datasheet's cores never see it.
    bar0(&mut dev, regs::KERNEL_ARGS_LO, samples::RV32_ARGS);
    let grid = [n.div_ceil(32), 1, 1];
    let block = [32, 1, 1];
    for d in 0..3 {
        bar0(&mut dev, regs::GRID_DIM_X + 4 * d as u64, grid[d]);
        bar0(&mut dev, regs::BLOCK_DIM_X + 4 * d as u64, block[d]);
    }
    let t = Instant::now();
    bar0(&mut dev, regs::DISPATCH, 1);
    let elapsed = t.elapsed();
    let st = dev.mmio_read(0, regs::GLOBAL_STATUS, 4) as u32;
    let err = dev.mmio_read(0, regs::ERROR_STATUS, 4) as u32;
    if st & status::READY == 0 || err != 0 {
        let why = dev.last_fault().map(|f| f.to_string()).unwrap_or_default();
        return Err(format!(
            "RV32 device: GLOBAL_STATUS {st:#x}, ERROR_STATUS {err:#x} after DISPATCH {why}"
        )
        .into());
    }
    let output = (0..n)
        .map(|i| dev.mmio_read(2, u64::from(OUT + 4 * i), 4) as u32)
        .collect();
    let expected = input
        .iter()
        .map(|v| v.wrapping_mul(3).wrapping_add(7))
        .collect();
    Ok(Run {
        inputs: vec![input],
        output,
        expected,
        elapsed,
        grid: n,
        workgroup: 32,
    })
}

/// An agent (JIT engine) with the RV32, ir3 and AGX backends.
pub fn aql_agent() -> Agent {
    let agent = Agent::default();
    isa::register_all(&agent);
    agent
}

fn register(agent: &Agent, isa: Isa, code: &[u8], kernarg: u32) -> Result<KernelObject, DemoError> {
    let desc = CodeObject::new(isa, ArgAbi::UniformCopy, code, kernarg);
    Ok(agent.register_code(&desc, code)?)
}

/// Writes a 1-D kernel-dispatch packet to a threaded queue, rings the doorbell
/// and waits for the completion signal; returns the time that took.
fn dispatch(
    agent: &Agent,
    kernel: KernelObject,
    grid: u32,
    wg: u16,
    kernarg: u64,
) -> Result<Duration, DemoError> {
    let q = agent.create_queue(QueueOptions::new(16, Processing::Thread))?;
    let done = Signal::new(1);
    let p = KernelDispatchPacket {
        header: Header::new(PacketType::KernelDispatch, true).bits(),
        setup: 1,
        workgroup_size: [wg, 1, 1],
        grid_size: [grid, 1, 1],
        kernel_object: kernel.0,
        kernarg_address: kernarg,
        completion_signal: done.handle(),
        ..KernelDispatchPacket::default()
    };
    let t = Instant::now();
    q.submit(&Packet::KernelDispatch(p))?;
    let left = done.wait(Condition::Eq, 0, Some(Duration::from_secs(60)));
    let elapsed = t.elapsed();
    if let Some(e) = q.error() {
        return Err(format!("AQL queue error {:?}: {}", e.status, e.message).into());
    }
    if left != 0 {
        return Err("AQL dispatch did not complete within 60 s".into());
    }
    Ok(elapsed)
}

/// RV32 through AQL: `out[i] = 3 * in[i] + 7`, buffers and the argument block in
/// the 32-bit core address space (`alloc_at` below 4 GiB).
pub fn aql_rv32(agent: &Agent, n: u32, wg: u16) -> Result<Run<u32>, DemoError> {
    let mem = agent.memory();
    let k = register(agent, Isa::Rv32, &samples::rv32_scale_add()?, 8)?;
    let (input_at, out_at) = (0x10_0000u64, 0x20_0000u64);
    let args = mem.alloc_at(u64::from(samples::RV32_ARGS), 8)?;
    mem.alloc_at(input_at, 4 * u64::from(n))?;
    mem.alloc_at(out_at, 4 * u64::from(n))?;
    let input: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    mem.write_u32s(input_at, &input)?;
    mem.write_u32s(out_at, &vec![0xdead_beef; n as usize])?;
    mem.write_u32s(args, &[input_at as u32, out_at as u32])?;
    let elapsed = dispatch(agent, k, n, wg, args)?;
    let output = mem.read_u32s(out_at, n as usize)?;
    for a in [args, input_at, out_at] {
        mem.free(a)?;
    }
    let expected = input
        .iter()
        .map(|v| v.wrapping_mul(3).wrapping_add(7))
        .collect();
    Ok(Run {
        inputs: vec![input],
        output,
        expected,
        elapsed,
        grid: n,
        workgroup: u32::from(wg),
    })
}

/// ir3 through AQL: `out[i] = a[i] + 2 * b[i]` (f32); kernargs `out, a, b` = const
/// file c0.x..c1.y.
pub fn aql_ir3(agent: &Agent, n: u32) -> Result<Run<f32>, DemoError> {
    let mem = agent.memory();
    let k = register(agent, Isa::Ir3, &samples::ir3_axpy()?, 24)?;
    let bytes = 4 * u64::from(n);
    let [out, a, b] = [mem.alloc(bytes)?, mem.alloc(bytes)?, mem.alloc(bytes)?];
    let av: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let bv: Vec<f32> = (0..n).map(|i| 1.5 - i as f32).collect();
    mem.write_f32s(a, &av)?;
    mem.write_f32s(b, &bv)?;
    let args = mem.alloc(24)?;
    let kernarg: Vec<u8> = [out, a, b].iter().flat_map(|p| p.to_le_bytes()).collect();
    mem.write_bytes(args, &kernarg)?;
    let elapsed = dispatch(agent, k, n, samples::IR3_WORKGROUP, args)?;
    let output = mem.read_f32s(out, n as usize)?;
    for p in [out, a, b, args] {
        mem.free(p)?;
    }
    let expected = av
        .iter()
        .zip(&bv)
        .map(|(a, b)| b.mul_add(2.0, *a))
        .collect();
    Ok(Run {
        inputs: vec![av, bv],
        output,
        expected,
        elapsed,
        grid: n,
        workgroup: u32::from(samples::IR3_WORKGROUP),
    })
}

/// AGX through AQL: `out[i] = a[i] + b[i] + 7` (i32); kernarg qwords `a, b, out`
/// = buffers 0, 1, 2 in u0_u1, u2_u3, u4_u5.
pub fn aql_agx(agent: &Agent, n: u32, wg: u16) -> Result<Run<u32>, DemoError> {
    let mem = agent.memory();
    let k = register(agent, Isa::Agx, &samples::agx_add()?, 24)?;
    let bytes = 4 * u64::from(n);
    let [a, b, out] = [mem.alloc(bytes)?, mem.alloc(bytes)?, mem.alloc(bytes)?];
    let av: Vec<u32> = (0..n).map(|i| i * 100).collect();
    let bv: Vec<u32> = (0..n).map(|i| i ^ 0xffff).collect();
    mem.write_u32s(a, &av)?;
    mem.write_u32s(b, &bv)?;
    mem.write_u32s(out, &vec![0xdead_beef; n as usize])?;
    let args = mem.alloc(24)?;
    let kernarg: Vec<u8> = [a, b, out].iter().flat_map(|p| p.to_le_bytes()).collect();
    mem.write_bytes(args, &kernarg)?;
    let elapsed = dispatch(agent, k, n, wg, args)?;
    let output = mem.read_u32s(out, n as usize)?;
    for p in [out, a, b, args] {
        mem.free(p)?;
    }
    let expected = av
        .iter()
        .zip(&bv)
        .map(|(a, b)| a.wrapping_add(*b).wrapping_add(7))
        .collect();
    Ok(Run {
        inputs: vec![av, bv],
        output,
        expected,
        elapsed,
        grid: n,
        workgroup: u32::from(wg),
    })
}
