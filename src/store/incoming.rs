//! What arrives from elsewhere (a fetched remote, a clone) is data, never authority.
//!
//! Git's own rule is the model: nothing in a repository's content may become configuration or
//! code, and nothing committed is ever lost. So before a foreign commit can touch HEAD, the
//! index or the working tree, its tree must hold exactly the layout convo writes
//! ([`Store::check_incoming`]): a `.git` entry would otherwise be mirrored into `.git/` (and
//! its `config` run by the next `git fetch`), `..` or a symlink would write outside the store.
//! And because event files only grow, a commit that changes or drops bytes already in a local
//! segment is not a fast-forward but a divergence ([`Store::rewrites`]), which the merge turns
//! into a fork so the local events survive.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::objs::tree::EntryKind;

use super::{Result, Store, StoreError, git_err, io_err, layout};

/// Where in the layout a tree sits, which decides what it may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Conversations,
    /// A fan folder: the conversations whose ids end in its name.
    Fan,
    Conversation,
    Events,
    Group,
}

/// Why an entry name can never be written to disk by convo, whatever folder it is in.
fn unsafe_name(name: &[u8]) -> Option<&'static str> {
    let Ok(name) = std::str::from_utf8(name) else {
        return Some("name is not UTF-8");
    };
    if name.is_empty() {
        return Some("empty name");
    }
    if name == "." || name == ".." {
        return Some("`.` or `..` entry (would leave its folder)");
    }
    if name.contains('/') || name.contains('\\') {
        return Some("slash or backslash in a name (would leave its folder)");
    }
    // `.git` in any case, and the forms other filesystems fold into it (`.git.`, `git~1`).
    let folded = name.trim_end_matches(['.', ' ']).to_ascii_lowercase();
    if folded == ".git" || folded == "git~1" {
        return Some("`.git` entry (would write into git's own files)");
    }
    if name.chars().any(char::is_control) {
        return Some("control character in a name");
    }
    None
}

fn kind_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::Tree => "folder",
        EntryKind::Blob => "file",
        EntryKind::BlobExecutable => "executable file",
        EntryKind::Link => "symlink",
        EntryKind::Commit => "gitlink (submodule)",
    }
}

/// The layout convo writes: which names a folder at `level`, named `folder`, may hold, and
/// of what kind. `conversations/` holds fan folders and, in a store from before the fan-out,
/// conversation folders.
fn expected(level: Level, folder: &str, name: &str) -> Option<(EntryKind, Option<Level>)> {
    match level {
        Level::Root if name == layout::CONVERSATIONS => Some((EntryKind::Tree, Some(Level::Conversations))),
        Level::Root if name == layout::STORE_CONFIG => Some((EntryKind::Blob, None)),
        Level::Conversations if layout::is_fan(name) => Some((EntryKind::Tree, Some(Level::Fan))),
        Level::Conversations if layout::is_conversation_id(name) => Some((EntryKind::Tree, Some(Level::Conversation))),
        Level::Fan if layout::is_conversation_id(name) && layout::fan(name) == folder => {
            Some((EntryKind::Tree, Some(Level::Conversation)))
        }
        Level::Conversation if name == layout::META_FILE => Some((EntryKind::Blob, None)),
        Level::Conversation if name == layout::EVENTS_DIR => Some((EntryKind::Tree, Some(Level::Events))),
        Level::Events if layout::parse_group_name(name).is_some() => Some((EntryKind::Tree, Some(Level::Group))),
        Level::Group if layout::parse_segment_name(name).is_some() => Some((EntryKind::Blob, None)),
        _ => None,
    }
}

fn what_belongs(level: Level) -> &'static str {
    match level {
        Level::Root => "only conversations/ and convo.toml belong at the top of a store",
        Level::Conversations => {
            "only folders named by the last two characters of a conversation id belong in conversations/"
        }
        Level::Fan => "only folders named by a conversation id ending in the folder's name belong here",
        Level::Conversation => "only meta.json and events/ belong in a conversation's folder",
        Level::Events => "only numbered segment folders belong in events/",
        Level::Group => "only numbered .jsonl segments belong in a segment folder",
    }
}

/// A scratch repository under `.git/convo/` that a fetch writes into before anything reaches
/// the store; removed when dropped.
pub struct Quarantine {
    path: PathBuf,
}

impl Quarantine {
    /// The folder whose `.git` is the scratch repository.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Quarantine {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

impl Store {
    /// A fresh quarantine that reads this store's objects through alternates, so a fetch into
    /// it transfers only what the store lacks.
    pub fn quarantine(&self) -> Result<Quarantine> {
        let path = self.state_dir().join(format!("quarantine-{}", std::process::id()));
        // Absolute: git runs from the store's root, where a path relative to the caller's
        // directory (`convo -C store2 pull`) would name another folder.
        let path = std::path::absolute(&path).map_err(io_err(&path))?;
        let _ = std::fs::remove_dir_all(&path);
        super::create_private_dir(&path)?;
        let quarantine = Quarantine { path };
        gix::init(&quarantine.path).map_err(git_err("create a quarantine for fetched objects"))?;
        let objects = self.repo.objects.store_ref().path().canonicalize().map_err(io_err(self.repo.git_dir()))?;
        let alternates = quarantine.path.join(".git/objects/info/alternates");
        std::fs::write(&alternates, format!("{}\n", objects.display())).map_err(io_err(&alternates))?;
        Ok(quarantine)
    }

    /// Move every object `quarantine` holds into this store, as git's receive quarantine
    /// migrates its objects (`tmp_objdir_migrate`), instead of a second, local `git fetch`
    /// whose connectivity check repeats the one the fetch into the quarantine made (0.7 s of
    /// a pull at 10,000 conversations). Packs go in before their `.idx`, so a reader never
    /// finds an index without its pack; a loose object or pack the store has already is kept.
    /// Each file's data is synced, then it is linked in (renamed where links fail, copied
    /// across file systems), then each folder that gained a name is synced, and, when the quarantine is shallow (a lazy fetch, which copied the store's `shallow`
    /// in first), its `shallow` replaces the store's, synced: all before any ref names them.
    /// What the quarantine holds was checked by its caller; the quarantine is left to drop.
    pub fn promote(&self, quarantine: &Quarantine) -> Result<()> {
        let from = quarantine.path.join(".git").join("objects");
        let into = self.repo.objects.store_ref().path().to_owned();
        // What moves where, in order. Loose objects: a folder of two hex digits, files of
        // hex; anything else (a temporary file of a failed write, `info/`) stays behind.
        let hex = |name: &str| !name.is_empty() && name.bytes().all(|b| b.is_ascii_hexdigit());
        let mut moves: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut fans: Vec<String> = std::fs::read_dir(&from)
            .map_err(io_err(&from))?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|fan| fan.len() == 2 && hex(fan))
            .collect();
        fans.sort();
        for fan in fans {
            let mut names: Vec<String> = std::fs::read_dir(from.join(&fan))
                .map_err(io_err(from.join(&fan)))?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| hex(name))
                .collect();
            names.sort();
            moves.extend(names.into_iter().map(|name| (from.join(&fan).join(&name), into.join(&fan).join(&name))));
        }
        // Packs: `.pack` first, `.idx` last; a `.keep` (a fetch's, while it ran) stays.
        let packs = from.join("pack");
        let mut names: Vec<(u8, String)> = std::fs::read_dir(&packs)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("pack-") && !name.ends_with(".keep"))
            .map(|name| {
                let rank = if name.ends_with(".pack") {
                    0
                } else if name.ends_with(".idx") {
                    2
                } else {
                    1
                };
                (rank, name)
            })
            .collect();
        names.sort();
        moves.extend(names.into_iter().map(|(_, name)| (packs.join(&name), into.join("pack").join(&name))));
        // Each file's data before its new name: git synced what it fetched, but a push's
        // publication was written by convo into the quarantine unsynced, and a name linked
        // to it could survive a power cut that its data did not.
        if self.durable() {
            let files: Vec<(PathBuf, bool)> = moves.iter().map(|(from, _)| (from.clone(), false)).collect();
            super::durable::in_parallel(&files)?;
        }
        let mut dirs = std::collections::BTreeSet::new();
        for (from, to) in &moves {
            let folder = to.parent().expect("below objects/").to_owned();
            if !folder.exists() {
                std::fs::create_dir_all(&folder).map_err(io_err(&folder))?;
                dirs.insert(into.clone());
            }
            if move_object(from, to, self.durable())? {
                // `objects/` too: a fan folder may be one a `git` made and never synced
                // (`prune` removes and remakes them), whose own name a power cut could lose.
                if folder != into.join("pack") {
                    dirs.insert(into.clone());
                }
                dirs.insert(folder);
            }
        }
        if self.durable() {
            super::durable::in_parallel(&dirs.into_iter().map(|d| (d, true)).collect::<Vec<_>>())?;
        }
        let shallow = quarantine.path.join(".git").join("shallow");
        if shallow.exists() {
            self.take_shallow(&shallow)?;
        }
        Ok(())
    }

    /// Make the store shallow where `from` (a quarantine's `shallow`) says: its lines and
    /// the store's own, each once, written beside and renamed into place, synced.
    fn take_shallow(&self, from: &Path) -> Result<()> {
        let git_dir = self.repo.git_dir().to_owned();
        let target = git_dir.join("shallow");
        let mut lines: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for file in [&target, &from.to_owned()] {
            match std::fs::read_to_string(file) {
                Ok(text) => lines.extend(text.lines().filter(|l| !l.is_empty()).map(str::to_owned)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(StoreError::Io { path: file.to_path_buf(), source: e }),
            }
        }
        let text: String = lines.into_iter().map(|l| l + "\n").collect();
        if std::fs::read_to_string(&target).is_ok_and(|old| old == text) {
            return Ok(());
        }
        // git's own lock name: a git writing the file meanwhile fails rather than races.
        let lock = git_dir.join("shallow.lock");
        {
            use std::io::Write as _;
            let mut file =
                std::fs::OpenOptions::new().write(true).create_new(true).open(&lock).map_err(io_err(&lock))?;
            let written =
                file.write_all(text.as_bytes()).and_then(|()| if self.durable() { file.sync_data() } else { Ok(()) });
            if let Err(e) = written {
                let _ = std::fs::remove_file(&lock);
                return Err(StoreError::Io { path: lock, source: e });
            }
        }
        std::fs::rename(&lock, &target).map_err(io_err(&target))?;
        if self.durable() {
            super::durable::sync_dir(&git_dir)?;
        }
        Ok(())
    }

    /// Check a commit fetched into `quarantine` (see [`Store::check_incoming`]) against
    /// this store's HEAD.
    pub fn check_fetched(&self, quarantine: &Path, tip: ObjectId) -> Result<()> {
        self.scratch(quarantine)?.check_incoming(tip, self.head_tree_id()?)
    }

    /// Check a catalog fetched into `quarantine` (see [`Store::check_catalog_since`]),
    /// reading only the fan files `previous` (the catalog kept before) does not have.
    pub fn check_fetched_catalog(
        &self,
        quarantine: &Path,
        commit: ObjectId,
        previous: Option<ObjectId>,
    ) -> Result<super::hub::CatalogIndex> {
        self.scratch(quarantine)?.check_catalog_since(commit, previous)
    }

    /// A store over the quarantine's repository, to read what was fetched into it.
    pub(super) fn scratch(&self, quarantine: &Path) -> Result<Store> {
        let mut repo = gix::open(quarantine).map_err(git_err("open the quarantine"))?;
        repo.object_cache_size_if_unset(super::OBJECT_CACHE);
        let scratch = Store {
            root: quarantine.to_owned(),
            repo,
            fail_point: None,
            unmarked: Default::default(),
            listings: Default::default(),
            ids: Default::default(),
            outlined: Default::default(),
            head: Default::default(),
            loose: Default::default(),
            recorder: Default::default(),
            durability: self.durability,
            pending: Default::default(),
        };
        Ok(scratch)
    }

    /// Write HEAD's whole tree into the working tree and index, after checking it like a
    /// fetched commit: a fresh clone is populated by convo, never by git's checkout.
    pub fn check_out(&self, lock: &super::Lock) -> Result<()> {
        let Some(head) = self.head_commit_id()? else {
            return Ok(());
        };
        self.check_incoming(head, None)?;
        let mut paths = HashMap::new();
        self.collect_blobs(self.commit_tree_id(head)?, "", &mut paths)?;
        let mut journal: Vec<String> = paths.into_keys().collect();
        journal.sort();
        self.write_journal(&journal)?;
        self.replay_journal(lock)
    }

    /// Refuse `commit` unless its tree holds exactly what convo writes. Subtrees identical
    /// to the same path in `known` (HEAD's tree, already checked when it arrived) are
    /// skipped, so a pull costs what changed, not the size of the store.
    pub(crate) fn check_incoming(&self, commit: ObjectId, known: Option<ObjectId>) -> Result<()> {
        let object = self.repo.find_object(commit).map_err(git_err(format!("read {commit}")))?;
        let tree = match object.kind {
            gix::object::Kind::Commit => self.commit_tree_id(commit)?,
            other => {
                return Err(StoreError::Refused {
                    commit: short(commit),
                    path: String::new(),
                    reason: format!("is a {other}, not a commit"),
                });
            }
        };
        self.check_tree(commit, tree, known, Level::Root, "")
    }

    /// [`check_incoming`](Self::check_incoming) of `commit`'s `conversations` folder alone.
    pub(crate) fn check_conversations(&self, commit: ObjectId) -> Result<()> {
        let top = self.object_data(self.commit_tree_id(commit)?, gix::objs::Kind::Tree)?;
        match Store::entry_in(&top, layout::CONVERSATIONS) {
            Some((dir, true)) => self.check_tree(commit, dir, None, Level::Conversations, layout::CONVERSATIONS),
            _ => Ok(()),
        }
    }

    fn check_tree(
        &self,
        commit: ObjectId,
        tree: ObjectId,
        known: Option<ObjectId>,
        level: Level,
        prefix: &str,
    ) -> Result<()> {
        if known == Some(tree) {
            return Ok(());
        }
        let known_entries: HashMap<Vec<u8>, ObjectId> = match known {
            Some(known) => self.raw_entries(known)?.into_iter().map(|(name, _, id)| (name, id)).collect(),
            None => HashMap::new(),
        };
        let folder = prefix.rsplit('/').next().unwrap_or_default();
        let entries = self.raw_entries(tree)?;
        // A name twice in one folder (git never writes one; `git fsck` reports it): which
        // entry a reader takes would depend on how it looks.
        let mut names = std::collections::HashSet::with_capacity(entries.len());
        for (name, _, _) in &entries {
            if !names.insert(name.as_slice()) {
                let shown = name.to_str_lossy();
                return Err(StoreError::Refused {
                    commit: short(commit),
                    path: if prefix.is_empty() { shown.to_string() } else { format!("{prefix}/{shown}") },
                    reason: "the name appears twice in its folder".into(),
                });
            }
        }
        for (name, kind, id) in &entries {
            let (name, kind, id) = (name.clone(), *kind, *id);
            let shown = name.to_str_lossy();
            let path = if prefix.is_empty() { shown.to_string() } else { format!("{prefix}/{shown}") };
            let refuse = |reason: String| StoreError::Refused { commit: short(commit), path: path.clone(), reason };
            if let Some(reason) = unsafe_name(&name) {
                return Err(refuse(reason.to_owned()));
            }
            if matches!(kind, EntryKind::Link | EntryKind::Commit | EntryKind::BlobExecutable) {
                return Err(refuse(format!("{} (convo writes only plain files and folders)", kind_name(kind))));
            }
            let name = String::from_utf8_lossy(&name).into_owned();
            let Some((want, next)) = expected(level, folder, &name) else {
                return Err(refuse(format!("not a file convo writes ({})", what_belongs(level))));
            };
            if want != kind {
                return Err(refuse(format!("a {} where convo keeps a {}", kind_name(kind), kind_name(want))));
            }
            if let Some(next) = next {
                let known = known_entries.get(name.as_bytes()).copied();
                self.check_tree(commit, id, known, next, &path)?;
            }
        }
        if level == Level::Conversations {
            // One conversation in two folders (its fan folder and the legacy place): which
            // one is it? Neither shape is written so by convo.
            for (name, _, _) in &entries {
                let name = String::from_utf8_lossy(name);
                if !layout::is_conversation_id(&name) {
                    continue;
                }
                let fan =
                    entries.iter().find(|(n, kind, _)| n == layout::fan(&name).as_bytes() && *kind == EntryKind::Tree);
                if let Some((_, _, fan)) = fan
                    && self.raw_entries(*fan)?.iter().any(|(n, _, _)| n == name.as_bytes())
                {
                    return Err(StoreError::Refused {
                        commit: short(commit),
                        path: format!("{prefix}/{name}"),
                        reason: format!("conversation {name} is also in {prefix}/{}/", layout::fan(&name)),
                    });
                }
            }
        }
        Ok(())
    }

    /// `(name, kind, id)` of each entry of a tree, names as raw bytes.
    fn raw_entries(&self, tree: ObjectId) -> Result<Vec<(Vec<u8>, EntryKind, ObjectId)>> {
        let object = self.repo.find_tree(tree).map_err(git_err(format!("read tree {tree}")))?;
        let decoded = object.decode().map_err(git_err(format!("decode tree {tree}")))?;
        Ok(decoded.entries.iter().map(|e| (e.filename.to_vec(), e.mode.kind(), e.oid.to_owned())).collect())
    }

    /// The conversations whose event files in tree `new` do not begin with every byte they
    /// hold in tree `old` (a segment changed or gone): taking `new` as it is would lose those
    /// events. A conversation `new` does not hold at all is not among them: a whole-folder
    /// removal (`convo rm`) loses nothing, since history keeps it and `convo restore`
    /// brings it back; but one removed and re-added with other events is present in `new`
    /// and compared like any other.
    pub(crate) fn rewrites(&self, old: ObjectId, new: ObjectId) -> Result<Vec<String>> {
        let Some(old_dir) = self.entry_at(old, layout::CONVERSATIONS)? else {
            return Ok(Vec::new());
        };
        let new_dir = self.entry_at(new, layout::CONVERSATIONS)?;
        if Some(old_dir) == new_dir {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for (id, conversation) in self.conversations_in(old_dir)? {
            let dir = layout::conversation_dir(&id);
            match self.entry_at(new, &dir)? {
                Some(tree) if tree == conversation => continue,
                None => continue,
                Some(_) => {}
            }
            if !self.extends(old, new, &id)? {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// Whether conversation `id` in tree `new` holds every event byte it holds in `old`, in
    /// the same files: appends only, nothing changed or removed.
    pub(crate) fn extends(&self, old: ObjectId, new: ObjectId, id: &str) -> Result<bool> {
        let new_segments: HashMap<String, ObjectId> = match self.segments_in(new, id) {
            Ok(segments) => segments.into_iter().collect(),
            // A layout the reader refuses cannot hold our events.
            Err(StoreError::BadFile { .. }) => return Ok(false),
            Err(e) => return Err(e),
        };
        if self.entry_at(new, &layout::conversation_dir(id))?.is_none() {
            return Ok(false);
        }
        for (path, blob) in self.segments_in(old, id)? {
            match new_segments.get(&path) {
                Some(theirs) if *theirs == blob => {}
                Some(theirs) => {
                    if !self.read_blob(*theirs)?.starts_with(&self.read_blob(blob)?) {
                        return Ok(false);
                    }
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    }
}

fn short(commit: ObjectId) -> String {
    commit.to_string()[..7].to_owned()
}

/// Put object file `from` at `to`: linked, so an object already there is kept (objects are
/// named by their content); renamed where the file system has no links; copied beside,
/// synced (when `durable`) and renamed where the two are on different file systems.
/// Whether `to` is a new name.
fn move_object(from: &Path, to: &Path, durable: bool) -> Result<bool> {
    match std::fs::hard_link(from, to) {
        Ok(()) => return Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(_) => {}
    }
    if to.exists() {
        return Ok(false);
    }
    match std::fs::rename(from, to) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            let mut partial = to.as_os_str().to_owned();
            partial.push(".incoming");
            let partial = PathBuf::from(partial);
            std::fs::copy(from, &partial).map_err(io_err(&partial))?;
            if durable {
                super::durable::sync_file(&partial)?;
            }
            std::fs::rename(&partial, to).map_err(io_err(to))?;
            Ok(true)
        }
        Err(e) => Err(StoreError::Io { path: to.to_owned(), source: e }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_a_folder_are_unsafe() {
        for name in [&b".."[..], b".", b".git", b".GIT", b".git.", b"GIT~1", b"a\\b", b"a/b", b"", b"\xff", b"a\x1bb"] {
            assert!(unsafe_name(name).is_some(), "{:?}", name.to_str_lossy());
        }
        for name in [&b"conversations"[..], b"meta.json", b"000000.jsonl", b".gitignore-not"] {
            assert!(unsafe_name(name).is_none(), "{:?}", name.to_str_lossy());
        }
    }

    #[test]
    fn only_convo_layout_is_expected() {
        assert!(expected(Level::Root, "", "conversations").is_some());
        assert!(expected(Level::Root, "", "convo.toml").is_some());
        assert!(expected(Level::Root, "", "src").is_none());
        assert!(expected(Level::Conversations, "conversations", "AV").is_some());
        assert!(expected(Level::Conversations, "conversations", "01ARZ3NDEKTSV4RRFFQ69G5FAV").is_some());
        assert!(expected(Level::Conversations, "conversations", "01arz3ndektsv4rrffq69g5fav").is_none());
        assert!(expected(Level::Fan, "AV", "01ARZ3NDEKTSV4RRFFQ69G5FAV").is_some());
        assert!(expected(Level::Fan, "AW", "01ARZ3NDEKTSV4RRFFQ69G5FAV").is_none());
        assert!(expected(Level::Conversation, "X", "meta.json").is_some());
        assert!(expected(Level::Events, "events", "0000").is_some());
        assert!(expected(Level::Group, "0000", "000000.jsonl").is_some());
        assert!(expected(Level::Group, "0000", "config").is_none());
    }
}
