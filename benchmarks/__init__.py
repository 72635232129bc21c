"""Benchmarks of webcorpus: `python -m benchmarks.throughput --help`, `python -m benchmarks.fidelity --help`."""


def parse_sections(parser, value: str, known: tuple[str, ...]) -> list[str]:
    """The comma-separated sections of `value`; an unknown one is a command-line error."""
    sections = [name.strip() for name in value.split(",") if name.strip()]
    unknown = set(sections) - set(known)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}; choose from {', '.join(known)}")
    return sections
