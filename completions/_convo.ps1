
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'convo' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'convo'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'convo' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Create a store (a git repository for conversations)')
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Start a conversation and make it the active one')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List conversations: id, title, turns, events, estimated tokens, last update')
            [CompletionResult]::new('switch', 'switch', [CompletionResultType]::ParameterValue, 'Make another conversation the active one')
            [CompletionResult]::new('append', 'append', [CompletionResultType]::ParameterValue, 'Append events to a conversation, as one commit')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a conversation: its raw events, or with --compacted what an LLM is sent')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'Show the history of a conversation, newest first')
            [CompletionResult]::new('fsck', 'fsck', [CompletionResultType]::ParameterValue, 'Check the store''s integrity')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Compact a conversation: append an overlay that shrinks what an LLM is sent')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Show what compaction changes, or how a conversation changed between two commits')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Start a new conversation from (part of) another, and make it active')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Read and set configuration')
            [CompletionResult]::new('query', 'query', [CompletionResultType]::ParameterValue, 'Send a message with the conversation to an LLM and record both sides')
            [CompletionResult]::new('remote', 'remote', [CompletionResultType]::ParameterValue, 'Manage the git remotes conversations are shared through')
            [CompletionResult]::new('clone', 'clone', [CompletionResultType]::ParameterValue, 'Clone a store from a git remote')
            [CompletionResult]::new('fetch', 'fetch', [CompletionResultType]::ParameterValue, 'Download a remote''s commits without changing any conversation')
            [CompletionResult]::new('pull', 'pull', [CompletionResultType]::ParameterValue, 'Fetch a remote and bring its conversations in, losing nothing')
            [CompletionResult]::new('push', 'push', [CompletionResultType]::ParameterValue, 'Send this store''s conversations to a remote')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Import a session from another tool as a new conversation')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write a conversation in another format')
            [CompletionResult]::new('generate-docs', 'generate-docs', [CompletionResultType]::ParameterValue, 'Write man pages and shell completions from the command definitions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'convo;init' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;new' {
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'A title to name it by (ids are generated)')
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'A title to name it by (ids are generated)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;list' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format; `json` is an array of objects for scripts')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;switch' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;append' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Read JSONL events from FILE instead of stdin')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Read JSONL events from FILE instead of stdin')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'A user message (starts a new turn)')
            [CompletionResult]::new('--assistant', '--assistant', [CompletionResultType]::ParameterName, 'An assistant message')
            [CompletionResult]::new('--reasoning', '--reasoning', [CompletionResultType]::ParameterName, 'The model''s reasoning')
            [CompletionResult]::new('--system', '--system', [CompletionResultType]::ParameterName, 'A system prompt')
            [CompletionResult]::new('--tool-call', '--tool-call', [CompletionResultType]::ParameterName, 'A tool call to the tool NAME (with --args)')
            [CompletionResult]::new('--args', '--args', [CompletionResultType]::ParameterName, 'The tool call''s arguments, as JSON')
            [CompletionResult]::new('--call-id', '--call-id', [CompletionResultType]::ParameterName, 'The tool call''s id (default: generated)')
            [CompletionResult]::new('--tool-result', '--tool-result', [CompletionResultType]::ParameterName, 'A tool result answering the call CALL_ID (with --content)')
            [CompletionResult]::new('--content', '--content', [CompletionResultType]::ParameterName, 'The tool result''s output')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--error', '--error', [CompletionResultType]::ParameterName, 'Mark the tool result as an error')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;show' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'format')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'With --format openai|anthropic: the model named in the body [default: llm.model]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'With --format openai|anthropic: the model named in the body [default: llm.model]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--brief', '--brief', [CompletionResultType]::ParameterName, 'Fold each tool call and tool result to one line')
            [CompletionResult]::new('--compacted', '--compacted', [CompletionResultType]::ParameterName, 'The projected view: compactions applied, stripped and made-up events marked')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;log' {
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Show at most N commits')
            [CompletionResult]::new('--max-count', '--max-count', [CompletionResultType]::ParameterName, 'Show at most N commits')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format; `json` is an array of commits for scripts')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--oneline', '--oneline', [CompletionResultType]::ParameterName, 'One line per commit')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every commit of the store, all conversations')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;fsck' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;compact' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Profile to apply (default: compaction.default_profile)')
            [CompletionResult]::new('--profile', '--profile', [CompletionResultType]::ParameterName, 'Profile to apply (default: compaction.default_profile)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'First turn to compact; alone it means `last` [default: 0]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Last turn to compact [default: -N, N = compaction.keep_last]')
            [CompletionResult]::new('--keep-last', '--keep-last', [CompletionResultType]::ParameterName, 'Leave the last N turns as they are (--to -N)')
            [CompletionResult]::new('--keep-recent-tools', '--keep-recent-tools', [CompletionResultType]::ParameterName, 'Leave the last N tool calls and their results whole; all before them is in range')
            [CompletionResult]::new('--keep-first', '--keep-first', [CompletionResultType]::ParameterName, 'Leave the first N turns (the task statement) as they are [profile key: keep_first]')
            [CompletionResult]::new('--min-bytes', '--min-bytes', [CompletionResultType]::ParameterName, 'Only strip or truncate tool requests and results over B bytes [profile key: min_bytes]')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Choose the least compaction that brings the view under TOKENS (see below)')
            [CompletionResult]::new('--max-lines', '--max-lines', [CompletionResultType]::ParameterName, 'Cut tool results left in place to N lines, first and last kept [profile key: max_lines]')
            [CompletionResult]::new('--reasoning', '--reasoning', [CompletionResultType]::ParameterName, 'What to do with reasoning, over the profile')
            [CompletionResult]::new('--tools', '--tools', [CompletionResultType]::ParameterName, 'What to do with tool calls, over the profile')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'Replace the range with this summary')
            [CompletionResult]::new('--summary-file', '--summary-file', [CompletionResultType]::ParameterName, 'Replace the range with the summary in FILE')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model that summarizes, as provider/model [default: the profile''s summary.model, then llm.model]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model that summarizes, as provider/model [default: the profile''s summary.model, then llm.model]')
            [CompletionResult]::new('--focus', '--focus', [CompletionResultType]::ParameterName, 'Something the summary must pay particular attention to')
            [CompletionResult]::new('--undo', '--undo', [CompletionResultType]::ParameterName, 'Withdraw a compaction (default: the latest in force) by appending its revocation')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--summarize', '--summarize', [CompletionResultType]::ParameterName, 'Have a model summarize the range (from its raw events)')
            [CompletionResult]::new('--digest', '--digest', [CompletionResultType]::ParameterName, 'Replace the range with a digest convo writes, one line per turn (no model)')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask before sending a large range to the model (compaction.confirm_above_tokens)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask before sending a large range to the model (compaction.confirm_above_tokens)')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Apply a model summary even when it is estimated no smaller than the range it replaces')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Print the range, policies and token estimates; write nothing')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the range, policies and token estimates; write nothing')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'With --dry-run, list every turn of a long range and print its projected view')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'With --dry-run, list every turn of a long range and print its projected view')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;diff' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--compacted', '--compacted', [CompletionResultType]::ParameterName, 'The compacted view: against the raw one, or at two revisions')
            [CompletionResult]::new('--stat', '--stat', [CompletionResultType]::ParameterName, 'Per-turn estimated tokens, before -> after, and the totals')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;fork' {
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'Take the last N turns')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'First turn to take: 5, -3, 5h, 2days [default: 0]')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Last turn to take, same forms [default: the last turn]')
            [CompletionResult]::new('--compact', '--compact', [CompletionResultType]::ParameterName, 'Compact the fork afterwards, with PROFILE or compaction.default_profile')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Title of the fork [default: the source''s title with " (fork)"]')
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'Title of the fork [default: the source''s title with " (fork)"]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;config' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'Print the value of KEY in force')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store''s]')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Print every key in force, with the layer it comes from, and the keys ignored')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Trust a store''s own config (convo.toml, config events) to name providers')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'convo;config;get' {
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'Conversation whose config events count (default: the active one, if any)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;config;set' {
            [CompletionResult]::new('--layer', '--layer', [CompletionResultType]::ParameterName, 'The layer to write')
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'Conversation whose config events count (default: the active one, if any)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Same as --layer user')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'Same as --layer conversation')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;config;list' {
            [CompletionResult]::new('--id', '--id', [CompletionResultType]::ParameterName, 'Conversation whose config events count (default: the active one, if any)')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;config;trust' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--remove', '--remove', [CompletionResultType]::ParameterName, 'Stop trusting the store')
            [CompletionResult]::new('--list', '--list', [CompletionResultType]::ParameterName, 'Print the stores you trust, one a line')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;config;help' {
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'Print the value of KEY in force')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store''s]')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Print every key in force, with the layer it comes from, and the keys ignored')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Trust a store''s own config (convo.toml, config events) to name providers')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'convo;config;help;get' {
            break
        }
        'convo;config;help;set' {
            break
        }
        'convo;config;help;list' {
            break
        }
        'convo;config;help;trust' {
            break
        }
        'convo;config;help;help' {
            break
        }
        'convo;query' {
            [CompletionResult]::new('--compact', '--compact', [CompletionResultType]::ParameterName, 'Compact before sending, with PROFILE or compaction.default_profile')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'The model, as provider/model [default: llm.model]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model, as provider/model [default: llm.model]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;remote' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a remote')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a remote (the conversations stay)')
            [CompletionResult]::new('set-url', 'set-url', [CompletionResultType]::ParameterValue, 'Change a remote''s URL')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List remotes with their URLs (the default)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'convo;remote;add' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;remote;remove' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;remote;set-url' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;remote;list' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;remote;help' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a remote')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a remote (the conversations stay)')
            [CompletionResult]::new('set-url', 'set-url', [CompletionResultType]::ParameterValue, 'Change a remote''s URL')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List remotes with their URLs (the default)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'convo;remote;help;add' {
            break
        }
        'convo;remote;help;remove' {
            break
        }
        'convo;remote;help;set-url' {
            break
        }
        'convo;remote;help;list' {
            break
        }
        'convo;remote;help;help' {
            break
        }
        'convo;clone' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;fetch' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;pull' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;push' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--force-with-lease', '--force-with-lease', [CompletionResultType]::ParameterName, 'Overwrite the remote''s branch if it is still where this store last saw it')
            [CompletionResult]::new('--allow-secrets', '--allow-secrets', [CompletionResultType]::ParameterName, 'Push even if secret-like strings were found')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;import' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'The format [default: detected]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'The format [default: detected]')
            [CompletionResult]::new('-t', '-t', [CompletionResultType]::ParameterName, 'Title of the new conversation [default: from the session, else the file name]')
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'Title of the new conversation [default: from the session, else the file name]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--again', '--again', [CompletionResultType]::ParameterName, 'Import a file again although a conversation already holds it')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;export' {
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'f')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'format')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to FILE instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to FILE instead of stdout')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'With --format openai|anthropic: the model named in the body [default: llm.model]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'With --format openai|anthropic: the model named in the body [default: llm.model]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--compacted', '--compacted', [CompletionResultType]::ParameterName, 'The compacted view instead of the raw events')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;generate-docs' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Set a config key for this run, over every file (repeatable), e.g. compaction.keep_last=5')
            [CompletionResult]::new('--no-pager', '--no-pager', [CompletionResultType]::ParameterName, 'Never start a pager (default: $CONVO_PAGER, then $PAGER, then less, on a terminal)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but data and errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'convo;help' {
            [CompletionResult]::new('init', 'init', [CompletionResultType]::ParameterValue, 'Create a store (a git repository for conversations)')
            [CompletionResult]::new('new', 'new', [CompletionResultType]::ParameterValue, 'Start a conversation and make it the active one')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List conversations: id, title, turns, events, estimated tokens, last update')
            [CompletionResult]::new('switch', 'switch', [CompletionResultType]::ParameterValue, 'Make another conversation the active one')
            [CompletionResult]::new('append', 'append', [CompletionResultType]::ParameterValue, 'Append events to a conversation, as one commit')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a conversation: its raw events, or with --compacted what an LLM is sent')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'Show the history of a conversation, newest first')
            [CompletionResult]::new('fsck', 'fsck', [CompletionResultType]::ParameterValue, 'Check the store''s integrity')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Compact a conversation: append an overlay that shrinks what an LLM is sent')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Show what compaction changes, or how a conversation changed between two commits')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Start a new conversation from (part of) another, and make it active')
            [CompletionResult]::new('config', 'config', [CompletionResultType]::ParameterValue, 'Read and set configuration')
            [CompletionResult]::new('query', 'query', [CompletionResultType]::ParameterValue, 'Send a message with the conversation to an LLM and record both sides')
            [CompletionResult]::new('remote', 'remote', [CompletionResultType]::ParameterValue, 'Manage the git remotes conversations are shared through')
            [CompletionResult]::new('clone', 'clone', [CompletionResultType]::ParameterValue, 'Clone a store from a git remote')
            [CompletionResult]::new('fetch', 'fetch', [CompletionResultType]::ParameterValue, 'Download a remote''s commits without changing any conversation')
            [CompletionResult]::new('pull', 'pull', [CompletionResultType]::ParameterValue, 'Fetch a remote and bring its conversations in, losing nothing')
            [CompletionResult]::new('push', 'push', [CompletionResultType]::ParameterValue, 'Send this store''s conversations to a remote')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Import a session from another tool as a new conversation')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Write a conversation in another format')
            [CompletionResult]::new('generate-docs', 'generate-docs', [CompletionResultType]::ParameterValue, 'Write man pages and shell completions from the command definitions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'convo;help;init' {
            break
        }
        'convo;help;new' {
            break
        }
        'convo;help;list' {
            break
        }
        'convo;help;switch' {
            break
        }
        'convo;help;append' {
            break
        }
        'convo;help;show' {
            break
        }
        'convo;help;log' {
            break
        }
        'convo;help;fsck' {
            break
        }
        'convo;help;compact' {
            break
        }
        'convo;help;diff' {
            break
        }
        'convo;help;fork' {
            break
        }
        'convo;help;config' {
            [CompletionResult]::new('get', 'get', [CompletionResultType]::ParameterValue, 'Print the value of KEY in force')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Set KEY to VALUE (TOML: 5, true, "strip") in one layer [default: the store''s]')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'Print every key in force, with the layer it comes from, and the keys ignored')
            [CompletionResult]::new('trust', 'trust', [CompletionResultType]::ParameterValue, 'Trust a store''s own config (convo.toml, config events) to name providers')
            break
        }
        'convo;help;config;get' {
            break
        }
        'convo;help;config;set' {
            break
        }
        'convo;help;config;list' {
            break
        }
        'convo;help;config;trust' {
            break
        }
        'convo;help;query' {
            break
        }
        'convo;help;remote' {
            [CompletionResult]::new('add', 'add', [CompletionResultType]::ParameterValue, 'Add a remote')
            [CompletionResult]::new('remove', 'remove', [CompletionResultType]::ParameterValue, 'Remove a remote (the conversations stay)')
            [CompletionResult]::new('set-url', 'set-url', [CompletionResultType]::ParameterValue, 'Change a remote''s URL')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List remotes with their URLs (the default)')
            break
        }
        'convo;help;remote;add' {
            break
        }
        'convo;help;remote;remove' {
            break
        }
        'convo;help;remote;set-url' {
            break
        }
        'convo;help;remote;list' {
            break
        }
        'convo;help;clone' {
            break
        }
        'convo;help;fetch' {
            break
        }
        'convo;help;pull' {
            break
        }
        'convo;help;push' {
            break
        }
        'convo;help;import' {
            break
        }
        'convo;help;export' {
            break
        }
        'convo;help;generate-docs' {
            break
        }
        'convo;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
