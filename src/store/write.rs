//! The two ways a conversation changes in this layer: it is created, or events are appended.
//! Everything is validated before the first byte is written; one call is one commit.

use std::collections::HashSet;

use gix::ObjectId;

use super::fix::Fixed;
use super::history::Trailers;
use super::transaction::Transaction;
use super::txn::{Change, Landed, Lock};
use super::{Meta, Result, Store, StoreError, layout, subject};
use crate::clock::Clock;
use crate::event::who::Who;
use crate::event::{Draft, Event, Kind, Shape, Stats};

/// What `append` did.
#[derive(Debug, Clone)]
pub struct Appended {
    pub commit: ObjectId,
    pub subject: String,
    pub events: Vec<Event>,
    /// Turn of each appended event (`None` before the first user event).
    pub turns: Vec<Option<u64>>,
    pub stats: Stats,
    pub landed: Landed,
}

/// A conversation to create with its events (see [`Store::create_many`]).
#[derive(Debug, Clone)]
pub struct NewConversation {
    pub title: Option<String>,
    /// Extra `meta.json` fields (where an import came from, a subagent's parent).
    pub extra: serde_json::Map<String, serde_json::Value>,
    pub drafts: Vec<Draft>,
    /// Index (in the same call) of the conversation this one is a subagent of: recorded as
    /// `subagent_of` in its metadata.
    pub parent: Option<usize>,
}

/// A subject line chosen by the caller (a compaction, a config change) instead of the
/// default `append: ... (+N events)`, and the compaction it records, if any.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    pub text: String,
    pub compaction: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Created {
    pub id: String,
    pub commit: ObjectId,
    pub subject: String,
    pub landed: Landed,
}

pub(super) fn meta_change(id: &str, meta: &Meta) -> Result<Change> {
    let mut bytes = serde_json::to_vec_pretty(meta)
        .map_err(|e| StoreError::BadFile { path: layout::meta_path(id), message: e.to_string() })?;
    bytes.push(b'\n');
    Ok(Change { path: layout::meta_path(id), bytes: Some(bytes), append_from: None, ..Change::default() })
}

impl Store {
    /// Start a conversation: one commit adding its `meta.json`.
    pub fn create(&self, mut tx: Transaction<'_>, title: Option<&str>, clock: &Clock) -> Result<Created> {
        let id = self.new_conversation_id(clock);
        let meta = Meta {
            title: title.map(str::to_owned),
            created: clock.timestamp(),
            forked_from: None,
            extra: Default::default(),
        };
        let subject = format!("new: {}", subject::name(&id, title));
        let trailers = Trailers {
            convo_id: Some(id.clone()),
            turns: Some(0),
            events: Some(0),
            tokens: Some(0),
            ..Default::default()
        };
        tx.change(meta_change(&id, &meta)?).wrote_conversation(&id, Stats::default(), None, Some(Who::default()), None);
        let committed = tx.commit(&subject, &trailers, clock)?;
        Ok(Created { id, commit: committed.commit, subject, landed: committed.landed })
    }

    /// Append `drafts` to conversation `id` in one commit. Input that would break the
    /// conversation (an id used twice, a result for a call that does not exist) is refused
    /// before anything is written.
    pub fn append(&self, tx: Transaction<'_>, id: &str, drafts: Vec<Draft>, clock: &Clock) -> Result<Appended> {
        self.append_as(tx, id, drafts, clock, None)
    }

    /// [`append`](Self::append) with the commit subject given by the caller.
    pub fn append_as(
        &self,
        mut tx: Transaction<'_>,
        id: &str,
        drafts: Vec<Draft>,
        clock: &Clock,
        subject: Option<Subject>,
    ) -> Result<Appended> {
        // Appending needs the open segment, and call ids are almost always recent: read the
        // segment folders lazily from the end instead of every segment of a long history.
        let root = self.head_tree_id()?.ok_or(StoreError::Empty)?;
        let groups = self.groups_in(root, id)?;
        self.check_ids(id, &drafts)?;
        self.check_call_ids(id, &drafts, &groups)?;
        self.check_new_calls(id, &drafts)?;
        let open = match groups.last() {
            Some((group, tree)) => self.group_segments(id, *group, *tree)?.pop(),
            None => None,
        };

        let before = self.cached_stats(id)?;
        let previous = self.last_commit_of(id)?;
        let ts = clock.timestamp();
        let stamp = self.stamp();
        let events: Vec<Event> = drafts
            .into_iter()
            .map(|mut d| {
                stamp.apply(&d.kind, &mut d.extra);
                let id = d.id.clone().unwrap_or_else(|| clock.new_id());
                let ts = d.ts.clone().unwrap_or_else(|| ts.clone());
                d.into_event(id, ts)
            })
            .collect();

        let mut stats = before.stats;
        let mut who = before.who;
        let mut turns = Vec::with_capacity(events.len());
        for event in &events {
            stats.add(event);
            if let Some(who) = &mut who {
                who.add(event);
            }
            turns.push(stats.current_turn());
        }

        let (open_number, open_bytes) = match open {
            Some((number, blob)) => (number, self.read_blob(blob)?),
            None => (0, Vec::new()),
        };
        let lines: Vec<String> = events.iter().map(Event::to_line).collect();
        let mut changes = Vec::new();
        for (number, bucket) in layout::pack_lines(open_number, open_bytes.len(), &lines) {
            let reopened = number == open_number && !open_bytes.is_empty();
            let mut bytes = if reopened { open_bytes.clone() } else { Vec::new() };
            for line in bucket {
                bytes.extend_from_slice(line.as_bytes());
            }
            let append_from = reopened.then_some(open_bytes.len());
            changes.push(Change {
                path: layout::segment_path(id, number),
                bytes: Some(bytes),
                append_from,
                blob: None,
            });
        }

        let meta = self.meta(id)?;
        let Subject { text: subject, compaction } = subject.unwrap_or_else(|| Subject {
            text: subject::append(&subject::name(id, meta.title.as_deref()), &turns, events.len()),
            compaction: None,
        });
        let trailers = Trailers {
            convo_id: Some(id.to_owned()),
            previous,
            turns: Some(stats.turns),
            events: Some(stats.events),
            tokens: Some(stats.tokens()),
            compaction,
            merged: Vec::new(),
            appended: Vec::new(),
        };
        let updated = events.last().map(|e| e.ts.clone()).or(before.updated);
        tx.changes(changes).wrote_conversation(id, stats, updated, who, previous);
        let committed = tx.commit(&subject, &trailers, clock)?;
        Ok(Appended { commit: committed.commit, subject, events, turns, stats, landed: committed.landed })
    }

    /// New conversations with their events, all in one commit (an import). Each entry is a
    /// title, extra metadata fields, and the events; the input is checked like `append`'s:
    /// unique ids, every tool result after its call.
    pub fn create_many(
        &self,
        lock: &Lock,
        conversations: Vec<NewConversation>,
        subject: &str,
        clock: &Clock,
    ) -> Result<super::StagedCommit> {
        let mut staged = Vec::new();
        for c in conversations {
            let mut s = self.stage(clock);
            s.title = c.title;
            s.extra = c.extra;
            s.parent = c.parent;
            self.stage_drafts(&mut s, c.drafts, clock)?;
            staged.push(s);
        }
        self.commit_staged(lock, staged, subject, clock)
    }

    /// Commit one store-level file (such as `convo.toml`) with `message`.
    pub fn commit_file(
        &self,
        mut tx: Transaction<'_>,
        path: &str,
        bytes: Vec<u8>,
        message: &str,
        clock: &Clock,
    ) -> Result<Fixed> {
        tx.change(Change { path: path.to_owned(), bytes: Some(bytes), append_from: None, ..Change::default() });
        let committed = tx.commit_message(&format!("{message}\n"), clock)?;
        Ok(Fixed { commit: committed.commit, subject: message.to_owned(), landed: committed.landed })
    }

    /// A new conversation holding the events of `source` that `keep` selects, in order, with
    /// their ids. A segment kept whole is written back byte for byte, so git stores no new
    /// blob for it; partly kept segments are repacked.
    pub fn fork(
        &self,
        mut tx: Transaction<'_>,
        source: &str,
        keep: &dyn Fn(usize, &Event) -> bool,
        title: Option<&str>,
        forked_from: super::ForkedFrom,
        clock: &Clock,
    ) -> Result<Created> {
        let id = self.new_conversation_id(clock);
        let meta = Meta {
            title: title.map(str::to_owned),
            created: clock.timestamp(),
            forked_from: Some(forked_from.clone()),
            extra: Default::default(),
        };
        let mut changes = vec![meta_change(&id, &meta)?];
        let mut next = 0u64;
        let mut pending: Vec<String> = Vec::new();
        let flush = |pending: &mut Vec<String>, next: &mut u64, changes: &mut Vec<Change>| {
            for (number, bucket) in layout::pack_lines(*next, 0, pending) {
                let bytes: Vec<u8> = bucket.iter().flat_map(|l| l.as_bytes()).copied().collect();
                changes.push(Change {
                    path: layout::segment_path(&id, number),
                    bytes: Some(bytes),
                    append_from: None,
                    ..Change::default()
                });
                *next = number + 1;
            }
            pending.clear();
        };
        let mut index = 0;
        let (mut stats, mut updated, mut who) = (Stats::default(), None, Who::default());
        for (path, blob) in self.segments(source)? {
            let events = self.parse_segment(&path, blob)?;
            let kept: Vec<&Event> =
                events.iter().enumerate().filter(|(i, e)| keep(index + i, e)).map(|(_, e)| e).collect();
            index += events.len();
            for e in &kept {
                stats.add(e);
                who.add(e);
                updated = Some(e.ts.clone());
            }
            if kept.len() == events.len() && !kept.is_empty() {
                flush(&mut pending, &mut next, &mut changes);
                let bytes = self.read_blob(blob)?;
                changes.push(Change {
                    path: layout::segment_path(&id, next),
                    bytes: Some(bytes),
                    append_from: None,
                    ..Change::default()
                });
                next += 1;
            } else {
                pending.extend(kept.iter().map(|e| e.to_line()));
            }
        }
        flush(&mut pending, &mut next, &mut changes);

        let source_meta = self.meta(source)?;
        let subject = subject::fork(
            &subject::name(&id, title),
            &subject::name(source, source_meta.title.as_deref()),
            forked_from.turn,
            stats.events,
        );
        let trailers = Trailers {
            convo_id: Some(id.clone()),
            turns: Some(stats.turns),
            events: Some(stats.events),
            tokens: Some(stats.tokens()),
            ..Default::default()
        };
        tx.changes(changes).wrote_conversation(&id, stats, updated, Some(who), None);
        let committed = tx.commit(&subject, &trailers, clock)?;
        Ok(Created { id, commit: committed.commit, subject, landed: committed.landed })
    }

    /// Explicit ids must be new. Costs a read of the conversation, so only when ids were given.
    fn check_ids(&self, id: &str, drafts: &[Draft]) -> Result<()> {
        if drafts.iter().all(|d| d.id.is_none()) {
            return Ok(());
        }
        // From the outline index: a long conversation's ids without parsing its events. A
        // few new ids (a compaction's) are looked for; many go in a set first.
        let outlined = self.outlined(id)?;
        let outlines = &outlined.outlined.outlines;
        let named = drafts.iter().filter(|d| d.id.is_some()).count();
        let mut seen: HashSet<&str> = HashSet::new();
        if named > 8 {
            seen.extend(outlines.iter().map(|o| o.id.as_str()));
        }
        for draft in drafts {
            let Some(event_id) = &draft.id else { continue };
            let stored = named <= 8 && outlines.iter().any(|o| o.id == *event_id);
            if stored || !seen.insert(event_id.as_str()) {
                return Err(StoreError::DuplicateId { line: draft.line, id: event_id.clone() });
            }
        }
        Ok(())
    }

    /// A `tool_call`'s id must be new to the conversation: a result names its call by it,
    /// so a second call under the same id would make that ambiguous. (Importers rename a
    /// repeated call id and keep the source's as `source_call_id`.)
    fn check_new_calls(&self, id: &str, drafts: &[Draft]) -> Result<()> {
        let mut calls: Vec<(usize, &str)> = Vec::new();
        for draft in drafts {
            if let Kind::ToolCall { call_id, .. } = &draft.kind {
                if calls.iter().any(|(_, c)| c == call_id) {
                    return Err(StoreError::DuplicateCallId { line: draft.line, call_id: call_id.clone() });
                }
                calls.push((draft.line, call_id));
            }
        }
        if calls.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = calls.iter().map(|(_, c)| *c).collect();
        let used = self.used_call_ids(id, &ids)?;
        match calls.iter().find(|(_, c)| used.contains(*c)) {
            Some((line, call_id)) => Err(StoreError::DuplicateCallId { line: *line, call_id: (*call_id).to_owned() }),
            None => Ok(()),
        }
    }

    /// Which of `call_ids` a `tool_call` of conversation `id` already uses. A duplicate can
    /// be anywhere, so every segment is read; only those whose bytes hold one of the ids
    /// (ids are plain ASCII, so JSON stores them verbatim) are parsed.
    fn used_call_ids(&self, id: &str, call_ids: &[&str]) -> Result<HashSet<String>> {
        let mut used = HashSet::new();
        if call_ids.is_empty() {
            return Ok(used);
        }
        // A duplicate can be anywhere: the outline index has every call id.
        for outline in &self.outlined(id)?.outlined.outlines {
            if let Shape::ToolCall { call_id, .. } = &outline.shape
                && call_ids.contains(&call_id.as_str())
            {
                used.insert(call_id.to_string());
            }
        }
        Ok(used)
    }

    /// Every `tool_result` must answer a `tool_call` before it. Calls are usually recent, so
    /// segments are searched newest first and the search stops once all are found.
    fn check_call_ids(&self, id: &str, drafts: &[Draft], groups: &[(u64, ObjectId)]) -> Result<()> {
        let mut missing: Vec<(usize, &str)> = Vec::new();
        let mut calls_in_input: HashSet<&str> = HashSet::new();
        for draft in drafts {
            match &draft.kind {
                Kind::ToolCall { call_id, .. } => {
                    calls_in_input.insert(call_id);
                }
                Kind::ToolResult { call_id, .. } if !calls_in_input.contains(call_id.as_str()) => {
                    missing.push((draft.line, call_id));
                }
                _ => {}
            }
        }
        'groups: for (group, tree) in groups.iter().rev() {
            for (number, blob) in self.group_segments(id, *group, *tree)?.into_iter().rev() {
                if missing.is_empty() {
                    break 'groups;
                }
                let stored = self.parse_segment(&layout::segment_path(id, number), blob)?;
                missing.retain(|(_, call_id)| {
                    !stored.iter().any(|e| matches!(&e.kind, Kind::ToolCall { call_id: c, .. } if c == call_id))
                });
            }
        }
        match missing.first() {
            Some((line, call_id)) => Err(StoreError::UnknownCallId { line: *line, call_id: (*call_id).to_owned() }),
            None => Ok(()),
        }
    }
}
