//! ELF32 loader tests: hand-built images (always run) and, when GNU binutils for
//! RISC-V are on PATH, a real executable assembled from `tests/rv32/elf_smoke.S`
//! (skipped with a message otherwise, unless `CI` is set).

use std::path::PathBuf;
use std::process::Command;

use wavejit_frontend::rv32::{
    DisasmOptions, ElfError, LoadedImage, SegmentFlags, disasm_listing, disasm_program, is_elf,
    load_elf, load_image,
};

/// One program header worth of test input.
struct Seg {
    p_type: u32,
    vaddr: u32,
    data: Vec<u8>,
    memsz: u32,
    flags: u32,
}

/// Builds an ELF32 LE RISC-V executable: header, program headers, then segment data.
fn build_elf(entry: u32, segs: &[Seg]) -> Vec<u8> {
    let phoff = 52u32;
    let mut data_off = phoff + 32 * segs.len() as u32;
    let mut out = Vec::new();
    out.extend_from_slice(b"\x7fELF");
    out.extend_from_slice(&[1, 1, 1, 0]); // ELF32, LE, version 1, SysV
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    out.extend_from_slice(&243u16.to_le_bytes()); // EM_RISCV
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&entry.to_le_bytes());
    out.extend_from_slice(&phoff.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // e_shoff
    out.extend_from_slice(&2u32.to_le_bytes()); // e_flags: single-float ABI
    out.extend_from_slice(&52u16.to_le_bytes());
    out.extend_from_slice(&32u16.to_le_bytes());
    out.extend_from_slice(&(segs.len() as u16).to_le_bytes());
    out.extend_from_slice(&40u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    assert_eq!(out.len(), 52);
    for s in segs {
        for v in [
            s.p_type,
            data_off,
            s.vaddr,
            s.vaddr,
            s.data.len() as u32,
            s.memsz,
            s.flags,
            4,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        data_off += s.data.len() as u32;
    }
    for s in segs {
        out.extend_from_slice(&s.data);
    }
    out
}

fn code_and_data() -> Vec<Seg> {
    let code: Vec<u8> = [0x0000_0013u32, 0x0010_0073]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    vec![
        // Out of address order on purpose: the loader sorts.
        Seg {
            p_type: 1,
            vaddr: 0x2000,
            data: vec![1, 2, 3],
            memsz: 0x100,
            flags: 6,
        },
        Seg {
            p_type: 4, // PT_NOTE: ignored
            vaddr: 0,
            data: vec![9; 4],
            memsz: 4,
            flags: 4,
        },
        Seg {
            p_type: 1,
            vaddr: 0x0,
            data: code,
            memsz: 8,
            flags: 5,
        },
    ]
}

#[test]
fn loads_segments_in_address_order() {
    let bytes = build_elf(4, &code_and_data());
    assert!(is_elf(&bytes));
    let image = load_elf(&bytes).expect("valid ELF");
    assert_eq!(image.entry, 4);
    assert_eq!(image.elf_flags, 2);
    assert!(!image.uses_compressed());
    assert_eq!(image.segments.len(), 2);
    let code = &image.segments[0];
    assert_eq!((code.vaddr, code.mem_size), (0, 8));
    assert_eq!(
        code.flags,
        SegmentFlags {
            read: true,
            write: false,
            execute: true
        }
    );
    assert_eq!(
        disasm_program(&code.data, code.vaddr),
        Ok(vec!["nop".to_string(), "ebreak".to_string()])
    );
    let data = &image.segments[1];
    assert_eq!(
        (data.vaddr, data.mem_size, data.end()),
        (0x2000, 0x100, 0x2100)
    );
    assert_eq!(data.data, vec![1, 2, 3]);
    assert!(!data.flags.execute && data.flags.write);
    assert_eq!(image.code_segments().count(), 1);
}

#[test]
fn raw_images_fall_back_to_one_segment() {
    let raw = 0x0010_0073u32.to_le_bytes();
    let image = load_image(&raw, 0x400).expect("raw image");
    assert_eq!(image, LoadedImage::from_raw(&raw, 0x400));
    assert_eq!(image.entry, 0x400);
    assert_eq!(image.segments[0].mem_size, 4);
    assert_eq!(image.segments[0].flags, SegmentFlags::RWX);
}

#[test]
fn malformed_files_are_rejected_with_offsets() {
    let good = build_elf(0, &code_and_data());

    let mut v = good.clone();
    v.truncate(40);
    assert_eq!(
        load_elf(&v),
        Err(ElfError::Truncated {
            offset: 0,
            needed: 52,
            len: 40
        })
    );

    let mut v = good.clone();
    v[0] = 0;
    assert_eq!(load_elf(&v), Err(ElfError::BadMagic));
    let mut v = good.clone();
    v[4] = 2;
    assert_eq!(load_elf(&v), Err(ElfError::NotElf32(2)));
    let mut v = good.clone();
    v[5] = 2;
    assert_eq!(load_elf(&v), Err(ElfError::NotLittleEndian(2)));
    let mut v = good.clone();
    v[0x12] = 62; // x86-64
    assert_eq!(load_elf(&v), Err(ElfError::NotRiscv(62)));
    let mut v = good.clone();
    v[0x10] = 1; // ET_REL
    assert_eq!(load_elf(&v), Err(ElfError::NotExecutable(1)));
    let mut v = good.clone();
    v[0x2A] = 40;
    assert_eq!(load_elf(&v), Err(ElfError::BadPhentsize(40)));

    // Program header table cut off: the error names the header offset.
    let mut v = good.clone();
    v.truncate(52 + 32 + 10);
    assert_eq!(
        load_elf(&v),
        Err(ElfError::Truncated {
            offset: 52,
            needed: 3 * 32,
            len: 94
        })
    );

    // Segment data beyond the end of the file.
    let mut v = good.clone();
    let len = v.len();
    v.truncate(len - 1);
    assert!(matches!(
        load_elf(&v),
        Err(ElfError::SegmentOutOfFile {
            index: 2,
            header: 116,
            ..
        })
    ));

    let segs = vec![Seg {
        p_type: 1,
        vaddr: 0,
        data: vec![0; 8],
        memsz: 4,
        flags: 5,
    }];
    assert!(matches!(
        load_elf(&build_elf(0, &segs)),
        Err(ElfError::FileSizeExceedsMemSize {
            index: 0,
            filesz: 8,
            memsz: 4,
            ..
        })
    ));

    let segs = vec![Seg {
        p_type: 1,
        vaddr: 0xFFFF_FFF0,
        data: vec![],
        memsz: 0x20,
        flags: 6,
    }];
    assert!(matches!(
        load_elf(&build_elf(0, &segs)),
        Err(ElfError::AddressOverflow { index: 0, .. })
    ));

    let overlapping = vec![
        Seg {
            p_type: 1,
            vaddr: 0,
            data: vec![0; 4],
            memsz: 0x10,
            flags: 5,
        },
        Seg {
            p_type: 1,
            vaddr: 0x8,
            data: vec![],
            memsz: 0x10,
            flags: 6,
        },
    ];
    assert_eq!(
        load_elf(&build_elf(0, &overlapping)),
        Err(ElfError::Overlap {
            first: 0,
            second: 1
        })
    );

    let none = vec![Seg {
        p_type: 1,
        vaddr: 0,
        data: vec![],
        memsz: 0,
        flags: 5,
    }];
    assert_eq!(
        load_elf(&build_elf(0, &none)),
        Err(ElfError::NoLoadableSegments)
    );
}

fn tool(name: &str) -> String {
    format!("riscv64-unknown-elf-{name}")
}

fn tools_available() -> bool {
    ["as", "ld", "objcopy", "nm"].iter().all(|t| {
        Command::new(tool(t))
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("spawn binutils");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Assembles and links `tests/rv32/elf_smoke.S`, loads the ELF and checks entry,
/// segments and that the code equals `objcopy -O binary` of `.text`.
#[test]
fn real_toolchain_executable() {
    if !tools_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "RISC-V binutils not on PATH but CI is set"
        );
        eprintln!("SKIP: riscv64-unknown-elf binutils not on PATH");
        return;
    }
    let src = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/rv32/elf_smoke.S"
    ));
    let dir = std::env::temp_dir().join(format!("wavejit-rv32-elf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (obj, elf, bin) = (
        dir.join("smoke.o"),
        dir.join("smoke.elf"),
        dir.join("smoke.bin"),
    );
    run(Command::new(tool("as"))
        .args(["-march=rv32imf_zicsr_zifencei", "-mabi=ilp32f", "-o"])
        .arg(&obj)
        .arg(&src));
    run(Command::new(tool("ld"))
        .args([
            "-m",
            "elf32lriscv",
            "-Ttext=0",
            "-Tdata=0x2000",
            "--no-relax",
        ])
        .args(["-e", "_start", "-o"])
        .arg(&elf)
        .arg(&obj));
    run(Command::new(tool("objcopy"))
        .args(["-O", "binary", "--only-section=.text"])
        .arg(&elf)
        .arg(&bin));
    let nm = String::from_utf8(run(Command::new(tool("nm")).arg(&elf))).expect("utf8");
    let start = nm
        .lines()
        .find_map(|l| l.strip_suffix(" T _start"))
        .and_then(|addr| u32::from_str_radix(addr, 16).ok())
        .expect("_start in nm output");

    let bytes = std::fs::read(&elf).expect("read elf");
    let text = std::fs::read(&bin).expect("read bin");
    let _ = std::fs::remove_dir_all(&dir);

    let image = load_image(&bytes, 0).expect("load ELF");
    assert_eq!(image.entry, start);
    assert_eq!(start, 0x14, "entry is the second function");
    let code: Vec<_> = image.code_segments().collect();
    assert_eq!(code.len(), 1);
    assert_eq!(code[0].vaddr, 0);
    assert_eq!(code[0].data, text);
    let data = image
        .segments
        .iter()
        .find(|s| s.vaddr == 0x2000)
        .expect("data segment at 0x2000");
    assert_eq!(&data.data[..4], &2.5f32.to_le_bytes());

    let listing = disasm_program(&code[0].data, 0).expect("all code decodes");
    assert_eq!(listing[1], "fcvt.e4m3.s\tft2,ft1");
    assert_eq!(listing[2], "fcvt.s.e4m3\tft3,ft2");
    assert_eq!(listing[5], "csrr\tt1,mhartid");
    assert_eq!(listing.last().map(String::as_str), Some("ebreak"));
    // The lenient listing agrees where everything decodes.
    let lenient: Vec<String> = disasm_listing(&code[0].data, 0, DisasmOptions::OBJDUMP)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(lenient, listing);
}
