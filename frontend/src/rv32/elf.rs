//! Minimal ELF32 little-endian RISC-V loader: PT_LOAD segments and the entry point.
//! Raw images (no ELF magic) are wrapped as one segment at a caller-chosen base.

use thiserror::Error;

const EM_RISCV: u16 = 243;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const PT_LOAD: u32 = 1;
const EHDR_SIZE: usize = 52;
const PHDR_SIZE: usize = 32;
/// e_flags bit: the object may contain compressed (C) instructions.
const EF_RISCV_RVC: u32 = 0x1;

/// Why an ELF file could not be loaded. Offsets are byte offsets into the file.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ElfError {
    #[error("file too short: need {needed} bytes at offset {offset:#x}, file has {len}")]
    Truncated {
        offset: usize,
        needed: usize,
        len: usize,
    },
    #[error("not an ELF file (bad magic at offset 0)")]
    BadMagic,
    #[error("not ELF32 (EI_CLASS = {0} at offset 4)")]
    NotElf32(u8),
    #[error("not little-endian (EI_DATA = {0} at offset 5)")]
    NotLittleEndian(u8),
    #[error("not a RISC-V ELF (e_machine = {0} at offset 0x12)")]
    NotRiscv(u16),
    #[error("not an executable (e_type = {0} at offset 0x10)")]
    NotExecutable(u16),
    #[error("unexpected program header entry size {0} (want 32) at offset 0x2a")]
    BadPhentsize(u16),
    #[error(
        "segment {index} (header at {header:#x}): file range {offset:#x}+{filesz:#x} outside the file ({len} bytes)"
    )]
    SegmentOutOfFile {
        index: usize,
        header: usize,
        offset: u32,
        filesz: u32,
        len: usize,
    },
    #[error("segment {index} (header at {header:#x}): p_filesz {filesz:#x} > p_memsz {memsz:#x}")]
    FileSizeExceedsMemSize {
        index: usize,
        header: usize,
        filesz: u32,
        memsz: u32,
    },
    #[error(
        "segment {index} (header at {header:#x}): {vaddr:#x}+{memsz:#x} wraps the 32-bit address space"
    )]
    AddressOverflow {
        index: usize,
        header: usize,
        vaddr: u32,
        memsz: u32,
    },
    #[error("segments {first} and {second} overlap in memory")]
    Overlap { first: usize, second: usize },
    #[error("no PT_LOAD segment with a non-zero size")]
    NoLoadableSegments,
}

/// Segment permissions (p_flags: X = 1, W = 2, R = 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SegmentFlags {
    pub read: bool,
    pub write: bool,
    pub execute: bool,
}

impl SegmentFlags {
    pub const RWX: SegmentFlags = SegmentFlags {
        read: true,
        write: true,
        execute: true,
    };

    fn from_p_flags(p_flags: u32) -> Self {
        Self {
            read: p_flags & 4 != 0,
            write: p_flags & 2 != 0,
            execute: p_flags & 1 != 0,
        }
    }
}

/// One loadable segment: `data` goes to `vaddr`, the rest up to `mem_size` is zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u32,
    pub data: Vec<u8>,
    pub mem_size: u32,
    pub flags: SegmentFlags,
}

impl Segment {
    /// One past the last byte of the segment in memory.
    pub fn end(&self) -> u64 {
        u64::from(self.vaddr) + u64::from(self.mem_size)
    }
}

/// A program ready to be copied into device memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedImage {
    pub entry: u32,
    /// Sorted by address, non-overlapping.
    pub segments: Vec<Segment>,
    /// ELF e_flags (0 for raw images).
    pub elf_flags: u32,
}

impl LoadedImage {
    /// A raw binary placed at `base`, entered at `base`.
    pub fn from_raw(bytes: &[u8], base: u32) -> Self {
        Self {
            entry: base,
            segments: vec![Segment {
                vaddr: base,
                data: bytes.to_vec(),
                mem_size: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
                flags: SegmentFlags::RWX,
            }],
            elf_flags: 0,
        }
    }

    /// True if the ELF says it may contain compressed instructions (unsupported by
    /// the device; the decoder will reject them).
    pub fn uses_compressed(&self) -> bool {
        self.elf_flags & EF_RISCV_RVC != 0
    }

    /// Segments marked executable.
    pub fn code_segments(&self) -> impl Iterator<Item = &Segment> {
        self.segments.iter().filter(|s| s.flags.execute)
    }
}

/// True if `bytes` starts with the ELF magic.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

/// Loads an ELF if `bytes` has the ELF magic, else treats them as a raw image at
/// `raw_base`.
pub fn load_image(bytes: &[u8], raw_base: u32) -> Result<LoadedImage, ElfError> {
    if is_elf(bytes) {
        load_elf(bytes)
    } else {
        Ok(LoadedImage::from_raw(bytes, raw_base))
    }
}

/// Little-endian field reader with bounds checks that report the offset.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes(&self, offset: usize, needed: usize) -> Result<&[u8], ElfError> {
        let truncated = ElfError::Truncated {
            offset,
            needed,
            len: self.0.len(),
        };
        let end = offset.checked_add(needed).ok_or(truncated.clone())?;
        self.0.get(offset..end).ok_or(truncated)
    }
    fn u8(&self, offset: usize) -> Result<u8, ElfError> {
        Ok(self.bytes(offset, 1)?[0])
    }
    fn u16(&self, offset: usize) -> Result<u16, ElfError> {
        let b = self.bytes(offset, 2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&self, offset: usize) -> Result<u32, ElfError> {
        let b = self.bytes(offset, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// Parses an ELF32 LE RISC-V executable and returns its PT_LOAD segments (those with
/// p_memsz > 0) and entry point.
pub fn load_elf(bytes: &[u8]) -> Result<LoadedImage, ElfError> {
    let r = Reader(bytes);
    r.bytes(0, EHDR_SIZE)?;
    if !is_elf(bytes) {
        return Err(ElfError::BadMagic);
    }
    match r.u8(4)? {
        1 => {}
        class => return Err(ElfError::NotElf32(class)),
    }
    match r.u8(5)? {
        1 => {}
        data => return Err(ElfError::NotLittleEndian(data)),
    }
    let e_type = r.u16(0x10)?;
    if e_type != ET_EXEC && e_type != ET_DYN {
        return Err(ElfError::NotExecutable(e_type));
    }
    let machine = r.u16(0x12)?;
    if machine != EM_RISCV {
        return Err(ElfError::NotRiscv(machine));
    }
    let entry = r.u32(0x18)?;
    let phoff = r.u32(0x1C)? as usize;
    let elf_flags = r.u32(0x24)?;
    let phentsize = r.u16(0x2A)?;
    let phnum = usize::from(r.u16(0x2C)?);
    if phnum > 0 && usize::from(phentsize) != PHDR_SIZE {
        return Err(ElfError::BadPhentsize(phentsize));
    }

    // The whole program header table must be inside the file.
    r.bytes(phoff, phnum * PHDR_SIZE)?;
    let mut segments: Vec<(usize, Segment)> = Vec::new();
    for index in 0..phnum {
        let header = phoff + index * PHDR_SIZE;
        if r.u32(header)? != PT_LOAD {
            continue;
        }
        let offset = r.u32(header + 4)?;
        let vaddr = r.u32(header + 8)?;
        let filesz = r.u32(header + 16)?;
        let memsz = r.u32(header + 20)?;
        let p_flags = r.u32(header + 24)?;
        if memsz == 0 {
            continue;
        }
        if filesz > memsz {
            return Err(ElfError::FileSizeExceedsMemSize {
                index,
                header,
                filesz,
                memsz,
            });
        }
        if u64::from(vaddr) + u64::from(memsz) > 1 << 32 {
            return Err(ElfError::AddressOverflow {
                index,
                header,
                vaddr,
                memsz,
            });
        }
        let data = bytes
            .get(offset as usize..(offset as usize).saturating_add(filesz as usize))
            .ok_or(ElfError::SegmentOutOfFile {
                index,
                header,
                offset,
                filesz,
                len: bytes.len(),
            })?;
        segments.push((
            index,
            Segment {
                vaddr,
                data: data.to_vec(),
                mem_size: memsz,
                flags: SegmentFlags::from_p_flags(p_flags),
            },
        ));
    }
    if segments.is_empty() {
        return Err(ElfError::NoLoadableSegments);
    }
    segments.sort_by_key(|(_, s)| s.vaddr);
    for pair in segments.windows(2) {
        let ((first, a), (second, b)) = (&pair[0], &pair[1]);
        if a.end() > u64::from(b.vaddr) {
            return Err(ElfError::Overlap {
                first: *first,
                second: *second,
            });
        }
    }
    Ok(LoadedImage {
        entry,
        segments: segments.into_iter().map(|(_, s)| s).collect(),
        elf_flags,
    })
}
