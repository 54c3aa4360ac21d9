//! Compaction end to end: compact, --dry-run, --undo, show --compacted, diff, log, fork,
//! config, and bad input that must leave the store as it was.

use crate::common::TestEnv;

/// A conversation of `turns` turns, each: user, reasoning, a read and an edit, assistant.
fn record(env: &TestEnv, title: &str, turns: usize) -> String {
    let id = env.new_conversation(title);
    let mut jsonl = String::from("{\"type\":\"system\",\"content\":\"You are a careful engineer.\"}\n");
    for t in 0..turns {
        jsonl += &format!(
            "{{\"type\":\"user\",\"content\":\"request {t}\"}}\n\
             {{\"type\":\"reasoning\",\"content\":\"thinking about request {t} at some length\"}}\n\
             {{\"type\":\"tool_call\",\"call_id\":\"r{t}\",\"name\":\"fs_read_file\",\"arguments\":{{\"path\":\"src/f{t}.rs\"}}}}\n\
             {{\"type\":\"tool_result\",\"call_id\":\"r{t}\",\"content\":\"{}\"}}\n\
             {{\"type\":\"tool_call\",\"call_id\":\"m{t}\",\"name\":\"fs_modify_file\",\"arguments\":{{\"diff\":\"{}\"}}}}\n\
             {{\"type\":\"tool_result\",\"call_id\":\"m{t}\",\"content\":\"ok\"}}\n\
             {{\"type\":\"assistant\",\"content\":\"done with {t}\"}}\n",
            "line of code ".repeat(20),
            "+ added line ".repeat(10),
        );
    }
    env.run_stdin(&["append", &id], &jsonl).ok();
    id
}

#[test]
fn compact_from_last_to_minus_three() {
    let env = TestEnv::new();
    record(&env, "six turns", 6);
    let out = env.run(&["compact", "--from", "last", "--to", "-3"]);
    assert_eq!(
        out.ok(),
        "[01KDVDQ4K00000000000000001 dceb416] compact: \"six turns\" turns 0-2 [strip reasoning, strip tool calls] ~769 -> 477 tokens\n"
    );
    // `last` now starts after turn 2; --from alone means last.
    let out = env.run(&["compact", "--from", "--to", "-1"]);
    assert!(out.ok().contains(" turns 3-4 [strip reasoning, strip tool calls] "), "{}", out.stdout);
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();
}

#[test]
fn dry_run_prints_range_policies_and_estimates_and_writes_nothing() {
    let env = TestEnv::new();
    record(&env, "t", 4);
    let before = env.snapshot();
    let out = env.run(&["compact", "--dry-run", "--keep-last", "2"]);
    assert_eq!(
        out.ok(),
        "Would compact \"t\" turns 0-1 [strip reasoning, strip tool calls] (profile default)
  turn         now       after
     0        ~127         ~30
     1        ~127         ~30
total  ~515 -> ~320 tokens (chars/4), 37.9% smaller; nothing written (--dry-run)
"
    );
    let verbose = env.run(&["compact", "-n", "-v", "--to", "0"]);
    assert!(verbose.ok().contains("tool_call [compacted] fs_modify_file m0\n    {}\n"), "{}", verbose.stdout);
    assert!(env.snapshot() == before, "a dry run changed the store");
}

#[test]
fn bad_bounds_and_options_are_refused_and_the_store_is_unchanged() {
    let env = TestEnv::new();
    record(&env, "t", 5);
    env.new_conversation("empty");
    env.run(&["switch", "t"]).ok();
    let before = env.snapshot();
    for (args, expected) in [
        (
            vec!["compact", "--to", "20"],
            "error: --to 20: turn 20 is beyond the last turn (the conversation has turns 0-4)",
        ),
        (vec!["compact", "--from", "3", "--to", "1"], "error: --from 3: turn 3 is after --to 1 (turn 1)"),
        (
            vec!["compact", "--to", "-9"],
            "error: --to -9: 9 turns before the last is before turn 0 (the conversation has turns 0-4)",
        ),
        (
            vec!["compact", "--from", "yesterday"],
            "error: --from yesterday: expected a turn (5), turns before the last (-3), a time ago (5h, 2days) or `last`",
        ),
        (
            vec!["compact", "--to", "10days"],
            "error: --to 10days: no turn started before then (the conversation has turns 0-4)",
        ),
        (vec!["compact", "--profile", "nope"], "error: unknown profile `nope` (profiles: default, light, summarize)"),
        (vec!["compact", "empty"], "error: --from 0: the conversation has no turns yet"),
        (vec!["compact", "--summary", " "], "error: the summary is empty"),
        (vec!["compact", "--undo", "zzz"], "error: no compaction `zzz` in force (in force: none)"),
        (vec!["compact", "--undo"], "error: no compaction to undo in this conversation"),
        (
            vec!["--config", "compaction.keep_last=\"x\"", "compact"],
            "error: --config: invalid type: string \"x\", expected u64 in `compaction.keep_last`",
        ),
        (
            vec!["--config", "compaction.kep_last=1", "compact"],
            "error: --config: unknown field `kep_last`, expected one of `default_profile`, `keep_last`, `profiles`, `confirm_above_tokens`, `auto` in `compaction`",
        ),
    ] {
        let out = env.run(&args);
        let stderr = out.fails_with(3);
        assert_eq!(stderr.lines().next(), Some(expected), "{args:?}");
        assert!(stderr.lines().skip(1).all(|l| l.starts_with("hint: ")), "{stderr}");
        assert!(env.snapshot() == before, "{args:?} changed the store");
    }
}

#[test]
fn show_compacted_marks_stripped_and_synthetic_events() {
    let env = TestEnv::new();
    record(&env, "t", 3);
    env.run(&["compact", "--to", "0", "--summary", "Read f0 and edited it."]).ok();
    env.run(&["compact", "--from", "1", "--to", "1"]).ok();
    let jsonl = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    let lines: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "system");
    assert_eq!(lines[1]["content"], "[Summary of previous conversation]");
    assert_eq!(lines[1]["synthetic"], true);
    assert_eq!(lines[2]["content"], "Read f0 and edited it.");
    assert_eq!(lines[3]["content"], "request 1");
    assert!(lines[3].get("compacted_by").is_none());
    // Turn 1: reasoning stripped, both tool calls emptied, their results replaced.
    assert_eq!(lines[4]["type"], "tool_call");
    assert_eq!(lines[4]["arguments"], serde_json::json!({}));
    assert!(lines[4]["compacted_by"].is_string());
    assert_eq!(lines[5]["content"], "[compacted] fs_read_file: success");
    assert_eq!(lines.iter().filter(|l| l["type"] == "reasoning").count(), 1, "only turn 2 keeps its reasoning");
    let text = env.run(&["show", "--compacted"]).ok().to_owned();
    assert!(text.contains("user [synthetic]\n    [Summary of previous conversation]\n"), "{text}");
    assert!(text.contains("tool_result [compacted] fs_read_file r1 success\n"), "{text}");
}

#[test]
fn undo_restores_the_view_and_log_shows_it() {
    let env = TestEnv::new();
    record(&env, "t", 4);
    let raw_view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    env.run(&["compact", "--keep-last", "1"]).ok();
    assert_ne!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), raw_view);
    let out = env.run(&["compact", "--undo"]);
    assert!(out.ok().contains(" compact: \"t\" undo "), "{}", out.stdout);
    assert!(out.stdout.contains(" turns 0-2 [strip reasoning, strip tool calls] ~"), "{}", out.stdout);
    assert_eq!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), raw_view);
    let log = env.run(&["log", "--oneline"]).ok().to_owned();
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].contains("compact: \"t\" undo"), "{log}");
    assert!(lines[1].contains("compact: \"t\" turns 0-2") && lines[1].contains("(undone)"), "{log}");
    // Nothing was deleted: both events are in the raw conversation.
    let raw = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(raw.matches("\"type\":\"compaction\"").count(), 2);
}

#[test]
fn summaries_widen_over_summaries_they_overlap() {
    let env = TestEnv::new();
    record(&env, "t", 8);
    env.run(&["compact", "--from", "2", "--to", "4", "--summary", "first"]).ok();
    let out = env.run(&["compact", "--from", "3", "--to", "6", "--summary", "second"]);
    assert!(out.ok().contains(" turns 2-6 [summary by user] "), "{}", out.stdout);
    assert_eq!(out.stderr, "note: turns 3-6 widened to 2-6 to swallow a summary they overlapped\n");
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(!view.contains("\"first\""));
    assert_eq!(view.matches("[Summary of previous conversation]").count(), 1);
}

#[test]
fn diff_compares_raw_with_compacted_and_revisions() {
    let env = TestEnv::new();
    let id = record(&env, "t", 3);
    env.run(&["compact", "--to", "0"]).ok();
    let diff = env.run(&["diff", "--compacted"]).ok().to_owned();
    assert!(diff.starts_with(&format!("--- {id} raw\n+++ {id} compacted\n@@ ")), "{diff}");
    assert!(diff.contains("\n-reasoning\n-    thinking about request 0 at some length\n"), "{diff}");
    assert!(diff.contains("\n+tool_call [compacted] fs_read_file r0\n"), "{diff}");
    assert_eq!(
        env.run(&["diff", "--compacted", "--stat"]).ok(),
        "  turn           raw     compacted
     -            ~7            ~7
     0          ~127           ~30 *
     1          ~127          ~127
     2          ~127          ~127
 total          ~388          ~291  tokens (chars/4)
"
    );
    env.run(&["append", "--user", "one more"]).ok();
    let revs = env.run(&["diff", "HEAD~1", "HEAD"]).ok().to_owned();
    assert!(revs.contains("\n+── turn 3 ── "), "{revs}");
    assert!(revs.contains("\n+    one more\n"), "{revs}");
    assert_eq!(env.run(&["diff", &id, "HEAD~1"]).ok(), revs);
    assert_eq!(
        env.run(&["diff", "nope~1"]).fails_with(4).lines().next(),
        Some("error: unknown revision `nope~1`: couldn't parse revision, input=\"nope~1\"")
    );
}

#[test]
fn fork_keeps_ids_carries_compactions_and_shares_whole_segments() {
    let env = TestEnv::new();
    let source = record(&env, "source", 40);
    env.run(&["compact", "--from", "30", "--to", "35"]).ok();
    // The whole conversation: every segment is shared with the source.
    let out = env.run(&["fork", &source, "--title", "copy"]);
    let fork = out.ok().trim_start_matches('[').split(' ').next().unwrap().to_owned();
    assert!(out.stdout.contains("] fork: \"copy\" from \"source\" turn 0 (+"), "{}", out.stdout);
    let blobs = |id: &str| -> Vec<String> {
        env.git(&["ls-tree", "-r", "HEAD", &format!("conversations/{id}/events")])
            .lines()
            .map(|l| l.split_whitespace().nth(2).unwrap().to_owned())
            .collect()
    };
    assert_eq!(blobs(&fork), blobs(&source));
    assert_eq!(
        env.run(&["show", &fork, "--format", "jsonl"]).ok(),
        env.run(&["show", &source, "--format", "jsonl"]).ok()
    );

    // The last 10 turns: ids kept, the compaction of turns 30-35 carried over, the system prompt too.
    let out = env.run(&["fork", &source, "--last", "10"]);
    let tail = out.ok().trim_start_matches('[').split(' ').next().unwrap().to_owned();
    let meta: serde_json::Value =
        serde_json::from_str(&env.git(&["show", &format!("HEAD:conversations/{tail}/meta.json")])).unwrap();
    assert_eq!(meta["forked_from"], serde_json::json!({"id": source, "turn": 30}));
    assert_eq!(meta["title"], "source (fork)");
    let shown = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert!(shown.starts_with("{\"id\":"), "the fork is active");
    let source_jsonl = env.run(&["show", &source, "--format", "jsonl"]).ok().to_owned();
    for line in shown.lines() {
        assert!(source_jsonl.contains(line), "fork events are copies with their ids: {line}");
    }
    assert_eq!(shown.matches("\"type\":\"user\"").count(), 10);
    assert_eq!(shown.matches("\"type\":\"compaction\"").count(), 1);
    assert!(shown.contains("\"type\":\"system\""));
    let projected = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(projected.contains("[compacted] fs_read_file: success"), "the carried compaction applies in the fork");

    // --compact compacts the fork with the default profile.
    let out = env.run(&["fork", &source, "--last", "5", "--compact"]);
    let lines: Vec<&str> = out.ok().lines().collect();
    assert!(
        lines[1].contains("] compact: \"source (fork)\" turns 0-1 [strip reasoning, strip tool calls]"),
        "{lines:?}"
    );
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

#[test]
fn config_layers_and_where_they_come_from() {
    let env = TestEnv::new();
    record(&env, "t", 6);
    assert_eq!(env.run(&["config", "get", "compaction.keep_last"]).ok(), "3\n");
    env.run(&["config", "set", "compaction.keep_last", "4"]).ok();
    assert_eq!(env.git(&["show", "HEAD:convo.toml"]), "[compaction]\nkeep_last = 4\n");
    assert_eq!(env.git(&["log", "-1", "--format=%s"]), "config: set compaction.keep_last = 4\n");
    assert_eq!(env.run(&["config", "get", "compaction.keep_last"]).ok(), "4\n");
    env.run(&["config", "set", "--user", "compaction.default_profile", "light"]).ok();
    env.run(&["config", "set", "--conversation", "compaction.keep_last", "5"]).ok();
    assert_eq!(env.run(&["config", "get", "compaction.keep_last"]).ok(), "5\n");
    assert_eq!(env.run(&["--config", "compaction.keep_last=2", "config", "get", "compaction.keep_last"]).ok(), "2\n");
    let list = env.run(&["config", "list"]).ok().to_owned();
    let user_file = env.home().join(".config/convo/config.toml");
    assert!(list.contains(&format!("compaction.default_profile = \"light\"  # {}\n", user_file.display())), "{list}");
    assert!(list.contains("compaction.keep_last = 5  # config event "), "{list}");
    assert!(list.contains("compaction.profiles.default.tool_calls = \"strip\"  # built-in defaults\n"), "{list}");
    // The conversation's own config drives compact: light profile, keep 5 of 6 turns.
    let out = env.run(&["compact"]);
    assert!(out.ok().contains(" turns 0-0 [strip reasoning] "), "{}", out.stdout);

    // A bad key is refused before anything is written, naming the key.
    let before = env.snapshot();
    let err = env.run(&["config", "set", "compaction.kep_last", "1"]);
    assert_eq!(
        err.fails_with(3).lines().next(),
        Some(
            "error: compaction.kep_last: unknown field `kep_last`, expected one of `default_profile`, `keep_last`, `profiles`, `confirm_above_tokens`, `auto` in `compaction`"
        )
    );
    assert!(env.snapshot() == before);
    // A hand-edited file with a wrong type names file and line.
    std::fs::write(&user_file, "[compaction]\n# comment\nkeep_last = \"many\"\n").unwrap();
    let err = env.run(&["compact", "--dry-run"]);
    let first = err.fails_with(3).lines().next().unwrap().to_owned();
    assert!(first.starts_with(&format!("error: {}:3: invalid type: string \"many\"", user_file.display())), "{first}");
}

#[test]
fn tool_hints_are_recorded_so_later_config_does_not_change_the_view() {
    let env = TestEnv::new();
    record(&env, "t", 3);
    env.run(&["config", "set", "tools.fs_read_file.compaction.request", "keep"]).ok();
    env.run(&["compact", "--to", "1"]).ok();
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(view.contains("\"name\":\"fs_read_file\",\"arguments\":{\"path\":\"src/f0.rs\"}"), "{view}");
    assert!(view.contains("\"name\":\"fs_modify_file\",\"arguments\":{}"), "{view}");
    env.run(&["config", "set", "tools.fs_read_file.compaction.request", "strip"]).ok();
    assert_eq!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), view);
}
