"""What a build leaves for later builds: the resume ledger, completion records of units of reading
(`unit_ledger`, `unit_ledger_transform`), and the content index that `--extend` reads (`corpus_index`,
`corpus_index_transform`). A later build reads them as input: checked before they are trusted."""
