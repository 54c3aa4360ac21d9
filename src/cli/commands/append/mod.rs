mod input;

use std::path::PathBuf;

use convo::event::Kind;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui::CommitReport;

/// Append events to a conversation, as one commit
///
/// Reads JSONL events from stdin (or --file), one object per line, in the schema `convo show
/// --format jsonl` prints; `id` and `ts` are filled in when missing. Or give one event with a
/// flag. Input is checked whole before anything is written: one bad line and the store is
/// left exactly as it was.
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("source").multiple(false))]
pub struct Args {
    /// Conversation id, unique id prefix, or title (default: the active one)
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
    // Parse everything before touching the store, so bad input cannot create or change it.
    let (drafts, label) = input::read(ctx, args)?;
    let store = ctx.open_store()?;
    let lock = store.lock()?;
    let id = store.resolve_or_active(query.as_deref())?;
    let appended = store.append(&lock, &id, drafts, &ctx.clock).map_err(|e| CommandError::append(&label, e))?;
    drop(lock);
    ctx.ui.commit(&CommitReport {
        conversation: Some(&id),
        commit: &appended.commit,
        subject: &appended.subject,
        landed: &appended.landed,
    });
    for (event, turn) in appended.events.iter().zip(&appended.turns) {
        let turn = turn.map(|t| format!("turn {t}")).unwrap_or_else(|| "-".into());
        let detail = match &event.kind {
            Kind::ToolCall { call_id, name, .. } => format!("{name} {call_id}"),
            Kind::ToolResult { call_id, is_error, .. } => {
                format!("{call_id} {}", if *is_error { "error" } else { "success" })
            }
            _ => String::new(),
        };
        let line = format!(" {turn:>9}  {:<11} {} {detail}", event.kind.type_name(), event.id);
        ctx.ui.status(line.trim_end());
    }
    ctx.auto_compact(&store, &id, None)
}
