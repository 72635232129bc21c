"""The checks ReadWarc makes of a response's URL and HTTP headers before its payload is read, chained."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Screens:
    """A `read_warc` screen made of several: the first that skips a response decides."""

    screens: tuple

    def __call__(self, url: str, http_header) -> tuple[str, str] | None:
        for screen in self.screens:
            verdict = screen(url, http_header)
            if verdict is not None:
                return verdict
        return None
