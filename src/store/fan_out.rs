//! Moving a store from before the fan-out into it: every `conversations/<id>/` folder into
//! `conversations/<fan>/<id>/` (see [`layout`]).
//!
//! Writers only ever write the fan-out shape, so HEAD must be in it before one writes: the
//! first write under the lock makes one commit that moves the legacy folders
//! ([`Store::fan_out`]). The folders' trees are reused as they are, so no blob or
//! conversation tree changes and nothing is rewritten but the `conversations` tree; the
//! working tree and index follow through the journal, like a pull's fast-forward (a crash
//! half-way is repaired from HEAD by the next writer). History keeps the old shape, and
//! readers look a conversation up in both, so `log` and every cache keyed by a
//! conversation's tree run straight across the move.
//!
//! A fetched tree in the old shape (a remote an older convo wrote) is merged after the same
//! conversion of the tree alone ([`Store::fanned_tree`]), and a fast-forward to one is
//! followed by the move.

use gix::ObjectId;
use gix::object::tree::EntryKind;

use super::{Landed, Lock, Result, Store, git_err, layout};

impl Store {
    /// `root` with its legacy conversation folders moved into their fan folders, or `None`
    /// when it has none. A conversation that is in both places keeps its fan folder's copy
    /// (the one readers take); fetched trees holding both are refused before they get here.
    pub(super) fn fanned_tree(&self, root: ObjectId) -> Result<Option<(ObjectId, Vec<String>)>> {
        let top = self.object_data(root, gix::objs::Kind::Tree)?;
        let Some((dir, true)) = Store::entry_in(&top, layout::CONVERSATIONS) else { return Ok(None) };
        let listing = self.listing(dir)?;
        // Every write asks: listing 1,024 fan folders as strings was a fifteenth of an
        // append in a big store.
        if listing.only_fan_folders() {
            return Ok(None);
        }
        let legacy: Vec<(String, ObjectId)> =
            listing.folders().into_iter().filter(|(name, _)| layout::is_conversation_id(name)).collect();
        if legacy.is_empty() {
            return Ok(None);
        }
        let tree = self.gc_proof(|| {
            let mut editor = self.tree_editor(root)?;
            for (id, tree) in &legacy {
                let old = layout::legacy_conversation_dir(id);
                editor.remove(old.split('/')).map_err(git_err(format!("move {old}")))?;
                let new = layout::conversation_dir(id);
                if !self.in_fan(dir, id)? {
                    editor.upsert(new.split('/'), EntryKind::Tree, *tree).map_err(git_err(format!("move {old}")))?;
                }
            }
            self.write_tree_edits(&mut editor)
        })?;
        Ok(Some((tree, legacy.into_iter().map(|(id, _)| id).collect())))
    }

    /// Whether conversation `id` is in its fan folder in the `conversations` folder `dir`
    /// (not just somewhere). Through the listings: a big legacy folder is decoded once.
    fn in_fan(&self, dir: ObjectId, id: &str) -> Result<bool> {
        let Some((fan, true)) = self.listing(dir)?.find(layout::fan(id)) else { return Ok(false) };
        Ok(self.listing(fan)?.find(id).is_some())
    }

    /// Move HEAD's legacy conversation folders into their fan folders in one commit, with
    /// the working tree and index following; what happened around that commit, `None` when
    /// nothing moved. Nothing to do (the usual case) costs one look at the `conversations`
    /// folder, which the writer reads next anyway.
    ///
    /// A mirror that fails is no error (the commit landed): the lock remembers it lags, and
    /// the next commit under it mirrors the move's paths with its own, or carries them in
    /// its journal and warns (see [`super::transaction`]). A lock taken for no commit leaves
    /// the journal to the next command's lock, which replays it.
    pub(super) fn fan_out(&self, lock: &Lock<'_>) -> Result<Option<Landed>> {
        let Some(head) = self.head_commit_id()? else { return Ok(None) };
        let Some((tree, moved)) = self.fanned_tree(self.commit_tree_id(head)?)? else { return Ok(None) };
        // HEAD may not have been checked yet (a clone locks before it checks out): nothing
        // convo would refuse in the folder it moves is moved or written out. Only that
        // folder: a file someone added beside it with git is none of the move's business.
        self.check_conversations(head)?;
        let subject = format!(
            "store: move {} conversation{} into fan-out folders",
            moved.len(),
            if moved.len() == 1 { "" } else { "s" }
        );
        let message = format!(
            "{subject}\n\nconversations/<id>/ is now conversations/<last two characters of the id>/<id>/,\n\
             so a commit in a store of many conversations rewrites small trees only.\n"
        );
        // Dated as HEAD: no clock of the user's asked for this commit.
        let signature = self.signature_as_of(head)?;
        let mut tx = lock.transaction();
        tx.tree(tree, vec![head]).changes_catalogue();
        Ok(Some(tx.commit_signed(&message, &signature)?.landed))
    }
}
