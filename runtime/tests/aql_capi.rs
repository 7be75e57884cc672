//! The C ABI driven from Rust exactly as a C client would: agent, memory, code
//! object registration, queue creation with a C callback, raw packet writes into
//! the ring with the HSA publication protocol, doorbell, signal waits, errors.

use std::ffi::c_void;
use std::ptr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use wavejit_runtime::aql::ffi::*;
use wavejit_runtime::aql::{
    ArgAbi, CodeObject, Header, HsaQueue, Isa, KernelDispatchPacket, PacketType, Status,
};

const RELAXED: u32 = 0;
const ACQUIRE: u32 = 1;
const RELEASE: u32 = 2;
const ACQ_REL: u32 = 3;

/// out[global id] = global id * 3 for id < grid (partial workgroups).
const TRIPLE: &str = "kernel @triple {
block0:
  v0 = workgroup_id.x
  v1 = workgroup_size.x
  v2 = local_id.x
  v3 = imul.i32 v0, v1
  v4 = iadd.i32 v3, v2
  v5 = const.i32 3
  v6 = imul.i32 v4, v5
  v7 = const.i32 0
  v8 = load.uniform.i64 v7
  v9 = zext.i32.i64 v4
  v10 = const.i64 2
  v11 = shl.i64 v9, v10
  v12 = iadd.i64 v8, v11
  store.global.i32 v12, v6
  exit
}
";

static ERRORS: Mutex<Vec<(u32, usize, usize)>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_error(status: WjStatus, queue: *mut HsaQueue, data: *mut c_void) {
    ERRORS
        .lock()
        .expect("errors")
        .push((status, queue as usize, data as usize));
}

fn agent(engine: u32) -> *mut WjAgent {
    let mut cfg = WjAgentConfig {
        engine: 0,
        max_group_segment: 0,
        max_private_segment: 0,
        max_workgroup_size: 0,
        max_queue_size: 0,
        zero_size_is_noop: 0,
        step_limit: 0,
        dispatch_time_limit_ms: 0,
        max_work_items: 0,
    };
    // SAFETY: valid pointers to locals.
    unsafe {
        assert_eq!(wj_aql_agent_config_default(&mut cfg), 0);
        assert_eq!(cfg.max_workgroup_size, 1024);
        cfg.engine = engine;
        let mut a = ptr::null_mut();
        assert_eq!(wj_aql_agent_create(&cfg, &mut a), 0);
        a
    }
}

/// Writes `p` into the ring with plain stores, then publishes the first word with
/// a release store and rings the doorbell (what a C producer does).
///
/// # Safety
/// `q` is a live queue.
unsafe fn produce(q: *mut HsaQueue, p: &KernelDispatchPacket) -> u64 {
    // SAFETY: per the caller; the slot is reserved for us.
    unsafe {
        let id = wj_aql_queue_add_write_index(q, 1, ACQ_REL);
        while id >= wj_aql_queue_load_read_index(q, ACQUIRE) + u64::from((*q).size) {
            std::thread::yield_now();
        }
        let slot =
            ((*q).base_address as *mut u8).add(64 * (id & u64::from((*q).size - 1)) as usize);
        let bytes = p.to_bytes();
        // Body with plain stores...
        ptr::copy_nonoverlapping(bytes.as_ptr().add(4), slot.add(4), 60);
        // ...then the header word with release order.
        let first = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        AtomicU32::from_ptr(slot.cast::<u32>()).store(first, Ordering::Release);
        wj_aql_signal_store((*q).doorbell_signal, id as i64, RELEASE);
        id
    }
}

#[test]
fn c_client_dispatches_a_kernel_with_partial_workgroups() {
    for engine in [0, 1] {
        let a = agent(engine);
        // SAFETY: all pointers are live locals or values returned by the ABI.
        unsafe {
            let desc = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, TRIPLE.as_bytes(), 8);
            let mut kobj = 0;
            assert_eq!(wj_aql_code_object_register(a, &desc, &mut kobj), 0);
            assert_ne!(kobj, 0);

            let mut out: *mut c_void = ptr::null_mut();
            assert_eq!(wj_aql_memory_alloc(a, 4 * 128, &mut out), 0);
            ptr::write_bytes(out.cast::<u8>(), 0xff, 4 * 128);
            let mut args: *mut c_void = ptr::null_mut();
            assert_eq!(wj_aql_memory_alloc(a, 8, &mut args), 0);
            args.cast::<u64>().write(out as u64);

            let mut q: *mut HsaQueue = ptr::null_mut();
            assert_eq!(
                wj_aql_queue_create(a, 8, 0, 0, Some(on_error), ptr::null_mut(), &mut q),
                0
            );
            assert_eq!((*q).size, 8);
            assert_eq!((*q).features, 1);
            assert_eq!(wj_aql_queue_load_write_index(q, RELAXED), 0);

            let mut done = 0;
            assert_eq!(wj_aql_signal_create(1, &mut done), 0);
            let p = KernelDispatchPacket {
                header: Header::new(PacketType::KernelDispatch, true).bits(),
                setup: 1,
                workgroup_size: [16, 1, 1],
                grid_size: [100, 1, 1],
                kernel_object: kobj,
                kernarg_address: args as u64,
                completion_signal: done,
                ..KernelDispatchPacket::default()
            };
            assert_eq!(produce(q, &p), 0);
            let v = wj_aql_signal_wait(done, 0, 0, 20_000_000_000);
            assert_eq!(v, 0, "engine {engine}");
            let got = std::slice::from_raw_parts(out.cast::<u32>(), 128);
            for (i, &x) in got.iter().enumerate() {
                let want = if i < 100 { 3 * i as u32 } else { u32::MAX };
                assert_eq!(x, want, "engine {engine} cell {i}");
            }
            assert_eq!(wj_aql_queue_load_read_index(q, ACQUIRE), 1);

            let mut status = 1;
            let mut text = [0i8; 64];
            assert_eq!(
                wj_aql_queue_get_error(q, &mut status, text.as_mut_ptr(), 64),
                0
            );
            assert_eq!(status, 0);
            assert_eq!(text[0], 0);

            assert_eq!(wj_aql_signal_destroy(done), 0);
            assert_eq!(wj_aql_signal_destroy(done), Status::INVALID_SIGNAL.0);
            assert_eq!(wj_aql_queue_destroy(q), 0);
            assert_eq!(wj_aql_queue_destroy(q), Status::INVALID_QUEUE.0);
            assert_eq!(wj_aql_memory_free(a, out), 0);
            assert_eq!(wj_aql_memory_free(a, args), 0);
            assert_eq!(wj_aql_code_object_unregister(a, kobj), 0);
            assert_eq!(wj_aql_agent_destroy(a), 0);
            assert_eq!(wj_aql_agent_destroy(a), Status::INVALID_ARGUMENT.0);
        }
    }
}

#[test]
fn c_callback_gets_status_queue_and_data_and_the_error_text() {
    let a = agent(1);
    // SAFETY: pointers are live locals or ABI results.
    unsafe {
        let mut q: *mut HsaQueue = ptr::null_mut();
        let data = 0x5eed_usize as *mut c_void;
        assert_eq!(
            wj_aql_queue_create(a, 4, 1, 1, Some(on_error), data, &mut q),
            0
        );
        let mut done = 0;
        assert_eq!(wj_aql_signal_create(1, &mut done), 0);
        let p = KernelDispatchPacket {
            header: Header::new(PacketType::KernelDispatch, false).bits(),
            setup: 4,
            workgroup_size: [1, 1, 1],
            grid_size: [1, 1, 1],
            completion_signal: done,
            ..KernelDispatchPacket::default()
        };
        let mut id = 99;
        assert_eq!(
            wj_aql_queue_submit(q, p.to_bytes().as_ptr().cast(), &mut id),
            0
        );
        assert_eq!(id, 0);
        let mut outcome = 0;
        assert_eq!(wj_aql_queue_process(q, &mut outcome), 0);
        assert_eq!(outcome, 4, "ERROR");
        let seen: Vec<_> = ERRORS
            .lock()
            .expect("errors")
            .iter()
            .filter(|e| e.1 == q as usize)
            .cloned()
            .collect();
        assert_eq!(
            seen,
            vec![(Status::INCOMPATIBLE_ARGUMENTS.0, q as usize, 0x5eed)]
        );
        let mut status = 0;
        let mut text = [0u8; 16];
        assert_eq!(
            wj_aql_queue_get_error(q, &mut status, text.as_mut_ptr().cast(), text.len()),
            0
        );
        assert_eq!(status, Status::INCOMPATIBLE_ARGUMENTS.0);
        // Truncated to 15 bytes + NUL.
        assert_eq!(&text[..15], b"setup 0x4: dime");
        assert_eq!(text[15], 0);
        // Completion signal untouched; waits time out with the observed value.
        assert_eq!(wj_aql_signal_wait(done, 2, 1, 1_000_000), 1);
        assert_eq!(wj_aql_queue_destroy(q), 0);
        assert_eq!(wj_aql_signal_destroy(done), 0);
        assert_eq!(wj_aql_agent_destroy(a), 0);
    }
}

#[test]
fn c_signal_and_index_operations() {
    let a = agent(1);
    // SAFETY: pointers are live locals or ABI results.
    unsafe {
        let mut s = 0;
        assert_eq!(wj_aql_signal_create(10, &mut s), 0);
        assert_eq!(wj_aql_signal_load(s, ACQUIRE), 10);
        assert_eq!(wj_aql_signal_add(s, 5, ACQ_REL), 10);
        assert_eq!(wj_aql_signal_sub(s, 1, ACQ_REL), 15);
        assert_eq!(wj_aql_signal_and(s, 6, RELAXED), 14);
        assert_eq!(wj_aql_signal_or(s, 1, RELAXED), 6);
        assert_eq!(wj_aql_signal_xor(s, 2, RELAXED), 7);
        assert_eq!(wj_aql_signal_exchange(s, -3, ACQ_REL), 5);
        assert_eq!(wj_aql_signal_cas(s, -3, 4, ACQ_REL), -3);
        wj_aql_signal_silent_store(s, 8, RELAXED);
        assert_eq!(wj_aql_signal_load(s, RELAXED), 8);
        wj_aql_signal_store(s, 0, RELEASE);
        assert_eq!(wj_aql_signal_wait(s, 0, 0, u64::MAX), 0);
        // The handle is an amd_signal_t: value at +8.
        assert_eq!(((s + 8) as *const i64).read(), 0);
        assert_eq!(wj_aql_signal_destroy(s), 0);
        assert_eq!(wj_aql_signal_load(s, RELAXED), i64::MIN);

        let mut q: *mut HsaQueue = ptr::null_mut();
        assert_eq!(
            wj_aql_queue_create(a, 16, 0, 1, None, ptr::null_mut(), &mut q),
            0
        );
        assert_eq!(wj_aql_queue_add_write_index(q, 3, ACQ_REL), 0);
        assert_eq!(wj_aql_queue_cas_write_index(q, 3, 5, ACQ_REL), 3);
        assert_eq!(wj_aql_queue_cas_write_index(q, 3, 9, ACQ_REL), 5);
        wj_aql_queue_store_write_index(q, 0, RELEASE);
        assert_eq!(wj_aql_queue_load_write_index(q, ACQUIRE), 0);
        // The amd_queue_t offsets tinygrad uses: write index at 56, read at 128.
        wj_aql_queue_store_write_index(q, 7, RELEASE);
        assert_eq!(((q as usize + 56) as *const u64).read(), 7);
        assert_eq!(((q as usize + 128) as *const u64).read(), 0);
        wj_aql_queue_store_write_index(q, 0, RELEASE);
        assert_eq!(wj_aql_queue_inactivate(q), 0);
        let mut outcome = 0;
        assert_eq!(wj_aql_queue_process(q, &mut outcome), 0);
        assert_eq!(outcome, 5, "INACTIVE");
        assert_eq!(wj_aql_queue_destroy(q), 0);
        assert_eq!(wj_aql_queue_inactivate(q), Status::INVALID_QUEUE.0);

        let mut bad_q: *mut HsaQueue = ptr::null_mut();
        assert_eq!(
            wj_aql_queue_create(a, 3, 0, 1, None, ptr::null_mut(), &mut bad_q),
            Status::INVALID_ARGUMENT.0
        );
        let bad = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, b"", 0);
        let mut k = 0;
        assert_eq!(
            wj_aql_code_object_register(a, &bad, &mut k),
            Status::INVALID_CODE_OBJECT.0
        );
        assert_eq!(wj_aql_agent_destroy(a), 0);
        let mut p: *mut c_void = ptr::null_mut();
        assert_eq!(
            wj_aql_memory_alloc(a, 8, &mut p),
            Status::INVALID_ARGUMENT.0
        );
    }
}

/// Stores the i32 `VALUE` through the pointer in the first kernarg.
fn store_kernel(value: u32) -> String {
    format!(
        "kernel @store {{
block0:
  v0 = const.i32 0
  v1 = load.uniform.i64 v0
  v2 = const.i32 {value}
  store.global.i32 v1, v2
  exit
}}
"
    )
}

#[test]
fn descriptors_registered_from_reused_memory_get_their_own_handles() {
    for engine in [0, 1] {
        let a = agent(engine);
        let (seven, nine) = (store_kernel(7), store_kernel(9));
        // SAFETY: all pointers are live locals or values returned by the ABI.
        unsafe {
            // One descriptor buffer, rewritten between registrations.
            let slot: *mut CodeObject = Box::into_raw(Box::new(CodeObject::new(
                Isa::IrText,
                ArgAbi::UniformCopy,
                seven.as_bytes(),
                8,
            )));
            let (mut k7, mut k9) = (0, 0);
            assert_eq!(wj_aql_code_object_register(a, slot, &mut k7), 0);
            slot.write(CodeObject::new(
                Isa::IrText,
                ArgAbi::UniformCopy,
                nine.as_bytes(),
                8,
            ));
            assert_eq!(wj_aql_code_object_register(a, slot, &mut k9), 0);
            drop(Box::from_raw(slot));
            assert_ne!(k7, k9, "engine {engine}");

            let mut out: *mut c_void = ptr::null_mut();
            assert_eq!(wj_aql_memory_alloc(a, 4, &mut out), 0);
            let mut args: *mut c_void = ptr::null_mut();
            assert_eq!(wj_aql_memory_alloc(a, 8, &mut args), 0);
            args.cast::<u64>().write(out as u64);
            let mut q: *mut HsaQueue = ptr::null_mut();
            assert_eq!(
                wj_aql_queue_create(a, 8, 0, 0, None, ptr::null_mut(), &mut q),
                0
            );
            for (i, (kobj, want)) in [(k7, 7), (k9, 9), (k7, 7)].into_iter().enumerate() {
                let mut done = 0;
                assert_eq!(wj_aql_signal_create(1, &mut done), 0);
                let p = KernelDispatchPacket {
                    header: Header::new(PacketType::KernelDispatch, true).bits(),
                    setup: 1,
                    workgroup_size: [1, 1, 1],
                    grid_size: [1, 1, 1],
                    kernel_object: kobj,
                    kernarg_address: args as u64,
                    completion_signal: done,
                    ..KernelDispatchPacket::default()
                };
                assert_eq!(produce(q, &p), i as u64);
                assert_eq!(wj_aql_signal_wait(done, 0, 0, 20_000_000_000), 0);
                assert_eq!(
                    out.cast::<u32>().read(),
                    want,
                    "engine {engine}, handle {kobj:#x}"
                );
                assert_eq!(wj_aql_signal_destroy(done), 0);
            }
            assert_eq!(wj_aql_queue_destroy(q), 0);
            // A handle is never handed out again, even after unregistering.
            assert_eq!(wj_aql_code_object_unregister(a, k7), 0);
            let desc = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, seven.as_bytes(), 8);
            let mut again = 0;
            assert_eq!(wj_aql_code_object_register(a, &desc, &mut again), 0);
            assert!(again != k7 && again != k9);
            assert_eq!(wj_aql_agent_destroy(a), 0);
        }
    }
}

#[test]
fn wild_descriptor_and_code_pointers_and_huge_code_sizes_are_refused() {
    let a = agent(1);
    // SAFETY: the ABI must not dereference the wild pointers (that is the test).
    unsafe {
        let mut k = 0;
        assert_eq!(
            wj_aql_code_object_register(a, 0x1000 as *const CodeObject, &mut k),
            Status::INVALID_CODE_OBJECT.0
        );
        let text = store_kernel(1);
        let mut wild = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, text.as_bytes(), 8);
        wild.code = 0x10;
        assert_eq!(
            wj_aql_code_object_register(a, &wild, &mut k),
            Status::INVALID_CODE_OBJECT.0
        );
        let mut huge = CodeObject::new(Isa::IrText, ArgAbi::UniformCopy, text.as_bytes(), 8);
        huge.code_size = 1 << 40;
        assert_eq!(
            wj_aql_code_object_register(a, &huge, &mut k),
            Status::INVALID_CODE_OBJECT.0
        );
        assert_eq!(k, 0, "nothing was registered");
        assert_eq!(wj_aql_agent_destroy(a), 0);
    }
}
