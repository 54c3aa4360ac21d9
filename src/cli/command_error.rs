//! The CLI's one error type: a kind that decides the exit code, a one-line message, and
//! `hint:` lines. Library errors are mapped here and nowhere else.

use std::io::Write;

use convo::compaction::MalformedCompaction;
use convo::config::ConfigError;
use convo::event::{IdError, LineError};
use convo::interop::{ImportError, InteropError};
use convo::llm::client::LlmError;
use convo::ops::import::{FollowFailure, ImportFailure};
use convo::ops::plan::PlanError;
use convo::ops::project::ProjectError;
use convo::ops::redact::RedactError;
use convo::ops::resume::ResumeError;
use convo::ops::select::SelectError;
use convo::ops::sync::SyncFailed;
use convo::ops::{OpsError, QueryError};
use convo::projection::ProjectionError;
use convo::render::escape_line;
use convo::store::{StoreError, Summary};
use convo::sync::SyncError;

/// Exit codes, as documented in `convo --help`.
pub const EXIT_CODES: &str = "\
Exit status:
  0  success
  1  `fsck` found problems; `grep` found nothing
  2  usage error (unknown flag, missing argument)
  3  bad input: a JSONL line, an id, a flag value; nothing was written
  4  not found: no store, no such conversation, or an ambiguous name
  5  the store could not be read or written (I/O, git, a corrupt file)
  6  a remote failed or refused: an LLM provider (connection, HTTP error, malformed
     answer) or a git remote (unreachable, push rejected); nothing was written
 70  internal error: a bug in convo (please report it)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `fsck` found problems: the report was printed.
    CheckFailed,
    /// `grep` found nothing: said by the exit status alone, as grep does.
    NoMatch,
    Input,
    NotFound,
    Store,
    /// The LLM provider could not be reached or answered badly.
    Remote,
    /// stdout was closed (`convo log | head`): not a failure.
    BrokenPipe,
    /// A bug in convo (a panic): EX_SOFTWARE.
    Internal,
}

impl Kind {
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::BrokenPipe => 0,
            Kind::CheckFailed | Kind::NoMatch => 1,
            Kind::Input => 3,
            Kind::NotFound => 4,
            Kind::Store => 5,
            Kind::Remote => 6,
            Kind::Internal => 70,
        }
    }
}

#[derive(Debug)]
pub struct CommandError {
    pub kind: Kind,
    pub message: String,
    /// What caused it, outermost first: printed as `Caused by:` lines under the message,
    /// as jj prints them.
    pub causes: Vec<String>,
    pub hints: Vec<String>,
}

impl CommandError {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        CommandError { kind, message: message.into(), causes: Vec::new(), hints: Vec::new() }
    }

    pub fn input(message: impl Into<String>) -> Self {
        Self::new(Kind::Input, message)
    }

    /// A bug: what went wrong and where, and a request to report it.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(Kind::Internal, format!("internal error: {message}"))
            .hint("this is a bug in convo; please report it with the command you ran")
    }

    /// `flag`'s value is not a valid event or call id.
    pub fn bad_id(flag: &str, e: IdError) -> Self {
        Self::input(format!("{flag}: {e}"))
    }

    /// A bad line of `append`'s input, read from `label` (a file or stdin).
    pub fn bad_line(label: &str, e: LineError) -> Self {
        Self::input(format!("{label} {e}"))
            .hint("nothing was written; each line is one JSON event, see `convo append --help`")
    }

    /// `append` failed in the store. `label` names the input: a `--tool-result` flag is not
    /// a line, so its unknown call is named by the flag.
    pub fn append(label: &str, e: StoreError) -> Self {
        match e {
            StoreError::UnknownCallId { call_id, .. } if label == "--tool-result" => {
                Self::input(format!("--tool-result: no tool_call with call_id `{call_id}` in this conversation"))
                    .hint("nothing was written; `convo show --brief` lists the calls")
            }
            StoreError::DuplicateCallId { call_id, .. } if label == "--tool-call" => Self::input(format!(
                "--call-id: a tool_call with call_id `{call_id}` is already in this conversation"
            ))
            .hint("nothing was written; call ids are unique in a conversation (leave out --call-id for a new one)"),
            other => other.into(),
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// The message and hints, each on one line: what they quote from the store or the
    /// input (a title, a line of a file) cannot write control characters or forge a line.
    pub fn print(&self, err: &mut dyn Write) {
        if self.kind == Kind::NoMatch {
            return;
        }
        let _ = writeln!(err, "error: {}", escape_line(&self.message));
        match self.causes.as_slice() {
            [] => {}
            [one] => {
                let _ = writeln!(err, "Caused by: {}", escape_line(one));
            }
            many => {
                let _ = writeln!(err, "Caused by:");
                for (n, cause) in many.iter().enumerate() {
                    let _ = writeln!(err, "{}: {}", n + 1, escape_line(cause));
                }
            }
        }
        for hint in &self.hints {
            let _ = writeln!(err, "hint: {}", escape_line(hint));
        }
    }
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        let message = e.to_string();
        match e {
            StoreError::NotAStore { path } => CommandError::new(Kind::NotFound, message)
                .hint(format!("create one with `convo init {}`", path.display())),
            StoreError::ForeignRepository { .. } => CommandError::new(Kind::NotFound, message)
                .hint("convo writes only to stores `convo init` made, never onto another repository's branch")
                .hint("point --store (or CONVO_DIR) at a store, or create one in a new folder: `convo init PATH`"),
            StoreError::UnknownFormat { .. } => CommandError::new(Kind::Store, message)
                .hint("a newer convo wrote it: upgrade convo; nothing was read or written"),
            StoreError::NotAStoreDir { .. } => {
                CommandError::new(Kind::Store, message).hint("point --store (or CONVO_DIR) at a directory")
            }
            StoreError::UnknownConversation { candidates: c, .. } if c.is_empty() => {
                CommandError::new(Kind::NotFound, message).hint("start one with `convo new`")
            }
            StoreError::UnknownConversation { candidates: c, .. } => CommandError::new(Kind::NotFound, message)
                .hint(format!("recent conversations: {}", Summary::candidates(&c)))
                .hint("name one by id or title, or a unique prefix of either; `convo list` shows all"),
            StoreError::AmbiguousConversation { candidates: c, .. } => {
                CommandError::new(Kind::NotFound, message).hint(format!("candidates: {}", Summary::candidates(&c)))
            }
            StoreError::NoActiveConversation => CommandError::new(Kind::NotFound, message)
                .hint("name a conversation, `convo switch ID`, or start one with `convo new`"),
            StoreError::Empty => CommandError::new(Kind::NotFound, message).hint("start one with `convo new`"),
            StoreError::UnknownCallId { .. } | StoreError::DuplicateId { .. } | StoreError::DuplicateCallId { .. } => {
                CommandError::new(Kind::Input, message).hint("nothing was written")
            }
            StoreError::Corrupt { .. } | StoreError::BadFile { .. } => {
                CommandError::new(Kind::Store, message).hint("`convo fsck` lists every problem in the store")
            }
            StoreError::UnknownRevision { .. } => {
                CommandError::new(Kind::NotFound, message).hint("`convo log` lists the conversation's commits")
            }
            StoreError::GitMissing { .. } => CommandError::new(Kind::Store, message).hint("install git"),
            StoreError::EmptyTitle => CommandError::input(message).hint("nothing was written"),
            StoreError::NotRemoved { .. } => {
                CommandError::input(message).hint("`convo restore` brings back a conversation `convo rm` removed")
            }
            StoreError::NoRemoved { .. } => CommandError::new(Kind::NotFound, message)
                .hint("`convo restore --list` shows the removed conversations history still holds"),
            StoreError::AmbiguousRemoved { ref ids, .. } => {
                CommandError::new(Kind::NotFound, message).hint(format!("candidates: {}", ids.join(", ")))
            }
            StoreError::Refused { .. } => CommandError::new(Kind::Remote, message).hint(
                "that is not a store as convo writes it (only conversations/ and convo.toml); nothing of it was taken",
            ),
            StoreError::RefusedConversation { .. } => CommandError::new(Kind::Remote, message).hint(
                "a conversation's ref on the hub holds that conversation alone, as the catalog lists it; nothing of it was taken",
            ),
            StoreError::CatalogWithoutBranch { .. } => CommandError::new(Kind::Remote, message).hint(
                "a push from a whole store (`convo clone URL`, then `convo push`) writes a catalog a lazy store can push on",
            ),
            StoreError::Symlink { .. } => CommandError::new(Kind::Store, message)
                .hint("replace the symlink with the real folder or file; `convo fsck` lists every problem"),
            StoreError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
                CommandError::new(Kind::Store, format!("cannot write the store: {message}")).hint(
                    "it is on a read-only file system: reading works, writing needs a writable copy (`convo clone`)",
                )
            }
            StoreError::Io { ref source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
                CommandError::new(Kind::Store, format!("cannot write the store: {message}"))
                    .hint("its files belong to another user or are not writable; a store is its owner's alone")
            }
            StoreError::HeadMoved { .. } => CommandError::new(Kind::Store, message)
                .hint("nothing was written; run the command again once the other program is done"),
            StoreError::GitLockHeld { .. } => CommandError::new(Kind::Store, message).hint(
                "nothing was written; try again when that git command is done (git's `core.filesRefLockTimeout`, in ms, sets how long convo waits)",
            ),
            StoreError::Git { .. } => {
                let mut error = CommandError::new(Kind::Store, message);
                error.causes = e.causes();
                error
            }
            StoreError::Io { .. } => CommandError::new(Kind::Store, message),
            StoreError::Sync { .. } => CommandError::new(Kind::Store, message)
                .hint("the disk reported an error: what this command wrote may not survive a power cut; check the disk (`dmesg`), then `convo fsck`"),
        }
    }
}

/// A failed LLM call: exit status 6, and nothing was written.
impl From<QueryError> for CommandError {
    fn from(e: QueryError) -> Self {
        match e {
            QueryError::Llm(e @ LlmError::Redirect { .. }) => CommandError::new(Kind::Remote, e.to_string())
                .hint("nothing was written; if you trust the new address, make it the provider's base_url"),
            QueryError::Llm(e @ LlmError::Refused { .. }) => CommandError::new(Kind::Remote, e.to_string())
                .hint("nothing was written")
                .hint("is the server running? its address is the provider's base_url (`convo config list`)"),
            QueryError::Llm(e @ LlmError::Timeout { .. }) => CommandError::new(Kind::Remote, e.to_string())
                .hint("nothing was written")
                .hint("llm.timeout_secs sets how long to wait (a slow local model may need more)"),
            QueryError::Llm(e @ LlmError::Closed { .. }) => CommandError::new(Kind::Remote, e.to_string())
                .hint("nothing was written")
                .hint("the server may have crashed or restarted (out of memory, a prompt over its context size?): see its log"),
            QueryError::Llm(e) if e.is_context_overflow() => CommandError::new(Kind::Remote, e.to_string())
                .hint("nothing was written")
                .hint("`convo query --compact` compacts first; with compaction.auto.enabled = true convo does it by itself"),
            QueryError::Llm(e) => CommandError::new(Kind::Remote, e.to_string()).hint("nothing was written"),
            QueryError::SummaryTruncated { .. } => CommandError::new(Kind::Remote, e.to_string())
                .hint("nothing was written")
                .hint("raise compaction.max_summary_tokens (within models.<m>.max_output_tokens), or summarize fewer turns (--to)"),
            QueryError::Overflow { .. } => CommandError::input(e.to_string())
                .hint("nothing was written")
                .hint("`convo query --compact` compacts first; with compaction.auto.enabled = true convo does it by itself"),
            QueryError::Ops(e) => e.into(),
        }
    }
}

impl From<OpsError> for CommandError {
    fn from(e: OpsError) -> Self {
        match e {
            OpsError::Store(e) => e.into(),
            OpsError::Sync(e) => e.into(),
            OpsError::Config(e) => CommandError::input(e.to_string())
                .hint("`convo config list` shows every setting and where it comes from"),
            OpsError::Plan(PlanError::Projection(e)) | OpsError::Projection(e) => {
                CommandError::new(Kind::Store, e.to_string()).hint("`convo fsck` lists every problem in the store")
            }
            OpsError::Plan(e @ PlanError::UnknownProfile { .. }) => {
                CommandError::input(e.to_string()).hint("profiles live in config under [compaction.profiles.NAME]")
            }
            OpsError::Plan(e @ PlanError::OverBudget { smallest, .. }) => {
                CommandError::input(e.to_string()).hint(format!(
                    "a budget of {} or more can be met (the recent tail given up first); nothing was written",
                    convo::render::thousands(smallest)
                ))
            }
            OpsError::Plan(e) => CommandError::input(e.to_string()).hint("nothing was written"),
            OpsError::Invalid(m) => CommandError::input(m).hint("nothing was written"),
            OpsError::NothingToUndo => CommandError::input(e.to_string()).hint("`convo log` lists the compactions"),
            OpsError::NoSuchCompaction { ref in_force, .. } => {
                let error = CommandError::input(e.to_string()).hint("nothing was written");
                match in_force.is_empty() {
                    true => error,
                    false => error.hint("`convo compact --undo` with no id withdraws the latest in force"),
                }
            }
            OpsError::AmbiguousCompaction { .. } => {
                CommandError::input(e.to_string()).hint("nothing was written").hint("a longer prefix names one")
            }
            OpsError::MissingKey { ref var, .. } => {
                let hint = format!("export {var}=..., or use a local model such as ollama/llama3.2");
                CommandError::input(e.to_string()).hint(hint)
            }
            OpsError::ConfigEdit { .. } | OpsError::File { .. } => CommandError::input(e.to_string()),
            OpsError::Model(e) => CommandError::input(e.to_string()).hint("nothing was written"),
            OpsError::Declined => CommandError::input(e.to_string()).hint("--yes skips this question"),
            OpsError::SummaryNotSmaller { .. } => CommandError::input(e.to_string()).hint(
                "--force applies it anyway; --digest writes convo's own, bounded by compaction.max_summary_tokens",
            ),
            OpsError::Vetoed { hook, .. } => CommandError::input(e.to_string())
                .hint(format!("hooks.{hook} in your config vetoed it; `--config hooks.{hook}=` runs without it once")),
        }
    }
}

impl From<ProjectError> for CommandError {
    fn from(e: ProjectError) -> Self {
        match e {
            ProjectError::NotADirectory { .. } => CommandError::new(Kind::NotFound, e.to_string())
                .hint("--project takes a directory: a repository's (any folder in it), or a folder of sessions"),
        }
    }
}

impl From<SyncError> for CommandError {
    fn from(e: SyncError) -> Self {
        let message = e.to_string();
        match e {
            SyncError::Store(e) => e.into(),
            SyncError::GitMissing(_) => {
                CommandError::new(Kind::Store, message).hint("install git (e.g. apt install git)")
            }
            SyncError::UnknownRemote(_) => CommandError::new(Kind::NotFound, message)
                .hint("`convo remote add NAME URL`; `convo remote` lists them"),
            SyncError::RemoteExists { name, .. } => CommandError::input(message)
                .hint(format!("`convo remote set-url {name} URL` changes it; `convo remote` lists them")),
            SyncError::Rejected { .. } => CommandError::new(Kind::Remote, message)
                .hint("run `convo pull` to bring them in (nothing is lost), then push again"),
            SyncError::Refused { .. } => CommandError::new(Kind::Remote, message).hint(
                "its own rules (a hook, a protected branch, permissions) decide what it takes; nothing was pushed",
            ),
            SyncError::Secrets { findings, .. } => {
                let mut error = CommandError::input(message);
                for f in findings {
                    error = error.hint(format!("{}: {}", f.place, f.kind));
                }
                error
                    .hint("nothing was pushed; `convo redact --secrets` replaces them in the unpushed commits")
                    .hint("--allow-secrets pushes anyway")
            }
            SyncError::NoCatalog { .. } => CommandError::new(Kind::Remote, message)
                .hint("clone it whole (without --lazy); its next push by this convo publishes a catalog"),
            SyncError::LazyDiverged { .. } => CommandError::new(Kind::Remote, message)
                .hint("`convo pull` brings the hub's events in (nothing of yours is lost), then push again"),
            SyncError::Git { .. } => CommandError::new(Kind::Remote, message)
                .hint("`convo remote` lists the remotes and their URLs; `convo remote set-url NAME URL` changes one"),
        }
    }
}

impl From<SyncFailed> for CommandError {
    fn from(e: SyncFailed) -> Self {
        let message = e.to_string();
        match e {
            SyncFailed::Sync(e) => e.into(),
            SyncFailed::KeptMoving { .. } => CommandError::new(Kind::Remote, message)
                .hint("nothing was pushed; what was pulled is kept (nothing is lost)")
                .hint("run `convo sync` again later"),
        }
    }
}

impl From<RedactError> for CommandError {
    fn from(e: RedactError) -> Self {
        let message = e.to_string();
        match e {
            RedactError::TooShort => CommandError::input(message).hint("nothing was written"),
            RedactError::Published { .. } => CommandError::input(message)
                .hint("it has left this machine: rotate the key (revoke it where it was issued and make a new one)")
                .hint("nothing was rewritten; redact rewrites only commits no remote has"),
            RedactError::Store(e) => e.into(),
            RedactError::Sync(e) => e.into(),
        }
    }
}

impl From<ProjectionError> for CommandError {
    fn from(e: ProjectionError) -> Self {
        OpsError::Projection(e).into()
    }
}

/// A compaction event that cannot be read, where only its list is needed (`log`).
impl From<MalformedCompaction> for CommandError {
    fn from(e: MalformedCompaction) -> Self {
        CommandError::new(Kind::Store, e.to_string())
    }
}

/// `import` failed: the file is not the format (nothing was written), or the store failed
/// while the drafts were staged (a repeated id in the file is still the file's fault; a full
/// disk is the store's).
impl From<ImportFailure> for CommandError {
    fn from(e: ImportFailure) -> Self {
        let message = e.to_string();
        let refused = || CommandError::input(message.clone()).hint("nothing was written; --format names the format");
        match e {
            ImportFailure::Refused {
                source:
                    ImportError::Invalid(InteropError::Store(
                        StoreError::DuplicateId { .. }
                        | StoreError::DuplicateCallId { .. }
                        | StoreError::UnknownCallId { .. },
                    )),
                ..
            } => refused(),
            ImportFailure::Refused { source: ImportError::Invalid(InteropError::Store(e)), .. } => e.into(),
            ImportFailure::Refused { .. } => refused(),
            ImportFailure::Duplicate { .. } => CommandError::input(message).hint("--again makes another copy"),
            ImportFailure::Captured { .. } => CommandError::input(message)
                .hint("`convo import --follow FILE` adds what it gained since; --again makes another copy"),
            ImportFailure::File { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                CommandError::new(Kind::NotFound, message)
            }
            ImportFailure::NotText { .. } | ImportFailure::File { .. } => CommandError::input(message),
            ImportFailure::StillWritten { .. } => CommandError::input(message)
                .hint("nothing was written; `convo import --follow FILE` imports its whole lines, and what comes later")
                .hint("--skip-bad-lines imports it without that line"),
            ImportFailure::Follow(FollowFailure::ImportedWhole { id, .. }) => CommandError::input(message).hint(format!(
                "nothing was written; `convo rm {id}` and follow it again to import the session anew, or `convo import --again FILE` for a second copy"
            )),
            ImportFailure::Follow(_) => CommandError::input(message)
                .hint("nothing was written; `convo import --again FILE` imports it whole as a new conversation"),
            ImportFailure::Store(e) => e.into(),
            ImportFailure::Database(f) => match f.source {
                InteropError::Store(e) => e.into(),
                _ => CommandError::input(message).hint("nothing was written"),
            },
        }
    }
}

/// `resume` failed: nothing was left behind (the session file is removed when the commit
/// that records it fails).
impl From<ResumeError> for CommandError {
    fn from(e: ResumeError) -> Self {
        let message = e.to_string();
        match e {
            ResumeError::Store(e) => e.into(),
            ResumeError::Projection(e) => e.into(),
            ResumeError::Cwd(_) => CommandError::input(message).hint("--cwd names the directory the agent will run in"),
            ResumeError::Exists(_) => CommandError::new(Kind::Store, message)
                .hint("nothing was written; a session file is never replaced: run `convo resume` again for a new id"),
            ResumeError::Write { .. } => CommandError::new(Kind::Store, message).hint("nothing was written"),
            ResumeError::NoDatabase(_) => CommandError::input(message)
                .hint("run opencode once (it makes its database), or point XDG_DATA_HOME at the one it uses"),
            ResumeError::NotOpencode(_) => CommandError::input(message).hint("nothing was written"),
            ResumeError::SessionExists { .. } => CommandError::new(Kind::Store, message)
                .hint("nothing was written; a session is never replaced: run `convo resume` again for a new id"),
            ResumeError::Database { .. } => CommandError::new(Kind::Store, message)
                .hint("nothing was written to opencode's database (a running opencode may hold it: try again)"),
        }
    }
}

/// `show --turn`, `--turns`, `--event` asked for what the conversation does not hold.
impl From<SelectError> for CommandError {
    fn from(e: SelectError) -> Self {
        let message = escape_line(&e.to_string()).into_owned();
        match e {
            SelectError::NoSuchTurn { .. } | SelectError::Backwards { .. } => {
                CommandError::input(message).hint("turns are numbered from 0, as `convo show` heads them")
            }
            SelectError::NoSuchEvent(_) => CommandError::new(Kind::NotFound, message)
                .hint("`convo show --format jsonl` lists the events with their ids"),
            SelectError::Ambiguous { .. } => {
                CommandError::new(Kind::NotFound, message).hint("give more characters of the event's id")
            }
        }
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> Self {
        OpsError::Config(e).into()
    }
}

impl From<std::io::Error> for CommandError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CommandError::new(Kind::BrokenPipe, "")
        } else {
            CommandError::new(Kind::Store, format!("write output: {e}"))
        }
    }
}
