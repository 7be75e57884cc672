//! Register/CSR/FP-environment effects reported for the lifter.

use wavejit_frontend::rv32::{Csr, CsrAccess, FReg, RegEffects, XReg, decode};

fn effects(word: u32) -> RegEffects {
    match decode(word, 0) {
        Ok(i) => i.reg_effects(),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn register_reads_and_writes() {
    // add t3,t3,t2
    assert_eq!(
        effects(0x007E_0E33),
        RegEffects {
            x_src: [Some(XReg(28)), Some(XReg(7))],
            x_dst: Some(XReg(28)),
            ..RegEffects::default()
        }
    );
    // sw t1,0(t3): two sources, no destination.
    assert_eq!(
        effects(0x006E_2023),
        RegEffects {
            x_src: [Some(XReg(28)), Some(XReg(6))],
            ..RegEffects::default()
        }
    );
    // fmadd.s fa0,fa1,fa2,fa3
    assert_eq!(
        effects(0x68C5_F543),
        RegEffects {
            f_src: [Some(FReg(11)), Some(FReg(12)), Some(FReg(13))],
            f_dst: Some(FReg(10)),
            ..RegEffects::default()
        }
    );
    // feq.s a0,fa1,fa2: FP sources, integer destination.
    assert_eq!(
        effects(0xA0C5_A553),
        RegEffects {
            x_dst: Some(XReg(10)),
            f_src: [Some(FReg(11)), Some(FReg(12)), None],
            ..RegEffects::default()
        }
    );
    // fcvt.s.w ft1,t1,rne and fcvt.bf16.s ft2,ft1.
    assert_eq!(
        effects(0xD003_00D3),
        RegEffects {
            x_src: [Some(XReg(6)), None],
            f_dst: Some(FReg(1)),
            ..RegEffects::default()
        }
    );
    assert_eq!(
        effects(0x4410_8153),
        RegEffects {
            f_src: [Some(FReg(1)), None, None],
            f_dst: Some(FReg(2)),
            ..RegEffects::default()
        }
    );
    // x0 never appears: li a0,5 reads nothing; nop touches nothing.
    assert_eq!(
        effects(0x0050_0513),
        RegEffects {
            x_dst: Some(XReg(10)),
            ..RegEffects::default()
        }
    );
    assert_eq!(effects(0x0000_0013), RegEffects::default());
}

#[test]
fn csr_access_follows_zicsr_rules() {
    let access = |w: u32| decode(w, 0).ok().and_then(|i| i.csr_access());
    // csrr t1,mhartid: read only.
    assert_eq!(
        access(0xF140_2373),
        Some(CsrAccess {
            csr: Csr::Mhartid,
            reads: true,
            writes: false
        })
    );
    // fscsr a1 (csrrw zero,fcsr,a1): write without read.
    assert_eq!(
        access(0x0035_9073),
        Some(CsrAccess {
            csr: Csr::Fcsr,
            reads: false,
            writes: true
        })
    );
    // csrs fflags,11 (csrrsi zero,fflags,11): read-modify-write.
    assert_eq!(
        access(0x0015_E073),
        Some(CsrAccess {
            csr: Csr::Fflags,
            reads: true,
            writes: true
        })
    );
    assert_eq!(access(0x0000_0013), None);
}

#[test]
fn fp_environment_dependencies() {
    let instr = |w: u32| decode(w, 0).map_err(|e| e.to_string());
    // fmadd.s ... (dyn) reads frm; fmul.s ...,rne does not; both may set flags.
    assert_eq!(
        instr(0x68C5_F543).map(|i| (i.reads_frm(), i.may_set_fflags())),
        Ok((true, true))
    );
    assert_eq!(
        instr(0x1020_8253).map(|i| (i.reads_frm(), i.may_set_fflags())),
        Ok((false, true))
    );
    // Custom conversion with rm = 7: ignored, so no frm dependency, but flags may accrue.
    assert_eq!(
        instr(0x4410_F153).map(|i| (i.reads_frm(), i.may_set_fflags())),
        Ok((false, true))
    );
    // fneg.s, fmv.w.x, flw, fclass.s: no FP-environment effects.
    for w in [0x20B5_9553u32, 0xF004_80D3, 0xFF85_A507, 0xE005_9553] {
        assert_eq!(
            instr(w).map(|i| (i.reads_frm(), i.may_set_fflags())),
            Ok((false, false)),
            "{w:#010x}"
        );
    }
}
