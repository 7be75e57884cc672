//! The host CPU's features that decide lowerings (Cranelift emits a libcall
//! for an operation the CPU lacks, so the inline paths ask first). A leaf:
//! the planner and both code generators read it.

/// Whether the host has `feature` (`"fma"`, `"sse4.1"`; anything else: no).
pub(crate) fn host_has(feature: &str) -> bool {
    match feature {
        #[cfg(target_arch = "x86_64")]
        "fma" => std::arch::is_x86_feature_detected!("fma"),
        #[cfg(target_arch = "x86_64")]
        "sse4.1" => std::arch::is_x86_feature_detected!("sse4.1"),
        _ => false,
    }
}
