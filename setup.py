"""Packaging for webcorpus, so that Dataflow and Flink workers can install it (`--setup_file ./setup.py`)."""

from pathlib import Path

from setuptools import Extension, find_packages, setup


def requirements():
    lines = Path(__file__).with_name("requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith(("#", "-"))]


setup(
    name="webcorpus",
    version="0.1.0",
    description="An Apache Beam pipeline that turns WARC files into a clean, deduplicated, compressed Avro corpus.",
    long_description=Path(__file__).with_name("README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["pipeline", "pipeline.*", "transforms", "transforms.*"]),
    package_data={"pipeline": ["data/*.warc.gz"]},
    # The C accelerators of transforms/native.py. Each is optional: without a C compiler (or Python's
    # headers) the build warns and goes on, and the pure-Python path gives the same corpus.
    ext_modules=[
        # CleanHtml's walk over lexbor's tree (transforms/clean_html.py); it calls the lexbor that
        # selectolax's own module carries, found at run time, so it needs no lexbor headers.
        Extension("transforms._lexbor_walk", ["transforms/_lexbor_walk.c"], libraries=["dl"],
                  extra_compile_args=["-O2", "-std=c11"], optional=True),
        # resolve_links's common case (transforms/clean_html.py).
        Extension("transforms._links", ["transforms/_links.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
        # MinimizeText's code pages (transforms/minimize_text.py) in one pass.
        Extension("transforms._code_page", ["transforms/_code_page.c"], extra_compile_args=["-O2", "-std=c11"],
                  optional=True),
    ],
    install_requires=requirements(),
    # `python -m pipeline.compression` draws its chart with matplotlib.
    extras_require={
        "study": ["matplotlib>=3.8,<4"],
        "dask": ["dask[distributed]>=2024.4.2"],
    },
    entry_points={"console_scripts": ["webcorpus=pipeline.cli:main"]},
)
