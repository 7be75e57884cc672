//! applegpu's hardware-test suite (hwtest.py) replayed on wavejit: every case's
//! program inside hwtest's own harness, with its inputs, against the results its
//! author checks on an M1 (`tests/data/agx_hwtest_cases.txt`, header names the source;
//! regenerated with `frontend/gen/agx/gen_hwtest_cases.py` from an applegpu checkout).
//! Every case must decode, lift and agree on r0..r7 of all 32 lanes on both engines.

mod agx_lift_support;

use std::collections::HashMap;

use agx_lift_support::{Mem, engines, to_words, words};
use wavejit_frontend::agx::lift::{AgxDispatch, LiftConfig, lift};

const DATA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/agx_hwtest_cases.txt"
));

type Regs = [[u32; 32]; 8];

struct Case<'a> {
    line: usize,
    test: &'a str,
    program: Vec<u8>,
    state: &'a str,
    /// (register, row id) for the registers the case changes.
    changed: Vec<(usize, usize)>,
}

fn hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd-length hex {s:?}"));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("{s:?}: {e}")))
        .collect()
}

fn lanes(s: &str) -> Result<[u32; 32], String> {
    let v: Vec<u32> = s
        .split(',')
        .map(|w| u32::from_str_radix(w, 16).map_err(|e| format!("{w:?}: {e}")))
        .collect::<Result<_, _>>()?;
    v.try_into()
        .map_err(|v: Vec<u32>| format!("{} lanes, want 32", v.len()))
}

struct Data<'a> {
    states: HashMap<&'a str, Regs>,
    rows: Vec<[u32; 32]>,
    cases: Vec<Case<'a>>,
}

fn parse(text: &str) -> Result<Data<'_>, String> {
    let mut d = Data {
        states: HashMap::new(),
        rows: Vec::new(),
        cases: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}", i + 1);
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "#" | "" => {}
            "state" if f.len() == 3 => {
                let mut regs = [[0; 32]; 8];
                let groups: Vec<&str> = f[2].split('|').collect();
                if groups.len() != 8 {
                    return Err(at(format!("{} registers, want 8", groups.len())));
                }
                for (r, g) in groups.iter().enumerate() {
                    regs[r] = lanes(g).map_err(at)?;
                }
                d.states.insert(f[1], regs);
            }
            "row" if f.len() == 3 => {
                if f[1].parse::<usize>().ok() != Some(d.rows.len()) {
                    return Err(at(format!("row {} out of order", f[1])));
                }
                d.rows.push(lanes(f[2]).map_err(at)?);
            }
            "case" if f.len() >= 5 => {
                let mut changed = Vec::new();
                if f[4..] != ["-"] {
                    for c in &f[4..] {
                        let (r, row) = c
                            .strip_prefix('r')
                            .and_then(|c| c.split_once('='))
                            .ok_or_else(|| at(format!("bad output {c:?}")))?;
                        let r: usize = r.parse().map_err(|e| at(format!("{c:?}: {e}")))?;
                        let row: usize = row.parse().map_err(|e| at(format!("{c:?}: {e}")))?;
                        if r >= 8 || row >= d.rows.len() {
                            return Err(at(format!("output {c:?} out of range")));
                        }
                        changed.push((r, row));
                    }
                }
                if !d.states.contains_key(f[3]) {
                    return Err(at(format!("unknown state {:?}", f[3])));
                }
                d.cases.push(Case {
                    line: i + 1,
                    test: f[1],
                    program: hex_bytes(f[2]).map_err(at)?,
                    state: f[3],
                    changed,
                });
            }
            _ => return Err(at(format!("unrecognised line {line:?}"))),
        }
    }
    Ok(d)
}

/// hwtest.test()'s program around the instructions under test: r8 = thread id,
/// r0..r3 and r4..r7 loaded from buffers 0 and 1, r9..r31 zeroed, and r0..r31 stored
/// to buffers 0..7.
fn harness(body: &[u8]) -> Vec<u8> {
    let mut code = hex_bytes(
        "7221100405010\
        00e01c8f2000521040e01c8f2003800",
    )
    .expect("harness prefix");
    for r in 9u8..32 {
        code.extend_from_slice(&[0x62, (r << 2) | 1, 0, 0, 0, 0]);
    }
    code.extend_from_slice(body);
    code.extend(
        hex_bytes(
            "f27d10044501e00e03c8f2004521e40e03c8f2004541e80e03c8f2004561ec0e03c8f200\
             4581e00e13c8f20045a1e40e13c8f20045c1e80e13c8f20045e1ec0e13c8f2008800",
        )
        .expect("harness suffix"),
    );
    code
}

/// Runs one case on every engine; returns r0..r7 per engine, or why it could not run.
fn run_case(case: &Case, input: &Regs) -> Result<Vec<(String, Regs)>, String> {
    let code = harness(&case.program);
    let cfg = LiftConfig {
        threadgroup_memory: 0x100,
        ..LiftConfig::default()
    };
    let mut kernel = lift(&code, &cfg).map_err(|e| format!("lift: {e}"))?;
    kernel.shared_size = kernel.shared_size.max(0x100);
    let mut bufs = vec![Vec::new(); 8];
    // Buffer 0 holds r0..r3 lane by lane, buffer 1 r4..r7.
    for lane in 0..32 {
        for (r, reg) in input.iter().enumerate() {
            bufs[r / 4].push(reg[lane]);
        }
    }
    for b in bufs.iter_mut().skip(2) {
        *b = vec![0; 128];
    }
    let mut out = Vec::new();
    for engine in engines() {
        let mem = Mem::new(&bufs.iter().map(|b| words(b)).collect::<Vec<_>>());
        let mut d = AgxDispatch::with_buffers([32, 1, 1], [32, 1, 1], &mem.addrs())
            .map_err(|e| format!("dispatch: {e}"))?;
        for (u, v) in [(20, 32), (21, 1), (22, 1)] {
            d.set_u32(u, v).map_err(|e| format!("u{u}: {e}"))?;
        }
        let disp = d.dispatch().map_err(|e| format!("dispatch: {e}"))?;
        engine
            .run(&kernel, &disp, &mem)
            .map_err(|f| format!("{}: fault {f}", engine.name()))?;
        let mut regs = [[0; 32]; 8];
        for (r, reg) in regs.iter_mut().enumerate() {
            let buf = to_words(&mem.bytes(r / 4));
            for (lane, v) in reg.iter_mut().enumerate() {
                *v = buf[lane * 4 + r % 4];
            }
        }
        out.push((engine.name().to_string(), regs));
    }
    Ok(out)
}

#[test]
fn hwtest_cases_agree_with_the_m1_results() {
    let data = parse(DATA).unwrap_or_else(|e| panic!("agx_hwtest_cases.txt: {e}"));
    assert_eq!(data.cases.len(), 10_407, "case count of hwtest.py main()");
    let (mut refused, mut disagree) = (Vec::new(), Vec::new());
    for case in &data.cases {
        let input = &data.states[case.state];
        let mut want = *input;
        for &(r, row) in &case.changed {
            want[r] = data.rows[row];
        }
        match run_case(case, input) {
            Err(e) => refused.push(format!(
                "line {} {} {}: {e}",
                case.line,
                case.test,
                hex(&case.program)
            )),
            Ok(runs) => {
                for (engine, got) in runs {
                    if let Some(r) = (0..8).find(|&r| got[r] != want[r]) {
                        let lane = (0..32).find(|&l| got[r][l] != want[r][l]).unwrap_or(0);
                        disagree.push(format!(
                            "line {} {} {} ({engine}): r{r} lane {lane} = {:#010x}, want {:#010x}",
                            case.line,
                            case.test,
                            hex(&case.program),
                            got[r][lane],
                            want[r][lane]
                        ));
                    }
                }
            }
        }
    }
    let show = |v: &[String]| v.iter().take(20).cloned().collect::<Vec<_>>().join("\n");
    assert!(
        refused.is_empty() && disagree.is_empty(),
        "{} refused, {} disagreements of {} cases\nrefused:\n{}\ndisagreements:\n{}",
        refused.len(),
        disagree.len(),
        data.cases.len(),
        show(&refused),
        show(&disagree)
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
