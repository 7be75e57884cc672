//! The host's floating-point control word (x86-64 MXCSR) while wavejit
//! computes.
//!
//! The semantics' fast paths and the JIT's inline code use host float
//! instructions and rely on IEEE behaviour: round to nearest even, no flush
//! of subnormal operands or results. The embedding process may have set
//! otherwise (a library built with `-ffast-math` turns on FTZ and DAZ for the
//! whole process), so `semantics::eval_pure`, the interpreter's dispatch and
//! each JIT batch run under [`Ieee`].
//!
//! A JIT loop whose every float rule the hardware's own flush reproduces
//! (`wavejit_jit`'s gang core: flush-keeping-sign inputs, which DAZ does, and
//! flush-before-rounding results, which FTZ does but for a result of exactly
//! the smallest normal, which the code notes for the exact redo) turns DAZ
//! and FTZ on for its duration with [`set_hardware_flush`]; what it calls
//! runs under [`Ieee`] again.

/// MXCSR bits: denormals are zero (inputs), flush to zero (results).
#[cfg(target_arch = "x86_64")]
const DAZ: u32 = 1 << 6;
#[cfg(target_arch = "x86_64")]
const FTZ: u32 = 1 << 15;
/// Every exception masked, round to nearest even, no DAZ or FTZ (the value
/// Linux starts a process with); the status flags below bit 6 are left alone.
#[cfg(target_arch = "x86_64")]
const IEEE_CONTROL: u32 = 0x1f80;
#[cfg(target_arch = "x86_64")]
const CONTROL_BITS: u32 = !0x3f;

#[cfg(target_arch = "x86_64")]
fn get() -> u32 {
    let mut m = 0u32;
    // SAFETY: stmxcsr stores four bytes to the given address.
    unsafe {
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut m, options(nostack, preserves_flags));
    }
    m
}

#[cfg(target_arch = "x86_64")]
fn set(m: u32) {
    // SAFETY: ldmxcsr reads four bytes; callers pass a valid MXCSR value
    // (reserved bits zero, as read by `get`). Not `readonly`: the compiler
    // then keeps memory accesses, and the float work on what they load, on
    // their side of the switch.
    unsafe {
        std::arch::asm!("ldmxcsr [{}]", in(reg) &m, options(nostack, preserves_flags));
    }
}

/// IEEE float behaviour on this thread until dropped, when the previous
/// control word comes back (only written when it differs).
#[must_use]
pub struct Ieee {
    #[cfg(target_arch = "x86_64")]
    saved: Option<u32>,
}

impl Ieee {
    pub fn enter() -> Ieee {
        Ieee::enter_flushing(false, false)
    }

    /// IEEE but for DAZ and FTZ as given (see [`set_hardware_flush`]).
    pub fn enter_flushing(daz: bool, ftz: bool) -> Ieee {
        #[cfg(target_arch = "x86_64")]
        {
            let m = get();
            let flush = if daz { DAZ } else { 0 } | if ftz { FTZ } else { 0 };
            let want = (m & !CONTROL_BITS) | IEEE_CONTROL | flush;
            if m == want {
                return Ieee { saved: None };
            }
            set(want);
            Ieee { saved: Some(m) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (daz, ftz);
            Ieee {}
        }
    }
}

impl Drop for Ieee {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        if let Some(m) = self.saved {
            // The status flags raised meanwhile are kept.
            set((m & CONTROL_BITS) | (get() & !CONTROL_BITS));
        }
    }
}

/// Whether [`set_hardware_flush`] can switch the hardware flush on here.
pub fn hardware_flush_available() -> bool {
    cfg!(target_arch = "x86_64")
}

/// Sets DAZ (subnormal operands read as zero) and FTZ (tiny results become
/// zero) on this thread; under [`Ieee`], both off is IEEE again.
pub fn set_hardware_flush(daz: bool, ftz: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        let m = get() & !(DAZ | FTZ);
        set(m | if daz { DAZ } else { 0 } | if ftz { FTZ } else { 0 });
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (daz, ftz);
}

/// The control bits now.
#[cfg(all(test, target_arch = "x86_64"))]
fn control() -> u32 {
    get() & CONTROL_BITS
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// Adds in a way the compiler cannot fold.
    fn add(a: f32, b: f32) -> f32 {
        std::hint::black_box(a) + std::hint::black_box(b)
    }

    fn mul(a: f32, b: f32) -> f32 {
        std::hint::black_box(a) * std::hint::black_box(b)
    }

    #[test]
    fn ieee_undoes_a_flushing_environment_and_restores_it() {
        let tiny = f32::from_bits(0x0000_0001);
        let outer = Ieee::enter();
        assert_eq!(control(), IEEE_CONTROL);
        set_hardware_flush(true, true);
        assert_eq!(control(), IEEE_CONTROL | DAZ | FTZ);
        // DAZ: the subnormal operand reads as zero; FTZ: so does the result.
        assert_eq!(add(tiny, 0.0).to_bits(), 0);
        assert_eq!(mul(f32::MIN_POSITIVE, 0.5).to_bits(), 0);
        {
            let _inner = Ieee::enter();
            assert_eq!(add(tiny, 0.0).to_bits(), 1);
        }
        assert_eq!(control(), IEEE_CONTROL | DAZ | FTZ);
        assert_eq!(add(tiny, 0.0).to_bits(), 0);
        set_hardware_flush(true, false);
        assert_eq!(control(), IEEE_CONTROL | DAZ);
        // DAZ alone: 2^-126 * 0.5 is an IEEE subnormal result.
        assert_eq!(mul(f32::MIN_POSITIVE, 0.5).to_bits(), 0x0040_0000);
        set_hardware_flush(false, false);
        assert_eq!(control(), IEEE_CONTROL);
        assert_eq!(add(tiny, 0.0).to_bits(), 1);
        drop(outer);
    }
}
