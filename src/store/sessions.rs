//! The records of the agents' sessions a conversation is captured from, in its `meta.json`:
//! `source` (the session file it was imported from) and `resumes` (sessions `convo resume`
//! wrote for it). Each says how far the session was read and where its line stands
//! ([`TIP`]); `ops::import` follows them, and a merge that moves a local line into a fork
//! moves the records of the sessions that wrote it along ([`moved_to_fork`]).
//!
//! A hand-over (`convo resume`) is local state until the session says something: its record
//! waits in `.git/convo/handovers` (never committed or pushed; one JSON object a line), and
//! the session's first capture puts it in the conversation's `meta.json` in the commit that
//! adds its turns. A hand-over makes no commit, and a session never carried on leaves
//! nothing in what the team shares. A record in a `meta.json` wins over a hand-over of the
//! same session (the entry then is spent, and pruned at the next hand-over); a merge that
//! moves the local line a hand-over continues into a fork binds the hand-over to the fork
//! ([`Store::rebind_handovers`]).

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::txn::Lock;
use super::{Meta, Result, Store, create_private_dir, io_err};

/// A hand-over waiting for its session's first capture.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Handover {
    /// The conversation the session continues.
    pub conversation: String,
    /// The session's record, as `resumes` in its `meta.json` will hold it.
    pub record: Value,
}

impl Handover {
    pub fn session(&self) -> Option<&str> {
        session(&self.record)
    }
}

/// `meta` with a hand-over's record among its `resumes`, as the session's first capture
/// commits it: where the record is.
pub fn with_handover(meta: &mut Meta, record: Value) -> At {
    let resumes = meta.extra.entry(RESUMES).or_insert_with(|| Value::Array(Vec::new()));
    if !resumes.is_array() {
        *resumes = Value::Array(Vec::new());
    }
    let list = resumes.as_array_mut().expect("made an array above");
    list.push(record);
    At::Resume(list.len() - 1)
}

impl Store {
    /// The hand-over of `session` waiting for its first capture, with its conversation's
    /// `meta.json` holding its record as that capture commits it.
    pub fn handover_of(&self, session: &str) -> Result<Option<(String, Meta, At)>> {
        let Some(h) = self.handovers()?.into_iter().rev().find(|h| h.session() == Some(session)) else {
            return Ok(None);
        };
        let Ok(mut meta) = self.meta(&h.conversation) else { return Ok(None) };
        let at = with_handover(&mut meta, h.record);
        Ok(Some((h.conversation, meta, at)))
    }

    fn handovers_path(&self) -> std::path::PathBuf {
        self.state_dir().join("handovers")
    }

    /// The hand-overs waiting, oldest first (a line that does not read, from a torn write,
    /// is none).
    pub fn handovers(&self) -> Result<Vec<Handover>> {
        let path = self.handovers_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    /// Keep a hand-over, under the caller's lock; entries whose session a `meta.json` of
    /// their conversation holds now are spent and dropped.
    pub fn add_handover(&self, _lock: &Lock, handover: Handover) -> Result<()> {
        let mut all = self.handovers()?;
        all.retain(|h| {
            let recorded = self
                .meta(&h.conversation)
                .ok()
                .is_some_and(|m| records(&m).iter().any(|r| session(r).is_some() && session(r) == h.session()));
            !recorded && self.meta(&h.conversation).is_ok()
        });
        all.push(handover);
        self.write_handovers(&all)
    }

    /// A merge moved the local line of conversation `from` into fork `to`: hand-overs of
    /// `from` whose tip is one of `local` (the events only that line has) continue the fork.
    pub fn rebind_handovers(&self, _lock: &Lock, from: &str, to: &str, local: &HashSet<String>) -> Result<()> {
        let mut all = self.handovers()?;
        let mut moved = false;
        for h in all.iter_mut().filter(|h| h.conversation == from) {
            if h.record.get(TIP).and_then(Value::as_str).is_some_and(|t| local.contains(t)) {
                h.conversation = to.to_owned();
                moved = true;
            }
        }
        if moved { self.write_handovers(&all) } else { Ok(()) }
    }

    fn write_handovers(&self, all: &[Handover]) -> Result<()> {
        let mut text = String::new();
        for h in all {
            text += &serde_json::to_string(h).unwrap_or_default();
            text.push('\n');
        }
        let dir = self.state_dir();
        create_private_dir(&dir)?;
        // The only copy of a session's binding until its first capture: an acknowledged
        // hand-over survives a power cut (see `durable`).
        super::txn::write_private_file_as(&dir, &self.handovers_path(), text.as_bytes(), self.durable())
    }
}

/// The key of `meta.json` holding the session file a conversation was imported from.
pub const SOURCE: &str = "source";

/// The key of `meta.json` listing the sessions `convo resume` wrote for a conversation.
pub const RESUMES: &str = "resumes";

/// The key, in a session's record, of the last event said of the line the session is on
/// (`Kind::is_said`): the session carries on from there, and when the conversation's line
/// has gone on past it, the session goes on in a fork.
pub const TIP: &str = "tip";

/// The key, in a session's record, of the fork the session went on in: the record stays
/// where it was, to say where the session went, and the fork's own record is followed.
pub const WENT_ON_IN: &str = "went_on_in";

/// Where in a conversation's `meta.json` a session's record is: `source` (the file it was
/// imported from) or `resumes[i]` (a session `convo resume` wrote for an agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    Source,
    Resume(usize),
}

impl At {
    pub fn get(self, meta: &Meta) -> Option<&Value> {
        match self {
            At::Source => meta.extra.get(SOURCE),
            At::Resume(i) => meta.extra.get(RESUMES)?.get(i),
        }
    }

    pub fn get_mut(self, meta: &mut Meta) -> Option<&mut Map<String, Value>> {
        match self {
            At::Source => meta.extra.get_mut(SOURCE)?.as_object_mut(),
            At::Resume(i) => meta.extra.get_mut(RESUMES)?.get_mut(i)?.as_object_mut(),
        }
    }
}

/// Whether a session's record was left for a fork ([`WENT_ON_IN`]).
pub fn left(record: &Value) -> bool {
    record.get(WENT_ON_IN).is_some()
}

impl Store {
    /// Whether the record `record` of a session in conversation `id` was left for a fork
    /// that really continues it: the fork it names is a fork of `id` and holds a record of
    /// the same session. A `went_on_in` arrives with a pull like any other field: naming
    /// another conversation, or a fork without the session, it would send the session's
    /// next capture elsewhere, or leave it no record and make it import the session's whole
    /// history again. Such a record is followed where it is.
    pub fn left_for_a_fork(&self, id: &str, record: &Value) -> bool {
        let (Some(fork), Some(this)) = (record.get(WENT_ON_IN).and_then(Value::as_str), session(record)) else {
            return false;
        };
        let Ok(fork) = self.meta(fork) else { return false };
        fork.forked_from.as_ref().is_some_and(|from| from.id == id)
            && records(&fork).iter().any(|r| session(r) == Some(this))
    }
}

fn session(record: &Value) -> Option<&str> {
    record.get("session").and_then(Value::as_str)
}

/// Every session record of `meta`, with where it is.
fn records(meta: &Meta) -> Vec<&Value> {
    let source = meta.extra.get(SOURCE).filter(|r| session(r).is_some());
    let resumes = meta.extra.get(RESUMES).and_then(Value::as_array).into_iter().flatten();
    source.into_iter().chain(resumes.filter(|r| session(r).is_some())).collect()
}

/// A local line of a conversation became fork `fork` in a merge (`ours` its `meta.json`,
/// `base` the merge base's): the records of the sessions that wrote it, those ours changed
/// since the base (or made), go with the fork, so their next capture lands on the line they
/// continue. Returns the fork's records (`source`, `resumes`) and the sessions moved.
pub fn moved_to_fork(ours: &Meta, base: Option<&Meta>) -> (Map<String, Value>, Vec<String>) {
    let unchanged = |record: &Value| base.is_some_and(|b| records(b).contains(&record));
    let mut fork = Map::new();
    let mut moved = Vec::new();
    if let Some(source) = ours.extra.get(SOURCE).filter(|r| session(r).is_some() && !left(r) && !unchanged(r)) {
        fork.insert(SOURCE.into(), source.clone());
        moved.extend(session(source).map(str::to_owned));
    }
    let resumes: Vec<Value> = ours
        .extra
        .get(RESUMES)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| session(r).is_some() && !left(r) && !unchanged(r))
        .cloned()
        .collect();
    moved.extend(resumes.iter().filter_map(|r| session(r).map(str::to_owned)));
    if !resumes.is_empty() {
        fork.insert(RESUMES.into(), Value::Array(resumes));
    }
    (fork, moved)
}

/// Mark the records of `sessions` in `meta` as left for `fork`; whether any was there.
pub fn mark_left(meta: &mut Meta, sessions: &[String], fork: &str) -> bool {
    let mut marked = false;
    let mut mark = |r: &mut Value| {
        if session(r).is_some_and(|s| sessions.iter().any(|m| m == s))
            && !left(r)
            && let Value::Object(r) = r
        {
            r.insert(WENT_ON_IN.into(), json!(fork));
            marked = true;
        }
    };
    if let Some(source) = meta.extra.get_mut(SOURCE) {
        mark(source);
    }
    for r in meta.extra.get_mut(RESUMES).and_then(Value::as_array_mut).into_iter().flatten() {
        mark(r);
    }
    marked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(extra: Value) -> Meta {
        Meta { title: None, created: String::new(), forked_from: None, extra: extra.as_object().unwrap().clone() }
    }

    #[test]
    fn only_the_sessions_the_local_line_advanced_move_to_its_fork() {
        let base = meta(json!({"source": {"session": "s", "tip": "a"}, "resumes": [{"session": "r1", "tip": "a"}]}));
        let ours = meta(json!({"source": {"session": "s", "tip": "a"},
                               "resumes": [{"session": "r1", "tip": "b"}, {"session": "r2", "tip": "c"}]}));
        let (fork, moved) = moved_to_fork(&ours, Some(&base));
        assert_eq!(moved, ["r1", "r2"]);
        assert!(fork.get(SOURCE).is_none());
        assert_eq!(fork[RESUMES].as_array().unwrap().len(), 2);
        let mut theirs =
            meta(json!({"source": {"session": "s", "tip": "x"}, "resumes": [{"session": "r1", "tip": "a"}]}));
        assert!(mark_left(&mut theirs, &moved, "F"));
        assert_eq!(theirs.extra[RESUMES][0][WENT_ON_IN], "F");
        assert!(!left(&theirs.extra[SOURCE]));
    }
}
