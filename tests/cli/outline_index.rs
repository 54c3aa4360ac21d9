//! The outline index (`.git/convo/outline/<id>`): `compact`, `compact --dry-run` and the
//! compacted JSONL view are decided from it instead of every event, so it must never answer
//! differently from a read without it, whatever happened to it: deleted, torn, damaged,
//! garbage, left behind by a pull or a reset, by a writer killed at any step, or grown by
//! many appends.

use crate::common::{TestEnv, bare, conversation_dir, run_command};

fn index(env: &TestEnv, id: &str) -> std::path::PathBuf {
    env.store.join(".git/convo/outline").join(id)
}

/// What the outline index decides: the compacted view as JSONL, and the plan of one more
/// compaction (`--dry-run`, which writes nothing).
fn answers(env: &TestEnv, id: &str) -> String {
    let view = env.run(&["show", id, "--compacted", "--format", "jsonl"]).ok().to_owned();
    let plan = env.run(&["compact", id, "--dry-run", "--keep-last", "1", "--tools", "strip-responses"]);
    format!("{view}\n--\n{}{}", plan.stdout, plan.stderr)
}

/// [`answers`] with the index removed first (every segment outlined from its bytes), the
/// index under test put back afterwards.
fn without_index(env: &TestEnv, id: &str) -> String {
    let saved = std::fs::read(index(env, id)).ok();
    let _ = std::fs::remove_file(index(env, id));
    let expected = answers(env, id);
    match saved {
        Some(bytes) => std::fs::write(index(env, id), bytes).unwrap(),
        None => {
            let _ = std::fs::remove_file(index(env, id));
        }
    }
    expected
}

#[track_caller]
fn agrees_with_a_read_without_it(env: &TestEnv, id: &str, when: &str) {
    let expected = without_index(env, id);
    let got = answers(env, id);
    if let Some((n, (a, b))) = got.lines().zip(expected.lines()).enumerate().find(|(_, (a, b))| a != b) {
        panic!("{when}: the outline index answered differently at line {n}:\n  with it: {a}\n  without: {b}");
    }
    assert_eq!(got.lines().count(), expected.lines().count(), "{when}: the outline index answered differently");
    // The full parse says the same: the JSONL view is what the projection of every event is.
    let view = env.run(&["show", id, "--compacted", "--format", "jsonl"]).ok().to_owned();
    assert!(expected.starts_with(&view), "{when}");
}

/// An agent conversation long enough to span several segments: tool calls with large
/// results and reasoning, and one compaction in force.
fn agent_conversation() -> (TestEnv, String) {
    let env = TestEnv::new();
    let id = env.new_conversation("agent");
    let mut lines = String::new();
    for t in 0..40 {
        lines.push_str(&format!("{{\"type\":\"user\",\"content\":\"task {t}: fix the \\\"bug\\\"\\nplease\"}}\n"));
        lines.push_str(&format!("{{\"type\":\"reasoning\",\"content\":\"{}\"}}\n", "think ".repeat(40)));
        lines.push_str(&format!(
            "{{\"type\":\"tool_call\",\"call_id\":\"c{t}\",\"name\":\"Bash\",\"arguments\":{{\"cmd\":\"cat src/{t}.rs\"}}}}\n"
        ));
        let output = (0..30).map(|i| format!("line {i} of src/{t}.rs é 日本")).collect::<Vec<_>>().join("\\n");
        lines.push_str(&format!(
            "{{\"type\":\"tool_result\",\"call_id\":\"c{t}\",\"content\":\"{output}\",\"is_error\":{}}}\n",
            t % 7 == 0
        ));
        lines.push_str(&format!("{{\"type\":\"assistant\",\"content\":\"done {t}\"}}\n"));
    }
    env.run_stdin(&["append"], &lines).ok();
    env.run(&["compact", "--to", "20"]).ok();
    (env, id)
}

#[test]
fn a_missing_torn_damaged_or_foreign_index_answers_as_a_read_without_it() {
    let (env, id) = agent_conversation();
    agrees_with_a_read_without_it(&env, &id, "as built");
    let good = std::fs::read(index(&env, &id)).unwrap();
    assert!(good.len() > 1000, "the index holds records");

    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("torn in the middle of a record", good[..good.len() * 2 / 3].to_vec()),
        ("torn inside the first header", good[..10].to_vec()),
        ("garbage", b"not an index at all\n".repeat(50)),
        ("empty", Vec::new()),
        ("two copies run together", [good.clone(), good.clone()].concat()),
    ];
    for (when, bytes) in cases {
        std::fs::write(index(&env, &id), &bytes).unwrap();
        agrees_with_a_read_without_it(&env, &id, when);
        // The reader that found it wanting left it whole again: a second reader has no
        // segment left to outline, so the file does not grow.
        let repaired = std::fs::read(index(&env, &id)).unwrap();
        answers(&env, &id);
        assert_eq!(std::fs::read(index(&env, &id)).unwrap().len(), repaired.len(), "{when}");
    }
    // A byte changed anywhere: in a header, a count, a size, an id or a stored event.
    for at in (0..good.len()).step_by(good.len() / 24) {
        let mut bytes = good.clone();
        bytes[at] ^= 0x04;
        std::fs::write(index(&env, &id), &bytes).unwrap();
        agrees_with_a_read_without_it(&env, &id, &format!("byte {at} of {} changed", good.len()));
    }
    std::fs::remove_dir_all(env.store.join(".git/convo/outline")).unwrap();
    agrees_with_a_read_without_it(&env, &id, "its folder deleted");
}

#[test]
fn appends_compactions_and_undo_keep_it_right_and_bounded() {
    let (env, id) = agent_conversation();
    answers(&env, &id);
    for n in 0..60 {
        env.run_stdin(
            &["append"],
            &format!(
                "{{\"type\":\"user\",\"content\":\"more {n}\"}}\n{{\"type\":\"tool_call\",\"call_id\":\"m{n}\",\"name\":\"Read\",\"arguments\":{{\"p\":{n}}}}}\n{{\"type\":\"tool_result\",\"call_id\":\"m{n}\",\"content\":\"{}\"}}\n",
                "x".repeat(300)
            ),
        )
        .ok();
        // A reader after each append: each leaves one dead record (the open segment's).
        env.run(&["show", &id, "--compacted", "--format", "jsonl"]).ok();
    }
    agrees_with_a_read_without_it(&env, &id, "after 60 appends");
    let live = {
        let saved = std::fs::read(index(&env, &id)).unwrap();
        std::fs::remove_file(index(&env, &id)).unwrap();
        env.run(&["show", &id, "--compacted", "--format", "jsonl"]).ok();
        let live = std::fs::metadata(index(&env, &id)).unwrap().len();
        std::fs::write(index(&env, &id), saved).unwrap();
        live
    };
    let size = std::fs::metadata(index(&env, &id)).unwrap().len();
    assert!(size <= 2 * live + 64 * 1024, "dead records are dropped: {size} bytes for {live} live");

    env.run(&["compact", &id, "--keep-last", "2"]).ok();
    agrees_with_a_read_without_it(&env, &id, "after a second compaction");
    env.run(&["compact", &id, "--undo"]).ok();
    agrees_with_a_read_without_it(&env, &id, "after an undo");
}

#[test]
fn a_writer_killed_at_any_step_leaves_an_index_that_answers_as_a_read_without_it() {
    for step in ["journal", "committed", "worktree", "index"] {
        let (env, id) = agent_conversation();
        // Outlined before the writer dies, so the index holds the segment it is appending to.
        answers(&env, &id);
        let append = "{\"type\":\"tool_call\",\"call_id\":\"k1\",\"name\":\"Read\",\"arguments\":{}}\n\
                      {\"type\":\"tool_result\",\"call_id\":\"k1\",\"content\":\"killed\"}\n";
        for (args, stdin) in
            [(&["append", id.as_str()][..], append), (&["compact", id.as_str(), "--keep-last", "1"][..], "")]
        {
            let mut cmd = env.command(args);
            cmd.env("CONVO_TEST_FAIL_AT", step);
            assert_ne!(run_command(cmd, stdin).code, 0, "{step}: the process should have died");
            agrees_with_a_read_without_it(&env, &id, &format!("{} killed at {step}", args[0]));
        }
    }
}

#[test]
fn a_pull_and_a_reset_answer_as_a_read_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let hub = bare(dir.path(), "hub");
    let (a, id) = agent_conversation();
    a.run(&["remote", "add", "origin", hub.to_str().unwrap()]).ok();
    a.run(&["push"]).ok();
    let b = TestEnv::bare_at(100);
    b.run(&["clone", hub.to_str().unwrap(), b.store.to_str().unwrap()]).ok();
    agrees_with_a_read_without_it(&b, &id, "after a clone");

    a.run(&["append", &id, "--user", "more from a"]).ok();
    a.run(&["compact", &id, "--keep-last", "1"]).ok();
    a.run(&["push"]).ok();
    b.run(&["pull"]).ok();
    agrees_with_a_read_without_it(&b, &id, "after a pull");
    assert_eq!(answers(&b, &id), answers(&a, &id), "both stores project the same view");

    // Another tool moves HEAD back: records of segments HEAD no longer holds are not used.
    b.git(&["reset", "-q", "--hard", "HEAD~2"]);
    agrees_with_a_read_without_it(&b, &id, "after git reset");
}

#[test]
fn stored_lines_read_the_same_loose_or_packed_and_a_damaged_object_is_an_error() {
    let (env, id) = agent_conversation();
    let loose = env.run(&["show", &id, "--format", "jsonl"]).ok().to_owned();
    let compacted = env.run(&["show", &id, "--compacted", "--format", "jsonl"]).ok().to_owned();
    env.git(&["gc", "-q", "--prune=now"]);
    assert_eq!(env.run(&["show", &id, "--format", "jsonl"]).ok(), loose, "packed");
    assert_eq!(env.run(&["show", &id, "--compacted", "--format", "jsonl"]).ok(), compacted, "packed");

    // A segment written loose again, then damaged on disk: refused, never printed half-read.
    env.run(&["append", &id, "--user", "one more"]).ok();
    let open = env.git(&["rev-parse", &format!("HEAD:{}/events/0000", conversation_dir(&id))]);
    let listing = env.git(&["ls-tree", open.trim()]);
    let blob = listing.lines().last().unwrap().split_whitespace().nth(2).unwrap().to_owned();
    let object = env.store.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    let mut bytes = std::fs::read(&object).unwrap();
    let half = bytes.len() / 2;
    bytes.truncate(half);
    let _ = std::fs::set_permissions(&object, std::os::unix::fs::PermissionsExt::from_mode(0o644));
    std::fs::write(&object, bytes).unwrap();
    let out = env.run(&["show", &id, "--format", "jsonl"]);
    assert_ne!(out.code, 0, "a damaged object is an error");
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
}
