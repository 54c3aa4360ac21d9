mod input;

use std::path::PathBuf;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Append events to a conversation, as one commit
///
/// Reads JSONL events from stdin (or --file), one object per line, in the schema `convo show
/// --format jsonl` prints; `id` and `ts` are filled in when missing. Or give one event with a
/// flag. Input is checked whole before anything is written: one bad line and the store is
/// left exactly as it was.
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("source").multiple(false))]
pub struct Args {
    /// Conversation id or title, or a unique prefix of either (default: the active one)
    #[arg(add = clap_complete::ArgValueCandidates::new(crate::cli::conversation_candidates))]
    id: Option<String>,
    /// Read JSONL events from FILE instead of stdin
    #[arg(long, short, value_name = "FILE", group = "source")]
    file: Option<PathBuf>,
    /// A user message (starts a new turn)
    #[arg(long, value_name = "TEXT", group = "source", allow_hyphen_values = true)]
    user: Option<String>,
    /// An assistant message
    #[arg(long, value_name = "TEXT", group = "source", allow_hyphen_values = true)]
    assistant: Option<String>,
    /// The model's reasoning
    #[arg(long, value_name = "TEXT", group = "source", allow_hyphen_values = true)]
    reasoning: Option<String>,
    /// A system prompt
    #[arg(long, value_name = "TEXT", group = "source", allow_hyphen_values = true)]
    system: Option<String>,
    /// A tool call to the tool NAME (with --args)
    #[arg(long, value_name = "NAME", group = "source", requires = "args")]
    tool_call: Option<String>,
    /// The tool call's arguments, as JSON
    #[arg(long, value_name = "JSON", requires = "tool_call")]
    args: Option<String>,
    /// The tool call's id (default: generated)
    #[arg(long, value_name = "ID", requires = "tool_call")]
    call_id: Option<String>,
    /// A tool result answering the call CALL_ID (with --content)
    #[arg(long, value_name = "CALL_ID", group = "source", requires = "content")]
    tool_result: Option<String>,
    /// The tool result's output
    #[arg(long, value_name = "TEXT", requires = "tool_result", allow_hyphen_values = true)]
    content: Option<String>,
    /// Mark the tool result as an error
    #[arg(long, requires = "tool_result")]
    error: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let query = args.id.clone();
    // A flag's event is checked before the store is touched; lines are checked as they are
    // read, and a bad one leaves the store exactly as it was (what was written is removed).
    let (mut input, label) = input::read(ctx, args)?;
    // The first batch (most inputs whole) is read before the store is opened, so that bad
    // input is reported as such wherever it is run.
    let first = match &mut input {
        input::Input::Lines(lines) => Some(lines.next_batch().transpose()?),
        input::Input::Events(_) => None,
    };
    let store = ctx.open_store()?;
    let lock = store.lock()?;
    let id = store.resolve_or_active(query.as_deref())?;
    let refused = |e| CommandError::append(&label, e);
    let mut appending = store.begin_append(&lock, &id, &ctx.clock).map_err(refused)?;
    let read = (|| match input {
        input::Input::Events(drafts) => store.append_more(&mut appending, drafts, &ctx.clock).map_err(refused),
        input::Input::Lines(mut lines) => {
            if let Some(Some(drafts)) = first {
                store.append_more(&mut appending, drafts, &ctx.clock).map_err(refused)?;
            }
            while let Some(drafts) = lines.next_batch() {
                store.append_more(&mut appending, drafts?, &ctx.clock).map_err(refused)?;
            }
            if appending.is_empty() {
                return Err(lines.no_events());
            }
            Ok(())
        }
    })();
    if let Err(e) = read {
        store.discard_append(&appending);
        return Err(e);
    }
    let appended = store.finish_append(&lock, appending, &ctx.clock).map_err(refused)?;
    drop(lock);
    ctx.ui.committed(Some(&id), &appended);
    for added in &appended.added {
        let turn = added.turn.map(|t| format!("turn {t}")).unwrap_or_else(|| "-".into());
        let line = format!(" {turn:>9}  {:<11} {} {}", added.kind, added.id, added.detail);
        ctx.ui.status(line.trim_end());
    }
    ctx.auto_compact(&store, &id, None)
}
