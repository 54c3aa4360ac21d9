//! What a push of HEAD publishes that a remote's tip does not have: the commits, and the
//! files they add or change. Read for the secret scan before a push.

use std::collections::{HashMap, HashSet};

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

impl Store {
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
    fn diff_tree(
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
