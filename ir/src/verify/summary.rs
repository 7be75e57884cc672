//! A short one-line rendering of an instruction for error messages. The text
//! printer lives elsewhere; this only needs to identify the instruction.

use std::fmt::Write;

use crate::entities::Inst;
use crate::kernel::Kernel;

/// `v12 = IBinary(Add) v3, v4`: results, the kind (Debug) and the arguments, by
/// handle only, so it is safe on malformed kernels.
pub(super) fn inst_text(kernel: &Kernel, inst: Inst) -> String {
    let Some(data) = kernel.insts.get(inst) else {
        return String::from("does not exist");
    };
    let mut text = String::new();
    for (i, result) in data.results.iter().enumerate() {
        let _ = write!(text, "{}{result}", if i == 0 { "" } else { ", " });
    }
    if !data.results.is_empty() {
        text.push_str(" = ");
    }
    let _ = write!(text, "{:?}", data.kind);
    for (i, arg) in data.args.iter().enumerate() {
        let _ = write!(text, "{}{arg}", if i == 0 { " " } else { ", " });
    }
    text
}
