complete --keep-order --exclusive --command convo --arguments "(COMPLETE=fish convo -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
