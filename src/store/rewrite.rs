//! The one exception to append-only: rewriting commits no remote has yet, to replace text
//! (a secret pasted into a conversation) with a marker before it is ever pushed.
//!
//! Only commits reachable from HEAD and from no remote-tracking ref are rewritten; if any
//! object a remote-tracking ref reaches holds the text, nothing is done (it has left the
//! machine: the key must be rotated, not hidden). Event lines holding the text are parsed,
//! the text replaced inside their string values and the line serialized again, so every
//! line stays valid JSON; lines without it keep their bytes. Commit messages are redacted
//! too, and their `Convo-Previous` / `Convo-Merged` trailers point at the rewritten commits,
//! so `log` chains stay whole. HEAD moves by the usual compare-and-swap and the working tree
//! and index are mirrored (a [`Transaction`](super::transaction::Transaction) moving to the
//! rewritten tip); convo's caches that name commits are dropped; then the reflog is expired
//! and unreachable objects pruned through `git`, so the old commits are gone from the
//! repository, not only from HEAD's history.

use std::collections::{HashMap, HashSet};

use aho_corasick::AhoCorasick;
use gix::ObjectId;
use gix::object::tree::EntryKind;
use serde_json::Value;

use super::txn::{Landed, Lock, Packing};
use super::{Result, Store, git_err};
use crate::clock::Clock;

/// What [`Store::redact_unpublished`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    pub old_head: ObjectId,
    pub new_head: ObjectId,
    /// Commits rewritten (every unpublished one: each descends from the first changed).
    pub commits: usize,
    /// Commits whose message or tree held the text.
    pub changed: usize,
    /// Distinct files (blobs) that held the text.
    pub files: usize,
    /// What happened around the commit HEAD moved to.
    pub landed: Landed,
}

/// The texts to replace, raw and as JSON escapes them inside a string.
struct Needles {
    texts: Vec<String>,
    finder: AhoCorasick,
}

impl Needles {
    fn new(texts: &[String]) -> Result<Needles> {
        let mut patterns: Vec<String> = texts.to_vec();
        for text in texts {
            let escaped = serde_json::to_string(text).unwrap_or_default();
            let inner = escaped.trim_matches('"').to_owned();
            if inner != *text {
                patterns.push(inner);
            }
        }
        let finder = AhoCorasick::new(&patterns).map_err(git_err("search for the text to redact"))?;
        Ok(Needles { texts: texts.to_vec(), finder })
    }

    fn in_bytes(&self, bytes: &[u8]) -> bool {
        self.finder.is_match(bytes)
    }

    /// `text` with every needle replaced by `marker`.
    fn replace(&self, text: &str, marker: &str) -> String {
        let mut out = text.to_owned();
        for needle in &self.texts {
            out = out.replace(needle.as_str(), marker);
        }
        out
    }
}

/// Every string of a JSON value (keys stay) with the needles replaced.
fn redact_value(value: &mut Value, needles: &Needles, marker: &str) {
    match value {
        Value::String(s) => *s = needles.replace(s, marker),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, needles, marker)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(v, needles, marker)),
        _ => {}
    }
}

struct Rewriter<'a> {
    store: &'a Store,
    needles: Needles,
    marker: &'a str,
    trees: HashMap<ObjectId, ObjectId>,
    blobs: HashMap<ObjectId, ObjectId>,
}

impl Rewriter<'_> {
    /// The blob at `path` with the needles replaced (JSON-aware for event segments and
    /// `meta.json`), or itself when it holds none.
    fn blob(&mut self, path: &str, id: ObjectId) -> Result<ObjectId> {
        if let Some(new) = self.blobs.get(&id) {
            return Ok(*new);
        }
        let bytes = self.store.read_blob(id)?;
        let new = if !self.needles.in_bytes(&bytes) {
            id
        } else {
            let text = String::from_utf8_lossy(&bytes);
            let redacted = if path.ends_with(".jsonl") {
                let mut out = String::with_capacity(text.len());
                for line in text.split_inclusive('\n') {
                    let (body, end) = line.strip_suffix('\n').map_or((line, ""), |b| (b, "\n"));
                    if !self.needles.in_bytes(body.as_bytes()) {
                        out.push_str(line);
                        continue;
                    }
                    match serde_json::from_str::<Value>(body) {
                        Ok(mut value) => {
                            redact_value(&mut value, &self.needles, self.marker);
                            out.push_str(&serde_json::to_string(&value).unwrap_or_else(|_| body.to_owned()));
                        }
                        Err(_) => out.push_str(&self.needles.replace(body, self.marker)),
                    }
                    out.push_str(end);
                }
                out
            } else if path.ends_with(".json")
                && let Ok(mut value) = serde_json::from_slice::<Value>(&bytes)
            {
                redact_value(&mut value, &self.needles, self.marker);
                serde_json::to_string_pretty(&value).map(|s| s + "\n").unwrap_or_else(|_| text.to_string())
            } else {
                self.needles.replace(&text, self.marker)
            };
            // convo's writer, not gix's: its objects are synced before the ref moves (`durable`).
            self.store.write_loose(gix::objs::Kind::Blob, redacted.as_bytes())?
        };
        self.blobs.insert(id, new);
        Ok(new)
    }

    /// `tree` (at `prefix`) with every blob below it redacted; itself when nothing changed.
    fn tree(&mut self, tree: ObjectId, prefix: &str) -> Result<ObjectId> {
        if let Some(new) = self.trees.get(&tree) {
            return Ok(*new);
        }
        let mut editor = self.store.tree_editor(tree)?;
        let mut changed = false;
        for (name, id, is_tree) in self.store.tree_entries(tree)? {
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            let (new, kind) = if is_tree {
                (self.tree(id, &path)?, EntryKind::Tree)
            } else {
                (self.blob(&path, id)?, EntryKind::Blob)
            };
            if new != id {
                editor.upsert([name.as_str()], kind, new).map_err(git_err(format!("rewrite {path}")))?;
                changed = true;
            }
        }
        let new = if changed { self.store.write_tree_edits(&mut editor)? } else { tree };
        self.trees.insert(tree, new);
        Ok(new)
    }
}

impl Store {
    /// The commit every remote-tracking ref (`refs/remotes/*`) points at: what has left
    /// the machine.
    pub fn published_tips(&self) -> Result<Vec<ObjectId>> {
        let refs = self.repo.references().map_err(git_err("read refs"))?;
        let mut tips = Vec::new();
        for reference in refs.remote_branches().map_err(git_err("read remote refs"))? {
            let mut reference = reference.map_err(git_err("read remote refs"))?;
            if let Ok(id) = reference.peel_to_id() {
                tips.push(id.detach());
            }
        }
        tips.sort();
        tips.dedup();
        Ok(tips)
    }

    /// Where history that `published` reaches holds one of `texts` (raw, or as JSON escapes
    /// it): `commit <short> message` or `commit <short> <path>`. Every commit message and
    /// every object is read once.
    pub fn published_place_of(&self, published: &[ObjectId], texts: &[String]) -> Result<Option<String>> {
        if published.is_empty() {
            return Ok(None);
        }
        let needles = Needles::new(texts)?;
        let walk = self.repo.rev_walk(published.iter().copied()).all().map_err(git_err("walk published history"))?;
        let mut seen = HashSet::new();
        for info in walk {
            let commit = info.map_err(git_err("walk published history"))?.id;
            let short = commit.to_hex_with_len(7).to_string();
            let object = self.repo.find_commit(commit).map_err(git_err(format!("read commit {commit}")))?;
            if needles.in_bytes(object.message_raw_sloppy()) {
                return Ok(Some(format!("commit {short} message")));
            }
            let mut stack = vec![(self.commit_tree_id(commit)?, String::new())];
            while let Some((tree, prefix)) = stack.pop() {
                if !seen.insert(tree) {
                    continue;
                }
                for (name, id, is_tree) in self.tree_entries(tree)? {
                    let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
                    if is_tree {
                        stack.push((id, path));
                    } else if seen.insert(id) && needles.in_bytes(&self.read_blob(id)?) {
                        return Ok(Some(format!("commit {short} {path}")));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Replace `texts` with `marker` in every commit reachable from HEAD and from none of
    /// `published` (see the module docs), then move HEAD to the rewritten tip and mirror the
    /// working tree. `None` when no unpublished commit holds any of them. The caller has
    /// checked that published history does not ([`Store::published_place_of`]); the old
    /// objects stay until [`Store::prune_unreachable`].
    pub fn redact_unpublished(
        &self,
        lock: &Lock,
        published: &[ObjectId],
        texts: &[String],
        marker: &str,
        clock: &Clock,
    ) -> Result<Option<Rewritten>> {
        let Some(head) = self.head_commit_id()? else { return Ok(None) };
        let walk = self
            .repo
            .rev_walk([head])
            .with_hidden(published.iter().copied())
            .all()
            .map_err(git_err("walk the unpushed commits"))?;
        let mut unpublished = HashSet::new();
        for info in walk {
            unpublished.insert(info.map_err(git_err("walk the unpushed commits"))?.id);
        }
        // Parents before children: a depth-first walk that emits a commit once its
        // unpublished parents are out.
        let mut order = Vec::new();
        let mut done = HashSet::new();
        let mut stack = vec![(head, false)];
        while let Some((commit, expanded)) = stack.pop() {
            if done.contains(&commit) {
                continue;
            }
            if expanded {
                done.insert(commit);
                order.push(commit);
                continue;
            }
            stack.push((commit, true));
            let object = self.repo.find_commit(commit).map_err(git_err(format!("read commit {commit}")))?;
            for parent in object.parent_ids() {
                let parent = parent.detach();
                if unpublished.contains(&parent) && !done.contains(&parent) {
                    stack.push((parent, false));
                }
            }
        }

        let mut rewriter = Rewriter {
            store: self,
            needles: Needles::new(texts)?,
            marker,
            trees: HashMap::new(),
            blobs: HashMap::new(),
        };
        let mut map: HashMap<ObjectId, ObjectId> = HashMap::new();
        let mut changed = 0;
        for commit in &order {
            let object = self.repo.find_commit(*commit).map_err(git_err(format!("read commit {commit}")))?;
            let decoded = object.decode().map_err(git_err(format!("decode commit {commit}")))?;
            let old_parents: Vec<ObjectId> = decoded.parents().collect();
            let parents: Vec<ObjectId> = old_parents.iter().map(|p| map.get(p).copied().unwrap_or(*p)).collect();
            let original = decoded.message.to_string();
            let redacted = rewriter.needles.replace(&original, marker);
            let tree = rewriter.tree(decoded.tree(), "")?;
            if redacted != original || tree != decoded.tree() {
                changed += 1;
            }
            let mut message = remap_trailers(&redacted, &map);
            if tree != decoded.tree() {
                message = self.recount_tokens(&message, tree)?;
            }
            // Untouched and on untouched parents: the commit stays as it is.
            if message == original && tree == decoded.tree() && parents == old_parents {
                map.insert(*commit, *commit);
                continue;
            }
            let new = gix::objs::Commit {
                message: message.into(),
                tree,
                author: decoded.author().map_err(git_err(format!("read author of {commit}")))?.into(),
                committer: decoded.committer().map_err(git_err(format!("read committer of {commit}")))?.into(),
                encoding: decoded.encoding.map(|e| e.to_owned()),
                parents: parents.into_iter().collect(),
                // A signature would not match the new content: dropped with the rest.
                extra_headers: Vec::new(),
            };
            let mut bytes = Vec::new();
            gix::objs::WriteTo::write_to(&new, &mut bytes).map_err(super::io_err("commit"))?;
            let id = self.write_loose(gix::objs::Kind::Commit, &bytes)?;
            map.insert(*commit, id);
        }
        let files = rewriter.blobs.iter().filter(|(old, new)| old != new).count();
        let new_head = map.get(&head).copied().unwrap_or(head);
        if new_head == head {
            return Ok(None);
        }
        let short = |c: ObjectId| c.to_hex_with_len(7).to_string();
        let mut tx = lock.transaction();
        tx.moves_to(Some(head), new_head).rewrites_history();
        let landed = tx.commit_message(&format!("redact: {} -> {}", short(head), short(new_head)), clock)?.landed;
        Ok(Some(Rewritten { old_head: head, new_head, commits: order.len(), changed, files, landed }))
    }

    /// `message` with the token counts of its trailers (`Convo-Tokens`, and those of
    /// `Convo-Appended`) recounted at `tree`: the marker is not as long as the text it
    /// replaced, and `log` shows the size after each commit from these trailers.
    fn recount_tokens(&self, message: &str, tree: ObjectId) -> Result<String> {
        let trailers = super::history::Trailers::parse(message);
        let tokens_at = |id: &str| -> Result<u64> {
            let folder = self.entry_at(tree, &super::layout::conversation_dir(id))?;
            Ok(self.cached_stats_in(id, folder)?.stats.tokens())
        };
        let mut out = String::with_capacity(message.len());
        for line in message.split_inclusive('\n') {
            let end = if line.ends_with('\n') { "\n" } else { "" };
            if line.starts_with("Convo-Tokens: ")
                && let Some(id) = &trailers.convo_id
            {
                out += &format!("Convo-Tokens: {}{end}", tokens_at(id)?);
            } else if let Some(value) = line.strip_prefix("Convo-Appended: ")
                && let [id, previous, turns, events, _] = value.split_whitespace().collect::<Vec<_>>()[..]
            {
                out += &format!("Convo-Appended: {id} {previous} {turns} {events} {}{end}", tokens_at(id)?);
            } else {
                out.push_str(line);
            }
        }
        Ok(out)
    }

    /// Drop every reflog entry and every object no ref reaches, through `git`: after a
    /// rewrite, the old commits and blobs leave the repository.
    ///
    /// Not one `git gc --prune=now`: it renames its new pack into place and deletes the old
    /// packs and loose objects in one go, syncing no folder, so a power cut could keep the
    /// deletions and lose the new pack's name: HEAD naming a commit whose objects are gone.
    /// First `reflog expire` of every entry, then the reflogs synced (an expiry undone by a
    /// power cut would name commits the prune removes); then gc's steps one at a time, each
    /// made durable before the next relies on it ([`Store::pack_durably`]).
    pub fn prune_unreachable(&self, _lock: &Lock) -> Result<()> {
        self.run_gc_step(&["reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"], Packing::Prune)?;
        self.sync_reflogs()?;
        self.pack_durably(Packing::Prune)
    }
}

/// `message` with the commit ids of its `Convo-Previous`, `Convo-Merged` and
/// `Convo-Appended` trailers replaced by their rewritten commits.
fn remap_trailers(message: &str, map: &HashMap<ObjectId, ObjectId>) -> String {
    let mut out = String::with_capacity(message.len());
    for line in message.split_inclusive('\n') {
        let is_trailer = ["Convo-Previous: ", "Convo-Merged: ", "Convo-Appended: "].iter().any(|t| line.starts_with(t));
        if !is_trailer {
            out.push_str(line);
            continue;
        }
        let mut rewritten = line.to_owned();
        for word in line.split_whitespace() {
            if let Ok(id) = ObjectId::from_hex(word.as_bytes())
                && let Some(new) = map.get(&id)
            {
                rewritten = rewritten.replace(word, &new.to_string());
            }
        }
        out.push_str(&rewritten);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_follow_the_rewritten_commits() {
        let hash = |c: char| ObjectId::from_hex(c.to_string().repeat(40).as_bytes()).unwrap();
        let map: HashMap<_, _> = [(hash('a'), hash('b'))].into();
        let message = format!(
            "append: x\n\nConvo-Id: X\nConvo-Previous: {}\nConvo-Merged: Y {}\nConvo-Appended: Z {}\n",
            hash('a'),
            hash('c'),
            hash('a')
        );
        let out = remap_trailers(&message, &map);
        assert_eq!(
            out,
            format!(
                "append: x\n\nConvo-Id: X\nConvo-Previous: {}\nConvo-Merged: Y {}\nConvo-Appended: Z {}\n",
                hash('b'),
                hash('c'),
                hash('b')
            )
        );
    }
}
