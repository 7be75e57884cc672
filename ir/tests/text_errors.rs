//! Parse errors name what is wrong and where (line:col), precisely.

use wavejit_ir::text::{ParseError, parse, parse_module, print, print_module};

/// Wraps instruction lines in a kernel whose entry block defines
/// `v0: i32` (line 3), `v1: f32` (line 4), `v2: i64` (line 5); the body starts on line 6.
fn kernel_with(body: &str) -> String {
    format!(
        "kernel @t shared 16 private 0 {{\nblock0:\n  v0 = const.i32 1\n  v1 = const.f32 2.0\n  v2 = const.i64 0\n{body}\n  exit\n}}\n"
    )
}

fn error_of(text: &str) -> String {
    match parse(text) {
        Ok(k) => panic!("parsed without error:\n{}", print(&k)),
        Err(e) => e.to_string(),
    }
}

fn body_error(body: &str) -> String {
    error_of(&kernel_with(body))
}

#[test]
fn error_display_is_line_col_message() {
    let e = ParseError {
        line: 3,
        col: 14,
        message: "unknown opcode `x`".into(),
    };
    assert_eq!(e.to_string(), "3:14: unknown opcode `x`");
    match parse(&kernel_with("  v3 = frob.i32 v0")) {
        Err(e) => assert_eq!((e.line, e.col), (6, 8)),
        Ok(_) => panic!("accepted an unknown opcode"),
    }
}

#[test]
fn unknown_names() {
    assert_eq!(
        body_error("  v3 = frobnicate.i32 v0"),
        "6:8: unknown opcode `frobnicate`"
    );
    assert_eq!(
        body_error("  v3 = fadd.f32 v1, v1 fast"),
        "6:24: unknown attribute `fast` for `fadd.f32`"
    );
    assert_eq!(
        body_error("  v3 = fadd.f32 v1, v1 nan_max"),
        "6:24: unknown attribute `nan_max` for `fadd.f32`"
    );
    assert_eq!(
        body_error("  v3 = iadd.i32 v0, v0 align 4"),
        "6:24: `iadd.i32` takes no attributes, found `align`"
    );
    assert_eq!(
        body_error("  v3 = const.i33 0"),
        "6:14: unknown type `i33` in `const.i33`"
    );
    assert_eq!(
        body_error("  v3 = fcvt.f32.f8 v1"),
        "6:17: unknown float format `f8` in `fcvt.f32.f8`"
    );
    assert_eq!(
        body_error("  v3 = icmp.less.i32 v0, v0"),
        "6:13: unknown integer condition `less` in `icmp.less.i32`"
    );
    assert_eq!(
        body_error("  v3 = load.local.i32 v0"),
        "6:13: unknown address space `local` in `load.local.i32`"
    );
    assert_eq!(
        body_error("  v3 = load.shared.i32.z8 v0"),
        "6:24: unknown memory width `z8` in `load.shared.i32.z8`"
    );
    assert_eq!(
        body_error("  v3 = local_id.w"),
        "6:17: unknown dimension `w` in `local_id.w`"
    );
}

#[test]
fn malformed_opcode_words() {
    assert_eq!(
        body_error("  v3 = iadd v0, v0"),
        "6:12: `iadd` is missing its type (e.g. `.i32`)"
    );
    assert_eq!(
        body_error("  v3 = iadd.i32.x v0, v0"),
        "6:17: unexpected `.x` in `iadd.i32.x`"
    );
    assert_eq!(
        body_error("  v3 = atomic.add v2, v2"),
        "6:18: `atomic.add` is missing its address space (e.g. `.global`)"
    );
    assert_eq!(
        body_error("  v3 = iadd..i32 v0, v0"),
        "6:13: `iadd..i32` has an empty part where type belongs"
    );
}

#[test]
fn undefined_and_duplicate_names() {
    assert_eq!(
        body_error("  v3 = iadd.i32 v0, v7"),
        "6:21: undefined value `v7`"
    );
    assert_eq!(
        body_error("  v0 = const.i32 5"),
        "6:3: value `v0` is defined twice (first at 3:3)"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  jump block9\n}\n"),
        "3:8: undefined block `block9`"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  exit\nblock0:\n  exit\n}\n"),
        "4:1: block `block0` is defined twice (first at 2:1)"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  exit\nblock1(v0: i32, v0: i32):\n  exit\n}\n"),
        "4:17: value `v0` is defined twice (first at 4:8)"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  br v5, block0, block0\n}\n"),
        "3:6: undefined value `v5`"
    );
}

#[test]
fn wrong_result_counts() {
    assert_eq!(
        body_error("  v3 = fadd.f32 v1, v1 flags"),
        "6:3: `fadd.f32` yields 2 results (f32, i32), but 1 name is given"
    );
    assert_eq!(
        body_error("  v3 = load.global.i32x2 v2 align 8"),
        "6:3: `load.global.i32x2` yields 2 results (i32, i32), but 1 name is given"
    );
    assert_eq!(
        body_error("  v3 = store.global.i32 v2, v0"),
        "6:3: `store.global.i32` yields 0 results, but 1 name is given"
    );
    assert_eq!(
        body_error("  iadd.i32 v0, v0"),
        "6:3: `iadd.i32` yields 1 result (i32), but 0 names are given"
    );
    assert_eq!(
        body_error("  v3 = exit"),
        "6:8: terminator `exit` yields no results"
    );
}

#[test]
fn type_errors() {
    assert_eq!(
        body_error("  v3 = iadd.i64 v0, v0"),
        "6:13: type suffix `i64` does not match argument 0 (`v0` is i32)"
    );
    assert_eq!(
        body_error("  v3 = iadd.i32 v0, v1"),
        "6:8: `iadd.i32`: argument 1 must be i32 (same as argument 0), got f32"
    );
    assert_eq!(
        body_error("  v3 = iadd.i32 v0"),
        "6:8: `iadd.i32`: expects 2 arguments, got 1"
    );
    assert_eq!(
        body_error("  store.uniform.i32 v0, v0"),
        "6:3: `store.uniform.i32`: invalid attribute: stores to the uniform space are not allowed"
    );
    assert_eq!(
        body_error("  v3 = select.f32 v0, v1, v1"),
        "6:8: `select.f32`: argument 0 must be i1, got i32"
    );
}

#[test]
fn literal_errors() {
    assert_eq!(
        body_error("  v3 = const.i8 300"),
        "6:17: constant `300` does not fit i8"
    );
    assert_eq!(
        body_error("  v3 = const.i8 -129"),
        "6:17: constant `-129` does not fit i8"
    );
    assert_eq!(
        body_error("  v3 = const.f32 1.5.5"),
        "6:18: `1.5.5` is not a f32 literal"
    );
    assert_eq!(
        body_error("  v3 = const.f32 0x1ffffffff"),
        "6:18: constant `0x1ffffffff` does not fit f32"
    );
    assert_eq!(
        body_error("  trap 0x100000000"),
        "6:8: `0x100000000` is not a 32-bit number (a trap code)"
    );
    assert_eq!(
        body_error("  v3 = fadd.f32 v1, v1 nan"),
        "6:24: attribute `nan` needs a value, e.g. `nan=0x7fc00000`"
    );
    assert_eq!(
        body_error("  v3 = fadd.f32 v1, v1 sat=1"),
        "6:28: attribute `sat` takes no value"
    );
    assert_eq!(
        body_error("  v3 = fadd.f32 v1, v1 rtz rdn"),
        "6:28: attribute `rdn` conflicts with `rtz` given before"
    );
    assert_eq!(
        body_error("  v3 = fadd.f32 v1, v1 ftz ftz.in"),
        "6:28: attribute `ftz.in` conflicts with `ftz` given before"
    );
}

#[test]
fn structure_errors() {
    assert_eq!(
        error_of(""),
        "1:1: no kernel found (expected `kernel @name ... {`)"
    );
    assert_eq!(
        error_of("; only a comment\n"),
        "2:1: no kernel found (expected `kernel @name ... {`)"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  exit\n"),
        "4:1: kernel `t` is not closed with `}`"
    );
    assert_eq!(
        error_of("kernel @t {\n  v0 = const.i32 1\n}\n"),
        "2:3: expected a block label like `block0:`, found `v0`"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  exit\n  v0 = const.i32 1\n}\n"),
        "4:3: `block0` already ended with the terminator at 3:3; start a new block first"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  exit @0x10\n}\n"),
        "3:8: terminators carry no guest pc"
    );
    assert_eq!(
        body_error("  v3 = iadd.i32 v0 v0"),
        "6:20: expected `,` between operands, found `v0`"
    );
    assert_eq!(
        body_error("  v3 = const.i32 #"),
        "6:18: unexpected character '#'"
    );
    assert_eq!(
        error_of("kernel @\"open {\nblock0:\n"),
        "1:9: unterminated string"
    );
    assert_eq!(
        error_of("kernel @t shared 1 shared 2 {\n}\n"),
        "1:20: `shared` size given twice"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  table v0, [block0 block0], default block0\n}\n"),
        "3:21: expected `,` or `]`, found `block0`"
    );
    assert_eq!(
        error_of("kernel @t {\nblock0:\n  exit\n}\nkernel @u {\nblock0:\n  exit\n}\n"),
        "5:1: a second kernel; `parse` reads one (use `parse_module` for several)"
    );
}

#[test]
fn modules_hold_several_kernels() {
    let text = "kernel @a shared 0 private 0 {\nblock0:\n  exit\n}\n\nkernel @b shared 4 private 8 {\nblock0:\n  barrier\n  exit\n}\n";
    let kernels = parse_module(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kernels.len(), 2);
    assert_eq!(kernels[1].name, "b");
    assert_eq!(kernels[1].private_size, 8);
    assert_eq!(print_module(&kernels), text);
    assert_eq!(kernels[0].to_string(), print(&kernels[0]));
}
