//! Typed buffer arguments of the `run` subcommands: `TYPE:VALUES`, e.g.
//! `f32:1,2.5,-3`, `u32:0*16` (16 zeros), `i8:0x7f,-1`, and how to print them back.

use std::fmt::Write as _;

use super::UsageError;

/// Element type of a buffer given on the command line.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Elem {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
}

impl Elem {
    fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "i8" => Elem::I8,
            "u8" => Elem::U8,
            "i16" => Elem::I16,
            "u16" => Elem::U16,
            "i32" => Elem::I32,
            "u32" => Elem::U32,
            "i64" => Elem::I64,
            "u64" => Elem::U64,
            "f16" => Elem::F16,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }

    pub fn size(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 | Elem::F16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    fn encode(self, text: &str) -> Result<Vec<u8>, String> {
        let int = |t: &str| -> Result<i128, String> {
            let (neg, digits) = match t.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, t),
            };
            let v = match digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
            {
                Some(h) => i128::from_str_radix(h, 16),
                None => digits.parse::<i128>(),
            }
            .map_err(|e| format!("`{t}`: {e}"))?;
            Ok(if neg { -v } else { v })
        };
        let ranged = |v: i128, lo: i128, hi: i128| -> Result<i128, String> {
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(format!("`{text}` does not fit {self:?}"))
            }
        };
        let float = |t: &str| t.parse::<f64>().map_err(|e| format!("`{t}`: {e}"));
        Ok(match self {
            Elem::I8 => vec![ranged(int(text)?, -128, 255)? as u8],
            Elem::U8 => vec![ranged(int(text)?, 0, 255)? as u8],
            Elem::I16 => (ranged(int(text)?, -32768, 65535)? as u16)
                .to_le_bytes()
                .to_vec(),
            Elem::U16 => (ranged(int(text)?, 0, 65535)? as u16)
                .to_le_bytes()
                .to_vec(),
            Elem::I32 => (ranged(int(text)?, i32::MIN.into(), u32::MAX.into())? as u32)
                .to_le_bytes()
                .to_vec(),
            Elem::U32 => (ranged(int(text)?, 0, u32::MAX.into())? as u32)
                .to_le_bytes()
                .to_vec(),
            Elem::I64 => (ranged(int(text)?, i64::MIN.into(), u64::MAX.into())? as u64)
                .to_le_bytes()
                .to_vec(),
            Elem::U64 => (ranged(int(text)?, 0, u64::MAX.into())? as u64)
                .to_le_bytes()
                .to_vec(),
            Elem::F16 => half::f16::from_f64(float(text)?).to_le_bytes().to_vec(),
            Elem::F32 => (float(text)? as f32).to_le_bytes().to_vec(),
            Elem::F64 => float(text)?.to_le_bytes().to_vec(),
        })
    }

    fn format(self, b: &[u8]) -> String {
        let u = |n: usize| -> u64 {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(&b[..n]);
            u64::from_le_bytes(a)
        };
        match self {
            Elem::I8 => (b[0] as i8).to_string(),
            Elem::U8 => b[0].to_string(),
            Elem::I16 => (u(2) as u16 as i16).to_string(),
            Elem::U16 => u(2).to_string(),
            Elem::I32 => (u(4) as u32 as i32).to_string(),
            Elem::U32 => u(4).to_string(),
            Elem::I64 => (u(8) as i64).to_string(),
            Elem::U64 => u(8).to_string(),
            Elem::F16 => format!("{:?}", half::f16::from_bits(u(2) as u16).to_f32()),
            Elem::F32 => format!("{:?}", f32::from_bits(u(4) as u32)),
            Elem::F64 => format!("{:?}", f64::from_bits(u(8))),
        }
    }
}

/// A typed list of values: a buffer's initial contents or a scalar argument.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedValues {
    pub elem: Elem,
    pub bytes: Vec<u8>,
}

impl TypedValues {
    /// Parses `TYPE:V,V,...` where an item may be `V*N` (N copies); a value
    /// that does not parse is a usage error.
    pub fn parse(spec: &str) -> Result<TypedValues, UsageError> {
        TypedValues::parse_text(spec).map_err(UsageError)
    }

    fn parse_text(spec: &str) -> Result<TypedValues, String> {
        let (ty, values) = spec
            .split_once(':')
            .ok_or_else(|| format!("`{spec}`: expected TYPE:VALUES, e.g. f32:1,2,3"))?;
        let elem = Elem::parse(ty).ok_or_else(|| {
            format!("`{ty}`: unknown element type (i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64)")
        })?;
        let mut bytes = Vec::new();
        for item in values.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (v, n) = match item.split_once('*') {
                Some((v, n)) => (
                    v,
                    n.parse::<usize>()
                        .map_err(|e| format!("`{item}`: bad repeat count: {e}"))?,
                ),
                None => (item, 1),
            };
            let one = elem.encode(v)?;
            for _ in 0..n {
                bytes.extend_from_slice(&one);
            }
        }
        if bytes.is_empty() {
            return Err(format!("`{spec}`: no values"));
        }
        Ok(TypedValues { elem, bytes })
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.bytes.len() / self.elem.size()
    }

    /// `[v0, v1, ...]` of `bytes` read as this element type.
    pub fn format(elem: Elem, bytes: &[u8]) -> String {
        let mut s = String::from("[");
        for (i, c) in bytes.chunks_exact(elem.size()).enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{}", elem.format(c));
        }
        s.push(']');
        s
    }
}

/// Parses `X,Y,Z` (missing trailing dimensions are 1); a usage error if it
/// does not parse.
pub fn parse_dims(s: &str) -> Result<[u32; 3], UsageError> {
    dims_text(s).map_err(UsageError)
}

fn dims_text(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}`: expected X[,Y[,Z]]"));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        d[i] = p
            .trim()
            .parse()
            .map_err(|e| format!("`{s}`: dimension {i}: {e}"))?;
        if d[i] == 0 {
            return Err(format!("`{s}`: dimension {i} is 0"));
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_to_little_endian_bytes() {
        let v = TypedValues::parse("u32:1,0x10*2").unwrap();
        assert_eq!(v.bytes, [1, 0, 0, 0, 16, 0, 0, 0, 16, 0, 0, 0]);
        assert_eq!(v.len(), 3);
        let f = TypedValues::parse("f32:-1.5").unwrap();
        assert_eq!(f.bytes, (-1.5f32).to_le_bytes());
        assert_eq!(TypedValues::format(Elem::F32, &f.bytes), "[-1.5]");
        let i = TypedValues::parse("i8:-1,127").unwrap();
        assert_eq!(TypedValues::format(Elem::I8, &i.bytes), "[-1, 127]");
        assert!(TypedValues::parse("u8:256").is_err());
        assert!(TypedValues::parse("q9:1").is_err());
        assert!(TypedValues::parse("f32:").is_err());
        assert_eq!(parse_dims("4,2").unwrap(), [4, 2, 1]);
        assert!(parse_dims("0").is_err());
    }
}
