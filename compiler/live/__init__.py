"""A corpus kept open: refresh after writes, the write path and its group commit, watching
the disk; `contract` is the Protocol the server types its live corpus with.
"""
