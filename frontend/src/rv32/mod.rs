//! RV32IMF SIMT GPGPU (QEMU Camp 2026 device): decoder, GNU-objdump-exact
//! disassembler and a minimal ELF32 loader.
//!
//! The accepted ISA is the device profile of `shared/reference/rv32-gpgpu.md` §6–7:
//! RV32I, M, F (single precision), Zicsr on the CSRs fflags/frm/fcsr/mhartid,
//! fence/fence.tso/fence.i, ecall/ebreak, and eight custom conversions on OP-FP
//! (funct7 0x22/0x24/0x26, rs2 selects bf16/e4m3/e5m2/e2m1 ↔ f32). There is no C
//! extension: every instruction is one aligned little-endian 32-bit word.
//!
//! Modules: `instr` (typed [`Instr`] for the lifter), `effects` (register, CSR and
//! FP-environment effects per instruction), `decode`, `encode` (its inverse, for
//! building test kernels), `disasm`
//! (objdump text, verified against binutils 2.40 by `tests/rv32_objdump.rs`), `elf`.
//!
//! Custom conversion mnemonics (objdump itself prints these words as `.4byte`):
//!
//! | funct7 | rs2 | mnemonic | operation |
//! |---|---|---|---|
//! | 0x22 | 0 | `fcvt.s.bf16 fd,fs1` | bf16 in fs1\[15:0\] → f32 |
//! | 0x22 | 1 | `fcvt.bf16.s fd,fs1` | f32 → bf16, zero-extended |
//! | 0x24 | 0 | `fcvt.s.e4m3 fd,fs1` | E4M3 in fs1\[7:0\] → f32 |
//! | 0x24 | 1 | `fcvt.e4m3.s fd,fs1` | f32 → E4M3 (saturating) |
//! | 0x24 | 2 | `fcvt.s.e5m2 fd,fs1` | E5M2 in fs1\[7:0\] → f32 |
//! | 0x24 | 3 | `fcvt.e5m2.s fd,fs1` | f32 → E5M2 (saturating) |
//! | 0x26 | 0 | `fcvt.s.e2m1 fd,fs1` | E2M1 in fs1\[3:0\] → f32 |
//! | 0x26 | 1 | `fcvt.e2m1.s fd,fs1` | f32 → E2M1 (saturating) |
//!
//! The device ignores their rm field; a non-zero field is still shown as a trailing
//! `,rtz`-style operand so that the text identifies the word. Note that without this
//! profile, GNU tools with Zfh would read 0x22/rs2 0/1 as `fcvt.h.s`/`fcvt.h.d`.

mod decode;
mod disasm;
mod effects;
mod elf;
mod encode;
mod error;
mod instr;
pub mod lift;

pub use decode::{decode, decode_for_execution};
pub use disasm::{DisasmOptions, Disassembler};
pub use effects::{CsrAccess, RegEffects};
pub use elf::{ElfError, LoadedImage, Segment, SegmentFlags, is_elf, load_elf, load_image};
pub use encode::{EncodeError, encode};
pub use error::{DecodeError, DecodeErrorKind};
pub use instr::{
    AluImmOp, AluOp, BranchCond, Csr, CsrOp, CsrSrc, FReg, FenceSet, FmaOp, FpArithOp, FpCmpOp,
    FpMinMaxOp, FpSignOp, Instr, LoadKind, LpDirection, LpFormat, RoundingMode, StoreKind, XReg,
};

/// objdump's default text (aliases, ABI register names) for one word at `pc`, as
/// objdump prints it when the word is the first instruction of a listing.
pub fn disasm(word: u32, pc: u32) -> Result<String, DecodeError> {
    disasm_with(word, pc, DisasmOptions::OBJDUMP)
}

/// Like [`disasm`] with explicit options (e.g. [`DisasmOptions::NO_ALIASES`]).
pub fn disasm_with(word: u32, pc: u32, opts: DisasmOptions) -> Result<String, DecodeError> {
    Disassembler::new(opts).disasm_word(word, pc)
}

/// Disassembles a raw little-endian code buffer loaded at `base`: one line per word,
/// in objdump's default syntax including its `# 0x...` address comments. Fails on
/// the first word the device cannot execute, or on trailing bytes that do not form a
/// whole word.
pub fn disasm_program(bytes: &[u8], base: u32) -> Result<Vec<String>, DecodeError> {
    disasm_program_with(bytes, base, DisasmOptions::OBJDUMP)
}

/// Like [`disasm_program`] with explicit options.
pub fn disasm_program_with(
    bytes: &[u8],
    base: u32,
    opts: DisasmOptions,
) -> Result<Vec<String>, DecodeError> {
    let mut dis = Disassembler::new(opts);
    words(bytes, base)
        .map(|(pc, word)| dis.disasm_word(word?, pc))
        .collect()
}

/// Listing that never fails: undecodable words print as objdump prints unknown
/// 32-bit words (`.4byte\t0x...`), a trailing partial word as `.byte` values.
/// Meant for dumping whole segments that may mix code and data.
pub fn disasm_listing(bytes: &[u8], base: u32, opts: DisasmOptions) -> Vec<(u32, String)> {
    let mut dis = Disassembler::new(opts);
    words(bytes, base)
        .map(|(pc, word)| {
            let text = match word {
                Ok(w) => dis
                    .disasm_word(w, pc)
                    .unwrap_or_else(|_| format!(".4byte\t{w:#x}")),
                Err(e) => {
                    let n = usize::from(match e.kind {
                        DecodeErrorKind::Truncated(n) => n,
                        _ => 0,
                    });
                    let bytes = e.word.to_le_bytes();
                    let list: Vec<String> =
                        bytes[..n].iter().map(|b| format!("{b:#04x}")).collect();
                    format!(".byte\t{}", list.join(","))
                }
            };
            (pc, text)
        })
        .collect()
}

/// Encodes a sequence of instructions as a little-endian code buffer (the inverse of
/// [`disasm_program`]'s input), e.g. to build test kernels without an assembler.
pub fn encode_program(program: &[Instr]) -> Result<Vec<u8>, EncodeError> {
    let mut bytes = Vec::with_capacity(program.len() * 4);
    for instr in program {
        bytes.extend_from_slice(&encode(instr)?.to_le_bytes());
    }
    Ok(bytes)
}

/// Splits a buffer into (pc, word) pairs; a trailing partial word is an error.
fn words(bytes: &[u8], base: u32) -> impl Iterator<Item = (u32, Result<u32, DecodeError>)> {
    bytes.chunks(4).enumerate().map(move |(i, chunk)| {
        let pc = base.wrapping_add((i as u32).wrapping_mul(4));
        let mut padded = [0u8; 4];
        padded[..chunk.len()].copy_from_slice(chunk);
        let word = u32::from_le_bytes(padded);
        if chunk.len() == 4 {
            (pc, Ok(word))
        } else {
            let kind = DecodeErrorKind::Truncated(chunk.len() as u8);
            (pc, Err(DecodeError { word, pc, kind }))
        }
    })
}
