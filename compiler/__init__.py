"""commonplace compiler: corpus -> static wiki + search indexes.

Stages, each a small module over one document model (`model.Document`):
scan -> parse -> links (resolve) -> claims -> render -> emit -> index.
`build.build()` runs them in that order.
"""

__version__ = "0.1.0"
