//! One conversation's hits as `grep` prints them: ids (`-l`), counts (`-c`), JSON lines, or
//! the hit lines under their conversation.

use std::io::{self, Write};

use convo::event::who::Who;
use convo::ops::search;
use convo::render;

use super::Format;
use crate::cli::ui::Ui;

/// What `grep` was asked to print.
pub(super) struct How {
    pub format: Format,
    pub list: bool,
    pub count: bool,
    /// Hits come with the events around them (-A, -B, --context).
    pub grouped: bool,
}

/// Print `result`, the hits of conversation `id` (titled `title`; who took part in it,
/// for JSON).
pub(super) fn print(
    w: &mut dyn Write,
    how: &How,
    (id, title, who): (&str, Option<&str>, Option<&Who>),
    result: search::Found,
    ui: &Ui,
) -> io::Result<()> {
    let named = |row: &mut serde_json::Value| {
        if let Some(who) = who {
            row["people"] = who.people.clone().into();
            row["agents"] = who.agents.clone().into();
            row["models"] = who.models.clone().into();
        }
    };
    let (count, hits) = (result.count, result.hits);
    match (how.format, how.list, how.count) {
        (Format::Text, true, _) => writeln!(w, "{id}")?,
        (Format::Text, _, true) => writeln!(w, "{id}\t{count}")?,
        (Format::Json, true, _) | (Format::Json, _, true) => {
            let mut row = serde_json::json!({ "conversation": id, "title": title });
            if how.count {
                row["count"] = count.into();
            }
            named(&mut row);
            writeln!(w, "{row}")?;
        }
        (Format::Json, false, false) => {
            for hit in &hits {
                let mut row = serde_json::to_value(hit).map_err(io::Error::from)?;
                row["conversation"] = id.into();
                row["title"] = title.into();
                named(&mut row);
                writeln!(w, "{row}")?;
            }
        }
        (Format::Text, false, false) => {
            let shown: Vec<render::search::Hit> = hits
                .iter()
                .map(|h| render::search::Hit {
                    turn: h.turn,
                    kind: &h.kind,
                    tool: h.tool.as_deref(),
                    line: &h.line,
                    matches: &h.matches,
                    context: h.context,
                    at: h.at,
                })
                .collect();
            render::search::hits(w, id, title, &shown, how.grouped, ui.width, ui.theme)?;
        }
    }
    Ok(())
}
