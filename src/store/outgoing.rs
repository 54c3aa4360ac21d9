//! What a push of HEAD publishes that a remote's tip does not have: the commits, and the
//! files they add or change. Read for the secret scan before a push. And how much moved
//! between two tips ([`Moved`]), which `sync` reports: counted from the trees, not the commit
//! messages, so commits made by another tool (or a merge) count as what they changed.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use gix::ObjectId;

use super::{Result, Store, git_err, layout};

/// One thing a push would publish.
pub enum Outgoing {
    /// The message of an unpublished commit.
    Message { commit: ObjectId, text: String },
    /// A file (blob) new in HEAD's tree (`commit` is `None`) or in an earlier unpublished
    /// commit, with the bytes the published tip has at the same path, if any.
    File { path: String, commit: Option<ObjectId>, data: Vec<u8>, published: Option<Vec<u8>> },
}

/// What one commit holds beyond another: the conversations whose files differ, and the
/// event lines their segments gained (segments only grow, so lines beyond the older copy's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved {
    pub conversations: usize,
    /// Of those, the conversations the older commit does not hold at all.
    pub new: usize,
    pub events: usize,
}

/// What one conversation holds beyond its copy in another commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConversationMoved {
    /// The older commit does not hold it.
    pub new: bool,
    /// Event lines gained.
    pub events: usize,
}

impl Moved {
    pub fn is_empty(&self) -> bool {
        self.conversations == 0 && self.events == 0
    }
}

impl Store {
    /// The commit HEAD names, `None` before the first commit.
    pub fn head(&self) -> Result<Option<ObjectId>> {
        self.head_commit_id()
    }

    /// The best common ancestor of commits `a` and `b`, if they have one.
    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Option<ObjectId> {
        self.repo.merge_base(a, b).ok().flatten().map(|id| id.detach())
    }

    /// What commit `to` holds beyond commit `from` (`None`: nothing): conversations whose
    /// `meta.json` or segments differ from `from`'s at the same paths, and the event lines
    /// gained. A conversation only `from` holds is not counted (a removal moves no event).
    /// Subtrees equal in both are skipped, so the cost follows what changed; a tree from
    /// before the fan-out is compared in its fanned shape.
    pub fn moved(&self, from: Option<ObjectId>, to: ObjectId) -> Result<Moved> {
        let each = self.moved_by_conversation(from, to)?;
        Ok(Moved {
            conversations: each.len(),
            new: each.values().filter(|m| m.new).count(),
            events: each.values().map(|m| m.events).sum(),
        })
    }

    /// How many commits of `to` that `from` lacks (`None`: all of them) changed each
    /// conversation: a merge counts for those it changed beyond every parent (the forks it
    /// made, not what it brought in), as `git log` would show them to the person who made it.
    pub fn commits_by_conversation(&self, from: Option<ObjectId>, to: ObjectId) -> Result<BTreeMap<String, usize>> {
        let walk = self.repo.rev_walk([to]).with_hidden(from).all().map_err(git_err("walk the commits"))?;
        let mut counts = BTreeMap::new();
        for info in walk {
            let info = info.map_err(git_err("walk the commits"))?;
            let parents: Vec<ObjectId> = info.parent_ids().map(|p| p.detach()).collect();
            let mut changed: Option<BTreeSet<String>> = None;
            for parent in parents.iter().map(|p| Some(*p)).chain(parents.is_empty().then_some(None)) {
                let these: BTreeSet<String> = self.moved_by_conversation(parent, info.id)?.into_keys().collect();
                changed = Some(match changed {
                    Some(before) => before.intersection(&these).cloned().collect(),
                    None => these,
                });
            }
            for id in changed.unwrap_or_default() {
                *counts.entry(id).or_insert(0) += 1;
            }
        }
        Ok(counts)
    }

    /// [`Store::moved`], conversation by conversation.
    pub fn moved_by_conversation(
        &self,
        from: Option<ObjectId>,
        to: ObjectId,
    ) -> Result<BTreeMap<String, ConversationMoved>> {
        let fanned = |commit: ObjectId| -> Result<ObjectId> {
            let tree = self.commit_tree_id(commit)?;
            Ok(self.fanned_tree(tree)?.map_or(tree, |(fanned, _)| fanned))
        };
        let to = fanned(to)?;
        let from = from.map(fanned).transpose()?;
        let mut each = BTreeMap::new();
        self.moved_below(to, from, "", &mut each)?;
        for (id, moved) in each.iter_mut() {
            moved.new = match from {
                Some(from) => self.entry_at(from, &layout::conversation_dir(id))?.is_none(),
                None => true,
            };
        }
        Ok(each)
    }

    pub(super) fn moved_below(
        &self,
        tree: ObjectId,
        from: Option<ObjectId>,
        prefix: &str,
        each: &mut BTreeMap<String, ConversationMoved>,
    ) -> Result<()> {
        if Some(tree) == from {
            return Ok(());
        }
        let theirs: HashMap<String, (ObjectId, bool)> = match from {
            Some(p) => self.tree_entries(p)?.into_iter().map(|(n, id, t)| (n, (id, t))).collect(),
            None => HashMap::new(),
        };
        for (name, id, is_tree) in self.tree_entries(tree)? {
            if prefix.is_empty() && name != layout::CONVERSATIONS {
                continue;
            }
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            let their = theirs.get(&name).copied();
            if their.map(|(t, _)| t) == Some(id) {
                continue;
            }
            if is_tree {
                let their_tree = their.filter(|(_, t)| *t).map(|(t, _)| t);
                self.moved_below(id, their_tree, &path, each)?;
                continue;
            }
            let Some((conversation, rest)) = layout::split_conversation_path(&path) else { continue };
            let moved = each.entry(conversation.to_owned()).or_default();
            if rest.first() == Some(&layout::EVENTS_DIR) && name.ends_with(".jsonl") {
                let lines = |data: &[u8]| data.split(|b| *b == b'\n').filter(|l| !l.trim_ascii().is_empty()).count();
                let before = match their {
                    Some((t, false)) => lines(&self.read_blob(t)?),
                    _ => 0,
                };
                moved.events += lines(&self.read_blob(id)?).saturating_sub(before);
            }
        }
        Ok(())
    }

    /// Hand `each` everything a push of HEAD would publish beyond `published` (the remote's
    /// tip, which must be in the object database): every unpublished commit's message, every
    /// file of HEAD's tree that differs from the tip's, and the other files (`meta.json`,
    /// `convo.toml`, anything added with git) of each earlier unpublished commit. Event
    /// segments are append-only, so HEAD's version of each holds every line an earlier
    /// commit's had: those are read from HEAD only. Each object is read once; subtrees equal
    /// to the tip's are skipped, so the cost follows what changed, not the store's size.
    pub fn outgoing(&self, published: Option<ObjectId>, each: &mut dyn FnMut(Outgoing) -> Result<()>) -> Result<()> {
        let Some(head) = self.head_commit_id()? else { return Ok(()) };
        let published_tree = published.map(|c| self.commit_tree_id(c)).transpose()?;
        // A remote an older convo wrote holds `conversations/<id>/`: compared by path with
        // HEAD's fan folders, everything it has would read as unpublished (and its secrets
        // be found again). Its tree in the new shape shares every conversation's subtree.
        let published_tree = match published_tree {
            Some(tree) => Some(self.fanned_tree(tree)?.map_or(tree, |(fanned, _)| fanned)),
            None => None,
        };
        let walk =
            self.repo.rev_walk([head]).with_hidden(published).all().map_err(git_err("walk the commits to push"))?;
        let mut commits = Vec::new();
        for info in walk {
            let info = info.map_err(git_err("walk the commits to push"))?;
            commits.push(info.id);
        }
        let mut seen = HashSet::new();
        self.diff_tree(self.commit_tree_id(head)?, published_tree, "", None, &mut seen, each)?;
        for commit in commits {
            let object = self.repo.find_commit(commit).map_err(git_err(format!("read commit {commit}")))?;
            let text = String::from_utf8_lossy(object.message_raw_sloppy()).into_owned();
            each(Outgoing::Message { commit, text })?;
            if commit != head {
                self.diff_tree(self.commit_tree_id(commit)?, published_tree, "", Some(commit), &mut seen, each)?;
            }
        }
        Ok(())
    }

    /// The blobs below `tree` that differ from those at the same paths below `published`.
    pub(super) fn diff_tree(
        &self,
        tree: ObjectId,
        published: Option<ObjectId>,
        prefix: &str,
        commit: Option<ObjectId>,
        seen: &mut HashSet<ObjectId>,
        each: &mut dyn FnMut(Outgoing) -> Result<()>,
    ) -> Result<()> {
        if Some(tree) == published || !seen.insert(tree) {
            return Ok(());
        }
        let theirs: HashMap<String, (ObjectId, bool)> = match published {
            Some(p) => self.tree_entries(p)?.into_iter().map(|(n, id, t)| (n, (id, t))).collect(),
            None => HashMap::new(),
        };
        for (name, id, is_tree) in self.tree_entries(tree)? {
            let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            let their = theirs.get(&name).copied();
            if their.map(|(t, _)| t) == Some(id) {
                continue;
            }
            if is_tree {
                let segments = name == layout::EVENTS_DIR && prefix.starts_with(layout::CONVERSATIONS);
                if segments && commit.is_some() {
                    continue;
                }
                let their_tree = their.filter(|(_, t)| *t).map(|(t, _)| t);
                self.diff_tree(id, their_tree, &path, commit, seen, each)?;
            } else if seen.insert(id) {
                let published = match their {
                    // Only segments use it: to skip the lines already published.
                    Some((t, false)) if name.ends_with(".jsonl") => Some(self.read_blob(t)?),
                    _ => None,
                };
                each(Outgoing::File { path, commit, data: self.read_blob(id)?, published })?;
            }
        }
        Ok(())
    }
}
