//! `runtime/include/wavejit_aql.h` against the Rust side: every `extern "C"` fn of
//! `runtime/src/aql/ffi.rs` has a header prototype of the same C type and vice
//! versa, and struct sizes/offsets and constants equal the Rust values. The checks
//! are generated C `_Static_assert`s compiled with the system `cc`.

use std::collections::BTreeSet;
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use wavejit_runtime::aql::ffi::WjAgentConfig;
use wavejit_runtime::aql::{
    AgentDispatchPacket, ArgAbi, BarrierPacket, CODE_OBJECT_MAGIC, CODE_OBJECT_VERSION, CodeObject,
    Condition, HsaQueue, Isa, KernelDispatchPacket, PacketType, QueueDescriptor, Status,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Rust type (as written in ffi.rs) → C type.
fn c_type(rust: &str) -> String {
    let t = rust.trim();
    if let Some(rest) = t.strip_prefix("*mut ") {
        return format!("{} *", c_type(rest));
    }
    if let Some(rest) = t.strip_prefix("*const ") {
        return format!("const {} *", c_type(rest));
    }
    match t {
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "i64" => "int64_t",
        "usize" => "size_t",
        "c_void" => "void",
        "c_char" => "char",
        "WjStatus" => "wj_aql_status_t",
        "WjMemoryOrder" => "wj_aql_memory_order_t",
        "WjQueueCallback" => "wj_aql_queue_callback_t",
        "WjAgent" => "wj_aql_agent_t",
        "WjAgentConfig" => "wj_aql_agent_config_t",
        "HsaQueue" => "wj_aql_queue_t",
        "CodeObject" => "wj_aql_code_object_t",
        other => panic!("ffi.rs uses a type the header check does not map: `{other}`"),
    }
    .to_string()
}

/// (name, C return type, C parameter types) of every `extern "C" fn` in ffi.rs.
fn rust_functions() -> Vec<(String, String, Vec<String>)> {
    let src = std::fs::read_to_string(root().join("src/aql/ffi.rs")).expect("ffi.rs");
    let flat: String = src.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    let mut rest = flat.as_str();
    while let Some(i) = rest.find("extern \"C\" fn ") {
        let after = &rest[i + "extern \"C\" fn ".len()..];
        let open = after.find('(').expect("(");
        let name = after[..open].trim().to_string();
        // Parameters end at the matching ')'.
        let mut depth = 0;
        let mut close = open;
        for (j, c) in after[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let params: Vec<String> = after[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| c_type(p.split_once(':').expect("name: type").1))
            .collect();
        let tail = &after[close + 1..];
        let body = tail.find('{').expect("body");
        let ret = match tail[..body].trim().strip_prefix("->") {
            Some(r) => c_type(r),
            None => "void".to_string(),
        };
        out.push((name, ret, params));
        rest = &after[close..];
    }
    out
}

fn header_functions(header: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, _) in header.match_indices("wj_aql_") {
        let tail = &header[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        if tail[end..].starts_with('(') {
            names.insert(tail[..end].to_string());
        }
    }
    names
}

fn layout_asserts() -> String {
    let mut c = String::new();
    let mut size = |ty: &str, n: usize| {
        c += &format!("_Static_assert(sizeof({ty}) == {n}, \"sizeof {ty}\");\n");
    };
    size(
        "wj_aql_kernel_dispatch_packet_t",
        size_of::<KernelDispatchPacket>(),
    );
    size("wj_aql_barrier_packet_t", size_of::<BarrierPacket>());
    size(
        "wj_aql_agent_dispatch_packet_t",
        size_of::<AgentDispatchPacket>(),
    );
    size("wj_aql_code_object_t", size_of::<CodeObject>());
    size("wj_aql_queue_t", size_of::<HsaQueue>());
    size("wj_aql_agent_config_t", size_of::<WjAgentConfig>());
    let mut off = |ty: &str, field: &str, n: usize| {
        c += &format!("_Static_assert(offsetof({ty}, {field}) == {n}, \"{ty}.{field}\");\n");
    };
    let k = "wj_aql_kernel_dispatch_packet_t";
    off(k, "setup", offset_of!(KernelDispatchPacket, setup));
    off(
        k,
        "workgroup_size_x",
        offset_of!(KernelDispatchPacket, workgroup_size),
    );
    off(
        k,
        "workgroup_size_z",
        offset_of!(KernelDispatchPacket, workgroup_size) + 4,
    );
    off(k, "reserved0", offset_of!(KernelDispatchPacket, reserved0));
    off(
        k,
        "grid_size_x",
        offset_of!(KernelDispatchPacket, grid_size),
    );
    off(
        k,
        "grid_size_z",
        offset_of!(KernelDispatchPacket, grid_size) + 8,
    );
    off(
        k,
        "private_segment_size",
        offset_of!(KernelDispatchPacket, private_segment_size),
    );
    off(
        k,
        "group_segment_size",
        offset_of!(KernelDispatchPacket, group_segment_size),
    );
    off(
        k,
        "kernel_object",
        offset_of!(KernelDispatchPacket, kernel_object),
    );
    off(
        k,
        "kernarg_address",
        offset_of!(KernelDispatchPacket, kernarg_address),
    );
    off(
        k,
        "completion_signal",
        offset_of!(KernelDispatchPacket, completion_signal),
    );
    let b = "wj_aql_barrier_packet_t";
    off(b, "dep_signal", offset_of!(BarrierPacket, dep_signal));
    off(b, "reserved2", offset_of!(BarrierPacket, reserved2));
    off(
        b,
        "completion_signal",
        offset_of!(BarrierPacket, completion_signal),
    );
    let a = "wj_aql_agent_dispatch_packet_t";
    off(a, "type", offset_of!(AgentDispatchPacket, ty));
    off(
        a,
        "return_address",
        offset_of!(AgentDispatchPacket, return_address),
    );
    off(a, "arg", offset_of!(AgentDispatchPacket, arg));
    off(
        a,
        "completion_signal",
        offset_of!(AgentDispatchPacket, completion_signal),
    );
    let o = "wj_aql_code_object_t";
    off(o, "version", offset_of!(CodeObject, version));
    off(o, "isa", offset_of!(CodeObject, isa));
    off(o, "arg_abi", offset_of!(CodeObject, arg_abi));
    off(o, "kernarg_size", offset_of!(CodeObject, kernarg_size));
    off(o, "code", offset_of!(CodeObject, code));
    off(o, "code_size", offset_of!(CodeObject, code_size));
    off(o, "entry", offset_of!(CodeObject, entry));
    off(
        o,
        "group_segment_fixed_size",
        offset_of!(CodeObject, group_segment_fixed_size),
    );
    off(
        o,
        "private_segment_fixed_size",
        offset_of!(CodeObject, private_segment_fixed_size),
    );
    off(o, "wave_size", offset_of!(CodeObject, wave_size));
    off(o, "reserved", offset_of!(CodeObject, reserved));
    let q = "wj_aql_queue_t";
    off(q, "features", offset_of!(HsaQueue, features));
    off(q, "base_address", offset_of!(HsaQueue, base_address));
    off(q, "doorbell_signal", offset_of!(HsaQueue, doorbell_signal));
    off(q, "size", offset_of!(HsaQueue, size));
    off(q, "id", offset_of!(HsaQueue, id));
    let g = "wj_aql_agent_config_t";
    off(
        g,
        "max_group_segment",
        offset_of!(WjAgentConfig, max_group_segment),
    );
    off(
        g,
        "zero_size_is_noop",
        offset_of!(WjAgentConfig, zero_size_is_noop),
    );
    off(g, "step_limit", offset_of!(WjAgentConfig, step_limit));
    off(
        g,
        "dispatch_time_limit_ms",
        offset_of!(WjAgentConfig, dispatch_time_limit_ms),
    );
    off(
        g,
        "max_work_items",
        offset_of!(WjAgentConfig, max_work_items),
    );
    c += &format!(
        "_Static_assert(_Alignof(wj_aql_code_object_t) == {}, \"code object alignment\");\n",
        align_of::<CodeObject>()
    );
    c
}

fn constant_asserts() -> String {
    let mut c = String::new();
    let mut eq = |name: &str, v: u64| {
        c += &format!("_Static_assert({name} == {v}ull, \"{name}\");\n");
    };
    for (name, s) in [
        ("SUCCESS", Status::SUCCESS),
        ("ERROR", Status::ERROR),
        ("ERROR_INVALID_ARGUMENT", Status::INVALID_ARGUMENT),
        (
            "ERROR_INVALID_QUEUE_CREATION",
            Status::INVALID_QUEUE_CREATION,
        ),
        ("ERROR_INVALID_ALLOCATION", Status::INVALID_ALLOCATION),
        ("ERROR_INVALID_SIGNAL", Status::INVALID_SIGNAL),
        ("ERROR_INVALID_QUEUE", Status::INVALID_QUEUE),
        ("ERROR_OUT_OF_RESOURCES", Status::OUT_OF_RESOURCES),
        ("ERROR_INVALID_PACKET_FORMAT", Status::INVALID_PACKET_FORMAT),
        (
            "ERROR_INCOMPATIBLE_ARGUMENTS",
            Status::INCOMPATIBLE_ARGUMENTS,
        ),
        ("ERROR_INVALID_ISA", Status::INVALID_ISA),
        ("ERROR_INVALID_CODE_OBJECT", Status::INVALID_CODE_OBJECT),
        ("ERROR_EXCEPTION", Status::EXCEPTION),
        ("ERROR_FATAL", Status::FATAL),
        (
            "ERROR_MEMORY_APERTURE_VIOLATION",
            Status::MEMORY_APERTURE_VIOLATION,
        ),
        ("ERROR_ILLEGAL_INSTRUCTION", Status::ILLEGAL_INSTRUCTION),
        ("ERROR_MEMORY_FAULT", Status::MEMORY_FAULT),
        ("ERROR_OUT_OF_REGISTERS", Status::OUT_OF_REGISTERS),
    ] {
        eq(&format!("WJ_AQL_STATUS_{name}"), u64::from(s.0));
    }
    eq("WJ_AQL_CODE_OBJECT_MAGIC", u64::from(CODE_OBJECT_MAGIC));
    eq("WJ_AQL_CODE_OBJECT_VERSION", u64::from(CODE_OBJECT_VERSION));
    for (name, isa) in [
        ("IR_TEXT", Isa::IrText),
        ("AGX", Isa::Agx),
        ("IR3", Isa::Ir3),
        ("RV32", Isa::Rv32),
    ] {
        eq(&format!("WJ_AQL_ISA_{name}"), isa as u64);
    }
    eq("WJ_AQL_ARG_ABI_UNIFORM_COPY", ArgAbi::UniformCopy as u64);
    eq(
        "WJ_AQL_ARG_ABI_UNIFORM_POINTER",
        ArgAbi::UniformPointer as u64,
    );
    for (name, t) in [
        ("VENDOR_SPECIFIC", PacketType::VendorSpecific),
        ("INVALID", PacketType::Invalid),
        ("KERNEL_DISPATCH", PacketType::KernelDispatch),
        ("BARRIER_AND", PacketType::BarrierAnd),
        ("AGENT_DISPATCH", PacketType::AgentDispatch),
        ("BARRIER_OR", PacketType::BarrierOr),
    ] {
        eq(&format!("WJ_AQL_PACKET_TYPE_{name}"), t as u64);
    }
    for (name, cond) in [
        ("EQ", Condition::Eq),
        ("NE", Condition::Ne),
        ("LT", Condition::Lt),
        ("GTE", Condition::Gte),
    ] {
        eq(&format!("WJ_AQL_SIGNAL_CONDITION_{name}"), cond as u64);
    }
    eq("WJ_AQL_QUEUE_FEATURE_KERNEL_DISPATCH", 1);
    // The C side reads the indexes through amd_queue_t offsets.
    eq("56", offset_of!(QueueDescriptor, write_dispatch_id) as u64);
    eq("128", offset_of!(QueueDescriptor, read_dispatch_id) as u64);
    c
}

/// Realistic use of the API, type-checked by the compiler.
const EXAMPLE: &str = r#"
int wj_example(const char *ir_text, size_t len) {
    wj_aql_agent_config_t cfg;
    wj_aql_agent_t *agent = NULL;
    wj_aql_queue_t *queue = NULL;
    uint64_t kobj = 0, done = 0;
    if (wj_aql_agent_config_default(&cfg) != WJ_AQL_STATUS_SUCCESS) return 1;
    cfg.engine = WJ_AQL_ENGINE_INTERPRETER;
    if (wj_aql_agent_create(&cfg, &agent) != WJ_AQL_STATUS_SUCCESS) return 2;
    wj_aql_code_object_t desc = {0};
    desc.magic = WJ_AQL_CODE_OBJECT_MAGIC;
    desc.version = WJ_AQL_CODE_OBJECT_VERSION;
    desc.isa = WJ_AQL_ISA_IR_TEXT;
    desc.code = (uint64_t)(uintptr_t)ir_text;
    desc.code_size = len;
    if (wj_aql_code_object_register(agent, &desc, &kobj)) return 3;
    if (wj_aql_queue_create(agent, 64, WJ_AQL_QUEUE_TYPE_MULTI, WJ_AQL_PROCESSING_THREAD,
                            NULL, NULL, &queue)) return 4;
    wj_aql_signal_create(1, &done);
    uint64_t id = wj_aql_queue_add_write_index(queue, 1, WJ_AQL_MEMORY_ORDER_SCACQ_SCREL);
    while (id >= wj_aql_queue_load_read_index(queue, WJ_AQL_MEMORY_ORDER_SCACQUIRE) + queue->size) {}
    wj_aql_kernel_dispatch_packet_t *p =
        (wj_aql_kernel_dispatch_packet_t *)(uintptr_t)queue->base_address + (id & (queue->size - 1));
    p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
    p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
    p->kernel_object = kobj;
    p->completion_signal = done;
    uint16_t header = WJ_AQL_PACKET_TYPE_KERNEL_DISPATCH |
        (WJ_AQL_FENCE_SCOPE_SYSTEM << WJ_AQL_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
        (WJ_AQL_FENCE_SCOPE_SYSTEM << WJ_AQL_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    __atomic_store_n((uint32_t *)p, header | (1u << 16), __ATOMIC_RELEASE);
    wj_aql_signal_store(queue->doorbell_signal, (int64_t)id, WJ_AQL_MEMORY_ORDER_SCRELEASE);
    while (wj_aql_signal_wait(done, WJ_AQL_SIGNAL_CONDITION_LT, 1, WJ_AQL_TIMEOUT_NONE) >= 1) {}
    wj_aql_status_t st;
    char text[256];
    wj_aql_queue_get_error(queue, &st, text, sizeof text);
    wj_aql_signal_destroy(done);
    wj_aql_queue_destroy(queue);
    wj_aql_agent_destroy(agent);
    return st == WJ_AQL_STATUS_SUCCESS ? 0 : 5;
}
"#;

fn cc_available() -> bool {
    Command::new("cc").arg("--version").output().is_ok()
}

fn compile(c_source: &str, name: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("wj-aql-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(name);
    std::fs::write(&file, c_source).map_err(|e| e.to_string())?;
    let include: &Path = &root().join("include");
    let out = Command::new("cc")
        .args([
            "-std=gnu11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fsyntax-only",
            "-I",
        ])
        .arg(include)
        .arg(&file)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn header_declares_exactly_the_exported_functions() {
    let header = std::fs::read_to_string(root().join("include/wavejit_aql.h")).expect("header");
    let declared = header_functions(&header);
    let exported: BTreeSet<String> = rust_functions().into_iter().map(|f| f.0).collect();
    assert!(exported.len() >= 30, "{exported:?}");
    assert_eq!(declared, exported);
}

#[test]
fn header_prototypes_layouts_and_constants_match_rust() {
    if !cc_available() {
        assert!(std::env::var_os("CI").is_none(), "no system cc in CI");
        eprintln!("skipped: no system `cc`");
        return;
    }
    let mut c = String::from("#include <stddef.h>\n#include \"wavejit_aql.h\"\n");
    for (name, ret, params) in rust_functions() {
        let params = if params.is_empty() {
            "void".to_string()
        } else {
            params.join(", ")
        };
        c += &format!(
            "_Static_assert(__builtin_types_compatible_p(__typeof__(&{name}), {ret} (*)({params})), \"{name}\");\n"
        );
    }
    c += &layout_asserts();
    c += &constant_asserts();
    c += EXAMPLE;
    if let Err(e) = compile(&c, "check.c") {
        panic!("generated header check does not compile:\n{e}\n--- source ---\n{c}");
    }
}

#[test]
fn the_check_catches_a_wrong_prototype() {
    if !cc_available() {
        eprintln!("skipped: no system `cc`");
        return;
    }
    let c = "#include \"wavejit_aql.h\"\n_Static_assert(__builtin_types_compatible_p(__typeof__(&wj_aql_signal_load), int64_t (*)(uint64_t, uint64_t)), \"x\");\n";
    assert!(compile(c, "negative.c").is_err());
}
