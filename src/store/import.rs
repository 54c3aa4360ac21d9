//! New conversations written as they are read (an import), in bounded memory: events go into
//! segments, each written as a blob as soon as it is full, and one commit at the end puts
//! every segment and `meta.json` into the tree. Until that commit nothing is visible; an
//! import that fails halfway leaves only unreferenced objects for `git gc`.

use gix::ObjectId;

use super::txn::{Change, Landed, Lock};
use super::{Meta, Result, Store, StoreError, layout};
use crate::clock::Clock;
use crate::event::{Draft, Event, IdSet, Kind, Stats};

/// What [`Store::commit_staged`] made: each conversation's id and counts, in staging order.
pub struct StagedCommit {
    pub conversations: Vec<(String, Stats)>,
    pub landed: Landed,
}

/// A conversation being written.
pub struct Staged {
    pub id: String,
    pub title: Option<String>,
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Index (among the conversations staged together) of the one this is a subagent of.
    pub parent: Option<usize>,
    /// The conversation this one goes on from (a Gemini CLI session after a rewind).
    pub forked_from: Option<super::ForkedFrom>,
    pub stats: Stats,
    /// The id of the last event staged that is said ([`Kind::is_said`]).
    pub last_said: Option<String>,
    next: u64,
    open: Vec<u8>,
    blobs: Vec<(String, ObjectId)>,
    /// Objects this import added to the database, removed again by [`Store::discard`].
    created: Vec<ObjectId>,
    ids: IdSet,
    calls: IdSet,
}

impl Store {
    pub fn stage(&self, clock: &Clock) -> Staged {
        Staged {
            id: self.new_conversation_id(clock),
            title: None,
            extra: Default::default(),
            parent: None,
            forked_from: None,
            stats: Stats::default(),
            last_said: None,
            next: 0,
            open: Vec::new(),
            blobs: Vec::new(),
            created: Vec::new(),
            ids: IdSet::default(),
            calls: IdSet::default(),
        }
    }

    /// Add events to a staged conversation, checked like `append`'s input: unique ids, and
    /// every tool result after its call.
    pub fn stage_drafts(&self, staged: &mut Staged, mut drafts: Vec<Draft>, clock: &Clock) -> Result<()> {
        let stamp = self.stamp();
        for d in &mut drafts {
            stamp.apply(&d.kind, &mut d.extra);
        }
        self.stage_copies(staged, drafts, clock)
    }

    /// [`stage_drafts`](Self::stage_drafts) for events already in the store (a fork's
    /// copies), which keep who recorded them.
    pub fn stage_copies(&self, staged: &mut Staged, drafts: Vec<Draft>, clock: &Clock) -> Result<()> {
        let ts = clock.timestamp();
        for d in drafts {
            match &d.kind {
                Kind::ToolCall { call_id, .. } => {
                    staged.calls.insert(call_id);
                }
                Kind::ToolResult { call_id, .. } if !staged.calls.contains(call_id) => {
                    return Err(StoreError::UnknownCallId { line: d.line, call_id: call_id.clone() });
                }
                _ => {}
            }
            let id = d.id.clone().unwrap_or_else(|| clock.new_id());
            if !staged.ids.insert(&id) {
                return Err(StoreError::DuplicateId { line: d.line, id });
            }
            let event_ts = d.ts.clone().unwrap_or_else(|| ts.clone());
            if d.kind.is_said() {
                staged.last_said = Some(id.clone());
            }
            let event: Event = d.into_event(id, event_ts);
            staged.stats.add(&event);
            let line = event.to_line();
            if !staged.open.is_empty() && staged.open.len() + line.len() > layout::SEGMENT_BYTES {
                self.flush_segment(staged)?;
            }
            staged.open.extend_from_slice(line.as_bytes());
        }
        Ok(())
    }

    /// What committing `staged` (conversations made together: `parent` indexes among them)
    /// adds to the tree, path and blob, and its `Convo-Imported` trailers. Each one's last
    /// segment is flushed and its `meta.json` written.
    pub(super) fn staged_entries(
        &self,
        staged: &mut [Staged],
        clock: &Clock,
    ) -> Result<(Vec<(String, ObjectId)>, String)> {
        let ids: Vec<String> = staged.iter().map(|s| s.id.clone()).collect();
        let mut entries: Vec<(String, ObjectId)> = Vec::new();
        let mut trailers = String::new();
        let mut links = Vec::new();
        for s in staged {
            if !s.open.is_empty() {
                self.flush_segment(s)?;
            }
            let mut extra = std::mem::take(&mut s.extra);
            if let Some(parent) = s.parent.and_then(|p| ids.get(p)) {
                extra.insert("subagent_of".into(), serde_json::Value::String(parent.clone()));
            }
            if let Some(parent) = extra.get("subagent_of").and_then(|p| p.as_str()) {
                links.push((s.id.clone(), parent.to_owned()));
            }
            let meta =
                Meta { title: s.title.take(), created: clock.timestamp(), forked_from: s.forked_from.take(), extra };
            let mut bytes = serde_json::to_vec_pretty(&meta)
                .map_err(|e| StoreError::BadFile { path: layout::meta_path(&s.id), message: e.to_string() })?;
            bytes.push(b'\n');
            // The metadata blob is this writer's too: removed with the rest if it stops.
            let (blob, created) = self.write_segment(&bytes)?;
            if created {
                s.created.push(blob);
            }
            entries.push((layout::meta_path(&s.id), blob));
            entries.append(&mut s.blobs);
            trailers += &format!("Convo-Imported: {}\n", s.id);
        }
        // Captured here: `rm` of the parent may take these along (see `subagents`).
        self.record_subagents(&links)?;
        Ok((entries, trailers))
    }

    fn flush_segment(&self, staged: &mut Staged) -> Result<()> {
        let (blob, created) = self.write_segment(&staged.open)?;
        if created {
            staged.created.push(blob);
        }
        staged.blobs.push((layout::segment_path(&staged.id, staged.next), blob));
        staged.next += 1;
        staged.open.clear();
        Ok(())
    }

    /// Remove the objects staged conversations wrote, for an import that stops before its
    /// commit: the store is left byte for byte as it was, not merely with nothing visible.
    /// The caller holds the store lock from the first staged write to here, so no other
    /// writer can have written (and be about to reference) the same objects.
    pub fn discard<'a>(&self, staged: impl IntoIterator<Item = &'a Staged>) {
        let created: Vec<ObjectId> = staged.into_iter().flat_map(|s| s.created.iter().copied()).collect();
        self.remove_objects(&created);
    }

    /// Remove loose objects a writer created and never committed (see [`Store::discard`]).
    pub(super) fn remove_objects(&self, created: &[ObjectId]) {
        if self.keeps_written_objects() {
            return;
        }
        let objects = self.repo.common_dir().join("objects");
        for id in created {
            let hex = id.to_hex().to_string();
            // Best effort: a file that cannot be removed is an unreferenced object `git gc`
            // prunes later, never a visible change. The fan-out folder stays: it was made at
            // init, and writers expect it.
            let _ = std::fs::remove_file(objects.join(&hex[..2]).join(&hex[2..]));
        }
    }

    /// Commit every staged conversation at once. If HEAD does not move, the caller discards
    /// the objects ([`Store::discard`]).
    pub fn commit_staged(
        &self,
        lock: &Lock,
        mut staged: Vec<Staged>,
        subject: &str,
        clock: &Clock,
    ) -> Result<StagedCommit> {
        let (entries, trailers) = self.staged_entries(&mut staged, clock)?;
        let mut tx = lock.transaction();
        tx.changes(entries.into_iter().map(|(path, blob)| Change { path, blob: Some(blob), ..Change::default() }))
            .changes_catalogue();
        let landed = tx.commit_message(&format!("{subject}\n\n{trailers}"), clock)?.landed;
        let conversations = staged.into_iter().map(|s| (s.id, s.stats)).collect();
        Ok(StagedCommit { conversations, landed })
    }
}
