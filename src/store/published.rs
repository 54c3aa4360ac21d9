//! The line a push publishes when the local history holds a conversation kept back
//! (issue 43: `convo private`, `share.default`). The local branch cannot be pushed then:
//! its commits, their messages and trees name and hold that conversation, and git sends
//! them all. Each such push makes instead one commit on the hub's tip as last fetched,
//! whose tree is the hub's with the shared conversations' folders put in (HEAD's), the
//! shared conversations HEAD no longer holds taken out, and the files outside
//! `conversations/` (`convo.toml`) HEAD's. A conversation kept back keeps on the hub
//! whatever it had there (one made private after it was pushed stops receiving updates; it
//! is not taken away, which would travel as a `convo rm` to every teammate).
//!
//! `pull` merges that line back with the merge it always ran (`store::merge`, per
//! conversation from the merge base, by byte prefix): the base it finds is a hub commit
//! this store had merged, each shared conversation on the published line is a prefix of
//! (or equal to) the local one, so ours is kept and nothing forks; the conversations kept
//! back are on our side only, so they stay. The test `a_private_conversation_never_reaches_
//! the_hub_and_teammates_still_share_the_rest` (tests/cli/private.rs) runs that round trip.
//!
//! Whether a push needs the published line is [`Store::history_holds`]: anything it would
//! send (a file of an unpublished commit, a commit message) naming a conversation kept
//! back. A store that never kept one back pushes its branch as before (the hub's history
//! stays the local one, and a store of an older convo sees nothing new).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gix::ObjectId;
use gix::object::tree::EntryKind;

use super::{Outgoing, Result, Store, git_err, layout};

impl Store {
    /// Whether what a push of HEAD over `published` (the hub's tip as last fetched) would
    /// send names a conversation of `withheld`: a file of it in an unpublished commit, or
    /// its id in an unpublished commit's message.
    pub fn history_holds(&self, published: Option<ObjectId>, withheld: &BTreeSet<String>) -> Result<bool> {
        if withheld.is_empty() {
            return Ok(false);
        }
        let mut found = false;
        self.outgoing(published, &mut |item| {
            if found {
                return Ok(());
            }
            found = match item {
                Outgoing::File { path, .. } => {
                    layout::split_conversation_path(&path).is_some_and(|(id, _)| withheld.contains(id))
                }
                Outgoing::Message { text, .. } => withheld.iter().any(|id| text.contains(id.as_str())),
            };
            Ok(())
        })?;
        Ok(found)
    }

    /// The ids of the conversations commit `commit` holds.
    pub fn conversations_at(&self, commit: ObjectId) -> Result<BTreeSet<String>> {
        let tree = self.commit_tree_id(commit)?;
        Ok(match self.entry_at(tree, layout::CONVERSATIONS)? {
            Some(dir) => self.conversations_in(dir)?.into_iter().map(|(id, _)| id).collect(),
            None => BTreeSet::new(),
        })
    }

    /// The commit to publish as the hub's branch over `theirs` (the hub's tip as last
    /// fetched, merged into `head`): `theirs`'s tree with `head`'s shared conversations put
    /// in (see the module doc). `None` when it would change nothing. Written into the
    /// quarantine (a failed push leaves the store as it was).
    pub fn published_commit(
        &self,
        head: ObjectId,
        theirs: Option<ObjectId>,
        withheld: &BTreeSet<String>,
        quarantine: &Path,
    ) -> Result<Option<ObjectId>> {
        let into = self.scratch(quarantine)?;
        let fanned = |commit: ObjectId| -> Result<ObjectId> {
            let tree = into.commit_tree_id(commit)?;
            Ok(into.fanned_tree(tree)?.map_or(tree, |(fanned, _)| fanned))
        };
        let ours = fanned(head)?;
        let hub = theirs.map(fanned).transpose()?;
        let conversations = |tree: Option<ObjectId>| -> Result<BTreeMap<String, ObjectId>> {
            let Some(tree) = tree else { return Ok(BTreeMap::new()) };
            Ok(match into.entry_at(tree, layout::CONVERSATIONS)? {
                Some(dir) => into.conversations_in(dir)?.into_iter().collect(),
                None => BTreeMap::new(),
            })
        };
        let (mine, theirs_held) = (conversations(Some(ours))?, conversations(hub)?);
        let written = into.gc_proof(|| {
            let mut editor = match hub {
                Some(tree) => into.tree_editor(tree)?,
                None => gix::objs::tree::Editor::new(gix::objs::Tree::empty(), &into, self.repo.object_hash()),
            };
            let mut edit = |path: &str, entry: Option<(EntryKind, ObjectId)>| -> Result<()> {
                match entry {
                    Some((kind, id)) => editor.upsert(path.split('/'), kind, id).map(drop),
                    None => editor.remove(path.split('/')).map(drop),
                }
                .map_err(git_err(format!("publish {path}")))
            };
            let root = |tree: Option<ObjectId>| -> Result<Vec<(String, ObjectId, bool)>> {
                Ok(match tree {
                    Some(tree) => into.tree_entries(tree)?,
                    None => Vec::new(),
                })
            };
            let (our_root, hub_root) = (root(Some(ours))?, root(hub)?);
            for (name, id, is_tree) in &our_root {
                if name != layout::CONVERSATIONS {
                    edit(name, Some((if *is_tree { EntryKind::Tree } else { EntryKind::Blob }, *id)))?;
                }
            }
            for (name, _, _) in &hub_root {
                if name != layout::CONVERSATIONS && !our_root.iter().any(|(n, _, _)| n == name) {
                    edit(name, None)?;
                }
            }
            let mut changed = Vec::new();
            for (id, tree) in &mine {
                if !withheld.contains(id) && theirs_held.get(id) != Some(tree) {
                    edit(&layout::conversation_dir(id), Some((EntryKind::Tree, *tree)))?;
                    changed.push(format!("{id}\n"));
                }
            }
            for id in theirs_held.keys() {
                // Held by the hub, merged here and gone from HEAD: removed here (`convo rm`).
                if !withheld.contains(id) && !mine.contains_key(id) {
                    edit(&layout::conversation_dir(id), None)?;
                    changed.push(format!("{id} (removed)\n"));
                }
            }
            let tree = into.write_tree_edits(&mut editor)?;
            if Some(tree) == hub || (hub.is_none() && mine.keys().all(|id| withheld.contains(id))) {
                return Ok(None);
            }
            // `head` may be a commit of the quarantine; the person is this store's.
            let signature = self.publisher(&into, head)?;
            let what = if changed.len() == 1 { "conversation" } else { "conversations" };
            let message = format!("convo: publish {} shared {what}\n\n{}", changed.len(), changed.concat());
            let parents: Vec<ObjectId> = theirs.into_iter().collect();
            into.write_commit_object(tree, &parents, &message, &signature).map(Some)
        })?;
        Ok(written)
    }

    /// The signature of a commit published for `head` (read through `reader`): the person
    /// pushing (the hub's log says who published), dated as `head`'s commit, so the same
    /// state published twice is the same commit.
    pub(super) fn publisher(&self, reader: &Store, head: ObjectId) -> Result<gix::actor::Signature> {
        let data = reader.object_data(head, gix::objs::Kind::Commit)?;
        let when = gix::objs::CommitRef::from_bytes(&data, head.kind())
            .map_err(git_err(format!("read commit {head}")))?
            .committer()
            .map_err(git_err(format!("read commit {head}")))?
            .seconds();
        Ok(self.signed(when))
    }

    /// The person committing, at `seconds`.
    pub(super) fn signed(&self, seconds: i64) -> gix::actor::Signature {
        let person = self.signing_person();
        gix::actor::Signature {
            name: person.name.into(),
            email: person.email.into(),
            time: gix::date::Time { seconds, offset: 0 },
        }
    }
}
