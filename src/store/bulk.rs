//! An append of any size, written while its input is read: `convo append` of a 50 MB file
//! holds one segment, not the file, its events and their lines.
//!
//! [`Store::begin_append`] reopens the conversation's open segment; [`Store::append_more`]
//! checks each event as [`Store::append`] does (an id used twice, a call id used twice, a
//! result for a call that does not exist), and writes a segment as a blob as soon as it is
//! full; [`Store::finish_append`] commits them all at once, in the layout `append` gives.
//! Until that commit nothing is visible, and the caller holds the store lock throughout, so
//! [`Store::discard_append`] can remove the blobs of an append that fails part way (a bad
//! line near the end of the input): the store is left byte for byte as it was.

use gix::ObjectId;

use super::cache::Cache;
use super::history::Trailers;
use super::txn::{Change, Landed, Lock};
use super::{Result, Store, StoreError, git_err, layout, subject};
use crate::clock::Clock;
use crate::event::{Draft, IdSet, Kind, Shape, Stats};

/// An append under way (see the module's doc).
pub struct Appending {
    id: String,
    before: Cache,
    stats: Stats,
    /// One timestamp for every event given none: they arrive in one commit.
    ts: String,
    /// The segment being filled, its number, and whether it is the conversation's open
    /// segment reopened (then its first `reopened` bytes are committed already).
    open: Vec<u8>,
    number: u64,
    reopened: Option<usize>,
    written: Vec<(u64, ObjectId)>,
    /// Objects this append added to the database, removed again by [`Store::discard_append`].
    created: Vec<ObjectId>,
    /// Every event id and call id of the conversation and of the input so far, read from
    /// the outline index the first time an event needs them.
    known: Option<(IdSet, IdSet)>,
    added: Vec<Added>,
    first_turn: Option<u64>,
    last_turn: Option<u64>,
    /// A capture: an event or call id the conversation uses already is replaced, not refused
    /// ([`Appending::renaming_taken`]); the new call id of each source call id renamed.
    renaming: bool,
    renamed_calls: std::collections::HashMap<String, String>,
}

impl Appending {
    /// Give an event whose id the conversation uses already a fresh one, keeping the
    /// source's as `source_id` (a call's as `source_call_id`, its result following it), where
    /// a plain append refuses it. For captures of an agent's session: a model server may
    /// repeat its response ids across sessions (local OpenAI-compatible ones do), and a
    /// capture that refused them would leave the agent's turn out for good.
    pub fn renaming_taken(&mut self) {
        self.renaming = true;
    }

    /// The id of the last event added that is said ([`Kind::is_said`]).
    pub fn last_said(&self) -> Option<&str> {
        self.added.iter().rev().find(|a| !matches!(a.kind.as_str(), "config" | "compaction")).map(|a| a.id.as_str())
    }

    /// The conversation appended to.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The conversation's counts with what was added so far.
    pub fn stats(&self) -> crate::event::Stats {
        self.stats
    }

    /// Whether no event has been added yet.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
    }

    /// Events added so far.
    pub fn len(&self) -> usize {
        self.added.len()
    }
}

/// One appended event, as the commit report lists it.
#[derive(Debug, Clone)]
pub struct Added {
    pub id: String,
    pub turn: Option<u64>,
    pub kind: String,
    /// A call's tool name and call id, a result's call id and status.
    pub detail: String,
}

/// What a finished append made.
#[derive(Debug, Clone)]
pub struct BulkAppended {
    pub commit: ObjectId,
    pub subject: String,
    pub added: Vec<Added>,
    pub stats: Stats,
    pub landed: Landed,
}

impl Store {
    /// Start appending to conversation `id` (which must exist), under `lock`.
    pub fn begin_append(&self, _lock: &Lock, id: &str, clock: &Clock) -> Result<Appending> {
        // Refused early, as `append` refuses it: there is no conversation to append to.
        self.meta(id)?;
        let root = self.head_tree_id()?.ok_or(StoreError::Empty)?;
        let groups = self.groups_in(root, id)?;
        let open = match groups.last() {
            Some((group, tree)) => self.group_segments(id, *group, *tree)?.pop(),
            None => None,
        };
        let (number, open, reopened) = match open {
            Some((number, blob)) => {
                let bytes = self.read_blob(blob)?;
                let len = bytes.len();
                (number, bytes, Some(len))
            }
            None => (0, Vec::new(), None),
        };
        let before = self.cached_stats(id)?;
        Ok(Appending {
            id: id.to_owned(),
            stats: before.stats,
            before,
            ts: clock.timestamp(),
            open,
            number,
            reopened,
            written: Vec::new(),
            created: Vec::new(),
            known: None,
            added: Vec::new(),
            first_turn: None,
            last_turn: None,
            renaming: false,
            renamed_calls: Default::default(),
        })
    }

    /// Check and add `drafts` (their `line`s name them in errors). A refused event leaves
    /// the append unusable: discard it.
    pub fn append_more(&self, a: &mut Appending, drafts: Vec<Draft>, clock: &Clock) -> Result<()> {
        let stamp = self.stamp();
        for mut d in drafts {
            stamp.apply(&d.kind, &mut d.extra);
            let needs_known = d.id.is_some() || matches!(d.kind, Kind::ToolCall { .. } | Kind::ToolResult { .. });
            if needs_known && a.known.is_none() {
                let mut ids = IdSet::default();
                let mut calls = IdSet::default();
                for o in &self.outlined(&a.id)?.outlined.outlines {
                    ids.insert(&o.id);
                    if let Shape::ToolCall { call_id, .. } = &o.shape {
                        calls.insert(call_id);
                    }
                }
                a.known = Some((ids, calls));
            }
            if let (true, Some((ids, calls))) = (a.renaming, a.known.as_ref()) {
                rename_taken(&mut d, ids, calls, &mut a.renamed_calls, clock);
            }
            if let Some((ids, calls)) = a.known.as_mut() {
                if let Some(event_id) = &d.id
                    && !ids.insert(event_id)
                {
                    return Err(StoreError::DuplicateId { line: d.line, id: event_id.clone() });
                }
                match &d.kind {
                    Kind::ToolCall { call_id, .. } if !calls.insert(call_id) => {
                        return Err(StoreError::DuplicateCallId { line: d.line, call_id: call_id.clone() });
                    }
                    Kind::ToolResult { call_id, .. } if !calls.contains(call_id) => {
                        return Err(StoreError::UnknownCallId { line: d.line, call_id: call_id.clone() });
                    }
                    _ => {}
                }
            }
            let event_id = d.id.clone().unwrap_or_else(|| clock.new_id());
            if let Some((ids, _)) = a.known.as_mut() {
                ids.insert(&event_id);
            }
            let ts = d.ts.clone().unwrap_or_else(|| a.ts.clone());
            let event = d.into_event(event_id, ts);
            a.stats.add(&event);
            if let Some(who) = &mut a.before.who {
                who.add(&event);
            }
            let turn = a.stats.current_turn();
            if turn.is_some() {
                a.first_turn = a.first_turn.or(turn);
                a.last_turn = turn;
            }
            let detail = match &event.kind {
                Kind::ToolCall { call_id, name, .. } => format!("{name} {call_id}"),
                Kind::ToolResult { call_id, is_error, .. } => {
                    format!("{call_id} {}", if *is_error { "error" } else { "success" })
                }
                _ => String::new(),
            };
            let line = event.to_line();
            // As `append` lays lines out: a segment takes lines while it stays within
            // SEGMENT_BYTES (an empty one takes any line).
            if !a.open.is_empty() && a.open.len() + line.len() > layout::SEGMENT_BYTES {
                self.flush_appending(a)?;
            }
            a.open.extend_from_slice(line.as_bytes());
            a.added.push(Added { kind: event.kind.type_name().to_owned(), id: event.id, turn, detail });
            a.before.updated = Some(event.ts);
        }
        Ok(())
    }

    fn flush_appending(&self, a: &mut Appending) -> Result<()> {
        let (blob, created) = self.write_segment(&a.open)?;
        if created {
            a.created.push(blob);
        }
        a.written.push((a.number, blob));
        a.number += 1;
        a.open.clear();
        Ok(())
    }

    /// What committing `a` changes: its segments written (the last one flushed first), and
    /// its `meta.json` when given.
    pub(super) fn append_changes(&self, a: &mut Appending, meta: Option<&super::Meta>) -> Result<Vec<Change>> {
        if !a.open.is_empty() {
            self.flush_appending(a)?;
        }
        let first = a.written.first().map(|(n, _)| *n);
        let mut changes: Vec<Change> = a
            .written
            .iter()
            .map(|(number, blob)| Change {
                path: layout::segment_path(&a.id, *number),
                blob: Some(*blob),
                append_from: a.reopened.filter(|_| Some(*number) == first),
                ..Change::default()
            })
            .collect();
        if let Some(meta) = meta {
            changes.push(super::write::meta_change(&a.id, meta)?);
        }
        Ok(changes)
    }

    /// Write a segment's bytes as a blob: its id, and whether this write created it (an
    /// object already there is not the writer's to remove).
    pub(super) fn write_segment(&self, bytes: &[u8]) -> Result<(ObjectId, bool)> {
        let id = gix::objs::compute_hash(self.repo.object_hash(), gix::objs::Kind::Blob, bytes)
            .map_err(git_err("hash segment"))?;
        // Without refreshing gix's view of the packs: a new blob (nearly every one) is in
        // none, and a refresh re-reads `objects/pack`. A blob only a new pack holds gets a
        // loose copy this append may remove again, which leaves the packed one.
        let existed = self.repo.objects.exists_without_refresh(&id);
        let blob = self.gc_proof(|| self.write_loose_hashed(gix::objs::Kind::Blob, bytes, id))?;
        Ok((blob, !existed))
    }

    /// Remove the blobs an append that will not be finished wrote (see the module's doc).
    pub fn discard_append(&self, a: &Appending) {
        self.remove_objects(&a.created);
    }

    /// Commit the append: `append: "title" turns 3-9 (+120 events)`. An append of nothing is
    /// refused, with nothing written.
    pub fn finish_append(&self, lock: &Lock, a: Appending, clock: &Clock) -> Result<BulkAppended> {
        self.finish_append_with(lock, a, None, None, clock)
    }

    /// [`finish_append`](Self::finish_append), with the conversation's `meta.json` replaced
    /// by `meta` in the same commit (where an import that follows a file records how far it
    /// has read), and the subject given (default: `append: ...`); with `meta`, an append of
    /// nothing commits the new metadata alone.
    pub fn finish_append_with(
        &self,
        lock: &Lock,
        mut a: Appending,
        meta: Option<super::Meta>,
        subject: Option<String>,
        clock: &Clock,
    ) -> Result<BulkAppended> {
        if a.added.is_empty() && meta.is_none() {
            return Err(StoreError::BadFile { path: a.id.clone(), message: "no events to append".into() });
        }
        let changes = self.append_changes(&mut a, meta.as_ref())?;
        let previous = self.last_commit_of(&a.id)?;
        let meta = match meta {
            Some(meta) => meta,
            None => self.meta(&a.id)?,
        };
        let turns = [a.first_turn, a.last_turn];
        let subject = subject
            .unwrap_or_else(|| subject::append(&subject::name(&a.id, meta.title.as_deref()), &turns, a.added.len()));
        let trailers = Trailers {
            convo_id: Some(a.id.clone()),
            previous,
            turns: Some(a.stats.turns),
            events: Some(a.stats.events),
            tokens: Some(a.stats.tokens()),
            compaction: None,
            merged: Vec::new(),
            appended: Vec::new(),
        };
        let mut tx = lock.transaction();
        tx.changes(changes).appended(&a, previous, true);
        let committed = match tx.commit(&subject, &trailers, clock) {
            Ok(committed) => committed,
            Err(e) => {
                // HEAD did not move: the blobs are referenced by nothing.
                self.discard_append(&a);
                return Err(e);
            }
        };
        Ok(BulkAppended { commit: committed.commit, subject, added: a.added, stats: a.stats, landed: committed.landed })
    }
}

impl super::transaction::Transaction<'_> {
    /// The commit finishes append `a` (see [`wrote_conversation`](Self::wrote_conversation)
    /// and [`wrote_one_of`](Self::wrote_one_of) for `alone`).
    pub(super) fn appended(&mut self, a: &Appending, previous: Option<ObjectId>, alone: bool) -> &mut Self {
        let (updated, who) = (a.before.updated.clone(), a.before.who.clone());
        if alone {
            self.wrote_conversation(&a.id, a.stats, updated, who, previous)
        } else {
            self.wrote_one_of(&a.id, a.stats, updated, who, previous)
        }
    }
}

/// A capture's event with the ids the conversation uses already replaced (see
/// [`Appending::renaming_taken`]); a result follows its call's new id.
fn rename_taken(
    d: &mut Draft,
    ids: &IdSet,
    calls: &IdSet,
    renamed: &mut std::collections::HashMap<String, String>,
    clock: &Clock,
) {
    use serde_json::Value;
    if let Some(id) = d.id.as_deref().filter(|id| ids.contains(id)) {
        d.extra.entry("source_id").or_insert_with(|| Value::String(id.to_owned()));
        d.id = Some(clock.new_id());
    }
    match &mut d.kind {
        Kind::ToolCall { call_id, .. } if calls.contains(call_id) => {
            let new = format!("call_{}", clock.new_id());
            d.extra.entry("source_call_id").or_insert_with(|| Value::String(call_id.clone()));
            renamed.insert(call_id.clone(), new.clone());
            *call_id = new;
        }
        Kind::ToolResult { call_id, .. } => {
            if let Some(new) = renamed.get(call_id.as_str()) {
                *call_id = new.clone();
            }
        }
        _ => {}
    }
}
