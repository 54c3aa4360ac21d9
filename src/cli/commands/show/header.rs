//! `show`'s header: title, id, counts, where it came from, and with `--compacted` the view's
//! size.

use convo::render;

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// `show`'s header, and with `compacted` the compacted view's size.
pub(super) fn header(
    ctx: &Ctx,
    store: &convo::store::Store,
    id: &str,
    events: &[convo::event::Event],
    compacted: bool,
    out: &mut crate::cli::ui::Output,
) -> Result<(), CommandError> {
    let summary = store.summary(id)?;
    // What the shown ids' shortest unique prefixes depend on: each one's neighbours.
    let mut near = vec![summary.id.clone()];
    near.extend(summary.subagent_of.clone());
    near.extend(summary.forked_from.as_ref().map(|f| f.id.clone()));
    for id in near.clone() {
        near.extend(store.id_neighbours(&id)?);
    }
    let ids = render::ShortIds::new(near);
    let title_of = |id: &str| store.meta(id).ok().and_then(|m| m.title);
    render::header(out.writer(), &summary, &ids, &title_of, ctx.ui.theme)?;
    if compacted {
        // From what the provider reported where it did (`calibrated`), else chars/4.
        let (n, basis) = convo::ops::query::view_estimate(events)?;
        let line = format!("compacted view: ~{} tokens ({})", render::thousands(n), basis.label());
        writeln!(out.writer(), "{}", ctx.ui.theme.dim(&line))?;
    }
    Ok(())
}
