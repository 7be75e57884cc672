#[test]
fn scratch() {
    let text = std::fs::read_to_string("/tmp/scratch/k.wj").unwrap();
    let k = wavejit_ir::text::parse(&text).unwrap();
    let jit = wavejit_jit::Jit::default();
    let t = std::time::Instant::now();
    match jit.compile(&k, 256) {
        Ok(_) => eprintln!("compiled in {:?}", t.elapsed()),
        Err(e) => eprintln!("ERROR: {e}"),
    }
}
