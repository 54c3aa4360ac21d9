//! A [`Transaction`]: the files one commit writes, and what the commit means for the caches
//! derived from HEAD (a conversation's counts, its catalogue and titles lines, its log
//! index, the catalogue as a whole).
//!
//! A writer says what it changed and what that means; the transaction commits (through the
//! one landing, [`Store::commit`]) and only then tells the caches. So a writer never calls
//! a cache by hand, a cache never hears of a commit that did not land, and a cache that
//! fails to keep up is the next reader's rebuild, never the writer's error: once HEAD has
//! moved, nothing may read as a failed commit (a retry would commit twice).

use gix::ObjectId;

use super::cache::Cache;
use super::history::Trailers;
use super::txn::{Change, Committed, Lock};
use super::{Result, Store, layout};
use crate::clock::Clock;
use crate::event::Stats;

/// One commit under way (see the module docs). Nothing is written until
/// [`commit`](Self::commit).
pub(crate) struct Transaction<'s> {
    store: &'s Store,
    lock: &'s Lock,
    changes: Vec<Change>,
    observers: Vec<Observer>,
}

/// What the commit means for the derived caches, told once it has landed.
enum Observer {
    /// The commit made or changed conversation `id` (`alone`: and no other), which now
    /// counts `stats`, its newest event at `updated`: its cache, its catalogue and titles
    /// lines, its log index.
    Conversation { id: String, stats: Stats, updated: Option<String>, previous: Option<ObjectId>, alone: bool },
    /// The commit continues conversation `id`'s log chain from `previous`: its log index.
    Log { id: String, previous: Option<ObjectId> },
    /// The commit took conversation `id` out of HEAD: its cached counts go.
    Removed { id: String },
    /// The commit changed conversations as a whole (removed, restored, many at once): the
    /// catalogue is certified again by a refresh, not line by line.
    Catalogue,
}

impl Store {
    /// A commit to build under `lock`.
    pub(crate) fn transaction<'s>(&'s self, lock: &'s Lock) -> Transaction<'s> {
        Transaction { store: self, lock, changes: Vec::new(), observers: Vec::new() }
    }
}

impl Transaction<'_> {
    /// Write `change` (a file's bytes, a blob already written, or a removal).
    pub(crate) fn change(&mut self, change: Change) -> &mut Self {
        self.changes.push(change);
        self
    }

    /// Write every one of `changes`.
    pub(crate) fn changes(&mut self, changes: impl IntoIterator<Item = Change>) -> &mut Self {
        self.changes.extend(changes);
        self
    }

    /// The commit makes or changes conversation `id` and no other; it then counts `stats`,
    /// its newest event at `updated`, and its log chain continues from `previous`.
    pub(crate) fn wrote_conversation(
        &mut self,
        id: &str,
        stats: Stats,
        updated: Option<String>,
        previous: Option<ObjectId>,
    ) -> &mut Self {
        self.wrote(id, stats, updated, previous, true)
    }

    /// [`wrote_conversation`](Self::wrote_conversation) for one of several conversations
    /// the commit changes: its catalogue line certifies nothing until a
    /// [`changes_catalogue`](Self::changes_catalogue) refresh after every line is in.
    pub(crate) fn wrote_one_of(
        &mut self,
        id: &str,
        stats: Stats,
        updated: Option<String>,
        previous: Option<ObjectId>,
    ) -> &mut Self {
        self.wrote(id, stats, updated, previous, false)
    }

    fn wrote(
        &mut self,
        id: &str,
        stats: Stats,
        updated: Option<String>,
        previous: Option<ObjectId>,
        alone: bool,
    ) -> &mut Self {
        self.observers.push(Observer::Conversation { id: id.to_owned(), stats, updated, previous, alone });
        self
    }

    /// The commit removes conversation `id`.
    pub(crate) fn removes_conversation(&mut self, id: &str) -> &mut Self {
        self.observers.push(Observer::Removed { id: id.to_owned() });
        self
    }

    /// The commit continues conversation `id`'s log chain from `previous` (its counts are
    /// left to the next reader).
    pub(crate) fn continues_log(&mut self, id: &str, previous: Option<ObjectId>) -> &mut Self {
        self.observers.push(Observer::Log { id: id.to_owned(), previous });
        self
    }

    /// The commit changes which conversations there are, or several at once.
    pub(crate) fn changes_catalogue(&mut self) -> &mut Self {
        self.observers.push(Observer::Catalogue);
        self
    }

    /// Commit with `subject` and `trailers`, then tell the caches.
    pub(crate) fn commit(self, subject: &str, trailers: &Trailers, clock: &Clock) -> Result<Committed> {
        self.commit_message(&format!("{subject}\n\n{}", trailers.render()), clock)
    }

    /// [`commit`](Self::commit) with the whole message given.
    pub(crate) fn commit_message(self, message: &str, clock: &Clock) -> Result<Committed> {
        let committed = self.store.commit(self.lock, &self.changes, message, clock)?;
        for observer in self.observers {
            self.store.notify(observer, &committed);
        }
        Ok(committed)
    }
}

impl Store {
    /// Tell one cache what `committed` means for it. Best effort: a cache that does not
    /// keep up is rebuilt by the next read.
    fn notify(&self, observer: Observer, committed: &Committed) {
        match observer {
            Observer::Conversation { id, stats, updated, previous, alone } => {
                if let Ok(Some(tree)) = self.entry_at(committed.tree, &layout::conversation_dir(&id)) {
                    let cache = Cache {
                        tree,
                        stats,
                        updated,
                        last_commit: Some(committed.commit),
                        conversations_at_last: None,
                    };
                    self.write_cache(&id, &cache);
                    self.catalogue_note(&id, &cache, alone);
                }
                self.record_log(&id, committed.commit, previous);
            }
            Observer::Log { id, previous } => self.record_log(&id, committed.commit, previous),
            Observer::Removed { id } => self.forget_cache(&id),
            Observer::Catalogue => self.catalogue_refresh(),
        }
    }
}
