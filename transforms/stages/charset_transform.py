"""Charset, the stage: `charset.decode_document` applied to every document, in Beam."""

from __future__ import annotations

import apache_beam as beam

from transforms.stages.charset import decode_document
from transforms.stage import APPLIED_OUTPUTS, apply_stage
from transforms.vocabulary import CHARSET


class DecodeCharset(beam.PTransform):
    """Transcodes each document's payload to UTF-8 (`utf8_payload`) and records its charset."""

    OUTPUTS = APPLIED_OUTPUTS

    def expand(self, docs):
        return apply_stage(docs, CHARSET, decode_document)
