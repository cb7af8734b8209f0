"""The build pipeline: named stages, worker processes, the site state kept up to date, the
manifest, and lint over a loaded corpus.
"""
