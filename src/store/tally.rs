//! The usage tally: every conversation's recorded usage summed by UTC day and model, in one
//! local file, so `usage` and `list --usage` read one file instead of every event.
//!
//! `.git/convo/usage` holds one line per conversation, `<id>\t<tree>\t<tally JSON>`, as the
//! catalogue does: `<tree>` is the id of the conversation's tree the tally was counted
//! from, and a line counts only while HEAD holds the conversation at exactly that tree, so
//! whatever moved HEAD (an append, a pull, a `git reset`, another convo version) causes a
//! recount, never a wrong answer. Later lines win over earlier ones for the same id.
//!
//! Writers never touch it, so an append costs nothing more: the reader that finds a line
//! missing or stale counts that conversation again from its events (a segment at a time)
//! and appends the line, one `write(2)` on the `O_APPEND` file under its `flock`, as the
//! catalogue's writers do (a line torn by a crash has no newline, or reads as lines run
//! together, and is not believed). The file is rewritten whole (atomically) when it names
//! conversations HEAD lacks or holds far more lines than conversations. Deleting it loses
//! nothing.
//!
//! A day's bucket is the exact sum of that day's calls, so a report over whole days needs
//! no event; one whose range cuts a day reads the events of the conversations with calls
//! on that day only (`ops::usage`).
//!
//! A fork holds copies of its parent's events (ids and all: `fork`, a diverged `pull`, a
//! session that went on in a fork): its tally counts only the events its parent does not
//! hold, so a call is counted once. Its line's `<tree>` is then `<tree>/<parent>@<parent's
//! tree>` (`@-` while the parent is gone, when the fork counts everything), so the line
//! counts only while both stand where they were.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Result, Store, catalogue::with_file, txn::write_private_file};
use crate::event::{Call, CallLog, Usage};

const FILE: &str = "usage";

/// A conversation's recorded usage by UTC day and model, in day then model order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally(pub Vec<DayUsage>);

/// The calls of one UTC day by one model (`None`: the events did not say which), summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DayUsage {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub model: Option<String>,
    pub usage: Usage,
}

impl Tally {
    /// The tally of `calls`; a call whose time does not parse has no day and is left out,
    /// as a report by time leaves it out.
    pub fn of(calls: Vec<Call>) -> Tally {
        let mut days: BTreeMap<(String, Option<String>), Usage> = BTreeMap::new();
        for call in calls {
            let Ok(at) = DateTime::parse_from_rfc3339(&call.ts) else { continue };
            let day = at.with_timezone(&Utc).format("%Y-%m-%d").to_string();
            days.entry((day, call.model)).or_default().add(&call.usage);
        }
        Tally(days.into_iter().map(|((day, model), usage)| DayUsage { day, model, usage }).collect())
    }

    /// Everything, summed.
    pub fn total(&self) -> Usage {
        let mut total = Usage::default();
        self.0.iter().for_each(|d| total.add(&d.usage));
        total
    }
}

impl Store {
    fn tally_path(&self) -> std::path::PathBuf {
        self.state_dir().join(FILE)
    }

    /// The usage tally of every conversation at HEAD, by id (see the module's doc).
    pub fn usage_tallies(&self) -> Result<HashMap<String, Tally>> {
        let Some(dir) = self.conversations_tree(self.head_commit_id()?)? else { return Ok(HashMap::new()) };
        let at_head = self.conversations_in(dir)?;
        let bytes = std::fs::read(self.tally_path()).unwrap_or_default();
        // Not UTF-8 (a torn write): start over, rewriting the file whole.
        let (text, damaged) = match String::from_utf8(bytes) {
            Ok(text) => (text, false),
            Err(_) => (String::new(), true),
        };
        let mut known: HashMap<&str, (&str, &str)> = HashMap::with_capacity(at_head.len());
        let mut lines = 0usize;
        for line in text.split_inclusive('\n') {
            lines += 1;
            let Some(line) = line.strip_suffix('\n') else { continue };
            let mut fields = line.splitn(3, '\t');
            let (Some(id), Some(tree), Some(json)) = (fields.next(), fields.next(), fields.next()) else { continue };
            // serde_json escapes tabs: a tab here is two lines run together by a torn write.
            if !json.contains('\t') {
                known.insert(id, (tree, json));
            }
        }
        let heads: HashMap<&str, ObjectId> = at_head.iter().map(|(id, tree)| (id.as_str(), *tree)).collect();
        let mut tallies = HashMap::with_capacity(at_head.len());
        let mut keys: HashMap<&str, String> = HashMap::with_capacity(at_head.len());
        let mut added = String::new();
        for (id, tree) in &at_head {
            let believed = known
                .get(id.as_str())
                .filter(|(key, _)| key_holds(key, *tree, &heads))
                .and_then(|(key, json)| Some((key.to_string(), serde_json::from_str::<Tally>(json).ok()?)));
            let (key, tally) = match believed {
                Some(believed) => believed,
                None => {
                    let parent = self.parent_of(*tree)?;
                    let key = key_of(*tree, parent.as_deref(), &heads);
                    let parent = parent.and_then(|p| heads.get(p.as_str()).map(|t| (p, *t)));
                    let tally = self.count_tally(id, *tree, parent)?;
                    added.push_str(&line(id, &key, &tally));
                    (key, tally)
                }
            };
            keys.insert(id.as_str(), key);
            tallies.insert(id.clone(), tally);
        }
        let vanished = known.keys().any(|id| !tallies.contains_key(*id));
        if damaged || vanished || lines > 2 * at_head.len() + 64 {
            let whole: String = at_head.iter().map(|(id, _)| line(id, &keys[id.as_str()], &tallies[id])).collect();
            let _ = write_private_file(&self.state_dir(), &self.tally_path(), whole.as_bytes());
        } else if !added.is_empty() {
            with_file(&self.tally_path(), |_, _| added);
        }
        Ok(tallies)
    }

    /// Count conversation `id`'s tally from its events, its folder being the tree `dir`;
    /// a fork's without the events its parent (its id and folder) holds.
    fn count_tally(&self, id: &str, dir: ObjectId, parent: Option<(String, ObjectId)>) -> Result<Tally> {
        let copied = match parent {
            Some((parent, tree)) => self.event_ids_in(tree, &parent)?,
            None => HashSet::new(),
        };
        let mut calls = CallLog::default();
        for (path, blob) in self.segments_of(dir, id)? {
            self.parse_segment(&path, blob)?.iter().filter(|e| !copied.contains(&e.id)).for_each(|e| calls.add(e));
        }
        Ok(Tally::of(calls.into_calls()))
    }

    /// The ids of the events of conversation `id`, its folder being the tree `dir`.
    pub(super) fn event_ids_in(&self, dir: ObjectId, id: &str) -> Result<HashSet<String>> {
        let mut ids = HashSet::new();
        for (path, blob) in self.segments_of(dir, id)? {
            ids.extend(self.parse_segment(&path, blob)?.into_iter().map(|e| e.id));
        }
        Ok(ids)
    }

    /// The conversation the one in folder `dir` was forked from, as its `meta.json` says.
    fn parent_of(&self, dir: ObjectId) -> Result<Option<String>> {
        let data = self.object_data(dir, gix::objs::Kind::Tree)?;
        let Some((meta, false)) = Store::entry_in(&data, super::layout::META_FILE) else { return Ok(None) };
        let bytes = self.read_blob(meta)?;
        Ok(serde_json::from_slice::<super::Meta>(&bytes).ok().and_then(|m| m.forked_from).map(|f| f.id))
    }
}

/// A line's key for a conversation in folder `tree` forked from `parent`, `heads` being
/// every conversation's folder at HEAD (see the module's doc).
fn key_of(tree: ObjectId, parent: Option<&str>, heads: &HashMap<&str, ObjectId>) -> String {
    match parent {
        None => tree.to_string(),
        Some(parent) => match heads.get(parent) {
            Some(theirs) => format!("{tree}/{parent}@{theirs}"),
            None => format!("{tree}/{parent}@-"),
        },
    }
}

/// Whether a line's `key` still describes a conversation in folder `tree`.
fn key_holds(key: &str, tree: ObjectId, heads: &HashMap<&str, ObjectId>) -> bool {
    let (own, parent) = match key.split_once('/') {
        Some((own, parent)) => (own, Some(parent)),
        None => (key, None),
    };
    if !ObjectId::from_hex(own.as_bytes()).is_ok_and(|t| t == tree) {
        return false;
    }
    match parent.map(|p| p.split_once('@')) {
        None => true,
        Some(None) => false,
        Some(Some((parent, "-"))) => !heads.contains_key(parent),
        Some(Some((parent, theirs))) => {
            heads.get(parent).is_some_and(|t| ObjectId::from_hex(theirs.as_bytes()).is_ok_and(|theirs| theirs == *t))
        }
    }
}

/// The file's line for conversation `id` under `key` (its folder's tree, see [`key_of`]).
fn line(id: &str, key: &str, tally: &Tally) -> String {
    format!("{id}\t{key}\t{}\n", serde_json::to_string(tally).unwrap_or_default())
}
