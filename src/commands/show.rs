use convo::render;

use crate::Ctx;
use crate::command_error::CommandError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ShowFormat {
    /// For reading: turn headers, roles, indented content
    Text,
    /// The stored events, one per line; `convo append` reads it back
    Jsonl,
}

/// Print a conversation's raw events
#[derive(clap::Args)]
pub struct Args {
    /// Conversation id, unique id prefix, or title (default: the active one)
    id: Option<String>,
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    format: ShowFormat,
    /// Fold each tool call and tool result to one line
    #[arg(long)]
    brief: bool,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let id = store.resolve_or_active(args.id.as_deref())?;
    let events = store.events(&id)?;
    match args.format {
        ShowFormat::Jsonl => {
            let mut out = crate::ui::Output::stdout();
            render::jsonl(out.writer(), &events)?;
            out.finish()?;
        }
        ShowFormat::Text => {
            let summary = store.summary(&id)?;
            let mut out = ctx.ui.paged();
            render::conversation(out.writer(), &summary, &events, args.brief, ctx.ui.theme)?;
            out.finish()?;
        }
    }
    Ok(())
}
