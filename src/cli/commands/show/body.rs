//! `show --format openai|anthropic`: the body `query` would send.

use convo::projection;

use super::ShowFormat;
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// The request body `query` would send: always the compacted view, which is what a provider
/// must get (valid pairs and alternation).
pub(super) fn provider_body(
    ctx: &Ctx,
    store: &convo::store::Store,
    events: &[convo::event::Event],
    format: ShowFormat,
    model: Option<&str>,
) -> Result<(), CommandError> {
    let view: Vec<_> = projection::project(events)?.into_iter().map(|p| p.event).collect();
    let config = ctx.config(store, events)?;
    let body = convo::ops::query::provider_body(&config, &view, format == ShowFormat::Anthropic, model);
    ctx.warn_if_no_model(&body);
    let mut out = crate::cli::ui::Output::stdout();
    serde_json::to_writer_pretty(out.writer(), &body).map_err(std::io::Error::from)?;
    writeln!(out.writer())?;
    out.finish()?;
    Ok(())
}
