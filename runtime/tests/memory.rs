//! The checked address space: every refused access names its cause.

use wavejit_ir::{Access, AccessCause, AtomicOp, GlobalMemory};
use wavejit_runtime::{AddressSpace, MemError};

#[test]
fn alloc_is_identity_mapped_and_zeroed() {
    let mem = AddressSpace::new();
    let a = mem.alloc(64).unwrap();
    let p = mem.translate(a, 64, Access::Read).unwrap();
    assert_eq!(p.as_ptr() as u64, a, "GPU address equals host address");
    assert_eq!(mem.read_bytes(a, 64).unwrap(), vec![0u8; 64]);
    mem.write_u32s(a + 8, &[0xdead_beef, 7]).unwrap();
    assert_eq!(mem.read_u32s(a + 8, 2).unwrap(), vec![0xdead_beef, 7]);
    assert_eq!(
        mem.read_bytes(a + 8, 1).unwrap(),
        vec![0xef],
        "little-endian"
    );
}

#[test]
fn out_of_bounds_is_refused_at_the_first_byte_past_the_end() {
    let mem = AddressSpace::new();
    let a = mem.alloc(16).unwrap();
    assert!(mem.translate(a + 12, 4, Access::Read).is_ok());
    assert_eq!(
        mem.translate(a + 13, 4, Access::Read),
        Err(AccessCause::OutOfBounds)
    );
    assert_eq!(
        mem.translate(u64::MAX - 1, 4, Access::Read),
        Err(AccessCause::Unmapped)
    );
}

#[test]
fn freed_range_reports_use_after_free_at_once() {
    let mem = AddressSpace::new();
    let a = mem.alloc(4096).unwrap();
    mem.free(a).unwrap();
    assert_eq!(
        mem.translate(a + 100, 4, Access::Write),
        Err(AccessCause::UseAfterFree)
    );
    assert!(matches!(mem.free(a), Err(MemError::NotAllocated(x)) if x == a));
    assert!(mem.is_empty());
}

#[test]
fn guest_addresses_can_differ_from_host_addresses() {
    let mem = AddressSpace::new();
    mem.alloc_at(0x1000, 0x100).unwrap();
    mem.write_u32s(0x10fc, &[42]).unwrap();
    assert_eq!(mem.read_u32s(0x10fc, 1).unwrap(), vec![42]);
    assert!(matches!(
        mem.alloc_at(0x10f0, 0x100),
        Err(MemError::Overlap { start: 0x10f0, .. })
    ));
    assert_eq!(mem.allocation_of(0x1080), Some((0x1000, 0x100)));
    assert_eq!(mem.allocation_of(0x1100), None);
}

#[test]
fn read_only_registration_refuses_writes() {
    let mem = AddressSpace::new();
    let mut backing = vec![1u8, 2, 3, 4];
    let host = std::ptr::NonNull::new(backing.as_mut_ptr()).unwrap();
    // SAFETY: `backing` outlives `mem`'s use below and is freed from the table first.
    unsafe { mem.register(0x9000, host, 4, false).unwrap() };
    assert_eq!(mem.read_bytes(0x9000, 4).unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(
        mem.translate(0x9000, 4, Access::Write),
        Err(AccessCause::ReadOnly)
    );
    mem.free(0x9000).unwrap();
}

#[test]
fn atomics_return_old_value_and_check_alignment() {
    let mem = AddressSpace::new();
    let a = mem.alloc(16).unwrap();
    mem.write_u32s(a, &[5]).unwrap();
    assert_eq!(mem.atomic(a, 4, AtomicOp::Add, 3, 0).unwrap(), 5);
    assert_eq!(mem.atomic(a, 4, AtomicOp::CmpXchg, 8, 100).unwrap(), 8);
    assert_eq!(mem.read_u32s(a, 1).unwrap(), vec![100]);
    assert_eq!(
        mem.atomic(a + 2, 4, AtomicOp::Add, 1, 0),
        Err(AccessCause::Misaligned { align: 4 })
    );
}

#[test]
fn regions_snapshot_lists_live_allocations_in_order() {
    let mem = AddressSpace::new();
    mem.alloc_at(0x2000, 0x10).unwrap();
    mem.alloc_at(0x1000, 0x20).unwrap();
    let r = mem.regions().unwrap();
    assert_eq!(
        r.iter().map(|r| (r.start, r.len)).collect::<Vec<_>>(),
        vec![(0x1000, 0x20), (0x2000, 0x10)]
    );
}
