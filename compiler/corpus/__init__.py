"""The corpus as files: finding its documents (`scan`), its other files (`attachments`),
and how its pages link (`links`). Imports only the compiler's base modules.
"""
