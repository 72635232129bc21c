"""The quality filters LLM corpus builders run (`--quality`): Gopher's repetition and quality rules, C4's and
FineWeb's, as pure functions of a page's readable text (`rule_sets`), and their stage (`filters_transform`).

Each rule set is written from the rule's published definition and datatrove 0.10's defaults (the reference the
agreement benchmark, `python -m benchmarks.filters`, measures against); no datatrove code is used.
"""
