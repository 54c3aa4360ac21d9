//! The `conversations` folder and its fan folders, looked up without decoding them, and
//! the sorted list of HEAD's conversation ids.
//!
//! A folder convo wrote holds only folders whose names have one length (two-character fan
//! folders in `conversations/`, 26-character ids in a fan folder or a legacy
//! `conversations/`), and git stores each as `40000 <name>\0<20-byte id>`, in name order.
//! Such a tree's raw bytes are searched in place (binary search, no allocation). Any other
//! tree (another tool's, a hash other than SHA-1) is decoded the ordinary way.
//!
//! Kept over gix's tree decoding and editing (issue 30): with every listing decoded and the
//! `conversations` tree edited through the tree editor, an append in a store of 10,000
//! conversations took 1.27 times the CPU and 1.30 times the wall time (1.09 in a store of
//! one conversation), in alternating rounds of appends: more than `benches/` allows a change
//! to cost.
//!
//! The ids live in many fan folders, so the questions that need them in order (a prefix,
//! the neighbours that decide an id's shortest unique prefix, every id) read
//! `.git/convo/ids`: `<conversations tree> <count>\n` and then each id on its own line,
//! sorted. It is used only while HEAD's `conversations` tree is the one it names, and like
//! every file under `.git/convo/` it is disposable. A writer that changed one conversation
//! moves it along under the lock (see [`Store::ids_moved`]); anything else leaves it stale,
//! and the next reader lists the fan folders again.

use std::sync::Arc;

use gix::ObjectId;

use super::{Result, Store, txn::write_private_file};

const FILE: &str = "ids";
const ID_LEN: usize = 26;
const MODE: &[u8] = b"40000 ";

/// One decoded folder of conversations or of fan folders.
pub(super) enum Listing {
    /// Raw tree bytes of folder entries whose names are `name_len` bytes long, in order.
    Fixed { bytes: Vec<u8>, name_len: usize },
    /// Anything else: `(name, id, is_tree)` sorted by name.
    Decoded(Vec<(String, ObjectId, bool)>),
}

/// The size of a fixed entry: `40000 ` + the name + NUL + a SHA-1.
const fn entry_len(name_len: usize) -> usize {
    MODE.len() + name_len + 1 + 20
}

impl Listing {
    fn of_raw(bytes: Vec<u8>) -> Option<Listing> {
        // Only the two lengths convo writes; the first entry's NUL tells which.
        let name_len = [ID_LEN, 2].into_iter().find(|n| bytes.get(MODE.len() + n) == Some(&0))?;
        let size = entry_len(name_len);
        let fixed = bytes.len().is_multiple_of(size)
            && bytes.chunks_exact(size).all(|e| e.starts_with(MODE) && e[size - 21] == 0)
            && bytes
                .chunks_exact(size)
                .zip(bytes.chunks_exact(size).skip(1))
                .all(|(a, b)| name(a, name_len) < name(b, name_len));
        fixed.then_some(Listing::Fixed { bytes, name_len })
    }

    /// The object id and kind of entry `wanted`.
    pub(super) fn find(&self, wanted: &str) -> Option<(ObjectId, bool)> {
        match self {
            Listing::Fixed { bytes, name_len } => {
                let size = entry_len(*name_len);
                let (mut low, mut high) = (0, bytes.len() / size);
                while low < high {
                    let mid = (low + high) / 2;
                    let entry = &bytes[mid * size..(mid + 1) * size];
                    match name(entry, *name_len).cmp(wanted.as_bytes()) {
                        std::cmp::Ordering::Less => low = mid + 1,
                        std::cmp::Ordering::Greater => high = mid,
                        std::cmp::Ordering::Equal => return Some((oid(entry), true)),
                    }
                }
                None
            }
            Listing::Decoded(entries) => entries
                .binary_search_by(|(name, _, _)| name.as_str().cmp(wanted))
                .ok()
                .map(|at| (entries[at].1, entries[at].2)),
        }
    }

    /// This folder's raw tree with folder `wanted` pointing at `id`: its entry's id
    /// replaced, or a new entry put where it sorts. `None` for a decoded listing, or a name
    /// of another length.
    pub(super) fn with_folder(&self, wanted: &str, id: ObjectId) -> Option<Vec<u8>> {
        let Listing::Fixed { bytes, name_len } = self else { return None };
        if wanted.len() != *name_len || id.as_slice().len() != 20 || wanted.contains(['/', '\0']) {
            return None;
        }
        let size = entry_len(*name_len);
        let entry = |i: usize| &bytes[i * size..(i + 1) * size];
        // The first entry not below `wanted`.
        let (mut at, mut high) = (0, bytes.len() / size);
        while at < high {
            let mid = (at + high) / 2;
            if name(entry(mid), *name_len) < wanted.as_bytes() {
                at = mid + 1;
            } else {
                high = mid;
            }
        }
        let mut out = bytes.clone();
        if at < bytes.len() / size && name(entry(at), *name_len) == wanted.as_bytes() {
            out[(at + 1) * size - 20..(at + 1) * size].copy_from_slice(id.as_slice());
        } else {
            let mut new = MODE.to_vec();
            new.extend_from_slice(wanted.as_bytes());
            new.push(0);
            new.extend_from_slice(id.as_slice());
            out.splice(at * size..at * size, new);
        }
        Some(out)
    }

    /// The raw entries of a fixed listing before and after the one named `wanted` (or
    /// where it would sort): two listings that agree on these differ at most in `wanted`.
    /// `None` for a decoded listing.
    fn around(&self, wanted: &str) -> Option<(&[u8], &[u8])> {
        let Listing::Fixed { bytes, name_len } = self else { return None };
        let size = entry_len(*name_len);
        let entry = |i: usize| &bytes[i * size..(i + 1) * size];
        let (mut at, mut high) = (0, bytes.len() / size);
        while at < high {
            let mid = (at + high) / 2;
            if name(entry(mid), *name_len) < wanted.as_bytes() {
                at = mid + 1;
            } else {
                high = mid;
            }
        }
        let found = at < bytes.len() / size && name(entry(at), *name_len) == wanted.as_bytes();
        Some((&bytes[..at * size], &bytes[(at + usize::from(found)) * size..]))
    }

    /// Whether both are fixed listings of names of one length.
    fn same_shape(&self, other: &Listing) -> bool {
        matches!((self, other), (Listing::Fixed { name_len: a, .. }, Listing::Fixed { name_len: b, .. }) if a == b)
    }

    /// The folder named `wanted`, if there is one.
    fn folders_named(&self, wanted: &str) -> Option<ObjectId> {
        self.find(wanted).filter(|(_, is_tree)| *is_tree).map(|(id, _)| id)
    }

    /// Whether every entry is a fan folder (two-character names): then no conversation sits
    /// here directly, as one from before the fan-out does.
    pub(super) fn only_fan_folders(&self) -> bool {
        matches!(self, Listing::Fixed { name_len: 2, .. })
    }

    /// `(name, id)` of every folder entry, in name order.
    pub(super) fn folders(&self) -> Vec<(String, ObjectId)> {
        match self {
            Listing::Fixed { bytes, name_len } => bytes
                .chunks_exact(entry_len(*name_len))
                .map(|e| (String::from_utf8_lossy(name(e, *name_len)).into_owned(), oid(e)))
                .collect(),
            Listing::Decoded(entries) => {
                entries.iter().filter(|(_, _, is_tree)| *is_tree).map(|(n, id, _)| (n.clone(), *id)).collect()
            }
        }
    }
}

/// HEAD's conversation ids, sorted: one line each, from `start` of `text` (after the ids
/// file's header, kept in place: a copy of 270 KB showed in a `log`).
pub(super) struct Ids {
    text: Vec<u8>,
    start: usize,
}

impl Ids {
    fn of_sorted<'a>(ids: impl Iterator<Item = &'a str>) -> Ids {
        let mut text = Vec::new();
        for id in ids {
            text.extend_from_slice(id.as_bytes());
            text.push(b'\n');
        }
        Ids { text, start: 0 }
    }

    fn lines(&self) -> &[u8] {
        &self.text[self.start..]
    }

    fn len(&self) -> usize {
        self.lines().len() / (ID_LEN + 1)
    }

    fn at(&self, i: usize) -> &str {
        std::str::from_utf8(self.raw(i)).unwrap_or_default()
    }

    fn raw(&self, i: usize) -> &[u8] {
        &self.lines()[i * (ID_LEN + 1)..i * (ID_LEN + 1) + ID_LEN]
    }

    /// The first index whose id is not below `key`.
    fn lower_bound(&self, key: &str) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = (low + high) / 2;
            if self.at(mid) < key {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        low
    }

    pub(super) fn all(&self) -> Vec<String> {
        (0..self.len()).map(|i| self.at(i).to_owned()).collect()
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        let at = self.lower_bound(id);
        at < self.len() && self.at(at) == id
    }

    /// The ids that start with `prefix`, in order.
    pub(super) fn with_prefix(&self, prefix: &str) -> Vec<String> {
        (self.lower_bound(prefix)..self.len())
            .map(|i| self.at(i))
            .take_while(|id| id.starts_with(prefix))
            .map(str::to_owned)
            .collect()
    }

    /// The ids just before and after where `wanted` sorts (itself excluded): all that the
    /// shortest unique prefix of `wanted` depends on.
    pub(super) fn neighbours(&self, wanted: &str) -> (Option<String>, Option<String>) {
        let low = self.lower_bound(wanted);
        let after = if self.contains(wanted) { low + 1 } else { low };
        let before = low.checked_sub(1).map(|i| self.at(i).to_owned());
        (before, (after < self.len()).then(|| self.at(after).to_owned()))
    }

    /// These ids with `id` added.
    fn with(&self, id: &str) -> Ids {
        let at = self.lower_bound(id) * (ID_LEN + 1);
        let lines = self.lines();
        let mut text = Vec::with_capacity(lines.len() + ID_LEN + 1);
        text.extend_from_slice(&lines[..at]);
        text.extend_from_slice(id.as_bytes());
        text.push(b'\n');
        text.extend_from_slice(&lines[at..]);
        Ids { text, start: 0 }
    }
}

fn name(entry: &[u8], name_len: usize) -> &[u8] {
    &entry[MODE.len()..MODE.len() + name_len]
}

fn oid(entry: &[u8]) -> ObjectId {
    ObjectId::from_bytes_or_panic(&entry[entry.len() - 20..])
}

impl Store {
    /// The folder `dir` (the `conversations` folder or a fan folder), decoded once per
    /// command.
    pub(super) fn listing(&self, dir: ObjectId) -> Result<Arc<Listing>> {
        let mut memo = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, listing)) = memo.iter().find(|(id, _)| *id == dir) {
            return Ok(listing.clone());
        }
        let listing = Arc::new(self.decode_listing(dir)?);
        // HEAD's `conversations` folder and one fan folder, and the two a writer just made,
        // are all a command needs at once.
        if memo.len() >= 4 {
            memo.remove(0);
        }
        memo.push((dir, listing.clone()));
        Ok(listing)
    }

    /// Remember the listing of folder `dir`, whose raw tree `bytes` this command wrote, so
    /// reading it back costs nothing.
    pub(super) fn remember_listing(&self, dir: ObjectId, bytes: Vec<u8>) {
        let Some(listing) = Listing::of_raw(bytes) else { return };
        let mut memo = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        if memo.iter().any(|(id, _)| *id == dir) {
            return;
        }
        if memo.len() >= 4 {
            memo.remove(0);
        }
        memo.push((dir, Arc::new(listing)));
    }

    fn decode_listing(&self, dir: ObjectId) -> Result<Listing> {
        let data = self.object_data(dir, gix::objs::Kind::Tree)?;
        Ok(match Listing::of_raw(data) {
            Some(listing) if dir.kind() == gix::hash::Kind::Sha1 => listing,
            _ => {
                let mut entries = self.tree_entries(dir)?;
                // Git orders a folder's entries as if folders' names ended in `/`; by name
                // is what a binary search needs.
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Listing::Decoded(entries)
            }
        })
    }

    /// The folder of conversation `id` in the `conversations` folder `dir`: in its fan
    /// folder, else (a store from before the fan-out) directly in `dir`.
    pub(super) fn locate_in(&self, dir: ObjectId, id: &str) -> Result<Option<ObjectId>> {
        let top = self.listing(dir)?;
        if let Some((fan, true)) = top.find(super::layout::fan(id))
            && let Some((found, true)) = self.listing(fan)?.find(id)
        {
            return Ok(Some(found));
        }
        Ok(top.find(id).filter(|(_, is_tree)| *is_tree).map(|(found, _)| found))
    }

    /// `(id, folder)` of every conversation in the `conversations` folder `dir`, in id
    /// order: the fan folders' and any legacy ones (a fan folder's wins over a legacy one
    /// of the same id, as in [`Store::locate_in`]). Entries of neither shape are not
    /// conversations; `fsck` reports them.
    pub(super) fn conversations_in(&self, dir: ObjectId) -> Result<Vec<(String, ObjectId)>> {
        use super::layout::{fan, is_conversation_id, is_fan};
        let mut out: Vec<(String, ObjectId)> = Vec::new();
        let mut legacy = Vec::new();
        for (name, tree) in self.listing(dir)?.folders() {
            if is_conversation_id(&name) {
                legacy.push((name, tree));
            } else if is_fan(&name) {
                // Not through the memo: a thousand fan folders would push out the few a
                // command keeps coming back to.
                let listing = self.decode_listing(tree)?;
                out.extend(listing.folders().into_iter().filter(|(id, _)| is_conversation_id(id) && fan(id) == name));
            }
        }
        if !legacy.is_empty() {
            out.sort();
            legacy.retain(|(id, _)| out.binary_search_by(|(o, _)| o.as_str().cmp(id)).is_err());
            out.extend(legacy);
        }
        out.sort();
        Ok(out)
    }

    /// HEAD's conversation ids, sorted: from this command's memo, else the ids file when it
    /// names HEAD's `conversations` folder, else from the folders (and the file is
    /// written for the next command).
    pub(super) fn ids(&self) -> Result<Arc<Ids>> {
        let Some(dir) = self.conversations_tree(self.head_commit_id()?)? else {
            return Ok(Arc::new(Ids { text: Vec::new(), start: 0 }));
        };
        let mut memo = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, ids)) = memo.as_ref()
            && *at == dir
        {
            return Ok(ids.clone());
        }
        let ids = Arc::new(match self.read_ids_file(dir) {
            Some(ids) => ids,
            None => {
                let all = self.conversations_in(dir)?;
                let ids = Ids::of_sorted(all.iter().map(|(id, _)| id.as_str()));
                // Best effort: a store we cannot write to just answers slower.
                self.write_ids_file(dir, &ids);
                ids
            }
        });
        *memo = Some((dir, ids.clone()));
        Ok(ids)
    }

    fn read_ids_file(&self, dir: ObjectId) -> Option<Ids> {
        let bytes = std::fs::read(self.state_dir().join(FILE)).ok()?;
        let newline = bytes.iter().position(|b| *b == b'\n')?;
        let expected = format!("{dir} ");
        let count = bytes[..newline]
            .strip_prefix(expected.as_bytes())
            .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok());
        let ids = Ids { text: bytes, start: newline + 1 };
        // The count too: a file cut short at a line's end is still well shaped.
        let whole = ids.lines().len().is_multiple_of(ID_LEN + 1) && count == Some(ids.len());
        // Sorted, or a binary search would miss ids.
        (whole && (1..ids.len()).all(|i| ids.raw(i - 1) < ids.raw(i))).then_some(ids)
    }

    /// Write the ids file for the `conversations` folder `dir` unless it describes it
    /// already. Best effort.
    pub(super) fn ids_refresh(&self, dir: ObjectId) {
        if self.read_ids_file(dir).is_none()
            && let Ok(all) = self.conversations_in(dir)
        {
            self.write_ids_file(dir, &Ids::of_sorted(all.iter().map(|(id, _)| id.as_str())));
        }
    }

    fn write_ids_file(&self, dir: ObjectId, ids: &Ids) {
        let mut file = format!("{dir} {}\n", ids.len()).into_bytes();
        file.extend_from_slice(ids.lines());
        let _ = write_private_file(&self.state_dir(), &self.state_dir().join(FILE), &file);
    }

    /// Move the ids file along after a commit that changed only conversation `id`, from
    /// the `conversations` folder `before` to `after`; called under the lock. When `id` is
    /// not new the ids are the same, so only the header changes, rewritten in place: a
    /// reader that catches it half written finds a tree id that is not HEAD's and lists
    /// the folders itself. A file that did not describe `before` is made afresh, so that
    /// readers (a refused command among them) find it in step and write nothing.
    pub(super) fn ids_moved(&self, before: Option<ObjectId>, after: ObjectId, id: &str) {
        use std::os::unix::fs::FileExt as _;
        let path = self.state_dir().join(FILE);
        let change = before.and_then(|before| self.ids_change(before, after, id));
        // The same ids (an append): only the header moves, and the 270 KB of a
        // 10,000-conversation store need not be read.
        if let Some(before) = before
            && change == Some(false)
            && let Ok(file) = super::txn::private_options().read(true).write(true).open(&path)
            && let Ok(len) = file.metadata().map(|m| m.len())
        {
            let mut head = [0u8; 96];
            let n = file.read_at(&mut head, 0).unwrap_or(0);
            let line =
                head[..n].iter().position(|b| *b == b'\n').and_then(|end| std::str::from_utf8(&head[..end]).ok());
            let count = line.and_then(|l| l.strip_prefix(&format!("{before} "))).and_then(|c| c.parse::<u64>().ok());
            if let (Some(line), Some(count)) = (line, count)
                && len == line.len() as u64 + 1 + count * (ID_LEN as u64 + 1)
            {
                let _ = file.write_at(format!("{after} {count}").as_bytes(), 0);
                return;
            }
        }
        match (change, before.and_then(|before| self.read_ids_file(before))) {
            (Some(true), Some(ids)) if !ids.contains(id) => self.write_ids_file(after, &ids.with(id)),
            (Some(false), Some(ids)) => self.write_ids_file(after, &ids),
            // A commit that changed more (an import's, a pull's), or no file to start from.
            _ => self.ids_refresh(after),
        }
    }

    /// How the ids of the `conversations` folder `after` differ from those of `before`,
    /// known from the folders without listing them all: `Some(false)` the same, `Some(true)`
    /// `id` added and nothing else, `None` anything else.
    fn ids_change(&self, before: ObjectId, after: ObjectId, id: &str) -> Option<bool> {
        let fan = super::layout::fan(id);
        let (was_listing, now_listing) = (self.listing(before).ok()?, self.listing(after).ok()?);
        // The other fan folders unchanged, compared in the raw trees: as 2,000 strings
        // (1,024 folders twice) it was a tenth of an append in a big store.
        match (was_listing.around(fan), now_listing.around(fan)) {
            (Some(was), Some(now)) if was_listing.same_shape(&now_listing) => {
                if was != now {
                    return None;
                }
            }
            _ => {
                let others = |folders: Vec<(String, ObjectId)>| -> Vec<(String, ObjectId)> {
                    folders.into_iter().filter(|(name, _)| name != fan).collect()
                };
                if others(was_listing.folders()) != others(now_listing.folders()) {
                    return None;
                }
            }
        }
        let (was, now) = (was_listing.folders_named(fan), now_listing.folders_named(fan));
        let names = |folder: Option<ObjectId>| -> Option<Vec<String>> {
            match folder {
                Some(tree) => Some(self.listing(tree).ok()?.folders().into_iter().map(|(n, _)| n).collect()),
                None => Some(Vec::new()),
            }
        };
        let (was, mut now) = (names(was)?, names(now)?);
        if was == now {
            return Some(false);
        }
        let at = now.iter().position(|n| n == id)?;
        now.remove(at);
        (was == now).then_some(true)
    }

    /// HEAD's conversation ids that start with `prefix`.
    pub(super) fn ids_with_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(self.ids()?.with_prefix(prefix))
    }

    /// A new conversation id whose first [`crate::clock::SHORT_ID`] characters no id at
    /// HEAD starts with, so that many name it for good (unless a pull brings one that does).
    /// Best effort: a store whose ids cannot be read gets an id unique by its random part.
    pub(super) fn new_conversation_id(&self, clock: &crate::clock::Clock) -> String {
        let ids = self.ids().ok();
        clock.new_conversation_id(&|short| ids.as_ref().is_some_and(|ids| !ids.with_prefix(short).is_empty()))
    }

    /// Whether HEAD holds conversation `id`.
    pub fn has_conversation(&self, id: &str) -> Result<bool> {
        if !super::layout::is_conversation_id(id) {
            return Ok(false);
        }
        let Some(root) = self.head_tree_id()? else { return Ok(false) };
        Ok(self.entry_at(root, &super::layout::conversation_dir(id))?.is_some())
    }

    /// The ids just before and after `id` among HEAD's conversations: what its shortest
    /// unique prefix depends on, without listing all of them.
    pub fn id_neighbours(&self, id: &str) -> Result<Vec<String>> {
        let (before, after) = self.ids()?.neighbours(id);
        Ok(before.into_iter().chain(after).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, byte: u8) -> Vec<u8> {
        // A fan folder's name or an id.
        let mut e = MODE.to_vec();
        e.extend_from_slice(id.as_bytes());
        e.push(0);
        e.extend_from_slice(&[byte; 20]);
        e
    }

    #[test]
    fn fixed_listings_are_searched_in_place() {
        let ids = ["01ARZ3NDEKTSV4RRFFQ69G5FA1", "01ARZ3NDEKTSV4RRFFQ69G5FA5", "01ARZ3NDEKTSV4RRFFQ69G5FA9"];
        let raw: Vec<u8> = ids.iter().enumerate().flat_map(|(i, id)| entry(id, i as u8 + 1)).collect();
        let listing = Listing::of_raw(raw).expect("fixed");
        assert_eq!(listing.find(ids[1]), Some((ObjectId::from_bytes_or_panic(&[2; 20]), true)));
        assert_eq!(listing.find("01ARZ3NDEKTSV4RRFFQ69G5FA3"), None);
        assert_eq!(listing.folders().len(), 3);
        let fans = [entry("A1", 1), entry("A5", 2), entry("ZZ", 3)].concat();
        let listing = Listing::of_raw(fans).expect("fixed");
        assert_eq!(listing.find("A5"), Some((ObjectId::from_bytes_or_panic(&[2; 20]), true)));
        assert_eq!(listing.find("A3"), None);
    }

    /// What git writes for folders `names` (id bytes `byte`), through gix's own encoder.
    fn tree_of(folders: &[(&str, u8)]) -> Vec<u8> {
        let mut tree = gix::objs::Tree::empty();
        for (name, byte) in folders {
            tree.entries.push(gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Tree.into(),
                filename: (*name).into(),
                oid: ObjectId::from_bytes_or_panic(&[*byte; 20]),
            });
        }
        tree.entries.sort();
        let mut bytes = Vec::new();
        gix::objs::WriteTo::write_to(&tree, &mut bytes).unwrap();
        bytes
    }

    #[test]
    fn a_folder_set_in_raw_bytes_is_the_tree_git_would_write() {
        let listing = Listing::of_raw(tree_of(&[("A1", 1), ("A5", 2), ("ZZ", 3)])).expect("fixed");
        let id = |b: u8| ObjectId::from_bytes_or_panic(&[b; 20]);
        assert_eq!(listing.with_folder("A5", id(9)).unwrap(), tree_of(&[("A1", 1), ("A5", 9), ("ZZ", 3)]));
        for (new, expected) in [
            ("00", tree_of(&[("00", 9), ("A1", 1), ("A5", 2), ("ZZ", 3)])),
            ("A3", tree_of(&[("A1", 1), ("A3", 9), ("A5", 2), ("ZZ", 3)])),
            ("ZZZ", Vec::new()),
            ("Zz", tree_of(&[("A1", 1), ("A5", 2), ("ZZ", 3), ("Zz", 9)])),
        ] {
            let got = listing.with_folder(new, id(9));
            if expected.is_empty() {
                assert_eq!(got, None, "a name of another length");
            } else {
                assert_eq!(got.unwrap(), expected, "{new}");
            }
        }
        assert_eq!(Listing::Decoded(Vec::new()).with_folder("A1", id(1)), None);
        // What lies around a folder: all that two listings must share to differ only there.
        let entry_bytes = |name: &str, byte: u8| tree_of(&[(name, byte)]);
        let (a1, a5, zz) = (entry_bytes("A1", 1), entry_bytes("A5", 2), entry_bytes("ZZ", 3));
        assert_eq!(listing.around("A5"), Some((a1.as_slice(), zz.as_slice())));
        assert_eq!(listing.around("A3"), Some((a1.as_slice(), [a5.clone(), zz.clone()].concat().as_slice())));
        assert_eq!(listing.around("00").map(|(before, _)| before.len()), Some(0));
        let other = Listing::of_raw(listing.with_folder("A5", id(9)).unwrap()).unwrap();
        assert!(listing.same_shape(&other) && listing.around("A5") == other.around("A5"));
        assert_ne!(listing.around("A1"), other.around("A1"));
    }

    #[test]
    fn ids_answer_prefixes_and_neighbours() {
        let ids = ["01ARZ3NDEKTSV4RRFFQ69G5FA1", "01ARZ3NDEKTSV4RRFFQ69G5FA9"];
        let ids = Ids::of_sorted(ids.into_iter()).with("01ARZ3NDEKTSV4RRFFQ69G5FA5");
        let all = ids.all();
        assert_eq!(all.len(), 3);
        assert_eq!(all[1], "01ARZ3NDEKTSV4RRFFQ69G5FA5");
        assert_eq!(ids.neighbours(&all[1]), (Some(all[0].clone()), Some(all[2].clone())));
        assert_eq!(ids.neighbours("01ARZ3NDEKTSV4RRFFQ69G5FA3"), (Some(all[0].clone()), Some(all[1].clone())));
        assert_eq!(ids.neighbours(&all[0]), (None, Some(all[1].clone())));
        assert_eq!(ids.with_prefix("01ARZ3NDEKTSV4RRFFQ69G5FA"), all);
        assert_eq!(ids.with_prefix("01ARZ3NDEKTSV4RRFFQ69G5FA5"), vec![all[1].clone()]);
        assert!(ids.with_prefix("02").is_empty());
        assert!(ids.contains(&all[2]) && !ids.contains("01ARZ3NDEKTSV4RRFFQ69G5FA3"));
    }

    #[test]
    fn anything_else_is_not_read_in_place() {
        let mut raw = entry("01ARZ3NDEKTSV4RRFFQ69G5FA1", 1);
        raw.extend(b"100644 convo.toml\0".iter().chain(&[7u8; 20]));
        assert!(Listing::of_raw(raw).is_none());
        // Out of order: not what git writes, so not trusted to search.
        let raw = [entry("01ARZ3NDEKTSV4RRFFQ69G5FA5", 1), entry("01ARZ3NDEKTSV4RRFFQ69G5FA1", 2)].concat();
        assert!(Listing::of_raw(raw).is_none());
    }
}
