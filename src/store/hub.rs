//! The hub at team scale: what a push publishes besides the branch, so that one conversation
//! can be fetched alone and a hub's conversations listed without its history (issue 43).
//!
//! # The design
//!
//! The local store keeps its one branch, and so does the hub: `git clone` of a hub, and
//! every convo from before this one, still see a whole store. Besides the branch, a push
//! publishes, in the same `git push --atomic`:
//!
//! - **one ref per conversation**, `refs/convo/conversations/<id>` ([`conversation_ref`]):
//!   a commit whose tree holds that conversation alone, at the path it has in the store
//!   (`conversations/<fan>/<id>/…`), made of the very trees and blobs the branch holds, so
//!   nothing is stored twice. It is a snapshot, not a line: no parent, a fixed author,
//!   dated by its last event, so the same conversation gives the same commit on every
//!   machine (two pushers of
//!   the same state agree, and an unchanged conversation's ref never moves). Its history
//!   is the branch's. A plain `git fetch` of a newer snapshot sends the whole conversation
//!   again (no parent links it to the older one: 39 KiB for one new event in
//!   `benches/README.md`); a lazy store fetches it with `--depth 1`, which makes upload-pack
//!   leave out what the snapshots it has hold (2.2 KiB there; see `sync::lazy`).
//! - **a catalog**, `refs/convo/catalog` ([`CATALOG_REF`]): a commit whose tree
//!   holds one file per fan folder (`<fan>.jsonl`), one JSON line per conversation
//!   ([`CatalogLine`]: id, title, project, agent, person, times, size, and the tree and tip
//!   of its ref), and whose message names the branch commit it describes
//!   (`Convo-Branch: <commit>`). Its parents are that branch commit and the catalog before
//!   it, so git's packs leave out what the other side has (git excludes the objects of
//!   known commits only where they are parents of what it sends: a parentless catalog had
//!   a push resend every catalog file, and a migration push every conversation). A push
//!   that changed one conversation rewrites one fan file and the root tree; a lazy reader
//!   fetches the catalog with `--depth 1`, never its history.
//!
//! The ref updates ride on the branch's fast-forward: they are forced (`+`), but the push
//! is atomic and the branch is not, so they land only when the branch does, and the branch
//! lands only over a tip this store has merged. A pusher who pulled the hub has every
//! conversation the refs hold, merged; so a forced ref never loses a teammate's events.
//!
//! A push works out what to publish from the last fetch ([`Store::publication`]): when the
//! catalog it fetched describes a commit the store has (the tip it fetched, or one a plain
//! `git push` or an older convo moved the branch past), only the conversations whose trees
//! differ from that commit's are published again (the cost follows what changed);
//! otherwise (a hub no convo of this version pushed to yet) every conversation is, which is
//! also the migration: existing hubs gain the refs on their next push, and stay readable by
//! older convos, which read the branch only.
//!
//! Fetching takes the catalog with an explicit refspec, never a glob over
//! `refs/convo/conversations/`, so protocol v2 sends a ref-prefix and a hub of 100,000
//! conversations does not list 100,000 refs to a fetch. (A push still hears every ref:
//! receive-pack has no ref-prefix.)
//!
//! Everything from a hub is data. A fetched catalog is read by [`Store::read_catalog`],
//! which refuses any entry but `<fan>.jsonl` blobs of bounded size and any line whose id is
//! not a conversation id in that fan; its ids and object ids name refs and trees, never
//! paths on disk, and nothing of it is checked out.
//!
//! # Lazy stores and private conversations
//!
//! Lazy clones (`convo clone URL --lazy`: `sync::lazy`, `store::lazy`, `ops::lazy`) read
//! the catalog and fetch a conversation's ref when one is read. A push whose history would
//! carry a private conversation publishes its own line instead of the branch
//! (`store::published`, `sync::publish`), and a lazy store's push publishes one commit on
//! the hub's tip, which it rebuilds from the catalog: since lazy stores push, the catalog
//! also holds `branch.commit` and `branch.tree`, the branch commit it describes and that
//! commit's root tree byte for byte ([`BranchFiles`]), checked against their ids there.

use std::collections::BTreeMap;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Project, Result, Store, StoreError, git_err, layout};

/// The catalog's ref on a hub.
pub const CATALOG_REF: &str = "refs/convo/catalog";
/// Where the conversations' refs live on a hub.
pub const CONVERSATION_REFS: &str = "refs/convo/conversations/";
/// The catalog's trailer naming the branch commit it describes.
const BRANCH_TRAILER: &str = "Convo-Branch";
/// A fan file bigger than this is not a catalog convo wrote (1,024 fans of such files
/// would list some 100 million conversations).
const MAX_FAN_FILE: usize = 16 << 20;
/// The catalog's copy of the branch commit it describes, byte for byte (see [`Branch`]).
const BRANCH_COMMIT_FILE: &str = "branch.commit";
/// The catalog's copy of that commit's root tree, byte for byte.
const BRANCH_TREE_FILE: &str = "branch.tree";
/// A branch commit or root tree bigger than this is not one convo wrote.
const MAX_BRANCH_FILE: u64 = 1 << 20;

/// The ref of conversation `id` on a hub.
pub fn conversation_ref(id: &str) -> String {
    format!("{CONVERSATION_REFS}{id}")
}

/// One conversation as the catalog lists it: what `list` shows without its events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogLine {
    pub id: String,
    pub title: Option<String>,
    pub project: Project,
    /// The agent of its first event naming one (with its version).
    pub agent: Option<String>,
    /// The person who recorded its first event naming one.
    pub person: Option<String>,
    pub created: String,
    pub updated: String,
    pub events: u64,
    pub turns: u64,
    /// Bytes of its event segments.
    pub bytes: u64,
    /// Its folder's tree (the same as in the branch).
    pub tree: String,
    /// The commit its ref names.
    pub tip: String,
}

/// A catalog as read from a hub (or about to be published to one).
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The branch commit it describes.
    pub branch: Option<ObjectId>,
    /// Its own commit.
    pub commit: ObjectId,
    /// Every conversation, by id.
    pub lines: BTreeMap<String, CatalogLine>,
    /// The file of each fan folder: a push rewrites only those whose lines changed.
    pub fans: BTreeMap<String, ObjectId>,
    /// The blobs holding the branch commit and its root tree, when the catalog has them
    /// (written since lazy stores push; see [`Branch`]).
    pub branch_files: Option<BranchFiles>,
}

/// A catalog without its lines: what a fetch checks and keeps, and where one line is
/// looked up ([`Store::catalog_line`]).
#[derive(Debug, Clone)]
pub struct CatalogIndex {
    pub commit: ObjectId,
    /// The branch commit it describes.
    pub branch: Option<ObjectId>,
    pub fans: BTreeMap<String, ObjectId>,
    pub branch_files: Option<BranchFiles>,
}

/// The blobs of a catalog that copy the branch commit it describes and that commit's root
/// tree, byte for byte. With them and the catalog's lines (every conversation's folder
/// tree), a lazy store rebuilds the hub's tip down to the fan folders, every object checked
/// against the id that names it, and publishes a commit on it without fetching the branch
/// (see `store::lazy`). Hashes make them data, not authority: a copy that is not the object
/// the catalog names is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BranchFiles {
    pub commit: ObjectId,
    pub tree: ObjectId,
}

/// What a push publishes besides the branch.
#[derive(Debug, Clone, Default)]
pub struct Publication {
    /// `(ref, commit)` of each conversation ref to create or move.
    pub refs: Vec<(String, ObjectId)>,
    /// Conversation refs to delete (conversations the hub lists and HEAD no longer holds).
    pub deletes: Vec<String>,
    /// The new catalog commit, `None` when the hub's already describes HEAD.
    pub catalog: Option<ObjectId>,
}

impl Publication {
    pub fn is_empty(&self) -> bool {
        self.refs.is_empty() && self.deletes.is_empty() && self.catalog.is_none()
    }
}

/// `(id, tree)` of the conversations changed or added, and the ids of those removed.
type Changed = (Vec<(String, ObjectId)>, Vec<String>);

/// The signature of every commit this module writes, dated `seconds`: a time taken from
/// what the commit holds, so a snapshot of the same tree is the same commit wherever it is
/// made. Never a fixed old date: git's fetch offers the commits it has newest first and
/// stops offering after some hundreds, so a catalog dated 1970 was never offered, and a
/// pull received every catalog file again instead of the one that changed.
fn signature(seconds: i64) -> gix::actor::Signature {
    gix::actor::Signature {
        name: "convo".into(),
        email: "convo@localhost".into(),
        time: gix::date::Time { seconds, offset: 0 },
    }
}

/// Seconds since the epoch of an RFC 3339 time, 0 for anything else.
fn seconds(time: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(time).map_or(0, |t| t.timestamp())
}

impl Store {
    /// Read a catalog commit fetched from a hub, refusing what convo does not write: a
    /// tree entry but `<fan>.jsonl` files, a file over 16 MiB, a line that is not a
    /// catalog line, an id not in its fan, an object id that is not one, an id twice.
    pub fn read_catalog(&self, commit: ObjectId) -> Result<Catalog> {
        let index = self.catalog_index(commit)?;
        let mut lines = BTreeMap::new();
        for (fan, blob) in &index.fans {
            self.fan_lines(commit, fan, *blob, &mut lines)?;
        }
        Ok(Catalog { branch: index.branch, commit, lines, fans: index.fans, branch_files: index.branch_files })
    }

    /// Check catalog `commit` as [`read_catalog`](Self::read_catalog) does, reading only the
    /// fan files that are not the same blobs in `previous` (a catalog this store checked
    /// before): a pull that changed one conversation checks one file, not 100,000 lines.
    pub fn check_catalog_since(&self, commit: ObjectId, previous: Option<ObjectId>) -> Result<CatalogIndex> {
        let index = self.catalog_index(commit)?;
        let known = previous.and_then(|p| self.catalog_index(p).ok()).map(|p| p.fans).unwrap_or_default();
        let mut lines = BTreeMap::new();
        for (fan, blob) in &index.fans {
            if known.get(fan) != Some(blob) {
                lines.clear();
                self.fan_lines(commit, fan, *blob, &mut lines)?;
            }
        }
        Ok(index)
    }

    /// How many conversations catalog `commit` lists: its fan files' lines, counted
    /// without reading them as JSON.
    pub fn catalog_len(&self, index: &CatalogIndex) -> Result<usize> {
        let mut count = 0;
        for blob in index.fans.values() {
            count += self.read_blob(*blob)?.split(|b| *b == b'\n').filter(|l| !l.trim_ascii().is_empty()).count();
        }
        Ok(count)
    }

    /// A catalog commit's branch, files and fan files, each checked to be what convo writes
    /// (names, kinds and sizes), its lines not read.
    pub fn catalog_index(&self, commit: ObjectId) -> Result<CatalogIndex> {
        let refuse = |path: &str, reason: String| StoreError::Refused {
            commit: commit.to_hex_with_len(7).to_string(),
            path: path.to_owned(),
            reason,
        };
        let object = self.repo.find_object(commit).map_err(git_err(format!("read {commit}")))?;
        if object.kind != gix::object::Kind::Commit {
            return Err(refuse("", format!("is a {}, not a commit", object.kind)));
        }
        let data = self.object_data(commit, gix::objs::Kind::Commit)?;
        let parsed = gix::objs::CommitRef::from_bytes(&data, commit.kind())
            .map_err(git_err(format!("read the catalog commit {commit}")))?;
        let message = String::from_utf8_lossy(parsed.message).into_owned();
        let branch = message
            .lines()
            .filter_map(|l| l.strip_prefix(BRANCH_TRAILER)?.strip_prefix(": "))
            .find_map(|hex| ObjectId::from_hex(hex.trim().as_bytes()).ok());
        let mut fans = BTreeMap::new();
        let (mut branch_commit, mut branch_tree) = (None, None);
        for (name, id, is_tree) in self.tree_entries(self.commit_tree_id(commit)?)? {
            if !is_tree && (name == BRANCH_COMMIT_FILE || name == BRANCH_TREE_FILE) {
                let header = self.repo.find_header(id).map_err(git_err(format!("read {name} of the catalog")))?;
                if header.kind() != gix::object::Kind::Blob || header.size() > MAX_BRANCH_FILE {
                    return Err(refuse(
                        &name,
                        format!("a {} of {} bytes, not a copy of the branch", header.kind(), header.size()),
                    ));
                }
                let slot = if name == BRANCH_COMMIT_FILE { &mut branch_commit } else { &mut branch_tree };
                *slot = Some(id);
                continue;
            }
            let fan = name.strip_suffix(".jsonl").filter(|fan| layout::is_fan(fan) && !is_tree);
            let Some(fan) = fan else {
                return Err(refuse(&name, "not a file a catalog holds (only <fan>.jsonl and branch.* files)".into()));
            };
            let header = self.repo.find_header(id).map_err(git_err(format!("read {name} of the catalog")))?;
            if header.kind() != gix::object::Kind::Blob || header.size() > MAX_FAN_FILE as u64 {
                return Err(refuse(
                    &name,
                    format!("a {} of {} bytes, not a catalog file", header.kind(), header.size()),
                ));
            }
            fans.insert(fan.to_owned(), id);
        }
        let branch_files = match (branch_commit, branch_tree) {
            (Some(commit), Some(tree)) => Some(BranchFiles { commit, tree }),
            _ => None,
        };
        Ok(CatalogIndex { commit, branch, fans, branch_files })
    }

    /// Read and check the lines of fan `fan`'s file `blob` of catalog `commit` into `lines`.
    fn fan_lines(
        &self,
        commit: ObjectId,
        fan: &str,
        blob: ObjectId,
        lines: &mut BTreeMap<String, CatalogLine>,
    ) -> Result<()> {
        let name = format!("{fan}.jsonl");
        let refuse = |path: &str, reason: String| StoreError::Refused {
            commit: commit.to_hex_with_len(7).to_string(),
            path: path.to_owned(),
            reason,
        };
        for (n, text) in self.read_blob(blob)?.split(|b| *b == b'\n').enumerate() {
            if text.trim_ascii().is_empty() {
                continue;
            }
            let at = format!("{name} line {}", n + 1);
            let line: CatalogLine =
                serde_json::from_slice(text).map_err(|e| refuse(&at, format!("not a catalog line ({e})")))?;
            if !layout::is_conversation_id(&line.id) || layout::fan(&line.id) != fan {
                return Err(refuse(&at, "the id is not a conversation id of this fan".into()));
            }
            for hex in [&line.tree, &line.tip] {
                if hex.len() != 40 || ObjectId::from_hex(hex.as_bytes()).is_err() {
                    return Err(refuse(&at, format!("`{hex}` is not an object id")));
                }
            }
            if lines.insert(line.id.clone(), line).is_some() {
                return Err(refuse(&at, "the conversation is listed twice".into()));
            }
        }
        Ok(())
    }

    /// The catalog line of conversation `id` in catalog `commit` (one this store fetched,
    /// and [`read_catalog`](Self::read_catalog) checked whole then), read from `id`'s fan
    /// file alone: naming a conversation by its id costs one file, not the whole catalog
    /// (100,000 lines at team scale).
    pub fn catalog_line(&self, commit: ObjectId, id: &str) -> Result<Option<CatalogLine>> {
        if !layout::is_conversation_id(id) {
            return Ok(None);
        }
        let name = format!("{}.jsonl", layout::fan(id));
        let Some(blob) = self.entry_at(self.commit_tree_id(commit)?, &name)? else { return Ok(None) };
        let needle = format!("\"id\":\"{id}\"");
        let data = self.read_blob(blob)?;
        for (n, text) in data.split(|b| *b == b'\n').enumerate() {
            if !text.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                continue;
            }
            let refuse = |reason: String| StoreError::Refused {
                commit: commit.to_hex_with_len(7).to_string(),
                path: format!("{name} line {}", n + 1),
                reason,
            };
            let line: CatalogLine =
                serde_json::from_slice(text).map_err(|e| refuse(format!("not a catalog line ({e})")))?;
            if line.id != id {
                continue;
            }
            for hex in [&line.tree, &line.tip] {
                if hex.len() != 40 || ObjectId::from_hex(hex.as_bytes()).is_err() {
                    return Err(refuse(format!("`{hex}` is not an object id")));
                }
            }
            return Ok(Some(line));
        }
        Ok(None)
    }

    /// What a push of commit `head` publishes besides the branch, given the hub's branch
    /// tip and catalog as last fetched (`theirs`, `catalog`). Only conversations whose
    /// trees differ from the commit `catalog` describes, when that is `theirs` or a commit
    /// this store has; every conversation otherwise. Writes the commits and trees it names (loose; unreferenced until pushed).
    pub fn publication(
        &self,
        head: ObjectId,
        theirs: Option<ObjectId>,
        catalog: Option<&Catalog>,
        quarantine: &std::path::Path,
    ) -> Result<Publication> {
        // Written into the quarantine, which reads this store's objects: a push that fails
        // leaves the store as it was, and the push reads them from there.
        let into = self.scratch(quarantine)?;
        // Read through the quarantine too: `head` may be a published line's commit written
        // there (see `store::published`).
        let fanned = |commit: ObjectId| -> Result<Option<ObjectId>> {
            let tree = into.commit_tree_id(commit)?;
            let tree = into.fanned_tree(tree)?.map_or(tree, |(fanned, _)| fanned);
            into.entry_at(tree, layout::CONVERSATIONS)
        };
        let ours = fanned(head)?;
        // The catalog describes the commit it names: when that is the hub's tip, or any
        // commit this store has (a plain `git push` moved the branch past it), only what
        // changed since is published again.
        let described = catalog.and_then(|c| c.branch).filter(|branch| {
            Some(*branch) == theirs
                || into.repo.find_header(*branch).is_ok_and(|h| h.kind() == gix::object::Kind::Commit)
        });
        let current = catalog.filter(|_| described.is_some());
        let base = match described {
            Some(branch) => fanned(branch)?,
            None => None,
        };
        let mut lines = current.map(|c| c.lines.clone()).unwrap_or_default();
        let (changed, removed) = into.changed_conversations(base, ours)?;
        let mut publication = Publication::default();
        let listed = |id: &str| catalog.is_some_and(|c| c.lines.contains_key(id));
        if current.is_none() {
            // Everything is published again: whatever the old catalog lists that HEAD does
            // not hold is gone.
            for id in catalog.map(|c| c.lines.keys().cloned().collect::<Vec<_>>()).unwrap_or_default() {
                if changed.binary_search_by(|(c, _)| c.as_str().cmp(&id)).is_err() {
                    publication.deletes.push(conversation_ref(&id));
                }
            }
        }
        for id in &removed {
            lines.remove(id);
            if listed(id) {
                publication.deletes.push(conversation_ref(id));
            }
        }
        let summaries: BTreeMap<String, super::Summary> = if changed.len() > 64 {
            self.summaries().unwrap_or_default().into_iter().map(|s| (s.id.clone(), s)).collect()
        } else {
            BTreeMap::new()
        };
        for (id, tree) in &changed {
            // One convo cannot summarise (a `meta.json` another tool broke) is published
            // all the same, listed without what it could not read: `fsck` reports it, and
            // a push that worked before the catalog existed still works.
            let summary = match summaries.get(id) {
                Some(summary) => Some(summary.clone()),
                None => self.summary(id).ok(),
            };
            let (title, project, created, updated, events, turns) = match summary {
                Some(s) => (s.title, s.project, s.created, s.updated, s.stats.events, s.stats.turns),
                None => (None, Project::default(), String::new(), String::new(), 0, 0),
            };
            let tip = into.gc_proof(|| self.snapshot_commit(&into, id, *tree, seconds(&updated)))?;
            let (agent, person, bytes) = self.who_and_size(*tree)?;
            let line = CatalogLine {
                id: id.clone(),
                title,
                project,
                agent,
                person,
                created,
                updated,
                events,
                turns,
                bytes,
                tree: tree.to_string(),
                tip: tip.to_string(),
            };
            let same = catalog.and_then(|c| c.lines.get(id)).is_some_and(|old| *old == line);
            if !same {
                publication.refs.push((conversation_ref(id), tip));
            }
            lines.insert(id.clone(), line);
        }
        if catalog.is_none_or(|c| c.branch != Some(head) || c.lines != lines || c.branch_files.is_none()) {
            // The fan files a current catalog has for fans nothing changed in are kept.
            let mut kept = current.map(|c| c.fans.clone()).unwrap_or_default();
            for id in changed.iter().map(|(id, _)| id).chain(&removed) {
                kept.remove(layout::fan(id));
            }
            publication.catalog =
                Some(into.gc_proof(|| self.catalog_commit(&into, head, &lines, &kept, catalog.map(|c| c.commit)))?);
        }
        Ok(publication)
    }

    /// `(id, tree)` of each conversation in the `conversations` folder `to` whose tree is
    /// not the same in `from` (all of them without `from`), and the ids only `from` holds.
    /// Fan folders equal in both are skipped.
    fn changed_conversations(&self, from: Option<ObjectId>, to: Option<ObjectId>) -> Result<Changed> {
        if from == to {
            return Ok((Vec::new(), Vec::new()));
        }
        let fans = |dir: Option<ObjectId>| -> Result<BTreeMap<String, ObjectId>> {
            let Some(dir) = dir else { return Ok(BTreeMap::new()) };
            Ok(self.tree_entries(dir)?.into_iter().filter(|(_, _, t)| *t).map(|(n, id, _)| (n, id)).collect())
        };
        let conversations = |fan: Option<&ObjectId>| -> Result<BTreeMap<String, ObjectId>> {
            let Some(fan) = fan else { return Ok(BTreeMap::new()) };
            Ok(self
                .tree_entries(*fan)?
                .into_iter()
                .filter(|(n, _, t)| *t && layout::is_conversation_id(n))
                .map(|(n, id, _)| (n, id))
                .collect())
        };
        let (old, new) = (fans(from)?, fans(to)?);
        let mut changed = Vec::new();
        let mut removed = Vec::new();
        for name in old.keys().chain(new.keys()).collect::<std::collections::BTreeSet<_>>() {
            if !layout::is_fan(name) || old.get(name) == new.get(name) {
                continue;
            }
            let (was, is) = (conversations(old.get(name))?, conversations(new.get(name))?);
            for (id, tree) in &is {
                if was.get(id) != Some(tree) {
                    changed.push((id.clone(), *tree));
                }
            }
            removed.extend(was.keys().filter(|id| !is.contains_key(*id)).cloned());
        }
        changed.sort();
        Ok((changed, removed))
    }

    /// The commit of conversation `id`'s ref: a tree holding only `conversations/<fan>/<id>`
    /// (its folder `tree`), no parent, the fixed signature.
    fn snapshot_commit(&self, into: &Store, id: &str, tree: ObjectId, when: i64) -> Result<ObjectId> {
        let mut wrapped = tree;
        for name in [id, layout::fan(id), layout::CONVERSATIONS] {
            wrapped = single_entry_tree(into, name, wrapped)?;
        }
        into.write_commit_object(wrapped, &[], &format!("convo: conversation {id}\n"), &signature(when))
    }

    /// The catalog commit for branch commit `head` listing `lines`, with the files in
    /// `kept` (by fan) as they are: they hold those fans' lines already.
    fn catalog_commit(
        &self,
        into: &Store,
        head: ObjectId,
        lines: &BTreeMap<String, CatalogLine>,
        kept: &BTreeMap<String, ObjectId>,
        previous: Option<ObjectId>,
    ) -> Result<ObjectId> {
        let mut fans: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
        for line in lines.values() {
            let fan = layout::fan(&line.id);
            if kept.contains_key(fan) {
                continue;
            }
            let file = fans.entry(fan).or_default();
            serde_json::to_writer(&mut *file, line).map_err(|e| super::io_err("catalog")(e.into()))?;
            file.push(b'\n');
        }
        let mut blobs: BTreeMap<&str, ObjectId> = kept.iter().map(|(fan, blob)| (fan.as_str(), *blob)).collect();
        for (fan, data) in fans {
            blobs.insert(fan, into.write_loose(gix::objs::Kind::Blob, &data)?);
        }
        let mut entries = Vec::with_capacity(blobs.len());
        for (fan, blob) in blobs {
            entries.push(gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Blob.into(),
                filename: format!("{fan}.jsonl").into(),
                oid: blob,
            });
        }
        // The branch commit and its root tree, byte for byte (see `BranchFiles`).
        let data = into.object_data(head, gix::objs::Kind::Commit)?;
        let root = gix::objs::CommitRef::from_bytes(&data, head.kind())
            .map_err(git_err(format!("read commit {head}")))?
            .tree();
        let root = into.object_data(root, gix::objs::Kind::Tree)?;
        for (name, bytes) in [(BRANCH_COMMIT_FILE, &data), (BRANCH_TREE_FILE, &root)] {
            entries.push(gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Blob.into(),
                filename: name.into(),
                oid: into.write_loose(gix::objs::Kind::Blob, bytes)?,
            });
        }
        // git's order: by name, which for these blobs' names (none a prefix of another
        // with a folder) is byte order.
        entries.sort_by(|a, b| a.filename.cmp(&b.filename));
        let mut bytes = Vec::new();
        gix::objs::WriteTo::write_to(&gix::objs::Tree { entries }, &mut bytes).map_err(super::io_err("tree"))?;
        let tree = into.write_loose(gix::objs::Kind::Tree, &bytes)?;
        let message = format!("convo: catalog of {} conversations\n\n{BRANCH_TRAILER}: {head}\n", lines.len());
        // Dated as the branch commit it describes.
        let when = gix::objs::CommitRef::from_bytes(&data, head.kind())
            .map_err(git_err(format!("read commit {head}")))?
            .committer()
            .map_err(git_err(format!("read commit {head}")))?
            .seconds();
        // Parents, for what git sends, not for history: the branch commit (which the hub
        // has or gets in the same push) and the catalog before. git leaves out of a pack the
        // objects of the commits it knows the other side has only where they are parents of
        // what it sends; a catalog without parents had every conversation's objects and
        // every catalog file sent again by a push that did not move the branch, and every
        // catalog file by each pull. A lazy fetch of the catalog takes it with `--depth 1`.
        let parents: Vec<ObjectId> = std::iter::once(head).chain(previous).collect();
        into.write_commit_object(tree, &parents, &message, &signature(when))
    }

    /// The agent and person of the first events of conversation folder `tree` naming them
    /// (read from its first segment only), and the bytes of all its segments.
    fn who_and_size(&self, tree: ObjectId) -> Result<(Option<String>, Option<String>, u64)> {
        let mut segments = Vec::new();
        let mut blobs = std::collections::HashMap::new();
        self.collect_blobs(tree, "", &mut blobs)?;
        for (path, blob) in blobs {
            if path.starts_with(layout::EVENTS_DIR) && path.ends_with(".jsonl") {
                segments.push((path, blob));
            }
        }
        segments.sort();
        let mut bytes = 0;
        for (_, blob) in &segments {
            bytes += self.repo.find_header(*blob).map_err(git_err(format!("read {blob}")))?.size();
        }
        let (mut agent, mut person) = (None, None);
        if let Some((_, first)) = segments.first() {
            for line in self.read_blob(*first)?.split(|b| *b == b'\n') {
                let Ok(event) = serde_json::from_slice::<serde_json::Value>(line) else { continue };
                let field = |key: &str| event.get(key).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
                if person.is_none() {
                    person = field(crate::event::who::PERSON).map(str::to_owned);
                }
                if agent.is_none() {
                    agent = field(crate::event::who::AGENT).map(|a| match field(crate::event::who::AGENT_VERSION) {
                        Some(version) => format!("{a} {version}"),
                        None => a.to_owned(),
                    });
                }
                if agent.is_some() && person.is_some() {
                    break;
                }
            }
        }
        Ok((agent, person, bytes))
    }
}

/// A tree holding `tree` alone, as `name`, written by `into`.
fn single_entry_tree(into: &Store, name: &str, tree: ObjectId) -> Result<ObjectId> {
    let tree = gix::objs::Tree {
        entries: vec![gix::objs::tree::Entry {
            mode: gix::objs::tree::EntryKind::Tree.into(),
            filename: name.into(),
            oid: tree,
        }],
    };
    let mut bytes = Vec::new();
    gix::objs::WriteTo::write_to(&tree, &mut bytes).map_err(super::io_err("tree"))?;
    into.write_loose(gix::objs::Kind::Tree, &bytes)
}
