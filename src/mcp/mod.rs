//! `convo mcp`: the store as a Model Context Protocol server over stdio, so any agent can
//! list, search, read, append to, compact, fork and follow the history of conversations.
//!
//! Built on the official Rust SDK (`rmcp`): it frames JSON-RPC, negotiates the protocol,
//! answers malformed requests with JSON-RPC errors and derives each tool's input schema
//! from its parameter struct ([`tools`]). [`gate`] answers what the SDK would not (a line
//! that is not JSON, a request before `initialize`). This module only wires tools to that
//! work.
//!
//! What the server needs from the program running it (the store's location, the user's
//! configuration, a clock, the user's hooks around a compaction) comes through [`Host`]:
//! the library reads no environment and runs no process. Every call opens the store
//! afresh, so what other processes wrote in between is seen, and every write takes the
//! store's lock as the CLI's do. Calls are served one at a time.

mod gate;
pub mod tools;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

use crate::clock::Clock;
use crate::config::Resolved;
use crate::event::Event;
use crate::ops::Planned;
use crate::ops::plan::Conversation;
use crate::store::{Appended, Store, StoreError, Summary};

/// A tool call that failed: said to the agent as the tool's result (`isError`), with the
/// hint a person would get from the CLI.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
    pub hint: Option<String>,
}

impl Failure {
    pub fn input(message: impl Into<String>) -> Failure {
        Failure { message: message.into(), hint: None }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Failure {
        self.hint = Some(hint.into());
        self
    }

    fn text(&self) -> String {
        match &self.hint {
            Some(hint) => format!("error: {}\nhint: {hint}", self.message),
            None => format!("error: {}", self.message),
        }
    }
}

impl<E: std::error::Error + 'static> From<E> for Failure {
    fn from(e: E) -> Failure {
        let store = (&e as &dyn std::any::Any).downcast_ref::<StoreError>();
        let hint = store.and_then(store_hint);
        // The causes the message leaves out (a git error's), after it, as the CLI's
        // `Caused by:` lines give them.
        let mut message = e.to_string();
        for cause in store.map(StoreError::causes).unwrap_or_default() {
            message = format!("{message}: {cause}");
        }
        Failure { message, hint }
    }
}

/// What an agent can do about a store error, as the CLI's hints say it to a person, in
/// terms of this server's tools.
fn store_hint(e: &StoreError) -> Option<String> {
    const NEW: &str = "start one with the new_conversation tool";
    Some(match e {
        StoreError::UnknownConversation { candidates, .. } if candidates.is_empty() => NEW.into(),
        StoreError::UnknownConversation { candidates, .. } => format!(
            "recent conversations: {}; name one by id or title, or a unique prefix of either (list_conversations shows all)",
            Summary::candidates(candidates)
        ),
        StoreError::AmbiguousConversation { candidates, .. } => {
            format!(
                "candidates: {}; pass a longer prefix, the whole id or the whole title",
                Summary::candidates(candidates)
            )
        }
        StoreError::NoActiveConversation => format!("pass id, or {NEW}"),
        StoreError::Empty => NEW.into(),
        StoreError::UnknownCallId { .. }
        | StoreError::DuplicateId { .. }
        | StoreError::DuplicateCallId { .. }
        | StoreError::EmptyTitle => "nothing was written".into(),
        StoreError::UnknownRevision { .. } => "the log tool lists the conversation's commits".into(),
        _ => return None,
    })
}

/// The store for a read of conversation `query`: in a lazy store (`clone --lazy`) the
/// conversation is fetched first if it is not there yet (see `ops::lazy`).
fn fetched(host: &dyn Host, query: Option<&str>) -> Result<Store, Failure> {
    let store = host.store(false)?;
    crate::ops::lazy::ensure(&store, query, host.clock(), &mut |_| {})?;
    Ok(store)
}

/// What the server gets from the program running it.
pub trait Host: Send {
    /// The store, opened for this call; `write`: created first where the CLI would.
    fn store(&self, write: bool) -> Result<Store, Failure>;
    /// One clock for the server's life, so ids stay unique across calls.
    fn clock(&self) -> &Clock;
    /// The directory the server runs in (an agent starts it in its project), which
    /// `list_conversations`' `here` means; none when it could not be read.
    fn working_dir(&self) -> Option<&Path>;
    /// The configuration in force for a conversation with `events`.
    fn config(&self, store: &Store, events: &[Event]) -> Result<Resolved, Failure>;
    /// After an append: what `convo append` does next (with `compaction.auto.enabled`, compact
    /// when the conversation nears its model's window). Never fails the append, which has
    /// landed.
    fn after_append(&self, store: &Store, id: &str);
    /// Append a planned compaction (no model is called: the plan has its summary), with the
    /// user's hooks around it.
    fn compact(
        &self,
        store: &Store,
        id: &str,
        conversation: Conversation,
        config: &Resolved,
        planned: Planned,
    ) -> Result<(Appended, Planned), Failure>;
}

/// The MCP server: the tools, over one [`Host`].
#[derive(Clone)]
pub struct Server {
    host: Arc<Mutex<Box<dyn Host>>>,
    tool_router: ToolRouter<Server>,
}

/// Serve MCP on stdin and stdout until the client closes stdin.
pub fn serve_stdio(host: Box<dyn Host>) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let server = Server::new(host);
        let pipes = gate::open();
        let running = server.serve((pipes.read, pipes.write)).await.map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        Ok(())
    })
}

impl Server {
    pub fn new(host: Box<dyn Host>) -> Server {
        Server { host: Arc::new(Mutex::new(host)), tool_router: Self::tool_router() }
    }

    /// Run `work` with the host (one call at a time), its answer as the tool's result.
    fn call(&self, work: impl FnOnce(&dyn Host) -> Result<serde_json::Value, Failure>) -> CallToolResult {
        // A call that panicked poisoned the lock; the host is still whole (each call opens
        // its own store), so later calls go on.
        let host = self.host.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match work(host.as_ref()) {
            Ok(value) => CallToolResult::structured(value),
            Err(failure) => CallToolResult::error(vec![ContentBlock::text(failure.text())]),
        }
    }
}

#[tool_router]
impl Server {
    /// List conversations, newest first: id, title, turns, events, estimated tokens; with
    /// here, only those of the project the server runs in
    #[tool(annotations(read_only_hint = true))]
    async fn list_conversations(&self, Parameters(p): Parameters<tools::ListParams>) -> CallToolResult {
        self.call(|host| tools::list(&host.store(false)?, host.working_dir(), &p))
    }

    /// Search conversations' text (decoded, not JSON): hits with conversation, turn, event
    /// type, tool and the matching line; in a lazy clone, not_fetched counts the hub's
    /// conversations not fetched, so not searched (show fetches one)
    #[tool(annotations(read_only_hint = true))]
    async fn search(&self, Parameters(p): Parameters<tools::SearchParams>) -> CallToolResult {
        self.call(|host| tools::search(&host.store(false)?, host.clock().now(), &p))
    }

    /// Show a conversation (or a turn range), raw or compacted, as text or JSON lines, a
    /// window of characters at a time (next_offset says where to go on)
    #[tool(annotations(read_only_hint = true))]
    async fn show(&self, Parameters(p): Parameters<tools::ShowParams>) -> CallToolResult {
        self.call(|host| tools::show(&fetched(host, p.id.as_deref())?, &p))
    }

    /// Read events whole by id: what a compacted view's placeholders (`[compacted …1a2b3c4d]`)
    /// and summaries (`events …a to …b`) stand for, by the id ends they name
    #[tool(annotations(read_only_hint = true))]
    async fn show_events(&self, Parameters(p): Parameters<tools::ShowEventsParams>) -> CallToolResult {
        self.call(|host| tools::show_events(&fetched(host, p.id.as_deref())?, &p))
    }

    /// Append events to a conversation as one commit; all are checked before any is written
    #[tool(annotations(destructive_hint = false))]
    async fn append(&self, Parameters(p): Parameters<tools::AppendParams>) -> CallToolResult {
        self.call(|host| {
            let store = host.store(true)?;
            let appended = tools::append(&store, host.clock(), &p)?;
            if let Some(id) = appended["id"].as_str() {
                host.after_append(&store, id);
            }
            Ok(appended)
        })
    }

    /// Start a new, empty conversation (the active one stays as it is)
    #[tool(annotations(destructive_hint = false))]
    async fn new_conversation(&self, Parameters(p): Parameters<tools::NewParams>) -> CallToolResult {
        self.call(|host| tools::new(&host.store(true)?, host.clock(), &p))
    }

    /// Compact a conversation: append an overlay that shrinks what an LLM is sent (nothing
    /// is deleted); dry_run says what it would do
    #[tool(annotations(destructive_hint = false))]
    async fn compact(&self, Parameters(p): Parameters<tools::CompactParams>) -> CallToolResult {
        self.call(|host| tools::compact(host, &host.store(!p.dry_run.unwrap_or(false))?, &p))
    }

    /// Fork a conversation (or its last turns, or a turn range) into a new one
    #[tool(annotations(destructive_hint = false))]
    async fn fork(&self, Parameters(p): Parameters<tools::ForkParams>) -> CallToolResult {
        self.call(|host| tools::fork(&host.store(true)?, host.clock(), &p))
    }

    /// A conversation's history of commits (appends, compactions, forks), newest first
    #[tool(annotations(read_only_hint = true))]
    async fn log(&self, Parameters(p): Parameters<tools::LogParams>) -> CallToolResult {
        self.call(|host| tools::log(&fetched(host, p.id.as_deref())?, &p))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("convo", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "convo keeps LLM conversations in a git repository. A conversation is named by its \
                 id or title, or a unique prefix of either. Results are paged: follow next_offset.",
            )
    }
}
