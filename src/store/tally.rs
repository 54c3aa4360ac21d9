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

use std::collections::{BTreeMap, HashMap};

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
        let mut tallies = HashMap::with_capacity(at_head.len());
        let mut added = String::new();
        for (id, tree) in &at_head {
            let believed = known
                .get(id.as_str())
                .filter(|(t, _)| ObjectId::from_hex(t.as_bytes()).is_ok_and(|t| t == *tree))
                .and_then(|(_, json)| serde_json::from_str::<Tally>(json).ok());
            let tally = match believed {
                Some(tally) => tally,
                None => {
                    let tally = self.count_tally(id, *tree)?;
                    added.push_str(&line(id, *tree, &tally));
                    tally
                }
            };
            tallies.insert(id.clone(), tally);
        }
        let vanished = known.keys().any(|id| !tallies.contains_key(*id));
        if damaged || vanished || lines > 2 * at_head.len() + 64 {
            let whole: String = at_head.iter().map(|(id, tree)| line(id, *tree, &tallies[id])).collect();
            let _ = write_private_file(&self.state_dir(), &self.tally_path(), whole.as_bytes());
        } else if !added.is_empty() {
            with_file(&self.tally_path(), |_, _| added);
        }
        Ok(tallies)
    }

    /// Count conversation `id`'s tally from its events, its folder being the tree `dir`.
    fn count_tally(&self, id: &str, dir: ObjectId) -> Result<Tally> {
        let mut calls = CallLog::default();
        for (path, blob) in self.segments_of(dir, id)? {
            self.parse_segment(&path, blob)?.iter().for_each(|e| calls.add(e));
        }
        Ok(Tally::of(calls.into_calls()))
    }
}

/// The file's line for conversation `id`, its folder the tree `tree`.
fn line(id: &str, tree: ObjectId, tally: &Tally) -> String {
    format!("{id}\t{tree}\t{}\n", serde_json::to_string(tally).unwrap_or_default())
}
