//! [`Short`]: an immutable string kept inline when it fits in 30 bytes, on the heap when
//! not. An outline holds four strings (event id, time, call id, tool name), and the 38,000
//! outlines of a 55 MB conversation made 150,000 heap allocations of them on every read of
//! the outline index, a third of its decoding. Ids (26 bytes), times (24) and the call
//! ids of the common tools (`toolu_…`, `call_…`: 29 to 30) all fit.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

const INLINE: usize = 30;

/// A string of any length, without an allocation up to 30 bytes.
#[derive(Clone)]
pub struct Short(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl Short {
    pub fn new(text: &str) -> Short {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Short(Repr::Inline { len: text.len() as u8, bytes })
        } else {
            Short(Repr::Heap(text.into()))
        }
    }

    /// `bytes` as a string, if they are UTF-8. Short ASCII (every id and time convo writes)
    /// is checked a word at a time: the general check was a tenth of decoding outlines.
    pub fn from_utf8(bytes: &[u8]) -> Option<Short> {
        if bytes.len() <= INLINE {
            let mut padded = [0u8; 32];
            padded[..bytes.len()].copy_from_slice(bytes);
            let high =
                padded.chunks_exact(8).fold(0, |acc, w| acc | u64::from_ne_bytes(w.try_into().unwrap_or([0; 8])));
            if high & 0x8080_8080_8080_8080 == 0 {
                let mut inline = [0u8; INLINE];
                inline.copy_from_slice(&padded[..INLINE]);
                return Some(Short(Repr::Inline { len: bytes.len() as u8, bytes: inline }));
            }
        }
        std::str::from_utf8(bytes).ok().map(Short::new)
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            // SAFETY: the bytes are those of a `&str` copied whole in `new` (a UTF-8 string
            // cut at its own length), or ASCII checked in `from_utf8`, and never changed.
            Repr::Inline { len, bytes } => unsafe { std::str::from_utf8_unchecked(&bytes[..*len as usize]) },
            Repr::Heap(text) => text,
        }
    }
}

impl Default for Short {
    fn default() -> Short {
        Short::new("")
    }
}

impl Deref for Short {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Short {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Short {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Short {
    fn from(text: &str) -> Short {
        Short::new(text)
    }
}

impl From<String> for Short {
    fn from(text: String) -> Short {
        Short::new(&text)
    }
}

impl From<&String> for Short {
    fn from(text: &String) -> Short {
        Short::new(text)
    }
}

impl PartialEq for Short {
    fn eq(&self, other: &Short) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Short {}

impl PartialEq<str> for Short {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Short {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Short {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialOrd for Short {
    fn partial_cmp(&self, other: &Short) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Short {
    fn cmp(&self, other: &Short) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// As `str` hashes, so a map keyed by `Short` is searched by `&str`.
impl Hash for Short {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Debug for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_strings_read_back_as_given() {
        let long = "x".repeat(31);
        for text in ["", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "toolu_01A09q90qw90lq917835lq9", "é∂ƒ☃", &long, &"y".repeat(500)]
        {
            let short = Short::new(text);
            assert_eq!(short.as_str(), text);
            assert_eq!(short, Short::from(text.to_owned()));
            assert_eq!(format!("{short}"), text);
            assert_eq!(format!("{short:?}"), format!("{text:?}"));
        }
        assert!(matches!(Short::new(&"z".repeat(30)).0, Repr::Inline { .. }));
        for text in ["", "2026-11-26T08:30:32.123Z", "é∂ƒ☃", &long, &"a".repeat(30)] {
            assert_eq!(Short::from_utf8(text.as_bytes()), Some(Short::new(text)));
        }
        // Not UTF-8, short and long, and a high byte in each word of the ASCII check.
        assert_eq!(Short::from_utf8(b"\xff"), None);
        assert_eq!(Short::from_utf8(&[b'a'; 40].iter().copied().chain([0xC3]).collect::<Vec<u8>>()), None);
        for at in [0, 7, 8, 15, 23, 29] {
            let mut bytes = [b'x'; 30];
            bytes[at] = 0x80;
            assert_eq!(Short::from_utf8(&bytes), None, "{at}");
        }
        assert!(matches!(Short::new(&long).0, Repr::Heap(_)));
        assert!(Short::new("a") < Short::new(&"b".repeat(40)));
        let map: std::collections::HashMap<Short, u8> = [(Short::new("key"), 1)].into_iter().collect();
        assert_eq!(map.get("key"), Some(&1));
        assert_eq!(std::mem::size_of::<Short>(), 32);
    }
}
