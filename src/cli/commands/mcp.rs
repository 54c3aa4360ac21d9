use convo::clock::Clock;
use convo::config::Resolved;
use convo::event::Event;
use convo::mcp::{self, Failure, Host};
use convo::ops::Planned;
use convo::ops::plan::Conversation;
use convo::store::{Appended, Store};

use crate::cli::Ctx;
use crate::cli::capabilities::SummaryChoice;
use crate::cli::command_error::CommandError;

/// Serve the store to agents over the Model Context Protocol (stdio)
///
/// Tools: list_conversations, search, show, append, new_conversation, compact, fork, log.
/// `list_conversations` with `here` lists the conversations of the project the server runs
/// in (as `list --here`): start it in the agent's project.
/// Results stay small: listings and hits are paged or limited, text comes a window at a
/// time. Writes take the store's lock as the CLI's do, and a compaction runs your own
/// hooks.pre_compact and hooks.post_compact. The compact tool calls no model (its summary
/// is the agent's own text, or the digest); an append is followed by automatic compaction
/// as `convo append` is (compaction.auto.enabled). Logs and warnings go to stderr; stdout
/// is the protocol. Register it with an agent as `convo mcp` (see the README).
#[derive(clap::Args)]
pub struct Args {}

pub fn run(ctx: Ctx, _args: Args) -> Result<(), CommandError> {
    let working_dir = std::env::current_dir().ok();
    mcp::serve_stdio(Box::new(CliHost { ctx, working_dir }))?;
    Ok(())
}

/// The server's outside world: the CLI's own store location, configuration, clock, hooks
/// and the directory it was started in.
struct CliHost {
    ctx: Ctx,
    working_dir: Option<std::path::PathBuf>,
}

fn failure(e: CommandError) -> Failure {
    Failure { message: e.message, hint: e.hints.into_iter().next() }
}

impl Host for CliHost {
    fn store(&self, write: bool) -> Result<Store, Failure> {
        if write { self.ctx.open_store_for_write() } else { self.ctx.open_store() }.map_err(failure)
    }

    fn clock(&self) -> &Clock {
        &self.ctx.clock
    }

    fn working_dir(&self) -> Option<&std::path::Path> {
        self.working_dir.as_deref()
    }

    fn config(&self, store: &Store, events: &[Event]) -> Result<Resolved, Failure> {
        self.ctx.config(store, events).map_err(failure)
    }

    fn after_append(&self, store: &Store, id: &str) {
        // Its own failures are warnings on stderr: the append has landed.
        let _ = self.ctx.auto_compact(store, id, None);
    }

    fn compact(
        &self,
        store: &Store,
        id: &str,
        conversation: Conversation,
        config: &Resolved,
        planned: Planned,
    ) -> Result<(Appended, Planned), Failure> {
        // No question is asked (stdin is the protocol): the plan calls no model.
        let choice = SummaryChoice { yes: true, ..Default::default() };
        self.ctx.compact(store, id, conversation, config, planned, &choice).map_err(failure)
    }
}
