//! The records of the agents' sessions a conversation is captured from, in its `meta.json`:
//! `source` (the session file it was imported from) and `resumes` (sessions `convo resume`
//! wrote for it). Each says how far the session was read and where its line stands
//! ([`TIP`]); `ops::import` follows them, and a merge that moves a local line into a fork
//! moves the records of the sessions that wrote it along ([`moved_to_fork`]).

use serde_json::{Map, Value, json};

use super::Meta;

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
