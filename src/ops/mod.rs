//! Operations: the workflows that combine the store, config, compaction and LLM calls, one
//! file per operation (as cargo's `ops/`). Commands parse arguments, call one operation and
//! render its report; an operation never prints or reads the environment: what it needs
//! from outside (a key, a yes/no, progress) the caller passes in as a capability.

pub mod auto;
pub mod budget;
pub mod compact;
pub mod config_edit;
pub mod folder;
pub mod fork;
pub mod import;
pub mod lazy;
pub mod opencode;
pub mod plan;
pub mod project;
pub mod query;
pub mod redact;
pub mod resume;
pub mod search;
pub mod select;
pub mod share;
pub mod status;
pub mod subagent_files;
pub mod sync;
pub mod usage;
pub mod watch;
pub mod who;

use crate::config::{self, ConfigError, Layer, Resolved, Source};
use crate::event::Event;
use crate::ops::plan::PlanError;
use crate::projection::ProjectionError;
use crate::store::{Store, StoreError, layout};

pub use compact::{HookDocument, HookFailure, HookPoint, Hooks, Planned, Summarizer, SummaryJob, Undone};
pub use fork::ForkRange;
pub use query::{Queried, QueryError};

#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Projection(#[from] ProjectionError),
    /// A remote's part of an operation: a lazy store's catalog or fetch.
    #[error(transparent)]
    Sync(#[from] crate::sync::SyncError),
    /// The model's provider names a variable for its key, and it is not set.
    #[error("{var} is not set: it holds the key for {model}")]
    MissingKey { var: String, model: String },
    /// The caller was asked before a large summary call and said no.
    #[error("not sent: nothing was written")]
    Declined,
    /// The user's `hooks.pre_compact` (`hook`) failed: `why` says how (an exit status, a
    /// timeout). Nothing was written.
    #[error("the {hook} hook {why}: nothing was written")]
    Vetoed {
        hook: &'static str,
        #[source]
        why: compact::HookFailure,
    },
    /// The model's summary is estimated no smaller than the range it would replace, and
    /// `--force` was not given. Nothing was written.
    #[error(
        "the summary by {model} (~{summary} tokens) is not smaller than the range it replaces (~{replaced} tokens): nothing was written"
    )]
    SummaryNotSmaller { model: String, summary: u64, replaced: u64 },
    /// A config edit that cannot be made in the layer's file.
    #[error("{origin}: {source}")]
    ConfigEdit { origin: String, source: crate::config::EditError },
    /// A model name that does not resolve to a provider that can be called.
    #[error(transparent)]
    Model(#[from] crate::llm::ModelError),
    #[error("{}: {source}", path.display())]
    File { path: std::path::PathBuf, source: std::io::Error },
    #[error("{0}")]
    Invalid(String),
    /// `compact --undo` found no compaction in force: not a mistake, so callers say so and
    /// succeed, as git does when there is nothing to do.
    #[error("nothing to undo: no compaction in force in this conversation")]
    NothingToUndo,
    /// `compact --undo PREFIX`: no compaction in force has an id starting with `prefix`;
    /// `in_force` lists those that are, oldest first.
    #[error("no compaction `{prefix}` in force (in force: {})", listed(in_force))]
    NoSuchCompaction { prefix: String, in_force: Vec<String> },
    /// `compact --undo PREFIX`: several compactions in force start with `prefix`.
    #[error("`{prefix}` names {} compactions in force: {}", candidates.len(), listed(candidates))]
    AmbiguousCompaction { prefix: String, candidates: Vec<String> },
}

/// Ids in an error message: comma-separated, or "none".
fn listed(ids: &[String]) -> String {
    if ids.is_empty() { "none".into() } else { ids.join(", ") }
}

pub type Result<T, E = OpsError> = std::result::Result<T, E>;

/// The configuration for conversation `events` in `store`: the caller's `base` layers
/// (defaults, user file, command line) plus the store's `convo.toml` and the conversation's
/// `config` events. Those two are content: they may name providers only when the user
/// trusts the store (`store_trusted`, the caller's decision); what they may not set is left
/// out and listed in [`Resolved::ignored`].
pub fn resolve_config(store: &Store, events: &[Event], base: &[Layer], store_trusted: bool) -> Result<Resolved> {
    let mut layers = base.to_vec();
    if let Some(bytes) = store.head_file(STORE_CONFIG)? {
        let text = String::from_utf8_lossy(&bytes);
        layers.push(config::parse_layer(Source::Store, STORE_CONFIG, &text)?);
    }
    layers.extend(config::conversation_layers(events)?);
    Ok(Resolved::with_trust(layers, store_trusted)?)
}

/// The store's shared, committed configuration file.
pub const STORE_CONFIG: &str = layout::STORE_CONFIG;

/// Write a file only its owner can read (mode 0600): created so, and narrowed to it when it
/// already existed with a wider mode, before any byte is written.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    open_private(path)?.write_all(bytes)
}

/// [`write_private`]'s file, opened for the caller to stream into.
pub fn open_private(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}
