"""commonplace compiler: corpus -> static wiki + search indexes.

Stages, each a small module in its room over one document model (`model.Document`):
claims -> scan -> parse -> links (resolve) -> render -> emit -> index.
`build.pipeline.build()` runs them in that order: the claims stage compiles the claim
log into canonical pages first, so the scan reads those pages like any other file.
"""

__version__ = "0.1.0"
