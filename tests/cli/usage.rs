//! `usage`: the tokens the agents recorded, summed as a script sums the source files, and
//! their cost by the price table, checked by hand.

use std::path::Path;

use crate::common::TestEnv;

const SONNET: &str = "../shared/corpus/claude-code/ccviewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl";
const OPUS: &str = "../shared/corpus-current/claude-code/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl";

/// (input, output, cache read, cache write) of a Claude Code file (a path from the crate's
/// root), each API message once by its last line, as a script over the file computes them.
pub(crate) fn source_tokens(file: &str) -> [u64; 4] {
    let mut last = std::collections::HashMap::new();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    for line in text.lines() {
        let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if let (Some(id), Some(usage)) = (record.pointer("/message/id"), record.pointer("/message/usage")) {
            last.insert(id.to_string(), usage.clone());
        }
    }
    let mut total = [0; 4];
    for usage in last.values() {
        let keys = ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"];
        for (t, key) in total.iter_mut().zip(keys) {
            *t += usage[key].as_u64().unwrap_or(0);
        }
    }
    total
}

#[test]
fn usage_sums_what_the_agents_recorded_and_prices_it_by_the_table() {
    let env = TestEnv::new();
    for file in [SONNET, OPUS] {
        env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(file).to_str().unwrap()]).ok();
    }
    let report: serde_json::Value =
        serde_json::from_str(env.run(&["usage", "--by", "model", "--format", "json"]).ok()).unwrap();
    let rows = report["rows"].as_array().unwrap();
    let row = |model: &str| rows.iter().find(|r| r["key"]["model"] == model).unwrap().clone();
    let tokens = |r: &serde_json::Value| {
        ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"]
            .map(|k| r["usage"][k].as_u64().unwrap_or(0))
    };
    let sonnet = row("claude-sonnet-4-20250514");
    let opus = row("claude-opus-4-6");
    assert_eq!(tokens(&sonnet), source_tokens(SONNET));
    assert_eq!(tokens(&opus), source_tokens(OPUS));

    // By hand: claude-sonnet-4 at $3 input, $15 output, $0.30 cache read, $3.75 cache write
    // per million tokens.
    let [i, o, r, w] = source_tokens(SONNET).map(|n| n as f64);
    let by_hand = (i * 3.0 + o * 15.0 + r * 0.30 + w * 3.75) / 1e6;
    assert!((sonnet["cost_usd"].as_f64().unwrap() - by_hand).abs() < 1e-9, "{sonnet}");
    // A model the table does not know: tokens, no cost, named; the total says it leaves it out.
    assert!(opus["cost_usd"].is_null(), "{opus}");
    assert_eq!(report["total"]["unpriced_models"], serde_json::json!(["claude-opus-4-6"]));

    // Priced in config, by hand again: $5 input, $25 output, $0.50 cache read, $6.25 write.
    let prices = "[prices.\"claude-opus-4-6\"]\ninput = 5.0\noutput = 25.0\ncache_read = 0.5\ncache_write = 6.25\n";
    std::fs::create_dir_all(env.home().join(".config/convo")).unwrap();
    std::fs::write(env.home().join(".config/convo/config.toml"), prices).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(env.run(&["usage", "--by", "model", "--format", "json"]).ok()).unwrap();
    let opus =
        report["rows"].as_array().unwrap().iter().find(|r| r["key"]["model"] == "claude-opus-4-6").unwrap().clone();
    let [i, o, r, w] = source_tokens(OPUS).map(|n| n as f64);
    let by_hand = (i * 5.0 + o * 25.0 + r * 0.50 + w * 6.25) / 1e6;
    assert!((opus["cost_usd"].as_f64().unwrap() - by_hand).abs() < 1e-9, "{opus}");
    assert_eq!(report["total"]["unpriced_models"], serde_json::json!([]));

    // The table, by day, fitted and totalled.
    insta::assert_snapshot!(env.run(&["usage", "--since", "2025-09-07", "--until", "2026-03-01"]).ok(), @r#"
    day         input  output  cache read  cache write   cost
    2025-09-07    129   3,629     324,259       47,747  $0.33
    2026-02-16     23      88     239,606        9,036  $0.18
    total         152   3,717     563,865       56,783  $0.51
    prices of 2025-11-01, US$ per million tokens; config's prices."MODEL" sets others
    "#);
    let bad = env.run(&["usage", "--since", "yesterday-ish"]);
    assert!(bad.fails_with(3).contains("hint: e.g. --since 2h, --since 3days, --since 2026-11-01"), "{}", bad.stderr);
}

#[test]
fn list_show_and_the_html_page_say_what_was_used() {
    let env = TestEnv::new();
    let id = env
        .run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(SONNET).to_str().unwrap()])
        .ok()
        .trim()
        .to_owned();
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(env.run(&["list", "--usage", "--format", "json"]).ok()).unwrap();
    let used: u64 = rows.iter().map(|r| r["tokens_used"].as_u64().unwrap()).sum();
    assert_eq!(used, source_tokens(SONNET).iter().sum::<u64>(), "every conversation of the import, each message once");
    let listed = env.run(&["list", "--usage"]).ok().to_owned();
    assert_eq!(listed.matches(" used").count(), 3, "{listed}");

    // A usage line closes each turn whose model calls recorded one.
    let shown = env.run(&["show", &id, "--verbose", "--brief"]).ok().to_owned();
    let lines: Vec<&str> = shown.lines().filter(|l| l.starts_with("usage: ")).collect();
    insta::assert_snapshot!(lines.join("\n"), @"
    usage: 64 in · 2,003 out · 190,261 cache read · 26,074 cache write (claude-sonnet-4-20250514)
    ");
    assert!(!env.run(&["show", &id, "--brief"]).ok().contains("usage: "));

    let page = env.run(&["export", &id, "--format", "html"]).ok().to_owned();
    assert!(page.contains("<dt>Usage</dt><dd>64 in · 2,003 out · 190,261 cache read · 26,074 cache write</dd>"));
}

const CODEX_039: &str = "../shared/corpus-current/codex/vibecodingtracker__codex-0.39.jsonl";

/// (input, output, cache read, reasoning) of a Codex rollout (a path from the crate's root),
/// as a script over the file computes them: each `token_count` whose running total moved
/// counts its `last_token_usage`, input less the cached part. Also the last running total,
/// converted the same way, which the calls must add up to.
fn codex_source_tokens(file: &str) -> ([u64; 4], [u64; 4]) {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let convert = |u: &serde_json::Value| {
        let n = |k: &str| u[k].as_u64().unwrap_or(0);
        [
            n("input_tokens") - n("cached_input_tokens"),
            n("output_tokens"),
            n("cached_input_tokens"),
            n("reasoning_output_tokens"),
        ]
    };
    let (mut sum, mut total) = ([0; 4], serde_json::Value::Null);
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let info = &record["payload"]["info"];
        if record["payload"]["type"] != "token_count" || info.is_null() || info["total_token_usage"] == total {
            continue;
        }
        total = info["total_token_usage"].clone();
        for (s, n) in sum.iter_mut().zip(convert(&info["last_token_usage"])) {
            *s += n;
        }
    }
    (sum, convert(&total))
}

#[test]
fn codex_usage_sums_its_token_counts_and_prices_them_by_the_table() {
    let env = TestEnv::new();
    for file in [CODEX_039, crate::follow::CODEX_0169] {
        env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(file).to_str().unwrap()]).ok();
    }
    let report: serde_json::Value =
        serde_json::from_str(env.run(&["usage", "--by", "model", "--format", "json"]).ok()).unwrap();
    let row =
        |model: &str| report["rows"].as_array().unwrap().iter().find(|r| r["key"]["model"] == model).unwrap().clone();
    let tokens = |r: &serde_json::Value| {
        ["input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"]
            .map(|k| r["usage"][k].as_u64().unwrap())
    };
    for (file, model) in [(CODEX_039, "aide-gpt-5"), (crate::follow::CODEX_0169, "gpt-5.1-codex")] {
        let (sum, last_total) = codex_source_tokens(file);
        assert_eq!(sum, last_total, "{file}: the counted calls add up to Codex's last total");
        assert_eq!(tokens(&row(model)), sum, "{file}: input, output, cache read, reasoning");
    }

    // By hand: gpt-5.1-codex at $1.25 input, $10 output, $0.125 cached input per million
    // tokens (reasoning is part of the output).
    let [i, o, r, _] = codex_source_tokens(crate::follow::CODEX_0169).0.map(|n| n as f64);
    let by_hand = (i * 1.25 + o * 10.0 + r * 0.125) / 1e6;
    let codex = row("gpt-5.1-codex");
    assert!((codex["cost_usd"].as_f64().unwrap() - by_hand).abs() < 1e-12, "{codex} vs {by_hand}");
    insta::assert_snapshot!(env.run(&["usage", "--by", "model"]).ok(), @r#"
    model            input  output  cache read  cache write    cost
    aide-gpt-5     133,698  12,551     136,832            0       -
    gpt-5.1-codex    2,192     355      20,608            0   $0.01
    total          135,890  12,906     157,440            0  $0.01+
    no price for aide-gpt-5: their tokens count, their cost does not (`+`)
    prices of 2025-11-01, US$ per million tokens; config's prices."MODEL" sets others
    "#);
}

/// The Codex the agent tests pin, run for real against the recording server, with each
/// answer reporting its own counts: what convo sums from the rollout is what the server
/// reported, whichever records (and in whatever order) that Codex wrote them in.
#[test]
fn a_real_codex_session_counts_what_its_model_reported() {
    use crate::common::agents::{Recorder, agents, codex_config, run_agent};
    let Some(agents) = agents() else { return };
    let env = TestEnv::new();
    let proj = crate::handoff::project(&env);
    let counts = [(5200, 4096, 180, 120), (5600, 5120, 90, 64), (5900, 5504, 60, 0)];
    let usage = |(i, c, o, r): (u64, u64, u64, u64)| serde_json::json!({"input_tokens": i, "cached_tokens": c, "output_tokens": o, "reasoning_tokens": r});
    let script = serde_json::json!([
        {"tool": {"name": "exec_command", "input": {"cmd": "cat notes.txt"}}, "usage": usage(counts[0])},
        {"tool": {"name": "exec_command", "input": {"cmd": "wc -c notes.txt"}}, "usage": usage(counts[1])},
        {"text": "The file says hello.", "usage": usage(counts[2])},
    ]);
    let rec = Recorder::start(&env.root, "usage", Some(&script));
    codex_config(&env.home(), rec.port);
    let run = run_agent(&agents.codex, &env.home(), &proj, rec.port, &["exec", "--skip-git-repo-check", "notes?"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    drop(rec);
    let rollout = crate::handoff::session_file(&env.home().join(".codex/sessions"), "rollout-");
    env.run(&["import", rollout.to_str().unwrap()]).ok();
    let report: serde_json::Value =
        serde_json::from_str(env.run(&["usage", "--by", "model", "--format", "json"]).ok()).unwrap();
    let reported = counts.iter().fold([0; 4], |t, (i, c, o, r)| [t[0] + i - c, t[1] + o, t[2] + c, t[3] + r]);
    let row = &report["rows"][0];
    assert_eq!(row["key"]["model"], "gpt-5.1-codex", "{report}");
    let kept = ["input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"]
        .map(|k| row["usage"][k].as_u64().unwrap());
    assert_eq!(kept, reported, "{report}");
}

/// (input, output, cache read, cache write) of every call the store's events recorded at or
/// after `since`, each API message once by its last event: what `usage` must say whether it
/// read the events or its tally.
fn stored_tokens_since(env: &TestEnv, since: &str) -> [u64; 4] {
    let since = chrono::DateTime::parse_from_rfc3339(since).unwrap();
    let rows: Vec<serde_json::Value> = serde_json::from_str(env.run(&["list", "--format", "json"]).ok()).unwrap();
    let mut total = [0; 4];
    for row in &rows {
        let mut calls: Vec<serde_json::Value> = Vec::new();
        let mut at: std::collections::HashMap<String, usize> = Default::default();
        for line in env.run(&["show", row["id"].as_str().unwrap(), "--format", "jsonl"]).ok().lines() {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            if event.get("usage").is_none() {
                continue;
            }
            match event["message_id"].as_str().and_then(|m| at.get(m).copied()) {
                Some(i) => calls[i] = event,
                None => {
                    if let Some(m) = event["message_id"].as_str() {
                        at.insert(m.to_owned(), calls.len());
                    }
                    calls.push(event);
                }
            }
        }
        for call in calls {
            if chrono::DateTime::parse_from_rfc3339(call["ts"].as_str().unwrap()).unwrap() < since {
                continue;
            }
            let keys = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"];
            for (t, key) in total.iter_mut().zip(keys) {
                *t += call["usage"][key].as_u64().unwrap_or(0);
            }
        }
    }
    total
}

fn usage_total(env: &TestEnv, args: &[&str]) -> [u64; 4] {
    let report: serde_json::Value =
        serde_json::from_str(env.run(&[&["usage", "--format", "json"], args].concat()).ok()).unwrap();
    ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"]
        .map(|k| report["total"]["usage"][k].as_u64().unwrap_or(0))
}

/// `usage` reads a tally of each conversation's calls by day and model, kept beside the
/// store and keyed by the conversation's tree: an append, a `git reset`, a torn or deleted
/// file each give the answer the events give, never the tally's old one.
#[test]
fn the_usage_tally_follows_head_whatever_moved_it() {
    let env = TestEnv::new();
    for file in [SONNET, CODEX_039] {
        env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(file).to_str().unwrap()]).ok();
    }
    let epoch = "1970-01-01T00:00:00Z";
    let before = usage_total(&env, &[]);
    assert_eq!(before, stored_tokens_since(&env, epoch));
    let tally = env.store.join(".git/convo/usage");
    let lines = std::fs::read_to_string(&tally).unwrap().lines().count();
    assert_eq!(lines, 4, "one line per conversation (a main one, two subagents, a Codex session)");
    usage_total(&env, &[]);
    assert_eq!(std::fs::read_to_string(&tally).unwrap().lines().count(), lines, "a warm read writes nothing");

    let id = env.run(&["new", "--title", "priced"]).ok().trim().to_owned();
    let call = r#"{"type":"assistant","content":"x","model":"gpt-5","usage":{"input_tokens":1000,"output_tokens":7}}"#;
    env.run_stdin(&["append", &id], &format!("{{\"type\":\"user\",\"content\":\"hi\"}}\n{call}\n")).ok();
    let after = usage_total(&env, &[]);
    assert_eq!(after, [before[0] + 1000, before[1] + 7, before[2], before[3]]);
    assert_eq!(after, stored_tokens_since(&env, epoch));

    env.git(&["reset", "-q", "--hard", "HEAD~1"]);
    assert_eq!(usage_total(&env, &[]), stored_tokens_since(&env, epoch), "after a reset");
    std::fs::write(&tally, "garbage\t\n01ABC\tdeadbeef\t[{\"day\"").unwrap();
    assert_eq!(usage_total(&env, &[]), stored_tokens_since(&env, epoch), "a torn file");
    std::fs::remove_file(&tally).unwrap();
    assert_eq!(usage_total(&env, &["--by", "week,model"]), stored_tokens_since(&env, epoch), "no file");
}

/// A `--since` inside a day counts that day's calls each at its own time (the events of the
/// conversations with calls that day are read); whole days come from the tally.
#[test]
fn a_range_that_cuts_a_day_counts_each_call_at_its_time() {
    let env = TestEnv::new();
    for file in [SONNET, OPUS, CODEX_039] {
        env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(file).to_str().unwrap()]).ok();
    }
    // Between the calls of each session's day.
    for since in ["2025-09-07T09:52:57Z", "2025-09-19T09:06:54Z", "2026-02-16T18:51:17Z"] {
        let expected = stored_tokens_since(&env, since);
        assert_eq!(usage_total(&env, &["--since", since]), expected, "--since {since}");
        assert!(expected != stored_tokens_since(&env, "1970-01-01T00:00:00Z"), "{since} leaves calls out");
    }
}

const GEMINI: &str = "../shared/corpus-current/gemini-cli/vibecodingtracker__gemini.jsonl";

/// Per model, (input less cached, output with thoughts, cached, thoughts) of a Gemini CLI
/// session file, each message once by its last record, as a script over the file sums them.
fn gemini_source_tokens(file: &str) -> std::collections::BTreeMap<String, [u64; 4]> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let mut last = std::collections::HashMap::new();
    for line in text.lines() {
        let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if record["type"] == "gemini" && record["tokens"].is_object() {
            last.insert(
                record["id"].to_string(),
                (record["model"].as_str().unwrap().to_owned(), record["tokens"].clone()),
            );
        }
    }
    let mut sums = std::collections::BTreeMap::new();
    for (model, t) in last.into_values() {
        let n = |k: &str| t[k].as_u64().unwrap_or(0);
        let sum: &mut [u64; 4] = sums.entry(model).or_default();
        for (s, add) in
            sum.iter_mut().zip([n("input") - n("cached"), n("output") + n("thoughts"), n("cached"), n("thoughts")])
        {
            *s += add;
        }
    }
    sums
}

#[test]
fn gemini_cli_usage_sums_its_messages_tokens_and_prices_them_by_the_table() {
    let env = TestEnv::new();
    env.run(&["import", Path::new(env!("CARGO_MANIFEST_DIR")).join(GEMINI).to_str().unwrap()]).ok();
    let report: serde_json::Value =
        serde_json::from_str(env.run(&["usage", "--by", "model", "--format", "json"]).ok()).unwrap();
    let sums = gemini_source_tokens(GEMINI);
    assert_eq!(sums.len(), 2, "{sums:?}");
    // By hand, US$ per million tokens: gemini-3-flash-preview $0.50 input, $3 output, $0.05
    // cached; gemini-3.1-pro-preview $2, $12, $0.20 (thoughts bill as output).
    let prices = [("gemini-3-flash-preview", [0.5, 3.0, 0.05]), ("gemini-3.1-pro-preview", [2.0, 12.0, 0.2])];
    for (model, [pi, po, pc]) in prices {
        let row = report["rows"].as_array().unwrap().iter().find(|r| r["key"]["model"] == model).expect(model);
        let kept = ["input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"]
            .map(|k| row["usage"][k].as_u64().unwrap_or(0));
        assert_eq!(kept, sums[model], "{model}: input, output, cache read, reasoning");
        let [i, o, c, _] = sums[model].map(|n| n as f64);
        let by_hand = (i * pi + o * po + c * pc) / 1e6;
        assert!((row["cost_usd"].as_f64().unwrap() - by_hand).abs() < 1e-12, "{row} vs {by_hand}");
    }
}
