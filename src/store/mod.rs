//! The store: a git repository of conversations, read and written in-process through gix.
//!
//! The committed tree at HEAD is the truth every read uses; the working tree and the index
//! are kept in step with it after each commit (see [`txn`]) so `git status` stays clean and
//! people can browse the files. Per-user state (the active conversation, caches, the write
//! lock, the transaction journal) lives under `.git/convo/` and is never committed.
//! This module knows nothing of compaction policies.

mod batch;
mod bulk;
mod cache;
mod captures;
mod catalogue;
mod durable;
mod fan_out;
mod fix;
mod fsck;
mod gitlocks;
mod history;
pub mod hub;
pub mod identity;
mod import;
mod incoming;
mod index_patch;
pub mod layout;
mod lazy;
mod listing;
mod loose;
mod merge;
mod outgoing;
mod outlines;
mod published;
mod refs;
pub mod refused;
mod rewrite;
pub mod sessions;
pub mod sharing;
mod split_index;
mod stream;
mod subagents;
pub mod subject;
mod tally;
mod transaction;
mod txn;
mod write;

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::event::{self, Event, LineError, Stats};

pub use batch::{Batch, BatchCommit};
pub use bulk::{Added, Appending, BulkAppended};
pub use captures::{Captured, FailedCapture};
pub use durable::{Durability, ObjectFiles};
pub use fix::{Fixed, Removed, Renamed};
pub use fsck::{Mend, Problem, TornObjects};
pub use gitlocks::GitLock;
pub use history::{LogEntry, Trailers, attribute};
pub use hub::{Catalog, CatalogIndex, CatalogLine, Publication};
pub use identity::{IdentitySource, Person, Recorder};
pub use import::{Staged, StagedCommit};
pub use incoming::Quarantine;
pub use lazy::LazyPut;
pub use lazy::catalog_summary;
pub use merge::{Diverged, Integrated, Retitled};
pub use outgoing::{ConversationMoved, Moved, Outgoing};
pub use outlines::OutlinedAt;
pub use refused::RefusedPush;
pub use rewrite::Rewritten;
pub use stream::{SegmentReader, StoredLines};
pub use subagents::Subagents;
pub use tally::{DayUsage, Tally};
pub use transaction::Transaction;
pub use txn::{FailPoint, GcOutcome, Landed, Lock};
pub use write::{Appended, Created, NewConversation, Subject};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no convo store at {}", path.display())]
    NotAStore { path: PathBuf },
    #[error("{} exists and is not a convo store", path.display())]
    NotAStoreDir { path: PathBuf },
    /// A git repository convo did not make: its own files are not convo's to commit onto.
    #[error("{} is a git repository but not a convo store ({why})", path.display())]
    ForeignRepository { path: PathBuf, why: String },
    /// A store whose `convo.version` is not the format this convo reads and writes.
    #[error("{} is a convo store of format `{version}`, which this convo does not know (it knows format {MARKER_VALUE})", path.display())]
    UnknownFormat { path: PathBuf, version: String },
    #[error("no conversation matches `{query}`")]
    UnknownConversation { query: String, candidates: Vec<Summary> },
    #[error("`{query}` is ambiguous: {} conversations match", candidates.len())]
    AmbiguousConversation { query: String, candidates: Vec<Summary> },
    #[error("no active conversation")]
    NoActiveConversation,
    #[error("the store has no conversations yet")]
    Empty,
    #[error("input line {line}, field `call_id`: no tool_call with call_id `{call_id}` in this conversation")]
    UnknownCallId { line: usize, call_id: String },
    #[error("input line {line}, field `id`: id `{id}` is already used in this conversation")]
    DuplicateId { line: usize, id: String },
    #[error("input line {line}, field `call_id`: a tool_call with call_id `{call_id}` is already in this conversation")]
    DuplicateCallId { line: usize, call_id: String },
    #[error("{path}: {error}")]
    Corrupt { path: String, error: LineError },
    #[error("{path}: {message}")]
    BadFile { path: String, message: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// Syncing a file or folder to disk failed (EIO, ENOSPC): what was written may not be
    /// on disk, and is not trusted by trying again (see [`durable`]).
    #[error("could not sync {} to disk: {source}", path.display())]
    Sync { path: PathBuf, source: std::io::Error },
    /// Reading or writing git's objects, refs or index failed: `context` says what convo
    /// was doing, `source` keeps gix's (or convo's own writer's) error, to be told apart by
    /// its type (a retry on an object gc moved) and shown as the cause.
    #[error("git: {context}")]
    Git { context: String, source: GitCause },
    #[error("unknown revision `{rev}`: {message}")]
    UnknownRevision { rev: String, message: String },
    #[error("`git` was not found on PATH; it is needed to {purpose}")]
    GitMissing { purpose: &'static str },
    /// A fetched or cloned commit whose tree is not what convo writes.
    #[error("refusing commit {commit}: {}{reason}", if path.is_empty() { String::new() } else { format!("{path}: ") })]
    Refused { commit: String, path: String, reason: String },
    /// A hub's ref of conversation `id` naming anything but that conversation as its
    /// catalog lists it (see `store::lazy`).
    /// `what`: the path refused and why.
    #[error("refusing the hub's conversation {id} (commit {commit}): {what}")]
    RefusedConversation { id: String, commit: String, what: String },
    /// A hub's catalog without the copy of its branch commit a lazy store's push builds on
    /// (written by a convo from before lazy stores pushed; see `store::hub::BranchFiles`).
    #[error("the hub's catalog (commit {commit}) has no copy of the branch it describes")]
    CatalogWithoutBranch { commit: String },
    #[error("a title must not be empty")]
    EmptyTitle,
    /// `restore` of a conversation that is still in the store.
    #[error("conversation {id} is in the store; there is nothing to restore")]
    NotRemoved { id: String },
    #[error("no removed conversation matches `{query}`")]
    NoRemoved { query: String },
    #[error("`{query}` is ambiguous: {} removed conversations match", ids.len())]
    AmbiguousRemoved { query: String, ids: Vec<String> },
    /// A git lock a live git process kept past the wait (`core.filesRefLockTimeout`).
    #[error("{path} is held by {}, still after {} ms", if holders.is_empty() { "a program convo cannot see".to_owned() } else { format!("git (pid {holders})") }, waited.as_millis())]
    GitLockHeld { path: String, waited: std::time::Duration, holders: String },
    /// The branch moved between convo reading it and writing it, under convo's lock: a
    /// program that does not take the lock (git itself) is writing to the store.
    #[error("{name} moved to {to} while convo was committing; another program is writing to the store")]
    HeadMoved { name: String, to: String },
    /// A symlink inside the store's working tree, which convo never follows.
    #[error("{path}: is a symlink; convo does not follow symlinks inside a store")]
    Symlink { path: String },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// What caused it, outermost first, for the causes its message does not say itself
    /// (a [`StoreError::Git`]'s: its message is only what convo was doing).
    pub fn causes(&self) -> Vec<String> {
        let StoreError::Git { source, .. } = self else { return Vec::new() };
        let mut causes = Vec::new();
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(source.as_ref());
        while let Some(e) = next {
            causes.push(e.to_string());
            next = e.source();
        }
        causes
    }

    /// The message with its [`causes`](Self::causes) after it, on one line: for a warning
    /// that has no `Caused by:` lines of its own.
    pub fn explained(&self) -> String {
        std::iter::once(self.to_string()).chain(self.causes()).collect::<Vec<_>>().join(": ")
    }
}

/// The cause a [`StoreError::Git`] keeps.
pub type GitCause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A cause that is a statement, not an error of a library (`too large`, `HEAD moved`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Detail(pub String);

pub(crate) fn git_err<E: std::error::Error + Send + Sync + 'static>(
    context: impl Into<String>,
) -> impl FnOnce(E) -> StoreError {
    let context = context.into();
    move |e| StoreError::Git { context, source: Box::new(e) }
}

/// A [`StoreError::Git`] whose cause is a plain statement.
pub(crate) fn git_detail(context: impl Into<String>, detail: impl Into<String>) -> StoreError {
    StoreError::Git { context: context.into(), source: Box::new(Detail(detail.into())) }
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.into();
    move |source| StoreError::Io { path, source }
}

/// `meta.json`: what a conversation is called and where it came from. Unknown keys survive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub created: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Where a fork came from: the source conversation and the first turn taken from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkedFrom {
    pub id: String,
    pub turn: u64,
}

/// Where a conversation's session ran: `project` in its `meta.json`, which `import` writes
/// from the session file (and the repository's remote found on this machine). Each field
/// is null when unknown; anything but a string reads as unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    /// The agent's working directory, as recorded: data, never a path convo writes to.
    pub cwd: Option<String>,
    pub branch: Option<String>,
    /// The repository's remote URL, without credentials.
    pub remote: Option<String>,
}

impl Project {
    /// Its key in `meta.json`.
    pub const KEY: &'static str = "project";

    pub fn of(meta: &Meta) -> Project {
        let field = |name: &str| {
            meta.extra.get(Self::KEY).and_then(|p| p.get(name)).and_then(|v| v.as_str()).map(str::to_owned)
        };
        Project { cwd: field("cwd"), branch: field("branch"), remote: field("remote") }
    }

    /// As `meta.json` holds it: the known fields only.
    pub fn to_json(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        for (name, value) in [("cwd", &self.cwd), ("branch", &self.branch), ("remote", &self.remote)] {
            if let Some(value) = value {
                map.insert(name.into(), value.clone().into());
            }
        }
        map.into()
    }

    pub fn is_empty(&self) -> bool {
        self.cwd.is_none() && self.branch.is_none() && self.remote.is_none()
    }
}

/// One conversation as `list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub id: String,
    pub title: Option<String>,
    pub created: String,
    /// Timestamp of the newest event, or `created` for an empty conversation.
    pub updated: String,
    #[serde(flatten)]
    pub stats: Stats,
    pub tokens: u64,
    /// The conversation this one is a subagent's work in (`subagent_of` in `meta.json`,
    /// written by the Claude Code importer); null otherwise, so the key is always there.
    pub subagent_of: Option<String>,
    /// Where this conversation was forked from (`fork`, or a `pull` that diverged).
    pub forked_from: Option<ForkedFrom>,
    /// Where its session ran (`cwd`, `branch`, `remote`; null when unknown).
    #[serde(flatten)]
    pub project: Project,
    /// The people, agents and models of its events (kept in the catalogue, so `list` reads
    /// no event). Not serialized: `list --format json` names them as arrays of its own.
    #[serde(skip)]
    pub who: crate::event::who::Who,
}

impl Summary {
    /// The conversation this one came from: the one it is a subagent's work in, or else
    /// the one it was forked from.
    pub fn came_from(&self) -> Option<&str> {
        self.subagent_of.as_deref().or(self.forked_from.as_ref().map(|f| f.id.as_str()))
    }

    /// Candidates of a name that matched none or several, as a hint names them: `id
    /// "title"` each, comma-separated.
    pub fn candidates(list: &[Summary]) -> String {
        list.iter()
            .map(|s| match &s.title {
                Some(title) => format!("{} \"{title}\"", s.id),
                None => s.id.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Bytes of decoded objects gix keeps for the rest of a command (see
/// [`Store::open_repository`]): room for the commits, trees and `meta.json` files one
/// command revisits, within the memory goal of `benches/scale.py`.
const OBJECT_CACHE: usize = 4 << 20;

pub struct Store {
    root: PathBuf,
    repo: gix::Repository,
    /// Test seam: abort the process at this point of a commit, as `kill -9` would.
    fail_point: Option<FailPoint>,
    /// A store an older convo made, before stores carried [`MARKER_KEY`]: recognised by its
    /// tree, and marked by the next write (see [`Store::lock`]).
    unmarked: std::sync::atomic::AtomicBool,
    /// Decoded `conversations` folders by tree id (see [`Store::listing`]).
    listings: std::sync::Mutex<Vec<(ObjectId, std::sync::Arc<listing::Listing>)>>,
    ids: std::sync::Mutex<Option<(ObjectId, std::sync::Arc<listing::Ids>)>>,
    /// The last conversation outlined, by its id and tree id (see [`Store::outlined`]): a
    /// compaction plans from it and its append checks ids against it.
    outlined: std::sync::Mutex<Option<(String, ObjectId, std::sync::Arc<OutlinedAt>)>>,
    /// HEAD as read while this process holds the write lock (see [`txn::HeadMemo`]).
    head: std::sync::Arc<std::sync::Mutex<txn::HeadMemo>>,
    /// Loose objects are written through one zlib state, made at the first write, with the
    /// store's loose compression level (see [`loose`]).
    loose: std::sync::Mutex<Option<(loose::LooseWriter, i32)>>,
    /// Who records through this store (see [`identity`]).
    recorder: identity::Recorder,
    /// `store.fsync`: whether a commit is on disk before it is acknowledged (see [`durable`]).
    durability: Durability,
    /// What this process wrote and the next barrier syncs (see [`durable`]).
    pending: std::sync::Mutex<durable::Pending>,
}

/// The git config key (in the repository's own `.git/config`) that makes a repository a
/// convo store, as git-annex keeps `annex.version`: `init` and `clone` write it. It is
/// local, not committed, so a store made by `git clone` lacks it until convo's next write:
/// such a repository is recognised by its tree holding only convo's paths.
pub const MARKER_KEY: &str = "convo.version";
/// The store format [`MARKER_KEY`] names today.
const MARKER_VALUE: &str = "1";

/// What a git repository is to convo.
enum Recognised {
    /// It carries the marker.
    Marked,
    /// No marker, but its tree holds only convo's paths (or it has no commits and an older
    /// `convo init` set it up): a store from before the marker.
    Unmarked,
    /// Anything else; `why` says what gave it away, `empty` whether it holds nothing at all
    /// (no commits, no files), which `init` may take over.
    Foreign { why: String, empty: bool },
}

impl Store {
    /// Open the store at `root`, finishing any commit a killed process left half done.
    pub fn open(root: &Path) -> Result<Store> {
        if !root.join(".git").is_dir() {
            return Err(if root.exists() && !root.is_dir() {
                StoreError::NotAStoreDir { path: root.to_owned() }
            } else {
                StoreError::NotAStore { path: root.to_owned() }
            });
        }
        let mut store = Store::open_repository(root)?;
        match store.recognise()? {
            Recognised::Marked => {}
            Recognised::Unmarked => *store.unmarked.get_mut() = true,
            Recognised::Foreign { why, .. } => {
                return Err(StoreError::ForeignRepository { path: root.to_owned(), why });
            }
        }
        if store.journal_pending() {
            // Taking the lock waits out a writer that is still running; recovery then
            // happens only if the journal is really orphaned.
            store.lock()?;
        }
        Ok(store)
    }

    /// The repository at `root`, not yet recognised as a store.
    fn open_repository(root: &Path) -> Result<Store> {
        let mut repo = gix::open(root).map_err(git_err(format!("open {}", root.display())))?;
        // A delta-base cache: without gix's `max-performance` feature there is none, and a
        // store gc has packed with deltas rebuilt every chain from its base for each segment
        // read (a search across 1,000 conversations ran 10x slower). Capped, so a read of a
        // long conversation stays within its memory bound.
        repo.objects.set_pack_cache(|| Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(8 << 20)));
        // HEAD's commit and root tree and a conversation's folders are looked at a dozen
        // times by one append: gix's object cache keeps them. convo kept its own memo of
        // small objects until issue 30; in alternating rounds the two were within 2% of
        // each other for appends, in a small store and a 10,000-conversation one, and the
        // memo was 10% faster (CPU) for `show ID` of a 100-turn conversation: too little to
        // keep a second cache by the rule of issue 30 (1.5 times).
        repo.object_cache_size_if_unset(OBJECT_CACHE);
        Ok(Store {
            root: root.to_owned(),
            repo,
            fail_point: None,
            unmarked: Default::default(),
            listings: Default::default(),
            ids: Default::default(),
            outlined: Default::default(),
            head: Default::default(),
            loose: Default::default(),
            recorder: Default::default(),
            durability: Durability::default(),
            pending: Default::default(),
        })
    }

    /// Create a store at `root` (or accept an existing one). Returns whether it was new.
    /// An existing git repository is taken only when it is a store (marked, or from an
    /// older convo: then it is marked now) or holds nothing at all.
    pub fn init(root: &Path) -> Result<(Store, bool)> {
        if root.join(".git").is_dir() {
            let store = Store::open_repository(root)?;
            let created = match store.recognise()? {
                Recognised::Marked if store.state_dir().exists() => return Store::open(root).map(|s| (s, false)),
                // A store made by `git clone`, or by a convo from before the marker.
                Recognised::Marked | Recognised::Unmarked => false,
                Recognised::Foreign { empty: true, .. } => true,
                Recognised::Foreign { why, .. } => {
                    return Err(StoreError::ForeignRepository { path: root.to_owned(), why });
                }
            };
            store.set_up()?;
            return Ok((Store::open(root)?, created));
        }
        if root.exists() && !root.is_dir() {
            return Err(StoreError::NotAStoreDir { path: root.to_owned() });
        }
        create_private_dir(root)?;
        gix::init(root).map_err(git_err(format!("init {}", root.display())))?;
        Store::open_repository(root)?.set_up()?;
        Ok((Store::open(root)?, true))
    }

    /// A repository `git clone --no-checkout` just made, set up as a store before its tip
    /// is checked (by [`Store::check_out`]; the caller removes the folder if that fails).
    pub fn init_clone(root: &Path) -> Result<Store> {
        Store::open_repository(root)?.set_up()?;
        Store::open_repository(root)
    }

    /// Whether the repository is a convo store; see [`MARKER_KEY`]. Reads only the local
    /// config and, without a marker, the top of HEAD's tree and its `conversations/`.
    fn recognise(&self) -> Result<Recognised> {
        let config_path = self.repo.git_dir().join("config");
        let config = gix::config::File::from_path_no_includes(config_path, gix::config::Source::Local)
            .map_err(git_err("read .git/config"))?;
        if let Ok(value) = config.raw_value(MARKER_KEY) {
            // A format this convo does not know may lay conversations out in a way it would
            // misread, or write over: refused, whatever it is, before anything is read.
            let value = value.to_string();
            if value.trim() != MARKER_VALUE {
                // Shown on one line, however the value was written.
                let version = value.chars().take(40).flat_map(char::escape_debug).collect();
                return Err(StoreError::UnknownFormat { path: self.root.clone(), version });
            }
            return Ok(Recognised::Marked);
        }
        let Some(root) = self.head_tree_id()? else {
            // No commits: an older `convo init` left its local state; anything else is empty
            // only if its folder holds nothing but `.git`.
            if self.state_dir().exists() {
                return Ok(Recognised::Unmarked);
            }
            let first = std::fs::read_dir(&self.root)
                .map_err(io_err(&self.root))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name != ".git")
                .min();
            return Ok(Recognised::Foreign {
                empty: first.is_none(),
                why: match first {
                    Some(name) => format!("it holds `{name}`"),
                    None => "it has no commits and no convo marker".into(),
                },
            });
        };
        let foreign = |name: &str| Recognised::Foreign { why: format!("its tree holds `{name}`"), empty: false };
        for (name, id, is_tree) in self.tree_entries(root)? {
            match name.as_str() {
                layout::STORE_CONFIG if !is_tree => {}
                layout::CONVERSATIONS if is_tree => {
                    for (name, fan, is_tree) in self.tree_entries(id)? {
                        let here = format!("{}/{name}", layout::CONVERSATIONS);
                        if !is_tree || !(layout::is_conversation_id(&name) || layout::is_fan(&name)) {
                            return Ok(foreign(&here));
                        }
                        if layout::is_fan(&name) {
                            for (id, _, is_tree) in self.tree_entries(fan)? {
                                if !is_tree || !layout::is_conversation_id(&id) || layout::fan(&id) != name {
                                    return Ok(foreign(&format!("{here}/{id}")));
                                }
                            }
                        }
                    }
                }
                _ => return Ok(foreign(&name)),
            }
        }
        Ok(Recognised::Unmarked)
    }

    /// What makes a git repository a convo store: the marker, compression, local state,
    /// object folders.
    fn set_up(&self) -> Result<()> {
        // Loose objects at zlib level 1, git's own default: they are transient (gc packs
        // them, at level 6), and every commit writes a tree object as big as the store's
        // conversation count (530 KB at 10,000), where level 6 cost an append 4 ms more.
        let config_path = self.repo.git_dir().join("config");
        let mut config = gix::config::File::from_path_no_includes(config_path.clone(), gix::config::Source::Local)
            .map_err(git_err("read .git/config"))?;
        config.set_raw_value("core.looseCompression", "1").map_err(git_err("set core.looseCompression"))?;
        // Conversations are private: git run in the store by hand (gc, repack, fetch) then
        // writes user-only files too, as convo does.
        config.set_raw_value("core.sharedRepository", "0600").map_err(git_err("set core.sharedRepository"))?;
        config.set_raw_value(MARKER_KEY, MARKER_VALUE).map_err(git_err(format!("set {MARKER_KEY}")))?;
        let mut bytes = Vec::new();
        config.write_to(&mut bytes).map_err(io_err(&config_path))?;
        std::fs::write(&config_path, bytes).map_err(io_err(&config_path))?;
        create_private_dir(&self.state_dir())?;
        self.create_object_folders();
        Ok(())
    }

    /// Create the 256 fan-out folders of `.git/objects` up front: a new object otherwise
    /// often needs a `mkdir` first, which on ext4 costs as much as the object itself. Best
    /// effort; `git gc` removes the empty ones, so it runs again after each gc.
    fn create_object_folders(&self) {
        let objects = self.repo.objects.store_ref().path().to_owned();
        use std::os::unix::fs::DirBuilderExt;
        let mut builder = std::fs::DirBuilder::new();
        builder.mode(0o700);
        for byte in 0..=255u8 {
            let _ = builder.create(objects.join(format!("{byte:02x}")));
        }
    }

    pub fn with_fail_point(mut self, fail_point: Option<FailPoint>) -> Self {
        self.fail_point = fail_point;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.git/convo`: local, uncommitted state.
    fn state_dir(&self) -> PathBuf {
        self.repo.git_dir().join("convo")
    }

    fn head_tree_id(&self) -> Result<Option<ObjectId>> {
        let Some(commit) = self.head_commit_id()? else {
            return Ok(None);
        };
        self.commit_tree_id(commit).map(Some)
    }

    /// The commit HEAD names. Under the write lock it is read once: only this process
    /// moves it then, and [`Store::move_head`] keeps the memo in step.
    fn head_commit_id(&self) -> Result<Option<ObjectId>> {
        if let Some(commit) = self.head.lock().ok().and_then(|memo| memo.commit()) {
            return Ok(commit);
        }
        let commit = self.read_head_commit_id()?;
        if let Ok(mut memo) = self.head.lock() {
            memo.remember_commit(commit);
        }
        Ok(commit)
    }

    /// [`head_commit_id`](Self::head_commit_id) from the files, whatever the memo holds.
    fn read_head_commit_id(&self) -> Result<Option<ObjectId>> {
        let head = self.repo.head().map_err(git_err("read HEAD"))?;
        Ok(head.id().map(|id| id.detach()))
    }

    /// The branch HEAD points at (`None`: detached), memoised under the write lock as
    /// [`head_commit_id`](Self::head_commit_id) is.
    fn head_branch(&self) -> Result<Option<gix::refs::FullName>> {
        if let Some(branch) = self.head.lock().ok().and_then(|memo| memo.branch()) {
            return Ok(branch);
        }
        let branch = self.repo.head_name().map_err(git_err("read HEAD"))?;
        if let Ok(mut memo) = self.head.lock() {
            memo.remember_branch(branch.clone());
        }
        Ok(branch)
    }

    fn commit_tree_id(&self, commit: ObjectId) -> Result<ObjectId> {
        // Through `object_data`: HEAD's commit is what a `git gc` beside convo packs first.
        let data = self.object_data(commit, gix::objs::Kind::Commit)?;
        gix::objs::CommitRefIter::from_bytes(&data, commit.kind())
            .tree_id()
            .map_err(git_err(format!("read the tree of commit {commit}")))
    }

    /// The bytes of object `id` of `kind`. An object a `git gc` beside convo has just packed
    /// and pruned can be missing from this command's view of the object database: it is
    /// looked for again, at last through a fresh view, before it counts as missing.
    pub(super) fn object_data(&self, id: ObjectId, kind: gix::objs::Kind) -> Result<Vec<u8>> {
        let what = || format!("read {kind} {id}");
        // `None`: not there (yet, or any more, in the packs this handle has in view).
        let find = |repo: &gix::Repository| -> Result<Option<Vec<u8>>> {
            let Some(object) = repo.try_find_object(id).map_err(git_err(what()))? else { return Ok(None) };
            if object.kind != kind {
                return Err(git_detail(what(), format!("expected a {kind}, found a {}", object.kind)));
            }
            Ok(Some(object.detach().data))
        };
        if let Some(data) = find(&self.repo)? {
            return Ok(data);
        }
        for attempt in 1..=3u64 {
            std::thread::sleep(std::time::Duration::from_millis(5 * attempt));
            if let Ok(Some(data)) = find(&self.repo) {
                return Ok(data);
            }
        }
        let fresh = gix::open(&self.root).map_err(git_err(format!("open {}", self.root.display())))?;
        find(&fresh)?.ok_or_else(|| git_detail(what(), "the object is not in the repository"))
    }

    /// The first parent of `commit`, if it has one.
    pub(super) fn first_parent(&self, commit: ObjectId) -> Result<Option<ObjectId>> {
        let data = self.object_data(commit, gix::objs::Kind::Commit)?;
        let parent = gix::objs::CommitRefIter::from_bytes(&data, commit.kind()).parent_ids().next();
        Ok(parent)
    }

    /// Entry `name` of the tree whose bytes are `data`: its id and whether it is a tree.
    fn entry_in(data: &[u8], name: &str) -> Option<(ObjectId, bool)> {
        gix::objs::TreeRefIter::from_bytes(data, gix::hash::Kind::Sha1)
            .filter_map(|e| e.ok())
            .find(|e| e.filename == name.as_bytes())
            .map(|e| (e.oid.to_owned(), e.mode.is_tree()))
    }

    /// The id of the object at `path` (slash-separated) below `tree`, if any.
    fn entry_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>> {
        // Paths into one conversation (in the fan-out shape) go through the memo of the
        // `conversations` folder and its fan folders, which are decoded once per command,
        // not once per lookup; a conversation not in its fan folder is looked for where a
        // store from before the fan-out keeps it (see `layout`).
        if let Some((id, rest)) = layout::split_conversation_path(path)
            && path.starts_with(&layout::conversation_dir(id))
        {
            let top = self.object_data(tree, gix::objs::Kind::Tree)?;
            let Some((dir, true)) = Store::entry_in(&top, layout::CONVERSATIONS) else {
                // No folder there (or a file by its name, in a tree another tool wrote).
                return Ok(None);
            };
            let Some(found) = self.locate_in(dir, id)? else { return Ok(None) };
            return match rest.is_empty() {
                true => Ok(Some(found)),
                false => self.entry_at(found, &rest.join("/")),
            };
        }
        let mut at = tree;
        let mut parts = path.split('/').peekable();
        while let Some(part) = parts.next() {
            let Some((id, is_tree)) = Store::entry_in(&self.object_data(at, gix::objs::Kind::Tree)?, part) else {
                return Ok(None);
            };
            if parts.peek().is_none() {
                return Ok(Some(id));
            }
            if !is_tree {
                return Ok(None);
            }
            at = id;
        }
        Ok(None)
    }

    /// `(name, id, is_tree)` of each entry of a tree.
    fn tree_entries(&self, tree: ObjectId) -> Result<Vec<(String, ObjectId, bool)>> {
        let data = self.object_data(tree, gix::objs::Kind::Tree)?;
        let mut entries = Vec::new();
        for entry in gix::objs::TreeRefIter::from_bytes(&data, gix::hash::Kind::Sha1) {
            // The context made only on an error: formatting it per entry showed in profiles.
            let e = entry.map_err(|e| git_err(format!("decode tree {tree}"))(e))?;
            entries.push((e.filename.to_string(), e.oid.to_owned(), e.mode.is_tree()));
        }
        Ok(entries)
    }

    fn read_blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        self.object_data(id, gix::objs::Kind::Blob)
    }

    /// Every blob below `tree`, by slash-separated path.
    pub(super) fn collect_blobs(
        &self,
        tree: ObjectId,
        prefix: &str,
        out: &mut std::collections::HashMap<String, ObjectId>,
    ) -> Result<()> {
        for (name, id, is_tree) in self.tree_entries(tree)? {
            let path = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
            if is_tree {
                self.collect_blobs(id, &path, out)?;
            } else {
                out.insert(path, id);
            }
        }
        Ok(())
    }

    /// Ids of all conversations at HEAD, oldest first (ids sort by creation time).
    pub fn conversation_ids(&self) -> Result<Vec<String>> {
        let Some(root) = self.head_tree_id()? else {
            return Ok(Vec::new());
        };
        if self.entry_at(root, layout::CONVERSATIONS)?.is_none() {
            return Ok(Vec::new());
        }
        Ok(self.ids()?.all())
    }

    pub fn meta(&self, id: &str) -> Result<Meta> {
        let root = self.head_tree_id()?.ok_or(StoreError::Empty)?;
        let path = layout::meta_path(id);
        let blob = self
            .entry_at(root, &path)?
            .ok_or_else(|| StoreError::BadFile { path: path.clone(), message: "missing".into() })?;
        parse_meta(&path, &self.read_blob(blob)?)
    }

    /// The `meta.json` of conversation `id` whose folder is the tree `dir`.
    pub(super) fn meta_of(&self, dir: ObjectId, id: &str) -> Result<Meta> {
        let path = layout::meta_path(id);
        let blob = self
            .entry_at(dir, layout::META_FILE)?
            .ok_or_else(|| StoreError::BadFile { path: path.clone(), message: "missing".into() })?;
        parse_meta(&path, &self.read_blob(blob)?)
    }

    /// Every event of a conversation, in order, from the committed tree.
    pub fn events(&self, id: &str) -> Result<Vec<Event>> {
        let mut events = Vec::new();
        for (path, blob) in self.segments(id)? {
            events.extend(self.parse_segment(&path, blob)?);
        }
        Ok(events)
    }

    fn parse_segment(&self, path: &str, blob: ObjectId) -> Result<Vec<Event>> {
        let bytes = self.read_blob(blob)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| StoreError::BadFile { path: path.to_owned(), message: "not UTF-8".into() })?;
        event::parse_stored(text).map_err(|error| StoreError::Corrupt { path: path.to_owned(), error })
    }

    /// The events of conversation `id` as of revision `rev` (anything git's rev-parse takes:
    /// a hash, `HEAD~3`, a branch).
    pub fn events_at(&self, id: &str, rev: &str) -> Result<Vec<Event>> {
        let object = self
            .repo
            .rev_parse_single(rev)
            .map_err(|e| StoreError::UnknownRevision { rev: rev.to_owned(), message: e.to_string() })?;
        let commit = object
            .object()
            .map_err(git_err(format!("read {rev}")))?
            .peel_to_commit()
            .map_err(|e| StoreError::UnknownRevision { rev: rev.to_owned(), message: e.to_string() })?;
        let root = commit.tree_id().map_err(git_err(format!("read tree of {rev}")))?.detach();
        let mut events = Vec::new();
        for (path, blob) in self.segments_in(root, id)? {
            events.extend(self.parse_segment(&path, blob)?);
        }
        Ok(events)
    }

    /// The bytes of a file at HEAD, if it exists (e.g. the store's `convo.toml`).
    pub fn head_file(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let Some(root) = self.head_tree_id()? else { return Ok(None) };
        match self.entry_at(root, path)? {
            Some(blob) => self.read_blob(blob).map(Some),
            None => Ok(None),
        }
    }

    /// `(path, blob)` of each segment of a conversation at HEAD, in order.
    fn segments(&self, id: &str) -> Result<Vec<(String, ObjectId)>> {
        match self.head_tree_id()? {
            Some(root) => self.segments_in(root, id),
            None => Ok(Vec::new()),
        }
    }

    /// `(path, blob)` of each segment of a conversation in tree `root`, in order.
    fn segments_in(&self, root: ObjectId, id: &str) -> Result<Vec<(String, ObjectId)>> {
        let mut out = Vec::new();
        for (group, tree) in self.groups_in(root, id)? {
            self.push_segment_paths(id, group, tree, &mut out)?;
        }
        Ok(out)
    }

    /// `(path, blob)` of each segment of one folder, appended to `out`. Paths are built
    /// from one prefix: a long conversation has thousands.
    fn push_segment_paths(
        &self,
        id: &str,
        group: u64,
        tree: ObjectId,
        out: &mut Vec<(String, ObjectId)>,
    ) -> Result<()> {
        let segments = self.group_segments(id, group, tree)?;
        let prefix = layout::segment_path(id, group * layout::SEGMENTS_PER_GROUP);
        let prefix = &prefix[..prefix.len() - layout::segment_name(0).len()];
        out.reserve(segments.len());
        for (n, oid) in segments {
            let mut path = String::with_capacity(prefix.len() + 12);
            path.push_str(prefix);
            layout::push_segment_name(&mut path, n);
            out.push((path, oid));
        }
        Ok(())
    }

    /// The segment folders of a conversation in tree `root`, ascending: `(group, tree)`.
    fn groups_in(&self, root: ObjectId, id: &str) -> Result<Vec<(u64, ObjectId)>> {
        match self.entry_at(root, &layout::conversation_dir(id))? {
            Some(dir) => self.groups_of(dir, id),
            None => Ok(Vec::new()),
        }
    }

    /// `(path, blob)` of each segment of conversation `id` whose folder is the tree `dir`.
    pub(super) fn segments_of(&self, dir: ObjectId, id: &str) -> Result<Vec<(String, ObjectId)>> {
        let mut out = Vec::new();
        for (group, tree) in self.groups_of(dir, id)? {
            self.push_segment_paths(id, group, tree, &mut out)?;
        }
        Ok(out)
    }

    /// The segment folders of conversation `id` whose folder is the tree `dir`, ascending.
    fn groups_of(&self, dir: ObjectId, id: &str) -> Result<Vec<(u64, ObjectId)>> {
        let events_dir = format!("{}/{}", layout::conversation_dir(id), layout::EVENTS_DIR);
        let Some(dir) = self.entry_at(dir, layout::EVENTS_DIR)? else {
            return Ok(Vec::new());
        };
        let mut groups: Vec<(u64, ObjectId)> = Vec::new();
        for (name, oid, is_tree) in self.tree_entries(dir)? {
            match layout::parse_group_name(&name) {
                Some(n) if is_tree => groups.push((n, oid)),
                _ => return Err(bad_layout(&events_dir, &name)),
            }
        }
        groups.sort();
        Ok(groups)
    }

    /// The segments of one folder, ascending: `(segment number, blob)`.
    fn group_segments(&self, id: &str, group: u64, tree: ObjectId) -> Result<Vec<(u64, ObjectId)>> {
        let mut segments: Vec<(u64, ObjectId)> = Vec::with_capacity(layout::SEGMENTS_PER_GROUP as usize);
        // Decoded in place: a long conversation has thousands of segments, and a string per
        // name showed in the profile of `compact`.
        let data = self.object_data(tree, gix::objs::Kind::Tree)?;
        for entry in gix::objs::TreeRefIter::from_bytes(&data, tree.kind()) {
            let e = entry.map_err(|e| git_err(format!("decode tree {tree}"))(e))?;
            let name = std::str::from_utf8(e.filename).ok();
            match name.and_then(layout::parse_segment_name) {
                Some(n) if !e.mode.is_tree() => segments.push((n, e.oid.to_owned())),
                _ => {
                    let name = e.filename.to_string();
                    let dir = format!(
                        "{}/{}/{}",
                        layout::conversation_dir(id),
                        layout::EVENTS_DIR,
                        layout::group_name(group * layout::SEGMENTS_PER_GROUP)
                    );
                    return Err(bad_layout(&dir, &name));
                }
            }
        }
        segments.sort();
        Ok(segments)
    }

    /// The conversation `query` names: a full id, a unique id prefix, an exact title, or a
    /// unique title prefix, in that order: an id is never shadowed by a title.
    ///
    /// An id and a prefix are looked up in the `conversations` folder in place, a title in
    /// the catalogue; only a title prefix reads every title, and only when nothing else
    /// matched.
    pub fn resolve(&self, query: &str) -> Result<String> {
        if self.has_conversation(query)? {
            return Ok(query.to_owned());
        }
        let upper = query.to_ascii_uppercase();
        let by_prefix = if layout::could_start_id(&upper) { self.ids_with_prefix(&upper)? } else { Vec::new() };
        let matches = match by_prefix.is_empty() {
            false => by_prefix,
            true => match self.titled(query)? {
                exact if exact.is_empty() => return self.resolve_title_prefix(query),
                exact => exact,
            },
        };
        match matches.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(StoreError::AmbiguousConversation {
                query: query.to_owned(),
                candidates: self.summaries_of(matches.iter())?,
            }),
        }
    }

    /// The conversation whose title starts with `query`: case-insensitive unless `query` has
    /// an upper-case letter (smart case, as in ripgrep and vim). A subagent's or a fork's
    /// title starts with the title of the conversation it came from, so when all matches but
    /// one came from another match, that one is named: "Fix login" names the session, not
    /// its subagents titled "Fix login: Run tests".
    fn resolve_title_prefix(&self, query: &str) -> Result<String> {
        if query.trim().is_empty() {
            return Err(self.unknown(query)?);
        }
        let starts = |title: &str| match query.chars().any(char::is_uppercase) {
            true => title.starts_with(query),
            false => title.to_lowercase().starts_with(&query.to_lowercase()),
        };
        let matches: Vec<Summary> =
            self.summaries()?.into_iter().filter(|s| s.title.as_deref().is_some_and(starts)).collect();
        let ids: std::collections::HashSet<&str> = matches.iter().map(|s| s.id.as_str()).collect();
        let roots: Vec<Summary> =
            matches.iter().filter(|s| !s.came_from().is_some_and(|from| ids.contains(from))).cloned().collect();
        match roots.len() {
            1 => Ok(roots[0].id.clone()),
            _ if matches.is_empty() => Err(self.unknown(query)?),
            // Only a hand-edited store has a cycle of subagents and no root: name them all.
            0 => Err(StoreError::AmbiguousConversation { query: query.to_owned(), candidates: matches }),
            _ => Err(StoreError::AmbiguousConversation { query: query.to_owned(), candidates: roots }),
        }
    }

    /// No conversation matches `query`: the newest few are the candidates a hint names.
    fn unknown(&self, query: &str) -> Result<StoreError> {
        Ok(StoreError::UnknownConversation {
            query: query.to_owned(),
            candidates: self.summaries_of(self.conversation_ids()?.iter().rev().take(5))?,
        })
    }

    /// `query` resolved, or the active conversation when there is none.
    pub fn resolve_or_active(&self, query: Option<&str>) -> Result<String> {
        match query {
            Some(q) => self.resolve(q),
            None => {
                let id = self.active()?.ok_or(StoreError::NoActiveConversation)?;
                // The active id is local state: the conversation may be gone after a reset.
                if self.has_conversation(&id)? { Ok(id) } else { Err(StoreError::NoActiveConversation) }
            }
        }
    }

    pub fn active(&self) -> Result<Option<String>> {
        let path = self.state_dir().join("active");
        match std::fs::read_to_string(&path) {
            Ok(s) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(path)(e)),
        }
    }

    pub fn set_active(&self, id: &str) -> Result<()> {
        txn::write_private_file(&self.state_dir(), &self.state_dir().join("active"), format!("{id}\n").as_bytes())
    }

    fn summaries_of<'a>(&self, ids: impl Iterator<Item = &'a String>) -> Result<Vec<Summary>> {
        ids.map(|id| self.summary(id)).collect()
    }

    /// Title, counts and times of one conversation; counts come from a cache keyed by the
    /// conversation's tree, so `list` does not re-read every event.
    pub fn summary(&self, id: &str) -> Result<Summary> {
        let meta = self.meta(id)?;
        let cached = self.cached_stats(id)?;
        Ok(Summary {
            project: Project::of(&meta),
            id: id.to_owned(),
            title: meta.title,
            updated: cached.updated.clone().unwrap_or_else(|| meta.created.clone()),
            created: meta.created,
            tokens: cached.stats.tokens(),
            stats: cached.stats,
            subagent_of: meta.extra.get("subagent_of").and_then(|v| v.as_str()).map(str::to_owned),
            forked_from: meta.forked_from,
            who: cached.who.unwrap_or_default(),
        })
    }
}

fn bad_layout(dir: &str, name: &str) -> StoreError {
    StoreError::BadFile { path: format!("{dir}/{name}"), message: "not a file convo writes here".into() }
}

fn parse_meta(path: &str, bytes: &[u8]) -> Result<Meta> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::BadFile { path: path.to_owned(), message: format!("invalid metadata ({e})") })
}

/// The `git` binary, for what gix cannot do (push, gc), run with umask 077 so every file
/// it writes (packs, refs, a clone) is as private as the ones convo writes.
pub fn git_command() -> std::process::Command {
    use std::os::unix::process::CommandExt as _;
    let mut command = std::process::Command::new("git");
    // What git writes into a store (a fetch's objects and refs, a clone, a gc's packs) is on
    // disk before git names it in a ref, whatever the user's git defaults (see `durable`);
    // a git before 2.36 ignores the keys. Each file synced (`fsync`), not `batch`: batch
    // syncs one dummy file and counts on the file system's journal to carry the others'
    // data, which the crash-state tests do not grant. Cheap beside the network or a repack.
    command.args(["-c", "core.fsync=committed", "-c", "core.fsyncMethod=fsync"]);
    // SAFETY: umask(2) is async-signal-safe and touches no memory; it only sets the
    // child's file-creation mask before exec.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0o077);
            Ok(())
        });
    }
    command
}

pub(crate) fn create_private_dir(path: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(path).map_err(io_err(path))
}
