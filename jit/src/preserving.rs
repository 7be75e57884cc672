//! Helper calls from cold paths that clobber no register (x86-64).
//!
//! A call with the platform convention clobbers the caller-saved registers and
//! pins its arguments to fixed registers, so the register allocator must split
//! every value live across it (the loop counter, the lane's addresses, the
//! run's SSA values) around a call that almost never runs: the two cold
//! global-memory calls of the 30-op bench kernel cost 40 us of its 0.29 ms
//! compile. Instead the call site uses Cranelift's `preserve_all` convention
//! (no clobbers) with two arguments, the helper's arguments in memory and the
//! helper, and [`wj_call_preserving`] keeps that promise by saving every
//! register Cranelift allocates around the real call. `preserve_all` has no
//! return values: helpers write their result over their first argument.

/// A helper taking its arguments from (and writing its result to) `args`.
pub type MemHelper = unsafe extern "C" fn(args: *mut u64);

/// Calls `helper(args)` preserving the registers Cranelift allocates: the
/// System V caller-saved integer registers and xmm0-15 (the callee-saved ones
/// are kept by the helper itself).
///
/// # Safety
/// `helper` must be a [`MemHelper`] and `args` valid for it.
#[unsafe(naked)]
pub unsafe extern "C" fn wj_call_preserving(args: *mut u64, helper: MemHelper) {
    // On entry rsp = 8 mod 16; after rbp and nine pushes still 8 mod 16, so
    // 264 bytes (16 xmm registers + 8) align it for the call. `args` stays in
    // rdi for the helper.
    core::arch::naked_asm!(
        "push rbp",
        "mov rbp, rsp",
        "push rax",
        "push rcx",
        "push rdx",
        "push rsi",
        "push rdi",
        "push r8",
        "push r9",
        "push r10",
        "push r11",
        "sub rsp, 264",
        "movdqu [rsp], xmm0",
        "movdqu [rsp + 16], xmm1",
        "movdqu [rsp + 32], xmm2",
        "movdqu [rsp + 48], xmm3",
        "movdqu [rsp + 64], xmm4",
        "movdqu [rsp + 80], xmm5",
        "movdqu [rsp + 96], xmm6",
        "movdqu [rsp + 112], xmm7",
        "movdqu [rsp + 128], xmm8",
        "movdqu [rsp + 144], xmm9",
        "movdqu [rsp + 160], xmm10",
        "movdqu [rsp + 176], xmm11",
        "movdqu [rsp + 192], xmm12",
        "movdqu [rsp + 208], xmm13",
        "movdqu [rsp + 224], xmm14",
        "movdqu [rsp + 240], xmm15",
        "call rsi",
        "movdqu xmm0, [rsp]",
        "movdqu xmm1, [rsp + 16]",
        "movdqu xmm2, [rsp + 32]",
        "movdqu xmm3, [rsp + 48]",
        "movdqu xmm4, [rsp + 64]",
        "movdqu xmm5, [rsp + 80]",
        "movdqu xmm6, [rsp + 96]",
        "movdqu xmm7, [rsp + 112]",
        "movdqu xmm8, [rsp + 128]",
        "movdqu xmm9, [rsp + 144]",
        "movdqu xmm10, [rsp + 160]",
        "movdqu xmm11, [rsp + 176]",
        "movdqu xmm12, [rsp + 192]",
        "movdqu xmm13, [rsp + 208]",
        "movdqu xmm14, [rsp + 224]",
        "movdqu xmm15, [rsp + 240]",
        "add rsp, 264",
        "pop r11",
        "pop r10",
        "pop r9",
        "pop r8",
        "pop rdi",
        "pop rsi",
        "pop rdx",
        "pop rcx",
        "pop rax",
        "pop rbp",
        "ret",
    );
}
