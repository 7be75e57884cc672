//! What the client has mapped right now, read from /proc/self/maps: the client
//! maps objects itself (through a libc handle we cannot interpose), so this is
//! how the driver learns GPU == CPU addresses, and what MAP_USER_MEM ranges are
//! still mapped and with which permissions.

/// One line of /proc/self/maps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Vma {
    pub start: u64,
    pub end: u64,
    pub readable: bool,
    pub writable: bool,
    /// Offset into the mapped file (0 for anonymous memory).
    pub offset: u64,
    /// Device major, minor and inode of the mapped file (0s when anonymous).
    pub dev: (u32, u32),
    pub inode: u64,
}

impl Vma {
    /// Whether this maps the file with this device and inode.
    pub fn maps_file(&self, major: u32, minor: u32, inode: u64) -> bool {
        self.inode == inode && self.dev == (major, minor)
    }
}

/// Every mapping in `maps_text` (the /proc/self/maps format), in address order.
pub fn parse(maps_text: &str) -> Vec<Vma> {
    maps_text.lines().filter_map(parse_line).collect()
}

/// This process's mappings now (empty if /proc is unreadable: then nothing is
/// registered and GPU accesses fault instead of touching unknown memory).
pub fn current() -> Vec<Vma> {
    parse(&std::fs::read_to_string("/proc/self/maps").unwrap_or_default())
}

fn parse_line(line: &str) -> Option<Vma> {
    let mut f = line.split_ascii_whitespace();
    let range = f.next()?;
    let perms = f.next()?.as_bytes();
    let offset = u64::from_str_radix(f.next()?, 16).ok()?;
    let (maj, min) = f.next()?.split_once(':')?;
    let inode: u64 = f.next()?.parse().ok()?;
    let (s, e) = range.split_once('-')?;
    Some(Vma {
        start: u64::from_str_radix(s, 16).ok()?,
        end: u64::from_str_radix(e, 16).ok()?,
        readable: perms.first() == Some(&b'r'),
        writable: perms.get(1) == Some(&b'w'),
        offset,
        dev: (
            u32::from_str_radix(maj, 16).ok()?,
            u32::from_str_radix(min, 16).ok()?,
        ),
        inode,
    })
}

/// The pieces of `[start, start + len)` that `vmas` (sorted, as parsed) cover,
/// clipped to the range, in order; gaps between them are unmapped.
pub fn covering(vmas: &[Vma], start: u64, len: u64) -> impl Iterator<Item = (u64, u64, &Vma)> {
    let end = start.saturating_add(len);
    let first = vmas.partition_point(|v| v.end <= start);
    vmas[first..]
        .iter()
        .take_while(move |v| v.start < end)
        .map(move |v| (v.start.max(start), v.end.min(end), v))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
7f4350000000-7f4351000000 rw-s 00003000 00:01 4242                       /memfd:wavejit-kgsl (deleted)
7f4351000000-7f4351001000 r--s 00000000 00:01 4243                       /memfd:other (deleted)
7f4352000000-7f4352002000 ---s 0000a000 00:01 4242                       /memfd:wavejit-kgsl (deleted)
7f4352002000-7f4352004000 r--p 00000000 00:00 0
7f4352005000-7f4352006000 rw-p 00000000 00:00 0
";

    #[test]
    fn parses_permissions_offsets_and_files() {
        let v = parse(TEXT);
        assert_eq!(v.len(), 5);
        assert_eq!(
            v[0],
            Vma {
                start: 0x7f43_5000_0000,
                end: 0x7f43_5100_0000,
                readable: true,
                writable: true,
                offset: 0x3000,
                dev: (0, 1),
                inode: 4242,
            }
        );
        assert!(v[0].maps_file(0, 1, 4242) && !v[1].maps_file(0, 1, 4242));
        assert_eq!((v[1].readable, v[1].writable), (true, false));
        assert_eq!(
            (v[2].readable, v[2].writable, v[2].offset),
            (false, false, 0xa000)
        );
        assert_eq!((v[3].dev, v[3].inode), ((0, 0), 0));
    }

    #[test]
    fn covering_clips_and_shows_holes() {
        let v = parse(TEXT);
        let pieces: Vec<(u64, u64)> = covering(&v, 0x7f43_5200_1000, 0x5000)
            .map(|(s, e, _)| (s, e))
            .collect();
        // 0x...4000-0x...5000 is a hole: the next piece starts after it.
        assert_eq!(
            pieces,
            vec![
                (0x7f43_5200_1000, 0x7f43_5200_2000),
                (0x7f43_5200_2000, 0x7f43_5200_4000),
                (0x7f43_5200_5000, 0x7f43_5200_6000),
            ]
        );
        assert_eq!(covering(&v, 0x1000, 0x1000).count(), 0);
        assert_eq!(covering(&v, u64::MAX - 10, 100).count(), 0);
    }
}
