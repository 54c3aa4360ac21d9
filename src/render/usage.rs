//! `usage`: a table of token counts and cost, one row per group and a total, fitted to a
//! width (the widest key column is cut), and the price table's date under it.

use std::io::{self, Write};

use crate::event::Usage;

use super::{escape_line, fit, fit::columns, thousands};

/// One row: what it groups (shown as given), its tokens, its cost (`None`: nothing of it
/// priced), and whether some of its models have no price.
pub struct Line<'a> {
    pub keys: Vec<String>,
    pub usage: &'a Usage,
    pub cost: Option<f64>,
    pub partly_priced: bool,
}

/// The table: `heads` names the key columns, `rows` then `total`, then the models with no
/// price and the table's date.
pub fn table(
    out: &mut dyn Write,
    heads: &[&str],
    rows: &[Line<'_>],
    total: &Line<'_>,
    unpriced: &[String],
    prices_date: &str,
    width: Option<usize>,
) -> io::Result<()> {
    let numbers = |row: &Line<'_>| -> Vec<String> {
        let n = |v: Option<u64>| thousands(v.unwrap_or(0));
        let cost = match (row.cost, row.partly_priced) {
            (Some(c), false) => format!("${c:.2}"),
            (Some(c), true) => format!("${c:.2}+"),
            (None, _) => "-".to_owned(),
        };
        let u = row.usage;
        vec![n(u.input_tokens), n(u.output_tokens), n(u.cache_read_tokens), n(u.cache_write_tokens), cost]
    };
    let mut lines: Vec<(Vec<String>, Vec<String>)> = vec![(
        heads.iter().map(|h| h.to_string()).collect(),
        ["input", "output", "cache read", "cache write", "cost"].map(str::to_owned).to_vec(),
    )];
    for row in rows {
        lines.push((row.keys.iter().map(|k| escape_line(k).into_owned()).collect(), numbers(row)));
    }
    lines.push((total.keys.clone(), numbers(total)));

    let key_widths: Vec<usize> =
        (0..heads.len()).map(|i| lines.iter().map(|(k, _)| columns(&k[i])).max().unwrap_or(0)).collect();
    let number_widths: Vec<usize> = (0..5).map(|i| lines.iter().map(|(_, n)| n[i].len()).max().unwrap_or(0)).collect();
    // The widest key column (titles, project URLs) takes what is left; dates and models
    // are short.
    let widest = (0..key_widths.len()).max_by_key(|&i| key_widths[i]).unwrap_or(0);
    let fixed: usize = key_widths.iter().enumerate().filter(|(i, _)| *i != widest).map(|(_, w)| w + 2).sum::<usize>()
        + number_widths.iter().map(|w| w + 2).sum::<usize>();
    let room = match (width, key_widths.get(widest)) {
        (Some(w), Some(&natural)) => natural.min(w.saturating_sub(fixed + 2).max(8)),
        (_, natural) => natural.copied().unwrap_or(0),
    };
    for (keys, numbers) in &lines {
        let mut line = String::new();
        for (i, key) in keys.iter().enumerate() {
            let w = if i == widest { room } else { key_widths[i] };
            let shown = if i == widest { fit(key, Some(w)) } else { key.clone() };
            line += &shown;
            line += &" ".repeat(w.saturating_sub(columns(&shown)) + 2);
        }
        for (number, w) in numbers.iter().zip(&number_widths) {
            line += &format!("{number:>w$}  ");
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    if !unpriced.is_empty() {
        writeln!(
            out,
            "no price for {}: their tokens count, their cost does not (`+`)",
            escape_line(&unpriced.join(", "))
        )?;
    }
    writeln!(out, "prices of {prices_date}, US$ per million tokens; config's prices.\"MODEL\" sets others")
}
