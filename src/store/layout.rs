//! Where things live inside a store's tree. Pure path arithmetic, no I/O.
//!
//! ```text
//! conversations/<fan>/<id>/meta.json                       title, created, forked_from
//! conversations/<fan>/<id>/events/<group>/<segment>.jsonl  append-only event segments
//! ```
//!
//! `<fan>` is the id's last two characters (random in a ULID): with 10,000 conversations
//! the `conversations` tree every commit rewrites holds at most 1,024 short entries (30 KB)
//! instead of 10,000 (530 KB), and each fan folder about ten. Stores written before the
//! fan-out hold `conversations/<id>/` directly (the *legacy* shape): readers accept both
//! shapes, and a writer moves legacy folders into their fan folders under the lock before it
//! writes ([`Store::lock`](super::Store::lock)), so writers only ever see the fan-out.
//!
//! Appending rewrites only the open (last) segment, and only until it holds
//! [`SEGMENT_BYTES`]; then a new segment starts and the old one is never written again, so a
//! conversation's blobs grow linearly. Segments sit [`SEGMENTS_PER_GROUP`] to a folder so the
//! tree objects rewritten per commit stay small however long the conversation gets (a flat
//! folder of thousands of files rewrites a big tree object on every commit).

pub const CONVERSATIONS: &str = "conversations";
pub const META_FILE: &str = "meta.json";
pub const EVENTS_DIR: &str = "events";
/// The store's shared configuration, committed at the top of the tree.
pub const STORE_CONFIG: &str = "convo.toml";

/// A segment stops taking new lines once it holds this many bytes (a single larger line
/// still gets a segment of its own).
pub const SEGMENT_BYTES: usize = 16 * 1024;
pub const SEGMENTS_PER_GROUP: u64 = 64;

/// Whether `name` is a conversation id as convo mints them: a ULID in its canonical
/// (upper-case) spelling, so one conversation cannot hide under a second name.
pub fn is_conversation_id(name: &str) -> bool {
    name.len() == 26
        && name.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        && crate::clock::is_ulid(name)
}

/// Whether some conversation id could start with `prefix`: 1 to 26 characters of the
/// alphabet ids are written in (Crockford's base 32, upper case: no I, L, O or U). A title
/// that could not is looked up without reading the ids at all.
pub fn could_start_id(prefix: &str) -> bool {
    (1..=26).contains(&prefix.len())
        && prefix.bytes().all(|b| b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b)))
}

/// The fan folder of conversation `id`: its last two characters (the whole id if shorter,
/// which no valid id is).
pub fn fan(id: &str) -> &str {
    id.get(id.len().saturating_sub(2)..).unwrap_or(id)
}

/// Whether `name` is a fan folder's name: two characters an id can end with.
pub fn is_fan(name: &str) -> bool {
    name.len() == 2 && name.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

pub fn conversation_dir(id: &str) -> String {
    format!("{CONVERSATIONS}/{}/{id}", fan(id))
}

/// Where conversation `id` lived before the fan-out.
pub fn legacy_conversation_dir(id: &str) -> String {
    format!("{CONVERSATIONS}/{id}")
}

pub fn meta_path(id: &str) -> String {
    format!("{}/{META_FILE}", conversation_dir(id))
}

pub fn group_name(segment: u64) -> String {
    format!("{:04}", segment / SEGMENTS_PER_GROUP)
}

pub fn segment_name(segment: u64) -> String {
    let mut name = String::with_capacity(12);
    push_segment_name(&mut name, segment);
    name
}

/// [`segment_name`] onto `out`, without the formatting machinery: a long conversation
/// names thousands of segments on every read.
pub fn push_segment_name(out: &mut String, segment: u64) {
    let mut digits = [b'0'; 20];
    let mut at = digits.len();
    let mut n = segment;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // At least six digits, zero-padded.
    let start = at.min(digits.len() - 6);
    out.extend(digits[start..].iter().map(|d| char::from(*d)));
    out.push_str(".jsonl");
}

pub fn segment_path(id: &str, segment: u64) -> String {
    format!("{}/{EVENTS_DIR}/{}/{}", conversation_dir(id), group_name(segment), segment_name(segment))
}

/// The conversation a path below `conversations/` belongs to, in either shape, and the
/// path's parts below the conversation's folder: `conversations/<fan>/<id>/rest...` or the
/// legacy `conversations/<id>/rest...`. `None` for anything else, including an id in
/// another id's fan folder.
pub fn split_conversation_path(rel: &str) -> Option<(&str, Vec<&str>)> {
    let mut parts = rel.split('/');
    if parts.next() != Some(CONVERSATIONS) {
        return None;
    }
    let first = parts.next()?;
    if is_conversation_id(first) {
        return Some((first, parts.collect()));
    }
    let id = parts.next()?;
    (is_fan(first) && is_conversation_id(id) && fan(id) == first).then(|| (id, parts.collect()))
}

/// Whether `rel` (slash-separated, from the store's root) is a file convo writes: the
/// store's `convo.toml`, a conversation's `meta.json`, or an event segment, in either shape.
/// The working tree is written only at such paths, whatever a journal or a tree says.
pub fn is_store_path(rel: &str) -> bool {
    if rel == STORE_CONFIG {
        return true;
    }
    let Some((_, rest)) = split_conversation_path(rel) else { return false };
    match rest.as_slice() {
        [file] => *file == META_FILE,
        [events, group, segment] => {
            *events == EVENTS_DIR && parse_group_name(group).is_some() && parse_segment_name(segment).is_some()
        }
        _ => false,
    }
}

/// The segment number of a file name, if it is one convo wrote.
pub fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".jsonl")?;
    (digits.len() >= 6 && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.parse().ok()).flatten()
}

pub fn parse_group_name(name: &str) -> Option<u64> {
    (name.len() >= 4 && name.bytes().all(|b| b.is_ascii_digit())).then(|| name.parse().ok()).flatten()
}

/// Lay `lines` out after an open segment holding `open_len` bytes: returns, per segment
/// touched, its number and the lines it receives. The open segment keeps taking lines while
/// it stays within [`SEGMENT_BYTES`].
pub fn pack_lines(next_or_open: u64, open_len: usize, lines: &[String]) -> Vec<(u64, Vec<&String>)> {
    let mut out: Vec<(u64, Vec<&String>)> = Vec::new();
    let mut segment = next_or_open;
    let mut len = open_len;
    for line in lines {
        if len > 0 && len + line.len() > SEGMENT_BYTES {
            segment += 1;
            len = 0;
        }
        match out.last_mut() {
            Some((n, bucket)) if *n == segment => bucket.push(line),
            _ => out.push((segment, vec![line])),
        }
        len += line.len();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prefix_of_an_id_could_start_one_and_a_title_with_other_letters_cannot() {
        let clock = crate::clock::Clock::fixed(chrono::Utc::now());
        for _ in 0..50 {
            let id = clock.new_id();
            assert!(is_conversation_id(&id));
            assert!((1..=id.len()).all(|n| could_start_id(&id[..n])), "{id}");
        }
        for title in ["SCALE TARGET", "NOTES", "BUGFIX", "01ARZ3NDEKTSV4RRFFQ69G5FA1X", "", "01-"] {
            assert!(!could_start_id(title), "{title}");
        }
        assert!(could_start_id("DEADBEEF"));
    }

    #[test]
    fn segment_paths_group_by_sixty_four() {
        assert_eq!(segment_path("XYZ", 0), "conversations/YZ/XYZ/events/0000/000000.jsonl");
        assert_eq!(segment_path("XYZ", 64), "conversations/YZ/XYZ/events/0001/000064.jsonl");
        assert_eq!(parse_segment_name("000064.jsonl"), Some(64));
        assert_eq!(parse_segment_name("64.jsonl"), None);
        assert_eq!(parse_group_name("0001"), Some(1));
        for n in [0, 7, 64, 999_999, 1_000_000, 123_456_789, u64::MAX] {
            assert_eq!(segment_name(n), format!("{n:06}.jsonl"));
            assert_eq!(parse_segment_name(&segment_name(n)), Some(n));
        }
    }

    #[test]
    fn only_convo_paths_are_store_paths() {
        let id = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
        assert!(is_store_path("convo.toml"));
        assert!(is_store_path(&meta_path(id)));
        assert!(is_store_path(&segment_path(id, 70)));
        assert!(is_store_path(&format!("{}/meta.json", legacy_conversation_dir(id))));
        assert!(is_store_path(&format!("conversations/{id}/events/0001/000070.jsonl")));
        // An id in another id's fan folder, or a fan folder inside a legacy one.
        assert!(!is_store_path(&format!("conversations/AB/{id}/meta.json")));
        assert!(!is_store_path(&format!("conversations/{id}/AV/{id}/meta.json")));
        for bad in [".git/config", "../x", "conversations/../../x", "conversations/x/meta.json", "a/convo.toml"] {
            assert!(!is_store_path(bad), "{bad}");
        }
        assert!(!is_store_path(&format!("conversations/{id}/events/0000/../../../../.git/config")));
    }

    #[test]
    fn packing_fills_the_open_segment_then_starts_new_ones() {
        let line = "x".repeat(SEGMENT_BYTES / 2);
        let lines = vec![line.clone(), line.clone(), line.clone()];
        let packed = pack_lines(3, SEGMENT_BYTES / 2, &lines);
        let shape: Vec<(u64, usize)> = packed.iter().map(|(n, l)| (*n, l.len())).collect();
        assert_eq!(shape, vec![(3, 1), (4, 2)]);
    }

    #[test]
    fn an_oversized_line_gets_its_own_segment() {
        let big = "x".repeat(SEGMENT_BYTES * 2);
        let lines = vec![big, "y".into()];
        let packed = pack_lines(0, 10, &lines);
        let shape: Vec<(u64, usize)> = packed.iter().map(|(n, l)| (*n, l.len())).collect();
        assert_eq!(shape, vec![(1, 1), (2, 1)]);
    }
}
