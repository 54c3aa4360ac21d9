use convo::render;

use super::Format;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;
use crate::cli::ui::Output;

/// List conversations: id, title, turns, events, estimated tokens, last update
///
/// The active conversation is marked with `*`. Ids are shown by the shortest prefix unique in
/// the store (any unique prefix names a conversation). A subagent's conversation (`└`) and a
/// fork (`⑂`) follow the one they came from, indented. Lines fit the terminal (or `COLUMNS`):
/// titles are cut and the least useful columns dropped; piped with no `COLUMNS`, nothing is
/// cut. Token counts are estimates (characters / 4).
#[derive(clap::Args)]
pub struct Args {
    /// Output format; `json` is an array of objects for scripts (whole ids, `subagent_of`,
    /// `forked_from`)
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    let store = ctx.open_store()?;
    let summaries = store.summaries()?;
    let active = store.active()?;
    let mut out = Output::stdout();
    match args.format {
        Format::Text => {
            let ids = render::ShortIds::new(summaries.iter().map(|s| s.id.clone()));
            render::list(out.writer(), &summaries, active.as_deref(), &ids, ctx.ui.width, ctx.ui.theme)?
        }
        Format::Json => {
            let rows: Vec<serde_json::Value> = summaries
                .iter()
                .map(|s| {
                    let mut row = serde_json::to_value(s).unwrap_or_default();
                    row["active"] = serde_json::Value::Bool(active.as_deref() == Some(s.id.as_str()));
                    // `tokens` is the raw events' chars/4: list reads no event to calibrate it.
                    row["tokens_basis"] = serde_json::Value::String("chars/4".into());
                    row
                })
                .collect();
            serde_json::to_writer_pretty(out.writer(), &rows).map_err(std::io::Error::from)?;
            writeln!(out.writer())?;
        }
    }
    out.finish()?;
    Ok(())
}
