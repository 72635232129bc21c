"""Input digests for the manifest: a work item of their own, not on the reading path of a file's first range."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipeline.sample import sample_captures
from transforms.report.manifest import digest_file
from tests.helpers import process_unit
from transforms.stages.read_warc.ranges import WarcRange
from transforms.stages.read_warc.read_warc_transform import ReadWarc
from transforms.vocabulary import INPUT_FILES


def test_reading_the_first_range_of_a_file_does_not_digest_it(write_warc):
    path = write_warc(sample_captures())
    outputs = process_unit(WarcRange(str(path), 0, None, path.stat().st_size, splittable=True))
    assert outputs and not [output for output in outputs
                            if isinstance(output, beam.pvalue.TaggedOutput) and output.tag == INPUT_FILES]


def test_every_input_is_digested_once_whatever_its_ranges(write_warc):
    split = write_warc(sample_captures(), name="split.warc.gz")
    whole = write_warc(sample_captures()[:3], name="whole.warc", compression="none")
    # (Digests of the bytes listed, `InputDigest`s: the same sizes and SHA-256 as of the whole files here.)
    expected = [(digest.path, digest.size, digest.sha256)
                for digest in (digest_file(str(split)), digest_file(str(whole)))]
    with TestPipeline() as pipeline:
        read = pipeline | ReadWarc([str(split.parent / "*.warc*"), str(split)], range_bytes=2000)
        digests = read[INPUT_FILES] | beam.Map(lambda digest: (digest.path, digest.size, digest.sha256))
        assert_that(digests, equal_to(expected))
