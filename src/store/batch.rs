//! Writes to many conversations in one commit (`import DIR`): conversations made and
//! conversations appended to are gathered under the lock, then committed together, or
//! discarded together, so the store is left as it was.
//!
//! A batch commit names each conversation it appended to, with that conversation's
//! previous commit and counts (`Convo-Appended: ID PREVIOUS TURNS EVENTS TOKENS`), so
//! `log ID` follows its own chain through it and shows its sizes as for any append; the
//! ones it made are `Convo-Imported`, as an import's.

use super::bulk::Appending;
use super::history::{Appended, Trailers};
use super::import::Staged;
use super::txn::{Change, Landed, Lock};
use super::{Meta, Result, Store};
use crate::clock::Clock;

/// What one commit will write.
#[derive(Default)]
pub struct Batch {
    /// Conversations to make, in groups made together (a session and its subagents: a
    /// `parent` indexes its group).
    made: Vec<Vec<Staged>>,
    /// Appends, each with the `meta.json` to write beside it.
    appends: Vec<(Appending, Option<Meta>)>,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.made.is_empty() && self.appends.is_empty()
    }

    /// Whether the batch appends to conversation `id`.
    pub fn appends_to(&self, id: &str) -> bool {
        self.appends.iter().any(|(a, _)| a.id() == id)
    }

    /// The `meta.json` the batch writes beside its append to conversation `id`.
    pub fn append_meta_mut(&mut self, id: &str) -> Option<&mut Meta> {
        self.appends.iter_mut().find(|(a, _)| a.id() == id).and_then(|(_, m)| m.as_mut())
    }

    /// The conversations the batch will make.
    pub fn made(&self) -> impl Iterator<Item = &Staged> {
        self.made.iter().flatten()
    }
}

/// What a batch commit made.
#[derive(Debug, Clone)]
pub struct BatchCommit {
    pub commit: gix::ObjectId,
    pub landed: Landed,
}

impl Store {
    /// Conversations to make in the batch's commit, as [`Store::commit_staged`] makes them.
    pub fn batch_make(&self, batch: &mut Batch, staged: Vec<Staged>) {
        batch.made.push(staged);
    }

    /// An append to finish in the batch's commit, with `meta` as the conversation's new
    /// `meta.json`, as [`Store::finish_append_with`] does.
    pub fn batch_append(&self, batch: &mut Batch, appending: Appending, meta: Option<Meta>) {
        batch.appends.push((appending, meta));
    }

    /// Remove every object the batch wrote: it will not be committed.
    pub fn discard_batch(&self, batch: &Batch) {
        self.discard(batch.made.iter().flatten());
        for (a, _) in &batch.appends {
            self.discard_append(a);
        }
    }

    /// Commit everything in `batch` as one commit with `subject`; if it does not land, the
    /// objects the batch wrote are removed and the store is as it was.
    pub fn commit_batch(&self, lock: &Lock, mut batch: Batch, subject: &str, clock: &Clock) -> Result<BatchCommit> {
        let prepared = (|| {
            let mut changes = Vec::new();
            let mut trailers = String::new();
            for group in &mut batch.made {
                let (entries, imported) = self.staged_entries(group, clock)?;
                changes.extend(entries.into_iter().map(|(path, blob)| Change {
                    path,
                    blob: Some(blob),
                    ..Change::default()
                }));
                trailers += &imported;
            }
            let mut previous = Vec::new();
            let mut appended = Trailers::default();
            for (a, meta) in &mut batch.appends {
                changes.extend(self.append_changes(a, meta.as_ref())?);
                let before = self.last_commit_of(a.id())?;
                if let Some(previous) = before {
                    let stats = a.stats();
                    let counts = Some((stats.turns, stats.events, stats.tokens()));
                    appended.appended.push(Appended { id: a.id().to_owned(), previous, counts });
                }
                previous.push(before);
            }
            Ok((changes, format!("{subject}\n\n{trailers}{}", appended.render()), previous))
        })();
        let (changes, message, previous) = match prepared {
            Ok(prepared) => prepared,
            Err(e) => {
                self.discard_batch(&batch);
                return Err(e);
            }
        };
        let mut tx = lock.transaction();
        tx.changes(changes);
        // A commit of several conversations certifies the catalogue only once all their
        // lines are in: by a refresh, not line by line.
        let alone = batch.appends.len() == 1 && batch.made.is_empty();
        for ((a, _), previous) in batch.appends.iter().zip(previous) {
            tx.appended(a, previous, alone);
        }
        if !alone {
            tx.changes_catalogue();
        }
        let committed = match tx.commit_message(&message, clock) {
            Ok(committed) => committed,
            Err(e) => {
                // HEAD did not move: what the batch wrote is referenced by nothing.
                self.discard_batch(&batch);
                return Err(e);
            }
        };
        Ok(BatchCommit { commit: committed.commit, landed: committed.landed })
    }
}
