//! Compaction end to end: compact, --dry-run, --undo, show --compacted, diff, log, fork,
//! config, and bad input that must leave the store as it was.

use crate::common::{TestEnv, conversation_dir};

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
    let out = env.run(&["compact", "-p", "strip", "--from", "last", "--to", "-3"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 d1c79cd] compact: "six turns" turns 0-2 [strip reasoning, strip tool calls] ~769 -> 462 tokens
    "#);
    // `last` now starts after turn 2; --from alone means last.
    let out = env.run(&["compact", "-p", "strip", "--from", "--to", "-1"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 36d5b6e] compact: "six turns" turns 3-4 [strip reasoning, strip tool calls] ~462 -> 258 tokens
    "#);
    assert_eq!(env.git_status(), "");
    env.run(&["fsck"]).ok();
}

#[test]
fn dry_run_prints_range_policies_and_estimates_and_writes_nothing() {
    let env = TestEnv::new();
    record(&env, "t", 4);
    let before = env.snapshot();
    let out = env.run(&["compact", "-p", "strip", "--dry-run", "--keep-last", "2"]);
    insta::assert_snapshot!(out.ok(), @r#"
    Would compact "t" turns 0-1 [strip reasoning, strip tool calls] (profile strip)
      turn         now       after
         0        ~127         ~25
         1        ~127         ~25
    total  ~515 -> ~311 tokens (chars/4), 39.6% smaller; nothing written (--dry-run)
    "#);
    let verbose = env.run(&["compact", "-p", "strip", "-n", "-v", "--to", "0"]);
    insta::assert_snapshot!("dry_run_verbose_to_0", verbose.ok());
    assert!(env.snapshot() == before, "a dry run changed the store");
}

#[test]
fn bad_bounds_and_options_are_refused_and_the_store_is_unchanged() {
    let env = TestEnv::new();
    record(&env, "t", 5);
    env.new_conversation("empty");
    env.run(&["switch", "t"]).ok();
    let before = env.snapshot();
    let mut refusals = String::new();
    for (args, expected) in [
        (
            vec!["compact", "--to", "20"],
            "error: --to 20: turn 20 is beyond the last turn (the conversation has turns 0-4)",
        ),
        (vec!["compact", "--from", "3", "--to", "1"], "error: --from 3: turn 3 is after --to 1 (turn 1)"),
        (
            vec!["compact", "--from", "yesterday"],
            "error: --from yesterday: expected a turn (5), turns before the last (-3), a time ago (5h, 2days) or `last`",
        ),
        (
            vec!["compact", "--to", "10days"],
            "error: --to 10days: no turn started before then (the conversation has turns 0-4)",
        ),
        (
            vec!["compact", "--profile", "nope"],
            "error: unknown profile `nope` (profiles: default, light, strip, summarize)",
        ),
        (vec!["compact", "empty"], "error: --from 0: the conversation has no turns yet"),
        (vec!["compact", "--summary", " "], "error: the summary is empty"),
        (vec!["compact", "--undo", "zzz"], "error: no compaction `zzz` in force (in force: none)"),
        (
            vec!["--config", "compaction.keep_last=\"x\"", "compact"],
            "error: --config: invalid type: string \"x\", expected u64 in `compaction.keep_last`",
        ),
        (
            vec!["--config", "compaction.kep_last=1", "compact"],
            "error: --config: unknown field `kep_last`, expected one of `default_profile`, `keep_last`, `profiles`, `confirm_above_tokens`, `max_summary_tokens`, `keep_args`, `auto` in `compaction`",
        ),
    ] {
        let out = env.run(&args);
        let stderr = out.fails_with(3);
        assert_eq!(stderr.lines().next(), Some(expected), "{args:?}");
        assert!(stderr.lines().skip(1).all(|l| l.starts_with("hint: ")), "{stderr}");
        assert!(env.snapshot() == before, "{args:?} changed the store");
        refusals += &format!("$ convo {}\n{}\n", args.join(" "), env.transcript(&out));
    }
    // The whole of each refusal, hints included.
    insta::assert_snapshot!("refusals", refusals);
}

#[test]
fn show_compacted_marks_stripped_and_synthetic_events() {
    let env = TestEnv::new();
    record(&env, "t", 3);
    env.run(&["compact", "--to", "0", "--summary", "Read f0 and edited it."]).ok();
    env.run(&["compact", "-p", "strip", "--from", "1", "--to", "1"]).ok();
    let jsonl = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    let lines: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "system");
    // The summary names the first and last event it stands for by their ids' ends.
    let ids: Vec<String> = env
        .run(&["show", "--format", "jsonl"])
        .ok()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].as_str().unwrap().to_owned())
        .collect();
    let tail = |id: &str| id[id.len() - 8..].to_owned();
    let turn0_end = ids.iter().position(|id| *id == lines[3]["id"]).unwrap() - 1;
    assert_eq!(
        lines[1]["content"],
        format!("[Summary of previous conversation: events …{} to …{}]", tail(&ids[1]), tail(&ids[turn0_end]))
    );
    assert_eq!(lines[1]["synthetic"], true);
    assert_eq!(lines[2]["content"], "Read f0 and edited it.");
    assert_eq!(lines[3]["content"], "request 1");
    assert!(lines[3].get("compacted_by").is_none());
    // Turn 1: reasoning stripped, the edit's diff emptied, the file's text replaced.
    assert_eq!(lines[4]["type"], "tool_call");
    // A call whose short arguments (`path`) are all it has stays whole: its placeholder would
    // say the same. The result names its event, which `show --event` prints whole.
    assert_eq!(lines[4]["arguments"], serde_json::json!({"path": "src/f1.rs"}));
    assert!(lines[4].get("compacted_by").is_none());
    let result = lines[5]["id"].as_str().unwrap();
    assert_eq!(lines[5]["content"], format!("[compacted …{}] success", tail(result)));
    assert!(lines[5]["compacted_by"].is_string());
    // The edit's `ok` is shorter than a placeholder: it stays.
    assert_eq!((&lines[6]["arguments"], &lines[7]["content"]), (&serde_json::json!({}), &serde_json::json!("ok")));
    assert!(lines[7].get("compacted_by").is_none());
    let whole = env.run(&["show", "--event", &format!("…{}", tail(result)), "--format", "jsonl"]).ok().to_owned();
    assert!(whole.contains(result) && !whole.contains("[compacted"), "{whole}");
    assert_eq!(lines.iter().filter(|l| l["type"] == "reasoning").count(), 1, "only turn 2 keeps its reasoning");
    insta::assert_snapshot!("show_compacted_jsonl", jsonl);
    insta::assert_snapshot!("show_compacted", env.run(&["show", "--compacted"]).ok());
}

#[test]
fn undo_restores_the_view_and_log_shows_it() {
    let env = TestEnv::new();
    record(&env, "t", 4);
    let raw_view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    env.run(&["compact", "-p", "strip", "--keep-last", "1"]).ok();
    assert_ne!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), raw_view);
    let out = env.run(&["compact", "--undo"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 1376864] compact: "t" undo 01KDVDWMC0 turns 0-2 [strip reasoning, strip tool calls] ~208 -> 515 tokens
    "#);
    assert_eq!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), raw_view);
    insta::assert_snapshot!("log_oneline_after_undo", env.run(&["log", "--oneline"]).ok());
    // Nothing was deleted: both events are in the raw conversation.
    let raw = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(raw.matches("\"type\":\"compaction\"").count(), 2);
}

/// `compact --undo ID` (the flag's optional value taking the conversation's id, as a
/// git habit writes it) withdraws that conversation's latest compaction, as `compact ID
/// --undo` does; a value that names a compaction in force is still the compaction.
#[test]
fn undo_takes_a_conversation_id_given_after_the_flag() {
    let env = TestEnv::new();
    let first = record(&env, "first", 4);
    env.run(&["compact", "-p", "strip", "--keep-last", "1"]).ok();
    record(&env, "second", 4);
    env.run(&["compact", "-p", "strip", "--keep-last", "1"]).ok();
    let out = env.run(&["compact", "--undo", &first]);
    assert!(out.ok_status().contains("compact: \"first\" undo"), "{}", out.stderr);
    let raw = env.run(&["show", &first, "--format", "jsonl"]).ok().to_owned();
    assert!(raw.contains("\"revokes\""), "the first conversation's compaction was not withdrawn");
    // The active one ("second") keeps its compaction; named by its id, it goes too.
    let second = env.run(&["show", "--format", "jsonl"]).ok().to_owned();
    assert!(!second.contains("\"revokes\""));
    let compaction = second
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["type"] == "compaction")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.run(&["compact", "--undo", &compaction]).ok();
    assert!(env.run(&["show", "--format", "jsonl"]).ok().contains("\"revokes\""));
}

#[test]
fn summaries_widen_over_summaries_they_overlap() {
    let env = TestEnv::new();
    record(&env, "t", 8);
    env.run(&["compact", "--from", "2", "--to", "4", "--summary", "first"]).ok();
    let out = env.run(&["compact", "--from", "3", "--to", "6", "--summary", "second"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 85948bc] compact: "t" turns 2-6 [summary by user] ~660 -> 406 tokens
    note: turns 3-6 widened to 2-6 to swallow a summary they overlapped
    "#);
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(!view.contains("\"first\""));
    assert_eq!(view.matches("[Summary of previous conversation: events …").count(), 1);
}

#[test]
fn diff_compares_raw_with_compacted_and_revisions() {
    let env = TestEnv::new();
    let id = record(&env, "t", 3);
    env.run(&["compact", "-p", "strip", "--to", "0"]).ok();
    let diff = env.run(&["diff", "--compacted"]).ok().to_owned();
    insta::assert_snapshot!("diff_compacted", diff);
    insta::assert_snapshot!("diff_compacted_stat", env.run(&["diff", "--compacted", "--stat"]).ok());
    env.run(&["append", "--user", "one more"]).ok();
    let revs = env.run(&["diff", "HEAD~1", "HEAD"]).ok().to_owned();
    insta::assert_snapshot!("diff_head_1_head", revs);
    assert_eq!(env.run(&["diff", &id, "HEAD~1"]).ok(), revs);
    insta::assert_snapshot!(env.transcript(&env.run(&["diff", "nope~1"])), @r#"
        exit 4
        --- stderr
        error: unknown revision `nope~1`: couldn't parse revision, input="nope~1"
        hint: `convo log` lists the conversation's commits
        "#);
}

/// Issue 12: across a compaction the raw events do not change, so a plain `diff REV1 REV2`
/// says where the change is, and `--compacted REV1 REV2` shows it (and what an undo restored).
#[test]
fn diff_across_a_compaction_shows_what_it_did_and_what_undo_restored() {
    let env = TestEnv::new();
    record(&env, "t", 2);
    env.run(&["compact", "-p", "strip", "--to", "0"]).ok();
    let plain = env.run(&["diff", "HEAD~1", "HEAD"]);
    insta::assert_snapshot!(env.transcript(&plain), @"
    exit 0
    --- stderr
    no raw event changed between HEAD~1 and HEAD, but the compactions did: `convo diff --compacted HEAD~1 HEAD` shows what they changed
    ");
    insta::assert_snapshot!(env.run(&["diff", "--compacted", "--stat", "HEAD~1"]).ok(), @"
     turn        HEAD~1          HEAD
        -            ~7            ~7
        0          ~127           ~25 *
        1          ~127          ~127
    total          ~261          ~159  tokens (chars/4)
    ");
    insta::assert_snapshot!(env.run(&["diff", "--compacted", "HEAD~1", "HEAD"]).ok(), @r#"
    --- 01KDVDQ4K00000000000000001 HEAD~1
    +++ 01KDVDQ4K00000000000000001 HEAD
    @@ -5,18 +5,14 @@
     ── turn 0 ── 2026-01-01 00:02:00
     user
         request 0
    -reasoning
    -    thinking about request 0 at some length
     tool_call fs_read_file r0
         {
           "path": "src/f0.rs"
         }
    -tool_result fs_read_file r0 success
    -    line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code line of code 
    -tool_call fs_modify_file m0
    -    {
    -      "diff": "+ added line + added line + added line + added line + added line + added line + added line + added line + added line + added line "
    -    }
    +tool_result [compacted] fs_read_file r0 success
    +    [compacted …00000005] success
    +tool_call [compacted] fs_modify_file m0
    +    {}
     tool_result fs_modify_file m0 success
         ok
     assistant
    "#);
    env.run(&["compact", "--undo"]).ok();
    insta::assert_snapshot!(env.run(&["diff", "--compacted", "--stat", "HEAD~1", "HEAD"]).ok(), @"
     turn        HEAD~1          HEAD
        -            ~7            ~7
        0           ~25          ~127 *
        1          ~127          ~127
    total          ~159          ~261  tokens (chars/4)
    ");
}

#[test]
fn fork_keeps_ids_carries_compactions_and_shares_whole_segments() {
    let env = TestEnv::new();
    let source = record(&env, "source", 40);
    env.run(&["compact", "-p", "strip", "--from", "30", "--to", "35"]).ok();
    // The whole conversation: every segment is shared with the source.
    let out = env.run(&["fork", &source, "--title", "copy"]);
    let fork = out.ok().lines().next().unwrap().to_owned();
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    01KDVDWMC00000000000000001
    --- stderr
    [01KDVDWMC00000000000000001 91a95df] fork: "copy" from "source" turn 0 (+282 events)
    "#);
    let blobs = |id: &str| -> Vec<String> {
        env.git(&["ls-tree", "-r", "HEAD", &format!("{}/events", conversation_dir(id))])
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
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    01KDVE24500000000000000001
    --- stderr
    [01KDVE24500000000000000001 5f50ae7] fork: "source (fork)" from "source" turn 30 (+72 events)
    "#);
    let tail = out.ok().lines().next().unwrap().to_owned();
    let meta: serde_json::Value =
        serde_json::from_str(&env.git(&["show", &format!("HEAD:{}/meta.json", conversation_dir(&tail))])).unwrap();
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
    assert!(projected.contains("\"content\":\"[compacted …"), "the carried compaction applies in the fork");

    // --compact compacts the fork with the default profile.
    let out = env.run(&["fork", &source, "--last", "5", "--compact"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stdout
    01KDVE9EH00000000000000001
    --- stderr
    [01KDVE9EH00000000000000001 b75d875] fork: "source (fork)" from "source" turn 35 (+36 events)
    [01KDVE9EH00000000000000001 0fd6f02] compact: "source (fork)" turns 0-2 [strip reasoning, strip tool calls, over 50 bytes] ~647 -> 374 tokens
    "#);
    // A fork too short to compact is made and said, and the command succeeds.
    let short = env.run(&["fork", &source, "--last", "1", "--compact"]);
    let said = short.ok_status();
    assert!(said.contains("] fork: \"source (fork)\""), "{said}");
    assert!(said.contains("the fork is not compacted: nothing to compact"), "{said}");
    assert!(!said.contains("nothing was written"), "{said}");
    env.run(&["fsck"]).ok();
    assert_eq!(env.git_status(), "");
}

#[test]
fn config_layers_and_where_they_come_from() {
    let env = TestEnv::new();
    record(&env, "t", 6);
    assert_eq!(env.run(&["config", "get", "compaction.keep_last"]).ok(), "3\n");
    env.run(&["config", "set", "--shared", "compaction.keep_last", "4"]).ok();
    assert_eq!(env.git(&["show", "HEAD:convo.toml"]), "[compaction]\nkeep_last = 4\n");
    assert_eq!(env.git(&["log", "-1", "--format=%s"]), "config: set compaction.keep_last = 4\n");
    assert_eq!(env.run(&["config", "get", "compaction.keep_last"]).ok(), "4\n");
    env.run(&["config", "set", "--user", "compaction.default_profile", "light"]).ok();
    env.run(&["config", "set", "--conversation", "compaction.keep_last", "5"]).ok();
    assert_eq!(env.run(&["config", "get", "compaction.keep_last"]).ok(), "5\n");
    assert_eq!(env.run(&["--config", "compaction.keep_last=2", "config", "get", "compaction.keep_last"]).ok(), "2\n");
    let user_file = env.home().join(".config/convo/config.toml");
    insta::assert_snapshot!("config_list", env.redact(env.run(&["config", "list"]).ok()));
    // The conversation's own config drives compact: light profile, keep 5 of 6 turns.
    let out = env.run(&["compact"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 591627e] compact: "t" turns 0-0 [strip reasoning] ~769 -> 759 tokens
    "#);

    // A bad key is refused before anything is written, naming the key.
    let before = env.snapshot();
    let err = env.run(&["config", "set", "compaction.kep_last", "1"]);
    insta::assert_snapshot!(env.transcript(&err), @"
    exit 3
    --- stderr
    error: compaction.kep_last: unknown field `kep_last`, expected one of `default_profile`, `keep_last`, `profiles`, `confirm_above_tokens`, `max_summary_tokens`, `keep_args`, `auto` in `compaction`
    hint: `convo config list` shows every setting and where it comes from
    ");
    assert!(env.snapshot() == before);
    // A hand-edited file with a wrong type names file and line.
    std::fs::write(&user_file, "[compaction]\n# comment\nkeep_last = \"many\"\n").unwrap();
    let err = env.run(&["compact", "--dry-run"]);
    insta::assert_snapshot!(env.transcript(&err), @r#"
        exit 3
        --- stderr
        error: [ROOT]/home/.config/convo/config.toml:3:13: invalid type: string "many", expected u64 in `compaction.keep_last`
        hint: `convo config list` shows every setting and where it comes from
        "#);
}

#[test]
fn tool_hints_are_recorded_so_later_config_does_not_change_the_view() {
    let env = TestEnv::new();
    record(&env, "t", 3);
    env.run(&["config", "set", "tools.fs_read_file.compaction.request", "keep"]).ok();
    env.run(&["compact", "-p", "strip", "--to", "1"]).ok();
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(view.contains("\"name\":\"fs_read_file\",\"arguments\":{\"path\":\"src/f0.rs\"}"), "{view}");
    assert!(view.contains("\"name\":\"fs_modify_file\",\"arguments\":{}"), "{view}");
    env.run(&["config", "set", "tools.fs_read_file.compaction.request", "strip"]).ok();
    assert_eq!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), view);
}

/// An agent session of four turns: requests with more than one line, tool calls naming files
/// the way Claude Code's tools do, narration between calls and a closing answer.
fn agent_session(env: &TestEnv, title: &str) -> String {
    let id = env.new_conversation(title);
    let call = |id: &str, name: &str, args: &str| {
        format!("{{\"type\":\"tool_call\",\"call_id\":\"{id}\",\"name\":\"{name}\",\"arguments\":{args}}}\n")
    };
    let result =
        |id: &str, text: &str| format!("{{\"type\":\"tool_result\",\"call_id\":\"{id}\",\"content\":\"{text}\"}}\n");
    let say = |kind: &str, text: &str| format!("{{\"type\":\"{kind}\",\"content\":\"{text}\"}}\n");
    let mut jsonl = say("system", "You are a coding agent.");
    for t in 0..4 {
        jsonl += &say("user", &format!("Fix bug #{t} in the login flow\\n\\nIt happens after sign-in."));
        jsonl += &say("reasoning", "The session cookie is the likely cause.");
        jsonl += &call(&format!("a{t}"), "Read", &format!("{{\"file_path\":\"src/auth{t}.rs\"}}"));
        jsonl += &result(&format!("a{t}"), &"fn login() {} ".repeat(30));
        jsonl += &say("assistant", "Let me check the handler as well.");
        jsonl += &call(&format!("b{t}"), "Read", "{\"file_path\":\"src/login.rs\"}");
        jsonl += &result(&format!("b{t}"), &"fn handler() {} ".repeat(30));
        jsonl += &call(
            &format!("c{t}"),
            "Edit",
            &format!("{{\"file_path\":\"src/auth{t}.rs\",\"old_string\":\"a\",\"new_string\":\"b\"}}"),
        );
        jsonl += &result(&format!("c{t}"), "ok");
        jsonl += &call(&format!("d{t}"), "Bash", "{\"command\":\"cargo test\"}");
        jsonl += &result(&format!("d{t}"), &"test ok ".repeat(20));
        jsonl +=
            &say("assistant", &format!("Bug #{t} came from a cookie set on the wrong path. Fixed in src/auth{t}.rs."));
    }
    env.run_stdin(&["append", &id], &jsonl).ok();
    id
}

#[test]
fn digest_summarizes_turns_without_a_model() {
    let env = TestEnv::new();
    agent_session(&env, "agent");
    let out = env.run(&["compact", "--digest", "--keep-last", "1"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 12d2c05] compact: "agent" turns 0-2 [summary by convo/digest] ~1,424 -> 548 tokens
    "#);
    insta::assert_snapshot!("digest_show_compacted", env.run(&["show", "--compacted"]).ok());
    // A profile may ask for a digest too; a summary widens over the one it overlaps.
    let out = env.run(&[
        "--config",
        "compaction.profiles.brief.summary.policy=\"digest\"",
        "compact",
        "--profile",
        "brief",
        "--from",
        "2",
        "--to",
        "2",
    ]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 68ad694] compact: "agent" turns 0-2 [summary by convo/digest] ~548 -> 548 tokens
    note: turns 2-2 widened to 0-2 to swallow a summary they overlapped
    "#);
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert_eq!(view.matches("[Summary of previous conversation: events …").count(), 1, "{view}");
    assert!(view.contains("Digest of turns 0-2 (written by convo, no model):"), "{view}");
    env.run(&["fsck"]).ok();
}

#[test]
fn digest_dry_run_shows_the_digest_and_writes_nothing() {
    let env = TestEnv::new();
    agent_session(&env, "agent");
    let before = env.snapshot();
    let out = env.run(&["compact", "--digest", "--dry-run", "--verbose", "--to", "1"]);
    insta::assert_snapshot!("digest_dry_run_verbose", env.transcript(&out));
    assert!(env.snapshot() == before, "a dry run changed the store");
    // A digest calls no model: asking for one, or for its focus, is a contradiction.
    let out = env.run(&["compact", "--digest", "--summarize"]);
    assert!(out.fails_with(2).contains("cannot be used with"), "{}", out.stderr);
    assert!(env.snapshot() == before);
}

#[test]
fn digest_undo_restores_the_view() {
    let env = TestEnv::new();
    agent_session(&env, "agent");
    let raw_view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    env.run(&["compact", "--digest"]).ok();
    assert_ne!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), raw_view);
    let out = env.run(&["compact", "--undo"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 d1adc1b] compact: "agent" undo 01KDVDWMC0 turns 0-2 [summary by convo/digest] ~602 -> 1,424 tokens
    "#);
    assert_eq!(env.run(&["show", "--compacted", "--format", "jsonl"]).ok(), raw_view);
}

#[test]
fn digest_over_budget_leaves_out_the_oldest_turns() {
    let env = TestEnv::new();
    agent_session(&env, "agent");
    let out = env.run(&["--config", "compaction.max_summary_tokens=120", "compact", "--digest", "--to", "3"]);
    insta::assert_snapshot!(env.transcript(&out), @r#"
    exit 0
    --- stderr
    [01KDVDQ4K00000000000000001 69e3d74] compact: "agent" turns 0-3 [summary by convo/digest] ~1,424 -> 94 tokens
    "#);
    let view = env.run(&["show", "--compacted", "--format", "jsonl"]).ok().to_owned();
    let summary: Vec<serde_json::Value> = view
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["content"].as_str().is_some_and(|c| c.starts_with("Digest of")))
        .collect();
    assert_eq!(summary.len(), 1, "{view}");
    let text = summary[0]["content"].as_str().unwrap_or_default();
    assert!(text.chars().count().div_ceil(4) <= 120, "{text}");
    insta::assert_snapshot!(text, @r#"
    Digest of turns 0-3 (written by convo, no model):
    [3 earlier turns left out]
    turn 3: asked "Fix bug #3 in the login flow"; tools: Read×2, Edit×1, Bash×1; read: src/auth3.rs, src/login.rs; edited: src/auth3.rs; ran: `cargo test`; answered "Bug #3 came from a cookie set on the wrong path."
    "#);
}

#[test]
fn config_set_writes_your_own_file_unless_asked_to_share_and_unset_takes_a_key_out() {
    let env = TestEnv::new();
    let before = env.snapshot();
    let set = env.run(&["config", "set", "llm.model", "ollama/llama3.2"]);
    insta::assert_snapshot!(env.transcript(&set), @r#"
    exit 0
    --- stderr
    llm.model = "ollama/llama3.2" in [ROOT]/home/.config/convo/config.toml
    "#);
    assert!(env.snapshot() == before, "a personal setting is not committed to the store");
    let user_file = env.home().join(".config/convo/config.toml");
    assert_eq!(std::fs::read_to_string(&user_file).unwrap(), "[llm]\nmodel = \"ollama/llama3.2\"\n");
    assert_eq!(env.run(&["config", "get", "llm.model"]).ok(), "\"ollama/llama3.2\"\n");

    let shared = env.run(&["config", "set", "--shared", "compaction.keep_last", "4"]);
    assert!(shared.ok_status().contains("compaction.keep_last = 4 in the store's convo.toml: `convo push` shares it"));
    assert_eq!(env.git(&["show", "HEAD:convo.toml"]), "[compaction]\nkeep_last = 4\n");

    let unset = env.run(&["config", "unset", "llm.model"]);
    assert!(unset.ok_status().starts_with("llm.model removed from "), "{}", unset.stderr);
    assert_eq!(std::fs::read_to_string(&user_file).unwrap(), "");
    let unset = env.run(&["config", "unset", "--shared", "compaction.keep_last"]);
    assert!(unset.ok_status().contains("config: unset compaction.keep_last"), "{}", unset.stderr);
    assert_eq!(env.git(&["show", "HEAD:convo.toml"]), "");
    assert_eq!(env.run(&["config", "get", "compaction.keep_last"]).ok(), "3\n");

    // Not set there: said, nothing written.
    let before = env.snapshot();
    let again = env.run(&["config", "unset", "--shared", "compaction.keep_last"]);
    insta::assert_snapshot!(env.transcript(&again), @"
    exit 4
    --- stderr
    error: `compaction.keep_last` is not set in the store's convo.toml
    hint: `convo config list` shows every setting and the layer it comes from
    ");
    assert!(env.snapshot() == before);
}

/// What a stripped call and result read, per tool the agents use: the call keeps its short
/// identifying arguments (`compaction.keep_args`; Bash its command only), the result its
/// exit status, error line, commits and the end of its event's id. The whole compacted view.
#[test]
fn placeholders_keep_each_tools_trail() {
    let env = TestEnv::new();
    env.new_conversation("tools");
    let long = "x".repeat(300);
    let calls: Vec<(&str, serde_json::Value, String, bool)> = vec![
        (
            "Bash",
            serde_json::json!({"command": "cargo test -p store", "description": "Run the store tests"}),
            format!("Exit code 101\n   Compiling store\nerror[E0308]: mismatched types\n{long}"),
            true,
        ),
        (
            "Read",
            serde_json::json!({"file_path": "src/store/mod.rs"}),
            format!("1→fn main() {{}} // error here\n{long}"),
            false,
        ),
        (
            "Edit",
            serde_json::json!({"file_path": "src/a.rs", "old_string": long, "new_string": "y"}),
            "The file src/a.rs has been updated.".into(),
            false,
        ),
        ("Grep", serde_json::json!({"pattern": "fn validate", "path": "src"}), long.clone(), false),
        ("WebFetch", serde_json::json!({"url": "https://example.com/doc", "prompt": long}), long.clone(), false),
        (
            "shell",
            serde_json::json!({"command": ["bash", "-lc", "git commit -am 'fix: bound'"]}),
            format!("[main 1a2b3c4] fix: bound\n 1 file changed\n{long}"),
            false,
        ),
        (
            "exec_command",
            serde_json::json!({"cmd": "make check"}),
            format!("{{\"output\":\"FAILED: 2 tests\\n{long}\",\"metadata\":{{\"exit_code\":2}}}}"),
            false,
        ),
        ("fs_read_file", serde_json::json!({"path": "README.md"}), long.clone(), false),
    ];
    let mut jsonl = String::from("{\"type\":\"user\",\"content\":\"fix the build\"}\n");
    for (n, (name, arguments, output, is_error)) in calls.iter().enumerate() {
        jsonl +=
            &serde_json::json!({"type": "tool_call", "call_id": format!("c{n}"), "name": name, "arguments": arguments})
                .to_string();
        jsonl += "\n";
        jsonl += &serde_json::json!({"type": "tool_result", "call_id": format!("c{n}"), "content": output, "is_error": is_error})
            .to_string();
        jsonl += "\n";
    }
    jsonl += "{\"type\":\"assistant\",\"content\":\"done\"}\n{\"type\":\"user\",\"content\":\"thanks\"}\n";
    env.run_stdin(&["append"], &jsonl).ok();
    env.run(&["compact", "-p", "strip", "--to", "0"]).ok();
    insta::assert_snapshot!(env.run(&["show", "--compacted"]).ok());
}

/// A Python traceback's placeholder keeps the exception it ends with, not its header.
#[test]
fn a_python_tracebacks_placeholder_keeps_its_exception() {
    let env = TestEnv::new();
    env.new_conversation("python");
    let traceback = "Exit code 1\nTraceback (most recent call last):\n  File \"/app/run.py\", line 9, in <module>\n    main()\n  File \"/app/run.py\", line 7, in main\n    port = int(config[\"port\"])\nValueError: invalid literal for int() with base 10: 'eighty'\n";
    let jsonl = [
        serde_json::json!({"type": "user", "content": "run it"}),
        serde_json::json!({"type": "tool_call", "call_id": "c0", "name": "Bash", "arguments": {"command": "python run.py"}}),
        serde_json::json!({"type": "tool_result", "call_id": "c0", "content": traceback, "is_error": true}),
        serde_json::json!({"type": "assistant", "content": "the port is not a number"}),
        serde_json::json!({"type": "user", "content": "fix it"}),
    ]
    .iter()
    .map(|e| format!("{e}\n"))
    .collect::<String>();
    env.run_stdin(&["append"], &jsonl).ok();
    env.run(&["compact", "-p", "strip", "--to", "0"]).ok();
    let shown = env.run(&["show", "--compacted"]).ok().to_owned();
    let placeholder = shown.lines().find(|l| l.contains("[compacted …")).unwrap_or_else(|| panic!("{shown}"));
    assert!(
        placeholder.ends_with("exit 1 — ValueError: invalid literal for int() with base 10: 'eighty'"),
        "{placeholder}"
    );
}
