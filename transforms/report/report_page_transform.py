"""WriteReportPage: chooses in Beam, in bounded state, what `report.html` shows, and writes it (see `report_page`).

The sample is the `sample_size` smallest content hashes (a hash is uniform,
so the sample is an even spread, and the same on every build); the skips and
dead letters are the smallest few per kind by file and offset; each is chosen
by a bounded combiner.
"""

from __future__ import annotations

import json

import apache_beam as beam

from transforms.stages.read_warc.payload import DEFAULT_MAX_PAGE_BYTES
from transforms.report.report_page import DEFAULT_SAMPLE_SIZE, MAX_DEAD_LETTERS, SKIPS_PER_KIND, write_report_page
from transforms.stages.site_boilerplate import SiteBoilerplate, site_of
from transforms.vocabulary import BOILERPLATE_LINES, flat_fields


class SmallestDistinctHashes(beam.CombineFn):
    """The `size` fingerprints with the smallest distinct content hashes, each its content's survivor.

    The accumulator holds at most `size` hashes, each with the least
    fingerprint of its content (the survivor by HashDedup's rule).
    """

    def __init__(self, size: int):
        self._size = size

    def create_accumulator(self):
        return {}

    def _trim(self, chosen: dict) -> dict:
        if len(chosen) > self._size:
            chosen = {key: chosen[key] for key in sorted(chosen)[:self._size]}
        return chosen

    def add_input(self, chosen, fingerprint):
        key = fingerprint.content_hash
        if key in chosen or len(chosen) < self._size or (chosen and key < max(chosen)):
            best = chosen.get(key)
            chosen[key] = fingerprint if best is None or fingerprint < best else best
            chosen = self._trim(chosen)
        return chosen

    def merge_accumulators(self, accumulators):
        merged = {}
        for chosen in accumulators:
            for key, fingerprint in chosen.items():
                best = merged.get(key)
                merged[key] = fingerprint if best is None or fingerprint < best else best
        return self._trim(merged)

    def extract_output(self, chosen):
        return [chosen[key] for key in sorted(chosen)]


def _side_record_key(record) -> tuple:
    return record.source_file, record.source_offset, json.dumps(flat_fields(record), sort_keys=True)


class WriteReportPage(beam.PTransform):
    """Writes `report.html` once `report.json` is written; outputs its digest (`FileDigest`).

    Takes a dict of PCollections: `report` (report.json's digest, as `WriteReport` outputs it),
    `fingerprints` (of every document, for the sample), `skipped` and
    `dead_letter`. `sources`: the paths of input files whose names
    written differ (URLs with credentials), by those names, to read pages again. `drop_selectors`, `scripts`,
    `main_content`, `site_boilerplate`: how the build cleaned its pages, for the inspector to clean its samples
    alike; with `site_boilerplate`, `boilerplate_lines` too: the (site, line hash) of every line it removed, of
    which those of the samples' sites are read.
    """

    def __init__(self, output_dir: str, sample_size: int = DEFAULT_SAMPLE_SIZE, drop_selectors: tuple[str, ...] = (),
                 scripts=None, max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES, sources: dict[str, str] | None = None,
                 main_content: bool = False, site_boilerplate: SiteBoilerplate | None = None):
        super().__init__()
        self._main_content = main_content
        self._site_boilerplate = site_boilerplate
        self._sources = dict(sources or {})
        self._max_page_bytes = max_page_bytes
        self._output_dir = output_dir
        self._sample_size = sample_size
        self._drop_selectors = tuple(drop_selectors)
        self._scripts = scripts

    def expand(self, inputs):
        # The global combines here read only as side inputs have their default there (`as_singleton_view`, or with
        # `without_defaults` where the result is also a main input): Beam's default for no input takes a stage of its
        # own (a build's small stages are most of its fixed cost).
        samples = (inputs["fingerprints"]
                   | "Sample" >> beam.CombineGlobally(SmallestDistinctHashes(self._sample_size)).without_defaults())
        skips = (
            inputs["skipped"]
            | "SkipByKind" >> beam.Map(lambda skip: (skip.kind, _side_record_key(skip)))
            | "FirstSkipsOfKind" >> beam.combiners.Top.SmallestPerKey(SKIPS_PER_KIND)
        )
        dead = (
            inputs["dead_letter"]
            | "DeadLetterKeys" >> beam.Map(_side_record_key)
            | "FirstDeadLetters" >> beam.CombineGlobally(
                beam.combiners.TopCombineFn(MAX_DEAD_LETTERS, reverse=True)).as_singleton_view()
        )
        site_lines = []
        if self._site_boilerplate is not None:
            scope = self._site_boilerplate.scope
            # The samples' sites' lines only: a sample's worth of sites, never every site's.
            sample_sites = samples | "SampleSites" >> beam.Map(
                lambda fingerprints: frozenset(site_of(fingerprint.capture.url, scope) for fingerprint in fingerprints))
            site_lines = beam.pvalue.AsList(inputs[BOILERPLATE_LINES] | "OfSampleSites" >> beam.Filter(
                lambda pair, sites: pair[0] in sites, beam.pvalue.AsSingleton(sample_sites, default_value=frozenset())))
        return inputs["report"] | "Write" >> beam.Map(
            write_report_page, beam.pvalue.AsSingleton(samples, default_value=[]), beam.pvalue.AsList(skips),
            dead, self._output_dir, self._drop_selectors, self._scripts,
            self._max_page_bytes, self._sources, self._main_content, self._site_boilerplate, site_lines)
