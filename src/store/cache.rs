//! A local, disposable cache of per-conversation counts, keyed by the conversation's tree id.
//!
//! It lets `list` and `append` skip reading every event. Any mismatch with HEAD (a pull, a
//! `git reset`, a cache from another version) means a miss and a recount from the events,
//! so the cache can be deleted at any time without loss.
//!
//! Every append rewrites its conversation's file, in place: a new file renamed over it
//! made the filesystem allocate an inode (and free one) per append, which on ext4 here cost
//! as much as the rest of the cache. A reader can therefore meet a half-written file (a
//! concurrent append, a crash): the file carries a checksum of its fields, and one that
//! does not match, or does not parse, is a miss.

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Result, Store, layout, txn::private_options};
use crate::event::Stats;
use crate::event::who::Who;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Checked {
    /// The SHA-1 (hex, first 16 characters) of `stored` as written.
    check: String,
    stored: Box<serde_json::value::RawValue>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    tree: String,
    stats: Stats,
    updated: Option<String>,
    last_commit: Option<String>,
    /// The `conversations` tree at `last_commit`, so that `last_commit` is checked against
    /// its commit's small root tree instead of the store-sized `conversations` tree.
    #[serde(default)]
    conversations_at_last: Option<String>,
    /// [`Stats::TURN_RULE`] when written (absent: 0, a convo from before the rule).
    #[serde(default)]
    turn_rule: u32,
    /// Who took part (absent from a file an older convo wrote: a miss, see [`Cache::who`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    who: Option<Who>,
}

#[derive(Debug, Clone)]
pub(super) struct Cache {
    /// The conversation's tree id at HEAD these counts describe.
    pub tree: ObjectId,
    pub stats: Stats,
    /// Timestamp of the newest event.
    pub updated: Option<String>,
    /// The newest commit that changed the conversation, head of its `Convo-Previous` chain.
    pub last_commit: Option<ObjectId>,
    /// The `conversations` tree at `last_commit` (filled in by [`Store::write_cache`]).
    pub conversations_at_last: Option<ObjectId>,
    /// The people, agents and models of its events, for `list --format json`; `None` when
    /// not known (a file an older convo wrote, an append to one): a reader recounts it.
    pub who: Option<Who>,
}

impl Store {
    fn cache_path(&self, id: &str) -> std::path::PathBuf {
        self.state_dir().join("cache").join(format!("{id}.json"))
    }

    pub(super) fn read_cache(&self, id: &str) -> Option<Cache> {
        let bytes = std::fs::read(self.cache_path(id)).ok()?;
        let checked: Checked = serde_json::from_slice(&bytes).ok()?;
        if checked.check != check_of(checked.stored.get().as_bytes()) {
            return None;
        }
        let stored: Stored = serde_json::from_str(checked.stored.get()).ok()?;
        if stored.turn_rule != Stats::TURN_RULE {
            return None;
        }
        Some(Cache {
            tree: ObjectId::from_hex(stored.tree.as_bytes()).ok()?,
            stats: stored.stats,
            updated: stored.updated,
            last_commit: stored.last_commit.and_then(|c| ObjectId::from_hex(c.as_bytes()).ok()),
            conversations_at_last: stored.conversations_at_last.and_then(|c| ObjectId::from_hex(c.as_bytes()).ok()),
            who: stored.who,
        })
    }

    /// Drop conversation `id`'s cached counts (it is gone from HEAD).
    pub(super) fn forget_cache(&self, id: &str) {
        let _ = std::fs::remove_file(self.cache_path(id));
    }

    /// Best effort: a store we cannot write to still answers, just more slowly.
    pub(super) fn write_cache(&self, id: &str, cache: &Cache) {
        // The commit's root tree is small (and usually just written): one lookup now
        // spares each later read a walk of the whole `conversations` tree.
        let conversations_at_last = cache
            .last_commit
            .and_then(|c| self.commit_tree_id(c).ok())
            .and_then(|root| self.entry_at(root, layout::CONVERSATIONS).ok().flatten());
        let stored = Stored {
            tree: cache.tree.to_string(),
            stats: cache.stats,
            updated: cache.updated.clone(),
            last_commit: cache.last_commit.map(|c| c.to_string()),
            conversations_at_last: conversations_at_last.map(|c| c.to_string()),
            turn_rule: Stats::TURN_RULE,
            who: cache.who.clone(),
        };
        let dir = self.state_dir().join("cache");
        if super::create_private_dir(&dir).is_ok()
            && let Ok(stored) = serde_json::to_string(&stored)
            && let Ok(stored) = serde_json::value::RawValue::from_string(stored)
            && let Ok(bytes) = serde_json::to_vec(&Checked { check: check_of(stored.get().as_bytes()), stored })
        {
            let _ = write_in_place(&self.cache_path(id), &bytes);
        }
    }

    /// Counts for conversation `id` at HEAD, recounted from its events on a cache miss.
    pub(super) fn cached_stats(&self, id: &str) -> Result<Cache> {
        let tree = match self.head_tree_id()? {
            Some(root) => self.entry_at(root, &layout::conversation_dir(id))?,
            None => None,
        };
        self.cached_stats_in(id, tree)
    }

    /// Counts for conversation `id` whose folder is the tree `tree` (`None`: not there).
    pub(super) fn cached_stats_in(&self, id: &str, tree: Option<ObjectId>) -> Result<Cache> {
        let Some(tree) = tree else {
            return Ok(Cache {
                tree: ObjectId::null(self.repo.object_hash()),
                stats: Stats::default(),
                updated: None,
                last_commit: None,
                conversations_at_last: None,
                who: Some(Who::default()),
            });
        };
        let previous = self.read_cache(id);
        if let Some(cache) = &previous
            && cache.tree == tree
            && cache.who.is_some()
        {
            return Ok(cache.clone());
        }
        // One segment at a time: a recount holds no more than one segment's events.
        let (mut stats, mut updated, mut who) = (Stats::default(), None, Who::default());
        for (path, blob) in self.segments_of(tree, id)? {
            let events = self.parse_segment(&path, blob)?;
            events.iter().for_each(|e| {
                stats.add(e);
                who.add(e);
            });
            updated = events.last().map(|e| e.ts.clone()).or(updated);
        }
        // A file that lacked only who took part keeps what it knew of the last commit.
        let (last_commit, conversations_at_last) = match previous.filter(|c| c.tree == tree) {
            Some(c) => (c.last_commit, c.conversations_at_last),
            None => (None, None),
        };
        let cache = Cache { tree, stats, updated, last_commit, conversations_at_last, who: Some(who) };
        self.write_cache(id, &cache);
        Ok(cache)
    }
}

/// The first 16 hex digits of the SHA-1 of `bytes`: enough to tell a torn file.
fn check_of(bytes: &[u8]) -> String {
    let mut hasher = gix::hash::hasher(gix::hash::Kind::Sha1);
    hasher.update(bytes);
    hasher.try_finalize().map(|id| id.to_string()[..16].to_owned()).unwrap_or_default()
}

/// Overwrite `path` with `bytes` in its own inode (made on first use), then cut it to
/// their length: a reader in between sees a file that does not check out (see the
/// module's doc).
fn write_in_place(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt as _;
    let file = private_options().write(true).open(path)?;
    file.write_all_at(bytes, 0)?;
    file.set_len(bytes.len() as u64)
}
