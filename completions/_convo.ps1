
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
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a conversation''s raw events')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'Show the history of a conversation, newest first')
            [CompletionResult]::new('fsck', 'fsck', [CompletionResultType]::ParameterValue, 'Check the store''s integrity')
            [CompletionResult]::new('generate-docs', 'generate-docs', [CompletionResultType]::ParameterValue, 'Write man pages and shell completions from the command definitions')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'convo;init' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
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
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--store', '--store', [CompletionResultType]::ParameterName, 'Use the store at PATH (default: $CONVO_DIR, then $XDG_DATA_HOME/convo)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour output (NO_COLOR is honoured by `auto`)')
            [CompletionResult]::new('--brief', '--brief', [CompletionResultType]::ParameterName, 'Fold each tool call and tool result to one line')
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
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a conversation''s raw events')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'Show the history of a conversation, newest first')
            [CompletionResult]::new('fsck', 'fsck', [CompletionResultType]::ParameterValue, 'Check the store''s integrity')
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
