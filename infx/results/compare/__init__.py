"""`infx results compare` as values (`rules`: request, history, outcome), and the GitHub edge
of the results commands (`facts`: acknowledgements, the comment, the check run, issues;
`baseline`: main's runs through the API)."""
