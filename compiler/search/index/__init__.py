"""The write side of search: chunking, the index stage and its steps, BM25 segments
written and merged, vectors filled behind a running server.
"""
