//! Gang code calls its helper trampolines with 32-bit relative calls, so a
//! kernel's functions must sit within 2 GiB of each other however the host's
//! address space is laid out (tinygrad's test_cat under torch hit this: the
//! trampolines' page and the kernel's pages were mapped > 2 GiB apart, and
//! Cranelift panicked linking them). Here every gap of the mmap area is filled
//! but one page, and 4 GiB are reserved below it: a one-page code mapping
//! lands in that page, a larger one below the 4 GiB. The kernel must still
//! compile, run and give the interpreter's bits (before the fix: Cranelift's
//! relocation panic). One test per binary: it reshapes the address space.

mod support;

use support::{PROLOGUE, TestMemory, parse, u32s};
use wavejit_ir::{Dispatch, Engine};
use wavejit_jit::{Core, Jit, JitConfig};

/// A kernel long enough that its gang code spans many pages.
fn long_kernel() -> wavejit_ir::Kernel {
    let mut body = String::new();
    let mut last = 3;
    for i in 0..300 {
        let v = 100 + 2 * i;
        body.push_str(&format!(
            "  v{v} = const.i32 {}\n  v{} = imul.i32 v{last}, v{v}\n",
            2 * i + 3,
            v + 1
        ));
        last = v + 1;
    }
    parse(&format!(
        "kernel @long shared 0 private 0 {{\nblock0:\n{PROLOGUE}{body}  store.global.i32 v6, v{last}\n  exit\n}}\n"
    ))
}

/// Maps `len` bytes of inaccessible address space (no memory behind it), at
/// `at` exactly when given (failing rather than replacing a mapping).
fn reserve(at: Option<usize>, len: usize) -> Option<usize> {
    let (hint, fixed) = match at {
        Some(a) => (a as *mut libc::c_void, libc::MAP_FIXED_NOREPLACE),
        None => (std::ptr::null_mut(), 0),
    };
    // SAFETY: a fresh anonymous mapping of a range nothing else uses (the
    // kernel refuses an occupied one with MAP_FIXED_NOREPLACE).
    let p = unsafe {
        libc::mmap(
            hint,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | fixed,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as usize)
}

/// Fills every gap of the mmap area with reservations except one page at the
/// top, and reserves 4 GiB below the area: a one-page code mapping then lands
/// in that page, a larger one more than 4 GiB lower.
fn fragment_address_space() -> Vec<(usize, usize)> {
    const PAGE: usize = 4096;
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    let mut ranges: Vec<(usize, usize)> = maps
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_whitespace().next()?.split_once('-')?;
            Some((
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            ))
        })
        .collect();
    ranges.sort();
    // The mmap area: mappings above the heap (or above 2^46 without one).
    let heap_end = maps
        .lines()
        .find(|l| l.ends_with("[heap]"))
        .and_then(|l| usize::from_str_radix(l.split('-').nth(1)?.split(' ').next()?, 16).ok())
        .unwrap_or(1 << 46);
    // Up to the stack, without the gap below it (new mappings go below the
    // mmap base, under that gap).
    let stack = maps
        .lines()
        .find(|l| l.ends_with("[stack]"))
        .and_then(|l| usize::from_str_radix(l.split('-').next()?, 16).ok())
        .unwrap_or(usize::MAX);
    let area: Vec<(usize, usize)> = ranges
        .into_iter()
        .filter(|&(a, _)| a >= heap_end.max(1 << 40) && a < stack)
        .collect();
    let mut held = Vec::new();
    let mut hole_left = false;
    // Highest gaps first: the top one keeps a page free.
    for w in area.windows(2).rev() {
        let (gap_start, gap_end) = (w[0].1, w[1].0);
        if gap_end <= gap_start {
            continue;
        }
        let mut end = gap_end;
        if !hole_left && gap_end - gap_start >= PAGE {
            end -= PAGE;
            hole_left = true;
        }
        if end > gap_start
            && let Some(p) = reserve(Some(gap_start), end - gap_start)
        {
            held.push((p, end - gap_start));
        }
    }
    if let Some(p) = reserve(None, 4 << 30) {
        held.push((p, 4 << 30));
    }
    held
}

#[test]
fn a_kernels_code_stays_within_call_range_in_a_fragmented_address_space() {
    let k = long_kernel();
    let d = Dispatch::new([4, 1, 1], [64, 1, 1]);
    let want = {
        let mem = TestMemory::new(&[0; 1024], &[], true);
        wavejit_ir::interp::Interpreter
            .run(&k, &d, &mem)
            .expect("the interpreter runs it");
        u32s(&mem.rw_bytes())
    };
    let jit = Jit::new(JitConfig {
        core: Core::Gang,
        threads: 1,
        parallel_min_work: u64::MAX,
        optimize_after_lanes: 0,
        ..JitConfig::default()
    });
    let mem = TestMemory::new(&[0; 1024], &[], true);
    let held = fragment_address_space();
    let ran = jit.run(&k, &d, &mem);
    for (p, len) in held {
        // SAFETY: our own reservations, unused.
        unsafe { libc::munmap(p as *mut libc::c_void, len) };
    }
    ran.expect("the gang core runs it");
    assert_eq!(u32s(&mem.rw_bytes()), want);
    assert_eq!(jit.interpreter_fallbacks(), 0);
}
