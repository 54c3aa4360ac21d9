//! `show --turn`, `--turns`, `--event`: part of a conversation, as text or JSONL, raw or
//! compacted.

use convo::ops::select::{self, Selection};
use convo::projection;
use convo::render;

use super::header::header;
use super::{Args, ShowFormat, detail};
use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// `show` of part of a conversation (a turn, a range of turns, an event), as text or JSONL,
/// raw or compacted: the whole conversation is read, and only the part written.
pub(super) fn show_part(
    ctx: &Ctx,
    store: &convo::store::Store,
    id: &str,
    args: &Args,
    selection: &Selection,
) -> Result<(), CommandError> {
    let events = store.events(id)?;
    let view = if args.compacted { Some(projection::project(&events)?) } else { None };
    let (shown, labels) = match &view {
        Some(view) => render::marked(view),
        None => (events.clone(), Vec::new()),
    };
    let turns: Vec<Option<u64>> = match &view {
        Some(_) => labels.iter().map(|l| l.turn).collect(),
        None => convo::event::turn_numbers(&events),
    };
    let ids: Vec<&str> = shown.iter().map(|e| e.id.as_str()).collect();
    let kept = select::select(&ids, &turns, selection)?;
    if args.format == ShowFormat::Jsonl {
        let mut out = crate::cli::ui::Output::stdout();
        match &view {
            Some(view) => {
                let part: Vec<_> = kept.iter().map(|i| view[*i].clone()).collect();
                render::projected_jsonl(out.writer(), &part)?;
            }
            None => {
                for i in &kept {
                    out.writer().write_all(events[*i].to_line().as_bytes())?;
                }
            }
        }
        out.finish()?;
        return Ok(());
    }
    let mut out = ctx.ui.paged();
    header(ctx, store, id, &events, args.compacted, &mut out)?;
    render::conversation_part(out.writer(), &shown, &labels, Some(&kept), detail(args), ctx.ui.theme)?;
    out.finish()?;
    Ok(())
}
