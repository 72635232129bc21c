"""The pipeline's stages: each a pure part (`NAME.py`) and its Beam wrapper (`NAME_transform.py`), or a package
`NAME/` of both and its parts (see transforms/__init__.py)."""
