"""Packaging for webcorpus, so that Dataflow and Flink workers can install it (`--setup_file ./setup.py`)."""

import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lexbor_headers  # noqa: E402  (beside this file, in the sdist too)

LEXBOR_WALK = "transforms.native._lexbor_walk"


class BuildExtensions(build_ext):
    """Builds CleanHtml's walk against lexbor's own headers, those of the lexbor that the pinned selectolax
    carries (lexbor_headers.py fetches them from its sdist, sha256 checked, kept in build/). Without them
    (no network and no copy, a changed sdist) the walk is not built: one warning, and the pure-Python path
    runs; the other modules build as before."""

    def build_extension(self, extension):
        if extension.name == LEXBOR_WALK:
            try:
                include = lexbor_headers.headers(Path(__file__).resolve().parent / "build")
            except lexbor_headers.HeadersUnavailable as error:
                self.warn(f"{LEXBOR_WALK} is not built, CleanHtml's pure-Python path will run: no lexbor headers "
                          f"({error})")
                return
            extension.include_dirs.append(str(include))
        super().build_extension(extension)


def requirements(name: str = "requirements.txt"):
    lines = Path(__file__).with_name(name).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith(("#", "-"))]


setup(
    name="webcorpus",
    version="0.1.0",
    description="An Apache Beam pipeline that turns WARC files into a clean, deduplicated, compressed Avro corpus.",
    long_description=Path(__file__).with_name("README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    # As Beam, warcio and requests; the other requirements' licenses (MIT, BSD, PSF; pycountry's LGPL-2.1, a library
    # imported unchanged) allow it. LICENSE.
    license="Apache-2.0",
    classifiers=["License :: OSI Approved :: Apache Software License"],
    python_requires=">=3.10",
    packages=find_packages(include=["pipeline", "pipeline.*", "transforms", "transforms.*"]),
    package_data={"pipeline": ["data/*.warc.gz"], "transforms.stages.filters": ["data/*.json"]},
    # The C accelerators of transforms/native/. Each is optional: without a C compiler (or Python's
    # headers) the build warns and goes on, and the pure-Python path gives the same corpus.
    ext_modules=[
        # CleanHtml's walk over lexbor's tree (transforms/stages/clean_html/c_walk.py). It calls the lexbor that
        # selectolax's own module carries (found there at run time by the names its headers declare),
        # compiled against the headers of that lexbor (BuildExtensions); the selectolax they came from is
        # checked at import.
        Extension(LEXBOR_WALK, ["transforms/native/_lexbor_walk.c"], libraries=["dl"],
                  define_macros=[("LEXBOR_STATIC", None),
                                 ("WEBCORPUS_SELECTOLAX_VERSION", f'"{lexbor_headers.SELECTOLAX_VERSION}"')],
                  extra_compile_args=["-O2", "-std=c11"], optional=True),
        # resolve_links's common case (transforms/stages/clean_html/links.py).
        Extension("transforms.native._links", ["transforms/native/_links.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
        # MinimizeText's code pages (transforms/stages/minimize_text.py) in one pass.
        Extension("transforms.native._code_page", ["transforms/native/_code_page.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
        # A fastText classifier's probabilities (transforms/stages/quality_model.py), as fastText's predict gives them.
        Extension("transforms.native._classify", ["transforms/native/_classify.c"], libraries=["m"],
                  extra_compile_args=["-O3", "-std=c11", "-ffp-contract=off"], optional=True),
        # Decontamination's words and n-gram hashes (transforms/stages/decontaminate.py) in one pass.
        Extension("transforms.native._ngrams", ["transforms/native/_ngrams.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
        # Gopher's n-gram repetition measures (transforms/stages/filters/gopher.py).
        Extension("transforms.native._gopher", ["transforms/native/_gopher.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
        # --site-boilerplate's line hashes (transforms/stages/site_boilerplate.py).
        Extension("transforms.native._line_hashes", ["transforms/native/_line_hashes.c"],
                  extra_compile_args=["-O2", "-std=c11"], optional=True),
        # The quality rules' word split and C4's line scan (transforms/stages/filters/words.py, c4.py).
        Extension("transforms.native._words", ["transforms/native/_words.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
        # The corpus's block format (transforms/corpus/blocks.py) in one pass each way.
        Extension("transforms.native._blocks", ["transforms/native/_blocks.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
        # One-pass scans of a page's bytes: charset's UTF-8 check (transforms/stages/charset.py), without decoding the
        # page, and CleanHtml's guard's tag counts (transforms/stages/clean_html/guard.py). -O3: the counts vectorize.
        Extension("transforms.native._scan", ["transforms/native/_scan.c"], extra_compile_args=["-O3", "-std=c11"],
                  optional=True),
    ],
    cmdclass={"build_ext": BuildExtensions},
    install_requires=requirements(),
    # The compression study (`python -m benchmarks.compression_study`) draws its chart with matplotlib.
    extras_require={
        "study": ["matplotlib>=3.8,<4"],
        "dask": ["dask[distributed]>=2024.4.2"],
        # --quality fineweb2's word segmenters (transforms/stages/filters/segmenters.py).
        "languages": requirements("requirements-languages.txt"),
    },
    entry_points={"console_scripts": ["webcorpus=pipeline.launch:main"]},
)
