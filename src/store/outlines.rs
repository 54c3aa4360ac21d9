//! The outline index: `.git/convo/outline/<id>`, each segment of a conversation outlined
//! once ([`crate::event::outline`]), so that planning a compaction or projecting the view of a
//! 55 MB conversation reads a few MB instead of inflating and parsing every event.
//!
//! A record is keyed by its segment's blob id: a blob never changes, so a record is right
//! for every commit that holds it, whatever happened since (an append, a pull, a `git
//! reset`), and nothing has to be kept in step by writers. Readers outline the segments
//! they find no record for (after an append, only the open segment) and append records.
//! Each record carries a checksum; one that is torn, damaged or from another format is not
//! believed, and the segment is outlined again. The file is rewritten, with only the
//! records HEAD uses, when dead records outweigh live ones. Like everything under
//! `.git/convo/`, it is disposable.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Arc;

use gix::ObjectId;

use super::{Result, Store, StoreError, create_private_dir, txn::private_options, txn::write_private_file};
use crate::event::outline::{Brief, Outline, Outlined, Shape, outline_segment};
use crate::event::short::Short;
use crate::event::trail::Outcome;
use crate::event::{self, Event};

const DIR: &str = "outline";
/// Starts every record; a new record format takes a new byte (0xB5: outlines say whether
/// the event is scaffolding; 0xB6: Claude Code's caveat is, its other `isMeta` lines not;
/// 0xB7: a Python traceback's error line is its exception, which a record holds).
const MAGIC: u8 = 0xB7;
/// Magic, blob id, payload length, checksum.
const HEADER: usize = 1 + 20 + 4 + 8;

/// A conversation outlined at HEAD, and the segments it was read from (path, blob id,
/// lines), in order: a copy of the stored lines must take the same ones.
pub struct OutlinedAt {
    pub outlined: Outlined,
    pub segments: Vec<(String, ObjectId, usize)>,
}

impl Store {
    /// The events at `range` (indices into `at`'s outlines), read from the segments that
    /// hold them only: a turn range of a long conversation costs its own bytes.
    pub fn events_at_indices(&self, at: &OutlinedAt, range: std::ops::RangeInclusive<usize>) -> Result<Vec<Event>> {
        let mut reader = self.segment_reader();
        let mut events = Vec::new();
        let mut first = 0usize;
        for (path, blob, count) in &at.segments {
            let next = first + count;
            if next > *range.start() && first <= *range.end() {
                let bytes = reader.read(*blob)?;
                let text = std::str::from_utf8(&bytes)
                    .map_err(|_| StoreError::BadFile { path: path.clone(), message: "not UTF-8".into() })?;
                let mut wanted = String::new();
                for (i, line) in text.lines().enumerate() {
                    if range.contains(&(first + i)) {
                        wanted.push_str(line);
                        wanted.push('\n');
                    }
                }
                let parsed = crate::event::parse_stored(&wanted)
                    .map_err(|error| StoreError::Corrupt { path: path.clone(), error })?;
                events.extend(parsed);
            }
            if next > *range.end() {
                break;
            }
            first = next;
        }
        Ok(events)
    }

    /// The id of conversation `id`'s last event that is said (not a compaction or config
    /// record): the tip of its line, where a session that continues it carries on from.
    pub fn last_said(&self, id: &str) -> Result<Option<String>> {
        let at = self.outlined(id)?;
        let tip = at.outlined.outlines.iter().rev().find(|o| !matches!(o.shape, Shape::Config | Shape::Compaction));
        Ok(tip.map(|o| o.id.to_string()))
    }

    /// Conversation `id` at HEAD, outlined: from the outline index, with the segments it
    /// has no record of read, outlined and recorded.
    /// The last one outlined is kept for the rest of the command, while HEAD holds it.
    pub fn outlined(&self, id: &str) -> Result<Arc<OutlinedAt>> {
        let tree = match self.head_tree_id()? {
            Some(root) => self.entry_at(root, &super::layout::conversation_dir(id))?,
            None => None,
        };
        let memo = |tree: ObjectId| -> Option<Arc<OutlinedAt>> {
            let kept = self.outlined.lock().ok()?;
            kept.as_ref().filter(|(i, t, _)| i == id && *t == tree).map(|(_, _, at)| at.clone())
        };
        if let Some(at) = tree.and_then(memo) {
            return Ok(at);
        }
        let segments = match tree {
            Some(tree) => self.segments_of(tree, id)?,
            None => Vec::new(),
        };
        let at = Arc::new(self.outline_segments(id, segments)?);
        if let (Some(tree), Ok(mut kept)) = (tree, self.outlined.lock()) {
            *kept = Some((id.to_owned(), tree, at.clone()));
        }
        Ok(at)
    }

    fn outline_segments(&self, id: &str, segments: Vec<(String, ObjectId)>) -> Result<OutlinedAt> {
        let path = self.state_dir().join(DIR).join(id);
        let file = std::fs::read(&path).unwrap_or_default();
        let (records, whole) = records(&file);
        let mut out = OutlinedAt { outlined: Outlined::default(), segments: Vec::with_capacity(segments.len()) };
        let mut fresh = Vec::new();
        let mut live = 0usize;
        let used: std::collections::HashSet<ObjectId> = segments.iter().map(|(_, blob)| *blob).collect();
        // Sized once: growing a vector of 38,000 outlines copies it a dozen times.
        let known: usize = segments
            .iter()
            .filter_map(|(_, blob)| records.get(blob))
            .map(|payload| Reader { bytes: payload, at: 0 }.varint().unwrap_or(0) as usize)
            .sum();
        out.outlined.outlines.reserve(known.min(file.len()));
        for (segment, blob) in segments {
            // Decoded straight onto the conversation's outlines: a vector per segment (1,400
            // of them) cost an allocation and a copy of each outline.
            let decoded = records.get(&blob).and_then(|payload| decode_onto(payload, &mut out.outlined).ok());
            let count = match decoded {
                Some(count) => {
                    live += records[&blob].len() + HEADER;
                    count
                }
                None => {
                    let outlines = self.outline_blob(&segment, blob)?;
                    let payload = encode(&outlines);
                    live += payload.len() + HEADER;
                    fresh.push(record(blob, &payload));
                    let count = outlines.len();
                    for (outline, line) in outlines {
                        out.outlined.push(outline, || line.expect("compaction and config lines are recorded"));
                    }
                    count
                }
            };
            out.segments.push((segment, blob, count));
        }
        // Best effort: an index that cannot be written only costs the next reader time.
        let _ = self.note_outlines(&path, &file[..whole], &fresh, (&used, live));
        Ok(out)
    }

    /// A segment's outlines, with the whole event for those an outline does not describe.
    fn outline_blob(&self, path: &str, blob: ObjectId) -> Result<Vec<(Outline, Option<Event>)>> {
        let bytes = self.read_blob(blob)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| StoreError::BadFile { path: path.to_owned(), message: "not UTF-8".into() })?;
        let corrupt = |error| StoreError::Corrupt { path: path.to_owned(), error };
        let outlines = outline_segment(text).map_err(corrupt)?;
        let mut out = Vec::with_capacity(outlines.len());
        for (n, (outline, line)) in outlines.into_iter().zip(text.split_inclusive('\n')).enumerate() {
            let whole = if matches!(outline.shape, Shape::Compaction | Shape::Config) {
                let mut events = event::parse_stored(line).map_err(|mut e| {
                    e.line = n + 1;
                    corrupt(e)
                })?;
                events.pop()
            } else {
                None
            };
            out.push((outline, whole));
        }
        Ok(out)
    }

    /// Append `fresh` records, or rewrite the file with only the live ones when the dead
    /// outweigh them (records of segments HEAD no longer holds: every append leaves one).
    /// `live`: the blobs HEAD uses, and the bytes their records take.
    fn note_outlines(
        &self,
        path: &std::path::Path,
        kept: &[u8],
        fresh: &[Vec<u8>],
        (used, live): (&std::collections::HashSet<ObjectId>, usize),
    ) -> Result<()> {
        if fresh.is_empty() && kept.len() <= 2 * live + 64 * 1024 {
            return Ok(());
        }
        create_private_dir(&self.state_dir().join(DIR))?;
        let added: usize = fresh.iter().map(Vec::len).sum();
        if kept.len() + added > 2 * live + 64 * 1024 {
            // Rewritten from what this reader used: every live record, once.
            let (records, _) = records(kept);
            let mut bytes = Vec::with_capacity(live);
            let mut seen = std::collections::HashSet::new();
            for (blob, payload) in records {
                if used.contains(&blob) && decode(payload).is_ok() && seen.insert(blob) {
                    bytes.extend(record(blob, payload));
                }
            }
            fresh.iter().for_each(|r| bytes.extend(r));
            return write_private_file(&self.state_dir(), path, &bytes);
        }
        let file = private_options().write(true).open(path).map_err(super::io_err(path))?;
        // A torn record at the end is cut off, so the next one starts where it should.
        file.set_len(kept.len() as u64).map_err(super::io_err(path))?;
        drop(file);
        let mut file = private_options().append(true).open(path).map_err(super::io_err(path))?;
        // One write: a crash tears at most this reader's records, which are then not believed.
        file.write_all(&fresh.concat()).map_err(super::io_err(path))
    }
}

/// The records of an index file by blob id (the last of a blob wins), and how many leading
/// bytes hold whole records.
fn records(file: &[u8]) -> (HashMap<ObjectId, &[u8]>, usize) {
    let mut out = HashMap::new();
    let mut at = 0;
    while file.len() - at >= HEADER && file[at] == MAGIC {
        let blob = ObjectId::from_bytes_or_panic(&file[at + 1..at + 21]);
        let len = u32::from_le_bytes(file[at + 21..at + 25].try_into().expect("4 bytes")) as usize;
        let sum = u64::from_le_bytes(file[at + 25..at + 33].try_into().expect("8 bytes"));
        let Some(payload) = file.get(at + HEADER..at + HEADER + len) else { break };
        if checksum(payload) != sum {
            break;
        }
        out.insert(blob, payload);
        at += HEADER + len;
    }
    (out, at)
}

fn record(blob: ObjectId, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.push(MAGIC);
    out.extend_from_slice(blob.as_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// Catches a torn or damaged record, which is all it is for: eight bytes a step (a byte at
/// a time was a tenth of `compact --dry-run` on a 55 MB conversation).
fn checksum(bytes: &[u8]) -> u64 {
    let mix = |h: u64, word: u64| (h ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    let mut chunks = bytes.chunks_exact(8);
    let mut h =
        chunks.by_ref().fold(bytes.len() as u64, |h, c| mix(h, u64::from_le_bytes(c.try_into().expect("8 bytes"))));
    for (i, b) in chunks.remainder().iter().enumerate() {
        h = mix(h, u64::from(*b) << (8 * i));
    }
    h ^ (h >> 32)
}

fn encode(outlines: &[(Outline, Option<Event>)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(outlines.len() * 100);
    varint(&mut out, outlines.len() as u64);
    for (o, whole) in outlines {
        let (tag, is_error) = match &o.shape {
            Shape::System => (0, false),
            Shape::User => (1, false),
            Shape::Assistant => (2, false),
            Shape::Reasoning => (3, false),
            Shape::ToolCall { .. } => (4, false),
            Shape::ToolResult { is_error, .. } => (5, *is_error),
            Shape::Config => (6, false),
            Shape::Compaction => (7, false),
            Shape::Other => (8, false),
        };
        out.push(tag);
        out.push(u8::from(is_error) | (u8::from(o.span.is_some()) << 1) | (u8::from(o.meta) << 2));
        varint(&mut out, o.chars);
        varint(&mut out, o.size);
        if let Some((a, b)) = o.span {
            varint(&mut out, u64::from(a));
            varint(&mut out, u64::from(b));
        }
        text(&mut out, &o.id);
        text(&mut out, &o.ts);
        match &o.shape {
            Shape::ToolCall { call_id, name } => {
                text(&mut out, call_id);
                text(&mut out, name);
                let args = Brief::args(&o.brief);
                varint(&mut out, args.len() as u64);
                for (key, value) in args {
                    text(&mut out, key);
                    text(&mut out, value);
                }
            }
            Shape::ToolResult { call_id, .. } => {
                text(&mut out, call_id);
                let outcome = Brief::outcome(&o.brief).cloned().unwrap_or_default();
                // 0: no exit status; else the status, zigzagged, plus one.
                varint(&mut out, outcome.exit.map_or(0, |e| ((e << 1) ^ (e >> 63)) as u64 + 1));
                text(&mut out, outcome.error_line.as_deref().unwrap_or(""));
                varint(&mut out, outcome.commits.len() as u64);
                for commit in &outcome.commits {
                    text(&mut out, commit);
                }
            }
            Shape::Config | Shape::Compaction => {
                text(&mut out, whole.as_ref().map(Event::to_line).unwrap_or_default().trim_end())
            }
            _ => {}
        }
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
struct Undecodable;

fn decode(payload: &[u8]) -> std::result::Result<Vec<(Outline, Option<Event>)>, Undecodable> {
    let mut out = Vec::new();
    decode_with(payload, |outline, whole| out.push((outline, whole)))?;
    Ok(out)
}

/// A record's outlines pushed onto `outlined`, and how many; a record that does not decode
/// leaves `outlined` as it was.
fn decode_onto(payload: &[u8], outlined: &mut Outlined) -> std::result::Result<usize, Undecodable> {
    let before = (outlined.outlines.len(), outlined.compactions.len(), outlined.configs.len());
    let decoded = decode_with(payload, |outline, whole| {
        // `decode_with` parses the whole line of every compaction and config.
        outlined.push(outline, || whole.unwrap_or_else(|| unreachable!("compaction and config lines are recorded")))
    });
    if decoded.is_err() {
        outlined.outlines.truncate(before.0);
        outlined.compactions.truncate(before.1);
        outlined.configs.truncate(before.2);
    }
    decoded
}

/// Each outline of a record, in order, with the whole event for a compaction or config.
fn decode_with(
    payload: &[u8],
    mut each: impl FnMut(Outline, Option<Event>),
) -> std::result::Result<usize, Undecodable> {
    let mut r = Reader { bytes: payload, at: 0 };
    let count = r.varint()? as usize;
    for _ in 0..count {
        let tag = r.byte()?;
        let flags = r.byte()?;
        let (chars, size) = (r.varint()?, r.varint()?);
        let span = if flags & 2 != 0 {
            let (a, b) = (r.varint()?, r.varint()?);
            Some((u32::try_from(a).map_err(|_| Undecodable)?, u32::try_from(b).map_err(|_| Undecodable)?))
        } else {
            None
        };
        let (id, ts) = (r.short()?, r.short()?);
        let mut whole = None;
        let mut brief = None;
        let shape = match tag {
            0 => Shape::System,
            1 => Shape::User,
            2 => Shape::Assistant,
            3 => Shape::Reasoning,
            4 => {
                let shape = Shape::ToolCall { call_id: r.short()?, name: r.short()? };
                let count = r.varint()?;
                let mut args = Vec::new();
                for _ in 0..count {
                    args.push((r.text()?.to_owned(), r.text()?.to_owned()));
                }
                brief = (!args.is_empty()).then(|| Box::new(Brief::Call(args)));
                shape
            }
            5 => {
                let shape = Shape::ToolResult { call_id: r.short()?, is_error: flags & 1 != 0 };
                let exit = match r.varint()? {
                    0 => None,
                    n => Some(((n - 1) >> 1) as i64 ^ -(((n - 1) & 1) as i64)),
                };
                let error_line = Some(r.text()?.to_owned()).filter(|l| !l.is_empty());
                let mut commits = Vec::new();
                for _ in 0..r.varint()? {
                    commits.push(r.text()?.to_owned());
                }
                let outcome = Outcome { exit, error_line, commits };
                brief = (outcome != Outcome::default()).then(|| Box::new(Brief::Result(outcome)));
                shape
            }
            6 | 7 => {
                let line = format!("{}\n", r.text()?);
                whole = Some(event::parse_stored(&line).map_err(|_| Undecodable)?.pop().ok_or(Undecodable)?);
                if tag == 6 { Shape::Config } else { Shape::Compaction }
            }
            8 => Shape::Other,
            _ => return Err(Undecodable),
        };
        each(Outline { id, ts, shape, chars, size, span, brief, meta: flags & 4 != 0 }, whole);
    }
    if r.at != payload.len() {
        return Err(Undecodable);
    }
    Ok(count)
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn text(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> std::result::Result<u8, Undecodable> {
        let b = *self.bytes.get(self.at).ok_or(Undecodable)?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> std::result::Result<u64, Undecodable> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(n);
            }
        }
        Err(Undecodable)
    }

    fn text(&mut self) -> std::result::Result<&'a str, Undecodable> {
        std::str::from_utf8(self.raw_text()?).map_err(|_| Undecodable)
    }

    /// A string as an outline keeps it (see [`Short::from_utf8`]).
    fn short(&mut self) -> std::result::Result<Short, Undecodable> {
        Short::from_utf8(self.raw_text()?).ok_or(Undecodable)
    }

    fn raw_text(&mut self) -> std::result::Result<&'a [u8], Undecodable> {
        let len = usize::try_from(self.varint()?).map_err(|_| Undecodable)?;
        let end = self.at.checked_add(len).ok_or(Undecodable)?;
        let bytes = self.bytes.get(self.at..end).ok_or(Undecodable)?;
        self.at = end;
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_a_damaged_one_is_not_believed() {
        let text = concat!(
            r#"{"id":"a","ts":"2026-01-01T00:00:00Z","type":"user","content":"hi"}"#,
            "\n",
            r#"{"id":"b","ts":"2026-01-01T00:00:01Z","type":"tool_call","call_id":"c","name":"Bash","arguments":{"command":"cargo test","x":1}}"#,
            "\n",
            r#"{"id":"r","ts":"2026-01-01T00:00:01Z","type":"tool_result","call_id":"c","content":"Exit code -2\nerror: no\n[main 1a2b3c4] x","is_error":true}"#,
            "\n",
            r#"{"id":"c","ts":"2026-01-01T00:00:02Z","type":"config","set":{"k":"v"}}"#,
            "\n",
        );
        let outlines: Vec<(Outline, Option<Event>)> = outline_segment(text)
            .unwrap()
            .into_iter()
            .zip(text.split_inclusive('\n'))
            .map(|(o, line)| {
                let whole = (o.shape == Shape::Config).then(|| event::parse_stored(line).unwrap().remove(0));
                (o, whole)
            })
            .collect();
        let payload = encode(&outlines);
        assert_eq!(decode(&payload).unwrap(), outlines);
        assert!(outlines[1].0.brief.is_some() && outlines[2].0.brief.is_some(), "briefs are recorded too");
        // Onto a conversation's outlines: all of a record, or (one that fails part way,
        // after two outlines) nothing of it.
        let mut outlined = Outlined::default();
        assert_eq!(decode_onto(&payload, &mut outlined), Ok(4));
        assert_eq!((outlined.outlines.len(), outlined.configs.len()), (4, 1));
        let mut cut = payload.clone();
        cut.truncate(payload.len() - 2);
        assert_eq!(decode_onto(&cut, &mut outlined), Err(Undecodable));
        assert_eq!((outlined.outlines.len(), outlined.configs.len(), outlined.compactions.len()), (4, 1, 0));
        let blob = ObjectId::from_bytes_or_panic(&[7; 20]);
        let mut file = record(blob, &payload);
        assert_eq!(records(&file).0.len(), 1);
        // Torn: the record is not believed, and nothing of it counts as whole.
        let torn = &file[..file.len() - 1];
        assert_eq!(records(torn), (HashMap::new(), 0));
        // Damaged: the checksum catches it.
        let last = file.len() - 3;
        file[last] ^= 1;
        assert!(records(&file).0.is_empty());
    }
}
