//! Which client mappings of the device's memfd exist right now, read from
//! /proc/self/maps: the client maps objects itself (through a libc handle we
//! cannot interpose), so this is how the driver learns GPU == CPU addresses.

/// One mapping of the memfd: client range and the file offset it starts at.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FileMapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub writable: bool,
}

/// Mappings in `maps_text` (the /proc/self/maps format) of the file with this
/// device major:minor and inode.
pub fn mappings_of(maps_text: &str, major: u32, minor: u32, inode: u64) -> Vec<FileMapping> {
    maps_text
        .lines()
        .filter_map(|l| parse_line(l, major, minor, inode))
        .collect()
}

fn parse_line(line: &str, major: u32, minor: u32, inode: u64) -> Option<FileMapping> {
    let mut f = line.split_ascii_whitespace();
    let range = f.next()?;
    let perms = f.next()?;
    let offset = u64::from_str_radix(f.next()?, 16).ok()?;
    let dev = f.next()?;
    let ino: u64 = f.next()?.parse().ok()?;
    let (maj, min) = dev.split_once(':')?;
    if ino != inode
        || u32::from_str_radix(maj, 16).ok()? != major
        || u32::from_str_radix(min, 16).ok()? != minor
    {
        return None;
    }
    let (s, e) = range.split_once('-')?;
    Some(FileMapping {
        start: u64::from_str_radix(s, 16).ok()?,
        end: u64::from_str_radix(e, 16).ok()?,
        offset,
        writable: perms.as_bytes().get(1) == Some(&b'w'),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_the_memfd_mappings() {
        let text = "\
7f4350000000-7f4351000000 rw-s 00003000 00:01 4242                       /memfd:wavejit-kgsl (deleted)
7f4351000000-7f4351001000 r--s 00000000 00:01 4243                       /memfd:other (deleted)
7f4352000000-7f4352002000 r--s 0000a000 00:01 4242                       /memfd:wavejit-kgsl (deleted)
55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0                          [heap]
";
        assert_eq!(
            mappings_of(text, 0, 1, 4242),
            vec![
                FileMapping {
                    start: 0x7f43_5000_0000,
                    end: 0x7f43_5100_0000,
                    offset: 0x3000,
                    writable: true
                },
                FileMapping {
                    start: 0x7f43_5200_0000,
                    end: 0x7f43_5200_2000,
                    offset: 0xa000,
                    writable: false
                },
            ]
        );
    }
}
